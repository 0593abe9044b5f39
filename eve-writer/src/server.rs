//! The gRPC services of the eve-writer: `EventStream` (each producer stream's batches
//! go to the writer thread in order, and each acknowledgement comes back on the stream
//! in order) and `WriterAdmin` (flush, reopen, counters).
//!
//! `EventStream` is served by [`EventStreamServer`] rather than the generated server:
//! same service, same wire format, but `Publish` batches are taken by [`BatchDecoder`]
//! as `Bytes` cut from tonic's receive buffer (no copy) and only their framing is parsed
//! here ([`RawBatch`]); the writer thread decodes each event right before rendering it
//! (see [`crate::batch`] for why).

use std::pin::Pin;
use std::sync::Arc;
use std::sync::mpsc::Sender;
use std::task::{Context, Poll};

use meerkat_proto::events::event_stream_server::{
    self, EventStream, EventStreamServer as GeneratedServer,
};
use meerkat_proto::events::{BatchAck, EventBatch, ResumeReply, ResumeRequest};
use meerkat_proto::writer::writer_admin_server::WriterAdmin;
use meerkat_proto::writer::{
    CountersReply, CountersRequest, FlushReply, FlushRequest, ReopenReply, ReopenRequest,
    WriterCounter,
};
use prost::bytes::Buf;
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codec::{Codec, DecodeBuf, Decoder};
use tonic::codegen::{Body, BoxFuture, Service, StdError, http};
use tonic::{Request, Response, Status, Streaming};

use crate::batch::RawBatch;
use crate::writer::{FLUSH_TIMEOUT, Msg};

/// The HTTP/2 path of `EventStream.Publish`.
const PUBLISH_PATH: &str = "/meerkat.events.v1.EventStream/Publish";

/// Largest batch accepted, bytes.
pub const MAX_MESSAGE: usize = 64 << 20;

#[derive(Debug, Clone)]
pub struct EventService {
    writer: Sender<Msg>,
}

impl EventService {
    pub fn new(writer: Sender<Msg>) -> Self {
        EventService { writer }
    }
}

type AckStream = Pin<Box<dyn Stream<Item = Result<BatchAck, Status>> + Send>>;

impl EventService {
    /// Serves one `Publish` stream: each batch goes to the writer thread, and each
    /// acknowledgement comes back on the stream in order.
    fn publish_stream<B>(&self, mut inbound: Streaming<B>) -> AckStream
    where
        B: Into<RawBatch> + Send + 'static,
    {
        let writer = self.writer.clone();
        let (tx, rx) = mpsc::channel::<Result<BatchAck, Status>>(64);
        tokio::spawn(async move {
            // Acks of one stream go back in order; several may be waiting for a flush.
            let (ack_tx, mut ack_rx) = mpsc::unbounded_channel::<oneshot::Receiver<BatchAck>>();
            let forward = {
                let tx = tx.clone();
                tokio::spawn(async move {
                    while let Some(waiting) = ack_rx.recv().await {
                        match waiting.await {
                            Ok(ack) => {
                                if tx.send(Ok(ack)).await.is_err() {
                                    return;
                                }
                            }
                            Err(_) => return,
                        }
                    }
                })
            };
            loop {
                match inbound.message().await {
                    Ok(Some(batch)) => {
                        let (otx, orx) = oneshot::channel();
                        if writer.send(Msg::Batch(batch.into(), otx)).is_err() {
                            let _ = tx
                                .send(Err(Status::unavailable("eve-writer is stopping")))
                                .await;
                            break;
                        }
                        if ack_tx.send(orx).is_err() {
                            break;
                        }
                    }
                    Ok(None) => break,
                    Err(status) => {
                        tracing::debug!("event stream ended: {status}");
                        break;
                    }
                }
            }
            drop(ack_tx);
            let _ = forward.await;
        });
        Box::pin(ReceiverStream::new(rx))
    }
}

impl From<EventBatch> for RawBatch {
    fn from(batch: EventBatch) -> RawBatch {
        RawBatch::from_batch(&batch)
    }
}

#[tonic::async_trait]
impl EventStream for EventService {
    type PublishStream = AckStream;

    /// Reached only through the generated server (not [`EventStreamServer`], which
    /// takes `Publish` with [`BatchCodec`]): batches decoded by prost, encoded again.
    async fn publish(
        &self,
        request: Request<Streaming<EventBatch>>,
    ) -> Result<Response<Self::PublishStream>, Status> {
        Ok(Response::new(self.publish_stream(request.into_inner())))
    }

    async fn resume(
        &self,
        request: Request<ResumeRequest>,
    ) -> Result<Response<ResumeReply>, Status> {
        let r = request.into_inner();
        if r.producer.is_empty() {
            return Err(Status::invalid_argument(
                "resume: the producer name is empty",
            ));
        }
        let (tx, rx) = oneshot::channel();
        self.writer
            .send(Msg::Resume {
                producer: r.producer,
                epoch: r.epoch,
                reply: tx,
            })
            .map_err(|_| Status::unavailable("eve-writer is stopping"))?;
        let ring_mark = rx
            .await
            .map_err(|_| Status::unavailable("eve-writer is stopping"))?;
        Ok(Response::new(ResumeReply { ring_mark }))
    }
}

