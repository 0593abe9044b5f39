//! `meerkat`: one binary, many roles. `meerkat run` is the supervisor; `capture`,
//! `detect` and `eve-writer` are the roles it starts as separate processes; `ctl` and
//! `probe` are clients; `rules` and `config` are tools. The logic lives in the workspace
//! crates (the supervisor in `meerkat-supervisor`, the clients in `meerkat-ctl`); this is
//! the thin edge that parses arguments, sets up logging and signals, calls the crate's
//! `run`, and maps errors to exit codes.

// The binary's job includes printing results (summaries, `rules check`) on stdout.
#![allow(clippy::print_stdout)]

mod cli;
mod daemon;
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
    let mut cli = Cli::parse();
    if let Some(code) = informational(&cli) {
        return code;
    }
    if cli.command.is_some() && !cli.run.is_empty() {
        // `meerkat -r x.pcap run ...`: the run's options go after the command (or,
        // Suricata's way, without one).
        eprintln!(
            "meerkat: the options of `meerkat run` (-c, -r, -i, -S, -T, ...) go after the \
             command, or without a command as Suricata's command line"
        );
        return ExitCode::from(EXIT_USAGE);
    }
    // `-D` forks before anything else (no thread may exist yet), into the log directory.
    let mut ready_fd = None;
    if let Some(args) = run_args(&cli)
        && args.daemon
        && !args.test
        && !args.dump_config
        && !args.engine_analysis
    {
        let log = match daemon_log(args) {
            Ok(l) => l,
            Err(e) => {
                eprintln!("{}", e.message());
                return ExitCode::from(e.exit_code());
            }
        };
        match daemon::daemonize(&log) {
            Ok(fd) => ready_fd = Some(fd),
            Err(e) => {
                eprintln!("{e}");
                return ExitCode::from(EXIT_FAILURE);
            }
        }
    }
    logging::init(cli.verbose, cli.quiet, cli.log_format);
    signals::install_handlers();
    let log = LogArgs {
        verbose: cli.verbose,
        quiet: cli.quiet,
        json: cli.log_format == logging::LogFormat::Json,
    };
    let result = match cli.command.take() {
        None if cli.run.is_empty() => {
            supervise(|out| meerkat_supervisor::run_sample(&log, signals::flags(), out))
        }
        None => run(std::mem::take(&mut cli.run), &log, ready_fd),
        Some(Command::Run(args)) => run(args, &log, ready_fd),
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

/// `-V`, `--build-info`, `--list-keywords`, `--list-app-layer-protos`: printed, exit.
fn informational(cli: &Cli) -> Option<ExitCode> {
    if cli.suricata_version {
        println!("{}", meerkat_supervisor::compat::build_info::version_line());
    } else if cli.build_info {
        print!("{}", meerkat_supervisor::compat::build_info::build_info());
    } else if let Some(which) = &cli.list_keywords {
        use meerkat_supervisor::compat::lists;
        let ctx = match meerkat_detect::rules::RuleContext::from_config(
            &meerkat_config::Config::default(),
        ) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("{e}");
                return Some(ExitCode::from(EXIT_FAILURE));
            }
        };
        match lists::keywords(&lists::KeywordList::parse(Some(which)), &ctx) {
            Ok(text) => print!("{text}"),
            Err(e) => {
                eprintln!("{e}");
                return Some(ExitCode::from(EXIT_USAGE));
            }
        }
    } else if cli.list_app_layer_protos {
        print!("{}", meerkat_supervisor::compat::lists::app_layer_protos());
    } else {
        return None;
    }
    Some(ExitCode::SUCCESS)
}

/// The run options of the command line, if it runs the stack.
fn run_args(cli: &Cli) -> Option<&cli::RunArgs> {
    match &cli.command {
        None if !cli.run.is_empty() => Some(&cli.run),
        Some(Command::Run(a)) => Some(a),
        _ => None,
    }
}

/// Where `-D` writes the logs: `<log-dir>/meerkat.log`.
fn daemon_log(args: &cli::RunArgs) -> Result<std::path::PathBuf, Failure> {
    let opts: meerkat_supervisor::RunOptions = args.clone().into();
    let config = meerkat_supervisor::compat::resolve(&opts).map_err(Failure::usage)?;
    std::fs::create_dir_all(&config.default_log_dir).map_err(|e| {
        Failure::usage(anyhow::anyhow!(
            "cannot create log directory {}: {e}",
            config.default_log_dir.display()
        ))
    })?;
    Ok(config.default_log_dir.join("meerkat.log"))
}

/// `meerkat run` with its Suricata modes: `-T`, `--dump-config`, `--engine-analysis`, or
/// the stack (with `--pidfile`).
fn run(args: cli::RunArgs, log: &LogArgs, ready_fd: Option<i32>) -> Outcome {
    let pidfile = args.pidfile.clone();
    let (test, dump, analysis) = (args.test, args.dump_config, args.engine_analysis);
    let mut opts: meerkat_supervisor::RunOptions = args.into();
    opts.ready_fd = ready_fd;
    if test {
        // Suricata's -T exits 1 for every failure, the configuration's included.
        let report =
            meerkat_supervisor::compat::test_mode::test(&opts).map_err(Failure::runtime)?;
        return Ok(if report.passed(opts.init_errors_fatal) {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(EXIT_FAILURE)
        });
    }
    if dump {
        let config = meerkat_supervisor::compat::resolve(&opts).map_err(Failure::usage)?;
        print!("{}", meerkat_supervisor::compat::dump_config::text(&config));
        return Ok(ExitCode::SUCCESS);
    }
    if analysis {
        let w = meerkat_supervisor::compat::engine_analysis(&opts).map_err(|e| {
            if e.is_usage() {
                Failure::usage(e)
            } else {
                Failure::runtime(e)
            }
        })?;
        tracing::info!(
            rules = w.rules,
            failed = w.failed,
            "engine analysis written to {} and {}",
            w.rules_json.display(),
            w.analysis_txt.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let _pidfile = match &pidfile {
        Some(p) => {
            Some(daemon::Pidfile::create(p).map_err(|e| Failure::usage(anyhow::anyhow!(e)))?)
        }
        None => None,
    };
    supervise(|out| meerkat_supervisor::run(&opts, log, signals::flags(), out))
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
