//! Telnet's frames, as Suricata 8 makes them: per message of a direction a `pdu` frame
//! and, as the message starts with `IAC` or not, a `ctl` or a `data` frame over the
//! same bytes (`stream`, all of a direction, is every TCP protocol's:
//! [`crate::stream_frame`]). Suricata attaches none of them to a transaction (Telnet
//! has none), so an alert on one names no `tx_id`.
//!
//! A message's frames are made when its first byte is seen, numbered in that order
//! per direction (from 1, or 2 when a rule uses the `stream` frame, which has 1); only
//! the types some rule uses are made and numbered, as Suricata's. Their length is known once the
//! message is whole: only then are they inspected, or, cut short, once the direction
//! ends, a gap comes, or the message grows past [`super::MAX_PENDING`]: then with the
//! bytes it had, `complete` false. (Suricata inspects a frame of unknown length at
//! its direction's end, or, not followed here, before it once 2500 bytes of the
//! direction are waiting in its stream: on a long session a message still open may
//! be inspected there as it is so far.)
//!
//! The engine inspects buffers of transactions and alerts once per rule and
//! transaction: each message's frames are offered as a holder of their own
//! ([`MsgFrames`], no transaction of the protocol). Nothing of this is kept unless a
//! rule uses Telnet's own frames.

use std::collections::VecDeque;

use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId, Dir, FrameMeta, Transaction};

pub const FRAME_PDU_TS: BufferId = BufferId::of(AppProto::Telnet, 100);
pub const FRAME_PDU_TC: BufferId = BufferId::of(AppProto::Telnet, 101);
pub const FRAME_CTL_TS: BufferId = BufferId::of(AppProto::Telnet, 102);
pub const FRAME_CTL_TC: BufferId = BufferId::of(AppProto::Telnet, 103);
pub const FRAME_DATA_TS: BufferId = BufferId::of(AppProto::Telnet, 104);
pub const FRAME_DATA_TC: BufferId = BufferId::of(AppProto::Telnet, 105);

/// The frames of Telnet (`frame:telnet.pdu`, ...).
pub static FRAMES: &[BufferDef] = &[
    frame("pdu", FRAME_PDU_TS, FRAME_PDU_TC),
    frame("ctl", FRAME_CTL_TS, FRAME_CTL_TC),
    frame("data", FRAME_DATA_TS, FRAME_DATA_TC),
];

const fn frame(name: &'static str, ts: BufferId, tc: BufferId) -> BufferDef {
    def(name, &[], None, AppProto::Telnet, Some(ts), Some(tc), false)
}

/// Bytes kept per frame; past them a frame's bytes are cut (its length is not).
pub const MAX_FRAME_BYTES: usize = 64 * 1024;
/// Message holders a flow keeps at once (the engine frees them once inspected; one
/// whose message never ends holds the later ones back); past it the oldest goes.
pub const MAX_LIVE_MESSAGES: usize = 1024;

/// A frame type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Pdu,
    Ctl,
    Data,
}

/// The type and direction of frame buffer `id`.
pub fn kind(id: BufferId) -> Option<(Kind, Dir)> {
    use Dir::{ToClient as TC, ToServer as TS};
    Some(match id {
        FRAME_PDU_TS => (Kind::Pdu, TS),
        FRAME_PDU_TC => (Kind::Pdu, TC),
        FRAME_CTL_TS => (Kind::Ctl, TS),
        FRAME_CTL_TC => (Kind::Ctl, TC),
        FRAME_DATA_TS => (Kind::Data, TS),
        FRAME_DATA_TC => (Kind::Data, TC),
        _ => return None,
    })
}

/// The frames of one message: its `pdu` frame and its `ctl` or `data` frame (those
/// some rule uses), with their ids.
#[derive(Debug)]
pub struct MsgFrames {
    /// Its place among the flow's holders (no EVE transaction id).
    id: u64,
    dir: Dir,
    /// Where the message starts in its direction's stream.
    offset: u64,
    pdu: Option<u64>,
    /// The `ctl` (true) or `data` frame, and its id.
    specific: Option<(bool, u64)>,
    /// Its bytes (at most [`MAX_FRAME_BYTES`]) once it is whole or cut short.
    bytes: Vec<u8>,
    /// Its length in the stream, once whole or cut short.
    len: Option<u64>,
    /// Whole (its length known), not cut short.
    whole: bool,
}

