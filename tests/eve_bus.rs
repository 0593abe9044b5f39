//! EVE to a bus, with the real binary and real servers: Redis Streams (`XADD`) and NATS
//! JetStream, and the faults issue 26 names: the bus stopped under load and restarted,
//! the writer killed with batches in flight and in the spool, a full disk under the
//! spool. Each server is the test's own, on a free loopback port; a test skips with a
//! message when the server's binary is not installed (`.ci/setup.d/30-eve.sh` installs
//! both).
//!
//! The outage lasts `MEERKAT_BUS_OUTAGE_S` seconds (default 3; issue 26's 30 s run:
//! `MEERKAT_BUS_OUTAGE_S=30 cargo test --test eve_bus -- bus_outage`).

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod eve_common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use eve_common::*;

const WORKERS: usize = 2;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn find(program: &str) -> Option<PathBuf> {
    if have(program) {
        return Some(PathBuf::from(program));
    }
    ["/usr/sbin", "/usr/local/sbin", "/usr/local/bin"]
        .iter()
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
}

/// A nats-server with JetStream of the test's own (its store in `dir`, kept across
/// restarts).
struct NatsServer {
    child: Option<Child>,
    bin: PathBuf,
    port: u16,
    store: PathBuf,
}

impl NatsServer {
    fn start(dir: &Path) -> Option<NatsServer> {
        let Some(bin) = find("nats-server") else {
            println!("skipped: nats-server is not installed (apt-get install nats-server)");
            return None;
        };
        let mut s = NatsServer {
            child: None,
            bin,
            port: free_port(),
            store: dir.join("jetstream"),
        };
        s.up();
        Some(s)
    }

    fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    fn up(&mut self) {
        let child = Command::new(&self.bin)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-sd",
            ])
            .arg(&self.store)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        self.child = Some(child);
        let port = self.port;
        wait_for("nats-server", Duration::from_secs(20), || {
            std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
        });
    }

    /// Stops the server at once (SIGKILL: whatever it was doing, mid-batch).
    fn down(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// Every message of `stream`: (subject, payload).
    fn messages(&self, stream: &str) -> Vec<(String, String)> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            use async_nats::jetstream::consumer::{AckPolicy, DeliverPolicy, pull};
            use tokio_stream::StreamExt;
            let client = async_nats::connect(self.url()).await.unwrap();
            let js = async_nats::jetstream::new(client);
            let mut s = js.get_stream(stream).await.unwrap();
            let total = s.info().await.unwrap().state.messages as usize;
            let consumer = s
                .create_consumer(pull::Config {
                    ack_policy: AckPolicy::None,
                    deliver_policy: DeliverPolicy::All,
                    ..Default::default()
                })
                .await
                .unwrap();
            let mut out = Vec::with_capacity(total);
            while out.len() < total {
                let mut batch = consumer
                    .fetch()
                    .max_messages(1000)
                    .expires(Duration::from_secs(2))
                    .messages()
                    .await
                    .unwrap();
                let before = out.len();
                while let Some(m) = batch.next().await {
                    let m = m.unwrap();
                    out.push((
                        m.subject.to_string(),
                        String::from_utf8(m.payload.to_vec()).unwrap(),
                    ));
                }
                assert!(out.len() > before, "the stream stopped giving messages");
            }
            out
        })
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.down();
    }
}

fn nats_output(url: &str, spool: &str) -> String {
    format!(
        "detect:\n  workers: {WORKERS}\nheartbeat:\n  output-flush-interval: 1\n\
         outputs:\n  - eve-log:\n      filetype: nats\n      buffer-size: 64kb\n\
         \x20     nats:\n        servers: {url}\n        subject: eve.{{event_type}}\n\
         \x20       stream: EVE\n        ack-timeout: 2\n{spool}      types: [alert, flow, stats]\n"
    )
}

/// Checks the stream holds every alert and flow of `n` exchanges exactly once, each on
/// its subject, every record valid; returns the number of stats records.
fn check_once(messages: &[(String, String)], n: usize) -> usize {
    let schema = schema();
    let text: String = messages.iter().map(|(_, p)| format!("{p}\n")).collect();
    let records = validate_lines(&text, schema.as_ref());
    let mut by_type: BTreeMap<String, usize> = BTreeMap::new();
    for ((subject, _), r) in messages.iter().zip(&records) {
        let t = r["event_type"].as_str().unwrap().to_string();
        assert_eq!(subject, &format!("eve.{t}"));
        *by_type.entry(t).or_insert(0) += 1;
    }
    let events = event_multiset(&records);
    let twice = events.values().filter(|&&c| c > 1).count();
    assert_eq!(twice, 0, "{twice} events are in the stream twice");
    assert_eq!(by_type.get("alert").copied().unwrap_or(0), n, "{by_type:?}");
    assert_eq!(by_type.get("flow").copied().unwrap_or(0), n, "{by_type:?}");
    by_type.get("stats").copied().unwrap_or(0)
}

fn counter(s: &Setup, name: &str) -> u64 {
    s.counter("eve-writer", name)
}

