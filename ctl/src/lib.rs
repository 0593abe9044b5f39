//! `meerkat ctl`: the client of a running stack's control socket (as Suricata's
//! `suricatasc`). Text for people by default, one JSON object with `--json`.
//!
//! Exit codes scripts can trust ([`CtlError::exit_code`]): 0 the request was done (for
//! `health`: the stack is serving), 1 the stack refused or failed it (the reason is
//! printed on stderr, or in the JSON as `error`/`code`; a call without the right bearer
//! token is refused as `Unauthenticated`), 2 usage error (flags, an unreadable token or
//! PEM file), 3 the stack could not be reached — nothing listens, or no trusted TLS
//! connection could be made (server certificate not signed by `--tls-ca` or not for the
//! expected name, client certificate missing or refused, plain text against TLS or the
//! other way round).
//!
//! `--connect HOST:PORT` talks TCP: plain text, or TLS with `--tls-ca` (rustls, see
//! `meerkat_proto::transport::tls`), mutual TLS with `--tls-cert`/`--tls-key`.
//!
//! [`probe`] is the other client: `meerkat probe ROLE` asks one role started on its own
//! whether it serves.

/// `println!` for a client of scripts and pipes: `meerkat ctl stats | head` ends quietly
/// (exit 0) when the reader goes away, instead of panicking. SIGPIPE itself stays ignored
/// (as Rust sets it): with its default action, a write on the control connection after
/// the stack dropped it (a refused TLS handshake) would kill the client without a word.
macro_rules! println {
    ($($arg:tt)*) => {
        $crate::output::print_line(format_args!($($arg)*))
    };
}

mod commands;
mod output;
pub mod probe;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use meerkat_proto::control::ReloadRulesReply;
use meerkat_proto::control::control_client::ControlClient;
use meerkat_proto::transport::tls::{TlsError, client_config};
use meerkat_proto::transport::unix_channel;
use meerkat_runtime::layout;
use prost::Message;
use serde_json::json;
use tonic::Code;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

/// The stack could not be reached.
pub const EXIT_UNREACHABLE: u8 = 3;
/// The stack refused or failed the request.
pub const EXIT_REFUSED: u8 = 1;
/// A usage error: flags, an unreadable token or PEM file.
pub const EXIT_USAGE: u8 = 2;

/// Where the stack is and how to talk to it (`meerkat ctl`'s options).
#[derive(Debug, Clone, Default)]
pub struct CtlOptions {
    /// `--socket`: the control socket (default: the only running stack's).
    pub socket: Option<PathBuf>,
    /// `--connect HOST:PORT`: TCP instead.
    pub connect: Option<String>,
    /// `--token-file`: the bearer token for TCP.
    pub token_file: Option<PathBuf>,
    /// `--tls-ca`: speak TLS on `--connect`, trusting these CAs.
    pub tls_ca: Option<PathBuf>,
    /// `--tls-cert`, `--tls-key`: a client certificate for mutual TLS.
    pub tls_cert: Option<PathBuf>,
    pub tls_key: Option<PathBuf>,
    /// `--tls-server-name`: the name the stack's certificate must carry.
    pub tls_server_name: Option<String>,
    /// `--json`: one JSON object instead of text.
    pub json: bool,
    /// `--timeout`: seconds before giving up.
    pub timeout: u64,
}

/// A request to the stack.
#[derive(Debug, Clone)]
pub enum Command {
    Health,
    Status,
    Stats {
        role: Option<String>,
    },
    ReloadRules {
        allow_errors: bool,
        files: Vec<PathBuf>,
    },
    Flush {
        timeout_ms: u32,
    },
    Shutdown,
    AddPcap {
        path: PathBuf,
    },
    RestartWorker {
        worker: u32,
    },
    /// A dataset command (`add`, `remove`, `lookup`, `clear`, `dump`), as Suricata's
    /// `dataset-*` socket commands.
    Dataset {
        command: String,
        name: String,
        kind: String,
        value: String,
    },
    ListInterfaces,
    InterfaceStats {
        name: Option<String>,
    },
}

