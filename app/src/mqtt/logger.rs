//! The EVE `mqtt` record of a transaction: one object per packet, in order.

use meerkat_proto::events::{Mqtt, MqttMessage, MqttProperty, MqttTopic, mqtt_property};

use super::parser::{Message, Op, PropValue, Properties, property_name};
use super::state::MqttTx;

/// Bytes of a password, will message or publish message a record keeps, at most (a
/// `string-log-limit` above it, or none, logs this much with the marker).
pub const MAX_LOGGED: usize = 64 * 1024;

/// What a record keeps of `b`, and its full length.
fn kept(b: &[u8]) -> (Vec<u8>, u64) {
    (b[..b.len().min(MAX_LOGGED)].to_vec(), b.len() as u64)
}

/// Cuts `b` (of full length `len`) to `limit` bytes (0: [`MAX_LOGGED`]) with Suricata's
/// `[truncated N additional bytes]` marker.
fn cut(b: &mut Vec<u8>, len: u64, limit: usize) {
    let limit = if limit == 0 {
        MAX_LOGGED
    } else {
        limit.min(MAX_LOGGED)
    };
    let len = len.max(b.len() as u64);
    if len <= limit as u64 {
        return;
    }
    b.truncate(limit);
    b.extend_from_slice(format!("[truncated {} additional bytes]", len - limit as u64).as_bytes());
}

/// Shapes a record for the outputs (`outputs.eve-log.types.mqtt`): passwords left out
/// unless `passwords`, long strings cut to `string_log_limit` (0: no limit).
pub fn shape(r: &mut Mqtt, passwords: bool, string_log_limit: usize) {
    for m in &mut r.messages {
        if !passwords {
            m.password = None;
        }
        if let Some(p) = &mut m.password {
            cut(p, m.password_len, string_log_limit);
        }
        if let Some(w) = &mut m.will_message {
            cut(w, m.will_message_len, string_log_limit);
        }
        cut(&mut m.message, m.message_len, string_log_limit);
    }
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
            if let Some(p) = &c.password {
                let (b, n) = kept(p);
                (r.password, r.password_len) = (Some(b), n);
            }
            r.will_topic = c.will_topic.clone();
            if let Some(w) = &c.will_message {
                let (b, n) = kept(w);
                (r.will_message, r.will_message_len) = (Some(b), n);
            }
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
            (r.message, r.message_len) = kept(message);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_cut_to_the_limit() {
        let mut r = Mqtt {
            messages: vec![MqttMessage {
                kind: "connect".into(),
                password: Some(b"secret".to_vec()),
                password_len: 6,
                message: vec![b'x'; 100],
                message_len: 100_000,
                ..MqttMessage::default()
            }],
        };
        let mut a = r.clone();
        shape(&mut a, true, 4);
        assert_eq!(
            a.messages[0].password.as_deref(),
            Some(&b"secr[truncated 2 additional bytes]"[..])
        );
        assert!(
            a.messages[0]
                .message
                .ends_with(b"xxxx[truncated 99996 additional bytes]")
        );
        shape(&mut r, false, 0);
        assert_eq!(r.messages[0].password, None);
        assert!(
            r.messages[0]
                .message
                .ends_with(b"x[truncated 34464 additional bytes]")
        );
    }
}
