//! Transforms that rules apply to a sticky buffer before inspecting it
//! (`http.uri; to_lowercase; content:...`), with Suricata's semantics.

use md5::Md5;
use sha1::Sha1;
use sha2::{Digest, Sha256};

use crate::rules::Transform;

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
        Transform::Xor(key) => {
            out.extend(input.iter().zip(key.iter().cycle()).map(|(b, k)| b ^ k));
        }
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
}
