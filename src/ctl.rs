//! `meerkat ctl`: the client of a running stack's control socket (as Suricata's
//! `suricatasc`). Text for people by default, one JSON object with `--json`.
//!
//! Exit codes scripts can trust: 0 the request was done (for `health`: the stack is
//! serving), 1 the stack refused or failed it (the reason is printed on stderr, or in
//! the JSON as `error`/`code`; a call without the right bearer token is refused as
//! `Unauthenticated`), 2 usage error (flags, an unreadable token or PEM file), 3 the stack
//! could not be reached — nothing listens, or no trusted TLS connection could be made
//! (server certificate not signed by `--tls-ca` or not for the expected name, client
//! certificate missing or refused, plain text against TLS or the other way round).
//!
//! `--connect HOST:PORT` talks TCP: plain text, or TLS with `--tls-ca` (rustls, see
//! `tls.rs`), mutual TLS with `--tls-cert`/`--tls-key`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::anyhow;
use meerkat_proto::control::control_client::ControlClient;
use meerkat_proto::control::{
    AddPcapRequest, Counter, FlushEveRequest, InterfaceStatsRequest, ListInterfacesRequest,
    ReloadRulesReply, ReloadRulesRequest, RestartWorkerRequest, ShutdownRequest, StatsRequest,
    StatusRequest,
};
use meerkat_runtime::layout;
use prost::Message;
use serde_json::{Value, json};
use tonic::Code;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use crate::cli::{CtlArgs, CtlCommand};
use crate::{Failure, Outcome};

/// `println!` for a client of scripts and pipes: `meerkat ctl stats | head` ends quietly
/// (exit 0) when the reader goes away, instead of panicking. SIGPIPE itself stays ignored
/// (as Rust sets it): with its default action, a write on the control connection after
/// the stack dropped it (a refused TLS handshake) would kill the client without a word.
macro_rules! println {
    ($($arg:tt)*) => {
        $crate::ctl::print_line(format_args!($($arg)*))
    };
}

/// One line on stdout; a reader that went away ends the process quietly.
pub fn print_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("meerkat ctl: cannot write to stdout: {e}");
        std::process::exit(i32::from(crate::EXIT_FAILURE));
    }
}

/// What to check when the stack drops the connection during the first call: with TLS
/// the reason (a client certificate it wants or refuses) reaches the client only as a
/// closed connection.
static HINT: std::sync::OnceLock<&'static str> = std::sync::OnceLock::new();

/// The stack could not be reached.
const EXIT_UNREACHABLE: u8 = 3;
/// The stack refused or failed the request.
const EXIT_REFUSED: u8 = 1;

