//! `meerkat`: one binary, many roles. `meerkat run` is the supervisor; `capture`,
//! `detect` and `eve-writer` are the roles it starts as separate processes; `ctl` and
//! `probe` are clients; `rules` and `config` are tools. The logic lives in the workspace
//! crates (the supervisor in `meerkat-supervisor`, the clients in `meerkat-ctl`); this is
//! the thin edge that parses arguments, sets up logging and signals, calls the crate's
//! `run`, and maps errors to exit codes.

// The binary's job includes printing results (summaries, `rules check`) on stdout.
#![allow(clippy::print_stdout)]

mod cli;
mod logging;
mod roles;
mod signals;
mod tools;

use std::process::ExitCode;

/// The allocator of every role process (see the `mimalloc` feature in Cargo.toml).
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use clap::Parser;
use meerkat_supervisor::{LogArgs, SupervisorError};

use cli::{Cli, Command};

/// Exit code for a configuration or usage error (clap uses 2 as well).
pub const EXIT_USAGE: u8 = 2;
/// Exit code for a failure while running.
pub const EXIT_FAILURE: u8 = 1;

fn main() -> ExitCode {
    let cli = Cli::parse();
    logging::init(cli.verbose, cli.quiet, cli.log_format);
    signals::install_handlers();
    let log = LogArgs {
        verbose: cli.verbose,
        quiet: cli.quiet,
        json: cli.log_format == logging::LogFormat::Json,
    };
    let result = match cli.command {
        None => supervise(|out| meerkat_supervisor::run_sample(&log, signals::flags(), out)),
        Some(Command::Run(args)) => {
            let opts = args.into();
            supervise(|out| meerkat_supervisor::run(&opts, &log, signals::flags(), out))
        }
        Some(Command::Capture(args)) => roles::capture(&args),
        Some(Command::Detect(args)) => roles::detect(&args),
        Some(Command::EveWriter(args)) => roles::eve_writer(&args),
        Some(Command::Rules(cmd)) => tools::rules(cmd),
        Some(Command::Config(cmd)) => tools::config(cmd),
        Some(Command::Ctl(args)) => {
            let (opts, command) = args.into_parts();
            meerkat_ctl::run(&opts, &command).map_err(|e| Failure {
                code: e.exit_code(),
                error: e.into(),
            })
        }
        Some(Command::Probe(args)) => {
            match meerkat_ctl::probe::probe(args.config.as_deref(), &args.set, args.role) {
                Ok(()) => {
                    println!("{}: serving", args.role);
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) if e.is_usage() => Err(Failure::usage(e)),
                Err(e) => Err(Failure::runtime(e)),
            }
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            tracing::error!("{}", e.message());
            ExitCode::from(e.exit_code())
        }
    }
}

/// `meerkat run` (or the sample run), its summary line on stdout.
fn supervise(run: impl FnOnce(&mut dyn std::io::Write) -> Result<(), SupervisorError>) -> Outcome {
    run(&mut std::io::stdout()).map_err(|e| {
        if e.is_usage() {
            Failure::usage(e)
        } else {
            Failure::runtime(e)
        }
    })?;
    Ok(ExitCode::SUCCESS)
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
