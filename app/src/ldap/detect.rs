//! LDAP's keywords, as Suricata 8's: the sticky buffers `ldap.request.dn`,
//! `ldap.request.attribute_type` (requests) and `ldap.responses.dn`,
//! `ldap.responses.message`, `ldap.responses.attribute_type` (one item per response,
//! or per attribute of the search result entries), and the integer keywords
//! `ldap.request.operation`, `ldap.responses.operation`, `ldap.responses.count` and
//! `ldap.responses.result_code` (operations and result codes by number or by name;
//! the responses' ones take an index: `N`, `-N` from the end, `any`, `all`, `all1`).

use super::parser::{self, Message};
use super::state::LdapTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const REQUEST_DN: BufferId = BufferId::of(AppProto::Ldap, 1);
pub const RESPONSES_DN: BufferId = BufferId::of(AppProto::Ldap, 2);
pub const RESPONSES_MESSAGE: BufferId = BufferId::of(AppProto::Ldap, 3);
pub const REQUEST_ATTRIBUTE_TYPE: BufferId = BufferId::of(AppProto::Ldap, 4);
pub const RESPONSES_ATTRIBUTE_TYPE: BufferId = BufferId::of(AppProto::Ldap, 5);

/// The sticky buffers of LDAP.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "ldap.request.dn",
        &[],
        None,
        AppProto::Ldap,
        Some(REQUEST_DN),
        None,
        false,
    ),
    def(
        "ldap.request.attribute_type",
        &[],
        None,
        AppProto::Ldap,
        Some(REQUEST_ATTRIBUTE_TYPE),
        None,
        true,
    ),
    def(
        "ldap.responses.dn",
        &[],
        None,
        AppProto::Ldap,
        None,
        Some(RESPONSES_DN),
        true,
    ),
    def(
        "ldap.responses.message",
        &[],
        None,
        AppProto::Ldap,
        None,
        Some(RESPONSES_MESSAGE),
        true,
    ),
    def(
        "ldap.responses.attribute_type",
        &[],
        None,
        AppProto::Ldap,
        None,
        Some(RESPONSES_ATTRIBUTE_TYPE),
        true,
    ),
];

/// A response item: final once the transaction is, else a part that more responses
/// may follow (inspected again as they come).
fn item<'a>(tx: &LdapTx, b: &'a [u8]) -> Buf<'a> {
    if tx.open() {
        Buf::Partial(b)
    } else {
        Buf::Ready(b)
    }
}

fn past_end(tx: &LdapTx) -> Buf<'static> {
    if tx.open() { Buf::NotYet } else { Buf::Absent }
}

/// [`crate::Transaction::buffer`] of an LDAP transaction.
pub fn buffer(tx: &LdapTx, id: BufferId, index: usize) -> Buf<'_> {
    match id {
        REQUEST_DN => match &tx.request {
            Some(r) if index == 0 && has_request_dn(r.op.tag) => Buf::Ready(&r.op.dn),
            _ => Buf::Absent,
        },
        REQUEST_ATTRIBUTE_TYPE => {
            let Some(r) = &tx.request else {
                return Buf::Absent;
            };
            let item = match r.op.tag {
                parser::SEARCH_REQUEST => r.op.attribute_names.get(index),
                parser::MODIFY_REQUEST | parser::ADD_REQUEST | parser::COMPARE_REQUEST => {
                    r.op.attributes.get(index).map(|a| &a.kind)
                }
                _ => None,
            };
            item.map_or(Buf::Absent, |v| Buf::Ready(v))
        }
        RESPONSES_DN | RESPONSES_MESSAGE => match tx.responses.get(index) {
            Some(m) => item(
                tx,
                if id == RESPONSES_DN {
                    response_dn(m)
                } else {
                    m.op.result.as_ref().map_or(&[][..], |r| &r.message)
                },
            ),
            None => past_end(tx),
        },
        RESPONSES_ATTRIBUTE_TYPE => {
            let kind = tx
                .responses
                .iter()
                .filter(|m| m.op.tag == parser::SEARCH_RESULT_ENTRY)
                .flat_map(|m| m.op.attributes.iter())
                .nth(index);
            match kind {
                Some(a) => item(tx, &a.kind),
                None => past_end(tx),
            }
        }
        _ => Buf::Absent,
    }
}

