//! QUIC packet headers (IETF long and short headers, Google QUIC's public header and
//! its Q043-Q046 long header) and the frames of a packet's payload that Meerkat
//! reads: CRYPTO (the TLS handshake), Google QUIC's STREAM frames carrying a
//! client hello (CHLO) and its tags, ACK, PADDING, PING. As Suricata 8 reads them:
//! the same packets are accepted, and the same ones are refused.

/// A QUIC version number, as on the wire.
pub type Version = u32;

/// QUIC version 1 (RFC 9000).
pub const V1: Version = 1;
/// QUIC version 2 (RFC 9369).
pub const V2: Version = 0x6b33_43cf;
pub const Q039: Version = 0x5130_3339;
pub const Q043: Version = 0x5130_3433;
pub const Q044: Version = 0x5130_3434;
pub const Q045: Version = 0x5130_3435;
pub const Q046: Version = 0x5130_3436;

/// Most frames read from one packet; the rest of the packet is left unread.
pub const MAX_FRAMES: usize = 1024;
/// Most tags read from one Google QUIC handshake message.
pub const MAX_TAGS: usize = 128;

/// Google QUIC versions with Google's own long header (connection id lengths in
/// nibbles; Q046 already uses IETF packet types).
fn is_gquic(v: Version) -> bool {
    (Q043..=Q046).contains(&v)
}

