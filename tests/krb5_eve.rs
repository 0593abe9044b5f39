//! Kerberos 5 against the reference, Suricata 8.0.6: on a crafted pcap
//! (`tests/data/krb5_crafted_pcap.py`: AS, TGS and error exchanges over UDP and TCP,
//! unusual encryption types and error codes, AP-REQ and KRB-CRED, malformed records,
//! Kerberos off its port) and on the corpus's two Kerberos tests, Meerkat's `krb5`
//! records, alerts (signature, transaction, direction), app-layer anomalies and flow
//! records must be the reference's (`tests/data/krb5-crafted.eve.json`,
//! `suricata-8.0.6-eve.json`).
//!
//! Each event is keyed by its flow (the client's port) rather than by its packet:
//! Meerkat parses a TCP direction's bytes as they arrive, Suricata when the other side
//! acknowledges them, so a record over TCP is written one packet earlier here (and,
//! Kerberos records taking their packet's direction, client -> server where Suricata
//! writes server -> client). Over UDP the packet is compared too.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{eve, run_pcap, shared};
use serde_json::{Value, json};

/// The client's port of an event's flow (the port that is not 88).
fn flow_port(e: &Value) -> u64 {
    let (s, d) = (
        e["src_port"].as_u64().unwrap(),
        e["dest_port"].as_u64().unwrap(),
    );
    if d == 88 { s } else { d }
}

/// What is compared: per flow, its `krb5` records in order, its alerts, anomalies and
/// flow record.
fn project(events: &[Value]) -> Value {
    let mut out: Vec<Value> = events
        .iter()
        .filter_map(|e| {
            let kind = e["event_type"].as_str()?;
            if !["krb5", "alert", "anomaly", "flow"].contains(&kind) {
                return None;
            }
            let udp = e["proto"] == "UDP";
            let pkt = if udp {
                e["pcap_cnt"].clone()
            } else {
                Value::Null
            };
            let port = flow_port(e);
            Some(match kind {
                "krb5" => json!(["krb5", port, pkt, e["krb5"]]),
                "alert" => json!([
                    "alert",
                    port,
                    pkt,
                    e["alert"]["signature_id"],
                    e["tx_id"],
                    e["direction"],
                    e["krb5"]
                ]),
                "anomaly" => json!(["anomaly", port, pkt, e["tx_id"], e["anomaly"]]),
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
    // Records keep their order within a flow (a stable sort on the flow); the rest is
    // sorted whole.
    out.sort_by(|a, b| {
        let key = |v: &Value| (v[0].as_str().unwrap().to_string(), v[1].as_u64().unwrap());
        key(a).cmp(&key(b)).then_with(|| {
            if a[0] == "krb5" {
                std::cmp::Ordering::Equal
            } else {
                a.to_string().cmp(&b.to_string())
            }
        })
    });
    Value::Array(out)
}

#[test]
fn crafted_krb5_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let ours = run_pcap(
        &data,
        &data.join("krb5-crafted.pcap"),
        &data.join("krb5-crafted.rules"),
        &["-k", "none"],
    );
    let want = eve(&data.join("krb5-crafted.eve.json"));
    let (got, want) = (project(&ours), project(&want));
    assert_eq!(
        got.as_array().unwrap().len(),
        want.as_array().unwrap().len()
    );
    for (g, w) in got.as_array().unwrap().iter().zip(want.as_array().unwrap()) {
        assert_eq!(g, w);
    }
}

#[test]
fn corpus_krb5_is_as_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    for (test, pcap) in [
        ("bug-8278-krb5-02", "evasion.1.flow.2.segments.pcap"),
        ("bug-8278-krb5-03", "baseline.2.flows.pcap"),
    ] {
        let dir = shared.join("corpus/suricata-verify").join(test);
        let ours = run_pcap(
            &dir,
            &dir.join(pcap),
            &dir.join("test.rules"),
            &["-k", "none"],
        );
        let want = eve(&dir.join("suricata-8.0.6-eve.json"));
        assert_eq!(project(&ours), project(&want), "{test}");
        common::assert_schema_valid(&ours);
    }
}

/// The Kerberos tickets of SMB session setups (EVE `smb.kerberos`), on the corpus's
/// SMB2 capture authenticated with Kerberos.
#[test]
fn corpus_smb_kerberos_is_as_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/smb-filename");
    let ours = run_pcap(
        &dir,
        &dir.join("input.pcap"),
        &dir.join("test.rules"),
        &["-k", "none"],
    );
    let want = eve(&dir.join("suricata-8.0.6-eve.json"));
    let setups = |events: &[Value]| -> Vec<Value> {
        events
            .iter()
            .filter(|e| e["event_type"] == "smb" && e["smb"]["kerberos"].is_object())
            .map(|e| {
                json!([
                    e["smb"]["command"],
                    e["smb"]["session_id"],
                    e["smb"]["kerberos"]
                ])
            })
            .collect()
    };
    // The two sessions are separate flows, which two detect workers may log in
    // either order.
    let sorted = |mut v: Vec<Value>| {
        v.sort_by_key(|x| x.to_string());
        v
    };
    let got = sorted(setups(&ours));
    assert_eq!(got.len(), 2);
    assert_eq!(got, sorted(setups(&want)));
}
