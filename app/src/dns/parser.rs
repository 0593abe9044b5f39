//! DNS message parsing (RFC 1035) over borrowed bytes: header, questions, resource
//! records, compressed names.
//!
//! Names are followed through compression pointers with a jump limit (a pointer loop
//! ends there) and a length limit; every section count is capped. A truncated message
//! yields what parsed before the cut plus a flag.

/// Longest name rendered, in bytes (RFC 1035 allows 255 on the wire; the dotted text
/// of such a name fits in this): a longer one is cut there (`dns.name_too_long`, as
/// Suricata, which keeps 1025 bytes too).
pub const MAX_NAME_LEN: usize = 1025;
/// Most compression pointers followed in one name (more: `dns.infinite_loop`).
pub const MAX_POINTERS: usize = 32;
/// Most labels in one name, Suricata's limit (more: `dns.too_many_labels`, or
/// `dns.infinite_loop` when pointers were followed).
pub const MAX_LABELS: usize = 255;
/// Most entries parsed per section.
pub const MAX_RECORDS: usize = 256;
/// Most TXT strings joined from one record.
pub const MAX_TXT_STRINGS: usize = 64;

pub const HEADER_LEN: usize = 12;
/// The reserved Z bit of the header's flags (`dns.z_flag_set` when set).
pub const Z_FLAG: u16 = 0x0040;

/// Record types with a name here (the rest keep their number).
pub fn type_name(t: u16) -> Option<&'static str> {
    super::names::rrtype_name(u32::from(t))
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
    /// Too many pointers, or too many labels after a pointer (a loop).
    Loop,
    /// Too many labels, no pointer followed.
    TooManyLabels,
    /// A reserved label type (0x40, 0x80).
    BadLabel,
}

/// Reads the name at `at` in `msg`, appending its dotted form (at most
/// [`MAX_NAME_LEN`] bytes, `cut` set when it was longer) to `out`; returns the offset
/// after it in the original position (pointers do not move it further).
pub fn read_name(
    msg: &[u8],
    at: usize,
    out: &mut Vec<u8>,
    cut: &mut bool,
) -> Result<usize, NameError> {
    walk_name(msg, at, Some(out), cut)
}

/// Checks the name at `at` like [`read_name`] without copying it (probing).
pub fn skip_name(msg: &[u8], at: usize) -> Result<usize, NameError> {
    walk_name(msg, at, None, &mut false)
}

fn walk_name(
    msg: &[u8],
    at: usize,
    mut out: Option<&mut Vec<u8>>,
    cut: &mut bool,
) -> Result<usize, NameError> {
    let mut pos = at;
    let mut end: Option<usize> = None;
    let mut jumps = 0usize;
    let mut labels = 0usize;
    // The name is appended after what `out` holds already (a message's text arena).
    let base = out.as_deref().map_or(0, Vec::len);
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
                    return Err(if jumps > 0 {
                        NameError::Loop
                    } else {
                        NameError::TooManyLabels
                    });
                }
                if let Some(out) = out.as_deref_mut() {
                    let have = out.len() - base;
                    let dot = usize::from(have > 0);
                    if have + dot + l > MAX_NAME_LEN {
                        *cut = true;
                    }
                    if have < MAX_NAME_LEN {
                        if have > 0 {
                            out.push(b'.');
                        }
                        let room = MAX_NAME_LEN.saturating_sub(out.len() - base);
                        out.extend_from_slice(&label[..l.min(room)]);
                    }
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

/// Where a name or a text lies in its message's text arena ([`Message::text`]).
///
/// A message keeps all its names and rdata texts in one buffer: parsing a message costs
/// a few allocations, not one per name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Span {
    start: u32,
    end: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Question {
    pub name: Span,
    pub rrtype: u16,
    pub class: u16,
}

/// Structured rdata for the types Suricata logs in detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rdata {
    /// Text rendering (addresses, names, TXT strings).
    Text(Span),
    Soa {
        mname: Span,
        rname: Span,
        serial: u32,
        refresh: u32,
        retry: u32,
        expire: u32,
        minimum: u32,
    },
    Mx {
        preference: u16,
        exchange: Span,
    },
    Srv {
        priority: u16,
        weight: u16,
        port: u16,
        name: Span,
    },
    /// TXT (and SPF) strings, each with its length byte before it ([`txt_strings`]).
    Txt(Span),
    /// OPT: its options as on the wire, code, length and data each ([`opt_options`]).
    Opt(Span),
    /// Any other type: the rdata bytes as they are.
    Raw(Span),
    /// Rdata of a known type that did not parse.
    None,
}

