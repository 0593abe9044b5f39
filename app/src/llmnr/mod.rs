//! LLMNR (RFC 4795): DNS messages on port 5355, parsed by the DNS parser and named as
//! their own protocol (`alert llmnr`, `llmnr.queries.rrname`, ...), as Suricata does.
//!
//! Detection is by content (a well-formed DNS message) on LLMNR's port only: elsewhere
//! the same message is DNS.

pub mod detect;

use crate::AppProto;
use crate::descriptor::{Build, Descriptor, FuzzTarget, Transports};
use crate::dns::{self, DnsState};

pub const PORT: u16 = 5355;

/// LLMNR: DNS's parser and buffers under LLMNR's name, on its port. No EVE record of its
/// own yet (alerts carry `app_proto`).
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Llmnr,
    name: "llmnr",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::BOTH,
    default_ports: &[PORT],
    port_bound: true,
    probe: dns::probe,
    probe_on_port: Some(dns::probe_on_port),
    is_reply: dns::is_reply,
    build: Build::Plain(|t| Box::new(DnsState::new(t))),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: &[],
    // The DNS parser's anomalies are DNS's (`dns.<event>`).
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: None,
    fuzz: &[FuzzTarget {
        name: "llmnr",
        run: fuzz,
    }],
};

/// Fuzz target: every protocol's probe on LLMNR's port, then the parser on UDP.
pub fn fuzz(data: &[u8]) {
    let r = crate::Registry::default();
    for d in [crate::Dir::ToServer, crate::Dir::ToClient] {
        let _ = r.probe(crate::Transport::Udp, d, [40000, PORT], data);
    }
    crate::fuzz::drive(&mut DnsState::new(crate::Transport::Udp), data);
}
