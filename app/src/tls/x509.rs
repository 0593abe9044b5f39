//! A minimal, bounded DER reader for what TLS logging needs from an X.509 certificate:
//! subject, issuer, serial, validity and subject alternative names, rendered as
//! Suricata renders them (`C=US, O=Example, CN=example.com`; serial as uppercase hex
//! pairs joined by `:`; times as `YYYY-MM-DDTHH:MM:SS`).

/// Deepest nesting walked (a certificate needs about 8).
pub const MAX_DEPTH: usize = 16;
/// Most RDNs rendered per name, and SANs kept per certificate.
pub const MAX_RDNS: usize = 64;
pub const MAX_SANS: usize = 256;

/// One DER element: tag and contents.
#[derive(Debug, Clone, Copy)]
struct Tlv<'a> {
    tag: u8,
    body: &'a [u8],
}

/// Reads one element at the start of `b`; returns it and the rest.
fn tlv(b: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let tag = *b.first()?;
    let l0 = *b.get(1)?;
    let (len, hdr) = if l0 < 0x80 {
        (usize::from(l0), 2)
    } else {
        let n = usize::from(l0 & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let mut len = 0usize;
        for i in 0..n {
            len = len << 8 | usize::from(*b.get(2 + i)?);
        }
        (len, 2 + n)
    };
    let body = b.get(hdr..hdr.checked_add(len)?)?;
    Some((Tlv { tag, body }, &b[hdr + len..]))
}

fn children(b: &[u8]) -> impl Iterator<Item = Tlv<'_>> {
    let mut rest = b;
    std::iter::from_fn(move || {
        let (t, r) = tlv(rest)?;
        rest = r;
        Some(t)
    })
    .take(1024)
}

/// What is logged of a certificate.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CertInfo {
    pub subject: String,
    pub issuer: String,
    pub serial: String,
    pub not_before: String,
    pub not_after: String,
    pub sans: Vec<Vec<u8>>,
}

fn oid_name(oid: &[u8]) -> Option<&'static str> {
    Some(match oid {
        [0x55, 0x04, 0x03] => "CN",
        [0x55, 0x04, 0x06] => "C",
        [0x55, 0x04, 0x07] => "L",
        [0x55, 0x04, 0x08] => "ST",
        [0x55, 0x04, 0x09] => "street",
        [0x55, 0x04, 0x0a] => "O",
        [0x55, 0x04, 0x0b] => "OU",
        [0x55, 0x04, 0x05] => "serialNumber",
        [0x55, 0x04, 0x0c] => "title",
        [0x55, 0x04, 0x2a] => "GN",
        [0x55, 0x04, 0x04] => "SN",
        [0x55, 0x04, 0x11] => "postalCode",
        [0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x01] => "Email",
        [0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x19] => "DC",
        [0x09, 0x92, 0x26, 0x89, 0x93, 0xf2, 0x2c, 0x64, 0x01, 0x01] => "UID",
        _ => return None,
    })
}

/// Dotted form of an OID.
fn oid_dotted(oid: &[u8]) -> String {
    let mut parts: Vec<u64> = Vec::new();
    let mut v: u64 = 0;
    for (i, &b) in oid.iter().enumerate() {
        v = v.saturating_mul(128) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            if parts.is_empty() && i < 8 {
                let first = (v / 40).min(2);
                parts.push(first);
                parts.push(v - first * 40);
            } else {
                parts.push(v);
            }
            v = 0;
        }
    }
    parts
        .iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

fn string_value(t: Tlv<'_>) -> String {
    match t.tag {
        // BMPString: UTF-16BE.
        0x1e => {
            let u: Vec<u16> = t
                .body
                .chunks(2)
                .map(|c| u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]))
                .collect();
            String::from_utf16_lossy(&u)
        }
        _ => String::from_utf8_lossy(t.body).into_owned(),
    }
}

/// Renders a Name (SEQUENCE OF SET OF AttributeTypeAndValue).
fn name(t: Tlv<'_>) -> String {
    let mut parts = Vec::new();
    for set in children(t.body).take(MAX_RDNS) {
        for atv in children(set.body).take(MAX_RDNS) {
            let mut it = children(atv.body);
            let (Some(oid), Some(val)) = (it.next(), it.next()) else {
                continue;
            };
            let key = oid_name(oid.body)
                .map(str::to_string)
                .unwrap_or_else(|| oid_dotted(oid.body));
            parts.push(format!("{key}={}", string_value(val)));
        }
    }
    parts.join(", ")
}

