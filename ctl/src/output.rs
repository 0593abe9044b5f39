//! Output of a command-line client of scripts and pipes.

use meerkat_proto::control::{Counter, ReloadRulesReply};
use serde_json::{Value, json};

/// Exit status when stdout cannot be written (as for a refused request).
const EXIT_FAILURE: i32 = 1;

/// One line on stdout; a reader that went away ends the process quietly.
pub fn print_line(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.write_all(b"\n")) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("meerkat ctl: cannot write to stdout: {e}");
        std::process::exit(EXIT_FAILURE);
    }
}

pub(crate) fn reload_json(r: &ReloadRulesReply) -> Value {
    json!({
        "applied": r.applied,
        "generation": r.generation,
        "digest": r.digest,
        "loaded": r.loaded,
        "failed": r.failed,
        "errors": r.errors,
        "duration_ms": r.duration_ms,
        "swap_ms": r.swap_ms,
    })
}

/// Counters as one JSON object, name → value.
pub(crate) fn counters_json(counters: &[Counter]) -> Value {
    Value::Object(
        counters
            .iter()
            .map(|c| (c.name.clone(), json!(c.value)))
            .collect(),
    )
}

/// Counters one per line, indented under their role or interface.
pub(crate) fn print_counters(counters: &[Counter]) {
    for c in counters {
        println!("  {:<40} {}", c.name, c.value);
    }
}

pub(crate) fn ms(v: u64) -> String {
    let s = v / 1000;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s / 60) % 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{:.1}s", v as f64 / 1000.0)
    }
}
