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

use std::net::IpAddr;

use crate::app::{AppProto, Buf, BufferId, Dir, Transaction};
use crate::rules::{
    Absent, Action, Direction, FlagMod, FlowbitCmd, FlowintCmd, HdrBuffer, HeaderMatch, IntOperand,
    ListRef, Names, NumCmp, NumCmpOp, PayloadSource, Proto, ProtoMode, Rule, Transform, VlanLayer,
    XbitOp,
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
    /// An IP-only rule (no ports, payload or packet keywords; at most `flowbits:set`):
    /// like Suricata, it is checked on the first packet of each direction of a flow only.
    ip_only: bool,
    /// Made of `app-layer-protocol` checks alone (Suricata's "PD-only" rule): checked
    /// only on packets where protocol detection finished.
    pd_only: bool,
    /// The rule checks a decoder event (`decode-event`): the only kind of rule a packet
    /// that failed to decode is inspected with (as Suricata's decoder-event group).
    decode_event: bool,
    /// Index of the rule's header (protocol, addresses, ports, direction) among the
    /// distinct headers of the set: rules sharing a header share its result per packet.
    hdr: u32,
}

/// No flow state checks besides `flowbits:set` (no flowint, xbits or TLS property
/// checks): shared by Suricata's IP-only and protocol-detection-only rule tests.
fn only_sets_flowbits(rule: &Rule) -> bool {
    rule.flowbits
        .iter()
        .all(|c| matches!(c, FlowbitCmd::Set(_)))
        && rule.flowints.is_empty()
        && rule.xbits.is_empty()
        && rule.tx_checks.is_empty()
}

/// Suricata's IP-only rule test.
fn is_ip_only(rule: &Rule) -> bool {
    rule.app_proto.is_none()
        && rule.payload.is_empty()
        && rule.buffers.is_empty()
        && rule.hdr_buffers.is_empty()
        && rule.base64_data.is_none()
        && rule.header.is_empty()
        && rule.flow == crate::rules::FlowOpts::default()
        && rule.payload_source == PayloadSource::Any
        && only_sets_flowbits(rule)
        && rule.sport.is_any()
        && rule.dport.is_any()
}

/// Suricata's protocol-detection-only rule test: `app-layer-protocol` and nothing but
/// a flow direction and `flowbits:set` besides.
fn is_pd_only(rule: &Rule) -> bool {
    !rule.header.is_empty()
        && rule
            .header
            .iter()
            .all(|h| matches!(h, HeaderMatch::AppLayerProtocol { .. }))
        && rule.payload.is_empty()
        && rule.buffers.is_empty()
        && rule.hdr_buffers.is_empty()
        && rule.base64_data.is_none()
        && rule.flow.established.is_none()
        && !rule.flow.stateless
        && rule.flow.frag.is_none()
        && only_sets_flowbits(rule)
}

/// Segment length from which the packet-only rules whose `dsize` admits only shorter
/// payloads are left out of the prefilter (see `Engine::pkt_only_tcp_big`).
const BIG_SEGMENT: usize = 256;

/// The largest payload size (`dsize`) a rule admits; None when unbounded.
fn max_dsize(rule: &Rule) -> Option<u64> {
    rule.header
        .iter()
        .filter_map(|h| match *h {
            HeaderMatch::Dsize(c) => Some(match c {
                NumCmp::Eq(a) | NumCmp::Le(a) => Some(a),
                NumCmp::Lt(a) => Some(a.saturating_sub(1)),
                NumCmp::Between(_, b) => Some(b.saturating_sub(1)),
                _ => None,
            }),
            _ => None,
        })
        .flatten()
        .min()
}

/// Transport classes of packet groups.
const TCP: usize = 0;
const UDP: usize = 1;
const ICMP: usize = 2;
const OTHER: usize = 3;

fn class(ip_proto: u8) -> usize {
    match ip_proto {
        6 => TCP,
        17 => UDP,
        1 | 58 => ICMP,
        _ => OTHER,
    }
}

#[derive(Debug, Default)]
struct PktGroup {
    mpm: Option<Mpm>,
    /// Rules evaluated on every packet of the group (no payload fast pattern).
    always: Vec<u32>,
}

/// The packet rules of one transport class for one flow direction, grouped by port as
/// Suricata's signature groups are: each group holds the rules whose port set includes
/// the group's ports *and* every rule for any port, so a packet's payload (or stream
/// chunk) is scanned once, against its own group only. Patterns of any-port rules are
/// repeated in every group's prefilter; that is what buys the single scan.
#[derive(Debug, Default)]
struct PortGroups {
    /// Index 0: the ports no port-specific rule names (any-port rules only).
    groups: Vec<PktGroup>,
    /// Port -> group (empty for classes without ports: group 0).
    port_group: Vec<u16>,
}

/// The packet groups of a transport class: by destination port for packets to the
/// server (and packets without a flow), by source port for packets to the client, as
/// Suricata's toserver/toclient group trees. A rule limited to one flow direction is only
/// in that direction's tree.
#[derive(Debug, Default)]
struct DirGroups {
    to_server: PortGroups,
    to_client: PortGroups,
}

