//! The registry: what has been done with each file, persisted so that a restart (even
//! after `kill -9`) neither redoes nor skips anything.
//!
//! # Contents
//!
//! One [`Entry`] per file identity that has been worked on: where the file was last seen,
//! its stat and fingerprint (so the scanner can recognise it after a restart), the bytes
//! and packets done, whether it is done, a digest of the processed bytes (checked before
//! resuming), its alert count and error. Plus the [`RunState`] of the run writing to it:
//! whether it ended cleanly, and how long its outputs were at the last checkpoint (see
//! [`OutputMark`]).
//!
//! # On disk
//!
//! A snapshot `<path>` (JSON) and a log `<path>.log` (one JSON object per line, each an
//! atomic batch of updates). An update is one `write(2)` appended to the log: once the call
//! returns the bytes are in the page cache and survive the death of the process. Loading
//! replays the log over the snapshot; a last line cut short (a write that died part way)
//! is dropped. When the log is long, a new snapshot is written to `<path>.tmp`, synced,
//! renamed over `<path>` (atomic), the directory synced, and the log emptied; every line
//! carries the snapshot generation it follows, so lines left over by a crash between the
//! rename and the emptying are recognised and skipped.
//!
//! # Crash safety: what is claimed
//!
//! The registry survives the death of any process (`kill -9`, a panic, the OOM killer):
//! that needs no fsync, since a `write(2)` that returned is in the page cache, which
//! outlives the process (the test `a_commit_survives_kill_9` kills a process right after
//! its commit). It does not claim to survive a power cut, and log appends are not
//! fsync'ed, by choice: a checkpoint records file progress *together with* the length
//! of each EVE output at that moment, and the outputs are not fsync'ed (the eve-writer
//! hands bytes to the OS, as Suricata does with eve.json). A registry synced on its own
//! would, after a power cut, run ahead of the outputs and record as done work whose
//! events were lost; unsynced, both lose their last seconds and the next run cuts the
//! outputs back to the (older) checkpoint and does that work again. Only compaction
//! syncs (the snapshot file and its directory), because a rename must not leave an empty
//! snapshot behind. With ext4's default `data=ordered` an unsynced log loses a suffix
//! after a power cut, never the middle; a cut-short last line is dropped on load.
//!
//! `<path>.lock` (flock) keeps two runs from sharing a registry.

use std::collections::BTreeMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Write};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use nix::fcntl::{Flock, FlockArg};
use serde::{Deserialize, Serialize};

use crate::identity::{Fingerprint, Identity, Stat, Window, opt_hex128};
use crate::scanner::{FileId, FileInfo, Restored};

/// Snapshot format name.
const FORMAT: &str = "meerkat-pcap-registry";
/// Snapshot format version.
pub const VERSION: u32 = 1;
/// Log lines before a new snapshot is written (at least; more with many entries).
const COMPACT_LINES: usize = 10_000;

/// Errors of the registry.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("registry {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("registry {path} is in use by another run (lock {lock} is held)")]
    Locked { path: PathBuf, lock: PathBuf },
    #[error("registry {path} is corrupt at {at}: {reason}")]
    Corrupt {
        path: PathBuf,
        at: String,
        reason: String,
    },
    #[error("registry {path} has format version {found}, this build reads {VERSION}")]
    Version { path: PathBuf, found: u32 },
}

/// What has been done with one file identity.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub id: FileId,
    /// Where the file was last seen.
    #[serde(with = "path_json")]
    pub path: PathBuf,
    pub stat: Stat,
    #[serde(default)]
    pub fingerprint: Option<Fingerprint>,
    /// Bytes of the file processed: the offset of the next record to read.
    pub bytes_done: u64,
    pub packets_done: u64,
    /// Everything the file held when it was last read is processed.
    pub done: bool,
    /// [`crate::identity::processed_digest`] of `[0, bytes_done)`.
    #[serde(default, with = "opt_hex128")]
    pub digest: Option<u128>,
    /// Alerts raised by the file's packets.
    #[serde(default)]
    pub alerts: u64,
    /// Why reading the file stopped, when it did not end cleanly.
    #[serde(default)]
    pub error: Option<String>,
    /// Unix seconds when the file was seen deleted.
    #[serde(default)]
    pub gone_since: Option<u64>,
}

