//! File tracking shared by the protocols that carry files (HTTP/1 bodies first; SMB,
//! SMTP attachments, FTP data and HTTP/2 to follow).
//!
//! A protocol opens a [`File`] with its name when the first byte of a file arrives,
//! appends the file's bytes in order ([`File::append`]), announces missing bytes
//! ([`File::gap`]) and ends it: [`File::close`] (complete), [`File::truncate`] (the
//! stream or the transaction ended first, or a depth limit was hit) or [`File::error`].
//! Its transaction exposes its files per direction ([`crate::Transaction::files`]); the
//! worker logs each one once it has ended (EVE `fileinfo`, [`record`]) and the file
//! keywords (`filemd5`, `filesize`, ...) inspect them.
//!
//! What a file costs is what [`FileConfig`] asks for: without tracking a protocol makes
//! no file at all; with it, a file is a name and counters; MD5/SHA1/SHA256 are computed
//! incrementally only when configured (`force-hash`, `file-store`) or needed by a loaded
//! rule; magic (the first [`MAX_MAGIC_BYTES`] bytes) only with `force-magic` or a
//! `filemagic` rule. Appending never allocates (hash states and the magic buffer are
//! made when the file opens).

pub mod eve;
pub mod magic;
pub mod range;
pub mod store;

use md5::{Digest, Md5};
use meerkat_proto::events::FileInfo;
use sha1::Sha1;
use sha2::Sha256;
use std::sync::atomic::{AtomicU64, Ordering};

/// Longest file name kept (bytes); a longer one is cut.
pub const MAX_FILE_NAME: usize = 1024;
/// Most files per transaction and direction (multipart uploads); more are not tracked.
pub const MAX_FILES_PER_TX: usize = 64;
/// Bytes of a file's start kept for its magic.
pub const MAX_MAGIC_BYTES: usize = 512;
/// Bytes of a file kept in memory while no rule has decided yet whether to store it
/// (a `filestore` rule may match only once the file ended): past this, a file no rule
/// asked for by then is not stored.
pub const MAX_STORE_PENDING: usize = 16 << 20;

/// Bytes all files of a process keep for the store at most by default (see
/// [`Budget`]; `file-store.memcap`).
pub const DEFAULT_MEMCAP: u64 = 128 << 20;

/// The bound on the bytes all files of a worker keep in memory for the file store
/// while no rule has decided or the store has not written them yet (each file is also
/// bounded by [`MAX_STORE_PENDING`]). Suricata keeps a file's bytes in a buffer bounded
/// by its protocol's memcap (`app-layer.protocols.http.memcap`) and sets a file whose
/// bytes find no room to `ERROR`; here one bound covers every protocol's files
/// (`file-store.memcap`, Meerkat's key: Suricata has no file-layer-wide one), and a
/// file that finds no room ends the same way: `ERROR`, not stored, no digests,
/// counted in `file_store_memcap`.
#[derive(Debug)]
pub struct Budget {
    cap: AtomicU64,
    used: AtomicU64,
    hits: AtomicU64,
}

