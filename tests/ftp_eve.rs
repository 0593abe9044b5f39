//! FTP against the reference: on corpus pcaps (a session with a cut command line, one
//! with a cut PASV reply, a RETR before any PORT or PASV, an active-mode transfer), the
//! `ftp` records and the FTP `anomaly` events Meerkat writes must be the reference's
//! (`suricata-8.0.6-eve.json`), value for value and in order, and the alerts per
//! signature the same where Meerkat has what the rules need (the ftp-data test's
//! rules are on the data connection). Skips when `../shared` is absent. Small pcaps:
//! about a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;

use common::{assert_schema_valid, eve, run_in, shared, stderr};

/// (test, whether its alerts are compared).
const TESTS: &[(&str, bool)] = &[
    ("ftp/ftp-too-long-command", true),
    ("ftp/ftp-too-long-response", true),
    ("detect-ftp/ftp-reply-received-02", true),
    ("ftp-retr-bypass-realserver", true),
    ("output-eve-ftp-data", false),
];

fn ftp_records(events: &[serde_json::Value]) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter(|e| e["event_type"] == "ftp")
        .map(|e| e["ftp"].clone())
        .collect()
}

fn ftp_anomalies(events: &[serde_json::Value]) -> Vec<(String, u64)> {
    events
        .iter()
        .filter(|e| e["event_type"] == "anomaly" && e["anomaly"]["app_proto"] == "ftp")
        .map(|e| {
            (
                e["anomaly"]["event"].as_str().unwrap().to_string(),
                e["tx_id"].as_u64().unwrap(),
            )
        })
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

fn with_ext(dir: &std::path::Path, ext: &str) -> std::path::PathBuf {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == ext))
        .unwrap()
}

#[test]
fn ftp_records_anomalies_and_alerts_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    for &(name, alerts) in TESTS {
        let dir = set.join(name);
        let logs = tempfile::tempdir().unwrap();
        let o = run_in(
            &dir,
            &[
                "run",
                "-q",
                "-r",
                with_ext(&dir, "pcap").to_str().unwrap(),
                "-S",
                with_ext(&dir, "rules").to_str().unwrap(),
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
        assert_eq!(
            ftp_records(&ours),
            ftp_records(&reference),
            "{name}: ftp records"
        );
        assert_eq!(
            ftp_anomalies(&ours),
            ftp_anomalies(&reference),
            "{name}: ftp anomalies"
        );
        if alerts {
            assert_eq!(
                alert_counts(&ours),
                alert_counts(&reference),
                "{name}: alerts per signature"
            );
        }
    }
}

/// A multi-line reply sent a line a packet (`230-Welcome ...`, `230 Guest access`):
/// Suricata 8 reads no multi-line structure. The first line completes the PASS
/// transaction without a code, each later piece of the server's data with no
/// transaction open makes one of its own, lines of white space only are dropped and
/// trailing white space is cut. The reference cuts its pieces where the client
/// acknowledged, Meerkat where the packets are, so records may be split more
/// finely: the commands, and the reply lines and codes in order, must be the
/// reference's.
#[test]
fn a_multi_line_reply_a_line_a_packet_is_read_as_the_reference_reads_it() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/sip-via");
    let ours = common::run_pcap(
        &dir,
        &dir.join("sip.pcap"),
        &dir.join("test.rules"),
        &["-k", "none"],
    );
    assert_schema_valid(&ours);
    let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
    let flat = |events: &[serde_json::Value], key: &str| -> Vec<serde_json::Value> {
        ftp_records(events)
            .iter()
            .flat_map(|r| r[key].as_array().cloned().unwrap_or_default())
            .collect()
    };
    let commands = |events: &[serde_json::Value]| -> Vec<serde_json::Value> {
        ftp_records(events)
            .iter()
            .filter(|r| r.get("command").is_some())
            .cloned()
            .collect()
    };
    assert_eq!(flat(&ours, "reply"), flat(&reference, "reply"));
    assert_eq!(
        flat(&ours, "completion_code"),
        flat(&reference, "completion_code")
    );
    assert_eq!(commands(&ours), commands(&reference));
    assert!(ftp_records(&ours).len() >= ftp_records(&reference).len());
}
