//! mDNS's sticky buffers (`mdns.queries.rrname`, ...): the names of the transaction's
//! one message, request or response, all `to_server` (Suricata's mDNS is one-way).

use crate::buffers::{BufferDef, def};
use crate::dns::DnsTx;
use crate::dns::detect::{Field, field};
use crate::{AppProto, Buf, BufferId};

/// `mdns.queries.rrname`: one item per question name.
pub const QUERIES: BufferId = BufferId::of(AppProto::Mdns, 1);
/// `mdns.answers.rrname`: one item per answer record name.
pub const ANSWERS: BufferId = BufferId::of(AppProto::Mdns, 2);
/// `mdns.authorities.rrname`: one item per authority record name.
pub const AUTHORITIES: BufferId = BufferId::of(AppProto::Mdns, 3);
/// `mdns.additionals.rrname`: one item per additional record name.
pub const ADDITIONALS: BufferId = BufferId::of(AppProto::Mdns, 4);
/// `mdns.response.rrname`: every name of a response (as `dns.response.rrname`).
pub const RESPONSE_RRNAME: BufferId = BufferId::of(AppProto::Mdns, 5);

const fn buf(name: &'static str, id: BufferId) -> BufferDef {
    def(name, &[], None, AppProto::Mdns, Some(id), None, true)
}

/// The sticky buffers of mDNS.
pub static BUFFERS: &[BufferDef] = &[
    buf("mdns.queries.rrname", QUERIES),
    buf("mdns.answers.rrname", ANSWERS),
    buf("mdns.authorities.rrname", AUTHORITIES),
    buf("mdns.additionals.rrname", ADDITIONALS),
    buf("mdns.response.rrname", RESPONSE_RRNAME),
];

/// [`crate::Transaction::buffer`] of an mDNS transaction.
///
/// A message that came server -> client (a unicast reply to a query's source port) has
/// no buffers: its transaction is a `to_server` one that no `to_server` packet
/// inspects in Suricata (measured: no alert on it, even at the flow's end).
pub fn buffer(tx: &DnsTx, id: BufferId, index: usize) -> Buf<'_> {
    if tx.mdns == Some(crate::Dir::ToClient) {
        return Buf::Absent;
    }
    let f = match id {
        QUERIES => Field::Question,
        ANSWERS => Field::Answer,
        AUTHORITIES => Field::Authority,
        ADDITIONALS => Field::Additional,
        RESPONSE_RRNAME => {
            return tx
                .response
                .as_ref()
                .map_or(Buf::Absent, |m| field(m, Field::AnyName, index));
        }
        _ => return Buf::Absent,
    };
    match tx.request.as_ref().or(tx.response.as_ref()) {
        Some(m) => field(m, f, index),
        None => Buf::Absent,
    }
}
