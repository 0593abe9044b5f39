//! RDP per-flow state, as Suricata's: each direction's bytes are read as TPKTs until
//! one is not a TPKT; a TLS handshake record there (a negotiated TLS or CredSSP) turns
//! the flow to reading TLS records, both ways. A transaction per Connection Request
//! (client), Connection Confirm (server), MCS Connect Initial (client), MCS Connect
//! Response (server) and Certificate message (server); after the Connect Response or
//! a Certificate nothing more of the flow is read. Anything else that is not a TPKT is
//! a parse error that ends the parsing of the flow.
//!
//! A TPKT or TLS record that has not all come waits in its direction's pending buffer
//! (at most one TPKT, 64 KiB, or one TLS record); one that has all come but that
//! Suricata's parser would still ask more of stops its direction for good (Suricata's
//! waits forever).

use std::collections::VecDeque;

use super::parser::{self, ConnectInitial, ConnectionConfirm, ConnectionRequest, Fail, Tpdu};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Transactions kept (a connection sequence makes five).
pub const MAX_TX: usize = 64;

/// What a transaction holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    InitialRequest(ConnectionRequest),
    InitialResponse(ConnectionConfirm),
    ConnectRequest(ConnectInitial),
    ConnectResponse,
    /// The serial numbers of the chain's certificates that are X.509 certificates.
    TlsHandshake(Vec<String>),
}

/// One message of the connection sequence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RdpTx {
    pub id: u64,
    pub dir: Dir,
    pub item: Item,
}

/// The flow's parser.
#[derive(Debug, Default)]
pub struct RdpState {
    txs: VecDeque<RdpTx>,
    next_id: u64,
    /// Each direction's bytes of a TPKT or TLS record that has not all come.
    pending: [Vec<u8>; 2],
    /// A direction that will never be read again (see the module's doc).
    stalled: [bool; 2],
    /// The flow speaks TLS now.
    tls: bool,
    /// The connection sequence is over: nothing more is read.
    bypass: bool,
    /// A parse error ended the parsing.
    stopped: bool,
}

/// What reading a direction's bytes came to.
enum Step {
    /// All read.
    Done,
    /// The bytes from here on wait for more.
    Wait(usize),
    /// The direction will not be read again.
    Stall,
    /// Nothing more of the flow is read.
    Bypass,
    /// A parse error.
    Error,
}

impl RdpState {
    pub fn new() -> RdpState {
        RdpState::default()
    }

    /// Live transactions.
    pub fn txs(&self) -> impl Iterator<Item = &RdpTx> {
        self.txs.iter()
    }

    fn push(&mut self, dir: Dir, item: Item) {
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(RdpTx {
            id: self.next_id,
            dir,
            item,
        });
        self.next_id += 1;
    }

    /// Reads `data` of `dir` from its start.
    fn read(&mut self, dir: Dir, data: &[u8]) -> Step {
        let mut at = 0;
        loop {
            let avail = &data[at..];
            if avail.is_empty() {
                return Step::Done;
            }
            if self.tls {
                match parser::tls_record(avail) {
                    Ok((chains, rest)) => {
                        for chain in chains {
                            let serials = chain.iter().filter_map(|c| parser::x509_serial(c));
                            let serials = serials.collect();
                            if dir == Dir::ToClient {
                                self.push(dir, Item::TlsHandshake(serials));
                                self.bypass = true;
                            }
                        }
                        at = data.len() - rest.len();
                    }
                    Err(Fail::Incomplete) => {
                        let whole = parser::tls_record_len(avail).is_some_and(|n| avail.len() >= n);
                        return if whole { Step::Stall } else { Step::Wait(at) };
                    }
                    Err(Fail::Error) => return Step::Error,
                }
                continue;
            }
            match parser::tpkt(avail) {
                Ok((tpdu, rest)) => {
                    at = data.len() - rest.len();
                    match (dir, tpdu) {
                        (Dir::ToServer, Tpdu::ConnectionRequest(cr)) => {
                            self.push(dir, Item::InitialRequest(cr));
                        }
                        (Dir::ToServer, Tpdu::ConnectInitial(ci)) => {
                            self.push(dir, Item::ConnectRequest(ci));
                        }
                        (Dir::ToClient, Tpdu::ConnectionConfirm(cc)) => {
                            self.push(dir, Item::InitialResponse(cc));
                        }
                        (Dir::ToClient, Tpdu::ConnectResponse) => {
                            self.push(dir, Item::ConnectResponse);
                            return Step::Bypass;
                        }
                        _ => {}
                    }
                }
                Err(Fail::Incomplete) => {
                    let whole = parser::tpkt_len(avail).is_some_and(|n| avail.len() >= n);
                    return if whole { Step::Stall } else { Step::Wait(at) };
                }
                Err(Fail::Error) if avail[0] == parser::TLS_HANDSHAKE => self.tls = true,
                Err(Fail::Error) => return Step::Error,
            }
        }
    }
}

