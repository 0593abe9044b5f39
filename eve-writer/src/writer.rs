//! The writer thread: the single owner of the outputs.
//!
//! It takes batches from the gRPC streams in arrival order, drops the ones it already
//! took (by `(producer, epoch, seq)`, remembered across restarts in the [`state`] page),
//! renders each event once per distinct set of render options, routes it to every
//! output whose `types` include it (to worker `n`'s file with `threaded: yes`), and
//! acknowledges each batch once every byte it added is delivered (see [`output`]).
//! Acknowledgements of one producer go out in order; a batch of one producer never
//! waits for another producer's bytes.
//!
//! Timers (all on this thread, no extra thread per output): the periodic flush
//! (`heartbeat.output-flush-interval`), `stats` records (`stats.interval`), rotation
//! (`rotate-interval`), and retries of outputs that failed.
//!
//! [`state`]: meerkat_shm::state
//! [`output`]: crate::output

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use meerkat_config::{Config, EveLog};
use meerkat_proto::events::{BatchAck, Event, EventType};
use meerkat_proto::writer::{FlushReply, ReopenReply};
use meerkat_runtime::counters::{
    EveCounter, eve_event_counter, eve_output_counter, eve_output_counter_names,
    eve_writer_counter_names,
};
use meerkat_runtime::{Role, counters_path, eve_state_path};
use meerkat_shm::{CounterPage, CounterRef};
use tokio::sync::oneshot;

use crate::WriterError;
use crate::batch::{self, RawBatch};
use crate::output::{Meta, Target, TargetSpec};
use crate::render::{self, RenderOptions};
use crate::stats;
use meerkat_shm::state::{self, StatePage};

/// Work for the writer thread.
#[derive(Debug)]
pub enum Msg {
    /// A batch, its events still encoded (decoded one at a time as they are written).
    Batch(RawBatch, oneshot::Sender<BatchAck>),
    /// Write out everything received so far; answer when it is delivered or after
    /// `timeout`.
    Flush {
        timeout: Duration,
        reply: oneshot::Sender<FlushReply>,
    },
    /// Reopen files and reconnect sockets (SIGHUP: no reply wanted).
    Reopen(Option<oneshot::Sender<ReopenReply>>),
    /// The writer's counters.
    Counters(oneshot::Sender<Vec<(String, u64)>>),
    /// A (re)starting producer asks where to resume its ring: the highest ring mark
    /// taken from any of its incarnations. Older epochs are fenced from now on.
    Resume {
        producer: String,
        epoch: u64,
        reply: oneshot::Sender<u64>,
    },
    /// Flush and stop.
    Shutdown,
}

/// Default wait of a control-API flush.
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a stopping writer keeps retrying outputs that fail.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// Threaded outputs open at most this many worker files; larger worker indices are bad
/// input and go to the unsuffixed file.
pub const MAX_THREADED_FILES: u32 = 1024;

/// Counter names of the writer's page, in page order (one `eve.events.<type>` per
/// event kind with a name).
pub fn counter_names() -> Vec<String> {
    let types: Vec<&str> = (0..render::KINDS).filter_map(render::kind_name).collect();
    eve_writer_counter_names(&types)
}

struct Counters {
    batches: CounterRef,
    duplicates: CounterRef,
    events_in: CounterRef,
    events_written: CounterRef,
    unknown: CounterRef,
    bad: CounterRef,
    write_calls: CounterRef,
    bytes: CounterRef,
    flushes: CounterRef,
    errors: CounterRef,
    reconnects: CounterRef,
    dropped: CounterRef,
    resent: CounterRef,
    held: CounterRef,
    reopens: CounterRef,
    stats_records: CounterRef,
    fenced: CounterRef,
    /// Events written per kind (see [`render::kind`]).
    by_type: Vec<Option<CounterRef>>,
    page: CounterPage,
}

/// The bit of event kind `k` (see [`render::kind`]) in an output's type mask.
fn type_bit(k: usize) -> u64 {
    1 << k
}

/// The bit of the `stats` kind.
fn stats_bit() -> u64 {
    render::core_kind(EventType::Stats).map_or(0, type_bit)
}

/// One configured eve-log output.
#[derive(Debug)]
struct Output {
    /// Bit per event kind that this output logs.
    types: u64,
    opts: RenderOptions,
    /// Index of the first output with the same render options (its line is reused).
    render_group: usize,
    spec: TargetSpec,
    threaded: bool,
    /// The target when not threaded; when threaded, the unsuffixed file that takes the
    /// writer's own records (stats) and bad worker indices. Made on first use.
    main: Option<usize>,
    /// Threaded: the target of each worker, made on first use.
    by_worker: Vec<Option<usize>>,
}

fn type_mask(eve: &EveLog) -> u64 {
    (0..render::KINDS)
        .filter(|k| render::kind_type_name(*k).is_some_and(|n| eve.type_entry(n).is_some()))
        .fold(0, |m, k| m | type_bit(k))
}

