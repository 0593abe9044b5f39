//! HPACK (RFC 7541): header block decoding with the static table, a bounded dynamic
//! table with size updates, and Huffman-coded strings.
//!
//! Every count and length is bounded: a header list stops at [`MAX_HEADERS`] headers or
//! [`MAX_HEADER_LIST_SIZE`] bytes, a string at [`MAX_STRING`], the dynamic table at
//! [`MAX_TABLE_SIZE`] whatever a size update asks.

use std::collections::VecDeque;
use std::sync::LazyLock;

use super::huffman_table::{CODES, LENGTHS};

/// Largest dynamic table accepted (a size update above it is clamped).
pub const MAX_TABLE_SIZE: usize = 64 * 1024;
/// Most headers decoded from one block.
pub const MAX_HEADERS: usize = 256;
/// Most bytes (names + values + 32 per header, as RFC 7540 counts) of one header list.
pub const MAX_HEADER_LIST_SIZE: usize = 256 * 1024;
/// Longest string (name or value) decoded.
pub const MAX_STRING: usize = 64 * 1024;
/// Default dynamic table size (SETTINGS_HEADER_TABLE_SIZE's initial value).
pub const DEFAULT_TABLE_SIZE: usize = 4096;

/// The static table (RFC 7541 Appendix A), index 1 first.
pub const STATIC: [(&str, &str); 61] = [
    (":authority", ""),
    (":method", "GET"),
    (":method", "POST"),
    (":path", "/"),
    (":path", "/index.html"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "200"),
    (":status", "204"),
    (":status", "206"),
    (":status", "304"),
    (":status", "400"),
    (":status", "404"),
    (":status", "500"),
    ("accept-charset", ""),
    ("accept-encoding", "gzip, deflate"),
    ("accept-language", ""),
    ("accept-ranges", ""),
    ("accept", ""),
    ("access-control-allow-origin", ""),
    ("age", ""),
    ("allow", ""),
    ("authorization", ""),
    ("cache-control", ""),
    ("content-disposition", ""),
    ("content-encoding", ""),
    ("content-language", ""),
    ("content-length", ""),
    ("content-location", ""),
    ("content-range", ""),
    ("content-type", ""),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("expect", ""),
    ("expires", ""),
    ("from", ""),
    ("host", ""),
    ("if-match", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("if-range", ""),
    ("if-unmodified-since", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("max-forwards", ""),
    ("proxy-authenticate", ""),
    ("proxy-authorization", ""),
    ("range", ""),
    ("referer", ""),
    ("refresh", ""),
    ("retry-after", ""),
    ("server", ""),
    ("set-cookie", ""),
    ("strict-transport-security", ""),
    ("transfer-encoding", ""),
    ("user-agent", ""),
    ("vary", ""),
    ("via", ""),
    ("www-authenticate", ""),
];

/// A decoded header.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    pub name: Vec<u8>,
    pub value: Vec<u8>,
}

/// What went wrong in a block (decoding stops at the first problem).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// The block ends inside a representation.
    Truncated,
    /// An integer does not fit (`header_integer_overflow`).
    IntegerOverflow,
    /// An index names no entry, a Huffman string is malformed, or a size update is
    /// misplaced (`invalid_header`).
    Invalid,
    /// [`MAX_HEADERS`] or [`MAX_HEADER_LIST_SIZE`] reached.
    TooLarge,
}

/// Per-direction HPACK decoder state: the dynamic table.
#[derive(Debug, Clone)]
pub struct Decoder {
    table: VecDeque<Header>,
    size: usize,
    max_size: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            table: VecDeque::new(),
            size: 0,
            max_size: DEFAULT_TABLE_SIZE,
        }
    }
}

/// Decodes an integer with an `n`-bit prefix at `b[*pos]`.
pub fn integer(b: &[u8], pos: &mut usize, n: u8) -> Result<u64, Error> {
    let first = *b.get(*pos).ok_or(Error::Truncated)?;
    *pos += 1;
    let mask = ((1u16 << n) - 1) as u8;
    let mut v = u64::from(first & mask);
    if v < u64::from(mask) {
        return Ok(v);
    }
    let mut shift = 0u32;
    loop {
        let c = *b.get(*pos).ok_or(Error::Truncated)?;
        *pos += 1;
        if shift > 56 {
            return Err(Error::IntegerOverflow);
        }
        v = v
            .checked_add(u64::from(c & 0x7f) << shift)
            .ok_or(Error::IntegerOverflow)?;
        if v > u64::from(u32::MAX) {
            return Err(Error::IntegerOverflow);
        }
        if c & 0x80 == 0 {
            return Ok(v);
        }
        shift += 7;
    }
}

