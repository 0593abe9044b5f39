//! The rule engine: which loaded rules match a decoded packet.
//!
//! This first engine evaluates every rule's header (protocol, addresses, ports,
//! direction) and then its `content` matches against the packet payload. The
//! prefiltered engine (rule groups and a multi-pattern search over fast patterns) replaces
//! the loop without changing the interface.

use memchr::memmem;

use crate::decode::Packet;
use crate::rules::{Content, Direction, Rule};

/// A compiled rule: the rule and its searchers.
#[derive(Debug)]
struct Compiled {
    rule: Rule,
    finders: Vec<memmem::Finder<'static>>,
}

/// The loaded ruleset, ready to match.
#[derive(Debug, Default)]
pub struct Engine {
    rules: Vec<Compiled>,
}

/// ASCII case-insensitive search of a lowercase `needle`.
fn find_nocase(hay: &[u8], needle: &[u8]) -> bool {
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    if hay.len() < needle.len() {
        return false;
    }
    let upper = first.to_ascii_uppercase();
    let last_start = hay.len() - needle.len();
    let mut from = 0;
    while from <= last_start {
        let Some(i) = memchr::memchr2(first, upper, &hay[from..=last_start]) else {
            return false;
        };
        let at = from + i;
        if hay[at + 1..at + needle.len()]
            .iter()
            .zip(rest)
            .all(|(h, n)| h.to_ascii_lowercase() == *n)
        {
            return true;
        }
        from = at + 1;
    }
    false
}

impl Engine {
    pub fn new(rules: Vec<Rule>) -> Engine {
        let rules = rules
            .into_iter()
            .map(|rule| {
                let finders = rule
                    .contents
                    .iter()
                    .map(|c| memmem::Finder::new(&c.pattern).into_owned())
                    .collect();
                Compiled { rule, finders }
            })
            .collect();
        Engine { rules }
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Calls `on_match` for every rule that matches `p`, in load order.
    pub fn inspect<'e>(&'e self, p: &Packet<'_>, mut on_match: impl FnMut(&'e Rule)) {
        let Some(ip) = p.ip else {
            return;
        };
        let (sp, dp) = p.ports();
        for c in &self.rules {
            let r = &c.rule;
            if !r.proto.matches(ip.proto) {
                continue;
            }
            let fwd = r.src.matches(&ip.src)
                && r.dst.matches(&ip.dst)
                && r.sport.matches(sp)
                && r.dport.matches(dp);
            let ok = fwd
                || (r.direction == Direction::Both
                    && r.src.matches(&ip.dst)
                    && r.dst.matches(&ip.src)
                    && r.sport.matches(dp)
                    && r.dport.matches(sp));
            if !ok {
                continue;
            }
            if !r.contents.is_empty() {
                if p.payload.is_empty() {
                    continue;
                }
                let all = r
                    .contents
                    .iter()
                    .zip(&c.finders)
                    .all(|(content, f): (&Content, _)| {
                        let found = if content.nocase {
                            find_nocase(p.payload, &content.pattern)
                        } else {
                            f.find(p.payload).is_some()
                        };
                        found != content.negated
                    });
                if !all {
                    continue;
                }
            }
            on_match(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::{LINKTYPE_RAW, decode};
    use crate::rules::{load_str, tests_ctx};
    use meerkat_synth::packet;
    use std::net::IpAddr;

    fn udp(src: &str, dst: &str, sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
        let s: IpAddr = src.parse().unwrap();
        let d: IpAddr = dst.parse().unwrap();
        packet::ip(s, d, 17, 64, 1, &packet::udp(s, d, sp, dp, payload))
    }

    fn sids(rules: &str, frame: &[u8]) -> Vec<u64> {
        let l = load_str(rules, &tests_ctx());
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        let e = Engine::new(l.rules);
        let (p, ev) = decode(LINKTYPE_RAW, frame);
        assert!(ev.is_none());
        let mut out = Vec::new();
        e.inspect(&p, |r| out.push(r.sid));
        out
    }

    #[test]
    fn header_and_content() {
        let rules = "alert udp 10.0.0.0/8 any -> any 53 (content:\"EVIL\"; nocase; sid:1;)\n\
                     alert udp any any -> any 53 (content:\"evil\"; sid:2;)\n\
                     alert udp any any <> 10.0.0.1 any (content:!\"good\"; sid:3;)\n\
                     alert tcp any any -> any any (sid:4;)\n\
                     alert ip any any -> any any (sid:5;)\n";
        assert_eq!(
            sids(rules, &udp("10.0.0.1", "9.9.9.9", 999, 53, b"xxEvIlxx")),
            vec![1, 3, 5]
        );
        assert_eq!(
            sids(rules, &udp("9.9.9.9", "10.0.0.1", 53, 999, b"evil")),
            vec![3, 5]
        );
        assert_eq!(
            sids(rules, &udp("10.0.0.1", "9.9.9.9", 999, 53, b"good evil")),
            vec![1, 2, 5]
        );
    }

    #[test]
    fn nocase_search() {
        assert!(find_nocase(b"abcDEF", b"cdef"));
        assert!(find_nocase(b"CDEF", b"cdef"));
        assert!(!find_nocase(b"CDE", b"cdef"));
        assert!(!find_nocase(b"cdeg cdex", b"cdef"));
        assert!(find_nocase(b"cdcdef", b"cdef"));
    }
}
