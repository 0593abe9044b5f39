//! POP3, TFTP and IMAP against the reference on crafted captures (`tests/data`, made as
//! `mail_pcaps.py` says; the reference's EVE beside each as `<name>.json`): the `pop3`
//! and `tftp` records (in order, value for value), the app-layer anomalies (name and
//! transaction), each flow's `app_proto` and the alerts per signature must be the
//! reference's. Packet numbers are left out: Meerkat parses a TCP side's data when it
//! arrives, Suricata when the other side acknowledges it (a record or anomaly comes
//! one packet earlier, and an anomaly is written in its data's direction).
//! Small captures: well under a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_schema_valid, eve, run_pcap};

#[derive(Debug, PartialEq, Eq)]
struct Summary {
    records: Vec<String>,
    anomalies: Vec<String>,
    flows: BTreeMap<String, usize>,
    alerts: BTreeMap<u64, usize>,
}

fn summary(events: &[serde_json::Value]) -> Summary {
    let mut s = Summary {
        records: Vec::new(),
        anomalies: Vec::new(),
        flows: BTreeMap::new(),
        alerts: BTreeMap::new(),
    };
    for e in events {
        match e["event_type"].as_str().unwrap() {
            t @ ("pop3" | "tftp") => s.records.push(e[t].to_string()),
            "anomaly" => s.anomalies.push(format!("{} {}", e["anomaly"], e["tx_id"])),
            "flow" => {
                *s.flows
                    .entry(e["app_proto"].as_str().unwrap_or("").to_string())
                    .or_default() += 1;
            }
            "alert" => {
                *s.alerts
                    .entry(e["alert"]["signature_id"].as_u64().unwrap())
                    .or_default() += 1;
            }
            _ => {}
        }
    }
    s
}

fn check(name: &str, skip_alerts: &[u64]) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let got = run_pcap(
        &data,
        &data.join(format!("{name}.pcap")),
        &data.join("mail.rules"),
        &["-k", "none"],
    );
    assert_schema_valid(&got);
    let mut got = summary(&got);
    let mut want = summary(&eve(&data.join(format!("{name}.json"))));
    // Records of different flows come in the order their workers write them.
    got.records.sort();
    want.records.sort();
    for s in skip_alerts {
        got.alerts.remove(s);
        want.alerts.remove(s);
    }
    assert_eq!(got, want, "{name}");
}

#[test]
fn pop3_sessions_are_the_references() {
    check("pop3-session", &[]);
    check("pop3-commands", &[]);
}

/// Long lines, an unknown command, and a response that is no response (the parser
/// stops; the transactions it made are still inspected and logged).
#[test]
fn pop3_errors_are_the_references() {
    check("pop3-errors", &[]);
}

#[test]
fn tftp_requests_are_the_references() {
    check("tftp", &[]);
}

/// Signature 3 (`alert imap ... flow:to_server`) alerts on every packet once the
/// protocol is known: Meerkat knows it one packet earlier (see the module doc).
#[test]
fn imap_is_recognised_as_the_reference_does() {
    check("imap", &[3]);
}
