//! The detect worker: ring -> decode -> defrag -> flow -> TCP stream -> app layer ->
//! rules -> events.
//!
//! Per packet, in order (as Suricata's flow worker does): decode; reassemble IP
//! fragments; find the flow; update the TCP session (segments into the stream, unless the
//! checksum is bad); feed new in-order stream data (or the UDP datagram) to the
//! app-layer parser; inspect the packet and the stream chunk it makes ready with the
//! packet rules; inspect the transactions that progressed with the app rules; log
//! finished transactions. When a flow ends (idle timeout, eviction, shutdown) its
//! remaining stream data is inspected, its transactions are finished and logged, and
//! its `flow` record is written.

mod app_layer;
mod expect;
mod inprocess;
mod inspect;
mod replay;
mod role;
mod stream;
#[cfg(test)]
mod tests;

pub use inprocess::{InProcess, InProcessResult};
pub use role::{run, run_generation};

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_config::{ChecksumChecks, Config};
use meerkat_proto::events::{Event, FileInfo};
use meerkat_runtime::counters::{DetectCounter, DetectCounters};
use meerkat_runtime::{Role, counters_path, eve_socket_path, host_table_path, ring_path};
use meerkat_shm::{Consumer, CounterPage, CounterRef, PacketMeta, WaitOutcome};

use crate::DetectError;
use crate::app::{self, AppProto, AppRecord, Dir, ParseOutput, ReleaseEmpty, Transport};
use crate::control::{self, Command};
use crate::engine::{DetectState, Engine, Hit, PacketView, TxDetect};
use crate::events;
use crate::flow::{
    AppFlow, EndReason, Flow, FlowTable, MAX_PKT_ANOMALIES, MAX_TX_EVENTS, Retired, defrag::Defrag,
    tcp,
};
use crate::rules::{self, RuleContext};
use crate::sink::{self, AckedMark, EventSink, SinkConfig};
use meerkat_wire::decode::{self, DecodeEvent, IpInfo, L4, Packet};

/// Records processed before the ring space is released and counters are refreshed.
const BATCH: usize = 256;
/// Packets whose checksums decide `checksum-checks: auto`.
const CHECKSUM_SAMPLE: u64 = 1000;
/// Bytes per direction kept for app-layer protocol detection.
const MAX_PROBE: usize = 4096;
/// Bytes of a TCP direction that is no protocol's held for the other direction's
/// detection (see `AppFlow::held`): past this, with that direction still undecided,
/// the flow's detection fails (Suricata's limit for a side talking on alone).
const MAX_HELD: u64 = 100_000;
/// Slots of the shared host-state table (128 bytes each: 8 MiB).
pub const HOST_TABLE_SLOTS: usize = 65536;

/// What a worker did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WorkerSummary {
    pub packets: u64,
    pub alerts: u64,
    pub events: u64,
    pub rules_loaded: usize,
    pub rules_failed: usize,
}

/// Counters kept locally and published to the shared page once per batch.
#[derive(Debug, Clone, Copy)]
struct Stats {
    packets: u64,
    bytes: u64,
    alerts: u64,
    invalid_checksum: u64,
    tcp_sessions: u64,
    tcp_untracked: u64,
    tcp_gaps: u64,
    fragments: u64,
    app_flows: [u64; app::APP_PROTOS],
    app_parse_errors: u64,
    anomalies: u64,
    /// `fileinfo` records made, and of them: truncated, with a digest, with magic.
    files: u64,
    files_truncated: u64,
    files_hashed: u64,
    files_magic: u64,
    /// Waits for other workers' packets (before an expectation lookup) given up.
    order_stalls: u64,
    /// Packets replayed after a restart (see `replay`), not in `packets`.
    replayed: u64,
}

// By hand: an array of more than 32 elements (one per protocol) has no derived default.
impl Default for Stats {
    fn default() -> Self {
        Stats {
            packets: 0,
            bytes: 0,
            alerts: 0,
            invalid_checksum: 0,
            tcp_sessions: 0,
            tcp_untracked: 0,
            tcp_gaps: 0,
            fragments: 0,
            app_flows: [0; app::APP_PROTOS],
            app_parse_errors: 0,
            anomalies: 0,
            files: 0,
            files_truncated: 0,
            files_hashed: 0,
            files_magic: 0,
            order_stalls: 0,
            replayed: 0,
        }
    }
}

