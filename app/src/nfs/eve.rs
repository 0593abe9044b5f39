//! The EVE `nfs` record: an `rpc` object and an `nfs` one, in Suricata's field order,
//! also written into the alerts and `fileinfo` events of the transaction.

use meerkat_eve::Obj;
use meerkat_proto::events::{Nfs, NfsFileObject};

use super::parser;
use super::rpc;
use super::state::NfsTx;
use crate::AppRecord;

/// CRC-32 (IEEE 802.3, as zlib's) of a file handle: Suricata's `hhash`. Handles are
/// at most 64 bytes; bitwise is enough.
pub fn crc32(b: &[u8]) -> u32 {
    let mut c = !0u32;
    for &x in b {
        c ^= u32::from(x);
        for _ in 0..8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xedb8_8320
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// The version whose procedure names the record uses: NFSv4's once the flow is
/// NFSv4, else the call's (NFSv2's or NFSv3's; a file transaction made by a reply
/// has none: NFSv3's), as Suricata names them.
fn names_version(tx: &NfsTx) -> u16 {
    match (tx.flow_version, tx.nfs_version) {
        (4.., _) => 4,
        (_, 2) => 2,
        _ => 3,
    }
}

/// The record of a transaction.
pub fn record(tx: &NfsTx) -> Nfs {
    Nfs {
        xid: tx.xid,
        rpc_status: tx.rpc_status,
        auth_type: tx.auth_type,
        machine_name: tx.machine_name.clone(),
        uid: tx.uid,
        gid: tx.gid,
        version: u32::from(tx.flow_version),
        procedure: parser::procedure_name(names_version(tx), tx.procedure).into_owned(),
        file_name: tx.file_name.clone(),
        hhash: (!tx.file_handle.is_empty()).then(|| crc32(&tx.file_handle)),
        id: tx.id + 1,
        file_tx: tx.file.is_some(),
        status: parser::status_name(tx.nfs_status).into_owned(),
        rename_to: tx.rename_to.clone(),
        file: match &tx.file {
            Some(f) => Some(NfsFileObject {
                write: f.dir == Some(crate::Dir::ToServer),
                first: tx.is_first,
                last: tx.is_last,
                last_xid: f.last_xid,
                chunks: f.chunks,
                no_file: false,
            }),
            // Suricata 8.0.6 logs an NFSv2 WRITE's `write` object, though its
            // transaction has no file.
            None if names_version(tx) == 2 && tx.procedure == parser::PROC2_WRITE => {
                Some(NfsFileObject {
                    write: true,
                    first: tx.is_first,
                    last: tx.is_last,
                    no_file: true,
                    ..NfsFileObject::default()
                })
            }
            None => None,
        },
    }
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Nfs(n) = r {
        nfs(o, n);
    }
}

fn lossy(b: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(b)
}

/// The `rpc` and `nfs` objects.
pub fn nfs(o: &mut Obj<'_>, n: &Nfs) {
    o.obj("rpc", |r| {
        r.u64("xid", u64::from(n.xid))
            .str("status", &rpc::status_name(n.rpc_status))
            .str("auth_type", &rpc::auth_name(n.auth_type));
        if n.auth_type == 1 {
            r.obj("creds", |c| {
                c.str("machine_name", &lossy(&n.machine_name))
                    .u64("uid", u64::from(n.uid))
                    .u64("gid", u64::from(n.gid));
            });
        }
    });
    o.obj("nfs", |x| {
        x.u64("version", u64::from(n.version))
            .str("procedure", &n.procedure)
            .str("filename", &lossy(&n.file_name));
        if let Some(h) = n.hhash {
            x.str("hhash", &format!("{h:x}"));
        }
        x.u64("id", n.id)
            .bool("file_tx", n.file_tx)
            .str("type", "response")
            .str("status", &n.status);
        if let Some(f) = &n.file {
            x.obj(if f.write { "write" } else { "read" }, |w| {
                w.bool("first", f.first).bool("last", f.last);
                if !f.no_file {
                    w.u64("last_xid", u64::from(f.last_xid))
                        .u64("chunks", u64::from(f.chunks));
                }
            });
        } else if let Some(to) = &n.rename_to {
            x.obj("rename", |r| {
                r.str("from", &lossy(&n.file_name)).str("to", &lossy(to));
            });
        }
    });
}
