//! The gRPC `EventStream` service: each producer stream's batches go to the writer
//! thread in order, and each acknowledgement comes back on the stream.

use std::pin::Pin;
use std::sync::mpsc::Sender;

use meerkat_proto::events::event_stream_server::EventStream;
use meerkat_proto::events::{BatchAck, EventBatch};
use tokio::sync::{mpsc, oneshot};
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use crate::writer::Msg;

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
}
