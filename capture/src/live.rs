//! Live capture: packet sources (AF_PACKET, DPDK) into the workers' rings, with or
//! without the backlog between them.
//!
//! ```text
//! backlog on:   source thread(s) --copy--> backlog (per source) --drain thread: hash--> ring-<n>
//! backlog off:  source thread --hash--> ring-<n>
//! ```
//!
//! Live capture never blocks the source: with the backlog on, a full backlog drops the
//! packet (counted as `capture.backlog.drops`) while the drain thread waits for ring space;
//! with it off, a full worker ring drops the packet (`capture.ring_full_drops`). Drops
//! before us are read from the source (`capture.kernel_drops`, `capture.dpdk.imissed`).
//! Every counter lives in the capture counter page, which the supervisor, the control API
//! and the stats records read.
//!
//! On stop the source threads read what the source already holds, then end; the drain
//! thread empties the backlog into the rings (waiting for live workers, dropping and
//! counting for dead ones) and marks the end of every ring, so the workers drain too.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_runtime::counters::{CaptureCounter, CaptureLiveCounter, capture_worker_packets};
use meerkat_shm::{CounterPage, CounterRef, PacketMeta, Producer, RingError};

use crate::backlog::{self, BacklogReader, BacklogWriter};
use crate::{CaptureError, hash};

/// How long a source waits for packets before the loop looks at `stop` and the counters.
const POLL: Duration = Duration::from_millis(50);
/// Records handed to a ring before it is published.
const PUBLISH_EVERY: u32 = 32;
/// Packets the drain thread takes from one backlog before looking at the next.
const DRAIN_BATCH: usize = 256;
/// How often counters that cost a syscall (kernel statistics) are refreshed.
const STATS_EVERY: Duration = Duration::from_millis(100);

/// A packet as a source hands it over, borrowed from the source's ring.
#[derive(Debug, Clone, Copy)]
pub struct RxPacket<'a> {
    /// Capture time, ns since the Unix epoch.
    pub ts_ns: u64,
    /// Length on the wire.
    pub origlen: u32,
    pub data: &'a [u8],
}

/// Counts a source keeps itself; each call of [`Source::stats`] returns the increase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SourceStats {
    /// Packets that reached the kernel socket, dropped ones included (AF_PACKET).
    pub kernel_packets: u64,
    /// Packets the kernel dropped because the ring was full (AF_PACKET).
    pub kernel_drops: u64,
    /// Packets the NIC dropped for lack of RX descriptors (DPDK `imissed`).
    pub imissed: u64,
    /// Erroneous packets the NIC received (DPDK `ierrors`).
    pub ierrors: u64,
    /// RX mbuf allocation failures (DPDK `rx_nombuf`).
    pub nombuf: u64,
    /// Malformed frames from the source (skipped).
    pub errors: u64,
    /// Packets a user-space BPF filter refused (DPDK, AF_XDP).
    pub filtered: u64,
}

impl std::ops::AddAssign for SourceStats {
    fn add_assign(&mut self, o: SourceStats) {
        self.kernel_packets += o.kernel_packets;
        self.kernel_drops += o.kernel_drops;
        self.imissed += o.imissed;
        self.ierrors += o.ierrors;
        self.nombuf += o.nombuf;
        self.errors += o.errors;
        self.filtered += o.filtered;
    }
}

/// Errors of opening or reading a live source.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error("interface {0} does not exist")]
    NoInterface(String),
    #[error(
        "no permission to capture on {0}: live capture needs root or CAP_NET_RAW and CAP_NET_ADMIN"
    )]
    Permission(String),
    #[error("interface {0} has link type (ARPHRD) {1}, which Meerkat cannot capture")]
    LinkType(String, u16),
    #[error("{0}")]
    Config(String),
    #[error("{iface}: cannot {what}: {source}")]
    Os {
        iface: String,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("dpdk: {0}")]
    Dpdk(String),
    #[error("cannot switch to run-as user: {0}")]
    Privileges(String),
}

