//! The prefilter: one multi-pattern search over the fast patterns of a group of rules.
//!
//! Each rule contributes one pattern (its fast pattern); a scan of a buffer yields the
//! rules whose pattern occurs in it, and only those are evaluated in full.
//!
//! The pure-Rust matcher is a fingerprint filter (in the family of Wu-Manber and
//! Hyperscan's FDR): every pattern of 4 bytes or more is represented by one 4-byte window
//! of it (chosen to be a rare one), folded to lower case. The scan folds each 4-byte window
//! of the buffer to lower case with a few word operations (no lowercased copy of the
//! buffer), hashes it into a 64 Kibit bitmap that fits the L1 cache, and only on a hit
//! looks at the patterns behind that hash, confirming the window and then the whole
//! pattern (case-insensitively, or exactly for case-sensitive patterns). Patterns of 1 to
//! 3 bytes are found through a table on their first byte. This is several times faster
//! than an overlapping Aho-Corasick scan on rule sets of thousands of patterns, because
//! the common case — no pattern here — costs a load, a multiply and a bit test per byte.
//!
//! With the `hyperscan` feature and the system's libhs, Hyperscan is used instead (see
//! `hs.rs`); both implement the same contract, checked by the tests below.

use std::collections::HashMap;

/// Smallest pattern set compiled with Hyperscan under `mpm-algo: auto`. Every set is:
/// measured on the ET Open set, small port groups scanned with the fingerprint filter
/// cost more instructions per byte than Hyperscan's literal matchers (one third of the
/// packet path went to them), and each fingerprint table holds a 256 KiB index.
#[cfg(hyperscan)]
const HS_MIN_PATTERNS: usize = 1;

/// Bits of the window hash (the bitmap has 2^HASH_BITS bits).
const HASH_BITS: u32 = 16;

/// Folds ASCII upper-case letters of a little-endian 4-byte word to lower case.
#[inline(always)]
fn fold4(x: u32) -> u32 {
    let h = x & 0x7f7f_7f7f;
    let ge_a = h.wrapping_add(0x3f3f_3f3f); // high bit set where byte >= 'A'
    let gt_z = h.wrapping_add(0x2525_2525); // high bit set where byte > 'Z'
    let upper = (ge_a ^ gt_z) & !x & 0x8080_8080;
    x | (upper >> 2)
}

/// Folds ASCII upper-case letters of a little-endian 8-byte word to lower case.
#[inline(always)]
fn fold8(x: u64) -> u64 {
    let h = x & 0x7f7f_7f7f_7f7f_7f7f;
    let ge_a = h.wrapping_add(0x3f3f_3f3f_3f3f_3f3f);
    let gt_z = h.wrapping_add(0x2525_2525_2525_2525);
    let upper = (ge_a ^ gt_z) & !x & 0x8080_8080_8080_8080;
    x | (upper >> 2)
}

#[inline(always)]
fn hash(w: u32) -> usize {
    (w.wrapping_mul(0x9e37_79b1) >> (32 - HASH_BITS)) as usize
}

#[inline(always)]
fn hash8(w: u64) -> usize {
    (w.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> (64 - HASH_BITS)) as usize
}

#[inline(always)]
fn load4(b: &[u8], i: usize) -> u32 {
    let mut w = [0u8; 4];
    w.copy_from_slice(&b[i..i + 4]);
    u32::from_le_bytes(w)
}

#[inline(always)]
fn load8(b: &[u8], i: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(w)
}

/// How common a window of `bytes` is likely to be in traffic (higher = more common):
/// windows made of rare bytes hit the bitmap less often, and runs of lower-case letters
/// (English words: "port", "ment", "cont") are the most common of all.
fn window_score(bytes: &[u8]) -> u32 {
    let base: u32 = bytes.iter().map(|&b| commonness(b)).sum();
    let lower = bytes.iter().filter(|b| b.is_ascii_lowercase()).count();
    base + if lower == bytes.len() {
        16
    } else {
        (lower as u32) * 2
    }
}

/// How common a byte is in traffic (higher = more common).
fn commonness(b: u8) -> u32 {
    match b {
        0x00 => 10,
        0xff | b' ' => 6,
        b'\r' | b'\n' | b'/' | b'.' | b':' | b'=' | b'&' | b'-' | b'_' | b'"' => 4,
        b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' => 2,
        0x01..=0x1f => 2,
        _ => 0,
    }
}

#[derive(Debug)]
struct Pattern {
    /// Lowercased when `nocase`.
    bytes: Vec<u8>,
    nocase: bool,
    owners: Vec<u32>,
}

