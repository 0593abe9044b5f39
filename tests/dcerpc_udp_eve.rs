//! Connectionless DCE/RPC over UDP against the reference, Suricata 8.0.6, on a crafted
//! pcap (`tests/data/dcerpc_udp_pcap.py`: calls with fragments, both byte orders,
//! unanswered calls, the PDU types that end a flow's calls, PDUs that are no DCE/RPC):
//! the `dcerpc` records, the alerts (packet, signature, transaction, direction, the
//! alert's `dcerpc` object: `dcerpc.stub_data`, `byte_test` with `dce`, and
//! `dcerpc.iface`/`dcerpc.opnum`, which match no UDP call in Suricata 8) and the flow
//! records must be the reference's (`tests/data/dcerpc-udp.eve.json`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::Path;

use common::{eve, run_pcap};
use serde_json::{Value, json};

fn project(events: &[Value]) -> Vec<Value> {
    let mut out: Vec<Value> = events
        .iter()
        .filter_map(|e| {
            Some(match e["event_type"].as_str()? {
                "dcerpc" => json!([
                    "dcerpc",
                    e["pcap_cnt"],
                    e["src_port"],
                    e["dest_port"],
                    e["dcerpc"]
                ]),
                "alert" => json!([
                    "alert",
                    e["pcap_cnt"],
                    e["alert"]["signature_id"],
                    e["tx_id"],
                    e["direction"],
                    e["dcerpc"]
                ]),
                "flow" => json!([
                    "flow",
                    e["src_port"],
                    e["dest_port"],
                    e["app_proto"],
                    e["flow"]["tx_cnt"],
                    e["flow"]["exception_policy"]
                ]),
                _ => return None,
            })
        })
        .collect();
    out.sort_by_key(|v| v.to_string());
    out
}

#[test]
fn crafted_dcerpc_udp_is_as_the_reference() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let ours = run_pcap(
        &data,
        &data.join("dcerpc-udp.pcap"),
        &data.join("dcerpc-udp.rules"),
        &["-k", "none"],
    );
    let (got, want) = (
        project(&ours),
        project(&eve(&data.join("dcerpc-udp.eve.json"))),
    );
    for w in &want {
        assert!(got.contains(w), "missing: {w}");
    }
    for g in &got {
        assert!(want.contains(g), "not the reference's: {g}");
    }
    assert_eq!(got.len(), want.len());
}

/// The `dce` option of the byte keywords, on the corpus's DCE/RPC over TCP (a
/// little-endian PDU): on the stub data it reads in the PDU's byte order, elsewhere
/// (the packet's payload) big-endian; `byte_jump` and `byte_extract` take it too. The
/// signatures that alert are the reference's (`tests/data/dce-byte-order.rules`).
#[test]
fn dce_byte_order_is_the_pdu_s() {
    let Some(shared) = common::shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let dir = shared.join("corpus/suricata-verify/dcerpc/dcerpc-dce-stub-data-02");
    let ours = run_pcap(
        &dir,
        &dir.join("input.pcap"),
        &data.join("dce-byte-order.rules"),
        &["-k", "none"],
    );
    let mut sids = common::alert_sids(&ours);
    sids.dedup();
    // Suricata 8.0.6's alerts with these rules on this capture.
    assert_eq!(sids, [1, 3, 5, 8, 9, 10]);
}