impl DirGroups {
    /// The group inspecting a packet going `to_server` (None: no flow) from port `sp` to
    /// port `dp`.
    #[inline]
    fn group(&self, to_server: Option<bool>, sp: u16, dp: u16) -> &PktGroup {
        match to_server {
            Some(false) => self.to_client.group(sp),
            _ => self.to_server.group(dp),
        }
    }
}

/// A packet rule for port grouping: (rule id, port ranges (None = any), fast pattern
/// (bytes, nocase)).
type PortedRule = (u32, Option<Vec<(u16, u16)>>, Option<(Vec<u8>, bool)>);

/// The packet rules of a class, before grouping: per tree.
#[derive(Debug, Default)]
struct DirRules {
    to_server: Vec<PortedRule>,
    to_client: Vec<PortedRule>,
}

impl DirRules {
    /// Registers a packet rule in the trees it can match in: grouped by its destination
    /// ports in the to-server tree and by its source ports in the to-client tree (a
    /// `<>` rule matches either way round: any port).
    fn add(&mut self, id: u32, rule: &Rule, fp: &Option<(Vec<u8>, bool)>) {
        let one_way = rule.direction == Direction::ToDst;
        let f = &rule.flow;
        // `stateless` rules skip the flow checks (see `flow_opts_match`).
        if f.stateless || f.to_server != Some(false) {
            let ports = (one_way && !rule.dport.is_any()).then(|| rule.dport.ranges().to_vec());
            self.to_server.push((id, ports, fp.clone()));
        }
        if f.stateless || f.to_server != Some(true) {
            let ports = (one_way && !rule.sport.is_any()).then(|| rule.sport.ranges().to_vec());
            self.to_client.push((id, ports, fp.clone()));
        }
    }

    fn build(self, ported: bool, algo: mpm::Algo) -> DirGroups {
        DirGroups {
            to_server: PortGroups::build(&self.to_server, ported, MAX_PORT_GROUPS, algo),
            to_client: PortGroups::build(&self.to_client, ported, MAX_TO_CLIENT_GROUPS, algo),
        }
    }
}

static EMPTY_GROUP: PktGroup = PktGroup {
    mpm: None,
    always: Vec::new(),
};

/// Most groups of the to-server tree with a prefilter of their own (as Suricata's
/// `toserver-groups`): the combinations of port sets with the most rules get one each,
/// the ports of all other combinations share one group with the union of their rules.
/// Each group repeats the any-port rules, so this bounds the memory and the compile
/// time of the prefilters (ET Open: 20 to-server groups of 1,400-1,900 patterns).
const MAX_PORT_GROUPS: usize = 20;

/// Most groups of the to-client tree (as Suricata's `toclient-groups`, which it keeps
/// smaller): few rules name a source port, so more groups would mostly repeat the
/// any-port rules.
const MAX_TO_CLIENT_GROUPS: usize = 8;

impl PortGroups {
    /// `rules`: (rule id, ports (None = any), fast pattern); `ported`: whether the class
    /// has ports (otherwise every rule is an any-port rule); at most `max_groups` groups
    /// (at least 2: any-port rules only, and one shared by all port sets).
    fn build(rules: &[PortedRule], ported: bool, max_groups: usize, algo: mpm::Algo) -> PortGroups {
        let max_groups = max_groups.max(2);
        // Distinct port sets and how many rules use each.
        let mut sets: Vec<&[(u16, u16)]> = Vec::new();
        let mut set_rules: Vec<usize> = Vec::new();
        let mut rule_set: Vec<Option<usize>> = Vec::with_capacity(rules.len());
        for (_, ports, _) in rules {
            rule_set.push(ports.as_deref().filter(|_| ported).map(|p| {
                let i = sets.iter().position(|s| *s == p).unwrap_or_else(|| {
                    sets.push(p);
                    set_rules.push(0);
                    sets.len() - 1
                });
                set_rules[i] += 1;
                i
            }));
        }
        // Per port: the sets containing it (a combination); ports with the same
        // combination share a group.
        let mut port_group = Vec::new();
        // Per group: the port sets whose rules it holds (sorted).
        let mut group_sets: Vec<Vec<usize>> = vec![Vec::new()];
        if ported && !sets.is_empty() {
            let mut per_port: Vec<Vec<usize>> = vec![Vec::new(); 65536];
            for (si, set) in sets.iter().enumerate() {
                for &(lo, hi) in set.iter() {
                    for p in lo..=hi {
                        per_port[usize::from(p)].push(si);
                    }
                }
            }
            let mut combos: Vec<Vec<usize>> = vec![Vec::new()];
            let mut index: std::collections::HashMap<Vec<usize>, usize> =
                std::collections::HashMap::new();
            index.insert(Vec::new(), 0);
            let mut port_combo: Vec<usize> = Vec::with_capacity(65536);
            for list in per_port {
                let next = combos.len();
                let id = *index.entry(list).or_insert_with_key(|l| {
                    combos.push(l.clone());
                    next
                });
                port_combo.push(id);
            }
            // The combinations with the most rules get a group of their own.
            let weight = |c: usize| combos[c].iter().map(|&s| set_rules[s]).sum::<usize>();
            let mut order: Vec<usize> = (1..combos.len()).collect();
            order.sort_by_key(|&c| (std::cmp::Reverse(weight(c)), c));
            let mut combo_group = vec![0u16; combos.len()];
            let mut rest: Vec<usize> = Vec::new();
            let mut rest_combos: Vec<usize> = Vec::new();
            for (rank, &c) in order.iter().enumerate() {
                // Group 0 and the shared group count against the limit.
                if rank + 2 < max_groups || order.len() < max_groups {
                    combo_group[c] = group_sets.len() as u16;
                    group_sets.push(combos[c].clone());
                } else {
                    rest.extend_from_slice(&combos[c]);
                    rest_combos.push(c);
                }
            }
            if !rest_combos.is_empty() {
                rest.sort_unstable();
                rest.dedup();
                let id = group_sets.len() as u16;
                group_sets.push(rest);
                for c in rest_combos {
                    combo_group[c] = id;
                }
            }
            port_group = port_combo.iter().map(|&c| combo_group[c]).collect();
        }
        let groups = group_sets
            .iter()
            .map(|gs| {
                let mut b = MpmBuilder::new(algo);
                let mut always = Vec::new();
                for ((id, _, fp), set) in rules.iter().zip(&rule_set) {
                    if set.is_some_and(|s| gs.binary_search(&s).is_err()) {
                        continue;
                    }
                    match fp {
                        Some((bytes, nocase)) => b.add(bytes, *nocase, *id),
                        None => always.push(*id),
                    }
                }
                PktGroup {
                    mpm: b.build(),
                    always,
                }
            })
            .collect();
        PortGroups { groups, port_group }
    }