fn kill9(child: &mut Child) {
    signal(child, libc::SIGKILL);
    let _ = child.wait();
}

#[test]
fn nats_jetstream_output_every_event_once() {
    let dir = tempfile::tempdir().unwrap();
    let Some(nats) = NatsServer::start(dir.path()) else {
        return;
    };
    let s = Setup::new(&nats_output(&nats.url(), ""));
    let pcap = s.dir.path().join("t.pcap");
    write_pcap(&pcap, 400);
    meerkat_run(&s, &pcap, &[]);
    let stats = check_once(&nats.messages("EVE"), 400);
    assert!(stats >= 1);
    assert_eq!(counter(&s, "eve.output.0.spooled"), 0);
    assert!(counter(&s, "eve.output.0.acked") >= 800);
}

/// The bus stopped under load for MEERKAT_BUS_OUTAGE_S seconds (SIGKILL: mid-batch) and
/// started again: everything arrives, once (JetStream drops the resends by message id).
#[test]
fn bus_outage_under_load_loses_nothing_and_stores_nothing_twice() {
    let outage = std::env::var("MEERKAT_BUS_OUTAGE_S")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or(3.0);
    let dir = tempfile::tempdir().unwrap();
    let Some(mut nats) = NatsServer::start(dir.path()) else {
        return;
    };
    let n = 12_000;
    let s = Setup::new(&nats_output(&nats.url(), ""));
    let pcap = s.dir.path().join("t.pcap");
    write_pcap(&pcap, n);
    let mut writer = s.start_writer();
    let mut workers = s.start_workers(WORKERS);
    let mut capture = s.spawn("capture", &["-r", pcap.to_str().unwrap()]);
    wait_for(
        "the first acknowledgements",
        Duration::from_secs(60),
        || counter(&s, "eve.output.0.acked") >= 500,
    );
    let t0 = Instant::now();
    nats.down();
    let acked_at_stop = counter(&s, "eve.output.0.acked");
    // The outage is the fault itself (not a wait for something).
    std::thread::sleep(Duration::from_secs_f64(outage));
    let spooled = counter(&s, "eve.output.0.spooled");
    nats.up();
    wait_success(&mut capture, "capture", Duration::from_secs(120));
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(120));
    }
    wait_for("the spool to drain", Duration::from_secs(120), || {
        counter(&s, "eve.output.0.spooled_bytes") == 0 && counter(&s, "eve.held_bytes") == 0
    });
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    let replayed = counter(&s, "eve.output.0.replayed");
    let resent = counter(&s, "eve.output.0.resent");
    check_once(&nats.messages("EVE"), n);
    println!(
        "outage of {outage} s after {acked_at_stop} acknowledged records: {spooled} spooled, \
         {replayed} replayed, {resent} resent; every one of {} events once in the stream \
         ({:.1} s from the stop)",
        2 * n,
        t0.elapsed().as_secs_f64()
    );
    assert!(spooled > 0, "nothing was spooled during the outage");
    assert!(replayed > 0);
}

/// The writer killed (SIGKILL) while the bus is down, with batches in the spool and in
/// flight; a new writer replays the spool when the bus is back. Nothing lost, nothing
/// twice in the stream.
#[test]
fn writer_killed_with_a_spool_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut nats) = NatsServer::start(dir.path()) else {
        return;
    };
    nats.down();
    let n = 6_000;
    let s = Setup::new(&nats_output(&nats.url(), ""));
    let pcap = s.dir.path().join("t.pcap");
    write_pcap(&pcap, n);
    let mut writer = s.start_writer();
    let mut workers = s.start_workers(WORKERS);
    let mut capture = s.spawn("capture", &["-r", pcap.to_str().unwrap()]);
    wait_for("events in the spool", Duration::from_secs(60), || {
        counter(&s, "eve.output.0.spooled") >= n as u64 / 2
    });
    kill9(&mut writer);
    let spooled = counter(&s, "eve.output.0.spooled");
    let mut writer = s.start_writer();
    wait_success(&mut capture, "capture", Duration::from_secs(120));
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(120));
    }
    nats.up();
    wait_for("the spool to drain", Duration::from_secs(120), || {
        counter(&s, "eve.output.0.spooled_bytes") == 0
            && counter(&s, "eve.held_bytes") == 0
            && counter(&s, "eve.output.0.replayed") > 0
    });
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    check_once(&nats.messages("EVE"), n);
    println!(
        "SIGKILL with {spooled} records spooled; the new writer replayed {}",
        counter(&s, "eve.output.0.replayed")
    );
}

