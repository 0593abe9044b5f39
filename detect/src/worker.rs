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

use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_config::{ChecksumChecks, Config};
use meerkat_proto::events::Event;
use meerkat_runtime::counters::{DetectCounter, DetectCounters};
use meerkat_runtime::{Role, counters_path, eve_socket_path, host_table_path, ring_path};
use meerkat_shm::{Consumer, CounterPage, CounterRef, PacketMeta, WaitOutcome};

use crate::DetectError;
use crate::app::{self, AppProto, AppRecord, Dir, ParseOutput, ReleaseEmpty, Transport};
use crate::control::{self, Command};
use crate::engine::{DetectState, Engine, Hit, PacketView, TxDetect};
use crate::events;
use crate::flow::{AppFlow, EndReason, Flow, FlowTable, MAX_TX_EVENTS, defrag::Defrag, tcp};
use crate::rules::{self, RuleContext};
use crate::sink::{self, AckedMark, EventSink, SinkConfig};
use meerkat_wire::decode::{self, DecodeEvent, IpInfo, L4, Packet};

/// Records processed before the ring space is released and counters are refreshed.
const BATCH: usize = 256;
/// Packets whose checksums decide `checksum-checks: auto`.
const CHECKSUM_SAMPLE: u64 = 1000;
/// Bytes per direction kept for app-layer protocol detection.
const MAX_PROBE: usize = 4096;
/// Slots of the shared host-state table (128 bytes each: 8 MiB).
const HOST_TABLE_SLOTS: usize = 65536;

/// What a worker did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct WorkerSummary {
    pub packets: u64,
    pub alerts: u64,
    pub events: u64,
    pub rules_loaded: usize,
    pub rules_failed: usize,
}

/// CPU time (user + system) this process has used so far, µs.
fn self_cpu_us() -> u64 {
    // SAFETY: getrusage fills the struct we own.
    let ru = unsafe {
        let mut ru: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut ru);
        ru
    };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    us(ru.ru_utime) + us(ru.ru_stime)
}

/// Counters kept locally and published to the shared page once per batch.
#[derive(Debug, Default, Clone, Copy)]
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
}

/// Counter names of worker `index`, in page order (one `app_<name>` per protocol).
pub fn counter_names(index: usize) -> Vec<String> {
    let apps: Vec<&str> = AppProto::ALL.iter().map(|p| p.name()).collect();
    DetectCounters::new(index).names(&apps, DecodeEvent::ALL.iter().map(|e| e.name()))
}

/// The counters refreshed after each batch, in the order of the values the worker loop
/// publishes (the per-protocol flow counters are refreshed apart).
const PER_BATCH: [DetectCounter; 16] = [
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
    want_anomaly: bool,
    want_flow: bool,
    /// Per app protocol: log its records (it has a record, some output logs its
    /// type, and it is parsed, not `detection-only`).
    log_app: [bool; app::APP_PROTOS],
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
    /// Transaction records waiting to be logged (kept for its capacity).
    to_log: Vec<(u64, AppRecord)>,
    /// The enabled app-layer protocols with their settings.
    registry: app::Registry,
    /// Packet time: flows end by the clock of the traffic, not the wall clock.
    now_ns: u64,
    /// Protocol-detection events raised while processing the current packet.
    pkt_app_events: u8,
    /// Protocol detection finished (in some direction) on the current packet.
    pkt_proto_done: bool,
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
    fn packet(&mut self, meta: &PacketMeta, data: &[u8]) {
        let x = &mut self.x;
        x.now_ns = x.now_ns.max(meta.ts_ns);
        x.stats.packets += 1;
        x.stats.bytes += data.len() as u64;
        let (pkt, ev) = decode::decode(meta.link_type, data);
        if pkt.events != 0 {
            x.count_decode_events(pkt.events);
        }
        if let Some(ev) = ev {
            if x.cfg.want_anomaly {
                x.stats.anomalies += 1;
                x.emit(events::decode_anomaly(ev.name(), &pkt, meta));
            }
            // Only `decode-event` rules look at a packet that failed to decode.
            let src = events::PacketSrc::Wire;
            x.inspect_packet(
                Ctx {
                    pkt: &pkt,
                    meta,
                    src,
                },
                None,
                None,
                Some(pkt.payload),
            );
            return;
        }
        self.decoded(&pkt, meta, events::PacketSrc::Wire);
    }

    fn decoded(&mut self, pkt: &Packet<'_>, meta: &PacketMeta, src: events::PacketSrc) {
        let Some(ip) = pkt.ip else {
            return;
        };
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
        }
        for (f, r) in evicted {
            self.x.end_flow(f, r);
        }
    }
}

impl Inner {
    fn emit(&mut self, ev: Event) {
        self.sink.push(ev);
    }

