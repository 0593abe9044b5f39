//! The inspection buffer of PostgreSQL, as Suricata's: `pgsql.query`, the text of a
//! transaction's simple query (inspected toward the server).

use super::state::{PgsqlTx, Progress};
use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId};

pub const QUERY: BufferId = BufferId::of(AppProto::Pgsql, 1);

/// The sticky buffers of PostgreSQL.
pub static BUFFERS: &[BufferDef] = &[def(
    "pgsql.query",
    &[],
    None,
    AppProto::Pgsql,
    Some(QUERY),
    None,
    false,
)];

pub fn buffer(tx: &PgsqlTx, id: BufferId, index: usize) -> Buf<'_> {
    if id != QUERY || index > 0 {
        return Buf::Absent;
    }
    match tx.query() {
        Some(q) => Buf::Ready(q),
        None if tx.req >= Progress::Done || tx.eof[0] => Buf::Absent,
        None => Buf::NotYet,
    }
}
