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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use meerkat_capture::replay::Sender;
use meerkat_capture::vethns::VethNs;
use meerkat_ring::CounterReader;

const MEERKAT: &str = env!("CARGO_BIN_EXE_meerkat");
static N: AtomicU32 = AtomicU32::new(0);

fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

type Alerts = BTreeMap<(u64, String, u64, String, u64, String), usize>;

fn alerts(eve: &Path) -> Alerts {
    let mut m = Alerts::new();
    for line in std::fs::read_to_string(eve).unwrap_or_default().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["event_type"] == "alert" {
            let key = (
                v["alert"]["signature_id"].as_u64().unwrap(),
                v["src_ip"].as_str().unwrap_or("").to_string(),
                v["src_port"].as_u64().unwrap_or(0),
                v["dest_ip"].as_str().unwrap_or("").to_string(),
                v["dest_port"].as_u64().unwrap_or(0),
                v["proto"].as_str().unwrap_or("").to_string(),
            );
            *m.entry(key).or_default() += 1;
        }
    }
    m
}

fn frames(pcap: &Path) -> Vec<Vec<u8>> {
    let mut r = meerkat_capture::Reader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        v.push(p.data.to_vec());
    }
    v
}

const COMMON: &[&str] = &["-k", "none", "--workers", "2"];

fn counter(rt: &Path, role: &str, name: &str) -> u64 {
    CounterReader::open(&rt.join(format!("counters-{role}")))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_for(what: &str, deadline: Instant, run: &mut Running, mut ok: impl FnMut() -> bool) {
    while !ok() {
        if let Some(s) = run.0.try_wait().unwrap() {
            panic!("meerkat exited ({s}) while waiting for {what}");
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

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
    wait_for("capture to start", deadline, &mut run, || {
        counter(rt.path(), "capture", "capture.live") == 1
    });
    feed(rt.path());
    wait_for(
        "the workers to inspect every packet",
        deadline,
        &mut run,
        || {
            (0..2)
                .map(|w| {
                    counter(
                        rt.path(),
                        &format!("detect-{w}"),
                        &format!("detect.{w}.packets"),
                    )
                })
                .sum::<u64>()
                >= n
        },
    );
    let counters: BTreeMap<String, u64> = CounterReader::open(&rt.path().join("counters-capture"))
        .unwrap()
        .iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    // SAFETY (test): SIGTERM to our own child.
    unsafe { libc::kill(run.0.id() as i32, libc::SIGTERM) };
    let stop = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(s) = run.0.try_wait().unwrap() {
            break s;
        }
        assert!(Instant::now() < stop, "meerkat did not stop after SIGTERM");
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status}");
    (alerts(&log.path().join("eve.json")), counters)
}

fn offline(pcap: &Path, rules: &Path, sets: &[&str]) -> Alerts {
    let log = tempfile::tempdir().unwrap();
    let out = Command::new(MEERKAT)
        .arg("run")
        .arg("-r")
        .arg(pcap)
        .arg("-S")
        .arg(rules)
        .arg("-l")
        .arg(log.path())
        .args(COMMON)
        .args(sets.iter().flat_map(|s| ["--set", s]))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    alerts(&log.path().join("eve.json"))
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
