//! The keywords of an NFS transaction, as Suricata 8's: `nfs_procedure` (the call's
//! procedure, and for a file transfer the procedures that joined it, such as COMMIT;
//! an unsigned 32-bit integer whose ranges, unlike other integer keywords', are
//! inclusive) and `nfs.version` (the call's NFS version), both inspected toward the
//! server. File names and contents are the file layer's keywords (`file.name`, ...).
//!
//! The frames of NFS, as Suricata 8 makes them (`frame:nfs.rpc.pdu`, ...), are
//! attached to no transaction: they live in [`FrameTx`] holders, one per RPC record
//! (or datagram) that made frames.

use super::state::{FrameTx, NfsTx};
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, FrameMeta, Transaction};

pub const FILE_NAME_TS: BufferId = BufferId::of(AppProto::Nfs, 1);
pub const FILE_NAME_TC: BufferId = BufferId::of(AppProto::Nfs, 2);

pub const FILE_DATA_TS: BufferId = BufferId::of(AppProto::Nfs, 3);
pub const FILE_DATA_TC: BufferId = BufferId::of(AppProto::Nfs, 4);

/// The sticky buffers of NFS: `file.name` and `file.data` of the file a transfer
/// carries.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "file.name",
        &[],
        None,
        AppProto::Nfs,
        Some(FILE_NAME_TS),
        Some(FILE_NAME_TC),
        false,
    ),
    def(
        "file.data",
        &["file_data"],
        None,
        AppProto::Nfs,
        Some(FILE_DATA_TS),
        Some(FILE_DATA_TC),
        false,
    ),
];

/// Buffer `id` of a transaction: the name or the bytes of the file of a transfer in
/// that direction.
pub fn buffer(tx: &NfsTx, id: BufferId, index: usize) -> Buf<'_> {
    let dir = match id {
        FILE_NAME_TS => Dir::ToServer,
        FILE_NAME_TC => Dir::ToClient,
        FILE_DATA_TS | FILE_DATA_TC => return file_data(tx, id, index),
        _ => return Buf::Absent,
    };
    match &tx.file {
        Some(f) if f.dir == Some(dir) && index == 0 && !tx.file_name.is_empty() => {
            Buf::Ready(&tx.file_name)
        }
        _ => Buf::Absent,
    }
}

/// `file.data`: the bytes of the file a transfer carries in the buffer's direction,
/// final once the file or the direction ended.
fn file_data(tx: &NfsTx, id: BufferId, index: usize) -> Buf<'_> {
    let dir = if id == FILE_DATA_TS {
        Dir::ToServer
    } else {
        Dir::ToClient
    };
    let Some(f) = tx
        .file
        .as_ref()
        .filter(|f| f.dir == Some(dir) && index == 0)
    else {
        return Buf::Absent;
    };
    let done = f.closed || tx.done(dir) || f.files.as_slice().last().is_some_and(|x| !x.is_open());
    match (f.data.is_empty(), done) {
        (true, true) => Buf::Absent,
        (true, false) => Buf::NotYet,
        (false, true) => Buf::Ready(&f.data),
        (false, false) => Buf::Partial(&f.data),
    }
}

/// The kinds of NFS frames, in Suricata's order of its frame types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameKind {
    /// An RPC record from its start (TCP: its marker) to the end of the data at hand.
    RpcPdu = 0,
    /// A reply's first bytes: TCP marker, xid and message type (12), UDP xid and type
    /// (8).
    RpcHdr = 1,
    /// A reply's bytes after its `rpc.hdr`, to the end of the data at hand.
    RpcData = 2,
    /// A call's credentials: flavor, length and body.
    RpcCreds = 3,
    /// The NFSv2/v3 arguments or results.
    NfsPdu = 4,
    /// An NFSv2/v3 reply's status (4 bytes).
    NfsStatus = 5,
    /// The NFSv4 arguments or results.
    Nfs4Pdu = 6,
    /// Their first 8 bytes.
    Nfs4Hdr = 7,
    /// The rest.
    Nfs4Ops = 8,
    /// An NFSv4 reply's status (4 bytes).
    Nfs4Status = 9,
}