/// The strings of a [`Rdata::Txt`] text.
pub fn txt_strings(mut b: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        let (&l, rest) = b.split_first()?;
        let (s, rest) = rest.split_at(usize::from(l).min(rest.len()));
        b = rest;
        Some(s)
    })
}

/// The options (code, data) of a [`Rdata::Opt`] text; a cut option ends the list.
pub fn opt_options(mut b: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    std::iter::from_fn(move || {
        let code = be16(b, 0)?;
        let len = usize::from(be16(b, 2)?);
        let data = b.get(4..4 + len)?;
        b = &b[4 + len..];
        Some((code, data))
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub name: Span,
    pub rrtype: u16,
    pub class: u16,
    pub ttl: u32,
    pub rdata: Rdata,
}

/// The sections of resource records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    Answer,
    Authority,
    Additional,
}

/// A parsed message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Message {
    pub header: Header,
    pub questions: Vec<Question>,
    /// Answers, then authorities, then additionals.
    records: Vec<Record>,
    /// Ends (in `records`) of the answer and the authority sections.
    section_ends: [usize; 2],
    /// The text of every name and rdata rendering, addressed by [`Span`]s.
    text: Vec<u8>,
    /// The message ended before all counted questions and answers were read, or a
    /// name of theirs had a bad label type (`dns.malformed_data`).
    pub truncated: bool,
    /// The authority section did not parse (`dns.invalid_authorities`).
    pub bad_authorities: bool,
    /// The additional section did not parse (`dns.invalid_additionals`).
    pub bad_additionals: bool,
    /// A name had a pointer loop (`dns.infinite_loop`).
    pub name_loop: bool,
    /// A name had more than [`MAX_LABELS`] labels (`dns.too_many_labels`).
    pub too_many_labels: bool,
    /// A name was longer than [`MAX_NAME_LEN`] and was cut (`dns.name_too_long`).
    pub name_too_long: bool,
    /// A count was above [`MAX_RECORDS`]: the entries past it were not read (Suricata
    /// has no such limit, and so no event for it).
    pub too_many: bool,
    /// The section being read (where a failure is charged).
    section: Option<Section>,
}

impl Message {
    /// An empty message with `header`.
    pub fn new(header: Header) -> Message {
        Message {
            header,
            ..Message::default()
        }
    }

    /// The bytes of a name or text of this message.
    pub fn text(&self, s: Span) -> &[u8] {
        self.text.get(s.range()).unwrap_or_default()
    }

    pub fn answers(&self) -> &[Record] {
        &self.records[..self.section_ends[0]]
    }

    pub fn authorities(&self) -> &[Record] {
        &self.records[self.section_ends[0]..self.section_ends[1]]
    }

    pub fn additionals(&self) -> &[Record] {
        &self.records[self.section_ends[1]..]
    }

    /// Adds `b` to the text arena.
    pub fn add_text(&mut self, b: &[u8]) -> Span {
        let start = self.text.len();
        self.text.extend_from_slice(b);
        self.span_from(start)
    }

    /// Adds a question.
    pub fn push_question(&mut self, q: Question) {
        self.questions.push(q);
    }

    /// Adds a record at the end of `section` (sections are filled in wire order).
    pub fn push_record(&mut self, section: Section, r: Record) {
        let at = match section {
            Section::Answer => {
                self.section_ends[0] += 1;
                self.section_ends[1] += 1;
                self.section_ends[0] - 1
            }
            Section::Authority => {
                self.section_ends[1] += 1;
                self.section_ends[1] - 1
            }
            Section::Additional => self.records.len(),
        };
        self.records.insert(at, r);
    }

    /// The span of what the arena gained since it held `start` bytes.
    fn span_from(&self, start: usize) -> Span {
        // The arena is bounded far below 4 GiB: at most MAX_RECORDS records per section,
        // each with a few names of at most MAX_NAME_LEN bytes.
        Span {
            start: start as u32,
            end: self.text.len() as u32,
        }
    }

    /// Reads the name at `at` into the arena; `None` (the arena unchanged) if it does
    /// not parse.
    fn name_at(&mut self, msg: &[u8], at: usize) -> Option<(Span, usize)> {
        let start = self.text.len();
        match read_name(msg, at, &mut self.text, &mut self.name_too_long) {
            Ok(next) => Some((self.span_from(start), next)),
            Err(_) => {
                self.text.truncate(start);
                None
            }
        }
    }

    /// Reads the name at `*at` and moves past it; a truncated or malformed name is noted on
    /// the message (and `None` returned).
    fn take_name(&mut self, msg: &[u8], at: &mut usize) -> Option<Span> {
        let start = self.text.len();
        match read_name(msg, *at, &mut self.text, &mut self.name_too_long) {
            Ok(next) => {
                *at = next;
                Some(self.span_from(start))
            }
            Err(e) => {
                self.text.truncate(start);
                match e {
                    NameError::Loop => self.name_loop = true,
                    NameError::TooManyLabels => self.too_many_labels = true,
                    NameError::Truncated | NameError::BadLabel => self.cut_short(),
                }
                None
            }
        }
    }

