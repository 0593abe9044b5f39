#![no_main]
//! The `pgsql` fuzz target of its protocol's descriptor (`meerkat_app`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_app::fuzz::run("pgsql", data));
