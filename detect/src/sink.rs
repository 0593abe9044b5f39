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
//! Ring marks (exactly-once across a worker crash): the worker calls [`EventSink::begin`]
//! before a batch of ring records and [`EventSink::mark`] with its ring read position
//! after it. Batches are cut only at marks (a batch never holds part of a ring batch's
//! events), each carries its mark (`EventBatch.ring_mark`), and once the writer has
//! acknowledged a batch the client publishes its mark ([`EventSink::acked_mark`]); the
//! worker releases ring space only up to that mark. A replacement worker asks the writer
//! where to resume ([`resume_point`]: the highest mark it took, which also fences the
//! dead incarnation's late batches) and skips the records before it: every packet's
//! events are written once, even when the worker is killed.
//!
//! Each mark also names the ring sequence number of the last packet before it; once
//! acknowledged it is published in a shared counter ([`AckedMark`]). Capture reads it to
//! checkpoint a file offset only when everything before it is written (see capture's
//! `pcapdir`). [`EventSink::flush_mark`] sends an outstanding mark at once (the worker
//! calls it when its ring is empty, e.g. while capture waits for a checkpoint).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use meerkat_proto::events::event_stream_client::EventStreamClient;
use meerkat_proto::events::{BatchAck, Event, EventBatch};
use meerkat_shm::{CounterPage, CounterRef};
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
    /// Highest ring mark whose batch the writer acknowledged.
    pub acked_mark: AtomicU64,
    /// Handoffs (see [`EventSink::flush_mark`]) whose events are all acknowledged.
    pub handoffs_acked: AtomicU64,
}

/// The shared counter where the client publishes the highest acknowledged packet
/// sequence number.
#[derive(Debug, Clone)]
pub struct AckedMark {
    /// Keeps the page mapped while the client thread writes to it.
    pub page: CounterPage,
    pub counter: CounterRef,
}

/// What the worker hands to the client thread.
#[derive(Debug)]
struct Handoff {
    /// Ring sequence number of the last packet before `mark`.
    seq: u64,
    events: Vec<Event>,
    /// Ring position: every event of the records before it is in this handoff or an
    /// earlier one.
    mark: u64,
    /// Ask the writer to flush (and so acknowledge) at once.
    flush: bool,
}

/// Errors of the sink.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error("event client thread: {0}")]
    Thread(String),
    #[error("cannot ask the eve-writer at {path} where to resume: {reason}")]
    Resume { path: PathBuf, reason: String },
    #[error("eve-writer at {path} did not acknowledge {unacked} batches within {secs} s")]
    Undelivered {
        path: PathBuf,
        unacked: usize,
        secs: u64,
    },
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
    /// Incarnation number (ns since the epoch at start); 0 = take the current time.
    pub epoch: u64,
    /// Where to publish acknowledged packet sequence numbers, if anywhere.
    pub acked: Option<AckedMark>,
}

/// A batch grows past `batch_size` until the next mark, but not past this many times it.
const MAX_BATCH_FACTOR: usize = 16;

/// Batches events and hands them to the client thread.
#[derive(Debug)]
pub struct EventSink {
    tx: Option<mpsc::Sender<Handoff>>,
    batch: Vec<Event>,
    /// Last ring mark given, and the last one handed over.
    mark: u64,
    mark_sent: u64,
    /// Packet sequence number of the last packet before `mark`.
    seq: u64,
    /// No record has been processed since the last mark: a batch may be cut here.
    at_mark: bool,
    /// Handoffs made so far.
    handed: u64,
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
            epoch: if cfg.epoch != 0 {
                cfg.epoch
            } else {
                new_epoch()
            },
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
            seq: 0,
            at_mark: true,
            handed: 0,
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

    /// The counters, shared (for a thread that waits on acknowledgements).
    pub fn shared_stats(&self) -> Arc<SinkStats> {
        self.stats.clone()
    }

