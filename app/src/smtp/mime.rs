//! A streaming MIME parser for the message of an SMTP `DATA` (RFC 5322, RFC 2045-2046),
//! fed one line at a time (dot-unstuffed, line ending removed).
//!
//! It keeps what detection and EVE need: the top-level headers (`From`, `To`, `Cc`,
//! `Subject`, `Date`, `Message-Id`, `X-Mailer`, every `Received`), the URLs of the
//! text parts, and the attachments (parts with a file name), decoded (base64,
//! quoted-printable) into the file layer and into a bounded copy for `file.data`.
//! Multipart bodies nest up to [`MAX_DEPTH`] boundaries; a `message/rfc822` part is
//! parsed as the message it holds (its own headers, then its body), as Suricata does.
//! Every count and length is bounded by a `MAX_*` constant.

use crate::files::{FileConfig, FileState, Files, MAX_FILE_NAME};

/// Most nested multipart boundaries (and nested `message/rfc822` parts) followed;
/// deeper parts are taken as the body of the deepest one.
pub const MAX_DEPTH: usize = 16;
/// Longest header (name, value and its folded lines) kept; the rest is dropped.
pub const MAX_HEADER_LEN: usize = 8192;
/// Longest header name before `mime_long_header_name`.
pub const MAX_HEADER_NAME: usize = 76;
/// Longest boundary followed (RFC 2046 says 70): a longer one is
/// `mime_long_boundary`, and the part is not split.
pub const MAX_BOUNDARY: usize = 254;
/// Most `Received` headers kept.
pub const MAX_RECEIVED: usize = 64;
/// Most addresses of `To` or `Cc` kept.
pub const MAX_ADDRESSES: usize = 256;
/// Most URLs kept per message.
pub const MAX_URLS: usize = 64;
/// Longest URL kept.
pub const MAX_URL_LEN: usize = 2048;
/// Most attachment names kept (and attachments parsed).
pub const MAX_ATTACHMENTS: usize = crate::files::MAX_FILES_PER_TX;
/// Bytes of each attachment kept for `file.data`.
pub const MAX_INSPECT: usize = 256 << 10;
/// Longest encoded line before `mime_long_enc_line` (RFC 2045: 76).
pub const MAX_ENC_LINE: usize = 998;

/// The MIME anomalies (`smtp.mime_*`).
pub const EV_INVALID_BASE64: &str = "smtp.mime_invalid_base64";
pub const EV_INVALID_QP: &str = "smtp.mime_invalid_qp";
pub const EV_LONG_HEADER_NAME: &str = "smtp.mime_long_header_name";
pub const EV_LONG_HEADER_VALUE: &str = "smtp.mime_long_header_value";
pub const EV_LONG_BOUNDARY: &str = "smtp.mime_long_boundary";
pub const EV_LONG_FILENAME: &str = "smtp.mime_long_filename";
pub const EV_LONG_ENC_LINE: &str = "smtp.mime_long_enc_line";
pub const EV_MALFORMED: &str = "smtp.mime_malformed_msg";

/// A part's transfer encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Enc {
    #[default]
    Plain,
    Base64,
    Qp,
}

/// An attachment: its name and the start of its decoded bytes.
#[derive(Debug, Default)]
pub struct Attachment {
    pub name: Vec<u8>,
    /// The first [`MAX_INSPECT`] decoded bytes.
    pub data: Vec<u8>,
    pub size: u64,
    pub closed: bool,
}

/// What the message says, as far as it has been parsed.
#[derive(Debug, Default)]
pub struct Email {
    pub from: Option<Vec<u8>>,
    /// The raw `To` and `Cc` values (`email.to`, `email.cc`) and their addresses
    /// (EVE).
    pub to_raw: Option<Vec<u8>>,
    pub to: Vec<Vec<u8>>,
    pub cc_raw: Option<Vec<u8>>,
    pub cc: Vec<Vec<u8>>,
    pub subject: Option<Vec<u8>>,
    pub date: Option<Vec<u8>>,
    pub message_id: Option<Vec<u8>>,
    pub x_mailer: Option<Vec<u8>>,
    pub received: Vec<Vec<u8>>,
    pub urls: Vec<Vec<u8>>,
    /// Every named part's name, `message/rfc822` ones included (EVE `attachment`).
    pub attachment_names: Vec<Vec<u8>>,
    /// The parts with a name whose bytes were parsed.
    pub attachments: Vec<Attachment>,
    /// The top-level headers are complete.
    pub headers_done: bool,
    /// The message ended (its `.`, or the transaction ended).
    pub done: bool,
    /// It ended with its `.` (EVE `status` `PARSE_DONE`).
    pub complete: bool,
}

