//! The eve-writer's outputs end to end, with the real binary: several `eve-log`
//! outputs with their own `types`, `threaded: yes`, the command-line overrides, Unix
//! socket readers that come late, redis, SIGHUP after a logrotate-style rename,
//! `rotate-interval`, and the `WriterAdmin` control service. Every EVE record written is
//! validated against Suricata's schema (when `../shared` is present).

#![allow(clippy::unwrap_used, clippy::print_stdout)]

mod eve_common;

use std::io::Read;
use std::os::unix::net::{UnixDatagram, UnixListener};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use eve_common::*;

const N: usize = 300;

fn traffic(dir: &Path, name: &str, n: usize) -> std::path::PathBuf {
    let p = dir.join(name);
    write_pcap(&p, n);
    p
}

fn count(records: &[serde_json::Value], event_type: &str) -> usize {
    records
        .iter()
        .filter(|r| r["event_type"] == event_type)
        .count()
}

#[test]
fn several_outputs_threaded_and_command_line_overrides() {
    let s = Setup::new(
        "outputs:\n  - eve-log:\n      types: [alert, flow, stats]\n  - eve-log:\n      filename: alerts.json\n      types:\n        - alert:\n            metadata: no\n",
    );
    let pcap = traffic(s.dir.path(), "t.pcap", N);
    meerkat_run(
        &s,
        &pcap,
        &[
            "--workers",
            "2",
            "--set",
            "outputs.eve-log.threaded=yes",
            "--set",
            "outputs.eve-log.buffer-size=16384",
            "--set",
            "heartbeat.output-flush-interval=1",
        ],
    );
    let schema = schema();
    let w0 = read_eve(&s.log_dir.join("eve.0.json"), schema.as_ref());
    let w1 = read_eve(&s.log_dir.join("eve.1.json"), schema.as_ref());
    let main = read_eve(&s.log_dir.join("eve.json"), schema.as_ref());
    // Worker records in the per-worker files, the writer's own (stats) in eve.json.
    assert_eq!(count(&w0, "alert") + count(&w1, "alert"), N);
    assert_eq!(count(&w0, "flow") + count(&w1, "flow"), N);
    assert!(count(&w0, "alert") > 0 && count(&w1, "alert") > 0);
    assert!(main.iter().all(|r| r["event_type"] == "stats"));
    let last = main.last().expect("a final stats record");
    assert_eq!(last["stats"]["decoder"]["pkts"], 2 * N as u64);
    assert_eq!(last["stats"]["detect"]["alert"], N as u64);
    // The second output: alerts only, without rule metadata.
    let alerts = read_eve(&s.log_dir.join("alerts.json"), schema.as_ref());
    assert_eq!(alerts.len(), N);
    assert!(alerts.iter().all(|r| r["event_type"] == "alert"));
    assert!(alerts.iter().all(|r| r["alert"].get("metadata").is_none()));
    assert!(w0.iter().any(|r| r["alert"].get("metadata").is_some()));
    // buffer-size took effect: far fewer writes than records.
    let calls = s.counter("eve-writer", "eve.write_calls");
    let written = s.counter("eve-writer", "eve.events_written");
    assert_eq!(written, 2 * N as u64);
    println!("{written} records, {calls} write calls");
    // alerts.json is unbuffered (one write each); the threaded files are buffered.
    assert!(calls < N as u64 + 2 * N as u64 / 10, "{calls} write calls");
}

#[test]
fn unix_socket_readers_that_come_late_get_everything() {
    for filetype in ["unix_dgram", "unix_stream"] {
        let s = Setup::new(&format!(
            "outputs:\n  - eve-log:\n      filetype: {filetype}\n      filename: eve.sock\n      types: [alert, flow, stats]\n"
        ));
        let pcap = traffic(s.dir.path(), "t.pcap", N);
        let sock = s.log_dir.join("eve.sock");
        let mut run = Command::new(BIN)
            .args(["-q", "run", "-c"])
            .arg(&s.config)
            .arg("-r")
            .arg(&pcap)
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        // Nobody listens yet: the writer holds the records.
        wait_for("held records", Duration::from_secs(60), || {
            s.counter("eve-writer", "eve.held_bytes") > 0
        });
        let text = if filetype == "unix_dgram" {
            let rx = UnixDatagram::bind(&sock).unwrap();
            rx.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            let mut text = String::new();
            let mut buf = vec![0u8; 1 << 16];
            while text.lines().filter(|l| !l.contains("\"stats\"")).count() < 2 * N {
                let n = rx.recv(&mut buf).unwrap();
                let d = std::str::from_utf8(&buf[..n]).unwrap();
                assert!(d.ends_with('\n') && d.matches('\n').count() == 1, "{d}");
                text.push_str(d);
            }
            text
        } else {
            let l = UnixListener::bind(&sock).unwrap();
            let (mut conn, _) = l.accept().unwrap();
            let mut text = String::new();
            conn.read_to_string(&mut text).unwrap();
            text
        };
        wait_success(&mut run, "meerkat run", Duration::from_secs(60));
        let records = validate_lines(&text, schema().as_ref());
        assert_eq!(count(&records, "alert"), N, "{filetype}");
        assert_eq!(count(&records, "flow"), N, "{filetype}");
        assert!(s.counter("eve-writer", "eve.reconnects") >= 1);
    }
}