    /// Counts decoder events (bits of [`DecodeEvent::bit`]).
    fn count_decode_events(&mut self, events: u64) {
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

    /// A packet with its flow: stream, app layer, detection.
    fn flow_packet(&mut self, c: Ctx<'_>, flow: &mut Flow, mut to_server: bool, checksum_ok: bool) {
        let pkt = c.pkt;
        let ts = c.meta.ts_ns;
        let mut dir = if to_server {
            Dir::ToServer
        } else {
            Dir::ToClient
        };
        let mut d = dir.index();
        self.pkt_app_events = 0;
        self.pkt_proto_done = false;

        // TCP session.
        let mut stream_added = false;
        let mut closing = false;
        if let L4::Tcp {
            flags, seq, ack, ..
        } = pkt.l4
            && checksum_ok
        {
            if flow.tcp.is_none() && !flow.tcp_untracked {
                match tcp::Session::start(
                    to_server,
                    flags,
                    seq,
                    ack,
                    pkt.payload.len(),
                    self.cfg.midstream,
                ) {
                    Some(s) => {
                        flow.tcp = Some(Box::new(s));
                        self.stats.tcp_sessions += 1;
                    }
                    None => {
                        flow.tcp_untracked = true;
                        self.stats.tcp_untracked += 1;
                    }
                }
            }
            if let Some(s) = flow.tcp.as_deref_mut() {
                let gaps_before = s.sides[d].gap_bytes + s.sides[1 - d].gap_bytes;
                let up = s.packet(to_server, flags, seq, ack, pkt.payload, self.cfg.depth);
                stream_added = up.added;
                closing = flags & (tcp::FIN | tcp::RST) != 0;
                if s.sides[d].gap_bytes + s.sides[1 - d].gap_bytes > gaps_before {
                    self.stats.tcp_gaps += 1;
                }
            }
        }

        // A flow whose first data is a reply (a UDP flow, or a TCP flow picked up
        // midstream) is the other way round: reverse it, as Suricata does.
        if self.first_data_reversed(flow, d, pkt.payload) {
            flow.reverse();
            to_server = !to_server;
            dir = dir.other();
            d = dir.index();
        }

        // App layer.
        let transport = match pkt.l4 {
            L4::Tcp { .. } => Some(Transport::Tcp),
            L4::Udp { .. } => Some(Transport::Udp),
            _ => None,
        };
        let mut progressed = [false; 2];
        match transport {
            Some(Transport::Tcp) if flow.tcp.is_some() => {
                for side in [d, 1 - d] {
                    let sdir = if side == 0 {
                        Dir::ToServer
                    } else {
                        Dir::ToClient
                    };
                    progressed[side] |= self.feed_stream(flow, sdir, false);
                }
            }
            // A datagram's checksum does not keep it from its parser (as in Suricata, where
            // only TCP's stream refuses bad checksums).
            Some(Transport::Udp) if !pkt.payload.is_empty() => {
                let ports = [flow.client.1, flow.server.1];
                progressed[d] |=
                    self.feed_app(&mut flow.app, ports, dir, Transport::Udp, pkt.payload);
            }
            _ => {}
        }

        // Raw stream chunk of this packet's direction.
        let chunk_range = flow.tcp.as_deref_mut().and_then(|s| {
            let side = &mut s.sides[d];
            let limit = if self.cfg.inline || closing || side.fin {
                side.next()
            } else {
                side.acked.min(side.next())
            };
            (limit > side.raw_done).then(|| {
                let r = (side.raw_done, limit);
                side.raw_done = limit;
                r
            })
        });
        let established = flow.established();
        let stream_bytes = flow.stream_bytes();
        let app_proto = flow.app.proto;
        let flow_id = flow.id;
        let first = if to_server {
            flow.pkts_toserver == 1
        } else {
            flow.pkts_toclient == 1
        };
        {
            let stream = match (chunk_range, flow.tcp.as_deref()) {
                (Some((a, b)), Some(s)) => Some(s.sides[d].bytes(a, b)),
                _ => None,
            };
            let view = PacketView {
                pkt,
                ts_ns: ts,
                to_server: Some(to_server),
                established,
                app_proto,
                payload: (!stream_added).then_some(pkt.payload),
                stream,
                segment: stream_added.then_some(pkt.payload),
                stream_bytes,
                flow_id,
                first_in_direction: first,
                pseudo: false,
                app_proto_dir: flow.app.dir_proto,
                proto_detect_done: self.pkt_proto_done,
                app_events: self.pkt_app_events,
            };
            self.hits.clear();
            let mut hits = std::mem::take(&mut self.hits);
            self.engine
                .inspect_packet(&mut self.st, &view, Some(&mut flow.vars), &mut hits);
            for h in &hits {
                self.alert(c, Some((&*flow, to_server)), *h, None);
            }
            if !hits.is_empty() {
                flow.alerted = true;
                if hits.iter().any(|h| self.drops_flow(h.sig)) {
                    flow.vars.pass = true;
                }
            }
            self.hits = hits;
        }
        // Transactions.
        for (sdir, got) in [Dir::ToServer, Dir::ToClient].into_iter().zip(progressed) {
            if got {
                self.inspect_txs(c, flow, to_server, sdir, false);
            }
        }
        if let Some(s) = flow.tcp.as_deref_mut() {
            for side in &mut s.sides {
                side.trim();
            }
        }
    }

    /// Feeds new in-order bytes of one TCP direction to the app layer. Returns whether
    /// the parser got anything.
    fn feed_stream(&mut self, flow: &mut Flow, dir: Dir, flush: bool) -> bool {
        let d = dir.index();
        let Some(s) = flow.tcp.as_deref_mut() else {
            return false;
        };
        let gap = std::mem::take(&mut s.sides[d].pending_gap);
        let (from, to) = (s.sides[d].app_done, s.sides[d].next());
        let fin = s.sides[d].fin || s.state == tcp::State::Closed || flush;
        if gap > 0
            && let Some(state) = flow.app.state.as_deref_mut()
        {
            let mut out = ParseOutput::default();
            state.gap(dir, gap, &mut out);
            self.parse_output(&out, &mut flow.app, dir);
        }
        let mut got = false;
        if flow.app.detection_done && flow.app.state.is_none() {
            // Nobody parses this flow: let the bytes go.
            s.sides[d].app_done = to;
        } else if to > from {
            let ports = [flow.client.1, flow.server.1];
            let Flow { tcp, app, .. } = &mut *flow;
            if let Some(s) = tcp.as_deref_mut() {
                // The parser reads the stream in place (the app state and the stream are
                // different parts of the flow).
                got = self.feed_app(app, ports, dir, Transport::Tcp, s.sides[d].bytes(from, to));
                s.sides[d].app_done = to;
            }
        }
        if fin && let Some(state) = flow.app.state.as_deref_mut() {
            let mut out = ParseOutput::default();
            state.eof(dir, &mut out);
            self.parse_output(&out, &mut flow.app, dir);
            got = true;
        }
        got
    }

    /// Counts a parse call's outcome and remembers its anomalies, by transaction, for
    /// `app-layer-event`: an anomaly belongs to the newest transaction after the call
    /// (the one the parser was working on), or to the next one when there is none.
    fn parse_output(&mut self, out: &ParseOutput, app: &mut AppFlow, dir: Dir) {
        if out.failed {
            self.stats.app_parse_errors += 1;
        }
        self.stats.anomalies += out.anomalies.len() as u64;
        if out.anomalies.is_empty() {
            return;
        }
        let id = app
            .state
            .as_deref()
            .and_then(|s| s.tx(s.tx_count().checked_sub(1)?).map(|t| t.id()))
            .unwrap_or(app.next_free);
        for &name in &out.anomalies {
            if app.tx_events.len() < MAX_TX_EVENTS && !app.tx_events.contains(&(id, dir, name)) {
                app.tx_events.push((id, dir, name));
            }
        }
    }

    /// Whether an alert of rule `sig` ends detection on its flow: a `drop` (or
    /// `reject`) rule about an app-layer protocol drops the whole flow, as Suricata
    /// marks the flow dropped (no packet of it is inspected after), in IDS mode too.
    fn drops_flow(&self, sig: u32) -> bool {
        let rule = &self.engine.sig(sig).rule;
        matches!(rule.action, rules::Action::Drop | rules::Action::Reject)
            && rule.app_proto.is_some()
    }

    /// Whether a flow must be reversed before its first data is parsed: that data, in
    /// direction `d`, is recognised only as the other direction's (an HTTP response),
    /// or as a reply of its protocol (a DNS response). Only the first data of a UDP
    /// flow or of a TCP flow picked up midstream can say so (a handshake orients a
    /// flow for good).
    fn first_data_reversed(&self, flow: &Flow, d: usize, payload: &[u8]) -> bool {
        if flow.app.detection_done || flow.app.probed != [0, 0] {
            return false;
        }
        let (transport, data) = match flow.tcp.as_deref() {
            Some(s) if s.midstream => {
                let side = &s.sides[d];
                (Transport::Tcp, side.bytes(side.app_done, side.next()))
            }
            None if flow.proto == 17 => (Transport::Udp, payload),
            _ => return false,
        };
        if data.is_empty() {
            return false;
        }
        let data = &data[..data.len().min(MAX_PROBE)];
        let (dir, ports) = (
            if d == 0 { Dir::ToServer } else { Dir::ToClient },
            [flow.client.1, flow.server.1],
        );
        match self.registry.probe(transport, dir, ports, data) {
            app::Detected::Proto(p) => {
                dir == Dir::ToServer && self.registry.is_reply(p, transport, data)
            }
            _ => matches!(
                self.registry
                    .probe(transport, dir.other(), [ports[1], ports[0]], data),
                app::Detected::Proto(_)
            ),
        }
    }

    /// Feeds bytes to the flow's parser, detecting the protocol first if needed.
    /// `ports` are the flow's (client, server) ports.
    fn feed_app(
        &mut self,
        app: &mut AppFlow,
        ports: [u16; 2],
        dir: Dir,
        transport: Transport,
        data: &[u8],
    ) -> bool {
        if !app.detection_done {
            self.detect_protocol(app, ports, dir, transport, data);
            // The probe fed the first bytes already.
            return app.state.is_some();
        }
        let d = dir.index();
        if !app.dir_probed[d] && !data.is_empty() {
            // The other direction's first data: which protocol does it speak?
            app.dir_probed[d] = true;
            let window = &data[..data.len().min(MAX_PROBE)];
            if let app::Detected::Proto(p) = self.registry.probe(transport, dir, ports, window) {
                app.dir_proto[d] = p;
                self.pkt_proto_done = true;
                if p != app.proto {
                    self.pkt_app_events |= app::events::MISMATCH_PROTOCOL_BOTH_DIRECTIONS;
                }
            }
        }
        if app.state.is_none() {
            return false;
        }
        let mut out = ParseOutput::default();
        if let Some(state) = app.state.as_deref_mut() {
            state.parse(dir, data, &mut out);
        }
        self.parse_output(&out, app, dir);
        if out.failed {
            app.state = None;
        }
        true
    }

    fn detect_protocol(
        &mut self,
        app: &mut AppFlow,
        ports: [u16; 2],
        dir: Dir,
        transport: Transport,
        data: &[u8],
    ) {
        let d = dir.index();
        app.probed[d] += data.len();
        let window = &data[..data.len().min(MAX_PROBE)];
        let mut need_more = false;
        match self.registry.probe(transport, dir, ports, window) {
            app::Detected::Proto(proto) => {
                app.proto = proto;
                app.detection_done = true;
                app.dir_proto[d] = proto;
                app.dir_probed[d] = true;
                self.pkt_proto_done = true;
                self.stats.app_flows[proto as usize % app::APP_PROTOS] += 1;
                if let Some(mut state) = self.registry.new_state(proto, transport) {
                    let mut out = ParseOutput::default();
                    state.parse(dir, data, &mut out);
                    if !out.failed {
                        app.state = Some(state);
                    }
                    self.parse_output(&out, app, dir);
                }
                return;
            }
            app::Detected::NeedMore => need_more = true,
            // This direction's first data is no known protocol.
            app::Detected::None => app.dir_probed[d] = true,
        }
        // TCP data arrives in pieces: give up once enough was seen both ways.
        let enough = app.probed.iter().all(|&n| n >= MAX_PROBE) || transport == Transport::Udp;
        if !need_more || enough {
            app.proto = AppProto::Failed;
            app.detection_done = true;
            self.pkt_proto_done = true;
        }
    }

    /// Inspects and logs the flow's transactions after progress in `dir`.
    fn inspect_txs(
        &mut self,
        c: Ctx<'_>,
        flow: &mut Flow,
        to_server: bool,
        dir: Dir,
        ending: bool,
    ) {
        let proto = flow.app.proto;
        let Some(state) = flow.app.state.as_deref() else {
            return;
        };
        let established = flow.established();
        let stream_bytes = flow.stream_bytes();
        let view = PacketView {
            pkt: c.pkt,
            ts_ns: c.meta.ts_ns,
            to_server: Some(to_server),
            established,
            app_proto: proto,
            payload: None,
            stream: None,
            segment: None,
            stream_bytes,
            flow_id: flow.id,
            first_in_direction: false,
            pseudo: c.src == events::PacketSrc::FlowTimeout,
            app_proto_dir: flow.app.dir_proto,
            proto_detect_done: false,
            app_events: 0,
        };
        let mut hits = std::mem::take(&mut self.hits);
        // Reused between calls: records are large, and most calls log nothing.
        let mut to_log = std::mem::take(&mut self.to_log);
        let mut done_below = flow.app.next_free;
        for i in 0..state.tx_count() {
            let Some(tx) = state.tx(i) else { break };
            let id = tx.id();
            let td = match flow.app.txs.iter().position(|t| t.tx_id == id) {
                Some(p) => p,
                None => {
                    flow.app.txs.push(TxDetect::new(id));
                    flow.app.txs.len() - 1
                }
            };
            let progress = tx.progress(dir);
            let complete_both = tx.complete(Dir::ToServer) && tx.complete(Dir::ToClient);
            if flow.app.txs[td].inspected[dir.index()] != Some(progress) || ending {
                flow.app.txs[td].inspected[dir.index()] = Some(progress);
                hits.clear();
                let with_events;
                let tx: &dyn app::Transaction = if flow.app.tx_events.iter().any(|e| e.0 == id) {
                    with_events = WithEvents {
                        tx,
                        events: &flow.app.tx_events,
                    };
                    &with_events
                } else {
                    tx
                };
                self.engine.inspect_tx(
                    &mut self.st,
                    &view,
                    proto,
                    dir,
                    tx,
                    &mut flow.app.txs[td],
                    Some(&mut flow.vars),
                    &mut hits,
                );
                let record = if hits.is_empty() { None } else { tx.record() };
                for h in &hits {
                    self.alert(c, Some((&*flow, to_server)), *h, record.clone());
                }
                if !hits.is_empty() {
                    flow.alerted = true;
                    if hits.iter().any(|h| self.drops_flow(h.sig)) {
                        flow.vars.pass = true;
                    }
                }
            }
            if (complete_both || ending) && !flow.app.txs[td].logged {
                flow.app.txs[td].logged = true;
                if self.cfg.log_app[proto as usize % app::APP_PROTOS]
                    && let Some(r) = tx.record()
                {
                    to_log.push((id, r));
                }
            }
            // Free only once both directions were inspected at their final progress:
            // the other direction's last bytes (e.g. a response completed by its FIN)
            // may not have been inspected yet.
            let seen_final = [Dir::ToServer, Dir::ToClient]
                .iter()
                .all(|&d| flow.app.txs[td].inspected[d.index()] == Some(tx.progress(d)));
            if flow.app.txs[td].logged
                && complete_both
                && (seen_final || ending)
                && id == done_below
            {
                done_below = id + 1;
            }
        }
        self.hits = hits;
        for (id, r) in to_log.drain(..) {
            let ev = events::app_record(c.pkt, c.meta, flow, to_server, id, r);
            self.emit(ev);
        }
        self.to_log = to_log;
        if done_below > flow.app.next_free {
            flow.app.next_free = done_below;
            if let Some(state) = flow.app.state.as_deref_mut() {
                state.free_below(done_below);
            }
            flow.app.txs.retain(|t| t.tx_id >= done_below);
            flow.app.tx_events.retain(|e| e.0 >= done_below);
            flow.app.txs.release_if_empty();
            flow.app.tx_events.release_if_empty();
        }
    }

    fn alert(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&Flow, bool)>,
        h: Hit,
        record: Option<AppRecord>,
    ) {
        let sig = self.engine.sig(h.sig);
        self.stats.alerts += 1;
        let mut ev = events::alert(&sig.rule, c.pkt, c.meta, flow, c.src);
        if let Some(tx) = h.tx {
            ev.tx_id = Some(tx);
        }
        if let Some((f, _)) = flow {
            ev.app_proto = f.app.proto.name().to_string();
            ev.flowbits = f
                .vars
                .set_bits()
                .filter_map(|i| self.engine.names.flowbits.get(usize::from(i)).cloned())
                .collect();
        }
        if let Some(r) = record {
            events::attach_record(&mut ev, r);
        }
        self.emit(ev);
    }

