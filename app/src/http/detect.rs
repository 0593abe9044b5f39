//! The inspection buffers an HTTP transaction provides (`http.uri`, `http.header`,
//! `file_data`, ...), in the shapes Suricata builds them:
//!
//! - `http.header`: every header as `Name: value\r\n` (duplicates joined, Cookie included);
//! - `http.header_names`: `\r\n` then each name followed by `\r\n`, then `\r\n`;
//! - `http.start`: the request/status line, `\r\n`, the headers as above, `\r\n`;
//! - `http.request_header`/`http.response_header`: one item `Name: value` per header;
//! - `http.host`: lowercase, port removed (from an absolute URI, else `Host`);
//! - bodies: de-chunked and decoded, up to the configured body limit.

use super::state::{HttpTx, Message, Progress};
use crate::AppProto;
use crate::buffers::{BufferDef, def};
use crate::descriptor::{KeywordDef, KeywordKind};
use crate::{Buf, BufferId, Dir};

pub const URI: BufferId = BufferId::of(AppProto::Http, 1);
pub const URI_RAW: BufferId = BufferId::of(AppProto::Http, 2);
pub const METHOD: BufferId = BufferId::of(AppProto::Http, 3);
pub const PROTOCOL_REQ: BufferId = BufferId::of(AppProto::Http, 4);
pub const REQUEST_LINE: BufferId = BufferId::of(AppProto::Http, 5);
pub const HOST: BufferId = BufferId::of(AppProto::Http, 6);
pub const HOST_RAW: BufferId = BufferId::of(AppProto::Http, 7);
pub const USER_AGENT: BufferId = BufferId::of(AppProto::Http, 8);
pub const HEADER_REQ: BufferId = BufferId::of(AppProto::Http, 9);
pub const HEADER_RAW_REQ: BufferId = BufferId::of(AppProto::Http, 10);
pub const HEADER_NAMES_REQ: BufferId = BufferId::of(AppProto::Http, 11);
pub const COOKIE_REQ: BufferId = BufferId::of(AppProto::Http, 12);
pub const ACCEPT: BufferId = BufferId::of(AppProto::Http, 13);
pub const ACCEPT_ENC: BufferId = BufferId::of(AppProto::Http, 14);
pub const ACCEPT_LANG: BufferId = BufferId::of(AppProto::Http, 15);
pub const REFERER: BufferId = BufferId::of(AppProto::Http, 16);
pub const CONTENT_TYPE_REQ: BufferId = BufferId::of(AppProto::Http, 17);
pub const CONTENT_LEN_REQ: BufferId = BufferId::of(AppProto::Http, 18);
pub const CONNECTION_REQ: BufferId = BufferId::of(AppProto::Http, 19);
pub const START_REQ: BufferId = BufferId::of(AppProto::Http, 20);
pub const REQUEST_BODY: BufferId = BufferId::of(AppProto::Http, 21);
/// `http.request_header`: one item per header, `Name: value`.
pub const REQUEST_HEADER: BufferId = BufferId::of(AppProto::Http, 22);
/// `file.name` of the request's file (a request body): the URI path.
pub const FILE_NAME_REQ: BufferId = BufferId::of(AppProto::Http, 23);
/// `file.data` to the server: the request body, or each file part of a multipart
/// upload (one item per file).
pub const FILE_DATA_REQ: BufferId = BufferId::of(AppProto::Http, 58);
/// `file.magic` of the request's file.
pub const FILE_MAGIC_REQ: BufferId = BufferId::of(AppProto::Http, 24);
pub const STAT_CODE: BufferId = BufferId::of(AppProto::Http, 40);
pub const STAT_MSG: BufferId = BufferId::of(AppProto::Http, 41);
pub const RESPONSE_LINE: BufferId = BufferId::of(AppProto::Http, 42);
pub const PROTOCOL_RESP: BufferId = BufferId::of(AppProto::Http, 43);
pub const HEADER_RESP: BufferId = BufferId::of(AppProto::Http, 44);
pub const HEADER_RAW_RESP: BufferId = BufferId::of(AppProto::Http, 45);
pub const HEADER_NAMES_RESP: BufferId = BufferId::of(AppProto::Http, 46);
pub const COOKIE_RESP: BufferId = BufferId::of(AppProto::Http, 47);
pub const CONTENT_TYPE_RESP: BufferId = BufferId::of(AppProto::Http, 48);
pub const CONTENT_LEN_RESP: BufferId = BufferId::of(AppProto::Http, 49);
pub const CONNECTION_RESP: BufferId = BufferId::of(AppProto::Http, 50);
pub const START_RESP: BufferId = BufferId::of(AppProto::Http, 51);
pub const SERVER: BufferId = BufferId::of(AppProto::Http, 52);
pub const LOCATION: BufferId = BufferId::of(AppProto::Http, 53);
/// The response body, decompressed (`http.response_body`, and `file_data` to_client).
pub const RESPONSE_BODY: BufferId = BufferId::of(AppProto::Http, 54);
/// `http.response_header`: one item per header, `Name: value`.
pub const RESPONSE_HEADER: BufferId = BufferId::of(AppProto::Http, 55);
/// `file.name` of the response's file (a response body): the Content-Disposition
/// `filename=`, else the URI path.
pub const FILE_NAME_RESP: BufferId = BufferId::of(AppProto::Http, 56);
/// `file.magic` of the response's file.
pub const FILE_MAGIC_RESP: BufferId = BufferId::of(AppProto::Http, 57);

