//! The processing-order page: how far capture has handed packets to the workers and how
//! far each worker has processed them, so that a worker can wait until every packet
//! before one of its own has been processed by its owner (whichever worker that is).
//!
//! A worker reads state that other workers write (the FTP data-connection
//! expectations, [`crate::expect`]). Workers run concurrently and, reading a capture
//! file, one may be far ahead of another; what it reads must be what a single-threaded
//! engine would have found at the same packet, or results depend on timing. Capture
//! numbers packets (`PacketMeta::seq`, 1-based, in capture order) and this page says,
//! for a packet `m`, when every packet before it is processed:
//!
//! - capture stores, for each ring, the number of the last packet it **published** to
//!   it (after the ring's head), and `through`: every packet up to it is published to
//!   its ring (after publishing every ring, and before waiting for room in a full one);
//! - each worker stores `done`: every packet of its own up to it is processed (after
//!   each batch, and `m - 1` while it waits at packet `m`).
//!
//! Worker `w` has processed all its packets before `m` when `done[w] >= m - 1`, or when
//! it has processed everything published to it (`done[w] >= published[w]`) and capture
//! had published everything before `m` (`through >= m - 1`; read first). Waiting never
//! deadlocks: a worker waiting at `m` has processed all of its packets before `m`, so two
//! waiting workers always let the one at the lower packet go on.
//!
//! # Layout (version 1, native byte order)
//!
//! ```text
//! 0     magic "MKORDR01", version u32, workers u32
//! 64    mode u64 (0 = no ordering: live capture or unknown; 1 = offline, numbered)
//! 128   through u64
//! 256   per worker w (256 + w * 128): published u64 at +0, done u64 at +64
//! ```

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memmap2::{MmapMut, MmapOptions};

use crate::{RingError, Staged, io_err, stage};

pub const MAGIC: u64 = u64::from_le_bytes(*b"MKORDR01");
pub const VERSION: u32 = 1;
/// Workers the page has lines for.
pub const MAX_WORKERS: usize = 1024;
const MODE: usize = 64;
const THROUGH: usize = 128;
const LINES: usize = 256;
const PER_WORKER: usize = 128;
const LEN: usize = LINES + MAX_WORKERS * PER_WORKER;
/// A wait gives up when nothing it waits on moved for this long (a worker that died,
/// a capture that stopped): the decision is then taken with what is known.
pub const STALL: Duration = Duration::from_secs(2);

/// The page, mapped.
pub struct OrderPage {
    map: MmapMut,
    path: PathBuf,
}

impl std::fmt::Debug for OrderPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OrderPage")
            .field("path", &self.path)
            .finish()
    }
}

/// What [`OrderPage::wait_before`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waited {
    /// Every other worker had processed its packets before the given one.
    Ordered,
    /// The page says packets are not numbered in capture order (live capture): nothing
    /// to wait for.
    Unordered,
    /// Gave up after [`STALL`] without progress.
    Stalled,
}

