//! File identity: what a file *is*, independently of the name it has right now.
//!
//! Two strategies, as in Elastic Filebeat's scanner:
//! - [`Identity::Native`]: the device and inode numbers. Free to compute (one `stat`), but an
//!   inode number is reused once its file is deleted, and it changes when a file is copied
//!   to another filesystem.
//! - [`Identity::Fingerprint`]: a hash of the bytes in `[offset, offset + length)`. It
//!   survives copies between filesystems and is not fooled by inode reuse, but it costs an
//!   `open` + `fstat` + `pread` + `close` per file the first time the file is seen
//!   (against one `stat` for native); [`WindowReader::read_during`] shares many such
//!   reads out between threads while the directory is still being listed, so that a
//!   first scan of a large directory uses every CPU from its start. The default window (the
//!   first 4 KiB) reaches past pcap's 24-byte global header and pcapng's section and
//!   interface blocks, which are identical in every file one sensor writes.
//!
//! A file shorter than the window gets a *short* fingerprint (the hash of the bytes it
//! has, with their count). It is tracked like any other file; when it grows, the scanner
//! checks that the new content still begins with what it hashed before (see
//! [`Window::read`]'s prefix hashes) and upgrades the fingerprint.
//!
//! [`Stat`] is the part of `stat(2)` the scanner keeps: the identity numbers, size and
//! times. `(dev, ino, size, mtime)` unchanged since the last scan means "same file, same
//! content": the scanner then reuses the fingerprint instead of reopening the file.
//!
//! [`processed_digest`] is what the registry keeps of the content already processed, to
//! check on resume that the bytes before the resume point are still those.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, MetadataExt};

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use nix::errno::Errno;
use nix::fcntl::{OFlag, openat};
use nix::sys::stat::Mode;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_128;

/// Default fingerprint window offset, bytes.
pub const DEFAULT_FINGERPRINT_OFFSET: u64 = 0;
/// Default fingerprint window length, bytes: past every capture-file header.
pub const DEFAULT_FINGERPRINT_LENGTH: u64 = 4096;
/// Longest fingerprint window accepted, bytes.
pub const MAX_FINGERPRINT_LENGTH: u64 = 1 << 20;
/// Bytes at each end of the processed part that [`processed_digest`] hashes.
pub const DIGEST_SPAN: u64 = 4096;

/// How files are identified.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Identity {
    /// Device and inode numbers.
    Native,
    /// A hash of a byte window of the content.
    Fingerprint,
}

impl Identity {
    pub fn name(self) -> &'static str {
        match self {
            Identity::Native => "native",
            Identity::Fingerprint => "fingerprint",
        }
    }
}

/// The byte window `[offset, offset + length)` that fingerprints hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    pub offset: u64,
    pub length: u64,
}

impl Default for Window {
    fn default() -> Self {
        Window {
            offset: DEFAULT_FINGERPRINT_OFFSET,
            length: DEFAULT_FINGERPRINT_LENGTH,
        }
    }
}

/// A content fingerprint: the hash of the first `len` bytes of the window (`len` is less
/// than the window length only for a file that ends inside the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Fingerprint {
    #[serde(with = "hex128")]
    pub hash: u128,
    pub len: u32,
}

/// The stat(2) fields the scanner keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stat {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    /// Modification time, ns since the Unix epoch.
    pub mtime_ns: i64,
    /// Status-change time (rename, chmod, write), ns since the Unix epoch.
    pub ctime_ns: i64,
    /// Birth time (statx), ns since the Unix epoch; 0 where the filesystem has none. A
    /// reused inode has a new birth time.
    #[serde(default)]
    pub btime_ns: i64,
}

impl Stat {
    pub fn from_metadata(m: &Metadata) -> Stat {
        Stat {
            dev: m.dev(),
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime().saturating_mul(1_000_000_000) + m.mtime_nsec(),
            ctime_ns: m.ctime().saturating_mul(1_000_000_000) + m.ctime_nsec(),
            btime_ns: m
                .created()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
                .unwrap_or(0),
        }
    }

    /// Not known to be different file objects by birth time (which only a filesystem
    /// that records it can tell).
    pub fn same_birth(&self, other: &Stat) -> bool {
        self.btime_ns == 0 || other.btime_ns == 0 || self.btime_ns == other.btime_ns
    }

