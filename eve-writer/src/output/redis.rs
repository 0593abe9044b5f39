//! Redis output, speaking RESP (the redis protocol) over TCP, TLS or a Unix socket: each
//! EVE record becomes `LPUSH key record`, `RPUSH key record`, `PUBLISH key record` or
//! `XADD key [MAXLEN ~|= n] * eve record` (Suricata's `list`/`lpush`, `rpush`,
//! `channel`/`publish`, `stream`/`xadd` modes, the stream field named `eve` as
//! Suricata's). Commands are pipelined (as many in one write as the buffer holds) and
//! the replies read as they come; a record is confirmed by its reply (see
//! [`super::net`] for what that means for acknowledgements and the spool). After a lost
//! connection every command without a reply is sent again.
//!
//! AUTH (`username`, `password`) and the TLS handshake run when the connection is made,
//! with a timeout, before the socket goes non-blocking.
//!
//! # Trimming streams without losing unread entries
//!
//! Suricata appends `MAXLEN ~ 100000` to every `XADD`, which drops the oldest entries
//! whether a consumer read them or not. With `stream-keep-unacked: yes` (the default)
//! the `XADD`s carry no trim; instead, at most once a second while entries are added,
//! the writer asks `XLEN` and `XINFO GROUPS`:
//!
//! - no consumer group: `XTRIM key MAXLEN ~ n` (as Suricata);
//! - consumer groups: for each, the oldest entry it still needs is its oldest pending
//!   (delivered, not acknowledged) entry (`XPENDING key group`) or, with none pending,
//!   the entry after its `last-delivered-id`; once the stream is longer than `n`,
//!   `XTRIM key MINID ~ <oldest needed>` removes only entries every group acknowledged.
//!   The stream then holds every unacknowledged entry, however many (a consumer that
//!   lags makes it longer than `n`: the `lag` counter and one log line say so), and may
//!   hold fewer than `n` entries right after a trim.
//!
//! `lag` is the most entries one group has not acknowledged (`lag` + `pending` of
//! `XINFO GROUPS`; redis 7 reports `lag`, older servers only `pending`).

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use meerkat_config::{Redis, RedisMode};
use rustls::pki_types::ServerName;

use super::TargetCounters;
use super::net::{Confirmed, Link};
use super::spool::RecordRef;

const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Longest reply we accept before calling the connection broken.
const MAX_REPLY: usize = 1 << 20;
/// Commands without a reply, at most.
pub const MAX_IN_FLIGHT: usize = 65_536;
/// Bytes framed and not yet written, at most.
const MAX_UNWRITTEN: usize = 8 << 20;
/// How often a stream is looked at for trimming while entries are added.
pub const TRIM_EVERY: Duration = Duration::from_secs(1);
/// Deepest reply nesting parsed.
const MAX_DEPTH: usize = 8;
/// Consumer groups looked at, at most.
const MAX_GROUPS: usize = 256;

#[derive(Debug)]
struct TlsConn {
    tls: rustls::ClientConnection,
    sock: TcpStream,
}

impl TlsConn {
    fn flush_tls(&mut self) -> io::Result<()> {
        while self.tls.wants_write() {
            match self.tls.write_tls(&mut self.sock) {
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

#[derive(Debug)]
enum Conn {
    Tcp(TcpStream),
    Unix(UnixStream),
    Tls(Box<TlsConn>),
}

impl Conn {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.write(data),
            Conn::Unix(s) => s.write(data),
            Conn::Tls(t) => {
                t.flush_tls()?;
                let n = t.tls.writer().write(data)?;
                t.flush_tls()?;
                if n == 0 {
                    Err(io::ErrorKind::WouldBlock.into())
                } else {
                    Ok(n)
                }
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match self {
            Conn::Tls(t) => t.flush_tls(),
            _ => Ok(()),
        }
    }

    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Conn::Tcp(s) => s.read(buf),
            Conn::Unix(s) => s.read(buf),
            Conn::Tls(t) => loop {
                match t.tls.reader().read(buf) {
                    Ok(n) => return Ok(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                    Err(e) => return Err(e),
                }
                if t.tls.read_tls(&mut t.sock)? == 0 {
                    return Ok(0);
                }
                t.tls
                    .process_new_packets()
                    .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, format!("tls: {e}")))?;
                t.flush_tls()?;
            },
        }
    }

    fn set_nonblocking(&self, on: bool) -> io::Result<()> {
        match self {
            Conn::Tcp(s) => s.set_nonblocking(on),
            Conn::Unix(s) => s.set_nonblocking(on),
            Conn::Tls(t) => t.sock.set_nonblocking(on),
        }
    }

    fn set_timeouts(&self, t: Option<Duration>) -> io::Result<()> {
        match self {
            Conn::Tcp(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Conn::Unix(s) => {
                s.set_read_timeout(t)?;
                s.set_write_timeout(t)
            }
            Conn::Tls(c) => {
                c.sock.set_read_timeout(t)?;
                c.sock.set_write_timeout(t)
            }
        }
    }
}

/// What the next reply answers.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expect {
    Record,
    Len,
    Groups,
    Pending,
    Trim,
}

/// A RESP2 value (control replies only; records' replies are only checked for errors).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Val {
    Str(Vec<u8>),
    Err(String),
    Int(i64),
    Nil,
    Arr(Vec<Val>),
}

