//! DNP3 against the reference: on the corpus pcaps (a session with unsolicited
//! responses, a request flood, a message of too many points), the alerts per signature
//! and the `dnp3` objects inside them must be the reference's
//! (`suricata-8.0.6-eve.json`), in order; skips when `../shared` is absent. The second
//! test, two sessions with most object types Suricata decodes made by
//! `tests/data/dnp3_objects_pcap.py`, has the reference's `dnp3` records beside it.
//! DNP3 is off by default (as in Suricata): both turn it on. Small pcaps: about a
//! second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use common::{assert_schema_valid, eve, run_in, shared, stderr};

const TESTS: &[&str] = &[
    "dnp3/dnp3-dnp3_obj-alert",
    "dnp3/dnp3-flood",
    "dnp3/dnp3-max-points",
];

/// The `dnp3` objects of the alerts, by signature, in order.
fn alert_records(events: &[serde_json::Value]) -> BTreeMap<u64, Vec<serde_json::Value>> {
    let mut m: BTreeMap<u64, Vec<serde_json::Value>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == "alert") {
        m.entry(e["alert"]["signature_id"].as_u64().unwrap())
            .or_default()
            .push(e["dnp3"].clone());
    }
    m
}

#[test]
fn dnp3_alerts_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    for name in TESTS {
        let dir = set.join(name);
        let file = |ext: &str| {
            std::fs::read_dir(&dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .find(|p| p.extension().is_some_and(|x| x == ext))
                .unwrap()
        };
        let logs = tempfile::tempdir().unwrap();
        let run = |extra: &[&str]| {
            let pcap = file("pcap");
            let rules = file("rules");
            let mut args = vec![
                "run",
                "-q",
                "-r",
                pcap.to_str().unwrap(),
                "-S",
                rules.to_str().unwrap(),
                "-l",
                logs.path().to_str().unwrap(),
                "-k",
                "none",
            ];
            args.extend_from_slice(extra);
            let o = run_in(&dir, &args);
            assert!(o.status.success(), "{name}: {}", stderr(&o));
            eve(&logs.path().join("eve.json"))
        };
        // Off by default: no alert at all.
        let off = run(&[]);
        assert!(
            alert_records(&off).is_empty(),
            "{name}: dnp3 is on by default"
        );
        std::fs::remove_file(logs.path().join("eve.json")).unwrap();
        let ours = run(&["--set", "app-layer.protocols.dnp3.enabled=yes"]);
        assert_schema_valid(&ours);
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        assert_eq!(
            alert_records(&ours),
            alert_records(&reference),
            "{name}: alerts and their dnp3 objects"
        );
    }
}

#[test]
fn object_types_as_the_reference() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    // By client port: flows may be logged in either order (several workers), a flow's
    // records in order.
    let want: BTreeMap<String, Vec<serde_json::Value>> = serde_json::from_str(
        &std::fs::read_to_string(data.join("dnp3-objects.dnp3.json")).unwrap(),
    )
    .unwrap();
    let logs = tempfile::tempdir().unwrap();
    let o = run_in(
        &data,
        &[
            "run",
            "-q",
            "-r",
            data.join("dnp3-objects.pcap").to_str().unwrap(),
            "-l",
            logs.path().to_str().unwrap(),
            "-k",
            "none",
            "--set",
            "app-layer.protocols.dnp3.enabled=yes",
            "--set",
            "app-layer.protocols.dnp3.max-points=100",
            "--set",
            "outputs.0.eve-log.types.99=dnp3",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = eve(&logs.path().join("eve.json"));
    assert_schema_valid(&ours);
    let mut got: BTreeMap<String, Vec<serde_json::Value>> = BTreeMap::new();
    for e in ours.iter().filter(|e| e["event_type"] == "dnp3") {
        got.entry(e["src_port"].to_string())
            .or_default()
            .push(e["dnp3"].clone());
    }
    assert_eq!(
        got.keys().collect::<Vec<_>>(),
        want.keys().collect::<Vec<_>>()
    );
    for (port, w) in &want {
        let g = &got[port];
        assert_eq!(g.len(), w.len(), "flow from port {port}");
        for (i, (g, w)) in g.iter().zip(w).enumerate() {
            assert_eq!(g, w, "flow from port {port}: dnp3 record {i}");
        }
    }
}
