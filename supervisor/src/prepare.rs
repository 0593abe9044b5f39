//! Step 1 of a run: resolve the configuration and check everything the roles will need
//! (inputs, rule files, log directory, classification file) before starting any, so that
//! a problem is one clear usage error rather than a role that dies later.

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

/// The resolved config (rule files, log directory and registry made absolute) and the
/// absolute input paths.
pub(crate) fn prepare(opts: &RunOptions) -> Result<(Config, Vec<PathBuf>), SupervisorError> {
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
    config.rule_files = config
        .rule_paths()
        .iter()
        .map(|p| absolute(p).display().to_string())
        .collect();
    for r in config.rule_paths() {
        check_readable(&r, "rule file")?;
    }
    config.default_log_dir = check_log_dir(&config.default_log_dir)?;
    if let Some(c) = &config.classification_file {
        check_readable(c, "classification file")?;
    }
    Ok((config, inputs))
}

/// The config file with the command line's overrides, and its rule files (`-S`, `-s`).
fn resolve_config(opts: &RunOptions) -> Result<Config, SupervisorError> {
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
fn check_log_dir(dir: &Path) -> Result<PathBuf, SupervisorError> {
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
        let e = prepare(&opts).unwrap_err();
        assert!(e.to_string().contains("cannot read rule file"), "{e}");
        let e = prepare(&RunOptions::default()).unwrap_err();
        assert!(matches!(e, SupervisorError::NoInput), "{e}");
    }
}
