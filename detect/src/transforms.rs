//! Transforms that rules apply to a sticky buffer before inspecting it
//! (`http.uri; to_lowercase; content:...`), with Suricata's semantics.

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};

use crate::rules::{Base64Mode, Transform};

/// Output of `zlib_deflate` when the rule gives no `max-size`, bytes.
pub const DEFAULT_ZLIB_MAX: u32 = 64 * 1024;

fn b64_value(b: u8) -> Option<u32> {
    Some(u32::from(match b {
        b'A'..=b'Z' => b - b'A',
        b'a'..=b'z' => b - b'a' + 26,
        b'0'..=b'9' => b - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => return None,
    }))
}

/// Base64 decoding as Suricata's `from_base64` does it: stops at padding; bytes
/// outside the alphabet end the decoding (RFC 4648), are skipped (RFC 2045), or make
/// it fail, leaving nothing (strict).
fn from_base64(input: &[u8], mode: Base64Mode, out: &mut Vec<u8>) {
    let (mut acc, mut n) = (0u32, 0);
    for &b in input {
        if b == b'=' {
            break;
        }
        match b64_value(b) {
            Some(v) => {
                acc = acc << 6 | v;
                n += 1;
                if n == 4 {
                    out.extend_from_slice(&acc.to_be_bytes()[1..]);
                    (acc, n) = (0, 0);
                }
            }
            None => match mode {
                Base64Mode::Rfc2045 => {}
                Base64Mode::Rfc4648 => break,
                Base64Mode::Strict => {
                    out.clear();
                    return;
                }
            },
        }
    }
    // A last, partial group still holds whole bytes.
    match n {
        2 => out.push((acc >> 4) as u8),
        3 => out.extend_from_slice(&((acc >> 2) as u16).to_be_bytes()),
        _ => {}
    }
}

/// Inflates a zlib stream into `out`, at most `max` bytes; what inflated before an
/// error is kept.
fn zlib_inflate(input: &[u8], max: usize, out: &mut Vec<u8>) {
    // Deflate expands at most ~1032 times: no need for room beyond that.
    let max = max.min(input.len().saturating_mul(1032));
    let mut z = flate2::Decompress::new(true);
    out.resize(max, 0);
    let mut produced = 0;
    while produced < max {
        let used_in = usize::try_from(z.total_in()).unwrap_or(usize::MAX);
        let rest = input.get(used_in..).unwrap_or(&[]);
        let r = z.decompress(rest, &mut out[produced..], flate2::FlushDecompress::Finish);
        let now = usize::try_from(z.total_out()).unwrap_or(max).min(max);
        let progressed = now > produced || z.total_in() as usize > used_in;
        produced = now;
        match r {
            Ok(flate2::Status::StreamEnd) | Err(_) => break,
            Ok(_) if !progressed => break,
            Ok(_) => {}
        }
    }
    out.truncate(produced);
}

fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