/// Why a request was not done.
#[derive(Debug, thiserror::Error)]
pub enum CtlError {
    #[error("cannot read token file {}: {source}", path.display())]
    TokenFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("token in {} is not printable", path.display())]
    TokenNotPrintable { path: PathBuf },
    #[error(transparent)]
    Tls(TlsError),
    #[error(
        "no running stack found (no /dev/shm/meerkat-*/control.sock accepts connections); \
         give --socket PATH"
    )]
    NoStack,
    #[error("several stacks are running ({0}); choose one with --socket")]
    SeveralStacks(String),
    #[error(transparent)]
    Runtime(std::io::Error),
    #[error("cannot reach the stack at {}: {reason}", socket.display())]
    Unreachable { socket: PathBuf, reason: String },
    /// The stack answered with an error (or, `unreachable`, the call never reached it).
    #[error("{code:?}: {message}")]
    Refused {
        code: Code,
        message: String,
        unreachable: bool,
    },
    #[error("no answer within {0} s (the request may still complete)")]
    NoAnswer(u64),
}

impl CtlError {
    /// The exit status scripts see (see the crate's documentation).
    pub fn exit_code(&self) -> u8 {
        match self {
            CtlError::TokenFile { .. }
            | CtlError::TokenNotPrintable { .. }
            | CtlError::Tls(_)
            | CtlError::SeveralStacks(_) => EXIT_USAGE,
            CtlError::NoStack | CtlError::Unreachable { .. } => EXIT_UNREACHABLE,
            CtlError::Refused {
                unreachable: true, ..
            } => EXIT_UNREACHABLE,
            CtlError::Refused { .. } | CtlError::Runtime(_) | CtlError::NoAnswer(_) => EXIT_REFUSED,
        }
    }
}

/// What to check when the stack drops the connection during the first call: with TLS
/// the reason (a client certificate it wants or refuses) reaches the client only as a
/// closed connection.
static HINT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The control socket of the only running stack: `/dev/shm/meerkat-<pid>/control.sock`
/// (or under the temp dir) whose socket accepts connections.
fn find_socket() -> Result<PathBuf, CtlError> {
    let mut found = Vec::new();
    for base in layout::private_parents() {
        let Ok(dir) = std::fs::read_dir(&base) else {
            continue;
        };
        for e in dir.flatten() {
            if !layout::is_private_dir_name(&e.file_name().to_string_lossy()) {
                continue;
            }
            let sock = layout::control_socket_path(&e.path());
            if std::os::unix::net::UnixStream::connect(&sock).is_ok() && !found.contains(&sock) {
                found.push(sock);
            }
        }
    }
    match found.len() {
        0 => Err(CtlError::NoStack),
        1 => Ok(found.remove(0)),
        _ => Err(CtlError::SeveralStacks(
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        )),
    }
}

fn no_stack(socket: &Path, e: impl std::fmt::Display) -> CtlError {
    CtlError::Unreachable {
        socket: socket.to_path_buf(),
        reason: e.to_string(),
    }
}

/// An error with its causes on one line (tonic's transport errors say only "transport
/// error" themselves; the reason, a refused connection or a certificate rustls does not
/// trust, is in the chain). A failed certificate check gets a hint at the flags.
fn causes(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut next = e.source();
    while let Some(c) = next {
        let c_text = c.to_string();
        if !out.contains(&c_text) {
            out.push_str(": ");
            out.push_str(&c_text);
        }
        next = c.source();
    }
    if out.contains("invalid peer certificate") {
        out.push_str(
            " (the stack's certificate must be signed by a CA of --tls-ca and carry the \
             host of --connect, or the name given with --tls-server-name)",
        );
    }
    out
}

/// What a failed call prints (and the exit code).
fn refused(json: bool, status: &tonic::Status) -> CtlError {
    // A status made here from a failed connection (it has a cause: hyper's or rustls's
    // error) rather than sent by the stack: the stack was not reached, whatever the code
    // (a TLS handshake the stack aborts shows up on the first call, as `Cancelled` or
    // `Unknown`).
    let transport = std::error::Error::source(status).is_some();
    let unreachable = transport
        || (matches!(status.code(), Code::Unavailable)
            && status.message().contains("transport error"));
    if json {
        let mut v = json!({
            "error": status.message(),
            "code": format!("{:?}", status.code()),
        });
        // A refused reload carries its full reply (errors included).
        if let Ok(r) = ReloadRulesReply::decode(status.details())
            && !status.details().is_empty()
        {
            v["reload"] = output::reload_json(&r);
        }
        println!("{v}");
    } else if let Ok(r) = ReloadRulesReply::decode(status.details())
        && !status.details().is_empty()
    {
        for e in &r.errors {
            eprintln!("  {e}");
        }
    }
    let mut message = status.message().to_string();
    if let Some(source) = std::error::Error::source(status) {
        let more = causes(source);
        if !message.contains(&more) {
            message = format!("{message}: {more}");
        }
    }
    if transport && let Some(hint) = HINT.get() {
        message = format!("{message} ({hint})");
    }
    CtlError::Refused {
        code: status.code(),
        message,
        unreachable,
    }
}

