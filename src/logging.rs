//! Logging setup: `tracing` to stderr, human-readable or JSON.

use clap::ValueEnum;
use tracing_subscriber::EnvFilter;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum LogFormat {
    #[default]
    Text,
    Json,
}

/// Level from `-v` count and `-q`; `RUST_LOG` overrides.
pub fn init(verbose: u8, quiet: bool, format: LogFormat) {
    let level = match (quiet, verbose) {
        (true, _) => "warn",
        (false, 0) => "info",
        (false, 1) => "debug",
        _ => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| {
        EnvFilter::new(format!("{level},h2=warn,hyper=warn,tower=warn,tonic=warn"))
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false);
    match format {
        LogFormat::Text => {
            let _ = builder
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
                .try_init();
        }
        LogFormat::Json => {
            let _ = builder.json().try_init();
        }
    }
}
