//! Issue 8 end to end: the supervisor keeps the stack running through role crashes
//! (kill -9) without losing or repeating an alert, drains on SIGTERM, and `meerkat ctl`
//! drives a running stack through its control socket.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::stack::*;
use common::*;
use meerkat_synth::pcap::{self, Format};
use meerkat_synth::{Frame, packet, session};

const MARKER_RULE: &str =
    "alert udp any any -> any 53 (msg:\"marker\"; content:\"MARKER\"; sid:7; rev:1;)\n";
const LATE_RULE: &str =
    "alert udp any any -> any 53 (msg:\"late\"; content:\"LATE\"; sid:8; rev:1;)\n";
const BROKEN_RULE: &str = "alert udp any any -> any 53 (msg:\"broken\"; nosuchkeyword; sid:9;)\n";
const T0: u64 = 1_700_000_000_000_000_000;

fn udp_frame(src_port: u16, payload: &[u8], ts_ns: u64) -> Frame {
    let s: IpAddr = "10.1.0.1".parse().unwrap();
    let d: IpAddr = "10.2.0.2".parse().unwrap();
    let ip = packet::ip(
        s,
        d,
        packet::PROTO_UDP,
        64,
        1,
        &packet::udp(s, d, src_port, 53, payload),
    );
    Frame {
        ts_ns,
        data: session::frame_ip(s, d, None, &ip),
    }
}

/// `n` UDP packets over 400 flows; every 10th carries `marker`. Returns the file.
fn write_pcap(path: &Path, n: u64, marker: &str) -> PathBuf {
    let frames: Vec<Frame> = (0..n)
        .map(|i| {
            let payload = if i % 10 == 0 {
                format!("..{marker}..{i}")
            } else {
                format!("nothing..{i}")
            };
            udp_frame(1024 + (i % 400) as u16, payload.as_bytes(), T0 + i * 1000)
        })
        .collect();
    std::fs::write(
        path,
        pcap::to_bytes(
            &frames,
            Format::Micro { big_endian: false },
            pcap::LINKTYPE_ETHERNET,
        ),
    )
    .unwrap();
    path.to_path_buf()
}

/// Each alert as (sid, timestamp, src_port) with its count: a lost alert or a repeated
/// one shows.
fn alert_keys(events: &[serde_json::Value]) -> BTreeMap<(u64, String, u64), u32> {
    let mut m = BTreeMap::new();
    for e in events.iter().filter(|e| e["event_type"] == "alert") {
        let key = (
            e["alert"]["signature_id"].as_u64().unwrap(),
            e["timestamp"].as_str().unwrap().to_string(),
            e["src_port"].as_u64().unwrap(),
        );
        *m.entry(key).or_insert(0) += 1;
    }
    m
}

fn signal(pid: u32, sig: libc::c_int) {
    assert!(pid > 0);
    // SAFETY: signalling a process of this test (a role of the stack it started).
    let r = unsafe { libc::kill(pid as libc::pid_t, sig) };
    assert_eq!(r, 0, "kill({pid}, {sig})");
}

/// An undisturbed run's alerts.
fn baseline(dir: &Path, pcap: &Path, rules: &Path) -> BTreeMap<(u64, String, u64), u32> {
    let d = dir.join("baseline");
    std::fs::create_dir_all(&d).unwrap();
    let r = Running::start(&d, rules, &[pcap], &["--workers", "2"]);
    let (out, events) = r.wait(120);
    assert!(out.status.success(), "{}", stderr(&out));
    alert_keys(&events)
}

/// Runs the pcap with 2 workers and small rings, freezes capture (SIGSTOP) mid-input so
/// that every kill lands mid-run whatever the machine's speed, kills -9 each role of
/// `victims` (waiting for its replacement), and returns the alerts.
fn killed_run(
    d: &Path,
    name: &str,
    pcap: &Path,
    rules: &Path,
    victims: &[&str],
) -> BTreeMap<(u64, String, u64), u32> {
    killed_run_with(d, name, pcap, rules, victims, false)
}

