//! One HTTP/1.x connection: a streaming parser per direction and the transactions
//! (request/response pairs) it builds.
//!
//! Requests and responses are parsed independently (pipelining: several requests may be
//! parsed before the first response); a response is paired with the oldest transaction
//! whose response has not started. Bytes that cannot be consumed yet (an incomplete line
//! or header block) wait in a per-direction buffer bounded by
//! [`parser::MAX_HEADER_BLOCK`]; bodies are never buffered beyond what is kept for
//! inspection (the body limits).

use std::collections::VecDeque;

use super::decompress::{self, DecodeLimits, Decoder};
use super::detect::HeaderBuffers;
use super::parser::{self, ChunkLen, Header, Side, Version};
use super::uri;
use crate::ReleaseEmpty;
use crate::files::{FileConfig, FileState, Files};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Most live transactions per connection (Suricata's `max-tx` default).
pub const MAX_TX: usize = 512;
/// Most ignorable (empty) lines skipped before a request or status line.
pub const MAX_IGNORED_LINES: usize = 64;
/// Most consecutive `100 Continue` responses accepted on one transaction.
pub const MAX_INTERIM: usize = 8;
/// Most bytes of a request or response kept for its frame (`frame:http1.request`,
/// `frame:http1.response`), only when the rules use HTTP frames: the frame's bytes past
/// it are not inspected (an alert's frame payload is cut to this size anyway).
pub const MAX_FRAME_BYTES: usize = 64 * 1024;

/// HTTP parser settings (from `app-layer.protocols.http.libhtp.default-config`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpConfig {
    /// `request-body-limit`: bytes of request body kept for inspection (0 = unlimited,
    /// capped at [`MAX_BODY`]).
    pub request_body_limit: usize,
    /// `response-body-limit`: bytes of (decoded) response body kept.
    pub response_body_limit: usize,
    pub decode: DecodeLimits,
}

/// Hard cap on a kept body when a limit is configured as 0 (unlimited).
pub const MAX_BODY: usize = 64 * 1024 * 1024;

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            request_body_limit: 100 * 1024,
            response_body_limit: 100 * 1024,
            decode: DecodeLimits::default(),
        }
    }
}

impl HttpConfig {
    fn limit(&self, dir: Dir) -> usize {
        let l = match dir {
            Dir::ToServer => self.request_body_limit,
            Dir::ToClient => self.response_body_limit,
        };
        if l == 0 { MAX_BODY } else { l.min(MAX_BODY) }
    }
}

/// How far one side of a transaction has been parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Progress {
    #[default]
    NotStarted,
    Line,
    Headers,
    Body,
    Complete,
}

/// One side (request or response) of a transaction.
#[derive(Debug, Default)]
pub struct Message {
    pub progress: Progress,
    /// Request line or status line, without its end of line.
    pub line: Vec<u8>,
    /// Protocol as written ("HTTP/1.1").
    pub protocol: Vec<u8>,
    pub version: Option<Version>,
    /// Headers, duplicates joined with ", " (as libhtp does; a repeated Content-Length
    /// keeps the first).
    pub headers: Vec<Header>,
    /// The header block as received, terminating empty line included.
    pub headers_raw: Vec<u8>,
    /// Buffers derived from the headers (built when they are complete).
    pub buffers: HeaderBuffers,
    /// Whether the message has a body at all (known once the headers are parsed).
    pub has_body: bool,
    /// The body kept for inspection (de-chunked, decoded), up to the body limit.
    pub body: Vec<u8>,
    /// Whether the body limit cut the kept body.
    pub body_truncated: bool,
    /// Body bytes received (after de-chunking, before decoding).
    pub body_len: u64,
    /// A gap in the stream fell inside the body.
    pub body_gap: bool,
    /// The files the body carries (one per message, or one per file part of a
    /// multipart upload; tracked when the file layer is on).
    pub files: Files,
    /// A `multipart/form-data` request body being split into its file parts.
    pub multipart: Option<Box<super::multipart::Multipart>>,
    /// Where the message lies in its direction's stream, for its frame.
    pub frame: FramePlace,
    /// The message as received (start line, headers, body as sent, gaps left out), up
    /// to [`MAX_FRAME_BYTES`]; kept only when the rules use HTTP frames.
    pub raw: Vec<u8>,
    decoder: Option<Decoder>,
}

/// A message's HTTP/1 frame (`http1.request` or `http1.response`): Suricata's frame
/// starts where the message starts (leading empty lines included) and ends where the
/// message completes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct FramePlace {
    /// Frame id within the direction (from 2: id 1 is the direction's `http1.stream`
    /// frame, numbered as if the rules used all of HTTP's frame types).
    pub id: u64,
    /// Stream offset of the message's first byte.
    pub offset: u64,
    /// Its length in the stream so far (gaps and bytes past [`MAX_FRAME_BYTES`]
    /// included).
    pub len: u64,
}

impl Message {
    /// The value of header `name` (case-insensitive).
    pub fn header(&self, name: &[u8]) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| parser::name_eq(h.name(), name))
            .map(|h| h.value())
    }

    fn body_done(&self) -> bool {
        self.progress == Progress::Complete || self.body_truncated
    }
}

/// A request/response pair.
#[derive(Debug, Default)]
pub struct HttpTx {
    pub id: u64,
    pub request: Message,
    pub response: Message,
    pub method: Vec<u8>,
    pub uri_raw: Vec<u8>,
    /// `http.uri`, normalised (see [`uri`]).
    pub uri_norm: Vec<u8>,
    /// Length of the path part of `uri_norm` (no query or fragment).
    pub uri_path_len: usize,
    /// Status code text as written, and its value when it is a valid code.
    pub status_raw: Vec<u8>,
    pub status: Option<u16>,
    pub status_msg: Vec<u8>,
    /// Normalised host (from an absolute URI, else the Host header): lowercase, no port.
    pub host: Option<Vec<u8>>,
    /// Port of an absolute URI or Host header, when given.
    pub port: Option<u16>,
    /// Seen a response with no request to pair it with.
    pub request_missing: bool,
    /// The response is a `101 Switching Protocols` that ended HTTP on the connection
    /// (no body framing): libhtp leaves such a response at its headers' progress, so
    /// Suricata's buffers that need the headers done (`http.header`, `.raw`,
    /// `http.header_names`, `http.start`) never exist for it in the response.
    pub switched: bool,
    interim: usize,
}

/// Parser state of one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Between messages.
    Idle,
    Line,
    Headers,
    BodyLength(u64),
    ChunkSize,
    ChunkData(u64),
    ChunkDataEnd,
    Trailers,
    /// Body until the connection closes.
    UntilClose,
    /// After a response body: junk lines that do not look like a status line still
    /// belong to this response (libhtp's `res_finalize`).
    Finalize,
    /// No more parsing in this direction (tunnel, error, too many transactions).
    Stopped,
    /// A request that may switch protocols (`CONNECT`, or one with `Upgrade:`) is
    /// complete: the client's next bytes are held, unparsed, until the response says
    /// whether they are HTTP (see [`HttpState::held`]).
    Held,
}

/// How a message's headers frame its body.
enum Framing {
    /// Chunked, or by a valid Content-Length: the state that reads the body (`Idle` for
    /// a length of 0).
    Body(St),
    /// A Content-Length that is not a valid length.
    InvalidLength,
    /// Neither Transfer-Encoding chunked nor Content-Length.
    Unframed,
}

