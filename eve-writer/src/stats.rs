//! Periodic EVE `stats` records, made by the writer from the counter pages that every
//! role keeps in the runtime directory (`counters-capture`, `counters-detect-<n>`,
//! `counters-eve-writer`, ...).
//!
//! Suricata's schema is strict for `stats`: only its own counter names validate. So the
//! totals (`stats.<name>`, summed over all processes) use Suricata's names: Meerkat's
//! counters with a Suricata equivalent are renamed ([`suricata_name`]), counters named
//! like Suricata's already pass, and the rest (eve-writer counters, Meerkat-only detect
//! counters) appear only in the per-process section `stats.threads.<role>`, which an
//! output shows with `types: - stats: {threads: yes}` (as Suricata's per-thread stats,
//! which its schema does not describe either).

use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use std::sync::OnceLock;

use meerkat_proto::events::{Counter, Event, EventType, Stats};
use meerkat_runtime::{Role, layout};
use meerkat_shm::CounterReader;

/// Every integer counter path of Suricata's `stats` record (from its EVE schema;
/// regenerate with `tools/gen-stats-keys.py`).
const SURICATA_STATS_KEYS: &str = include_str!("suricata_stats_keys.txt");

fn suricata_keys() -> &'static HashSet<&'static str> {
    static KEYS: OnceLock<HashSet<&'static str>> = OnceLock::new();
    KEYS.get_or_init(|| {
        SURICATA_STATS_KEYS
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect()
    })
}

/// Meerkat names (after the role prefix) with a different Suricata name.
const RENAMES: &[(&str, &str)] = &[
    ("packets", "decoder.pkts"),
    ("bytes", "decoder.bytes"),
    ("alerts", "detect.alert"),
    ("flows", "flow.total"),
    ("flows_active", "flow.active"),
    ("invalid_checksum", "tcp.invalid_checksum"),
];

/// The Suricata stats name of a detect worker's counter `name` (its `detect.<n>.`
/// prefix removed), if Suricata has one.
pub fn suricata_name(name: &str) -> Option<String> {
    if let Some((_, s)) = RENAMES.iter().find(|(m, _)| *m == name) {
        return Some((*s).to_string());
    }
    // Decoder events: `decoder.ipv4.trunc_pkt` is Suricata's `decoder.event.ipv4.trunc_pkt`
    // (the null/loopback link layer is `ltnull` there).
    if let Some(rest) = name.strip_prefix("decoder.")
        && rest.contains('.')
    {
        let rest = rest
            .strip_prefix("null.")
            .map_or_else(|| rest.to_string(), |r| format!("ltnull.{r}"));
        let s = format!("decoder.event.{rest}");
        if suricata_keys().contains(s.as_str()) {
            return Some(s);
        }
    }
    suricata_keys().contains(name).then(|| name.to_string())
}

/// The prefix stripped from a role's counter names under `threads.<role>`: the detect
/// workers' `detect.N.` and capture's `capture.`. The eve-writer's counters keep their
/// `eve.` (`threads.eve-writer.eve.write_calls`).
fn own_prefix(role: &str) -> Option<String> {
    match role.parse::<Role>().ok()? {
        Role::EveWriter => None,
        r => Some(r.counter_prefix()),
    }
}

/// One process's counters as read from its page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleCounters {
    pub role: String,
    pub started_ns: u64,
    pub counters: Vec<(String, u64)>,
}

/// Reads every counter page of the runtime directory (sorted by role). Pages that
/// cannot be read (being replaced, junk) are skipped.
pub fn read_pages(runtime: &Path) -> Vec<RoleCounters> {
    let Ok(dir) = std::fs::read_dir(runtime) else {
        return Vec::new();
    };
    let mut out: Vec<RoleCounters> = dir
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let role = layout::counters_role(&name)?;
            let reader = CounterReader::open(&e.path()).ok()?;
            Some(RoleCounters {
                role: role.to_string(),
                started_ns: reader.started_ns(),
                counters: reader.iter().map(|(n, v)| (n.to_string(), v)).collect(),
            })
        })
        .collect();
    out.sort_by(|a, b| a.role.cmp(&b.role));
    out
}

