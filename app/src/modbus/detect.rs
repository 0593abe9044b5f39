//! The `modbus` keyword, as Suricata's: it inspects a transaction's request (its
//! response when it has none), to the server.
//!
//! - `modbus: function <code>[, subfunction <n>]`: the request's function (a code
//!   from 1 to 255; codes without a name match each other), and the sub-function of
//!   a diagnostic request;
//! - `modbus: function [!]assigned|unassigned|public|user|reserved|all`: the
//!   function's category;
//! - `modbus: access read|write [discretes|coils|input|holding][, address <range>
//!   [, value <range>]]`: the function reads or writes (that kind of data), at an
//!   address in the range (coils and registers numbered from 1), writing a value in
//!   the range at the range's address;
//! - `modbus: unit <range>[, <function or access>]`: the unit id, and the rest.
//!
//! A range is `N`, `<N`, `>N` or `N<>M` (exclusive), as Suricata reads them.

use super::parser::{self, Data, access, category};
use super::state::ModbusTx;
use crate::descriptor::KeywordDef;
use crate::value::KwValue;
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

/// Hidden buffer: the message the keyword reads, its first byte 0 for the request
/// or 1 for the response (of a transaction without a request, as Suricata 8 reads
/// an unsolicited response), then the message's bytes.
pub const MESSAGE: BufferId = BufferId::of(AppProto::Modbus, 200);

pub fn buffer(tx: &ModbusTx, id: BufferId, index: usize) -> Buf<'_> {
    match (id, index, tx.request.as_ref().or(tx.response.as_ref())) {
        (MESSAGE, 0, Some(m)) => Buf::Ready(&m.tagged),
        _ => Buf::Absent,
    }
}

/// Modbus's keywords.
pub static KEYWORDS: &[KeywordDef] = &[KeywordDef::check("modbus", &[], parse, eval)];

/// A range as Suricata keeps it: `start == end` is one value, `start == 0` is below
/// `end`, `end == u16::MAX` is above `start`, anything else is strictly between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Range {
    start: u16,
    end: u16,
}

impl Range {
    fn has(self, v: u16) -> bool {
        if self.start == self.end {
            v == self.start
        } else if self.start == 0 {
            v < self.end
        } else if self.end == u16::MAX {
            v > self.start
        } else {
            self.start < v && v < self.end
        }
    }

    /// Whether the range meets the inclusive range `lo..=hi`.
    fn meets(self, lo: u16, hi: u16) -> bool {
        if self.start == self.end {
            self.start >= lo && self.start <= hi
        } else if self.start == 0 {
            self.end > lo
        } else if self.end == u16::MAX {
            self.start < hi
        } else {
            self.start < hi && lo < self.end
        }
    }

    const PRESENT: u64 = 1 << 63;

    fn pack(r: Option<Range>) -> u64 {
        r.map_or(0, |r| {
            Self::PRESENT | (u64::from(r.start) << 16) | u64::from(r.end)
        })
    }

    fn unpack(w: u64) -> Option<Range> {
        (w & Self::PRESENT != 0).then_some(Range {
            start: (w >> 16) as u16,
            end: w as u16,
        })
    }
}

/// The keyword's parsed value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Spec {
    unit: Option<Range>,
    /// A function code (0 for the codes without a name), and a sub-function.
    function: Option<u8>,
    subfunction: Option<u16>,
    /// Categories any of which matches.
    category: Option<u8>,
    access: Option<u8>,
    address: Option<Range>,
    value: Option<Range>,
}

impl Spec {
    fn pack(self) -> KwValue {
        let opt8 = |v: Option<u8>, shift: u32| v.map_or(0, |v| (0x100 | u64::from(v)) << shift);
        let w3 = opt8(self.function, 0)
            | opt8(self.category, 9)
            | opt8(self.access, 18)
            | self
                .subfunction
                .map_or(0, |s| (0x1_0000 | u64::from(s)) << 27);
        KwValue::Words([
            Range::pack(self.unit),
            Range::pack(self.address),
            Range::pack(self.value),
            w3,
        ])
    }

    fn unpack(v: &KwValue) -> Option<Spec> {
        let KwValue::Words([unit, address, value, w3]) = *v else {
            return None;
        };
        let opt8 = |shift: u32| {
            let x = (w3 >> shift) & 0x1ff;
            (x & 0x100 != 0).then_some(x as u8)
        };
        let sub = (w3 >> 27) & 0x1_ffff;
        Some(Spec {
            unit: Range::unpack(unit),
            function: opt8(0),
            category: opt8(9),
            access: opt8(18),
            subfunction: (sub & 0x1_0000 != 0).then_some(sub as u16),
            address: Range::unpack(address),
            value: Range::unpack(value),
        })
    }
}

/// A number of the keyword (decimal).
fn number(s: &str) -> Result<u16, String> {
    s.parse::<u16>()
        .map_err(|_| format!("`{s}` is not a number from 0 to 65535"))
}

