//! The runtime directory: the files through which the roles of one sensor find each
//! other. All roles of a sensor share one directory (`runtime-dir`; under `meerkat run`
//! a private one the supervisor makes, see [`private_dir`]), normally on tmpfs so that
//! the rings and pages are memory.
//!
//! | file | made by | used by |
//! |---|---|---|
//! | `ring-N` | the supervisor, or detect worker N | capture (producer), detect worker N (consumer) |
//! | `counters-ROLE` | each role, for its own counters | supervisor, control API, `ctl`, probes, the eve-writer's `stats` |
//! | `eve.sock` | the eve-writer (gRPC `EventStream`, `WriterAdmin`) | detect workers, supervisor, probes |
//! | `detect-N.sock` | detect worker N (gRPC `WorkerControl`) | the control API |
//! | `control.sock` | the supervisor (gRPC `Control`; `control.socket` may move it) | `meerkat ctl` |
//! | `eve-writer.state` | the eve-writer (delivery state, outlives it) | the eve-writer |
//! | `host-state` | the first detect worker (shared host table) | every detect worker |
//! | `order` | capture and every detect worker (how far packets are handed out and processed) | detect workers |
//! | `expectations` | the first detect worker (announced connections: FTP data) | every detect worker |
//! | `dataset-NAME` | the first detect worker that loads a rule naming set NAME (or the `datasets` config section) | every detect worker, the supervisor (save at shutdown, `dataset-*` commands) |
//! | `config.yaml` | the supervisor (the resolved config) | every role it starts |
//! | `supervisor.lock` | the supervisor (held with `flock` while it runs) | a second supervisor, refused |
//! | `pcap-files` | capture (the capture files read, when `pcap_filename` is logged) | detect workers |
//!
//! The layouts of the shared-memory files are `meerkat-shm`'s.

use std::path::{Path, PathBuf};

use crate::Role;

/// File name prefix of a worker's packet ring (`ring-0`).
pub const RING_PREFIX: &str = "ring-";
/// File name prefix of a role's counter page (`counters-detect-0`).
pub const COUNTERS_PREFIX: &str = "counters-";
/// The eve-writer's event socket.
pub const EVE_SOCKET: &str = "eve.sock";
/// Suffix of a detect worker's control socket (`detect-0.sock`).
pub const WORKER_SOCKET_SUFFIX: &str = ".sock";
/// The supervisor's control socket (unless `control.socket` says otherwise).
pub const CONTROL_SOCKET: &str = "control.sock";
/// The eve-writer's delivery-state page.
pub const EVE_STATE: &str = "eve-writer.state";
/// The detect workers' shared host table.
pub const HOST_TABLE: &str = "host-state";
/// The processing-order page (`meerkat-shm`'s `order`).
pub const ORDER: &str = "order";
/// The detect workers' expectation table (`meerkat-shm`'s `expect`).
pub const EXPECTATIONS: &str = "expectations";
/// File name prefix of a dataset (`meerkat-shm`'s `dataset`; the rest of the name is
/// `meerkat_shm::dataset::file_name`'s).
pub const DATASET_PREFIX: &str = "dataset-";
/// The resolved config the supervisor hands to the roles.
pub const CONFIG: &str = "config.yaml";
/// The supervisor's lock (an exclusive `flock` for as long as it runs): one stack per
/// directory.
pub const SUPERVISOR_LOCK: &str = "supervisor.lock";
/// The capture files of the run, by the index ring records carry (`meerkat-shm`'s
/// `files`).
pub const PCAP_FILES: &str = "pcap-files";
/// Marker of a shared file being made (`<name>.tmp.<pid>`, see `meerkat-shm`): not a
/// file of the layout yet.
pub const STAGING_MARK: &str = ".tmp.";

/// Where `meerkat run` makes its private runtime directory, in this order: tmpfs, then
/// the temporary directory.
pub const PRIVATE_PARENT: &str = "/dev/shm";
/// Name prefix of a private runtime directory (`meerkat-<pid>`).
pub const PRIVATE_PREFIX: &str = "meerkat-";

/// Whether `file_name` is a file one run of a stack makes in its runtime directory
/// (rings, counter pages, sockets, shared tables, the resolved config, files being
/// made): what a new stack clears before it starts, so that nothing of a stack that
/// died without cleaning up (`kill -9` of its supervisor) is taken for a live role's.
/// The lock, and any file the layout does not name, are not.
pub fn is_run_file(file_name: &str) -> bool {
    file_name.starts_with(RING_PREFIX)
        || file_name.starts_with(COUNTERS_PREFIX)
        || file_name.ends_with(WORKER_SOCKET_SUFFIX)
        || file_name.contains(STAGING_MARK)
        || file_name.starts_with(DATASET_PREFIX)
        || [
            EVE_STATE,
            HOST_TABLE,
            ORDER,
            EXPECTATIONS,
            CONFIG,
            PCAP_FILES,
        ]
        .contains(&file_name)
}

/// The supervisor's lock file.
pub fn supervisor_lock_path(dir: &Path) -> PathBuf {
    dir.join(SUPERVISOR_LOCK)
}

/// Worker `n`'s packet ring.
pub fn ring_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("{RING_PREFIX}{n}"))
}

/// How the rings are named, for messages (`<dir>/ring-<n>`).
pub fn ring_pattern(dir: &Path) -> PathBuf {
    dir.join(format!("{RING_PREFIX}<n>"))
}

/// The counter page of `role`.
pub fn counters_path(dir: &Path, role: Role) -> PathBuf {
    dir.join(format!("{COUNTERS_PREFIX}{role}"))
}

