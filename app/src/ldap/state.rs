//! One LDAP flow and its transactions, paired as Suricata 8 pairs them: each request
//! starts a transaction (complete at once for unbind and abandon); a response joins
//! the transaction whose request has its message id and completes it when it is a
//! final one (a search's done, any other operation's response); an extended response
//! to no request is an unsolicited notice (a transaction of its own); any other
//! response to no request is a transaction of its own with `request_not_found`.

use std::collections::VecDeque;

use super::frames::{self, PduFrame};
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
    /// Per direction, its messages' `pdu` frames (kept when a rule uses them).
    pub frames: [Vec<PduFrame>; 2],
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
    /// A whole message of this direction holds an operation that runs past its end:
    /// Suricata's parser waits for more data for ever, and parses nothing more of the
    /// direction; its bytes are only kept (up to a bound) for the message's frame.
    stuck: [bool; 2],
    next_id: u64,
    pub txs: VecDeque<LdapTx>,
    /// The frames, when a rule uses LDAP's ([`AppState::set_frames`]).
    frames: Option<Box<frames::Frames>>,
}

impl LdapState {
    pub fn new(udp: bool, max_tx: usize, max_responses: usize) -> LdapState {
        LdapState {
            udp,
            max_tx: max_tx.max(1),
            max_responses,
            buf: Default::default(),
            stopped: [false; 2],
            stuck: [false; 2],
            next_id: 0,
            txs: VecDeque::new(),
            frames: None,
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

    fn request(&mut self, m: Message, frame: Option<PduFrame>, out: &mut ParseOutput) {
        let mut tx = self.new_tx();
        tx.complete = matches!(m.op.tag, parser::UNBIND_REQUEST | parser::ABANDON_REQUEST);
        tx.request = Some(m);
        frames::keep(&mut tx, Dir::ToServer, frame);
        self.push(tx, out);
    }

    fn response(&mut self, m: Message, frame: Option<PduFrame>, out: &mut ParseOutput) {
        let max = self.max_responses;
        if let Some(tx) = self
            .txs
            .iter_mut()
            .find(|t| t.request.as_ref().is_some_and(|r| r.id == m.id))
        {
            tx.complete = is_final(m.op.tag);
            frames::keep(tx, Dir::ToClient, frame);
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
        frames::keep(&mut tx, Dir::ToClient, frame);
        self.push(tx, out);
        if !unsolicited {
            out.anomaly("ldap.request_not_found");
        }
    }

    fn message(&mut self, dir: Dir, m: Message, frame: Option<PduFrame>, out: &mut ParseOutput) {
        // The direction a message came from does not decide what it is: a request is
        // a request (as Suricata, which reverses a flow whose first message is a
        // response).
        match dir {
            Dir::ToServer => self.request(m, frame, out),
            Dir::ToClient => self.response(m, frame, out),
        }
    }

    /// The frame of the message `input[at..at + n]` of `dir` (none when no rule
    /// uses LDAP frames). A CLDAP request's frame is its whole datagram, attached to
    /// no transaction.
    fn frame(&mut self, dir: Dir, input: &[u8], at: usize, n: usize) -> Option<PduFrame> {
        let f = self.frames.as_deref_mut()?;
        let msg = input.get(at..at + n)?;
        match (self.udp, dir) {
            (false, _) => f.end(dir, msg),
            (true, Dir::ToServer) if at == 0 => f.datagram(dir, input, false),
            (true, Dir::ToServer) => None,
            (true, Dir::ToClient) => f.datagram(dir, msg, true),
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
    fn set_frames(&mut self, used: &[crate::BufferId]) {
        self.frames = frames::Frames::new(used, self.udp);
    }

    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.stopped[d] {
            return;
        }
        let mut buf = std::mem::take(&mut self.buf[d]);
        // The stream offset of the first byte to parse (TCP, when frames are kept).
        let base = match self.frames.as_deref_mut() {
            Some(f) if !self.udp => f.data(dir, data).saturating_sub(buf.len() as u64),
            _ => 0,
        };
        if self.stuck[d] {
            let room = (parser::MAX_MESSAGE_LEN + 8).saturating_sub(buf.len());
            buf.extend_from_slice(&data[..data.len().min(room)]);
            self.buf[d] = buf;
            return;
        }
        let owned = !self.udp && !buf.is_empty();
        if owned {
            buf.extend_from_slice(data);
        }
        let input: &[u8] = if owned { &buf } else { data };
        let mut at = 0;
        while at < input.len() {
            if !self.udp
                && let Some(f) = self.frames.as_deref_mut()
            {
                f.start(dir, base + at as u64);
            }
            match parser::message(&input[at..]) {
                Ok((m, n)) => {
                    let frame = self.frame(dir, input, at, n);
                    self.message(dir, m, frame, out);
                    // Each message lets stream rules see it, as Suricata's parser asks.
                    out.trigger_raw(dir);
                    at += n;
                }
                Err(Error::Incomplete) if !self.udp => {
                    // The message itself is whole: its operation is cut inside it.
                    self.stuck[d] = crate::snmp::ber::read(&input[at..]).is_ok();
                    break;
                }
                Err(_) => {
                    self.broken(dir, out);
                    return;
                }
            }
        }
        if !self.udp && at < input.len() {
            let keep = (input.len() - at).min(parser::MAX_MESSAGE_LEN + 8);
            self.buf[d] = input[at..at + keep].to_vec();
        }
    }

    fn gap(&mut self, dir: Dir, len: u64, _out: &mut ParseOutput) {
        // Message boundaries are lost with the bytes (Suricata accepts gaps and
        // resumes at the next message that reads).
        self.buf[dir.index()].clear();
        self.stuck[dir.index()] = false;
        if let Some(f) = self.frames.as_deref_mut() {
            f.gap(dir, len);
        }
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        if !self.udp
            && let Some(f) = self.frames.as_deref_mut()
        {
            f.eof(dir, &self.buf[dir.index()]);
        }
        if dir == Dir::ToClient {
            for t in &mut self.txs {
                t.eof = true;
            }
        }
    }

    /// The transactions, then the frames of none that their directions' ends
    /// brought ([`frames::Loose`]).
    fn tx_count(&self) -> usize {
        self.txs.len() + self.frames.as_deref().map_or(0, |f| f.loose.len())
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        match self.txs.get(index) {
            Some(t) => Some(t),
            None => self
                .frames
                .as_deref()?
                .loose
                .get(index - self.txs.len())
                .map(|l| l as &dyn Transaction),
        }
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
        if let Some(f) = self.frames.as_deref_mut() {
            f.loose.retain(|l| l.id() >= id);
        }
    }
}