impl Pattern {
    #[inline]
    fn matches_at(&self, hay: &[u8], start: usize) -> bool {
        let Some(h) = hay.get(start..start + self.bytes.len()) else {
            return false;
        };
        if self.nocase {
            h.iter()
                .zip(&self.bytes)
                .all(|(a, b)| a.to_ascii_lowercase() == *b)
        } else {
            h == self.bytes.as_slice()
        }
    }
}

/// Patterns with their owners, before building.
#[derive(Debug, Default)]
pub struct MpmBuilder {
    patterns: Vec<Pattern>,
    index: HashMap<(Vec<u8>, bool), usize>,
    algo: Algo,
}

impl MpmBuilder {
    pub fn new(algo: Algo) -> MpmBuilder {
        MpmBuilder {
            algo,
            ..Default::default()
        }
    }

    /// Adds `rule`'s fast pattern (lowercased already when `nocase`).
    pub fn add(&mut self, bytes: &[u8], nocase: bool, rule: u32) {
        if bytes.is_empty() {
            return;
        }
        // A pattern without letters is the same either way.
        let nocase = nocase || !bytes.iter().any(u8::is_ascii_alphabetic);
        let bytes = if nocase {
            bytes.to_ascii_lowercase()
        } else {
            bytes.to_vec()
        };
        let key = (bytes.clone(), nocase);
        let i = *self.index.entry(key).or_insert_with(|| {
            self.patterns.push(Pattern {
                bytes,
                nocase,
                owners: Vec::new(),
            });
            self.patterns.len() - 1
        });
        self.patterns[i].owners.push(rule);
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    pub fn build(self) -> Option<Mpm> {
        if self.patterns.is_empty() {
            return None;
        }
        #[cfg(hyperscan)]
        if self.algo.use_hyperscan()
            && (self.patterns.len() >= HS_MIN_PATTERNS || self.algo == Algo::Hyperscan)
        {
            let pats: Vec<(Vec<u8>, bool, Vec<u32>)> = self
                .patterns
                .iter()
                .map(|p| (p.bytes.clone(), p.nocase, p.owners.clone()))
                .collect();
            match super::hs::HsDb::build(&pats) {
                Ok(db) => return Some(Mpm::Hyperscan(db)),
                Err(e) => tracing::warn!("hyperscan: {e}; using the fingerprint prefilter"),
            }
        }
        let _ = self.algo.use_hyperscan();
        self.build_fingerprint()
            .map(|f| Mpm::Fingerprint(Box::new(f)))
    }

    fn build_fingerprint(self) -> Option<FpMpm> {
        let mut t8 = Table::default();
        let mut t4 = Table::default();
        let mut two: Vec<Vec<u32>> = Vec::new();
        let mut two_index = vec![u32::MAX; 1 << 16];
        let mut two_set = vec![0u64; (1 << 16) / 64];
        let mut one: Vec<Vec<u32>> = vec![Vec::new(); 256];
        let mut one_set = [0u64; 4];
        for (pid, p) in self.patterns.iter().enumerate() {
            let pid = pid as u32;
            let b = &p.bytes;
            match b.len() {
                1 => {
                    let c = b[0].to_ascii_lowercase();
                    one[usize::from(c)].push(pid);
                    one_set[usize::from(c) / 64] |= 1 << (c % 64);
                }
                2 | 3 => {
                    let k = usize::from(u16::from_le_bytes([
                        b[0].to_ascii_lowercase(),
                        b[1].to_ascii_lowercase(),
                    ]));
                    if two_index[k] == u32::MAX {
                        two_index[k] = two.len() as u32;
                        two.push(Vec::new());
                    }
                    two[two_index[k] as usize].push(pid);
                    two_set[k / 64] |= 1 << (k % 64);
                }
                4..=7 => {
                    let best = (0..=b.len() - 4)
                        .map(|off| {
                            let w = fold4(load4(b, off));
                            let occ = t4.occupancy(hash(w));
                            (window_score(&b[off..off + 4]) * 64 + occ, off, w)
                        })
                        .min_by_key(|(sc, off, _)| (*sc, *off));
                    if let Some((_, off, w)) = best {
                        t4.add(hash(w), u64::from(w), off as u32, pid);
                    }
                }
                _ => {
                    let best = (0..=b.len() - 8)
                        .map(|off| {
                            let w = fold8(load8(b, off));
                            let occ = t8.occupancy(hash8(w));
                            (window_score(&b[off..off + 8]) * 64 + occ, off, w)
                        })
                        .min_by_key(|(sc, off, _)| (*sc, *off));
                    if let Some((_, off, w)) = best {
                        t8.add(hash8(w), w, off as u32, pid);
                    }
                }
            }
        }
        Some(FpMpm {
            max_len: self
                .patterns
                .iter()
                .map(|p| p.bytes.len())
                .max()
                .unwrap_or(0),
            patterns: self.patterns,
            t8: t8.finish(),
            t4: t4.finish(),
            two,
            two_index,
            two_set,
            one,
            one_set,
        })
    }
}

/// A fingerprint table under construction.
#[derive(Debug, Default)]
struct Table {
    /// (hash, folded window, window offset in the pattern, pattern id)
    entries: Vec<(usize, u64, u32, u32)>,
    occ: HashMap<usize, u32>,
}

impl Table {
    fn occupancy(&self, h: usize) -> u32 {
        self.occ.get(&h).copied().unwrap_or(0).min(63)
    }

