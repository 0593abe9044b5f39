//! A page of named counters in shared memory.
//!
//! One process (a role) creates the page and owns the writing; any other process maps it
//! read-only and reads every counter at any time, without a request to the owner. The
//! supervisor uses it for progress and the end-of-run summary; the control API for `Stats`.
//!
//! # Layout (version 1, native byte order)
//!
//! ```text
//! 0    magic "MKCNTR01" u64
//! 8    version u32, slots u32
//! 16   pid u32, reserved u32
//! 24   started_ns u64 (CLOCK_REALTIME)
//! 64   slot[0..slots]: 56-byte NUL-padded UTF-8 name, then an u64 value (64 bytes each)
//! ```
//!
//! Names are fixed when the page is created; values are updated with relaxed atomics, so
//! a reader sees each counter's value at some recent moment (not a consistent snapshot of
//! all of them, which counters never need).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{Mmap, MmapMut, MmapOptions};

use crate::{RingError, Staged, io_err, stage};

/// File magic.
pub const MAGIC: u64 = u64::from_le_bytes(*b"MKCNTR01");
/// Layout version.
pub const VERSION: u32 = 1;
/// Longest counter name in bytes.
pub const MAX_NAME: usize = 56;
const HEADER: usize = 64;
const SLOT: usize = 64;

struct Shared {
    map: MmapMut,
}

// SAFETY: values are accessed only through atomics; names and header never change after
// creation.
unsafe impl Send for Shared {}
// SAFETY: as above.
unsafe impl Sync for Shared {}

/// The writable page of one role.
#[derive(Clone)]
pub struct CounterPage {
    shared: Arc<Shared>,
    names: Arc<Vec<String>>,
    path: PathBuf,
}

impl std::fmt::Debug for CounterPage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CounterPage")
            .field("path", &self.path)
            .field("counters", &self.names.len())
            .finish()
    }
}

/// A handle to one counter of a page; cheap to copy into the hot loop.
#[derive(Clone, Copy)]
pub struct CounterRef {
    value: *const AtomicU64,
}

impl std::fmt::Debug for CounterRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CounterRef({})", self.get())
    }
}

// SAFETY: the pointer targets an AtomicU64 inside a mapping that the CounterPage keeps
// alive; callers keep the page alive for as long as they use its refs (documented on
// `CounterPage::counter`).
unsafe impl Send for CounterRef {}
// SAFETY: as above; all access is atomic.
unsafe impl Sync for CounterRef {}

impl CounterRef {
    fn atomic(&self) -> &AtomicU64 {
        // SAFETY: see the Send impl: the page outlives its refs.
        unsafe { &*self.value }
    }
    pub fn add(&self, n: u64) {
        self.atomic().fetch_add(n, Ordering::Relaxed);
    }
    pub fn set(&self, v: u64) {
        self.atomic().store(v, Ordering::Relaxed);
    }
    /// Raises the value to `v` if it is larger (high-water marks).
    pub fn max(&self, v: u64) {
        self.atomic().fetch_max(v, Ordering::Relaxed);
    }
    pub fn get(&self) -> u64 {
        self.atomic().load(Ordering::Relaxed)
    }
}

impl CounterPage {
    /// Creates (or replaces) the page at `path` with these counter names, all zero.
    /// Names longer than [`MAX_NAME`] bytes are truncated.
    pub fn create(path: &Path, names: &[String]) -> Result<CounterPage, RingError> {
        let io = io_err(path);
        let len = HEADER + SLOT * names.len().max(1);
        let Staged { tmp, mut map } = stage(path, len)?;
        let mut kept = Vec::with_capacity(names.len());
        for (i, name) in names.iter().enumerate() {
            let mut end = name.len().min(MAX_NAME);
            while !name.is_char_boundary(end) {
                end -= 1;
            }
            let slot = HEADER + i * SLOT;
            map[slot..slot + end].copy_from_slice(&name.as_bytes()[..end]);
            kept.push(name[..end].to_string());
        }
        map[8..12].copy_from_slice(&VERSION.to_ne_bytes());
        map[12..16].copy_from_slice(&(names.len() as u32).to_ne_bytes());
        map[16..20].copy_from_slice(&std::process::id().to_ne_bytes());
        let started = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        map[24..32].copy_from_slice(&started.to_ne_bytes());
        // SAFETY: offset 0 is 8-aligned in a page-aligned mapping.
        let magic = unsafe { &*(map.as_ptr() as *const AtomicU64) };
        magic.store(MAGIC, Ordering::Release);
        std::fs::rename(&tmp, path).map_err(&io)?;
        Ok(CounterPage {
            shared: Arc::new(Shared { map }),
            names: Arc::new(kept),
            path: path.to_path_buf(),
        })
    }

