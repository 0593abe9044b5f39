//! A streaming MIME parser for the message of an SMTP `DATA` (RFC 5322, RFC 2045-2046),
//! fed one line at a time with its line ending, as Suricata 8's SMTP MIME parser reads
//! a message, so that what it extracts is what Suricata extracts.
//!
//! The model, Suricata's:
//! - An entity is headers, an empty line, a body. The headers of the first entity are
//!   the message's (`From`, `To`, `Subject`, ... for EVE and the `email.*` buffers).
//!   A folded line continues the previous header without its first blank (RFC 5322
//!   unfolding would keep it): `a,\r\n\tb` is `a,b`.
//! - `Content-Type`, `Content-Disposition` and `Content-Transfer-Encoding` of the
//!   entity decide its body: a parameter (`boundary`, `name`, `filename`, and RFC 2231
//!   sections `filename*0`, `filename*1`, ...) is found with its exact lower-case name;
//!   the first `name` or `filename`, in header order, names the attachment; only
//!   `text/plain` and `text/html`, as written, are text.
//! - Only the innermost boundary is looked for, and only in a body; a boundary line
//!   starts a new entity (`--b--` also leaves the multipart), whatever follows it is
//!   headers again (an epilogue is an entity without headers). A `message/*` entity
//!   goes on with the headers of the message it holds.
//! - URLs (`http://`, Suricata's default `extract-urls-schemes`, logged without it) are
//!   looked for in the raw lines of text parts (quoted-printable ones undecoded), in
//!   the decoded lines of base64 text parts and in every attachment's decoded lines,
//!   and run to a blank, quote, `<`, `>` or `]`: a line's ending is part of a URL
//!   that ends it.
//! - Base64 skips characters outside its alphabet; an `=` that starts a quantum is an
//!   error, and the part decodes nothing more. Quoted-printable is decoded only in
//!   attachments.
//! - The anomalies are raised for every line that has one.
//!
//! Every count and length is bounded by a `MAX_*` constant.

use std::sync::{Arc, LazyLock};

use md5::{Digest, Md5};

use super::config::{MimeConfig, SmtpConfig};
use crate::files::{FileConfig, FileState, Files};

/// The name of the file of a whole message (`raw-extraction`), Suricata's.
pub const RAW_FILE_NAME: &[u8] = b"rawmsg";

/// Longest header value kept (a header and its folded lines); the rest is dropped
/// (`mime_long_header_value`).
pub const MAX_HEADER_LEN: usize = 8192;
/// Most headers kept per message (the message's and the current entity's); more are
/// dropped.
pub const MAX_HEADERS: usize = 256;
/// Longest header name before `mime_long_header_name` (Suricata: 75, with its `:` 76).
pub const MAX_HEADER_NAME: usize = 75;
/// Longest header value (of its first line) before `mime_long_header_value`
/// (Suricata's default).
pub const MAX_HEADER_VALUE: usize = 2000;
/// Longest boundary before `mime_long_boundary` (it is still followed).
pub const MAX_BOUNDARY: usize = 254;
/// Most nested boundaries followed; a deeper multipart is taken as a leaf.
pub const MAX_DEPTH: usize = 64;
/// Longest parameter value (a file name) kept before `mime_long_filename`.
pub const MAX_TOKEN: usize = 255;
/// Most RFC 2231 sections of a parameter joined.
pub const MAX_SECTIONS: usize = 64;
/// Most `Received` headers kept for `email.received`.
pub const MAX_RECEIVED: usize = 64;
/// Most addresses of `To` or `Cc` kept.
pub const MAX_ADDRESSES: usize = 256;
/// Most URLs kept per message.
pub const MAX_URLS: usize = 256;
/// Longest URL kept.
pub const MAX_URL_LEN: usize = 2048;
/// Decoded text kept waiting for its line end before URLs are looked for in it
/// anyway (Suricata's `SMTP_MIME_MAX_DECODED_LINE_LENGTH`).
pub const MAX_DECODED_LINE: usize = 8192;
/// Most attachment names kept (and attachments parsed).
pub const MAX_ATTACHMENTS: usize = crate::files::MAX_FILES_PER_TX;
/// Bytes of each attachment kept for `file.data`.
pub const MAX_INSPECT: usize = 256 << 10;
/// Longest line before `mime_long_line` (RFC 5322: 998).
pub const MAX_LINE: usize = 998;
/// Longest encoded line before `mime_long_enc_line` (RFC 2045: 76).
pub const MAX_ENC_LINE: usize = 76;
/// Most anomalies raised per message (Suricata keeps 255 per transaction).
pub const MAX_EVENTS: usize = 255;

/// The MIME anomalies (`smtp.mime_*`).
pub const EV_INVALID_BASE64: &str = "smtp.mime_invalid_base64";
pub const EV_INVALID_QP: &str = "smtp.mime_invalid_qp";
pub const EV_LONG_LINE: &str = "smtp.mime_long_line";
pub const EV_LONG_HEADER_NAME: &str = "smtp.mime_long_header_name";
pub const EV_LONG_HEADER_VALUE: &str = "smtp.mime_long_header_value";
pub const EV_LONG_BOUNDARY: &str = "smtp.mime_long_boundary";
pub const EV_LONG_FILENAME: &str = "smtp.mime_long_filename";
pub const EV_LONG_ENC_LINE: &str = "smtp.mime_long_enc_line";

/// The anomalies of a line, in the order Suricata raises them.
const LINE_EVENTS: [&str; 8] = [
    EV_INVALID_BASE64,
    EV_INVALID_QP,
    EV_LONG_LINE,
    EV_LONG_ENC_LINE,
    EV_LONG_HEADER_NAME,
    EV_LONG_HEADER_VALUE,
    EV_LONG_BOUNDARY,
    EV_LONG_FILENAME,
];

/// The settings of a parser made without a config.
static DEFAULT_CONFIG: LazyLock<Arc<SmtpConfig>> = LazyLock::new(Arc::default);

/// A part's transfer encoding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Enc {
    #[default]
    Plain,
    Base64,
    Qp,
}

/// What a part's `Content-Type` makes of its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Kind {
    /// No `Content-Type` (RFC 2045: text).
    #[default]
    Message,
    PlainText,
    Html,
    Unknown,
}

impl Kind {
    fn is_text(self) -> bool {
        self != Kind::Unknown
    }
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
    /// In the order they were found (`email.url`; EVE logs them last first).
    pub urls: Vec<Vec<u8>>,
    /// Every part's name, `message/rfc822` ones included (EVE `attachment`).
    pub attachment_names: Vec<Vec<u8>>,
    /// The parts with a name whose bytes were parsed.
    pub attachments: Vec<Attachment>,
    /// The top-level headers are complete.
    pub headers_done: bool,
    /// The message ended (its `.`, or the transaction ended).
    pub done: bool,
    /// It ended with its `.` (EVE `status` `PARSE_DONE`).
    pub complete: bool,
    /// The MD5 of the body (`body-md5`), once the message ended with its `.`.
    pub body_md5: Option<[u8; 16]>,
}

