//! LDAP's config section, `app-layer.protocols.ldap` (Suricata's names and defaults):
//! `max-tx` (live transactions per flow) and `max-responses` (responses per
//! transaction). Suricata's `tcp`/`udp` subsections (`enabled`, `detection-ports`)
//! are Suricata keys Meerkat warns about; the section's own `enabled` and
//! `detection-ports` apply to both transports.

use meerkat_config::de;
use serde::Deserialize;

use super::state::{DEFAULT_MAX_RESPONSES, DEFAULT_MAX_TX, LdapState};
use crate::config::Section;
use crate::{Parser, Transport};

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-tx", "max-responses"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LdapSection {
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
    #[serde(default = "default_max_responses", deserialize_with = "de::flex_usize")]
    pub max_responses: usize,
}

fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}
fn default_max_responses() -> usize {
    DEFAULT_MAX_RESPONSES
}

impl Default for LdapSection {
    fn default() -> Self {
        LdapSection {
            max_tx: default_max_tx(),
            max_responses: default_max_responses(),
        }
    }
}

/// The LDAP parser, configured.
#[derive(Debug, Clone, Copy)]
pub struct LdapParser {
    pub max_tx: usize,
    pub max_responses: usize,
}

impl Parser for LdapParser {
    fn new_state(&self, transport: Transport) -> Box<dyn crate::AppState> {
        Box::new(LdapState::new(
            transport == Transport::Udp,
            self.max_tx,
            self.max_responses,
        ))
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: LdapSection = s.typed()?;
    if section.max_tx == 0 {
        return Err("max-tx must be above 0".to_string());
    }
    Ok(Box::new(LdapParser {
        max_tx: section.max_tx,
        max_responses: section.max_responses,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    ldap:\n      tcp:\n        enabled: yes\n      max-tx: 10\n      max-responses: 5\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        assert!(
            r.ignored_suricata_keys
                .contains(&"app-layer.protocols.ldap.tcp".to_string())
                || r.ignored_suricata_keys
                    .iter()
                    .any(|k| k.starts_with("app-layer.protocols.ldap.tcp"))
        );
        let s = Section::of("ldap", r.config.app_layer.protocols.get("ldap"));
        let l = s.typed::<LdapSection>().unwrap();
        assert_eq!((l.max_tx, l.max_responses), (10, 5));
        assert_eq!(
            Section::empty("ldap").typed::<LdapSection>().unwrap(),
            LdapSection::default()
        );
    }
}
