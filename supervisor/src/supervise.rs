//! Step 5 of a run: watch the roles until the input is done (or a stop), restarting
//! those that die, serving the control API's requests, and draining at the end:
//! capture stops, the rings are ended, the workers finish them, then the eve-writer.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use meerkat_config::Config;
use meerkat_runtime::{Role, layout};

use crate::control::{InputOptions, Request, SharedRef, lock};
use crate::process::describe;
use crate::runtime_dir::write_config;
use crate::stack::{KILL_GRACE, Launcher, POLL, Stack, backoff, finish_rings};
use crate::summary::{CaptureTotals, Progress, WriterTotals};
use crate::{Signals, SupervisorError};

/// The supervision of one run's stack, from its roles' start to the end of the drain.
#[derive(Debug)]
pub(crate) struct Supervision<'a> {
    pub(crate) stack: Stack,
    pub(crate) launcher: Launcher<'a>,
    pub(crate) config: Config,
    pub(crate) config_path: PathBuf,
    pub(crate) shared: SharedRef,
    pub(crate) requests: Receiver<Request>,
    /// Set by the control API's `Shutdown`.
    pub(crate) ctl_stop: Arc<AtomicBool>,
    pub(crate) signals: Signals<'a>,
    pub(crate) progress: Progress,
    /// What the capture runs and the eve-writers that ended did.
    pub(crate) totals: CaptureTotals,
    pub(crate) writer_totals: WriterTotals,
    rings_finished: bool,
    /// The drain's deadline, once it started.
    draining: Option<Instant>,
    writer_stopping: bool,
    /// Ruleset generation that (re)started workers load.
    generation: u64,
    /// Asks the control service for a reload of the configured rules (SIGUSR2).
    pub(crate) reload: Option<tokio::sync::mpsc::UnboundedSender<&'static str>>,
    /// The settings of the input being read (kept for a capture restart).
    current_options: InputOptions,
    /// Between two inputs of their own output directories: see [`Segment`].
    segment: Segment,
    /// The input that ended had its own output directory: its flows are to be ended.
    end_pending: bool,
    /// The eve-writer is being moved to another directory: its exit is expected.
    writer_moving: bool,
    /// The directory the running eve-writer writes to.
    writer_dir: PathBuf,
    /// Each worker's ring as the stack started with it (its inode), to tell a ring
    /// removed or replaced under the running stack before a role is started on it.
    rings: Vec<Option<u64>>,
}

/// Between two inputs that have output directories of their own (the unix socket's
/// `pcap-file`), each read as a run of its own, as in Suricata's unix-socket mode: the
/// flows of the input that ended are ended in every worker (`EndInput`: their records
/// go to its directory), then, if the next input's directory is another, the
/// eve-writer is stopped and started again with that directory. The rules stay loaded.
#[derive(Debug, Default)]
enum Segment {
    #[default]
    Idle,
    /// Waiting for every worker to have ended the input's flows.
    Ending(std::sync::mpsc::Receiver<Result<(), String>>),
    /// Waiting for the eve-writer to stop, then for the new one to be ready.
    MovingWriter { started: bool },
}

