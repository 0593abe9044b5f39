//! Delivery state that outlives the writer process: for each producer incarnation
//! `(producer, epoch)`, the highest batch seq whose every byte has been delivered; and
//! for each producer name, its *resume mark* (the highest ring mark of a batch whose
//! bytes are delivered) and its *fence* (the newest epoch that asked where to resume).
//!
//! Producers keep unacknowledged batches and send them again after a reconnect. A
//! writer that was killed and started again would, without this page, write again
//! every batch that the old writer had written but whose acknowledgement the producer
//! had not yet seen. With the page, the new writer drops those as duplicates (and
//! counts them); what can still be written twice after a crash is at most the one
//! batch per producer that was partly written when the old writer died.
//!
//! The resume marks cover the case where the producer dies too: its replacement (a new
//! epoch, whose seqs start again at 1) asks the writer where to resume its ring, and
//! must not be told 0 by a writer that restarted and forgot what the old one wrote, or
//! it would produce again, and the writer write again, the events of every ring record
//! the dead pair had already written. A mark is recorded when its batch's bytes are
//! handed to the OS (the acknowledgement point), not when the batch is taken: a batch
//! taken but not yet written when the writer died is not covered, so its records are
//! produced again rather than lost. Marks are positions in the producer's ring, valid
//! while that ring lives: the page lives beside the rings, in the runtime directory.
//!
//! The page is a file in the runtime directory (`eve-writer.state`, shared memory on
//! tmpfs), mapped and updated with single atomic stores, so it is current the instant
//! the process dies, whatever kills it.
//!
//! # Layout (native byte order)
//!
//! ```text
//! 0                 magic "MKEVST02" u64, slots u32, mark slots u32
//! 64                slot[0..slots]: producer name (48 bytes, NUL padded), epoch u64,
//!                   done seq u64
//! 64 + 64 * slots   mark[0..mark slots]: producer name (48 bytes, NUL padded), fence
//!                   epoch u64, resume mark u64
//! ```
//!
//! A page of another layout (an older build's) is replaced by an empty one.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapMut, MmapOptions};