    fn add(&mut self, h: usize, w: u64, off: u32, pid: u32) {
        *self.occ.entry(h).or_default() += 1;
        self.entries.push((h, w, off, pid));
    }

    fn finish(mut self) -> Option<Built> {
        if self.entries.is_empty() {
            return None;
        }
        let mut bitmap = vec![0u64; (1 << HASH_BITS) / 64];
        self.entries.sort_unstable_by_key(|e| e.0);
        let mut offsets = vec![0u32; (1 << HASH_BITS) + 1];
        for e in &self.entries {
            offsets[e.0 + 1] += 1;
            bitmap[e.0 / 64] |= 1 << (e.0 % 64);
        }
        for i in 0..(1 << HASH_BITS) {
            offsets[i + 1] += offsets[i];
        }
        Some(Built {
            bitmap,
            offsets,
            buckets: self
                .entries
                .iter()
                .map(|&(_, w, off, pid)| (w, off, pid))
                .collect(),
        })
    }
}

/// A built fingerprint table.
#[derive(Debug)]
struct Built {
    bitmap: Vec<u64>,
    /// Bucket ranges per hash into `buckets`.
    offsets: Vec<u32>,
    /// (folded window, window offset in the pattern, pattern id)
    buckets: Vec<(u64, u32, u32)>,
}

impl Built {
    #[inline(always)]
    fn hit(&self, h: usize) -> bool {
        self.bitmap[h / 64] & (1 << (h % 64)) != 0
    }

    #[inline(always)]
    fn bucket(&self, h: usize) -> &[(u64, u32, u32)] {
        &self.buckets[self.offsets[h] as usize..self.offsets[h + 1] as usize]
    }
}

/// The fingerprint prefilter.
#[derive(Debug)]
pub struct FpMpm {
    patterns: Vec<Pattern>,
    /// Length of the longest pattern.
    max_len: usize,
    /// Patterns of 8 bytes or more, by an 8-byte window.
    t8: Option<Built>,
    /// Patterns of 4 to 7 bytes, by a 4-byte window.
    t4: Option<Built>,
    /// Patterns of 2 or 3 bytes by their first two (folded) bytes.
    two: Vec<Vec<u32>>,
    two_index: Vec<u32>,
    two_set: Vec<u64>,
    /// Patterns of 1 byte.
    one: Vec<Vec<u32>>,
    one_set: [u64; 4],
}

/// Reusable per-scan state: which patterns were already reported; Hyperscan's scratch.
#[derive(Debug, Default)]
pub struct MpmScratch {
    seen: Vec<u64>,
    set: Vec<u32>,
    #[cfg(hyperscan)]
    hs: super::hs::HsScratch,
}

impl MpmScratch {
    #[inline]
    fn first_time(&mut self, p: u32) -> bool {
        let (w, bit) = (p as usize / 64, 1u64 << (p % 64));
        if self.seen[w] & bit != 0 {
            return false;
        }
        self.seen[w] |= bit;
        self.set.push(p);
        true
    }
}

/// Which matcher a prefilter uses (`mpm-algo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Algo {
    /// Hyperscan when the build has it, else the fingerprint filter.
    #[default]
    Auto,
    /// Hyperscan (an error at startup when the build lacks it).
    Hyperscan,
    /// The pure-Rust fingerprint filter.
    Fingerprint,
}

impl Algo {
    /// Whether this build can use Hyperscan.
    pub const HYPERSCAN_AVAILABLE: bool = cfg!(hyperscan);

