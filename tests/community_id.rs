//! `outputs.eve-log.community-id` against the reference: on `tests/data/community-id.pcap`
//! (`community_id_pcap.py`: TCP with HTTP, UDP DNS, an ICMP echo and its reply, an ICMP
//! timestamp request with no reply, ICMPv6, IPv6 UDP, a flow between one address and
//! itself) every record of every flow must carry the `community_id` Suricata 8.0.6 wrote
//! for it, with seed 0 and with seed 1 (`tests/data/community-id.ref.json`, kept from the
//! reference's EVE). Records without a flow carry none, and with the option off no record
//! carries one. When the reference engine is at hand it is run as well, and what it
//! writes must still be that file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use common::{run_pcap, run_reference};
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// A record's flow tuple as the reference file keys it, with its event type.
fn key(e: &Value) -> String {
    format!(
        "{} {} {}:{} -> {}:{} {} icmp={}",
        e["event_type"].as_str().unwrap(),
        e["proto"].as_str().unwrap(),
        e["src_ip"].as_str().unwrap(),
        e["src_port"],
        e["dest_ip"].as_str().unwrap(),
        e["dest_port"],
        e["icmp_type"],
        e["proto"],
    )
}

/// The community ids per record key of the reference file, for one seed.
fn expected(seed: u64) -> BTreeMap<String, String> {
    std::fs::read_to_string(data("community-id.ref.json"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|r| r["seed"] == seed)
        // Records without a flow (the router's time-exceeded report) have no id.
        .filter_map(|r| Some((key(&r), r["community_id"].as_str()?.to_string())))
        .collect()
}

/// The community ids per record key of an EVE run (each key has one value).
fn written(events: &[Value]) -> BTreeMap<String, String> {
    let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for e in events {
        if e["event_type"] == "stats" {
            continue;
        }
        let id = e["community_id"].as_str();
        assert_eq!(
            id.is_some(),
            e.get("flow_id").is_some(),
            "a record has a community_id exactly when it has a flow: {e}"
        );
        if let Some(id) = id {
            out.entry(key(e)).or_default().insert(id.to_string());
        }
    }
    out.into_iter()
        .map(|(k, v)| {
            assert_eq!(v.len(), 1, "{k}: {v:?}");
            (k, v.into_iter().next().unwrap())
        })
        .collect()
}

fn seed_args(seed: u64) -> Vec<String> {
    vec![
        "-k".into(),
        "none".into(),
        "--set".into(),
        "outputs.eve-log.community-id=yes".into(),
        "--set".into(),
        format!("outputs.eve-log.community-id-seed={seed}"),
    ]
}

#[test]
fn every_flow_record_carries_the_references_community_id() {
    let dir = tempfile::tempdir().unwrap();
    for seed in [0, 1] {
        let want = expected(seed);
        assert!(want.len() > 20, "{want:?}");
        let args = seed_args(seed);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let ours = written(&run_pcap(
            dir.path(),
            &data("community-id.pcap"),
            &data("community-id.rules"),
            &args,
        ));
        // Every flow's id is the reference's, on every record type both write.
        for (k, id) in &want {
            if let Some(ours) = ours.get(k) {
                assert_eq!(ours, id, "seed {seed}: {k}");
            }
        }
        let ids = |m: &BTreeMap<String, String>| m.values().cloned().collect::<BTreeSet<_>>();
        assert_eq!(ids(&ours), ids(&want), "seed {seed}: the flows' ids");
        let common = want.keys().filter(|k| ours.contains_key(*k)).count();
        assert!(common * 10 >= want.len() * 9, "seed {seed}: {ours:#?}");
    }
}

#[test]
fn no_community_id_unless_configured() {
    let dir = tempfile::tempdir().unwrap();
    let events = run_pcap(
        dir.path(),
        &data("community-id.pcap"),
        &data("community-id.rules"),
        &["-k", "none"],
    );
    assert!(events.len() > 20);
    assert!(events.iter().all(|e| e.get("community_id").is_none()));
}

#[test]
fn the_reference_still_writes_the_stored_ids() {
    for seed in [0, 1] {
        let cfg = format!("outputs.1.eve-log.community-id-seed={seed}");
        let Some(events) = run_reference(
            &data("community-id.pcap"),
            &data("community-id.rules"),
            &[
                "-k",
                "none",
                "--set",
                "outputs.1.eve-log.community-id=true",
                "--set",
                &cfg,
            ],
        ) else {
            return;
        };
        assert_eq!(written(&events), expected(seed), "seed {seed}");
    }
}

/// ICMP flows as Suricata keys them (checked against the reference's EVE of this pcap):
/// a timestamp request is a flow of its own beside the echo between the same hosts; a
/// port-unreachable report is counted in the UDP flow it reports on, without making it
/// established or being its first packet toward the client (no `ip` rule alert); a
/// router's time-exceeded report belongs to no flow.
#[test]
fn icmp_flows_are_keyed_by_type_and_reports_join_the_reported_flow() {
    let dir = tempfile::tempdir().unwrap();
    let events = run_pcap(
        dir.path(),
        &data("community-id.pcap"),
        &data("community-id.rules"),
        &["-k", "none"],
    );
    let flows: Vec<&Value> = events
        .iter()
        .filter(|e| e["event_type"] == "flow" && e["src_ip"] == "10.0.0.9")
        .collect();
    let mut types: Vec<u64> = flows
        .iter()
        .map(|f| f["icmp_type"].as_u64().unwrap())
        .collect();
    types.sort();
    assert_eq!(types, [8, 13], "{flows:?}");
    let udp = events
        .iter()
        .find(|e| e["event_type"] == "flow" && e["dest_port"] == 9999)
        .unwrap();
    assert_eq!(udp["flow"]["pkts_toclient"], 1, "{udp}");
    assert_eq!(udp["flow"]["state"], "new", "{udp}");
    let icmp_alerts: Vec<&Value> = events
        .iter()
        .filter(|e| {
            e["event_type"] == "alert" && e["dest_ip"] == "10.0.0.7" && e["proto"] == "ICMP"
        })
        .collect();
    assert_eq!(icmp_alerts.len(), 1, "{icmp_alerts:?}");
    assert_eq!(icmp_alerts[0]["icmp_type"], 11);
    assert!(
        icmp_alerts[0].get("flow_id").is_none(),
        "{}",
        icmp_alerts[0]
    );
}