/// [`killed_run`]; with `together`, every victim is killed before any is replaced (so a
/// replacement worker meets a restarted writer that never saw its predecessor).
fn killed_run_with(
    d: &Path,
    name: &str,
    pcap: &Path,
    rules: &Path,
    victims: &[&str],
    together: bool,
) -> BTreeMap<(u64, String, u64), u32> {
    let run_dir = d.join(name);
    std::fs::create_dir_all(&run_dir).unwrap();
    let r = Running::start(
        &run_dir,
        rules,
        &[pcap],
        &[
            "--workers",
            "2",
            "--set",
            "supervisor.restart-backoff-ms=20",
            "--set",
            "capture.ring-size=256kb",
        ],
    );
    wait_until("capture to start", 60, || r.pid("capture") != 0);
    // Killed once the eve-writer has acknowledged some of its events: the replacement
    // resumes (or replays) from a mark, not from the start.
    wait_until("detect-0 to see packets", 60, || {
        r.counter("detect-0", "detect.0.packets") > 1000
            && r.counter("detect-0", "detect.0.acked_seq") > 0
    });
    let capture = r.pid("capture");
    signal(capture, libc::SIGSTOP);
    if together {
        let old: Vec<u32> = victims.iter().map(|role| r.pid(role)).collect();
        for &pid in &old {
            signal(pid, libc::SIGKILL);
        }
        for (role, old) in victims.iter().zip(old) {
            wait_until(&format!("a new {role}"), 60, || {
                let p = r.pid(role);
                p != 0 && p != old
            });
        }
    } else {
        for role in victims {
            let old = r.pid(role);
            signal(old, libc::SIGKILL);
            wait_until(&format!("a new {role}"), 60, || {
                let p = r.pid(role);
                p != 0 && p != old
            });
        }
    }
    if !victims.contains(&"capture") {
        signal(capture, libc::SIGCONT);
    }
    let runtime = r.runtime.clone();
    let (out, events) = r.wait(180);
    assert!(out.status.success(), "{}", stderr(&out));
    if std::env::var_os("MEERKAT_TEST_STDERR").is_some() {
        eprintln!("{}", stderr(&out));
    }
    let summary = stdout(&out);
    assert!(summary.contains("role restarts"), "summary: {summary}");
    // The summary counts what eve.json holds, across writer restarts (a batch written
    // twice after a writer's kill is in the file twice and counted twice). The writer
    // counts an event right after handing its line to the OS (unbuffered here: one write
    // per event), so a SIGKILL between the two leaves that one line uncounted: per killed
    // writer the summary may be one short of the file, never over it.
    let alerts_in_summary: u64 = summary
        .split(" alerts,")
        .next()
        .and_then(|head| head.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no alert count in the summary: {summary}"));
    let alert_lines = events.iter().filter(|e| e["event_type"] == "alert").count() as u64;
    let writer_kills = victims.iter().filter(|v| **v == "eve-writer").count() as u64;
    assert!(
        alerts_in_summary <= alert_lines && alert_lines - alerts_in_summary <= writer_kills,
        "summary counts {alerts_in_summary} alerts, eve.json holds {alert_lines} \
         ({writer_kills} writer kill(s)): {summary}"
    );
    let page = |role: &str| {
        meerkat_shm::CounterReader::open(&runtime.join(format!("counters-{role}"))).unwrap()
    };
    if victims.contains(&"capture") {
        // The new capture skipped what the rings had from the dead one.
        let skipped = page("capture").get("capture.resume_skipped").unwrap();
        assert!(skipped > 0, "capture resumed mid-input");
        eprintln!("{name}: capture skipped {skipped} packets");
    }
    if victims.contains(&"detect-0") {
        eprintln!(
            "{name}: detect-0 skipped {} ring records on resume",
            page("detect-0").get("detect.0.resume_skipped").unwrap()
        );
    }
    alert_keys(&events)
}

/// Packets of the kill tests' pcap (every tenth carries the marker).
const MARKER_PACKETS: u64 = 60_000;

/// The kill tests' pcap and rules in `d`, and the alerts of an undisturbed run of them.
fn marker_run(d: &Path) -> (PathBuf, PathBuf, BTreeMap<(u64, String, u64), u32>) {
    let pcap = write_pcap(&d.join("in.pcap"), MARKER_PACKETS, "MARKER");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let expected = baseline(d, &pcap, &rules);
    (pcap, rules, expected)
}

fn lost(
    expected: &BTreeMap<(u64, String, u64), u32>,
    got: &BTreeMap<(u64, String, u64), u32>,
) -> usize {
    expected.keys().filter(|k| !got.contains_key(*k)).count()
}

#[test]
fn kill_9_of_a_worker_and_of_capture_loses_and_repeats_no_alert() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pcap, rules, expected) = marker_run(d);
    assert_eq!(expected.len() as u64, MARKER_PACKETS / 10);
    assert!(expected.values().all(|c| *c == 1));
    let got = killed_run(d, "killed", &pcap, &rules, &["detect-0", "capture"]);
    assert_eq!(lost(&expected, &got), 0, "alerts lost");
    let repeated: Vec<_> = got.iter().filter(|(_, c)| **c > 1).collect();
    assert!(
        repeated.is_empty(),
        "{} alerts repeated, e.g. {:?}",
        repeated.len(),
        repeated.first()
    );
    assert_eq!(got, expected);
}

/// Flow-state rules: a flow's first packet sets a flowbit, its markers alert only with it.
const FLOW_RULES: &str = "alert udp any any -> any 53 (msg:\"setup\"; content:\"SETUP\"; \
     flowbits:set,setup; flowbits:noalert; sid:6; rev:1;)\n\
     alert udp any any -> any 53 (msg:\"marker\"; content:\"MARKER\"; \
     flowbits:isset,setup; sid:7; rev:1;)\n";

/// `n` UDP packets in groups of 200: 10 flows at a time of 20 packets each, the first
/// of a flow `SETUP`, every second one a marker; 31 s of packet time between groups so
/// that each group's flows end (idle timeout) when the next begins, as real flows do.
fn write_flow_pcap(path: &Path, n: u64) -> PathBuf {
    let frames: Vec<Frame> = (0..n)
        .map(|i| {
            let (g, j) = (i / 200, i % 200);
            let (flow, k) = (g * 10 + j % 10, j / 10);
            let payload = match k {
                0 => format!("SETUP..{i}"),
                k if k % 2 == 1 => format!("..MARKER..{i}"),
                _ => format!("nothing..{i}"),
            };
            let ts = T0 + g * 31_000_000_000 + j * 1_000_000;
            udp_frame(1024 + (flow % 60_000) as u16, payload.as_bytes(), ts)
        })
        .collect();
    std::fs::write(
        path,
        pcap::to_bytes(
            &frames,
            Format::Micro { big_endian: false },
            pcap::LINKTYPE_ETHERNET,
        ),
    )
    .unwrap();
    path.to_path_buf()
}