    /// Adds an event; sends the batch when it is full and at a mark.
    pub fn push(&mut self, ev: Event) {
        if self.batch.is_empty() {
            self.batch_started = Some(Instant::now());
        }
        self.batch.push(ev);
        self.stats.events.fetch_add(1, Ordering::Relaxed);
        let full = self.batch.len() >= self.cfg.batch_size;
        if full
            && (self.at_mark
                || self.batch.len() >= self.cfg.batch_size.saturating_mul(MAX_BATCH_FACTOR))
        {
            // Past the hard bound a batch is cut between marks: memory stays bounded,
            // and only a crash right then could write those few events twice.
            self.hand_over(false);
        }
    }

    /// A batch of ring records starts: batches are not cut until the next mark.
    pub fn begin(&mut self) {
        self.at_mark = false;
    }

    /// Every event of the ring records before position `pos` has been pushed; the last
    /// of them has packet sequence number `seq`.
    pub fn mark(&mut self, pos: u64, seq: u64) {
        self.mark = self.mark.max(pos);
        self.seq = self.seq.max(seq);
        self.at_mark = true;
        if self.batch.len() >= self.cfg.batch_size {
            self.hand_over(false);
        }
    }

    /// Highest ring mark whose events the writer has acknowledged: the worker may
    /// release its ring up to here.
    pub fn acked_mark(&self) -> u64 {
        self.stats.acked_mark.load(Ordering::Acquire)
    }

    /// Sends the batch if it is older than the batch delay.
    pub fn tick(&mut self, now: Instant) {
        if let Some(t) = self.batch_started
            && now.duration_since(t) >= self.cfg.batch_delay
        {
            self.flush();
        }
    }

    /// Sends the current batch (blocking while the client is full: backpressure).
    pub fn flush(&mut self) {
        self.batch_started = None;
        if self.batch.is_empty() {
            return;
        }
        self.hand_over(false);
    }

    /// Sends what is pending, even an empty batch if the mark moved, with a flush
    /// request, so that the writer acknowledges everything now. Returns the number of
    /// handoffs made so far: once [`SinkStats::handoffs_acked`] reaches it, every event
    /// pushed before the call is written.
    pub fn flush_mark(&mut self) -> u64 {
        if !self.batch.is_empty() || self.mark > self.mark_sent {
            self.batch_started = None;
            self.hand_over(true);
        }
        self.handed
    }

