//! One DNS flow (UDP datagrams or a TCP stream of length-prefixed messages) and its
//! transactions: one per message, query or response, as Suricata 8 has them.

use std::collections::VecDeque;

use super::parser::{self, Message};
use crate::{AppState, Dir, ParseOutput, Transaction, Transport};

/// Most live transactions per flow; the oldest unanswered query is dropped beyond it.
pub const MAX_TX: usize = 256;
/// Largest TCP-framed message (the length prefix is 16 bits).
pub const MAX_TCP_MESSAGE: usize = 65_535;

/// One DNS message: a query or a response (Suricata 8 makes each its own transaction).
#[derive(Debug, Default)]
pub struct DnsTx {
    pub id: u64,
    pub request: Option<Message>,
    pub response: Option<Message>,
    /// Per direction, the `pdu` frame of the message that came that way (mDNS: the
    /// first, whichever way it came).
    pub frames: [Option<Box<PduFrame>>; 2],
    /// An mDNS message, and the direction of the flow it came in: a transaction of its
    /// own, whatever its QR bit, complete at once and inspected and logged as
    /// `to_server` (as Suricata's mDNS).
    pub mdns: Option<Dir>,
}

/// A DNS message as its `pdu` frame: its bytes (without a TCP length prefix), where
/// they lie in the direction's stream (`None` over UDP), and its frame id (Suricata
/// numbers each direction's messages from 1).
#[derive(Debug)]
pub struct PduFrame {
    pub bytes: Box<[u8]>,
    pub offset: Option<u64>,
    pub id: u64,
}

impl DnsTx {
    /// The DNS message id of the transaction.
    pub fn dns_id(&self) -> Option<u16> {
        self.request
            .as_ref()
            .or(self.response.as_ref())
            .map(|m| m.header.id)
    }
}

#[derive(Debug)]
pub struct DnsState {
    transport: Transport,
    txs: VecDeque<DnsTx>,
    next_id: u64,
    /// TCP: bytes of an incomplete message per direction.
    pending: [Vec<u8>; 2],
    /// TCP: a gap made the framing unrecoverable in that direction.
    lost: [bool; 2],
    /// TCP: per direction, the stream offset of the first byte not framed yet.
    offset: [u64; 2],
    /// Per direction, the frame id of the next message.
    next_frame: [u64; 2],
    /// A rule inspects DNS frames: their bytes are kept ([`AppState::set_frames`]).
    keep_frames: bool,
    /// mDNS: every message is a transaction of its own ([`DnsTx::mdns`]).
    multicast: bool,
}

impl DnsState {
    pub fn new(transport: Transport) -> DnsState {
        DnsState {
            transport,
            txs: VecDeque::new(),
            next_id: 0,
            pending: [Vec::new(), Vec::new()],
            lost: [false; 2],
            offset: [0; 2],
            next_frame: [1; 2],
            keep_frames: false,
            multicast: false,
        }
    }