/// Counter names of worker `index`, in page order (one `app_<name>` per protocol).
pub fn counter_names(index: usize) -> Vec<String> {
    let apps: Vec<&str> = AppProto::ALL.iter().map(|p| p.name()).collect();
    DetectCounters::new(index).names(&apps, DecodeEvent::ALL.iter().map(|e| e.name()))
}

/// The counters refreshed after each batch, in the order of the values the worker loop
/// publishes (the per-protocol flow counters are refreshed apart).
const PER_BATCH: [DetectCounter; 29] = [
    DetectCounter::Packets,
    DetectCounter::Bytes,
    DetectCounter::Alerts,
    DetectCounter::Events,
    DetectCounter::Flows,
    DetectCounter::FlowsActive,
    DetectCounter::FlowsEvicted,
    DetectCounter::InvalidChecksum,
    DetectCounter::TcpSessions,
    DetectCounter::TcpUntracked,
    DetectCounter::TcpGaps,
    DetectCounter::Fragments,
    DetectCounter::DefragReassembled,
    DetectCounter::AppErrors,
    DetectCounter::Anomalies,
    DetectCounter::RingCorrupt,
    DetectCounter::Files,
    DetectCounter::FilesTruncated,
    DetectCounter::FilesHashed,
    DetectCounter::FilesMagic,
    DetectCounter::FilesStored,
    DetectCounter::FileStoreErrors,
    DetectCounter::FileStoreOpen,
    DetectCounter::FileStoreDropped,
    DetectCounter::FileStoreMemcap,
    DetectCounter::HttpByterangeMemcap,
    DetectCounter::ReplayedPackets,
    DetectCounter::ReplayFlowsOutside,
    DetectCounter::ChecksumMode,
];

#[derive(Debug, Clone, Copy)]
enum Checksums {
    Off,
    On,
    /// Sampling the first packets: (seen, bad).
    Auto(u64, u64),
}

/// Settings the worker reads per packet.
#[derive(Debug, Clone)]
struct Settings {
    midstream: bool,
    inline: bool,
    depth: u64,
    /// `stream.reassembly.toserver-chunk-size`, `toclient-chunk-size`: raw inspection
    /// waits for this many acknowledged bytes of a side (see `Worker::stream_packet`).
    chunk: [u64; 2],
    /// Some eve-log's `anomaly` logs decoder events (`types: {decode: yes}`; Suricata's
    /// default: no).
    want_decode_anomaly: bool,
    /// Some eve-log's `anomaly` logs `types: {stream: yes}` (Suricata's default: no).
    want_stream_anomaly: bool,
    /// Some eve-log's `anomaly` logs app-layer events (`types: {applayer: yes}`, the
    /// default).
    want_applayer_anomaly: bool,
    want_flow: bool,
    /// The UDP ports VXLAN, Geneve and Teredo are looked for on.
    tunnel_ports: decode::TunnelPorts,
    /// Per app protocol: log its records (it has a record, some output logs its
    /// type, and it is parsed, not `detection-only`).
    log_app: [bool; app::APP_PROTOS],
    /// Some output logs alert payloads (`payload`, `payload-printable`): alerts carry
    /// it, and whether they matched on stream data.
    alert_payload: bool,
    /// Most stream bytes an alert payload carries (the largest over those outputs).
    max_stream_payload: usize,
    /// Some output logs alerts' packets (`packet`).
    alert_packet: bool,
    /// Some output adds `pcap_filename` (`pcap-file`): events carry it.
    pcap_filename: bool,
    /// Log `fileinfo` records (some output logs `files`).
    log_files: bool,
    /// Log JA3 and JA3S in `tls` records (`app-layer.protocols.tls.ja3-fingerprints`:
    /// `yes`; `auto`, the default, when a loaded rule inspects them; `no`).
    ja3: bool,
    /// `mqtt` records: log passwords, and the `string-log-limit` (0: none), of the
    /// outputs that log them (the first one's passwords setting, the largest limit).
    mqtt_passwords: bool,
    /// `pgsql` records: log passwords (`outputs.eve-log.types.pgsql.passwords`).
    pgsql_passwords: bool,
    /// `dhcp` records in Suricata's `extended` form (any output that logs them asks).
    dhcp_extended: bool,
    /// What `smtp` records carry beyond the default `email` fields (`custom`, `md5`
    /// of the outputs that log them, joined).
    email_log: app::smtp::eve::EmailLog,
    mqtt_string_log_limit: usize,
    /// What the config asks of the file layer (the rules' needs are added to it).
    files: app::files::FileConfig,
    /// The file store is on (`file-store.enabled`).
    file_store: bool,
}

