//! SMTP's config section, `app-layer.protocols.smtp` (Suricata 8's names, defaults and
//! effects, `app-layer-smtp.c` `SMTPConfigure`):
//! - `raw-extraction`: the whole message (every line of its `DATA` as sent, with its
//!   line end) is one file named `rawmsg`, without MIME decoding; Suricata turns it
//!   off when `mime.decode-mime` is on (stock suricata.yaml: decode-mime yes), so it
//!   takes effect only with `decode-mime: no`.
//! - `mime.decode-mime`: the MIME parser at all (off: no `email` object, no `email.*`
//!   buffers, no attachments). `mime.decode-base64`, `mime.decode-quoted-printable`:
//!   decoding of base64 parts (attachments and text searched for URLs) and of
//!   quoted-printable attachments; a part not decoded gives nothing. `extract-urls`,
//!   `extract-urls-schemes` (each scheme not ending with `/` gets `://`; default
//!   `[http]`), `log-url-scheme` (URLs kept with their scheme), `body-md5` (the MD5 of
//!   the message from its body's first line to its end, EVE `email.body_md5` when the
//!   eve-log's `smtp` entry has `md5: [body]`). `mime.header-value-depth` is read and
//!   checked as Suricata does (0 to 2^32-1) and, as in Suricata 8, acts on nothing.
//! - `inspected-tracker.content-limit` and `content-inspect-min-size`: an attachment's
//!   `file.data` is inspected before the file ends only once it holds
//!   `content-inspect-min-size` bytes, or `content-limit` (0: no limit) bytes.
//!   `content-inspect-window` is read and checked; Suricata 8 uses it for HTTP files
//!   only, so it acts on nothing for SMTP.

use std::sync::Arc;

use meerkat_config::ByteSize;
use meerkat_config::de;
use serde::Deserialize;

use super::state::SmtpState;
use crate::Parser;
use crate::config::Section;

/// The keys of the section that Meerkat models (paths below
/// `app-layer.protocols.smtp`).
pub const KEYS: &[&str] = &[
    "raw-extraction",
    "mime.decode-mime",
    "mime.decode-base64",
    "mime.decode-quoted-printable",
    "mime.header-value-depth",
    "mime.extract-urls",
    "mime.extract-urls-schemes",
    "mime.log-url-scheme",
    "mime.body-md5",
    "inspected-tracker.content-limit",
    "inspected-tracker.content-inspect-min-size",
    "inspected-tracker.content-inspect-window",
];

/// Suricata's `FILEDATA_CONTENT_LIMIT`.
pub const DEFAULT_CONTENT_LIMIT: u64 = 100_000;
/// Suricata's `FILEDATA_CONTENT_INSPECT_MIN_SIZE`.
pub const DEFAULT_CONTENT_INSPECT_MIN_SIZE: u64 = 32_768;
/// Suricata's `FILEDATA_CONTENT_INSPECT_WINDOW`.
pub const DEFAULT_CONTENT_INSPECT_WINDOW: u64 = 4096;
/// Most `extract-urls-schemes` entries.
pub const MAX_SCHEMES: usize = 64;
/// Longest scheme (Suricata: 65535 with its `://`).
pub const MAX_SCHEME_LEN: usize = u16::MAX as usize - 3;

/// `app-layer.protocols.smtp.mime`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MimeSection {
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub decode_mime: bool,
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub decode_base64: bool,
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub decode_quoted_printable: bool,
    /// Bytes (Suricata checks it and keeps it, and uses it nowhere).
    #[serde(
        default = "default_header_value_depth",
        deserialize_with = "header_depth"
    )]
    pub header_value_depth: u32,
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub extract_urls: bool,
    /// As written; `None`: `[http]`.
    #[serde(default, deserialize_with = "opt_list")]
    pub extract_urls_schemes: Option<Vec<String>>,
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub log_url_scheme: bool,
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub body_md5: bool,
}

fn yes() -> bool {
    true
}
fn default_header_value_depth() -> u32 {
    2000
}

