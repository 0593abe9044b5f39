//! `outputs.pcap-log`: the packets behind the alerts (or all packets) written to pcap
//! files, as Suricata's pcap-log: key names, defaults and file names as Suricata 8's.
//!
//! Files are named `<dir>/<filename>.<sec>` in `normal` mode (one file for every worker),
//! and in `multi` mode (one file per worker) by the `filename` pattern, which must hold
//! `%n` (worker number, from 1) and may hold `%i` (the capture process id) and `%t` (the
//! time, `<sec>` or `<sec>.<usec>` by `ts-format`). The time is that of the file's first
//! packet. Only `conditional: all` and `compression: none` are written so far (the
//! capture role writes them, see `meerkat_capture::pcap_log`); the rest is refused.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ConfigError;
use crate::de::{self, ByteSize};

/// Suricata's default `limit`: 100 MiB per file.
pub const DEFAULT_LIMIT: ByteSize = ByteSize::mib(100);
/// Suricata's smallest `limit`: 4 MiB.
pub const MIN_LIMIT: u64 = 4 * 1024 * 1024;
/// A `limit` written as a plain number below this is in MiB (Suricata before 1.2).
const LEGACY_MIB_BELOW: u64 = 4096;

fn default_filename() -> String {
    "log.pcap".to_string()
}
fn default_limit() -> ByteSize {
    DEFAULT_LIMIT
}

/// `mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum PcapLogMode {
    /// One file for every worker.
    #[default]
    Normal,
    /// One file per worker.
    Multi,
}

/// `conditional`: which packets are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Conditional {
    /// Every packet.
    #[default]
    All,
    /// The packets of flows that alerted (those before the alert that the flow still
    /// holds included), and packets that alerted without a flow.
    Alerts,
    /// Packets the `tag` rule keyword marked (and, as with `alerts`, packets that
    /// alerted).
    Tag,
}

/// `compression`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    #[default]
    None,
    /// LZ4 frames (`.lz4` files); `tcpdump -r` needs them decompressed (`lz4 -d`).
    Lz4,
}

/// `ts-format`: the time in file names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum TsFormat {
    /// Seconds.
    #[default]
    Sec,
    /// Seconds and microseconds.
    Usec,
}

/// `outputs.pcap-log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PcapLog {
    /// Suricata's default: no (the section is commented out).
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// File name prefix, or a pattern with `%n`/`%i`/`%t` in `multi` mode.
    #[serde(default = "default_filename")]
    pub filename: String,
    /// Bytes after which a file is closed and the next one started (a plain number
    /// below 4096 is MiB, as Suricata reads it). Default 100 MiB, at least 4 MiB.
    #[serde(default = "default_limit")]
    pub limit: ByteSize,
    /// Files kept (older ones deleted, as a ring); absent = all.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "opt_u32"
    )]
    pub max_files: Option<u32>,
    #[serde(default)]
    pub mode: PcapLogMode,
    /// Directory of the files; absent = `default-log-dir`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<PathBuf>,
    #[serde(default)]
    pub ts_format: TsFormat,
    /// Leave out a TCP direction's packets once its stream is past the reassembly
    /// depth. Default no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub use_stream_depth: bool,
    /// Stop writing a flow's packets once a `pass` rule matched it. Default no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub honor_pass_rules: bool,
    #[serde(default)]
    pub conditional: Conditional,
    #[serde(default)]
    pub compression: Compression,
    /// LZ4 compression level, 0 (fast) to 16. Default 0.
    #[serde(default, deserialize_with = "de::flex_u32")]
    pub lz4_level: u32,
    /// A content checksum in each LZ4 frame. Default no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub lz4_checksum: bool,
    /// Only packets this BPF filter takes are written. Absent = all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bpf_filter: Option<String>,
}

fn opt_u32<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    de::flex_u32(d).map(Some)
}

