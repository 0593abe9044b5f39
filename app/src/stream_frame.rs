//! The `stream` frame every protocol parsed over TCP has (`frame:nfs.stream`,
//! `frame:http1.stream`, ...), as Suricata 8 makes it for all of them alike: all of one
//! direction of the flow, from its first byte, as the protocol's parser was given it.
//!
//! No protocol makes it: the engine does, from the reassembled bytes it fed the
//! parser, and only for a flow whose protocol's stream frame some loaded rule uses
//! (see [`used`]). Suricata's rules on it behave as this module's constants say:
//!
//! - The frame is made with the direction's first byte, before the protocol's own
//!   frames, so its id is always 1 and the protocol numbers its own from 2 (see
//!   [`first_frame_id`]); it is attached to no transaction (an alert on it names no
//!   `tx_id`).
//! - Its length is unknown until the direction ends. It is inspected as it grows, on
//!   the direction's packets: each time [`INSPECT_CHUNK`] bytes or more that the
//!   other side acknowledged were added since its last inspection, and once more,
//!   with the rest, when the session (or the flow) ends. Each inspection sees only
//!   the bytes added since the previous one (Suricata's frame `inspect_progress` in
//!   IDS mode), so a rule alerts once per inspection it matches, possibly several
//!   times on one frame. Inline (IPS mode), every packet that brings bytes inspects
//!   them at once, with the [`INSPECT_CHUNK`] bytes before them again (Suricata's
//!   sliding window), and the end inspects that window once more.
//! - A gap goes into the frame (its length counts it) when the parser takes gaps; a
//!   parser that wants no more of the direction after one (see
//!   [`crate::AppState::stream_done`]) ends the frame there, whole, and it is inspected
//!   at the end with the bytes before the gap.
//! - An alert logs the frame as it stands: at offset 0, its length so far (the whole
//!   direction once it ended, then `complete`) and the bytes inspected.
//!
//! The engine offers each inspection to the rules as a [`Chunk`], a holder of that one
//! frame borrowing the stream's bytes in place: nothing is copied or kept, and a flow
//! whose protocol's stream frame no rule uses pays nothing.

use std::sync::LazyLock;

use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId, Dir, FrameMeta, PROTOCOLS, Transaction};

/// The number of the stream frame's buffers (to_server, to_client) in every
/// protocol's buffer id space; no protocol uses these for a buffer of its own.
pub const BUFFER_NUMBERS: [u8; 2] = [254, 255];

/// New acknowledged bytes that make a stream frame be inspected before its direction
/// ended (Suricata's frame inspection waits for 2500 bytes past its progress).
pub const INSPECT_CHUNK: u64 = 2500;

/// Bytes of one inspection given to the rules at most: what came past them since the
/// last inspection is not inspected (a chunk is normally a few segments: acknowledged
/// data is inspected as it comes).
pub const MAX_CHUNK_BYTES: usize = 1024 * 1024;

/// The buffers of `proto`'s stream frame (to_server, to_client).
pub const fn ids(proto: AppProto) -> [BufferId; 2] {
    [
        BufferId::of(proto, BUFFER_NUMBERS[0]),
        BufferId::of(proto, BUFFER_NUMBERS[1]),
    ]
}

/// Whether `id` is a stream frame's buffer, and of which direction.
pub fn dir_of(id: BufferId) -> Option<Dir> {
    match (id.0 & 0xff) as u8 {
        n if n == BUFFER_NUMBERS[0] => Some(Dir::ToServer),
        n if n == BUFFER_NUMBERS[1] => Some(Dir::ToClient),
        _ => None,
    }
}

/// The `stream` frame of each protocol parsed over TCP, in [`PROTOCOLS`] order (`None`
/// for a protocol without TCP: Suricata knows no `stream` frame of those).
static DEFS: LazyLock<Vec<Option<BufferDef>>> = LazyLock::new(|| {
    PROTOCOLS
        .iter()
        .map(|d| {
            d.transports.has(crate::Transport::Tcp).then(|| {
                let [ts, tc] = ids(d.proto);
                def("stream", &[], None, d.proto, Some(ts), Some(tc), false)
            })
        })
        .collect()
});