/// `header-value-depth`: 0 to 2^32-1, as Suricata requires (a number, or a string
/// holding one).
fn header_depth<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    let v = serde_yaml::Value::deserialize(d)?;
    let n = match &v {
        serde_yaml::Value::Number(n) => n.as_i64(),
        serde_yaml::Value::String(s) => s.trim().parse::<i64>().ok(),
        _ => None,
    };
    n.and_then(|n| u32::try_from(n).ok()).ok_or_else(|| {
        serde::de::Error::custom(format!(
            "header-value-depth {v:?} is not a number from 0 to 4294967295"
        ))
    })
}

fn opt_list<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    de::flex_list(d).map(Some)
}

impl Default for MimeSection {
    fn default() -> Self {
        MimeSection {
            decode_mime: true,
            decode_base64: true,
            decode_quoted_printable: true,
            header_value_depth: default_header_value_depth(),
            extract_urls: true,
            extract_urls_schemes: None,
            log_url_scheme: false,
            body_md5: false,
        }
    }
}

/// `app-layer.protocols.smtp.inspected-tracker` (sizes in bytes, at most 2^32-1).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TrackerSection {
    #[serde(default = "default_content_limit")]
    pub content_limit: ByteSize,
    #[serde(default = "default_min_size")]
    pub content_inspect_min_size: ByteSize,
    #[serde(default = "default_window")]
    pub content_inspect_window: ByteSize,
}

fn default_content_limit() -> ByteSize {
    ByteSize(DEFAULT_CONTENT_LIMIT)
}
fn default_min_size() -> ByteSize {
    ByteSize(DEFAULT_CONTENT_INSPECT_MIN_SIZE)
}
fn default_window() -> ByteSize {
    ByteSize(DEFAULT_CONTENT_INSPECT_WINDOW)
}

impl Default for TrackerSection {
    fn default() -> Self {
        TrackerSection {
            content_limit: default_content_limit(),
            content_inspect_min_size: default_min_size(),
            content_inspect_window: default_window(),
        }
    }
}

/// The section (its keys other than `enabled` and `detection-ports`).
#[derive(Debug, Clone, PartialEq, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SmtpSection {
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub raw_extraction: bool,
    #[serde(default)]
    pub mime: MimeSection,
    #[serde(default)]
    pub inspected_tracker: TrackerSection,
}

/// What the MIME parser does (the `mime` keys).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MimeConfig {
    pub decode_base64: bool,
    pub decode_qp: bool,
    pub extract_urls: bool,
    /// The schemes looked for, each ending with its `://` (or the `/` it was given
    /// with), in the config's order.
    pub schemes: Vec<Vec<u8>>,
    pub log_url_scheme: bool,
    pub body_md5: bool,
}

impl Default for MimeConfig {
    fn default() -> Self {
        MimeConfig {
            decode_base64: true,
            decode_qp: true,
            extract_urls: true,
            schemes: vec![b"http://".to_vec()],
            log_url_scheme: false,
            body_md5: false,
        }
    }
}

/// The SMTP parser's settings, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmtpConfig {
    /// The message is parsed as MIME.
    pub decode_mime: bool,
    /// The message is one file, `rawmsg` (only without `decode_mime`).
    pub raw_extraction: bool,
    pub mime: MimeConfig,
    /// Bytes of an attachment past which its `file.data` is inspected (0: none).
    pub content_limit: u64,
    /// Bytes of an attachment past which its `file.data` is inspected.
    pub content_inspect_min_size: u64,
    /// Checked, unused (see the module docs).
    pub content_inspect_window: u64,
}

impl Default for SmtpConfig {
    fn default() -> Self {
        SmtpConfig {
            decode_mime: true,
            raw_extraction: false,
            mime: MimeConfig::default(),
            content_limit: DEFAULT_CONTENT_LIMIT,
            content_inspect_min_size: DEFAULT_CONTENT_INSPECT_MIN_SIZE,
            content_inspect_window: DEFAULT_CONTENT_INSPECT_WINDOW,
        }
    }
}

