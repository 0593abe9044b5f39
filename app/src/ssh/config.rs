//! SSH's config section, `app-layer.protocols.ssh` (Suricata's names and defaults):
//! `hassh`, whether each side's HASSH is computed for the EVE `ssh` record (off by
//! default, as in Suricata 8; a rule using a hassh keyword turns it on, as
//! Suricata's keywords do). With it on, the record waits for both sides' key
//! exchange (or the flow's end) and carries `hassh`; without it, it is written once
//! both identification lines are in.

use meerkat_config::de;
use serde::Deserialize;

use super::state::SshState;
use crate::config::Section;
use crate::{Parser, Transport};

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["hassh"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SshSection {
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub hassh: bool,
}

/// The SSH parser, configured.
#[derive(Debug, Clone, Copy)]
pub struct SshParser {
    pub hassh: bool,
}

impl Parser for SshParser {
    fn new_state(&self, _transport: Transport) -> Box<dyn crate::AppState> {
        let mut s = SshState::new();
        s.log_hassh(self.hassh);
        Box::new(s)
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: SshSection = s.typed()?;
    Ok(Box::new(SshParser {
        hassh: section.hassh,
    }))
}
