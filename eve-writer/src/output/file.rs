//! Regular-file sink: append-only writes to `filename` (strftime pattern expanded at
//! each open), created with `filemode`, reopened on SIGHUP, the control call, and at
//! `rotate-interval`.
//!
//! Crash repair: a write(2) to a regular file is never torn by a kill, but a short
//! write on a full disk can leave a partial last line; if the writer then dies before
//! completing it, the file ends in a fragment. Those bytes belong to a batch that was
//! never acknowledged (its producer sends it again), so the first open of a run cuts
//! the file back to its last complete line.

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::pattern;

/// Permissions of created files unless `filemode` says otherwise.
pub const DEFAULT_MODE: u32 = 0o640;

#[derive(Debug)]
pub struct FileSink {
    /// The configured name (may hold a strftime pattern), threaded suffix applied.
    template: PathBuf,
    /// The file currently open.
    path: PathBuf,
    file: Option<File>,
    mode: u32,
    chmod: bool,
    /// Truncate at the first open (`append: no`).
    truncate_first: bool,
    opened_once: bool,
}

impl FileSink {
    pub fn new(template: PathBuf, mode: Option<u32>, append: bool) -> FileSink {
        FileSink {
            path: template.clone(),
            template,
            file: None,
            mode: mode.unwrap_or(DEFAULT_MODE),
            chmod: mode.is_some(),
            truncate_first: !append,
            opened_once: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether rotation makes new files (the name has a time pattern).
    pub fn is_timestamped(&self) -> bool {
        pattern::has_time_pattern(&self.template.to_string_lossy())
    }

    /// Opens (or reopens) the file: the pattern is expanded for `now`.
    pub fn open(&mut self, now: SystemTime) -> io::Result<()> {
        let name = pattern::expand(&self.template.to_string_lossy(), &pattern::local_time(now));
        let path = PathBuf::from(name);
        let first = !self.opened_once;
        let mut opts = OpenOptions::new();
        opts.create(true).mode(self.mode);
        if first && self.truncate_first {
            opts.write(true).truncate(true);
        } else {
            opts.append(true).read(first);
        }
        let mut file = opts.open(&path)?;
        if self.chmod {
            // As Suricata does: the mode applies to an existing file too.
            file.set_permissions(std::fs::Permissions::from_mode(self.mode))?;
        }
        if first && !self.truncate_first {
            let cut = repair_torn_tail(&mut file)?;
            if cut > 0 {
                tracing::warn!(
                    "{}: removed {cut} bytes of an incomplete last line (left by a crash \
                     during a short write; those events are sent again)",
                    path.display()
                );
            }
            // Reopen write-only in append mode (the repair needed read access).
            file = OpenOptions::new().append(true).open(&path)?;
        }
        self.file = Some(file);
        self.path = path;
        self.opened_once = true;
        Ok(())
    }

    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(data),
            None => Err(io::Error::new(
                io::ErrorKind::NotConnected,
                "file is not open",
            )),
        }
    }

    pub fn is_open(&self) -> bool {
        self.file.is_some()
    }
}

/// Cuts `file` back to just after its last newline; returns the bytes removed.
fn repair_torn_tail(file: &mut File) -> io::Result<u64> {
    let len = file.metadata()?.len();
    if len == 0 {
        return Ok(0);
    }
    const CHUNK: u64 = 64 * 1024;
    let mut end = len;
    let mut buf = vec![0u8; CHUNK as usize];
    // The common case: the last byte is a newline.
    file.seek(SeekFrom::Start(len - 1))?;
    let mut last = [0u8; 1];
    file.read_exact(&mut last)?;
    if last[0] == b'\n' {
        return Ok(0);
    }
    while end > 0 {
        let start = end.saturating_sub(CHUNK);
        let n = (end - start) as usize;
        file.seek(SeekFrom::Start(start))?;
        file.read_exact(&mut buf[..n])?;
        if let Some(i) = memchr::memrchr(b'\n', &buf[..n]) {
            let keep = start + i as u64 + 1;
            file.set_len(keep)?;
            return Ok(len - keep);
        }
        end = start;
    }
    file.set_len(0)?;
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repairs_a_torn_last_line_once() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("eve.json");
        std::fs::write(&p, b"{\"a\":1}\n{\"b\":2}\n{\"c\":").unwrap();
        let mut s = FileSink::new(p.clone(), None, true);
        s.open(SystemTime::now()).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"{\"a\":1}\n{\"b\":2}\n");
        s.write(b"{\"d\":4}\n").unwrap();
        s.open(SystemTime::now()).unwrap();
        s.write(b"{\"e\":").unwrap();
        // A reopen (rotation) never cuts: only the first open of a run repairs.
        s.open(SystemTime::now()).unwrap();
        assert_eq!(
            std::fs::read(&p).unwrap(),
            b"{\"a\":1}\n{\"b\":2}\n{\"d\":4}\n{\"e\":"
        );
        let fresh = dir.path().join("new.json");
        FileSink::new(fresh.clone(), None, true)
            .open(SystemTime::now())
            .unwrap();
        let meta = std::fs::metadata(&fresh).unwrap();
        // Created with 0640 (less the umask, which never adds bits).
        assert_eq!(meta.permissions().mode() & 0o777 & !DEFAULT_MODE, 0);
    }

    #[test]
    fn mode_truncate_and_patterns() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("x.json");
        std::fs::write(&p, b"old\n").unwrap();
        let mut s = FileSink::new(p.clone(), Some(0o600), false);
        s.open(SystemTime::now()).unwrap();
        s.write(b"new\n").unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new\n");
        let meta = std::fs::metadata(&p).unwrap();
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);

        let t = dir.path().join("eve-%Y.json");
        let mut s = FileSink::new(t, None, true);
        assert!(s.is_timestamped());
        s.open(SystemTime::now()).unwrap();
        let year = pattern::local_time(SystemTime::now()).year;
        assert_eq!(s.path(), dir.path().join(format!("eve-{year}.json")));
    }
}