/// The `stream` frame of `proto`, if it is parsed over TCP.
pub fn def_of(proto: AppProto) -> Option<&'static BufferDef> {
    DEFS.get((proto as usize).checked_sub(1)?)?.as_ref()
}

/// Whether `def` is one of the stream frames.
pub fn is_def(d: &BufferDef) -> bool {
    def_of(d.proto).is_some_and(|s| std::ptr::eq(s, d))
}

/// Whether `used` (the frame buffers the loaded rules inspect) holds `proto`'s stream
/// frame.
pub fn used(proto: AppProto, used: &[BufferId]) -> bool {
    let [ts, tc] = ids(proto);
    used.iter().any(|&b| b == ts || b == tc)
}

/// The id of a TCP flow's first frame of its protocol's own in each direction: 2 when
/// the rules use its stream frame (which takes id 1), else 1.
pub fn first_frame_id(proto: AppProto, frames: &[BufferId]) -> u64 {
    if used(proto, frames) { 2 } else { 1 }
}

/// One inspection of a direction's stream frame: the bytes added since the last one,
/// offered to the rules as a holder of that frame alone (no transaction).
#[derive(Debug)]
pub struct Chunk<'a> {
    pub proto: AppProto,
    pub dir: Dir,
    /// The bytes inspected.
    pub bytes: &'a [u8],
    /// The frame's length so far: all of the direction's bytes that came (some may
    /// wait for their acknowledgement to be inspected).
    pub len: u64,
    /// The direction ended: the frame is whole.
    pub complete: bool,
}

impl Chunk<'_> {
    /// The holder's id, past any transaction's (the engine keeps no state for it).
    pub fn holder_id(dir: Dir) -> u64 {
        u64::MAX - 8 + dir.index() as u64
    }

    fn mine(&self, id: BufferId, index: usize) -> bool {
        index == 0 && id == ids(self.proto)[self.dir.index()]
    }
}

impl Transaction for Chunk<'_> {
    fn id(&self) -> u64 {
        Chunk::holder_id(self.dir)
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
        if self.mine(id, index) {
            Buf::Ready(self.bytes)
        } else {
            Buf::Absent
        }
    }

    fn record(&self) -> Option<crate::AppRecord> {
        None
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<FrameMeta> {
        self.mine(id, index).then_some(FrameMeta {
            id: 1,
            stream_offset: Some(0),
            complete: self.complete,
            tx_id: None,
            length: Some(self.len),
        })
    }

    fn frames_only(&self) -> bool {
        true
    }
}

/// Where a TCP flow's stream frame stands (kept by the engine per flow, only when the
/// rules use its protocol's stream frame).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    pub proto: AppProto,
    /// Per direction, the stream offset up to which the parser was given bytes.
    pub fed: [u64; 2],
    /// Per direction, the offset the frame was inspected up to.
    pub inspected: [u64; 2],
    /// Per direction, its last inspection (at its end) was made.
    pub done: [bool; 2],
    /// Per direction, the parser wanted no more of it (see
    /// [`crate::AppState::stream_done`]): the frame ends at `fed`, not whole.
    pub cut: [bool; 2],
    /// Per direction, a gap its parser does not take (it wants no more of the
    /// direction after it) ended the frame there: whole, inspected at the end.
    pub gap_end: [bool; 2],
}

impl Progress {
    pub fn new(proto: AppProto) -> Progress {
        Progress {
            proto,
            fed: [0; 2],
            inspected: [0; 2],
            done: [false; 2],
            cut: [false; 2],
            gap_end: [false; 2],
        }
    }