    /// Inspects a packet outside the normal path (fragments without a flow, pseudo
    /// packets at flow end).
    fn inspect_packet(
        &mut self,
        c: Ctx<'_>,
        flow: Option<(&mut Flow, bool)>,
        stream: Option<&[u8]>,
        payload: Option<&[u8]>,
    ) {
        let mut hits = std::mem::take(&mut self.hits);
        hits.clear();
        match flow {
            Some((f, to_server)) => {
                let view = PacketView {
                    pkt: c.pkt,
                    ts_ns: c.meta.ts_ns,
                    to_server: Some(to_server),
                    established: f.established(),
                    app_proto: f.app.proto,
                    payload,
                    stream,
                    segment: None,
                    stream_bytes: f.stream_bytes(),
                    flow_id: f.id,
                    first_in_direction: false,
                    pseudo: c.src == events::PacketSrc::FlowTimeout,
                    app_proto_dir: f.app.dir_proto,
                    proto_detect_done: false,
                    app_events: 0,
                };
                self.engine
                    .inspect_packet(&mut self.st, &view, Some(&mut f.vars), &mut hits);
                for h in &hits {
                    self.alert(c, Some((&*f, to_server)), *h, None);
                }
                if !hits.is_empty() {
                    f.alerted = true;
                }
            }
            None => {
                let view = PacketView {
                    pkt: c.pkt,
                    ts_ns: c.meta.ts_ns,
                    to_server: None,
                    established: false,
                    app_proto: AppProto::Unknown,
                    payload,
                    stream,
                    segment: None,
                    stream_bytes: (0, 0),
                    flow_id: 0,
                    first_in_direction: true,
                    pseudo: false,
                    app_proto_dir: [AppProto::Unknown; 2],
                    proto_detect_done: false,
                    app_events: 0,
                };
                self.engine
                    .inspect_packet(&mut self.st, &view, None, &mut hits);
                for h in &hits {
                    self.alert(c, None, *h, None);
                }
            }
        }
        self.hits = hits;
    }

