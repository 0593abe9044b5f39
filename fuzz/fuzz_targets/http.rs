#![no_main]
//! Fuzzes the http parser through `meerkat_detect::app::fuzz::http`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    meerkat_detect::app::fuzz::http(data);
    meerkat_detect::app::fuzz::probes(data);
});
