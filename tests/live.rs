//! Live capture end to end: `meerkat run -i` on one end of a veth pair (in a network
//! namespace the test makes) while the test replays a pcap on the other end; the alerts
//! must equal those of `meerkat run -r` on the same pcap, nothing may be lost, and SIGTERM
//! must drain everything into EVE. Skips with a message without root or iproute2, and the
//! mix-small case also without `../shared`.

#![allow(clippy::unwrap_used)]

mod capture_common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use capture_common::*;
use meerkat_capture::replay::Sender;
use meerkat_capture::vethns::VethNs;
use meerkat_shm::CounterReader;

struct LiveRun {
    alerts: Alerts,
    received: u64,
    drops: u64,
    stdout: String,
}

/// `meerkat run -i` in `ns` on its inner end with `rules`, EVE in `log`, the runtime
/// directory `rt`, and the config `sets` (`--set` values).
fn run_i(ns: &VethNs, rules: &Path, log: &Path, rt: &Path, sets: &[&str]) -> Command {
    let mut c = ns.command(MEERKAT);
    c.args(["run", "-i", &ns.b, "-S"])
        .arg(rules)
        .arg("-l")
        .arg(log)
        .args(COMMON)
        .arg("--set")
        .arg(format!("runtime-dir={}", rt.display()))
        .args(sets.iter().flat_map(|s| ["--set", s]));
    c
}

fn live(pcap: &Path, rules: &Path, sets: &[&str]) -> LiveRun {
    let ns = VethNs::create("run-i", 9000).unwrap();
    let log = tempfile::tempdir().unwrap();
    let rt = tempfile::tempdir().unwrap();
    let child = run_i(&ns, rules, log.path(), rt.path(), sets)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut run = Running(child);
    let deadline = Instant::now() + Duration::from_secs(120);
    wait_for("live capture to start", deadline, || {
        counter(rt.path(), "capture", "capture.live") == 1
    });
    let sent = frames(pcap);
    // Replay in steps, each waiting until capture has taken the previous one from the
    // kernel: the test is about equal alerts, not about how fast the sender can go.
    std::thread::scope(|s| {
        s.spawn(|| {
            ns.enter_current_thread().unwrap();
            let mut tx = Sender::open(&ns.a).unwrap();
            let mut done = 0u64;
            for chunk in sent.chunks(1024) {
                let refs: Vec<&[u8]> = chunk.iter().map(Vec::as_slice).collect();
                done += tx.send(&refs).unwrap().sent;
                wait_for("capture to take the frames", deadline, || {
                    counter(rt.path(), "capture", "capture.source.packets") >= done
                });
            }
        });
    });
    let n = sent.len() as u64;
    wait_for("the workers to inspect every packet", deadline, || {
        inspected(rt.path(), 2) >= n
    });
    let received = counter(rt.path(), "capture", "capture.source.packets");
    let drops: u64 = [
        "capture.kernel_drops",
        "capture.backlog.drops",
        "capture.ring_full_drops",
    ]
    .iter()
    .map(|c| counter(rt.path(), "capture", c))
    .sum();
    let status = run.terminate();
    assert!(status.success(), "{status}");
    let mut stdout = String::new();
    use std::io::Read;
    run.0
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    LiveRun {
        alerts: alerts(&log.path().join("eve.json")),
        received,
        drops,
        stdout,
    }
}

fn check_equal(pcap: &Path, rules: &Path, sets: &[&str]) {
    let want = offline(pcap, rules, sets);
    assert!(
        !want.is_empty(),
        "the -r run raised no alert; the test would prove nothing"
    );
    let got = live(pcap, rules, sets);
    let n = frames(pcap).len() as u64;
    assert_eq!(got.received, n, "capture received");
    assert_eq!(got.drops, 0);
    assert!(got.stdout.contains("live:"), "{}", got.stdout);
    assert_eq!(got.alerts, want);
}