fn has_request_dn(tag: u8) -> bool {
    matches!(
        tag,
        parser::BIND_REQUEST
            | parser::ADD_REQUEST
            | parser::SEARCH_REQUEST
            | parser::MODIFY_REQUEST
            | parser::DEL_REQUEST
            | parser::MOD_DN_REQUEST
            | parser::COMPARE_REQUEST
    )
}

/// A response's DN as `ldap.responses.dn` has it: a search result entry's object
/// name, a result's matched DN, else empty.
fn response_dn(m: &Message) -> &[u8] {
    if m.op.tag == parser::SEARCH_RESULT_ENTRY {
        return &m.op.dn;
    }
    m.op.result.as_ref().map_or(&[][..], |r| &r.matched_dn)
}

/// LDAP's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check(
        "ldap.request.operation",
        &[],
        parse_request_operation,
        eval_request_operation,
    ),
    KeywordDef::check(
        "ldap.responses.operation",
        &[],
        parse_responses_operation,
        eval_responses_operation,
    ),
    KeywordDef::check("ldap.responses.count", &[], parse_count, eval_count),
    KeywordDef::check(
        "ldap.responses.result_code",
        &[],
        parse_result_code,
        eval_result_code,
    ),
];

/// Which responses an array keyword looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Index {
    /// Some response matches.
    Any,
    /// Every response (with the value) matches.
    All,
    /// Every response matches, and there is one.
    All1,
    /// The response at this place (negative: from the end).
    At(i32),
}

fn cmp_words(c: NumCmp) -> [u64; 3] {
    match c {
        NumCmp::Eq(a) => [0, a, 0],
        NumCmp::Ne(a) => [1, a, 0],
        NumCmp::Lt(a) => [2, a, 0],
        NumCmp::Le(a) => [3, a, 0],
        NumCmp::Gt(a) => [4, a, 0],
        NumCmp::Ge(a) => [5, a, 0],
        NumCmp::Between(a, b) => [6, a, b],
        NumCmp::NotBetween(a, b) => [7, a, b],
        NumCmp::MaskEq(a, b) => [8, a, b],
        NumCmp::MaskNe(a, b) => [9, a, b],
    }
}

fn words_cmp(w: &[u64; 4]) -> NumCmp {
    let (a, b) = (w[1], w[2]);
    match w[0] {
        0 => NumCmp::Eq(a),
        1 => NumCmp::Ne(a),
        2 => NumCmp::Lt(a),
        3 => NumCmp::Le(a),
        4 => NumCmp::Gt(a),
        5 => NumCmp::Ge(a),
        6 => NumCmp::Between(a, b),
        7 => NumCmp::NotBetween(a, b),
        8 => NumCmp::MaskEq(a, b),
        _ => NumCmp::MaskNe(a, b),
    }
}

fn index_word(i: Index) -> u64 {
    match i {
        Index::Any => 0,
        Index::All => 1 << 32,
        Index::All1 => 2 << 32,
        Index::At(n) => (3 << 32) | u64::from(n as u32),
    }
}

fn word_index(w: u64) -> Index {
    match w >> 32 {
        0 => Index::Any,
        1 => Index::All,
        2 => Index::All1,
        _ => Index::At(w as u32 as i32),
    }
}

/// An enumerated value by name (`search_request`, `!bind_request`) or an integer
/// comparison no larger than `max`.
fn enum_cmp(s: &str, names: fn(u32) -> Option<&'static str>, max: u64) -> Result<NumCmp, String> {
    let s = s.trim();
    let (neg, name) = match s.strip_prefix('!') {
        Some(r) => (true, r.trim()),
        None => (false, s),
    };
    if let Some(v) =
        (0..=u32::try_from(max).unwrap_or(u32::MAX).min(0x10000)).find(|&v| names(v) == Some(name))
    {
        let v = u64::from(v);
        return Ok(if neg { NumCmp::Ne(v) } else { NumCmp::Eq(v) });
    }
    let cmp = parse_num_cmp(s).ok_or_else(|| format!("unknown value `{s}`"))?;
    let [_, a, b] = cmp_words(cmp);
    if a.max(b) > max {
        return Err(format!("`{s}` is out of range (at most {max})"));
    }
    Ok(cmp)
}

