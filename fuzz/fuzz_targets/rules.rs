#![no_main]
//! The rule parser, the engine's compiler and the rules it compiles run over the sample
//! capture: `meerkat_detect::fuzz::rules_text`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_detect::fuzz::rules_text(data));
