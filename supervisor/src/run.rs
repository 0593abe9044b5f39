//! `meerkat run`, step by step: [`run`] resolves the configuration and checks the inputs
//! ([`crate::prepare`]), lays out the runtime directory (config, rings), rolls back the
//! outputs of an interrupted directory run, serves the control API, starts the roles in
//! dependency order (eve-writer, detect workers) and waits until each is ready,
//! supervises them while capture reads the inputs ([`crate::supervise`]), drains, and
//! writes the summary.

use std::collections::VecDeque;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use meerkat_config::Config;
use meerkat_runtime::{Role, layout};
use meerkat_scanner::RollBack;

use crate::control::{
    self, CaptureMode, ControlError, Input, Request, RoleInfo, Server, Shared, SharedRef,
    TcpControl, UnixCommandStart, lock,
};
use crate::prepare::{RuleFiles, absolute, prepare_with_rules};
use crate::runtime_dir::RuntimeDir;
use crate::stack::{Launcher, Stack, live_input};
use crate::summary::{Summary, detect};
use crate::supervise::Supervision;
use crate::{LogArgs, RunOptions, Signals, SupervisorError};

/// The embedded sample, written out before a no-argument run.
pub(crate) const SAMPLE_PCAP: &[u8] = include_bytes!("../../sample/sample.pcap");
const SAMPLE_RULES: &str = include_str!("../../sample/sample.rules");
/// Log directory of a no-argument run, relative to the working directory.
const SAMPLE_LOG_DIR: &str = "meerkat-logs";

/// `meerkat` with no arguments: `run` on the embedded sample into ./meerkat-logs.
pub fn run_sample(
    log: &LogArgs,
    signals: Signals<'_>,
    out: &mut dyn Write,
) -> Result<(), SupervisorError> {
    let dir = PathBuf::from(SAMPLE_LOG_DIR);
    std::fs::create_dir_all(&dir).map_err(|source| SupervisorError::SampleDir {
        path: dir.clone(),
        source,
    })?;
    let pcap = dir.join("sample.pcap");
    let rules = dir.join("sample.rules");
    for (path, bytes) in [(&pcap, SAMPLE_PCAP), (&rules, SAMPLE_RULES.as_bytes())] {
        std::fs::write(path, bytes).map_err(|source| SupervisorError::SampleFile {
            path: path.clone(),
            source,
        })?;
    }
    // Each sample run starts a fresh eve.json (a normal run appends, as Suricata does).
    let _ = std::fs::remove_file(dir.join("eve.json"));
    tracing::info!(
        "no arguments: inspecting the embedded sample {} with {}",
        pcap.display(),
        rules.display()
    );
    let opts = RunOptions {
        pcap: vec![pcap],
        exclusive_rules: vec![rules],
        log_dir: Some(dir),
        ..Default::default()
    };
    run(&opts, log, signals, out)
}

/// `meerkat run`: runs the stack until its input is done (or a stop), then writes the
/// one-line summary to `out` (and `--summary-json`).
pub fn run(
    opts: &RunOptions,
    log: &LogArgs,
    signals: Signals<'_>,
    out: &mut dyn Write,
) -> Result<(), SupervisorError> {
    let started = Instant::now();
    let resolved;
    let opts = match af_packet_interface(opts)? {
        Some(iface) => {
            resolved = RunOptions {
                interface: Some(iface),
                af_packet_default: false,
                ..opts.clone()
            };
            &resolved
        }
        None => opts,
    };
    let (mut config, inputs, rule_files) = prepare_with_rules(opts)?;
    let tcp = tcp_control(&config)?;
    let runtime = RuntimeDir::create(&config)?;
    let config_path = runtime.lay_out(&mut config)?;
    let rt = runtime.path.clone();
    let workers = config.workers();
    let uses_registry = recover_outputs(&config, &inputs)?;
    let mode = capture_mode(opts);
    let api = ControlApi::start(&config, &rt, workers, started, tcp, &rule_files, mode, opts)?;

    let mut live = Vec::new();
    if let Some(iface) = &opts.interface {
        live.extend(["-i".to_string(), iface.clone()]);
    }
    if opts.dpdk {
        live.push("--dpdk".to_string());
    }
    let launcher = Launcher {
        log,
        config_path: config_path.clone(),
        runtime: rt.clone(),
        live,
    };
    let mut sup = Supervision::new(
        Stack::new(workers),
        launcher,
        config,
        config_path,
        api.shared.clone(),
        api.requests,
        api.stop.clone(),
        signals,
        log.quiet,
    );
    sup.reload = Some(api.server.reload.clone());
    if let Err(e) = sup.start_roles() {
        lock(&api.shared).state = "stopping";
        return Err(e);
    }
    queue_inputs(&api.shared, &rt, opts, &inputs);
    let failed = lock(&api.shared).failed;
    if opts.init_errors_fatal && failed > 0 {
        lock(&api.shared).state = "stopping";
        return Err(SupervisorError::RulesFailed { failed });
    }
    if let Some(fd) = opts.ready_fd {
        notify_ready(fd);
    }
    let outcome = sup.run();
    sup.progress.clear();
    lock(&api.shared).state = "stopping";
    save_datasets(&rt);
    outcome?;
    if uses_registry && let Err(e) = meerkat_capture::pcapdir::close_run(&sup.config) {
        tracing::warn!("{e}");
    }
    summarise(&sup, &rt, workers, started, uses_registry, opts, out)?;
    let _ = std::fs::remove_file(&api.server.socket);
    if let Some(u) = &api.server.unix_command {
        let _ = std::fs::remove_file(u);
    }
    drop(sup);
    drop(runtime);
    Ok(())
}

