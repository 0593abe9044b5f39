//! WebSocket and the protocol change against the reference.
//!
//! On a crafted pcap (`tests/data/websocket_crafted_pcap.py`: frames of every kind,
//! permessage-deflate, a 2^63-byte frame, a refused upgrade, a frame sent right behind
//! the upgrade request, a CONNECT tunnel carrying TLS) the `websocket` records, the
//! alerts, the `http` records (the upgrade's, written on the change's
//! `stream (detect/log)` pseudo packets) and the flow records (`app_proto`,
//! `app_proto_orig`, `tx_cnt`) must be the reference's
//! (`tests/data/websocket-crafted.websocket.json`, from `websocket_ref.py`), but for
//! two known differences:
//!
//! - Meerkat parses a request when it arrives, Suricata (IDS mode) when the server
//!   acknowledges it: an alert on the upgrade request comes with its packet here, on the
//!   change's flush there. Alerts are compared without where they were written.
//! - A frame the client sends right behind its upgrade request (port 41006) is held by
//!   Meerkat's HTTP parser and handed to WebSocket at the 101; Suricata's loses it.
//!
//! And on the corpus's `websocket-compressed` and `websocket-control-frag`: the same
//! records and alerts. Skips the corpus part when `../shared` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{eve, run_pcap, shared};
use serde_json::{Value, json};

/// What `websocket_ref.py` keeps of a run, per client port (without 41003).
fn summary(events: &[Value]) -> BTreeMap<String, Value> {
    type Port = (Vec<String>, Vec<Value>, Vec<Value>, Value);
    let mut out: BTreeMap<String, Port> = BTreeMap::new();
    for e in events {
        let t = e["event_type"].as_str().unwrap();
        if t == "stats" {
            continue;
        }
        let port = e["src_port"]
            .as_u64()
            .unwrap()
            .max(e["dest_port"].as_u64().unwrap());
        if port == 41003 {
            continue;
        }
        let s = out.entry(port.to_string()).or_default();
        let flushed = e["pkt_src"] == "stream (detect/log)";
        match t {
            "websocket" => {
                let w: BTreeMap<String, Value> =
                    serde_json::from_value(e["websocket"].clone()).unwrap();
                s.0.push(python_dumps(&w));
            }
            "alert" => s.1.push(json!([
                e["alert"]["signature_id"],
                e["tx_id"],
                e["direction"],
                e["app_proto"],
                e["app_proto_orig"],
                e["app_proto_expected"],
                flushed
            ])),
            "http" => {
                s.2.push(json!([e["http"]["url"], e["http"]["status"], flushed]))
            }
            "flow" => {
                s.3 = json!([
                    e["app_proto"],
                    e["app_proto_orig"],
                    e["app_proto_expected"],
                    e["flow"]["tx_cnt"]
                ])
            }
            _ => {}
        }
    }
    out.into_iter()
        .map(|(k, (mut w, mut a, mut h, f))| {
            w.sort();
            a.sort_by_key(|v| v.to_string());
            h.sort_by_key(|v| v.to_string());
            (
                k,
                json!({"websocket": w, "alerts": a, "http": h, "flow": f}),
            )
        })
        .collect()
}

/// `json.dumps(obj, sort_keys=True)` as Python writes it (`, ` and `: `).
fn python_dumps(m: &BTreeMap<String, Value>) -> String {
    let parts: Vec<String> = m.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
    format!("{{{}}}", parts.join(", "))
}

/// An alert row without where it was written (the flush or a packet).
fn unplaced(a: &Value) -> Value {
    json!([a[0], a[1], a[2], a[3], a[4]])
}

