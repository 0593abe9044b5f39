//! The per-connection HTTP/2 state: the preface, frames of each direction (streamed
//! DATA, buffered others, HEADERS + CONTINUATION reassembly), HPACK decoding, and the
//! transactions: one per stream, and one per frame of stream 0 (Suricata's "global"
//! transactions, for SETTINGS, WINDOW_UPDATE, PING and GOAWAY).

use std::collections::VecDeque;

use super::frame::{self, Header as FrameHeader};
use super::hpack::{self, Header};
use crate::files::{FileConfig, FileState, Files};
use crate::http::decompress::{self, DecodeLimits, Decoder as BodyDecoder};
use crate::{AppState, Dir, ParseOutput, Transaction, free_txs_below};

/// Suricata's `max-streams` default: live transactions per flow.
pub const DEFAULT_MAX_STREAMS: usize = 4096;
/// Suricata's `max-reassembly-size` default: a header block (HEADERS + CONTINUATION).
pub const DEFAULT_MAX_REASSEMBLY: usize = 102_400;
/// Suricata's `max-table-size` default: the HPACK dynamic table.
pub const DEFAULT_MAX_TABLE_SIZE: usize = 65_536;
/// Largest non-DATA frame buffered; a longer one is skipped (`invalid_frame_length`).
pub const MAX_FRAME_BUFFER: usize = 1 << 20;
/// Most CONTINUATION frames of one header block.
pub const MAX_CONTINUATIONS: usize = 64;
/// Most frame types, settings, window updates... remembered per transaction side.
pub const MAX_FRAMES_PER_TX: usize = 256;
/// Most body bytes kept for inspection per transaction side (`file.data`,
/// `http.request_body`, `http.response_body`).
pub const MAX_BODY: usize = 1 << 20;
/// Longest DNS message a DoH body may carry (`dns_request_too_long`,
/// `dns_response_too_long` beyond it).
pub const MAX_DNS_MESSAGE: usize = 65_535;

/// The parser's settings (`app-layer.protocols.http2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Http2Config {
    pub max_streams: usize,
    pub max_reassembly: usize,
    pub max_table_size: usize,
}

impl Default for Http2Config {
    fn default() -> Self {
        Http2Config {
            max_streams: DEFAULT_MAX_STREAMS,
            max_reassembly: DEFAULT_MAX_REASSEMBLY,
            max_table_size: DEFAULT_MAX_TABLE_SIZE,
        }
    }
}

/// One direction of a transaction.
#[derive(Debug, Default)]
pub struct Side {
    /// Decoded headers, in order (pseudo-headers included).
    pub headers: Vec<Header>,
    /// A header block was decoded.
    pub headers_done: bool,
    /// Types of the frames seen (DATA and WINDOW_UPDATE excepted, as Suricata keeps
    /// them).
    pub frames: Vec<u8>,
    pub settings: Vec<(u16, u32)>,
    pub error_code: Option<u32>,
    pub error_goaway: bool,
    pub multiple_error: bool,
    pub priority: Option<u8>,
    pub multiple_priority: bool,
    pub windows: Vec<u32>,
    pub size_updates: Vec<u64>,
    /// Where each size update came among the headers (index of the header it
    /// preceded), for EVE's `table_size_update` entries.
    pub size_update_at: Vec<(usize, u64)>,
    /// The body (decoded), up to [`MAX_BODY`].
    pub body: Vec<u8>,
    pub body_seen: bool,
    pub end_stream: bool,
    pub files: Files,
    decoder: Option<BodyDecoder>,
    decoder_checked: bool,
    dns: bool,
    dns_len: usize,
    /// Buffers built when the headers are in: `http.header` (`Name: value\r\n`, no
    /// pseudo-headers), `http.header_names`, and one `name: value` item per header.
    pub header_buf: Vec<u8>,
    pub header_names: Vec<u8>,
    pub header_items: Vec<Vec<u8>>,
    pub host: Vec<u8>,
    pub request_line: Vec<u8>,
}

