//! TCP session tracking and stream reassembly.
//!
//! Each side of a session has a sequence base (its ISN + 1), and bytes are addressed by
//! their stream offset from that base (a `u64`, so sequence wrap-around is handled once
//! here). In-order bytes go to a contiguous buffer; segments that arrive early wait in an
//! out-of-order map (bounded) until the hole before them is filled. Consumers (the
//! app-layer parser and raw-stream detection) each keep their own progress offset; bytes
//! both have passed are dropped from the buffer.
//!
//! Overlap policy: **first wins** — bytes already received are kept, a retransmission or
//! overlapping segment only contributes the bytes that are new. (Suricata's default policy
//! is per target OS; "first" is the policy of BSD-like stacks for most overlaps and the
//! simplest to reason about; it is documented in the README.)
//!
//! TCP Fast Open (RFC 7413): data on a SYN or SYN/ACK is stream data from the sender's
//! ISN + 1, as Suricata reassembles it; the segments that resend it later are overlaps.
//!
//! Sessions whose handshake was not seen are not tracked unless `stream.midstream` is on;
//! their packets are inspected one by one instead.
//!
//! Gaps: when the receiver acknowledges bytes that were never captured, the stream skips
//! them. The bytes before the gap that raw-stream inspection has not seen yet are kept
//! as a [`Piece`] (at most [`MAX_GAP_PIECES`]) for its next inspection, so that a gap
//! loses only what is missing; alerts log them with Suricata's `[N bytes missing]`
//! markers ([`Side::write_payload`]).
//!
//! Depth: at most `stream.reassembly.depth` bytes per side are reassembled (0 = no limit);
//! later data is not inspected as stream, as in Suricata.

use std::collections::BTreeMap;

/// Out-of-order bytes held per side.
pub const MAX_OOO_BYTES: usize = 1 << 20;
/// Out-of-order segments held per side.
pub const MAX_OOO_SEGMENTS: usize = 1024;
/// How far past the sender's next expected byte a RST's sequence number may be and
/// still close the session (bytes).
pub const MAX_RST_AHEAD: i64 = 1 << 20;
/// Pieces of stream cut off by gaps kept per side for raw inspection; beyond, the
/// oldest is dropped uninspected (and counted in [`Side::pieces_dropped`]).
pub const MAX_GAP_PIECES: usize = 8;

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const ACK: u8 = 0x10;

/// Session state (a simplification of RFC 9293's, as an IDS sees both sides).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    SynSent,
    SynRecv,
    Established,
    /// One side has sent FIN.
    Closing,
    /// Both FINs, or a RST.
    Closed,
}

impl State {
    /// EVE `tcp.state` spelling.
    pub fn name(self) -> &'static str {
        match self {
            State::SynSent => "syn_sent",
            State::SynRecv => "syn_recv",
            State::Established => "established",
            State::Closing => "fin_wait1",
            State::Closed => "closed",
        }
    }
}

/// The bytes of a side that raw-stream inspection had not seen when an acknowledged gap
/// was skipped, and the gap's length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    pub bytes: Vec<u8>,
    /// Bytes missing after `bytes`.
    pub gap: u64,
}

/// One direction of a session.
#[derive(Debug, Default)]
pub struct Side {
    /// Sequence number of stream offset 0.
    base: u32,
    base_known: bool,
    /// Next in-order stream offset expected.
    next: u64,
    /// In-order bytes from `data_start` to `next`; those before `live_start` are
    /// consumed and dropped lazily (see [`Side::trim`]).
    data: Vec<u8>,
    data_start: u64,
    /// Start of the bytes still held for a consumer.
    live_start: u64,
    /// Offset consumed by the app-layer parser.
    pub app_done: u64,
    /// Offset inspected by raw-stream detection.
    pub raw_done: u64,
    /// Highest offset the other side acknowledged.
    pub acked: u64,
    /// Offset from which the side's stream frame may still inspect bytes, when one is
    /// kept (see [`crate::app::stream_frame`]): bytes past it are held for it.
    pub frame_done: Option<u64>,
    /// The first gap ends the side's stream frame: the bytes it had not inspected
    /// before it (at most [`MAX_FRAME_PIECE`]), and where they start.
    pub frame_piece: Option<Box<(u64, Vec<u8>)>>,
    ooo: BTreeMap<u64, Vec<u8>>,
    ooo_bytes: usize,
    pub fin: bool,
    /// The other side acknowledged this side's FIN.
    pub fin_acked: bool,
    pub depth_reached: bool,
    /// Where the parser asked for raw inspection of this side's bytes (see
    /// [`Side::trigger_raw`]).
    triggers: Triggers,
    /// Bytes skipped because they were never captured.
    pub gap_bytes: u64,
    /// A gap the app-layer has not been told about yet: its length.
    pub pending_gap: u64,
    /// Segments that brought nothing new (retransmissions, overlaps).
    pub retransmissions: u64,
    /// Out-of-order segments dropped for lack of room.
    pub ooo_dropped: u64,
    /// Pieces cut off by gaps, oldest first, waiting for raw inspection (see [`Piece`]).
    pieces: Vec<Piece>,
    /// Raw inspection has seen `pieces`: they go at the next [`Side::trim`].
    pieces_inspected: bool,
    /// Pieces dropped uninspected because [`MAX_GAP_PIECES`] were held.
    pub pieces_dropped: u64,
    /// The last gap skipped: (stream offset where it ended, its length).
    last_gap: Option<(u64, u64)>,
    /// Most disjoint regions of data held at once (EVE `ts_max_regions`): the in-order
    /// data and the out-of-order islands more than [`REGION_GAP`] beyond the region
    /// before them; 0 until out-of-order data came (then at least 1).
    pub max_regions: u16,
}

