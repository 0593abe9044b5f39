//! Process signals as flags the roles poll (no work in the handler beyond a store).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// Set by SIGTERM and SIGINT.
pub static STOP: AtomicBool = AtomicBool::new(false);
/// Number of SIGTERM/SIGINT received (a second one escalates).
pub static STOP_COUNT: AtomicUsize = AtomicUsize::new(0);
/// Set by SIGHUP (reopen logs).
pub static HUP: AtomicBool = AtomicBool::new(false);
/// Set by SIGUSR2 (reload the rules, as Suricata's). Every role installs the handler, so
/// a SIGUSR2 sent to the whole process group does not kill the roles (its default
/// action); only the supervisor acts on it.
pub static USR2: AtomicBool = AtomicBool::new(false);

extern "C" fn on_stop(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
    STOP_COUNT.fetch_add(1, Ordering::SeqCst);
}

extern "C" fn on_hup(_: libc::c_int) {
    HUP.store(true, Ordering::SeqCst);
}

extern "C" fn on_usr2(_: libc::c_int) {
    USR2.store(true, Ordering::SeqCst);
}

fn install(sig: libc::c_int, handler: extern "C" fn(libc::c_int)) {
    // SAFETY: the handlers only store to atomics, which is async-signal-safe; the
    // sigaction struct is fully initialised before the call.
    unsafe {
        let mut sa: libc::sigaction = std::mem::zeroed();
        sa.sa_sigaction = handler as usize;
        sa.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut sa.sa_mask);
        libc::sigaction(sig, &sa, std::ptr::null_mut());
    }
}

/// Installs the handlers for SIGTERM, SIGINT, SIGHUP and SIGUSR2.
pub fn install_handlers() {
    install(libc::SIGTERM, on_stop);
    install(libc::SIGINT, on_stop);
    install(libc::SIGHUP, on_hup);
    install(libc::SIGUSR2, on_usr2);
}

/// The flags, for the supervisor.
pub fn flags() -> meerkat_supervisor::Signals<'static> {
    meerkat_supervisor::Signals {
        stop: &STOP,
        stop_count: &STOP_COUNT,
        hup: &HUP,
        usr2: &USR2,
    }
}