/// HTTP's keywords that are not sticky buffers: shorthands for matches on them.
pub static KEYWORDS: &[KeywordDef] = &[
    // `uricontent:"x"` is `http.uri; content:"x";` with the payload list current after.
    KeywordDef {
        name: "uricontent",
        aliases: &[],
        kind: KeywordKind::ContentIn { buffer: "http.uri" },
    },
    // `urilen:<size>[,norm|raw]`: the size of the normalised (or raw) URI.
    KeywordDef {
        name: "urilen",
        aliases: &[],
        kind: KeywordKind::Size {
            buffer: "http.uri",
            raw_buffer: "http.uri.raw",
        },
    },
    // Suricata: `filename:"x"` is `file.name; content:"x"; nocase;` and `fileext:"x"`
    // is `file.name; content:".x"; nocase; endswith;`.
    KeywordDef {
        name: "filename",
        aliases: &[],
        kind: KeywordKind::BufferContent {
            buffer: "file.name",
            nocase: true,
            extension: false,
        },
    },
    // `filemagic:"x"` is `file.magic; content:"x"; nocase;`.
    KeywordDef {
        name: "filemagic",
        aliases: &[],
        kind: KeywordKind::BufferContent {
            buffer: "file.magic",
            nocase: true,
            extension: false,
        },
    },
    KeywordDef {
        name: "fileext",
        aliases: &[],
        kind: KeywordKind::BufferContent {
            buffer: "file.name",
            nocase: true,
            extension: true,
        },
    },
];