impl Val {
    fn text(&self) -> Option<&[u8]> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
    fn int(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            Val::Str(s) => std::str::from_utf8(s).ok()?.parse().ok(),
            _ => None,
        }
    }
}

/// A stream entry id `ms-seq`.
type EntryId = (u64, u64);

fn parse_id(b: &[u8]) -> Option<EntryId> {
    let s = std::str::from_utf8(b).ok()?;
    let (ms, seq) = s.split_once('-')?;
    Some((ms.parse().ok()?, seq.parse().ok()?))
}

/// One consumer group, from `XINFO GROUPS`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Group {
    name: Vec<u8>,
    pending: u64,
    last_delivered: EntryId,
    lag: Option<u64>,
}

#[derive(Debug, Default)]
struct TrimRound {
    len: Option<u64>,
    groups: Vec<Group>,
    /// Oldest pending entry of each group with some pending, as the replies come.
    pending_left: usize,
    oldest_needed: Option<EntryId>,
}

#[derive(Debug)]
pub struct RedisLink {
    server: String,
    port: u16,
    mode: RedisMode,
    key: String,
    /// Everything of a record's command before the record's length.
    prefix: Vec<u8>,
    maxlen: u64,
    exact: bool,
    /// The writer trims (stream mode with keep-unacked and a maxlen).
    self_trim: bool,
    auth: Option<(Option<String>, String)>,
    tls: Option<meerkat_config::client_tls::ClientTls>,
    tls_config: Option<Arc<rustls::ClientConfig>>,
    conn: Option<Conn>,
    wbuf: Vec<u8>,
    wsent: usize,
    rbuf: Vec<u8>,
    expect: VecDeque<Expect>,
    records: usize,
    added_since_trim: u64,
    next_trim: Instant,
    round: Option<TrimRound>,
    lag: Option<u64>,
    lag_logged: bool,
}