    /// Same file object and, as far as stat can tell, the same content:
    /// (dev, ino, size, mtime) unchanged (and the birth time, where known).
    pub fn same_version(&self, other: &Stat) -> bool {
        self.dev == other.dev
            && self.ino == other.ino
            && self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.same_birth(other)
    }

    pub fn inode(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }
}

/// What reading a window gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowRead {
    pub fingerprint: Fingerprint,
    /// For each requested prefix length (in request order): the hash of the first `len`
    /// bytes of the window, or `None` when the file has fewer.
    pub prefixes: Vec<Option<u128>>,
}

impl Window {
    /// Reads the window of `file` into `buf` and hashes it, plus the hash of each
    /// requested prefix of the window (used to tell whether a file that grew still begins
    /// with the content it had).
    pub fn read(&self, file: &File, buf: &mut Vec<u8>, prefixes: &[u32]) -> io::Result<WindowRead> {
        let want = self.length.min(MAX_FINGERPRINT_LENGTH) as usize;
        buf.resize(want, 0);
        let mut got = 0;
        while got < want {
            match file.read_at(&mut buf[got..], self.offset + got as u64) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let data = &buf[..got];
        Ok(WindowRead {
            fingerprint: Fingerprint {
                hash: xxh3_128(data),
                len: got as u32,
            },
            prefixes: prefixes
                .iter()
                .map(|&len| data.get(..len as usize).map(xxh3_128))
                .collect(),
        })
    }
}

/// Opens files and reads their windows, reusing its buffers; many files at once on
/// several threads, while they are being listed.
#[derive(Debug)]
pub struct WindowReader {
    pub window: Window,
    buf: Vec<u8>,
    /// Open with O_NOATIME (reading a fingerprint should not change a file's atime);
    /// cleared when the kernel refuses it (files of another owner).
    noatime: AtomicBool,
    /// Threads [`WindowReader::read_during`] uses (1: the caller's only).
    threads: usize,
}

/// A file whose window is to be read (see [`WindowReader::read_during`]): its index in
/// the caller's list, its directory (open, to look up one path component) and its path
/// (lent to the reader, given back in [`ReadDone`]).
#[derive(Debug)]
pub struct ReadJob {
    pub index: usize,
    pub dir: Option<Arc<File>>,
    pub path: PathBuf,
}

/// What [`WindowReader::read_during`] gives for one file: the open file's stat and the
/// window's fingerprint.
pub type JobResult = io::Result<(Stat, Fingerprint)>;

/// A [`ReadJob`] done: the job's index and path, and the result.
#[derive(Debug)]
pub struct ReadDone {
    pub index: usize,
    pub path: PathBuf,
    pub result: JobResult,
}

/// Files handed to the reading threads at a time (one lock per batch; the last batch a
/// thread takes is what the others may wait for at the end).
const CHUNK: usize = 4;
/// Files queued per reading thread started: a thread costs tens of microseconds to
/// start, a window read a few, so a few new files are read on the calling thread only.
const PER_THREAD: usize = 48;
/// Most threads [`WindowReader::read_during`] uses whatever the machine has: reading a
/// window is a few system calls, and the kernel's own locks (the directory's dentries)
/// stop paying back beyond a few.
pub const MAX_READ_THREADS: usize = 4;

/// Batches of jobs between the lister and the reading threads.
struct Queue {
    state: Mutex<QueueState>,
    ready: Condvar,
}

struct QueueState {
    batches: VecDeque<Vec<ReadJob>>,
    /// No more batches will come.
    closed: bool,
    /// Threads waiting for a batch (a wake-up is a system call: none when nobody waits).
    waiting: usize,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // A reader that panicked leaves nothing half-done in the queue itself.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn push(&self, batch: Vec<ReadJob>) {
        let mut st = self.lock();
        st.batches.push_back(batch);
        if st.waiting > 0 {
            drop(st);
            self.ready.notify_one();
        }
    }

    fn close(&self) {
        self.lock().closed = true;
        self.ready.notify_all();
    }

