//! `--set key=value` overrides by dotted path, as Suricata's `--set` does, and the deep
//! merge of a config file over the defaults.
//!
//! Lists are addressed two ways:
//! - by index, as Suricata does: `outputs.1.eve-log.types.2.anomaly.types.stream=yes`.
//!   Meerkat's lists need not have the same order as Suricata's default file, so an index
//!   followed by a key picks the entry holding that key (the indexed one if it has it,
//!   else the first that has it, else a new entry);
//! - by key: `outputs.eve-log.buffer-size=65536` sets it on the first `eve-log` entry.

use serde_yaml::{Mapping, Value};

use crate::ConfigError;

/// Turns a `--set` value into YAML: integers become numbers, everything else stays a
/// string (the typed layer reads `yes`, `1mb`, `[10.0.0.0/8]` from strings, and a string
/// such as `!$HOME_NET` must not be taken for YAML syntax).
pub fn parse_value(raw: &str) -> Value {
    let t = raw.trim();
    if let Ok(n) = t.parse::<u64>() {
        return Value::Number(n.into());
    }
    if let Ok(n) = t.parse::<i64>() {
        return Value::Number(n.into());
    }
    Value::String(t.to_string())
}

/// Applies one `key=value` override.
pub fn apply(root: &mut Value, assignment: &str) -> Result<(), ConfigError> {
    let (key, value) = assignment
        .split_once('=')
        .ok_or_else(|| ConfigError::BadSet(assignment.to_string()))?;
    let key = key.trim();
    if key.is_empty() || key.split('.').any(str::is_empty) {
        return Err(ConfigError::BadSet(assignment.to_string()));
    }
    let segs: Vec<&str> = key.split('.').collect();
    set_in(root, &segs, parse_value(value));
    Ok(())
}

/// Whether a list entry is `key` or a map holding `key`.
fn holds_key(v: &Value, key: &str) -> bool {
    match v {
        Value::Mapping(m) => m.contains_key(key),
        Value::String(s) => s == key,
        _ => false,
    }
}

/// Turns a plain list entry `key` into `{key: ~}` so that options can be set below it
/// (`types: [anomaly]` -> `types: [{anomaly: {...}}]`).
fn as_map_entry(v: &mut Value, key: &str) {
    if matches!(v, Value::String(s) if s == key) {
        let mut m = Mapping::new();
        m.insert(Value::String(key.to_string()), Value::Null);
        *v = Value::Mapping(m);
    }
}

fn set_in(node: &mut Value, segs: &[&str], value: Value) {
    let Some((&seg, rest)) = segs.split_first() else {
        *node = value;
        return;
    };
    if let Value::Sequence(seq) = node {
        if let Ok(idx) = seg.parse::<usize>() {
            match rest.first() {
                None => {
                    if idx < seq.len() {
                        seq[idx] = value;
                    } else {
                        seq.push(value);
                    }
                }
                Some(&next) if next.parse::<usize>().is_err() => {
                    let pos = if seq.get(idx).is_some_and(|v| holds_key(v, next)) {
                        Some(idx)
                    } else {
                        seq.iter().position(|v| holds_key(v, next))
                    };
                    let pos = pos.unwrap_or_else(|| {
                        seq.push(Value::Mapping(Mapping::new()));
                        seq.len() - 1
                    });
                    as_map_entry(&mut seq[pos], next);
                    set_in(&mut seq[pos], rest, value);
                }
                Some(_) => {
                    if idx >= seq.len() {
                        seq.push(Value::Null);
                    }
                    let pos = idx.min(seq.len() - 1);
                    set_in(&mut seq[pos], rest, value);
                }
            }
        } else {
            let pos = seq
                .iter()
                .position(|v| holds_key(v, seg))
                .unwrap_or_else(|| {
                    seq.push(Value::Mapping(Mapping::new()));
                    seq.len() - 1
                });
            set_in(&mut seq[pos], segs, value);
        }
        return;
    }
    if !matches!(node, Value::Mapping(_)) {
        *node = Value::Mapping(Mapping::new());
    }
    if let Value::Mapping(map) = node {
        let key = Value::String(seg.to_string());
        if rest.is_empty() {
            map.insert(key, value);
        } else {
            let child = map.entry(key).or_insert(Value::Null);
            set_in(child, rest, value);
        }
    }
}

/// Merges `over` into `base`: maps merge key by key, anything else replaces.
pub fn merge(base: &mut Value, over: Value) {
    match (base, over) {
        (Value::Mapping(b), Value::Mapping(o)) => {
            for (k, v) in o {
                match b.get_mut(&k) {
                    Some(slot) => merge(slot, v),
                    None => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (slot, v) => *slot = v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(s: &str) -> Value {
        serde_yaml::from_str(s).unwrap()
    }

    #[test]
    fn sets_nested_maps() {
        let mut v = yaml("stream: {midstream: false}");
        apply(&mut v, "stream.midstream=true").unwrap();
        apply(&mut v, "stream.reassembly.depth=8kb").unwrap();
        assert_eq!(
            v,
            yaml("stream: {midstream: 'true', reassembly: {depth: 8kb}}")
        );
    }

    #[test]
    fn values_stay_strings_unless_integers() {
        let mut v = Value::Null;
        apply(&mut v, "vars.address-groups.EXTERNAL_NET=!$HOME_NET").unwrap();
        apply(&mut v, "vars.address-groups.HOME_NET=[192.168.0.0/16]").unwrap();
        apply(&mut v, "vars.port-groups.FTP_PORTS=21").unwrap();
        assert_eq!(
            v,
            yaml(
                "vars: {address-groups: {EXTERNAL_NET: '!$HOME_NET', HOME_NET: '[192.168.0.0/16]'}, port-groups: {FTP_PORTS: 21}}"
            )
        );
    }

    #[test]
    fn lists_by_key_and_by_suricata_index() {
        let mut v = yaml(
            "outputs: [{eve-log: {filename: eve.json, types: [alert, {anomaly: {enabled: yes}}]}}]",
        );
        apply(&mut v, "outputs.eve-log.buffer-size=65536").unwrap();
        // Suricata's default file has fast.log at 0 and eve-log at 1.
        apply(&mut v, "outputs.1.eve-log.types.2.anomaly.types.stream=yes").unwrap();
        assert_eq!(
            v,
            yaml(
                "outputs: [{eve-log: {filename: eve.json, buffer-size: 65536, types: [alert, {anomaly: {enabled: yes, types: {stream: 'yes'}}}]}}]"
            )
        );
    }

    #[test]
    fn rejects_malformed() {
        let mut v = Value::Null;
        assert!(apply(&mut v, "novalue").is_err());
        assert!(apply(&mut v, "a..b=1").is_err());
        assert!(apply(&mut v, "=1").is_err());
    }

    #[test]
    fn merge_maps_replace_lists() {
        let mut base = yaml("a: {b: 1, c: 2}\nl: [1, 2]");
        merge(&mut base, yaml("a: {c: 3}\nl: [9]"));
        assert_eq!(base, yaml("a: {b: 1, c: 3}\nl: [9]"));
    }
}
