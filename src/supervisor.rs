//! `meerkat run`: the supervisor. It resolves the configuration, checks the inputs,
//! prepares the runtime directory (rings, counter pages, sockets), starts the roles as
//! separate processes in dependency order (eve-writer, detect workers, capture), waits
//! for the end of the input, drains, and prints a summary.

use std::collections::VecDeque;
use std::io::IsTerminal;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use meerkat_config::Config;
use meerkat_runtime::counters::{
    CaptureCounter, CaptureLiveCounter, DetectCounter, DetectCounters, EveCounter,
};
use meerkat_runtime::{Role as RoleName, counters_path, layout, ring_path};
use meerkat_scanner::RollBack;
use meerkat_shm::CounterReader;

use tokio::sync::oneshot;

use crate::cli::RunArgs;
use crate::control::{self, Request, RoleInfo, Shared, SharedRef, lock};
use crate::logging::LogFormat;
use crate::{Failure, Outcome, signals};

/// How long a role may take to become ready (rule loading included).
const READY_TIMEOUT: Duration = Duration::from_secs(600);
/// How long roles get to exit after SIGTERM before SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(10);
const POLL: Duration = Duration::from_millis(20);

/// Log settings handed to the roles.
#[derive(Debug, Clone)]
pub struct LogArgs {
    pub verbose: u8,
    pub quiet: bool,
    pub format: LogFormat,
}

impl LogArgs {
    fn args(&self) -> Vec<String> {
        let mut v = Vec::new();
        if self.verbose > 0 {
            v.push(format!("-{}", "v".repeat(usize::from(self.verbose))));
        }
        if self.quiet {
            v.push("--quiet".to_string());
        }
        if self.format == LogFormat::Json {
            v.push("--log-format=json".to_string());
        }
        v
    }
}

/// The embedded sample, written out before a no-argument run.
const SAMPLE_PCAP: &[u8] = include_bytes!("../sample/sample.pcap");
const SAMPLE_RULES: &str = include_str!("../sample/sample.rules");
/// Log directory of a no-argument run, relative to the working directory.
const SAMPLE_LOG_DIR: &str = "meerkat-logs";

/// `meerkat` with no arguments: `run` on the embedded sample into ./meerkat-logs.
pub fn run_sample(log: &LogArgs) -> Outcome {
    let dir = PathBuf::from(SAMPLE_LOG_DIR);
    let prepare = || -> anyhow::Result<(PathBuf, PathBuf)> {
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create log directory {}", dir.display()))?;
        let pcap = dir.join("sample.pcap");
        let rules = dir.join("sample.rules");
        std::fs::write(&pcap, SAMPLE_PCAP)
            .with_context(|| format!("writing {}", pcap.display()))?;
        std::fs::write(&rules, SAMPLE_RULES)
            .with_context(|| format!("writing {}", rules.display()))?;
        // Each sample run starts a fresh eve.json (a normal run appends, as Suricata does).
        let _ = std::fs::remove_file(dir.join("eve.json"));
        Ok((pcap, rules))
    };
    let (pcap, rules) = prepare().map_err(Failure::runtime)?;
    tracing::info!(
        "no arguments: inspecting the embedded sample {} with {}",
        pcap.display(),
        rules.display()
    );
    let args = RunArgs {
        pcap: vec![pcap],
        exclusive_rules: vec![rules],
        log_dir: Some(dir),
        ..Default::default()
    };
    run(&args, log)
}

/// Turns the command line into config overrides (applied after `--set`... no: before, so
/// that an explicit `--set` wins, as with Suricata where -l and --set compose).
fn overrides(args: &RunArgs) -> Result<Vec<String>, Failure> {
    let mut o = Vec::new();
    if let Some(l) = &args.log_dir {
        o.push(format!("default-log-dir={}", l.display()));
    }
    if let Some(k) = &args.checksum {
        match k.as_str() {
            "none" => {
                o.push("stream.checksum-validation=no".to_string());
                o.push("pcap-file.checksum-checks=no".to_string());
            }
            "all" => {
                o.push("stream.checksum-validation=yes".to_string());
                o.push("pcap-file.checksum-checks=yes".to_string());
            }
            _ => {}
        }
    }
    if args.pcap_file_continuous {
        o.push("pcap-file.continuous=yes".to_string());
    }
    if args.pcap_file_recursive {
        o.push("pcap-file.recursive=yes".to_string());
    }
    if args.pcap_file_delete {
        o.push("pcap-file.delete-when-done=yes".to_string());
    }
    if let Some(n) = args.workers {
        if n == 0 {
            return Err(Failure::usage(anyhow!("--workers must be at least 1")));
        }
        o.push(format!("detect.workers={n}"));
    }
    o.extend(args.set.iter().cloned());
    Ok(o)
}

