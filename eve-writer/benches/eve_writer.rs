//! The eve-writer benchmark: the comparison behind `buffer-size` and
//! `heartbeat.output-flush-interval`, measured in one run.
//!
//! ```text
//! cargo bench -p meerkat-eve-writer --bench eve_writer            # everything
//! cargo bench -p meerkat-eve-writer --bench eve_writer -- --quick # 1 repetition, fewer events
//! cargo bench -p meerkat-eve-writer --bench eve_writer -- --full-path-only # for perf
//! cargo bench -p meerkat-eve-writer --bench eve_writer -- --profile-only   # for callgrind
//! cargo bench -p meerkat-eve-writer --bench eve_writer -- --bus-only [--events N] [--runs N]
//! ```
//!
//! `--bus-only` (issue 26): events per writer CPU-second to a file, to Redis Streams
//! (`XADD`, a redis-server of its own) and to NATS JetStream (a `nats-server -js` of its
//! own), interleaved runs, medians, the ratio to the file; then the spool's write rate
//! (NATS down: every event spooled) and replay rate (NATS started: the spool sent).
//!
//! `--events N` sets the number of events of `--full-path-only` (default 1,000,000), and
//! `EVE_BENCH_WRITER_WRAP` runs the writer process under a wrapper command, for instruction
//! counts of the whole writer process (gRPC receive, decode, render, write):
//!
//! ```text
//! EVE_BENCH_WRITER_WRAP="valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p" \
//!   target/release/deps/eve_writer-<hash> --full-path-only --events 100000
//! ```
//!
//! The bench starts a writer process of its own (this binary re-executed in writer
//! mode: `meerkat_eve_writer::run` on a config in a temporary directory) and acts as the
//! producers: it streams pre-built typed events (a realistic mix of flow, alert and
//! anomaly records) over the real gRPC `EventStream` on the Unix socket, with the same
//! window and flush flags as a detect worker, as fast as the writer acknowledges.
//! Measured for the writer process only:
//!
//! - events/s: events over the wall time from the first batch sent to the last ack;
//! - write(2) calls per 1000 events (the writer's `eve.write_calls` counter; the
//!   `tests/eve_strace.rs` test shows it equals `strace -c`'s count);
//! - CPU seconds of the writer process (utime + stime from /proc), and events per
//!   CPU-second.
//!
//! The 16 KiB ratio is printed next to its arithmetic maximum for the bench's line size
//! (16384 / bytes per line: a write carries at most one full buffer of whole lines) and
//! the efficiency (measured / maximum): with ~618-byte lines no writer can reach 30x.
//!
//! Rows: unbuffered; 16 KiB buffer; 16 KiB + 2 s flush; each with `threaded` off and on
//! (two producers, worker 0 and 1, either way); then the full path with a 64 KiB buffer
//! with the writer pinned to one core (`sched_setaffinity`, all its threads), the target
//! being 500,000 events/s; then the latency of an event written in a quiet period with
//! a 2 s flush interval (target: on disk within 2.2 s). Each row is the median of
//! `REPS` runs. Finally an in-process profile of the writer's own share: protobuf
//! decode, render, and render + buffered write, in ns per event.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use meerkat_proto::events::event_stream_client::EventStreamClient;
use meerkat_proto::events::{
    Alert, AlertAction, Anomaly, Direction, Event, EventBatch, EventType, FlowCounters, FlowRecord,
    MetadataEntry, PacketSource, TcpSummary,
};
use meerkat_runtime::counters::EveCounter;
use prost::Message;
use tonic::transport::{Endpoint, Uri};

const META: meerkat_eve_writer::output::Meta<'static> = meerkat_eve_writer::output::Meta {
    event_type: "flow",
    producer: "bench",
    epoch: 1,
    seq: 1,
    index: 0,
};
const WRITER_ENV: &str = "EVE_BENCH_WRITER_CONFIG";
const PIN_ENV: &str = "EVE_BENCH_PIN_CPU";
const WRAP_ENV: &str = "EVE_BENCH_WRITER_WRAP";
const BATCH: usize = 256;
const WINDOW: usize = 64;

