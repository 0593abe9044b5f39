//! HTTP/1.x wire parsing over borrowed bytes: line splitting, request and status lines,
//! header blocks (folding, duplicates), chunk sizes and `Content-Length`.
//!
//! The rules follow libhtp (Suricata's HTTP parser), which is lenient the way browsers
//! and servers are: a response line may end in a bare CR, header values may fold onto
//! the next line, a chunk size may carry junk after the hex digits. Being as lenient as
//! the endpoints is what defeats evasions (a stricter parser sees a different body than
//! the browser).

/// Longest request/status line or header line kept (libhtp `field-limit` is 18000).
pub const MAX_LINE_LEN: usize = 18_000;
/// Largest header block (all header lines of one message) buffered.
pub const MAX_HEADER_BLOCK: usize = 64 * 1024;
/// Most headers kept per message (Suricata's `headers-limit` default).
pub const MAX_HEADERS: usize = 1024;
/// Most folded continuation lines joined into one header value.
pub const MAX_FOLDS: usize = 64;

/// Which side's rules apply: the response side also accepts a bare CR as end of line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Request,
    Response,
}

/// One line found in a buffer: `content` is the line without its end-of-line bytes,
/// `next` the offset just after them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line {
    pub end: usize,
    pub next: usize,
}

/// Finds the next line starting at 0. `None` means more bytes are needed to tell where
/// it ends (unless `eof`, when the remainder is the last line, if not empty).
///
/// Request side: LF ends a line (a CR before it is stripped). Response side (libhtp's
/// `take_till_eol`): CRLF, a bare CR, LF, and LF CR (when not followed by LF) end a line.
pub fn next_line(buf: &[u8], side: Side, eof: bool) -> Option<Line> {
    match side {
        Side::Request => match memchr::memchr(b'\n', buf) {
            Some(i) => {
                let end = if i > 0 && buf[i - 1] == b'\r' {
                    i - 1
                } else {
                    i
                };
                Some(Line { end, next: i + 1 })
            }
            None if eof && !buf.is_empty() => Some(Line {
                end: buf.len(),
                next: buf.len(),
            }),
            None => None,
        },
        Side::Response => {
            let Some(i) = memchr::memchr2(b'\r', b'\n', buf) else {
                return (eof && !buf.is_empty()).then_some(Line {
                    end: buf.len(),
                    next: buf.len(),
                });
            };
            let at = |k: usize| buf.get(i + k).copied();
            let len = if buf[i] == b'\r' {
                match at(1) {
                    Some(b'\n') => 2,
                    Some(_) => 1,
                    None if eof => 1,
                    None => return None,
                }
            } else {
                // libhtp's deformed end of line: LF CR CR LF followed by another end of
                // line is one end of line.
                if buf.get(i + 1..i + 4) == Some(b"\r\r\n") {
                    match buf.get(i + 4) {
                        Some(b'\n') => {
                            return Some(Line {
                                end: i,
                                next: i + 4,
                            });
                        }
                        Some(b'\r') => match buf.get(i + 5) {
                            Some(b'\n') => {
                                return Some(Line {
                                    end: i,
                                    next: i + 4,
                                });
                            }
                            None if !eof => return None,
                            _ => {}
                        },
                        None if !eof => return None,
                        _ => {}
                    }
                }
                match (at(1), at(2)) {
                    (Some(b'\r'), Some(b'\n')) => 1,
                    (Some(b'\r'), Some(_)) => 2,
                    (Some(b'\r'), None) if eof => 2,
                    (Some(b'\r'), None) => return None,
                    _ => 1,
                }
            };
            Some(Line {
                end: i,
                next: i + len,
            })
        }
    }
}

/// libhtp's notion of whitespace in lines (`is_space`: SP, HT, LF, VT, FF, CR).
pub fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

