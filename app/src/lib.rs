//! Application-layer protocols: the contract between the engine and each protocol.
//!
//! Each protocol lives in its own directory (`app/<proto>/{mod.rs, parser.rs, state.rs,
//! detect.rs, logger.rs}`) and plugs in through three small traits:
//!
//! - [`Protocol`]: a static descriptor — its name, how to recognise it from the first bytes
//!   of either direction ([`Protocol::probe`]), the ports it is usually on (a hint only:
//!   detection is by content), and a constructor for per-flow state.
//! - [`AppState`]: one flow's parser state. The engine feeds it bytes in order, per
//!   direction: for TCP the reassembled stream (possibly in several calls per segment), for
//!   UDP one datagram per call. Gaps and the end of a direction are announced. Parsing is
//!   streaming: "incomplete, need more" is normal, not malformed.
//! - [`Transaction`]: a request/response pair (HTTP), a query/answer (DNS), a handshake
//!   (TLS). It exposes inspection buffers by [`BufferId`] (see [`buffers`]) for the
//!   sticky-buffer keywords, its progress per direction, and its EVE record.
//!
//! The engine decides when to inspect: it evaluates a rule against a transaction once none
//! of the buffers the rule needs is [`Buf::NotYet`]; a rule needing an [`Buf::Absent`]
//! buffer cannot match that transaction; [`Buf::Partial`] (a body still arriving) may be
//! inspected now and again later. Each (rule, transaction) alerts at most once.
//!
//! Every parser bounds every count, length and loop with a named `MAX_*` constant; hitting
//! a bound truncates, flags, and raises an anomaly ([`ParseOutput::anomaly`]).

pub mod buffers;
pub mod dns;
pub mod events;
#[doc(hidden)]
pub mod fuzz;
pub mod http;
pub mod llmnr;
pub mod ssh;
pub mod tls;

pub use buffers::{BufferDef, BufferId};

use meerkat_proto::events::{Dns, Http, Tls};

/// Application protocols the engine knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum AppProto {
    /// Not (yet) recognised.
    #[default]
    Unknown = 0,
    Http = 1,
    Dns = 2,
    Tls = 3,
    Ssh = 4,
    Llmnr = 5,
    /// Detection gave up on this flow.
    Failed = 255,
}

/// Number of parsed protocols plus one (`Unknown`): the size of per-protocol tables
/// indexed by `AppProto as usize` (`Failed` excluded).
pub const APP_PROTOS: usize = 6;

impl AppProto {
    /// EVE `app_proto` value.
    pub fn name(self) -> &'static str {
        match self {
            AppProto::Unknown => "",
            AppProto::Http => "http",
            AppProto::Dns => "dns",
            AppProto::Tls => "tls",
            AppProto::Ssh => "ssh",
            AppProto::Llmnr => "llmnr",
            AppProto::Failed => "failed",
        }
    }

    /// The protocol a rule header names (`alert http ...`), if it is an app-layer one
    /// Meerkat parses.
    pub fn from_rule_proto(s: &str) -> Option<AppProto> {
        match s {
            "http" | "http1" => Some(AppProto::Http),
            "dns" => Some(AppProto::Dns),
            "tls" => Some(AppProto::Tls),
            "ssh" => Some(AppProto::Ssh),
            "llmnr" => Some(AppProto::Llmnr),
            _ => None,
        }
    }
}

/// Direction of data within a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dir {
    ToServer = 0,
    ToClient = 1,
}

impl Dir {
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn other(self) -> Dir {
        match self {
            Dir::ToServer => Dir::ToClient,
            Dir::ToClient => Dir::ToServer,
        }
    }
}

/// The transport the bytes arrived on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    Tcp,
    Udp,
}

/// What a probe of the first bytes of a direction says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Probe {
    /// This is the protocol.
    Match,
    /// This is not the protocol.
    NoMatch,
    /// Too few bytes to tell.
    NeedMore,
}

/// A static protocol descriptor.
pub trait Protocol: Sync + std::fmt::Debug {
    fn proto(&self) -> AppProto;
    /// Recognises the protocol from the first bytes seen in `dir` (`data` holds everything
    /// seen so far in that direction, up to a bound the engine chooses).
    fn probe(&self, transport: Transport, dir: Dir, data: &[u8]) -> Probe;
    /// Ports the protocol is usually found on (a hint for the order of probing only).
    fn default_ports(&self) -> &'static [u16];
    /// Recognised on its default ports only (its messages are another protocol's
    /// elsewhere, as LLMNR's are DNS).
    fn port_bound(&self) -> bool {
        false
    }
    /// Whether `data`, recognised as this protocol, is a reply (the server's side). A
    /// flow whose first data is a reply is reversed, as Suricata's probing parsers
    /// make it do (a DNS response seen first).
    fn is_reply(&self, _transport: Transport, _data: &[u8]) -> bool {
        false
    }
    /// Fresh per-flow state.
    fn new_state(&self, transport: Transport) -> Box<dyn AppState>;
}

