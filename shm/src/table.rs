//! A small hash table in shared memory, for state that must be shared by every detect
//! worker: thresholds tracked by host (`threshold`/`detection_filter` `by_src`,
//! `by_dst`, ...) and host bits (`xbits`). Flows are spread over workers by a hash of
//! their 5-tuple, so per-host state kept inside one worker would only see that worker's
//! share of a host's flows.
//!
//! # Layout (version 1, native byte order)
//!
//! ```text
//! 0     magic "MKTABL01", version u32, slots u32
//! 64    slot[0..slots], 128 bytes each:
//!         0  lock  u32   (0 = free, else the holder's pid)
//!         4  used  u32
//!         8  key   [u64; 3]
//!         32 t0    u64   (window start or expiry, ns of packet time)
//!         40 count u32, flags u32
//!         48 ports [u16; 40]
//! ```
//!
//! A key probes [`PROBE`] consecutive slots; when none holds the key or is free, the slot
//! with the oldest `t0` is reused. Each slot has a spin lock held only while copying the
//! entry in or out; a lock held by a process that died is taken over after a bounded
//! spin.

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use memmap2::{MmapMut, MmapOptions};

use crate::{RingError, Staged, io_err, stage};

pub const MAGIC: u64 = u64::from_le_bytes(*b"MKTABL01");
pub const VERSION: u32 = 1;
const HEADER: usize = 64;
const SLOT: usize = 128;
/// Slots probed per key.
pub const PROBE: usize = 16;
/// Distinct ports an entry can hold.
pub const PORTS: usize = 40;

/// One entry, as copied out of (and back into) the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// Whether the slot held this key before.
    pub existed: bool,
    pub t0: u64,
    pub count: u32,
    pub flags: u32,
    pub ports: [u16; PORTS],
    /// Ports in use.
    pub nports: usize,
}

/// A shared table mapped by this process.
pub struct SharedTable {
    map: MmapMut,
    slots: usize,
    path: PathBuf,
}

// SAFETY: every access to a slot goes through its lock; the header is immutable.
unsafe impl Send for SharedTable {}
// SAFETY: as above.
unsafe impl Sync for SharedTable {}

impl std::fmt::Debug for SharedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTable")
            .field("path", &self.path)
            .field("slots", &self.slots)
            .finish()
    }
}

