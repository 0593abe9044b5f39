//! Runs a capture through an in-process detect worker (no rings, no eve-writer) and prints
//! packets, alerts, events and the CPU time of the packet path; for profiling the worker
//! alone (`perf`, `valgrind --tool=dhat`):
//! `cargo run --release -p meerkat-detect --example inproc -- PCAP [RULES...] [--no-app]
//! [--config FILE] [--set KEY=VALUE]... [--groups]` (e.g. `--set mpm-algo=hs`; `--groups`
//! prints the prefilter groups; `--config` loads a suricata.yaml, e.g. bench/configs/*.yaml)
#![allow(clippy::print_stdout, clippy::unwrap_used)]
use meerkat_config::Config;
use meerkat_detect::InProcess;
use meerkat_detect::engine::Engine;
use meerkat_detect::rules::{self, RuleContext};

/// The allocator of the `meerkat` binary (its default `mimalloc` feature), so that a
/// profile of this harness counts the allocation costs of the real detect role.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let no_app = args.iter().any(|a| a == "--no-app");
    let groups = args.iter().any(|a| a == "--groups");
    args.retain(|a| a != "--no-app" && a != "--groups");
    // `--set KEY=VALUE` overrides, as on the command line of `meerkat run`.
    let mut sets = Vec::new();
    while let Some(i) = args.iter().position(|a| a == "--set") {
        args.remove(i);
        if i < args.len() {
            sets.push(args.remove(i));
        }
    }
    let mut config_file = None;
    if let Some(i) = args.iter().position(|a| a == "--config") {
        args.remove(i);
        if i < args.len() {
            config_file = Some(std::path::PathBuf::from(args.remove(i)));
        }
    }
    let pcap = std::path::PathBuf::from(args.remove(0));
    let files: Vec<std::path::PathBuf> = args.iter().map(Into::into).collect();
    let mut overrides = vec![
        "vars.address-groups.HOME_NET=any".to_string(),
        "vars.address-groups.EXTERNAL_NET=any".to_string(),
    ];
    overrides.extend(sets);
    if no_app {
        for p in ["http", "dns", "tls"] {
            overrides.push(format!("app-layer.protocols.{p}.enabled=no"));
        }
    }
    let config: Config = meerkat_app::config::resolve(config_file.as_deref(), &overrides)
        .unwrap()
        .config;
    let ctx = RuleContext::from_config(&config).unwrap();
    let loaded = rules::load_files(&files, &ctx).unwrap();
    let algo = meerkat_detect::engine::mpm::Algo::parse(&config.mpm_algo).unwrap_or_default();
    let t = std::time::Instant::now();
    let engine = Engine::with_algo(loaded.rules, loaded.names, algo);
    eprintln!("engine built in {:.2} s", t.elapsed().as_secs_f64());
    if groups {
        eprintln!("{}", engine.group_sizes().replace("; ", "\n"));
    }
    // A marker for profilers started with instrumentation off (`valgrind --tool=callgrind
    // --instr-atstart=no`, then `callgrind_control -i on` once this line shows).
    // With INPROC_GATE=FILE, the run waits for FILE to exist, so that instrumentation
    // switched on from outside covers the whole run and nothing of the load.
    eprintln!("engine ready");
    if let Some(gate) = std::env::var_os("INPROC_GATE") {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(600);
        while !std::path::Path::new(&gate).exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
    let t = std::time::Instant::now();
    let cpu0 = cpu_s();
    let r = InProcess::run_pcap(&config, engine, &pcap).unwrap();
    println!(
        "{} packets, {} alerts, {} events in {:.3} s ({:.3} CPU s)",
        r.packets,
        r.alerts,
        r.events.len(),
        t.elapsed().as_secs_f64(),
        cpu_s() - cpu0
    );
}

/// CPU time (user + system) of this process so far, in seconds.
fn cpu_s() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces): utime and stime are the 14th
    // and 15th fields, in clock ticks (100 per second on Linux).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|&i| f.get(i).and_then(|x| x.parse::<u64>().ok()))
        .sum();
    ticks as f64 / 100.0
}
