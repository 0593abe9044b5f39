//! Address and port expressions of rule headers, with variables.
//!
//! Addresses: `any`, `$VAR`, `10.0.0.1`, `10.0.0.0/8`, `2001:db8::/32`,
//! `10.0.0.1-10.0.0.9`, `!x`, and lists `[a, b, !c]` that nest.
//! Ports: `any`, `80`, `1024:`, `:1023`, `1024:2048`, `!80`, `$VAR`, lists `[80, 443]`.
//!
//! A list matches when one of its positive members matches and none of its negated
//! members does; a list of only negated members matches everything else
//! (`[!10.0.0.1, !10.0.0.2]`). `!x` alone matches what `x` does not.

use std::collections::BTreeMap;
use std::net::IpAddr;

use meerkat_config::VarValue;

/// Variables nest (`$EXTERNAL_NET` = `!$HOME_NET`); this bounds the nesting.
const MAX_VAR_DEPTH: usize = 16;
/// Members of one list, at most.
const MAX_LIST: usize = 4096;

/// An inclusive range of addresses of one family, as integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpRange {
    pub v6: bool,
    pub lo: u128,
    pub hi: u128,
}

impl IpRange {
    fn contains(&self, ip: &IpAddr) -> bool {
        match ip {
            IpAddr::V4(a) if !self.v6 => {
                let x = u128::from(u32::from(*a));
                self.lo <= x && x <= self.hi
            }
            IpAddr::V6(a) if self.v6 => {
                let x = u128::from(*a);
                self.lo <= x && x <= self.hi
            }
            IpAddr::V6(a) if !self.v6 => {
                // An IPv4-mapped IPv6 address does not match IPv4 ranges (Suricata).
                let _ = a;
                false
            }
            _ => false,
        }
    }
}

/// A parsed address expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddrExpr {
    Any,
    Range(IpRange),
    Not(Box<AddrExpr>),
    List(Vec<AddrExpr>),
}

impl AddrExpr {
    pub fn matches(&self, ip: &IpAddr) -> bool {
        match self {
            AddrExpr::Any => true,
            AddrExpr::Range(r) => r.contains(ip),
            AddrExpr::Not(e) => !e.matches(ip),
            AddrExpr::List(items) => list_matches(
                items,
                |e| e.matches(ip),
                |e| match e {
                    AddrExpr::Not(inner) => Some(inner.as_ref()),
                    _ => None,
                },
            ),
        }
    }

    pub fn is_any(&self) -> bool {
        matches!(self, AddrExpr::Any)
    }
}

/// An address expression flattened into sorted, disjoint ranges per family: what the
/// engine evaluates (a binary search instead of walking the expression).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IpSet {
    v4: Vec<(u32, u32)>,
    v6: Vec<(u128, u128)>,
}

fn normalize<T: Copy + Ord + num_like::Step>(mut r: Vec<(T, T)>) -> Vec<(T, T)> {
    r.sort_unstable();
    let mut out: Vec<(T, T)> = Vec::with_capacity(r.len());
    for (lo, hi) in r {
        match out.last_mut() {
            Some(last) if lo <= last.1.next_or_max() => {
                if hi > last.1 {
                    last.1 = hi;
                }
            }
            _ => out.push((lo, hi)),
        }
    }
    out
}

fn complement<T: Copy + Ord + num_like::Step>(r: &[(T, T)]) -> Vec<(T, T)> {
    let mut out = Vec::new();
    let mut next = Some(T::MIN_VALUE);
    for &(lo, hi) in r {
        if let Some(n) = next
            && lo > n
        {
            out.push((n, lo.prev()));
        }
        next = hi.next();
    }
    if let Some(n) = next {
        out.push((n, T::MAX_VALUE));
    }
    out
}