/// The version as Suricata writes it: Google's by name, v2, the others in hex.
pub fn version_name(v: Version) -> String {
    match v {
        Q039 | Q043 | Q044 | Q045 | Q046 => String::from_utf8_lossy(&v.to_be_bytes()).into_owned(),
        V2 => "v2".to_string(),
        v => format!("{v:x}"),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketType {
    Initial,
    ZeroRtt,
    Handshake,
    Retry,
    VersionNegotiation,
    Short,
}

/// A packet's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header<'a> {
    pub first: u8,
    pub ty: PacketType,
    /// 0 for short headers without a version.
    pub version: Version,
    /// The version's four bytes (`quic.version`); empty when the header has none.
    pub version_bytes: [u8; 4],
    pub has_version: bool,
    pub dcid: &'a [u8],
    /// Where the payload (for an IETF Initial: the protected packet number) starts.
    pub payload_at: usize,
    /// The payload's length.
    pub payload_len: usize,
}

/// A bounded big-endian reader over a packet.
#[derive(Debug, Clone, Copy)]
struct Rd<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Rd<'a> {
    fn new(data: &'a [u8]) -> Rd<'a> {
        Rd { data, at: 0 }
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let b = self.data.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(b)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        let b = self.take(4)?;
        Some(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn rest(&self) -> usize {
        self.data.len().saturating_sub(self.at)
    }
    /// A variable-length integer (RFC 9000 16).
    fn varint(&mut self) -> Option<u64> {
        let first = self.u8()?;
        let n = 1usize << (first >> 6);
        let mut v = u64::from(first & 0x3f);
        for &b in self.take(n - 1)? {
            v = (v << 8) | u64::from(b);
        }
        Some(v)
    }
}

/// The header at the start of `data` (a datagram may hold several packets); `None`
/// when it is not a QUIC header Meerkat (as Suricata) accepts.
pub fn header(data: &[u8]) -> Option<Header<'_>> {
    let mut r = Rd::new(data);
    let first = r.u8()?;
    let mut h = Header {
        first,
        ty: PacketType::Short,
        version: 0,
        version_bytes: [0; 4],
        has_version: false,
        dcid: &[],
        payload_at: 0,
        payload_len: 0,
    };
    if first & 0x80 == 0 {
        if first & 0x40 == 0 {
            // Google QUIC's public header: flags say what follows.
            if first & 0x08 != 0 {
                h.dcid = r.take(8)?;
            } else if first & 0x04 != 0 {
                r.take(32)?; // diversification nonce
            }
            if first & 0x01 != 0 {
                let v = r.take(4)?;
                h.version_bytes = [v[0], v[1], v[2], v[3]];
                h.version = u32::from_be_bytes(h.version_bytes);
                h.has_version = true;
                h.ty = PacketType::Initial;
            }
            r.take(1 + usize::from((first & 0x30) >> 4))?; // packet number
            if first & 0x08 != 0 {
                r.take(12)?; // message authentication hash
            }
        }
        // An IETF short header: nothing readable past the first byte.
        h.payload_at = r.at;
        h.payload_len = fit_u16(r.rest())?;
        return Some(h);
    }
    let v = r.take(4)?;
    h.version_bytes = [v[0], v[1], v[2], v[3]];
    h.version = u32::from_be_bytes(h.version_bytes);
    h.has_version = true;
    h.ty = if h.version == 0 {
        PacketType::VersionNegotiation
    } else if is_gquic(h.version) && h.version != Q046 {
        match first & 0x7f {
            0x7f => PacketType::Initial,
            0x7e => PacketType::Retry,
            0x7d => PacketType::Handshake,
            0x7c => PacketType::ZeroRtt,
            _ => return None,
        }
    } else {
        // Version 2 numbers its long packet types differently (RFC 9369 3.2).
        match ((first & 0x30) >> 4, h.version == V2) {
            (0, false) | (1, true) => PacketType::Initial,
            (1, false) | (2, true) => PacketType::ZeroRtt,
            (2, false) | (3, true) => PacketType::Handshake,
            _ => PacketType::Retry,
        }
    };
    if is_gquic(h.version) {
        let lens = r.u8()?;
        let len = |n: u8| if n == 0 { 0 } else { usize::from(n) + 3 };
        h.dcid = r.take(len(lens >> 4))?;
        r.take(len(lens & 0x0f))?;
    } else {
        let n = r.u8()?;
        h.dcid = r.take(usize::from(n))?;
        let n = r.u8()?;
        r.take(usize::from(n))?;
    }
    if h.ty == PacketType::Initial {
        if is_gquic(h.version) {
            r.take(4 + 12)?; // packet number, message authentication hash
        } else {
            let token = usize::try_from(r.varint()?).ok()?;
            r.take(token)?;
            let len = usize::try_from(r.varint()?).ok()?;
            if len > r.rest() {
                return None;
            }
            h.payload_at = r.at;
            h.payload_len = fit_u16(len)?;
            return Some(h);
        }
    }
    h.payload_at = r.at;
    h.payload_len = fit_u16(r.rest())?;
    Some(h)
}

fn fit_u16(n: usize) -> Option<usize> {
    (n <= usize::from(u16::MAX)).then_some(n)
}

/// A Google QUIC handshake tag (`SNI\0`, `UAID`, ...), as four bytes big endian.
pub type Tag = u32;

pub const TAG_SNI: Tag = u32::from_be_bytes(*b"SNI\0");
pub const TAG_UAID: Tag = u32::from_be_bytes(*b"UAID");

/// The tags Suricata knows; a message with any other tag has no tags for it.
const KNOWN_TAGS: &[&[u8; 4]] = &[
    b"AEAD", b"CCRT", b"CCS\0", b"CETV", b"CFCW", b"CHLO", b"COPT", b"CSCT", b"CTIM", b"ICSL",
    b"IRTT", b"KEXS", b"MIDS", b"MSPC", b"NONC", b"NONP", b"PAD\0", b"PDMD", b"PUBS", b"SCID",
    b"SCLS", b"SFCW", b"SMHL", b"SNI\0", b"SNO\0", b"STK\0", b"TCID", b"UAID", b"VER\0", b"XLCT",
];

fn known_tag(t: Tag) -> bool {
    KNOWN_TAGS.iter().any(|k| u32::from_be_bytes(**k) == t)
}

/// A tag's name (`PAD`, `UAID`: its bytes without the trailing NULs).
pub fn tag_name(t: Tag) -> String {
    let b = t.to_be_bytes();
    let end = b.iter().position(|&c| c == 0).unwrap_or(4);
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// A Google QUIC handshake message: its tags in order, with their values.
pub type Tags<'a> = Vec<(Tag, &'a [u8])>;

/// Reads a handshake message (`CHLO`...): message tag, tag count (LE), two bytes of
/// padding, (tag, end offset LE) pairs, then the values; the message must fill
/// `data` exactly and use known tags only.
fn handshake_tags(data: &[u8]) -> Option<Tags<'_>> {
    let mut r = Rd::new(data);
    if !known_tag(r.u32()?) {
        return None;
    }
    let n = r.take(2)?;
    let n = usize::from(u16::from_le_bytes([n[0], n[1]]));
    r.take(2)?;
    if n > MAX_TAGS {
        return None;
    }
    let mut index = Vec::with_capacity(n);
    for _ in 0..n {
        let tag = r.u32()?;
        if !known_tag(tag) {
            return None;
        }
        let end = r.take(4)?;
        index.push((tag, u32::from_le_bytes([end[0], end[1], end[2], end[3]])));
    }
    let mut tags = Vec::with_capacity(n);
    let mut prev = 0u32;
    for (tag, end) in index {
        let len = end.checked_sub(prev)?;
        tags.push((tag, r.take(usize::try_from(len).ok()?)?));
        prev = end;
    }
    (r.rest() == 0).then_some(tags)
}

/// A frame Meerkat reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frame<'a> {
    Padding,
    Ping,
    Ack,
    /// CRYPTO: handshake bytes at `offset` of the direction's crypto stream.
    Crypto {
        offset: u64,
        data: &'a [u8],
    },
    /// A Google QUIC STREAM frame (or its crypto stream frame), with the tags of the
    /// handshake message it carries when it is one.
    Stream {
        tags: Option<Tags<'a>>,
    },
    /// Any other frame: the rest of the payload is not read.
    Other,
}

