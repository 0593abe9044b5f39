//! The inspection buffer and keywords of a DNP3 transaction, as Suricata's:
//! `dnp3.data` (`dnp3_data`), the message reassembled (application header first);
//! `dnp3.func` (`dnp3_func`), its function code by name or number; `dnp3.ind`
//! (`dnp3_ind`), the internal indications of a response; `dnp3.obj` (`dnp3_obj`), an
//! object's group and variation.
//!
//! A transaction is a message going one way: it is inspected in that direction only.
//! The function code and indications are known from its first segment; its objects
//! once its last segment is in.

use super::parser::{FUNCTION_NAMES, INDICATORS};
use super::state::Dnp3Tx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_int, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const DATA_TS: BufferId = BufferId::of(AppProto::Dnp3, 1);
pub const DATA_TC: BufferId = BufferId::of(AppProto::Dnp3, 2);

/// The sticky buffers of DNP3.
pub static BUFFERS: &[BufferDef] = &[def(
    "dnp3.data",
    &["dnp3_data"],
    None,
    AppProto::Dnp3,
    Some(DATA_TS),
    Some(DATA_TC),
    false,
)];

/// Not sticky buffers: the transaction's summary in each direction,
/// [`INFO_LEN`] bytes: function code, IIN (big endian), whether it has IIN, whether
/// its last segment is in.
pub const INFO_TS: BufferId = BufferId::of(AppProto::Dnp3, 200);
pub const INFO_TC: BufferId = BufferId::of(AppProto::Dnp3, 201);
/// Not sticky buffers: per object (item = object index), its group and variation.
pub const OBJ_TS: BufferId = BufferId::of(AppProto::Dnp3, 202);
pub const OBJ_TC: BufferId = BufferId::of(AppProto::Dnp3, 203);

pub const INFO_LEN: usize = 5;

fn dir_of(id: BufferId) -> Dir {
    match id {
        DATA_TC | INFO_TC | OBJ_TC => Dir::ToClient,
        _ => Dir::ToServer,
    }
}

/// [`Transaction::buffer`] of a DNP3 transaction.
pub fn buffer(tx: &Dnp3Tx, id: BufferId, index: usize) -> Buf<'_> {
    if dir_of(id) != tx.dir() {
        return Buf::Absent;
    }
    match id {
        DATA_TS | DATA_TC if index == 0 => {
            if tx.done {
                Buf::Ready(&tx.data)
            } else {
                Buf::Partial(&tx.data)
            }
        }
        INFO_TS | INFO_TC if index == 0 => Buf::Ready(&tx.info),
        OBJ_TS | OBJ_TC => match tx.obj_ids.get(index) {
            Some(o) => Buf::Ready(o),
            None if tx.done => Buf::Absent,
            None => Buf::NotYet,
        },
        _ => Buf::Absent,
    }
}

/// DNP3's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("dnp3.func", &["dnp3_func"], parse_func, eval_func),
    KeywordDef::check("dnp3.ind", &["dnp3_ind"], parse_ind, eval_ind),
    KeywordDef::check("dnp3.obj", &["dnp3_obj"], parse_obj, eval_obj),
];

fn info(dir: Dir, tx: &dyn Transaction) -> Option<[u8; INFO_LEN]> {
    let id = if dir == Dir::ToServer {
        INFO_TS
    } else {
        INFO_TC
    };
    match tx.buffer(id, 0) {
        Buf::Ready(b) => b.try_into().ok(),
        _ => None,
    }
}

/// `dnp3.func:<name>|<number comparison>`.
fn parse_func(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    if let Some((_, c)) = FUNCTION_NAMES
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(val))
    {
        return Ok(KwValue::Num(NumCmp::Eq(u64::from(*c))));
    }
    match parse_num_cmp(val) {
        Some(NumCmp::Eq(n)) if n > 255 => Err(format!("bad function code `{val}`")),
        Some(c) => Ok(KwValue::Num(c)),
        None => Err(format!("bad function code `{val}`")),
    }
}

fn eval_func(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(c) = v else {
        return Some(false);
    };
    Some(info(dir, tx).is_some_and(|i| c.test(u64::from(i[0]))))
}

/// `dnp3.ind:<name>[,[!]<name>...]` (any of the names set and none of the negated
/// ones), or a number comparison of the 16 bits (Suricata 9: `dnp3.ind:!0`).
fn parse_ind(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    let first = val.trim_start_matches('!').trim_start();
    if first.starts_with(|c: char| c.is_ascii_digit() || "<>=&".contains(c)) {
        return match parse_num_cmp(val) {
            Some(c) => Ok(KwValue::Num(c)),
            None => Err(format!("bad indicators `{val}`")),
        };
    }
    let (mut any, mut none) = (0u64, 0u64);
    for part in val.split(',') {
        let part = part.trim();
        let (neg, name) = match part.strip_prefix('!') {
            Some(n) => (true, n.trim()),
            None => (false, part),
        };
        let Some((_, bit)) = INDICATORS
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
        else {
            return Err(format!("bad indicator `{name}`"));
        };
        if neg {
            none |= u64::from(*bit);
        } else {
            any |= u64::from(*bit);
        }
    }
    Ok(KwValue::Flags {
        mask: any | none << 16,
        negated: false,
    })
}

fn eval_ind(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let Some(i) = info(dir, tx) else {
        return Some(false);
    };
    if i[3] == 0 {
        return Some(false);
    }
    let iin = u64::from(u16::from_be_bytes([i[1], i[2]]));
    Some(match *v {
        KwValue::Num(c) => c.test(iin),
        KwValue::Flags { mask, .. } => {
            let (any, none) = (mask & 0xffff, mask >> 16);
            (any == 0 || iin & any != 0) && iin & none == 0
        }
        _ => false,
    })
}

/// `dnp3.obj:<group>,<variation>`.
fn parse_obj(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    let bad = || format!("bad object `{val}`");
    let (g, var) = val.split_once(',').ok_or_else(bad)?;
    let g: u8 = parse_int(g.trim()).ok_or_else(bad)?;
    let var: u8 = parse_int(var.trim()).ok_or_else(bad)?;
    Ok(KwValue::Exact(u64::from(g) << 8 | u64::from(var)))
}

fn eval_obj(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Exact(want) = *v else {
        return Some(false);
    };
    let id = if dir == Dir::ToServer { OBJ_TS } else { OBJ_TC };
    for i in 0..super::state::DEFAULT_MAX_OBJECTS.max(1 << 16) {
        match tx.buffer(id, i) {
            Buf::Ready(&[g, var]) if u64::from(g) << 8 | u64::from(var) == want => {
                return Some(true);
            }
            Buf::Ready(_) => {}
            Buf::NotYet | Buf::Partial(_) => return None,
            Buf::Absent => return Some(false),
        }
    }
    Some(false)
}