fn hex_val(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Applies one transform to `input`, writing the result to `out` (cleared first).
pub fn apply(t: &Transform, input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    match t {
        Transform::DotPrefix => {
            out.push(b'.');
            out.extend_from_slice(input);
        }
        Transform::ToLowercase => out.extend(input.iter().map(u8::to_ascii_lowercase)),
        Transform::ToUppercase => out.extend(input.iter().map(u8::to_ascii_uppercase)),
        Transform::StripWhitespace => out.extend(input.iter().copied().filter(|&b| !is_space(b))),
        Transform::CompressWhitespace => {
            let mut prev_space = false;
            for &b in input {
                if is_space(b) {
                    if !prev_space {
                        out.push(b' ');
                    }
                    prev_space = true;
                } else {
                    out.push(b);
                    prev_space = false;
                }
            }
        }
        Transform::UrlDecode => {
            let mut i = 0;
            while i < input.len() {
                let b = input[i];
                if b == b'%'
                    && let (Some(h), Some(l)) = (
                        input.get(i + 1).copied().and_then(hex_val),
                        input.get(i + 2).copied().and_then(hex_val),
                    )
                {
                    out.push(h << 4 | l);
                    i += 3;
                    continue;
                }
                out.push(if b == b'+' { b' ' } else { b });
                i += 1;
            }
        }
        Transform::ToSha256 => out.extend_from_slice(&Sha256::digest(input)),
        Transform::ToMd5 => out.extend_from_slice(&Md5::digest(input)),
        Transform::ToSha1 => out.extend_from_slice(&Sha1::digest(input)),
        Transform::HeaderLowercase => {
            let mut in_name = true;
            for &b in input {
                if b == b'\n' {
                    in_name = true;
                    out.push(b);
                } else if in_name && b == b':' {
                    in_name = false;
                    out.push(b);
                } else if in_name {
                    out.push(b.to_ascii_lowercase());
                } else {
                    out.push(b);
                }
            }
        }
        Transform::StripPseudoHeaders => {
            for line in input.split_inclusive(|&b| b == b'\n') {
                if !line.starts_with(b":") {
                    out.extend_from_slice(line);
                }
            }
        }
        // As Suricata 8 (which uses the same list through the same crate): the
        // registrable domain, or its suffix; nothing when the name has no registrable
        // domain (a bare suffix, an unknown suffix's single label, an IP address).
        Transform::Domain => {
            if let Some(d) = psl::domain(input) {
                out.extend_from_slice(d.as_bytes());
            }
        }
        Transform::Tld => {
            if let Some(d) = psl::domain(input) {
                out.extend_from_slice(d.suffix().as_bytes());
            }
        }
        Transform::Xor(key) => {
            out.extend(input.iter().zip(key.iter().cycle()).map(|(b, k)| b ^ k));
        }
        Transform::FromBase64 {
            offset,
            bytes,
            mode,
        } => {
            let rest = input.get(*offset as usize..).unwrap_or(&[]);
            let rest = match *bytes {
                0 => rest,
                n => &rest[..rest.len().min(n as usize)],
            };
            from_base64(rest, *mode, out);
        }
        Transform::ZlibDeflate { max_size } => zlib_inflate(input, *max_size as usize, out),
        Transform::PcreXform(x) => match x.regex.captures(input) {
            // The first capture group (the whole match without one).
            Ok(Some(c)) => {
                if let Some(m) = c.get(1).or_else(|| c.get(0)) {
                    out.extend_from_slice(m.as_bytes());
                }
            }
            // No match (or a match-limit error): the buffer is left as it was.
            _ => out.extend_from_slice(input),
        },
    }
}

/// Applies a chain of transforms; the result is in `out`.
pub fn apply_all(ts: &[Transform], input: &[u8], out: &mut Vec<u8>) {
    let mut tmp = Vec::new();
    out.clear();
    out.extend_from_slice(input);
    for t in ts {
        std::mem::swap(out, &mut tmp);
        apply(t, &tmp, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(x: Transform, input: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        apply(&x, input, &mut out);
        out
    }

    #[test]
    fn transforms() {
        assert_eq!(t(Transform::DotPrefix, b"example.com"), b".example.com");
        assert_eq!(t(Transform::ToLowercase, b"AbC"), b"abc");
        assert_eq!(t(Transform::StripWhitespace, b" a b\t\r\nc "), b"abc");
        assert_eq!(t(Transform::CompressWhitespace, b"a  b\t\t c"), b"a b c");
        assert_eq!(t(Transform::UrlDecode, b"%41+b%zz"), b"A b%zz");
        assert_eq!(t(Transform::ToMd5, b"").len(), 16);
        assert_eq!(
            t(Transform::ToSha256, b"abc")[..4],
            [0xba, 0x78, 0x16, 0xbf]
        );
        assert_eq!(
            t(Transform::HeaderLowercase, b"Host: A\r\nX-Y: B\r\n"),
            b"host: A\r\nx-y: B\r\n"
        );
        assert_eq!(
            t(Transform::StripPseudoHeaders, b":path: /\r\nhost: x\r\n"),
            b"host: x\r\n"
        );
        assert_eq!(t(Transform::Xor(vec![1, 2]), &[1, 2, 3]), [0, 0, 2]);
        let mut out = Vec::new();
        apply_all(
            &[Transform::ToLowercase, Transform::DotPrefix],
            b"AB",
            &mut out,
        );
        assert_eq!(out, b".ab");
    }

    #[test]
    fn domain_and_tld_by_the_public_suffix_list() {
        let d = |x: &[u8]| t(Transform::Domain, x);
        let tld = |x: &[u8]| t(Transform::Tld, x);
        assert_eq!(d(b"www.example.com"), b"example.com");
        assert_eq!(tld(b"www.example.com"), b"com");
        assert_eq!(d(b"a.b.example.co.uk"), b"example.co.uk");
        assert_eq!(tld(b"a.b.example.co.uk"), b"co.uk");
        assert_eq!(d(b"example.com"), b"example.com");
        // A public suffix alone has no registrable domain.
        assert_eq!(d(b"co.uk"), b"");
        assert_eq!(tld(b"co.uk"), b"");
        assert_eq!(d(b""), b"");
    }

    #[test]
    fn base64_modes() {
        let b = |mode, input: &[u8]| {
            t(
                Transform::FromBase64 {
                    offset: 0,
                    bytes: 0,
                    mode,
                },
                input,
            )
        };
        assert_eq!(b(Base64Mode::Rfc4648, b"Zm9vYmFy"), b"foobar");
        assert_eq!(b(Base64Mode::Rfc4648, b"Zm9vYg=="), b"foob");
        assert_eq!(b(Base64Mode::Rfc4648, b"Zm9vYmE"), b"fooba");
        assert_eq!(b(Base64Mode::Rfc2045, b"Zm 9v Ym Fy"), b"foobar");
        // Decoding stops at the blank: only the bytes before it.
        assert_eq!(b(Base64Mode::Rfc4648, b"Zm 9v Ym Fy"), b"f");
        assert_eq!(b(Base64Mode::Strict, b"Zm9v Ym"), b"");
        let off = Transform::FromBase64 {
            offset: 6,
            bytes: 4,
            mode: Base64Mode::Rfc4648,
        };
        assert_eq!(t(off.clone(), b"/?arg=Zm9vYmFy"), b"foo");
        assert_eq!(t(off, b"/?a"), b"");
    }

    #[test]
    fn zlib_inflates_within_its_bound() {
        use std::io::Write;
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(b"This is compressed then base64-encoded\n")
            .unwrap();
        let z = e.finish().unwrap();
        let out = t(Transform::ZlibDeflate { max_size: 1000 }, &z);
        assert_eq!(out, b"This is compressed then base64-encoded\n");
        let out = t(Transform::ZlibDeflate { max_size: 8 }, &z);
        assert_eq!(out, b"This is ");
        // Not zlib: nothing.
        assert_eq!(t(Transform::ZlibDeflate { max_size: 8 }, b"plain"), b"");
    }

    #[test]
    fn pcrexform_keeps_the_first_group() {
        let x = |re: &str| {
            Transform::PcreXform(crate::rules::PcreXform {
                source: re.to_string(),
                regex: std::sync::Arc::new(pcre2::bytes::Regex::new(re).unwrap()),
            })
        };
        assert_eq!(
            t(x(r"[a-zA-Z]+\s+(.*)\s+HTTP"), b"GET /z.jpg HTTP/1.1"),
            b"/z.jpg"
        );
        assert_eq!(t(x("nomatch(x)"), b"abc"), b"abc");
    }
}