    fn hand_over(&mut self, flush: bool) {
        let events = std::mem::replace(&mut self.batch, Vec::with_capacity(self.cfg.batch_size));
        self.mark_sent = self.mark;
        self.handed += 1;
        let h = Handoff {
            seq: self.seq,
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
    /// A handoff's events are all written: publish its ring mark and packet seq.
    fn acked(&self, ring_mark: u64, seq: u64) {
        self.stats
            .acked_mark
            .fetch_max(ring_mark, Ordering::Release);
        if let Some(a) = &self.acked {
            a.counter.max(seq);
        }
        self.stats.handoffs_acked.fetch_add(1, Ordering::Release);
    }

    /// Delivers every batch from `rx`; returns the number left unacknowledged (0 unless
    /// the runtime is torn down).
    async fn run(self, mut rx: mpsc::Receiver<Handoff>) -> usize {
        // Each unacknowledged batch with the packet seq of its mark.
        // Shared with the stream being sent: keeping a batch for resending copies nothing.
        let mut unacked: VecDeque<(Arc<EventBatch>, u64)> = VecDeque::new();
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
            let (req_tx, req_rx) = mpsc::channel::<Arc<EventBatch>>(self.max_unacked + 1);
            for (i, (b, _)) in unacked.iter().enumerate() {
                let mut b = b.clone();
                // The last one asks for a flush so that the acks come without delay.
                if i + 1 == unacked.len() && !b.flush {
                    Arc::make_mut(&mut b).flush = true;
                }
                if req_tx.send(b).await.is_err() {
                    break;
                }
                self.stats.resent.fetch_add(1, Ordering::Relaxed);
            }
            let mut acks = match publish(channel, ReceiverStream::new(req_rx)).await {
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
                                if let Some((b, seq)) = unacked.pop_front() {
                                    self.acked(b.ring_mark, seq);
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
                        let (events, mark, seq, asked) = match next {
                            Some(h) => (h.events, h.mark, h.seq, h.flush),
                            None => (Vec::new(), 0, 0, false),
                        };
                        if events.is_empty() && !finishing && unacked.is_empty() {
                            // Nothing in flight: every earlier event is written already,
                            // and so is this mark's.
                            self.acked(mark, seq);
                            continue;
                        }
                        let batch = Arc::new(EventBatch {
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
                            ring_mark: mark,
                        });
                        next_seq += 1;
                        unacked.push_back((batch.clone(), seq));
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

/// `EventStream.Publish` over `channel`, sending shared batches (see [`SharedBatchCodec`]);
/// the generated client would need each batch by value.
async fn publish(
    channel: Channel,
    batches: ReceiverStream<Arc<EventBatch>>,
) -> Result<tonic::Response<tonic::codec::Streaming<BatchAck>>, tonic::Status> {
    let mut grpc = tonic::client::Grpc::new(channel)
        .max_decoding_message_size(64 << 20)
        .max_encoding_message_size(64 << 20);
    grpc.ready()
        .await
        .map_err(|e| tonic::Status::unknown(format!("event stream not ready: {e}")))?;
    let path = tonic::codegen::http::uri::PathAndQuery::from_static(
        "/meerkat.events.v1.EventStream/Publish",
    );
    let mut req = tonic::Request::new(batches);
    req.extensions_mut().insert(tonic::GrpcMethod::new(
        "meerkat.events.v1.EventStream",
        "Publish",
    ));
    grpc.streaming(req, path, SharedBatchCodec).await
}

/// The `EventStream.Publish` codec with batches sent by reference: the same protobuf
/// encoding as the generated one, but the client keeps each batch (for resending after
/// a reconnect) without a deep copy of its events.
#[derive(Debug, Clone, Copy, Default)]
struct SharedBatchCodec;

impl tonic::codec::Codec for SharedBatchCodec {
    type Encode = Arc<EventBatch>;
    type Decode = BatchAck;
    type Encoder = SharedBatchEncoder;
    type Decoder = tonic_prost::ProstDecoder<BatchAck>;

    fn encoder(&mut self) -> SharedBatchEncoder {
        SharedBatchEncoder
    }

    fn decoder(&mut self) -> Self::Decoder {
        tonic_prost::ProstDecoder::new(tonic::codec::BufferSettings::default())
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct SharedBatchEncoder;

impl tonic::codec::Encoder for SharedBatchEncoder {
    type Item = Arc<EventBatch>;
    type Error = tonic::Status;

    fn encode(
        &mut self,
        item: Arc<EventBatch>,
        buf: &mut tonic::codec::EncodeBuf<'_>,
    ) -> Result<(), tonic::Status> {
        // The buffer grows as needed; an error here would be a full fixed-size buffer.
        prost::Message::encode(&*item, buf)
            .map_err(|e| tonic::Status::internal(format!("cannot encode an event batch: {e}")))
    }
}

/// A new incarnation number: ns since the Unix epoch.
pub fn new_epoch() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(1)
}

/// Asks the eve-writer at `socket` where `producer` resumes its ring (the highest ring
/// mark the writer took from it, 0 for none) and fences its incarnations older than
/// `epoch`. Retries until `timeout` while the writer is not reachable.
pub fn resume_point(
    socket: &Path,
    producer: &str,
    epoch: u64,
    timeout: Duration,
) -> Result<u64, SinkError> {
    use meerkat_proto::events::ResumeRequest;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| SinkError::Thread(e.to_string()))?;
    let deadline = Instant::now() + timeout;
    rt.block_on(async {
        let mut backoff = Duration::from_millis(20);
        loop {
            let attempt = async {
                let channel = connect(socket).await.map_err(|e| e.to_string())?;
                let mut client = EventStreamClient::new(channel);
                client
                    .resume(ResumeRequest {
                        producer: producer.to_string(),
                        epoch,
                    })
                    .await
                    .map(|r| r.into_inner().ring_mark)
                    .map_err(|s| s.message().to_string())
            };
            match attempt.await {
                Ok(mark) => return Ok(mark),
                Err(e) if Instant::now() >= deadline => {
                    return Err(SinkError::Resume {
                        path: socket.to_path_buf(),
                        reason: e,
                    });
                }
                Err(_) => {
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                }
            }
        }
    })
}
