//! HTTP/1.0 and HTTP/1.1: detection, parsing (libhtp-compatible), inspection buffers and
//! the EVE `http` record.
//!
//! - [`parser`]: lines, request/status lines, headers, chunk sizes (pure functions);
//! - [`uri`]: `http.uri` normalisation;
//! - [`decompress`]: gzip/deflate body decoding with layer and bomb limits;
//! - [`state`]: the per-connection state machine and its transactions;
//! - [`detect`]: the sticky buffers; [`logger`]: the EVE record.

pub mod decompress;
pub mod detect;
pub mod logger;
pub mod parser;
pub mod state;
pub mod uri;

pub use state::{HttpConfig, HttpState, HttpTx};

use super::{
    AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Protocol, Transaction, Transport,
};

/// Request methods recognised by the probe, each followed by a space or tab.
const METHODS: &[&[u8]] = &[
    b"GET",
    b"POST",
    b"HEAD",
    b"PUT",
    b"DELETE",
    b"OPTIONS",
    b"TRACE",
    b"CONNECT",
    b"PATCH",
    b"PROPFIND",
    b"PROPPATCH",
    b"MKCOL",
    b"COPY",
    b"MOVE",
    b"LOCK",
    b"UNLOCK",
    b"SEARCH",
    b"REPORT",
    b"CHECKOUT",
    b"CHECKIN",
    b"UNCHECKOUT",
    b"MERGE",
    b"UPDATE",
    b"LABEL",
    b"MKACTIVITY",
    b"MKWORKSPACE",
    b"VERSION-CONTROL",
    b"BASELINE-CONTROL",
    b"NOTIFY",
    b"SUBSCRIBE",
    b"UNSUBSCRIBE",
    b"POLL",
    b"BMOVE",
    b"BCOPY",
    b"BDELETE",
    b"BPROPFIND",
    b"BPROPPATCH",
    b"INDEX",
    b"ACL",
    b"MKCALENDAR",
    b"MKREDIRECTREF",
    b"ORDERPATCH",
    b"PURGE",
    b"LINK",
    b"UNLINK",
];

/// The HTTP/1 protocol descriptor with its settings.
#[derive(Debug, Clone, Copy, Default)]
pub struct HttpProtocol {
    pub cfg: HttpConfig,
}

impl HttpConfig {
    /// The settings from `app-layer.protocols.http.libhtp.default-config`.
    pub fn from_config(c: &meerkat_config::LibhtpDefaults) -> HttpConfig {
        let size = |b: meerkat_config::ByteSize| usize::try_from(b.bytes()).unwrap_or(usize::MAX);
        HttpConfig {
            request_body_limit: size(c.request_body_limit),
            response_body_limit: size(c.response_body_limit),
            decode: decompress::DecodeLimits {
                layer_limit: c.response_body_decompress_layer_limit,
                bomb_limit: c.compression_bomb_limit.bytes(),
            },
        }
    }
}

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

impl Protocol for HttpProtocol {
    fn proto(&self) -> AppProto {
        AppProto::Http
    }

    fn probe(&self, transport: Transport, dir: Dir, data: &[u8]) -> Probe {
        match transport {
            Transport::Tcp => probe(dir, data),
            Transport::Udp => Probe::NoMatch,
        }
    }

    fn default_ports(&self) -> &'static [u16] {
        &[80, 8080, 8000, 3128]
    }

    fn new_state(&self, _transport: Transport) -> Box<dyn AppState> {
        Box::new(HttpState::new(self.cfg))
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

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        logger::record(self).map(AppRecord::Http)
    }
}

#[cfg(test)]
mod tests;
