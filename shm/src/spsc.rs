//! The packet ring: one producer (capture) and one consumer (a detect worker) in a
//! shared-memory file.
//!
//! # Layout (version 1, native byte order: both ends run on the same host)
//!
//! ```text
//! offset 0      header (4096 bytes)
//!   0           meta line:      magic "MKRING01", version, header size, capacity, created
//!   128         producer line:  head (bytes published), head_seq (futex word), producer
//!                               waiting flag, producer pid, eof flag, heartbeat, counters,
//!                               seq of the last published record
//!   256         consumer line:  tail (bytes released), tail_seq (futex word), consumer
//!                               waiting flag, consumer pid, heartbeat, counters
//! offset 4096   data region: `capacity` bytes (a power of two), used as a circle
//! ```
//!
//! `head` and `tail` are monotonically increasing byte counts; the position in the data
//! region is `count & (capacity - 1)`. The lines are 128 bytes apart so that the producer's
//! and the consumer's hot words never share a cache line (nor an adjacent-line prefetch pair).
//!
//! # Records
//!
//! ```text
//! 0  len      u32  whole record, header included, a multiple of 8
//! 4  kind     u16  1 = packet, 2 = padding up to the end of the data region
//! 6  link     u16  link type of the packet (pcap LINKTYPE_*)
//! 8  caplen   u32  captured bytes that follow the header
//! 12 origlen  u32  length of the packet on the wire
//! 16 ts_ns    u64  capture time, ns since the Unix epoch
//! 24 seq      u64  packet number at the source (pcap_cnt), 1-based
//! 32 iface    u16  interface index at the source
//! 34 flags    u16  reserved for the source (0)
//! 36 file     u32  the capture file the packet came from: its index in the run's file
//!                  table (`pcap-files`, see [`crate::files`]), 1-based; 0 = none
//! 40 data     caplen bytes, then padding to 8
//! ```
//!
//! A record never wraps: when it does not fit before the end of the data region, the
//! producer writes a padding record to the end and continues at offset 0.
//!
//! # Protocol
//!
//! The producer writes records beyond `head`, then publishes them all at once by storing
//! `head` (release). The consumer reads records between `tail` and `head` and, once it has
//! processed a batch, stores `tail` (release); only then may the producer reuse that space.
//! A consumer that dies without releasing leaves `tail` where the last released batch
//! ended, so its replacement sees the unreleased batch again (at-least-once delivery).
//!
//! Waiting uses the eventcount pattern on the `*_seq` futex words: the waiter announces
//! itself in its `waiting` flag, re-checks the condition, then sleeps on the sequence word;
//! the other side bumps the sequence word after publishing and issues a wake only when the
//! flag is set. So a side that keeps up never makes a syscall.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use memmap2::{MmapMut, MmapOptions};

use crate::futex;
use crate::{Staged, io_err, stage};

/// File magic: the first 8 bytes of a ring file.
pub const MAGIC: u64 = u64::from_le_bytes(*b"MKRING01");
/// Layout version; bumped on any incompatible change.
pub const VERSION: u32 = 1;
/// Bytes before the data region.
pub const HEADER_SIZE: usize = 4096;
/// Bytes of a record header.
pub const RECORD_HEADER_SIZE: usize = 40;
/// Smallest data region accepted.
pub const MIN_CAPACITY: usize = 64 * 1024;
/// Largest data region accepted (64 GiB).
pub const MAX_CAPACITY: usize = 1 << 36;
/// A side whose heartbeat is older than this is considered gone.
pub const STALE_AFTER: Duration = Duration::from_secs(3);

const KIND_PACKET: u16 = 1;
const KIND_PAD: u16 = 2;
/// Spins on the shared word before going to sleep in the kernel.
const SPINS_BEFORE_SLEEP: u32 = 64;

/// Errors of ring setup and of reading a ring another process wrote.
#[derive(Debug, thiserror::Error)]
pub enum RingError {
    #[error("ring {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "ring {path}: capacity {capacity} must be a power of two between {MIN_CAPACITY} and {MAX_CAPACITY} bytes"
    )]
    BadCapacity { path: PathBuf, capacity: usize },
    #[error("ring {path}: not a Meerkat ring (bad magic or size)")]
    NotARing { path: PathBuf },
    #[error("ring {path}: layout version {found}, this build reads version {VERSION}")]
    Version { path: PathBuf, found: u32 },
    #[error("ring {path}: already has a live {side} (pid {pid})")]
    Busy {
        path: PathBuf,
        side: &'static str,
        pid: u32,
    },
    #[error("record of {len} bytes exceeds the ring's largest record ({max} bytes)")]
    RecordTooLarge { len: usize, max: usize },
    #[error("ring {path}: corrupt record at byte {position}: {reason}")]
    Corrupt {
        path: PathBuf,
        position: u64,
        reason: &'static str,
    },
}

#[repr(C)]
struct MetaLine {
    magic: AtomicU64,
    version: u32,
    header_size: u32,
    capacity: u64,
    created_ns: u64,
}

#[repr(C)]
struct ProducerLine {
    head: AtomicU64,
    head_seq: AtomicU32,
    waiting: AtomicU32,
    pid: AtomicU32,
    eof: AtomicU32,
    heartbeat_ns: AtomicU64,
    records: AtomicU64,
    full_waits: AtomicU64,
    /// Packet number (`seq`) of the last published record (0 = none since the producer
    /// reset it): a restarted capture skips what the ring already received.
    last_seq: AtomicU64,
}