fn check_readable(path: &Path, what: &str) -> anyhow::Result<()> {
    std::fs::File::open(path)
        .map(|_| ())
        .with_context(|| format!("cannot read {what} {}", path.display()))
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Resolves config and checks everything the roles will need, before starting any.
fn prepare(args: &RunArgs) -> Result<(Config, Vec<PathBuf>), Failure> {
    if args.runmode.is_some() {
        tracing::debug!("--runmode is accepted for Suricata compatibility and ignored");
    }
    if args.simulate_ips {
        tracing::warn!("--simulate-ips is not available; running as an IDS");
    }
    let resolved = meerkat_app::config::resolve(args.config.as_deref(), &overrides(args)?)
        .map_err(Failure::usage)?;
    if !resolved.ignored_suricata_keys.is_empty() {
        tracing::warn!(
            "Suricata keys not modelled by Meerkat (ignored): {}",
            resolved.ignored_suricata_keys.join(", ")
        );
    }
    let mut config = resolved.config;
    if !args.exclusive_rules.is_empty() {
        config.rule_files = args
            .exclusive_rules
            .iter()
            .map(|p| absolute(p).display().to_string())
            .collect();
    }
    config.rule_files.extend(
        args.extra_rules
            .iter()
            .map(|p| absolute(p).display().to_string()),
    );
    let live = args.interface.is_some() || args.dpdk;
    if args.pcap.is_empty() && !live && !config.supervisor.keep_running {
        return Err(Failure::usage(anyhow!(
            "no input: give a capture file or directory with -r, an interface with -i, or --dpdk, \
             or keep the stack running for `meerkat ctl add-pcap` (--set supervisor.keep-running=yes)"
        )));
    }
    if args.dpdk && !cfg!(feature = "dpdk") {
        return Err(Failure::usage(anyhow!(
            "--dpdk: this meerkat was built without DPDK support (build with `--features dpdk`)"
        )));
    }
    if let Some(iface) = &args.interface
        && nix::net::if_::if_nametoindex(iface.as_str()).is_err()
    {
        return Err(Failure::usage(anyhow!("interface {iface} does not exist")));
    }
    let inputs: Vec<PathBuf> = args.pcap.iter().map(|p| absolute(p)).collect();
    for p in &inputs {
        // A pattern (`/data/**/*.pcap`) needs its literal leading directory.
        if let Some(text) = p.to_str()
            && !p.exists()
            && meerkat_scanner::glob::is_pattern(text)
        {
            let g = meerkat_scanner::glob::Glob::new(text)
                .with_context(|| format!("bad pcap pattern {text}"))
                .map_err(Failure::usage)?;
            std::fs::metadata(g.base())
                .with_context(|| format!("cannot read the directory of pattern {text}"))
                .map_err(Failure::usage)?;
            continue;
        }
        std::fs::metadata(p)
            .with_context(|| format!("cannot read pcap {}", p.display()))
            .map_err(Failure::usage)?;
        if !p.is_dir() {
            check_readable(p, "pcap").map_err(Failure::usage)?;
        }
    }
    if let Some(r) = &config.scanner.registry {
        config.scanner.registry = Some(absolute(r));
    }
    config.rule_files = config
        .rule_paths()
        .iter()
        .map(|p| absolute(p).display().to_string())
        .collect();
    for r in config.rule_paths() {
        check_readable(&r, "rule file").map_err(Failure::usage)?;
    }
    let log_dir = absolute(&config.default_log_dir);
    std::fs::create_dir_all(&log_dir)
        .with_context(|| format!("cannot create log directory {}", log_dir.display()))
        .map_err(Failure::usage)?;
    let probe = log_dir.join(format!(".meerkat-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"")
        .with_context(|| format!("log directory {} is not writable", log_dir.display()))
        .map_err(Failure::usage)?;
    let _ = std::fs::remove_file(&probe);
    config.default_log_dir = log_dir;
    if let Some(c) = &config.classification_file {
        check_readable(c, "classification file").map_err(Failure::usage)?;
    }
    Ok((config, inputs))
}

/// A private runtime directory, removed when dropped.
struct RuntimeDir {
    path: PathBuf,
    owned: bool,
}

impl RuntimeDir {
    fn create(config: &Config) -> anyhow::Result<RuntimeDir> {
        if let Some(p) = &config.runtime_dir {
            std::fs::create_dir_all(p)
                .with_context(|| format!("cannot create runtime-dir {}", p.display()))?;
            return Ok(RuntimeDir {
                path: p.clone(),
                owned: false,
            });
        }
        let path = layout::private_dir(std::process::id());
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path)
            .with_context(|| format!("cannot create runtime directory {}", path.display()))?;
        Ok(RuntimeDir { path, owned: true })
    }
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Resource use of a finished role (from wait4).
#[derive(Debug, Clone, Copy, Default)]
struct Usage {
    cpu_us: u64,
    max_rss_kb: u64,
}

/// One started role.
struct Role {
    pid: libc::pid_t,
    exited: Option<std::process::ExitStatus>,
    usage: Usage,
}

impl Role {
    /// Reaps the role if it has exited (with its resource use).
    fn poll(&mut self) -> Option<std::process::ExitStatus> {
        if self.exited.is_none() {
            self.reap(libc::WNOHANG);
        }
        self.exited
    }

    /// Blocks until the role exits.
    fn wait(&mut self) -> std::process::ExitStatus {
        while self.exited.is_none() {
            self.reap(0);
        }
        self.exited.unwrap_or_default()
    }

    fn reap(&mut self, flags: libc::c_int) {
        use std::os::unix::process::ExitStatusExt;
        let mut status = 0;
        // SAFETY: wait4 on our own child; status and rusage are owned out-parameters.
        let (r, ru) = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            let r = libc::wait4(self.pid, &mut status, flags, &mut ru);
            (r, ru)
        };
        if r == self.pid {
            let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
            self.usage = Usage {
                cpu_us: us(ru.ru_utime) + us(ru.ru_stime),
                max_rss_kb: ru.ru_maxrss as u64,
            };
            self.exited = Some(std::process::ExitStatus::from_raw(status));
        } else if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            // Reaped elsewhere: report a plain failure rather than waiting forever.
            self.exited = Some(std::process::ExitStatus::from_raw(1 << 8));
        }
    }

    fn signal(&self, sig: libc::c_int) {
        if self.exited.is_none() {
            // SAFETY: sending a signal to our own, not yet reaped, child process.
            unsafe {
                libc::kill(self.pid, sig);
            }
        }
    }
}

fn spawn(name: &str, args: &[String], log: &LogArgs) -> anyhow::Result<Role> {
    let exe = std::env::current_exe().context("cannot find the meerkat executable")?;
    let mut cmd = Command::new(exe);
    cmd.args(log.args()).args(args).stdin(Stdio::null());
    // SAFETY: prctl in the child before exec is async-signal-safe. If the supervisor dies,
    // the roles get SIGTERM and drain instead of running on unsupervised.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start the {name} role"))?;
    tracing::debug!(role = name, pid = child.id(), "started");
    Ok(Role {
        pid: libc::pid_t::try_from(child.id()).context("pid out of range")?,
        exited: None,
        usage: Usage::default(),
    })
}

/// What a role is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Writer,
    Detect(usize),
    Capture,
}

