//! The supervisor's control API: the `Control` gRPC service (`proto/control.proto`) and
//! the standard `grpc.health.v1.Health` service on a Unix socket with owner-only
//! permissions (`control.socket`, default `<runtime-dir>/control.sock`), and the optional
//! Prometheus text endpoint (`control.metrics-listen`).
//!
//! The same two services may also be served on TCP (`control.listen`), only with a way to
//! tell who calls: a bearer token (`control.token-file`) checked on every call, health
//! checks included, and/or mutual TLS (`control.tls-client-ca`). `control.tls-cert` +
//! `control.tls-key` put TLS (rustls, see `meerkat_proto::transport::tls`) on the TCP listener; a handshake that
//! fails (plain text, an untrusted or missing client certificate) drops that one
//! connection and nothing else. The Prometheus endpoint stays plain HTTP without
//! authentication (it only reads counters; bind it to loopback or a scrape network).
//!
//! Everything runs on one thread with its own tokio runtime, beside the supervisor loop
//! (`supervise.rs`). The two share [`Shared`] (what `Status` reports, the input queue)
//! under a mutex; requests that change the process tree (`Shutdown`, `RestartWorker`)
//! are handed to the loop as [`Request`]s. Rule reloads and EVE flushes talk to each
//! detect worker's own `WorkerControl` socket directly (see `detect::control`).
//!
//! [`server`] binds the sockets and runs the services, [`service`] answers the calls,
//! [`metrics`] renders the counters for Prometheus.

pub mod fuzz;
mod metrics;
mod server;
mod service;
pub mod unix_command;
mod unix_commands;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Instant, SystemTime};

use meerkat_runtime::counters_path;
use meerkat_shm::CounterReader;
use tokio::sync::oneshot;

pub use metrics::prometheus_text;
pub use server::{Server, TcpControl, UnixCommandStart, read_token, start};
pub use service::status_of;

/// Errors of the control API's start (and of reading its token).
#[derive(Debug, thiserror::Error)]
pub enum ControlError {
    #[error("cannot read control token file {}", path.display())]
    TokenFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "control token in {} must be at least 16 printable characters without spaces",
        path.display()
    )]
    BadToken { path: PathBuf },
    #[error("cannot create the directory of {}", socket.display())]
    SocketDir {
        socket: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("control socket {} is in use by another running stack", socket.display())]
    InUse { socket: PathBuf },
    #[error("control runtime")]
    Runtime(#[source] std::io::Error),
    #[error("cannot bind control socket {}", socket.display())]
    Bind {
        socket: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen for metrics on {addr}")]
    Metrics {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot listen for control on {addr}")]
    Listen {
        addr: String,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot set up TLS for the control API")]
    Tls(#[source] tonic::transport::Error),
    #[error("cannot serve the unix-command socket {}: {reason}", socket.display())]
    UnixCommand { socket: PathBuf, reason: String },
    #[error("cannot start the control thread")]
    Thread(#[source] std::io::Error),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

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

/// How one queued input is read: a plain `-r`/`add-pcap` input has no options; the unix
/// socket's `pcap-file` gives each its own output directory (the eve-writer moves there
/// before it is read, and its flows end with it, as each pcap is a run of its own in
/// Suricata's unix-socket mode) and may ask for `continuous` or `delete-when-done`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputOptions {
    pub output_dir: Option<PathBuf>,
    pub continuous: Option<bool>,
    pub delete_when_done: Option<bool>,
}

/// A queued input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Input {
    pub path: PathBuf,
    pub options: InputOptions,
}

impl Input {
    pub fn plain(path: PathBuf) -> Input {
        Input {
            path,
            options: InputOptions::default(),
        }
    }
}

/// How the stack gets its packets, as the unix socket's `capture-mode` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaptureMode {
    PcapFile,
    AfPacket,
    Dpdk,
    /// `--unix-socket`: the pcaps the socket queues.
    UnixSocket,
}

impl CaptureMode {
    /// Suricata's runmode name.
    pub fn suricata_name(self) -> &'static str {
        match self {
            CaptureMode::PcapFile => "PCAP_FILE",
            CaptureMode::AfPacket => "AF_PACKET_DEV",
            CaptureMode::Dpdk => "DPDK",
            CaptureMode::UnixSocket => "UNIX_SOCKET",
        }
    }

    pub fn live(self) -> bool {
        matches!(self, CaptureMode::AfPacket | CaptureMode::Dpdk)
    }
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
    /// The rule files as configured, those missing included: what a reload of the
    /// configured rules reads (a file that appeared since, e.g. written by
    /// suricata-update, is loaded then).
    pub configured_rule_files: Vec<String>,
    /// When the running ruleset was loaded (the unix socket's `ruleset-reload-time`).
    pub last_reload: SystemTime,
    pub capture_mode: CaptureMode,
    /// Every role has started and the workers have loaded their rules: the
    /// unix-command socket answers from then on (as Suricata opens it once its engine
    /// has started; a client that connects earlier waits).
    pub roles_ready: bool,
    /// The live interface (`iface-list`).
    pub interface: Option<String>,
    /// Inputs queued by `AddPcap` (or left after the current one).
    pub pending: VecDeque<Input>,
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
    /// Stop reading the current input (the unix socket's `pcap-interrupt`); answers
    /// whether one was being read.
    Interrupt(oneshot::Sender<bool>),
}

pub type SharedRef = Arc<Mutex<Shared>>;

/// Locks the shared state. Every update is a few plain stores, so a panic elsewhere
/// cannot leave it half-written: a poisoned lock is still usable.
pub fn lock(s: &Mutex<Shared>) -> MutexGuard<'_, Shared> {
    s.lock().unwrap_or_else(|e| e.into_inner())
}

/// One role's counter page: (role, pid, counters).
pub type Page = (String, u32, Vec<(String, u64)>);

/// Every counter page of the stack, roles in `Shared` order.
pub(crate) fn read_counters(shared: &SharedRef) -> Vec<Page> {
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