/// Bytes a side keeps before its first gap for its stream frame's last inspection.
pub const MAX_FRAME_PIECE: usize = 64 * 1024;

/// Out-of-order data this far past the end of the data before it starts a region of its
/// own (Suricata's `stream.reassembly.region-gap` default, 256 KiB).
pub const REGION_GAP: u64 = 256 * 1024;

/// Suricata's marker of a gap in a logged stream payload: `[N bytes missing]`.
fn gap_marker(n: u64) -> ([u8; 48], usize) {
    use std::io::Write;
    let mut buf = [0u8; 48];
    let mut w = &mut buf[..];
    // At most 20 digits: it always fits.
    let _ = write!(w, "[{n} bytes missing]");
    let len = 48 - w.len();
    (buf, len)
}

impl Side {
    fn offset_of(&self, seq: u32) -> i64 {
        // Signed distance from the next expected sequence number.
        let next_seq = self.base.wrapping_add(self.next as u32);
        self.next as i64 + i64::from(seq.wrapping_sub(next_seq) as i32)
    }

    fn set_base(&mut self, seq: u32) {
        self.base = seq;
        self.base_known = true;
    }

    /// Bytes of stream seen in order (for `stream_size`).
    pub fn stream_bytes(&self) -> u64 {
        self.next
    }

    /// Next in-order offset.
    pub fn next(&self) -> u64 {
        self.next
    }

    /// Sequence number of the next in-order byte (0 while the base is unknown).
    pub fn next_seq(&self) -> u32 {
        if self.base_known {
            self.base.wrapping_add(self.next as u32)
        } else {
            0
        }
    }

    /// The pieces cut off by gaps that raw inspection has not seen yet (empty once it has).
    pub fn pieces(&self) -> &[Piece] {
        if self.pieces_inspected {
            &[]
        } else {
            &self.pieces
        }
    }

    /// Raw inspection has seen the pieces (they stay for alert payloads until the next
    /// [`Side::trim`]).
    pub fn pieces_inspected(&mut self) {
        self.pieces_inspected = true;
    }

    /// Appends the stream of this side as an alert's payload shows it (Suricata's
    /// `payload` of a stream match): the pieces cut off by gaps, each followed by
    /// `[N bytes missing]`, then the bytes held from the oldest one still kept to the
    /// newest, preceded by the marker of the gap they follow; at most `max` bytes.
    pub fn write_payload(&self, out: &mut Vec<u8>, max: usize) {
        let end = out.len().saturating_add(max);
        let put = |out: &mut Vec<u8>, bytes: &[u8]| {
            let k = bytes.len().min(end.saturating_sub(out.len()));
            out.extend_from_slice(&bytes[..k]);
        };
        let marker = |out: &mut Vec<u8>, n: u64| {
            let (m, len) = gap_marker(n);
            put(out, &m[..len]);
        };
        for p in &self.pieces {
            put(out, &p.bytes);
            marker(out, p.gap);
        }
        if self.pieces.is_empty()
            && let Some((at, n)) = self.last_gap
            && at == self.live_start
            && at < self.next
        {
            marker(out, n);
        }
        put(out, self.bytes(self.live_start, self.next));
    }

    /// In-order bytes from `from` (clamped to what is held) up to `to`.
    pub fn bytes(&self, from: u64, to: u64) -> &[u8] {
        let from = from.max(self.live_start);
        let to = to.min(self.next);
        if from >= to {
            return &[];
        }
        let a = (from - self.data_start) as usize;
        let b = (to - self.data_start) as usize;
        &self.data[a..b]
    }

