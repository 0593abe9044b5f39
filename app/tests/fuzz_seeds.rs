//! Runs every protocol's fuzz targets over their seed corpus
//! (`src/<protocol>/seeds/<target>/`) as ordinary tests, so every seed, and every
//! prefix of it, keeps parsing without a panic on stable, in CI.

#![allow(clippy::unwrap_used)]

use std::path::Path;

use meerkat_app::PROTOCOLS;

fn run(dir: &Path, f: fn(&[u8])) -> usize {
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.unwrap().path();
        let data = std::fs::read(&p).unwrap();
        let t0 = std::time::Instant::now();
        f(&data);
        // Prefixes too: truncation is the commonest malformation. Every prefix of a
        // short seed; of a long one (whose every prefix would cost a time quadratic in
        // its length, minutes in all), the first and last bytes' cuts and evenly spaced
        // ones between.
        for cut in cuts(data.len()) {
            f(&data[..cut]);
        }
        n += 1;
        if std::env::var_os("SEED_TIMES").is_some() {
            eprintln!("  {}: {:.2?}", p.display(), t0.elapsed());
        }
    }
    n
}

/// Every cut of a seed of `len` bytes up to [`ALL_CUTS`]; beyond, the first and last
/// [`EDGE_CUTS`] and [`SPREAD_CUTS`] evenly spaced between.
fn cuts(len: usize) -> Vec<usize> {
    const ALL_CUTS: usize = 256;
    const EDGE_CUTS: usize = 64;
    const SPREAD_CUTS: usize = 128;
    if len <= ALL_CUTS {
        return (0..len).collect();
    }
    let mut v: Vec<usize> = (0..EDGE_CUTS)
        .chain((1..SPREAD_CUTS).map(|k| len * k / SPREAD_CUTS))
        .chain(len - EDGE_CUTS..len)
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

#[test]
fn every_protocol_target_runs_its_seeds() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    for d in PROTOCOLS {
        assert!(!d.fuzz.is_empty(), "{} has no fuzz target", d.name);
        for t in d.fuzz {
            // The module of `ftp-data` is `ftp_data`.
            let dir = src
                .join(d.name.replace('-', "_"))
                .join("seeds")
                .join(t.name);
            let t0 = std::time::Instant::now();
            let n = run(&dir, t.run);
            eprintln!("{}: {n} seeds in {:.2?}", t.name, t0.elapsed());
            assert!(n > 0, "no seeds in {}", dir.display());
        }
    }
}
