//! The inspection buffers of an SSH connection: each side's identification line
//! (`ssh.proto`, `ssh.software`) and KEXINIT (`ssh.hassh*`), and the frames of its
//! binary packets (`record.hdr`, `record.data`, `record.pdu`).

use crate::buffers::{BufferDef, def};
use crate::{AppProto, BufferId};

pub const PROTO_CLIENT: BufferId = BufferId::of(AppProto::Ssh, 1);
pub const PROTO_SERVER: BufferId = BufferId::of(AppProto::Ssh, 2);
pub const SOFTWARE_CLIENT: BufferId = BufferId::of(AppProto::Ssh, 3);
pub const SOFTWARE_SERVER: BufferId = BufferId::of(AppProto::Ssh, 4);
pub const HASSH: BufferId = BufferId::of(AppProto::Ssh, 5);
pub const HASSH_STRING: BufferId = BufferId::of(AppProto::Ssh, 6);
pub const HASSH_SERVER: BufferId = BufferId::of(AppProto::Ssh, 7);
pub const HASSH_SERVER_STRING: BufferId = BufferId::of(AppProto::Ssh, 8);

/// The sticky buffers of SSH.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "ssh.proto",
        &["ssh_proto"],
        None,
        AppProto::Ssh,
        Some(PROTO_CLIENT),
        Some(PROTO_SERVER),
        false,
    ),
    def(
        "ssh.software",
        &["ssh_software"],
        None,
        AppProto::Ssh,
        Some(SOFTWARE_CLIENT),
        Some(SOFTWARE_SERVER),
        false,
    ),
    def(
        "ssh.hassh",
        &[],
        None,
        AppProto::Ssh,
        Some(HASSH),
        None,
        false,
    ),
    def(
        "ssh.hassh.string",
        &[],
        None,
        AppProto::Ssh,
        Some(HASSH_STRING),
        None,
        false,
    ),
    def(
        "ssh.hassh.server",
        &[],
        None,
        AppProto::Ssh,
        None,
        Some(HASSH_SERVER),
        false,
    ),
    def(
        "ssh.hassh.server.string",
        &[],
        None,
        AppProto::Ssh,
        None,
        Some(HASSH_SERVER_STRING),
        false,
    ),
];

pub const FRAME_HDR_TS: BufferId = BufferId::of(AppProto::Ssh, 100);
pub const FRAME_HDR_TC: BufferId = BufferId::of(AppProto::Ssh, 101);
pub const FRAME_DATA_TS: BufferId = BufferId::of(AppProto::Ssh, 102);
pub const FRAME_DATA_TC: BufferId = BufferId::of(AppProto::Ssh, 103);
pub const FRAME_PDU_TS: BufferId = BufferId::of(AppProto::Ssh, 104);
pub const FRAME_PDU_TC: BufferId = BufferId::of(AppProto::Ssh, 105);

const fn frame(name: &'static str, ts: BufferId, tc: BufferId) -> BufferDef {
    def(name, &[], None, AppProto::Ssh, Some(ts), Some(tc), true)
}

/// The frames of SSH's binary packets, one of each per packet up to NEWKEYS.
pub static FRAMES: &[BufferDef] = &[
    frame("record.hdr", FRAME_HDR_TS, FRAME_HDR_TC),
    frame("record.data", FRAME_DATA_TS, FRAME_DATA_TC),
    frame("record.pdu", FRAME_PDU_TS, FRAME_PDU_TC),
];

/// A frame buffer's direction and which of a packet's frames it is (0 `record.hdr`,
/// 1 `record.data`, 2 `record.pdu`: their order of creation).
pub fn frame_kind(id: BufferId) -> Option<(crate::Dir, u64)> {
    use crate::Dir::{ToClient, ToServer};
    Some(match id {
        FRAME_HDR_TS => (ToServer, 0),
        FRAME_HDR_TC => (ToClient, 0),
        FRAME_DATA_TS => (ToServer, 1),
        FRAME_DATA_TC => (ToClient, 1),
        FRAME_PDU_TS => (ToServer, 2),
        FRAME_PDU_TC => (ToClient, 2),
        _ => return None,
    })
}

/// The bytes of frame `kind` of a packet: its header is 6 bytes (length, padding
/// length, message type), its data the rest.
pub fn frame_range(len: usize, kind: u64) -> std::ops::Range<usize> {
    match kind {
        0 => 0..len.min(6),
        1 => len.min(6)..len,
        _ => 0..len,
    }
}

/// Whether `id` is one of the hassh buffers (a rule on one turns HASSH logging on).
pub fn is_hassh(id: BufferId) -> bool {
    [HASSH, HASSH_STRING, HASSH_SERVER, HASSH_SERVER_STRING].contains(&id)
}
