//! Meerkat's application-layer protocols, and the contract between them and the engine.
//!
//! Each protocol lives in its own directory (`src/<proto>/`) and owns all of itself: its
//! parser, per-flow state and transactions, its detection (sticky buffers and keywords),
//! its EVE record and the function that renders it, its config section, its anomaly
//! names and its fuzz driver with seeds. It describes itself with one static
//! [`Descriptor`], and [`list`] names every protocol once: the [`AppProto`] enum, the
//! probing order and everything per protocol elsewhere (enabled flags, settings,
//! counters, EVE type names, the writer's type filter, keyword lookup) come from that
//! list. `README.md` ("Adding a protocol") walks through adding one.
//!
//! The engine drives a protocol through small traits:
//!
//! - [`Parser`]: a protocol configured from its `app-layer.protocols.<name>` section; it
//!   makes per-flow state.
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
//! inspected now and again later. Each (rule, transaction) alerts at most once. Keywords
//! that are not buffers (`tls.version`, `dns.opcode`, ...) are evaluated through the
//! protocol's [`KeywordDef`]s: the engine knows no protocol.
//!
//! Every parser bounds every count, length and loop with a named `MAX_*` constant; hitting
//! a bound truncates, flags, and raises an anomaly ([`ParseOutput::anomaly`]).

pub mod buffers;
pub mod config;
pub mod descriptor;
pub mod events;
pub mod files;
#[doc(hidden)]
pub mod fuzz;
pub mod list;
pub mod registry;
pub mod stream_frame;
pub mod value;

pub mod bittorrent_dht;
pub mod dcerpc;
pub mod dhcp;
pub mod dnp3;
pub mod dns;
pub mod doh2;
pub mod enip;
pub mod ftp;
pub mod ftp_data;
pub mod http;
pub mod http2;
pub mod ike;
pub mod imap;
pub mod krb5;
pub mod ldap;
pub mod llmnr;
pub mod mdns;
pub mod modbus;
pub mod mqtt;
pub mod nfs;
pub mod ntp;
pub mod pgsql;
pub mod pop3;
pub mod quic;
pub mod rdp;
pub mod rfb;
pub mod sip;
pub mod smb;
pub mod smtp;
pub mod snmp;
pub mod ssh;
pub mod telnet;
pub mod tftp;
pub mod tls;
pub mod websocket;

pub use buffers::{BufferDef, BufferId};
pub use descriptor::{Descriptor, FuzzTarget, KeywordDef, KeywordKind, RecordDef, Transports};
pub use list::{APP_PROTOS, AppProto, PROTOCOLS};
pub use meerkat_proto::events::event::App as AppRecord;
pub use registry::{Detected, Registry};

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

/// A protocol configured from its `app-layer.protocols.<name>` section: makes the state
/// of each new flow.
pub trait Parser: Send + Sync + std::fmt::Debug {
    /// Fresh per-flow state.
    fn new_state(&self, transport: Transport) -> Box<dyn AppState>;
    /// Packet time moved on to `now_s` (seconds; called about once a second of packet
    /// time): state the protocol keeps across flows may expire (HTTP's byte ranges).
    fn tick(&self, _now_s: u64) {}
    /// The protocol's own reassembly depth (its section's `stream-depth`, bytes per
    /// direction, 0 = no limit), which replaces `stream.reassembly.depth` for its flows
    /// once they are recognised, as Suricata's; `None`: the flow's depth stays.
    fn stream_depth(&self) -> Option<u64> {
        None
    }
}

/// What a parser reports back from a call.
#[derive(Debug, Default)]
pub struct ParseOutput {
    /// Anomalies (EVE `anomaly` with type `applayer`): Suricata-style event names such as
    /// `http.request_header_too_long`, each one of the protocol's
    /// [`Descriptor::events`].
    pub anomalies: Vec<&'static str>,
    /// The parser gave up on this flow (not this protocol after all, or hopelessly broken):
    /// the engine stops feeding it.
    pub failed: bool,
    /// The flow speaks another protocol from a point of this call's data on (see
    /// [`ProtoChange`]); `None` on every call of a flow that never changes.
    pub change: Option<Box<ProtoChange>>,
    /// A parse error that Suricata counts and flags on the flow (EVE `flow`'s
    /// `exception_policy` `app_layer_error`) while the parser keeps its state: its
    /// transactions are still inspected and logged, and the parser itself decides what
    /// it parses after it (Suricata's Kerberos: nothing more of a TCP flow, the next
    /// datagram of a UDP one).
    pub error: bool,
    /// The parser announced connections to expect (an FTP data connection): the engine
    /// takes them with [`AppState::take_expectations`].
    pub expect: bool,
    /// Directions whose raw stream the parser asked to be inspected without waiting for
    /// a chunk's worth of data (bit `1 << Dir::index()`; see
    /// [`ParseOutput::trigger_raw`]).
    pub raw_trigger: u8,
    /// The flow's payload is to be inspected no more (Suricata's
    /// `APP_LAYER_PARSER_NO_INSPECTION_PAYLOAD`: TLS once application data flows): its
    /// raw stream is inspected once more, then neither it nor its packets' payloads
    /// are; its transactions still are.
    pub no_payload_inspection: bool,
    /// As [`ParseOutput::no_payload_inspection`], but both raw streams are inspected
    /// once more at once, after this packet (Suricata's SSH once both sides sent
    /// NEWKEYS: its detect/log flush of both directions), and no payload after that.
    pub no_payload_inspection_flush: bool,
}

