//! WebSocket's rule keywords, as Suricata 8's: the sticky buffer `websocket.payload`
//! (the unmasked payload of a frame; a fragmented message's final frame has the whole
//! message, a compressed one its inflated bytes) and the integer keywords
//! `websocket.opcode` (a number comparison or a name: `ping`), `websocket.flags` (a
//! number comparison on the first byte's upper four bits, or a list of `fin` and
//! `comp`, each possibly negated with `!`) and `websocket.mask` (the masking key as a
//! 32-bit big-endian number; a frame without one never matches). Each frame is a
//! transaction of its own direction.

use super::parser::OPCODES;
use super::state::WsTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const PAYLOAD_TS: BufferId = BufferId::of(AppProto::Websocket, 1);
pub const PAYLOAD_TC: BufferId = BufferId::of(AppProto::Websocket, 2);

/// The sticky buffers.
pub static BUFFERS: &[BufferDef] = &[def(
    "websocket.payload",
    &[],
    None,
    AppProto::Websocket,
    Some(PAYLOAD_TS),
    Some(PAYLOAD_TC),
    false,
)];

/// The keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("websocket.opcode", &[], parse_opcode, eval_opcode),
    KeywordDef::check("websocket.flags", &[], parse_flags, eval_flags),
    KeywordDef::check("websocket.mask", &[], parse_mask, eval_mask),
];

/// The payload buffer of `tx` for `id`, in the frame's own direction only.
pub fn buffer(tx: &WsTx, id: BufferId, index: usize) -> Buf<'_> {
    let dir = match id {
        PAYLOAD_TS => Dir::ToServer,
        PAYLOAD_TC => Dir::ToClient,
        _ => return Buf::Absent,
    };
    if dir == tx.dir && index == 0 {
        Buf::Ready(&tx.payload)
    } else {
        Buf::Absent
    }
}

/// An integer comparison whose values fit in `max`.
fn parse_uint(s: &str, max: u64) -> Result<KwValue, String> {
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
    if bound > max {
        return Err(format!("`{s}` is out of range (at most {max})"));
    }
    Ok(KwValue::Num(cmp))
}

/// `websocket.opcode`: a name of [`OPCODES`] (`!` before it: not it) or a number
/// comparison.
fn parse_opcode(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?.trim();
    let (neg, word) = crate::value::negation(s);
    if let Some(&(_, op)) = OPCODES.iter().find(|(n, _)| n.eq_ignore_ascii_case(word)) {
        let op = u64::from(op);
        return Ok(KwValue::Num(if neg {
            NumCmp::Ne(op)
        } else {
            NumCmp::Eq(op)
        }));
    }
    parse_uint(s, u64::from(u8::MAX))
}

/// `websocket.flags`: a number comparison, or `fin`, `comp` (each at most once, `!`
/// for not set) separated by commas or spaces: the named bits must be as said.
fn parse_flags(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?.trim();
    if let Ok(n) = parse_uint(s, u64::from(u8::MAX)) {
        return Ok(n);
    }
    let (mut mask, mut want) = (0u64, 0u64);
    for item in s.split([',', ' ']).map(str::trim).filter(|i| !i.is_empty()) {
        let (neg, name) = crate::value::negation(item);
        let bit = match name {
            "fin" => u64::from(super::parser::FIN),
            "comp" => u64::from(super::parser::RSV1),
            _ => return Err(format!("unknown websocket flag `{name}`")),
        };
        if mask & bit != 0 {
            return Err(format!("websocket flag `{name}` repeated"));
        }
        mask |= bit;
        if !neg {
            want |= bit;
        }
    }
    if mask == 0 {
        return Err(format!("bad value `{s}`"));
    }
    Ok(KwValue::Num(NumCmp::MaskEq(mask, want)))
}

fn parse_mask(v: Option<&str>) -> Result<KwValue, String> {
    parse_uint(required(v)?.trim(), u64::from(u32::MAX))
}

/// Evaluates `v` on the frame of `t`, when inspected in the frame's direction.
fn eval(v: &KwValue, dir: Dir, t: &dyn Transaction, get: fn(&WsTx) -> Option<u64>) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let tx = t.as_any()?.downcast_ref::<WsTx>()?;
    Some(tx.dir == dir && get(tx).is_some_and(|x| cmp.test(x)))
}

fn eval_opcode(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |tx| Some(u64::from(tx.opcode)))
}

fn eval_flags(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |tx| Some(u64::from(tx.flags)))
}

fn eval_mask(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |tx| tx.mask.map(u64::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_suricatas() {
        assert_eq!(parse_opcode(Some("ping")), Ok(KwValue::Num(NumCmp::Eq(9))));
        assert_eq!(parse_opcode(Some("!text")), Ok(KwValue::Num(NumCmp::Ne(1))));
        assert_eq!(parse_opcode(Some(">8")), Ok(KwValue::Num(NumCmp::Gt(8))));
        assert!(parse_opcode(Some("256")).is_err());
        assert!(parse_opcode(Some("nope")).is_err());
        assert_eq!(parse_flags(Some("128")), Ok(KwValue::Num(NumCmp::Eq(128))));
        assert_eq!(
            parse_flags(Some("&0x40=0x40")),
            Ok(KwValue::Num(NumCmp::MaskEq(0x40, 0x40)))
        );
        assert_eq!(
            parse_flags(Some("fin,!comp")),
            Ok(KwValue::Num(NumCmp::MaskEq(0xc0, 0x80)))
        );
        assert_eq!(
            parse_flags(Some("!fin comp")),
            Ok(KwValue::Num(NumCmp::MaskEq(0xc0, 0x40)))
        );
        assert!(parse_flags(Some("fin,fin")).is_err());
        assert!(parse_flags(Some("rsv2")).is_err());
        assert_eq!(
            parse_mask(Some("123456")),
            Ok(KwValue::Num(NumCmp::Eq(123456)))
        );
        assert_eq!(parse_mask(Some(">0")), Ok(KwValue::Num(NumCmp::Gt(0))));
        assert!(parse_mask(Some("4294967296")).is_err());
        assert!(parse_mask(None).is_err());
    }
}
