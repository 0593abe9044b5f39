//! The commands of the unix-command socket, each answered as Suricata 8.0 answers it
//! (reply shapes and messages taken from the reference engine), through the code paths
//! of the gRPC control service: reload, shutdown, counters, inputs, worker queries.
//!
//! What Meerkat does not have is answered as Suricata answers for a thing that does not
//! exist: `memcap-list` is an empty list and `memcap-show`/`memcap-set` "Memcap value not
//! found" (Meerkat has no memcaps; its limits are `MAX_*` bounds and config sizes);
//! `dataset-add`/`-remove`/`-lookup` "set not found or wrong type" (no datasets yet).
//! Hostbits are real: they are the shared host table's xbits, which the workers read.
//!
//! Which commands exist depends on the run, as in Suricata: `iface-list`/`iface-stat`
//! for live capture, the `pcap-*` commands for offline and unix-socket runs.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use meerkat_config::Config;
use meerkat_proto::control::control_server::Control;
use meerkat_proto::control::{
    FlowStatsRequest, ReloadRulesReply, ReloadRulesRequest, ShutdownRequest, VariablesRequest,
};
use meerkat_proto::transport::unix_channel;
use meerkat_proto::writer::ReopenRequest;
use meerkat_proto::writer::writer_admin_client::WriterAdminClient;
use meerkat_runtime::counters::CaptureLiveCounter;
use meerkat_runtime::{Role, layout};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use super::service::Service;
use super::unix_command::Reply;
use super::{InputOptions, Request, SharedRef, lock, read_counters};
use crate::compat;

/// Commands of every run.
const COMMON: &[&str] = &[
    "shutdown",
    "command-list",
    "help",
    "version",
    "uptime",
    "running-mode",
    "capture-mode",
    "conf-get",
    "dump-counters",
    "reload-rules",
    "ruleset-reload-rules",
    "ruleset-reload-nonblocking",
    "ruleset-reload-time",
    "ruleset-stats",
    "ruleset-failed-rules",
    "add-hostbit",
    "remove-hostbit",
    "list-hostbit",
    "reopen-log-files",
    "memcap-set",
    "memcap-show",
    "memcap-list",
    "dataset-add",
    "dataset-remove",
    "dataset-lookup",
    "dataset-clear",
    "dataset-dump",
    "get-flow-stats-by-id",
];
/// Commands of live capture.
const LIVE: &[&str] = &["iface-stat", "iface-list"];
/// Commands of offline and unix-socket runs.
const PCAP: &[&str] = &[
    "pcap-file",
    "pcap-file-continuous",
    "pcap-file-number",
    "pcap-file-list",
    "pcap-current",
    "pcap-interrupt",
];
/// Suricata's dataset types.
const SET_TYPES: &[&str] = &["string", "md5", "sha256", "ipv4", "ip", "ipv6"];
/// How long a worker query may take.
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Failed rules of one ruleset (by digest), as `ruleset-failed-rules` lists them.
type FailedRules = (String, Vec<Value>);

/// The command handlers and what they need.
pub struct Commands {
    pub(super) service: Arc<Service>,
    pub(super) shared: SharedRef,
    pub(super) requests: std::sync::mpsc::Sender<Request>,
    pub(super) config: Arc<Config>,
    /// `ruleset-failed-rules` of the running ruleset, made on first use.
    failed: tokio::sync::Mutex<Option<FailedRules>>,
}

impl std::fmt::Debug for Commands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Commands").finish_non_exhaustive()
    }
}

type Args = Map<String, Value>;

fn str_arg<'a>(args: &'a Args, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

impl Commands {
    pub(super) fn new(
        service: Arc<Service>,
        shared: SharedRef,
        requests: std::sync::mpsc::Sender<Request>,
        config: Arc<Config>,
    ) -> Commands {
        Commands {
            service,
            shared,
            requests,
            config,
            failed: tokio::sync::Mutex::new(None),
        }
    }

    /// Whether the stack has started (roles up, rules loaded).
    pub fn ready(&self) -> bool {
        lock(&self.shared).roles_ready
    }

