//! The micro-burst experiment (issue 6): how much of a sudden burst does live capture lose,
//! with and without the backlog, for several kernel ring sizes, and where is it lost?
//!
//! For each configuration and repeat: a network namespace with a veth pair (made here,
//! deleted after); `meerkat run -i <one end>` with the given rules; once it runs, a sender
//! thread on the other end fires the first `--packets` frames of a pcap (a realistic mix,
//! e.g. `trafficgen.py --seed 1 --size 48 --attack-rate 0.02`) with `sendmmsg` as fast as
//! the kernel takes them, then idles until every packet is accounted for:
//!
//! ```text
//! sent = veth drops + kernel ring drops + backlog drops + worker-ring drops + inspected
//! ```
//!
//! Run it through `bench/microburst.sh` (builds, then runs the whole matrix), or:
//! `cargo build --release && target/release/examples/microburst --pcap P --rules R`.
//! Needs root and iproute2.

#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use clap::Parser;
use meerkat_capture::replay::Sender;
use meerkat_capture::vethns::VethNs;
use meerkat_runtime::counters::{
    CaptureCounter, CaptureLiveCounter, DetectCounter, DetectCounters,
};
use meerkat_runtime::{Role, counters_path};
use meerkat_shm::CounterReader;

#[derive(Debug, Parser)]
struct Args {
    /// Traffic to burst (its first --packets frames; repeated if it holds fewer).
    #[arg(long)]
    pcap: PathBuf,
    /// Rules for the detect workers (e.g. ET Open concatenated).
    #[arg(long)]
    rules: PathBuf,
    /// Frames in the burst.
    #[arg(long, default_value_t = 100_000)]
    packets: usize,
    /// Kernel ring sizes to try, in frames (af-packet.ring-size).
    #[arg(long, value_delimiter = ',', default_value = "256,1024,4096")]
    ring_frames: Vec<u32>,
    /// Backlog sizes to try, in packets (capture.backlog-size; 0 = off).
    #[arg(long, value_delimiter = ',', default_value = "0,131072")]
    backlog: Vec<usize>,
    /// Size of each capture -> worker shared-memory ring (capture.ring-size).
    #[arg(long, default_value = "1mb")]
    worker_ring: String,
    /// Detect workers.
    #[arg(long, default_value_t = 2)]
    workers: usize,
    /// Repeats of each configuration (the median is reported).
    #[arg(long, default_value_t = 3)]
    repeats: usize,
    /// MTU of the veth pair.
    #[arg(long, default_value_t = 1500)]
    mtu: u32,
    /// The meerkat binary (default: beside this example's directory).
    #[arg(long)]
    meerkat: Option<PathBuf>,
}

#[derive(Debug, Clone, Default)]
struct Outcome {
    sent: u64,
    send_secs: f64,
    veth_drops: u64,
    kernel_packets: u64,
    kernel_drops: u64,
    backlog_drops: u64,
    backlog_high_water: u64,
    ring_full_drops: u64,
    into_rings: u64,
    inspected: u64,
    settle_secs: f64,
}

impl Outcome {
    fn lost(&self) -> u64 {
        self.sent.saturating_sub(self.inspected)
    }
    fn loss_pct(&self) -> f64 {
        100.0 * self.lost() as f64 / self.sent.max(1) as f64
    }
}

fn counter(rt: &Path, role: Role, name: &str) -> u64 {
    CounterReader::open(&counters_path(rt, role))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
}

fn frames(pcap: &Path, n: usize) -> Vec<Vec<u8>> {
    let mut all = Vec::new();
    let mut r = meerkat_capture::Reader::new(std::fs::File::open(pcap).unwrap()).unwrap();
    while let Some(p) = r.next_packet().unwrap() {
        all.push(p.data.to_vec());
        if all.len() == n {
            break;
        }
    }
    assert!(!all.is_empty(), "{} holds no packets", pcap.display());
    let base = all.len();
    let mut i = 0;
    while all.len() < n {
        all.push(all[i % base].clone());
        i += 1;
    }
    all
}

