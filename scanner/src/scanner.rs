//! The scanner: the current files of the inputs, each with a stable [`FileId`], and what
//! changed since the last scan.
//!
//! # Matching a scan to what was known
//!
//! Each file found is matched to a known identity in three phases:
//!
//! 0. **Unchanged** (both strategies): a known file with the same `(dev, ino, size,
//!    mtime)`. Nothing is opened; its fingerprint is reused. A new name is a rename. This
//!    is the steady state, and it costs what a native scan costs: one `stat` per file.
//! 1. **Same inode, changed** (both strategies): the file is opened and the fingerprint
//!    window read. If its birth time is the known one (where the filesystem records it)
//!    and its content still begins with the known fingerprint's bytes (the hash of the
//!    same prefix matches), it is the same file: grown, shrunk, renamed. If not, and it
//!    is at the same path, its content was replaced in place (truncated and
//!    rewritten, or recreated with the same inode): *truncated*, start over. If not, and
//!    it is elsewhere, the inode was reused by another file: a new identity.
//!    In `native` mode a file is opened here only when a fingerprint of its content is
//!    known (the owner sets one with [`Scanner::set_fingerprint`] once it has processed
//!    the file): a file nobody processed is identified by its inode alone, as in
//!    Filebeat.
//! 2. **Same fingerprint, other inode** (`fingerprint` only): a fingerprint match alone is
//!    not proof (two captures can share their first bytes; a copy shares all of them). It
//!    is taken as the same file (moved across filesystems, or put back) only when the
//!    known file is no longer where it was (it was not matched in phases 0-1) and size
//!    and mtime are equal (a move keeps both), or path and size are. Otherwise the file
//!    is new: a copy next to its original gets its own identity.
//!
//! Known files not matched are *deleted*, unless a failure hid them (a directory that
//! could not be listed, a file that could not be opened): those are *unreadable*, and
//! keep their state. Deleted identities are remembered for `forget_after` (so that a file
//! moved away and back, or renamed across two scans, is still known), then *forgotten*.

use std::collections::HashMap;
use std::hash::BuildHasher;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::glob::{Excludes, Glob, GlobError};
use crate::identity::{Fingerprint, Identity, MAX_FINGERPRINT_LENGTH, Stat, Window, WindowReader};
use crate::walk::{Unreadable, Walker};

/// A file found, with its stat.
#[derive(Debug)]
struct Resolved {
    path: PathBuf,
    stat: Stat,
}

/// A stable identity number, assigned by the scanner (and kept by the registry).
pub type FileId = u64;

/// Default time a deleted file's identity is remembered.
pub const DEFAULT_FORGET_AFTER: Duration = Duration::from_secs(24 * 3600);

/// What to scan and how to identify files.
#[derive(Debug, Clone)]
pub struct ScanConfig {
    /// Files, directories and patterns (`/data/**/*.pcap`).
    pub inputs: Vec<String>,
    /// Patterns of names (no `/`) or paths (with `/`) to leave out.
    pub excludes: Vec<String>,
    /// Descend into the subdirectories of directory inputs.
    pub recursive: bool,
    pub identity: Identity,
    /// The fingerprint window (also used to verify native identities, see the module doc).
    pub window: Window,
    /// How long a deleted file's identity is remembered.
    pub forget_after: Duration,
    /// Threads that read the fingerprint windows of many new files at once (0: one per
    /// CPU, at most [`crate::identity::MAX_READ_THREADS`]; 1: the scanning thread only).
    pub read_threads: usize,
}

impl ScanConfig {
    pub fn new(inputs: Vec<String>) -> ScanConfig {
        ScanConfig {
            inputs,
            excludes: Vec::new(),
            recursive: false,
            identity: Identity::Fingerprint,
            window: Window::default(),
            forget_after: DEFAULT_FORGET_AFTER,
            read_threads: 0,
        }
    }
}

/// Errors of setting up a scanner.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    #[error(transparent)]
    Pattern(#[from] GlobError),
    #[error("fingerprint length {0} must be from 1 byte to 1 MiB")]
    Window(u64),
}

/// A file as the scanner knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileInfo {
    pub id: FileId,
    pub path: PathBuf,
    pub stat: Stat,
    /// Always set in `fingerprint` mode; in `native` mode, set when known.
    pub fingerprint: Option<Fingerprint>,
}

impl FileInfo {
    /// Whether the fingerprint covers less than the window: the file ends inside it.
    pub fn is_short(&self, window: &Window) -> bool {
        self.fingerprint
            .is_some_and(|f| u64::from(f.len) < window.length.min(MAX_FINGERPRINT_LENGTH))
    }
}

/// A change between two scans.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// A new identity, or a known one that is back (moved out of the inputs and in again).
    Created { id: FileId },
    /// The file got bigger (appended to).
    Grown { id: FileId, from: u64, to: u64 },
    /// Same file, other name (renamed, or moved to another directory or filesystem).
    Renamed {
        id: FileId,
        from: PathBuf,
        to: PathBuf,
    },
    /// The file got shorter, or its content was replaced in place: what was processed
    /// of it is no longer there.
    Truncated { id: FileId, from: u64, to: u64 },
    /// The file is gone (its identity is remembered for a while).
    Deleted { id: FileId, path: PathBuf },
    /// A deleted file's identity was dropped.
    Forgotten { id: FileId },
}

/// What one scan saw.
#[derive(Debug)]
pub struct ScanReport {
    pub changes: Vec<Change>,
    /// Paths that could not be read: their files keep their state.
    pub unreadable: Vec<Unreadable>,
    /// Files present after the scan.
    pub files: usize,
    /// Files opened to read a fingerprint window.
    pub opened: usize,
}

/// A known file restored from a registry.
#[derive(Debug, Clone)]
pub struct Restored {
    pub info: FileInfo,
    /// When it was last seen deleted; `None` for a file present at the last scan.
    pub gone_since: Option<SystemTime>,
}

#[derive(Debug)]
struct Entry {
    info: FileInfo,
    present: bool,
    gone_since: Option<SystemTime>,
    /// Scan generation that last matched (or retained) this entry.
    seen: u64,
}

