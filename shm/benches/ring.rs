//! The packet ring against a plain in-process loop that touches the same bytes.
//!
//! `cargo bench -p meerkat-shm`. For 64-byte and 1500-byte records:
//! - `ring`: a producer thread pushes records into a shared-memory ring (publishing every
//!   32) while a consumer thread reads each record and sums one byte of it; the mapping,
//!   atomics and futex waits are the ones two processes use.
//! - `baseline`: one thread copies each record into a buffer of the same size as the ring's
//!   data region and reads it back the same way: the memory traffic with no ring protocol.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use meerkat_shm::{Consumer, PacketMeta, Producer};

const RING: usize = 16 << 20;
const BATCH: u64 = 32;

fn ring_run(size: usize, records: u64) -> Duration {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ring");
    meerkat_shm::create(&path, RING).expect("create");
    let mut consumer = Consumer::attach(&path).expect("consumer");
    let mut producer = Producer::attach(&path).expect("producer");
    let payload = vec![0xa5u8; size];
    let start = Instant::now();
    let t = std::thread::spawn(move || {
        for seq in 1..=records {
            let meta = PacketMeta {
                seq,
                ..Default::default()
            };
            producer
                .push_blocking(&meta, &payload, Duration::from_millis(10), || true)
                .expect("push");
            if seq % BATCH == 0 {
                producer.publish();
            }
        }
        producer.finish();
    });
    let mut seen = 0u64;
    let mut sum = 0u64;
    loop {
        while let Some(r) = consumer.next_record().expect("read") {
            sum = sum.wrapping_add(u64::from(r.data[r.data.len() / 2]));
            seen += 1;
        }
        consumer.release();
        if consumer.wait(Duration::from_millis(100)) == meerkat_shm::WaitOutcome::Eof {
            break;
        }
    }
    let elapsed = start.elapsed();
    t.join().expect("producer");
    assert_eq!(seen, records);
    black_box(sum);
    elapsed
}

fn baseline_run(size: usize, records: u64) -> Duration {
    let mut buf = vec![0u8; RING];
    let payload = vec![0xa5u8; size];
    let slot = (size + 40 + 7) & !7;
    let start = Instant::now();
    let mut off = 0usize;
    let mut sum = 0u64;
    for _ in 0..records {
        if off + slot > buf.len() {
            off = 0;
        }
        buf[off + 40..off + 40 + size].copy_from_slice(&payload);
        let r = &buf[off + 40..off + 40 + size];
        sum = sum.wrapping_add(u64::from(r[size / 2]));
        off += slot;
    }
    black_box(sum);
    black_box(&buf);
    start.elapsed()
}

fn bench(c: &mut Criterion) {
    for size in [64usize, 1500] {
        let mut g = c.benchmark_group(format!("ring_{size}B"));
        g.throughput(Throughput::Elements(1));
        g.measurement_time(Duration::from_secs(5));
        g.bench_function("ring", |b| {
            b.iter_custom(|iters| ring_run(size, iters.max(1)))
        });
        g.bench_function("baseline", |b| {
            b.iter_custom(|iters| baseline_run(size, iters.max(1)))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
