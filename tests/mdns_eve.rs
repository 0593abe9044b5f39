//! mDNS against the reference (Suricata 8.0.6): the `mdns` records Meerkat writes and
//! its alerts per signature must be the reference's, on the corpus test `mdns` (skipped
//! when `../shared` is absent) and on `tests/data/mdns-crafted.pcap` (made by
//! `tests/data/mdns_crafted_pcap.py`; the reference's records and alerts beside it):
//! every record type mDNS logs, a unicast reply written server -> client, `requires:`,
//! and like-IP-only rules (ports, no payload) that alert once per flow direction.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use common::{assert_schema_valid, eve, run_pcap, shared};

fn mdns_records(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter(|e| e["event_type"] == "mdns")
        .map(|e| e["mdns"].clone())
        .collect()
}

/// Meerkat's events on `pcap`; with `schema`, each checked against Suricata's EVE
/// schema (which lacks some record keys of mDNS answers the reference writes, such as
/// `a` and `hinfo`).
fn run(
    dir: &std::path::Path,
    pcap: &std::path::Path,
    rules: &std::path::Path,
    schema: bool,
) -> Vec<serde_json::Value> {
    let ours = run_pcap(dir, pcap, rules, &["-k", "none"]);
    if schema {
        assert_schema_valid(&ours);
    }
    ours
}

#[test]
fn corpus_mdns_records_and_alerts_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/mdns");
    let pcap =
        shared.join("corpus/suricata-verify/ipv6-evasion/ipv6-malformed-fragments-9/frag-9.pcap");
    let ours = run(&dir, &pcap, &dir.join("test.rules"), true);
    let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
    assert_eq!(mdns_records(&ours), mdns_records(&reference));
    let alerts = |ev: &[serde_json::Value]| {
        let mut m: BTreeMap<u64, Vec<serde_json::Value>> = BTreeMap::new();
        for e in ev.iter().filter(|e| e["event_type"] == "alert") {
            m.entry(e["alert"]["signature_id"].as_u64().unwrap())
                .or_default()
                .push(e["mdns"].clone());
        }
        m
    };
    // The same signatures, each with the same `mdns` object (sids 11-13 need
    // `requires: version >= 8.0.5`).
    assert_eq!(alerts(&ours), alerts(&reference));
}

#[test]
fn crafted_mdns_is_as_the_reference() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data.join("mdns-crafted.mdns.json")).unwrap(),
    )
    .unwrap();
    let ours = run(
        &data,
        &data.join("mdns-crafted.pcap"),
        &data.join("mdns-crafted.rules"),
        false,
    );
    let records: Vec<serde_json::Value> = ours
        .iter()
        .filter(|e| e["event_type"] == "mdns")
        .map(|e| {
            serde_json::json!({
                "pcap_cnt": e["pcap_cnt"],
                "src_port": e["src_port"],
                "dest_port": e["dest_port"],
                "mdns": e["mdns"],
            })
        })
        .collect();
    // Flows go to two workers: the EVE file interleaves them in no set order.
    let mut records = records;
    records.sort_by_key(|r| r["pcap_cnt"].as_u64());
    let mut want_records = want["mdns"].as_array().cloned().unwrap_or_default();
    want_records.sort_by_key(|r| r["pcap_cnt"].as_u64());
    assert_eq!(records, want_records);
    let mut alerts: Vec<(u64, u64)> = ours
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| {
            (
                e["pcap_cnt"].as_u64().unwrap_or(0),
                e["alert"]["signature_id"].as_u64().unwrap(),
            )
        })
        .collect();
    alerts.sort_unstable();
    let want_alerts: Vec<(u64, u64)> = serde_json::from_value(want["alerts"].clone()).unwrap();
    assert_eq!(alerts, want_alerts);
}
