//! Mutable detection state: per worker ([`DetectState`]: scratch buffers, thresholds,
//! xbits), per flow ([`FlowVars`]: flowbits, flowints, pass), per transaction
//! ([`TxDetect`]: rules done with it).

use std::collections::HashMap;
use std::net::IpAddr;

use super::PacketView;
use super::matcher::Scratch;
use super::mpm::MpmScratch;
use crate::app::{BufferId, Dir};
use crate::rules::{
    DetectionFilter, IntOperand, RateFilter, Threshold, ThresholdKind, XbitCmd, XbitTrack,
};

/// Threshold entries kept at most; beyond, the oldest windows are forgotten.
const MAX_THRESHOLD_ENTRIES: usize = 65536;
/// Xbit entries kept at most.
const MAX_XBITS: usize = 65536;
/// Distinct ports remembered per detection_filter entry with `unique_on`.
const MAX_UNIQUE_PORTS: usize = 1024;

#[derive(Debug, Default)]
struct ThresholdEntry {
    window_start_ns: u64,
    count: u32,
    /// `type both`: alerted in this window.
    alerted: bool,
    /// `type backoff`: the count the next alert comes at; `rate_filter`: the second
    /// (of packet time) the new action took effect (0: not in effect).
    aux: u32,
    ports: Vec<u16>,
}

/// Per-worker detection state.
#[derive(Debug, Default)]
pub struct DetectState {
    /// Host-tracked state shared with the other workers (thresholds, xbits). Without it
    /// (a single process), the local maps below are used.
    shared: Option<meerkat_shm::SharedTable>,
    pub(super) mpm: MpmScratch,
    pub(super) cands: Vec<u32>,
    pub(super) scratch: Scratch,
    pub(super) tbuf: Vec<u8>,
    /// The frame item the last transaction match was on (see [`super::Hit::frame`]).
    pub(super) frame_hit: Option<(BufferId, u16)>,
    /// Replaying a dead predecessor's records (`worker::replay`): the shared table is
    /// read, not written (its effects are there already).
    replaying: bool,
    /// Per rule header, its result on the packet of the current inspection call (0 not
    /// known yet, 1 no match, 2 match, 3 match reversed), and the headers set.
    pub(super) hdr_memo: Vec<u8>,
    pub(super) hdr_touched: Vec<u32>,
    thresholds: HashMap<(u32, u64, u128), ThresholdEntry>,
    /// (name, key) -> expiry ns (u64::MAX = never).
    xbits: HashMap<(u16, u128), u64>,
}

/// The key of xbit (or hostbit) number `name` on the host `ip` in the shared host
/// table; its entry's `t0` is the expiry (ns of packet time, `u64::MAX` = never). The
/// supervisor's unix socket (`add-hostbit`, `list-hostbit`) uses the same keys.
pub fn host_bit_key(name: u16, ip: IpAddr) -> [u64; 3] {
    xbit_table_key(name, ip_key(ip))
}

fn xbit_table_key(name: u16, k: u128) -> [u64; 3] {
    [3 << 40 | u64::from(name), 0, fold(k)]
}

fn ip_key(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(a) => u128::from(u32::from(a)),
        IpAddr::V6(a) => u128::from(a),
    }
}

/// Folds a 128-bit tracking key to 64 bits for the shared table.
fn fold(k: u128) -> u64 {
    (k as u64) ^ ((k >> 64) as u64).rotate_left(29)
}

impl DetectState {
    /// Uses `table` for state that all workers share.
    pub fn with_shared(table: meerkat_shm::SharedTable) -> DetectState {
        DetectState {
            shared: Some(table),
            ..Default::default()
        }
    }

    /// Fresh state for another ruleset (scratch space is sized per engine); the shared
    /// host table stays.
    pub fn renew(&mut self) {
        let shared = self.shared.take();
        *self = DetectState {
            shared,
            replaying: self.replaying,
            ..Default::default()
        };
    }

    /// Starts or ends replaying (see the field).
    pub fn set_replaying(&mut self, on: bool) {
        self.replaying = on;
    }

