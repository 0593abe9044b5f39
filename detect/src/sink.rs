//! The producer side of the `EventStream`: batches events and delivers them to the
//! eve-writer without loss.
//!
//! The worker thread calls [`EventSink::push`]; events are grouped into batches (by count
//! and age) and handed over a bounded channel to a client thread running a small tokio
//! runtime. The client numbers each batch `(producer, epoch, seq)`, keeps it until the
//! writer acknowledges it, and after a lost connection reconnects (with backoff) and sends
//! every unacknowledged batch again, in order. The writer drops batches it already took.
//!
//! Backpressure: the client holds at most `max-unacked-batches`; beyond that it stops
//! taking batches from the channel, the channel fills, and [`EventSink::push`] blocks the
//! worker (offline runs lose nothing).
//!
//! Marks: the worker says, with [`EventSink::mark`], that every event of the packets up to
//! a ring sequence number has been pushed. The mark travels with the next batch, and once
//! the writer has acknowledged that batch (its bytes are in the output) the client
//! publishes the mark in a shared counter ([`AckedMark`]). Capture reads it to checkpoint
//! a file offset only when everything before it is written (see capture's `pcapdir`).
//! [`EventSink::flush_mark`] sends an outstanding mark at once (the worker calls it when
//! its ring is empty, e.g. while capture waits for a checkpoint).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use meerkat_proto::events::event_stream_client::EventStreamClient;
use meerkat_proto::events::{Event, EventBatch};
use meerkat_ring::{CounterPage, CounterRef};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::{Channel, Endpoint, Uri};

/// Longest wait between reconnection attempts.
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Counters of the sink, readable from the worker thread.
#[derive(Debug, Default)]
pub struct SinkStats {
    pub events: AtomicU64,
    pub batches_sent: AtomicU64,
    pub batches_acked: AtomicU64,
    pub resent: AtomicU64,
    pub reconnects: AtomicU64,
    pub duplicates: AtomicU64,
}

/// Errors of the sink.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("event client thread: {0}")]
    Thread(String),
    #[error("eve-writer at {path} did not acknowledge {unacked} batches within {secs} s")]
    Undelivered {
        path: PathBuf,
        unacked: usize,
        secs: u64,
    },
}

/// The shared counter where the client publishes the highest acknowledged mark.
#[derive(Debug, Clone)]
pub struct AckedMark {
    /// Keeps the page mapped while the client thread writes to it.
    pub page: CounterPage,
    pub counter: CounterRef,
}

/// What the worker hands to the client thread.
#[derive(Debug)]
struct Handoff {
    events: Vec<Event>,
    /// Every event of the packets up to this ring sequence number is in this batch or
    /// an earlier one.
    mark: u64,
    /// Ask the writer to flush (and so acknowledge) at once.
    flush: bool,
}

/// Settings of a sink.
#[derive(Debug, Clone)]
pub struct SinkConfig {
    pub socket: PathBuf,
    pub producer: String,
    pub worker: u32,
    pub batch_size: usize,
    pub batch_delay: Duration,
    pub max_unacked: usize,
    /// How long [`EventSink::finish`] waits for the last acknowledgements.
    pub finish_timeout: Duration,
    /// Where to publish acknowledged marks, if anywhere.
    pub acked: Option<AckedMark>,
}

/// Batches events and hands them to the client thread.
#[derive(Debug)]
pub struct EventSink {
    tx: Option<mpsc::Sender<Handoff>>,
    batch: Vec<Event>,
    mark: u64,
    mark_sent: u64,
    batch_started: Option<Instant>,
    cfg: SinkConfig,
    stats: Arc<SinkStats>,
    done_rx: std::sync::mpsc::Receiver<usize>,
    thread: Option<std::thread::JoinHandle<()>>,
}

async fn connect(path: &Path) -> Result<Channel, tonic::transport::Error> {
    let path = path.to_path_buf();
    // The URI is a placeholder: the connector below always dials the Unix socket.
    Endpoint::from_static("http://eve-writer.local")
        .connect_with_connector(tower::service_fn(move |_: Uri| {
            let path = path.clone();
            async move {
                Ok::<_, std::io::Error>(TokioIo::new(tokio::net::UnixStream::connect(path).await?))
            }
        }))
        .await
}