    /// The next batch; `None` once the queue is closed and empty. With `wait`, waits for
    /// one while the queue is open.
    fn pop(&self, wait: bool) -> Option<Vec<ReadJob>> {
        let mut st = self.lock();
        loop {
            if let Some(b) = st.batches.pop_front() {
                return Some(b);
            }
            if st.closed || !wait {
                return None;
            }
            st.waiting += 1;
            st = self.ready.wait(st).unwrap_or_else(|e| e.into_inner());
            st.waiting -= 1;
        }
    }
}

impl WindowReader {
    /// A reader of `window` using up to `threads` threads for many files (0: one per
    /// CPU, at most [`MAX_READ_THREADS`]).
    pub fn new(window: Window, threads: usize) -> WindowReader {
        let threads = match threads {
            0 => std::thread::available_parallelism()
                .map_or(1, |n| n.get())
                .min(MAX_READ_THREADS),
            n => n,
        };
        WindowReader {
            window,
            buf: Vec::new(),
            noatime: AtomicBool::new(true),
            threads,
        }
    }

    /// Opens `name` relative to the open directory `dir` (one path component for the
    /// kernel to look up), or `name` as a path when there is no directory.
    pub fn open(&self, dir: Option<&File>, name: &Path) -> io::Result<File> {
        let base = OFlag::O_RDONLY | OFlag::O_CLOEXEC;
        loop {
            let noatime = self.noatime.load(Ordering::Relaxed);
            let flags = if noatime {
                base | OFlag::O_NOATIME
            } else {
                base
            };
            let r = match dir {
                Some(d) => openat(d, name, flags, Mode::empty()).map(File::from),
                None => nix::fcntl::open(name, flags, Mode::empty()).map(File::from),
            };
            match r {
                Ok(f) => return Ok(f),
                // Not the owner: O_NOATIME is refused; stop asking.
                Err(Errno::EPERM) if noatime => self.noatime.store(false, Ordering::Relaxed),
                Err(e) => return Err(io::Error::from(e)),
            }
        }
    }

    /// Stats the open file and reads its window, with the hashes of `prefixes`.
    pub fn read(&mut self, file: &File, prefixes: &[u32]) -> io::Result<(Stat, WindowRead)> {
        let stat = Stat::from_metadata(&file.metadata()?);
        let r = self.window.read(file, &mut self.buf, prefixes)?;
        Ok((stat, r))
    }

    /// Opens (relative to directory `dir`), stats and reads the window of one file into
    /// `buf`.
    fn read_job(&self, dir: Option<&File>, path: &Path, buf: &mut Vec<u8>) -> JobResult {
        let file = match (dir, last_component(path)) {
            (Some(d), Some(name)) => self.open(Some(d), name)?,
            _ => self.open(None, path)?,
        };
        let stat = Stat::from_metadata(&file.metadata()?);
        let r = self.window.read(&file, buf, &[])?;
        Ok((stat, r.fingerprint))
    }

    /// Reads the queue's batches until it is closed and empty (`wait`) or just empty.
    ///
    /// `private`: this thread has a descriptor table of its own (see
    /// [`private_descriptors`]), in which the jobs' directories are not (or not all):
    /// it opens each directory again, by its path. The jobs' directory handles are
    /// descriptors of the process's table, which this thread must then not close: they
    /// go to `dirs`, for the caller to drop (a handle dropped here would close whatever
    /// has its number in this thread's table, and leave the directory open in the
    /// process's for good).
    fn work(
        &self,
        q: &Queue,
        wait: bool,
        private: bool,
        buf: &mut Vec<u8>,
        done: &mut Vec<ReadDone>,
        dirs: &mut Vec<Arc<File>>,
    ) {
        // The last directory reopened: the job's handle, and this thread's.
        let mut own: Option<(Arc<File>, Option<File>)> = None;
        while let Some(batch) = q.pop(wait) {
            for job in batch {
                let dir = match &job.dir {
                    Some(d) if private => {
                        if !own.as_ref().is_some_and(|(h, _)| Arc::ptr_eq(h, d)) {
                            let mine = job.path.parent().and_then(|p| {
                                let flags = OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_CLOEXEC;
                                nix::fcntl::open(p, flags, Mode::empty())
                                    .ok()
                                    .map(File::from)
                            });
                            if let Some((h, _)) = own.replace((Arc::clone(d), mine)) {
                                dirs.push(h);
                            }
                        }
                        // Not reopened: the file by its path.
                        own.as_ref().and_then(|(_, f)| f.as_ref())
                    }
                    d => d.as_deref(),
                };
                let result = self.read_job(dir, &job.path, buf);
                done.push(ReadDone {
                    index: job.index,
                    path: job.path,
                    result,
                });
                if private && let Some(d) = job.dir {
                    dirs.push(d);
                }
            }
        }
        if let Some((h, _)) = own {
            dirs.push(h);
        }
    }

