//! HTTP/2 detection: the `http.*` buffers of HTTP/1 answered from a stream's headers and
//! body (as Suricata maps them), HTTP/2's own header buffers (`http2.header_name`,
//! `http2.header`), and the frame keywords (`http2.frametype`, `http2.errorcode`,
//! `http2.priority`, `http2.window`, `http2.size_update`, `http2.settings`).

use super::frame;
use super::state::{Http2Tx, Side};
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::http::detect as h1;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

/// `http2.header_name`: one item per header name, in the rule's direction.
pub const HEADER_NAME_TS: BufferId = BufferId::of(AppProto::Http2, 1);
pub const HEADER_NAME_TC: BufferId = BufferId::of(AppProto::Http2, 2);
/// `http2.header`: one item per header, `name: value`.
pub const HEADER_TS: BufferId = BufferId::of(AppProto::Http2, 3);
pub const HEADER_TC: BufferId = BufferId::of(AppProto::Http2, 4);

/// HTTP/2's own sticky buffers (the `http.*` ones are HTTP's, answered here too).
pub static BUFFERS: &[BufferDef] = &[
    def(
        "http2.header_name",
        &[],
        None,
        AppProto::Http2,
        Some(HEADER_NAME_TS),
        Some(HEADER_NAME_TC),
        true,
    ),
    def(
        "http2.header",
        &[],
        None,
        AppProto::Http2,
        Some(HEADER_TS),
        Some(HEADER_TC),
        true,
    ),
];

/// The frame keywords.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("http2.frametype", &[], parse_frametype, eval_frametype),
    KeywordDef::check("http2.errorcode", &[], parse_errorcode, eval_errorcode),
    KeywordDef::check("http2.priority", &[], parse_multi_int, eval_priority),
    KeywordDef::check("http2.window", &[], parse_multi_int, eval_window),
    KeywordDef::check("http2.size_update", &[], parse_multi_int, eval_size_update),
    KeywordDef::check("http2.settings", &[], parse_settings, eval_settings),
];

fn ready(b: &[u8]) -> Buf<'_> {
    Buf::Ready(b)
}

fn opt(v: Option<&[u8]>) -> Buf<'_> {
    v.map_or(Buf::Absent, Buf::Ready)
}

