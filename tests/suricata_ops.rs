//! Issue 27 end to end: what a team replacing Suricata keeps using works on Meerkat
//! unchanged: Suricata's unix-socket protocol (`suricatasc`, with the reply shapes the
//! reference 8.0.6 gives), the unix-socket run mode (`--unix-socket`, pcaps queued by
//! `pcap-file`, each into its own directory), `-T`, `-V`/`--build-info`, SIGUSR2 reload,
//! a first run without rules, and suricata-update run offline against ET Open.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::io::{BufRead, BufReader, Write};
use std::net::IpAddr;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::sc::Sc;
use common::stack::*;
use common::*;
use meerkat_synth::pcap::{self, Format};
use meerkat_synth::{Frame, packet, session};
use serde_json::{Value, json};

const MARKER_RULE: &str = "alert udp any any -> any 53 (msg:\"marker\"; content:\"MARKER\"; \
     hostbits:set,scanner,src; sid:7; rev:1;)\n";
const LATE_RULE: &str =
    "alert udp any any -> any 53 (msg:\"late\"; content:\"LATE\"; sid:8; rev:1;)\n";
const T0: u64 = 1_700_000_000_000_000_000;

/// `n` UDP packets from `src` over 50 flows; every 10th carries MARKER.
fn write_pcap(path: &Path, n: u64, src: &str) -> PathBuf {
    let s: IpAddr = src.parse().unwrap();
    let d: IpAddr = "10.2.0.2".parse().unwrap();
    let frames: Vec<Frame> = (0..n)
        .map(|i| {
            let payload = if i % 10 == 0 {
                format!("..MARKER..{i}")
            } else {
                format!("nothing..{i}")
            };
            let udp = packet::udp(s, d, 1024 + (i % 50) as u16, 53, payload.as_bytes());
            let ip = packet::ip(s, d, packet::PROTO_UDP, 64, 1, &udp);
            Frame {
                ts_ns: T0 + i * 1000,
                data: session::frame_ip(s, d, None, &ip),
            }
        })
        .collect();
    let bytes = pcap::to_bytes(
        &frames,
        Format::Micro { big_endian: false },
        pcap::LINKTYPE_ETHERNET,
    );
    std::fs::write(path, bytes).unwrap();
    path.to_path_buf()
}

impl Sc {
    /// The message of an OK reply.
    fn ok(&mut self, name: &str, args: Value) -> Value {
        let r = self.cmd(name, args.clone());
        assert_eq!(r["return"], "OK", "{name} {args}: {r}");
        r["message"].clone()
    }

    /// The message of a NOK reply.
    fn nok(&mut self, name: &str, args: Value) -> String {
        let r = self.cmd(name, args.clone());
        assert_eq!(r["return"], "NOK", "{name} {args}: {r}");
        r["message"].as_str().unwrap().to_string()
    }
}

fn connectable(p: &Path) -> bool {
    UnixStream::connect(p).is_ok()
}

/// The reference's `suricatasc` (Suricata 8's client), if ../shared has it.
fn suricatasc() -> Option<PathBuf> {
    let p = shared()?.join("tools/reference/suricatasc");
    p.exists().then_some(p)
}

fn alerts_in(dir: &Path) -> usize {
    count_in(dir, "alert")
}

/// Whole EVE lines of one type in `dir`/eve.json so far (a line being written is not
/// counted).
fn count_in(dir: &Path, kind: &str) -> usize {
    let p = dir.join("eve.json");
    if !p.exists() {
        return 0;
    }
    let needle = format!("\"event_type\":\"{kind}\"");
    std::fs::read_to_string(&p)
        .unwrap()
        .split_inclusive('\n')
        .filter(|l| l.ends_with('\n') && l.contains(&needle))
        .count()
}

fn events_of(dir: &Path, kind: &str) -> Vec<Value> {
    eve(&dir.join("eve.json"))
        .into_iter()
        .filter(|e| e["event_type"] == kind)
        .collect()
}

