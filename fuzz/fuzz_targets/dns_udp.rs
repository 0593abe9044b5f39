#![no_main]
//! Fuzzes the dns_udp parser through `meerkat_detect::app::fuzz::dns_udp`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    meerkat_detect::app::fuzz::dns_udp(data);
    meerkat_detect::app::fuzz::probes(data);
});
