//! `requires:` — a rule's requirements on the engine (Suricata 7.0.3+): `version` with
//! comparisons (`>= 7.0.3 < 8 | >= 9`: any `|`-separated range, every comparison in
//! it), `feature <name>` and `keyword <name>`. A rule whose requirements are not met is
//! skipped silently (Suricata counts and logs them once, as "skipped"), before the rest
//! of it is looked at: its header and keywords may be a later version's.
//!
//! Meerkat answers as the Suricata version it is a drop-in for, [`SURICATA_VERSION`].

use std::cmp::Ordering;

/// The Suricata version Meerkat's rule language and EVE follow.
pub const SURICATA_VERSION: Version = Version(8, 0, 6);

/// The features Meerkat has, by Suricata's names.
const FEATURES: &[&str] = &["output::file-store", "ja3", "ja4"];

/// Longest `requires` value taken (Suricata's are a few dozen bytes).
const MAX_REQUIRES_LEN: usize = 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u8, pub u8, pub u8);

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// Why a rule's requirements are not met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unmet {
    /// The engine is older than the rule needs.
    VersionLt(Version),
    /// The engine is newer than the rule is for.
    VersionGt,
    MissingFeature(String),
    MissingKeyword(String),
    /// A requirement this version does not know (a later version's): skipped too.
    Unknown(String),
}

impl std::fmt::Display for Unmet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unmet::VersionLt(v) => {
                write!(f, "Suricata version {SURICATA_VERSION} is less than {v}")
            }
            Unmet::VersionGt => write!(f, "the rule is for an older Suricata version"),
            Unmet::MissingFeature(x) => write!(f, "missing feature {x}"),
            Unmet::MissingKeyword(x) => write!(f, "missing keyword {x}"),
            Unmet::Unknown(x) => write!(f, "unknown requirement `{x}`"),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Gt,
    Ge,
    Lt,
    Le,
}

/// `8`, `8.0` or `8.0.5` (each part 0-255; what follows a `-` is ignored, as in
/// `8.0.0-dev`).
fn parse_version(s: &str) -> Result<Version, String> {
    let s = s.split('-').next().unwrap_or_default();
    let mut parts = s.split('.');
    let mut part = |required: bool| -> Result<u8, String> {
        match parts.next() {
            Some(p) => p.parse().map_err(|_| format!("bad version `{s}`")),
            None if required => Err(format!("bad version `{s}`")),
            None => Ok(0),
        }
    };
    let v = Version(part(true)?, part(false)?, part(false)?);
    if parts.next().is_some() {
        return Err(format!("bad version `{s}`"));
    }
    Ok(v)
}

/// A version expression: `|`-separated ranges, each one or more `<op> <version>`.
fn parse_version_expr(s: &str) -> Result<Vec<Vec<(Op, Version)>>, String> {
    s.split('|')
        .map(|range| {
            let mut out = Vec::new();
            let mut rest = range.trim();
            if rest.is_empty() {
                return Err("empty version range".to_string());
            }
            while !rest.is_empty() {
                let (op, after) = if let Some(r) = rest.strip_prefix(">=") {
                    (Op::Ge, r)
                } else if let Some(r) = rest.strip_prefix('>') {
                    (Op::Gt, r)
                } else if let Some(r) = rest.strip_prefix("<=") {
                    (Op::Le, r)
                } else if let Some(r) = rest.strip_prefix('<') {
                    (Op::Lt, r)
                } else {
                    return Err(format!("expected a comparison at `{rest}`"));
                };
                let after = after.trim_start();
                let end = after
                    .find(|c: char| c.is_whitespace() || c == '<' || c == '>')
                    .unwrap_or(after.len());
                out.push((op, parse_version(&after[..end])?));
                rest = after[end..].trim_start();
            }
            Ok(out)
        })
        .collect()
}

fn holds(op: Op, want: Version, have: Version) -> Result<(), Unmet> {
    let ord = have.cmp(&want);
    match (op, ord) {
        (Op::Ge, Ordering::Less) | (Op::Gt, Ordering::Less | Ordering::Equal) => {
            Err(Unmet::VersionLt(want))
        }
        (Op::Le, Ordering::Greater) | (Op::Lt, Ordering::Greater | Ordering::Equal) => {
            Err(Unmet::VersionGt)
        }
        _ => Ok(()),
    }
}

