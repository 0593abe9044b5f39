//! Binding the control API's sockets (Unix, owner-only; TCP with a token and/or mutual
//! TLS) and serving it on a thread of its own.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use meerkat_proto::control::control_server::ControlServer;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::Status;

use super::metrics::serve_metrics;
use super::service::Service;
use super::{ControlError, Request, SharedRef, lock};

/// The running control service (its thread ends with the process).
#[derive(Debug)]
pub struct Server {
    pub socket: PathBuf,
    pub metrics: Option<std::net::SocketAddr>,
    pub tcp: Option<std::net::SocketAddr>,
    /// The unix-command socket, when served.
    pub unix_command: Option<PathBuf>,
    /// Asks for a reload of the configured rules (SIGUSR2); the text says why.
    pub reload: tokio::sync::mpsc::UnboundedSender<&'static str>,
}

/// The unix-command socket to serve beside the control API.
#[derive(Debug, Clone)]
pub struct UnixCommandStart {
    pub path: PathBuf,
    /// Enabled explicitly (or the unix-socket run mode): failing to serve it stops the
    /// start. Enabled by `auto`: a warning.
    pub required: bool,
    /// The resolved configuration (`conf-get`, `ruleset-failed-rules`).
    pub config: Arc<meerkat_config::Config>,
}

/// TCP control: where, the bearer token every call must carry (if set), and TLS (if set;
/// with a client CA, mutual TLS).
#[derive(Debug, Clone)]
pub struct TcpControl {
    pub listen: String,
    pub token: Option<String>,
    pub tls: Option<tonic::transport::ServerTlsConfig>,
}

/// Reads the bearer token of `control.token-file` (surrounding whitespace dropped).
pub fn read_token(path: &Path) -> Result<String, ControlError> {
    let t = std::fs::read_to_string(path).map_err(|source| ControlError::TokenFile {
        path: path.to_path_buf(),
        source,
    })?;
    let t = t.trim().to_string();
    if t.len() < 16 || !t.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(ControlError::BadToken {
            path: path.to_path_buf(),
        });
    }
    Ok(t)
}

/// Refuses a call without `authorization: Bearer <token>` (compared in constant time).
/// Without a token configured (mutual TLS alone authenticates), every call passes.
#[derive(Clone)]
struct BearerCheck {
    expected: Option<Arc<Vec<u8>>>,
}

impl tonic::service::Interceptor for BearerCheck {
    fn call(&mut self, req: tonic::Request<()>) -> Result<tonic::Request<()>, Status> {
        let Some(expected) = &self.expected else {
            return Ok(req);
        };
        let given = req
            .metadata()
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::as_bytes)
            .unwrap_or_default();
        let same = given.len() == expected.len()
            && given
                .iter()
                .zip(expected.iter())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if same {
            Ok(req)
        } else {
            Err(Status::unauthenticated(
                "the control API on TCP needs `authorization: Bearer <token>` \
                 (meerkat ctl --token-file)",
            ))
        }
    }
}