#[repr(C)]
struct ConsumerLine {
    tail: AtomicU64,
    tail_seq: AtomicU32,
    waiting: AtomicU32,
    pid: AtomicU32,
    _reserved: u32,
    heartbeat_ns: AtomicU64,
    records: AtomicU64,
    corrupt: AtomicU64,
}

#[repr(C, align(128))]
struct Line<T>(T);

#[repr(C)]
struct Header {
    meta: Line<MetaLine>,
    prod: Line<ProducerLine>,
    cons: Line<ConsumerLine>,
}

const _: () = assert!(std::mem::size_of::<Header>() <= HEADER_SIZE);

/// What the producer attaches to each packet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PacketMeta {
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Packet number at the source (pcap_cnt), 1-based.
    pub seq: u64,
    /// Length on the wire.
    pub origlen: u32,
    /// pcap link type (1 = Ethernet, ...).
    pub link_type: u16,
    /// Interface index at the source.
    pub iface: u16,
    /// The capture file of the packet: its index in the run's file table
    /// ([`crate::files`]), 1-based; 0 = not from a file (or not recorded).
    pub file: u32,
}

/// A packet read from the ring; the bytes stay valid until the consumer releases.
#[derive(Debug, Clone, Copy)]
pub struct Record<'a> {
    pub meta: PacketMeta,
    pub data: &'a [u8],
    /// Ring positions of the record: where it starts and where the next begins (both
    /// record boundaries, valid for [`Consumer::release_to`]).
    pub pos: (u64, u64),
}

/// Result of [`Consumer::wait`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitOutcome {
    /// Records are available.
    Ready,
    /// The producer finished and every record has been read.
    Eof,
    /// Nothing arrived within the timeout.
    TimedOut,
}

/// A snapshot of a ring's header, for supervisors and counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingStatus {
    pub capacity: u64,
    pub head: u64,
    pub tail: u64,
    pub eof: bool,
    pub producer_pid: u32,
    pub consumer_pid: u32,
    /// Whether the consumer's heartbeat is recent.
    pub consumer_alive: bool,
    pub producer_alive: bool,
    pub records_written: u64,
    pub records_read: u64,
    pub full_waits: u64,
    pub corrupt: u64,
    /// Packet number of the last published record (see [`Producer::published_seq`]).
    pub last_seq: u64,
}

impl RingStatus {
    /// Bytes published and not yet released.
    pub fn used(&self) -> u64 {
        self.head.saturating_sub(self.tail)
    }
}

/// Monotonic clock in ns (CLOCK_MONOTONIC is host-wide, so both sides compare it).
fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own; CLOCK_MONOTONIC always exists.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts);
    }
    (ts.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(ts.tv_nsec as u64)
}

fn is_fresh(heartbeat_ns: u64) -> bool {
    heartbeat_ns != 0 && now_ns().saturating_sub(heartbeat_ns) < STALE_AFTER.as_nanos() as u64
}

/// Length of a record holding `caplen` bytes, padded to 8.
fn record_len(caplen: usize) -> usize {
    (RECORD_HEADER_SIZE + caplen + 7) & !7
}

/// An mmap of a ring file. Only raw pointers into it are handed out, so the shared
/// header (atomics) and the data region never alias a `&mut`.
struct Mapping {
    _map: MmapMut,
    base: NonNull<u8>,
    capacity: usize,
    path: PathBuf,
}

// SAFETY: the mapping is plain shared memory; all cross-thread access to the header goes
// through atomics, and the data region is accessed by one side at a time per the protocol.
unsafe impl Send for Mapping {}

impl Mapping {
    fn open(path: &Path) -> Result<Mapping, RingError> {
        let io = io_err(path);
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        Self::from_file(&file, path)
    }

