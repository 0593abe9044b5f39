//! The rule engine: which rules match a packet, a stream chunk, or an app-layer
//! transaction.
//!
//! # Grouping and prefilter
//!
//! Rules are grouped by transport (TCP, UDP, ICMP, other), flow direction and port for
//! packet and stream inspection (as Suricata's signature groups: to-server packets by
//! destination port, to-client packets by source port, each group also holding the
//! any-port rules, so that a payload is scanned once), and by app-layer protocol and
//! buffer for transaction inspection. Each group has one multi-pattern prefilter
//! ([`mpm`]) over its rules' fast patterns; scanning a buffer yields the candidate rules,
//! and only candidates (plus the few rules that have no fast pattern) are evaluated in
//! full. Candidates are evaluated in load order, so that a
//! rule that sets a flowbit is seen by later rules on the same packet, as in Suricata.
//!
//! # Payload semantics
//!
//! A TCP rule's payload keywords inspect the reassembled stream when the session is
//! tracked (the packet's own payload is then not inspected separately), and the packet
//! payload otherwise; `tcp-pkt`/`flow:no_stream`/`dsize` rules only inspect packets and
//! `tcp-stream`/`flow:only_stream` rules only the stream. Sticky-buffer rules inspect
//! transactions, each (rule, transaction) alerting at most once.

#[cfg(hyperscan)]
mod hs;
pub mod matcher;
pub mod mpm;
pub mod state;

mod actions;
mod classify;
mod groups;
mod header;
mod packet;
mod tx;

use classify::*;
use groups::*;
use header::*;

use std::net::IpAddr;

use crate::app::{AppProto, Buf, BufferId, Dir, Transaction};
use crate::rules::{
    Absent, Action, Direction, FlagMod, FlowbitCmd, FlowintCmd, HdrBuffer, HeaderMatch, IntOperand,
    ListRef, Names, NumCmp, NumCmpOp, PayloadSource, Proto, ProtoMode, Rule, SuppressTrack,
    Transform, VlanLayer, XbitOp,
};
use matcher::List;
use meerkat_wire::decode::{L4, Packet};
use mpm::{Mpm, MpmBuilder};
pub use state::{DetectState, FlowVars, TxDetect};

/// A compiled sticky-buffer list.
#[derive(Debug)]
struct BufList {
    /// Buffer per direction (index = Dir).
    ids: [Option<BufferId>; 2],
    multi: bool,
    transforms: Vec<Transform>,
    list: List,
    bsize: Option<NumCmp>,
    absent: Option<Absent>,
    /// `dataset`/`datarep` on the buffer (empty for nearly every rule).
    datasets: Vec<crate::rules::DatasetMatch>,
    /// The buffer is a frame (`frame:`): a match names the item it matched on (the
    /// alert's `frame` object).
    frame: bool,
}

/// A compiled rule.
#[derive(Debug)]
pub struct Sig {
    pub rule: Rule,
    payload: List,
    buffers: Vec<BufList>,
    base64: Option<List>,
    /// Packet-header buffer matches (`ipv6.hdr; content:...`), checked on every packet
    /// the rule's header matches.
    hdr_lists: Vec<(HdrBuffer, List)>,
    /// The direction the rule inspects transactions in, if it says.
    dir: Option<Dir>,
    /// Whether the rule is evaluated on transactions (sticky buffers, TLS checks).
    app: bool,
    /// An IP-only or like-IP-only rule (no payload or packet keywords, ports allowed; at
    /// most `flowbits:set`): like Suricata, it is checked on the first packet of each
    /// direction of a flow only.
    ip_only: bool,
    /// Made of `app-layer-protocol` checks alone (Suricata's "PD-only" rule): checked
    /// only on packets where protocol detection finished.
    pd_only: bool,
    /// The rule checks a decoder event (`decode-event`): the only kind of rule a packet
    /// that failed to decode is inspected with (as Suricata's decoder-event group).
    decode_event: bool,
    /// See [`classify::anchored_payload`]: the packet's payload is inspected even when
    /// its segment went into the stream.
    anchored: bool,
    /// Index of the rule's header (protocol, addresses, ports, direction) among the
    /// distinct headers of the set: rules sharing a header share its result per packet.
    hdr: u32,
    /// The rule has a suppression, threshold, detection_filter or rate_filter: the only
    /// rules whose matches go through [`Engine::filter`] (the others pay this flag).
    filtered: bool,
}

