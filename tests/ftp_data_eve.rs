//! FTP data connections against the reference, with one worker and with several: on a
//! crafted session (`tests/data/ftp-data.pcap`, made by `ftp_data_pcap.py`: passive and
//! active RETR / STOR / APPE / STOU / LIST / NLST / MLSD over PASV, EPSV, PORT and
//! EPRT, and a PORT to another host) and on the corpus's `output-eve-ftp-data`, the
//! data flows Meerkat calls `ftp-data`, their `parent_id`, the `ftp_data` and
//! `fileinfo` records and the alerts per signature must be the reference's
//! (`suricata-ref --runmode=single`, saved as `ftp-data.json`), and the same whatever
//! the number of workers: the data connection of a control flow usually lands in
//! another worker process (see `meerkat_app::ftp_data`). Small pcaps: about a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_schema_valid, eve, run_pcap, shared};

/// What is compared: per FTP flow (its ports), its `app_proto`, whether it has a
/// parent, and its `ftp_data` record; the `fileinfo` records (flow ports, file
/// object); the alert count per signature.
#[derive(Debug, PartialEq, Eq)]
struct Summary {
    flows: BTreeMap<(u64, u64), (String, bool, String)>,
    files: Vec<String>,
    alerts: BTreeMap<u64, usize>,
}

fn ports(e: &serde_json::Value) -> (u64, u64) {
    let (s, d) = (
        e["src_port"].as_u64().unwrap_or(0),
        e["dest_port"].as_u64().unwrap_or(0),
    );
    (s.min(d), s.max(d))
}

fn summary(events: &[serde_json::Value]) -> Summary {
    let mut flows = BTreeMap::new();
    let mut records = BTreeMap::new();
    let mut files = Vec::new();
    let mut alerts = BTreeMap::new();
    let mut parents = std::collections::BTreeSet::new();
    for e in events {
        match e["event_type"].as_str().unwrap() {
            // The flows of FTP (a corpus pcap has others, not compared here).
            "flow" if e["app_proto"] == "ftp" || e["app_proto"] == "ftp-data" => {
                let app = e["app_proto"].as_str().unwrap_or("").to_string();
                flows.insert(ports(e), (app, e["parent_id"].is_u64(), String::new()));
                if let Some(p) = e["parent_id"].as_u64() {
                    parents.insert(p);
                }
            }
            "ftp_data" => {
                assert!(e["parent_id"].is_u64(), "{e}");
                records.insert(ports(e), e["ftp_data"].to_string());
            }
            "fileinfo" if e["app_proto"] == "ftp-data" => {
                assert!(e["parent_id"].is_u64() && e["ftp_data"].is_object(), "{e}");
                files.push(format!("{:?} {}", ports(e), e["fileinfo"]));
            }
            // Signature 2 is a packet rule of `alert ftp-data`: Meerkat parses a TCP
            // side's data when it arrives, Suricata when the other side acknowledges
            // it, so Meerkat knows the protocol one packet earlier (the data packet)
            // on every flow, as it does for every protocol.
            "alert" if e["alert"]["signature_id"] == 2 && e["app_proto"] == "ftp-data" => {
                assert!(e["parent_id"].is_u64(), "{e}");
            }
            "alert" => {
                *alerts
                    .entry(e["alert"]["signature_id"].as_u64().unwrap())
                    .or_default() += 1;
                if e["app_proto"] == "ftp-data" {
                    assert!(e["parent_id"].is_u64(), "{e}");
                }
            }
            _ => {}
        }
    }
    // Every parent is the control flow of the session.
    assert!(parents.len() <= 1, "{parents:?}");
    for (k, r) in records {
        if let Some(f) = flows.get_mut(&k) {
            f.2 = r;
        }
    }
    files.sort();
    Summary {
        flows,
        files,
        alerts,
    }
}

fn check(pcap: &Path, rules: &Path, reference: &Path, extra: &[&str]) {
    let want = summary(&eve(reference));
    assert!(want.flows.values().any(|f| f.0 == "ftp-data"));
    for workers in ["1", "3"] {
        let mut args = vec!["-k", "none", "--workers", workers];
        args.extend_from_slice(extra);
        let got = run_pcap(pcap.parent().unwrap(), pcap, rules, &args);
        assert_schema_valid(&got);
        let got = summary(&got);
        assert_eq!(got.flows, want.flows, "{} workers", workers);
        assert_eq!(got.files, want.files, "{} workers", workers);
        assert_eq!(got.alerts, want.alerts, "{} workers", workers);
    }
}

#[test]
fn crafted_session_is_the_references_with_any_number_of_workers() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    if shared().is_none() {
        eprintln!("skipping: ../shared is absent (the EVE schema)");
    }
    check(
        &data.join("ftp-data.pcap"),
        &data.join("ftp-data.rules"),
        &data.join("ftp-data.json"),
        &[],
    );
}

#[test]
fn corpus_ftp_data_is_the_references_with_any_number_of_workers() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/output-eve-ftp-data");
    check(
        &dir.join("input.pcap"),
        &dir.join("test.rules"),
        &dir.join("suricata-8.0.6-eve.json"),
        &[],
    );
}