/// One role of the stack across its incarnations.
struct Slot {
    name: String,
    kind: Kind,
    /// The current incarnation (None between a death and its restart, or when done).
    proc: Option<Role>,
    started: Instant,
    ready: bool,
    /// Restarts after a death (not after `ctl restart-worker`).
    restarts: u32,
    /// Deaths within the restart window (for backoff and the crash-loop limit).
    deaths: VecDeque<Instant>,
    restart_at: Option<Instant>,
    last_exit: String,
    /// Ended as expected: not to be started again.
    finished: bool,
    /// `ctl restart-worker`: answered with the new pid once it is ready.
    restart_reply: Option<oneshot::Sender<Result<u32, String>>>,
    /// A restart was asked: the next exit is not a crash. SIGKILL after this instant.
    stopping_until: Option<Instant>,
    /// Resource use of the incarnations that ended.
    usage: Usage,
}

impl Slot {
    fn new(name: String, kind: Kind) -> Slot {
        Slot {
            name,
            kind,
            proc: None,
            started: Instant::now(),
            ready: false,
            restarts: 0,
            deaths: VecDeque::new(),
            restart_at: None,
            last_exit: String::new(),
            finished: false,
            restart_reply: None,
            stopping_until: None,
            usage: Usage::default(),
        }
    }

    fn running(&self) -> bool {
        self.proc.as_ref().is_some_and(|p| p.exited.is_none())
    }

    fn pid(&self) -> u32 {
        match &self.proc {
            Some(p) if p.exited.is_none() => p.pid as u32,
            _ => 0,
        }
    }

    fn signal(&self, sig: libc::c_int) {
        if let Some(p) = &self.proc {
            p.signal(sig);
        }
    }

    fn state(&self) -> &'static str {
        if self.finished {
            "exited"
        } else if self.running() {
            if self.stopping_until.is_some() {
                "restarting"
            } else if self.ready {
                "running"
            } else {
                "starting"
            }
        } else if self.restart_at.is_some() {
            "restarting"
        } else {
            "exited"
        }
    }
}

/// All roles of a run, stopped (SIGTERM, then SIGKILL) when dropped.
struct Stack {
    slots: Vec<Slot>,
}

impl Stack {
    fn stop_all(&mut self) {
        for s in &self.slots {
            s.signal(libc::SIGTERM);
        }
        let deadline = Instant::now() + KILL_GRACE;
        while self
            .slots
            .iter_mut()
            .any(|s| s.proc.as_mut().is_some_and(|p| p.poll().is_none()))
            && Instant::now() < deadline
        {
            std::thread::sleep(POLL);
        }
        for s in &mut self.slots {
            if let Some(p) = &mut s.proc
                && p.poll().is_none()
            {
                p.signal(libc::SIGKILL);
                p.wait();
            }
        }
    }

    fn slot(&mut self, kind: Kind) -> &mut Slot {
        let i = self.slots.iter().position(|s| s.kind == kind).unwrap_or(0);
        &mut self.slots[i]
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Everything the supervisor needs to (re)start a role.
struct Launcher<'a> {
    log: &'a LogArgs,
    config_path: PathBuf,
    runtime: PathBuf,
    /// Live capture arguments (`-i IFACE` or `--dpdk`), used for the input named
    /// [`LIVE_INPUT`].
    live: Vec<String>,
}

/// How a live source shows among the inputs (`Status`, `ListInterfaces`).
const LIVE_INPUT: &str = "live:";

impl Launcher<'_> {
    fn args(&self, role: &str) -> Vec<String> {
        vec![
            role.to_string(),
            "--config".to_string(),
            self.config_path.display().to_string(),
        ]
    }

    fn writer(&self) -> anyhow::Result<Role> {
        spawn(
            &RoleName::EveWriter.to_string(),
            &self.args("eve-writer"),
            self.log,
        )
    }

    fn detect(&self, w: usize, generation: u64) -> anyhow::Result<Role> {
        let mut a = self.args("detect");
        a.extend([
            "--worker".to_string(),
            w.to_string(),
            "--generation".to_string(),
            generation.to_string(),
        ]);
        spawn(&RoleName::Detect(w).to_string(), &a, self.log)
    }

    fn capture(&self, inputs: &[PathBuf], resume: bool) -> anyhow::Result<Role> {
        let mut a = self.args("capture");
        if inputs
            .iter()
            .any(|i| i.to_string_lossy().starts_with(LIVE_INPUT))
        {
            // Live capture runs until stopped; a restart captures on from now.
            a.extend(self.live.iter().cloned());
            return spawn(RoleName::CAPTURE, &a, self.log);
        }
        a.push("--keep-open".to_string());
        if resume {
            a.push("--resume".to_string());
        }
        for i in inputs {
            a.extend(["-r".to_string(), i.display().to_string()]);
        }
        spawn(RoleName::CAPTURE, &a, self.log)
    }

    /// Whether a role's incarnation is ready: the writer accepts connections, a worker
    /// is attached to its ring.
    fn is_ready(&self, kind: Kind, pid: libc::pid_t) -> bool {
        match kind {
            Kind::Writer => {
                std::os::unix::net::UnixStream::connect(layout::eve_socket_path(&self.runtime))
                    .is_ok()
            }
            Kind::Detect(w) => meerkat_shm::status(&ring_path(&self.runtime, w))
                .is_ok_and(|s| s.consumer_pid == pid as u32),
            Kind::Capture => true,
        }
    }
}

