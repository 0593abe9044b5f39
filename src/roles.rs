//! The role subcommands: each loads its config, waits for the peers it needs (see
//! `meerkat_supervisor::peers`: a role may be started on its own, in any order) and calls
//! its crate's `run`.

use std::process::ExitCode;

use crate::cli::{CaptureArgs, DetectArgs, RoleArgs};
use meerkat_supervisor::peers;

use crate::{Failure, Outcome, signals};

fn load(args: &RoleArgs) -> Result<meerkat_config::Config, Failure> {
    let resolved =
        meerkat_app::config::resolve(args.config.as_deref(), &args.set).map_err(Failure::usage)?;
    if !resolved.ignored_suricata_keys.is_empty() {
        tracing::warn!(
            "Suricata keys not modelled by Meerkat (ignored): {}",
            resolved.ignored_suricata_keys.join(", ")
        );
    }
    Ok(resolved.config)
}

pub fn capture(args: &CaptureArgs) -> Outcome {
    let config = load(&args.role)?;
    let _span = tracing::info_span!("capture").entered();
    let runtime = peers::runtime_dir(&config).map_err(Failure::usage)?;
    if !peers::wait_for_workers(&runtime, config.workers(), &signals::STOP) {
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(iface) = &args.interface {
        let s = meerkat_capture::run_af_packet(&config, iface, &signals::STOP)
            .map_err(Failure::runtime)?;
        s.log("capture done");
        return Ok(ExitCode::SUCCESS);
    }
    if args.dpdk {
        return capture_dpdk(&config);
    }
    let opts = meerkat_capture::OfflineOptions {
        resume: args.resume,
        keep_open: args.keep_open,
    };
    let s = meerkat_capture::run_offline_with(&config, &args.pcap, &signals::STOP, opts)
        .map_err(Failure::runtime)?;
    tracing::info!(
        packets = s.packets,
        bytes = s.bytes,
        files = s.files,
        input_errors = s.input_errors,
        stopped = s.stopped,
        "capture done"
    );
    Ok(ExitCode::SUCCESS)
}

#[cfg(feature = "dpdk")]
fn capture_dpdk(config: &meerkat_config::Config) -> Outcome {
    let s = meerkat_capture::run_dpdk(config, &signals::STOP).map_err(Failure::runtime)?;
    s.log("capture done");
    Ok(ExitCode::SUCCESS)
}

#[cfg(not(feature = "dpdk"))]
fn capture_dpdk(_: &meerkat_config::Config) -> Outcome {
    Err(Failure::usage(anyhow::anyhow!(
        "this meerkat was built without DPDK support (build with `--features dpdk`)"
    )))
}

pub fn detect(args: &DetectArgs) -> Outcome {
    let config = load(&args.role)?;
    let _span = tracing::info_span!("detect", worker = args.worker).entered();
    let runtime = peers::runtime_dir(&config).map_err(Failure::usage)?;
    if !peers::wait_for_writer(&runtime, &signals::STOP) {
        return Ok(ExitCode::SUCCESS);
    }
    let s = meerkat_detect::worker::run_generation(
        &config,
        args.worker,
        args.generation,
        &signals::STOP,
    )
    .map_err(Failure::runtime)?;
    tracing::info!(
        packets = s.packets,
        alerts = s.alerts,
        events = s.events,
        "detect done"
    );
    Ok(ExitCode::SUCCESS)
}

pub fn eve_writer(args: &RoleArgs) -> Outcome {
    let config = load(args)?;
    let _span = tracing::info_span!("eve-writer").entered();
    peers::runtime_dir(&config).map_err(Failure::usage)?;
    meerkat_eve_writer::run(&config, &signals::STOP, &signals::HUP).map_err(Failure::runtime)?;
    Ok(ExitCode::SUCCESS)
}