/// A worker's state: the flow table, the fragment table, and the rest (so that a flow
/// borrowed from the table and the rest can be used at once).
struct Worker {
    flows: FlowTable,
    defrag: Defrag,
    x: Inner,
}

/// Where a worker's events go.
enum Out {
    /// Streamed to the eve-writer.
    Grpc(Box<EventSink>),
    /// Kept in this process (in-process runs: tests and benchmarks).
    Collect(Vec<Event>),
}

impl Out {
    fn push(&mut self, ev: Event) {
        match self {
            Out::Grpc(s) => s.push(ev),
            Out::Collect(v) => v.push(ev),
        }
    }

    fn tick(&mut self, now: Instant) {
        if let Out::Grpc(s) = self {
            s.tick(now);
        }
    }

    /// A batch of ring records starts (event batches are cut only at marks).
    fn begin(&mut self) {
        if let Out::Grpc(s) = self {
            s.begin();
        }
    }

    /// Every event of the ring records before position `pos` is pushed; the last of
    /// them has ring sequence number `seq`.
    fn mark(&mut self, pos: u64, seq: u64) {
        if let Out::Grpc(s) = self {
            s.mark(pos, seq);
        }
    }

    /// Asks for what is pushed to be acknowledged now; returns the handoff count to
    /// wait for (see `EventSink::flush_mark`).
    fn flush_mark(&mut self) -> u64 {
        match self {
            Out::Grpc(s) => s.flush_mark(),
            Out::Collect(_) => 0,
        }
    }

    /// Highest ring position whose events are acknowledged (everything, in process).
    fn acked_mark(&self) -> u64 {
        match self {
            Out::Grpc(s) => s.acked_mark(),
            Out::Collect(_) => u64::MAX,
        }
    }

    /// Events pushed so far.
    fn events(&self) -> u64 {
        match self {
            Out::Grpc(s) => s.stats().events.load(Ordering::Relaxed),
            Out::Collect(v) => v.len() as u64,
        }
    }
}