/// Waits until the role in `slot` is ready, failing if it dies meanwhile.
fn wait_ready(stack: &mut Stack, launcher: &Launcher, i: usize) -> anyhow::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let slot = &mut stack.slots[i];
        let Some(p) = &mut slot.proc else {
            bail!("the {} role is not running", slot.name);
        };
        if let Some(status) = p.poll() {
            bail!("the {} role failed to start ({status})", slot.name);
        }
        if launcher.is_ready(slot.kind, p.pid) {
            slot.ready = true;
            return Ok(());
        }
        if signals::STOP.load(Ordering::Relaxed) {
            bail!("interrupted while waiting for the {} role", slot.name);
        }
        if Instant::now() > deadline {
            bail!("timed out waiting for the {} role", slot.name);
        }
        std::thread::sleep(POLL);
    }
}

/// Marks the end of every ring (capture leaves them open; see `--keep-open`).
fn finish_rings(rt: &Path, workers: usize) -> anyhow::Result<()> {
    for w in 0..workers {
        let path = ring_path(rt, w);
        let mut p = meerkat_shm::Producer::attach(&path)
            .with_context(|| format!("cannot end ring {}", path.display()))?;
        p.finish();
    }
    Ok(())
}

fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => status.to_string(),
    }
}

fn counter(runtime: &Path, role: RoleName, name: &str) -> u64 {
    CounterReader::open(&counters_path(runtime, role))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
}

/// A counter of the capture role.
fn capture(runtime: &Path, name: &str) -> u64 {
    counter(runtime, RoleName::Capture, name)
}

/// Alerts the current eve-writer wrote.
fn writer_alerts(runtime: &Path) -> u64 {
    counter(
        runtime,
        RoleName::EveWriter,
        &meerkat_runtime::counters::eve_event_counter(ALERT_TYPE),
    )
}

/// The EVE type of alerts (`eve.events.alert`).
const ALERT_TYPE: &str = "alert";

/// A counter of the eve-writer.
fn writer(runtime: &Path, c: EveCounter) -> u64 {
    counter(runtime, RoleName::EveWriter, c.name())
}

/// A counter of detect worker `w`.
fn detect(runtime: &Path, w: usize, c: DetectCounter) -> u64 {
    counter(
        runtime,
        RoleName::Detect(w),
        &DetectCounters::new(w).counter(c),
    )
}

/// Packets a live run lost, wherever it happened (kernel or NIC ring, backlog, worker
/// ring).
fn live_drops(runtime: &Path) -> u64 {
    CaptureLiveCounter::DROPS
        .iter()
        .map(|c| capture(runtime, c.name()))
        .sum()
}

/// Progress on a terminal: input done of total, packets/s, alerts so far.
struct Progress {
    on: bool,
    last: Instant,
    last_packets: u64,
    drawn: bool,
}

impl Progress {
    fn new(quiet: bool) -> Progress {
        Progress {
            on: !quiet && std::io::stderr().is_terminal(),
            last: Instant::now(),
            last_packets: 0,
            drawn: false,
        }
    }

    fn tick(&mut self, runtime: &Path) {
        if !self.on || self.last.elapsed() < Duration::from_millis(250) {
            return;
        }
        if capture(runtime, CaptureLiveCounter::Live.name()) == 1 {
            let packets = capture(runtime, CaptureCounter::Packets.name());
            let rate = (packets - self.last_packets.min(packets)) as f64
                / self.last.elapsed().as_secs_f64().max(1e-3);
            self.last = Instant::now();
            self.last_packets = packets;
            eprint!(
                "\r\x1b[2K[live] {} packets ({:.0}/s), {} dropped, {} alerts",
                packets,
                rate,
                live_drops(runtime),
                writer_alerts(runtime)
            );
            self.drawn = true;
            return;
        }
        let done = capture(runtime, CaptureCounter::InputBytesDone.name());
        let total = capture(runtime, CaptureCounter::InputBytesTotal.name()).max(1);
        let packets = capture(runtime, CaptureCounter::Packets.name());
        let alerts = writer_alerts(runtime);
        let rate = (packets - self.last_packets.min(packets)) as f64
            / self.last.elapsed().as_secs_f64().max(1e-3);
        self.last = Instant::now();
        self.last_packets = packets;
        eprint!(
            "\r\x1b[2K[{:>3}%] {:.1} of {:.1} MB, {} packets ({:.0}/s), {} alerts",
            done * 100 / total,
            done as f64 / 1e6,
            total as f64 / 1e6,
            packets,
            rate,
            alerts
        );
        self.drawn = true;
    }

    fn clear(&mut self) {
        if self.drawn {
            eprint!("\r\x1b[2K");
            self.drawn = false;
        }
    }
}

/// What a run did, for the summary line and `--summary-json`.
#[derive(Debug, Default)]
struct Summary {
    packets: u64,
    bytes: u64,
    alerts: u64,
    events: u64,
    input_errors: u64,
    wall_s: f64,
    rules_loaded: u64,
    rules_failed: u64,
    /// Wall time of the slowest worker's rule load.
    rules_load_s: f64,
    /// CPU of every role minus the workers' rule loading.
    packet_path_cpu_s: f64,
    /// Per role: (name, cpu s, peak RSS kB).
    roles: Vec<(String, f64, u64)>,
}

