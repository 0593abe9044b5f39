//! `pcap-file`: reading capture files (`-r`): checksum validation (`-k`), and for
//! directory inputs Suricata's continuous mode, recursion, deletion when done, and the
//! delay and poll interval of continuous mode (seconds, fractions allowed).

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::ConfigError;
use crate::de::{self, Seconds};

/// Checksum validation of packets (`pcap-file.checksum-checks`, `-k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ChecksumChecks {
    /// Validate unless most packets of the input have bad checksums (offloading).
    #[default]
    Auto,
    /// Always validate.
    Yes,
    /// Never validate.
    No,
}

impl<'de> Deserialize<'de> for ChecksumChecks {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(b) => Ok(if b {
                ChecksumChecks::Yes
            } else {
                ChecksumChecks::No
            }),
            Value::String(s) if s.eq_ignore_ascii_case("auto") => Ok(ChecksumChecks::Auto),
            Value::String(s) if s.eq_ignore_ascii_case("all") => Ok(ChecksumChecks::Yes),
            Value::String(s) if s.eq_ignore_ascii_case("none") => Ok(ChecksumChecks::No),
            Value::String(s) => de::parse_bool(&s)
                .map(|b| {
                    if b {
                        ChecksumChecks::Yes
                    } else {
                        ChecksumChecks::No
                    }
                })
                .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not auto, yes or no"))),
            other => Err(serde::de::Error::custom(format!(
                "{other:?} is not auto, yes or no"
            ))),
        }
    }
}

/// `pcap-file.delete-when-done`: delete an input file once it is processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeleteWhenDone {
    /// Keep every file (Suricata's default).
    #[default]
    No,
    /// Delete every file once processed.
    Yes,
    /// Delete the files whose packets raised no alert (keep the evidence).
    NonAlerts,
}

impl Serialize for DeleteWhenDone {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DeleteWhenDone::No => s.serialize_bool(false),
            DeleteWhenDone::Yes => s.serialize_bool(true),
            DeleteWhenDone::NonAlerts => s.serialize_str("non-alerts"),
        }
    }
}

impl<'de> Deserialize<'de> for DeleteWhenDone {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bad = |v: &dyn std::fmt::Debug| {
            serde::de::Error::custom(format!(
                "delete-when-done must be true, false or non-alerts, not {v:?}"
            ))
        };
        match Value::deserialize(d)? {
            Value::Bool(b) => Ok(if b {
                DeleteWhenDone::Yes
            } else {
                DeleteWhenDone::No
            }),
            Value::String(s) if s.eq_ignore_ascii_case("non-alerts") => {
                Ok(DeleteWhenDone::NonAlerts)
            }
            Value::String(s) => match de::parse_bool(&s) {
                Some(true) => Ok(DeleteWhenDone::Yes),
                Some(false) => Ok(DeleteWhenDone::No),
                None => Err(bad(&s)),
            },
            other => Err(bad(&other)),
        }
    }
}

fn default_pcap_delay() -> Seconds {
    Seconds(30.0)
}
fn default_poll_interval() -> Seconds {
    Seconds(5.0)
}

/// `pcap-file`: reading capture files (`-r`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PcapFile {
    #[serde(default)]
    pub checksum_checks: ChecksumChecks,
    /// Keep watching directory inputs for new and growing files until stopped
    /// (`--pcap-file-continuous`). Suricata's default: no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub continuous: bool,
    /// Read the subdirectories of directory inputs too (`--pcap-file-recursive`).
    /// Suricata's default: no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub recursive: bool,
    /// Delete each file once processed: `false`, `true` or `non-alerts`
    /// (`--pcap-file-delete`). Suricata's default: false.
    #[serde(default)]
    pub delete_when_done: DeleteWhenDone,
    /// Seconds a file must go unmodified before it is read, in continuous mode (so that
    /// a file still being written is read once complete; a file renamed into place after
    /// it was written is read at once). Suricata's default: 30.
    #[serde(default = "default_pcap_delay")]
    pub delay: Seconds,
    /// Seconds between two looks at the directories in continuous mode. Suricata's
    /// default: 5.
    #[serde(default = "default_poll_interval")]
    pub poll_interval: Seconds,
}

impl Default for PcapFile {
    fn default() -> Self {
        PcapFile {
            checksum_checks: ChecksumChecks::default(),
            continuous: false,
            recursive: false,
            delete_when_done: DeleteWhenDone::No,
            delay: default_pcap_delay(),
            poll_interval: default_poll_interval(),
        }
    }
}

pub(crate) fn validate(p: &PcapFile) -> Result<(), ConfigError> {
    if p.poll_interval.0 <= 0.0 {
        return Err(ConfigError::Invalid(
            "pcap-file.poll-interval must be more than 0 seconds".to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    use crate::{ByteSize, ScannerIdentity, parse_text, resolve, resolve_tree};

    #[test]
    fn pcap_file_and_scanner_keys() {
        let r = resolve(
            None,
            &[
                "pcap-file.continuous=yes".to_string(),
                "pcap-file.recursive=true".to_string(),
                "pcap-file.delete-when-done=non-alerts".to_string(),
                "pcap-file.delay=0.5".to_string(),
                "pcap-file.poll-interval=2".to_string(),
                "scanner.registry=/var/lib/meerkat/reg.json".to_string(),
                "scanner.identity=native".to_string(),
                "scanner.fingerprint.offset=24".to_string(),
                "scanner.fingerprint.length=8kb".to_string(),
                "scanner.exclude=*.tmp, .*".to_string(),
                "scanner.checkpoint-interval=0.2".to_string(),
            ],
        )
        .unwrap();
        let c = r.config;
        assert!(c.pcap_file.continuous && c.pcap_file.recursive);
        assert_eq!(c.pcap_file.delete_when_done, DeleteWhenDone::NonAlerts);
        assert_eq!(c.pcap_file.delay.duration().as_millis(), 500);
        assert_eq!(c.scanner.identity, ScannerIdentity::Native);
        assert_eq!(c.scanner.fingerprint.length, ByteSize(8192));
        assert_eq!(c.scanner.exclude, ["*.tmp", ".*"]);
        assert_eq!(c.registry_path(), Path::new("/var/lib/meerkat/reg.json"));
        // Round trip through the YAML handed to the roles.
        let back = resolve_tree(parse_text(&c.to_yaml()).unwrap()).unwrap();
        assert_eq!(back.config, c);
        let d = resolve(None, &["pcap-file.delete-when-done=yes".to_string()]).unwrap();
        assert_eq!(d.config.pcap_file.delete_when_done, DeleteWhenDone::Yes);
        assert_eq!(
            d.config.registry_path(),
            d.config.default_log_dir.join("pcap-registry.json")
        );
        let e = resolve(None, &["pcap-file.delete-when-done=sometimes".to_string()]).unwrap_err();
        assert!(e.to_string().contains("delete-when-done"), "{e}");
        let e = resolve(None, &["scanner.fingerprint.length=0".to_string()]).unwrap_err();
        assert!(e.to_string().contains("scanner.fingerprint.length"), "{e}");
        let e = resolve(None, &["scanner.identity=inode".to_string()]).unwrap_err();
        assert!(e.to_string().contains("identity"), "{e}");
    }
}