/// Frame kinds there are.
pub const FRAME_KINDS: usize = 10;

/// Frame buffers are numbered from here: `FRAME_BASE + 2 * kind + dir`.
const FRAME_BASE: u8 = 100;

const fn frame_id(kind: FrameKind, dir: usize) -> BufferId {
    BufferId::of(AppProto::Nfs, FRAME_BASE + 2 * kind as u8 + dir as u8)
}

const fn frame(name: &'static str, kind: FrameKind) -> BufferDef {
    def(
        name,
        &[],
        None,
        AppProto::Nfs,
        Some(frame_id(kind, 0)),
        Some(frame_id(kind, 1)),
        false,
    )
}

/// The frames of NFS (`frame:nfs.rpc.pdu`, ...), over TCP and UDP alike.
pub static FRAMES: &[BufferDef] = &[
    frame("rpc.pdu", FrameKind::RpcPdu),
    frame("rpc.hdr", FrameKind::RpcHdr),
    frame("rpc.data", FrameKind::RpcData),
    frame("rpc.creds", FrameKind::RpcCreds),
    frame("nfs.pdu", FrameKind::NfsPdu),
    frame("nfs.status", FrameKind::NfsStatus),
    frame("nfs4.pdu", FrameKind::Nfs4Pdu),
    frame("nfs4.hdr", FrameKind::Nfs4Hdr),
    frame("nfs4.ops", FrameKind::Nfs4Ops),
    frame("nfs4.status", FrameKind::Nfs4Status),
];

/// A frame buffer's kind (its index in [`FRAMES`]) and direction.
pub fn frame_kind(id: BufferId) -> Option<(usize, Dir)> {
    let n = (id.0 & 0xff) as u8;
    if id.proto_index() != AppProto::Nfs as usize || n < FRAME_BASE {
        return None;
    }
    let k = usize::from(n - FRAME_BASE);
    if k >= 2 * FRAME_KINDS {
        return None;
    }
    let dir = if k % 2 == 0 {
        Dir::ToServer
    } else {
        Dir::ToClient
    };
    Some((k / 2, dir))
}

/// Buffer `id` of a frame holder: its frame of that kind, if it made one.
pub fn frame_buffer(h: &FrameTx, id: BufferId, index: usize) -> Buf<'_> {
    match frame_kind(id) {
        Some((k, dir)) if dir == h.dir && index == 0 => match h.bytes_of(k) {
            Some(b) => Buf::Ready(b),
            None => Buf::Absent,
        },
        _ => Buf::Absent,
    }
}

/// [`crate::Transaction::frame`] of a holder's frame: attached to no transaction.
pub fn frame_meta(h: &FrameTx, id: BufferId, index: usize) -> Option<FrameMeta> {
    let (k, dir) = frame_kind(id)?;
    if dir != h.dir || index != 0 {
        return None;
    }
    let f = h.frame(k)?;
    let kept = h.bytes_of(k).map_or(0, <[u8]>::len) as u64;
    Some(FrameMeta {
        id: f.id,
        stream_offset: h.base.map(|b| b + f.start),
        complete: true,
        tx_id: None,
        length: (f.len > kept).then_some(f.len),
    })
}

pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("nfs_procedure", &[], parse_procedure, eval_procedure),
    KeywordDef::check("nfs.version", &[], parse_inclusive, eval_version),
];

fn parse_u32(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let cmp = parse_num_cmp(s).ok_or_else(|| format!("bad value `{s}`"))?;
    let bound = match cmp {
        NumCmp::Eq(a)
        | NumCmp::Ne(a)
        | NumCmp::Lt(a)
        | NumCmp::Le(a)
        | NumCmp::Gt(a)
        | NumCmp::Ge(a) => a,
        NumCmp::Between(_, b) | NumCmp::NotBetween(_, b) => b,
        NumCmp::MaskEq(m, x) | NumCmp::MaskNe(m, x) => m | x,
    };
    if bound > u64::from(u32::MAX) {
        return Err(format!("`{s}` is out of range (at most {})", u32::MAX));
    }
    Ok(KwValue::Num(cmp))
}

