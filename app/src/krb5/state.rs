//! A Kerberos 5 flow: its messages (datagrams, or TCP records) and the transactions
//! made of them, one per AS-REQ, AS-REP, TGS-REQ, TGS-REP and KRB-ERROR, inspected in
//! the direction the message came (Suricata's one-direction transactions).
//!
//! As Suricata's parser: a KRB-ERROR records the type of the request it answers (the
//! flow's last AS-REQ, TGS-REQ or AP-REQ, forgotten at each reply or error); a reply
//! whose encrypted part uses a weak type raises `krb5.weak_encryption`; a message
//! without even a DER header raises `krb5.malformed_data` and is a parse error, after
//! which nothing more of a TCP flow is parsed (a datagram's error stops nothing); a
//! message that does not decode is skipped silently.

use std::collections::VecDeque;

use super::parser::{self, Decoded, Message, Records};
use crate::{AppState, Dir, ParseOutput, Transaction, Transport};

/// Most live transactions per flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 1024;

/// One message.
#[derive(Debug)]
pub struct Krb5Tx {
    pub id: u64,
    /// The direction the message came.
    pub dir: Dir,
    pub msg: Message,
    /// A KRB-ERROR's failed request: the type of the request before it (0: none).
    pub failed_request: u32,
}

/// One flow.
#[derive(Debug)]
pub struct Krb5State {
    transport: Transport,
    records: [Records; 2],
    /// The type of the last request not answered yet (0: none).
    last_request: u32,
    /// A TCP flow stopped by a parse error.
    stopped: bool,
    txs: VecDeque<Krb5Tx>,
    next_id: u64,
}

impl Krb5State {
    pub fn new(transport: Transport) -> Krb5State {
        Krb5State {
            transport,
            records: [Records::default(), Records::default()],
            last_request: 0,
            stopped: false,
            txs: VecDeque::new(),
            next_id: 0,
        }
    }

    /// Handles one message; `false` when the flow stops being parsed.
    fn message(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) -> bool {
        let tag = match parser::decode(data) {
            Decoded::Malformed => {
                out.anomaly("krb5.malformed_data");
                out.error = true;
                return self.transport == Transport::Udp;
            }
            Decoded::NotApplication => return true,
            Decoded::Other { tag } => tag,
            Decoded::Tx(msg) => {
                let tag = msg.msg_type;
                let weak = matches!(tag, parser::AS_REP | parser::TGS_REP)
                    && msg.etype.is_some_and(parser::weak);
                let truncated = msg.truncated;
                // An AS or TGS exchange's message, or an error, lets stream rules see
                // it, as Suricata's parser asks.
                if !matches!(tag, parser::AP_REQ | parser::AP_REP) {
                    out.trigger_raw(dir);
                }
                if self.txs.len() == MAX_TX {
                    self.txs.pop_front();
                }
                self.txs.push_back(Krb5Tx {
                    id: self.next_id,
                    dir,
                    msg,
                    failed_request: self.last_request,
                });
                self.next_id += 1;
                if weak {
                    out.anomaly("krb5.weak_encryption");
                }
                if truncated {
                    out.anomaly("krb5.malformed_data");
                }
                tag
            }
        };
        match tag {
            parser::AS_REQ | parser::TGS_REQ | parser::AP_REQ => self.last_request = tag,
            parser::AS_REP | parser::TGS_REP | parser::AP_REP | parser::KRB_ERROR => {
                self.last_request = 0;
            }
            _ => {}
        }
        true
    }
}

impl AppState for Krb5State {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if self.stopped {
            return;
        }
        match self.transport {
            Transport::Udp => {
                // An empty datagram is no message (Suricata does not parse it).
                if !data.is_empty() {
                    self.message(dir, data, out);
                }
            }
            Transport::Tcp => {
                let mut records = std::mem::take(&mut self.records[dir.index()]);
                records.feed(data, |record| {
                    let go_on = self.message(dir, record, out);
                    self.stopped |= !go_on;
                    go_on
                });
                self.records[dir.index()] = records;
            }
        }
    }

    /// Suricata's Kerberos parser takes no gaps: a parse error, nothing more parsed.
    fn gap(&mut self, _dir: Dir, _len: u64, out: &mut ParseOutput) {
        if !self.stopped {
            self.stopped = true;
            out.error = true;
        }
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
    use super::super::parser::tests::{AS_REP_RC4, AS_REQ_ALICE, ERR_PREAUTH};
    use super::*;

    fn tcp(records: &[&[u8]]) -> Vec<u8> {
        let mut s = Vec::new();
        for r in records {
            s.extend_from_slice(&(r.len() as u32).to_be_bytes());
            s.extend_from_slice(r);
        }
        s
    }

    #[test]
    fn errors_name_the_request_they_answer() {
        let mut s = Krb5State::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, AS_REQ_ALICE, &mut out);
        s.parse(Dir::ToClient, ERR_PREAUTH, &mut out);
        s.parse(Dir::ToClient, ERR_PREAUTH, &mut out);
        // An AP-REQ makes no transaction but is the request an error answers.
        s.parse(Dir::ToServer, b"\x6e\x05\x30\x03\x02\x01\x05", &mut out);
        s.parse(Dir::ToClient, ERR_PREAUTH, &mut out);
        assert!(out.anomalies.is_empty() && !out.error);
        let f: Vec<(u32, u32)> = s
            .txs
            .iter()
            .map(|t| (t.msg.msg_type, t.failed_request))
            .collect();
        assert_eq!(f, [(10, 0), (30, 10), (30, 0), (30, 14)]);
        // A datagram with no DER header: an error, the flow goes on.
        s.parse(Dir::ToServer, b"\x6a", &mut out);
        assert_eq!(out.anomalies, ["krb5.malformed_data"]);
        assert!(out.error);
        s.parse(Dir::ToClient, AS_REP_RC4, &mut out);
        assert_eq!(
            out.anomalies,
            ["krb5.malformed_data", "krb5.weak_encryption"]
        );
        assert_eq!(s.tx_count(), 5);
    }

    #[test]
    fn a_tcp_parse_error_stops_the_flow() {
        let mut s = Krb5State::new(Transport::Tcp);
        let mut out = ParseOutput::default();
        let mut data = tcp(&[AS_REQ_ALICE, b"", AS_REQ_ALICE]);
        let rest = data.split_off(7);
        s.parse(Dir::ToServer, &data, &mut out);
        assert_eq!(s.tx_count(), 0);
        s.parse(Dir::ToServer, &rest, &mut out);
        assert_eq!(s.tx_count(), 1);
        assert_eq!(out.anomalies, ["krb5.malformed_data"]);
        assert!(out.error);
        s.parse(Dir::ToClient, &tcp(&[ERR_PREAUTH]), &mut out);
        assert_eq!(s.tx_count(), 1);
        // A gap stops a flow too, without an anomaly.
        let mut s = Krb5State::new(Transport::Tcp);
        let mut out = ParseOutput::default();
        s.gap(Dir::ToServer, 10, &mut out);
        s.parse(Dir::ToClient, &tcp(&[ERR_PREAUTH]), &mut out);
        assert!(out.error && out.anomalies.is_empty());
        assert_eq!(s.tx_count(), 0);
    }
}
