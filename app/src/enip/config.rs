//! ENIP's config section, `app-layer.protocols.enip` (Suricata's names and defaults):
//! `max-tx`, the live transactions at which a flow is flooded
//! (`enip.too_many_transactions`).

use meerkat_config::de;
use serde::Deserialize;

use super::state::{DEFAULT_MAX_TX, EnipConfig, EnipState};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-tx"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EnipSection {
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
}

fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}

impl Default for EnipSection {
    fn default() -> Self {
        EnipSection {
            max_tx: default_max_tx(),
        }
    }
}

/// The ENIP parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct EnipParser {
    pub cfg: EnipConfig,
}

impl Parser for EnipParser {
    fn new_state(&self, transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(EnipState::new(self.cfg, transport))
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: EnipSection = s.typed()?;
    if section.max_tx == 0 {
        return Err("max-tx must be above 0".to_string());
    }
    Ok(Box::new(EnipParser {
        cfg: EnipConfig {
            max_tx: section.max_tx,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_tx_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    enip:\n      enabled: yes\n      max-tx: 16\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("enip", r.config.app_layer.protocols.get("enip"));
        assert_eq!(s.typed::<EnipSection>().unwrap().max_tx, 16);
        assert_eq!(EnipSection::default().max_tx, 1024);
        let bad = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    enip:\n      enabled: yes\n      max-tx: 0\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(bad).unwrap();
        assert!(crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).is_err());
    }
}