    /// `f` on the shared entry for `key`: stored back, unless replaying.
    fn shared_update<R>(
        table: &meerkat_shm::SharedTable,
        replaying: bool,
        key: [u64; 3],
        f: impl FnOnce(&mut meerkat_shm::table::Entry) -> R,
    ) -> R {
        if replaying {
            table.peek_update(key, f)
        } else {
            table.update(key, f)
        }
    }

    /// Forgets the header results of the previous inspection call.
    pub(super) fn reset_headers(&mut self) {
        for &h in &self.hdr_touched {
            if let Some(m) = self.hdr_memo.get_mut(h as usize) {
                *m = 0;
            }
        }
        self.hdr_touched.clear();
    }

    fn entry(
        &mut self,
        gid: u32,
        sid: u64,
        key: u128,
        now: u64,
        seconds: u32,
    ) -> &mut ThresholdEntry {
        if self.thresholds.len() >= MAX_THRESHOLD_ENTRIES {
            self.thresholds.retain(|_, e| {
                now.saturating_sub(e.window_start_ns) < u64::from(seconds) * 1_000_000_000
            });
        }
        self.thresholds.entry((gid, sid, key)).or_default()
    }

    /// `threshold`: whether this match alerts.
    pub(super) fn threshold(
        &mut self,
        gid: u32,
        sid: u64,
        key: u128,
        t: &Threshold,
        now: u64,
    ) -> bool {
        let window = u64::from(t.seconds) * 1_000_000_000;
        if let Some(table) = &self.shared {
            return Self::shared_update(
                table,
                self.replaying,
                [1 << 40 | u64::from(gid), sid, fold(key)],
                |e| {
                    let mut local = ThresholdEntry {
                        window_start_ns: e.t0,
                        count: e.count,
                        alerted: e.flags & 1 != 0,
                        aux: table_aux(e),
                        ports: Vec::new(),
                    };
                    let r = threshold_step(&mut local, t, now, window);
                    e.t0 = local.window_start_ns;
                    e.count = local.count;
                    e.flags = u32::from(local.alerted);
                    set_table_aux(e, local.aux);
                    r
                },
            );
        }
        let e = self.entry(gid, sid, key, now, t.seconds);
        threshold_step(e, t, now, window)
    }
}

fn threshold_step(e: &mut ThresholdEntry, t: &Threshold, now: u64, window: u64) -> bool {
    if let ThresholdKind::Backoff { multiplier } = t.kind {
        // No window: alerts at count, count * m, count * m^2, ... (Suricata's backoff).
        if e.count == 0 {
            e.window_start_ns = now;
            e.aux = t.count;
        }
        e.count = e.count.saturating_add(1);
        if e.count == e.aux {
            e.aux = e.aux.saturating_mul(multiplier);
            return true;
        }
        return false;
    }
    if e.count == 0 || now.saturating_sub(e.window_start_ns) >= window {
        e.window_start_ns = now;
        e.count = 0;
        e.alerted = false;
    }
    e.count += 1;
    match t.kind {
        ThresholdKind::Limit => e.count <= t.count,
        ThresholdKind::Threshold => {
            if e.count >= t.count {
                // Every `count`-th event alerts; counting starts again.
                e.count = 0;
                true
            } else {
                false
            }
        }
        ThresholdKind::Both => {
            if e.count >= t.count && !e.alerted {
                e.alerted = true;
                true
            } else {
                false
            }
        }
        ThresholdKind::Backoff { .. } => unreachable!("handled above"),
    }
}

/// The 32-bit `aux` of a threshold or rate_filter entry in the shared table: its first
/// two port slots (the table keeps 16 bits of `flags`; only detection_filter entries,
/// which have no `aux`, use the ports).
fn table_aux(e: &meerkat_shm::table::Entry) -> u32 {
    u32::from(e.ports[0]) | u32::from(e.ports[1]) << 16
}

fn set_table_aux(e: &mut meerkat_shm::table::Entry, aux: u32) {
    e.ports[0] = aux as u16;
    e.ports[1] = (aux >> 16) as u16;
    e.nports = 2;
}