    /// Runs `list`, which hands the files whose windows are to be read to the sink it is
    /// given, and reads those windows meanwhile: once enough files are queued, reading
    /// threads start and read them while `list` goes on finding more (each opens, stats,
    /// reads and hashes its files: system calls on separate files, which run in
    /// parallel); the calling thread reads what is left when `list` returns. Returns
    /// what `list` returned and one [`ReadDone`] per job, in no particular order.
    pub fn read_during<R>(
        &mut self,
        list: impl FnOnce(&mut dyn FnMut(ReadJob)) -> R,
    ) -> (R, Vec<ReadDone>) {
        let queue = Queue {
            state: Mutex::new(QueueState {
                batches: VecDeque::new(),
                closed: false,
                waiting: 0,
            }),
            ready: Condvar::new(),
        };
        let mut buf = std::mem::take(&mut self.buf);
        let this = &*self;
        if this.threads == 1 {
            // No one to share with: list, then read (no queue, no batches).
            let mut jobs = Vec::new();
            let r = list(&mut |job| jobs.push(job));
            let done = jobs
                .into_iter()
                .map(|job| ReadDone {
                    index: job.index,
                    result: this.read_job(job.dir.as_deref(), &job.path, &mut buf),
                    path: job.path,
                })
                .collect();
            self.buf = buf;
            return (r, done);
        }
        let out = std::thread::scope(|s| {
            let queue = &queue;
            let mut helpers = Vec::new();
            let mut refused = false;
            let mut queued = 0;
            let mut batch = Vec::with_capacity(CHUNK);
            let r = list(&mut |job| {
                batch.push(job);
                if batch.len() < CHUNK {
                    return;
                }
                queue.push(std::mem::replace(&mut batch, Vec::with_capacity(CHUNK)));
                queued += CHUNK;
                if !refused
                    && helpers.len() + 1 < this.threads
                    && queued >= PER_THREAD * (helpers.len() + 1)
                {
                    // A thread the OS refuses (a thread limit) leaves its share to the
                    // others.
                    match std::thread::Builder::new()
                        .name("scan-read".to_string())
                        .spawn_scoped(s, move || {
                            let private = private_descriptors();
                            private_credentials();
                            let (mut done, mut dirs) = (Vec::new(), Vec::new());
                            this.work(queue, true, private, &mut Vec::new(), &mut done, &mut dirs);
                            (done, dirs)
                        }) {
                        Ok(h) => helpers.push(h),
                        Err(_) => refused = true,
                    }
                }
            });
            if !batch.is_empty() {
                queue.push(batch);
            }
            queue.close();
            let mut done = Vec::with_capacity(queued + CHUNK);
            let mut dirs = Vec::new();
            this.work(queue, false, false, &mut buf, &mut done, &mut dirs);
            for h in helpers {
                match h.join() {
                    // The helper's directory handles are closed here, in the process's
                    // descriptor table.
                    Ok((d, _dirs)) => done.extend(d),
                    // A bug, not a file's fault: the caller gets the panic.
                    Err(panic) => std::panic::resume_unwind(panic),
                }
            }
            (r, done)
        });
        self.buf = buf;
        out
    }
}

/// The name `path` ends with, to open relative to its directory: what follows the last
/// `/` (a job's path is its directory's joined with one name; cheaper than
/// [`Path::file_name`], which parses every component). `None` for no name, `.` or `..`.
fn last_component(path: &Path) -> Option<&Path> {
    let bytes = path.as_os_str().as_bytes();
    let name = bytes.rsplit(|&b| b == b'/').next()?;
    match name {
        b"" | b"." | b".." => None,
        _ => Some(Path::new(std::ffi::OsStr::from_bytes(name))),
    }
}

