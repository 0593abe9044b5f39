//! The inspection buffers of a DNS transaction: `dns.query` (one item per question name
//! of the query).

use super::state::DnsTx;
use crate::app::{Buf, BufferId};

pub fn buffer(tx: &DnsTx, id: BufferId, index: usize) -> Buf<'_> {
    match id {
        BufferId::DNS_QUERY => match &tx.request {
            Some(q) => q
                .questions
                .get(index)
                .map_or(Buf::Absent, |qq| Buf::Ready(&qq.name)),
            None => Buf::Absent,
        },
        _ => Buf::Absent,
    }
}