/// `rate_filter`: whether the new action is in effect for this match. As Suricata: a
/// match while the action is in effect keeps it until `timeout` whole seconds have
/// passed since it took effect (that match itself is back to the rule's action); out
/// of it, matches are counted in windows of `seconds`, and the one past `count` puts
/// the action in effect.
fn rate_step(e: &mut ThresholdEntry, f: &RateFilter, now: u64) -> bool {
    let now_s = (now / 1_000_000_000).max(1) as u32;
    if e.count == 0 {
        e.window_start_ns = now;
        e.count = 1;
        e.aux = 0;
        return false;
    }
    if e.aux != 0 {
        if now_s.saturating_sub(e.aux) > f.timeout {
            e.aux = 0;
            return false;
        }
        return true;
    }
    if now.saturating_sub(e.window_start_ns) < u64::from(f.seconds) * 1_000_000_000 {
        e.count = e.count.saturating_add(1);
        if e.count > f.count {
            e.aux = now_s;
            return true;
        }
    } else {
        e.window_start_ns = now;
        e.count = 1;
    }
    false
}

impl DetectState {
    /// `rate_filter`: whether the match takes the filter's new action.
    pub(super) fn rate_filter(
        &mut self,
        gid: u32,
        sid: u64,
        key: u128,
        f: &RateFilter,
        now: u64,
    ) -> bool {
        if let Some(table) = &self.shared {
            return Self::shared_update(
                table,
                self.replaying,
                [4 << 40 | u64::from(gid), sid, fold(key)],
                |e| {
                    let mut local = ThresholdEntry {
                        window_start_ns: e.t0,
                        count: e.count,
                        alerted: false,
                        aux: table_aux(e),
                        ports: Vec::new(),
                    };
                    let r = rate_step(&mut local, f, now);
                    e.t0 = local.window_start_ns;
                    e.count = local.count;
                    set_table_aux(e, local.aux);
                    r
                },
            );
        }
        // A rule has one of threshold, detection_filter and rate_filter: they share
        // its keys. Entries in effect or in a window are kept when the map is full.
        let keep = f.seconds.max(f.timeout);
        let e = self.entry(gid, sid, key, now, keep);
        rate_step(e, f, now)
    }
}

fn detection_filter_step(
    e: &mut ThresholdEntry,
    d: &DetectionFilter,
    now: u64,
    window: u64,
    unique: Option<u16>,
) -> bool {
    if e.count == 0 || now.saturating_sub(e.window_start_ns) >= window {
        e.window_start_ns = now;
        e.count = 0;
        e.ports.clear();
    }
    match unique {
        Some(port) => {
            if !e.ports.contains(&port) && e.ports.len() < MAX_UNIQUE_PORTS {
                e.ports.push(port);
            }
            e.count = e.count.max(1);
            e.ports.len() as u32 > d.count
        }
        None => {
            e.count += 1;
            e.count > d.count
        }
    }
}

impl DetectState {
    /// `detection_filter`: alerts once the (distinct) count exceeds `count` in the window.
    pub(super) fn detection_filter(
        &mut self,
        gid: u32,
        sid: u64,
        key: u128,
        d: &DetectionFilter,
        now: u64,
        unique: Option<u16>,
    ) -> bool {
        let window = u64::from(d.seconds) * 1_000_000_000;
        if let Some(table) = &self.shared {
            return Self::shared_update(
                table,
                self.replaying,
                [2 << 40 | u64::from(gid), sid, fold(key)],
                |e| {
                    let mut local = ThresholdEntry {
                        window_start_ns: e.t0,
                        count: e.count,
                        alerted: false,
                        aux: 0,
                        ports: e.ports[..e.nports].to_vec(),
                    };
                    let r = detection_filter_step(&mut local, d, now, window, unique);
                    e.t0 = local.window_start_ns;
                    e.count = local.count;
                    e.nports = local.ports.len().min(meerkat_shm::table::PORTS);
                    e.ports[..e.nports].copy_from_slice(&local.ports[..e.nports]);
                    r
                },
            );
        }
        let e = self.entry(gid, sid, key, now, d.seconds);
        detection_filter_step(e, d, now, window, unique)
    }

    fn xbit_key(x: &XbitCmd, v: &PacketView<'_>) -> Option<u128> {
        let ip = v.pkt.ip?;
        Some(match x.track {
            XbitTrack::IpSrc => ip_key(ip.src),
            XbitTrack::IpDst => ip_key(ip.dst),
            XbitTrack::IpPair => {
                let (a, b) = (ip_key(ip.src), ip_key(ip.dst));
                a.min(b) ^ a.max(b).rotate_left(61)
            }
        })
    }

