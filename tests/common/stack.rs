//! A whole stack (`meerkat run`) in the background for integration tests, with its
//! runtime dir, log dir and control socket in a test directory, and the helpers to drive
//! it: `meerkat ctl` on its socket, its counter pages, waiting with a deadline.

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use super::{eve, meerkat, stderr, stdout};

/// Polls `cond` every 10 ms until it holds; panics naming `what` after `secs`.
pub fn wait_until(what: &str, secs: u64, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A `meerkat run` in the background with an explicit runtime dir.
pub struct Running {
    pub child: Child,
    pub runtime: PathBuf,
    pub logs: PathBuf,
    pub socket: PathBuf,
}

impl Running {
    pub fn start(dir: &Path, rules: &Path, inputs: &[&Path], extra: &[&str]) -> Running {
        let runtime = dir.join("rt");
        let logs = dir.join("logs");
        let socket = dir.join("ctl.sock");
        std::fs::create_dir_all(&logs).unwrap();
        let mut cmd = meerkat();
        cmd.current_dir(dir).args([
            "-q",
            "run",
            "-S",
            rules.to_str().unwrap(),
            "-l",
            logs.to_str().unwrap(),
            "--set",
            &format!("runtime-dir={}", runtime.display()),
            "--set",
            &format!("control.socket={}", socket.display()),
        ]);
        for i in inputs {
            cmd.args(["-r", i.to_str().unwrap()]);
        }
        cmd.args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Running {
            child: cmd.spawn().unwrap(),
            runtime,
            logs,
            socket,
        }
    }

    /// A stack with no input that keeps running until shut down (`supervisor.keep-running`),
    /// returned once its control API answers `health`.
    pub fn serving(dir: &Path, rules: &Path, extra: &[&str]) -> Running {
        let mut args = vec!["--set", "supervisor.keep-running=yes"];
        args.extend_from_slice(extra);
        let r = Running::start(dir, rules, &[], &args);
        wait_until("the stack to serve", 60, || {
            r.ctl(&["health"]).status.success()
        });
        r
    }

    pub fn ctl(&self, args: &[&str]) -> Output {
        meerkat()
            .args(["ctl", "--socket", self.socket.to_str().unwrap()])
            .args(args)
            .output()
            .unwrap()
    }

    pub fn ctl_json(&self, args: &[&str]) -> serde_json::Value {
        let mut a = vec!["--json"];
        a.extend_from_slice(args);
        let out = self.ctl(&a);
        assert!(
            out.status.success(),
            "ctl {args:?}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        serde_json::from_str(&stdout(&out)).unwrap()
    }

    pub fn counters(&self, role: &str) -> Option<meerkat_shm::CounterReader> {
        meerkat_shm::CounterReader::open(&self.runtime.join(format!("counters-{role}"))).ok()
    }

    pub fn counter(&self, role: &str, name: &str) -> u64 {
        self.counters(role).and_then(|c| c.get(name)).unwrap_or(0)
    }

    pub fn pid(&self, role: &str) -> u32 {
        self.counters(role).map_or(0, |c| c.pid())
    }

    /// Waits for the stack to exit (at most `secs`).
    pub fn wait(mut self, secs: u64) -> (Output, Vec<serde_json::Value>) {
        let deadline = Instant::now() + Duration::from_secs(secs);
        while self.child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let out = self.child.wait_with_output().unwrap();
                panic!("the stack did not exit within {secs} s: {}", stderr(&out));
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = self.child.wait_with_output().unwrap();
        let eve_path = self.logs.join("eve.json");
        let events = if eve_path.exists() {
            eve(&eve_path)
        } else {
            Vec::new()
        };
        (out, events)
    }
}

/// Writes a rule file `name` into `dir`.
pub fn rules_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

/// A loopback port that was free a moment ago (for `control.listen` and friends).
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
