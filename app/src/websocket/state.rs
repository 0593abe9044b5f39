//! One WebSocket connection (after an HTTP/1 upgrade): a streaming frame reader per
//! direction, messages reassembled from their fragments and inflated when compressed
//! (permessage-deflate), one transaction per frame, as Suricata 8 has them.

use std::collections::VecDeque;

use flate2::{Decompress, FlushDecompress, Status};

use super::parser::{self, FrameHeader, MAX_HEADER};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Suricata's `max-payload-size` default: payload bytes kept per frame, per
/// reassembled message, and per inflated message.
pub const DEFAULT_MAX_PAYLOAD: usize = 0xffff;
/// Most live transactions per connection (frames not yet inspected and logged); the
/// oldest is dropped beyond it.
pub const MAX_TX: usize = 4096;
/// Bytes inflated per step (the output is bounded by the payload limit).
const INFLATE_CHUNK: usize = 16 * 1024;

/// The parser's settings (`app-layer.protocols.websocket`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WsConfig {
    /// `max-payload-size`.
    pub max_payload: usize,
}

impl Default for WsConfig {
    fn default() -> Self {
        WsConfig {
            max_payload: DEFAULT_MAX_PAYLOAD,
        }
    }
}

/// One frame: a transaction of its direction only.
#[derive(Debug)]
pub struct WsTx {
    pub id: u64,
    pub dir: Dir,
    /// FIN, RSV1-3 (the first byte's upper bits).
    pub flags: u8,
    pub opcode: u8,
    pub mask: Option<u32>,
    /// The unmasked payload, at most `max-payload-size` bytes; the final frame of a
    /// fragmented message carries the whole message, and a compressed message its
    /// inflated bytes.
    pub payload: Vec<u8>,
    /// Anomalies of the frame (raised with it).
    pub events: Vec<&'static str>,
}

impl WsTx {
    pub fn fin(&self) -> bool {
        self.flags & parser::FIN != 0
    }
}

/// The frame being read in one direction.
#[derive(Debug)]
struct Frame {
    header: FrameHeader,
    /// Payload bytes kept (`min(len, max-payload-size)`).
    want: usize,
    payload: Vec<u8>,
}

/// One direction's reader.
#[derive(Debug, Default)]
struct Reader {
    /// The start of a frame header split across calls (fewer than [`MAX_HEADER`]).
    header: Vec<u8>,
    frame: Option<Frame>,
    /// Payload bytes past `max-payload-size` still to skip.
    skip: u64,
    /// The data message being reassembled from its fragments.
    message: Vec<u8>,
    /// A message is open (its first fragment had no FIN).
    open: bool,
    /// The open message is compressed (RSV1 on its first frame).
    compressed: bool,
    /// The direction's inflater, kept from message to message: permessage-deflate
    /// senders refer back to earlier messages unless they negotiated no context
    /// takeover (RFC 7692 7.2.3.2), and Suricata keeps it so.
    inflater: Option<Box<Decompress>>,
}

/// One connection.
#[derive(Debug, Default)]
pub struct WsState {
    cfg: WsConfig,
    next_id: u64,
    txs: VecDeque<WsTx>,
    readers: [Reader; 2],
}

impl WsState {
    pub fn new(cfg: WsConfig) -> WsState {
        WsState {
            cfg,
            ..WsState::default()
        }
    }

    /// The live transactions, oldest first.
    pub fn transactions(&self) -> impl Iterator<Item = &WsTx> {
        self.txs.iter()
    }

    /// A frame whose (kept) payload is complete.
    fn frame_done(&mut self, dir: Dir, f: Frame, out: &mut ParseOutput) {
        let max = self.cfg.max_payload;
        let r = &mut self.readers[dir.index()];
        let h = f.header;
        let mut events = Vec::new();
        if h.len > f.want as u64 {
            r.skip = h.len - f.want as u64;
            events.push("websocket.skip_end_of_payload");
        }
        let mut payload = f.payload;
        // A frame that ends a message (a control frame too) lets stream rules see it,
        // as Suricata's parser asks.
        if h.fin() {
            out.trigger_raw(dir);
        }
        // Control frames (opcodes 8-15) stand alone, between a message's fragments too
        // (RFC 6455 5.4); data frames build the open message.
        let control = h.opcode & 0x08 != 0;
        if !control {
            let first = !r.open;
            if first {
                r.compressed = h.compressed();
            }
            if !h.fin() || r.open {
                let room = max.saturating_sub(r.message.len());
                if payload.len() < room {
                    r.message.extend_from_slice(&payload);
                } else if room > 0 {
                    r.message.extend_from_slice(&payload[..room]);
                    events.push("websocket.reassembly_limit_reached");
                }
                r.open = !h.fin();
            }
            if h.fin() {
                if !first {
                    payload = std::mem::take(&mut r.message);
                }
                r.message = Vec::new();
                r.open = false;
                if std::mem::take(&mut r.compressed)
                    && let Some((data, cut)) = inflate(&mut r.inflater, &payload, max)
                {
                    payload = data;
                    if cut {
                        events.push("websocket.reassembly_limit_reached");
                    }
                }
            }
        }
        for &e in &events {
            out.anomaly(e);
        }
        if self.txs.len() >= MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(WsTx {
            id: self.next_id,
            dir,
            flags: h.flags,
            opcode: h.opcode,
            mask: h.mask,
            payload,
            events,
        });
        self.next_id += 1;
    }
}