    /// The message ends (or breaks) in the section being read.
    fn cut_short(&mut self) {
        match self.section {
            Some(Section::Authority) => self.bad_authorities = true,
            Some(Section::Additional) => self.bad_additionals = true,
            _ => self.truncated = true,
        }
    }

    /// Renders the rdata of a record of type `rrtype` whose rdata `rd` starts at `start`.
    fn rdata(&mut self, msg: &[u8], rrtype: u16, start: usize, rd: &[u8]) -> Rdata {
        let name_at = |m: &mut Message, at: usize| m.name_at(msg, at).map(|(s, _)| s);
        match rrtype {
            1 if rd.len() == 4 => {
                // Dotted decimal, as `Ipv4Addr`'s Display writes it.
                let t0 = self.text.len();
                for (i, &b) in rd.iter().enumerate() {
                    if i > 0 {
                        self.text.push(b'.');
                    }
                    push_decimal(&mut self.text, b);
                }
                Rdata::Text(self.span_from(t0))
            }
            28 if rd.len() == 16 => {
                // In full, as Suricata logs AAAA data: eight groups of four hex digits.
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let t0 = self.text.len();
                for (i, pair) in rd.chunks_exact(2).enumerate() {
                    if i > 0 {
                        self.text.push(b':');
                    }
                    for byte in pair {
                        self.text.push(HEX[usize::from(byte >> 4)]);
                        self.text.push(HEX[usize::from(byte & 0x0f)]);
                    }
                }
                Rdata::Text(self.span_from(t0))
            }
            2 | 5 | 12 | 39 => name_at(self, start).map_or(Rdata::None, Rdata::Text),
            15 => {
                let Some(preference) = be16(rd, 0) else {
                    return Rdata::None;
                };
                match name_at(self, start + 2) {
                    Some(exchange) => Rdata::Mx {
                        preference,
                        exchange,
                    },
                    None => Rdata::None,
                }
            }
            33 => {
                let (Some(priority), Some(weight), Some(port)) =
                    (be16(rd, 0), be16(rd, 2), be16(rd, 4))
                else {
                    return Rdata::None;
                };
                match name_at(self, start + 6) {
                    Some(name) => Rdata::Srv {
                        priority,
                        weight,
                        port,
                        name,
                    },
                    None => Rdata::None,
                }
            }
            6 => {
                let t0 = self.text.len();
                let Some((mname, after)) = self.name_at(msg, start) else {
                    return Rdata::None;
                };
                let Some((rname, after)) = self.name_at(msg, after) else {
                    self.text.truncate(t0);
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
                    _ => {
                        self.text.truncate(t0);
                        Rdata::None
                    }
                }
            }
            16 | 99 => {
                // The strings as on the wire (length-prefixed), the first
                // MAX_TXT_STRINGS of them: DNS logs them joined, mDNS one by one.
                let t0 = self.text.len();
                let mut i = 0;
                let mut n = 0;
                while i < rd.len() && n < MAX_TXT_STRINGS {
                    let l = usize::from(rd[i]);
                    let s = &rd[i + 1..(i + 1 + l).min(rd.len())];
                    self.text.push(s.len() as u8);
                    self.text.extend_from_slice(s);
                    i += 1 + l;
                    n += 1;
                }
                Rdata::Txt(self.span_from(t0))
            }
            41 => Rdata::Opt(self.add_text(rd)),
            _ => Rdata::Raw(self.add_text(rd)),
        }
    }
}