/// The framing of a message in direction `d` whose headers say `chunked` and whose
/// Content-Length is `cl` (`Some(parsed)` when the header is there). Chunked wins, as in
/// libhtp; an invalid length is an anomaly.
fn framing(d: usize, chunked: bool, cl: Option<Option<u64>>, out: &mut ParseOutput) -> Framing {
    if chunked {
        return Framing::Body(St::ChunkSize);
    }
    match cl {
        None => Framing::Unframed,
        Some(Some(0)) => Framing::Body(St::Idle),
        Some(Some(n)) => Framing::Body(St::BodyLength(n)),
        Some(None) => {
            out.anomaly(NAMES[d].invalid_cl);
            Framing::InvalidLength
        }
    }
}

#[derive(Debug)]
struct DirParser {
    st: St,
    /// Bytes waiting for a line end.
    pending: Vec<u8>,
    /// Index (in `txs`) of the transaction being parsed; valid while `st` is not Idle.
    tx_id: u64,
    /// Line offsets (start, end) within `headers_raw` of the current message.
    lines: Vec<(usize, usize)>,
    ignored: usize,
    eof: bool,
    /// Stream bytes of this direction so far (data and gaps).
    seen: u64,
    /// Stream offset of the byte the state machine is at.
    at: u64,
    /// Messages begun in this direction.
    messages: u64,
    /// Empty lines skipped before the first message (part of its frame), kept only
    /// when frames are; their stream offset.
    lead: Vec<u8>,
    lead_at: Option<u64>,
}

impl DirParser {
    fn new() -> DirParser {
        DirParser {
            st: St::Idle,
            pending: Vec::new(),
            tx_id: 0,
            lines: Vec::new(),
            ignored: 0,
            eof: false,
            seen: 0,
            at: 0,
            messages: 0,
            lead: Vec::new(),
            lead_at: None,
        }
    }
}

/// One connection's HTTP state.
#[derive(Debug)]
pub struct HttpState {
    cfg: HttpConfig,
    txs: VecDeque<HttpTx>,
    next_id: u64,
    dirs: [DirParser; 2],
    /// The first request line has been seen (before it, a response is unexpected).
    tunnel: bool,
    /// What the file layer does (nothing unless the worker turned it on).
    files: FileConfig,
    /// The rules use `http1.request` or `http1.response`: keep each message's bytes
    /// (see [`Message::raw`]).
    frames: bool,
    /// The client's bytes after a request that may switch protocols, until its
    /// response (at most [`crate::MAX_HELD`]; past it they are parsed as HTTP).
    held: Vec<u8>,
    /// A response switched protocols (`101` with `Upgrade: websocket` or `h2c`, a
    /// `CONNECT` answered 2xx): the protocol the flow changes to (`None`: detected
    /// again), the transaction that switched, and where in the response stream the
    /// new protocol starts (known once the parser reaches it).
    switch: Option<Switch>,
    /// The worker's byte-range reassembly (see [`crate::files::range`]); `None`: parts
    /// of files are not reassembled.
    ranges: Option<crate::files::range::Shared>,
}

/// A protocol switch a response made (see [`HttpState::switch`]).
#[derive(Debug, Clone, Copy)]
struct Switch {
    to: Option<crate::AppProto>,
    tx: u64,
    at: Option<u64>,
    /// The change was asked for.
    asked: bool,
}

/// The protocol a `101 Switching Protocols` switches to, by the response's `Upgrade`
/// header (or the request's when the response has none), as Suricata follows them:
/// WebSocket and HTTP/2 (`h2c`); `None` for any other.
fn upgrade_target(value: Option<&[u8]>) -> Option<crate::AppProto> {
    let v = parser::trim(value?);
    if v.eq_ignore_ascii_case(b"websocket") {
        Some(crate::AppProto::Websocket)
    } else if v.eq_ignore_ascii_case(b"h2c") {
        Some(crate::AppProto::Http2)
    } else {
        None
    }
}

fn side(dir: Dir) -> Side {
    match dir {
        Dir::ToServer => Side::Request,
        Dir::ToClient => Side::Response,
    }
}

/// Anomaly names per direction.
struct Names {
    missing_colon: &'static str,
    lws_after_name: &'static str,
    chunk_extension: &'static str,
    field_too_long: &'static str,
    invalid_chunk_len: &'static str,
    invalid_cl: &'static str,
    header_invalid: &'static str,
    folding: &'static str,
    too_many_headers: &'static str,
    repetition: &'static str,
    duplicate_cl: &'static str,
}

const NAMES: [Names; 2] = [
    Names {
        missing_colon: "http.request_field_missing_colon",
        lws_after_name: "http.request_invalid_lws_after_name",
        chunk_extension: "http.request_chunk_extension",
        field_too_long: "http.request_field_too_long",
        invalid_chunk_len: "http.invalid_request_chunk_len",
        invalid_cl: "http.invalid_content_length_field_in_request",
        header_invalid: "http.request_header_invalid",
        folding: "http.invalid_request_field_folding",
        too_many_headers: "http.request_too_many_headers",
        repetition: "http.request_header_repetition",
        duplicate_cl: "http.duplicate_content_length_field_in_request",
    },
    Names {
        missing_colon: "http.response_field_missing_colon",
        lws_after_name: "http.response_invalid_lws_after_name",
        chunk_extension: "http.response_chunk_extension",
        field_too_long: "http.response_field_too_long",
        invalid_chunk_len: "http.invalid_response_chunk_len",
        invalid_cl: "http.invalid_content_length_field_in_response",
        header_invalid: "http.response_header_name_not_token",
        folding: "http.invalid_response_field_folding",
        too_many_headers: "http.response_too_many_headers",
        repetition: "http.response_header_repetition",
        duplicate_cl: "http.duplicate_content_length_field_in_response",
    },
];

/// Outcome of one state step.
enum Step {
    /// Consumed `n` bytes; keep going.
    Go(usize),
    /// Need more bytes than are available.
    More,
}

impl HttpState {
    pub fn new(cfg: HttpConfig) -> HttpState {
        HttpState {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            dirs: [DirParser::new(), DirParser::new()],
            tunnel: false,
            files: FileConfig::default(),
            frames: false,
            held: Vec::new(),
            switch: None,
            ranges: None,
        }
    }

    /// Reassembles the parts of files (`206` responses) in `table`, the worker's.
    pub fn set_ranges(&mut self, table: crate::files::range::Shared) {
        self.ranges = Some(table);
    }

    /// The live transactions, oldest first.
    pub fn transactions(&self) -> impl Iterator<Item = &HttpTx> {
        self.txs.iter()
    }

    fn tx_mut(&mut self, id: u64) -> Option<&mut HttpTx> {
        let first = self.txs.front()?.id;
        let i = usize::try_from(id.checked_sub(first)?).ok()?;
        self.txs.get_mut(i)
    }

    fn msg_mut(&mut self, dir: Dir, id: u64) -> Option<&mut Message> {
        self.tx_mut(id).map(|t| match dir {
            Dir::ToServer => &mut t.request,
            Dir::ToClient => &mut t.response,
        })
    }

