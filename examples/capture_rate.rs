//! Sustained capture rate: packets per second into the workers' rings, with no rules, for
//! the same pcap read three ways, side by side in one run:
//!
//! - `-r`: `meerkat run -r PCAP` (offline reader);
//! - `veth`: `meerkat run -i` on one end of a veth pair (in a namespace made here) while a
//!   sender thread replays the pcap's frames on the other end as fast as it can;
//! - `dpdk`: `meerkat run --dpdk` with the `net_pcap` virtual device replaying the file
//!   (needs a meerkat built with `--features dpdk`; skipped otherwise).
//!
//! The rate is taken from the capture counter page, polled every millisecond: packets
//! into the rings between the first packet and the last, divided by that time. The
//! workers' rings (capture.ring-size, 32 MiB each by default) hold the whole file, so the
//! workers do not hold capture back. Reports each run and the median of `--repeats`.
//! Run through `bench/capture-rate.sh`. Needs root and iproute2 (and DPDK for `dpdk`).

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use meerkat_capture::replay::Sender;
use meerkat_capture::vethns::VethNs;
use meerkat_runtime::counters::{CaptureCounter, CaptureLiveCounter};
use meerkat_runtime::{Role, counters_path};
use meerkat_shm::CounterReader;

#[derive(Debug, Parser)]
struct Args {
    #[arg(long)]
    pcap: PathBuf,
    #[arg(long, default_value_t = 5)]
    repeats: usize,
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Modes to run.
    #[arg(long, value_delimiter = ',', default_value = "r,veth,dpdk")]
    modes: Vec<String>,
    /// The meerkat binary (default: beside this example's directory).
    #[arg(long)]
    meerkat: Option<PathBuf>,
}

struct Running(Child);
impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn counter(rt: &Path, name: &str) -> u64 {
    CounterReader::open(&counters_path(rt, Role::Capture))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
}

#[derive(Debug, Default, Clone, Copy)]
struct Rate {
    packets: u64,
    secs: f64,
    dropped: u64,
    sender_pps: f64,
}

