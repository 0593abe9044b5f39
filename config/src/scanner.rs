//! `scanner`: Meerkat's own section on how directory inputs are tracked: the registry
//! of what was done with each file, how files are told apart (`identity`, the
//! `fingerprint` window), the names left out, and the checkpoint interval.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ConfigError;
use crate::de::{self, ByteSize, Seconds};

/// `scanner.identity`: how input files are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ScannerIdentity {
    /// Device and inode numbers (no file is opened to identify it).
    Native,
    /// A hash of the bytes of the fingerprint window (survives copies across
    /// filesystems and inode reuse).
    #[default]
    Fingerprint,
}

fn default_fingerprint_length() -> ByteSize {
    ByteSize::kib(4)
}

/// `scanner.fingerprint`: the byte window `[offset, offset + length)` hashed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FingerprintWindow {
    /// Bytes skipped at the start of each file.
    #[serde(default)]
    pub offset: ByteSize,
    /// Bytes hashed (1 byte to 1mb); the default reaches past pcap's and pcapng's file
    /// headers, which are the same in every file a sensor writes.
    #[serde(default = "default_fingerprint_length")]
    pub length: ByteSize,
}

impl Default for FingerprintWindow {
    fn default() -> Self {
        FingerprintWindow {
            offset: ByteSize(0),
            length: default_fingerprint_length(),
        }
    }
}

fn default_excludes() -> Vec<String> {
    [".*", "*.tmp", "*.part"]
        .into_iter()
        .map(str::to_string)
        .collect()
}
fn default_checkpoint_interval() -> Seconds {
    Seconds(1.0)
}
fn default_forget_after() -> Seconds {
    Seconds(86_400.0)
}

/// `scanner`: how directory inputs are tracked (Meerkat's own section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ScannerConfig {
    /// The registry of what was done with each file; absent = `pcap-registry.json` in
    /// `default-log-dir`, so that a rerun with the same log directory continues where
    /// the last one stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<PathBuf>,
    #[serde(default)]
    pub identity: ScannerIdentity,
    #[serde(default)]
    pub fingerprint: FingerprintWindow,
    /// Names (patterns without `/`) or paths (with `/`) left out of directory inputs;
    /// by default hidden files and writers' temporary names, so that a file written
    /// under such a name and renamed into place is read once complete.
    #[serde(default = "default_excludes", deserialize_with = "de::flex_list")]
    pub exclude: Vec<String>,
    /// Seconds between two checkpoints within a file (one is also made at the end of
    /// each file): at most this much work is redone after a crash.
    #[serde(default = "default_checkpoint_interval")]
    pub checkpoint_interval: Seconds,
    /// Seconds a deleted file's identity is remembered (a file that comes back within
    /// that time is not processed again).
    #[serde(default = "default_forget_after")]
    pub forget_after: Seconds,
}

impl Default for ScannerConfig {
    fn default() -> Self {
        ScannerConfig {
            registry: None,
            identity: ScannerIdentity::default(),
            fingerprint: FingerprintWindow::default(),
            exclude: default_excludes(),
            checkpoint_interval: default_checkpoint_interval(),
            forget_after: default_forget_after(),
        }
    }
}

pub(crate) fn validate(s: &ScannerConfig) -> Result<(), ConfigError> {
    let fp = s.fingerprint.length.bytes();
    if !(1..=1 << 20).contains(&fp) {
        return Err(ConfigError::Invalid(format!(
            "scanner.fingerprint.length {fp} must be from 1 byte to 1mb"
        )));
    }
    if s.checkpoint_interval.0 <= 0.0 {
        return Err(ConfigError::Invalid(
            "scanner.checkpoint-interval must be more than 0 seconds".to_string(),
        ));
    }
    Ok(())
}
