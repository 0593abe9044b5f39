//! File identity: what a file *is*, independently of the name it has right now.
//!
//! Two strategies, as in Elastic Filebeat's scanner:
//! - [`Identity::Native`]: the device and inode numbers. Free to compute (one `stat`), but an
//!   inode number is reused once its file is deleted, and it changes when a file is copied
//!   to another filesystem.
//! - [`Identity::Fingerprint`]: a hash of the bytes in `[offset, offset + length)`. It
//!   survives copies between filesystems and is not fooled by inode reuse, but it costs an
//!   `open` + `fstat` + `pread` + `close` per file the first time the file is seen
//!   (against one `stat` for native); [`WindowReader::read_all`] shares many such reads
//!   out between threads, so that a first scan of a large directory uses every CPU. The default window (the
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
use std::os::unix::fs::{FileExt, MetadataExt};

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

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
/// several threads.
#[derive(Debug)]
pub struct WindowReader {
    pub window: Window,
    buf: Vec<u8>,
    /// Open with O_NOATIME (reading a fingerprint should not change a file's atime);
    /// cleared when the kernel refuses it (files of another owner).
    noatime: AtomicBool,
    /// Threads [`WindowReader::read_all`] uses (1: the caller's only).
    threads: usize,
}

/// A file to read with [`WindowReader::read_all`]: its directory (open) and its name in
/// it, or its path when there is no directory.
pub type Job<'a> = (Option<&'a File>, &'a Path);

/// What [`WindowReader::read_all`] gives for one file: the open file's stat and the
/// window's fingerprint.
pub type JobResult = io::Result<(Stat, Fingerprint)>;

/// Files each thread takes at a time in [`WindowReader::read_all`].
const CHUNK: usize = 16;
/// Fewer files than this are read on the calling thread only (a thread costs tens of
/// microseconds to start; a window read costs a few).
const PARALLEL_MIN: usize = 128;
/// Most threads [`WindowReader::read_all`] uses whatever the machine has: reading a
/// window is a few system calls, and the kernel's own locks (the directory's dentries)
/// stop paying back beyond a few.
pub const MAX_READ_THREADS: usize = 4;

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

    /// Opens, stats and reads the window of one file into `buf`.
    fn read_job(&self, (dir, name): Job<'_>, buf: &mut Vec<u8>) -> JobResult {
        let file = self.open(dir, name)?;
        let stat = Stat::from_metadata(&file.metadata()?);
        let r = self.window.read(&file, buf, &[])?;
        Ok((stat, r.fingerprint))
    }

    /// Reads the windows of `jobs`, results in the same order. Many files are shared out
    /// between threads (each opens, stats, reads and hashes its files: the work is all
    /// in system calls on separate files, which run in parallel); a few are read on the
    /// calling thread.
    pub fn read_all(&mut self, jobs: &[Job<'_>]) -> Vec<JobResult> {
        let threads = self.threads.min(jobs.len() / (PARALLEL_MIN / 2)).max(1);
        if threads == 1 || jobs.len() < PARALLEL_MIN {
            let mut buf = std::mem::take(&mut self.buf);
            let out = jobs.iter().map(|&j| self.read_job(j, &mut buf)).collect();
            self.buf = buf;
            return out;
        }
        let next = AtomicUsize::new(0);
        let this = &*self;
        let work = |buf: &mut Vec<u8>| {
            let mut done = Vec::with_capacity(jobs.len() / threads + CHUNK);
            loop {
                let start = next.fetch_add(CHUNK, Ordering::Relaxed);
                if start >= jobs.len() {
                    return done;
                }
                for (i, &job) in jobs.iter().enumerate().skip(start).take(CHUNK) {
                    done.push((i, this.read_job(job, buf)));
                }
            }
        };
        let mut buf = Vec::new();
        let mut parts = std::thread::scope(|s| {
            // A thread the OS refuses (a thread limit) leaves its share to the others.
            let helpers: Vec<_> = (1..threads)
                .filter_map(|_| {
                    std::thread::Builder::new()
                        .name("scan-read".to_string())
                        .spawn_scoped(s, || work(&mut Vec::new()))
                        .ok()
                })
                .collect();
            let mut parts = vec![work(&mut buf)];
            parts.extend(helpers.into_iter().filter_map(|h| h.join().ok()));
            parts
        });
        self.buf = buf;
        let mut out: Vec<Option<JobResult>> = Vec::new();
        out.resize_with(jobs.len(), || None);
        for (i, r) in parts.iter_mut().flat_map(|p| p.drain(..)) {
            out[i] = Some(r);
        }
        out.into_iter()
            .map(|r| r.unwrap_or_else(|| Err(io::Error::other("window reader thread died"))))
            .collect()
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
    use std::path::PathBuf;

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

    #[test]
    fn read_all_on_threads_gives_each_file_its_own_result_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let n = 3 * PARALLEL_MIN;
        let mut paths = Vec::new();
        for i in 0..n {
            let p = dir.path().join(format!("f{i}"));
            // Every file different, some shorter than the window.
            let len = if i % 7 == 0 { 100 + i } else { 5000 + i };
            std::fs::write(&p, vec![(i % 251) as u8; len]).unwrap();
            paths.push(p);
        }
        paths[5] = dir.path().join("missing");
        let d = File::open(dir.path()).unwrap();
        let names: Vec<PathBuf> = paths
            .iter()
            .map(|p| p.file_name().unwrap().into())
            .collect();
        let jobs: Vec<Job<'_>> = names.iter().map(|n| (Some(&d), n.as_path())).collect();
        let mut seq = WindowReader::new(Window::default(), 1);
        let mut par = WindowReader::new(Window::default(), 3);
        let one = seq.read_all(&jobs);
        let many = par.read_all(&jobs);
        assert_eq!(one.len(), n);
        assert_eq!(many.len(), n);
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
        // By path, without a directory.
        let jobs: Vec<Job<'_>> = paths.iter().map(|p| (None, p.as_path())).collect();
        let by_path = par.read_all(&jobs);
        assert_eq!(by_path[9].as_ref().unwrap().1, one[9].as_ref().unwrap().1);
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