/// Polls `capture.packets` until it reaches `n` (or stops moving for 5 s); returns the
/// packets and the time from the first to the last.
fn measure(rt: &Path, n: u64, run: &mut Running) -> (u64, f64) {
    let mut first: Option<Instant> = None;
    let mut last = (0u64, Instant::now());
    loop {
        let p = counter(rt, CaptureCounter::Packets.name());
        let now = Instant::now();
        if p > 0 && first.is_none() {
            first = Some(now);
        }
        if p != last.0 {
            last = (p, now);
        }
        if p >= n || now.duration_since(last.1) > Duration::from_secs(5) {
            break;
        }
        if run.0.try_wait().unwrap().is_some() && p == last.0 {
            break;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let secs = first
        .map(|f| last.1.duration_since(f).as_secs_f64())
        .unwrap_or(0.0);
    (last.0, secs)
}

fn start(mut cmd: Command) -> Running {
    cmd.stdout(Stdio::null()).stderr(Stdio::null());
    Running(cmd.spawn().unwrap())
}

fn base_args(cmd: &mut Command, rules: &Path, log: &Path, rt: &Path, workers: usize) {
    cmd.args(["--quiet", "run", "-k", "none", "-S"])
        .arg(rules)
        .arg("-l")
        .arg(log)
        .args(["--workers", &workers.to_string()])
        .args(["--set", &format!("runtime-dir={}", rt.display())]);
}

fn one(mode: &str, args: &Args, meerkat: &Path, rules: &Path, frames: &[Vec<u8>]) -> Option<Rate> {
    let n = frames.len() as u64;
    let log = tempfile::tempdir().unwrap();
    let rt = tempfile::tempdir().unwrap();
    match mode {
        "r" => {
            let mut cmd = Command::new(meerkat);
            base_args(&mut cmd, rules, log.path(), rt.path(), args.workers);
            cmd.arg("-r").arg(&args.pcap);
            let mut run = start(cmd);
            let (packets, secs) = measure(rt.path(), n, &mut run);
            let _ = run.0.wait();
            Some(Rate {
                packets,
                secs,
                ..Default::default()
            })
        }
        "dpdk" => {
            let mut cmd = Command::new(meerkat);
            base_args(&mut cmd, rules, log.path(), rt.path(), args.workers);
            cmd.args(["--dpdk", "--set"])
                .arg(format!(
                    "dpdk.eal-params=--no-huge -m 512 --no-pci --no-shconf --file-prefix=mkrate{} --vdev net_pcap0,rx_pcap={}",
                    std::process::id(),
                    args.pcap.display()
                ))
                .args(["--set", "dpdk.interfaces.interface=net_pcap0"]);
            let mut run = start(cmd);
            let deadline = Instant::now() + Duration::from_secs(60);
            while counter(rt.path(), CaptureLiveCounter::Live.name()) != 1 {
                if run.0.try_wait().unwrap().is_some() || Instant::now() > deadline {
                    eprintln!("dpdk mode unavailable (is meerkat built with --features dpdk?)");
                    return None;
                }
                std::thread::sleep(Duration::from_millis(5));
            }
            let (packets, secs) = measure(rt.path(), n, &mut run);
            let dropped = counter(rt.path(), CaptureLiveCounter::DpdkImissed.name())
                + counter(rt.path(), CaptureLiveCounter::BacklogDrops.name());
            // SAFETY: SIGTERM to our own child.
            unsafe { libc::kill(run.0.id() as i32, libc::SIGTERM) };
            let _ = run.0.wait();
            Some(Rate {
                packets,
                secs,
                dropped,
                ..Default::default()
            })
        }
        "veth" => {
            let ns = VethNs::create("rate", 1500).unwrap();
            let mut cmd = ns.command(meerkat);
            base_args(&mut cmd, rules, log.path(), rt.path(), args.workers);
            cmd.args(["-i", &ns.b]);
            let mut run = start(cmd);
            let deadline = Instant::now() + Duration::from_secs(60);
            while counter(rt.path(), CaptureLiveCounter::Live.name()) != 1 {
                assert!(run.0.try_wait().unwrap().is_none() && Instant::now() < deadline);
                std::thread::sleep(Duration::from_millis(5));
            }
            let refs: Vec<&[u8]> = frames.iter().map(Vec::as_slice).collect();
            let rtp = rt.path();
            let (m, sender_pps) = std::thread::scope(|s| {
                let tx = s.spawn(|| {
                    ns.enter_current_thread().unwrap();
                    let mut tx = Sender::open(&ns.a).unwrap();
                    let t0 = Instant::now();
                    let st = tx.send(&refs).unwrap();
                    st.sent as f64 / t0.elapsed().as_secs_f64()
                });
                let m = measure(rtp, n, &mut run);
                (m, tx.join().unwrap())
            });
            let dropped = [
                CaptureLiveCounter::KernelDrops,
                CaptureLiveCounter::BacklogDrops,
                CaptureLiveCounter::RingFullDrops,
            ]
            .iter()
            .map(|c| counter(rt.path(), c.name()))
            .sum();
            // SAFETY: SIGTERM to our own child.
            unsafe { libc::kill(run.0.id() as i32, libc::SIGTERM) };
            let _ = run.0.wait();
            Some(Rate {
                packets: m.0,
                secs: m.1,
                dropped,
                sender_pps,
            })
        }
        other => panic!("unknown mode {other}"),
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args = Args::parse();
    let meerkat = args.meerkat.clone().unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap();
        exe.parent().unwrap().parent().unwrap().join("meerkat")
    });
    let rules_dir = tempfile::tempdir().unwrap();
    let rules = rules_dir.path().join("none.rules");
    std::fs::write(&rules, "# no rules: the capture path alone\n").unwrap();
    let mut frames = Vec::new();
    let mut r = meerkat_capture::Reader::new(std::fs::File::open(&args.pcap).unwrap()).unwrap();
    while let Some(p) = r.next_packet().unwrap() {
        frames.push(p.data.to_vec());
    }
    println!(
        "# capture rate: {} ({} packets), no rules, {} workers, medians of {} runs",
        args.pcap.display(),
        frames.len(),
        args.workers,
        args.repeats
    );
    println!("| mode | run | packets into rings | seconds | kpps | dropped | sender kpps |");
    println!("|---|---|---|---|---|---|---|");
    let mut med = Vec::new();
    // Interleave the modes run by run so that machine noise hits them alike.
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); args.modes.len()];
    for run in 0..args.repeats {
        for (i, mode) in args.modes.iter().enumerate() {
            if mode == "veth"
                && let Some(why) = VethNs::unavailable()
            {
                eprintln!("veth mode skipped: {why}");
                continue;
            }
            let Some(r) = one(mode, &args, &meerkat, &rules, &frames) else {
                continue;
            };
            let kpps = r.packets as f64 / r.secs.max(1e-9) / 1e3;
            println!(
                "| {mode} | {} | {} | {:.3} | {:.0} | {} | {:.0} |",
                run + 1,
                r.packets,
                r.secs,
                kpps,
                r.dropped,
                r.sender_pps / 1e3
            );
            rates[i].push(kpps);
        }
    }
    for (mode, v) in args.modes.iter().zip(rates) {
        if !v.is_empty() {
            med.push((mode.clone(), median(v)));
        }
    }
    println!();
    println!("| mode | median kpps into rings | ratio to -r |");
    println!("|---|---|---|");
    let base = med.iter().find(|(m, _)| m == "r").map(|(_, k)| *k);
    for (m, k) in &med {
        let ratio = base.map(|b| format!("{:.2}", k / b)).unwrap_or_default();
        println!("| {m} | {k:.0} | {ratio} |");
    }
}
