//! mDNS's sticky buffers (`mdns.queries.rrname`, ...): the names of the transaction's
//! one message, request or response, all `to_server` (Suricata's mDNS is one-way);
//! and its frame, `mdns.pdu`: each message.

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

/// `mdns.pdu`: a message. Suricata's mDNS frames are all `toserver`, whatever way the
/// datagram went, numbered per flow (not per direction) and attached to their
/// transaction (under its id plus one, as DNS's).
pub const FRAME_PDU: BufferId = BufferId::of(AppProto::Mdns, 100);

/// The frames of mDNS (`frame:mdns.pdu`).
pub static FRAMES: &[BufferDef] = &[def(
    "pdu",
    &[],
    None,
    AppProto::Mdns,
    Some(FRAME_PDU),
    None,
    false,
)];

/// [`crate::Transaction::frame`] of an mDNS transaction: its message's frame. A
/// unicast reply (a datagram that went server -> client) is inspected as `to_server`
/// too, when its transaction next is (Meerkat inspects a transaction by the
/// direction of its packets; Suricata inspects the frame on the reply's own packet).
pub fn frame_meta(tx: &DnsTx, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
    let f = tx.frames[0]
        .as_deref()
        .filter(|_| id == FRAME_PDU && index == 0)?;
    Some(crate::FrameMeta {
        id: f.id,
        stream_offset: None,
        complete: true,
        tx_id: Some(tx.id + 1),
        length: None,
    })
}

/// [`crate::Transaction::buffer`] of an mDNS transaction.
///
/// A message that came server -> client (a unicast reply to a query's source port) has
/// no buffers: its transaction is a `to_server` one that no `to_server` packet
/// inspects in Suricata (measured: no alert on it, even at the flow's end).
pub fn buffer(tx: &DnsTx, id: BufferId, index: usize) -> Buf<'_> {
    if id == FRAME_PDU {
        return match &tx.frames[0] {
            Some(f) if index == 0 => Buf::Ready(&f.bytes),
            _ => Buf::Absent,
        };
    }
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