pub fn trim(mut s: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = s {
        if is_space(*first) {
            s = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = s {
        if is_space(*last) {
            s = rest;
        } else {
            break;
        }
    }
    s
}

fn split_token(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s.iter().position(|&c| is_space(c)).unwrap_or(s.len());
    let rest = &s[end..];
    let skip = rest
        .iter()
        .position(|&c| !is_space(c))
        .unwrap_or(rest.len());
    (&s[..end], &rest[skip..])
}

/// Whether a line is empty or whitespace only (libhtp ignores such lines before a
/// request or status line).
pub fn is_ignorable(line: &[u8]) -> bool {
    line.iter().all(|&c| is_space(c) || c == 0)
}

/// A parsed request line: byte ranges into the line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestLine<'a> {
    pub method: &'a [u8],
    pub uri: &'a [u8],
    /// Empty for an HTTP/0.9 short request (`GET /`).
    pub protocol: &'a [u8],
}

/// Splits a request line: method, URI and protocol separated by whitespace; leading
/// whitespace is ignored (IDS personality). A line with no protocol is HTTP/0.9.
pub fn parse_request_line(line: &[u8]) -> RequestLine<'_> {
    let skip = line
        .iter()
        .position(|&c| !is_space(c))
        .unwrap_or(line.len());
    let (method, rest) = split_token(&line[skip..]);
    let uri_and_rest = rest;
    let (uri, rest) = split_token(rest);
    let protocol = trim(rest);
    // A URI with spaces (`GET /a b HTTP/1.1`): when what follows the first URI token
    // is not a version but its last word is, the URI runs up to that word.
    if !protocol.is_empty()
        && parse_version(protocol) == Version::Invalid
        && let Some(ws) = protocol.iter().rposition(|&c| is_space(c))
    {
        let last = &protocol[ws + 1..];
        if parse_version(last) != Version::Invalid {
            // `last` is the final word of `uri_and_rest` once trailing space is cut.
            let trimmed_end = uri_and_rest
                .iter()
                .rposition(|&c| !is_space(c))
                .map_or(0, |i| i + 1);
            let end = trimmed_end - last.len();
            let end = uri_and_rest[..end]
                .iter()
                .rposition(|&c| !is_space(c))
                .map_or(0, |i| i + 1);
            return RequestLine {
                method,
                uri: &uri_and_rest[..end],
                protocol: last,
            };
        }
    }
    RequestLine {
        method,
        uri,
        protocol,
    }
}

/// Whether the request line separates its method from the URI, and its URI from the
/// protocol, with something other than spaces (a tab: libhtp's
/// `METHOD_DELIM_NON_COMPLIANT`, `URI_DELIM_NON_COMPLIANT`).
pub fn request_line_delims(line: &[u8]) -> (bool, bool) {
    let skip = line
        .iter()
        .position(|&c| !is_space(c))
        .unwrap_or(line.len());
    let line = &line[skip..];
    let gap = |s: &[u8]| -> (bool, usize) {
        let Some(start) = s.iter().position(|&c| is_space(c)) else {
            return (false, s.len());
        };
        let n = s[start..].iter().take_while(|&&c| is_space(c)).count();
        (s[start..start + n].iter().any(|&c| c != b' '), start + n)
    };
    let (method, after) = gap(line);
    let rest = &line[after.min(line.len())..];
    let (uri, _) = if rest.is_empty() {
        (false, 0)
    } else {
        gap(rest)
    };
    (method, uri)
}

/// A parsed status line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StatusLine<'a> {
    pub protocol: &'a [u8],
    pub status: &'a [u8],
    pub message: &'a [u8],
}

pub fn parse_status_line(line: &[u8]) -> StatusLine<'_> {
    let skip = line
        .iter()
        .position(|&c| !is_space(c) && c != 0)
        .unwrap_or(line.len());
    let (protocol, rest) = split_token(&line[skip..]);
    let (status, rest) = split_token(rest);
    StatusLine {
        protocol,
        status,
        message: trim(rest),
    }
}