    fn new_tx(&mut self, _out: &mut ParseOutput) -> Option<u64> {
        // Past the bound, no more transactions (Suricata has no event for it).
        if self.txs.len() >= MAX_TX {
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(HttpTx {
            id,
            ..HttpTx::default()
        });
        Some(id)
    }

    fn feed(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.dirs[d].st == St::Stopped {
            return;
        }
        let base = self.dirs[d].seen - self.dirs[d].pending.len() as u64;
        let call_start = self.dirs[d].seen;
        self.dirs[d].seen += data.len() as u64;
        if self.dirs[d].pending.is_empty() {
            let n = self.run(dir, base, data, out);
            self.ask_switch(dir, call_start, &[], out);
            let rest = &data[n.min(data.len())..];
            self.dirs[d].pending.extend_from_slice(rest);
        } else {
            let mut buf = std::mem::take(&mut self.dirs[d].pending);
            buf.extend_from_slice(data);
            let n = self.run(dir, base, &buf, out);
            let before = usize::try_from(call_start - base).unwrap_or(0);
            self.ask_switch(dir, call_start, &buf[..before.min(buf.len())], out);
            buf.drain(..n.min(buf.len()));
            self.dirs[d].pending = buf;
        }
        if self.held.len() > crate::MAX_HELD {
            self.unhold(out);
        }
        let limit = match self.dirs[d].st {
            St::Headers | St::Trailers => parser::MAX_HEADER_BLOCK,
            _ => parser::MAX_LINE_LEN,
        };
        if self.dirs[d].pending.len() > limit && self.dirs[d].st != St::Stopped {
            out.anomaly(NAMES[d].field_too_long);
            self.dirs[d].pending = Vec::new();
            self.stop_dir(dir);
        }
    }

    /// Asks for the protocol change a response made, once the parser of `dir` has
    /// reached where the new protocol starts: the data of this call starts at stream
    /// offset `call_start`, after `pending` (bytes of earlier calls, still unparsed).
    fn ask_switch(&mut self, dir: Dir, call_start: u64, pending: &[u8], out: &mut ParseOutput) {
        let Some(sw) = self.switch.as_mut() else {
            return;
        };
        let Some(at) = sw.at else { return };
        if sw.asked || dir != Dir::ToClient {
            return;
        }
        sw.asked = true;
        let mut change = crate::ProtoChange {
            to: sw.to,
            ..Default::default()
        };
        if at >= call_start {
            change.at = usize::try_from(at - call_start).unwrap_or(usize::MAX);
        } else {
            // The new protocol starts in bytes of an earlier call, still pending.
            let from = pending
                .len()
                .saturating_sub(usize::try_from(call_start - at).unwrap_or(0));
            change.held[1] = pending[from..].to_vec();
        }
        change.held[0] = std::mem::take(&mut self.held);
        out.change_protocol(change);
    }

    /// The client's held bytes are HTTP after all (the response did not switch, or
    /// too many came): parsed now.
    fn unhold(&mut self, out: &mut ParseOutput) {
        if self.dirs[0].st != St::Held {
            return;
        }
        self.dirs[0].st = St::Idle;
        let held = std::mem::take(&mut self.held);
        let base = self.dirs[0].seen - held.len() as u64;
        let n = self.run(Dir::ToServer, base, &held, out);
        let mut rest = held.get(n..).unwrap_or_default().to_vec();
        rest.extend_from_slice(&self.dirs[0].pending);
        self.dirs[0].pending = rest;
    }

    /// Ends the message in progress and parses nothing more in `dir`.
    fn stop_dir(&mut self, dir: Dir) {
        let d = dir.index();
        let id = self.dirs[d].tx_id;
        if self.dirs[d].st != St::Idle {
            self.complete_msg(dir, id);
        }
        self.dirs[d].st = St::Stopped;
    }

    /// Runs the state machine over `buf`, whose first byte is at stream offset `base`;
    /// returns the bytes consumed.
    fn run(&mut self, dir: Dir, base: u64, buf: &[u8], out: &mut ParseOutput) -> usize {
        let mut at = 0usize;
        // Bounded: every step consumes bytes or changes state towards one that does;
        // a step that neither consumes nor progresses returns More.
        let mut guard = 0usize;
        loop {
            guard += 1;
            if guard > buf.len() * 4 + 64 {
                break;
            }
            let rest = &buf[at..];
            let st = self.dirs[dir.index()].st;
            self.dirs[dir.index()].at = base + at as u64;
            if rest.is_empty() && !matches!(st, St::Finalize) {
                break;
            }
            let step = match st {
                St::Stopped => {
                    if dir == Dir::ToClient
                        && let Some(sw) = self.switch.as_mut()
                        && sw.at.is_none()
                    {
                        sw.at = Some(base + at as u64);
                    }
                    return buf.len();
                }
                St::Held => {
                    self.held.extend_from_slice(rest);
                    return buf.len();
                }
                St::Idle => self.start_message(dir, rest, out),
                St::Line => self.line(dir, rest, out),
                St::Headers | St::Trailers => self.headers(dir, rest, out),
                St::BodyLength(n) => {
                    let take = usize::try_from(n).unwrap_or(usize::MAX).min(rest.len());
                    self.body_data(dir, &rest[..take], out);
                    let left = n - take as u64;
                    self.dirs[dir.index()].st = if left == 0 {
                        self.body_end(dir, out)
                    } else {
                        St::BodyLength(left)
                    };
                    Step::Go(take)
                }
                St::UntilClose => {
                    self.body_data(dir, rest, out);
                    Step::Go(rest.len())
                }
                St::ChunkSize => self.chunk_size(dir, rest, out),
                St::ChunkData(n) => {
                    let take = usize::try_from(n).unwrap_or(usize::MAX).min(rest.len());
                    self.body_data(dir, &rest[..take], out);
                    let left = n - take as u64;
                    self.dirs[dir.index()].st = if left == 0 {
                        St::ChunkDataEnd
                    } else {
                        St::ChunkData(left)
                    };
                    Step::Go(take)
                }
                St::ChunkDataEnd => match memchr::memchr(b'\n', rest) {
                    Some(i) => {
                        self.dirs[dir.index()].st = St::ChunkSize;
                        Step::Go(i + 1)
                    }
                    None => Step::Go(rest.len()),
                },
                St::Finalize => {
                    if rest.is_empty() {
                        let id = self.dirs[dir.index()].tx_id;
                        self.complete_msg(dir, id);
                        self.dirs[dir.index()].st = St::Idle;
                        break;
                    }
                    self.finalize(dir, rest)
                }
            };
            match step {
                Step::Go(n) => {
                    if self.frames && n > 0 {
                        self.keep_raw(dir, st, &rest[..n.min(rest.len())]);
                    }
                    at += n;
                    // A response that switched protocols ends here.
                    if self.dirs[dir.index()].st == St::Stopped
                        && dir == Dir::ToClient
                        && let Some(sw) = self.switch.as_mut()
                        && sw.at.is_none()
                    {
                        sw.at = Some(base + at as u64);
                    }
                }
                Step::More => break,
            }
        }
        at
    }

    /// Keeps `bytes`, just consumed in state `st`, for the frame of the message they
    /// belong to. Empty lines between requests end the previous request's frame (as
    /// Suricata's frames cut them); before the first request they start its frame.
    fn keep_raw(&mut self, dir: Dir, st: St, bytes: &[u8]) {
        let d = dir.index();
        if st == St::Stopped {
            return;
        }
        if st == St::Idle && self.dirs[d].messages == 0 {
            let p = &mut self.dirs[d];
            if p.lead_at.is_none() {
                p.lead_at = Some(p.at);
            }
            let room = MAX_FRAME_BYTES.saturating_sub(p.lead.len());
            p.lead.extend_from_slice(&bytes[..bytes.len().min(room)]);
            return;
        }
        let id = self.dirs[d].tx_id;
        if let Some(m) = self.msg_mut(dir, id) {
            m.frame.len += bytes.len() as u64;
            let room = MAX_FRAME_BYTES.saturating_sub(m.raw.len());
            m.raw.extend_from_slice(&bytes[..bytes.len().min(room)]);
        }
    }

    /// A message of `dir` starts in transaction `id` here: places its frame.
    fn begin_frame(&mut self, dir: Dir, id: u64) {
        let d = dir.index();
        let p = &mut self.dirs[d];
        p.messages += 1;
        let offset = p.lead_at.take().unwrap_or(p.at);
        let place = FramePlace {
            id: p.messages + 1,
            offset,
            len: p.at - offset,
        };
        let lead = std::mem::take(&mut p.lead);
        if let Some(m) = self.msg_mut(dir, id) {
            m.frame = place;
            m.raw = lead;
        }
    }

    /// Idle: a new message starts with this byte.
    fn start_message(&mut self, dir: Dir, rest: &[u8], out: &mut ParseOutput) -> Step {
        let d = dir.index();
        match dir {
            Dir::ToServer => {
                // Skip empty lines between requests.
                if let Some(l) = parser::next_line(rest, Side::Request, self.dirs[d].eof)
                    && parser::is_ignorable(&rest[..l.end])
                    && self.dirs[d].ignored < MAX_IGNORED_LINES
                {
                    self.dirs[d].ignored += 1;
                    return Step::Go(l.next);
                }
                if parser::next_line(rest, Side::Request, self.dirs[d].eof).is_none() {
                    return Step::More;
                }
                let Some(id) = self.new_tx(out) else {
                    self.dirs[d].st = St::Stopped;
                    return Step::Go(0);
                };
                self.dirs[d].tx_id = id;
                self.dirs[d].st = St::Line;
                self.begin_frame(dir, id);
                if let Some(m) = self.msg_mut(dir, id) {
                    m.progress = Progress::Line;
                }
                Step::Go(0)
            }
            Dir::ToClient => {
                // Pair with the oldest transaction whose response has not started.
                let waiting = self
                    .txs
                    .iter()
                    .find(|t| t.response.progress == Progress::NotStarted)
                    .map(|t| (t.id, t.request.version));
                let (id, version) = match waiting {
                    Some(w) => w,
                    None => {
                        let Some(id) = self.new_tx(out) else {
                            self.dirs[d].st = St::Stopped;
                            return Step::Go(0);
                        };
                        out.anomaly("http.unable_to_match_response_to_request");
                        if let Some(t) = self.tx_mut(id) {
                            // No request will come for it: its request side is over.
                            t.request_missing = true;
                            t.request.progress = Progress::Complete;
                        }
                        (id, None)
                    }
                };
                self.dirs[d].tx_id = id;
                self.begin_frame(dir, id);
                if version == Some(Version::V0_9) {
                    // An HTTP/0.9 response has no status line and no headers.
                    if let Some(m) = self.msg_mut(dir, id) {
                        m.progress = Progress::Body;
                        m.has_body = true;
                    }
                    self.dirs[d].st = St::UntilClose;
                } else {
                    if let Some(m) = self.msg_mut(dir, id) {
                        m.progress = Progress::Line;
                    }
                    self.dirs[d].st = St::Line;
                }
                Step::Go(0)
            }
        }
    }

    fn line(&mut self, dir: Dir, rest: &[u8], out: &mut ParseOutput) -> Step {
        let d = dir.index();
        let eof = self.dirs[d].eof;
        let Some(l) = parser::next_line(rest, side(dir), eof) else {
            return Step::More;
        };
        let line = &rest[..l.end];
        let id = self.dirs[d].tx_id;
        if parser::is_ignorable(line) {
            if self.dirs[d].ignored < MAX_IGNORED_LINES {
                self.dirs[d].ignored += 1;
                return Step::Go(l.next);
            }
            if dir == Dir::ToServer {
                out.anomaly("http.request_line_invalid");
            }
        }
        self.dirs[d].ignored = 0;
        match dir {
            Dir::ToServer => {
                let rl = parser::parse_request_line(line);
                if line.first().is_some_and(|&c| parser::is_space(c)) {
                    out.anomaly("http.request_line_leading_whitespace");
                }
                let version = if rl.protocol.is_empty() {
                    Version::V0_9
                } else {
                    parser::parse_version(rl.protocol)
                };
                // A line without a protocol is an HTTP/0.9 request, unless more lines
                // follow it: then, as libhtp, a request with headers whose protocol is
                // missing.
                let with_headers = rl.protocol.is_empty() && l.next < rest.len();
                if with_headers {
                    out.anomaly("http.request_line_missing_protocol");
                }
                let (method_delim, uri_delim) = parser::request_line_delims(line);
                if method_delim {
                    out.anomaly("http.method_delim_non_compliant");
                }
                if uri_delim {
                    out.anomaly("http.uri_delim_non_compliant");
                }
                let Some(tx) = self.tx_mut(id) else {
                    return Step::Go(l.next);
                };
                tx.method = rl.method.to_vec();
                tx.uri_raw = rl.uri.to_vec();
                (tx.uri_norm, tx.uri_path_len) = uri::normalize_with_path(rl.uri);
                let parts = uri::split(rl.uri);
                if let Some(h) = parts.host {
                    tx.host = Some(h.to_ascii_lowercase());
                    tx.port = parts
                        .port
                        .and_then(|p| std::str::from_utf8(p).ok()?.parse().ok());
                }
                tx.request.line = line.to_vec();
                tx.request.protocol = rl.protocol.to_vec();
                tx.request.version = Some(version);
                if version == Version::V0_9 && !with_headers {
                    // No headers, no body.
                    tx.request.progress = Progress::Complete;
                    self.dirs[d].st = St::Idle;
                } else {
                    tx.request.progress = Progress::Headers;
                    self.begin_headers(dir);
                }
                Step::Go(l.next)
            }
            Dir::ToClient => {
                if parser::response_line_is_body(line) {
                    // Browsers take a line that does not start like a status line as
                    // body (libhtp drops its line end). When more data follows in this
                    // call, a status line may still come; otherwise the body runs to the
                    // end of the connection. libhtp flags it only after an interim
                    // (100) response: a response that is all body is HTTP/0.9's.
                    if self.tx_mut(id).is_some_and(|t| t.interim > 0) {
                        out.anomaly("http.response_body_unexpected");
                    }
                    let more = l.next < rest.len();
                    if let Some(m) = self.msg_mut(dir, id) {
                        if !more {
                            m.progress = Progress::Body;
                        }
                        m.has_body = true;
                    }
                    self.body_data(dir, line, out);
                    if !more {
                        self.dirs[d].st = St::UntilClose;
                    }
                    return Step::Go(l.next);
                }
                let sl = parser::parse_status_line(line);
                let version = parser::parse_version(sl.protocol);
                if matches!(version, Version::Invalid | Version::Higher) {
                    out.anomaly("http.response_line_invalid_protocol");
                }
                let status = parser::parse_status(sl.status);
                if status.is_none() {
                    out.anomaly("http.response_line_invalid_response_status");
                }
                if let Some(tx) = self.tx_mut(id) {
                    tx.response.line = line.to_vec();
                    tx.response.protocol = sl.protocol.to_vec();
                    tx.response.version = Some(version);
                    tx.response.progress = Progress::Headers;
                    tx.response.headers.clear();
                    tx.response.headers_raw.clear();
                    tx.status_raw = sl.status.to_vec();
                    tx.status = status;
                    tx.status_msg = sl.message.to_vec();
                }
                self.begin_headers(dir);
                Step::Go(l.next)
            }
        }
    }

    fn begin_headers(&mut self, dir: Dir) {
        let d = dir.index();
        self.dirs[d].lines.clear();
        self.dirs[d].st = St::Headers;
    }

    /// Collects header (or trailer) lines up to the empty line that ends the block.
    fn headers(&mut self, dir: Dir, rest: &[u8], out: &mut ParseOutput) -> Step {
        let d = dir.index();
        let eof = self.dirs[d].eof;
        let sd = side(dir);
        let id = self.dirs[d].tx_id;
        let trailers = self.dirs[d].st == St::Trailers;
        let Some(l) = parser::next_line(rest, sd, eof) else {
            if eof && rest.is_empty() {
                return Step::More;
            }
            return Step::More;
        };
        let line = &rest[..l.end];
        let mut end_of_block = line.is_empty();
        let mut consumed = l.next;
        if end_of_block && sd == Side::Response && l.next == l.end + 1 && rest[l.end] == b'\r' {
            // libhtp's deformed end of line: CR LF, then CR and more CR/SP/HT (and an
            // optional LF) not followed by an end of line, is one end of line, not the
            // end of the headers.
            let prev_crlf = self
                .msg_mut(dir, id)
                .is_some_and(|m| m.headers_raw.ends_with(b"\r\n"));
            let after = &rest[l.next..];
            let k = after
                .iter()
                .take_while(|&&c| matches!(c, b'\r' | b' ' | b'\t'))
                .count();
            if prev_crlf && k > 0 {
                let mut j = k;
                if after.get(j) == Some(&b'\n') {
                    j += 1;
                }
                match after.get(j) {
                    None if !eof => return Step::More,
                    Some(b'\n') => {}
                    Some(b'\r') if after.get(j + 1) == Some(&b'\n') => {}
                    Some(b'\r') if after.get(j + 1).is_none() && !eof => return Step::More,
                    None => {}
                    Some(_) => {
                        consumed = l.next + j;
                        if let Some(m) = self.msg_mut(dir, id) {
                            m.headers_raw.extend_from_slice(&rest[..consumed]);
                        }
                        return Step::Go(consumed);
                    }
                }
            }
        }
        if !end_of_block && sd == Side::Response && parser::is_ignorable(line) {
            // A whitespace-only line: ignored when a header or a folded line follows;
            // the end of the headers otherwise, taking an empty line after it along
            // (libhtp's "terminator special case").
            let after = &rest[l.next..];
            match parser::next_line(after, sd, eof) {
                None if !eof => return Step::More,
                Some(n)
                    if looks_like_header_line(&after[..n.end])
                        || matches!(after.first(), Some(b' ' | b'\t' | 0)) && n.end > 0 =>
                {
                    if let Some(m) = self.msg_mut(dir, id) {
                        m.headers_raw.extend_from_slice(&rest[..consumed]);
                    }
                    return Step::Go(consumed);
                }
                Some(n) if n.end == 0 => {
                    end_of_block = true;
                    consumed = l.next + n.next;
                }
                _ => end_of_block = true,
            }
        }
        if end_of_block && !trailers && self.dirs[d].lines.is_empty() && dir == Dir::ToClient {
            // No headers at all: fine.
        }
        if let Some(m) = self.msg_mut(dir, id)
            && !trailers
        {
            if m.headers_raw.len() + consumed <= parser::MAX_HEADER_BLOCK {
                let start = m.headers_raw.len();
                m.headers_raw.extend_from_slice(&rest[..consumed]);
                if !end_of_block {
                    self.dirs[d].lines.push((start, start + l.end));
                }
            } else {
                out.anomaly(NAMES[d].field_too_long);
                end_of_block = true;
            }
        }
        if !end_of_block {
            return Step::Go(consumed);
        }
        if trailers {
            self.dirs[d].st = self.body_end(dir, out);
            return Step::Go(consumed);
        }
        self.headers_done(dir, out);
        Step::Go(consumed)
    }

    /// Parses the collected header lines and decides how the body is delimited.
    fn headers_done(&mut self, dir: Dir, out: &mut ParseOutput) {
        let d = dir.index();
        let id = self.dirs[d].tx_id;
        let lines = std::mem::take(&mut self.dirs[d].lines);
        let cfg = self.cfg;
        let Some(tx) = self.tx_mut(id) else {
            self.dirs[d].st = St::Idle;
            return;
        };
        let msg = match dir {
            Dir::ToServer => &mut tx.request,
            Dir::ToClient => &mut tx.response,
        };
        let slices: Vec<&[u8]> = lines
            .iter()
            .filter_map(|&(s, e)| msg.headers_raw.get(s..e))
            .collect();
        let mut raw_headers = Vec::new();
        let flags = parser::parse_headers(&slices, side(dir), &mut raw_headers);
        if flags.folding {
            out.anomaly(NAMES[d].folding);
        }
        if flags.missing_colon {
            out.anomaly(NAMES[d].missing_colon);
        }
        if flags.lws_after_name {
            out.anomaly(NAMES[d].lws_after_name);
        }
        if flags.invalid_name {
            out.anomaly(NAMES[d].header_invalid);
        }
        if flags.too_many {
            out.anomaly(NAMES[d].too_many_headers);
        }
        // Join duplicates as libhtp does, in place: the first `kept` entries are the
        // merged headers, in order of first appearance.
        let mut merged = raw_headers;
        let mut kept = 0usize;
        // libhtp flags each repeated name once (lines without a name repeat too). The
        // names seen repeated are kept only when there are some (rare).
        let mut repeated: Vec<usize> = Vec::new();
        for i in 0..merged.len() {
            let dup = (0..kept).find(|&j| parser::names_eq(merged[j].name(), merged[i].name()));
            match dup {
                Some(j) => {
                    if !repeated.contains(&j) && repeated.len() < parser::MAX_HEADERS {
                        repeated.push(j);
                    }
                    let h = std::mem::take(&mut merged[i]);
                    let m = &mut merged[j];
                    if !h.name().eq_ignore_ascii_case(b"content-length") {
                        m.append_value(b", ", h.value());
                    } else if parser::parse_content_length(m.value())
                        != parser::parse_content_length(h.value())
                    {
                        out.anomaly(NAMES[d].duplicate_cl);
                    }
                }
                None => {
                    merged.swap(kept, i);
                    kept += 1;
                }
            }
        }
        merged.truncate(kept);
        for _ in 0..repeated.len() {
            out.anomaly(NAMES[d].repetition);
        }
        msg.headers = merged;
        msg.buffers = HeaderBuffers::build(msg);
        msg.progress = Progress::Body;

        let te = msg.header(b"transfer-encoding").map(parser::without_nul);
        let cl_value = msg.header(b"content-length");
        // Some(parsed value) when the header is there (None inside: not a valid length).
        let cl = cl_value.map(parser::parse_content_length);
        let ce = msg.header(b"content-encoding").map(parser::without_nul);
        let chunked = te
            .as_deref()
            .is_some_and(|t| parser::contains_nocase(t, b"chunked"));
        if let Some(v) = cl_value {
            let (start, end) = parser::content_length_junk(v);
            if start {
                out.anomaly("http.content_length_extra_data_start");
            }
            if end {
                out.anomaly("http.content_length_extra_data_end");
            }
        }
        if ce.as_deref().is_some_and(parser::abnormal_content_encoding) {
            out.anomaly("http.abnormal_ce_header");
        }
        let old_proto = msg.version.is_some_and(|v| v < Version::V1_1);
        match dir {
            Dir::ToServer => {
                if chunked && old_proto {
                    out.anomaly("http.invalid_transfer_encoding_value_in_request");
                }
                if msg.version == Some(Version::V1_1) && msg.header(b"host").is_none() {
                    out.anomaly("http.missing_host_header");
                }
                if let Some(h) = msg.header(b"host") {
                    if parser::host_header_invalid(h) {
                        out.anomaly("http.request_header_host_invalid");
                    } else if let Some(uri_host) = tx.host.as_deref() {
                        // An absolute URI naming another host than the header.
                        let (name, _) = uri::split_host_port(parser::trim(h));
                        if !name.eq_ignore_ascii_case(uri_host) {
                            out.anomaly("http.host_header_ambiguous");
                        }
                    }
                }
                if msg
                    .header(b"authorization")
                    .is_some_and(parser::auth_unrecognized)
                {
                    out.anomaly("http.request_auth_unrecognized");
                }
            }
            Dir::ToClient => {
                if te
                    .as_deref()
                    .is_some_and(parser::abnormal_transfer_encoding)
                {
                    out.anomaly("http.response_abnormal_transfer_encoding");
                }
                if chunked && old_proto {
                    out.anomaly("http.response_chunked_old_proto");
                }
            }
        }

        let mut may_switch = false;
        let mut resume_held = false;
        let next = match dir {
            Dir::ToServer => {
                may_switch = tx.method.eq_ignore_ascii_case(b"CONNECT")
                    || tx.request.header(b"upgrade").is_some();
                if tx.host.is_none()
                    && let Some(h) = tx.request.header(b"host")
                {
                    let (host, port) = uri::split_host_port(parser::trim(h));
                    tx.host = Some(host.to_ascii_lowercase());
                    tx.port = port.and_then(|p| std::str::from_utf8(p).ok()?.parse().ok());
                }
                match framing(d, chunked, cl, out) {
                    Framing::Body(st) => st,
                    Framing::InvalidLength | Framing::Unframed => St::Idle,
                }
            }
            Dir::ToClient => {
                let connect = tx.method.eq_ignore_ascii_case(b"CONNECT");
                let head = tx.method.eq_ignore_ascii_case(b"HEAD");
                let status = tx.status;
                if status == Some(100) && te.is_none() && cl.is_none() {
                    // Interim response: the real one follows.
                    tx.interim += 1;
                    if tx.interim > MAX_INTERIM {
                        out.anomaly("http.100_continue_already_seen");
                    }
                    if tx.interim <= MAX_INTERIM {
                        tx.response.headers.clear();
                        tx.response.progress = Progress::Line;
                        self.dirs[d].st = St::Line;
                        return;
                    }
                }
                let connect_ok = connect && status.is_some_and(|s| (200..300).contains(&s));
                let tunnel = connect_ok || (status == Some(101) && te.is_none() && cl.is_none());
                if tunnel {
                    tx.response.progress = Progress::Complete;
                    tx.switched = !connect_ok;
                    let to = if connect_ok {
                        Some(None)
                    } else {
                        upgrade_target(
                            tx.response
                                .header(b"upgrade")
                                .or_else(|| tx.request.header(b"upgrade")),
                        )
                        .map(Some)
                    };
                    if let Some(to) = to {
                        self.switch = Some(Switch {
                            to,
                            tx: id,
                            at: None,
                            asked: false,
                        });
                    }
                    self.tunnel = true;
                    self.dirs[0].st = St::Stopped;
                    self.dirs[1].st = St::Stopped;
                    return;
                }
                // A request that could have switched did not: what followed it is HTTP.
                resume_held = true;
                let no_body = head
                    || (status.is_some_and(|s| (100..200).contains(&s) || s == 204 || s == 304)
                        && te.is_none()
                        && cl.is_none());
                if no_body {
                    St::Idle
                } else {
                    match framing(d, chunked, cl, out) {
                        Framing::Body(st) => st,
                        Framing::Unframed => St::UntilClose,
                        Framing::InvalidLength => {
                            // libhtp gives up on the stream here.
                            tx.response.progress = Progress::Complete;
                            self.dirs[d].st = St::Stopped;
                            return;
                        }
                    }
                }
            }
        };
        let Some(tx) = self.tx_mut(id) else {
            return;
        };
        let msg = match dir {
            Dir::ToServer => &mut tx.request,
            Dir::ToClient => &mut tx.response,
        };
        if next == St::Idle {
            msg.progress = Progress::Complete;
            msg.has_body = false;
        } else {
            msg.has_body = true;
            if let Some(ce) = ce {
                let layers = decompress::parse_content_encoding(&ce);
                if layers.len() > cfg.decode.layer_limit && cfg.decode.layer_limit > 0 {
                    out.anomaly("http.too_many_encoding_layers");
                }
                msg.decoder = Decoder::new(&layers, cfg.decode);
            }
            if let St::BodyLength(n) = next
                && msg.decoder.is_none()
            {
                // The kept body's final size is known: one allocation instead of a
                // chain of doublings (each copying what was kept so far).
                let n = usize::try_from(n).unwrap_or(usize::MAX);
                msg.body.reserve_exact(n.min(cfg.limit(dir)));
            }
        }
        self.dirs[d].st = match (dir, next) {
            (Dir::ToClient, St::Idle) => St::Finalize,
            (Dir::ToServer, St::Idle) if may_switch => St::Held,
            (_, n) => n,
        };
        if resume_held {
            self.unhold(out);
        }
    }

    fn chunk_size(&mut self, dir: Dir, rest: &[u8], out: &mut ParseOutput) -> Step {
        let d = dir.index();
        let Some(lf) = memchr::memchr(b'\n', rest) else {
            if !parser::chunk_len_prefix_ok(rest) {
                out.anomaly(NAMES[d].invalid_chunk_len);
                self.dirs[d].st = St::UntilClose;
                return Step::Go(0);
            }
            if self.dirs[d].eof {
                self.dirs[d].st = self.body_end(dir, out);
                return Step::Go(rest.len());
            }
            return Step::More;
        };
        let size_line = &rest[..lf];
        if parser::chunk_has_extension(size_line) {
            out.anomaly(NAMES[d].chunk_extension);
        }
        match parser::parse_chunk_len(size_line) {
            ChunkLen::Empty => Step::Go(lf + 1),
            ChunkLen::Size(0) => {
                self.dirs[d].st = St::Trailers;
                self.dirs[d].lines.clear();
                Step::Go(lf + 1)
            }
            ChunkLen::Size(n) => {
                self.dirs[d].st = St::ChunkData(n);
                Step::Go(lf + 1)
            }
            ChunkLen::Invalid => {
                // Not chunked after all: the rest is body until close (libhtp).
                out.anomaly(NAMES[d].invalid_chunk_len);
                self.dirs[d].st = St::UntilClose;
                Step::Go(0)
            }
        }
    }

    /// After a response body: lines that do not look like a status line are more of
    /// this body (libhtp's `res_finalize`); the response completes when a status line
    /// starts, when this call's data ends on a line boundary, or at the end of the stream.
    fn finalize(&mut self, dir: Dir, rest: &[u8]) -> Step {
        let d = dir.index();
        let id = self.dirs[d].tx_id;
        if dir == Dir::ToServer {
            self.complete_msg(dir, id);
            self.dirs[d].st = St::Idle;
            return Step::Go(0);
        }
        let eof = self.dirs[d].eof;
        let line = match memchr::memchr(b'\n', rest) {
            Some(lf) => &rest[..=lf],
            None if eof => rest,
            None => return Step::More,
        };
        if !parser::response_line_is_body(line) {
            self.complete_msg(dir, id);
            self.dirs[d].st = St::Idle;
            return Step::Go(0);
        }
        let (cfg, files) = (self.cfg, self.files);
        if let Some(m) = self.msg_mut(dir, id) {
            append_body(m, line, cfg.limit(dir), &files);
        }
        Step::Go(line.len())
    }

    fn body_data(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if data.is_empty() {
            return;
        }
        let id = self.dirs[dir.index()].tx_id;
        let limit = self.cfg.limit(dir);
        let cfg = self.files;
        if let Some(m) = self.msg_mut(dir, id)
            && dir == Dir::ToServer
            && m.body_len == 0
            && m.multipart.is_none()
            && let Some(b) = m
                .header(b"content-type")
                .and_then(super::multipart::boundary)
        {
            m.multipart = Some(Box::new(super::multipart::Multipart::new(b)));
        }
        // Suricata checks a response's Content-Range as its body begins.
        if dir == Dir::ToClient
            && let Some(m) = self.msg_mut(dir, id)
            && m.body_len == 0
            && m.header(b"content-range")
                .is_some_and(super::detect::range_invalid)
        {
            out.anomaly("http.range_invalid");
        }
        if cfg.track {
            // Moved out while the transaction is borrowed (no count taken per chunk).
            let ranges = self.ranges.take();
            if let Some(tx) = self.tx_mut(id) {
                open_file(tx, dir, &cfg, ranges.as_ref());
            }
            self.ranges = ranges;
        }
        if let Some(m) = self.msg_mut(dir, id) {
            m.body_len += data.len() as u64;
            let (bomb_before, failed_before) = m
                .decoder
                .as_ref()
                .map(|d| (d.flags.bomb, d.flags.failed))
                .unwrap_or_default();
            append_body(m, data, limit, &cfg);
            if let Some(dec) = &m.decoder {
                if dec.flags.bomb && !bomb_before {
                    out.anomaly("http.compression_bomb");
                }
                if dec.flags.failed && !failed_before {
                    out.anomaly("http.gzip_decompression_failed");
                }
            }
        }
    }

    /// The body of the message in `dir` ended; returns the next state (a response is
    /// completed by [`Self::finalize`]).
    fn body_end(&mut self, dir: Dir, _out: &mut ParseOutput) -> St {
        let id = self.dirs[dir.index()].tx_id;
        match dir {
            Dir::ToServer => {
                self.complete_msg(dir, id);
                St::Idle
            }
            Dir::ToClient => St::Finalize,
        }
    }

    fn complete_msg(&mut self, dir: Dir, id: u64) {
        let limit = self.cfg.limit(dir);
        let cfg = self.files;
        if let Some(m) = self.msg_mut(dir, id) {
            if let Some(mut dec) = m.decoder.take() {
                let room = limit.saturating_sub(m.body.len());
                let before = m.body.len();
                dec.finish(&mut m.body, room);
                if m.body.len() > before {
                    let Message {
                        body,
                        files,
                        multipart,
                        ..
                    } = m;
                    feed_parts(files, multipart, &body[before..], &cfg);
                }
            }
            // A file part without its closing delimiter ended with the body.
            let cut = m.multipart.as_deref().is_some_and(|mp| mp.in_file());
            m.files.end_current(if cut {
                FileState::Truncated
            } else {
                FileState::Closed
            });
            m.progress = Progress::Complete;
        }
    }

    /// Ends the file of the message in `dir` as truncated (its body stopped short).
    fn truncate_file(&mut self, dir: Dir) {
        let id = self.dirs[dir.index()].tx_id;
        if let Some(m) = self.msg_mut(dir, id) {
            m.files.end_current(FileState::Truncated);
        }
    }
}

fn looks_like_header_line(l: &[u8]) -> bool {
    let n = l
        .iter()
        .take_while(|&&c| c.is_ascii_graphic() && c != b':')
        .count();
    n > 0 && l.get(n) == Some(&b':')
}

/// Opens the file of the body of `tx` in `dir`, unless it has one: named as Suricata
/// names HTTP/1 files (see [`super::detect::file_name`]).
fn open_file(
    tx: &mut HttpTx,
    dir: Dir,
    cfg: &FileConfig,
    ranges: Option<&crate::files::range::Shared>,
) {
    // A multipart upload's files are its file parts (opened as they come).
    if !tx.message(dir).files.as_slice().is_empty() || tx.message(dir).multipart.is_some() {
        return;
    }
    let name = super::detect::file_name_of(tx, dir).unwrap_or_default();
    // The name borrows the transaction: copy it out before the message is borrowed
    // mutably (a name is at most MAX_FILE_NAME bytes, once per file).
    let name = name[..name.len().min(crate::files::MAX_FILE_NAME)].to_vec();
    let m = match dir {
        Dir::ToServer => &mut tx.request,
        Dir::ToClient => &mut tx.response,
    };
    // A part of a larger file (206 Partial Content) logs its range, and goes to the
    // reassembly of that file (by host and name) when there is a host.
    let range = match dir {
        Dir::ToClient => m
            .header(b"content-range")
            .and_then(super::detect::content_range),
        Dir::ToServer => None,
    };
    if let Some(f) = m.files.open(&name, cfg)
        && let Some((start, end, total)) = range
    {
        f.range = Some((start, end));
        if let (Some(table), Some(host)) = (ranges, tx.host.as_deref()) {
            let mut key = Vec::with_capacity(host.len() + name.len());
            key.extend_from_slice(host);
            key.extend_from_slice(&name);
            f.range_block = crate::files::range::open(table, &key, &name, cfg, (start, end, total))
                .map(Box::new);
        }
    }
}

/// Keeps body bytes for inspection (up to `limit`) and feeds them to the message's open
/// file: the bytes as received, or as decoded when the body is compressed (decoded
/// bytes past the body limit are not produced, so such a file ends at the limit).
fn append_body(m: &mut Message, data: &[u8], limit: usize, cfg: &FileConfig) {
    if m.decoder.is_none() {
        feed_files(m, data, cfg);
    }
    let room = limit.saturating_sub(m.body.len());
    if room == 0 {
        m.body_truncated = true;
        return;
    }
    match &mut m.decoder {
        Some(dec) => {
            let before = m.body.len();
            if !dec.feed(data, &mut m.body, room) && m.body.len() >= limit {
                m.body_truncated = true;
            }
            if m.body.len() > before {
                // Decoded bytes go to the files as they are kept (`before..`); split
                // borrows: the body is read while the files change.
                let Message {
                    body,
                    files,
                    multipart,
                    ..
                } = m;
                feed_parts(files, multipart, &body[before..], cfg);
            }
        }
        None => {
            let take = data.len().min(room);
            m.body.extend_from_slice(&data[..take]);
            if take < data.len() {
                m.body_truncated = true;
            }
        }
    }
    if m.body.len() >= limit {
        m.body_truncated = true;
    }
}

/// Body bytes to the message's files: the one file of the body, or, for a multipart
/// upload, the file parts they belong to.
fn feed_files(m: &mut Message, data: &[u8], cfg: &FileConfig) {
    feed_parts(&mut m.files, &mut m.multipart, data, cfg);
}

fn feed_parts(
    files: &mut Files,
    multipart: &mut Option<Box<super::multipart::Multipart>>,
    data: &[u8],
    cfg: &FileConfig,
) {
    use super::multipart::Event;
    match multipart.as_deref_mut() {
        Some(mp) => mp.feed(data, |e| match e {
            Event::Open(name) => {
                if cfg.track {
                    files.open(name, cfg);
                }
            }
            Event::Data(d) => {
                if let Some(f) = files.current() {
                    f.append(d);
                }
            }
            Event::Close => files.end_current(FileState::Closed),
        }),
        None => {
            if let Some(f) = files.current() {
                f.append(data);
            }
        }
    }
}

impl AppState for HttpState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if data.is_empty() {
            return;
        }
        self.feed(dir, data, out);
    }

    fn gap(&mut self, dir: Dir, len: u64, out: &mut ParseOutput) {
        let d = dir.index();
        self.dirs[d].seen += len;
        if self.frames && !matches!(self.dirs[d].st, St::Idle | St::Stopped | St::Held) {
            let id = self.dirs[d].tx_id;
            if let Some(m) = self.msg_mut(dir, id) {
                m.frame.len += len;
            }
        }
        let id = self.dirs[d].tx_id;
        match self.dirs[d].st {
            St::BodyLength(n) => {
                if let Some(m) = self.msg_mut(dir, id) {
                    m.body_gap = true;
                    m.decoder = None;
                    if let Some(mp) = m.multipart.as_deref_mut() {
                        mp.abandon();
                    }
                    if let Some(f) = m.files.current() {
                        f.gap(len.min(n));
                    }
                }
                if len >= n {
                    self.dirs[d].st = self.body_end(dir, out);
                } else {
                    self.dirs[d].st = St::BodyLength(n - len);
                }
            }
            St::ChunkData(n) if len < n => {
                if let Some(m) = self.msg_mut(dir, id) {
                    m.body_gap = true;
                    m.decoder = None;
                    if let Some(mp) = m.multipart.as_deref_mut() {
                        mp.abandon();
                    }
                    if let Some(f) = m.files.current() {
                        f.gap(len);
                    }
                }
                self.dirs[d].st = St::ChunkData(n - len);
            }
            St::UntilClose => {
                if let Some(m) = self.msg_mut(dir, id) {
                    m.body_gap = true;
                    m.decoder = None;
                    if let Some(mp) = m.multipart.as_deref_mut() {
                        mp.abandon();
                    }
                    if let Some(f) = m.files.current() {
                        f.gap(len);
                    }
                }
            }
            St::Idle | St::Stopped => {}
            // The held bytes cannot go on to another protocol across a gap.
            St::Held => {
                self.held = Vec::new();
                self.dirs[d].st = St::Idle;
            }
            _ => {
                // A gap inside a line or header block: the message cannot be parsed on
                // (Suricata has no event for it).
                self.dirs[d].pending.clear();
                self.truncate_file(dir);
                self.stop_dir(dir);
            }
        }
    }

    fn eof(&mut self, dir: Dir, out: &mut ParseOutput) {
        let d = dir.index();
        if self.dirs[d].eof {
            return;
        }
        self.dirs[d].eof = true;
        if self.dirs[d].st == St::Held {
            // The client is done without a response: what it held back is HTTP.
            self.unhold(out);
        }
        if self.dirs[d].st != St::Stopped {
            let buf = std::mem::take(&mut self.dirs[d].pending);
            let base = self.dirs[d].seen - buf.len() as u64;
            let n = self.run(dir, base, &buf, out);
            let _ = n;
        }
        let st = self.dirs[d].st;
        let id = self.dirs[d].tx_id;
        if matches!(
            st,
            St::BodyLength(_) | St::ChunkSize | St::ChunkData(_) | St::ChunkDataEnd
        ) {
            // The stream ended inside a framed body: its file is cut short.
            self.truncate_file(dir);
        }
        match st {
            St::Idle | St::Stopped | St::Held => {}
            St::Headers => {
                self.headers_done(dir, out);
                let id = self.dirs[d].tx_id;
                self.complete_msg(dir, id);
            }
            _ => self.complete_msg(dir, id),
        }
        self.dirs[d].st = St::Stopped;
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn set_files(&mut self, cfg: FileConfig) {
        self.files = cfg;
    }

    fn set_frames(&mut self, used: &[crate::BufferId]) {
        use super::detect::{FRAME_REQUEST, FRAME_RESPONSE};
        self.frames = used
            .iter()
            .any(|&b| b == FRAME_REQUEST || b == FRAME_RESPONSE);
    }

    /// The request that switched to HTTP/2 (`Upgrade: h2c`), for its stream 1.
    fn handover(&mut self) -> Option<crate::Handover> {
        let sw = self.switch?;
        if sw.to != Some(crate::AppProto::Http2) {
            return None;
        }
        let tx = self.txs.iter().find(|t| t.id == sw.tx)?;
        let req = &tx.request;
        Some(crate::Handover::Http1Request {
            method: tx.method.clone(),
            uri: tx.uri_raw.clone(),
            headers: req
                .headers
                .iter()
                .map(|h| (h.name().to_vec(), h.value().to_vec()))
                .collect(),
        })
    }

    fn tx_files_mut(&mut self, index: usize, dir: Dir) -> Option<&mut Files> {
        let t = self.txs.get_mut(index)?;
        Some(match dir {
            Dir::ToServer => &mut t.request.files,
            Dir::ToClient => &mut t.response.files,
        })
    }

    fn free_below(&mut self, id: u64) {
        while let Some(t) = self.txs.front() {
            // Never free a transaction a direction is still parsing into.
            let busy = self
                .dirs
                .iter()
                .any(|p| !matches!(p.st, St::Idle | St::Stopped | St::Held) && p.tx_id == t.id);
            if t.id < id && !busy {
                self.txs.pop_front();
            } else {
                break;
            }
        }
        self.txs.release_if_empty();
    }
}

impl HttpTx {
    pub fn message(&self, dir: Dir) -> &Message {
        match dir {
            Dir::ToServer => &self.request,
            Dir::ToClient => &self.response,
        }
    }

    pub(crate) fn body_done(&self, dir: Dir) -> bool {
        self.message(dir).body_done()
    }
}
