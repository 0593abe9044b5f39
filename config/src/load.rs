//! Loading: the defaults, a file merged over them, `--set` overrides, the key check and
//! the typed, validated [`Config`].

use std::path::Path;

use serde_yaml::Value;

use crate::{Config, ConfigError, Resolved, keys, set};

/// The defaults as a YAML tree.
pub fn default_tree() -> Value {
    serde_yaml::to_value(Config::default()).unwrap_or(Value::Null)
}

/// Reads a YAML config file (Suricata's `%YAML 1.1` header is accepted).
pub fn read_file(path: &Path) -> Result<Value, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_text(&text).map_err(|message| ConfigError::Syntax {
        path: path.to_path_buf(),
        message,
    })
}

/// Parses YAML text. Suricata files start with `%YAML 1.1` and `---`, which this YAML
/// reader (1.2) refuses, so that directive is dropped first.
pub fn parse_text(text: &str) -> Result<Value, String> {
    let body: String = if text.trim_start().starts_with("%YAML") {
        text.lines()
            .skip_while(|l| l.trim_start().starts_with('%'))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.to_string()
    };
    match serde_yaml::from_str::<Value>(&body) {
        Ok(Value::Null) => Ok(Value::Mapping(Default::default())),
        Ok(v @ Value::Mapping(_)) => Ok(v),
        Ok(_) => Err("the top level must be a map of keys".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Builds the typed config: defaults, then `file` merged over them, then the overrides
/// (`key=value`, applied in order), then the key check and validation.
pub fn resolve(file: Option<&Path>, overrides: &[String]) -> Result<Resolved, ConfigError> {
    let mut tree = default_tree();
    if let Some(path) = file {
        set::merge(&mut tree, read_file(path)?);
    }
    for o in overrides {
        set::apply(&mut tree, o)?;
    }
    resolve_tree(tree)
}

/// Checks and types a complete tree.
pub fn resolve_tree(mut tree: Value) -> Result<Resolved, ConfigError> {
    let report = keys::check_and_prune(&mut tree);
    if !report.unknown_keys.is_empty() {
        return Err(ConfigError::UnknownKeys(report.unknown_keys));
    }
    // Through text so that serde_yaml's errors carry the key path and position.
    let text = serde_yaml::to_string(&tree).map_err(|e| ConfigError::Invalid(e.to_string()))?;
    let config: Config =
        serde_yaml::from_str(&text).map_err(|e| ConfigError::Invalid(e.to_string()))?;
    config.validate()?;
    Ok(Resolved {
        config,
        ignored_suricata_keys: report.ignored_suricata_keys,
    })
}

/// Reads a resolved config written by the supervisor (or any config file, strictly:
/// Suricata-only keys are still only warnings, returned to the caller).
pub fn load_for_role(path: &Path, overrides: &[String]) -> Result<Resolved, ConfigError> {
    resolve(Some(path), overrides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_is_a_clear_error() {
        let e = resolve(Some(Path::new("/nonexistent/meerkat.yaml")), &[]).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/meerkat.yaml"), "{e}");
    }

    /// Suricata 8's stock suricata.yaml loads as it is (sections with every key
    /// commented out, outputs Meerkat does not write), so a Suricata deployment's config
    /// works unchanged. Skips when `../shared` (where the reference's copy is) is absent.
    #[test]
    fn suricata_stock_config_loads() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/tools/reference/suricata.yaml");
        if !p.is_file() {
            eprintln!("skipped: {} is absent", p.display());
            return;
        }
        let r = resolve(Some(&p), &[]).unwrap_or_else(|e| panic!("{e}"));
        let fs = r
            .config
            .outputs
            .iter()
            .find_map(|o| o.file_store.as_ref())
            .expect("the file-store output is read");
        assert!(!fs.enabled && fs.version == 2);
        assert!(r.config.eve_wants("files") && r.config.eve_wants("alert"));
        // Enabling the file store as Suricata's users do, by its place in the list.
        let r = resolve(Some(&p), &["outputs.6.file-store.enabled=yes".to_string()])
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(r.config.file_store().is_some());
    }
}