fn intersect<T: Copy + Ord>(a: &[(T, T)], b: &[(T, T)]) -> Vec<(T, T)> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let lo = a[i].0.max(b[j].0);
        let hi = a[i].1.min(b[j].1);
        if lo <= hi {
            out.push((lo, hi));
        }
        if a[i].1 < b[j].1 {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

mod num_like {
    pub trait Step: Sized {
        const MIN_VALUE: Self;
        const MAX_VALUE: Self;
        fn next(self) -> Option<Self>;
        fn prev(self) -> Self;
        fn next_or_max(self) -> Self {
            self.next().unwrap_or(Self::MAX_VALUE)
        }
    }
    /// `Step` for unsigned integer types (addresses as u32/u128, ports as u16).
    macro_rules! step_for_unsigned {
        ($($t:ty),*) => {$(
            impl Step for $t {
                const MIN_VALUE: Self = <$t>::MIN;
                const MAX_VALUE: Self = <$t>::MAX;
                fn next(self) -> Option<Self> {
                    self.checked_add(1)
                }
                fn prev(self) -> Self {
                    self.saturating_sub(1)
                }
            }
        )*};
    }
    step_for_unsigned!(u16, u32, u128);
}

fn contains<T: Copy + Ord>(r: &[(T, T)], x: T) -> bool {
    let i = r.partition_point(|&(lo, _)| lo <= x);
    i > 0 && r[i - 1].1 >= x
}

impl IpSet {
    fn full() -> IpSet {
        IpSet {
            v4: vec![(0, u32::MAX)],
            v6: vec![(0, u128::MAX)],
        }
    }

    fn union(mut self, other: IpSet) -> IpSet {
        self.v4.extend(other.v4);
        self.v6.extend(other.v6);
        IpSet {
            v4: normalize(self.v4),
            v6: normalize(self.v6),
        }
    }

    fn minus(self, other: &IpSet) -> IpSet {
        IpSet {
            v4: intersect(&self.v4, &complement(&other.v4)),
            v6: intersect(&self.v6, &complement(&other.v6)),
        }
    }

    fn not(&self) -> IpSet {
        IpSet {
            v4: complement(&self.v4),
            v6: complement(&self.v6),
        }
    }

    /// Flattens an expression.
    pub fn from_expr(e: &AddrExpr) -> IpSet {
        match e {
            AddrExpr::Any => IpSet::full(),
            AddrExpr::Range(r) => {
                if r.v6 {
                    IpSet {
                        v4: Vec::new(),
                        v6: vec![(r.lo, r.hi)],
                    }
                } else {
                    IpSet {
                        v4: vec![(r.lo as u32, r.hi as u32)],
                        v6: Vec::new(),
                    }
                }
            }
            AddrExpr::Not(inner) => IpSet::from_expr(inner).not(),
            AddrExpr::List(items) => {
                let mut pos = IpSet::default();
                let mut any_pos = false;
                let mut neg = IpSet::default();
                for it in items {
                    match it {
                        AddrExpr::Not(inner) => neg = neg.union(IpSet::from_expr(inner)),
                        other => {
                            any_pos = true;
                            pos = pos.union(IpSet::from_expr(other));
                        }
                    }
                }
                let base = if any_pos { pos } else { IpSet::full() };
                base.minus(&neg)
            }
        }
    }

    pub fn matches(&self, ip: &IpAddr) -> bool {
        match ip {
            IpAddr::V4(a) => contains(&self.v4, u32::from(*a)),
            IpAddr::V6(a) => contains(&self.v6, u128::from(*a)),
        }
    }

    pub fn is_any(&self) -> bool {
        self.v4 == [(0, u32::MAX)] && self.v6 == [(0, u128::MAX)]
    }
}

/// A port expression flattened into sorted, disjoint ranges.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PortSet {
    r: Vec<(u16, u16)>,
}

impl PortSet {
    pub fn from_expr(e: &PortExpr) -> PortSet {
        let r = match e {
            PortExpr::Any => vec![(0, u16::MAX)],
            PortExpr::Range(a, b) => vec![(*a, *b)],
            PortExpr::Not(inner) => complement(&PortSet::from_expr(inner).r),
            PortExpr::List(items) => {
                let mut pos = Vec::new();
                let mut any_pos = false;
                let mut neg = Vec::new();
                for it in items {
                    match it {
                        PortExpr::Not(inner) => neg.extend(PortSet::from_expr(inner).r),
                        other => {
                            any_pos = true;
                            pos.extend(PortSet::from_expr(other).r);
                        }
                    }
                }
                let base = if any_pos {
                    normalize(pos)
                } else {
                    vec![(0, u16::MAX)]
                };
                intersect(&base, &complement(&normalize(neg)))
            }
        };
        PortSet { r: normalize(r) }
    }

    pub fn matches(&self, port: u16) -> bool {
        contains(&self.r, port)
    }

    pub fn is_any(&self) -> bool {
        self.r == [(0, u16::MAX)]
    }

    /// The port ranges, sorted and disjoint.
    pub fn ranges(&self) -> &[(u16, u16)] {
        &self.r
    }
}