/// The canonical Huffman code grouped by length: for each length, the first code and
/// where its symbols start in `syms` (sorted by code), and `limit`: one past the last
/// code of that length or shorter, left-aligned in 32 bits (a canonical code's codes
/// of length `L` are exactly the left-aligned windows in `limit[L-1]..limit[L]`).
struct Canonical {
    first: [u32; 31],
    start: [u16; 31],
    limit: [u64; 31],
    syms: Vec<u8>,
}

static CANONICAL: LazyLock<Canonical> = LazyLock::new(|| {
    let mut by: Vec<(u8, u32, u8)> = (0..256).map(|s| (LENGTHS[s], CODES[s], s as u8)).collect();
    by.sort_unstable();
    let mut c = Canonical {
        first: [u32::MAX; 31],
        start: [0; 31],
        limit: [0; 31],
        syms: Vec::with_capacity(256),
    };
    let mut count = [0u64; 31];
    for (i, &(l, code, s)) in by.iter().enumerate() {
        let l = usize::from(l);
        if count[l] == 0 {
            c.first[l] = code;
            c.start[l] = i as u16;
        }
        count[l] += 1;
        c.syms.push(s);
    }
    let mut limit = 0;
    for (l, &n) in count.iter().enumerate().skip(1) {
        if n > 0 {
            limit = (u64::from(c.first[l]) + n) << (32 - l);
        }
        c.limit[l] = limit;
    }
    c
});

/// Shortest code (RFC 7541 Appendix B).
const MIN_CODE_LEN: usize = 5;

/// Decodes a Huffman-coded string into `out` (at most [`MAX_STRING`] bytes).
///
/// A code at a time: a 64-bit window of the input, left-aligned, whose top 32 bits
/// are compared against each length's limit (shortest first; the common symbols are
/// 5 to 8 bits long) instead of walking the bits one by one.
pub fn huffman(b: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
    let c = &*CANONICAL;
    let mut acc: u64 = 0;
    let mut bits: usize = 0;
    let mut input = b.iter();
    loop {
        // Refill: at least 57 bits in the window while input remains.
        while bits <= 56 {
            let Some(&byte) = input.next() else { break };
            acc |= u64::from(byte) << (56 - bits);
            bits += 8;
        }
        if bits == 0 {
            return Ok(());
        }
        let w = acc >> 32;
        let mut len = MIN_CODE_LEN;
        while len < 31 && w >= c.limit[len] {
            len += 1;
        }
        if len > bits {
            break;
        }
        if len == 31 {
            // Thirty ones and more: EOS, which a string must not hold.
            return Err(Error::Invalid);
        }
        let code = (w >> (32 - len)) as u32;
        let i = usize::from(c.start[len]) + (code - c.first[len]) as usize;
        if out.len() >= MAX_STRING {
            return Err(Error::TooLarge);
        }
        out.push(*c.syms.get(i).ok_or(Error::Invalid)?);
        acc <<= len;
        bits -= len;
    }
    // Padding: fewer than 8 bits (1 to 7 here), all ones (a prefix of EOS).
    if bits >= 8 || acc >> (64 - bits) != (1u64 << bits) - 1 {
        return Err(Error::Invalid);
    }
    Ok(())
}

fn string(b: &[u8], pos: &mut usize, out: &mut Vec<u8>) -> Result<(), Error> {
    let h = *b.get(*pos).ok_or(Error::Truncated)? & 0x80 != 0;
    let n = integer(b, pos, 7)?;
    let n = usize::try_from(n).map_err(|_| Error::IntegerOverflow)?;
    let end = pos.checked_add(n).ok_or(Error::Truncated)?;
    let s = b.get(*pos..end).ok_or(Error::Truncated)?;
    *pos = end;
    out.clear();
    if h {
        huffman(s, out)
    } else if s.len() > MAX_STRING {
        Err(Error::TooLarge)
    } else {
        out.extend_from_slice(s);
        Ok(())
    }
}