/// The scanner.
#[derive(Debug)]
pub struct Scanner {
    walker: Walker,
    identity: Identity,
    window: Window,
    forget_after: Duration,
    entries: HashMap<FileId, Entry>,
    by_inode: HashMap<(u64, u64), FileId>,
    by_fp: FpIndex,
    next_id: FileId,
    generation: u64,
    reader: WindowReader,
    /// Directory entries' inode numbers are the files' (not so on some overlay
    /// filesystems): a file whose entry names an unknown inode is new, and is stat'ed
    /// through the descriptor opened to fingerprint it.
    trust_d_ino: bool,
}

/// A window to read: the file and the length of the known fingerprint of its inode (to
/// compare prefixes).
struct Read {
    path: PathBuf,
    known_len: Option<u32>,
}

type ReadResult = std::io::Result<(Stat, Fingerprint, Option<u128>)>;

/// A changed or new file (with its stat resolved), with its window read (when it was).
struct Pending {
    found: Resolved,
    fingerprint: Option<Fingerprint>,
    /// Hash of the window's first `known fingerprint len` bytes of the inode's known file.
    prefix: Option<u128>,
    read: bool,
}

impl Scanner {
    pub fn new(cfg: ScanConfig) -> Result<Scanner, ScanError> {
        if cfg.window.length == 0 || cfg.window.length > MAX_FINGERPRINT_LENGTH {
            return Err(ScanError::Window(cfg.window.length));
        }
        let inputs = cfg
            .inputs
            .iter()
            .map(|i| Glob::new(i))
            .collect::<Result<Vec<_>, _>>()?;
        let excludes = Excludes::new(&cfg.excludes)?;
        Ok(Scanner {
            walker: Walker::new(inputs, excludes, cfg.recursive),
            identity: cfg.identity,
            window: cfg.window,
            forget_after: cfg.forget_after,
            entries: HashMap::new(),
            by_inode: HashMap::new(),
            by_fp: FpIndex::default(),
            next_id: 1,
            generation: 0,
            reader: WindowReader::new(cfg.window, cfg.read_threads),
            trust_d_ino: true,
        })
    }

    pub fn identity(&self) -> Identity {
        self.identity
    }

    pub fn window(&self) -> Window {
        self.window
    }

    /// The next identity number that will be handed out.
    pub fn next_id(&self) -> FileId {
        self.next_id
    }

    /// Restores known files (from a registry) before the first scan. Their fingerprints
    /// must have been computed with this scanner's window (pass `None` otherwise).
    pub fn restore(&mut self, files: impl IntoIterator<Item = Restored>) {
        let mut files: Vec<Restored> = files.into_iter().collect();
        // Present ones last, so that they own their inode over deleted ones.
        files.sort_by_key(|r| (r.gone_since.is_none(), r.info.id));
        for r in files {
            let id = r.info.id;
            self.next_id = self.next_id.max(id + 1);
            self.by_inode.insert(r.info.stat.inode(), id);
            if let Some(fp) = r.info.fingerprint {
                self.by_fp.insert(fp, id);
            }
            self.entries.insert(
                id,
                Entry {
                    present: r.gone_since.is_none(),
                    gone_since: r.gone_since,
                    seen: 0,
                    info: r.info,
                },
            );
        }
    }

    /// Records a fingerprint of a file's content (in `native` mode, the owner calls this
    /// once it has processed the file, so that inode reuse can be told from growth).
    pub fn set_fingerprint(&mut self, id: FileId, fp: Fingerprint) {
        let Some(e) = self.entries.get_mut(&id) else {
            return;
        };
        if let Some(old) = e.info.fingerprint.replace(fp) {
            self.by_fp.remove(old, id);
        }
        if self.identity == Identity::Fingerprint {
            self.by_fp.insert(fp, id);
        }
    }

    /// A known file (present or deleted).
    pub fn file(&self, id: FileId) -> Option<&FileInfo> {
        self.entries.get(&id).map(|e| &e.info)
    }

    /// Whether a known file is present (as of the last scan).
    pub fn is_present(&self, id: FileId) -> bool {
        self.entries.get(&id).is_some_and(|e| e.present)
    }

    /// The files present as of the last scan, in no particular order.
    pub fn files(&self) -> impl Iterator<Item = &FileInfo> {
        self.entries.values().filter(|e| e.present).map(|e| &e.info)
    }

    /// Every known file, with when it was deleted for those that are gone.
    pub fn known(&self) -> impl Iterator<Item = (&FileInfo, Option<SystemTime>)> {
        self.entries.values().map(|e| (&e.info, e.gone_since))
    }