/// Gives the calling thread a descriptor table of its own (a copy of the process's), for
/// a reading thread: every `open` and `close` takes the lock of the descriptor table
/// (and every system call on a descriptor takes a reference on its file) when the table
/// is shared by several threads, so threads that open and close thousands of files
/// through one table spend much of their time waiting for each other's lock. `false`
/// when the kernel refuses (the thread then uses the shared table).
///
/// The copy holds the process's files open until the thread ends: the reading threads
/// live for one scan.
fn private_descriptors() -> bool {
    // SAFETY: unshare(CLONE_FILES) only replaces this thread's descriptor table by a copy
    // holding the same open files under the same numbers; no memory is involved.
    unsafe { libc::unshare(libc::CLONE_FILES) == 0 }
}

/// Gives the calling thread credentials of its own, equal to the process's, for a
/// reading thread: every open file holds a reference on its opener's credentials (taken
/// at `open`, dropped at `close`), and threads share one credentials object, so threads
/// that open and close thousands of files at once pass that reference count's cache line
/// back and forth (and O_NOATIME's owner check reads it): about 5% of their time.
/// Setting the keep-capabilities flag to the value it has is the one unprivileged way to
/// get a new copy (`prctl` commits new credentials, changed or not); nothing else
/// changes. Where it is refused (a seccomp filter), the thread shares the process's.
fn private_credentials() {
    // SAFETY: PR_GET_KEEPCAPS only reads this thread's flag; PR_SET_KEEPCAPS with that
    // same value replaces this thread's credentials by an equal copy. No memory is
    // involved.
    unsafe {
        let keep = libc::prctl(libc::PR_GET_KEEPCAPS);
        if keep >= 0 {
            libc::prctl(libc::PR_SET_KEEPCAPS, keep as libc::c_ulong);
        }
    }
}

/// Digest of the processed part `[0, upto)` of a file: the hash of its first and last
/// [`DIGEST_SPAN`] bytes (and of `upto` itself). Two preads, whatever the file size.
///
/// It answers "are the bytes before the resume point still the ones that were
/// processed?" for the common ways a file is replaced (truncation, rewrite, inode reuse,
/// another file renamed over it); a change confined to the middle of a large processed
/// part goes unnoticed, which capture files (appended, never edited) do not do.
pub fn processed_digest(file: &File, upto: u64) -> io::Result<u128> {
    let mut buf = vec![0u8; (2 * DIGEST_SPAN + 8) as usize];
    buf[..8].copy_from_slice(&upto.to_le_bytes());
    let head = upto.min(DIGEST_SPAN);
    let tail_start = upto.saturating_sub(DIGEST_SPAN).max(head);
    let mut n = 8;
    for (start, end) in [(0, head), (tail_start, upto)] {
        let len = (end - start) as usize;
        let dst = &mut buf[n..n + len];
        file.read_exact_at(dst, start)?;
        n += len;
    }
    Ok(xxh3_128(&buf[..n]))
}

/// u128 as a 32-digit hex string in JSON (JSON numbers do not hold 128 bits).
pub(crate) mod hex128 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &u128, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{v:032x}"))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u128, D::Error> {
        let s = String::deserialize(d)?;
        u128::from_str_radix(&s, 16)
            .map_err(|_| serde::de::Error::custom(format!("`{s}` is not a 128-bit hex number")))
    }
}