#[test]
fn redis_list_output() {
    let dir = tempfile::tempdir().unwrap();
    let Some(redis) = Redis::start(dir.path()) else {
        return;
    };
    let s = Setup::new(&format!(
        "outputs:\n  - eve-log:\n      filetype: redis\n      buffer-size: 8kb\n      redis:\n        server: {}\n        mode: rpush\n        key: meerkat-eve\n      types: [alert, flow, stats]\n",
        redis.socket.display()
    ));
    let pcap = traffic(s.dir.path(), "t.pcap", N);
    meerkat_run(&s, &pcap, &[]);
    let items = redis.list("meerkat-eve");
    let records = validate_lines(&(items.join("\n") + "\n"), schema().as_ref());
    assert_eq!(count(&records, "alert"), N);
    assert_eq!(count(&records, "flow"), N);
    assert_eq!(count(&records, "stats"), 1);
}

/// Runs detect workers and capture over `pcap` against a writer that is already up.
/// A ring that reached its end stays ended (a restarted worker resumes its ring), so
/// each feed starts from new rings.
fn feed(s: &Setup, pcap: &Path) {
    for e in std::fs::read_dir(&s.runtime)
        .unwrap()
        .filter_map(Result::ok)
    {
        if e.file_name().to_string_lossy().starts_with("ring-") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    let mut workers = s.start_workers(1);
    run_capture(s, pcap);
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(60));
    }
}

/// A new ring under an eve-writer that outlived the old one (the same worker name): the
/// writer's resume mark is the old ring's, and must not make the new ring's worker take
/// its records for ones already written. The writer is stopped while the worker asks it
/// where to resume, so the new ring holds the whole pcap by the time it answers (what a
/// loaded machine did now and then to `rotate_interval_makes_timestamped_files`).
#[test]
fn a_new_ring_under_a_writer_that_outlived_the_old_loses_nothing() {
    let s =
        Setup::new("detect:\n  workers: 1\noutputs:\n  - eve-log:\n      types: [alert, flow]\n");
    let p1 = traffic(s.dir.path(), "a.pcap", 40);
    let mut writer = s.start_writer();
    feed(&s, &p1);
    for e in std::fs::read_dir(&s.runtime)
        .unwrap()
        .filter_map(Result::ok)
    {
        if e.file_name().to_string_lossy().starts_with("ring-") {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    signal(&writer, libc::SIGSTOP);
    let mut workers = s.start_workers(1);
    run_capture(&s, &p1);
    signal(&writer, libc::SIGCONT);
    for w in &mut workers {
        wait_success(w, "detect", Duration::from_secs(60));
    }
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    let events = read_eve(&s.log_dir.join("eve.json"), schema().as_ref());
    assert_eq!(events.len(), 2 * 80);
}

#[test]
fn sighup_reopens_after_a_logrotate_rename() {
    let s =
        Setup::new("detect:\n  workers: 1\noutputs:\n  - eve-log:\n      types: [alert, flow]\n");
    let p1 = traffic(s.dir.path(), "a.pcap", 50);
    let p2 = traffic(s.dir.path(), "b.pcap", 80);
    let mut writer = s.start_writer();
    feed(&s, &p1);
    let eve = s.log_dir.join("eve.json");
    std::fs::rename(&eve, s.log_dir.join("eve.json.1")).unwrap();
    signal(&writer, libc::SIGHUP);
    wait_for("the reopen", Duration::from_secs(10), || {
        s.counter("eve-writer", "eve.reopens") >= 1
    });
    assert!(eve.exists(), "SIGHUP did not create a new eve.json");
    feed(&s, &p2);
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    let schema = schema();
    let old = read_eve(&s.log_dir.join("eve.json.1"), schema.as_ref());
    let new = read_eve(&eve, schema.as_ref());
    assert_eq!(old.len(), 100);
    assert_eq!(new.len(), 160);
}

#[test]
fn rotate_interval_makes_timestamped_files() {
    let s = Setup::new(
        "detect:\n  workers: 1\noutputs:\n  - eve-log:\n      filename: eve-%Y%m%d-%H%M%S.json\n      rotate-interval: 1s\n      types: [alert, flow]\n",
    );
    let p1 = traffic(s.dir.path(), "a.pcap", 40);
    let mut writer = s.start_writer();
    let files = || -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = std::fs::read_dir(&s.log_dir)
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("eve-"))
            .collect();
        v.sort();
        v
    };
    feed(&s, &p1);
    let first = files();
    wait_for("a rotation", Duration::from_secs(10), || {
        files().len() > first.len()
    });
    feed(&s, &p1);
    terminate(&writer);
    wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    let all = files();
    assert!(all.len() >= 2, "{all:?}");
    let schema = schema();
    let total: usize = all.iter().map(|p| read_eve(p, schema.as_ref()).len()).sum();
    assert_eq!(total, 2 * 80);
    assert!(s.counter("eve-writer", "eve.reconnects") >= 1);
}

