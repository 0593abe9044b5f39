//! RFB against the reference: on the corpus's VNC pcaps (a 3.7 and a 3.8 handshake with
//! VNC authentication), the `rfb` records Meerkat writes must be the reference's
//! (`suricata-8.0.6-eve.json`), value for value and in order; so must the alerts per
//! signature, and the direction, `tx_id` and `frame` object of each alert (compared as
//! multisets: packet numbers are left out, and so is the alert's `rfb` object, which
//! shows the handshake as far as it had got: Meerkat alerts on the data packet where
//! Suricata alerts on the ACK, after the other side's next message came).
//! Skips when `../shared` is absent. Small pcaps: well under a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use common::{assert_schema_valid, eve, run_in, shared, stderr};

/// (test, pcap in the test's directory).
const TESTS: &[(&str, &str)] = &[
    ("rfb-rules", "00-vnc-openwall-3.7.pcap"),
    ("rfb-rules-8", "00-vnc-openwall-3.7.pcap"),
    ("rfb-frames", "04-vnc-openwall-3.8.pcap"),
];

fn rfb_records(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter(|e| e["event_type"] == "rfb")
        .map(|e| e["rfb"].clone())
        .collect()
}

fn alert_counts(events: &[serde_json::Value]) -> BTreeMap<u64, usize> {
    let mut m = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == "alert") {
        *m.entry(e["alert"]["signature_id"].as_u64().unwrap())
            .or_default() += 1;
    }
    m
}

/// (signature, direction, tx_id, frame object) of each alert, sorted; each alert on a
/// transaction carries an `rfb` object.
fn alerts(events: &[serde_json::Value]) -> Vec<String> {
    let mut v: Vec<String> = events
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| {
            assert_eq!(e["tx_id"].is_u64(), e["rfb"].is_object(), "{e}");
            serde_json::json!([
                e["alert"]["signature_id"],
                e["direction"],
                e["tx_id"],
                e["frame"]
            ])
            .to_string()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn rfb_records_and_alerts_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    for (name, pcap) in TESTS {
        let dir = set.join(name);
        let logs = tempfile::tempdir().unwrap();
        let o = run_in(
            &dir,
            &[
                "run",
                "-q",
                "-r",
                dir.join(pcap).to_str().unwrap(),
                "-S",
                dir.join("test.rules").to_str().unwrap(),
                "-l",
                logs.path().to_str().unwrap(),
                "-k",
                "none",
            ],
        );
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let ours = eve(&logs.path().join("eve.json"));
        assert_schema_valid(&ours);
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        assert!(!rfb_records(&reference).is_empty(), "{name}");
        assert_eq!(
            rfb_records(&ours),
            rfb_records(&reference),
            "{name}: rfb records"
        );
        assert_eq!(
            alert_counts(&ours),
            alert_counts(&reference),
            "{name}: alerts per signature"
        );
        assert_eq!(alerts(&ours), alerts(&reference), "{name}: alerts");
    }
}
