//! Roles started on their own, as container stacks start them (docker-compose services,
//! the containers of a Kubernetes pod): each finds its peers by the config's
//! `runtime-dir` and waits for them, in whatever order they come, and the result is the
//! one `meerkat run` gives on the same input.

#![allow(clippy::unwrap_used)]

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::*;

const BIN: &str = env!("CARGO_BIN_EXE_meerkat");

fn sample(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sample")
        .join(name)
}

/// A config for the roles: runtime and log directories under `dir`, the sample rules.
fn write_config(dir: &Path, workers: usize) -> PathBuf {
    let config = dir.join("meerkat.yaml");
    std::fs::write(
        &config,
        format!(
            "default-log-dir: {}\nruntime-dir: {}\nrule-files: [{}]\ndetect:\n  workers: {workers}\n",
            dir.join("logs").display(),
            dir.join("run").display(),
            sample("sample.rules").display()
        ),
    )
    .unwrap();
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    config
}

/// A role process whose stderr lines are collected.
struct Role {
    name: String,
    child: Child,
    lines: Receiver<String>,
    seen: Vec<String>,
}

impl Role {
    fn start(config: &Path, args: &[&str]) -> Role {
        let mut child = Command::new(BIN)
            .args(args)
            .arg("--config")
            .arg(config)
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (tx, rx) = channel();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Role {
            name: args.join(" "),
            child,
            lines: rx,
            seen: Vec::new(),
        }
    }

    /// Waits for a stderr line containing `text`, failing if the role exits first.
    fn expect_line(&mut self, text: &str, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            if self.seen.iter().any(|l| l.contains(text)) {
                return;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{}: no line with `{text}` within {within:?}; stderr: {:#?}",
                self.name,
                self.seen
            );
            match self
                .lines
                .recv_timeout(left.min(Duration::from_millis(200)))
            {
                Ok(l) => self.seen.push(l),
                Err(_) => {
                    if let Some(s) = self.child.try_wait().unwrap() {
                        self.seen.extend(self.lines.try_iter());
                        if !self.seen.iter().any(|l| l.contains(text)) {
                            panic!(
                                "{} exited ({s}) before `{text}`: {:#?}",
                                self.name, self.seen
                            );
                        }
                    }
                }
            }
        }
    }

    /// Waits for the role to exit; returns its status code.
    fn wait(&mut self, within: Duration) -> i32 {
        let deadline = Instant::now() + within;
        loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                self.seen.extend(self.lines.try_iter());
                return s.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "{} did not exit", self.name);
            // Draining stderr doubles as the poll interval.
            if let Ok(l) = self.lines.recv_timeout(Duration::from_millis(20)) {
                self.seen.push(l);
            }
        }
    }

    fn signal(&self, sig: libc::c_int) {
        // SAFETY: signalling a child this test started and has not reaped.
        unsafe {
            libc::kill(self.child.id() as libc::pid_t, sig);
        }
    }
}