    #[inline]
    fn group(&self, port: u16) -> &PktGroup {
        let g = self.port_group.get(usize::from(port)).copied().unwrap_or(0);
        self.groups.get(usize::from(g)).unwrap_or(&EMPTY_GROUP)
    }
}

#[derive(Debug, Default)]
struct AppGroup {
    /// Per direction: (buffer, its prefilter).
    mpms: [Vec<(BufferId, Vec<Transform>, Mpm)>; 2],
    /// Per direction: rules without a prefilterable pattern.
    always: [Vec<u32>; 2],
}

/// The loaded ruleset, ready to match. Immutable and shared; per-worker mutable state
/// lives in [`DetectState`].
#[derive(Debug, Default)]
pub struct Engine {
    sigs: Vec<Sig>,
    /// Packet rules by transport class, flow direction and port.
    pkt: [DirGroups; 4],
    /// TCP rules that inspect packets only (`tcp-pkt`, `flow:no_stream`, `dsize`) and
    /// have payload keywords, grouped again so the payload of a segment that went into
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
    /// A pseudo packet made at flow end: only stream inspection applies to it.
    pub pseudo: bool,
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
                })
                .collect();
            let app = !rule.buffers.is_empty() || !rule.tx_checks.is_empty();
            // Register the rule in its groups.
            if app {
                let proto = rule.app_proto.unwrap_or(AppProto::Unknown) as usize;
                if let Some(g) = app_b.get_mut(proto) {
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
                                            .position(|(x, t, _)| *x == bid && *t == b.transforms)
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
                if classes.contains(&TCP)
                    && rule.payload_source == PayloadSource::Packet
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
                ip_only: is_ip_only(&rule),
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
        e
    }

    pub fn len(&self) -> usize {
        self.sigs.len()
    }

    /// Gives each rule the index of its header among the distinct headers.
    fn number_headers(&mut self) {
        type Ports = (Vec<(u16, u16)>, Vec<(u16, u16)>);
        let mut by_ports: std::collections::HashMap<Ports, Vec<(u32, usize)>> =
            std::collections::HashMap::new();
        let mut n = 0u32;
        for i in 0..self.sigs.len() {
            let r = &self.sigs[i].rule;
            let key = (r.sport.ranges().to_vec(), r.dport.ranges().to_vec());
            let same = by_ports.entry(key).or_default();
            let found = same.iter().find(|&&(_, j)| {
                let o = &self.sigs[j].rule;
                o.proto == r.proto && o.direction == r.direction && o.src == r.src && o.dst == r.dst
            });
            let id = match found {
                Some(&(id, _)) => id,
                None => {
                    same.push((n, i));
                    n += 1;
                    n - 1
                }
            };
            self.sigs[i].hdr = id;
        }
        self.headers = n as usize;
    }

    /// [`Self::header_matches`], remembered per header for the rest of the inspection
    /// call (see [`DetectState::reset_headers`]).
    fn header_cached(&self, sig: &Sig, p: &Packet<'_>, st: &mut DetectState) -> Option<bool> {
        if st.hdr_memo.len() < self.headers {
            st.hdr_memo.resize(self.headers, 0);
        }
        let h = sig.hdr as usize;
        match st.hdr_memo.get(h).copied() {
            Some(1) => None,
            Some(2) => Some(false),
            Some(3) => Some(true),
            _ => {
                let r = Self::header_matches(&sig.rule, p);
                if let Some(slot) = st.hdr_memo.get_mut(h) {
                    *slot = match r {
                        None => 1,
                        Some(false) => 2,
                        Some(true) => 3,
                    };
                    st.hdr_touched.push(sig.hdr);
                }
                r
            }
        }
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
    pub fn has_app_rules(&self, proto: AppProto) -> bool {
        self.app.get(proto as usize).is_some_and(|g| {
            g.mpms.iter().any(|m| !m.is_empty()) || g.always.iter().any(|a| !a.is_empty())
        })
    }

    /// Header match of `rule` on `p`: Some(reversed) when it matches.
    fn header_matches(rule: &Rule, p: &Packet<'_>) -> Option<bool> {
        let ip = p.ip?;
        if !rule.proto.matches(ip.proto) {
            return None;
        }
        let (sp, dp) = p.ports();
        // Ports first: a candidate from a port group shared by several port sets (or
        // from the other flow direction's rules) most often fails on them.
        let fwd = rule.sport.matches(sp)
            && rule.dport.matches(dp)
            && rule.src.matches(&ip.src)
            && rule.dst.matches(&ip.dst);
        if fwd {
            return Some(false);
        }
        if rule.direction == Direction::Both
            && rule.sport.matches(dp)
            && rule.dport.matches(sp)
            && rule.src.matches(&ip.dst)
            && rule.dst.matches(&ip.src)
        {
            return Some(true);
        }
        None
    }

    fn flow_opts_match(rule: &Rule, v: &PacketView<'_>) -> bool {
        let f = &rule.flow;
        if f.stateless {
            return true;
        }
        if let Some(want) = f.to_server
            && v.to_server != Some(want)
        {
            return false;
        }
        if let Some(est) = f.established
            && v.established != est
        {
            return false;
        }
        if let Some(frag) = f.frag {
            let is_frag = v.pkt.ip.is_some_and(|i| i.fragment.is_some());
            if is_frag != frag {
                return false;
            }
        }
        true
    }

    fn header_keywords_match(rule: &Rule, v: &PacketView<'_>) -> bool {
        let p = v.pkt;
        let Some(ip) = p.ip else {
            return rule.header.is_empty();
        };
        rule.header.iter().all(|h| match *h {
            HeaderMatch::Ttl(c) => c.test(u64::from(ip.ttl)),
            HeaderMatch::Tos { value, negated } => (ip.tos == value) != negated,
            HeaderMatch::IpId(id) => ip.version == 4 && ip.ident == id,
            HeaderMatch::IpOpt(o) => {
                if ip.version != 4 || ip.header_len <= 20 {
                    return false;
                }
                p.frame
                    .get(ip.offset + 20..ip.offset + ip.header_len)
                    .is_some_and(|opts| ipv4_has_option(opts, o))
            }
            HeaderMatch::SameIp => ip.src == ip.dst,
            HeaderMatch::IpProto { cmp } => cmp.test(u64::from(ip.proto)),
            HeaderMatch::Flags(f) => match p.l4 {
                L4::Tcp { flags, .. } => {
                    let have = flags & !f.ignore;
                    match f.modifier {
                        FlagMod::Exact => have == f.bits,
                        FlagMod::Plus => have & f.bits == f.bits,
                        FlagMod::Any => have & f.bits != 0,
                        FlagMod::Not => have & f.bits == 0,
                    }
                }
                _ => false,
            },
            HeaderMatch::Seq(s) => matches!(p.l4, L4::Tcp { seq, .. } if seq == s),
            HeaderMatch::Ack(a) => matches!(p.l4, L4::Tcp { ack, .. } if ack == a),
            HeaderMatch::Window { value, negated } => {
                matches!(p.l4, L4::Tcp { window, .. } if (window == value) != negated)
            }
            HeaderMatch::IType(c) => matches!(p.l4, L4::Icmp { icmp_type, .. } if c.test(u64::from(icmp_type))),
            HeaderMatch::ICode(c) => matches!(p.l4, L4::Icmp { code, .. } if c.test(u64::from(code))),
            HeaderMatch::IcmpId(id) => matches!(p.l4, L4::Icmp { ident, icmp_type, .. } if ident == id && icmp_has_id(icmp_type)),
            HeaderMatch::IcmpSeq(s) => matches!(p.l4, L4::Icmp { seq, icmp_type, .. } if seq == s && icmp_has_id(icmp_type)),
            HeaderMatch::Dsize(c) => {
                // Suricata: only "less than" forms (and `=0`) can match an empty payload;
                // pseudo packets never match.
                let n = p.payload.len() as u64;
                !v.pseudo
                    && (n > 0 || matches!(c, NumCmp::Lt(_) | NumCmp::Le(_) | NumCmp::Eq(0)))
                    && c.test(n)
            }
            HeaderMatch::FragBits(fb) => {
                let raw = p.frame.get(ip.offset..).unwrap_or(&[]);
                let bits = match raw.get(6) {
                    Some(b) if ip.version == 4 => (b >> 5) & 0x7,
                    _ => 0,
                };
                // The flag bits in header order: 4 reserved, 2 DF, 1 MF (as parsed).
                let have = bits;
                match fb.modifier {
                    FlagMod::Exact => have == fb.bits,
                    FlagMod::Plus => have & fb.bits == fb.bits,
                    FlagMod::Any => have & fb.bits != 0,
                    FlagMod::Not => have & fb.bits == 0,
                }
            }
            HeaderMatch::FragOffset { cmp } => cmp.test(ip.fragment.map(|f| f.offset as u64).unwrap_or(0)),
            HeaderMatch::StreamSize { side, cmp } => {
                let (ts, tc) = v.stream_bytes;
                match side {
                    0 => cmp.test(ts),
                    1 => cmp.test(tc),
                    2 => cmp.test(ts) && cmp.test(tc),
                    _ => cmp.test(ts) || cmp.test(tc),
                }
            }
            HeaderMatch::AppLayerProtocol {
                proto,
                negated,
                mode,
            } => {
                let d = v.app_proto_dir;
                let is = match mode {
                    ProtoMode::Flow => v.app_proto == proto,
                    ProtoMode::ToServer => d[0] == proto,
                    ProtoMode::ToClient => d[1] == proto,
                    ProtoMode::Either => d[0] == proto || d[1] == proto,
                    ProtoMode::Direction => d[usize::from(v.to_server == Some(false))] == proto,
                };
                is != negated
            }
            HeaderMatch::DecodeEvent(bit) => p.events & bit != 0,
            HeaderMatch::AppLayerEvent(bit) => v.app_events & bit != 0,
            HeaderMatch::VlanId { cmp, layer } => vlan_id_matches(p.vlans(), cmp, layer),
        })
    }

    /// Flowbit/flowint/xbit conditions.
    fn state_conditions(
        rule: &Rule,
        vars: Option<&FlowVars>,
        st: &DetectState,
        v: &PacketView<'_>,
    ) -> bool {
        for c in &rule.flowbits {
            let ok = match (c, vars) {
                (FlowbitCmd::IsSet(ids), Some(fv)) => ids.iter().any(|&i| fv.bit(i)),
                (FlowbitCmd::IsSet(_), None) => false,
                (FlowbitCmd::IsNotSet(ids), Some(fv)) => ids.iter().any(|&i| !fv.bit(i)),
                (FlowbitCmd::IsNotSet(_), None) => true,
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        for c in &rule.flowints {
            let get = |i: u16| vars.and_then(|fv| fv.int(i));
            let operand = |o: &IntOperand| match o {
                IntOperand::Const(n) => Some(*n),
                IntOperand::Var(i) => get(*i),
            };
            let ok = match c {
                FlowintCmd::Compare(i, op, o) => match (get(*i), operand(o)) {
                    (Some(a), Some(b)) => match op {
                        NumCmpOp::Eq => a == b,
                        NumCmpOp::Ne => a != b,
                        NumCmpOp::Lt => a < b,
                        NumCmpOp::Le => a <= b,
                        NumCmpOp::Gt => a > b,
                        NumCmpOp::Ge => a >= b,
                    },
                    _ => false,
                },
                FlowintCmd::IsSet(i) => get(*i).is_some(),
                FlowintCmd::NotSet(i) => get(*i).is_none(),
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        for x in &rule.xbits {
            let ok = match x.op {
                XbitOp::IsSet => st.xbit_isset(x, v),
                XbitOp::IsNotSet => !st.xbit_isset(x, v),
                _ => true,
            };
            if !ok {
                return false;
            }
        }
        true
    }

    /// Applies the rule's flowbit/flowint/xbit actions after a match.
    fn apply_actions(
        rule: &Rule,
        vars: Option<&mut FlowVars>,
        st: &mut DetectState,
        v: &PacketView<'_>,
    ) {
        if let Some(fv) = vars {
            for c in &rule.flowbits {
                match c {
                    FlowbitCmd::Set(ids) => ids.iter().for_each(|&i| fv.set_bit(i, true)),
                    FlowbitCmd::Unset(ids) => ids.iter().for_each(|&i| fv.set_bit(i, false)),
                    FlowbitCmd::Toggle(ids) => ids.iter().for_each(|&i| {
                        let b = fv.bit(i);
                        fv.set_bit(i, !b)
                    }),
                    _ => {}
                }
            }
            for c in &rule.flowints {
                let (i, new) = match c {
                    FlowintCmd::Assign(i, o) => (*i, fv.operand(o)),
                    FlowintCmd::Add(i, o) => (
                        *i,
                        fv.operand(o)
                            .map(|x| fv.int(*i).unwrap_or(0).wrapping_add(x)),
                    ),
                    FlowintCmd::Sub(i, o) => (
                        *i,
                        fv.operand(o)
                            .map(|x| fv.int(*i).unwrap_or(0).wrapping_sub(x)),
                    ),
                    _ => continue,
                };
                if let Some(n) = new {
                    fv.set_int(i, n);
                }
            }
        }
        for x in &rule.xbits {
            match x.op {
                XbitOp::Set => st.xbit_set(x, v, true),
                XbitOp::Unset => st.xbit_set(x, v, false),
                XbitOp::Toggle => {
                    let b = st.xbit_isset(x, v);
                    st.xbit_set(x, v, !b)
                }
                _ => {}
            }
        }
    }

    /// Threshold / detection_filter: whether this match alerts.
    fn threshold_allows(
        rule: &Rule,
        st: &mut DetectState,
        v: &PacketView<'_>,
        reversed: bool,
    ) -> bool {
        let Some(ip) = v.pkt.ip else {
            return rule.threshold.is_none() && rule.detection_filter.is_none();
        };
        let (src, dst) = if reversed {
            (ip.dst, ip.src)
        } else {
            (ip.src, ip.dst)
        };
        let (sp, dp) = v.pkt.ports();
        let key = |track| match track {
            crate::rules::Track::BySrc => ip_key(src),
            crate::rules::Track::ByDst => ip_key(dst),
            crate::rules::Track::ByRule => 0,
            crate::rules::Track::ByBoth => ip_key(src) ^ ip_key(dst).rotate_left(64),
            crate::rules::Track::ByFlow => u128::from(v.flow_id),
        };
        if let Some(t) = &rule.threshold {
            return st.threshold(rule.gid, rule.sid, key(t.track), t, v.ts_ns);
        }
        if let Some(d) = &rule.detection_filter {
            let unique = d
                .unique_on_src_port
                .map(|src_port| if src_port { sp } else { dp });
            return st.detection_filter(rule.gid, rule.sid, key(d.track), d, v.ts_ns, unique);
        }
        true
    }

    /// Inspects a packet (and the stream chunk it brings) with the packet/stream rules.
    /// `vars` is the flow's state, if the packet has a flow.
    pub fn inspect_packet(
        &self,
        st: &mut DetectState,
        v: &PacketView<'_>,
        mut vars: Option<&mut FlowVars>,
        hits: &mut Vec<Hit>,
    ) {
        let Some(ip) = v.pkt.ip else {
            return;
        };
        if vars.as_ref().is_some_and(|fv| fv.pass) {
            return;
        }
        let c = class(ip.proto);
        let (sp, dp) = v.pkt.ports();
        st.cands.clear();
        st.reset_headers();
        if self.naive {
            st.cands.extend_from_slice(&self.class_rules[c]);
        }
        if !self.naive {
            if let (Some(seg), TCP) = (v.segment, c) {
                let tree = if seg.len() >= BIG_SEGMENT {
                    &self.pkt_only_tcp_big
                } else {
                    &self.pkt_only_tcp
                };
                let g = tree.group(v.to_server, sp, dp);
                st.cands.extend_from_slice(&g.always);
                if let Some(m) = &g.mpm {
                    m.scan(seg, &mut st.mpm, &mut st.cands);
                }
            }
            let g = self.pkt[c].group(v.to_server, sp, dp);
            st.cands.extend_from_slice(&g.always);
            if let Some(m) = &g.mpm {
                if let Some(s) = v.stream {
                    m.scan(s, &mut st.mpm, &mut st.cands);
                }
                if let Some(p) = v.payload {
                    m.scan(p, &mut st.mpm, &mut st.cands);
                }
            }
        }
        st.cands.sort_unstable();
        st.cands.dedup();
        let cands = std::mem::take(&mut st.cands);
        for &id in &cands {
            let sig = &self.sigs[id as usize];
            let rule = &sig.rule;
            if sig.app || (sig.ip_only && !v.first_in_direction) {
                continue;
            }
            if (v.pkt.invalid && !sig.decode_event) || (sig.pd_only && !v.proto_detect_done) {
                continue;
            }
            // Pseudo packets (flow end) carry stream data only.
            if v.pseudo && sig.payload.is_empty() {
                continue;
            }
            let Some(reversed) = self.header_cached(sig, v.pkt, st) else {
                continue;
            };
            if let Some(ap) = rule.app_proto
                && v.app_proto != ap
            {
                continue;
            }
            if !Self::flow_opts_match(rule, v) || !Self::header_keywords_match(rule, v) {
                continue;
            }
            if !sig.hdr_lists.iter().all(|(b, l)| {
                hdr_buffer(v.pkt, *b).is_some_and(|buf| matcher::matches(l, buf, &mut st.scratch))
            }) {
                continue;
            }
            if !Self::state_conditions(rule, vars.as_deref(), st, v) {
                continue;
            }
            if !sig.payload.is_empty() {
                let stream_ok = rule.payload_source != PayloadSource::Packet
                    && v.stream.is_some_and(|s| self.payload_matches(sig, s, st));
                let pkt_payload = match rule.payload_source {
                    PayloadSource::Packet => v.payload.or(v.segment),
                    _ => v.payload,
                };
                let packet_ok = !stream_ok
                    && rule.payload_source != PayloadSource::Stream
                    && pkt_payload.is_some_and(|p| self.payload_matches(sig, p, st));
                if !stream_ok && !packet_ok {
                    continue;
                }
            } else if sig.base64.is_some() {
                continue;
            }
            Self::apply_actions(rule, vars.as_deref_mut(), st, v);
            if rule.action == Action::Pass {
                if let Some(fv) = vars.as_deref_mut() {
                    fv.pass = true;
                }
                break;
            }
            if rule.noalert || !Self::threshold_allows(rule, st, v, reversed) {
                continue;
            }
            hits.push(Hit {
                sig: id,
                tx: None,
                reversed,
            });
        }
        st.cands = cands;
    }

    fn payload_matches(&self, sig: &Sig, buf: &[u8], st: &mut DetectState) -> bool {
        if !matcher::matches(&sig.payload, buf, &mut st.scratch) {
            return false;
        }
        self.base64_matches(sig, st)
    }

    fn base64_matches(&self, sig: &Sig, st: &mut DetectState) -> bool {
        match &sig.base64 {
            None => true,
            Some(l) => {
                if !st.scratch.base64_ok {
                    return false;
                }
                let data = std::mem::take(&mut st.scratch.base64);
                let vars = st.scratch.vars;
                let ok = matcher::matches(l, &data, &mut st.scratch);
                st.scratch.vars = vars;
                st.scratch.base64 = data;
                ok
            }
        }
    }

    /// Inspects transaction `tx` of a flow whose app protocol is `proto`, after new data
    /// in `dir`. `td` remembers which rules are done with this transaction.
    #[allow(clippy::too_many_arguments)]
    pub fn inspect_tx(
        &self,
        st: &mut DetectState,
        v: &PacketView<'_>,
        proto: AppProto,
        dir: Dir,
        tx: &dyn Transaction,
        td: &mut TxDetect,
        mut vars: Option<&mut FlowVars>,
        hits: &mut Vec<Hit>,
    ) {
        let Some(g) = self.app.get(proto as usize) else {
            return;
        };
        if vars.as_ref().is_some_and(|fv| fv.pass) {
            return;
        }
        st.cands.clear();
        st.reset_headers();
        let d = dir.index();
        if self.naive {
            st.cands
                .extend_from_slice(&self.app_rules[proto as usize % crate::app::APP_PROTOS][d]);
        } else {
            st.cands.extend_from_slice(&g.always[d]);
            st.cands.extend_from_slice(&td.cands[d]);
        }
        for (k, (bid, transforms, m)) in g.mpms[d].iter().enumerate().filter(|_| !self.naive) {
            let bit = if k < 64 { 1u64 << k } else { 0 };
            if td.scanned[d] & bit != 0 {
                // Final when last scanned: its candidates are in `td.cands`.
                continue;
            }
            let start = st.cands.len();
            let mut fin = true;
            for i in 0..crate::app::buffers::MAX_ITEMS {
                let (b, partial) = match tx.buffer(*bid, i) {
                    Buf::Ready(b) => (b, false),
                    Buf::Partial(b) => (b, true),
                    Buf::NotYet => {
                        fin = false;
                        break;
                    }
                    Buf::Absent => break,
                };
                fin &= !partial;
                if b.is_empty() && transforms.is_empty() {
                    // Nothing to find (a scan call costs more than the check).
                    continue;
                }
                if transforms.is_empty() {
                    // A growing buffer (a body still arriving; its bytes so far do not
                    // change) is scanned from where this transaction's last scan of it
                    // stopped, the candidates of the part before being kept in `td`:
                    // without this, each packet of a body rescans all of it.
                    let from = if i == 0 {
                        match td.resume_at(dir, k as u32, b.len(), m.max_len()) {
                            Some(at) => at,
                            None => continue,
                        }
                    } else {
                        0
                    };
                    let at = st.cands.len();
                    m.scan(&b[from..], &mut st.mpm, &mut st.cands);
                    if i == 0 && (partial || from > 0) {
                        td.grew(dir, k as u32, b.len(), &st.cands[at..]);
                    }
                } else {
                    crate::transforms::apply_all(transforms, b, &mut st.tbuf);
                    m.scan(&st.tbuf, &mut st.mpm, &mut st.cands);
                }
            }
            if fin && bit != 0 {
                td.scanned[d] |= bit;
                td.cands[d].extend_from_slice(&st.cands[start..]);
            }
        }
        st.cands.sort_unstable();
        st.cands.dedup();
        let cands = std::mem::take(&mut st.cands);
        for &id in &cands {
            if td.is_done(dir, id) {
                continue;
            }
            let sig = &self.sigs[id as usize];
            let rule = &sig.rule;
            if sig.dir.is_some_and(|d| d != dir) {
                continue;
            }
            let Some(reversed) = self.header_cached(sig, v.pkt, st) else {
                continue;
            };
            if !Self::flow_opts_match(rule, v) || !Self::header_keywords_match(rule, v) {
                continue;
            }
            let now_s = (v.ts_ns / 1_000_000_000) as i64;
            match self.tx_lists_match(sig, dir, now_s, tx, st) {
                TxMatch::NotYet => continue,
                TxMatch::Never => {
                    td.mark_done(dir, id);
                    continue;
                }
                TxMatch::NoMatchYet => continue,
                TxMatch::Match => {}
            }
            if !sig.payload.is_empty() {
                let ok = v.stream.is_some_and(|s| self.payload_matches(sig, s, st))
                    || v.payload.is_some_and(|p| self.payload_matches(sig, p, st));
                if !ok {
                    continue;
                }
            }
            if !Self::state_conditions(rule, vars.as_deref(), st, v) {
                continue;
            }
            td.mark_done(dir, id);
            Self::apply_actions(rule, vars.as_deref_mut(), st, v);
            if rule.action == Action::Pass {
                if let Some(fv) = vars.as_deref_mut() {
                    fv.pass = true;
                }
                break;
            }
            if rule.noalert || !Self::threshold_allows(rule, st, v, reversed) {
                continue;
            }
            hits.push(Hit {
                sig: id,
                tx: Some(tx.id()),
                reversed,
            });
        }
        st.cands = cands;
    }

    fn tx_lists_match(
        &self,
        sig: &Sig,
        dir: Dir,
        now_s: i64,
        tx: &dyn Transaction,
        st: &mut DetectState,
    ) -> TxMatch {
        let mut partial = false;
        st.scratch.vars = [0; 16];
        for check in &sig.rule.tx_checks {
            match check.eval(dir, now_s, tx) {
                Some(true) => {}
                Some(false) => return TxMatch::Never,
                None => return TxMatch::NotYet,
            }
        }
        for b in &sig.buffers {
            let Some(bid) = b.ids[dir.index()] else {
                return TxMatch::Never;
            };
            let mut any = false;
            for i in 0..crate::app::buffers::MAX_ITEMS {
                let (data, is_partial) = match tx.buffer(bid, i) {
                    Buf::Ready(d) => (d, false),
                    Buf::Partial(d) => (d, true),
                    Buf::NotYet => {
                        if i == 0 {
                            return TxMatch::NotYet;
                        }
                        break;
                    }
                    Buf::Absent => {
                        // `absent`: a buffer missing from the transaction matches.
                        any = i == 0 && b.absent.is_some();
                        break;
                    }
                };
                if b.absent == Some(Absent::Only) {
                    // The buffer exists: `absent` alone cannot match.
                    break;
                }
                partial |= is_partial;
                let data = if b.transforms.is_empty() {
                    data
                } else {
                    crate::transforms::apply_all(&b.transforms, data, &mut st.tbuf);
                    &st.tbuf[..]
                };
                let size_ok = b.bsize.is_none_or(|c| c.test(data.len() as u64));
                let ok = size_ok
                    && (b.list.is_empty() || matcher::matches(&b.list, data, &mut st.scratch));
                if ok {
                    any = true;
                    break;
                }
                if !b.multi {
                    break;
                }
            }
            if !any {
                return if partial {
                    TxMatch::NoMatchYet
                } else {
                    TxMatch::Never
                };
            }
        }
        if !self.base64_matches(sig, st) {
            return TxMatch::Never;
        }
        TxMatch::Match
    }
}

enum TxMatch {
    Match,
    /// A buffer the rule needs is not there yet.
    NotYet,
    /// No match on a partial buffer: try again when more arrives.
    NoMatchYet,
    /// Cannot match this transaction.
    Never,
}

/// The bytes of a packet-header buffer; None when the packet has no such header (or
/// it is cut short).
fn hdr_buffer<'a>(p: &Packet<'a>, b: HdrBuffer) -> Option<&'a [u8]> {
    let (start, len) = match (b, p.ip, p.l4) {
        (HdrBuffer::Ipv4, Some(ip), _) if ip.version == 4 => (ip.offset, ip.header_len),
        (HdrBuffer::Ipv6, Some(ip), _) if ip.version == 6 => (ip.offset, ip.header_len),
        (
            HdrBuffer::Tcp,
            _,
            L4::Tcp {
                offset, header_len, ..
            },
        ) => (offset, header_len),
        (HdrBuffer::Udp, _, L4::Udp { offset, .. }) => (offset, 8),
        _ => return None,
    };
    p.frame.get(start..start.checked_add(len)?)
}

/// `vlan.id` on the packet's VLAN tags (outermost first); no tags, no match.
fn vlan_id_matches(vlans: &[u16], cmp: NumCmp, layer: VlanLayer) -> bool {
    if vlans.is_empty() {
        return false;
    }
    let test = |id: &u16| cmp.test(u64::from(*id));
    match layer {
        VlanLayer::Any => vlans.iter().any(test),
        VlanLayer::All => vlans.iter().all(test),
        VlanLayer::Index(i) => {
            let idx = if i >= 0 {
                Some(i as usize)
            } else {
                vlans.len().checked_sub(usize::from(i.unsigned_abs()))
            };
            idx.and_then(|i| vlans.get(i)).is_some_and(test)
        }
    }
}

fn icmp_has_id(icmp_type: u8) -> bool {
    // Echo, timestamp, information and address mask messages (v4), echo (v6).
    matches!(icmp_type, 0 | 8 | 13 | 14 | 15 | 16 | 17 | 18 | 128 | 129)
}

/// Walks IPv4 options (RFC 791) for `want`, bounded by the option area.
fn ipv4_has_option(opts: &[u8], want: crate::rules::IpOpt) -> bool {
    let mut i = 0;
    while i < opts.len() {
        let t = opts[i];
        if want == crate::rules::IpOpt::Any || t == want.code() {
            return true;
        }
        match t {
            0 => return false,
            1 => i += 1,
            _ => {
                let len = usize::from(*opts.get(i + 1).unwrap_or(&0));
                if len < 2 {
                    return false;
                }
                i += len;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests;
