//! Scan cost per call, Filebeat's setup: 1,000 capture files of 10-12 KB in one
//! directory, one glob (`DIR/*.pcap`), native vs fingerprint identity, cold (a new
//! scanner's first scan: every file is new) and steady (nothing changed since the last
//! scan). Elastic measured 5.4 ms native and 22 ms fingerprint for this (their
//! fingerprint scan opened, read and hashed every file on every scan).
//!
//! `cargo bench -p meerkat-scanner --bench scan` (criterion). After the run the medians
//! are printed side by side with the ratios the issue sets as targets: steady
//! fingerprint <= 1.2x steady native, cold fingerprint <= 2x cold native.
//! `MEERKAT_BENCH_FILES=N` changes the number of files.
//!
//! A cold fingerprint scan reads the new files' windows on several threads (one per
//! CPU, at most four); `fingerprint-cold-1thread` is the same scan on the calling thread
//! only. On a loaded machine a scan that lasts several milliseconds is preempted more
//! often than a short one, which inflates the longer (fingerprint) times. So after
//! criterion's figures the bench runs the five cases again, interleaved (one of each in
//! turn, `MEERKAT_BENCH_RUNS` rounds, default 41), and prints the medians of wall time
//! and of the process's CPU time per scan (the reading threads' included), which the
//! other processes on a shared machine do not inflate. `MEERKAT_BENCH_CRITERION=0` skips
//! criterion's part; `MEERKAT_BENCH_ONLY=NAME` keeps the cases whose name contains NAME.

// A benchmark reports on stdout.
#![allow(clippy::print_stdout)]

mod common;
use common::cpu;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group};
use meerkat_scanner::{Identity, ScanConfig, Scanner};
use meerkat_synth::Frame;
use meerkat_synth::pcap::{Format, LINKTYPE_ETHERNET, to_bytes};

fn files() -> usize {
    std::env::var("MEERKAT_BENCH_FILES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
}

/// `n` pcaps of 10-12 KB, each with its own packets.
fn make_dir(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    for i in 0..n {
        let target = 10_240 + (i * 7919) % 2048;
        let mut frames = Vec::new();
        let mut size = 24;
        let mut k = 0u64;
        while size < target {
            let len = (60 + (i + k as usize) % 200).min(target - size);
            frames.push(Frame {
                ts_ns: 1_700_000_000_000_000_000 + (i as u64) * 1_000_000_000 + k * 1000,
                data: (0..len).map(|b| (b + i + k as usize) as u8).collect(),
            });
            size += 16 + len;
            k += 1;
        }
        let bytes = to_bytes(
            &frames,
            Format::Micro { big_endian: false },
            LINKTYPE_ETHERNET,
        );
        std::fs::write(dir.path().join(format!("cap-{i:06}.pcap")), bytes).expect("write");
    }
    dir
}

fn scanner(dir: &Path, identity: Identity, threads: usize) -> Scanner {
    let mut cfg = ScanConfig::new(vec![format!("{}/*.pcap", dir.display())]);
    cfg.identity = identity;
    cfg.read_threads = threads;
    Scanner::new(cfg).expect("scanner")
}

fn name(identity: Identity) -> &'static str {
    identity.name()
}

fn bench(c: &mut Criterion) {
    let n = files();
    let dir = make_dir(n);
    let mut g = c.benchmark_group(format!("scan-{n}"));
    g.sample_size(30);
    g.measurement_time(Duration::from_secs(5));
    for identity in [Identity::Native, Identity::Fingerprint] {
        g.bench_function(format!("{}-cold", name(identity)), |b| {
            b.iter_batched(
                || scanner(dir.path(), identity, 0),
                |mut s| {
                    let r = s.scan();
                    assert_eq!(r.files, n);
                    s
                },
                criterion::BatchSize::PerIteration,
            )
        });
        if identity == Identity::Fingerprint {
            g.bench_function("fingerprint-cold-1thread", |b| {
                b.iter_batched(
                    || scanner(dir.path(), identity, 1),
                    |mut s| {
                        let r = s.scan();
                        assert_eq!(r.files, n);
                        s
                    },
                    criterion::BatchSize::PerIteration,
                )
            });
        }
        let mut s = scanner(dir.path(), identity, 0);
        s.scan();
        g.bench_function(format!("{}-steady", name(identity)), |b| {
            b.iter(|| {
                let r = s.scan();
                assert!(r.changes.is_empty() && r.opened == 0);
            })
        });
    }
    g.finish();
}

criterion_group!(benches, bench);

