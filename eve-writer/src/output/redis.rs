//! Redis sink, speaking RESP (the redis protocol) over TCP or a Unix socket: each EVE
//! record becomes `LPUSH key record`, `RPUSH key record` or `PUBLISH key record`
//! (Suricata's `list`/`lpush`, `rpush`, `channel`/`publish` modes). Commands are
//! pipelined: many go out in one write when the output is buffered, and the replies
//! are read as they come. A record counts as delivered only once redis has replied to
//! its command; after a lost connection every command without a reply is sent again
//! (redis may then hold a record twice, which the `eve.resent_bytes` counter shows).

use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use meerkat_config::RedisMode;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest reply line we accept before calling the connection broken.
const MAX_REPLY: usize = 64 * 1024;

#[derive(Debug)]
enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
}

impl Conn {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(data),
            Conn::Unix(s) => s.write(data),
        }
    }
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
        }
    }
}

/// Outcome of reading replies.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Replies {
    /// Complete replies read (each answers one command, in order).
    pub count: usize,
    /// Error replies among them (first message kept).
    pub errors: usize,
    pub first_error: Option<String>,
}

#[derive(Debug)]
pub struct RedisSink {
    server: String,
    port: u16,
    conn: Option<Conn>,
    /// `*3\r\n$<n>\r\n<COMMAND>\r\n$<n>\r\n<key>\r\n$` : everything before the record's length.
    prefix: Vec<u8>,
    rbuf: Vec<u8>,
}

impl RedisSink {
    pub fn new(server: &str, port: u16, mode: RedisMode, key: &str) -> RedisSink {
        let cmd = mode.command();
        let mut prefix = Vec::new();
        prefix.extend_from_slice(
            format!("*3\r\n${}\r\n{cmd}\r\n${}\r\n", cmd.len(), key.len()).as_bytes(),
        );
        prefix.extend_from_slice(key.as_bytes());
        prefix.extend_from_slice(b"\r\n$");
        RedisSink {
            server: server.to_string(),
            port,
            conn: None,
            prefix,
            rbuf: Vec::with_capacity(4096),
        }
    }

    pub fn label(&self) -> String {
        if self.server.starts_with('/') {
            format!("redis {}", self.server)
        } else {
            format!("redis {}:{}", self.server, self.port)
        }
    }

    /// Appends the command that hands `line` (an EVE line; its newline is dropped) over.
    pub fn frame(&self, line: &[u8], out: &mut Vec<u8>) {
        let record = line.strip_suffix(b"\n").unwrap_or(line);
        out.extend_from_slice(&self.prefix);
        out.extend_from_slice(itoa::Buffer::new().format(record.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(record);
        out.extend_from_slice(b"\r\n");
    }

    pub fn connect(&mut self) -> io::Result<()> {
        self.conn = None;
        self.rbuf.clear();
        let conn = if self.server.starts_with('/') {
            let s = UnixStream::connect(&self.server)?;
            s.set_nonblocking(true)?;
            Conn::Unix(s)
        } else {
            let addr = (self.server.as_str(), self.port)
                .to_socket_addrs()?
                .next()
                .ok_or_else(|| {
                    io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("no address for redis server {}", self.server),
                    )
                })?;
            let s = TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT)?;
            s.set_nodelay(true)?;
            s.set_nonblocking(true)?;
            Conn::Tcp(s)
        };
        self.conn = Some(conn);
        Ok(())
    }

    pub fn disconnect(&mut self) {
        self.conn = None;
        self.rbuf.clear();
    }

    pub fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    pub fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match &mut self.conn {
            Some(c) => c.write(data),
            None => Err(io::ErrorKind::NotConnected.into()),
        }
    }

    /// Reads whatever replies have arrived (never blocks). An error means the
    /// connection is unusable (closed by the server, or a reply we cannot parse).
    pub fn read_replies(&mut self) -> io::Result<Replies> {
        let Some(conn) = &mut self.conn else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let mut chunk = [0u8; 4096];
        loop {
            match conn.read(&mut chunk) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "redis closed the connection",
                    ));
                }
                Ok(n) => {
                    self.rbuf.extend_from_slice(&chunk[..n]);
                    if n < chunk.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        let mut out = Replies::default();
        let mut at = 0;
        while let Some((len, err)) = parse_reply(&self.rbuf[at..])
            .map_err(|m| io::Error::new(io::ErrorKind::InvalidData, format!("redis reply: {m}")))?
        {
            if let Some(msg) = err {
                out.errors += 1;
                if out.first_error.is_none() {
                    out.first_error = Some(msg);
                }
            }
            out.count += 1;
            at += len;
        }
        self.rbuf.drain(..at);
        if self.rbuf.len() > MAX_REPLY {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "redis reply too long",
            ));
        }
        Ok(out)
    }
}

