//! NFS's config section, `app-layer.protocols.nfs` (Suricata's names and defaults):
//! `max-tx`, the live transactions per flow (1024).

use meerkat_config::de;
use serde::Deserialize;

use super::state::{DEFAULT_MAX_TX, NfsConfig, NfsState};
use crate::config::Section;
use crate::{Parser, Transport};

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-tx"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct NfsSection {
    /// Live transactions per flow; past it the oldest unfinished one is finished
    /// (`nfs.too_many_transactions`).
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
}

fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}

impl Default for NfsSection {
    fn default() -> Self {
        NfsSection {
            max_tx: default_max_tx(),
        }
    }
}

/// The NFS parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct NfsParser {
    pub cfg: NfsConfig,
}

impl Parser for NfsParser {
    fn new_state(&self, transport: Transport) -> Box<dyn crate::AppState> {
        Box::new(NfsState::new(self.cfg, transport))
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: NfsSection = s.typed()?;
    if section.max_tx == 0 {
        return Err("max-tx must be above 0".to_string());
    }
    Ok(Box::new(NfsParser {
        cfg: NfsConfig {
            max_tx: section.max_tx,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_round_trips() {
        let d: NfsSection = serde_yaml::from_str("{}").unwrap();
        assert_eq!(d, NfsSection::default());
        assert_eq!(d.max_tx, 1024);
        assert!(serde_yaml::from_str::<NfsSection>("max-tx: 5").is_ok());
        assert!(serde_yaml::from_str::<NfsSection>("bogus: 5").is_err());
    }
}
