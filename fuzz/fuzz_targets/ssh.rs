#![no_main]
//! Fuzzes the ssh parser through `meerkat_detect::app::fuzz::ssh`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    meerkat_detect::app::fuzz::ssh(data);
    meerkat_detect::app::fuzz::probes(data);
});
