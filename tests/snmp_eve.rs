//! SNMP against the reference: on the corpus's SNMPv3 pcap and on a crafted pcap of
//! versions 1 and 2c (`tests/data/snmp_crafted_pcap.py`: a GetRequest and a Response
//! with an error-status, a GetBulkRequest, a v1 trap to port 162, a malformed
//! message), the `snmp` records Meerkat writes must be the reference's
//! (`suricata-8.0.6-eve.json`, `tests/data/snmp-crafted.snmp.json`), in order, and so
//! must the alerts (packet, signature, direction, tx_id). Skips the corpus part when
//! `../shared` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{eve, run_pcap, shared};

fn run(dir: &Path, pcap: &Path, rules: &Path) -> Vec<serde_json::Value> {
    let ours = run_pcap(dir, pcap, rules, &["-k", "none"]);
    // Suricata's EVE schema lacks keys the reference writes here (`snmp.error`, IKE
    // attribute names such as `alg_prf`): the records are compared with the
    // reference's instead.
    ours
}

/// The records of `proto` and the alerts, as `tests/data/eve_ref_records.py` writes
/// them.
fn records(events: &[serde_json::Value], proto: &str) -> serde_json::Value {
    let mut recs: Vec<serde_json::Value> = events
        .iter()
        .filter(|e| e["event_type"] == proto)
        .map(|e| {
            serde_json::json!({
                "pcap_cnt": e["pcap_cnt"],
                "src_port": e["src_port"],
                "dest_port": e["dest_port"],
                proto: e[proto],
            })
        })
        .collect();
    // Flows go to two workers: the EVE file interleaves them in no set order.
    recs.sort_by_key(|r| r["pcap_cnt"].as_u64());
    let mut alerts: Vec<(u64, u64, String, Option<u64>)> = events
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| {
            assert!(e[proto].is_object(), "{e}");
            (
                e["pcap_cnt"].as_u64().unwrap(),
                e["alert"]["signature_id"].as_u64().unwrap(),
                e["direction"].as_str().unwrap().to_string(),
                e["tx_id"].as_u64(),
            )
        })
        .collect();
    alerts.sort();
    serde_json::json!({ proto: recs, "alerts": alerts })
}

#[test]
fn crafted_snmp_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(data.join("snmp-crafted.snmp.json")).unwrap(),
    )
    .unwrap();
    let ours = run(
        &data,
        &data.join("snmp-crafted.pcap"),
        &data.join("snmp-crafted.rules"),
    );
    let got = records(&ours, "snmp");
    assert_eq!(got["snmp"], want["snmp"]);
    assert_eq!(got["alerts"], want["alerts"]);
}

#[test]
fn corpus_snmp_v3_is_as_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/snmp-v3-encrypted");
    let ours = run(&dir, &dir.join("SNMPv3.pcap"), &dir.join("min7.rules"));
    let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
    let (got, want) = (records(&ours, "snmp"), records(&reference, "snmp"));
    assert_eq!(got["snmp"].as_array().unwrap().len(), 8);
    assert_eq!(got, want);
}
