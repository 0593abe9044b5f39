//! The backlog: a bounded in-memory packet queue inside the capture process, between a
//! packet source (the kernel's or the NIC's small ring) and the workers' rings.
//!
//! A micro-burst arrives faster than the workers inspect it. The NIC ring holds only a few
//! thousand descriptors, so without a software queue the burst overflows it and packets
//! are lost although the average load is low. The backlog is filled by a thread that does
//! nothing but move packets out of the source ring (a copy, no hashing, no waiting), and
//! drained by another thread that hashes each packet to its worker and writes it into that
//! worker's ring, waiting when the ring is full. When the backlog itself is full the fill
//! side drops the packet and counts it: live capture never blocks the source.
//!
//! It is a single-producer single-consumer queue of variable-length records in one byte
//! buffer, bounded both in packets (`capture.backlog-size`) and in bytes. Positions are
//! monotonically increasing counters; the producer publishes its head once per batch and
//! the consumer its tail once per batch, so neither side makes a syscall per packet. The
//! consumer sleeps with `thread::park` when the queue is empty; `unpark` after a publish
//! costs an atomic swap unless the consumer actually sleeps.
//!
//! Record: `len u32 | caplen u32 | origlen u32 | flags u32 | ts_ns u64 | data`, padded to 8.
//! A record never wraps; a padding record (`caplen == PAD`) fills the end of the buffer.

use std::cell::UnsafeCell;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::Thread;

const HEADER: usize = 24;
const PAD: u32 = u32::MAX;
/// Bytes of buffer per packet of `backlog-size`: enough for the average packet of real
/// traffic (the buffer's untouched pages cost no memory until a burst reaches them).
pub const BYTES_PER_PACKET: usize = 2048;
/// Smallest byte buffer (so that one maximal record always fits a few times).
const MIN_BYTES: usize = 1 << 20;
/// Stride of the pre-faulting writes (the smallest page size on Linux).
const PAGE: usize = 4096;

#[repr(align(128))]
struct Padded<T>(T);

struct Shared {
    buf: Box<[UnsafeCell<u8>]>,
    mask: u64,
    max_packets: u64,
    /// Bytes and packets published by the producer.
    head: Padded<(AtomicU64, AtomicU64)>,
    /// Bytes and packets released by the consumer.
    tail: Padded<(AtomicU64, AtomicU64)>,
}

// SAFETY: the byte buffer is written only by the producer in [head, tail + capacity) and
// read only by the consumer in [tail, head); the two ranges never overlap, and ownership of
// a range passes with the release/acquire stores and loads of `head` and `tail`.
unsafe impl Sync for Shared {}
// SAFETY: as above.
unsafe impl Send for Shared {}

impl Shared {
    fn base(&self) -> *mut u8 {
        UnsafeCell::raw_get(self.buf.as_ptr())
    }
    fn capacity(&self) -> usize {
        self.buf.len()
    }
}

/// Creates a backlog for `max_packets` packets; returns its two ends.
pub fn backlog(max_packets: usize) -> (BacklogWriter, BacklogReader) {
    let bytes = max_packets
        .saturating_mul(BYTES_PER_PACKET)
        .max(MIN_BYTES)
        .next_power_of_two();
    let zeroed: Box<[u8]> = vec![0u8; bytes].into_boxed_slice();
    // SAFETY: UnsafeCell<u8> has the same layout as u8 (repr(transparent)), so the box
    // keeps its layout; ownership moves from one box to the other.
    let mut buf: Box<[UnsafeCell<u8>]> =
        unsafe { Box::from_raw(Box::into_raw(zeroed) as *mut [UnsafeCell<u8>]) };
    // A zeroed allocation this large comes from mmap with no memory behind it yet. Touch
    // every page now: a page fault per few packets in the middle of a burst would slow the
    // very thread that must keep up with the NIC. (The backlog is a reservation, as
    // Suricata's mbuf pool is: backlog-size x BYTES_PER_PACKET bytes.)
    for cell in buf.iter_mut().step_by(PAGE) {
        // SAFETY: a valid, exclusively borrowed byte; volatile so that the store of a zero
        // into zeroed memory is not optimised away.
        unsafe { std::ptr::write_volatile(cell.get_mut(), 0) };
    }
    let shared = Arc::new(Shared {
        buf,
        mask: bytes as u64 - 1,
        max_packets: max_packets.max(1) as u64,
        head: Padded((AtomicU64::new(0), AtomicU64::new(0))),
        tail: Padded((AtomicU64::new(0), AtomicU64::new(0))),
    });
    (
        BacklogWriter {
            shared: shared.clone(),
            head: 0,
            head_pkts: 0,
            tail_cache: 0,
            tail_pkts_cache: 0,
            high_water: 0,
            reader: None,
        },
        BacklogReader {
            shared,
            tail: 0,
            tail_pkts: 0,
            head_cache: 0,
        },
    )
}