    pub(super) fn xbit_isset(&self, x: &XbitCmd, v: &PacketView<'_>) -> bool {
        let Some(k) = Self::xbit_key(x, v) else {
            return false;
        };
        if let Some(table) = &self.shared {
            return table
                .get(xbit_table_key(x.name, k))
                .is_some_and(|e| e.t0 > v.ts_ns);
        }
        self.xbits
            .get(&(x.name, k))
            .is_some_and(|&exp| exp > v.ts_ns)
    }

    pub(super) fn xbit_set(&mut self, x: &XbitCmd, v: &PacketView<'_>, on: bool) {
        let Some(k) = Self::xbit_key(x, v) else {
            return;
        };
        if let Some(table) = &self.shared {
            if self.replaying {
                return;
            }
            let key = xbit_table_key(x.name, k);
            if on {
                let exp = if x.expire_s == 0 {
                    u64::MAX
                } else {
                    v.ts_ns + u64::from(x.expire_s) * 1_000_000_000
                };
                table.update(key, |e| e.t0 = exp);
            } else {
                table.remove(key);
            }
            return;
        }
        if on {
            if self.xbits.len() >= MAX_XBITS {
                let now = v.ts_ns;
                self.xbits.retain(|_, exp| *exp > now);
            }
            let exp = if x.expire_s == 0 {
                u64::MAX
            } else {
                v.ts_ns + u64::from(x.expire_s) * 1_000_000_000
            };
            self.xbits.insert((x.name, k), exp);
        } else {
            self.xbits.remove(&(x.name, k));
        }
    }
}

/// Per-flow detection variables.
#[derive(Debug, Default, Clone)]
pub struct FlowVars {
    bits: Vec<u64>,
    ints: Vec<(u16, u64)>,
    /// A `pass` rule matched: no further detection on this flow.
    pub pass: bool,
}

impl FlowVars {
    pub fn bit(&self, i: u16) -> bool {
        self.bits
            .get(usize::from(i) / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    pub fn set_bit(&mut self, i: u16, on: bool) {
        let w = usize::from(i) / 64;
        if self.bits.len() <= w {
            if !on {
                return;
            }
            self.bits.resize(w + 1, 0);
        }
        if on {
            self.bits[w] |= 1 << (i % 64);
        } else {
            self.bits[w] &= !(1 << (i % 64));
        }
    }

    /// Names of the set flowbits (for EVE `metadata.flowbits`).
    pub fn set_bits(&self) -> impl Iterator<Item = u16> + '_ {
        (0..self.bits.len() * 64)
            .map(|i| i as u16)
            .filter(|&i| self.bit(i))
    }

    pub fn int(&self, i: u16) -> Option<u64> {
        self.ints.iter().find(|(k, _)| *k == i).map(|(_, v)| *v)
    }

    pub fn set_int(&mut self, i: u16, v: u64) {
        match self.ints.iter_mut().find(|(k, _)| *k == i) {
            Some(slot) => slot.1 = v,
            None => self.ints.push((i, v)),
        }
    }

    pub(super) fn operand(&self, o: &IntOperand) -> Option<u64> {
        match o {
            IntOperand::Const(n) => Some(*n),
            IntOperand::Var(i) => self.int(*i),
        }
    }
}

/// Rules done with one transaction, per direction.
#[derive(Debug, Default, Clone)]
pub struct TxDetect {
    pub tx_id: u64,
    /// Sorted rule ids.
    done: [Vec<u32>; 2],
    /// Per direction, the prefilters (by index, the first 64) whose buffer was final when
    /// scanned: a later inspection of the transaction reuses their candidates instead of
    /// scanning the same bytes again.
    pub(crate) scanned: [u64; 2],
    /// The candidates those final buffers gave, and those of the part of a growing
    /// buffer scanned so far.
    pub(crate) cands: [Vec<u32>; 2],
    /// Per direction: (prefilter index, bytes scanned) of growing buffers (a body still
    /// arriving), so that the next inspection scans only what was added.
    pub(crate) grown: [Vec<(u32, u32)>; 2],
    /// Progress per direction at the last inspection (None = never inspected).
    pub inspected: [Option<u8>; 2],
    /// Whether the transaction's EVE record was written.
    pub logged: bool,
    /// Whether its request's own record was written, for protocols that log the
    /// request on its own (DNS: [`crate::app::Transaction::event_record`]).
    pub logged_request: bool,
    /// Per direction: files of the transaction logged (`fileinfo`) so far.
    pub files_logged: [u16; 2],
    /// Per direction: a `filestore` rule (engine index + 1; 0 = none) asked for every
    /// file of the transaction (scope `tx`).
    pub store: [u32; 2],
    /// Per (direction, rule on a buffer of several frames): the first frame it has not
    /// alerted on, where its next inspection starts (a rule alerts once per frame; at
    /// most [`MAX_FRAME_CURSORS`], past which a rule is done with its first alert).
    frame_next: Vec<(u8, u32, u16)>,
}

/// Rules per transaction that can alert on more than one of its frames.
pub const MAX_FRAME_CURSORS: usize = 256;

impl TxDetect {
    pub fn new(tx_id: u64) -> TxDetect {
        TxDetect {
            tx_id,
            ..Default::default()
        }
    }