impl Drop for Role {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const LONG: Duration = Duration::from_secs(60);

#[test]
fn roles_started_in_reverse_order_wait_for_their_peers() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), 2);
    let pcap = sample("sample.pcap");
    let pcap = pcap.to_str().unwrap();

    // Capture first: nobody reads the rings yet, so it waits rather than reading.
    let mut capture = Role::start(&config, &["capture", "-r", pcap]);
    capture.expect_line("waiting for 2 detect worker(s)", LONG);
    // The workers next: no eve-writer yet, so they wait too (and capture goes on waiting).
    let mut workers: Vec<Role> = (0..2)
        .map(|w| Role::start(&config, &["detect", "--worker", &w.to_string()]))
        .collect();
    for w in &mut workers {
        w.expect_line("waiting for the eve-writer", LONG);
    }
    assert!(capture.child.try_wait().unwrap().is_none());
    // The eve-writer last: everything flows, capture reads to the end, the workers drain.
    let mut writer = Role::start(&config, &["eve-writer"]);
    for w in &mut workers {
        w.expect_line("the eve-writer (socket", LONG);
    }
    assert_eq!(capture.wait(LONG), 0, "capture: {:#?}", capture.seen);
    for w in &mut workers {
        assert_eq!(w.wait(LONG), 0, "{}: {:#?}", w.name, w.seen);
    }
    writer.signal(libc::SIGTERM);
    assert_eq!(writer.wait(LONG), 0, "eve-writer: {:#?}", writer.seen);
    let got = alert_sids(&eve(&dir.path().join("logs/eve.json")));

    // The same input through the supervisor.
    let reference = tempfile::tempdir().unwrap();
    let out = meerkat()
        .args(["-q", "run", "-r", pcap, "-S"])
        .arg(sample("sample.rules"))
        .arg("-l")
        .arg(reference.path())
        .args(["--workers", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let want = alert_sids(&eve(&reference.path().join("eve.json")));
    assert_eq!(got, want);
    // Every sample rule but the one that never fires.
    let mut distinct = got.clone();
    distinct.dedup();
    assert_eq!(distinct, (1_000_001..=1_000_008).collect::<Vec<u64>>());
}

#[test]
fn a_waiting_role_stops_cleanly_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), 1);
    let mut detect = Role::start(&config, &["detect", "--worker", "0"]);
    detect.expect_line("waiting for the eve-writer", LONG);
    detect.signal(libc::SIGTERM);
    assert_eq!(detect.wait(LONG), 0, "{:#?}", detect.seen);
    assert!(
        detect
            .seen
            .iter()
            .any(|l| l.contains("stopped while waiting for the eve-writer")),
        "{:#?}",
        detect.seen
    );
}

#[test]
fn a_role_without_runtime_dir_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("meerkat.yaml");
    std::fs::write(&config, "detect:\n  workers: 1\n").unwrap();
    for args in [
        vec!["eve-writer"],
        vec!["detect", "--worker", "0"],
        vec!["capture", "-r", "x.pcap"],
    ] {
        let out = meerkat()
            .args(&args)
            .arg("--config")
            .arg(&config)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(
            stderr(&out).contains("runtime-dir is not set"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// `meerkat probe ROLE` with the config; returns (exit code, stdout + stderr).
fn probe(config: &Path, role: &str) -> (i32, String) {
    let out = meerkat()
        .args(["probe", role, "--config"])
        .arg(config)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!("{}{}", stdout(&out), stderr(&out)),
    )
}

/// Polls `probe` until it exits 0.
fn wait_serving(config: &Path, role: &str) {
    let deadline = Instant::now() + LONG;
    loop {
        let (code, text) = probe(config, role);
        if code == 0 {
            assert!(text.contains(&format!("{role}: serving")), "{text}");
            return;
        }
        assert!(Instant::now() < deadline, "{role} never served: {text}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn probe_tells_serving_roles_from_absent_and_dead_ones() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), 1);
    for role in ["eve-writer", "detect-0", "capture"] {
        let (code, text) = probe(&config, role);
        assert_eq!(code, 1, "{role} serves before it started: {text}");
        assert!(text.contains(&format!("{role} is not serving")), "{text}");
    }
    let (code, text) = probe(&config, "detect");
    assert_eq!(code, 2, "{text}");
    assert!(
        text.contains("expected eve-writer, capture or detect-N"),
        "{text}"
    );

    let mut writer = Role::start(&config, &["eve-writer"]);
    wait_serving(&config, "eve-writer");
    let mut detect = Role::start(&config, &["detect", "--worker", "0"]);
    wait_serving(&config, "detect-0");
    // Capture has not started: still not serving.
    assert_eq!(probe(&config, "capture").0, 1);

    // A worker killed: its page and ring are left behind, the probe sees it is gone.
    detect.signal(libc::SIGKILL);
    detect.wait(LONG);
    let (code, text) = probe(&config, "detect-0");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("is gone"), "{text}");
    // The writer killed: its socket file is left behind, nobody answers on it.
    writer.signal(libc::SIGKILL);
    writer.wait(LONG);
    let (code, text) = probe(&config, "eve-writer");
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("cannot connect"), "{text}");
}
