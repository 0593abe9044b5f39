//! The ring between two real processes: this test binary re-executes itself as the other
//! side (the `child_*` tests, which do nothing unless the parent set their environment).

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::{Duration, Instant};

use meerkat_shm::{Consumer, PacketMeta, Producer, WaitOutcome};

const ENV_ROLE: &str = "MEERKAT_RING_TEST_ROLE";
const ENV_PATH: &str = "MEERKAT_RING_TEST_PATH";
const ENV_COUNT: &str = "MEERKAT_RING_TEST_COUNT";

/// Deterministic payload for record `seq`: length 0..1500, bytes derived from seq.
fn payload(seq: u64, buf: &mut Vec<u8>) {
    buf.clear();
    let len = ((seq.wrapping_mul(2654435761)) % 1501) as usize;
    buf.extend((0..len).map(|i| (seq as usize).wrapping_add(i * 31) as u8));
}

fn spawn(role: &str, path: &Path, count: u64) -> Child {
    Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            &format!("child_{role}"),
            "--nocapture",
            "--include-ignored",
        ])
        .env(ENV_ROLE, role)
        .env(ENV_PATH, path)
        .env(ENV_COUNT, count.to_string())
        .spawn()
        .unwrap()
}

fn child_env(role: &str) -> Option<(PathBuf, u64)> {
    if std::env::var(ENV_ROLE).ok()? != role {
        return None;
    }
    let path = PathBuf::from(std::env::var(ENV_PATH).ok()?);
    let count = std::env::var(ENV_COUNT).ok()?.parse().ok()?;
    Some((path, count))
}

#[test]
#[ignore = "run by the two-process tests as the producer side"]
fn child_producer() {
    let Some((path, count)) = child_env("producer") else {
        return;
    };
    let mut p = Producer::attach(&path).unwrap();
    let mut buf = Vec::new();
    for seq in 1..=count {
        payload(seq, &mut buf);
        let meta = PacketMeta {
            ts_ns: seq,
            seq,
            origlen: buf.len() as u32,
            link_type: 1,
            iface: 0,
            file: 0,
        };
        assert!(
            p.push_blocking(&meta, &buf, Duration::from_millis(50), || true)
                .unwrap()
        );
        if seq % 32 == 0 {
            p.publish();
        }
    }
    p.finish();
}

#[test]
#[ignore = "run by the two-process tests as a slow consumer that gets killed"]
fn child_consumer() {
    let Some((path, _)) = child_env("consumer") else {
        return;
    };
    let mut c = Consumer::attach(&path).unwrap();
    loop {
        let mut n = 0;
        while let Some(_r) = c.next_record().unwrap() {
            n += 1;
            if n == 64 {
                break;
            }
        }
        c.release();
        std::thread::sleep(Duration::from_micros(200));
        if c.wait(Duration::from_millis(100)) == WaitOutcome::Eof {
            return;
        }
    }
}

/// Reads until end of stream, checking order and content, starting at `first`.
fn consume_and_check(path: &Path, first: u64, count: u64) {
    let mut c = Consumer::attach(path).unwrap();
    let mut expect = first;
    let mut buf = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        while let Some(r) = c.next_record().unwrap() {
            assert_eq!(r.meta.seq, expect, "records out of order or lost");
            payload(expect, &mut buf);
            assert_eq!(r.data, &buf[..], "record {expect} corrupted");
            expect += 1;
        }
        match c.wait(Duration::from_secs(5)) {
            WaitOutcome::Eof => break,
            WaitOutcome::Ready | WaitOutcome::TimedOut => {}
        }
        assert!(Instant::now() < deadline, "stuck at record {expect}");
    }
    assert_eq!(expect, count + 1, "not every record arrived");
}

#[test]
fn producer_and_consumer_in_two_processes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring-0");
    // Small ring: forces many wraps and full-ring waits on both sides.
    meerkat_shm::create(&path, 256 * 1024).unwrap();
    let count = 200_000;
    let mut producer = spawn("producer", &path, count);
    consume_and_check(&path, 1, count);
    assert!(producer.wait().unwrap().success());
    let st = meerkat_shm::status(&path).unwrap();
    assert_eq!(st.records_written, count);
    assert_eq!(st.records_read, count);
    assert!(st.full_waits > 0, "the test should have filled the ring");
}

#[test]
fn new_consumer_resumes_after_the_old_one_is_killed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("ring-0");
    meerkat_shm::create(&path, 256 * 1024).unwrap();
    let count = 100_000;
    let mut producer = spawn("producer", &path, count);
    let mut consumer = spawn("consumer", &path, count);
    // Let the slow consumer get some way in, then kill it without warning.
    let deadline = Instant::now() + Duration::from_secs(60);
    while meerkat_shm::status(&path).unwrap().records_read < 5_000 {
        assert!(Instant::now() < deadline, "consumer made no progress");
        std::thread::sleep(Duration::from_millis(5));
    }
    consumer.kill().unwrap();
    consumer.wait().unwrap();
    let released = meerkat_shm::status(&path).unwrap().records_read;
    assert!(released < count, "consumer finished before it was killed");
    // The replacement starts right after the last batch the dead one released.
    consume_and_check(&path, released + 1, count);
    assert!(producer.wait().unwrap().success());
}