impl EventSink {
    /// Starts the client thread.
    pub fn start(cfg: SinkConfig) -> Result<EventSink, SinkError> {
        let (tx, rx) = mpsc::channel::<Handoff>(cfg.max_unacked.max(1));
        let stats = Arc::new(SinkStats::default());
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| SinkError::Thread(e.to_string()))?;
        let client = Client {
            socket: cfg.socket.clone(),
            producer: cfg.producer.clone(),
            epoch: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1),
            worker: cfg.worker,
            max_unacked: cfg.max_unacked.max(1),
            stats: stats.clone(),
            acked: cfg.acked.clone(),
        };
        let thread = std::thread::Builder::new()
            .name(format!("{}-events", cfg.producer))
            .spawn(move || {
                let left = rt.block_on(client.run(rx));
                let _ = done_tx.send(left);
            })
            .map_err(|e| SinkError::Thread(e.to_string()))?;
        Ok(EventSink {
            tx: Some(tx),
            batch: Vec::with_capacity(cfg.batch_size),
            mark: 0,
            mark_sent: 0,
            batch_started: None,
            stats,
            cfg,
            done_rx,
            thread: Some(thread),
        })
    }

    pub fn stats(&self) -> &SinkStats {
        &self.stats
    }

    /// Adds an event; sends the batch when it is full.
    pub fn push(&mut self, ev: Event) {
        if self.batch.is_empty() {
            self.batch_started = Some(Instant::now());
        }
        self.batch.push(ev);
        self.stats.events.fetch_add(1, Ordering::Relaxed);
        if self.batch.len() >= self.cfg.batch_size {
            self.flush();
        }
    }

    /// Sends the batch if it is older than the batch delay.
    pub fn tick(&mut self, now: Instant) {
        if let Some(t) = self.batch_started
            && now.duration_since(t) >= self.cfg.batch_delay
        {
            self.flush();
        }
    }

    /// Records that every event of the packets up to ring sequence number `seq` has been
    /// pushed.
    pub fn mark(&mut self, seq: u64) {
        self.mark = self.mark.max(seq);
    }

    /// Sends the current batch (blocking while the client is full: backpressure).
    pub fn flush(&mut self) {
        self.batch_started = None;
        if self.batch.is_empty() {
            return;
        }
        self.hand_over(false);
    }

    /// Sends the current batch, even empty, with a flush request, if the mark moved since
    /// the last batch: the mark is acknowledged without waiting for more events.
    pub fn flush_mark(&mut self) {
        if self.mark > self.mark_sent {
            self.batch_started = None;
            self.hand_over(true);
        }
    }

    fn hand_over(&mut self, flush: bool) {
        let events = std::mem::replace(&mut self.batch, Vec::with_capacity(self.cfg.batch_size));
        self.mark_sent = self.mark;
        let h = Handoff {
            events,
            mark: self.mark,
            flush,
        };
        if let Some(tx) = &self.tx
            && tx.blocking_send(h).is_err()
        {
            tracing::error!("event client thread has stopped; events are lost");
        }
    }

    /// Sends what is left and waits until the writer has acknowledged everything.
    pub fn finish(mut self) -> Result<(), SinkError> {
        self.flush();
        drop(self.tx.take());
        let left = self
            .done_rx
            .recv_timeout(self.cfg.finish_timeout)
            .map_err(|_| {
                // The client thread is still trying: what it holds is what was sent
                // and not acknowledged, plus what it never got to send.
                let sent = self.stats.batches_sent.load(Ordering::Relaxed);
                let acked = self.stats.batches_acked.load(Ordering::Relaxed);
                SinkError::Undelivered {
                    path: self.cfg.socket.clone(),
                    unacked: usize::try_from(sent.saturating_sub(acked)).unwrap_or(usize::MAX),
                    secs: self.cfg.finish_timeout.as_secs(),
                }
            })?;
        if let Some(t) = self.thread.take() {
            t.join()
                .map_err(|_| SinkError::Thread("panicked".to_string()))?;
        }
        if left != 0 {
            return Err(SinkError::Undelivered {
                path: self.cfg.socket.clone(),
                unacked: left,
                secs: self.cfg.finish_timeout.as_secs(),
            });
        }
        Ok(())
    }
}