    fn append(&mut self, bytes: &[u8], depth: u64) {
        let room = if depth == 0 {
            bytes.len()
        } else {
            depth.saturating_sub(self.next).min(bytes.len() as u64) as usize
        };
        if room < bytes.len() {
            self.depth_reached = true;
        }
        self.data.extend_from_slice(&bytes[..room]);
        self.next += room as u64;
    }

    /// Adds a segment's bytes at stream offset `off`.
    fn add(&mut self, off: i64, payload: &[u8], depth: u64) {
        if payload.is_empty() || self.depth_reached {
            return;
        }
        let end = off + payload.len() as i64;
        let next = self.next as i64;
        if end <= next {
            self.retransmissions += 1;
            return;
        }
        if off <= next {
            let skip = (next - off) as usize;
            if skip > 0 {
                self.retransmissions += 1;
            }
            self.append(&payload[skip..], depth);
            self.drain_ooo(depth);
            return;
        }
        // Early: keep it until the hole is filled (first wins on overlaps).
        let off = off as u64;
        if self.ooo.contains_key(&off) {
            self.retransmissions += 1;
            return;
        }
        if self.ooo.len() >= MAX_OOO_SEGMENTS || self.ooo_bytes + payload.len() > MAX_OOO_BYTES {
            self.ooo_dropped += 1;
            return;
        }
        self.ooo_bytes += payload.len();
        self.ooo.insert(off, payload.to_vec());
        self.max_regions = self.max_regions.max(1);
        // Only data that far ahead can start a region (nearer data joins one).
        if off > self.next.saturating_add(REGION_GAP) {
            self.count_regions();
        }
    }

    /// Updates [`Side::max_regions`] after out-of-order data far ahead was added (a walk
    /// over at most [`MAX_OOO_SEGMENTS`] held segments, rare: held data is at most
    /// [`MAX_OOO_BYTES`]).
    fn count_regions(&mut self) {
        let mut regions = 1u16;
        let mut end = self.next;
        for (&off, seg) in &self.ooo {
            if off > end.saturating_add(REGION_GAP) {
                regions = regions.saturating_add(1);
            }
            end = end.max(off + seg.len() as u64);
        }
        self.max_regions = self.max_regions.max(regions);
    }

    fn drain_ooo(&mut self, depth: u64) {
        while let Some((&off, _)) = self.ooo.first_key_value() {
            if off > self.next {
                break;
            }
            let Some((off, seg)) = self.ooo.pop_first() else {
                break;
            };
            self.ooo_bytes -= seg.len();
            let skip = (self.next - off) as usize;
            if skip < seg.len() {
                self.append(&seg[skip..], depth);
            }
            if self.depth_reached {
                self.ooo.clear();
                self.ooo_bytes = 0;
                break;
            }
        }
    }

    /// The other side acknowledged up to `ack`: if that is beyond what arrived, the bytes
    /// in between were lost (never captured): skip them.
    fn acknowledge(&mut self, ack: u32, depth: u64) {
        if !self.base_known {
            return;
        }
        let off = self.offset_of(ack);
        if off <= 0 {
            return;
        }
        let off = off as u64;
        // An ACK may cover the FIN (one sequence number past the data).
        let data_end = if self.fin { off.saturating_sub(1) } else { off };
        self.fin_acked |= self.fin && off > self.next;
        self.acked = self.acked.max(data_end);
        if data_end > self.next && !self.depth_reached {
            // Jump to the first held segment, or to the acknowledged offset.
            let to = self
                .ooo
                .first_key_value()
                .map(|(&o, _)| o.min(data_end))
                .unwrap_or(data_end);
            if to > self.next {
                let gap = to - self.next;
                self.gap_bytes += gap;
                self.pending_gap += gap;
                self.keep_uninspected(gap);
                self.keep_for_frame();
                self.last_gap = Some((to, gap));
                // Consumers skip the missing bytes.
                self.data.clear();
                self.data_start = to;
                self.live_start = to;
                self.next = to;
                self.app_done = self.app_done.max(to);
                self.raw_done = self.raw_done.max(to);
                self.drain_ooo(depth);
            }
        }
    }

    /// Before the first gap is skipped: the held bytes the stream frame has not
    /// inspected are kept for its last inspection.
    fn keep_for_frame(&mut self) {
        let Some(done) = self.frame_done else {
            return;
        };
        if self.frame_piece.is_some() {
            return;
        }
        let from = done.max(self.live_start);
        let a = from.saturating_sub(self.data_start) as usize;
        let bytes = self.data.get(a..).unwrap_or_default();
        let bytes = bytes[..bytes.len().min(MAX_FRAME_PIECE)].to_vec();
        self.frame_piece = Some(Box::new((from, bytes)));
    }