/// The headers of the entity being parsed, as far as they matter for its body.
#[derive(Debug, Default)]
struct Entity {
    /// `type/subtype`, lower case.
    ctype: Vec<u8>,
    boundary: Option<Vec<u8>>,
    enc: Enc,
    name: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Headers,
    Body,
}

/// The body being decoded (a leaf part).
#[derive(Debug, Default)]
struct Leaf {
    enc: Enc,
    /// Index in [`Email::attachments`] of its attachment.
    attachment: Option<usize>,
    /// A text part (URLs are looked for).
    text: bool,
    /// A line ending is owed before the next line (it belongs to the boundary if the
    /// next line is one).
    pending_crlf: bool,
    /// Base64 characters carried to the next line.
    b64: [u8; 4],
    b64_len: usize,
}

/// The parser of one message.
#[derive(Debug)]
pub struct Mime {
    pub email: Email,
    /// The attachments in the file layer (EVE `fileinfo`, file keywords).
    pub files: Files,
    phase: Phase,
    /// Parsing the top-level headers.
    top: bool,
    header: Vec<u8>,
    entity: Entity,
    boundaries: Vec<Vec<u8>>,
    /// `message/rfc822` parts entered.
    nested: usize,
    leaf: Option<Leaf>,
    scratch: Vec<u8>,
    /// An anomaly was raised once already (each is raised once per message).
    raised: u16,
}

/// Lower-case copy of a header name.
fn lower(b: &[u8]) -> Vec<u8> {
    b.to_ascii_lowercase()
}

fn push_bounded(v: &mut Vec<Vec<u8>>, max: usize, item: &[u8]) {
    if v.len() < max {
        v.push(item.to_vec());
    }
}

/// The value of parameter `key` (lower case) of a header value (`type; key="v"`).
pub fn param<'a>(value: &'a [u8], key: &[u8]) -> Option<&'a [u8]> {
    for p in value.split(|&b| b == b';').skip(1) {
        let Some(eq) = p.iter().position(|&b| b == b'=') else {
            continue;
        };
        if p[..eq].trim_ascii().eq_ignore_ascii_case(key) {
            let v = p[eq + 1..].trim_ascii();
            let v = v
                .strip_prefix(b"\"")
                .map_or(v, |v| v.strip_suffix(b"\"").unwrap_or(v));
            return Some(v);
        }
    }
    None
}

/// The addresses of a `To` or `Cc` value: its comma-separated items, trimmed.
pub fn addresses(value: &[u8], out: &mut Vec<Vec<u8>>) {
    let mut quoted = false;
    let mut start = 0;
    for i in 0..=value.len() {
        let end = i == value.len();
        if !end && value[i] == b'"' {
            quoted = !quoted;
        }
        if end || (value[i] == b',' && !quoted) {
            let item = value[start..i].trim_ascii();
            if !item.is_empty() {
                push_bounded(out, MAX_ADDRESSES, item);
            }
            start = i + 1;
        }
    }
}

fn b64_value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Decodes base64 `line` into `out`, carrying an incomplete quantum in `carry`; false
/// when the line had characters that are not base64 (skipped).
pub fn base64_line(line: &[u8], carry: &mut [u8; 4], n: &mut usize, out: &mut Vec<u8>) -> bool {
    let mut ok = true;
    for &c in line {
        if c == b'=' {
            // Padding ends the quantum.
            match *n {
                2 => out.push(carry[0] << 2 | carry[1] >> 4),
                3 => {
                    out.push(carry[0] << 2 | carry[1] >> 4);
                    out.push(carry[1] << 4 | carry[2] >> 2);
                }
                _ => {}
            }
            *n = 0;
            continue;
        }
        let Some(v) = b64_value(c) else {
            if !c.is_ascii_whitespace() {
                ok = false;
            }
            continue;
        };
        carry[*n] = v;
        *n += 1;
        if *n == 4 {
            out.push(carry[0] << 2 | carry[1] >> 4);
            out.push(carry[1] << 4 | carry[2] >> 2);
            out.push(carry[2] << 6 | carry[3]);
            *n = 0;
        }
    }
    ok
}