struct Inner {
    index: usize,
    engine: Engine,
    st: DetectState,
    sink: Out,
    cfg: Settings,
    checksums: Checksums,
    stats: Stats,
    decode_counts: [u64; DecodeEvent::ALL.len()],
    hits: Vec<Hit>,
    /// The frame of the alert being made (see `alert_on_frame`).
    pending_frame: Option<meerkat_proto::events::Frame>,
    /// Transaction records waiting to be logged (kept for its capacity).
    to_log: Vec<(u64, AppRecord)>,
    /// Ended files waiting to be logged: (file to server, its transaction's record,
    /// the file's record).
    file_log: Vec<(bool, Option<AppRecord>, FileInfo)>,
    /// The enabled app-layer protocols with their settings.
    registry: app::Registry,
    /// Packet time: flows end by the clock of the traffic, not the wall clock.
    now_ns: u64,
    /// Protocol-detection events raised while processing the current packet.
    pkt_app_events: u8,
    /// Parser anomalies raised while processing the current packet, for EVE `anomaly`
    /// (type `applayer`): their transaction's id and name (kept for its capacity).
    pkt_anomalies: Vec<(u64, &'static str)>,
    /// Protocol detection finished (in some direction) on the current packet.
    pkt_proto_done: bool,
    /// A TCP flow's protocol was just found in a direction while the other held bytes
    /// of no protocol that came first: its new parser is fed those first, then the
    /// detecting direction's (the caller does it; see `detect_protocol`).
    other_first: bool,
    /// The TCP flow being fed to the app layer was picked up midstream.
    feeding_midstream: bool,
    /// The pseudo packet being inspected at a flow's end is one Suricata makes (see
    /// `PacketView::pseudo_app_rules`).
    pseudo_app_rules: bool,
    /// Link type of the last packet captured: the one pseudo packets at flow end are
    /// logged with (`packet_info`), as Suricata does.
    link_type: u16,
    /// Where capture files' names come from (with `pcap_filename` only).
    files: FileSource,
    /// The capture file of the packets being processed: its index and name (the name
    /// events get, as Suricata gives every record the file being read).
    file: (u32, String),
    /// The file store (`file-store` on): where `filestore` rules' files are written.
    store: Option<app::files::store::Store>,
    /// `filestore` matches of one inspection (live transaction index, direction, rule),
    /// applied once the transactions can be changed (kept for its capacity).
    store_marks: Vec<(usize, Dir, u32)>,
    /// The number of the packet being processed (capture order).
    cur_seq: u64,
    /// Ring positions of the record being processed: its start and its end.
    rec: (u64, u64),
    /// The records kept for a replacement (see `replay`).
    replay: replay::ReplayFloor,
    /// `capture.replay-window` in bytes.
    replay_window: u64,
    /// Replaying a dead predecessor's records up to this ring position (see `replay`):
    /// flows are rebuilt, nothing is written.
    replaying: Option<u64>,
    /// A parser announced connections (FTP data) while processing the current data.
    pkt_expect: bool,
    /// Directions whose parser asked for raw stream inspection in the current feed
    /// (`ParseOutput::raw_trigger`), applied to the TCP sides once it is done.
    pkt_raw_trigger: u8,
    /// A parser in the current feed ended the flow's payload inspection
    /// (`ParseOutput::no_payload_inspection`).
    pkt_no_payload: bool,
    /// The parser asked for the flush of both raw streams, then no payload inspection
    /// (`ParseOutput::no_payload_inspection_flush`).
    pkt_no_payload_flush: bool,
    /// Announced connections: the table shared with the other workers.
    expect: expect::Expectations,
}

/// The names of the capture files ring records point at.
#[derive(Debug)]
enum FileSource {
    /// The run's file table, written by capture (the detect role).
    Table(meerkat_shm::FileNames),
    /// Names given in this process (in-process runs), index 1 first.
    Local(Vec<String>),
}

impl FileSource {
    fn name(&mut self, index: u32) -> Option<&str> {
        match self {
            FileSource::Table(t) => t.name(index),
            FileSource::Local(v) => v.get((index as usize).checked_sub(1)?).map(String::as_str),
        }
    }
}

/// Everything about the current packet that events need.
#[derive(Clone, Copy)]
struct Ctx<'a> {
    pkt: &'a Packet<'a>,
    meta: &'a PacketMeta,
    src: events::PacketSrc,
}

impl Worker {
    /// Processes one captured packet.
    fn packet(&mut self, meta: &PacketMeta, data: &[u8], rec: (u64, u64)) {
        let x = &mut self.x;
        if x.replaying.is_some_and(|until| rec.0 >= until) {
            x.end_replay();
        }
        if x.cfg.pcap_filename && meta.file != x.file.0 {
            x.set_file(meta.file);
        }
        x.now_ns = x.now_ns.max(meta.ts_ns);
        x.cur_seq = meta.seq;
        x.rec = rec;
        x.link_type = meta.link_type;
        if x.replaying.is_some() {
            x.stats.replayed += 1;
        } else {
            x.stats.packets += 1;
            x.stats.bytes += data.len() as u64;
        }
        // Flows idle past their timeout end before this packet is processed, at whole
        // seconds of packet time: at the same packet in every run.
        self.sweep();
        let x = &mut self.x;
        let (pkt, ev) = decode::decode_with(&x.cfg.tunnel_ports, meta.link_type, data);
        self.decoded_or_invalid(&pkt, ev, meta, events::PacketSrc::Wire);
    }