/// What a parser reports back from a call.
#[derive(Debug, Default)]
pub struct ParseOutput {
    /// Anomalies (EVE `anomaly` with type `applayer`): Suricata-style event names such as
    /// `http.request_header_too_long`.
    pub anomalies: Vec<&'static str>,
    /// The parser gave up on this flow (not this protocol after all, or hopelessly broken):
    /// the engine stops feeding it.
    pub failed: bool,
}

impl ParseOutput {
    pub fn anomaly(&mut self, name: &'static str) {
        self.anomalies.push(name);
    }
}

/// One flow's application-layer state.
pub trait AppState: Send + std::fmt::Debug {
    /// Consumes the next bytes of `dir`, in order.
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput);
    /// `len` bytes of `dir` are missing (a gap in the TCP stream).
    fn gap(&mut self, dir: Dir, len: u64, out: &mut ParseOutput);
    /// No more data will come in `dir` (FIN, RST, or the flow ended).
    fn eof(&mut self, dir: Dir, out: &mut ParseOutput);
    /// Number of live transactions.
    fn tx_count(&self) -> usize;
    /// Live transaction `index` (0 = oldest live one).
    fn tx(&self, index: usize) -> Option<&dyn Transaction>;
    /// Frees the transactions with id below `id` (the engine is done with them: inspected
    /// and logged).
    fn free_below(&mut self, id: u64);
}

/// Gives back the buffer of an emptied transaction queue. A flow whose transactions
/// are all done usually stays in the flow table until its timeout (minutes for UDP DNS),
/// and the capacity left behind by freed transactions would be held for all that time:
/// on the trafficgen mix, ~80k finished DNS flows kept ~140 MB of such buffers (their
/// queues and the flows' per-transaction detection state). A flow that starts another
/// transaction allocates again, as a new flow does.
pub trait ReleaseEmpty {
    fn release_if_empty(&mut self);
}

impl<T> ReleaseEmpty for std::collections::VecDeque<T> {
    fn release_if_empty(&mut self) {
        if self.is_empty() && self.capacity() > 0 {
            *self = std::collections::VecDeque::new();
        }
    }
}

impl<T> ReleaseEmpty for Vec<T> {
    fn release_if_empty(&mut self) {
        if self.is_empty() && self.capacity() > 0 {
            *self = Vec::new();
        }
    }
}

/// Availability of an inspection buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Buf<'a> {
    /// The buffer's final bytes.
    Ready(&'a [u8]),
    /// Bytes so far; more may follow (a body being received).
    Partial(&'a [u8]),
    /// Not available yet (the part of the message that holds it has not been parsed).
    NotYet,
    /// Will never exist in this transaction (e.g. no such header).
    Absent,
}

/// The EVE record of a transaction.
#[derive(Debug, Clone, PartialEq)]
pub enum AppRecord {
    Http(Http),
    Dns(Dns),
    Tls(Tls),
}

/// One transaction of a flow.
pub trait Transaction: std::fmt::Debug {
    /// Id within the flow: 0, 1, 2, ... (EVE `tx_id`).
    fn id(&self) -> u64;
    /// Whether the direction's part of the transaction is complete.
    fn complete(&self, dir: Dir) -> bool;
    /// How far the direction's part has got: a number that grows whenever a buffer of
    /// that direction becomes available or final (e.g. HTTP request: 1 request line,
    /// 2 headers, 3 body started, 4 complete). The engine inspects a transaction again
    /// only when this changes, so a body growing chunk by chunk need not bump it.
    fn progress(&self, dir: Dir) -> u8;
    /// Inspection buffer `id`. Multi-buffers (several DNS queries, several certificate
    /// names) have items `index` 0, 1, ...; single buffers only have item 0. An index past
    /// the last item is `Absent`.
    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_>;
    /// The transaction's EVE record (for its own `http`/`dns`/`tls` event and inside
    /// alerts). `None` when there is nothing to log yet.
    fn record(&self) -> Option<AppRecord>;
    /// The record of the protocol's own event to log once direction `dir` of the
    /// transaction is complete. Most protocols log one event per transaction when the
    /// response side completes (the default); DNS logs each message on its own (a
    /// `request` and a `response` event, as Suricata's version-3 `dns` events do).
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        match dir {
            Dir::ToServer => None,
            Dir::ToClient => self.record(),
        }
    }
    /// Whether the parser raised anomaly `name` (see [`events`]) in this transaction
    /// while parsing direction `dir`, for `app-layer-event`. The worker tracks
    /// anomalies per transaction and answers through a wrapper; parsers need not
    /// implement it.
    fn has_event(&self, _dir: Dir, _name: &str) -> bool {
        false
    }
}

/// The application protocols Meerkat parses, with their settings; probing order and
/// enablement come from the config.
#[derive(Debug)]
pub struct Registry {
    http: http::HttpProtocol,
    dns: dns::DnsProtocol,
    tls: tls::TlsProtocol,
    ssh: ssh::SshProtocol,
    llmnr: llmnr::LlmnrProtocol,
    enabled: [bool; 5],
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new(http::HttpConfig::default(), [true; 5])
    }
}

