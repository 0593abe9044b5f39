//! The `stats` record body: dotted counter names become nested objects
//! (`decoder.pkts` -> `"decoder":{"pkts":..}`), after `uptime`.
//!
//! Names under `threads.` are the per-process counters (`types: - stats: {threads: yes}`),
//! the others the totals (`totals: yes`, the default); each output picks what it logs.
//! A name that is both a value and a parent of other names (`a.b` and `a.b.c`) would
//! make a key appear twice; the value is left out so that the object stays valid.

use meerkat_proto::events::Event;

use super::{RenderOptions, push_u64};
use crate::json::{self, Obj};

const THREADS: &str = "threads.";

pub fn body(o: &mut Obj<'_>, ev: &Event, opts: &RenderOptions) {
    let Some(s) = &ev.stats else { return };
    o.raw("stats", |b| {
        // Stats records come every `stats.interval` seconds: sorting here is cheap.
        let mut sorted: Vec<(&str, u64)> = s
            .counters
            .iter()
            .map(|c| (c.name.as_str(), c.value))
            .filter(|(n, _)| {
                if n.starts_with(THREADS) {
                    opts.stats_threads
                } else {
                    opts.stats_totals
                }
            })
            .filter(|(n, _)| !n.is_empty() && !n.split('.').any(str::is_empty))
            .collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        sorted.dedup_by(|a, b| a.0 == b.0);
        b.extend_from_slice(b"{\"uptime\":");
        push_u64(b, s.uptime_s);
        let mut need_comma = true;
        let mut open: Vec<&str> = Vec::new();
        for (i, &(name, value)) in sorted.iter().enumerate() {
            if name == "uptime" {
                continue;
            }
            if let Some((next, _)) = sorted.get(i + 1)
                && next.len() > name.len()
                && next.starts_with(name)
                && next.as_bytes()[name.len()] == b'.'
            {
                continue;
            }
            let mut parts = name.split('.');
            let Some(leaf) = parts.next_back() else {
                continue;
            };
            let path: Vec<&str> = parts.collect();
            let common = open.iter().zip(&path).take_while(|(a, b)| a == b).count();
            for _ in common..open.len() {
                b.push(b'}');
                need_comma = true;
            }
            open.truncate(common);
            for seg in &path[common..] {
                if need_comma {
                    b.push(b',');
                }
                json::string(b, seg);
                b.extend_from_slice(b":{");
                open.push(seg);
                need_comma = false;
            }
            if need_comma {
                b.push(b',');
            }
            json::string(b, leaf);
            b.push(b':');
            push_u64(b, value);
            need_comma = true;
        }
        for _ in 0..open.len() {
            b.push(b'}');
        }
        b.push(b'}');
    });
}

#[cfg(test)]
mod tests {
    use super::super::render;
    use super::*;
    use meerkat_proto::events::{Counter, EventType, Stats};

    fn stats_event(names: &[(&str, u64)]) -> Event {
        Event {
            event_type: EventType::Stats as i32,
            timestamp_us: 0,
            stats: Some(Stats {
                uptime_s: 5,
                counters: names
                    .iter()
                    .map(|(n, v)| Counter {
                        name: n.to_string(),
                        value: *v,
                    })
                    .collect(),
            }),
            ..Default::default()
        }
    }

    fn rendered(ev: &Event, totals: bool, threads: bool) -> serde_json::Value {
        let mut b = Vec::new();
        let opts = RenderOptions {
            stats_totals: totals,
            stats_threads: threads,
            ..Default::default()
        };
        render(&mut b, ev, &opts);
        serde_json::from_slice(&b).unwrap()
    }

    #[test]
    fn nests_sorted_names() {
        let ev = stats_event(&[
            ("decoder.pkts", 10),
            ("capture.kernel_drops", 1),
            ("decoder.bytes", 99),
            ("flow.memuse", 3),
            ("decoder.event.ipv4.trunc_pkt", 2),
        ]);
        assert_eq!(
            rendered(&ev, true, false)["stats"],
            serde_json::json!({"uptime": 5, "capture": {"kernel_drops": 1},
                "decoder": {"bytes": 99, "event": {"ipv4": {"trunc_pkt": 2}}, "pkts": 10},
                "flow": {"memuse": 3}})
        );
    }

    #[test]
    fn totals_and_threads_are_chosen_per_output() {
        let ev = stats_event(&[
            ("decoder.pkts", 10),
            ("threads.detect-0.packets", 10),
            ("threads.eve-writer.eve.write_calls", 4),
        ]);
        assert_eq!(
            rendered(&ev, true, false)["stats"],
            serde_json::json!({"uptime": 5, "decoder": {"pkts": 10}})
        );
        assert_eq!(
            rendered(&ev, false, true)["stats"],
            serde_json::json!({"uptime": 5, "threads": {"detect-0": {"packets": 10},
                "eve-writer": {"eve": {"write_calls": 4}}}})
        );
    }

    #[test]
    fn collisions_and_bad_names_keep_json_valid() {
        let ev = stats_event(&[
            ("a.b", 1),
            ("a.b.c", 2),
            ("a.b", 3),
            ("x..y", 4),
            (".z", 5),
            ("uptime", 6),
            ("we\"ird.k", 7),
        ]);
        assert_eq!(
            rendered(&ev, true, false)["stats"],
            serde_json::json!({"uptime": 5, "a": {"b": {"c": 2}}, "we\"ird": {"k": 7}})
        );
    }
}
