//! SIP messages (RFC 3261) over borrowed bytes: the start line (a request line or a
//! status line), the header fields (compact forms recognised), and the body, parsed as
//! SDP (RFC 4566) when it is one.
//!
//! A parsed [`Message`] owns a copy of its bytes and keeps ranges into it, so a
//! transaction holds one allocation for its text. Parsing is streaming: a message
//! whose header section or body has not fully arrived is [`Error::Incomplete`], not
//! malformed.

use std::ops::Range;

use memchr::memmem;

/// Longest header section (start line, headers and the empty line) accepted.
pub const MAX_HEADER_SECTION: usize = 64 * 1024;
/// Longest single line (start line or header field) accepted.
pub const MAX_LINE_LEN: usize = 8 * 1024;
/// Header fields kept per message; more are parsed past and flag the message.
pub const MAX_HEADERS: usize = 128;
/// Largest body accepted (`Content-Length` over TCP, the rest of a datagram over UDP).
pub const MAX_BODY_LEN: usize = 64 * 1024;
/// SDP lines looked at per body.
pub const MAX_SDP_LINES: usize = 512;
/// Media descriptions kept per SDP body.
pub const MAX_SDP_MEDIA: usize = 32;
/// Items kept per SDP list (attributes, bandwidths, time descriptions).
pub const MAX_SDP_ITEMS: usize = 64;

/// The request methods a SIP request starts with (the probe's patterns).
pub const METHODS: &[&[u8]] = &[
    b"REGISTER",
    b"INVITE",
    b"ACK",
    b"BYE",
    b"CANCEL",
    b"UPDATE",
    b"REFER",
    b"PRACK",
    b"SUBSCRIBE",
    b"NOTIFY",
    b"PUBLISH",
    b"MESSAGE",
    b"INFO",
    b"OPTIONS",
];

/// Why bytes are not (yet) a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// More bytes are needed.
    Incomplete,
    /// Not a well-formed SIP message.
    Invalid,
}

/// The header fields the detection keywords and the logger know, by their full and
/// compact names (RFC 3261 §7.3.3). As in Suricata, names are matched as written: the
/// full name in its usual case (`From`) or the compact form in lower case (`f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderKind {
    From,
    To,
    Via,
    UserAgent,
    ContentType,
    ContentLength,
    Other,
}

impl HeaderKind {
    /// The kind of a header named `name`.
    pub fn of(name: &[u8]) -> HeaderKind {
        match name {
            b"From" | b"f" => HeaderKind::From,
            b"To" | b"t" => HeaderKind::To,
            b"Via" | b"v" => HeaderKind::Via,
            b"User-Agent" => HeaderKind::UserAgent,
            b"Content-Type" | b"c" => HeaderKind::ContentType,
            b"Content-Length" | b"l" => HeaderKind::ContentLength,
            _ => HeaderKind::Other,
        }
    }
}

/// Whether `name` is `Content-Length` in any case, or its compact form: what frames a
/// message's body in a stream.
fn is_content_length(name: &[u8]) -> bool {
    name.eq_ignore_ascii_case(b"content-length") || name.eq_ignore_ascii_case(b"l")
}

/// One header field: ranges of the message's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    pub kind: HeaderKind,
    pub name: Range<u32>,
    pub value: Range<u32>,
}

/// The start line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartLine {
    Request {
        method: Range<u32>,
        uri: Range<u32>,
        version: Range<u32>,
    },
    Response {
        version: Range<u32>,
        code: Range<u32>,
        reason: Range<u32>,
    },
}

/// An SDP time description (`t=` and its `r=` lines).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SdpTime {
    pub time: Range<u32>,
    pub repeat_times: Vec<Range<u32>>,
}

/// An SDP media description (`m=` and the lines after it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SdpMedia {
    pub media: Range<u32>,
    pub info: Option<Range<u32>>,
    pub connection: Option<Range<u32>>,
    pub bandwidths: Vec<Range<u32>>,
    pub key: Option<Range<u32>>,
    pub attributes: Vec<Range<u32>>,
}

