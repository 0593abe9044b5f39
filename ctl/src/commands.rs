//! Each `meerkat ctl` command: its call, and its reply as text or JSON.

use std::process::ExitCode;

use meerkat_proto::control::{
    AddPcapRequest, DatasetRequest, FlushEveRequest, InterfaceStatsRequest, ListInterfacesRequest,
    ReloadRulesRequest, RestartWorkerRequest, ShutdownRequest, StatsRequest, StatusRequest,
};
use serde_json::{Value, json};

use crate::{Client, Command, CtlError, output, refused};

pub(crate) async fn run(c: &mut Client, cmd: &Command, json: bool) -> Result<ExitCode, CtlError> {
    let fail = |s: tonic::Status| refused(json, &s);
    match cmd {
        Command::Health => unreachable!("handled before"),
        Command::Status => {
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
                    output::ms(r.uptime_ms)
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
                        output::ms(x.uptime_ms),
                        x.restarts,
                        x.last_exit
                    );
                }
            }
        }
        Command::Stats { role } => {
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
                    let counters = output::counters_json(&rc.counters);
                    roles.insert(
                        rc.role.clone(),
                        json!({"pid": rc.pid, "counters": counters}),
                    );
                }
                println!("{}", Value::Object(roles));
            } else {
                for rc in &r.roles {
                    println!("{} (pid {})", rc.role, rc.pid);
                    output::print_counters(&rc.counters);
                }
            }
        }
        Command::ReloadRules {
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
                println!("{}", output::reload_json(&r));
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
        Command::Flush { timeout_ms } => {
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
        Command::Shutdown => {
            c.shutdown(ShutdownRequest {}).await.map_err(fail)?;
            if json {
                println!("{}", json!({"shutdown": true}));
            } else {
                println!("stopping: the stack drains and exits");
            }
        }
        Command::AddPcap { path } => {
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
        Command::RestartWorker { worker } => {
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
        Command::Dataset {
            command,
            name,
            kind,
            value,
        } => {
            let r = c
                .dataset(DatasetRequest {
                    command: command.clone(),
                    name: name.clone(),
                    kind: kind.clone(),
                    value: value.clone(),
                })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                println!(
                    "{}",
                    json!({"return": if r.ok { "OK" } else { "NOK" }, "message": r.message})
                );
            } else {
                println!("{}", r.message);
            }
            if !r.ok {
                return Ok(ExitCode::FAILURE);
            }
        }
        Command::ListInterfaces => {
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
        Command::InterfaceStats { name } => {
            let r = c
                .interface_stats(InterfaceStatsRequest {
                    name: name.clone().unwrap_or_default(),
                })
                .await
                .map_err(fail)?
                .into_inner();
            if json {
                let counters = output::counters_json(&r.counters);
                println!("{}", json!({"name": r.name, "counters": counters}));
            } else {
                println!("{}", r.name);
                output::print_counters(&r.counters);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
