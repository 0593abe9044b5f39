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
use crate::{Buf, BufferId, Dir};

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
    if dir == Dir::ToClient
        && let Some(name) = m
            .header(b"content-disposition")
            .and_then(disposition_filename)
    {
        return Buf::Ready(name);
    }
    match tx.uri_norm.get(..tx.uri_path_len) {
        Some(path) if !path.is_empty() && !tx.request_missing => Buf::Ready(path),
        _ => Buf::Absent,
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

/// Buffer `id` item `index` of `tx`.
pub fn buffer(tx: &HttpTx, id: BufferId, index: usize) -> Buf<'_> {
    let req = &tx.request;
    let resp = &tx.response;
    if index > 0 && id != BufferId::HTTP_REQUEST_HEADER && id != BufferId::HTTP_RESPONSE_HEADER {
        return Buf::Absent;
    }
    if tx.request_missing && id.0 < BufferId::HTTP_STAT_CODE.0 {
        return Buf::Absent;
    }
    match id {
        BufferId::HTTP_URI => after_line(req, &tx.uri_norm),
        BufferId::HTTP_URI_RAW => after_line(req, &tx.uri_raw),
        BufferId::HTTP_METHOD => after_line(req, &tx.method),
        BufferId::HTTP_PROTOCOL_REQ => after_line(req, &req.protocol),
        BufferId::HTTP_REQUEST_LINE => after_line(req, &req.line),
        BufferId::HTTP_HOST => headers_ready(req, || match &tx.host {
            Some(h) => Buf::Ready(h),
            None => Buf::Absent,
        }),
        BufferId::HTTP_HOST_RAW => headers_ready(req, || match req.header(b"host") {
            Some(h) => Buf::Ready(h),
            None => match &tx.host {
                Some(h) => Buf::Ready(h),
                None => Buf::Absent,
            },
        }),
        BufferId::HTTP_USER_AGENT => header(req, b"user-agent"),
        BufferId::HTTP_HEADER_REQ => headers_ready(req, || ready(req.buffers.normalized())),
        BufferId::HTTP_HEADER_RAW_REQ => headers_ready(req, || ready(&req.headers_raw)),
        BufferId::HTTP_HEADER_NAMES_REQ => headers_ready(req, || ready(req.buffers.names())),
        BufferId::HTTP_COOKIE_REQ => header(req, b"cookie"),
        BufferId::HTTP_ACCEPT => header(req, b"accept"),
        BufferId::HTTP_ACCEPT_ENC => header(req, b"accept-encoding"),
        BufferId::HTTP_ACCEPT_LANG => header(req, b"accept-language"),
        BufferId::HTTP_REFERER => header(req, b"referer"),
        BufferId::HTTP_CONTENT_TYPE_REQ => header(req, b"content-type"),
        BufferId::HTTP_CONTENT_LEN_REQ => header(req, b"content-length"),
        BufferId::HTTP_CONNECTION_REQ => header(req, b"connection"),
        BufferId::HTTP_START_REQ => headers_ready(req, || ready(req.buffers.start())),
        BufferId::HTTP_REQUEST_BODY => body(tx, Dir::ToServer),
        BufferId::HTTP_FILE_NAME_REQ => file_name(tx, Dir::ToServer),
        BufferId::HTTP_FILE_NAME_RESP => file_name(tx, Dir::ToClient),
        BufferId::HTTP_REQUEST_HEADER => headers_ready(req, || {
            req.buffers.item(index).map_or(Buf::Absent, Buf::Ready)
        }),
        BufferId::HTTP_STAT_CODE => after_line(resp, &tx.status_raw),
        BufferId::HTTP_STAT_MSG => after_line(resp, &tx.status_msg),
        BufferId::HTTP_RESPONSE_LINE => after_line(resp, &resp.line),
        BufferId::HTTP_PROTOCOL_RESP => after_line(resp, &resp.protocol),
        BufferId::HTTP_HEADER_RESP => headers_ready(resp, || ready(resp.buffers.normalized())),
        BufferId::HTTP_HEADER_RAW_RESP => headers_ready(resp, || ready(&resp.headers_raw)),
        BufferId::HTTP_HEADER_NAMES_RESP => headers_ready(resp, || ready(resp.buffers.names())),
        BufferId::HTTP_COOKIE_RESP => header(resp, b"set-cookie"),
        BufferId::HTTP_CONTENT_TYPE_RESP => header(resp, b"content-type"),
        BufferId::HTTP_CONTENT_LEN_RESP => header(resp, b"content-length"),
        BufferId::HTTP_CONNECTION_RESP => header(resp, b"connection"),
        BufferId::HTTP_START_RESP => headers_ready(resp, || ready(resp.buffers.start())),
        BufferId::HTTP_SERVER => header(resp, b"server"),
        BufferId::HTTP_LOCATION => header(resp, b"location"),
        BufferId::HTTP_RESPONSE_BODY => body(tx, Dir::ToClient),
        BufferId::HTTP_RESPONSE_HEADER => headers_ready(resp, || {
            resp.buffers.item(index).map_or(Buf::Absent, Buf::Ready)
        }),
        _ => Buf::Absent,
    }
}