/// A packet as it sits in the backlog.
#[derive(Debug, Clone, Copy)]
pub struct Queued<'a> {
    pub ts_ns: u64,
    pub origlen: u32,
    pub data: &'a [u8],
}

/// The fill side (the source thread).
pub struct BacklogWriter {
    shared: Arc<Shared>,
    head: u64,
    head_pkts: u64,
    tail_cache: u64,
    tail_pkts_cache: u64,
    high_water: u64,
    reader: Option<Thread>,
}

impl std::fmt::Debug for BacklogWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BacklogWriter")
            .field("queued", &(self.head_pkts - self.tail_pkts_cache))
            .finish()
    }
}

impl BacklogWriter {
    /// The thread to wake after a publish (the drain thread).
    pub fn set_reader(&mut self, t: Thread) {
        self.reader = Some(t);
    }

    /// Largest packet the backlog stores (longer ones are truncated to it).
    pub fn max_packet(&self) -> usize {
        self.shared.capacity() / 4 - HEADER
    }

    fn refresh_tail(&mut self) {
        self.tail_cache = self.shared.tail.0.0.load(Ordering::Acquire);
        self.tail_pkts_cache = self.shared.tail.0.1.load(Ordering::Acquire);
    }

    /// Appends a packet, unpublished. `false` when the backlog is full (the caller drops
    /// and counts the packet).
    pub fn try_push(&mut self, ts_ns: u64, origlen: u32, data: &[u8]) -> bool {
        let data = &data[..data.len().min(self.max_packet())];
        let cap = self.shared.capacity();
        let len = (HEADER + data.len() + 7) & !7;
        let off = (self.head & self.shared.mask) as usize;
        let to_end = cap - off;
        let pad = if len > to_end { to_end } else { 0 };
        let need = (pad + len) as u64;
        let fits = |w: &Self| {
            w.head_pkts - w.tail_pkts_cache < w.shared.max_packets
                && cap as u64 - (w.head - w.tail_cache) >= need
        };
        if !fits(self) {
            self.refresh_tail();
            if !fits(self) {
                return false;
            }
        }
        let base = self.shared.base();
        let mut off = off;
        if pad != 0 {
            // SAFETY: [off, off + 8) is inside the buffer (every offset is a multiple of 8
            // and below cap) and free (checked above).
            unsafe {
                let p = base.add(off);
                (p as *mut u32).write(pad as u32);
                (p.add(4) as *mut u32).write(PAD);
            }
            self.head += pad as u64;
            off = 0;
        }
        // SAFETY: [off, off + len) is inside the buffer (len <= to_end, or off == 0 and
        // len <= cap / 4) and free; 8-aligned for the header fields; `data` is the
        // caller's memory, not the buffer.
        unsafe {
            let p = base.add(off);
            (p as *mut u32).write(len as u32);
            (p.add(4) as *mut u32).write(data.len() as u32);
            (p.add(8) as *mut u32).write(origlen);
            (p.add(12) as *mut u32).write(0);
            (p.add(16) as *mut u64).write(ts_ns);
            std::ptr::copy_nonoverlapping(data.as_ptr(), p.add(HEADER), data.len());
        }
        self.head += len as u64;
        self.head_pkts += 1;
        true
    }