mod admin {
    use super::*;
    use hyper_util::rt::TokioIo;
    use meerkat_proto::events::event_stream_client::EventStreamClient;
    use meerkat_proto::events::{Alert, Event, EventBatch, EventType};
    use meerkat_proto::writer::writer_admin_client::WriterAdminClient;
    use meerkat_proto::writer::{CountersRequest, FlushRequest, ReopenRequest};
    use tonic::transport::{Channel, Endpoint, Uri};

    async fn channel(sock: std::path::PathBuf) -> Channel {
        Endpoint::from_static("http://eve-writer.local")
            .connect_with_connector(tower::service_fn(move |_: Uri| {
                let sock = sock.clone();
                async move {
                    Ok::<_, std::io::Error>(TokioIo::new(
                        tokio::net::UnixStream::connect(sock).await?,
                    ))
                }
            }))
            .await
            .unwrap()
    }

    fn alert(sid: u64) -> Event {
        Event {
            event_type: EventType::Alert as i32,
            timestamp_us: 1_700_000_000_000_000,
            src_ip: vec![10, 0, 0, 1],
            dest_ip: vec![10, 0, 0, 2],
            ip_proto: 17,
            src_port: 1,
            dest_port: 2,
            alert: Some(Alert {
                signature_id: sid,
                gid: 1,
                rev: 1,
                signature: "admin test".to_string(),
                category: "Misc activity".to_string(),
                severity: 3,
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn flush_reopen_and_counters() {
        let s =
            Setup::new("outputs:\n  - eve-log:\n      buffer-size: 1mb\n      types: [alert]\n");
        let mut writer = s.start_writer();
        let sock = s.runtime.join("eve.sock");
        let ch = channel(sock).await;
        let mut events = EventStreamClient::new(ch.clone());
        let mut admin = WriterAdminClient::new(ch);
        let (tx, rx) = tokio::sync::mpsc::channel(4);
        let mut acks = events
            .publish(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap()
            .into_inner();
        let batch = |seq, sid| EventBatch {
            producer: "test".to_string(),
            epoch: 1,
            seq,
            worker: 0,
            events: vec![alert(sid)],
            flush: false,
            ring_mark: 0,
        };
        tx.send(batch(1, 11)).await.unwrap();
        let eve = s.log_dir.join("eve.json");
        // Flush covers what the writer has received: wait until it has the batch.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        loop {
            let c = admin
                .counters(CountersRequest {})
                .await
                .unwrap()
                .into_inner();
            if c.counters
                .iter()
                .any(|x| x.name == "eve.events_in" && x.value == 1)
            {
                break;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "the batch never arrived"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // Buffered, no flush interval: nothing is on disk until asked.
        assert_eq!(std::fs::metadata(&eve).unwrap().len(), 0);
        let r = admin
            .flush(FlushRequest { timeout_ms: 5000 })
            .await
            .unwrap()
            .into_inner();
        assert!(r.complete);
        assert_eq!(r.held_bytes, 0);
        let ack = tokio::time::timeout(Duration::from_secs(10), acks.message())
            .await
            .expect("no acknowledgement after the flush")
            .unwrap()
            .unwrap();
        assert_eq!(ack.seq, 1);
        let first = read_eve(&eve, schema().as_ref());
        assert_eq!(first.len(), 1);
        std::fs::rename(&eve, s.log_dir.join("eve.json.old")).unwrap();
        let r = admin.reopen(ReopenRequest {}).await.unwrap().into_inner();
        assert_eq!((r.reopened, r.errors.len()), (1, 0));
        let mut b = batch(2, 12);
        b.flush = true;
        tx.send(b).await.unwrap();
        let ack = tokio::time::timeout(Duration::from_secs(10), acks.message())
            .await
            .expect("no acknowledgement of a flush batch")
            .unwrap()
            .unwrap();
        assert_eq!(ack.seq, 2);
        let second = read_eve(&eve, schema().as_ref());
        assert_eq!(second[0]["alert"]["signature_id"], 12);
        let c = admin
            .counters(CountersRequest {})
            .await
            .unwrap()
            .into_inner();
        let get = |n: &str| c.counters.iter().find(|x| x.name == n).map(|x| x.value);
        assert_eq!(get("eve.events_written"), Some(2));
        assert_eq!(get("eve.events.alert"), Some(2));
        assert_eq!(get("eve.reopens"), Some(1));
        drop(tx);
        terminate(&writer);
        wait_success(&mut writer, "eve-writer", Duration::from_secs(30));
    }
}