struct Running(Child);
impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn one_run(args: &Args, meerkat: &Path, burst: &[Vec<u8>], ring: u32, backlog: usize) -> Outcome {
    let ns = VethNs::create("burst", args.mtu).unwrap();
    let log = tempfile::tempdir().unwrap();
    let rt = tempfile::tempdir().unwrap();
    let sets = [
        format!("runtime-dir={}", rt.path().display()),
        format!("af-packet.ring-size={ring}"),
        format!("capture.backlog-size={backlog}"),
        format!("capture.ring-size={}", args.worker_ring),
        "vars.address-groups.HOME_NET=any".to_string(),
        "vars.address-groups.EXTERNAL_NET=any".to_string(),
    ];
    let child = ns
        .command(meerkat)
        .args(["--quiet", "run", "-i", &ns.b, "-k", "none", "-S"])
        .arg(&args.rules)
        .arg("-l")
        .arg(log.path())
        .args(["--workers", &args.workers.to_string()])
        .args(sets.iter().flat_map(|s| ["--set", s.as_str()]))
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let mut run = Running(child);
    let rtp = rt.path();
    let start_deadline = Instant::now() + Duration::from_secs(600);
    while counter(rtp, Role::Capture, CaptureLiveCounter::Live.name()) != 1 {
        assert!(Instant::now() < start_deadline, "meerkat did not start");
        if let Some(s) = run.0.try_wait().unwrap() {
            panic!("meerkat exited: {s}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let veth_before = ns.link_stat(&ns.b, "rx_dropped").unwrap_or(0)
        + ns.link_stat(&ns.a, "tx_dropped").unwrap_or(0);
    let refs: Vec<&[u8]> = burst.iter().map(Vec::as_slice).collect();
    let sent = std::thread::scope(|s| {
        s.spawn(|| {
            ns.enter_current_thread().unwrap();
            let mut tx = Sender::open(&ns.a).unwrap();
            let t0 = Instant::now();
            let st = tx.send(&refs).unwrap();
            (st.sent, t0.elapsed().as_secs_f64(), t0)
        })
        .join()
        .unwrap()
    });
    let (sent, send_secs, t_start) = sent;
    // Idle until every packet is accounted for, or nothing moves for 10 s.
    let mut last_progress = (0u64, Instant::now());
    let o = loop {
        let veth = (ns.link_stat(&ns.b, "rx_dropped").unwrap_or(0)
            + ns.link_stat(&ns.a, "tx_dropped").unwrap_or(0))
        .saturating_sub(veth_before);
        let c = |n: &str| counter(rtp, Role::Capture, n);
        let o = Outcome {
            sent,
            send_secs,
            veth_drops: veth,
            kernel_packets: c(CaptureLiveCounter::KernelPackets.name()),
            kernel_drops: c(CaptureLiveCounter::KernelDrops.name()),
            backlog_drops: c(CaptureLiveCounter::BacklogDrops.name()),
            backlog_high_water: c(CaptureLiveCounter::BacklogHighWater.name()),
            ring_full_drops: c(CaptureLiveCounter::RingFullDrops.name()),
            into_rings: c(CaptureCounter::Packets.name()),
            inspected: (0..args.workers)
                .map(|w| {
                    let name = DetectCounters::new(w).counter(DetectCounter::Packets);
                    counter(rtp, Role::Detect(w), &name)
                })
                .sum(),
            settle_secs: t_start.elapsed().as_secs_f64(),
        };
        let accounted =
            o.veth_drops + o.kernel_drops + o.backlog_drops + o.ring_full_drops + o.inspected;
        if accounted >= sent && o.inspected >= o.into_rings {
            break o;
        }
        let progress = o.inspected + o.kernel_packets;
        if progress != last_progress.0 {
            last_progress = (progress, Instant::now());
        } else if last_progress.1.elapsed() > Duration::from_secs(10) {
            eprintln!("warning: counters stopped moving before every packet was accounted for");
            break o;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // SAFETY: SIGTERM to our own child.
    unsafe { libc::kill(run.0.id() as i32, libc::SIGTERM) };
    let deadline = Instant::now() + Duration::from_secs(60);
    while run.0.try_wait().unwrap().is_none() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    o
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let args = Args::parse();
    if let Some(why) = VethNs::unavailable() {
        eprintln!("microburst: {why}");
        std::process::exit(2);
    }
    let meerkat = args.meerkat.clone().unwrap_or_else(|| {
        let exe = std::env::current_exe().unwrap();
        exe.parent().unwrap().parent().unwrap().join("meerkat")
    });
    let burst = frames(&args.pcap, args.packets);
    let bytes: usize = burst.iter().map(Vec::len).sum();
    println!(
        "# micro-burst: {} frames ({:.1} MB, from {}), rules {}, {} workers, worker rings {}, veth MTU {}",
        burst.len(),
        bytes as f64 / 1e6,
        args.pcap.display(),
        args.rules.display(),
        args.workers,
        args.worker_ring,
        args.mtu
    );
    println!(
        "| backlog | ring frames | run | sent | send Mpps | veth drops | kernel drops | backlog drops | backlog high-water | ring-full drops | inspected | loss % | all inspected after s |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    let mut summary = Vec::new();
    for &backlog in &args.backlog {
        for &ring in &args.ring_frames {
            let mut losses = Vec::new();
            for run in 0..args.repeats {
                let o = one_run(&args, &meerkat, &burst, ring, backlog);
                println!(
                    "| {} | {} | {} | {} | {:.2} | {} | {} | {} | {} | {} | {} | {:.3} | {:.1} |",
                    backlog,
                    ring,
                    run + 1,
                    o.sent,
                    o.sent as f64 / o.send_secs / 1e6,
                    o.veth_drops,
                    o.kernel_drops,
                    o.backlog_drops,
                    o.backlog_high_water,
                    o.ring_full_drops,
                    o.inspected,
                    o.loss_pct(),
                    o.settle_secs
                );
                losses.push(o.loss_pct());
            }
            summary.push((backlog, ring, median(losses)));
        }
    }
    println!();
    println!("| backlog | ring frames | median loss % |");
    println!("|---|---|---|");
    for (b, r, l) in summary {
        println!("| {b} | {r} | {l:.3} |");
    }
}
