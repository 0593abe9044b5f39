//! Meerkat's supervisor: `meerkat run`.
//!
//! [`run`] takes a run from its command line to its summary, in named steps: resolve the
//! configuration and check the inputs (`prepare`), lay out the runtime directory (the
//! resolved config and one ring per worker, `runtime_dir`), roll back the outputs of an
//! interrupted directory run, serve the control API (`control`, before any role: a probe
//! sees "starting" from the first moment), start the roles in dependency order and wait
//! until each is ready (`stack`), supervise them while capture reads the inputs:
//! restart the dead with a backoff, stop on a crash loop, serve the control API's
//! requests, and drain on SIGTERM or at the end of the input (`supervise`), then write
//! the summary (`summary`).
//!
//! Each role is the same executable started with its subcommand (`meerkat eve-writer`,
//! `meerkat detect --worker N`, `meerkat capture -r ...`) and the resolved config; it
//! lives in its own crate. The names of the runtime directory's files and of the
//! counters are `meerkat-runtime`'s. [`peers`] is how a role started on its own (a
//! container of a compose stack or pod) waits for the peers that the supervisor would
//! otherwise have started first.
//!
//! [`control`] also serves Suricata's unix-socket protocol (`unix-command`, for
//! `suricatasc` and the tools that speak it) as a second front on the same actions, and
//! reloads the rules on SIGUSR2. [`compat`] answers what Suricata's tools ask of the
//! binary: `-V`, `--build-info`, `--dump-config`, `-T`, `--list-keywords`,
//! `--engine-analysis`.
//!
//! Errors are [`SupervisorError`]s; [`SupervisorError::is_usage`] tells the usage and
//! configuration errors found before anything starts from failures while running.

pub mod compat;
pub mod control;
mod error;
mod options;
pub mod peers;
pub(crate) mod prepare;
mod process;
mod run;
mod runtime_dir;
mod stack;
mod summary;
mod supervise;

pub use control::ControlError;
pub use error::SupervisorError;
pub use options::{LogArgs, RunOptions, Signals};
pub use prepare::{RuleFiles, SURICATA_UPDATE_RULES};
pub use run::{run, run_sample};