/// The sticky buffers of HTTP.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "http.uri",
        &["http_uri"],
        Some("http_uri"),
        AppProto::Http,
        Some(URI),
        None,
        false,
    ),
    def(
        "http.uri.raw",
        &["http_raw_uri"],
        Some("http_raw_uri"),
        AppProto::Http,
        Some(URI_RAW),
        None,
        false,
    ),
    def(
        "http.method",
        &["http_method"],
        Some("http_method"),
        AppProto::Http,
        Some(METHOD),
        None,
        false,
    ),
    def(
        "http.protocol",
        &["http_protocol"],
        None,
        AppProto::Http,
        Some(PROTOCOL_REQ),
        Some(PROTOCOL_RESP),
        false,
    ),
    def(
        "http.request_line",
        &["http_request_line"],
        None,
        AppProto::Http,
        Some(REQUEST_LINE),
        None,
        false,
    ),
    def(
        "http.host",
        &["http_host"],
        Some("http_host"),
        AppProto::Http,
        Some(HOST),
        None,
        false,
    ),
    def(
        "http.host.raw",
        &["http_raw_host"],
        Some("http_raw_host"),
        AppProto::Http,
        Some(HOST_RAW),
        None,
        false,
    ),
    def(
        "http.user_agent",
        &["http_user_agent"],
        Some("http_user_agent"),
        AppProto::Http,
        Some(USER_AGENT),
        None,
        false,
    ),
    def(
        "http.header",
        &["http_header"],
        Some("http_header"),
        AppProto::Http,
        Some(HEADER_REQ),
        Some(HEADER_RESP),
        false,
    ),
    def(
        "http.header.raw",
        &["http_raw_header"],
        Some("http_raw_header"),
        AppProto::Http,
        Some(HEADER_RAW_REQ),
        Some(HEADER_RAW_RESP),
        false,
    ),
    def(
        "http.header_names",
        &["http_header_names"],
        None,
        AppProto::Http,
        Some(HEADER_NAMES_REQ),
        Some(HEADER_NAMES_RESP),
        false,
    ),
    def(
        "http.cookie",
        &["http_cookie"],
        Some("http_cookie"),
        AppProto::Http,
        Some(COOKIE_REQ),
        Some(COOKIE_RESP),
        false,
    ),
    def(
        "http.accept",
        &["http_accept"],
        None,
        AppProto::Http,
        Some(ACCEPT),
        None,
        false,
    ),
    def(
        "http.accept_enc",
        &["http_accept_enc"],
        None,
        AppProto::Http,
        Some(ACCEPT_ENC),
        None,
        false,
    ),
    def(
        "http.accept_lang",
        &["http_accept_lang"],
        None,
        AppProto::Http,
        Some(ACCEPT_LANG),
        None,
        false,
    ),
    def(
        "http.referer",
        &["http_referer"],
        None,
        AppProto::Http,
        Some(REFERER),
        None,
        false,
    ),
    def(
        "http.content_type",
        &["http_content_type"],
        None,
        AppProto::Http,
        Some(CONTENT_TYPE_REQ),
        Some(CONTENT_TYPE_RESP),
        false,
    ),
    def(
        "http.content_len",
        &["http_content_len"],
        None,
        AppProto::Http,
        Some(CONTENT_LEN_REQ),
        Some(CONTENT_LEN_RESP),
        false,
    ),
    def(
        "http.connection",
        &["http_connection"],
        None,
        AppProto::Http,
        Some(CONNECTION_REQ),
        Some(CONNECTION_RESP),
        false,
    ),
    def(
        "http.start",
        &["http_start"],
        None,
        AppProto::Http,
        Some(START_REQ),
        Some(START_RESP),
        false,
    ),
    def(
        "http.request_body",
        &["http_client_body"],
        Some("http_client_body"),
        AppProto::Http,
        Some(REQUEST_BODY),
        None,
        false,
    ),
    def(
        "http.request_header",
        &[],
        None,
        AppProto::Http,
        Some(REQUEST_HEADER),
        None,
        true,
    ),
    def(
        "http.stat_code",
        &["http_stat_code"],
        Some("http_stat_code"),
        AppProto::Http,
        None,
        Some(STAT_CODE),
        false,
    ),
    def(
        "http.stat_msg",
        &["http_stat_msg"],
        Some("http_stat_msg"),
        AppProto::Http,
        None,
        Some(STAT_MSG),
        false,
    ),
    def(
        "http.response_line",
        &["http_response_line"],
        None,
        AppProto::Http,
        None,
        Some(RESPONSE_LINE),
        false,
    ),
    def(
        "http.server",
        &["http_server"],
        None,
        AppProto::Http,
        None,
        Some(SERVER),
        false,
    ),
    def(
        "http.location",
        &["http_location"],
        None,
        AppProto::Http,
        None,
        Some(LOCATION),
        false,
    ),
    def(
        "http.response_body",
        &["http_server_body"],
        Some("http_server_body"),
        AppProto::Http,
        None,
        Some(RESPONSE_BODY),
        false,
    ),
    def(
        "http.response_header",
        &[],
        None,
        AppProto::Http,
        None,
        Some(RESPONSE_HEADER),
        true,
    ),
    // file_data: the HTTP body in the rule's direction (response body by default); a
    // multipart upload's files one by one.
    def(
        "file.data",
        &["file_data"],
        None,
        AppProto::Http,
        Some(FILE_DATA_REQ),
        Some(RESPONSE_BODY),
        true,
    ),
    // file.name: the name of the file an HTTP body carries, in the rule's direction
    // (Suricata's HTTP/1 file naming; a multipart upload's file parts one by one).
    def(
        "file.name",
        &[],
        None,
        AppProto::Http,
        Some(FILE_NAME_REQ),
        Some(FILE_NAME_RESP),
        true,
    ),
    // file.magic: the type of the body's file from its content (needs the file layer's
    // magic, which a rule using it turns on).
    def(
        "file.magic",
        &[],
        None,
        AppProto::Http,
        Some(FILE_MAGIC_REQ),
        Some(FILE_MAGIC_RESP),
        false,
    ),
];

