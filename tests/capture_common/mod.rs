//! Helpers shared by the live-source tests (`live.rs`, `dpdk.rs`): run `meerkat run -r`
//! for the reference alerts, read alerts and capture counters, stop a running sensor
//! with SIGTERM and wait for a clean exit.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration, Instant};

use meerkat_shm::CounterReader;

pub const MEERKAT: &str = env!("CARGO_BIN_EXE_meerkat");

/// Flags every run of these tests uses, so live and offline runs are comparable.
pub const COMMON: &[&str] = &["-k", "none", "--workers", "2"];

pub fn repo(p: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(p)
}

/// (sid, src, sport, dst, dport, proto) -> alerts.
pub type Alerts = BTreeMap<(u64, String, u64, String, u64, String), usize>;

pub fn alerts(eve: &Path) -> Alerts {
    let mut m = Alerts::new();
    let text = std::fs::read_to_string(eve).unwrap_or_default();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        if v["event_type"] != "alert" {
            continue;
        }
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
    m
}

/// Every frame of `pcap`, in order.
pub fn frames(pcap: &Path) -> Vec<Vec<u8>> {
    let mut r = meerkat_capture::Reader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    let mut v = Vec::new();
    while let Some(p) = r.next_packet().unwrap() {
        v.push(p.data.to_vec());
    }
    v
}

/// The alerts of `meerkat run -r pcap` (the reference a live source must equal).
pub fn offline(pcap: &Path, rules: &Path, sets: &[&str]) -> Alerts {
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

/// One counter of `role`'s shared-memory page in runtime dir `rt` (0 until it exists).
pub fn counter(rt: &Path, role: &str, name: &str) -> u64 {
    CounterReader::open(&rt.join(format!("counters-{role}")))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
}

/// Packets inspected by detect workers `0..workers`.
pub fn inspected(rt: &Path, workers: usize) -> u64 {
    (0..workers)
        .map(|w| counter(rt, &format!("detect-{w}"), &format!("detect.{w}.packets")))
        .sum()
}

/// Kills the child on drop (a failing test must not leave a sensor running).
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl Running {
    /// Polls `ok` until it holds; fails when the deadline passes or meerkat exits first.
    pub fn wait_for(&mut self, what: &str, deadline: Instant, ok: impl FnMut() -> bool) {
        let child = &mut self.0;
        wait_until(what, deadline, ok, || {
            if let Some(s) = child.try_wait().unwrap() {
                panic!("meerkat exited ({s}) while waiting for {what}");
            }
        });
    }

    /// SIGTERM, then waits (at most 30 s) for the exit status.
    pub fn terminate(&mut self) -> ExitStatus {
        // SAFETY (test): SIGTERM to our own child, the supervisor.
        unsafe { libc::kill(self.0.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(s) = self.0.try_wait().unwrap() {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "meerkat did not stop after SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Polls `ok` until it holds (every 10 ms), calling `check` between polls; fails at the
/// deadline.
pub fn wait_until(
    what: &str,
    deadline: Instant,
    mut ok: impl FnMut() -> bool,
    mut check: impl FnMut(),
) {
    while !ok() {
        check();
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// [`wait_until`] without a check between polls.
pub fn wait_for(what: &str, deadline: Instant, ok: impl FnMut() -> bool) {
    wait_until(what, deadline, ok, || {});
}