/// Whether a response line does not look like one, so that browsers take it as the
/// start of the body (libhtp: optional whitespace or NULs, then "http" in any case).
pub fn response_line_is_body(line: &[u8]) -> bool {
    let skip = line
        .iter()
        .position(|&c| !is_space(c) && c != 0)
        .unwrap_or(line.len());
    let rest = &line[skip..];
    !(rest.len() >= 4 && rest[..4].eq_ignore_ascii_case(b"http"))
}

/// HTTP version as libhtp numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Version {
    Invalid,
    V0_9,
    V1_0,
    V1_1,
    /// A well-formed version above 1.1 ("HTTP/1.2", "HTTP/2.0" in an HTTP/1 stream).
    Higher,
}

/// Parses "HTTP/x.y" leniently (case-insensitive, whitespace around the slash).
pub fn parse_version(p: &[u8]) -> Version {
    let p = trim(p);
    if p.len() < 5 || !p[..4].eq_ignore_ascii_case(b"HTTP") {
        return Version::Invalid;
    }
    let rest = trim(&p[4..]);
    let Some(rest) = rest.strip_prefix(b"/") else {
        return Version::Invalid;
    };
    let rest = trim(rest);
    match rest {
        b"0.9" => Version::V0_9,
        b"1.0" => Version::V1_0,
        b"1.1" => Version::V1_1,
        [a, b'.', b] if a.is_ascii_digit() && b.is_ascii_digit() => Version::Higher,
        _ => Version::Invalid,
    }
}

/// Parses a status code: three digits, surrounded by optional whitespace.
pub fn parse_status(s: &[u8]) -> Option<u16> {
    let s = trim(s);
    if s.len() != 3 || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // libhtp: a status below 100 is invalid too.
    Some(s.iter().fold(0u16, |a, &d| a * 10 + u16::from(d - b'0'))).filter(|&n| n >= 100)
}

/// One header as received: the name (trimmed) and the value (folded lines joined with a
/// space, surrounding whitespace trimmed).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Header {
    /// The name then the value: one allocation per header.
    buf: Vec<u8>,
    name_len: usize,
}

impl Header {
    pub fn new(name: &[u8], value: &[u8]) -> Header {
        let mut buf = Vec::with_capacity(name.len() + value.len());
        buf.extend_from_slice(name);
        buf.extend_from_slice(value);
        Header {
            buf,
            name_len: name.len(),
        }
    }

    pub fn name(&self) -> &[u8] {
        &self.buf[..self.name_len]
    }

    pub fn value(&self) -> &[u8] {
        &self.buf[self.name_len..]
    }

    /// Appends `sep` then `more` to the value (joining a duplicate header).
    pub fn append_value(&mut self, sep: &[u8], more: &[u8]) {
        self.buf.reserve(sep.len() + more.len());
        self.buf.extend_from_slice(sep);
        self.buf.extend_from_slice(more);
    }
}

/// Anomalies met while parsing a header block, as libhtp flags them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HeaderFlags {
    /// The first line of the block is a continuation (folding onto nothing); folding
    /// onto a previous line is no anomaly.
    pub folding: bool,
    /// A line without a colon, or with an empty name.
    pub missing_colon: bool,
    /// Whitespace between a name and its colon.
    pub lws_after_name: bool,
    /// A name with a byte that is not a token character (a NUL included).
    pub invalid_name: bool,
    pub too_many: bool,
}

fn is_token(c: u8) -> bool {
    c.is_ascii_graphic()
        && !matches!(
            c,
            b'(' | b')'
                | b'<'
                | b'>'
                | b'@'
                | b','
                | b';'
                | b':'
                | b'\\'
                | b'"'
                | b'/'
                | b'['
                | b']'
                | b'?'
                | b'='
                | b'{'
                | b'}'
        )
}

/// Whether a continuation line is really a new header written with leading whitespace
/// (`  Name: value`): libhtp's response-side check for token characters then a colon.
fn looks_like_header(line: &[u8]) -> bool {
    let t = trim(line);
    let n = t.iter().take_while(|&&c| is_token(c)).count();
    // The colon may follow the name after whitespace.
    n > 0
        && t.get(n..)
            .map(trim)
            .is_some_and(|r| r.first() == Some(&b':'))
}