    /// Parses Suricata's `mpm-algo` values (and ours).
    pub fn parse(s: &str) -> Option<Algo> {
        Some(match s {
            "auto" | "" => Algo::Auto,
            "hs" | "hyperscan" => Algo::Hyperscan,
            "ac" | "ac-ks" | "ac-bs" | "fingerprint" | "fp" => Algo::Fingerprint,
            _ => return None,
        })
    }

    fn use_hyperscan(self) -> bool {
        Self::HYPERSCAN_AVAILABLE && self != Algo::Fingerprint
    }
}

/// A built prefilter.
#[derive(Debug)]
pub enum Mpm {
    Fingerprint(Box<FpMpm>),
    #[cfg(hyperscan)]
    Hyperscan(super::hs::HsDb),
}

impl Mpm {
    pub fn patterns(&self) -> usize {
        match self {
            Mpm::Fingerprint(m) => m.patterns.len(),
            #[cfg(hyperscan)]
            Mpm::Hyperscan(h) => h.patterns(),
        }
    }

    /// Length of the longest pattern: a scan resumed that many bytes minus one before
    /// the end of a previous scan finds every occurrence that the previous scan missed.
    pub fn max_len(&self) -> usize {
        match self {
            Mpm::Fingerprint(m) => m.max_len,
            #[cfg(hyperscan)]
            Mpm::Hyperscan(h) => h.max_len(),
        }
    }

    /// Appends to `out` the rules whose pattern occurs in `hay` (each pattern's owners at
    /// most once per scan).
    #[inline]
    pub fn scan(&self, hay: &[u8], s: &mut MpmScratch, out: &mut Vec<u32>) {
        match self {
            Mpm::Fingerprint(m) => m.scan(hay, s, out),
            #[cfg(hyperscan)]
            Mpm::Hyperscan(h) => {
                if !hay.is_empty() {
                    h.scan(hay, &mut s.hs, out)
                }
            }
        }
    }
}

impl FpMpm {
    /// Appends to `out` the rules whose pattern occurs in `hay` (each pattern's owners at
    /// most once per scan).
    pub fn scan(&self, hay: &[u8], s: &mut MpmScratch, out: &mut Vec<u32>) {
        if hay.is_empty() {
            return;
        }
        let words = self.patterns.len().div_ceil(64);
        if s.seen.len() < words {
            s.seen.resize(words, 0);
        }
        let n = hay.len();
        let mut report = |pid: u32, start: usize, s: &mut MpmScratch| {
            let p = &self.patterns[pid as usize];
            if p.matches_at(hay, start) && s.first_time(pid) {
                out.extend_from_slice(&p.owners);
            }
        };
        match (&self.t8, &self.t4) {
            (Some(t8), t4) if n >= 8 => {
                for i in 0..=n - 8 {
                    let w = fold8(load8(hay, i));
                    let h8 = hash8(w);
                    if t8.hit(h8) {
                        for &(bw, off, pid) in t8.bucket(h8) {
                            if bw == w
                                && let Some(start) = i.checked_sub(off as usize)
                            {
                                report(pid, start, s);
                            }
                        }
                    }
                    if let Some(t4) = t4 {
                        let w4 = w as u32;
                        let h4 = hash(w4);
                        if t4.hit(h4) {
                            for &(bw, off, pid) in t4.bucket(h4) {
                                if bw == u64::from(w4)
                                    && let Some(start) = i.checked_sub(off as usize)
                                {
                                    report(pid, start, s);
                                }
                            }
                        }
                    }
                }
                // The last windows of 4 bytes.
                if let Some(t4) = t4 {
                    for i in n - 7..=n - 4 {
                        self.t4_at(t4, hay, i, &mut report, s);
                    }
                }
            }
            (_, Some(t4)) if n >= 4 => {
                for i in 0..=n - 4 {
                    self.t4_at(t4, hay, i, &mut report, s);
                }
            }
            _ => {}
        }
        if !self.two.is_empty() && n >= 2 {
            for i in 0..n - 1 {
                let k = usize::from(u16::from_le_bytes([
                    hay[i].to_ascii_lowercase(),
                    hay[i + 1].to_ascii_lowercase(),
                ]));
                if self.two_set[k / 64] & (1 << (k % 64)) == 0 {
                    continue;
                }
                for &pid in &self.two[self.two_index[k] as usize] {
                    report(pid, i, s);
                }
            }
        }
        if self.one_set != [0; 4] {
            for (i, &b) in hay.iter().enumerate() {
                let c = b.to_ascii_lowercase();
                if self.one_set[usize::from(c) / 64] & (1 << (c % 64)) != 0 {
                    for &pid in &self.one[usize::from(c)] {
                        report(pid, i, s);
                    }
                }
            }
        }
        for p in s.set.drain(..) {
            s.seen[p as usize / 64] = 0;
        }
    }

