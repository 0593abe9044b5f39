//! What a worker keeps in its ring so that a replacement can rebuild its flows.
//!
//! # Why
//!
//! A worker that dies (a parser crash, the OOM killer, `kill -9`) takes its flows with
//! it: TCP streams, app-layer state, flowbits. Its replacement resumes reading the ring
//! after the records whose events the eve-writer has (see `sink`'s ring marks), so
//! without more it would see the rest of each flow as midstream traffic and miss what
//! depends on the earlier packets: a stream match across the crash, a flowbit set
//! before it, an HTTP response whose request came before it.
//!
//! # How
//!
//! The worker does not give the ring space of a record back to capture while a flow
//! that record started may still be needed: the space it releases ends at its *replay
//! floor*, the ring position of the first record of the oldest flow that is live, or
//! that ended but whose ending events are not acknowledged yet. So the records of every
//! flow a dead worker held are still in its ring when a replacement attaches, from the
//! floor on. The replacement processes them again, from the floor up to the position
//! whose events the eve-writer already has (the resume mark), *replaying*: it rebuilds
//! flows, streams, parsers and flow variables, and writes nothing (no event, no change
//! to the state shared with the other workers, which the dead worker made already).
//! From the resume mark on, it is the dead worker, to the packet: the same flows with
//! the same state and ids (a flow's id is a function of its key and first packet,
//! flows end at the same packets because sweeps fall on whole seconds of packet time),
//! so the events that follow are the ones the dead worker would have written.
//!
//! Cost on the packet path: a flow's creation appends an entry to a queue kept in
//! creation order, its end marks the entry; after each batch the acknowledged front of
//! the queue is dropped (amortised O(1) per flow).
//!
//! # Bounds
//!
//! A flow that lives long (an SSH session of hours) would pin its first record and,
//! with it, the whole ring behind it, and capture waits for ring space (offline) or
//! drops (live). So the floor lags the read position by at most the replay window
//! (`capture.replay-window` bytes, at most half the ring): a live flow whose first
//! record is further back is given up, and counted while it lives
//! ([`ReplayFloor::outside`]); if the worker dies meanwhile, its replacement reports
//! those flows as lost (`detect.N.flows_lost_on_restart`, and a warning). With a
//! window of 0 nothing is kept beyond the acknowledged records and every live flow of
//! a dead worker is lost (and counted).
//!
//! Not kept: IP fragments waiting for the rest of their datagram (a datagram cut by a
//! crash is not reassembled), and the per-host state of the shared table, which
//! outlives workers anyway.

use std::collections::VecDeque;

/// An entry's end while its flow lives.
const LIVE: u64 = u64::MAX;

/// The records a replacement would have to process again (see the module docs).
#[derive(Debug, Default)]
pub(super) struct ReplayFloor {
    /// Per flow in creation order: the ring position of its first record, and the
    /// position after the record it ended in ([`LIVE`] while it lives).
    flows: VecDeque<(u64, u64)>,
    /// Slot number of `flows[0]`.
    base: u64,
    /// Live flows whose first record fell out of the replay window.
    outside: u64,
    /// No ring to keep records in (an in-process run): nothing is tracked.
    disabled: bool,
}

/// The slot of a flow when tracking is disabled (never an entry).
const UNTRACKED: u64 = u64::MAX - 1;

impl ReplayFloor {
    /// A flow starts in the record at ring position `pos`: returns its slot.
    pub(super) fn start(&mut self, pos: u64) -> u64 {
        if self.disabled {
            return UNTRACKED;
        }
        self.flows.push_back((pos, LIVE));
        self.base + self.flows.len() as u64 - 1
    }

    /// Tracks nothing from now on (no ring: no replacement can replay).
    pub(super) fn disable(&mut self) {
        self.disabled = true;
    }

    /// The flow of `slot` ended in the record that ends at ring position `end`.
    pub(super) fn end(&mut self, slot: u64, end: u64) {
        if slot == UNTRACKED {
            return;
        }
        match slot.checked_sub(self.base) {
            Some(i) => {
                if let Some(e) = self.flows.get_mut(i as usize) {
                    e.1 = end;
                }
            }
            // Given up earlier (out of the window): no longer at risk.
            None => self.outside = self.outside.saturating_sub(1),
        }
    }

