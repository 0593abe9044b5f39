//! Entry point of the control-request fuzz target (`fuzz/fuzz_targets/control.rs`), also
//! run over the seeds in `supervisor/seeds/control/` by `supervisor/tests/fuzz_seeds.rs`.
//!
//! The requests reach the real handlers: the `Control` service's and the unix-command
//! socket's, over a stack state with no roles running (a runtime directory that does not
//! exist, so every worker or eve-writer call fails as it does when one is down). Paths a
//! request names are taken inside a private sandbox directory, so a run reads and queues
//! only what is there.

use std::path::{Component, Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Instant, SystemTime};

use meerkat_config::Config;
use meerkat_proto::control::control_server::Control;
use meerkat_proto::control::{
    AddPcapRequest, FlushEveRequest, InterfaceStatsRequest, ListInterfacesRequest,
    ReloadRulesRequest, RestartWorkerRequest, ShutdownRequest, StatsRequest, StatusRequest,
};
use prost::Message;
use serde_json::Value;

use super::service::Service;
use super::unix_command::{self, Read};
use super::unix_commands::Commands;
use super::{CaptureMode, Input, Shared, SharedRef};

/// Messages (unix socket) or requests (gRPC) handled per input, at most.
const MAX_REQUESTS: usize = 64;

/// `data` as what a control client sends. The first byte chooses: bit 0 live capture
/// (`af-packet` on `eth0`) or a pcap run; bit 1 the unix-command socket (the rest is its
/// byte stream, read in pieces of `1 << (bits 2..5)` bytes: a handshake, then
/// commands) or the gRPC `Control` service (the rest is requests, each a method byte, a
/// 16-bit little-endian length and the protobuf message). Every reply is an answer or
/// an error; none may panic or hang. Returns how many requests were answered.
pub fn control_requests(data: &[u8]) -> usize {
    let Some((&first, rest)) = data.split_first() else {
        return 0;
    };
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .enable_io()
        .build()
    else {
        return 0;
    };
    let live = first & 1 != 0;
    let shared = shared(live);
    // The supervisor loop is gone: requests it should carry out are refused.
    let (requests, _) = std::sync::mpsc::channel();
    let service = Arc::new(Service {
        reloading: AtomicBool::new(false),
        shared: shared.clone(),
        requests: requests.clone(),
        stop: Arc::new(AtomicBool::new(false)),
        max_message: 4 << 20,
        reload: tokio::sync::Mutex::new(()),
    });
    let commands = Commands::new(
        service.clone(),
        shared,
        requests,
        Arc::new(Config::default()),
    );
    if first & 2 != 0 {
        let piece = 1usize << ((first >> 2) & 7);
        rt.block_on(unix_socket(&commands, rest, piece))
    } else {
        rt.block_on(grpc(&service, rest))
    }
}

/// A state as the supervisor has it once the roles are up: one worker, a ruleset of
/// the sandbox's rule file, a queued and a current input.
fn shared(live: bool) -> SharedRef {
    let dir = sandbox();
    Arc::new(Mutex::new(Shared {
        state: "running",
        started: Instant::now(),
        runtime_dir: dir.join("no-runtime-dir"),
        log_dir: dir.join("log"),
        roles: Vec::new(),
        workers: 1,
        generation: 1,
        digest: "0".repeat(64),
        loaded: 1,
        failed: 0,
        rule_files: vec![dir.join("a.rules").display().to_string()],
        configured_rule_files: vec![dir.join("a.rules").display().to_string()],
        last_reload: SystemTime::UNIX_EPOCH,
        capture_mode: if live {
            CaptureMode::AfPacket
        } else {
            CaptureMode::PcapFile
        },
        roles_ready: true,
        interface: live.then(|| "eth0".to_string()),
        pending: [Input::plain(dir.join("a.pcap"))].into(),
        current: vec![dir.join("a.pcap")],
        done: Vec::new(),
    }))
}

/// The sandbox: a directory of this process with a pcap, a rule file and an output
/// directory in it.
fn sandbox() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("meerkat-fuzz-control-{}", std::process::id()));
        let _ = std::fs::create_dir_all(dir.join("out"));
        let _ = std::fs::write(dir.join("a.pcap"), crate::run::SAMPLE_PCAP);
        let _ = std::fs::write(
            dir.join("a.rules"),
            "alert ip any any -> any any (msg:\"x\"; sid:1;)\n",
        );
        dir
    })
}