    #[inline(always)]
    fn t4_at(
        &self,
        t4: &Built,
        hay: &[u8],
        i: usize,
        report: &mut impl FnMut(u32, usize, &mut MpmScratch),
        s: &mut MpmScratch,
    ) {
        let w = fold4(load4(hay, i));
        let h = hash(w);
        if t4.hit(h) {
            for &(bw, off, pid) in t4.bucket(h) {
                if bw == u64::from(w)
                    && let Some(start) = i.checked_sub(off as usize)
                {
                    report(pid, start, s);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fold_matches_ascii_lowercase() {
        for x in [
            0u32,
            0x4142_5a5b,
            0x4041_7a7b,
            0xc1c2_dbff,
            0x6160_5f41,
            0xffff_ffff,
            0x805a_4140,
        ] {
            let expect = u32::from_le_bytes(x.to_le_bytes().map(|b| b.to_ascii_lowercase()));
            assert_eq!(fold4(x), expect, "{x:#x}");
        }
        for b in 0..=255u8 {
            let x = u32::from_le_bytes([b, b, b, b]);
            let l = b.to_ascii_lowercase();
            assert_eq!(fold4(x), u32::from_le_bytes([l, l, l, l]), "{b:#x}");
        }
    }

    fn algos() -> Vec<Algo> {
        let mut v = vec![Algo::Fingerprint];
        if Algo::HYPERSCAN_AVAILABLE {
            v.push(Algo::Hyperscan);
        }
        v
    }

    #[test]
    fn finds_owners_once_with_case_rules() {
        for algo in algos() {
            finds_owners(algo);
        }
    }

    fn finds_owners(algo: Algo) {
        let mut b = MpmBuilder::new(algo);
        b.add(b"get", true, 1);
        b.add(b"GET", false, 2);
        b.add(b"Host", false, 3);
        b.add(b"get", true, 4);
        b.add(b"\x00\x01", false, 5);
        b.add(b"user-agent: sqlmap", true, 6);
        let m = b.build().unwrap();
        assert_eq!(m.patterns(), 5);
        let mut s = MpmScratch::default();
        let mut out = Vec::new();
        m.scan(b"get / GET / gEt host", &mut s, &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![1, 2, 4]);
        out.clear();
        m.scan(b"xx Host \x00\x01 User-Agent: SQLMAP/1.0", &mut s, &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![3, 5, 6]);
        out.clear();
        m.scan(b"H", &mut s, &mut out);
        assert!(out.is_empty());
    }

    /// Each matcher against a naive search, on random buffers and patterns.
    #[test]
    fn agrees_with_naive_search() {
        for algo in algos() {
            agrees(algo);
        }
    }

    fn agrees(algo: Algo) {
        let mut seed = 0x2545_f491u32;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let alphabet = b"aAbBcC\x00\xff-/";
        for _ in 0..200 {
            let mut b = MpmBuilder::new(algo);
            let mut pats = Vec::new();
            for id in 0..20u32 {
                let len = 1 + rnd() as usize % 7;
                let p: Vec<u8> = (0..len)
                    .map(|_| alphabet[rnd() as usize % alphabet.len()])
                    .collect();
                let nocase = rnd() % 2 == 0;
                let stored = if nocase {
                    p.to_ascii_lowercase()
                } else {
                    p.clone()
                };
                b.add(&stored, nocase, id);
                pats.push((stored, nocase || !p.iter().any(u8::is_ascii_alphabetic), id));
            }
            let m = b.build().unwrap();
            let hay: Vec<u8> = (0..64)
                .map(|_| alphabet[rnd() as usize % alphabet.len()])
                .collect();
            let mut got = Vec::new();
            m.scan(&hay, &mut MpmScratch::default(), &mut got);
            got.sort_unstable();
            got.dedup();
            let mut want: Vec<u32> = pats
                .iter()
                .filter(|(p, nocase, _)| {
                    hay.windows(p.len()).any(|w| {
                        if *nocase {
                            w.eq_ignore_ascii_case(p)
                        } else {
                            w == p.as_slice()
                        }
                    })
                })
                .map(|(_, _, id)| *id)
                .collect();
            want.sort_unstable();
            want.dedup();
            assert_eq!(got, want);
        }
    }
}