fn render_options(eve: &EveLog) -> RenderOptions {
    let opt = |name: &str| eve.type_entry(name).and_then(|t| t.options());
    let alert = eve.alert_extras();
    RenderOptions {
        alert_metadata: opt("alert").and_then(|o| o.metadata).unwrap_or(true),
        alert_payload: alert.payload,
        alert_payload_printable: alert.payload_printable,
        alert_packet: alert.packet,
        max_stream_payload: alert.max_stream_payload,
        pcap_filename: eve.pcap_file,
        community_id: eve.community_id.then_some(eve.community_id_seed),
        stats_totals: opt("stats").and_then(|o| o.totals).unwrap_or(true),
        stats_threads: opt("stats").and_then(|o| o.threads).unwrap_or(false),
    }
}

/// One producer incarnation.
#[derive(Debug)]
struct Producer {
    epoch: u64,
    /// Highest seq taken (written or being written).
    taken: u64,
    duplicates: u64,
    state_slot: usize,
    /// Slot of the producer name's resume mark in the state page (`None`: a name too
    /// long for the page, whose marks are kept in memory only).
    mark_slot: Option<usize>,
}

/// An acknowledgement waiting for its bytes.
#[derive(Debug)]
struct PendingAck {
    tx: oneshot::Sender<BatchAck>,
    ack: BatchAck,
    /// Index into `Writer::producers`.
    producer: usize,
    /// The batch's seq to record as done (0 for a duplicate).
    done: u64,
    /// The batch's ring mark, to record as the producer's resume mark once its bytes
    /// are delivered (0: none).
    mark: u64,
    /// (target, offset its delivered bytes must reach).
    until: Vec<(usize, u64)>,
}

#[derive(Debug)]
struct FlushWaiter {
    deadline: Instant,
    until: Vec<u64>,
    reply: oneshot::Sender<FlushReply>,
}

pub struct Writer {
    outputs: Vec<Output>,
    targets: Vec<Target>,
    producer_index: HashMap<String, Vec<usize>>,
    producers: Vec<Producer>,
    pending: VecDeque<PendingAck>,
    waiters: Vec<FlushWaiter>,
    flush_every: Option<Duration>,
    stats_every: Option<Duration>,
    runtime: PathBuf,
    state: StatePage,
    counters: Counters,
    line: Vec<u8>,
    /// The event being written, decoded into again for each event (its strings and
    /// vectors keep their capacity).
    event: Event,
    /// Per output, the target chosen for the current batch.
    chosen: Vec<Option<usize>>,
    blocked: Vec<usize>,
    /// Per producer name: (lowest epoch still accepted, highest ring mark taken). Loaded
    /// from the state page at start (where the marks of delivered batches and the fences
    /// are kept), so that a restarted writer still knows where a producer's replacement
    /// resumes.
    marks: HashMap<String, (u64, u64)>,
    /// This writer's start (ns since the epoch): the "epoch" of its own records' ids.
    incarnation: u64,
    stats_seq: u64,
    /// Per network output: its target and its counters (`eve.output.N.*`).
    net_outputs: Vec<(usize, OutputCounters)>,
    /// With `pcap-file` on some output: the capture file named by the last event that
    /// named one, for the writer's own `stats` records (Suricata names the file being
    /// read in every record).
    last_pcap_filename: Option<String>,
    /// `file-store` with `write-fileinfo`: the store's directory, where each stored
    /// file's `fileinfo` record is also written beside it, with the options of the
    /// first eve-log output.
    fileinfo_store: Option<(PathBuf, RenderOptions)>,
    fileinfo_line: Vec<u8>,
}

/// Counters of one network output, `eve.output.<n>.<name>` (n: the output's place among
/// the enabled eve-log outputs).
struct OutputCounters {
    sent: CounterRef,
    acked: CounterRef,
    spooled: CounterRef,
    spooled_bytes: CounterRef,
    replayed: CounterRef,
    dropped: CounterRef,
    resent: CounterRef,
    lag: CounterRef,
    errors: CounterRef,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("outputs", &self.outputs.len())
            .field("targets", &self.targets.len())
            .finish()
    }
}