impl Default for PcapLog {
    fn default() -> Self {
        PcapLog {
            enabled: false,
            filename: default_filename(),
            limit: default_limit(),
            max_files: None,
            mode: PcapLogMode::default(),
            dir: None,
            ts_format: TsFormat::default(),
            use_stream_depth: false,
            honor_pass_rules: false,
            conditional: Conditional::default(),
            compression: Compression::default(),
            lz4_level: 0,
            lz4_checksum: false,
            bpf_filter: None,
        }
    }
}

impl PcapLog {
    /// The file size limit in bytes (a legacy plain number is MiB).
    pub fn limit_bytes(&self) -> u64 {
        let l = self.limit.bytes();
        if l < LEGACY_MIB_BELOW {
            l.saturating_mul(1024 * 1024)
        } else {
            l
        }
    }

    /// Whether `filename` is a pattern (`%n`, `%i`, `%t`).
    pub fn is_pattern(&self) -> bool {
        self.filename.contains('%')
    }

    pub(crate) fn validate(&self) -> Result<(), ConfigError> {
        if self.filename.is_empty() || self.filename.contains('/') {
            return Err(ConfigError::Invalid(format!(
                "outputs.pcap-log.filename `{}` must be a file name (put the directory in `dir`)",
                self.filename
            )));
        }
        if self.limit_bytes() < MIN_LIMIT {
            return Err(ConfigError::Invalid(format!(
                "outputs.pcap-log.limit {} must be at least {MIN_LIMIT} bytes (4 MiB)",
                self.limit_bytes()
            )));
        }
        if self.max_files == Some(0) {
            return Err(ConfigError::Invalid(
                "outputs.pcap-log.max-files must be at least 1".to_string(),
            ));
        }
        if self.lz4_level > 16 {
            return Err(ConfigError::Invalid(format!(
                "outputs.pcap-log.lz4-level {} must be 0 to 16",
                self.lz4_level
            )));
        }
        // What needs the detect workers' knowledge (which flows alerted, were tagged,
        // passed or went past the stream depth) is not written yet: refused rather than
        // silently logging every packet.
        if self.conditional != Conditional::All {
            return Err(ConfigError::Invalid(format!(
                "outputs.pcap-log.conditional: {} is not supported yet (only `all`)",
                match self.conditional {
                    Conditional::Alerts => "alerts",
                    _ => "tag",
                }
            )));
        }
        if self.honor_pass_rules || self.use_stream_depth {
            return Err(ConfigError::Invalid(format!(
                "outputs.pcap-log.{}: yes is not supported yet",
                if self.honor_pass_rules {
                    "honor-pass-rules"
                } else {
                    "use-stream-depth"
                }
            )));
        }
        if self.compression != Compression::None {
            return Err(ConfigError::Invalid(
                "outputs.pcap-log.compression: lz4 is not supported yet (only `none`)".to_string(),
            ));
        }
        let mut rest = self.filename.as_str();
        while let Some(i) = rest.find('%') {
            let spec = rest[i + 1..].chars().next();
            match spec {
                Some('n' | 't') => {}
                Some('i') if self.max_files.is_some() => {
                    return Err(ConfigError::Invalid(
                        "outputs.pcap-log.filename: %i (the thread id) cannot be used with max-files"
                            .to_string(),
                    ));
                }
                Some('i') => {}
                other => {
                    return Err(ConfigError::Invalid(format!(
                        "outputs.pcap-log.filename `{}`: unsupported format character %{}",
                        self.filename,
                        other.map(String::from).unwrap_or_default()
                    )));
                }
            }
            if self.mode != PcapLogMode::Multi {
                return Err(ConfigError::Invalid(format!(
                    "outputs.pcap-log.filename `{}`: %-patterns need mode: multi",
                    self.filename
                )));
            }
            rest = &rest[i + 2..];
        }
        if self.mode == PcapLogMode::Multi && !self.filename.contains("%n") {
            // Suricata needs a %-option in multi mode; Meerkat needs %n, the worker's
            // number, since its workers are processes the capture role writes for.
            return Err(ConfigError::Invalid(format!(
                "outputs.pcap-log.filename `{}`: mode multi needs %n (the worker number) in the name",
                self.filename
            )));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_text, resolve, resolve_tree};

    #[test]
    fn suricata_keys_and_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.yaml");
        std::fs::write(
            &path,
            r#"
outputs:
  - eve-log:
      enabled: yes
  - pcap-log:
      enabled: yes
      filename: log.%n.%t.pcap
      limit: 10mb
      max-files: 20
      compression: none
      mode: multi
      dir: /nsm
      ts-format: usec
      use-stream-depth: no
      honor-pass-rules: no
      conditional: all
      bpf-filter: not port 22
"#,
        )
        .unwrap();
        let r = resolve(Some(&path), &[]).unwrap();
        let p = r.config.pcap_log().unwrap();
        assert_eq!(p.limit_bytes(), 10 << 20);
        assert_eq!(p.max_files, Some(20));
        assert_eq!(p.mode, PcapLogMode::Multi);
        assert_eq!(p.conditional, Conditional::All);
        assert_eq!(p.ts_format, TsFormat::Usec);
        assert!(!p.honor_pass_rules && !p.use_stream_depth && p.is_pattern());
        assert_eq!(p.bpf_filter.as_deref(), Some("not port 22"));
        let back = resolve_tree(parse_text(&r.config.to_yaml()).unwrap()).unwrap();
        assert_eq!(back.config, r.config);
        // Off unless enabled; a plain number is MiB, as in Suricata 1.x configs.
        let d = PcapLog {
            limit: ByteSize(1000),
            ..Default::default()
        };
        assert_eq!(d.limit_bytes(), 1000 << 20);
        assert!(resolve(None, &[]).unwrap().config.pcap_log().is_none());
    }