static EMPTY_GROUP: PktGroup = PktGroup {
    mpm: None,
    always: Vec::new(),
};

/// The loaded ruleset, ready to match. Immutable and shared; per-worker mutable state
/// lives in [`DetectState`].
#[derive(Debug)]
pub struct Engine {
    sigs: Vec<Sig>,
    /// Packet rules by transport class, flow direction and port.
    pkt: [DirGroups; 4],
    /// TCP rules that inspect packets only (`tcp-pkt`, `flow:no_stream`, `dsize`) or
    /// packets too (anchored contents, see `Sig::anchored`) and have payload keywords,
    /// grouped again so the payload of a segment that went into
    /// the stream (which the groups above do not scan) still finds them, as Suricata
    /// inspects a segment's payload for rules that require the packet.
    pkt_only_tcp: DirGroups,
    /// The same for segments of [`BIG_SEGMENT`] bytes or more: without the rules whose
    /// `dsize` excludes them (most `dsize` rules look for short payloads, and bulk
    /// segments are the most bytes).
    pkt_only_tcp_big: DirGroups,
    app: [AppGroup; crate::app::APP_PROTOS],
    pub names: Names,
    /// Without prefilter: every rule of the class is a candidate (for the differential
    /// test of the prefilter).
    naive: bool,
    /// Number of distinct rule headers (see `Sig::hdr`).
    headers: usize,
    class_rules: [Vec<u32>; 4],
    app_rules: [[Vec<u32>; 2]; crate::app::APP_PROTOS],
    /// Some rule inspects the raw stream (a payload rule that is not packet-only): else
    /// the worker keeps no stream bytes for it.
    raw_stream: bool,
}

// By hand: arrays of more than 32 elements (one per protocol) have no derived default.
impl Default for Engine {
    fn default() -> Self {
        Engine {
            sigs: Vec::new(),
            pkt: Default::default(),
            pkt_only_tcp: DirGroups::default(),
            pkt_only_tcp_big: DirGroups::default(),
            app: std::array::from_fn(|_| AppGroup::default()),
            names: Names::default(),
            naive: false,
            headers: 0,
            class_rules: Default::default(),
            app_rules: std::array::from_fn(|_| Default::default()),
            raw_stream: false,
        }
    }
}

/// One match to report.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hit {
    /// Index of the rule in the engine.
    pub sig: u32,
    /// The transaction, for app-layer matches.
    pub tx: Option<u64>,
    /// Whether the addresses matched the rule with source and destination swapped
    /// (a `<>` rule matched backwards).
    pub reversed: bool,
    /// The payload matched on the reassembled stream chunk (not the packet's payload):
    /// what the alert's `payload` shows (Suricata's stream match).
    pub stream: bool,
    /// The action a threshold.config `rate_filter` in effect gave the alert (None: the
    /// rule's own).
    pub action: Option<Action>,
    /// A match on a frame (`frame:`): the frame buffer and the item that matched.
    pub frame: Option<(BufferId, u16)>,
}

/// What a packet brings to inspection.
#[derive(Debug, Clone, Copy)]
pub struct PacketView<'a> {
    pub pkt: &'a Packet<'a>,
    pub ts_ns: u64,
    /// Flow direction of the packet: client -> server. None without a flow.
    pub to_server: Option<bool>,
    pub established: bool,
    pub app_proto: AppProto,
    /// The flow's protocol is not visible to this packet's packet rules yet (see
    /// `AppFlow::shown_on`): rules of an app-layer protocol do not match it.
    pub app_proto_pending: bool,
    /// The packet payload, when it is inspected on its own (not when a TCP segment went
    /// into a tracked stream).
    pub payload: Option<&'a [u8]>,
    /// A stream chunk ready for inspection in the packet's direction.
    pub stream: Option<&'a [u8]>,
    /// The payload of a TCP segment that went into a tracked stream: only packet-only
    /// rules (`tcp-pkt`, `flow:no_stream`, `dsize`) inspect it.
    pub segment: Option<&'a [u8]>,
    /// Stream bytes seen so far (to_server, to_client), for `stream_size`.
    pub stream_bytes: (u64, u64),
    pub flow_id: u64,
    /// The first packet of its flow direction (or a packet without a flow): IP-only
    /// rules are checked on these.
    pub first_in_direction: bool,
    /// A pseudo packet made at flow end: only stream inspection applies to it, but for
    /// `pseudo_app_rules`.
    pub pseudo: bool,
    /// A pseudo packet of a direction Suricata makes one for at flow end (the session
    /// still open, data not processed, or a transaction of the direction incomplete):
    /// payload-less rules of an app-layer protocol match it as any packet, save
    /// `flow:established` (measured against the reference: `alert smtp any any -> any
    /// any` alerts once per such direction, `alert tcp ... (flow:to_server;)` does not).
    pub pseudo_app_rules: bool,
    /// The protocol recognised in each direction (to_server, to_client), for
    /// `app-layer-protocol:<proto>,to_server`; `Unknown` until then.
    pub app_proto_dir: [AppProto; 2],
    /// Protocol detection finished (in either direction) on this packet: the only
    /// packets rules made of `app-layer-protocol` alone are checked on (Suricata's
    /// "PD-only" rules).
    pub proto_detect_done: bool,
    /// Protocol-detection events raised on this packet (bits of
    /// [`crate::app::events::PACKET_EVENTS`]).
    pub app_events: u8,
    /// Stream events the packet raised (bits of [`crate::flow::tcp::STREAM_EVENTS`]).
    pub stream_events: u8,
}

