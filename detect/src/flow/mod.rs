//! Flows: the packets of one conversation, keyed symmetrically.
//!
//! A flow is keyed by (protocol, the two endpoints in canonical order, VLAN ids); ICMP
//! flows by the pair of message types too, and an ICMPv4 destination-unreachable message
//! joins the flow of the packet it reports on (see [`FlowKey::of`]). The
//! endpoint that sent the first packet is the client ("to_server" is client -> server),
//! except that a TCP flow whose first packet is a SYN/ACK is oriented the other way (the
//! sender of a SYN/ACK is the server), as Suricata does. A flow is "established" once
//! its TCP handshake completed (or it was picked up midstream), or, for other protocols,
//! once packets went both ways. Flows end after an idle timeout of packet time (per
//! protocol and state, Suricata's `flow-timeouts` defaults) or when the worker stops.
//!
//! Memory is bounded: at most [`MAX_FLOWS`] flows; beyond that the least recently seen
//! flows are ended early ("emergency" eviction) and counted.

pub mod defrag;
pub mod tcp;

use std::collections::HashMap;
use std::net::IpAddr;

use crate::app::{AppProto, AppState, Dir};
use crate::engine::{FlowVars, TxDetect};
use meerkat_wire::decode::{L4, MAX_VLAN_LAYERS, Packet};
use meerkat_wire::icmp;

/// Flows held at most per worker.
pub const MAX_FLOWS: usize = 1 << 20;

/// Idle time after which a flow ends, ns (Suricata's `flow-timeouts` defaults).
const TIMEOUT_NEW_NS: u64 = 30 * 1_000_000_000;
const TIMEOUT_ESTABLISHED_NS: u64 = 300 * 1_000_000_000;
const TIMEOUT_TCP_ESTABLISHED_NS: u64 = 600 * 1_000_000_000;
const TIMEOUT_TCP_CLOSED_NS: u64 = 60 * 1_000_000_000;
const TIMEOUT_ICMP_ESTABLISHED_NS: u64 = 300 * 1_000_000_000;
/// Packet time between sweeps for ended flows.
const SWEEP_EVERY_NS: u64 = 1_000_000_000;

/// The symmetric key of a flow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FlowKey {
    proto: u8,
    lo: (IpAddr, u16),
    hi: (IpAddr, u16),
    vlan: [u16; MAX_VLAN_LAYERS],
    /// Tunnels around the packets (a flow inside a tunnel is not the same flow as one
    /// with its addresses outside, as Suricata keys on the recursion level).
    depth: u8,
}

/// How a packet finds its flow ([`FlowKey::of`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowLookup {
    /// Its own flow, made by its first packet; and whether the packet goes from `lo`
    /// to `hi`.
    Own(FlowKey, bool),
    /// An ICMPv4 destination-unreachable message: the flow of the packet it reports on,
    /// if that flow exists (it makes none).
    Reported(FlowKey),
}

impl FlowKey {
    /// How `p` finds its flow; `None` when it has none (not IP, or an ICMPv4 error
    /// message that names no TCP or UDP packet).
    ///
    /// As Suricata keys them: TCP, UDP and other protocols by their endpoints; ICMP and
    /// ICMPv6 messages by their endpoints and the pair of types they belong to (an echo
    /// request and its reply are one flow, a timestamp request between the same hosts
    /// another), the type standing in for the port; an ICMPv4 error message belongs to
    /// the flow of the packet it reports on (destination unreachable) or to none.
    pub fn of(p: &Packet<'_>) -> Option<FlowLookup> {
        let ip = p.ip?;
        let (sp, dp) = match p.l4 {
            L4::Icmp {
                icmp_type,
                code,
                v6,
                ..
            } => {
                if !v6 && icmp::is_v4_error(icmp_type) {
                    if icmp_type != icmp::DEST_UNREACH {
                        return None;
                    }
                    let r = icmp::unreachable_flow(code, p.payload)?;
                    let a = (IpAddr::from(r.src), r.src_port);
                    let b = (IpAddr::from(r.dst), r.dst_port);
                    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
                    return Some(FlowLookup::Reported(FlowKey {
                        proto: r.proto,
                        lo,
                        hi,
                        vlan: p.vlan,
                        depth: p.depth,
                    }));
                }
                let other = icmp::counterpart(icmp_type, v6).unwrap_or(0);
                (u16::from(icmp_type), u16::from(other))
            }
            _ => p.ports(),
        };
        let a = (ip.src, sp);
        let b = (ip.dst, dp);
        let lo_first = a <= b;
        let (lo, hi) = if lo_first { (a, b) } else { (b, a) };
        Some(FlowLookup::Own(
            FlowKey {
                proto: ip.proto,
                lo,
                hi,
                vlan: p.vlan,
                depth: p.depth,
            },
            lo_first,
        ))
    }
}

