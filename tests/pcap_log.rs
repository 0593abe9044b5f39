//! `outputs.pcap-log` (`conditional: all`) end to end: `meerkat run -r` writes the
//! packets handed to the workers into pcap files named as Suricata 8 names them, which
//! the project's reader and `tcpdump -r` both read back as the input's packets; with a
//! BPF filter on the command line, only the packets it keeps.

#![allow(clippy::unwrap_used)]

mod capture_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use capture_common::*;

fn run(extra: &[&str], log: &Path) {
    let out = Command::new(MEERKAT)
        .arg("run")
        .arg("-r")
        .arg(repo("sample/sample.pcap"))
        .arg("-S")
        .arg(repo("sample/sample.rules"))
        .arg("-l")
        .arg(log)
        .args(COMMON)
        .args(extra)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn pcaps(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("log."))
        .collect();
    v.sort();
    v
}

/// Packets tcpdump reads from `file`, or `None` without tcpdump.
fn tcpdump_count(file: &Path) -> Option<usize> {
    let out = Command::new("tcpdump")
        .arg("-n")
        .arg("-r")
        .arg(file)
        .stderr(Stdio::null())
        .output()
        .ok()?;
    assert!(out.status.success(), "tcpdump -r {}", file.display());
    Some(String::from_utf8_lossy(&out.stdout).lines().count())
}

fn multiset(frames: Vec<Vec<u8>>) -> BTreeMap<Vec<u8>, usize> {
    let mut m = BTreeMap::new();
    for f in frames {
        *m.entry(f).or_default() += 1;
    }
    m
}

#[test]
fn normal_mode_holds_every_packet_in_order() {
    let log = tempfile::tempdir().unwrap();
    run(&["--set", "outputs.3.pcap-log.enabled=yes"], log.path());
    // The sample starts at 2024-01-15 10:00:00 UTC.
    assert_eq!(pcaps(log.path()), ["log.pcap.1705312800"]);
    let file = log.path().join("log.pcap.1705312800");
    let input = frames(&repo("sample/sample.pcap"));
    assert_eq!(frames(&file), input);
    match tcpdump_count(&file) {
        Some(n) => assert_eq!(n, input.len()),
        None => eprintln!("normal_mode_holds_every_packet_in_order: no tcpdump, reader only"),
    }
}

#[test]
fn multi_mode_splits_by_worker_and_filter_applies() {
    if !meerkat_capture::libpcap::available() {
        eprintln!(
            "skipping multi_mode_splits_by_worker_and_filter_applies: libpcap is not installed"
        );
        return;
    }
    let log = tempfile::tempdir().unwrap();
    run(
        &[
            "--set",
            "outputs.3.pcap-log.enabled=yes",
            "--set",
            "outputs.3.pcap-log.mode=multi",
            "--set",
            "outputs.3.pcap-log.filename=log.%n.%t.pcap",
            "ip",
        ],
        log.path(),
    );
    let files = pcaps(log.path());
    assert_eq!(files, ["log.1.1705312800.pcap", "log.2.1705312800.pcap"]);
    let mut got = Vec::new();
    for f in &files {
        let fr = frames(&log.path().join(f));
        assert!(!fr.is_empty(), "{f}");
        got.extend(fr);
    }
    // Exactly the IPv4 packets of the input (Ethernet type 0x0800).
    let all = frames(&repo("sample/sample.pcap"));
    let ip: Vec<Vec<u8>> = all
        .iter()
        .filter(|f| f[12..14] == [0x08, 0x00])
        .cloned()
        .collect();
    assert!(!ip.is_empty() && ip.len() < all.len());
    assert_eq!(multiset(got), multiset(ip));
}

#[test]
fn unsupported_conditional_is_refused() {
    let log = tempfile::tempdir().unwrap();
    let out = Command::new(MEERKAT)
        .arg("run")
        .arg("-r")
        .arg(repo("sample/sample.pcap"))
        .arg("-l")
        .arg(log.path())
        .args(["--set", "outputs.3.pcap-log.enabled=yes"])
        .args(["--set", "outputs.3.pcap-log.conditional=alerts"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("outputs.pcap-log.conditional: alerts"),
        "{err}"
    );
}
