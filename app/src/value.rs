//! The value grammar of rule keywords, shared by the rule parser and the protocols'
//! keywords: integers as Suricata writes them, integer and date comparisons, and
//! [`KwValue`], what a protocol keyword's value parses into.

/// An integer comparison, as Suricata's integer keywords take them (`dsize`, `ttl`,
/// `urilen`, `bsize`, `itype`, ...): `N`, `=N`, `!N`, `!=N`, `<N`, `<=N`, `>N`, `>=N`,
/// `a-b` or `a<>b` (exclusive range), `!a-b`, `&mask=v`, `&mask!=v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumCmp {
    Eq(u64),
    Ne(u64),
    Lt(u64),
    Le(u64),
    Gt(u64),
    Ge(u64),
    /// Exclusive range.
    Between(u64, u64),
    /// Outside the exclusive range: `v <= a || v >= b`.
    NotBetween(u64, u64),
    MaskEq(u64, u64),
    MaskNe(u64, u64),
}

impl NumCmp {
    pub fn test(self, v: u64) -> bool {
        match self {
            NumCmp::Eq(a) => v == a,
            NumCmp::Ne(a) => v != a,
            NumCmp::Lt(a) => v < a,
            NumCmp::Le(a) => v <= a,
            NumCmp::Gt(a) => v > a,
            NumCmp::Ge(a) => v >= a,
            NumCmp::Between(a, b) => v > a && v < b,
            NumCmp::NotBetween(a, b) => v <= a || v >= b,
            NumCmp::MaskEq(m, x) => v & m == x,
            NumCmp::MaskNe(m, x) => v & m != x,
        }
    }
}

/// A date comparison of `tls_cert_notbefore`/`tls_cert_notafter`, in seconds since the
/// epoch (UTC): `=`, `<`, `>`, or an inclusive range `a<>b`, as Suricata's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateCmp {
    Eq(i64),
    Lt(i64),
    Gt(i64),
    Range(i64, i64),
}

impl DateCmp {
    pub fn test(self, t: i64) -> bool {
        match self {
            DateCmp::Eq(a) => t == a,
            DateCmp::Lt(a) => t < a,
            DateCmp::Gt(a) => t > a,
            DateCmp::Range(a, b) => t >= a && t <= b,
        }
    }
}

/// A protocol keyword's parsed value (see [`crate::KeywordKind::Check`]): a few shapes
/// that cover Suricata's keyword values; each keyword's evaluation knows which it made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KwValue {
    /// An integer comparison (`dns.opcode:!0`).
    Num(NumCmp),
    /// A date comparison in seconds since the epoch (`tls_cert_notafter:>2015`).
    Date(DateCmp),
    /// A set of flags, any of which matches, or with `negated` none of which
    /// (`ssl_state:client_hello|server_hello`).
    Flags { mask: u64, negated: bool },
    /// One exact value (`tls.version:1.2`).
    Exact(u64),
    /// No value (`tls_cert_expired`).
    Unit,
    /// A value of several parts that only its protocol reads, packed in words by its
    /// parse function (`modbus: unit 10, access write holding, address 5`).
    Words([u64; 4]),
}

/// A number that fits `T` (`parse_u64`'s forms: decimal, `0x` hex, size suffixes).
pub fn parse_int<T: TryFrom<u64>>(s: &str) -> Option<T> {
    parse_u64(s).and_then(|x| T::try_from(x).ok())
}

pub fn parse_u64(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(h) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        return u64::from_str_radix(h, 16).ok();
    }
    let lower = s.to_ascii_lowercase();
    for (suffix, mult) in [
        ("kib", 1u64 << 10),
        ("kb", 1 << 10),
        ("mib", 1 << 20),
        ("mb", 1 << 20),
        ("gib", 1 << 30),
        ("gb", 1 << 30),
    ] {
        if let Some(n) = lower.strip_suffix(suffix) {
            return n.trim().parse::<u64>().ok()?.checked_mul(mult);
        }
    }
    s.parse().ok()
}

/// Parses an integer comparison (see [`NumCmp`]).
pub fn parse_num_cmp(s: &str) -> Option<NumCmp> {
    let s = s.trim();
    if let Some(rest) = s.strip_prefix('&') {
        let (mask, val, ne) = if let Some((m, v)) = rest.split_once("!=") {
            (m, v, true)
        } else {
            let (m, v) = rest.split_once('=')?;
            (m, v, false)
        };
        let (m, v) = (parse_u64(mask)?, parse_u64(val)?);
        return Some(if ne {
            NumCmp::MaskNe(m, v)
        } else {
            NumCmp::MaskEq(m, v)
        });
    }
    if let Some((a, b)) = s.split_once("<>") {
        let (a, b) = (parse_u64(a)?, parse_u64(b)?);
        return (a < b).then_some(NumCmp::Between(a, b));
    }
    for (prefix, f) in [
        ("<=", NumCmp::Le as fn(u64) -> NumCmp),
        (">=", NumCmp::Ge),
        ("!=", NumCmp::Ne),
        ("<", NumCmp::Lt),
        (">", NumCmp::Gt),
        ("=", NumCmp::Eq),
    ] {
        if let Some(rest) = s.strip_prefix(prefix) {
            return parse_u64(rest).map(f);
        }
    }
    if let Some(rest) = s.strip_prefix('!') {
        if let Some((a, b)) = rest.split_once('-') {
            let (a, b) = (parse_u64(a)?, parse_u64(b)?);
            return (a < b).then_some(NumCmp::NotBetween(a, b));
        }
        return parse_u64(rest).map(NumCmp::Ne);
    }
    if let Some((a, b)) = s.split_once('-')
        && !a.trim().is_empty()
    {
        let (a, b) = (parse_u64(a)?, parse_u64(b)?);
        return (a < b).then_some(NumCmp::Between(a, b));
    }
    parse_u64(s).map(NumCmp::Eq)
}

/// A keyword's value, trimmed, which it must have (the rule parser names the keyword).
pub fn required(v: Option<&str>) -> Result<&str, String> {
    v.map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| "needs a value".to_string())
}

/// A keyword that takes no value.
pub fn no_value(v: Option<&str>) -> Result<KwValue, String> {
    match v {
        Some(_) => Err("takes no value".to_string()),
        None => Ok(KwValue::Unit),
    }
}

/// A value with an optional leading `!`: (negated, the rest trimmed).
pub fn negation(s: &str) -> (bool, &str) {
    match s.strip_prefix('!') {
        Some(rest) => (true, rest.trim()),
        None => (false, s),
    }
}