#[test]
fn crafted_websocket_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: BTreeMap<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(data.join("websocket-crafted.websocket.json")).unwrap(),
    )
    .unwrap();
    let ours = run_pcap(
        &data,
        &data.join("websocket-crafted.pcap"),
        &data.join("websocket-crafted.rules"),
        &["-k", "none"],
    );
    common::assert_schema_valid(&ours);
    let got = summary(&ours);
    for (port, w) in &want {
        let g = &got[port];
        if port == "41006" {
            // The held frame: one frame more (the client's first), matched by sid 14.
            assert_eq!(g["flow"][0], "websocket", "{g}");
            assert!(
                g["alerts"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|a| a[0] == 14 && a[3] == "websocket"),
                "{g}"
            );
            continue;
        }
        assert_eq!(g["websocket"], w["websocket"], "port {port}");
        assert_eq!(g["http"], w["http"], "port {port}");
        assert_eq!(g["flow"], w["flow"], "port {port}");
        let un = |v: &Value| {
            let mut r: Vec<Value> = v.as_array().unwrap().iter().map(unplaced).collect();
            r.sort_by_key(|v| v.to_string());
            r
        };
        assert_eq!(un(&g["alerts"]), un(&w["alerts"]), "port {port}");
        // What Meerkat writes on the flush, the reference writes there too.
        for a in g["alerts"].as_array().unwrap() {
            if a[6] == true {
                assert!(w["alerts"].as_array().unwrap().contains(a), "{a}");
            }
        }
    }
    // The long frames: cut at max-payload-size and skipped, both events raised, and the
    // frame after them read in place.
    let long: Vec<&Value> = ours
        .iter()
        .filter(|e| e["src_port"] == 41003 || e["dest_port"] == 41003)
        .collect();
    let events: Vec<&Value> = long
        .iter()
        .filter(|e| e["event_type"] == "anomaly")
        .map(|e| &e["anomaly"]["event"])
        .collect();
    assert_eq!(
        events,
        ["skip_end_of_payload", "reassembly_limit_reached"],
        "{long:?}"
    );
    let frames = long
        .iter()
        .filter(|e| e["event_type"] == "websocket")
        .count();
    assert_eq!(frames, 4);
    let sids: Vec<&Value> = long
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| &e["alert"]["signature_id"])
        .collect();
    for sid in [10, 11, 13] {
        assert!(sids.contains(&&json!(sid)), "sid {sid}: {sids:?}");
    }
}

/// A real permessage-deflate implementation (Python's `websockets`, captured on
/// loopback by `tests/data/websocket_deflate_capture.py`): the library's defaults
/// (context takeover, window bits 12: the second of two equal messages is references
/// into the first), no context takeover with small windows, and the extension refused.
/// Text, binary, fragmented and multi-segment messages, ping/pong, close; rules on
/// `websocket.payload` match the inflated text only. Records, alerts (without where
/// they were written, as above), `http` records and flows as Suricata 8.0.6's
/// (`tests/data/websocket-deflate.websocket.json`), the upgrade's `101` response
/// offering `http.server` but not `http.header`, `http.header_names` or `http.start`.
#[test]
fn real_deflate_websocket_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: BTreeMap<String, Value> = serde_json::from_str(
        &std::fs::read_to_string(data.join("websocket-deflate.websocket.json")).unwrap(),
    )
    .unwrap();
    let ours = run_pcap(
        &data,
        &data.join("websocket-deflate.pcap"),
        &data.join("websocket-deflate.rules"),
        &["-k", "none"],
    );
    common::assert_schema_valid(&ours);
    let got = summary(&ours);
    assert_eq!(got.len(), 3, "{got:?}");
    let un = |v: &Value| {
        let mut r: Vec<Value> = v.as_array().unwrap().iter().map(unplaced).collect();
        r.sort_by_key(|v| v.to_string());
        r.dedup();
        r
    };
    for (port, w) in &want {
        let g = &got[port];
        assert_eq!(g["websocket"], w["websocket"], "port {port}");
        assert_eq!(g["http"], w["http"], "port {port}");
        assert_eq!(g["flow"], w["flow"], "port {port}");
        assert_eq!(un(&g["alerts"]), un(&w["alerts"]), "port {port}");
        // Each alert once: the compared rows above are deduplicated.
        assert_eq!(
            g["alerts"].as_array().unwrap().len(),
            w["alerts"].as_array().unwrap().len(),
            "port {port}"
        );
    }
}

