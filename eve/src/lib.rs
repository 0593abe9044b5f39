//! A minimal JSON writer that appends to a byte buffer: objects are written field by
//! field in the order the caller chooses (EVE's order matters to people reading it).

const HEX: &[u8; 16] = b"0123456789abcdef";

/// For each byte: 0 = copy as is, 1 = needs an escape (quote, backslash, control
/// characters and DEL).
static NEEDS_ESCAPE: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = 1;
        i += 1;
    }
    t[b'"' as usize] = 1;
    t[b'\\' as usize] = 1;
    t[0x7f] = 1;
    t
};

fn push_escape(buf: &mut Vec<u8>, c: u8) {
    match c {
        b'"' => buf.extend_from_slice(b"\\\""),
        b'\\' => buf.extend_from_slice(b"\\\\"),
        b'\n' => buf.extend_from_slice(b"\\n"),
        b'\r' => buf.extend_from_slice(b"\\r"),
        b'\t' => buf.extend_from_slice(b"\\t"),
        0x08 => buf.extend_from_slice(b"\\b"),
        0x0c => buf.extend_from_slice(b"\\f"),
        _ => push_u00(buf, c),
    }
}

/// Writes `c` as the escape `\u00XX`.
fn push_u00(buf: &mut Vec<u8>, c: u8) {
    buf.extend_from_slice(&[
        b'\\',
        b'u',
        b'0',
        b'0',
        HEX[usize::from(c >> 4)],
        HEX[usize::from(c & 15)],
    ]);
}

/// Whether any of the 8 bytes of `w` needs an escape (a control character, `"`, `\\`,
/// DEL): the "has a byte less than n" and "has a zero byte" bit tricks, exact for
/// telling whether any byte matches (bytes >= 0x80 never match).
fn word_needs_escape(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGH;
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    let quote = has_zero(w ^ (ONES * u64::from(b'"')));
    let backslash = has_zero(w ^ (ONES * u64::from(b'\\')));
    let del = has_zero(w ^ (ONES * 0x7f));
    control | quote | backslash | del != 0
}

/// Escapes valid UTF-8 (no quotes around it): runs of plain bytes are copied at once,
/// and found eight bytes at a time.
fn escape_valid(buf: &mut Vec<u8>, valid: &[u8]) {
    let mut start = 0;
    let mut i = 0;
    while i < valid.len() {
        if let Some(word) = valid.get(i..i + 8) {
            let mut w = [0u8; 8];
            w.copy_from_slice(word);
            if !word_needs_escape(u64::from_le_bytes(w)) {
                i += 8;
                continue;
            }
        }
        let c = valid[i];
        if NEEDS_ESCAPE[usize::from(c)] != 0 {
            buf.extend_from_slice(&valid[start..i]);
            push_escape(buf, c);
            start = i + 1;
        }
        i += 1;
    }
    buf.extend_from_slice(&valid[start..]);
}

/// Writes `s` as a JSON string (quotes included), escaping as RFC 8259 requires.
pub fn string(buf: &mut Vec<u8>, s: &str) {
    buf.push(b'"');
    escape_valid(buf, s.as_bytes());
    buf.push(b'"');
}

/// Writes bytes as a JSON string. Valid UTF-8 goes through; other bytes are written as
/// `\u00XX` escapes of their value (as Suricata prints non-printable bytes), so the output
/// is always valid JSON.
pub fn bytes_as_string(buf: &mut Vec<u8>, b: &[u8]) {
    buf.push(b'"');
    let mut rest = b;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                escape_valid(buf, s.as_bytes());
                break;
            }
            Err(e) => {
                let (valid, bad) = rest.split_at(e.valid_up_to());
                escape_valid(buf, valid);
                push_u00(buf, bad[0]);
                rest = &bad[1..];
            }
        }
    }
    buf.push(b'"');
}

/// An object being written; fields are separated automatically.
#[derive(Debug)]
pub struct Obj<'a> {
    buf: &'a mut Vec<u8>,
    first: bool,
}

