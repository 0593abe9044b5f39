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
        f(&data);
        // Every prefix too: truncation is the commonest malformation.
        for cut in 0..data.len() {
            f(&data[..cut]);
        }
        n += 1;
    }
    n
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
            let n = run(&dir, t.run);
            assert!(n > 0, "no seeds in {}", dir.display());
        }
    }
}