/// Header-derived buffers, built once when a message's headers are complete.
///
/// One buffer holds `http.start`; `http.header` and each `http.request_header` item are
/// ranges of it (a few allocations per message, not one per header).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct HeaderBuffers {
    /// `http.start`: the line, `\r\n`, each `Name: value\r\n`, `\r\n`.
    start: Vec<u8>,
    /// Where the headers begin in `start` (after the line and its `\r\n`).
    headers_at: usize,
    /// `http.header_names`.
    names: Vec<u8>,
    /// Each header's `Name: value` in `start`, as (start, end).
    items: Vec<(u32, u32)>,
}

impl HeaderBuffers {
    pub fn build(m: &Message) -> HeaderBuffers {
        let headers_len: usize = m
            .headers
            .iter()
            .map(|h| h.name().len() + h.value().len() + 4)
            .sum();
        let names_len: usize = m.headers.iter().map(|h| h.name().len() + 2).sum::<usize>() + 4;
        let mut b = HeaderBuffers {
            start: Vec::with_capacity(m.line.len() + headers_len + 4),
            headers_at: m.line.len() + 2,
            names: Vec::with_capacity(names_len),
            items: Vec::with_capacity(m.headers.len()),
        };
        b.names.extend_from_slice(b"\r\n");
        b.start.extend_from_slice(&m.line);
        b.start.extend_from_slice(b"\r\n");
        for h in &m.headers {
            // The header block is bounded (MAX_HEADER_BLOCK), far below 4 GiB.
            let at = b.start.len() as u32;
            b.start.extend_from_slice(h.name());
            b.start.extend_from_slice(b": ");
            b.start.extend_from_slice(h.value());
            b.items.push((at, b.start.len() as u32));
            b.start.extend_from_slice(b"\r\n");
            b.names.extend_from_slice(h.name());
            b.names.extend_from_slice(b"\r\n");
        }
        b.names.extend_from_slice(b"\r\n");
        b.start.extend_from_slice(b"\r\n");
        b
    }

    /// `http.header`: every header as `Name: value\r\n`.
    pub fn normalized(&self) -> &[u8] {
        self.start
            .get(self.headers_at..self.start.len().saturating_sub(2))
            .unwrap_or_default()
    }

    /// `http.header_names`.
    pub fn names(&self) -> &[u8] {
        &self.names
    }

    /// `http.start`.
    pub fn start(&self) -> &[u8] {
        &self.start
    }

    /// Header `index` as `Name: value`.
    pub fn item(&self, index: usize) -> Option<&[u8]> {
        let &(a, b) = self.items.get(index)?;
        self.start.get(a as usize..b as usize)
    }
}

fn ready(v: &[u8]) -> Buf<'_> {
    Buf::Ready(v)
}

/// A buffer that exists once the line is parsed.
fn after_line<'a>(m: &Message, v: &'a [u8]) -> Buf<'a> {
    if m.progress < Progress::Headers && m.line.is_empty() {
        Buf::NotYet
    } else {
        ready(v)
    }
}

/// A header value, once the headers are parsed.
fn header<'a>(m: &'a Message, name: &[u8]) -> Buf<'a> {
    if m.progress < Progress::Body {
        return Buf::NotYet;
    }
    match m.header(name) {
        Some(v) => Buf::Ready(v),
        None => Buf::Absent,
    }
}

fn headers_ready<'a>(m: &Message, f: impl FnOnce() -> Buf<'a>) -> Buf<'a> {
    if m.progress < Progress::Body {
        Buf::NotYet
    } else {
        f()
    }
}

fn body(tx: &HttpTx, dir: Dir) -> Buf<'_> {
    let m = tx.message(dir);
    if m.progress < Progress::Body {
        return Buf::NotYet;
    }
    if !m.has_body || (m.body.is_empty() && m.progress == Progress::Complete) {
        return Buf::Absent;
    }
    if tx.body_done(dir) {
        Buf::Ready(&m.body)
    } else {
        Buf::Partial(&m.body)
    }
}