impl Entry {
    /// A fresh entry for a file the scanner knows.
    pub fn new(info: &FileInfo) -> Entry {
        Entry {
            id: info.id,
            path: info.path.clone(),
            stat: info.stat,
            fingerprint: info.fingerprint,
            bytes_done: 0,
            packets_done: 0,
            done: false,
            digest: None,
            alerts: 0,
            error: None,
            gone_since: None,
        }
    }

    /// Takes the scanner's view of the file (path, stat, fingerprint).
    pub fn update_from(&mut self, info: &FileInfo) {
        self.path.clone_from(&info.path);
        self.stat = info.stat;
        self.fingerprint = info.fingerprint;
        self.gone_since = None;
    }

    /// Forgets the progress: the file is processed again from its start.
    pub fn restart(&mut self) {
        self.bytes_done = 0;
        self.packets_done = 0;
        self.done = false;
        self.digest = None;
        self.alerts = 0;
        self.error = None;
    }

    /// The entry as the scanner restores it.
    pub fn restored(&self) -> Restored {
        Restored {
            info: FileInfo {
                id: self.id,
                path: self.path.clone(),
                stat: self.stat,
                fingerprint: self.fingerprint,
            },
            gone_since: self.gone_since.map(|s| UNIX_EPOCH + Duration::from_secs(s)),
        }
    }
}

/// Unix seconds of `t` (0 before the epoch).
pub fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Whether the run using the registry ended cleanly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RunStatus {
    /// No run, or the last one ended cleanly: every output holds exactly the events of
    /// the work recorded here.
    #[default]
    Closed,
    /// A run is going on, or died: its outputs may hold events written after its last
    /// checkpoint (work not recorded here, which will be done again).
    Open,
}

/// An output file's identity and length at a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputMark {
    #[serde(with = "path_json")]
    pub path: PathBuf,
    pub dev: u64,
    pub ino: u64,
    pub len: u64,
}

impl OutputMark {
    /// The current identity and length of `path`; `None` if it does not exist.
    pub fn of(path: &Path) -> io::Result<Option<OutputMark>> {
        match fs::metadata(path) {
            Ok(m) => Ok(Some(OutputMark {
                path: path.to_path_buf(),
                dev: m.dev(),
                ino: m.ino(),
                len: m.len(),
            })),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// What [`roll_back`] did to one output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RollBack {
    /// Cut back to the checkpoint length (`removed` bytes written after it).
    Truncated {
        path: PathBuf,
        removed: u64,
    },
    /// Already at the checkpoint length.
    Unchanged {
        path: PathBuf,
    },
    /// Another file is at the path now (rotated, replaced): left alone.
    Replaced {
        path: PathBuf,
    },
    /// Shorter than at the checkpoint (someone cut it): left alone.
    Shorter {
        path: PathBuf,
        len: u64,
        mark: u64,
    },
    Missing {
        path: PathBuf,
    },
}

/// Cuts an output back to its length at the last checkpoint of a run that died, if it is
/// still the same file. Bytes past the mark are events of work the registry does not
/// record as done: the next run produces them again.
pub fn roll_back(mark: &OutputMark) -> io::Result<RollBack> {
    let path = mark.path.clone();
    let file = match OpenOptions::new().write(true).open(&mark.path) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(RollBack::Missing { path }),
        Err(e) => return Err(e),
    };
    let m = file.metadata()?;
    if (m.dev(), m.ino()) != (mark.dev, mark.ino) {
        return Ok(RollBack::Replaced { path });
    }
    if m.len() < mark.len {
        return Ok(RollBack::Shorter {
            path,
            len: m.len(),
            mark: mark.len,
        });
    }
    if m.len() == mark.len {
        return Ok(RollBack::Unchanged { path });
    }
    file.set_len(mark.len)?;
    file.sync_all()?;
    Ok(RollBack::Truncated {
        path,
        removed: m.len() - mark.len,
    })
}

/// The run using the registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct RunState {
    pub status: RunStatus,
    /// Outputs as they were at the last checkpoint of the open run.
    #[serde(default)]
    pub outputs: Vec<OutputMark>,
}

#[derive(Debug, Serialize, Deserialize)]
struct Snapshot {
    format: String,
    version: u32,
    generation: u64,
    identity: Identity,
    window: Window,
    #[serde(default)]
    run: RunState,
    #[serde(default)]
    files: Vec<Entry>,
}

