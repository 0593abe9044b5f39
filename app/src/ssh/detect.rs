//! The inspection buffers of an SSH connection: each side's identification line
//! (`ssh.proto`, `ssh.software`) and KEXINIT (`ssh.hassh*`).

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
