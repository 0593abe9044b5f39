//! The supervisor's errors. Each says what failed and names the file, key or role; the
//! cause, if any, is its `source`. [`SupervisorError::is_usage`] tells a problem with the
//! command line or configuration (found before any role starts) from a failure while
//! running.

use std::path::PathBuf;
use std::process::ExitStatus;

use crate::control::ControlError;

#[derive(Debug, thiserror::Error)]
pub enum SupervisorError {
    // Usage: the command line, the config or the inputs, checked before anything starts.
    #[error(transparent)]
    Config(#[from] meerkat_config::ConfigError),
    #[error("--workers must be at least 1")]
    NoWorkers,
    #[error(
        "no input: give a capture file or directory with -r, an interface with -i, or --dpdk, \
         or keep the stack running for `meerkat ctl add-pcap` (--set supervisor.keep-running=yes)"
    )]
    NoInput,
    #[error("--dpdk: this meerkat was built without DPDK support (build with `--features dpdk`)")]
    NoDpdk,
    #[error("interface {0} does not exist")]
    NoInterface(String),
    #[error(
        "a BPF filter was given twice: in -F {} and on the command line (`{expr}`)",
        file.display()
    )]
    BpfTwice { file: PathBuf, expr: String },
    #[error(transparent)]
    Bpf(#[from] meerkat_capture::bpf::BpfError),
    #[error("bad pcap pattern {text}")]
    BadPattern {
        text: String,
        #[source]
        source: meerkat_scanner::glob::GlobError,
    },
    #[error("cannot read the directory of pattern {text}")]
    PatternDir {
        text: String,
        #[source]
        source: std::io::Error,
    },
    /// A pcap, rule file or classification file that cannot be read.
    #[error("cannot read {what} {}", path.display())]
    Unreadable {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create log directory {}", path.display())]
    LogDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("log directory {} is not writable", path.display())]
    LogDirNotWritable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A rule file that cannot be read while checking rules (`-T`, `--engine-analysis`).
    #[error("{0}")]
    Rules(String),
    /// `--init-errors-fatal`: rules did not load.
    #[error("{failed} rules did not load and --init-errors-fatal is set (each is logged above)")]
    RulesFailed { failed: u64 },
    /// The unix-command socket (`--unix-socket`, `unix-command.enabled: yes`) could not
    /// be served.
    #[error("cannot serve the unix-command socket {}: {reason}", path.display())]
    UnixCommand { path: PathBuf, reason: String },
    #[error("--pidfile {}: {reason}", path.display())]
    Pidfile { path: PathBuf, reason: String },
    #[error(transparent)]
    Tls(#[from] meerkat_proto::transport::tls::TlsError),
    /// `control.token-file` unreadable or not a token.
    #[error(transparent)]
    Token(ControlError),

    // Runtime: something failed while setting up or running the stack.
    /// The embedded sample could not be written out.
    #[error("cannot create log directory {}", path.display())]
    SampleDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("writing {}", path.display())]
    SampleFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create runtime-dir {}", path.display())]
    RuntimeDirSet {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "runtime-dir {} is in use by another running stack (its lock {} is held); give \
         this one another runtime-dir",
        path.display(),
        lock.display()
    )]
    RuntimeDirInUse { path: PathBuf, lock: PathBuf },
    #[error("cannot lock the runtime directory with {}", path.display())]
    RuntimeDirLock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot create runtime directory {}", path.display())]
    RuntimeDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Ring(#[from] meerkat_shm::RingError),
    #[error(transparent)]
    Capture(#[from] meerkat_capture::CaptureError),
    #[error(transparent)]
    Control(ControlError),
    #[error("cannot find the meerkat executable")]
    NoExecutable(#[source] std::io::Error),
    #[error("cannot start the {role} role")]
    Spawn {
        role: String,
        #[source]
        source: std::io::Error,
    },
    #[error("pid out of range")]
    Pid(#[source] std::num::TryFromIntError),
    #[error("the {0} role is not running")]
    NotRunning(String),
    #[error("the {role} role failed to start ({status})")]
    FailedToStart { role: String, status: ExitStatus },
    #[error("interrupted while waiting for the {0} role")]
    Interrupted(String),
    #[error("timed out waiting for the {0} role")]
    ReadyTimeout(String),
    #[error("cannot end ring {}", path.display())]
    EndRing {
        path: PathBuf,
        #[source]
        source: meerkat_shm::RingError,
    },
    #[error("interrupted twice: stopped without draining")]
    InterruptedTwice,
    #[error(
        "the stack did not drain within supervisor.shutdown-timeout ({0} s); \
         killing the roles still running"
    )]
    DrainTimeout(u64),
    #[error(
        "the {role} role died {deaths} times within {window} s (last: {last}): crash loop \
         (supervisor.max-restarts {max}); stopping the stack"
    )]
    CrashLoop {
        role: String,
        deaths: usize,
        window: u64,
        last: String,
        max: u32,
    },
    #[error(
        "{} was removed or replaced under the running stack (something cleaned the \
         runtime directory): the packets in it cannot reach a new role; stopping the \
         stack (keep other programs out of runtime-dir)",
        path.display()
    )]
    RingRemoved { path: PathBuf },
}

impl SupervisorError {
    /// Whether this is a usage or configuration error (exit status 2) rather than a
    /// failure while running (1).
    pub fn is_usage(&self) -> bool {
        matches!(
            self,
            SupervisorError::Config(_)
                | SupervisorError::NoWorkers
                | SupervisorError::NoInput
                | SupervisorError::NoDpdk
                | SupervisorError::NoInterface(_)
                | SupervisorError::BpfTwice { .. }
                | SupervisorError::Bpf(_)
                | SupervisorError::BadPattern { .. }
                | SupervisorError::PatternDir { .. }
                | SupervisorError::Unreadable { .. }
                | SupervisorError::Rules(_)
                | SupervisorError::UnixCommand { .. }
                | SupervisorError::Pidfile { .. }
                | SupervisorError::LogDir { .. }
                | SupervisorError::LogDirNotWritable { .. }
                | SupervisorError::Tls(_)
                | SupervisorError::Token(_)
        )
    }
}