#[test]
fn unix_socket_mode_answers_suricatas_commands_and_reads_queued_pcaps() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let sock = d.join("suricata-command.socket");
    let r = Running::start(
        d,
        &rules,
        &[],
        &[&format!("--unix-socket={}", sock.display())],
    );
    wait_until("the unix-command socket", 60, || connectable(&sock));
    let mode = std::fs::metadata(&sock).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "owner-only socket");
    let mut sc = Sc::connect(&sock);

    // The run's identity, in Suricata's shapes.
    let v = sc.ok("version", Value::Null);
    assert!(v.as_str().unwrap().starts_with("8.0.6 RELEASE"), "{v}");
    assert!(sc.ok("uptime", Value::Null).is_u64());
    assert_eq!(sc.ok("running-mode", Value::Null), "autofp");
    assert_eq!(sc.ok("capture-mode", Value::Null), "UNIX_SOCKET");
    let list = sc.ok("command-list", Value::Null);
    let names: Vec<&str> = list["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(list["count"], names.len());
    for c in [
        "shutdown",
        "reload-rules",
        "ruleset-reload-nonblocking",
        "dump-counters",
        "pcap-file",
        "pcap-file-continuous",
        "pcap-interrupt",
        "add-hostbit",
        "get-flow-stats-by-id",
        "dataset-lookup",
    ] {
        assert!(names.contains(&c), "{c} in {names:?}");
    }
    assert!(
        !names.contains(&"iface-list"),
        "live-capture commands are not listed"
    );
    assert_eq!(sc.nok("nosuch", Value::Null), "Unknown command");
    assert_eq!(sc.nok("iface-list", Value::Null), "Unknown command");

    // Rules.
    let stats = sc.ok("ruleset-stats", Value::Null);
    assert_eq!(
        stats,
        json!([{"id": 0, "rules_loaded": 1, "rules_failed": 0, "rules_skipped": 0}])
    );
    assert_eq!(sc.ok("ruleset-failed-rules", Value::Null), json!([]));
    let t0 = sc.ok("ruleset-reload-time", Value::Null);
    assert_eq!(t0[0]["id"], 0);
    assert!(
        t0[0]["last_reload"].as_str().unwrap().ends_with("+0000"),
        "{t0}"
    );
    std::fs::write(&rules, format!("{MARKER_RULE}{LATE_RULE}alert udp any any -> any any (msg:\"bad\"; frobnicate; sid:9;)\n")).unwrap();
    assert_eq!(sc.ok("reload-rules", Value::Null), "done");
    let stats = sc.ok("ruleset-stats", Value::Null);
    assert_eq!(
        (
            stats[0]["rules_loaded"].as_u64(),
            stats[0]["rules_failed"].as_u64()
        ),
        (Some(2), Some(1))
    );
    let failed = sc.ok("ruleset-failed-rules", Value::Null);
    assert_eq!(failed.as_array().unwrap().len(), 1, "{failed}");
    assert_eq!(failed[0]["line"], 3);
    assert_eq!(failed[0]["tenant_id"], 0);
    assert!(
        failed[0]["rule"].as_str().unwrap().contains("frobnicate"),
        "{failed}"
    );
    assert_eq!(failed[0]["filename"], rules.display().to_string());
    assert_ne!(sc.ok("ruleset-reload-time", Value::Null), t0);
    assert_eq!(sc.ok("ruleset-reload-rules", Value::Null), "done");
    assert_eq!(r.ctl_json(&["status"])["ruleset"]["generation"], 3);

    // Configuration, memcaps, datasets: the replies Suricata gives.
    assert_eq!(
        sc.ok("conf-get", json!({"variable": "default-log-dir"})),
        r.logs.display().to_string()
    );
    assert_eq!(
        sc.nok("conf-get", json!({"variable": "no.such"})),
        "Variable not found"
    );
    assert_eq!(sc.ok("memcap-list", Value::Null), json!([]));
    assert_eq!(
        sc.nok(
            "memcap-set",
            json!({"config": "stream.memcap", "memcap": "1gb"})
        ),
        "Memcap value not found. Use 'memcap-list' to show all"
    );
    assert_eq!(
        sc.nok(
            "dataset-add",
            json!({"setname": "x", "settype": "string", "datavalue": "YWJj"})
        ),
        "set not found or wrong type"
    );
    assert_eq!(sc.ok("reopen-log-files", Value::Null), "done");

    // pcap-file's checks, then two pcaps, each read into its own directory.
    let (o1, o2) = (d.join("o1"), d.join("o2"));
    std::fs::create_dir_all(&o1).unwrap();
    std::fs::create_dir_all(&o2).unwrap();
    let p1 = write_pcap(&d.join("one.pcap"), 200, "10.1.0.1");
    let p2 = write_pcap(&d.join("two.pcap"), 300, "10.1.0.9");
    let arg = |p: &Path, o: &Path| json!({"filename": p.display().to_string(), "output-dir": o.display().to_string()});
    assert_eq!(
        sc.nok("pcap-file", arg(&d.join("nope.pcap"), &o1)),
        "filename does not exist"
    );
    assert_eq!(
        sc.nok("pcap-file", json!({"filename": p1.display().to_string()})),
        "output-dir param is mandatory"
    );
    assert_eq!(
        sc.nok("pcap-file", arg(&p1, &d.join("nodir"))),
        "output-dir does not exist"
    );
    assert_eq!(
        sc.ok("pcap-file", arg(&p1, &o1)),
        "Successfully added file to list"
    );
    assert_eq!(
        sc.ok("pcap-file", arg(&p2, &o2)),
        "Successfully added file to list"
    );
    let n = sc.ok("pcap-file-number", Value::Null).as_u64().unwrap();
    assert!(n <= 2, "{n}");
    wait_until("both pcaps to be read", 120, || {
        sc.ok("pcap-file-number", Value::Null) == 0
            && sc.ok("pcap-current", Value::Null) == "None"
            && alerts_in(&o2) == 30
            // The last pcap's flows end once it has been read (EndInput).
            && count_in(&o2, "flow") == 50
    });
    assert_eq!(
        sc.ok("pcap-file-list", Value::Null),
        json!({"count": 0, "files": []})
    );
    assert_eq!(
        alerts_in(&o1),
        20,
        "the first pcap's alerts in its directory"
    );
    // Each pcap is a run of its own: its flows end with it, into its directory.
    let flows1 = events_of(&o1, "flow");
    assert_eq!(
        flows1.len(),
        50,
        "one flow record per flow of the first pcap"
    );
    assert!(flows1.iter().all(|f| f["src_ip"] == "10.1.0.1"));
    let flows2 = events_of(&o2, "flow");
    assert_eq!(flows2.len(), 50);
    assert!(flows2.iter().all(|f| f["src_ip"] == "10.1.0.9"));
    assert_eq!(
        alerts_in(&r.logs),
        0,
        "nothing in the run's own log directory"
    );

    // Hostbits: the rule set `scanner` on both sources; the socket sees, sets, removes.
    let hb = sc.ok("list-hostbit", json!({"ipaddress": "10.1.0.9"}));
    assert_eq!(hb["count"], 1, "{hb}");
    assert_eq!(hb["hostbits"][0]["name"], "scanner");
    assert_eq!(
        sc.nok("list-hostbit", json!({"ipaddress": "1.2.3.4"})),
        "host not found"
    );
    let add = |ip: &str, bit: &str, expire: u64| json!({"ipaddress": ip, "hostbit": bit, "expire": expire});
    assert_eq!(
        sc.ok("add-hostbit", add("1.2.3.4", "scanner", 3600)),
        "hostbit added"
    );
    let hb = sc.ok("list-hostbit", json!({"ipaddress": "1.2.3.4"}));
    assert_eq!(hb["count"], 1);
    let expire = hb["hostbits"][0]["expire"].as_u64().unwrap();
    assert!((3590..=3600).contains(&expire), "{hb}");
    assert_eq!(
        sc.nok("add-hostbit", add("1.2.3.4", "nosuch", 60)),
        "hostbit not found"
    );
    assert_eq!(
        sc.nok("add-hostbit", add("nope", "scanner", 60)),
        "invalid address string"
    );
    assert_eq!(
        sc.ok(
            "remove-hostbit",
            json!({"ipaddress": "1.2.3.4", "hostbit": "scanner"})
        ),
        "hostbit removed"
    );
    assert_eq!(
        sc.nok("list-hostbit", json!({"ipaddress": "1.2.3.4"})),
        "host not found"
    );
    assert_eq!(
        sc.nok("get-flow-stats-by-id", json!({"flow_id": 12345})),
        "Not found"
    );

    // Counters: the EVE stats object.
    let c = sc.ok("dump-counters", Value::Null);
    assert!(c["uptime"].is_u64(), "{c}");
    assert!(c["decoder"]["pkts"].as_u64().unwrap() >= 500, "{c}");

    // The reference's own client, unchanged.
    if let Some(client) = suricatasc() {
        let out = Command::new(&client)
            .args(["-c", "version", sock.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        assert_eq!(v["return"], "OK");
        let o3 = d.join("o3");
        std::fs::create_dir_all(&o3).unwrap();
        let cmd = format!("pcap-file {} {}", p1.display(), o3.display());
        let out = Command::new(&client)
            .args(["-c", &cmd, sock.to_str().unwrap()])
            .output()
            .unwrap();
        let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
        assert_eq!(v["message"], "Successfully added file to list", "{v}");
        wait_until("the pcap suricatasc queued", 120, || alerts_in(&o3) == 20);
    } else {
        eprintln!("skipping the suricatasc part: ../shared/tools/reference/suricatasc is absent");
    }

    assert_eq!(sc.ok("shutdown", Value::Null), "Closing Meerkat");
    let (out, _) = r.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!sock.exists(), "the socket is removed at exit");
}

#[test]
fn the_handshake_and_bad_messages_get_clear_replies() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = rules_file(d, "r.rules", LATE_RULE);
    let sock = d.join("uc.sock");
    // A pcap run with the socket enabled explicitly: the pcap commands, PCAP_FILE mode.
    let r = Running::serving(
        d,
        &rules,
        &[
            "--set",
            "unix-command.enabled=yes",
            "--set",
            &format!("unix-command.filename={}", sock.display()),
        ],
    );
    wait_until("the unix-command socket", 60, || connectable(&sock));
    let mut sc = Sc::connect(&sock);
    assert_eq!(sc.ok("capture-mode", Value::Null), "PCAP_FILE");
    // Two commands in one write, then one split over two writes: each answered.
    sc.w.write_all(b"{\"command\":\"uptime\"}\n{\"command\":\"running-mode\"}\n")
        .unwrap();
    for _ in 0..2 {
        let mut line = String::new();
        sc.r.read_line(&mut line).unwrap();
        assert!(line.contains("\"return\":\"OK\""), "{line}");
    }
    sc.w.write_all(b"{\"command\":").unwrap();
    sc.w.write_all(b"\"version\"}\n").unwrap();
    let mut line = String::new();
    sc.r.read_line(&mut line).unwrap();
    assert!(line.contains("8.0.6"), "{line}");
    // Not a command: a NOK naming the problem, and the connection closes.
    let bad = sc.send(&json!({"bogus": 1}));
    assert_eq!(bad["return"], "NOK");
    let mut rest = String::new();
    assert_eq!(
        sc.r.read_line(&mut rest).unwrap(),
        0,
        "closed after a bad message"
    );

    // A handshake with another version.
    let mut w = UnixStream::connect(&sock).unwrap();
    w.write_all(b"{\"version\": \"9.9\"}\n").unwrap();
    let mut line = String::new();
    BufReader::new(w.try_clone().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("NOK") && line.contains("9.9"), "{line}");
    // Not JSON at all.
    let mut w = UnixStream::connect(&sock).unwrap();
    w.write_all(b"hello\n").unwrap();
    let mut line = String::new();
    BufReader::new(w.try_clone().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert!(line.contains("NOK") && line.contains("not JSON"), "{line}");

    r.ctl_json(&["shutdown"]);
    let (out, _) = r.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// As `Running::serving`, with the supervisor's info log (without `-q`).
fn serving_with_info_log(dir: &Path, rules: &Path, extra: &[&str]) -> Running {
    let (runtime, logs, socket) = (dir.join("rt"), dir.join("logs"), dir.join("ctl.sock"));
    std::fs::create_dir_all(&logs).unwrap();
    let child = meerkat()
        .current_dir(dir)
        .args([
            "run",
            "-S",
            rules.to_str().unwrap(),
            "-l",
            logs.to_str().unwrap(),
        ])
        .args(["--set", "supervisor.keep-running=yes"])
        .args(["--set", &format!("runtime-dir={}", runtime.display())])
        .args(["--set", &format!("control.socket={}", socket.display())])
        .args(extra)
        .env_remove("RUST_LOG")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let r = Running {
        child,
        runtime,
        logs,
        socket,
    };
    wait_until("the stack to serve", 60, || {
        r.ctl(&["health"]).status.success()
    });
    r
}

#[test]
fn sigusr2_reloads_the_rules_under_traffic_without_losing_a_packet() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 60_000;
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let pcap = write_pcap(&d.join("in.pcap"), n, "10.1.0.1");
    let r = serving_with_info_log(d, &rules, &["--workers", "2"]);
    r.ctl_json(&["add-pcap", pcap.to_str().unwrap()]);
    let pid = r.child.id() as libc::pid_t;
    for g in 2..=4u64 {
        // SAFETY: signalling the child this test started.
        assert_eq!(unsafe { libc::kill(pid, libc::SIGUSR2) }, 0);
        wait_until("the reload of the SIGUSR2", 60, || {
            r.ctl_json(&["status"])["ruleset"]["generation"] == g
        });
    }
    // Every packet reaches a worker across the reloads (a lost one times this out).
    let inspected = || -> u64 {
        (0..2)
            .map(|w| r.counter(&format!("detect-{w}"), &format!("detect.{w}.packets")))
            .sum()
    };
    wait_until("every packet to be inspected", 120, || inspected() >= n);
    assert_eq!(inspected(), n, "no packet inspected twice");
    r.ctl_json(&["flush"]);
    assert_eq!(alerts_in(&r.logs) as u64, n / 10);
    r.ctl_json(&["shutdown"]);
    let (out, _) = r.wait(60);
    assert!(out.status.success());
    let log = stderr(&out);
    assert!(
        log.contains("SIGUSR2") && log.contains("ruleset generation 4"),
        "the reload is logged with its generation: {log}"
    );
}

fn suricata_test(d: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = meerkat()
        .current_dir(d)
        .args(["-T", "-l", d.to_str().unwrap()])
        .args(args)
        .output()
        .unwrap();
    (out.status.code(), stderr(&out) + &stdout(&out))
}

/// threshold.config under -T, as Suricata 8: a line that is not its syntax fails the
/// test (naming file and line); an entry for a rule not loaded and a missing file are
/// warnings.
#[test]
fn dash_t_checks_the_threshold_file() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let th = d.join("threshold.config");
    let set = format!("threshold-file={}", th.display());
    let args = ["-S", rules.to_str().unwrap(), "--set", set.as_str()];
    std::fs::write(
        &th,
        "suppress gen_id 1, sig_id 7, track by_src, ip 10.0.0.0/8\n\
         suppress gen_id 1, sig_id 99\n",
    )
    .unwrap();
    let (code, log) = suricata_test(d, &args);
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("threshold.config:2: no rule with gen_id 1 sig_id 99"),
        "{log}"
    );
    std::fs::write(
        &th,
        "suppress gen_id 1, sig_id 7\nthreshold gen_id 1, sig_id 7, type sometimes\n",
    )
    .unwrap();
    let (code, log) = suricata_test(d, &args);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains("threshold.config:2: unknown type `sometimes`"),
        "{log}"
    );
    std::fs::remove_file(&th).unwrap();
    let (code, log) = suricata_test(d, &args);
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("cannot read threshold file"), "{log}");
}

