//! MQTT 3.1, 3.1.1 and 5.0 over TCP (port 1883): detection by the fixed header on the
//! protocol's ports, every control packet parsed (v5 properties included),
//! transactions as Suricata makes them (a request and its acknowledgements), the
//! `mqtt.*` keywords, app-layer events and the EVE `mqtt` record.

pub mod config;
pub mod detect;
pub mod eve;
pub mod logger;
pub mod parser;
pub mod state;

pub use state::{MqttConfig, MqttState, MqttTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction};

/// MQTT.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Mqtt,
    name: "mqtt",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[1883],
    // Suricata's probing parser runs on the detection ports only: two bytes of fixed
    // header say little on their own.
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    keywords: detect::KEYWORDS,
    frames: detect::FRAMES,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "mqtt",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "mqtt",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "mqtt.double_connect",
    "mqtt.invalid_qos_level",
    "mqtt.malformed_traffic",
    "mqtt.missing_connect",
    "mqtt.missing_msg_id",
    "mqtt.missing_publish",
    "mqtt.missing_subscribe",
    "mqtt.missing_unsubscribe",
    "mqtt.too_many_messages",
    "mqtt.too_many_transactions",
    "mqtt.unassigned_msg_type",
    "mqtt.unintroduced_message",
];

/// Fuzz target: the connection parser over arbitrary bytes in both directions (with a
/// small message limit, so that skipping is exercised too), the packet parser alone,
/// and every probe.
pub fn fuzz(data: &[u8]) {
    let mut s = MqttState::new(MqttConfig {
        max_msg_len: 256,
        max_tx: 16,
        max_messages: 4,
    });
    crate::fuzz::drive(&mut s, data);
    let _ = parser::parse_message(data, 5, 1 << 20);
    let _ = parser::parse_message(data, 4, 1 << 20);
    crate::fuzz::probes(data);
}

/// Suricata's probe: a fixed header of an assigned type with a valid QoS.
pub fn probe(data: &[u8]) -> Probe {
    match parser::fixed_header(data) {
        Ok((h, _)) if h.message_type == 0 || h.qos > 2 => Probe::NoMatch,
        Ok(_) => Probe::Match,
        Err(parser::Error::Incomplete) => {
            // Judge the first byte already.
            match data.first() {
                Some(&b) if b >> 4 == 0 || (b >> 1) & 3 == 3 => Probe::NoMatch,
                _ => Probe::NeedMore,
            }
        }
        Err(parser::Error::Malformed) => Probe::NoMatch,
    }
}