    /// Makes everything pushed so far visible to the reader and wakes it.
    pub fn publish(&mut self) {
        let s = &self.shared;
        if s.head.0.0.load(Ordering::Relaxed) == self.head {
            return;
        }
        s.head.0.1.store(self.head_pkts, Ordering::Release);
        s.head.0.0.store(self.head, Ordering::Release);
        // One load of the reader's position per batch keeps the high-water mark true.
        self.refresh_tail();
        let depth = self.head_pkts - self.tail_pkts_cache;
        self.high_water = self.high_water.max(depth);
        if let Some(t) = &self.reader {
            t.unpark();
        }
    }

    /// Most packets seen queued at a publish (the reader's position is read at each
    /// publish, so this is the peak as of the batches, within one drain batch).
    pub fn high_water(&self) -> u64 {
        self.high_water
    }

    /// Packets queued now (as of the last look at the reader's position).
    pub fn depth(&mut self) -> u64 {
        self.refresh_tail();
        self.head_pkts - self.tail_pkts_cache
    }
}

impl Drop for BacklogWriter {
    fn drop(&mut self) {
        self.publish();
        // Wake the reader so that it notices the end.
        if let Some(t) = &self.reader {
            t.unpark();
        }
    }
}

/// The drain side.
pub struct BacklogReader {
    shared: Arc<Shared>,
    tail: u64,
    tail_pkts: u64,
    head_cache: u64,
}

impl std::fmt::Debug for BacklogReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BacklogReader")
            .field("tail", &self.tail)
            .finish()
    }
}

impl BacklogReader {
    /// Whether the writer is gone (its end was dropped) and everything has been read.
    pub fn finished(&mut self) -> bool {
        Arc::strong_count(&self.shared) == 1 && self.is_empty()
    }

    /// Whether nothing is published beyond what was read.
    pub fn is_empty(&mut self) -> bool {
        if self.tail != self.head_cache {
            return false;
        }
        self.head_cache = self.shared.head.0.0.load(Ordering::Acquire);
        self.tail == self.head_cache
    }

    /// Hands up to `max` queued packets to `f` in order, then releases their space.
    /// `f` returns `false` to stop before consuming the packet it was given (it is
    /// handed over again next time). Returns the packets consumed.
    pub fn drain<F: FnMut(Queued<'_>) -> bool>(&mut self, max: usize, mut f: F) -> usize {
        let mut n = 0;
        while n < max {
            if self.tail == self.head_cache {
                self.head_cache = self.shared.head.0.0.load(Ordering::Acquire);
                if self.tail == self.head_cache {
                    break;
                }
            }
            let off = (self.tail & self.shared.mask) as usize;
            let base = self.shared.base();
            // SAFETY: the record at `off` is published (below the acquire-loaded head),
            // 8-aligned and written whole by the writer, which does not touch it again
            // until we release past it.
            let (len, caplen, origlen, ts_ns) = unsafe {
                let p = base.add(off);
                (
                    (p as *const u32).read() as usize,
                    (p.add(4) as *const u32).read(),
                    (p.add(8) as *const u32).read(),
                    (p.add(16) as *const u64).read(),
                )
            };
            if caplen == PAD {
                self.tail += len as u64;
                continue;
            }
            // SAFETY: as above; caplen bytes follow the header inside the record.
            let data =
                unsafe { std::slice::from_raw_parts(base.add(off + HEADER), caplen as usize) };
            if !f(Queued {
                ts_ns,
                origlen,
                data,
            }) {
                break;
            }
            self.tail += len as u64;
            self.tail_pkts += 1;
            n += 1;
        }
        self.release();
        n
    }