/// Item `index` of a multipart upload's file parts (`get` gives it from the part's body
/// range): ready once the part ended (or the body did), partial while it arrives; a
/// part still to come is not there yet while the body is.
fn part<'a>(
    m: &'a Message,
    mp: &'a super::multipart::Multipart,
    index: usize,
    get: impl FnOnce((u64, u64)) -> Option<&'a [u8]>,
) -> Buf<'a> {
    let body_over = m.progress == Progress::Complete || m.body_truncated;
    match mp.ranges.get(index) {
        Some(&r) => match get(r) {
            Some(b) if r.1 != u64::MAX || body_over => Buf::Ready(b),
            Some(b) => Buf::Partial(b),
            None if body_over => Buf::Absent,
            None => Buf::NotYet,
        },
        None if body_over || mp.done() => Buf::Absent,
        None => Buf::NotYet,
    }
}

/// The name of the file the body in `dir` carries, as Suricata names HTTP/1 files: a
/// response's from its Content-Disposition `filename=` parameter, else (and always for
/// a request) the normalised URI path. A file exists once body bytes arrived; a
/// message without body bytes has none.
fn file_name(tx: &HttpTx, dir: Dir) -> Buf<'_> {
    let m = tx.message(dir);
    if m.progress < Progress::Body {
        return Buf::NotYet;
    }
    if !m.has_body || m.body.is_empty() {
        return if m.progress == Progress::Complete || !m.has_body {
            Buf::Absent
        } else {
            Buf::NotYet
        };
    }
    file_name_of(tx, dir).map_or(Buf::Absent, Buf::Ready)
}

/// The name of the file of `tx`'s body in `dir` (see [`file_name`]), `None` when it
/// has none (no request to take a path from).
pub(crate) fn file_name_of(tx: &HttpTx, dir: Dir) -> Option<&[u8]> {
    if dir == Dir::ToClient
        && let Some(name) = tx
            .response
            .header(b"content-disposition")
            .and_then(disposition_filename)
    {
        return Some(name);
    }
    if tx.request_missing {
        // libhtp's placeholder URI of a response without a request.
        return Some(b"/libhtp::request_uri_not_seen");
    }
    match tx.uri_norm.get(..tx.uri_path_len) {
        Some(path) if !path.is_empty() => Some(path),
        _ => None,
    }
}

/// A `Content-Range` value as Suricata parses it (`<unit> <first>-<last>/<length>`,
/// `<unit> <first>-<last>/*` or `<unit> */<length>`; what follows is ignored): each
/// number when given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentRange {
    pub start: Option<u64>,
    pub end: Option<u64>,
    pub size: Option<u64>,
}

/// Parses a `Content-Range` value: leading spaces, a unit up to the next space, spaces,
/// then the range (numbers of at most 18 digits, as Suricata's `i64`).
pub fn parse_content_range(v: &[u8]) -> Option<ContentRange> {
    fn num(v: &[u8]) -> Option<(u64, &[u8])> {
        let n = v.iter().take_while(|b| b.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let x = std::str::from_utf8(&v[..n]).ok()?.parse::<i64>().ok()?;
        Some((u64::try_from(x).ok()?, &v[n..]))
    }
    let v = &v[v.iter().take_while(|&&b| b == b' ').count()..];
    let v = &v[v.iter().take_while(|&&b| b != b' ').count()..];
    let v = &v[v.iter().take_while(|&&b| b == b' ').count()..];
    if let Some(rest) = v.strip_prefix(b"*/") {
        let (size, _) = num(rest)?;
        return Some(ContentRange {
            start: None,
            end: None,
            size: Some(size),
        });
    }
    let (start, rest) = num(v)?;
    let (end, rest) = num(rest.strip_prefix(b"-")?)?;
    let rest = rest.strip_prefix(b"/")?;
    let size = if rest.starts_with(b"*") {
        None
    } else {
        Some(num(rest)?.0)
    };
    Some(ContentRange {
        start: Some(start),
        end: Some(end),
        size,
    })
}

/// Whether a `Content-Range` value is one Suricata flags (`http.range_invalid`) when
/// the body it announces begins: unparsable, or a range that is reversed or ends past
/// the length.
pub(crate) fn range_invalid(v: &[u8]) -> bool {
    match parse_content_range(v) {
        None => true,
        Some(ContentRange {
            start: Some(s),
            end: Some(e),
            size: Some(n),
        }) if e != 0 && n != 0 => s > e || e > n - 1,
        Some(_) => false,
    }
}

/// The range `(first, last, length)` of a response that carries a part of a file: a
/// `Content-Range` with all three numbers, not the whole file, `first <= last <
/// length`, as Suricata checks it before it treats the body as a part (otherwise the
/// body is an ordinary file).
pub(crate) fn content_range(v: &[u8]) -> Option<(u64, u64, u64)> {
    let r = parse_content_range(v)?;
    let (start, end, size) = (r.start?, r.end?, r.size?);
    if end == 0 || size == 0 || (start == 0 && end == size - 1) || start > end || end > size - 1 {
        return None;
    }
    Some((start, end, size))
}

/// The magic of the body's file in `dir`: known once its first bytes arrived or it
/// ended; absent when the message carries no file (or files are not tracked).
fn file_magic(tx: &HttpTx, dir: Dir) -> Buf<'_> {
    let m = tx.message(dir);
    match m.files.as_slice().first() {
        Some(f) => match f.magic() {
            Some(x) => Buf::Ready(x.as_bytes()),
            None if f.is_open() && f.wants_magic() => Buf::NotYet,
            None => Buf::Absent,
        },
        None if m.progress == Progress::Complete => Buf::Absent,
        None if m.progress >= Progress::Body && !m.has_body => Buf::Absent,
        None => Buf::NotYet,
    }
}

