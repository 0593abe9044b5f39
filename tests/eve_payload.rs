//! Alert payloads as Suricata 8 logs them (`payload`, `payload-printable`, `packet` with
//! `packet_info`, `pcap-file`), checked on suricata-verify's eve-payload tests against
//! what the reference (Suricata 8.0.6) writes with those options on. Skips when
//! `../shared` is absent.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use base64::Engine as _;
use common::{eve, run_in, shared, stderr};

/// One alert the reference writes: sid, `pkt_src`, `stream`, `payload_printable`,
/// `packet` (base64).
type Want = (u64, &'static str, u64, &'static str, &'static str);

/// The reference's alerts, from `suricata-ref -k none` with `payload`,
/// `payload-printable`, `packet` and `pcap-file` on.
const CASES: &[(&str, &str, &[Want])] = &[
    (
        "eve-payload-05-tcp-data-gap",
        "tcp-simple-gap2.pcap",
        &[
            (
                4,
                "wire/pcap",
                0,
                "VERY",
                "BQQDAgEAAAECAwQFgQAABggARQAALAABAABABnTGAQEBAQICAgIwOR+QAAAAAgAAA+lQEAQAqXgAAFZFUlk=",
            ),
            (
                6,
                "wire/pcap",
                0,
                "DATA",
                "BQQDAgEAAAECAwQFgQAABggARQAALAABAABABnTGAQEBAQICAgIwOR+QAAAACgAAA+lQEAQAuYwAAERBVEE=",
            ),
            (
                1,
                "stream (flow timeout)",
                1,
                "VERY[4 bytes missing]DATA",
                "RQAAKAAAAABABnTLAQEBAQICAgIwOR+QAAAADgAAAABQAAoAUAgAAA==",
            ),
            (
                3,
                "stream (flow timeout)",
                1,
                "VERY[4 bytes missing]DATA",
                "RQAAKAAAAABABnTLAQEBAQICAgIwOR+QAAAADgAAAABQAAoAUAgAAA==",
            ),
        ],
    ),
    (
        "eve-payload-06-tcp-data-leading-gap",
        "tcp-leading-gap.pcap",
        &[
            (
                5,
                "wire/pcap",
                0,
                "GOOD",
                "BQQDAgEAAAECAwQFgQAABggARQAALAABAABABnTGAQEBAQICAgIwOR+QAAAABgAAA+lQEBAAr38AAEdPT0Q=",
            ),
            (
                6,
                "wire/pcap",
                0,
                "DATA",
                "BQQDAgEAAAECAwQFgQAABggARQAALAABAABABnTGAQEBAQICAgIwOR+QAAAACgAAA+lQEBAArYwAAERBVEE=",
            ),
            (
                2,
                "stream (flow timeout)",
                1,
                "[4 bytes missing]GOODDATA",
                "RQAAKAAAAABABnTLAQEBAQICAgIwOR+QAAAADgAAAABQAAoAUAgAAA==",
            ),
            (
                3,
                "stream (flow timeout)",
                1,
                "[4 bytes missing]GOODDATA",
                "RQAAKAAAAABABnTLAQEBAQICAgIwOR+QAAAADgAAAABQAAoAUAgAAA==",
            ),
        ],
    ),
    (
        "eve-payload-01-tcp-exact-overlap",
        "tcp-overlap.pcap",
        &[
            (
                4,
                "wire/pcap",
                0,
                "GOOD",
                "BQQDAgEAAAECAwQFgQAABggARQAALAABAABABnTGAQEBAQICAgIwOR+QAAAAAgAAA+lQEBAAr4MAAEdPT0Q=",
            ),
            (
                3,
                "wire/pcap",
                0,
                "EVIL",
                "BQQDAgEAAAECAwQFgQAABggARQAALAABAABABnTGAQEBAQICAgIwOR+QAAAAAgAAA+lQEBAAt3QAAEVWSUw=",
            ),
            (
                2,
                "stream (flow timeout)",
                1,
                "GOOD",
                "RQAAKAAAAABABnTLAQEBAQICAgIwOR+QAAAABgAAAABQAAoAUBAAAA==",
            ),
        ],
    ),
];

#[test]
fn alert_payload_packet_and_pcap_filename_match_the_reference() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let corpus = shared.join("corpus/suricata-verify");
    for (test, pcap, want) in CASES {
        let dir = corpus.join(test);
        let rules = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|x| x == "rules"))
            .unwrap();
        let logs = tempfile::tempdir().unwrap();
        let pcap_path = dir.join(pcap);
        let o = run_in(
            logs.path(),
            &[
                "run",
                "-q",
                "-r",
                pcap_path.to_str().unwrap(),
                "-S",
                rules.to_str().unwrap(),
                "-l",
                logs.path().to_str().unwrap(),
                "-k",
                "none",
                "--set",
                "outputs.eve-log.types.0.alert.payload=yes",
                "--set",
                "outputs.eve-log.types.0.alert.payload-printable=yes",
                "--set",
                "outputs.eve-log.types.0.alert.packet=yes",
                "--set",
                "outputs.eve-log.pcap-file=yes",
            ],
        );
        assert!(o.status.success(), "{test}: {}", stderr(&o));
        let raw = std::fs::read_to_string(logs.path().join("eve.json")).unwrap();
        let events = eve(&logs.path().join("eve.json"));
        let alerts: Vec<_> = events
            .iter()
            .filter(|e| e["event_type"] == "alert")
            .collect();
        assert_eq!(alerts.len(), want.len(), "{test}: {alerts:#?}");
        for &(sid, src, stream, printable, packet) in *want {
            let a = alerts
                .iter()
                .find(|a| a["alert"]["signature_id"] == sid)
                .unwrap_or_else(|| panic!("{test}: no alert for sid {sid}"));
            let b64 = base64::engine::general_purpose::STANDARD.encode(printable);
            assert_eq!(a["pkt_src"], src, "{test} sid {sid}");
            assert_eq!(a["stream"], stream, "{test} sid {sid}");
            assert_eq!(a["payload"], b64.as_str(), "{test} sid {sid}");
            assert_eq!(a["payload_printable"], printable, "{test} sid {sid}");
            assert_eq!(a["packet"], packet, "{test} sid {sid}");
            assert_eq!(
                a["packet_info"],
                serde_json::json!({"linktype": 1, "linktype_name": "EN10MB"}),
                "{test} sid {sid}"
            );
            assert_eq!(
                a["pcap_filename"],
                pcap_path.to_str().unwrap(),
                "{test} sid {sid}"
            );
            // Suricata's order: ... flow, payload, payload_printable, stream, packet,
            // packet_info, pcap_filename, last. Read from the line as written (a parsed
            // `serde_json::Value` keeps its keys sorted).
            let line = raw
                .lines()
                .find(|l| {
                    l.contains("\"event_type\":\"alert\"")
                        && l.contains(&format!("\"signature_id\":{sid},"))
                })
                .unwrap_or_else(|| panic!("{test}: no alert line for sid {sid}"));
            let at: Vec<usize> = [
                "\"payload\":",
                "\"payload_printable\":",
                "\"stream\":",
                "\"packet\":",
                "\"packet_info\":",
                "\"pcap_filename\":",
            ]
            .iter()
            .map(|k| {
                line.find(k)
                    .unwrap_or_else(|| panic!("{test} sid {sid}: no {k} in {line}"))
            })
            .collect();
            assert!(
                at.windows(2).all(|w| w[0] < w[1]),
                "{test} sid {sid}: {line}"
            );
            let last = &line[at[5]..];
            assert!(
                last.ends_with("\"}") && last[16..].find("\":").is_none(),
                "{test} sid {sid}: pcap_filename is not the last key: {line}"
            );
        }
        // Every record names the file (Suricata adds it to all of them).
        for e in &events {
            assert_eq!(e["pcap_filename"], pcap_path.to_str().unwrap(), "{e}");
        }
        common::assert_schema_valid(&events);
    }
}

#[test]
fn without_the_options_alerts_carry_none_of_it() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let dir = shared.join("corpus/suricata-verify/eve-payload-05-tcp-data-gap");
    let logs = tempfile::tempdir().unwrap();
    let o = run_in(
        logs.path(),
        &[
            "run",
            "-q",
            "-r",
            dir.join("tcp-simple-gap2.pcap").to_str().unwrap(),
            "-S",
            dir.join("test.rules").to_str().unwrap(),
            "-l",
            logs.path().to_str().unwrap(),
            "-k",
            "none",
        ],
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let events = eve(&logs.path().join("eve.json"));
    assert!(events.iter().any(|e| e["event_type"] == "alert"));
    for e in &events {
        for k in [
            "payload",
            "payload_printable",
            "stream",
            "packet",
            "packet_info",
            "pcap_filename",
        ] {
            assert!(e.get(k).is_none(), "{k} in {e}");
        }
    }
}

#[test]
fn async_oneside_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let o = run_in(
        dir.path(),
        &["run", "-r", "x.pcap", "--set", "stream.async-oneside=yes"],
    );
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("stream.async-oneside"),
        "{}",
        stderr(&o)
    );
}