/// Builds the `stats` event for `pages` at `now_us` (µs since the epoch).
pub fn stats_event(pages: &[RoleCounters], now_us: i64) -> Event {
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let mut counters = Vec::new();
    for page in pages {
        let prefix = own_prefix(&page.role);
        let detect = matches!(page.role.parse(), Ok(Role::Detect(_)));
        for (name, value) in &page.counters {
            let own = prefix
                .as_deref()
                .and_then(|p| name.strip_prefix(p))
                .unwrap_or(name);
            if detect && let Some(s) = suricata_name(own) {
                *totals.entry(s).or_insert(0) += value;
            } else if !detect && suricata_keys().contains(name.as_str()) {
                *totals.entry(name.clone()).or_insert(0) += value;
            }
            counters.push(Counter {
                name: format!("threads.{}.{own}", page.role),
                value: *value,
            });
        }
    }
    if let (Some(&pkts), Some(&bytes)) = (totals.get("decoder.pkts"), totals.get("decoder.bytes"))
        && pkts > 0
    {
        totals.insert("decoder.avg_pkt_size".to_string(), bytes / pkts);
    }
    counters.extend(
        totals
            .into_iter()
            .map(|(name, value)| Counter { name, value }),
    );
    let now_ns = u64::try_from(now_us).unwrap_or(0).saturating_mul(1000);
    let started = pages
        .iter()
        .map(|p| p.started_ns)
        .filter(|&s| s > 0 && s <= now_ns)
        .min()
        .unwrap_or(now_ns);
    Event {
        event_type: EventType::Stats as i32,
        timestamp_us: now_us,
        stats: Some(Stats {
            uptime_s: (now_ns - started) / 1_000_000_000,
            counters,
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{RenderOptions, render};

    pub(crate) fn pages() -> Vec<RoleCounters> {
        let c = |v: &[(&str, u64)]| v.iter().map(|(n, x)| (n.to_string(), *x)).collect();
        vec![
            RoleCounters {
                role: "capture".to_string(),
                started_ns: 1_000_000_000_000_000,
                counters: c(&[("capture.packets", 30), ("capture.kernel_drops", 2)]),
            },
            RoleCounters {
                role: "detect-0".to_string(),
                started_ns: 1_000_000_000_000_000,
                counters: c(&[
                    ("detect.0.packets", 10),
                    ("detect.0.bytes", 1000),
                    ("detect.0.alerts", 1),
                    ("detect.0.ring_corrupt", 0),
                    ("detect.0.decoder.ipv4.trunc_pkt", 4),
                    ("detect.0.decoder.null.pkt_too_small", 1),
                    ("detect.0.decoder.ipv6.exthdr_too_many", 9),
                ]),
            },
            RoleCounters {
                role: "detect-1".to_string(),
                started_ns: 1_000_000_500_000_000,
                counters: c(&[("detect.1.packets", 20), ("detect.1.bytes", 3000)]),
            },
            RoleCounters {
                role: "eve-writer".to_string(),
                started_ns: 1_000_000_000_000_000,
                counters: c(&[("eve.write_calls", 7)]),
            },
        ]
    }

    #[test]
    fn maps_onto_suricata_names() {
        assert_eq!(suricata_name("packets").as_deref(), Some("decoder.pkts"));
        assert_eq!(
            suricata_name("decoder.ipv4.trunc_pkt").as_deref(),
            Some("decoder.event.ipv4.trunc_pkt")
        );
        assert_eq!(
            suricata_name("decoder.null.pkt_too_small").as_deref(),
            Some("decoder.event.ltnull.pkt_too_small")
        );
        assert_eq!(suricata_name("decoder.ipv6.exthdr_too_many"), None);
        assert_eq!(suricata_name("tcp.syn").as_deref(), Some("tcp.syn"));
        assert_eq!(suricata_name("ring_corrupt"), None);
    }

    #[test]
    fn totals_and_threads() {
        let ev = stats_event(&pages(), 1_000_010_000_000);
        let mut b = Vec::new();
        let opts = RenderOptions {
            stats_totals: true,
            stats_threads: true,
            ..Default::default()
        };
        render(&mut b, &ev, &opts);
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        let s = &v["stats"];
        assert_eq!(s["uptime"], 10);
        assert_eq!(s["decoder"]["pkts"], 30);
        assert_eq!(s["decoder"]["bytes"], 4000);
        assert_eq!(s["decoder"]["avg_pkt_size"], 133);
        assert_eq!(s["decoder"]["event"]["ipv4"]["trunc_pkt"], 4);
        assert_eq!(s["decoder"]["event"]["ltnull"]["pkt_too_small"], 1);
        assert_eq!(s["detect"]["alert"], 1);
        assert_eq!(s["capture"]["kernel_drops"], 2);
        assert!(s["capture"].get("packets").is_none());
        assert_eq!(s["threads"]["detect-0"]["ring_corrupt"], 0);
        assert_eq!(
            s["threads"]["detect-0"]["decoder"]["ipv6"]["exthdr_too_many"],
            9
        );
        assert_eq!(s["threads"]["eve-writer"]["eve"]["write_calls"], 7);
        assert_eq!(s["threads"]["capture"]["packets"], 30);
    }

    #[test]
    fn reads_pages_from_a_runtime_dir() {
        let dir = tempfile::tempdir().unwrap();
        let names = vec![
            "detect.0.packets".to_string(),
            "detect.0.alerts".to_string(),
        ];
        let page = meerkat_shm::CounterPage::create(&dir.path().join("counters-detect-0"), &names)
            .unwrap();
        page.expect("detect.0.packets").set(5);
        std::fs::write(dir.path().join("counters-junk"), b"nope").unwrap();
        std::fs::write(dir.path().join("ring-0"), b"not a page").unwrap();
        let pages = read_pages(dir.path());
        assert_eq!(pages.len(), 1);
        assert_eq!(pages[0].role, "detect-0");
        assert_eq!(pages[0].counters[0], ("detect.0.packets".to_string(), 5));
    }
}
