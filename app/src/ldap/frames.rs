//! LDAP's frames, as Suricata 8 makes them: `pdu`, each message (TCP and UDP), and
//! `stream`, all of a TCP direction.
//!
//! A message's `pdu` frame is made when its first byte is seen (ids per direction
//! from 1, `stream` first when a rule uses it; only the types some rule uses are
//! numbered, as Suricata's) and attached to the transaction the message goes to once
//! it is parsed: a response's to its request's (Suricata's id for it, the EVE
//! `tx_id` plus one). A CLDAP request's frame is the whole datagram and attached to
//! none. A TCP message the direction ended inside is inspected then, with the bytes
//! it had, attached to none and not `complete`; so is each direction's `stream`
//! frame. Those two are offered as holders of their own ([`Loose`]).
//!
//! The engine alerts once per rule and transaction: a rule that matches several
//! responses of one transaction (a search's entries) alerts on the first, where
//! Suricata alerts on each.

use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId, Dir, FrameMeta, Transaction};

use super::LdapTx;

pub const FRAME_PDU_TS: BufferId = BufferId::of(AppProto::Ldap, 100);
pub const FRAME_PDU_TC: BufferId = BufferId::of(AppProto::Ldap, 101);
pub const FRAME_STREAM_TS: BufferId = BufferId::of(AppProto::Ldap, 102);
pub const FRAME_STREAM_TC: BufferId = BufferId::of(AppProto::Ldap, 103);

/// The frames of LDAP (`frame:ldap.pdu`, `frame:ldap.stream`).
pub static FRAMES: &[BufferDef] = &[
    def(
        "pdu",
        &[],
        None,
        AppProto::Ldap,
        Some(FRAME_PDU_TS),
        Some(FRAME_PDU_TC),
        true,
    ),
    def(
        "stream",
        &[],
        None,
        AppProto::Ldap,
        Some(FRAME_STREAM_TS),
        Some(FRAME_STREAM_TC),
        false,
    ),
];

/// Bytes kept per frame; past them a frame's bytes are cut (its length is not).
pub const MAX_FRAME_BYTES: usize = 64 * 1024;
/// Frames a transaction keeps per direction (a search answered by many entries);
/// past it a message's frame is numbered but not kept.
pub const MAX_TX_FRAMES: usize = 64;

/// Whether frame buffer `id` is a `pdu` (else a `stream`) frame, and its direction.
pub fn kind(id: BufferId) -> Option<(bool, Dir)> {
    Some(match id {
        FRAME_PDU_TS => (true, Dir::ToServer),
        FRAME_PDU_TC => (true, Dir::ToClient),
        FRAME_STREAM_TS => (false, Dir::ToServer),
        FRAME_STREAM_TC => (false, Dir::ToClient),
        _ => return None,
    })
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
    let (pdu, dir) = kind(id)?;
    if !pdu {
        return Some(Buf::Absent);
    }
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
    let (true, dir) = kind(id)? else {
        return None;
    };
    let f = tx.frames[dir.index()].get(index)?;
    Some(FrameMeta {
        id: f.id,
        stream_offset: f.offset,
        complete: true,
        tx_id: f.attached.then_some(tx.id + 1),
        length: Some(f.len),
    })
}

/// A frame of no transaction, offered once its direction ended: a `stream` frame, or
/// the `pdu` frame of a message cut short.
#[derive(Debug)]
pub struct Loose {
    dir: Dir,
    pdu: bool,
    frame: PduFrame,
    complete: bool,
}

impl Transaction for Loose {
    /// Past any transaction's.
    fn id(&self) -> u64 {
        u64::MAX - 3 + 2 * u64::from(self.pdu) + self.dir.index() as u64
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
        if kind(id) == Some((self.pdu, self.dir)) && index == 0 {
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
            complete: self.complete,
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
    pdu: bool,
    stream: bool,
    next_id: [u64; 2],
    /// Per direction, its bytes so far.
    seen: [u64; 2],
    /// Per direction, the id and offset of the frame of the message being received.
    open: [Option<(u64, u64)>; 2],
    stream_id: [Option<u64>; 2],
    stream_bytes: [Vec<u8>; 2],
    ended: [bool; 2],
    pub loose: Vec<Loose>,
}

impl Frames {
    pub fn new(used: &[BufferId]) -> Option<Box<Frames>> {
        let mut f = Frames {
            next_id: [1; 2],
            ..Frames::default()
        };
        for &b in used {
            match kind(b) {
                Some((true, _)) => f.pdu = true,
                Some((false, _)) => f.stream = true,
                None => {}
            }
        }
        (f.pdu || f.stream).then(|| Box::new(f))
    }

    fn take_id(&mut self, d: usize) -> u64 {
        let id = self.next_id[d];
        self.next_id[d] += 1;
        id
    }

    /// TCP `data` came in `dir`: the stream offset of its first byte.
    pub fn data(&mut self, dir: Dir, data: &[u8]) -> u64 {
        let d = dir.index();
        if self.stream && self.seen[d] == 0 && self.stream_id[d].is_none() {
            self.stream_id[d] = Some(self.take_id(d));
        }
        if self.stream_id[d].is_some() {
            let s = &mut self.stream_bytes[d];
            let room = MAX_FRAME_BYTES.saturating_sub(s.len());
            s.extend_from_slice(&data[..room.min(data.len())]);
        }
        let at = self.seen[d];
        self.seen[d] += data.len() as u64;
        at
    }

    /// A TCP message of `dir` starts at stream offset `offset` (its frame is made
    /// unless it was when its first bytes came).
    pub fn start(&mut self, dir: Dir, offset: u64) {
        let d = dir.index();
        if self.pdu && self.open[d].is_none() {
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
        if !self.pdu {
            return None;
        }
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
                pdu: true,
                frame: PduFrame::new(id, Some(offset), pending, false),
                complete: false,
            });
        }
        if let Some(id) = self.stream_id[d] {
            let mut frame = PduFrame::new(id, Some(0), &[], false);
            frame.bytes = std::mem::take(&mut self.stream_bytes[d]).into();
            frame.len = self.seen[d];
            self.loose.push(Loose {
                dir,
                pdu: false,
                frame,
                complete: true,
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
