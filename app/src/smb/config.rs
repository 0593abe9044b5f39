//! SMB's config section, `app-layer.protocols.smb` (Suricata's names and defaults):
//! `stream-depth`, the reassembly depth of SMB flows (bytes per direction, 0 = no
//! limit). Suricata's default is 0, so an SMB flow is reassembled whole whatever
//! `stream.reassembly.depth` says (a file copied over SMB is all in the stream).

use meerkat_config::ByteSize;
use serde::Deserialize;

use super::state::SmbState;
use crate::config::Section;
use crate::{Parser, Transport};

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["stream-depth"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SmbSection {
    /// Reassembly depth of SMB flows, bytes per direction (0 = no limit, the default).
    #[serde(default)]
    pub stream_depth: Option<ByteSize>,
}

/// The SMB parser, configured.
#[derive(Debug, Clone, Copy)]
pub struct SmbParser {
    pub stream_depth: u64,
}

impl Parser for SmbParser {
    fn new_state(&self, _transport: Transport) -> Box<dyn crate::AppState> {
        Box::new(SmbState::new())
    }

    fn stream_depth(&self) -> Option<u64> {
        Some(self.stream_depth)
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: SmbSection = s.typed()?;
    Ok(Box::new(SmbParser {
        stream_depth: section.stream_depth.map_or(0, |b| b.bytes()),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smb_flows_have_no_depth_unless_the_section_sets_one() {
        assert_eq!(
            build(&Section::empty("smb")).unwrap().stream_depth(),
            Some(0)
        );
        let tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    smb:\n      stream-depth: 2mb\n",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        let s = Section::of("smb", r.config.app_layer.protocols.get("smb"));
        assert_eq!(build(&s).unwrap().stream_depth(), Some(2 * 1024 * 1024));
    }
}