    /// The commands this run has.
    pub fn list(&self) -> Vec<&'static str> {
        let live = lock(&self.shared).capture_mode.live();
        let mut v: Vec<&str> = COMMON.to_vec();
        v.extend(if live { LIVE } else { PCAP });
        v
    }

    /// Runs one command.
    pub async fn run(&self, name: &str, args: &Args) -> Reply {
        if !self.list().contains(&name) {
            return Reply::nok("Unknown command");
        }
        match name {
            "command-list" | "help" => {
                let l = self.list();
                Reply::ok(json!({"count": l.len(), "commands": l}))
            }
            "version" => Reply::ok(compat::build_info::version_message()),
            "uptime" => Reply::ok(lock(&self.shared).started.elapsed().as_secs()),
            // Capture spreads packets over the detect workers by flow: Suricata's autofp.
            "running-mode" => Reply::ok("autofp"),
            "capture-mode" => Reply::ok(lock(&self.shared).capture_mode.suricata_name()),
            "conf-get" => match str_arg(args, "variable") {
                None => Reply::nok("variable is not a string"),
                Some(v) => match compat::dump_config::get(&self.config, v) {
                    Some(value) => Reply::ok(value),
                    None => Reply::nok("Variable not found"),
                },
            },
            "shutdown" => {
                let _ = self
                    .service
                    .shutdown(tonic::Request::new(ShutdownRequest {}))
                    .await;
                Reply::ok("Closing Meerkat")
            }
            "dump-counters" => self.dump_counters(),
            "reload-rules" | "ruleset-reload-rules" => {
                match self.service.reload_configured("unix socket").await {
                    Ok(_) => Reply::ok("done"),
                    Err(e) => Reply::nok(e.message()),
                }
            }
            "ruleset-reload-nonblocking" => self.reload_nonblocking(),
            "ruleset-reload-time" => {
                let t = lock(&self.shared).last_reload;
                Reply::ok(json!([{"id": 0, "last_reload": timestamp(t)}]))
            }
            "ruleset-stats" => {
                let s = lock(&self.shared);
                Reply::ok(json!([{
                    "id": 0,
                    "rules_loaded": s.loaded,
                    "rules_failed": s.failed,
                    "rules_skipped": 0,
                }]))
            }
            "ruleset-failed-rules" => self.failed_rules().await,
            "iface-list" => {
                let ifaces: Vec<String> = lock(&self.shared).interface.iter().cloned().collect();
                Reply::ok(json!({"count": ifaces.len(), "ifaces": ifaces}))
            }
            "iface-stat" => self.iface_stat(args),
            "pcap-file" => self.pcap_file(args, false),
            "pcap-file-continuous" => self.pcap_file(args, true),
            "pcap-file-number" => Reply::ok(lock(&self.shared).pending.len()),
            "pcap-file-list" => {
                let files: Vec<String> = lock(&self.shared)
                    .pending
                    .iter()
                    .map(|i| i.path.display().to_string())
                    .collect();
                Reply::ok(json!({"count": files.len(), "files": files}))
            }
            "pcap-current" => match lock(&self.shared).current.first() {
                Some(p) => Reply::ok(p.display().to_string()),
                None => Reply::ok("None"),
            },
            "pcap-interrupt" => {
                let (tx, rx) = oneshot::channel();
                if self.requests.send(Request::Interrupt(tx)).is_err() {
                    return Reply::nok("the supervisor is stopping");
                }
                let _ = tokio::time::timeout(QUERY_TIMEOUT, rx).await;
                Reply::ok("Interrupted")
            }
            "reopen-log-files" => self.reopen().await,
            "memcap-list" => Reply::ok(json!([])),
            "memcap-show" => match str_arg(args, "config") {
                None => Reply::nok("config is not a string"),
                Some(_) => Reply::nok("Memcap value not found. Use 'memcap-list' to show all"),
            },
            "memcap-set" => {
                if str_arg(args, "config").is_none() {
                    Reply::nok("config is not a string")
                } else if str_arg(args, "memcap").is_none() {
                    Reply::nok("memcap value is not a string")
                } else {
                    Reply::nok("Memcap value not found. Use 'memcap-list' to show all")
                }
            }
            "dataset-add" | "dataset-remove" | "dataset-lookup" | "dataset-clear" => {
                let rt = lock(&self.shared).runtime_dir.clone();
                dataset(&rt, name, args)
            }
            "dataset-dump" => {
                let rt = lock(&self.shared).runtime_dir.clone();
                Reply::ok(dataset_command(&rt, name, "", "", "").1)
            }
            "add-hostbit" | "remove-hostbit" | "list-hostbit" => self.hostbit(name, args).await,
            "get-flow-stats-by-id" => self.flow_stats(args).await,
            _ => Reply::nok("Unknown command"),
        }
    }

    /// The stats object of EVE `stats` records (totals and each process under
    /// `threads`), from the counter pages.
    fn dump_counters(&self) -> Reply {
        let rt = lock(&self.shared).runtime_dir.clone();
        let pages = meerkat_eve_writer::stats::read_pages(&rt);
        let now_us = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_micros() as i64)
            .unwrap_or(0);
        let ev = meerkat_eve_writer::stats::stats_event(&pages, now_us);
        let mut line = Vec::new();
        let opts = meerkat_eve_writer::render::RenderOptions {
            stats_totals: true,
            stats_threads: true,
            ..Default::default()
        };
        meerkat_eve_writer::render::render(&mut line, &ev, &opts);
        match serde_json::from_slice::<Value>(&line) {
            Ok(mut v) => Reply::ok(v["stats"].take()),
            Err(e) => Reply::nok(format!("counters: {e}")),
        }
    }

    fn reload_nonblocking(&self) -> Reply {
        if self.service.reloading.load(Ordering::SeqCst) {
            return Reply::nok("Reload already in progress");
        }
        let service = self.service.clone();
        tokio::spawn(async move {
            if let Err(e) = service
                .reload_configured("unix socket (non-blocking)")
                .await
            {
                tracing::error!("rule reload failed: {}", e.message());
            }
        });
        Reply::ok("done")
    }

    async fn failed_rules(&self) -> Reply {
        let (digest, files) = {
            let s = lock(&self.shared);
            (s.digest.clone(), s.rule_files.clone())
        };
        let mut cache = self.failed.lock().await;
        if let Some((d, list)) = cache.as_ref()
            && *d == digest
        {
            return Reply::ok(Value::Array(list.clone()));
        }
        let config = self.config.clone();
        let made = tokio::task::spawn_blocking(move || failed_rule_list(&config, &files)).await;
        match made {
            Ok(Ok(list)) => {
                *cache = Some((digest, list.clone()));
                Reply::ok(Value::Array(list))
            }
            Ok(Err(e)) => Reply::nok(e),
            Err(e) => Reply::nok(format!("ruleset-failed-rules: {e}")),
        }
    }

    fn iface_stat(&self, args: &Args) -> Reply {
        let Some(iface) = str_arg(args, "iface") else {
            return Reply::nok("iface is not a string");
        };
        if lock(&self.shared).interface.as_deref() != Some(iface) {
            return Reply::nok("Iface does not exist");
        }
        let pages = read_counters(&self.shared);
        let sum = |role: fn(&str) -> bool, name: &str| -> u64 {
            pages
                .iter()
                .filter(|(r, _, _)| role(r))
                .flat_map(|(_, _, cs)| cs.iter())
                .filter(|(n, _)| n == name || n.ends_with(&format!(".{name}")))
                .map(|(_, v)| *v)
                .sum()
        };
        let capture = |r: &str| r.parse() == Ok(Role::Capture);
        let detect = |r: &str| matches!(r.parse(), Ok(Role::Detect(_)));
        let drop: u64 = CaptureLiveCounter::DROPS
            .iter()
            .map(|c| sum(capture, c.name()))
            .sum();
        Reply::ok(json!({
            "pkts": sum(capture, CaptureLiveCounter::SourcePackets.name()),
            "invalid-checksums": sum(detect, "invalid_checksum"),
            "drop": drop,
            "bypassed": 0,
        }))
    }

    fn pcap_file(&self, args: &Args, continuous: bool) -> Reply {
        let Some(filename) = str_arg(args, "filename") else {
            return Reply::nok("filename is not a string");
        };
        let Some(output_dir) = args.get("output-dir") else {
            return Reply::nok("output-dir param is mandatory");
        };
        let Some(output_dir) = output_dir.as_str() else {
            return Reply::nok("output-dir is not a string");
        };
        if !Path::new(filename).exists() {
            return Reply::nok("filename does not exist");
        }
        if !Path::new(output_dir).is_dir() {
            return Reply::nok("output-dir does not exist");
        }
        let flag = |name: &str| args.get(name).and_then(Value::as_bool);
        let options = InputOptions {
            output_dir: Some(
                std::path::absolute(output_dir).unwrap_or_else(|_| PathBuf::from(output_dir)),
            ),
            continuous: Some(continuous || flag("continuous").unwrap_or(false)),
            delete_when_done: flag("delete-when-done"),
        };
        match self.service.queue(filename, options) {
            Ok(_) => Reply::ok("Successfully added file to list"),
            Err(e) => Reply::nok(e.message()),
        }
    }

    async fn reopen(&self) -> Reply {
        let rt = lock(&self.shared).runtime_dir.clone();
        let ch = match unix_channel(&layout::eve_socket_path(&rt)).await {
            Ok(ch) => ch,
            Err(e) => return Reply::nok(format!("the eve-writer is not reachable: {e}")),
        };
        match WriterAdminClient::new(ch).reopen(ReopenRequest {}).await {
            Ok(r) if r.get_ref().errors.is_empty() => Reply::ok("done"),
            Ok(r) => Reply::nok(r.into_inner().errors.join("; ")),
            Err(e) => Reply::nok(e.message().to_string()),
        }
    }

    /// The running ruleset's xbit/hostbit names (from detect worker 0).
    async fn xbit_names(&self) -> Result<Vec<String>, String> {
        let mut c = self
            .service
            .worker(0)
            .await
            .map_err(|s| s.message().to_string())?;
        let r = tokio::time::timeout(QUERY_TIMEOUT, c.variables(VariablesRequest {}))
            .await
            .map_err(|_| "detect worker 0 did not answer".to_string())?
            .map_err(|s| s.message().to_string())?;
        Ok(r.into_inner().xbits)
    }

    async fn hostbit(&self, command: &str, args: &Args) -> Reply {
        let Some(addr) = str_arg(args, "ipaddress") else {
            return Reply::nok("ipaddress is not a string");
        };
        let Ok(ip) = addr.trim().parse::<IpAddr>() else {
            return Reply::nok("invalid address string");
        };
        let names = match self.xbit_names().await {
            Ok(n) => n,
            Err(e) => return Reply::nok(e),
        };
        let rt = lock(&self.shared).runtime_dir.clone();
        let table = match meerkat_shm::SharedTable::open_or_create(
            &layout::host_table_path(&rt),
            meerkat_detect::worker::HOST_TABLE_SLOTS,
        ) {
            Ok(t) => t,
            Err(e) => return Reply::nok(format!("host table: {e}")),
        };
        let now_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        let index = |name: &str| {
            names
                .iter()
                .position(|n| n == name)
                .and_then(|i| u16::try_from(i).ok())
        };
        let key = |i: u16| meerkat_detect::engine::state::host_bit_key(i, ip);
        if command == "list-hostbit" {
            let bits: Vec<Value> = names
                .iter()
                .enumerate()
                .filter_map(|(i, name)| {
                    let e = table.get(key(u16::try_from(i).ok()?))?;
                    (e.t0 > now_ns)
                        .then(|| json!({"name": name, "expire": (e.t0 - now_ns) / 1_000_000_000}))
                })
                .collect();
            if bits.is_empty() {
                return Reply::nok("host not found");
            }
            return Reply::ok(json!({"count": bits.len(), "hostbits": bits}));
        }
        let Some(bit) = str_arg(args, "hostbit") else {
            return Reply::nok("hostbit is not a string");
        };
        let Some(i) = index(bit) else {
            return Reply::nok("hostbit not found");
        };
        if command == "remove-hostbit" {
            table.remove(key(i));
            return Reply::ok("hostbit removed");
        }
        let Some(expire) = args.get("expire").and_then(Value::as_u64) else {
            return Reply::nok("expire is not an integer");
        };
        let until = now_ns.saturating_add(expire.saturating_mul(1_000_000_000));
        table.update(key(i), |e| e.t0 = until);
        Reply::ok("hostbit added")
    }

    async fn flow_stats(&self, args: &Args) -> Reply {
        let Some(id) = args.get("flow_id").and_then(Value::as_u64) else {
            return Reply::nok("flow_id is not an integer");
        };
        let workers = lock(&self.shared).workers;
        for w in 0..workers {
            let Ok(mut c) = self.service.worker(w).await else {
                continue;
            };
            let asked = tokio::time::timeout(
                QUERY_TIMEOUT,
                c.flow_stats(FlowStatsRequest { flow_id: id }),
            );
            if let Ok(Ok(r)) = asked.await {
                let f = r.into_inner();
                if f.found {
                    return Reply::ok(json!({
                        "pkts_toclient": f.pkts_toclient,
                        "pkts_toserver": f.pkts_toserver,
                        "bytes_toclient": f.bytes_toclient,
                        "bytes_toserver": f.bytes_toserver,
                        "age": f.age_s,
                    }));
                }
            }
        }
        Reply::nok("Not found")
    }
}

