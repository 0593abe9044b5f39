//! `meerkat run -r DIR`: each capture file processed exactly once: across runs with the
//! same log directory, through renames, growth and copies, in continuous mode, with
//! `delete-when-done`, and across a `kill -9` of the whole run.
#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::fs;
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant, SystemTime};

use meerkat_scanner::{Identity, Registry, RunStatus, Window};
use meerkat_synth::Frame;
use meerkat_synth::packet;
use meerkat_synth::pcap::{Format, LINKTYPE_ETHERNET, Writer};
use meerkat_synth::session::frame_ip;

const BIN: &str = env!("CARGO_BIN_EXE_meerkat");
const RULES: &str = "alert udp any any -> any any (msg:\"MEERKAT exactly once\"; \
                     content:\"EXACTLY-ONCE\"; sid:1000100; rev:1;)\n";
const RUN_TIMEOUT: Duration = Duration::from_secs(120);

/// `n` UDP packets, every `every`-th carrying the string the rule looks for; packet `i`
/// is sent at `t0_s + i` ms from source port `1024 + i % 60000`, so every packet of every
/// capture (with distinct `t0_s`) is unique.
fn frames(n: usize, every: usize, t0_s: u64) -> Vec<Frame> {
    let (c, s) = (
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1)),
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2)),
    );
    (0..n)
        .map(|i| {
            let payload = if every > 0 && i % every == every - 1 {
                format!("pkt {i} EXACTLY-ONCE")
            } else {
                format!("pkt {i} ordinary")
            };
            let udp = packet::udp(c, s, 1024 + (i % 60000) as u16, 53, payload.as_bytes());
            let ip = packet::ip(c, s, packet::PROTO_UDP, 64, i as u16, &udp);
            Frame {
                ts_ns: t0_s * 1_000_000_000 + i as u64 * 1_000_000,
                data: frame_ip(c, s, None, &ip),
            }
        })
        .collect()
}

fn alerting(n: usize, every: usize) -> usize {
    n.checked_div(every).unwrap_or(0)
}

/// A classic pcap of `frames`: the 24-byte file header, then the records.
fn pcap_bytes(frames: &[Frame]) -> Vec<u8> {
    let mut w = Writer::new(
        Vec::new(),
        Format::Micro { big_endian: false },
        LINKTYPE_ETHERNET,
    )
    .unwrap();
    for f in frames {
        w.write(f.ts_ns, &f.data).unwrap();
    }
    w.into_inner()
}

fn write_pcap(path: &Path, frames: &[Frame]) {
    fs::write(path, pcap_bytes(frames)).unwrap();
}

/// Appends records (no file header) to an existing classic pcap.
fn append_pcap(path: &Path, frames: &[Frame]) {
    let bytes = pcap_bytes(frames);
    let mut file = fs::OpenOptions::new().append(true).open(path).unwrap();
    file.write_all(&bytes[24..]).unwrap();
}