/// A payload whose frames do not read (Suricata's `error_on_data`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BadFrames;

/// The frames of a payload. `Err` when a frame is malformed (the payload is not
/// read further, as Suricata's `error_on_data`).
pub fn frames(data: &[u8]) -> Result<Vec<Frame<'_>>, BadFrames> {
    let mut r = Rd::new(data);
    let mut out = Vec::new();
    while r.rest() > 0 && out.len() < MAX_FRAMES {
        let save = r;
        match frame(&mut r) {
            Some(f) => {
                let other = f == Frame::Other;
                out.push(f);
                if other {
                    break;
                }
            }
            None => {
                r = save;
                break;
            }
        }
    }
    if r.rest() > 0 && out.len() < MAX_FRAMES {
        return Err(BadFrames);
    }
    Ok(out)
}

fn frame<'a>(r: &mut Rd<'a>) -> Option<Frame<'a>> {
    let ty = r.u8()?;
    if ty & 0x80 != 0 {
        // Google QUIC STREAM: 1 f d ooo ss.
        let off_len = match (ty & 0x1c) >> 2 {
            0 => 0,
            n => usize::from(n) + 1,
        };
        r.take(usize::from(ty & 0x03) + 1)?; // stream id
        r.take(off_len)?;
        let len = if ty & 0x20 != 0 {
            let b = r.take(2)?;
            usize::from(u16::from_be_bytes([b[0], b[1]]))
        } else {
            r.rest()
        };
        let data = r.take(len)?;
        return Some(Frame::Stream {
            tags: handshake_tags(data),
        });
    }
    Some(match ty {
        0x00 => {
            while r.data.get(r.at) == Some(&0) {
                r.at += 1;
            }
            Frame::Padding
        }
        0x01 => Frame::Ping,
        0x02 => {
            r.varint()?; // largest acknowledged
            r.varint()?; // delay
            let ranges = r.varint()?;
            r.varint()?; // first range
            // Each range is at least two bytes: the count is bounded by the packet.
            for _ in 0..ranges {
                r.varint()?;
                r.varint()?;
            }
            Frame::Ack
        }
        0x06 => {
            let offset = r.varint()?;
            let len = usize::try_from(r.varint()?).ok()?;
            let data = r.take(len)?;
            Frame::Crypto { offset, data }
        }
        0x08 => {
            // Google QUIC's (T0xx) crypto stream frame.
            r.varint()?;
            let len = u32::try_from(r.varint()?).ok()?;
            let data = r.take(usize::try_from(len).ok()?)?;
            Frame::Stream {
                tags: handshake_tags(data),
            }
        }
        _ => {
            r.at = r.data.len();
            Frame::Other
        }
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn long_short_and_gquic_headers() {
        // v1 Initial: DCID 8394c8f03e515708, no SCID, no token, length 4.
        let p = b"\xc3\x00\x00\x00\x01\x08\x83\x94\xc8\xf0\x3e\x51\x57\x08\x00\x00\x04abcd";
        let h = header(p).unwrap();
        assert_eq!(
            (h.ty, h.version, h.payload_at, h.payload_len),
            (PacketType::Initial, 1, 17, 4)
        );
        assert_eq!(h.dcid, b"\x83\x94\xc8\xf0\x3e\x51\x57\x08");
        // A length past the datagram is refused.
        assert!(header(&p[..p.len() - 1]).is_none());
        // v2's Initial type is 01.
        let mut v2 = p.to_vec();
        v2[0] = 0xd3;
        v2[1..5].copy_from_slice(&V2.to_be_bytes());
        assert_eq!(header(&v2).unwrap().ty, PacketType::Initial);
        v2[0] = 0xc3;
        assert_eq!(header(&v2).unwrap().ty, PacketType::Retry);
        // A short header.
        assert_eq!(header(b"\x43abc").unwrap().ty, PacketType::Short);
        // Version negotiation.
        let vn = b"\x80\x00\x00\x00\x00\x01a\x01b\x00\x00\x00\x01";
        assert_eq!(header(vn).unwrap().ty, PacketType::VersionNegotiation);
        // Q043 long header: type 0x7f, lengths in nibbles (8 + 0), pn, hash.
        let mut q = b"\xffQ043\x50".to_vec();
        q.extend([1u8; 8]);
        q.extend([0u8; 16]);
        q.extend(b"xyz");
        let h = header(&q).unwrap();
        assert_eq!((h.ty, h.payload_len), (PacketType::Initial, 3));
        assert_eq!(version_name(h.version), "Q043");
        q[0] = 0xf0;
        assert!(header(&q).is_none());
        // Google's public header with a version.
        let mut g = b"\x09".to_vec();
        g.extend([1u8; 8]);
        g.extend(b"Q039");
        g.push(1);
        g.extend([0u8; 12]);
        g.extend(b"payload");
        let h = header(&g).unwrap();
        assert_eq!((h.ty, h.payload_len), (PacketType::Initial, 7));
        assert!(header(b"").is_none());
        assert_eq!(version_name(1), "1");
        assert_eq!(version_name(V2), "v2");
        assert_eq!(version_name(0xff00_001d), "ff00001d");
    }

    /// A CHLO with tags PAD, SNI, VER.
    pub(crate) fn chlo() -> Vec<u8> {
        let mut m = b"CHLO\x03\x00\x00\x00".to_vec();
        m.extend(b"PAD\0\x02\x00\x00\x00SNI\0\x0d\x00\x00\x00VER\0\x11\x00\x00\x00");
        m.extend(b"\0\0www.a.b.comQ043");
        m
    }

    #[test]
    fn frames_and_tags() {
        let mut p = vec![0x02, 0x01, 0x00, 0x00, 0x00];
        p.extend([0x06, 0x00, 0x03]);
        p.extend(b"abc");
        p.extend([0xa0, 0x01]);
        let m = chlo();
        p.extend((m.len() as u16).to_be_bytes());
        p.extend(&m);
        p.extend([0, 0, 0]);
        let f = frames(&p).unwrap();
        assert_eq!(f[0], Frame::Ack);
        assert_eq!(
            f[1],
            Frame::Crypto {
                offset: 0,
                data: b"abc"
            }
        );
        let Frame::Stream { tags: Some(tags) } = &f[2] else {
            panic!("{f:?}")
        };
        assert_eq!(tags.len(), 3);
        assert_eq!(tags[1], (TAG_SNI, &b"www.a.b.com"[..]));
        assert_eq!(tag_name(tags[0].0), "PAD");
        assert_eq!(f[3], Frame::Padding);
        // A truncated CRYPTO frame is an error.
        assert!(frames(&[0x06, 0x00, 0x05, 1]).is_err());
        // An unknown tag: no tags.
        let mut bad = m.clone();
        bad[8] = b'Z';
        assert_eq!(handshake_tags(&bad), None);
        assert_eq!(frames(&[0x1e, 1, 2, 3]).unwrap(), vec![Frame::Other]);
    }
}
