//! The little of BER (X.690) that SNMP messages need: one element at a time, a tag of
//! one byte, definite lengths of at most four bytes, and a structural check of nested
//! elements with a bounded depth.

/// Deepest nesting of constructed elements [`well_formed`] follows.
pub const MAX_DEPTH: usize = 16;
/// Elements [`well_formed`] visits at most in one message.
pub const MAX_ELEMENTS: usize = 4096;

pub const INTEGER: u8 = 0x02;
pub const OCTET_STRING: u8 = 0x04;
pub const OID: u8 = 0x06;
pub const SEQUENCE: u8 = 0x30;
/// SNMP's `IpAddress` (`[APPLICATION 0]`).
pub const IP_ADDRESS: u8 = 0x40;

/// Why an element could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The element runs past the data.
    Incomplete,
    /// Not an element of the forms above.
    Invalid,
}

/// One element: its identifier byte and its contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tlv<'a> {
    pub tag: u8,
    pub body: &'a [u8],
}

impl Tlv<'_> {
    pub fn constructed(&self) -> bool {
        self.tag & 0x20 != 0
    }
}

/// The element at the start of `data`, and what follows it.
pub fn read(data: &[u8]) -> Result<(Tlv<'_>, &[u8]), Error> {
    let [tag, first, rest @ ..] = data else {
        return Err(Error::Incomplete);
    };
    // High tag numbers (more identifier bytes) are not SNMP's.
    if tag & 0x1f == 0x1f {
        return Err(Error::Invalid);
    }
    let (len, rest) = if first & 0x80 == 0 {
        (usize::from(*first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        // 0x80 is the indefinite form, which DER (and SNMP) does not use.
        if n == 0 || n > 4 {
            return Err(Error::Invalid);
        }
        if rest.len() < n {
            return Err(Error::Incomplete);
        }
        let len = rest[..n]
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, &rest[n..])
    };
    if rest.len() < len {
        return Err(Error::Incomplete);
    }
    let (body, rest) = rest.split_at(len);
    Ok((Tlv { tag: *tag, body }, rest))
}

/// The element at the start of `data`, which must have tag `tag`.
pub fn expect(data: &[u8], tag: u8) -> Result<(&[u8], &[u8]), Error> {
    if data.first().is_some_and(|&t| t != tag) {
        return Err(Error::Invalid);
    }
    let (t, rest) = read(data)?;
    if t.tag != tag {
        return Err(Error::Invalid);
    }
    Ok((t.body, rest))
}

/// An INTEGER's value, which must fit 32 bits signed or unsigned (SNMP's).
pub fn int(body: &[u8]) -> Result<i64, Error> {
    if body.is_empty() || body.len() > 5 {
        return Err(Error::Invalid);
    }
    let neg = body[0] & 0x80 != 0;
    let v = body.iter().fold(if neg { -1i64 } else { 0 }, |acc, &b| {
        (acc << 8) | i64::from(b)
    });
    Ok(v)
}

/// An INTEGER element, read as an unsigned 32-bit value (`None` when negative or
/// larger).
pub fn uint(data: &[u8]) -> Result<(Option<u32>, &[u8]), Error> {
    let (body, rest) = expect(data, INTEGER)?;
    Ok((u32::try_from(int(body)?).ok(), rest))
}

/// Whether `data` is a sequence of well-formed elements, constructed ones followed
/// down to [`MAX_DEPTH`].
pub fn well_formed(data: &[u8]) -> Result<(), Error> {
    let mut budget = MAX_ELEMENTS;
    walk(data, 0, &mut budget)
}

fn walk(mut data: &[u8], depth: usize, budget: &mut usize) -> Result<(), Error> {
    if depth > MAX_DEPTH {
        return Err(Error::Invalid);
    }
    while !data.is_empty() {
        if *budget == 0 {
            return Err(Error::Invalid);
        }
        *budget -= 1;
        let (t, rest) = read(data)?;
        if t.constructed() {
            walk(t.body, depth + 1, budget)?;
        }
        data = rest;
    }
    Ok(())
}

/// Most arcs of an OID [`oid_string`] writes.
pub const MAX_OID_ARCS: usize = 128;

/// Whether `body` is an OID's contents: arcs of base-128 digits, each fitting 64
/// bits, at most [`MAX_OID_ARCS`].
pub fn oid_valid(body: &[u8]) -> bool {
    !body.is_empty() && arcs(body).all(|a| a.is_some()) && arcs(body).count() < MAX_OID_ARCS
}

/// The sub-identifiers of an OID's contents (`None` for one that overflows or is cut).
fn arcs(body: &[u8]) -> impl Iterator<Item = Option<u64>> + '_ {
    let mut i = 0;
    std::iter::from_fn(move || {
        if i >= body.len() {
            return None;
        }
        let mut v: u64 = 0;
        loop {
            let Some(&b) = body.get(i) else {
                return Some(None);
            };
            i += 1;
            if v > u64::MAX >> 7 {
                i = body.len();
                return Some(None);
            }
            v = (v << 7) | u64::from(b & 0x7f);
            if b & 0x80 == 0 {
                return Some(Some(v));
            }
        }
    })
}