/// Checks a `requires` value against `have` (the engine's version); `keyword_known`
/// tells whether the engine has a rule keyword. `Ok(Err(_))`: the rule is to be
/// skipped; `Err(_)`: the value does not parse (the rule is an error).
pub fn check(
    value: &str,
    have: Version,
    keyword_known: impl Fn(&str) -> bool,
) -> Result<Result<(), Unmet>, String> {
    if value.len() > MAX_REQUIRES_LEN {
        return Err("requires: value too long".to_string());
    }
    let mut version = None;
    let mut unmet = Vec::new();
    for item in value.split(',') {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        let (key, arg) = item
            .split_once(char::is_whitespace)
            .map_or((item, ""), |(k, a)| (k, a.trim()));
        match key {
            "version" => {
                if version.is_some() {
                    return Err("requires: version may only be given once".to_string());
                }
                version = Some(parse_version_expr(arg)?);
            }
            "feature" => {
                if !FEATURES.contains(&arg) {
                    unmet.push(Unmet::MissingFeature(arg.to_string()));
                }
            }
            "keyword" => {
                if !keyword_known(arg) {
                    unmet.push(Unmet::MissingKeyword(arg.to_string()));
                }
            }
            _ => unmet.push(Unmet::Unknown(item.to_string())),
        }
    }
    // The version first (Suricata reports it before features).
    if let Some(ranges) = version {
        let mut first_err = None;
        let any = ranges.iter().any(|r| {
            match r.iter().try_for_each(|&(op, want)| holds(op, want, have)) {
                Ok(()) => true,
                Err(e) => {
                    first_err.get_or_insert(e);
                    false
                }
            }
        });
        if !any && let Some(e) = first_err {
            return Ok(Err(e));
        }
    }
    Ok(match unmet.into_iter().next() {
        Some(u) => Err(u),
        None => Ok(()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(v: &str, have: Version) -> Result<(), Unmet> {
        check(v, have, |k| k == "sid").unwrap()
    }

    #[test]
    fn versions() {
        let v806 = Version(8, 0, 6);
        assert_eq!(at("version >= 8.0.5", v806), Ok(()));
        assert_eq!(at("version >= 8", v806), Ok(()));
        assert_eq!(
            at("version >= 9", v806),
            Err(Unmet::VersionLt(Version(9, 0, 0)))
        );
        assert_eq!(at("version >= 7 < 8", v806), Err(Unmet::VersionGt));
        assert_eq!(at("version >= 7 < 8", Version(7, 0, 3)), Ok(()));
        assert_eq!(
            at("version >= 7.0.3 < 8 | >= 9.0.99", v806),
            Err(Unmet::VersionGt)
        );
        assert_eq!(at("version >= 7.0.3 < 8 | >= 8.0.3", v806), Ok(()));
        assert_eq!(at("version > 8.0.6", v806), Err(Unmet::VersionLt(v806)));
        assert_eq!(at("version <= 8.0.6", v806), Ok(()));
        assert!(check("version 8", v806, |_| true).is_err());
        assert!(check("version >= 8.x", v806, |_| true).is_err());
        assert!(check("version >= 8, version >= 7", v806, |_| true).is_err());
    }

    #[test]
    fn features_keywords_and_unknown_requirements() {
        let v = SURICATA_VERSION;
        assert_eq!(at("version >= 8.0.0, keyword sid", v), Ok(()));
        assert_eq!(
            at("version >= 8, keyword foobar", v),
            Err(Unmet::MissingKeyword("foobar".into()))
        );
        assert_eq!(at("feature output::file-store", v), Ok(()));
        assert_eq!(
            at("feature geoip", v),
            Err(Unmet::MissingFeature("geoip".into()))
        );
        assert!(matches!(at("color blue", v), Err(Unmet::Unknown(_))));
        // The version is judged first.
        assert!(matches!(
            at("feature geoip, version >= 10", v),
            Err(Unmet::VersionLt(_))
        ));
    }
}