    /// A decoded packet, or one whose decoding failed (event `ev`).
    fn decoded_or_invalid(
        &mut self,
        pkt: &Packet<'_>,
        ev: Option<DecodeEvent>,
        meta: &PacketMeta,
        src: events::PacketSrc,
    ) {
        let x = &mut self.x;
        if pkt.events != 0 {
            x.count_decode_events(pkt.events);
        }
        if let Some(ev) = ev {
            if x.cfg.want_decode_anomaly {
                x.stats.anomalies += 1;
                x.emit(events::decode_anomaly(ev.name(), pkt, meta, src));
            }
            // Only `decode-event` rules look at a packet that failed to decode.
            x.inspect_packet(Ctx { pkt, meta, src }, None, None, Some(pkt.payload), false);
            return;
        }
        self.decoded(pkt, meta, src);
    }

    /// A packet that carries another in a tunnel: it is inspected on its headers only
    /// (its payload is the inner packet, as Suricata does), a UDP tunnel in its flow
    /// (without app-layer parsing), a GRE or IP-in-IP packet without one; then the
    /// inner packet is decoded and processed as a packet of its own.
    fn tunnel(&mut self, pkt: &Packet<'_>, meta: &PacketMeta, src: events::PacketSrc) {
        let Some(e) = pkt.encap else { return };
        let mut outer = *pkt;
        outer.payload = &[];
        if matches!(pkt.l4, L4::Udp { .. }) {
            let valid = self.x.checksum_ok(&outer);
            let mut evicted = Vec::new();
            if let Some((flow, to_server)) = self
                .flows
                .track(&outer, meta.ts_ns, |f, r| evicted.push((f, r)))
            {
                self.x.flow_packet(
                    Ctx {
                        pkt: &outer,
                        meta,
                        src,
                    },
                    flow,
                    to_server,
                    valid,
                );
            }
            for (f, r) in evicted {
                self.x.end_flow(f, r);
            }
        } else {
            self.x.inspect_packet(
                Ctx {
                    pkt: &outer,
                    meta,
                    src,
                },
                None,
                None,
                None,
                false,
            );
        }
        let Some(root) = events::TunnelRoot::of(pkt, meta, src) else {
            return;
        };
        let Some((inner, ev)) = decode::decode_inner(&self.x.cfg.tunnel_ports, pkt) else {
            return;
        };
        let src = events::PacketSrc::Tunnel {
            via: e.tunnel,
            depth: inner.depth,
            root,
        };
        self.decoded_or_invalid(&inner, ev, meta, src);
    }

    fn decoded(&mut self, pkt: &Packet<'_>, meta: &PacketMeta, src: events::PacketSrc) {
        let Some(ip) = pkt.ip else {
            return;
        };
        if pkt.encap.is_some() {
            self.tunnel(pkt, meta, src);
            return;
        }
        if ip.fragment.is_some() {
            self.x.stats.fragments += 1;
            // Fragments are inspected as packets (no flow), with the events reassembly
            // raised on them (overlap, too large), then reassembled.
            let mut frag = *pkt;
            let whole = self.defrag.add(pkt, meta.ts_ns, &mut frag.events);
            if frag.events != pkt.events {
                self.x.count_decode_events(frag.events & !pkt.events);
            }
            self.x.inspect_packet(
                Ctx {
                    pkt: &frag,
                    meta,
                    src,
                },
                None,
                None,
                Some(pkt.payload),
                false,
            );
            if let Some(whole) = whole {
                let (mut p, ev) = decode::decode(decode::LINKTYPE_RAW, &whole);
                if ev.is_none() && p.ip.is_some_and(|i| i.fragment.is_none()) {
                    p.vlan = pkt.vlan;
                    p.vlan_len = pkt.vlan_len;
                    self.decoded(&p, meta, events::PacketSrc::Defrag);
                }
            }
            return;
        }
        let valid = self.x.checksum_ok(pkt);
        let mut evicted = Vec::new();
        if let Some((flow, to_server)) = self
            .flows
            .track(pkt, meta.ts_ns, |f, r| evicted.push((f, r)))
        {
            self.x
                .flow_packet(Ctx { pkt, meta, src }, flow, to_server, valid);
        } else if pkt.ip.is_some() {
            // An IP packet of no flow: an ICMPv4 error report that names no live TCP
            // or UDP flow (Suricata makes no flow for it either).
            self.x
                .inspect_packet(Ctx { pkt, meta, src }, None, None, Some(pkt.payload), false);
        }
        for (f, r) in evicted {
            self.x.end_flow(f, r);
        }
    }
}