    fn release(&mut self) {
        let s = &self.shared;
        s.tail.0.1.store(self.tail_pkts, Ordering::Release);
        s.tail.0.0.store(self.tail, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fifo_with_wrap_and_packet_bound() {
        let (mut w, mut r) = backlog(100);
        let payload: Vec<u8> = (0..1500u32).map(|i| i as u8).collect();
        // Bounded by packets: the 101st does not fit.
        for i in 0..100u64 {
            assert!(w.try_push(i, 60 + i as u32, &payload[..(i as usize * 13) % 1500]));
        }
        assert!(!w.try_push(100, 0, b"x"));
        w.publish();
        assert_eq!(w.high_water(), 100);
        assert_eq!(w.depth(), 100);
        let mut next = 0u64;
        let mut seen = |q: Queued<'_>| {
            assert_eq!(q.ts_ns, next);
            assert_eq!(q.origlen, 60 + next as u32);
            assert_eq!(q.data, &payload[..(next as usize * 13) % 1500]);
            next += 1;
            true
        };
        assert_eq!(r.drain(40, &mut seen), 40);
        assert_eq!(w.depth(), 60);
        // The mark is the peak, not the current depth.
        assert!(w.try_push(100, 160, &payload[..1300]));
        w.publish();
        assert_eq!(w.high_water(), 100);
        let mut pushed = 101u64;
        // Space came back: keep pushing across the end of the buffer many times.
        for _ in 0..200 {
            while w.try_push(
                pushed,
                60 + pushed as u32,
                &payload[..(pushed as usize * 13) % 1500],
            ) {
                pushed += 1;
            }
            w.publish();
            r.drain(usize::MAX, &mut seen);
        }
        assert_eq!(next, pushed);
        assert!(pushed > 10_000);
        assert!(r.is_empty());
        drop(w);
        assert!(r.finished());
    }

    #[test]
    fn bounded_by_bytes_and_truncates_giants() {
        let (mut w, mut r) = backlog(1000);
        let cap = w.shared.capacity();
        let big = vec![7u8; 64 * 1024];
        let mut n = 0;
        while w.try_push(n, 0, &big) {
            n += 1;
        }
        assert_eq!(n as usize, cap / (HEADER + big.len()));
        let giant = vec![1u8; cap];
        let (mut w2, mut r2) = backlog(1);
        assert!(w2.try_push(0, cap as u32, &giant));
        w2.publish();
        r2.drain(1, |q| {
            assert_eq!(q.data.len(), w2.max_packet());
            assert_eq!(q.origlen, cap as u32);
            true
        });
        w.publish();
        assert_eq!(r.drain(usize::MAX, |_| true), n as usize);
    }

    #[test]
    fn refusing_a_packet_keeps_it_for_later() {
        let (mut w, mut r) = backlog(10);
        for i in 0..3 {
            assert!(w.try_push(i, 1, b"abc"));
        }
        w.publish();
        let mut calls = 0;
        assert_eq!(
            r.drain(10, |_| {
                calls += 1;
                calls < 2
            }),
            1
        );
        let mut got = Vec::new();
        r.drain(10, |q| {
            got.push(q.ts_ns);
            true
        });
        assert_eq!(got, [1, 2]);
    }

    #[test]
    fn threads_move_a_million_packets_in_order() {
        let (mut w, mut r) = backlog(1024);
        let reader = std::thread::spawn(move || {
            let mut next = 0u64;
            loop {
                let n = r.drain(256, |q| {
                    assert_eq!(q.ts_ns, next);
                    assert_eq!(q.data, &next.to_le_bytes());
                    next += 1;
                    true
                });
                if n == 0 {
                    if r.finished() {
                        break;
                    }
                    std::thread::park_timeout(std::time::Duration::from_millis(1));
                }
            }
            next
        });
        w.set_reader(reader.thread().clone());
        let mut i = 0u64;
        while i < 1_000_000 {
            if w.try_push(i, 8, &i.to_le_bytes()) {
                i += 1;
                if i.is_multiple_of(64) {
                    w.publish();
                }
            } else {
                w.publish();
                std::thread::yield_now();
            }
        }
        drop(w);
        assert_eq!(reader.join().unwrap(), 1_000_000);
    }
}