    /// The range of `dir` to inspect now, if any: `usable` is how far its bytes were
    /// acknowledged (all of them when `ending` or `inline`); at most what the parser
    /// was fed. Marks it inspected.
    pub fn next_chunk(
        &mut self,
        dir: Dir,
        usable: u64,
        ending: bool,
        inline: bool,
    ) -> Option<(u64, u64)> {
        let d = dir.index();
        if self.done[d] {
            return None;
        }
        let to = usable.min(self.fed[d]);
        let end = self.inspected[d];
        self.done[d] = ending;
        if inline {
            // At the end the last window is inspected again, new bytes or not.
            if to <= end && !(ending && to > 0) {
                return None;
            }
            self.inspected[d] = to;
            return Some((end.saturating_sub(INSPECT_CHUNK), to));
        }
        let due = if ending {
            to > end
        } else {
            to.saturating_sub(end) >= INSPECT_CHUNK
        };
        if !due {
            return None;
        }
        self.inspected[d] = to;
        Some((end, to))
    }

    /// The first byte of `dir` a later inspection may need.
    pub fn keep_from(&self, dir: Dir, inline: bool) -> u64 {
        let end = self.inspected[dir.index()];
        if inline {
            end.saturating_sub(INSPECT_CHUNK)
        } else {
            end
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tcp_protocol_has_one_and_no_udp_one() {
        let nfs = crate::buffers::frame(None, "nfs.stream").expect("nfs.stream");
        assert_eq!(nfs.to_server, Some(ids(AppProto::Nfs)[0]));
        assert!(crate::buffers::is_frame(nfs));
        assert!(crate::buffers::frame(Some(AppProto::Rfb), "stream").is_some());
        assert_eq!(
            crate::buffers::frame(None, "http1.stream").map(|d| d.proto),
            Some(AppProto::Http)
        );
        assert!(crate::buffers::frame(None, "ntp.stream").is_none());
        assert!(crate::buffers::frame(None, "snmp.stream").is_none());
        let id = ids(AppProto::Telnet)[1];
        assert_eq!(dir_of(id), Some(Dir::ToClient));
        assert_eq!(
            crate::buffers::frame_by_id(id).map(|d| d.name),
            Some("stream")
        );
    }

    #[test]
    fn inspected_by_chunks_then_at_the_end() {
        let mut p = Progress::new(AppProto::Nfs);
        p.fed[0] = 6000;
        assert_eq!(p.next_chunk(Dir::ToServer, 2000, false, false), None);
        assert_eq!(
            p.next_chunk(Dir::ToServer, 2600, false, false),
            Some((0, 2600))
        );
        assert_eq!(p.next_chunk(Dir::ToServer, 5000, false, false), None);
        // Never past what the parser was fed.
        assert_eq!(
            p.next_chunk(Dir::ToServer, 9000, false, false),
            Some((2600, 6000))
        );
        p.fed[0] = 7000;
        assert_eq!(
            p.next_chunk(Dir::ToServer, 9000, true, false),
            Some((6000, 7000))
        );
        assert_eq!(p.next_chunk(Dir::ToServer, 9000, true, false), None);
        // A direction with nothing: no inspection.
        assert_eq!(p.next_chunk(Dir::ToClient, 0, true, false), None);
    }

    #[test]
    fn inline_every_new_byte_with_a_window_before() {
        let mut p = Progress::new(AppProto::Smtp);
        p.fed[1] = 100;
        assert_eq!(
            p.next_chunk(Dir::ToClient, 100, false, true),
            Some((0, 100))
        );
        assert_eq!(p.next_chunk(Dir::ToClient, 100, false, true), None);
        p.fed[1] = 3000;
        assert_eq!(
            p.next_chunk(Dir::ToClient, 3000, false, true),
            Some((0, 3000))
        );
        p.fed[1] = 3010;
        assert_eq!(
            p.next_chunk(Dir::ToClient, 3010, false, true),
            Some((500, 3010))
        );
        assert_eq!(p.keep_from(Dir::ToClient, true), 510);
        // The end: the window again, nothing new.
        assert_eq!(
            p.next_chunk(Dir::ToClient, 3010, true, true),
            Some((510, 3010))
        );
        assert_eq!(p.next_chunk(Dir::ToClient, 3010, true, true), None);
    }
}
