//! Runs the fuzz targets' seed corpus (`fuzz/seeds/<target>/`) as ordinary tests, so
//! every seed keeps parsing without a panic on stable, in CI.

#![allow(clippy::unwrap_used)]

use std::path::Path;

fn run(target: &str, f: fn(&[u8])) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/seeds")
        .join(target);
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let data = std::fs::read(&p).unwrap();
        f(&data);
        // Every prefix too: truncation is the commonest malformation.
        for cut in 0..data.len() {
            f(&data[..cut]);
        }
        n += 1;
    }
    assert!(n > 0, "no seeds in {}", dir.display());
}

#[test]
fn http_seeds() {
    run("http", meerkat_detect::app::fuzz::http);
}

#[test]
fn dns_udp_seeds() {
    run("dns_udp", meerkat_detect::app::fuzz::dns_udp);
}

#[test]
fn dns_tcp_seeds() {
    run("dns_tcp", meerkat_detect::app::fuzz::dns_tcp);
}

#[test]
fn tls_seeds() {
    run("tls", meerkat_detect::app::fuzz::tls);
    run("tls", meerkat_detect::app::fuzz::probes);
}

#[test]
fn ssh_seeds() {
    run("ssh", meerkat_detect::app::fuzz::ssh);
    run("ssh", meerkat_detect::app::fuzz::probes);
}