    fn from_file(file: &File, path: &Path) -> Result<Mapping, RingError> {
        let io = io_err(path);
        let len = file.metadata().map_err(io)?.len() as usize;
        if len < HEADER_SIZE + MIN_CAPACITY {
            return Err(RingError::NotARing {
                path: path.to_path_buf(),
            });
        }
        // SAFETY: mapping a regular file we opened read-write; other processes modify it
        // concurrently, which is the point: we only touch it through atomics and through
        // the SPSC protocol below.
        let mut map = unsafe { MmapOptions::new().len(len).map_mut(file) }.map_err(io)?;
        let base = NonNull::new(map.as_mut_ptr()).ok_or_else(|| RingError::NotARing {
            path: path.to_path_buf(),
        })?;
        let mut m = Mapping {
            _map: map,
            base,
            capacity: 0,
            path: path.to_path_buf(),
        };
        let h = m.header();
        if h.meta.0.magic.load(Ordering::Acquire) != MAGIC {
            return Err(RingError::NotARing {
                path: path.to_path_buf(),
            });
        }
        if h.meta.0.version != VERSION {
            return Err(RingError::Version {
                path: path.to_path_buf(),
                found: h.meta.0.version,
            });
        }
        let cap = h.meta.0.capacity as usize;
        if h.meta.0.header_size as usize != HEADER_SIZE
            || !cap.is_power_of_two()
            || len != HEADER_SIZE + cap
        {
            return Err(RingError::NotARing {
                path: path.to_path_buf(),
            });
        }
        m.capacity = cap;
        Ok(m)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping is at least HEADER_SIZE bytes, page aligned (so aligned for
        // Header), and Header holds only atomics and fields that never change after
        // creation.
        unsafe { &*(self.base.as_ptr() as *const Header) }
    }

    fn data(&self) -> *mut u8 {
        // SAFETY: HEADER_SIZE is within the mapping (checked at open).
        unsafe { self.base.as_ptr().add(HEADER_SIZE) }
    }
}

/// Creates a ring file atomically (written beside it, then hard-linked into place, so a
/// reader never sees a half-made ring and two creators cannot replace each other's ring).
/// Returns `Ok(false)` when a ring already exists at `path`; it is then validated.
pub fn create(path: &Path, capacity: usize) -> Result<bool, RingError> {
    if !capacity.is_power_of_two() || !(MIN_CAPACITY..=MAX_CAPACITY).contains(&capacity) {
        return Err(RingError::BadCapacity {
            path: path.to_path_buf(),
            capacity,
        });
    }
    if path.exists() {
        Mapping::open(path)?;
        return Ok(false);
    }
    let io = io_err(path);
    let Staged { tmp, mut map } = stage(path, HEADER_SIZE + capacity)?;
    let base = map.as_mut_ptr();
    // SAFETY: the mapping is page aligned and larger than the header; nobody else maps
    // the temporary file yet, and the header is zeroed (fresh file).
    let meta = unsafe { &mut *(base as *mut MetaLine) };
    meta.version = VERSION;
    meta.header_size = HEADER_SIZE as u32;
    meta.capacity = capacity as u64;
    meta.created_ns = now_ns();
    meta.magic.store(MAGIC, Ordering::Release);
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    let created = match linked {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        Err(e) => return Err(io(e)),
    };
    if !created {
        Mapping::open(path)?;
    }
    Ok(created)
}

/// Reads a ring's header without attaching to it.
pub fn status(path: &Path) -> Result<RingStatus, RingError> {
    let m = Mapping::open(path)?;
    let h = m.header();
    let p = &h.prod.0;
    let c = &h.cons.0;
    Ok(RingStatus {
        capacity: m.capacity as u64,
        head: p.head.load(Ordering::Acquire),
        tail: c.tail.load(Ordering::Acquire),
        eof: p.eof.load(Ordering::Acquire) != 0,
        producer_pid: p.pid.load(Ordering::Relaxed),
        consumer_pid: c.pid.load(Ordering::Relaxed),
        consumer_alive: c.pid.load(Ordering::Relaxed) != 0
            && is_fresh(c.heartbeat_ns.load(Ordering::Relaxed)),
        producer_alive: p.pid.load(Ordering::Relaxed) != 0
            && is_fresh(p.heartbeat_ns.load(Ordering::Relaxed)),
        records_written: p.records.load(Ordering::Relaxed),
        records_read: c.records.load(Ordering::Relaxed),
        full_waits: p.full_waits.load(Ordering::Relaxed),
        corrupt: c.corrupt.load(Ordering::Relaxed),
        last_seq: p.last_seq.load(Ordering::Acquire),
    })
}

/// Whether `pid` certainly no longer exists. Across PID namespaces (containers) a pid may
/// name an unrelated process, so "exists" proves nothing and the heartbeat decides.
fn pid_is_gone(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    // SAFETY: signal 0 only checks for existence and permission; it sends nothing.
    let r = unsafe { libc::kill(pid, 0) };
    r == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

fn claim(
    pid_word: &AtomicU32,
    heartbeat: &AtomicU64,
    side: &'static str,
    path: &Path,
) -> Result<(), RingError> {
    let me = std::process::id();
    let current = pid_word.load(Ordering::Acquire);
    if current != 0
        && current != me
        && is_fresh(heartbeat.load(Ordering::Acquire))
        && !pid_is_gone(current)
    {
        return Err(RingError::Busy {
            path: path.to_path_buf(),
            side,
            pid: current,
        });
    }
    if pid_word
        .compare_exchange(current, me, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return Err(RingError::Busy {
            path: path.to_path_buf(),
            side,
            pid: pid_word.load(Ordering::Relaxed),
        });
    }
    heartbeat.store(now_ns(), Ordering::Release);
    Ok(())
}

/// The writing side of a ring.
pub struct Producer {
    map: Mapping,
    mask: u64,
    /// Write position, published or not.
    head: u64,
    /// Last position stored in the shared `head`.
    published: u64,
    /// Last `tail` read from the consumer line.
    tail_cache: u64,
    /// Records written since the last publish.
    pending: u64,
    /// `seq` of the last record written.
    last_seq: u64,
    max_record: usize,
}

impl std::fmt::Debug for Producer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Producer")
            .field("path", &self.map.path)
            .field("head", &self.head)
            .finish()
    }
}

impl Producer {
    /// Attaches as the producer. A previous producer must have detached or gone stale.
    /// Continues after the last published record and clears the end-of-stream flag.
    pub fn attach(path: &Path) -> Result<Producer, RingError> {
        let map = Mapping::open(path)?;
        let h = map.header();
        claim(&h.prod.0.pid, &h.prod.0.heartbeat_ns, "producer", path)?;
        h.prod.0.eof.store(0, Ordering::Release);
        let head = h.prod.0.head.load(Ordering::Acquire);
        let tail = h.cons.0.tail.load(Ordering::Acquire);
        let cap = map.capacity;
        Ok(Producer {
            mask: cap as u64 - 1,
            head,
            published: head,
            tail_cache: tail,
            pending: 0,
            last_seq: h.prod.0.last_seq.load(Ordering::Acquire),
            max_record: cap / 4,
            map,
        })
    }

