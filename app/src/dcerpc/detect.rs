//! The keywords of DCE/RPC, as Suricata's: `dcerpc.stub_data` (`dce_stub_data`, the
//! call's stub data in the inspected direction, a sticky buffer), `dcerpc.iface`
//! (`dce_iface`: the call's context is bound to this interface, accepted by the server,
//! optionally of a version, and with `any_frag` whatever the BIND's fragment flags) and
//! `dcerpc.opnum` (`dce_opnum`: the request's operation number in a list of numbers and
//! ranges, or an integer comparison). Each applies in both directions.

use super::parser::parse_uuid;
use super::state::DcerpcTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const STUB_TS: BufferId = BufferId::of(AppProto::Dcerpc, 1);
pub const STUB_TC: BufferId = BufferId::of(AppProto::Dcerpc, 2);

/// The sticky buffers of DCE/RPC.
pub static BUFFERS: &[BufferDef] = &[def(
    "dcerpc.stub_data",
    &["dce_stub_data"],
    None,
    AppProto::Dcerpc,
    Some(STUB_TS),
    Some(STUB_TC),
    false,
)];

pub fn buffer(tx: &DcerpcTx, id: BufferId, index: usize) -> Buf<'_> {
    let d = match id {
        STUB_TS => 0,
        STUB_TC => 1,
        _ => return Buf::Absent,
    };
    if index > 0 {
        return Buf::Absent;
    }
    let complete = tx.done[d] || tx.eof[d];
    match (&tx.stub[d], complete) {
        (s, true) if s.is_empty() => Buf::Absent,
        (s, true) => Buf::Ready(s),
        (s, false) if s.is_empty() => Buf::NotYet,
        (s, false) => Buf::Partial(s),
    }
}

/// The DCE/RPC call of a transaction: a DCE/RPC one's, or the call an SMB transaction
/// carried over a named pipe.
pub fn call_of(t: &dyn Transaction) -> Option<&DcerpcTx> {
    let any = t.as_any()?;
    any.downcast_ref::<DcerpcTx>()
        .or_else(|| any.downcast_ref::<crate::smb::SmbTx>()?.dce())
}

/// DCE/RPC's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("dcerpc.iface", &["dce_iface"], parse_iface, eval_iface),
    KeywordDef::check("dcerpc.opnum", &["dce_opnum"], parse_opnum, eval_opnum),
];

/// A comparison of a 16-bit number packed in a word: its kind in the top byte, its
/// operands below (`0`: none).
fn pack_cmp(c: NumCmp) -> Result<u64, String> {
    let (tag, a, b) = match c {
        NumCmp::Eq(a) => (1, a, 0),
        NumCmp::Ne(a) => (2, a, 0),
        NumCmp::Lt(a) => (3, a, 0),
        NumCmp::Le(a) => (4, a, 0),
        NumCmp::Gt(a) => (5, a, 0),
        NumCmp::Ge(a) => (6, a, 0),
        NumCmp::Between(a, b) => (7, a, b),
        NumCmp::NotBetween(a, b) => (8, a, b),
        NumCmp::MaskEq(..) | NumCmp::MaskNe(..) => {
            return Err("a bitmask comparison is not a version".into());
        }
    };
    if a > 0xffff || b > 0xffff {
        return Err("out of range (at most 65535)".into());
    }
    Ok(tag << 56 | a << 16 | b)
}

fn unpack_cmp(w: u64) -> Option<NumCmp> {
    let (a, b) = ((w >> 16) & 0xffff, w & 0xffff);
    Some(match w >> 56 {
        1 => NumCmp::Eq(a),
        2 => NumCmp::Ne(a),
        3 => NumCmp::Lt(a),
        4 => NumCmp::Le(a),
        5 => NumCmp::Gt(a),
        6 => NumCmp::Ge(a),
        7 => NumCmp::Between(a, b),
        8 => NumCmp::NotBetween(a, b),
        _ => return None,
    })
}

/// `uuid[,<version comparison>][,any_frag]`, packed: the UUID's two halves, the
/// version comparison (0: any version) and `any_frag`.
fn parse_iface(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    let uuid = parse_uuid(parts[0]).ok_or_else(|| format!("`{}` is not a UUID", parts[0]))?;
    let (mut version, mut any_frag) = (0u64, false);
    match parts[1..] {
        [] => {}
        ["any_frag"] => any_frag = true,
        [ver] => version = parse_version(ver)?,
        [ver, "any_frag"] => {
            version = parse_version(ver)?;
            any_frag = true;
        }
        _ => return Err(format!("bad value `{s}`")),
    }
    let hi = u64::from_be_bytes(uuid[..8].try_into().expect("8 bytes"));
    let lo = u64::from_be_bytes(uuid[8..].try_into().expect("8 bytes"));
    Ok(KwValue::Words([hi, lo, version, u64::from(any_frag)]))
}

fn parse_version(s: &str) -> Result<u64, String> {
    let c = parse_num_cmp(s).ok_or_else(|| format!("bad interface version `{s}`"))?;
    pack_cmp(c)
}