fn bulk(out: &mut Vec<u8>, s: &[u8]) {
    out.push(b'$');
    out.extend_from_slice(itoa::Buffer::new().format(s.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(s);
    out.extend_from_slice(b"\r\n");
}

fn command(out: &mut Vec<u8>, args: &[&[u8]]) {
    out.push(b'*');
    out.extend_from_slice(itoa::Buffer::new().format(args.len()).as_bytes());
    out.extend_from_slice(b"\r\n");
    for a in args {
        bulk(out, a);
    }
}

impl RedisLink {
    pub fn new(cfg: &Redis) -> RedisLink {
        let self_trim =
            cfg.mode == RedisMode::Xadd && cfg.stream_keep_unacked && cfg.stream_maxlen > 0;
        let cmd = cfg.mode.command();
        let key = cfg.key.as_bytes();
        let mut prefix = Vec::new();
        if cfg.mode == RedisMode::Xadd {
            let n = itoa::Buffer::new().format(cfg.stream_maxlen).to_string();
            let trim: &[u8] = if cfg.stream_trim_exact { b"=" } else { b"~" };
            let args: Vec<&[u8]> = if cfg.stream_maxlen > 0 && !self_trim {
                vec![b"XADD", key, b"MAXLEN", trim, n.as_bytes(), b"*", b"eve"]
            } else {
                vec![b"XADD", key, b"*", b"eve"]
            };
            prefix.push(b'*');
            prefix.extend_from_slice((args.len() + 1).to_string().as_bytes());
            prefix.extend_from_slice(b"\r\n");
            for a in args {
                bulk(&mut prefix, a);
            }
        } else {
            prefix.extend_from_slice(b"*3\r\n");
            bulk(&mut prefix, cmd.as_bytes());
            bulk(&mut prefix, key);
        }
        RedisLink {
            server: cfg.server.clone(),
            port: cfg.port,
            mode: cfg.mode,
            key: cfg.key.clone(),
            prefix,
            maxlen: cfg.stream_maxlen,
            exact: cfg.stream_trim_exact,
            self_trim,
            auth: cfg.password.clone().map(|p| (cfg.username.clone(), p)),
            tls: cfg.tls.clone().filter(|t| t.enabled),
            tls_config: None,
            conn: None,
            wbuf: Vec::with_capacity(64 * 1024),
            wsent: 0,
            rbuf: Vec::with_capacity(4096),
            expect: VecDeque::new(),
            records: 0,
            added_since_trim: 0,
            next_trim: Instant::now(),
            round: None,
            lag: None,
            lag_logged: false,
        }
    }

    /// Appends the command that hands `record` (an EVE line without its newline) over.
    pub fn frame(&self, record: &[u8], out: &mut Vec<u8>) {
        out.extend_from_slice(&self.prefix);
        bulk(out, record);
    }

    fn connect_now(&mut self) -> io::Result<Conn> {
        let conn = if self.server.starts_with('/') {
            Conn::Unix(UnixStream::connect(&self.server)?)
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
            match &self.tls_config {
                Some(cfg) => {
                    let name = self
                        .tls
                        .as_ref()
                        .and_then(|t| t.server_name.clone())
                        .unwrap_or_else(|| self.server.clone());
                    let name = ServerName::try_from(name.clone()).map_err(|e| {
                        io::Error::new(
                            io::ErrorKind::InvalidInput,
                            format!("tls server name {name}: {e}"),
                        )
                    })?;
                    let mut tls = rustls::ClientConnection::new(Arc::clone(cfg), name)
                        .map_err(|e| io::Error::other(format!("tls: {e}")))?;
                    tls.set_buffer_limit(Some(1 << 20));
                    let mut s = s;
                    s.set_read_timeout(Some(CONNECT_TIMEOUT))?;
                    s.set_write_timeout(Some(CONNECT_TIMEOUT))?;
                    while tls.is_handshaking() {
                        tls.complete_io(&mut s)
                            .map_err(|e| io::Error::new(e.kind(), format!("tls handshake: {e}")))?;
                    }
                    Conn::Tls(Box::new(TlsConn { tls, sock: s }))
                }
                None => Conn::Tcp(s),
            }
        };
        let mut conn = conn;
        if let Some((user, pass)) = &self.auth {
            conn.set_timeouts(Some(CONNECT_TIMEOUT))?;
            let mut req = Vec::new();
            match user {
                Some(u) => command(&mut req, &[b"AUTH", u.as_bytes(), pass.as_bytes()]),
                None => command(&mut req, &[b"AUTH", pass.as_bytes()]),
            }
            let mut at = 0;
            while at < req.len() {
                at += conn.write(&req[at..])?;
            }
            conn.flush()?;
            let mut got = Vec::new();
            let mut chunk = [0u8; 512];
            loop {
                let n = conn.read(&mut chunk)?;
                if n == 0 {
                    return Err(io::Error::new(
                        io::ErrorKind::ConnectionAborted,
                        "redis closed the connection during AUTH",
                    ));
                }
                got.extend_from_slice(&chunk[..n]);
                match parse_reply(&got) {
                    Ok(Some((_, None))) => break,
                    Ok(Some((_, Some(msg)))) => {
                        return Err(io::Error::new(
                            io::ErrorKind::PermissionDenied,
                            format!("redis AUTH refused: {msg}"),
                        ));
                    }
                    Ok(None) if got.len() < 4096 => {}
                    _ => {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidData,
                            "redis sent a bad reply to AUTH",
                        ));
                    }
                }
            }
            conn.set_timeouts(None)?;
        }
        conn.set_nonblocking(true)?;
        Ok(conn)
    }

    fn control(&mut self, args: &[&[u8]], e: Expect) {
        command(&mut self.wbuf, args);
        self.expect.push_back(e);
    }

    /// Starts a trim round when one is due.
    fn maybe_trim(&mut self, now: Instant) {
        if !self.self_trim
            || self.round.is_some()
            || self.added_since_trim == 0
            || now < self.next_trim
        {
            return;
        }
        self.added_since_trim = 0;
        self.next_trim = now + TRIM_EVERY;
        self.round = Some(TrimRound::default());
        let key = self.key.clone();
        self.control(&[b"XLEN", key.as_bytes()], Expect::Len);
        self.control(&[b"XINFO", b"GROUPS", key.as_bytes()], Expect::Groups);
    }

    fn trim_op(&self) -> &'static [u8] {
        if self.exact { b"=" } else { b"~" }
    }

    /// A control reply arrived.
    fn on_control(&mut self, e: Expect, v: Val) {
        let Some(round) = self.round.as_mut() else {
            return;
        };
        match e {
            Expect::Len => round.len = v.int().and_then(|n| u64::try_from(n).ok()),
            Expect::Groups => {
                round.groups = match &v {
                    Val::Arr(items) => items.iter().take(MAX_GROUPS).filter_map(group).collect(),
                    // No such key yet, or not a stream: nothing to trim.
                    _ => Vec::new(),
                };
                let lag = round
                    .groups
                    .iter()
                    .map(|g| g.pending + g.lag.unwrap_or(0))
                    .max();
                let len = round.len.unwrap_or(0);
                self.lag = lag;
                if let Some(l) = lag {
                    if l > self.maxlen && !self.lag_logged {
                        self.lag_logged = true;
                        tracing::warn!(
                            "redis stream {}: a consumer group is {l} entries behind (more \
                             than stream-maxlen {}); its entries are kept, the stream grows",
                            self.key,
                            self.maxlen
                        );
                    } else if l <= self.maxlen / 2 && self.lag_logged {
                        self.lag_logged = false;
                        tracing::info!(
                            "redis stream {}: consumer groups caught up ({l} behind)",
                            self.key
                        );
                    }
                }
                let key = self.key.clone();
                if len <= self.maxlen {
                    self.round = None;
                    return;
                }
                let Some(round) = self.round.as_mut() else {
                    return;
                };
                if round.groups.is_empty() {
                    let n = self.maxlen.to_string();
                    let op = self.trim_op();
                    self.control(
                        &[b"XTRIM", key.as_bytes(), b"MAXLEN", op, n.as_bytes()],
                        Expect::Trim,
                    );
                    return;
                }
                let mut oldest: Option<EntryId> = None;
                let mut asks = Vec::new();
                for g in &round.groups {
                    if g.pending > 0 {
                        asks.push(g.name.clone());
                    } else {
                        let next = (g.last_delivered.0, g.last_delivered.1.saturating_add(1));
                        oldest = Some(oldest.map_or(next, |o| o.min(next)));
                    }
                }
                round.oldest_needed = oldest;
                round.pending_left = asks.len();
                if asks.is_empty() {
                    self.finish_round();
                }
                for name in asks {
                    self.control(&[b"XPENDING", key.as_bytes(), &name], Expect::Pending);
                }
            }
            Expect::Pending => {
                // [count, smallest id, greatest id, consumers]
                if let Val::Arr(items) = &v
                    && let Some(id) = items.get(1).and_then(Val::text).and_then(parse_id)
                {
                    round.oldest_needed = Some(round.oldest_needed.map_or(id, |o| o.min(id)));
                } else {
                    // Unreadable: trim nothing this round.
                    round.oldest_needed = Some((0, 0));
                }
                round.pending_left = round.pending_left.saturating_sub(1);
                if round.pending_left == 0 {
                    self.finish_round();
                }
            }
            Expect::Trim => {
                if let Val::Err(msg) = v {
                    tracing::warn!("redis stream {}: XTRIM refused: {msg}", self.key);
                }
                self.round = None;
            }
            Expect::Record => {}
        }
    }

    fn finish_round(&mut self) {
        let Some(round) = self.round.take() else {
            return;
        };
        match round.oldest_needed {
            Some(id) if id > (0, 0) => {
                let key = self.key.clone();
                let min = format!("{}-{}", id.0, id.1);
                let op = self.trim_op();
                self.round = Some(TrimRound::default());
                self.control(
                    &[b"XTRIM", key.as_bytes(), b"MINID", op, min.as_bytes()],
                    Expect::Trim,
                );
            }
            _ => {}
        }
    }
}

