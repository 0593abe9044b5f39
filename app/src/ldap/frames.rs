//! LDAP's frames, as Suricata 8 makes them: `pdu`, each message (TCP and UDP; `stream`,
//! all of a TCP direction, is every TCP protocol's: [`crate::stream_frame`]).
//!
//! A message's `pdu` frame is made when its first byte is seen (ids per direction
//! from 1, or 2 when a rule uses the `stream` frame, which has 1) and attached to the transaction the message goes to once
//! it is parsed: a response's to its request's (Suricata's id for it, the EVE
//! `tx_id` plus one). A CLDAP request's frame is the whole datagram and attached to
//! none. A TCP message the direction ended inside is inspected then, with the bytes
//! it had, attached to none and not `complete`, offered as a holder of its own
//! ([`Loose`]).
//!
//! A transaction's frames of a direction are the items of its `pdu` buffer: a rule
//! alerts once per frame that matches (the engine's rule for frame buffers), as
//! Suricata's does on each response of a search.

use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId, Dir, FrameMeta, Transaction};

use super::LdapTx;

pub const FRAME_PDU_TS: BufferId = BufferId::of(AppProto::Ldap, 100);
pub const FRAME_PDU_TC: BufferId = BufferId::of(AppProto::Ldap, 101);

/// The frames of LDAP (`frame:ldap.pdu`).
pub static FRAMES: &[BufferDef] = &[def(
    "pdu",
    &[],
    None,
    AppProto::Ldap,
    Some(FRAME_PDU_TS),
    Some(FRAME_PDU_TC),
    true,
)];

/// Bytes kept per frame; past them a frame's bytes are cut (its length is not).
pub const MAX_FRAME_BYTES: usize = 64 * 1024;
/// Frames a transaction keeps per direction (a search answered by many entries);
/// past it a message's frame is numbered but not kept.
pub const MAX_TX_FRAMES: usize = 64;

/// The direction of `pdu` frame buffer `id`.
pub fn kind(id: BufferId) -> Option<Dir> {
    match id {
        FRAME_PDU_TS => Some(Dir::ToServer),
        FRAME_PDU_TC => Some(Dir::ToClient),
        _ => None,
    }
}

/// A message's `pdu` frame.
#[derive(Debug)]
pub struct PduFrame {
    pub id: u64,
    /// Where it starts in its direction's stream (`None` over UDP).
    pub offset: Option<u64>,
    /// Its bytes, at most [`MAX_FRAME_BYTES`].
    pub bytes: Box<[u8]>,
    pub len: u64,
    /// Attached to its transaction (not a CLDAP request's).
    pub attached: bool,
}

impl PduFrame {
    fn new(id: u64, offset: Option<u64>, bytes: &[u8], attached: bool) -> PduFrame {
        PduFrame {
            id,
            offset,
            bytes: bytes[..bytes.len().min(MAX_FRAME_BYTES)].into(),
            len: bytes.len() as u64,
            attached,
        }
    }
}

/// [`crate::Transaction::buffer`] of frame buffer `id` of `tx`: its messages' frames
/// that way, final once the direction's part of it is.
pub fn buffer(tx: &LdapTx, id: BufferId, index: usize) -> Option<Buf<'_>> {
    let dir = kind(id)?;
    let done = tx.complete(dir);
    Some(match tx.frames[dir.index()].get(index) {
        Some(f) if done => Buf::Ready(&f.bytes),
        // More may come: a rule that does not match those so far is tried again.
        Some(f) => Buf::Partial(&f.bytes),
        None if done || index > 0 => Buf::Absent,
        None => Buf::NotYet,
    })
}

/// [`crate::Transaction::frame`] of `tx`.
pub fn frame_meta(tx: &LdapTx, id: BufferId, index: usize) -> Option<FrameMeta> {
    let dir = kind(id)?;
    let f = tx.frames[dir.index()].get(index)?;
    Some(FrameMeta {
        id: f.id,
        stream_offset: f.offset,
        complete: true,
        tx_id: f.attached.then_some(tx.id + 1),
        length: Some(f.len),
    })
}

/// A frame of no transaction, offered once its direction ended: the `pdu` frame of a
/// message cut short.
#[derive(Debug)]
pub struct Loose {
    dir: Dir,
    frame: PduFrame,
}

