//! With the `dpdk` feature: compiles `dpdk/shim.c` against the system's DPDK, found with
//! `pkg-config libdpdk` (Debian: `apt-get install libdpdk-dev`). Without it: nothing, so
//! the default build needs only cargo.

fn main() {
    #[cfg(feature = "dpdk")]
    dpdk();
}

#[cfg(feature = "dpdk")]
fn dpdk() {
    use std::process::Command;
    println!("cargo:rerun-if-changed=dpdk/shim.c");
    println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
    let pkg = |arg: &str| -> Vec<String> {
        let out = Command::new("pkg-config")
            .args([arg, "libdpdk"])
            .output()
            .unwrap_or_else(|e| panic!("the dpdk feature needs pkg-config: {e}"));
        if !out.status.success() {
            panic!(
                "the dpdk feature needs DPDK's development files (pkg-config libdpdk failed: {}); on Debian: apt-get install libdpdk-dev",
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        String::from_utf8_lossy(&out.stdout)
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let mut build = cc::Build::new();
    build.file("dpdk/shim.c").warnings(true);
    let cflags = pkg("--cflags");
    let mut it = cflags.iter();
    while let Some(f) = it.next() {
        if let Some(dir) = f.strip_prefix("-I") {
            build.include(dir);
        } else if f == "-include" {
            if let Some(h) = it.next() {
                build.flag("-include").flag(h);
            }
        } else {
            build.flag(f);
        }
    }
    build.compile("meerkat_dpdk_shim");
    for f in pkg("--libs") {
        if let Some(dir) = f.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = f.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
        }
    }
}