#[test]
fn dash_t_passes_good_rulesets_and_fails_bad_ones_with_the_errors() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let good = rules_file(d, "good.rules", MARKER_RULE);
    let (code, log) = suricata_test(d, &["-S", good.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("successfully loaded"), "{log}");

    // A keyword no Suricata has: an error, with the file and line.
    let bad = rules_file(
        d,
        "bad.rules",
        &format!("{MARKER_RULE}alert tcp any any -> any any (msg:\"x\"; frobnicate; sid:2;)\n"),
    );
    let (code, log) = suricata_test(d, &["-S", bad.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains("bad.rules:2") && log.contains("frobnicate"),
        "{log}"
    );

    // A Suricata keyword Meerkat does not implement: a warning (the set is Suricata's),
    // an error with --init-errors-fatal.
    let unsupported = rules_file(
        d,
        "asn1.rules",
        &format!(
            "{MARKER_RULE}alert tcp any any -> any any (msg:\"x\"; asn1:bitstring_overflow; sid:3;)\n"
        ),
    );
    let (code, log) = suricata_test(d, &["-S", unsupported.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("asn1"), "{log}");
    let (code, _) = suricata_test(
        d,
        &["-S", unsupported.to_str().unwrap(), "--init-errors-fatal"],
    );
    assert_eq!(code, Some(1));

    // A config that does not parse; a rule file that does not exist (no rules at all).
    std::fs::write(d.join("bad.yaml"), "%YAML 1.1\n---\nvars: [\n").unwrap();
    let (code, log) = suricata_test(d, &["-c", "bad.yaml", "-S", good.to_str().unwrap()]);
    assert_eq!(code, Some(1), "{log}");
    let (code, log) = suricata_test(d, &["-S", d.join("none.rules").to_str().unwrap()]);
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("none.rules"), "{log}");

    // Classification and reference files with lines that are not their syntax.
    std::fs::write(
        d.join("classification.config"),
        "# ok\nconfig classification: marker-class,Marker,2\nconfig classification: broken\n",
    )
    .unwrap();
    std::fs::write(
        d.join("reference.config"),
        "config reference: local https://wiki.example/\nconfig reference: 1x y\n",
    )
    .unwrap();
    let cls = format!(
        "classification-file={}",
        d.join("classification.config").display()
    );
    let refs = format!(
        "reference-config-file={}",
        d.join("reference.config").display()
    );
    let (code, log) = suricata_test(
        d,
        &["-S", good.to_str().unwrap(), "--set", &cls, "--set", &refs],
    );
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("classification.config:3"), "{log}");
    assert!(log.contains("reference.config:2"), "{log}");
}