/// Inflates a permessage-deflate message (RFC 7692 7.2.2: raw DEFLATE, the final
/// `00 00 ff ff` restored) with the direction's inflater `z` (made on the first
/// compressed message; dropped after an error or a message cut short, so that the
/// next starts afresh), at most `max` bytes: the bytes and whether they were cut;
/// `None` when nothing inflates (the payload is then kept as it came, as Suricata
/// does).
fn inflate(slot: &mut Option<Box<Decompress>>, data: &[u8], max: usize) -> Option<(Vec<u8>, bool)> {
    let z = slot.get_or_insert_with(|| Box::new(Decompress::new(false)));
    let start_in = z.total_in();
    let mut ok = true;
    let input = [data, &[0, 0, 0xff, 0xff]].concat();
    let mut out = Vec::new();
    let mut chunk = vec![0u8; INFLATE_CHUNK];
    let mut cut = false;
    // Bounded: every round consumes input or makes output (at most `max`), or stops.
    loop {
        let (in_before, out_before) = (z.total_in(), z.total_out());
        let rest = usize::try_from(in_before - start_in)
            .ok()
            .and_then(|at| input.get(at..))
            .unwrap_or_default();
        let status = z.decompress(rest, &mut chunk, FlushDecompress::Sync);
        let made = usize::try_from(z.total_out() - out_before).unwrap_or(0);
        let room = max - out.len();
        if made > room {
            out.extend_from_slice(&chunk[..room]);
            cut = true;
            ok = false;
            break;
        }
        out.extend_from_slice(&chunk[..made]);
        match status {
            // A final block: the next message starts a stream of its own.
            Ok(Status::StreamEnd) => {
                ok = false;
                break;
            }
            Err(_) => {
                ok = false;
                break;
            }
            Ok(_) if made == 0 && z.total_in() == in_before => break,
            Ok(_) => {}
        }
    }
    if !ok || u64::try_from(input.len()).is_ok_and(|n| z.total_in() - start_in < n) {
        *slot = None;
    }
    (!out.is_empty()).then_some((out, cut))
}

impl AppState for WsState {
    fn parse(&mut self, dir: Dir, mut data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        let max = self.cfg.max_payload;
        // Bounded: each round consumes bytes, or returns.
        while !data.is_empty() {
            let r = &mut self.readers[d];
            if r.skip > 0 {
                let n = usize::try_from(r.skip)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                r.skip -= n as u64;
                data = &data[n..];
                continue;
            }
            if r.frame.is_none() {
                let had = r.header.len();
                let header = if had == 0 {
                    parser::header(data)
                } else {
                    let n = (MAX_HEADER - had).min(data.len());
                    r.header.extend_from_slice(&data[..n]);
                    parser::header(&r.header)
                };
                let Some(h) = header else {
                    if had == 0 {
                        r.header
                            .extend_from_slice(&data[..data.len().min(MAX_HEADER)]);
                    } else if r.header.len() >= MAX_HEADER {
                        // Cannot happen: a complete header is at most MAX_HEADER bytes.
                        r.header.clear();
                    }
                    return;
                };
                r.header.clear();
                data = data
                    .get(h.header_len.saturating_sub(had)..)
                    .unwrap_or_default();
                let want = usize::try_from(h.len).unwrap_or(usize::MAX).min(max);
                r.frame = Some(Frame {
                    header: h,
                    want,
                    payload: Vec::with_capacity(want.min(INFLATE_CHUNK)),
                });
            }
            let Some(f) = r.frame.as_mut() else { continue };
            let n = (f.want - f.payload.len()).min(data.len());
            let at = f.payload.len();
            f.payload.extend_from_slice(&data[..n]);
            if let Some(m) = f.header.mask {
                parser::unmask(&mut f.payload[at..], m, at as u64);
            }
            data = &data[n..];
            if f.payload.len() == f.want
                && let Some(f) = r.frame.take()
            {
                self.frame_done(dir, f, out);
            }
        }
        // A frame with an empty payload is done as soon as its header is.
        let r = &mut self.readers[d];
        if r.frame.as_ref().is_some_and(|f| f.want == 0)
            && let Some(f) = r.frame.take()
        {
            self.frame_done(dir, f, out);
        }
    }

    /// Suricata's WebSocket takes no gaps (no way to find the next frame): the parser
    /// fails on the flow.
    fn gap(&mut self, _dir: Dir, _len: u64, out: &mut ParseOutput) {
        out.failed = true;
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