fn hex_value(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// Decodes quoted-printable `line` into `out`; returns (soft line break, valid).
pub fn qp_line(line: &[u8], out: &mut Vec<u8>) -> (bool, bool) {
    let line = line.trim_ascii_end();
    let mut ok = true;
    let mut i = 0;
    while i < line.len() {
        let c = line[i];
        if c != b'=' {
            out.push(c);
            i += 1;
            continue;
        }
        if i + 1 == line.len() {
            return (true, ok);
        }
        match (
            line.get(i + 1).copied().and_then(hex_value),
            line.get(i + 2).copied().and_then(hex_value),
        ) {
            (Some(h), Some(l)) => {
                out.push(h << 4 | l);
                i += 3;
            }
            _ => {
                ok = false;
                out.push(c);
                i += 1;
            }
        }
    }
    (false, ok)
}

/// The URLs of `text` (`http://` ones, Suricata's default `extract-urls-schemes`),
/// logged without their scheme (its default `log-url-scheme: no`).
pub fn find_urls(text: &[u8], urls: &mut Vec<Vec<u8>>) {
    const SCHEME: &[u8] = b"http://";
    let mut i = 0;
    while urls.len() < MAX_URLS && i + SCHEME.len() <= text.len() {
        if !text[i..i + SCHEME.len()].eq_ignore_ascii_case(SCHEME) {
            i += 1;
            continue;
        }
        let start = i + SCHEME.len();
        let len = text[start..]
            .iter()
            .position(|&c| {
                c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'<' | b'>' | b')')
            })
            .unwrap_or(text.len() - start);
        let url = &text[start..start + len.min(MAX_URL_LEN)];
        if !url.is_empty() && !urls.iter().any(|u| u[..] == *url) {
            urls.push(url.to_ascii_lowercase());
        }
        i = start + len;
    }
}

impl Default for Mime {
    fn default() -> Self {
        Mime::new()
    }
}

impl Mime {
    pub fn new() -> Mime {
        Mime {
            email: Email::default(),
            files: Files::default(),
            phase: Phase::Headers,
            top: true,
            header: Vec::new(),
            entity: Entity::default(),
            boundaries: Vec::new(),
            nested: 0,
            leaf: None,
            scratch: Vec::new(),
            raised: 0,
        }
    }

    fn raise(&mut self, name: &'static str, out: &mut Vec<&'static str>) {
        let bit = match name {
            EV_INVALID_BASE64 => 0,
            EV_INVALID_QP => 1,
            EV_LONG_HEADER_NAME => 2,
            EV_LONG_HEADER_VALUE => 3,
            EV_LONG_BOUNDARY => 4,
            EV_LONG_FILENAME => 5,
            EV_LONG_ENC_LINE => 6,
            _ => 7,
        };
        if self.raised & (1 << bit) == 0 {
            self.raised |= 1 << bit;
            out.push(name);
        }
    }

    /// The next line of the message.
    pub fn line(&mut self, line: &[u8], cfg: &FileConfig, out: &mut Vec<&'static str>) {
        if self.email.done {
            return;
        }
        if (self.phase == Phase::Body || !self.top)
            && let Some(b) = self.boundary_in(line)
        {
            self.boundary(b, line, cfg);
            return;
        }
        match self.phase {
            Phase::Headers => self.header_line(line, cfg, out),
            Phase::Body => self.body_line(line, cfg, out),
        }
    }

    /// Which enclosing boundary `line` is (innermost first).
    fn boundary_in(&self, line: &[u8]) -> Option<usize> {
        let rest = line.strip_prefix(b"--")?;
        self.boundaries.iter().rposition(|b| rest.starts_with(b))
    }

    fn boundary(&mut self, index: usize, line: &[u8], cfg: &FileConfig) {
        self.end_leaf(cfg);
        let closing = line[2 + self.boundaries[index].len()..].starts_with(b"--");
        self.header.clear();
        self.entity = Entity::default();
        if closing {
            self.boundaries.truncate(index);
            self.phase = Phase::Body;
        } else {
            self.boundaries.truncate(index + 1);
            self.phase = Phase::Headers;
        }
    }

