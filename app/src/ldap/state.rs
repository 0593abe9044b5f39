//! One LDAP flow and its transactions, paired as Suricata 8 pairs them: each request
//! starts a transaction (complete at once for unbind and abandon); a response joins
//! the transaction whose request has its message id and completes it when it is a
//! final one (a search's done, any other operation's response); an extended response
//! to no request is an unsolicited notice (a transaction of its own); any other
//! response to no request is a transaction of its own with `request_not_found`.

use std::collections::VecDeque;

use super::parser::{self, Message};
use crate::snmp::ber::Error;
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Suricata's defaults of `max-tx` and `max-responses`.
pub const DEFAULT_MAX_TX: usize = 1024;
pub const DEFAULT_MAX_RESPONSES: usize = 1024;

/// One request and its responses.
#[derive(Debug, Default)]
pub struct LdapTx {
    pub id: u64,
    pub request: Option<Message>,
    pub responses: Vec<Message>,
    pub complete: bool,
    /// The flow's direction ended: what the transaction has is all it will have.
    pub eof: bool,
}

impl LdapTx {
    /// Whether more responses may still come.
    pub fn open(&self) -> bool {
        !self.complete && !self.eof
    }
}

/// Whether a response ends its transaction.
fn is_final(op: u8) -> bool {
    matches!(
        op,
        parser::SEARCH_RESULT_DONE
            | parser::BIND_RESPONSE
            | parser::MODIFY_RESPONSE
            | parser::ADD_RESPONSE
            | parser::DEL_RESPONSE
            | parser::MOD_DN_RESPONSE
            | parser::COMPARE_RESPONSE
            | parser::EXTENDED_RESPONSE
    )
}

/// One flow.
#[derive(Debug)]
pub struct LdapState {
    udp: bool,
    max_tx: usize,
    max_responses: usize,
    /// Bytes of an incomplete message per direction (TCP).
    buf: [Vec<u8>; 2],
    /// Parsing stopped in this direction (not LDAP, or broken).
    stopped: [bool; 2],
    next_id: u64,
    pub txs: VecDeque<LdapTx>,
}

impl LdapState {
    pub fn new(udp: bool, max_tx: usize, max_responses: usize) -> LdapState {
        LdapState {
            udp,
            max_tx: max_tx.max(1),
            max_responses,
            buf: Default::default(),
            stopped: [false; 2],
            next_id: 0,
            txs: VecDeque::new(),
        }
    }

    fn push(&mut self, tx: LdapTx, out: &mut ParseOutput) {
        if self.txs.len() >= self.max_tx {
            // Too many live transactions: the oldest open one is given up.
            if let Some(old) = self.txs.iter_mut().find(|t| !t.complete) {
                old.complete = true;
                out.anomaly("ldap.too_many_transactions");
            }
            if self.txs.len() >= self.max_tx.saturating_mul(2) {
                self.txs.pop_front();
            }
        }
        self.txs.push_back(tx);
        self.next_id += 1;
    }

    fn new_tx(&self) -> LdapTx {
        LdapTx {
            id: self.next_id,
            ..LdapTx::default()
        }
    }

    fn request(&mut self, m: Message, out: &mut ParseOutput) {
        let mut tx = self.new_tx();
        tx.complete = matches!(m.op.tag, parser::UNBIND_REQUEST | parser::ABANDON_REQUEST);
        tx.request = Some(m);
        self.push(tx, out);
    }

    fn response(&mut self, m: Message, out: &mut ParseOutput) {
        let max = self.max_responses;
        if let Some(tx) = self
            .txs
            .iter_mut()
            .find(|t| t.request.as_ref().is_some_and(|r| r.id == m.id))
        {
            tx.complete = is_final(m.op.tag);
            if tx.responses.len() >= max {
                out.anomaly("ldap.too_many_responses");
                return;
            }
            tx.responses.push(m);
            return;
        }
        let unsolicited = m.op.tag == parser::EXTENDED_RESPONSE;
        let mut tx = self.new_tx();
        tx.complete = true;
        tx.responses.push(m);
        self.push(tx, out);
        if !unsolicited {
            out.anomaly("ldap.request_not_found");
        }
    }

    fn message(&mut self, dir: Dir, m: Message, out: &mut ParseOutput) {
        // The direction a message came from does not decide what it is: a request is
        // a request (as Suricata, which reverses a flow whose first message is a
        // response).
        match dir {
            Dir::ToServer => self.request(m, out),
            Dir::ToClient => self.response(m, out),
        }
    }

    /// Gives up on a direction after a malformed message.
    fn broken(&mut self, dir: Dir, out: &mut ParseOutput) {
        let d = dir.index();
        self.stopped[d] = true;
        self.buf[d] = Vec::new();
        if dir == Dir::ToClient {
            out.anomaly("ldap.invalid_data");
        }
        out.failed = true;
    }
}

impl AppState for LdapState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.stopped[d] {
            return;
        }
        let mut buf = std::mem::take(&mut self.buf[d]);
        let owned = !self.udp && !buf.is_empty();
        if owned {
            buf.extend_from_slice(data);
        }
        let input: &[u8] = if owned { &buf } else { data };
        let mut at = 0;
        while at < input.len() {
            match parser::message(&input[at..]) {
                Ok((m, n)) => {
                    self.message(dir, m, out);
                    at += n;
                }
                Err(Error::Incomplete) if !self.udp => break,
                Err(_) => {
                    self.broken(dir, out);
                    return;
                }
            }
        }
        if !self.udp && at < input.len() {
            self.buf[d] = input[at..].to_vec();
        }
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        // Message boundaries are lost with the bytes (Suricata accepts gaps and
        // resumes at the next message that reads).
        self.buf[dir.index()].clear();
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        if dir == Dir::ToClient {
            for t in &mut self.txs {
                t.eof = true;
            }
        }
    }

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