/// Writes the datasets that have a `save`/`state` file, once every worker has stopped
/// (so nothing a worker adds is missed), as Suricata does at shutdown.
fn save_datasets(rt: &Path) {
    for (name, path, r) in meerkat_detect::rules::datasets::save_all(rt) {
        match r {
            Ok(n) => tracing::info!("dataset {name}: {n} values saved to {}", path.display()),
            Err(e) => tracing::warn!("dataset {name}: cannot save to {}: {e}", path.display()),
        }
    }
}

/// `--af-packet` without an interface: the first interface of the `af-packet` section
/// (Suricata's `interface: default` entry is settings, not an interface).
fn af_packet_interface(opts: &RunOptions) -> Result<Option<String>, SupervisorError> {
    if !opts.af_packet_default || opts.interface.is_some() {
        return Ok(None);
    }
    let resolved = meerkat_app::config::resolve(opts.config.as_deref(), &opts.overrides()?)?;
    resolved
        .config
        .af_packet
        .iter()
        .map(|a| a.interface.clone())
        .find(|i| i != "default")
        .map(Some)
        .ok_or_else(|| SupervisorError::NoInterface("(none in the af-packet section)".to_string()))
}

/// How the run gets its packets.
fn capture_mode(opts: &RunOptions) -> CaptureMode {
    if opts.unix_socket {
        CaptureMode::UnixSocket
    } else if opts.dpdk {
        CaptureMode::Dpdk
    } else if opts.interface.is_some() {
        CaptureMode::AfPacket
    } else {
        CaptureMode::PcapFile
    }
}

/// `-D`: tells the waiting parent that the stack runs (one byte on its pipe).
fn notify_ready(fd: i32) {
    // SAFETY: `fd` is the write end of the pipe the binary made for this, ours to write
    // and close once.
    unsafe {
        let _ = libc::write(fd, b"R".as_ptr().cast(), 1);
        libc::close(fd);
    }
}

/// `control.listen`: the TCP control API's TLS and token, checked before anything starts.
fn tcp_control(config: &Config) -> Result<Option<TcpControl>, SupervisorError> {
    let Some(listen) = &config.control.listen else {
        return Ok(None);
    };
    let c = &config.control;
    let tls = match (&c.tls_cert, &c.tls_key) {
        (Some(cert), Some(key)) => Some(meerkat_proto::transport::tls::server_config(
            cert,
            key,
            c.tls_client_ca.as_deref(),
        )?),
        _ => None,
    };
    let token = match &c.token_file {
        Some(f) => Some(control::read_token(f).map_err(SupervisorError::Token)?),
        None => None,
    };
    Ok(Some(TcpControl {
        listen: listen.clone(),
        token,
        tls,
    }))
}

/// Directory inputs: if the last run with this registry died, its outputs hold events of
/// work it had not checkpointed; they are cut back before anything writes (see capture's
/// pcapdir). Returns whether the run uses the registry.
fn recover_outputs(config: &Config, inputs: &[PathBuf]) -> Result<bool, SupervisorError> {
    let uses_registry = meerkat_capture::pcapdir::applies(config, inputs);
    match meerkat_capture::pcapdir::recover(config, uses_registry) {
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
        Err(e) if uses_registry => return Err(e.into()),
        Err(e) => tracing::warn!("{e}"),
    }
    Ok(uses_registry)
}

/// The control API of a run and what the supervision loop shares with it.
struct ControlApi {
    server: Server,
    shared: SharedRef,
    requests: std::sync::mpsc::Receiver<Request>,
    /// Set by `Shutdown`.
    stop: Arc<AtomicBool>,
}