/// Optional u128 as hex.
pub(crate) mod opt_hex128 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &Option<u128>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(v) => s.serialize_str(&format!("{v:032x}")),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u128>, D::Error> {
        let s = Option::<String>::deserialize(d)?;
        s.map(|s| {
            u128::from_str_radix(&s, 16)
                .map_err(|_| serde::de::Error::custom(format!("`{s}` is not a 128-bit hex number")))
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn file_with(bytes: &[u8]) -> (tempfile::TempDir, File) {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        std::fs::File::create(&p).unwrap().write_all(bytes).unwrap();
        (dir, File::open(&p).unwrap())
    }

    #[test]
    fn window_hashes_only_its_bytes() {
        let mut a = vec![7u8; 10_000];
        let (_d1, fa) = file_with(&a);
        a[5000] = 8; // outside the default window
        let (_d2, fb) = file_with(&a);
        a[100] = 9; // inside
        let (_d3, fc) = file_with(&a);
        let w = Window::default();
        let mut buf = Vec::new();
        let ra = w.read(&fa, &mut buf, &[]).unwrap();
        let rb = w.read(&fb, &mut buf, &[]).unwrap();
        let rc = w.read(&fc, &mut buf, &[]).unwrap();
        assert_eq!(ra.fingerprint.len, 4096);
        assert_eq!(ra.fingerprint, rb.fingerprint);
        assert_ne!(ra.fingerprint, rc.fingerprint);
        // An offset window skips what is before it.
        let w = Window {
            offset: 200,
            length: 100,
        };
        assert_eq!(
            w.read(&fa, &mut buf, &[]).unwrap(),
            w.read(&fc, &mut buf, &[]).unwrap()
        );
    }

    #[test]
    fn short_file_gets_short_fingerprint_and_prefixes_link_growth() {
        let (_d1, short) = file_with(b"hello");
        let (_d2, long) = file_with(b"hello world, and then some");
        let w = Window::default();
        let mut buf = Vec::new();
        let s = w.read(&short, &mut buf, &[]).unwrap();
        assert_eq!(s.fingerprint.len, 5);
        let l = w.read(&long, &mut buf, &[5, 100]).unwrap();
        assert_eq!(l.prefixes, vec![Some(s.fingerprint.hash), None]);
        let (_d3, other) = file_with(b"jello world, and then some");
        let o = w.read(&other, &mut buf, &[5]).unwrap();
        assert_ne!(o.prefixes[0], Some(s.fingerprint.hash));
    }

    /// Reads `paths` with `reader` through [`WindowReader::read_during`] (relative to
    /// `dir` when given), results by index.
    fn read_listed(
        reader: &mut WindowReader,
        dir: Option<&Arc<File>>,
        paths: &[PathBuf],
    ) -> Vec<JobResult> {
        let (listed, done) = reader.read_during(|sink| {
            for (index, p) in paths.iter().enumerate() {
                sink(ReadJob {
                    index,
                    dir: dir.cloned(),
                    path: p.clone(),
                });
            }
            paths.len()
        });
        assert_eq!(listed, paths.len());
        assert_eq!(done.len(), paths.len());
        let mut out: Vec<Option<JobResult>> = (0..paths.len()).map(|_| None).collect();
        for d in done {
            assert_eq!(
                d.path, paths[d.index],
                "the path comes back with its result"
            );
            assert!(
                out[d.index].replace(d.result).is_none(),
                "one result per job"
            );
        }
        out.into_iter().map(Option::unwrap).collect()
    }

    #[test]
    fn read_during_on_threads_gives_each_file_its_own_result() {
        let dir = tempfile::tempdir().unwrap();
        let n = 4 * PER_THREAD + 5;
        let mut paths = Vec::new();
        for i in 0..n {
            let p = dir.path().join(format!("f{i}"));
            // Every file different, some shorter than the window.
            let len = if i % 7 == 0 { 100 + i } else { 5000 + i };
            std::fs::write(&p, vec![(i % 251) as u8; len]).unwrap();
            paths.push(p);
        }
        paths[5] = dir.path().join("missing");
        let d = Arc::new(File::open(dir.path()).unwrap());
        let mut seq = WindowReader::new(Window::default(), 1);
        let mut par = WindowReader::new(Window::default(), 3);
        let one = read_listed(&mut seq, Some(&d), &paths);
        let many = read_listed(&mut par, Some(&d), &paths);
        let mut buf = Vec::new();
        for (i, (a, b)) in one.iter().zip(&many).enumerate() {
            if i == 5 {
                assert_eq!(a.as_ref().unwrap_err().kind(), io::ErrorKind::NotFound);
                assert_eq!(b.as_ref().unwrap_err().kind(), io::ErrorKind::NotFound);
                continue;
            }
            let (sa, fa) = a.as_ref().unwrap();
            let (sb, fb) = b.as_ref().unwrap();
            assert_eq!((sa, fa), (sb, fb), "file {i}");
            let f = File::open(&paths[i]).unwrap();
            let want = Window::default()
                .read(&f, &mut buf, &[])
                .unwrap()
                .fingerprint;
            assert_eq!(*fa, want, "file {i}");
            assert_eq!(sa.size, std::fs::metadata(&paths[i]).unwrap().len());
        }
        // By path, without a directory; and a few files (read on the calling thread).
        let by_path = read_listed(&mut par, None, &paths);
        assert_eq!(by_path[9].as_ref().unwrap().1, one[9].as_ref().unwrap().1);
        let few = read_listed(&mut par, Some(&d), &paths[..3]);
        assert_eq!(few[2].as_ref().unwrap().1, one[2].as_ref().unwrap().1);
        let none = read_listed(&mut par, Some(&d), &[]);
        assert!(none.is_empty());
    }

    /// A reading thread has a descriptor table of its own: the jobs' directory handles
    /// must still be closed in the process's table (once a thread closed its copy
    /// instead, and every scan left its directories open).
    #[test]
    fn directory_handles_are_closed_in_the_process_table() {
        use std::os::fd::{AsRawFd, FromRawFd};
        let dir = tempfile::tempdir().unwrap();
        let paths: Vec<PathBuf> = (0..8 * PER_THREAD)
            .map(|i| {
                let p = dir.path().join(format!("f{i}"));
                std::fs::write(&p, [i as u8; 100]).unwrap();
                p
            })
            .collect();
        // The handle gets a number far above what the other tests use, so that whether
        // it is still open can be told by its number.
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit writes one rlimit, which lives on this stack frame.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        if lim.rlim_cur < 256 {
            eprintln!("skipping: RLIMIT_NOFILE {} is too low", lim.rlim_cur);
            return;
        }
        let high = (lim.rlim_cur.min(1 << 16) - 64) as libc::c_int;
        let opened = File::open(dir.path()).unwrap();
        let mut reader = WindowReader::new(Window::default(), 3);
        // Which thread lets go of the last handle varies: several rounds.
        for _ in 0..10 {
            // SAFETY: F_DUPFD_CLOEXEC duplicates a descriptor this test owns; the new one is
            // owned by the File made from it, and by nothing else.
            let fd = unsafe { libc::fcntl(opened.as_raw_fd(), libc::F_DUPFD_CLOEXEC, high) };
            assert!(fd >= high, "{}", io::Error::last_os_error());
            // SAFETY: `fd` was just opened and has no other owner.
            let handle = Arc::new(unsafe { File::from_raw_fd(fd) });
            let paths = paths.clone();
            let (_, done) = reader.read_during(move |sink| {
                for (index, p) in paths.iter().enumerate() {
                    sink(ReadJob {
                        index,
                        dir: Some(Arc::clone(&handle)),
                        path: p.clone(),
                    });
                }
                // From here on, the jobs hold the only handles.
                drop(handle);
            });
            assert_eq!(done.len(), 8 * PER_THREAD);
            assert!(done.iter().all(|d| d.result.is_ok()));
            // SAFETY: F_GETFD only reads the descriptor's flags.
            let still_open = unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
            assert!(!still_open, "the directory is still open in the process");
        }
    }

    #[test]
    fn processed_digest_sees_head_tail_and_length() {
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        let (_d, f) = file_with(&data);
        let d = processed_digest(&f, 15_000).unwrap();
        assert_eq!(d, processed_digest(&f, 15_000).unwrap());
        assert_ne!(d, processed_digest(&f, 15_001).unwrap());
        let mut changed = data.clone();
        changed[14_999] ^= 1;
        let (_d2, g) = file_with(&changed);
        assert_ne!(d, processed_digest(&g, 15_000).unwrap());
        // Small processed parts: head and tail overlap, nothing is hashed twice.
        assert_eq!(
            processed_digest(&f, 10).unwrap(),
            processed_digest(&f, 10).unwrap()
        );
        assert!(processed_digest(&f, 0).is_ok());
        // Beyond the end of the file: an error, not a wrong digest.
        assert!(processed_digest(&f, 30_000).is_err());
    }

    #[test]
    fn fingerprint_round_trips_as_json() {
        let fp = Fingerprint {
            hash: u128::MAX - 5,
            len: 4096,
        };
        let s = serde_json::to_string(&fp).unwrap();
        assert!(s.contains("fffffffffffffffffffffffffffffffa"), "{s}");
        assert_eq!(serde_json::from_str::<Fingerprint>(&s).unwrap(), fp);
        assert!(serde_json::from_str::<Fingerprint>(r#"{"hash":"xyz","len":1}"#).is_err());
    }
}