/// Whether a header line continues the previous one (folding): it starts with
/// whitespace (or, on the response side, a NUL, which browsers skip).
fn is_continuation(line: &[u8], side: Side) -> bool {
    match line.first() {
        Some(b' ' | b'\t') => true,
        Some(0) => side == Side::Response,
        _ => false,
    }
}

/// Parses the lines of a header block (without the terminating empty line) into
/// headers. Folded continuation lines are first joined to the line they continue (with
/// one space), so a name folded away from its colon (`Name\r\n :value`) still parses;
/// then each logical line is split at its first colon.
pub fn parse_headers(lines: &[&[u8]], side: Side, out: &mut Vec<Header>) -> HeaderFlags {
    let mut flags = HeaderFlags::default();
    // Lines are borrowed; only a line that other lines fold onto is copied.
    let mut logical: Vec<std::borrow::Cow<'_, [u8]>> = Vec::with_capacity(lines.len());
    let mut folds = 0usize;
    for &raw in lines {
        if logical.is_empty() && is_continuation(raw, side) {
            flags.folding = true;
        }
        if is_continuation(raw, side)
            && let Some(prev) = logical.last_mut()
            && !(side == Side::Response && looks_like_header(raw))
        {
            folds += 1;
            if folds > MAX_FOLDS {
                continue;
            }
            let v = trim(strip_nul(raw));
            if !v.is_empty() {
                let prev = prev.to_mut();
                if !trim(prev).is_empty() && !prev.ends_with(b":") {
                    prev.push(b' ');
                }
                prev.extend_from_slice(v);
            }
            continue;
        }
        folds = 0;
        if logical.len() >= MAX_HEADERS {
            flags.too_many = true;
            continue;
        }
        logical.push(std::borrow::Cow::Borrowed(raw));
    }
    out.reserve(logical.len());
    for raw in &logical {
        let raw: &[u8] = raw;
        match memchr::memchr(b':', raw) {
            Some(colon) => {
                let name = trim(&raw[..colon]);
                if name.is_empty() {
                    flags.missing_colon = true;
                } else if raw[..colon].last().is_some_and(|&c| is_space(c)) {
                    flags.lws_after_name = true;
                } else if !name.iter().all(|&c| is_token(c)) {
                    flags.invalid_name = true;
                }
                let mut value = trim(&raw[colon + 1..]);
                if side == Side::Request
                    && let Some(nul) = memchr::memchr(0, value)
                {
                    // libhtp: a NUL terminates a request header value.
                    value = trim(&value[..nul]);
                }
                out.push(Header::new(name, value));
            }
            None => {
                // libhtp keeps a line without a colon as a header with an empty name.
                flags.missing_colon = true;
                out.push(Header::new(b"", trim(raw)));
            }
        }
    }
    flags
}

fn strip_nul(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| c == 0).count();
    &s[n..]
}

/// Compares a header name ignoring NUL bytes and case (libhtp's `nocase_nozero`).
pub fn name_eq(name: &[u8], want: &[u8]) -> bool {
    let mut it = name.iter().filter(|&&c| c != 0);
    for &w in want {
        match it.next() {
            Some(c) if c.eq_ignore_ascii_case(&w) => {}
            _ => return false,
        }
    }
    it.next().is_none()
}

/// Compares two header names ignoring NUL bytes and case on both sides (duplicate
/// detection), without copying either.
pub fn names_eq(a: &[u8], b: &[u8]) -> bool {
    let mut x = a.iter().filter(|&&c| c != 0);
    let mut y = b.iter().filter(|&&c| c != 0);
    loop {
        match (x.next(), y.next()) {
            (None, None) => return true,
            (Some(p), Some(q)) if p.eq_ignore_ascii_case(q) => {}
            _ => return false,
        }
    }
}

