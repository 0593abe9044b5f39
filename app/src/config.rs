//! Each protocol's config section, `app-layer.protocols.<name>`.
//!
//! The config crate types the keys every protocol has (`enabled`, `detection-ports`)
//! and keeps the rest of a section as written; the protocol owns it: its descriptor
//! lists the keys it models ([`crate::descriptor::Build::Configured`]) and types them.
//! [`resolve`] is `meerkat_config::resolve` with the sections checked the way the
//! config crate checks its own keys: a key the protocol models is kept, a key Suricata
//! has that Meerkat does not model is removed with a warning naming it, any other key
//! is an error naming it; then every protocol is built once, so a bad value is an
//! error at start, naming the section.

use std::collections::BTreeMap;
use std::path::Path;

use meerkat_config::{Config, ConfigError, Resolved};
use serde::de::DeserializeOwned;
use serde_yaml::Value;

use crate::descriptor::Build;
use crate::{PROTOCOLS, registry};

/// A protocol's settings as written under `app-layer.protocols.<name>` (its own keys
/// only).
#[derive(Debug, Clone, Copy)]
pub struct Section<'a> {
    pub name: &'a str,
    pub settings: Option<&'a BTreeMap<String, Value>>,
}

impl<'a> Section<'a> {
    /// A protocol's section of `config`, if written.
    pub fn of(name: &'a str, section: Option<&'a meerkat_config::AppProtocol>) -> Section<'a> {
        Section {
            name,
            settings: section.map(|s| &s.settings),
        }
    }

    /// No settings: every default.
    pub fn empty(name: &'a str) -> Section<'a> {
        Section {
            name,
            settings: None,
        }
    }

    /// The settings as the protocol's typed section (a serde struct with
    /// `deny_unknown_fields`, whose defaults are the protocol's).
    pub fn typed<T: DeserializeOwned + Default>(&self) -> Result<T, String> {
        match self.settings {
            None => Ok(T::default()),
            Some(m) if m.is_empty() => Ok(T::default()),
            Some(m) => {
                let map: serde_yaml::Mapping = m
                    .iter()
                    .map(|(k, v)| (Value::String(k.clone()), v.clone()))
                    .collect();
                serde_yaml::from_value(Value::Mapping(map)).map_err(|e| e.to_string())
            }
        }
    }
}

/// The error of a bad value in a protocol's section.
pub(crate) fn invalid(name: &str, e: &str) -> ConfigError {
    ConfigError::Invalid(format!("app-layer.protocols.{name}: {e}"))
}

/// `meerkat_config::resolve`, then every protocol's section checked (see the module
/// docs). What the roles and `meerkat config check` load configs with.
pub fn resolve(file: Option<&Path>, overrides: &[String]) -> Result<Resolved, ConfigError> {
    register_event_types();
    let mut r = meerkat_config::resolve(file, overrides)?;
    check(&mut r.config, &mut r.ignored_suricata_keys)?;
    Ok(r)
}

/// Tells the config crate the protocols' EVE types that every eve-log logs by default
/// (idempotent).
pub fn register_event_types() {
    meerkat_config::outputs::register_app_event_types(
        PROTOCOLS
            .iter()
            .filter_map(|d| d.eve_types_name())
            .collect(),
    );
}

/// Checks every `app-layer.protocols.<name>` section of `config`: Suricata-only keys
/// are removed and added to `ignored`, unknown keys and bad values are errors.
pub fn check(config: &mut Config, ignored: &mut Vec<String>) -> Result<(), ConfigError> {
    let mut unknown = Vec::new();
    let suricata = meerkat_config::keys::suricata_app_protocols();
    for (name, section) in &mut config.app_layer.protocols {
        if !PROTOCOLS.iter().any(|d| d.name == name.as_str()) && !suricata.contains(&name.as_str())
        {
            unknown.push(format!("app-layer.protocols.{name}"));
            continue;
        }
        let modeled: &[&str] = match PROTOCOLS.iter().find(|d| d.name == name.as_str()) {
            Some(d) => match d.build {
                Build::Configured { keys, .. } => keys,
                Build::Plain(_) => &[],
            },
            // A protocol Meerkat does not parse: nothing of it is modelled.
            None => &[],
        };
        let mut path = vec![
            "app-layer".to_string(),
            "protocols".to_string(),
            name.clone(),
        ];
        prune(
            &mut section.settings,
            &mut path,
            modeled,
            ignored,
            &mut unknown,
        );
    }
    if !unknown.is_empty() {
        return Err(ConfigError::UnknownKeys(unknown));
    }
    registry::Registry::from_config(config).map(|_| ())
}

