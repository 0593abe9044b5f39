//! `meerkat run`: the supervisor. It resolves the configuration, checks the inputs,
//! prepares the runtime directory (rings, counter pages, sockets), starts the roles as
//! separate processes in dependency order (eve-writer, detect workers, capture), waits
//! for the end of the input, drains, and prints a summary.

use std::io::IsTerminal;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow, bail};
use meerkat_capture::{counters_path, ring_path};
use meerkat_config::Config;
use meerkat_ring::CounterReader;
use meerkat_scanner::RollBack;

use crate::cli::RunArgs;
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
    let resolved = meerkat_config::resolve(args.config.as_deref(), &overrides(args)?)
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
    if args.pcap.is_empty() && !live {
        return Err(Failure::usage(anyhow!(
            "no input: give a capture file or directory with -r, an interface with -i, or --dpdk"
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
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let path = base.join(format!("meerkat-{}", std::process::id()));
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
    name: String,
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
        name: name.to_string(),
        pid: libc::pid_t::try_from(child.id()).context("pid out of range")?,
        exited: None,
        usage: Usage::default(),
    })
}

/// All roles of a run, stopped (SIGTERM, then SIGKILL) when dropped.
struct Stack {
    roles: Vec<Role>,
}

impl Stack {
    fn stop_all(&mut self) {
        for r in &self.roles {
            r.signal(libc::SIGTERM);
        }
        let deadline = Instant::now() + KILL_GRACE;
        while self.roles.iter_mut().any(|r| r.poll().is_none()) && Instant::now() < deadline {
            std::thread::sleep(POLL);
        }
        for r in &mut self.roles {
            if r.poll().is_none() {
                r.signal(libc::SIGKILL);
                r.wait();
            }
        }
    }

    /// The first role that exited unsuccessfully.
    fn failed(&mut self) -> Option<(String, std::process::ExitStatus)> {
        self.roles.iter_mut().find_map(|r| match r.poll() {
            Some(s) if !s.success() => Some((r.name.clone(), s)),
            _ => None,
        })
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Waits until `ready()` holds, failing if a role dies meanwhile.
fn wait_ready(
    stack: &mut Stack,
    what: &str,
    mut ready: impl FnMut() -> bool,
) -> anyhow::Result<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        if ready() {
            return Ok(());
        }
        if let Some((name, status)) = stack.failed() {
            bail!("the {name} role failed to start ({status})");
        }
        if let Some(name) = stack
            .roles
            .iter_mut()
            .find_map(|r| r.poll().map(|_| r.name.clone()))
        {
            bail!("the {name} role exited while starting");
        }
        if signals::STOP.load(Ordering::Relaxed) {
            bail!("interrupted while waiting for {what}");
        }
        if Instant::now() > deadline {
            bail!("timed out waiting for {what}");
        }
        std::thread::sleep(POLL);
    }
}

fn counter(runtime: &Path, role: &str, name: &str) -> u64 {
    CounterReader::open(&counters_path(runtime, role))
        .ok()
        .and_then(|r| r.get(name))
        .unwrap_or(0)
}

/// Packets a live run lost, wherever it happened (kernel or NIC ring, backlog, worker
/// ring).
fn live_drops(runtime: &Path) -> u64 {
    [
        "capture.kernel_drops",
        "capture.dpdk.imissed",
        "capture.backlog.drops",
        "capture.ring_full_drops",
    ]
    .iter()
    .map(|n| counter(runtime, "capture", n))
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
        if counter(runtime, "capture", "capture.live") == 1 {
            let packets = counter(runtime, "capture", "capture.packets");
            let rate = (packets - self.last_packets.min(packets)) as f64
                / self.last.elapsed().as_secs_f64().max(1e-3);
            self.last = Instant::now();
            self.last_packets = packets;
            eprint!(
                "\r\x1b[2K[live] {} packets ({:.0}/s), {} dropped, {} alerts",
                packets,
                rate,
                live_drops(runtime),
                counter(runtime, "eve-writer", "eve.events.alert")
            );
            self.drawn = true;
            return;
        }
        let done = counter(runtime, "capture", "capture.input_bytes_done");
        let total = counter(runtime, "capture", "capture.input_bytes_total").max(1);
        let packets = counter(runtime, "capture", "capture.packets");
        let alerts = counter(runtime, "eve-writer", "eve.events.alert");
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
    fn collect(rt: &Path, stack: &Stack, workers: usize, wall: Duration) -> Summary {
        let mut s = Summary {
            packets: counter(rt, "capture", "capture.packets"),
            bytes: counter(rt, "capture", "capture.bytes"),
            alerts: counter(rt, "eve-writer", "eve.events.alert"),
            events: counter(rt, "eve-writer", "eve.events_written"),
            input_errors: counter(rt, "capture", "capture.errors"),
            wall_s: wall.as_secs_f64(),
            ..Default::default()
        };
        let mut load_cpu_us = 0;
        for w in 0..workers {
            let role = format!("detect-{w}");
            let name = |n: &str| format!("detect.{w}.{n}");
            load_cpu_us += counter(rt, &role, &name("rules_load_cpu_us"));
            let load_s = counter(rt, &role, &name("rules_load_us")) as f64 / 1e6;
            s.rules_load_s = s.rules_load_s.max(load_s);
            if w == 0 {
                s.rules_loaded = counter(rt, &role, &name("rules_loaded"));
                s.rules_failed = counter(rt, &role, &name("rules_failed"));
            }
        }
        let total_cpu_us: u64 = stack.roles.iter().map(|r| r.usage.cpu_us).sum();
        s.packet_path_cpu_s = total_cpu_us.saturating_sub(load_cpu_us) as f64 / 1e6;
        s.roles = stack
            .roles
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

/// `meerkat run`.
pub fn run(args: &RunArgs, log: &LogArgs) -> Outcome {
    let started = Instant::now();
    let (mut config, inputs) = prepare(args)?;
    let runtime = RuntimeDir::create(&config).map_err(Failure::runtime)?;
    let rt = runtime.path.clone();
    config.runtime_dir = Some(rt.clone());
    let workers = config.workers();
    let config_path = rt.join("config.yaml");
    std::fs::write(&config_path, config.to_yaml())
        .with_context(|| format!("cannot write {}", config_path.display()))
        .map_err(Failure::runtime)?;
    for w in 0..workers {
        meerkat_ring::create(
            &ring_path(&rt, w),
            config.capture.ring_size.bytes() as usize,
        )
        .map_err(Failure::runtime)?;
    }
    let cfg_args = ["--config".to_string(), config_path.display().to_string()];
    // Directory inputs: if the last run with this registry died, its outputs hold events
    // of work it had not checkpointed; cut them back before anything writes (see
    // capture's pcapdir).
    let uses_registry = meerkat_capture::pcapdir::applies(&config, &inputs);
    match meerkat_capture::pcapdir::recover(&config, uses_registry) {
        Ok(done) => {
            for r in done {
                match r {
                    RollBack::Truncated { path, removed } => tracing::warn!(
                        "the last run with registry {} was interrupted: removed the last {removed} bytes of {}                          (events of work after its last checkpoint, which is done again now)",
                        config.registry_path().display(),
                        path.display()
                    ),
                    RollBack::Replaced { path } => tracing::warn!(
                        "the last run was interrupted, but {} is another file now: not rolled back                          (events after its last checkpoint may appear twice)",
                        path.display()
                    ),
                    RollBack::Shorter { path, len, mark } => tracing::warn!(
                        "the last run was interrupted, but {} is shorter ({len} bytes) than at its                          last checkpoint ({mark} bytes): left alone",
                        path.display()
                    ),
                    RollBack::Unchanged { .. } | RollBack::Missing { .. } => {}
                }
            }
        }
        Err(e) if uses_registry => return Err(Failure::runtime(e)),
        Err(e) => tracing::warn!("{e}"),
    }
    tracing::info!(
        workers,
        log_dir = %config.default_log_dir.display(),
        runtime_dir = %rt.display(),
        "starting"
    );

    let mut stack = Stack { roles: Vec::new() };
    let result = (|| -> anyhow::Result<()> {
        // 1. eve-writer, ready when its socket accepts connections.
        let mut a = vec!["eve-writer".to_string()];
        a.extend(cfg_args.iter().cloned());
        stack.roles.push(spawn("eve-writer", &a, log)?);
        let sock = meerkat_eve_writer::socket_path(&rt);
        wait_ready(&mut stack, "the eve-writer", || {
            std::os::unix::net::UnixStream::connect(&sock).is_ok()
        })?;
        // 2. detect workers, ready when attached to their rings.
        for w in 0..workers {
            let mut a = vec!["detect".to_string()];
            a.extend(cfg_args.iter().cloned());
            a.extend(["--worker".to_string(), w.to_string()]);
            stack.roles.push(spawn(&format!("detect-{w}"), &a, log)?);
        }
        wait_ready(&mut stack, "the detect workers", || {
            (0..workers)
                .all(|w| meerkat_ring::status(&ring_path(&rt, w)).is_ok_and(|s| s.consumer_alive))
        })?;
        // 3. capture.
        let mut a = vec!["capture".to_string()];
        a.extend(cfg_args.iter().cloned());
        for i in &inputs {
            a.extend(["-r".to_string(), i.display().to_string()]);
        }
        // Live capture runs until the stop signal below reaches it, then drains.
        if let Some(iface) = &args.interface {
            a.extend(["-i".to_string(), iface.clone()]);
        }
        if args.dpdk {
            a.push("--dpdk".to_string());
        }
        stack.roles.push(spawn("capture", &a, log)?);
        Ok(())
    })();
    if let Err(e) = result {
        return Err(Failure::runtime(e));
    }

    // Wait for the input to end: capture, then the workers, then stop the writer.
    let mut progress = Progress::new(log.quiet);
    let mut stop_forwarded = false;
    let writer = 0;
    let capture = stack.roles.len() - 1;
    loop {
        progress.tick(&rt);
        if let Some((name, status)) = stack.failed() {
            progress.clear();
            return Err(Failure::runtime(anyhow!(
                "the {name} role failed ({status}); stopping the others"
            )));
        }
        let n = signals::STOP_COUNT.load(Ordering::Relaxed);
        if n >= 2 {
            progress.clear();
            return Err(Failure::runtime(anyhow!(
                "interrupted twice: stopped without draining"
            )));
        }
        if n == 1 && !stop_forwarded {
            // Drain: capture stops reading and ends the rings; the rest follows.
            progress.clear();
            tracing::info!("stopping: draining what was captured");
            stack.roles[capture].signal(libc::SIGTERM);
            stop_forwarded = true;
        }
        let detect_done = stack.roles[1..capture]
            .iter_mut()
            .all(|r| r.poll().is_some());
        if stack.roles[capture].poll().is_some() && detect_done {
            break;
        }
        if stack.roles[writer].poll().is_some() {
            progress.clear();
            return Err(Failure::runtime(anyhow!(
                "the eve-writer role exited early"
            )));
        }
        std::thread::sleep(POLL);
    }
    progress.clear();
    stack.roles[writer].signal(libc::SIGTERM);
    let status = stack.roles[writer].wait();
    if !status.success() {
        return Err(Failure::runtime(anyhow!(
            "the eve-writer role failed ({status})"
        )));
    }

    // A clean end: the outputs hold exactly the work the registry records.
    if uses_registry && let Err(e) = meerkat_capture::pcapdir::close_run(&config) {
        tracing::warn!("{e}");
    }

    let summary = Summary::collect(&rt, &stack, workers, started.elapsed());
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
        let files = counter(&rt, "capture", "capture.files");
        let resumed = counter(&rt, "capture", "capture.files_resumed");
        let skipped = counter(&rt, "capture", "capture.files_skipped");
        line.push_str(&format!(
            "; {files} files read ({resumed} resumed), {skipped} already done"
        ));
    }
    if summary.input_errors > 0 {
        line.push_str(&format!(
            " ({} input file errors, see the log)",
            summary.input_errors
        ));
    }
    if counter(&rt, "capture", "capture.live") == 1 {
        let c = |n: &str| counter(&rt, "capture", n);
        line.push_str(&format!(
            "; live: {} received, dropped {} (kernel {}, nic {}, backlog {}, ring full {}), backlog high-water {}",
            c("capture.source.packets"),
            live_drops(&rt),
            c("capture.kernel_drops"),
            c("capture.dpdk.imissed"),
            c("capture.backlog.drops"),
            c("capture.ring_full_drops"),
            c("capture.backlog.high_water"),
        ));
    }
    println!("{line}");
    if let Some(path) = &args.summary_json {
        std::fs::write(path, summary.to_json())
            .with_context(|| format!("cannot write {}", path.display()))
            .map_err(Failure::runtime)?;
    }
    drop(stack);
    drop(runtime);
    Ok(ExitCode::SUCCESS)
}