    /// The counter named `name`. The ref must not outlive every clone of this page.
    pub fn counter(&self, name: &str) -> Option<CounterRef> {
        let i = self.names.iter().position(|n| n == name)?;
        let off = HEADER + i * SLOT + MAX_NAME;
        Some(CounterRef {
            // SAFETY: off + 8 is within the mapping, 8-aligned.
            value: unsafe { self.shared.map.as_ptr().add(off) } as *const AtomicU64,
        })
    }

    /// Like [`counter`](Self::counter), for names the caller registered itself: a missing
    /// name is a programming error in the role, not an input error.
    pub fn expect(&self, name: &str) -> CounterRef {
        self.counter(name)
            .unwrap_or_else(|| panic!("counter {name} was not registered"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A read-only view of another process's page.
pub struct CounterReader {
    map: Mmap,
    slots: usize,
}

impl std::fmt::Debug for CounterReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CounterReader")
            .field("slots", &self.slots)
            .finish()
    }
}

impl CounterReader {
    pub fn open(path: &Path) -> Result<CounterReader, RingError> {
        let io = io_err(path);
        let file = std::fs::File::open(path).map_err(&io)?;
        let len = file.metadata().map_err(&io)?.len() as usize;
        if len < HEADER {
            return Err(RingError::NotARing {
                path: path.to_path_buf(),
            });
        }
        // SAFETY: read-only mapping of a file another process writes through atomics.
        let map = unsafe { MmapOptions::new().len(len).map(&file) }.map_err(&io)?;
        // SAFETY: offset 0 is 8-aligned.
        let magic = unsafe { &*(map.as_ptr() as *const AtomicU64) }.load(Ordering::Acquire);
        let version = u32::from_ne_bytes([map[8], map[9], map[10], map[11]]);
        let slots = u32::from_ne_bytes([map[12], map[13], map[14], map[15]]) as usize;
        if magic != MAGIC || version != VERSION || HEADER + slots * SLOT > len {
            return Err(RingError::NotARing {
                path: path.to_path_buf(),
            });
        }
        Ok(CounterReader { map, slots })
    }

    /// Process id of the page's owner.
    pub fn pid(&self) -> u32 {
        u32::from_ne_bytes([self.map[16], self.map[17], self.map[18], self.map[19]])
    }

    /// Wall-clock start of the owner, ns since the Unix epoch.
    pub fn started_ns(&self) -> u64 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&self.map[24..32]);
        u64::from_ne_bytes(b)
    }

    /// Every counter as (name, value).
    pub fn iter(&self) -> impl Iterator<Item = (&str, u64)> + '_ {
        (0..self.slots).map(move |i| {
            let slot = HEADER + i * SLOT;
            let raw = &self.map[slot..slot + MAX_NAME];
            let end = raw.iter().position(|&b| b == 0).unwrap_or(MAX_NAME);
            let name = std::str::from_utf8(&raw[..end]).unwrap_or("?");
            // SAFETY: slot + MAX_NAME is 8-aligned and within the mapping.
            let value = unsafe { &*(self.map.as_ptr().add(slot + MAX_NAME) as *const AtomicU64) }
                .load(Ordering::Relaxed);
            (name, value)
        })
    }

    /// The value of one counter.
    pub fn get(&self, name: &str) -> Option<u64> {
        self.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_here_read_there() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("stats-capture");
        let names: Vec<String> = ["capture.packets", "capture.bytes", "x".repeat(80).as_str()]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let page = CounterPage::create(&path, &names).unwrap();
        let pk = page.expect("capture.packets");
        pk.add(5);
        pk.add(2);
        page.expect("capture.bytes").set(1500);
        page.expect(&"x".repeat(MAX_NAME)).max(3);
        let r = CounterReader::open(&path).unwrap();
        assert_eq!(r.get("capture.packets"), Some(7));
        assert_eq!(r.get("capture.bytes"), Some(1500));
        assert_eq!(r.get(&"x".repeat(MAX_NAME)), Some(3));
        assert_eq!(r.pid(), std::process::id());
        assert_eq!(r.iter().count(), 3);
        assert!(page.counter("nope").is_none());
    }

    #[test]
    fn reader_rejects_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("junk");
        std::fs::write(&path, [0u8; 200]).unwrap();
        assert!(CounterReader::open(&path).is_err());
    }
}