/// An SDP session description: ranges of the message's bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sdp {
    pub origin: Option<Range<u32>>,
    pub session_name: Option<Range<u32>>,
    pub session_info: Option<Range<u32>>,
    pub uri: Option<Range<u32>>,
    pub email: Option<Range<u32>>,
    pub phone: Option<Range<u32>>,
    pub connection: Option<Range<u32>>,
    pub bandwidths: Vec<Range<u32>>,
    pub times: Vec<SdpTime>,
    pub timezone: Option<Range<u32>>,
    pub key: Option<Range<u32>>,
    pub attributes: Vec<Range<u32>>,
    pub media: Vec<SdpMedia>,
    /// A bound was hit: lines were left out.
    pub truncated: bool,
}

/// A parsed SIP message, owning its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub raw: Vec<u8>,
    pub start: StartLine,
    /// The start line without its CRLF.
    pub line: Range<u32>,
    /// The header fields (the header section after the start line, without the empty
    /// line).
    pub headers: Vec<Header>,
    pub header_section: Range<u32>,
    pub body: Range<u32>,
    pub sdp: Option<Sdp>,
    /// More than [`MAX_HEADERS`] header fields: the rest were not kept.
    pub too_many_headers: bool,
    /// Over UDP, a `Content-Length` larger than the datagram's body.
    pub short_body: bool,
}

impl Message {
    /// The bytes of range `r`.
    pub fn text(&self, r: &Range<u32>) -> &[u8] {
        &self.raw[r.start as usize..r.end as usize]
    }

    pub fn is_request(&self) -> bool {
        matches!(self.start, StartLine::Request { .. })
    }

    /// Values of the headers of kind `k`, in order.
    pub fn values(&self, k: HeaderKind) -> impl Iterator<Item = &[u8]> {
        self.headers
            .iter()
            .filter(move |h| h.kind == k)
            .map(|h| self.text(&h.value))
    }
}

fn r(a: usize, b: usize) -> Range<u32> {
    // Messages are bounded well below 4 GiB.
    a as u32..b as u32
}

