//! NTP against the reference. Suricata 8 writes no `ntp` records by default; what it
//! writes is alerts on NTP, each with an `ntp` object (version, mode, stratum,
//! reference id). On the corpus's `ntp-keywords` test and on a crafted pcap
//! (`tests/data/ntp_crafted_pcap.py`: a client request and its reply, a datagram too
//! short for NTP on the same flow, symmetric active, a MAC after the header, version 2
//! and mode 6 packets that are not NTP to the reference, NTP between other ports), the
//! alerts Meerkat writes (packet, signature, direction, tx_id and `ntp` object) must be
//! the reference's (`suricata-8.0.6-eve.json`, `tests/data/ntp-crafted.ntp.json`). The
//! short datagram is a parse error (`ntp.malformed_data` on the previous transaction,
//! which no rule inspects again); the packet itself is still inspected. Skips the
//! corpus part when `../shared` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{eve, run_pcap, shared};

/// The alerts as `tests/data/eve_ref_records.py --alert-objects` writes them:
/// `[pcap_cnt, sid, direction, tx_id, ntp]`, by packet and signature.
fn alerts(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut v: Vec<(u64, u64, serde_json::Value)> = events
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| {
            let (pcap_cnt, sid) = (
                e["pcap_cnt"].as_u64().unwrap(),
                e["alert"]["signature_id"].as_u64().unwrap(),
            );
            let row = serde_json::json!([pcap_cnt, sid, e["direction"], e["tx_id"], e["ntp"]]);
            (pcap_cnt, sid, row)
        })
        .collect();
    v.sort_by_key(|(p, s, _)| (*p, *s));
    v.into_iter().map(|(_, _, r)| r).collect()
}

#[test]
fn crafted_ntp_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data.join("ntp-crafted.ntp.json")).unwrap())
            .unwrap();
    let ours = run_pcap(
        &data,
        &data.join("ntp-crafted.pcap"),
        &data.join("ntp-crafted.rules"),
        &["-k", "none"],
    );
    assert!(
        !ours.iter().any(|e| e["event_type"] == "ntp"),
        "no ntp records by default"
    );
    let got = alerts(&ours);
    assert_eq!(got.len(), 23);
    // The short datagram (packet 3) is a parse error: it gets no transaction, but
    // packet rules still see it (`dsize`, a bare `alert ntp`), with no `tx_id`.
    let short: Vec<_> = got.iter().filter(|a| a[0] == 3).collect();
    assert_eq!(short.len(), 2, "{got:?}");
    assert!(short.iter().all(|a| a[3].is_null()), "{got:?}");
    assert_eq!(serde_json::json!(got), want["alerts"]);
}

#[test]
fn corpus_ntp_keywords_are_as_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/ntp-keywords");
    let ours = run_pcap(
        &dir,
        &dir.join("input.pcap"),
        &dir.join("test.rules"),
        &["-k", "none"],
    );
    let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
    let (got, want) = (alerts(&ours), alerts(&reference));
    assert_eq!(got.len(), 48);
    assert_eq!(got, want);
}