impl Side {
    /// The value of the first header named `name` (lowercase, as HTTP/2 sends them).
    pub fn header(&self, name: &[u8]) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| &h.value[..])
    }

    /// The value of the first header named exactly `name` (the keywords' lookup, as
    /// Suricata's: an upgrade request's `User-Agent` is not `user-agent`).
    pub fn header_exact(&self, name: &[u8]) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name == name)
            .map(|h| &h.value[..])
    }

    fn push_frame(&mut self, t: u8) {
        if self.frames.len() < MAX_FRAMES_PER_TX {
            self.frames.push(t);
        }
    }

    fn build_buffers(&mut self, request: bool) {
        self.header_buf.clear();
        self.header_names.clear();
        self.header_items.clear();
        self.header_names.extend_from_slice(b"\r\n");
        for h in &self.headers {
            let mut item = Vec::with_capacity(h.name.len() + 2 + h.value.len());
            item.extend_from_slice(&h.name);
            item.extend_from_slice(b": ");
            item.extend_from_slice(&h.value);
            self.header_items.push(item);
            if h.name.first() == Some(&b':') {
                continue;
            }
            self.header_buf.extend_from_slice(&h.name);
            self.header_buf.extend_from_slice(b": ");
            self.header_buf.extend_from_slice(&h.value);
            self.header_buf.extend_from_slice(b"\r\n");
            self.header_names.extend_from_slice(&h.name);
            self.header_names.extend_from_slice(b"\r\n");
        }
        self.header_names.extend_from_slice(b"\r\n");
        if request {
            let auth = self.header(b":authority").or_else(|| self.header(b"host"));
            if let Some(a) = auth {
                let a = a.rsplit(|&c| c == b'@').next().unwrap_or(a);
                let end = if a.first() == Some(&b'[') {
                    a.iter().position(|&c| c == b']').map_or(a.len(), |p| p + 1)
                } else {
                    a.iter().position(|&c| c == b':').unwrap_or(a.len())
                };
                self.host = a[..end].to_ascii_lowercase();
            }
            let mut line = Vec::new();
            line.extend_from_slice(self.header(b":method").unwrap_or_default());
            line.push(b' ');
            line.extend_from_slice(self.header(b":path").unwrap_or_default());
            line.extend_from_slice(b" HTTP/2");
            self.request_line = line;
        }
        self.dns = self
            .header(b"content-type")
            .is_some_and(|v| v.eq_ignore_ascii_case(b"application/dns-message"));
    }
}

/// Where a stream is (RFC 9113 section 5.1, as far as the transaction needs it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamState {
    #[default]
    Open,
    /// Reset (RST_STREAM seen).
    Reset,
}

/// One transaction: a stream, or one frame of stream 0.
#[derive(Debug, Default)]
pub struct Http2Tx {
    pub id: u64,
    pub stream_id: u32,
    pub state: StreamState,
    /// [to_server, to_client].
    pub sides: [Side; 2],
    /// The DNS messages the stream carried (DNS over HTTP/2): the request's (its body,
    /// or a GET's `dns` parameter) and the response's.
    pub doh: Option<Box<crate::dns::state::DnsTx>>,
}

impl Http2Tx {
    pub fn side(&self, dir: Dir) -> &Side {
        &self.sides[dir.index()]
    }

    /// A transaction of stream 0: complete as soon as made.
    pub fn global(&self) -> bool {
        self.stream_id == 0
    }

    pub fn done(&self, dir: Dir) -> bool {
        self.global() || self.state == StreamState::Reset || self.sides[dir.index()].end_stream
    }
}

/// A header block being reassembled from HEADERS and CONTINUATION frames.
#[derive(Debug, Default)]
struct Block {
    stream_id: u32,
    end_stream: bool,
    /// A PUSH_PROMISE's block: decoded (to keep the table in step) and dropped.
    promise: bool,
    continuations: usize,
    bytes: Vec<u8>,
    active: bool,
}

/// A DATA frame being streamed.
#[derive(Debug, Default, Clone, Copy)]
struct DataFrame {
    stream_id: u32,
    /// Bytes of the frame left (padding included).
    left: usize,
    /// Padding at the end of the frame.
    pad: usize,
    /// The pad-length byte is still to be read.
    need_pad_len: bool,
    end_stream: bool,
    /// Bytes of this frame that feed the body (a long frame: those of its first call).
    take: usize,
}

/// One direction's frame reader.
#[derive(Debug, Default)]
struct Reader {
    /// Bytes of the preface still to check (to-server only).
    preface_left: usize,
    hdr: [u8; frame::HEADER_LEN],
    hdr_len: usize,
    /// The current non-DATA frame and its payload so far.
    cur: Option<FrameHeader>,
    payload: Vec<u8>,
    /// Bytes of an oversized frame left to skip.
    skip: usize,
    data: Option<DataFrame>,
    block: Block,
    hpack: hpack::Decoder,
    /// The largest frame the receiver of this direction allows (its SETTINGS).
    max_frame: u32,
    /// A gap: frames are lost until the flow ends.
    lost: bool,
}