impl Writer {
    /// Opens every output (files must open; sockets and redis may come later).
    pub fn new(config: &Config, runtime: &Path) -> Result<Writer, WriterError> {
        let mut names = counter_names();
        for (n, eve) in config.eve_logs().enumerate() {
            if meerkat_config::bus::is_network(eve.filetype) {
                names.extend(eve_output_counter_names(n));
            }
        }
        let page = CounterPage::create(&counters_path(runtime, Role::EveWriter), &names)?;
        let c = |n: EveCounter| page.expect(n.name());
        let counters = Counters {
            batches: c(EveCounter::Batches),
            duplicates: c(EveCounter::DuplicateBatches),
            events_in: c(EveCounter::EventsIn),
            events_written: c(EveCounter::EventsWritten),
            unknown: c(EveCounter::UnknownEvents),
            bad: c(EveCounter::BadEvents),
            write_calls: c(EveCounter::WriteCalls),
            bytes: c(EveCounter::Bytes),
            flushes: c(EveCounter::Flushes),
            errors: c(EveCounter::Errors),
            reconnects: c(EveCounter::Reconnects),
            dropped: c(EveCounter::Dropped),
            resent: c(EveCounter::ResentBytes),
            held: c(EveCounter::HeldBytes),
            reopens: c(EveCounter::Reopens),
            stats_records: c(EveCounter::StatsRecords),
            fenced: c(EveCounter::FencedBatches),
            by_type: (0..render::KINDS)
                .map(|k| render::kind_name(k).map(|n| page.expect(&eve_event_counter(n))))
                .collect(),
            page: page.clone(),
        };
        let state_path = eve_state_path(runtime);
        let state = StatePage::open(&state_path).map_err(WriterError::State)?;
        let mut w = Writer {
            outputs: Vec::new(),
            targets: Vec::new(),
            producer_index: HashMap::new(),
            producers: Vec::new(),
            pending: VecDeque::new(),
            waiters: Vec::new(),
            flush_every: None,
            stats_every: None,
            runtime: runtime.to_path_buf(),
            state,
            counters,
            line: Vec::with_capacity(4096),
            event: Event::default(),
            chosen: Vec::new(),
            blocked: Vec::new(),
            marks: HashMap::new(),
            incarnation: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as u64),
            stats_seq: 1,
            net_outputs: Vec::new(),
            last_pcap_filename: config.eve_pcap_filename().then(String::new),
            fileinfo_store: config.file_store().filter(|f| f.write_fileinfo).map(|f| {
                let opts = config.eve_logs().next().map(render_options);
                (
                    config.default_log_dir.join(&f.dir),
                    opts.unwrap_or_default(),
                )
            }),
            fileinfo_line: Vec::new(),
        };
        for (producer, epoch, done) in w.state.entries() {
            let i = w.producer_idx(&producer, epoch);
            w.producers[i].taken = done;
        }
        for (producer, fence, mark) in w.state.marks() {
            w.marks.insert(producer, (fence, mark));
        }
        let now = Instant::now();
        for (n, eve) in config.eve_logs().enumerate() {
            let opts = render_options(eve);
            let render_group = w
                .outputs
                .iter()
                .position(|o| o.opts == opts)
                .unwrap_or(w.outputs.len());
            let spec = TargetSpec::from_config(eve, &config.default_log_dir);
            let mut out = Output {
                types: type_mask(eve),
                opts,
                render_group,
                spec,
                threaded: eve.threaded,
                main: None,
                by_worker: Vec::new(),
            };
            if !eve.threaded {
                let mut t = out.spec.make(None);
                t.start(now).map_err(|source| WriterError::Open {
                    path: out.spec.path.clone(),
                    source,
                })?;
                if out.spec.rotate.is_some() && !crate::pattern::has_time_pattern(&eve.filename) {
                    tracing::warn!(
                        "{}: rotate-interval is set but the filename has no time pattern \
                         (e.g. eve-%Y-%m-%d-%H%M.json); each rotation reopens the same file",
                        t.label()
                    );
                }
                out.main = Some(w.targets.len());
                if meerkat_config::bus::is_network(eve.filetype) {
                    let c = |name: &str| page.expect(&eve_output_counter(n, name));
                    let oc = OutputCounters {
                        sent: c("sent"),
                        acked: c("acked"),
                        spooled: c("spooled"),
                        spooled_bytes: c("spooled_bytes"),
                        replayed: c("replayed"),
                        dropped: c("dropped"),
                        resent: c("resent"),
                        lag: c("lag"),
                        errors: c("errors"),
                    };
                    tracing::info!(
                        "eve-log output {n}: {} (counters eve.output.{n}.*)",
                        t.label()
                    );
                    w.net_outputs.push((w.targets.len(), oc));
                }
                w.targets.push(t);
            }
            w.outputs.push(out);
        }
        w.chosen = vec![None; w.outputs.len()];
        let interval = config.heartbeat.output_flush_interval;
        w.flush_every = (interval > 0).then(|| Duration::from_secs(u64::from(interval)));
        let wants_stats = w.outputs.iter().any(|o| o.types & stats_bit() != 0);
        w.stats_every = (config.stats.enabled && wants_stats && config.stats.interval > 0)
            .then(|| Duration::from_secs(config.stats.interval));
        Ok(w)
    }

    /// Index of `(name, epoch)` in `producers`, added if new.
    fn producer_idx(&mut self, name: &str, epoch: u64) -> usize {
        if let Some(i) = self.producer_index.get(name).and_then(|v| {
            v.iter()
                .copied()
                .find(|&i| self.producers[i].epoch == epoch)
        }) {
            return i;
        }
        let slot = self.state.slot(name, epoch);
        let mark_slot = self.mark_slot(name);
        self.producers.push(Producer {
            epoch,
            taken: 0,
            duplicates: 0,
            state_slot: slot,
            mark_slot,
        });
        let i = self.producers.len() - 1;
        self.producer_index
            .entry(name.to_string())
            .or_default()
            .push(i);
        i
    }

    /// The target of output `o` for records of `worker` (None: the writer's own).
    fn target_for(&mut self, o: usize, worker: Option<u32>) -> usize {
        let out = &self.outputs[o];
        if !out.threaded {
            return out.main.unwrap_or(0);
        }
        let worker = worker.filter(|w| *w < MAX_THREADED_FILES);
        if let Some(w) = worker
            && let Some(Some(t)) = out.by_worker.get(w as usize)
        {
            return *t;
        }
        if worker.is_none()
            && let Some(t) = out.main
        {
            return t;
        }
        let mut t = out.spec.make(worker);
        if let Err(e) = t.start(Instant::now()) {
            tracing::error!(
                "cannot open EVE output {}: {e}; holding its events",
                t.label()
            );
        }
        let idx = self.targets.len();
        self.targets.push(t);
        let out = &mut self.outputs[o];
        match worker {
            Some(w) => {
                let w = w as usize;
                if out.by_worker.len() <= w {
                    out.by_worker.resize(w + 1, None);
                }
                out.by_worker[w] = Some(idx);
            }
            None => out.main = Some(idx),
        }
        idx
    }

    /// The state page's mark slot of `name` (none for a name longer than the page
    /// holds: two such names could share a slot, and one be told the other's mark).
    fn mark_slot(&mut self, name: &str) -> Option<usize> {
        (name.len() <= state::NAME).then(|| self.state.mark_slot(name))
    }

    /// Where a (re)starting producer resumes (see [`Msg::Resume`]).
    fn resume(&mut self, producer: String, epoch: u64) -> u64 {
        if let Some(slot) = self.mark_slot(&producer) {
            self.state.set_fence(slot, epoch);
        }
        let e = self.marks.entry(producer).or_insert((0, 0));
        e.0 = e.0.max(epoch);
        e.1
    }

    /// Writes a batch (unless already taken, or from a fenced incarnation) and queues
    /// its acknowledgement.
    fn take(&mut self, mut batch: RawBatch, tx: oneshot::Sender<BatchAck>) {
        let now = Instant::now();
        self.counters.batches.add(1);
        if let Some((fence, _)) = self.marks.get(&batch.producer)
            && batch.epoch < *fence
        {
            // A dead incarnation's batch arriving after its replacement asked where to
            // resume: the replacement produces these events again from its ring.
            self.counters.fenced.add(1);
            let _ = tx.send(BatchAck {
                producer: std::mem::take(&mut batch.producer),
                epoch: batch.epoch,
                seq: batch.seq,
                duplicates: 0,
            });
            return;
        }
        if batch.ring_mark > 0 {
            let e = self.marks.entry(batch.producer.clone()).or_insert((0, 0));
            e.1 = e.1.max(batch.ring_mark);
        }
        let pi = self.producer_idx(&batch.producer, batch.epoch);
        let mut ack = BatchAck {
            producer: std::mem::take(&mut batch.producer),
            epoch: batch.epoch,
            seq: batch.seq,
            duplicates: 0,
        };
        let taken = self.producers[pi].taken;
        if batch.seq <= taken {
            self.counters.duplicates.add(1);
            let p = &mut self.producers[pi];
            p.duplicates += 1;
            ack.duplicates = p.duplicates;
            ack.seq = taken;
            self.pending.push_back(PendingAck {
                tx,
                ack,
                producer: pi,
                done: 0,
                mark: batch.ring_mark,
                until: Vec::new(),
            });
        } else {
            self.counters.events_in.add(batch.len() as u64);
            for o in 0..self.outputs.len() {
                self.chosen[o] = None;
            }
            let worker = Some(batch.worker);
            let mut bad = 0u64;
            let mut first_error = None;
            for (index, encoded) in batch.events().enumerate() {
                if let Err(e) = batch::decode_event(&mut self.event, encoded) {
                    bad += 1;
                    first_error.get_or_insert(e);
                    continue;
                }
                let Some(kind) = render::kind(&self.event) else {
                    self.counters.unknown.add(1);
                    continue;
                };
                if let Some(last) = &mut self.last_pcap_filename
                    && !self.event.pcap_filename.is_empty()
                    && *last != self.event.pcap_filename
                {
                    last.clone_from(&self.event.pcap_filename);
                }
                let bit = type_bit(kind);
                let meta = Meta {
                    event_type: render::kind_name(kind).unwrap_or("unknown"),
                    producer: &ack.producer,
                    epoch: batch.epoch,
                    seq: batch.seq,
                    index: index as u32,
                };
                let mut rendered_group = usize::MAX;
                let mut written = false;
                for o in 0..self.outputs.len() {
                    if self.outputs[o].types & bit == 0 {
                        continue;
                    }
                    let t = match self.chosen[o] {
                        Some(t) => t,
                        None => {
                            let t = self.target_for(o, worker);
                            self.chosen[o] = Some(t);
                            t
                        }
                    };
                    let out = &self.outputs[o];
                    if out.render_group != rendered_group {
                        self.line.clear();
                        render::render(&mut self.line, &self.event, &out.opts);
                        rendered_group = out.render_group;
                    }
                    self.targets[t].accept(&self.line, &meta, now);
                    written = true;
                }
                if self.fileinfo_store.is_some() {
                    self.store_fileinfo();
                }
                if written {
                    self.counters.events_written.add(1);
                    if let Some(Some(c)) = self.counters.by_type.get(kind) {
                        c.add(1);
                    }
                }
            }
            if let Some(e) = first_error {
                // One line per batch, not per event.
                self.counters.bad.add(bad);
                tracing::warn!(
                    "batch {} of {}: {bad} event(s) did not decode and were skipped ({e})",
                    batch.seq,
                    ack.producer
                );
            }
            let until = self
                .chosen
                .iter()
                .flatten()
                .map(|&t| (t, self.targets[t].accepted()))
                .collect();
            self.producers[pi].taken = batch.seq;
            self.pending.push_back(PendingAck {
                tx,
                ack,
                producer: pi,
                done: batch.seq,
                mark: batch.ring_mark,
                until,
            });
        }
        if batch.flush {
            self.flush(now, false);
        } else {
            self.release();
        }
    }

    /// With `write-fileinfo`: the `fileinfo` record of a stored file is written to
    /// `<store>/<xx>/<sha256>.<seconds>.<file_id>.json` (Suricata's name: the file's
    /// time and its id), one JSON line.
    fn store_fileinfo(&mut self) {
        let Some((dir, opts)) = &self.fileinfo_store else {
            return;
        };
        let Some(f) = &self.event.fileinfo else {
            return;
        };
        let (Some(id), true, Some(prefix)) = (f.file_id, f.stored, f.sha256.get(..2)) else {
            return;
        };
        let secs = self.event.timestamp_us.div_euclid(1_000_000);
        let path = dir
            .join(prefix)
            .join(format!("{}.{secs}.{id}.json", f.sha256));
        self.fileinfo_line.clear();
        render::render(&mut self.fileinfo_line, &self.event, opts);
        if self.fileinfo_line.last() != Some(&b'\n') {
            self.fileinfo_line.push(b'\n');
        }
        if let Err(e) = std::fs::write(&path, &self.fileinfo_line) {
            self.counters.errors.add(1);
            tracing::warn!("file-store: cannot write {}: {e}", path.display());
        }
    }

    /// Sends every acknowledgement whose bytes are delivered, in order per producer,
    /// and answers flush requests that are done.
    fn release(&mut self) {
        self.blocked.clear();
        let mut i = 0;
        while i < self.pending.len() {
            let p = &self.pending[i];
            let done = !self.blocked.contains(&p.producer)
                && p.until
                    .iter()
                    .all(|&(t, u)| self.targets[t].delivered() >= u);
            if done {
                if let Some(p) = self.pending.remove(i) {
                    let producer = &self.producers[p.producer];
                    if p.done > 0 {
                        self.state.set_done(producer.state_slot, p.done);
                    }
                    // The bytes are handed to the OS: a restarted writer may tell the
                    // producer's replacement to resume after this batch's records.
                    if p.mark > 0
                        && let Some(slot) = producer.mark_slot
                    {
                        self.state.set_mark(slot, p.mark);
                    }
                    let _ = p.tx.send(p.ack);
                }
            } else {
                if !self.blocked.contains(&p.producer) {
                    self.blocked.push(p.producer);
                }
                i += 1;
            }
        }
        if !self.waiters.is_empty() {
            let now = Instant::now();
            let targets = &self.targets;
            let held: u64 = targets.iter().map(Target::held).sum();
            let mut keep = Vec::new();
            for w in self.waiters.drain(..) {
                let complete = w
                    .until
                    .iter()
                    .zip(targets)
                    .all(|(u, t)| t.delivered() >= *u);
                if complete || now >= w.deadline {
                    let _ = w.reply.send(FlushReply {
                        complete,
                        held_bytes: held,
                    });
                } else {
                    keep.push(w);
                }
            }
            self.waiters = keep;
        }
        self.update_counters();
    }

    fn update_counters(&self) {
        let mut sum = crate::output::TargetCounters::default();
        let mut held = 0;
        for t in &self.targets {
            let c = t.counters();
            sum.write_calls += c.write_calls;
            sum.bytes += c.bytes;
            sum.errors += c.errors;
            sum.reconnects += c.reconnects;
            sum.dropped += c.dropped;
            sum.resent_bytes += c.resent_bytes;
            held += t.held();
        }
        let c = &self.counters;
        c.write_calls.set(sum.write_calls);
        c.bytes.set(sum.bytes);
        c.errors.set(sum.errors);
        c.reconnects.set(sum.reconnects);
        c.dropped.set(sum.dropped);
        c.resent.set(sum.resent_bytes);
        c.held.set(held);
        for (t, oc) in &self.net_outputs {
            let Some(n) = self.targets[*t].net_counters() else {
                continue;
            };
            oc.sent.set(n.sent);
            oc.acked.set(n.acked);
            oc.spooled.set(n.spooled);
            oc.spooled_bytes.set(n.spooled_bytes);
            oc.replayed.set(n.replayed);
            oc.dropped.set(n.dropped);
            oc.resent.set(n.resent);
            oc.lag.set(n.lag);
            oc.errors.set(self.targets[*t].counters().errors);
        }
    }

    /// Hands every output's buffer to the OS (`force`: retry failing outputs now).
    pub fn flush(&mut self, now: Instant, force: bool) {
        for t in &mut self.targets {
            t.flush(now, force);
        }
        self.counters.flushes.add(1);
        self.release();
    }

    fn reopen(&mut self) -> ReopenReply {
        let now = Instant::now();
        let mut reply = ReopenReply::default();
        for t in &mut self.targets {
            if t.reopen(now) {
                reply.reopened += 1;
            } else if t.is_failing() {
                reply
                    .errors
                    .push(format!("{}: still failing, retrying", t.label()));
            }
        }
        // Counted once the files are reopened: a reader of the counter may rely on them.
        self.counters.reopens.add(1);
        self.release();
        reply
    }

    /// Writes a `stats` record to every output that logs stats.
    fn write_stats(&mut self, now: Instant) {
        let now_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        self.update_counters();
        let mut ev = stats::stats_event(&stats::read_pages(&self.runtime), now_us);
        if let Some(name) = &self.last_pcap_filename {
            ev.pcap_filename.clone_from(name);
        }
        let bit = stats_bit();
        for o in 0..self.outputs.len() {
            if self.outputs[o].types & bit == 0 {
                continue;
            }
            let t = self.target_for(o, None);
            self.line.clear();
            render::render(&mut self.line, &ev, &self.outputs[o].opts);
            let meta = Meta {
                event_type: "stats",
                producer: "eve-writer",
                epoch: self.incarnation,
                seq: self.stats_seq,
                index: o as u32,
            };
            self.targets[t].accept(&self.line, &meta, now);
        }
        self.counters.stats_records.add(1);
        self.stats_seq += 1;
        self.release();
    }

    fn counter_values(&self) -> Vec<(String, u64)> {
        self.update_counters();
        let mut names = counter_names();
        for (t, _) in &self.net_outputs {
            if let Some(n) = self.outputs.iter().position(|o| o.main == Some(*t)) {
                names.extend(eve_output_counter_names(n));
            }
        }
        names
            .into_iter()
            .map(|n| {
                let v = self.counters.page.counter(&n).map_or(0, |c| c.get());
                (n, v)
            })
            .collect()
    }

    /// Serves messages until shutdown (or until every sender is gone).
    pub fn run(mut self, rx: Receiver<Msg>) {
        let start = Instant::now();
        let mut next_flush = self.flush_every.map(|d| start + d);
        let mut next_stats = self.stats_every.map(|d| start + d);
        loop {
            let now = Instant::now();
            let wall = SystemTime::now();
            let mut deadline = now + Duration::from_secs(1);
            for t in [next_flush, next_stats].into_iter().flatten() {
                deadline = deadline.min(t);
            }
            for t in &self.targets {
                if let Some(d) = t.next_deadline(now, wall) {
                    deadline = deadline.min(d);
                }
            }
            for w in &self.waiters {
                deadline = deadline.min(w.deadline);
            }
            match rx.recv_timeout(deadline.saturating_duration_since(now)) {
                Ok(Msg::Batch(b, tx)) => self.take(b, tx),
                Ok(Msg::Flush { timeout, reply }) => {
                    let until = self.targets.iter().map(Target::accepted).collect();
                    self.waiters.push(FlushWaiter {
                        deadline: Instant::now() + timeout,
                        until,
                        reply,
                    });
                    self.flush(Instant::now(), true);
                }
                Ok(Msg::Reopen(reply)) => {
                    let r = self.reopen();
                    if let Some(tx) = reply {
                        let _ = tx.send(r);
                    }
                }
                Ok(Msg::Counters(tx)) => {
                    let _ = tx.send(self.counter_values());
                }
                Ok(Msg::Resume {
                    producer,
                    epoch,
                    reply,
                }) => {
                    let _ = reply.send(self.resume(producer, epoch));
                }
                Ok(Msg::Shutdown) | Err(RecvTimeoutError::Disconnected) => {
                    self.shutdown();
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            let now = Instant::now();
            let wall = SystemTime::now();
            if let (Some(t), Some(every)) = (next_flush, self.flush_every)
                && now >= t
            {
                self.flush(now, false);
                next_flush = Some(now + every);
            }
            if let (Some(t), Some(every)) = (next_stats, self.stats_every)
                && now >= t
            {
                self.write_stats(now);
                next_stats = Some(now + every);
            }
            let mut polled = false;
            for t in &mut self.targets {
                // Redis replies are due "soon" (now + 1 ms) whenever some are missing:
                // anything due within that slack is polled now.
                if t.next_deadline(now, wall)
                    .is_some_and(|d| d <= now + crate::output::REPLY_POLL)
                {
                    t.poll(now, wall);
                    polled = true;
                }
            }
            if polled || !self.waiters.is_empty() {
                self.release();
            }
        }
    }

    /// Writes a last `stats` record (as Suricata does at exit, so that short pcap runs
    /// have one), flushes everything, and keeps retrying failing outputs for a while.
    fn shutdown(&mut self) {
        if self.stats_every.is_some() {
            self.write_stats(Instant::now());
        }
        let give_up = Instant::now() + SHUTDOWN_GRACE;
        loop {
            self.flush(Instant::now(), true);
            for t in &mut self.targets {
                t.poll(Instant::now(), SystemTime::now());
            }
            let now = Instant::now();
            let mut held: u64 = self.targets.iter().map(Target::held).sum();
            let drained = held == 0 && self.targets.iter().all(Target::is_drained);
            if drained || now >= give_up {
                // Network outputs put what they still hold into their spools (sent at
                // the next start).
                held = self.targets.iter_mut().map(|t| t.close(now)).sum();
                self.release();
                if held == 0 {
                    return;
                }
            }
            if Instant::now() >= give_up {
                tracing::error!(
                    "stopping with {held} bytes of events not written (outputs failing); \
                     their producers were not acknowledged and still hold them"
                );
                return;
            }
            std::thread::sleep(if held == 0 {
                crate::output::REPLY_POLL
            } else {
                crate::output::RETRY_MIN
            });
        }
    }
}

/// Starts the writer thread.
pub fn spawn(writer: Writer) -> Result<(Sender<Msg>, std::thread::JoinHandle<()>), WriterError> {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::Builder::new()
        .name("eve-writer".to_string())
        .spawn(move || writer.run(rx))
        .map_err(|e| WriterError::Thread(e.to_string()))?;
    Ok((tx, h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_proto::events::EventBatch;

    fn config(dir: &Path, sets: &[&str]) -> Config {
        let mut o = vec![
            format!("default-log-dir={}", dir.display()),
            format!("runtime-dir={}", dir.display()),
        ];
        o.extend(sets.iter().map(|s| s.to_string()));
        meerkat_config::resolve(None, &o).unwrap().config
    }

    fn batch(
        producer: &str,
        epoch: u64,
        seq: u64,
        worker: u32,
        n: usize,
        flush: bool,
    ) -> EventBatch {
        let mut events = Vec::new();
        for i in 0..n {
            let mut ev = if i % 2 == 0 {
                crate::render::tests::sample_alert()
            } else {
                crate::render::tests::sample_flow()
            };
            ev.pcap_cnt = epoch * 1_000_000 + seq * 1000 + i as u64;
            events.push(ev);
        }
        EventBatch {
            producer: producer.to_string(),
            epoch,
            seq,
            worker,
            events,
            flush,
            ring_mark: 0,
        }
    }

    fn send(tx: &Sender<Msg>, b: EventBatch) -> oneshot::Receiver<BatchAck> {
        let (atx, arx) = oneshot::channel();
        tx.send(Msg::Batch(RawBatch::from_batch(&b), atx)).unwrap();
        arx
    }

    fn lines(p: &Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(p)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    fn marked(producer: &str, epoch: u64, seq: u64, mark: u64) -> EventBatch {
        let mut b = batch(producer, epoch, seq, 0, 3, true);
        b.ring_mark = mark;
        b
    }

    fn resume(tx: &Sender<Msg>, producer: &str, epoch: u64) -> u64 {
        let (reply, rx) = oneshot::channel();
        tx.send(Msg::Resume {
            producer: producer.to_string(),
            epoch,
            reply,
        })
        .unwrap();
        rx.blocking_recv().unwrap()
    }

    /// Issue 8's limit: the writer and a worker both die. The replacement worker (a new
    /// epoch, its seqs from 1 again) asks the restarted writer where to resume its ring;
    /// told 0, it would produce again the events of the records the dead pair had
    /// written, and the writer would write them twice. The marks of delivered batches
    /// and the fences are in the state page, so the restarted writer answers as the old
    /// one would have.
    #[test]
    fn a_restarted_writer_still_knows_where_a_replacement_worker_resumes() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(dir.path(), &["stats.enabled=no"]);
        let eve = dir.path().join("eve.json");
        let (tx, h) = spawn(Writer::new(&cfg, dir.path()).unwrap()).unwrap();
        assert_eq!(resume(&tx, "detect-0", 100), 0);
        for (seq, mark) in [(1, 4096), (2, 8192)] {
            let ack = send(&tx, marked("detect-0", 100, seq, mark))
                .blocking_recv()
                .unwrap();
            assert_eq!(ack.seq, seq);
        }
        // Another producer's marks are its own.
        send(&tx, marked("detect-1", 300, 1, 512))
            .blocking_recv()
            .unwrap();
        assert_eq!(lines(&eve).len(), 9);
        // Recorded at the acknowledgements, not at a shutdown (a kill -9 has none):
        // another mapping of the page sees them while the writer still runs.
        let page = StatePage::open(&dir.path().join("eve-writer.state")).unwrap();
        let mut m = page.marks();
        m.sort();
        assert_eq!(
            m,
            vec![
                ("detect-0".to_string(), 100, 8192),
                ("detect-1".to_string(), 0, 512)
            ]
        );
        drop(page);
        drop(tx);
        h.join().unwrap();

        // Restarted: detect-0 died too; its replacement resumes after ring byte 8192.
        let (tx, h) = spawn(Writer::new(&cfg, dir.path()).unwrap()).unwrap();
        assert_eq!(resume(&tx, "detect-0", 200), 8192);
        assert_eq!(resume(&tx, "detect-1", 301), 512);
        assert_eq!(resume(&tx, "detect-9", 1), 0);
        // A late batch of the dead incarnation is fenced, not written.
        let late = send(&tx, marked("detect-0", 100, 3, 12_288))
            .blocking_recv()
            .unwrap();
        assert_eq!((late.seq, late.duplicates), (3, 0));
        let next = send(&tx, marked("detect-0", 200, 1, 12_288))
            .blocking_recv()
            .unwrap();
        assert_eq!(next.seq, 1);
        assert_eq!(lines(&eve).len(), 12, "only the new incarnation's batch");
        drop(tx);
        h.join().unwrap();

        // And again: the fence (epoch 200) and the new mark were kept too.
        let (tx, h) = spawn(Writer::new(&cfg, dir.path()).unwrap()).unwrap();
        send(&tx, marked("detect-0", 100, 4, 16_384))
            .blocking_recv()
            .unwrap();
        assert_eq!(lines(&eve).len(), 12, "epoch 100 is still fenced");
        assert_eq!(resume(&tx, "detect-0", 201), 12_288);
        let (ctx, crx) = oneshot::channel();
        tx.send(Msg::Counters(ctx)).unwrap();
        let c: HashMap<String, u64> = crx.blocking_recv().unwrap().into_iter().collect();
        assert_eq!(c["eve.fenced_batches"], 1);
        tx.send(Msg::Shutdown).unwrap();
        h.join().unwrap();
    }

    #[test]
    fn acks_after_flush_and_drops_duplicates_across_restarts() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config(
            dir.path(),
            &["outputs.eve-log.buffer-size=1mb", "stats.enabled=no"],
        );
        let (tx, h) = spawn(Writer::new(&cfg, dir.path()).unwrap()).unwrap();
        let mut a1 = send(&tx, batch("detect-0", 7, 1, 0, 4, false));
        let a2 = send(&tx, batch("detect-0", 7, 2, 0, 4, true));
        // Batch 1 is acknowledged only with the flush that batch 2 asked for.
        let ack2 = a2.blocking_recv().unwrap();
        assert_eq!(a1.try_recv().unwrap().seq, 1);
        assert_eq!((ack2.seq, ack2.duplicates), (2, 0));
        assert_eq!(lines(&dir.path().join("eve.json")).len(), 8);
        tx.send(Msg::Shutdown).unwrap();
        h.join().unwrap();

        // A new writer (same runtime dir) remembers what was delivered.
        let (tx, h) = spawn(Writer::new(&cfg, dir.path()).unwrap()).unwrap();
        let dup = send(&tx, batch("detect-0", 7, 2, 0, 4, true))
            .blocking_recv()
            .unwrap();
        assert_eq!((dup.seq, dup.duplicates), (2, 1));
        let next = send(&tx, batch("detect-0", 7, 3, 0, 2, true))
            .blocking_recv()
            .unwrap();
        assert_eq!(next.seq, 3);
        // Another incarnation of the producer is a new sequence space.
        let other = send(&tx, batch("detect-0", 8, 1, 0, 1, true))
            .blocking_recv()
            .unwrap();
        assert_eq!((other.seq, other.duplicates), (1, 0));
        let (ctx, crx) = oneshot::channel();
        tx.send(Msg::Counters(ctx)).unwrap();
        let c: HashMap<String, u64> = crx.blocking_recv().unwrap().into_iter().collect();
        assert_eq!(c["eve.duplicate_batches"], 1);
        assert_eq!(c["eve.events_written"], 3);
        tx.send(Msg::Shutdown).unwrap();
        h.join().unwrap();
        let all = lines(&dir.path().join("eve.json"));
        assert_eq!(all.len(), 11);
        let mut cnts: Vec<u64> = all
            .iter()
            .map(|v| v["pcap_cnt"].as_u64().unwrap())
            .collect();
        cnts.sort_unstable();
        cnts.dedup();
        assert_eq!(cnts.len(), 11, "no line written twice");
    }

    #[test]
    fn outputs_filter_by_type_and_threaded_splits_by_worker() {
        let dir = tempfile::tempdir().unwrap();
        let yaml = dir.path().join("m.yaml");
        std::fs::write(
            &yaml,
            format!(
                "default-log-dir: {d}\nruntime-dir: {d}\noutputs:\n  - eve-log:\n      filename: all.json\n      threaded: yes\n      types: [alert, flow, stats]\n  - eve-log:\n      filename: alerts.json\n      buffer-size: 64kb\n      types:\n        - alert:\n            metadata: no\n",
                d = dir.path().display()
            ),
        )
        .unwrap();
        let cfg = meerkat_config::resolve(Some(&yaml), &[]).unwrap().config;
        let (tx, h) = spawn(Writer::new(&cfg, dir.path()).unwrap()).unwrap();
        send(&tx, batch("detect-0", 1, 1, 0, 4, true))
            .blocking_recv()
            .unwrap();
        send(&tx, batch("detect-1", 1, 1, 1, 2, true))
            .blocking_recv()
            .unwrap();
        let mut bad = batch("detect-2", 1, 1, 5000, 1, true);
        bad.events.push(Event {
            event_type: 99,
            ..Default::default()
        });
        send(&tx, bad).blocking_recv().unwrap();
        let (rtx, rrx) = oneshot::channel();
        tx.send(Msg::Flush {
            timeout: Duration::from_secs(5),
            reply: rtx,
        })
        .unwrap();
        assert!(rrx.blocking_recv().unwrap().complete);
        tx.send(Msg::Shutdown).unwrap();
        h.join().unwrap();
        assert_eq!(lines(&dir.path().join("all.0.json")).len(), 4);
        assert_eq!(lines(&dir.path().join("all.1.json")).len(), 2);
        // A worker index beyond the limit goes to the unsuffixed file, as do the
        // writer's own records (the stats record written at shutdown).
        let main = lines(&dir.path().join("all.json"));
        assert_eq!(main.len(), 2);
        assert_eq!(main[0]["event_type"], "alert");
        assert_eq!(main[1]["event_type"], "stats");
        assert_eq!(
            main[1]["stats"]["uptime"].as_u64().map(|u| u < 3600),
            Some(true)
        );
        let alerts = lines(&dir.path().join("alerts.json"));
        assert_eq!(alerts.len(), 2 + 1 + 1);
        assert!(alerts.iter().all(|v| v["event_type"] == "alert"));
        assert!(alerts.iter().all(|v| v["alert"].get("metadata").is_none()));
    }
}
