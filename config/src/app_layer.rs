//! `app-layer`: which application-layer protocols are parsed (`enabled`), where their
//! detection looks first (Suricata's `detection-ports`), and each protocol's own
//! settings, kept as written for the protocol to check (`meerkat_app::config`: the
//! protocol names too are checked there, as Meerkat parses protocols Suricata does not
//! name).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::de;
use crate::vars::VarValue;

/// `app-layer.protocols.<name>.enabled`: `yes`, `no` or `detection-only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppEnabled {
    Yes,
    No,
    DetectionOnly,
}

impl<'de> Deserialize<'de> for AppEnabled {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(true) => Ok(AppEnabled::Yes),
            Value::Bool(false) => Ok(AppEnabled::No),
            Value::String(s) if s.eq_ignore_ascii_case("detection-only") => {
                Ok(AppEnabled::DetectionOnly)
            }
            Value::String(s) => match de::parse_bool(&s) {
                Some(true) => Ok(AppEnabled::Yes),
                Some(false) => Ok(AppEnabled::No),
                None => Err(serde::de::Error::custom(format!(
                    "`{s}` is not yes, no or detection-only"
                ))),
            },
            other => Err(serde::de::Error::custom(format!(
                "{other:?} is not yes, no or detection-only"
            ))),
        }
    }
}

/// `app-layer.protocols.<name>.detection-ports`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DetectionPorts {
    #[serde(default)]
    pub dp: Option<VarValue>,
    #[serde(default)]
    pub sp: Option<VarValue>,
}

/// `app-layer.protocols.<name>`: the keys every protocol has, and the protocol's own
/// settings, which the protocol checks and types (each protocol owns its config
/// section: `meerkat_app::config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub struct AppProtocol {
    /// As written; absent, the protocol's default (on, but for the protocols
    /// Suricata has off by default: DNP3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<AppEnabled>,
    /// The ports the protocol's detection prefers (for a protocol recognised on its
    /// ports only: the ports it is recognised on), replacing its default ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection_ports: Option<DetectionPorts>,
    /// Every other key of the section, as written.
    #[serde(flatten)]
    pub settings: BTreeMap<String, Value>,
}

/// `app-layer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AppLayer {
    #[serde(default)]
    pub protocols: BTreeMap<String, AppProtocol>,
}

impl AppLayer {
    /// Whether parsing of `proto` is on; `default` when its section does not say (the
    /// protocol's default: on for most, off for DNP3 as in Suricata).
    pub fn enabled(&self, proto: &str, default: AppEnabled) -> AppEnabled {
        self.protocols
            .get(proto)
            .and_then(|p| p.enabled)
            .unwrap_or(default)
    }

    /// A yes/no setting of `proto`'s section (`tls.ja3-fingerprints`): `Some` when set
    /// to a boolean (`yes`, `no`, `true`, ...), `None` when absent or anything else
    /// (`auto`).
    pub fn flag(&self, proto: &str, key: &str) -> Option<bool> {
        match self.protocols.get(proto)?.settings.get(key)? {
            Value::Bool(b) => Some(*b),
            Value::String(s) => match s.to_ascii_lowercase().as_str() {
                "yes" | "true" | "on" | "1" => Some(true),
                "no" | "false" | "off" | "0" => Some(false),
                _ => None,
            },
            _ => None,
        }
    }
}
