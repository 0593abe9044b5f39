//! Modbus's config section, `app-layer.protocols.modbus` (Suricata's names and
//! defaults): `request-flood`, the live transactions at which a flow is flooded
//! (`modbus.flooded`; 0: no limit), and `stream-depth`, the reassembly depth of a
//! Modbus flow in place of `stream.reassembly.depth` (0, Suricata's default: all of
//! it, since a Modbus connection is kept open for as long as the device runs).

use meerkat_config::{ByteSize, de};
use serde::Deserialize;

use super::state::{DEFAULT_REQUEST_FLOOD, ModbusConfig, ModbusState};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["request-flood", "stream-depth"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ModbusSection {
    #[serde(default = "default_flood", deserialize_with = "de::flex_usize")]
    pub request_flood: usize,
    #[serde(default = "default_stream_depth")]
    pub stream_depth: ByteSize,
}

fn default_stream_depth() -> ByteSize {
    ByteSize(0)
}

fn default_flood() -> usize {
    DEFAULT_REQUEST_FLOOD
}

impl Default for ModbusSection {
    fn default() -> Self {
        ModbusSection {
            request_flood: default_flood(),
            stream_depth: default_stream_depth(),
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
        assert_eq!(crate::config::stream_depth(&super::super::PROTOCOL, &s), Ok(Some(0)));
        let t = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    modbus:\n      stream-depth: 64kb\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(t).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("modbus", r.config.app_layer.protocols.get("modbus"));
        assert_eq!(crate::config::stream_depth(&super::super::PROTOCOL, &s), Ok(Some(64 * 1024)));
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
