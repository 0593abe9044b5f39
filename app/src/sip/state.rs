//! One SIP flow (UDP datagrams, or a TCP stream of messages framed by their header
//! section and `Content-Length`) and its transactions. As in Suricata, each message is
//! a transaction of its own: a request (to the server) or a response (to the client).

use std::collections::VecDeque;

use super::parser::{self, Error, Message};
use crate::{AppState, Dir, ParseOutput, Transaction, Transport};

/// Most live transactions per flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 256;
/// Most bytes of an incomplete TCP message buffered per direction.
pub const MAX_PENDING: usize = parser::MAX_HEADER_SECTION + parser::MAX_BODY_LEN;
/// Empty lines (keep-alives, RFC 5626 §3.5.1) skipped between TCP messages at most,
/// bytes per call.
pub const MAX_KEEPALIVE: usize = 1024;

/// One message.
#[derive(Debug)]
pub struct SipTx {
    pub id: u64,
    pub dir: Dir,
    pub msg: Message,
    /// TCP: the stream offset of the message's first byte (`None` over UDP).
    pub offset: Option<u64>,
    /// The id of its `pdu` frame (its other frames follow).
    pub frame_id: u64,
}

/// TCP: the bytes of an incomplete message of one direction.
#[derive(Debug, Default)]
struct Pending {
    buf: Vec<u8>,
    /// The message's length once its header section is in (0 before): no parse is
    /// tried before the buffer holds that much.
    want: usize,
    /// The end of the header section is not in `buf[..scan + 3]`: searched from here
    /// on the next segment, so a message dripping in byte by byte is scanned once.
    scan: usize,
}

impl Pending {
    /// Whether the buffered message may be complete now.
    fn ready(&mut self) -> bool {
        if self.want > 0 {
            return self.buf.len() >= self.want;
        }
        if memchr::memmem::find(&self.buf[self.scan..], b"\r\n\r\n").is_some() {
            // The header section is in: read its length, once per message.
            self.want = parser::wanted(&self.buf).unwrap_or(self.buf.len());
            // A length past the bound is for the parser to refuse now.
            return self.buf.len() >= self.want || self.want > MAX_PENDING;
        }
        self.scan = self.buf.len().saturating_sub(3);
        false
    }

    /// A new incomplete message starts the buffer.
    fn restart(&mut self) {
        self.want = 0;
        self.scan = 0;
    }
}

#[derive(Debug)]
pub struct SipState {
    transport: Transport,
    txs: VecDeque<SipTx>,
    next_id: u64,
    /// TCP: an incomplete message per direction.
    pending: [Pending; 2],
    /// TCP: framing was lost in that direction (a gap, or bytes that are not SIP).
    lost: [bool; 2],
    /// TCP: per direction, the stream offset of the first byte not parsed yet.
    offset: [u64; 2],
    /// Per direction, the id of the next frame (Suricata numbers from 1).
    next_frame: [u64; 2],
}