/// Buffer `id` item `index` of `tx`.
pub fn buffer<'a>(tx: &'a Http2Tx, id: BufferId, index: usize) -> Buf<'a> {
    // DNS over HTTP/2: the `dns.*` buffers of the stream's DNS messages.
    if id.proto_index() == AppProto::Dns as usize {
        let b = tx
            .doh
            .as_deref()
            .map_or(Buf::Absent, |d| crate::dns::detect::buffer(d, id, index));
        let done = tx.done(Dir::ToServer) && tx.done(Dir::ToClient);
        return if b == Buf::Absent && index == 0 && !done {
            Buf::NotYet
        } else {
            b
        };
    }
    let (dir, req) = match id {
        HEADER_NAME_TS | HEADER_TS => (Dir::ToServer, true),
        HEADER_NAME_TC | HEADER_TC => (Dir::ToClient, false),
        h1::URI
        | h1::URI_RAW
        | h1::METHOD
        | h1::PROTOCOL_REQ
        | h1::REQUEST_LINE
        | h1::HOST
        | h1::HOST_RAW
        | h1::USER_AGENT
        | h1::HEADER_REQ
        | h1::HEADER_RAW_REQ
        | h1::HEADER_NAMES_REQ
        | h1::COOKIE_REQ
        | h1::ACCEPT
        | h1::ACCEPT_ENC
        | h1::ACCEPT_LANG
        | h1::REFERER
        | h1::CONTENT_TYPE_REQ
        | h1::CONTENT_LEN_REQ
        | h1::CONNECTION_REQ
        | h1::REQUEST_BODY
        | h1::REQUEST_HEADER
        | h1::FILE_NAME_REQ
        | h1::FILE_DATA_REQ => (Dir::ToServer, true),
        _ => (Dir::ToClient, false),
    };
    if tx.global() {
        return Buf::Absent;
    }
    let s: &'a Side = tx.side(dir);
    if !s.headers_done {
        return if tx.done(dir) {
            Buf::Absent
        } else {
            Buf::NotYet
        };
    }
    let multi = matches!(
        id,
        HEADER_NAME_TS
            | HEADER_NAME_TC
            | HEADER_TS
            | HEADER_TC
            | h1::REQUEST_HEADER
            | h1::RESPONSE_HEADER
            | h1::FILE_DATA_REQ
    );
    if !multi && index > 0 {
        return Buf::Absent;
    }
    let body = |s: &'a Side| -> Buf<'a> {
        if tx.done(dir) {
            if s.body_seen {
                ready(&s.body)
            } else {
                Buf::Absent
            }
        } else if s.body.is_empty() {
            Buf::NotYet
        } else {
            Buf::Partial(&s.body)
        }
    };
    let _ = req;
    match id {
        HEADER_NAME_TS | HEADER_NAME_TC => opt(s.headers.get(index).map(|h| &h.name[..])),
        HEADER_TS | HEADER_TC | h1::REQUEST_HEADER | h1::RESPONSE_HEADER => {
            opt(s.header_items.get(index).map(|v| &v[..]))
        }
        h1::URI | h1::URI_RAW | h1::FILE_NAME_REQ => opt(s.header(b":path")),
        h1::METHOD => opt(s.header(b":method")),
        h1::PROTOCOL_REQ | h1::PROTOCOL_RESP => ready(b"HTTP/2"),
        h1::REQUEST_LINE => ready(&s.request_line),
        h1::HOST => {
            if s.host.is_empty() {
                Buf::Absent
            } else {
                ready(&s.host)
            }
        }
        h1::HOST_RAW => opt(s.header(b":authority").or_else(|| s.header(b"host"))),
        h1::USER_AGENT => opt(s.header_exact(b"user-agent")),
        h1::HEADER_REQ | h1::HEADER_RESP | h1::HEADER_RAW_REQ | h1::HEADER_RAW_RESP => {
            ready(&s.header_buf)
        }
        h1::HEADER_NAMES_REQ | h1::HEADER_NAMES_RESP => ready(&s.header_names),
        h1::COOKIE_REQ => opt(s.header_exact(b"cookie")),
        h1::COOKIE_RESP => opt(s.header_exact(b"set-cookie")),
        h1::ACCEPT => opt(s.header_exact(b"accept")),
        h1::ACCEPT_ENC => opt(s.header_exact(b"accept-encoding")),
        h1::ACCEPT_LANG => opt(s.header_exact(b"accept-language")),
        h1::REFERER => opt(s.header_exact(b"referer")),
        h1::CONTENT_TYPE_REQ | h1::CONTENT_TYPE_RESP => opt(s.header_exact(b"content-type")),
        h1::CONTENT_LEN_REQ | h1::CONTENT_LEN_RESP => opt(s.header_exact(b"content-length")),
        h1::CONNECTION_REQ | h1::CONNECTION_RESP => opt(s.header_exact(b"connection")),
        h1::STAT_CODE => opt(s.header_exact(b":status")),
        h1::SERVER => opt(s.header_exact(b"server")),
        h1::LOCATION => opt(s.header_exact(b"location")),
        h1::FILE_NAME_RESP => opt(tx.side(Dir::ToServer).header(b":path")),
        h1::REQUEST_BODY | h1::RESPONSE_BODY => body(s),
        h1::FILE_DATA_REQ => {
            if index > 0 {
                Buf::Absent
            } else {
                body(s)
            }
        }
        _ => Buf::Absent,
    }
}

fn tx_of(tx: &dyn Transaction) -> Option<&Http2Tx> {
    tx.as_any().and_then(|a| a.downcast_ref::<Http2Tx>())
}

/// A type or code by name, or a number.
fn name_or_number(v: &str, names: &[&str]) -> Option<u64> {
    let v = v.trim();
    names
        .iter()
        .position(|n| !n.is_empty() && n.eq_ignore_ascii_case(v))
        .map(|p| p as u64)
        .or_else(|| v.parse().ok())
}