/// A live packet source. One thread owns it.
pub trait Source: Send {
    /// pcap link type of the packets.
    fn link_type(&self) -> u16;
    /// Interface or port name, for logs.
    fn name(&self) -> &str;
    /// Hands the packets available now to `f` (a bounded batch), waiting up to `timeout`
    /// when none is there. Returns the number of packets.
    fn recv<F: FnMut(RxPacket<'_>)>(
        &mut self,
        timeout: Duration,
        f: F,
    ) -> Result<usize, SourceError>;
    /// The source's counts since the last call.
    fn stats(&mut self) -> Result<SourceStats, SourceError>;
}

/// Handles to the live counters (cheap to copy into each thread).
#[derive(Debug, Clone, Copy)]
pub struct LiveCounters {
    live: CounterRef,
    source_packets: CounterRef,
    source_bytes: CounterRef,
    kernel_packets: CounterRef,
    kernel_drops: CounterRef,
    imissed: CounterRef,
    ierrors: CounterRef,
    nombuf: CounterRef,
    source_errors: CounterRef,
    backlog_packets: CounterRef,
    backlog_drops: CounterRef,
    backlog_depth: CounterRef,
    backlog_high_water: CounterRef,
    ring_full_drops: CounterRef,
    packets: CounterRef,
    bytes: CounterRef,
    full_waits: CounterRef,
    errors: CounterRef,
    bpf_filtered: CounterRef,
    pcap_log: crate::pcap_log::PcapLogCounters,
}

impl LiveCounters {
    /// The refs of `page`, which must hold
    /// [`meerkat_runtime::counters::capture_counter_names`].
    pub fn new(page: &CounterPage) -> LiveCounters {
        LiveCounters {
            live: page.expect(CaptureLiveCounter::Live.name()),
            source_packets: page.expect(CaptureLiveCounter::SourcePackets.name()),
            source_bytes: page.expect(CaptureLiveCounter::SourceBytes.name()),
            kernel_packets: page.expect(CaptureLiveCounter::KernelPackets.name()),
            kernel_drops: page.expect(CaptureLiveCounter::KernelDrops.name()),
            imissed: page.expect(CaptureLiveCounter::DpdkImissed.name()),
            ierrors: page.expect(CaptureLiveCounter::DpdkIerrors.name()),
            nombuf: page.expect(CaptureLiveCounter::DpdkRxNombuf.name()),
            source_errors: page.expect(CaptureLiveCounter::SourceErrors.name()),
            backlog_packets: page.expect(CaptureLiveCounter::BacklogPackets.name()),
            backlog_drops: page.expect(CaptureLiveCounter::BacklogDrops.name()),
            backlog_depth: page.expect(CaptureLiveCounter::BacklogDepth.name()),
            backlog_high_water: page.expect(CaptureLiveCounter::BacklogHighWater.name()),
            ring_full_drops: page.expect(CaptureLiveCounter::RingFullDrops.name()),
            packets: page.expect(CaptureCounter::Packets.name()),
            bytes: page.expect(CaptureCounter::Bytes.name()),
            full_waits: page.expect(CaptureCounter::RingFullWaits.name()),
            errors: page.expect(CaptureCounter::Errors.name()),
            bpf_filtered: page.expect(CaptureCounter::BpfFiltered.name()),
            pcap_log: crate::pcap_log::PcapLogCounters::new(page),
        }
    }

    fn add_source_stats(&self, s: SourceStats) {
        self.kernel_packets.add(s.kernel_packets);
        self.kernel_drops.add(s.kernel_drops);
        self.imissed.add(s.imissed);
        self.ierrors.add(s.ierrors);
        self.nombuf.add(s.nombuf);
        self.source_errors.add(s.errors);
        self.bpf_filtered.add(s.filtered);
    }
}

/// What a live run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct LiveSummary {
    /// Packets taken from the source(s).
    pub received: u64,
    /// Packets written into the workers' rings.
    pub packets: u64,
    pub source: SourceStats,
    pub backlog_drops: u64,
    pub backlog_high_water: u64,
    pub ring_full_drops: u64,
}

impl LiveSummary {
    /// Logs every figure at info level, with the message `what`.
    pub fn log(&self, what: &str) {
        tracing::info!(
            received = self.received,
            packets = self.packets,
            kernel_drops = self.source.kernel_drops,
            imissed = self.source.imissed,
            backlog_drops = self.backlog_drops,
            backlog_high_water = self.backlog_high_water,
            ring_full_drops = self.ring_full_drops,
            "{what}"
        );
    }
}