impl Transaction for Loose {
    /// Past any transaction's.
    fn id(&self) -> u64 {
        u64::MAX - 1 + self.dir.index() as u64
    }

    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        if kind(id) == Some(self.dir) && index == 0 {
            Buf::Ready(&self.frame.bytes)
        } else {
            Buf::Absent
        }
    }

    fn record(&self) -> Option<crate::AppRecord> {
        None
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<FrameMeta> {
        matches!(self.buffer(id, index), Buf::Ready(_)).then_some(FrameMeta {
            id: self.frame.id,
            stream_offset: self.frame.offset,
            complete: false,
            tx_id: None,
            length: Some(self.frame.len),
        })
    }

    fn frames_only(&self) -> bool {
        true
    }
}

/// A flow's frame tracking (made only when a rule uses LDAP frames).
#[derive(Debug, Default)]
pub struct Frames {
    next_id: [u64; 2],
    /// Per direction, its bytes so far.
    seen: [u64; 2],
    /// Per direction, the id and offset of the frame of the message being received.
    open: [Option<(u64, u64)>; 2],
    ended: [bool; 2],
    pub loose: Vec<Loose>,
}

impl Frames {
    /// The `pdu` frames (`None` when no rule uses them), of a CLDAP flow when `udp`
    /// (which has no stream frame).
    pub fn new(used: &[BufferId], udp: bool) -> Option<Box<Frames>> {
        let first = if udp {
            1
        } else {
            crate::stream_frame::first_frame_id(AppProto::Ldap, used)
        };
        used.iter().any(|&b| kind(b).is_some()).then(|| {
            Box::new(Frames {
                next_id: [first; 2],
                ..Frames::default()
            })
        })
    }

    fn take_id(&mut self, d: usize) -> u64 {
        let id = self.next_id[d];
        self.next_id[d] += 1;
        id
    }

    /// TCP `data` came in `dir`: the stream offset of its first byte.
    pub fn data(&mut self, dir: Dir, data: &[u8]) -> u64 {
        let d = dir.index();
        let at = self.seen[d];
        self.seen[d] += data.len() as u64;
        at
    }

    /// A TCP message of `dir` starts at stream offset `offset` (its frame is made
    /// unless it was when its first bytes came).
    pub fn start(&mut self, dir: Dir, offset: u64) {
        let d = dir.index();
        if self.open[d].is_none() {
            self.open[d] = Some((self.take_id(d), offset));
        }
    }

    /// The TCP message of `dir` being received is `bytes`: its frame, for `tx` to keep.
    pub fn end(&mut self, dir: Dir, bytes: &[u8]) -> Option<PduFrame> {
        let (id, offset) = self.open[dir.index()].take()?;
        Some(PduFrame::new(id, Some(offset), bytes, true))
    }

    /// A datagram's message `bytes` in `dir`: its frame (`attached` to its
    /// transaction or not).
    pub fn datagram(&mut self, dir: Dir, bytes: &[u8], attached: bool) -> Option<PduFrame> {
        let id = self.take_id(dir.index());
        Some(PduFrame::new(id, None, bytes, attached))
    }

    /// `len` bytes of `dir` are missing: the message being received is given up.
    pub fn gap(&mut self, dir: Dir, len: u64) {
        self.open[dir.index()] = None;
        self.seen[dir.index()] += len;
    }

    /// `dir` ended with `pending` bytes of a message not whole.
    pub fn eof(&mut self, dir: Dir, pending: &[u8]) {
        let d = dir.index();
        if std::mem::replace(&mut self.ended[d], true) {
            return;
        }
        if let Some((id, offset)) = self.open[d].take()
            && !pending.is_empty()
        {
            self.loose.push(Loose {
                dir,
                frame: PduFrame::new(id, Some(offset), pending, false),
            });
        }
    }
}

/// Keeps `frame` on `tx` (at most [`MAX_TX_FRAMES`] per direction).
pub fn keep(tx: &mut LdapTx, dir: Dir, frame: Option<PduFrame>) {
    let frames = &mut tx.frames[dir.index()];
    if let Some(f) = frame
        && frames.len() < MAX_TX_FRAMES
    {
        frames.push(f);
    }
}