/// Whether the key `rel` (below the section) is modelled: a key of `modeled`, or a
/// section holding some (`Some(false)` = a section, `Some(true)` = a leaf).
fn modeled_as(rel: &[String], modeled: &[&str]) -> Option<bool> {
    let mut section = false;
    for m in modeled {
        let segs: Vec<&str> = m.split('.').collect();
        if segs.len() >= rel.len() && segs.iter().zip(rel).all(|(a, b)| *a == b.as_str()) {
            if segs.len() == rel.len() {
                return Some(true);
            }
            section = true;
        }
    }
    section.then_some(false)
}

fn prune(
    map: &mut BTreeMap<String, Value>,
    path: &mut Vec<String>,
    modeled: &[&str],
    ignored: &mut Vec<String>,
    unknown: &mut Vec<String>,
) {
    let keys: Vec<String> = map.keys().cloned().collect();
    for k in keys {
        path.push(k.clone());
        let rel = &path[3..];
        match modeled_as(rel, modeled) {
            Some(true) => {}
            Some(false) => {
                if let Some(Value::Mapping(m)) = map.get_mut(&k) {
                    let mut sub: BTreeMap<String, Value> =
                        m.iter().map(|(k, v)| (key_text(k), v.clone())).collect();
                    prune(&mut sub, path, modeled, ignored, unknown);
                    *m = sub
                        .into_iter()
                        .map(|(k, v)| (Value::String(k), v))
                        .collect();
                }
            }
            None => {
                let segs: Vec<&str> = path.iter().map(String::as_str).collect();
                if meerkat_config::keys::is_suricata_key(&segs) {
                    ignored.push(path.join("."));
                } else {
                    unknown.push(path.join("."));
                }
                map.remove(&k);
            }
        }
        path.pop();
    }
}

fn key_text(k: &Value) -> String {
    match k {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => "?".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check_text(yaml: &str) -> Result<(Config, Vec<String>), ConfigError> {
        let tree = meerkat_config::parse_text(yaml).map_err(ConfigError::Invalid)?;
        let mut r = meerkat_config::resolve_tree(tree)?;
        check(&mut r.config, &mut r.ignored_suricata_keys)?;
        Ok((r.config, r.ignored_suricata_keys))
    }

    #[test]
    fn suricata_only_keys_are_ignored_and_others_refused() {
        let (c, ignored) = check_text(
            "app-layer:\n  protocols:\n    http:\n      libhtp:\n        default-config:\n          personality: IDS\n          response-body-limit: 1mb\n    dns:\n      tcp:\n        enabled: yes\n    smb:\n      max-tx: 10\n",
        )
        .unwrap();
        for k in [
            "app-layer.protocols.http.libhtp.default-config.personality",
            "app-layer.protocols.dns.tcp",
            "app-layer.protocols.smb.max-tx",
        ] {
            assert!(ignored.iter().any(|i| i == k), "{k} in {ignored:?}");
        }
        // What is kept is what the protocol models, and the roles get it as is.
        let http = &c.app_layer.protocols["http"].settings;
        let text = serde_yaml::to_string(http).unwrap();
        assert!(text.contains("response-body-limit"), "{text}");
        assert!(!text.contains("personality"), "{text}");
        let e =
            check_text("app-layer:\n  protocols:\n    http:\n      libhtp:\n        bogus: 1\n")
                .unwrap_err();
        assert!(
            e.to_string()
                .contains("app-layer.protocols.http.libhtp.bogus"),
            "{e}"
        );
        let e =
            check_text("app-layer:\n  protocols:\n    htttp:\n      enabled: yes\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "unknown config key: app-layer.protocols.htttp"
        );
        // Meerkat's protocols that Suricata does not have are configurable too.
        let (c, _) =
            check_text("app-layer:\n  protocols:\n    llmnr:\n      enabled: no\n").unwrap();
        assert_eq!(
            c.app_layer.enabled("llmnr", true),
            meerkat_config::AppEnabled::No
        );
        let e = check_text("app-layer:\n  protocols:\n    tls:\n      ja3-fingerprintz: yes\n")
            .unwrap_err();
        assert!(e.to_string().contains("ja3-fingerprintz"), "{e}");
    }

    #[test]
    fn bad_values_name_the_section() {
        let e = check_text(
            "app-layer:\n  protocols:\n    http:\n      libhtp:\n        default-config:\n          request-body-limit: lots\n",
        )
        .unwrap_err();
        assert!(e.to_string().contains("app-layer.protocols.http"), "{e}");
    }
}