fn set_mtime(path: &Path, secs_ago: u64) {
    let t = SystemTime::now() - Duration::from_secs(secs_ago);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

struct Env {
    _dir: tempfile::TempDir,
    caps: PathBuf,
    logs: PathBuf,
    rules: PathBuf,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let caps = dir.path().join("caps");
    let logs = dir.path().join("logs");
    fs::create_dir_all(&caps).unwrap();
    let rules = dir.path().join("exactly-once.rules");
    fs::write(&rules, RULES).unwrap();
    Env {
        caps,
        logs,
        rules,
        _dir: dir,
    }
}

impl Env {
    fn command(&self, logs: &Path, extra: &[&str]) -> Command {
        let mut c = Command::new(BIN);
        c.arg("run")
            .arg("-r")
            .arg(&self.caps)
            .arg("-S")
            .arg(&self.rules)
            .arg("-l")
            .arg(logs)
            .args(["-k", "none", "--workers", "2"])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// Runs `meerkat run` to its end; returns its output (checked for success).
    fn run(&self, extra: &[&str]) -> Output {
        self.run_into(&self.logs, extra)
    }

    fn run_into(&self, logs: &Path, extra: &[&str]) -> Output {
        let child = self.command(logs, extra).spawn().unwrap();
        let out = wait_output(child, RUN_TIMEOUT);
        assert!(
            out.status.success(),
            "meerkat run failed: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }
}

/// Waits for a child with a deadline (killing it and failing past the deadline). Its pipes
/// are drained while it runs (by `wait_with_output` on a helper thread), so a chatty child
/// never blocks on a full pipe.
fn wait_output(child: Child, timeout: Duration) -> Output {
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(timeout) {
        Ok(out) => out.unwrap(),
        Err(_) => {
            // SAFETY: kill(2) on the child started by this test, still not reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            let out = rx.recv().unwrap().unwrap();
            panic!(
                "meerkat did not finish within {timeout:?}:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Polls `cond` until it holds, failing after `timeout`.
fn poll(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The summary line's numbers: (packets, alerts, files read, resumed, already done).
fn summary(out: &Output) -> (u64, u64, u64, u64, u64) {
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("meerkat: "))
        .unwrap_or_else(|| panic!("no summary in {text}"));
    let num_before = |word: &str| -> u64 {
        let at = line
            .find(word)
            .unwrap_or_else(|| panic!("`{word}` not in {line}"));
        line[..at]
            .trim_end()
            .rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (
        num_before(" packets"),
        num_before(" alerts"),
        num_before(" files read"),
        num_before(" resumed"),
        num_before(" already done"),
    )
}

/// Each alert in eve.json as (timestamp, source port): unique per packet here.
fn alert_keys(logs: &Path) -> Vec<(String, u64)> {
    alert_keys_of(logs, true)
}

/// While a run writes, the last line may be caught half written: `strict` off skips it.
fn alert_keys_of(logs: &Path, strict: bool) -> Vec<(String, u64)> {
    let Ok(text) = fs::read_to_string(logs.join("eve.json")) else {
        return Vec::new();
    };
    let mut keys: Vec<(String, u64)> = text
        .lines()
        .filter_map(|l| match serde_json::from_str::<serde_json::Value>(l) {
            Ok(v) => Some(v),
            Err(e) if strict => panic!("bad EVE line {l}: {e}"),
            Err(_) => None,
        })
        .filter(|v| v["event_type"] == "alert")
        .map(|v| {
            (
                v["timestamp"].as_str().unwrap().to_string(),
                v["src_port"].as_u64().unwrap(),
            )
        })
        .collect();
    keys.sort();
    keys
}

fn assert_no_duplicates(keys: &[(String, u64)]) {
    let mut counts: BTreeMap<&(String, u64), usize> = BTreeMap::new();
    for k in keys {
        *counts.entry(k).or_default() += 1;
    }
    let dups: Vec<_> = counts.into_iter().filter(|(_, n)| *n > 1).collect();
    assert!(dups.is_empty(), "alerts written twice: {dups:?}");
}

fn registry(logs: &Path) -> Registry {
    Registry::open(
        &logs.join("pcap-registry.json"),
        Identity::Fingerprint,
        Window::default(),
    )
    .unwrap()
}

#[test]
fn each_file_once_across_runs_renames_growth_and_copies() {
    let e = env();
    let (a, b) = (e.caps.join("a.pcap"), e.caps.join("b.pcap"));
    write_pcap(&a, &frames(300, 10, 1_000));
    write_pcap(&b, &frames(500, 25, 2_000));
    set_mtime(&a, 20);
    set_mtime(&b, 10);
    // Not a capture file: an error once, not on every run.
    fs::write(e.caps.join("README"), b"notes about these captures\n").unwrap();
    let expect = alerting(300, 10) + alerting(500, 25);

    let out = e.run(&[]);
    let (packets, alerts, files, resumed, done) = summary(&out);
    assert_eq!((packets, alerts as usize), (800, expect));
    assert_eq!((files, resumed, done), (2, 0, 0));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 input file errors"),
        "README is not a capture file"
    );
    assert_eq!(alert_keys(&e.logs).len(), expect);

    // Same log directory: nothing is redone.
    let out = e.run(&[]);
    assert_eq!(summary(&out), (0, 0, 0, 0, 3));
    assert_eq!(alert_keys(&e.logs).len(), expect);

    // Renamed (and moved into a subdirectory that a recursive run reads): still done.
    fs::create_dir(e.caps.join("old")).unwrap();
    fs::rename(&a, e.caps.join("old/a-renamed.pcap")).unwrap();
    let out = e.run(&["--pcap-file-recursive"]);
    assert_eq!(summary(&out), (0, 0, 0, 0, 3));

    // Grown: only the new records.
    append_pcap(&b, &frames(100, 25, 3_000));
    let out = e.run(&[]);
    let (packets, alerts, files, resumed, _) = summary(&out);
    assert_eq!((packets, alerts, files, resumed), (100, 4, 1, 1));

    // A copy is a file of its own.
    fs::copy(&b, e.caps.join("b-copy.pcap")).unwrap();
    let out = e.run(&[]);
    let (packets, alerts, ..) = summary(&out);
    assert_eq!((packets, alerts as usize), (600, alerting(500, 25) + 4));

    let keys = alert_keys(&e.logs);
    assert_eq!(keys.len(), expect + 4 + alerting(500, 25) + 4);
    assert_eq!(registry(&e.logs).run().status, RunStatus::Closed);
}

#[test]
fn patterns_recursion_and_delete_when_done() {
    let e = env();
    fs::create_dir_all(e.caps.join("2024/01")).unwrap();
    write_pcap(&e.caps.join("top.pcap"), &frames(100, 0, 1_000));
    write_pcap(&e.caps.join("2024/01/alerts.pcap"), &frames(100, 10, 2_000));
    write_pcap(&e.caps.join("2024/01/quiet.pcap"), &frames(100, 0, 3_000));
    write_pcap(
        &e.caps.join("2024/01/quiet.pcapng.txt"),
        &frames(10, 0, 4_000),
    );

    // A pattern with `**`: only what it matches.
    let pattern = format!("{}/**/*.pcap", e.caps.display());
    let child = Command::new(BIN)
        .args(["run", "-r", &pattern, "-S"])
        .arg(&e.rules)
        .arg("-l")
        .arg(&e.logs)
        .args(["-k", "none", "--workers", "1"])
        .args(["--set", "pcap-file.delete-when-done=non-alerts"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child, RUN_TIMEOUT);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (packets, alerts, files, ..) = summary(&out);
    assert_eq!((packets, alerts, files), (300, 10, 3));
    // non-alerts: the files without alerts are gone, the evidence stays.
    assert!(!e.caps.join("top.pcap").exists());
    assert!(!e.caps.join("2024/01/quiet.pcap").exists());
    assert!(e.caps.join("2024/01/alerts.pcap").exists());
    assert!(e.caps.join("2024/01/quiet.pcapng.txt").exists());

    // A directory without --pcap-file-recursive reads only its own files; with
    // --pcap-file-delete every processed file goes.
    let e2 = env();
    fs::create_dir_all(e2.caps.join("sub")).unwrap();
    write_pcap(&e2.caps.join("x.pcap"), &frames(50, 5, 5_000));
    write_pcap(&e2.caps.join("sub/y.pcap"), &frames(50, 5, 6_000));
    let out = e2.run(&["--pcap-file-delete"]);
    assert_eq!(summary(&out).0, 50);
    assert!(!e2.caps.join("x.pcap").exists());
    assert!(e2.caps.join("sub/y.pcap").exists());
    let out = e2.run(&["--pcap-file-recursive"]);
    assert_eq!(summary(&out).0, 50);
}

/// The acceptance test of the checkpoint rule: `kill -9` of the whole run (supervisor and
/// every role at once) in the middle of a file, then a restart with the same log
/// directory. No file is redone, the partial file is finished from the record after its
/// last checkpoint, and eve.json holds exactly the alerts of one clean pass.
#[test]
fn kill_9_mid_file_then_restart_is_one_clean_pass() {
    let e = env();
    let files = [
        ("a.pcap", 3_000, 7, 1_000u64, 30u64),
        ("b.pcap", 60_000, 13, 2_000, 20),
        ("c.pcap", 3_000, 11, 3_000, 10),
    ];
    let mut total_packets = 0u64;
    for (name, n, every, t0, age) in files {
        let p = e.caps.join(name);
        write_pcap(&p, &frames(n, every, t0));
        set_mtime(&p, age);
        total_packets += n as u64;
    }
    // Long enough between checkpoints that the kill below lands before the next one; a
    // small ring keeps capture close behind the workers, so that b.pcap takes several
    // checkpoint intervals whatever the machine's load.
    let checkpoints = [
        "--set",
        "scanner.checkpoint-interval=0.3",
        "--set",
        "capture.ring-size=64kb",
    ];

    // One clean pass, into its own log directory.
    let clean_logs = e.caps.parent().unwrap().join("clean-logs");
    e.run_into(&clean_logs, &checkpoints);
    let clean = alert_keys(&clean_logs);
    assert_eq!(
        clean.len(),
        alerting(3_000, 7) + alerting(60_000, 13) + alerting(3_000, 11)
    );

    // The run to kill: its own process group, so that one signal kills every role.
    // Its output goes to files, not pipes: nobody reads a pipe while the test polls, and a
    // role blocked on a full stderr pipe would never reach the checkpoint waited for.
    let mut cmd = e.command(&e.logs, &checkpoints);
    let err_path = e.caps.parent().unwrap().join("killed.stderr");
    cmd.process_group(0)
        .stdout(Stdio::null())
        .stderr(fs::File::create(&err_path).unwrap());
    let mut child = cmd.spawn().unwrap();
    let pgid = child.id() as i32;
    let log = Registry::log_path(&e.logs.join("pcap-registry.json"));
    let b = e.caps.join("b.pcap");
    let b_json = serde_json::to_string(b.to_str().unwrap()).unwrap();
    // Wait for a checkpoint in the middle of b (a is done by then), and then for events
    // written after it (of work it does not cover): kill there.
    let eve = e.logs.join("eve.json");
    poll(
        "a checkpoint inside b.pcap, and events after it",
        RUN_TIMEOUT,
        || {
            if let Some(status) = child.try_wait().unwrap() {
                panic!(
                    "the run ended ({status}) before a checkpoint inside b.pcap was seen:\n{}",
                    fs::read_to_string(&err_path).unwrap_or_default()
                );
            }
            let Ok(text) = fs::read_to_string(&log) else {
                return false;
            };
            let last_b_checkpoint = text
                .lines()
                .rev()
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .find(|v| {
                    v["put"].as_array().is_some_and(|put| {
                        put.iter().any(|p| {
                            serde_json::to_string(&p["path"]).unwrap() == b_json
                                && p["done"] == false
                                && p["bytes_done"].as_u64().unwrap_or(0) > 24
                        })
                    })
                });
            let Some(ck) = last_b_checkpoint else {
                return false;
            };
            let mark = ck["run"]["outputs"][0]["len"].as_u64().unwrap_or(u64::MAX);
            fs::metadata(&eve).is_ok_and(|m| m.len() > mark)
        },
    );
    // SAFETY: kill(2) on the process group of the child started above.
    assert_eq!(unsafe { libc::kill(-pgid, libc::SIGKILL) }, 0);
    let killed = wait_output(child, RUN_TIMEOUT);
    assert!(!killed.status.success());
    let _ = fs::remove_dir_all(format!("/dev/shm/meerkat-{pgid}"));
    // The supervisor is reaped; its roles (same group, killed too) may take a moment more to
    // die and let go of the registry's lock.
    poll(
        "the killed roles to release the registry",
        RUN_TIMEOUT,
        || {
            !matches!(
                Registry::open(
                    &e.logs.join("pcap-registry.json"),
                    Identity::Fingerprint,
                    Window::default(),
                ),
                Err(meerkat_scanner::RegistryError::Locked { .. })
            )
        },
    );

    // What the registry says was done when the run died.
    let reg = registry(&e.logs);
    assert_eq!(
        reg.run().status,
        RunStatus::Open,
        "the killed run left it open"
    );
    let by_name = |n: &str| {
        reg.entries()
            .find(|x| x.path.file_name().unwrap() == n)
            .cloned()
    };
    let a_entry = by_name("a.pcap").unwrap();
    let b_entry = by_name("b.pcap").unwrap();
    assert!(a_entry.done, "a.pcap was committed done before b started");
    assert!(!b_entry.done && b_entry.bytes_done > 24, "{b_entry:?}");
    let packets_done: u64 = reg.entries().map(|x| x.packets_done).sum();
    drop(reg);

    // Restart: the rest, and only the rest.
    let out = e.run(&checkpoints);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("was interrupted: removed the last"),
        "events after the last checkpoint were rolled back\n{stderr}"
    );
    let (packets, _, files, resumed, done) = summary(&out);
    assert_eq!(
        packets,
        total_packets - packets_done,
        "packets read by the restart\n{stderr}"
    );
    assert_eq!(resumed, 1, "b.pcap resumed\n{stderr}");
    assert_eq!(done, 1, "a.pcap not redone\n{stderr}");
    assert_eq!(files, 2, "b.pcap finished, c.pcap read");
    let keys = alert_keys(&e.logs);
    assert_no_duplicates(&keys);
    assert_eq!(keys, clean, "the alerts of exactly one clean pass");
    let reg = registry(&e.logs);
    assert!(reg.entries().all(|x| x.done));
    assert_eq!(reg.run().status, RunStatus::Closed);
}

/// Continuous mode: files that arrive are read once complete, a file written under a
/// temporary name is read once renamed into place, a growing one once it stops growing,
/// and SIGTERM ends the run cleanly.
#[test]
fn continuous_mode_watches_until_sigterm() {
    let e = env();
    let child = e
        .command(
            &e.logs,
            &[
                "--pcap-file-continuous",
                "--set",
                "pcap-file.delay=2",
                "--set",
                "pcap-file.poll-interval=0.1",
            ],
        )
        .spawn()
        .unwrap();
    let pid = child.id() as i32;
    let wait_alerts = |n: usize| {
        poll(&format!("{n} alerts in eve.json"), RUN_TIMEOUT, || {
            alert_keys_of(&e.logs, false).len() >= n
        })
    };

    // A finished file, older than the delay.
    let a = e.caps.join("a.pcap");
    write_pcap(&a, &frames(200, 10, 1_000));
    set_mtime(&a, 60);
    wait_alerts(20);

    // Written under an excluded name, then renamed into place.
    let tmp = e.caps.join(".b.pcap.part");
    write_pcap(&tmp, &frames(200, 20, 2_000));
    fs::rename(&tmp, e.caps.join("b.pcap")).unwrap();
    wait_alerts(30);

    // Written in two parts, as a capture tool would; read once it stops growing.
    let c = e.caps.join("c.pcap");
    let all = frames(400, 8, 3_000);
    write_pcap(&c, &all[..200]);
    // A slow writer (not a synchronisation: the scenario).
    std::thread::sleep(Duration::from_millis(300));
    append_pcap(&c, &all[200..]);
    wait_alerts(80);

    // SAFETY: kill(2) on the child started above.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    let out = wait_output(child, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (packets, alerts, files, resumed, _) = summary(&out);
    assert_eq!((packets, alerts, files), (800, 80, 3));
    assert_eq!(resumed, 0, "c.pcap was read in one go, once complete");
    let keys = alert_keys(&e.logs);
    assert_eq!(keys.len(), 80);
    assert_no_duplicates(&keys);
    assert_eq!(registry(&e.logs).run().status, RunStatus::Closed);
}