impl SipState {
    pub fn new(transport: Transport) -> SipState {
        SipState {
            transport,
            txs: VecDeque::new(),
            next_id: 0,
            pending: [Pending::default(), Pending::default()],
            lost: [false; 2],
            offset: [0; 2],
            next_frame: [1; 2],
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &SipTx> {
        self.txs.iter()
    }

    /// A parsed message of direction `dir`: requests go to the server, responses to
    /// the client, as Suricata's parser takes them; one the other way is invalid.
    fn push(&mut self, dir: Dir, msg: Message, offset: Option<u64>, out: &mut ParseOutput) {
        if msg.is_request() != (dir == Dir::ToServer) {
            out.anomaly("sip.invalid_data");
            return;
        }
        if msg.too_many_headers || msg.sdp.as_ref().is_some_and(|s| s.truncated) {
            out.anomaly("sip.invalid_data");
        }
        if msg.short_body {
            out.anomaly("sip.incomplete_data");
        }
        if self.txs.len() >= MAX_TX {
            out.anomaly("sip.invalid_data");
            self.txs.pop_front();
        }
        let frame_id = self.next_frame[dir.index()];
        self.next_frame[dir.index()] += if msg.body.is_empty() { 3 } else { 4 };
        self.txs.push_back(SipTx {
            id: self.next_id,
            dir,
            msg,
            offset,
            frame_id,
        });
        self.next_id += 1;
    }

    /// Parses the messages at the start of `data`; returns the bytes used (the rest
    /// is an incomplete message), or `None` when the direction is lost.
    fn messages(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) -> Option<usize> {
        let mut at = 0;
        let mut skipped = 0;
        while at < data.len() {
            if data[at..].starts_with(b"\r\n") && skipped < MAX_KEEPALIVE {
                at += 2;
                skipped += 2;
                continue;
            }
            match parser::parse(&data[at..], true) {
                Ok((m, used)) => {
                    let offset = self.offset[dir.index()] + at as u64;
                    self.push(dir, m, Some(offset), out);
                    at += used;
                }
                Err(Error::Incomplete) => break,
                Err(Error::Invalid) => {
                    out.anomaly("sip.invalid_data");
                    return None;
                }
            }
        }
        self.offset[dir.index()] += at as u64;
        Some(at)
    }

    fn stream(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.lost[d] {
            return;
        }
        let used = if self.pending[d].buf.is_empty() {
            // The common case: whole messages in the segment, no copy.
            self.messages(dir, data, out).map(|n| {
                let p = &mut self.pending[d];
                p.buf.extend_from_slice(&data[n..]);
                p.restart();
            })
        } else {
            self.pending[d].buf.extend_from_slice(data);
            if self.pending[d].ready() {
                let mut buf = std::mem::take(&mut self.pending[d].buf);
                let r = self.messages(dir, &buf, out).map(|n| {
                    buf.drain(..n);
                });
                let p = &mut self.pending[d];
                p.buf = buf;
                p.restart();
                r
            } else {
                Some(())
            }
        };
        if used.is_none() || self.pending[d].buf.len() > MAX_PENDING {
            if used.is_some() {
                out.anomaly("sip.invalid_data");
            } else {
                // A message that is no SIP's: Suricata's parser errors, and the flow
                // goes on without its app layer (measured: a `NOTIFY * HTTP/1.1`
                // request taken for SIP gives no record, and its HTTP response no
                // mismatch event).
                out.failed = true;
            }
            self.lost[d] = true;
            self.pending[d] = Pending::default();
        }
    }
}

impl AppState for SipState {
    /// Id 1 is a TCP flow's stream frame's when a rule uses it.
    fn set_frames(&mut self, used: &[crate::BufferId]) {
        if self.transport == Transport::Tcp {
            self.next_frame = [crate::stream_frame::first_frame_id(crate::AppProto::Sip, used); 2];
        }
    }

    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        match self.transport {
            Transport::Udp => match parser::parse(data, false) {
                Ok((m, _)) => self.push(dir, m, None, out),
                Err(Error::Incomplete) => out.anomaly("sip.incomplete_data"),
                Err(Error::Invalid) => out.anomaly("sip.invalid_data"),
            },
            Transport::Tcp => self.stream(dir, data, out),
        }
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        if self.transport == Transport::Tcp {
            // Message boundaries cannot be found again reliably.
            self.lost[dir.index()] = true;
            self.pending[dir.index()] = Pending::default();
        }
    }

    fn eof(&mut self, dir: Dir, out: &mut ParseOutput) {
        let p = &mut self.pending[dir.index()];
        if !p.buf.is_empty() {
            if p.buf.iter().any(|b| !b.is_ascii_whitespace()) {
                out.anomaly("sip.incomplete_data");
            }
            *p = Pending::default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sip::parser::tests::{INVITE, OK};

    #[test]
    fn each_message_is_a_transaction() {
        let mut s = SipState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, INVITE, &mut out);
        s.parse(Dir::ToClient, OK, &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        assert_eq!(s.tx_count(), 2);
        assert!(s.txs[0].msg.is_request());
        assert_eq!(s.txs[1].id, 1);
        s.free_below(2);
        assert_eq!(s.tx_count(), 0);
        assert_eq!(s.txs.capacity(), 0);
    }

    #[test]
    fn tcp_split_and_joined_messages() {
        let mut stream = INVITE.to_vec();
        stream.extend_from_slice(b"\r\n\r\n");
        stream.extend_from_slice(INVITE);
        for step in [1, 7, 64, stream.len()] {
            let mut s = SipState::new(Transport::Tcp);
            let mut out = ParseOutput::default();
            for c in stream.chunks(step) {
                s.parse(Dir::ToServer, c, &mut out);
            }
            s.eof(Dir::ToServer, &mut out);
            assert!(out.anomalies.is_empty(), "{step}: {:?}", out.anomalies);
            assert_eq!(s.tx_count(), 2, "{step}");
            assert!(s.pending[0].buf.is_empty());
        }
    }

    #[test]
    fn bad_input_raises_anomalies() {
        let mut s = SipState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(
            Dir::ToServer,
            b"INVITE sip:x SIP/2.0\r\nbad\r\n\r\n",
            &mut out,
        );
        s.parse(
            Dir::ToServer,
            b"INVITE sip:x SIP/2.0\r\nVia: x\r\n",
            &mut out,
        );
        // A response sent to the server is not taken.
        s.parse(Dir::ToServer, OK, &mut out);
        assert_eq!(
            out.anomalies,
            vec![
                "sip.invalid_data",
                "sip.incomplete_data",
                "sip.invalid_data"
            ]
        );
        assert_eq!(s.tx_count(), 0);

        let mut t = SipState::new(Transport::Tcp);
        let mut out = ParseOutput::default();
        t.parse(Dir::ToServer, b"GARBAGE\r\n\r\n", &mut out);
        t.parse(Dir::ToServer, INVITE, &mut out);
        assert_eq!(out.anomalies, vec!["sip.invalid_data"]);
        assert_eq!(t.tx_count(), 0, "the direction is lost");

        // A message that never ends is bounded.
        let mut u = SipState::new(Transport::Tcp);
        let mut out = ParseOutput::default();
        u.parse(Dir::ToClient, b"SIP/2.0 200 OK\r\n", &mut out);
        for _ in 0..(MAX_PENDING / 1000 + 2) {
            u.parse(Dir::ToClient, &[b'a'; 1000], &mut out);
        }
        assert_eq!(out.anomalies, vec!["sip.invalid_data"]);
        assert!(u.pending[1].buf.is_empty());
    }

    /// A message dripping in byte by byte is parsed once, when it is complete: the
    /// buffer's hints say when to try.
    #[test]
    fn a_dripping_message_waits_for_its_length() {
        let mut s = SipState::new(Transport::Tcp);
        let mut out = ParseOutput::default();
        let head = INVITE.len() - 137;
        for (i, b) in INVITE.iter().enumerate() {
            s.parse(Dir::ToServer, std::slice::from_ref(b), &mut out);
            if i + 1 < INVITE.len() {
                assert_eq!(s.tx_count(), 0);
                let p = &s.pending[0];
                if i + 1 >= head {
                    assert_eq!(p.want, INVITE.len(), "{i}");
                } else {
                    assert_eq!(p.want, 0);
                    assert!(p.scan + 3 >= p.buf.len(), "{i}");
                }
            }
        }
        assert_eq!(s.tx_count(), 1);
        assert!(s.pending[0].buf.is_empty() && s.pending[0].want == 0);
        assert!(out.anomalies.is_empty());
    }

    #[test]
    fn transactions_are_bounded() {
        let mut s = SipState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        for _ in 0..MAX_TX + 3 {
            s.parse(Dir::ToClient, OK, &mut out);
        }
        assert_eq!(s.tx_count(), MAX_TX);
        assert_eq!(out.anomalies.len(), 3);
        assert_eq!(s.txs[0].id, 3);
    }
}