impl Budget {
    pub const fn new(cap: u64) -> Budget {
        Budget {
            cap: AtomicU64::new(cap),
            used: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    /// Sets the bound (0 = the default, [`DEFAULT_MEMCAP`]).
    pub fn set_cap(&self, cap: u64) {
        let cap = if cap == 0 { DEFAULT_MEMCAP } else { cap };
        self.cap.store(cap, Ordering::Relaxed);
    }

    /// Bytes kept now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Files that found no room.
    pub fn hits(&self) -> u64 {
        self.hits.load(Ordering::Relaxed)
    }

    fn reserve(&self, n: u64) -> bool {
        let cap = self.cap.load(Ordering::Relaxed);
        let before = self.used.fetch_add(n, Ordering::Relaxed);
        if before.saturating_add(n) > cap {
            self.used.fetch_sub(n, Ordering::Relaxed);
            self.hits.fetch_add(1, Ordering::Relaxed);
            return false;
        }
        true
    }

    fn release(&self, n: u64) {
        if n > 0 {
            self.used.fetch_sub(n, Ordering::Relaxed);
        }
    }
}

/// The process's budget (one per detect worker process; shared by the workers of an
/// in-process run, as Suricata's memcaps are by its threads).
pub static BUDGET: Budget = Budget::new(DEFAULT_MEMCAP);

/// What the file layer does, for every protocol of a flow: set by the worker from the
/// config (outputs, `file-store`) and the loaded rules' needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FileConfig {
    /// Files are tracked at all (`fileinfo` logged, a file keyword loaded, or
    /// `file-store` on).
    pub track: bool,
    pub md5: bool,
    pub sha1: bool,
    pub sha256: bool,
    /// Detect the type from content (`force-magic`, or a `filemagic` rule).
    pub magic: bool,
    /// Store every file (`file-store.force-filestore`).
    pub store_all: bool,
    /// Files may be stored (the file store is on and a `filestore` rule is loaded, or
    /// `force-filestore`): a file keeps its bytes until it is written or known not to
    /// be wanted.
    pub store_possible: bool,
    /// Bytes of a file tracked at most (`file-store.stream-depth`; 0 = unlimited): a
    /// longer file is truncated there.
    pub depth: u64,
}

impl FileConfig {
    /// What the config asks for: tracking when some eve-log logs `files` or the
    /// file store is on; the digests of every `force-hash` (and sha256, which the file
    /// store names files by); magic with `force-magic`; `force-filestore`; the file
    /// store's `stream-depth`.
    pub fn from_config(config: &meerkat_config::Config) -> FileConfig {
        let mut c = FileConfig {
            track: config.eve_wants("files"),
            ..FileConfig::default()
        };
        let mut hashes = |names: &[String]| {
            for n in names {
                match n.as_str() {
                    "md5" => c.md5 = true,
                    "sha1" => c.sha1 = true,
                    "sha256" => c.sha256 = true,
                    _ => {}
                }
            }
        };
        let mut magic = false;
        for eve in config.eve_logs() {
            if let Some(o) = eve.type_entry("files").and_then(|t| t.options()) {
                hashes(&o.force_hash);
                magic |= o.force_magic == Some(true);
            }
        }
        let mut store = None;
        for fs in config.outputs.iter().filter_map(|o| o.file_store.as_ref()) {
            if fs.enabled {
                hashes(&fs.force_hash);
                store = Some(fs);
            }
        }
        c.magic = magic;
        if let Some(fs) = store {
            c.track = true;
            c.sha256 = true;
            c.store_all = fs.force_filestore;
            c.store_possible = fs.force_filestore;
            c.depth = fs.stream_depth.bytes();
        }
        c
    }

    /// The union of two sets of needs (config and rules).
    pub fn union(self, o: FileConfig) -> FileConfig {
        FileConfig {
            track: self.track || o.track,
            md5: self.md5 || o.md5,
            sha1: self.sha1 || o.sha1,
            sha256: self.sha256 || o.sha256,
            magic: self.magic || o.magic,
            store_all: self.store_all || o.store_all,
            store_possible: self.store_possible || o.store_possible,
            depth: match (self.depth, o.depth) {
                (0, d) | (d, 0) => d,
                (a, b) => a.max(b),
            },
        }
    }
}

/// Where a file is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FileState {
    #[default]
    Open,
    /// Complete.
    Closed,
    /// Ended before its last byte (stream end, depth limit, a gap the protocol cannot
    /// parse past).
    Truncated,
    /// The protocol failed while the file was open.
    Error,
}

impl FileState {
    /// The EVE `state` value.
    pub fn name(self) -> &'static str {
        match self {
            FileState::Open => "UNKNOWN",
            FileState::Closed => "CLOSED",
            FileState::Truncated => "TRUNCATED",
            FileState::Error => "ERROR",
        }
    }
}

/// Incremental digests of a file.
#[derive(Debug, Clone, Default)]
struct Hashers {
    md5: Option<Md5>,
    sha1: Option<Sha1>,
    sha256: Option<Sha256>,
}

