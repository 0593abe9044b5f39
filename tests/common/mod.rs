//! Helpers for the integration tests: run the real `meerkat` binary, read the EVE it
//! wrote, validate it against Suricata's schema.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

pub mod sc;
pub mod stack;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

pub fn meerkat() -> Command {
    Command::new(env!("CARGO_BIN_EXE_meerkat"))
}

/// `../shared` as seen from the repository root, if present.
pub fn shared() -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared");
    p.is_dir().then_some(p)
}

/// Runs `meerkat` with `args` in `cwd`, quietly.
pub fn run_in(cwd: &Path, args: &[&str]) -> Output {
    meerkat()
        .current_dir(cwd)
        .args(args)
        .output()
        .expect("meerkat runs")
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Runs the reference engine (`../shared/tools/suricata-ref`) on `pcap` with `rules`
/// and `extra` arguments, asserts that it succeeded and returns the events it wrote;
/// `None`, with a message, when it is not at hand (a clone without `../shared`).
pub fn run_reference(pcap: &Path, rules: &Path, extra: &[&str]) -> Option<Vec<serde_json::Value>> {
    let Some(shared) = shared() else {
        eprintln!("skipping: ../shared is absent");
        return None;
    };
    let engine = shared.join("tools/suricata-ref");
    if !engine.is_file() {
        eprintln!("skipping: {} is absent", engine.display());
        return None;
    }
    let logs = tempfile::tempdir().unwrap();
    let o = Command::new(&engine)
        .arg("-r")
        .arg(pcap)
        .arg("-S")
        .arg(rules)
        .arg("-l")
        .arg(logs.path())
        .args(extra)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(eve(&logs.path().join("eve.json")))
}

/// Runs `meerkat run -q -r PCAP -S RULES -l <a fresh directory> EXTRA...` in `dir`
/// (checksums as `extra` says), asserts that it succeeded and returns the events it
/// wrote.
pub fn run_pcap(dir: &Path, pcap: &Path, rules: &Path, extra: &[&str]) -> Vec<serde_json::Value> {
    let logs = tempfile::tempdir().unwrap();
    let mut args = vec![
        "run",
        "-q",
        "-r",
        pcap.to_str().unwrap(),
        "-S",
        rules.to_str().unwrap(),
        "-l",
        logs.path().to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let o = run_in(dir, &args);
    assert!(
        o.status.success(),
        "meerkat {}: {}",
        args.join(" "),
        stderr(&o)
    );
    eve(&logs.path().join("eve.json"))
}

/// Every line of an EVE file as JSON.
pub fn eve(path: &Path) -> Vec<serde_json::Value> {
    let text =
        std::fs::read_to_string(path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad EVE line {l}: {e}")))
        .collect()
}

/// The protocol objects of the records of `event_type` (`"ssh"`: each `ssh` event's
/// `ssh` object), in order.
pub fn records(events: &[serde_json::Value], event_type: &str) -> Vec<serde_json::Value> {
    events
        .iter()
        .filter(|e| e["event_type"] == event_type)
        .map(|e| e[event_type].clone())
        .collect()
}

/// Signature ids of the alerts, sorted.
pub fn alert_sids(events: &[serde_json::Value]) -> Vec<u64> {
    let mut v: Vec<u64> = events
        .iter()
        .filter(|e| e["event_type"] == "alert")
        .map(|e| e["alert"]["signature_id"].as_u64().unwrap())
        .collect();
    v.sort_unstable();
    v
}

fn validator() -> Option<&'static jsonschema::Validator> {
    static V: OnceLock<Option<jsonschema::Validator>> = OnceLock::new();
    V.get_or_init(|| {
        let path = shared()?.join("corpus/suricata/eve-schema.json");
        let schema: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
        Some(jsonschema::validator_for(&schema).expect("Suricata's EVE schema compiles"))
    })
    .as_ref()
}

/// Checks every event against Suricata's EVE JSON Schema (skipped, with a message, when
/// ../shared is absent).
pub fn assert_schema_valid(events: &[serde_json::Value]) {
    let Some(v) = validator() else {
        eprintln!(
            "skipping EVE schema validation: ../shared/corpus/suricata/eve-schema.json is absent"
        );
        return;
    };
    for e in events {
        let errors: Vec<String> = v
            .iter_errors(e)
            .map(|err| format!("{err} at {}", err.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "EVE line does not validate: {e}\n{errors:#?}"
        );
    }
}