/// The writing ends of the workers' rings and the flow-hash fan-out over them.
pub struct Fanout {
    producers: Vec<Producer>,
    pending: Vec<u32>,
    per_worker: Vec<u64>,
    per_worker_refs: Vec<CounterRef>,
    link_type: u16,
    seq: u64,
    bytes: u64,
    ring_full_drops: u64,
    full_waits: u64,
    /// `outputs.pcap-log`: the packets written into the rings, also written to pcap
    /// files (buffered).
    pub pcap_log: Option<crate::pcap_log::PcapLogger>,
}

impl std::fmt::Debug for Fanout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Fanout")
            .field("workers", &self.producers.len())
            .field("packets", &self.seq)
            .finish()
    }
}

impl Fanout {
    /// Fans out into `producers` (worker n's ring at index n); per-worker packet counts go
    /// to `capture.worker.<n>.packets` of `page`.
    pub fn new(producers: Vec<Producer>, page: &CounterPage) -> Fanout {
        let n = producers.len();
        Fanout {
            per_worker_refs: (0..n)
                .map(|w| page.expect(&capture_worker_packets(w)))
                .collect(),
            producers,
            pending: vec![0; n],
            per_worker: vec![0; n],
            link_type: meerkat_wire::LINKTYPE_ETHERNET,
            seq: 0,
            bytes: 0,
            ring_full_drops: 0,
            full_waits: 0,
            pcap_log: None,
        }
    }

    fn worker(&self, data: &[u8]) -> usize {
        let n = self.producers.len();
        if n == 1 {
            0
        } else {
            hash::worker_for(hash::flow_hash(self.link_type, data), n)
        }
    }

    fn meta(&self, ts_ns: u64, origlen: u32) -> PacketMeta {
        PacketMeta {
            ts_ns,
            seq: self.seq + 1,
            origlen,
            link_type: self.link_type,
            iface: 0,
            file: 0,
        }
    }

    fn written(&mut self, w: usize, len: usize) {
        self.seq += 1;
        self.bytes += len as u64;
        self.per_worker[w] += 1;
        self.pending[w] += 1;
        if self.pending[w] >= PUBLISH_EVERY {
            self.producers[w].publish();
            self.pending[w] = 0;
        }
    }

    /// Writes a packet into its worker's ring, or drops and counts it when the ring is
    /// full. Returns whether it was written.
    pub fn push_or_drop(&mut self, ts_ns: u64, origlen: u32, data: &[u8]) -> bool {
        let w = self.worker(data);
        let meta = self.meta(ts_ns, origlen);
        let p = &mut self.producers[w];
        let data = &data[..data.len().min(p.max_packet())];
        match p.try_push(&meta, data) {
            Ok(true) => {
                self.written(w, data.len());
                if let Some(l) = &mut self.pcap_log {
                    l.log(w, self.link_type, ts_ns, origlen, data);
                }
                true
            }
            // A full ring (or, impossibly after the truncation, a record too large).
            Ok(false) | Err(_) => {
                self.ring_full_drops += 1;
                false
            }
        }
    }

    /// Writes a packet into its worker's ring, waiting for room while `keep_waiting`
    /// (asked after each unsuccessful wait) says so. Returns whether it was written; if
    /// not, it was dropped and counted as a ring-full drop.
    pub fn push_wait(
        &mut self,
        ts_ns: u64,
        origlen: u32,
        data: &[u8],
        mut keep_waiting: impl FnMut(&Producer) -> bool,
    ) -> Result<bool, RingError> {
        let w = self.worker(data);
        let meta = self.meta(ts_ns, origlen);
        let p = &mut self.producers[w];
        let data = &data[..data.len().min(p.max_packet())];
        let mut waited = false;
        let ok = loop {
            if p.try_push(&meta, data)? {
                break true;
            }
            waited = true;
            // Worst case the record needs padding to the end of the ring first.
            let need = (record_len(data.len()) * 2).min(p.capacity());
            if !p.wait_for_space(need, POLL) && !keep_waiting(p) {
                break false;
            }
        };
        if waited {
            // wait_for_space published the ring.
            self.full_waits += 1;
            self.pending[w] = 0;
        }
        if ok {
            self.written(w, data.len());
            if let Some(l) = &mut self.pcap_log {
                l.log(w, self.link_type, ts_ns, origlen, data);
            }
        } else {
            self.ring_full_drops += 1;
        }
        Ok(ok)
    }