fn parse_frametype(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    name_or_number(val, &frame::TYPE_NAMES)
        .filter(|&n| n <= 255)
        .map(KwValue::Exact)
        .ok_or_else(|| format!("unknown frame type `{val}`"))
}

fn eval_frametype(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let (KwValue::Exact(t), Some(tx)) = (v, tx_of(tx)) else {
        return Some(false);
    };
    // As Suricata 8: a stream's response frames do not match (only stream 0's
    // transactions match to the client).
    if dir == Dir::ToClient && !tx.global() {
        return Some(false);
    }
    let s = tx.side(dir);
    if s.frames.iter().any(|&f| u64::from(f) == *t) {
        return Some(true);
    }
    if tx.done(dir) { Some(false) } else { None }
}

fn parse_errorcode(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    name_or_number(val, &frame::ERROR_NAMES)
        .map(KwValue::Exact)
        .ok_or_else(|| format!("unknown error code `{val}`"))
}

fn eval_errorcode(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let (KwValue::Exact(c), Some(tx)) = (v, tx_of(tx)) else {
        return Some(false);
    };
    if tx.side(dir).error_code.is_some_and(|e| u64::from(e) == *c) {
        return Some(true);
    }
    if tx.done(dir) { Some(false) } else { None }
}

/// How a multi-integer keyword combines the values of a transaction (Suricata's
/// `any`, `all`, `all_or_absent`, `or_absent`, an index, `oob_or <index>`).
const MODE_ANY: u64 = 0;
const MODE_ALL: u64 = 1;
const MODE_ALL_OR_ABSENT: u64 = 2;
const MODE_OR_ABSENT: u64 = 3;
const MODE_INDEX: u64 = 4;
const MODE_OOB_OR: u64 = 5;