impl AppState for RdpState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.stopped || self.bypass || self.stalled[d] || data.is_empty() {
            return;
        }
        let mut pending = std::mem::take(&mut self.pending[d]);
        let buf: &[u8] = if pending.is_empty() {
            data
        } else {
            pending.extend_from_slice(data);
            &pending
        };
        match self.read(dir, buf) {
            Step::Done => {}
            Step::Wait(at) => {
                let keep = buf[at..].to_vec();
                pending.clear();
                pending.extend_from_slice(&keep);
                self.pending[d] = pending;
                return;
            }
            Step::Stall => self.stalled[d] = true,
            Step::Bypass => self.bypass = true,
            Step::Error => {
                self.stopped = true;
                out.error = true;
            }
        }
        pending.clear();
        self.pending[d] = pending;
        if self.bypass || self.stopped || self.stalled[d] {
            self.pending = Default::default();
        }
    }

    /// Suricata's RDP parser takes no gaps: a gap ends the parsing of the flow.
    fn gap(&mut self, _dir: Dir, _len: u64, out: &mut ParseOutput) {
        if !self.stopped && !self.bypass {
            self.stopped = true;
            out.error = true;
        }
        self.pending = Default::default();
    }

    fn eof(&mut self, _dir: Dir, _out: &mut ParseOutput) {}

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
    }
}

#[cfg(test)]
mod tests {
    use super::super::parser::tests::{CC_SSL, CR_COOKIE, CR_NEG};
    use super::*;

    fn items(s: &RdpState) -> Vec<&Item> {
        s.txs().map(|t| &t.item).collect()
    }

    #[test]
    fn a_request_in_pieces_and_two_in_one() {
        let mut s = RdpState::new();
        let mut out = ParseOutput::default();
        for b in CR_COOKIE.chunks(5) {
            s.parse(Dir::ToServer, b, &mut out);
        }
        assert_eq!(s.tx_count(), 1);
        let mut two = CR_COOKIE.to_vec();
        two.extend_from_slice(CR_NEG);
        s.parse(Dir::ToServer, &two, &mut out);
        assert_eq!(s.tx_count(), 3);
        assert_eq!(s.pending[0], b"\x03");
        assert!(!out.error);
    }

    #[test]
    fn tls_after_the_confirm_until_the_certificate() {
        let mut s = RdpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, CR_COOKIE, &mut out);
        s.parse(Dir::ToClient, CC_SSL, &mut out);
        // A ClientHello (its body is not checked), then the server's Certificate
        // message with one certificate that is not X.509.
        s.parse(
            Dir::ToServer,
            b"\x16\x03\x01\x00\x08\x01\x00\x00\x04\x03\x03\x00\x00",
            &mut out,
        );
        assert!(s.tls && !out.error);
        let cert = b"\x16\x03\x03\x00\x0d\x0b\x00\x00\x09\x00\x00\x06\x00\x00\x03\x30\x01\x00";
        s.parse(Dir::ToClient, &cert[..7], &mut out);
        assert_eq!(s.tx_count(), 2);
        s.parse(Dir::ToClient, &cert[7..], &mut out);
        assert_eq!(items(&s)[2], &Item::TlsHandshake(vec![]));
        assert!(s.bypass && !out.error);
        s.parse(Dir::ToServer, b"garbage", &mut out);
        assert!(!out.error);
    }

    #[test]
    fn not_a_tpkt_is_an_error() {
        let mut s = RdpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\x03\x00\x00\x02", &mut out);
        assert!(out.error && s.stopped);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, CC_SSL, &mut out);
        assert_eq!(s.tx_count(), 0);
        assert!(!out.error);
    }

    #[test]
    fn a_whole_tpkt_that_is_never_enough_stalls_its_direction() {
        let mut s = RdpState::new();
        let mut out = ParseOutput::default();
        s.parse(
            Dir::ToServer,
            b"\x03\x00\x00\x0b\x02\xf0\x80\x7f\x65\x00\x00",
            &mut out,
        );
        assert!(s.stalled[0] && !out.error);
        s.parse(Dir::ToServer, CR_COOKIE, &mut out);
        s.parse(Dir::ToClient, CC_SSL, &mut out);
        assert_eq!(s.tx_count(), 1);
    }
}
