//! Packet rules of an app-layer protocol on UDP flows, against the reference: on
//! `tests/data/udp-parse-error.pcap` (`udp_parse_error_pcap.py`: an SNMP, an IKE and an
//! mDNS datagram, each followed on its flow by one its parser refuses), the alerts
//! Meerkat writes with `udp-parse-error.rules` must be the reference's
//! (`tests/data/udp-parse-error.json`): a packet alert of a rule such as `alert snmp`
//! names the transaction its datagram made (`tx_id` and the protocol's object, as
//! Suricata 8 does), none after a datagram that made none; a refused datagram is still
//! inspected by packet rules; IP-only rules alert once per flow direction.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::run_pcap;

#[test]
fn packet_alerts_on_udp_name_their_transaction() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("udp-parse-error.json")).unwrap())
            .unwrap();
    let ours = run_pcap(
        &data,
        &data.join("udp-parse-error.pcap"),
        &data.join("udp-parse-error.rules"),
        &["-k", "none"],
    );
    let mut got: Vec<serde_json::Value> = ours
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| {
            let objects: Vec<&str> = ["snmp", "ike", "dns", "mdns"]
                .into_iter()
                .filter(|k| e.get(*k).is_some())
                .collect();
            serde_json::json!([
                e["pcap_cnt"],
                e["alert"]["signature_id"],
                e["tx_id"],
                objects
            ])
        })
        .collect();
    got.sort_by_key(|a| (a[0].as_u64(), a[1].as_u64()));
    assert_eq!(serde_json::json!(got), want);
}