    /// Publishes every ring (also refreshes the producer heartbeat when idle).
    pub fn publish_all(&mut self) {
        for (p, pending) in self.producers.iter_mut().zip(self.pending.iter_mut()) {
            p.publish();
            *pending = 0;
        }
    }

    /// Marks the end of every ring.
    pub fn finish(&mut self) {
        for p in &mut self.producers {
            p.finish();
        }
        if let Some(l) = &mut self.pcap_log {
            l.flush();
        }
    }

    fn sync(&self, c: &LiveCounters) {
        c.packets.set(self.seq);
        c.bytes.set(self.bytes);
        c.ring_full_drops.set(self.ring_full_drops);
        c.full_waits.set(self.full_waits);
        if let Some(l) = &self.pcap_log {
            c.pcap_log.set(l.stats());
        }
        for (r, v) in self.per_worker_refs.iter().zip(&self.per_worker) {
            r.set(*v);
        }
    }
}

fn record_len(caplen: usize) -> usize {
    (meerkat_shm::spsc::RECORD_HEADER_SIZE + caplen + 7) & !7
}

/// Runs live capture from `sources` into `fanout` until `stop`, then drains. With
/// `backlog_size` 0 there must be exactly one source. `realtime`: the calling thread runs
/// under a real-time policy that the source threads inherit (the drain thread then goes
/// back to normal).
pub fn run_live<S: Source>(
    mut fanout: Fanout,
    counters: LiveCounters,
    mut sources: Vec<S>,
    backlog_size: usize,
    realtime: bool,
    stop: &AtomicBool,
) -> Result<LiveSummary, CaptureError> {
    let Some(first) = sources.first() else {
        return Err(CaptureError::Source(SourceError::Config(
            "no packet source".to_string(),
        )));
    };
    fanout.link_type = first.link_type();
    // The backlogs exist (and their memory is faulted in) before capture says it is live.
    let backlogs: Vec<(BacklogWriter, BacklogReader)> = if backlog_size == 0 {
        Vec::new()
    } else {
        let per_source = backlog_size.div_ceil(sources.len());
        (0..sources.len())
            .map(|_| backlog::backlog(per_source))
            .collect()
    };
    counters.live.set(1);
    tracing::info!(
        source = first.name(),
        threads = sources.len(),
        backlog = backlog_size,
        workers = fanout.producers.len(),
        "live capture started"
    );
    let summary = if backlog_size == 0 {
        if sources.len() != 1 {
            return Err(CaptureError::Source(SourceError::Config(format!(
                "{} capture threads need the backlog (capture.backlog-size > 0): without it one thread writes the rings",
                sources.len()
            ))));
        }
        let source = &mut sources[0];
        direct(&mut fanout, &counters, source, stop)
    } else {
        with_backlog(
            &mut fanout,
            &counters,
            &mut sources,
            backlogs,
            realtime,
            stop,
        )
    };
    fanout.finish();
    fanout.sync(&counters);
    let mut s = summary?;
    s.packets = fanout.seq;
    s.ring_full_drops = fanout.ring_full_drops;
    s.log("live capture stopped");
    Ok(s)
}

/// Most source reads after a stop request: what the source holds then is taken (a kernel
/// ring in one read, a NIC ring in a few bursts), but traffic that keeps coming cannot
/// hold the stop off.
const MAX_READS_AFTER_STOP: u32 = 64;

/// When a source thread stops: once asked to, it reads until the source is empty (the
/// first read waits a poll interval, so that a half-filled kernel block is handed over
/// by its block timeout), at most [`MAX_READS_AFTER_STOP`] times.
#[derive(Debug, Default)]
struct StopTail {
    reads: Option<u32>,
    empty: bool,
}

impl StopTail {
    /// The timeout of the next read, or `None` when the thread should end.
    fn next(&mut self, stop: bool) -> Option<Duration> {
        match self.reads {
            None if !stop => Some(POLL),
            None => {
                self.reads = Some(0);
                Some(POLL)
            }
            Some(n) if self.empty || n >= MAX_READS_AFTER_STOP => None,
            Some(_) => Some(Duration::ZERO),
        }
    }