/// One file.
#[derive(Debug, Default)]
pub struct File {
    name: Vec<u8>,
    state: FileState,
    /// Bytes appended (gaps included: the file's length so far).
    size: u64,
    gaps: bool,
    /// Range of a partial file (HTTP `Content-Range`): first and last byte offsets.
    pub range: Option<(u64, u64)>,
    depth: u64,
    hashers: Option<Box<Hashers>>,
    md5: Option<[u8; 16]>,
    sha1: Option<[u8; 20]>,
    sha256: Option<[u8; 32]>,
    /// The file's first bytes, for magic (capacity reserved at open when wanted).
    head: Vec<u8>,
    want_magic: bool,
    magic: Option<&'static str>,
    /// A rule's `filestore` (or `force-filestore`) asked for it.
    pub store: bool,
    /// It was written by the file store.
    pub stored: bool,
    /// Rules that asked for it to be stored.
    pub store_sids: Vec<u64>,
    /// Bytes not written to the store yet: kept while the file may be stored (see
    /// [`FileConfig::store_possible`]), bounded by [`MAX_STORE_PENDING`] until some rule
    /// asks for it.
    pending: Vec<u8>,
    /// Keep bytes for the store: the file may still be stored.
    keep: bool,
    /// Where `pending` is counted ([`BUDGET`] unless a test gives its own).
    budget: Option<&'static Budget>,
    /// The file store's handle of this file (its temporary file), once writing began.
    pub(crate) writer: Option<store::Writer>,
    /// The file store's id of the stored file (EVE `file_id`).
    pub file_id: Option<u64>,
    /// This file is a part of a larger one (HTTP `206`) being reassembled: the part's
    /// share of the reassembly (see [`range`]).
    pub range_block: Option<Box<range::RangeBlock>>,
}

impl File {
    /// A new open file named `name` (cut at [`MAX_FILE_NAME`]).
    pub fn open(name: &[u8], cfg: &FileConfig) -> File {
        File::open_in(name, cfg, &BUDGET)
    }

    /// [`File::open`], its kept bytes counted in `budget`.
    pub fn open_in(name: &[u8], cfg: &FileConfig, budget: &'static Budget) -> File {
        let name = &name[..name.len().min(MAX_FILE_NAME)];
        let hashers = (cfg.md5 || cfg.sha1 || cfg.sha256).then(|| {
            Box::new(Hashers {
                md5: cfg.md5.then(Md5::new),
                sha1: cfg.sha1.then(Sha1::new),
                sha256: cfg.sha256.then(Sha256::new),
            })
        });
        // Field by field: a type with `Drop` cannot be built with `..File::default()`.
        let mut f = File::default();
        f.name = name.to_vec();
        f.depth = cfg.depth;
        f.hashers = hashers;
        if cfg.magic {
            f.head = Vec::with_capacity(MAX_MAGIC_BYTES);
        }
        f.want_magic = cfg.magic;
        f.store = cfg.store_all;
        f.keep = cfg.store_possible;
        f.budget = Some(budget);
        f
    }

    pub fn name(&self) -> &[u8] {
        &self.name
    }

    pub fn state(&self) -> FileState {
        self.state
    }

    pub fn is_open(&self) -> bool {
        self.state == FileState::Open
    }

    pub fn size(&self) -> u64 {
        self.size
    }

    pub fn has_gaps(&self) -> bool {
        self.gaps
    }

    /// The first bytes kept for magic (empty unless magic is wanted).
    pub fn head(&self) -> &[u8] {
        &self.head
    }

    pub fn md5(&self) -> Option<&[u8; 16]> {
        self.md5.as_ref()
    }

    pub fn sha1(&self) -> Option<&[u8; 20]> {
        self.sha1.as_ref()
    }

    pub fn sha256(&self) -> Option<&[u8; 32]> {
        self.sha256.as_ref()
    }