    /// Looks at the inputs, matches what is there to what was known, and reports changes.
    pub fn scan(&mut self) -> ScanReport {
        self.generation += 1;
        let generation = self.generation;
        let fp_mode = self.identity == Identity::Fingerprint;
        // In fingerprint mode a file of an unknown inode will be opened: stat it then,
        // through the open descriptor (which describes exactly the bytes read).
        let lazy = fp_mode && self.trust_d_ino;
        let want_stat = {
            let by_inode = &self.by_inode;
            move |hint| !lazy || by_inode.contains_key(&hint)
        };
        let walk = if lazy {
            // Every file not stat'ed is new: its window is read (relative to its open
            // directory) while the walk goes on, many at once.
            let walker = &self.walker;
            let (mut walk, done) = self
                .reader
                .read_during(|sink| walker.walk(&want_stat, Some(sink)));
            for d in done {
                let f = &mut walk.found[d.index];
                f.path = d.path;
                f.window = Some(d.result);
            }
            if self.walker.inputs() > 1 {
                walk.dedup();
            }
            walk
        } else {
            self.walker.walk(&want_stat, None)
        };
        let mut unreadable = walk.unreadable;
        let mut changes = Vec::new();
        let mut pending = Vec::new();

        // Phase 0: unchanged (dev, ino, size, mtime): nothing to open.
        for f in walk.found {
            if let Some(stat) = f.stat
                && let Some(&id) = self.by_inode.get(&stat.inode())
                && let Some(e) = self.entries.get(&id)
            {
                if e.seen == generation {
                    // Another name (hard link) of a file already matched.
                    continue;
                }
                if e.info.stat.same_version(&stat) && (!fp_mode || e.info.fingerprint.is_some()) {
                    let fp = e.info.fingerprint;
                    self.claim(id, f.path, stat, fp, false, &mut changes);
                    continue;
                }
            }
            pending.push(f);
        }

        // Read the windows of changed and new files (all of them for fingerprints; in
        // native mode those whose inode has a known fingerprint to compare with). New
        // files were read during the walk, many at once (opened relative to their
        // directory, stat'ed through the open descriptor).
        let mut todo = Vec::with_capacity(pending.len());
        let mut reads = Vec::new();
        let mut opened = 0;
        for found in pending {
            if let Some(window) = found.window {
                opened += 1;
                match window {
                    Ok((stat, fp)) if stat.inode() == found.hint => todo.push(Pending {
                        found: Resolved {
                            path: found.path,
                            stat,
                        },
                        fingerprint: Some(fp),
                        prefix: None,
                        read: true,
                    }),
                    // The directory entry named another inode than the file has (an
                    // overlay filesystem): stat every file from now on, and read this one
                    // again, as a file that may be known.
                    Ok((stat, _)) => {
                        self.trust_d_ino = false;
                        let known_len = self
                            .by_inode
                            .get(&stat.inode())
                            .and_then(|id| self.entries.get(id))
                            .and_then(|e| e.info.fingerprint)
                            .map(|f| f.len);
                        reads.push(Read {
                            path: found.path,
                            known_len,
                        });
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(error) => unreadable.push(Unreadable {
                        path: found.path,
                        error,
                        subtree: false,
                    }),
                }
                continue;
            }
            let inode = found.stat.map(|s| s.inode()).unwrap_or(found.hint);
            let known_fp = self
                .by_inode
                .get(&inode)
                .and_then(|id| self.entries.get(id))
                .filter(|e| e.seen != generation)
                .and_then(|e| e.info.fingerprint);
            match found.stat {
                Some(stat) if !fp_mode && known_fp.is_none() => todo.push(Pending {
                    found: Resolved {
                        path: found.path,
                        stat,
                    },
                    fingerprint: None,
                    prefix: None,
                    read: false,
                }),
                _ => reads.push(Read {
                    path: found.path,
                    known_len: known_fp.map(|k| k.len),
                }),
            }
        }
        for read in reads {
            opened += 1;
            let path = read.path;
            match self.read_window(&path, read.known_len) {
                Ok((stat, fp, prefix)) => {
                    // The window belongs to the file that was opened: keep its stat.
                    todo.push(Pending {
                        found: Resolved { path, stat },
                        fingerprint: Some(fp),
                        prefix,
                        read: true,
                    });
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => unreadable.push(Unreadable {
                    path,
                    error,
                    subtree: false,
                }),
            }
        }

        // Phase 1: same inode.
        // Most of the files left are usually new (a first scan: all of them): room for
        // them at once, rather than growing each map many times over.
        self.entries.reserve(todo.len());
        self.by_inode.reserve(todo.len());
        if fp_mode {
            self.by_fp.reserve(todo.len());
        }
        let mut weak = Vec::new();
        for p in todo {
            let inode = p.found.stat.inode();
            let known = self
                .by_inode
                .get(&inode)
                .and_then(|id| self.entries.get(id).map(|e| (*id, e)));
            match known {
                Some((_, e)) if e.seen == generation => continue, // hard link
                Some((id, e)) => {
                    // A new birth time is another file that got the inode; otherwise the
                    // content must still begin as it did.
                    let same_content = e.info.stat.same_birth(&p.found.stat)
                        && match e.info.fingerprint {
                            None => true,
                            Some(k) => p.prefix == Some(k.hash),
                        };
                    let fp = if p.read {
                        p.fingerprint
                    } else {
                        e.info.fingerprint
                    };
                    if same_content {
                        self.claim(id, p.found.path, p.found.stat, fp, false, &mut changes);
                        continue;
                    }
                    if e.info.path == p.found.path {
                        self.claim(id, p.found.path, p.found.stat, fp, true, &mut changes);
                        continue;
                    }
                    // Inode reused by another file: the known one is gone.
                }
                None => {}
            }
            // A fingerprint nobody has is a new file (as in native mode): created now.
            // One that a known identity has competes for it in phase 2; if it loses, it
            // is created there (after these, so its identity number follows theirs).
            if fp_mode && p.fingerprint.is_some_and(|fp| self.by_fp.contains(&fp)) {
                weak.push(p);
            } else {
                self.create(p.found, p.fingerprint, &mut changes);
            }
        }

        // Phase 2: same fingerprint, another inode (fingerprint mode).
        // The files whose fingerprint a known identity has compete for the known
        // identities in path order (deterministic whatever the directory order). An
        // identity matched or created in this scan is not to be taken.
        let mut contested = weak;
        contested.sort_unstable_by(|a, b| {
            a.found
                .path
                .as_os_str()
                .as_bytes()
                .cmp(b.found.path.as_os_str().as_bytes())
        });
        for p in contested {
            if self
                .by_inode
                .get(&p.found.stat.inode())
                .and_then(|id| self.entries.get(id))
                .is_some_and(|e| e.seen == generation)
            {
                continue; // another name (hard link) of a file created just above
            }
            let fp = p.fingerprint;
            let taken = fp.and_then(|fp| {
                self.by_fp.ids(&fp).iter().copied().find(|id| {
                    self.entries.get(id).is_some_and(|e| {
                        e.seen != generation
                            && !unreadable.iter().any(|u| u.hides(&e.info.path))
                            && e.info.stat.size == p.found.stat.size
                            && (e.info.stat.mtime_ns == p.found.stat.mtime_ns
                                || e.info.path == p.found.path)
                    })
                })
            });
            match taken {
                Some(id) => self.claim(id, p.found.path, p.found.stat, fp, false, &mut changes),
                None => self.create(p.found, fp, &mut changes),
            }
        }

        // Known files not seen: deleted, unless hidden by a failure.
        let now = SystemTime::now();
        let mut files = 0;
        let mut forget = Vec::new();
        for (&id, e) in self.entries.iter_mut() {
            if e.seen == generation {
                files += 1;
                continue;
            }
            if e.present {
                if unreadable.iter().any(|u| u.hides(&e.info.path)) {
                    e.seen = generation;
                    files += 1;
                    continue;
                }
                e.present = false;
                e.gone_since = Some(now);
                changes.push(Change::Deleted {
                    id,
                    path: e.info.path.clone(),
                });
            } else if e
                .gone_since
                .is_some_and(|t| now.duration_since(t).unwrap_or_default() >= self.forget_after)
            {
                forget.push(id);
            }
        }
        forget.sort_unstable();
        for id in forget {
            if let Some(e) = self.entries.remove(&id) {
                if self.by_inode.get(&e.info.stat.inode()) == Some(&id) {
                    self.by_inode.remove(&e.info.stat.inode());
                }
                if let Some(fp) = e.info.fingerprint {
                    self.by_fp.remove(fp, id);
                }
            }
            changes.push(Change::Forgotten { id });
        }
        ScanReport {
            changes,
            unreadable,
            files,
            opened,
        }
    }

    /// Opens `path`, stats the open file and hashes its window (and the prefix of the
    /// known fingerprint's length, to compare with it).
    /// Opens `path` (by path: the files read here are the few that changed) and reads
    /// its window, with the prefix of the known fingerprint's length.
    fn read_window(&mut self, path: &Path, known_len: Option<u32>) -> ReadResult {
        let file = self.reader.open(None, path)?;
        let lens: &[u32] = match &known_len {
            Some(k) => std::slice::from_ref(k),
            None => &[],
        };
        let (stat, r) = self.reader.read(&file, lens)?;
        Ok((stat, r.fingerprint, r.prefixes.first().copied().flatten()))
    }

    fn create(&mut self, found: Resolved, fp: Option<Fingerprint>, changes: &mut Vec<Change>) {
        let id = self.next_id;
        self.next_id += 1;
        self.by_inode.insert(found.stat.inode(), id);
        if let Some(fp) = fp
            && self.identity == Identity::Fingerprint
        {
            self.by_fp.insert(fp, id);
        }
        self.entries.insert(
            id,
            Entry {
                info: FileInfo {
                    id,
                    path: found.path,
                    stat: found.stat,
                    fingerprint: fp,
                },
                present: true,
                gone_since: None,
                seen: self.generation,
            },
        );
        changes.push(Change::Created { id });
    }

    /// Matches a found file to known identity `id` and reports how it changed.
    fn claim(
        &mut self,
        id: FileId,
        path: PathBuf,
        stat: Stat,
        fp: Option<Fingerprint>,
        replaced: bool,
        changes: &mut Vec<Change>,
    ) {
        let generation = self.generation;
        let fp_mode = self.identity == Identity::Fingerprint;
        let Some(e) = self.entries.get_mut(&id) else {
            return;
        };
        let old = e.info.stat;
        if !e.present {
            changes.push(Change::Created { id });
        } else if e.info.path != path {
            changes.push(Change::Renamed {
                id,
                from: e.info.path.clone(),
                to: path.clone(),
            });
        }
        if replaced || stat.size < old.size {
            changes.push(Change::Truncated {
                id,
                from: old.size,
                to: stat.size,
            });
        } else if stat.size > old.size {
            changes.push(Change::Grown {
                id,
                from: old.size,
                to: stat.size,
            });
        }
        if e.info.path != path {
            e.info.path = path;
        }
        e.info.stat = stat;
        e.present = true;
        e.gone_since = None;
        e.seen = generation;
        if old.inode() != stat.inode() {
            if self.by_inode.get(&old.inode()) == Some(&id) {
                self.by_inode.remove(&old.inode());
            }
            self.by_inode.insert(stat.inode(), id);
        }
        if e.info.fingerprint != fp {
            let prev = std::mem::replace(&mut e.info.fingerprint, fp);
            if let Some(prev) = prev {
                self.by_fp.remove(prev, id);
            }
            if let Some(fp) = fp
                && fp_mode
            {
                self.by_fp.insert(fp, id);
            }
        }
    }
}

/// Identities by fingerprint: almost always one each (stored without an allocation).
#[derive(Debug, Default)]
struct FpIndex(HashMap<Fingerprint, Ids, FpHashState>);

/// How [`FpIndex`] hashes a fingerprint. A fingerprint is itself a hash of the content,
/// so mixing its bits with a random key (one multiply per word) spreads it as well as
/// SipHash does, for a fraction of the cost (a scan looks up and inserts each new file's
/// fingerprint). The key is random per index, so that files made to have fingerprints
/// that share their low bits do not pile up in one bucket.
#[derive(Debug, Clone)]
struct FpHashState(u64);

impl Default for FpHashState {
    fn default() -> Self {
        // RandomState is seeded from the OS once per thread, then counts on: a new key
        // each time, at no system call.
        FpHashState(std::hash::RandomState::new().hash_one(0x5eed_u64) | 1)
    }
}

impl std::hash::BuildHasher for FpHashState {
    type Hasher = FpHasher;

    fn build_hasher(&self) -> FpHasher {
        FpHasher {
            key: self.0,
            h: self.0.rotate_left(32),
        }
    }
}

#[derive(Debug)]
struct FpHasher {
    key: u64,
    h: u64,
}

impl FpHasher {
    /// Folds a word in: the 128-bit product of (state ^ word) and the key, its halves
    /// xor'ed (every input bit reaches every output bit).
    fn mix(&mut self, word: u64) {
        let p = u128::from(self.h ^ word) * u128::from(self.key);
        self.h = (p as u64) ^ ((p >> 64) as u64);
    }
}

impl std::hash::Hasher for FpHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.mix(u64::from_le_bytes(word));
        }
    }

    fn write_u32(&mut self, v: u32) {
        self.mix(u64::from(v));
    }

    fn write_u64(&mut self, v: u64) {
        self.mix(v);
    }

    fn write_u128(&mut self, v: u128) {
        self.mix(v as u64);
        self.mix((v >> 64) as u64);
    }

    fn finish(&self) -> u64 {
        self.h
    }
}