    /// Before a gap is skipped: the held bytes raw inspection has not seen become a
    /// piece (the oldest piece goes when [`MAX_GAP_PIECES`] are held).
    fn keep_uninspected(&mut self, gap: u64) {
        if self.pieces_inspected {
            self.pieces.clear();
            self.pieces_inspected = false;
        }
        let from = self.raw_done.max(self.live_start);
        if from >= self.next {
            return;
        }
        let a = ((from - self.data_start) as usize).min(self.data.len());
        if self.pieces.len() == MAX_GAP_PIECES {
            self.pieces.remove(0);
            self.pieces_dropped += 1;
        }
        self.pieces.push(Piece {
            bytes: self.data[a..].to_vec(),
            gap,
        });
    }

    /// Drops held bytes that every consumer is done with (and the pieces raw
    /// inspection has seen).
    pub fn trim(&mut self) {
        if self.pieces_inspected {
            self.pieces.clear();
            self.pieces_inspected = false;
        }
        let done = self
            .app_done
            .min(self.raw_done)
            .min(self.frame_done.unwrap_or(u64::MAX));
        if done > self.live_start {
            let n = ((done - self.data_start) as usize).min(self.data.len());
            self.live_start = self.data_start + n as u64;
            // The consumed prefix is dropped once it is at least as long as what is
            // still held: each byte is moved at most once on average, where dropping
            // it at every trim moved the held bytes on every segment.
            if n >= self.data.len() - n {
                self.data.drain(..n);
                self.data_start = self.live_start;
            }
        }
    }

    /// Bytes held (memory accounting; consumed bytes not yet dropped included).
    pub fn held(&self) -> usize {
        self.data.len() + self.ooo_bytes + self.pieces.iter().map(|p| p.bytes.len()).sum::<usize>()
    }
}

/// Suricata's stream events that Meerkat's tracker raises, by bit of
/// [`Update::events`] (`stream-event:<name>`, EVE `anomaly` of type `stream` named
/// `stream.<name>`). Suricata's others load in rules and never match.
pub const STREAM_EVENTS: &[&str] = &["reassembly_depth_reached"];

/// [`STREAM_EVENTS`]: the segment went beyond `stream.reassembly.depth`, the first
/// time for its side.
pub const EV_DEPTH_REACHED: u8 = 1 << 0;

/// The bit of the stream event named `name` (without `stream.`), if Meerkat raises it.
pub fn stream_event_bit(name: &str) -> Option<u8> {
    STREAM_EVENTS
        .iter()
        .position(|&n| n == name)
        .map(|i| 1 << i)
}

/// What a packet did to its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Update {
    /// The session is tracked (its segments go into the stream).
    pub tracked: bool,
    /// The segment's payload was added to the stream (so the packet payload is not
    /// inspected on its own).
    pub added: bool,
    /// The session just became established.
    pub established_now: bool,
    /// Stream events the packet raised (bits of [`STREAM_EVENTS`]).
    pub events: u8,
}

/// A tracked TCP session. Side 0 is the client's (to_server), side 1 the server's.
#[derive(Debug)]
pub struct Session {
    pub state: State,
    pub sides: [Side; 2],
    pub midstream: bool,
    /// Union of flags seen.
    pub flags: u8,
    /// Resets ignored because their sequence number was out of the window.
    pub invalid_rsts: u64,
    /// Whether the flow's payload is still inspected (see [`PayloadInspection`]).
    pub payload: PayloadInspection,
}

/// Payload inspection of a TCP flow, which its parser may end (TLS once application
/// data flows: `ParseOutput::no_payload_inspection`).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum PayloadInspection {
    #[default]
    On,
    /// The parser asked on data of side `.0`. Suricata's parser reads it when the other
    /// side acknowledges it: that side's next packet inspects its raw stream once more,
    /// short of a chunk or not, then the flow's payload is inspected no more.
    Ending(usize),
    /// The parser asked for both raw streams to be inspected once more, together,
    /// after the packet being processed (Suricata's detect/log flush: SSH once both
    /// sides sent NEWKEYS); then `Off`.
    Flush,
    /// Neither raw stream nor packet payload is inspected.
    Off,
}

/// The stream offsets at which a side's parser asked for raw inspection, oldest first
/// (its `app_done` then). Suricata's parser reads acknowledged data only and raises a
/// flag the side's next packet takes; Meerkat's reads data as it comes, so each request
/// waits here until the bytes it covers are acknowledged.
#[derive(Debug, Default, Clone, Copy)]
struct Triggers {
    at: [u64; MAX_TRIGGERS],
    len: u8,
}

