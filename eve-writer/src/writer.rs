//! The writer thread: the single owner of the outputs. It takes batches from the gRPC
//! streams, drops the ones it already took, renders and writes the rest, flushes on
//! demand and every `heartbeat.output-flush-interval`, and acknowledges each batch once
//! its bytes have been handed to the OS.

use std::collections::HashMap;
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use meerkat_config::{Config, EveLog, FileType};
use meerkat_proto::events::{BatchAck, EventBatch, EventType};
use meerkat_ring::{CounterPage, CounterRef};
use tokio::sync::oneshot;

use crate::WriterError;
use crate::output::FileOutput;
use crate::render::{self, RenderOptions};

/// Work for the writer thread.
#[derive(Debug)]
pub enum Msg {
    Batch(EventBatch, oneshot::Sender<BatchAck>),
    /// Flush every output; answer when done.
    Flush(oneshot::Sender<()>),
    /// Flush and stop.
    Shutdown,
}

/// Counter names of the writer.
pub fn counter_names() -> Vec<String> {
    let mut v: Vec<String> = [
        "batches",
        "duplicate_batches",
        "events_in",
        "events_written",
        "write_calls",
        "bytes",
        "flushes",
        "errors",
    ]
    .iter()
    .map(|n| format!("eve.{n}"))
    .collect();
    for t in TYPES {
        v.push(format!("eve.events.{}", render::type_name(*t)));
    }
    v
}

const TYPES: &[EventType] = &[
    EventType::Alert,
    EventType::Flow,
    EventType::Anomaly,
    EventType::Stats,
    EventType::Http,
    EventType::Dns,
    EventType::Tls,
    EventType::Fileinfo,
];

struct Counters {
    batches: CounterRef,
    duplicates: CounterRef,
    events_in: CounterRef,
    events_written: CounterRef,
    write_calls: CounterRef,
    bytes: CounterRef,
    flushes: CounterRef,
    errors: CounterRef,
    by_type: Vec<CounterRef>,
    _page: CounterPage,
}

/// One configured eve-log output.
struct Output {
    file: FileOutput,
    /// Bit per EventType value that this output logs.
    types: u32,
    opts: RenderOptions,
}

fn type_mask(eve: &EveLog) -> u32 {
    let mut m = 0;
    for t in TYPES {
        if eve.type_entry(render::type_name(*t)).is_some() {
            m |= 1 << (*t as i32);
        }
    }
    m
}

/// An acknowledgement waiting for its bytes to be handed to the OS.
struct PendingAck {
    tx: oneshot::Sender<BatchAck>,
    ack: BatchAck,
    /// Per output, the `accepted` count the batch ended at.
    until: Vec<u64>,
}

pub struct Writer {
    outputs: Vec<Output>,
    /// Highest seq taken per (producer, epoch).
    taken: HashMap<(String, u64), u64>,
    pending: Vec<PendingAck>,
    duplicates_by_producer: HashMap<(String, u64), u64>,
    flush_every: Option<Duration>,
    counters: Counters,
    line: Vec<u8>,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("outputs", &self.outputs.len())
            .finish()
    }
}

impl Writer {
    pub fn new(config: &Config, runtime: &Path) -> Result<Writer, WriterError> {
        let page = CounterPage::create(&runtime.join("counters-eve-writer"), &counter_names())?;
        let c = |n: &str| page.expect(&format!("eve.{n}"));
        let counters = Counters {
            batches: c("batches"),
            duplicates: c("duplicate_batches"),
            events_in: c("events_in"),
            events_written: c("events_written"),
            write_calls: c("write_calls"),
            bytes: c("bytes"),
            flushes: c("flushes"),
            errors: c("errors"),
            by_type: TYPES
                .iter()
                .map(|t| c(&format!("events.{}", render::type_name(*t))))
                .collect(),
            _page: page.clone(),
        };
        let mut outputs = Vec::new();
        for eve in config.eve_logs() {
            if eve.filetype != FileType::Regular {
                return Err(WriterError::Unsupported(format!(
                    "outputs.eve-log.filetype {:?} is not available yet",
                    eve.filetype
                )));
            }
            let path = config.default_log_dir.join(&eve.filename);
            let file =
                FileOutput::open(&path, eve.buffer_size.bytes() as usize).map_err(|source| {
                    WriterError::Open {
                        path: path.clone(),
                        source,
                    }
                })?;
            let alert_metadata = eve
                .type_entry("alert")
                .and_then(|t| t.options())
                .and_then(|o| o.metadata)
                .unwrap_or(true);
            outputs.push(Output {
                file,
                types: type_mask(eve),
                opts: RenderOptions {
                    alert_metadata,
                    pcap_filename: eve.pcap_file,
                },
            });
        }
        let interval = config.heartbeat.output_flush_interval;
        Ok(Writer {
            outputs,
            taken: HashMap::new(),
            pending: Vec::new(),
            duplicates_by_producer: HashMap::new(),
            flush_every: (interval > 0).then(|| Duration::from_secs(u64::from(interval))),
            counters,
            line: Vec::with_capacity(4096),
        })
    }