/// Issue 28: a worker killed mid-run is replaced by one that replays the records of the
/// flows it held (kept in its ring, see `capture.replay-window`), so alerts that need a
/// flow's earlier packets (a flowbit) are not lost, and none is written twice.
#[test]
fn kill_9_of_a_worker_keeps_its_flows() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = write_flow_pcap(&d.join("flows.pcap"), MARKER_PACKETS);
    let rules = rules_file(d, "r.rules", FLOW_RULES);
    let expected = baseline(d, &pcap, &rules);
    assert_eq!(expected.len() as u64, MARKER_PACKETS / 2);
    let runtime = d.join("killed").join("rt");
    let got = killed_run(d, "killed", &pcap, &rules, &["detect-0"]);
    let page = meerkat_shm::CounterReader::open(&runtime.join("counters-detect-0")).unwrap();
    let replayed = page.get("detect.0.replayed_packets").unwrap();
    let lost_flows = page.get("detect.0.flows_lost_on_restart").unwrap();
    eprintln!("detect-0 replayed {replayed} packets, lost {lost_flows} flows");
    assert!(replayed > 0, "the replacement replayed nothing");
    assert_eq!(lost_flows, 0);
    assert_eq!(lost(&expected, &got), 0, "alerts lost");
    assert_eq!(got, expected);
}

/// With `capture.replay-window: 0` nothing is kept: the flows a dead worker held are
/// lost, and said so (`flows_lost_on_restart`), never silently.
#[test]
fn without_a_replay_window_the_flows_of_a_dead_worker_are_counted_lost() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = write_flow_pcap(&d.join("flows.pcap"), 20_000);
    let rules = rules_file(d, "r.rules", FLOW_RULES);
    let r = Running::start(
        d,
        &rules,
        &[&pcap],
        &[
            "--workers",
            "1",
            "--set",
            "capture.ring-size=256kb",
            "--set",
            "capture.replay-window=0",
            "--set",
            "supervisor.restart-backoff-ms=20",
        ],
    );
    wait_until("detect-0 to see packets", 60, || {
        r.counter("detect-0", "detect.0.packets") > 1000
            && r.counter("detect-0", "detect.0.acked_seq") > 0
    });
    let capture = r.pid("capture");
    signal(capture, libc::SIGSTOP);
    let old = r.pid("detect-0");
    signal(old, libc::SIGKILL);
    wait_until("a new detect-0", 60, || {
        let p = r.pid("detect-0");
        p != 0 && p != old
    });
    signal(capture, libc::SIGCONT);
    let runtime = r.runtime.clone();
    let (out, _) = r.wait(120);
    assert!(out.status.success(), "{}", stderr(&out));
    let page = meerkat_shm::CounterReader::open(&runtime.join("counters-detect-0")).unwrap();
    let lost_flows = page.get("detect.0.flows_lost_on_restart").unwrap();
    // 10 flows live at a time: the ones of the group the kill fell in.
    assert!(
        (1..=20).contains(&lost_flows),
        "{lost_flows} flows lost: {}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("flows the previous worker held are lost"));
}

/// The pid of the supervisor's child running detect worker `w`, if any.
fn detect_child(supervisor: u32, w: usize) -> Option<u32> {
    let want = "detect\0--config";
    for e in std::fs::read_dir("/proc").ok()?.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // `pid (comm) state ppid ...`: comm may hold spaces, the ppid follows its `)`.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|p| p.parse::<u32>().ok());
        if ppid != Some(supervisor) {
            continue;
        }
        let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let cmd = String::from_utf8_lossy(&cmd);
        if cmd.contains(want) && cmd.contains(&format!("--worker\0{w}\0")) {
            return Some(pid);
        }
    }
    None
}

/// Issue 28: a worker killed by a signal while it loads its rules (the OOM killer at a
/// compile's memory peak) is started again, and the run completes with every alert.
#[test]
fn a_worker_killed_while_loading_its_rules_is_restarted() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let pcap = write_pcap(&d.join("in.pcap"), 5_000, "MARKER");
    // Enough rules that loading them takes a while.
    let mut text = String::from(MARKER_RULE);
    for i in 0..20_000 {
        text.push_str(&format!(
            "alert tcp any any -> any {} (msg:\"filler {i}\"; content:\"filler-{i}-x\"; \
             pcre:\"/filler-{i}-[a-z]+/\"; sid:{};)\n",
            1 + i % 60_000,
            100_000 + i
        ));
    }
    let rules = rules_file(d, "r.rules", &text);
    let r = Running::start(
        d,
        &rules,
        &[&pcap],
        &[
            "--workers",
            "1",
            "--set",
            "supervisor.restart-backoff-ms=20",
        ],
    );
    let sup = r.child.id();
    let mut victim = None;
    wait_until("detect-0 to be spawned", 60, || {
        victim = detect_child(sup, 0);
        victim.is_some()
    });
    // Still loading: it has no counter page yet.
    assert_eq!(
        r.pid("detect-0"),
        0,
        "detect-0 loaded its rules before the kill"
    );
    signal(victim.unwrap(), libc::SIGKILL);
    let (out, events) = r.wait(300);
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("died while starting"), "{err}");
    let alerts = alert_keys(&events);
    assert_eq!(alerts.len(), 500);
    assert!(alerts.values().all(|c| *c == 1));
}

