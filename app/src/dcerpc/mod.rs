//! DCE/RPC over TCP (connection-oriented, C706 and MS-RPCE): detection by the header of
//! either side's first PDU (on any port; 135 is the endpoint mapper's), PDUs reassembled
//! from the stream, calls as transactions (BIND/BIND_ACK, ALTER_CONTEXT and its
//! response, REQUEST/RESPONSE, paired by call id) with their fragments' stub data
//! joined, the bound interfaces, the `dcerpc.*` keywords (`dce_*` as aliases) and the
//! EVE `dcerpc` record, as Suricata 8 has them; and connectionless DCE/RPC over UDP
//! ([`udp`]), detected by its header on any port. (Inside SMB it is parsed by the SMB
//! module with this module's PDU parser.)

pub mod config;
pub mod detect;
pub mod eve;
pub mod parser;
pub mod state;
pub mod udp;

pub use state::{DcerpcState, DcerpcTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// DCE/RPC.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Dcerpc,
    name: "dcerpc",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::BOTH,
    // Suricata detects DCE/RPC by its header on any port.
    default_ports: &[135],
    port_bound: false,
    probe: |transport, _, data| match transport {
        Transport::Tcp => probe(data),
        Transport::Udp if udp::probe(data) => Probe::Match,
        Transport::Udp => Probe::NoMatch,
    },
    probe_on_port: None,
    is_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    // Suricata's DCE/RPC parser raises no app-layer events.
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "dcerpc",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "dcerpc",
        run: fuzz,
    }],
};

