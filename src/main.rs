//! `meerkat`: one binary, many roles. `meerkat run` is the supervisor; `capture`,
//! `detect` and `eve-writer` are the roles it starts as separate processes; `rules` and
//! `config` are tools. The logic lives in the workspace crates; this is the thin edge
//! that parses arguments, sets up logging and signals, and maps errors to exit codes.

// The binary's job includes printing results (summaries, `rules check`) on stdout.
#![allow(clippy::print_stdout)]

mod cli;
mod control;
mod ctl;
mod logging;
mod peers;
mod probe;
mod roles;
mod signals;
mod supervisor;
mod tls;
mod tools;

use std::process::ExitCode;

/// The allocator of every role process (see the `mimalloc` feature in Cargo.toml).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;

use cli::{Cli, Command};

/// Exit code for a configuration or usage error (clap uses 2 as well).
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a failure while running.
pub const EXIT_FAILURE: u8 = 1;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.verbose, cli.quiet, cli.log_format);
    signals::install_handlers();
    let log = supervisor::LogArgs {
        verbose: cli.verbose,
        quiet: cli.quiet,
        format: cli.log_format,
    };
    let result = match cli.command {
        None => supervisor::run_sample(&log),
        Some(Command::Run(args)) => supervisor::run(&args, &log),
        Some(Command::Capture(args)) => roles::capture(&args),
        Some(Command::Detect(args)) => roles::detect(&args),
        Some(Command::EveWriter(args)) => roles::eve_writer(&args),
        Some(Command::Rules(cmd)) => tools::rules(cmd),
        Some(Command::Config(cmd)) => tools::config(cmd),
        Some(Command::Ctl(args)) => ctl::run(&args),
        Some(Command::Probe(args)) => probe::probe(&args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{}", e.message());
            ExitCode::from(e.exit_code())
        }
    }
}

/// An error at the binary's edge, with the exit code it maps to.
#[derive(Debug)]
pub struct Failure {
    pub code: u8,
    pub error: anyhow::Error,
}

impl Failure {
    pub fn exit_code(&self) -> u8 {
        self.code
    }

    /// The error and its causes on one line. Library errors already name their cause in
    /// their message, `anyhow` contexts do not: a cause is added only when the text so far
    /// does not already say it.
    pub fn message(&self) -> String {
        let mut out = self.error.to_string();
        for cause in self.error.chain().skip(1) {
            let c = cause.to_string();
            if !out.contains(&c) {
                out.push_str(": ");
                out.push_str(&c);
            }
        }
        out
    }
    pub fn usage(e: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: EXIT_USAGE,
            error: e.into(),
        }
    }
    pub fn runtime(e: impl Into<anyhow::Error>) -> Failure {
        Failure {
            code: EXIT_FAILURE,
            error: e.into(),
        }
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if f.alternate() {
            write!(f, "{:#}", self.error)
        } else {
            write!(f, "{}", self.error)
        }
    }
}

pub type Outcome = Result<ExitCode, Failure>;
