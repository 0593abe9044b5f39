//! The gRPC services of the eve-writer: `EventStream` (each producer stream's batches
//! go to the writer thread in order, and each acknowledgement comes back on the stream
//! in order) and `WriterAdmin` (flush, reopen, counters).

use std::pin::Pin;
use std::sync::mpsc::Sender;

use meerkat_proto::events::event_stream_server::EventStream;
use meerkat_proto::events::{BatchAck, EventBatch, ResumeReply, ResumeRequest};
use meerkat_proto::writer::writer_admin_server::WriterAdmin;
use meerkat_proto::writer::{
    CountersReply, CountersRequest, FlushReply, FlushRequest, ReopenReply, ReopenRequest,
    WriterCounter,
};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::writer::{FLUSH_TIMEOUT, Msg};

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
