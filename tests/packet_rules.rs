//! When rules without a payload alert, against the reference: on
//! `tests/data/packet-rules.pcap` (`packet_rules_pcap.py`: HTTP, SMTP, FTP, POP3 and
//! IMAP sessions, closed, left open, and a response cut short) the rules of
//! `packet-rules.rules` must alert on the packets the reference's do
//! (`packet-rules.alerts.json`, from Suricata 8.0.6): a protocol's rules not on the
//! segment its protocol is recognised by (IDS mode parses a side's data when the other
//! side acknowledges it), `flow:established` not on the ACK that completes the
//! handshake, `tcp-pkt` and `tcp-stream` rules without options on the first packet of
//! each direction only (IP-only), and a protocol's rules on the pseudo packets of a
//! flow's end for the directions Suricata makes them for. When the reference engine is
//! at hand it is run too, and what it raises must still be that file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{run_pcap, run_reference};
use serde_json::Value;

/// Per sid, the packets it alerted on: `pcap_cnt`, or "pseudo SRC>DST" (ports) for a
/// pseudo packet, sorted as `packet_rules_pcap.py`'s reference file is.
fn alerts(events: &[Value]) -> BTreeMap<String, Vec<Value>> {
    let mut by_sid: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == "alert") {
        let at = match e["pcap_cnt"].as_u64() {
            Some(n) => Value::from(n),
            None => Value::from(format!("pseudo {}>{}", e["src_port"], e["dest_port"])),
        };
        by_sid
            .entry(e["alert"]["signature_id"].to_string())
            .or_default()
            .push(at);
    }
    for v in by_sid.values_mut() {
        // As Python's sort with key=str.
        v.sort_by_key(|x| match x {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        });
    }
    by_sid
}

fn want(data: &Path) -> BTreeMap<String, Vec<Value>> {
    let text = std::fs::read_to_string(data.join("packet-rules.alerts.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn header_only_rules_alert_where_the_reference_does() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let ours = run_pcap(
        &data,
        &data.join("packet-rules.pcap"),
        &data.join("packet-rules.rules"),
        &["-k", "none"],
    );
    let got = alerts(&ours);
    let want = want(&data);
    assert_eq!(want.len(), 15, "every rule alerts somewhere");
    for (sid, packets) in &want {
        assert_eq!(got.get(sid), Some(packets), "sid {sid}");
    }
    assert_eq!(got.len(), want.len());
}

/// The reference engine, run on the pcap, still raises the committed alerts.
#[test]
fn packet_rules_reference_is_current() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let Some(reference) = run_reference(
        &data.join("packet-rules.pcap"),
        &data.join("packet-rules.rules"),
        &["-k", "none"],
    ) else {
        return;
    };
    assert_eq!(alerts(&reference), want(&data));
}