/// The `filename=` parameter of a Content-Disposition value, unquoted; None when
/// absent or empty.
pub(crate) fn disposition_filename(v: &[u8]) -> Option<&[u8]> {
    const KEY: &[u8] = b"filename=";
    let at = v
        .windows(KEY.len())
        .position(|w| w.eq_ignore_ascii_case(KEY))?;
    let rest = &v[at + KEY.len()..];
    let name = match rest.strip_prefix(b"\"") {
        Some(q) => &q[..q.iter().position(|&b| b == b'"').unwrap_or(q.len())],
        None => {
            let end = rest.iter().position(|&b| b == b';').unwrap_or(rest.len());
            rest[..end].trim_ascii()
        }
    };
    (!name.is_empty()).then_some(name)
}

pub const FRAME_REQUEST: BufferId = BufferId::of(AppProto::Http, 100);
pub const FRAME_RESPONSE: BufferId = BufferId::of(AppProto::Http, 101);

/// Suricata 8's HTTP/1 frames: `http1.request` and `http1.response`, each request and
/// each response as received, start line to end of body (`http1.stream`, all of a
/// direction, is every TCP protocol's: [`crate::stream_frame`]). The bytes kept for
/// each are bounded by [`super::state::MAX_FRAME_BYTES`].
pub static FRAMES: &[BufferDef] = &[
    def(
        "request",
        &[],
        None,
        AppProto::Http,
        Some(FRAME_REQUEST),
        None,
        false,
    ),
    def(
        "response",
        &[],
        None,
        AppProto::Http,
        None,
        Some(FRAME_RESPONSE),
        false,
    ),
];

/// The message of frame buffer `id`.
fn frame_message(tx: &HttpTx, id: BufferId) -> Option<&Message> {
    match id {
        FRAME_REQUEST if !tx.request_missing => Some(&tx.request),
        FRAME_RESPONSE => Some(&tx.response),
        _ => None,
    }
}

/// The frame buffer `id` of `tx`: the message's bytes once it is complete (Suricata
/// learns an HTTP frame's length when its message completes, and inspects it then).
fn frame_buffer(tx: &HttpTx, id: BufferId) -> Buf<'_> {
    match frame_message(tx, id) {
        Some(m) if m.progress == Progress::Complete && m.frame.id != 0 => Buf::Ready(&m.raw),
        Some(_) => Buf::NotYet,
        None => Buf::Absent,
    }
}

/// [`crate::Transaction::frame`] for HTTP: a message's frame is attached to its
/// transaction (Suricata's HTTP transaction ids are the EVE `tx_id`s).
pub fn frame_meta(tx: &HttpTx, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
    let m = frame_message(tx, id)?;
    if index != 0 || m.frame.id == 0 {
        return None;
    }
    Some(crate::FrameMeta {
        id: m.frame.id,
        stream_offset: Some(m.frame.offset),
        complete: m.progress == Progress::Complete,
        tx_id: Some(tx.id),
        length: Some(m.frame.len),
    })
}