/// Issue 28's fault matrix: the eve-writer stopped (SIGSTOP) for seconds mid-run holds
/// the workers back (backpressure), and nothing is lost or written twice.
#[test]
fn a_stopped_eve_writer_holds_the_stack_back_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pcap, rules, expected) = marker_run(d);
    let run_dir = d.join("stopped");
    std::fs::create_dir_all(&run_dir).unwrap();
    let r = Running::start(
        &run_dir,
        &rules,
        &[&pcap],
        &["--workers", "2", "--set", "capture.ring-size=256kb"],
    );
    wait_until("detect-0 to see packets", 60, || {
        r.counter("detect-0", "detect.0.packets") > 1000
    });
    let writer = r.pid("eve-writer");
    signal(writer, libc::SIGSTOP);
    std::thread::sleep(Duration::from_secs(5));
    signal(writer, libc::SIGCONT);
    let (out, events) = r.wait(180);
    assert!(out.status.success(), "{}", stderr(&out));
    let summary = stdout(&out);
    assert!(
        !summary.contains("role restarts"),
        "a role restarted: {summary}"
    );
    assert_eq!(alert_keys(&events), expected);
}

/// Issue 28's fault matrix: a second stack on the runtime dir of a running one is
/// refused with a clear error, and the first goes on undisturbed.
#[test]
fn a_second_stack_on_the_same_runtime_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let first = Running::serving(d, &rules, &["--workers", "1"]);
    let second_dir = d.join("second");
    std::fs::create_dir_all(second_dir.join("logs")).unwrap();
    let ring = std::fs::metadata(first.runtime.join("ring-0")).unwrap();
    let mut second = meerkat()
        .current_dir(&second_dir)
        .args([
            "-q",
            "run",
            "-S",
            rules.to_str().unwrap(),
            "-l",
            second_dir.join("logs").to_str().unwrap(),
            "--set",
            &format!("runtime-dir={}", first.runtime.display()),
            "--set",
            &format!("control.socket={}", second_dir.join("ctl.sock").display()),
            "--set",
            "supervisor.keep-running=yes",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while second.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = second.kill();
            let out = second.wait_with_output().unwrap();
            panic!("the second stack ran: {}", stderr(&out));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = second.wait_with_output().unwrap();
    assert!(!out.status.success(), "the second stack ran");
    eprintln!("second stack: {}", stderr(&out));
    assert!(
        stderr(&out).contains("in use by another running stack"),
        "{}",
        stderr(&out)
    );
    // Refused before it touched the directory: the first stack's ring is the same file.
    let after = std::fs::metadata(first.runtime.join("ring-0")).unwrap();
    assert_eq!(
        (ring.ino(), ring.len()),
        (after.ino(), after.len()),
        "the first stack's ring was replaced"
    );
    assert!(
        first.ctl(&["health"]).status.success(),
        "the first stack was disturbed"
    );
    let out = first.ctl(&["shutdown"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (out, _) = first.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Whether process `pid` still runs (exists and is not a zombie).
fn running(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Issue 28's fault matrix: `kill -9` of the supervisor itself mid-run. Its roles see
/// their parent die (`PR_SET_PDEATHSIG`) and exit: none is left running. The runtime
/// dir's lock died with the supervisor, so a new stack starts on the same directory
/// (over the dead stack's rings and counter pages) and gives every alert.
#[test]
fn kill_9_of_the_supervisor_leaves_no_role_running() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pcap, rules, expected) = marker_run(d);
    let run_dir = d.join("killed");
    std::fs::create_dir_all(&run_dir).unwrap();
    let mut r = Running::start(
        &run_dir,
        &rules,
        &[&pcap],
        &["--workers", "2", "--set", "capture.ring-size=256kb"],
    );
    wait_until("detect-0 to see packets", 60, || {
        r.counter("detect-0", "detect.0.packets") > 1000
    });
    let roles: Vec<(&str, u32)> = ["capture", "detect-0", "detect-1", "eve-writer"]
        .into_iter()
        .map(|role| (role, r.pid(role)))
        .collect();
    assert!(roles.iter().all(|(_, pid)| *pid != 0), "{roles:?}");
    signal(r.child.id(), libc::SIGKILL);
    r.child.wait().unwrap();
    wait_until("every role to exit", 30, || {
        roles.iter().all(|(_, pid)| !running(*pid))
    });
    std::fs::remove_dir_all(run_dir.join("logs")).unwrap();
    let again = Running::start(&run_dir, &rules, &[&pcap], &["--workers", "2"]);
    let (out, events) = again.wait(180);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(alert_keys(&events), expected);
}

#[test]
fn kill_9_of_the_eve_writer_loses_no_alert() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pcap, rules, expected) = marker_run(d);
    let got = killed_run(d, "killed", &pcap, &rules, &["eve-writer"]);
    assert_eq!(lost(&expected, &got), 0, "alerts lost");
    // The writer records a batch as taken once its bytes are handed to the OS; a kill
    // between the two writes that batch again (at-least-once; see the eve-writer).
    let repeated = got.values().filter(|c| **c > 1).count();
    eprintln!("eve-writer killed: {repeated} alerts written twice");
}

/// The eve-writer and a worker killed together: the replacement worker asks the new
/// writer where to resume its ring, which the new writer knows from the state page (the
/// resume marks of delivered batches), not from the dead worker's batches.
#[test]
fn kill_9_of_the_eve_writer_and_a_worker_together_loses_no_alert() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pcap, rules, expected) = marker_run(d);
    let got = killed_run_with(
        d,
        "killed",
        &pcap,
        &rules,
        &["eve-writer", "detect-0"],
        true,
    );
    assert_eq!(lost(&expected, &got), 0, "alerts lost");
    // As for the writer alone: a batch being written at the kill may be written twice.
    let repeated = got.values().filter(|c| **c > 1).count();
    eprintln!("eve-writer and detect-0 killed together: {repeated} alerts written twice");
}