/// A connection a control channel announced, between the same two hosts as its flow
/// (an FTP data connection): the engine recognises it as `proto` when it comes and its
/// first data is no protocol's, and gives its parser `data`
/// ([`AppState::set_expected`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    pub proto: AppProto,
    /// The port the connection goes to (its responder's).
    pub port: u16,
    /// The protocol's own description of the connection (for FTP: the command and the
    /// file name).
    pub data: Vec<u8>,
}

impl ParseOutput {
    pub fn anomaly(&mut self, name: &'static str) {
        self.anomalies.push(name);
    }

    /// Lets stream rules see `dir`'s bytes parsed so far at the next packet of `dir`
    /// that follows their acknowledgement, however short of a chunk
    /// (`stream.reassembly.toserver-chunk-size`) they are: Suricata's parsers ask this
    /// at their own points (HTTP at a complete request or response, TLS at a record,
    /// ...); a protocol that never asks has its stream inspected in chunks, at the
    /// depth and when the direction ends.
    pub fn trigger_raw(&mut self, dir: Dir) {
        self.raw_trigger |= 1 << dir.index();
    }

    /// Asks the engine to hand the flow to another protocol (see [`ProtoChange`]); the
    /// first request of a call stands.
    pub fn change_protocol(&mut self, change: ProtoChange) {
        if self.change.is_none() {
            self.change = Some(Box::new(change));
        }
    }
}

/// A parser's request that its flow speak another protocol from a point of its streams
/// on: HTTP/1's `101 Switching Protocols` (`Upgrade: websocket`, `h2c`), a `CONNECT`
/// answered 2xx (a tunnel: TLS or anything, detected again), STARTTLS in SMTP, POP3,
/// IMAP or FTP (TLS).
///
/// The parser asks from [`AppState::parse`] (in [`ParseOutput::change`]) and says where
/// the new protocol starts: at byte [`ProtoChange::at`] of the data of that call, in the
/// call's direction; the other direction switches where it stands (everything given to
/// the old parser so far stays the old protocol's, but the bytes it held back, which it
/// hands over in [`ProtoChange::held`]). The engine then, in this order:
///
/// 1. takes the old state out of the flow: it gets no more data, and its transactions
///    are inspected one last time and logged at once, as at the end of a flow (EVE
///    `pkt_src` `stream (detect/log)`, `app_proto` the old protocol with
///    `app_proto_expected` the new one, as Suricata's flush at a protocol change);
/// 2. makes the new protocol's state ([`ProtoChange::to`], with the old state's
///    [`AppState::handover`] given to [`AppState::take_over`]), or, for `None`, detects
///    the protocol again from the bytes that follow (a `CONNECT` tunnel);
/// 3. feeds it the held bytes of each direction, then `data[at..]`; later bytes of
///    both directions go to it as usual. Its transaction ids start at 0 again, and the
///    flow's records say `app_proto` the new protocol, `app_proto_orig` the old one.
///
/// A protocol whose parser is disabled, a flow that changed [`MAX_PROTO_CHANGES`] times
/// already, or a request made while the new state is being fed, is refused: the old
/// parser keeps the flow (it has stopped parsing what it handed over).
#[derive(Debug, Default)]
pub struct ProtoChange {
    /// The protocol from then on; `None`: unknown, detected again from its first bytes.
    pub to: Option<AppProto>,
    /// Where the new protocol starts in the data of the call that asks.
    pub at: usize,
    /// Per direction (to_server, to_client), bytes the old parser was given before but
    /// held back unparsed because they may be the new protocol's (a client's first
    /// WebSocket frame sent right behind its upgrade request): fed to the new protocol
    /// first, in order. At most [`MAX_HELD`] each.
    pub held: [Vec<u8>; 2],
    /// The state goes on as the new protocol's, with its transactions and their ids
    /// (Suricata's DNS over HTTP/2: an HTTP/2 flow that carries a DNS message is
    /// `doh2` from then on): nothing is flushed or fed again, only the flow's protocol
    /// changes (`at` and `held` are not used).
    pub keep_state: bool,
}

