//! IMAP (RFC 9051) over TCP, as Suricata 8 has it: recognised (EVE `app_proto: imap`,
//! `alert imap` rules, `app-layer-protocol:imap`) and not parsed. Suricata 8 has no
//! IMAP parser, record, keywords or events: it tells IMAP by the server's untagged
//! `* OK ` greeting or a client's `1 capability` (without case), on any port, and
//! so does Meerkat.

use crate::descriptor::{Build, Descriptor, FuzzTarget, Transports};
use crate::{AppProto, AppState, Dir, ParseOutput, Probe, Transaction, Transport};

/// IMAP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Imap,
    name: "imap",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[143],
    port_bound: false,
    probe,
    probe_on_port: None,
    is_reply,
    build: Build::Plain(|_| Box::new(ImapState)),
    inner: &[],
    buffers: &[],
    keywords: &[],
    frames: &[],
    events: &[],
    events_upper_case: false,
    record: None,
    fuzz: &[FuzzTarget {
        name: "imap",
        run: fuzz,
    }],
};

/// The patterns Suricata looks for, by direction (compared without case).
const TO_CLIENT: &[u8] = b"* OK ";
const TO_SERVER: &[u8] = b"1 capability";

fn starts_ci(data: &[u8], p: &[u8]) -> Probe {
    let n = data.len().min(p.len());
    if !data[..n].eq_ignore_ascii_case(&p[..n]) {
        Probe::NoMatch
    } else if n < p.len() {
        Probe::NeedMore
    } else {
        Probe::Match
    }
}

/// The server's `* OK ` or the client's `1 capability` at the start of the data.
pub fn probe(_t: Transport, dir: Dir, data: &[u8]) -> Probe {
    match dir {
        Dir::ToClient => starts_ci(data, TO_CLIENT),
        Dir::ToServer => starts_ci(data, TO_SERVER),
    }
}

/// The server's greeting is a reply.
pub fn is_reply(_t: Transport, data: &[u8]) -> bool {
    starts_ci(data, TO_CLIENT) == Probe::Match
}

/// Fuzz target: every probe (the state takes nothing).
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut ImapState, data);
    crate::fuzz::probes(data);
}

/// An IMAP flow: nothing is parsed.
#[derive(Debug, Default)]
pub struct ImapState;

impl AppState for ImapState {
    fn parse(&mut self, _dir: Dir, _data: &[u8], _out: &mut ParseOutput) {}
    fn gap(&mut self, _dir: Dir, _len: u64, _out: &mut ParseOutput) {}
    fn eof(&mut self, _dir: Dir, _out: &mut ParseOutput) {}
    fn tx_count(&self) -> usize {
        0
    }
    fn tx(&self, _index: usize) -> Option<&dyn Transaction> {
        None
    }
    fn free_below(&mut self, _id: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes() {
        let t = Transport::Tcp;
        assert_eq!(probe(t, Dir::ToClient, b"* OK Dovecot ready.\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToClient, b"* ok hi\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToClient, b"* O"), Probe::NeedMore);
        assert_eq!(probe(t, Dir::ToClient, b"* PREAUTH hi\r\n"), Probe::NoMatch);
        assert_eq!(probe(t, Dir::ToServer, b"1 CAPABILITY\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToServer, b"a001 LOGIN x y\r\n"), Probe::NoMatch);
        assert!(is_reply(t, b"* OK x"));
    }
}
