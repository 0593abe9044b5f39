//! Detects Hyperscan at build time: when `pkg-config libhs` finds it (Debian's
//! `libhyperscan-dev`), the prefilter can use it (`mpm-algo: auto` or `hs`); otherwise the
//! build stays pure Rust. `MEERKAT_HYPERSCAN=0` builds without it even when present.

fn main() {
    println!("cargo::rustc-check-cfg=cfg(hyperscan)");
    println!("cargo:rerun-if-env-changed=MEERKAT_HYPERSCAN");
    if std::env::var("MEERKAT_HYPERSCAN").is_ok_and(|v| v == "0") {
        return;
    }
    if let Ok(lib) = pkg_config::Config::new()
        .atleast_version("5.0")
        .probe("libhs")
    {
        println!("cargo:rustc-cfg=hyperscan");
        // libhs is C++ inside: pkg-config's static link lines would need libstdc++; the
        // shared library brings it itself.
        let _ = lib;
    }
}
