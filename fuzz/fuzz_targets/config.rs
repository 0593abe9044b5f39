#![no_main]
//! The config loader: YAML, `--set` overrides, key check, validation, rendering:
//! `meerkat_config::fuzz::config_text`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_config::fuzz::config_text(data));