/// Where the body's MD5 is (`body-md5`), as Suricata's `MimeSmtpMd5State`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Md5State {
    #[default]
    Off,
    /// Headers were seen: the first body line starts it.
    Inited,
    Started,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before an entity's first header.
    Start,
    Headers,
    Body,
}

/// A header: its name as written and its value (folded lines joined).
#[derive(Debug, Default)]
struct Header {
    name: Vec<u8>,
    value: Vec<u8>,
}

/// RFC 2045 base64 across lines: a quantum may span lines.
#[derive(Debug, Default, Clone, Copy)]
struct Base64 {
    quantum: [u8; 4],
    n: usize,
    /// An `=` started a quantum: nothing decodes any more.
    stuck: bool,
}

/// The parser of one message.
#[derive(Debug)]
pub struct Mime {
    pub email: Email,
    /// The attachments in the file layer (EVE `fileinfo`, file keywords).
    pub files: Files,
    phase: Phase,
    /// The message's headers, then the current entity's.
    headers: Vec<Header>,
    /// How many of `headers` are the message's (0 until its headers end).
    main: usize,
    /// The current entity's file name (it is an attachment).
    filename: Vec<u8>,
    boundaries: Vec<Vec<u8>>,
    enc: Enc,
    kind: Kind,
    b64: Base64,
    /// The line ending owed to an attachment (written before its next line).
    eol: [u8; 2],
    eol_len: usize,
    /// Decoded text waiting for its line end before URLs are looked for.
    pending_text: Vec<u8>,
    /// Index in [`Email::attachments`] of the open attachment.
    attachment: Option<usize>,
    /// Anomalies raised so far (bounded by [`MAX_EVENTS`]).
    events: usize,
    /// The current line's anomalies, as bits of [`LINE_EVENTS`].
    warn: u8,
    scratch: Vec<u8>,
    /// The settings (`app-layer.protocols.smtp`).
    cfg: Arc<SmtpConfig>,
    /// `raw-extraction`: every line is the one file's, nothing is decoded.
    pub raw: bool,
    md5_state: Md5State,
    md5: Option<Box<Md5>>,
}

/// The value of parameter `key` of a header value (`type; key="v"; ...`), Suricata's
/// way: parameters after the first `;`, names compared as written, a quoted value up
/// to its unescaped closing quote, and RFC 2231 sections (`key*0`, `key*1`, ...)
/// joined into `sections`.
pub fn param<'a>(value: &'a [u8], key: &[u8], sections: &'a mut Vec<u8>) -> Option<&'a [u8]> {
    let params = params(value)?;
    let get = |k: &[u8]| params.iter().rev().find(|(n, _)| *n == k).map(|&(_, v)| v);
    if let Some(v) = get(key) {
        return Some(v);
    }
    let mut name = key.to_vec();
    name.extend_from_slice(b"*0");
    let mut v = get(&name)?;
    sections.clear();
    for i in 1..=MAX_SECTIONS {
        sections.extend_from_slice(v);
        name.truncate(key.len() + 1);
        name.extend_from_slice(i.to_string().as_bytes());
        match get(&name) {
            Some(next) => v = next,
            None => break,
        }
    }
    Some(sections)
}

fn mime_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn skip_spaces(s: &[u8]) -> &[u8] {
    let n = s.iter().take_while(|&&c| mime_space(c)).count();
    &s[n..]
}

/// The `name=value` parameters after a header value's first `;` (at most
/// [`MAX_HEADERS`]); `None` without a `;`.
fn params(value: &[u8]) -> Option<Vec<(&[u8], &[u8])>> {
    let semi = value.iter().position(|&c| c == b';')?;
    let mut rest = &value[semi + 1..];
    let mut out = Vec::new();
    while !rest.is_empty() && out.len() < MAX_HEADERS {
        let s = skip_spaces(rest);
        // The name runs to the next `=`, whatever it holds.
        let Some(eq) = s.iter().position(|&c| c == b'=') else {
            break;
        };
        let (name, after) = (&s[..eq], &s[eq + 1..]);
        let (v, r) = match quoted(after) {
            Some(x) => x,
            None => {
                let end = after.iter().position(|&c| c == b';').unwrap_or(after.len());
                let v = &after[..end];
                let keep = v.len() - v.iter().rev().take_while(|&&c| mime_space(c)).count();
                (&v[..keep], &after[end..])
            }
        };
        out.push((name, v));
        let r = skip_spaces(r);
        rest = r.strip_prefix(b";").unwrap_or(r);
    }
    Some(out)
}

/// A quoted value (`"..."`, a backslash escapes the next quote and is kept) and what
/// follows its closing quote; `None` when it does not start with a quote or never
/// ends.
fn quoted(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let s = s.strip_prefix(b"\"")?;
    let mut escaping = false;
    for (i, &c) in s.iter().enumerate() {
        if c == b'\\' {
            escaping = true;
        } else {
            if c == b'"' && !escaping {
                return Some((&s[..i], &s[i + 1..]));
            }
            escaping = false;
        }
    }
    None
}

/// The addresses of a `To` or `Cc` value as Suricata's EVE splits them: at commas
/// outside quotes, blanks before an item dropped (not after it), empty items left
/// out; a comma right after a separating comma (and its blanks) starts the next item.
pub fn addresses(value: &[u8], out: &mut Vec<Vec<u8>>) {
    #[derive(PartialEq)]
    enum S {
        Start,
        Field,
        Quoted,
    }
    let mut state = S::Start;
    let mut start = 0;
    for (i, &c) in value.iter().enumerate() {
        match state {
            S::Start => {
                if c == b' ' || c == b'\t' {
                    start += 1;
                } else if c == b'"' {
                    state = S::Quoted;
                } else {
                    state = S::Field;
                }
            }
            S::Field => {
                if c == b',' {
                    if i > start && out.len() < MAX_ADDRESSES {
                        out.push(value[start..i].to_vec());
                    }
                    start = i + 1;
                    state = S::Start;
                } else if c == b'"' {
                    state = S::Quoted;
                }
            }
            S::Quoted => {
                if c == b'"' {
                    state = S::Field;
                }
            }
        }
    }
    if value.len() > start && out.len() < MAX_ADDRESSES {
        out.push(value[start..].to_vec());
    }
}

