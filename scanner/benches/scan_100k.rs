//! The large case: 100,000 capture files of 10-12 KB in one directory (about 1.1 GB,
//! made once under `$MEERKAT_BENCH_DIR` or the temp dir and reused), one glob. Prints, for
//! native and fingerprint identity, the median of several runs of a cold scan (a new
//! scanner) and of a steady scan (nothing changed), interleaved so that both see the same
//! machine, as wall time and as the process's CPU time (which other processes on a
//! shared machine do not inflate; a fingerprint scan's reading threads add theirs), and
//! the fingerprint scan also on one thread; the memory a scanner holds for them (resident-set growth of a fresh process
//! over its first scan); and the registry's cost for that many entries.
//!
//! `cargo bench -p meerkat-scanner --bench scan_100k` (`MEERKAT_BENCH_FILES=N` and
//! `MEERKAT_BENCH_RUNS=R` change the size and the number of runs).

// A benchmark reports on stdout.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

mod common;
use common::cpu;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use meerkat_scanner::{Entry, Identity, Registry, ScanConfig, Scanner, Window};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A directory of `n` files of 10-12 KB (pcap header, then bytes unique to each file);
/// kept between runs, made again if its file count is wrong.
fn make_dir(n: usize) -> PathBuf {
    let base = std::env::var_os("MEERKAT_BENCH_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("meerkat-scan-bench-{n}"));
    let have = std::fs::read_dir(&dir).map(|d| d.count()).unwrap_or(0);
    if have == n {
        return dir;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let started = Instant::now();
    let mut buf = Vec::with_capacity(12 * 1024);
    for i in 0..n {
        let size = 10_240 + (i * 7919) % 2048;
        buf.clear();
        buf.extend_from_slice(&[0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0]);
        buf.extend_from_slice(&[0; 8]);
        buf.extend_from_slice(&[0, 0, 4, 0, 1, 0, 0, 0]);
        let mut x = (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        while buf.len() < size {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            buf.extend_from_slice(&x.to_le_bytes());
        }
        buf.truncate(size);
        std::fs::write(dir.join(format!("cap-{i:07}.pcap")), &buf).unwrap();
    }
    println!(
        "made {n} files in {} in {:.1} s",
        dir.display(),
        started.elapsed().as_secs_f64()
    );
    dir
}

fn scanner(dir: &Path, identity: Identity) -> Scanner {
    scanner_threads(dir, identity, 0)
}

fn scanner_threads(dir: &Path, identity: Identity, threads: usize) -> Scanner {
    let mut cfg = ScanConfig::new(vec![format!("{}/*.pcap", dir.display())]);
    cfg.identity = identity;
    cfg.read_threads = threads;
    Scanner::new(cfg).unwrap()
}

fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // Child mode: the memory of one scanner, in a fresh process.
    let args: Vec<String> = std::env::args().collect();
    if let Some(pos) = args.iter().position(|a| a == "--memory-child") {
        let dir = PathBuf::from(&args[pos + 1]);
        let identity = if args[pos + 2] == "native" {
            Identity::Native
        } else {
            Identity::Fingerprint
        };
        let before = rss_kib();
        let mut s = scanner(&dir, identity);
        let r = s.scan();
        let after = rss_kib();
        println!("{} {}", r.files, after.saturating_sub(before));
        return;
    }
    if args
        .iter()
        .any(|a| a == "--list" || a.starts_with("--format"))
    {
        return; // `cargo bench -- --list`: nothing to list
    }

    let n = env_usize("MEERKAT_BENCH_FILES", 100_000);
    let runs = env_usize("MEERKAT_BENCH_RUNS", 5);
    let dir = make_dir(n);
    // (identity, window-reading threads: 0 = one per CPU)
    let configs = [
        (Identity::Native, 0),
        (Identity::Fingerprint, 0),
        (Identity::Fingerprint, 1),
    ];
    let mut cold: [Vec<(Duration, Duration)>; 3] = Default::default();
    let mut steady: [Vec<(Duration, Duration)>; 3] = Default::default();
    for _ in 0..runs {
        for (k, &(id, threads)) in configs.iter().enumerate() {
            let mut s = scanner_threads(&dir, id, threads);
            let (t, c) = (Instant::now(), cpu());
            let r = s.scan();
            cold[k].push((t.elapsed(), cpu() - c));
            assert_eq!(r.files, n);
            let (t, c) = (Instant::now(), cpu());
            let r = s.scan();
            steady[k].push((t.elapsed(), cpu() - c));
            assert!(r.changes.is_empty() && r.opened == 0);
        }
    }
    let wall = |v: &[(Duration, Duration)]| median(v.iter().map(|x| x.0).collect());
    let cpu_of = |v: &[(Duration, Duration)]| median(v.iter().map(|x| x.1).collect());
    println!("\n{n} files, median of {runs} runs (interleaved), wall time (process CPU time):");
    let row = |label: &str, v: &[Vec<(Duration, Duration)>; 3]| {
        let (nw, nc) = (wall(&v[0]), cpu_of(&v[0]));
        let (fw, fc) = (wall(&v[1]), cpu_of(&v[1]));
        let (f1w, f1c) = (wall(&v[2]), cpu_of(&v[2]));
        let r = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
        println!(
            "  {label}: native {:8.2} ms ({:8.2})   fingerprint {:8.2} ms ({:8.2})   \
             ratio {:.2} ({:.2})   fingerprint on one thread {:8.2} ms ({:8.2}) ratio {:.2} ({:.2})",
            ms(nw),
            ms(nc),
            ms(fw),
            ms(fc),
            r(fw, nw),
            r(fc, nc),
            ms(f1w),
            ms(f1c),
            r(f1w, nw),
            r(f1c, nc)
        );
    };
    row("cold  ", &cold);
    row("steady", &steady);
    let (nc, fc) = (wall(&cold[0]), wall(&cold[1]));
    let (ns, fs) = (wall(&steady[0]), wall(&steady[1]));
    println!(
        "  per file: cold native {:.2} us, cold fingerprint {:.2} us, steady {:.2} / {:.2} us",
        nc.as_secs_f64() * 1e6 / n as f64,
        fc.as_secs_f64() * 1e6 / n as f64,
        ns.as_secs_f64() * 1e6 / n as f64,
        fs.as_secs_f64() * 1e6 / n as f64
    );

    let exe = std::env::current_exe().unwrap();
    for id in ["native", "fingerprint"] {
        let out = std::process::Command::new(&exe)
            .args(["--memory-child", &dir.display().to_string(), id])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        let mut it = text.split_whitespace();
        let (files, kib): (usize, u64) = (
            it.next().and_then(|v| v.parse().ok()).unwrap_or(0),
            it.next().and_then(|v| v.parse().ok()).unwrap_or(0),
        );
        println!(
            "  memory ({id}): {:.1} MiB resident growth over the first scan of {files} files ({} bytes per file)",
            kib as f64 / 1024.0,
            kib * 1024 / files.max(1) as u64
        );
    }

    // The registry with an entry for every file (all processed).
    let mut s = scanner(&dir, Identity::Fingerprint);
    s.scan();
    let entries: Vec<Entry> = s
        .files()
        .map(|f| {
            let mut e = Entry::new(f);
            e.bytes_done = f.stat.size;
            e.done = true;
            e
        })
        .collect();
    let rdir = tempfile::tempdir().unwrap();
    let path = rdir.path().join("pcap-registry.json");
    let mut reg = Registry::open(&path, Identity::Fingerprint, Window::default()).unwrap();
    let t = Instant::now();
    reg.commit(entries, Vec::new(), None).unwrap();
    let commit = t.elapsed();
    let t = Instant::now();
    reg.compact().unwrap();
    let compact = t.elapsed();
    drop(reg);
    let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
    let t = Instant::now();
    let reg = Registry::open(&path, Identity::Fingerprint, Window::default()).unwrap();
    let open = t.elapsed();
    assert_eq!(reg.len(), n);
    let t = Instant::now();
    let mut s = scanner(&dir, Identity::Fingerprint);
    s.restore(reg.entries().map(Entry::restored));
    let r = s.scan();
    let restart = t.elapsed();
    assert!(r.changes.is_empty() && r.opened == 0);
    println!(
        "  registry of {n} entries: {:.1} MB snapshot; batch commit {:.0} ms, snapshot {:.0} ms, \
         load {:.0} ms; restart scan (restore + first scan, nothing opened) {:.0} ms",
        size as f64 / 1e6,
        ms(commit),
        ms(compact),
        ms(open),
        ms(restart)
    );
}