/// Protocol changes a flow may make (Suricata allows one at a time; a `CONNECT` tunnel
/// that carries an HTTP/1 connection that upgrades to WebSocket makes two).
pub const MAX_PROTO_CHANGES: u8 = 4;
/// Most bytes a parser holds back per direction for a protocol change it expects.
pub const MAX_HELD: usize = 64 * 1024;

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
    /// What the file layer does for this flow (see [`files`]); given right after the
    /// state is made. A protocol that carries no files ignores it.
    fn set_files(&mut self, _cfg: files::FileConfig) {}
    /// The buffers of this protocol's frames that the loaded rules inspect (never
    /// empty); given right after the state is made. A protocol that keeps bytes only
    /// for its frames keeps those of these; one whose frames cost nothing ignores it.
    fn set_frames(&mut self, _used: &[BufferId]) {}
    /// The buffers of this protocol that the loaded rules inspect (never empty); given
    /// right after the state is made, for a protocol whose work depends on them (SSH
    /// logs HASSH once a rule uses a hassh keyword, as Suricata's keywords turn it on).
    fn set_rule_buffers(&mut self, _used: &[BufferId]) {}
    /// The flow's endpoints (client, server), given right after the state is made, for
    /// a protocol whose messages are checked against them (FTP's `ftpbounce`).
    fn set_endpoints(&mut self, _client: std::net::IpAddr, _server: std::net::IpAddr) {}
    /// Whether `data`, the first datagram of a UDP flow toward its client, shows it
    /// is the client's side after all, so that the flow is reversed from it on, as a
    /// probing parser of Suricata's says of it (IKE: a message whose responder SPI is
    /// zero). Asked once per flow, before that datagram is parsed.
    fn first_reply_is_request(&self, _data: &[u8]) -> bool {
        false
    }
    /// Moves the connections the parser announced since the last call into `out` (it
    /// said so with [`ParseOutput::expect`]).
    fn take_expectations(&mut self, _out: &mut Vec<Expectation>) {}
    /// The flow is a connection a control channel announced: what it said of it
    /// ([`Expectation::data`]); given right after the state is made.
    fn set_expected(&mut self, _data: &[u8]) {}
    /// The files of live transaction `index` in `dir`, for the file store to write and
    /// for `filestore` rules to mark (`None` for a protocol that carries no files).
    fn tx_files_mut(&mut self, _index: usize, _dir: Dir) -> Option<&mut files::Files> {
        None
    }
    /// What this state passes to the protocol that takes the flow over after it asked
    /// for a [`ProtoChange`] (HTTP/1 passes its upgrade request to HTTP/2, which makes
    /// it stream 1); `None` for nothing.
    fn handover(&mut self) -> Option<Handover> {
        None
    }
    /// Takes over a flow from `from`, with what its state handed over; called right
    /// after the state is made, before any data.
    fn take_over(&mut self, _from: AppProto, _handover: Handover) {}
    /// Whether the parser wants no more of direction `dir` though it goes on (SSH once
    /// the direction is encrypted): Suricata stops reassembling it for the app layer,
    /// so the direction's stream frame ends with the bytes given so far.
    fn stream_done(&self, _dir: Dir) -> bool {
        false
    }
}

/// What a protocol's state hands to the one that takes its flow over (see
/// [`AppState::handover`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Handover {
    #[default]
    None,
    /// An HTTP/1 request that asked for the change (`Upgrade: h2c`): its method, URI,
    /// and headers (name, value) in order.
    Http1Request {
        method: Vec<u8>,
        uri: Vec<u8>,
        headers: Vec<(Vec<u8>, Vec<u8>)>,
    },
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

