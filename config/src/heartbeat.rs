//! `heartbeat`: Suricata's periodic flush of every output (`output-flush-interval`).

use serde::{Deserialize, Serialize};

use crate::ConfigError;
use crate::de;

/// `heartbeat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Heartbeat {
    /// Seconds between flushes of every output; 0 = never (1..=60).
    #[serde(default, deserialize_with = "de::flex_u32")]
    pub output_flush_interval: u32,
}

pub(crate) fn validate(h: &Heartbeat) -> Result<(), ConfigError> {
    if h.output_flush_interval > 60 {
        return Err(ConfigError::Invalid(format!(
            "heartbeat.output-flush-interval {} must be 0 (never) to 60 seconds",
            h.output_flush_interval
        )));
    }
    Ok(())
}
