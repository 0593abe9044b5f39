//! EVE outputs and their buffers.
//!
//! Buffering follows Suricata's `buffer-size`: 0 writes every event line with its own
//! write(2); N > 0 collects lines and writes when the next line would not fit (a line
//! larger than the buffer is written alone). A line is never split between two writes of
//! our own making, and lines never interleave. Each output counts the bytes it accepted
//! and the bytes it handed to the OS, so that acknowledgements can wait for the latter.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// A regular-file output.
#[derive(Debug)]
pub struct FileOutput {
    path: PathBuf,
    file: File,
    buf: Vec<u8>,
    capacity: usize,
    /// Bytes accepted (buffered or written).
    pub accepted: u64,
    /// Bytes handed to the OS.
    pub written: u64,
    pub write_calls: u64,
}

impl FileOutput {
    /// Opens `path` for appending (created with mode 0640).
    pub fn open(path: &Path, buffer_size: usize) -> io::Result<FileOutput> {
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o640)
            .open(path)?;
        Ok(FileOutput {
            path: path.to_path_buf(),
            file,
            buf: Vec::with_capacity(buffer_size),
            capacity: buffer_size,
            accepted: 0,
            written: 0,
            write_calls: 0,
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn write_all(&mut self, mut data: &[u8]) -> io::Result<()> {
        while !data.is_empty() {
            self.write_calls += 1;
            match self.file.write(data) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.written += n as u64;
                    data = &data[n..];
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Takes one complete line (with its newline).
    pub fn write_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.accepted += line.len() as u64;
        if self.capacity == 0 {
            return self.write_all(line);
        }
        if self.buf.len() + line.len() > self.capacity {
            self.flush()?;
        }
        if line.len() > self.capacity {
            return self.write_all(line);
        }
        self.buf.extend_from_slice(line);
        Ok(())
    }

    /// Hands everything buffered to the OS.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let buf = std::mem::take(&mut self.buf);
        let r = self.write_all(&buf);
        self.buf = buf;
        self.buf.clear();
        r
    }

    /// Whether everything accepted has been handed to the OS.
    pub fn is_flushed(&self) -> bool {
        self.buf.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbuffered_is_one_write_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("eve.json");
        let mut o = FileOutput::open(&p, 0).unwrap();
        for _ in 0..10 {
            o.write_line(b"{\"a\":1}\n").unwrap();
        }
        assert_eq!(o.write_calls, 10);
        assert_eq!(std::fs::read(&p).unwrap().len(), 80);
    }

    #[test]
    fn buffered_writes_whole_lines_when_full() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("eve.json");
        let mut o = FileOutput::open(&p, 20).unwrap();
        for _ in 0..5 {
            o.write_line(b"0123456789\n").unwrap(); // 11 bytes: one fits, two do not
        }
        assert_eq!(o.write_calls, 4);
        assert!(!o.is_flushed());
        assert_eq!(o.written, 44);
        o.write_line(&[b'x'; 30]).unwrap(); // larger than the buffer: flush, then alone
        assert_eq!(o.write_calls, 6);
        o.flush().unwrap();
        assert!(o.is_flushed());
        assert_eq!(std::fs::read(&p).unwrap().len(), 55 + 30);
        assert_eq!(o.accepted, o.written);
    }
}
