//! Meerkat's capture role.
//!
//! Capture owns the packet source and feeds the detect workers: it reads packets, picks
//! each packet's worker with a symmetric flow hash ([`hash`]) so that both directions of a
//! flow meet in one worker, and writes the packet into that worker's shared-memory ring
//! (`<runtime-dir>/ring-<n>`, see `meerkat-shm`).
//!
//! Sources: pcap and pcapng files ([`pcap`], the readers of `meerkat-wire`), one file, or the files of directories and
//! patterns, tracked by the scanner so that each is processed exactly once, across
//! restarts ([`pcapdir`]); live, an AF_PACKET interface ([`afpacket`], TPACKET_V3) or,
//! with the `dpdk` feature, a DPDK port ([`dpdk`]). Offline reading never drops: when a
//! worker's ring is full, capture waits for it. Live capture never blocks the source: a
//! [`backlog`] absorbs bursts, and what still does not fit is dropped and counted
//! ([`live`]).
//!
//! Counters (packets, bytes, progress through the input, ring-full waits, per-worker
//! packets, and live: kernel/NIC drops, backlog depth, high-water mark and drops, ring-full
//! drops) live in the shared counter page `<runtime-dir>/counters-capture`.

pub mod afpacket;
pub mod backlog;
#[cfg(feature = "dpdk")]
pub mod dpdk;
pub mod hash;
pub mod live;
pub mod pcap_log;
pub mod pcapdir;
pub mod privs;
pub mod replay;
pub mod vethns;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use meerkat_config::Config;
use meerkat_runtime::counters::{CaptureCounter, capture_counter_names, capture_worker_packets};
use meerkat_runtime::{Role, counters_path, order_path, pcap_files_path, ring_path};
use meerkat_shm::{CounterPage, CounterRef, FileTable, OrderPage, PacketMeta, Producer, RingError};

pub use live::{Fanout, LiveCounters, LiveSummary, Source, SourceError, SourceStats};
pub use meerkat_config::RxPriority;
pub use meerkat_wire::pcap;
/// BPF filters and the run-time libpcap binding live in `meerkat-wire` (the eve-writer's
/// pcap-log filter uses them too).
pub use meerkat_wire::{bpf, libpcap};
pub use pcap::{PcapError, Reader};

/// Records handed to a ring before it is published (batch publish).
const PUBLISH_EVERY: u32 = 32;
/// Packets between refreshes of the shared counters and a publish of every ring.
const SYNC_EVERY: u64 = 4096;