/// Frees the transactions with id below `id` from a queue kept in id order (the usual
/// [`AppState::free_below`]), giving the emptied queue's buffer back.
pub fn free_txs_below<T: Transaction>(txs: &mut std::collections::VecDeque<T>, id: u64) {
    while txs.front().is_some_and(|t| t.id() < id) {
        txs.pop_front();
    }
    txs.release_if_empty();
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

/// One transaction of a flow.
pub trait Transaction: std::fmt::Debug {
    /// Id within the flow: 0, 1, 2, ... (EVE `tx_id`).
    fn id(&self) -> u64;
    /// Whether the direction's part of the transaction is complete.
    fn complete(&self, dir: Dir) -> bool;
    /// Whether the transaction's record is written now (the protocol's log condition):
    /// by default once both directions are complete, or at the flow's end. A protocol
    /// with a condition of its own (SSH: both identification lines) says so; its
    /// record is written only when the condition holds, the flow's end included.
    fn log_ready(&self, ending: bool) -> bool {
        ending || (self.complete(Dir::ToServer) && self.complete(Dir::ToClient))
    }
    /// Whether rules inspect the transaction in direction `dir`: both (the default),
    /// or only the one it came in for a transaction of one message (Suricata 8's
    /// unidirectional transactions, such as an NTP packet's).
    fn inspects(&self, _dir: Dir) -> bool {
        true
    }
    /// How far the direction's part has got: a number that grows whenever a buffer of
    /// that direction becomes available or final (e.g. HTTP request: 1 request line,
    /// 2 headers, 3 body started, 4 complete). The engine inspects a transaction again
    /// only when this changes, so a body growing chunk by chunk need not bump it.
    fn progress(&self, dir: Dir) -> u8;
    /// The name of the direction's progress as Suricata's parser of the protocol names
    /// its states (EVE `ts_progress`, `tc_progress` of an alert on the transaction);
    /// `None` for a protocol whose states Suricata does not name.
    fn progress_name(&self, _dir: Dir) -> Option<&'static str> {
        None
    }
    /// Inspection buffer `id`. Multi-buffers (several DNS queries, several certificate
    /// names) have items `index` 0, 1, ...; single buffers only have item 0. An index past
    /// the last item is `Absent`.
    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_>;
    /// The transaction's EVE record (for its own event and inside alerts). `None` when
    /// there is nothing to log yet, or the protocol has no record.
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
    /// Whether the parser raised anomaly `name` (see [`events`]) in this transaction,
    /// for `app-layer-event` inspecting it in `dir`: raised parsing `dir`, or either
    /// direction when [`Transaction::events_both_ways`]. The worker tracks anomalies
    /// per transaction and answers through a wrapper; parsers need not implement it.
    fn has_event(&self, _dir: Dir, _name: &str) -> bool {
        false
    }
    /// Whether `app-layer-event` sees the transaction's anomalies from both directions
    /// whichever direction raised them (Suricata's SMB: a write's `file_overlap`
    /// alerts once to the server and once to the client); otherwise only from the
    /// direction that raised them (Suricata's one-direction transactions: MQTT, SIP,
    /// DNP3, IKE, ...).
    fn events_both_ways(&self) -> bool {
        false
    }
    /// The files the transaction carries in direction `dir`, in the order they started
    /// (see [`files`]); none for a protocol without files or when files are not tracked.
    fn files(&self, _dir: Dir) -> &[files::File] {
        &[]
    }
    /// Whether buffer `id` holds DCE/RPC stub data of a little-endian PDU (its data
    /// representation), which the `dce` option of the byte keywords reads in; false for
    /// any other buffer (read big-endian, as Suricata's).
    fn dce_little_endian(&self, _id: BufferId) -> bool {
        false
    }
    /// The protocol's own transaction, for its keywords to read (they downcast it);
    /// `None` for a protocol whose keywords need only [`Transaction::buffer`].
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
    /// Where frame buffer `id`'s item `index` lies in its direction's stream (for the
    /// `frame` object of an alert that matched it); `None` when the buffer is not a
    /// frame or the protocol does not place its frames.
    fn frame(&self, _id: BufferId, _index: usize) -> Option<FrameMeta> {
        None
    }
    /// Whether this is no transaction of the protocol but a holder of frames attached
    /// to none (HTTP's stream frames): it has no EVE transaction id (it counts in no
    /// `tx_cnt`), no record and no buffer but its frames.
    fn frames_only(&self) -> bool {
        false
    }
}

/// A frame of a transaction, as Suricata's EVE `frame` object names it: its id (per
/// flow direction, counted from 1 in the order the parser made its frames), its offset
/// in the direction's stream (`None` for a datagram's), whether all of its bytes were
/// seen, and the transaction it is attached to (`None`: a frame Suricata attaches to
/// none, whose alert is not about a transaction).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameMeta {
    pub id: u64,
    pub stream_offset: Option<u64>,
    pub complete: bool,
    pub tx_id: Option<u64>,
    /// Its length in the stream when that is more than the buffer's bytes (a gap
    /// inside it, or bytes past what the parser keeps); `None`: the buffer's length.
    pub length: Option<u64>,
}
