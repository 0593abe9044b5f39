//! The supervisor's control API: the `Control` gRPC service (`proto/control.proto`) and
//! the standard `grpc.health.v1.Health` service on a Unix socket with owner-only
//! permissions (`control.socket`, default `<runtime-dir>/control.sock`), and the optional
//! Prometheus text endpoint (`control.metrics-listen`).
//!
//! The same two services may also be served on TCP (`control.listen`), only with a way to
//! tell who calls: a bearer token (`control.token-file`) checked on every call, health
//! checks included, and/or mutual TLS (`control.tls-client-ca`). `control.tls-cert` +
//! `control.tls-key` put TLS (rustls, see `tls.rs`) on the TCP listener; a handshake that
//! fails (plain text, an untrusted or missing client certificate) drops that one
//! connection and nothing else. The Prometheus endpoint stays plain HTTP without
//! authentication (it only reads counters; bind it to loopback or a scrape network).
//!
//! Everything runs on one thread with its own tokio runtime, beside the supervisor loop
//! (`supervisor.rs`). The two share [`Shared`] (what `Status` reports, the input queue)
//! under a mutex; requests that change the process tree (`Shutdown`, `RestartWorker`)
//! are handed to the loop as [`Request`]s. Rule reloads and EVE flushes talk to each
//! detect worker's own `WorkerControl` socket directly (see `detect::control`).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use anyhow::{Context, anyhow};
use hyper_util::rt::TokioIo;
use meerkat_proto::control::control_server::{Control, ControlServer};
use meerkat_proto::control::worker_control_client::WorkerControlClient;
use meerkat_proto::control::{
    AddPcapReply, AddPcapRequest, CommitRequest, Counter, FlushEveReply, FlushEveRequest,
    Interface, InterfaceStatsReply, InterfaceStatsRequest, ListInterfacesReply,
    ListInterfacesRequest, PrepareReply, PrepareRequest, ReloadRulesReply, ReloadRulesRequest,
    RestartWorkerReply, RestartWorkerRequest, RoleCounters, RoleStatus, ShutdownReply,
    ShutdownRequest, StatsReply, StatsRequest, StatusReply, StatusRequest, WorkerFlushRequest,
};
use meerkat_runtime::counters::{self, EveCounter};
use meerkat_runtime::{Role, counters_path, worker_socket_path};
use meerkat_shm::CounterReader;
use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::transport::{Channel, Endpoint, Uri};
use tonic::{Code, Response, Status};

/// Errors listed in a reload reply at most (the counts are complete).
const MAX_ERRORS: usize = 1000;
/// Errors carried in a refused reload's status details (an HTTP/2 trailer, size-bound).
const MAX_ERRORS_IN_STATUS: usize = 10;
/// How long a restarted worker may take to be ready (rule loading included).
const RESTART_TIMEOUT: Duration = Duration::from_secs(600);
/// How long a worker may take to build a ruleset.
const PREPARE_TIMEOUT: Duration = Duration::from_secs(600);

/// One role as `Status` reports it.
#[derive(Debug, Clone)]
pub struct RoleInfo {
    pub name: String,
    pub pid: u32,
    pub state: &'static str,
    pub started: Instant,
    pub restarts: u32,
    pub last_exit: String,
}

/// The state the supervisor loop and the control service share.
#[derive(Debug)]
pub struct Shared {
    pub state: &'static str,
    pub started: Instant,
    pub runtime_dir: PathBuf,
    pub log_dir: PathBuf,
    pub roles: Vec<RoleInfo>,
    pub workers: usize,
    pub generation: u64,
    pub digest: String,
    pub loaded: u64,
    pub failed: u64,
    /// Rule files of the running ruleset (absolute).
    pub rule_files: Vec<String>,
    /// Inputs queued by `AddPcap` (or left after the current one).
    pub pending: VecDeque<PathBuf>,
    /// Inputs being read now.
    pub current: Vec<PathBuf>,
    /// Inputs read to the end.
    pub done: Vec<PathBuf>,
}

