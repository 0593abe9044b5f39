//! HTTP files sent in parts (`206 Partial Content`) against the reference:
//! `tests/data/http-byterange.pcap` (made by `http_byterange_pcap.py`: parts in order on
//! one connection, out of order over two, overlapping, duplicated, at two hosts,
//! without a host, whole-file, unsatisfied and invalid ranges, a file in three parts
//! over three connections, last part first). The reference's EVE is
//! `http-byterange.suricata-8.0.6-eve.json` (md5 and sha256 forced, as
//! `http-byterange.yaml` asks of Meerkat).
//!
//! Every `fileinfo` (with its `http` object, `content_range` included), `http` record,
//! anomaly and alert is compared, per client port; the five files the reference
//! reassembles from their parts (no `start`/`end`, the whole size and digest) are
//! among them.
//!
//! One worker: the reassembly table is a worker's (the reference's is the engine's),
//! so parts of one file on flows of different workers are not merged.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{assert_schema_valid, eve, run_pcap};

fn client_port(e: &serde_json::Value) -> u64 {
    if e["dest_port"] == 80 {
        e["src_port"].as_u64().unwrap()
    } else {
        e["dest_port"].as_u64().unwrap()
    }
}

/// The compared records, sorted.
fn summary(events: &[serde_json::Value]) -> Vec<String> {
    let mut out: Vec<String> = events
        .iter()
        .filter_map(|e| {
            let port = client_port(e);
            let r = match e["event_type"].as_str().unwrap() {
                "fileinfo" => serde_json::json!({
                    "fileinfo": e["fileinfo"], "http": e["http"],
                }),
                "http" => serde_json::json!({"tx_id": e["tx_id"], "http": e["http"]}),
                "anomaly" => serde_json::json!({"anomaly": e["anomaly"], "tx_id": e["tx_id"]}),
                "alert" => serde_json::json!({
                    "sid": e["alert"]["signature_id"], "tx_id": e["tx_id"],
                }),
                _ => return None,
            };
            Some(format!("{port} {r}"))
        })
        .collect();
    out.sort();
    out
}

#[test]
fn byterange_files_http_records_and_alerts_are_the_references() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let got = run_pcap(
        &data,
        &data.join("http-byterange.pcap"),
        &data.join("http-byterange.rules"),
        &[
            "-k",
            "none",
            "-c",
            data.join("http-byterange.yaml").to_str().unwrap(),
            "--set",
            "detect.workers=1",
        ],
    );
    assert_schema_valid(&got);
    let want = eve(&data.join("http-byterange.suricata-8.0.6-eve.json"));
    // A reassembled file: no range, named as a file that has parts (with a range).
    let merged = |evs: &[serde_json::Value]| {
        let files: Vec<_> = evs
            .iter()
            .filter(|e| e["event_type"] == "fileinfo")
            .collect();
        let name = |e: &serde_json::Value| e["fileinfo"]["filename"].as_str().unwrap().to_string();
        let parts: Vec<String> = files
            .iter()
            .filter(|e| e["fileinfo"].get("start").is_some())
            .map(|e| name(e))
            .collect();
        files
            .iter()
            .filter(|e| e["fileinfo"].get("start").is_none() && parts.contains(&name(e)))
            .map(|e| name(e))
            .collect::<Vec<_>>()
    };
    let mut m = merged(&want);
    m.sort();
    let mut mg = merged(&got);
    mg.sort();
    assert_eq!(m, mg, "reassembled files");
    assert_eq!(
        m,
        [
            "/dup.bin",
            "/inorder.bin",
            "/multi.bin",
            "/ooo.bin",
            "/overlap.bin"
        ],
        "the reference's reassembled files"
    );
    let (g, w) = (summary(&got), summary(&want));
    assert_eq!(w.len(), 48, "the reference's records");
    let missing: Vec<_> = w.iter().filter(|x| !g.contains(x)).collect();
    let extra: Vec<_> = g.iter().filter(|x| !w.contains(x)).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "reference only: {missing:#?}\nmeerkat only: {extra:#?}"
    );
}