fn main() {
    if let Some(cfg) = std::env::var_os(WRITER_ENV) {
        writer_mode(Path::new(&cfg));
        return;
    }
    let quick = std::env::args().any(|a| a == "--quick");
    if std::env::args().any(|a| a == "--profile-only") {
        // Stable instruction counts: `valgrind --tool=callgrind <bench> --profile-only`.
        profile(20_000);
        return;
    }
    if std::env::args().any(|a| a == "--bus-only") {
        let args: Vec<String> = std::env::args().collect();
        let get = |flag: &str, d: usize| {
            args.iter()
                .position(|a| a == flag)
                .and_then(|i| args.get(i + 1))
                .map_or(d, |n| n.parse::<usize>().unwrap())
        };
        bus_bench(get("--events", 200_000), get("--runs", 3));
        return;
    }
    if std::env::args().any(|a| a == "--full-path-only") {
        // For profiling the writer: `perf record -g -- <bench> --full-path-only`, then
        // `perf report --comm eve-writer,eve-grpc`.
        let args: Vec<String> = std::env::args().collect();
        let events = args
            .iter()
            .position(|a| a == "--events")
            .and_then(|i| args.get(i + 1))
            .map_or(1_000_000, |n| n.parse::<usize>().unwrap());
        run_writer_bench(65536, 0, false, events, Some(1)).print("64 KiB, one core (full path)");
        return;
    }
    let reps = if quick { 1 } else { 3 };
    let scale = if quick { 1 } else { 4 };
    println!("eve-writer benchmark ({reps} repetition(s) per row; medians)\n");
    profile(if quick { 50_000 } else { 400_000 });
    println!();
    println!(
        "{:<34} {:>10} {:>12} {:>13} {:>9} {:>13} {:>8}",
        "configuration", "events", "events/s", "writes/1000ev", "cpu s", "events/cpu-s", "B/line"
    );
    let rows: &[(&str, usize, u32, bool, usize)] = &[
        // (name, buffer-size, flush interval s, threaded, events)
        ("unbuffered, threaded off", 0, 0, false, 100_000),
        ("unbuffered, threaded on", 0, 0, true, 100_000),
        ("16 KiB, threaded off", 16384, 0, false, 250_000),
        ("16 KiB, threaded on", 16384, 0, true, 250_000),
        ("16 KiB + 2 s flush, threaded off", 16384, 2, false, 250_000),
        ("16 KiB + 2 s flush, threaded on", 16384, 2, true, 250_000),
    ];
    let mut unbuffered_writes = 0.0;
    for &(name, buffer, flush, threaded, events) in rows {
        let r = median_of(reps, || {
            run_writer_bench(buffer, flush, threaded, events * scale, None)
        });
        if buffer == 0 && !threaded {
            unbuffered_writes = r.writes_per_1000;
        }
        r.print(name);
    }
    let full = median_of(reps, || {
        run_writer_bench(65536, 0, false, 500_000 * scale, Some(1))
    });
    full.print("64 KiB, one core (full path)");
    println!();
    let sixteen = median_of(reps, || {
        run_writer_bench(16384, 0, false, 250_000 * scale, None)
    });
    // A full buffer holds 16384 / (bytes per line) lines, and no line is split across
    // two writes: that is the most events one write can carry, so the arithmetic
    // maximum of the ratio (unbuffered makes one write per event).
    let ratio = unbuffered_writes / sixteen.writes_per_1000;
    let max_ratio = 16384.0 / sixteen.bytes_per_line;
    println!(
        "16 KiB buffer: {ratio:.1}x fewer writes than unbuffered (target >= 30x); with \
         {:.0}-byte lines at most {max_ratio:.1}x is possible (16384 / line size), \
         efficiency {:.1}%",
        sixteen.bytes_per_line,
        100.0 * ratio / max_ratio
    );
    println!(
        "full path, 64 KiB buffer, writer on one core: {:.0} events/s, {:.0} events per CPU-second \
         (target >= 500,000)",
        full.events_per_s, full.events_per_cpu_s
    );
    latency(if quick { 3 } else { 7 });
}

