//! `meerkat rules check` and `meerkat config check`.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use meerkat_detect::rules::{self, RuleContext};

use crate::cli::{ConfigCommand, RulesCommand};
use crate::{Failure, Outcome};

pub fn rules(cmd: RulesCommand) -> Outcome {
    let RulesCommand::Check {
        files,
        config,
        set,
        summary,
    } = cmd;
    let resolved = meerkat_app::config::resolve(config.as_deref(), &set).map_err(Failure::usage)?;
    let ctx = RuleContext::from_config(&resolved.config)
        .map_err(|e| Failure::usage(anyhow::anyhow!(e)))?;
    let loaded = rules::load_files(&files, &ctx).map_err(|e| Failure::usage(anyhow::anyhow!(e)))?;
    let mut out = std::io::stdout().lock();
    let mut by_reason: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_keyword: BTreeMap<String, usize> = BTreeMap::new();
    for p in &loaded.problems {
        if !summary {
            let _ = writeln!(out, "{p}");
        }
        *by_reason.entry(p.reason.clone()).or_default() += 1;
        if p.reason == "keyword not supported"
            && let Some(k) = &p.keyword
        {
            *by_keyword.entry(k.clone()).or_default() += 1;
        }
    }
    if summary {
        let t = std::time::Instant::now();
        let algo =
            meerkat_detect::engine::mpm::Algo::parse(&resolved.config.mpm_algo).unwrap_or_default();
        let engine = meerkat_detect::engine::Engine::with_algo(
            loaded.rules.clone(),
            loaded.names.clone(),
            algo,
        );
        let _ = writeln!(
            out,
            "engine built in {:.2} s: {}",
            t.elapsed().as_secs_f64(),
            engine.group_sizes()
        );
    }
    let _ = writeln!(
        out,
        "{} rules loaded, {} failed ({} files)",
        loaded.rules.len(),
        loaded.problems.len(),
        files.len()
    );
    if !by_reason.is_empty() {
        let _ = writeln!(out, "failed by reason:");
        let mut reasons: Vec<_> = by_reason.into_iter().collect();
        reasons.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (r, n) in reasons {
            let _ = writeln!(out, "  {n:>7}  {r}");
        }
    }
    if !by_keyword.is_empty() {
        let _ = writeln!(out, "unsupported keywords:");
        let mut kws: Vec<_> = by_keyword.into_iter().collect();
        kws.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (k, n) in kws {
            let _ = writeln!(out, "  {n:>7}  {k}");
        }
    }
    Ok(if loaded.problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

pub fn config(cmd: ConfigCommand) -> Outcome {
    let ConfigCommand::Check { file, set, print } = cmd;
    let resolved = meerkat_app::config::resolve(Some(&file), &set)
        .with_context(|| format!("{} is not a valid configuration", file.display()))
        .map_err(Failure::usage)?;
    for k in &resolved.ignored_suricata_keys {
        tracing::warn!("Suricata key not modelled by Meerkat (ignored): {k}");
    }
    if print {
        print!("{}", resolved.config.to_yaml());
    }
    println!("{}: ok", file.display());
    Ok(ExitCode::SUCCESS)
}