/// The control socket of the only running stack: `/dev/shm/meerkat-<pid>/control.sock`
/// (or under the temp dir) whose socket accepts connections.
fn find_socket() -> Result<PathBuf, Failure> {
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
        0 => Err(Failure {
            code: EXIT_UNREACHABLE,
            error: anyhow!(
                "no running stack found (no /dev/shm/meerkat-*/control.sock accepts connections); \
                 give --socket PATH"
            ),
        }),
        1 => Ok(found.remove(0)),
        _ => Err(Failure::usage(anyhow!(
            "several stacks are running ({}); choose one with --socket",
            found
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

fn no_stack(socket: &Path, e: impl std::fmt::Display) -> Failure {
    Failure {
        code: EXIT_UNREACHABLE,
        error: anyhow!("cannot reach the stack at {}: {e}", socket.display()),
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
fn refused(json: bool, status: &tonic::Status) -> Failure {
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
            v["reload"] = reload_json(&r);
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
    Failure {
        code: if unreachable {
            EXIT_UNREACHABLE
        } else {
            EXIT_REFUSED
        },
        error: anyhow!("{:?}: {message}", status.code()),
    }
}

fn reload_json(r: &ReloadRulesReply) -> Value {
    json!({
        "applied": r.applied,
        "generation": r.generation,
        "digest": r.digest,
        "loaded": r.loaded,
        "failed": r.failed,
        "errors": r.errors,
        "duration_ms": r.duration_ms,
        "swap_ms": r.swap_ms,
    })
}

/// Counters as one JSON object, name → value.
fn counters_json(counters: &[Counter]) -> Value {
    Value::Object(
        counters
            .iter()
            .map(|c| (c.name.clone(), json!(c.value)))
            .collect(),
    )
}

/// Counters one per line, indented under their role or interface.
fn print_counters(counters: &[Counter]) {
    for c in counters {
        println!("  {:<40} {}", c.name, c.value);
    }
}

fn ms(v: u64) -> String {
    let s = v / 1000;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s / 60) % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", v as f64 / 1000.0)
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
pub fn run(args: &CtlArgs) -> Outcome {
    let auth = match &args.token_file {
        Some(f) => {
            let t = std::fs::read_to_string(f).map_err(|e| {
                Failure::usage(anyhow!("cannot read token file {}: {e}", f.display()))
            })?;
            let v = MetadataValue::try_from(format!("Bearer {}", t.trim())).map_err(|_| {
                Failure::usage(anyhow!("token in {} is not printable", f.display()))
            })?;
            Auth(Some(v))
        }
        None => Auth(None),
    };
    let tls = match &args.tls_ca {
        Some(ca) => Some(
            crate::tls::client_config(
                ca,
                args.tls_cert.as_deref().zip(args.tls_key.as_deref()),
                args.tls_server_name.as_deref(),
            )
            .map_err(Failure::usage)?,
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
        .map_err(Failure::runtime)?;
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
                None => crate::control::unix_channel(&socket).await,
            }
        };
        let channel = tokio::time::timeout(timeout, connect)
            .await
            .map_err(|_| no_stack(&socket, "timed out"))?
            .map_err(|e| no_stack(&socket, causes(&e)))?;
        let json = args.json;
        if let CtlCommand::Health = args.command {
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
        if let CtlCommand::Flush { timeout_ms } = &args.command {
            call_timeout = call_timeout.max(Duration::from_millis(u64::from(*timeout_ms) + 1000));
        }
        tokio::time::timeout(call_timeout, command(&mut c, &args.command, json))
            .await
            .map_err(|_| Failure {
                code: EXIT_REFUSED,
                error: anyhow!(
                    "no answer within {} s (the request may still complete)",
                    call_timeout.as_secs()
                ),
            })?
    })
}

async fn command(c: &mut Client, cmd: &CtlCommand, json: bool) -> Outcome {
    let fail = |s: tonic::Status| refused(json, &s);
    match cmd {
        CtlCommand::Health => unreachable!("handled before"),
        CtlCommand::Status => {
            let r = c.status(StatusRequest {}).await.map_err(fail)?.into_inner();
            if json {
                let roles: Vec<Value> = r
                    .roles
                    .iter()
                    .map(|x| {
                        json!({"name": x.name, "pid": x.pid, "state": x.state,
                               "uptime_ms": x.uptime_ms, "restarts": x.restarts,
                               "last_exit": x.last_exit})
                    })
                    .collect();
                println!(
                    "{}",
                    json!({
                        "version": r.version, "state": r.state, "pid": r.pid,
                        "uptime_ms": r.uptime_ms, "runtime_dir": r.runtime_dir,
                        "log_dir": r.log_dir, "workers": r.workers, "roles": roles,
                        "ruleset": {"generation": r.ruleset_generation,
                                    "digest": r.ruleset_digest,
                                    "loaded": r.rules_loaded, "failed": r.rules_failed},
                        "current_input": r.current_input,
                        "pending_pcaps": r.pending_pcaps,
                    })
                );
            } else {
                println!(
                    "meerkat {} (pid {}): {}, up {}",
                    r.version,
                    r.pid,
                    r.state,
                    ms(r.uptime_ms)
                );
                println!("  log dir:     {}", r.log_dir);
                println!("  runtime dir: {}", r.runtime_dir);
                println!(
                    "  ruleset:     generation {}, {} rules loaded, {} failed, sha256 {}",
                    r.ruleset_generation,
                    r.rules_loaded,
                    r.rules_failed,
                    r.ruleset_digest.get(..16).unwrap_or(&r.ruleset_digest)
                );
                if !r.current_input.is_empty() {
                    println!("  reading:     {}", r.current_input);
                }
                for p in &r.pending_pcaps {
                    println!("  queued:      {p}");
                }
                println!(
                    "  {:<12} {:>8} {:<11} {:>9} {:>8}  last exit",
                    "ROLE", "PID", "STATE", "UPTIME", "RESTARTS"
                );
                for x in &r.roles {
                    println!(
                        "  {:<12} {:>8} {:<11} {:>9} {:>8}  {}",
                        x.name,
                        x.pid,
                        x.state,
                        ms(x.uptime_ms),
                        x.restarts,
                        x.last_exit
                    );
                }
            }
        }
        CtlCommand::Stats { role } => {
            let r = c
                .stats(StatsRequest {
                    role: role.clone().unwrap_or_default(),
                })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                let mut roles = serde_json::Map::new();
                for rc in &r.roles {
                    let counters = counters_json(&rc.counters);
                    roles.insert(
                        rc.role.clone(),
                        json!({"pid": rc.pid, "counters": counters}),
                    );
                }
                println!("{}", Value::Object(roles));
            } else {
                for rc in &r.roles {
                    println!("{} (pid {})", rc.role, rc.pid);
                    print_counters(&rc.counters);
                }
            }
        }
        CtlCommand::ReloadRules {
            allow_errors,
            files,
        } => {
            let rule_files = files
                .iter()
                .map(|p| {
                    std::path::absolute(p)
                        .unwrap_or_else(|_| p.clone())
                        .display()
                        .to_string()
                })
                .collect();
            let r = c
                .reload_rules(ReloadRulesRequest {
                    rule_files,
                    allow_errors: *allow_errors,
                })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                println!("{}", reload_json(&r));
            } else {
                println!(
                    "generation {} swapped in: {} rules loaded, {} failed, in {} ms (swap {} ms; sha256 {})",
                    r.generation, r.loaded, r.failed, r.duration_ms, r.swap_ms, r.digest
                );
                for e in &r.errors {
                    println!("  {e}");
                }
            }
        }
        CtlCommand::Flush { timeout_ms } => {
            let r = c
                .flush_eve(FlushEveRequest {
                    timeout_ms: *timeout_ms,
                })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                println!(
                    "{}",
                    json!({"complete": r.complete, "held_bytes": r.held_bytes})
                );
            } else {
                println!("flushed: every event produced before the request is written");
            }
        }
        CtlCommand::Shutdown => {
            c.shutdown(ShutdownRequest {}).await.map_err(fail)?;
            if json {
                println!("{}", json!({"shutdown": true}));
            } else {
                println!("stopping: the stack drains and exits");
            }
        }
        CtlCommand::AddPcap { path } => {
            let p = std::path::absolute(path).unwrap_or_else(|_| path.clone());
            let r = c
                .add_pcap(AddPcapRequest {
                    path: p.display().to_string(),
                })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                println!(
                    "{}",
                    json!({"queued": p.display().to_string(), "position": r.position})
                );
            } else {
                println!("queued {} ({} inputs before it)", p.display(), r.position);
            }
        }
        CtlCommand::RestartWorker { worker } => {
            let r = c
                .restart_worker(RestartWorkerRequest { worker: *worker })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                println!("{}", json!({"worker": worker, "pid": r.pid}));
            } else {
                println!("detect worker {worker} restarted (pid {})", r.pid);
            }
        }
        CtlCommand::ListInterfaces => {
            let r = c
                .list_interfaces(ListInterfacesRequest {})
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                let v: Vec<Value> = r
                    .interfaces
                    .iter()
                    .map(|i| json!({"name": i.name, "kind": i.kind, "state": i.state}))
                    .collect();
                println!("{}", json!({"interfaces": v}));
            } else {
                for i in &r.interfaces {
                    println!("{:<8} {:<10} {}", i.state, i.kind, i.name);
                }
            }
        }
        CtlCommand::InterfaceStats { name } => {
            let r = c
                .interface_stats(InterfaceStatsRequest {
                    name: name.clone().unwrap_or_default(),
                })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                let counters = counters_json(&r.counters);
                println!("{}", json!({"name": r.name, "counters": counters}));
            } else {
                println!("{}", r.name);
                print_counters(&r.counters);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
