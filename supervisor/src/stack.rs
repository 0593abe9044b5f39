//! The roles of a stack: one [`Slot`] per role across its incarnations, how each is
//! (re)started ([`Launcher`]) and when it is ready.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_runtime::{Role, layout};
use tokio::sync::oneshot;

use crate::control::InputOptions;
use crate::process::{Process, Usage};
use crate::{LogArgs, SupervisorError};

/// How long a role may take to become ready (rule loading included).
const READY_TIMEOUT: Duration = Duration::from_secs(600);
/// How long roles get to exit after SIGTERM before SIGKILL.
pub(crate) const KILL_GRACE: Duration = Duration::from_secs(10);
/// How often the supervisor looks at its roles.
pub(crate) const POLL: Duration = Duration::from_millis(20);

/// How a live source shows among the inputs (`Status`, `ListInterfaces`).
pub(crate) const LIVE_INPUT: &str = "live:";

/// The live source's input name, queued first (`live:af-packet:eth0`, `live:dpdk`).
pub(crate) fn live_input(interface: Option<&str>, dpdk: bool) -> Option<PathBuf> {
    match interface {
        Some(iface) => Some(PathBuf::from(format!("{LIVE_INPUT}af-packet:{iface}"))),
        None if dpdk => Some(PathBuf::from(format!("{LIVE_INPUT}dpdk"))),
        None => None,
    }
}

/// One role of the stack across its incarnations.
#[derive(Debug)]
pub(crate) struct Slot {
    pub(crate) role: Role,
    pub(crate) name: String,
    /// The current incarnation (None between a death and its restart, or when done).
    pub(crate) proc: Option<Process>,
    pub(crate) started: Instant,
    pub(crate) ready: bool,
    /// Restarts after a death (not after `ctl restart-worker`).
    pub(crate) restarts: u32,
    /// Deaths within the restart window (for backoff and the crash-loop limit).
    pub(crate) deaths: VecDeque<Instant>,
    pub(crate) restart_at: Option<Instant>,
    pub(crate) last_exit: String,
    /// Ended as expected: not to be started again.
    pub(crate) finished: bool,
    /// `ctl restart-worker`: answered with the new pid once it is ready.
    pub(crate) restart_reply: Option<oneshot::Sender<Result<u32, String>>>,
    /// A restart was asked: the next exit is not a crash. SIGKILL after this instant.
    pub(crate) stopping_until: Option<Instant>,
    /// Resource use of the incarnations that ended.
    pub(crate) usage: Usage,
}