    fn header_line(&mut self, line: &[u8], cfg: &FileConfig, out: &mut Vec<&'static str>) {
        if line.is_empty() {
            self.finish_header(out);
            self.end_headers(cfg, out);
            return;
        }
        if matches!(line[0], b' ' | b'\t') && !self.header.is_empty() {
            let room = MAX_HEADER_LEN.saturating_sub(self.header.len());
            if room < line.len() {
                self.raise(EV_LONG_HEADER_VALUE, out);
            }
            self.header.extend_from_slice(&line[..line.len().min(room)]);
            return;
        }
        self.finish_header(out);
        let n = line.len().min(MAX_HEADER_LEN);
        if n < line.len() {
            self.raise(EV_LONG_HEADER_VALUE, out);
        }
        self.header.extend_from_slice(&line[..n]);
    }

    /// Takes the header gathered so far.
    fn finish_header(&mut self, out: &mut Vec<&'static str>) {
        if self.header.is_empty() {
            return;
        }
        let h = std::mem::take(&mut self.header);
        match h.iter().position(|&b| b == b':') {
            Some(colon) => {
                let name = h[..colon].trim_ascii();
                if name.len() > MAX_HEADER_NAME {
                    self.raise(EV_LONG_HEADER_NAME, out);
                }
                let value = h[colon + 1..].trim_ascii();
                self.header_value(&lower(name), value, out);
            }
            None => self.raise(EV_MALFORMED, out),
        }
        // Keep the buffer for the next header.
        self.header = h;
        self.header.clear();
    }

    fn header_value(&mut self, name: &[u8], value: &[u8], out: &mut Vec<&'static str>) {
        match name {
            b"content-type" => {
                let t = value.split(|&b| b == b';').next().unwrap_or_default();
                self.entity.ctype = lower(t.trim_ascii());
                if let Some(b) = param(value, b"boundary") {
                    if b.is_empty() {
                    } else if b.len() > MAX_BOUNDARY {
                        self.raise(EV_LONG_BOUNDARY, out);
                    } else {
                        self.entity.boundary = Some(b.to_vec());
                    }
                }
                if self.entity.name.is_none()
                    && let Some(n) = param(value, b"name")
                {
                    self.set_name(n, out);
                }
            }
            b"content-transfer-encoding" => {
                let v = value.trim_ascii();
                self.entity.enc = if v.eq_ignore_ascii_case(b"base64") {
                    Enc::Base64
                } else if v.eq_ignore_ascii_case(b"quoted-printable") {
                    Enc::Qp
                } else {
                    Enc::Plain
                };
            }
            b"content-disposition" => {
                if let Some(n) = param(value, b"filename") {
                    self.set_name(n, out);
                }
            }
            _ => {}
        }
        if !self.top {
            return;
        }
        let e = &mut self.email;
        let set = |f: &mut Option<Vec<u8>>| {
            if f.is_none() {
                *f = Some(value.to_vec());
            }
        };
        match name {
            b"from" => set(&mut e.from),
            b"to" if e.to_raw.is_none() => {
                e.to_raw = Some(value.to_vec());
                addresses(value, &mut e.to);
            }
            b"cc" if e.cc_raw.is_none() => {
                e.cc_raw = Some(value.to_vec());
                addresses(value, &mut e.cc);
            }
            b"subject" => set(&mut e.subject),
            b"date" => set(&mut e.date),
            b"message-id" => set(&mut e.message_id),
            b"x-mailer" => set(&mut e.x_mailer),
            b"received" => push_bounded(&mut e.received, MAX_RECEIVED, value),
            _ => {}
        }
    }

    fn set_name(&mut self, n: &[u8], out: &mut Vec<&'static str>) {
        if n.len() > MAX_FILE_NAME {
            self.raise(EV_LONG_FILENAME, out);
        }
        self.entity.name = Some(n[..n.len().min(MAX_FILE_NAME)].to_vec());
    }