/// One connection's state.
#[derive(Debug)]
pub struct Http2State {
    cfg: Http2Config,
    files: FileConfig,
    readers: [Reader; 2],
    txs: VecDeque<Http2Tx>,
    next_id: u64,
    scratch: Vec<u8>,
    headers_scratch: Vec<Header>,
    /// An anomaly of the HTTP/1 upgrade this state took over (raised with the first
    /// data, which has a [`ParseOutput`]).
    pending_anomaly: Option<&'static str>,
    /// A stream carried a DNS message: the flow was handed to `doh2`.
    doh: bool,
}

impl Http2State {
    pub fn new(cfg: Http2Config) -> Http2State {
        let mut s = Http2State {
            cfg,
            files: FileConfig::default(),
            readers: Default::default(),
            txs: VecDeque::new(),
            next_id: 0,
            scratch: Vec::new(),
            headers_scratch: Vec::new(),
            pending_anomaly: None,
            doh: false,
        };
        s.readers[0].preface_left = frame::PREFACE.len();
        for r in &mut s.readers {
            r.max_frame = frame::DEFAULT_MAX_FRAME_SIZE;
        }
        s
    }

    pub fn txs(&self) -> &VecDeque<Http2Tx> {
        &self.txs
    }

    fn new_tx(&mut self, stream_id: u32) -> &mut Http2Tx {
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(Http2Tx {
            id,
            stream_id,
            ..Http2Tx::default()
        });
        self.txs.back_mut().expect("just pushed")
    }

    /// The transaction of stream `sid` for a frame of type `ftype`: the stream's newest
    /// one, or a new one (a new stream, or a reset stream's HEADERS/RST_STREAM).
    fn stream_tx(&mut self, sid: u32, ftype: u8, out: &mut ParseOutput) -> Option<usize> {
        let found = self.txs.iter().rposition(|t| t.stream_id == sid);
        if let Some(i) = found {
            let t = &self.txs[i];
            let reused = t.state == StreamState::Reset && ftype == frame::HEADERS;
            if !reused {
                return Some(i);
            }
        }
        if self.txs.len() >= self.cfg.max_streams {
            out.anomaly("http2.too_many_streams");
            return None;
        }
        self.new_tx(sid);
        Some(self.txs.len() - 1)
    }

    fn global_tx(&mut self, out: &mut ParseOutput) -> Option<usize> {
        if self.txs.len() >= self.cfg.max_streams {
            out.anomaly("http2.too_many_streams");
            return None;
        }
        self.new_tx(0);
        Some(self.txs.len() - 1)
    }

    fn parse_dir(&mut self, dir: Dir, mut data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.readers[d].lost {
            return;
        }
        // The client's preface.
        if self.readers[d].preface_left > 0 {
            let at = frame::PREFACE.len() - self.readers[d].preface_left;
            let n = self.readers[d].preface_left.min(data.len());
            if data[..n] != frame::PREFACE[at..at + n] {
                out.anomaly("http2.invalid_client_magic");
                self.readers[d].preface_left = 0;
                self.readers[d].lost = true;
                return;
            }
            self.readers[d].preface_left -= n;
            data = &data[n..];
        }
        while !data.is_empty() {
            let r = &mut self.readers[d];
            if r.skip > 0 {
                let n = r.skip.min(data.len());
                r.skip -= n;
                data = &data[n..];
                continue;
            }
            if let Some(df) = r.data {
                data = self.data_bytes(dir, df, data, out);
                continue;
            }
            if let Some(h) = r.cur {
                let want = h.length as usize - r.payload.len();
                let n = want.min(data.len());
                r.payload.extend_from_slice(&data[..n]);
                data = &data[n..];
                if r.payload.len() == h.length as usize {
                    r.cur = None;
                    let payload = std::mem::take(&mut self.readers[d].payload);
                    self.frame(dir, h, &payload, out);
                    let r = &mut self.readers[d];
                    r.payload = payload;
                    r.payload.clear();
                    if r.payload.capacity() > 64 * 1024 {
                        r.payload = Vec::new();
                    }
                }
                continue;
            }
            // A frame header.
            let n = (frame::HEADER_LEN - r.hdr_len).min(data.len());
            r.hdr[r.hdr_len..r.hdr_len + n].copy_from_slice(&data[..n]);
            r.hdr_len += n;
            data = &data[n..];
            if r.hdr_len < frame::HEADER_LEN {
                break;
            }
            r.hdr_len = 0;
            let Some(h) = frame::header(&r.hdr) else {
                break;
            };
            self.start_frame(dir, h, data.len(), out);
        }
    }

