//! The gRPC services of the eve-writer: `EventStream` (each producer stream's batches
//! go to the writer thread in order, and each acknowledgement comes back on the stream
//! in order) and `WriterAdmin` (flush, reopen, counters).
//!
//! `EventStream` is served by [`EventStreamServer`] rather than the generated server:
//! same service, same wire format, but batches are decoded by [`BatchDecoder`], which
//! parses each message as `Bytes` cut from tonic's receive buffer (the generated codec
//! reads every varint through tonic's buffer view: about a sixth of the writer's
//! instructions) into an event vector sized once from the previous batch.

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
use prost::Message;
use prost::bytes::{Buf, Bytes};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::codec::{Codec, DecodeBuf, Decoder};
use tonic::codegen::{Body, BoxFuture, Service, StdError, http};
use tonic::{Request, Response, Status, Streaming};

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

#[tonic::async_trait]
impl EventStream for EventService {
    type PublishStream = AckStream;

    async fn publish(
        &self,
        request: Request<Streaming<EventBatch>>,
    ) -> Result<Response<Self::PublishStream>, Status> {
        let mut inbound = request.into_inner();
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
                        if writer.send(Msg::Batch(batch, otx)).is_err() {
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
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
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

/// Largest event count used to size a batch's vector ahead of decoding (a larger batch
/// still decodes; its vector grows as usual).
const MAX_EVENTS_HINT: usize = 4096;

/// Decodes one `EventBatch` message, its `events` vector allocated once with room for
/// `hint` events. From `Bytes`, bytes fields (addresses) are cut without a copy of their
/// own before they are copied into their vectors; strings are copied once.
pub fn decode_batch(msg: Bytes, hint: usize) -> Result<EventBatch, prost::DecodeError> {
    let mut batch = EventBatch {
        events: Vec::with_capacity(hint.min(MAX_EVENTS_HINT)),
        ..Default::default()
    };
    batch.merge(msg)?;
    Ok(batch)
}

/// tonic decoder of `EventBatch` messages (see the module documentation).
#[derive(Debug, Default)]
pub struct BatchDecoder {
    /// Event count of the previous batch of this stream.
    hint: usize,
}

impl Decoder for BatchDecoder {
    type Item = EventBatch;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<EventBatch>, Status> {
        // tonic hands over exactly one message, in its receive buffer: taken as `Bytes`
        // (a view of that buffer, no copy).
        let msg = src.copy_to_bytes(src.remaining());
        let batch = decode_batch(msg, self.hint)
            .map_err(|e| Status::internal(format!("bad EventBatch message: {e}")))?;
        self.hint = batch.events.len();
        Ok(Some(batch))
    }
}

/// `EventStream` codec: acknowledgements encoded by prost, batches by [`BatchDecoder`].
#[derive(Debug, Default, Clone, Copy)]
pub struct BatchCodec;

impl Codec for BatchCodec {
    type Encode = BatchAck;
    type Decode = EventBatch;
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
pub struct EventStreamServer<T> {
    inner: Arc<T>,
    generated: GeneratedServer<T>,
    max_message: usize,
}

impl<T> EventStreamServer<T> {
    /// Serves `inner`; messages up to `max_message` bytes either way.
    pub fn new(inner: T, max_message: usize) -> Self {
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

impl<T> Clone for EventStreamServer<T> {
    fn clone(&self) -> Self {
        EventStreamServer {
            inner: Arc::clone(&self.inner),
            generated: self.generated.clone(),
            max_message: self.max_message,
        }
    }
}

impl<T> tonic::server::NamedService for EventStreamServer<T> {
    const NAME: &'static str = event_stream_server::SERVICE_NAME;
}

/// The `Publish` method of an [`EventStream`] implementation.
struct PublishSvc<T>(Arc<T>);

impl<T: EventStream> tonic::server::StreamingService<EventBatch> for PublishSvc<T> {
    type Response = BatchAck;
    type ResponseStream = T::PublishStream;
    type Future = BoxFuture<Response<Self::ResponseStream>, Status>;

    fn call(&mut self, request: Request<Streaming<EventBatch>>) -> Self::Future {
        let inner = Arc::clone(&self.0);
        Box::pin(async move { inner.publish(request).await })
    }
}

impl<T, B> Service<http::Request<B>> for EventStreamServer<T>
where
    T: EventStream,
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