    /// Ends a flow: inspects what its stream still holds, finishes and logs its
    /// transactions, writes its flow record.
    fn end_flow(&mut self, mut flow: Flow, reason: EndReason) {
        // A pseudo packet per direction carries the flow's addresses for header checks.
        for dir in [Dir::ToServer, Dir::ToClient] {
            let to_server = dir == Dir::ToServer;
            let (src, dst) = if to_server {
                (flow.client, flow.server)
            } else {
                (flow.server, flow.client)
            };
            let pkt = pseudo_packet(flow.proto, src, dst, &flow);
            let meta = PacketMeta {
                ts_ns: flow.last_ns,
                seq: 0,
                ..Default::default()
            };
            let c = Ctx {
                pkt: &pkt,
                meta: &meta,
                src: events::PacketSrc::FlowTimeout,
            };
            let d = dir.index();
            if flow.tcp.is_some() {
                let progressed = self.feed_stream(&mut flow, dir, true);
                let range = flow.tcp.as_deref_mut().and_then(|s| {
                    let side = &mut s.sides[d];
                    (side.next() > side.raw_done).then(|| {
                        let r = (side.raw_done, side.next());
                        side.raw_done = side.next();
                        r
                    })
                });
                if let Some((a, b)) = range {
                    let chunk = flow
                        .tcp
                        .as_deref()
                        .map(|s| s.sides[d].bytes(a, b).to_vec())
                        .unwrap_or_default();
                    self.inspect_packet(c, Some((&mut flow, to_server)), Some(&chunk), None);
                }
                if progressed {
                    self.inspect_txs(c, &mut flow, to_server, dir, false);
                }
            } else if flow.app.state.is_some() {
                let mut out = ParseOutput::default();
                if let Some(state) = flow.app.state.as_deref_mut() {
                    state.eof(dir, &mut out);
                }
                self.parse_output(&out, &mut flow.app, dir);
            }
        }
        // Whatever is left: inspect once more as final, and log.
        if flow.app.state.is_some() {
            let pkt = pseudo_packet(flow.proto, flow.client, flow.server, &flow);
            let meta = PacketMeta {
                ts_ns: flow.last_ns,
                ..Default::default()
            };
            let c = Ctx {
                pkt: &pkt,
                meta: &meta,
                src: events::PacketSrc::FlowTimeout,
            };
            self.inspect_txs(c, &mut flow, true, Dir::ToServer, true);
            self.inspect_txs(c, &mut flow, false, Dir::ToClient, true);
        }
        if self.cfg.want_flow {
            self.emit(events::flow_end(&flow, reason));
        }
    }
}

/// A packet made from a flow's tuple, for inspection at flow end.
fn pseudo_packet(
    proto: u8,
    src: (IpAddr, u16),
    dst: (IpAddr, u16),
    flow: &Flow,
) -> Packet<'static> {
    let mut p = Packet::empty(decode::LINKTYPE_RAW, &[]);
    p.vlan = flow.vlan;
    p.vlan_len = flow.vlan_len;
    p.ip = Some(IpInfo {
        version: if src.0.is_ipv4() { 4 } else { 6 },
        src: src.0,
        dst: dst.0,
        proto,
        ttl: 0,
        tos: 0,
        ident: 0,
        offset: 0,
        header_len: 0,
        end: 0,
        fragment: None,
    });
    p.l4 = match proto {
        6 => L4::Tcp {
            src_port: src.1,
            dst_port: dst.1,
            seq: 0,
            ack: 0,
            flags: 0,
            window: 0,
            offset: 0,
            header_len: 0,
        },
        17 => L4::Udp {
            src_port: src.1,
            dst_port: dst.1,
            offset: 0,
        },
        _ => L4::Other,
    };
    p
}