impl Inner {
    fn emit(&mut self, mut ev: Event) {
        if self.replaying.is_some() {
            // A dead predecessor wrote it (see `replay`).
            return;
        }
        if self.cfg.pcap_filename {
            ev.pcap_filename.clone_from(&self.file.1);
        }
        self.sink.push(ev);
    }

    /// The packets from here on come from capture file `index`.
    fn set_file(&mut self, index: u32) {
        self.file.0 = index;
        self.file.1.clear();
        if let Some(name) = self.files.name(index) {
            self.file.1.push_str(name);
        }
    }

    /// Goes on with a predecessor's `checksum-checks: auto` decision (`mode` as
    /// [`Checksums::mode`]): a replacement samples other packets than it did.
    fn inherit_checksums(&mut self, mode: u64) {
        if let Checksums::Auto(..) = self.checksums {
            match mode {
                1 => self.checksums = Checksums::On,
                2 => self.checksums = Checksums::Off,
                _ => {}
            }
        }
    }

    /// Starts replaying a dead predecessor's records up to ring position `until` (see
    /// `replay`).
    fn start_replay(&mut self, until: u64) {
        self.replaying = Some(until);
        self.st.set_replaying(true);
    }

    /// The records of the dead predecessor's flows are processed again: from here on
    /// this worker writes what it finds.
    fn end_replay(&mut self) {
        self.replaying = None;
        self.st.set_replaying(false);
        tracing::info!(
            worker = self.index,
            packets = self.stats.replayed,
            "replayed the records of a dead predecessor's flows: its flows go on"
        );
    }

    /// Counts decoder events (bits of [`DecodeEvent::bit`]).
    fn count_decode_events(&mut self, events: meerkat_wire::EventSet) {
        for (i, e) in DecodeEvent::ALL.iter().enumerate() {
            if events & e.bit() != 0 {
                self.decode_counts[i] += 1;
            }
        }
    }

    /// Checksum validation (`checksum-checks`, `-k`): only TCP packets with a bad
    /// checksum are kept out of the stream, as in Suricata.
    fn checksum_ok(&mut self, pkt: &Packet<'_>) -> bool {
        let valid = match self.checksums {
            Checksums::Off => true,
            Checksums::On => pkt.checksums_ok(),
            Checksums::Auto(seen, bad) => {
                let ok = pkt.checksums_ok();
                let (seen, bad) = (seen + 1, bad + u64::from(!ok));
                self.checksums = if seen < CHECKSUM_SAMPLE {
                    Checksums::Auto(seen, bad)
                } else if bad * 10 > seen {
                    tracing::info!(
                        worker = self.index,
                        "{bad} of the first {seen} packets have bad checksums (offloading?): \
                         checksum validation off"
                    );
                    Checksums::Off
                } else {
                    Checksums::On
                };
                ok
            }
        };
        if !valid {
            self.stats.invalid_checksum += 1;
        }
        valid
    }
}

/// What the file layer does for new flows: what the config asks, with what the rules
/// need; bytes are kept for the store only when it is on.
fn file_config(cfg: &Settings, engine: &Engine) -> app::files::FileConfig {
    let mut c = cfg.files.union(engine.file_needs());
    if !cfg.file_store {
        c.store_possible = false;
        c.store_all = false;
    }
    c
}