/// Application-layer state of a flow.
#[derive(Debug, Default)]
pub struct AppFlow {
    pub proto: AppProto,
    pub state: Option<Box<dyn AppState>>,
    /// Protocol detection is over (found, or given up).
    pub detection_done: bool,
    /// The TCP direction whose next packet makes the detected protocol visible to packet
    /// rules (`alert http ...` without buffers), if one is awaited. In IDS mode Suricata
    /// parses a direction's data when the other side acknowledges it, so the packet that
    /// carries the bytes a protocol is recognised by, and any more of that direction,
    /// are still of no protocol to its packet rules; the acknowledging packet is the
    /// first of the protocol (measured against the reference: `alert http any any ->
    /// any any` does not alert on the request's own segment, nor `alert smtp` on the
    /// banner's).
    pub shown_on: Option<Dir>,
    /// Directions (to_server, to_client) in which a transaction was incomplete when a
    /// side of the TCP session ended (its parser told so): Suricata makes a pseudo
    /// packet of such a direction at flow end, whatever the end of stream completed.
    pub eof_open: [bool; 2],
    /// Bytes seen per direction while detecting.
    pub probed: [usize; 2],
    /// Engine state of the live transactions (by id).
    pub txs: Vec<TxDetect>,
    /// Transactions below this id are done and freed.
    pub next_free: u64,
    /// The protocol recognised in each direction's first data (to_server, to_client);
    /// `Unknown` when that direction's data was not recognised (or has not come).
    pub dir_proto: [AppProto; 2],
    /// Whether each direction's first data was probed.
    pub dir_probed: [bool; 2],
    /// Parser anomalies by transaction id, for `app-layer-event` (at most
    /// [`MAX_TX_EVENTS`]; freed with the transactions).
    pub tx_events: Vec<(u64, Dir, &'static str)>,
    /// Per direction: a `filestore` rule (engine index + 1; 0 = none) asked for every
    /// file of the flow from then on (scope `ssn`/`flow`).
    pub store: [u32; 2],
    /// Transactions the parser made: one past the highest id seen (EVE `tx_cnt`).
    pub tx_cnt: u64,
    /// The parser failed on the flow's data (the `app_layer_error` exception policy,
    /// `ignore`: the flow goes on without its parser).
    pub parse_error: bool,
    /// The reassembly depth of the flow's protocol, when it has its own (see
    /// [`crate::app::Parser::stream_depth`]); `None`: `stream.reassembly.depth`.
    pub stream_depth: Option<u64>,
    /// The side whose data named the protocol, while [`AppFlow::stream_depth`] waits
    /// for a packet of the other side: Suricata recognises a protocol when that data is
    /// acknowledged and takes the acknowledging packet's segment at the old depth.
    pub depth_pending: Option<u8>,
    /// Per direction: a gap came before the flow's protocol was known (and before its
    /// parser existed). The parser made later from the other direction's data is told
    /// of it (Suricata's parsers see that gap too).
    pub early_gap: [bool; 2],
    /// Per direction of a TCP flow: its data is no protocol's, and is held (not
    /// consumed) while the other direction may still name the flow's protocol, whose
    /// parser then reads it, as Suricata's detection fails a direction, not the flow
    /// (a request of a method HTTP's patterns lack, with an HTTP response).
    pub held: [bool; 2],
    /// The id of the flow that announced this one (an FTP data connection's control
    /// flow; EVE `parent_id`), 0 for none.
    pub parent_id: u64,
    /// The protocol the flow spoke before it changed (EVE `app_proto_orig`); `Unknown`
    /// for a flow that never changed (see [`crate::app::ProtoChange`]).
    pub orig: AppProto,
    /// The protocol the flow is changing to, while the old one's transactions are
    /// flushed (EVE `app_proto_expected`); or the one it was to change to when
    /// detecting it again found another.
    pub expected: AppProto,
    /// The old protocol after a change, waiting for its transactions' last inspection
    /// and logging (on the packet that made the change).
    pub retired: Option<Box<Retired>>,
    /// Protocol changes made (at most [`crate::app::MAX_PROTO_CHANGES`]).
    pub changes: u8,
    /// Where the stream frame of the flow's protocol stands, for a TCP flow whose
    /// protocol's stream frame some rule uses (see [`crate::app::stream_frame`]).
    pub stream_frame: Option<Box<crate::app::stream_frame::Progress>>,
}

/// The app-layer part of a flow that belongs to one protocol: what a protocol change
/// puts aside (see [`AppFlow::swap_protocol`]).
#[derive(Debug, Default)]
pub struct Retired {
    pub proto: AppProto,
    pub state: Option<Box<dyn AppState>>,
    pub txs: Vec<TxDetect>,
    pub next_free: u64,
    pub tx_events: Vec<(u64, Dir, &'static str)>,
    pub tx_cnt: u64,
}

impl AppFlow {
    /// Exchanges the flow's protocol, state and transactions with `r`'s.
    pub fn swap_protocol(&mut self, r: &mut Retired) {
        std::mem::swap(&mut self.proto, &mut r.proto);
        std::mem::swap(&mut self.state, &mut r.state);
        std::mem::swap(&mut self.txs, &mut r.txs);
        std::mem::swap(&mut self.next_free, &mut r.next_free);
        std::mem::swap(&mut self.tx_events, &mut r.tx_events);
        std::mem::swap(&mut self.tx_cnt, &mut r.tx_cnt);
    }
}

/// Anomalies remembered per flow for `app-layer-event`.
pub const MAX_TX_EVENTS: usize = 64;
/// App-layer anomalies logged per packet at most (the rest are counted, not logged).
pub const MAX_PKT_ANOMALIES: usize = 64;

/// State of one flow.
#[derive(Debug)]
pub struct Flow {
    pub id: u64,
    pub proto: u8,
    pub client: (IpAddr, u16),
    pub server: (IpAddr, u16),
    pub vlan: [u16; MAX_VLAN_LAYERS],
    pub vlan_len: u8,
    pub start_ns: u64,
    pub last_ns: u64,
    pub pkts_toserver: u64,
    pub pkts_toclient: u64,
    /// Of those, ICMP error reports (to_server, to_client): counted in the flow but, as
    /// in Suricata, not "seen" packets of a direction (they make no direction's first
    /// packet and do not establish the flow).
    pub reports: [u32; 2],
    pub bytes_toserver: u64,
    pub bytes_toclient: u64,
    pub tcp_flags_ts: u8,
    pub tcp_flags_tc: u8,
    pub alerted: bool,
    /// Detection variables (flowbits, flowints, pass).
    pub vars: FlowVars,
    /// The TCP session, when tracked.
    pub tcp: Option<Box<tcp::Session>>,
    /// TCP packets were seen but the session could not be tracked (no handshake).
    pub tcp_untracked: bool,
    pub app: AppFlow,
    /// ICMP: (type, code) of the first packet to the server and of the last to the
    /// client (EVE `icmp_type`, `response_icmp_type`, ...).
    pub icmp_ts: Option<(u8, u8)>,
    pub icmp_tc: Option<(u8, u8)>,
    /// Exception policies applied to the flow ([`Exception`] bits, EVE
    /// `exception_policy`; the app layer's is [`AppFlow::parse_error`]).
    pub exceptions: u8,
    /// Whether the client side is `lo` of the key.
    client_is_lo: bool,
    /// The flow's entry in the worker's replay floor (see `worker::replay`), or
    /// [`NOT_REGISTERED`] until the worker registers it.
    pub replay_slot: u64,
}

/// [`Flow::replay_slot`] of a flow the worker has not registered yet.
pub const NOT_REGISTERED: u64 = u64::MAX;

/// An exception policy applied to a flow, as a bit of [`Flow::exceptions`], with its EVE
/// `target` name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exception {
    /// A TCP session picked up without its handshake while `stream.midstream` is off:
    /// its packets are not tracked (policy `ignore`).
    StreamMidstream = 1,
    /// The app-layer parser failed on the flow's data: the flow goes on without it
    /// (policy `ignore`).
    AppLayerError = 2,
}

impl Exception {
    /// In the order Suricata logs them.
    pub const ALL: [Exception; 2] = [Exception::StreamMidstream, Exception::AppLayerError];