/// `N`, `<N`, `>N` or `N<>M`.
fn range(s: &str) -> Result<Range, String> {
    let s = s.trim();
    if let Some((a, b)) = s.split_once("<>") {
        let (start, end) = (number(a.trim())?, number(b.trim())?);
        return Ok(Range { start, end });
    }
    if let Some(n) = s.strip_prefix('<') {
        return Ok(Range {
            start: 0,
            end: number(n.trim())?,
        });
    }
    if let Some(n) = s.strip_prefix('>') {
        return Ok(Range {
            start: number(n.trim())?,
            end: u16::MAX,
        });
    }
    let n = number(s)?;
    Ok(Range { start: n, end: n })
}

/// The words of `s` after `word` (which must lead it).
fn after<'a>(s: &'a str, word: &str) -> Option<&'a str> {
    let rest = s.strip_prefix(word)?;
    (rest.is_empty() || rest.starts_with(|c: char| c.is_whitespace() || c == ','))
        .then_some(rest.trim_start())
}

fn parse_function(s: &str) -> Result<Spec, String> {
    let (word, sub) = match s.split_once(',') {
        Some((w, rest)) => (w.trim(), Some(rest.trim())),
        None => (s.trim(), None),
    };
    let mut spec = Spec::default();
    if word.bytes().all(|b| b.is_ascii_digit()) && !word.is_empty() {
        let n = word
            .parse::<u8>()
            .map_err(|_| format!("bad function `{word}`"))?;
        if n == 0 {
            return Err("function 0 is not a function".into());
        }
        spec.function = Some(parser::function_code(n));
        if let Some(sub) = sub {
            let n = after(sub, "subfunction")
                .ok_or_else(|| format!("expected `subfunction <n>`, not `{sub}`"))?;
            spec.subfunction = Some(number(n)?);
        }
        return Ok(spec);
    }
    if sub.is_some() {
        return Err(format!("`{word}` takes no subfunction"));
    }
    let (neg, name) = match word.strip_prefix('!') {
        Some(n) => (true, n),
        None => (false, word),
    };
    use category::*;
    let c = match name {
        "assigned" => PUBLIC_ASSIGNED,
        "unassigned" => PUBLIC_UNASSIGNED,
        "public" => PUBLIC_ASSIGNED | PUBLIC_UNASSIGNED,
        "user" => USER_DEFINED,
        "reserved" => RESERVED,
        "all" => PUBLIC_ASSIGNED | PUBLIC_UNASSIGNED | USER_DEFINED | RESERVED,
        _ => return Err(format!("unknown function `{word}`")),
    };
    // `!` is the complement, as Suricata's flags take it.
    spec.category = Some(if neg { !c } else { c });
    Ok(spec)
}

fn parse_access(s: &str) -> Result<Spec, String> {
    let mut parts = s.split(',').map(str::trim);
    let head = parts.next().unwrap_or_default();
    let mut words = head.split_whitespace();
    let rw = match words.next() {
        Some("read") => access::READ,
        Some("write") => access::WRITE,
        other => {
            return Err(format!(
                "expected read or write, not `{}`",
                other.unwrap_or("")
            ));
        }
    };
    let kind = match words.next() {
        None => 0,
        Some("coils") => access::COILS,
        Some("holding") => access::HOLDING,
        Some(k @ ("discretes" | "input")) => {
            if rw == access::WRITE {
                return Err(format!("{k} are read only"));
            }
            if k == "input" {
                access::INPUT
            } else {
                access::DISCRETES
            }
        }
        Some(k) => return Err(format!("unknown access `{k}`")),
    };
    if let Some(w) = words.next() {
        return Err(format!("unexpected `{w}`"));
    }
    let mut spec = Spec {
        access: Some(rw | kind),
        ..Spec::default()
    };
    if let Some(p) = parts.next() {
        let r = after(p, "address").ok_or_else(|| format!("expected `address`, not `{p}`"))?;
        spec.address = Some(range(r)?);
    }
    if let Some(p) = parts.next() {
        let r = after(p, "value").ok_or_else(|| format!("expected `value`, not `{p}`"))?;
        let a = spec.address.unwrap_or(Range { start: 0, end: 1 });
        if a.start != a.end {
            return Err("a value needs one address, not a range".into());
        }
        if rw | kind == access::READ {
            return Err("a value needs write access".into());
        }
        spec.value = Some(range(r)?);
    }
    if let Some(p) = parts.next() {
        return Err(format!("unexpected `{p}`"));
    }
    Ok(spec)
}

fn parse_spec(s: &str) -> Result<Spec, String> {
    let s = s.trim().trim_matches('"').trim();
    if let Some(rest) = after(s, "function") {
        return parse_function(rest);
    }
    if let Some(rest) = after(s, "access") {
        return parse_access(rest);
    }
    if let Some(rest) = after(s, "unit") {
        let (r, more) = match rest.split_once(',') {
            Some((r, more)) => (r, Some(more.trim())),
            None => (rest, None),
        };
        let mut spec = match more {
            Some(m) => after(m, "function")
                .map(parse_function)
                .or_else(|| after(m, "access").map(parse_access))
                .unwrap_or_else(|| Err(format!("unknown option `{m}`")))?,
            None => Spec::default(),
        };
        spec.unit = Some(range(r)?);
        return Ok(spec);
    }
    Err(format!("expected function, access or unit, not `{s}`"))
}