#[test]
fn live_alerts_equal_offline_alerts_on_the_sample() {
    if let Some(why) = VethNs::unavailable() {
        eprintln!("skipping live_alerts_equal_offline_alerts_on_the_sample: {why}");
        return;
    }
    check_equal(
        &repo("sample/sample.pcap"),
        &repo("sample/sample.rules"),
        &[],
    );
}

#[test]
fn live_alerts_equal_offline_alerts_on_mix_small() {
    if let Some(why) = VethNs::unavailable() {
        eprintln!("skipping live_alerts_equal_offline_alerts_on_mix_small: {why}");
        return;
    }
    let pcap = repo("../shared/corpus/traffic/mix-small.pcap");
    if !pcap.exists() {
        eprintln!("skipping live_alerts_equal_offline_alerts_on_mix_small: ../shared is absent");
        return;
    }
    check_equal(
        &pcap,
        &repo("sample/sample.rules"),
        &[
            "vars.address-groups.HOME_NET=any",
            "vars.address-groups.EXTERNAL_NET=any",
        ],
    );
}

#[test]
fn unknown_interface_is_a_usage_error() {
    let out = Command::new(MEERKAT)
        .args(["run", "-i", "nosuchif0", "-S"])
        .arg(repo("sample/sample.rules"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interface nosuchif0 does not exist"), "{err}");
}

#[test]
fn pcap_file_options_with_live_capture_are_a_usage_error() {
    // They describe file inputs; with -i or --dpdk they would be silently meaningless. (The
    // missing rule file makes a regression fail at once instead of capturing on lo.)
    for (source, flag) in [
        (&["-i", "lo"][..], "--pcap-file-continuous"),
        (&["--dpdk"][..], "--pcap-file-delete"),
    ] {
        let out = Command::new(MEERKAT)
            .arg("run")
            .args(source)
            .arg(flag)
            .args(["-S", "/nonexistent/meerkat.rules"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{source:?} {flag}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("cannot be used with"), "{err}");
    }
}

#[test]
fn capture_switches_to_run_as_user_after_opening_the_socket() {
    if let Some(why) = VethNs::unavailable() {
        eprintln!("skipping capture_switches_to_run_as_user_after_opening_the_socket: {why}");
        return;
    }
    let ns = VethNs::create("runas", 1500).unwrap();
    let log = tempfile::tempdir().unwrap();
    let rt = tempfile::tempdir().unwrap();
    let sets = ["run-as.user=65534", "run-as.group=65534"];
    let child = run_i(
        &ns,
        &repo("sample/sample.rules"),
        log.path(),
        rt.path(),
        &sets,
    )
    .stdout(Stdio::null())
    .spawn()
    .unwrap();
    let mut run = Running(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    wait_for("live capture to start", deadline, || {
        counter(rt.path(), "capture", "capture.live") == 1
    });
    // The capture process (owner of the counter page) now runs as 65534.
    let pid = CounterReader::open(&rt.path().join("counters-capture"))
        .unwrap()
        .pid();
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let ids = |key: &str| -> Vec<String> {
        let line = status.lines().find(|l| l.starts_with(key)).unwrap();
        line.split_whitespace()
            .skip(1)
            .map(str::to_string)
            .collect()
    };
    assert_eq!(ids("Uid:"), ["65534"; 4], "{status}");
    assert_eq!(ids("Gid:"), ["65534"; 4], "{status}");
    assert_eq!(ids("Groups:"), ["65534"], "{status}");
    // And still captures, through the socket and rings it opened before.
    let sent = frames(&repo("sample/sample.pcap"));
    std::thread::scope(|s| {
        s.spawn(|| {
            ns.enter_current_thread().unwrap();
            let refs: Vec<&[u8]> = sent.iter().map(Vec::as_slice).collect();
            Sender::open(&ns.a).unwrap().send(&refs).unwrap();
        });
    });
    wait_for("capture to take the frames", deadline, || {
        counter(rt.path(), "capture", "capture.packets") >= sent.len() as u64
    });
    let status = run.terminate();
    assert!(status.success(), "{status}");
    assert!(!alerts(&log.path().join("eve.json")).is_empty());
}