/// Errors of the capture role.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("cannot open {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Pcap {
        path: PathBuf,
        #[source]
        source: PcapError,
    },
    #[error(transparent)]
    Ring(#[from] RingError),
    #[error("runtime-dir is not set (it names where the rings are)")]
    NoRuntimeDir,
    #[error("{0} holds no capture files")]
    EmptyDir(PathBuf),
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Scanner(#[from] meerkat_scanner::ScanError),
    #[error(transparent)]
    Registry(#[from] meerkat_scanner::RegistryError),
    #[error(transparent)]
    Filter(#[from] bpf::BpfError),
    #[error(transparent)]
    PcapLog(#[from] pcap_log::PcapLogError),
    #[error("{what} {path}: {source}")]
    Output {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// What a finished offline run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Summary {
    pub files: u64,
    pub packets: u64,
    pub bytes: u64,
    /// Files that ended with an error (truncated, corrupt, not a capture file).
    pub input_errors: u64,
    /// Set when the run stopped early because of a stop request.
    pub stopped: bool,
}

/// Gives a ring file its memory now (tmpfs allocates on first write): live capture writes
/// the rings from the thread that must keep up with bursts, where allocating and zeroing a
/// page per few packets costs dearly. Best effort: a file system without fallocate just
/// allocates later.
fn preallocate(path: &Path) {
    use std::os::fd::AsRawFd;
    let Ok(f) = std::fs::OpenOptions::new().write(true).open(path) else {
        return;
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    // SAFETY: fallocate on a descriptor we own; mode 0 only allocates blocks within the
    // current size (the ring's length does not change, its bytes stay as they are).
    let r = unsafe { libc::fallocate(f.as_raw_fd(), 0, 0, len as libc::off_t) };
    if r != 0 {
        tracing::debug!(
            ring = %path.display(),
            "fallocate: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// One fresh ring per worker and capture's counter page, in the runtime directory; a
/// live run also commits the rings' memory up front (`preallocate`).
fn create_rings(
    config: &Config,
    preallocate_rings: bool,
) -> Result<(Vec<Producer>, CounterPage), CaptureError> {
    let runtime = config
        .runtime_dir
        .as_deref()
        .ok_or(CaptureError::NoRuntimeDir)?;
    let workers = config.workers();
    let ring_size = config.capture.ring_size.bytes() as usize;
    let mut producers = Vec::with_capacity(workers);
    for w in 0..workers {
        let path = ring_path(runtime, w);
        meerkat_shm::create(&path, ring_size)?;
        if preallocate_rings {
            preallocate(&path);
        }
        producers.push(Producer::attach(&path)?);
    }
    let page = CounterPage::create(
        &counters_path(runtime, Role::Capture),
        &capture_counter_names(workers),
    )?;
    // Packets are not in capture order until an offline input says so (live sources
    // number them per thread): workers must not wait on the order page's marks.
    if let Ok(o) = OrderPage::open_or_create(&order_path(runtime)) {
        o.stop_ordering();
    }
    Ok((producers, page))
}

/// The rings and the counter page of a live run, set up before the source is opened and
/// privileges are dropped.
fn live_outputs(config: &Config) -> Result<(Fanout, LiveCounters, CounterPage), CaptureError> {
    let (producers, page) = create_rings(config, true)?;
    let counters = LiveCounters::new(&page);
    let workers = producers.len();
    let mut fanout = Fanout::new(producers, &page);
    fanout.pcap_log = pcap_log::PcapLogger::new(config, workers)?;
    Ok((fanout, counters, page))
}

/// Live capture from AF_PACKET interface `iface` (settings from its `af-packet` entry)
/// until `stop`, then drains into the rings and ends them.
pub fn run_af_packet(
    config: &Config,
    iface: &str,
    stop: &AtomicBool,
) -> Result<LiveSummary, CaptureError> {
    let mut cfg = meerkat_config::live::af_packet_for(&config.af_packet, iface);
    cfg.bpf_filter = config
        .bpf_filter_for(cfg.bpf_filter.as_deref())
        .map(str::to_string);
    if cfg.threads() > 1 && config.capture.backlog_size == 0 {
        return Err(SourceError::Config(format!(
            "af-packet.threads {} on {iface} needs capture.backlog-size > 0",
            cfg.threads()
        ))
        .into());
    }
    let (fanout, counters, _page) = live_outputs(config)?;
    let sources = afpacket::AfPacket::open_group(&cfg)?;
    if let Some(s) = sources.first() {
        let g = s.geometry();
        tracing::info!(
            iface,
            threads = sources.len(),
            block_size = g.block_size,
            blocks = g.block_nr,
            frames = g.frame_nr,
            "AF_PACKET ring ready"
        );
    }
    let rt = rx_priority(config);
    privs::drop_to(&config.run_as)?;
    live::run_live(
        fanout,
        counters,
        sources,
        config.capture.backlog_size,
        rt,
        stop,
    )
}

/// Raises this thread to real-time priority if configured and permitted (source threads
/// started from it inherit it). Returns whether it did.
fn rx_priority(config: &Config) -> bool {
    if config.capture.rx_priority != meerkat_config::RxPriority::Realtime {
        return false;
    }
    match privs::realtime_thread() {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(
                "capture.rx-priority realtime not available ({e}); the capture threads run at normal priority"
            );
            false
        }
    }
}

/// Live capture from the DPDK port of the `dpdk` section until `stop`.
#[cfg(feature = "dpdk")]
pub fn run_dpdk(config: &Config, stop: &AtomicBool) -> Result<LiveSummary, CaptureError> {
    let port_cfg = config.dpdk.port().cloned().ok_or_else(|| {
        SourceError::Config(
            "dpdk.interfaces names no port (an entry other than `default`)".to_string(),
        )
    })?;
    let (fanout, counters, _page) = live_outputs(config)?;
    let filter = config.bpf_filter_for(port_cfg.bpf_filter.as_deref());
    let port = dpdk::DpdkPort::open(&config.dpdk.eal_params.0, &port_cfg, filter)?;
    let rt = rx_priority(config);
    privs::drop_to(&config.run_as)?;
    live::run_live(
        fanout,
        counters,
        vec![port],
        config.capture.backlog_size,
        rt,
        stop,
    )
}

struct Counters {
    packets: CounterRef,
    bytes: CounterRef,
    files: CounterRef,
    total: CounterRef,
    done: CounterRef,
    full_waits: CounterRef,
    errors: CounterRef,
    checkpoints: CounterRef,
    files_resumed: CounterRef,
    files_skipped: CounterRef,
    files_deleted: CounterRef,
    resume_skipped: CounterRef,
    bpf_filtered: CounterRef,
    pcap_log: pcap_log::PcapLogCounters,
    per_worker: Vec<CounterRef>,
    _page: CounterPage,
}

impl Counters {
    fn new(page: CounterPage, workers: usize) -> Counters {
        Counters {
            packets: page.expect(CaptureCounter::Packets.name()),
            bytes: page.expect(CaptureCounter::Bytes.name()),
            files: page.expect(CaptureCounter::Files.name()),
            total: page.expect(CaptureCounter::InputBytesTotal.name()),
            done: page.expect(CaptureCounter::InputBytesDone.name()),
            full_waits: page.expect(CaptureCounter::RingFullWaits.name()),
            errors: page.expect(CaptureCounter::Errors.name()),
            checkpoints: page.expect(CaptureCounter::Checkpoints.name()),
            files_resumed: page.expect(CaptureCounter::FilesResumed.name()),
            files_skipped: page.expect(CaptureCounter::FilesSkipped.name()),
            files_deleted: page.expect(CaptureCounter::FilesDeleted.name()),
            resume_skipped: page.expect(CaptureCounter::ResumeSkipped.name()),
            bpf_filtered: page.expect(CaptureCounter::BpfFiltered.name()),
            pcap_log: pcap_log::PcapLogCounters::new(&page),
            per_worker: (0..workers)
                .map(|w| page.expect(&capture_worker_packets(w)))
                .collect(),
            _page: page,
        }
    }
}

/// The files an input names: the file itself, or a directory's regular files in
/// (modification time, name) order. (`run_offline` reads directories through
/// [`pcapdir`], which tracks each file across runs.)
pub fn input_files(input: &Path) -> Result<Vec<PathBuf>, CaptureError> {
    let meta = std::fs::metadata(input).map_err(|source| CaptureError::Open {
        path: input.to_path_buf(),
        source,
    })?;
    if !meta.is_dir() {
        return Ok(vec![input.to_path_buf()]);
    }
    let rd = std::fs::read_dir(input).map_err(|source| CaptureError::Open {
        path: input.to_path_buf(),
        source,
    })?;
    let mut files = Vec::new();
    for entry in rd.flatten() {
        let path = entry.path();
        let hidden = entry.file_name().to_string_lossy().starts_with('.');
        if let Ok(m) = entry.metadata()
            && m.is_file()
            && !hidden
        {
            files.push((m.modified().ok(), path));
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(CaptureError::EmptyDir(input.to_path_buf()));
    }
    Ok(files.into_iter().map(|(_, p)| p).collect())
}

/// How an offline run starts and ends (chosen by the supervisor).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OfflineOptions {
    /// Continue the run of a capture that died: read the inputs again from the start and
    /// skip every packet that its ring already received (by packet number: each ring
    /// remembers the number of the last packet published to it), so no packet is lost
    /// and none reaches a worker twice. Directory inputs with `pcap-file.continuous`
    /// resume from their own checkpoints instead (see `pcapdir`).
    pub resume: bool,
    /// Leave the rings open at the end (more input may follow); the supervisor ends
    /// them when the whole run is over.
    pub keep_open: bool,
}

/// Reads `inputs` (files or directories) into the workers' rings, then marks the end of
/// every ring. Stops early, cleanly, when `stop` becomes true. A truncated or corrupt
/// file is logged as an error naming the file and offset (every packet before the bad
/// record has been handed on), counted in `input_errors`, and the next file is read.
pub fn run_offline(
    config: &Config,
    inputs: &[PathBuf],
    stop: &AtomicBool,
) -> Result<Summary, CaptureError> {
    run_offline_with(config, inputs, stop, OfflineOptions::default())
}

/// [`run_offline`] with [`OfflineOptions`].
pub fn run_offline_with(
    config: &Config,
    inputs: &[PathBuf],
    stop: &AtomicBool,
    opts: OfflineOptions,
) -> Result<Summary, CaptureError> {
    let workers = config.workers();
    let (mut producers, page) = create_rings(config, false)?;
    let counters = Counters::new(page, workers);
    // Suricata applies the command line's filter to capture files too.
    let filter = config
        .bpf_filter_for(None)
        .map(bpf::UserFilter::new)
        .transpose()?;
    if let Some(f) = &filter {
        tracing::info!(filter = f.text(), "BPF filter on the capture files");
    }
    let dir_mode = pcapdir::applies(config, inputs);
    let skip: Vec<u64> = if opts.resume && !dir_mode {
        producers.iter().map(Producer::published_seq).collect()
    } else {
        for p in &mut producers {
            p.reset_seq();
        }
        vec![0; workers]
    };
    if opts.resume && !dir_mode {
        tracing::info!(
            "resuming: skipping the packets each ring already has (up to packet {:?})",
            skip
        );
    }
    // The names of the files read, for the workers' `pcap_filename` (only when an
    // output logs it).
    let files = match config.runtime_dir.as_deref() {
        Some(rt) if config.eve_pcap_filename() => match FileTable::open(&pcap_files_path(rt)) {
            Ok(t) => Some(t),
            Err(e) => {
                tracing::warn!("{e}; events will have no pcap_filename");
                None
            }
        },
        _ => None,
    };
    // The processing-order page: workers that read what other workers write (FTP
    // data-connection expectations) wait, by it, for the packets before their own.
    let order = config.runtime_dir.as_deref().and_then(|rt| {
        match OrderPage::open_or_create(&order_path(rt)) {
            Ok(p) => {
                p.start_offline(workers);
                Some(p)
            }
            Err(e) => {
                tracing::warn!("{e}; workers will not wait for each other's packets");
                None
            }
        }
    });
    let mut feeder = Feeder {
        producers,
        order,
        files,
        file: 0,
        pending: vec![0; workers],
        per_worker: vec![0; workers],
        last_sent: vec![0; workers],
        summary: Summary::default(),
        done_before: 0,
        counters,
        skip,
        skipped: 0,
        filter,
        pcap_log: pcap_log::PcapLogger::new(config, workers)?,
    };

    let result = if dir_mode {
        pcapdir::run(config, inputs, &mut feeder, stop)
    } else {
        (|| {
            let mut files = Vec::new();
            for input in inputs {
                files.extend(input_files(input)?);
            }
            let total: u64 = files
                .iter()
                .filter_map(|f| std::fs::metadata(f).ok())
                .map(|m| m.len())
                .sum();
            feeder.counters.total.set(total);
            feeder.feed_files(&files, stop)
        })()
    };
    for p in &mut feeder.producers {
        if opts.keep_open {
            p.publish();
        } else {
            p.finish();
        }
    }
    feeder.mark_published(feeder.summary.packets);
    if let Some(l) = &mut feeder.pcap_log {
        l.flush();
    }
    feeder.sync(0);
    if let Err(e) = &result {
        feeder.counters.errors.add(1);
        tracing::error!("{e}");
    }
    result.map(|()| feeder.summary)
}

struct Feeder {
    producers: Vec<Producer>,
    /// The processing-order page (see `meerkat_shm::order`), when there is a runtime
    /// directory.
    order: Option<OrderPage>,
    /// The run's file table, when file names are logged.
    files: Option<FileTable>,
    /// Index of the file being read in `files` (0 = none).
    file: u32,
    pending: Vec<u32>,
    per_worker: Vec<u64>,
    /// Per worker, the ring sequence number (`PacketMeta::seq`) of the last packet handed
    /// to it: a checkpoint waits until each worker has acknowledged that far.
    last_sent: Vec<u64>,
    summary: Summary,
    /// Input bytes of the files already finished.
    done_before: u64,
    counters: Counters,
    /// Per worker: packets up to this number are already in its ring (resume).
    skip: Vec<u64>,
    skipped: u64,
    /// The BPF filter (`bpf-filter`), in user space: a refused packet is not numbered
    /// and never reaches a ring, as if libpcap had not read it.
    filter: Option<bpf::UserFilter>,
    /// `outputs.pcap-log`: the packets handed to the workers, written to pcap files.
    pcap_log: Option<pcap_log::PcapLogger>,
}

impl Feeder {
    /// Makes every record written so far visible to the workers.
    fn publish_all(&mut self) {
        self.publish_through(self.summary.packets);
    }

    /// Makes every record written so far visible to the workers, every packet up to
    /// `through` having been written.
    fn publish_through(&mut self, through: u64) {
        for (p, pending) in self.producers.iter_mut().zip(self.pending.iter_mut()) {
            p.publish();
            *pending = 0;
        }
        self.mark_published(through);
    }

    /// Says in the order page what each ring holds, and that every packet up to
    /// `through` is published (every ring is).
    fn mark_published(&self, through: u64) {
        if let Some(o) = &self.order {
            for (w, &seq) in self.last_sent.iter().enumerate() {
                o.set_published(w, seq);
            }
            o.set_through(through);
        }
    }

    /// Publishes ring `w`'s pending records.
    fn publish_ring(&mut self, w: usize) {
        self.producers[w].publish();
        self.pending[w] = 0;
        if let Some(o) = &self.order {
            o.set_published(w, self.last_sent[w]);
        }
    }

    /// The file whose packets come next: its packets carry its index in the file table.
    fn begin_file(&mut self, path: &Path) {
        self.file = match self.files.as_mut().map(|t| t.add(path)) {
            Some(Ok(i)) => i,
            Some(Err(e)) => {
                tracing::warn!("{e}; events will have no pcap_filename from now on");
                self.files = None;
                0
            }
            None => 0,
        };
    }

    /// Counts and logs an input that could not be read (the run goes on without it).
    fn input_error(&mut self, e: impl std::fmt::Display) {
        self.summary.input_errors += 1;
        self.counters.errors.add(1);
        tracing::error!("{e}");
    }

    fn sync(&mut self, offset_in_file: u64) {
        self.counters.packets.set(self.summary.packets);
        self.counters.bytes.set(self.summary.bytes);
        self.counters.files.set(self.summary.files);
        self.counters.done.set(self.done_before + offset_in_file);
        self.counters.resume_skipped.set(self.skipped);
        if let Some(f) = &self.filter {
            self.counters.bpf_filtered.set(f.rejected);
        }
        if let Some(l) = &self.pcap_log {
            self.counters.pcap_log.set(l.stats());
        }
        for (c, v) in self.counters.per_worker.iter().zip(&self.per_worker) {
            c.set(*v);
        }
    }

    fn feed_files(&mut self, files: &[PathBuf], stop: &AtomicBool) -> Result<(), CaptureError> {
        for path in files {
            if stop.load(Ordering::Relaxed) {
                self.summary.stopped = true;
                break;
            }
            let file = File::open(path).map_err(|source| CaptureError::Open {
                path: path.clone(),
                source,
            })?;
            let size = file.metadata().map(|m| m.len()).unwrap_or(0);
            let mut reader = match Reader::new(file) {
                Ok(r) => r,
                Err(source) => {
                    self.input_error(CaptureError::Pcap {
                        path: path.clone(),
                        source,
                    });
                    self.done_before += size;
                    continue;
                }
            };
            tracing::info!(file = %path.display(), pcapng = reader.is_pcapng(), "reading");
            self.begin_file(path);
            let res = self.feed(&mut reader, stop, None);
            let offset = reader.offset();
            self.sync(offset);
            match res {
                Ok(_) => {}
                // A bad file ends that file, not the run: everything before the bad record
                // was handed on, and the next file is read (as Suricata does).
                Err(FeedError::Pcap(source)) => {
                    self.input_error(CaptureError::Pcap {
                        path: path.clone(),
                        source,
                    });
                }
                Err(FeedError::Filter(e)) => {
                    self.input_error(format!("{}: {e}", path.display()));
                }
                Err(FeedError::Ring(e)) => return Err(CaptureError::Ring(e)),
            }
            if self.summary.stopped {
                break;
            }
            self.done_before += size;
            self.summary.files += 1;
        }
        Ok(())
    }

    /// Feeds packets from `reader` until its end, a stop request, or `deadline` (checked
    /// every [`DEADLINE_EVERY`] packets).
    fn feed(
        &mut self,
        reader: &mut Reader<File>,
        stop: &AtomicBool,
        deadline: Option<Instant>,
    ) -> Result<FeedEnd, FeedError> {
        let n = self.producers.len();
        loop {
            if stop.load(Ordering::Relaxed) {
                self.summary.stopped = true;
                return Ok(FeedEnd::Stopped);
            }
            if let Some(d) = deadline
                && self.summary.packets.is_multiple_of(DEADLINE_EVERY)
                && Instant::now() >= d
            {
                return Ok(FeedEnd::Deadline);
            }
            let Some(p) = reader.next_packet().map_err(FeedError::Pcap)? else {
                return Ok(FeedEnd::Eof);
            };
            if let Some(f) = &mut self.filter
                && !f
                    .accepts(p.link_type, p.data, p.origlen)
                    .map_err(FeedError::Filter)?
            {
                continue;
            }
            self.summary.packets += 1;
            self.summary.bytes += p.data.len() as u64;
            let w = if n == 1 {
                0
            } else {
                hash::worker_for(hash::flow_hash(p.link_type, p.data), n)
            };
            if self.summary.packets <= self.skip[w] {
                self.skipped += 1;
                self.per_worker[w] += 1;
                continue;
            }
            let meta = PacketMeta {
                ts_ns: p.ts_ns,
                seq: self.summary.packets,
                origlen: p.origlen,
                link_type: p.link_type,
                iface: p.iface,
                file: self.file,
            };
            let data = &p.data[..p.data.len().min(self.producers[w].max_packet())];
            // A full ring: before waiting for its worker, everything read before is
            // published, so that a worker waiting for others' packets (see
            // `meerkat_shm::order`) is not waiting on records held here.
            let mut written = self.producers[w]
                .try_push(&meta, data)
                .map_err(FeedError::Ring)?;
            if !written {
                self.publish_through(meta.seq - 1);
                let mut waited = false;
                written = self.producers[w]
                    .push_blocking(&meta, data, Duration::from_millis(100), || {
                        waited = true;
                        !stop.load(Ordering::Relaxed)
                    })
                    .map_err(FeedError::Ring)?;
                if waited {
                    self.counters.full_waits.add(1);
                }
            }
            if !written {
                // Stopped while waiting for room: this packet was read but not
                // handed on, so it is not counted (`capture.packets` is what went
                // into the rings; a resumed run reads it again).
                self.summary.packets -= 1;
                self.summary.bytes -= p.data.len() as u64;
                self.summary.stopped = true;
                return Ok(FeedEnd::Stopped);
            }
            if let Some(l) = &mut self.pcap_log {
                l.log(w, p.link_type, p.ts_ns, p.origlen, p.data);
            }
            self.last_sent[w] = meta.seq;
            self.per_worker[w] += 1;
            self.pending[w] += 1;
            if self.pending[w] >= PUBLISH_EVERY {
                self.publish_ring(w);
            }
            if self.summary.packets.is_multiple_of(SYNC_EVERY) {
                let offset = reader.offset();
                self.publish_all();
                self.sync(offset);
            }
        }
    }
}

/// Packets between two looks at the clock for a checkpoint deadline.
const DEADLINE_EVERY: u64 = 1024;

/// Why [`Feeder::feed`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FeedEnd {
    /// The end of the file.
    Eof,
    /// A stop request (or a ring that will take nothing more).
    Stopped,
    /// The deadline passed: time for a checkpoint.
    Deadline,
}

enum FeedError {
    Pcap(PcapError),
    Ring(RingError),
    /// The filter cannot be compiled for the file's link type.
    Filter(bpf::BpfError),
}