    fn update_counters(&self) {
        let (calls, bytes) = self.outputs.iter().fold((0, 0), |(c, b), o| {
            (c + o.file.write_calls, b + o.file.written)
        });
        self.counters.write_calls.set(calls);
        self.counters.bytes.set(bytes);
    }

    /// Writes a batch (unless already taken) and queues its acknowledgement.
    fn take(&mut self, batch: EventBatch, tx: oneshot::Sender<BatchAck>) {
        self.counters.batches.add(1);
        let key = (batch.producer.clone(), batch.epoch);
        let last = self.taken.get(&key).copied().unwrap_or(0);
        let mut ack = BatchAck {
            producer: batch.producer.clone(),
            epoch: batch.epoch,
            seq: batch.seq,
            duplicates: 0,
        };
        if batch.seq <= last {
            self.counters.duplicates.add(1);
            let d = self.duplicates_by_producer.entry(key).or_insert(0);
            *d += 1;
            ack.duplicates = *d;
            ack.seq = last;
        } else {
            self.counters.events_in.add(batch.events.len() as u64);
            let mut failed = false;
            for ev in &batch.events {
                let kind = EventType::try_from(ev.event_type).unwrap_or(EventType::Unspecified);
                let mut written = false;
                for out in &mut self.outputs {
                    if out.types & (1 << (kind as i32)) == 0 {
                        continue;
                    }
                    self.line.clear();
                    render::render(&mut self.line, ev, &out.opts);
                    if let Err(e) = out.file.write_line(&self.line) {
                        if !failed {
                            tracing::error!("writing {}: {e}", out.file.path().display());
                        }
                        failed = true;
                        self.counters.errors.add(1);
                    }
                    written = true;
                }
                if written {
                    self.counters.events_written.add(1);
                    if let Some(i) = TYPES.iter().position(|t| *t == kind) {
                        self.counters.by_type[i].add(1);
                    }
                }
            }
            self.taken.insert(key, batch.seq);
        }
        self.pending.push(PendingAck {
            tx,
            ack,
            until: self.outputs.iter().map(|o| o.file.accepted).collect(),
        });
        if batch.flush {
            self.flush();
        }
        self.release_acks();
        self.update_counters();
    }

    /// Sends every acknowledgement whose bytes are out: bytes leave each output in the
    /// order they were accepted, so a batch is out once `written` reaches its `until`.
    fn release_acks(&mut self) {
        let written: Vec<u64> = self.outputs.iter().map(|o| o.file.written).collect();
        let mut keep = Vec::with_capacity(self.pending.len());
        for p in self.pending.drain(..) {
            if p.until.iter().zip(&written).all(|(u, w)| w >= u) {
                let _ = p.tx.send(p.ack);
            } else {
                keep.push(p);
            }
        }
        self.pending = keep;
    }

    pub fn flush(&mut self) {
        for out in &mut self.outputs {
            if let Err(e) = out.file.flush() {
                tracing::error!("flushing {}: {e}", out.file.path().display());
                self.counters.errors.add(1);
            }
        }
        self.counters.flushes.add(1);
        self.release_acks();
        self.update_counters();
    }

    /// Serves messages until shutdown (or until every sender is gone).
    pub fn run(mut self, rx: Receiver<Msg>) {
        let mut next_flush = self.flush_every.map(|d| Instant::now() + d);
        loop {
            let timeout = next_flush
                .map(|t| t.saturating_duration_since(Instant::now()))
                .unwrap_or(Duration::from_secs(3600));
            match rx.recv_timeout(timeout) {
                Ok(Msg::Batch(b, tx)) => self.take(b, tx),
                Ok(Msg::Flush(tx)) => {
                    self.flush();
                    let _ = tx.send(());
                }
                Ok(Msg::Shutdown) | Err(RecvTimeoutError::Disconnected) => {
                    self.flush();
                    return;
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
            if let (Some(t), Some(every)) = (next_flush, self.flush_every)
                && Instant::now() >= t
            {
                self.flush();
                next_flush = Some(Instant::now() + every);
            }
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
