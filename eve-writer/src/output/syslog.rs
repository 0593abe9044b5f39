//! Syslog sink (`filetype: syslog`): each EVE record is one datagram to the local syslog
//! daemon's socket (`syslog-socket`, default `/dev/log`), framed as glibc's syslog(3)
//! frames it for that socket (the BSD format of RFC 3164 without the host name):
//!
//! ```text
//! <PRI>Mmm dd hh:mm:ss IDENTITY[PID]: {"timestamp":...}
//! ```
//!
//! PRI is facility * 8 + level (`facility: local5`, `level: Info` by default: 174), as
//! Suricata's `openlog(identity, LOG_PID, facility)` + `syslog(level, "%s", record)`. A
//! daemon that is not there yet is retried like a `unix_dgram` reader.

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use meerkat_config::syslog::{Facility, Level};

use super::unix::DgramSink;
use crate::pattern;

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

#[derive(Debug)]
pub struct SyslogSink {
    sock: DgramSink,
    pri: u8,
    /// `IDENTITY[PID]: `
    tag: Vec<u8>,
}

impl SyslogSink {
    pub fn new(path: PathBuf, facility: Facility, level: Level, identity: &str) -> SyslogSink {
        SyslogSink {
            sock: DgramSink::new(path),
            pri: facility.code() * 8 + level.code(),
            tag: format!("{identity}[{}]: ", std::process::id()).into_bytes(),
        }
    }

    pub fn path(&self) -> &Path {
        self.sock.path()
    }

    /// Appends the message for `line` (its newline kept, as the target's record end).
    pub fn frame(&self, line: &[u8], now: SystemTime, out: &mut Vec<u8>) {
        let t = pattern::local_time(now);
        let mut b = itoa::Buffer::new();
        out.push(b'<');
        out.extend_from_slice(b.format(self.pri).as_bytes());
        out.push(b'>');
        out.extend_from_slice(MONTHS[(t.month as usize).saturating_sub(1) % 12].as_bytes());
        // Day of month space-padded, as RFC 3164 and syslog(3) write it.
        out.extend_from_slice(
            format!(
                " {:>2} {:02}:{:02}:{:02} ",
                t.day, t.hour, t.minute, t.second
            )
            .as_bytes(),
        );
        out.extend_from_slice(&self.tag);
        out.extend_from_slice(line);
        if !line.ends_with(b"\n") {
            out.push(b'\n');
        }
    }

    pub fn connect(&mut self) -> io::Result<()> {
        self.sock.connect()
    }

    pub fn disconnect(&mut self) {
        self.sock.disconnect()
    }

    pub fn is_connected(&self) -> bool {
        self.sock.is_connected()
    }

    /// Sends one message (its trailing newline is not sent).
    pub fn send(&mut self, message: &[u8]) -> io::Result<usize> {
        let body = message.strip_suffix(b"\n").unwrap_or(message);
        self.sock.send(body).map(|_| message.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_like_syslog3() {
        let s = SyslogSink::new("/dev/null".into(), Facility::Local5, Level::Info, "meerkat");
        let mut out = Vec::new();
        s.frame(b"{\"a\":1}\n", SystemTime::UNIX_EPOCH, &mut out);
        let text = String::from_utf8(out).unwrap();
        assert!(text.starts_with("<174>"), "{text}");
        assert!(
            text.ends_with(&format!(" meerkat[{}]: {{\"a\":1}}\n", std::process::id())),
            "{text}"
        );
        // `<174>Mmm dd hh:mm:ss ` is 21 bytes.
        assert_eq!(&text[20..21], " ");
        let s = SyslogSink::new("/dev/null".into(), Facility::Auth, Level::Emergency, "x");
        let mut out = Vec::new();
        s.frame(b"{}", SystemTime::now(), &mut out);
        assert!(out.starts_with(b"<32>"));
    }
}
