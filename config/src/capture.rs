//! `capture`: Meerkat's own section for the capture process: the size of each worker's
//! shared-memory ring, and, for live capture, the backlog and the priority of the
//! threads that empty the source ring.

use serde::{Deserialize, Serialize};

use crate::ConfigError;
use crate::de::{self, ByteSize};

fn default_ring_size() -> ByteSize {
    ByteSize::mib(32)
}
fn default_backlog_size() -> usize {
    131_072
}

/// `capture`: the capture process (Meerkat's own section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Capture {
    /// Bytes of each capture -> worker shared-memory ring (a power of two).
    #[serde(default = "default_ring_size")]
    pub ring_size: ByteSize,
    /// Live capture only: packets the capture process holds between the packet source
    /// (NIC or kernel ring) and the workers' rings, so that a burst the workers cannot
    /// take at once is absorbed instead of dropped; 0 = off (the source thread writes
    /// straight into the workers' rings and drops when one is full).
    #[serde(default = "default_backlog_size", deserialize_with = "de::flex_usize")]
    pub backlog_size: usize,
    /// Live capture only: scheduling of the threads that take packets out of the source
    /// ring. `realtime` (SCHED_FIFO, priority 1; needs root or CAP_SYS_NICE, else a warning
    /// and `normal`) lets them preempt the busy detect workers as soon as the kernel hands
    /// over a block, so a small kernel or NIC ring does not overflow during a burst; they
    /// sleep whenever the ring is empty.
    #[serde(default)]
    pub rx_priority: RxPriority,
    /// Bytes of its ring a worker keeps after their events are written, so that a
    /// worker replacing it (after a crash) can replay the flows it held: the records
    /// of every live flow whose first record is at most this far behind the read
    /// position (older flows are given up and counted while they live). Unset: a
    /// quarter of `ring-size`; 0: nothing kept (a dead worker's live flows are lost,
    /// and counted); at most half of `ring-size`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replay_window: Option<ByteSize>,
}

/// `capture.rx-priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RxPriority {
    #[default]
    Realtime,
    Normal,
}

impl Default for Capture {
    fn default() -> Self {
        Capture {
            ring_size: default_ring_size(),
            backlog_size: default_backlog_size(),
            rx_priority: RxPriority::default(),
            replay_window: None,
        }
    }
}

pub(crate) fn validate(c: &Capture) -> Result<(), ConfigError> {
    let ring = c.ring_size.bytes();
    if !ring.is_power_of_two() || !(64 * 1024..=1 << 36).contains(&ring) {
        return Err(ConfigError::Invalid(format!(
            "capture.ring-size {ring} must be a power of two from 64kb to 64gb"
        )));
    }
    if let Some(w) = c.replay_window
        && w.bytes() > ring / 2
    {
        return Err(ConfigError::Invalid(format!(
            "capture.replay-window {} must be at most half of capture.ring-size ({ring})",
            w.bytes()
        )));
    }
    Ok(())
}

impl Capture {
    /// `replay-window` in bytes (its default: a quarter of the ring).
    pub fn replay_window_bytes(&self) -> u64 {
        self.replay_window
            .map_or(self.ring_size.bytes() / 4, |w| w.bytes())
    }
}
