//! `--dump-config`: the resolved configuration as Suricata prints it, one `key = value`
//! line per node (a map is `(null)`, a list's items are `key.N`, an item that is a map
//! shows its first key's name), which suricata-update reads (`suricata -c FILE
//! --dump-config`) to learn the address and port groups and which application
//! protocols are enabled: a protocol Suricata has and Meerkat does not parse is shown
//! `enabled = no`, so that suricata-update disables its rules rather than handing
//! Meerkat rules it cannot load. The unix socket's `conf-get` reads the same lines.

use meerkat_config::Config;
use serde_yaml::Value;

/// The configuration's `key = value` lines, in the order the resolved config has them.
pub fn lines(config: &Config) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let tree = serde_yaml::to_value(config).unwrap_or(Value::Null);
    walk(&mut out, String::new(), &tree);
    // Application protocols: Meerkat's with their state, Suricata's others off.
    let ours: Vec<&str> = meerkat_app::AppProto::ALL
        .iter()
        .map(|p| p.name())
        .collect();
    let mut protos: Vec<String> = ours.iter().map(|s| s.to_string()).collect();
    for p in meerkat_config::keys::suricata_app_protocols() {
        if !protos.iter().any(|q| q == p) {
            protos.push(p.to_string());
        }
    }
    for p in protos {
        let key = format!("app-layer.protocols.{p}.enabled");
        out.retain(|(k, _)| *k != key);
        let value = if !ours.contains(&p.as_str()) {
            "no"
        } else {
            let default_on = meerkat_app::PROTOCOLS
                .iter()
                .find(|d| d.name == p)
                .is_none_or(|d| d.enabled_by_default);
            match config.app_layer.enabled(&p, default_on) {
                meerkat_config::AppEnabled::Yes => "yes",
                meerkat_config::AppEnabled::No => "no",
                meerkat_config::AppEnabled::DetectionOnly => "detection-only",
            }
        };
        out.push((key, value.to_string()));
    }
    out
}

/// The value of one key (`conf-get`), if the configuration has it.
pub fn get(config: &Config, key: &str) -> Option<String> {
    lines(config)
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// The `--dump-config` text.
pub fn text(config: &Config) -> String {
    let mut s = String::new();
    for (k, v) in lines(config) {
        s.push_str(&k);
        s.push_str(" = ");
        s.push_str(&v);
        s.push('\n');
    }
    s
}

fn scalar(v: &Value) -> Option<String> {
    Some(match v {
        Value::Null => "(null)".to_string(),
        Value::Bool(b) => if *b { "yes" } else { "no" }.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.replace('\n', " "),
        Value::Tagged(t) => return scalar(&t.value),
        Value::Sequence(_) | Value::Mapping(_) => return None,
    })
}

fn key_name(k: &Value) -> String {
    scalar(k).unwrap_or_default()
}

fn walk(out: &mut Vec<(String, String)>, prefix: String, v: &Value) {
    let join = |k: &str| {
        if prefix.is_empty() {
            k.to_string()
        } else {
            format!("{prefix}.{k}")
        }
    };
    match v {
        Value::Mapping(m) => {
            for (k, child) in m {
                let key = join(&key_name(k));
                match scalar(child) {
                    Some(s) => out.push((key, s)),
                    None => {
                        out.push((key.clone(), "(null)".to_string()));
                        walk(out, key, child);
                    }
                }
            }
        }
        Value::Sequence(items) => {
            for (i, child) in items.iter().enumerate() {
                let key = join(&i.to_string());
                match (scalar(child), child) {
                    (Some(s), _) => out.push((key, s)),
                    (None, Value::Mapping(m)) => {
                        let first = m.keys().next().map(key_name).unwrap_or_default();
                        out.push((key.clone(), first));
                        walk(out, key, child);
                    }
                    (None, _) => {
                        out.push((key.clone(), "(null)".to_string()));
                        walk(out, key, child);
                    }
                }
            }
        }
        Value::Tagged(t) => walk(out, prefix, &t.value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suricata_shapes() {
        let c = Config::default();
        let l = lines(&c);
        let has = |k: &str, v: &str| l.iter().any(|(a, b)| a == k && b == v);
        assert!(has("vars", "(null)"));
        assert!(has(
            "vars.address-groups.HOME_NET",
            "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"
        ));
        assert!(has("vars.port-groups.HTTP_PORTS", "80"));
        assert!(has("rule-files", "(null)"));
        assert!(has("rule-files.0", "meerkat.rules"));
        assert!(has("outputs.0", "eve-log"));
        assert!(has("outputs.0.eve-log.enabled", "yes"));
        assert!(has("outputs.0.eve-log.types.0", "alert"));
        assert!(has("app-layer.protocols.http.enabled", "yes"));
        // Every protocol of Suricata's config has its line (one Meerkat did not parse
        // would be `no`, so that suricata-update disables its rules); one Meerkat
        // parses but leaves off by default, as Suricata 8 does, is `no`.
        for p in meerkat_config::keys::suricata_app_protocols() {
            let key = format!("app-layer.protocols.{p}.enabled");
            assert!(l.iter().any(|(k, _)| *k == key), "{key}");
        }
        assert!(has("app-layer.protocols.rdp.enabled", "yes"));
        assert!(has("app-layer.protocols.pgsql.enabled", "no"));
        assert!(has("app-layer.protocols.smtp.enabled", "yes"));
        assert_eq!(
            get(&c, "default-log-dir").as_deref(),
            Some("/var/log/meerkat")
        );
        assert_eq!(get(&c, "nosuch"), None);
        // suricata-update splits each line on " = " into exactly two parts.
        for line in text(&c).lines() {
            assert_eq!(line.split(" = ").count(), 2, "{line}");
        }
    }
}
