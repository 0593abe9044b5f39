//! A detect worker's control channel: the `WorkerControl` gRPC service (see
//! `proto/control.proto`) on `<runtime-dir>/detect-<n>.sock`, served by a thread of its
//! own, for the supervisor.
//!
//! - **Rule reload, in two phases.** `Prepare` reads and parses the rule files and builds
//!   a whole new [`Engine`] on a blocking thread of this service while the worker keeps
//!   inspecting with the old one; `Commit` hands the new engine to the worker loop, which
//!   swaps it in between two ring batches (no packet waits for a build, none is dropped)
//!   and gives the old engine back to be freed here, off the packet path. `Abort` drops
//!   a prepared engine. Flowbit, flowint and xbit names keep their numbers across a
//!   reload (the new ruleset is numbered after the running one), so live flows keep
//!   their variables.
//! - **Flush.** The worker hands its pending events to the event client with a flush
//!   request; the reply comes once the eve-writer has acknowledged all of them.
//! - **EndInput.** As at the end of the input: once the ring is empty, every flow ends
//!   (its `flow` record written) and held fragments go; the reply comes as for Flush.
//!   The supervisor uses it between the pcaps of the unix-socket run mode.
//! - **FlowStats** (a live flow's counters by flow id) and **Variables** (the ruleset's
//!   xbit/hostbit names) answer the unix socket's `get-flow-stats-by-id` and hostbit
//!   commands.
//!
//! The worker loop polls the command channel once per ring batch (a non-blocking
//! `try_recv`), never per packet.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use meerkat_proto::control::worker_control_server::{WorkerControl, WorkerControlServer};
use meerkat_proto::control::{
    CommitReply, CommitRequest, FlowStatsReply, FlowStatsRequest, PrepareReply, PrepareRequest,
    VariablesReply, VariablesRequest, WorkerFlushReply, WorkerFlushRequest,
};
use tokio::sync::oneshot;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::{Request, Response, Status};

use crate::DetectError;
use crate::engine::{Engine, mpm::Algo};
use crate::rules::{self, Names, RuleContext};
use crate::sink::SinkStats;

/// Rule problems listed in a reply at most (the counts are always complete).
pub const MAX_REPORTED_ERRORS: usize = 1000;
/// How long a commit waits for the worker loop to take the new engine.
const SWAP_TIMEOUT: Duration = Duration::from_secs(60);
/// Largest control message, bytes.
const MAX_MESSAGE: usize = 4 << 20;

/// Work for the worker loop.
#[derive(Debug)]
pub enum Command {
    /// Use this engine from the next ring batch on; send the old one back.
    Swap {
        generation: u64,
        engine: Box<Engine>,
        reply: oneshot::Sender<Box<Engine>>,
    },
    /// Hand pending events over with a flush request; answer with the handoff count to
    /// wait for (see `EventSink::flush_mark`).
    Flush { reply: oneshot::Sender<u64> },
    /// Once the ring is empty, end every flow as at the end of the input, then answer as
    /// `Flush` does.
    EndInput { reply: oneshot::Sender<u64> },
    /// The counters of the flow with this id, if it is live.
    FlowStats {
        id: u64,
        reply: oneshot::Sender<Option<FlowStatsReply>>,
    },
}

struct Prepared {
    generation: u64,
    engine: Engine,
}

struct State {
    /// Names of the running ruleset (a new one is numbered after them).
    names: Names,
    prepared: Option<Prepared>,
}

/// What the service needs to build rulesets.
#[derive(Debug, Clone)]
pub struct Setup {
    pub index: usize,
    pub ctx: RuleContext,
    pub algo: Algo,
    /// Names of the ruleset the worker started with.
    pub names: Names,
    pub sink: Arc<SinkStats>,
}

struct Service {
    setup: Setup,
    state: Arc<Mutex<State>>,
    worker: std::sync::mpsc::Sender<Command>,
}

