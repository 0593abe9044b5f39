//! The EVE `mqtt` object, in Suricata's field order: one object per packet of the
//! transaction, named by its type.

use meerkat_eve::Obj;
use meerkat_proto::events::{Mqtt, MqttMessage, MqttProperty, mqtt_property};

use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Mqtt(m) = r {
        mqtt(o, m);
    }
}

/// A string Suricata builds from bytes (UTF-8 with replacement characters).
fn lossy(o: &mut Obj<'_>, k: &str, b: &[u8]) {
    o.str(k, &String::from_utf8_lossy(b));
}

/// Bytes as Suricata's `set_string_from_bytes` writes them: valid UTF-8 as it is,
/// anything else with every byte above 0x7f as `\xNN`.
pub(crate) fn from_bytes(o: &mut Obj<'_>, k: &str, b: &[u8]) {
    match std::str::from_utf8(b) {
        Ok(s) => o.str(k, s),
        Err(_) => {
            let mut s = String::with_capacity(b.len() * 2);
            for &c in b {
                if c < 0x80 {
                    s.push(char::from(c));
                } else {
                    s.push_str(&format!("\\x{c:02x}"));
                }
            }
            o.str(k, &s)
        }
    };
}

fn properties(o: &mut Obj<'_>, k: &str, props: &[MqttProperty]) {
    o.obj(k, |p| {
        for prop in props {
            match &prop.value {
                Some(mqtt_property::Value::Num(n)) => {
                    p.u64(&prop.name, *n);
                }
                Some(mqtt_property::Value::Text(t)) => lossy(p, &prop.name, t),
                Some(mqtt_property::Value::Data(d)) => from_bytes(p, &prop.name, d),
                None => {}
            }
        }
    });
}

fn message(x: &mut Obj<'_>, m: &MqttMessage) {
    x.u64("qos", u64::from(m.qos))
        .bool("retain", m.retain)
        .bool("dup", m.dup);
    if m.truncated {
        x.bool("truncated", true)
            .u64("skipped_length", m.skipped_length);
        return;
    }
    let props = |x: &mut Obj<'_>| {
        if m.has_properties {
            properties(x, "properties", &m.properties);
        }
    };
    let id = |x: &mut Obj<'_>| {
        if let Some(id) = m.message_id {
            x.u64("message_id", u64::from(id));
        }
    };
    match m.kind.as_str() {
        "connect" => {
            lossy(x, "protocol_string", &m.protocol_string);
            x.u64("protocol_version", u64::from(m.protocol_version));
            lossy(x, "client_id", &m.client_id);
            let f = m.connect_flags;
            x.obj("flags", |o| {
                o.bool("username", f & 0x80 != 0)
                    .bool("password", f & 0x40 != 0)
                    .bool("will_retain", f & 0x20 != 0)
                    .bool("will", f & 0x04 != 0)
                    .bool("clean_session", f & 0x02 != 0);
            });
            if let Some(u) = &m.username {
                lossy(x, "username", u);
            }
            if let Some(p) = &m.password {
                from_bytes(x, "password", p);
            }
            if f & 0x04 != 0 {
                x.obj("will", |w| {
                    if let Some(t) = &m.will_topic {
                        lossy(w, "topic", t);
                    }
                    if let Some(msg) = &m.will_message {
                        from_bytes(w, "message", msg);
                    }
                    if m.has_will_properties {
                        properties(w, "properties", &m.will_properties);
                    }
                });
            }
            props(x);
        }
        "connack" => {
            x.bool("session_present", m.session_present)
                .u64("return_code", u64::from(m.reason_code.unwrap_or(0)));
            props(x);
        }
        "publish" => {
            lossy(x, "topic", &m.topic);
            id(x);
            from_bytes(x, "message", &m.message);
            props(x);
        }
        "puback" | "pubrec" | "pubrel" | "pubcomp" | "disconnect" | "auth" => {
            id(x);
            if let Some(rc) = m.reason_code {
                x.u64("reason_code", u64::from(rc));
            }
            props(x);
        }
        "subscribe" => {
            id(x);
            x.raw("topics", |b| {
                meerkat_eve::array(b, &m.topics, |o, t| {
                    lossy(o, "topic", &t.topic);
                    o.u64("qos", u64::from(t.qos));
                })
            });
            props(x);
        }
        // Suricata logs no properties of a SUBACK, UNSUBSCRIBE or UNSUBACK.
        "suback" => {
            id(x);
            x.raw("qos_granted", |b| codes(b, &m.codes));
        }
        "unsubscribe" => {
            id(x);
            x.raw("topics", |b| {
                b.push(b'[');
                for (i, t) in m.topics.iter().enumerate() {
                    if i > 0 {
                        b.push(b',');
                    }
                    meerkat_eve::string(b, &String::from_utf8_lossy(&t.topic));
                }
                b.push(b']');
            });
        }
        "unsuback" => {
            id(x);
            if !m.codes.is_empty() {
                x.raw("reason_codes", |b| codes(b, &m.codes));
            }
        }
        _ => {}
    }
}

fn codes(b: &mut Vec<u8>, codes: &[u32]) {
    b.push(b'[');
    for (i, c) in codes.iter().enumerate() {
        if i > 0 {
            b.push(b',');
        }
        b.extend_from_slice(c.to_string().as_bytes());
    }
    b.push(b']');
}

/// The `mqtt` object.
pub fn mqtt(o: &mut Obj<'_>, r: &Mqtt) {
    o.obj("mqtt", |x| {
        for m in &r.messages {
            if m.kind.is_empty() {
                // An unassigned packet type: Suricata logs nothing of it.
                continue;
            }
            x.obj(&m.kind, |o| message(o, m));
        }
    });
}