impl MsgFrames {
    fn done(&self) -> bool {
        self.len.is_some()
    }

    fn frame_id(&self, k: Kind) -> Option<u64> {
        match (k, self.specific) {
            (Kind::Pdu, _) => self.pdu,
            (Kind::Ctl, Some((true, id))) | (Kind::Data, Some((false, id))) => Some(id),
            _ => None,
        }
    }

    /// Ends the message's frames with `bytes` (all of it when `whole`).
    fn end(&mut self, bytes: &[u8], len: u64, whole: bool) {
        self.bytes = bytes[..bytes.len().min(MAX_FRAME_BYTES)].to_vec();
        self.len = Some(len);
        self.whole = whole;
    }
}

impl Transaction for MsgFrames {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        dir != self.dir || self.done()
    }

    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn progress(&self, dir: Dir) -> u8 {
        u8::from(self.complete(dir))
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        match kind(id) {
            Some((k, d)) if d == self.dir && index == 0 && self.frame_id(k).is_some() => {
                if self.done() {
                    Buf::Ready(&self.bytes)
                } else {
                    Buf::NotYet
                }
            }
            _ => Buf::Absent,
        }
    }

    fn record(&self) -> Option<crate::AppRecord> {
        None
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<FrameMeta> {
        let (k, d) = kind(id)?;
        if d != self.dir || index != 0 {
            return None;
        }
        Some(FrameMeta {
            id: self.frame_id(k)?,
            stream_offset: Some(self.offset),
            complete: self.whole,
            tx_id: None,
            length: self.len,
        })
    }

    fn frames_only(&self) -> bool {
        true
    }
}

/// A flow's frames (made only when a rule uses Telnet frames).
#[derive(Debug, Default)]
pub struct Frames {
    /// The types the rules use: pdu, ctl, data.
    used: [bool; 3],
    /// Per direction, the id of its next frame.
    next_id: [u64; 2],
    /// Per direction, its bytes so far (data and gaps).
    seen: [u64; 2],
    /// Per direction, the holder of the message whose end has not come yet.
    open: [Option<u64>; 2],
    msgs: VecDeque<MsgFrames>,
    next_msg: u64,
}

impl Frames {
    /// The frames of the types in `used` (`None` when Telnet's own are not among
    /// them).
    pub fn new(used: &[BufferId]) -> Option<Box<Frames>> {
        let first = crate::stream_frame::first_frame_id(AppProto::Telnet, used);
        let mut f = Frames {
            next_id: [first; 2],
            ..Frames::default()
        };
        for &b in used {
            if let Some((k, _)) = kind(b) {
                f.used[k as usize] = true;
            }
        }
        f.used.iter().any(|&u| u).then(|| Box::new(f))
    }

    fn take_id(&mut self, d: usize, k: Kind) -> Option<u64> {
        self.used[k as usize].then(|| {
            let id = self.next_id[d];
            self.next_id[d] += 1;
            id
        })
    }

    /// `data` came in `dir`: the stream offset of its first byte.
    pub fn data(&mut self, dir: Dir, data: &[u8]) -> u64 {
        let d = dir.index();
        let at = self.seen[d];
        self.seen[d] += data.len() as u64;
        at
    }

    /// A message of `dir` starts at stream offset `offset` with byte `first`: its
    /// frames are made, unless those of a message started before are still open.
    pub fn start(&mut self, dir: Dir, offset: u64, first: u8) {
        let d = dir.index();
        if self.open[d].is_some() {
            return;
        }
        let pdu = self.take_id(d, Kind::Pdu);
        let ctl = first == super::IAC;
        let specific = self
            .take_id(d, if ctl { Kind::Ctl } else { Kind::Data })
            .map(|id| (ctl, id));
        if pdu.is_none() && specific.is_none() {
            return;
        }
        if self.msgs.len() >= MAX_LIVE_MESSAGES {
            self.msgs.pop_front();
        }
        let id = self.next_msg;
        self.next_msg += 1;
        self.msgs.push_back(MsgFrames {
            id,
            dir,
            offset,
            pdu,
            specific,
            bytes: Vec::new(),
            len: None,
            whole: false,
        });
        self.open[d] = Some(id);
    }