/// `dataset-add`, `-remove`, `-lookup`, `-clear` on the runtime directory `rt`'s
/// sets, with Suricata's checks and replies.
fn dataset(rt: &std::path::Path, command: &str, args: &Args) -> Reply {
    let Some(setname) = str_arg(args, "setname") else {
        return Reply::nok("setname is not a string");
    };
    let Some(settype) = str_arg(args, "settype") else {
        return Reply::nok("settype is not a string");
    };
    let value = str_arg(args, "datavalue");
    if command != "dataset-clear" && value.is_none() {
        return Reply::nok("datavalue is not string");
    }
    match dataset_command(rt, command, setname, settype, value.unwrap_or_default()) {
        (true, m) => Reply::ok(m),
        (false, m) => Reply::nok(m),
    }
}

/// One `dataset-*` command once its arguments are there: (OK, Suricata's message).
/// Values are in Suricata's serialised form (strings base64, digests hex, addresses
/// text). Shared by the unix socket and the gRPC `Dataset` call.
pub(super) fn dataset_command(
    rt: &std::path::Path,
    command: &str,
    setname: &str,
    settype: &str,
    value: &str,
) -> (bool, &'static str) {
    use meerkat_shm::dataset::{Added, Kind, parse_value};
    if command == "dataset-dump" {
        for (set, path, r) in meerkat_detect::rules::datasets::save_all(rt) {
            if let Err(e) = r {
                tracing::warn!("dataset {set}: cannot save to {}: {e}", path.display());
            }
        }
        return (true, "datasets dump done");
    }
    let Some(kind) = SET_TYPES
        .contains(&settype)
        .then(|| Kind::parse(settype))
        .flatten()
    else {
        return (false, "unknown settype");
    };
    let Some(set) = meerkat_detect::rules::datasets::find(rt, setname, kind) else {
        return (false, "set not found or wrong type");
    };
    if command == "dataset-clear" {
        set.clear();
        return (true, "dataset cleared");
    }
    let data = parse_value(kind, value).ok();
    match command {
        "dataset-add" => match data.map(|d| set.add(&d, None)) {
            Some(Added::New) => (true, "data added"),
            Some(Added::Present) => (true, "data already in set"),
            _ => (false, "failed to add data"),
        },
        "dataset-remove" => match data.map(|d| set.remove(&d)) {
            Some(true) => (true, "data removed"),
            _ => (false, "failed to remove data"),
        },
        "dataset-lookup" => match data.map(|d| set.contains(&d)) {
            Some(true) => (true, "item found in set"),
            _ => (false, "item not found in set"),
        },
        _ => (false, "Unknown command"),
    }
}

