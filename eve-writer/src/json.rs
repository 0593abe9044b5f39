//! A minimal JSON writer that appends to a byte buffer: objects are written field by
//! field in the order the caller chooses (EVE's order matters to people reading it).

/// Writes `s` as a JSON string (quotes included), escaping as RFC 8259 requires.
pub fn string(buf: &mut Vec<u8>, s: &str) {
    bytes_as_string(buf, s.as_bytes());
}

/// Writes bytes as a JSON string. Valid UTF-8 goes through; other bytes are written as
/// `\u00XX` escapes of their value (as Suricata prints non-printable bytes), so the output
/// is always valid JSON.
pub fn bytes_as_string(buf: &mut Vec<u8>, b: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    buf.push(b'"');
    let mut rest = b;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s.as_bytes(), None),
            Err(e) => (&rest[..e.valid_up_to()], Some(e.valid_up_to())),
        };
        let mut start = 0;
        for (i, &c) in valid.iter().enumerate() {
            let esc: Option<&[u8]> = match c {
                b'"' => Some(b"\\\""),
                b'\\' => Some(b"\\\\"),
                b'\n' => Some(b"\\n"),
                b'\r' => Some(b"\\r"),
                b'\t' => Some(b"\\t"),
                0x08 => Some(b"\\b"),
                0x0c => Some(b"\\f"),
                0..=0x1f | 0x7f => None,
                _ => continue,
            };
            buf.extend_from_slice(&valid[start..i]);
            match esc {
                Some(e) => buf.extend_from_slice(e),
                None => {
                    buf.extend_from_slice(b"\\u00");
                    buf.push(HEX[usize::from(c >> 4)]);
                    buf.push(HEX[usize::from(c & 15)]);
                }
            }
            start = i + 1;
        }
        buf.extend_from_slice(&valid[start..]);
        match bad {
            None => break,
            Some(at) => {
                let c = rest[at];
                buf.extend_from_slice(b"\\u00");
                buf.push(HEX[usize::from(c >> 4)]);
                buf.push(HEX[usize::from(c & 15)]);
                rest = &rest[at + 1..];
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

    fn key(&mut self, k: &str) {
        if !self.first {
            self.buf.push(b',');
        }
        self.first = false;
        self.buf.push(b'"');
        self.buf.extend_from_slice(k.as_bytes());
        self.buf.extend_from_slice(b"\":");
    }

    pub fn str(&mut self, k: &str, v: &str) -> &mut Self {
        self.key(k);
        string(self.buf, v);
        self
    }

    pub fn bytes(&mut self, k: &str, v: &[u8]) -> &mut Self {
        self.key(k);
        bytes_as_string(self.buf, v);
        self
    }

    pub fn u64(&mut self, k: &str, v: u64) -> &mut Self {
        self.key(k);
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(v).as_bytes());
        self
    }

    pub fn i64(&mut self, k: &str, v: i64) -> &mut Self {
        self.key(k);
        let mut b = itoa::Buffer::new();
        self.buf.extend_from_slice(b.format(v).as_bytes());
        self
    }

    pub fn bool(&mut self, k: &str, v: bool) -> &mut Self {
        self.key(k);
        self.buf
            .extend_from_slice(if v { b"true" } else { b"false" });
        self
    }

    /// Writes raw JSON produced by `f` as the value of `k`.
    pub fn raw(&mut self, k: &str, f: impl FnOnce(&mut Vec<u8>)) -> &mut Self {
        self.key(k);
        f(self.buf);
        self
    }

    /// A nested object.
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