fn eval_iface(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Words([hi, lo, version, any_frag]) = *v else {
        return Some(false);
    };
    let tx = call_of(t)?;
    if !tx.is_request() {
        // A call whose request was not seen: nothing to tell until it is (or the side
        // ends).
        return if tx.done[dir.index()] || tx.eof[dir.index()] || tx.req_type.is_some() {
            Some(false)
        } else {
            None
        };
    }
    let mut uuid = [0u8; 16];
    uuid[..8].copy_from_slice(&hi.to_be_bytes());
    uuid[8..].copy_from_slice(&lo.to_be_bytes());
    let version = unpack_cmp(version);
    Some(tx.interfaces.iter().any(|i| {
        (any_frag != 0 || i.first_frag)
            && i.acked
            && i.result == 0
            && i.uuid == uuid
            && i.ctx_id == tx.ctx_id
            && version.is_none_or(|c| c.test(u64::from(i.version)))
    }))
}

/// Opnum ranges a `dcerpc.opnum` list may hold (packed two to a word).
pub const MAX_OPNUM_RANGES: usize = 8;
/// An unused range slot (no range has its low end above its high end).
const NO_RANGE: u64 = 0xffff_0000;

/// `n[,n-m]...` (numbers and inclusive ranges), packed as ranges of 32 bits two to a
/// word; or Suricata's integer comparison (`>5`), as [`KwValue::Num`].
fn parse_opnum(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let mut words = [NO_RANGE << 32 | NO_RANGE; 4];
    let mut list_ok = true;
    for (ranges, part) in s.split(',').map(str::trim).enumerate() {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse::<u16>(), b.trim().parse::<u16>()),
            None => (part.parse::<u16>(), part.parse::<u16>()),
        };
        let (Ok(lo), Ok(hi)) = (lo, hi) else {
            list_ok = false;
            break;
        };
        if hi < lo {
            return Err(format!("range `{part}` ends before it starts"));
        }
        if ranges == MAX_OPNUM_RANGES {
            return Err(format!("at most {MAX_OPNUM_RANGES} numbers or ranges"));
        }
        let r = u64::from(lo) << 16 | u64::from(hi);
        let w = &mut words[ranges / 2];
        *w = if ranges.is_multiple_of(2) {
            (*w & 0xffff_ffff) | r << 32
        } else {
            (*w & !0xffff_ffff) | r
        };
    }
    if list_ok {
        return Ok(KwValue::Words(words));
    }
    match parse_num_cmp(s) {
        Some(c) => {
            pack_cmp(c)?;
            Ok(KwValue::Num(c))
        }
        None => Err(format!("bad value `{s}`")),
    }
}

fn opnum_matches(v: &KwValue, opnum: u16) -> bool {
    let x = u64::from(opnum);
    match v {
        KwValue::Num(c) => c.test(x),
        KwValue::Words(words) => words.iter().any(|w| {
            [w >> 32, w & 0xffff_ffff]
                .into_iter()
                .filter(|&r| r != NO_RANGE)
                .any(|r| (r >> 16..=r & 0xffff).contains(&x))
        }),
        _ => false,
    }
}

fn eval_opnum(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let tx = call_of(t)?;
    if !tx.is_request() || tx.udp.is_some() {
        return if tx.done[dir.index()] || tx.eof[dir.index()] || tx.req_type.is_some() {
            Some(false)
        } else {
            None
        };
    }
    Some(opnum_matches(v, tx.opnum))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opnum_values() {
        let v = parse_opnum(Some("1,3-5, 9")).unwrap();
        let hits: Vec<u16> = (0..12).filter(|&n| opnum_matches(&v, n)).collect();
        assert_eq!(hits, vec![1, 3, 4, 5, 9]);
        let v = parse_opnum(Some(">=10")).unwrap();
        assert!(opnum_matches(&v, 10) && !opnum_matches(&v, 9));
        assert!(parse_opnum(Some("5-3")).is_err());
        assert!(parse_opnum(Some("1,2,3,4,5,6,7,8,9")).is_err());
        let v = parse_opnum(Some("0,1,2,3,4,5,6,65535")).unwrap();
        assert!(opnum_matches(&v, 65535) && !opnum_matches(&v, 7));
        assert!(parse_opnum(Some("x")).is_err());
        assert!(parse_opnum(None).is_err());
    }

    #[test]
    fn iface_values() {
        let KwValue::Words(w) =
            parse_iface(Some("12345678-1234-abcd-ef00-01234567cffb,>1,any_frag")).unwrap()
        else {
            panic!()
        };
        assert_eq!(w[0], 0x1234_5678_1234_abcd);
        assert_eq!(unpack_cmp(w[2]), Some(NumCmp::Gt(1)));
        assert_eq!(w[3], 1);
        assert!(parse_iface(Some("12345678-1234-abcd-ef00-01234567cffb,any_frag,>1")).is_err());
        assert!(parse_iface(Some("nope")).is_err());
        assert!(parse_iface(Some("12345678-1234-abcd-ef00-01234567cffb,<70000")).is_err());
    }
}