impl<'a> Obj<'a> {
    pub fn new(buf: &'a mut Vec<u8>) -> Obj<'a> {
        buf.push(b'{');
        Obj { buf, first: true }
    }

    // Inlined: keys are literals, so the copy of one is a few moves rather than a call
    // to memcpy; one reservation covers the whole key.
    #[inline(always)]
    fn key(&mut self, k: &str) {
        let k = k.as_bytes();
        self.buf.reserve(k.len() + 4);
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(k);
        self.buf.extend_from_slice(b"\":");
    }

    #[inline]
    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k);
        string(self.buf, v);
        self
    }

    #[inline]
    pub fn bytes(&mut self, k: &str, v: &[u8]) -> &mut Self {
        self.key(k);
        bytes_as_string(self.buf, v);
        self
    }

    #[inline]
    pub fn u64(&mut self, k: &str, v: u64) -> &mut Self {
        self.int(k, v)
    }

    #[inline]
    pub fn i64(&mut self, k: &str, v: i64) -> &mut Self {
        self.int(k, v)
    }

    #[inline]
    fn int(&mut self, k: &str, v: impl itoa::Integer) -> &mut Self {
        self.key(k);
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(v).as_bytes());
        self
    }

    #[inline]
    pub fn bool(&mut self, k: &str, v: bool) -> &mut Self {
        self.key(k);
        self.buf
            .extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    /// Writes raw JSON produced by `f` as the value of a key that comes from input
    /// (escaped like any string).
    pub fn raw_escaped_key(&mut self, k: &str, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        string(self.buf, k);
        self.buf.push(b':');
        f(self.buf);
        self
    }

    /// Writes raw JSON produced by `f` as the value of `k`.
    #[inline]
    pub fn raw(&mut self, k: &str, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        self.key(k);
        f(self.buf);
        self
    }

    /// A nested object.
    #[inline]
    pub fn obj(&mut self, k: &str, f: impl FnOnce(&mut Obj<'_>)) -> &mut Self {
        self.key(k);
        let mut o = Obj::new(self.buf);
        f(&mut o);
        o.end();
        self
    }

    pub fn end(self) {
        self.buf.push(b'}');
    }
}

/// Writes `[{...},{...}]`: one object per item, filled by `f`.
pub fn array<T>(buf: &mut Vec<u8>, items: &[T], mut f: impl FnMut(&mut Obj<'_>, &T)) {
    buf.push(b'[');
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        let mut o = Obj::new(buf);
        f(&mut o, it);
        o.end();
    }
    buf.push(b']');
}

/// Writes a JSON array of strings.
pub fn str_array<'s>(buf: &mut Vec<u8>, items: impl IntoIterator<Item = &'s str>) {
    buf.push(b'[');
    for (i, s) in items.into_iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        string(buf, s);
    }
    buf.push(b']');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_invalid_utf8() {
        let mut b = Vec::new();
        bytes_as_string(&mut b, b"a\"b\\c\n\x01\xff\xe2\x82\xac\x7f");
        assert_eq!(
            String::from_utf8(b.clone()).unwrap(),
            "\"a\\\"b\\\\c\\n\\u0001\\u00ff\u{20ac}\\u007f\""
        );
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert!(v.is_string());
    }

    #[test]
    fn word_scan_agrees_with_the_table() {
        // Every byte value at every position of a word, among plain text.
        for c in 0..=255u8 {
            for pos in 0..8 {
                let mut w = *b"abcdefgh";
                w[pos] = c;
                assert_eq!(
                    word_needs_escape(u64::from_le_bytes(w)),
                    NEEDS_ESCAPE[usize::from(c)] != 0,
                    "byte {c:#x} at {pos}"
                );
            }
        }
        // Strings of every length around the word size, escapes anywhere.
        for len in 0..20 {
            for at in 0..len {
                for c in [b'"', b'\\', b'\n', 0x01, 0x7f, b'x'] {
                    let mut s = vec![b'a'; len];
                    s[at] = c;
                    let mut fast = Vec::new();
                    escape_valid(&mut fast, &s);
                    let mut slow = Vec::new();
                    for &b in &s {
                        if NEEDS_ESCAPE[usize::from(b)] != 0 {
                            push_escape(&mut slow, b);
                        } else {
                            slow.push(b);
                        }
                    }
                    assert_eq!(fast, slow, "len {len}, {c:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn objects() {
        let mut b = Vec::new();
        let mut o = Obj::new(&mut b);
        o.str("a", "x").u64("b", 7).obj("c", |c| {
            c.bool("d", true).i64("e", -1);
        });
        o.raw("f", |buf| str_array(buf, ["p", "q"]));
        o.end();
        assert_eq!(
            String::from_utf8(b).unwrap(),
            r#"{"a":"x","b":7,"c":{"d":true,"e":-1},"f":["p","q"]}"#
        );
    }
}