impl Summary {
    fn collect(
        rt: &Path,
        stack: &Stack,
        workers: usize,
        wall: Duration,
        input: CaptureTotals,
        writers: WriterTotals,
    ) -> Summary {
        let mut s = Summary {
            packets: input.packets,
            bytes: input.bytes,
            alerts: writers.alerts + writer_alerts(rt),
            events: writers.events + writer(rt, EveCounter::EventsWritten),
            input_errors: input.errors,
            wall_s: wall.as_secs_f64(),
            ..Default::default()
        };
        let mut load_cpu_us = 0;
        for w in 0..workers {
            load_cpu_us += detect(rt, w, DetectCounter::RulesLoadCpuUs);
            let load_s = detect(rt, w, DetectCounter::RulesLoadUs) as f64 / 1e6;
            s.rules_load_s = s.rules_load_s.max(load_s);
            if w == 0 {
                s.rules_loaded = detect(rt, w, DetectCounter::RulesLoaded);
                s.rules_failed = detect(rt, w, DetectCounter::RulesFailed);
            }
        }
        let total_cpu_us: u64 = stack.slots.iter().map(|r| r.usage.cpu_us).sum();
        s.packet_path_cpu_s = total_cpu_us.saturating_sub(load_cpu_us) as f64 / 1e6;
        s.roles = stack
            .slots
            .iter()
            .map(|r| {
                (
                    r.name.clone(),
                    r.usage.cpu_us as f64 / 1e6,
                    r.usage.max_rss_kb,
                )
            })
            .collect();
        s
    }

    fn to_json(&self) -> String {
        let roles: Vec<serde_json::Value> = self
            .roles
            .iter()
            .map(|(n, cpu, rss)| serde_json::json!({"role": n, "cpu_s": cpu, "max_rss_kb": rss}))
            .collect();
        serde_json::json!({
            "packets": self.packets,
            "bytes": self.bytes,
            "alerts": self.alerts,
            "events": self.events,
            "input_errors": self.input_errors,
            "wall_s": self.wall_s,
            "rules_loaded": self.rules_loaded,
            "rules_failed": self.rules_failed,
            "rules_load_s": self.rules_load_s,
            "packet_path_cpu_s": self.packet_path_cpu_s,
            "total_max_rss_kb": self.roles.iter().map(|r| r.2).sum::<u64>(),
            "roles": roles,
        })
        .to_string()
    }
}

/// Input totals of the capture runs that ended.
#[derive(Debug, Default, Clone, Copy)]
struct CaptureTotals {
    packets: u64,
    bytes: u64,
    errors: u64,
}

/// What the eve-writers that were replaced had written: a restarted writer starts a
/// fresh counter page, and the run's summary counts every incarnation.
#[derive(Debug, Default, Clone, Copy)]
struct WriterTotals {
    alerts: u64,
    events: u64,
    /// Pid of the last page added (a writer that died before making its page leaves the
    /// previous one, which must not count twice).
    last_pid: u32,
}

impl WriterTotals {
    /// Adds the page of the writer that just died, before its successor replaces it.
    fn add_dead_page(&mut self, rt: &Path) {
        let Ok(page) = CounterReader::open(&counters_path(rt, RoleName::EveWriter)) else {
            return;
        };
        if page.pid() == self.last_pid {
            return;
        }
        self.last_pid = page.pid();
        self.alerts += page
            .get(&meerkat_runtime::counters::eve_event_counter(ALERT_TYPE))
            .unwrap_or(0);
        self.events += page.get(EveCounter::EventsWritten.name()).unwrap_or(0);
    }
}

/// Backoff before restart number `n` (1-based) within the window.
fn backoff(cfg: &meerkat_config::Supervisor, n: usize) -> Duration {
    let shift = (n.saturating_sub(1)).min(20) as u32;
    let ms = cfg
        .restart_backoff_ms
        .saturating_mul(1u64 << shift)
        .min(cfg.restart_backoff_max_ms);
    Duration::from_millis(ms)
}