fn group(v: &Val) -> Option<Group> {
    let Val::Arr(kv) = v else { return None };
    let mut g = Group {
        name: Vec::new(),
        pending: 0,
        last_delivered: (0, 0),
        lag: None,
    };
    for pair in kv.chunks(2) {
        let [k, val] = pair else { continue };
        match k.text()? {
            b"name" => g.name = val.text()?.to_vec(),
            b"pending" => g.pending = val.int().and_then(|n| u64::try_from(n).ok())?,
            b"last-delivered-id" => g.last_delivered = parse_id(val.text()?)?,
            b"lag" => g.lag = val.int().and_then(|n| u64::try_from(n).ok()),
            _ => {}
        }
    }
    (!g.name.is_empty()).then_some(g)
}

impl Link for RedisLink {
    fn label(&self) -> String {
        let mode = if self.mode == RedisMode::Xadd {
            " stream"
        } else {
            ""
        };
        if self.server.starts_with('/') {
            format!("redis{mode} {} {}", self.server, self.key)
        } else {
            let tls = if self.tls.is_some() { "+tls" } else { "" };
            format!(
                "redis{tls}{mode} {}:{} {}",
                self.server, self.port, self.key
            )
        }
    }

    fn prepare(&mut self) -> io::Result<()> {
        if let Some(t) = &self.tls {
            self.tls_config = Some(super::tls::client_config(t)?);
        }
        Ok(())
    }

