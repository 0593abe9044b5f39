//! LLMNR (RFC 4795): DNS messages on port 5355, parsed by the DNS parser and named as
//! their own protocol (`alert llmnr`, `llmnr.queries.rrname`, ...), as Suricata does.
//!
//! Detection is by content (a well-formed DNS message) on LLMNR's port only: elsewhere
//! the same message is DNS.

use super::dns::{self, DnsState};
use super::{AppProto, AppState, Dir, Probe, Protocol, Transport};

pub const PORT: u16 = 5355;

#[derive(Debug, Clone, Copy, Default)]
pub struct LlmnrProtocol;

impl Protocol for LlmnrProtocol {
    fn proto(&self) -> AppProto {
        AppProto::Llmnr
    }

    fn probe(&self, transport: Transport, dir: Dir, data: &[u8]) -> Probe {
        dns::DnsProtocol.probe(transport, dir, data)
    }

    fn default_ports(&self) -> &'static [u16] {
        &[PORT]
    }

    fn port_bound(&self) -> bool {
        true
    }

    fn is_reply(&self, transport: Transport, data: &[u8]) -> bool {
        dns::DnsProtocol.is_reply(transport, data)
    }

    fn new_state(&self, transport: Transport) -> Box<dyn AppState> {
        Box::new(DnsState::new(transport))
    }
}
