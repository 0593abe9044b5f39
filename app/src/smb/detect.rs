//! SMB's sticky buffers and keywords: `smb.share` (`smb_share`: the share a tree
//! connect names, when it is no pipe), `smb.named_pipe` (`smb_named_pipe`: the pipe
//! share, IPC$), `smb.ntlmssp_user` and `smb.ntlmssp_domain` (a session setup's
//! NTLMSSP AUTHENTICATE), `file.data`/`file.name` of the files read and written, and
//! `smb.version` (1 or 2). The DCE/RPC keywords read a pipe call's transaction
//! through [`crate::dcerpc::detect`].

use super::state::{Kind, SmbTx};
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const SHARE_TS: BufferId = BufferId::of(AppProto::Smb, 1);
pub const PIPE_TS: BufferId = BufferId::of(AppProto::Smb, 3);
pub const USER_TS: BufferId = BufferId::of(AppProto::Smb, 5);
pub const DOMAIN_TS: BufferId = BufferId::of(AppProto::Smb, 7);
pub const FILE_DATA_TS: BufferId = BufferId::of(AppProto::Smb, 9);
pub const FILE_DATA_TC: BufferId = BufferId::of(AppProto::Smb, 10);
pub const FILE_NAME_TS: BufferId = BufferId::of(AppProto::Smb, 11);
pub const FILE_NAME_TC: BufferId = BufferId::of(AppProto::Smb, 12);

const fn both(
    name: &'static str,
    aliases: &'static [&'static str],
    ts: BufferId,
    tc: BufferId,
) -> BufferDef {
    def(
        name,
        aliases,
        None,
        AppProto::Smb,
        Some(ts),
        Some(tc),
        false,
    )
}

/// A request's buffer: Suricata inspects the share and the NTLMSSP fields toward the
/// server only.
const fn ts(name: &'static str, aliases: &'static [&'static str], id: BufferId) -> BufferDef {
    def(name, aliases, None, AppProto::Smb, Some(id), None, false)
}

/// The sticky buffers of SMB.
pub static BUFFERS: &[BufferDef] = &[
    ts("smb.share", &["smb_share"], SHARE_TS),
    ts("smb.named_pipe", &["smb_named_pipe"], PIPE_TS),
    ts("smb.ntlmssp_user", &[], USER_TS),
    ts("smb.ntlmssp_domain", &[], DOMAIN_TS),
    both("file.data", &["file_data"], FILE_DATA_TS, FILE_DATA_TC),
    both("file.name", &[], FILE_NAME_TS, FILE_NAME_TC),
];

/// SMB's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[KeywordDef::check(
    "smb.version",
    &[],
    parse_version,
    eval_version,
)];

fn parse_version(v: Option<&str>) -> Result<KwValue, String> {
    match required(v)?.trim() {
        "1" => Ok(KwValue::Exact(1)),
        "2" => Ok(KwValue::Exact(2)),
        s => Err(format!("`{s}` is no SMB version (1 or 2)")),
    }
}

fn eval_version(v: &KwValue, _dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let tx = t.as_any()?.downcast_ref::<SmbTx>()?;
    let KwValue::Exact(n) = *v else {
        return Some(false);
    };
    Some(u64::from(tx.version) == n)
}

fn text(s: &str) -> Buf<'_> {
    Buf::Ready(s.as_bytes())
}

pub fn buffer(tx: &SmbTx, id: BufferId, index: usize) -> Buf<'_> {
    use crate::dcerpc::detect::{STUB_TC, STUB_TS};
    if id == STUB_TS || id == STUB_TC {
        return match tx.dce() {
            Some(d) => crate::dcerpc::detect::buffer(d, id, index),
            None => Buf::Absent,
        };
    }
    if index > 0 {
        return Buf::Absent;
    }
    let dir = if id.0 % 2 == 1 {
        Dir::ToServer
    } else {
        Dir::ToClient
    };
    match (id, &tx.kind) {
        // Whether a share is a pipe is known from the response; Suricata inspects a
        // request when the client's next data comes, by which time the response has
        // usually been seen: till one of them, neither buffer is known.
        (SHARE_TS | PIPE_TS, Kind::Tree(t))
            if !(tx.done[1] || t.overtaken || tx.eof[0] || tx.eof[1]) =>
        {
            Buf::NotYet
        }
        (SHARE_TS, Kind::Tree(t)) if !t.pipe => text(&t.share),
        (PIPE_TS, Kind::Tree(t)) if t.pipe => text(&t.share),
        (USER_TS, Kind::Setup(s)) => match &s.ntlmssp {
            Some(a) => text(&a.user),
            None => Buf::Absent,
        },
        (DOMAIN_TS, Kind::Setup(s)) => match &s.ntlmssp {
            Some(a) => text(&a.domain),
            None => Buf::Absent,
        },
        (FILE_DATA_TS | FILE_DATA_TC, Kind::File { .. }) => {
            if tx.file_dir != Some(dir) {
                return Buf::Absent;
            }
            match (tx.file_data.is_empty(), tx.done[0] || tx.eof[dir.index()]) {
                (true, true) => Buf::Absent,
                (false, true) => Buf::Ready(&tx.file_data),
                (true, false) => Buf::NotYet,
                (false, false) => Buf::Partial(&tx.file_data),
            }
        }
        (FILE_NAME_TS | FILE_NAME_TC, Kind::File { filename, .. }) => {
            if tx.file_dir != Some(dir) {
                return Buf::Absent;
            }
            text(filename)
        }
        _ => Buf::Absent,
    }
}