/// An EVE timestamp of a wall-clock time.
fn timestamp(t: SystemTime) -> String {
    let us = t
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let mut b = Vec::new();
    meerkat_eve_writer::render::timestamp(&mut b, us);
    String::from_utf8_lossy(&b).trim_matches('"').to_string()
}

/// Every rule of `files` that does not load: `{tenant_id, rule, filename, line}`.
fn failed_rule_list(config: &Config, files: &[String]) -> Result<Vec<Value>, String> {
    let ctx = meerkat_detect::rules::RuleContext::from_config(config)?;
    let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    let loaded = meerkat_detect::rules::load_files(&paths, &ctx)?;
    let mut texts: std::collections::HashMap<PathBuf, Vec<(usize, String)>> = Default::default();
    let mut out = Vec::with_capacity(loaded.problems.len());
    for p in &loaded.problems {
        if !texts.contains_key(&p.file) {
            let text = std::fs::read_to_string(&p.file).unwrap_or_default();
            texts.insert(
                p.file.clone(),
                meerkat_detect::rules::parse::logical_lines(&text),
            );
        }
        let rule = texts
            .get(&p.file)
            .and_then(|lines| lines.iter().find(|(l, _)| *l == p.line))
            .map(|(_, t)| t.clone())
            .unwrap_or_default();
        out.push(json!({
            "tenant_id": 0,
            "rule": rule,
            "filename": p.file.display().to_string(),
            "line": p.line,
        }));
    }
    Ok(out)
}

