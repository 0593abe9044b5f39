//! DNP3's config section, `app-layer.protocols.dnp3` (Suricata's names and defaults):
//! `max-tx` (requests without a response before `dnp3.flooded`), `max-points` and
//! `max-objects` (decoded per message).

use meerkat_config::de;
use serde::Deserialize;

use super::state::{
    DEFAULT_MAX_OBJECTS, DEFAULT_MAX_POINTS, DEFAULT_MAX_TX, Dnp3Config, Dnp3State,
};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-tx", "max-points", "max-objects"];

/// Most points or objects per message a config may ask for (Suricata's values are
/// 32-bit).
pub const MAX_LIMIT: usize = u32::MAX as usize;

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Dnp3Section {
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
    #[serde(default = "default_max_points", deserialize_with = "de::flex_usize")]
    pub max_points: usize,
    #[serde(default = "default_max_objects", deserialize_with = "de::flex_usize")]
    pub max_objects: usize,
}

fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}
fn default_max_points() -> usize {
    DEFAULT_MAX_POINTS
}
fn default_max_objects() -> usize {
    DEFAULT_MAX_OBJECTS
}

impl Default for Dnp3Section {
    fn default() -> Self {
        Dnp3Section {
            max_tx: DEFAULT_MAX_TX,
            max_points: DEFAULT_MAX_POINTS,
            max_objects: DEFAULT_MAX_OBJECTS,
        }
    }
}

/// The DNP3 parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Dnp3Parser {
    pub cfg: Dnp3Config,
}

impl Parser for Dnp3Parser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(Dnp3State::new(self.cfg))
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: Dnp3Section = s.typed()?;
    for (key, v) in [
        ("max-tx", section.max_tx),
        ("max-points", section.max_points),
        ("max-objects", section.max_objects),
    ] {
        if v == 0 || v > MAX_LIMIT {
            return Err(format!("{key} must be between 1 and {MAX_LIMIT}, not {v}"));
        }
    }
    Ok(Box::new(Dnp3Parser {
        cfg: Dnp3Config {
            max_tx: section.max_tx,
            max_points: section.max_points,
            max_objects: section.max_objects,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    dnp3:\n      enabled: yes\n      max-tx: 4\n      max-points: 100\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("dnp3", r.config.app_layer.protocols.get("dnp3"));
        let d = s.typed::<Dnp3Section>().unwrap();
        assert_eq!((d.max_tx, d.max_points, d.max_objects), (4, 100, 2048));
        assert_eq!(
            Section::empty("dnp3").typed::<Dnp3Section>().unwrap(),
            Dnp3Section::default()
        );
        let bad = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    dnp3:\n      enabled: yes\n      max-points: 0\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(bad).unwrap();
        assert!(crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).is_err());
    }
}
