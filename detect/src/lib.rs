//! Meerkat's detect role.
//!
//! A detect worker reads its shared-memory ring (filled by capture), decodes each packet
//! (`meerkat_wire::decode`), tracks its flow ([`flow`]), runs the rules ([`rules`],
//! [`engine`]) and streams the resulting events to the eve-writer over gRPC ([`sink`]).
//! One worker per process; `meerkat run` starts as many as configured
//! (`detect.workers`).

pub use meerkat_app as app;
pub mod control;
pub mod engine;
pub mod events;
pub mod flow;
pub mod fuzz;
pub mod rules;
pub mod sink;
pub mod transforms;
pub mod worker;

pub use worker::{InProcess, InProcessResult, WorkerSummary, run};

/// Errors of the detect role.
#[derive(Debug, thiserror::Error)]
pub enum DetectError {
    #[error("runtime-dir is not set (it names where the rings are)")]
    NoRuntimeDir,
    #[error("{0}")]
    Rules(String),
    #[error(transparent)]
    Ring(#[from] meerkat_shm::RingError),
    #[error(transparent)]
    Sink(#[from] sink::SinkError),
    #[error("{0}")]
    Control(String),
    #[error(transparent)]
    Config(#[from] meerkat_config::ConfigError),
}