/// The role whose counter page a file of the runtime directory is (`counters-capture`
/// -> `capture`), or `None` for any other file (a page being made included). The role
/// is returned as named, whether or not it is one Meerkat knows.
pub fn counters_role(file_name: &str) -> Option<&str> {
    file_name
        .strip_prefix(COUNTERS_PREFIX)
        .filter(|r| !r.contains(STAGING_MARK))
}

/// The run's table of capture files.
pub fn pcap_files_path(dir: &Path) -> PathBuf {
    dir.join(PCAP_FILES)
}

/// The eve-writer's event socket.
pub fn eve_socket_path(dir: &Path) -> PathBuf {
    dir.join(EVE_SOCKET)
}

/// Detect worker `n`'s control socket.
pub fn worker_socket_path(dir: &Path, n: usize) -> PathBuf {
    dir.join(format!("{}{WORKER_SOCKET_SUFFIX}", Role::Detect(n)))
}

/// The supervisor's control socket in the runtime directory.
pub fn control_socket_path(dir: &Path) -> PathBuf {
    dir.join(CONTROL_SOCKET)
}

/// The eve-writer's delivery-state page.
pub fn eve_state_path(dir: &Path) -> PathBuf {
    dir.join(EVE_STATE)
}

/// The detect workers' shared host table.
pub fn host_table_path(dir: &Path) -> PathBuf {
    dir.join(HOST_TABLE)
}

/// The processing-order page.
pub fn order_path(dir: &Path) -> PathBuf {
    dir.join(ORDER)
}

/// The detect workers' expectation table.
pub fn expectations_path(dir: &Path) -> PathBuf {
    dir.join(EXPECTATIONS)
}

/// The datasets of the runtime directory: their files, in name order.
pub fn dataset_paths(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            let n = e.file_name();
            let n = n.to_string_lossy();
            n.starts_with(DATASET_PREFIX) && !n.contains(STAGING_MARK)
        })
        .map(|e| e.path())
        .collect();
    v.sort();
    v
}

/// The resolved config of the stack.
pub fn config_path(dir: &Path) -> PathBuf {
    dir.join(CONFIG)
}

/// The parents that private runtime directories are made in or looked for in:
/// [`PRIVATE_PARENT`] (when it exists, for making one) and the temporary directory.
pub fn private_parents() -> [PathBuf; 2] {
    [PathBuf::from(PRIVATE_PARENT), std::env::temp_dir()]
}

/// The private runtime directory of the supervisor with process id `pid`:
/// `/dev/shm/meerkat-<pid>`, or under the temporary directory when there is no
/// `/dev/shm`.
pub fn private_dir(pid: u32) -> PathBuf {
    let base = if Path::new(PRIVATE_PARENT).is_dir() {
        PathBuf::from(PRIVATE_PARENT)
    } else {
        std::env::temp_dir()
    };
    base.join(format!("{PRIVATE_PREFIX}{pid}"))
}

/// Whether a directory entry's name is that of a private runtime directory.
pub fn is_private_dir_name(name: &str) -> bool {
    name.starts_with(PRIVATE_PREFIX)
}

#[cfg(test)]
mod tests {

    #[test]
    fn run_files_are_the_layouts_but_the_lock() {
        for f in [
            "ring-0",
            "counters-detect-1",
            "eve.sock",
            "detect-0.sock",
            "control.sock",
            "eve-writer.state",
            "host-state",
            "order",
            "expectations",
            "config.yaml",
            "pcap-files",
            "dataset-dns-seen",
            "ring-1.tmp.42",
        ] {
            assert!(is_run_file(f), "{f}");
        }
        for f in [SUPERVISOR_LOCK, "notes.txt", "rules"] {
            assert!(!is_run_file(f), "{f}");
        }
    }

    use super::*;

    #[test]
    fn the_names_every_role_uses() {
        let d = Path::new("/rt");
        assert_eq!(ring_path(d, 3), Path::new("/rt/ring-3"));
        assert_eq!(ring_pattern(d), Path::new("/rt/ring-<n>"));
        assert_eq!(
            counters_path(d, Role::Detect(1)),
            Path::new("/rt/counters-detect-1")
        );
        assert_eq!(
            counters_path(d, Role::EveWriter),
            Path::new("/rt/counters-eve-writer")
        );
        assert_eq!(
            counters_path(d, Role::Capture),
            Path::new("/rt/counters-capture")
        );
        assert_eq!(eve_socket_path(d), Path::new("/rt/eve.sock"));
        assert_eq!(worker_socket_path(d, 2), Path::new("/rt/detect-2.sock"));
        assert_eq!(control_socket_path(d), Path::new("/rt/control.sock"));
        assert_eq!(eve_state_path(d), Path::new("/rt/eve-writer.state"));
        assert_eq!(host_table_path(d), Path::new("/rt/host-state"));
        assert_eq!(config_path(d), Path::new("/rt/config.yaml"));
        assert!(private_dir(42).ends_with("meerkat-42"));
        assert!(is_private_dir_name("meerkat-42") && !is_private_dir_name("other"));
    }

    #[test]
    fn counter_pages_are_told_from_other_files() {
        assert_eq!(counters_role("counters-detect-0"), Some("detect-0"));
        assert_eq!(counters_role("counters-junk"), Some("junk"));
        assert_eq!(counters_role("counters-capture.tmp.123"), None);
        assert_eq!(counters_role("ring-0"), None);
    }
}