/// Adds `authorization: Bearer <token>` to every call (TCP).
#[derive(Clone)]
struct Auth(Option<MetadataValue<Ascii>>);

impl tonic::service::Interceptor for Auth {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            req.metadata_mut().insert("authorization", v.clone());
        }
        Ok(req)
    }
}

type Client = ControlClient<InterceptedService<Channel, Auth>>;

/// `meerkat ctl`.
pub fn run(args: &CtlOptions, command: &Command) -> Result<ExitCode, CtlError> {
    let auth = match &args.token_file {
        Some(f) => {
            let t = std::fs::read_to_string(f).map_err(|source| CtlError::TokenFile {
                path: f.clone(),
                source,
            })?;
            let v = MetadataValue::try_from(format!("Bearer {}", t.trim()))
                .map_err(|_| CtlError::TokenNotPrintable { path: f.clone() })?;
            Auth(Some(v))
        }
        None => Auth(None),
    };
    let tls = match &args.tls_ca {
        Some(ca) => Some(
            client_config(
                ca,
                args.tls_cert.as_deref().zip(args.tls_key.as_deref()),
                args.tls_server_name.as_deref(),
            )
            .map_err(CtlError::Tls)?,
        ),
        None => None,
    };
    if args.connect.is_some() {
        let _ = HINT.set(match (&args.tls_ca, &args.tls_cert) {
            (None, _) => {
                "the connection was dropped: if the stack serves TLS (control.tls-cert), \
                 give --tls-ca"
            }
            (Some(_), None) => {
                "the connection was dropped: if the stack wants a client certificate \
                 (control.tls-client-ca), give --tls-cert and --tls-key"
            }
            (Some(_), Some(_)) => {
                "the connection was dropped: the stack may not accept this client \
                 certificate (it must be signed by a CA of its control.tls-client-ca)"
            }
        });
    }
    let socket = match (&args.connect, &args.socket) {
        (Some(addr), _) => PathBuf::from(addr),
        (None, Some(s)) => s.clone(),
        (None, None) => find_socket()?,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(CtlError::Runtime)?;
    let timeout = Duration::from_secs(args.timeout.max(1));
    rt.block_on(async {
        let connect = async {
            match &args.connect {
                Some(addr) => {
                    let scheme = if tls.is_some() { "https" } else { "http" };
                    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{addr}"))?;
                    if let Some(t) = tls {
                        endpoint = endpoint.tls_config(t)?;
                    }
                    endpoint.connect().await
                }
                None => unix_channel(&socket).await,
            }
        };
        let channel = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| no_stack(&socket, "timed out"))?
            .map_err(|e| no_stack(&socket, causes(&e)))?;
        let json = args.json;
        if let Command::Health = command {
            let mut h = HealthClient::with_interceptor(channel, auth);
            let r = tokio::time::timeout(
                timeout,
                h.check(HealthCheckRequest {
                    service: String::new(),
                }),
            )
            .await
            .map_err(|_| no_stack(&socket, "timed out"))?
            .map_err(|s| refused(json, &s))?;
            let serving = r.into_inner().status == 1;
            let word = if serving { "serving" } else { "not serving" };
            if json {
                println!("{}", json!({"status": word, "serving": serving}));
            } else {
                println!("{word}");
            }
            return Ok(if serving {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_REFUSED)
            });
        }
        let mut c = ControlClient::with_interceptor(channel, auth)
            .max_decoding_message_size(64 << 20)
            .max_encoding_message_size(4 << 20);
        let mut call_timeout = timeout;
        if let Command::Flush { timeout_ms } = command {
            call_timeout = call_timeout.max(Duration::from_millis(u64::from(*timeout_ms) + 1000));
        }
        tokio::time::timeout(call_timeout, commands::run(&mut c, command, json))
            .await
            .map_err(|_| CtlError::NoAnswer(call_timeout.as_secs()))?
    })
}