/// What a reload reports in the log (SIGUSR2, the unix socket).
pub(super) fn log_reload(reason: &str, r: &Result<ReloadRulesReply, tonic::Status>) {
    match r {
        Ok(r) => tracing::info!(
            generation = r.generation,
            loaded = r.loaded,
            failed = r.failed,
            ms = r.duration_ms,
            "{reason}: rules reloaded (ruleset generation {})",
            r.generation
        ),
        Err(e) => tracing::error!("{reason}: rule reload failed: {}", e.message()),
    }
}

impl Service {
    /// Reloads the configured rule files as Suricata's reloads do: the rules that load
    /// are swapped in even when others do not (those are logged).
    pub(super) async fn reload_configured(
        &self,
        reason: &str,
    ) -> Result<ReloadRulesReply, tonic::Status> {
        self.reloading.store(true, Ordering::SeqCst);
        let r = self
            .reload_rules(tonic::Request::new(ReloadRulesRequest {
                rule_files: Vec::new(),
                allow_errors: true,
            }))
            .await
            .map(tonic::Response::into_inner);
        self.reloading.store(false, Ordering::SeqCst);
        log_reload(reason, &r);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dataset_replies_follow_suricata() {
        let a = |v: Value| v.as_object().cloned().unwrap_or_default();
        let rt = tempfile::tempdir().unwrap();
        let d = |cmd: &str, v: Value| dataset(rt.path(), cmd, &a(v));
        assert_eq!(
            d("dataset-add", json!({})),
            Reply::nok("setname is not a string")
        );
        assert_eq!(
            d("dataset-add", json!({"setname": "x"})),
            Reply::nok("settype is not a string")
        );
        assert_eq!(
            d("dataset-add", json!({"setname": "x", "settype": "string"})),
            Reply::nok("datavalue is not string")
        );
        assert_eq!(
            d(
                "dataset-add",
                json!({"setname": "x", "settype": "bogus", "datavalue": "YQ=="})
            ),
            Reply::nok("unknown settype")
        );
        let add = json!({"setname": "x", "settype": "string", "datavalue": "YQ=="});
        assert_eq!(
            d("dataset-add", add.clone()),
            Reply::nok("set not found or wrong type")
        );
        // The set a worker made in the runtime directory.
        let spec = meerkat_shm::dataset::Spec {
            name: "x",
            kind: meerkat_shm::dataset::Kind::String,
            sizing: meerkat_shm::dataset::Sizing::from_memcap(1 << 16),
            save: None,
        };
        let path = rt.path().join(meerkat_shm::dataset::file_name("x"));
        let (set, _) = meerkat_shm::SharedSet::open_or_create(&path, &spec, |_| Ok(())).unwrap();
        assert_eq!(d("dataset-add", add.clone()), Reply::ok("data added"));
        assert!(set.contains(b"a"));
        assert_eq!(
            d("dataset-add", add.clone()),
            Reply::ok("data already in set")
        );
        assert_eq!(
            d("dataset-lookup", add.clone()),
            Reply::ok("item found in set")
        );
        let md5 = json!({"setname": "x", "settype": "md5", "datavalue": "YQ=="});
        assert_eq!(
            d("dataset-lookup", md5),
            Reply::nok("set not found or wrong type")
        );
        let bad = json!({"setname": "x", "settype": "string", "datavalue": "!!"});
        assert_eq!(d("dataset-add", bad), Reply::nok("failed to add data"));
        assert_eq!(d("dataset-remove", add.clone()), Reply::ok("data removed"));
        assert_eq!(
            d("dataset-remove", add.clone()),
            Reply::nok("failed to remove data")
        );
        assert_eq!(
            d("dataset-lookup", add.clone()),
            Reply::nok("item not found in set")
        );
        set.add(b"b", None);
        assert_eq!(
            d(
                "dataset-clear",
                json!({"setname": "x", "settype": "string"})
            ),
            Reply::ok("dataset cleared")
        );
        assert!(set.is_empty());
        assert!(timestamp(UNIX_EPOCH).starts_with("1970-01-01T00:00:00.000000"));
    }
}