#[test]
fn classification_and_reference_files_are_loaded() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(
        d.join("classification.config"),
        "config classification: marker-class,A Marker Was Seen,2\n",
    )
    .unwrap();
    let rules = rules_file(
        d,
        "r.rules",
        "alert udp any any -> any 53 (msg:\"marker\"; content:\"MARKER\"; classtype:marker-class; \
         reference:local,m-1; sid:7; rev:1;)\n",
    );
    std::fs::write(
        d.join("reference.config"),
        "config reference: local https://wiki.example/\n",
    )
    .unwrap();
    let pcap = write_pcap(&d.join("in.pcap"), 20, "10.1.0.1");
    let logs = d.join("logs");
    let out = run_in(
        d,
        &[
            "-q",
            "run",
            "-r",
            pcap.to_str().unwrap(),
            "-S",
            rules.to_str().unwrap(),
            "-l",
            logs.to_str().unwrap(),
            "--set",
            "classification-file=classification.config",
            "--set",
            "reference-config-file=reference.config",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let alerts = events_of(&logs, "alert");
    assert_eq!(alerts.len(), 2);
    assert_eq!(alerts[0]["alert"]["category"], "A Marker Was Seen");
    assert_eq!(alerts[0]["alert"]["severity"], 2);
    // A reference system not in the file: Suricata warns and loads the rule.
    std::fs::write(
        d.join("reference.config"),
        "config reference: other https://x/\n",
    )
    .unwrap();
    let (code, log) = suricata_test(
        d,
        &[
            "-S",
            rules.to_str().unwrap(),
            "--set",
            "classification-file=classification.config",
            "--set",
            "reference-config-file=reference.config",
        ],
    );
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("unknown reference key \"local\""), "{log}");
}

