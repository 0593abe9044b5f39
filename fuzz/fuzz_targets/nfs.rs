#![no_main]
//! The `nfs` fuzz target of its protocol's descriptor (`meerkat_app`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_app::fuzz::run("nfs", data));