/// A scheme as Suricata keeps it: `://` added unless it ends with `/`.
pub fn scheme(s: &str) -> Result<Vec<u8>, String> {
    if s.is_empty() {
        return Err("mime.extract-urls-schemes: an empty scheme".to_string());
    }
    if s.len() > MAX_SCHEME_LEN {
        return Err(format!(
            "mime.extract-urls-schemes: a scheme longer than {MAX_SCHEME_LEN} bytes"
        ));
    }
    let mut v = s.as_bytes().to_vec();
    if !s.ends_with('/') {
        v.extend_from_slice(b"://");
    }
    Ok(v)
}

impl SmtpConfig {
    /// The checked settings of a section.
    pub fn from_section(s: &SmtpSection) -> Result<SmtpConfig, String> {
        let m = &s.mime;
        let schemes = match &m.extract_urls_schemes {
            None => vec![b"http://".to_vec()],
            Some(list) => {
                if list.len() > MAX_SCHEMES {
                    return Err(format!(
                        "mime.extract-urls-schemes: more than {MAX_SCHEMES} schemes"
                    ));
                }
                list.iter().map(|s| scheme(s)).collect::<Result<_, _>>()?
            }
        };
        let size = |name: &str, b: ByteSize| {
            if b.bytes() > u64::from(u32::MAX) {
                Err(format!(
                    "inspected-tracker.{name} {b} is above 4294967295 bytes"
                ))
            } else {
                Ok(b.bytes())
            }
        };
        let t = &s.inspected_tracker;
        Ok(SmtpConfig {
            decode_mime: m.decode_mime,
            // Suricata: "decode-mime" and "raw-extraction" options can't be enabled at
            // the same time, disabling raw extraction.
            raw_extraction: s.raw_extraction && !m.decode_mime,
            mime: MimeConfig {
                decode_base64: m.decode_base64,
                decode_qp: m.decode_quoted_printable,
                extract_urls: m.extract_urls,
                schemes,
                log_url_scheme: m.log_url_scheme,
                body_md5: m.body_md5,
            },
            content_limit: size("content-limit", t.content_limit)?,
            content_inspect_min_size: size("content-inspect-min-size", t.content_inspect_min_size)?,
            content_inspect_window: size("content-inspect-window", t.content_inspect_window)?,
        })
    }
}

/// The SMTP parser, configured.
#[derive(Debug, Clone, Default)]
pub struct SmtpParser {
    pub cfg: Arc<SmtpConfig>,
}

impl Parser for SmtpParser {
    fn new_state(&self, _transport: crate::Transport) -> Box<dyn crate::AppState> {
        Box::new(SmtpState::with_config(self.cfg.clone()))
    }
}

/// The yes/no keys, checked before the section is typed so that a bad value's error
/// names its key.
const BOOL_KEYS: &[&str] = &[
    "raw-extraction",
    "mime.decode-mime",
    "mime.decode-base64",
    "mime.decode-quoted-printable",
    "mime.extract-urls",
    "mime.log-url-scheme",
    "mime.body-md5",
];

/// The typed section, a bad yes/no value named with its key.
pub fn typed(s: &Section<'_>) -> Result<SmtpSection, String> {
    if let Some(settings) = s.settings {
        for key in BOOL_KEYS {
            let (head, leaf) = match key.split_once('.') {
                Some((h, l)) => (h, Some(l)),
                None => (*key, None),
            };
            let v = match (settings.get(head), leaf) {
                (Some(v), None) => Some(v),
                (Some(serde_yaml::Value::Mapping(m)), Some(l)) => m.get(l),
                _ => None,
            };
            let ok = match v {
                None | Some(serde_yaml::Value::Bool(_)) => true,
                Some(serde_yaml::Value::String(t)) => de::parse_bool(t).is_some(),
                Some(serde_yaml::Value::Number(n)) => matches!(n.as_u64(), Some(0 | 1)),
                Some(_) => false,
            };
            if !ok {
                return Err(format!("{key}: {v:?} is not yes or no"));
            }
        }
    }
    s.typed()
}

