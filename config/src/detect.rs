//! `detect`: Meerkat's own keys in Suricata's section: the number of detect worker
//! processes and how they batch events to the eve-writer.

use serde::{Deserialize, Serialize};

use crate::ConfigError;
use crate::de;

fn default_event_batch_size() -> usize {
    256
}
fn default_event_batch_delay_ms() -> u64 {
    100
}
fn default_max_unacked_batches() -> usize {
    64
}

/// `detect`: the detect worker processes (Meerkat's own keys in Suricata's section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Detect {
    /// Number of detect worker processes; `auto`/absent = number of CPUs.
    #[serde(default, deserialize_with = "de::flex_opt_usize")]
    pub workers: Option<usize>,
    /// Events per batch sent to the eve-writer (a batch also goes when it is older than
    /// `event-batch-delay-ms`).
    #[serde(
        default = "default_event_batch_size",
        deserialize_with = "de::flex_usize"
    )]
    pub event_batch_size: usize,
    /// Longest time, in milliseconds, an event waits in a partly filled batch.
    #[serde(
        default = "default_event_batch_delay_ms",
        deserialize_with = "de::flex_u64"
    )]
    pub event_batch_delay_ms: u64,
    /// Batches a worker keeps unacknowledged before it stops producing (backpressure).
    #[serde(
        default = "default_max_unacked_batches",
        deserialize_with = "de::flex_usize"
    )]
    pub max_unacked_batches: usize,
}

impl Default for Detect {
    fn default() -> Self {
        Detect {
            workers: None,
            event_batch_size: default_event_batch_size(),
            event_batch_delay_ms: default_event_batch_delay_ms(),
            max_unacked_batches: default_max_unacked_batches(),
        }
    }
}

pub(crate) fn validate(d: &Detect) -> Result<(), ConfigError> {
    if d.workers == Some(0) {
        return Err(ConfigError::Invalid(
            "detect.workers must be at least 1".to_string(),
        ));
    }
    if d.event_batch_size == 0 || d.max_unacked_batches == 0 {
        return Err(ConfigError::Invalid(
            "detect.event-batch-size and detect.max-unacked-batches must be at least 1".to_string(),
        ));
    }
    Ok(())
}