    /// The entity's headers ended: what its body is.
    fn end_headers(&mut self, cfg: &FileConfig, out: &mut Vec<&'static str>) {
        if self.top {
            self.top = false;
            self.email.headers_done = true;
        }
        let e = std::mem::take(&mut self.entity);
        self.phase = Phase::Body;
        if e.ctype.starts_with(b"multipart/")
            && let Some(b) = e.boundary
        {
            if self.boundaries.len() < MAX_DEPTH {
                self.boundaries.push(b);
                // The preamble, up to the first boundary, is no part.
                return;
            }
            self.raise(EV_MALFORMED, out);
        }
        if e.ctype == b"message/rfc822" && self.nested < MAX_DEPTH {
            if let Some(n) = e.name
                && self.email.attachment_names.len() < MAX_ATTACHMENTS
            {
                self.email.attachment_names.push(n);
            }
            self.nested += 1;
            self.phase = Phase::Headers;
            return;
        }
        let mut leaf = Leaf {
            enc: e.enc,
            text: e.ctype.is_empty() || e.ctype.starts_with(b"text/"),
            ..Leaf::default()
        };
        if let Some(n) = e.name
            && self.email.attachments.len() < MAX_ATTACHMENTS
        {
            if self.email.attachment_names.len() < MAX_ATTACHMENTS {
                self.email.attachment_names.push(n.clone());
            }
            if cfg.track {
                self.files.open(&n, cfg);
            }
            self.email.attachments.push(Attachment {
                name: n,
                ..Attachment::default()
            });
            leaf.attachment = Some(self.email.attachments.len() - 1);
            leaf.text = false;
        }
        self.leaf = Some(leaf);
    }

    fn body_line(&mut self, line: &[u8], cfg: &FileConfig, out: &mut Vec<&'static str>) {
        let Some(mut leaf) = self.leaf.take() else {
            // A preamble or an epilogue.
            return;
        };
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        if leaf.enc != Enc::Plain && line.len() > MAX_ENC_LINE {
            self.raise(EV_LONG_ENC_LINE, out);
        }
        match leaf.enc {
            Enc::Plain => {
                if leaf.pending_crlf {
                    scratch.extend_from_slice(b"\r\n");
                }
                scratch.extend_from_slice(line);
                leaf.pending_crlf = true;
            }
            Enc::Base64 => {
                if !base64_line(line, &mut leaf.b64, &mut leaf.b64_len, &mut scratch) {
                    self.raise(EV_INVALID_BASE64, out);
                }
            }
            Enc::Qp => {
                if leaf.pending_crlf {
                    scratch.extend_from_slice(b"\r\n");
                }
                let (soft, ok) = qp_line(line, &mut scratch);
                if !ok {
                    self.raise(EV_INVALID_QP, out);
                }
                leaf.pending_crlf = !soft;
            }
        }
        self.emit(&leaf, &scratch, cfg);
        self.scratch = scratch;
        self.leaf = Some(leaf);
    }

    /// Decoded bytes of the leaf to its attachment (or to the URL finder).
    fn emit(&mut self, leaf: &Leaf, data: &[u8], _cfg: &FileConfig) {
        if data.is_empty() {
            return;
        }
        if let Some(i) = leaf.attachment {
            if let Some(a) = self.email.attachments.get_mut(i) {
                let room = MAX_INSPECT.saturating_sub(a.data.len());
                a.data.extend_from_slice(&data[..data.len().min(room)]);
                a.size += data.len() as u64;
            }
            if let Some(f) = self.files.current() {
                f.append(data);
            }
        } else if leaf.text {
            find_urls(data, &mut self.email.urls);
        }
    }

    fn end_leaf(&mut self, _cfg: &FileConfig) {
        if let Some(leaf) = self.leaf.take()
            && let Some(i) = leaf.attachment
        {
            if let Some(a) = self.email.attachments.get_mut(i) {
                a.closed = true;
            }
            self.files.end_current(FileState::Closed);
        }
    }