/// Suricata's probe: a version 5.0 header (5.1 too: Windows sends both) whose data
/// representation is one DCE/RPC defines, of a known PDU type.
pub fn probe(data: &[u8]) -> Probe {
    match data {
        [] => return Probe::NeedMore,
        [5] | [5, 0 | 1, ..] => {}
        _ => return Probe::NoMatch,
    }
    let Some(h) = parser::header(data) else {
        return Probe::NeedMore;
    };
    if h.valid() && h.drep[0] & 0xee == 0 && h.drep[1] <= 3 {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

/// A flow whose first data is a server's PDU (a RESPONSE, a BIND_ACK) was picked up
/// in the middle: it is turned around. (Over UDP too, where Suricata does not
/// recognise such a flow at all.)
fn is_reply(transport: Transport, data: &[u8]) -> bool {
    match transport {
        Transport::Tcp => parser::header(data).is_some_and(|h| !parser::from_client(h.ptype)),
        Transport::Udp => udp::header(data).is_some_and(|h| h.ptype != parser::REQUEST),
    }
}

/// Fuzz target: the state over arbitrary bytes in both directions, each body parser
/// alone, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut DcerpcState::new(state::DcerpcConfig::default()), data);
    let mut u = udp::DcerpcUdpState::new(state::DcerpcConfig::default());
    let mut out = crate::ParseOutput::default();
    for (i, d) in data.split(|&b| b == 0xff).enumerate() {
        let dir = if i % 2 == 0 {
            Dir::ToServer
        } else {
            Dir::ToClient
        };
        crate::AppState::parse(&mut u, dir, d, &mut out);
    }
    for i in 0..crate::AppState::tx_count(&u) {
        if let Some(r) = crate::AppState::tx(&u, i).and_then(|t| t.record()) {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            eve::render(&r, &mut o);
            o.end();
        }
    }
    let _ = udp::probe(data);
    let mut items = Vec::new();
    let mut results = Vec::new();
    for le in [false, true] {
        let _ = parser::bind(data, le, &mut items);
        let _ = parser::bind_ack(data, le, &mut results);
        let _ = parser::request(data, le, parser::PFC_OBJECT_UUID);
    }
    let _ = parser::header(data);
    crate::fuzz::probes(data);
}

impl Transaction for DcerpcTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        self.done[dir.index()] || self.eof[dir.index()]
    }

    /// Grows with each fragment of the direction, and once more when it is complete.
    fn progress(&self, dir: Dir) -> u8 {
        (self.frags[dir.index()] % 64) as u8 | u8::from(self.complete(dir)) << 7
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn dce_little_endian(&self, id: BufferId) -> bool {
        matches!(id, detect::STUB_TS | detect::STUB_TC) && self.little_endian
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Dcerpc(eve::record(self)))
    }

    /// A connectionless call missing a side is not logged when its flow just ends
    /// (Suricata logs it only once both sides came, or a parse error ended them).
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        let unfinished = !(self.complete(Dir::ToServer) && self.complete(Dir::ToClient));
        if dir == Dir::ToServer || (self.udp.is_some() && unfinished) {
            return None;
        }
        self.record()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::parser::tests::BIND_LE;
    use super::*;
    use crate::value::KwValue;
    use crate::{AppState, KeywordKind, ParseOutput};

    #[test]
    fn probes() {
        assert_eq!(probe(BIND_LE), Probe::Match);
        assert_eq!(probe(&BIND_LE[..6]), Probe::NeedMore);
        assert_eq!(probe(b""), Probe::NeedMore);
        assert_eq!(probe(b"\x05\x02"), Probe::NoMatch);
        assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
        let mut bad_drep = BIND_LE.to_vec();
        bad_drep[4] = 0x20;
        assert_eq!(probe(&bad_drep), Probe::NoMatch);
        assert!(!is_reply(Transport::Tcp, BIND_LE));
        let mut ack = BIND_LE.to_vec();
        ack[2] = parser::BINDACK;
        assert!(is_reply(Transport::Tcp, &ack));
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let k = detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        let v: KwValue = parse(Some(v)).unwrap();
        eval(&v, dir, 0, tx)
    }

    /// A bind to Netlogon, accepted, and a call of opnum 4: the keywords and the record.
    #[test]
    fn keywords_and_record() {
        let mut s = DcerpcState::new(state::DcerpcConfig::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, BIND_LE, &mut out);
        let mut ack = vec![5, 0, 12, 3, 0x10, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0];
        ack.extend_from_slice(&[0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 0, 0, 0, 0]);
        ack.extend_from_slice(&[1, 0, 0, 0, 0, 0, 0, 0]);
        ack.extend_from_slice(&[0; 20]);
        let n = ack.len() as u16;
        ack[8..10].copy_from_slice(&n.to_le_bytes());
        s.parse(Dir::ToClient, &ack, &mut out);
        let mut req = vec![5, 0, 0, 3, 0x10, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0];
        req.extend_from_slice(&[0, 0, 0, 0, 0, 0, 4, 0]);
        req.extend_from_slice(b"BBBB");
        let n = req.len() as u16;
        req[8..10].copy_from_slice(&n.to_le_bytes());
        s.parse(Dir::ToServer, &req, &mut out);
        assert!(!out.failed);
        let tx = s.tx(1).unwrap();
        let netlogon = "12345678-1234-abcd-ef00-01234567cffb";
        assert_eq!(
            eval("dcerpc.iface", netlogon, Dir::ToServer, tx),
            Some(true)
        );
        assert_eq!(
            eval("dcerpc.iface", netlogon, Dir::ToClient, tx),
            Some(true)
        );
        let v1 = format!("{netlogon},=1");
        let v2 = format!("{netlogon},>1");
        assert_eq!(eval("dcerpc.iface", &v1, Dir::ToServer, tx), Some(true));
        assert_eq!(eval("dcerpc.iface", &v2, Dir::ToServer, tx), Some(false));
        let other = "e1af8308-5d1f-11c9-91a4-08002b14a0fa";
        assert_eq!(eval("dcerpc.iface", other, Dir::ToServer, tx), Some(false));
        assert_eq!(eval("dcerpc.opnum", "4", Dir::ToServer, tx), Some(true));
        assert_eq!(
            eval("dcerpc.opnum", "1-3,5", Dir::ToServer, tx),
            Some(false)
        );
        assert_eq!(tx.buffer(detect::STUB_TS, 0), Buf::Ready(b"BBBB"));
        assert_eq!(tx.buffer(detect::STUB_TC, 0), Buf::NotYet);
        // The BIND's transaction is no call: the keywords do not match it.
        let bind = s.tx(0).unwrap();
        assert_eq!(
            eval("dcerpc.opnum", "0-65535", Dir::ToServer, bind),
            Some(false)
        );
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&bind.record().unwrap(), &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            concat!(
                r#"{"dcerpc":{"request":"BIND","interfaces":[{"uuid":"12345678-1234-abcd-ef00-01234567cffb","#,
                r#""version":"1.0","ack_result":0}],"response":"BINDACK","call_id":2,"rpc_version":"5.0"}}"#
            )
        );
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&tx.record().unwrap(), &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            concat!(
                r#"{"dcerpc":{"request":"REQUEST","req":{"opnum":4,"frag_cnt":1,"stub_data_size":4},"#,
                r#""interfaces":[{"uuid":"12345678-1234-abcd-ef00-01234567cffb","version":"1.0","ack_result":0}],"#,
                r#""response":"UNREPLIED","call_id":2,"rpc_version":"5.0"}}"#
            )
        );
    }
}