    /// The state of an mDNS flow: DNS messages, each a transaction of its own.
    pub fn multicast(transport: Transport) -> DnsState {
        DnsState {
            multicast: true,
            ..DnsState::new(transport)
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &DnsTx> {
        self.txs.iter()
    }

    /// A message that came in direction `dir` (at stream offset `offset` over TCP).
    fn message(&mut self, dir: Dir, data: &[u8], offset: Option<u64>, out: &mut ParseOutput) {
        // mDNS frames are all `toserver`, numbered per flow.
        let d = if self.multicast { 0 } else { dir.index() };
        // Its bytes are copied only for a ruleset that inspects DNS frames.
        let frame = self.keep_frames.then(|| {
            Box::new(PduFrame {
                bytes: data.into(),
                offset,
                id: self.next_frame[d],
            })
        });
        self.next_frame[d] += 1;
        let Some(m) = parser::parse(data) else {
            out.anomaly("dns.malformed_data");
            return;
        };
        events(&m, out);
        // Every message is a transaction of its own, as in Suricata 8 (a response is
        // not joined to its query: `tx_id` 0 and 1 for a lookup). The QR bit says what
        // the message is; the direction is only a hint (Suricata raises nothing for a
        // message the wrong way).
        let mut tx = DnsTx {
            mdns: self.multicast.then_some(dir),
            ..DnsTx::default()
        };
        if m.header.qr() {
            tx.response = Some(m);
        } else {
            tx.request = Some(m);
        }
        tx.frames[d] = frame;
        self.push(tx, out);
    }

    fn push(&mut self, mut tx: DnsTx, _out: &mut ParseOutput) {
        // Past the bound the oldest goes (Suricata has no event for it).
        if self.txs.len() >= MAX_TX {
            self.txs.pop_front();
        }
        tx.id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(tx);
    }
}

/// The anomalies of a parsed message, Suricata's DNS events.
fn events(m: &Message, out: &mut ParseOutput) {
    if m.truncated {
        out.anomaly("dns.malformed_data");
    }
    if m.bad_authorities {
        out.anomaly("dns.invalid_authorities");
    }
    if m.bad_additionals {
        out.anomaly("dns.invalid_additionals");
    }
    if m.name_loop {
        out.anomaly("dns.infinite_loop");
    }
    if m.too_many_labels {
        out.anomaly("dns.too_many_labels");
    }
    if m.name_too_long {
        out.anomaly("dns.name_too_long");
    }
    // Opcodes 0-6 are assigned (QUERY to DSO).
    if m.header.opcode() > 6 {
        out.anomaly("dns.invalid_opcode");
    }
    if m.header.flags & parser::Z_FLAG != 0 {
        out.anomaly("dns.z_flag_set");
    }
}

impl AppState for DnsState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        match self.transport {
            Transport::Udp => self.message(dir, data, None, out),
            Transport::Tcp => {
                let d = dir.index();
                if self.lost[d] {
                    return;
                }
                let mut buf = std::mem::take(&mut self.pending[d]);
                buf.extend_from_slice(data);
                let mut at = 0;
                // Each turn consumes a whole message or stops.
                while let Some(len) = buf
                    .get(at..at + 2)
                    .map(|l| usize::from(u16::from_be_bytes([l[0], l[1]])))
                {
                    let Some(msg) = buf.get(at + 2..at + 2 + len) else {
                        break;
                    };
                    // Each message lets stream rules see it, as Suricata's parser asks.
                    if len > 0 {
                        out.trigger_raw(dir);
                    }
                    // `buf` was taken out of `self`, so no copy is needed here.
                    let offset = self.offset[d] + at as u64 + 2;
                    self.message(dir, msg, Some(offset), out);
                    at += 2 + len;
                }
                self.offset[d] += at as u64;
                buf.drain(..at);
                debug_assert!(buf.len() <= MAX_TCP_MESSAGE + 2);
                self.pending[d] = buf;
            }
        }
    }

    fn set_frames(&mut self, used: &[crate::BufferId]) {
        use super::detect::{FRAME_PDU_TC, FRAME_PDU_TS};
        let mine: &[crate::BufferId] = if self.multicast {
            &[crate::mdns::detect::FRAME_PDU]
        } else {
            &[FRAME_PDU_TS, FRAME_PDU_TC]
        };
        self.keep_frames = used.iter().any(|b| mine.contains(b));
        // Id 1 is a TCP flow's stream frame's when a rule uses it.
        if self.transport == Transport::Tcp && !self.multicast {
            self.next_frame = [crate::stream_frame::first_frame_id(crate::AppProto::Dns, used); 2];
        }
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        if self.transport == Transport::Tcp {
            // The length framing cannot be found again reliably (Suricata has no event
            // for it).
            self.lost[dir.index()] = true;
            self.pending[dir.index()].clear();
        }
    }

    fn eof(&mut self, dir: Dir, out: &mut ParseOutput) {
        if !self.pending[dir.index()].is_empty() {
            out.anomaly("dns.malformed_data");
            self.pending[dir.index()].clear();
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
    use meerkat_synth::sample::{dns_query, dns_response_a};

    #[test]
    fn freeing_every_transaction_gives_back_the_queue() {
        let mut s = DnsState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &dns_query(7, "example.com", 1), &mut out);
        s.parse(
            Dir::ToClient,
            &dns_response_a(7, "example.com", [192, 0, 2, 1]),
            &mut out,
        );
        assert_eq!(s.tx_count(), 2, "the response is a transaction of its own");
        assert!(s.txs.capacity() > 0);
        s.free_below(2);
        assert_eq!(s.tx_count(), 0);
        assert_eq!(
            s.txs.capacity(),
            0,
            "an idle flow keeps no transaction buffer"
        );
        // The next query on the same flow still gets the next id.
        s.parse(Dir::ToServer, &dns_query(8, "example.org", 1), &mut out);
        assert_eq!(s.tx(0).map(|t| t.id()), Some(2));
    }
}