    pub fn target(self) -> &'static str {
        match self {
            Exception::StreamMidstream => "stream_midstream",
            Exception::AppLayerError => "app_layer_error",
        }
    }
}

impl Flow {
    /// Counts packet `p` (at packet time `ts_ns`) in its direction.
    fn count(&mut self, p: &Packet<'_>, ts_ns: u64, to_server: bool) {
        let len = p.frame.len() as u64;
        let flags = p.tcp_flags().unwrap_or(0);
        if to_server {
            self.pkts_toserver += 1;
            self.bytes_toserver += len;
            self.tcp_flags_ts |= flags;
        } else {
            self.pkts_toclient += 1;
            self.bytes_toclient += len;
            self.tcp_flags_tc |= flags;
        }
        if let L4::Icmp {
            icmp_type, code, ..
        } = p.l4
        {
            if self.proto != p.proto() {
                // An error report counted in the TCP or UDP flow it reports on.
                self.reports[usize::from(!to_server)] += 1;
            } else if !to_server {
                self.icmp_tc = Some((icmp_type, code));
            } else if self.icmp_ts.is_none() {
                self.icmp_ts = Some((icmp_type, code));
            }
        }
        self.last_ns = self.last_ns.max(ts_ns);
    }

    /// Packets seen to the server and to the client: the packets of each direction
    /// less the ICMP error reports among them.
    pub fn seen(&self) -> (u64, u64) {
        (
            self.pkts_toserver - u64::from(self.reports[0]),
            self.pkts_toclient - u64::from(self.reports[1]),
        )
    }