const MAGIC: u64 = u64::from_le_bytes(*b"MKEVST02");
const HEADER: usize = 64;
const SLOT: usize = 64;
/// Longest producer name the page holds, bytes.
pub const NAME: usize = 48;
/// Producer incarnations remembered; the oldest epoch is forgotten first.
pub const SLOTS: usize = 1024;
/// Producer names whose resume marks are remembered; the one fenced longest ago is
/// forgotten first.
pub const MARK_SLOTS: usize = 256;
/// Offset of the mark table.
const MARKS: usize = HEADER + SLOT * SLOTS;
/// Length of the page.
const LEN: usize = MARKS + SLOT * MARK_SLOTS;

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
        let len = LEN;
        let fresh = file.metadata().map_err(io)?.len() != len as u64;
        if fresh {
            file.set_len(0).map_err(io)?;
            file.set_len(len as u64).map_err(io)?;
            crate::reserve(&file, len).map_err(io)?;
        }
        // SAFETY: a file of `len` bytes that only the eve-writer maps; its contents are
        // checked (magic) before they are trusted, and every slot field is plain data.
        let mut map = unsafe { MmapOptions::new().len(len).map_mut(&file) }.map_err(io)?;
        let magic = u64::from_ne_bytes(map[0..8].try_into().unwrap_or([0; 8]));
        if fresh || magic != MAGIC {
            map.fill(0);
            map[8..12].copy_from_slice(&(SLOTS as u32).to_ne_bytes());
            map[12..16].copy_from_slice(&(MARK_SLOTS as u32).to_ne_bytes());
            map[0..8].copy_from_slice(&MAGIC.to_ne_bytes());
        }
        Ok(StatePage { map })
    }

    fn name_of(&self, slot: usize) -> &[u8] {
        self.name_at(HEADER + slot * SLOT)
    }

    fn name_at(&self, off: usize) -> &[u8] {
        let raw = &self.map[off..off + NAME];
        let end = raw.iter().position(|&b| b == 0).unwrap_or(NAME);
        &raw[..end]
    }

    fn atomic(&self, slot: usize, field: usize) -> &AtomicU64 {
        self.atomic_at(HEADER + slot * SLOT + NAME + 8 * field)
    }

    fn mark_atomic(&self, slot: usize, field: usize) -> &AtomicU64 {
        self.atomic_at(MARKS + slot * SLOT + NAME + 8 * field)
    }

    fn atomic_at(&self, off: usize) -> &AtomicU64 {
        // SAFETY: `off` is 8-aligned inside the page-aligned mapping (HEADER, SLOT, MARKS
        // and NAME are multiples of 8; callers pass a slot below SLOTS or MARK_SLOTS and
        // a field 0 or 1) and the mapping lives as long as `self`.
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

    /// Every remembered `(producer, fence epoch, resume mark)`.
    pub fn marks(&self) -> Vec<(String, u64, u64)> {
        (0..MARK_SLOTS)
            .filter(|&i| !self.name_at(MARKS + i * SLOT).is_empty())
            .map(|i| {
                (
                    String::from_utf8_lossy(self.name_at(MARKS + i * SLOT)).into_owned(),
                    self.mark_atomic(i, 0).load(Ordering::Acquire),
                    self.mark_atomic(i, 1).load(Ordering::Acquire),
                )
            })
            .collect()
    }

    /// The mark slot of `producer`, taken (the free one, or the one fenced longest ago)
    /// if new.
    pub fn mark_slot(&mut self, producer: &str) -> usize {
        let name = &producer.as_bytes()[..producer.len().min(NAME)];
        let mut free = None;
        let mut oldest = (u64::MAX, 0);
        for i in 0..MARK_SLOTS {
            let n = self.name_at(MARKS + i * SLOT);
            if n.is_empty() {
                free.get_or_insert(i);
                continue;
            }
            if n == name {
                return i;
            }
            let fence = self.mark_atomic(i, 0).load(Ordering::Relaxed);
            if fence < oldest.0 {
                oldest = (fence, i);
            }
        }
        let i = free.unwrap_or(oldest.1);
        // Zero the numbers, then name the slot: a crash in between leaves a slot that
        // says "nothing written", never another producer's mark.
        self.mark_atomic(i, 1).store(0, Ordering::Release);
        self.mark_atomic(i, 0).store(0, Ordering::Release);
        let off = MARKS + i * SLOT;
        self.map[off..off + NAME].fill(0);
        self.map[off..off + name.len()].copy_from_slice(name);
        i
    }

    /// Records that `epoch` asked where to resume: older epochs are fenced.
    pub fn set_fence(&self, slot: usize, epoch: u64) {
        if slot < MARK_SLOTS {
            self.mark_atomic(slot, 0)
                .fetch_max(epoch, Ordering::Release);
        }
    }

    /// Records that the events of every ring record before `mark` are delivered.
    pub fn set_mark(&self, slot: usize, mark: u64) {
        if slot < MARK_SLOTS {
            self.mark_atomic(slot, 1).fetch_max(mark, Ordering::Release);
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
        std::fs::write(&p, vec![7u8; LEN]).unwrap();
        let s = StatePage::open(&p).unwrap();
        assert!(s.entries().is_empty());
        assert!(s.marks().is_empty());
        drop(s);
        // A page of the older layout (no mark table) is replaced too.
        std::fs::write(&p, vec![7u8; HEADER + SLOT * SLOTS]).unwrap();
        let s = StatePage::open(&p).unwrap();
        assert!(s.entries().is_empty() && s.marks().is_empty());
        assert_eq!(std::fs::metadata(&p).unwrap().len(), LEN as u64);
    }

    #[test]
    fn marks_survive_reopen_never_go_back_and_recycle_the_oldest_fence() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("eve-writer.state");
        let mut s = StatePage::open(&p).unwrap();
        let a = s.mark_slot("detect-0");
        s.set_fence(a, 100);
        s.set_mark(a, 4096);
        s.set_mark(a, 1024); // never goes back
        s.set_fence(a, 50);
        let b = s.mark_slot("detect-1");
        s.set_fence(b, 200);
        assert_eq!(s.mark_slot("detect-0"), a);
        // Independent of the incarnation slots.
        let x = s.slot("detect-0", 100);
        s.set_done(x, 9);
        drop(s);
        let mut s = StatePage::open(&p).unwrap();
        let mut m = s.marks();
        m.sort();
        assert_eq!(
            m,
            vec![
                ("detect-0".to_string(), 100, 4096),
                ("detect-1".to_string(), 200, 0)
            ]
        );
        assert_eq!(s.entries(), vec![("detect-0".to_string(), 100, 9)]);
        for i in 0..MARK_SLOTS as u64 {
            let k = s.mark_slot(&format!("p{i}"));
            s.set_fence(k, 1000 + i);
        }
        // Full of names fenced later: detect-0 (fenced at 100) went first, and its
        // slot starts from nothing.
        let m = s.marks();
        assert!(!m.iter().any(|(n, _, _)| n == "detect-0"));
        assert!(m.iter().any(|(n, _, _)| n == "p0"));
    }
}