fn lock(state: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    // A panic while holding the lock cannot leave State half-updated (single field
    // stores), so a poisoned lock is still usable.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

#[tonic::async_trait]
impl WorkerControl for Service {
    async fn prepare(
        &self,
        request: Request<PrepareRequest>,
    ) -> Result<Response<PrepareReply>, Status> {
        let r = request.into_inner();
        if r.rule_files.is_empty() {
            return Err(Status::invalid_argument("prepare: no rule files"));
        }
        let paths: Vec<PathBuf> = r.rule_files.iter().map(PathBuf::from).collect();
        let ctx = self.setup.ctx.clone();
        let algo = self.setup.algo;
        let names = lock(&self.state).names.clone();
        let index = self.setup.index;
        let started = Instant::now();
        let built = tokio::task::spawn_blocking(move || {
            let digest = rules::ruleset_digest(&paths)?;
            // threshold.config is read again with the rules (the context names it).
            let loaded = rules::load_files_with_names(&paths, &ctx, names)?;
            if index == 0 {
                loaded.log_threshold_problems();
            }
            let errors: Vec<String> = loaded
                .problems
                .iter()
                .map(|p| p.to_string())
                .chain(
                    loaded
                        .threshold_problems
                        .iter()
                        .map(|p| format!("threshold-file: {p}")),
                )
                .take(MAX_REPORTED_ERRORS)
                .collect();
            let (n, failed) = (loaded.rules.len(), loaded.problems.len());
            let engine = Engine::with_algo(loaded.rules, loaded.names, algo);
            Ok::<_, String>((digest, n, failed, errors, engine))
        })
        .await
        .map_err(|e| Status::internal(format!("ruleset build failed: {e}")))?;
        let (digest, loaded, failed, errors, engine) =
            built.map_err(Status::failed_precondition)?;
        tracing::info!(
            worker = self.setup.index,
            generation = r.generation,
            rules = loaded,
            failed,
            ms = started.elapsed().as_millis() as u64,
            "ruleset prepared"
        );
        lock(&self.state).prepared = Some(Prepared {
            generation: r.generation,
            engine,
        });
        Ok(Response::new(PrepareReply {
            generation: r.generation,
            digest,
            loaded: loaded as u64,
            failed: failed as u64,
            errors,
            build_ms: started.elapsed().as_millis() as u64,
        }))
    }

    async fn commit(
        &self,
        request: Request<CommitRequest>,
    ) -> Result<Response<CommitReply>, Status> {
        let generation = request.into_inner().generation;
        let prepared = {
            let mut st = lock(&self.state);
            match st.prepared.take() {
                Some(p) if p.generation == generation => p,
                other => {
                    st.prepared = other;
                    return Err(Status::failed_precondition(format!(
                        "no ruleset prepared for generation {generation}"
                    )));
                }
            }
        };
        let names = prepared.engine.names.clone();
        let (tx, rx) = oneshot::channel();
        self.worker
            .send(Command::Swap {
                generation,
                engine: Box::new(prepared.engine),
                reply: tx,
            })
            .map_err(|_| Status::unavailable("the worker loop has stopped"))?;
        let old = tokio::time::timeout(SWAP_TIMEOUT, rx)
            .await
            .map_err(|_| {
                Status::deadline_exceeded(format!(
                    "the worker did not take the new ruleset within {} s",
                    SWAP_TIMEOUT.as_secs()
                ))
            })?
            .map_err(|_| Status::unavailable("the worker loop has stopped"))?;
        lock(&self.state).names = names;
        // Freeing a large engine takes a while (hundreds of ms for ET Open): not on the
        // packet path, and not before the reply.
        drop(tokio::task::spawn_blocking(move || drop(old)));
        Ok(Response::new(CommitReply { generation }))
    }

    async fn abort(
        &self,
        request: Request<CommitRequest>,
    ) -> Result<Response<CommitReply>, Status> {
        let generation = request.into_inner().generation;
        let dropped = {
            let mut st = lock(&self.state);
            match st.prepared.take() {
                Some(p) if p.generation == generation => Some(p),
                other => {
                    st.prepared = other;
                    None
                }
            }
        };
        if dropped.is_some() {
            let _ = tokio::task::spawn_blocking(move || drop(dropped)).await;
        }
        Ok(Response::new(CommitReply { generation }))
    }

    async fn flush(
        &self,
        request: Request<WorkerFlushRequest>,
    ) -> Result<Response<WorkerFlushReply>, Status> {
        self.handoff(request.into_inner().timeout_ms, |reply| Command::Flush {
            reply,
        })
        .await
    }

    async fn end_input(
        &self,
        request: Request<WorkerFlushRequest>,
    ) -> Result<Response<WorkerFlushReply>, Status> {
        self.handoff(request.into_inner().timeout_ms, |reply| Command::EndInput {
            reply,
        })
        .await
    }

    async fn flow_stats(
        &self,
        request: Request<FlowStatsRequest>,
    ) -> Result<Response<FlowStatsReply>, Status> {
        let id = request.into_inner().flow_id;
        let (tx, rx) = oneshot::channel();
        self.worker
            .send(Command::FlowStats { id, reply: tx })
            .map_err(|_| Status::unavailable("the worker loop has stopped"))?;
        let found = tokio::time::timeout(SWAP_TIMEOUT, rx)
            .await
            .map_err(|_| Status::deadline_exceeded("the worker did not answer"))?
            .map_err(|_| Status::unavailable("the worker loop has stopped"))?;
        Ok(Response::new(found.unwrap_or_default()))
    }

    async fn variables(
        &self,
        _: Request<VariablesRequest>,
    ) -> Result<Response<VariablesReply>, Status> {
        let st = lock(&self.state);
        Ok(Response::new(VariablesReply {
            xbits: st.names.xbits.clone(),
            flowbits: st.names.flowbits.clone(),
        }))
    }
}

impl Service {
    /// Sends a command that answers with a handoff count, then waits until the eve-writer
    /// has acknowledged that many handoffs (or `timeout_ms`, 0 = 10 s, has passed).
    async fn handoff(
        &self,
        timeout_ms: u32,
        command: impl FnOnce(oneshot::Sender<u64>) -> Command,
    ) -> Result<Response<WorkerFlushReply>, Status> {
        let timeout = Duration::from_millis(if timeout_ms == 0 {
            10_000
        } else {
            u64::from(timeout_ms)
        });
        let deadline = Instant::now() + timeout;
        let (tx, rx) = oneshot::channel();
        self.worker
            .send(command(tx))
            .map_err(|_| Status::unavailable("the worker loop has stopped"))?;
        let target = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(t)) => t,
            Ok(Err(_)) => return Err(Status::unavailable("the worker loop has stopped")),
            Err(_) => return Ok(Response::new(WorkerFlushReply { complete: false })),
        };
        loop {
            if self.setup.sink.handoffs_acked.load(Ordering::Acquire) >= target {
                return Ok(Response::new(WorkerFlushReply { complete: true }));
            }
            if Instant::now() >= deadline {
                return Ok(Response::new(WorkerFlushReply { complete: false }));
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }
}

/// Starts the control service of worker `setup.index` on `socket`; returns the channel
/// the worker loop polls.
pub fn start(
    socket: &Path,
    setup: Setup,
) -> Result<std::sync::mpsc::Receiver<Command>, DetectError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let _ = std::fs::remove_file(socket);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| DetectError::Control(format!("control runtime: {e}")))?;
    let listener = {
        let _guard = rt.enter();
        tokio::net::UnixListener::bind(socket).map_err(|e| {
            DetectError::Control(format!("control socket {}: {e}", socket.display()))
        })?
    };
    // Only the supervisor (same user) talks to a worker.
    {
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(socket, std::fs::Permissions::from_mode(0o600));
    }
    let state = Arc::new(Mutex::new(State {
        names: setup.names.clone(),
        prepared: None,
    }));
    let index = setup.index;
    let service = Service {
        setup,
        state,
        worker: tx,
    };
    std::thread::Builder::new()
        .name(format!("detect-{index}-ctl"))
        .spawn(move || {
            let served = rt.block_on(
                tonic::transport::Server::builder()
                    .add_service(
                        WorkerControlServer::new(service)
                            .max_decoding_message_size(MAX_MESSAGE)
                            .max_encoding_message_size(MAX_MESSAGE),
                    )
                    .serve_with_incoming(UnixListenerStream::new(listener)),
            );
            if let Err(e) = served {
                tracing::error!(worker = index, "control service stopped: {e}");
            }
        })
        .map_err(|e| DetectError::Control(format!("control thread: {e}")))?;
    Ok(rx)
}
