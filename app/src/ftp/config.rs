//! FTP's config section, `app-layer.protocols.ftp` (Suricata's names and defaults):
//! `memcap` (bytes a flow's transactions keep; Suricata's is for all flows),
//! `max-tx` (live transactions per flow) and `max-line-length` (longer command and
//! reply lines are cut to it).

use meerkat_config::ByteSize;
use meerkat_config::de;
use serde::Deserialize;

use super::state::{DEFAULT_MAX_LINE_LEN, DEFAULT_MAX_TX, DEFAULT_MEMCAP, FtpConfig, FtpState};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["memcap", "max-tx", "max-line-length"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FtpSection {
    /// Bytes, per flow.
    #[serde(default = "default_memcap")]
    pub memcap: ByteSize,
    /// Transactions per flow.
    #[serde(default = "default_max_tx", deserialize_with = "de::flex_usize")]
    pub max_tx: usize,
    /// Bytes of a line, its line feed excluded.
    #[serde(default = "default_max_line_length")]
    pub max_line_length: ByteSize,
}

fn default_memcap() -> ByteSize {
    ByteSize::mib(64)
}
fn default_max_tx() -> usize {
    DEFAULT_MAX_TX
}
fn default_max_line_length() -> ByteSize {
    ByteSize::kib(4)
}

impl Default for FtpSection {
    fn default() -> Self {
        FtpSection {
            memcap: default_memcap(),
            max_tx: default_max_tx(),
            max_line_length: default_max_line_length(),
        }
    }
}

/// The FTP parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct FtpParser {
    pub cfg: FtpConfig,
}

impl Parser for FtpParser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(FtpState::new(self.cfg))
    }
}

fn bytes(b: ByteSize) -> usize {
    usize::try_from(b.bytes()).unwrap_or(usize::MAX)
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: FtpSection = s.typed()?;
    let max_line_len = bytes(section.max_line_length);
    if max_line_len == 0 {
        return Err("max-line-length must be above 0".to_string());
    }
    if section.max_tx == 0 {
        return Err("max-tx must be above 0".to_string());
    }
    let memcap = bytes(section.memcap);
    if memcap == 0 {
        return Err("memcap must be above 0".to_string());
    }
    debug_assert_eq!(
        DEFAULT_MAX_LINE_LEN as u64,
        default_max_line_length().bytes()
    );
    debug_assert_eq!(DEFAULT_MEMCAP as u64, default_memcap().bytes());
    Ok(Box::new(FtpParser {
        cfg: FtpConfig {
            max_line_len,
            max_tx: section.max_tx,
            memcap,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_the_section() {
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    ftp:\n      enabled: yes\n      memcap: 1mb\n      max-tx: 10\n      max-line-length: 512\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("ftp", r.config.app_layer.protocols.get("ftp"));
        let f = s.typed::<FtpSection>().unwrap();
        assert_eq!(f.memcap, ByteSize::mib(1));
        assert_eq!(f.max_tx, 10);
        assert_eq!(f.max_line_length.bytes(), 512);
        assert_eq!(
            Section::empty("ftp").typed::<FtpSection>().unwrap(),
            FtpSection::default()
        );
        let bad = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    ftp:\n      max-line-length: 0\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(bad).unwrap();
        assert!(crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).is_err());
    }
}