impl Decoder {
    /// Current dynamic table size (bytes as RFC 7541 counts them).
    pub fn size(&self) -> usize {
        self.size
    }

    fn entry(&self, index: u64) -> Result<(&[u8], &[u8]), Error> {
        let i = usize::try_from(index).map_err(|_| Error::Invalid)?;
        if i == 0 {
            return Err(Error::Invalid);
        }
        if let Some((n, v)) = STATIC.get(i - 1) {
            return Ok((n.as_bytes(), v.as_bytes()));
        }
        self.table
            .get(i - 1 - STATIC.len())
            .map(|h| (&h.name[..], &h.value[..]))
            .ok_or(Error::Invalid)
    }

    fn evict(&mut self) {
        while self.size > self.max_size {
            match self.table.pop_back() {
                Some(h) => self.size -= h.name.len() + h.value.len() + 32,
                None => {
                    self.size = 0;
                    break;
                }
            }
        }
    }

    fn insert(&mut self, h: &Header) {
        let sz = h.name.len() + h.value.len() + 32;
        if sz > self.max_size {
            self.table.clear();
            self.size = 0;
            return;
        }
        self.size += sz;
        self.table.push_front(h.clone());
        self.evict();
    }

    /// A size update (from a block or the peer's SETTINGS), clamped to
    /// [`MAX_TABLE_SIZE`]; returns the size taken.
    pub fn set_max_size(&mut self, n: u64) -> usize {
        self.max_size = usize::try_from(n).unwrap_or(usize::MAX).min(MAX_TABLE_SIZE);
        self.evict();
        self.max_size
    }

