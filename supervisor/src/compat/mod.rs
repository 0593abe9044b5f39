//! What Suricata's tools ask of the `suricata` binary, answered for Meerkat:
//! `-V` and `--build-info` ([`build_info`]: the version and features that
//! suricata-update reads), `--dump-config` ([`dump_config`]: the resolved configuration
//! as Suricata's `key = value` lines), `-T` ([`test_mode`]: check the configuration and
//! the rules, exit 0 or 1 with every problem), `--list-keywords`,
//! `--list-app-layer-protos` ([`lists`]) and `--engine-analysis` ([`analysis`]: a report
//! per rule).

pub mod analysis;
pub mod build_info;
pub mod dump_config;
pub mod lists;
pub mod test_mode;

/// The Suricata release whose rule language, EVE output and configuration Meerkat
/// follows (what `-V`, `--build-info` and the unix socket's `version` report, so that
/// suricata-update picks rules for it).
pub const SURICATA_VERSION: &str = "8.0.6";

use meerkat_config::Config;

use crate::prepare::{RuleFiles, check_log_dir, check_rule_context, resolve_config};
use crate::{RunOptions, SupervisorError};

/// The configuration a command line resolves to (`-c`, `--set`, `-l`, `-S`, `-s`), for
/// `--dump-config`.
pub fn resolve(opts: &RunOptions) -> Result<Config, SupervisorError> {
    resolve_config(opts)
}

/// `--engine-analysis`: loads the rules of the command line's configuration and writes
/// the report into its log directory.
pub fn engine_analysis(opts: &RunOptions) -> Result<analysis::Written, SupervisorError> {
    let mut config = resolve_config(opts)?;
    let dir = check_log_dir(&config.default_log_dir)?;
    let files = RuleFiles::of(&config);
    files.warn();
    check_rule_context(&mut config)?;
    let ctx =
        meerkat_detect::rules::RuleContext::from_config(&config).map_err(SupervisorError::Rules)?;
    let loaded =
        meerkat_detect::rules::load_files(&files.found, &ctx).map_err(SupervisorError::Rules)?;
    analysis::write(&dir, &loaded, &ctx).map_err(|source| SupervisorError::Write {
        path: dir.join("rules.json"),
        source,
    })
}