fn is_token(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-.!%*_+`'~".contains(&b)
}

fn trim_ws(s: &[u8], mut a: usize, mut b: usize) -> (usize, usize) {
    while a < b && matches!(s[a], b' ' | b'\t') {
        a += 1;
    }
    while b > a && matches!(s[b - 1], b' ' | b'\t') {
        b -= 1;
    }
    (a, b)
}

/// Parses the start line `line` (no CRLF) at offset 0 of the message.
fn start_line(line: &[u8]) -> Result<StartLine, Error> {
    let sp1 = memchr::memchr(b' ', line).ok_or(Error::Invalid)?;
    if line.starts_with(b"SIP/") {
        // SIP-Version SP Status-Code SP Reason-Phrase
        let version = &line[..sp1];
        if !version[4..]
            .iter()
            .all(|b| b.is_ascii_digit() || *b == b'.')
            || version.len() == 4
        {
            return Err(Error::Invalid);
        }
        let code = line.get(sp1 + 1..sp1 + 4).ok_or(Error::Invalid)?;
        if !code.iter().all(u8::is_ascii_digit) {
            return Err(Error::Invalid);
        }
        let reason_at = match line.get(sp1 + 4) {
            None => sp1 + 4,
            Some(b' ') => sp1 + 5,
            Some(_) => return Err(Error::Invalid),
        };
        return Ok(StartLine::Response {
            version: r(0, sp1),
            code: r(sp1 + 1, sp1 + 4),
            reason: r(reason_at, line.len()),
        });
    }
    // Method SP Request-URI SP SIP-Version
    if sp1 == 0 || !line[..sp1].iter().all(u8::is_ascii_alphabetic) {
        return Err(Error::Invalid);
    }
    let rest = &line[sp1 + 1..];
    let sp2 = memchr::memchr(b' ', rest).ok_or(Error::Invalid)? + sp1 + 1;
    let uri = &line[sp1 + 1..sp2];
    if uri.is_empty() || !uri.iter().all(|b| b.is_ascii_graphic()) {
        return Err(Error::Invalid);
    }
    let version = &line[sp2 + 1..];
    if !version.starts_with(b"SIP/")
        || version.len() == 4
        || !version[4..]
            .iter()
            .all(|b| b.is_ascii_digit() || *b == b'.')
    {
        return Err(Error::Invalid);
    }
    Ok(StartLine::Request {
        method: r(0, sp1),
        uri: r(sp1 + 1, sp2),
        version: r(sp2 + 1, line.len()),
    })
}

/// Where the start line ends: `Incomplete` when no CRLF is there yet.
fn line_end(data: &[u8], from: usize) -> Result<usize, Error> {
    match memmem::find(&data[from..], b"\r\n") {
        Some(i) if i > MAX_LINE_LEN => Err(Error::Invalid),
        Some(i) => Ok(from + i),
        None if data.len() - from > MAX_LINE_LEN => Err(Error::Invalid),
        None => Err(Error::Incomplete),
    }
}

/// Parses one message at the start of `data`. Over a stream (`stream`), the body is
/// `Content-Length` bytes (none without the header); in a datagram it is the rest of
/// the datagram. Returns the message and the bytes it took.
pub fn parse(data: &[u8], stream: bool) -> Result<(Message, usize), Error> {
    let first = line_end(data, 0)?;
    let start = start_line(&data[..first])?;
    // The end of the header section: the empty line. A message without headers ends
    // its header section right after the start line.
    let hdr_start = first + 2;
    let hdr_end = if data[hdr_start..].starts_with(b"\r\n") {
        hdr_start
    } else {
        match memmem::find(&data[hdr_start..], b"\r\n\r\n") {
            Some(i) => hdr_start + i + 2,
            None if data.len() > MAX_HEADER_SECTION => return Err(Error::Invalid),
            None => return Err(Error::Incomplete),
        }
    };
    if hdr_end + 2 > MAX_HEADER_SECTION {
        return Err(Error::Invalid);
    }
    let mut headers: Vec<Header> = Vec::new();
    let mut too_many = false;
    let mut at = hdr_start;
    let mut content_length: Option<usize> = None;
    while at < hdr_end {
        let end = line_end(data, at)?;
        let line = &data[at..end];
        if matches!(line.first(), Some(b' ' | b'\t')) {
            // A folded line continues the previous field's value.
            match headers.last_mut() {
                Some(h) => {
                    let (_, b) = trim_ws(data, at, end);
                    if b > at {
                        h.value.end = b as u32;
                    }
                }
                None if !too_many => return Err(Error::Invalid),
                None => {}
            }
            at = end + 2;
            continue;
        }
        let colon = memchr::memchr(b':', line).ok_or(Error::Invalid)?;
        let (na, nb) = trim_ws(data, at, at + colon);
        if na != at || nb == na || !data[na..nb].iter().copied().all(is_token) {
            return Err(Error::Invalid);
        }
        let (va, vb) = trim_ws(data, at + colon + 1, end);
        let kind = HeaderKind::of(&data[na..nb]);
        if is_content_length(&data[na..nb]) && content_length.is_none() {
            let v = &data[va..vb];
            if v.is_empty() || v.len() > 9 || !v.iter().all(u8::is_ascii_digit) {
                // Over UDP the datagram frames the body: a bad length is only text.
                if stream {
                    return Err(Error::Invalid);
                }
            } else {
                content_length = Some(v.iter().fold(0usize, |n, d| n * 10 + usize::from(d - b'0')));
            }
        }
        if headers.len() < MAX_HEADERS {
            headers.push(Header {
                kind,
                name: r(na, nb),
                value: r(va, vb),
            });
        } else {
            too_many = true;
        }
        at = end + 2;
    }
    let body_start = hdr_end + 2;
    let mut short_body = false;
    let body_end = if stream {
        let len = content_length.unwrap_or(0);
        if len > MAX_BODY_LEN {
            return Err(Error::Invalid);
        }
        if data.len() < body_start + len {
            return Err(Error::Incomplete);
        }
        body_start + len
    } else {
        // The body is the rest of the datagram, whatever `Content-Length` says (as
        // Suricata takes it: senders get it wrong).
        let rest = data.len().saturating_sub(body_start);
        if rest > MAX_BODY_LEN {
            return Err(Error::Invalid);
        }
        short_body = content_length.is_some_and(|len| len > rest);
        data.len()
    };
    let raw = data[..body_end].to_vec();
    let sdp = sdp(&raw, body_start, body_end);
    Ok((
        Message {
            raw,
            start,
            line: r(0, first),
            headers,
            header_section: r(hdr_start, hdr_end),
            body: r(body_start, body_end),
            sdp,
            too_many_headers: too_many,
            short_body,
        },
        body_end,
    ))
}

/// The length a stream message at the start of `data` will have, once its header
/// section is there (its `Content-Length` read); `None` before. A stream parser waits
/// for that many bytes rather than parsing an incomplete message again on each
/// segment.
pub fn wanted(data: &[u8]) -> Option<usize> {
    let end = memmem::find(data, b"\r\n\r\n")?;
    let len = data[..end]
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let colon = memchr::memchr(b':', line)?;
            let (a, b) = trim_ws(line, 0, colon);
            if !is_content_length(&line[a..b]) {
                return None;
            }
            let (a, b) = trim_ws(line, colon + 1, line.len());
            let v = line[a..b].strip_suffix(b"\r").unwrap_or(&line[a..b]);
            (!v.is_empty() && v.len() <= 9 && v.iter().all(u8::is_ascii_digit))
                .then(|| v.iter().fold(0usize, |n, d| n * 10 + usize::from(d - b'0')))
        })
        .next()
        .unwrap_or(0);
    Some(end + 4 + len)
}

/// Where an SDP parse is in the description.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Part {
    Session,
    Media,
}

/// Parses `raw[a..b]` as an SDP session description, if it is one (it starts with
/// `v=`). Lines end with CRLF or LF; a line of an unknown type, or out of place, is
/// skipped.
pub fn sdp(raw: &[u8], a: usize, b: usize) -> Option<Sdp> {
    let body = &raw[a..b];
    if !body.starts_with(b"v=") {
        return None;
    }
    let mut s = Sdp::default();
    let mut part = Part::Session;
    let mut at = a;
    let mut lines = 0;
    while at < b {
        let end = memchr::memchr(b'\n', &raw[at..b]).map_or(b, |i| at + i);
        let next = (end + 1).min(b);
        let line_end = if end > at && raw[end - 1] == b'\r' {
            end - 1
        } else {
            end
        };
        lines += 1;
        if lines > MAX_SDP_LINES {
            s.truncated = true;
            break;
        }
        let line_start = at;
        let line = &raw[at..line_end];
        at = next;
        if line.len() < 2 || line[1] != b'=' {
            continue;
        }
        let v = r(line_start + 2, line_end);
        let push = |list: &mut Vec<Range<u32>>, truncated: &mut bool, v: Range<u32>| {
            if list.len() < MAX_SDP_ITEMS {
                list.push(v);
            } else {
                *truncated = true;
            }
        };
        let set = |slot: &mut Option<Range<u32>>, v: Range<u32>| {
            if slot.is_none() {
                *slot = Some(v);
            }
        };
        match (part, line[0]) {
            (_, b'm') => {
                if s.media.len() < MAX_SDP_MEDIA {
                    s.media.push(SdpMedia {
                        media: v,
                        ..SdpMedia::default()
                    });
                    part = Part::Media;
                } else {
                    s.truncated = true;
                    break;
                }
            }
            (Part::Media, k) => {
                // A media part starts with its media line: there is one.
                if let Some(m) = s.media.last_mut() {
                    match k {
                        b'i' => set(&mut m.info, v),
                        b'c' => set(&mut m.connection, v),
                        b'b' => push(&mut m.bandwidths, &mut s.truncated, v),
                        b'k' => set(&mut m.key, v),
                        b'a' => push(&mut m.attributes, &mut s.truncated, v),
                        _ => {}
                    }
                }
            }
            (Part::Session, k) => match k {
                b'o' => set(&mut s.origin, v),
                b's' => set(&mut s.session_name, v),
                b'i' => set(&mut s.session_info, v),
                b'u' => set(&mut s.uri, v),
                b'e' => set(&mut s.email, v),
                b'p' => set(&mut s.phone, v),
                b'c' => set(&mut s.connection, v),
                b'b' => push(&mut s.bandwidths, &mut s.truncated, v),
                b't' => {
                    if s.times.len() < MAX_SDP_ITEMS {
                        s.times.push(SdpTime {
                            time: v,
                            repeat_times: Vec::new(),
                        });
                    } else {
                        s.truncated = true;
                    }
                }
                b'r' => {
                    if let Some(t) = s.times.last_mut() {
                        push(&mut t.repeat_times, &mut s.truncated, v);
                    }
                }
                b'z' => set(&mut s.timezone, v),
                b'k' => set(&mut s.key, v),
                b'a' => push(&mut s.attributes, &mut s.truncated, v),
                _ => {}
            },
        }
    }
    Some(s)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const INVITE: &[u8] = b"INVITE sip:bob@example.com SIP/2.0\r\n\
v: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1\r\n\
f: \"Alice\" <sip:alice@example.com>;tag=1\r\n\
t: <sip:bob@example.com>\r\n\
To: <sip:carol@example.com>\r\n\
Call-ID: 1@192.0.2.1\r\n\
CSeq: 1 INVITE\r\n\
User-Agent: Test Phone 1.0\r\n\
c: application/sdp\r\n\
l: 137\r\n\
\r\n\
v=0\r\n\
o=alice 1 1 IN IP4 192.0.2.1\r\n\
s=Call\r\n\
c=IN IP4 192.0.2.1\r\n\
t=0 0\r\n\
a=sendrecv\r\n\
m=audio 4000 RTP/AVP 0\r\n\
i=voice\r\n\
a=rtpmap:0 PCMU/8000\r\n";

    pub const OK: &[u8] = b"SIP/2.0 200 OK\r\n\
Via: SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1\r\n\
From: \"Alice\" <sip:alice@example.com>;tag=1\r\n\
To: <sip:bob@example.com>;tag=2\r\n\
Content-Length: 0\r\n\
\r\n";

    #[test]
    fn request_with_compact_headers_and_sdp() {
        let (m, used) = parse(INVITE, true).unwrap();
        assert_eq!(used, INVITE.len());
        let StartLine::Request {
            method,
            uri,
            version,
        } = &m.start
        else {
            panic!("{:?}", m.start)
        };
        assert_eq!(m.text(method), b"INVITE");
        assert_eq!(m.text(uri), b"sip:bob@example.com");
        assert_eq!(m.text(version), b"SIP/2.0");
        assert_eq!(m.text(&m.line), b"INVITE sip:bob@example.com SIP/2.0");
        let to: Vec<&[u8]> = m.values(HeaderKind::To).collect();
        assert_eq!(
            to,
            vec![&b"<sip:bob@example.com>"[..], b"<sip:carol@example.com>"]
        );
        assert_eq!(
            m.values(HeaderKind::ContentLength).collect::<Vec<_>>(),
            vec![&b"137"[..]]
        );
        assert_eq!(
            m.values(HeaderKind::Via).next(),
            Some(&b"SIP/2.0/UDP 192.0.2.1:5060;branch=z9hG4bK1"[..])
        );
        let s = m.sdp.as_ref().unwrap();
        assert_eq!(
            m.text(s.origin.as_ref().unwrap()),
            b"alice 1 1 IN IP4 192.0.2.1"
        );
        assert_eq!(m.text(s.session_name.as_ref().unwrap()), b"Call");
        assert_eq!(m.text(&s.times[0].time), b"0 0");
        assert_eq!(s.attributes.len(), 1);
        assert_eq!(s.media.len(), 1);
        assert_eq!(m.text(&s.media[0].media), b"audio 4000 RTP/AVP 0");
        assert_eq!(m.text(s.media[0].info.as_ref().unwrap()), b"voice");
        assert_eq!(m.text(&s.media[0].attributes[0]), b"rtpmap:0 PCMU/8000");
        assert!(s.media[0].connection.is_none());
    }

    #[test]
    fn response() {
        let (m, used) = parse(OK, true).unwrap();
        assert_eq!(used, OK.len());
        let StartLine::Response {
            version,
            code,
            reason,
        } = &m.start
        else {
            panic!()
        };
        assert_eq!(
            (m.text(version), m.text(code), m.text(reason)),
            (&b"SIP/2.0"[..], &b"200"[..], &b"OK"[..])
        );
        assert!(m.sdp.is_none());
        assert!(m.body.is_empty());
    }

    #[test]
    fn streaming_needs_the_whole_message() {
        for n in 0..INVITE.len() {
            assert_eq!(
                parse(&INVITE[..n], true).err(),
                Some(Error::Incomplete),
                "{n}"
            );
        }
        // Two messages back to back: the first takes only its own bytes.
        let mut two = OK.to_vec();
        two.extend_from_slice(OK);
        assert_eq!(parse(&two, true).unwrap().1, OK.len());
        // In a datagram, the body is what is left (cut at Content-Length).
        let (m, _) = parse(&INVITE[..INVITE.len() - 10], false).unwrap();
        assert!(m.short_body);
    }

    #[test]
    fn malformed() {
        for bad in [
            &b"INVITE sip:x SIP/2.0 extra\r\n\r\n"[..],
            b"INV1TE sip:x SIP/2.0\r\n\r\n",
            b"INVITE sip:x HTTP/1.1\r\n\r\n",
            b"SIP/2.0 2x0 OK\r\n\r\n",
            b"SIP/2.0 200 OK\r\nno colon here\r\n\r\n",
            b"SIP/2.0 200 OK\r\nContent-Length: abc\r\n\r\n",
        ] {
            assert_eq!(
                parse(bad, true).err(),
                Some(Error::Invalid),
                "{}",
                String::from_utf8_lossy(bad)
            );
        }
        let mut long = b"OPTIONS sip:".to_vec();
        long.resize(MAX_LINE_LEN + 20, b'a');
        assert_eq!(parse(&long, true).err(), Some(Error::Invalid));
    }

    #[test]
    fn wanted_length() {
        assert_eq!(wanted(&INVITE[..40]), None);
        assert_eq!(wanted(&INVITE[..INVITE.len() - 50]), Some(INVITE.len()));
        assert_eq!(wanted(OK), Some(OK.len()));
        assert_eq!(wanted(b"SIP/2.0 200 OK\r\n\r\n"), Some(18));
        assert_eq!(wanted(b"SIP/2.0 200 OK\r\nl: 3\r\n\r\n"), Some(27));
    }

    #[test]
    fn header_count_is_bounded() {
        let mut m = b"SIP/2.0 200 OK\r\n".to_vec();
        for i in 0..MAX_HEADERS + 5 {
            m.extend_from_slice(format!("X-H{i}: v\r\n").as_bytes());
        }
        m.extend_from_slice(b"\r\n");
        let (msg, _) = parse(&m, true).unwrap();
        assert_eq!(msg.headers.len(), MAX_HEADERS);
        assert!(msg.too_many_headers);
    }

    #[test]
    fn every_sdp_field() {
        let body = b"v=0\r\no=o\r\ns=s\r\ni=i\r\nu=u\r\ne=e\r\np=p\r\nc=c\r\nb=b1\r\nb=b2\r\n\
t=t1\r\nr=r1\r\nr=r2\r\nt=t2\r\nz=z\r\nk=k\r\na=a1\r\nx=unknown\r\nbad line\r\n\
m=m1\r\ni=mi\r\nc=mc\r\nb=mb\r\nk=mk\r\na=ma\r\nm=m2\na=ma2";
        let s = sdp(body, 0, body.len()).unwrap();
        let t =
            |r: &Range<u32>| std::str::from_utf8(&body[r.start as usize..r.end as usize]).unwrap();
        let o = |r: &Option<Range<u32>>| t(r.as_ref().unwrap());
        assert_eq!(
            [
                &s.origin,
                &s.session_name,
                &s.session_info,
                &s.uri,
                &s.email,
                &s.phone,
                &s.connection,
                &s.timezone,
                &s.key
            ]
            .map(o),
            ["o", "s", "i", "u", "e", "p", "c", "z", "k"]
        );
        assert_eq!(s.bandwidths.iter().map(t).collect::<Vec<_>>(), ["b1", "b2"]);
        assert_eq!(s.times.len(), 2);
        assert_eq!(
            s.times[0].repeat_times.iter().map(t).collect::<Vec<_>>(),
            ["r1", "r2"]
        );
        assert_eq!(s.attributes.iter().map(t).collect::<Vec<_>>(), ["a1"]);
        assert_eq!(s.media.len(), 2);
        let m = &s.media[0];
        assert_eq!(
            [
                t(&m.media),
                o(&m.info),
                o(&m.connection),
                t(&m.bandwidths[0]),
                o(&m.key),
                t(&m.attributes[0])
            ],
            ["m1", "mi", "mc", "mb", "mk", "ma"]
        );
        // LF line ends and a last line without one.
        assert_eq!(t(&s.media[1].attributes[0]), "ma2");
        assert!(!s.truncated);
        assert!(sdp(b"o=x\r\n", 0, 5).is_none(), "not SDP without v=");
    }

    #[test]
    fn sdp_lists_are_bounded() {
        let mut body = b"v=0\r\n".to_vec();
        for _ in 0..MAX_SDP_ITEMS + 3 {
            body.extend_from_slice(b"a=x\r\n");
        }
        let s = sdp(&body, 0, body.len()).unwrap();
        assert_eq!(s.attributes.len(), MAX_SDP_ITEMS);
        assert!(s.truncated);
        let mut body = b"v=0\r\n".to_vec();
        for _ in 0..MAX_SDP_LINES + 3 {
            body.extend_from_slice(b"x=\r\n");
        }
        assert!(sdp(&body, 0, body.len()).unwrap().truncated);
    }

    #[test]
    fn compact_names() {
        // As Suricata 8.0.6 matches them (checked with the reference on a pcap of each
        // spelling): the usual case of the full name, the compact form in lower case.
        assert_eq!(HeaderKind::of(b"From"), HeaderKind::From);
        assert_eq!(HeaderKind::of(b"f"), HeaderKind::From);
        assert_eq!(HeaderKind::of(b"F"), HeaderKind::Other);
        assert_eq!(HeaderKind::of(b"from"), HeaderKind::Other);
        assert_eq!(HeaderKind::of(b"l"), HeaderKind::ContentLength);
        assert_eq!(HeaderKind::of(b"content-length"), HeaderKind::Other);
        assert_eq!(HeaderKind::of(b"User-Agent"), HeaderKind::UserAgent);
        assert_eq!(HeaderKind::of(b"Call-ID"), HeaderKind::Other);
        // Stream framing takes Content-Length in any case.
        assert!(is_content_length(b"content-LENGTH") && is_content_length(b"L"));
        let (m, used) = parse(b"SIP/2.0 200 OK\r\ncontent-length: 2\r\n\r\nhiSIP", true).unwrap();
        assert_eq!((used, m.text(&m.body)), (39, &b"hi"[..]));
        // A datagram's bad Content-Length is only text.
        let (m, _) = parse(b"SIP/2.0 200 OK\r\nContent-Length: x\r\n\r\nhi", false).unwrap();
        assert_eq!(m.values(HeaderKind::ContentLength).next(), Some(&b"x"[..]));
    }
}
