#![no_main]
//! The `nfs_udp` fuzz target of its protocol's descriptor (`meerkat_app`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_app::fuzz::run("nfs_udp", data));