#[test]
fn a_crash_loop_stops_the_stack_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let r = Running::serving(
        d,
        &rules,
        &[
            "--workers",
            "1",
            "--set",
            "supervisor.max-restarts=1",
            "--set",
            "supervisor.restart-backoff-ms=10",
        ],
    );
    let first = r.pid("detect-0");
    signal(first, libc::SIGKILL);
    wait_until("a new detect-0", 60, || {
        let p = r.pid("detect-0");
        p != 0 && p != first && r.ctl(&["health"]).status.success()
    });
    let status = r.ctl_json(&["status"]);
    let role = &status["roles"][1];
    assert_eq!(role["name"], "detect-0");
    assert_eq!(role["restarts"], 1);
    assert_eq!(role["last_exit"], "killed by signal 9");
    signal(r.pid("detect-0"), libc::SIGKILL);
    let (out, _) = r.wait(60);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert!(
        err.contains("the detect-0 role died 2 times") && err.contains("crash loop"),
        "{err}"
    );
}

#[test]
fn sigterm_drains_a_busy_stack_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 100_000;
    let pcap = write_pcap(&d.join("in.pcap"), n, "MARKER");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let r = Running::start(
        d,
        &rules,
        &[&pcap],
        &[
            "--workers",
            "2",
            "--set",
            "capture.ring-size=256kb",
            "--set",
            "supervisor.shutdown-timeout=20",
        ],
    );
    wait_until("packets to flow", 60, || {
        r.counter("capture", "capture.packets") > 5000
    });
    let sent = Instant::now();
    signal(r.child.id(), libc::SIGTERM);
    let runtime = r.runtime.clone();
    let (out, events) = r.wait(60);
    let took = sent.elapsed();
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(took < Duration::from_secs(20), "drained in {took:?}");
    // Every packet capture handed on was inspected, and every alert of them written.
    let captured = meerkat_shm::CounterReader::open(&runtime.join("counters-capture"))
        .unwrap()
        .get("capture.packets")
        .unwrap();
    let inspected: u64 = (0..2)
        .map(|w| {
            meerkat_shm::CounterReader::open(&runtime.join(format!("counters-detect-{w}")))
                .unwrap()
                .get(&format!("detect.{w}.packets"))
                .unwrap()
        })
        .sum();
    assert_eq!(inspected, captured);
    assert!(
        captured < n,
        "the signal came before the end of the input ({captured} packets)"
    );
    // Packets are read in order: the first `captured` ones, every 10th a marker.
    assert_eq!(alert_keys(&events).len() as u64, captured.div_ceil(10));
}