/// [`crate::descriptor::Build::Configured`]'s `build`.
pub fn build(s: &Section<'_>) -> Result<Box<dyn Parser>, String> {
    let section = typed(s)?;
    if section.raw_extraction && section.mime.decode_mime {
        tracing::warn!(
            "app-layer.protocols.smtp: \"decode-mime\" and \"raw-extraction\" can't be on \
             at the same time; raw extraction is off (as in Suricata)"
        );
    }
    Ok(Box::new(SmtpParser {
        cfg: Arc::new(SmtpConfig::from_section(&section)?),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(yaml: &str) -> Result<SmtpConfig, String> {
        let tree = meerkat_config::parse_text(yaml).map_err(|e| e.to_string())?;
        let mut r = meerkat_config::resolve_tree(tree).map_err(|e| e.to_string())?;
        crate::config::check(&mut r.config, &mut r.ignored_suricata_keys)
            .map_err(|e| e.to_string())?;
        assert!(
            !r.ignored_suricata_keys.iter().any(|k| k.contains(".smtp.")),
            "{:?}",
            r.ignored_suricata_keys
        );
        let s = Section::of("smtp", r.config.app_layer.protocols.get("smtp"));
        SmtpConfig::from_section(&typed(&s)?)
    }

    #[test]
    fn defaults_are_suricatas() {
        assert_eq!(
            SmtpConfig::from_section(&SmtpSection::default()).unwrap(),
            SmtpConfig::default()
        );
        // The stock suricata.yaml section.
        let c = section(concat!(
            "app-layer:\n  protocols:\n    smtp:\n      enabled: yes\n      raw-extraction: no\n",
            "      mime:\n        decode-mime: yes\n        decode-base64: yes\n",
            "        decode-quoted-printable: yes\n        header-value-depth: 2000\n",
            "        extract-urls: yes\n        body-md5: no\n",
            "      inspected-tracker:\n        content-limit: 100000\n",
            "        content-inspect-min-size: 32768\n        content-inspect-window: 4096\n",
        ))
        .unwrap();
        assert_eq!(c, SmtpConfig::default());
    }

    #[test]
    fn keys_take_effect_and_bad_values_are_errors() {
        let c = section(concat!(
            "app-layer:\n  protocols:\n    smtp:\n      raw-extraction: yes\n",
            "      mime:\n        decode-mime: no\n        extract-urls-schemes: [http, HTTPS, ftp://, 'x:/']\n",
            "        log-url-scheme: yes\n        body-md5: yes\n        decode-base64: no\n",
            "      inspected-tracker:\n        content-limit: 1kb\n        content-inspect-min-size: 0\n",
        ))
        .unwrap();
        assert!(c.raw_extraction && !c.decode_mime && !c.mime.decode_base64);
        assert_eq!(
            c.mime.schemes,
            [&b"http://"[..], b"HTTPS://", b"ftp://", b"x:/"]
        );
        assert!(c.mime.log_url_scheme && c.mime.body_md5);
        assert_eq!((c.content_limit, c.content_inspect_min_size), (1024, 0));
        // Raw extraction needs decode-mime off, as in Suricata.
        let c =
            section("app-layer:\n  protocols:\n    smtp:\n      raw-extraction: yes\n").unwrap();
        assert!(!c.raw_extraction && c.decode_mime);
        for (bad, what) in [
            ("mime:\n        body-md5: maybe", "body-md5"),
            (
                "mime:\n        header-value-depth: -1",
                "header-value-depth",
            ),
            (
                "mime:\n        header-value-depth: 4294967296",
                "header-value-depth",
            ),
            ("mime:\n        extract-urls-schemes: ['']", "empty scheme"),
            (
                "inspected-tracker:\n        content-limit: 5gb",
                "content-limit",
            ),
            ("mime:\n        decode-mimes: no", "decode-mimes"),
        ] {
            let e = section(&format!(
                "app-layer:\n  protocols:\n    smtp:\n      {bad}\n"
            ))
            .unwrap_err();
            assert!(e.contains(what), "{bad}: {e}");
        }
    }
}
