//! The prefilter: one multi-pattern search over the fast patterns of a group of rules.
//!
//! Each rule contributes one pattern (its fast pattern); a scan of a buffer yields the
//! rules whose pattern occurs in it, and only those are evaluated in full. Patterns are
//! searched case-insensitively in one pass (the automaton folds ASCII case itself, so the
//! buffer is not lowercased per pattern); case-sensitive patterns are then confirmed on
//! the original bytes at the match position.
//!
//! Matcher: the `aho-corasick` crate (pure Rust). With the `hyperscan` cargo feature and the
//! system's libhs, Hyperscan is used instead (see `hs.rs`).

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// Patterns with their owners, before building.
#[derive(Debug, Default)]
pub struct MpmBuilder {
    patterns: Vec<(Vec<u8>, bool)>,
    owners: Vec<Vec<u32>>,
    index: HashMap<(Vec<u8>, bool), usize>,
}

impl MpmBuilder {
    /// Adds `rule`'s fast pattern (lowercased already when `nocase`).
    pub fn add(&mut self, bytes: &[u8], nocase: bool, rule: u32) {
        let key = (bytes.to_vec(), nocase);
        let i = *self.index.entry(key.clone()).or_insert_with(|| {
            self.patterns.push(key);
            self.owners.push(Vec::new());
            self.patterns.len() - 1
        });
        self.owners[i].push(rule);
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    pub fn build(self) -> Option<Mpm> {
        if self.patterns.is_empty() {
            return None;
        }
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(self.patterns.iter().map(|(p, _)| p.as_slice()))
            .ok()?;
        let verify = self
            .patterns
            .iter()
            .map(|(p, nocase)| {
                if *nocase || !p.iter().any(u8::is_ascii_alphabetic) {
                    None
                } else {
                    Some(p.clone())
                }
            })
            .collect();
        Some(Mpm {
            ac,
            verify,
            owners: self.owners,
        })
    }
}

/// A built prefilter.
#[derive(Debug)]
pub struct Mpm {
    ac: AhoCorasick,
    /// Per pattern: the exact bytes to confirm, for case-sensitive patterns with letters.
    verify: Vec<Option<Vec<u8>>>,
    owners: Vec<Vec<u32>>,
}

/// Reusable per-scan state: which patterns were already reported.
#[derive(Debug, Default)]
pub struct MpmScratch {
    seen: Vec<u64>,
    set: Vec<u32>,
}

impl Mpm {
    pub fn patterns(&self) -> usize {
        self.owners.len()
    }

    /// Appends to `out` the rules whose pattern occurs in `hay` (each rule at most once
    /// per pattern; a rule id may repeat if several of its lists are scanned).
    pub fn scan(&self, hay: &[u8], s: &mut MpmScratch, out: &mut Vec<u32>) {
        if hay.is_empty() {
            return;
        }
        let words = self.owners.len().div_ceil(64);
        if s.seen.len() < words {
            s.seen.resize(words, 0);
        }
        for m in self.ac.find_overlapping_iter(hay) {
            let p = m.pattern().as_usize();
            let (w, bit) = (p / 64, 1u64 << (p % 64));
            if s.seen[w] & bit != 0 {
                continue;
            }
            if let Some(exact) = &self.verify[p]
                && &hay[m.start()..m.end()] != exact.as_slice()
            {
                // Another occurrence may still match exactly: do not mark as seen.
                continue;
            }
            s.seen[w] |= bit;
            s.set.push(p as u32);
            out.extend_from_slice(&self.owners[p]);
        }
        for p in s.set.drain(..) {
            s.seen[p as usize / 64] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_owners_once_with_case_rules() {
        let mut b = MpmBuilder::default();
        b.add(b"get", true, 1);
        b.add(b"GET", false, 2);
        b.add(b"Host", false, 3);
        b.add(b"get", true, 4);
        let m = b.build().unwrap();
        assert_eq!(m.patterns(), 3);
        let mut s = MpmScratch::default();
        let mut out = Vec::new();
        m.scan(b"get / GET / gEt host", &mut s, &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![1, 2, 4]);
        out.clear();
        m.scan(b"xx Host", &mut s, &mut out);
        assert_eq!(out, vec![3]);
    }
}