#[test]
fn ctl_drives_a_running_stack() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = write_pcap(&d.join("first.pcap"), 2_000, "MARKER");
    let second = write_pcap(&d.join("second.pcap"), 2_000, "LATE");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let both = rules_file(d, "both.rules", &format!("{MARKER_RULE}{LATE_RULE}"));
    // Many broken rules: the refusal still travels (its details are bounded).
    let many: String = (0..3000)
        .map(|i| BROKEN_RULE.replace("sid:9", &format!("sid:{}", 100 + i)))
        .collect();
    let broken = rules_file(d, "broken.rules", &format!("{MARKER_RULE}{many}"));
    let metrics_port = free_port();
    let r = Running::serving(
        d,
        &rules,
        &[
            "--workers",
            "2",
            "--set",
            &format!("control.metrics-listen=127.0.0.1:{metrics_port}"),
        ],
    );
    let mode = std::fs::metadata(&r.socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "control socket mode {mode:o}");

    let status = r.ctl_json(&["status"]);
    assert_eq!(status["state"], "idle");
    assert_eq!(status["workers"], 2);
    assert_eq!(status["ruleset"]["generation"], 1);
    assert_eq!(status["ruleset"]["loaded"], 1);
    let names: Vec<&str> = status["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["eve-writer", "detect-0", "detect-1", "capture"]);
    let human = r.ctl(&["status"]);
    assert!(stdout(&human).contains("generation 1, 1 rules loaded"));

    // Input through the socket; flush returns once its events are written.
    let q = r.ctl_json(&["add-pcap", first.to_str().unwrap()]);
    assert_eq!(q["position"], 0);
    wait_until("the first input to be read", 60, || {
        r.ctl_json(&["status"])["state"] == "idle"
            && r.counter("capture", "capture.packets") == 2_000
    });
    let f = r.ctl_json(&["flush"]);
    assert_eq!(f["complete"], true);
    let events = eve(&r.logs.join("eve.json"));
    assert_eq!(alert_keys(&events).len(), 200);

    // A broken ruleset is refused and the old one keeps running.
    let refused = r.ctl(&["--json", "reload-rules", broken.to_str().unwrap()]);
    assert_eq!(refused.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&refused)).unwrap();
    assert_eq!(v["code"], "FailedPrecondition");
    assert_eq!(v["reload"]["failed"], 3000);
    assert_eq!(v["reload"]["errors"].as_array().unwrap().len(), 10);
    assert!(v["error"].as_str().unwrap().contains("ruleset refused"));
    assert_eq!(r.ctl_json(&["status"])["ruleset"]["generation"], 1);
    // A missing file is a clear error too.
    let missing = r.ctl(&["reload-rules", d.join("nope.rules").to_str().unwrap()]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("nope.rules"),
        "{}",
        stderr(&missing)
    );

    // A good one swaps in every worker; the new rule takes effect.
    let ok = r.ctl_json(&["reload-rules", both.to_str().unwrap()]);
    assert_eq!(ok["applied"], true);
    assert_eq!(ok["generation"], 2);
    assert_eq!(ok["loaded"], 2);
    for w in 0..2 {
        assert_eq!(
            r.counter(
                &format!("detect-{w}"),
                &format!("detect.{w}.rules_generation")
            ),
            2
        );
    }
    // A restarted worker comes back with the running ruleset.
    let old = r.pid("detect-1");
    let restarted = r.ctl_json(&["restart-worker", "1"]);
    let new = restarted["pid"].as_u64().unwrap() as u32;
    assert_ne!(new, old);
    wait_until("the restarted worker's counters", 60, || {
        r.pid("detect-1") == new
    });
    assert_eq!(r.counter("detect-1", "detect.1.rules_generation"), 2);
    assert_eq!(r.counter("detect-1", "detect.1.rules_loaded"), 2);
    assert_eq!(
        r.ctl(&["restart-worker", "7"]).status.code(),
        Some(1),
        "no such worker"
    );

    // SIGHUP to the supervisor: the eve-writer reopens its outputs (log rotation).
    std::fs::rename(r.logs.join("eve.json"), r.logs.join("eve.json.1")).unwrap();
    signal(r.child.id(), libc::SIGHUP);
    wait_until("the eve-writer to reopen", 60, || {
        r.counter("eve-writer", "eve.reopens") >= 1
    });
    r.ctl_json(&["add-pcap", second.to_str().unwrap()]);
    wait_until("the second input to be read", 60, || {
        let s = r.ctl_json(&["status"]);
        s["state"] == "idle" && s["pending_pcaps"].as_array().unwrap().is_empty()
    });
    r.ctl_json(&["flush"]);
    let events = eve(&r.logs.join("eve.json"));
    let sids = alert_sids(&events);
    assert_eq!(
        sids.iter().filter(|s| **s == 8).count(),
        200,
        "the new rule fires"
    );

    let ifaces = r.ctl_json(&["list-interfaces"]);
    assert_eq!(ifaces["interfaces"].as_array().unwrap().len(), 2);
    assert_eq!(ifaces["interfaces"][0]["state"], "done");
    let stats = r.ctl_json(&["stats", "--role", "detect"]);
    let p0 = stats["detect-0"]["counters"]["detect.0.packets"]
        .as_u64()
        .unwrap();
    assert!(p0 > 0);
    assert!(stats.get("capture").is_none());
    assert_eq!(r.ctl(&["stats", "--role", "nosuch"]).status.code(), Some(1));

    // Prometheus text.
    let body = {
        use std::io::{Read, Write};
        let mut s = std::net::TcpStream::connect(("127.0.0.1", metrics_port)).unwrap();
        s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            .unwrap();
        let mut b = String::new();
        s.read_to_string(&mut b).unwrap();
        b
    };
    assert!(body.starts_with("HTTP/1.1 200 OK"), "{body}");
    assert!(
        body.contains("meerkat_detect_packets{worker=\"0\"}"),
        "{body}"
    );
    assert!(body.contains("meerkat_capture_packets 2000"), "{body}");

    let bye = r.ctl(&["shutdown"]);
    assert!(bye.status.success());
    let (out, _) = r.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
    // Nobody listens any more: ctl says so with its own exit code.
    let gone = meerkat()
        .args([
            "ctl",
            "--socket",
            d.join("ctl.sock").to_str().unwrap(),
            "status",
        ])
        .output()
        .unwrap();
    assert_eq!(gone.status.code(), Some(3), "{}", stderr(&gone));
}