#[test]
fn corpus_websocket_is_as_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    for (name, pcap, extra) in [
        (
            "websocket-compressed",
            "example_websocket.pcap",
            &["-k", "none", "--set", "stream.inline=true"][..],
        ),
        ("websocket-control-frag", "input.pcap", &["-k", "none"][..]),
    ] {
        let dir = shared.join("corpus/suricata-verify").join(name);
        let ours = run_pcap(&dir, &dir.join(pcap), &dir.join("test.rules"), extra);
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        let (g, w) = (summary(&ours), summary(&reference));
        assert_eq!(g.len(), w.len(), "{name}");
        for (port, w) in &w {
            let g = &g[port];
            for k in ["websocket", "http", "flow", "alerts"] {
                assert_eq!(g[k], w[k], "{name} {k}");
            }
        }
    }
}

/// What `h2c_ref.py` keeps of a run: per client port (the h2c upgrade, 41101, prior
/// knowledge on port 8000, 41102, DNS over HTTP/2, 41103), the `http` objects, the
/// `dns` events' objects, the alerts (but sid 9), the anomalies and the flow.
fn h2c_summary(events: &[Value]) -> BTreeMap<String, Value> {
    type Port = (Vec<String>, Vec<Value>, Vec<Value>, Value, Vec<String>);
    let mut out: BTreeMap<String, Port> = BTreeMap::new();
    for e in events {
        let port = e["src_port"]
            .as_u64()
            .unwrap_or(0)
            .max(e["dest_port"].as_u64().unwrap_or(0));
        if !(41101..=41103).contains(&port) {
            continue;
        }
        let s = out.entry(port.to_string()).or_default();
        match e["event_type"].as_str().unwrap() {
            "http" => {
                let h: BTreeMap<String, Value> = serde_json::from_value(e["http"].clone()).unwrap();
                s.0.push(serde_json::to_string(&h).unwrap());
            }
            "dns" => {
                let d = json!({"http": e["http"], "dns": e["dns"]});
                s.4.push(serde_json::to_string(&d).unwrap());
            }
            "alert" if e["alert"]["signature_id"] != 9 => s.1.push(json!([
                e["alert"]["signature_id"],
                e["tx_id"],
                e["direction"],
                e["app_proto"],
                e["app_proto_orig"]
            ])),
            "anomaly" => s.2.push(e["anomaly"]["event"].clone()),
            "flow" => {
                s.3 = json!([e["app_proto"], e["app_proto_orig"], e["flow"]["tx_cnt"]]);
            }
            _ => {}
        }
    }
    out.into_iter()
        .map(|(k, (mut h, mut a, mut n, f, mut d))| {
            h.sort();
            d.sort();
            a.sort_by_key(|v| v.to_string());
            n.sort_by_key(|v| v.to_string());
            (
                k,
                json!({"http": h, "dns": d, "alerts": a, "anomalies": n, "flow": f}),
            )
        })
        .collect()
}

