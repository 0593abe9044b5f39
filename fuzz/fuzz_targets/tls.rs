#![no_main]
//! Fuzzes the tls parser through `meerkat_detect::app::fuzz::tls`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    meerkat_detect::app::fuzz::tls(data);
    meerkat_detect::app::fuzz::probes(data);
});