impl Settings {
    fn from_config(config: &Config) -> Settings {
        // Any output that logs the type wants it (outputs filter by type themselves).
        let wants = |t: &str| config.eve_wants(t);
        Settings {
            midstream: config.stream.midstream,
            inline: config.stream.inline,
            depth: config.stream.reassembly.depth.bytes(),
            want_anomaly: wants("anomaly"),
            want_flow: wants("flow"),
            log_app: std::array::from_fn(|i| {
                app::PROTOCOLS
                    .get(i.wrapping_sub(1))
                    .and_then(|d| d.record)
                    .is_some_and(|r| wants(r.event_type))
            }),
        }
    }
}

impl Checksums {
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
    ) -> Worker {
        Worker {
            flows: FlowTable::new(index),
            defrag: Defrag::default(),
            x: Inner {
                index,
                engine,
                st,
                sink,
                cfg: Settings::from_config(config),
                checksums: Checksums::from_config(config),
                stats: Stats::default(),
                decode_counts: [0; DecodeEvent::ALL.len()],
                hits: Vec::new(),
                to_log: Vec::new(),
                registry,
                now_ns: 0,
                pkt_app_events: 0,
                pkt_proto_done: false,
            },
        }
    }

    /// Ends every flow still in the table (end of input).
    fn drain(&mut self) {
        let x = &mut self.x;
        self.flows.drain(|f, r| x.end_flow(f, r));
    }

    /// Ends the flows that timed out by packet time, and stale fragments.
    fn sweep(&mut self) {
        let now = self.x.now_ns;
        let x = &mut self.x;
        self.flows.sweep(now, |f, r| x.end_flow(f, r));
        self.defrag.expire(now);
    }
}

/// A detect worker run inside this process, its events kept in memory: the same packet
/// path as the detect role, without rings or the eve-writer (tests, benchmarks).
pub struct InProcess {
    w: Worker,
    since_sweep: usize,
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("packets", &self.w.x.stats.packets)
            .field("flows", &self.w.flows.len())
            .finish_non_exhaustive()
    }
}

/// What an in-process run produced.
#[derive(Debug, Default)]
pub struct InProcessResult {
    pub packets: u64,
    pub alerts: u64,
    pub events: Vec<Event>,
}

impl InProcess {
    /// A worker with `engine`, per-host state kept locally. `config`'s app-layer
    /// sections must load (as every config loaded with `meerkat_app::config::resolve`
    /// does): this harness for tests and benchmarks does not report config errors.
    pub fn new(config: &Config, engine: Engine) -> InProcess {
        let registry = app::Registry::from_config(config)
            .expect("InProcess is given a config whose app-layer sections load");
        InProcess {
            w: Worker::new(
                config,
                registry,
                0,
                engine,
                DetectState::default(),
                Out::Collect(Vec::new()),
            ),
            since_sweep: 0,
        }
    }

    /// Processes one packet (flows time out by packet time, as in the detect role).
    pub fn packet(&mut self, meta: &PacketMeta, data: &[u8]) {
        self.w.packet(meta, data);
        self.since_sweep += 1;
        if self.since_sweep == BATCH {
            self.since_sweep = 0;
            self.w.sweep();
        }
    }

    /// Ends every flow and returns what was produced.
    pub fn finish(mut self) -> InProcessResult {
        self.w.drain();
        let events = match std::mem::replace(&mut self.w.x.sink, Out::Collect(Vec::new())) {
            Out::Collect(v) => v,
            Out::Grpc(_) => Vec::new(),
        };
        InProcessResult {
            packets: self.w.x.stats.packets,
            alerts: self.w.x.stats.alerts,
            events,
        }
    }

    /// Runs a whole pcap or pcapng file through a fresh worker.
    pub fn run_pcap(
        config: &Config,
        engine: Engine,
        path: &std::path::Path,
    ) -> Result<InProcessResult, meerkat_wire::pcap::PcapError> {
        let file = std::fs::File::open(path)
            .map_err(|source| meerkat_wire::pcap::PcapError::Io { offset: 0, source })?;
        let mut reader = meerkat_wire::pcap::Reader::new(file)?;
        let mut run = InProcess::new(config, engine);
        let mut seq = 0u64;
        while let Some(p) = reader.next_packet()? {
            seq += 1;
            let meta = PacketMeta {
                ts_ns: p.ts_ns,
                seq,
                origlen: p.origlen,
                link_type: p.link_type,
                iface: p.iface,
            };
            run.packet(&meta, p.data);
        }
        Ok(run.finish())
    }

    /// Runs Ethernet frames `(capture time in ns, bytes)` through a fresh worker, numbered
    /// from 1 as a capture file's packets are (for traffic built in memory).
    pub fn run_frames<'a>(
        config: &Config,
        engine: Engine,
        frames: impl IntoIterator<Item = (u64, &'a [u8])>,
    ) -> InProcessResult {
        let mut run = InProcess::new(config, engine);
        for (seq, (ts_ns, data)) in (1..).zip(frames) {
            let meta = PacketMeta {
                ts_ns,
                seq,
                origlen: u32::try_from(data.len()).unwrap_or(u32::MAX),
                link_type: decode::LINKTYPE_ETHERNET,
                iface: 0,
            };
            run.packet(&meta, data);
        }
        run.finish()
    }
}

/// How long a starting worker tries to reach the eve-writer to learn where to resume.
const RESUME_TIMEOUT: Duration = Duration::from_secs(30);

/// Runs worker `index` until its ring ends (or `stop` is set: it ends after the current
/// batch, leaving the rest of the ring to the next worker), with the ruleset generation 1.
pub fn run(config: &Config, index: usize, stop: &AtomicBool) -> Result<WorkerSummary, DetectError> {
    run_generation(config, index, 1, stop)
}