    fn connect(&mut self) -> io::Result<()> {
        self.disconnect();
        self.conn = Some(self.connect_now()?);
        Ok(())
    }

    fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    fn disconnect(&mut self) {
        self.conn = None;
        self.rbuf.clear();
        self.wbuf.clear();
        self.wsent = 0;
        self.expect.clear();
        self.records = 0;
        self.round = None;
    }

    fn has_room(&self) -> bool {
        self.records < MAX_IN_FLIGHT && self.wbuf.len() - self.wsent < MAX_UNWRITTEN
    }

    fn push(&mut self, rec: RecordRef<'_>) {
        let mut out = std::mem::take(&mut self.wbuf);
        self.frame(rec.payload, &mut out);
        self.wbuf = out;
        self.expect.push_back(Expect::Record);
        self.records += 1;
        self.added_since_trim += 1;
    }

    fn write(&mut self, counters: &mut TargetCounters) -> io::Result<()> {
        self.maybe_trim(Instant::now());
        let Some(conn) = self.conn.as_mut() else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        while self.wsent < self.wbuf.len() {
            counters.write_calls += 1;
            match conn.write(&self.wbuf[self.wsent..]) {
                Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.wsent += n;
                    counters.bytes += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        conn.flush()?;
        if self.wsent == self.wbuf.len() {
            self.wbuf.clear();
            self.wsent = 0;
        } else if self.wsent >= 1 << 20 {
            self.wbuf.drain(..self.wsent);
            self.wsent = 0;
        }
        Ok(())
    }

    fn poll(&mut self, now: Instant) -> io::Result<Confirmed> {
        let mut out = Confirmed::default();
        if self.expect.is_empty() {
            return Ok(out);
        }
        let Some(conn) = self.conn.as_mut() else {
            return Err(io::ErrorKind::NotConnected.into());
        };
        let mut chunk = [0u8; 16 * 1024];
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
        let mut at = 0;
        let bad =
            |m: String| io::Error::new(io::ErrorKind::InvalidData, format!("redis reply: {m}"));
        while at < self.rbuf.len() {
            let Some(next) = self.expect.front().cloned() else {
                return Err(bad("more replies than commands sent".to_string()));
            };
            if next == Expect::Record {
                match parse_reply(&self.rbuf[at..]).map_err(bad)? {
                    Some((len, err)) => {
                        at += len;
                        self.expect.pop_front();
                        self.records -= 1;
                        out.n += 1;
                        if let Some(msg) = err {
                            out.refused += 1;
                            out.first_error.get_or_insert(msg);
                        }
                    }
                    None => break,
                }
            } else {
                match parse_value(&self.rbuf[at..], 0).map_err(bad)? {
                    Some((len, v)) => {
                        at += len;
                        self.expect.pop_front();
                        self.on_control(next, v);
                    }
                    None => break,
                }
            }
        }
        self.rbuf.drain(..at);
        if self.rbuf.len() > MAX_REPLY {
            return Err(bad("reply too long".to_string()));
        }
        let _ = now;
        Ok(out)
    }

    fn in_flight(&self) -> usize {
        self.records
    }

    fn next_deadline(&self, now: Instant) -> Option<Instant> {
        if !self.expect.is_empty() {
            return Some(now + super::REPLY_POLL);
        }
        (self.self_trim && self.added_since_trim > 0 && self.round.is_none())
            .then_some(self.next_trim)
    }

    fn lag(&self) -> Option<u64> {
        self.lag
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

/// Parses one RESP2 reply into a value (control replies).
fn parse_value(b: &[u8], depth: usize) -> Result<Option<(usize, Val)>, String> {
    if depth > MAX_DEPTH {
        return Err("reply nested too deep".to_string());
    }
    let Some(&kind) = b.first() else {
        return Ok(None);
    };
    let Some(eol) = memchr::memmem::find(b, b"\r\n") else {
        return Ok(None);
    };
    let line = &b[1..eol];
    let after = eol + 2;
    Ok(Some(match kind {
        b'+' => (after, Val::Str(line.to_vec())),
        b'-' => (after, Val::Err(String::from_utf8_lossy(line).into_owned())),
        b':' => (after, Val::Int(parse_len(line)?)),
        b'$' => {
            let n = parse_len(line)?;
            if n < 0 {
                (after, Val::Nil)
            } else {
                let end = after + n as usize + 2;
                if b.len() < end {
                    return Ok(None);
                }
                (end, Val::Str(b[after..end - 2].to_vec()))
            }
        }
        b'*' => {
            let n = parse_len(line)?;
            if n < 0 {
                (after, Val::Nil)
            } else {
                let mut at = after;
                let mut items = Vec::with_capacity((n as usize).min(64));
                for _ in 0..n {
                    match parse_value(&b[at..], depth + 1)? {
                        Some((len, v)) => {
                            at += len;
                            items.push(v);
                        }
                        None => return Ok(None),
                    }
                }
                (at, Val::Arr(items))
            }
        }
        other => return Err(format!("unexpected reply type byte 0x{other:02x}")),
    }))
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

    fn link(mode: RedisMode, key: &str, f: impl FnOnce(&mut Redis)) -> RedisLink {
        let mut r = Redis {
            mode,
            key: key.to_string(),
            ..Default::default()
        };
        f(&mut r);
        RedisLink::new(&r)
    }

    #[test]
    fn frames_commands() {
        let s = link(RedisMode::Lpush, "suricata", |_| {});
        let mut out = Vec::new();
        s.frame(b"{\"a\":1}", &mut out);
        assert_eq!(
            out,
            b"*3\r\n$5\r\nLPUSH\r\n$8\r\nsuricata\r\n$7\r\n{\"a\":1}\r\n".to_vec()
        );
        let s = link(RedisMode::Publish, "k", |r| {
            r.server = "/run/redis.sock".into()
        });
        out.clear();
        s.frame(b"{}", &mut out);
        assert_eq!(
            out,
            b"*3\r\n$7\r\nPUBLISH\r\n$1\r\nk\r\n$2\r\n{}\r\n".to_vec()
        );
        assert_eq!(s.label(), "redis /run/redis.sock k");
        // Suricata's stream command: MAXLEN ~ n on every XADD.
        let s = link(RedisMode::Xadd, "s", |r| r.stream_keep_unacked = false);
        out.clear();
        s.frame(b"{}", &mut out);
        assert_eq!(
            out,
            b"*8\r\n$4\r\nXADD\r\n$1\r\ns\r\n$6\r\nMAXLEN\r\n$1\r\n~\r\n$6\r\n100000\r\n$1\r\n*\r\n$3\r\neve\r\n$2\r\n{}\r\n"
                .to_vec()
        );
        // Meerkat's default: no trim on XADD (the writer trims, keeping unacked entries).
        let s = link(RedisMode::Xadd, "s", |_| {});
        out.clear();
        s.frame(b"{}", &mut out);
        assert_eq!(
            out,
            b"*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$3\r\neve\r\n$2\r\n{}\r\n".to_vec()
        );
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
        // XINFO GROUPS of redis 7: one group as a flat key/value array.
        let groups = b"*1\r\n*12\r\n$4\r\nname\r\n$1\r\ng\r\n$9\r\nconsumers\r\n:1\r\n$7\r\npending\r\n:2\r\n$17\r\nlast-delivered-id\r\n$5\r\n100-3\r\n$12\r\nentries-read\r\n:10\r\n$3\r\nlag\r\n:5\r\n";
        let (len, v) = parse_value(groups, 0).unwrap().unwrap();
        assert_eq!(len, groups.len());
        let Val::Arr(items) = v else { panic!() };
        assert_eq!(
            group(&items[0]),
            Some(Group {
                name: b"g".to_vec(),
                pending: 2,
                last_delivered: (100, 3),
                lag: Some(5)
            })
        );
        assert_eq!(parse_value(&groups[..groups.len() - 3], 0), Ok(None));
        assert_eq!(parse_id(b"1700000000000-12"), Some((1_700_000_000_000, 12)));
        assert_eq!(parse_id(b"x-1"), None);
    }
}