/// threshold.config is read again on a reload, and its state is shared by the workers:
/// a suppression of the marker rule's source, then (reloaded) a `limit` of 5 by_rule,
/// which two workers together honour.
#[test]
fn threshold_file_reloads_with_the_rules_and_is_shared_by_workers() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let first = write_pcap(&d.join("first.pcap"), 2_000, "MARKER");
    let second = write_pcap(&d.join("second.pcap"), 2_000, "MARKER");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let th = d.join("threshold.config");
    std::fs::write(
        &th,
        "suppress gen_id 1, sig_id 7, track by_src, ip [10.1.0.0/24, 192.0.2.1]\n",
    )
    .unwrap();
    let r = Running::serving(
        d,
        &rules,
        &[
            "--workers",
            "2",
            "--set",
            &format!("threshold-file={}", th.display()),
        ],
    );
    let inspected = || -> u64 {
        (0..2)
            .map(|w| r.counter(&format!("detect-{w}"), &format!("detect.{w}.packets")))
            .sum()
    };
    let read = |pcap: &Path| {
        let want = inspected() + 2_000;
        r.ctl_json(&["add-pcap", pcap.to_str().unwrap()]);
        wait_until("the input to be inspected", 60, || {
            r.ctl_json(&["status"])["state"] == "idle" && inspected() == want
        });
        assert_eq!(r.ctl_json(&["flush"])["complete"], true);
        alert_sids(&eve(&r.logs.join("eve.json")))
            .iter()
            .filter(|s| **s == 7)
            .count()
    };
    assert_eq!(read(&first), 0, "suppressed by source");
    std::fs::write(
        &th,
        "threshold gen_id 1, sig_id 7, type limit, track by_rule, count 5, seconds 3600\n",
    )
    .unwrap();
    let v = r.ctl_json(&["reload-rules", rules.to_str().unwrap()]);
    assert_eq!(v["applied"], true);
    // 200 markers over 400 flows on two workers: 5 alerts in all.
    assert_eq!(read(&second), 5, "limit 5 by_rule across the workers");
    r.ctl_json(&["shutdown"]);
    let (out, _) = r.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn reloading_20_times_under_traffic_drops_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 100_000;
    let pcap = write_pcap(&d.join("in.pcap"), n, "MARKER");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let both = rules_file(d, "both.rules", &format!("{MARKER_RULE}{LATE_RULE}"));
    let broken = rules_file(d, "broken.rules", &format!("{MARKER_RULE}{BROKEN_RULE}"));
    let r = Running::serving(d, &rules, &["--workers", "2"]);
    r.ctl_json(&["add-pcap", pcap.to_str().unwrap()]);
    let mut applied = 0;
    for i in 0..20 {
        let file = match i % 3 {
            0 => &both,
            1 => &rules,
            _ => &both,
        };
        if i == 10 {
            let out = r.ctl(&["reload-rules", broken.to_str().unwrap()]);
            assert_eq!(out.status.code(), Some(1), "the broken set is refused");
            continue;
        }
        let v = r.ctl_json(&["reload-rules", file.to_str().unwrap()]);
        assert_eq!(v["applied"], true);
        applied += 1;
    }
    assert_eq!(
        r.ctl_json(&["status"])["ruleset"]["generation"],
        applied + 1
    );
    wait_until("the input to be read", 120, || {
        r.ctl_json(&["status"])["state"] == "idle"
    });
    r.ctl_json(&["flush"]);
    let inspected: u64 = (0..2)
        .map(|w| r.counter(&format!("detect-{w}"), &format!("detect.{w}.packets")))
        .sum();
    assert_eq!(inspected, n, "no packet lost to a reload");
    for w in 0..2 {
        assert_eq!(
            r.counter(&format!("detect-{w}"), &format!("detect.{w}.rules_reloads")),
            applied
        );
    }
    // The marker rule is in every generation: every marker alerts exactly once.
    let got = alert_keys(&eve(&r.logs.join("eve.json")));
    assert_eq!(got.len() as u64, n / 10);
    assert!(got.values().all(|c| *c == 1));
    r.ctl_json(&["shutdown"]);
    let (out, _) = r.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
}

/// Issue 28's fault matrix: a worker killed while a reload is under way. The reload is
/// applied, the replacement runs the new generation (started on it, or caught up by the
/// reload), and no alert is lost or repeated.
#[test]
fn a_reload_while_a_worker_is_killed_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pcap, rules, expected) = marker_run(d);
    let both = rules_file(d, "both.rules", &format!("{MARKER_RULE}{LATE_RULE}"));
    let run_dir = d.join("reload");
    std::fs::create_dir_all(&run_dir).unwrap();
    let r = Running::start(
        &run_dir,
        &rules,
        &[&pcap],
        &["--workers", "2", "--set", "capture.ring-size=256kb"],
    );
    wait_until("detect-0 to see packets", 60, || {
        r.counter("detect-0", "detect.0.packets") > 1000
    });
    let victim = r.pid("detect-0");
    let socket = r.socket.clone();
    let reload = std::thread::spawn(move || {
        meerkat()
            .args(["ctl", "--socket", socket.to_str().unwrap(), "--json"])
            .args(["reload-rules", both.to_str().unwrap()])
            .output()
            .unwrap()
    });
    signal(victim, libc::SIGKILL);
    let out = reload.join().unwrap();
    assert!(out.status.success(), "{}{}", stdout(&out), stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(
        (&v["applied"], &v["generation"]),
        (&true.into(), &2.into()),
        "{v}"
    );
    assert_ne!(r.pid("detect-0"), victim, "detect-0 was not replaced");
    assert_eq!(r.counter("detect-0", "detect.0.rules_generation"), 2);
    let (out, events) = r.wait(180);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("gone during the reload"),
        "{}",
        stderr(&out)
    );
    assert_eq!(alert_keys(&events), expected);
}