/// Buffer `id` item `index` of `tx`.
pub fn buffer(tx: &HttpTx, id: BufferId, index: usize) -> Buf<'_> {
    let req = &tx.request;
    let resp = &tx.response;
    if index > 0
        && id != REQUEST_HEADER
        && id != RESPONSE_HEADER
        && !(req.multipart.is_some() && (id == FILE_DATA_REQ || id == FILE_NAME_REQ))
    {
        return Buf::Absent;
    }
    if id == FRAME_REQUEST || id == FRAME_RESPONSE {
        return if index == 0 {
            frame_buffer(tx, id)
        } else {
            Buf::Absent
        };
    }
    if tx.request_missing && id.0 < STAT_CODE.0 {
        return Buf::Absent;
    }
    match id {
        URI => after_line(req, &tx.uri_norm),
        URI_RAW => after_line(req, &tx.uri_raw),
        METHOD => after_line(req, &tx.method),
        PROTOCOL_REQ => after_line(req, &req.protocol),
        REQUEST_LINE => after_line(req, &req.line),
        HOST => headers_ready(req, || match &tx.host {
            Some(h) => Buf::Ready(h),
            None => Buf::Absent,
        }),
        HOST_RAW => headers_ready(req, || match req.header(b"host") {
            Some(h) => Buf::Ready(h),
            None => match &tx.host {
                Some(h) => Buf::Ready(h),
                None => Buf::Absent,
            },
        }),
        USER_AGENT => header(req, b"user-agent"),
        HEADER_REQ => headers_ready(req, || ready(req.buffers.normalized())),
        HEADER_RAW_REQ => headers_ready(req, || ready(&req.headers_raw)),
        HEADER_NAMES_REQ => headers_ready(req, || ready(req.buffers.names())),
        COOKIE_REQ => header(req, b"cookie"),
        ACCEPT => header(req, b"accept"),
        ACCEPT_ENC => header(req, b"accept-encoding"),
        ACCEPT_LANG => header(req, b"accept-language"),
        REFERER => header(req, b"referer"),
        CONTENT_TYPE_REQ => header(req, b"content-type"),
        CONTENT_LEN_REQ => header(req, b"content-length"),
        CONNECTION_REQ => header(req, b"connection"),
        START_REQ => headers_ready(req, || ready(req.buffers.start())),
        REQUEST_BODY => body(tx, Dir::ToServer),
        FILE_NAME_REQ => match &req.multipart {
            Some(mp) => part(req, mp, index, |_| mp.names.get(index).map(|n| &n[..])),
            None => file_name(tx, Dir::ToServer),
        },
        FILE_DATA_REQ => match &req.multipart {
            Some(mp) => part(req, mp, index, |(s, e)| {
                let s = usize::try_from(s).ok()?;
                let e = usize::try_from(e).unwrap_or(usize::MAX).min(req.body.len());
                req.body.get(s..e.max(s))
            }),
            None => body(tx, Dir::ToServer),
        },
        FILE_NAME_RESP => file_name(tx, Dir::ToClient),
        FILE_MAGIC_REQ => file_magic(tx, Dir::ToServer),
        FILE_MAGIC_RESP => file_magic(tx, Dir::ToClient),
        REQUEST_HEADER => headers_ready(req, || {
            req.buffers.item(index).map_or(Buf::Absent, Buf::Ready)
        }),
        STAT_CODE => after_line(resp, &tx.status_raw),
        STAT_MSG => after_line(resp, &tx.status_msg),
        RESPONSE_LINE => after_line(resp, &resp.line),
        PROTOCOL_RESP => after_line(resp, &resp.protocol),
        HEADER_RESP | HEADER_RAW_RESP | HEADER_NAMES_RESP | START_RESP if tx.switched => {
            Buf::Absent
        }
        HEADER_RESP => headers_ready(resp, || ready(resp.buffers.normalized())),
        HEADER_RAW_RESP => headers_ready(resp, || ready(&resp.headers_raw)),
        HEADER_NAMES_RESP => headers_ready(resp, || ready(resp.buffers.names())),
        COOKIE_RESP => header(resp, b"set-cookie"),
        CONTENT_TYPE_RESP => header(resp, b"content-type"),
        CONTENT_LEN_RESP => header(resp, b"content-length"),
        CONNECTION_RESP => header(resp, b"connection"),
        START_RESP => headers_ready(resp, || ready(resp.buffers.start())),
        SERVER => header(resp, b"server"),
        LOCATION => header(resp, b"location"),
        RESPONSE_BODY => body(tx, Dir::ToClient),
        RESPONSE_HEADER => headers_ready(resp, || {
            resp.buffers.item(index).map_or(Buf::Absent, Buf::Ready)
        }),
        _ => Buf::Absent,
    }
}