/// Parses one RESP2 reply at the start of `b`: `Ok(None)` when incomplete, else its
/// length and, for an error reply, its message.
fn parse_reply(b: &[u8]) -> Result<Option<(usize, Option<String>)>, String> {
    let Some(&kind) = b.first() else {
        return Ok(None);
    };
    let Some(eol) = memchr::memmem::find(b, b"\r\n") else {
        return Ok(None);
    };
    let line = &b[1..eol];
    let after = eol + 2;
    match kind {
        b'+' | b':' => Ok(Some((after, None))),
        b'-' => Ok(Some((
            after,
            Some(String::from_utf8_lossy(line).into_owned()),
        ))),
        b'$' => {
            let n = parse_len(line)?;
            if n < 0 {
                return Ok(Some((after, None)));
            }
            let end = after + n as usize + 2;
            Ok((b.len() >= end).then_some((end, None)))
        }
        b'*' => {
            let n = parse_len(line)?;
            let mut at = after;
            for _ in 0..n.max(0) {
                match parse_reply(&b[at..])? {
                    Some((len, _)) => at += len,
                    None => return Ok(None),
                }
            }
            Ok(Some((at, None)))
        }
        other => Err(format!("unexpected reply type byte 0x{other:02x}")),
    }
}

/// Length of the first complete reply in `b` (for tests that read replies themselves).
#[cfg(test)]
pub(crate) fn parse_reply_for_tests(b: &[u8]) -> Option<usize> {
    parse_reply(b).ok().flatten().map(|(n, _)| n)
}

fn parse_len(line: &[u8]) -> Result<i64, String> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|n| (-1..=512 * 1024 * 1024).contains(n))
        .ok_or_else(|| format!("bad length `{}`", String::from_utf8_lossy(line)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_commands() {
        let s = RedisSink::new("127.0.0.1", 6379, RedisMode::Lpush, "suricata");
        let mut out = Vec::new();
        s.frame(b"{\"a\":1}\n", &mut out);
        assert_eq!(
            out,
            b"*3\r\n$5\r\nLPUSH\r\n$8\r\nsuricata\r\n$7\r\n{\"a\":1}\r\n".to_vec()
        );
        let s = RedisSink::new("/run/redis.sock", 0, RedisMode::Publish, "k");
        out.clear();
        s.frame(b"{}", &mut out);
        assert_eq!(
            out,
            b"*3\r\n$7\r\nPUBLISH\r\n$1\r\nk\r\n$2\r\n{}\r\n".to_vec()
        );
        assert_eq!(s.label(), "redis /run/redis.sock");
    }

    #[test]
    fn parses_replies() {
        assert_eq!(parse_reply(b":12\r\n+OK"), Ok(Some((5, None))));
        assert_eq!(parse_reply(b":12\r"), Ok(None));
        assert_eq!(
            parse_reply(b"-WRONGTYPE Operation\r\n"),
            Ok(Some((22, Some("WRONGTYPE Operation".to_string()))))
        );
        assert_eq!(parse_reply(b"$3\r\nabc\r\n"), Ok(Some((9, None))));
        assert_eq!(parse_reply(b"$3\r\nab"), Ok(None));
        assert_eq!(parse_reply(b"$-1\r\n"), Ok(Some((5, None))));
        assert_eq!(
            parse_reply(b"*2\r\n:1\r\n$1\r\nx\r\n"),
            Ok(Some((15, None)))
        );
        assert_eq!(parse_reply(b"*2\r\n:1\r\n"), Ok(None));
        assert!(parse_reply(b"?x\r\n").is_err());
        assert!(parse_reply(b"$zz\r\n").is_err());
    }
}
