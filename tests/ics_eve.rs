//! Modbus/TCP and EtherNet/IP against the reference. On the corpus pcaps (`modbus`,
//! `enip-keywords-suricata8`, `enip-frames`, run with their tests' settings), the
//! alerts per signature must be the reference's (`suricata-8.0.6-eve.json`) and so
//! must the records: the `modbus` and `enip` records of the Modbus and ENIP keyword
//! pcaps are beside this test (`tests/data/modbus.modbus.json`, `enip.enip.json`,
//! written by `../shared/tools/suricata-ref -k none` with both protocols enabled and
//! logged), and those the enip tests' alerts carry are compared there too. Skips when
//! `../shared` is absent. The second test, on `tests/data/ics.pcap` (made by
//! `tests/data/ics_pcap.py`: every Modbus function, exceptions and bad messages, ENIP
//! commands, CIP errors and a Multiple Service Packet, ENIP over UDP), compares the
//! records with the reference's beside it. Records are compared as multisets: flows
//! end in another order. Small pcaps: about a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_schema_valid, eve, run_in, shared, stderr};

fn records(events: &[serde_json::Value], kind: &str) -> Vec<String> {
    let mut v: Vec<String> = events
        .iter()
        .filter(|e| e["event_type"] == kind)
        .map(|e| e[kind].to_string())
        .collect();
    v.sort();
    v
}

/// (signature, transaction, the app object, direction) of every alert, sorted.
fn alerts(events: &[serde_json::Value], kind: &str) -> Vec<String> {
    let mut v: Vec<String> = events
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| {
            serde_json::json!([
                e["alert"]["signature_id"],
                e["tx_id"],
                e[kind],
                e["direction"]
            ])
            .to_string()
        })
        .collect();
    v.sort();
    v
}

fn alert_counts(events: &[serde_json::Value]) -> BTreeMap<u64, usize> {
    let mut m = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == "alert") {
        *m.entry(e["alert"]["signature_id"].as_u64().unwrap())
            .or_default() += 1;
    }
    m
}

fn want(file: &str) -> Vec<String> {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let v: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(data.join(file)).unwrap()).unwrap();
    let mut v: Vec<String> = v.iter().map(|r| r.to_string()).collect();
    v.sort();
    v
}

/// Runs Meerkat; `schema`: check the events against Suricata's EVE schema (which
/// wants a multiple write request's `data` to be a number: Suricata writes it as a
/// string, as Meerkat does).
fn run(
    dir: &Path,
    pcap: &Path,
    rules: Option<&Path>,
    sets: &[&str],
    schema: bool,
) -> Vec<serde_json::Value> {
    let logs = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "-q",
        "-r",
        pcap.to_str().unwrap(),
        "-l",
        logs.path().to_str().unwrap(),
        "-k",
        "none",
    ];
    if let Some(r) = rules {
        args.extend(["-S", r.to_str().unwrap()]);
    }
    for s in sets {
        args.extend(["--set", s]);
    }
    let o = run_in(dir, &args);
    assert!(o.status.success(), "{}: {}", pcap.display(), stderr(&o));
    let events = eve(&logs.path().join("eve.json"));
    if schema {
        assert_schema_valid(&events);
    }
    events
}

#[test]
fn corpus_alerts_and_records_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    let enip = [
        "app-layer.protocols.enip.enabled=yes",
        "stream.midstream=yes",
        "stream.inline=yes",
    ];
    // (test, pcap, record type, settings, the reference's records beside this test)
    type Case<'a> = (&'a str, &'a str, &'a str, &'a [&'a str], Option<&'a str>);
    let cases: [Case; 3] = [
        (
            "modbus",
            "modbus.pcap",
            "modbus",
            &["app-layer.protocols.modbus.enabled=yes"],
            Some("modbus.modbus.json"),
        ),
        (
            "enip-keywords-suricata8",
            "enip_cip_example.pcap",
            "enip",
            &enip,
            Some("enip.enip.json"),
        ),
        ("enip-frames", "enip_cip_example.pcap", "enip", &enip, None),
    ];
    for (name, pcap, kind, sets, recs) in cases {
        let dir = set.join(name);
        let ours = run(
            &dir,
            &dir.join(pcap),
            Some(&dir.join("test.rules")),
            sets,
            true,
        );
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        assert_eq!(
            alert_counts(&ours),
            alert_counts(&reference),
            "{name}: alerts per signature"
        );
        if kind == "enip" {
            // Parsed as Suricata inline: the alerts carry the same transactions.
            assert_eq!(alerts(&ours, kind), alerts(&reference, kind), "{name}");
        }
        if let Some(r) = recs {
            assert_eq!(records(&ours, kind), want(r), "{name}: {kind} records");
        }
    }
}

#[test]
fn crafted_sessions_give_the_references_records() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let ours = run(
        &data,
        &data.join("ics.pcap"),
        Some(&data.join("ics.rules")),
        &[
            "app-layer.protocols.modbus.enabled=yes",
            "app-layer.protocols.enip.enabled=yes",
        ],
        false,
    );
    assert_eq!(records(&ours, "modbus"), want("ics.modbus.json"));
    assert_eq!(records(&ours, "enip"), want("ics.enip.json"));
    // Off by default, as in Suricata: nothing of either protocol.
    let off = run(&data, &data.join("ics.pcap"), None, &[], true);
    assert!(
        off.iter()
            .all(|e| e["event_type"] != "modbus" && e["event_type"] != "enip"),
        "modbus and enip are off unless enabled"
    );
}