/// Runs worker `index` (see [`run`]) reporting its configured ruleset as `generation`
/// (a worker started again after live reloads is handed the current one). Meant to be
/// the last thing its process does: on success the ruleset is not freed (the process's
/// exit returns its memory at once).
///
/// Crash safety: the worker holds the ring records it processed until the eve-writer has
/// acknowledged their events (see `sink`'s ring marks); a worker started on a ring whose
/// previous worker died asks the writer where to resume and skips what is written. Its
/// flows start empty: the packets the dead worker had seen of a flow are gone, so a
/// flow that straddles the crash is tracked from the first packet after it.
pub fn run_generation(
    config: &Config,
    index: usize,
    generation: u64,
    stop: &AtomicBool,
) -> Result<WorkerSummary, DetectError> {
    let runtime = config
        .runtime_dir
        .clone()
        .ok_or(DetectError::NoRuntimeDir)?;
    let started = Instant::now();
    let registry = app::Registry::from_config(config)?;
    let ctx = RuleContext::from_config(config).map_err(DetectError::Rules)?;
    let loaded = rules::load_files(&config.rule_paths(), &ctx).map_err(DetectError::Rules)?;
    if index == 0 {
        for p in &loaded.problems {
            tracing::warn!("rule not loaded: {p}");
        }
    }
    let mut summary = WorkerSummary {
        rules_loaded: loaded.rules.len(),
        rules_failed: loaded.problems.len(),
        ..Default::default()
    };
    let algo = crate::engine::mpm::Algo::parse(&config.mpm_algo).unwrap_or_default();
    if algo == crate::engine::mpm::Algo::Hyperscan && !crate::engine::mpm::Algo::HYPERSCAN_AVAILABLE
    {
        return Err(DetectError::Rules(
            "mpm-algo: hs, but this build has no Hyperscan (install libhyperscan-dev and rebuild)"
                .to_string(),
        ));
    }
    let engine = Engine::with_algo(loaded.rules, loaded.names, algo);
    let names = engine.names.clone();
    tracing::info!(
        worker = index,
        rules = summary.rules_loaded,
        failed = summary.rules_failed,
        secs = format!("{:.3}", started.elapsed().as_secs_f64()),
        "rules loaded"
    );

    let schema = DetectCounters::new(index);
    let page = CounterPage::create(
        &counters_path(&runtime, Role::Detect(index)),
        &counter_names(index),
    )?;
    let c = |n: DetectCounter| page.expect(&schema.counter(n));
    c(DetectCounter::RulesLoaded).set(summary.rules_loaded as u64);
    c(DetectCounter::RulesFailed).set(summary.rules_failed as u64);
    // Rule loading is reported apart so that packet-path CPU can be told from it.
    c(DetectCounter::RulesLoadUs).set(started.elapsed().as_micros() as u64);
    c(DetectCounter::RulesLoadCpuUs).set(self_cpu_us());
    c(DetectCounter::RulesGeneration).set(generation);
    let gen_ref = c(DetectCounter::RulesGeneration);
    let reloads_ref = c(DetectCounter::RulesReloads);
    let refs: Vec<CounterRef> = PER_BATCH.into_iter().map(c).collect();
    let decode_refs: Vec<CounterRef> = DecodeEvent::ALL
        .iter()
        .map(|e| page.expect(&schema.event(e.name())))
        .collect();
    let app_refs: Vec<CounterRef> = AppProto::ALL
        .iter()
        .map(|p| page.expect(&schema.app(p.name())))
        .collect();

    let ring = ring_path(&runtime, index);
    meerkat_shm::create(&ring, config.capture.ring_size.bytes() as usize)?;
    let mut consumer = Consumer::attach(&ring)?;
    consumer.hold();
    let epoch = sink::new_epoch();
    let producer = Role::Detect(index).to_string();
    let resume = sink::resume_point(&eve_socket_path(&runtime), &producer, epoch, RESUME_TIMEOUT)?;
    if resume > consumer.position() {
        let skipped = consumer.skip_to(resume)?;
        consumer.release_to(consumer.position());
        c(DetectCounter::ResumeSkipped).set(skipped);
        tracing::info!(
            worker = index,
            skipped,
            "resuming after the records whose events the eve-writer already has"
        );
    }

    let sink = EventSink::start(SinkConfig {
        socket: eve_socket_path(&runtime),
        producer,
        worker: index as u32,
        batch_size: config.detect.event_batch_size,
        batch_delay: Duration::from_millis(config.detect.event_batch_delay_ms),
        max_unacked: config.detect.max_unacked_batches,
        finish_timeout: Duration::from_secs(60),
        epoch,
        acked: Some(AckedMark {
            page: page.clone(),
            counter: c(DetectCounter::AckedSeq),
        }),
    })?;
    let commands = control::start(
        &meerkat_runtime::worker_socket_path(&runtime, index),
        control::Setup {
            index,
            ctx: ctx.clone(),
            algo,
            names,
            sink: sink.shared_stats(),
        },
    )?;
    // Past this many held bytes (processed, not yet acknowledged) the worker asks for
    // acknowledgements at once, so that capture does not wait on a full ring.
    let hold_limit = (consumer.capacity() / 4) as u64;

    // Host-tracked state (thresholds by host, xbits) is shared by all workers.
    let table =
        meerkat_shm::SharedTable::open_or_create(&host_table_path(&runtime), HOST_TABLE_SLOTS)?;
    let mut w = Worker::new(
        config,
        registry,
        index,
        engine,
        DetectState::with_shared(table),
        Out::Grpc(Box::new(sink)),
    );
    let mut ring_corrupt = 0u64;
    // Ring sequence number of the last packet processed.
    let mut last_seq = 0u64;
    loop {
        let mut n = 0;
        w.x.sink.begin();
        loop {
            let rec = match consumer.next_record() {
                Ok(Some(r)) => r,
                Ok(None) => break,
                Err(e) => {
                    tracing::error!("{e}; skipping what the ring holds");
                    ring_corrupt += 1;
                    consumer.skip_to_head();
                    break;
                }
            };
            last_seq = rec.meta.seq;
            w.packet(&rec.meta, rec.data);
            n += 1;
            if n == BATCH {
                break;
            }
        }
        let s = w.x.stats;
        let values = [
            s.packets,
            s.bytes,
            s.alerts,
            w.x.sink.events(),
            w.flows.created(),
            w.flows.len() as u64,
            w.flows.evicted,
            s.invalid_checksum,
            s.tcp_sessions,
            s.tcp_untracked,
            s.tcp_gaps,
            s.fragments,
            w.defrag.stats.reassembled,
            s.app_parse_errors,
            s.anomalies,
            ring_corrupt,
        ];
        for (r, v) in refs.iter().zip(values) {
            r.set(v);
        }
        for (r, v) in decode_refs.iter().zip(w.x.decode_counts) {
            r.set(v);
        }
        for (r, &p) in app_refs.iter().zip(AppProto::ALL) {
            r.set(s.app_flows[p.index()]);
        }
        w.sweep();
        // Every event of the records read so far is pushed (the sweep's included).
        w.x.sink.mark(consumer.position(), last_seq);
        w.x.sink.tick(Instant::now());
        if consumer.position() - consumer.released() > hold_limit {
            w.x.sink.flush_mark();
        }
        consumer.release_to(w.x.sink.acked_mark());
        while let Ok(cmd) = commands.try_recv() {
            match cmd {
                Command::Swap {
                    generation,
                    engine,
                    reply,
                } => {
                    let old = std::mem::replace(&mut w.x.engine, *engine);
                    w.x.st.renew();
                    gen_ref.set(generation);
                    reloads_ref.add(1);
                    tracing::info!(
                        worker = index,
                        generation,
                        rules = w.x.engine.len(),
                        "ruleset swapped in"
                    );
                    // The old engine is freed by the control thread.
                    let _ = reply.send(Box::new(old));
                }
                Command::Flush { reply } => {
                    let _ = reply.send(w.x.sink.flush_mark());
                }
            }
        }
        if stop.load(Ordering::Relaxed) {
            // Asked to stop (a restart): what is left in the ring stays there for the
            // next worker, which resumes where this one ends.
            break;
        }
        if n == 0 {
            // Idle: have what is pushed acknowledged now (the ring space it holds, and
            // capture's checkpoints, wait on it).
            w.x.sink.flush_mark();
            // Holding records: look for their acknowledgement again soon.
            let wait = if consumer.position() > consumer.released() {
                Duration::from_millis(2)
            } else {
                Duration::from_millis(100)
            };
            match consumer.wait(wait) {
                WaitOutcome::Eof => break,
                WaitOutcome::Ready | WaitOutcome::TimedOut => {}
            }
        }
    }
    w.drain();
    summary.packets = w.x.stats.packets;
    summary.alerts = w.x.stats.alerts;
    summary.events = w.x.sink.events();
    refs[2].set(summary.alerts);
    refs[3].set(summary.events);
    if let Out::Grpc(sink) = w.x.sink {
        sink.finish()?;
    }
    // Everything is acknowledged: the ring space can go (not before, so that a worker
    // that fails here leaves its records to a replacement).
    consumer.release_to(consumer.position());
    // The detect role's process ends with this function: its ruleset is left to the OS
    // rather than freed allocation by allocation (for ET Open, about a million cold
    // allocations: 0.29 G instructions with glibc's malloc, charged to the packet path).
    std::mem::forget(w.x.engine);
    Ok(summary)
}