impl Slot {
    pub(crate) fn new(role: Role) -> Slot {
        Slot {
            role,
            name: role.to_string(),
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

    pub(crate) fn running(&self) -> bool {
        self.proc.as_ref().is_some_and(|p| p.exited.is_none())
    }

    pub(crate) fn pid(&self) -> u32 {
        match &self.proc {
            Some(p) if p.exited.is_none() => p.pid as u32,
            _ => 0,
        }
    }

    pub(crate) fn signal(&self, sig: libc::c_int) {
        if let Some(p) = &self.proc {
            p.signal(sig);
        }
    }

    /// The role's state as `Status` shows it.
    pub(crate) fn state(&self) -> &'static str {
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

    /// A new incarnation runs from now.
    pub(crate) fn started(&mut self, p: Process, now: Instant) {
        self.proc = Some(p);
        self.started = now;
    }
}

/// All roles of a run in start order (eve-writer, detect-0.., capture), stopped
/// (SIGTERM, then SIGKILL) when dropped.
#[derive(Debug)]
pub(crate) struct Stack {
    pub(crate) slots: Vec<Slot>,
}

impl Stack {
    /// The slots of a stack of `workers` workers, nothing started yet.
    pub(crate) fn new(workers: usize) -> Stack {
        Stack {
            slots: Role::stack(workers).map(Slot::new).collect(),
        }
    }

    /// Index of the eve-writer's slot.
    pub(crate) const WRITER: usize = 0;

    /// Index of the capture slot.
    pub(crate) fn capture_index(&self) -> usize {
        self.slots.len() - 1
    }

    /// The detect workers' slots.
    pub(crate) fn workers(&self) -> &[Slot] {
        &self.slots[1..self.capture_index()]
    }

    pub(crate) fn stop_all(&mut self) {
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

    pub(crate) fn slot(&mut self, role: Role) -> &mut Slot {
        let i = self.slots.iter().position(|s| s.role == role).unwrap_or(0);
        &mut self.slots[i]
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.stop_all();
    }
}

/// Everything the supervisor needs to (re)start a role.
#[derive(Debug)]
pub(crate) struct Launcher<'a> {
    pub(crate) log: &'a LogArgs,
    pub(crate) config_path: PathBuf,
    pub(crate) runtime: PathBuf,
    /// Live capture arguments (`-i IFACE` or `--dpdk`), used for the input named
    /// [`LIVE_INPUT`].
    pub(crate) live: Vec<String>,
}

impl Launcher<'_> {
    /// The role's subcommand and its config.
    fn args(&self, subcommand: &str) -> Vec<String> {
        vec![
            subcommand.to_string(),
            "--config".to_string(),
            self.config_path.display().to_string(),
        ]
    }

    pub(crate) fn writer(&self) -> Result<Process, SupervisorError> {
        Process::spawn(
            &Role::EveWriter.to_string(),
            &self.args("eve-writer"),
            self.log,
        )
    }

    pub(crate) fn detect(&self, w: usize, generation: u64) -> Result<Process, SupervisorError> {
        let mut a = self.args("detect");
        a.extend([
            "--worker".to_string(),
            w.to_string(),
            "--generation".to_string(),
            generation.to_string(),
        ]);
        Process::spawn(&Role::Detect(w).to_string(), &a, self.log)
    }

    pub(crate) fn capture(
        &self,
        inputs: &[PathBuf],
        resume: bool,
        options: &InputOptions,
    ) -> Result<Process, SupervisorError> {
        let mut a = self.args("capture");
        // The input's own settings (the unix socket's `pcap-file` arguments).
        if let Some(c) = options.continuous {
            a.extend(["--set".to_string(), format!("pcap-file.continuous={c}")]);
        }
        if let Some(d) = options.delete_when_done {
            a.extend([
                "--set".to_string(),
                format!("pcap-file.delete-when-done={d}"),
            ]);
        }
        if inputs
            .iter()
            .any(|i| i.to_string_lossy().starts_with(LIVE_INPUT))
        {
            // Live capture runs until stopped; a restart captures on from now.
            a.extend(self.live.iter().cloned());
            return Process::spawn(Role::CAPTURE, &a, self.log);
        }
        a.push("--keep-open".to_string());
        if resume {
            a.push("--resume".to_string());
        }
        for i in inputs {
            a.extend(["-r".to_string(), i.display().to_string()]);
        }
        Process::spawn(Role::CAPTURE, &a, self.log)
    }

    /// Starts a new incarnation of `role` (a restarted worker loads `generation`).
    pub(crate) fn restart(
        &self,
        role: Role,
        generation: u64,
        current_inputs: &[PathBuf],
        options: &InputOptions,
    ) -> Result<Process, SupervisorError> {
        match role {
            Role::EveWriter => self.writer(),
            Role::Detect(w) => self.detect(w, generation),
            Role::Capture => self.capture(current_inputs, true, options),
        }
    }

    /// Whether a role's incarnation is ready: the writer accepts connections, a worker
    /// is attached to its ring.
    pub(crate) fn is_ready(&self, role: Role, pid: libc::pid_t) -> bool {
        match role {
            Role::EveWriter => {
                std::os::unix::net::UnixStream::connect(layout::eve_socket_path(&self.runtime))
                    .is_ok()
            }
            Role::Detect(w) => meerkat_shm::status(&layout::ring_path(&self.runtime, w))
                .is_ok_and(|s| s.consumer_pid == pid as u32),
            Role::Capture => true,
        }
    }
}

/// Waits until the role in slot `i` is ready. One that exits meanwhile fails the start
/// (a bad config, unreadable rules, a ring that cannot be made: starting it again would
/// fail again); one killed by a signal (the OOM killer at the memory peak of a rule
/// load, an operator) is started again, with the backoff and crash-loop limit of a
/// running role's restarts.
pub(crate) fn wait_ready(
    stack: &mut Stack,
    launcher: &Launcher,
    i: usize,
    stop: &AtomicBool,
    sup: &meerkat_config::Supervisor,
) -> Result<(), SupervisorError> {
    use std::os::unix::process::ExitStatusExt;
    let mut deadline = Instant::now() + READY_TIMEOUT;
    let mut deaths = 0usize;
    loop {
        let slot = &mut stack.slots[i];
        let Some(p) = &mut slot.proc else {
            return Err(SupervisorError::NotRunning(slot.name.clone()));
        };
        if let Some(status) = p.poll() {
            slot.usage.cpu_us += p.usage.cpu_us;
            slot.usage.max_rss_kb = slot.usage.max_rss_kb.max(p.usage.max_rss_kb);
            slot.last_exit = crate::process::describe(status);
            if status.signal().is_none() {
                return Err(SupervisorError::FailedToStart {
                    role: slot.name.clone(),
                    status,
                });
            }
            deaths += 1;
            if deaths > sup.max_restarts as usize {
                return Err(SupervisorError::CrashLoop {
                    role: slot.name.clone(),
                    deaths,
                    window: sup.restart_window,
                    last: slot.last_exit.clone(),
                    max: sup.max_restarts,
                });
            }
            let wait = backoff(sup, deaths);
            tracing::error!(
                "the {} role died while starting ({}): starting it again in {} ms",
                slot.name,
                slot.last_exit,
                wait.as_millis()
            );
            slot.proc = None;
            std::thread::sleep(wait);
            if stop.load(Ordering::Relaxed) {
                return Err(SupervisorError::Interrupted(slot.name.clone()));
            }
            let p = launcher.restart(slot.role, 1, &[], &InputOptions::default())?;
            let slot = &mut stack.slots[i];
            slot.restarts += 1;
            slot.started(p, Instant::now());
            deadline = Instant::now() + READY_TIMEOUT;
            continue;
        }
        if launcher.is_ready(slot.role, p.pid) {
            slot.ready = true;
            return Ok(());
        }
        if stop.load(Ordering::Relaxed) {
            return Err(SupervisorError::Interrupted(slot.name.clone()));
        }
        if Instant::now() > deadline {
            return Err(SupervisorError::ReadyTimeout(slot.name.clone()));
        }
        std::thread::sleep(POLL);
    }
}

/// Marks the end of every ring (capture leaves them open; see `--keep-open`).
pub(crate) fn finish_rings(rt: &Path, workers: usize) -> Result<(), SupervisorError> {
    for w in 0..workers {
        let path = layout::ring_path(rt, w);
        let mut p =
            meerkat_shm::Producer::attach(&path).map_err(|source| SupervisorError::EndRing {
                path: path.clone(),
                source,
            })?;
        p.finish();
    }
    Ok(())
}

/// Backoff before restart number `n` (1-based) within the window.
pub(crate) fn backoff(cfg: &meerkat_config::Supervisor, n: usize) -> Duration {
    let shift = (n.saturating_sub(1)).min(20) as u32;
    let ms = cfg
        .restart_backoff_ms
        .saturating_mul(1u64 << shift)
        .min(cfg.restart_backoff_max_ms);
    Duration::from_millis(ms)
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

    #[test]
    fn a_stack_is_its_roles_in_start_order() {
        let s = Stack::new(2);
        let names: Vec<&str> = s.slots.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["eve-writer", "detect-0", "detect-1", "capture"]);
        assert_eq!(s.capture_index(), 3);
        assert_eq!(s.workers().len(), 2);
        assert_eq!(s.slots[Stack::WRITER].state(), "exited");
    }
}
