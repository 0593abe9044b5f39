//! DPDK as a live source (cargo feature `dpdk`), without a NIC and without hugepages:
//! - the `net_pcap` virtual device replays a pcap through `meerkat run --dpdk`, and the
//!   alerts equal those of `meerkat run -r` on the same file;
//! - the `net_af_packet` virtual device reads one end of a veth pair (in a namespace the
//!   test makes) while the test sends on the other, and every frame arrives.
//!
//! Skips with a message when not root (EAL's memory setup), and the veth case also
//! without iproute2.

#![cfg(feature = "dpdk")]
#![allow(clippy::unwrap_used)]

mod capture_common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use capture_common::*;
use meerkat_capture::replay::Sender;
use meerkat_capture::vethns::VethNs;
use meerkat_shm::CounterReader;
static N: AtomicU32 = AtomicU32::new(0);

fn eal(vdev: &str) -> String {
    format!(
        "dpdk.eal-params=--no-huge -m 256 --no-pci --no-shconf --file-prefix=mk{}-{} --vdev {vdev}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// Why DPDK cannot run here, if it cannot: EAL needs root for its memory setup.
fn unavailable() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("DPDK's EAL needs root".to_string());
    }
    None
}

/// Runs `meerkat run --dpdk` (in `ns` if given) until the workers inspected `n` packets
/// (sent by `feed` once capture runs), then SIGTERM. Returns the alerts and counters.
fn run_dpdk(
    ns: Option<&VethNs>,
    vdev: &str,
    port: &str,
    rules: &Path,
    sets: &[&str],
    n: u64,
    feed: impl FnOnce(&Path),
) -> (Alerts, BTreeMap<String, u64>) {
    let log = tempfile::tempdir().unwrap();
    let rt = tempfile::tempdir().unwrap();
    let rt_set = format!("runtime-dir={}", rt.path().display());
    let port_set = format!("dpdk.interfaces.interface={port}");
    let eal = eal(vdev);
    let mut cmd = match ns {
        Some(ns) => ns.command(MEERKAT),
        None => Command::new(MEERKAT),
    };
    cmd.args(["run", "--dpdk", "-S"])
        .arg(rules)
        .arg("-l")
        .arg(log.path())
        .args(COMMON)
        .args(["--set", &rt_set, "--set", &eal, "--set", &port_set])
        .args(sets.iter().flat_map(|s| ["--set", s]))
        .stdout(Stdio::null());
    let mut run = Running(cmd.spawn().unwrap());
    let deadline = Instant::now() + Duration::from_secs(120);
    run.wait_for("capture to start", deadline, || {
        counter(rt.path(), "capture", "capture.live") == 1
    });
    feed(rt.path());
    run.wait_for("the workers to inspect every packet", deadline, || {
        inspected(rt.path(), 2) >= n
    });
    let counters: BTreeMap<String, u64> = CounterReader::open(&rt.path().join("counters-capture"))
        .unwrap()
        .iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    let status = run.terminate();
    assert!(status.success(), "{status}");
    (alerts(&log.path().join("eve.json")), counters)
}

fn pcap_vdev_equals_offline(pcap: &Path, sets: &[&str]) {
    let rules = repo("sample/sample.rules");
    let want = offline(pcap, &rules, sets);
    assert!(
        !want.is_empty(),
        "the -r run raised no alert; the test would prove nothing"
    );
    let n = frames(pcap).len() as u64;
    let vdev = format!("net_pcap0,rx_pcap={}", pcap.display());
    let (got, c) = run_dpdk(None, &vdev, "net_pcap0", &rules, sets, n, |_| {});
    assert_eq!(c["capture.source.packets"], n);
    assert_eq!(c["capture.packets"], n);
    assert_eq!(c["capture.dpdk.imissed"] + c["capture.backlog.drops"], 0);
    assert_eq!(got, want);
}

#[test]
fn net_pcap_vdev_gives_the_alerts_of_r_on_the_sample() {
    if let Some(why) = unavailable() {
        eprintln!("skipping: {why}");
        return;
    }
    pcap_vdev_equals_offline(&repo("sample/sample.pcap"), &[]);
}

#[test]
fn net_pcap_vdev_gives_the_alerts_of_r_on_mix_small() {
    if let Some(why) = unavailable() {
        eprintln!("skipping: {why}");
        return;
    }
    let pcap = repo("../shared/corpus/traffic/mix-small.pcap");
    if !pcap.exists() {
        eprintln!("skipping: ../shared is absent");
        return;
    }
    pcap_vdev_equals_offline(
        &pcap,
        &[
            "vars.address-groups.HOME_NET=any",
            "vars.address-groups.EXTERNAL_NET=any",
        ],
    );
}

#[test]
fn net_af_packet_vdev_reads_a_veth() {
    if let Some(why) = unavailable().or_else(VethNs::unavailable) {
        eprintln!("skipping: {why}");
        return;
    }
    let ns = VethNs::create("dpdk", 1500).unwrap();
    let pcap = repo("sample/sample.pcap");
    let sent = frames(&pcap);
    let n = sent.len() as u64;
    let vdev = format!("net_af_packet0,iface={}", ns.b);
    let (got, c) = run_dpdk(
        Some(&ns),
        &vdev,
        "net_af_packet0",
        &repo("sample/sample.rules"),
        &[],
        n,
        |_| {
            std::thread::scope(|s| {
                s.spawn(|| {
                    ns.enter_current_thread().unwrap();
                    let refs: Vec<&[u8]> = sent.iter().map(Vec::as_slice).collect();
                    Sender::open(&ns.a).unwrap().send(&refs).unwrap();
                });
            });
        },
    );
    assert_eq!(c["capture.source.packets"], n);
    assert_eq!(c["capture.dpdk.imissed"], 0);
    assert_eq!(got, offline(&pcap, &repo("sample/sample.rules"), &[]));
}
