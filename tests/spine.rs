//! The spine end to end: the real binary, its processes, its EVE, its errors.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::net::IpAddr;
use std::path::Path;

use common::*;
use meerkat_synth::pcap::{self, Format};
use meerkat_synth::{Frame, packet, sample, session};

const SAMPLE_SIDS: [u64; 8] = [
    1000001, 1000002, 1000003, 1000004, 1000005, 1000006, 1000007, 1000008,
];

#[test]
fn no_arguments_runs_the_embedded_sample() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_in(dir.path(), &[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(
        summary.starts_with("meerkat: 57 packets, 8 alerts,"),
        "summary: {summary}"
    );
    let events = eve(&dir.path().join("meerkat-logs/eve.json"));
    let mut sids = alert_sids(&events);
    sids.dedup();
    assert_eq!(
        sids, SAMPLE_SIDS,
        "every sample rule but the silent one fires once"
    );
    assert_schema_valid(&events);
    // A second run starts a fresh eve.json rather than appending to the sample's.
    let again = run_in(dir.path(), &[]);
    assert!(again.status.success());
    assert_eq!(
        eve(&dir.path().join("meerkat-logs/eve.json")).len(),
        events.len()
    );
}

/// Runs `meerkat run` on `pcap` with `rules` (text) and extra args; returns the EVE events.
fn run_pcap(
    dir: &Path,
    pcap: &Path,
    rules: &str,
    extra: &[&str],
) -> (std::process::Output, Vec<serde_json::Value>) {
    let rules_path = dir.join("test.rules");
    std::fs::write(&rules_path, rules).unwrap();
    let logs = dir.join(format!(
        "logs-{}",
        pcap.file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&logs).unwrap();
    let mut args = vec![
        "run",
        "-r",
        pcap.to_str().unwrap(),
        "-S",
        rules_path.to_str().unwrap(),
        "-l",
        logs.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let out = run_in(dir, &args);
    let eve_path = logs.join("eve.json");
    let events = if eve_path.exists() {
        eve(&eve_path)
    } else {
        Vec::new()
    };
    (out, events)
}

#[test]
fn roles_run_as_separate_processes() {
    let dir = tempfile::tempdir().unwrap();
    let runtime = dir.path().join("runtime");
    let pcap = dir.path().join("sample.pcap");
    std::fs::write(&pcap, sample::sample_pcap()).unwrap();
    let set = format!("runtime-dir={}", runtime.display());
    let (out, events) = run_pcap(
        dir.path(),
        &pcap,
        sample::SAMPLE_RULES,
        &["--workers", "2", "--set", &set],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(alert_sids(&events).len(), 8);
    // Each role created its counter page, stamped with its own pid; with an explicit
    // runtime-dir the supervisor leaves them in place.
    let pid = |role: &str| {
        meerkat_shm::CounterReader::open(&runtime.join(format!("counters-{role}")))
            .unwrap_or_else(|e| panic!("{role}: {e}"))
            .pid()
    };
    let mut pids = vec![
        pid("capture"),
        pid("detect-0"),
        pid("detect-1"),
        pid("eve-writer"),
    ];
    pids.sort_unstable();
    pids.dedup();
    assert_eq!(pids.len(), 4, "four distinct role processes");
    // Both workers saw packets: the flow hash spreads the sample's flows.
    let reader = meerkat_shm::CounterReader::open(&runtime.join("counters-capture")).unwrap();
    assert!(reader.get("capture.worker.0.packets").unwrap() > 0);
    assert!(reader.get("capture.worker.1.packets").unwrap() > 0);
}

fn udp_frame(payload: &[u8], ts_ns: u64) -> Frame {
    let s: IpAddr = "10.1.0.1".parse().unwrap();
    let d: IpAddr = "10.2.0.2".parse().unwrap();
    let ip = packet::ip(
        s,
        d,
        packet::PROTO_UDP,
        64,
        1,
        &packet::udp(s, d, 4000, 53, payload),
    );
    Frame {
        ts_ns,
        data: session::frame_ip(s, d, None, &ip),
    }
}

const MARKER_RULE: &str =
    "alert udp any any -> any 53 (msg:\"marker\"; content:\"MARKER\"; sid:7; rev:1;)\n";

#[test]
fn every_capture_format_gives_the_same_alerts() {
    let dir = tempfile::tempdir().unwrap();
    let frames: Vec<Frame> = (0..20)
        .map(|i| {
            udp_frame(
                if i % 4 == 0 {
                    b"..MARKER.."
                } else {
                    b"nothing"
                },
                1_700_000_000_000_000_000 + i * 1000,
            )
        })
        .collect();
    for (n, format) in Format::ALL.iter().enumerate() {
        let p = dir.path().join(format!("f{n}.pcap"));
        std::fs::write(
            &p,
            pcap::to_bytes(&frames, *format, pcap::LINKTYPE_ETHERNET),
        )
        .unwrap();
        let (out, events) = run_pcap(dir.path(), &p, MARKER_RULE, &["--workers", "1"]);
        assert!(out.status.success(), "{format:?}: {}", stderr(&out));
        assert_eq!(alert_sids(&events), vec![7; 5], "{format:?}");
        assert_schema_valid(&events);
    }
    // Raw IPv4 (228), raw IP (101) and Linux cooked (113) link types.
    let raw: Vec<Frame> = frames
        .iter()
        .map(|f| Frame {
            ts_ns: f.ts_ns,
            data: f.data[14..].to_vec(),
        })
        .collect();
    let sll: Vec<Frame> = raw
        .iter()
        .map(|f| {
            let mut d = vec![0u8; 14];
            d.extend_from_slice(&0x0800u16.to_be_bytes());
            d.extend_from_slice(&f.data);
            Frame {
                ts_ns: f.ts_ns,
                data: d,
            }
        })
        .collect();
    for (name, link, fr) in [
        ("ipv4.pcap", pcap::LINKTYPE_IPV4, &raw),
        ("raw.pcap", pcap::LINKTYPE_RAW, &raw),
        ("sll.pcap", pcap::LINKTYPE_LINUX_SLL, &sll),
    ] {
        let p = dir.path().join(name);
        std::fs::write(
            &p,
            pcap::to_bytes(fr, Format::Micro { big_endian: false }, link),
        )
        .unwrap();
        let (out, events) = run_pcap(dir.path(), &p, MARKER_RULE, &["--workers", "2"]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(alert_sids(&events), vec![7; 5], "{name}");
    }
}

#[test]
fn truncated_pcap_keeps_what_came_before_and_names_the_offset() {
    let dir = tempfile::tempdir().unwrap();
    let frames: Vec<Frame> = (0..10)
        .map(|i| udp_frame(b"MARKER", 1_000_000_000 * (i + 1)))
        .collect();
    let mut bytes = pcap::to_bytes(&frames, Format::Micro { big_endian: false }, 1);
    bytes.truncate(bytes.len() - 5);
    let p = dir.path().join("cut.pcap");
    std::fs::write(&p, &bytes).unwrap();
    let (out, events) = run_pcap(dir.path(), &p, MARKER_RULE, &["--workers", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(alert_sids(&events), vec![7; 9]);
    let err = stderr(&out);
    let record_offset = bytes.len() + 5 - frames[9].data.len() - 16;
    assert!(
        err.contains("cut.pcap") && err.contains(&format!("offset {record_offset}")),
        "stderr names the file and offset: {err}"
    );
    assert!(
        stdout(&out).contains("1 input file errors"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn a_bad_tcp_checksum_keeps_a_segment_out_of_the_stream_unless_k_none() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = session::TcpSession::new(
        "10.1.0.1:40000".parse().unwrap(),
        "10.2.0.2:80".parse().unwrap(),
        1_000_000_000,
    );
    s.handshake()
        .client_sends(b"hello MARKER")
        .server_sends(b"ok")
        .close();
    let mut frames = s.into_frames();
    // Frame 3 is the client's data segment: corrupt one payload byte after the
    // checksum was computed (the marker itself stays intact).
    let f = &mut frames[3].data;
    let n = f.len();
    f[n - 12] ^= 0x20;
    let p = dir.path().join("bad.pcap");
    std::fs::write(
        &p,
        pcap::to_bytes(&frames, Format::Micro { big_endian: false }, 1),
    )
    .unwrap();
    let rule = "alert tcp any any -> any any (msg:\"m\"; flow:only_stream; content:\"MARKER\"; sid:7; rev:1;)\n";
    let (out, events) = run_pcap(dir.path(), &p, rule, &["--workers", "1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        alert_sids(&events).is_empty(),
        "a bad checksum keeps the data out of the stream"
    );
    let (out, events) = run_pcap(dir.path(), &p, rule, &["--workers", "1", "-k", "none"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(alert_sids(&events), vec![7], "-k none inspects it");
}

fn assert_clean_error(out: &std::process::Output, needle: &str) {
    assert!(!out.status.success(), "expected failure");
    let err = stderr(out);
    assert!(
        err.contains(needle),
        "stderr should mention {needle:?}: {err}"
    );
    assert!(!err.contains("panicked"), "no panic: {err}");
}

#[test]
fn input_and_config_errors_are_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = d.join("sample.pcap");
    std::fs::write(&pcap, sample::sample_pcap()).unwrap();
    let rules = d.join("r.rules");
    std::fs::write(&rules, sample::SAMPLE_RULES).unwrap();
    let (p, r) = (pcap.to_str().unwrap(), rules.to_str().unwrap());
    let logs = d.join("logs");
    let l = logs.to_str().unwrap();

    let out = run_in(d, &["run", "-r", "/nonexistent/x.pcap", "-S", r, "-l", l]);
    assert_clean_error(&out, "/nonexistent/x.pcap");
    assert_eq!(out.status.code(), Some(2));

    // A rule file that is not there is a warning naming it, as in Suricata (issue 27):
    // the run goes on without rules.
    let out = run_in(d, &["run", "-r", p, "-S", "/nonexistent/x.rules", "-l", l]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("No rule files match the pattern /nonexistent/x.rules"),
        "{}",
        stderr(&out)
    );

    std::fs::write(d.join("not-a-dir"), b"").unwrap();
    let bad_log_dir = d.join("not-a-dir/sub");
    // (arguments after `run -r PCAP -S RULES`, what the error must name)
    let cases: [(&[&str], &str); 4] = [
        (&["-l", bad_log_dir.to_str().unwrap()], "not-a-dir"),
        (
            &["-l", l, "--set", "stream.midstreem=yes"],
            "unknown config key: stream.midstreem",
        ),
        (&["-l", l, "--set", "stream.midstream=perhaps"], "midstream"),
        (
            &["-l", l, "-c", "/nonexistent/meerkat.yaml"],
            "/nonexistent/meerkat.yaml",
        ),
    ];
    for (extra, needle) in cases {
        let mut args = vec!["run", "-r", p, "-S", r];
        args.extend_from_slice(extra);
        assert_clean_error(&run_in(d, &args), needle);
    }

    let out = run_in(d, &["run", "-S", r, "-l", l]);
    assert_clean_error(&out, "-r");
}

#[test]
fn suricata_keys_are_accepted_with_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = d.join("sample.pcap");
    std::fs::write(&pcap, sample::sample_pcap()).unwrap();
    let (out, events) = run_pcap(
        d,
        &pcap,
        sample::SAMPLE_RULES,
        &[
            "--set",
            "app-layer.protocols.http.libhtp.default-config.response-body-decompress-layer-limit=3",
            "--set",
            "stream.memcap=1gb",
            "--runmode",
            "single",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("stream.memcap"), "{err}");
    assert_eq!(alert_sids(&events).len(), 8);
}

#[test]
fn a_role_that_cannot_start_stops_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = d.join("sample.pcap");
    std::fs::write(&pcap, sample::sample_pcap()).unwrap();
    let logs = d.join("logs");
    // eve.json is a directory: the eve-writer cannot open its output.
    std::fs::create_dir_all(logs.join("eve.json")).unwrap();
    let rules = d.join("r.rules");
    std::fs::write(&rules, sample::SAMPLE_RULES).unwrap();
    let runtime = d.join("rt");
    let set = format!("runtime-dir={}", runtime.display());
    let out = run_in(
        d,
        &[
            "run",
            "-r",
            pcap.to_str().unwrap(),
            "-S",
            rules.to_str().unwrap(),
            "-l",
            logs.to_str().unwrap(),
            "--set",
            &set,
        ],
    );
    assert_clean_error(&out, "eve-writer");
    assert_eq!(out.status.code(), Some(1));
    // No role is left running: nobody holds the rings or the socket.
    assert!(
        !runtime.join("eve.sock").exists()
            || std::os::unix::net::UnixStream::connect(runtime.join("eve.sock")).is_err()
    );
}

#[test]
fn config_check_and_rules_check() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let cfg = d.join("m.yaml");
    std::fs::write(
        &cfg,
        "%YAML 1.1\n---\nstream:\n  midstream: yes\n  memcap: 1gb\n",
    )
    .unwrap();
    let out = run_in(d, &["config", "check", cfg.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(": ok"));
    std::fs::write(&cfg, "stream:\n  midstreem: yes\n").unwrap();
    let out = run_in(d, &["config", "check", cfg.to_str().unwrap()]);
    assert_clean_error(&out, "stream.midstreem");

    let rules = d.join("r.rules");
    std::fs::write(
        &rules,
        "alert tcp any any -> any any (msg:\"ok\"; content:\"a\"; sid:1;)\n\
         alert tcp any any -> any any (msg:\"bad\"; frobnicate; sid:2;)\n",
    )
    .unwrap();
    let out = run_in(d, &["rules", "check", rules.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(
        text.contains("r.rules:2 sid 2 keyword `frobnicate`"),
        "{text}"
    );
    assert!(text.contains("1 rules loaded, 1 failed"), "{text}");
}

#[test]
fn schema_check_is_real() {
    if shared().is_none() {
        eprintln!("skipping: ../shared is absent");
        return;
    }
    let bad = serde_json::json!({"event_type": "alert", "timestamp": "yesterday"});
    let caught = std::panic::catch_unwind(|| assert_schema_valid(&[bad]));
    assert!(
        caught.is_err(),
        "a malformed timestamp must fail validation"
    );
}