fn time(t: Tlv<'_>) -> String {
    let s = std::str::from_utf8(t.body).unwrap_or("");
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    let full = match (t.tag, digits.len()) {
        (0x17, 12) | (0x17, 10) => {
            let yy: u32 = digits[..2].parse().unwrap_or(0);
            let century = if yy < 50 { "20" } else { "19" };
            format!("{century}{digits}")
        }
        _ => digits,
    };
    if full.len() < 12 {
        return String::new();
    }
    let sec = full.get(12..14).unwrap_or("00");
    format!(
        "{}-{}-{}T{}:{}:{}",
        &full[..4],
        &full[4..6],
        &full[6..8],
        &full[8..10],
        &full[10..12],
        sec
    )
}

/// Seconds since the epoch of a UTC civil time (proleptic Gregorian calendar; days from
/// the civil date as in H. Hinnant's `days_from_civil`). `None` for an impossible date.
pub fn civil_to_epoch(y: i64, m: u32, d: u32, hh: u32, mm: u32, ss: u32) -> Option<i64> {
    if !(1..=12).contains(&m) || !(1..=31).contains(&d) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + i64::from(hh) * 3600 + i64::from(mm) * 60 + i64::from(ss))
}

/// Seconds since the epoch of a time as [`CertInfo`] renders it (`YYYY-MM-DDTHH:MM:SS`).
pub fn iso_to_epoch(s: &str) -> Option<i64> {
    let b = s.as_bytes();
    if b.len() != 19 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' {
        return None;
    }
    let n = |r: std::ops::Range<usize>| s.get(r)?.parse::<u32>().ok();
    civil_to_epoch(
        i64::from(n(0..4)?),
        n(5..7)?,
        n(8..10)?,
        n(11..13)?,
        n(14..16)?,
        n(17..19)?,
    )
}