    /// The message ended: with its `.` (`complete`) or cut short.
    pub fn end(&mut self, complete: bool, cfg: &FileConfig) {
        if self.email.done {
            return;
        }
        if self.phase == Phase::Headers {
            let mut ignored = Vec::new();
            self.finish_header(&mut ignored);
            if self.top {
                self.top = false;
            }
        }
        self.email.headers_done = true;
        if complete {
            self.end_leaf(cfg);
        } else {
            if let Some(leaf) = self.leaf.take()
                && let Some(i) = leaf.attachment
                && let Some(a) = self.email.attachments.get_mut(i)
            {
                a.closed = true;
            }
            self.files.end_current(FileState::Truncated);
        }
        self.email.done = true;
        self.email.complete = complete;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Mime {
        let mut m = Mime::new();
        let cfg = FileConfig {
            track: true,
            ..FileConfig::default()
        };
        let mut ev = Vec::new();
        for l in text.strip_suffix("\r\n").unwrap_or(text).split("\r\n") {
            m.line(l.as_bytes(), &cfg, &mut ev);
        }
        m.end(true, &cfg);
        m
    }

    #[test]
    fn headers_and_folding() {
        let m = parse(
            "From: a@b.c\r\nTo: x <x@y.z>, \"Doe, J\" <j@d.e>\r\nSubject: hello\r\n world\r\nReceived: from a\r\n by b\r\nReceived: from c\r\n\r\nbody http://Example.com/x y\r\n",
        );
        let e = &m.email;
        assert_eq!(e.from.as_deref(), Some(&b"a@b.c"[..]));
        assert_eq!(
            e.to,
            vec![b"x <x@y.z>".to_vec(), b"\"Doe, J\" <j@d.e>".to_vec()]
        );
        assert_eq!(e.subject.as_deref(), Some(&b"hello world"[..]));
        assert_eq!(
            e.received,
            vec![b"from a by b".to_vec(), b"from c".to_vec()]
        );
        assert_eq!(e.urls, vec![b"example.com/x".to_vec()]);
        assert!(e.headers_done && e.complete);
    }

    #[test]
    fn multipart_with_base64_and_qp() {
        let m = parse(concat!(
            "Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\npreamble\r\n",
            "--XX\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
            "caf=C3=A9 soft=\r\nbreak\r\n",
            "--XX\r\nContent-Type: application/octet-stream; name=\"a.bin\"\r\n",
            "Content-Transfer-Encoding: base64\r\n\r\nSGVsbG8g\r\nd29ybGQ=\r\n",
            "--XX--\r\nepilogue\r\n"
        ));
        let a = &m.email.attachments;
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].name, b"a.bin");
        assert_eq!(a[0].data, b"Hello world");
        assert!(a[0].closed);
        assert_eq!(m.files.as_slice().len(), 1);
        assert_eq!(m.files.as_slice()[0].size(), 11);
        let mut out = Vec::new();
        assert_eq!(qp_line(b"caf=C3=A9 soft=", &mut out), (true, true));
        assert_eq!(out, "café soft".as_bytes());
    }

    #[test]
    fn rfc822_part_is_parsed_as_a_message() {
        let m = parse(concat!(
            "From: a@b\r\nContent-Type: message/rfc822\r\nContent-Transfer-Encoding: base64\r\n",
            "Content-Disposition: attachment; filename=\"innocent.txt\"\r\n\r\n",
            "From: a@b\r\nContent-Type: application/octet-stream\r\n",
            "Content-Disposition: attachment; filename=\"malware.exe\"\r\n\r\nPAYLOAD\r\n"
        ));
        assert_eq!(
            m.email.attachment_names,
            vec![b"innocent.txt".to_vec(), b"malware.exe".to_vec()]
        );
        assert_eq!(m.email.attachments.len(), 1);
        // The line ending before the end belongs to the end.
        assert_eq!(m.email.attachments[0].data, b"PAYLOAD");
    }

    #[test]
    fn bounds_hold() {
        let mut text = String::new();
        for i in 0..100 {
            text.push_str(&format!(
                "Content-Type: multipart/mixed; boundary=b{i}\r\n\r\n--b{i}\r\n"
            ));
        }
        let m = parse(&text);
        assert!(m.boundaries.len() <= MAX_DEPTH);
        let long = format!("X-Long: {}\r\n\r\n", "a".repeat(MAX_HEADER_LEN * 2));
        let _ = parse(&long);
        let mut carry = [0; 4];
        let mut n = 0;
        let mut out = Vec::new();
        assert!(!base64_line(b"QUJD!", &mut carry, &mut n, &mut out));
        assert_eq!(out, b"ABC");
    }
}
