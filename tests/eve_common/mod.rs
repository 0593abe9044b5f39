//! Helpers of the eve-writer integration tests (`tests/eve_*.rs`): traffic and rules
//! that make many events, starting the roles by hand (the supervisor does not restart
//! roles yet), reading counter pages, and validating every EVE line against Suricata's
//! schema (`../shared/corpus/suricata/eve-schema.json`, or `$MEERKAT_SHARED/...`).

#![allow(dead_code, clippy::unwrap_used, clippy::print_stdout)]

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_meerkat");

/// The rule that fires once per exchange of [`write_pcap`].
pub const RULES: &str = "alert udp any any -> any 7777 (msg:\"MEERKAT TEST marker\"; \
     content:\"meerkat-eve-test\"; classtype:misc-activity; sid:4000001; rev:2; \
     metadata:created_at 2024_01_01;)\n";

/// A pcap of `n` UDP request/response exchanges between distinct endpoints; with
/// [`RULES`] each gives one alert and one flow record.
pub fn write_pcap(path: &Path, n: usize) {
    let mut convs = Vec::with_capacity(n);
    for i in 0..n {
        let client = SocketAddr::new(
            IpAddr::V4(Ipv4Addr::new(10, 1, (i >> 8) as u8, i as u8)),
            10_000 + (i % 50_000) as u16,
        );
        let server = SocketAddr::new(IpAddr::V4(Ipv4Addr::new(172, 16, 0, 1)), 7777);
        let start = 1_700_000_000_000_000_000 + i as u64 * 1_000_000;
        let req = format!("meerkat-eve-test request {i}");
        convs.push(meerkat_synth::session::udp_exchange(
            client,
            server,
            start,
            300_000,
            req.as_bytes(),
            Some(b"ok"),
            None,
        ));
    }
    let frames = meerkat_synth::session::interleave(convs);
    let bytes = meerkat_synth::pcap::to_bytes(
        &frames,
        meerkat_synth::pcap::Format::Micro { big_endian: false },
        1,
    );
    std::fs::write(path, bytes).unwrap();
}

/// A test directory: logs, runtime dir, rules and config.
pub struct Setup {
    pub dir: tempfile::TempDir,
    pub log_dir: PathBuf,
    pub runtime: PathBuf,
    pub config: PathBuf,
}

impl Setup {
    /// Writes a config with `extra` YAML appended (outputs etc.) under a fresh dir.
    pub fn new(extra: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        Setup::in_dir(dir, extra)
    }

    pub fn in_dir(dir: tempfile::TempDir, extra: &str) -> Setup {
        let log_dir = dir.path().join("logs");
        let runtime = dir.path().join("run");
        std::fs::create_dir_all(&log_dir).unwrap();
        std::fs::create_dir_all(&runtime).unwrap();
        let rules = dir.path().join("test.rules");
        std::fs::write(&rules, RULES).unwrap();
        let config = dir.path().join("meerkat.yaml");
        std::fs::write(
            &config,
            format!(
                "default-log-dir: {}\nruntime-dir: {}\nrule-files: [{}]\n{extra}",
                log_dir.display(),
                runtime.display(),
                rules.display()
            ),
        )
        .unwrap();
        Setup {
            dir,
            log_dir,
            runtime,
            config,
        }
    }

    /// Starts one role with `--config` and extra arguments.
    pub fn spawn(&self, role: &str, args: &[&str]) -> Child {
        Command::new(BIN)
            .arg("-q")
            .arg(role)
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .stdin(Stdio::null())
            .spawn()
            .unwrap()
    }

    /// Starts the eve-writer and waits until its socket accepts connections.
    pub fn start_writer(&self) -> Child {
        let mut child = self.spawn("eve-writer", &[]);
        let sock = self.runtime.join("eve.sock");
        wait_for("the eve-writer socket", Duration::from_secs(30), || {
            if let Ok(Some(s)) = child.try_wait() {
                panic!("eve-writer exited while starting: {s}");
            }
            std::os::unix::net::UnixStream::connect(&sock).is_ok()
        });
        child
    }

    /// Starts `workers` detect workers and waits until each is attached to its ring.
    pub fn start_workers(&self, workers: usize) -> Vec<Child> {
        let children: Vec<Child> = (0..workers)
            .map(|w| self.spawn("detect", &["--worker", &w.to_string()]))
            .collect();
        wait_for("the detect workers", Duration::from_secs(60), || {
            (0..workers).all(|w| {
                meerkat_shm::status(&self.runtime.join(format!("ring-{w}")))
                    .is_ok_and(|s| s.consumer_alive)
            })
        });
        children
    }

    /// A counter of a role's page (0 when the page or name is missing).
    pub fn counter(&self, role: &str, name: &str) -> u64 {
        meerkat_shm::CounterReader::open(&self.runtime.join(format!("counters-{role}")))
            .ok()
            .and_then(|r| r.get(name))
            .unwrap_or(0)
    }
}