    /// Records how many packets the last read returned.
    fn got(&mut self, n: usize) {
        if let Some(r) = &mut self.reads {
            *r += 1;
            self.empty = n == 0;
        }
    }
}

/// Backlog off: the source thread writes straight into the rings and drops on a full one.
fn direct<S: Source>(
    fanout: &mut Fanout,
    c: &LiveCounters,
    source: &mut S,
    stop: &AtomicBool,
) -> Result<LiveSummary, CaptureError> {
    let mut summary = LiveSummary::default();
    let mut received = 0u64;
    let mut rbytes = 0u64;
    let mut last_stats = Instant::now();
    let mut tail = StopTail::default();
    while let Some(timeout) = tail.next(stop.load(Ordering::Relaxed)) {
        let n = source
            .recv(timeout, |p| {
                received += 1;
                rbytes += p.data.len() as u64;
                fanout.push_or_drop(p.ts_ns, p.origlen, p.data);
            })
            .map_err(CaptureError::Source)?;
        // Counters after each batch (a few relaxed stores, not per packet); the kernel's
        // statistics cost a system call, so they are read when idle or every interval.
        c.source_packets.set(received);
        c.source_bytes.set(rbytes);
        fanout.sync(c);
        fanout.publish_all();
        if n == 0 || last_stats.elapsed() >= STATS_EVERY {
            let st = source.stats().map_err(CaptureError::Source)?;
            summary.source += st;
            c.add_source_stats(st);
            last_stats = Instant::now();
        }
        tail.got(n);
    }
    summary.received = received;
    Ok(summary)
}

/// Backlog on: one fill thread per source, the drain in this thread.
fn with_backlog<S: Source>(
    fanout: &mut Fanout,
    c: &LiveCounters,
    sources: &mut [S],
    backlogs: Vec<(BacklogWriter, BacklogReader)>,
    realtime: bool,
    stop: &AtomicBool,
) -> Result<LiveSummary, CaptureError> {
    let mut writers = Vec::with_capacity(backlogs.len());
    let mut readers = Vec::with_capacity(backlogs.len());
    for (mut w, r) in backlogs {
        w.set_reader(std::thread::current());
        writers.push(w);
        readers.push(r);
    }
    // Set when one fill thread fails or cannot start: the others then end as on stop, so
    // that the drain finishes and the error is reported instead of the run going on blind.
    let halt = AtomicBool::new(false);
    let halt = &halt;
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut spawn_err = None;
        for (source, writer) in sources.iter_mut().zip(writers) {
            let c = *c;
            let spawned = std::thread::Builder::new()
                .name(format!("capture-rx-{}", handles.len()))
                .spawn_scoped(scope, move || {
                    let r = fill(source, writer, &c, stop, halt);
                    if r.is_err() {
                        halt.store(true, Ordering::SeqCst);
                    }
                    r
                });
            match spawned {
                Ok(h) => handles.push(h),
                Err(e) => {
                    halt.store(true, Ordering::SeqCst);
                    spawn_err = Some(CaptureError::Source(SourceError::Config(format!(
                        "cannot start a capture thread: {e}"
                    ))));
                    break;
                }
            }
        }
        if spawn_err.is_some() {
            // The readers of writers never handed to a thread are finished already (their
            // writers were dropped); the started threads end on `halt`.
            readers.truncate(handles.len());
        }
        if realtime {
            // The fill threads inherited the real-time policy; the drain waits on the
            // workers like any other thread.
            crate::privs::normal_thread();
        }
        let drained = drain(fanout, c, &mut readers, stop);
        let mut summary = LiveSummary::default();
        let mut first_err = spawn_err.or(drained.err());
        for h in handles {
            match h.join() {
                Ok(Ok(s)) => {
                    summary.received += s.received;
                    summary.source += s.source;
                    summary.backlog_drops += s.backlog_drops;
                    summary.backlog_high_water =
                        summary.backlog_high_water.max(s.backlog_high_water);
                }
                Ok(Err(e)) => {
                    first_err.get_or_insert(e);
                }
                Err(_) => {
                    first_err.get_or_insert(CaptureError::Source(SourceError::Config(
                        "a capture thread panicked".to_string(),
                    )));
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(summary),
        }
    })
}

