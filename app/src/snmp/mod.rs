//! SNMP (versions 1, 2c and 3) over UDP, on ports 161 and 162, as Suricata 8 has it:
//! detection by the message's envelope (a sequence whose first element is the
//! version) on those ports, one transaction per message, the `snmp.version`,
//! `snmp.pdu_type`, `snmp.community` and `snmp.usm` keywords, app-layer events and
//! the EVE `snmp` record.

pub mod ber;
pub mod detect;
pub mod eve;
pub mod parser;
pub mod state;

pub use state::{SnmpState, SnmpTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// SNMP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Snmp,
    name: "snmp",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::UDP,
    default_ports: &[161, 162],
    // Suricata's SNMP has a probing parser on its ports and no pattern.
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(SnmpState::new())),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "snmp",
        render: eve::render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "snmp",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "snmp.malformed_data",
    "snmp.unknown_security_model",
    "snmp.version_mismatch",
];

/// Suricata's probe: at least 4 bytes, and an envelope of a known version.
pub fn probe(data: &[u8]) -> Probe {
    if data.len() < 4 {
        return Probe::NoMatch;
    }
    match parser::envelope_version(data) {
        Ok(_) => Probe::Match,
        Err(ber::Error::Incomplete) => Probe::NeedMore,
        Err(ber::Error::Invalid) => Probe::NoMatch,
    }
}

/// Fuzz target: the parser over the datagrams the shared driver cuts, each direction
/// as one whole datagram, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut SnmpState::new(), data);
    let mut s = SnmpState::new();
    let mut out = crate::ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    if let Some(rest) = data.get(1..) {
        s.parse(Dir::ToClient, rest, &mut out);
    }
    for i in 0..s.tx_count() {
        if let Some(r) = s.tx(i).and_then(|t| t.record()) {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            eve::render(&r, &mut o);
            o.end();
        }
    }
    let _ = probe(data);
    crate::fuzz::probes(data);
    let r = crate::Registry::default();
    let _ = r.probe(Transport::Udp, Dir::ToServer, [40000, 161], data);
}

impl Transaction for SnmpTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A message is the whole transaction.
    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Snmp(eve::record(self)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::parser::tests::{GET_V2C, TRAP};
    use super::*;
    use crate::value::KwValue;
    use crate::{KeywordKind, ParseOutput};

    #[test]
    fn every_raised_event_is_listed() {
        let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "snmp");
        assert_eq!(n, 3);
    }

    #[test]
    fn probes() {
        assert_eq!(probe(GET_V2C), Probe::Match);
        assert_eq!(probe(&GET_V2C[..10]), Probe::NeedMore);
        assert_eq!(probe(b"\x30\x01"), Probe::NoMatch);
        assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
        let r = crate::Registry::default();
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 161], GET_V2C),
            crate::Detected::Proto(AppProto::Snmp)
        );
        // Port-bound, as Suricata's.
        assert_ne!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 1161], GET_V2C),
            crate::Detected::Proto(AppProto::Snmp)
        );
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let k = detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        let v: KwValue = parse(Some(v)).unwrap();
        eval(&v, dir, 0, tx)
    }

    fn json(tx: &dyn Transaction) -> String {
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&tx.record().unwrap(), &mut o);
        o.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn messages_keywords_and_records() {
        let mut s = SnmpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, GET_V2C, &mut out);
        s.parse(Dir::ToClient, TRAP, &mut out);
        s.parse(Dir::ToServer, &GET_V2C[..30], &mut out);
        assert_eq!(
            out.anomalies,
            ["snmp.version_mismatch", "snmp.malformed_data"]
        );
        assert_eq!(s.tx_count(), 2);
        let (q, t) = (s.tx(0).unwrap(), s.tx(1).unwrap());
        assert_eq!(q.buffer(detect::COMMUNITY_TS, 0), Buf::Ready(b"public"));
        assert_eq!(q.buffer(detect::COMMUNITY_TC, 0), Buf::Absent);
        assert_eq!(q.buffer(detect::USM_TS, 0), Buf::Absent);
        assert_eq!(eval("snmp.version", "2", Dir::ToServer, q), Some(true));
        assert_eq!(eval("snmp.version", "2", Dir::ToClient, q), Some(false));
        assert_eq!(eval("snmp.pdu_type", "0", Dir::ToServer, q), Some(true));
        assert_eq!(eval("snmp.pdu_type", ">0", Dir::ToServer, q), Some(false));
        // The flow's version is its first message's.
        assert_eq!(eval("snmp.version", "2", Dir::ToClient, t), Some(true));
        assert_eq!(eval("snmp.pdu_type", "4", Dir::ToClient, t), Some(true));
        assert_eq!(
            json(q),
            r#"{"snmp":{"version":2,"pdu_type":"get_request","vars":["1.3.6.1.2.1.1.1.0"],"community":"public"}}"#
        );
        assert_eq!(
            json(t),
            concat!(
                r#"{"snmp":{"version":2,"pdu_type":"trap_v1","trap_type":"linkDown","#,
                r#""trap_oid":"1.3.6.1.4.1.311","trap_address":"10.0.0.1","#,
                r#""vars":["1.3.6.1.2.1.2.2.1.1"],"community":"public"}}"#
            )
        );
        assert!(detect::parse_u32(Some("4294967296")).is_err());
    }
}