/// Parses a DER certificate; `None` when it is not one.
pub fn parse(der: &[u8]) -> Option<CertInfo> {
    let (cert, _) = tlv(der)?;
    if cert.tag != 0x30 {
        return None;
    }
    let tbs = children(cert.body).next()?;
    if tbs.tag != 0x30 {
        return None;
    }
    let mut it = children(tbs.body).peekable();
    if it.peek()?.tag == 0xa0 {
        it.next();
    }
    let serial = it.next()?;
    let _sig = it.next()?;
    let issuer = it.next()?;
    let validity = it.next()?;
    let subject = it.next()?;
    let _spki = it.next();
    let mut info = CertInfo {
        subject: name(subject),
        issuer: name(issuer),
        serial: serial
            .body
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect::<Vec<_>>()
            .join(":"),
        ..CertInfo::default()
    };
    let mut v = children(validity.body);
    if let (Some(nb), Some(na)) = (v.next(), v.next()) {
        info.not_before = time(nb);
        info.not_after = time(na);
    }
    for rest in it {
        if rest.tag != 0xa3 {
            continue;
        }
        let Some(exts) = children(rest.body).next() else {
            continue;
        };
        for ext in children(exts.body) {
            let mut e = children(ext.body);
            let Some(oid) = e.next() else { continue };
            if oid.body != [0x55, 0x1d, 0x11] {
                continue;
            }
            let Some(val) = e.find(|t| t.tag == 0x04) else {
                continue;
            };
            let Some((seq, _)) = tlv(val.body) else {
                continue;
            };
            for gn in children(seq.body).take(MAX_SANS) {
                match gn.tag {
                    0x82 | 0x81 | 0x86 => info.sans.push(gn.body.to_vec()),
                    0x87 if gn.body.len() == 4 => {
                        let b = gn.body;
                        info.sans
                            .push(format!("{}.{}.{}.{}", b[0], b[1], b[2], b[3]).into_bytes());
                    }
                    0x87 if gn.body.len() == 16 => {
                        let mut o = [0u8; 16];
                        o.copy_from_slice(gn.body);
                        info.sans
                            .push(std::net::Ipv6Addr::from(o).to_string().into_bytes());
                    }
                    _ => {}
                }
            }
        }
    }
    Some(info)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn der(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        if body.len() < 128 {
            v.push(body.len() as u8);
        } else {
            v.push(0x82);
            v.extend_from_slice(&(body.len() as u16).to_be_bytes());
        }
        v.extend_from_slice(body);
        v
    }

    fn rdn(oid: &[u8], val: &str) -> Vec<u8> {
        let mut atv = der(0x06, oid);
        atv.extend(der(0x0c, val.as_bytes()));
        der(0x31, &der(0x30, &atv))
    }

    /// A small certificate built field by field (signature bytes are not checked).
    pub(crate) fn sample_cert() -> Vec<u8> {
        let mut issuer = rdn(&[0x55, 4, 6], "US");
        issuer.extend(rdn(&[0x55, 4, 10], "Test CA"));
        let mut subject = rdn(&[0x55, 4, 6], "US");
        subject.extend(rdn(&[0x55, 4, 3], "example.com"));
        let mut validity = der(0x17, b"230101000000Z");
        validity.extend(der(0x18, b"20340101120000Z"));
        let mut san_list = der(0x82, b"example.com");
        san_list.extend(der(0x82, b"www.example.com"));
        san_list.extend(der(0x87, &[10, 0, 0, 1]));
        let mut ext = der(0x06, &[0x55, 0x1d, 0x11]);
        ext.extend(der(0x04, &der(0x30, &san_list)));
        let exts = der(0xa3, &der(0x30, &der(0x30, &ext)));
        let mut tbs = der(0xa0, &der(0x02, &[2]));
        tbs.extend(der(0x02, &[0x00, 0xc4, 0x1f]));
        tbs.extend(der(
            0x30,
            &der(0x06, &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 11]),
        ));
        tbs.extend(der(0x30, &issuer));
        tbs.extend(der(0x30, &validity));
        tbs.extend(der(0x30, &subject));
        tbs.extend(der(0x30, &der(0x03, &[0, 1, 2])));
        tbs.extend(exts);
        let mut cert = der(0x30, &tbs);
        cert.extend(der(
            0x30,
            &der(0x06, &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 1, 1, 11]),
        ));
        cert.extend(der(0x03, &[0, 9, 9]));
        der(0x30, &cert)
    }

    #[test]
    fn renders_like_suricata() {
        let c = parse(&sample_cert()).unwrap();
        assert_eq!(c.subject, "C=US, CN=example.com");
        assert_eq!(c.issuer, "C=US, O=Test CA");
        assert_eq!(c.serial, "00:C4:1F");
        assert_eq!(c.not_before, "2023-01-01T00:00:00");
        assert_eq!(c.not_after, "2034-01-01T12:00:00");
        assert_eq!(iso_to_epoch(&c.not_before), Some(1_672_531_200));
        assert_eq!(
            c.sans,
            vec![
                b"example.com".to_vec(),
                b"www.example.com".to_vec(),
                b"10.0.0.1".to_vec()
            ]
        );
    }

    #[test]
    fn garbage_is_none() {
        assert!(parse(b"").is_none());
        assert!(parse(b"\x30\x84\xff\xff\xff\xff").is_none());
        let c = sample_cert();
        for cut in 0..c.len() {
            let _ = parse(&c[..cut]);
        }
        assert_eq!(
            oid_dotted(&[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d]),
            "1.2.840.113549"
        );
    }

    #[test]
    fn epoch_of_civil_times() {
        assert_eq!(civil_to_epoch(1970, 1, 1, 0, 0, 0), Some(0));
        assert_eq!(civil_to_epoch(2000, 3, 1, 0, 0, 0), Some(951_868_800));
        assert_eq!(
            civil_to_epoch(2015, 10, 22, 23, 59, 59),
            Some(1_445_558_399)
        );
        assert_eq!(civil_to_epoch(1969, 12, 31, 23, 59, 59), Some(-1));
        assert_eq!(civil_to_epoch(2015, 13, 1, 0, 0, 0), None);
        assert_eq!(iso_to_epoch("2015-02-12T18:07:27"), Some(1_423_764_447));
        assert_eq!(iso_to_epoch("2015-02-12"), None);
    }
}