/// Appends `v` in decimal.
fn push_decimal(out: &mut Vec<u8>, v: u8) {
    if v >= 100 {
        out.push(b'0' + v / 100);
    }
    if v >= 10 {
        out.push(b'0' + (v / 10) % 10);
    }
    out.push(b'0' + v % 10);
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}
fn be32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// Parses a whole message (a UDP payload or one TCP-framed message).
pub fn parse(msg: &[u8]) -> Option<Message> {
    let header = Header::parse(msg)?;
    let cap = |n: u16, too_many: &mut bool| {
        let n = usize::from(n);
        if n > MAX_RECORDS {
            *too_many = true;
        }
        n.min(MAX_RECORDS)
    };
    let mut too_many = false;
    let qd = cap(header.qdcount, &mut too_many);
    let counts = [
        cap(header.ancount, &mut too_many),
        cap(header.nscount, &mut too_many),
        cap(header.arcount, &mut too_many),
    ];
    // Sized from the message: the text of its names is rarely longer than the message
    // (compression can make it so; the arena then grows).
    let mut m = Message {
        header,
        questions: Vec::with_capacity(qd.min(msg.len() / 5)),
        records: Vec::with_capacity((counts[0] + counts[1] + counts[2]).min(msg.len() / 11)),
        text: Vec::with_capacity(msg.len()),
        too_many,
        ..Message::default()
    };
    let mut at = HEADER_LEN;
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
    let sections = [Section::Answer, Section::Authority, Section::Additional];
    for (&section, &n) in sections.iter().zip(&counts) {
        m.section = Some(section);
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
                m.cut_short();
                return Some(m);
            };
            let start = at + 10;
            let Some(rd) = msg.get(start..start + usize::from(rdlen)) else {
                m.cut_short();
                return Some(m);
            };
            let rdata = m.rdata(msg, rrtype, start, rd);
            at = start + usize::from(rdlen);
            m.push_record(
                section,
                Record {
                    name,
                    rrtype,
                    class,
                    ttl,
                    rdata,
                },
            );
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
        assert_eq!(q.text(q.questions[0].name), b"www.example.com");
        let r = parse(RESPONSE).unwrap();
        assert!(r.header.qr() && !r.truncated);
        let a = r.answers();
        assert_eq!(a.len(), 2);
        assert_eq!(r.rdata_text(&a[0]), Some(&b"a.example.com"[..]));
        assert_eq!(r.text(a[1].name), b"a.example.com");
        assert_eq!(r.rdata_text(&a[1]), Some(&b"93.184.216.34"[..]));
        assert_eq!(a[1].ttl, 3600);
        assert!(r.authorities().is_empty() && r.additionals().is_empty());
    }

    #[test]
    fn pointer_loop_and_truncation() {
        // A name that points at itself.
        let mut m = QUERY[..12].to_vec();
        m.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01");
        let p = parse(&m).unwrap();
        assert!(p.name_loop && p.questions.is_empty());
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

    impl Message {
        fn rdata_text(&self, r: &Record) -> Option<&[u8]> {
            match r.rdata {
                Rdata::Text(s) => Some(self.text(s)),
                _ => None,
            }
        }
    }

    #[test]
    fn sections_and_bad_rdata_names() {
        // One answer, one authority, one additional, each an A record except the
        // authority: an NS whose target name is cut off (no rdata text kept for it).
        let mut m = RESPONSE[..33].to_vec();
        m[7] = 1;
        m[9] = 1;
        m[11] = 1;
        m.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x01\x02\x03\xff");
        m.extend_from_slice(b"\xc0\x0c\x00\x02\x00\x01\x00\x00\x00\x3c\x00\x02\xc0\xf0");
        m.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x0a\x00\x00\x09");
        let p = parse(&m).unwrap();
        assert!(!p.truncated, "{p:?}");
        assert_eq!(p.rdata_text(&p.answers()[0]), Some(&b"1.2.3.255"[..]));
        assert_eq!(p.authorities().len(), 1);
        assert_eq!(p.authorities()[0].rdata, Rdata::None);
        assert_eq!(p.rdata_text(&p.additionals()[0]), Some(&b"10.0.0.9"[..]));
        // Every name is the question's, and the arena holds no trace of the bad one.
        for r in p
            .answers()
            .iter()
            .chain(p.authorities())
            .chain(p.additionals())
        {
            assert_eq!(p.text(r.name), b"www.example.com");
        }
        assert_eq!(
            p.text.len(),
            4 * "www.example.com".len() + "1.2.3.255".len() + "10.0.0.9".len()
        );
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
        assert_eq!(p.text(p.questions[0].name).len(), MAX_NAME_LEN);
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
        let a = p.answers();
        assert!(
            matches!(a[0].rdata, Rdata::Mx { preference: 10, exchange } if p.text(exchange) == b"mail.www.example.com")
        );
        assert!(
            matches!(a[1].rdata, Rdata::Soa { mname, rname, serial: 1, minimum: 5, .. } if p.text(mname) == b"ns.example.com" && p.text(rname) == b"hm.example.com")
        );
        assert!(
            matches!(a[2].rdata, Rdata::Srv { port: 443, name, .. } if p.text(name) == b"www.example.com")
        );
        let Rdata::Txt(txt) = a[3].rdata else {
            panic!("{:?}", a[3].rdata)
        };
        assert_eq!(
            txt_strings(p.text(txt)).collect::<Vec<_>>(),
            [&b"hi"[..], &b"yo"[..]]
        );
        assert_eq!(
            p.rdata_text(&a[4]),
            Some(&b"2001:0db8:0000:0000:0000:0000:0000:0001"[..])
        );
    }
}
