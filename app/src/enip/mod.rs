//! EtherNet/IP and CIP (TCP and UDP 44818): detection on the protocol's port by its
//! encapsulation header (as Suricata's probe), request/reply transactions, the
//! `enip.*` and `cip_*` keywords, the `enip.product_name` and `enip.service_name`
//! buffers, the frames `pdu`, `hdr`, `data`, `cip`, `enip.item`, app-layer events and
//! the EVE `enip` record. Off unless `app-layer.protocols.enip.enabled` says yes, as
//! Suricata's configuration has it.

pub mod config;
pub mod detect;
pub mod eve;
pub mod parser;
pub mod state;
pub mod vendors;

pub use state::{EnipConfig, EnipState, EnipTx};

use meerkat_proto::events::Enip;

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// EtherNet/IP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Enip,
    name: "enip",
    aliases: &[],
    family: None,
    enabled_by_default: false,
    transports: Transports::BOTH,
    default_ports: &[44818],
    // Suricata probes ENIP on its port only.
    port_bound: true,
    probe,
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::TxComplete,
    record: Some(RecordDef {
        event_type: "enip",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[
        FuzzTarget {
            name: "enip_tcp",
            run: fuzz_tcp,
        },
        FuzzTarget {
            name: "enip_udp",
            run: fuzz_udp,
        },
    ],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &["enip.invalid_pdu", "enip.too_many_transactions"];

/// Bytes after which Suricata's TCP probe gives up waiting for a whole header.
pub const PROBE_DEPTH: usize = 16;

/// Suricata's probe: a whole encapsulation header of a known command and status.
pub fn probe(transport: Transport, _dir: Dir, data: &[u8]) -> Probe {
    if data.len() < parser::HEADER_LEN {
        return match transport {
            Transport::Tcp if data.len() <= PROBE_DEPTH => Probe::NeedMore,
            _ => Probe::NoMatch,
        };
    }
    if parser::probe(data) {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn exercise(s: &EnipState) {
    for i in 0..s.tx_count() {
        if let Some(tx) = s.tx(i) {
            if let Some(r) = tx.record() {
                let mut buf = Vec::new();
                let mut o = meerkat_eve::Obj::new(&mut buf);
                eve::render(&r, &mut o);
                o.end();
            }
            for id in [1, 2].into_iter().chain(100..110) {
                for index in 0..3 {
                    let _ = tx.buffer(BufferId::of(AppProto::Enip, id), index);
                }
            }
        }
    }
}

/// Fuzz target: ENIP over TCP (PDUs across pieces, a small transaction limit), every
/// record rendered and every buffer read, the PDU parser alone and the probes.
pub fn fuzz_tcp(data: &[u8]) {
    let mut s = EnipState::new(EnipConfig { max_tx: 8 }, Transport::Tcp);
    crate::fuzz::drive(&mut s, data);
    exercise(&s);
    let _ = parser::parse(data);
    let _ = probe(Transport::Tcp, Dir::ToServer, data);
    crate::fuzz::probes(data);
}

/// Fuzz target: ENIP over UDP, each direction's bytes as one datagram.
pub fn fuzz_udp(data: &[u8]) {
    let [hi, lo, rest @ ..] = data else {
        return;
    };
    let split = usize::from(u16::from_be_bytes([*hi, *lo])).min(rest.len());
    let (ts, tc) = rest.split_at(split);
    let mut s = EnipState::new(EnipConfig::default(), Transport::Udp);
    let mut out = crate::ParseOutput::default();
    s.parse(Dir::ToServer, ts, &mut out);
    s.parse(Dir::ToClient, tc, &mut out);
    exercise(&s);
    let _ = probe(Transport::Udp, Dir::ToClient, tc);
}

impl Transaction for EnipTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A direction is done once its PDU is in, or once the transaction is done
    /// (Suricata's progress).
    fn complete(&self, dir: Dir) -> bool {
        self.done || self.msg(dir).is_some()
    }

    fn progress(&self, dir: Dir) -> u8 {
        u8::from(self.complete(dir))
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        if self.request.is_none() && self.response.is_none() {
            return None;
        }
        Some(AppRecord::Enip(Enip {
            request: self.request.as_ref().map(|m| m.bytes.clone()),
            response: self.response.as_ref().map(|m| m.bytes.clone()),
        }))
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        detect::frame_meta(self, id, index)
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParseOutput;
    use crate::value::KwValue;
    use crate::{KeywordKind, descriptor::EvalFn};
    use parser::tests::{
        GET_ATTR_LIST, LIST_IDENTITY_REQ, list_identity_reply, multiple_request, send_rr_data,
    };

    #[test]
    fn every_raised_event_is_listed() {
        let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "enip");
        assert!(n > 0);
    }

    #[test]
    fn probes() {
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, LIST_IDENTITY_REQ),
            Probe::Match
        );
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, &LIST_IDENTITY_REQ[..10]),
            Probe::NeedMore
        );
        assert_eq!(
            probe(Transport::Udp, Dir::ToServer, &LIST_IDENTITY_REQ[..10]),
            Probe::NoMatch
        );
        let mut bad = LIST_IDENTITY_REQ.to_vec();
        bad[0] = 0x99;
        assert_eq!(probe(Transport::Tcp, Dir::ToServer, &bad), Probe::NoMatch);
    }

    fn kw(name: &str, v: &str) -> (KwValue, EvalFn) {
        let k = detect::KEYWORDS
            .iter()
            .find(|k| k.name == name || k.aliases.contains(&name))
            .unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        (parse(Some(v)).unwrap(), eval)
    }

    fn eval(tx: &dyn Transaction, dir: Dir, name: &str, v: &str) -> Option<bool> {
        let (v, f) = kw(name, v);
        f(&v, dir, 0, tx)
    }

    #[test]
    fn keywords_and_buffers() {
        let mut s = EnipState::new(EnipConfig::default(), Transport::Tcp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, LIST_IDENTITY_REQ, &mut out);
        s.parse(Dir::ToServer, &send_rr_data(&multiple_request()), &mut out);
        let t0 = s.tx(0).unwrap();
        assert_eq!(
            eval(t0, Dir::ToServer, "enip_command", "list_identity"),
            Some(true)
        );
        assert_eq!(eval(t0, Dir::ToClient, "enip.serial", "0x524D8E"), None);
        s.parse(Dir::ToClient, &list_identity_reply(), &mut out);
        let t0 = s.tx(0).unwrap();
        assert_eq!(
            eval(t0, Dir::ToClient, "enip.serial", "0x524D8E"),
            Some(true)
        );
        assert_eq!(
            eval(t0, Dir::ToServer, "enip.serial", "0x524D8E"),
            Some(false)
        );
        assert_eq!(
            eval(t0, Dir::ToClient, "enip.revision", "0x403"),
            Some(true)
        );
        assert_eq!(eval(t0, Dir::ToClient, "enip.vendor_id", "1"), Some(true));
        assert_eq!(
            eval(t0, Dir::ToClient, "enip.protocol_version", "1"),
            Some(true)
        );
        assert_eq!(eval(t0, Dir::ToClient, "enip.status", "0"), Some(true));
        assert_eq!(
            t0.buffer(detect::PRODUCT_NAME, 0),
            Buf::Ready(&b"1756-ENBT/A"[..])
        );
        assert_eq!(
            t0.buffer(detect::FRAME_HDR_TC, 0),
            Buf::Ready(&list_identity_reply()[..24])
        );
        let t1 = s.tx(1).unwrap();
        assert_eq!(eval(t1, Dir::ToServer, "enip.cip_class", "1"), Some(true));
        assert_eq!(
            eval(t1, Dir::ToServer, "enip.cip_instance", "1"),
            Some(true)
        );
        assert_eq!(
            eval(t1, Dir::ToServer, "enip.cip_attribute", "7"),
            Some(true)
        );
        assert_eq!(
            eval(t1, Dir::ToServer, "enip.cip_attribute", "9"),
            Some(false)
        );
        assert_eq!(eval(t1, Dir::ToServer, "cip_service", "3,1,7"), Some(true));
        assert_eq!(eval(t1, Dir::ToServer, "cip_service", "3,2"), Some(false));
        assert_eq!(eval(t1, Dir::ToServer, "cip_service", "10"), Some(true));
        // The data item's CIP, then each embedded service.
        assert!(
            matches!(t1.buffer(detect::FRAME_CIP_TS, 0), Buf::Ready(b) if b.len() == multiple_request().len())
        );
        assert_eq!(
            t1.buffer(detect::FRAME_CIP_TS, 2),
            Buf::Ready(GET_ATTR_LIST)
        );
        assert_eq!(t1.buffer(detect::FRAME_CIP_TS, 3), Buf::Absent);
        let r = send_rr_data(&multiple_request());
        assert_eq!(t1.buffer(detect::FRAME_ITEM_TS, 1), Buf::Ready(&r[36..]));
    }

    #[test]
    fn records_render_as_suricata_writes_them() {
        let mut s = EnipState::new(EnipConfig::default(), Transport::Tcp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, LIST_IDENTITY_REQ, &mut out);
        s.parse(Dir::ToClient, &list_identity_reply(), &mut out);
        let r = s.tx(0).unwrap().record().unwrap();
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&r, &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            r#"{"enip":{"request":{"command":"list_identity","status":"success"},"response":{"command":"list_identity","status":"success","identity":{"protocol_version":1,"revision":"4.3","vendor_id":"Rockwell Automation/Allen-Bradley","device_type":"Communications Adapter","product_code":58,"status":48,"serial":5393806,"product_name":"1756-ENBT/A","state":3}}}}"#
        );
    }

    #[test]
    fn vendor_table_is_sorted_and_named_as_suricata_for_common_ids() {
        assert!(vendors::VENDORS.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(vendors::VENDORS.len() > 1400);
        assert_eq!(vendors::name(1), Some("Rockwell Automation/Allen-Bradley"));
        assert_eq!(vendors::name(40), Some("Wago Corporation"));
        assert_eq!(vendors::name(0), None);
        assert_eq!(vendors::name(u16::MAX), None);
    }
}