struct Client {
    socket: PathBuf,
    producer: String,
    epoch: u64,
    worker: u32,
    max_unacked: usize,
    stats: Arc<SinkStats>,
    acked: Option<AckedMark>,
}

impl Client {
    fn publish_mark(&self, mark: u64) {
        if let Some(a) = &self.acked {
            a.counter.max(mark);
        }
    }

    /// Delivers every batch from `rx`; returns the number left unacknowledged (0 unless
    /// the runtime is torn down).
    async fn run(self, mut rx: mpsc::Receiver<Handoff>) -> usize {
        // Each unacknowledged batch with the mark it carries.
        let mut unacked: VecDeque<(EventBatch, u64)> = VecDeque::new();
        let mut next_seq = 1u64;
        let mut input_closed = false;
        let mut backoff = Duration::from_millis(20);
        let mut warned = false;
        loop {
            if input_closed && unacked.is_empty() {
                return 0;
            }
            let channel = match connect(&self.socket).await {
                Ok(c) => c,
                Err(e) => {
                    if !warned {
                        tracing::warn!(
                            "cannot reach the eve-writer at {}: {e}; retrying",
                            self.socket.display()
                        );
                        warned = true;
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            let mut client = EventStreamClient::new(channel)
                .max_decoding_message_size(64 << 20)
                .max_encoding_message_size(64 << 20);
            let (req_tx, req_rx) = mpsc::channel::<EventBatch>(self.max_unacked + 1);
            for (i, (b, _)) in unacked.iter().enumerate() {
                let mut b = b.clone();
                // The last one asks for a flush so that the acks come without delay.
                b.flush |= i + 1 == unacked.len();
                if req_tx.send(b).await.is_err() {
                    break;
                }
                self.stats.resent.fetch_add(1, Ordering::Relaxed);
            }
            let mut acks = match client.publish(ReceiverStream::new(req_rx)).await {
                Ok(r) => r.into_inner(),
                Err(e) => {
                    tracing::warn!("eve-writer refused the event stream: {e}; retrying");
                    self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    continue;
                }
            };
            if warned {
                tracing::info!("connected to the eve-writer");
                warned = false;
            }
            backoff = Duration::from_millis(20);
            loop {
                if input_closed && unacked.is_empty() {
                    return 0;
                }
                tokio::select! {
                    ack = acks.message() => match ack {
                        Ok(Some(a)) => {
                            while unacked.front().is_some_and(|(b, _)| b.seq <= a.seq) {
                                if let Some((_, mark)) = unacked.pop_front() {
                                    self.publish_mark(mark);
                                }
                                self.stats.batches_acked.fetch_add(1, Ordering::Relaxed);
                            }
                            self.stats.duplicates.store(a.duplicates, Ordering::Relaxed);
                        }
                        Ok(None) | Err(_) => {
                            self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!("event stream to the eve-writer ended; reconnecting");
                            break;
                        }
                    },
                    next = rx.recv(), if !input_closed && unacked.len() < self.max_unacked => {
                        // End of input: one last, empty batch that asks for a flush so
                        // that everything buffered is written and acknowledged.
                        let finishing = next.is_none();
                        input_closed = finishing;
                        if finishing && unacked.is_empty() {
                            return 0;
                        }
                        let (events, mark, asked) = match next {
                            Some(h) => (h.events, h.mark, h.flush),
                            None => (Vec::new(), 0, false),
                        };
                        if events.is_empty() && !finishing && unacked.is_empty() {
                            // Nothing in flight: every earlier event is written already.
                            self.publish_mark(mark);
                            continue;
                        }
                        let batch = EventBatch {
                            producer: self.producer.clone(),
                            epoch: self.epoch,
                            seq: next_seq,
                            worker: self.worker,
                            events,
                            // Ask for a flush before the window of unacknowledged
                            // batches fills (buffered outputs ack on flush).
                            flush: finishing
                                || asked
                                || unacked.len() + 1 >= self.max_unacked.div_ceil(2),
                        };
                        next_seq += 1;
                        unacked.push_back((batch.clone(), mark));
                        self.stats.batches_sent.fetch_add(1, Ordering::Relaxed);
                        if req_tx.send(batch).await.is_err() {
                            self.stats.reconnects.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                    },
                }
            }
        }
    }
}
