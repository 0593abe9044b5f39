//! The `Control` service: status, counters, rule reload (every worker builds the new
//! ruleset beside the old, then all swap), EVE flush, shutdown, inputs, worker restart.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_proto::control::control_server::Control;
use meerkat_proto::control::worker_control_client::WorkerControlClient;
use meerkat_proto::control::{
    AddPcapReply, AddPcapRequest, CommitRequest, Counter, DatasetReply, DatasetRequest,
    FlushEveReply, FlushEveRequest, Interface, InterfaceStatsReply, InterfaceStatsRequest,
    ListInterfacesReply, ListInterfacesRequest, PrepareReply, PrepareRequest, ReloadRulesReply,
    ReloadRulesRequest, RestartWorkerReply, RestartWorkerRequest, RoleCounters, RoleStatus,
    ShutdownReply, ShutdownRequest, StatsReply, StatsRequest, StatusReply, StatusRequest,
    WorkerFlushRequest,
};
use meerkat_proto::transport::unix_channel;
use meerkat_runtime::counters::{DetectCounter, EveCounter};
use meerkat_runtime::{Role, worker_socket_path};
use prost::Message;
use tokio::sync::oneshot;
use tonic::transport::Channel;
use tonic::{Code, Response, Status};

use super::{Request, SharedRef, lock, read_counters};
use crate::stack::LIVE_INPUT;

/// Errors listed in a reload reply at most (the counts are complete).
const MAX_ERRORS: usize = 1000;
/// Errors carried in a refused reload's status details (an HTTP/2 trailer, size-bound).
const MAX_ERRORS_IN_STATUS: usize = 10;
/// How long a restarted worker may take to be ready (rule loading included).
const RESTART_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a worker may take to build a ruleset.
const PREPARE_TIMEOUT: Duration = Duration::from_secs(600);

pub(super) struct Service {
    /// A reload is running (the unix socket's non-blocking reload refuses a second).
    pub(super) reloading: AtomicBool,
    pub(super) shared: SharedRef,
    pub(super) requests: std::sync::mpsc::Sender<Request>,
    /// Set by `Shutdown`.
    pub(super) stop: Arc<AtomicBool>,
    /// Largest request or reply, bytes.
    pub(super) max_message: usize,
    /// One reload at a time.
    pub(super) reload: tokio::sync::Mutex<()>,
}

impl Service {
    /// Queues an input (`AddPcap`, the unix socket's `pcap-file`): its position in the
    /// queue.
    pub(super) fn queue(&self, path: &str, options: super::InputOptions) -> Result<u32, Status> {
        if path.is_empty() {
            return Err(Status::invalid_argument("add-pcap: the path is empty"));
        }
        let p = std::path::absolute(path).unwrap_or_else(|_| PathBuf::from(path));
        if let Err(e) = meerkat_capture::input_files(&p) {
            return Err(Status::invalid_argument(format!("{e}")));
        }
        let mut s = lock(&self.shared);
        if matches!(s.state, "draining" | "stopping") {
            return Err(Status::failed_precondition(
                "the stack is stopping: no more input is taken",
            ));
        }
        let position = (s.pending.len() + s.current.len()) as u32;
        s.pending.push_back(super::Input { path: p, options });
        Ok(position)
    }

    fn worker_socket(&self, w: usize) -> PathBuf {
        worker_socket_path(&lock(&self.shared).runtime_dir, w)
    }

    pub(super) async fn worker(&self, w: usize) -> Result<WorkerControlClient<Channel>, Status> {
        let ch = unix_channel(&self.worker_socket(w))
            .await
            .map_err(|e| Status::unavailable(format!("detect worker {w} is not reachable: {e}")))?;
        Ok(WorkerControlClient::new(ch)
            .max_decoding_message_size(self.max_message)
            .max_encoding_message_size(self.max_message))
    }

    fn workers(&self) -> usize {
        lock(&self.shared).workers
    }

