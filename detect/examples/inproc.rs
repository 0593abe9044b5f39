//! Runs a capture through an in-process detect worker (no rings, no eve-writer) and prints
//! packets, alerts, events and the CPU time of the packet path; for profiling the worker
//! alone (`perf`, `valgrind --tool=dhat`):
//! `cargo run --release -p meerkat-detect --example inproc -- PCAP [RULES...] [--no-app]`
#![allow(clippy::print_stdout, clippy::unwrap_used)]
use meerkat_config::Config;
use meerkat_detect::InProcess;
use meerkat_detect::engine::Engine;
use meerkat_detect::rules::{self, RuleContext};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let no_app = args.iter().any(|a| a == "--no-app");
    args.retain(|a| a != "--no-app");
    let pcap = std::path::PathBuf::from(args.remove(0));
    let files: Vec<std::path::PathBuf> = args.iter().map(Into::into).collect();
    let mut overrides = vec![
        "vars.address-groups.HOME_NET=any".to_string(),
        "vars.address-groups.EXTERNAL_NET=any".to_string(),
    ];
    if no_app {
        for p in ["http", "dns", "tls"] {
            overrides.push(format!("app-layer.protocols.{p}.enabled=no"));
        }
    }
    let config: Config = meerkat_config::resolve(None, &overrides).unwrap().config;
    let ctx = RuleContext::from_config(&config).unwrap();
    let loaded = rules::load_files(&files, &ctx).unwrap();
    let engine = Engine::new(loaded.rules, loaded.names);
    let t = std::time::Instant::now();
    let r = InProcess::run_pcap(&config, engine, &pcap).unwrap();
    println!(
        "{} packets, {} alerts, {} events in {:.3} s",
        r.packets,
        r.alerts,
        r.events.len(),
        t.elapsed().as_secs_f64()
    );
}