    /// Packet number (`PacketMeta::seq`) of the last record a producer of this ring
    /// published, 0 after [`reset_seq`](Self::reset_seq). A capture that replaces a dead
    /// one reads it to skip the packets the ring already has.
    pub fn published_seq(&self) -> u64 {
        self.map.header().prod.0.last_seq.load(Ordering::Acquire)
    }

    /// Starts a new numbering (a new input): forgets the last published packet number.
    pub fn reset_seq(&mut self) {
        self.last_seq = 0;
        self.map
            .header()
            .prod
            .0
            .last_seq
            .store(0, Ordering::Release);
    }

    /// The largest packet this ring takes.
    pub fn max_packet(&self) -> usize {
        self.max_record - RECORD_HEADER_SIZE
    }

    /// Data region size in bytes.
    pub fn capacity(&self) -> usize {
        self.map.capacity
    }

    fn free(&self) -> u64 {
        self.map.capacity as u64 - (self.head - self.tail_cache)
    }

    fn has_space(&mut self, n: u64) -> bool {
        if self.free() >= n {
            return true;
        }
        self.tail_cache = self.map.header().cons.0.tail.load(Ordering::Acquire);
        self.free() >= n
    }

    /// Writes one packet after the last one, unpublished. `Ok(false)` when the ring has no
    /// room now (nothing was written).
    pub fn try_push(&mut self, meta: &PacketMeta, data: &[u8]) -> Result<bool, RingError> {
        let len = record_len(data.len());
        if len > self.max_record {
            return Err(RingError::RecordTooLarge {
                len,
                max: self.max_record,
            });
        }
        let off = (self.head & self.mask) as usize;
        let to_end = self.map.capacity - off;
        let pad = if len > to_end { to_end } else { 0 };
        if !self.has_space((pad + len) as u64) {
            return Ok(false);
        }
        let base = self.map.data();
        let mut off = off;
        if pad != 0 {
            // SAFETY: [off, off + 8) lies within the data region (to_end >= 8 because every
            // record and therefore every offset is a multiple of 8), and the consumer does
            // not read beyond the published head.
            unsafe {
                let p = base.add(off);
                (p as *mut u32).write(pad as u32);
                (p.add(4) as *mut u16).write(KIND_PAD);
            }
            self.head += pad as u64;
            off = 0;
        }
        // SAFETY: [off, off + len) lies within the data region (len <= to_end, or off == 0
        // and len <= capacity / 4), is free per `has_space`, and 8-aligned for the header
        // fields. The source slice cannot overlap the ring (it is the caller's memory).
        unsafe {
            let p = base.add(off);
            (p as *mut u32).write(len as u32);
            (p.add(4) as *mut u16).write(KIND_PACKET);
            (p.add(6) as *mut u16).write(meta.link_type);
            (p.add(8) as *mut u32).write(data.len() as u32);
            (p.add(12) as *mut u32).write(meta.origlen);
            (p.add(16) as *mut u64).write(meta.ts_ns);
            (p.add(24) as *mut u64).write(meta.seq);
            (p.add(32) as *mut u16).write(meta.iface);
            (p.add(34) as *mut u16).write(0);
            (p.add(36) as *mut u32).write(meta.file);
            std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(RECORD_HEADER_SIZE), data.len());
        }
        self.head += len as u64;
        self.pending += 1;
        self.last_seq = meta.seq;
        Ok(true)
    }

    /// Makes every record written so far visible to the consumer, waking it if it sleeps.
    pub fn publish(&mut self) {
        let h = self.map.header();
        h.prod.0.heartbeat_ns.store(now_ns(), Ordering::Relaxed);
        if self.head == self.published {
            return;
        }
        h.prod.0.records.fetch_add(self.pending, Ordering::Relaxed);
        self.pending = 0;
        // Before head: a reader that sees the new head sees at least this seq.
        h.prod.0.last_seq.store(self.last_seq, Ordering::Release);
        // SeqCst on both sides of the waiting-flag handshake (store here, load of
        // `waiting` below; store of `waiting`, load of `head` in the consumer) so that
        // either the consumer sees the new head or we see it waiting.
        h.prod.0.head.store(self.head, Ordering::SeqCst);
        h.prod.0.head_seq.fetch_add(1, Ordering::SeqCst);
        self.published = self.head;
        if h.cons.0.waiting.load(Ordering::SeqCst) != 0 {
            futex::wake_all(&h.prod.0.head_seq);
        }
    }

    /// Publishes, then waits until `bytes` are free or `timeout` passes. Returns whether the
    /// space is there.
    pub fn wait_for_space(&mut self, bytes: usize, timeout: Duration) -> bool {
        self.publish();
        let need = bytes as u64;
        if self.has_space(need) {
            return true;
        }
        let h = self.map.header();
        h.prod.0.full_waits.fetch_add(1, Ordering::Relaxed);
        let deadline = Instant::now() + timeout;
        loop {
            for _ in 0..SPINS_BEFORE_SLEEP {
                self.tail_cache = h.cons.0.tail.load(Ordering::Acquire);
                if self.free() >= need {
                    return true;
                }
                std::hint::spin_loop();
            }
            let seq = h.cons.0.tail_seq.load(Ordering::SeqCst);
            h.prod.0.waiting.store(1, Ordering::SeqCst);
            self.tail_cache = h.cons.0.tail.load(Ordering::SeqCst);
            if self.free() >= need {
                h.prod.0.waiting.store(0, Ordering::Relaxed);
                return true;
            }
            let now = Instant::now();
            if now >= deadline {
                h.prod.0.waiting.store(0, Ordering::Relaxed);
                return false;
            }
            futex::wait(
                &h.cons.0.tail_seq,
                seq,
                (deadline - now).min(Duration::from_millis(100)),
            );
            h.prod.0.waiting.store(0, Ordering::Relaxed);
            h.prod.0.heartbeat_ns.store(now_ns(), Ordering::Relaxed);
        }
    }

    /// Writes a packet, waiting for room as long as it takes (offline mode: never drop).
    /// `keep_waiting` is asked after each unsuccessful wait of `poll`; returning `false`
    /// gives up and the packet is not written (`Ok(false)`).
    pub fn push_blocking(
        &mut self,
        meta: &PacketMeta,
        data: &[u8],
        poll: Duration,
        mut keep_waiting: impl FnMut() -> bool,
    ) -> Result<bool, RingError> {
        loop {
            if self.try_push(meta, data)? {
                return Ok(true);
            }
            // Worst case the record needs padding to the end first.
            let need = (record_len(data.len()) * 2).min(self.map.capacity);
            if !self.wait_for_space(need, poll) && !keep_waiting() {
                return Ok(false);
            }
        }
    }

    /// Whether the consumer is attached and its heartbeat is recent.
    pub fn consumer_alive(&self) -> bool {
        let c = &self.map.header().cons.0;
        c.pid.load(Ordering::Relaxed) != 0 && is_fresh(c.heartbeat_ns.load(Ordering::Relaxed))
    }

    /// Publishes everything and marks the end of the stream.
    pub fn finish(&mut self) {
        self.publish();
        let h = self.map.header();
        h.prod.0.eof.store(1, Ordering::SeqCst);
        h.prod.0.head_seq.fetch_add(1, Ordering::SeqCst);
        futex::wake_all(&h.prod.0.head_seq);
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        self.publish();
        let h = self.map.header();
        let _ = h.prod.0.pid.compare_exchange(
            std::process::id(),
            0,
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    }
}