impl Transaction for MqttTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, _dir: Dir) -> bool {
        self.ready()
    }

    /// Grows as packets join the transaction, and once more when it is complete.
    fn progress(&self, _dir: Dir) -> u8 {
        // Changes as each packet joins (any number of them).
        (self.msgs.len() % 128) as u8 | u8::from(self.ready()) << 7
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Mqtt(logger::record(self)))
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        detect::frame_meta(self, id, index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::KwValue;
    use crate::{AppState, KeywordKind, ParseOutput};
    use parser::tests::{CONNACK_V5, CONNECT_V5};

    #[test]
    fn every_raised_event_is_listed() {
        let n =
            crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "mqtt");
        assert!(n > 0);
    }

    #[test]
    fn probes() {
        assert_eq!(probe(CONNECT_V5), Probe::Match);
        assert_eq!(probe(b"\x10"), Probe::NeedMore);
        assert_eq!(probe(b""), Probe::NeedMore);
        assert_eq!(probe(b"\x00\x00"), Probe::NoMatch);
        assert_eq!(probe(b"\x36\x00"), Probe::NoMatch);
        assert_eq!(probe(b"\x10\xff\xff\xff\xff"), Probe::NoMatch);
    }

    fn kw(name: &str, v: &str) -> (KwValue, crate::descriptor::EvalFn) {
        let k = detect::KEYWORDS
            .iter()
            .find(|k| k.name == name || k.aliases.contains(&name))
            .unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        (parse(Some(v)).unwrap(), eval)
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let (v, e) = kw(name, v);
        e(&v, dir, 0, tx)
    }

    #[test]
    fn keywords_on_a_connect_transaction() {
        let mut s = MqttState::new(MqttConfig::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, CONNECT_V5, &mut out);
        let tx = s.tx(0).unwrap();
        // Waiting for its CONNACK: what matches now does, what does not may later.
        assert_eq!(eval("mqtt.type", "CONNECT", Dir::ToServer, tx), Some(true));
        assert_eq!(eval("mqtt.type", "CONNACK", Dir::ToServer, tx), None);
        assert_eq!(tx.buffer(detect::CONNECT_USERNAME, 0), Buf::Ready(b"user"));
        let p0 = tx.progress(Dir::ToServer);
        s.parse(Dir::ToClient, CONNACK_V5, &mut out);
        let tx = s.tx(0).unwrap();
        assert_ne!(tx.progress(Dir::ToServer), p0);
        let ts = Dir::ToServer;
        assert_eq!(eval("mqtt.type", "CONNECT", ts, tx), Some(true));
        assert_eq!(eval("mqtt.type", "connack", ts, tx), Some(true));
        assert_eq!(eval("mqtt.type", "PUBLISH", ts, tx), Some(false));
        assert_eq!(eval("mqtt.type", "CONNECT,0", ts, tx), Some(true));
        assert_eq!(eval("mqtt.type", "CONNACK,1", ts, tx), Some(true));
        assert_eq!(eval("mqtt.type", "CONNACK,0", ts, tx), Some(false));
        assert_eq!(eval("mqtt.type", "CONNACK,-1", ts, tx), Some(true));
        assert_eq!(eval("mqtt.type", "2", ts, tx), Some(true));
        // Another direction's transaction never matches.
        assert_eq!(eval("mqtt.type", "CONNECT", Dir::ToClient, tx), Some(false));
        assert_eq!(eval("mqtt.protocol_version", "5", ts, tx), Some(true));
        assert_eq!(eval("mqtt.protocol_version", ">5", ts, tx), Some(false));
        assert_eq!(eval("mqtt.reason_code", "0", ts, tx), Some(true));
        assert_eq!(eval("mqtt.connack.return_code", "1", ts, tx), Some(false));
        assert_eq!(eval("mqtt.flags", "!retain,!dup", ts, tx), Some(true));
        assert_eq!(eval("mqtt.flags", "retain", ts, tx), Some(false));
        assert_eq!(eval("mqtt.qos", "0", ts, tx), Some(true));
        assert_eq!(eval("mqtt.qos", "1", ts, tx), Some(false));
        assert_eq!(
            eval(
                "mqtt.connect.flags",
                "username,password,clean_session",
                ts,
                tx
            ),
            Some(true)
        );
        assert_eq!(eval("mqtt.connect.flags", "will", ts, tx), Some(false));
        assert_eq!(eval("mqtt.connect.flags", "!will", ts, tx), Some(true));
        assert_eq!(
            eval("mqtt.connack.session_present", "false", ts, tx),
            Some(true)
        );
        assert_eq!(
            eval("mqtt.connack.session_present", "true", ts, tx),
            Some(false)
        );
        assert_eq!(tx.buffer(detect::CONNECT_USERNAME, 0), Buf::Ready(b"user"));
        assert_eq!(tx.buffer(detect::CONNECT_PASSWORD, 0), Buf::Ready(b"pass"));
        assert_eq!(
            tx.buffer(detect::CONNECT_PROTOCOL_STRING, 0),
            Buf::Ready(b"MQTT")
        );
        assert_eq!(tx.buffer(detect::CONNECT_CLIENTID, 0), Buf::Ready(b""));
        assert_eq!(tx.buffer(detect::CONNECT_WILLTOPIC, 0), Buf::Absent);
        assert_eq!(tx.buffer(detect::PUBLISH_TOPIC_TS, 0), Buf::Absent);
    }

    #[test]
    fn keyword_values_are_checked() {
        let bad = [
            ("mqtt.qos", "3"),
            ("mqtt.type", "NOPE"),
            ("mqtt.type", "CONNECT,x"),
            ("mqtt.flags", "retain,retain"),
            ("mqtt.flags", "bogus"),
            ("mqtt.connect.flags", "dup"),
            ("mqtt.connack.session_present", "maybe"),
            ("mqtt.reason_code", "256"),
        ];
        for (name, v) in bad {
            let k = detect::KEYWORDS
                .iter()
                .find(|k| k.name == name || k.aliases.contains(&name))
                .unwrap();
            let KeywordKind::Check { parse, .. } = k.kind else {
                panic!()
            };
            assert!(parse(Some(v)).is_err(), "{name}:{v}");
        }
    }

    #[test]
    fn subscribe_topics_and_record() {
        let mut s = MqttState::new(MqttConfig::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, parser::tests::CONNECT_V4, &mut out);
        s.parse(Dir::ToClient, b"\x20\x02\x01\x00", &mut out);
        s.parse(
            Dir::ToServer,
            b"\x82\x0a\x00\x01\x00\x01a\x00\x00\x01b\x01",
            &mut out,
        );
        s.parse(Dir::ToClient, b"\x90\x04\x00\x01\x00\x01", &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        let tx = s.tx(1).unwrap();
        assert_eq!(tx.buffer(detect::SUBSCRIBE_TOPIC, 0), Buf::Ready(b"a"));
        assert_eq!(tx.buffer(detect::SUBSCRIBE_TOPIC, 1), Buf::Ready(b"b"));
        assert_eq!(tx.buffer(detect::SUBSCRIBE_TOPIC, 2), Buf::Absent);
        assert_eq!(eval("mqtt.type", "SUBACK", Dir::ToServer, tx), Some(true));
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&tx.record().unwrap(), &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            r#"{"mqtt":{"subscribe":{"qos":1,"retain":false,"dup":false,"message_id":1,"topics":[{"topic":"a","qos":0},{"topic":"b","qos":1}]},"suback":{"qos":0,"retain":false,"dup":false,"message_id":1,"qos_granted":[0,1]}}}"#
        );
        let tx0 = s.tx(0).unwrap();
        assert_eq!(
            eval("mqtt.connack.session_present", "true", Dir::ToServer, tx0),
            Some(true)
        );
    }

    #[test]
    fn long_messages_are_cut_for_the_outputs() {
        let mut s = MqttState::new(MqttConfig::default());
        let mut out = ParseOutput::default();
        let mut p = vec![0x30, 0x87, 0x08, 0x00, 0x01, b't'];
        p.extend(std::iter::repeat_n(0xffu8, 1028));
        s.parse(Dir::ToServer, &p, &mut out);
        let tx = s.tx(0).unwrap();
        let Some(AppRecord::Mqtt(mut r)) = tx.record() else {
            panic!()
        };
        logger::shape(&mut r, true, 1024);
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&AppRecord::Mqtt(r), &mut o);
        o.end();
        let js = String::from_utf8(buf).unwrap();
        assert!(
            js.ends_with(r#"\\xff[truncated 4 additional bytes]"}}}"#),
            "{js}"
        );
        assert_eq!(
            tx.buffer(detect::PUBLISH_MESSAGE_TS, 0),
            Buf::Ready(&p[6..])
        );
    }
}
