//! HTTP's config section, `app-layer.protocols.http`: the parser's limits under
//! `libhtp.default-config` (Suricata's names and defaults).

use meerkat_config::ByteSize;
use meerkat_config::de;
use serde::Deserialize;

use super::decompress::DecodeLimits;
use super::state::HttpConfig;
use crate::Parser;
use crate::config::Section;
use crate::files::range::{ByteRanges, RangeConfig, Shared};
use std::sync::Arc;

/// The keys of the section that Meerkat models (paths below
/// `app-layer.protocols.http`).
pub const KEYS: &[&str] = &[
    "libhtp.default-config.request-body-limit",
    "libhtp.default-config.response-body-limit",
    "libhtp.default-config.response-body-decompress-layer-limit",
    "libhtp.default-config.compression-bomb-limit",
    "byterange.memcap",
    "byterange.timeout",
];

/// `app-layer.protocols.http.libhtp.default-config`: HTTP parser limits.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LibhtpDefaults {
    /// Bytes of each request body kept for inspection (`http.request_body`,
    /// `file_data` to server); 0 = unlimited. Suricata's default: 100 KiB.
    #[serde(default = "default_body_limit")]
    pub request_body_limit: ByteSize,
    /// Bytes of each (decompressed) response body kept for inspection; 0 = unlimited.
    /// Suricata's default: 100 KiB.
    #[serde(default = "default_body_limit")]
    pub response_body_limit: ByteSize,
    /// Content-Encoding layers decoded (0 disables decompression). Suricata's default: 2.
    #[serde(
        default = "default_decompress_layers",
        deserialize_with = "de::flex_usize"
    )]
    pub response_body_decompress_layer_limit: usize,
    /// Decompressed bytes past which a body with a compression ratio above 2048 is a
    /// compression bomb (decoding stops, `http.compression_bomb`). Suricata's default: 1 MiB.
    #[serde(default = "default_bomb_limit")]
    pub compression_bomb_limit: ByteSize,
}

fn default_body_limit() -> ByteSize {
    ByteSize::kib(100)
}
fn default_decompress_layers() -> usize {
    2
}
fn default_bomb_limit() -> ByteSize {
    ByteSize::mib(1)
}

impl Default for LibhtpDefaults {
    fn default() -> Self {
        LibhtpDefaults {
            request_body_limit: default_body_limit(),
            response_body_limit: default_body_limit(),
            response_body_decompress_layer_limit: default_decompress_layers(),
            compression_bomb_limit: default_bomb_limit(),
        }
    }
}

/// `app-layer.protocols.http.libhtp`.
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Libhtp {
    #[serde(default)]
    pub default_config: LibhtpDefaults,
}

/// `app-layer.protocols.http.byterange`: the reassembly of files sent in parts (`206`
/// responses, see [`crate::files::range`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ByteRange {
    /// Bytes of parts kept aside until their file reaches them (0 = unlimited).
    /// Suricata's default: 100 MiB.
    #[serde(default = "default_byterange_memcap")]
    pub memcap: ByteSize,
    /// Seconds a file being reassembled waits for its next part. Suricata's default: 60.
    #[serde(
        default = "default_byterange_timeout",
        deserialize_with = "de::flex_u64"
    )]
    pub timeout: u64,
}

fn default_byterange_memcap() -> ByteSize {
    ByteSize::mib(100)
}
fn default_byterange_timeout() -> u64 {
    60
}

impl Default for ByteRange {
    fn default() -> Self {
        ByteRange {
            memcap: default_byterange_memcap(),
            timeout: default_byterange_timeout(),
        }
    }
}

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HttpSection {
    #[serde(default)]
    pub libhtp: Libhtp,
    #[serde(default)]
    pub byterange: ByteRange,
}

impl HttpConfig {
    /// The parser settings of `libhtp.default-config`.
    pub fn from_limits(c: &LibhtpDefaults) -> HttpConfig {
        let size = |b: ByteSize| usize::try_from(b.bytes()).unwrap_or(usize::MAX);
        HttpConfig {
            request_body_limit: size(c.request_body_limit),
            response_body_limit: size(c.response_body_limit),
            decode: DecodeLimits {
                layer_limit: c.response_body_decompress_layer_limit,
                bomb_limit: c.compression_bomb_limit.bytes(),
            },
        }
    }
}

/// The HTTP parser, configured, with the byte-range reassembly its flows share.
#[derive(Debug, Clone, Default)]
pub struct HttpParser {
    pub cfg: HttpConfig,
    pub ranges: Option<Shared>,
}

impl Parser for HttpParser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        let mut s = super::HttpState::new(self.cfg);
        if let Some(t) = &self.ranges {
            s.set_ranges(Arc::clone(t));
        }
        Box::new(s)
    }

    fn tick(&self, now_s: u64) {
        if let Some(t) = &self.ranges {
            t.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .tick(now_s);
        }
    }
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section: HttpSection = s.typed()?;
    let b = &section.byterange;
    Ok(Box::new(HttpParser {
        cfg: HttpConfig::from_limits(&section.libhtp.default_config),
        ranges: Some(ByteRanges::shared(RangeConfig {
            memcap: b.memcap.bytes(),
            timeout: b.timeout,
        })),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn libhtp_limits() {
        let mut tree = meerkat_config::parse_text(
            "app-layer:\n  protocols:\n    http:\n      libhtp:\n        default-config:\n          response-body-limit: 1mb\n          personality: IDS\n",
        )
        .unwrap();
        meerkat_config::set::apply(
            &mut tree,
            "app-layer.protocols.http.libhtp.default-config.response-body-decompress-layer-limit=3",
        )
        .unwrap();
        let mut r = meerkat_config::resolve_tree(tree).unwrap();
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys).unwrap();
        assert!(
            r.ignored_suricata_keys
                .iter()
                .any(|k| k.contains("personality"))
        );
        let s = Section::of("http", r.config.app_layer.protocols.get("http"));
        let l = s.typed::<HttpSection>().unwrap().libhtp.default_config;
        assert_eq!(l.response_body_limit, ByteSize::mib(1));
        assert_eq!(l.request_body_limit, ByteSize::kib(100));
        assert_eq!(l.response_body_decompress_layer_limit, 3);
        assert_eq!(
            HttpConfig::from_limits(&LibhtpDefaults::default()),
            HttpConfig::default()
        );
    }
}