/// Raw-inspection requests a side keeps at once; past them the newest absorbs the
/// next (inspection then waits for the later offset).
const MAX_TRIGGERS: usize = 8;

impl Side {
    /// The parser asked for raw inspection of the bytes up to `at`.
    pub fn trigger_raw(&mut self, at: u64) {
        let t = &mut self.triggers;
        let n = usize::from(t.len);
        if n > 0 && t.at[n - 1] >= at {
            return;
        }
        if n == MAX_TRIGGERS {
            t.at[n - 1] = at;
        } else {
            t.at[n] = at;
            t.len += 1;
        }
    }

    /// Whether a request is due once the bytes up to `limit` are inspected; takes the
    /// requests that inspection covers (and those raw inspection has passed already).
    pub fn take_triggers(&mut self, limit: u64) -> bool {
        let t = &mut self.triggers;
        let n = usize::from(t.len);
        let passed = t.at[..n]
            .iter()
            .take_while(|&&a| a <= self.raw_done)
            .count();
        let due = t.at[..n].iter().take_while(|&&a| a <= limit).count();
        let drop = passed.max(due);
        t.at.copy_within(drop..n, 0);
        t.len = (n - drop) as u8;
        due > passed
    }
}

impl Session {
    /// Whether the session is over as Suricata's state machine has it (its
    /// `TCP_CLOSED`): reset, or both FINs sent and acknowledged (where [`State::Closed`]
    /// comes with the second FIN).
    pub fn fully_closed(&self) -> bool {
        self.state == State::Closed
            && (self.flags & RST != 0 || self.sides.iter().all(|s| s.fin && s.fin_acked))
    }

    /// Starts tracking from the first packet of a flow, if it can: a SYN, a SYN/ACK (the
    /// flow has been oriented so that it comes from the server), or any packet when
    /// `midstream` pickup is on.
    pub fn start(
        to_server: bool,
        flags: u8,
        seq: u32,
        ack: u32,
        payload_len: usize,
        midstream: bool,
    ) -> Option<Session> {
        let mut s = Session {
            state: State::SynSent,
            sides: [Side::default(), Side::default()],
            midstream: false,
            flags: 0,
            invalid_rsts: 0,
            payload: PayloadInspection::On,
        };
        let d = usize::from(!to_server);
        if flags & SYN != 0 && flags & ACK == 0 && to_server {
            s.sides[0].set_base(seq.wrapping_add(1));
            return Some(s);
        }
        if flags & (SYN | ACK) == SYN | ACK && !to_server {
            s.sides[1].set_base(seq.wrapping_add(1));
            s.sides[0].set_base(ack);
            s.state = State::SynRecv;
            return Some(s);
        }
        if !midstream || flags & (SYN | RST) != 0 {
            return None;
        }
        // Midstream pickup: this packet's data starts the stream of its side.
        let _ = payload_len;
        s.sides[d].set_base(seq);
        if flags & ACK != 0 {
            s.sides[1 - d].set_base(ack);
        }
        s.state = State::Established;
        s.midstream = true;
        Some(s)
    }

    pub fn established(&self) -> bool {
        matches!(self.state, State::Established | State::Closing)
            || (self.state == State::Closed && self.sides.iter().all(|s| s.base_known))
    }