    /// Live flows a replacement could not rebuild (their first record is out of the
    /// window).
    pub(super) fn outside(&self) -> u64 {
        self.outside
    }

    /// Flows tracked (live, or ended and not yet acknowledged).
    #[cfg(test)]
    fn len(&self) -> usize {
        self.flows.len()
    }

    /// The position up to which the ring can be released, with the records before
    /// `acked` acknowledged, the worker's read position at `pos`, and a replay window of
    /// `window` bytes (0: none). Always a record boundary, at most `acked`.
    pub(super) fn floor(&mut self, acked: u64, pos: u64, window: u64) -> u64 {
        if window == 0 {
            // Nothing is kept for a replacement: every live flow is at risk.
            self.outside += self.flows.iter().filter(|e| e.1 == LIVE).count() as u64;
            self.base += self.flows.len() as u64;
            self.flows.clear();
            return acked;
        }
        let oldest = pos.saturating_sub(window);
        while let Some(&(first, end)) = self.flows.front() {
            let done = end != LIVE && end <= acked;
            if !done && first >= oldest {
                break;
            }
            if !done && end == LIVE {
                self.outside += 1;
            }
            self.flows.pop_front();
            self.base += 1;
        }
        if self.flows.is_empty() {
            self.flows.shrink_to(64);
        }
        self.flows
            .front()
            .map_or(acked, |&(first, _)| first.min(acked))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_floor_is_the_first_record_of_the_oldest_flow_still_needed() {
        let mut r = ReplayFloor::default();
        let a = r.start(100);
        let b = r.start(200);
        let _c = r.start(300);
        // Everything before 400 is acknowledged, all three live: keep from a's start.
        assert_eq!(r.floor(400, 400, 1 << 20), 100);
        // a ends at 450, not yet acknowledged: still kept.
        r.end(a, 450);
        assert_eq!(r.floor(400, 500, 1 << 20), 100);
        // Acknowledged: a goes, b (live) is the oldest.
        assert_eq!(r.floor(500, 500, 1 << 20), 200);
        // b ends and is acknowledged, c lives on.
        r.end(b, 520);
        assert_eq!(r.floor(600, 600, 1 << 20), 300);
        assert_eq!(r.len(), 1);
        assert_eq!(r.outside(), 0);
    }

    #[test]
    fn the_floor_never_passes_the_acknowledged_records() {
        let mut r = ReplayFloor::default();
        assert_eq!(r.floor(80, 500, 1 << 20), 80);
        r.start(400);
        assert_eq!(r.floor(80, 500, 1 << 20), 80);
    }

    #[test]
    fn a_flow_out_of_the_window_is_given_up_and_counted_while_it_lives() {
        let mut r = ReplayFloor::default();
        let old = r.start(100);
        let _new = r.start(5000);
        assert_eq!(r.floor(6000, 6000, 2000), 5000);
        assert_eq!(r.outside(), 1);
        // It ends: no longer at risk.
        r.end(old, 6100);
        assert_eq!(r.outside(), 0);
    }

    #[test]
    fn disabled_tracks_nothing() {
        let mut r = ReplayFloor::default();
        r.disable();
        let a = r.start(100);
        assert_eq!(r.len(), 0);
        r.end(a, 200);
        assert_eq!(r.outside(), 0);
        assert_eq!(r.floor(300, 300, 1 << 20), 300);
    }

    #[test]
    fn no_window_keeps_nothing_and_counts_every_live_flow() {
        let mut r = ReplayFloor::default();
        let a = r.start(100);
        r.start(200);
        r.end(a, 250);
        assert_eq!(r.floor(300, 300, 0), 300);
        assert_eq!(r.outside(), 1);
        // A flow started later is counted at the next floor.
        r.start(400);
        assert_eq!(r.floor(500, 500, 0), 500);
        assert_eq!(r.outside(), 2);
    }
}