    pub fn is_done(&self, dir: Dir, sig: u32) -> bool {
        self.done[dir.index()].binary_search(&sig).is_ok()
    }

    /// Where a scan of growing buffer `k` of `dir`, now `len` bytes long, resumes for a
    /// prefilter whose longest pattern is `max_len` bytes: an occurrence not found by the
    /// scans so far ends after their end. None when nothing was added.
    pub(crate) fn resume_at(&self, dir: Dir, k: u32, len: usize, max_len: usize) -> Option<usize> {
        let done = self.grown[dir.index()]
            .iter()
            .find(|(i, _)| *i == k)
            .map_or(0, |&(_, n)| n as usize);
        if len <= done && done > 0 {
            return (len < done).then_some(0);
        }
        Some(done.saturating_sub(max_len.saturating_sub(1)))
    }

    /// Remembers that growing buffer `k` of `dir` was scanned up to `len` bytes, with
    /// `cands` found in its new part.
    pub(crate) fn grew(&mut self, dir: Dir, k: u32, len: usize, cands: &[u32]) {
        let d = dir.index();
        let len = u32::try_from(len).unwrap_or(u32::MAX);
        match self.grown[d].iter_mut().find(|(i, _)| *i == k) {
            Some(e) => e.1 = len,
            None => self.grown[d].push((k, len)),
        }
        if !cands.is_empty() {
            let c = &mut self.cands[d];
            c.extend_from_slice(cands);
            c.sort_unstable();
            c.dedup();
        }
    }

    /// The first frame item rule `sig` may still alert on in `dir`.
    pub(crate) fn frame_from(&self, dir: Dir, sig: u32) -> usize {
        let d = dir.index() as u8;
        self.frame_next
            .iter()
            .find(|&&(fd, s, _)| fd == d && s == sig)
            .map_or(0, |&(_, _, n)| usize::from(n))
    }

    /// Rule `sig` alerted on frame item `item - 1` of `dir`: it may alert on those from
    /// `item` on. False when no more rules can be followed (the rule is done then).
    pub(crate) fn set_frame_from(&mut self, dir: Dir, sig: u32, item: usize) -> bool {
        let d = dir.index() as u8;
        let item = u16::try_from(item).unwrap_or(u16::MAX);
        if let Some(e) = self
            .frame_next
            .iter_mut()
            .find(|&&mut (fd, s, _)| fd == d && s == sig)
        {
            e.2 = item;
            return true;
        }
        if self.frame_next.len() >= MAX_FRAME_CURSORS {
            return false;
        }
        self.frame_next.push((d, sig, item));
        true
    }

    pub fn mark_done(&mut self, dir: Dir, sig: u32) {
        // Sorted, so that the check above is a binary search: a transaction collects the
        // hundreds of candidates its buffers can never match.
        let done = &mut self.done[dir.index()];
        if let Err(at) = done.binary_search(&sig) {
            done.insert(at, sig);
        }
    }
}