    /// Whether packets were seen both ways.
    fn both_ways(&self) -> bool {
        let (ts, tc) = self.seen();
        ts > 0 && tc > 0
    }

    /// Whether the flow counts as established for `flow:established`.
    pub fn established(&self) -> bool {
        match &self.tcp {
            Some(s) => s.established(),
            None if self.proto == 6 => false,
            None => self.both_ways(),
        }
    }

    fn timeout_ns(&self) -> u64 {
        let both_ways = self.both_ways();
        match self.proto {
            6 => match &self.tcp {
                Some(s) if s.state == tcp::State::Closed => TIMEOUT_TCP_CLOSED_NS,
                Some(s) if s.established() => TIMEOUT_TCP_ESTABLISHED_NS,
                _ => TIMEOUT_NEW_NS,
            },
            1 | 58 if both_ways => TIMEOUT_ICMP_ESTABLISHED_NS,
            _ if both_ways => TIMEOUT_ESTABLISHED_NS,
            _ => TIMEOUT_NEW_NS,
        }
    }

    /// EVE flow `state`.
    pub fn state(&self) -> &'static str {
        match &self.tcp {
            Some(s) if s.state == tcp::State::Closed => "closed",
            Some(s) if s.established() => "established",
            Some(_) => "new",
            None if self.both_ways() => "established",
            None => "new",
        }
    }

    /// Swaps client and server: a flow picked up midstream whose first data turned out
    /// to be the server's (protocol detection recognised a response), as Suricata
    /// reverses such flows. Counters and stream sides follow their endpoints.
    pub fn reverse(&mut self) {
        std::mem::swap(&mut self.client, &mut self.server);
        self.client_is_lo = !self.client_is_lo;
        std::mem::swap(&mut self.pkts_toserver, &mut self.pkts_toclient);
        self.reports.swap(0, 1);
        std::mem::swap(&mut self.bytes_toserver, &mut self.bytes_toclient);
        std::mem::swap(&mut self.tcp_flags_ts, &mut self.tcp_flags_tc);
        std::mem::swap(&mut self.icmp_ts, &mut self.icmp_tc);
        if let Some(s) = self.tcp.as_deref_mut() {
            s.sides.swap(0, 1);
        }
        self.app.probed.swap(0, 1);
        self.app.shown_on = self.app.shown_on.map(Dir::other);
        self.app.eof_open.swap(0, 1);
        self.app.dir_proto.swap(0, 1);
        self.app.dir_probed.swap(0, 1);
        self.app.held.swap(0, 1);
        self.app.early_gap.swap(0, 1);
    }

    /// Stream bytes per direction (to_server, to_client), for `stream_size`.
    pub fn stream_bytes(&self) -> (u64, u64) {
        match &self.tcp {
            Some(s) => (s.sides[0].stream_bytes(), s.sides[1].stream_bytes()),
            None => (0, 0),
        }
    }
}