/// List semantics shared by addresses and ports.
fn list_matches<T>(
    items: &[T],
    matches: impl Fn(&T) -> bool,
    negated: impl Fn(&T) -> Option<&T>,
) -> bool {
    let mut any_positive = false;
    let mut positive_hit = false;
    for item in items {
        match negated(item) {
            Some(inner) => {
                if matches(inner) {
                    return false;
                }
            }
            None => {
                any_positive = true;
                if !positive_hit && matches(item) {
                    positive_hit = true;
                }
            }
        }
    }
    positive_hit || !any_positive
}

/// A parsed port expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PortExpr {
    Any,
    Range(u16, u16),
    Not(Box<PortExpr>),
    List(Vec<PortExpr>),
}

impl PortExpr {
    pub fn matches(&self, port: u16) -> bool {
        match self {
            PortExpr::Any => true,
            PortExpr::Range(lo, hi) => *lo <= port && port <= *hi,
            PortExpr::Not(e) => !e.matches(port),
            PortExpr::List(items) => list_matches(
                items,
                |e| e.matches(port),
                |e| match e {
                    PortExpr::Not(inner) => Some(inner.as_ref()),
                    _ => None,
                },
            ),
        }
    }

    pub fn is_any(&self) -> bool {
        matches!(self, PortExpr::Any)
    }
}

/// Splits a list body at top-level commas.
fn split_list(s: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => {
                depth -= 1;
                if depth < 0 {
                    return Err(format!("unbalanced `]` in `{s}`"));
                }
            }
            ',' if depth == 0 => {
                out.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced `[` in `{s}`"));
    }
    out.push(s[start..].trim());
    if out.len() > MAX_LIST {
        return Err(format!("list of more than {MAX_LIST} members"));
    }
    Ok(out)
}

fn parse_ip(s: &str) -> Option<(bool, u128)> {
    match s.parse::<IpAddr>().ok()? {
        IpAddr::V4(a) => Some((false, u128::from(u32::from(a)))),
        IpAddr::V6(a) => Some((true, u128::from(a))),
    }
}

fn cidr(s: &str) -> Result<IpRange, String> {
    let (addr, prefix) = match s.split_once('/') {
        Some((a, p)) => (a.trim(), Some(p.trim())),
        None => (s, None),
    };
    let (v6, x) = parse_ip(addr).ok_or_else(|| format!("`{s}` is not an address"))?;
    let bits = if v6 { 128u32 } else { 32 };
    let prefix = match prefix {
        None => bits,
        Some(p) => {
            if let Ok(n) = p.parse::<u32>() {
                if n > bits {
                    return Err(format!("prefix /{n} too long in `{s}`"));
                }
                n
            } else if let (false, Some((false, m))) = (v6, parse_ip(p)) {
                // Dotted netmask, e.g. 10.0.0.0/255.0.0.0.
                let m = m as u32;
                if m.leading_ones() + m.trailing_zeros() != 32 {
                    return Err(format!("netmask `{p}` is not contiguous"));
                }
                m.leading_ones()
            } else {
                return Err(format!("bad prefix in `{s}`"));
            }
        }
    };
    let host_bits = bits - prefix;
    let host_mask: u128 = if host_bits == 128 {
        u128::MAX
    } else {
        (1u128 << host_bits) - 1
    };
    Ok(IpRange {
        v6,
        lo: x & !host_mask,
        hi: (x & !host_mask) | host_mask,
    })
}

fn lookup<'a>(vars: &'a BTreeMap<String, VarValue>, name: &str) -> Result<&'a str, String> {
    vars.get(name)
        .map(|v| v.0.as_str())
        .ok_or_else(|| format!("variable ${name} is not defined"))
}

/// The forms address and port expressions share: `!x`, `[a, b, ...]`, `$VAR` and `any`;
/// each implementation parses its own leaves (addresses, CIDRs and ranges; ports and
/// port ranges).
trait Expr: Sized {
    /// What the expression is called in errors ("address", "port").
    const WHAT: &'static str;
    const ANY: Self;
    fn not(inner: Self) -> Self;
    fn list(items: Vec<Self>) -> Self;
    fn is_any(&self) -> bool;
    fn is_not(&self) -> bool;
    fn leaf(s: &str) -> Result<Self, String>;
}