    /// The file's type from its content (when magic is wanted): known once its first
    /// [`MAX_MAGIC_BYTES`] bytes arrived or it ended.
    pub fn magic(&self) -> Option<&'static str> {
        self.magic
    }

    /// Whether magic is computed for this file.
    pub fn wants_magic(&self) -> bool {
        self.want_magic
    }

    /// Whether the file computes digest `algo`.
    pub fn hashing(&self) -> bool {
        self.hashers.is_some()
    }

    /// Appends the file's next bytes. Past the depth limit the file is truncated.
    pub fn append(&mut self, data: &[u8]) {
        if let Some(b) = self.range_block.as_deref_mut() {
            b.append(Some(data), data.len() as u64);
        }
        if self.state != FileState::Open || data.is_empty() {
            return;
        }
        let data = if self.depth > 0 {
            let room = usize::try_from(self.depth.saturating_sub(self.size)).unwrap_or(usize::MAX);
            &data[..data.len().min(room)]
        } else {
            data
        };
        self.size += data.len() as u64;
        if let Some(h) = self.hashers.as_deref_mut() {
            if let Some(m) = &mut h.md5 {
                m.update(data);
            }
            if let Some(s) = &mut h.sha1 {
                s.update(data);
            }
            if let Some(s) = &mut h.sha256 {
                s.update(data);
            }
        }
        if self.keep {
            if !self.store && self.pending.len() + data.len() > MAX_STORE_PENDING {
                // Too large to wait for a decision: not stored.
                self.no_store();
            } else if self.budget.is_none_or(|b| b.reserve(data.len() as u64)) {
                self.pending.extend_from_slice(data);
            } else {
                // No room left under the memcap: the file fails, as Suricata's does
                // when its buffer cannot grow.
                self.no_store();
                self.end(FileState::Error);
                return;
            }
        }
        if self.want_magic && self.magic.is_none() {
            let room = MAX_MAGIC_BYTES - self.head.len();
            self.head.extend_from_slice(&data[..data.len().min(room)]);
            if self.head.len() == MAX_MAGIC_BYTES {
                self.magic = Some(magic::describe(&self.head));
            }
        }
        if self.depth > 0 && self.size >= self.depth {
            self.end(FileState::Truncated);
        }
    }

    /// `len` bytes of the file are missing: it has gaps, and its digests cannot be
    /// computed (Suricata logs none for such a file). The file store, which names files
    /// by their digest, cannot store it either.
    pub fn gap(&mut self, len: u64) {
        if let Some(b) = self.range_block.as_deref_mut() {
            b.append(None, len);
        }
        if self.state != FileState::Open {
            return;
        }
        self.gaps = true;
        self.size += len;
        self.hashers = None;
        self.no_store();
    }

    /// A rule (`filestore`, by sid) asks for the file to be stored: it is, when the file
    /// store is on and its bytes were kept.
    pub fn request_store(&mut self, sid: u64) {
        self.store = true;
        if !self.store_sids.contains(&sid) && self.store_sids.len() < MAX_STORE_SIDS {
            self.store_sids.push(sid);
        }
    }

    /// The file will not be stored: its kept bytes are dropped and no more are kept.
    pub fn no_store(&mut self) {
        self.keep = false;
        self.drop_pending();
        if let Some(w) = self.writer.take() {
            w.discard();
        }
    }

    /// Whether the file keeps its bytes for the store (it may still be stored).
    pub fn keeps_bytes(&self) -> bool {
        self.keep
    }

    /// Bytes kept and not written to the store yet.
    pub fn pending(&self) -> &[u8] {
        &self.pending
    }

    /// Takes the kept bytes (to the store), leaving room for `capacity` more.
    pub(crate) fn take_pending(&mut self, capacity: usize) -> Vec<u8> {
        let data = std::mem::replace(&mut self.pending, Vec::with_capacity(capacity));
        if let Some(b) = self.budget {
            b.release(data.len() as u64);
        }
        data
    }

    /// Drops the kept bytes.
    pub(crate) fn drop_pending(&mut self) {
        drop(self.take_pending(0));
    }

    /// The file is complete.
    pub fn close(&mut self) {
        self.end(FileState::Closed);
    }

    /// The file ended before its last byte.
    pub fn truncate(&mut self) {
        self.end(FileState::Truncated);
    }

    /// The protocol failed while the file was open.
    pub fn error(&mut self) {
        self.end(FileState::Error);
    }

    fn end(&mut self, state: FileState) {
        if self.state != FileState::Open {
            return;
        }
        // A file with a hole in it is not complete, even when its protocol saw its end
        // (Suricata logs such a file as TRUNCATED).
        self.state = match state {
            FileState::Closed if self.gaps => FileState::Truncated,
            s => s,
        };
        // Digests are final only for a complete file; a truncated one keeps none.
        if let Some(h) = self.hashers.take()
            && state == FileState::Closed
        {
            let h = *h;
            self.md5 = h.md5.map(|m| m.finalize().into());
            self.sha1 = h.sha1.map(|s| s.finalize().into());
            self.sha256 = h.sha256.map(|s| s.finalize().into());
        }
        if self.want_magic && self.magic.is_none() && !self.head.is_empty() {
            self.magic = Some(magic::describe(&self.head));
        }
        self.head = Vec::new();
    }
}