/// Work for the supervisor loop.
#[derive(Debug)]
pub enum Request {
    /// Drain and stop.
    Shutdown,
    /// Stop worker N (it drains) and start it again; answers with the new pid.
    RestartWorker(usize, oneshot::Sender<Result<u32, String>>),
    /// A reload replaced the rule files: write them into the roles' config.
    RulesChanged(Vec<String>),
}

pub type SharedRef = Arc<Mutex<Shared>>;

/// Locks the shared state. Every update is a few plain stores, so a panic elsewhere
/// cannot leave it half-written: a poisoned lock is still usable.
pub fn lock(s: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// A gRPC channel over a Unix socket (the URI is a placeholder).
pub async fn unix_channel(path: &Path) -> Result<Channel, tonic::transport::Error> {
    let path = path.to_path_buf();
    Endpoint::from_static("http://meerkat.local")
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let path = path.clone();
            async move {
                Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(path).await?))
            }
        }))
        .await
}

/// One role's counter page: (role, pid, counters).
pub type Page = (String, u32, Vec<(String, u64)>);

/// Every counter page of the stack, roles in `Shared` order.
fn read_counters(shared: &SharedRef) -> Vec<Page> {
    let (rt, roles) = {
        let s = lock(shared);
        let names: Vec<String> = s.roles.iter().map(|r| r.name.clone()).collect();
        (s.runtime_dir.clone(), names)
    };
    roles
        .into_iter()
        .filter_map(|role| {
            let r = CounterReader::open(&counters_path(&rt, role.parse().ok()?)).ok()?;
            let counters = r.iter().map(|(n, v)| (n.to_string(), v)).collect();
            Some((role, r.pid(), counters))
        })
        .collect()
}

struct Service {
    shared: SharedRef,
    requests: std::sync::mpsc::Sender<Request>,
    stop: Arc<AtomicBool>,
    max_message: usize,
    /// One reload at a time.
    reload: tokio::sync::Mutex<()>,
}

impl Service {
    fn worker_socket(&self, w: usize) -> PathBuf {
        worker_socket_path(&lock(&self.shared).runtime_dir, w)
    }