impl Expr for AddrExpr {
    const WHAT: &'static str = "address";
    const ANY: Self = AddrExpr::Any;
    fn not(inner: Self) -> Self {
        AddrExpr::Not(Box::new(inner))
    }
    fn list(items: Vec<Self>) -> Self {
        AddrExpr::List(items)
    }
    fn is_any(&self) -> bool {
        AddrExpr::is_any(self)
    }
    fn is_not(&self) -> bool {
        matches!(self, AddrExpr::Not(_))
    }
    fn leaf(s: &str) -> Result<Self, String> {
        if let Some((a, b)) = s.split_once('-') {
            let (v6a, lo) =
                parse_ip(a.trim()).ok_or_else(|| format!("`{s}` is not an address range"))?;
            let (v6b, hi) =
                parse_ip(b.trim()).ok_or_else(|| format!("`{s}` is not an address range"))?;
            if v6a != v6b || lo > hi {
                return Err(format!("`{s}` is not an address range"));
            }
            return Ok(AddrExpr::Range(IpRange { v6: v6a, lo, hi }));
        }
        cidr(s).map(AddrExpr::Range)
    }
}

impl Expr for PortExpr {
    const WHAT: &'static str = "port";
    const ANY: Self = PortExpr::Any;
    fn not(inner: Self) -> Self {
        PortExpr::Not(Box::new(inner))
    }
    fn list(items: Vec<Self>) -> Self {
        PortExpr::List(items)
    }
    fn is_any(&self) -> bool {
        PortExpr::is_any(self)
    }
    fn is_not(&self) -> bool {
        matches!(self, PortExpr::Not(_))
    }
    fn leaf(s: &str) -> Result<Self, String> {
        if let Some((a, b)) = s.split_once(':') {
            let lo = if a.trim().is_empty() { 0 } else { port_num(a)? };
            let hi = if b.trim().is_empty() {
                u16::MAX
            } else {
                port_num(b)?
            };
            if lo > hi {
                return Err(format!("`{s}` is an empty port range"));
            }
            return Ok(PortExpr::Range(lo, hi));
        }
        let p = port_num(s)?;
        Ok(PortExpr::Range(p, p))
    }
}

/// Parses an address expression, resolving `$VARS` from `vars`.
pub fn parse_addr(s: &str, vars: &BTreeMap<String, VarValue>) -> Result<AddrExpr, String> {
    parse_expr(s.trim(), vars, 0)
}

/// Parses a port expression, resolving `$VARS` from `vars`.
pub fn parse_ports(s: &str, vars: &BTreeMap<String, VarValue>) -> Result<PortExpr, String> {
    parse_expr(s.trim(), vars, 0)
}

fn parse_expr<E: Expr>(
    s: &str,
    vars: &BTreeMap<String, VarValue>,
    depth: usize,
) -> Result<E, String> {
    if depth > MAX_VAR_DEPTH {
        return Err("variables nest too deeply (a loop?)".to_string());
    }
    if s.is_empty() {
        return Err(format!("empty {}", E::WHAT));
    }
    if let Some(rest) = s.strip_prefix('!') {
        let inner: E = parse_expr(rest.trim(), vars, depth)?;
        if inner.is_any() {
            return Err("`!any` matches nothing".to_string());
        }
        return Ok(E::not(inner));
    }
    if let Some(body) = s.strip_prefix('[') {
        let body = body
            .strip_suffix(']')
            .ok_or_else(|| format!("unterminated list `{s}`"))?;
        let items = split_list(body)?
            .into_iter()
            .map(|i| parse_expr(i, vars, depth))
            .collect::<Result<Vec<E>, _>>()?;
        // `[any, x]` is any, unless a negation narrows it.
        if items.iter().any(E::is_any) && !items.iter().any(E::is_not) {
            return Ok(E::ANY);
        }
        return Ok(E::list(items));
    }
    if let Some(name) = s.strip_prefix('$') {
        return parse_expr(lookup(vars, name)?.trim(), vars, depth + 1);
    }
    if s.eq_ignore_ascii_case("any") {
        return Ok(E::ANY);
    }
    E::leaf(s)
}