/// `p` inside the sandbox: absolute paths rooted there, `..` left out (an empty path
/// stays empty).
fn contained(p: &str) -> String {
    if p.is_empty() {
        return String::new();
    }
    let mut out = sandbox().to_path_buf();
    for c in Path::new(p).components() {
        if let Component::Normal(c) = c {
            out.push(c);
        }
    }
    out.display().to_string()
}

/// The path arguments of unix-socket commands, contained.
fn contain_args(v: &mut Value) {
    if let Some(args) = v.get_mut("arguments").and_then(Value::as_object_mut) {
        for key in ["filename", "output-dir"] {
            if let Some(Value::String(s)) = args.get_mut(key) {
                *s = contained(s);
            }
        }
    }
}

async fn unix_socket(commands: &Commands, data: &[u8], piece: usize) -> usize {
    let mut buf = Vec::new();
    let mut handshaken = false;
    let mut handled = 0;
    for chunk in data.chunks(piece.max(1)) {
        buf.extend_from_slice(chunk);
        while let Some(r) = unix_command::take_message(&mut buf) {
            let mut v = match r {
                Read::Message(v) => v,
                Read::Bad(_) | Read::Closed => return handled,
            };
            if !handshaken {
                if unix_command::handshake(&v).is_err() {
                    return handled;
                }
                handshaken = true;
                continue;
            }
            contain_args(&mut v);
            let Some(reply) = unix_command::answer(commands, &v).await else {
                return handled;
            };
            let _ = serde_json::to_vec(&reply.to_json());
            handled += 1;
            if handled >= MAX_REQUESTS {
                return handled;
            }
        }
    }
    handled
}

async fn grpc(service: &Service, mut data: &[u8]) -> usize {
    let mut handled = 0;
    for _ in 0..MAX_REQUESTS {
        let [method, a, b, rest @ ..] = data else {
            break;
        };
        let len = usize::from(u16::from_le_bytes([*a, *b])).min(rest.len());
        let (msg, next) = rest.split_at(len);
        data = next;
        if msg.len() > service.max_message {
            continue;
        }
        if call(service, *method, msg).await.is_ok() {
            handled += 1;
        }
    }
    handled
}

/// One `Control` call of `msg`, decoded as tonic's codec decodes it.
async fn call(service: &Service, method: u8, msg: &[u8]) -> Result<(), ()> {
    fn req<T>(m: T) -> tonic::Request<T> {
        tonic::Request::new(m)
    }
    match method % 9 {
        0 => {
            let m = StatusRequest::decode(msg).map_err(drop)?;
            let _ = service.status(req(m)).await;
        }
        1 => {
            let m = StatsRequest::decode(msg).map_err(drop)?;
            let _ = service.stats(req(m)).await;
        }
        2 => {
            let mut m = ReloadRulesRequest::decode(msg).map_err(drop)?;
            for f in &mut m.rule_files {
                *f = contained(f);
            }
            let _ = service.reload_rules(req(m)).await;
        }
        3 => {
            let m = FlushEveRequest::decode(msg).map_err(drop)?;
            let _ = service.flush_eve(req(m)).await;
        }
        4 => {
            let m = ShutdownRequest::decode(msg).map_err(drop)?;
            let _ = service.shutdown(req(m)).await;
        }
        5 => {
            let m = ListInterfacesRequest::decode(msg).map_err(drop)?;
            let _ = service.list_interfaces(req(m)).await;
        }
        6 => {
            let m = InterfaceStatsRequest::decode(msg).map_err(drop)?;
            let _ = service.interface_stats(req(m)).await;
        }
        7 => {
            let mut m = AddPcapRequest::decode(msg).map_err(drop)?;
            m.path = contained(&m.path);
            let _ = service.add_pcap(req(m)).await;
        }
        _ => {
            let m = RestartWorkerRequest::decode(msg).map_err(drop)?;
            let _ = service.restart_worker(req(m)).await;
        }
    }
    Ok(())
}
