#![no_main]
//! Fuzzes the dns_tcp parser through `meerkat_detect::app::fuzz::dns_tcp`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    meerkat_detect::app::fuzz::dns_tcp(data);
    meerkat_detect::app::fuzz::probes(data);
});