#[test]
fn a_first_run_without_rules_warns_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = write_pcap(&d.join("in.pcap"), 50, "10.1.0.1");
    // The default rule path of a config that names a file that is not there.
    std::fs::write(
        d.join("meerkat.yaml"),
        "%YAML 1.1\n---\ndefault-rule-path: /nonexistent/rules\nrule-files:\n  - suricata.rules\n",
    )
    .unwrap();
    let logs = d.join("logs");
    let out = run_in(
        d,
        &[
            "run",
            "-c",
            "meerkat.yaml",
            "-r",
            pcap.to_str().unwrap(),
            "-l",
            logs.to_str().unwrap(),
        ],
    );
    let log = stderr(&out);
    assert!(out.status.success(), "{log}");
    assert!(log.contains("/nonexistent/rules/suricata.rules"), "{log}");
    assert!(
        log.contains("suricata-update") && log.contains("-S"),
        "{log}"
    );
    assert_eq!(
        events_of(&logs, "flow").len(),
        50,
        "flows are logged without rules"
    );
}

#[test]
fn version_build_info_and_lists_for_suricatas_tools() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let v = run_in(d, &["-V"]);
    assert!(v.status.success());
    assert!(
        stdout(&v).starts_with("This is Suricata version 8.0.6 RELEASE"),
        "{}",
        stdout(&v)
    );
    let b = stdout(&run_in(d, &["--build-info"]));
    for l in [
        "This is Suricata version 8.0.6",
        "Features:",
        "--prefix",
        "--sysconfdir",
        "--localstatedir",
    ] {
        assert!(
            b.lines().any(|x| x.trim_start().starts_with(l)),
            "{l} in {b}"
        );
    }
    let dump = stdout(&run_in(d, &["--dump-config"]));
    assert!(
        dump.lines()
            .any(|l| l == "app-layer.protocols.http.enabled = yes"),
        "{dump}"
    );
    let kw = stdout(&run_in(d, &["--list-keywords"]));
    assert!(kw.lines().any(|l| l == "- content"), "{kw}");
    let protos = stdout(&run_in(d, &["--list-app-layer-protos"]));
    assert!(protos.lines().any(|l| l == "dns"), "{protos}");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let ea = d.join("ea");
    let out = run_in(
        d,
        &[
            "--engine-analysis",
            "-S",
            rules.to_str().unwrap(),
            "-l",
            ea.to_str().unwrap(),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let first: Value = serde_json::from_str(
        std::fs::read_to_string(ea.join("rules.json"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(first["id"], 7);
    assert!(ea.join("rules_analysis.txt").exists());
}

#[test]
fn daemon_mode_writes_the_pidfile_and_returns_once_running() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let pidfile = d.join("meerkat.pid");
    let sock = d.join("ctl.sock");
    let out = run_in(
        d,
        &[
            "-D",
            "--pidfile",
            pidfile.to_str().unwrap(),
            "-S",
            rules.to_str().unwrap(),
            "-l",
            d.join("logs").to_str().unwrap(),
            "--set",
            "supervisor.keep-running=yes",
            "--set",
            &format!("control.socket={}", sock.display()),
            "--set",
            &format!("runtime-dir={}", d.join("rt").display()),
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(connectable(&sock), "the stack serves when -D returns");
    // SAFETY: signalling the daemon this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGTERM) }, 0);
    wait_until("the daemon to exit", 60, || !pidfile.exists());
    assert!(d.join("logs/meerkat.log").exists());
}

/// suricata-update from PyPI, offline (file:// sources), with ET Open from ../shared, Meerkat as its
/// `--suricata` binary: it reads `-V`/`--build-info`/`--dump-config`, writes the merged
/// ruleset, tests it with `meerkat -T`, and Meerkat then runs on it.
#[test]
fn suricata_update_runs_offline_with_meerkat_as_its_suricata() {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return;
    };
    let Ok(status) = Command::new("suricata-update").arg("-V").output() else {
        eprintln!("skipping: suricata-update is not installed (pip install suricata-update)");
        return;
    };
    assert!(status.status.success());
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let et = shared.join("corpus/rules/et-open-2023-05");
    let local = d.join("local");
    std::fs::create_dir_all(&local).unwrap();
    // A few ET categories (the whole set works too, it only takes longer).
    for f in [
        "emerging-dns.rules",
        "emerging-scan.rules",
        "emerging-policy.rules",
    ] {
        std::fs::copy(et.join(f), local.join(f)).unwrap();
    }
    let out_dir = d.join("rules");
    // The sources are file:// URLs: nothing is fetched from the network.
    let sources: String = std::fs::read_dir(&local)
        .unwrap()
        .map(|e| format!("  - file://{}\n", e.unwrap().path().display()))
        .collect();
    std::fs::write(
        d.join("update.yaml"),
        format!(
            "disable-conf: {0}/disable.conf\nignore: []\nsources:\n{sources}",
            d.display()
        ),
    )
    .unwrap();
    std::fs::write(d.join("disable.conf"), "").unwrap();
    std::fs::write(
        d.join("meerkat.yaml"),
        format!(
            "%YAML 1.1\n---\ndefault-rule-path: {}\nrule-files:\n  - suricata.rules\n",
            out_dir.display()
        ),
    )
    .unwrap();
    let out = Command::new("suricata-update")
        .current_dir(d)
        .args([
            "--no-reload",
            "-D",
            d.join("data").to_str().unwrap(),
            "-c",
            d.join("update.yaml").to_str().unwrap(),
            "-o",
            out_dir.to_str().unwrap(),
            "--suricata",
            env!("CARGO_BIN_EXE_meerkat"),
            "--suricata-conf",
            d.join("meerkat.yaml").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let log = stderr(&out) + &stdout(&out);
    assert!(out.status.success(), "{log}");
    assert!(
        log.contains("8.0.6"),
        "suricata-update read the version: {log}"
    );
    assert!(
        !log.contains("Failed to parse") && !log.contains("Error"),
        "{log}"
    );
    assert!(
        log.contains("Testing with suricata -T"),
        "the ruleset was tested: {log}"
    );
    let merged = std::fs::read_to_string(out_dir.join("suricata.rules")).unwrap();
    let active = merged.lines().filter(|l| l.starts_with("alert")).count();
    assert!(active > 500, "{active} active rules");
    // Meerkat runs on what it made, through the config suricata-update was given.
    let pcap = write_pcap(&d.join("in.pcap"), 20, "10.1.0.1");
    let logs = d.join("logs");
    let run = run_in(
        d,
        &[
            "-q",
            "run",
            "-c",
            "meerkat.yaml",
            "-r",
            pcap.to_str().unwrap(),
            "-l",
            logs.to_str().unwrap(),
        ],
    );
    assert!(run.status.success(), "{}", stderr(&run));
}