    /// A frame header was read; `avail` bytes of the call follow it.
    fn start_frame(&mut self, dir: Dir, h: FrameHeader, avail: usize, out: &mut ParseOutput) {
        let d = dir.index();
        let r = &mut self.readers[d];
        let len = h.length as usize;
        if r.block.active && h.ftype != frame::CONTINUATION {
            // A header block must continue with CONTINUATION frames only.
            out.anomaly("http2.invalid_frame_header");
            r.block = Block::default();
        }
        if h.ftype == frame::DATA {
            if h.stream_id == 0 {
                out.anomaly("http2.data_stream_zero");
            }
            let mut take = usize::MAX;
            if h.length > r.max_frame {
                out.anomaly("http2.long_frame_data");
                // As Suricata: the part of a long frame in this call feeds the body,
                // the rest is skipped.
                take = avail;
            }
            let padded = h.flags & frame::FLAG_PADDED != 0;
            if padded && len == 0 {
                out.anomaly("http2.invalid_frame_length");
                return;
            }
            r.data = Some(DataFrame {
                stream_id: h.stream_id,
                left: len,
                pad: 0,
                need_pad_len: padded,
                end_stream: h.flags & frame::FLAG_END_STREAM != 0,
                take,
            });
            if len == 0 {
                self.data_end(dir, h.stream_id, h.flags & frame::FLAG_END_STREAM != 0, out);
                self.readers[d].data = None;
            }
            return;
        }
        if len > MAX_FRAME_BUFFER {
            out.anomaly("http2.invalid_frame_length");
            r.skip = len;
            return;
        }
        if len == 0 {
            self.frame(dir, h, &[], out);
            return;
        }
        r.cur = Some(h);
        r.payload.clear();
    }

