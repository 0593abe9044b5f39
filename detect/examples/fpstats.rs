//! Fast-pattern length statistics of a ruleset:
//! `cargo run --release -p meerkat-detect --example fpstats -- RULES...`
#![allow(clippy::print_stdout, clippy::unwrap_used)]
use std::collections::BTreeMap;
fn main() {
    let files: Vec<std::path::PathBuf> = std::env::args().skip(1).map(Into::into).collect();
    let ctx = meerkat_detect::rules::RuleContext::from_config(&meerkat_config::Config::default())
        .unwrap();
    let l = meerkat_detect::rules::load_files(&files, &ctx).unwrap();
    let mut by_len: BTreeMap<usize, usize> = BTreeMap::new();
    let mut short = Vec::new();
    for r in &l.rules {
        if r.is_app() {
            continue;
        }
        if let Some(f) = &r.fast {
            *by_len.entry(f.bytes.len().min(16)).or_default() += 1;
            if f.bytes.len() <= 3 {
                short.push((r.sid, f.bytes.clone()));
            }
        }
    }
    println!("{by_len:?}");
    for (sid, b) in short.iter().take(40) {
        println!("{sid} {:?}", String::from_utf8_lossy(b));
    }
}