/// Polls `ok` until it holds; panics naming `what` after `limit`.
pub fn wait_for(what: &str, limit: Duration, mut ok: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ok() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Waits for a child to exit successfully.
pub fn wait_success(child: &mut Child, what: &str, limit: Duration) {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            assert!(s.success(), "{what} failed: {s}");
            return;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("{what} did not finish in {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Sends SIGTERM to a child.
pub fn terminate(child: &Child) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
}

/// Sends a signal to a child.
pub fn signal(child: &Child, sig: i32) {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: signalling our own child.
    unsafe {
        libc::kill(pid, sig);
    }
}

/// The schema validator, or None (with a message) when `../shared` is absent.
pub fn schema() -> Option<jsonschema::Validator> {
    let base = std::env::var_os("MEERKAT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    let path = base.join("corpus/suricata/eve-schema.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        println!(
            "note: {} is absent: EVE lines are not validated against Suricata's schema",
            path.display()
        );
        return None;
    };
    let schema: serde_json::Value = serde_json::from_str(&text).unwrap();
    Some(jsonschema::validator_for(&schema).unwrap())
}

/// Parses every line of `text` and validates each against the schema (when present).
pub fn validate_lines(
    text: &str,
    schema: Option<&jsonschema::Validator>,
) -> Vec<serde_json::Value> {
    text.lines()
        .enumerate()
        .map(|(i, line)| {
            let v: serde_json::Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("line {} is not JSON ({e}): {line}", i + 1));
            if let Some(s) = schema {
                let errors: Vec<String> = s.iter_errors(&v).map(|e| e.to_string()).collect();
                assert!(
                    errors.is_empty(),
                    "line {} does not validate: {errors:?}\n{line}",
                    i + 1
                );
            }
            v
        })
        .collect()
}

/// Reads and validates an EVE file.
pub fn read_eve(path: &Path, schema: Option<&jsonschema::Validator>) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    validate_lines(&text, schema)
}

/// Lines other than `stats` records, counted by content (order across workers varies).
pub fn event_multiset(records: &[serde_json::Value]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in records {
        if r["event_type"] == "stats" {
            continue;
        }
        *m.entry(r.to_string()).or_insert(0) += 1;
    }
    m
}

/// Runs capture on `pcap` to the end.
pub fn run_capture(setup: &Setup, pcap: &Path) {
    let mut c = setup.spawn("capture", &["-r", pcap.to_str().unwrap()]);
    wait_success(&mut c, "capture", Duration::from_secs(120));
}

/// Whether a program is on PATH.
pub fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// A redis-server of the test's own on a Unix socket in `dir` (None, with a message,
/// when redis-server is not installed).
pub struct Redis {
    child: Child,
    pub socket: PathBuf,
}

impl Redis {
    pub fn start(dir: &Path) -> Option<Redis> {
        if !have("redis-server") {
            println!("skipped: redis-server is not installed (apt-get install redis-server)");
            return None;
        }
        let socket = dir.join("redis.sock");
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&socket)
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        wait_for("redis-server", Duration::from_secs(10), || {
            std::os::unix::net::UnixStream::connect(&socket).is_ok()
        });
        Some(Redis { child, socket })
    }

    /// Every element of a list, as strings.
    pub fn list(&self, key: &str) -> Vec<String> {
        use std::io::{BufRead, BufReader, Read, Write};
        let mut c = std::os::unix::net::UnixStream::connect(&self.socket).unwrap();
        let cmd = format!(
            "*4\r\n$6\r\nLRANGE\r\n${}\r\n{key}\r\n$1\r\n0\r\n$2\r\n-1\r\n",
            key.len()
        );
        c.write_all(cmd.as_bytes()).unwrap();
        let mut r = BufReader::new(c);
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let n: i64 = line.trim_end().trim_start_matches('*').parse().unwrap();
        let mut out = Vec::new();
        for _ in 0..n.max(0) {
            line.clear();
            r.read_line(&mut line).unwrap();
            let len: usize = line.trim_end().trim_start_matches('$').parse().unwrap();
            let mut b = vec![0u8; len + 2];
            r.read_exact(&mut b).unwrap();
            b.truncate(len);
            out.push(String::from_utf8(b).unwrap());
        }
        out
    }
}

impl Redis {
    /// The `eve` field of every entry of a stream (`XRANGE key - +`).
    pub fn stream(&self, key: &str) -> Vec<String> {
        use std::io::{BufRead, BufReader, Write};
        let mut c = std::os::unix::net::UnixStream::connect(&self.socket).unwrap();
        let cmd = format!(
            "*4\r\n$6\r\nXRANGE\r\n${}\r\n{key}\r\n$1\r\n-\r\n$1\r\n+\r\n",
            key.len()
        );
        c.write_all(cmd.as_bytes()).unwrap();
        let mut r = BufReader::new(c);
        // Flattens the nested reply into its bulk strings.
        fn read(r: &mut impl BufRead, out: &mut Vec<String>) {
            let mut line = String::new();
            r.read_line(&mut line).unwrap();
            let (kind, rest) = line.trim_end().split_at(1);
            match kind {
                "*" => {
                    for _ in 0..rest.parse::<i64>().unwrap().max(0) {
                        read(r, out);
                    }
                }
                "$" => {
                    let len: usize = rest.parse().unwrap();
                    let mut b = vec![0u8; len + 2];
                    r.read_exact(&mut b).unwrap();
                    b.truncate(len);
                    out.push(String::from_utf8(b).unwrap());
                }
                _ => panic!("unexpected reply {line}"),
            }
        }
        let mut flat = Vec::new();
        read(&mut r, &mut flat);
        // Each entry: id, "eve", record.
        flat.chunks(3)
            .map(|c| {
                assert_eq!(c[1], "eve");
                c[2].clone()
            })
            .collect()
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `meerkat run -c <config> -r <pcap> <args>` and checks it succeeds.
pub fn meerkat_run(setup: &Setup, pcap: &Path, args: &[&str]) {
    let out = Command::new(BIN)
        .arg("-q")
        .arg("run")
        .arg("-c")
        .arg(&setup.config)
        .arg("-r")
        .arg(pcap)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "meerkat run failed: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}
