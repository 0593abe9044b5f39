//! SIP (RFC 3261) over UDP and TCP, with SDP (RFC 4566) bodies: detection by the
//! request methods and the `SIP/` status line, one transaction per message (as
//! Suricata has), the `sip.*` and `sdp.*` sticky buffers, and the EVE `sip` record.

pub mod detect;
pub mod eve;
pub mod logger;
pub mod parser;
pub mod state;

pub use state::{SipState, SipTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// SIP over UDP and TCP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Sip,
    name: "sip",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::BOTH,
    default_ports: &[5060, 5061],
    port_bound: false,
    probe,
    probe_on_port: None,
    is_reply,
    build: Build::Plain(|t| Box::new(SipState::new(t))),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::TxComplete,
    record: Some(RecordDef {
        event_type: "sip",
        render: eve::render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[
        FuzzTarget {
            name: "sip_udp",
            run: fuzz_udp,
        },
        FuzzTarget {
            name: "sip_tcp",
            run: fuzz_tcp,
        },
    ],
};

/// The anomalies the parser raises (Suricata's names). Suricata's SIP parser has no
/// others: Meerkat's bounds (header count, line and body length, transactions per
/// flow) raise `invalid_data` too.
pub const EVENTS: &[&str] = &["sip.incomplete_data", "sip.invalid_data"];

/// Fuzz target: SIP over UDP (one datagram per piece, as the shared driver cuts them),
/// then each direction's bytes as one whole datagram (the driver's pieces are short).
pub fn fuzz_udp(data: &[u8]) {
    crate::fuzz::drive(&mut SipState::new(Transport::Udp), data);
    if let [_, hi, lo, rest @ ..] = data {
        let split = usize::from(u16::from_be_bytes([*hi, *lo])).min(rest.len());
        let (ts, tc) = rest.split_at(split);
        let mut s = SipState::new(Transport::Udp);
        let mut out = crate::ParseOutput::default();
        s.parse(Dir::ToServer, ts, &mut out);
        s.parse(Dir::ToClient, tc, &mut out);
        for i in 0..s.tx_count() {
            if let Some(tx) = s.tx(i) {
                let _ = tx.record();
                for n in 0..64 {
                    let _ = tx.buffer(BufferId::of(AppProto::Sip, n), 0);
                    let _ = tx.buffer(BufferId::of(AppProto::Sip, n), 1);
                }
            }
        }
        let _ = probe(Transport::Udp, Dir::ToServer, ts);
    }
}

/// Fuzz target: SIP over TCP (messages across pieces).
pub fn fuzz_tcp(data: &[u8]) {
    crate::fuzz::drive(&mut SipState::new(Transport::Tcp), data);
}

const STATUS_PREFIX: &[u8] = b"SIP/2.0";

/// Recognises a request (a method of [`parser::METHODS`] and a space) or a status
/// line (`SIP/2.0`) at the start of the data, as Suricata's patterns do.
pub fn probe(_transport: Transport, _dir: Dir, data: &[u8]) -> Probe {
    let mut need_more = false;
    for m in parser::METHODS {
        if data.len() > m.len() {
            if data.starts_with(m) && data[m.len()] == b' ' {
                return Probe::Match;
            }
        } else if m.starts_with(data) {
            need_more = true;
        }
    }
    if data.len() >= STATUS_PREFIX.len() {
        if data.starts_with(STATUS_PREFIX) {
            return Probe::Match;
        }
    } else if STATUS_PREFIX.starts_with(data) {
        need_more = true;
    }
    if need_more {
        Probe::NeedMore
    } else {
        Probe::NoMatch
    }
}

/// A status line is a reply.
pub fn is_reply(_transport: Transport, data: &[u8]) -> bool {
    data.starts_with(b"SIP/")
}

impl Transaction for SipTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A message is the whole transaction: both directions are done once it is in.
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
        Some(AppRecord::Sip(logger::record(&self.msg)))
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        detect::frame_meta(self, id, index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParseOutput;
    use parser::tests::{INVITE, OK};

    #[test]
    fn every_raised_event_is_listed() {
        let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "sip");
        assert!(n > 0);
    }

    #[test]
    fn probes() {
        assert_eq!(probe(Transport::Udp, Dir::ToServer, INVITE), Probe::Match);
        assert_eq!(probe(Transport::Tcp, Dir::ToClient, OK), Probe::Match);
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, b"REGI"),
            Probe::NeedMore
        );
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, b"SIP/"),
            Probe::NeedMore
        );
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, b"GET / HTTP/1.1\r\n"),
            Probe::NoMatch
        );
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, b"INVITEX sip:a SIP/2.0\r\n"),
            Probe::NoMatch
        );
        assert!(is_reply(Transport::Udp, OK));
        assert!(!is_reply(Transport::Udp, INVITE));
    }

    #[test]
    fn records_per_message() {
        let mut s = SipState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, INVITE, &mut out);
        s.parse(Dir::ToClient, OK, &mut out);
        let Some(AppRecord::Sip(req)) = s.tx(0).unwrap().event_record(Dir::ToClient) else {
            panic!()
        };
        assert!(req.request);
        assert_eq!(req.method, b"INVITE");
        assert_eq!(req.sdp.as_ref().unwrap().media_descriptions.len(), 1);
        let Some(AppRecord::Sip(resp)) = s.tx(1).unwrap().record() else {
            panic!()
        };
        assert_eq!(
            (resp.code.as_slice(), resp.reason.as_slice()),
            (&b"200"[..], &b"OK"[..])
        );
        assert!(s.tx(1).unwrap().event_record(Dir::ToServer).is_none());
    }
}
