//! MQTT's config section, `app-layer.protocols.mqtt` (Suricata's names and defaults):
//! `max-msg-length` (packets longer than it are skipped and logged as truncated) and
//! `max-tx` (live transactions per flow), `max-messages` (packets per transaction).

use meerkat_config::ByteSize;
use meerkat_config::de;
use serde::Deserialize;

use super::state::{
    DEFAULT_MAX_MESSAGES, DEFAULT_MAX_MSG_LEN, DEFAULT_MAX_TX, MqttConfig, MqttState,
};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-msg-length", "max-tx", "max-messages"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MqttSection {
    #[serde(default = "default_max_msg_len")]
    pub max_msg_length: ByteSize,
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
    #[serde(default = "default_max_messages", deserialize_with = "de::flex_usize")]
    pub max_messages: usize,
}

fn default_max_msg_len() -> ByteSize {
    ByteSize::mib(1)
}
fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}
fn default_max_messages() -> usize {
    DEFAULT_MAX_MESSAGES
}

impl Default for MqttSection {
    fn default() -> Self {
        MqttSection {
            max_msg_length: default_max_msg_len(),
            max_tx: default_max_tx(),
            max_messages: default_max_messages(),
        }
    }
}

/// The MQTT parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct MqttParser {
    pub cfg: MqttConfig,
}

impl Parser for MqttParser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(MqttState::new(self.cfg))
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: MqttSection = s.typed()?;
    let max_msg_len = usize::try_from(section.max_msg_length.bytes()).unwrap_or(usize::MAX);
    if max_msg_len == 0 {
        return Err("max-msg-length must be above 0".to_string());
    }
    if section.max_tx == 0 {
        return Err("max-tx must be above 0".to_string());
    }
    if section.max_messages == 0 {
        return Err("max-messages must be above 0".to_string());
    }
    debug_assert_eq!(DEFAULT_MAX_MSG_LEN as u64, default_max_msg_len().bytes());
    Ok(Box::new(MqttParser {
        cfg: MqttConfig {
            max_msg_len,
            max_tx: section.max_tx,
            max_messages: section.max_messages,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    mqtt:\n      enabled: yes\n      max-msg-length: 64kb\n      max-tx: 10\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("mqtt", r.config.app_layer.protocols.get("mqtt"));
        let m = s.typed::<MqttSection>().unwrap();
        assert_eq!(m.max_msg_length, ByteSize::kib(64));
        assert_eq!(m.max_tx, 10);
        assert_eq!(
            Section::empty("mqtt").typed::<MqttSection>().unwrap(),
            MqttSection::default()
        );
        let bad = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    mqtt:\n      max-msg-length: 0\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(bad).unwrap();
        assert!(crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).is_err());
    }
}
