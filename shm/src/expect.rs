//! The expectation table: connections a control channel announced (an FTP data
//! connection after PORT/EPRT/PASV/EPSV and the command that uses it), shared by every
//! detect worker. Capture spreads flows over workers by a hash of their endpoints, so a
//! data connection usually lands in another worker than its control connection: the
//! control flow's worker adds the expectation here, and the worker that gets a new flow
//! whose protocol was not recognised looks it up (after waiting, with
//! [`crate::order`], until every packet before its own has been processed).
//!
//! An entry is keyed by the address pair of the control connection (in either order)
//! and the data connection's responder port, and carries the packet number and time it
//! was made at, the control flow's id and a small opaque payload (the protocol's: for
//! FTP the command and the file name). A lookup sees only entries made before its own
//! packet, so a worker running ahead of another never sees what the other has not
//! reached yet.
//!
//! # Layout (version 1, native byte order)
//!
//! ```text
//! 0     magic "MKEXPT01", version u32, slots u32, lock u32 (0 = free, else the
//!       holder's pid), live u32 (entries in use)
//! 64    slot[0..slots], 512 bytes each:
//!         0  used u32, proto u16, port u16
//!         8  addr a [u8; 16], addr b [u8; 16] (IPv4 as IPv4-mapped IPv6; a <= b)
//!         40 seq u64, ts_ns u64, parent u64
//!         64 len u16, payload [u8; PAYLOAD]
//! ```
//!
//! One lock guards the table: expectations are rare (one per file transfer), and a
//! lookup costs nothing while the table is empty (`live` is read without the lock).

use std::fs::OpenOptions;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use memmap2::{MmapMut, MmapOptions};

use crate::{RingError, Staged, io_err, stage};

pub const MAGIC: u64 = u64::from_le_bytes(*b"MKEXPT01");
pub const VERSION: u32 = 1;
const HEADER: usize = 64;
const SLOT: usize = 512;
/// Payload bytes an entry holds at most (longer ones are cut).
pub const PAYLOAD: usize = SLOT - 66;
/// Slots of the table made by default.
pub const DEFAULT_SLOTS: usize = 1024;

/// An expectation, as added and as found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// The protocol the connection will speak (the app layer's number for it).
    pub proto: u16,
    /// The data connection's responder (server) port.
    pub port: u16,
    /// The control connection's addresses (either order).
    pub addrs: (IpAddr, IpAddr),
    /// Packet number and packet time of the packet that made it.
    pub seq: u64,
    pub ts_ns: u64,
    /// The control flow's id (EVE `parent_id` of the data flow).
    pub parent: u64,
    pub payload: Vec<u8>,
}

fn addr16(a: IpAddr) -> [u8; 16] {
    match a {
        IpAddr::V4(v4) => v4.to_ipv6_mapped().octets(),
        IpAddr::V6(v6) => v6.octets(),
    }
}

fn key(addrs: (IpAddr, IpAddr)) -> ([u8; 16], [u8; 16]) {
    let (a, b) = (addr16(addrs.0), addr16(addrs.1));
    if a <= b { (a, b) } else { (b, a) }
}

fn ip(a: [u8; 16]) -> IpAddr {
    let v6 = std::net::Ipv6Addr::from(a);
    match v6.to_ipv4_mapped() {
        Some(v4) => IpAddr::V4(v4),
        None => IpAddr::V6(v6),
    }
}

/// The table, mapped.
pub struct ExpectTable {
    map: MmapMut,
    slots: usize,
    path: PathBuf,
}

// SAFETY: every access to the slots happens under the table's lock; the header's
// words are atomics.
unsafe impl Send for ExpectTable {}
// SAFETY: as above.
unsafe impl Sync for ExpectTable {}

impl std::fmt::Debug for ExpectTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExpectTable")
            .field("path", &self.path)
            .field("slots", &self.slots)
            .finish()
    }
}

/// An entry copied out of a slot.
struct Slot {
    proto: u16,
    port: u16,
    a: [u8; 16],
    b: [u8; 16],
    seq: u64,
    ts_ns: u64,
    parent: u64,
    payload: Vec<u8>,
}

