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

/// Parses an address expression, resolving `$VARS` from `vars`.
pub fn parse_addr(s: &str, vars: &BTreeMap<String, VarValue>) -> Result<AddrExpr, String> {
    parse_addr_depth(s.trim(), vars, 0)
}

fn parse_addr_depth(
    s: &str,
    vars: &BTreeMap<String, VarValue>,
    depth: usize,
) -> Result<AddrExpr, String> {
    if depth > MAX_VAR_DEPTH {
        return Err("variables nest too deeply (a loop?)".to_string());
    }
    if s.is_empty() {
        return Err("empty address".to_string());
    }
    if let Some(rest) = s.strip_prefix('!') {
        let inner = parse_addr_depth(rest.trim(), vars, depth)?;
        if inner.is_any() {
            return Err("`!any` matches nothing".to_string());
        }
        return Ok(AddrExpr::Not(Box::new(inner)));
    }
    if let Some(body) = s.strip_prefix('[') {
        let body = body
            .strip_suffix(']')
            .ok_or_else(|| format!("unterminated list `{s}`"))?;
        let items = split_list(body)?
            .into_iter()
            .map(|i| parse_addr_depth(i, vars, depth))
            .collect::<Result<Vec<_>, _>>()?;
        if items.iter().any(AddrExpr::is_any)
            && items.iter().all(|i| !matches!(i, AddrExpr::Not(_)))
        {
            return Ok(AddrExpr::Any);
        }
        return Ok(AddrExpr::List(items));
    }
    if let Some(name) = s.strip_prefix('$') {
        return parse_addr_depth(lookup(vars, name)?.trim(), vars, depth + 1);
    }
    if s.eq_ignore_ascii_case("any") {
        return Ok(AddrExpr::Any);
    }
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

fn port_num(s: &str) -> Result<u16, String> {
    s.trim()
        .parse::<u16>()
        .map_err(|_| format!("`{s}` is not a port"))
}

/// Parses a port expression, resolving `$VARS` from `vars`.
pub fn parse_ports(s: &str, vars: &BTreeMap<String, VarValue>) -> Result<PortExpr, String> {
    parse_ports_depth(s.trim(), vars, 0)
}

fn parse_ports_depth(
    s: &str,
    vars: &BTreeMap<String, VarValue>,
    depth: usize,
) -> Result<PortExpr, String> {
    if depth > MAX_VAR_DEPTH {
        return Err("variables nest too deeply (a loop?)".to_string());
    }
    if s.is_empty() {
        return Err("empty port".to_string());
    }
    if let Some(rest) = s.strip_prefix('!') {
        let inner = parse_ports_depth(rest.trim(), vars, depth)?;
        if inner.is_any() {
            return Err("`!any` matches nothing".to_string());
        }
        return Ok(PortExpr::Not(Box::new(inner)));
    }
    if let Some(body) = s.strip_prefix('[') {
        let body = body
            .strip_suffix(']')
            .ok_or_else(|| format!("unterminated list `{s}`"))?;
        let items = split_list(body)?
            .into_iter()
            .map(|i| parse_ports_depth(i, vars, depth))
            .collect::<Result<Vec<_>, _>>()?;
        if items.iter().any(PortExpr::is_any)
            && items.iter().all(|i| !matches!(i, PortExpr::Not(_)))
        {
            return Ok(PortExpr::Any);
        }
        return Ok(PortExpr::List(items));
    }
    if let Some(name) = s.strip_prefix('$') {
        return parse_ports_depth(lookup(vars, name)?.trim(), vars, depth + 1);
    }
    if s.eq_ignore_ascii_case("any") {
        return Ok(PortExpr::Any);
    }
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
