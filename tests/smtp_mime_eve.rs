//! SMTP with MIME against the reference on real mail: `tests/data/smtp-mime.pcap`
//! (Postfix and Python clients on loopback, made by `smtp_mime_pcap.py`: plain text,
//! multipart with base64, quoted-printable, 7bit and 8bit attachments, nested
//! multiparts and `message/rfc822`, RFC 2047 and RFC 2231 names, folded headers, many
//! recipients, a `Received` chain, URLs of every kind, uuencode, long lines, broken
//! base64 and quoted-printable, parts without names, pipelining, `RSET`, `BDAT`, a
//! bare-LF message with a long boundary, a long file name, escaped quotes and nested
//! `message/rfc822`, messages without headers or without a body, a repeated `HELO`
//! and `MAIL FROM`, and a message cut short), with the email keywords of
//! `smtp-mime.rules`. The reference's EVE is `smtp-mime.suricata-8.0.6-eve.json`
//! (`../shared/tools/suricata-ref -k none`).
//!
//! Per flow, in order: the `smtp` records (`tx_id`, `smtp`, `email`) and the
//! `fileinfo` records (`fileinfo`, with the `email` they carry); the app-layer
//! anomalies (event and transaction, per flow); the alerts per signature. Timestamps,
//! flow ids and packet fields are left out.
//!
//! Two known differences are left out:
//! - The `BDAT` session (helo `bdat.example.test`) cuts its first chunk in the middle
//!   of a line; Suricata counts a chunk's bytes by lines, so the line that runs into
//!   the next `BDAT` command overruns the chunk (`bdat_chunk_len_exceeded`) and its
//!   parser stops for the rest of the flow: it logs one transaction with what came
//!   before. Meerkat counts the chunk's bytes and parses the whole session. That
//!   flow's records and anomalies are left out (its alerts are compared).
//! - On the message with four attachments (`MAIL FROM:<carol@example.org>`, the
//!   flow's second transaction), the reference's file keywords see less than
//!   Meerkat's: no `filename`/`fileext`/`filesize` rule matches any of its four
//!   files, and `file.data` neither starts nor ends where the PDF's bytes do, while
//!   `file.data` contents inside them match as in Meerkat. This depends on the rule
//!   set, not the traffic: with only sids 1001, 1120, 1121, 1124, 1132, 1150, 1160,
//!   1170-1173 loaded, the reference matches them on this message as Meerkat does
//!   (checked on a recapture of it, alone and after another mail); with all of
//!   `smtp-mime.rules` it does not, even with every `file.name` rule left out. It is
//!   the reference's detection engine, not MIME (the `fileinfo` records, names and
//!   sizes, are equal). Those signatures ([`MIXED_FILE_SIDS`]) are left out for that
//!   transaction.
//!
//! Small pcap: well under a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{assert_schema_valid, eve, run_pcap};

/// The client's port of a record (the server is on 25).
fn client_port(e: &serde_json::Value) -> u64 {
    if e["dest_port"] == 25 {
        e["src_port"].as_u64().unwrap()
    } else {
        e["dest_port"].as_u64().unwrap()
    }
}

/// The client ports of the BDAT session (see the module doc).
fn bdat_ports(events: &[serde_json::Value]) -> Vec<u64> {
    events
        .iter()
        .filter(|e| e["event_type"] == "smtp" && e["smtp"]["helo"] == "bdat.example.test")
        .map(client_port)
        .collect()
}

/// File-keyword signatures whose alerts on the four-attachment message differ (see
/// the module doc).
const MIXED_FILE_SIDS: &[u64] = &[1132, 1139, 1150, 1160, 1170, 1171, 1173];

/// The client port of the four-attachment message's flow.
fn mixed_port(events: &[serde_json::Value]) -> Option<u64> {
    events
        .iter()
        .find(|e| e["event_type"] == "smtp" && e["smtp"]["mail_from"] == "<carol@example.org>")
        .map(client_port)
}

#[derive(Debug, PartialEq)]
struct Summary {
    /// Per flow and event type: its records, in order.
    records: BTreeMap<(u64, &'static str), Vec<String>>,
    /// Per flow: its anomalies, in order.
    anomalies: BTreeMap<u64, Vec<String>>,
    alerts: BTreeMap<u64, usize>,
}

fn summary(events: &[serde_json::Value]) -> Summary {
    let bdat = bdat_ports(events);
    let mixed = mixed_port(events);
    let mut s = Summary {
        records: BTreeMap::new(),
        anomalies: BTreeMap::new(),
        alerts: BTreeMap::new(),
    };
    for e in events {
        let t = e["event_type"].as_str().unwrap();
        if matches!(t, "smtp" | "fileinfo" | "anomaly") && bdat.contains(&client_port(e)) {
            continue;
        }
        match t {
            "smtp" => {
                let r = serde_json::json!({
                    "tx_id": e["tx_id"], "smtp": e["smtp"], "email": e["email"],
                });
                s.records
                    .entry((client_port(e), "smtp"))
                    .or_default()
                    .push(r.to_string());
            }
            "fileinfo" => {
                let r = serde_json::json!({
                    "fileinfo": e["fileinfo"], "smtp": e["smtp"], "email": e["email"],
                });
                s.records
                    .entry((client_port(e), "fileinfo"))
                    .or_default()
                    .push(r.to_string());
            }
            "anomaly" => {
                s.anomalies
                    .entry(client_port(e))
                    .or_default()
                    .push(format!("{} {}", e["anomaly"], e["tx_id"]));
            }
            "alert" => {
                let sid = e["alert"]["signature_id"].as_u64().unwrap();
                if Some(client_port(e)) == mixed
                    && e["tx_id"] == 1
                    && MIXED_FILE_SIDS.contains(&sid)
                {
                    continue;
                }
                *s.alerts
                    .entry(e["alert"]["signature_id"].as_u64().unwrap())
                    .or_default() += 1;
            }
            _ => {}
        }
    }
    s
}

#[test]
fn smtp_mime_records_anomalies_and_alerts_are_the_references() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let got = run_pcap(
        &data,
        &data.join("smtp-mime.pcap"),
        &data.join("smtp-mime.rules"),
        &["-k", "none"],
    );
    assert_schema_valid(&got);
    let want = eve(&data.join("smtp-mime.suricata-8.0.6-eve.json"));
    let (got, want) = (summary(&got), summary(&want));
    // Eight flows with smtp records (the BDAT one left out), seven with fileinfo ones.
    assert_eq!(want.records.len(), 15, "the reference's flows");
    for (key, w) in &want.records {
        let g = got.records.get(key).map(Vec::as_slice).unwrap_or_default();
        for (i, (g, w)) in g.iter().zip(w).enumerate() {
            assert_eq!(g, w, "flow {key:?}, record {i}");
        }
        assert_eq!(g.len(), w.len(), "flow {key:?}: records");
    }
    assert_eq!(got.records.len(), want.records.len(), "flows");
    assert_eq!(got.anomalies, want.anomalies, "anomalies");
    let differing: Vec<_> = want
        .alerts
        .keys()
        .chain(got.alerts.keys())
        .filter(|sid| got.alerts.get(sid) != want.alerts.get(sid))
        .map(|sid| (sid, want.alerts.get(sid), got.alerts.get(sid)))
        .collect();
    assert!(
        differing.is_empty(),
        "(sid, reference, meerkat): {differing:?}"
    );
}