/// tonic decoder of `EventBatch` messages into [`RawBatch`]es (see the module
/// documentation).
#[derive(Debug, Default)]
pub struct BatchDecoder {
    /// Event count of the previous batch of this stream.
    hint: usize,
}

impl Decoder for BatchDecoder {
    type Item = RawBatch;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<RawBatch>, Status> {
        // tonic hands over exactly one message, in its receive buffer: taken as `Bytes`
        // (a view of that buffer, no copy).
        let msg = src.copy_to_bytes(src.remaining());
        let batch = RawBatch::parse(msg, self.hint)
            .map_err(|e| Status::internal(format!("bad EventBatch message: {e}")))?;
        self.hint = batch.len();
        Ok(Some(batch))
    }
}

/// `EventStream` codec: acknowledgements encoded by prost, batches by [`BatchDecoder`].
#[derive(Debug, Default, Clone, Copy)]
pub struct BatchCodec;

impl Codec for BatchCodec {
    type Encode = BatchAck;
    type Decode = RawBatch;
    type Encoder = tonic_prost::ProstEncoder<BatchAck>;
    type Decoder = BatchDecoder;

    fn encoder(&mut self) -> Self::Encoder {
        tonic_prost::ProstEncoder::default()
    }

    fn decoder(&mut self) -> Self::Decoder {
        BatchDecoder::default()
    }
}

/// The `EventStream` gRPC service: `Publish` with [`BatchCodec`]; every other method
/// of the service goes to the generated server, unchanged.
#[derive(Debug)]
pub struct EventStreamServer {
    inner: Arc<EventService>,
    generated: GeneratedServer<EventService>,
    max_message: usize,
}

impl EventStreamServer {
    /// Serves `inner`; messages up to `max_message` bytes either way.
    pub fn new(inner: EventService, max_message: usize) -> Self {
        let inner = Arc::new(inner);
        EventStreamServer {
            generated: GeneratedServer::from_arc(Arc::clone(&inner))
                .max_decoding_message_size(max_message)
                .max_encoding_message_size(max_message),
            inner,
            max_message,
        }
    }
}

impl Clone for EventStreamServer {
    fn clone(&self) -> Self {
        EventStreamServer {
            inner: Arc::clone(&self.inner),
            generated: self.generated.clone(),
            max_message: self.max_message,
        }
    }
}

impl tonic::server::NamedService for EventStreamServer {
    const NAME: &'static str = event_stream_server::SERVICE_NAME;
}

/// `Publish` on [`RawBatch`]es.
struct PublishSvc(Arc<EventService>);

impl tonic::server::StreamingService<RawBatch> for PublishSvc {
    type Response = BatchAck;
    type ResponseStream = AckStream;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;

    fn call(&mut self, request: Request<Streaming<RawBatch>>) -> Self::Future {
        let stream = self.0.publish_stream(request.into_inner());
        Box::pin(async move { Ok(Response::new(stream)) })
    }
}

impl<B> Service<http::Request<B>> for EventStreamServer
where
    B: Body + Send + 'static,
    B::Error: Into<StdError> + Send + 'static,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = std::convert::Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: http::Request<B>) -> Self::Future {
        if req.uri().path() != PUBLISH_PATH {
            return self.generated.call(req);
        }
        let method = PublishSvc(Arc::clone(&self.inner));
        let max = self.max_message;
        Box::pin(async move {
            let mut grpc = tonic::server::Grpc::new(BatchCodec)
                .apply_max_message_size_config(Some(max), Some(max));
            Ok(grpc.streaming(method, req).await)
        })
    }
}

/// `WriterAdmin`: control calls, answered by the writer thread.
#[derive(Debug, Clone)]
pub struct AdminService {
    writer: Sender<Msg>,
}

impl AdminService {
    pub fn new(writer: Sender<Msg>) -> Self {
        AdminService { writer }
    }

    async fn ask<T>(&self, make: impl FnOnce(oneshot::Sender<T>) -> Msg) -> Result<T, Status> {
        let (tx, rx) = oneshot::channel();
        self.writer
            .send(make(tx))
            .map_err(|_| Status::unavailable("eve-writer is stopping"))?;
        rx.await
            .map_err(|_| Status::unavailable("eve-writer is stopping"))
    }
}

#[tonic::async_trait]
impl WriterAdmin for AdminService {
    async fn flush(&self, request: Request<FlushRequest>) -> Result<Response<FlushReply>, Status> {
        let ms = request.into_inner().timeout_ms;
        let timeout = if ms == 0 {
            FLUSH_TIMEOUT
        } else {
            std::time::Duration::from_millis(u64::from(ms))
        };
        self.ask(|reply| Msg::Flush { timeout, reply })
            .await
            .map(Response::new)
    }

    async fn reopen(&self, _: Request<ReopenRequest>) -> Result<Response<ReopenReply>, Status> {
        self.ask(|tx| Msg::Reopen(Some(tx)))
            .await
            .map(Response::new)
    }

    async fn counters(
        &self,
        _: Request<CountersRequest>,
    ) -> Result<Response<CountersReply>, Status> {
        let values = self.ask(Msg::Counters).await?;
        Ok(Response::new(CountersReply {
            counters: values
                .into_iter()
                .map(|(name, value)| WriterCounter { name, value })
                .collect(),
        }))
    }
}
