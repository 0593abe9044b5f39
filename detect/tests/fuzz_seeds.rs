//! Runs the rule-language fuzz entry point (`meerkat_detect::fuzz::rules_text`) over its
//! seeds (`detect/seeds/rules/`) and cuts of each, and over the rules of the
//! suricata-verify corpus when `../shared` is there, as ordinary tests.

#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};

/// The seed, and 16 evenly spaced cuts of it (a rule cut anywhere must still not panic).
fn run(data: &[u8]) {
    meerkat_detect::fuzz::rules_text(data);
    for k in 1..16 {
        meerkat_detect::fuzz::rules_text(&data[..data.len() * k / 16]);
    }
}

#[test]
fn rules_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/rules");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        run(&std::fs::read(e.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 5, "{n} seeds");
}

/// Every rules file of the suricata-verify corpus, whole (the corpus is the fuzz
/// target's seed corpus).
#[test]
fn rules_of_the_corpus() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus/suricata-verify");
    let Ok(tests) = std::fs::read_dir(&corpus) else {
        eprintln!("skipping: {} is absent", corpus.display());
        return;
    };
    let mut files: Vec<PathBuf> = tests
        .filter_map(Result::ok)
        .map(|t| t.path().join("test.rules"))
        .filter(|p| p.exists())
        .collect();
    files.sort();
    for f in &files {
        meerkat_detect::fuzz::rules_text(&std::fs::read(f).unwrap());
    }
    assert!(files.len() > 100, "{} rules files", files.len());
}

/// Writes the event-stream fuzz target's seeds (`eve-writer/seeds/events/`): the events
/// of the bundled sample capture with its rules, as the batches a worker sends. Run by
/// hand after the event contract changes:
/// `cargo test -p meerkat-detect --test fuzz_seeds -- --ignored write_event_seeds`.
#[test]
#[ignore = "writes seed files"]
fn write_event_seeds() {
    use meerkat_detect::engine::Engine;
    use meerkat_detect::rules::{self, RuleContext};
    use prost::Message;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let config = meerkat_config::Config::default();
    let ctx = RuleContext::from_config(&config).unwrap();
    let text = std::fs::read_to_string(root.join("sample/sample.rules")).unwrap();
    let loaded = rules::load_str(&text, &ctx);
    let engine = Engine::new(loaded.rules, loaded.names);
    let r = meerkat_detect::InProcess::run_pcap(&config, engine, &root.join("sample/sample.pcap"))
        .unwrap();
    assert!(!r.events.is_empty());
    let out = root.join("eve-writer/seeds/events");
    std::fs::create_dir_all(&out).unwrap();
    for (i, chunk) in r.events.chunks(16).enumerate() {
        let b = meerkat_proto::events::EventBatch {
            producer: "detect-0".into(),
            epoch: 1,
            seq: i as u64 + 1,
            worker: 0,
            events: chunk.to_vec(),
            flush: i == 0,
            ring_mark: 4096 * (i as u64 + 1),
        };
        std::fs::write(out.join(format!("sample-{i:02}.bin")), b.encode_to_vec()).unwrap();
    }
}
