//! The EVE `mqtt` record of a transaction: one object per packet, in order.

use meerkat_proto::events::{Mqtt, MqttMessage, MqttProperty, MqttTopic, mqtt_property};

use super::parser::{Message, Op, PropValue, Properties, property_name};
use super::state::MqttTx;

/// Suricata's default `string-log-limit` of the `mqtt` EVE output: longer passwords,
/// will messages and publish messages are cut to it.
pub const STRING_LOG_LIMIT: usize = 1024;

/// `b` cut to `STRING_LOG_LIMIT` bytes with Suricata's marker.
pub fn limited(b: &[u8]) -> Vec<u8> {
    if b.len() <= STRING_LOG_LIMIT {
        return b.to_vec();
    }
    let mut v = b[..STRING_LOG_LIMIT].to_vec();
    v.extend_from_slice(
        format!(
            "[truncated {} additional bytes]",
            b.len() - STRING_LOG_LIMIT
        )
        .as_bytes(),
    );
    v
}

fn properties(p: &Properties) -> (Vec<MqttProperty>, bool) {
    let Some(list) = p else {
        return (Vec::new(), false);
    };
    let props = list
        .iter()
        .filter(|p| p.known)
        .map(|p| {
            let (name, value) = match &p.value {
                PropValue::Num(n) => (
                    property_name(p.id).unwrap_or_default().to_string(),
                    mqtt_property::Value::Num(*n),
                ),
                PropValue::Text(t) => (
                    property_name(p.id).unwrap_or_default().to_string(),
                    mqtt_property::Value::Text(t.clone()),
                ),
                PropValue::Data(d) => (
                    property_name(p.id).unwrap_or_default().to_string(),
                    mqtt_property::Value::Data(d.clone()),
                ),
                PropValue::Pair(k, v) => (
                    String::from_utf8_lossy(k).into_owned(),
                    mqtt_property::Value::Text(v.clone()),
                ),
            };
            MqttProperty {
                name,
                value: Some(value),
            }
        })
        .collect();
    (props, true)
}

fn message(m: &Message) -> MqttMessage {
    let h = m.header;
    let mut r = MqttMessage {
        kind: super::parser::TYPE_NAMES[usize::from(h.message_type & 0xf)].to_ascii_lowercase(),
        qos: u32::from(h.qos),
        retain: h.retain,
        dup: h.dup,
        ..MqttMessage::default()
    };
    let props = |p: &Properties, r: &mut MqttMessage| {
        (r.properties, r.has_properties) = properties(p);
    };
    match &m.op {
        Op::Connect(c) => {
            r.protocol_string = c.protocol_string.clone();
            r.protocol_version = u32::from(c.protocol_version);
            r.client_id = c.client_id.clone();
            r.connect_flags = u32::from(c.flags);
            r.username = c.username.clone();
            r.password = c.password.as_deref().map(limited);
            r.will_topic = c.will_topic.clone();
            r.will_message = c.will_message.as_deref().map(limited);
            (r.will_properties, r.has_will_properties) = properties(&c.will_properties);
            props(&c.properties, &mut r);
        }
        Op::Connack {
            session_present,
            return_code,
            properties: p,
        } => {
            r.session_present = *session_present;
            r.reason_code = Some(u32::from(*return_code));
            props(p, &mut r);
        }
        Op::Publish {
            topic,
            message_id,
            message,
            properties: p,
        } => {
            r.topic = topic.clone();
            r.message_id = message_id.map(u32::from);
            r.message = limited(message);
            props(p, &mut r);
        }
        Op::MsgIdOnly {
            message_id,
            reason_code,
            properties: p,
        } => {
            r.message_id = Some(u32::from(*message_id));
            r.reason_code = reason_code.map(u32::from);
            props(p, &mut r);
        }
        Op::Subscribe {
            message_id,
            topics,
            properties: p,
        } => {
            r.message_id = Some(u32::from(*message_id));
            r.topics = topics
                .iter()
                .map(|t| MqttTopic {
                    topic: t.topic.clone(),
                    qos: u32::from(t.qos),
                })
                .collect();
            props(p, &mut r);
        }
        Op::Suback {
            message_id,
            codes,
            properties: p,
        }
        | Op::Unsuback {
            message_id,
            codes,
            properties: p,
        } => {
            r.message_id = Some(u32::from(*message_id));
            r.codes = codes.iter().map(|&c| u32::from(c)).collect();
            props(p, &mut r);
        }
        Op::Unsubscribe {
            message_id,
            topics,
            properties: p,
        } => {
            r.message_id = Some(u32::from(*message_id));
            r.topics = topics
                .iter()
                .map(|t| MqttTopic {
                    topic: t.clone(),
                    qos: 0,
                })
                .collect();
            props(p, &mut r);
        }
        Op::Disconnect {
            reason_code,
            properties: p,
        } => {
            r.reason_code = reason_code.map(u32::from);
            props(p, &mut r);
        }
        Op::Auth {
            reason_code,
            properties: p,
        } => {
            r.reason_code = Some(u32::from(*reason_code));
            props(p, &mut r);
        }
        Op::PingReq | Op::PingResp => {}
        Op::Unassigned => r.kind.clear(),
        Op::Truncated { skipped } => {
            r.truncated = true;
            r.skipped_length = *skipped as u64;
        }
    }
    r
}

/// The record of a transaction.
pub fn record(tx: &MqttTx) -> Mqtt {
    Mqtt {
        messages: tx.msgs.iter().map(message).collect(),
    }
}