/// A transaction seen with the anomalies the worker recorded for it (the engine asks
/// [`app::Transaction::has_event`] for `app-layer-event`).
#[derive(Debug)]
struct WithEvents<'a> {
    tx: &'a dyn app::Transaction,
    events: &'a [(u64, Dir, &'static str)],
}

impl app::Transaction for WithEvents<'_> {
    fn id(&self) -> u64 {
        self.tx.id()
    }
    fn complete(&self, dir: Dir) -> bool {
        self.tx.complete(dir)
    }
    fn progress(&self, dir: Dir) -> u8 {
        self.tx.progress(dir)
    }
    fn buffer(&self, id: app::BufferId, index: usize) -> app::Buf<'_> {
        self.tx.buffer(id, index)
    }
    fn record(&self) -> Option<AppRecord> {
        self.tx.record()
    }
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        self.tx.event_record(dir)
    }
    fn has_event(&self, dir: Dir, name: &str) -> bool {
        let id = self.tx.id();
        self.events
            .iter()
            .any(|&(i, d, n)| i == id && d == dir && n == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::{sample, session};

    fn run(config: &Config, rules: &str, frames: &[meerkat_synth::Frame]) -> InProcessResult {
        let ctx = RuleContext::from_config(config).unwrap();
        let loaded = rules::load_str(rules, &ctx);
        assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
        let engine = Engine::new(loaded.rules, loaded.names);
        InProcess::run_frames(
            config,
            engine,
            frames.iter().map(|f| (f.ts_ns, &f.data[..])),
        )
    }

    /// An alert as the tests compare it: (sid, tx_id, app_proto).
    type Alert = (u64, Option<u64>, String);

    /// The alerts of `rules` over `frames`, sorted.
    fn alerts(config: &Config, rules: &str, frames: &[meerkat_synth::Frame]) -> Vec<Alert> {
        let mut got: Vec<Alert> = run(config, rules, frames)
            .events
            .iter()
            .filter_map(|e| {
                let a = e.alert.as_ref()?;
                Some((a.signature_id, e.tx_id, e.app_proto.clone()))
            })
            .collect();
        got.sort();
        got
    }

    /// Expected alerts, written with `&str` app protocols.
    fn want(alerts: &[(u64, Option<u64>, &str)]) -> Vec<Alert> {
        alerts
            .iter()
            .map(|&(sid, tx, app)| (sid, tx, app.to_string()))
            .collect()
    }

    /// A client at 10.0.0.1:40000 and a server at 10.0.0.2:`port`.
    fn endpoints(port: u16) -> (std::net::SocketAddr, std::net::SocketAddr) {
        (
            "10.0.0.1:40000".parse().unwrap(),
            std::net::SocketAddr::from(([10, 0, 0, 2], port)),
        )
    }

    /// A TCP session of `endpoints(port)` at time 1 µs, its handshake done.
    fn handshaken(port: u16) -> session::TcpSession {
        let (c, s) = endpoints(port);
        let mut t = session::TcpSession::new(c, s, 1_000);
        t.handshake();
        t
    }

    #[test]
    fn flow_records_carry_addresses_once_and_alerts_carry_the_flows() {
        let config = Config::default();
        let (c, s) = endpoints(53);
        let q = sample::dns_query(7, "x.example", 1);
        let a = sample::dns_response_a(7, "x.example", [192, 0, 2, 1]);
        let frames = session::udp_exchange(c, s, 1_000, 1_000, &q, Some(&a), None);
        // Matches the response, whose packet goes server -> client.
        let rules = "alert udp any 53 -> any any (content:\"example\"; sid:1;)";
        let r = run(&config, rules, &frames);
        let alert = r.events.iter().find(|e| e.alert.is_some()).unwrap();
        assert_eq!(alert.src_ip, [10, 0, 0, 2]);
        let fc = alert.alert.as_ref().unwrap().flow.as_ref().unwrap();
        assert_eq!(
            (fc.src_ip.as_slice(), fc.src_port),
            (&[10, 0, 0, 1][..], 40000)
        );
        assert_eq!(
            (fc.dest_ip.as_slice(), fc.dest_port),
            (&[10, 0, 0, 2][..], 53)
        );
        let flow = r.events.iter().find(|e| e.flow.is_some()).unwrap();
        assert_eq!(
            (flow.src_ip.as_slice(), flow.src_port),
            (&[10, 0, 0, 1][..], 40000)
        );
        assert_eq!(
            (flow.dest_ip.as_slice(), flow.dest_port),
            (&[10, 0, 0, 2][..], 53)
        );
        let counters = flow.flow.as_ref().unwrap().counters.as_ref().unwrap();
        assert_eq!((counters.pkts_toserver, counters.pkts_toclient), (1, 1));
        assert!(counters.src_ip.is_empty() && counters.dest_ip.is_empty());
    }

    #[test]
    fn a_datagram_with_a_bad_checksum_still_reaches_its_parser() {
        let mut config = Config::default();
        config.pcap_file.checksum_checks = ChecksumChecks::Yes;
        let (c, s) = endpoints(53);
        let q = sample::dns_query(7, "bad.example", 1);
        let mut frames = session::udp_exchange(c, s, 1_000, 1_000, &q, None, None);
        // Ethernet (14) + IPv4 (20) + UDP checksum at 6.
        frames[0].data[40] ^= 0xff;
        let rules = r#"alert dns any any -> any any (dns.query; content:"bad.example"; sid:1;)"#;
        assert_eq!(
            alerts(&config, rules, &frames),
            want(&[(1, Some(0), "dns")])
        );
    }

    #[test]
    fn http_on_an_unusual_port_is_found_by_content_and_alerts_per_transaction() {
        let config = Config::default();
        let mut t = handshaken(1234);
        t.client_sends(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
        t.server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n");
        t.close();
        let rules = "alert http any any -> any any (http.uri; content:\"/b\"; sid:1;)\n\
                     alert http any any -> any any (http.stat_code; content:\"404\"; sid:2;)\n\
                     alert tcp any any -> any any (app-layer-protocol:http; http.uri; content:\"/a\"; sid:3;)";
        assert_eq!(
            alerts(&config, rules, &t.into_frames()),
            want(&[
                (1, Some(1), "http"),
                (2, Some(1), "http"),
                (3, Some(0), "http")
            ])
        );
    }

    #[test]
    fn a_midstream_flow_whose_first_data_is_a_response_is_reversed() {
        let mut config = Config::default();
        config.stream.midstream = true;
        let (c, s) = endpoints(8080);
        // No handshake: the server's response is the first packet seen.
        let mut t = session::TcpSession::new(c, s, 1_000);
        t.server_sends(b"HTTP/1.1 200 OK\r\nServer: Apache\r\nContent-Length: 0\r\n\r\n");
        let rules = "alert http any any -> any any (flow:to_client; http.server; content:\"Apache\"; sid:1;)";
        assert_eq!(
            alerts(&config, rules, &t.into_frames()),
            want(&[(1, Some(0), "http")])
        );
    }

    #[test]
    fn directions_speaking_different_protocols() {
        let config = Config::default();
        let mut t = handshaken(22);
        t.client_sends(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        t.server_sends(b"SSH-2.0-OpenSSH_8.9\r\n");
        t.server_sends(b"more bytes\r\n");
        t.close();
        let rules = "alert ip any any -> any any (app-layer-event:applayer_mismatch_protocol_both_directions; sid:1;)\n\
                     alert tcp any any -> any any (flow:to_client; app-layer-protocol:http1,to_server; app-layer-protocol:ssh,to_client; sid:2;)\n\
                     alert tcp any any -> any any (app-layer-protocol:ssh; sid:3;)";
        // Each once: on the packet where the server's protocol was recognised.
        assert_eq!(
            alerts(&config, rules, &t.into_frames()),
            want(&[(1, None, "http"), (2, None, "http")])
        );
    }

    #[test]
    fn ssh_banners_are_buffers_per_direction() {
        let config = Config::default();
        let mut t = handshaken(2222);
        t.client_sends(b"SSH-2.0-PuTTY_Release_0.78\r\n");
        t.server_sends(b"SSH-2.0-OpenSSH_9.3 Debian\r\n");
        t.close();
        let rules = "alert ssh any any -> any any (ssh.software; content:\"OpenSSH\"; sid:1;)\n\
                     alert ssh any any -> any any (ssh.proto; content:\"2.0\"; sid:2;)\n\
                     alert ssh any any -> any any (flow:to_server; ssh.software; content:\"OpenSSH\"; sid:3;)";
        assert_eq!(
            alerts(&config, rules, &t.into_frames()),
            want(&[
                (1, Some(0), "ssh"),
                (2, Some(0), "ssh"),
                (2, Some(0), "ssh")
            ])
        );
    }

    #[test]
    fn decoder_events_reach_decode_event_rules() {
        let config = Config::default();
        let (c, s): (std::net::IpAddr, std::net::IpAddr) = (
            "2001:db8::1".parse().unwrap(),
            "2001:db8::2".parse().unwrap(),
        );
        // A fragment header saying "offset 0, last fragment" before an ICMPv6 echo.
        let oct = |a: std::net::IpAddr| match a {
            std::net::IpAddr::V6(v) => v.octets(),
            std::net::IpAddr::V4(_) => [0; 16],
        };
        let echo = meerkat_synth::packet::icmpv6(oct(c), oct(s), 128, 0, 1, 1, b"ping");
        let mut payload = vec![58, 0, 0, 0, 0, 0, 0, 9];
        payload.extend_from_slice(&echo);
        let ip = meerkat_synth::packet::ip(c, s, 44, 64, 0, &payload);
        let frame = session::frame_ip(c, s, None, &ip);
        // A UDP length field below the header's size: the packet does not decode.
        let (c4, s4): (std::net::IpAddr, std::net::IpAddr) =
            ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
        let mut udp = meerkat_synth::packet::udp(c4, s4, 1, 2, b"abcd");
        udp[4..6].copy_from_slice(&5u16.to_be_bytes());
        let bad = session::frame_ip(
            c4,
            s4,
            None,
            &meerkat_synth::packet::ip(c4, s4, 17, 64, 1, &udp),
        );
        let frames = [
            meerkat_synth::Frame {
                ts_ns: 1,
                data: frame,
            },
            meerkat_synth::Frame {
                ts_ns: 2,
                data: bad,
            },
        ];
        let rules = "alert pkthdr any any -> any any (decode-event:ipv6.exthdr_useless_fh; sid:1;)\n\
                     alert icmp any any -> any any (itype:128; sid:2;)\n\
                     alert pkthdr any any -> any any (decode-event:udp.len_invalid; sid:3;)\n\
                     alert ip any any -> any any (ttl:64; sid:4;)";
        let got: Vec<u64> = alerts(&config, rules, &frames)
            .into_iter()
            .map(|a| a.0)
            .collect();
        // The echo is decoded whole (sids 1, 2, 4); the bad datagram is inspected by
        // decoder-event rules only (sid 3, not 4).
        assert_eq!(got, [1, 2, 3, 4]);
    }

    #[test]
    fn a_udp_flow_starting_with_a_response_is_reversed() {
        let config = Config::default();
        let (c, s) = endpoints(53);
        // Only the server's answer was captured: it is the first (and only) datagram.
        let r = sample::dns_response_a(9, "lone.example", [10, 0, 0, 9]);
        let frames = session::udp_exchange(s, c, 1_000, 1_000, &r, None, None);
        let rules = "alert dns any any -> any any (flow:to_client; dns.answers.rrname; content:\"lone.example\"; sid:1;)";
        assert_eq!(
            alerts(&config, rules, &frames),
            want(&[(1, Some(0), "dns")])
        );
    }
}