/// The file store of worker `index`, when `file-store` is on: its directory (relative
/// to the log directory unless absolute) is made if missing. A store that cannot be
/// made is reported and left off (files are then logged, not stored).
fn open_store(config: &Config, index: usize) -> Option<app::files::store::Store> {
    let fs = config.file_store()?;
    app::files::BUDGET.set_cap(fs.memcap.bytes());
    let dir = config.default_log_dir.join(&fs.dir);
    let workers = u32::try_from(config.workers()).unwrap_or(u32::MAX);
    let worker = u32::try_from(index).unwrap_or(u32::MAX);
    match app::files::store::Store::open(&dir, worker, workers, fs.max_open_files) {
        Ok(s) => Some(s),
        Err(e) => {
            tracing::error!(
                worker = index,
                "file-store: cannot make {}: {e}; files are not stored",
                dir.display()
            );
            None
        }
    }
}

impl Settings {
    fn from_config(config: &Config) -> Settings {
        // Any output that logs the type wants it (outputs filter by type themselves).
        let wants = |t: &str| config.eve_wants(t);
        let extras: Vec<_> = config.eve_logs().map(|e| e.alert_extras()).collect();
        let mqtt: Vec<_> = config.eve_logs().filter_map(|e| e.mqtt_log()).collect();
        let payload = |x: &&meerkat_config::AlertExtras| x.payload || x.payload_printable;
        let anomaly: Vec<_> = config
            .eve_logs()
            .filter_map(|e| e.anomaly_types())
            .collect();
        Settings {
            midstream: config.stream.midstream,
            inline: config.stream.inline,
            depth: config.stream.reassembly.depth.bytes(),
            chunk: [
                config.stream.reassembly.toserver_chunk_size.bytes(),
                config.stream.reassembly.toclient_chunk_size.bytes(),
            ],
            want_decode_anomaly: anomaly.iter().any(|t| t.decode),
            want_stream_anomaly: anomaly.iter().any(|t| t.stream),
            want_applayer_anomaly: anomaly.iter().any(|t| t.applayer),
            want_flow: wants("flow"),
            log_files: wants("files"),
            ja3: false,
            mqtt_passwords: mqtt.first().is_none_or(|m| m.passwords),
            dhcp_extended: config.eve_logs().any(|e| e.dhcp_extended() == Some(true)),
            email_log: config
                .eve_logs()
                .filter_map(|e| e.smtp_log())
                .map(|(custom, md5)| app::smtp::eve::EmailLog::from_lists(&custom, &md5))
                .fold(
                    app::smtp::eve::EmailLog::default(),
                    app::smtp::eve::EmailLog::union,
                ),
            pgsql_passwords: config.eve_logs().any(|e| e.pgsql_passwords() == Some(true)),
            mqtt_string_log_limit: mqtt
                .iter()
                .map(|m| usize::try_from(m.string_log_limit).unwrap_or(usize::MAX))
                .reduce(|a, b| if a == 0 || b == 0 { 0 } else { a.max(b) })
                .unwrap_or(meerkat_config::outputs::DEFAULT_MQTT_STRING_LOG_LIMIT as usize),
            files: app::files::FileConfig::from_config(config),
            file_store: config.file_store().is_some(),
            tunnel_ports: tunnel_ports(config),
            log_app: std::array::from_fn(|i| {
                app::PROTOCOLS
                    .get(i.wrapping_sub(1))
                    .and_then(|d| d.eve_types_name())
                    .is_some_and(wants)
            }),
            alert_payload: extras.iter().any(|x| payload(&x)),
            max_stream_payload: extras
                .iter()
                .filter(payload)
                .map(|x| x.max_stream_payload)
                .max()
                .unwrap_or(0)
                .min(meerkat_config::outputs::MAX_PAYLOAD_BUFFER_SIZE as usize),
            alert_packet: extras.iter().any(|x| x.packet),
            pcap_filename: config.eve_pcap_filename(),
        }
    }
}