/// Each byte's base64 value, [`B64_INVALID`] outside the alphabet (`=` included).
static B64: [u8; 256] = {
    let mut t = [B64_INVALID; 256];
    let mut i = 0;
    while i < 26 {
        t[b'A' as usize + i] = i as u8;
        t[b'a' as usize + i] = i as u8 + 26;
        i += 1;
    }
    let mut d = 0;
    while d < 10 {
        t[b'0' as usize + d] = d as u8 + 52;
        d += 1;
    }
    t[b'+' as usize] = 62;
    t[b'/' as usize] = 63;
    t
};
const B64_INVALID: u8 = 0xFF;

fn b64_value(c: u8) -> Option<u8> {
    let v = B64[usize::from(c)];
    (v != B64_INVALID).then_some(v)
}

/// The bytes Suricata sets aside for decoding `n` base64 characters.
fn b64_room(n: usize) -> usize {
    (n * 3 + n % 4) / 4
}

impl Base64 {
    /// Decodes `line` into `out`; `false` (and nothing in `out` from this line) when a
    /// quantum starts with `=`. Characters outside the alphabet are skipped; whole
    /// quanta of alphabet characters (most of a line) are decoded four at a time,
    /// the rest a character at a time.
    fn decode(&mut self, line: &[u8], out: &mut Vec<u8>) -> bool {
        if self.n == 4 {
            // A quantum that started with `=` is still held: stuck.
            return line.is_empty();
        }
        let start = out.len();
        let mut i = 0;
        loop {
            if self.n == 0 && !self.stuck {
                out.reserve((line.len() - i) / 4 * 3);
                while let Some(q) = line.get(i..i + 4) {
                    let (a, b, c, d) = (
                        B64[usize::from(q[0])],
                        B64[usize::from(q[1])],
                        B64[usize::from(q[2])],
                        B64[usize::from(q[3])],
                    );
                    // Values are below 64; the invalid one is 0xFF.
                    if (a | b | c | d) & 0xC0 != 0 {
                        break;
                    }
                    out.extend_from_slice(&[a << 2 | b >> 4, b << 4 | c >> 2, c << 6 | d]);
                    i += 4;
                }
            }
            let Some(&c) = line.get(i) else {
                break;
            };
            i += 1;
            if B64[usize::from(c)] != B64_INVALID || c == b'=' {
                self.quantum[self.n] = c;
                self.n += 1;
            }
            if self.n < 4 {
                continue;
            }
            if self.stuck || self.quantum[0] == b'=' || self.quantum[1] == b'=' {
                self.stuck = true;
                out.truncate(start);
                return false;
            }
            let v = |c: u8| b64_value(c).unwrap_or(0);
            let [a, b, c, d] = self.quantum;
            out.push(v(a) << 2 | v(b) >> 4);
            if c != b'=' {
                out.push(v(b) << 4 | v(c) >> 2);
                if d != b'=' {
                    out.push(v(c) << 6 | v(d));
                }
            }
            self.n = 0;
        }
        true
    }

    /// The characters of an unfinished quantum, padded (at a boundary).
    fn flush(&mut self, out: &mut Vec<u8>) {
        if self.n > 0 && !self.stuck {
            let pad = [b'='; 4];
            let n = 4 - self.n;
            self.decode(&pad[..n], out);
        }
    }
}