impl SharedTable {
    /// Maps the table at `path`, creating it (atomically, like rings) with `slots` slots
    /// if it does not exist.
    pub fn open_or_create(path: &Path, slots: usize) -> Result<SharedTable, RingError> {
        let io = io_err(path);
        let slots = slots.max(PROBE);
        if !path.exists() {
            let Staged { tmp, mut map } = stage(path, HEADER + slots * SLOT)?;
            map[8..12].copy_from_slice(&VERSION.to_ne_bytes());
            map[12..16].copy_from_slice(&(slots as u32).to_ne_bytes());
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
        if len < HEADER + PROBE * SLOT {
            return Err(RingError::NotARing {
                path: path.to_path_buf(),
            });
        }
        // SAFETY: mapping a table file that other workers share; access is per-slot locked.
        let map = unsafe { MmapOptions::new().len(len).map_mut(&file) }.map_err(io)?;
        // SAFETY: offset 0 is 8-aligned.
        let magic = unsafe { &*(map.as_ptr() as *const AtomicU64) }.load(Ordering::Acquire);
        let version = u32::from_ne_bytes([map[8], map[9], map[10], map[11]]);
        let n = u32::from_ne_bytes([map[12], map[13], map[14], map[15]]) as usize;
        if magic != MAGIC || version != VERSION || HEADER + n * SLOT > len || n < PROBE {
            return Err(RingError::NotARing {
                path: path.to_path_buf(),
            });
        }
        Ok(SharedTable {
            map,
            slots: n,
            path: path.to_path_buf(),
        })
    }

    fn slot(&self, i: usize) -> *mut u8 {
        // SAFETY: i < slots, so the slot lies within the mapping (checked at open).
        unsafe { (self.map.as_ptr() as *mut u8).add(HEADER + (i % self.slots) * SLOT) }
    }

    fn lock(&self, i: usize) -> &AtomicU32 {
        // SAFETY: the slot's first 4 bytes, 4-aligned (slots are 128-byte aligned).
        unsafe { &*(self.slot(i) as *const AtomicU32) }
    }

    fn acquire(&self, i: usize) {
        crate::spin::acquire(self.lock(i));
    }

    fn release(&self, i: usize) {
        crate::spin::release(self.lock(i));
    }

    fn read(&self, i: usize) -> (u32, [u64; 3], Entry) {
        let p = self.slot(i);
        // SAFETY: under the slot's lock; all fields within the 128-byte slot, aligned.
        unsafe {
            let used = (p.add(4) as *const u32).read();
            let key = [
                (p.add(8) as *const u64).read(),
                (p.add(16) as *const u64).read(),
                (p.add(24) as *const u64).read(),
            ];
            let mut ports = [0u16; PORTS];
            std::ptr::copy_nonoverlapping(p.add(48) as *const u16, ports.as_mut_ptr(), PORTS);
            let flags = (p.add(44) as *const u32).read();
            (
                used,
                key,
                Entry {
                    existed: true,
                    t0: (p.add(32) as *const u64).read(),
                    count: (p.add(40) as *const u32).read(),
                    flags: flags & 0xffff,
                    ports,
                    nports: ((flags >> 16) as usize).min(PORTS),
                },
            )
        }
    }

    fn write(&self, i: usize, key: [u64; 3], e: &Entry) {
        let p = self.slot(i);
        // SAFETY: under the slot's lock; fields within the slot, aligned.
        unsafe {
            (p.add(4) as *mut u32).write(1);
            (p.add(8) as *mut u64).write(key[0]);
            (p.add(16) as *mut u64).write(key[1]);
            (p.add(24) as *mut u64).write(key[2]);
            (p.add(32) as *mut u64).write(e.t0);
            (p.add(40) as *mut u32).write(e.count);
            (p.add(44) as *mut u32)
                .write((e.flags & 0xffff) | ((e.nports.min(PORTS) as u32) << 16));
            std::ptr::copy_nonoverlapping(e.ports.as_ptr(), p.add(48) as *mut u16, PORTS);
        }
    }

    /// Runs `f` on the entry for `key` (a fresh one if absent) under its slot's lock and
    /// stores what `f` left in it. Returns what `f` returned.
    pub fn update<R>(&self, key: [u64; 3], f: impl FnOnce(&mut Entry) -> R) -> R {
        let start = self.home_slot(key);
        // Find the key, else a free slot, else the oldest.
        let mut pick = None;
        let mut oldest: Option<(u64, usize)> = None;
        for k in 0..PROBE {
            let i = (start + k) % self.slots;
            self.acquire(i);
            let (used, k2, e) = self.read(i);
            if used != 0 && k2 == key {
                pick = Some((i, true, e));
                break;
            }
            if used == 0 && pick.is_none() {
                pick = Some((i, false, e));
                break;
            }
            if oldest.is_none_or(|(t, _)| e.t0 < t) {
                oldest = Some((e.t0, i));
            }
            self.release(i);
        }
        let (i, existed) = match pick {
            Some((i, existed, _)) => (i, existed),
            None => {
                let i = oldest.map(|(_, i)| i).unwrap_or(start);
                self.acquire(i);
                (i, false)
            }
        };
        let mut e = if existed {
            self.read(i).2
        } else {
            Entry {
                existed: false,
                t0: 0,
                count: 0,
                flags: 0,
                ports: [0; PORTS],
                nports: 0,
            }
        };
        let r = f(&mut e);
        self.write(i, key, &e);
        self.release(i);
        r
    }

    /// Runs `f` on a copy of the entry for `key` (a fresh one if absent) and stores
    /// nothing: what [`update`](Self::update) would decide, without its effect (a
    /// worker replaying records whose effects are in the table already).
    pub fn peek_update<R>(&self, key: [u64; 3], f: impl FnOnce(&mut Entry) -> R) -> R {
        let mut e = self.get(key).unwrap_or(Entry {
            existed: false,
            t0: 0,
            count: 0,
            flags: 0,
            ports: [0; PORTS],
            nports: 0,
        });
        f(&mut e)
    }

    /// The slot where the probe for `key` starts. `#[inline]`: `update` is generic, so it
    /// is compiled in the calling crate, where the hash must stay inlined as it was.
    #[inline]
    fn home_slot(&self, key: [u64; 3]) -> usize {
        let h = key[0].wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(17)
            ^ key[1].wrapping_mul(0xc2b2_ae3d_27d4_eb4f)
            ^ key[2];
        (h as usize) % self.slots
    }

    /// Reads the entry for `key`, if present.
    pub fn get(&self, key: [u64; 3]) -> Option<Entry> {
        let mut found = None;
        self.update_existing(key, |e| found = Some(*e));
        found
    }

    fn update_existing(&self, key: [u64; 3], f: impl FnOnce(&mut Entry)) {
        let start = self.home_slot(key);
        for k in 0..PROBE {
            let i = (start + k) % self.slots;
            self.acquire(i);
            let (used, k2, mut e) = self.read(i);
            if used != 0 && k2 == key {
                f(&mut e);
                self.write(i, key, &e);
                self.release(i);
                return;
            }
            self.release(i);
        }
    }

    /// Removes `key`.
    pub fn remove(&self, key: [u64; 3]) {
        let start = self.home_slot(key);
        for k in 0..PROBE {
            let i = (start + k) % self.slots;
            self.acquire(i);
            let (used, k2, _) = self.read(i);
            if used != 0 && k2 == key {
                let p = self.slot(i);
                // SAFETY: under the lock; `used` lies within the slot.
                unsafe { (p.add(4) as *mut u32).write(0) };
                self.release(i);
                return;
            }
            self.release(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_get_remove_and_share() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("table");
        let a = SharedTable::open_or_create(&path, 1024).unwrap();
        let b = SharedTable::open_or_create(&path, 1024).unwrap();
        let k = [1, 2, 3];
        assert!(!a.update(k, |e| {
            e.count += 1;
            e.existed
        }));
        assert!(b.update(k, |e| {
            e.count += 1;
            e.existed
        }));
        assert_eq!(a.get(k).unwrap().count, 2);
        b.remove(k);
        assert!(a.get(k).is_none());
    }

    #[test]
    fn full_probe_window_reuses_the_oldest() {
        let dir = tempfile::tempdir().unwrap();
        let t = SharedTable::open_or_create(&dir.path().join("t"), PROBE).unwrap();
        for n in 0..(PROBE as u64 * 3) {
            t.update([n, 0, 0], |e| e.t0 = n);
        }
        // The newest keys are there; the oldest were reused.
        assert!(t.get([PROBE as u64 * 3 - 1, 0, 0]).is_some());
        assert!(t.get([0, 0, 0]).is_none());
    }
}