/// Binds the control socket (mode 0600 from the start: created under umask 077) and the
/// metrics listener, and serves them on a thread of their own.
#[allow(clippy::too_many_arguments)]
pub fn start(
    socket: &Path,
    metrics_listen: Option<&str>,
    tcp: Option<TcpControl>,
    max_message: usize,
    shared: SharedRef,
    requests: std::sync::mpsc::Sender<Request>,
    stop: Arc<AtomicBool>,
    unix: Option<UnixCommandStart>,
) -> Result<Server, ControlError> {
    if let Some(dir) = socket.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ControlError::SocketDir {
            socket: socket.to_path_buf(),
            source,
        })?;
    }
    // A socket file left by a dead stack is replaced; a live one is not.
    if std::os::unix::net::UnixStream::connect(socket).is_ok() {
        return Err(ControlError::InUse {
            socket: socket.to_path_buf(),
        });
    }
    let _ = std::fs::remove_file(socket);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ControlError::Runtime)?;
    let listener = {
        let _guard = rt.enter();
        // SAFETY: umask only changes this process's file creation mask; restored below.
        let old = unsafe { libc::umask(0o177) };
        let l = tokio::net::UnixListener::bind(socket);
        // SAFETY: as above.
        unsafe { libc::umask(old) };
        l.map_err(|source| ControlError::Bind {
            socket: socket.to_path_buf(),
            source,
        })?
    };
    let metrics = match metrics_listen {
        Some(addr) => {
            let _guard = rt.enter();
            let std_listener =
                std::net::TcpListener::bind(addr).map_err(|source| ControlError::Metrics {
                    addr: addr.to_string(),
                    source,
                })?;
            std_listener.set_nonblocking(true)?;
            let local = std_listener.local_addr()?;
            Some((tokio::net::TcpListener::from_std(std_listener)?, local))
        }
        None => None,
    };
    let metrics_addr = metrics.as_ref().map(|(_, a)| *a);
    let tcp = match tcp {
        Some(t) => {
            let _guard = rt.enter();
            let l =
                std::net::TcpListener::bind(&t.listen).map_err(|source| ControlError::Listen {
                    addr: t.listen.clone(),
                    source,
                })?;
            l.set_nonblocking(true)?;
            let local = l.local_addr()?;
            // The TLS setup is checked here, before anything serves: a bad identity stops
            // the start with its reason.
            let builder = match t.tls {
                Some(tls) => tonic::transport::Server::builder()
                    .tls_config(tls)
                    .map_err(ControlError::Tls)?,
                None => tonic::transport::Server::builder(),
            };
            Some((
                tokio::net::TcpListener::from_std(l)?,
                local,
                t.token,
                builder,
            ))
        }
        None => None,
    };
    let tcp_addr = tcp.as_ref().map(|(_, a, _, _)| *a);
    let unix = match unix {
        Some(u) => {
            let _guard = rt.enter();
            match super::unix_command::bind(&u.path) {
                Ok(l) => Some((l, u)),
                Err(reason) if u.required => {
                    return Err(ControlError::UnixCommand {
                        socket: u.path,
                        reason,
                    });
                }
                Err(reason) => {
                    tracing::warn!(
                        "unix-command socket {} not served: {reason}",
                        u.path.display()
                    );
                    None
                }
            }
        }
        None => None,
    };
    let unix_path = unix.as_ref().map(|(_, u)| u.path.clone());
    let service = Arc::new(Service {
        reloading: AtomicBool::new(false),
        shared: shared.clone(),
        requests: requests.clone(),
        stop,
        max_message,
        reload: tokio::sync::Mutex::new(()),
    });
    let (reload_tx, mut reload_rx) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    let (health, health_service) = tonic_health::server::health_reporter();
    std::thread::Builder::new()
        .name("control".to_string())
        .spawn(move || {
            rt.block_on(async move {
                if let Some((l, _)) = metrics {
                    tokio::spawn(serve_metrics(l, shared.clone()));
                }
                if let Some((listener, u)) = unix {
                    let commands = Arc::new(super::unix_commands::Commands::new(
                        service.clone(),
                        shared.clone(),
                        requests.clone(),
                        u.config,
                    ));
                    tokio::spawn(super::unix_command::serve(listener, commands, u.path));
                }
                // Reloads asked by signal, one after the other.
                let reloader = service.clone();
                tokio::spawn(async move {
                    while let Some(reason) = reload_rx.recv().await {
                        let _ = reloader.reload_configured(reason).await;
                    }
                });
                if let Some((l, _, token, mut builder)) = tcp {
                    let check = BearerCheck {
                        expected: token.map(|t| Arc::new(t.into_bytes())),
                    };
                    let control = tonic::service::interceptor::InterceptedService::new(
                        ControlServer::from_arc(service.clone())
                            .max_decoding_message_size(max_message)
                            .max_encoding_message_size(max_message),
                        check.clone(),
                    );
                    let health = tonic::service::interceptor::InterceptedService::new(
                        health_service.clone(),
                        check,
                    );
                    let server = builder
                        .add_service(health)
                        .add_service(control)
                        .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(l));
                    tokio::spawn(async move {
                        if let Err(e) = server.await {
                            tracing::error!("control service on TCP stopped: {e}");
                        }
                    });
                }
                // Health follows the stack's state.
                let watched = shared.clone();
                tokio::spawn(async move {
                    let mut last = None;
                    loop {
                        let serving =
                            lock(&watched).state == "running" || lock(&watched).state == "idle";
                        if last != Some(serving) {
                            let st = if serving {
                                tonic_health::ServingStatus::Serving
                            } else {
                                tonic_health::ServingStatus::NotServing
                            };
                            health.set_service_status("", st).await;
                            health
                                .set_service_status("meerkat.control.v1.Control", st)
                                .await;
                            last = Some(serving);
                        }
                        tokio::time::sleep(Duration::from_millis(100)).await;
                    }
                });
                let served = tonic::transport::Server::builder()
                    .add_service(health_service)
                    .add_service(
                        ControlServer::from_arc(service)
                            .max_decoding_message_size(max_message)
                            .max_encoding_message_size(max_message),
                    )
                    .serve_with_incoming(UnixListenerStream::new(listener))
                    .await;
                if let Err(e) = served {
                    tracing::error!("control service stopped: {e}");
                }
            });
        })
        .map_err(ControlError::Thread)?;
    Ok(Server {
        socket: socket.to_path_buf(),
        metrics: metrics_addr,
        tcp: tcp_addr,
        unix_command: unix_path,
        reload: reload_tx,
    })
}
