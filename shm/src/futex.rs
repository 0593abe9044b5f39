//! Process-shared futex wait/wake on a 32-bit word in a shared mapping.
//!
//! The word lives in a `MAP_SHARED` file mapping, so the non-private futex operations are
//! used (the kernel keys them by inode and offset, which both processes share).

use std::sync::atomic::AtomicU32;
use std::time::Duration;

/// Sleeps while `*word == expected`, at most `timeout`. Spurious and early wake-ups are
/// normal; the caller re-checks its condition.
pub(crate) fn wait(word: &AtomicU32, expected: u32, timeout: Duration) {
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i64::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call; FUTEX_WAIT only
    // reads it. The timespec outlives the call. Errors (EAGAIN when the value already
    // changed, ETIMEDOUT, EINTR) all mean "re-check", so the result is ignored.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            &ts as *const libc::timespec,
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}

/// Wakes every waiter sleeping on `word`.
pub(crate) fn wake_all(word: &AtomicU32) {
    // SAFETY: `word` is a valid, aligned u32; FUTEX_WAKE does not access memory beyond
    // looking up waiters keyed by its address.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE,
            i32::MAX,
            std::ptr::null::<libc::timespec>(),
            std::ptr::null::<u32>(),
            0u32,
        );
    }
}
