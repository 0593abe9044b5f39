//! `datasets`: the sets of the `dataset`/`datarep` rule keywords that the config
//! declares, and the defaults and limits of every set, under Suricata's key names:
//!
//! ```yaml
//! datasets:
//!   defaults:            # for sets that do not say
//!     memcap: 16mb
//!     hashsize: 4096
//!   limits:
//!     single-hashsize: 65536
//!     total-hashsizes: 1048576
//!   rules:
//!     allow-write: yes               # rules may `save`/`state`
//!     allow-absolute-filenames: no   # ... to absolute paths
//!   dns-seen:                        # a set: type, and load or state
//!     type: string
//!     state: dns-seen.lst
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::ByteSize;

/// A set the config declares.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DatasetDef {
    /// `string`, `md5`, `sha256`, `ipv4`, `ip` (checked when the set is made).
    pub kind: String,
    /// Read when the set is made (relative: in `default-data-dir`, else as given).
    pub load: Option<PathBuf>,
    /// Read when the set is made and written at shutdown (relative: in
    /// `default-data-dir`).
    pub state: Option<PathBuf>,
    pub memcap: Option<ByteSize>,
    pub hashsize: Option<u32>,
}

/// The `datasets` section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BTreeMap<String, Value>", into = "BTreeMap<String, Value>")]
pub struct Datasets {
    /// `defaults.memcap`: bytes a set takes at most (its shared-memory size). Absent:
    /// 16 MiB.
    pub memcap: Option<ByteSize>,
    /// `defaults.hashsize`: Suricata's hash rows per set (checked against the limits;
    /// Meerkat sizes a set by its memcap). Absent: 4096.
    pub hashsize: Option<u32>,
    /// `limits.single-hashsize`: largest hashsize of one set (0: no limit).
    pub single_hashsize: u32,
    /// `limits.total-hashsizes`: largest sum of the sets' hashsizes (0: no limit).
    pub total_hashsizes: u32,
    /// `rules.allow-write`: rules may `save`/`state` sets.
    pub allow_write: bool,
    /// `rules.allow-absolute-filenames`: rules may name absolute save paths.
    pub allow_absolute_filenames: bool,
    /// The sets declared here, by name.
    pub sets: BTreeMap<String, DatasetDef>,
}

impl Default for Datasets {
    fn default() -> Self {
        Datasets {
            memcap: None,
            hashsize: None,
            single_hashsize: 0,
            total_hashsizes: 0,
            allow_write: true,
            allow_absolute_filenames: false,
            sets: BTreeMap::new(),
        }
    }
}

impl Datasets {
    /// Whether nothing is configured (the section is left out of a resolved config).
    pub fn is_default(&self) -> bool {
        *self == Datasets::default()
    }
}

fn text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn size(key: &str, v: &Value) -> Result<ByteSize, String> {
    text(v)
        .and_then(|s| ByteSize::parse(&s))
        .ok_or_else(|| format!("datasets.{key}: not a size: {v:?}"))
}

fn count(key: &str, v: &Value) -> Result<u32, String> {
    size(key, v).and_then(|b| {
        u32::try_from(b.bytes()).map_err(|_| format!("datasets.{key}: larger than 2^32"))
    })
}

fn boolean(key: &str, v: &Value) -> Result<bool, String> {
    match text(v).as_deref().map(str::to_ascii_lowercase).as_deref() {
        Some("yes" | "true" | "on" | "1") => Ok(true),
        Some("no" | "false" | "off" | "0") => Ok(false),
        _ => Err(format!("datasets.{key}: not a boolean: {v:?}")),
    }
}

fn mapping<'v>(key: &str, v: &'v Value) -> Result<Vec<(String, &'v Value)>, String> {
    match v {
        Value::Mapping(m) => Ok(m
            .iter()
            .filter_map(|(k, v)| text(k).map(|k| (k, v)))
            .collect()),
        Value::Null => Ok(Vec::new()),
        _ => Err(format!("datasets.{key}: must be a mapping")),
    }
}

impl TryFrom<BTreeMap<String, Value>> for Datasets {
    type Error = String;

