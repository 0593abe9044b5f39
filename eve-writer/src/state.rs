//! Delivery state that outlives the writer process: for each producer incarnation
//! `(producer, epoch)`, the highest batch seq whose every byte has been delivered.
//!
//! Producers keep unacknowledged batches and send them again after a reconnect. A
//! writer that was killed and started again would, without this page, write again
//! every batch that the old writer had written but whose acknowledgement the producer
//! had not yet seen. With the page, the new writer drops those as duplicates (and
//! counts them); what can still be written twice after a crash is at most the one
//! batch per producer that was partly written when the old writer died.
//!
//! The page is a file in the runtime directory (`eve-writer.state`, shared memory on
//! tmpfs), mapped and updated with single atomic stores, so it is current the instant
//! the process dies, whatever kills it.
//!
//! # Layout (native byte order)
//!
//! ```text
//! 0   magic "MKEVST01" u64, slots u32, reserved u32
//! 64  slot[0..slots]: producer name (48 bytes, NUL padded), epoch u64, done seq u64
//! ```

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapMut, MmapOptions};

const MAGIC: u64 = u64::from_le_bytes(*b"MKEVST01");
const HEADER: usize = 64;
const SLOT: usize = 64;
const NAME: usize = 48;
/// Producer incarnations remembered; the oldest epoch is forgotten first.
pub const SLOTS: usize = 1024;

/// Errors of the state page.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("delivery state {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

#[derive(Debug)]
pub struct StatePage {
    map: MmapMut,
}

impl StatePage {
    /// Opens the page at `path`, creating it (empty) if it is missing or not a page.
    pub fn open(path: &Path) -> Result<StatePage, StateError> {
        let io = |source| StateError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(io)?;
        let len = HEADER + SLOT * SLOTS;
        let fresh = file.metadata().map_err(io)?.len() != len as u64;
        if fresh {
            file.set_len(0).map_err(io)?;
            file.set_len(len as u64).map_err(io)?;
        }
        // SAFETY: a file of `len` bytes that only the eve-writer maps; its contents are
        // checked (magic) before they are trusted, and every slot field is plain data.
        let mut map = unsafe { MmapOptions::new().len(len).map_mut(&file) }.map_err(io)?;
        let magic = u64::from_ne_bytes(map[0..8].try_into().unwrap_or([0; 8]));
        if fresh || magic != MAGIC {
            map.fill(0);
            map[8..12].copy_from_slice(&(SLOTS as u32).to_ne_bytes());
            map[0..8].copy_from_slice(&MAGIC.to_ne_bytes());
        }
        Ok(StatePage { map })
    }

    fn name_of(&self, slot: usize) -> &[u8] {
        let off = HEADER + slot * SLOT;
        let raw = &self.map[off..off + NAME];
        let end = raw.iter().position(|&b| b == 0).unwrap_or(NAME);
        &raw[..end]
    }

    fn atomic(&self, slot: usize, field: usize) -> &AtomicU64 {
        let off = HEADER + slot * SLOT + NAME + 8 * field;
        // SAFETY: `off` is 8-aligned inside the page-aligned mapping (HEADER, SLOT and
        // NAME are multiples of 8) and the mapping lives as long as `self`.
        unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU64) }
    }

    /// Every remembered `(producer, epoch, done seq)`.
    pub fn entries(&self) -> Vec<(String, u64, u64)> {
        (0..SLOTS)
            .filter(|&i| !self.name_of(i).is_empty())
            .map(|i| {
                (
                    String::from_utf8_lossy(self.name_of(i)).into_owned(),
                    self.atomic(i, 0).load(Ordering::Acquire),
                    self.atomic(i, 1).load(Ordering::Acquire),
                )
            })
            .collect()
    }

    /// The slot of `(producer, epoch)`, taken (the free or oldest one) if new.
    pub fn slot(&mut self, producer: &str, epoch: u64) -> usize {
        let name = &producer.as_bytes()[..producer.len().min(NAME)];
        let mut free = None;
        let mut oldest = (u64::MAX, 0);
        for i in 0..SLOTS {
            let n = self.name_of(i);
            if n.is_empty() {
                free.get_or_insert(i);
                continue;
            }
            let e = self.atomic(i, 0).load(Ordering::Relaxed);
            if n == name && e == epoch {
                return i;
            }
            if e < oldest.0 {
                oldest = (e, i);
            }
        }
        let i = free.unwrap_or(oldest.1);
        // Invalidate, then fill: a crash in between leaves a slot with seq 0.
        self.atomic(i, 1).store(0, Ordering::Release);
        self.atomic(i, 0).store(epoch, Ordering::Release);
        let off = HEADER + i * SLOT;
        self.map[off..off + NAME].fill(0);
        self.map[off..off + name.len()].copy_from_slice(name);
        i
    }

    /// Records that every batch up to `seq` of the slot's producer is delivered.
    pub fn set_done(&self, slot: usize, seq: u64) {
        if slot < SLOTS {
            self.atomic(slot, 1).fetch_max(seq, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn survives_reopen_and_recycles_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("eve-writer.state");
        let mut s = StatePage::open(&p).unwrap();
        let a = s.slot("detect-0", 100);
        s.set_done(a, 7);
        s.set_done(a, 5); // never goes back
        let b = s.slot("detect-1", 200);
        s.set_done(b, 3);
        assert_eq!(s.slot("detect-0", 100), a);
        drop(s);
        let mut s = StatePage::open(&p).unwrap();
        let mut e = s.entries();
        e.sort();
        assert_eq!(
            e,
            vec![
                ("detect-0".to_string(), 100, 7),
                ("detect-1".to_string(), 200, 3)
            ]
        );
        for i in 0..SLOTS as u64 {
            s.slot("x", 1000 + i);
        }
        // The page is full of newer epochs: the oldest (detect-0, 100) went first.
        assert!(!s.entries().iter().any(|(n, _, _)| n == "detect-0"));
    }

    #[test]
    fn replaces_junk() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("junk");
        std::fs::write(&p, vec![7u8; HEADER + SLOT * SLOTS]).unwrap();
        let s = StatePage::open(&p).unwrap();
        assert!(s.entries().is_empty());
    }
}
