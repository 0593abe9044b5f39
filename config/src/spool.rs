//! `outputs.eve-log.spool`: the disk spool of a network output (redis, nats). When
//! the server is down or slower than the input, records go to append-only segment files
//! in `directory` instead of waiting in memory (and holding the producers), and are sent
//! in order once the server takes them again; a spool left by a writer that died is
//! sent first at the next start. Meerkat's own section.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::de::{self, ByteSize, Seconds};

/// When the spool's segments reach `max-size`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum WhenFull {
    /// Spool no more: records wait in memory, unacknowledged, and the producers stop
    /// once their windows are full (backpressure, as without a spool).
    #[default]
    Block,
    /// Delete the oldest segment (its records are counted as dropped) to make room.
    DropOldest,
}

/// When spooled records are fsync'ed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum Fsync {
    /// Before the batches in them are acknowledged: survives a power cut.
    Always,
    /// Every `fsync-interval` seconds: a power cut may lose that long's spooled records
    /// (a killed writer loses none: they were handed to the OS before the ack).
    #[default]
    Interval,
    /// Never (the OS writes back when it likes).
    Never,
}

fn yes() -> bool {
    true
}
fn default_max_size() -> ByteSize {
    ByteSize(1 << 30)
}
fn default_segment_size() -> ByteSize {
    ByteSize(16 << 20)
}
fn default_memory() -> ByteSize {
    ByteSize(4 << 20)
}
fn default_fsync_interval() -> Seconds {
    Seconds(1.0)
}

/// `outputs.eve-log.spool`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Spool {
    /// Default yes for network outputs.
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// Directory of the segments (made when first needed); absent:
    /// `<default-log-dir>/spool/<filetype>-<key or stream>`. One output per directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub directory: Option<PathBuf>,
    /// Largest total size of the segments, bytes. Default 1gb.
    #[serde(default = "default_max_size")]
    pub max_size: ByteSize,
    /// Size at which a segment is closed and a new one started, bytes. Default 16mb.
    #[serde(default = "default_segment_size")]
    pub segment_size: ByteSize,
    /// Bytes of records that may wait in memory for a slow server before they go to the
    /// spool (a server that is down sends them at once). Default 4mb.
    #[serde(default = "default_memory")]
    pub memory: ByteSize,
    #[serde(default)]
    pub fsync: Fsync,
    /// Seconds between fsyncs with `fsync: interval`. Default 1.
    #[serde(default = "default_fsync_interval")]
    pub fsync_interval: Seconds,
    #[serde(default)]
    pub when_full: WhenFull,
}

impl Default for Spool {
    fn default() -> Self {
        Spool {
            enabled: true,
            directory: None,
            max_size: default_max_size(),
            segment_size: default_segment_size(),
            memory: default_memory(),
            fsync: Fsync::default(),
            fsync_interval: default_fsync_interval(),
            when_full: WhenFull::default(),
        }
    }
}

/// Smallest segment.
pub const MIN_SEGMENT: u64 = 4096;
/// Largest segment (offsets within one are u32).
pub const MAX_SEGMENT: u64 = 1 << 31;

impl Spool {
    pub fn validate(&self) -> Result<(), crate::ConfigError> {
        let seg = self.segment_size.bytes();
        if !(MIN_SEGMENT..=MAX_SEGMENT).contains(&seg) {
            return Err(crate::ConfigError::Invalid(format!(
                "outputs.eve-log.spool.segment-size {seg} must be from 4kb to 2gb"
            )));
        }
        if self.max_size.bytes() < 2 * seg {
            return Err(crate::ConfigError::Invalid(format!(
                "outputs.eve-log.spool.max-size {} must be at least two segments ({})",
                self.max_size.bytes(),
                2 * seg
            )));
        }
        if self.fsync == Fsync::Interval && self.fsync_interval.0 <= 0.0 {
            return Err(crate::ConfigError::Invalid(
                "outputs.eve-log.spool.fsync-interval must be more than 0 seconds".to_string(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_checks() {
        let d = Spool::default();
        let back: Spool = serde_yaml::from_str(&serde_yaml::to_string(&d).unwrap()).unwrap();
        assert_eq!(back, d);
        d.validate().unwrap();
        let s: Spool = serde_yaml::from_str(
            "when-full: drop-oldest\nfsync: always\nmax-size: 1mb\nsegment-size: 64kb",
        )
        .unwrap();
        assert_eq!(
            (s.when_full, s.fsync),
            (WhenFull::DropOldest, Fsync::Always)
        );
        s.validate().unwrap();
        let s: Spool = serde_yaml::from_str("segment-size: 1kb").unwrap();
        assert!(
            s.validate()
                .unwrap_err()
                .to_string()
                .contains("segment-size")
        );
        assert!(serde_yaml::from_str::<Spool>("when-full: wait").is_err());
    }
}