    /// Processes one packet of the session.
    pub fn packet(
        &mut self,
        to_server: bool,
        flags: u8,
        seq: u32,
        ack: u32,
        payload: &[u8],
        depth: u64,
    ) -> Update {
        let d = usize::from(!to_server);
        let o = 1 - d;
        self.flags |= flags;
        let mut up = Update {
            tracked: true,
            ..Default::default()
        };
        let was_established = self.established();
        if flags & RST != 0 {
            if !self.rst_in_window(d, seq) {
                // A reset that does not fit the sender's sequence space (a stale or
                // forged one) is ignored, as Suricata's RST validation does: the
                // session goes on (e.g. the client retries its SYN).
                self.invalid_rsts += 1;
                return up;
            }
            self.state = State::Closed;
        }
        if self.state == State::SynSent && d == 1 && flags & (SYN | RST) == 0 {
            // The responder's packets before its SYN/ACK (e.g. the ACK of a stale
            // connection) are not part of this handshake: ignored, as Suricata's
            // SYN_SENT state does (acknowledging them would jump over data).
            return up;
        }
        match self.state {
            State::SynSent if d == 1 && flags & (SYN | ACK) == SYN | ACK => {
                self.sides[1].set_base(seq.wrapping_add(1));
                self.state = State::SynRecv;
            }
            State::SynRecv => {
                if d == 0 && flags & ACK != 0 && flags & SYN == 0 {
                    self.state = State::Established;
                } else if d == 1 && flags & SYN != 0 {
                    // SYN/ACK retransmitted.
                    self.sides[1].set_base(seq.wrapping_add(1));
                }
            }
            _ => {}
        }
        // TCP Fast Open (RFC 7413): a SYN (or SYN/ACK) may carry data, which starts the
        // sender's stream at its ISN + 1, as Suricata reassembles it. Only during the
        // handshake: a SYN in an established session is not part of its stream.
        let syn_data = flags & SYN != 0
            && !payload.is_empty()
            && matches!(self.state, State::SynSent | State::SynRecv);
        if (flags & SYN == 0 || syn_data) && self.sides[d].base_known {
            let data_seq = if flags & SYN != 0 {
                seq.wrapping_add(1)
            } else {
                seq
            };
            // A reset's payload (a last message some stacks send) is not part of the
            // stream, as in Suricata: it is inspected as the packet's own.
            if flags & RST == 0 {
                let off = self.sides[d].offset_of(data_seq);
                let was_at_depth = self.sides[d].depth_reached;
                self.sides[d].add(off, payload, depth);
                if !was_at_depth && self.sides[d].depth_reached {
                    up.events |= EV_DEPTH_REACHED;
                }
                // The payload belongs to the stream now (even a retransmission): it
                // is inspected as stream, not as a packet. Not once the side reached
                // its depth: as in Suricata, a later segment stays out of the stream
                // and is inspected as a packet of its own.
                up.added = !payload.is_empty() && !was_at_depth;
            }
            if flags & FIN != 0 && !self.sides[d].fin {
                self.sides[d].fin = true;
                self.state = if self.sides[o].fin {
                    State::Closed
                } else if self.state == State::Established {
                    State::Closing
                } else {
                    self.state
                };
            }
        }
        if flags & ACK != 0 {
            self.sides[o].acknowledge(ack, depth);
        }
        up.established_now = !was_established && self.established();
        up
    }

    /// Whether a RST from side `d` with sequence number `seq` belongs to the session:
    /// at the sender's next expected byte or a little ahead of it (segments may have
    /// been missed), or anything while the sender's sequence base is unknown.
    fn rst_in_window(&self, d: usize, seq: u32) -> bool {
        let side = &self.sides[d];
        if !side.base_known {
            return true;
        }
        let ahead = side.offset_of(seq) - side.next as i64;
        (-1..=MAX_RST_AHEAD).contains(&ahead)
    }

