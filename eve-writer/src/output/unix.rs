//! Unix socket sinks: `unix_stream` and `unix_dgram` connect to the socket at
//! `filename` (a reader such as a log shipper listens there). Both are non-blocking:
//! a full socket is "not now" (the data waits in the output's buffer and the writer
//! tries again shortly), and a reader that went away is reconnected when it comes back.
//! A datagram carries exactly one EVE line (with its newline).

use std::io::{self, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};

/// A socket kind a [`UnixSink`] connects.
pub trait UnixSocket: Sized {
    /// A non-blocking socket connected to `path`.
    fn connect_nonblocking(path: &Path) -> io::Result<Self>;
}

impl UnixSocket for UnixStream {
    fn connect_nonblocking(path: &Path) -> io::Result<Self> {
        let s = UnixStream::connect(path)?;
        s.set_nonblocking(true)?;
        Ok(s)
    }
}

impl UnixSocket for UnixDatagram {
    fn connect_nonblocking(path: &Path) -> io::Result<Self> {
        let s = UnixDatagram::unbound()?;
        s.connect(path)?;
        s.set_nonblocking(true)?;
        Ok(s)
    }
}

/// A socket at `path`, connected on demand.
#[derive(Debug)]
pub struct UnixSink<S> {
    path: PathBuf,
    sock: Option<S>,
}

pub type StreamSink = UnixSink<UnixStream>;
pub type DgramSink = UnixSink<UnixDatagram>;

impl<S: UnixSocket> UnixSink<S> {
    pub fn new(path: PathBuf) -> UnixSink<S> {
        UnixSink { path, sock: None }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn connect(&mut self) -> io::Result<()> {
        self.sock = None;
        self.sock = Some(S::connect_nonblocking(&self.path)?);
        Ok(())
    }

    pub fn disconnect(&mut self) {
        self.sock = None;
    }

    pub fn is_connected(&self) -> bool {
        self.sock.is_some()
    }

    fn sock(&mut self) -> io::Result<&mut S> {
        self.sock
            .as_mut()
            .ok_or_else(|| io::ErrorKind::NotConnected.into())
    }
}

impl StreamSink {
    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.sock()?.write(data)
    }
}

impl DgramSink {
    /// Sends one record as one datagram.
    pub fn send(&mut self, record: &[u8]) -> io::Result<usize> {
        self.sock()?.send(record)
    }
}
