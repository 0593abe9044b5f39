//! MQTT against the reference: on corpus pcaps of MQTT 5 (subscribe, unsubscribe and a
//! publish of a 35 KB JPEG cut by `string-log-limit`) and 3.1.1 (an invalid QoS), the
//! `mqtt` records Meerkat writes must be the reference's (`suricata-8.0.6-eve.json`),
//! value for value and in order, and the alerts per signature the same. Skips when
//! `../shared` is absent (the first test: the second, an MQTT 5 session with every
//! packet type and properties made by `tests/data/mqtt5_all_pcap.py`, has the
//! reference's records beside it). Small pcaps: about a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use common::{assert_schema_valid, eve, run_in, shared, stderr};

const TESTS: &[&str] = &[
    "mqtt-sub-rules",
    "mqtt-unsub-rules",
    "mqtt-pub-rules",
    "mqtt-events-invalid-qos",
];

fn mqtt_records(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter(|e| e["event_type"] == "mqtt")
        .map(|e| e["mqtt"].clone())
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

#[test]
fn mqtt_records_and_alerts_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    for name in TESTS {
        let dir = set.join(name);
        let pcap = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "pcap"))
            .unwrap();
        let logs = tempfile::tempdir().unwrap();
        let o = run_in(
            &dir,
            &[
                "run",
                "-q",
                "-r",
                pcap.to_str().unwrap(),
                "-S",
                dir.join("test.rules").to_str().unwrap(),
                "-l",
                logs.path().to_str().unwrap(),
                "-k",
                "none",
                "--set",
                "app-layer.protocols.mqtt.enabled=yes",
            ],
        );
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let ours = eve(&logs.path().join("eve.json"));
        assert_schema_valid(&ours);
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        assert_eq!(
            mqtt_records(&ours),
            mqtt_records(&reference),
            "{name}: mqtt records"
        );
        assert_eq!(
            alert_counts(&ours),
            alert_counts(&reference),
            "{name}: alerts per signature"
        );
    }
}

#[test]
fn every_packet_type_with_properties_as_the_reference() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(data.join("mqtt5-all.mqtt.json")).unwrap())
            .unwrap();
    let logs = tempfile::tempdir().unwrap();
    let o = run_in(
        &data,
        &[
            "run",
            "-q",
            "-r",
            data.join("mqtt5-all.pcap").to_str().unwrap(),
            "-l",
            logs.path().to_str().unwrap(),
            "-k",
            "none",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let ours = eve(&logs.path().join("eve.json"));
    assert_eq!(mqtt_records(&ours), want);
}
