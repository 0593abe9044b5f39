//! The spin lock the shared tables put in a word of their mapping (the host table's
//! slots, the expectation table, each dataset): 0 when free, else the holder's pid.
//! It is held only while an entry is copied in or out, so waiting is spinning; a lock
//! held past [`MAX_SPIN`] spins is taken to belong to a process that died holding it
//! (a worker killed mid-copy) and is taken over.

use std::sync::atomic::{AtomicU32, Ordering};

/// Spins before a lock is considered abandoned.
pub(crate) const MAX_SPIN: u32 = 1 << 22;

/// Takes the lock in `l`.
pub(crate) fn acquire(l: &AtomicU32) {
    let me = std::process::id().max(1);
    let mut spins = 0u32;
    loop {
        let cur = l.load(Ordering::Relaxed);
        if (cur == 0 || spins >= MAX_SPIN)
            && l.compare_exchange(cur, me, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            return;
        }
        spins = spins.saturating_add(1);
        std::hint::spin_loop();
    }
}

/// Gives the lock in `l` back.
pub(crate) fn release(l: &AtomicU32) {
    l.store(0, Ordering::Release);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lock_is_taken_and_given_back() {
        let l = AtomicU32::new(0);
        acquire(&l);
        assert_eq!(l.load(Ordering::Relaxed), std::process::id().max(1));
        release(&l);
        assert_eq!(l.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn an_abandoned_lock_is_taken_over() {
        let l = AtomicU32::new(u32::MAX);
        acquire(&l);
        assert_eq!(l.load(Ordering::Relaxed), std::process::id().max(1));
    }
}
