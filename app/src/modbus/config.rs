//! Modbus's config section, `app-layer.protocols.modbus` (Suricata's names and
//! defaults): `request-flood`, the live transactions at which a flow is flooded
//! (`modbus.flooded`; 0: no limit). Suricata's `stream-depth` is accepted and ignored:
//! Suricata 8.0.6 ignores it too (measured with `../shared/tools/suricata-ref` on
//! `tests/data/ics.pcap`: with `stream.reassembly.depth: 64`, `modbus.stream-depth`
//! of 32, 200 or 1mb leaves the alerts of the global depth; without it, 32 cuts
//! nothing), and the flow's stream depth applies.

use meerkat_config::de;
use serde::Deserialize;

use super::state::{DEFAULT_REQUEST_FLOOD, ModbusConfig, ModbusState};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["request-flood"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ModbusSection {
    #[serde(default = "default_flood", deserialize_with = "de::flex_usize")]
    pub request_flood: usize,
}

fn default_flood() -> usize {
    DEFAULT_REQUEST_FLOOD
}

impl Default for ModbusSection {
    fn default() -> Self {
        ModbusSection {
            request_flood: default_flood(),
        }
    }
}

/// The Modbus parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct ModbusParser {
    pub cfg: ModbusConfig,
}

impl Parser for ModbusParser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(ModbusState::new(self.cfg))
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: ModbusSection = s.typed()?;
    Ok(Box::new(ModbusParser {
        cfg: ModbusConfig {
            request_flood: section.request_flood,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flood_limit_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    modbus:\n      enabled: yes\n      request-flood: 20\n      stream-depth: 0\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("modbus", r.config.app_layer.protocols.get("modbus"));
        assert_eq!(s.typed::<ModbusSection>().unwrap().request_flood, 20);
        assert_eq!(
            Section::empty("modbus")
                .typed::<ModbusSection>()
                .unwrap()
                .request_flood,
            500
        );
        let bad = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    modbus:\n      enabled: yes\n      request-flood: many\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(bad).unwrap();
        assert!(crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).is_err());
    }
}
