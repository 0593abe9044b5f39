//! SNMP's keywords, as Suricata's: the `snmp.community` and `snmp.usm` sticky buffers,
//! and `snmp.version` and `snmp.pdu_type` (integer comparisons). A message is
//! inspected in the direction it came only.

use super::state::SnmpTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const COMMUNITY_TS: BufferId = BufferId::of(AppProto::Snmp, 1);
pub const COMMUNITY_TC: BufferId = BufferId::of(AppProto::Snmp, 2);
pub const USM_TS: BufferId = BufferId::of(AppProto::Snmp, 3);
pub const USM_TC: BufferId = BufferId::of(AppProto::Snmp, 4);

/// The sticky buffers of SNMP.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "snmp.community",
        &[],
        None,
        AppProto::Snmp,
        Some(COMMUNITY_TS),
        Some(COMMUNITY_TC),
        false,
    ),
    def(
        "snmp.usm",
        &[],
        None,
        AppProto::Snmp,
        Some(USM_TS),
        Some(USM_TC),
        false,
    ),
];

/// [`crate::Transaction::buffer`] of an SNMP transaction.
pub fn buffer(tx: &SnmpTx, id: BufferId, index: usize) -> Buf<'_> {
    let (span, dir) = match id {
        COMMUNITY_TS => (&tx.msg.community, Dir::ToServer),
        COMMUNITY_TC => (&tx.msg.community, Dir::ToClient),
        USM_TS => (&tx.msg.usm, Dir::ToServer),
        USM_TC => (&tx.msg.usm, Dir::ToClient),
        _ => return Buf::Absent,
    };
    match span {
        Some(s) if dir == tx.dir && index == 0 => Buf::Ready(tx.bytes(s)),
        _ => Buf::Absent,
    }
}

/// SNMP's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("snmp.version", &[], parse_u32, eval_version),
    KeywordDef::check("snmp.pdu_type", &[], parse_u32, eval_pdu_type),
];

/// An unsigned 32-bit comparison (Suricata's integer keyword syntax).
pub fn parse_u32(v: Option<&str>) -> Result<KwValue, String> {
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

fn eval(
    v: &KwValue,
    dir: Dir,
    t: &dyn Transaction,
    get: impl FnOnce(&SnmpTx) -> Option<u32>,
) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let tx = t.as_any()?.downcast_ref::<SnmpTx>()?;
    if tx.dir != dir {
        return Some(false);
    }
    Some(get(tx).is_some_and(|x| cmp.test(u64::from(x))))
}

fn eval_version(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |tx| Some(tx.version))
}

fn eval_pdu_type(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |tx| tx.msg.pdu.as_ref().map(|p| p.pdu_type))
}
