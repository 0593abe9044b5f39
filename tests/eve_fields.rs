//! EVE field paths as Suricata 8 writes them, on a sample of the public corpus: for each
//! event type both write in a test, the field paths of Meerkat's records
//! (`flow.tx_cnt`, `dns.answers[].rrname`, ...) must be those of the reference's
//! (`suricata-8.0.6-eve.json`), but for the differences listed in
//! `tests/data/eve-fields-known.txt` (each with the feature it waits for). A path that
//! goes missing, or one Suricata does not write, fails the test; every line is also
//! validated against Suricata's EVE schema. Skips when `../shared` is absent.
//! About 15 small pcaps: a few seconds.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use common::{assert_schema_valid, eve, run_in, shared, stderr};

/// The sample: flows (TCP with and without a session, ICMP), alerts with transaction
/// progress, http with files, dns with grouped answers, tls with ALPN and SANs, per
/// direction protocols, gaps and exception policies.
const SAMPLE: &[&str] = &[
    "uricontent/detect-uricontent-05",
    "dns/dns-answer-name",
    "dns/dns-ptr",
    "detect-bypass",
    "http-evader/http-evader-266",
    "proto-mismatch-http-ssh",
    "http-gap-simple-frames",
    "tls/tls-random",
    "tls/tls-fingerprint-alert",
    "tcp-empty-sack",
    "ssh-banner-only",
    "threshold/detection_filter-rule-flow",
    "bug-1401-02",
    "mqtt-events-missing-connect",
];

/// Event types Meerkat writes (the paths of others are not compared).
const TYPES: &[&str] = &[
    "alert", "anomaly", "flow", "http", "dns", "tls", "stats", "fileinfo", "mqtt",
];

fn paths(v: &serde_json::Value, prefix: &str, out: &mut BTreeSet<String>) {
    match v {
        serde_json::Value::Object(m) => {
            for (k, x) in m {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                out.insert(p.clone());
                paths(x, &p, out);
            }
        }
        serde_json::Value::Array(a) => {
            for x in a {
                if x.is_object() {
                    paths(x, &format!("{prefix}[]"), out);
                }
            }
        }
        _ => {}
    }
}

/// Field paths per event type (the top-level `event_type` and `timestamp` aside).
fn by_type(events: &[serde_json::Value]) -> BTreeMap<String, BTreeSet<String>> {
    let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in events {
        let Some(t) = e["event_type"].as_str() else {
            continue;
        };
        if !TYPES.contains(&t) {
            continue;
        }
        paths(e, "", m.entry(t.to_string()).or_default());
    }
    m
}

/// `(test, type, path, "missing" | "extra")` lines of the known differences.
fn known() -> BTreeSet<(String, String, String, String)> {
    let text = include_str!("data/eve-fields-known.txt");
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").trim())
        .filter(|l| !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            assert_eq!(f.len(), 4, "bad line in eve-fields-known.txt: {l}");
            (
                f[0].to_string(),
                f[1].to_string(),
                f[2].to_string(),
                f[3].to_string(),
            )
        })
        .collect()
}

/// The command line verify-corpus gives the engine for a test: `-k none` and the
/// `--set` overrides of its manifest entry.
fn test_args(entry: &serde_json::Value, dir: &Path) -> Vec<String> {
    let mut a = Vec::new();
    if entry["config"]["checksum_none"] == true {
        a.push("-k".to_string());
        a.push("none".to_string());
    }
    if let Some(sets) = entry["config"]["sets"].as_array() {
        for s in sets {
            a.push("--set".to_string());
            a.push(
                s.as_str()
                    .unwrap()
                    .replace("${TEST_DIR}", dir.to_str().unwrap()),
            );
        }
    }
    a
}

#[test]
fn eve_field_paths_match_the_reference_on_a_corpus_sample() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(set.join("manifest.json")).unwrap()).unwrap();
    let entries: BTreeMap<&str, &serde_json::Value> = manifest["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t))
        .collect();
    let known = known();
    let mut seen = BTreeSet::new();
    let mut unexpected = Vec::new();
    for &name in SAMPLE {
        let entry = entries
            .get(name)
            .unwrap_or_else(|| panic!("{name} is not in the corpus manifest"));
        let dir = set.join(name);
        let logs = tempfile::tempdir().unwrap();
        let pcap = set.join(entry["pcap"].as_str().unwrap());
        let rules = set.join(entry["rules_file"].as_str().unwrap());
        let mut args: Vec<String> = [
            "run",
            "-q",
            "-r",
            pcap.to_str().unwrap(),
            "-S",
            rules.to_str().unwrap(),
            "-l",
            logs.path().to_str().unwrap(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        args.extend(test_args(entry, &dir));
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = run_in(&dir, &argv);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let ours = eve(&logs.path().join("eve.json"));
        assert_schema_valid(&ours);
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        let (ours, reference) = (by_type(&ours), by_type(&reference));
        for (t, want) in &reference {
            let Some(got) = ours.get(t) else { continue };
            for (paths, what) in [(want - got, "missing"), (got - want, "extra")] {
                for p in paths {
                    let k = (name.to_string(), t.clone(), p, what.to_string());
                    if known.contains(&k) {
                        seen.insert(k);
                    } else {
                        unexpected.push(format!("{} {} {} {}", k.0, k.1, k.2, k.3));
                    }
                }
            }
        }
    }
    assert!(
        unexpected.is_empty(),
        "EVE field paths that differ from the reference's and are not listed in \
         tests/data/eve-fields-known.txt:\n{}",
        unexpected.join("\n")
    );
    // A listed difference that went away: the list must shrink with it.
    let gone: Vec<String> = known
        .difference(&seen)
        .map(|k| format!("{} {} {} {}", k.0, k.1, k.2, k.3))
        .collect();
    assert!(
        gone.is_empty(),
        "listed in tests/data/eve-fields-known.txt but no longer different (remove them):\n{}",
        gone.join("\n")
    );
}