fn hex_upper(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

/// The URLs in `text` (one complete piece of text), appended to `urls`: for each
/// scheme in turn, every place it starts (without case), to a blank, quote, `<`, `>` or
/// `]`; kept with the scheme when `log-url-scheme`.
fn extract_urls(cfg: &MimeConfig, text: &[u8], urls: &mut Vec<Vec<u8>>) {
    for scheme in &cfg.schemes {
        let mut rest = text;
        while urls.len() < MAX_URLS {
            let Some(at) = rest
                .windows(scheme.len())
                .position(|w| w.eq_ignore_ascii_case(scheme))
            else {
                break;
            };
            let url = &rest[at..];
            let len = url
                .iter()
                .position(|&c| matches!(c, b' ' | b'"' | b'\'' | b'<' | b'>' | b']' | b'\t'))
                .unwrap_or(url.len());
            let kept = if cfg.log_url_scheme {
                &url[..len]
            } else {
                &url[scheme.len()..len]
            };
            urls.push(kept[..kept.len().min(MAX_URL_LEN)].to_vec());
            rest = &rest[at + len..];
        }
    }
}

impl Default for Mime {
    fn default() -> Self {
        Mime::new()
    }
}

impl Mime {
    /// A parser with the default settings.
    pub fn new() -> Mime {
        Mime::with_config(DEFAULT_CONFIG.clone())
    }

    /// A parser of a message with settings `cfg` (MIME decoding; see [`Mime::raw`]).
    pub fn with_config(cfg: Arc<SmtpConfig>) -> Mime {
        Mime {
            email: Email::default(),
            files: Files::default(),
            phase: Phase::Start,
            headers: Vec::new(),
            main: 0,
            filename: Vec::new(),
            boundaries: Vec::new(),
            enc: Enc::Plain,
            kind: Kind::Message,
            b64: Base64::default(),
            eol: [0; 2],
            eol_len: 0,
            pending_text: Vec::new(),
            attachment: None,
            events: 0,
            warn: 0,
            scratch: Vec::new(),
            cfg,
            raw: false,
            md5_state: Md5State::Off,
            md5: None,
        }
    }

    /// `raw-extraction`: the message is one file, [`RAW_FILE_NAME`], of every line as
    /// sent with its line end, tracked without MD5 or magic as Suricata's; no header
    /// is read, nothing decoded.
    pub fn raw(cfg: Arc<SmtpConfig>, files: &FileConfig) -> Mime {
        let mut m = Mime::with_config(cfg);
        m.raw = true;
        if files.track {
            let fc = FileConfig {
                md5: false,
                magic: false,
                ..*files
            };
            m.files.open(RAW_FILE_NAME, &fc);
        }
        m.email.attachments.push(Attachment {
            name: RAW_FILE_NAME.to_vec(),
            ..Attachment::default()
        });
        m.attachment = Some(0);
        m
    }

    /// The message's headers (name as written, value), once they ended.
    pub fn main_headers(&self) -> impl Iterator<Item = (&[u8], &[u8])> {
        self.headers[..self.main.min(self.headers.len())]
            .iter()
            .map(|h| (&h.name[..], &h.value[..]))
    }

    /// Whether an attachment of `size` bytes still arriving is inspected
    /// (`inspected-tracker`): from `content-inspect-min-size` bytes, or `content-limit`
    /// (0: no limit).
    pub fn inspectable(&self, size: u64) -> bool {
        size >= self.cfg.content_inspect_min_size
            || (self.cfg.content_limit != 0 && size >= self.cfg.content_limit)
    }

    /// Grows when a buffer becomes available: the headers end, an attachment opens,
    /// the open one becomes inspectable ([`Mime::inspectable`]).
    pub fn progress(&self) -> usize {
        let open = self
            .attachment
            .and_then(|i| self.email.attachments.get(i))
            .is_some_and(|a| self.inspectable(a.size));
        usize::from(self.email.headers_done) + 2 * self.email.attachments.len() + usize::from(open)
    }

    /// The settings.
    pub fn config(&self) -> &SmtpConfig {
        &self.cfg
    }

    fn md5_update(&mut self, line: &[u8], eol: &[u8]) {
        if let Some(h) = self.md5.as_mut() {
            h.update(line);
            h.update(eol);
        }
    }

    /// Notes anomaly `name` for the current line (raised once per line).
    fn raise(&mut self, name: &'static str, _out: &mut Vec<&'static str>) {
        if let Some(bit) = LINE_EVENTS.iter().position(|&e| e == name) {
            self.warn |= 1 << bit;
        }
    }

    /// Raises the current line's anomalies, in Suricata's order.
    fn flush_warnings(&mut self, out: &mut Vec<&'static str>) {
        for (bit, &name) in LINE_EVENTS.iter().enumerate() {
            if self.warn & (1 << bit) != 0 && self.events < MAX_EVENTS {
                self.events += 1;
                out.push(name);
            }
        }
        self.warn = 0;
    }

    /// The next line of the message, as sent (a leading dot is not removed, as
    /// Suricata does not), and its line ending (`\r\n`, `\n`, or empty for a line cut
    /// short).
    pub fn line(&mut self, line: &[u8], eol: &[u8], cfg: &FileConfig, out: &mut Vec<&'static str>) {
        if self.email.done {
            return;
        }
        let eol = &eol[..eol.len().min(2)];
        if self.raw {
            self.append(line);
            self.append(eol);
            return;
        }
        // `body-md5`, as Suricata's: from the first line of the (first) body on, every
        // line with its ending, whatever part it is of.
        if self.md5_state == Md5State::Started {
            self.md5_update(line, eol);
        }
        match self.phase {
            Phase::Start => {
                if self.cfg.mime.body_md5 && self.md5_state != Md5State::Started {
                    self.md5 = Some(Box::default());
                    self.md5_state = Md5State::Inited;
                }
                self.header_line(line, cfg, out)
            }
            Phase::Headers => self.header_line(line, cfg, out),
            Phase::Body => {
                if self.md5_state == Md5State::Inited {
                    self.md5_state = Md5State::Started;
                    self.md5_update(line, eol);
                }
                self.body_line(line, eol, cfg, out)
            }
        }
        if line.len() > MAX_LINE {
            self.raise(EV_LONG_LINE, out);
        }
        self.flush_warnings(out);
    }

    fn header_line(&mut self, line: &[u8], cfg: &FileConfig, out: &mut Vec<&'static str>) {
        if line.is_empty() {
            self.end_headers(cfg, out);
            return;
        }
        if self.phase == Phase::Headers && matches!(line[0], b' ' | b'\t') {
            if let Some(h) = self.headers.last_mut() {
                let more = &line[1..];
                let room = MAX_HEADER_LEN.saturating_sub(h.value.len());
                h.value.extend_from_slice(&more[..more.len().min(room)]);
                if room < more.len() {
                    self.raise(EV_LONG_HEADER_VALUE, out);
                }
            }
            return;
        }
        // `name: value`; a line without a colon is no header and is skipped.
        let Some(colon) = line.iter().position(|&c| c == b':') else {
            return;
        };
        self.phase = Phase::Headers;
        let name = &line[..colon];
        let value = skip_spaces(&line[colon + 1..]);
        if name.len() > MAX_HEADER_NAME {
            self.raise(EV_LONG_HEADER_NAME, out);
        }
        if value.len() > MAX_HEADER_VALUE {
            self.raise(EV_LONG_HEADER_VALUE, out);
        }
        if self.headers.len() < MAX_HEADERS {
            self.headers.push(Header {
                name: name[..name.len().min(MAX_HEADER_LEN)].to_vec(),
                value: value[..value.len().min(MAX_HEADER_LEN)].to_vec(),
            });
        }
    }

    /// The entity's headers decide its body; returns whether it holds a message.
    fn entity_headers(&mut self, out: &mut Vec<&'static str>) -> bool {
        let mut encap = false;
        let mut sections = Vec::new();
        let mut names: Vec<Vec<u8>> = Vec::new();
        let mut long_name = false;
        let mut long_boundary = false;
        let start = self.main.min(self.headers.len());
        for h in &self.headers[start..] {
            let name = h.name.to_ascii_lowercase();
            let token = match &name[..] {
                b"content-disposition" => Some(&b"filename"[..]),
                b"content-type" => Some(&b"name"[..]),
                _ => None,
            };
            if let Some(token) = token
                && self.filename.is_empty()
                && let Some(v) = param(&h.value, token, &mut sections)
            {
                long_name |= v.len() > MAX_TOKEN;
                let v = &v[..v.len().min(MAX_TOKEN)];
                self.filename = v.to_vec();
                names.push(v.to_vec());
            }
            match &name[..] {
                b"content-transfer-encoding" => {
                    if h.value.eq_ignore_ascii_case(b"base64") {
                        self.enc = Enc::Base64;
                        self.b64 = Base64::default();
                    } else if h.value.eq_ignore_ascii_case(b"quoted-printable") {
                        self.enc = Enc::Qp;
                    }
                }
                b"content-type" => {
                    if let Some(b) = param(&h.value, b"boundary", &mut sections) {
                        long_boundary |= b.len() > MAX_BOUNDARY;
                        if self.boundaries.len() < MAX_DEPTH && b.len() <= MAX_HEADER_LEN {
                            let mut full = b"--".to_vec();
                            full.extend_from_slice(b);
                            self.boundaries.push(full);
                        }
                    }
                    let ct = h.value.split(|&c| c == b';').next().unwrap_or_default();
                    self.kind = match ct {
                        b"text/plain" => Kind::PlainText,
                        b"text/html" => Kind::Html,
                        _ => {
                            encap |= ct.starts_with(b"message/");
                            Kind::Unknown
                        }
                    };
                }
                _ => {}
            }
        }
        for n in names {
            if self.email.attachment_names.len() < MAX_ATTACHMENTS {
                self.email.attachment_names.push(n);
            }
        }
        if long_name {
            self.raise(EV_LONG_FILENAME, out);
        }
        if long_boundary {
            self.raise(EV_LONG_BOUNDARY, out);
        }
        encap
    }

    /// The message's headers ended: what EVE and the `email.*` buffers show.
    fn take_main_headers(&mut self) {
        let e = &mut self.email;
        e.headers_done = true;
        for h in &self.headers[..self.main] {
            let name = h.name.to_ascii_lowercase();
            let v = &h.value;
            let first = |f: &mut Option<Vec<u8>>| {
                if f.is_none() {
                    *f = Some(v.clone());
                }
            };
            match &name[..] {
                b"from" => first(&mut e.from),
                b"to" if e.to_raw.is_none() => {
                    e.to_raw = Some(v.clone());
                    addresses(v, &mut e.to);
                }
                b"cc" if e.cc_raw.is_none() => {
                    e.cc_raw = Some(v.clone());
                    addresses(v, &mut e.cc);
                }
                b"subject" => first(&mut e.subject),
                b"date" => first(&mut e.date),
                b"message-id" => first(&mut e.message_id),
                b"x-mailer" => first(&mut e.x_mailer),
                b"received" if e.received.len() < MAX_RECEIVED => e.received.push(v.clone()),
                _ => {}
            }
        }
    }

    /// The entity's headers ended (an empty line).
    fn end_headers(&mut self, cfg: &FileConfig, out: &mut Vec<&'static str>) {
        let encap = self.entity_headers(out);
        if self.main == 0 && !self.headers.is_empty() {
            self.main = self.headers.len();
            self.take_main_headers();
        }
        if encap {
            // The held message's headers come next.
            self.restart();
            return;
        }
        self.phase = Phase::Body;
        if self.filename.is_empty() || self.email.attachments.len() >= MAX_ATTACHMENTS {
            return;
        }
        if cfg.track {
            self.files.open(&self.filename, cfg);
        }
        self.email.attachments.push(Attachment {
            name: self.filename.clone(),
            ..Attachment::default()
        });
        self.attachment = Some(self.email.attachments.len() - 1);
    }

    /// A new entity begins (after a boundary, or inside a `message/*` part).
    fn restart(&mut self) {
        self.phase = Phase::Start;
        self.headers.truncate(self.main);
        self.enc = Enc::Plain;
        self.b64 = Base64::default();
        self.filename.clear();
        self.eol_len = 0;
        self.kind = Kind::Message;
        self.pending_text.clear();
    }

    fn body_line(
        &mut self,
        line: &[u8],
        eol: &[u8],
        cfg: &FileConfig,
        out: &mut Vec<&'static str>,
    ) {
        if let Some(b) = self.boundaries.last()
            && line.starts_with(b)
        {
            let closing = line[b.len()..].starts_with(b"--");
            self.boundary(closing, cfg);
            return;
        }
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        let attachment = !self.filename.is_empty();
        match self.enc {
            Enc::Base64 => {
                if self.cfg.mime.decode_base64 && (attachment || self.kind.is_text()) {
                    if line.len() > MAX_ENC_LINE {
                        self.raise(EV_LONG_ENC_LINE, out);
                    }
                    let room = b64_room(self.b64.n + line.len());
                    if self.b64.decode(line, &mut buf) {
                        // Suricata looks for URLs in all the room it set aside.
                        let n = buf.len();
                        buf.resize(room.max(n), 0);
                        self.find_urls(&buf);
                        buf.truncate(n);
                    } else {
                        self.raise(EV_INVALID_BASE64, out);
                    }
                }
            }
            Enc::Plain | Enc::Qp if !attachment => {
                if self.kind.is_text() {
                    let mut full = line.to_vec();
                    full.extend_from_slice(eol);
                    self.find_urls(&full);
                }
            }
            Enc::Plain => {
                let mut full = line.to_vec();
                full.extend_from_slice(eol);
                self.find_urls(&full);
                buf.extend_from_slice(&self.eol[..self.eol_len]);
                buf.extend_from_slice(line);
                self.eol_len = eol.len();
                self.eol[..eol.len()].copy_from_slice(eol);
            }
            Enc::Qp if !self.cfg.mime.decode_qp => {}
            Enc::Qp => {
                if line.len() > MAX_ENC_LINE {
                    self.raise(EV_LONG_ENC_LINE, out);
                }
                if !self.qp_line(line, eol, &mut buf) {
                    self.raise(EV_INVALID_QP, out);
                }
                self.find_urls(&buf);
            }
        }
        if attachment {
            self.append(&buf);
        }
        self.scratch = buf;
    }

    /// Decodes a quoted-printable line of an attachment with its ending (kept unless
    /// the line ends with `=`); `false` when an escape is invalid.
    fn qp_line(&mut self, line: &[u8], eol: &[u8], out: &mut Vec<u8>) -> bool {
        let mut ok = true;
        let mut i = 0;
        if self.eol_len > 0 && self.eol[0] == b'=' {
            // An escape cut by the end of the previous piece of line.
            let pair = match self.eol_len {
                1 => (line.first(), line.get(1)),
                _ => (self.eol.get(1), line.first()),
            };
            match pair {
                (Some(&h), Some(&l)) if line.len() >= 2 => match (hex_upper(h), hex_upper(l)) {
                    (Some(h), Some(l)) => out.push(h << 4 | l),
                    _ => ok = false,
                },
                _ => ok = false,
            }
            i = 3 - self.eol_len;
            self.eol_len = 0;
        } else if self.eol_len > 0 {
            out.extend_from_slice(&self.eol[..self.eol_len]);
            self.eol_len = 0;
        }
        let mut soft = false;
        while i < line.len() {
            if line[i] != b'=' {
                out.push(line[i]);
                i += 1;
                continue;
            }
            if i == line.len() - 1 && !eol.is_empty() {
                soft = true;
                break;
            }
            if i + 2 >= line.len() {
                if eol.is_empty() {
                    // Keep the escape for the rest of the line.
                    self.eol_len = line.len() - i;
                    self.eol[0] = b'=';
                    if self.eol_len == 2 {
                        self.eol[1] = line[i + 1];
                    }
                } else {
                    ok = false;
                }
                break;
            }
            match (hex_upper(line[i + 1]), hex_upper(line[i + 2])) {
                (Some(h), Some(l)) => out.push(h << 4 | l),
                _ => ok = false,
            }
            i += 3;
        }
        if line.is_empty() {
            self.eol_len = eol.len();
            self.eol[..eol.len()].copy_from_slice(eol);
        } else if !soft {
            out.extend_from_slice(eol);
        }
        ok
    }

    /// A boundary line: the part ends (its unfinished base64 quantum padded), and a
    /// new entity begins.
    fn boundary(&mut self, closing: bool, cfg: &FileConfig) {
        if self.enc == Enc::Base64 && self.cfg.mime.decode_base64 {
            let mut buf = std::mem::take(&mut self.scratch);
            buf.clear();
            self.b64.flush(&mut buf);
            self.append(&buf);
            self.scratch = buf;
        }
        let close = !self.filename.is_empty();
        if closing {
            self.boundaries.pop();
        }
        self.restart();
        if close {
            self.close_attachment(cfg);
        }
    }

    /// Decoded bytes to the open attachment.
    fn append(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        let Some(i) = self.attachment else {
            return;
        };
        if let Some(a) = self.email.attachments.get_mut(i) {
            let room = MAX_INSPECT.saturating_sub(a.data.len());
            a.data.extend_from_slice(&data[..data.len().min(room)]);
            a.size += data.len() as u64;
        }
        if let Some(f) = self.files.current() {
            f.append(data);
        }
    }

    fn close_attachment(&mut self, _cfg: &FileConfig) {
        if let Some(i) = self.attachment.take() {
            if let Some(a) = self.email.attachments.get_mut(i) {
                a.closed = true;
            }
            self.files.end_current(FileState::Closed);
        }
    }

    /// Looks for URLs in decoded text, a line at a time: text up to its last line end
    /// now, the rest with what follows it.
    fn find_urls(&mut self, new: &[u8]) {
        if !self.cfg.mime.extract_urls {
            return;
        }
        let pending = !self.pending_text.is_empty();
        if pending {
            self.pending_text.extend_from_slice(new);
        }
        let text: &[u8] = if pending { &self.pending_text } else { new };
        let Some(&last) = text.last() else {
            return;
        };
        if last == b'\n' || text.len() > MAX_DECODED_LINE {
            extract_urls(&self.cfg.mime, text, &mut self.email.urls);
            self.pending_text.clear();
        } else if let Some(back) = text.iter().rev().take(new.len()).position(|&c| c == b'\n') {
            let nl = text.len() - 1 - back;
            extract_urls(&self.cfg.mime, &text[..nl], &mut self.email.urls);
            if pending {
                self.pending_text.drain(..nl);
            } else {
                self.pending_text.extend_from_slice(&new[nl..]);
            }
        } else if !pending {
            self.pending_text.extend_from_slice(new);
        }
    }

    /// The message ended: with its `.` (`complete`) or cut short.
    pub fn end(&mut self, complete: bool, _cfg: &FileConfig) {
        if self.email.done {
            return;
        }
        // Headers without their empty line are not the message's (none are shown).
        self.email.headers_done = true;
        if complete {
            // The last line may be waiting for its line end.
            self.find_urls(b"\n");
            if self.md5_state == Md5State::Started
                && let Some(h) = self.md5.take()
            {
                self.email.body_md5 = Some(Digest::finalize(*h).into());
            }
        }
        self.md5 = None;
        if let Some(i) = self.attachment.take()
            && let Some(a) = self.email.attachments.get_mut(i)
        {
            a.closed = true;
        }
        self.files.end_current(if complete {
            FileState::Closed
        } else {
            FileState::Truncated
        });
        self.email.done = true;
        self.email.complete = complete;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Parses `text` line by line (CRLF endings) and ends the message with its `.`.
    fn parse_events(text: &str) -> (Mime, Vec<&'static str>) {
        let mut m = Mime::new();
        let cfg = FileConfig {
            track: true,
            ..FileConfig::default()
        };
        let mut ev = Vec::new();
        for l in text.strip_suffix("\r\n").unwrap_or(text).split("\r\n") {
            m.line(l.as_bytes(), b"\r\n", &cfg, &mut ev);
        }
        m.end(true, &cfg);
        (m, ev)
    }

    fn parse(text: &str) -> Mime {
        parse_events(text).0
    }

    /// [`parse`] with settings `cfg`; raw extraction as the SMTP parser opens it.
    fn parse_with(cfg: SmtpConfig, text: &str) -> Mime {
        let files = FileConfig {
            track: true,
            ..FileConfig::default()
        };
        let cfg = Arc::new(cfg);
        let mut m = if cfg.raw_extraction {
            Mime::raw(cfg, &files)
        } else {
            Mime::with_config(cfg)
        };
        let mut ev = Vec::new();
        for l in text.strip_suffix("\r\n").unwrap_or(text).split("\r\n") {
            m.line(l.as_bytes(), b"\r\n", &files, &mut ev);
        }
        m.end(true, &files);
        m
    }

    const SWITCHED: &str = concat!(
        "Subject: s\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n",
        "--b\r\nContent-Type: text/plain\r\n\r\n",
        "http://a.example/ HTTPS://s.example/x ftp://f.example/ mailto:m@x\r\n",
        "--b\r\nContent-Disposition: attachment; filename=a.bin\r\n",
        "Content-Transfer-Encoding: base64\r\n\r\nQUJD\r\n",
        "--b\r\nContent-Disposition: attachment; filename=q.txt\r\n",
        "Content-Transfer-Encoding: quoted-printable\r\n\r\nx=41\r\n",
        "--b--\r\n"
    );

    fn data(m: &Mime) -> Vec<&[u8]> {
        m.email.attachments.iter().map(|a| &a.data[..]).collect()
    }

    #[test]
    fn config_switches_act_as_suricatas() {
        let m = parse_with(SmtpConfig::default(), SWITCHED);
        assert_eq!(strings(&m.email.urls), ["a.example/"]);
        assert_eq!(data(&m), [&b"ABC"[..], b"xA\r\n"]);
        assert_eq!(m.email.body_md5, None);
        let mut c = SmtpConfig::default();
        c.mime.decode_base64 = false;
        c.mime.decode_qp = false;
        c.mime.extract_urls = false;
        let m = parse_with(c, SWITCHED);
        assert!(m.email.urls.is_empty());
        assert_eq!(data(&m), [&b""[..], b""]);
        assert_eq!(m.files.as_slice().len(), 2);
        // Schemes as the config normalises them, each in turn; logged with them.
        let mut c = SmtpConfig::default();
        c.mime.schemes = ["https", "ftp://", "mailto", "http"]
            .iter()
            .map(|s| super::super::config::scheme(s).unwrap())
            .collect();
        c.mime.log_url_scheme = true;
        let m = parse_with(c, SWITCHED);
        assert_eq!(
            strings(&m.email.urls),
            [
                "HTTPS://s.example/x",
                "ftp://f.example/",
                "http://a.example/"
            ]
        );
    }

    #[test]
    fn body_md5_runs_from_the_first_body_line_to_the_end() {
        let mut c = SmtpConfig::default();
        c.mime.body_md5 = true;
        let m = parse_with(c.clone(), SWITCHED);
        let body = SWITCHED.split_once("\r\n\r\n").unwrap().1;
        let want: [u8; 16] = Md5::digest(body.as_bytes()).into();
        assert_eq!(m.email.body_md5, Some(want));
        // As the reference's EVE shows for a plain message (smtp-headers.pcap).
        let m = parse_with(
            c.clone(),
            "From: c\r\nSubject: plain\r\n\r\nJust text, http://plain.example/p\r\nlast line without end\r\n",
        );
        assert_eq!(
            crate::files::hex(&m.email.body_md5.unwrap()),
            "bbe046a9f856ecb99f474e01d2089aa7"
        );
        // A message cut short has none.
        let mut m = Mime::with_config(Arc::new(c));
        let mut ev = Vec::new();
        for l in ["Subject: x", "", "body"] {
            m.line(l.as_bytes(), b"\r\n", &FileConfig::default(), &mut ev);
        }
        m.end(false, &FileConfig::default());
        assert_eq!(m.email.body_md5, None);
    }

    #[test]
    fn raw_extraction_is_the_whole_message() {
        let c = SmtpConfig {
            decode_mime: false,
            raw_extraction: true,
            ..SmtpConfig::default()
        };
        let m = parse_with(c, SWITCHED);
        assert!(m.raw);
        assert_eq!(data(&m), [SWITCHED.as_bytes()]);
        assert!(m.email.urls.is_empty() && m.email.attachment_names.is_empty());
        let f = &m.files.as_slice()[0];
        assert_eq!((f.name(), f.size()), (RAW_FILE_NAME, SWITCHED.len() as u64));
        assert!(m.email.attachments[0].closed);
    }

    fn strings(v: &[Vec<u8>]) -> Vec<String> {
        v.iter()
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .collect()
    }

    /// The decoder as it was, a character at a time (the reference for the block
    /// decoder).
    fn decode_bytewise(b: &mut Base64, line: &[u8], out: &mut Vec<u8>) -> bool {
        let start = out.len();
        let mut i = 0;
        while i < line.len() || (b.n == 4 && !line.is_empty()) {
            while b.n < 4 && i < line.len() {
                let c = line[i];
                if b64_value(c).is_some() || c == b'=' {
                    b.quantum[b.n] = c;
                    b.n += 1;
                }
                i += 1;
            }
            if b.n < 4 {
                break;
            }
            if b.stuck || b.quantum[0] == b'=' || b.quantum[1] == b'=' {
                b.stuck = true;
                out.truncate(start);
                return false;
            }
            let v = |c: u8| b64_value(c).unwrap_or(0);
            let [x, y, z, w] = b.quantum;
            out.push(v(x) << 2 | v(y) >> 4);
            if z != b'=' {
                out.push(v(y) << 4 | v(z) >> 2);
                if w != b'=' {
                    out.push(v(z) << 6 | v(w));
                }
            }
            b.n = 0;
        }
        true
    }

    #[test]
    fn base64_blocks_decode_as_the_bytewise_decoder() {
        // A known vector first.
        let mut b = Base64::default();
        let mut out = Vec::new();
        assert!(b.decode(b"SGVsbG8g d29y\tbGQh", &mut out));
        assert_eq!(out, b"Hello world!");
        // Then lines of alphabet characters with blanks, other bytes and `=` mixed
        // in, split anywhere, from a fixed pseudo-random sequence.
        let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for _ in 0..2000 {
            let (mut fast, mut slow) = (Base64::default(), Base64::default());
            let (mut a, mut b) = (Vec::new(), Vec::new());
            for _ in 0..(next() % 6) {
                let len = (next() % 120) as usize;
                let line: Vec<u8> = (0..len)
                    .map(|_| match next() % 40 {
                        0 => b'=',
                        1 => b' ',
                        2 => b'!',
                        3 => 0x80 | (next() % 128) as u8,
                        _ => alphabet[(next() % 64) as usize],
                    })
                    .collect();
                let r1 = fast.decode(&line, &mut a);
                let r2 = decode_bytewise(&mut slow, &line, &mut b);
                assert_eq!(
                    (r1, &a, fast.n, fast.stuck),
                    (r2, &b, slow.n, slow.stuck),
                    "{line:?}"
                );
                assert_eq!(fast.quantum[..fast.n], slow.quantum[..slow.n]);
            }
        }
    }

    #[test]
    fn headers_unfold_without_their_first_blank() {
        let m = parse(concat!(
            "From: a@b.c\r\nTo: x <x@y.z>, \"Doe, J\" <j@d.e>,\r\n\tk@l.m\r\n",
            "Cc: c1 , , c2\r\nSubject: hello\r\n  world\r\n",
            "Received: from a\r\n\tby b\r\nReceived: from c\r\n\r\nbody\r\n"
        ));
        let e = &m.email;
        assert_eq!(e.from.as_deref(), Some(&b"a@b.c"[..]));
        assert_eq!(strings(&e.to), ["x <x@y.z>", "\"Doe, J\" <j@d.e>", "k@l.m"]);
        assert_eq!(
            e.to_raw.as_deref(),
            Some(&b"x <x@y.z>, \"Doe, J\" <j@d.e>,k@l.m"[..])
        );
        // Suricata's split: blanks after an item stay, a comma after a separator
        // starts the next item.
        assert_eq!(strings(&e.cc), ["c1 ", ", c2"]);
        assert_eq!(e.subject.as_deref(), Some(&b"hello world"[..]));
        assert_eq!(strings(&e.received), ["from aby b", "from c"]);
        assert!(e.headers_done && e.complete);
    }

    #[test]
    fn urls_as_suricata_finds_them() {
        let m = parse(concat!(
            "Subject: u\r\n\r\n",
            "see http://Example.com/x, (http://p.example/y) [http://b.example/z] and\r\n",
            "https://s.example/ www.n.example/ http://Example.com/x\r\n",
            "last http://l.example/e"
        ));
        assert_eq!(
            strings(&m.email.urls),
            [
                "Example.com/x,",
                "p.example/y)",
                "b.example/z",
                "Example.com/x\r\n",
                "l.example/e\r\n"
            ]
        );
    }

    #[test]
    fn text_types_as_written_and_qp_text_undecoded() {
        let m = parse(concat!(
            "Content-Type: multipart/mixed; boundary=b\r\n\r\n",
            "--b\r\nContent-Type: TEXT/PLAIN\r\n\r\nhttp://upper.example/\r\n",
            "--b\r\nContent-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
            "http://q.example/a=3Db =ZZ\r\n",
            "--b\r\nContent-Type: text/html\r\nContent-Transfer-Encoding: base64\r\n\r\n",
            // "<a href=\"http://h.example/\">" and a line end.
            "PGEgaHJlZj0iaHR0cDovL2guZXhhbXBsZS8iPg0K\r\n",
            "--b--\r\n"
        ));
        assert_eq!(strings(&m.email.urls), ["q.example/a=3Db", "h.example/"]);
        let (_, ev) = parse_events(
            "Content-Type: text/plain\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n=ZZ\r\n",
        );
        assert!(ev.is_empty(), "{ev:?}");
    }

    #[test]
    fn base64_text_is_searched_with_its_set_aside_room() {
        // "http://t.example/\r\n" (19 bytes): 28 characters set aside 21 bytes, so the
        // line's end is followed by zeros and the URL keeps its `\r` only.
        let m = parse("Content-Transfer-Encoding: base64\r\n\r\naHR0cDovL3QuZXhhbXBsZS8NCg==\r\n");
        assert_eq!(strings(&m.email.urls), ["t.example/\r"]);
    }

    #[test]
    fn attachment_names_first_in_header_order_and_rfc2231_sections() {
        let m = parse(concat!(
            "Content-Type: multipart/mixed;\r\n\tboundary=\"b\"\r\n\r\n",
            "--b\r\nContent-Type: application/x; name=\"ct.bin\"\r\n",
            "Content-Disposition: attachment; filename=\"cd.bin\"\r\n\r\nx\r\n",
            "--b\r\nContent-Disposition: attachment;\r\n filename*0=\"one-\";\r\n filename*1=\"two.txt\"\r\n\r\ny\r\n",
            "--b\r\nContent-Disposition: attachment; filename*=UTF-8''n%C3%A9.txt\r\n\r\nz\r\n",
            "--b\r\nContent-Type: MULTIPART/MIXED; BOUNDARY=c; NAME=up.bin\r\n\r\nw\r\n",
            "--b--\r\n"
        ));
        assert_eq!(
            strings(&m.email.attachment_names),
            ["ct.bin", "one-two.txt"]
        );
        assert_eq!(m.files.as_slice().len(), 2);
    }

    #[test]
    fn attachments_decoded_as_suricata_decodes_them() {
        let m = parse(concat!(
            "Content-Type: multipart/mixed; boundary=\"XX\"\r\n\r\npreamble\r\n",
            "--XX\r\nContent-Type: text/plain; name=q.txt\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n",
            "caf=C3=A9 soft=\r\nbreak =c3 x\r\n\r\n",
            "--XX\r\nContent-Type: application/octet-stream; name=\"a.bin\"\r\n",
            "Content-Transfer-Encoding: base64\r\n\r\nSGVs!bG8g\r\nd29ybGQ\r\n",
            "--XX\r\nContent-Disposition: attachment; filename=bad.bin\r\n",
            "Content-Transfer-Encoding: base64\r\n\r\nQUJD\r\n==QUJD\r\nQUJD\r\n",
            "--XX\r\nContent-Disposition: attachment; filename=p.txt\r\n\r\na\r\n..b\r\n\r\n",
            "--XX--\r\nepilogue\r\n"
        ));
        let data: Vec<&[u8]> = m.email.attachments.iter().map(|a| &a.data[..]).collect();
        assert_eq!(
            data,
            [
                // A QP line keeps its line end; `=c3` is no escape (upper case only).
                &b"caf\xc3\xa9 softbreak  x\r\n"[..],
                // An unfinished quantum is padded at the boundary.
                b"Hello world",
                // `=` starting a quantum: nothing decodes any more.
                b"ABC",
                // Plain: the line end before the boundary is the boundary's.
                b"a\r\n..b\r\n",
            ]
        );
        assert!(m.email.attachments.iter().all(|a| a.closed));
        assert_eq!(m.files.as_slice()[1].size(), 11);
    }

    #[test]
    fn only_the_innermost_boundary_and_message_parts() {
        let m = parse(concat!(
            "From: outer@x\r\nContent-Type: multipart/mixed; boundary=o\r\n\r\n",
            "--o\r\nContent-Type: multipart/alternative; boundary=i\r\n\r\n",
            "--i\r\nContent-Type: text/plain\r\n\r\nhttp://a.example/\r\n",
            // The outer boundary while the inner one is open is text.
            "--o\r\nhttp://b.example/\r\n--i--\r\n",
            "--o\r\nContent-Type: message/rfc822\r\nContent-Disposition: attachment; filename=\"f.eml\"\r\n\r\n",
            "From: inner@x\r\nContent-Type: application/zip; name=z.zip\r\n\r\nPK\r\n",
            "--o--\r\n"
        ));
        assert_eq!(m.email.from.as_deref(), Some(&b"outer@x"[..]));
        assert_eq!(strings(&m.email.urls), ["a.example/\r\n", "b.example/\r\n"]);
        assert_eq!(strings(&m.email.attachment_names), ["f.eml", "z.zip"]);
        assert_eq!(m.email.attachments.len(), 1);
        assert_eq!(m.email.attachments[0].data, b"PK");
    }

    #[test]
    fn anomalies_once_per_line_every_line() {
        let long = "x".repeat(MAX_LINE + 1);
        let (_, ev) = parse_events(&format!(
            "X-{}: v\r\nX-V: {}\r\n\r\n{long}\r\n{long}\r\n",
            "n".repeat(MAX_HEADER_NAME),
            "v".repeat(MAX_HEADER_VALUE + 1)
        ));
        assert_eq!(
            ev,
            [
                EV_LONG_HEADER_NAME,
                EV_LONG_LINE,
                EV_LONG_HEADER_VALUE,
                EV_LONG_LINE,
                EV_LONG_LINE
            ]
        );
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
        let mut folded = String::from("X-Long: a\r\n");
        for _ in 0..(MAX_HEADER_LEN / 10 + 10) {
            folded.push_str(" aaaaaaaaaaa\r\n");
        }
        folded.push_str("\r\n");
        let (m, ev) = parse_events(&folded);
        assert!(m.headers.iter().all(|h| h.value.len() <= MAX_HEADER_LEN));
        assert!(ev.contains(&EV_LONG_HEADER_VALUE));
        let many = "http://u.example/ ".repeat(MAX_URLS * 2);
        let m = parse(&format!("\r\n{many}\r\n"));
        assert_eq!(m.email.urls.len(), MAX_URLS);
        let mut sections = Vec::new();
        let mut v = b"a".to_vec();
        for i in 0..MAX_SECTIONS * 2 {
            v.extend_from_slice(format!("; f*{i}=x").as_bytes());
        }
        assert_eq!(
            param(&v, b"f", &mut sections).map(<[u8]>::len),
            Some(MAX_SECTIONS)
        );
    }
}