fn parse(v: Option<&str>) -> Result<KwValue, String> {
    Ok(parse_spec(crate::value::required(v)?)?.pack())
}

/// Whether the request `m` passes `spec`.
fn matches(spec: &Spec, m: &parser::Message<'_>) -> bool {
    if let Some(u) = spec.unit
        && !u.has(u16::from(m.unit_id))
    {
        return false;
    }
    if let Some(a) = spec.access {
        let rw = a & (access::READ | access::WRITE);
        let kind = a & access::FUNC_MASK;
        if rw == 0 || m.access & rw == 0 || (kind != 0 && m.access & kind == 0) {
            return false;
        }
        let Some(addr) = spec.address else {
            return true;
        };
        match m.address_range() {
            Some((lo, hi)) if addr.meets(lo, hi) => {}
            _ => return false,
        }
        let Some(value) = spec.value else {
            return true;
        };
        return m.write_value_at(addr.start).is_some_and(|v| value.has(v));
    }
    if let Some(c) = spec.category {
        return m.category & c != 0;
    }
    match spec.function {
        Some(f) if f == m.code => match spec.subfunction {
            Some(sub) => matches!(m.data, Data::Diagnostic { sub: s, .. } if s == sub),
            None => true,
        },
        Some(_) => false,
        None => true,
    }
}

fn eval(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    if dir != Dir::ToServer {
        return Some(false);
    }
    let spec = Spec::unpack(v)?;
    let Buf::Ready([side, bytes @ ..]) = tx.buffer(MESSAGE, 0) else {
        return Some(false);
    };
    let side = if *side == 0 {
        parser::Side::Request
    } else {
        parser::Side::Response
    };
    let (m, _) = parser::parse(bytes, side).ok()?;
    Some(matches(&spec, &m))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(s: &str) -> Spec {
        let s = parse_spec(s).unwrap();
        assert_eq!(Spec::unpack(&s.pack()), Some(s));
        s
    }

    #[test]
    fn parses_suricata_forms() {
        assert_eq!(spec("function 1").function, Some(1));
        let s = spec("function 8, subfunction 4");
        assert_eq!((s.function, s.subfunction), (Some(8), Some(4)));
        assert_eq!(spec("function 200").function, Some(0));
        assert_eq!(spec("function assigned").category, Some(1));
        assert_eq!(spec("function !reserved").category, Some(!8));
        let s = spec("access write coils, address 5, value >3");
        assert_eq!(s.access, Some(access::WRITE | access::COILS));
        assert_eq!(s.address, Some(Range { start: 5, end: 5 }));
        assert_eq!(
            s.value,
            Some(Range {
                start: 3,
                end: u16::MAX
            })
        );
        let s = spec("unit >9, access read coils, address 0<>2");
        assert_eq!(
            s.unit,
            Some(Range {
                start: 9,
                end: 65535
            })
        );
        assert_eq!(s.address, Some(Range { start: 0, end: 2 }));
        let s = spec("unit 10, function 3");
        assert_eq!((s.unit.unwrap().start, s.function), (10, Some(3)));
        for bad in [
            "function 0",
            "function foo",
            "access write input",
            "access read, address 1, value 2",
            "access write, address 1<>3, value 2",
            "unit x",
            "unit 1, bogus",
            "nothing",
            "function 1, subfunction 70000",
        ] {
            assert!(parse_spec(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn matches_requests() {
        let m = |b: &'static [u8]| parser::parse(b, parser::Side::Request).unwrap().0;
        let rd = m(crate::modbus::parser::tests::RD_COILS_REQ);
        let wr = m(crate::modbus::parser::tests::WR_REG_REQ);
        let diag = m(b"\x00\x00\x00\x00\x00\x06\x0a\x08\x00\x04\x00\x00");
        assert!(matches(&spec("function 1"), &rd));
        assert!(!matches(&spec("function 1"), &wr));
        assert!(matches(&spec("function 8, subfunction 4"), &diag));
        assert!(!matches(&spec("function 8, subfunction 1"), &diag));
        assert!(matches(&spec("function assigned"), &diag));
        assert!(!matches(&spec("function !assigned"), &diag));
        assert!(matches(&spec("access read"), &rd));
        assert!(!matches(&spec("access write"), &rd));
        assert!(matches(
            &spec("unit >9, access read coils, address 0<>2"),
            &rd
        ));
        assert!(!matches(&spec("access read holding"), &rd));
        assert!(matches(&spec("unit 10"), &wr));
        assert!(!matches(&spec("unit <10"), &wr));
        assert!(matches(
            &spec("access write holding, address 6, value 11"),
            &wr
        ));
        assert!(!matches(
            &spec("access write holding, address 6, value <11"),
            &wr
        ));
        assert!(!matches(&spec("access write, address 7"), &wr));
    }
}
