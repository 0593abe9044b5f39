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

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, anyhow, bail};
use hyper_util::rt::TokioIo;
use meerkat_proto::writer::CountersRequest;
use meerkat_proto::writer::writer_admin_client::WriterAdminClient;
use meerkat_runtime::counters::CaptureLiveCounter;
use meerkat_runtime::{Role, counters_path, eve_socket_path, ring_path};
use meerkat_shm::CounterReader;
use tonic::transport::{Endpoint, Uri};

use crate::cli::ProbeArgs;
use crate::{Failure, Outcome};

/// How long the eve-writer gets to answer.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(3);

pub fn probe(args: &ProbeArgs) -> Outcome {
    let resolved =
        meerkat_app::config::resolve(args.config.as_deref(), &args.set).map_err(Failure::usage)?;
    let runtime = resolved.config.runtime_dir.clone().ok_or_else(|| {
        Failure::usage(anyhow!(
            "runtime-dir is not set: the roles started on their own share it"
        ))
    })?;
    let verdict = match args.role {
        Role::EveWriter => writer(&runtime),
        Role::Detect(n) => detect(&runtime, n),
        Role::Capture => capture(&runtime),
    };
    match verdict {
        Ok(()) => {
            println!("{}: serving", args.role);
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => Err(Failure::runtime(
            e.context(format!("{} is not serving", args.role)),
        )),
    }
}

/// The pid of the role's counter page, if that process lives.
fn owner_alive(runtime: &Path, role: Role) -> anyhow::Result<u32> {
    let page = counters_path(runtime, role);
    let reader = CounterReader::open(&page)
        .with_context(|| format!("no counter page {} (not started yet?)", page.display()))?;
    let pid = reader.pid();
    let Ok(p) = libc::pid_t::try_from(pid) else {
        bail!("bad pid {pid} in {}", page.display());
    };
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let r = unsafe { libc::kill(p, 0) };
    if r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH) {
        bail!("its process {pid} (owner of {}) is gone", page.display());
    }
    Ok(pid)
}

fn capture(runtime: &Path) -> anyhow::Result<()> {
    owner_alive(runtime, Role::Capture)?;
    let page = counters_path(runtime, Role::Capture);
    // A live capture says when its source is open and reading (`capture.live`); an
    // offline one reads as soon as it runs.
    let live = CounterReader::open(&page).map(|r| r.get(CaptureLiveCounter::Live.name()));
    if let Ok(Some(0)) = live {
        bail!("its live source is not capturing yet");
    }
    Ok(())
}

fn detect(runtime: &Path, n: usize) -> anyhow::Result<()> {
    let pid = owner_alive(runtime, Role::Detect(n))?;
    let ring = ring_path(runtime, n);
    let status = meerkat_shm::status(&ring)
        .with_context(|| format!("no ring {} yet (still loading rules?)", ring.display()))?;
    if status.consumer_pid != pid {
        bail!(
            "not attached to {} yet (still loading rules?)",
            ring.display()
        );
    }
    if !status.consumer_alive {
        bail!("its heartbeat on {} is stale", ring.display());
    }
    Ok(())
}

fn writer(runtime: &Path) -> anyhow::Result<()> {
    let sock = eve_socket_path(runtime);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the gRPC client")?;
    rt.block_on(async {
        tokio::time::timeout(ANSWER_TIMEOUT, async {
            let path = sock.clone();
            // The URI is a placeholder: the connector always dials the Unix socket.
            let channel = Endpoint::from_static("http://eve-writer.local")
                .connect_with_connector(tower::service_fn(move |_: Uri| {
                    let path = path.clone();
                    async move {
                        Ok::<_, std::io::Error>(TokioIo::new(
                            tokio::net::UnixStream::connect(path).await?,
                        ))
                    }
                }))
                .await
                .with_context(|| format!("cannot connect to {}", sock.display()))?;
            WriterAdminClient::new(channel)
                .counters(CountersRequest {})
                .await
                .map_err(|s| {
                    anyhow!(
                        "WriterAdmin.Counters on {}: {}",
                        sock.display(),
                        s.message()
                    )
                })?;
            Ok(())
        })
        .await
        .map_err(|_| anyhow!("no answer on {} within {ANSWER_TIMEOUT:?}", sock.display()))?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_names() {
        assert_eq!("eve-writer".parse(), Ok(Role::EveWriter));
        assert_eq!("capture".parse(), Ok(Role::Capture));
        assert_eq!("detect-12".parse(), Ok(Role::Detect(12)));
        for bad in ["detect", "detect-", "detect-x", "writer", ""] {
            let e = bad.parse::<Role>().unwrap_err().to_string();
            assert!(
                e.contains("expected eve-writer, capture or detect-N"),
                "{e}"
            );
        }
    }

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
