//! DNS message parsing (RFC 1035) over borrowed bytes: header, questions, resource
//! records, compressed names.
//!
//! Names are followed through compression pointers with a jump limit (a pointer loop
//! ends there) and a length limit; every section count is capped. A truncated message
//! yields what parsed before the cut plus a flag.

use std::net::Ipv4Addr;

/// Longest name rendered, in bytes (RFC 1035 allows 255 on the wire; the dotted text
/// of such a name fits in this).
pub const MAX_NAME_LEN: usize = 1025;
/// Most compression pointers followed in one name.
pub const MAX_POINTERS: usize = 32;
/// Most labels in one name.
pub const MAX_LABELS: usize = 128;
/// Most entries parsed per section.
pub const MAX_RECORDS: usize = 256;
/// Most TXT strings joined from one record.
pub const MAX_TXT_STRINGS: usize = 64;

pub const HEADER_LEN: usize = 12;

/// Record types with a name here (the rest keep their number).
pub fn type_name(t: u16) -> Option<&'static str> {
    meerkat_proto::dns::rrtype_name(u32::from(t))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub id: u16,
    pub flags: u16,
    pub qdcount: u16,
    pub ancount: u16,
    pub nscount: u16,
    pub arcount: u16,
}

impl Header {
    pub fn parse(b: &[u8]) -> Option<Header> {
        let w = |i: usize| Some(u16::from_be_bytes([*b.get(i)?, *b.get(i + 1)?]));
        Some(Header {
            id: w(0)?,
            flags: w(2)?,
            qdcount: w(4)?,
            ancount: w(6)?,
            nscount: w(8)?,
            arcount: w(10)?,
        })
    }
    pub fn qr(&self) -> bool {
        self.flags & 0x8000 != 0
    }
    pub fn opcode(&self) -> u16 {
        (self.flags >> 11) & 0xf
    }
    pub fn rcode(&self) -> u16 {
        self.flags & 0xf
    }
}

/// Why a name did not parse completely.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameError {
    /// The message ends inside the name.
    Truncated,
    /// Too many pointers (a loop) or labels.
    Loop,
    /// A reserved label type (0x40, 0x80).
    BadLabel,
}

/// Reads the name at `at` in `msg`; returns the dotted name and the offset after it
/// in the original position (pointers do not move it further).
pub fn read_name(msg: &[u8], at: usize, out: &mut Vec<u8>) -> Result<usize, NameError> {
    walk_name(msg, at, Some(out))
}

/// Checks the name at `at` like [`read_name`] without copying it (probing).
pub fn skip_name(msg: &[u8], at: usize) -> Result<usize, NameError> {
    walk_name(msg, at, None)
}