#[derive(Debug)]
enum Ids {
    One(FileId),
    Many(Vec<FileId>),
}

impl FpIndex {
    fn insert(&mut self, fp: Fingerprint, id: FileId) {
        match self.0.entry(fp) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(Ids::One(id));
            }
            std::collections::hash_map::Entry::Occupied(mut o) => {
                let ids = o.get_mut();
                match ids {
                    Ids::One(x) if *x == id => {}
                    Ids::One(x) => *ids = Ids::Many(vec![*x, id]),
                    Ids::Many(v) if v.contains(&id) => {}
                    Ids::Many(v) => v.push(id),
                }
            }
        }
    }

    fn remove(&mut self, fp: Fingerprint, id: FileId) {
        let Some(ids) = self.0.get_mut(&fp) else {
            return;
        };
        match ids {
            Ids::One(x) if *x == id => {
                self.0.remove(&fp);
            }
            Ids::One(_) => {}
            Ids::Many(v) => {
                v.retain(|&i| i != id);
                match v.as_slice() {
                    [] => {
                        self.0.remove(&fp);
                    }
                    [one] => *ids = Ids::One(*one),
                    _ => {}
                }
            }
        }
    }

    fn contains(&self, fp: &Fingerprint) -> bool {
        self.0.contains_key(fp)
    }

    fn reserve(&mut self, more: usize) {
        self.0.reserve(more);
    }

    fn ids(&self, fp: &Fingerprint) -> &[FileId] {
        match self.0.get(fp) {
            Some(Ids::One(x)) => std::slice::from_ref(x),
            Some(Ids::Many(v)) => v,
            None => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::Frame;
    use meerkat_synth::pcap::{Format, LINKTYPE_ETHERNET, to_bytes};
    use std::fs::{self, File};
    use std::io::Write;

    const BOTH: [Identity; 2] = [Identity::Native, Identity::Fingerprint];

    /// A classic pcap of `n` packets whose bytes depend on `seed` (the 24-byte global
    /// header is the same for every seed).
    fn pcap(seed: u8, n: usize) -> Vec<u8> {
        let frames: Vec<Frame> = (0..n)
            .map(|i| Frame {
                ts_ns: 1_700_000_000_000_000_000 + i as u64 * 1_000_000,
                data: vec![seed.wrapping_add(i as u8); 60 + i % 40],
            })
            .collect();
        to_bytes(
            &frames,
            Format::Micro { big_endian: false },
            LINKTYPE_ETHERNET,
        )
    }

    fn scanner_for(inputs: &[&Path], identity: Identity) -> Scanner {
        let mut cfg = ScanConfig::new(inputs.iter().map(|p| p.display().to_string()).collect());
        cfg.identity = identity;
        cfg.recursive = true;
        cfg.excludes = vec![".*".to_string()];
        Scanner::new(cfg).unwrap()
    }

    fn sorted(mut c: Vec<Change>) -> Vec<Change> {
        c.sort_by_key(|c| format!("{c:?}"));
        c
    }

    /// A new directory with one capture, `name` (`pcap(seed, n)`), and a scanner of the
    /// directory that has scanned it: (directory, file, scanner, the file's identity).
    fn scanned_one(
        identity: Identity,
        name: &str,
        seed: u8,
        n: usize,
    ) -> (tempfile::TempDir, PathBuf, Scanner, FileId) {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join(name);
        fs::write(&a, pcap(seed, n)).unwrap();
        let mut s = scanner_for(&[d.path()], identity);
        s.scan();
        let id = id_of(&s, &a);
        (d, a, s, id)
    }

    fn id_of(s: &Scanner, path: &Path) -> FileId {
        s.files()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{} not present", path.display()))
            .id
    }

    #[test]
    fn first_scan_creates_and_steady_state_opens_nothing() {
        for identity in BOTH {
            let d = tempfile::tempdir().unwrap();
            for i in 0..5u8 {
                fs::write(d.path().join(format!("c{i}.pcap")), pcap(i, 50)).unwrap();
            }
            let mut s = scanner_for(&[d.path()], identity);
            let r = s.scan();
            assert_eq!(r.changes.len(), 5, "{identity:?}");
            assert!(
                r.changes
                    .iter()
                    .all(|c| matches!(c, Change::Created { .. }))
            );
            let expect_opened = if identity == Identity::Fingerprint {
                5
            } else {
                0
            };
            assert_eq!(r.opened, expect_opened, "{identity:?}");
            assert_eq!(r.files, 5);
            let again = s.scan();
            assert!(
                again.changes.is_empty(),
                "{identity:?}: {:?}",
                again.changes
            );
            assert_eq!(
                again.opened, 0,
                "{identity:?}: the steady state reopens nothing"
            );
            if identity == Identity::Fingerprint {
                assert!(s.files().all(|f| f.fingerprint.is_some()));
            }
        }
    }

    #[test]
    fn rename_keeps_the_identity_without_reading() {
        for identity in BOTH {
            let (d, a, mut s, id) = scanned_one(identity, "a.pcap", 1, 50);
            let b = d.path().join("b.pcap");
            fs::rename(&a, &b).unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Renamed {
                    id,
                    from: a.clone(),
                    to: b.clone()
                }],
                "{identity:?}"
            );
            assert_eq!(r.opened, 0, "{identity:?}");
        }
    }

    #[test]
    fn move_between_subdirectories() {
        for identity in BOTH {
            let d = tempfile::tempdir().unwrap();
            let (s1, s2) = (d.path().join("2024-01"), d.path().join("2024-02/x"));
            fs::create_dir_all(&s1).unwrap();
            fs::create_dir_all(&s2).unwrap();
            let a = s1.join("cap.pcap");
            fs::write(&a, pcap(3, 80)).unwrap();
            let mut s = scanner_for(&[d.path()], identity);
            s.scan();
            let id = id_of(&s, &a);
            let b = s2.join("cap.pcap");
            fs::rename(&a, &b).unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Renamed { id, from: a, to: b }],
                "{identity:?}"
            );
        }
    }

    #[test]
    fn copy_is_a_new_identity() {
        for identity in BOTH {
            let (d, a, mut s, id) = scanned_one(identity, "a.pcap", 4, 100);
            let b = d.path().join("copy-of-a.pcap");
            fs::copy(&a, &b).unwrap();
            let r = s.scan();
            let copy = id_of(&s, &b);
            assert_ne!(copy, id, "{identity:?}");
            assert_eq!(
                r.changes,
                vec![Change::Created { id: copy }],
                "{identity:?}"
            );
            assert_eq!(id_of(&s, &a), id);
            if identity == Identity::Fingerprint {
                // Same content, same fingerprint: the inode tells them apart.
                assert_eq!(
                    s.file(copy).unwrap().fingerprint,
                    s.file(id).unwrap().fingerprint
                );
            }
            // The original deleted afterwards: the copy stays a file of its own.
            fs::remove_file(&a).unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Deleted { id, path: a }],
                "{identity:?}"
            );
        }
    }

    #[test]
    fn rotation_renames_the_old_file_and_creates_the_new_one() {
        for identity in BOTH {
            let (d, live, mut s, first) = scanned_one(identity, "cap.pcap", 10, 60);
            let r1 = d.path().join("cap.pcap.1");
            let r2 = d.path().join("cap.pcap.2");
            // logrotate-style: shift the old ones, start a new live file.
            fs::rename(&live, &r1).unwrap();
            fs::write(&live, pcap(11, 60)).unwrap();
            let r = s.scan();
            let second = id_of(&s, &live);
            assert_eq!(
                sorted(r.changes),
                sorted(vec![
                    Change::Renamed {
                        id: first,
                        from: live.clone(),
                        to: r1.clone()
                    },
                    Change::Created { id: second }
                ]),
                "{identity:?}"
            );
            fs::rename(&r1, &r2).unwrap();
            fs::rename(&live, &r1).unwrap();
            fs::write(&live, pcap(12, 60)).unwrap();
            let r = s.scan();
            let third = id_of(&s, &live);
            assert_eq!(
                sorted(r.changes),
                sorted(vec![
                    Change::Renamed {
                        id: first,
                        from: r1.clone(),
                        to: r2.clone()
                    },
                    Change::Renamed {
                        id: second,
                        from: live.clone(),
                        to: r1.clone()
                    },
                    Change::Created { id: third }
                ]),
                "{identity:?}"
            );
        }
    }

    #[test]
    fn truncation_and_rewrite_in_place() {
        for identity in BOTH {
            let d = tempfile::tempdir().unwrap();
            let a = d.path().join("a.pcap");
            let content = pcap(20, 200);
            fs::write(&a, &content).unwrap();
            let mut s = scanner_for(&[d.path()], identity);
            s.scan();
            let id = id_of(&s, &a);
            // Once processed, the owner records what the content looked like.
            let fp = Window::default()
                .read(&File::open(&a).unwrap(), &mut Vec::new(), &[])
                .unwrap()
                .fingerprint;
            s.set_fingerprint(id, fp);
            let big = content.len() as u64;
            // Cut short.
            fs::OpenOptions::new()
                .write(true)
                .open(&a)
                .unwrap()
                .set_len(1000)
                .unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Truncated {
                    id,
                    from: big,
                    to: 1000
                }],
                "{identity:?}"
            );
            // Truncated to zero and rewritten with other, longer content (same inode,
            // same path): not growth, a new beginning.
            let mut f = fs::OpenOptions::new().write(true).open(&a).unwrap();
            f.set_len(0).unwrap();
            let other = pcap(21, 300);
            f.write_all(&other).unwrap();
            drop(f);
            let r = s.scan();
            if identity == Identity::Native {
                // The known fingerprint is of the old content: the prefix differs.
                assert_eq!(
                    r.changes,
                    vec![Change::Truncated {
                        id,
                        from: 1000,
                        to: other.len() as u64
                    }],
                    "{identity:?}"
                );
            } else {
                assert_eq!(
                    r.changes,
                    vec![Change::Truncated {
                        id,
                        from: 1000,
                        to: other.len() as u64
                    }],
                    "{identity:?}"
                );
            }
            assert_eq!(id_of(&s, &a), id);
        }
    }

    #[test]
    fn deletion_then_forgetting() {
        for identity in BOTH {
            let d = tempfile::tempdir().unwrap();
            let a = d.path().join("a.pcap");
            fs::write(&a, pcap(30, 10)).unwrap();
            let mut cfg = ScanConfig::new(vec![d.path().display().to_string()]);
            cfg.identity = identity;
            cfg.forget_after = Duration::ZERO;
            let mut s = Scanner::new(cfg).unwrap();
            s.scan();
            let id = id_of(&s, &a);
            fs::remove_file(&a).unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Deleted {
                    id,
                    path: a.clone()
                }]
            );
            assert!(!s.is_present(id));
            assert!(s.file(id).is_some(), "a deleted identity is remembered");
            let r = s.scan();
            assert_eq!(r.changes, vec![Change::Forgotten { id }]);
            assert!(s.file(id).is_none());
        }
    }

    /// Inode reuse: a processed file is deleted and another file gets its inode. The
    /// second part restores the first file's state as a registry would after a restart,
    /// which is how reuse looks when it happens while Meerkat is not running.
    #[test]
    fn inode_reuse_with_new_content_is_a_new_identity() {
        for identity in BOTH {
            let (d, a, mut s, old) = scanned_one(identity, "a.pcap", 40, 100);
            let fp = Window::default()
                .read(&File::open(&a).unwrap(), &mut Vec::new(), &[])
                .unwrap()
                .fingerprint;
            s.set_fingerprint(old, fp);
            let old_info = s.file(old).unwrap().clone();
            fs::remove_file(&a).unwrap();
            let b = d.path().join("b.pcap");
            fs::write(&b, pcap(41, 150)).unwrap();
            let b_stat = Stat::from_metadata(&fs::metadata(&b).unwrap());
            let r = s.scan();
            let new = id_of(&s, &b);
            assert_ne!(new, old, "{identity:?}");
            assert_eq!(
                sorted(r.changes),
                sorted(vec![
                    Change::Created { id: new },
                    Change::Deleted {
                        id: old,
                        path: a.clone()
                    }
                ]),
                "{identity:?} (inode reused: {})",
                b_stat.ino == old_info.stat.ino
            );

            // Deterministic: a registry says `a` (done, fingerprinted) had the inode that
            // `b` has now.
            let mut s = scanner_for(&[d.path()], identity);
            let mut info = old_info.clone();
            info.stat.dev = b_stat.dev;
            info.stat.ino = b_stat.ino;
            s.restore([Restored {
                info,
                gone_since: None,
            }]);
            let r = s.scan();
            let new = id_of(&s, &b);
            assert_ne!(new, old_info.id, "{identity:?}");
            assert_eq!(
                sorted(r.changes),
                sorted(vec![
                    Change::Created { id: new },
                    Change::Deleted {
                        id: old_info.id,
                        path: a.clone()
                    }
                ]),
                "{identity:?}"
            );
        }
    }

    #[test]
    fn identical_headers_do_not_make_files_the_same() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.pcap");
        let b = d.path().join("b.pcap");
        let (pa, pb) = (pcap(50, 100), pcap(51, 100));
        assert_eq!(pa[..24], pb[..24], "same pcap global header");
        fs::write(&a, &pa).unwrap();
        fs::write(&b, &pb).unwrap();
        // The default window reaches past the header.
        let mut s = scanner_for(&[d.path()], Identity::Fingerprint);
        s.scan();
        let (ia, ib) = (id_of(&s, &a), id_of(&s, &b));
        assert_ne!(
            s.file(ia).unwrap().fingerprint,
            s.file(ib).unwrap().fingerprint
        );

        // A window that only covers the header: equal fingerprints, still two files.
        let mut cfg = ScanConfig::new(vec![d.path().display().to_string()]);
        cfg.window = Window {
            offset: 0,
            length: 24,
        };
        let mut s = Scanner::new(cfg).unwrap();
        let r = s.scan();
        assert_eq!(r.changes.len(), 2);
        let (ia, ib) = (id_of(&s, &a), id_of(&s, &b));
        assert_ne!(ia, ib);
        assert_eq!(
            s.file(ia).unwrap().fingerprint,
            s.file(ib).unwrap().fingerprint
        );
        // `a` goes and another capture with the same header arrives: a fingerprint match
        // alone does not make it `a` renamed (size and mtime differ).
        fs::remove_file(&a).unwrap();
        let c = d.path().join("c.pcap");
        fs::write(&c, pcap(52, 120)).unwrap();
        let r = s.scan();
        let ic = id_of(&s, &c);
        assert_ne!(ic, ia);
        assert_eq!(
            sorted(r.changes),
            sorted(vec![
                Change::Created { id: ic },
                Change::Deleted { id: ia, path: a }
            ])
        );
    }

    #[test]
    fn a_growing_file_keeps_its_identity_short_fingerprint_included() {
        for identity in BOTH {
            let d = tempfile::tempdir().unwrap();
            let a = d.path().join("live.pcap");
            let all = pcap(60, 200);
            assert!(all.len() > 8000);
            let mut f = File::create(&a).unwrap();
            f.write_all(&all[..100]).unwrap();
            let mut s = scanner_for(&[d.path()], identity);
            s.scan();
            let id = id_of(&s, &a);
            let w = s.window();
            if identity == Identity::Fingerprint {
                assert!(
                    s.file(id).unwrap().is_short(&w),
                    "tracked, with a short fingerprint"
                );
            }
            f.write_all(&all[100..3000]).unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Grown {
                    id,
                    from: 100,
                    to: 3000
                }],
                "{identity:?}"
            );
            f.write_all(&all[3000..6000]).unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Grown {
                    id,
                    from: 3000,
                    to: 6000
                }],
                "{identity:?}"
            );
            if identity == Identity::Fingerprint {
                assert!(!s.file(id).unwrap().is_short(&w), "the full window now");
            }
            // Renamed and grown between two scans.
            let b = d.path().join("done.pcap");
            fs::rename(&a, &b).unwrap();
            f.write_all(&all[6000..]).unwrap();
            let r = s.scan();
            assert_eq!(
                sorted(r.changes),
                sorted(vec![
                    Change::Renamed {
                        id,
                        from: a.clone(),
                        to: b.clone()
                    },
                    Change::Grown {
                        id,
                        from: 6000,
                        to: all.len() as u64
                    }
                ]),
                "{identity:?}"
            );
        }
    }

    /// `mv` to another filesystem copies (keeping mtime) and deletes: a new inode. The
    /// fingerprint still knows the file; the inode cannot.
    #[test]
    fn move_across_filesystems() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            eprintln!("skipping: no /dev/shm to move files to another filesystem");
            return;
        }
        for identity in BOTH {
            let d1 = tempfile::tempdir().unwrap();
            let d2 = tempfile::tempdir_in(shm).unwrap();
            let a = d1.path().join("a.pcap");
            fs::write(&a, pcap(70, 100)).unwrap();
            let mut s = scanner_for(&[d1.path(), d2.path()], identity);
            s.scan();
            let id = id_of(&s, &a);
            let b = d2.path().join("a.pcap");
            fs::copy(&a, &b).unwrap();
            let mtime = fs::metadata(&a).unwrap().modified().unwrap();
            File::options()
                .write(true)
                .open(&b)
                .unwrap()
                .set_modified(mtime)
                .unwrap();
            fs::remove_file(&a).unwrap();
            let r = s.scan();
            if identity == Identity::Fingerprint {
                assert_eq!(r.changes, vec![Change::Renamed { id, from: a, to: b }]);
            } else {
                let nb = id_of(&s, &b);
                assert_eq!(
                    sorted(r.changes),
                    sorted(vec![
                        Change::Created { id: nb },
                        Change::Deleted { id, path: a }
                    ])
                );
            }
        }
    }

    #[test]
    fn hard_links_are_one_file_and_excluded_names_wait_for_their_rename() {
        for identity in BOTH {
            let d = tempfile::tempdir().unwrap();
            let a = d.path().join("a.pcap");
            fs::write(&a, pcap(80, 10)).unwrap();
            fs::hard_link(&a, d.path().join("also-a.pcap")).unwrap();
            let tmp = d.path().join(".cap.pcap.part");
            fs::write(&tmp, pcap(81, 10)).unwrap();
            let mut s = scanner_for(&[d.path()], identity);
            let r = s.scan();
            assert_eq!(r.changes.len(), 1, "{identity:?}: {:?}", r.changes);
            assert_eq!(r.files, 1);
            // Renamed into place: now it is a file of the input.
            let done = d.path().join("cap.pcap");
            fs::rename(&tmp, &done).unwrap();
            let r = s.scan();
            assert_eq!(
                r.changes,
                vec![Change::Created {
                    id: id_of(&s, &done)
                }]
            );
        }
    }

    #[test]
    fn restored_files_are_recognised_without_reading() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.pcap");
        fs::write(&a, pcap(90, 100)).unwrap();
        let mut s = scanner_for(&[d.path()], Identity::Fingerprint);
        s.scan();
        let saved: Vec<Restored> = s
            .known()
            .map(|(info, gone_since)| Restored {
                info: info.clone(),
                gone_since,
            })
            .collect();
        let b = d.path().join("b.pcap");
        fs::rename(&a, &b).unwrap();
        let mut s2 = scanner_for(&[d.path()], Identity::Fingerprint);
        s2.restore(saved.clone());
        let r = s2.scan();
        assert_eq!(
            r.changes,
            vec![Change::Renamed {
                id: saved[0].info.id,
                from: a,
                to: b
            }]
        );
        assert_eq!(r.opened, 0);
        assert!(s2.next_id() > saved[0].info.id);
    }

    /// Runs `body` in a child process (a copy of this test binary running only
    /// `test_name`), for tests that change process-wide state (limits, credentials).
    fn in_child(test_name: &str, body: impl FnOnce()) {
        const VAR: &str = "MEERKAT_SCANNER_TEST_CHILD";
        if std::env::var_os(VAR).is_some() {
            body();
            return;
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", test_name, "--nocapture", "--test-threads=1"])
            .env(VAR, "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "child failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("1 passed"), "child ran nothing:\n{text}");
    }

    #[test]
    fn emfile_is_unreadable_never_deleted() {
        in_child("scanner::tests::emfile_is_unreadable_never_deleted", || {
            for identity in BOTH {
                let d = tempfile::tempdir().unwrap();
                fs::create_dir(d.path().join("sub")).unwrap();
                for i in 0..3u8 {
                    fs::write(d.path().join(format!("sub/c{i}.pcap")), pcap(i, 20)).unwrap();
                }
                let mut s = scanner_for(&[d.path()], identity);
                assert_eq!(s.scan().changes.len(), 3);
                fs::write(d.path().join("sub/new.pcap"), pcap(9, 20)).unwrap();
                let mut lim = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: 0,
                };
                // The lowest free descriptor: with the limit there, no open succeeds.
                let lowest = {
                    use std::os::fd::AsRawFd;
                    File::open("/dev/null").unwrap().as_raw_fd()
                };
                // SAFETY: getrlimit/setrlimit with a valid rlimit struct; this child
                // process exists only for this test.
                unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
                let saved = lim;
                lim.rlim_cur = lowest as libc::rlim_t;
                // SAFETY: as above.
                assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
                let r = s.scan();
                // SAFETY: as above.
                unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &saved) };
                assert!(r.changes.is_empty(), "{identity:?}: {:?}", r.changes);
                assert!(
                    r.unreadable
                        .iter()
                        .any(|u| u.error.raw_os_error() == Some(libc::EMFILE)),
                    "{identity:?}: {:?}",
                    r.unreadable
                );
                assert_eq!(r.files, 3);
                // With descriptors back, the new file is found and nothing was lost.
                let r = s.scan();
                assert_eq!(r.changes.len(), 1, "{identity:?}: {:?}", r.changes);
                assert!(matches!(r.changes[0], Change::Created { .. }));
                assert_eq!(r.files, 4);
            }
        });
    }

    #[test]
    fn eacces_is_unreadable_never_deleted() {
        use std::os::unix::fs::PermissionsExt;
        in_child("scanner::tests::eacces_is_unreadable_never_deleted", || {
            for identity in BOTH {
                let d = tempfile::tempdir().unwrap();
                fs::set_permissions(d.path(), fs::Permissions::from_mode(0o755)).unwrap();
                let sub = d.path().join("sub");
                fs::create_dir(&sub).unwrap();
                fs::write(sub.join("a.pcap"), pcap(1, 20)).unwrap();
                fs::write(d.path().join("b.pcap"), pcap(2, 20)).unwrap();
                let mut s = scanner_for(&[d.path()], identity);
                assert_eq!(s.scan().changes.len(), 2);
                fs::set_permissions(&sub, fs::Permissions::from_mode(0o000)).unwrap();
                // SAFETY: geteuid has no preconditions.
                let root = unsafe { libc::geteuid() } == 0;
                if root {
                    // Root reads anything: look as nobody (effective uid only, so that
                    // root can come back).
                    // SAFETY: plain syscall; this child process exists only for this test.
                    assert_eq!(unsafe { libc::seteuid(65534) }, 0);
                }
                let r = s.scan();
                if root {
                    // SAFETY: as above (the saved uid is root).
                    assert_eq!(unsafe { libc::seteuid(0) }, 0);
                }
                fs::set_permissions(&sub, fs::Permissions::from_mode(0o755)).unwrap();
                assert!(r.changes.is_empty(), "{identity:?}: {:?}", r.changes);
                assert!(
                    r.unreadable
                        .iter()
                        .any(|u| u.error.raw_os_error() == Some(libc::EACCES) && u.path == sub),
                    "{identity:?}: {:?}",
                    r.unreadable
                );
                assert_eq!(r.files, 2);
                assert!(s.scan().changes.is_empty());
            }
        });
    }

    #[test]
    fn bad_config_is_an_error() {
        let mut cfg = ScanConfig::new(vec!["/x/[".to_string()]);
        assert!(matches!(
            Scanner::new(cfg.clone()),
            Err(ScanError::Pattern(_))
        ));
        cfg.inputs = vec!["/x".to_string()];
        cfg.window.length = 0;
        assert_eq!(
            Scanner::new(cfg).unwrap_err().to_string(),
            "fingerprint length 0 must be from 1 byte to 1 MiB"
        );
    }
}