    /// Bytes of the DATA frame being streamed; returns what follows the frame.
    fn data_bytes<'a>(
        &mut self,
        dir: Dir,
        mut df: DataFrame,
        mut data: &'a [u8],
        out: &mut ParseOutput,
    ) -> &'a [u8] {
        let d = dir.index();
        if df.need_pad_len {
            df.pad = usize::from(data[0]);
            df.need_pad_len = false;
            df.left -= 1;
            data = &data[1..];
            if df.pad > df.left {
                out.anomaly("http2.invalid_frame_length");
                df.pad = df.left;
            }
        }
        let body_left = df.left.saturating_sub(df.pad);
        let n = body_left.min(data.len());
        let feed = n.min(df.take);
        df.take = df.take.saturating_sub(feed);
        if feed > 0 {
            self.body(dir, df.stream_id, &data[..feed], out);
        }
        df.left -= n;
        data = &data[n..];
        if df.left <= df.pad {
            let p = df.left.min(data.len());
            df.left -= p;
            data = &data[p..];
        }
        if df.left == 0 {
            self.readers[d].data = None;
            self.data_end(dir, df.stream_id, df.end_stream, out);
        } else {
            self.readers[d].data = Some(df);
        }
        data
    }

    fn data_end(&mut self, dir: Dir, sid: u32, end_stream: bool, out: &mut ParseOutput) {
        // Each whole frame lets stream rules see it, as Suricata's parser asks.
        out.trigger_raw(dir);
        if sid == 0 {
            return;
        }
        if let Some(i) = self.stream_tx(sid, frame::DATA, out) {
            self.txs[i].sides[dir.index()].body_seen = true;
            if end_stream {
                self.end_side(i, dir, out);
            }
        }
    }

    /// Body bytes of stream `sid`: decoded, kept, and given to the file layer.
    fn body(&mut self, dir: Dir, sid: u32, bytes: &[u8], out: &mut ParseOutput) {
        if sid == 0 {
            return;
        }
        let Some(i) = self.stream_tx(sid, frame::DATA, out) else {
            return;
        };
        let files_cfg = self.files;
        let tx = &mut self.txs[i];
        let path = tx.sides[0].header(b":path").map(<[u8]>::to_vec);
        let side = &mut tx.sides[dir.index()];
        side.body_seen = true;
        if side.dns {
            side.dns_len += bytes.len();
            if side.dns_len > MAX_DNS_MESSAGE && side.dns_len - bytes.len() <= MAX_DNS_MESSAGE {
                out.anomaly(match dir {
                    Dir::ToServer => "http2.dns_request_too_long",
                    Dir::ToClient => "http2.dns_response_too_long",
                });
            }
        }
        if !side.decoder_checked {
            side.decoder_checked = true;
            if let Some(ce) = side.header(b"content-encoding") {
                let layers = decompress::parse_content_encoding(ce);
                side.decoder = BodyDecoder::new(&layers, DecodeLimits::default());
            }
            if files_cfg.track {
                let name = path.unwrap_or_default();
                side.files.open(&name, &files_cfg);
            }
            // The body's room at once (what `content-length` announces, within
            // MAX_BODY), so that a large body is not copied again each time the
            // buffer doubles.
            let announced = side
                .header(b"content-length")
                .and_then(|v| std::str::from_utf8(v).ok()?.trim().parse::<usize>().ok())
                .unwrap_or(0);
            side.body.reserve(announced.min(MAX_BODY));
        }
        let decoded: &[u8] = match side.decoder.as_mut() {
            Some(dec) => {
                self.scratch.clear();
                dec.feed(bytes, &mut self.scratch, MAX_BODY);
                if dec.flags.bomb {
                    out.anomaly("http2.compression_bomb");
                    dec.flags.bomb = false;
                }
                if dec.flags.failed {
                    out.anomaly("http2.failed_decompression");
                    dec.flags.failed = false;
                }
                &self.scratch
            }
            None => bytes,
        };
        let room = MAX_BODY.saturating_sub(side.body.len());
        side.body
            .extend_from_slice(&decoded[..decoded.len().min(room)]);
        if let Some(f) = side.files.current() {
            f.append(decoded);
        }
    }

    /// A DNS message of transaction `i` in `dir`: kept for the `dns.*` buffers and
    /// the record, and the first one makes the flow `doh2` (its state going on).
    fn set_doh(
        &mut self,
        i: usize,
        dir: Dir,
        m: crate::dns::parser::Message,
        out: &mut ParseOutput,
    ) {
        let Some(tx) = self.txs.get_mut(i) else {
            return;
        };
        let d = tx.doh.get_or_insert_with(Default::default);
        match dir {
            Dir::ToServer => d.request = Some(m),
            Dir::ToClient => d.response = Some(m),
        }
        if !self.doh {
            self.doh = true;
            out.change_protocol(crate::ProtoChange {
                to: Some(crate::AppProto::Doh2),
                keep_state: true,
                ..Default::default()
            });
        }
    }

    /// Direction `dir` of transaction `i` ended (END_STREAM).
    fn end_side(&mut self, i: usize, dir: Dir, out: &mut ParseOutput) {
        let side = &mut self.txs[i].sides[dir.index()];
        if side.end_stream {
            return;
        }
        side.end_stream = true;
        if let Some(dec) = side.decoder.as_mut() {
            self.scratch.clear();
            dec.finish(&mut self.scratch, MAX_BODY);
            let room = MAX_BODY.saturating_sub(side.body.len());
            side.body
                .extend_from_slice(&self.scratch[..self.scratch.len().min(room)]);
            if let Some(f) = side.files.current() {
                f.append(&self.scratch);
            }
        }
        side.files.end_current(FileState::Closed);
        // A DNS message body (RFC 8484 section 4.1), parsed by the DNS module.
        let side = &self.txs[i].sides[dir.index()];
        if side.dns
            && side.dns_len <= MAX_DNS_MESSAGE
            && let Some(m) = crate::dns::parser::parse(&side.body)
        {
            self.set_doh(i, dir, m, out);
        }
    }

    /// A complete non-DATA frame.
    fn frame(&mut self, dir: Dir, h: FrameHeader, p: &[u8], out: &mut ParseOutput) {
        // Each whole frame lets stream rules see it, as Suricata's parser asks (not an
        // empty SETTINGS, which it passes over).
        if !(h.ftype == frame::SETTINGS && p.is_empty()) {
            out.trigger_raw(dir);
        }
        let d = dir.index();
        match h.ftype {
            frame::HEADERS | frame::PUSH_PROMISE => {
                if h.stream_id == 0 {
                    out.anomaly("http2.invalid_frame_header");
                    return;
                }
                let (block, weight) = if h.ftype == frame::HEADERS {
                    match frame::headers_payload(h.flags, p) {
                        Some(x) => x,
                        None => {
                            out.anomaly("http2.invalid_frame_data");
                            return;
                        }
                    }
                } else {
                    // Pad length, promised stream id, block.
                    let skip = if h.flags & frame::FLAG_PADDED != 0 {
                        5
                    } else {
                        4
                    };
                    let pad = if h.flags & frame::FLAG_PADDED != 0 {
                        usize::from(p.first().copied().unwrap_or(0))
                    } else {
                        0
                    };
                    match p.get(skip..p.len().saturating_sub(pad)) {
                        Some(b) if p.len() >= skip + pad => (b, None),
                        _ => {
                            out.anomaly("http2.invalid_frame_data");
                            return;
                        }
                    }
                };
                let Some(i) = self.stream_tx(h.stream_id, h.ftype, out) else {
                    return;
                };
                {
                    let side = &mut self.txs[i].sides[d];
                    side.push_frame(h.ftype);
                    if let Some(w) = weight {
                        side.multiple_priority |= side.priority.is_some();
                        side.priority = Some(w);
                    }
                }
                let r = &mut self.readers[d];
                r.block.stream_id = h.stream_id;
                r.block.end_stream =
                    h.ftype == frame::HEADERS && h.flags & frame::FLAG_END_STREAM != 0;
                r.block.promise = h.ftype == frame::PUSH_PROMISE;
                r.block.continuations = 0;
                r.block.bytes.clear();
                r.block
                    .bytes
                    .extend_from_slice(&block[..block.len().min(self.cfg.max_reassembly)]);
                if block.len() > self.cfg.max_reassembly {
                    out.anomaly("http2.reassembly_limit_reached");
                }
                if h.flags & frame::FLAG_END_HEADERS != 0 {
                    self.header_block(dir, out);
                } else {
                    self.readers[d].block.active = true;
                }
            }
            frame::CONTINUATION => {
                let r = &mut self.readers[d];
                if !r.block.active || r.block.stream_id != h.stream_id {
                    out.anomaly("http2.invalid_frame_header");
                    return;
                }
                r.block.continuations += 1;
                if r.block.continuations > MAX_CONTINUATIONS {
                    out.anomaly("http2.reassembly_limit_reached");
                    r.block = Block::default();
                    return;
                }
                let room = self.cfg.max_reassembly.saturating_sub(r.block.bytes.len());
                if p.len() > room {
                    out.anomaly("http2.reassembly_limit_reached");
                }
                r.block.bytes.extend_from_slice(&p[..p.len().min(room)]);
                if let Some(i) = self.txs.iter().rposition(|t| t.stream_id == h.stream_id) {
                    self.txs[i].sides[d].push_frame(h.ftype);
                }
                if h.flags & frame::FLAG_END_HEADERS != 0 {
                    self.header_block(dir, out);
                }
            }
            frame::PRIORITY => {
                if p.len() != 5 {
                    out.anomaly("http2.invalid_frame_length");
                    return;
                }
                if h.stream_id == 0 {
                    out.anomaly("http2.invalid_frame_header");
                    return;
                }
                if let Some(i) = self.stream_tx(h.stream_id, h.ftype, out) {
                    let side = &mut self.txs[i].sides[d];
                    side.push_frame(h.ftype);
                    side.multiple_priority |= side.priority.is_some();
                    side.priority = Some(p[4]);
                }
            }
            frame::RST_STREAM => {
                let Some(code) = frame::u32_at(p, 0).filter(|_| p.len() == 4) else {
                    out.anomaly("http2.invalid_frame_length");
                    return;
                };
                if h.stream_id == 0 {
                    out.anomaly("http2.invalid_frame_header");
                    return;
                }
                if let Some(i) = self.stream_tx(h.stream_id, h.ftype, out) {
                    let tx = &mut self.txs[i];
                    tx.state = StreamState::Reset;
                    let side = &mut tx.sides[d];
                    side.push_frame(h.ftype);
                    side.multiple_error |= side.error_code.is_some();
                    side.error_code.get_or_insert(code);
                    side.error_goaway = false;
                    for s in &mut tx.sides {
                        s.files.end_current(FileState::Truncated);
                    }
                }
            }
            frame::SETTINGS => {
                if h.stream_id != 0 {
                    out.anomaly("http2.invalid_frame_header");
                    return;
                }
                if h.flags & frame::FLAG_ACK != 0 {
                    if !p.is_empty() {
                        out.anomaly("http2.invalid_frame_length");
                    }
                    return;
                }
                let Some(it) = frame::settings(p) else {
                    out.anomaly("http2.invalid_frame_length");
                    return;
                };
                let v: Vec<(u16, u32)> = it.take(MAX_FRAMES_PER_TX).collect();
                if v.is_empty() {
                    return;
                }
                for &(id, val) in &v {
                    match id {
                        // The receiver of the other direction is the sender of these.
                        frame::SETTINGS_MAX_FRAME_SIZE => {
                            self.readers[dir.other().index()].max_frame =
                                val.max(frame::DEFAULT_MAX_FRAME_SIZE)
                        }
                        frame::SETTINGS_HEADER_TABLE_SIZE => {
                            let cap = (val as usize).min(self.cfg.max_table_size) as u64;
                            self.readers[dir.other().index()].hpack.set_max_size(cap);
                        }
                        _ => {}
                    }
                }
                if let Some(i) = self.global_tx(out) {
                    let side = &mut self.txs[i].sides[d];
                    side.push_frame(h.ftype);
                    side.settings = v;
                }
            }
            frame::PING => {
                if p.len() != 8 {
                    out.anomaly("http2.invalid_frame_length");
                    return;
                }
                if let Some(i) = self.global_tx(out) {
                    self.txs[i].sides[d].push_frame(h.ftype);
                }
            }
            frame::GOAWAY => {
                let Some(code) = frame::u32_at(p, 4) else {
                    out.anomaly("http2.invalid_frame_length");
                    return;
                };
                if let Some(i) = self.global_tx(out) {
                    let side = &mut self.txs[i].sides[d];
                    side.push_frame(h.ftype);
                    side.error_code = Some(code);
                    side.error_goaway = true;
                }
            }
            frame::WINDOW_UPDATE => {
                let Some(w) = frame::u31(p, 0).filter(|_| p.len() == 4) else {
                    out.anomaly("http2.invalid_frame_length");
                    return;
                };
                // On a stream no live transaction has (one that ended and was
                // freed), it is dropped, as Suricata makes no transaction for it.
                let i = if h.stream_id == 0 {
                    self.global_tx(out)
                } else {
                    self.txs.iter().rposition(|t| t.stream_id == h.stream_id)
                };
                if let Some(i) = i {
                    let side = &mut self.txs[i].sides[d];
                    if side.windows.len() < MAX_FRAMES_PER_TX {
                        side.windows.push(w);
                    }
                }
            }
            // Unknown frame types are ignored (RFC 9113 section 4.1).
            _ => {}
        }
    }

    /// A complete header block of the current HEADERS/PUSH_PROMISE.
    fn header_block(&mut self, dir: Dir, out: &mut ParseOutput) {
        let d = dir.index();
        let r = &mut self.readers[d];
        r.block.active = false;
        let block = std::mem::take(&mut r.block.bytes);
        let mut headers = std::mem::take(&mut self.headers_scratch);
        headers.clear();
        let mut updates = Vec::new();
        let res = r.hpack.decode(&block, &mut headers, &mut updates);
        let r = &mut self.readers[d];
        r.block.bytes = block;
        match res {
            Ok(()) => {}
            Err(hpack::Error::IntegerOverflow) => out.anomaly("http2.header_integer_overflow"),
            Err(hpack::Error::TooLarge) => out.anomaly("http2.reassembly_limit_reached"),
            Err(_) => out.anomaly("http2.invalid_header"),
        }
        let (sid, end, promise) = (r.block.stream_id, r.block.end_stream, r.block.promise);
        if promise {
            self.headers_scratch = headers;
            return;
        }
        let Some(i) = self.txs.iter().rposition(|t| t.stream_id == sid) else {
            self.headers_scratch = headers;
            return;
        };
        {
            let side = &mut self.txs[i].sides[d];
            let base = if side.headers_done {
                side.headers.len()
            } else {
                0
            };
            if side.size_updates.len() + updates.len() <= MAX_FRAMES_PER_TX {
                side.size_updates.extend(updates.iter().map(|u| u.1));
                side.size_update_at
                    .extend(updates.iter().map(|&(at, v)| (base + at, v)));
            }
            if side.headers_done {
                // Trailers: appended.
                let room = hpack::MAX_HEADERS.saturating_sub(side.headers.len());
                side.headers.extend(headers.drain(..).take(room));
            } else {
                std::mem::swap(&mut side.headers, &mut headers);
                side.headers_done = true;
            }
            side.build_buffers(dir == Dir::ToServer);
            if dir == Dir::ToServer {
                let authority = side.header(b":authority");
                let host = side.header(b"host");
                if let (Some(a), Some(hh)) = (authority, host)
                    && !a.eq_ignore_ascii_case(hh)
                {
                    out.anomaly("http2.authority_host_mismatch");
                }
                if authority.is_some_and(|a| a.contains(&b'@')) {
                    out.anomaly("http2.userinfo_in_uri");
                }
            }
        }
        headers.clear();
        self.headers_scratch = headers;
        if dir == Dir::ToServer
            && let Some(m) = doh_get(&self.txs[i].sides[0])
        {
            self.set_doh(i, dir, m, out);
        }
        if end {
            self.end_side(i, dir, out);
        }
    }
}

