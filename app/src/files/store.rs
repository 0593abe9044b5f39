//! The file store (Suricata's `file-store` version 2): a stored file is written to a
//! temporary file under `<dir>/tmp/` as its bytes arrive, and once it is complete moved
//! to `<dir>/<first two hex digits of its sha256>/<sha256>`, so that each distinct file
//! exists once on disk whatever the number of times it was seen. A file that ends
//! truncated, with a gap or in error has no digest to be named by: its temporary file is
//! removed.
//!
//! Only files a `filestore` rule (or `force-filestore`) asked for are written; until a
//! rule can have decided, a file keeps its bytes in memory ([`super::MAX_STORE_PENDING`]).
//!
//! The disk is never touched on the packet path: the worker hands pieces of at least
//! [`FLUSH_BYTES`] (or a file's last bytes) to the store's own thread over a bounded
//! queue ([`MAX_QUEUED`] pieces) and goes on; that thread creates, appends, renames and
//! removes. A worker is never held up by a slow or full disk: when the queue is full
//! the file is given up (counted as dropped), and I/O errors are counted and logged
//! once. With `max-open-files` at 0 (Suricata's default) a temporary file is opened for
//! each write and closed after it; otherwise up to that many stay open. A file is
//! `stored` (with its `file_id`) once its last piece and its move are queued: the
//! queue is in order, so the file is on disk once the thread got there.

use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use super::{File, FileState, hex};

/// Bytes of a stored file gathered before they are handed to the store's thread.
pub const FLUSH_BYTES: usize = 64 * 1024;
/// Pieces waiting for the store's thread at most (64 KiB each: 16 MiB).
pub const MAX_QUEUED: usize = 256;

/// Counters of a file store (Suricata's `file_store.*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Files stored (handed over complete, to be moved to their name).
    pub stored: u64,
    /// I/O errors of the store's thread: `file_store.fs_errors`.
    pub fs_errors: u64,
    /// Files asked for that could not be stored: ended truncated or with gaps.
    pub not_stored: u64,
    /// Files given up because the store's queue was full (the disk is slower than the
    /// traffic).
    pub dropped: u64,
    /// Temporary files open now: `file_store.open_files`.
    pub open_files: u64,
}

/// What the worker and the store's thread share.
#[derive(Debug, Default)]
struct Shared {
    fs_errors: AtomicU64,
    open_files: AtomicU64,
    /// An error was logged (the first only: a full disk fails every write).
    logged: AtomicBool,
}

/// Work for the store's thread.
#[derive(Debug)]
enum Job {
    /// Bytes of temporary file `id` (made by the first).
    Append(u64, Vec<u8>),
    /// Temporary file `id` is complete: move it to this name (or drop it when a file of
    /// that name, the same content, is there).
    Finish(u64, PathBuf),
    /// Temporary file `id` is not wanted.
    Discard(u64),
}

/// A worker's file store.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    /// Names temporary files apart from other workers'.
    worker: u32,
    workers: u32,
    next_tmp: u64,
    /// Stored files so far (ids are `n * workers + worker + 1`, unique across workers).
    next_id: u64,
    tx: Option<SyncSender<Job>>,
    thread: Option<std::thread::JoinHandle<()>>,
    shared: Arc<Shared>,
    stats: StoreStats,
}

/// The store's handle of one file being written: its temporary file's id (removed when
/// the handle is dropped before the file was finished).
#[derive(Debug)]
pub struct Writer {
    id: u64,
    tx: SyncSender<Job>,
    done: bool,
}

impl Writer {
    /// Drops the handle and the temporary file.
    pub fn discard(self) {}
}

impl Drop for Writer {
    fn drop(&mut self) {
        if !self.done {
            // A full queue leaves the temporary file to the thread's end, which removes
            // every file not finished.
            let _ = self.tx.try_send(Job::Discard(self.id));
        }
    }
}