impl ExpectTable {
    /// Maps the table at `path`, making it with `slots` slots if it does not exist.
    pub fn open_or_create(path: &Path, slots: usize) -> Result<ExpectTable, RingError> {
        let io = io_err(path);
        let slots = slots.max(1);
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
        let bad = || RingError::NotARing {
            path: path.to_path_buf(),
        };
        if len < HEADER + SLOT {
            return Err(bad());
        }
        // SAFETY: mapping a table that other workers share; slots are accessed under
        // the lock, header words atomically.
        let map = unsafe { MmapOptions::new().len(len).map_mut(&file) }.map_err(io)?;
        // SAFETY: offset 0 is 8-aligned.
        let magic = unsafe { &*(map.as_ptr() as *const AtomicU64) }.load(Ordering::Acquire);
        let version = u32::from_ne_bytes([map[8], map[9], map[10], map[11]]);
        let n = u32::from_ne_bytes([map[12], map[13], map[14], map[15]]) as usize;
        if magic != MAGIC || version != VERSION || n == 0 || HEADER + n * SLOT > len {
            return Err(bad());
        }
        Ok(ExpectTable {
            map,
            slots: n,
            path: path.to_path_buf(),
        })
    }

    fn header_u32(&self, off: usize) -> &AtomicU32 {
        // SAFETY: offsets 16 and 20 are 4-aligned and within the header.
        unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU32) }
    }

    fn lock(&self) -> &AtomicU32 {
        self.header_u32(16)
    }

    fn live(&self) -> &AtomicU32 {
        self.header_u32(20)
    }

    fn acquire(&self) {
        crate::spin::acquire(self.lock());
    }

    fn release(&self) {
        crate::spin::release(self.lock());
    }

    fn slot_ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: i % slots < slots, so the slot lies within the mapping (checked at open).
        unsafe { (self.map.as_ptr() as *mut u8).add(HEADER + (i % self.slots) * SLOT) }
    }

    /// Reads slot `i` (under the lock).
    fn read(&self, i: usize) -> Slot {
        let p = self.slot_ptr(i);
        // SAFETY: under the lock; every field lies within the 512-byte slot, aligned
        // for its type (slots are 64 + k * 512 bytes into a page-aligned mapping).
        unsafe {
            let mut a = [0u8; 16];
            let mut b = [0u8; 16];
            std::ptr::copy_nonoverlapping(p.add(8), a.as_mut_ptr(), 16);
            std::ptr::copy_nonoverlapping(p.add(24), b.as_mut_ptr(), 16);
            let len = usize::from((p.add(64) as *const u16).read()).min(PAYLOAD);
            let mut payload = vec![0u8; len];
            std::ptr::copy_nonoverlapping(p.add(66), payload.as_mut_ptr(), len);
            Slot {
                proto: (p.add(4) as *const u16).read(),
                port: (p.add(6) as *const u16).read(),
                a,
                b,
                seq: (p.add(40) as *const u64).read(),
                ts_ns: (p.add(48) as *const u64).read(),
                parent: (p.add(56) as *const u64).read(),
                payload,
            }
        }
    }

    /// Only the fields a scan needs (under the lock).
    fn peek(&self, i: usize) -> (bool, u64) {
        let p = self.slot_ptr(i);
        // SAFETY: under the lock; fields within the slot, aligned.
        unsafe {
            (
                (p as *const u32).read() != 0,
                (p.add(40) as *const u64).read(),
            )
        }
    }

    fn write(&self, i: usize, e: &Expected) {
        let p = self.slot_ptr(i);
        let (a, b) = key(e.addrs);
        let len = e.payload.len().min(PAYLOAD);
        // SAFETY: under the lock; fields within the slot, aligned; the payload is cut
        // to the room the slot has.
        unsafe {
            (p as *mut u32).write(1);
            (p.add(4) as *mut u16).write(e.proto);
            (p.add(6) as *mut u16).write(e.port);
            std::ptr::copy_nonoverlapping(a.as_ptr(), p.add(8), 16);
            std::ptr::copy_nonoverlapping(b.as_ptr(), p.add(24), 16);
            (p.add(40) as *mut u64).write(e.seq);
            (p.add(48) as *mut u64).write(e.ts_ns);
            (p.add(56) as *mut u64).write(e.parent);
            (p.add(64) as *mut u16).write(len as u16);
            std::ptr::copy_nonoverlapping(e.payload.as_ptr(), p.add(66), len);
        }
    }

    fn free(&self, i: usize) {
        // SAFETY: under the lock; `used` is the slot's first word.
        unsafe { (self.slot_ptr(i) as *mut u32).write(0) };
    }

    /// Adds an expectation; when the table is full, the oldest entry makes room.
    pub fn add(&self, e: &Expected) {
        self.acquire();
        let mut pick = None;
        let mut oldest: Option<(u64, usize)> = None;
        for i in 0..self.slots {
            let (used, seq) = self.peek(i);
            if !used {
                pick = Some(i);
                break;
            }
            if oldest.is_none_or(|(s, _)| seq < s) {
                oldest = Some((seq, i));
            }
        }
        let i = match pick {
            Some(i) => {
                self.live().fetch_add(1, Ordering::Release);
                i
            }
            None => oldest.map_or(0, |(_, i)| i),
        };
        self.write(i, e);
        self.release();
    }

    /// Whether the table holds nothing (read without the lock: a hint that lets a
    /// lookup skip the table).
    pub fn is_empty(&self) -> bool {
        self.live().load(Ordering::Acquire) == 0
    }

    /// Takes the oldest expectation of protocol-any made before packet `before` for a
    /// connection between `addrs` (either order) to responder port `port`, no older
    /// than `max_age_ns` at packet time `now_ns`. Entries for the same connection that
    /// are too old are dropped on the way.
    pub fn take(
        &self,
        addrs: (IpAddr, IpAddr),
        port: u16,
        before: u64,
        now_ns: u64,
        max_age_ns: u64,
    ) -> Option<Expected> {
        if self.is_empty() {
            return None;
        }
        let (a, b) = key(addrs);
        self.acquire();
        let mut best: Option<(u64, usize, Slot)> = None;
        for i in 0..self.slots {
            let (used, seq) = self.peek(i);
            if !used || seq >= before {
                continue;
            }
            let s = self.read(i);
            if s.port != port || s.a != a || s.b != b {
                continue;
            }
            if now_ns.saturating_sub(s.ts_ns) > max_age_ns {
                self.free(i);
                self.live().fetch_sub(1, Ordering::Release);
                continue;
            }
            if best.as_ref().is_none_or(|(bs, _, _)| seq < *bs) {
                best = Some((seq, i, s));
            }
        }
        let found = best.map(|(_, i, s)| {
            self.free(i);
            self.live().fetch_sub(1, Ordering::Release);
            Expected {
                proto: s.proto,
                port: s.port,
                addrs: (ip(s.a), ip(s.b)),
                seq: s.seq,
                ts_ns: s.ts_ns,
                parent: s.parent,
                payload: s.payload,
            }
        });
        self.release();
        found
    }

    /// Drops every entry (a new input starts).
    pub fn clear(&self) {
        self.acquire();
        for i in 0..self.slots {
            self.free(i);
        }
        self.live().store(0, Ordering::Release);
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(port: u16, seq: u64, payload: &[u8]) -> Expected {
        Expected {
            proto: 7,
            port,
            addrs: ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap()),
            seq,
            ts_ns: seq * 1_000_000_000,
            parent: 99,
            payload: payload.to_vec(),
        }
    }

    #[test]
    fn add_and_take_across_mappings() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("expect");
        let a = ExpectTable::open_or_create(&path, 8).unwrap();
        let b = ExpectTable::open_or_create(&path, 8).unwrap();
        assert!(b.is_empty());
        a.add(&e(50001, 10, b"RETR x"));
        let pair = ("10.0.0.2".parse().unwrap(), "10.0.0.1".parse().unwrap());
        // Not before packet 10 itself, nor another port, nor too old.
        assert_eq!(b.take(pair, 50001, 10, 10_000_000_000, u64::MAX), None);
        assert_eq!(b.take(pair, 50002, 11, 11_000_000_000, u64::MAX), None);
        let got = b.take(pair, 50001, 11, 11_000_000_000, u64::MAX).unwrap();
        assert_eq!((got.parent, &got.payload[..]), (99, &b"RETR x"[..]));
        assert!(a.is_empty());
        a.add(&e(50001, 12, b"old"));
        assert_eq!(
            b.take(pair, 50001, 99, 99_000_000_000, 30_000_000_000),
            None
        );
        assert!(a.is_empty());
    }

    #[test]
    fn a_full_table_forgets_the_oldest_and_payloads_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let t = ExpectTable::open_or_create(&dir.path().join("t"), 2).unwrap();
        t.add(&e(1, 1, b""));
        t.add(&e(2, 2, b""));
        t.add(&e(3, 3, &[b'x'; 1000]));
        let pair = e(0, 0, b"").addrs;
        assert!(t.take(pair, 1, 9, 9, u64::MAX).is_none());
        assert_eq!(
            t.take(pair, 3, 9, 9, u64::MAX).unwrap().payload.len(),
            PAYLOAD
        );
        t.clear();
        assert!(t.is_empty());
    }
}
