//! A veth pair inside a private network namespace, for the live-capture tests, the
//! micro-burst harness and the capture-rate benchmark.
//!
//! Both ends live in the namespace, so traffic sent on one end reaches only the other end
//! and never any network outside it. IPv6 is off in the namespace so the kernel itself
//! sends nothing (no router or neighbour solicitations) and the capture sees only what the
//! test sent. The namespace (and with it the pair) is deleted when the value is dropped,
//! also when a test fails. Needs root and `ip` (iproute2); [`VethNs::unavailable`] says
//! why not, so that tests can skip with a message.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A network namespace holding the veth pair `a` <-> `b`.
#[derive(Debug)]
pub struct VethNs {
    pub name: String,
    /// The sending end.
    pub a: String,
    /// The capturing end.
    pub b: String,
}

fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run ip: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "ip {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

impl VethNs {
    /// Why a namespace cannot be made here (not root, no `ip`), or `None` if it can.
    pub fn unavailable() -> Option<String> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Some("needs root (network namespaces, veth, AF_PACKET)".to_string());
        }
        match Command::new("ip").arg("-V").output() {
            Ok(o) if o.status.success() => None,
            _ => Some("needs `ip` from iproute2".to_string()),
        }
    }

    /// Creates the namespace `mk-<tag>-<pid>-<n>` with a veth pair of MTU `mtu`, both ends up.
    pub fn create(tag: &str, mtu: u32) -> Result<VethNs, String> {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let name = format!("mk-{tag}-{}-{n}", std::process::id());
        run(&["netns", "add", &name])?;
        // From here on, Drop removes the namespace whatever fails next.
        let ns = VethNs {
            a: "mkva".to_string(),
            b: "mkvb".to_string(),
            name,
        };
        for key in ["all", "default"] {
            let k = format!("net.ipv6.conf.{key}.disable_ipv6=1");
            let _ = Command::new("ip")
                .args(["netns", "exec", &ns.name, "sysctl", "-qw", &k])
                .output();
        }
        let mtu = mtu.to_string();
        run(&[
            "-n", &ns.name, "link", "add", &ns.a, "type", "veth", "peer", "name", &ns.b,
        ])?;
        for dev in [&ns.a, &ns.b] {
            run(&["-n", &ns.name, "link", "set", dev, "mtu", &mtu, "up"])?;
        }
        run(&["-n", &ns.name, "link", "set", "lo", "up"])?;
        Ok(ns)
    }

    /// A command that runs `program` inside the namespace.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.name]).arg(program);
        c
    }

    /// Moves the calling thread into the namespace (sockets it opens then belong there).
    pub fn enter_current_thread(&self) -> Result<(), String> {
        let path = Path::new("/run/netns").join(&self.name);
        let f = std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        use std::os::fd::AsRawFd;
        // SAFETY: setns on a namespace file we hold open; it changes only this thread's
        // network namespace.
        let r = unsafe { libc::setns(f.as_raw_fd(), libc::CLONE_NEWNET) };
        if r != 0 {
            return Err(format!(
                "setns {}: {}",
                self.name,
                std::io::Error::last_os_error()
            ));
        }
        Ok(())
    }

    /// A statistics counter of an interface in the namespace (`rx_dropped`, ...).
    pub fn link_stat(&self, dev: &str, stat: &str) -> Option<u64> {
        let out = self
            .command("cat")
            .arg(format!("/sys/class/net/{dev}/statistics/{stat}"))
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout).trim().parse().ok()
    }
}

impl Drop for VethNs {
    fn drop(&mut self) {
        let _ = run(&["netns", "del", &self.name]);
    }
}
