//! Unix socket sinks: `unix_stream` and `unix_dgram` connect to the socket at
//! `filename` (a reader such as a log shipper listens there). Both are non-blocking:
//! a full socket is "not now" (the data waits in the output's buffer and the writer
//! tries again shortly), and a reader that went away is reconnected when it comes back.
//! A datagram carries exactly one EVE line (with its newline).

use std::io::{self, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};

#[derive(Debug)]
pub struct StreamSink {
    path: PathBuf,
    sock: Option<UnixStream>,
}

impl StreamSink {
    pub fn new(path: PathBuf) -> StreamSink {
        StreamSink { path, sock: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn connect(&mut self) -> io::Result<()> {
        self.sock = None;
        let s = UnixStream::connect(&self.path)?;
        s.set_nonblocking(true)?;
        self.sock = Some(s);
        Ok(())
    }

    pub fn disconnect(&mut self) {
        self.sock = None;
    }

    pub fn is_connected(&self) -> bool {
        self.sock.is_some()
    }

    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match &mut self.sock {
            Some(s) => s.write(data),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}

#[derive(Debug)]
pub struct DgramSink {
    path: PathBuf,
    sock: Option<UnixDatagram>,
}

impl DgramSink {
    pub fn new(path: PathBuf) -> DgramSink {
        DgramSink { path, sock: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn connect(&mut self) -> io::Result<()> {
        self.sock = None;
        let s = UnixDatagram::unbound()?;
        s.connect(&self.path)?;
        s.set_nonblocking(true)?;
        self.sock = Some(s);
        Ok(())
    }

    pub fn disconnect(&mut self) {
        self.sock = None;
    }

    pub fn is_connected(&self) -> bool {
        self.sock.is_some()
    }

    /// Sends one record as one datagram.
    pub fn send(&mut self, record: &[u8]) -> io::Result<usize> {
        match &self.sock {
            Some(s) => s.send(record),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }
}