    fn try_from(raw: BTreeMap<String, Value>) -> Result<Self, String> {
        let mut d = Datasets::default();
        for (name, v) in &raw {
            match name.as_str() {
                "defaults" => {
                    for (k, v) in mapping(name, v)? {
                        match k.as_str() {
                            "memcap" => d.memcap = Some(size("defaults.memcap", v)?),
                            "hashsize" => d.hashsize = Some(count("defaults.hashsize", v)?),
                            _ => return Err(format!("unknown key datasets.defaults.{k}")),
                        }
                    }
                }
                "limits" => {
                    for (k, v) in mapping(name, v)? {
                        match k.as_str() {
                            "single-hashsize" => d.single_hashsize = count(&k, v)?,
                            "total-hashsizes" => d.total_hashsizes = count(&k, v)?,
                            _ => return Err(format!("unknown key datasets.limits.{k}")),
                        }
                    }
                }
                "rules" => {
                    for (k, v) in mapping(name, v)? {
                        match k.as_str() {
                            "allow-write" => d.allow_write = boolean(&k, v)?,
                            "allow-absolute-filenames" => {
                                d.allow_absolute_filenames = boolean(&k, v)?
                            }
                            _ => return Err(format!("unknown key datasets.rules.{k}")),
                        }
                    }
                }
                _ => {
                    let mut def = DatasetDef::default();
                    for (k, v) in mapping(name, v)? {
                        let key = format!("{name}.{k}");
                        let path = || {
                            text(v)
                                .map(PathBuf::from)
                                .ok_or_else(|| format!("datasets.{key}: not a path"))
                        };
                        match k.as_str() {
                            "type" => def.kind = text(v).unwrap_or_default(),
                            "load" => def.load = Some(path()?),
                            "state" => def.state = Some(path()?),
                            "memcap" => def.memcap = Some(size(&key, v)?),
                            "hashsize" => def.hashsize = Some(count(&key, v)?),
                            _ => return Err(format!("unknown key datasets.{key}")),
                        }
                    }
                    // Suricata skips a set without a type.
                    if !def.kind.is_empty() {
                        d.sets.insert(name.clone(), def);
                    }
                }
            }
        }
        if d.total_hashsizes > 0 && d.total_hashsizes < d.single_hashsize {
            return Err(format!(
                "datasets.limits: total-hashsizes ({}) cannot be smaller than single-hashsize ({})",
                d.total_hashsizes, d.single_hashsize
            ));
        }
        Ok(d)
    }
}

fn num(n: u64) -> Value {
    Value::Number(serde_yaml::Number::from(n))
}

impl From<Datasets> for BTreeMap<String, Value> {
    /// What differs from the defaults (so that a resolved config names no key its
    /// source did not).
    fn from(d: Datasets) -> Self {
        fn map(pairs: Vec<(&str, Option<Value>)>) -> Option<Value> {
            let m: serde_yaml::Mapping = pairs
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (Value::String(k.to_string()), v)))
                .collect();
            (!m.is_empty()).then_some(Value::Mapping(m))
        }
        let base = Datasets::default();
        let s = |x: String| Some(Value::String(x));
        let mut out = BTreeMap::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                out.insert(k.to_string(), v);
            }
        };
        put(
            "defaults",
            map(vec![
                ("memcap", d.memcap.map(|m| num(m.bytes()))),
                ("hashsize", d.hashsize.map(|h| num(u64::from(h)))),
            ]),
        );
        put(
            "limits",
            map(vec![
                (
                    "single-hashsize",
                    (d.single_hashsize != 0).then(|| num(u64::from(d.single_hashsize))),
                ),
                (
                    "total-hashsizes",
                    (d.total_hashsizes != 0).then(|| num(u64::from(d.total_hashsizes))),
                ),
            ]),
        );
        put(
            "rules",
            map(vec![
                (
                    "allow-write",
                    (d.allow_write != base.allow_write).then_some(Value::Bool(d.allow_write)),
                ),
                (
                    "allow-absolute-filenames",
                    (d.allow_absolute_filenames != base.allow_absolute_filenames)
                        .then_some(Value::Bool(d.allow_absolute_filenames)),
                ),
            ]),
        );
        for (name, def) in d.sets {
            let p = |p: Option<PathBuf>| p.and_then(|p| s(p.display().to_string()));
            let v = map(vec![
                ("type", s(def.kind)),
                ("load", p(def.load)),
                ("state", p(def.state)),
                ("memcap", def.memcap.map(|m| num(m.bytes()))),
                ("hashsize", def.hashsize.map(|h| num(u64::from(h)))),
            ]);
            put(&name, v);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suricatas_keys_load_and_round_trip() {
        let y = "defaults:\n  memcap: 1mb\n  hashsize: 2048\nlimits:\n  single-hashsize: 4096\n\
                 rules:\n  allow-write: no\nseen:\n  type: string\n  state: seen.lst\n\
                 notype:\n  load: x\n";
        let d: Datasets = serde_yaml::from_str(y).unwrap();
        assert_eq!(d.memcap, Some(ByteSize::mib(1)));
        assert_eq!(d.hashsize, Some(2048));
        assert_eq!(d.single_hashsize, 4096);
        assert!(!d.allow_write && !d.allow_absolute_filenames);
        assert_eq!(d.sets.len(), 1);
        assert_eq!(d.sets["seen"].state, Some(PathBuf::from("seen.lst")));
        let again: Datasets = serde_yaml::from_value(serde_yaml::to_value(&d).unwrap()).unwrap();
        assert_eq!(again, d);
        assert!(serde_yaml::from_str::<Datasets>("seen:\n  type: string\n  bogus: 1\n").is_err());
        assert!(
            serde_yaml::from_str::<Datasets>(
                "limits:\n  single-hashsize: 10\n  total-hashsizes: 5\n"
            )
            .is_err()
        );
    }
}