/// Issue 28's fault matrix: a worker killed while the stack drains (SIGTERM). The
/// drain goes on with the worker's replacement: every packet capture handed on is
/// inspected once and its alerts written once, and the stack exits 0.
#[test]
fn kill_9_of_a_worker_while_draining_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let n = 100_000;
    let pcap = write_pcap(&d.join("in.pcap"), n, "MARKER");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let r = Running::start(
        d,
        &rules,
        &[&pcap],
        &[
            "--workers",
            "2",
            "--set",
            "capture.ring-size=256kb",
            "--set",
            "supervisor.shutdown-timeout=30",
            "--set",
            "supervisor.restart-backoff-ms=20",
        ],
    );
    wait_until("packets to flow", 60, || {
        r.counter("capture", "capture.packets") > 5000
    });
    let victim = r.pid("detect-0");
    signal(r.child.id(), libc::SIGTERM);
    signal(victim, libc::SIGKILL);
    let runtime = r.runtime.clone();
    let (out, events) = r.wait(90);
    assert!(out.status.success(), "{}", stderr(&out));
    let captured = meerkat_shm::CounterReader::open(&runtime.join("counters-capture"))
        .unwrap()
        .get("capture.packets")
        .unwrap();
    assert!(captured < n, "the signal came after the end of the input");
    let alerts = alert_keys(&events);
    assert!(alerts.values().all(|c| *c == 1), "an alert was repeated");
    assert_eq!(alerts.len() as u64, captured.div_ceil(10));
}

/// Issue 28's fault matrix: the rings deleted from the runtime directory under a running
/// stack (a cleaner of /dev/shm), then a worker killed. Its replacement could not reach
/// the packets of the deleted ring: the stack stops at once and says why, rather than
/// wait for ever.
#[test]
fn rings_deleted_under_a_running_stack() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let (pcap, rules, expected) = marker_run(d);
    let run_dir = d.join("deleted");
    std::fs::create_dir_all(&run_dir).unwrap();
    let r = Running::start(
        &run_dir,
        &rules,
        &[&pcap],
        &[
            "--workers",
            "2",
            "--set",
            "capture.ring-size=256kb",
            "--set",
            "supervisor.restart-backoff-ms=20",
        ],
    );
    wait_until("detect-0 to see packets", 60, || {
        r.counter("detect-0", "detect.0.packets") > 1000
    });
    for w in 0..2 {
        std::fs::remove_file(r.runtime.join(format!("ring-{w}"))).unwrap();
    }
    signal(r.pid("detect-0"), libc::SIGKILL);
    let (out, events) = r.wait(60);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("was removed or replaced under the running stack"),
        "{}",
        stderr(&out)
    );
    // What was written before is whole: no alert twice, none that the input lacks.
    let got = alert_keys(&events);
    assert!(got.iter().all(|(k, c)| *c == 1 && expected.contains_key(k)));
}

/// Issue 28's fault matrix: /dev/shm full. A runtime-dir on a tmpfs without room for
/// the rings is refused at start with the cause named, not killed later by SIGBUS on a
/// page of a sparse ring. Skips where a tmpfs cannot be mounted (not root).
#[test]
fn a_full_runtime_dir_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let small = d.join("small");
    std::fs::create_dir_all(&small).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=400k", "tmpfs"])
        .arg(&small)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("skipping: cannot mount a tmpfs here");
        return;
    }
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount").arg(&self.0).status();
        }
    }
    let _unmount = Unmount(small.clone());
    let pcap = write_pcap(&d.join("in.pcap"), 1_000, "MARKER");
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    std::fs::create_dir_all(d.join("logs")).unwrap();
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
            d.join("logs").to_str().unwrap(),
            "--workers",
            "2",
            "--set",
            &format!("runtime-dir={}", small.display()),
            "--set",
            "capture.ring-size=256kb",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("No space left on device"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn tcp_control_needs_the_bearer_token() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let rules = rules_file(d, "r.rules", MARKER_RULE);
    let token = d.join("token");
    std::fs::write(&token, "s3cret-token-of-the-test\n").unwrap();
    let wrong = d.join("wrong");
    std::fs::write(&wrong, "not-the-token-of-the-test\n").unwrap();
    let port = free_port();
    let addr = format!("127.0.0.1:{port}");
    let r = Running::serving(
        d,
        &rules,
        &[
            "--workers",
            "1",
            "--set",
            &format!("control.listen={addr}"),
            "--set",
            &format!("control.token-file={}", token.display()),
        ],
    );
    let tcp = |extra: &[&str]| {
        meerkat()
            .args(["ctl", "--connect", &addr])
            .args(extra)
            .output()
            .unwrap()
    };
    for args in [
        vec!["status"],
        vec!["--token-file", wrong.to_str().unwrap(), "status"],
        vec!["health"],
        vec!["shutdown"],
    ] {
        let out = tcp(&args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains("Unauthenticated"), "{}", stderr(&out));
    }
    let ok = tcp(&["--json", "--token-file", token.to_str().unwrap(), "status"]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    let v: serde_json::Value = serde_json::from_str(&stdout(&ok)).unwrap();
    assert_eq!(v["state"], "idle");
    let bye = tcp(&["--token-file", token.to_str().unwrap(), "shutdown"]);
    assert!(bye.status.success());
    let (out, _) = r.wait(60);
    assert!(out.status.success(), "{}", stderr(&out));
}
