#![no_main]
//! The `dnp3` fuzz target of its protocol's descriptor (`meerkat_app`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_app::fuzz::run("dnp3", data));