/// One log line: an atomic batch.
#[derive(Debug, Serialize, Deserialize)]
struct Line {
    generation: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    put: Vec<Entry>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    del: Vec<FileId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    run: Option<RunState>,
}

/// An open registry (holding its lock).
#[derive(Debug)]
pub struct Registry {
    path: PathBuf,
    log_path: PathBuf,
    log: File,
    _lock: Flock<File>,
    generation: u64,
    identity: Identity,
    window: Window,
    entries: BTreeMap<FileId, Entry>,
    run: RunState,
    log_lines: usize,
    /// Set when loading found something to say (a torn last line, a changed identity).
    pub notes: Vec<String>,
}

fn sibling(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

impl Registry {
    /// The log file of the registry at `path`.
    pub fn log_path(path: &Path) -> PathBuf {
        sibling(path, ".log")
    }

    /// Whether a registry exists at `path`.
    pub fn exists(path: &Path) -> bool {
        path.exists() || Self::log_path(path).exists()
    }

    /// Opens (or creates) the registry at `path`, locks it, and loads it. Fingerprints
    /// stored with another identity strategy or window are dropped (the scanner then
    /// recognises the files by inode and stat, and hashes them again).
    pub fn open(
        path: &Path,
        identity: Identity,
        window: Window,
    ) -> Result<Registry, RegistryError> {
        let io = |source| RegistryError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            fs::create_dir_all(parent).map_err(io)?;
        }
        let lock_path = sibling(path, ".lock");
        let lock_file = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(io)?;
        let lock = Flock::lock(lock_file, FlockArg::LockExclusiveNonblock).map_err(|(_, e)| {
            if e == nix::errno::Errno::EWOULDBLOCK {
                RegistryError::Locked {
                    path: path.to_path_buf(),
                    lock: lock_path.clone(),
                }
            } else {
                io(io::Error::from(e))
            }
        })?;

        let mut notes = Vec::new();
        let (mut generation, mut stored_identity, mut stored_window, mut run, mut entries) =
            (0, identity, window, RunState::default(), BTreeMap::new());
        let mut fresh = false;
        match fs::read(path) {
            Ok(bytes) => {
                let snap: Snapshot =
                    serde_json::from_slice(&bytes).map_err(|e| RegistryError::Corrupt {
                        path: path.to_path_buf(),
                        at: "snapshot".to_string(),
                        reason: e.to_string(),
                    })?;
                if snap.format != FORMAT {
                    return Err(RegistryError::Corrupt {
                        path: path.to_path_buf(),
                        at: "snapshot".to_string(),
                        reason: format!("format `{}` is not {FORMAT}", snap.format),
                    });
                }
                if snap.version != VERSION {
                    return Err(RegistryError::Version {
                        path: path.to_path_buf(),
                        found: snap.version,
                    });
                }
                generation = snap.generation;
                stored_identity = snap.identity;
                stored_window = snap.window;
                run = snap.run;
                entries = snap.files.into_iter().map(|e| (e.id, e)).collect();
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => fresh = true,
            Err(e) => return Err(io(e)),
        }

        let log_path = Self::log_path(path);
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .read(true)
            .open(&log_path)
            .map_err(io)?;
        let mut log_lines = 0;
        let mut good_end = 0u64;
        let mut pos = 0u64;
        let mut torn: Option<(usize, String)> = None;
        {
            let mut reader = BufReader::new(&mut log);
            let mut line = Vec::new();
            let mut n = 0usize;
            loop {
                line.clear();
                let k = reader.read_until(b'\n', &mut line).map_err(io)?;
                if k == 0 {
                    break;
                }
                n += 1;
                pos += k as u64;
                if let Some((at, reason)) = torn.take() {
                    // A bad line followed by more lines is not a torn last write.
                    return Err(RegistryError::Corrupt {
                        path: log_path.clone(),
                        at: format!("line {at}"),
                        reason,
                    });
                }
                match serde_json::from_slice::<Line>(&line) {
                    Ok(l) => {
                        good_end = pos;
                        if l.generation < generation {
                            continue; // already in the snapshot
                        }
                        log_lines += 1;
                        for e in l.put {
                            entries.insert(e.id, e);
                        }
                        for id in l.del {
                            entries.remove(&id);
                        }
                        if let Some(r) = l.run {
                            run = r;
                        }
                    }
                    Err(e) => torn = Some((n, e.to_string())),
                }
            }
        }
        if let Some((at, _)) = torn {
            notes.push(format!(
                "{}: dropped the last line ({at}), cut short by a crash",
                log_path.display()
            ));
            log.set_len(good_end).map_err(io)?;
        }
        let mut reg = Registry {
            path: path.to_path_buf(),
            log_path,
            log,
            _lock: lock,
            generation,
            identity,
            window,
            entries,
            run,
            log_lines,
            notes,
        };
        if stored_identity != identity || stored_window != window {
            for e in reg.entries.values_mut() {
                e.fingerprint = None;
            }
            reg.notes.push(format!(
                "{}: identity changed ({} {:?} -> {} {:?}): files are recognised by inode \
                 and stat, and fingerprinted again",
                path.display(),
                stored_identity.name(),
                stored_window,
                identity.name(),
                window
            ));
            reg.compact()?;
        } else if fresh {
            // The snapshot records the identity strategy and window the fingerprints use.
            reg.compact()?;
        }
        Ok(reg)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn get(&self, id: FileId) -> Option<&Entry> {
        self.entries.get(&id)
    }

    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.entries.values()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn run(&self) -> &RunState {
        &self.run
    }

    /// Writes a batch atomically: entries to put, identities to drop, and the run state.
    pub fn commit(
        &mut self,
        put: Vec<Entry>,
        del: Vec<FileId>,
        run: Option<RunState>,
    ) -> Result<(), RegistryError> {
        if put.is_empty() && del.is_empty() && run.is_none() {
            return Ok(());
        }
        let line = Line {
            generation: self.generation,
            put,
            del,
            run,
        };
        let mut text = serde_json::to_vec(&line).map_err(|e| RegistryError::Io {
            path: self.log_path.clone(),
            source: io::Error::other(e),
        })?;
        text.push(b'\n');
        // One write(2): in the page cache (and so safe from any process death) on return.
        self.log
            .write_all(&text)
            .map_err(|source| RegistryError::Io {
                path: self.log_path.clone(),
                source,
            })?;
        self.log_lines += 1;
        for e in line.put {
            self.entries.insert(e.id, e);
        }
        for id in line.del {
            self.entries.remove(&id);
        }
        if let Some(r) = line.run {
            self.run = r;
        }
        if self.log_lines >= COMPACT_LINES.max(self.entries.len()) {
            self.compact()?;
        }
        Ok(())
    }

    /// Writes a snapshot (temporary file, fsync, rename, directory fsync) and empties
    /// the log.
    pub fn compact(&mut self) -> Result<(), RegistryError> {
        let io = |source| RegistryError::Io {
            path: self.path.clone(),
            source,
        };
        let snap = Snapshot {
            format: FORMAT.to_string(),
            version: VERSION,
            generation: self.generation + 1,
            identity: self.identity,
            window: self.window,
            run: self.run.clone(),
            files: self.entries.values().cloned().collect(),
        };
        let tmp = sibling(&self.path, ".tmp");
        {
            let mut f = File::create(&tmp).map_err(io)?;
            let mut w = io::BufWriter::new(&mut f);
            serde_json::to_writer(&mut w, &snap).map_err(|e| io(io::Error::other(e)))?;
            w.write_all(b"\n").map_err(io)?;
            w.flush().map_err(io)?;
            drop(w);
            f.sync_all().map_err(io)?;
        }
        fs::rename(&tmp, &self.path).map_err(io)?;
        if let Some(dir) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            File::open(dir).and_then(|d| d.sync_all()).map_err(io)?;
        }
        self.generation += 1;
        // From here the snapshot holds everything; old lines (generation lower) are skipped if
        // the truncation below does not happen.
        self.log.set_len(0).map_err(io)?;
        self.log_lines = 0;
        Ok(())
    }
}

/// Paths as JSON strings when they are UTF-8, as arrays of bytes when not.
mod path_json {
    use super::*;
    use serde::{Deserializer, Serializer};

    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Repr {
        Text(String),
        Bytes(Vec<u8>),
    }

    pub fn serialize<S: Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
        match p.to_str() {
            Some(t) => s.serialize_str(t),
            None => p.as_os_str().as_bytes().serialize(s),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<PathBuf, D::Error> {
        Ok(match Repr::deserialize(d)? {
            Repr::Text(t) => PathBuf::from(t),
            Repr::Bytes(b) => PathBuf::from(std::ffi::OsString::from_vec(b)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    fn entry(id: FileId, path: &Path) -> Entry {
        Entry {
            id,
            path: path.to_path_buf(),
            stat: Stat {
                dev: 1,
                ino: id,
                size: 100,
                mtime_ns: 5,
                ctime_ns: 5,
                btime_ns: 0,
            },
            fingerprint: Some(Fingerprint {
                hash: u128::from(id) << 64,
                len: 100,
            }),
            bytes_done: 24,
            packets_done: 0,
            done: false,
            digest: Some(7),
            alerts: 0,
            error: None,
            gone_since: None,
        }
    }

    fn open(p: &Path) -> Registry {
        Registry::open(p, Identity::Fingerprint, Window::default()).unwrap()
    }

    #[test]
    fn commits_survive_reopen_and_compaction() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reg.json");
        let weird = PathBuf::from(OsStr::from_bytes(b"/caps/\xff\xfe.pcap"));
        {
            let mut r = open(&p);
            assert!(r.is_empty());
            r.commit(vec![entry(1, Path::new("/caps/a.pcap"))], vec![], None)
                .unwrap();
            r.commit(vec![entry(2, &weird)], vec![], None).unwrap();
            let mut e = entry(1, Path::new("/caps/a.pcap"));
            e.done = true;
            e.bytes_done = 100;
            r.commit(
                vec![e],
                vec![],
                Some(RunState {
                    status: RunStatus::Open,
                    outputs: vec![],
                }),
            )
            .unwrap();
        }
        let mut r = open(&p);
        assert_eq!(r.len(), 2);
        assert!(r.get(1).unwrap().done);
        assert_eq!(r.get(2).unwrap().path, weird);
        assert_eq!(r.run().status, RunStatus::Open);
        r.compact().unwrap();
        r.commit(vec![], vec![2], None).unwrap();
        drop(r);
        let r = open(&p);
        assert_eq!(r.len(), 1);
        assert_eq!(r.get(1).unwrap().bytes_done, 100);
        assert_eq!(r.run().status, RunStatus::Open);
    }

    /// The claim of the module doc: a commit that returned survives a `kill -9` of the
    /// process that made it, without any fsync. The child (this test binary, run again)
    /// commits and then kills itself with SIGKILL.
    #[test]
    fn a_commit_survives_kill_9() {
        const VAR: &str = "MEERKAT_REGISTRY_KILL_CHILD";
        if let Some(p) = std::env::var_os(VAR) {
            let mut r = open(Path::new(&p));
            for i in 1..=50 {
                r.commit(vec![entry(i, Path::new("/caps/x.pcap"))], vec![], None)
                    .unwrap();
            }
            let mut e = entry(7, Path::new("/caps/seven.pcap"));
            e.done = true;
            r.commit(vec![e], vec![3], None).unwrap();
            // SAFETY: kill(2) on this process; nothing after it runs.
            unsafe { libc::kill(libc::getpid(), libc::SIGKILL) };
            unreachable!("SIGKILL did not kill the process");
        }
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reg.json");
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "registry::tests::a_commit_survives_kill_9",
                "--test-threads=1",
            ])
            .env(VAR, &p)
            .output()
            .unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            out.status.signal(),
            Some(libc::SIGKILL),
            "the child must die by SIGKILL: {:?}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        let r = open(&p);
        assert_eq!(r.len(), 49);
        assert!(r.get(3).is_none());
        assert!(r.get(7).unwrap().done);
        assert_eq!(r.get(7).unwrap().path, Path::new("/caps/seven.pcap"));
    }

    #[test]
    fn torn_last_line_is_dropped_and_middle_corruption_is_an_error() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reg.json");
        {
            let mut r = open(&p);
            r.commit(vec![entry(1, Path::new("/a"))], vec![], None)
                .unwrap();
            r.commit(vec![entry(2, Path::new("/b"))], vec![], None)
                .unwrap();
        }
        let log = Registry::log_path(&p);
        let full = fs::read(&log).unwrap();
        // A write cut part way through the second line.
        let first_end = full.iter().position(|&b| b == b'\n').unwrap() + 1;
        fs::write(&log, &full[..first_end + 20]).unwrap();
        let mut r = open(&p);
        assert_eq!(r.len(), 1);
        assert_eq!(r.notes.len(), 1, "{:?}", r.notes);
        // The cut line is gone from the file, so appending goes on cleanly.
        r.commit(vec![entry(3, Path::new("/c"))], vec![], None)
            .unwrap();
        drop(r);
        assert_eq!(open(&p).len(), 2);
        // Garbage followed by good lines is corruption, not a torn write.
        let mut text = b"{not json\n".to_vec();
        text.extend_from_slice(&fs::read(&log).unwrap());
        fs::write(&log, text).unwrap();
        let e = Registry::open(&p, Identity::Fingerprint, Window::default()).unwrap_err();
        assert!(e.to_string().contains("corrupt at line 1"), "{e}");
    }

    #[test]
    fn stale_lines_after_a_crash_in_compaction_are_skipped() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reg.json");
        let log = Registry::log_path(&p);
        {
            let mut r = open(&p);
            r.commit(vec![entry(1, Path::new("/a"))], vec![], None)
                .unwrap();
            r.commit(vec![], vec![1], None).unwrap();
        }
        let old_lines = fs::read(&log).unwrap();
        {
            let mut r = open(&p);
            r.compact().unwrap();
            r.commit(vec![entry(1, Path::new("/a2"))], vec![], None)
                .unwrap();
        }
        // As if the log had not been emptied after the rename: the old lines come first.
        let mut text = old_lines;
        text.extend_from_slice(&fs::read(&log).unwrap());
        fs::write(&log, text).unwrap();
        let r = open(&p);
        assert_eq!(r.get(1).unwrap().path, Path::new("/a2"));
    }

    #[test]
    fn lock_keeps_a_second_run_out() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reg.json");
        let _r = open(&p);
        let e = Registry::open(&p, Identity::Fingerprint, Window::default()).unwrap_err();
        assert!(matches!(e, RegistryError::Locked { .. }), "{e}");
    }

    #[test]
    fn changed_identity_drops_fingerprints() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reg.json");
        {
            let mut r = open(&p);
            r.commit(vec![entry(1, Path::new("/a"))], vec![], None)
                .unwrap();
        }
        let w = Window {
            offset: 0,
            length: 1024,
        };
        let r = Registry::open(&p, Identity::Fingerprint, w).unwrap();
        assert_eq!(r.get(1).unwrap().fingerprint, None);
        assert_eq!(r.get(1).unwrap().bytes_done, 24);
        assert_eq!(r.notes.len(), 1);
        drop(r);
        // The change was written down: no note the second time.
        let r = Registry::open(&p, Identity::Fingerprint, w).unwrap();
        assert!(r.notes.is_empty());
    }

    #[test]
    fn bad_snapshot_is_a_clear_error() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("reg.json");
        fs::write(&p, b"[]").unwrap();
        let e = Registry::open(&p, Identity::Native, Window::default()).unwrap_err();
        assert!(
            e.to_string().contains("reg.json is corrupt at snapshot"),
            "{e}"
        );
    }

    #[test]
    fn roll_back_cuts_only_the_same_file() {
        let d = tempfile::tempdir().unwrap();
        let out = d.path().join("eve.json");
        fs::write(&out, b"line1\n").unwrap();
        let mark = OutputMark::of(&out).unwrap().unwrap();
        fs::write(&out, b"line1\nline2\n").unwrap();
        assert_eq!(
            roll_back(&mark).unwrap(),
            RollBack::Truncated {
                path: out.clone(),
                removed: 6
            }
        );
        assert_eq!(fs::read(&out).unwrap(), b"line1\n");
        assert_eq!(
            roll_back(&mark).unwrap(),
            RollBack::Unchanged { path: out.clone() }
        );
        // Rotated: a new file at the path is left alone.
        fs::rename(&out, d.path().join("eve.json.1")).unwrap();
        fs::write(&out, b"new run\nmore\n").unwrap();
        assert_eq!(
            roll_back(&mark).unwrap(),
            RollBack::Replaced { path: out.clone() }
        );
        fs::remove_file(&out).unwrap();
        assert_eq!(roll_back(&mark).unwrap(), RollBack::Missing { path: out });
    }
}