/// A 1 MiB tmpfs mounted on `dir` for the test, unmounted when dropped.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m", "tmpfs"])
            .arg(dir)
            .output();
        match out {
            Ok(o) if o.status.success() => Some(Tmpfs(dir.to_path_buf())),
            Ok(o) => {
                println!(
                    "skipped: cannot mount a tmpfs here ({})",
                    String::from_utf8_lossy(&o.stderr).trim()
                );
                None
            }
            Err(e) => {
                println!("skipped: cannot run mount ({e})");
                None
            }
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// The bus is down and the disk under the spool fills: the writer holds the rest
/// unacknowledged (the producers stop), says so once, and when the bus is back
/// everything arrives once.
#[test]
fn full_disk_under_the_spool_holds_events_until_the_bus_returns() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut nats) = NatsServer::start(dir.path()) else {
        return;
    };
    nats.down();
    let n = 4_000;
    let spool_dir = dir.path().join("spool");
    let s = Setup::new(&nats_output(
        &nats.url(),
        &format!(
            "      spool:\n        directory: {}\n        segment-size: 64kb\n",
            spool_dir.display()
        ),
    ));
    let Some(_mount) = Tmpfs::mount(&spool_dir) else {
        return;
    };
    let pcap = s.dir.path().join("t.pcap");
    write_pcap(&pcap, n);
    let mut writer = s.start_writer();
    let mut workers = s.start_workers(WORKERS);
    let mut capture = s.spawn("capture", &["-r", pcap.to_str().unwrap()]);
    wait_for("the spool's disk to fill", Duration::from_secs(60), || {
        counter(&s, "eve.output.0.errors") > 0 && counter(&s, "eve.held_bytes") > 0
    });
    let events_in = counter(&s, "eve.events_in");
    assert!(
        events_in < 2 * n as u64,
        "all {events_in} events reached the writer: no backpressure"
    );
    nats.up();
    wait_success(&mut capture, "capture", Duration::from_secs(120));
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(120));
    }
    wait_for("everything sent", Duration::from_secs(120), || {
        counter(&s, "eve.output.0.spooled_bytes") == 0 && counter(&s, "eve.held_bytes") == 0
    });
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    check_once(&nats.messages("EVE"), n);
    println!(
        "full spool disk: {} errors, {events_in} of {} events in before the bus returned",
        counter(&s, "eve.output.0.errors"),
        2 * n
    );
}

/// The bus is down and the spool reaches max-size (`when-full: block`): backpressure,
/// then everything once when the bus returns.
#[test]
fn full_spool_blocks_then_everything_arrives() {
    let dir = tempfile::tempdir().unwrap();
    let Some(mut nats) = NatsServer::start(dir.path()) else {
        return;
    };
    nats.down();
    let n = 4_000;
    // Small batches and windows, so that a full spool stops the producers quickly.
    let s = Setup::new(
        &nats_output(
            &nats.url(),
            "      spool:\n        max-size: 256kb\n        segment-size: 64kb\n        when-full: block\n",
        )
        .replace(
            "detect:\n",
            "detect:\n  event-batch-size: 16\n  max-unacked-batches: 2\n",
        ),
    );
    let pcap = s.dir.path().join("t.pcap");
    write_pcap(&pcap, n);
    let mut writer = s.start_writer();
    let mut workers = s.start_workers(WORKERS);
    let mut capture = s.spawn("capture", &["-r", pcap.to_str().unwrap()]);
    wait_for("the spool to be full", Duration::from_secs(60), || {
        counter(&s, "eve.output.0.spooled_bytes") > 128 * 1024 && counter(&s, "eve.held_bytes") > 0
    });
    let events_in = counter(&s, "eve.events_in");
    assert!(
        events_in < 2 * n as u64,
        "no backpressure ({events_in} events in)"
    );
    assert!(counter(&s, "eve.output.0.spooled_bytes") <= 256 * 1024);
    nats.up();
    wait_success(&mut capture, "capture", Duration::from_secs(120));
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(120));
    }
    wait_for("everything sent", Duration::from_secs(120), || {
        counter(&s, "eve.output.0.spooled_bytes") == 0 && counter(&s, "eve.held_bytes") == 0
    });
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    check_once(&nats.messages("EVE"), n);
    assert_eq!(counter(&s, "eve.output.0.dropped"), 0);
    println!(
        "full spool (block): {events_in} of {} events in before the bus returned",
        2 * n
    );
}

/// Redis Streams end to end: `XADD` of every record in the field `eve`.
#[test]
fn redis_stream_output() {
    let dir = tempfile::tempdir().unwrap();
    let Some(redis) = Redis::start(dir.path()) else {
        return;
    };
    let s = Setup::new(&format!(
        "outputs:\n  - eve-log:\n      filetype: redis\n      buffer-size: 16kb\n      redis:\n        server: {}\n        mode: stream\n        key: eve-stream\n      types: [alert, flow, stats]\n",
        redis.socket.display()
    ));
    let pcap = s.dir.path().join("t.pcap");
    write_pcap(&pcap, 300);
    meerkat_run(&s, &pcap, &[]);
    let items = redis.stream("eve-stream");
    let records = validate_lines(&(items.join("\n") + "\n"), schema().as_ref());
    let count = |t: &str| records.iter().filter(|r| r["event_type"] == t).count();
    assert_eq!((count("alert"), count("flow")), (300, 300));
    assert!(count("stats") >= 1);
}
