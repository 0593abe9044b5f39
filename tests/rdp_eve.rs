//! RDP against the reference, Suricata 8.0.6: on a crafted pcap
//! (`tests/data/rdp_crafted_pcap.py`: a standard-security connection with a cookie,
//! full client core data and four channels; a TLS-negotiated one with a certificate
//! chain; negotiation failures; a flow on 3389 that is not RDP; a legacy client; a
//! malformed TPKT; truncated client core data; a request of another class), Meerkat's
//! `rdp` records, alerts (signature, direction, transaction) and flow records
//! (`app_proto`, `tx_cnt`, the `app_layer_error` exception) must be the reference's
//! (`tests/data/rdp-crafted.eve.json`: its EVE, stats left out), and every line must
//! be valid against Suricata's EVE schema (but for the `rdp` records, whose keys the
//! schema lags behind).
//!
//! Each event is keyed by its flow (the client's port) rather than by its packet:
//! Meerkat parses a TCP direction's bytes as they arrive, Suricata when the other side
//! acknowledges them, so a record is written one packet earlier here, and (RDP records
//! taking their packet's direction) from the side that sent the message where Suricata
//! writes it from the side that acknowledged it. Alerts are compared as a set per flow:
//! Meerkat's `alert rdp` rules also match the client's first data packets (the
//! Connection Request's), which Suricata inspects before it has parsed them. The flow
//! whose parser failed on the client's side before the server spoke has no app layer
//! after it (its server's side is not probed), and the flow on 3389 that is not RDP
//! (its client's data no protocol's, its server silent) has no `app_proto`, as in
//! Suricata's.
//! When the reference engine is at hand
//! (`../shared/tools/suricata-ref`) it is also run on the pcap, and what it writes must
//! still be the stored file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{assert_schema_valid, eve, run_pcap, shared};
use serde_json::{Value, json};

/// The client's port of an event's flow (the port that is not 3389).
fn flow_port(e: &Value) -> u64 {
    let (s, d) = (
        e["src_port"].as_u64().unwrap(),
        e["dest_port"].as_u64().unwrap(),
    );
    if d == 3389 { s } else { d }
}

/// What is compared: per flow, its `rdp` records in order, and its alerts, anomalies
/// and flow record (sorted).
fn project(events: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = events
        .iter()
        .filter_map(|e| {
            let kind = e["event_type"].as_str()?;
            if !["rdp", "alert", "anomaly", "flow"].contains(&kind) {
                return None;
            }
            let port = flow_port(e);
            Some(match kind {
                "rdp" => json!(["rdp", port, e["rdp"]]),
                "alert" => json!([
                    "alert",
                    port,
                    e["alert"]["signature_id"],
                    e["tx_id"],
                    e["direction"],
                    e["rdp"]
                ]),
                "anomaly" => json!(["anomaly", port, e["anomaly"]]),
                "flow" => json!([
                    "flow",
                    port,
                    e["app_proto"],
                    e["flow"]["tx_cnt"],
                    e["flow"]["exception_policy"],
                    e["flow"]["alerted"]
                ]),
                _ => return None,
            })
        })
        .collect();
    out.sort_by(|a, b| {
        let key = |v: &Value| (v[0].as_str().unwrap().to_string(), v[1].as_u64().unwrap());
        key(a).cmp(&key(b)).then_with(|| {
            if a[0] == "rdp" {
                std::cmp::Ordering::Equal
            } else {
                a.to_string().cmp(&b.to_string())
            }
        })
    });
    // Alerts as a set.
    out.dedup_by(|a, b| a[0] == "alert" && a == b);
    out
}

fn data() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[test]
fn crafted_rdp_is_as_the_reference() {
    let data = data();
    let ours = run_pcap(
        &data,
        &data.join("rdp-crafted.pcap"),
        &data.join("rdp-crafted.rules"),
        &["-k", "none"],
    );
    // Suricata's EVE schema lags behind its RDP logger (no `rdp.flags`,
    // `server_supports`, `protocol`, ...): the `rdp` records are compared with the
    // reference's below instead.
    let checked: Vec<Value> = ours
        .iter()
        .filter(|e| e["event_type"] != "rdp")
        .cloned()
        .collect();
    assert_schema_valid(&checked);
    let want = eve(&data.join("rdp-crafted.eve.json"));
    let (got, want) = (project(&ours), project(&want));
    assert!(want.iter().filter(|v| v[0] == "rdp").count() >= 20);
    for (g, w) in got.iter().zip(&want) {
        assert_eq!(g, w);
    }
    assert_eq!(got.len(), want.len());
}

/// The stored file is what the reference writes (when it is at hand).
#[test]
fn the_stored_reference_is_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let engine = shared.join("tools/suricata-ref");
    if !engine.exists() {
        eprintln!("skipping: no reference engine");
        return;
    }
    let data = data();
    let logs = tempfile::tempdir().unwrap();
    let o = std::process::Command::new(&engine)
        .args([
            "-r",
            "rdp-crafted.pcap",
            "-S",
            "rdp-crafted.rules",
            "-k",
            "none",
            "-l",
        ])
        .arg(logs.path())
        .current_dir(&data)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let theirs = eve(&logs.path().join("eve.json"));
    let want = eve(&data.join("rdp-crafted.eve.json"));
    assert_eq!(project(&theirs), project(&want));
}
