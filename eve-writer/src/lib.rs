//! Meerkat's eve-writer role.
//!
//! The eve-writer receives typed events from the detect workers over the gRPC
//! `EventStream` (a Unix socket in the runtime directory), renders them as Suricata EVE
//! JSON ([`render`]) and writes them to the configured `eve-log` outputs ([`output`]):
//! regular files (optionally one per worker, `threaded: yes`, and rotated by
//! `rotate-interval`), `unix_stream` and `unix_dgram` sockets, and redis lists or
//! channels; several outputs at once, each with its own `types` and buffer.
//!
//! Delivery loses nothing: a batch is acknowledged only once its bytes are delivered
//! (handed to the OS; for redis, answered by redis), producers send unacknowledged
//! batches again after a reconnect, and the writer drops a batch it already took
//! (remembered across its own restarts in the delivery-state page,
//! [`meerkat_shm::state`]). When an output fails
//! (full disk, reader gone), its events are held and retried in order, and producers
//! stop once their window of unacknowledged batches is full.
//!
//! Control: SIGHUP (the `hup` flag) and `WriterAdmin.Reopen` reopen files (logrotate);
//! `WriterAdmin.Flush` writes everything received so far; `WriterAdmin.Counters` and the
//! counter page `counters-eve-writer` give the counters. Every `stats.interval` seconds
//! the writer writes an EVE `stats` record built from all roles' counter pages
//! ([`stats`]).
//!
//! # Benchmark
//!
//! `cargo bench -p meerkat-eve-writer --bench eve_writer` runs the buffering comparison
//! (unbuffered, 16 KiB, 16 KiB + 2 s flush; threaded off and on) and the full-path
//! throughput (gRPC -> render -> file, 64 KiB buffer) against a writer process of its
//! own, and measures how long an event written in a quiet period takes to reach the
//! file with a 2 s flush interval. See `benches/eve_writer.rs`.

pub mod batch;
pub mod fuzz;
pub use meerkat_eve as json;
pub mod output;
pub mod pattern;
pub mod render;
pub mod server;
pub mod stats;
pub mod writer;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use meerkat_config::Config;
use meerkat_proto::writer::writer_admin_server::WriterAdminServer;
use tokio_stream::wrappers::UnixListenerStream;

/// Errors of the eve-writer role.
#[derive(Debug, thiserror::Error)]
pub enum WriterError {
    #[error("runtime-dir is not set (it names where the event socket is)")]
    NoRuntimeDir,
    #[error("cannot open EVE output {path}: {source}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("event socket {path}: {source}")]
    Socket {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("another eve-writer is listening on {0}")]
    AlreadyRunning(PathBuf),
    #[error("{0}")]
    Unsupported(String),
    #[error("{0}")]
    Thread(String),
    #[error(transparent)]
    Ring(#[from] meerkat_shm::RingError),
    #[error(transparent)]
    State(meerkat_shm::state::StateError),
    #[error("server: {0}")]
    Server(String),
}

/// How long in-flight streams get to finish after a stop request.
const STOP_GRACE: Duration = Duration::from_secs(3);

/// Serves the event socket until `stop` is set, then flushes every output. `hup` set
/// (SIGHUP) reopens every file.
pub fn run(config: &Config, stop: &AtomicBool, hup: &AtomicBool) -> Result<(), WriterError> {
    let runtime = config
        .runtime_dir
        .clone()
        .ok_or(WriterError::NoRuntimeDir)?;
    let sock = meerkat_runtime::eve_socket_path(&runtime);
    let w = writer::Writer::new(config, &runtime)?;
    let (tx, handle) = writer::spawn(w)?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("eve-grpc")
        .enable_all()
        .build()
        .map_err(|e| WriterError::Thread(e.to_string()))?;
    let served = rt.block_on(async {
        if sock.exists() {
            if tokio::net::UnixStream::connect(&sock).await.is_ok() {
                return Err(WriterError::AlreadyRunning(sock.clone()));
            }
            let _ = std::fs::remove_file(&sock);
        }
        let listener =
            tokio::net::UnixListener::bind(&sock).map_err(|source| WriterError::Socket {
                path: sock.clone(),
                source,
            })?;
        tracing::info!(socket = %sock.display(), "eve-writer listening");
        let service = server::EventStreamServer::new(
            server::EventService::new(tx.clone()),
            server::MAX_MESSAGE,
        );
        let admin = WriterAdminServer::new(server::AdminService::new(tx.clone()));
        let signals = tx.clone();
        let serve = tonic::transport::Server::builder()
            .add_service(service)
            .add_service(admin)
            .serve_with_incoming_shutdown(UnixListenerStream::new(listener), async move {
                while !stop.load(Ordering::Relaxed) {
                    if hup.swap(false, Ordering::Relaxed) {
                        tracing::info!("SIGHUP: reopening EVE files");
                        let _ = signals.send(writer::Msg::Reopen(None));
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            });
        tokio::pin!(serve);
        // Once stop is set, open streams get a grace period before the runtime goes.
        let grace = async {
            while !stop.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            tokio::time::sleep(STOP_GRACE).await;
        };
        tokio::select! {
            r = &mut serve => r.map_err(|e| WriterError::Server(e.to_string())),
            _ = grace => Ok(()),
        }
    });
    rt.shutdown_timeout(Duration::from_millis(200));
    let _ = tx.send(writer::Msg::Shutdown);
    drop(tx);
    let _ = handle.join();
    let _ = std::fs::remove_file(&sock);
    served
}
