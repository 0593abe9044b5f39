//! Rule transforms over an inspection buffer, with Suricata's semantics. Each is a pure
//! function from the input buffer to a new one (the engine chains them in rule order).

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};

/// `dotprefix`: prepends a `.` (so `content:".example.com"; endswith;` matches the
/// domain and its subdomains but not `badexample.com`).
pub fn dotprefix(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.push(b'.');
    out.extend_from_slice(input);
}

/// `to_lowercase`: ASCII letters only.
pub fn to_lowercase(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(input.iter().map(u8::to_ascii_lowercase));
}

/// `to_uppercase`: ASCII letters only.
pub fn to_uppercase(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(input.iter().map(u8::to_ascii_uppercase));
}

/// Suricata's whitespace for these transforms (C `isspace`: SP, HT, LF, VT, FF, CR).
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// `strip_whitespace`: removes every whitespace byte.
pub fn strip_whitespace(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend(input.iter().copied().filter(|&c| !is_space(c)));
}

/// `compress_whitespace`: each run of whitespace becomes its first byte... as Suricata
/// does it: a run is replaced by a single space.
pub fn compress_whitespace(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut in_run = false;
    for &c in input {
        if is_space(c) {
            if !in_run {
                out.push(b' ');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
}

fn hexval(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// `url_decode`: `%XX` becomes its byte and `+` a space; a `%` not followed by two hex
/// digits is kept as it is.
pub fn url_decode(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'%' => {
                if let (Some(a), Some(b)) = (
                    input.get(i + 1).copied().and_then(hexval),
                    input.get(i + 2).copied().and_then(hexval),
                ) {
                    out.push(a << 4 | b);
                    i += 3;
                    continue;
                }
                out.push(b'%');
            }
            b'+' => out.push(b' '),
            c => out.push(c),
        }
        i += 1;
    }
}

/// `to_sha256`: the 32-byte digest (raw bytes, not hex).
pub fn to_sha256(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&Sha256::digest(input));
}

/// `to_md5`: the 16-byte digest.
pub fn to_md5(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&Md5::digest(input));
}

/// `to_sha1`: the 20-byte digest.
pub fn to_sha1(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    out.extend_from_slice(&Sha1::digest(input));
}

/// `header_lowercase`: lowercases header names (up to each `:` at a line start), not
/// values; lines are separated by `\r\n`.
pub fn header_lowercase(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut in_name = true;
    for (i, &c) in input.iter().enumerate() {
        if in_name {
            if c == b':' {
                in_name = false;
            }
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
            if c == b'\n' && i > 0 && input[i - 1] == b'\r' {
                in_name = true;
            }
        }
    }
}

/// `strip_pseudo_headers`: drops the lines that start with `:` (HTTP/2 pseudo headers).
pub fn strip_pseudo_headers(input: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let mut rest = input;
    while !rest.is_empty() {
        let (line, next) = match memchr::memmem::find(rest, b"\r\n") {
            Some(i) => (&rest[..i + 2], &rest[i + 2..]),
            None => (rest, &[][..]),
        };
        if line.first() != Some(&b':') {
            out.extend_from_slice(line);
        }
        rest = next;
    }
}

/// `xor:"key"`: each byte XOR the key, repeated.
pub fn xor(input: &[u8], key: &[u8], out: &mut Vec<u8>) {
    out.clear();
    if key.is_empty() {
        out.extend_from_slice(input);
        return;
    }
    out.extend(input.iter().zip(key.iter().cycle()).map(|(a, k)| a ^ k));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(f: fn(&[u8], &mut Vec<u8>), i: &[u8]) -> Vec<u8> {
        let mut o = Vec::new();
        f(i, &mut o);
        o
    }

    #[test]
    fn semantics() {
        assert_eq!(t(dotprefix, b"example.com"), b".example.com");
        assert_eq!(t(to_lowercase, b"AbC\xc4"), b"abc\xc4");
        assert_eq!(t(to_uppercase, b"aBc"), b"ABC");
        assert_eq!(t(strip_whitespace, b" a \t b\r\n"), b"ab");
        assert_eq!(t(compress_whitespace, b"a  \t b\r\nc "), b"a b c ");
        assert_eq!(t(url_decode, b"a%41+b%zz%4"), b"aA b%zz%4");
        assert_eq!(t(to_md5, b"").len(), 16);
        assert_eq!(t(to_sha256, b"abc")[..4], [0xba, 0x78, 0x16, 0xbf]);
        assert_eq!(t(to_sha1, b"abc")[..4], [0xa9, 0x99, 0x3e, 0x36]);
        assert_eq!(
            t(header_lowercase, b"Host: A\r\nX-Y: Z\r\n"),
            b"host: A\r\nx-y: Z\r\n"
        );
        assert_eq!(
            t(strip_pseudo_headers, b":method: GET\r\nHost: a\r\n"),
            b"Host: a\r\n"
        );
        let mut o = Vec::new();
        xor(b"\x01\x02\x03", b"\x01\x02", &mut o);
        assert_eq!(o, b"\x00\x00\x02");
    }
}