/// The reading side of a ring.
pub struct Consumer {
    map: Mapping,
    mask: u64,
    /// Read position, released or not.
    tail: u64,
    /// Last position stored in the shared `tail`.
    released: u64,
    /// Last `head` read from the producer line.
    head_cache: u64,
    pending: u64,
    /// When set, releases never go beyond this position (see [`Consumer::hold`]).
    ceiling: Option<u64>,
    /// Whether a consumer read this ring before this one attached.
    had_consumer: bool,
}

impl std::fmt::Debug for Consumer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Consumer")
            .field("path", &self.map.path)
            .field("tail", &self.tail)
            .finish()
    }
}

impl Consumer {
    /// Attaches as the consumer, resuming after the last released record. Fails with
    /// [`RingError::Busy`] while another consumer is alive.
    pub fn attach(path: &Path) -> Result<Consumer, RingError> {
        let map = Mapping::open(path)?;
        let h = map.header();
        // A consumer's claim stamps its heartbeat, which nothing clears.
        let had_consumer = h.cons.0.heartbeat_ns.load(Ordering::Acquire) != 0;
        claim(&h.cons.0.pid, &h.cons.0.heartbeat_ns, "consumer", path)?;
        let tail = h.cons.0.tail.load(Ordering::Acquire);
        Ok(Consumer {
            mask: map.capacity as u64 - 1,
            tail,
            released: tail,
            head_cache: tail,
            pending: 0,
            ceiling: None,
            had_consumer,
            map,
        })
    }

    /// Whether another consumer read this ring before this one attached: a new ring
    /// has no predecessor, so no position downstream holds for it can be about it.
    pub fn had_consumer(&self) -> bool {
        self.had_consumer
    }

    /// Data region size in bytes.
    pub fn capacity(&self) -> usize {
        self.map.capacity
    }

    /// The read position: bytes of the ring read so far (released or not). A position
    /// taken right after a record is a record boundary, valid for
    /// [`release_to`](Self::release_to) and [`skip_to`](Self::skip_to).
    pub fn position(&self) -> u64 {
        self.tail
    }

    /// The position released to the producer so far.
    pub fn released(&self) -> u64 {
        self.released
    }

    /// From now on, space is released only up to what [`release_to`](Self::release_to)
    /// allows (also by `release`, `wait` and drop). A worker holds the records it
    /// processed until their events are acknowledged downstream, so that its
    /// replacement processes again whatever a crash lost.
    pub fn hold(&mut self) {
        self.ceiling = Some(self.released);
    }

    /// Releases up to `pos` (clamped to what was read); raises the hold ceiling.
    pub fn release_to(&mut self, pos: u64) {
        let pos = pos.min(self.tail);
        if let Some(c) = &mut self.ceiling {
            *c = (*c).max(pos);
        }
        self.release();
    }

    /// Reads and drops every record before `pos` (a record boundary after the current
    /// position): a replacement worker skips what downstream already has. Returns the
    /// records skipped; stops early at the published head.
    pub fn skip_to(&mut self, pos: u64) -> Result<u64, RingError> {
        let mut n = 0;
        while self.tail < pos {
            match self.next_record()? {
                Some(_) => n += 1,
                None => break,
            }
        }
        Ok(n)
    }

