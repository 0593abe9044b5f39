//! SSH against the reference: on the corpus's SSH pcaps the `ssh` records Meerkat
//! writes must be the reference's (`suricata-8.0.6-eve.json`), value for value and in
//! order, with HASSH only where a hassh rule turned it on (`ssh-hassh-reassembled`),
//! and every line valid against the EVE schema; the alerts per signature must match
//! too. Packet numbers are left out: Meerkat parses a segment when it arrives,
//! Suricata when it is acknowledged, so a record can be a packet apart.
//! Skips when `../shared` is absent. Small pcaps: well under a second.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{alert_sids, assert_schema_valid, eve, records, run_pcap, shared};

const TESTS: &[&str] = &[
    "ssh-banner-only",
    "ssh-frames",
    "ssh-hassh-reassembled",
    "ssh-newkeys",
];

#[test]
fn ssh_records_are_the_references() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let set = shared.join("corpus/suricata-verify");
    for name in TESTS {
        let dir = set.join(name);
        let pcap = dir.join("input.pcap");
        let ours = run_pcap(&dir, &pcap, &dir.join("test.rules"), &["-k", "none"]);
        assert_schema_valid(&ours);
        let reference = eve(&dir.join("suricata-8.0.6-eve.json"));
        assert!(!records(&reference, "ssh").is_empty(), "{name}");
        assert_eq!(
            records(&ours, "ssh"),
            records(&reference, "ssh"),
            "{name}: ssh records"
        );
        assert_eq!(alert_sids(&ours), alert_sids(&reference), "{name}: alerts");
    }
}

/// The section's `hassh` turns HASSH on without a rule, as Suricata's
/// `app-layer.protocols.ssh.hassh`.
#[test]
fn hassh_from_the_config() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/ssh-newkeys");
    let ours = run_pcap(
        &dir,
        &dir.join("input.pcap"),
        std::path::Path::new("/dev/null"),
        &["-k", "none", "--set", "app-layer.protocols.ssh.hassh=yes"],
    );
    assert_schema_valid(&ours);
    let r = records(&ours, "ssh");
    assert_eq!(r.len(), 1, "{r:?}");
    for side in ["client", "server"] {
        let h = &r[0][side]["hassh"];
        assert_eq!(h["hash"].as_str().map(str::len), Some(32), "{side}: {h}");
        assert!(h["string"].as_str().unwrap().contains(';'), "{side}: {h}");
    }
}

/// Once both sides sent NEWKEYS the flow's payload is inspected no more, after one
/// flush of both raw streams (Suricata's detect/log pseudo packets), as the reference
/// does: with a stream rule and a packet-only rule per direction matching any NUL byte
/// (a fast pattern), the alerts (packet number or flush, signature) are the reference's
/// on the three SSH pcaps that reach NEWKEYS. Before, every encrypted packet alerted
/// and the flush was missing.
#[test]
fn newkeys_ends_payload_inspection_as_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let rules = tmp.path().join("probe.rules");
    std::fs::write(
        &rules,
        "alert tcp any any -> any any (flow:to_server; content:\"|00|\"; sid:1;)\n\
         alert tcp any any -> any any (flow:to_client; content:\"|00|\"; sid:2;)\n\
         alert tcp any any -> any any (flow:to_server; dsize:>0; content:\"|00|\"; sid:3;)\n\
         alert tcp any any -> any any (flow:to_client; dsize:>0; content:\"|00|\"; sid:4;)\n",
    )
    .unwrap();
    // What suricata-ref writes for these rules (pcap_cnt, or 0 for a flush).
    let frames: &[(u64, u64)] = &[(7, 4), (9, 3), (11, 3), (13, 4), (14, 3), (0, 2), (0, 1)];
    let hassh: &[(u64, u64)] = &[
        (6, 3),
        (7, 4),
        (8, 1),
        (8, 3),
        (9, 3),
        (10, 3),
        (11, 3),
        (12, 3),
        (14, 3),
        (15, 4),
        (16, 4),
        (17, 3),
        (0, 2),
        (0, 1),
    ];
    for (name, want) in [
        ("ssh-frames", frames),
        ("ssh-newkeys", frames),
        ("ssh-hassh-reassembled", hassh),
    ] {
        let dir = shared.join("corpus/suricata-verify").join(name);
        let ours = run_pcap(&dir, &dir.join("input.pcap"), &rules, &["-k", "none"]);
        let got: Vec<(u64, u64)> = ours
            .iter()
            .filter(|e| e["event_type"] == "alert")
            .map(|e| {
                let flush = e["pkt_src"] == "stream (detect/log)";
                (
                    if flush {
                        0
                    } else {
                        e["pcap_cnt"].as_u64().unwrap()
                    },
                    e["alert"]["signature_id"].as_u64().unwrap(),
                )
            })
            .collect();
        assert_eq!(got, want, "{name}");
    }
}