/// HTTP/1.1 `Upgrade: h2c` (`tests/data/h2c_crafted_pcap.py`): the upgrade request is
/// HTTP/2 stream 1 (transaction 0 of the new state, its `Host` as `:authority`), the
/// flow `http2` with `app_proto_orig` `http`, and prior knowledge works on a port that
/// is not HTTP's; DNS over HTTP/2 (a POST and a GET `?dns=`) makes the flow `doh2`
/// (`app_proto_orig` `http2`), `alert dns` rules with `dns.query` match, and the
/// streams are `dns` events with their `http` and `dns` objects. Records, alerts,
/// anomalies (`invalid_http1_settings`: the `HTTP2-Settings` header is base64url,
/// which Suricata does not take) and flows as the reference's
/// (`tests/data/h2c-crafted.http.json`).
#[test]
fn crafted_h2c_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let want: BTreeMap<String, Value> =
        serde_json::from_str(&std::fs::read_to_string(data.join("h2c-crafted.http.json")).unwrap())
            .unwrap();
    let ours = run_pcap(
        &data,
        &data.join("h2c-crafted.pcap"),
        &data.join("h2c-crafted.rules"),
        &["-k", "none"],
    );
    common::assert_schema_valid(&ours);
    let got = h2c_summary(&ours);
    for (port, w) in &want {
        let g = &got[port];
        for k in ["http", "dns", "alerts", "anomalies", "flow"] {
            // Python's json.dumps spacing differs from serde's: compare as values.
            if k == "http" || k == "dns" {
                let parse = |v: &Value| -> Vec<Value> {
                    v.as_array()
                        .unwrap()
                        .iter()
                        .map(|s| serde_json::from_str(s.as_str().unwrap()).unwrap())
                        .collect()
                };
                let (mut a, mut b) = (parse(&g[k]), parse(&w[k]));
                a.sort_by_key(|v| v.to_string());
                b.sort_by_key(|v| v.to_string());
                assert_eq!(a, b, "port {port} {k}");
            } else {
                assert_eq!(g[k], w[k], "port {port} {k}");
            }
        }
    }
}

/// SMTP STARTTLS (`tests/data/smtp_starttls_pcap.py`): after the server's `220` the
/// flow is TLS (`app_proto_orig` `smtp`), the SMTP transaction is logged on the
/// change's flush, and the TLS hellos are inspected; a refused STARTTLS stays SMTP.
/// Alerts per signature, flow protocols and where the `smtp` records were written are
/// the reference's (Suricata 8.0.6 on this pcap: sids 1 x1, 2 x2, 3 x2, 4 x2), but
/// sid 3 (`smtp.tls_rejected`), which the reference alerts in both directions and
/// Meerkat's SMTP in the reply's only (SMTP's event directions, not the change's).
#[test]
fn smtp_starttls_hands_over_to_tls() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let ours = run_pcap(
        &data,
        &data.join("smtp-starttls.pcap"),
        &data.join("smtp-starttls.rules"),
        &["-k", "none"],
    );
    common::assert_schema_valid(&ours);
    let mut sids: BTreeMap<u64, usize> = BTreeMap::new();
    for e in ours.iter().filter(|e| e["event_type"] == "alert") {
        *sids
            .entry(e["alert"]["signature_id"].as_u64().unwrap())
            .or_default() += 1;
        if e["alert"]["signature_id"] == 1 {
            assert_eq!(e["app_proto"], "tls");
            assert_eq!(e["app_proto_orig"], "smtp");
        }
    }
    sids.remove(&3);
    assert_eq!(sids, BTreeMap::from([(1, 1), (2, 2), (4, 2)]));
    let flows: BTreeMap<u64, (Value, Value)> = ours
        .iter()
        .filter(|e| e["event_type"] == "flow")
        .map(|e| {
            (
                e["src_port"].as_u64().unwrap(),
                (e["app_proto"].clone(), e["app_proto_orig"].clone()),
            )
        })
        .collect();
    assert_eq!(flows[&42001], (json!("tls"), json!("smtp")));
    assert_eq!(flows[&42002], (json!("smtp"), Value::Null));
    let mut smtp: Vec<(u64, bool)> = ours
        .iter()
        .filter(|e| e["event_type"] == "smtp")
        .map(|e| {
            (
                e["src_port"].as_u64().unwrap(),
                e["pkt_src"] == "stream (detect/log)",
            )
        })
        .collect();
    smtp.sort_unstable();
    assert_eq!(smtp, [(42001, true), (42002, false)]);
}
