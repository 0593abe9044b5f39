//! One role process: started from this executable with the role's subcommand, reaped
//! with its resource use, signalled.

use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};

use crate::{LogArgs, SupervisorError};

/// Resource use of a finished role (from wait4).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Usage {
    pub(crate) cpu_us: u64,
    pub(crate) max_rss_kb: u64,
}

/// One started role process.
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) pid: libc::pid_t,
    pub(crate) exited: Option<ExitStatus>,
    pub(crate) usage: Usage,
}

impl Process {
    /// Starts `meerkat <args>` (this executable) as role `name`. If the supervisor dies,
    /// the role gets SIGTERM and drains instead of running on unsupervised.
    pub(crate) fn spawn(
        name: &str,
        args: &[String],
        log: &LogArgs,
    ) -> Result<Process, SupervisorError> {
        let exe = std::env::current_exe().map_err(SupervisorError::NoExecutable)?;
        let mut cmd = Command::new(exe);
        cmd.args(log.args()).args(args).stdin(Stdio::null());
        // SAFETY: prctl in the child before exec is async-signal-safe.
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
                Ok(())
            });
        }
        let child = cmd.spawn().map_err(|source| SupervisorError::Spawn {
            role: name.to_string(),
            source,
        })?;
        tracing::debug!(role = name, pid = child.id(), "started");
        Ok(Process {
            pid: libc::pid_t::try_from(child.id()).map_err(SupervisorError::Pid)?,
            exited: None,
            usage: Usage::default(),
        })
    }

    /// Reaps the role if it has exited (with its resource use).
    pub(crate) fn poll(&mut self) -> Option<ExitStatus> {
        if self.exited.is_none() {
            self.reap(libc::WNOHANG);
        }
        self.exited
    }

    /// Blocks until the role exits.
    pub(crate) fn wait(&mut self) -> ExitStatus {
        while self.exited.is_none() {
            self.reap(0);
        }
        self.exited.unwrap_or_default()
    }

    fn reap(&mut self, flags: libc::c_int) {
        use std::os::unix::process::ExitStatusExt;
        let mut status = 0;
        // SAFETY: wait4 on our own child; status and rusage are owned out-parameters.
        let (r, ru) = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            let r = libc::wait4(self.pid, &mut status, flags, &mut ru);
            (r, ru)
        };
        if r == self.pid {
            let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
            self.usage = Usage {
                cpu_us: us(ru.ru_utime) + us(ru.ru_stime),
                max_rss_kb: ru.ru_maxrss as u64,
            };
            self.exited = Some(ExitStatus::from_raw(status));
        } else if r < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            // Reaped elsewhere: report a plain failure rather than waiting forever.
            self.exited = Some(ExitStatus::from_raw(1 << 8));
        }
    }

    pub(crate) fn signal(&self, sig: libc::c_int) {
        if self.exited.is_none() {
            // SAFETY: sending a signal to our own, not yet reaped, child process.
            unsafe {
                libc::kill(self.pid, sig);
            }
        }
    }
}

/// How a role ended, for logs and `Status`.
pub(crate) fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => format!("exit code {c}"),
        (None, Some(s)) => format!("killed by signal {s}"),
        _ => status.to_string(),
    }
}