fn port_num(s: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .map_err(|_| format!("`{s}` is not a port"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> BTreeMap<String, VarValue> {
        [
            ("HOME_NET", "[192.168.0.0/16,10.0.0.0/8]"),
            ("EXTERNAL_NET", "!$HOME_NET"),
            ("HTTP_PORTS", "[80,8080]"),
            ("LOOP", "$LOOP"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), VarValue(v.to_string())))
        .collect()
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn addresses() {
        let v = vars();
        let home = parse_addr("$HOME_NET", &v).unwrap();
        assert!(home.matches(&ip("10.1.2.3")));
        assert!(!home.matches(&ip("8.8.8.8")));
        let ext = parse_addr("$EXTERNAL_NET", &v).unwrap();
        assert!(ext.matches(&ip("8.8.8.8")));
        assert!(ext.matches(&ip("2001:db8::1")));
        assert!(!ext.matches(&ip("192.168.1.1")));
        let l = parse_addr("[10.0.0.0/8, !10.1.0.0/16]", &v).unwrap();
        assert!(l.matches(&ip("10.2.0.1")));
        assert!(!l.matches(&ip("10.1.0.1")));
        let only_neg = parse_addr("[!1.1.1.1, !2.2.2.2]", &v).unwrap();
        assert!(only_neg.matches(&ip("3.3.3.3")));
        assert!(!only_neg.matches(&ip("2.2.2.2")));
        let r = parse_addr("10.0.0.5-10.0.0.9", &v).unwrap();
        assert!(r.matches(&ip("10.0.0.7")) && !r.matches(&ip("10.0.0.10")));
        let v6 = parse_addr("2001:db8::/32", &v).unwrap();
        assert!(v6.matches(&ip("2001:db8:1::1")) && !v6.matches(&ip("10.0.0.1")));
        let mask = parse_addr("10.0.0.0/255.255.0.0", &v).unwrap();
        assert!(mask.matches(&ip("10.0.3.4")) && !mask.matches(&ip("10.1.0.0")));
        assert_eq!(parse_addr("[any, 1.2.3.4]", &v).unwrap(), AddrExpr::Any);
        assert!(parse_addr("0.0.0.0/0", &v).unwrap().matches(&ip("1.2.3.4")));
    }

    #[test]
    fn flattened_sets_agree_with_expressions() {
        let v = vars();
        let exprs = [
            "$HOME_NET",
            "$EXTERNAL_NET",
            "[10.0.0.0/8, !10.1.0.0/16]",
            "[!1.1.1.1, !2.2.2.2]",
            "10.0.0.5-10.0.0.9",
            "2001:db8::/32",
            "![2001:db8::/32, 10.0.0.0/8]",
            "any",
            "[1.0.0.0/8, ![1.2.0.0/16, !1.2.3.0/24]]",
        ];
        let ips = [
            "10.1.2.3",
            "8.8.8.8",
            "2001:db8::1",
            "192.168.1.1",
            "10.1.0.1",
            "10.2.0.1",
            "3.3.3.3",
            "2.2.2.2",
            "10.0.0.7",
            "10.0.0.10",
            "2001:db8:1::1",
            "::1",
            "0.0.0.0",
            "255.255.255.255",
            "1.2.3.4",
            "1.2.9.9",
            "1.9.9.9",
        ];
        for e in exprs {
            let x = parse_addr(e, &v).unwrap();
            let set = IpSet::from_expr(&x);
            for i in ips {
                assert_eq!(set.matches(&ip(i)), x.matches(&ip(i)), "{e} on {i}");
            }
        }
        let ports = [
            "$HTTP_PORTS",
            "1024:",
            "!80",
            "[1:100, !53]",
            "any",
            "[!1, !2]",
        ];
        for e in ports {
            let x = parse_ports(e, &v).unwrap();
            let set = PortSet::from_expr(&x);
            for p in [
                0u16, 1, 2, 52, 53, 54, 80, 100, 101, 1023, 1024, 8080, 65535,
            ] {
                assert_eq!(set.matches(p), x.matches(p), "{e} on {p}");
            }
        }
    }

    #[test]
    fn address_errors() {
        let v = vars();
        for bad in [
            "$NOPE",
            "$LOOP",
            "[1.1.1.1",
            "1.1.1.1/33",
            "!any",
            "foo",
            "",
            "2.2.2.2-1.1.1.1",
        ] {
            assert!(parse_addr(bad, &v).is_err(), "{bad}");
        }
    }

    #[test]
    fn ports() {
        let v = vars();
        let p = parse_ports("$HTTP_PORTS", &v).unwrap();
        assert!(p.matches(8080) && !p.matches(443));
        let r = parse_ports("1024:", &v).unwrap();
        assert!(r.matches(65535) && !r.matches(1023));
        let n = parse_ports("!80", &v).unwrap();
        assert!(n.matches(81) && !n.matches(80));
        let l = parse_ports("[1:100, !53]", &v).unwrap();
        assert!(l.matches(54) && !l.matches(53) && !l.matches(101));
        for bad in ["70000", "[80", "9:1", "!any", "x"] {
            assert!(parse_ports(bad, &v).is_err(), "{bad}");
        }
    }
}