    fn corrupt(&self, reason: &'static str) -> RingError {
        self.map
            .header()
            .cons
            .0
            .corrupt
            .fetch_add(1, Ordering::Relaxed);
        RingError::Corrupt {
            path: self.map.path.clone(),
            position: self.tail,
            reason,
        }
    }

    /// The next record, if one is published. Its bytes stay valid until [`release`]
    /// (which the borrow enforces).
    ///
    /// [`release`]: Consumer::release
    pub fn next_record(&mut self) -> Result<Option<Record<'_>>, RingError> {
        loop {
            if self.tail == self.head_cache {
                self.head_cache = self.map.header().prod.0.head.load(Ordering::Acquire);
                if self.tail == self.head_cache {
                    return Ok(None);
                }
            }
            let available = self.head_cache - self.tail;
            let off = (self.tail & self.mask) as usize;
            let to_end = self.map.capacity - off;
            if available < 8 || !off.is_multiple_of(8) {
                return Err(self.corrupt("truncated record header"));
            }
            let base = self.map.data();
            // SAFETY: off + 8 <= capacity (off is 8-aligned and below capacity); the bytes
            // are published by the producer (below head, acquire-loaded above).
            let (len, kind) = unsafe {
                let p = base.add(off);
                (
                    (p as *const u32).read() as usize,
                    (p.add(4) as *const u16).read(),
                )
            };
            if len < 8 || len % 8 != 0 || len > to_end || len as u64 > available {
                return Err(self.corrupt("bad record length"));
            }
            if kind == KIND_PAD {
                self.tail += len as u64;
                continue;
            }
            if kind != KIND_PACKET || len < RECORD_HEADER_SIZE {
                return Err(self.corrupt("bad record kind"));
            }
            // SAFETY: the whole record [off, off + len) is within the data region and
            // published (checked above); fields are 8-aligned.
            let (meta, caplen) = unsafe {
                let p = base.add(off);
                let caplen = (p.add(8) as *const u32).read() as usize;
                (
                    PacketMeta {
                        link_type: (p.add(6) as *const u16).read(),
                        origlen: (p.add(12) as *const u32).read(),
                        ts_ns: (p.add(16) as *const u64).read(),
                        seq: (p.add(24) as *const u64).read(),
                        iface: (p.add(32) as *const u16).read(),
                        file: (p.add(36) as *const u32).read(),
                    },
                    caplen,
                )
            };
            if RECORD_HEADER_SIZE + caplen > len {
                return Err(self.corrupt("captured length beyond record"));
            }
            let start = self.tail;
            self.tail += len as u64;
            self.pending += 1;
            // SAFETY: [off + 40, off + 40 + caplen) is inside the record; the producer does
            // not write there until we release past it, and the returned borrow of `self`
            // keeps `release` from being called while the slice lives.
            let data =
                unsafe { std::slice::from_raw_parts(base.add(off + RECORD_HEADER_SIZE), caplen) };
            return Ok(Some(Record {
                meta,
                data,
                pos: (start, self.tail),
            }));
        }
    }

    /// The producer's position: the end of what it has published so far.
    pub fn published(&self) -> u64 {
        self.map.header().prod.0.head.load(Ordering::Acquire)
    }

    /// Drops every published record without reading it (after a corrupt record).
    pub fn skip_to_head(&mut self) {
        self.head_cache = self.map.header().prod.0.head.load(Ordering::Acquire);
        self.tail = self.head_cache;
        self.release();
    }

    /// Gives the space of every record read so far back to the producer (under
    /// [`hold`](Self::hold): up to the ceiling).
    pub fn release(&mut self) {
        let h = self.map.header();
        h.cons.0.heartbeat_ns.store(now_ns(), Ordering::Relaxed);
        let to = self.ceiling.map_or(self.tail, |c| c.min(self.tail));
        if to <= self.released {
            return;
        }
        // Under a hold the count runs ahead of the space by at most the held records.
        h.cons.0.records.fetch_add(self.pending, Ordering::Relaxed);
        self.pending = 0;
        h.cons.0.tail.store(to, Ordering::SeqCst);
        h.cons.0.tail_seq.fetch_add(1, Ordering::SeqCst);
        self.released = to;
        if h.prod.0.waiting.load(Ordering::SeqCst) != 0 {
            futex::wake_all(&h.cons.0.tail_seq);
        }
    }

    /// Releases what was read, then waits up to `timeout` for more records.
    pub fn wait(&mut self, timeout: Duration) -> WaitOutcome {
        self.release();
        let h = self.map.header();
        let p = &h.prod.0;
        let deadline = Instant::now() + timeout;
        loop {
            for _ in 0..SPINS_BEFORE_SLEEP {
                self.head_cache = p.head.load(Ordering::Acquire);
                if self.head_cache != self.tail {
                    return WaitOutcome::Ready;
                }
                std::hint::spin_loop();
            }
            let seq = p.head_seq.load(Ordering::SeqCst);
            if p.eof.load(Ordering::SeqCst) != 0 {
                self.head_cache = p.head.load(Ordering::SeqCst);
                return if self.head_cache != self.tail {
                    WaitOutcome::Ready
                } else {
                    WaitOutcome::Eof
                };
            }
            h.cons.0.waiting.store(1, Ordering::SeqCst);
            self.head_cache = p.head.load(Ordering::SeqCst);
            if self.head_cache != self.tail {
                h.cons.0.waiting.store(0, Ordering::Relaxed);
                return WaitOutcome::Ready;
            }
            let now = Instant::now();
            if now >= deadline {
                h.cons.0.waiting.store(0, Ordering::Relaxed);
                return WaitOutcome::TimedOut;
            }
            futex::wait(
                &p.head_seq,
                seq,
                (deadline - now).min(Duration::from_millis(100)),
            );
            h.cons.0.waiting.store(0, Ordering::Relaxed);
            h.cons.0.heartbeat_ns.store(now_ns(), Ordering::Relaxed);
        }
    }

    /// Whether the producer has marked the end of the stream and everything is read.
    pub fn at_eof(&mut self) -> bool {
        let p = &self.map.header().prod.0;
        p.eof.load(Ordering::Acquire) != 0 && p.head.load(Ordering::Acquire) == self.tail
    }
}

