//! How a role started alone finds its peers.
//!
//! `meerkat run` starts the roles in dependency order and waits for each; a container
//! stack (docker-compose services, the containers of a Kubernetes pod) starts them all at
//! once, in any order, and restarts each on its own. So every role finds its peers by
//! the paths of the shared configuration, all in `runtime-dir`, and waits for them
//! instead of failing:
//!
//! - detect waits for the eve-writer's socket (`eve.sock`) to accept connections before it
//!   takes packets from its ring (packets wait in the ring, not in a worker that cannot
//!   deliver their events);
//! - capture waits until a detect worker is attached to each ring (`ring-<n>`, consumer
//!   heartbeat fresh) before it reads its first packet, so a live capture does not fill
//!   rings nobody reads;
//! - the eve-writer needs nobody.
//!
//! Under `meerkat run` the peers are ready before a role starts, so these return at once.
//! A stop request (SIGTERM) while waiting ends the role cleanly.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_config::Config;

/// How often the peers' paths are looked at while waiting.
const POLL: Duration = Duration::from_millis(50);
/// How long to wait quietly before saying what the role waits for.
const QUIET: Duration = Duration::from_secs(1);
/// How often to repeat it while the wait goes on.
const REMIND: Duration = Duration::from_secs(30);

/// Why a role cannot look for its peers.
#[derive(Debug, thiserror::Error)]
pub enum PeersError {
    #[error(
        "runtime-dir is not set: a role started on its own finds its peers there \
         (set runtime-dir in the config or pass --set runtime-dir=DIR)"
    )]
    NoRuntimeDir,
    #[error("cannot create runtime-dir {}", path.display())]
    RuntimeDir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The runtime directory shared with the peers, created if missing (a fresh volume may
/// not hold it yet).
pub fn runtime_dir(config: &Config) -> Result<PathBuf, PeersError> {
    let dir = config.runtime_dir.clone().ok_or(PeersError::NoRuntimeDir)?;
    std::fs::create_dir_all(&dir).map_err(|source| PeersError::RuntimeDir {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// Polls `ready` until it holds (`true`) or `stop` is set (`false`), saying after a
/// second, and then every half minute, what it waits for.
fn wait(what: &str, stop: &AtomicBool, mut ready: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    let mut said: Option<Instant> = None;
    loop {
        if ready() {
            if said.is_some() {
                tracing::info!(
                    "{what}: ready after {:.1} s",
                    started.elapsed().as_secs_f64()
                );
            }
            return true;
        }
        if stop.load(Ordering::Relaxed) {
            tracing::info!("stopped while waiting for {what}");
            return false;
        }
        let due = match said {
            None => started.elapsed() >= QUIET,
            Some(t) => t.elapsed() >= REMIND,
        };
        if due {
            tracing::info!("waiting for {what}");
            said = Some(Instant::now());
        }
        std::thread::sleep(POLL);
    }
}

/// Waits for the eve-writer of `runtime` to accept connections on its socket.
pub fn wait_for_writer(runtime: &Path, stop: &AtomicBool) -> bool {
    let sock = meerkat_runtime::eve_socket_path(runtime);
    wait(
        &format!("the eve-writer (socket {})", sock.display()),
        stop,
        || std::os::unix::net::UnixStream::connect(&sock).is_ok(),
    )
}

/// Waits until a live detect worker is attached to each of the `workers` rings.
pub fn wait_for_workers(runtime: &Path, workers: usize, stop: &AtomicBool) -> bool {
    let rings: Vec<PathBuf> = (0..workers)
        .map(|w| meerkat_runtime::ring_path(runtime, w))
        .collect();
    wait(
        &format!(
            "{workers} detect worker(s) to attach to {}",
            meerkat_runtime::layout::ring_pattern(runtime).display()
        ),
        stop,
        || {
            rings
                .iter()
                .all(|r| meerkat_shm::status(r).is_ok_and(|s| s.consumer_alive))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(runtime: Option<&Path>) -> Config {
        Config {
            runtime_dir: runtime.map(Path::to_path_buf),
            ..Default::default()
        }
    }

    #[test]
    fn runtime_dir_is_required_and_created() {
        let err = runtime_dir(&config(None)).unwrap_err().to_string();
        assert!(err.contains("runtime-dir is not set"), "{err}");
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("a/b");
        assert_eq!(runtime_dir(&config(Some(&dir))).unwrap(), dir);
        assert!(dir.is_dir());
    }

    #[test]
    fn waits_end_when_ready_or_stopped() {
        let t = tempfile::tempdir().unwrap();
        let stop = AtomicBool::new(true);
        // Nobody listens and no worker is attached: a stop request ends the wait.
        assert!(!wait_for_writer(t.path(), &stop));
        assert!(!wait_for_workers(t.path(), 2, &stop));
        // Zero workers: nothing to wait for.
        assert!(wait_for_workers(t.path(), 0, &AtomicBool::new(false)));
        // A listener on the socket path: ready.
        let _l = std::os::unix::net::UnixListener::bind(meerkat_runtime::eve_socket_path(t.path()))
            .unwrap();
        assert!(wait_for_writer(t.path(), &AtomicBool::new(false)));
    }
}
