//! HTTP/1.0 and HTTP/1.1: detection, parsing (libhtp-compatible), inspection buffers and
//! the EVE `http` record.
//!
//! - [`parser`]: lines, request/status lines, headers, chunk sizes (pure functions);
//! - [`uri`]: `http.uri` normalisation;
//! - [`decompress`]: gzip/deflate body decoding with layer and bomb limits;
//! - [`state`]: the per-connection state machine and its transactions;
//! - [`detect`]: the sticky buffers; [`logger`]: the EVE record.

pub mod config;
pub mod decompress;
pub mod detect;
pub mod eve;
pub mod logger;
pub mod multipart;
pub mod parser;
pub mod state;
pub mod uri;

pub use state::{HttpConfig, HttpState, HttpTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction};

/// The HTTP/1 protocol.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Http,
    name: "http",
    aliases: &["http1"],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[80, 8080, 8000, 3128],
    port_bound: false,
    probe: |_, dir, data| probe(dir, data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: true,
    raw_trigger: crate::descriptor::RawTrigger::TxComplete,
    record: Some(RecordDef {
        event_type: "http",
        render: eve::render,
        tx_id: true,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "http",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "http.100_continue_already_seen",
    "http.abnormal_ce_header",
    "http.compression_bomb",
    "http.content_length_extra_data_end",
    "http.content_length_extra_data_start",
    "http.duplicate_content_length_field_in_request",
    "http.duplicate_content_length_field_in_response",
    "http.gzip_decompression_failed",
    "http.host_header_ambiguous",
    "http.invalid_content_length_field_in_request",
    "http.invalid_content_length_field_in_response",
    "http.invalid_request_chunk_len",
    "http.invalid_request_field_folding",
    "http.invalid_response_chunk_len",
    "http.invalid_response_field_folding",
    "http.invalid_transfer_encoding_value_in_request",
    "http.method_delim_non_compliant",
    "http.missing_host_header",
    "http.range_invalid",
    "http.request_auth_unrecognized",
    "http.request_chunk_extension",
    "http.request_field_missing_colon",
    "http.request_field_too_long",
    "http.request_header_host_invalid",
    "http.request_header_invalid",
    "http.request_header_repetition",
    "http.request_invalid_lws_after_name",
    "http.request_line_invalid",
    "http.request_line_leading_whitespace",
    "http.request_line_missing_protocol",
    "http.request_too_many_headers",
    "http.response_abnormal_transfer_encoding",
    "http.response_body_unexpected",
    "http.response_chunk_extension",
    "http.response_chunked_old_proto",
    "http.response_field_missing_colon",
    "http.response_field_too_long",
    "http.response_header_name_not_token",
    "http.response_header_repetition",
    "http.response_invalid_lws_after_name",
    "http.response_line_invalid_protocol",
    "http.response_line_invalid_response_status",
    "http.response_too_many_headers",
    "http.too_many_encoding_layers",
    "http.unable_to_match_response_to_request",
    "http.uri_delim_non_compliant",
];

/// The fuzz target: the parser over arbitrary bytes in both directions.
pub fn fuzz(data: &[u8]) {
    let mut s = HttpState::new(HttpConfig::default());
    // With the file layer fully on, so that bodies also go through files, digests and
    // magic.
    crate::AppState::set_files(
        &mut s,
        crate::files::FileConfig {
            track: true,
            md5: true,
            sha1: true,
            sha256: true,
            magic: true,
            store_all: false,
            store_possible: true,
            depth: 0,
        },
    );
    crate::fuzz::drive(&mut s, data);
}

/// Request methods recognised by the probe, each followed by a space or tab, case
/// sensitive: Suricata 8's HTTP/1 patterns (measured on the reference: `SEARCH`,
/// `NOTIFY`, `SUBSCRIBE`, `POLL`, `PURGE`, `M-SEARCH` and the like are no HTTP request
/// to it; a flow of one is HTTP only by its response, and `NOTIFY` and `SUBSCRIBE` are
/// SIP's). `INVALID` is one of them.
const METHODS: &[&[u8]] = &[
    b"GET",
    b"PUT",
    b"POST",
    b"HEAD",
    b"TRACE",
    b"OPTIONS",
    b"CONNECT",
    b"DELETE",
    b"PATCH",
    b"PROPFIND",
    b"PROPPATCH",
    b"MKCOL",
    b"COPY",
    b"MOVE",
    b"LOCK",
    b"UNLOCK",
    b"CHECKOUT",
    b"UNCHECKOUT",
    b"CHECKIN",
    b"UPDATE",
    b"LABEL",
    b"REPORT",
    b"MKWORKSPACE",
    b"MKACTIVITY",
    b"MERGE",
    b"INVALID",
    b"VERSION-CONTROL",
    b"BASELINE-CONTROL",
];

/// Recognises the start of a request (`METHOD SP`) or response (`HTTP/`).
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    let prefix_of = |pat: &[u8]| data.len() < pat.len() && pat.starts_with(data);
    match dir {
        Dir::ToServer => {
            let mut more = false;
            for m in METHODS {
                if data.len() > m.len() && data.starts_with(m) {
                    if matches!(data[m.len()], b' ' | b'\t') {
                        return Probe::Match;
                    }
                } else if data.len() <= m.len() && m.starts_with(data) {
                    more = true;
                }
            }
            if more || data.is_empty() {
                Probe::NeedMore
            } else {
                Probe::NoMatch
            }
        }
        Dir::ToClient => {
            if data.len() >= 5 && data[..5].eq_ignore_ascii_case(b"HTTP/") {
                Probe::Match
            } else if data.is_empty() || prefix_of(b"HTTP/") {
                Probe::NeedMore
            } else {
                Probe::NoMatch
            }
        }
    }
}

impl Transaction for HttpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        self.message(dir).progress == state::Progress::Complete
    }

    /// 0 nothing, 1 line started, 2 line parsed, 3 headers parsed, 4 body final (limit
    /// reached), 5 complete.
    fn progress(&self, dir: Dir) -> u8 {
        let m = self.message(dir);
        match m.progress {
            state::Progress::NotStarted => 0,
            state::Progress::Line => 1,
            state::Progress::Headers => 2,
            state::Progress::Body if m.body_truncated => 4,
            state::Progress::Body => 3,
            state::Progress::Complete => 5,
        }
    }

    /// libhtp's progress names, as Suricata 8 logs them.
    fn progress_name(&self, dir: Dir) -> Option<&'static str> {
        let m = self.message(dir);
        let names = match dir {
            Dir::ToServer => [
                "request_not_started",
                "request_started",
                "request_headers",
                "request_body",
                "request_complete",
            ],
            Dir::ToClient => [
                "response_not_started",
                "response_started",
                "response_headers",
                "response_body",
                "response_complete",
            ],
        };
        Some(match m.progress {
            state::Progress::NotStarted => names[0],
            state::Progress::Line => names[1],
            state::Progress::Headers => names[2],
            state::Progress::Body => names[3],
            state::Progress::Complete => names[4],
        })
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        logger::record(self).map(AppRecord::Http)
    }

    fn files(&self, dir: Dir) -> &[crate::files::File] {
        self.message(dir).files.as_slice()
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        detect::frame_meta(self, id, index)
    }
}

/// A direction's `http1.stream` frame, offered once the direction ended.
#[cfg(test)]
mod tests;