#[derive(Debug, Clone, Copy, Default)]
struct Row {
    events: f64,
    events_per_s: f64,
    writes_per_1000: f64,
    cpu_s: f64,
    events_per_cpu_s: f64,
    bytes_per_line: f64,
}

impl Row {
    fn print(&self, name: &str) {
        println!(
            "{:<34} {:>10.0} {:>12.0} {:>13.2} {:>9.3} {:>13.0} {:>8.0}",
            name,
            self.events,
            self.events_per_s,
            self.writes_per_1000,
            self.cpu_s,
            self.events_per_cpu_s,
            self.bytes_per_line
        );
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn median_of(reps: usize, mut f: impl FnMut() -> Row) -> Row {
    let rows: Vec<Row> = (0..reps).map(|_| f()).collect();
    let m = |g: fn(&Row) -> f64| median(rows.iter().map(g).collect());
    Row {
        events: m(|r| r.events),
        events_per_s: m(|r| r.events_per_s),
        writes_per_1000: m(|r| r.writes_per_1000),
        cpu_s: m(|r| r.cpu_s),
        events_per_cpu_s: m(|r| r.events_per_cpu_s),
        bytes_per_line: m(|r| r.bytes_per_line),
    }
}

/// Writer mode: run the eve-writer on `cfg` until stdin closes.
fn writer_mode(cfg: &Path) {
    if let Some(cpu) = std::env::var(PIN_ENV)
        .ok()
        .and_then(|c| c.parse::<usize>().ok())
    {
        pin_to(cpu);
    }
    static STOP: AtomicBool = AtomicBool::new(false);
    static HUP: AtomicBool = AtomicBool::new(false);
    std::thread::spawn(|| {
        let mut sink = [0u8; 64];
        while matches!(std::io::stdin().read(&mut sink), Ok(n) if n > 0) {}
        STOP.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let config = meerkat_config::resolve(Some(cfg), &[]).unwrap().config;
    meerkat_eve_writer::run(&config, &STOP, &HUP).unwrap();
}

/// Lets this process run on every CPU again.
fn unpin() {
    // SAFETY: as in `pin_to`.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for cpu in 0..std::thread::available_parallelism().map_or(1, |n| n.get()) {
            libc::CPU_SET(cpu, &mut set);
        }
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// Pins this process (and the threads it starts later) to one CPU.
fn pin_to(cpu: usize) {
    // SAFETY: cpu_set_t is plain data; the call only reads the set.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

struct WriterProc {
    child: Child,
    dir: tempfile::TempDir,
}

impl WriterProc {
    fn start(buffer: usize, flush: u32, threaded: bool, pin: Option<usize>) -> WriterProc {
        WriterProc::start_with(buffer, flush, threaded, pin, "")
    }

    /// `output`: YAML lines added to the eve-log output (a bus output's filetype and
    /// section), indented by six spaces.
    fn start_with(
        buffer: usize,
        flush: u32,
        threaded: bool,
        pin: Option<usize>,
        output: &str,
    ) -> WriterProc {
        let dir = tempfile::tempdir().unwrap();
        let cfg = dir.path().join("bench.yaml");
        std::fs::write(
            &cfg,
            format!(
                "default-log-dir: {d}\nruntime-dir: {d}\nheartbeat:\n  output-flush-interval: {flush}\n\
                 stats:\n  enabled: no\noutputs:\n  - eve-log:\n      buffer-size: {buffer}\n      threaded: {threaded}\n{output}      types: [alert, flow, anomaly]\n",
                d = dir.path().display()
            ),
        )
        .unwrap();
        let exe = std::env::current_exe().unwrap();
        let wrap = std::env::var(WRAP_ENV).unwrap_or_default();
        let mut words = wrap.split_whitespace();
        let mut cmd = match words.next() {
            Some(w) => {
                let mut c = Command::new(w);
                c.args(words).arg(exe);
                c
            }
            None => Command::new(exe),
        };
        cmd.env(WRITER_ENV, &cfg)
            .stdin(Stdio::piped())
            .stdout(Stdio::null());
        if let Some(cpu) = pin {
            cmd.env(PIN_ENV, cpu.to_string());
        }
        let child = cmd.spawn().unwrap();
        let sock = meerkat_runtime::eve_socket_path(dir.path());
        let deadline = Instant::now() + Duration::from_secs(if wrap.is_empty() { 30 } else { 300 });
        while std::os::unix::net::UnixStream::connect(&sock).is_err() {
            assert!(Instant::now() < deadline, "bench writer did not start");
            std::thread::sleep(Duration::from_millis(5));
        }
        WriterProc { child, dir }
    }

    fn counter(&self, name: &str) -> u64 {
        meerkat_shm::CounterReader::open(&meerkat_runtime::counters_path(
            self.dir.path(),
            meerkat_runtime::Role::EveWriter,
        ))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
    }

    /// utime + stime of the writer process, seconds.
    fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap();
        let after = &stat[stat.rfind(')').unwrap() + 2..];
        let f: Vec<&str> = after.split_whitespace().collect();
        // Fields 14 and 15 of stat(5): index 11 and 12 after the state field.
        let ticks: f64 = f[11].parse::<f64>().unwrap() + f[12].parse::<f64>().unwrap();
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
        ticks / hz
    }

    fn eve_bytes(&self) -> u64 {
        std::fs::read_dir(self.dir.path())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| e.file_name().to_string_lossy().ends_with(".json"))
            .map(|e| e.metadata().unwrap().len())
            .sum()
    }

    /// Stops the writer; the returned directory keeps its files until dropped.
    fn stop(mut self) -> tempfile::TempDir {
        drop(self.child.stdin.take());
        let _ = self.child.wait();
        self.dir
    }
}

fn run_writer_bench(
    buffer: usize,
    flush: u32,
    threaded: bool,
    events: usize,
    pin: Option<usize>,
) -> Row {
    run_output_bench(buffer, flush, threaded, events, pin, "").0
}

/// One run against a writer whose output has `output` added (see
/// [`WriterProc::start_with`]); also returns the writer (stopped) for its counters.
fn run_output_bench(
    buffer: usize,
    flush: u32,
    threaded: bool,
    events: usize,
    pin: Option<usize>,
    output: &str,
) -> (Row, tempfile::TempDir) {
    let w = WriterProc::start_with(buffer, flush, threaded, pin, output);
    let sock = meerkat_runtime::eve_socket_path(w.dir.path());
    let pool = event_pool();
    let producers = 2usize;
    let per = events / producers / BATCH;
    // Every batch is built before the clock starts, so that the producers only encode
    // and send; with the writer pinned, the producers stay off its core.
    let batches: Vec<Vec<EventBatch>> = (0..producers)
        .map(|p| {
            (1..=per as u64)
                .map(|seq| make_batch(&pool, p as u32, seq, per as u64))
                .collect()
        })
        .collect();
    if pin.is_some() {
        pin_to(0);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let cpu0 = w.cpu_seconds();
    let writes0 = w.counter(EveCounter::WriteCalls.name());
    let started = Instant::now();
    rt.block_on(async {
        let mut tasks = Vec::new();
        for b in batches {
            tasks.push(tokio::spawn(produce(sock.clone(), b)));
        }
        for t in tasks {
            t.await.unwrap();
        }
    });
    let wall = started.elapsed().as_secs_f64();
    if pin.is_some() {
        unpin();
    }
    let sent = (per * producers * BATCH) as f64;
    let cpu = w.cpu_seconds() - cpu0;
    let bytes = w.eve_bytes() as f64;
    let dir = w.dir.path().to_path_buf();
    let keep = w.stop();
    // The page outlives the process: read it once the writer has stopped (everything
    // was already written and acknowledged, so stopping writes nothing more).
    let writes = (meerkat_shm::CounterReader::open(&meerkat_runtime::counters_path(
        &dir,
        meerkat_runtime::Role::EveWriter,
    ))
    .ok()
    .and_then(|r| r.get(EveCounter::WriteCalls.name()))
    .unwrap_or(0)
        - writes0) as f64;
    (
        Row {
            events: sent,
            events_per_s: sent / wall,
            writes_per_1000: writes * 1000.0 / sent,
            cpu_s: cpu,
            events_per_cpu_s: sent / cpu.max(1e-9),
            bytes_per_line: bytes / sent,
        },
        keep,
    )
}

async fn connect(sock: PathBuf) -> EventStreamClient<tonic::transport::Channel> {
    let ch = Endpoint::from_static("http://eve-writer.local")
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let sock = sock.clone();
            async move {
                Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(sock).await?))
            }
        }))
        .await
        .unwrap();
    EventStreamClient::new(ch)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20)
}