impl OrderPage {
    /// Maps the page at `path`, making it if it does not exist.
    pub fn open_or_create(path: &Path) -> Result<OrderPage, RingError> {
        let io = io_err(path);
        if !path.exists() {
            let Staged { tmp, mut map } = stage(path, LEN)?;
            map[8..12].copy_from_slice(&VERSION.to_ne_bytes());
            map[12..16].copy_from_slice(&(MAX_WORKERS as u32).to_ne_bytes());
            // SAFETY: offset 0 is 8-aligned in a page-aligned mapping.
            unsafe { &*(map.as_ptr() as *const AtomicU64) }.store(MAGIC, Ordering::Release);
            let linked = std::fs::hard_link(&tmp, path);
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => return Err(io(e)),
            }
        }
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len() as usize;
        let bad = || RingError::NotARing {
            path: path.to_path_buf(),
        };
        if len < LEN {
            return Err(bad());
        }
        // SAFETY: mapping a page that other processes share; every access is atomic.
        let map = unsafe { MmapOptions::new().len(LEN).map_mut(&file) }.map_err(io)?;
        // SAFETY: offset 0 is 8-aligned.
        let magic = unsafe { &*(map.as_ptr() as *const AtomicU64) }.load(Ordering::Acquire);
        let version = u32::from_ne_bytes([map[8], map[9], map[10], map[11]]);
        if magic != MAGIC || version != VERSION {
            return Err(bad());
        }
        Ok(OrderPage {
            map,
            path: path.to_path_buf(),
        })
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        debug_assert!(off + 8 <= LEN && off.is_multiple_of(8));
        // SAFETY: `off` is a fixed, 8-aligned offset within the mapping (LEN bytes).
        unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU64) }
    }

    fn published_word(&self, w: usize) -> Option<&AtomicU64> {
        (w < MAX_WORKERS).then(|| self.word(LINES + w * PER_WORKER))
    }

    fn done_word(&self, w: usize) -> Option<&AtomicU64> {
        (w < MAX_WORKERS).then(|| self.word(LINES + w * PER_WORKER + 64))
    }

    /// Capture: a new numbered (offline) input starts with `workers` rings; forgets
    /// what an earlier run left.
    pub fn start_offline(&self, workers: usize) {
        self.word(THROUGH).store(0, Ordering::Release);
        for w in 0..workers.min(MAX_WORKERS) {
            if let Some(p) = self.published_word(w) {
                p.store(0, Ordering::Release);
            }
        }
        self.word(MODE).store(1, Ordering::Release);
    }

    /// Capture: packets are not numbered in capture order any more (or never were).
    pub fn stop_ordering(&self) {
        self.word(MODE).store(0, Ordering::Release);
    }

    /// Capture: packet `seq` is the last one published to ring `w` (after its head).
    pub fn set_published(&self, w: usize, seq: u64) {
        if let Some(p) = self.published_word(w) {
            p.store(seq, Ordering::Release);
        }
    }

    /// Capture: every packet up to `seq` is published to its ring.
    pub fn set_through(&self, seq: u64) {
        self.word(THROUGH).store(seq, Ordering::Release);
    }

    /// Worker `w`: every packet of its own up to `seq` is processed.
    pub fn set_done(&self, w: usize, seq: u64) {
        if let Some(d) = self.done_word(w) {
            d.store(seq, Ordering::Release);
        }
    }

    /// Whether worker `w` has processed all of its packets before `m`.
    fn settled(&self, w: usize, m: u64) -> bool {
        let (Some(pw), Some(dw)) = (self.published_word(w), self.done_word(w)) else {
            return true;
        };
        let before = m.saturating_sub(1);
        // Order: `through`, then `published`, then `done` (see the module doc).
        let through = self.word(THROUGH).load(Ordering::Acquire);
        let published = pw.load(Ordering::Acquire);
        let done = dw.load(Ordering::Acquire);
        done >= before || (done >= published && through >= before)
    }

    /// Worker `me` of `workers` is at packet `m`: waits until every other worker has
    /// processed all of its packets before `m`, or nothing moved for `stall`
    /// ([`STALL`] normally).
    pub fn wait_before(&self, me: usize, workers: usize, m: u64, stall: Duration) -> Waited {
        if self.word(MODE).load(Ordering::Acquire) != 1 {
            return Waited::Unordered;
        }
        self.set_done(me, m.saturating_sub(1));
        let workers = workers.min(MAX_WORKERS);
        let mut last_change = Instant::now();
        let mut seen = self.snapshot(workers);
        let mut spins = 0u32;
        loop {
            if (0..workers).all(|w| w == me || self.settled(w, m)) {
                return Waited::Ordered;
            }
            spins = spins.saturating_add(1);
            if spins < 256 {
                std::hint::spin_loop();
                continue;
            }
            std::thread::sleep(Duration::from_micros(50));
            let now = self.snapshot(workers);
            if now != seen {
                seen = now;
                last_change = Instant::now();
            } else if last_change.elapsed() >= stall {
                return Waited::Stalled;
            }
        }
    }

    /// Everything a wait looks at, to tell progress from a stall.
    fn snapshot(&self, workers: usize) -> u64 {
        let mut h = self.word(THROUGH).load(Ordering::Acquire);
        for w in 0..workers {
            for x in [self.published_word(w), self.done_word(w)]
                .into_iter()
                .flatten()
            {
                h = h
                    .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                    .wrapping_add(x.load(Ordering::Acquire));
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worker_waits_for_the_packets_before_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("order");
        let capture = OrderPage::open_or_create(&p).unwrap();
        let w1 = OrderPage::open_or_create(&p).unwrap();
        // Not offline: nothing to wait for.
        assert_eq!(w1.wait_before(1, 2, 10, STALL), Waited::Unordered);
        capture.start_offline(2);
        // Worker 0 got packets 1..=5, worker 1 packets 6..=10; all published.
        capture.set_published(0, 5);
        capture.set_published(1, 10);
        capture.set_through(10);
        assert!(!w1.settled(0, 10));
        w1.set_done(0, 3);
        assert!(!w1.settled(0, 10) && w1.settled(0, 4));
        // Worker 0 processed all it has: every packet before 10 is done.
        w1.set_done(0, 5);
        assert!(w1.settled(0, 10));
        assert_eq!(w1.wait_before(1, 2, 10, STALL), Waited::Ordered);
        // More packets for worker 0 (11, 12) published but the capture's mark is
        // behind: packet 13 must wait until worker 0 processes them.
        capture.set_published(0, 12);
        assert!(!w1.settled(0, 13));
        w1.set_done(0, 12);
        assert!(w1.settled(0, 13));
    }

    #[test]
    fn a_stalled_wait_gives_up() {
        let dir = tempfile::tempdir().unwrap();
        let p = OrderPage::open_or_create(&dir.path().join("order")).unwrap();
        p.start_offline(2);
        p.set_published(0, 7);
        p.set_through(7);
        let t = Instant::now();
        let stall = Duration::from_millis(50);
        assert_eq!(p.wait_before(1, 2, 8, stall), Waited::Stalled);
        assert!(t.elapsed() >= stall);
    }
}
