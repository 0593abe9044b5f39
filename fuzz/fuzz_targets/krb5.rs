#![no_main]
//! The `krb5` fuzz target of its protocol's descriptor (`meerkat_app`).
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_app::fuzz::run("krb5", data));
