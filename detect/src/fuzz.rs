//! Entry point of the rule-language fuzz target (`fuzz/fuzz_targets/rules.rs`), also run
//! over the seeds in `detect/seeds/rules/` by `detect/tests/fuzz_seeds.rs`.

use std::sync::OnceLock;

use meerkat_config::Config;

use crate::engine::Engine;
use crate::rules::{self, RuleContext};
use crate::worker::InProcess;

/// The bundled sample capture's packets (Ethernet frames with their times): traffic for
/// the rules an input loads to run on.
fn sample_frames() -> &'static [(u64, Vec<u8>)] {
    static FRAMES: OnceLock<Vec<(u64, Vec<u8>)>> = OnceLock::new();
    FRAMES.get_or_init(|| {
        let bytes: &[u8] = include_bytes!("../../sample/sample.pcap");
        let mut v = Vec::new();
        if let Ok(mut r) = meerkat_wire::pcap::Reader::new(bytes) {
            while let Ok(Some(p)) = r.next_packet() {
                if p.link_type == meerkat_wire::decode::LINKTYPE_ETHERNET {
                    v.push((p.ts_ns, p.data.to_vec()));
                }
            }
        }
        v
    })
}

fn context() -> &'static (Config, RuleContext) {
    static CTX: OnceLock<(Config, RuleContext)> = OnceLock::new();
    CTX.get_or_init(|| {
        let config = Config::default();
        let ctx = RuleContext::from_config(&config).expect("the default config's rule context");
        (config, ctx)
    })
}

/// Loads `data` as a rules file (any bytes: lossy UTF-8, as a file with bad bytes is
/// read), compiles what loads, and runs it over the sample capture: no input may panic
/// the parser, the compiler or a rule's inspection.
pub fn rules_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let (config, ctx) = context();
    let loaded = rules::load_str(&text, ctx);
    for p in &loaded.problems {
        // Every problem renders (the -T report).
        let _ = p.to_string();
    }
    if loaded.rules.is_empty() {
        return;
    }
    let engine = Engine::new(loaded.rules, loaded.names);
    let frames = sample_frames();
    InProcess::run_frames(
        config,
        engine,
        frames.iter().map(|(t, d)| (*t, d.as_slice())),
    );
}