    /// Bytes held by both sides.
    pub fn held(&self) -> usize {
        self.sides.iter().map(Side::held).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn handshake() -> Session {
        let mut s = Session::start(true, SYN, 1000, 0, 0, false).unwrap();
        s.packet(false, SYN | ACK, 5000, 1001, b"", 0);
        s.packet(true, ACK, 1001, 5001, b"", 0);
        assert_eq!(s.state, State::Established);
        s
    }

    #[test]
    fn a_reset_carries_data_outside_the_stream() {
        let mut s = handshake();
        s.packet(false, ACK, 5001, 1001, b"hello", 0);
        let up = s.packet(true, RST | ACK, 1001, 5006, b"Access Denied", 0);
        assert!(!up.added, "inspected as the packet's own payload");
        assert_eq!(s.state, State::Closed);
        assert_eq!(s.sides[0].next(), 0);
        let up = s.packet(false, RST, 5006, 0, b"bye", 0);
        assert!(!up.added);
        assert_eq!(s.sides[1].bytes(0, 100), b"hello");
    }

    #[test]
    fn fast_open_syn_and_syn_ack_data_start_the_streams() {
        // TCP Fast Open: the SYN carries the first bytes (at ISN + 1), the SYN/ACK
        // acknowledges them and carries the server's first bytes.
        let mut s = Session::start(true, SYN, 1000, 0, 4, false).unwrap();
        let up = s.packet(true, SYN, 1000, 0, b"GET ", 0);
        assert!(up.added);
        assert_eq!(s.sides[0].bytes(0, 100), b"GET ");
        let up = s.packet(false, SYN | ACK, 5000, 1005, b"HTTP", 0);
        assert!(up.added);
        assert_eq!(s.sides[0].acked, 4);
        assert_eq!(s.sides[1].bytes(0, 100), b"HTTP");
        // The client resends the SYN's bytes with more (first wins on the overlap).
        s.packet(true, ACK, 1001, 5005, b"XXXX/ HTTP/1.1", 0);
        assert_eq!(s.state, State::Established);
        assert_eq!(s.sides[0].bytes(0, 100), b"GET / HTTP/1.1");
        assert_eq!(s.sides[0].retransmissions, 1);
        assert_eq!(s.sides[0].gap_bytes, 0);
        assert_eq!(s.sides[1].acked, 4);
        // A retransmitted SYN brings nothing new.
        let mut s = Session::start(true, SYN, 1000, 0, 3, false).unwrap();
        s.packet(true, SYN, 1000, 0, b"abc", 0);
        s.packet(true, SYN, 1000, 0, b"abc", 0);
        assert_eq!(s.sides[0].bytes(0, 100), b"abc");
        assert_eq!(s.sides[0].retransmissions, 1);
    }

    #[test]
    fn a_syn_with_data_in_an_established_session_is_not_stream() {
        let mut s = handshake();
        let up = s.packet(true, SYN, 1000, 0, b"late", 0);
        assert!(!up.added);
        assert_eq!(s.sides[0].next(), 0);
    }

    #[test]
    fn a_stale_ack_before_the_syn_ack_is_ignored() {
        let mut s = Session::start(true, SYN, 1000, 0, 0, false).unwrap();
        s.packet(false, ACK, 7000, 900_000_000, b"", 0);
        assert_eq!(s.sides[0].acked, 0);
        s.packet(false, SYN | ACK, 5000, 1001, b"", 0);
        s.packet(true, ACK, 1001, 5001, b"", 0);
        s.packet(true, ACK | 0x08, 1001, 5001, b"hello", 0);
        assert_eq!(s.sides[0].gap_bytes, 0);
        assert_eq!(s.sides[0].bytes(0, 100), b"hello");
    }

    #[test]
    fn out_of_window_rst_is_ignored() {
        let mut s = Session::start(true, SYN, 1000, 0, 0, false).unwrap();
        // A reset far from the client's sequence space, then the SYN again.
        s.packet(true, RST, 900_000_000, 0, b"", 0);
        assert_eq!(s.state, State::SynSent);
        assert_eq!(s.invalid_rsts, 1);
        s.packet(true, SYN, 1000, 0, b"", 0);
        s.packet(false, SYN | ACK, 5000, 1001, b"", 0);
        s.packet(true, ACK, 1001, 5001, b"", 0);
        assert_eq!(s.state, State::Established);
        // A reset at the next byte closes it.
        s.packet(true, RST | ACK, 1001, 5001, b"", 0);
        assert_eq!(s.state, State::Closed);
    }

    #[test]
    fn in_order_and_acked() {
        let mut s = handshake();
        let up = s.packet(true, ACK | 0x08, 1001, 5001, b"hello ", 0);
        assert!(up.added);
        s.packet(true, ACK | 0x08, 1007, 5001, b"world", 0);
        assert_eq!(s.sides[0].bytes(0, 100), b"hello world");
        assert_eq!(s.sides[0].acked, 0);
        s.packet(false, ACK, 5001, 1012, b"", 0);
        assert_eq!(s.sides[0].acked, 11);
    }

    #[test]
    fn trimmed_bytes_are_gone_and_dropped_lazily() {
        let mut s = handshake();
        s.packet(true, ACK, 1001, 5001, b"abcdefgh", 0);
        let side = &mut s.sides[0];
        side.app_done = 3;
        side.raw_done = 5;
        side.trim();
        // Consumed by both consumers: not served any more, even if still in memory.
        assert_eq!(side.bytes(0, 100), b"defgh");
        assert_eq!(side.held(), 8, "a short consumed prefix waits");
        side.app_done = 6;
        side.raw_done = 6;
        side.trim();
        assert_eq!(side.bytes(0, 100), b"gh");
        assert_eq!(side.held(), 2, "dropped once it outgrew the rest");
        s.packet(true, ACK, 1009, 5001, b"ij", 0);
        assert_eq!(s.sides[0].bytes(0, 100), b"ghij");
        assert_eq!(s.sides[0].bytes(7, 9), b"hi");
    }

    #[test]
    fn out_of_order_overlap_first_wins() {
        let mut s = handshake();
        s.packet(true, ACK, 1007, 5001, b"WORLD", 0); // early
        s.packet(true, ACK, 1001, 5001, b"hello ", 0);
        assert_eq!(s.sides[0].bytes(0, 100), b"hello WORLD");
        // Overlapping retransmission with different bytes: the first stay.
        s.packet(true, ACK, 1004, 5001, b"XXXXXXXX!", 0);
        assert_eq!(s.sides[0].bytes(0, 100), b"hello WORLD!");
        assert!(s.sides[0].retransmissions >= 1);
    }

    #[test]
    fn gap_is_skipped_when_acked() {
        let mut s = handshake();
        s.packet(true, ACK, 1001, 5001, b"abc", 0);
        // Bytes 3..10 never captured; the server acks up to 13.
        s.packet(true, ACK, 1011, 5001, b"xyz", 0);
        s.packet(false, ACK, 5001, 1014, b"", 0);
        assert_eq!(s.sides[0].gap_bytes, 7);
        assert_eq!(s.sides[0].next(), 13);
        assert_eq!(s.sides[0].bytes(10, 13), b"xyz");
    }

    #[test]
    fn depth_and_wraparound() {
        let mut s = Session::start(true, SYN, u32::MAX - 2, 0, 0, false).unwrap();
        s.packet(false, SYN | ACK, 7, u32::MAX - 1, b"", 0);
        s.packet(true, ACK, u32::MAX - 1, 8, b"", 4);
        s.packet(true, ACK, u32::MAX - 1, 8, b"abcdef", 4);
        assert_eq!(s.sides[0].bytes(0, 10), b"abcd");
        assert!(s.sides[0].depth_reached);
    }

    #[test]
    fn midstream_needs_the_option() {
        assert!(Session::start(true, ACK, 10, 20, 5, false).is_none());
        let s = Session::start(true, ACK, 10, 20, 5, true).unwrap();
        assert!(s.established());
    }

    #[test]
    fn fin_and_rst_close() {
        let mut s = handshake();
        s.packet(true, FIN | ACK, 1001, 5001, b"", 0);
        assert_eq!(s.state, State::Closing);
        s.packet(false, FIN | ACK, 5001, 1002, b"", 0);
        assert_eq!(s.state, State::Closed);
        let mut r = handshake();
        r.packet(false, RST, 5001, 0, b"", 0);
        assert_eq!(r.state, State::Closed);
    }

    fn payload(side: &Side, max: usize) -> String {
        let mut out = Vec::new();
        side.write_payload(&mut out, max);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_gap_keeps_the_uninspected_bytes_before_it() {
        // eve-payload-05's stream: "VERY" in order, "GOOD" never captured, "DATA" early;
        // the server acknowledges all twelve bytes.
        let mut s = handshake();
        s.packet(true, ACK, 1001, 5001, b"VERY", 0);
        s.packet(true, ACK, 1009, 5001, b"DATA", 0);
        s.packet(false, ACK, 5001, 1013, b"", 0);
        let side = &mut s.sides[0];
        assert_eq!(side.gap_bytes, 4);
        assert_eq!(side.bytes(0, 100), b"DATA");
        assert_eq!(
            side.pieces(),
            &[Piece {
                bytes: b"VERY".to_vec(),
                gap: 4
            }]
        );
        assert_eq!(payload(side, 4095), "VERY[4 bytes missing]DATA");
        assert_eq!(payload(side, 10), "VERY[4 byt");
        // Inspected and trimmed: the piece goes, the bytes after the gap stay held until
        // both consumers pass them.
        side.pieces_inspected();
        assert!(side.pieces().is_empty());
        assert_eq!(payload(side, 4095), "VERY[4 bytes missing]DATA");
        side.raw_done = 12;
        side.trim();
        assert_eq!(payload(side, 4095), "[4 bytes missing]DATA");
        side.app_done = 12;
        side.trim();
        assert_eq!(payload(side, 4095), "");
    }

    #[test]
    fn inspected_bytes_are_not_kept_at_a_gap() {
        let mut s = handshake();
        s.packet(true, ACK, 1001, 5001, b"abcd", 0);
        s.sides[0].raw_done = 4;
        s.packet(true, ACK, 1009, 5001, b"efgh", 0);
        s.packet(false, ACK, 5001, 1013, b"", 0);
        assert!(s.sides[0].pieces().is_empty());
        // A gap at the start of what is held is shown before it (eve-payload-06).
        assert_eq!(payload(&s.sides[0], 4095), "[4 bytes missing]efgh");
    }

    #[test]
    fn gap_pieces_are_bounded() {
        let mut s = handshake();
        let mut seq = 1001u32;
        for i in 0..MAX_GAP_PIECES + 2 {
            s.packet(true, ACK, seq, 5001, &[b'a' + i as u8; 2], 0);
            // Two bytes missing, then what the receiver acknowledges.
            seq += 4;
            s.packet(false, ACK, 5001, seq, b"", 0);
        }
        let side = &s.sides[0];
        assert_eq!(side.pieces().len(), MAX_GAP_PIECES);
        assert_eq!(side.pieces_dropped, 2);
        assert_eq!(side.pieces()[0].bytes, b"cc");
        assert_eq!(side.gap_bytes, 2 * (MAX_GAP_PIECES as u64 + 2));
    }
}