impl Drop for File {
    fn drop(&mut self) {
        if let Some(b) = self.budget {
            b.release(self.pending.len() as u64);
        }
    }
}

/// Most rule ids a file records as having asked for its storage (EVE `sid`).
pub const MAX_STORE_SIDS: usize = 16;

/// The files of one direction of a transaction, bounded by [`MAX_FILES_PER_TX`].
#[derive(Debug, Default)]
pub struct Files {
    files: Vec<File>,
    /// Files not tracked because the bound was hit.
    pub dropped: u32,
}

impl Files {
    pub fn as_slice(&self) -> &[File] {
        &self.files
    }

    /// Starts a new file (the previous one, if still open, is closed first); `None`
    /// past [`MAX_FILES_PER_TX`].
    pub fn open(&mut self, name: &[u8], cfg: &FileConfig) -> Option<&mut File> {
        self.end_current(FileState::Closed);
        if self.files.len() >= MAX_FILES_PER_TX {
            self.dropped += 1;
            return None;
        }
        self.files.push(File::open(name, cfg));
        self.files.last_mut()
    }

    /// The file being written (the last one, when still open).
    pub fn current(&mut self) -> Option<&mut File> {
        self.files.last_mut().filter(|f| f.is_open())
    }

    pub fn get_mut(&mut self, i: usize) -> Option<&mut File> {
        self.files.get_mut(i)
    }

    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, File> {
        self.files.iter_mut()
    }

    /// Ends the open file, if any, as `how` says. When it was a part of a larger file
    /// (see [`range`]) that it completed, the reassembled file follows it.
    pub fn end_current(&mut self, how: FileState) {
        let Some(f) = self.files.last_mut() else {
            return;
        };
        if f.is_open() {
            f.end(how);
        }
        if let Some(b) = f.range_block.take()
            && let Some(merged) = b.close(how != FileState::Closed)
        {
            if self.files.len() >= MAX_FILES_PER_TX {
                self.dropped += 1;
            } else {
                self.files.push(merged);
            }
        }
    }
}

/// Lowercase hex of a digest.
pub fn hex(b: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for &c in b {
        s.push(char::from(HEX[usize::from(c >> 4)]));
        s.push(char::from(HEX[usize::from(c & 15)]));
    }
    s
}