    /// The open message of `dir` ends with `bytes`: whole, or cut short (the
    /// direction ended, a gap, the bound).
    pub fn end(&mut self, dir: Dir, bytes: &[u8], whole: bool) {
        let Some(id) = self.open[dir.index()].take() else {
            return;
        };
        if let Some(m) = self.msgs.iter_mut().find(|m| m.id == id) {
            m.end(bytes, bytes.len() as u64, whole);
        }
    }

    /// `len` bytes of `dir` are missing.
    pub fn gap(&mut self, dir: Dir, len: u64, pending: &[u8]) {
        self.end(dir, pending, false);
        self.seen[dir.index()] += len;
    }

    pub fn count(&self) -> usize {
        self.msgs.len()
    }

    pub fn get(&self, index: usize) -> Option<&dyn Transaction> {
        self.msgs.get(index).map(|m| m as &dyn Transaction)
    }

    pub fn free_below(&mut self, id: u64) {
        self.msgs.retain(|m| m.id >= id);
        crate::ReleaseEmpty::release_if_empty(&mut self.msgs);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A message holder: its id, `pdu` frame id, `ctl`/`data` frame, offset, length.
    type Row = (u64, Option<u64>, Option<(bool, u64)>, u64, Option<u64>);

    fn ids(f: &Frames) -> Vec<Row> {
        f.msgs
            .iter()
            .map(|m| (m.id, m.pdu, m.specific, m.offset, m.len))
            .collect()
    }

    #[test]
    fn only_the_types_rules_use_are_numbered() {
        assert!(Frames::new(&[crate::BufferId::of(AppProto::Rfb, 100)]).is_none());
        let mut f = Frames::new(&[FRAME_DATA_TC]).unwrap();
        let at = f.data(Dir::ToServer, b"\xff\xf1ls\r\n");
        assert_eq!(at, 0);
        // A command: no frame of a used type, no holder.
        f.start(Dir::ToServer, 0, 0xff);
        f.end(Dir::ToServer, b"\xff\xf1", true);
        f.start(Dir::ToServer, 2, b'l');
        f.end(Dir::ToServer, b"ls\r\n", true);
        assert_eq!(ids(&f), [(0, None, Some((false, 1)), 2, Some(4))]);
        let m = &f.msgs[0];
        assert_eq!(m.buffer(FRAME_DATA_TS, 0), Buf::Ready(b"ls\r\n"));
        assert_eq!(m.buffer(FRAME_PDU_TS, 0), Buf::Absent);
        assert_eq!(m.buffer(FRAME_DATA_TC, 0), Buf::Absent);
        assert!(m.frames_only() && m.inspects(Dir::ToServer) && !m.inspects(Dir::ToClient));
    }

    #[test]
    fn a_message_cut_short() {
        let stream = crate::stream_frame::ids(AppProto::Telnet)[1];
        let mut f = Frames::new(&[FRAME_PDU_TS, FRAME_CTL_TS, stream]).unwrap();
        f.data(Dir::ToClient, b"$ ");
        f.start(Dir::ToClient, 0, b'$');
        let m = f.get(0).unwrap();
        assert_eq!(m.buffer(FRAME_PDU_TC, 0), Buf::NotYet);
        assert!(!m.complete(Dir::ToClient));
        // The direction ends inside the message.
        f.end(Dir::ToClient, b"$ ", false);
        assert_eq!(f.count(), 1);
        let m = f.get(0).unwrap();
        assert_eq!(m.buffer(FRAME_PDU_TC, 0), Buf::Ready(b"$ "));
        // Id 1 is the stream frame's.
        let meta = m.frame(FRAME_PDU_TC, 0).unwrap();
        assert_eq!((meta.id, meta.complete, meta.length), (2, false, Some(2)));
        f.free_below(1);
        assert_eq!(f.count(), 0);
    }
}