/// Why a flow ended (EVE flow `reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    Timeout,
    Shutdown,
    /// Evicted to stay within the flow table's bound.
    Forced,
}

impl EndReason {
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Timeout => "timeout",
            EndReason::Shutdown => "shutdown",
            EndReason::Forced => "forced",
        }
    }
}

/// The flow table's hasher: a multiply-rotate hash over the key's words, seeded per
/// table from the process's random hash keys, so that keys chosen by a remote sender do
/// not collide on purpose. The key is hashed once or twice per packet: SipHash (the std
/// default) cost several percent of the packet path.
#[derive(Debug, Clone)]
struct FlowHasherBuilder {
    seed: u64,
}

impl Default for FlowHasherBuilder {
    fn default() -> Self {
        use std::hash::BuildHasher;
        FlowHasherBuilder {
            seed: std::collections::hash_map::RandomState::new().hash_one(0x6d65_6572_6b61_7400u64)
                | 1,
        }
    }
}

impl std::hash::BuildHasher for FlowHasherBuilder {
    type Hasher = FlowHasher;
    fn build_hasher(&self) -> FlowHasher {
        FlowHasher { h: self.seed }
    }
}

#[derive(Debug)]
struct FlowHasher {
    h: u64,
}

impl FlowHasher {
    #[inline(always)]
    fn mix(&mut self, w: u64) {
        self.h = (self.h.rotate_left(5) ^ w).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl std::hash::Hasher for FlowHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.mix(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.mix(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 59));
        }
    }
    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.mix(u64::from(i));
    }
    #[inline]
    fn write_u16(&mut self, i: u16) {
        self.mix(u64::from(i));
    }
    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.mix(u64::from(i));
    }
    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.mix(i);
    }
    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.mix(i as u64);
    }
    #[inline]
    fn finish(&self) -> u64 {
        // A final avalanche: hashbrown takes its control bits from the top of the hash.
        let mut x = self.h;
        x ^= x >> 33;
        x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
        x ^= x >> 33;
        x
    }
}

/// The hash a flow's id is made of: its key and the time of its first packet.
fn flow_id_hash(key: &FlowKey, ts_ns: u64) -> u64 {
    use std::hash::{Hash, Hasher};
    // A fixed seed (the table's is random): the same flow gets the same id in every
    // process.
    let mut h = FlowHasher {
        h: 0x6d65_6572_6b61_7401,
    };
    key.hash(&mut h);
    ts_ns.hash(&mut h);
    h.finish()
}

/// The flows of one worker.
#[derive(Debug, Default)]
pub struct FlowTable {
    flows: HashMap<FlowKey, Flow, FlowHasherBuilder>,
    next_sweep_ns: u64,
    worker: u64,
    created: u64,
    pub evicted: u64,
}

impl FlowTable {
    pub fn new(worker: usize) -> FlowTable {
        FlowTable {
            worker: worker as u64,
            ..Default::default()
        }
    }

    pub fn len(&self) -> usize {
        self.flows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.flows.is_empty()
    }

    /// Flows created so far.
    pub fn created(&self) -> u64 {
        self.created
    }

    /// The live flow with this EVE `flow_id` (a scan: for the control socket, not the
    /// packet path).
    pub fn find_by_id(&self, id: u64) -> Option<&Flow> {
        self.flows.values().find(|f| f.id == id)
    }