/// The events-contract record of file `f` of transaction `tx_id`.
pub fn record(f: &File, tx_id: u64) -> FileInfo {
    FileInfo {
        filename: f.name.clone(),
        size: f.size,
        state: f.state.name().to_string(),
        gaps: f.gaps,
        stored: f.stored,
        md5: f.md5.as_ref().map(|d| hex(d)).unwrap_or_default(),
        sha1: f.sha1.as_ref().map(|d| hex(d)).unwrap_or_default(),
        sha256: f.sha256.as_ref().map(|d| hex(d)).unwrap_or_default(),
        magic: f.magic.unwrap_or_default().to_string(),
        tx_id,
        start: f.range.map(|r| r.0),
        end: f.range.map(|r| r.1),
        file_id: f.file_id,
        sid: f.store_sids.clone(),
        storing: f.store && !f.stored,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all() -> FileConfig {
        FileConfig {
            track: true,
            md5: true,
            sha1: true,
            sha256: true,
            magic: true,
            ..FileConfig::default()
        }
    }

    #[test]
    fn digests_of_a_file_in_pieces() {
        let mut f = File::open(b"/x", &all());
        f.append(b"ab");
        f.append(b"");
        f.append(b"c");
        assert!(f.md5().is_none(), "digests are final only at close");
        f.close();
        assert_eq!(f.state(), FileState::Closed);
        assert_eq!(f.size(), 3);
        // Well-known digests of "abc".
        assert_eq!(hex(f.md5().unwrap()), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(
            hex(f.sha1().unwrap()),
            "a9993e364706816aba3e25717850c26c9cd0d89d"
        );
        assert_eq!(
            hex(f.sha256().unwrap()),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(f.magic(), Some("ASCII text, with no line terminators"));
        f.append(b"more");
        assert_eq!(f.size(), 3, "a closed file takes no more bytes");
    }

    #[test]
    fn a_gap_drops_the_digests_and_a_truncated_file_has_none() {
        let mut f = File::open(b"/x", &all());
        f.append(b"abc");
        f.gap(10);
        f.append(b"d");
        f.close();
        assert!(f.has_gaps());
        assert_eq!(f.state(), FileState::Truncated);
        assert_eq!(f.size(), 14);
        assert!(f.md5().is_none() && f.sha256().is_none());
        let mut t = File::open(b"/y", &all());
        t.append(b"abc");
        t.truncate();
        assert_eq!(t.state(), FileState::Truncated);
        assert!(t.md5().is_none());
        assert_eq!(record(&t, 3).state, "TRUNCATED");
        assert_eq!(record(&t, 3).tx_id, 3);
    }

    #[test]
    fn without_hashes_nothing_is_computed() {
        let cfg = FileConfig {
            track: true,
            ..FileConfig::default()
        };
        let mut f = File::open(b"/x", &cfg);
        f.append(b"abc");
        f.close();
        assert!(!f.hashing() && f.md5().is_none() && f.magic().is_none());
        let r = record(&f, 0);
        assert!(r.md5.is_empty() && r.sha256.is_empty() && r.magic.is_empty());
        assert_eq!((r.size, r.state.as_str()), (3, "CLOSED"));
    }

    #[test]
    fn the_depth_truncates() {
        let cfg = FileConfig {
            track: true,
            md5: true,
            depth: 4,
            ..FileConfig::default()
        };
        let mut f = File::open(b"/x", &cfg);
        f.append(b"abc");
        f.append(b"defg");
        assert_eq!(f.state(), FileState::Truncated);
        assert_eq!(f.size(), 4);
        assert!(f.md5().is_none());
    }

    #[test]
    fn names_and_file_counts_are_bounded() {
        let long = vec![b'a'; MAX_FILE_NAME + 10];
        let f = File::open(&long, &FileConfig::default());
        assert_eq!(f.name().len(), MAX_FILE_NAME);
        let mut fs = Files::default();
        for _ in 0..MAX_FILES_PER_TX + 3 {
            fs.open(b"n", &FileConfig::default());
        }
        assert_eq!(fs.as_slice().len(), MAX_FILES_PER_TX);
        assert_eq!(fs.dropped, 3);
        // Opening the next file closed the one before.
        assert!(
            fs.as_slice()[..MAX_FILES_PER_TX - 1]
                .iter()
                .all(|f| !f.is_open())
        );
    }

    #[test]
    fn the_memcap_bounds_the_bytes_kept_over_all_files() {
        let budget: &'static Budget = Box::leak(Box::new(Budget::new(100)));
        let cfg = FileConfig {
            track: true,
            sha256: true,
            store_possible: true,
            ..FileConfig::default()
        };
        let mut a = File::open_in(b"/a", &cfg, budget);
        let mut b = File::open_in(b"/b", &cfg, budget);
        a.append(&[1; 60]);
        assert_eq!(budget.used(), 60);
        b.append(&[2; 30]);
        assert_eq!(budget.used(), 90);
        b.append(&[2; 30]);
        assert_eq!(b.state(), FileState::Error, "no room: the file fails");
        assert!(!b.keeps_bytes() && b.sha256().is_none());
        assert_eq!((budget.used(), budget.hits()), (60, 1));
        // What the store takes, and a dropped file, give their room back.
        assert_eq!(a.take_pending(0).len(), 60);
        assert_eq!(budget.used(), 0);
        a.append(&[1; 50]);
        drop(a);
        assert_eq!(budget.used(), 0);
        let mut c = File::open_in(b"/c", &cfg, budget);
        c.append(&[3; 100]);
        c.close();
        assert_eq!(c.state(), FileState::Closed);
    }
}
