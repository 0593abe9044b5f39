#![no_main]
//! The pcap and pcapng readers, and the decoder on what they read:
//! `meerkat_wire::fuzz::pcap_file`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| meerkat_wire::fuzz::pcap_file(data));
