//! HTTP/2 over cleartext TCP (prior knowledge, detected by the client preface or a
//! server's first SETTINGS frame): frames, HPACK, streams as transactions, bodies into
//! the file layer, and the EVE `http` record with its `http2` object, as Suricata 8.
//!
//! - [`frame`]: the frame header and fixed payloads (pure functions);
//! - [`hpack`]: header block decoding (static + dynamic table, Huffman);
//! - [`state`]: the per-connection state and its transactions;
//! - [`detect`]: the `http.*` buffers on HTTP/2, `http2.*` buffers and keywords;
//! - [`logger`], [`eve`]: the EVE record.
//!
//! `alert http` rules and the `http.*` keywords apply to HTTP/2 flows too (Suricata's
//! `http` is either version): the descriptor's `family` says so to the engine.

pub mod config;
pub mod detect;
pub mod eve;
pub mod frame;
pub mod hpack;
mod huffman_table;
pub mod logger;
pub mod state;

pub use state::{Http2Config, Http2State, Http2Tx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// The HTTP/2 protocol.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Http2,
    name: "http2",
    aliases: &[],
    family: Some(AppProto::Http),
    inner: &[],
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[],
    port_bound: false,
    probe: |_, dir, data| probe(dir, data),
    probe_on_port: None,
    is_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "http",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "http2",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "http2.invalid_frame_header",
    "http2.invalid_client_magic",
    "http2.invalid_frame_data",
    "http2.invalid_header",
    "http2.invalid_frame_length",
    "http2.extra_header_data",
    "http2.long_frame_data",
    "http2.stream_id_reuse",
    "http2.invalid_http1_settings",
    "http2.failed_decompression",
    "http2.invalid_range",
    "http2.header_integer_overflow",
    "http2.too_many_streams",
    "http2.authority_host_mismatch",
    "http2.userinfo_in_uri",
    "http2.reassembly_limit_reached",
    "http2.dns_request_too_long",
    "http2.dns_response_too_long",
    "http2.data_stream_zero",
    "http2.too_many_frames",
    "http2.compression_bomb",
];

/// The fuzz target: the parser over arbitrary bytes in both directions (the preface is
/// prepended so that the frames are reached).
pub fn fuzz(data: &[u8]) {
    let mut s = Http2State::new(Http2Config::default());
    crate::AppState::set_files(
        &mut s,
        crate::files::FileConfig {
            track: true,
            md5: true,
            sha1: false,
            sha256: false,
            magic: true,
            store_all: false,
            store_possible: false,
            depth: 0,
        },
    );
    let mut out = crate::ParseOutput::default();
    crate::AppState::parse(&mut s, Dir::ToServer, frame::PREFACE, &mut out);
    crate::fuzz::drive(&mut s, data);
}

/// A server's first frame: SETTINGS on stream 0 (not an ACK), of a plausible length.
fn is_server_settings(data: &[u8]) -> Option<bool> {
    let h = frame::header(data)?;
    Some(
        h.ftype == frame::SETTINGS
            && h.flags == 0
            && h.stream_id == 0
            && h.length.is_multiple_of(6)
            && h.length <= 6 * 16,
    )
}

/// Recognises the client preface, or a server's first SETTINGS frame.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    match dir {
        Dir::ToServer => {
            let n = data.len().min(frame::PREFACE.len());
            if data[..n] != frame::PREFACE[..n] {
                Probe::NoMatch
            } else if n < frame::PREFACE.len() {
                Probe::NeedMore
            } else {
                Probe::Match
            }
        }
        Dir::ToClient => match is_server_settings(data) {
            None if data.iter().zip([0u8, 0]).all(|(a, b)| *a == b) => Probe::NeedMore,
            Some(true) => Probe::Match,
            _ => Probe::NoMatch,
        },
    }
}

/// A server's SETTINGS seen first: the flow is the other way round.
fn is_reply(_: Transport, data: &[u8]) -> bool {
    !data.starts_with(&frame::PREFACE[..data.len().min(frame::PREFACE.len())])
        && is_server_settings(data) == Some(true)
}

impl Http2Tx {
    /// The `doh2` record of a stream that carried a DNS message (the response's, else
    /// the request's); `grouped`: the answers grouped too, as `dns` events have them.
    fn doh_record(&self, grouped: bool) -> Option<AppRecord> {
        let doh = self.doh.as_deref()?;
        let mut dns = match Transaction::record(doh)? {
            AppRecord::Dns(d) => d,
            _ => return None,
        };
        dns.grouped = grouped;
        Some(AppRecord::Doh2(Box::new(meerkat_proto::events::Doh2 {
            http: logger::record(self),
            dns: Some(dns),
        })))
    }
}

impl Transaction for Http2Tx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        self.done(dir)
    }

    /// 0 nothing, 1 headers, 2 body started, 3 complete.
    fn progress(&self, dir: Dir) -> u8 {
        let s = self.side(dir);
        if self.done(dir) {
            3
        } else if s.body_seen {
            2
        } else if s.headers_done {
            1
        } else {
            0
        }
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        self.doh_record(false)
            .or_else(|| logger::record(self).map(AppRecord::Http2))
    }

    /// A stream with a DNS message logs a `dns` event (of `doh2`) holding both.
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        match dir {
            Dir::ToServer => None,
            Dir::ToClient => self
                .doh_record(true)
                .or_else(|| logger::record(self).map(AppRecord::Http2)),
        }
    }

    fn files(&self, dir: Dir) -> &[crate::files::File] {
        self.side(dir).files.as_slice()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
