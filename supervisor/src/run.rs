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

use crate::control::{self, Request, RoleInfo, Server, Shared, SharedRef, TcpControl, lock};
use crate::prepare::{absolute, prepare};
use crate::runtime_dir::RuntimeDir;
use crate::stack::{Launcher, Stack, live_input};
use crate::summary::{Summary, detect};
use crate::supervise::Supervision;
use crate::{LogArgs, RunOptions, Signals, SupervisorError};

/// The embedded sample, written out before a no-argument run.
const SAMPLE_PCAP: &[u8] = include_bytes!("../../sample/sample.pcap");
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
    let (mut config, inputs) = prepare(opts)?;
    let tcp = tcp_control(&config)?;
    let runtime = RuntimeDir::create(&config)?;
    let config_path = runtime.lay_out(&mut config)?;
    let rt = runtime.path.clone();
    let workers = config.workers();
    let uses_registry = recover_outputs(&config, &inputs)?;
    let api = ControlApi::start(&config, &rt, workers, started, tcp)?;

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
    if let Err(e) = sup.start_roles() {
        lock(&api.shared).state = "stopping";
        return Err(e);
    }
    queue_inputs(&api.shared, &rt, opts, &inputs);
    let outcome = sup.run();
    sup.progress.clear();
    lock(&api.shared).state = "stopping";
    outcome?;
    if uses_registry && let Err(e) = meerkat_capture::pcapdir::close_run(&sup.config) {
        tracing::warn!("{e}");
    }
    summarise(&sup, &rt, workers, started, uses_registry, opts, out)?;
    let _ = std::fs::remove_file(&api.server.socket);
    drop(sup);
    drop(runtime);
    Ok(())
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
    fn start(
        config: &Config,
        rt: &Path,
        workers: usize,
        started: Instant,
        tcp: Option<TcpControl>,
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
        )
        .map_err(SupervisorError::Control)?;
        log_start(config, rt, workers, &server);
        Ok(ControlApi {
            server,
            shared,
            requests: req_rx,
            stop,
        })
    }
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
    s.loaded = detect(rt, 0, meerkat_runtime::counters::DetectCounter::RulesLoaded);
    s.failed = detect(rt, 0, meerkat_runtime::counters::DetectCounter::RulesFailed);
    if let Some(live) = live_input(opts.interface.as_deref(), opts.dpdk) {
        s.pending.push_back(live);
    }
    s.pending.extend(inputs.iter().cloned());
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
