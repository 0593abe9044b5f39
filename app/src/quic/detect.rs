//! QUIC's sticky buffers, as Suricata 8's: `quic.version` (the four version bytes),
//! `quic.sni`, `quic.ua`, `quic.cyu.hash` and `quic.cyu.string` (one item per CYU),
//! and on `alert quic` rules the TLS fingerprint buffers `ja3.hash`, `ja3.string`,
//! `ja4.hash` (the client's hello) and `ja3s.hash`, `ja3s.string` (the server's). A
//! packet's transaction is inspected in its own direction only.

use super::state::QuicTx;
use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId};

pub const VERSION: BufferId = BufferId::of(AppProto::Quic, 1);
pub const SNI: BufferId = BufferId::of(AppProto::Quic, 2);
pub const UA: BufferId = BufferId::of(AppProto::Quic, 3);
pub const CYU_HASH: BufferId = BufferId::of(AppProto::Quic, 4);
pub const CYU_STRING: BufferId = BufferId::of(AppProto::Quic, 5);
pub const JA3_HASH: BufferId = BufferId::of(AppProto::Quic, 6);
pub const JA3_STRING: BufferId = BufferId::of(AppProto::Quic, 7);
pub const JA3S_HASH: BufferId = BufferId::of(AppProto::Quic, 8);
pub const JA3S_STRING: BufferId = BufferId::of(AppProto::Quic, 9);
pub const JA4_HASH: BufferId = BufferId::of(AppProto::Quic, 10);

const fn both(name: &'static str, id: BufferId, multi: bool) -> BufferDef {
    def(name, &[], None, AppProto::Quic, Some(id), Some(id), multi)
}

/// The sticky buffers of QUIC.
pub static BUFFERS: &[BufferDef] = &[
    both("quic.version", VERSION, false),
    both("quic.sni", SNI, false),
    both("quic.ua", UA, false),
    both("quic.cyu.hash", CYU_HASH, true),
    both("quic.cyu.string", CYU_STRING, true),
    def(
        "ja3.hash",
        &["ja3_hash"],
        None,
        AppProto::Quic,
        Some(JA3_HASH),
        None,
        false,
    ),
    def(
        "ja3.string",
        &["ja3_string"],
        None,
        AppProto::Quic,
        Some(JA3_STRING),
        None,
        false,
    ),
    def(
        "ja3s.hash",
        &["ja3s_hash"],
        None,
        AppProto::Quic,
        None,
        Some(JA3S_HASH),
        false,
    ),
    def(
        "ja3s.string",
        &["ja3s_string"],
        None,
        AppProto::Quic,
        None,
        Some(JA3S_STRING),
        false,
    ),
    def(
        "ja4.hash",
        &["ja4_hash"],
        None,
        AppProto::Quic,
        Some(JA4_HASH),
        None,
        false,
    ),
];

fn opt(v: &Option<Vec<u8>>) -> Buf<'_> {
    v.as_deref().map_or(Buf::Absent, Buf::Ready)
}

/// [`crate::Transaction::buffer`] of a QUIC transaction.
pub fn buffer(tx: &QuicTx, id: BufferId, index: usize) -> Buf<'_> {
    let client = tx.dir == crate::Dir::ToServer;
    if index > 0 && id != CYU_HASH && id != CYU_STRING {
        return Buf::Absent;
    }
    match id {
        VERSION => Buf::Ready(&tx.version_bytes),
        SNI => opt(&tx.sni),
        UA => opt(&tx.ua),
        CYU_HASH => tx
            .cyu
            .get(index)
            .map_or(Buf::Absent, |c| Buf::Ready(&c.hash)),
        CYU_STRING => tx
            .cyu
            .get(index)
            .map_or(Buf::Absent, |c| Buf::Ready(&c.string)),
        JA3_HASH | JA3S_HASH if client == (id == JA3_HASH) && tx.ja3_string.is_some() => {
            Buf::Ready(&tx.ja3_hash)
        }
        JA3_STRING | JA3S_STRING if client == (id == JA3_STRING) => opt(&tx.ja3_string),
        JA4_HASH => opt(&tx.ja4),
        _ => Buf::Absent,
    }
}