/// Median of one benchmark from criterion's output, ns.
fn median(group: &str, func: &str) -> Option<f64> {
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".to_string());
    let path = Path::new(&target)
        .join("criterion")
        .join(group)
        .join(func)
        .join("new/estimates.json");
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(path).ok()?).ok()?;
    v["median"]["point_estimate"].as_f64()
}

fn median_of(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The five cases again, interleaved: medians of wall and process CPU time per scan.
fn interleaved(n: usize) {
    let runs = std::env::var("MEERKAT_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(41usize)
        .max(1);
    let dir = make_dir(n);
    // (label, identity, read threads, cold)
    let cases = [
        ("native-cold", Identity::Native, 0, true),
        ("fingerprint-cold", Identity::Fingerprint, 0, true),
        ("fingerprint-cold-1thread", Identity::Fingerprint, 1, true),
        ("native-steady", Identity::Native, 0, false),
        ("fingerprint-steady", Identity::Fingerprint, 0, false),
    ];
    // `MEERKAT_BENCH_ONLY=NAME`: the cases whose name contains NAME (to profile one).
    let only = std::env::var("MEERKAT_BENCH_ONLY").unwrap_or_default();
    let cases: Vec<_> = cases.into_iter().filter(|c| c.0.contains(&only)).collect();
    let mut steady: Vec<Scanner> = cases
        .iter()
        .map(|&(_, identity, threads, _)| {
            let mut s = scanner(dir.path(), identity, threads);
            s.scan();
            s
        })
        .collect();
    let mut times: Vec<(Vec<Duration>, Vec<Duration>)> = vec![Default::default(); cases.len()];
    for _ in 0..runs {
        for (k, &(_, identity, threads, cold)) in cases.iter().enumerate() {
            let mut fresh = cold.then(|| scanner(dir.path(), identity, threads));
            let s = fresh.as_mut().unwrap_or(&mut steady[k]);
            let (t, c) = (Instant::now(), cpu());
            let r = s.scan();
            times[k].0.push(t.elapsed());
            times[k].1.push(cpu() - c);
            assert_eq!(r.files, n);
            assert!(cold || r.opened == 0);
            // The new scanner is dropped outside the measured part.
            drop(fresh);
        }
    }
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    // (median wall, median CPU, fastest wall): preemption only adds time, so on a busy
    // machine the fastest of many rounds is the closest to an idle machine's figure.
    let med: Vec<(f64, f64, f64)> = times
        .into_iter()
        .map(|(w, c)| {
            let min = w.iter().copied().min().unwrap_or_default();
            (ms(median_of(w)), ms(median_of(c)), ms(min))
        })
        .collect();
    println!(
        "\nscan-{n}, interleaved, {runs} rounds: median wall ms (median process CPU ms) [fastest wall ms]"
    );
    for (k, (label, ..)) in cases.iter().enumerate() {
        println!(
            "  {label:26} {:8.3} ({:8.3}) [{:8.3}]",
            med[k].0, med[k].1, med[k].2
        );
    }
    if med.len() == 5 {
        let r = |a: usize, b: usize| {
            format!(
                "{:.2} wall ({:.2} CPU) [{:.2} fastest]",
                med[a].0 / med[b].0,
                med[a].1 / med[b].1,
                med[a].2 / med[b].2
            )
        };
        println!("  cold ratio {} (target <= 2.0)", r(1, 0));
        println!("  cold ratio, one thread {}", r(2, 0));
        println!("  steady ratio {} (target <= 1.2)", r(4, 3));
    }
}

fn main() {
    // `MEERKAT_BENCH_CRITERION=0`: only the interleaved figures.
    if std::env::var("MEERKAT_BENCH_CRITERION").as_deref() == Ok("0") {
        interleaved(files());
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
    let group = format!("scan-{}", files());
    let get = |f: &str| median(&group, f);
    if let (Some(nc), Some(fc), Some(f1), Some(ns), Some(fs)) = (
        get("native-cold"),
        get("fingerprint-cold"),
        get("fingerprint-cold-1thread"),
        get("native-steady"),
        get("fingerprint-steady"),
    ) {
        println!("\n{group}: median scan time per call");
        println!(
            "  cold:   native {:8.3} ms   fingerprint {:8.3} ms   ratio {:.2} (target <= 2.0)",
            nc / 1e6,
            fc / 1e6,
            fc / nc
        );
        println!(
            "          (fingerprint on one thread {:8.3} ms   ratio {:.2})",
            f1 / 1e6,
            f1 / nc
        );
        println!(
            "  steady: native {:8.3} ms   fingerprint {:8.3} ms   ratio {:.2} (target <= 1.2)",
            ns / 1e6,
            fs / 1e6,
            fs / ns
        );
    }
    interleaved(files());
}
