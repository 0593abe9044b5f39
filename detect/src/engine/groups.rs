//! Rule groups: rules split by IP protocol class, direction and port, each group with
//! its prefilter, so a packet is matched only against the rules that can apply.

use super::*;

/// Transport classes of packet groups.
pub(super) const TCP: usize = 0;

pub(super) const UDP: usize = 1;

pub(super) const ICMP: usize = 2;

pub(super) const OTHER: usize = 3;

pub(super) fn class(ip_proto: u8) -> usize {
    match ip_proto {
        6 => TCP,
        17 => UDP,
        1 | 58 => ICMP,
        _ => OTHER,
    }
}

#[derive(Debug, Default)]
pub(super) struct PktGroup {
    pub(super) mpm: Option<Mpm>,
    /// Rules evaluated on every packet of the group (no payload fast pattern).
    pub(super) always: Vec<u32>,
}

/// The packet rules of one transport class for one flow direction, grouped by port as
/// Suricata's signature groups are: each group holds the rules whose port set includes
/// the group's ports *and* every rule for any port, so a packet's payload (or stream
/// chunk) is scanned once, against its own group only. Patterns of any-port rules are
/// repeated in every group's prefilter; that is what buys the single scan.
#[derive(Debug, Default)]
pub(super) struct PortGroups {
    /// Index 0: the ports no port-specific rule names (any-port rules only).
    pub(super) groups: Vec<PktGroup>,
    /// Port -> group (empty for classes without ports: group 0).
    pub(super) port_group: Vec<u16>,
}

/// The packet groups of a transport class: by destination port for packets to the
/// server (and packets without a flow), by source port for packets to the client, as
/// Suricata's toserver/toclient group trees. A rule limited to one flow direction is only
/// in that direction's tree.
#[derive(Debug, Default)]
pub(super) struct DirGroups {
    pub(super) to_server: PortGroups,
    pub(super) to_client: PortGroups,
}

impl DirGroups {
    /// The group inspecting a packet going `to_server` (None: no flow) from port `sp` to
    /// port `dp`.
    #[inline]
    pub(super) fn group(&self, to_server: Option<bool>, sp: u16, dp: u16) -> &PktGroup {
        match to_server {
            Some(false) => self.to_client.group(sp),
            _ => self.to_server.group(dp),
        }
    }
}

/// A packet rule for port grouping: (rule id, port ranges (None = any), fast pattern
/// (bytes, nocase)).
pub(super) type PortedRule = (u32, Option<Vec<(u16, u16)>>, Option<(Vec<u8>, bool)>);

/// The packet rules of a class, before grouping: per tree.
#[derive(Debug, Default)]
pub(super) struct DirRules {
    pub(super) to_server: Vec<PortedRule>,
    pub(super) to_client: Vec<PortedRule>,
}

impl DirRules {
    /// Registers a packet rule in the trees it can match in: grouped by its destination
    /// ports in the to-server tree and by its source ports in the to-client tree (a
    /// `<>` rule matches either way round: any port).
    pub(super) fn add(&mut self, id: u32, rule: &Rule, fp: &Option<(Vec<u8>, bool)>) {
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

    pub(super) fn build(self, ported: bool, algo: mpm::Algo) -> DirGroups {
        DirGroups {
            to_server: PortGroups::build(&self.to_server, ported, MAX_PORT_GROUPS, algo),
            to_client: PortGroups::build(&self.to_client, ported, MAX_TO_CLIENT_GROUPS, algo),
        }
    }
}

/// Most groups of the to-server tree with a prefilter of their own (as Suricata's
/// `toserver-groups`): the combinations of port sets with the most rules get one each,
/// the ports of all other combinations share one group with the union of their rules.
/// Each group repeats the any-port rules, so this bounds the memory and the compile
/// time of the prefilters (ET Open: 20 to-server groups of 1,400-1,900 patterns).
pub(super) const MAX_PORT_GROUPS: usize = 20;

/// Most groups of the to-client tree (as Suricata's `toclient-groups`, which it keeps
/// smaller): few rules name a source port, so more groups would mostly repeat the
/// any-port rules.
pub(super) const MAX_TO_CLIENT_GROUPS: usize = 8;

impl PortGroups {
    /// `rules`: (rule id, ports (None = any), fast pattern); `ported`: whether the class
    /// has ports (otherwise every rule is an any-port rule); at most `max_groups` groups
    /// (at least 2: any-port rules only, and one shared by all port sets).
    pub(super) fn build(
        rules: &[PortedRule],
        ported: bool,
        max_groups: usize,
        algo: mpm::Algo,
    ) -> PortGroups {
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
    pub(super) fn group(&self, port: u16) -> &PktGroup {
        let g = self.port_group.get(usize::from(port)).copied().unwrap_or(0);
        self.groups.get(usize::from(g)).unwrap_or(&EMPTY_GROUP)
    }
}

#[derive(Debug, Default)]
pub(super) struct AppGroup {
    /// Per direction: (buffer, its prefilter).
    pub(super) mpms: [Vec<(BufferId, Vec<Transform>, Mpm)>; 2],
    /// Per direction: rules without a prefilterable pattern.
    pub(super) always: [Vec<u32>; 2],
}