/// An OID's contents in dotted form (`1.3.6.1.2.1.1.1.0`); the first sub-identifier
/// holds the first two arcs.
pub fn oid_string(body: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    for (i, a) in arcs(body).enumerate().take(MAX_OID_ARCS) {
        let a = a.unwrap_or(0);
        if i == 0 {
            let (x, y) = match a {
                0..40 => (0, a),
                40..80 => (1, a - 40),
                _ => (2, a - 80),
            };
            let _ = write!(s, "{x}.{y}");
        } else {
            let _ = write!(s, ".{a}");
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elements_lengths_and_nesting() {
        assert_eq!(
            read(b"\x04\x03abcX"),
            Ok((
                Tlv {
                    tag: 4,
                    body: b"abc"
                },
                &b"X"[..]
            ))
        );
        assert_eq!(read(b"\x04\x81\x02ab").unwrap().0.body, b"ab");
        assert_eq!(read(b"\x04\x05abc"), Err(Error::Incomplete));
        assert_eq!(read(b"\x04\x80ab"), Err(Error::Invalid));
        assert_eq!(read(b"\x1f\x01a"), Err(Error::Invalid));
        assert_eq!(int(b"\xff"), Ok(-1));
        assert_eq!(int(b"\x00\xff\xff\xff\xff"), Ok(0xffff_ffff));
        assert!(int(b"").is_err());
        assert_eq!(well_formed(b"\x30\x03\x02\x01\x00"), Ok(()));
        assert_eq!(well_formed(b"\x30\x03\x02\x02\x00"), Err(Error::Incomplete));
        // Nesting deeper than the bound is refused, not followed.
        let mut deep = vec![0x02, 0x00];
        for _ in 0..=MAX_DEPTH {
            let mut outer = vec![0x30, deep.len() as u8];
            outer.extend_from_slice(&deep);
            deep = outer;
            if deep.len() > 120 {
                break;
            }
        }
        assert_eq!(well_formed(&deep), Err(Error::Invalid));
    }

    #[test]
    fn oids() {
        assert_eq!(
            oid_string(b"\x2b\x06\x01\x02\x01\x01\x01\x00"),
            "1.3.6.1.2.1.1.1.0"
        );
        assert_eq!(
            oid_string(b"\x2b\x06\x01\x04\x01\x82\x37"),
            "1.3.6.1.4.1.311"
        );
        assert_eq!(oid_string(b"\x88\x37\x03"), "2.999.3");
        assert!(oid_valid(b"\x2b\x06"));
        assert!(!oid_valid(b"\x2b\x86"));
        assert!(!oid_valid(b""));
    }
}
