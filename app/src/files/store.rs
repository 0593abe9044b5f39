//! The file store (Suricata's `file-store` version 2): a stored file is written to a
//! temporary file under `<dir>/tmp/` as its bytes arrive, and once it is complete moved
//! to `<dir>/<first two hex digits of its sha256>/<sha256>`, so that each distinct file
//! exists once on disk whatever the number of times it was seen. A file that ends
//! truncated, with a gap or in error has no digest to be named by: its temporary file is
//! removed.
//!
//! Only files a `filestore` rule (or `force-filestore`) asked for are written; until a
//! rule can have decided, a file keeps its bytes in memory ([`super::MAX_STORE_PENDING`]).
//! Bytes are written in pieces of at least [`FLUSH_BYTES`] (or at the file's end), so a
//! stored file costs a write per [`FLUSH_BYTES`], not per packet; with `max-open-files`
//! at 0 (Suricata's default) the temporary file is opened for each write and closed
//! after it, otherwise up to that many stay open.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{File, FileState, hex};

/// Bytes of a stored file gathered before they are written.
pub const FLUSH_BYTES: usize = 64 * 1024;

/// Counters of a file store (Suricata's `file_store.*`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StoreStats {
    /// Files written and moved to their name.
    pub stored: u64,
    /// Files whose store failed (I/O errors): `file_store.fs_errors`.
    pub fs_errors: u64,
    /// Files asked for that could not be stored: ended truncated or with gaps, or their
    /// bytes were not kept.
    pub not_stored: u64,
}

/// A worker's file store.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    tmp: PathBuf,
    /// Names temporary files apart from other workers'.
    worker: u32,
    workers: u32,
    next_tmp: u64,
    /// Stored files so far (ids are `n * workers + worker + 1`, unique across workers).
    next_id: u64,
    max_open: usize,
    open: Arc<AtomicUsize>,
    pub stats: StoreStats,
}

/// The store's handle of one file being written: its temporary file (removed when
/// dropped before the file was finished).
#[derive(Debug)]
pub struct Writer {
    path: PathBuf,
    file: Option<std::fs::File>,
    open: Arc<AtomicUsize>,
    done: bool,
}

impl Writer {
    /// Drops the handle and the temporary file.
    pub fn discard(self) {}

    fn close(&mut self) {
        if self.file.take().is_some() {
            self.open.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.close();
        if !self.done {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

impl Store {
    /// The store at `dir` (made, with its 256 subdirectories and `tmp`, if missing) for
    /// worker `worker` of `workers`; `max_open` temporary files stay open between
    /// writes (0: none).
    pub fn open(dir: &Path, worker: u32, workers: u32, max_open: u32) -> std::io::Result<Store> {
        let tmp = dir.join("tmp");
        std::fs::create_dir_all(&tmp)?;
        for i in 0..=255u8 {
            std::fs::create_dir_all(dir.join(hex(&[i])))?;
        }
        Ok(Store {
            dir: dir.to_path_buf(),
            tmp,
            worker,
            workers: workers.max(1),
            next_tmp: 0,
            next_id: 0,
            max_open: max_open as usize,
            open: Arc::new(AtomicUsize::new(0)),
            stats: StoreStats::default(),
        })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Temporary files open now.
    pub fn open_files(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }

    /// Writes what `f` kept when there is enough of it (or it ended), and finishes a
    /// file that ended: a complete one is moved to its name and marked stored (with its
    /// `file_id`), any other removed. Does nothing for a file no rule asked for.
    pub fn write(&mut self, f: &mut File) {
        if !f.store || !f.keep {
            return;
        }
        let ended = !f.is_open();
        if (f.pending.len() >= FLUSH_BYTES || ended)
            && (!f.pending.is_empty() || f.writer.is_none())
            && let Err(e) = self.flush(f)
        {
            self.stats.fs_errors += 1;
            tracing::warn!("file store: cannot write {}: {e}", self.tmp.display());
            f.no_store();
            return;
        }
        if !ended {
            return;
        }
        let complete = f.state == FileState::Closed && !f.gaps;
        match (complete, f.sha256, f.writer.take()) {
            (true, Some(digest), Some(mut w)) => {
                w.close();
                let name = hex(&digest);
                let target = self.dir.join(&name[..2]).join(&name);
                // The same content stored before: it is there already.
                let moved = if target.exists() {
                    std::fs::remove_file(&w.path)
                } else {
                    std::fs::rename(&w.path, &target)
                };
                w.done = true;
                match moved {
                    Ok(()) => {
                        f.stored = true;
                        f.file_id = Some(
                            self.next_id * u64::from(self.workers) + u64::from(self.worker) + 1,
                        );
                        self.next_id += 1;
                        self.stats.stored += 1;
                    }
                    Err(e) => {
                        self.stats.fs_errors += 1;
                        tracing::warn!("file store: cannot move {}: {e}", w.path.display());
                        let _ = std::fs::remove_file(&w.path);
                    }
                }
            }
            _ => self.stats.not_stored += 1,
        }
        f.keep = false;
        f.pending = Vec::new();
    }

    /// Appends the kept bytes to the file's temporary file (made on first use).
    fn flush(&mut self, f: &mut File) -> std::io::Result<()> {
        if f.writer.is_none() {
            let path = self
                .tmp
                .join(format!("file.{}.{}", self.worker, self.next_tmp));
            self.next_tmp += 1;
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&path)?;
            let mut w = Writer {
                path,
                file: None,
                open: Arc::clone(&self.open),
                done: false,
            };
            if self.open.load(Ordering::Relaxed) < self.max_open {
                self.open.fetch_add(1, Ordering::Relaxed);
                w.file = Some(file);
            }
            f.writer = Some(w);
        }
        let Some(w) = f.writer.as_mut() else {
            return Ok(());
        };
        if !f.pending.is_empty() {
            match &mut w.file {
                Some(file) => file.write_all(&f.pending)?,
                None => OpenOptions::new()
                    .append(true)
                    .open(&w.path)?
                    .write_all(&f.pending)?,
            }
        }
        // What a file kept while undecided can be large; keep a writing-sized buffer.
        if f.pending.capacity() > 4 * FLUSH_BYTES {
            f.pending = Vec::with_capacity(FLUSH_BYTES);
        } else {
            f.pending.clear();
        }
        Ok(())
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
            let name = sha256_name(&data);
            let path = dir.path().join(&name[..2]).join(&name);
            assert_eq!(std::fs::read(&path).unwrap(), data);
            assert_eq!(
                std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
                0
            );
            assert_eq!(s.stats.stored, 2);
            assert_eq!(s.open_files(), 0);
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
        assert_eq!(s.open_files(), 1);
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
        assert_eq!(
            std::fs::read_dir(dir.path().join("tmp")).unwrap().count(),
            0
        );
        let stored: usize = (0..=255u8)
            .map(|i| {
                std::fs::read_dir(dir.path().join(hex(&[i])))
                    .unwrap()
                    .count()
            })
            .sum();
        assert_eq!(stored, 0);
        assert_eq!(s.stats.not_stored, 1, "the truncated file");
        assert_eq!(s.open_files(), 0);
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
        let name = sha256_name(b"");
        assert_eq!(
            std::fs::read(dir.path().join(&name[..2]).join(&name)).unwrap(),
            b""
        );
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