fn op_names(v: u32) -> Option<&'static str> {
    u8::try_from(v).ok().and_then(parser::op_name)
}

fn parse_request_operation(v: Option<&str>) -> Result<KwValue, String> {
    Ok(KwValue::Num(enum_cmp(required(v)?, op_names, 255)?))
}

/// `value[,index]`.
fn parse_array(
    v: Option<&str>,
    names: fn(u32) -> Option<&'static str>,
    max: u64,
) -> Result<KwValue, String> {
    let s = required(v)?;
    let (value, index) = match s.rsplit_once(',') {
        Some((a, b)) => {
            let b = b.trim();
            let index = match b {
                "any" => Index::Any,
                "all" => Index::All,
                "all1" => Index::All1,
                n => Index::At(n.parse::<i32>().map_err(|_| format!("bad index `{n}`"))?),
            };
            (a, index)
        }
        None => (s, Index::Any),
    };
    let [k, a, b] = cmp_words(enum_cmp(value, names, max)?);
    Ok(KwValue::Words([k, a, b, index_word(index)]))
}

fn parse_responses_operation(v: Option<&str>) -> Result<KwValue, String> {
    parse_array(v, op_names, 255)
}

fn parse_result_code(v: Option<&str>) -> Result<KwValue, String> {
    parse_array(v, parser::result_name, u64::from(u32::MAX))
}

fn parse_count(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let cmp = parse_num_cmp(s).ok_or_else(|| format!("bad value `{s}`"))?;
    let [_, a, b] = cmp_words(cmp);
    if a.max(b) > u64::from(u32::MAX) {
        return Err(format!("`{s}` is out of range"));
    }
    Ok(KwValue::Num(cmp))
}

fn ldap_tx(t: &dyn Transaction) -> Option<&LdapTx> {
    t.as_any()?.downcast_ref::<LdapTx>()
}

fn eval_request_operation(v: &KwValue, dir: Dir, _now: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let tx = ldap_tx(t)?;
    if dir != Dir::ToServer {
        return Some(false);
    }
    Some(
        tx.request
            .as_ref()
            .is_some_and(|r| cmp.test(u64::from(r.op.tag))),
    )
}

/// A responses keyword's answer: a match, no match now that no response can come,
/// or not yet.
fn settle(tx: &LdapTx, hit: bool) -> Option<bool> {
    if hit || !tx.open() { Some(hit) } else { None }
}

/// Suricata's matching of an array keyword on the responses' values (`None` for a
/// response without one).
fn eval_array(
    v: &KwValue,
    dir: Dir,
    t: &dyn Transaction,
    get: fn(&Message) -> Option<u64>,
) -> Option<bool> {
    let KwValue::Words(w) = v else {
        return Some(false);
    };
    let tx = ldap_tx(t)?;
    if dir != Dir::ToClient {
        return Some(false);
    }
    let cmp = words_cmp(w);
    let values = tx.responses.iter().map(get);
    let hit = match word_index(w[3]) {
        Index::Any => values.flatten().any(|x| cmp.test(x)),
        Index::All => values.flatten().all(|x| cmp.test(x)),
        Index::All1 => {
            let mut seen = false;
            let all = values.flatten().all(|x| {
                seen = true;
                cmp.test(x)
            });
            all && seen
        }
        Index::At(i) => {
            let n = tx.responses.len();
            let at = if i < 0 {
                n.checked_sub(i.unsigned_abs() as usize)
            } else {
                Some(i as usize)
            };
            at.and_then(|k| tx.responses.get(k))
                .and_then(get)
                .is_some_and(|x| cmp.test(x))
        }
    };
    settle(tx, hit)
}

fn eval_responses_operation(v: &KwValue, dir: Dir, _now: i64, t: &dyn Transaction) -> Option<bool> {
    eval_array(v, dir, t, |m| Some(u64::from(m.op.tag)))
}

fn eval_result_code(v: &KwValue, dir: Dir, _now: i64, t: &dyn Transaction) -> Option<bool> {
    eval_array(v, dir, t, |m| {
        m.op.result.as_ref().map(|r| u64::from(r.code))
    })
}

fn eval_count(v: &KwValue, dir: Dir, _now: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let tx = ldap_tx(t)?;
    if dir != Dir::ToClient {
        return Some(false);
    }
    settle(tx, cmp.test(tx.responses.len() as u64))
}
