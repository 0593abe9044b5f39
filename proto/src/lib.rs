//! Protobuf contracts between Meerkat's processes.
//!
//! - [`events`]: the `EventStream` service that detect workers use to stream typed events
//!   (alerts, flows, app-layer records, anomalies, stats) to the eve-writer, with batch
//!   sequence numbers and cumulative acknowledgements so that nothing is lost across a
//!   reconnect.
//! - [`writer`]: `WriterAdmin`, the eve-writer's control service (flush, reopen,
//!   counters), served on the same socket as the event stream.
//! - [`control`]: `Control`, the stack's control API (`meerkat ctl`), and
//!   `WorkerControl`, the supervisor's channel to each detect worker (rule reload, flush).
//! - [`transport`]: a channel to any of them over a Unix socket, and (feature `tls`) the
//!   TLS settings of the control API on TCP, server and client side.
//!
//! The `.proto` files under `proto/` are the source of truth; this crate compiles them at
//! build time with `protox` (no `protoc` needed).

pub mod transport;

/// Event stream (detect -> eve-writer).
#[allow(missing_debug_implementations, clippy::all)]
pub mod events {
    tonic::include_proto!("meerkat.events.v1");
}

/// Eve-writer administration (control -> eve-writer).
#[allow(missing_debug_implementations, clippy::all)]
pub mod writer {
    tonic::include_proto!("meerkat.writer.v1");
}

/// Control API (ctl -> supervisor) and worker control (supervisor -> detect worker).
#[allow(missing_debug_implementations, clippy::all)]
pub mod control {
    tonic::include_proto!("meerkat.control.v1");
}
