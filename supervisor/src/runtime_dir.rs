//! Step 2 of a run: the runtime directory (`runtime-dir`, or a private one under
//! /dev/shm), the resolved config the roles start from, and one ring per worker. Names
//! are `meerkat-runtime`'s.

use std::path::{Path, PathBuf};

use meerkat_config::Config;
use meerkat_runtime::layout;

use crate::SupervisorError;

/// The runtime directory of a run; a private one is removed when dropped.
#[derive(Debug)]
pub(crate) struct RuntimeDir {
    pub(crate) path: PathBuf,
    owned: bool,
}

impl RuntimeDir {
    /// `runtime-dir` when set (created if missing, kept afterwards), else a fresh private
    /// directory `/dev/shm/meerkat-<pid>`.
    pub(crate) fn create(config: &Config) -> Result<RuntimeDir, SupervisorError> {
        if let Some(p) = &config.runtime_dir {
            std::fs::create_dir_all(p).map_err(|source| SupervisorError::RuntimeDirSet {
                path: p.clone(),
                source,
            })?;
            return Ok(RuntimeDir {
                path: p.clone(),
                owned: false,
            });
        }
        let path = layout::private_dir(std::process::id());
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).map_err(|source| SupervisorError::RuntimeDir {
            path: path.clone(),
            source,
        })?;
        Ok(RuntimeDir { path, owned: true })
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
}