impl<'a> Supervision<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        stack: Stack,
        launcher: Launcher<'a>,
        config: Config,
        config_path: PathBuf,
        shared: SharedRef,
        requests: Receiver<Request>,
        ctl_stop: Arc<AtomicBool>,
        signals: Signals<'a>,
        quiet: bool,
    ) -> Supervision<'a> {
        Supervision {
            stack,
            launcher,
            config,
            config_path,
            shared,
            requests,
            ctl_stop,
            signals,
            progress: Progress::new(quiet),
            totals: CaptureTotals::default(),
            writer_totals: WriterTotals::default(),
            rings_finished: false,
            draining: None,
            writer_stopping: false,
            generation: 1,
            reload: None,
            current_options: InputOptions::default(),
            segment: Segment::Idle,
            end_pending: false,
            writer_moving: false,
            writer_dir: PathBuf::new(),
            rings: Vec::new(),
        }
    }

    /// The inode of worker `w`'s ring file now (`None`: there is none).
    fn ring_inode(&self, w: usize) -> Option<u64> {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(layout::ring_path(self.rt(), w))
            .ok()
            .map(|m| m.ino())
    }

    /// Before a role starts again: the rings it would attach to must be the stack's.
    /// A ring removed or replaced (something cleaned the runtime directory) holds
    /// packets no new worker can reach, and a role started on another file would wait
    /// for ever: the stack stops with that said instead.
    fn check_rings(&self, role: Role) -> Result<(), SupervisorError> {
        let ws: Vec<usize> = match role {
            Role::Detect(w) => vec![w],
            Role::Capture => (0..self.rings.len()).collect(),
            Role::EveWriter => Vec::new(),
        };
        for w in ws {
            let Some(&Some(ino)) = self.rings.get(w) else {
                continue;
            };
            if self.ring_inode(w) != Some(ino) {
                return Err(SupervisorError::RingRemoved {
                    path: layout::ring_path(self.rt(), w),
                });
            }
        }
        Ok(())
    }

    fn rt(&self) -> &Path {
        &self.launcher.runtime
    }

    fn window(&self) -> Duration {
        Duration::from_secs(self.config.supervisor.restart_window)
    }

    fn shutdown_timeout(&self) -> Duration {
        Duration::from_secs(self.config.supervisor.shutdown_timeout)
    }

    /// Step 4: the eve-writer, then every worker, each ready before what needs it.
    pub(crate) fn start_roles(&mut self) -> Result<(), SupervisorError> {
        self.writer_dir = self.config.default_log_dir.clone();
        let stop = self.signals.stop;
        let writer = Stack::WRITER;
        self.stack.slots[writer].started(self.launcher.writer()?, Instant::now());
        crate::stack::wait_ready(
            &mut self.stack,
            &self.launcher,
            writer,
            stop,
            &self.config.supervisor,
        )?;
        let workers = self.stack.workers().len();
        for w in 0..workers {
            let p = self.launcher.detect(w, 1)?;
            self.stack.slots[w + 1].started(p, Instant::now());
        }
        for w in 0..workers {
            crate::stack::wait_ready(
                &mut self.stack,
                &self.launcher,
                w + 1,
                stop,
                &self.config.supervisor,
            )?;
        }
        Ok(())
    }

    /// Supervises until the stack has drained (`Ok`) or must stop at once (`Err`).
    pub(crate) fn run(&mut self) -> Result<(), SupervisorError> {
        self.rings = (0..self.config.workers())
            .map(|w| self.ring_inode(w))
            .collect();
        loop {
            self.progress.tick(&self.launcher.runtime);
            let now = Instant::now();
            self.serve_requests(now);
            let stop = self.watch_signals(now)?;
            self.reap(now)?;
            self.restart_due(now)?;
            self.next_input(now)?;
            if self.drain_step() {
                return Ok(());
            }
            self.publish_status(stop);
            std::thread::sleep(POLL);
        }
    }

    /// Requests from the control API.
    fn serve_requests(&mut self, now: Instant) {
        while let Ok(r) = self.requests.try_recv() {
            match r {
                Request::Shutdown => {}
                Request::RulesChanged(files) => {
                    self.generation = lock(&self.shared).generation;
                    self.config.rule_files = files;
                    // Workers started from now on load the running ruleset.
                    if let Err(e) = write_config(&self.config_path, &self.config) {
                        tracing::error!(
                            "cannot write {}: {}",
                            self.config_path.display(),
                            source_of(&e)
                        );
                    }
                }
                Request::Interrupt(reply) => {
                    let cap = self.stack.capture_index();
                    let slot = &self.stack.slots[cap];
                    let reading = slot.running() && !lock(&self.shared).current.is_empty();
                    if reading {
                        tracing::info!("interrupting the current input (asked)");
                        slot.signal(libc::SIGTERM);
                    }
                    let _ = reply.send(reading);
                }
                Request::RestartWorker(w, reply) => {
                    let stopping = self.draining.is_some() || self.rings_finished;
                    let slot = self.stack.slot(Role::Detect(w));
                    if stopping {
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
    }

    /// Signals: a second SIGTERM stops at once, SIGHUP reaches the eve-writer, a stop
    /// (SIGTERM or `Shutdown`) starts the drain. Returns whether a stop was asked.
    fn watch_signals(&mut self, now: Instant) -> Result<bool, SupervisorError> {
        if self.signals.stop_count.load(Ordering::Relaxed) >= 2 {
            return Err(SupervisorError::InterruptedTwice);
        }
        if self.signals.usr2.swap(false, Ordering::SeqCst) {
            tracing::info!("SIGUSR2: reloading the rules");
            if let Some(r) = &self.reload {
                let _ = r.send("SIGUSR2");
            }
        }
        if self.signals.hup.swap(false, Ordering::SeqCst) {
            tracing::info!("SIGHUP: the eve-writer reopens its outputs");
            self.stack.slots[Stack::WRITER].signal(libc::SIGHUP);
        }
        let stop =
            self.signals.stop.load(Ordering::Relaxed) || self.ctl_stop.load(Ordering::Relaxed);
        if stop && self.draining.is_none() {
            self.progress.clear();
            tracing::info!(
                "stopping: draining what was captured (deadline {} s)",
                self.config.supervisor.shutdown_timeout
            );
            self.draining = Some(now + self.shutdown_timeout());
            lock(&self.shared).pending.clear();
            let cap = self.stack.capture_index();
            let cap = &mut self.stack.slots[cap];
            cap.signal(libc::SIGTERM);
            cap.restart_at = None;
        }
        if let Some(d) = self.draining
            && now > d
        {
            return Err(SupervisorError::DrainTimeout(
                self.config.supervisor.shutdown_timeout,
            ));
        }
        Ok(stop)
    }

    /// Exits: a role that ended as expected is done (capture: its input is); one that
    /// was asked to restart starts again at once; one that died is restarted after a
    /// backoff, unless it died too often (a crash loop stops the stack).
    fn reap(&mut self, now: Instant) -> Result<(), SupervisorError> {
        let window = self.window();
        let sup = self.config.supervisor.clone();
        let rt = self.launcher.runtime.clone();
        for i in 0..self.stack.slots.len() {
            let slot = &mut self.stack.slots[i];
            if let Some(until) = slot.stopping_until
                && now > until
                && slot.running()
            {
                slot.signal(libc::SIGKILL);
            }
            let Some(p) = &mut slot.proc else { continue };
            let Some(status) = p.poll() else {
                if !slot.ready && self.launcher.is_ready(slot.role, p.pid) {
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
            if slot.role == Role::EveWriter && self.writer_moving {
                // Stopped to move to another directory: started again by `move_writer`.
                continue;
            }
            let asked = slot.stopping_until.take().is_some();
            let expected = match slot.role {
                Role::EveWriter => self.writer_stopping && status.success(),
                // A worker ends on its own once its ring is ended (by the supervisor, or
                // by a live capture that was stopped).
                Role::Detect(w) => {
                    status.success()
                        && (self.rings_finished
                            || meerkat_shm::status(&layout::ring_path(&rt, w)).is_ok_and(|r| r.eof))
                }
                // Capture ends with its input, or when told to stop.
                Role::Capture => status.success() || self.draining.is_some(),
            };
            if expected {
                if slot.role == Role::Capture {
                    self.totals.add_ended_run(&rt);
                    let mut s = lock(&self.shared);
                    let cur = std::mem::take(&mut s.current);
                    s.done.extend(cur);
                    if self.current_options.output_dir.is_some() {
                        self.end_pending = true;
                    }
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
                return Err(SupervisorError::CrashLoop {
                    role: slot.name.clone(),
                    deaths: slot.deaths.len(),
                    window: sup.restart_window,
                    last: slot.last_exit.clone(),
                    max: sup.max_restarts,
                });
            }
            let wait = backoff(&sup, slot.deaths.len());
            tracing::info!("restarting {} in {} ms", slot.name, wait.as_millis());
            slot.restart_at = Some(now + wait);
        }
        Ok(())
    }

    /// Restarts that are due. A restarted writer first adds the dead one's counters to
    /// the totals; capture is not restarted once the drain began.
    fn restart_due(&mut self, now: Instant) -> Result<(), SupervisorError> {
        for i in 0..self.stack.slots.len() {
            let slot = &mut self.stack.slots[i];
            let Some(at) = slot.restart_at else { continue };
            if now < at {
                continue;
            }
            slot.restart_at = None;
            let role = slot.role;
            if role == Role::Capture && self.draining.is_some() {
                continue;
            }
            if role == Role::EveWriter {
                self.writer_totals.add_dead_page(&self.launcher.runtime);
            }
            self.check_rings(role)?;
            let current = if role == Role::Capture {
                lock(&self.shared).current.clone()
            } else {
                Vec::new()
            };
            let p =
                self.launcher
                    .restart(role, self.generation, &current, &self.current_options)?;
            let slot = &mut self.stack.slots[i];
            if slot.restart_reply.is_none() {
                slot.restarts += 1;
            }
            tracing::info!("{} started again (pid {})", slot.name, p.pid);
            slot.started(p, now);
        }
        Ok(())
    }

    /// Input: once capture is idle, the next queued source; with none left (and
    /// `supervisor.keep-running` off), the drain.
    fn next_input(&mut self, now: Instant) -> Result<(), SupervisorError> {
        let cap = self.stack.capture_index();
        let capture_idle = {
            let c = &self.stack.slots[cap];
            c.proc.is_none() && c.restart_at.is_none()
        };
        if capture_idle && self.draining.is_none() && !self.rings_finished {
            if !self.between_inputs(now)? {
                return Ok(());
            }
            // Taken from the queue and shown as current in one step: a `Status` between
            // the two would see an idle stack with nothing queued while the input has not
            // been read yet.
            let next = {
                let mut s = lock(&self.shared);
                let next = s.pending.pop_front();
                if let Some(input) = &next {
                    s.current = vec![input.path.clone()];
                    s.state = "running";
                }
                next
            };
            if let Some(input) = next {
                self.current_options = input.options.clone();
                let p = self.launcher.capture(
                    std::slice::from_ref(&input.path),
                    false,
                    &input.options,
                )?;
                let c = &mut self.stack.slots[cap];
                c.started(p, now);
                c.ready = true;
            } else if !self.config.supervisor.keep_running {
                self.draining = self.draining.or(Some(now + self.shutdown_timeout()));
            }
        }
        if capture_idle && self.draining.is_some() && !self.rings_finished {
            finish_rings(self.rt(), self.stack.workers().len())?;
            self.rings_finished = true;
        }
        Ok(())
    }

    /// The steps between two inputs of their own output directories (see [`Segment`]);
    /// `true` once the next input may start.
    fn between_inputs(&mut self, now: Instant) -> Result<bool, SupervisorError> {
        match &self.segment {
            Segment::Ending(rx) => match rx.try_recv() {
                Ok(result) => {
                    if let Err(e) = result {
                        tracing::error!("ending the flows of the last input: {e}");
                    }
                    self.segment = Segment::Idle;
                }
                Err(std::sync::mpsc::TryRecvError::Empty) => return Ok(false),
                Err(std::sync::mpsc::TryRecvError::Disconnected) => self.segment = Segment::Idle,
            },
            Segment::MovingWriter { started } => {
                let started = *started;
                let w = Stack::WRITER;
                if !started {
                    if self.stack.slots[w].proc.is_some() {
                        return Ok(false);
                    }
                    self.writer_totals.add_dead_page(&self.launcher.runtime);
                    let p = self.launcher.writer()?;
                    self.stack.slots[w].started(p, now);
                    self.segment = Segment::MovingWriter { started: true };
                    return Ok(false);
                }
                if !self.stack.slots[w].ready {
                    return Ok(false);
                }
                self.writer_moving = false;
                self.writer_dir = self.config.default_log_dir.clone();
                tracing::info!("EVE now goes to {}", self.writer_dir.display());
                self.segment = Segment::Idle;
            }
            Segment::Idle => {}
        }
        if std::mem::take(&mut self.end_pending) {
            self.segment = Segment::Ending(end_input(self.rt(), self.stack.workers().len()));
            return Ok(false);
        }
        let next_dir = lock(&self.shared)
            .pending
            .front()
            .and_then(|i| i.options.output_dir.clone());
        if let Some(dir) = next_dir
            && dir != self.writer_dir
        {
            tracing::info!("moving the eve-writer to {}", dir.display());
            self.config.default_log_dir = dir;
            write_config(&self.config_path, &self.config)?;
            self.writer_moving = true;
            self.stack.slots[Stack::WRITER].signal(libc::SIGTERM);
            self.segment = Segment::MovingWriter { started: false };
            return Ok(false);
        }
        Ok(true)
    }

    /// The drain's last steps: once the workers have finished their ended rings, the
    /// eve-writer is stopped; once it has exited, the run is over (`true`).
    fn drain_step(&mut self) -> bool {
        let workers_done = self.stack.workers().iter().all(|s| s.finished);
        if self.rings_finished && workers_done && !self.writer_stopping {
            self.writer_stopping = true;
            self.stack.slots[Stack::WRITER].signal(libc::SIGTERM);
        }
        self.writer_stopping && self.stack.slots[Stack::WRITER].finished
    }

    /// What `Status` shows.
    fn publish_status(&self, stop: bool) {
        let mut s = lock(&self.shared);
        s.state = if self.writer_stopping {
            "stopping"
        } else if self.draining.is_some() && (stop || self.rings_finished) {
            "draining"
        } else if s.current.is_empty() && s.pending.is_empty() {
            "idle"
        } else {
            "running"
        };
        for (info, slot) in s.roles.iter_mut().zip(&self.stack.slots) {
            info.pid = slot.pid();
            info.state = slot.state();
            info.started = slot.started;
            info.restarts = slot.restarts;
            info.last_exit.clone_from(&slot.last_exit);
        }
    }
}

/// Asks every worker to end the flows of the input that ended (`EndInput`), on a thread
/// of its own; the result comes on the channel once all have answered.
fn end_input(rt: &Path, workers: usize) -> std::sync::mpsc::Receiver<Result<(), String>> {
    use meerkat_proto::control::WorkerFlushRequest;
    use meerkat_proto::control::worker_control_client::WorkerControlClient;
    let (tx, rx) = std::sync::mpsc::channel();
    let rt = rt.to_path_buf();
    let spawned = std::thread::Builder::new()
        .name("end-input".to_string())
        .spawn(move || {
            let result = (|| {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .map_err(|e| e.to_string())?;
                runtime.block_on(async {
                    let mut asks = Vec::new();
                    for w in 0..workers {
                        let path = meerkat_runtime::worker_socket_path(&rt, w);
                        asks.push(tokio::spawn(async move {
                            let ch = meerkat_proto::transport::unix_channel(&path)
                                .await
                                .map_err(|e| format!("detect worker {w}: {e}"))?;
                            let r = WorkerControlClient::new(ch)
                                .end_input(WorkerFlushRequest { timeout_ms: 60_000 })
                                .await
                                .map_err(|e| format!("detect worker {w}: {}", e.message()))?;
                            if r.into_inner().complete {
                                Ok(())
                            } else {
                                Err(format!(
                                    "detect worker {w}: its events were not all written within 60 s"
                                ))
                            }
                        }));
                    }
                    for a in asks {
                        a.await.map_err(|e| e.to_string())??;
                    }
                    Ok::<(), String>(())
                })
            })();
            let _ = tx.send(result);
        });
    if let Err(e) = spawned {
        tracing::error!("cannot start the end-input thread: {e}");
    }
    rx
}

/// The io error under a write error, as the old message showed it.
fn source_of(e: &SupervisorError) -> String {
    match e {
        SupervisorError::Write { source, .. } => source.to_string(),
        other => other.to_string(),
    }
}