    #[test]
    fn bad_values_name_the_key() {
        let bad = |p: PcapLog| p.validate().unwrap_err().to_string();
        assert!(
            bad(PcapLog {
                limit: ByteSize(5000),
                ..Default::default()
            })
            .contains("limit 5000")
        );
        assert!(
            bad(PcapLog {
                filename: "a.%n".to_string(),
                ..Default::default()
            })
            .contains("mode: multi")
        );
        assert!(
            bad(PcapLog {
                filename: "a.%x".to_string(),
                mode: PcapLogMode::Multi,
                ..Default::default()
            })
            .contains("%x")
        );
        assert!(
            bad(PcapLog {
                filename: "a.%i".to_string(),
                mode: PcapLogMode::Multi,
                max_files: Some(3),
                ..Default::default()
            })
            .contains("%i")
        );
        assert!(
            bad(PcapLog {
                max_files: Some(0),
                ..Default::default()
            })
            .contains("max-files")
        );
        assert!(
            bad(PcapLog {
                filename: "x/y".to_string(),
                ..Default::default()
            })
            .contains("`x/y`")
        );
        let e = resolve(
            None,
            &["outputs.pcap-log.conditional=sometimes".to_string()],
        );
        assert!(e.is_err());
        for (p, key) in [
            (
                PcapLog {
                    conditional: Conditional::Alerts,
                    ..Default::default()
                },
                "conditional: alerts",
            ),
            (
                PcapLog {
                    honor_pass_rules: true,
                    ..Default::default()
                },
                "honor-pass-rules",
            ),
            (
                PcapLog {
                    compression: Compression::Lz4,
                    ..Default::default()
                },
                "lz4",
            ),
            (
                PcapLog {
                    filename: "log.%t.pcap".to_string(),
                    mode: PcapLogMode::Multi,
                    ..Default::default()
                },
                "needs %n",
            ),
        ] {
            assert!(bad(p).contains(key), "{key}");
        }
    }
}