impl Drop for Consumer {
    fn drop(&mut self) {
        // Records handed out were processed by the time the consumer is dropped cleanly.
        self.release();
        let h = self.map.header();
        let _ = h.cons.0.pid.compare_exchange(
            std::process::id(),
            0,
            Ordering::AcqRel,
            Ordering::Relaxed,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(cap: usize) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ring-0");
        assert!(create(&path, cap).unwrap());
        (dir, path)
    }

    fn meta(seq: u64) -> PacketMeta {
        PacketMeta {
            ts_ns: seq * 1000,
            seq,
            origlen: 100,
            link_type: 1,
            iface: 0,
            // The file index travels in the record (compared whole below).
            file: seq as u32 ^ 0x8000_0001,
        }
    }

    #[test]
    fn a_consumer_knows_whether_the_ring_had_one_before() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        assert!(p.try_push(&meta(1), b"x").unwrap());
        p.publish();
        // Records already written do not make a predecessor.
        let c = Consumer::attach(&path).unwrap();
        assert!(!c.had_consumer());
        drop(c);
        assert!(Consumer::attach(&path).unwrap().had_consumer());
    }

    #[test]
    fn push_publish_read_release() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        let mut c = Consumer::attach(&path).unwrap();
        assert!(p.try_push(&meta(1), b"hello").unwrap());
        // Not visible before publish.
        assert!(c.next_record().unwrap().is_none());
        p.publish();
        let r = c.next_record().unwrap().unwrap();
        assert_eq!(r.data, b"hello");
        assert_eq!(r.meta, meta(1));
        assert!(c.next_record().unwrap().is_none());
        c.release();
        assert_eq!(status(&path).unwrap().used(), 0);
    }

    #[test]
    fn wraps_with_padding_and_keeps_order() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        let mut c = Consumer::attach(&path).unwrap();
        let payload: Vec<u8> = (0..1000u32).map(|i| i as u8).collect();
        let mut next_expected = 1u64;
        for seq in 1..=2000u64 {
            let data = &payload[..(seq as usize * 7) % 1000];
            while !p.try_push(&meta(seq), data).unwrap() {
                p.publish();
                while let Some(r) = c.next_record().unwrap() {
                    assert_eq!(r.meta.seq, next_expected);
                    assert_eq!(r.data, &payload[..(next_expected as usize * 7) % 1000]);
                    next_expected += 1;
                }
                c.release();
            }
        }
        p.finish();
        while let Some(r) = c.next_record().unwrap() {
            assert_eq!(r.meta.seq, next_expected);
            next_expected += 1;
        }
        assert_eq!(next_expected, 2001);
        assert_eq!(c.wait(Duration::from_millis(10)), WaitOutcome::Eof);
    }

    #[test]
    fn full_ring_refuses_without_writing() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        let data = [7u8; 4000];
        let mut n = 0;
        while p.try_push(&meta(n + 1), &data).unwrap() {
            n += 1;
        }
        assert_eq!(n as usize, MIN_CAPACITY / record_len(4000));
        assert!(!p.wait_for_space(record_len(4000), Duration::from_millis(5)));
        let mut c = Consumer::attach(&path).unwrap();
        // wait_for_space published everything it had.
        let mut got = 0;
        while c.next_record().unwrap().is_some() {
            got += 1;
        }
        assert_eq!(got, n);
        c.release();
        assert!(p.try_push(&meta(n + 1), &data).unwrap());
    }

    #[test]
    fn oversized_record_is_an_error() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        let big = vec![0u8; MIN_CAPACITY / 4];
        assert!(matches!(
            p.try_push(&meta(1), &big),
            Err(RingError::RecordTooLarge { .. })
        ));
        assert!(p.try_push(&meta(1), &big[..p.max_packet()]).unwrap());
    }

    #[test]
    fn new_consumer_resumes_after_last_release() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        for seq in 1..=10 {
            assert!(p.try_push(&meta(seq), b"x").unwrap());
        }
        p.publish();
        {
            let mut c = Consumer::attach(&path).unwrap();
            for _ in 0..4 {
                c.next_record().unwrap().unwrap();
            }
            c.release();
            // Reads two more but "dies" before releasing them.
            c.next_record().unwrap().unwrap();
            c.next_record().unwrap().unwrap();
            std::mem::forget(c);
        }
        // The dead consumer's pid is ours, so we may re-attach immediately.
        let mut c = Consumer::attach(&path).unwrap();
        assert_eq!(c.next_record().unwrap().unwrap().meta.seq, 5);
    }

    #[test]
    fn held_records_are_released_only_to_the_ceiling() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        for seq in 1..=10 {
            assert!(p.try_push(&meta(seq), b"x").unwrap());
        }
        p.publish();
        let after_three;
        {
            let mut c = Consumer::attach(&path).unwrap();
            c.hold();
            for _ in 0..3 {
                c.next_record().unwrap().unwrap();
            }
            after_three = c.position();
            for _ in 0..5 {
                c.next_record().unwrap().unwrap();
            }
            // release, wait and drop keep everything: nothing is acknowledged yet.
            c.release();
            assert_eq!(c.wait(Duration::from_millis(1)), WaitOutcome::Ready);
            assert_eq!(status(&path).unwrap().tail, 0);
            c.release_to(after_three);
            assert_eq!(c.released(), after_three);
            // A position beyond what was read is clamped.
            c.release_to(u64::MAX);
            assert_eq!(c.released(), c.position());
            c.hold();
            c.next_record().unwrap().unwrap();
            // Dies holding record 9.
        }
        let mut c = Consumer::attach(&path).unwrap();
        assert_eq!(c.next_record().unwrap().unwrap().meta.seq, 9);
        drop(c);
        // A replacement told that downstream has everything up to record 3 skips them
        // (records of the same size sit at the same positions in another ring).
        let (_d2, path2) = ring(MIN_CAPACITY);
        let mut p2 = Producer::attach(&path2).unwrap();
        for seq in 1..=5 {
            assert!(p2.try_push(&meta(seq), b"yy").unwrap());
        }
        p2.publish();
        let mut c2 = Consumer::attach(&path2).unwrap();
        assert_eq!(c2.skip_to(after_three).unwrap(), 3);
        assert_eq!(c2.next_record().unwrap().unwrap().meta.seq, 4);
        // Skipping stops at the published head.
        assert_eq!(c2.skip_to(u64::MAX).unwrap(), 1);
    }

    #[test]
    fn producer_records_the_last_published_seq() {
        let (_d, path) = ring(MIN_CAPACITY);
        {
            let mut p = Producer::attach(&path).unwrap();
            assert_eq!(p.published_seq(), 0);
            for seq in 1..=4 {
                assert!(p.try_push(&meta(seq), b"x").unwrap());
            }
            p.publish();
            assert!(p.try_push(&meta(5), b"x").unwrap());
            // Dies without publishing record 5.
            std::mem::forget(p);
        }
        assert_eq!(status(&path).unwrap().last_seq, 4);
        let mut p = Producer::attach(&path).unwrap();
        assert_eq!(p.published_seq(), 4);
        p.reset_seq();
        assert_eq!(status(&path).unwrap().last_seq, 0);
    }

    #[test]
    fn live_consumer_blocks_a_second_one() {
        let (_d, path) = ring(MIN_CAPACITY);
        let c = Consumer::attach(&path).unwrap();
        // Pretend another process holds it.
        let m = Mapping::open(&path).unwrap();
        m.header().cons.0.pid.store(1, Ordering::Release);
        assert!(matches!(
            Consumer::attach(&path),
            Err(RingError::Busy { pid: 1, .. })
        ));
        // A stale heartbeat lets a new consumer take over.
        m.header().cons.0.heartbeat_ns.store(1, Ordering::Release);
        assert!(Consumer::attach(&path).is_ok());
        drop(c);
    }

    #[test]
    fn corrupt_length_is_reported_not_followed() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        assert!(p.try_push(&meta(1), b"abc").unwrap());
        p.publish();
        let m = Mapping::open(&path).unwrap();
        // SAFETY (test): overwrite the first record's length with garbage.
        unsafe { (m.data() as *mut u32).write(12345) };
        let mut c = Consumer::attach(&path).unwrap();
        assert!(matches!(c.next_record(), Err(RingError::Corrupt { .. })));
        c.skip_to_head();
        assert!(c.next_record().unwrap().is_none());
        assert_eq!(status(&path).unwrap().corrupt, 1);
    }

    #[test]
    fn create_is_idempotent_and_validates() {
        let (_d, path) = ring(MIN_CAPACITY);
        assert!(!create(&path, MIN_CAPACITY).unwrap());
        assert!(matches!(
            create(&path.with_file_name("x"), 1000),
            Err(RingError::BadCapacity { .. })
        ));
        let junk = path.with_file_name("junk");
        std::fs::write(&junk, vec![0u8; HEADER_SIZE + MIN_CAPACITY]).unwrap();
        assert!(matches!(
            Consumer::attach(&junk),
            Err(RingError::NotARing { .. })
        ));
    }

    #[test]
    fn wait_times_out_then_sees_data_and_eof() {
        let (_d, path) = ring(MIN_CAPACITY);
        let mut p = Producer::attach(&path).unwrap();
        let mut c = Consumer::attach(&path).unwrap();
        assert_eq!(c.wait(Duration::from_millis(5)), WaitOutcome::TimedOut);
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(20));
            assert!(p.try_push(&meta(1), b"late").unwrap());
            p.finish();
        });
        assert_eq!(c.wait(Duration::from_secs(10)), WaitOutcome::Ready);
        assert_eq!(c.next_record().unwrap().unwrap().data, b"late");
        t.join().unwrap();
        assert_eq!(c.wait(Duration::from_secs(10)), WaitOutcome::Eof);
    }
}