/// `v` without NUL bytes.
pub fn without_nul(v: &[u8]) -> Vec<u8> {
    v.iter().copied().filter(|&c| c != 0).collect()
}

/// Result of parsing a chunk-size line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkLen {
    /// A size (possibly followed by extensions or junk, which libhtp tolerates).
    Size(u64),
    /// An empty or whitespace-only line: skip it and read the next one.
    Empty,
    /// Not a chunk size: the body is not really chunked.
    Invalid,
}

/// Largest chunk size accepted (libhtp rejects sizes above `i32::MAX`).
pub const MAX_CHUNK_LEN: u64 = i32::MAX as u64;

/// Parses a chunk-size line (without its LF). Leading whitespace and control bytes are
/// skipped; hex digits follow; anything after them is ignored.
pub fn parse_chunk_len(line: &[u8]) -> ChunkLen {
    let skip = line
        .iter()
        .position(|&c| !(is_space(c) || c == 0 || c.is_ascii_control()))
        .unwrap_or(line.len());
    let rest = &line[skip..];
    let digits = rest.iter().take_while(|c| c.is_ascii_hexdigit()).count();
    if digits == 0 {
        return if rest.is_empty() {
            ChunkLen::Empty
        } else {
            ChunkLen::Invalid
        };
    }
    let mut v: u64 = 0;
    for &c in &rest[..digits] {
        let d = (c as char).to_digit(16).unwrap_or(0);
        v = match v.checked_mul(16).and_then(|x| x.checked_add(u64::from(d))) {
            Some(v) if v <= MAX_CHUNK_LEN => v,
            _ => return ChunkLen::Empty,
        };
    }
    ChunkLen::Size(v)
}

/// Whether a partial chunk-size line can still become valid (libhtp switches to
/// reading until close as soon as junk precedes the digits).
pub fn chunk_len_prefix_ok(partial: &[u8]) -> bool {
    let skip = partial
        .iter()
        .position(|&c| !(is_space(c) || c == 0 || c.is_ascii_control()))
        .unwrap_or(partial.len());
    partial[skip..]
        .first()
        .is_none_or(|c| c.is_ascii_hexdigit())
}

