//! Runs the config fuzz entry point (`meerkat_config::fuzz::config_text`) over its seeds
//! (`config/seeds/config/`) and cuts of each, and over Suricata's stock `suricata.yaml`
//! when `../shared` is there, as ordinary tests.

#![allow(clippy::unwrap_used)]

use std::path::Path;

/// The seed and `cuts - 1` evenly spaced cuts of it (a truncated file must still not
/// panic).
fn run(data: &[u8], cuts: usize) {
    meerkat_config::fuzz::config_text(data);
    for k in 1..cuts {
        meerkat_config::fuzz::config_text(&data[..data.len() * k / cuts]);
    }
}

#[test]
fn config_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/config");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        run(&std::fs::read(e.unwrap().path()).unwrap(), 32);
        n += 1;
    }
    assert!(n >= 4, "{n} seeds");
}

#[test]
fn suricatas_stock_config() {
    let stock =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/tools/reference/suricata.yaml");
    let Ok(data) = std::fs::read(&stock) else {
        eprintln!("skipping: {} is absent", stock.display());
        return;
    };
    run(&data, 16);
}
