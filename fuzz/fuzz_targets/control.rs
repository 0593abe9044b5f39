#![no_main]
//! The control API's requests: the unix-command socket's byte stream and the `Control`
//! gRPC calls, through their real handlers: `meerkat_supervisor::control::fuzz`.
libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    meerkat_supervisor::control::fuzz::control_requests(data);
});