impl ControlApi {
    /// Step 3: serves the control API before any role starts, so that a probe sees
    /// "starting" from the first moment.
    #[allow(clippy::too_many_arguments)]
    fn start(
        config: &Config,
        rt: &Path,
        workers: usize,
        started: Instant,
        tcp: Option<TcpControl>,
        rule_files_as_configured: &RuleFiles,
        mode: CaptureMode,
        opts: &RunOptions,
    ) -> Result<ControlApi, SupervisorError> {
        let rule_files: Vec<String> = config
            .rule_paths()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let digest =
            meerkat_detect::rules::ruleset_digest(&config.rule_paths()).unwrap_or_default();
        let shared: SharedRef = Arc::new(Mutex::new(Shared {
            state: "starting",
            started,
            runtime_dir: rt.to_path_buf(),
            log_dir: config.default_log_dir.clone(),
            roles: Role::stack(workers)
                .map(|r| RoleInfo {
                    name: r.to_string(),
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
            configured_rule_files: rule_files_as_configured
                .configured
                .iter()
                .map(|p| p.display().to_string())
                .collect(),
            last_reload: std::time::SystemTime::now(),
            capture_mode: mode,
            roles_ready: false,
            interface: opts.interface.clone(),
            pending: VecDeque::new(),
            current: Vec::new(),
            done: Vec::new(),
        }));
        let (req_tx, req_rx) = std::sync::mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let socket = config
            .control
            .socket
            .clone()
            .map(|p| absolute(&p))
            .unwrap_or_else(|| layout::control_socket_path(rt));
        let server = control::start(
            &socket,
            config.control.metrics_listen.as_deref(),
            tcp,
            config.control.max_message_size.bytes() as usize,
            shared.clone(),
            req_tx,
            stop.clone(),
            unix_command(config, mode),
        )
        .map_err(|e| match e {
            ControlError::UnixCommand { socket, reason } => SupervisorError::UnixCommand {
                path: socket,
                reason,
            },
            e => SupervisorError::Control(e),
        })?;
        log_start(config, rt, workers, &server);
        Ok(ControlApi {
            server,
            shared,
            requests: req_rx,
            stop,
        })
    }
}

/// The unix-command socket of the run, if it is served: `unix-command.enabled` `yes`, or
/// `auto` in a live or unix-socket run (as Suricata).
fn unix_command(config: &Config, mode: CaptureMode) -> Option<UnixCommandStart> {
    use meerkat_config::UnixCommandEnabled as E;
    let required = match config.unix_command.enabled {
        E::No => return None,
        E::Yes => true,
        E::Auto if mode == CaptureMode::UnixSocket => true,
        E::Auto if mode.live() => false,
        E::Auto => return None,
    };
    Some(UnixCommandStart {
        path: absolute(&config.unix_command.path()),
        required,
        config: Arc::new(config.clone()),
    })
}

/// The start of a run in the log: where everything is, and how the TCP control API is
/// protected.
fn log_start(config: &Config, rt: &Path, workers: usize, server: &Server) {
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
    if let Some(u) = &server.unix_command {
        tracing::info!("unix-command socket (suricatasc): {}", u.display());
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
}

/// Once the workers are ready: their ruleset for `Status`, and the inputs (a live
/// source first) queued for capture.
fn queue_inputs(shared: &SharedRef, rt: &Path, opts: &RunOptions, inputs: &[PathBuf]) {
    let mut s = lock(shared);
    s.roles_ready = true;
    s.loaded = detect(rt, 0, meerkat_runtime::counters::DetectCounter::RulesLoaded);
    s.failed = detect(rt, 0, meerkat_runtime::counters::DetectCounter::RulesFailed);
    if let Some(live) = live_input(opts.interface.as_deref(), opts.dpdk) {
        s.pending.push_back(Input::plain(live));
    }
    s.pending.extend(inputs.iter().cloned().map(Input::plain));
}

/// Step 6: the summary line on `out`, and `--summary-json`.
fn summarise(
    sup: &Supervision<'_>,
    rt: &Path,
    workers: usize,
    started: Instant,
    uses_registry: bool,
    opts: &RunOptions,
    out: &mut dyn Write,
) -> Result<(), SupervisorError> {
    let summary = Summary::collect(
        rt,
        &sup.stack,
        workers,
        started.elapsed(),
        sup.totals,
        sup.writer_totals,
    );
    let eve = sup
        .config
        .eve_logs()
        .next()
        .map(|e| {
            sup.config
                .default_log_dir
                .join(&e.filename)
                .display()
                .to_string()
        })
        .unwrap_or_default();
    let restarts: u32 = sup.stack.slots.iter().map(|s| s.restarts).sum();
    let line = summary.line(rt, &eve, uses_registry, restarts);
    let _ = writeln!(out, "{line}");
    if let Some(path) = &opts.summary_json {
        std::fs::write(path, summary.to_json()).map_err(|source| SupervisorError::Write {
            path: path.clone(),
            source,
        })?;
    }
    Ok(())
}
