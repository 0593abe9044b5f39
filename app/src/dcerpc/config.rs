//! DCE/RPC's config section, `app-layer.protocols.dcerpc` (Suricata's names and
//! defaults): `max-tx` (live transactions per flow) and `max-stub-size` (stub data kept
//! per call and direction).

use meerkat_config::{ByteSize, de};
use serde::Deserialize;

use super::state::{DEFAULT_MAX_STUB, DEFAULT_MAX_TX, DcerpcConfig, DcerpcState};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-tx", "max-stub-size"];

/// Largest `max-stub-size` accepted.
pub const MAX_STUB_LIMIT: u64 = 1 << 30;

#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DcerpcSection {
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
    #[serde(default = "default_max_stub")]
    pub max_stub_size: ByteSize,
}

fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}
fn default_max_stub() -> ByteSize {
    ByteSize(DEFAULT_MAX_STUB as u64)
}

impl Default for DcerpcSection {
    fn default() -> Self {
        DcerpcSection {
            max_tx: DEFAULT_MAX_TX,
            max_stub_size: default_max_stub(),
        }
    }
}

/// The DCE/RPC parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct DcerpcParser {
    pub cfg: DcerpcConfig,
}

impl Parser for DcerpcParser {
    fn new_state(&self, transport: crate::Transport) -> Box<dyn crate::AppState> {
        match transport {
            crate::Transport::Tcp => Box::new(DcerpcState::new(self.cfg)),
            crate::Transport::Udp => Box::new(super::udp::DcerpcUdpState::new(self.cfg)),
        }
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: DcerpcSection = s.typed()?;
    if section.max_tx == 0 {
        return Err("max-tx must be at least 1".into());
    }
    let stub = section.max_stub_size.bytes();
    if stub > MAX_STUB_LIMIT {
        return Err(format!(
            "max-stub-size must be at most {MAX_STUB_LIMIT} bytes"
        ));
    }
    Ok(Box::new(DcerpcParser {
        cfg: DcerpcConfig {
            max_tx: section.max_tx,
            max_stub: stub as usize,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    dcerpc:\n      enabled: yes\n      max-tx: 8\n      max-stub-size: 64kb\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("dcerpc", r.config.app_layer.protocols.get("dcerpc"));
        let d = s.typed::<DcerpcSection>().unwrap();
        assert_eq!((d.max_tx, d.max_stub_size.bytes()), (8, 65536));
        let d = Section::empty("dcerpc").typed::<DcerpcSection>().unwrap();
        assert_eq!((d.max_tx, d.max_stub_size.bytes()), (1024, 1 << 20));
    }
}