/// The UDP tunnel ports of `decoder.*.ports` (validated with the config; a value that
/// fails here keeps Suricata's default port).
pub fn tunnel_ports(config: &Config) -> decode::TunnelPorts {
    use meerkat_config::{TunnelPortList, UdpTunnelKind};
    use meerkat_wire::tunnel::Ports;
    let d = decode::TunnelPorts::DEFAULT;
    let conv = |kind, default: Ports| match config.tunnel_ports(kind) {
        Ok(TunnelPortList::Off) => Ports::NONE,
        Ok(TunnelPortList::Any) => Ports::ANY,
        Ok(TunnelPortList::Ports(v)) => Ports::list(&v).unwrap_or(default),
        Err(_) => default,
    };
    decode::TunnelPorts {
        vxlan: conv(UdpTunnelKind::Vxlan, d.vxlan),
        geneve: conv(UdpTunnelKind::Geneve, d.geneve),
        teredo: conv(UdpTunnelKind::Teredo, d.teredo),
    }
}

impl Checksums {
    /// As `DetectCounter::ChecksumMode` says it: 0 still sampling, 1 on, 2 off.
    fn mode(self) -> u64 {
        match self {
            Checksums::Auto(..) => 0,
            Checksums::On => 1,
            Checksums::Off => 2,
        }
    }

    fn from_config(config: &Config) -> Checksums {
        if !config.stream.checksum_validation {
            return Checksums::Off;
        }
        match config.pcap_file.checksum_checks {
            ChecksumChecks::No => Checksums::Off,
            ChecksumChecks::Yes => Checksums::On,
            ChecksumChecks::Auto => Checksums::Auto(0, 0),
        }
    }
}

impl Worker {
    fn new(
        config: &Config,
        registry: app::Registry,
        index: usize,
        engine: Engine,
        st: DetectState,
        sink: Out,
        files: FileSource,
    ) -> Worker {
        let mut cfg = Settings::from_config(config);
        cfg.ja3 = config
            .app_layer
            .flag("tls", "ja3-fingerprints")
            .unwrap_or_else(|| engine.uses_buffer("ja3"));
        let mut registry = registry;
        registry.set_files(file_config(&cfg, &engine));
        registry.set_frames(engine.frame_buffers());
        registry.set_rule_buffers(engine.rule_buffers());
        let store = open_store(config, index);
        Worker {
            flows: FlowTable::new(index),
            defrag: Defrag::default(),
            x: Inner {
                index,
                engine,
                st,
                sink,
                cfg,
                checksums: Checksums::from_config(config),
                stats: Stats::default(),
                decode_counts: [0; DecodeEvent::ALL.len()],
                hits: Vec::new(),
                pending_frame: None,
                to_log: Vec::new(),
                file_log: Vec::new(),
                registry,
                now_ns: 0,
                pkt_app_events: 0,
                pkt_anomalies: Vec::new(),
                pkt_proto_done: false,
                other_first: false,
                feeding_midstream: false,
                pseudo_app_rules: false,
                link_type: 0,
                files,
                file: (0, String::new()),
                store,
                store_marks: Vec::new(),
                cur_seq: 0,
                rec: (0, 0),
                replay: replay::ReplayFloor::default(),
                replay_window: config.capture.replay_window_bytes(),
                replaying: None,
                pkt_expect: false,
                pkt_raw_trigger: 0,
                pkt_no_payload: false,
                pkt_no_payload_flush: false,
                expect: expect::Expectations::Local(Vec::new()),
            },
        }
    }

    /// Ends every flow still in the table (end of input).
    fn drain(&mut self) {
        let x = &mut self.x;
        self.flows.drain(|f, r| x.end_flow(f, r));
        // The stored files are on disk before the run is over.
        if let Some(s) = self.x.store.as_mut() {
            s.finish();
        }
    }

    /// Ends the flows that timed out by packet time, and stale fragments.
    /// Ends the flows and fragments idle past their timeout, once per second of packet
    /// time (see `FlowTable::sweep`).
    fn sweep(&mut self) {
        let now = self.x.now_ns;
        if !self.flows.sweep_due(now) {
            return;
        }
        let x = &mut self.x;
        self.flows.sweep(now, |f, r| x.end_flow(f, r));
        self.defrag.expire(now);
        self.x.registry.tick(now / 1_000_000_000);
    }
}
