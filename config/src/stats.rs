//! `stats`: the periodic EVE `stats` records (Meerkat's interval default: 8 seconds).

use serde::{Deserialize, Serialize};

use crate::de::{self, yes};

fn default_stats_interval() -> u64 {
    8
}

/// `stats`: periodic counters (EVE `stats` records).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Stats {
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// Seconds between stats records.
    #[serde(default = "default_stats_interval", deserialize_with = "de::flex_u64")]
    pub interval: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            enabled: true,
            interval: default_stats_interval(),
        }
    }
}