fn ip_key(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

impl Engine {
    /// Compiles rules; `names` are the flowbit/flowint/xbit names they use.
    pub fn new(rules: Vec<Rule>, names: Names) -> Engine {
        Engine::with_algo(rules, names, mpm::Algo::Auto)
    }

    /// Compiles rules with the given prefilter matcher.
    pub fn with_algo(rules: Vec<Rule>, names: Names, algo: mpm::Algo) -> Engine {
        let mut e = Engine {
            names,
            ..Default::default()
        };
        let mut pkt_rules: [DirRules; 4] = Default::default();
        #[allow(clippy::type_complexity)]
        let mut app_b: Vec<[Vec<(BufferId, Vec<Transform>, MpmBuilder)>; 2]> = (0
            ..crate::app::APP_PROTOS)
            .map(|_| Default::default())
            .collect();
        let mut pkt_only_tcp_rules = DirRules::default();
        let mut pkt_only_tcp_big = DirRules::default();
        for (i, rule) in rules.into_iter().enumerate() {
            let id = i as u32;
            let dir = match rule.flow.to_server {
                Some(true) => Some(Dir::ToServer),
                Some(false) => Some(Dir::ToClient),
                None => None,
            };
            let buffers: Vec<BufList> = rule
                .buffers
                .iter()
                .map(|b| BufList {
                    ids: [b.def.to_server, b.def.to_client],
                    multi: b.def.multi,
                    transforms: b.transforms.clone(),
                    list: List::compile(&b.list.items),
                    bsize: b.list.bsize,
                    absent: b.list.absent,
                    datasets: b.list.datasets.clone(),
                    frame: crate::app::buffers::is_frame(b.def),
                })
                .collect();
            let app = !rule.buffers.is_empty() || !rule.tx_checks.is_empty();
            // Register the rule in its groups.
            if app {
                // A rule of a protocol that others carry (DCE/RPC inside SMB) is in
                // their groups too, and so is one whose protocol's rules apply to
                // another (`alert http` on HTTP/2). A rule of no protocol here has only
                // file keywords (`filemd5`, `filesize` on `alert ip`): it inspects the
                // transactions of every protocol, as in Suricata (where a transaction
                // without files never matches it).
                let protos: Vec<usize> = match rule.app_proto {
                    Some(rp) => {
                        let family = AppProto::ALL
                            .iter()
                            .copied()
                            .filter(|&p| !rule.proto_exact && p != rp && p.matches_rule(rp));
                        let mut v: Vec<usize> =
                            rp.carriers().chain(family).map(|c| c as usize).collect();
                        v.dedup();
                        v
                    }
                    None => std::iter::once(AppProto::Unknown)
                        .chain(AppProto::ALL.iter().copied())
                        .map(|p| p as usize)
                        .collect(),
                };
                for proto in protos {
                    let Some(g) = app_b.get_mut(proto) else {
                        continue;
                    };
                    {
                        for d in [Dir::ToServer, Dir::ToClient] {
                            if dir.is_some_and(|rd| rd != d) {
                                continue;
                            }
                            // A rule inspects a direction only if all its buffers exist there.
                            if buffers.iter().any(|b| b.ids[d.index()].is_none()) {
                                continue;
                            }
                            e.app_rules[proto][d.index()].push(id);
                            match &rule.fast {
                                Some(fp) => match fp.list {
                                    ListRef::Buffer(bi) => {
                                        if let Some(b) = buffers.get(bi)
                                            && let Some(bid) = b.ids[d.index()]
                                        {
                                            // One prefilter per (buffer, transforms).
                                            let list = &mut g[d.index()];
                                            let pos = list
                                                .iter()
                                                .position(|(x, t, _)| {
                                                    *x == bid && *t == b.transforms
                                                })
                                                .unwrap_or_else(|| {
                                                    list.push((
                                                        bid,
                                                        b.transforms.clone(),
                                                        MpmBuilder::new(algo),
                                                    ));
                                                    list.len() - 1
                                                });
                                            list[pos].2.add(&fp.bytes, fp.nocase, id);
                                        }
                                    }
                                    ListRef::Payload => e.app[proto].always[d.index()].push(id),
                                },
                                None => e.app[proto].always[d.index()].push(id),
                            }
                        }
                    }
                }
            } else {
                let classes: &[usize] = match rule.proto {
                    Proto::Tcp => &[TCP],
                    Proto::Udp => &[UDP],
                    Proto::Icmp | Proto::Icmpv4 | Proto::Icmpv6 => &[ICMP],
                    Proto::Ip => &[TCP, UDP, ICMP, OTHER],
                };
                let fp = rule
                    .fast
                    .as_ref()
                    .filter(|fp| fp.list == ListRef::Payload)
                    .map(|fp| (fp.bytes.clone(), fp.nocase));
                let anchored = anchored_payload(&rule);
                if classes.contains(&TCP)
                    && (rule.payload_source == PayloadSource::Packet || anchored)
                    && !rule.payload.is_empty()
                {
                    pkt_only_tcp_rules.add(id, &rule, &fp);
                    if max_dsize(&rule).is_none_or(|m| m >= BIG_SEGMENT as u64) {
                        pkt_only_tcp_big.add(id, &rule, &fp);
                    }
                }
                for &c in classes {
                    pkt_rules[c].add(id, &rule, &fp);
                    e.class_rules[c].push(id);
                }
            }
            e.sigs.push(Sig {
                filtered: rule.threshold.is_some()
                    || rule.detection_filter.is_some()
                    || rule.rate_filter.is_some()
                    || !rule.suppress.is_empty(),
                ip_only: is_ip_only(&rule),
                anchored: !app && anchored_payload(&rule),
                pd_only: is_pd_only(&rule),
                decode_event: rule
                    .header
                    .iter()
                    .any(|h| matches!(h, HeaderMatch::DecodeEvent(_))),
                payload: List::compile(&rule.payload.items),
                base64: rule.base64_data.as_ref().map(|l| List::compile(&l.items)),
                hdr_lists: rule
                    .hdr_buffers
                    .iter()
                    .map(|h| (h.buf, List::compile(&h.list.items)))
                    .collect(),
                buffers,
                dir,
                app,
                rule,
                hdr: 0,
            });
        }
        e.number_headers();
        for (c, rules) in pkt_rules.into_iter().enumerate() {
            e.pkt[c] = rules.build(c == TCP || c == UDP, algo);
        }
        e.pkt_only_tcp = pkt_only_tcp_rules.build(true, algo);
        e.pkt_only_tcp_big = pkt_only_tcp_big.build(true, algo);
        for (p, dirs) in app_b.into_iter().enumerate() {
            for (d, bufs) in dirs.into_iter().enumerate() {
                for (bid, t, b) in bufs {
                    if let Some(m) = b.build() {
                        e.app[p].mpms[d].push((bid, t, m));
                    }
                }
            }
        }
        e.raw_stream = e.sigs.iter().any(|s| {
            !s.app && !s.payload.is_empty() && s.rule.payload_source != PayloadSource::Packet
        });
        e
    }

    pub fn len(&self) -> usize {
        self.sigs.len()
    }

    /// What the loaded rules need of the file layer: tracking and digests for the
    /// file keywords, magic for `file.magic`/`filemagic`.
    pub fn file_needs(&self) -> crate::app::files::FileConfig {
        let mut c = crate::app::files::FileConfig::default();
        for sig in &self.sigs {
            for t in &sig.rule.tx_checks {
                if let crate::rules::TxCheck::File(f) = t {
                    c = c.union(f.needs());
                }
            }
            // Files are kept for the store until the rules decided (when it is on).
            if sig.rule.filestore.is_some() {
                c.store_possible = true;
            }
            if sig.rule.buffers.iter().any(|b| b.def.name == "file.magic") {
                c.track = true;
                c.magic = true;
            }
        }
        c
    }

    /// The frame buffers (both directions') some rule inspects.
    pub fn frame_buffers(&self) -> Vec<BufferId> {
        self.buffers_where(crate::app::buffers::is_frame)
    }

    /// Every buffer (both directions') some rule inspects.
    pub fn rule_buffers(&self) -> Vec<BufferId> {
        self.buffers_where(|_| true)
    }

    /// The buffer ids, sorted and once each, of the rules' buffers that `keep` takes.
    fn buffers_where(
        &self,
        keep: impl Fn(&crate::app::buffers::BufferDef) -> bool,
    ) -> Vec<BufferId> {
        let mut v: Vec<BufferId> = self
            .sigs
            .iter()
            .flat_map(|sig| sig.rule.buffers.iter())
            .filter(|b| keep(b.def))
            .flat_map(|b| [b.def.to_server, b.def.to_client].into_iter().flatten())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Whether a loaded rule inspects a buffer of this family (`ja3`: `ja3.hash`,
    /// `ja3.string`, `ja3s.hash`, `ja3s.string`): the name up to its first dot or `s.`.
    pub fn uses_buffer(&self, family: &str) -> bool {
        self.sigs.iter().any(|sig| {
            sig.rule.buffers.iter().any(|b| {
                b.def
                    .name
                    .strip_prefix(family)
                    .is_some_and(|rest| rest.starts_with('.') || rest.starts_with("s."))
            })
        })
    }

    /// Turns the prefilter off (every rule of a group is evaluated): the reference the
    /// prefiltered engine is tested against.
    pub fn set_naive(&mut self, on: bool) {
        self.naive = on;
    }

    /// Sizes of the groups: (packet groups: (patterns, always), app groups: per proto and
    /// direction (buffers, patterns, always)), for `rules check` and tuning.
    pub fn group_sizes(&self) -> String {
        let mut out = String::new();
        let trees = self
            .pkt
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("pkt[{i}]"), d));
        let pkt_only = [
            ("pkt-only-tcp".to_string(), &self.pkt_only_tcp),
            ("pkt-only-tcp-big".to_string(), &self.pkt_only_tcp_big),
        ];
        for (name, d) in trees.chain(pkt_only) {
            for (dir, pg) in [("to-server", &d.to_server), ("to-client", &d.to_client)] {
                let pats = |g: &PktGroup| g.mpm.as_ref().map(|m| m.patterns()).unwrap_or(0);
                out.push_str(&format!(
                    "{name} {dir}: {} port groups of {} to {} patterns; ",
                    pg.groups.len(),
                    pg.groups.iter().map(pats).min().unwrap_or(0),
                    pg.groups.iter().map(pats).max().unwrap_or(0),
                ));
            }
        }
        for (p, g) in self.app.iter().enumerate() {
            for d in 0..2 {
                let pats: usize = g.mpms[d].iter().map(|(_, _, m)| m.patterns()).sum();
                out.push_str(&format!(
                    "app[{p}][{d}]: {} buffers, {pats} patterns, {} always; ",
                    g.mpms[d].len(),
                    g.always[d].len()
                ));
            }
        }
        out
    }

    pub fn is_empty(&self) -> bool {
        self.sigs.is_empty()
    }

    pub fn sig(&self, i: u32) -> &Sig {
        &self.sigs[i as usize]
    }

    /// Whether any rule inspects transactions of `proto`.
    /// Whether some rule inspects the raw stream (see `Engine::raw_stream`).
    pub fn inspects_raw_stream(&self) -> bool {
        self.raw_stream
    }

    pub fn has_app_rules(&self, proto: AppProto) -> bool {
        self.app.get(proto as usize).is_some_and(|g| {
            g.mpms.iter().any(|m| !m.is_empty()) || g.always.iter().any(|a| !a.is_empty())
        })
    }
}

#[cfg(test)]
mod tests;
