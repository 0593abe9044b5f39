//! PostgreSQL's config section, `app-layer.protocols.pgsql` (Suricata's names and
//! defaults): `max-tx`, the live transactions per flow past which the oldest open one
//! is closed (`pgsql.too_many_transactions`), and `stream-depth`, the reassembly depth
//! of PostgreSQL flows (bytes per direction, 0 = no limit, as Suricata's stock config
//! sets it; unset, `stream.reassembly.depth` applies). The parser is off unless
//! `enabled` says otherwise, as in Suricata 8.

use meerkat_config::{ByteSize, de};
use serde::Deserialize;

use super::state::{DEFAULT_MAX_TX, PgsqlState};
use crate::config::Section;
use crate::{Parser, Transport};

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-tx", "stream-depth"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PgsqlSection {
    /// Live transactions per flow (Suricata's default 1024).
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
    /// Reassembly depth of PostgreSQL flows, bytes per direction (0 = no limit).
    #[serde(default)]
    pub stream_depth: Option<ByteSize>,
}

fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}

impl Default for PgsqlSection {
    fn default() -> Self {
        PgsqlSection {
            max_tx: default_max_tx(),
            stream_depth: None,
        }
    }
}

/// The PostgreSQL parser, configured.
#[derive(Debug, Clone, Copy)]
pub struct PgsqlParser {
    pub max_tx: usize,
    pub stream_depth: Option<u64>,
}

impl Parser for PgsqlParser {
    fn new_state(&self, _transport: Transport) -> Box<dyn crate::AppState> {
        Box::new(PgsqlState::new(self.max_tx))
    }

    fn stream_depth(&self) -> Option<u64> {
        self.stream_depth
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: PgsqlSection = s.typed()?;
    Ok(Box::new(PgsqlParser {
        max_tx: section.max_tx,
        stream_depth: section.stream_depth.map(|b| b.bytes()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_tx_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    pgsql:\n      enabled: yes\n      max-tx: 10\n      stream-depth: 2mb\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("pgsql", r.config.app_layer.protocols.get("pgsql"));
        let t = s.typed::<PgsqlSection>().unwrap();
        assert_eq!(t.max_tx, 10);
        assert_eq!(t.stream_depth.map(|b| b.bytes()), Some(2 * 1024 * 1024));
        let p = build(&s).unwrap();
        assert_eq!(p.stream_depth(), Some(2 * 1024 * 1024));
        assert_eq!(
            Section::empty("pgsql").typed::<PgsqlSection>().unwrap(),
            PgsqlSection::default()
        );
    }
}
