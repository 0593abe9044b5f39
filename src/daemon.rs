//! `-D` (run in the background, as `suricata -D`) and `--pidfile`: the process-level
//! parts that must happen in the binary, before any thread starts.

use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Forks. The parent waits until the child says the stack runs (one byte on a pipe) and
/// exits 0, or 1 when the child ends first; the child leaves the terminal (`setsid`),
/// writes its stdout and stderr to `log` (appended) and gets the pipe's write end, to be
/// handed to the supervisor (`RunOptions::ready_fd`).
pub fn daemonize(log: &Path) -> Result<i32, String> {
    let logfile = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|e| format!("-D: cannot open {}: {e}", log.display()))?;
    let mut fds = [0; 2];
    // SAFETY: pipe fills the two descriptors of the array we own.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return Err(format!("-D: pipe: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: both descriptors were just made and are owned here only.
    let (read_end, write_end) =
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
    // SAFETY: no thread has been started yet (this runs first in main), so the child
    // is a full copy of a single-threaded process.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("-D: fork: {}", std::io::Error::last_os_error()));
    }
    if pid > 0 {
        drop(write_end);
        let mut f = std::fs::File::from(read_end);
        let mut b = [0u8; 1];
        let ok = matches!(f.read(&mut b), Ok(1));
        if !ok {
            eprintln!(
                "meerkat -D: the stack did not start (see {})",
                log.display()
            );
        }
        std::process::exit(if ok { 0 } else { 1 });
    }
    drop(read_end);
    let null = std::fs::File::open("/dev/null").map_err(|e| format!("-D: /dev/null: {e}"))?;
    // SAFETY: setsid and dup2 on descriptors this process owns.
    unsafe {
        libc::setsid();
        libc::dup2(null.as_raw_fd(), 0);
        libc::dup2(logfile.as_raw_fd(), 1);
        libc::dup2(logfile.as_raw_fd(), 2);
    }
    let fd = write_end.as_raw_fd();
    // The descriptor is the supervisor's to write and close.
    std::mem::forget(write_end);
    Ok(fd)
}

/// A pidfile, removed when dropped.
#[derive(Debug)]
pub struct Pidfile(PathBuf);

impl Pidfile {
    /// Writes this process's pid to `path`; a pidfile of another live process is an
    /// error (that stack still runs), a stale one is replaced.
    pub fn create(path: &Path) -> Result<Pidfile, String> {
        if let Ok(old) = std::fs::read_to_string(path)
            && let Ok(pid) = old.trim().parse::<i32>()
            && pid > 0
            && pid as u32 != std::process::id()
            // SAFETY: signal 0 only checks that the process exists.
            && unsafe { libc::kill(pid, 0) } == 0
        {
            return Err(format!(
                "--pidfile {}: process {pid} is running (another meerkat?)",
                path.display()
            ));
        }
        std::fs::write(path, format!("{}\n", std::process::id()))
            .map_err(|e| format!("--pidfile {}: {e}", path.display()))?;
        Ok(Pidfile(path.to_path_buf()))
    }
}

impl Drop for Pidfile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
