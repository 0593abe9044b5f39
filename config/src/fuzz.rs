//! Entry point of the config fuzz target (`fuzz/fuzz_targets/config.rs`), also run over
//! the seeds in `config/seeds/config/` by `config/tests/fuzz_seeds.rs`.

use crate::load;
use crate::set;

/// Loads `data` as a config file with `--set` overrides: the text up to the first NUL
/// byte is the YAML file (merged over the defaults, as `-c FILE`), each NUL-separated
/// piece after it one `--set KEY=VALUE`. Every step either succeeds or returns an
/// error; none may panic, and a config that resolves must render (`--dump-config`).
pub fn config_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let yaml = parts.next().unwrap_or_default();
    let mut tree = load::default_tree();
    if let Ok(file) = load::parse_text(yaml) {
        set::merge(&mut tree, file);
    }
    for o in parts.take(64) {
        let _ = set::apply(&mut tree, o);
    }
    if let Ok(resolved) = load::resolve_tree(tree) {
        let c = &resolved.config;
        let _ = c.to_yaml();
        let _ = c.workers();
        let _ = c.rule_paths();
        let _ = c.eve_paths();
        let _ = c.capture.replay_window_bytes();
    }
}
