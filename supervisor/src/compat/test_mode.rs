//! `-T`: check the configuration and the rules without running, as Suricata's `-T` (what
//! suricata-update runs on the ruleset it made before it installs it). Every problem is
//! logged; the check fails (exit 1) when the configuration does not load, a
//! classification or reference file has lines that are not Suricata's syntax, a rule
//! has an error Suricata would also reject (see `RuleProblem::is_error`), or rule files
//! are configured and no rule loads. A rule that Suricata accepts and Meerkat does not
//! load yet (a keyword or protocol it does not implement) is a warning, so a ruleset
//! made for Suricata passes; `--init-errors-fatal` makes every rule that does not load
//! fail the check.

use meerkat_detect::rules::{self, RuleContext};

use crate::prepare::{RuleFiles, check_log_dir, check_rule_context, resolve_config};
use crate::{RunOptions, SupervisorError};

/// What `-T` found.
#[derive(Debug, Default)]
pub struct TestReport {
    pub rules_loaded: usize,
    /// Rules that Suricata would reject too.
    pub rule_errors: usize,
    /// Rules Meerkat does not load that Suricata would.
    pub rules_unsupported: usize,
    /// Lines of the classification and reference files that are not their syntax.
    pub file_errors: usize,
    /// Rule files were configured and none loaded a rule.
    pub no_rules: bool,
}

impl TestReport {
    /// Whether the check passes (`init_errors_fatal`: no rule may fail to load).
    pub fn passed(&self, init_errors_fatal: bool) -> bool {
        self.rule_errors == 0
            && self.file_errors == 0
            && !self.no_rules
            && !(init_errors_fatal && self.rules_unsupported > 0)
    }
}

/// Runs the check (`Err`: the configuration itself does not load).
pub fn test(opts: &RunOptions) -> Result<TestReport, SupervisorError> {
    let mut config = resolve_config(opts)?;
    if opts.log_dir.is_some() {
        config.default_log_dir = check_log_dir(&config.default_log_dir)?;
    }
    let files = RuleFiles::of(&config);
    files.warn();
    config.rule_files = files.found_strings();
    check_rule_context(&mut config)?;
    let mut report = TestReport::default();
    let (ctx, problems) = RuleContext::load(&config).map_err(|e| SupervisorError::Unreadable {
        what: e.what,
        path: e.path,
        source: e.source,
    })?;
    for p in &problems {
        tracing::error!("{p}");
    }
    report.file_errors = problems.len();
    let loaded = rules::load_files(&files.found, &ctx).map_err(SupervisorError::Rules)?;
    for p in &loaded.problems {
        if p.is_error() {
            report.rule_errors += 1;
            tracing::error!("{p}");
        } else {
            report.rules_unsupported += 1;
            if opts.init_errors_fatal {
                tracing::error!("{p}");
            } else {
                tracing::warn!("{p} (a Suricata rule Meerkat does not load yet: skipped)");
            }
        }
    }
    // threshold.config: a line that is not its syntax fails the test, as Suricata's -T;
    // entries that do nothing and a missing file are warnings.
    for p in &loaded.threshold_problems {
        report.file_errors += 1;
        tracing::error!("threshold-file: {p}");
    }
    for p in &loaded.threshold_warnings {
        tracing::warn!("threshold-file: {p}");
    }
    for (file, line, sid, system) in ctx.unknown_references(&loaded.rules) {
        tracing::warn!(
            "{}:{line} sid {sid}: unknown reference key \"{system}\"",
            file.display()
        );
    }
    report.rules_loaded = loaded.rules.len();
    report.no_rules = !files.configured.is_empty() && loaded.rules.is_empty();
    if report.no_rules {
        tracing::error!(
            "{} rule files specified, but no rules were loaded",
            files.configured.len()
        );
    }
    let ok = report.passed(opts.init_errors_fatal);
    if ok {
        tracing::info!(
            rules = report.rules_loaded,
            not_loaded = report.rules_unsupported,
            "Configuration provided was successfully loaded. Exiting."
        );
    } else {
        tracing::error!(
            rule_errors = report.rule_errors,
            not_loaded = report.rules_unsupported,
            file_errors = report.file_errors,
            "Loading signatures failed."
        );
    }
    Ok(report)
}
