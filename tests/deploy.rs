//! The deploy check (`deploy/check.sh`) as part of the test command: the image built with
//! podman, the docker-compose stack run on the sample pcap, the Kubernetes manifests
//! validated, the configs checked (see `deploy/README.md`). It needs root, podman,
//! docker-compose and kubernetes-validate (`.ci/setup.d/40-deploy.sh` installs them) and
//! skips, saying why, without them or with `MEERKAT_DEPLOY_CHECK=0`. The image ships the
//! binary this test run built.

#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::path::Path;
use std::process::Command;

fn have(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
}

/// Why the check cannot run here, if it cannot.
fn skip_reason() -> Option<String> {
    if std::env::var("MEERKAT_DEPLOY_CHECK").as_deref() == Ok("0") {
        return Some("MEERKAT_DEPLOY_CHECK=0".to_string());
    }
    for tool in [
        "podman",
        "docker-compose",
        "kubernetes-validate",
        "debootstrap",
    ] {
        if !have(tool) {
            return Some(format!(
                "{tool} is not installed (bash .ci/setup.d/40-deploy.sh installs the tools)"
            ));
        }
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        return Some("rootful podman needs root".to_string());
    }
    None
}

#[test]
fn deploy_check() {
    if let Some(why) = skip_reason() {
        println!("deploy check skipped: {why}");
        return;
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let log = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deploy-check.log");
    let out = Command::new("bash")
        .arg(root.join("deploy/check.sh"))
        .arg("--bin")
        .arg(env!("CARGO_BIN_EXE_meerkat"))
        .current_dir(root)
        .output()
        .unwrap();
    let text = format!(
        "{}\n--- stderr ---\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::write(&log, &text).unwrap();
    assert!(
        out.status.success(),
        "deploy/check.sh failed ({}); its output (also in {}):\n{text}",
        out.status,
        log.display()
    );
    // The step timings.
    let stdout = String::from_utf8_lossy(&out.stdout);
    if let Some(i) = stdout.find("== deploy check passed") {
        println!("{}", &stdout[i..]);
    }
}