fn make_batch(pool: &[Event], worker: u32, seq: u64, last: u64) -> EventBatch {
    let start = (seq as usize * BATCH + worker as usize * 977) % pool.len();
    EventBatch {
        producer: format!("bench-{worker}"),
        epoch: 1,
        seq,
        worker,
        events: (0..BATCH)
            .map(|i| pool[(start + i) % pool.len()].clone())
            .collect(),
        flush: seq == last,
        ring_mark: 0,
    }
}

/// One producer: sends its batches with a window of WINDOW unacknowledged ones, asking
/// for a flush when half the window is out (as the detect worker's sink does) and with
/// the last one.
async fn produce(sock: PathBuf, batches: Vec<EventBatch>) {
    let mut client = connect(sock).await;
    let (tx, rx) = tokio::sync::mpsc::channel::<EventBatch>(WINDOW + 1);
    let mut acks = client
        .publish(tokio_stream::wrappers::ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let last = batches.len() as u64;
    let mut acked = 0u64;
    let mut it = batches.into_iter();
    let mut next = 1u64;
    while acked < last {
        while next <= last && (next - acked) as usize <= WINDOW {
            let Some(mut b) = it.next() else { break };
            b.flush |= (next - acked) as usize >= WINDOW / 2;
            tx.send(b).await.unwrap();
            next += 1;
        }
        let a = acks.message().await.unwrap().unwrap();
        acked = acked.max(a.seq);
    }
}

/// A few thousand distinct events: 70% flows, 25% alerts (with ET-style metadata),
/// 5% anomalies; addresses, ports, counters and times vary.
fn event_pool() -> Vec<Event> {
    (0..4096u32).map(synthetic_event).collect()
}

fn synthetic_event(i: u32) -> Event {
    let ts = 1_700_000_000_000_000i64 + i64::from(i) * 1234;
    let src = vec![10, (i >> 16) as u8, (i >> 8) as u8, i as u8];
    let dst = vec![192, 168, (i >> 4) as u8, (i * 7) as u8];
    let sport = 1024 + (i * 13) % 60000;
    let dport = [80u32, 443, 53, 22, 8080][(i % 5) as usize];
    let proto = if dport == 53 { 17 } else { 6 };
    let counters = FlowCounters {
        pkts_toserver: u64::from(3 + i % 40),
        pkts_toclient: u64::from(2 + i % 70),
        bytes_toserver: u64::from(200 + i * 3 % 90_000),
        bytes_toclient: u64::from(120 + i * 11 % 900_000),
        start_us: ts - 20_000_000,
        src_ip: src.clone(),
        src_port: sport,
        dest_ip: dst.clone(),
        dest_port: dport,
    };
    let mut ev = Event {
        timestamp_us: ts,
        flow_id: 0x0001_0000_0000_0000 + u64::from(i) * 7919,
        pcap_cnt: u64::from(i) * 3 + 1,
        src_ip: src,
        src_port: sport,
        dest_ip: dst,
        dest_port: dport,
        ip_proto: proto,
        pkt_src: PacketSource::Wire as i32,
        ..Default::default()
    };
    match i % 20 {
        0..=13 => {
            ev.event_type = EventType::Flow as i32;
            ev.app_proto = ["http", "tls", "dns", "failed"][(i % 4) as usize].to_string();
            ev.flow = Some(FlowRecord {
                counters: Some(counters),
                end_us: ts,
                age_s: 20,
                state: "closed".to_string(),
                reason: "timeout".to_string(),
                alerted: i.is_multiple_of(9),
                tcp: (proto == 6).then(|| TcpSummary {
                    tcp_flags: 0x1b,
                    tcp_flags_ts: 0x1b,
                    tcp_flags_tc: 0x1b,
                    state: "closed".to_string(),
                    ts_max_regions: 1,
                    tc_max_regions: 1,
                    ..Default::default()
                }),
                ..Default::default()
            });
        }
        14..=18 => {
            ev.event_type = EventType::Alert as i32;
            ev.direction = Direction::ToServer as i32;
            ev.app_proto = "http".to_string();
            ev.alert = Some(Alert {
                action: AlertAction::Allowed as i32,
                gid: 1,
                signature_id: 2_010_000 + u64::from(i % 500),
                rev: 3,
                signature: "ET POLICY Suspicious User-Agent (Example Scanner)".to_string(),
                category: "Potential Corporate Privacy Violation".to_string(),
                severity: 2,
                metadata: vec![
                    MetadataEntry {
                        key: "created_at".to_string(),
                        values: vec!["2010_07_30".to_string()],
                    },
                    MetadataEntry {
                        key: "updated_at".to_string(),
                        values: vec!["2019_09_28".to_string()],
                    },
                ],
                flow: Some(counters),
                ..Default::default()
            });
        }
        _ => {
            ev.event_type = EventType::Anomaly as i32;
            ev.anomaly = Some(Anomaly {
                r#type: "decode".to_string(),
                event: "decoder.ipv4.trunc_pkt".to_string(),
                ..Default::default()
            });
        }
    }
    ev
}

/// An event written in a quiet period with a 2 s flush interval: how long until it is
/// in the file.
fn latency(samples: usize) {
    let w = WriterProc::start(16384, 2, false, None);
    let sock = meerkat_runtime::eve_socket_path(w.dir.path());
    let eve = w.dir.path().join("eve.json");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut delays = Vec::new();
    rt.block_on(async {
        let mut client = connect(sock).await;
        let (tx, rx) = tokio::sync::mpsc::channel::<EventBatch>(4);
        let _acks = client
            .publish(tokio_stream::wrappers::ReceiverStream::new(rx))
            .await
            .unwrap();
        for s in 0..samples {
            // Land at different phases of the flush timer.
            tokio::time::sleep(Duration::from_millis(300 + 450 * (s as u64 % 4))).await;
            let before = std::fs::metadata(&eve).map(|m| m.len()).unwrap_or(0);
            let sent = Instant::now();
            tx.send(EventBatch {
                producer: "quiet".to_string(),
                epoch: 1,
                seq: s as u64 + 1,
                worker: 0,
                events: vec![synthetic_event(s as u32)],
                flush: false,
                ring_mark: 0,
            })
            .await
            .unwrap();
            loop {
                if std::fs::metadata(&eve).map(|m| m.len()).unwrap_or(0) > before {
                    break;
                }
                assert!(
                    sent.elapsed() < Duration::from_secs(10),
                    "event never reached the file"
                );
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            delays.push(sent.elapsed().as_secs_f64());
        }
    });
    drop(w.stop());
    let max = delays.iter().cloned().fold(0.0, f64::max);
    println!(
        "quiet-period latency with 16 KiB + 2 s flush: median {:.3} s, max {:.3} s over {} events \
         (target <= 2.200 s)",
        median(delays.clone()),
        max,
        delays.len()
    );
}

/// The writer's own share per event, in process: protobuf decode of a batch, render,
/// and render + buffered write (64 KiB) to a file.
fn profile(events: usize) {
    let pool = event_pool();
    let batch = EventBatch {
        producer: "p".to_string(),
        epoch: 1,
        seq: 1,
        worker: 0,
        events: pool[..BATCH].to_vec(),
        flush: false,
        ring_mark: 0,
    };
    let bytes = prost::bytes::Bytes::from(batch.encode_to_vec());
    let rounds = events / BATCH;
    // Decoded as the writer does: the framing on the gRPC thread (sized from the
    // previous batch), then each event into one reused event on the writer thread.
    let mut ev = Event::default();
    let mut decode = || {
        let raw = meerkat_eve_writer::batch::RawBatch::parse(bytes.clone(), BATCH).unwrap();
        for enc in raw.events() {
            meerkat_eve_writer::batch::decode_event(&mut ev, enc).unwrap();
        }
        raw.len()
    };
    for _ in 0..rounds.min(64) {
        decode();
    }
    let t = Instant::now();
    let mut n = 0;
    for _ in 0..rounds {
        n += decode();
    }
    let decode = t.elapsed().as_nanos() as f64 / n as f64;

    let opts = meerkat_eve_writer::render::RenderOptions {
        alert_metadata: true,
        ..Default::default()
    };
    let mut line = Vec::with_capacity(4096);
    let t = Instant::now();
    let mut total = 0usize;
    for i in 0..events {
        line.clear();
        meerkat_eve_writer::render::render(&mut line, &pool[i % pool.len()], &opts);
        total += line.len();
    }
    let render = t.elapsed().as_nanos() as f64 / events as f64;

    let dir = tempfile::tempdir().unwrap();
    let eve = meerkat_config::EveLog {
        buffer_size: meerkat_config::ByteSize(65536),
        ..Default::default()
    };
    let spec = meerkat_eve_writer::output::TargetSpec::from_config(&eve, dir.path());
    let mut target = spec.make(None);
    target.start(Instant::now()).unwrap();
    let t = Instant::now();
    for i in 0..events {
        line.clear();
        meerkat_eve_writer::render::render(&mut line, &pool[i % pool.len()], &opts);
        target.accept(&line, &META, t);
    }
    target.flush(Instant::now(), true);
    let write = t.elapsed().as_nanos() as f64 / events as f64;
    println!(
        "in-process profile ({events} events, {:.0} bytes/line): protobuf decode {decode:.0} ns/event, \
         render {render:.0} ns/event, render + 64 KiB buffered file write {write:.0} ns/event",
        total as f64 / events as f64
    );
}

/// A server process of the bus bench (redis-server or nats-server), killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn find(program: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .into_iter()
        .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .chain(["/usr/sbin".into()])
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn wait_port(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "server on port {port} did not start"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn redis_server(dir: &Path) -> Option<(Server, u16)> {
    let bin = find("redis-server")?;
    let port = free_port();
    let child = Command::new(bin)
        .args([
            "--port",
            &port.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
        ])
        .arg(dir)
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    wait_port(port);
    Some((Server(child), port))
}

fn nats_server(dir: &Path, port: u16) -> Option<Server> {
    let bin = find("nats-server")?;
    let child = Command::new(bin)
        .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
        .arg(dir.join("js"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_port(port);
    Some(Server(child))
}

/// Events per writer CPU-second to a file, to Redis Streams and to NATS JetStream (64 KiB
/// buffer, interleaved runs, medians), then the spool: writing it (NATS down: every event
/// goes to the spool) and replaying it (NATS started, the spool sent).
fn bus_bench(events: usize, runs: usize) {
    let dir = tempfile::tempdir().unwrap();
    let Some((_redis, rport)) = redis_server(dir.path()) else {
        println!("skipped: redis-server is not installed");
        return;
    };
    let nport = free_port();
    let Some(nats) = nats_server(dir.path(), nport) else {
        println!("skipped: nats-server is not installed");
        return;
    };
    let redis_out = format!(
        "      filetype: redis\n      redis:\n        server: 127.0.0.1\n        port: {rport}\n        mode: stream\n        key: bench\n        stream-maxlen: 100000\n"
    );
    let nats_out = format!(
        "      filetype: nats\n      nats:\n        servers: nats://127.0.0.1:{nport}\n        stream: BENCH\n"
    );
    let mut rows: Vec<(&str, Vec<Row>)> = vec![
        ("file", vec![]),
        ("redis stream", vec![]),
        ("nats jetstream", vec![]),
    ];
    for r in 0..runs {
        for (i, out) in ["", redis_out.as_str(), nats_out.as_str()]
            .iter()
            .enumerate()
        {
            let (row, _) = run_output_bench(65536, 0, false, events, None, out);
            println!(
                "run {r} {:<16} {:>10.0} events/cpu-s {:>10.0} events/s",
                rows[i].0, row.events_per_cpu_s, row.events_per_s
            );
            rows[i].1.push(row);
        }
    }
    drop(nats);
    println!(
        "\n{:<18} {:>14} {:>12} {:>10}",
        "output", "events/cpu-s", "events/s", "vs file"
    );
    let file = median(rows[0].1.iter().map(|r| r.events_per_cpu_s).collect());
    for (name, rs) in &rows {
        let cpu = median(rs.iter().map(|r| r.events_per_cpu_s).collect());
        let wall = median(rs.iter().map(|r| r.events_per_s).collect());
        println!(
            "{name:<18} {cpu:>14.0} {wall:>12.0} {:>9.0}%",
            100.0 * cpu / file
        );
    }
    // Spool write: NATS down, everything spooled; replay: NATS up, the spool drains.
    let mut write_rates = Vec::new();
    let mut replay_rates = Vec::new();
    for _ in 0..runs {
        let port = free_port();
        let out = format!(
            "      filetype: nats\n      nats:\n        servers: nats://127.0.0.1:{port}\n        stream: SPOOL\n      spool:\n        fsync: interval\n"
        );
        let w = WriterProc::start_with(65536, 0, false, None, &out);
        let sock = w.dir.path().join("eve.sock");
        let pool = event_pool();
        let per = events / 2 / BATCH;
        let batches: Vec<Vec<EventBatch>> = (0..2)
            .map(|p| {
                (1..=per as u64)
                    .map(|seq| make_batch(&pool, p as u32, seq, per as u64))
                    .collect()
            })
            .collect();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let cpu0 = w.cpu_seconds();
        rt.block_on(async {
            let mut tasks = Vec::new();
            for b in batches {
                tasks.push(tokio::spawn(produce(sock.clone(), b)));
            }
            for t in tasks {
                t.await.unwrap();
            }
        });
        let sent = (per * 2 * BATCH) as f64;
        let cpu = w.cpu_seconds() - cpu0;
        write_rates.push(sent / cpu.max(1e-9));
        let spooled = w.counter("eve.output.0.spooled") as f64;
        let cpu1 = w.cpu_seconds();
        let t = Instant::now();
        let _server = nats_server(w.dir.path(), port).unwrap();
        let deadline = Instant::now() + Duration::from_secs(300);
        while w.counter("eve.output.0.replayed") < spooled as u64 {
            assert!(Instant::now() < deadline, "the spool did not drain");
            std::thread::sleep(Duration::from_millis(10));
        }
        let wall = t.elapsed().as_secs_f64();
        let rcpu = w.cpu_seconds() - cpu1;
        replay_rates.push((spooled / rcpu.max(1e-9), spooled / wall));
        drop(w.stop());
    }
    println!(
        "spool write (NATS down, fsync interval): {:.0} events/cpu-s; spool replay to NATS: {:.0} events/cpu-s, {:.0} events/s",
        median(write_rates),
        median(replay_rates.iter().map(|r| r.0).collect()),
        median(replay_rates.iter().map(|r| r.1).collect())
    );
}