/// `nfs_procedure`: a range `a-b` (or `a<>b`) includes its ends; a negated range is
/// refused (as Suricata 8.0.6 refuses it).
fn parse_procedure(v: Option<&str>) -> Result<KwValue, String> {
    match parse_inclusive(v)? {
        KwValue::Num(NumCmp::NotBetween(..)) => Err("a negated range is not supported".into()),
        k => Ok(k),
    }
}

/// An integer whose ranges include their ends (`nfs.version` too, measured).
fn parse_inclusive(v: Option<&str>) -> Result<KwValue, String> {
    Ok(KwValue::Num(match parse_u32(v)? {
        KwValue::Num(NumCmp::Between(a, b)) => match a.checked_sub(1) {
            Some(a) => NumCmp::Between(a, b + 1),
            None => NumCmp::Le(b),
        },
        KwValue::Num(NumCmp::NotBetween(a, b)) => match a.checked_sub(1) {
            Some(a) => NumCmp::NotBetween(a, b + 1),
            None => NumCmp::Gt(b),
        },
        KwValue::Num(c) => c,
        other => return Ok(other),
    }))
}

fn nfs_tx(t: &dyn Transaction) -> Option<&NfsTx> {
    t.as_any()?.downcast_ref::<NfsTx>()
}

fn eval_procedure(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    if dir != Dir::ToServer {
        return Some(false);
    }
    let tx = nfs_tx(t)?;
    let extra = tx.file.iter().flat_map(|f| f.procs.iter().copied());
    Some(
        std::iter::once(tx.procedure)
            .chain(extra)
            .any(|p| cmp.test(u64::from(p))),
    )
}

fn eval_version(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    if dir != Dir::ToServer {
        return Some(false);
    }
    Some(cmp.test(u64::from(nfs_tx(t)?.nfs_version)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_are_inclusive() {
        assert_eq!(
            parse_procedure(Some("12-14")),
            Ok(KwValue::Num(NumCmp::Between(11, 15)))
        );
        assert_eq!(
            parse_procedure(Some("0-3")),
            Ok(KwValue::Num(NumCmp::Le(3)))
        );
        assert!(parse_procedure(Some("!2-4")).is_err());
        assert_eq!(
            parse_inclusive(Some("!2-4")),
            Ok(KwValue::Num(NumCmp::NotBetween(1, 5)))
        );
        assert_eq!(
            parse_inclusive(Some("2-4")),
            Ok(KwValue::Num(NumCmp::Between(1, 5)))
        );
        assert_eq!(
            parse_procedure(Some(">20")),
            Ok(KwValue::Num(NumCmp::Gt(20)))
        );
        assert_eq!(parse_u32(Some("<3")), Ok(KwValue::Num(NumCmp::Lt(3))));
        assert!(parse_u32(Some("4294967296")).is_err());
        assert!(parse_u32(None).is_err());
    }

    #[test]
    fn procedures_of_a_file_transfer() {
        let mut tx = NfsTx {
            procedure: 7,
            nfs_version: 3,
            ..NfsTx::default()
        };
        let mut f = super::super::state::FileXfer::default();
        f.procs.push(21);
        tx.file = Some(f);
        let v = parse_procedure(Some("21")).unwrap();
        assert_eq!(eval_procedure(&v, Dir::ToServer, 0, &tx), Some(true));
        assert_eq!(eval_procedure(&v, Dir::ToClient, 0, &tx), Some(false));
        let v = parse_u32(Some("3")).unwrap();
        assert_eq!(eval_version(&v, Dir::ToServer, 0, &tx), Some(true));
    }
}