/// The DNS message of a DoH GET (RFC 8484 section 4.1): the `dns` parameter of the
/// path's query, base64url without padding.
fn doh_get(side: &Side) -> Option<crate::dns::parser::Message> {
    if side.header(b":method")? != b"GET" {
        return None;
    }
    let path = side.header(b":path")?;
    let query = &path[path.iter().position(|&c| c == b'?')? + 1..];
    let value = query
        .split(|&c| c == b'&')
        .find_map(|p| p.strip_prefix(b"dns="))?;
    if value.len() > MAX_DNS_MESSAGE * 4 / 3 + 4 {
        return None;
    }
    crate::dns::parser::parse(&base64_decode(value, true)?)
}

/// Decodes base64 of the standard alphabet (`url`: the URL-safe one), padding
/// optional; `None` on any other byte.
pub fn base64_decode(s: &[u8], url: bool) -> Option<Vec<u8>> {
    let s = s
        .strip_suffix(b"==")
        .or_else(|| s.strip_suffix(b"="))
        .unwrap_or(s);
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' if !url => 62,
            b'/' if !url => 63,
            b'-' if url => 62,
            b'_' if url => 63,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    // A single character left over is no whole byte.
    (bits < 6).then_some(out)
}

impl AppState for Http2State {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if let Some(a) = self.pending_anomaly.take() {
            out.anomaly(a);
        }
        self.parse_dir(dir, data, out);
    }

    /// An h2c upgrade (RFC 7540 section 3.2): the HTTP/1.1 request that asked for it is
    /// stream 1's, with `:method`, `:path` and `:authority` (its `Host`) first and
    /// its other headers after, `HTTP2-Settings` left out (as Suricata has it);
    /// `HTTP2-Settings` that is not base64 of whole settings is
    /// `invalid_http1_settings`.
    fn take_over(&mut self, _from: crate::AppProto, handover: crate::Handover) {
        let crate::Handover::Http1Request {
            method,
            uri,
            headers,
        } = handover
        else {
            return;
        };
        let mut list = vec![
            Header {
                name: b":method".to_vec(),
                value: method,
            },
            Header {
                name: b":path".to_vec(),
                value: uri,
            },
        ];
        if let Some((_, host)) = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(b"host"))
        {
            list.push(Header {
                name: b":authority".to_vec(),
                value: host.clone(),
            });
        }
        for (name, value) in headers {
            if name.eq_ignore_ascii_case(b"http2-settings") {
                let ok =
                    base64_decode(&value, false).is_some_and(|b| frame::settings(&b).is_some());
                if !ok {
                    self.pending_anomaly = Some("http2.invalid_http1_settings");
                }
                continue;
            }
            if name.eq_ignore_ascii_case(b"host") || list.len() >= hpack::MAX_HEADERS {
                continue;
            }
            list.push(Header { name, value });
        }
        let tx = self.new_tx(1);
        let side = &mut tx.sides[0];
        side.headers = list;
        side.headers_done = true;
        side.end_stream = true;
        side.build_buffers(true);
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        // Frame boundaries are lost: stop reading the direction.
        let r = &mut self.readers[dir.index()];
        r.lost = true;
        for tx in &mut self.txs {
            tx.sides[dir.index()]
                .files
                .end_current(FileState::Truncated);
        }
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        for tx in &mut self.txs {
            tx.sides[dir.index()]
                .files
                .end_current(FileState::Truncated);
        }
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        free_txs_below(&mut self.txs, id);
    }

    fn set_files(&mut self, cfg: FileConfig) {
        self.files = cfg;
    }

    fn tx_files_mut(&mut self, index: usize, dir: Dir) -> Option<&mut Files> {
        self.txs
            .get_mut(index)
            .map(|t| &mut t.sides[dir.index()].files)
    }
}