    async fn worker(&self, w: usize) -> Result<WorkerControlClient<Channel>, Status> {
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

    async fn abort_all(&self, generation: u64) {
        for w in 0..self.workers() {
            if let Ok(mut c) = self.worker(w).await {
                let _ = c.abort(CommitRequest { generation }).await;
            }
        }
    }
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
        pending_pcaps: s.pending.iter().map(|p| p.display().to_string()).collect(),
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
        let (generation, files, current) = {
            let s = lock(&self.shared);
            let files = if r.rule_files.is_empty() {
                s.rule_files.clone()
            } else {
                r.rule_files.clone()
            };
            (s.generation + 1, files, s.generation)
        };
        let mut paths = Vec::with_capacity(files.len());
        for f in &files {
            let p = std::path::absolute(f).unwrap_or_else(|_| PathBuf::from(f));
            if std::fs::File::open(&p).is_err() {
                return Err(Status::invalid_argument(format!(
                    "cannot read rule file {}",
                    p.display()
                )));
            }
            paths.push(p.display().to_string());
        }
        if paths.is_empty() {
            return Err(Status::invalid_argument(
                "no rule files: none configured and none given",
            ));
        }
        // Phase 1: every worker builds the new ruleset beside the running one.
        let workers = self.workers();
        let mut prepares = Vec::with_capacity(workers);
        for w in 0..workers {
            let mut c = match self.worker(w).await {
                Ok(c) => c,
                Err(e) => {
                    self.abort_all(generation).await;
                    return Err(e);
                }
            };
            let req = PrepareRequest {
                generation,
                rule_files: paths.clone(),
            };
            prepares.push(tokio::spawn(async move {
                tokio::time::timeout(PREPARE_TIMEOUT, c.prepare(req)).await
            }));
        }
        let mut first: Option<PrepareReply> = None;
        for (w, p) in prepares.into_iter().enumerate() {
            let reply = match p.await {
                Ok(Ok(Ok(reply))) => reply.into_inner(),
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
            return Err(Status::failed_precondition(
                "the stack has no detect workers",
            ));
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
        for w in 0..workers {
            let mut c = self.worker(w).await?;
            commits.push(tokio::spawn(async move {
                c.commit(CommitRequest { generation }).await
            }));
        }
        for (w, t) in commits.into_iter().enumerate() {
            let failed = match t.await {
                Ok(Ok(_)) => continue,
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
        }
        let _ = self.requests.send(Request::RulesChanged(paths));
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
        interfaces.extend(s.pending.iter().map(|p| one(p, "queued")));
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
                    .chain(&s.pending)
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
        if path.is_empty() {
            return Err(Status::invalid_argument("add-pcap: the path is empty"));
        }
        let p = std::path::absolute(&path).unwrap_or_else(|_| PathBuf::from(&path));
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
        s.pending.push_back(p);
        Ok(Response::new(AddPcapReply { position }))
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
    match name.strip_prefix("live:") {
        Some(live) => live.rsplit(':').next().unwrap_or(live).to_string(),
        None => name,
    }
}

/// Prometheus text of every counter. Names are stable: `meerkat_` + the counter name with
/// the worker index moved to a `worker` label (the only label, bounded by
/// `detect.workers`); every dot or dash becomes `_`.
pub fn prometheus_text(pages: &[Page]) -> String {
    use std::collections::BTreeMap;
    use std::fmt::Write;
    // name -> [(labels, value)]
    let mut metrics: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
    for (_, _, counters) in pages {
        for (name, value) in counters {
            let (metric, label) = match counters::split_worker(name) {
                Some((metric, n)) => (metric, format!("worker=\"{n}\"")),
                None => (name.clone(), String::new()),
            };
            let metric: String = format!("meerkat_{metric}")
                .chars()
                .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                .collect();
            metrics.entry(metric).or_default().push((label, *value));
        }
    }
    let mut out = String::new();
    for (name, samples) in metrics {
        let _ = writeln!(out, "# TYPE {name} untyped");
        for (label, value) in samples {
            if label.is_empty() {
                let _ = writeln!(out, "{name} {value}");
            } else {
                let _ = writeln!(out, "{name}{{{label}}} {value}");
            }
        }
    }
    out
}

/// Serves `GET /metrics` (HTTP/1.0 style: one request per connection).
async fn serve_metrics(listener: tokio::net::TcpListener, shared: SharedRef) {
    loop {
        let Ok((mut sock, _)) = listener.accept().await else {
            continue;
        };
        let shared = shared.clone();
        tokio::spawn(async move {
            let mut buf = vec![0u8; 4096];
            let mut n = 0;
            // Read the request head (bounded; a slow client gets 5 s).
            let read = tokio::time::timeout(Duration::from_secs(5), async {
                while n < buf.len() {
                    let m = sock.read(&mut buf[n..]).await?;
                    if m == 0 {
                        break;
                    }
                    n += m;
                    if buf[..n].windows(4).any(|w| w == b"\r\n\r\n") {
                        break;
                    }
                }
                Ok::<_, std::io::Error>(())
            })
            .await;
            if !matches!(read, Ok(Ok(()))) {
                return;
            }
            let head = String::from_utf8_lossy(&buf[..n]);
            let line = head.lines().next().unwrap_or("");
            let mut it = line.split_whitespace();
            let (method, path) = (it.next().unwrap_or(""), it.next().unwrap_or(""));
            let (status, ctype, body) = if method != "GET" {
                (
                    "405 Method Not Allowed",
                    "text/plain",
                    "GET only\n".to_string(),
                )
            } else if path != "/metrics" && !path.starts_with("/metrics?") {
                ("404 Not Found", "text/plain", "see /metrics\n".to_string())
            } else {
                (
                    "200 OK",
                    "text/plain; version=0.0.4",
                    prometheus_text(&read_counters(&shared)),
                )
            };
            let resp = format!(
                "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(resp.as_bytes()).await;
            let _ = sock.shutdown().await;
        });
    }
}

/// The running control service (its thread ends with the process).
#[derive(Debug)]
pub struct Server {
    pub socket: PathBuf,
    pub metrics: Option<std::net::SocketAddr>,
    pub tcp: Option<std::net::SocketAddr>,
}

/// TCP control: where, the bearer token every call must carry (if set), and TLS (if set;
/// with a client CA, mutual TLS).
#[derive(Debug, Clone)]
pub struct TcpControl {
    pub listen: String,
    pub token: Option<String>,
    pub tls: Option<tonic::transport::ServerTlsConfig>,
}

/// Reads the bearer token of `control.token-file` (surrounding whitespace dropped).
pub fn read_token(path: &Path) -> anyhow::Result<String> {
    let t = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read control token file {}", path.display()))?;
    let t = t.trim().to_string();
    if t.len() < 16 || !t.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(anyhow!(
            "control token in {} must be at least 16 printable characters without spaces",
            path.display()
        ));
    }
    Ok(t)
}

/// Refuses a call without `authorization: Bearer <token>` (compared in constant time).
/// Without a token configured (mutual TLS alone authenticates), every call passes.
#[derive(Clone)]
struct BearerCheck {
    expected: Option<Arc<Vec<u8>>>,
}

impl tonic::service::Interceptor for BearerCheck {
    fn call(&mut self, req: tonic::Request<()>) -> Result<tonic::Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(req);
        };
        let given = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::as_bytes)
            .unwrap_or_default();
        let same = given.len() == expected.len()
            && given
                .iter()
                .zip(expected.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if same {
            Ok(req)
        } else {
            Err(Status::unauthenticated(
                "the control API on TCP needs `authorization: Bearer <token>` \
                 (meerkat ctl --token-file)",
            ))
        }
    }
}

/// Binds the control socket (mode 0600 from the start: created under umask 077) and the
/// metrics listener, and serves them on a thread of their own.
#[allow(clippy::too_many_arguments)]
pub fn start(
    socket: &Path,
    metrics_listen: Option<&str>,
    tcp: Option<TcpControl>,
    max_message: usize,
    shared: SharedRef,
    requests: std::sync::mpsc::Sender<Request>,
    stop: Arc<AtomicBool>,
) -> anyhow::Result<Server> {
    if let Some(dir) = socket.parent() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the directory of {}", socket.display()))?;
    }
    // A socket file left by a dead stack is replaced; a live one is not.
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        return Err(anyhow!(
            "control socket {} is in use by another running stack",
            socket.display()
        ));
    }
    let _ = std::fs::remove_file(socket);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("control runtime")?;
    let listener = {
        let _guard = rt.enter();
        // SAFETY: umask only changes this process's file creation mask; restored below.
        let old = unsafe { libc::umask(0o177) };
        let l = tokio::net::UnixListener::bind(socket);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        l.with_context(|| format!("cannot bind control socket {}", socket.display()))?
    };
    let metrics = match metrics_listen {
        Some(addr) => {
            let _guard = rt.enter();
            let std_listener = std::net::TcpListener::bind(addr)
                .with_context(|| format!("cannot listen for metrics on {addr}"))?;
            std_listener.set_nonblocking(true)?;
            let local = std_listener.local_addr()?;
            Some((tokio::net::TcpListener::from_std(std_listener)?, local))
        }
        None => None,
    };
    let metrics_addr = metrics.as_ref().map(|(_, a)| *a);
    let tcp = match tcp {
        Some(t) => {
            let _guard = rt.enter();
            let l = std::net::TcpListener::bind(&t.listen)
                .with_context(|| format!("cannot listen for control on {}", t.listen))?;
            l.set_nonblocking(true)?;
            let local = l.local_addr()?;
            // The TLS setup is checked here, before anything serves: a bad identity stops
            // the start with its reason.
            let builder = match t.tls {
                Some(tls) => tonic::transport::Server::builder()
                    .tls_config(tls)
                    .context("cannot set up TLS for the control API")?,
                None => tonic::transport::Server::builder(),
            };
            Some((
                tokio::net::TcpListener::from_std(l)?,
                local,
                t.token,
                builder,
            ))
        }
        None => None,
    };
    let tcp_addr = tcp.as_ref().map(|(_, a, _, _)| *a);
    let service = Arc::new(Service {
        shared: shared.clone(),
        requests,
        stop,
        max_message,
        reload: tokio::sync::Mutex::new(()),
    });
    let (health, health_service) = tonic_health::server::health_reporter();
    std::thread::Builder::new()
        .name("control".to_string())
        .spawn(move || {
            rt.block_on(async move {
                if let Some((l, _)) = metrics {
                    tokio::spawn(serve_metrics(l, shared.clone()));
                }
                if let Some((l, _, token, mut builder)) = tcp {
                    let check = BearerCheck {
                        expected: token.map(|t| Arc::new(t.into_bytes())),
                    };
                    let control = tonic::service::interceptor::InterceptedService::new(
                        ControlServer::from_arc(service.clone())
                            .max_decoding_message_size(max_message)
                            .max_encoding_message_size(max_message),
                        check.clone(),
                    );
                    let health = tonic::service::interceptor::InterceptedService::new(
                        health_service.clone(),
                        check,
                    );
                    let server = builder
                        .add_service(health)
                        .add_service(control)
                        .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l));
                    tokio::spawn(async move {
                        if let Err(e) = server.await {
                            tracing::error!("control service on TCP stopped: {e}");
                        }
                    });
                }
                // Health follows the stack's state.
                let watched = shared.clone();
                tokio::spawn(async move {
                    let mut last = None;
                    loop {
                        let serving =
                            lock(&watched).state == "running" || lock(&watched).state == "idle";
                        if last != Some(serving) {
                            let st = if serving {
                                tonic_health::ServingStatus::Serving
                            } else {
                                tonic_health::ServingStatus::NotServing
                            };
                            health.set_service_status("", st).await;
                            health
                                .set_service_status("meerkat.control.v1.Control", st)
                                .await;
                            last = Some(serving);
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                });
                let served = tonic::transport::Server::builder()
                    .add_service(health_service)
                    .add_service(
                        ControlServer::from_arc(service)
                            .max_decoding_message_size(max_message)
                            .max_encoding_message_size(max_message),
                    )
                    .serve_with_incoming(UnixListenerStream::new(listener))
                    .await;
                if let Err(e) = served {
                    tracing::error!("control service stopped: {e}");
                }
            });
        })
        .context("cannot start the control thread")?;
    Ok(Server {
        socket: socket.to_path_buf(),
        metrics: metrics_addr,
        tcp: tcp_addr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_names_are_stable_and_labels_bounded() {
        let pages = vec![
            (
                "detect-0".to_string(),
                1,
                vec![
                    ("detect.0.packets".to_string(), 5),
                    ("detect.0.alerts".to_string(), 2),
                ],
            ),
            (
                "detect-1".to_string(),
                2,
                vec![("detect.1.packets".to_string(), 7)],
            ),
            (
                "capture".to_string(),
                3,
                vec![
                    ("capture.packets".to_string(), 12),
                    ("capture.worker.1.packets".to_string(), 7),
                ],
            ),
            (
                "eve-writer".to_string(),
                4,
                vec![("eve.events.alert".to_string(), 2)],
            ),
        ];
        let text = prometheus_text(&pages);
        assert!(text.contains("# TYPE meerkat_detect_packets untyped\n"));
        assert!(text.contains("meerkat_detect_packets{worker=\"0\"} 5\n"));
        assert!(text.contains("meerkat_detect_packets{worker=\"1\"} 7\n"));
        assert!(text.contains("meerkat_capture_packets 12\n"));
        assert!(text.contains("meerkat_capture_worker_packets{worker=\"1\"} 7\n"));
        assert!(text.contains("meerkat_eve_events_alert 2\n"));
        // One TYPE line per metric, not per worker.
        assert_eq!(text.matches("# TYPE meerkat_detect_packets ").count(), 1);
    }
}