    /// Finds or creates the flow of `p` and counts the packet. Returns the flow and
    /// whether the packet goes client -> server. `evicted` receives flows ended to make
    /// room.
    pub fn track(
        &mut self,
        p: &Packet<'_>,
        ts_ns: u64,
        mut evicted: impl FnMut(Flow, EndReason),
    ) -> Option<(&mut Flow, bool)> {
        let ip = p.ip?;
        let (key, lo_first) = match FlowKey::of(p)? {
            FlowLookup::Own(key, lo_first) => (key, lo_first),
            FlowLookup::Reported(key) => {
                // Part of the reported packet's flow, sent by one of its hosts or by a
                // router on the way (Suricata's direction: from the client's address
                // is toward the server).
                let flow = self.flows.get_mut(&key)?;
                let to_server = flow.client.0 == ip.src;
                flow.count(p, ts_ns, to_server);
                return Some((flow, to_server));
            }
        };
        if self.flows.len() >= MAX_FLOWS && !self.flows.contains_key(&key) {
            // Emergency: end the 1/16 of flows idle the longest (amortised O(1) per flow).
            let mut ages: Vec<(u64, FlowKey)> =
                self.flows.iter().map(|(k, f)| (f.last_ns, *k)).collect();
            let n = (ages.len() / 16).max(1);
            ages.select_nth_unstable_by_key(n - 1, |(t, _)| *t);
            for (_, k) in &ages[..n] {
                if let Some(f) = self.flows.remove(k) {
                    self.evicted += 1;
                    evicted(f, EndReason::Forced);
                }
            }
        }
        let (sp, dp) = p.ports();
        let worker = self.worker;
        let created = &mut self.created;
        let flow = self.flows.entry(key).or_insert_with(|| {
            *created += 1;
            // A SYN/ACK comes from the server: orient the flow the other way.
            let syn_ack = matches!(p.l4, L4::Tcp { flags, .. } if flags & 0x12 == 0x12);
            let (client, server, client_is_lo) = if syn_ack {
                ((ip.dst, dp), (ip.src, sp), !lo_first)
            } else {
                ((ip.src, sp), (ip.dst, dp), lo_first)
            };
            // Unique per worker and flow, JSON-safe (below 2^53), never 0; a function of
            // the flow's key and first packet only, so that a worker that replays the
            // packets of a dead one's flows gives them the same ids (`worker::replay`).
            let id = (flow_id_hash(&key, ts_ns) & ((1 << 47) - 1)) << 4 | (worker & 0xf);
            Flow {
                id: id.max(1),
                proto: ip.proto,
                client,
                server,
                vlan: p.vlan,
                vlan_len: p.vlan_len,
                start_ns: ts_ns,
                last_ns: ts_ns,
                pkts_toserver: 0,
                pkts_toclient: 0,
                reports: [0; 2],
                bytes_toserver: 0,
                bytes_toclient: 0,
                tcp_flags_ts: 0,
                tcp_flags_tc: 0,
                alerted: false,
                vars: FlowVars::default(),
                tcp: None,
                tcp_untracked: false,
                app: AppFlow::default(),
                icmp_ts: None,
                icmp_tc: None,
                exceptions: 0,
                client_is_lo,
                replay_slot: NOT_REGISTERED,
            }
        });
        let to_server = lo_first == flow.client_is_lo;
        flow.count(p, ts_ns, to_server);
        Some((flow, to_server))
    }

    /// Whether [`FlowTable::sweep`] at packet time `now_ns` would look at the flows.
    pub fn sweep_due(&self, now_ns: u64) -> bool {
        now_ns >= self.next_sweep_ns
    }

    /// Ends flows idle past their timeout at packet time `now_ns` (at most once per
    /// second of packet time) and hands each to `ended`.
    pub fn sweep(&mut self, now_ns: u64, mut ended: impl FnMut(Flow, EndReason)) {
        if now_ns < self.next_sweep_ns {
            return;
        }
        // The next sweep at the next whole second of packet time: sweeps fall on the
        // same packets whatever the batches the ring was read in, so a flow ends at the
        // same packet in every run (and in a worker that replays a dead one's packets).
        self.next_sweep_ns = (now_ns / SWEEP_EVERY_NS + 1) * SWEEP_EVERY_NS;
        let expired: Vec<FlowKey> = self
            .flows
            .iter()
            .filter(|(_, f)| now_ns.saturating_sub(f.last_ns) > f.timeout_ns())
            .map(|(k, _)| *k)
            .collect();
        for k in expired {
            if let Some(f) = self.flows.remove(&k) {
                ended(f, EndReason::Timeout);
            }
        }
    }

