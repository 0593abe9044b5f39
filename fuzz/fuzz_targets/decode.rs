#![no_main]
//! The packet decoder (every link type, every tunnel): `meerkat_wire::fuzz::decode_frame`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_wire::fuzz::decode_frame(data));
