//! DHCP against the reference. On a crafted pcap (`tests/data/dhcp_crafted_pcap.py`:
//! a DORA with the options Suricata logs, an INFORM and its ACK through a relay, a
//! NAK, a RELEASE, options cut short, a malformed time option, a datagram too short
//! for DHCP, a request carrying an ACK type) the `dhcp` records (ACKs only, by
//! default), the alerts (packet, signature, tx_id, direction, no `dhcp` object) and the
//! `truncated_options` anomalies Meerkat writes must be the reference's
//! (`tests/data/dhcp-crafted.json`, from Suricata 8.0.6). On the corpus pcaps whose
//! reference EVE has `dhcp` records, those records must be the same. The corpus part
//! skips when `../shared` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{eve, run_pcap, shared};
use serde_json::{Value, json};

/// `[pcap_cnt, event_type, sid, tx_id, direction, dhcp, anomaly event]` of the records,
/// alerts and anomalies, by packet.
fn rows(events: &[Value]) -> Vec<Value> {
    let mut v: Vec<Value> = events
        .iter()
        .filter(|e| !matches!(e["event_type"].as_str(), Some("stats" | "flow")))
        .map(|e| {
            json!([
                e["pcap_cnt"],
                e["event_type"],
                e["alert"]["signature_id"],
                e["tx_id"],
                e["direction"],
                e["dhcp"],
                e["anomaly"]["event"]
            ])
        })
        .collect();
    v.sort_by_key(|r| {
        (
            r[0].as_u64().unwrap_or(0),
            r[1].as_str().unwrap_or("").to_string(),
            r[2].as_u64().unwrap_or(0),
        )
    });
    v
}

#[test]
fn crafted_dhcp_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("dhcp-crafted.json")).unwrap())
            .unwrap();
    let ours = run_pcap(
        &data,
        &data.join("dhcp-crafted.pcap"),
        &data.join("dhcp-crafted.rules"),
        &["-k", "none"],
    );
    let got = rows(&ours);
    assert_eq!(got.iter().filter(|r| r[1] == "dhcp").count(), 3, "{got:?}");
    assert_eq!(json!(got), want["records"]);
}

#[test]
fn corpus_dhcp_records_are_as_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/output-eve-ftp-data");
    let ours = run_pcap(&dir, &dir.join("input.pcap"), &dir.join("test.rules"), &[]);
    let pick =
        |ev: &[Value]| -> Vec<Value> { rows(ev).into_iter().filter(|r| r[1] == "dhcp").collect() };
    let (got, want) = (
        pick(&ours),
        pick(&eve(&dir.join("suricata-8.0.6-eve.json"))),
    );
    assert_eq!(got.len(), 10);
    assert_eq!(got, want);
}