    /// Brings worker `w`, gone during the reload of `generation`, onto it: waits for
    /// its replacement to answer; one started before the supervisor knew of the new
    /// ruleset (`detect.N.rules_generation` older) builds and swaps it in.
    async fn catch_up(&self, w: usize, generation: u64, paths: &[String]) -> Result<(), Status> {
        tracing::warn!(
            worker = w,
            generation,
            "a detect worker was gone during the reload: its replacement is brought onto \
             the new ruleset"
        );
        let runtime = lock(&self.shared).runtime_dir.clone();
        let deadline = Instant::now() + RESTART_TIMEOUT;
        loop {
            if let Ok(mut c) = self.worker(w).await {
                let running = crate::summary::detect(&runtime, w, DetectCounter::RulesGeneration);
                if running == generation {
                    return Ok(());
                }
                let req = PrepareRequest {
                    generation,
                    rule_files: paths.to_vec(),
                };
                let swapped = match tokio::time::timeout(PREPARE_TIMEOUT, c.prepare(req)).await {
                    Ok(Ok(_)) => c.commit(CommitRequest { generation }).await.map(|_| ()),
                    Ok(Err(s)) => Err(s),
                    Err(_) => Err(Status::deadline_exceeded("prepare timed out")),
                };
                match swapped {
                    Ok(()) => return Ok(()),
                    Err(s) if worker_gone(&s) => {}
                    Err(s) => {
                        return Err(Status::new(
                            s.code(),
                            format!(
                                "detect worker {w} (restarted during the reload) did not \
                                 take generation {generation}: {} (the other workers did; \
                                 reload again to converge)",
                                s.message()
                            ),
                        ));
                    }
                }
            }
            if Instant::now() > deadline {
                return Err(Status::deadline_exceeded(format!(
                    "detect worker {w} died during the reload and was not back within {} s \
                     (the other workers run generation {generation}; it starts on it)",
                    RESTART_TIMEOUT.as_secs()
                )));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn abort_all(&self, generation: u64) {
        for w in 0..self.workers() {
            if let Ok(mut c) = self.worker(w).await {
                let _ = c.abort(CommitRequest { generation }).await;
            }
        }
    }
}

/// Whether a worker call failed because the worker is gone (its process died, or its
/// socket has no server): a transport failure, not an answer.
fn worker_gone(s: &Status) -> bool {
    s.code() == Code::Unavailable
        || (s.code() == Code::Unknown && s.message().contains("transport"))
}

/// The `Status` reply.
pub fn status_of(shared: &SharedRef) -> StatusReply {
    let s = lock(shared);
    StatusReply {
        version: env!("CARGO_PKG_VERSION").to_string(),
        state: s.state.to_string(),
        pid: std::process::id(),
        uptime_ms: s.started.elapsed().as_millis() as u64,
        runtime_dir: s.runtime_dir.display().to_string(),
        log_dir: s.log_dir.display().to_string(),
        roles: s
            .roles
            .iter()
            .map(|r| RoleStatus {
                name: r.name.clone(),
                pid: r.pid,
                state: r.state.to_string(),
                uptime_ms: if r.pid == 0 {
                    0
                } else {
                    r.started.elapsed().as_millis() as u64
                },
                restarts: r.restarts,
                last_exit: r.last_exit.clone(),
            })
            .collect(),
        ruleset_generation: s.generation,
        ruleset_digest: s.digest.clone(),
        rules_loaded: s.loaded,
        rules_failed: s.failed,
        pending_pcaps: s
            .pending
            .iter()
            .map(|i| i.path.display().to_string())
            .collect(),
        current_input: s
            .current
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        workers: s.workers as u32,
    }
}

#[tonic::async_trait]
impl Control for Service {
    async fn status(
        &self,
        _: tonic::Request<StatusRequest>,
    ) -> Result<Response<StatusReply>, Status> {
        Ok(Response::new(status_of(&self.shared)))
    }

    async fn stats(
        &self,
        request: tonic::Request<StatsRequest>,
    ) -> Result<Response<StatsReply>, Status> {
        let prefix = request.into_inner().role;
        let roles: Vec<RoleCounters> = read_counters(&self.shared)
            .into_iter()
            .filter(|(r, _, _)| r.starts_with(&prefix))
            .map(|(role, pid, cs)| RoleCounters {
                role,
                pid,
                counters: cs
                    .into_iter()
                    .map(|(name, value)| Counter { name, value })
                    .collect(),
            })
            .collect();
        if roles.is_empty() && !prefix.is_empty() {
            return Err(Status::not_found(format!(
                "no role named `{prefix}*` has counters (roles: eve-writer, detect-N, capture)"
            )));
        }
        Ok(Response::new(StatsReply { roles }))
    }

    async fn reload_rules(
        &self,
        request: tonic::Request<ReloadRulesRequest>,
    ) -> Result<Response<ReloadRulesReply>, Status> {
        let r = request.into_inner();
        let _one = self.reload.lock().await;
        let started = Instant::now();
        let configured = r.rule_files.is_empty();
        let (generation, files, current) = {
            let s = lock(&self.shared);
            let files = if configured {
                s.configured_rule_files.clone()
            } else {
                r.rule_files.clone()
            };
            (s.generation + 1, files, s.generation)
        };
        let mut paths = Vec::with_capacity(files.len());
        for f in &files {
            let p = std::path::absolute(f).unwrap_or_else(|_| PathBuf::from(f));
            if configured && !p.exists() {
                // As at start: a configured file that is not there is skipped.
                tracing::warn!("No rule files match the pattern {}", p.display());
                continue;
            }
            if std::fs::File::open(&p).is_err() {
                return Err(Status::invalid_argument(format!(
                    "cannot read rule file {}",
                    p.display()
                )));
            }
            paths.push(p.display().to_string());
        }
        if paths.is_empty() {
            return Err(Status::invalid_argument(if files.is_empty() {
                "no rule files: none configured and none given".to_string()
            } else {
                format!(
                    "none of the configured rule files exists ({}): get rules with \
                     suricata-update, or name the files to load",
                    files.join(", ")
                )
            }));
        }
        // Phase 1: every worker builds the new ruleset beside the running one. A worker
        // that is gone (it died: the supervisor starts it again) is left out, and caught
        // up once its replacement answers (below).
        let workers = self.workers();
        let mut gone = vec![false; workers];
        let mut prepares = Vec::with_capacity(workers);
        for (w, gone) in gone.iter_mut().enumerate() {
            let mut c = match self.worker(w).await {
                Ok(c) => c,
                Err(_) => {
                    *gone = true;
                    prepares.push(None);
                    continue;
                }
            };
            let req = PrepareRequest {
                generation,
                rule_files: paths.clone(),
            };
            prepares.push(Some(tokio::spawn(async move {
                tokio::time::timeout(PREPARE_TIMEOUT, c.prepare(req)).await
            })));
        }
        let mut first: Option<PrepareReply> = None;
        for (w, p) in prepares.into_iter().enumerate() {
            let Some(p) = p else { continue };
            let reply = match p.await {
                Ok(Ok(Ok(reply))) => reply.into_inner(),
                Ok(Ok(Err(status))) if worker_gone(&status) => {
                    gone[w] = true;
                    continue;
                }
                Ok(Ok(Err(status))) => {
                    self.abort_all(generation).await;
                    return Err(Status::new(
                        status.code(),
                        format!("detect worker {w}: {}", status.message()),
                    ));
                }
                Ok(Err(_)) => {
                    self.abort_all(generation).await;
                    return Err(Status::deadline_exceeded(format!(
                        "detect worker {w} did not build the ruleset within {} s",
                        PREPARE_TIMEOUT.as_secs()
                    )));
                }
                Err(e) => {
                    self.abort_all(generation).await;
                    return Err(Status::internal(format!("reload task: {e}")));
                }
            };
            if first.is_none() {
                first = Some(reply);
            }
        }
        let Some(built) = first else {
            return Err(if workers == 0 {
                Status::failed_precondition("the stack has no detect workers")
            } else {
                Status::unavailable("no detect worker is reachable: the ruleset was not built")
            });
        };
        let mut reply = ReloadRulesReply {
            generation,
            digest: built.digest.clone(),
            loaded: built.loaded,
            failed: built.failed,
            errors: built.errors.into_iter().take(MAX_ERRORS).collect(),
            applied: false,
            duration_ms: 0,
            swap_ms: 0,
        };
        if built.failed > 0 && !r.allow_errors {
            self.abort_all(generation).await;
            reply.generation = current;
            reply.duration_ms = started.elapsed().as_millis() as u64;
            // Status details travel in an HTTP/2 trailer: keep them small.
            reply.errors.truncate(MAX_ERRORS_IN_STATUS);
            for e in &mut reply.errors {
                if e.len() > 300 {
                    let mut cut = 300;
                    while !e.is_char_boundary(cut) {
                        cut -= 1;
                    }
                    e.truncate(cut);
                }
            }
            let first_error = reply.errors.first().cloned().unwrap_or_default();
            // The full reply rides in the status details for `ctl --json`.
            return Err(Status::with_details(
                Code::FailedPrecondition,
                format!(
                    "ruleset refused: {} of {} rules do not load (first: {first_error}); \
                     generation {current} keeps running (allow_errors to swap anyway)",
                    reply.failed,
                    reply.failed + reply.loaded
                ),
                reply.encode_to_vec().into(),
            ));
        }
        // Phase 2: swap in every worker (all at once: each between two of its ring
        // batches).
        let swap_started = Instant::now();
        let mut commits = Vec::with_capacity(workers);
        let live: Vec<usize> = (0..workers).filter(|&w| !gone[w]).collect();
        for w in live {
            let Ok(mut c) = self.worker(w).await else {
                gone[w] = true;
                continue;
            };
            commits.push((
                w,
                tokio::spawn(async move { c.commit(CommitRequest { generation }).await }),
            ));
        }
        for (w, t) in commits {
            let failed = match t.await {
                Ok(Ok(_)) => continue,
                Ok(Err(s)) if worker_gone(&s) => {
                    gone[w] = true;
                    continue;
                }
                Ok(Err(s)) => s,
                Err(e) => Status::internal(format!("commit task: {e}")),
            };
            return Err(Status::new(
                failed.code(),
                format!(
                    "detect worker {w} did not swap in generation {generation}: {} \
                     (the other workers did; reload again to converge)",
                    failed.message()
                ),
            ));
        }
        {
            let mut s = lock(&self.shared);
            s.generation = generation;
            s.digest = reply.digest.clone();
            s.loaded = reply.loaded;
            s.failed = reply.failed;
            s.rule_files = paths.clone();
            if !configured {
                s.configured_rule_files = paths.clone();
            }
            s.last_reload = std::time::SystemTime::now();
        }
        let _ = self.requests.send(Request::RulesChanged(paths.clone()));
        for w in (0..workers).filter(|&w| gone[w]) {
            self.catch_up(w, generation, &paths).await?;
        }
        reply.applied = true;
        reply.swap_ms = swap_started.elapsed().as_millis() as u64;
        reply.duration_ms = started.elapsed().as_millis() as u64;
        tracing::info!(
            generation,
            loaded = reply.loaded,
            failed = reply.failed,
            ms = reply.duration_ms,
            swap_ms = reply.swap_ms,
            "rules reloaded"
        );
        Ok(Response::new(reply))
    }

    async fn flush_eve(
        &self,
        request: tonic::Request<FlushEveRequest>,
    ) -> Result<Response<FlushEveReply>, Status> {
        let timeout_ms = match request.into_inner().timeout_ms {
            0 => 10_000,
            t => t,
        };
        let mut tasks = Vec::new();
        for w in 0..self.workers() {
            let mut c = self.worker(w).await?;
            tasks.push(tokio::spawn(async move {
                c.flush(WorkerFlushRequest { timeout_ms }).await
            }));
        }
        let mut complete = true;
        for (w, t) in tasks.into_iter().enumerate() {
            match t.await {
                Ok(Ok(r)) => complete &= r.into_inner().complete,
                Ok(Err(s)) => {
                    return Err(Status::new(
                        s.code(),
                        format!("detect worker {w}: {}", s.message()),
                    ));
                }
                Err(e) => return Err(Status::internal(format!("flush task: {e}"))),
            }
        }
        let held_bytes = read_counters(&self.shared)
            .into_iter()
            .find(|(r, _, _)| r.parse() == Ok(Role::EveWriter))
            .and_then(|(_, _, cs)| {
                cs.into_iter()
                    .find(|(n, _)| n == EveCounter::HeldBytes.name())
            })
            .map_or(0, |(_, v)| v);
        if !complete {
            return Err(Status::deadline_exceeded(format!(
                "not every event was written within {timeout_ms} ms"
            )));
        }
        Ok(Response::new(FlushEveReply {
            complete,
            held_bytes,
        }))
    }

    async fn shutdown(
        &self,
        _: tonic::Request<ShutdownRequest>,
    ) -> Result<Response<ShutdownReply>, Status> {
        tracing::info!("shutdown asked through the control socket");
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.requests.send(Request::Shutdown);
        Ok(Response::new(ShutdownReply {}))
    }

    async fn list_interfaces(
        &self,
        _: tonic::Request<ListInterfacesRequest>,
    ) -> Result<Response<ListInterfacesReply>, Status> {
        let s = lock(&self.shared);
        let one = |p: &PathBuf, state: &str| {
            let path = p.display().to_string();
            let kind = match path.strip_prefix("live:") {
                Some(live) => live.split(':').next().unwrap_or(live).to_string(),
                None => "pcap-file".to_string(),
            };
            Interface {
                name: source_name(p),
                kind,
                state: state.to_string(),
            }
        };
        let mut interfaces: Vec<Interface> = s.done.iter().map(|p| one(p, "done")).collect();
        interfaces.extend(s.current.iter().map(|p| one(p, "reading")));
        interfaces.extend(s.pending.iter().map(|i| one(&i.path, "queued")));
        Ok(Response::new(ListInterfacesReply { interfaces }))
    }

    async fn interface_stats(
        &self,
        request: tonic::Request<InterfaceStatsRequest>,
    ) -> Result<Response<InterfaceStatsReply>, Status> {
        let name = request.into_inner().name;
        let current: Vec<String> = {
            let s = lock(&self.shared);
            if !name.is_empty()
                && !s
                    .current
                    .iter()
                    .chain(&s.done)
                    .chain(s.pending.iter().map(|i| &i.path))
                    .any(|p| source_name(p) == name)
            {
                return Err(Status::not_found(format!("no packet source named {name}")));
            }
            s.current.iter().map(|p| source_name(p)).collect()
        };
        // Capture's page holds the counters of the source it reads now (or read last).
        if !name.is_empty() && !current.contains(&name) {
            return Err(Status::failed_precondition(format!(
                "{name} is not being read now: its counters are not kept (see `stats`)"
            )));
        }
        let counters = read_counters(&self.shared)
            .into_iter()
            .find(|(r, _, _)| r.parse() == Ok(Role::Capture))
            .map(|(_, _, cs)| cs)
            .ok_or_else(|| Status::unavailable("capture has no counters (not started yet)"))?;
        Ok(Response::new(InterfaceStatsReply {
            name: if name.is_empty() {
                current.join(", ")
            } else {
                name
            },
            counters: counters
                .into_iter()
                .map(|(name, value)| Counter { name, value })
                .collect(),
        }))
    }

    async fn add_pcap(
        &self,
        request: tonic::Request<AddPcapRequest>,
    ) -> Result<Response<AddPcapReply>, Status> {
        let path = request.into_inner().path;
        let position = self.queue(&path, super::InputOptions::default())?;
        Ok(Response::new(AddPcapReply { position }))
    }

    async fn dataset(
        &self,
        request: tonic::Request<DatasetRequest>,
    ) -> Result<Response<DatasetReply>, Status> {
        let r = request.into_inner();
        let command = format!("dataset-{}", r.command);
        if !["add", "remove", "lookup", "clear", "dump"].contains(&r.command.as_str()) {
            return Err(Status::invalid_argument(format!(
                "unknown dataset command `{}` (add, remove, lookup, clear, dump)",
                r.command
            )));
        }
        let rt = super::lock(&self.shared).runtime_dir.clone();
        let (ok, message) =
            super::unix_commands::dataset_command(&rt, &command, &r.name, &r.kind, &r.value);
        Ok(Response::new(DatasetReply {
            ok,
            message: message.to_string(),
        }))
    }

    async fn restart_worker(
        &self,
        request: tonic::Request<RestartWorkerRequest>,
    ) -> Result<Response<RestartWorkerReply>, Status> {
        let w = request.into_inner().worker as usize;
        let workers = self.workers();
        if w >= workers {
            return Err(Status::invalid_argument(format!(
                "no detect worker {w} (the stack has {workers}: 0..{})",
                workers.saturating_sub(1)
            )));
        }
        let (tx, rx) = oneshot::channel();
        self.requests
            .send(Request::RestartWorker(w, tx))
            .map_err(|_| Status::unavailable("the supervisor is stopping"))?;
        match tokio::time::timeout(RESTART_TIMEOUT, rx).await {
            Ok(Ok(Ok(pid))) => Ok(Response::new(RestartWorkerReply { pid })),
            Ok(Ok(Err(e))) => Err(Status::failed_precondition(e)),
            Ok(Err(_)) => Err(Status::unavailable("the supervisor is stopping")),
            Err(_) => Err(Status::deadline_exceeded(format!(
                "detect worker {w} did not restart within {} s",
                RESTART_TIMEOUT.as_secs()
            ))),
        }
    }
}

/// The name of an input as `ListInterfaces` shows it: the path, or a live source's
/// interface (`live:af-packet:eth0` -> `eth0`, `live:dpdk` -> `dpdk`).
fn source_name(p: &Path) -> String {
    let name = p.display().to_string();
    match name.strip_prefix(LIVE_INPUT) {
        Some(live) => live.rsplit(':').next().unwrap_or(live).to_string(),
        None => name,
    }
}