/// `meerkat run`.
pub fn run(args: &RunArgs, log: &LogArgs) -> Outcome {
    let started = Instant::now();
    let (mut config, inputs) = prepare(args)?;
    let tcp = match &config.control.listen {
        Some(listen) => {
            let c = &config.control;
            let tls = match (&c.tls_cert, &c.tls_key) {
                (Some(cert), Some(key)) => Some(
                    crate::tls::server_config(cert, key, c.tls_client_ca.as_deref())
                        .map_err(Failure::usage)?,
                ),
                _ => None,
            };
            let token = match &c.token_file {
                Some(f) => Some(control::read_token(f).map_err(Failure::usage)?),
                None => None,
            };
            Some(control::TcpControl {
                listen: listen.clone(),
                token,
                tls,
            })
        }
        None => None,
    };
    let runtime = RuntimeDir::create(&config).map_err(Failure::runtime)?;
    let rt = runtime.path.clone();
    config.runtime_dir = Some(rt.clone());
    let workers = config.workers();
    let config_path = layout::config_path(&rt);
    std::fs::write(&config_path, config.to_yaml())
        .with_context(|| format!("cannot write {}", config_path.display()))
        .map_err(Failure::runtime)?;
    for w in 0..workers {
        meerkat_shm::create(
            &ring_path(&rt, w),
            config.capture.ring_size.bytes() as usize,
        )
        .map_err(Failure::runtime)?;
    }
    // Directory inputs: if the last run with this registry died, its outputs hold events
    // of work it had not checkpointed; cut them back before anything writes (see
    // capture's pcapdir).
    let uses_registry = meerkat_capture::pcapdir::applies(&config, &inputs);
    match meerkat_capture::pcapdir::recover(&config, uses_registry) {
        Ok(done) => {
            for r in done {
                match r {
                    RollBack::Truncated { path, removed } => tracing::warn!(
                        "the last run with registry {} was interrupted: removed the last {removed} bytes of {} \
                         (events of work after its last checkpoint, which is done again now)",
                        config.registry_path().display(),
                        path.display()
                    ),
                    RollBack::Replaced { path } => tracing::warn!(
                        "the last run was interrupted, but {} is another file now: not rolled back \
                         (events after its last checkpoint may appear twice)",
                        path.display()
                    ),
                    RollBack::Shorter { path, len, mark } => tracing::warn!(
                        "the last run was interrupted, but {} is shorter ({len} bytes) than at its \
                         last checkpoint ({mark} bytes): left alone",
                        path.display()
                    ),
                    RollBack::Unchanged { .. } | RollBack::Missing { .. } => {}
                }
            }
        }
        Err(e) if uses_registry => return Err(Failure::runtime(e)),
        Err(e) => tracing::warn!("{e}"),
    }

    // The control API, before any role: a probe sees "starting" from the first moment.
    let rule_files: Vec<String> = config
        .rule_paths()
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let digest = meerkat_detect::rules::ruleset_digest(&config.rule_paths()).unwrap_or_default();
    let names: Vec<String> = RoleName::stack(workers).map(|r| r.to_string()).collect();
    let shared: SharedRef = Arc::new(Mutex::new(Shared {
        state: "starting",
        started,
        runtime_dir: rt.clone(),
        log_dir: config.default_log_dir.clone(),
        roles: names
            .iter()
            .map(|n| RoleInfo {
                name: n.clone(),
                pid: 0,
                state: "starting",
                started,
                restarts: 0,
                last_exit: String::new(),
            })
            .collect(),
        workers,
        generation: 1,
        digest,
        loaded: 0,
        failed: 0,
        rule_files,
        pending: VecDeque::new(),
        current: Vec::new(),
        done: Vec::new(),
    }));
    let (req_tx, req_rx) = std::sync::mpsc::channel();
    let ctl_stop = Arc::new(AtomicBool::new(false));
    let socket = config
        .control
        .socket
        .clone()
        .map(|p| absolute(&p))
        .unwrap_or_else(|| layout::control_socket_path(&rt));
    let server = control::start(
        &socket,
        config.control.metrics_listen.as_deref(),
        tcp,
        config.control.max_message_size.bytes() as usize,
        shared.clone(),
        req_tx,
        ctl_stop.clone(),
    )
    .map_err(Failure::runtime)?;
    tracing::info!(
        workers,
        log_dir = %config.default_log_dir.display(),
        runtime_dir = %rt.display(),
        control_socket = %server.socket.display(),
        "starting"
    );
    if let Some(m) = server.metrics {
        tracing::info!("metrics: http://{m}/metrics");
    }
    if let Some(t) = server.tcp {
        let c = &config.control;
        let how = match (
            c.tls_cert.is_some(),
            c.tls_client_ca.is_some(),
            c.token_file.is_some(),
        ) {
            (true, true, true) => "TLS, client certificate and bearer token required",
            (true, true, false) => "TLS, client certificate required",
            (true, false, _) => "TLS, bearer token required",
            (false, _, _) => "plain text, bearer token required",
        };
        tracing::info!("control API also on TCP {t} ({how})");
        if c.tls_cert.is_none() && !t.ip().is_loopback() {
            tracing::warn!(
                "control API on TCP {t} without TLS: the bearer token travels in clear text \
                 (set control.tls-cert and control.tls-key)"
            );
        }
    }

    let mut live = Vec::new();
    if let Some(iface) = &args.interface {
        live.extend(["-i".to_string(), iface.clone()]);
    }
    if args.dpdk {
        live.push("--dpdk".to_string());
    }
    let launcher = Launcher {
        log,
        config_path: config_path.clone(),
        runtime: rt.clone(),
        live,
    };
    let mut stack = Stack {
        slots: Vec::with_capacity(workers + 2),
    };
    for r in RoleName::stack(workers) {
        let kind = match r {
            RoleName::EveWriter => Kind::Writer,
            RoleName::Detect(w) => Kind::Detect(w),
            RoleName::Capture => Kind::Capture,
        };
        stack.slots.push(Slot::new(r.to_string(), kind));
    }
    let capture_idx = workers + 1;

    // Start in dependency order, each ready before the next.
    let result = (|| -> anyhow::Result<()> {
        stack.slots[0].proc = Some(launcher.writer()?);
        stack.slots[0].started = Instant::now();
        wait_ready(&mut stack, &launcher, 0)?;
        for w in 0..workers {
            stack.slots[w + 1].proc = Some(launcher.detect(w, 1)?);
            stack.slots[w + 1].started = Instant::now();
        }
        for w in 0..workers {
            wait_ready(&mut stack, &launcher, w + 1)?;
        }
        Ok(())
    })();
    if let Err(e) = result {
        lock(&shared).state = "stopping";
        return Err(Failure::runtime(e));
    }
    {
        let mut s = lock(&shared);
        s.loaded = detect(&rt, 0, DetectCounter::RulesLoaded);
        s.failed = detect(&rt, 0, DetectCounter::RulesFailed);
        if let Some(iface) = &args.interface {
            s.pending
                .push_back(PathBuf::from(format!("{LIVE_INPUT}af-packet:{iface}")));
        } else if args.dpdk {
            s.pending
                .push_back(PathBuf::from(format!("{LIVE_INPUT}dpdk")));
        }
        s.pending.extend(inputs.iter().cloned());
    }

    let sup = config.supervisor.clone();
    let window = Duration::from_secs(sup.restart_window);
    let mut progress = Progress::new(log.quiet);
    let mut totals = CaptureTotals::default();
    let mut writer_totals = WriterTotals::default();
    let mut rings_finished = false;
    let mut draining: Option<Instant> = None;
    let mut writer_stopping = false;
    let mut generation = 1u64;
    let outcome: anyhow::Result<()> = loop {
        progress.tick(&rt);
        let now = Instant::now();
        // Requests from the control API.
        while let Ok(r) = req_rx.try_recv() {
            match r {
                Request::Shutdown => {}
                Request::RulesChanged(files) => {
                    generation = lock(&shared).generation;
                    config.rule_files = files;
                    // Workers started from now on load the running ruleset.
                    if let Err(e) = std::fs::write(&config_path, config.to_yaml()) {
                        tracing::error!("cannot write {}: {e}", config_path.display());
                    }
                }
                Request::RestartWorker(w, reply) => {
                    let slot = stack.slot(Kind::Detect(w));
                    if draining.is_some() || rings_finished {
                        let _ = reply.send(Err("the stack is stopping".to_string()));
                    } else if !slot.running() || slot.stopping_until.is_some() {
                        let _ = reply.send(Err(format!("detect worker {w} is restarting already")));
                    } else {
                        tracing::info!("restarting detect worker {w} (asked)");
                        slot.signal(libc::SIGTERM);
                        slot.stopping_until = Some(now + KILL_GRACE);
                        slot.restart_reply = Some(reply);
                    }
                }
            }
        }
        // Signals.
        if signals::STOP_COUNT.load(Ordering::Relaxed) >= 2 {
            break Err(anyhow!("interrupted twice: stopped without draining"));
        }
        if signals::HUP.swap(false, Ordering::SeqCst) {
            tracing::info!("SIGHUP: the eve-writer reopens its outputs");
            stack.slots[0].signal(libc::SIGHUP);
        }
        let stop = signals::STOP.load(Ordering::Relaxed) || ctl_stop.load(Ordering::Relaxed);
        if stop && draining.is_none() {
            progress.clear();
            tracing::info!(
                "stopping: draining what was captured (deadline {} s)",
                sup.shutdown_timeout
            );
            draining = Some(now + Duration::from_secs(sup.shutdown_timeout));
            lock(&shared).pending.clear();
            let cap = &mut stack.slots[capture_idx];
            cap.signal(libc::SIGTERM);
            cap.restart_at = None;
        }
        if let Some(d) = draining
            && now > d
        {
            break Err(anyhow!(
                "the stack did not drain within supervisor.shutdown-timeout ({} s); \
                 killing the roles still running",
                sup.shutdown_timeout
            ));
        }

        // Exits.
        let mut fatal = None;
        for i in 0..stack.slots.len() {
            let slot = &mut stack.slots[i];
            if let Some(until) = slot.stopping_until
                && now > until
                && slot.running()
            {
                slot.signal(libc::SIGKILL);
            }
            let Some(p) = &mut slot.proc else { continue };
            let Some(status) = p.poll() else {
                if !slot.ready && launcher.is_ready(slot.kind, p.pid) {
                    slot.ready = true;
                    if let Some(reply) = slot.restart_reply.take() {
                        let _ = reply.send(Ok(p.pid as u32));
                    }
                }
                continue;
            };
            slot.usage.cpu_us += p.usage.cpu_us;
            slot.usage.max_rss_kb = slot.usage.max_rss_kb.max(p.usage.max_rss_kb);
            slot.last_exit = describe(status);
            slot.proc = None;
            slot.ready = false;
            let asked = slot.stopping_until.take().is_some();
            let expected = match slot.kind {
                Kind::Writer => writer_stopping && status.success(),
                // A worker ends on its own once its ring is ended (by the supervisor, or
                // by a live capture that was stopped).
                Kind::Detect(w) => {
                    status.success()
                        && (rings_finished
                            || meerkat_shm::status(&ring_path(&rt, w)).is_ok_and(|r| r.eof))
                }
                // Capture ends with its input, or when told to stop.
                Kind::Capture => status.success() || draining.is_some(),
            };
            if expected {
                if slot.kind == Kind::Capture {
                    totals.packets += capture(&rt, CaptureCounter::Packets.name());
                    totals.bytes += capture(&rt, CaptureCounter::Bytes.name());
                    totals.errors += capture(&rt, CaptureCounter::Errors.name());
                    let mut s = lock(&shared);
                    let cur = std::mem::take(&mut s.current);
                    s.done.extend(cur);
                } else {
                    slot.finished = true;
                }
                continue;
            }
            if asked {
                // `ctl restart-worker`: start again at once, not a crash.
                slot.restart_at = Some(now);
                continue;
            }
            tracing::error!("the {} role died ({})", slot.name, slot.last_exit);
            slot.deaths.push_back(now);
            while slot
                .deaths
                .front()
                .is_some_and(|t| now.duration_since(*t) > window)
            {
                slot.deaths.pop_front();
            }
            if slot.deaths.len() > sup.max_restarts as usize {
                fatal = Some(anyhow!(
                    "the {} role died {} times within {} s (last: {}): crash loop \
                     (supervisor.max-restarts {}); stopping the stack",
                    slot.name,
                    slot.deaths.len(),
                    sup.restart_window,
                    slot.last_exit,
                    sup.max_restarts
                ));
                break;
            }
            let wait = backoff(&sup, slot.deaths.len());
            tracing::info!("restarting {} in {} ms", slot.name, wait.as_millis());
            slot.restart_at = Some(now + wait);
        }
        if let Some(e) = fatal {
            break Err(e);
        }

        // Restarts that are due.
        let mut spawn_error = None;
        for i in 0..stack.slots.len() {
            let slot = &mut stack.slots[i];
            let Some(at) = slot.restart_at else { continue };
            if now < at {
                continue;
            }
            slot.restart_at = None;
            let spawned = match slot.kind {
                Kind::Writer => {
                    writer_totals.add_dead_page(&rt);
                    launcher.writer()
                }
                Kind::Detect(w) => launcher.detect(w, generation),
                Kind::Capture => {
                    if draining.is_some() {
                        continue;
                    }
                    let cur = lock(&shared).current.clone();
                    launcher.capture(&cur, true)
                }
            };
            match spawned {
                Ok(p) => {
                    if slot.restart_reply.is_none() {
                        slot.restarts += 1;
                    }
                    tracing::info!("{} started again (pid {})", slot.name, p.pid);
                    slot.proc = Some(p);
                    slot.started = now;
                }
                Err(e) => {
                    spawn_error = Some(e);
                    break;
                }
            }
        }
        if let Some(e) = spawn_error {
            break Err(e);
        }

        // Input: the next queued source, or the end of the rings.
        let capture_idle = {
            let c = &stack.slots[capture_idx];
            c.proc.is_none() && c.restart_at.is_none()
        };
        if capture_idle && draining.is_none() && !rings_finished {
            // Taken from the queue and shown as current in one step: a `Status` between
            // the two would see an idle stack with nothing queued while the input has not
            // been read yet.
            let next = {
                let mut s = lock(&shared);
                let next = s.pending.pop_front();
                if let Some(input) = &next {
                    s.current = vec![input.clone()];
                    s.state = "running";
                }
                next
            };
            if let Some(input) = next {
                match launcher.capture(std::slice::from_ref(&input), false) {
                    Ok(p) => {
                        let c = &mut stack.slots[capture_idx];
                        c.proc = Some(p);
                        c.started = now;
                        c.ready = true;
                    }
                    Err(e) => break Err(e),
                }
            } else if !sup.keep_running {
                draining = draining.or(Some(now + Duration::from_secs(sup.shutdown_timeout)));
            }
        }
        if capture_idle && draining.is_some() && !rings_finished {
            if let Err(e) = finish_rings(&rt, workers) {
                break Err(e);
            }
            rings_finished = true;
        }
        let workers_done = stack.slots[1..capture_idx].iter().all(|s| s.finished);
        if rings_finished && workers_done && !writer_stopping {
            writer_stopping = true;
            stack.slots[0].signal(libc::SIGTERM);
        }
        if writer_stopping && stack.slots[0].finished {
            break Ok(());
        }

        // What `Status` shows.
        {
            let mut s = lock(&shared);
            s.state = if writer_stopping {
                "stopping"
            } else if draining.is_some() && (stop || rings_finished) {
                "draining"
            } else if s.current.is_empty() && s.pending.is_empty() {
                "idle"
            } else {
                "running"
            };
            for (info, slot) in s.roles.iter_mut().zip(&stack.slots) {
                info.pid = slot.pid();
                info.state = slot.state();
                info.started = slot.started;
                info.restarts = slot.restarts;
                info.last_exit.clone_from(&slot.last_exit);
            }
        }
        std::thread::sleep(POLL);
    };
    progress.clear();
    lock(&shared).state = "stopping";
    if let Err(e) = outcome {
        return Err(Failure::runtime(e));
    }
    if uses_registry && let Err(e) = meerkat_capture::pcapdir::close_run(&config) {
        tracing::warn!("{e}");
    }

    let summary = Summary::collect(
        &rt,
        &stack,
        workers,
        started.elapsed(),
        totals,
        writer_totals,
    );
    let eve = config
        .eve_logs()
        .next()
        .map(|e| {
            config
                .default_log_dir
                .join(&e.filename)
                .display()
                .to_string()
        })
        .unwrap_or_default();
    let mut line = format!(
        "meerkat: {} packets, {} alerts, {} events in {:.2} s (packet path {:.2} CPU s); EVE: {eve}",
        summary.packets, summary.alerts, summary.events, summary.wall_s, summary.packet_path_cpu_s
    );
    if uses_registry {
        let files = capture(&rt, CaptureCounter::Files.name());
        let resumed = capture(&rt, CaptureCounter::FilesResumed.name());
        let skipped = capture(&rt, CaptureCounter::FilesSkipped.name());
        line.push_str(&format!(
            "; {files} files read ({resumed} resumed), {skipped} already done"
        ));
    }
    let restarts: u32 = stack.slots.iter().map(|s| s.restarts).sum();
    if restarts > 0 {
        line.push_str(&format!("; {restarts} role restarts"));
    }
    if summary.input_errors > 0 {
        line.push_str(&format!(
            " ({} input file errors, see the log)",
            summary.input_errors
        ));
    }
    if capture(&rt, CaptureLiveCounter::Live.name()) == 1 {
        let c = |n: CaptureLiveCounter| capture(&rt, n.name());
        line.push_str(&format!(
            "; live: {} received, dropped {} (kernel {}, nic {}, backlog {}, ring full {}), backlog high-water {}",
            c(CaptureLiveCounter::SourcePackets),
            live_drops(&rt),
            c(CaptureLiveCounter::KernelDrops),
            c(CaptureLiveCounter::DpdkImissed),
            c(CaptureLiveCounter::BacklogDrops),
            c(CaptureLiveCounter::RingFullDrops),
            c(CaptureLiveCounter::BacklogHighWater),
        ));
    }
    println!("{line}");
    if let Some(path) = &args.summary_json {
        std::fs::write(path, summary.to_json())
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(Failure::runtime)?;
    }
    let _ = std::fs::remove_file(&server.socket);
    drop(stack);
    drop(runtime);
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let cfg = meerkat_config::Supervisor {
            restart_backoff_ms: 100,
            restart_backoff_max_ms: 1000,
            ..Default::default()
        };
        let ms: Vec<u128> = (1..=6).map(|n| backoff(&cfg, n).as_millis()).collect();
        assert_eq!(ms, [100, 200, 400, 800, 1000, 1000]);
        // Far past the window's count: no overflow.
        assert_eq!(backoff(&cfg, 200).as_millis(), 1000);
    }
}