impl Store {
    /// The store at `dir` (made, with its 256 subdirectories and `tmp`, if missing) for
    /// worker `worker` of `workers`, with its thread; `max_open` temporary files stay
    /// open between writes (0: none).
    pub fn open(dir: &Path, worker: u32, workers: u32, max_open: u32) -> std::io::Result<Store> {
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp)?;
        for i in 0..=255u8 {
            std::fs::create_dir_all(dir.join(hex(&[i])))?;
        }
        let shared = Arc::new(Shared::default());
        let (tx, rx) = std::sync::mpsc::sync_channel(MAX_QUEUED);
        let t = Thread {
            tmp,
            worker,
            max_open: max_open as usize,
            files: HashMap::new(),
            shared: Arc::clone(&shared),
        };
        let thread = std::thread::Builder::new()
            .name(format!("file-store-{worker}"))
            .spawn(move || t.run(rx))?;
        Ok(Store {
            dir: dir.to_path_buf(),
            worker,
            workers: workers.max(1),
            next_tmp: 0,
            next_id: 0,
            tx: Some(tx),
            thread: Some(thread),
            shared,
            stats: StoreStats::default(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The counters now.
    pub fn stats(&self) -> StoreStats {
        StoreStats {
            fs_errors: self.shared.fs_errors.load(Ordering::Relaxed),
            open_files: self.shared.open_files.load(Ordering::Relaxed),
            ..self.stats
        }
    }

    /// Hands what `f` kept to the store's thread when there is enough of it (or it
    /// ended), and finishes a file that ended: a complete one is marked stored (with
    /// its `file_id`) and moved to its name, any other removed. Does nothing for a file
    /// no rule asked for.
    pub fn write(&mut self, f: &mut File) {
        if !f.store || !f.keep {
            return;
        }
        let Some(tx) = self.tx.as_ref() else { return };
        let ended = !f.is_open();
        if f.pending.len() >= FLUSH_BYTES || (ended && !f.pending.is_empty()) {
            let data = f.take_pending(FLUSH_BYTES);
            let w = f.writer.get_or_insert_with(|| {
                self.next_tmp += 1;
                Writer {
                    id: self.next_tmp,
                    tx: tx.clone(),
                    done: false,
                }
            });
            if let Err(e) = tx.try_send(Job::Append(w.id, data)) {
                // Full (or the thread is gone): give the file up rather than wait.
                if matches!(e, TrySendError::Full(_)) {
                    self.stats.dropped += 1;
                }
                f.no_store();
                return;
            }
        }
        if !ended {
            return;
        }
        let complete = f.state == FileState::Closed && !f.gaps;
        match (complete, f.sha256) {
            (true, Some(digest)) => {
                // An empty file still gets its (empty) temporary file.
                let w = f.writer.get_or_insert_with(|| {
                    self.next_tmp += 1;
                    Writer {
                        id: self.next_tmp,
                        tx: tx.clone(),
                        done: false,
                    }
                });
                let name = hex(&digest);
                let target = self.dir.join(&name[..2]).join(&name);
                match tx.try_send(Job::Finish(w.id, target)) {
                    Ok(()) => {
                        w.done = true;
                        f.stored = true;
                        f.file_id = Some(
                            self.next_id * u64::from(self.workers) + u64::from(self.worker) + 1,
                        );
                        self.next_id += 1;
                        self.stats.stored += 1;
                    }
                    Err(_) => self.stats.dropped += 1,
                }
            }
            _ => self.stats.not_stored += 1,
        }
        f.writer = None;
        f.keep = false;
        f.drop_pending();
    }

    /// Waits until the store's thread has done all it was given (end of the run).
    pub fn finish(&mut self) {
        self.tx = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Store {
    fn drop(&mut self) {
        self.finish();
    }
}

/// The store's thread: the temporary files being written.
#[derive(Debug)]
struct Thread {
    tmp: PathBuf,
    worker: u32,
    max_open: usize,
    /// By temporary id: its path and, while kept open, the file.
    files: HashMap<u64, (PathBuf, Option<std::fs::File>)>,
    shared: Arc<Shared>,
}

impl Thread {
    fn run(mut self, rx: Receiver<Job>) {
        while let Ok(job) = rx.recv() {
            match job {
                Job::Append(id, data) => {
                    if let Err(e) = self.append(id, &data) {
                        self.error("write", &e);
                        self.remove(id);
                    }
                }
                Job::Finish(id, target) => {
                    if let Err(e) = self.finish(id, &target) {
                        self.error("move", &e);
                    }
                }
                Job::Discard(id) => self.remove(id),
            }
        }
        // The worker is gone: what was not finished is not wanted.
        let ids: Vec<u64> = self.files.keys().copied().collect();
        for id in ids {
            self.remove(id);
        }
    }

    fn append(&mut self, id: u64, data: &[u8]) -> std::io::Result<()> {
        if !self.files.contains_key(&id) {
            let path = self.tmp.join(format!("file.{}.{id}", self.worker));
            let f = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)?;
            let keep = self.shared.open_files.load(Ordering::Relaxed) < self.max_open as u64;
            if keep {
                self.shared.open_files.fetch_add(1, Ordering::Relaxed);
            }
            self.files.insert(id, (path, keep.then_some(f)));
        }
        let Some((path, file)) = self.files.get_mut(&id) else {
            return Ok(());
        };
        match file {
            Some(f) => f.write_all(data),
            None => OpenOptions::new().append(true).open(path)?.write_all(data),
        }
    }

    fn finish(&mut self, id: u64, target: &Path) -> std::io::Result<()> {
        if !self.files.contains_key(&id) {
            // An empty file: nothing was appended.
            self.append(id, &[])?;
        }
        let Some((path, file)) = self.files.remove(&id) else {
            return Ok(());
        };
        if file.is_some() {
            self.shared.open_files.fetch_sub(1, Ordering::Relaxed);
        }
        drop(file);
        // The same content stored before: it is there already.
        let r = if target.exists() {
            std::fs::remove_file(&path)
        } else {
            std::fs::rename(&path, target)
        };
        if r.is_err() {
            let _ = std::fs::remove_file(&path);
        }
        r
    }

    fn remove(&mut self, id: u64) {
        if let Some((path, file)) = self.files.remove(&id) {
            if file.is_some() {
                self.shared.open_files.fetch_sub(1, Ordering::Relaxed);
            }
            drop(file);
            let _ = std::fs::remove_file(path);
        }
    }

    /// Counts an I/O error; the first is logged (a full disk fails every write).
    fn error(&self, what: &str, e: &std::io::Error) {
        self.shared.fs_errors.fetch_add(1, Ordering::Relaxed);
        if !self.shared.logged.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                "file store: cannot {what} under {}: {e} (counted in file_store.fs_errors; \
                 further errors are not logged)",
                self.tmp.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::FileConfig;
    use super::*;

    fn cfg() -> FileConfig {
        FileConfig {
            track: true,
            sha256: true,
            store_possible: true,
            ..FileConfig::default()
        }
    }

    fn sha256_name(data: &[u8]) -> String {
        use sha2::{Digest, Sha256};
        hex(&Sha256::digest(data))
    }

    fn stored_count(dir: &Path) -> usize {
        (0..=255u8)
            .map(|i| std::fs::read_dir(dir.join(hex(&[i]))).unwrap().count())
            .sum()
    }

    #[test]
    fn a_complete_file_is_stored_by_its_sha256_once() {
        for max_open in [0, 4] {
            let dir = tempfile::tempdir().unwrap();
            let mut s = Store::open(dir.path(), 0, 1, max_open).unwrap();
            let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
            let mut ids = Vec::new();
            for _ in 0..2 {
                let mut f = File::open(b"/a", &cfg());
                for chunk in data.chunks(1460) {
                    f.append(chunk);
                    s.write(&mut f);
                }
                // Asked for once bytes were already kept: they were, and are written.
                f.request_store(7);
                s.write(&mut f);
                f.close();
                s.write(&mut f);
                assert!(f.stored, "max_open {max_open}");
                ids.push(f.file_id.unwrap());
            }
            assert_eq!(ids, [1, 2]);
            s.finish();
            let name = sha256_name(&data);
            let path = dir.path().join(&name[..2]).join(&name);
            assert_eq!(std::fs::read(&path).unwrap(), data);
            assert_eq!(stored_count(dir.path()), 1, "one copy of one content");
            assert_eq!(
                std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
                0
            );
            let st = s.stats();
            assert_eq!((st.stored, st.fs_errors, st.open_files), (2, 0, 0));
        }
    }

    #[test]
    fn truncated_gapped_and_unwanted_files_leave_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(dir.path(), 1, 2, 8).unwrap();
        // Truncated after a first write.
        let mut t = File::open(b"/t", &cfg());
        t.request_store(1);
        t.append(&vec![1u8; FLUSH_BYTES + 1]);
        s.write(&mut t);
        t.truncate();
        s.write(&mut t);
        assert!(!t.stored);
        // A gap.
        let mut g = File::open(b"/g", &cfg());
        g.request_store(1);
        g.append(b"abc");
        g.gap(10);
        g.close();
        s.write(&mut g);
        assert!(!g.stored && g.pending().is_empty());
        // Never asked for: nothing written; dropping it mid-write removes its temp file.
        let mut n = File::open(b"/n", &cfg());
        n.append(b"abc");
        n.close();
        s.write(&mut n);
        assert!(!n.stored);
        let mut d = File::open(b"/d", &cfg());
        d.request_store(2);
        d.append(&vec![2u8; FLUSH_BYTES]);
        s.write(&mut d);
        drop(d);
        s.finish();
        assert_eq!(
            std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
            0
        );
        assert_eq!(stored_count(dir.path()), 0);
        let st = s.stats();
        assert_eq!((st.not_stored, st.open_files), (1, 0), "the truncated file");
    }

    #[test]
    fn an_empty_file_is_stored_and_ids_are_unique_per_worker() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(dir.path(), 1, 2, 0).unwrap();
        let mut f = File::open(b"/e", &cfg());
        f.request_store(3);
        f.close();
        s.write(&mut f);
        assert!(f.stored);
        assert_eq!(f.file_id, Some(2), "worker 1 of 2: ids 2, 4, ...");
        s.finish();
        let name = sha256_name(b"");
        assert_eq!(
            std::fs::read(dir.path().join(&name[..2]).join(&name)).unwrap(),
            b""
        );
    }

    /// A disk that fails (here: the store's directory removed under it) is counted,
    /// never a stall or a panic of the worker.
    #[test]
    fn io_errors_are_counted() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Store::open(dir.path(), 0, 1, 0).unwrap();
        std::fs::remove_dir_all(dir.path().join("tmp")).unwrap();
        for _ in 0..3 {
            let mut f = File::open(b"/x", &cfg());
            f.request_store(1);
            f.append(&vec![7u8; FLUSH_BYTES + 10]);
            s.write(&mut f);
            f.close();
            s.write(&mut f);
        }
        s.finish();
        assert!(s.stats().fs_errors >= 3, "{:?}", s.stats());
    }

    #[test]
    fn undecided_bytes_are_bounded() {
        let mut f = File::open(b"/big", &cfg());
        f.append(&vec![0u8; super::super::MAX_STORE_PENDING]);
        assert!(f.keeps_bytes());
        f.append(b"x");
        assert!(!f.keeps_bytes() && f.pending().is_empty());
    }
}
