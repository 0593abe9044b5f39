//! The EVE `dcerpc` record of a call, in Suricata 8's field order: `request` (or
//! `REQUEST_LOST`), `req` for a REQUEST, `interfaces`, `response` (or `UNREPLIED`),
//! `res` for a RESPONSE, `call_id` and `rpc_version` (over UDP: `activityuuid`,
//! `seqnum` and `rpc_version` 4.0).

use meerkat_eve::Obj;
use meerkat_proto::events::{Dcerpc, DcerpcInterface, DcerpcReq, DcerpcRes};

use super::parser::{self as p, type_name, uuid_string};
use super::state::DcerpcTx;
use crate::AppRecord;

/// The record of a transaction.
pub fn record(tx: &DcerpcTx) -> Dcerpc {
    let req_shown = tx.done[0] && !tx.lost[0];
    let resp_shown = tx.done[1] && !tx.lost[1];
    let show_ifaces = req_shown && matches!(tx.req_type, Some(p::REQUEST | p::BIND));
    Dcerpc {
        request: if req_shown {
            type_name(tx.req_type.unwrap_or(p::REQUEST)).into_owned()
        } else {
            "REQUEST_LOST".into()
        },
        req: (req_shown && tx.is_request()).then(|| DcerpcReq {
            // Suricata 8 writes 0 for a connectionless call's.
            opnum: if tx.udp.is_some() {
                0
            } else {
                u32::from(tx.opnum)
            },
            frag_cnt: u32::from(tx.frags[0]),
            stub_data_size: tx.stub[0].len() as u64,
        }),
        interfaces: if show_ifaces {
            tx.interfaces
                .iter()
                .map(|i| DcerpcInterface {
                    uuid: i.uuid.to_vec(),
                    version: u32::from(i.version),
                    version_minor: u32::from(i.version_minor),
                    ack_result: i.acked.then_some(u32::from(i.result)),
                })
                .collect()
        } else {
            Vec::new()
        },
        response: if resp_shown {
            type_name(tx.resp_type.unwrap_or(p::RESPONSE)).into_owned()
        } else {
            "UNREPLIED".into()
        },
        res: (resp_shown && tx.resp_type == Some(p::RESPONSE)).then(|| DcerpcRes {
            frag_cnt: u32::from(tx.frags[1]),
            stub_data_size: tx.stub[1].len() as u64,
        }),
        call_id: tx.call_id,
        rpc_version_minor: u32::from(tx.minor),
        activity_uuid: tx.udp.as_ref().map(|u| u.activity.to_vec()),
        seqnum: tx.udp.as_ref().map_or(0, |u| u.seqnum),
    }
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Dcerpc(r) = r {
        dcerpc(o, r);
    }
}

/// The `dcerpc` object.
pub fn dcerpc(o: &mut Obj<'_>, r: &Dcerpc) {
    o.obj("dcerpc", |x| {
        x.str("request", &r.request);
        if let Some(q) = &r.req {
            x.obj("req", |q2| {
                q2.u64("opnum", u64::from(q.opnum))
                    .u64("frag_cnt", u64::from(q.frag_cnt))
                    .u64("stub_data_size", q.stub_data_size);
            });
        }
        if !r.interfaces.is_empty() {
            x.raw("interfaces", |b| {
                meerkat_eve::array(b, &r.interfaces, |o, i| {
                    o.str("uuid", &uuid_string(&i.uuid))
                        .str("version", &format!("{}.{}", i.version, i.version_minor));
                    if let Some(a) = i.ack_result {
                        o.u64("ack_result", u64::from(a));
                    }
                });
            });
        }
        x.str("response", &r.response);
        if let Some(s) = &r.res {
            x.obj("res", |s2| {
                s2.u64("frag_cnt", u64::from(s.frag_cnt))
                    .u64("stub_data_size", s.stub_data_size);
            });
        }
        match &r.activity_uuid {
            // A connectionless call (over UDP).
            Some(a) => {
                x.str("activityuuid", &uuid_string(a))
                    .u64("seqnum", u64::from(r.seqnum))
                    .str("rpc_version", "4.0");
            }
            None => {
                x.u64("call_id", u64::from(r.call_id))
                    .str("rpc_version", &format!("5.{}", r.rpc_version_minor));
            }
        }
    });
}
