//! `app-layer`: which application-layer protocols are parsed (`enabled`, Suricata's
//! `detection-ports`) and the HTTP parser's limits (`libhtp.default-config`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::de::{self, ByteSize};
use crate::vars::VarValue;
use crate::{ConfigError, keys};

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

/// `app-layer.protocols.http.libhtp.default-config`: HTTP parser limits (Suricata's
/// names and defaults).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LibhtpDefaults {
    /// Bytes of each request body kept for inspection (`http.request_body`,
    /// `file_data` to server); 0 = unlimited. Suricata's default: 100 KiB.
    #[serde(default = "default_body_limit")]
    pub request_body_limit: ByteSize,
    /// Bytes of each (decompressed) response body kept for inspection; 0 = unlimited.
    /// Suricata's default: 100 KiB.
    #[serde(default = "default_body_limit")]
    pub response_body_limit: ByteSize,
    /// Content-Encoding layers decoded (0 disables decompression). Suricata's default: 2.
    #[serde(
        default = "default_decompress_layers",
        deserialize_with = "de::flex_usize"
    )]
    pub response_body_decompress_layer_limit: usize,
    /// Decompressed bytes past which a body with a compression ratio above 2048 is a
    /// compression bomb (decoding stops, `http.compression_bomb`). Suricata's default: 1 MiB.
    #[serde(default = "default_bomb_limit")]
    pub compression_bomb_limit: ByteSize,
}

fn default_body_limit() -> ByteSize {
    ByteSize::kib(100)
}
fn default_decompress_layers() -> usize {
    2
}
fn default_bomb_limit() -> ByteSize {
    ByteSize::mib(1)
}

impl Default for LibhtpDefaults {
    fn default() -> Self {
        LibhtpDefaults {
            request_body_limit: default_body_limit(),
            response_body_limit: default_body_limit(),
            response_body_decompress_layer_limit: default_decompress_layers(),
            compression_bomb_limit: default_bomb_limit(),
        }
    }
}

/// `app-layer.protocols.http.libhtp`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Libhtp {
    #[serde(default)]
    pub default_config: LibhtpDefaults,
}

/// `app-layer.protocols.<name>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AppProtocol {
    #[serde(default = "app_yes")]
    pub enabled: AppEnabled,
    #[serde(default)]
    pub detection_ports: Option<DetectionPorts>,
    /// HTTP only: the parser's limits.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub libhtp: Option<Libhtp>,
}

fn app_yes() -> AppEnabled {
    AppEnabled::Yes
}

/// `app-layer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AppLayer {
    #[serde(default)]
    pub protocols: BTreeMap<String, AppProtocol>,
}

impl AppLayer {
    /// The HTTP parser limits (`app-layer.protocols.http.libhtp.default-config`).
    pub fn libhtp(&self) -> LibhtpDefaults {
        self.protocols
            .get("http")
            .and_then(|p| p.libhtp.as_ref())
            .map(|l| l.default_config.clone())
            .unwrap_or_default()
    }

    /// Whether parsing of `proto` is on (default: on for the protocols Meerkat parses).
    pub fn enabled(&self, proto: &str) -> AppEnabled {
        self.protocols
            .get(proto)
            .map(|p| p.enabled)
            .unwrap_or(AppEnabled::Yes)
    }
}

/// Every protocol named under `app-layer.protocols` must be one Suricata knows.
pub(crate) fn validate(a: &AppLayer) -> Result<(), ConfigError> {
    let known = keys::suricata_app_protocols();
    for name in a.protocols.keys() {
        if !known.contains(&name.as_str()) {
            return Err(ConfigError::UnknownKeys(vec![format!(
                "app-layer.protocols.{name}"
            )]));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Config, parse_text, resolve_tree, set};

    #[test]
    fn libhtp_limits() {
        let mut tree = parse_text(
            "app-layer:\n  protocols:\n    http:\n      libhtp:\n        default-config:\n          response-body-limit: 1mb\n          personality: IDS\n",
        )
        .unwrap();
        set::apply(
            &mut tree,
            "app-layer.protocols.http.libhtp.default-config.response-body-decompress-layer-limit=3",
        )
        .unwrap();
        let r = resolve_tree(tree).unwrap();
        assert!(
            r.ignored_suricata_keys
                .iter()
                .any(|k| k.contains("personality"))
        );
        let l = r.config.app_layer.libhtp();
        assert_eq!(l.response_body_limit, ByteSize::mib(1));
        assert_eq!(l.request_body_limit, ByteSize::kib(100));
        assert_eq!(l.response_body_decompress_layer_limit, 3);
        assert_eq!(
            Config::default().app_layer.libhtp(),
            LibhtpDefaults::default()
        );
    }
}