/// Parses a `Content-Length` value: libhtp skips leading non-digits and ignores trailing
/// junk after the digits.
pub fn parse_content_length(v: &[u8]) -> Option<u64> {
    let start = v.iter().position(u8::is_ascii_digit)?;
    let digits = v[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    let mut n: u64 = 0;
    for &c in &v[start..start + digits] {
        n = n.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    Some(n)
}

/// Whether a `Content-Length` value has bytes other than whitespace before its digits
/// (`+3`, `x3`: libhtp's `CONTENT_LENGTH_EXTRA_DATA_START`) and after them (`3 x`,
/// `3, 4`: `..._END`).
pub fn content_length_junk(v: &[u8]) -> (bool, bool) {
    let Some(start) = v.iter().position(u8::is_ascii_digit) else {
        return (false, false);
    };
    let digits = v[start..].iter().take_while(|c| c.is_ascii_digit()).count();
    let junk = |s: &[u8]| s.iter().any(|&c| !is_space(c));
    (junk(&v[..start]), junk(&v[start + digits..]))
}

/// Whether a chunk-size line carries a chunk extension (`3;name=value`).
pub fn chunk_has_extension(line: &[u8]) -> bool {
    memchr::memchr(b';', line).is_some()
}

/// The content codings libhtp knows (others make `ABNORMAL_CE_HEADER`).
fn known_coding(c: &[u8]) -> bool {
    [
        &b"gzip"[..],
        b"x-gzip",
        b"deflate",
        b"x-deflate",
        b"br",
        b"lzma",
        b"identity",
        b"none",
    ]
    .iter()
    .any(|k| c.eq_ignore_ascii_case(k))
}

/// Whether a `Content-Encoding` value names a coding libhtp does not know.
pub fn abnormal_content_encoding(v: &[u8]) -> bool {
    v.split(|&c| c == b',')
        .map(trim)
        .any(|c| !c.is_empty() && !known_coding(c))
}

/// Whether a `Transfer-Encoding` value mentions `chunked` without being just that
/// (`gzip, chunked`, `xchunked`: libhtp's `RESPONSE_ABNORMAL_TRANSFER_ENCODING`).
pub fn abnormal_transfer_encoding(v: &[u8]) -> bool {
    contains_nocase(v, b"chunked") && !trim(v).eq_ignore_ascii_case(b"chunked")
}

/// Whether a `Host` value is not a host with an optional numeric port (libhtp's
/// `REQUEST_HEADER_HOST_INVALID`: whitespace or a list, a port that is not a number).
pub fn host_header_invalid(v: &[u8]) -> bool {
    let v = trim(v);
    if v.is_empty() {
        return false;
    }
    if v.iter().any(|&c| is_space(c) || c == b',') {
        return true;
    }
    // An IPv6 literal keeps its colons inside brackets.
    let after = match v.iter().position(|&c| c == b']') {
        Some(i) if v[0] == b'[' => &v[i + 1..],
        _ => v,
    };
    match memchr::memrchr(b':', after) {
        Some(i) if v[0] != b'[' || after.first() == Some(&b':') => {
            let port = &after[i + 1..];
            port.is_empty() || !port.iter().all(u8::is_ascii_digit)
        }
        _ => false,
    }
}

/// Whether an `Authorization` value uses a scheme libhtp does not parse (it knows
/// Basic, Digest and Bearer).
pub fn auth_unrecognized(v: &[u8]) -> bool {
    let (scheme, _) = split_token(trim(v));
    !scheme.is_empty()
        && ![&b"basic"[..], b"digest", b"bearer"]
            .iter()
            .any(|k| scheme.eq_ignore_ascii_case(k))
}

/// Whether a header value lists `token` (case-insensitive substring, as libhtp checks
/// `Transfer-Encoding` for "chunked").
pub fn contains_nocase(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty()
        && hay.len() >= needle.len()
        && hay
            .windows(needle.len())
            .any(|w| w.eq_ignore_ascii_case(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_line_endings() {
        let l = next_line(b"a\r\nb", Side::Response, false).unwrap();
        assert_eq!((l.end, l.next), (1, 3));
        let l = next_line(b"a\rb", Side::Response, false).unwrap();
        assert_eq!((l.end, l.next), (1, 2));
        let l = next_line(b"a\n\rb", Side::Response, false).unwrap();
        assert_eq!((l.end, l.next), (1, 3));
        let l = next_line(b"a\n\r\n", Side::Response, false).unwrap();
        assert_eq!((l.end, l.next), (1, 2));
        assert!(next_line(b"a\r", Side::Response, false).is_none());
        assert!(next_line(b"abc", Side::Response, false).is_none());
        let l = next_line(b"abc", Side::Response, true).unwrap();
        assert_eq!((l.end, l.next), (3, 3));
        // Request side: only LF ends a line.
        let l = next_line(b"a\rb\r\n", Side::Request, false).unwrap();
        assert_eq!((l.end, l.next), (3, 5));
    }

    #[test]
    fn request_lines() {
        let r = parse_request_line(b"GET /a?b HTTP/1.1");
        assert_eq!(
            (r.method, r.uri, r.protocol),
            (&b"GET"[..], &b"/a?b"[..], &b"HTTP/1.1"[..])
        );
        let r = parse_request_line(b"GET /uri afterspace HTTP/1.1");
        assert_eq!(
            (r.uri, r.protocol),
            (&b"/uri afterspace"[..], &b"HTTP/1.1"[..])
        );
        let r = parse_request_line(b"GET /a b  HTTP/1.0  ");
        assert_eq!((r.uri, r.protocol), (&b"/a b"[..], &b"HTTP/1.0"[..]));
        let r = parse_request_line(b"GET /a junk");
        assert_eq!((r.uri, r.protocol), (&b"/a"[..], &b"junk"[..]));
        let r = parse_request_line(b"  GET   /x ");
        assert_eq!(r.protocol, b"");
        assert_eq!(r.uri, b"/x");
        assert_eq!(parse_version(b"HTTP/1.0"), Version::V1_0);
        assert_eq!(parse_version(b"http/1.1"), Version::V1_1);
        assert_eq!(parse_version(b"HTTP/1.2"), Version::Higher);
        assert_eq!(parse_version(b"HTTP/1.01"), Version::Invalid);
        assert_eq!(parse_version(b"SIP/2.0"), Version::Invalid);
    }

    #[test]
    fn status_lines() {
        let s = parse_status_line(b"HTTP/1.1 200 OK fine");
        assert_eq!(s.message, b"OK fine");
        assert_eq!(parse_status(s.status), Some(200));
        assert_eq!(parse_status(b"2000"), None);
        assert!(!response_line_is_body(b"  hTTp/1.1 200"));
        assert!(response_line_is_body(b"X5O!P%@AP"));
    }

    #[test]
    fn headers_fold_and_flag() {
        let lines: Vec<&[u8]> = vec![
            b"Host: a",
            b"X-Long: one",
            b"\t two",
            b"NoColonHere",
            b" Transfer-Encoding: chunked",
        ];
        let mut out = Vec::new();
        let f = parse_headers(&lines, Side::Response, &mut out);
        // Folding onto a header is no anomaly for libhtp; a line without a colon is.
        assert!(!f.folding && f.missing_colon);
        let mut first = Vec::new();
        let f = parse_headers(&[b" X: a", b"Host: b"], Side::Request, &mut first);
        assert!(f.folding);
        let mut lws = Vec::new();
        let f = parse_headers(&[b"Host : b", b"Us@er: c"], Side::Request, &mut lws);
        assert!(f.lws_after_name && f.invalid_name && !f.missing_colon);
        assert_eq!(lws[0].name(), b"Host");
        assert_eq!(out[1].value(), b"one two");
        assert_eq!(out[2].name(), b"");
        assert_eq!(out[3].name(), b"Transfer-Encoding");
        // A name folded away from its colon.
        let mut out = Vec::new();
        parse_headers(
            &[b"Transfer-Encoding", b" :", b" chunked"],
            Side::Response,
            &mut out,
        );
        assert_eq!(
            (out[0].name(), out[0].value()),
            (&b"Transfer-Encoding"[..], &b"chunked"[..])
        );
        assert!(name_eq(b"Transfer\0-Encoding", b"transfer-encoding"));
        assert!(!name_eq(b"Transfer", b"transfer-encoding"));
        assert!(names_eq(b"Host\0", b"\0hOST"));
        assert!(!names_eq(b"Host", b"Hosts"));
        assert!(!names_eq(b"Hosts", b"Host"));
        // On the request side a NUL ends the value.
        let mut out = Vec::new();
        parse_headers(&[b"A: b\0c"], Side::Request, &mut out);
        assert_eq!(out[0].value(), b"b");
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(parse_chunk_len(b"1a"), ChunkLen::Size(26));
        assert_eq!(parse_chunk_len(b" 5 ;ext=1\r"), ChunkLen::Size(5));
        assert_eq!(parse_chunk_len(b"\r"), ChunkLen::Empty);
        assert_eq!(parse_chunk_len(b"x5"), ChunkLen::Invalid);
        assert_eq!(parse_chunk_len(b"fffffffffff"), ChunkLen::Empty);
        assert!(chunk_len_prefix_ok(b" 1"));
        assert!(!chunk_len_prefix_ok(b"zz"));
        assert_eq!(parse_content_length(b" 12 x"), Some(12));
        assert_eq!(parse_content_length(b"(12)"), Some(12));
        assert_eq!(parse_content_length(b"x"), None);
        assert_eq!(parse_content_length(b"99999999999999999999999"), None);
        assert!(contains_nocase(b"x, ChUnKed", b"chunked"));
    }
}
