//! PostgreSQL against the reference: on `tests/data/pgsql-crafted.pcap`
//! (`pgsql_crafted_pcap.py`: cleartext, MD5 and SCRAM logins, queries with rows, a
//! notice, an empty query, a notification, the extended query, an error, COPY in and
//! out, SSL refused and accepted, a cancel request, malformed and oversized messages)
//! with pgsql enabled, the `pgsql` records, the alerts (sid, direction, tx_id), the
//! app-layer anomalies and the flows' protocols Meerkat writes must be the reference's,
//! as `pgsql-crafted.json` keeps them (`pgsql_ref_rows.py` over Suricata 8.0.6's EVE,
//! its stock config with pgsql enabled in `app-layer` and `outputs.eve-log.types`).
//! Alerts are compared without their packet: Suricata inspects a request when the
//! server acknowledges it, Meerkat when it comes. With the default config (pgsql off,
//! as in Suricata 8) no `pgsql` record is written. When the reference engine is at
//! hand it is run on the pcap too, and what it writes must still be that file.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use common::{eve, run_pcap, shared};
use serde_json::{Value, json};

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// The client's port of an event, whichever way it was written.
fn port(e: &Value) -> u64 {
    if e["dest_port"] == 5432 {
        e["src_port"].as_u64().unwrap()
    } else {
        e["dest_port"].as_u64().unwrap()
    }
}

fn sorted(mut v: Vec<Value>) -> Vec<Value> {
    v.sort_by_key(|r| r.to_string());
    v
}

/// What `pgsql_ref_rows.py` keeps of an EVE file.
fn rows(events: &[Value]) -> Value {
    let mut records: Vec<Value> = events
        .iter()
        .filter(|e| e["event_type"] == "pgsql")
        .map(|e| json!([port(e), e["pgsql"]]))
        .collect();
    records.sort_by_key(|r| (r[0].as_u64(), r[1]["tx_id"].as_u64()));
    let alerts = events
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| {
            json!([
                port(e),
                e["alert"]["signature_id"],
                e["direction"],
                e["tx_id"]
            ])
        })
        .collect();
    let anomalies = events
        .iter()
        .filter(|e| e["event_type"] == "anomaly" && e["anomaly"]["type"] == "applayer")
        .map(|e| {
            json!([
                port(e),
                e["anomaly"]["app_proto"],
                e["anomaly"]["event"],
                e.get("tx_id").cloned().unwrap_or(json!(-1))
            ])
        })
        .collect();
    let flows = events
        .iter()
        .filter(|e| e["event_type"] == "flow")
        .map(|e| {
            let error = e["flow"]["exception_policy"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x["target"] == "app_layer_error"));
            json!([port(e), e["app_proto"], e["app_proto_orig"], error])
        })
        .collect();
    json!({
        "records": records,
        "alerts": sorted(alerts),
        "anomalies": sorted(anomalies),
        "flows": sorted(flows),
    })
}

fn want() -> Value {
    let mut w: Value =
        serde_json::from_str(&std::fs::read_to_string(data().join("pgsql-crafted.json")).unwrap())
            .unwrap();
    for k in ["alerts", "anomalies", "flows"] {
        w[k] = json!(sorted(w[k].as_array().unwrap().clone()));
    }
    w
}

fn run(extra: &[&str]) -> Vec<Value> {
    let d = data();
    let mut args = vec!["-k", "none"];
    args.extend_from_slice(extra);
    run_pcap(
        &d,
        &d.join("pgsql-crafted.pcap"),
        &d.join("pgsql-crafted.rules"),
        &args,
    )
}

#[test]
fn crafted_pgsql_is_as_the_reference() {
    let ours = run(&["--set", "app-layer.protocols.pgsql.enabled=yes"]);
    let (got, want) = (rows(&ours), want());
    for k in ["records", "alerts", "anomalies", "flows"] {
        assert_eq!(got[k], want[k], "{k}");
    }
}

#[test]
fn pgsql_is_off_by_default() {
    let ours = run(&[]);
    assert!(ours.iter().all(|e| e["event_type"] != "pgsql"));
    assert!(ours.iter().all(|e| e["event_type"] != "alert"));
    assert!(
        ours.iter()
            .filter(|e| e["event_type"] == "flow")
            .all(|e| e["app_proto"] != "pgsql")
    );
}

#[test]
fn passwords_are_logged_when_asked() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("meerkat.yaml");
    std::fs::write(
        &cfg,
        "outputs:\n  - eve-log:\n      enabled: yes\n      filename: eve.json\n      types:\n        \
         - pgsql:\n            passwords: yes\napp-layer:\n  protocols:\n    pgsql:\n      \
         enabled: yes\n",
    )
    .unwrap();
    let ours = run(&["-c", cfg.to_str().unwrap()]);
    let pw: Vec<&Value> = ours
        .iter()
        .filter(|e| e["event_type"] == "pgsql")
        .filter_map(|e| e["pgsql"]["request"].get("password"))
        .collect();
    assert_eq!(
        pw,
        [
            &json!("s3cr3t"),
            &json!("md5ceffc01dcde7541829deef6b5e9c9142")
        ]
    );
}

/// The reference engine, run on the crafted pcap, still writes the committed rows.
#[test]
fn pgsql_reference_rows_are_current() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let engine = shared.join("tools/suricata-ref");
    let stock = shared.join("tools/reference/suricata.yaml");
    if !engine.is_file() || !stock.is_file() {
        eprintln!("skipping: the reference engine is absent");
        return;
    }
    // The stock config with pgsql on, both as a parser and as an EVE type.
    let yaml = std::fs::read_to_string(&stock)
        .unwrap()
        .replacen(
            "        - pgsql:\n            enabled: no",
            "        - pgsql:\n            enabled: yes",
            1,
        )
        .replacen(
            "    pgsql:\n      enabled: no",
            "    pgsql:\n      enabled: yes",
            1,
        );
    let logs = tempfile::tempdir().unwrap();
    let cfg = logs.path().join("suricata.yaml");
    std::fs::write(&cfg, yaml).unwrap();
    let d = data();
    let o = std::process::Command::new(&engine)
        .env("SURICATA_REF_CONFIG", &cfg)
        .arg("-r")
        .arg(d.join("pgsql-crafted.pcap"))
        .arg("-S")
        .arg(d.join("pgsql-crafted.rules"))
        .arg("-l")
        .arg(logs.path())
        .args(["-k", "none"])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let reference = rows(&eve(&logs.path().join("eve.json")));
    let want = want();
    for k in ["records", "alerts", "anomalies", "flows"] {
        assert_eq!(reference[k], want[k], "{k}");
    }
}
