//! Step 1 of a run: resolve the configuration and check everything the roles will need
//! (inputs, rule files, log directory, classification and reference files) before
//! starting any, so that a problem is one clear usage error rather than a role that dies
//! later. A rule file that does not exist is a warning, as in Suricata: the run goes on
//! without it (see [`RuleFiles`]).

use std::path::{Path, PathBuf};

use meerkat_config::Config;

use crate::{RunOptions, SupervisorError};

/// A path made absolute (the roles run in other working directories than the caller's
/// only in principle, but their config must not depend on it).
pub(crate) fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

fn check_readable(path: &Path, what: &'static str) -> Result<(), SupervisorError> {
    std::fs::File::open(path)
        .map(|_| ())
        .map_err(|source| SupervisorError::Unreadable {
            what,
            path: path.to_path_buf(),
            source,
        })
}

/// The resolved config (rule files, log directory and registry made absolute; its
/// `rule-files` are the rule files that exist), the absolute input paths, and the rule
/// files as configured.
#[cfg(test)]
pub(crate) fn prepare(opts: &RunOptions) -> Result<(Config, Vec<PathBuf>), SupervisorError> {
    prepare_with_rules(opts).map(|(c, i, _)| (c, i))
}

/// [`prepare`], with the rule files as configured.
pub(crate) fn prepare_with_rules(
    opts: &RunOptions,
) -> Result<(Config, Vec<PathBuf>, RuleFiles), SupervisorError> {
    if opts.runmode.is_some() {
        tracing::debug!("--runmode is accepted for Suricata compatibility and ignored");
    }
    if opts.simulate_ips {
        tracing::warn!("--simulate-ips is not available; running as an IDS");
    }
    let mut config = resolve_config(opts)?;
    if opts.pcap.is_empty() && !opts.live() && !config.supervisor.keep_running {
        return Err(SupervisorError::NoInput);
    }
    if opts.dpdk && !cfg!(feature = "dpdk") {
        return Err(SupervisorError::NoDpdk);
    }
    if let Some(iface) = &opts.interface
        && nix::net::if_::if_nametoindex(iface.as_str()).is_err()
    {
        return Err(SupervisorError::NoInterface(iface.clone()));
    }
    // A filter that does not compile is a usage error now, not a capture role that dies.
    let own = if let Some(iface) = &opts.interface {
        meerkat_config::live::af_packet_for(&config.af_packet, iface).bpf_filter
    } else if opts.dpdk {
        config.dpdk.port().and_then(|p| p.bpf_filter.clone())
    } else {
        None
    };
    if let Some(f) = config.bpf_filter_for(own.as_deref()) {
        meerkat_capture::bpf::check(f)?;
    }
    let inputs = check_inputs(&opts.pcap)?;
    if let Some(r) = &config.scanner.registry {
        config.scanner.registry = Some(absolute(r));
    }
    let files = RuleFiles::of(&config);
    files.warn();
    for r in &files.found {
        check_readable(r, "rule file")?;
    }
    config.rule_files = files.found_strings();
    config.default_log_dir = check_log_dir(&config.default_log_dir)?;
    check_rule_context(&mut config)?;
    Ok((config, inputs, files))
}

/// The classification and reference files: readable (made absolute), and the lines
/// that are not Suricata's syntax reported (they are skipped, as Suricata does). A file
/// that does not exist (a Suricata config's `/usr/local/etc/suricata/...` on a host
/// without Suricata) is a warning, and the built-in tables are used; as Suricata, which
/// goes on without it.
pub(crate) fn check_rule_context(config: &mut Config) -> Result<(), SupervisorError> {
    for (file, what) in [
        (&mut config.classification_file, "classification file"),
        (&mut config.reference_config_file, "reference config file"),
    ] {
        if let Some(c) = file {
            *c = absolute(c);
            if !c.exists() {
                tracing::warn!(
                    "the {what} {} does not exist: using the built-in one",
                    c.display()
                );
                *file = None;
                continue;
            }
            check_readable(c, what)?;
        }
    }
    // threshold.config: made absolute for the roles; its problems (a missing file
    // included, as Suricata warns and runs without it) are the workers' to report, as
    // they read it with the rules.
    if let Some(t) = &mut config.threshold_file {
        *t = absolute(t);
    }
    match meerkat_detect::rules::RuleContext::load(config) {
        Ok((_, problems)) => {
            for p in problems {
                tracing::warn!("{p} (line skipped)");
            }
            Ok(())
        }
        Err(e) => Err(SupervisorError::Unreadable {
            what: e.what,
            path: e.path,
            source: e.source,
        }),
    }
}

/// Where suricata-update writes the ruleset it makes (its default `--output`).
pub const SURICATA_UPDATE_RULES: &str = "/var/lib/suricata/rules/suricata.rules";

/// The configured rule files, split into those that exist and those that do not: as
/// Suricata, a run goes on without a missing rule file, with a warning (and with no
/// rules at all when none is there: protocol logs, flows and anomalies still work).
/// With the built-in `default-rule-path`/`rule-files` (no config or `-S` named rules)
/// and no `/etc/meerkat/rules/meerkat.rules`, the ruleset suricata-update writes by
/// default is used when it exists.
#[derive(Debug, Clone, Default)]
pub struct RuleFiles {
    /// Every configured file (absolute), in order: what a reload reads again.
    pub configured: Vec<PathBuf>,
    pub found: Vec<PathBuf>,
    pub missing: Vec<PathBuf>,
    /// The configured list was the built-in default and suricata-update's file was used.
    pub fell_back: bool,
}