fn walk_name(msg: &[u8], at: usize, mut out: Option<&mut Vec<u8>>) -> Result<usize, NameError> {
    let mut pos = at;
    let mut end: Option<usize> = None;
    let mut jumps = 0usize;
    let mut labels = 0usize;
    loop {
        let len = *msg.get(pos).ok_or(NameError::Truncated)?;
        match len & 0xc0 {
            0x00 => {
                if len == 0 {
                    return Ok(end.unwrap_or(pos + 1));
                }
                let l = usize::from(len);
                let label = msg.get(pos + 1..pos + 1 + l).ok_or(NameError::Truncated)?;
                labels += 1;
                if labels > MAX_LABELS {
                    return Err(NameError::Loop);
                }
                if let Some(out) = out.as_deref_mut()
                    && out.len() < MAX_NAME_LEN
                {
                    if !out.is_empty() {
                        out.push(b'.');
                    }
                    let room = MAX_NAME_LEN.saturating_sub(out.len());
                    out.extend_from_slice(&label[..l.min(room)]);
                }
                pos += 1 + l;
            }
            0xc0 => {
                let lo = *msg.get(pos + 1).ok_or(NameError::Truncated)?;
                let target = usize::from(u16::from_be_bytes([len & 0x3f, lo]));
                jumps += 1;
                if jumps > MAX_POINTERS {
                    return Err(NameError::Loop);
                }
                if end.is_none() {
                    end = Some(pos + 2);
                }
                pos = target;
            }
            _ => return Err(NameError::BadLabel),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Question {
    pub name: Vec<u8>,
    pub rrtype: u16,
    pub class: u16,
}

/// Structured rdata for the types Suricata logs in detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rdata {
    /// Text rendering (addresses, names, TXT strings).
    Text(Vec<u8>),
    Soa {
        mname: Vec<u8>,
        rname: Vec<u8>,
        serial: u32,
        refresh: u32,
        retry: u32,
        expire: u32,
        minimum: u32,
    },
    Mx {
        preference: u16,
        exchange: Vec<u8>,
    },
    Srv {
        priority: u16,
        weight: u16,
        port: u16,
        name: Vec<u8>,
    },
    /// A type without a rendering.
    None,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub name: Vec<u8>,
    pub rrtype: u16,
    pub class: u16,
    pub ttl: u32,
    pub rdata: Rdata,
}

/// A parsed message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub header: Header,
    pub questions: Vec<Question>,
    pub answers: Vec<Record>,
    pub authorities: Vec<Record>,
    pub additionals: Vec<Record>,
    /// The message ended before all counted entries were read.
    pub truncated: bool,
    /// A name had a pointer loop, too many labels, or a bad label type.
    pub bad_name: bool,
    /// A count was above [`MAX_RECORDS`].
    pub too_many: bool,
}

impl Message {
    /// Reads the name at `*at` and moves past it; a truncated or malformed name is noted on
    /// the message (and `None` returned).
    fn take_name(&mut self, msg: &[u8], at: &mut usize) -> Option<Vec<u8>> {
        let mut name = Vec::new();
        match read_name(msg, *at, &mut name) {
            Ok(next) => {
                *at = next;
                Some(name)
            }
            Err(e) => {
                self.truncated |= e == NameError::Truncated;
                self.bad_name |= e != NameError::Truncated;
                None
            }
        }
    }
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}
fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn rdata(msg: &[u8], rrtype: u16, start: usize, rd: &[u8]) -> Rdata {
    let name_at = |at: usize| {
        let mut n = Vec::new();
        read_name(msg, at, &mut n).ok().map(|_| n)
    };
    match rrtype {
        1 if rd.len() == 4 => {
            let a = Ipv4Addr::new(rd[0], rd[1], rd[2], rd[3]);
            Rdata::Text(a.to_string().into_bytes())
        }
        28 if rd.len() == 16 => {
            // In full, as Suricata logs AAAA data: eight groups of four hex digits.
            const HEX: &[u8; 16] = b"0123456789abcdef";
            let mut text = Vec::with_capacity(39);
            for (i, pair) in rd.chunks_exact(2).enumerate() {
                if i > 0 {
                    text.push(b':');
                }
                for byte in pair {
                    text.push(HEX[usize::from(byte >> 4)]);
                    text.push(HEX[usize::from(byte & 0x0f)]);
                }
            }
            Rdata::Text(text)
        }
        2 | 5 | 12 | 39 => name_at(start).map_or(Rdata::None, Rdata::Text),
        15 => match (be16(rd, 0), name_at(start + 2)) {
            (Some(preference), Some(exchange)) => Rdata::Mx {
                preference,
                exchange,
            },
            _ => Rdata::None,
        },
        33 => match (be16(rd, 0), be16(rd, 2), be16(rd, 4), name_at(start + 6)) {
            (Some(priority), Some(weight), Some(port), Some(name)) => Rdata::Srv {
                priority,
                weight,
                port,
                name,
            },
            _ => Rdata::None,
        },
        6 => {
            let mut mname = Vec::new();
            let Ok(after) = read_name(msg, start, &mut mname) else {
                return Rdata::None;
            };
            let mut rname = Vec::new();
            let Ok(after) = read_name(msg, after, &mut rname) else {
                return Rdata::None;
            };
            let n = |i: usize| be32(msg, after + 4 * i);
            match (n(0), n(1), n(2), n(3), n(4)) {
                (Some(serial), Some(refresh), Some(retry), Some(expire), Some(minimum)) => {
                    Rdata::Soa {
                        mname,
                        rname,
                        serial,
                        refresh,
                        retry,
                        expire,
                        minimum,
                    }
                }
                _ => Rdata::None,
            }
        }
        16 | 99 => {
            let mut out = Vec::new();
            let mut i = 0;
            let mut n = 0;
            while i < rd.len() && n < MAX_TXT_STRINGS {
                let l = usize::from(rd[i]);
                let s = &rd[i + 1..(i + 1 + l).min(rd.len())];
                out.extend_from_slice(s);
                i += 1 + l;
                n += 1;
            }
            Rdata::Text(out)
        }
        _ => Rdata::None,
    }
}

/// Parses a whole message (a UDP payload or one TCP-framed message).
pub fn parse(msg: &[u8]) -> Option<Message> {
    let header = Header::parse(msg)?;
    let mut m = Message {
        header,
        ..Message::default()
    };
    let mut at = HEADER_LEN;
    let cap = |n: u16, m: &mut Message| {
        let n = usize::from(n);
        if n > MAX_RECORDS {
            m.too_many = true;
        }
        n.min(MAX_RECORDS)
    };
    let qd = cap(header.qdcount, &mut m);
    for _ in 0..qd {
        let Some(name) = m.take_name(msg, &mut at) else {
            return Some(m);
        };
        let (Some(rrtype), Some(class)) = (be16(msg, at), be16(msg, at + 2)) else {
            m.truncated = true;
            return Some(m);
        };
        at += 4;
        m.questions.push(Question {
            name,
            rrtype,
            class,
        });
    }
    let counts = [
        cap(header.ancount, &mut m),
        cap(header.nscount, &mut m),
        cap(header.arcount, &mut m),
    ];
    for (section, &n) in counts.iter().enumerate() {
        for _ in 0..n {
            let Some(name) = m.take_name(msg, &mut at) else {
                return Some(m);
            };
            let (Some(rrtype), Some(class), Some(ttl), Some(rdlen)) = (
                be16(msg, at),
                be16(msg, at + 2),
                be32(msg, at + 4),
                be16(msg, at + 8),
            ) else {
                m.truncated = true;
                return Some(m);
            };
            let start = at + 10;
            let Some(rd) = msg.get(start..start + usize::from(rdlen)) else {
                m.truncated = true;
                return Some(m);
            };
            let rec = Record {
                name,
                rrtype,
                class,
                ttl,
                rdata: rdata(msg, rrtype, start, rd),
            };
            at = start + usize::from(rdlen);
            match section {
                0 => m.answers.push(rec),
                1 => m.authorities.push(rec),
                _ => m.additionals.push(rec),
            }
        }
    }
    Some(m)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A query for www.example.com A, id 0x1234, RD set.
    pub(crate) const QUERY: &[u8] = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\
\x03www\x07example\x03com\x00\x00\x01\x00\x01";

    /// Its answer: a CNAME to a.example.com (compressed), then an A record.
    pub(crate) const RESPONSE: &[u8] = b"\x12\x34\x81\x80\x00\x01\x00\x02\x00\x00\x00\x00\
\x03www\x07example\x03com\x00\x00\x01\x00\x01\
\xc0\x0c\x00\x05\x00\x01\x00\x00\x0e\x10\x00\x04\x01a\xc0\x10\
\xc0\x2d\x00\x01\x00\x01\x00\x00\x0e\x10\x00\x04\x5d\xb8\xd8\x22";

    #[test]
    fn query_and_answers() {
        let q = parse(QUERY).unwrap();
        assert_eq!(q.header.id, 0x1234);
        assert!(!q.header.qr());
        assert_eq!(q.questions[0].name, b"www.example.com");
        let r = parse(RESPONSE).unwrap();
        assert!(r.header.qr() && !r.truncated);
        assert_eq!(r.answers.len(), 2);
        assert_eq!(r.answers[0].rdata, Rdata::Text(b"a.example.com".to_vec()));
        assert_eq!(r.answers[1].name, b"a.example.com");
        assert_eq!(r.answers[1].rdata, Rdata::Text(b"93.184.216.34".to_vec()));
        assert_eq!(r.answers[1].ttl, 3600);
    }

    #[test]
    fn pointer_loop_and_truncation() {
        // A name that points at itself.
        let mut m = QUERY[..12].to_vec();
        m.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01");
        let p = parse(&m).unwrap();
        assert!(p.bad_name && p.questions.is_empty());
        // Cut in the middle of the question.
        let p = parse(&QUERY[..20]).unwrap();
        assert!(p.truncated);
        assert!(parse(&QUERY[..5]).is_none());
        // A huge count with no data is capped, not looped over.
        let mut m = QUERY.to_vec();
        m[6] = 0xff;
        m[7] = 0xff;
        let p = parse(&m).unwrap();
        assert!(p.too_many && p.truncated);
    }

    #[test]
    fn long_name_is_capped() {
        let mut m = QUERY[..12].to_vec();
        for _ in 0..127 {
            m.extend_from_slice(b"\x3f");
            m.extend(std::iter::repeat_n(b'a', 63));
        }
        m.extend_from_slice(b"\x00\x00\x01\x00\x01");
        let p = parse(&m).unwrap();
        assert_eq!(p.questions[0].name.len(), MAX_NAME_LEN);
    }

    #[test]
    fn rdata_kinds() {
        // MX 10 mail.<www.example.com>, SOA, SRV, TXT, AAAA.
        let mut m = RESPONSE[..33].to_vec();
        m[7] = 5; // ancount
        m.extend_from_slice(
            b"\xc0\x0c\x00\x0f\x00\x01\x00\x00\x00\x3c\x00\x09\x00\x0a\x04mail\xc0\x0c",
        );
        m.extend_from_slice(b"\xc0\x0c\x00\x06\x00\x01\x00\x00\x00\x3c\x00\x1e\x02ns\xc0\x10\x02hm\xc0\x10\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00\x03\x00\x00\x00\x04\x00\x00\x00\x05");
        m.extend_from_slice(
            b"\xc0\x0c\x00\x21\x00\x01\x00\x00\x00\x3c\x00\x08\x00\x01\x00\x02\x01\xbb\xc0\x0c",
        );
        m.extend_from_slice(b"\xc0\x0c\x00\x10\x00\x01\x00\x00\x00\x3c\x00\x06\x02hi\x02yo");
        m.extend_from_slice(b"\xc0\x0c\x00\x1c\x00\x01\x00\x00\x00\x3c\x00\x10\x20\x01\x0d\xb8\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01");
        let p = parse(&m).unwrap();
        assert!(!p.truncated, "{p:?}");
        assert_eq!(
            p.answers[0].rdata,
            Rdata::Mx {
                preference: 10,
                exchange: b"mail.www.example.com".to_vec()
            }
        );
        assert!(
            matches!(&p.answers[1].rdata, Rdata::Soa { mname, serial: 1, minimum: 5, .. } if mname == b"ns.example.com")
        );
        assert!(matches!(&p.answers[2].rdata, Rdata::Srv { port: 443, .. }));
        assert_eq!(p.answers[3].rdata, Rdata::Text(b"hiyo".to_vec()));
        assert_eq!(
            p.answers[4].rdata,
            Rdata::Text(b"2001:0db8:0000:0000:0000:0000:0000:0001".to_vec())
        );
    }
}
