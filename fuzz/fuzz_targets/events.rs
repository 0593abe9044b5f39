#![no_main]
//! The event stream as the eve-writer receives it from a producer: framing, decoding
//! and rendering of every event: `meerkat_eve_writer::fuzz::event_batch`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_eve_writer::fuzz::event_batch(data));
