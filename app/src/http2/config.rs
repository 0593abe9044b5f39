//! HTTP/2's config section, `app-layer.protocols.http2` (Suricata's names and
//! defaults): `max-streams` (live transactions per flow), `max-table-size` (the HPACK
//! dynamic table) and `max-reassembly-size` (a header block across CONTINUATION frames).

use meerkat_config::de;
use serde::Deserialize;

use super::state::{
    DEFAULT_MAX_REASSEMBLY, DEFAULT_MAX_STREAMS, DEFAULT_MAX_TABLE_SIZE, Http2Config, Http2State,
};
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models.
pub const KEYS: &[&str] = &["max-streams", "max-table-size", "max-reassembly-size"];

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Http2Section {
    #[serde(default = "default_max_streams", deserialize_with = "de::flex_usize")]
    pub max_streams: usize,
    #[serde(default = "default_max_table", deserialize_with = "de::flex_usize")]
    pub max_table_size: usize,
    #[serde(
        default = "default_max_reassembly",
        deserialize_with = "de::flex_usize"
    )]
    pub max_reassembly_size: usize,
}

fn default_max_streams() -> usize {
    DEFAULT_MAX_STREAMS
}
fn default_max_table() -> usize {
    DEFAULT_MAX_TABLE_SIZE
}
fn default_max_reassembly() -> usize {
    DEFAULT_MAX_REASSEMBLY
}

impl Default for Http2Section {
    fn default() -> Self {
        Http2Section {
            max_streams: default_max_streams(),
            max_table_size: default_max_table(),
            max_reassembly_size: default_max_reassembly(),
        }
    }
}

/// The HTTP/2 parser, configured.
#[derive(Debug, Clone, Copy, Default)]
pub struct Http2Parser {
    pub cfg: Http2Config,
}

impl Parser for Http2Parser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(Http2State::new(self.cfg))
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: Http2Section = s.typed()?;
    if section.max_streams == 0 {
        return Err("max-streams must be above 0".to_string());
    }
    Ok(Box::new(Http2Parser {
        cfg: Http2Config {
            max_streams: section.max_streams,
            max_reassembly: section.max_reassembly_size.clamp(1, 16 << 20),
            max_table_size: section.max_table_size.min(super::hpack::MAX_TABLE_SIZE),
        },
    }))
}