/// Result of probing a direction's first bytes against every enabled protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Detected {
    Proto(AppProto),
    /// Some protocol still needs more bytes to decide.
    NeedMore,
    /// No protocol matches.
    None,
}

impl Registry {
    /// The protocols enabled for detection by `app-layer.protocols.<name>.enabled`, the
    /// HTTP parser with the limits of `app-layer.protocols.http.libhtp.default-config`.
    pub fn from_config(config: &meerkat_config::Config) -> Registry {
        let on = |name: &str| config.app_layer.enabled(name) != meerkat_config::AppEnabled::No;
        Registry::new(
            http::HttpConfig::from_config(&config.app_layer.libhtp()),
            [on("http"), on("dns"), on("tls"), on("ssh"), on("llmnr")],
        )
    }

    /// `enabled` is [http, dns, tls, ssh, llmnr].
    pub fn new(http_cfg: http::HttpConfig, enabled: [bool; 5]) -> Registry {
        Registry {
            http: http::HttpProtocol { cfg: http_cfg },
            dns: dns::DnsProtocol,
            tls: tls::TlsProtocol,
            ssh: ssh::SshProtocol,
            llmnr: llmnr::LlmnrProtocol,
            enabled,
        }
    }

    /// The enabled protocols.
    pub fn protocols(&self) -> impl Iterator<Item = &dyn Protocol> {
        // LLMNR after DNS: the same messages are LLMNR only on LLMNR's port (tried
        // first there), DNS anywhere else.
        let all: [&dyn Protocol; 5] = [&self.http, &self.dns, &self.tls, &self.ssh, &self.llmnr];
        all.into_iter()
            .zip(self.enabled)
            .filter_map(|(p, e)| e.then_some(p))
    }

    pub fn get(&self, proto: AppProto) -> Option<&dyn Protocol> {
        self.protocols().find(|p| p.proto() == proto)
    }

    /// Probes `data` (everything seen so far in `dir`, from its first byte). Protocols
    /// whose default ports include one of the flow's `ports` (client, server) are tried
    /// first, then the rest: detection is by content, the ports only order the attempts.
    pub fn probe(&self, transport: Transport, dir: Dir, ports: [u16; 2], data: &[u8]) -> Detected {
        let mut need_more = false;
        let usual = |p: &dyn Protocol| p.default_ports().iter().any(|dp| ports.contains(dp));
        // Two passes instead of a sorted copy: no allocation per probe.
        for preferred in [true, false] {
            for p in self
                .protocols()
                .filter(|p| usual(*p) == preferred && (preferred || !p.port_bound()))
            {
                match p.probe(transport, dir, data) {
                    Probe::Match => return Detected::Proto(p.proto()),
                    Probe::NeedMore => need_more = true,
                    Probe::NoMatch => {}
                }
            }
        }
        if need_more {
            Detected::NeedMore
        } else {
            Detected::None
        }
    }
}

#[cfg(test)]
mod registry_tests {
    use super::*;

    #[test]
    fn content_detection_on_any_port() {
        let r = Registry::default();
        assert_eq!(
            r.probe(
                Transport::Tcp,
                Dir::ToServer,
                [40000, 8080],
                b"GET / HTTP/1.1\r\n"
            ),
            Detected::Proto(AppProto::Http)
        );
        assert_eq!(
            r.probe(
                Transport::Tcp,
                Dir::ToClient,
                [40000, 8080],
                b"HTTP/1.1 200 OK\r\n"
            ),
            Detected::Proto(AppProto::Http)
        );
        assert_eq!(
            r.probe(
                Transport::Tcp,
                Dir::ToServer,
                [40000, 8443],
                b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc"
            ),
            Detected::Proto(AppProto::Tls)
        );
        let q = b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01";
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 5353], q),
            Detected::Proto(AppProto::Dns)
        );
        assert_eq!(
            r.probe(Transport::Tcp, Dir::ToServer, [40000, 80], b"G"),
            Detected::NeedMore
        );
        assert_eq!(
            r.probe(Transport::Tcp, Dir::ToServer, [40000, 80], b"SSH-2.0-x\r\n"),
            Detected::Proto(AppProto::Ssh)
        );
        assert_eq!(
            r.probe(Transport::Tcp, Dir::ToServer, [40000, 80], b"HELO x\r\n"),
            Detected::None
        );
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 5355], q),
            Detected::Proto(AppProto::Llmnr)
        );
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 5354], q),
            Detected::Proto(AppProto::Dns)
        );
        let no_http = Registry::new(http::HttpConfig::default(), [false, true, true, true, true]);
        assert_eq!(
            no_http.probe(
                Transport::Tcp,
                Dir::ToServer,
                [40000, 80],
                b"GET / HTTP/1.1\r\n"
            ),
            Detected::None
        );
    }
}