    /// Decodes a complete header block, appending headers to `out` and dynamic table
    /// size updates to `size_updates` (with the number of headers of `out` before
    /// each). On an error, the headers decoded so far stay.
    pub fn decode(
        &mut self,
        b: &[u8],
        out: &mut Vec<Header>,
        size_updates: &mut Vec<(usize, u64)>,
    ) -> Result<(), Error> {
        let mut pos = 0;
        let mut list = 0usize;
        while pos < b.len() {
            let c = b[pos];
            let mut h = Header::default();
            if c & 0x80 != 0 {
                let i = integer(b, &mut pos, 7)?;
                let (n, v) = self.entry(i)?;
                h.name.extend_from_slice(n);
                h.value.extend_from_slice(v);
            } else if c & 0xe0 == 0x20 {
                let n = integer(b, &mut pos, 5)?;
                if size_updates.len() < MAX_HEADERS {
                    size_updates.push((out.len(), n));
                }
                self.set_max_size(n);
                continue;
            } else {
                // Literal: with incremental indexing (01), without (0000) or never
                // indexed (0001).
                let (prefix, index) = if c & 0xc0 == 0x40 {
                    (6, true)
                } else {
                    (4, false)
                };
                let i = integer(b, &mut pos, prefix)?;
                if i == 0 {
                    string(b, &mut pos, &mut h.name)?;
                } else {
                    h.name.extend_from_slice(self.entry(i)?.0);
                }
                string(b, &mut pos, &mut h.value)?;
                if index {
                    self.insert(&h);
                }
            }
            list += h.name.len() + h.value.len() + 32;
            if out.len() >= MAX_HEADERS || list > MAX_HEADER_LIST_SIZE {
                return Err(Error::TooLarge);
            }
            out.push(h);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn decode(d: &mut Decoder, block: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        d.decode(&hex(block), &mut out, &mut Vec::new()).unwrap();
        out.into_iter()
            .map(|h| {
                (
                    String::from_utf8(h.name).unwrap(),
                    String::from_utf8(h.value).unwrap(),
                )
            })
            .collect()
    }

    fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
        p.iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    /// RFC 7541 C.1: integers.
    #[test]
    fn integers() {
        let mut pos = 0;
        assert_eq!(integer(&[0x0a], &mut pos, 5), Ok(10));
        pos = 0;
        assert_eq!(integer(&[0x1f, 0x9a, 0x0a], &mut pos, 5), Ok(1337));
        assert_eq!(pos, 3);
        pos = 0;
        assert_eq!(integer(&[0x2a], &mut pos, 8), Ok(42));
        pos = 0;
        assert_eq!(
            integer(&[0x1f, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], &mut pos, 5),
            Err(Error::IntegerOverflow)
        );
        pos = 0;
        assert_eq!(integer(&[0x1f, 0xff], &mut pos, 5), Err(Error::Truncated));
    }

    /// RFC 7541 C.2: header field representations.
    #[test]
    fn representations() {
        let mut d = Decoder::default();
        let h = decode(
            &mut d,
            "400a 6375 7374 6f6d 2d6b 6579 0d63 7573 746f 6d2d 6865 6164 6572",
        );
        assert_eq!(h, pairs(&[("custom-key", "custom-header")]));
        assert_eq!(d.size(), 55);
        let mut d = Decoder::default();
        let h = decode(&mut d, "040c 2f73 616d 706c 652f 7061 7468");
        assert_eq!(h, pairs(&[(":path", "/sample/path")]));
        assert_eq!(d.size(), 0);
        let h = decode(&mut d, "1008 7061 7373 776f 7264 0673 6563 7265 74");
        assert_eq!(h, pairs(&[("password", "secret")]));
        let h = decode(&mut d, "82");
        assert_eq!(h, pairs(&[(":method", "GET")]));
    }

    /// RFC 7541 C.3: requests without Huffman coding, sharing a dynamic table.
    #[test]
    fn requests_plain() {
        let mut d = Decoder::default();
        let r1 = decode(&mut d, "8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d");
        assert_eq!(
            r1,
            pairs(&[
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/"),
                (":authority", "www.example.com")
            ])
        );
        assert_eq!(d.size(), 57);
        let r2 = decode(&mut d, "8286 84be 5808 6e6f 2d63 6163 6865");
        assert_eq!(r2[3], (":authority".into(), "www.example.com".into()));
        assert_eq!(r2[4], ("cache-control".into(), "no-cache".into()));
        assert_eq!(d.size(), 110);
        let r3 = decode(
            &mut d,
            "8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65",
        );
        assert_eq!(r3[1], (":scheme".into(), "https".into()));
        assert_eq!(r3[2], (":path".into(), "/index.html".into()));
        assert_eq!(r3[3], (":authority".into(), "www.example.com".into()));
        assert_eq!(r3[4], ("custom-key".into(), "custom-value".into()));
        assert_eq!(d.size(), 164);
    }

    /// RFC 7541 C.4: the same requests with Huffman coding.
    #[test]
    fn requests_huffman() {
        let mut d = Decoder::default();
        let r1 = decode(&mut d, "8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff");
        assert_eq!(r1[3], (":authority".into(), "www.example.com".into()));
        let r2 = decode(&mut d, "8286 84be 5886 a8eb 1064 9cbf");
        assert_eq!(r2[4], ("cache-control".into(), "no-cache".into()));
        let r3 = decode(
            &mut d,
            "8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf",
        );
        assert_eq!(r3[4], ("custom-key".into(), "custom-value".into()));
        assert_eq!(d.size(), 164);
    }

    /// RFC 7541 C.6: responses with Huffman coding and evictions (table size 256).
    #[test]
    fn responses_huffman_eviction() {
        let mut d = Decoder::default();
        d.set_max_size(256);
        let r1 = decode(
            &mut d,
            "4882 6402 5885 aec3 771a 4b61 96d0 7abe 9410 54d4 44a8 2005 9504 0b81 66e0 82a6 \
             2d1b ff6e 919d 29ad 1718 63c7 8f0b 97c8 e9ae 82ae 43d3",
        );
        assert_eq!(
            r1,
            pairs(&[
                (":status", "302"),
                ("cache-control", "private"),
                ("date", "Mon, 21 Oct 2013 20:13:21 GMT"),
                ("location", "https://www.example.com")
            ])
        );
        assert_eq!(d.size(), 222);
        let r2 = decode(&mut d, "4883 640e ff c1c0 bf");
        assert_eq!(r2[0], (":status".into(), "307".into()));
        assert_eq!(r2[3], ("location".into(), "https://www.example.com".into()));
        assert_eq!(d.size(), 222);
        let r3 = decode(
            &mut d,
            "88c1 6196 d07a be94 1054 d444 a820 0595 040b 8166 e084 a62d 1bff c05a 839b d9ab \
             77ad 94e7 821d d7f2 e6c7 b335 dfdf cd5b 3960 d5af 2708 7f36 72c1 ab27 0fb5 291f \
             9587 3160 65c0 03ed 4ee5 b106 3d50 07",
        );
        assert_eq!(r3[0], (":status".into(), "200".into()));
        assert_eq!(r3[4], ("content-encoding".into(), "gzip".into()));
        assert_eq!(
            r3[5],
            (
                "set-cookie".into(),
                "foo=ASDJKHQKBZXOQWEOPIUAXQWEOIU; max-age=3600; version=1".into()
            )
        );
        assert_eq!(d.size(), 215);
    }

    /// The bit-by-bit decoder the table-driven one replaced, as a reference.
    fn huffman_bitwise(b: &[u8], out: &mut Vec<u8>) -> Result<(), Error> {
        let mut code: u32 = 0;
        let mut len: usize = 0;
        for &byte in b {
            for k in (0..8).rev() {
                code = (code << 1) | u32::from((byte >> k) & 1);
                len += 1;
                if len > 30 {
                    return Err(Error::Invalid);
                }
                if let Some(s) =
                    (0..256).find(|&s| usize::from(LENGTHS[s]) == len && CODES[s] == code)
                {
                    if out.len() >= MAX_STRING {
                        return Err(Error::TooLarge);
                    }
                    out.push(s as u8);
                    code = 0;
                    len = 0;
                }
            }
        }
        if len >= 8 || code != (1u32 << len) - 1 {
            return Err(Error::Invalid);
        }
        Ok(())
    }

    fn huffman_encode(s: &[u8]) -> Vec<u8> {
        let (mut acc, mut n, mut out) = (0u64, 0u32, Vec::new());
        for &b in s {
            acc = (acc << LENGTHS[usize::from(b)]) | u64::from(CODES[usize::from(b)]);
            n += u32::from(LENGTHS[usize::from(b)]);
            while n >= 8 {
                n -= 8;
                out.push((acc >> n) as u8);
            }
            acc &= (1 << n) - 1;
        }
        if n > 0 {
            out.push(((acc << (8 - n)) | ((1 << (8 - n)) - 1)) as u8);
        }
        out
    }

    /// Every byte value, strings of every length up to 40 from a fixed generator, and
    /// arbitrary bytes (mostly invalid codes, EOS, bad padding): both decoders agree.
    #[test]
    fn huffman_matches_the_bitwise_decoder() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut inputs: Vec<Vec<u8>> = vec![huffman_encode(&(0..=255).collect::<Vec<u8>>())];
        for len in 0..40 {
            for _ in 0..20 {
                let s: Vec<u8> = (0..len).map(|_| next() as u8).collect();
                inputs.push(huffman_encode(&s));
                let t: Vec<u8> = (0..len)
                    .map(|_| b"abcdefgh/.-0123"[(next() % 15) as usize])
                    .collect();
                inputs.push(huffman_encode(&t));
                inputs.push(s);
            }
        }
        inputs.push(vec![0xff; 4]);
        inputs.push(vec![0xff, 0xff, 0xff, 0xfc]);
        for i in &inputs {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            let (ra, rb) = (huffman(i, &mut a), huffman_bitwise(i, &mut b));
            assert_eq!(ra, rb, "{i:02x?}");
            if ra.is_ok() {
                assert_eq!(a, b, "{i:02x?}");
            }
        }
        let all: Vec<u8> = (0..=255).collect();
        let mut out = Vec::new();
        huffman(&huffman_encode(&all), &mut out).unwrap();
        assert_eq!(out, all);
    }

    #[test]
    fn bad_input_is_an_error() {
        let mut d = Decoder::default();
        let mut out = Vec::new();
        assert_eq!(
            d.decode(&[0xff, 0x00], &mut out, &mut Vec::new()),
            Err(Error::Invalid)
        );
        assert_eq!(
            d.decode(&[0x80], &mut out, &mut Vec::new()),
            Err(Error::Invalid)
        );
        assert_eq!(
            d.decode(&[0x40, 0x05, b'a'], &mut out, &mut Vec::new()),
            Err(Error::Truncated)
        );
        // Huffman padding that is not all ones.
        assert_eq!(huffman(&[0x00], &mut Vec::new()), Err(Error::Invalid));
        // A size update is clamped.
        let mut ups = Vec::new();
        d.decode(&[0x3f, 0xe1, 0xff, 0x7f], &mut out, &mut ups)
            .unwrap();
        assert_eq!(d.max_size, MAX_TABLE_SIZE);
        assert_eq!(ups.len(), 1);
    }
}