/// A fill thread: moves packets from the source into its backlog, nothing else.
fn fill<S: Source>(
    source: &mut S,
    mut w: BacklogWriter,
    c: &LiveCounters,
    stop: &AtomicBool,
    halt: &AtomicBool,
) -> Result<LiveSummary, CaptureError> {
    let mut s = LiveSummary::default();
    let mut queued = 0u64;
    let mut drops = 0u64;
    let mut bytes = 0u64;
    let mut last_stats = Instant::now();
    let result = (|| -> Result<(), CaptureError> {
        let mut tail = StopTail::default();
        loop {
            let stopping = stop.load(Ordering::Relaxed) || halt.load(Ordering::Relaxed);
            let Some(timeout) = tail.next(stopping) else {
                return Ok(());
            };
            let n = source
                .recv(timeout, |p| {
                    bytes += p.data.len() as u64;
                    if w.try_push(p.ts_ns, p.origlen, p.data) {
                        queued += 1;
                    } else {
                        drops += 1;
                    }
                })
                .map_err(CaptureError::Source)?;
            s.received += n as u64;
            // Counters before the publish, so that a reader never sees more packets in the
            // rings than were received; a few relaxed adds per batch, not per packet.
            c.source_packets.add(n as u64);
            c.source_bytes.add(bytes);
            c.backlog_packets.add(queued);
            c.backlog_drops.add(drops);
            s.backlog_drops += drops;
            bytes = 0;
            queued = 0;
            drops = 0;
            w.publish();
            if n == 0 || last_stats.elapsed() >= STATS_EVERY {
                // The kernel's statistics cost a system call: when idle or every interval.
                let st = source.stats().map_err(CaptureError::Source)?;
                s.source += st;
                c.add_source_stats(st);
                c.backlog_depth.set(w.depth());
                c.backlog_high_water.max(w.high_water());
                last_stats = Instant::now();
            }
            tail.got(n);
        }
    })();
    s.backlog_high_water = w.high_water();
    c.backlog_high_water.max(w.high_water());
    result.map(|()| s)
}

/// The drain: backlogs -> flow hash -> rings, waiting for ring space.
fn drain(
    fanout: &mut Fanout,
    c: &LiveCounters,
    readers: &mut [BacklogReader],
    stop: &AtomicBool,
) -> Result<(), CaptureError> {
    let mut err: Option<RingError> = None;
    loop {
        let mut moved = 0;
        for r in readers.iter_mut() {
            moved += r.drain(DRAIN_BATCH, |q| {
                let stopping = || stop.load(Ordering::Relaxed);
                // While running, wait for the worker as long as it takes (the fill thread
                // keeps the source flowing into the backlog meanwhile). When stopping, wait
                // only for a worker that is alive.
                match fanout.push_wait(q.ts_ns, q.origlen, q.data, |p| {
                    !stopping() || p.consumer_alive()
                }) {
                    Ok(_) => true,
                    Err(e) => {
                        err.get_or_insert(e);
                        true
                    }
                }
            });
        }
        if let Some(e) = err.take() {
            c.errors.add(1);
            tracing::error!("{e}");
        }
        // A few relaxed stores per round of up to DRAIN_BATCH packets per backlog.
        fanout.sync(c);
        if moved == 0 {
            fanout.publish_all();
            if readers.iter_mut().all(BacklogReader::finished) {
                return Ok(());
            }
            std::thread::park_timeout(POLL);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reads_the_rest_but_not_forever() {
        let mut t = StopTail::default();
        assert_eq!(t.next(false), Some(POLL));
        t.got(5);
        assert_eq!(t.next(false), Some(POLL));
        t.got(0);
        // Stop: one read that may wait, then reads without waiting until empty.
        assert_eq!(t.next(true), Some(POLL));
        t.got(7);
        assert_eq!(t.next(true), Some(Duration::ZERO));
        t.got(0);
        assert_eq!(t.next(true), None);
        // A source that never runs dry is left after MAX_READS_AFTER_STOP reads.
        let mut t = StopTail::default();
        let mut reads = 0;
        while t.next(true).is_some() {
            t.got(1);
            reads += 1;
        }
        assert_eq!(reads, MAX_READS_AFTER_STOP);
    }
}