fn pack_cmp(c: NumCmp) -> [u64; 3] {
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

fn unpack_cmp(w: &[u64; 4]) -> NumCmp {
    let (a, b) = (w[1], w[2]);
    match w[0] & 0xff {
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

/// `<cmp>[,any|all|all_or_absent|or_absent|<index>|oob_or <index>]`: words are
/// (cmp kind | mode << 8, a, b, index as i64 bits).
fn parse_multi_int(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    let (cmp, mode) = match val.split_once(',') {
        Some((c, m)) => (c.trim(), Some(m.trim())),
        None => (val.trim(), None),
    };
    let c = parse_num_cmp(cmp).ok_or_else(|| format!("bad value `{val}`"))?;
    let (mode, index) = match mode {
        None | Some("any") => (MODE_ANY, 0i64),
        Some("all") => (MODE_ALL, 0),
        Some("all_or_absent") => (MODE_ALL_OR_ABSENT, 0),
        Some("or_absent") => (MODE_OR_ABSENT, 0),
        Some(m) if m.starts_with("oob_or") => {
            let i: i64 = m["oob_or".len()..]
                .trim()
                .parse()
                .map_err(|_| format!("bad index in `{val}`"))?;
            (MODE_OOB_OR, i)
        }
        Some(m) => match m.parse::<i64>() {
            Ok(i) => (MODE_INDEX, i),
            Err(_) => return Err(format!("unsupported modifier `{m}`")),
        },
    };
    let [k, a, b] = pack_cmp(c);
    Ok(KwValue::Words([k | (mode << 8), a, b, index as u64]))
}

fn multi_match(v: &KwValue, values: &[u64]) -> bool {
    let KwValue::Words(w) = v else {
        return false;
    };
    let c = unpack_cmp(w);
    let index = w[3] as i64;
    let at = |i: i64| -> Option<u64> {
        let n = values.len() as i64;
        let i = if i < 0 { n + i } else { i };
        usize::try_from(i).ok().and_then(|i| values.get(i)).copied()
    };
    match w[0] >> 8 {
        MODE_ALL => !values.is_empty() && values.iter().all(|&x| c.test(x)),
        MODE_ALL_OR_ABSENT => values.iter().all(|&x| c.test(x)),
        MODE_OR_ABSENT => values.is_empty() || values.iter().any(|&x| c.test(x)),
        MODE_INDEX => at(index).is_some_and(|x| c.test(x)),
        MODE_OOB_OR => at(index).is_none_or(|x| c.test(x)),
        _ => values.iter().any(|&x| c.test(x)),
    }
}

fn eval_values(
    v: &KwValue,
    dir: Dir,
    tx: &dyn Transaction,
    get: fn(&Side) -> Vec<u64>,
) -> Option<bool> {
    let tx = tx_of(tx)?;
    let values = get(tx.side(dir));
    if multi_match(v, &values) {
        return Some(true);
    }
    if tx.done(dir) { Some(false) } else { None }
}

fn eval_priority(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    eval_values(v, dir, tx, |s| {
        s.priority.map(u64::from).into_iter().collect()
    })
}

fn eval_window(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    eval_values(v, dir, tx, |s| {
        s.windows.iter().map(|&w| u64::from(w)).collect()
    })
}

fn eval_size_update(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    eval_values(v, dir, tx, |s| s.size_updates.clone())
}

/// `http2.settings:<name>[<cmp>]`: words are (id, has cmp, cmp kind, a) and b in the
/// low/high halves... packed as (id | has << 16 | kind << 24, a, b, 0).
fn parse_settings(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?.trim();
    let end = val
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(val.len());
    let (name, rest) = val.split_at(end);
    let id = name_or_number(name, &frame::SETTINGS_NAMES)
        .filter(|&n| n <= 0xffff)
        .ok_or_else(|| format!("unknown setting `{name}`"))?;
    let rest = rest.trim();
    if rest.is_empty() {
        return Ok(KwValue::Words([id, 0, 0, 0]));
    }
    let c = parse_num_cmp(rest).ok_or_else(|| format!("bad value `{rest}`"))?;
    let [k, a, b] = pack_cmp(c);
    Ok(KwValue::Words([id | (1 << 16) | (k << 24), a, b, 0]))
}

fn eval_settings(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let (KwValue::Words(w), Some(tx)) = (v, tx_of(tx)) else {
        return Some(false);
    };
    let id = (w[0] & 0xffff) as u16;
    let has_cmp = w[0] >> 16 & 1 == 1;
    let c = unpack_cmp(&[w[0] >> 24, w[1], w[2], 0]);
    let m = tx
        .side(dir)
        .settings
        .iter()
        .any(|&(i, val)| i == id && (!has_cmp || c.test(u64::from(val))));
    if m {
        return Some(true);
    }
    if tx.done(dir) { Some(false) } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keyword_values() {
        assert_eq!(parse_frametype(Some("GOAWAY")), Ok(KwValue::Exact(7)));
        assert_eq!(parse_frametype(Some("9")), Ok(KwValue::Exact(9)));
        assert!(parse_frametype(Some("NOPE")).is_err());
        assert_eq!(
            parse_errorcode(Some("INADEQUATE_SECURITY")),
            Ok(KwValue::Exact(12))
        );
        let s = parse_settings(Some("SETTINGS_HEADER_TABLE_SIZE>1000")).unwrap();
        let KwValue::Words(w) = s else { panic!() };
        assert_eq!(w[0] & 0xffff, 1);
        assert!(unpack_cmp(&[w[0] >> 24, w[1], w[2], 0]).test(4096));
        assert!(!unpack_cmp(&[w[0] >> 24, w[1], w[2], 0]).test(0));
    }

    #[test]
    fn multi_integers() {
        let v = |s| parse_multi_int(Some(s)).unwrap();
        assert!(multi_match(&v("32768"), &[1, 32768]));
        assert!(!multi_match(&v("32768,all"), &[32767, 32768]));
        assert!(multi_match(&v("32766-32769,all"), &[32767, 32768]));
        assert!(multi_match(&v("32768,all_or_absent"), &[]));
        assert!(!multi_match(&v("32768,all"), &[]));
        assert!(multi_match(&v("32768,or_absent"), &[]));
        assert!(multi_match(&v("123,oob_or 2"), &[1, 2]));
        assert!(!multi_match(&v("123,oob_or 2"), &[1, 2, 3]));
        assert!(multi_match(&v("3,-1"), &[1, 2, 3]));
    }
}
