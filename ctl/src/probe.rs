//! `meerkat probe ROLE`: is this role, started on its own (a compose service, a container
//! of the Kubernetes pod), alive and serving? For container healthchecks and exec probes,
//! which run inside the role's own container: exit 0 when it is, 1 with the reason when
//! it is not.
//!
//! Each role is judged by what its peers rely on, read from the shared runtime directory
//! of the config (`runtime-dir`):
//! - `eve-writer`: a `WriterAdmin.Counters` call on its socket (`eve.sock`) is answered,
//!   which needs the gRPC server and the writer thread behind it;
//! - `detect-N`: its process (the owner of `counters-detect-N`) lives and it is attached
//!   to `ring-N` with a fresh heartbeat (the worker loop beats while it works or waits);
//!   while it still loads its rules it is not ready yet;
//! - `capture`: its process (the owner of `counters-capture`) lives and, when it captures
//!   live, its source is open (`capture.live`).
//!
//! Under `meerkat run` the supervisor watches the roles itself; its control API answers
//! for the whole stack.

use std::path::{Path, PathBuf};
use std::time::Duration;

use meerkat_proto::transport::unix_channel;
use meerkat_proto::writer::CountersRequest;
use meerkat_proto::writer::writer_admin_client::WriterAdminClient;
use meerkat_runtime::counters::CaptureLiveCounter;
use meerkat_runtime::{Role, counters_path, eve_socket_path, ring_path};
use meerkat_shm::{CounterReader, RingError};

/// How long the eve-writer gets to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);

/// Why a probe did not find its role serving.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error(transparent)]
    Config(#[from] meerkat_config::ConfigError),
    #[error("runtime-dir is not set: the roles started on their own share it")]
    NoRuntimeDir,
    #[error("{role} is not serving")]
    NotServing {
        role: Role,
        #[source]
        reason: NotServing,
    },
}

impl ProbeError {
    /// Whether the probe could not even be made (the config): a usage error, not a
    /// verdict on the role.
    pub fn is_usage(&self) -> bool {
        !matches!(self, ProbeError::NotServing { .. })
    }
}

/// What a role that does not serve lacks.
#[derive(Debug, thiserror::Error)]
pub enum NotServing {
    #[error("no counter page {} (not started yet?)", page.display())]
    NoPage {
        page: PathBuf,
        #[source]
        source: RingError,
    },
    #[error("bad pid {pid} in {}", page.display())]
    BadPid { pid: u32, page: PathBuf },
    #[error("its process {pid} (owner of {}) is gone", page.display())]
    Gone { pid: u32, page: PathBuf },
    #[error("its live source is not capturing yet")]
    NotCapturing,
    #[error("no ring {} yet (still loading rules?)", ring.display())]
    NoRing {
        ring: PathBuf,
        #[source]
        source: RingError,
    },
    #[error("not attached to {} yet (still loading rules?)", ring.display())]
    NotAttached { ring: PathBuf },
    #[error("its heartbeat on {} is stale", ring.display())]
    Stale { ring: PathBuf },
    #[error("cannot start the gRPC client")]
    Client(#[source] std::io::Error),
    #[error("cannot connect to {}", socket.display())]
    Connect {
        socket: PathBuf,
        #[source]
        source: tonic::transport::Error,
    },
    #[error("WriterAdmin.Counters on {}: {message}", socket.display())]
    Counters { socket: PathBuf, message: String },
    #[error("no answer on {} within {timeout:?}", socket.display())]
    NoAnswer { socket: PathBuf, timeout: Duration },
}

/// Probes `role` of the stack whose config is `config` (with `--set` overrides):
/// `Ok` when it is alive and serving.
pub fn probe(config: Option<&Path>, set: &[String], role: Role) -> Result<(), ProbeError> {
    let resolved = meerkat_config::resolve(config, set)?;
    let runtime = resolved
        .config
        .runtime_dir
        .clone()
        .ok_or(ProbeError::NoRuntimeDir)?;
    let verdict = match role {
        Role::EveWriter => writer(&runtime),
        Role::Detect(n) => detect(&runtime, n),
        Role::Capture => capture(&runtime),
    };
    verdict.map_err(|reason| ProbeError::NotServing { role, reason })
}

/// The pid of the role's counter page, if that process lives.
fn owner_alive(runtime: &Path, role: Role) -> Result<u32, NotServing> {
    let page = counters_path(runtime, role);
    let reader = CounterReader::open(&page).map_err(|source| NotServing::NoPage {
        page: page.clone(),
        source,
    })?;
    let pid = reader.pid();
    let Ok(p) = libc::pid_t::try_from(pid) else {
        return Err(NotServing::BadPid { pid, page });
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(p, 0) };
    if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        return Err(NotServing::Gone { pid, page });
    }
    Ok(pid)
}

fn capture(runtime: &Path) -> Result<(), NotServing> {
    owner_alive(runtime, Role::Capture)?;
    let page = counters_path(runtime, Role::Capture);
    // A live capture says when its source is open and reading (`capture.live`); an
    // offline one reads as soon as it runs.
    let live = CounterReader::open(&page).map(|r| r.get(CaptureLiveCounter::Live.name()));
    if let Ok(Some(0)) = live {
        return Err(NotServing::NotCapturing);
    }
    Ok(())
}

fn detect(runtime: &Path, n: usize) -> Result<(), NotServing> {
    let pid = owner_alive(runtime, Role::Detect(n))?;
    let ring = ring_path(runtime, n);
    let status = meerkat_shm::status(&ring).map_err(|source| NotServing::NoRing {
        ring: ring.clone(),
        source,
    })?;
    if status.consumer_pid != pid {
        return Err(NotServing::NotAttached { ring });
    }
    if !status.consumer_alive {
        return Err(NotServing::Stale { ring });
    }
    Ok(())
}

fn writer(runtime: &Path) -> Result<(), NotServing> {
    let sock = eve_socket_path(runtime);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(NotServing::Client)?;
    rt.block_on(async {
        tokio::time::timeout(ANSWER_TIMEOUT, async {
            let channel = unix_channel(&sock)
                .await
                .map_err(|source| NotServing::Connect {
                    socket: sock.clone(),
                    source,
                })?;
            WriterAdminClient::new(channel)
                .counters(CountersRequest {})
                .await
                .map_err(|s| NotServing::Counters {
                    socket: sock.clone(),
                    message: s.message().to_string(),
                })?;
            Ok(())
        })
        .await
        .map_err(|_| NotServing::NoAnswer {
            socket: sock.clone(),
            timeout: ANSWER_TIMEOUT,
        })?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_running_is_not_serving() {
        let t = tempfile::tempdir().unwrap();
        let e = writer(t.path()).unwrap_err().to_string();
        assert!(e.contains("cannot connect"), "{e}");
        let e = detect(t.path(), 0).unwrap_err().to_string();
        assert!(e.contains("no counter page"), "{e}");
        let e = owner_alive(t.path(), Role::Capture)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no counter page"), "{e}");
    }
}