impl RuleFiles {
    pub fn of(config: &Config) -> RuleFiles {
        let mut files = RuleFiles::default();
        for p in config.rule_paths() {
            let p = absolute(&p);
            files.configured.push(p.clone());
            if p.exists() {
                files.found.push(p);
            } else {
                files.missing.push(p);
            }
        }
        let default = Config::default();
        let is_default = config.rule_files == default.rule_files
            && config.default_rule_path == default.default_rule_path;
        let update = Path::new(SURICATA_UPDATE_RULES);
        if is_default && files.found.is_empty() && update.exists() {
            files.missing.clear();
            files.found.push(update.to_path_buf());
            files.configured = files.found.clone();
            files.fell_back = true;
        }
        files
    }

    /// The warnings a run or `-T` gives about missing files.
    pub fn warn(&self) {
        if self.fell_back {
            tracing::info!(
                "no rule files configured: using {SURICATA_UPDATE_RULES} (written by suricata-update)"
            );
        }
        for m in &self.missing {
            tracing::warn!("No rule files match the pattern {}", m.display());
        }
        if self.found.is_empty() && !self.missing.is_empty() {
            tracing::warn!(
                "{} rule files specified, but no rules were loaded! Running without rules \
                 (protocol logs, flows and anomalies only). Get rules with `suricata-update` \
                 (it writes {SURICATA_UPDATE_RULES}) or give a rule file with -S FILE.",
                self.missing.len()
            );
        }
    }

    pub fn found_strings(&self) -> Vec<String> {
        self.found.iter().map(|p| p.display().to_string()).collect()
    }
}

/// The config file with the command line's overrides, and its rule files (`-S`, `-s`).
pub(crate) fn resolve_config(opts: &RunOptions) -> Result<Config, SupervisorError> {
    let resolved = meerkat_app::config::resolve(opts.config.as_deref(), &opts.overrides()?)?;
    if !resolved.ignored_suricata_keys.is_empty() {
        tracing::warn!(
            "Suricata keys not modelled by Meerkat (ignored): {}",
            resolved.ignored_suricata_keys.join(", ")
        );
    }
    let mut config = resolved.config;
    if !opts.exclusive_rules.is_empty() {
        config.rule_files = opts
            .exclusive_rules
            .iter()
            .map(|p| absolute(p).display().to_string())
            .collect();
    }
    config.rule_files.extend(
        opts.extra_rules
            .iter()
            .map(|p| absolute(p).display().to_string()),
    );
    Ok(config)
}

/// Each input exists and is readable (a pattern: its literal leading directory).
fn check_inputs(pcaps: &[PathBuf]) -> Result<Vec<PathBuf>, SupervisorError> {
    let inputs: Vec<PathBuf> = pcaps.iter().map(|p| absolute(p)).collect();
    for p in &inputs {
        // A pattern (`/data/**/*.pcap`) needs its literal leading directory.
        if let Some(text) = p.to_str()
            && !p.exists()
            && meerkat_scanner::glob::is_pattern(text)
        {
            let g = meerkat_scanner::glob::Glob::new(text).map_err(|source| {
                SupervisorError::BadPattern {
                    text: text.to_string(),
                    source,
                }
            })?;
            std::fs::metadata(g.base()).map_err(|source| SupervisorError::PatternDir {
                text: text.to_string(),
                source,
            })?;
            continue;
        }
        std::fs::metadata(p).map_err(|source| SupervisorError::Unreadable {
            what: "pcap",
            path: p.clone(),
            source,
        })?;
        if !p.is_dir() {
            check_readable(p, "pcap")?;
        }
    }
    Ok(inputs)
}

/// The log directory, made absolute, created if missing, and writable.
pub(crate) fn check_log_dir(dir: &Path) -> Result<PathBuf, SupervisorError> {
    let log_dir = absolute(dir);
    std::fs::create_dir_all(&log_dir).map_err(|source| SupervisorError::LogDir {
        path: log_dir.clone(),
        source,
    })?;
    let probe = log_dir.join(format!(".meerkat-write-test-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(|source| SupervisorError::LogDirNotWritable {
        path: log_dir.clone(),
        source,
    })?;
    let _ = std::fs::remove_file(&probe);
    Ok(log_dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_inputs_and_rules_are_named() {
        let t = tempfile::tempdir().unwrap();
        let e = check_inputs(&[t.path().join("nope.pcap")]).unwrap_err();
        assert!(e.is_usage());
        assert!(e.to_string().starts_with("cannot read pcap "), "{e}");
        assert!(e.to_string().ends_with("nope.pcap"), "{e}");
        let opts = RunOptions {
            pcap: vec![t.path().to_path_buf()],
            exclusive_rules: vec![t.path().join("none.rules")],
            log_dir: Some(t.path().join("logs")),
            ..Default::default()
        };
        // A missing rule file is a warning: the run goes on without it, as Suricata's.
        let (config, _) = prepare(&opts).unwrap();
        assert!(config.rule_files.is_empty());
        let e = prepare(&RunOptions::default()).unwrap_err();
        assert!(matches!(e, SupervisorError::NoInput), "{e}");
    }
}
