//! `-V` and `--build-info`. suricata-update runs `suricata -V` and reads the first
//! `N.N.N` of its output as the Suricata version (it chooses the ET Open ruleset by it),
//! and `suricata --build-info`, of which it reads the line starting `This is Suricata
//! version`, `Features:` (e.g. `HAVE_NSS`, without which it disables the JA3 rules), and
//! `--prefix`, `--sysconfdir`, `--localstatedir`, `--datarootdir` (where it looks for
//! `classification.config`). Meerkat answers with the Suricata release it follows,
//! followed by its own name and version.

use super::SURICATA_VERSION;

/// Meerkat's version.
pub const MEERKAT_VERSION: &str = env!("CARGO_PKG_VERSION");

/// The `-V` line: `This is Suricata version 8.0.6 RELEASE (Meerkat 0.1.0)`.
pub fn version_line() -> String {
    format!("This is Suricata version {SURICATA_VERSION} RELEASE (Meerkat {MEERKAT_VERSION})")
}

/// The unix socket's `version` reply: `8.0.6 RELEASE (Meerkat 0.1.0)`.
pub fn version_message() -> String {
    format!("{SURICATA_VERSION} RELEASE (Meerkat {MEERKAT_VERSION})")
}

/// Whether this build prefilters with Hyperscan.
pub fn hyperscan() -> bool {
    meerkat_detect::engine::mpm::Algo::HYPERSCAN_AVAILABLE
}

/// Suricata's feature names that hold for this build.
pub fn features() -> Vec<&'static str> {
    let mut f = vec![
        "AF_PACKET",
        "HAVE_PACKET_FANOUT",
        "PCRE_JIT",
        // JA3/JA4 hashes of TLS client hellos (suricata-update keeps ja3 rules only
        // with HAVE_NSS).
        "HAVE_NSS",
        "HAVE_JA3",
        "HAVE_JA4",
        "HAVE_LIBJANSSON",
        "TLS",
        "RUST",
        "UNIX_SOCKET",
    ];
    if cfg!(feature = "dpdk") {
        f.push("HAVE_DPDK");
    }
    if hyperscan() {
        f.push("HAVE_HYPERSCAN");
    }
    f
}

fn yes(b: bool) -> &'static str {
    if b { "yes" } else { "no" }
}

/// The `--build-info` text.
pub fn build_info() -> String {
    let mut s = String::new();
    let mut line = |l: String| {
        s.push_str(&l);
        s.push('\n');
    };
    line(version_line());
    line(format!("Features: {}", features().join(" ")));
    line(format!(
        "Meerkat {MEERKAT_VERSION}: one process per role (capture, detect workers, eve-writer) under a supervisor"
    ));
    line(format!(
        "{}-bits, {}-endian architecture",
        usize::BITS,
        if cfg!(target_endian = "little") {
            "Little"
        } else {
            "Big"
        }
    ));
    line(String::new());
    line("Suricata Configuration:".to_string());
    for (k, v) in [
        ("AF_PACKET support", yes(cfg!(target_os = "linux"))),
        ("AF_XDP support", "no"),
        ("DPDK support", yes(cfg!(feature = "dpdk"))),
        ("eBPF support", "no"),
        ("PF_RING support", "no"),
        ("NFQueue support", "no"),
        ("Netmap support", "no"),
        ("Unix socket enabled", "yes"),
        ("Detection enabled", "yes"),
        ("libjansson support", "yes"),
        ("hiredis support", "yes"),
        ("PCRE jit", "yes"),
        ("JA3 support", "yes"),
        ("JA4 support", "yes"),
        ("Hyperscan support", yes(hyperscan())),
        ("Lua support", "no"),
    ] {
        line(format!("  {:<41}{v}", format!("{k}:")));
    }
    line(String::new());
    for (k, v) in [
        ("--prefix", "/usr"),
        ("--sysconfdir", "/etc"),
        ("--localstatedir", "/var"),
        ("--datarootdir", "/usr/share"),
    ] {
        line(format!("  {k:<41}{v}"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What suricata-update's parser reads (engine.get_build_info / parse_version).
    #[test]
    fn suricata_update_reads_version_features_and_dirs() {
        let v = version_line();
        assert!(
            v.starts_with("This is Suricata version 8.0.6 RELEASE"),
            "{v}"
        );
        let info = build_info();
        let mut seen = Vec::new();
        for l in info.lines().map(str::trim) {
            if let Some(rest) = l.strip_prefix("Features:") {
                let f: Vec<&str> = rest.split_whitespace().collect();
                assert!(f.contains(&"HAVE_NSS"));
                seen.push("features");
            }
            for k in [
                "--prefix",
                "--sysconfdir",
                "--localstatedir",
                "--datarootdir",
            ] {
                if l.starts_with(k) {
                    assert!(
                        l.split_whitespace()
                            .last()
                            .is_some_and(|v| v.starts_with('/'))
                    );
                    seen.push(k);
                }
            }
            if l.starts_with("This is Suricata version") {
                seen.push("version");
            }
            if let Some(hs) = l.strip_prefix("Hyperscan support:") {
                assert_eq!(hs.trim(), if hyperscan() { "yes" } else { "no" });
                seen.push("hyperscan");
            }
        }
        assert_eq!(
            seen,
            [
                "version",
                "features",
                "hyperscan",
                "--prefix",
                "--sysconfdir",
                "--localstatedir",
                "--datarootdir"
            ]
        );
    }
}
