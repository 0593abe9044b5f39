//! Step 2 of a run: the runtime directory (`runtime-dir`, or a private one under
//! /dev/shm), the resolved config the roles start from, and one ring per worker. Names
//! are `meerkat-runtime`'s.

use std::path::{Path, PathBuf};

use meerkat_config::Config;
use meerkat_runtime::layout;

use crate::SupervisorError;

/// The runtime directory of a run, locked for it (`supervisor.lock`); a private one is
/// removed when dropped.
#[derive(Debug)]
pub(crate) struct RuntimeDir {
    pub(crate) path: PathBuf,
    owned: bool,
    /// Holds the lock until the run ends (closed on exec: the roles do not hold it).
    _lock: std::fs::File,
}

impl RuntimeDir {
    /// `runtime-dir` when set (created if missing, kept afterwards), else a fresh private
    /// directory `/dev/shm/meerkat-<pid>`. A directory another supervisor holds is
    /// refused before anything in it is touched; in one no supervisor holds, what an
    /// earlier run left (it ended, or died with `kill -9`) is removed first.
    pub(crate) fn create(config: &Config) -> Result<RuntimeDir, SupervisorError> {
        if let Some(p) = &config.runtime_dir {
            std::fs::create_dir_all(p).map_err(|source| SupervisorError::RuntimeDirSet {
                path: p.clone(),
                source,
            })?;
            let lock = lock(p)?;
            clear_stale(p);
            return Ok(RuntimeDir {
                path: p.clone(),
                owned: false,
                _lock: lock,
            });
        }
        let path = layout::private_dir(std::process::id());
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|source| SupervisorError::RuntimeDir {
            path: path.clone(),
            source,
        })?;
        let lock = lock(&path)?;
        Ok(RuntimeDir {
            path,
            owned: true,
            _lock: lock,
        })
    }

    /// Writes the resolved config (with this directory as `runtime-dir`) where the roles
    /// read it, and makes one fresh ring per worker. Returns the config's path.
    pub(crate) fn lay_out(&self, config: &mut Config) -> Result<PathBuf, SupervisorError> {
        config.runtime_dir = Some(self.path.clone());
        let config_path = layout::config_path(&self.path);
        write_config(&config_path, config)?;
        for w in 0..config.workers() {
            meerkat_shm::create(
                &layout::ring_path(&self.path, w),
                config.capture.ring_size.bytes() as usize,
            )?;
        }
        Ok(config_path)
    }
}

impl Drop for RuntimeDir {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

/// Removes the files an earlier run left in `dir` (see `layout::is_run_file`): its
/// rings, counter pages and shared tables would be taken for those of live roles (a
/// worker would resume a dead one's ring). Called with the lock held, so that run has
/// ended. What cannot be removed is left for the roles to report.
fn clear_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        if name.to_str().is_some_and(layout::is_run_file) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Takes `dir`'s supervisor lock (exclusive, not waiting).
fn lock(dir: &Path) -> Result<std::fs::File, SupervisorError> {
    use std::os::fd::AsRawFd;
    let path = layout::supervisor_lock_path(dir);
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .map_err(|source| SupervisorError::RuntimeDirLock {
            path: path.clone(),
            source,
        })?;
    // SAFETY: flock on a descriptor this function owns; no memory is involved.
    let r = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if r != 0 {
        let e = std::io::Error::last_os_error();
        return Err(if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
            SupervisorError::RuntimeDirInUse {
                path: dir.to_path_buf(),
                lock: path,
            }
        } else {
            SupervisorError::RuntimeDirLock { path, source: e }
        });
    }
    Ok(file)
}

/// Writes `config` as the roles read it.
pub(crate) fn write_config(path: &Path, config: &Config) -> Result<(), SupervisorError> {
    std::fs::write(path, config.to_yaml()).map_err(|source| SupervisorError::Write {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lays_out_config_and_rings_and_keeps_a_given_dir() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("rt");
        let mut config = Config {
            runtime_dir: Some(dir.clone()),
            ..Default::default()
        };
        config.detect.workers = Some(2);
        config.capture.ring_size = meerkat_config::ByteSize::kib(64);
        {
            let rt = RuntimeDir::create(&config).unwrap();
            let p = rt.lay_out(&mut config).unwrap();
            assert_eq!(p, dir.join("config.yaml"));
            assert!(dir.join("ring-0").exists() && dir.join("ring-1").exists());
        }
        // Not ours: still there.
        assert!(dir.join("config.yaml").exists());
    }

    #[test]
    fn an_earlier_runs_files_are_removed_and_others_kept() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("rt");
        std::fs::create_dir_all(&dir).unwrap();
        for f in [
            "ring-0",
            "counters-detect-0",
            "eve-writer.state",
            "order",
            "mine.txt",
        ] {
            std::fs::write(dir.join(f), b"x").unwrap();
        }
        let config = Config {
            runtime_dir: Some(dir.clone()),
            ..Default::default()
        };
        let _rt = RuntimeDir::create(&config).unwrap();
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["mine.txt", "supervisor.lock"]);
    }
}