    /// Ends every flow (worker shutdown), oldest first. Each flow goes from the table
    /// straight to `ended`: only its small (start, id, key) entry is copied for the
    /// sort, so ending 100k flows does not hold a second copy of them (tens of MB at the
    /// end of a capture file), and the table's memory is given back once it is empty.
    pub fn drain(&mut self, mut ended: impl FnMut(Flow, EndReason)) {
        let mut order: Vec<(u64, u64, FlowKey)> = self
            .flows
            .iter()
            .map(|(k, f)| (f.start_ns, f.id, *k))
            .collect();
        order.sort_unstable_by_key(|&(start, id, _)| (start, id));
        for (_, _, k) in order {
            if let Some(f) = self.flows.remove(&k) {
                ended(f, EndReason::Shutdown);
            }
        }
        self.flows.shrink_to_fit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::session::TcpSession;
    use meerkat_wire::decode::{LINKTYPE_ETHERNET, decode};

    #[test]
    fn both_directions_one_flow() {
        let mut s = TcpSession::new(
            "10.0.0.1:1234".parse().unwrap(),
            "10.0.0.2:80".parse().unwrap(),
            1_000,
        );
        s.handshake().client_sends(b"hello").close();
        let frames = s.into_frames();
        let mut t = FlowTable::new(0);
        let mut id = None;
        for f in &frames {
            let (p, _) = decode(LINKTYPE_ETHERNET, &f.data);
            let (flow, to_server) = t.track(&p, f.ts_ns, |_, _| {}).unwrap();
            assert_eq!(to_server, p.ports().1 == 80);
            assert_eq!(*id.get_or_insert(flow.id), flow.id);
        }
        assert_eq!(t.len(), 1);
        let mut ended = Vec::new();
        t.sweep(frames.last().unwrap().ts_ns + 31_000_000_000, |f, r| {
            ended.push((f, r))
        });
        assert_eq!(ended.len(), 1);
        let (f, r) = &ended[0];
        assert_eq!(*r, EndReason::Timeout);
        assert_eq!(f.pkts_toserver + f.pkts_toclient, frames.len() as u64);
        assert_eq!(f.client.1, 1234);
    }

    #[test]
    fn reversing_swaps_endpoints_and_counters() {
        let mut s = TcpSession::new(
            "10.0.0.1:1234".parse().unwrap(),
            "10.0.0.2:80".parse().unwrap(),
            1_000,
        );
        s.server_sends(b"HTTP/1.1 200 OK\r\n\r\n");
        let frames = s.into_frames();
        let mut t = FlowTable::new(0);
        let (p, _) = decode(LINKTYPE_ETHERNET, &frames[0].data);
        let (flow, to_server) = t.track(&p, 1, |_, _| {}).unwrap();
        assert!(
            to_server,
            "the first packet's sender is taken as the client"
        );
        assert_eq!(flow.client.1, 80);
        flow.reverse();
        assert_eq!(flow.server.1, 80);
        assert_eq!((flow.pkts_toserver, flow.pkts_toclient), (0, 1));
        // The next packet of the same sender is now to_client.
        let (_, to_server) = t.track(&p, 2, |_, _| {}).unwrap();
        assert!(!to_server);
    }

    #[test]
    fn syn_ack_first_makes_the_sender_the_server() {
        let mut s = TcpSession::new(
            "10.0.0.1:1234".parse().unwrap(),
            "10.0.0.2:80".parse().unwrap(),
            1_000,
        );
        s.handshake();
        let frames = s.into_frames();
        let mut t = FlowTable::new(0);
        let (p, _) = decode(LINKTYPE_ETHERNET, &frames[1].data); // the SYN/ACK
        let (flow, to_server) = t.track(&p, 1, |_, _| {}).unwrap();
        assert!(!to_server);
        assert_eq!(flow.server.1, 80);
    }

    #[test]
    fn drain_ends_every_flow_oldest_first_and_frees_the_table() {
        let mut t = FlowTable::new(0);
        // Started in the order 3, 1, 2 (by packet time), inserted in port order.
        for (port, start) in [(1001u16, 30u64), (1002, 10), (1003, 20)] {
            let mut s = TcpSession::new(
                format!("10.0.0.1:{port}").parse().unwrap(),
                "10.0.0.2:80".parse().unwrap(),
                1_000,
            );
            s.handshake();
            let frames = s.into_frames();
            let (p, _) = decode(LINKTYPE_ETHERNET, &frames[0].data);
            t.track(&p, start, |_, _| {}).unwrap();
        }
        let mut ended = Vec::new();
        t.drain(|f, r| ended.push((f.client.1, r)));
        assert_eq!(
            ended,
            vec![
                (1002, EndReason::Shutdown),
                (1003, EndReason::Shutdown),
                (1001, EndReason::Shutdown)
            ]
        );
        assert_eq!(t.len(), 0);
        assert_eq!(
            t.flows.capacity(),
            0,
            "the emptied table gives its memory back"
        );
    }
}
