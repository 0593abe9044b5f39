//! EVE outputs: where rendered lines go, with Suricata's buffering and without loss.
//!
//! A [`Target`] is one destination (a file, a socket, a redis connection) with its
//! buffer. Every accepted record is appended to the buffer; what is handed to the OS
//! comes off the front. Offsets are absolute (bytes ever accepted), so the writer can
//! acknowledge a batch once the target's *delivered* offset passes the batch's end:
//!
//! ```text
//!  base        base+head           base+sent             base+len
//!   | dropped   | delivered ... | handed to the OS, unconfirmed | not yet written |
//! ```
//!
//! - regular file and `unix_dgram`: delivered = handed to the OS;
//! - `unix_stream`: delivered = up to the last complete line handed to the OS (after a
//!   reconnect the partly sent line is sent again, whole, to the new reader);
//! - redis: delivered = commands redis has replied to (the rest is sent again after a
//!   reconnect).
//!
//! Buffering follows Suricata's `buffer-size`: 0 writes every record with its own
//! write(2); N > 0 collects records and writes when the next one would not fit (a record
//! larger than the buffer is written alone), so a line is never split by our own
//! buffering and never interleaved with another. `unix_dgram` sends one datagram per
//! record whatever the buffer size.
//!
//! When a write fails (disk full, I/O error, reader gone), the target logs the error
//! once, counts it, keeps everything it holds, and retries with a backoff
//! (100 ms doubling to 2 s); new records are appended behind the held ones, so once a
//! write succeeds everything goes out in order. Nothing is acknowledged meanwhile, so
//! the producers' windows fill and they stop (backpressure).

pub mod file;
pub mod nats;
pub mod net;
pub mod redis;
pub mod spool;
pub mod syslog;
pub mod tls;
pub mod unix;

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use meerkat_config::{EveLog, FileType, RotateInterval};

use crate::pattern;
use file::FileSink;
pub use net::{Meta, NetCounters, NetTarget};
use syslog::SyslogSink;
use unix::{DgramSink, StreamSink};

/// First wait before retrying a failed write or connection.
pub const RETRY_MIN: Duration = Duration::from_millis(100);
/// Longest wait between retries.
pub const RETRY_MAX: Duration = Duration::from_secs(2);
/// Wait before writing again to a socket whose buffer was full.
const BLOCKED_RETRY: Duration = Duration::from_millis(2);
/// How often redis replies are looked for while some are due.
pub const REPLY_POLL: Duration = Duration::from_millis(1);
/// Delivered bytes at the front of a buffer that are dropped even while more is held.
const COMPACT_AT: usize = 1 << 20;

/// Where a target writes.
#[derive(Debug)]
pub enum Sink {
    File(FileSink),
    Stream(StreamSink),
    Dgram(DgramSink),
    Syslog(SyslogSink),
}

impl Sink {
    fn label(&self) -> String {
        match self {
            Sink::File(f) => f.path().display().to_string(),
            Sink::Stream(s) => format!("unix_stream {}", s.path().display()),
            Sink::Dgram(s) => format!("unix_dgram {}", s.path().display()),
            Sink::Syslog(s) => format!("syslog {}", s.path().display()),
        }
    }

    fn is_connected(&self) -> bool {
        match self {
            Sink::File(f) => f.is_open(),
            Sink::Stream(s) => s.is_connected(),
            Sink::Dgram(s) => s.is_connected(),
            Sink::Syslog(s) => s.is_connected(),
        }
    }

    fn connect(&mut self, now: SystemTime) -> io::Result<()> {
        match self {
            Sink::File(f) => f.open(now),
            Sink::Stream(s) => s.connect(),
            Sink::Dgram(s) => s.connect(),
            Sink::Syslog(s) => s.connect(),
        }
    }

    fn disconnect(&mut self) {
        match self {
            Sink::File(_) => {}
            Sink::Stream(s) => s.disconnect(),
            Sink::Dgram(s) => s.disconnect(),
            Sink::Syslog(s) => s.disconnect(),
        }
    }
}

/// Counters of one target (summed into the writer's counter page).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct TargetCounters {
    /// write(2)/send(2) calls made, failed ones included.
    pub write_calls: u64,
    /// Bytes handed to the OS.
    pub bytes: u64,
    /// Failed writes and connection attempts.
    pub errors: u64,
    /// Connections (re)established after a failure, and file reopens.
    pub reconnects: u64,
    /// Records given up on: a datagram too large for the socket, a command redis refused.
    pub dropped: u64,
    /// Bytes sent again after a lost connection.
    pub resent_bytes: u64,
}

/// A target's state while its destination fails: when it started, the attempts, the
/// wait before the next one (doubling from [`RETRY_MIN`]).
#[derive(Debug)]
struct Failing {
    since: Instant,
    attempts: u64,
    backoff: Duration,
    retry_at: Instant,
}

impl Failing {
    /// The first failure, at `now`: the next attempt after [`RETRY_MIN`].
    fn first(now: Instant) -> Failing {
        Failing {
            since: now,
            attempts: 1,
            backoff: RETRY_MIN,
            retry_at: now + RETRY_MIN,
        }
    }
}

/// A local destination (file, Unix socket, syslog) with its buffer.
#[derive(Debug)]
pub struct LocalTarget {
    label: String,
    sink: Sink,
    buf: Vec<u8>,
    base: u64,
    head: usize,
    sent: usize,
    cap: usize,
    failing: Option<Failing>,
    blocked_until: Option<Instant>,
    rotate: Option<RotateInterval>,
    next_rotate: Option<SystemTime>,
    pub counters: TargetCounters,
}

impl LocalTarget {
    pub fn new(sink: Sink, buffer_size: usize, rotate: Option<RotateInterval>) -> LocalTarget {
        LocalTarget {
            label: sink.label(),
            sink,
            buf: Vec::with_capacity(buffer_size.clamp(4096, 4 << 20)),
            base: 0,
            head: 0,
            sent: 0,
            cap: buffer_size,
            failing: None,
            blocked_until: None,
            rotate,
            next_rotate: None,
            counters: TargetCounters::default(),
        }
    }

    /// What the target writes to (for logs): a path, `unix_stream <path>`, `redis host:port`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Opens the file or connects. A socket or redis server that is not there yet is
    /// not an error: the target holds records and keeps trying (as Suricata does).
    pub fn start(&mut self, now: Instant) -> io::Result<()> {
        let wall = SystemTime::now();
        match self.sink.connect(wall) {
            Ok(()) => {
                self.opened(wall);
                Ok(())
            }
            Err(e) if matches!(self.sink, Sink::File(_)) => Err(e),
            Err(e) => {
                tracing::warn!("{}: {e} (will keep trying)", self.label);
                self.fail_quietly(now);
                Ok(())
            }
        }
    }

    fn opened(&mut self, wall: SystemTime) {
        if let Sink::File(f) = &self.sink {
            self.label = f.path().display().to_string();
        }
        self.next_rotate = self.rotate.map(|r| pattern::next_rotation(r, wall));
    }

    /// Absolute offset of everything accepted.
    pub fn accepted(&self) -> u64 {
        self.base + self.buf.len() as u64
    }

    /// Absolute offset up to which records are delivered.
    pub fn delivered(&self) -> u64 {
        self.base + self.head as u64
    }

    /// Bytes accepted and not yet delivered.
    pub fn held(&self) -> u64 {
        (self.buf.len() - self.head) as u64
    }

    pub fn is_failing(&self) -> bool {
        self.failing.is_some()
    }

    fn ready(&self, now: Instant) -> bool {
        self.failing.as_ref().is_none_or(|f| now >= f.retry_at)
            && self.blocked_until.is_none_or(|t| now >= t)
    }

    /// Ready to write, connecting first if the connection is down.
    fn prepare(&mut self, now: Instant) -> bool {
        self.ready(now) && (self.sink.is_connected() || self.reconnect(now))
    }

    /// Takes one EVE line (with its newline) and writes as buffering says.
    pub fn accept(&mut self, line: &[u8], now: Instant) {
        let pending = self.buf.len() - self.sent;
        let start = self.buf.len();
        match &self.sink {
            Sink::Syslog(s) => s.frame(line, SystemTime::now(), &mut self.buf),
            _ => self.buf.extend_from_slice(line),
        }
        if !self.prepare(now) {
            return;
        }
        let record = self.buf.len() - start;
        if self.cap == 0 || matches!(self.sink, Sink::Dgram(_) | Sink::Syslog(_)) {
            self.drain_to(self.buf.len(), now);
        } else if pending + record > self.cap {
            // Line-preserving: what was buffered goes first; then the new record waits
            // in the buffer unless it is larger than the buffer on its own.
            if pending > 0 {
                self.drain_to(start, now);
            }
            if record >= self.cap && self.ready(now) {
                self.drain_to(self.buf.len(), now);
            }
        }
    }

    /// Hands everything buffered to the OS (unless waiting to retry, or `force`).
    pub fn flush(&mut self, now: Instant, force: bool) {
        if force {
            self.blocked_until = None;
            if let Some(f) = &mut self.failing {
                f.retry_at = now;
            }
        }
        if !self.prepare(now) {
            return;
        }
        self.drain_to(self.buf.len(), now);
    }

    /// Work due at `now`: a retry, a rotation.
    pub fn poll(&mut self, now: Instant, wall: SystemTime) {
        if self.next_rotate.is_some_and(|t| wall >= t) {
            self.reopen(now);
        }
        let due = self.failing.as_ref().is_some_and(|f| now >= f.retry_at)
            || self.blocked_until.is_some_and(|t| now >= t);
        if due {
            self.blocked_until = None;
            if !self.prepare(now) {
                return;
            }
            self.drain_to(self.buf.len(), now);
        }
    }

    /// When [`poll`](Self::poll) next has work.
    pub fn next_deadline(&self, now: Instant, wall: SystemTime) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut take = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        if let Some(f) = &self.failing {
            take(f.retry_at);
        }
        if let Some(t) = self.blocked_until {
            take(t);
        }
        if let Some(r) = self.next_rotate {
            take(now + r.duration_since(wall).unwrap_or(Duration::ZERO));
        }
        next
    }

    /// Reopens a file (SIGHUP, control call, rotation) after writing out what it can to
    /// the old one; reconnects a socket that is down. Returns whether it reopened.
    pub fn reopen(&mut self, now: Instant) -> bool {
        let wall = SystemTime::now();
        match self.sink {
            Sink::File(_) => {
                if self.ready(now) {
                    self.drain_to(self.buf.len(), now);
                }
                match self.sink.connect(wall) {
                    Ok(()) => {
                        self.counters.reconnects += 1;
                        self.opened(wall);
                        tracing::info!("reopened {}", self.label);
                        if self.failing.is_some() {
                            // A new file is a new chance: retry at once.
                            self.drain_to(self.buf.len(), now);
                        }
                        true
                    }
                    Err(e) => {
                        self.fail(&e, now);
                        // Try rotating again at the next interval.
                        self.next_rotate = self.rotate.map(|r| pattern::next_rotation(r, wall));
                        false
                    }
                }
            }
            _ => {
                if self.sink.is_connected() {
                    return false;
                }
                self.reconnect(now) && {
                    self.drain_to(self.buf.len(), now);
                    true
                }
            }
        }
    }

    fn reconnect(&mut self, now: Instant) -> bool {
        match self.sink.connect(SystemTime::now()) {
            Ok(()) => {
                self.counters.reconnects += 1;
                tracing::info!("{}: connected", self.label);
                true
            }
            Err(e) => {
                self.fail(&e, now);
                false
            }
        }
    }

    fn drain_to(&mut self, limit: usize, now: Instant) {
        while self.sent < limit {
            let result = match &mut self.sink {
                Sink::Dgram(d) => {
                    let end = memchr::memchr(b'\n', &self.buf[self.sent..limit])
                        .map_or(limit, |i| self.sent + i + 1);
                    self.counters.write_calls += 1;
                    match d.send(&self.buf[self.sent..end]) {
                        Ok(_) => Ok(end - self.sent),
                        Err(e) if e.raw_os_error() == Some(libc::EMSGSIZE) => {
                            self.counters.dropped += 1;
                            tracing::error!(
                                "{}: a {}-byte record is too large for a datagram; dropped",
                                self.label,
                                end - self.sent
                            );
                            self.sent = end;
                            continue;
                        }
                        Err(e) => Err(e),
                    }
                }
                Sink::File(f) => {
                    self.counters.write_calls += 1;
                    f.write(&self.buf[self.sent..limit])
                }
                Sink::Stream(s) => {
                    self.counters.write_calls += 1;
                    s.write(&self.buf[self.sent..limit])
                }
                Sink::Syslog(d) => {
                    let end = memchr::memchr(b'\n', &self.buf[self.sent..limit])
                        .map_or(limit, |i| self.sent + i + 1);
                    self.counters.write_calls += 1;
                    d.send(&self.buf[self.sent..end])
                }
            };
            match result {
                Ok(0) => {
                    self.fail(&io::Error::from(io::ErrorKind::WriteZero), now);
                    break;
                }
                Ok(n) => {
                    self.sent += n;
                    self.counters.bytes += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.blocked_until = Some(now + BLOCKED_RETRY);
                    break;
                }
                Err(e) => {
                    self.fail(&e, now);
                    break;
                }
            }
        }
        self.advance(now);
    }

    /// Moves the delivered offset after a write, and notes a recovery.
    fn advance(&mut self, now: Instant) {
        match self.sink {
            Sink::File(_) | Sink::Dgram(_) | Sink::Syslog(_) => self.head = self.sent,
            Sink::Stream(_) => {
                if let Some(i) = memchr::memrchr(b'\n', &self.buf[self.head..self.sent]) {
                    self.head += i + 1;
                }
            }
        }
        if self.sent == self.buf.len()
            && self.blocked_until.is_none()
            && let Some(f) = self.failing.take()
        {
            tracing::info!(
                "{}: writing again after {} failed attempts over {:.1} s; everything held is written",
                self.label,
                f.attempts,
                now.duration_since(f.since).as_secs_f64()
            );
        }
        self.compact();
    }

    fn fail_quietly(&mut self, now: Instant) {
        self.counters.errors += 1;
        self.failing = Some(Failing::first(now));
    }

    fn fail(&mut self, e: &io::Error, now: Instant) {
        self.counters.errors += 1;
        if !matches!(self.sink, Sink::File(_)) {
            // The connection is gone: what it did not deliver goes again on the next.
            self.sink.disconnect();
            self.counters.resent_bytes += (self.sent - self.head) as u64;
            self.sent = self.head;
        }
        match &mut self.failing {
            Some(f) => {
                f.attempts += 1;
                f.backoff = (f.backoff * 2).min(RETRY_MAX);
                f.retry_at = now + f.backoff;
            }
            None => {
                tracing::error!(
                    "{}: {e}; holding {} bytes of events (and new ones) and retrying; \
                     producers wait until the output works again",
                    self.label,
                    self.buf.len() - self.head
                );
                self.failing = Some(Failing::first(now));
            }
        }
    }

    fn compact(&mut self) {
        if self.head == self.buf.len() {
            self.base += self.buf.len() as u64;
            self.buf.clear();
            self.head = 0;
            self.sent = 0;
        } else if self.head >= COMPACT_AT {
            self.buf.drain(..self.head);
            self.base += self.head as u64;
            self.sent -= self.head;
            self.head = 0;
        }
    }
}

/// One destination: a local one (file, socket, syslog) with its byte buffer, or a
/// network one (redis, NATS) with its record queue and spool.
#[derive(Debug)]
#[allow(clippy::large_enum_variant)] // Most targets are local: the box is for the rare one.
pub enum Target {
    Local(LocalTarget),
    Net(Box<NetTarget>),
}

impl Target {
    /// A local target.
    pub fn new(sink: Sink, buffer_size: usize, rotate: Option<RotateInterval>) -> Target {
        Target::Local(LocalTarget::new(sink, buffer_size, rotate))
    }

    pub fn label(&self) -> &str {
        match self {
            Target::Local(t) => t.label(),
            Target::Net(t) => t.label(),
        }
    }

    pub fn start(&mut self, now: Instant) -> io::Result<()> {
        match self {
            Target::Local(t) => t.start(now),
            Target::Net(t) => t.start(now),
        }
    }

    pub fn accepted(&self) -> u64 {
        match self {
            Target::Local(t) => t.accepted(),
            Target::Net(t) => t.accepted(),
        }
    }

    pub fn delivered(&self) -> u64 {
        match self {
            Target::Local(t) => t.delivered(),
            Target::Net(t) => t.delivered(),
        }
    }

    pub fn held(&self) -> u64 {
        match self {
            Target::Local(t) => t.held(),
            Target::Net(t) => t.held(),
        }
    }

    pub fn is_failing(&self) -> bool {
        match self {
            Target::Local(t) => t.is_failing(),
            Target::Net(t) => t.is_failing(),
        }
    }

    /// Takes one EVE line (with its newline); `meta` says where it comes from.
    pub fn accept(&mut self, line: &[u8], meta: &Meta<'_>, now: Instant) {
        match self {
            Target::Local(t) => t.accept(line, now),
            Target::Net(t) => t.accept(line, meta, now),
        }
    }

    pub fn flush(&mut self, now: Instant, force: bool) {
        match self {
            Target::Local(t) => t.flush(now, force),
            Target::Net(t) => t.flush(now, force),
        }
    }

    pub fn poll(&mut self, now: Instant, wall: SystemTime) {
        match self {
            Target::Local(t) => t.poll(now, wall),
            Target::Net(t) => t.poll(now),
        }
    }

    pub fn next_deadline(&self, now: Instant, wall: SystemTime) -> Option<Instant> {
        match self {
            Target::Local(t) => t.next_deadline(now, wall),
            Target::Net(t) => t.next_deadline(now),
        }
    }

    pub fn reopen(&mut self, now: Instant) -> bool {
        match self {
            Target::Local(t) => t.reopen(now),
            Target::Net(t) => t.reopen(now),
        }
    }

    /// At a stop, after the last flush: a network target spools what it still holds.
    /// Returns the bytes still not delivered.
    pub fn close(&mut self, now: Instant) -> u64 {
        match self {
            Target::Local(t) => t.held(),
            Target::Net(t) => t.close(now),
        }
    }

    /// Nothing held and, for a network target, nothing in flight or in its spool.
    pub fn is_drained(&self) -> bool {
        match self {
            Target::Local(t) => t.held() == 0,
            Target::Net(t) => t.is_drained(),
        }
    }

    pub fn counters(&self) -> &TargetCounters {
        match self {
            Target::Local(t) => &t.counters,
            Target::Net(t) => &t.counters,
        }
    }

    /// A network target's own counters.
    pub fn net_counters(&self) -> Option<NetCounters> {
        match self {
            Target::Local(_) => None,
            Target::Net(t) => Some(t.net),
        }
    }
}

/// How to make the targets of one `eve-log` output.
#[derive(Debug, Clone)]
pub struct TargetSpec {
    pub filetype: FileType,
    /// File or socket path (log dir applied).
    pub path: PathBuf,
    pub buffer_size: usize,
    pub append: bool,
    pub mode: Option<u32>,
    pub rotate: Option<RotateInterval>,
    pub redis: meerkat_config::Redis,
    pub nats: meerkat_config::Nats,
    /// The spool of a network output (None: no spool).
    pub spool: Option<spool::SpoolConfig>,
    /// Unsent bytes a network output holds in memory before it spools.
    pub spool_memory: usize,
    pub syslog: (
        meerkat_config::syslog::Facility,
        meerkat_config::syslog::Level,
        String,
    ),
    /// `syslog-socket`.
    pub syslog_path: Option<PathBuf>,
    /// First part of NATS message ids.
    pub id_prefix: String,
}

/// The host name (for message ids), or `meerkat` when it cannot be read.
pub fn host_name() -> String {
    let mut b = [0u8; 256];
    // SAFETY: gethostname writes at most b.len() bytes into the buffer we own.
    let r = unsafe { libc::gethostname(b.as_mut_ptr().cast(), b.len()) };
    let n = b.iter().position(|&c| c == 0).unwrap_or(0);
    if r == 0 && n > 0 {
        String::from_utf8_lossy(&b[..n]).into_owned()
    } else {
        "meerkat".to_string()
    }
}

impl TargetSpec {
    pub fn from_config(eve: &EveLog, log_dir: &Path) -> TargetSpec {
        let p = Path::new(&eve.filename);
        let redis = eve.redis.clone().unwrap_or_default();
        let nats = eve.nats.clone().unwrap_or_default();
        let spool_cfg = eve.spool.clone().unwrap_or_default();
        let spool =
            (meerkat_config::bus::is_network(eve.filetype) && spool_cfg.enabled).then(|| {
                let dir = spool_cfg
                    .directory
                    .clone()
                    .unwrap_or_else(|| match eve.filetype {
                        FileType::Nats => net::default_spool_dir(log_dir, "nats", &nats.stream),
                        _ => net::default_spool_dir(log_dir, "redis", &redis.key),
                    });
                let dir = if dir.is_absolute() {
                    dir
                } else {
                    log_dir.join(dir)
                };
                spool::SpoolConfig {
                    dir,
                    max_size: spool_cfg.max_size.bytes(),
                    segment_size: spool_cfg.segment_size.bytes(),
                    fsync: spool_cfg.fsync,
                    fsync_interval: spool_cfg.fsync_interval.duration(),
                    when_full: spool_cfg.when_full,
                }
            });
        TargetSpec {
            filetype: eve.filetype,
            path: if p.is_absolute() {
                p.to_path_buf()
            } else {
                log_dir.join(p)
            },
            buffer_size: usize::try_from(eve.buffer_size.bytes()).unwrap_or(usize::MAX),
            append: eve.append,
            mode: eve.filemode.map(|m| m.0),
            rotate: eve.rotate_interval,
            id_prefix: nats.msg_id_prefix.clone().unwrap_or_else(host_name),
            syslog_path: eve.syslog_socket.clone(),
            redis,
            nats,
            spool,
            spool_memory: usize::try_from(spool_cfg.memory.bytes()).unwrap_or(usize::MAX),
            syslog: (
                eve.facility.unwrap_or_default(),
                eve.level.unwrap_or_default(),
                eve.identity
                    .clone()
                    .unwrap_or_else(|| meerkat_config::syslog::DEFAULT_IDENTITY.to_string()),
            ),
        }
    }

    /// The target of worker `worker` (`threaded: yes`), or the output's single target.
    pub fn make(&self, worker: Option<u32>) -> Target {
        let sink = match self.filetype {
            FileType::Regular => {
                let path = match worker {
                    Some(n) => pattern::threaded_name(&self.path, n),
                    None => self.path.clone(),
                };
                Sink::File(FileSink::new(path, self.mode, self.append))
            }
            FileType::UnixStream => Sink::Stream(StreamSink::new(self.path.clone())),
            FileType::UnixDgram => Sink::Dgram(DgramSink::new(self.path.clone())),
            FileType::Syslog => Sink::Syslog(SyslogSink::new(
                self.syslog_socket(),
                self.syslog.0,
                self.syslog.1,
                &self.syslog.2,
            )),
            FileType::Redis => {
                return Target::Net(Box::new(NetTarget::new(
                    Box::new(redis::RedisLink::new(&self.redis)),
                    self.buffer_size,
                    self.spool.clone(),
                    self.spool_memory,
                    "",
                    "",
                )));
            }
            FileType::Nats => {
                return Target::Net(Box::new(NetTarget::new(
                    Box::new(nats::NatsLink::new(&self.nats)),
                    self.buffer_size,
                    self.spool.clone(),
                    self.spool_memory,
                    &self.nats.subject,
                    &self.id_prefix,
                )));
            }
        };
        Target::new(sink, self.buffer_size, self.rotate)
    }

    fn syslog_socket(&self) -> PathBuf {
        self.syslog_path
            .clone()
            .unwrap_or_else(|| PathBuf::from(meerkat_config::syslog::DEFAULT_SOCKET))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_config::RedisMode;

    pub(crate) fn meta() -> Meta<'static> {
        Meta {
            event_type: "alert",
            producer: "test",
            epoch: 1,
            seq: 1,
            index: 0,
        }
    }

    fn redis_target(server: &str, port: u16, mode: RedisMode, key: &str, buffer: usize) -> Target {
        let cfg = meerkat_config::Redis {
            server: server.to_string(),
            port,
            mode,
            key: key.to_string(),
            ..Default::default()
        };
        Target::Net(Box::new(NetTarget::new(
            Box::new(redis::RedisLink::new(&cfg)),
            buffer,
            None,
            usize::MAX,
            "",
            "",
        )))
    }

    fn file_target(dir: &Path, cap: usize) -> (Target, PathBuf) {
        let p = dir.join("eve.json");
        let mut t = Target::new(Sink::File(FileSink::new(p.clone(), None, true)), cap, None);
        t.start(Instant::now()).unwrap();
        (t, p)
    }

    #[test]
    fn unbuffered_is_one_write_per_line() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, p) = file_target(dir.path(), 0);
        for _ in 0..10 {
            t.accept(b"{\"a\":1}\n", &meta(), Instant::now());
        }
        assert_eq!(t.counters().write_calls, 10);
        assert_eq!(t.delivered(), 80);
        assert_eq!(std::fs::read(&p).unwrap().len(), 80);
    }

    #[test]
    fn buffered_writes_whole_lines_when_full() {
        let dir = tempfile::tempdir().unwrap();
        let (mut t, p) = file_target(dir.path(), 20);
        let now = Instant::now();
        for _ in 0..5 {
            t.accept(b"0123456789\n", &meta(), now); // 11 bytes: one fits, two do not
        }
        assert_eq!(t.counters().write_calls, 4);
        assert_eq!(t.delivered(), 44);
        assert_eq!(t.accepted(), 55);
        t.accept(&[b'x'; 30], &meta(), now); // larger than the buffer: flush, then alone
        assert_eq!(t.counters().write_calls, 6);
        t.flush(now, false);
        assert_eq!(t.held(), 0);
        assert_eq!(std::fs::read(&p).unwrap().len(), 55 + 30);
        assert_eq!(t.delivered(), t.accepted());
    }

    #[test]
    fn stream_socket_reconnects_and_resends_whole_lines() {
        use std::io::Read;
        use std::os::unix::net::UnixListener;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("eve.sock");
        let mut t = Target::new(Sink::Stream(StreamSink::new(path.clone())), 0, None);
        let now = Instant::now();
        t.start(now).unwrap(); // nobody listens yet: held
        assert!(t.is_failing());
        t.accept(b"{\"n\":1}\n", &meta(), now);
        assert_eq!(t.held(), 8);
        let listener = UnixListener::bind(&path).unwrap();
        t.flush(now, true);
        assert_eq!(t.held(), 0);
        t.accept(b"{\"n\":2}\n", &meta(), now);
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = vec![0u8; 16];
        conn.read_exact(&mut got).unwrap();
        assert_eq!(got, b"{\"n\":1}\n{\"n\":2}\n");
        // The reader goes away: the next write fails (EPIPE), the record is held and
        // delivered to the next reader.
        drop(conn);
        drop(listener);
        std::fs::remove_file(&path).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !t.is_failing() {
            assert!(
                Instant::now() < deadline,
                "write to a closed reader did not fail"
            );
            t.accept(b"{\"n\":3}\n", &meta(), Instant::now());
        }
        let held = t.held();
        assert!(held >= 8, "{held}");
        let listener = UnixListener::bind(&path).unwrap();
        t.flush(Instant::now(), true);
        assert_eq!(t.held(), 0);
        let (mut conn, _) = listener.accept().unwrap();
        let mut got = vec![0u8; held as usize];
        conn.read_exact(&mut got).unwrap();
        assert!(got.starts_with(b"{\"n\":3}\n") && got.ends_with(b"\n"));
        assert!(t.counters().reconnects >= 2);
    }

    #[test]
    fn dgram_socket_one_record_per_datagram() {
        use std::os::unix::net::UnixDatagram;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("eve.dgram");
        let rx = UnixDatagram::bind(&path).unwrap();
        let mut t = Target::new(Sink::Dgram(DgramSink::new(path.clone())), 65536, None);
        let now = Instant::now();
        t.start(now).unwrap();
        t.accept(b"{\"n\":1}\n", &meta(), now);
        t.accept(b"{\"n\":22}\n", &meta(), now);
        let mut b = [0u8; 64];
        let n = rx.recv(&mut b).unwrap();
        assert_eq!(&b[..n], b"{\"n\":1}\n");
        let n = rx.recv(&mut b).unwrap();
        assert_eq!(&b[..n], b"{\"n\":22}\n");
        assert_eq!(t.counters().write_calls, 2);
        // The reader goes away and comes back at the same path.
        drop(rx);
        std::fs::remove_file(&path).unwrap();
        t.accept(b"{\"n\":3}\n", &meta(), now);
        assert!(t.is_failing());
        assert_eq!(t.held(), 8);
        let rx = UnixDatagram::bind(&path).unwrap();
        t.flush(Instant::now(), true);
        let n = rx.recv(&mut b).unwrap();
        assert_eq!(&b[..n], b"{\"n\":3}\n");
        assert_eq!(t.held(), 0);
    }

    /// A redis-server of the test's own, on a Unix socket in `dir` and a free TCP port.
    struct RedisServer {
        child: std::process::Child,
        socket: PathBuf,
        port: u16,
    }

    impl RedisServer {
        fn start(dir: &Path) -> Option<RedisServer> {
            let Ok(path) = which("redis-server") else {
                eprintln!("skipped: redis-server is not installed (apt-get install redis-server)");
                return None;
            };
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let socket = dir.join("redis.sock");
            let child = std::process::Command::new(path)
                .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                .arg("--unixsocket")
                .arg(&socket)
                .args(["--save", "", "--appendonly", "no", "--dir"])
                .arg(dir)
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let deadline = Instant::now() + Duration::from_secs(10);
            while std::os::unix::net::UnixStream::connect(&socket).is_err() {
                assert!(Instant::now() < deadline, "redis-server did not start");
                std::thread::sleep(Duration::from_millis(10));
            }
            Some(RedisServer {
                child,
                socket,
                port,
            })
        }

        /// Runs one command and returns its raw reply.
        fn command(&self, args: &[&str]) -> Vec<u8> {
            use std::io::{Read, Write};
            let mut c = std::os::unix::net::UnixStream::connect(&self.socket).unwrap();
            let mut req = format!("*{}\r\n", args.len());
            for a in args {
                req.push_str(&format!("${}\r\n{a}\r\n", a.len()));
            }
            c.write_all(req.as_bytes()).unwrap();
            c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut out = Vec::new();
            let mut chunk = [0u8; 65536];
            loop {
                let n = c.read(&mut chunk).unwrap();
                out.extend_from_slice(&chunk[..n]);
                if matches!(redis::parse_reply_for_tests(&out), Some(len) if len == out.len()) {
                    return out;
                }
            }
        }

        fn list(&self, key: &str) -> Vec<String> {
            let raw = self.command(&["LRANGE", key, "0", "-1"]);
            let text = String::from_utf8(raw).unwrap();
            text.split("\r\n")
                .filter(|l| l.starts_with('{'))
                .map(str::to_string)
                .collect()
        }
    }

    impl Drop for RedisServer {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn which(name: &str) -> Result<PathBuf, ()> {
        std::env::var_os("PATH")
            .into_iter()
            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .map(|d| d.join(name))
            .find(|p| p.is_file())
            .ok_or(())
    }

    #[test]
    fn redis_lists_and_channels_over_tcp_and_unix() {
        use std::io::{Read, Write};
        let dir = tempfile::tempdir().unwrap();
        let Some(server) = RedisServer::start(dir.path()) else {
            return;
        };
        let now = Instant::now();
        // LPUSH over TCP, unbuffered.
        let mut t = redis_target("127.0.0.1", server.port, RedisMode::Lpush, "eve", 0);
        t.start(now).unwrap();
        t.accept(b"{\"n\":1}\n", &meta(), now);
        t.accept(b"{\"n\":2}\n", &meta(), now);
        // RPUSH over the Unix socket, buffered: one write for both commands.
        let sock = server.socket.display().to_string();
        let mut u = redis_target(&sock, 0, RedisMode::Rpush, "eve-r", 4096);
        u.start(now).unwrap();
        u.accept(b"{\"n\":1}\n", &meta(), now);
        u.accept(b"{\"n\":2}\n", &meta(), now);
        assert_eq!(u.counters().write_calls, 0);
        u.flush(now, false);
        assert_eq!(u.counters().write_calls, 1);
        let deadline = Instant::now() + Duration::from_secs(5);
        while t.held() > 0 || u.held() > 0 {
            assert!(Instant::now() < deadline, "no replies from redis");
            t.poll(Instant::now(), SystemTime::now());
            u.poll(Instant::now(), SystemTime::now());
        }
        assert_eq!(server.list("eve"), vec!["{\"n\":2}", "{\"n\":1}"]);
        assert_eq!(server.list("eve-r"), vec!["{\"n\":1}", "{\"n\":2}"]);

        // PUBLISH: a subscriber gets the record.
        let mut sub = std::os::unix::net::UnixStream::connect(&server.socket).unwrap();
        sub.write_all(b"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n")
            .unwrap();
        sub.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        let mut chunk = [0u8; 4096];
        while !got.windows(9).any(|w| w == b"subscribe") {
            let n = sub.read(&mut chunk).unwrap();
            got.extend_from_slice(&chunk[..n]);
        }
        let mut p = redis_target(&sock, 0, RedisMode::Publish, "ch", 0);
        p.start(now).unwrap();
        p.accept(b"{\"pub\":true}\n", &meta(), now);
        got.clear();
        while !got.windows(12).any(|w| w == b"{\"pub\":true}") {
            let n = sub.read(&mut chunk).unwrap();
            got.extend_from_slice(&chunk[..n]);
        }

        // A refused command (wrong type) is counted and logged, not retried forever.
        server.command(&["SET", "str", "x"]);
        let mut w = redis_target(&sock, 0, RedisMode::Lpush, "str", 0);
        w.start(now).unwrap();
        w.accept(b"{}\n", &meta(), now);
        let deadline = Instant::now() + Duration::from_secs(5);
        while w.held() > 0 {
            assert!(Instant::now() < deadline);
            w.poll(Instant::now(), SystemTime::now());
        }
        assert_eq!(w.counters().dropped, 1);
    }

    #[test]
    fn redis_restart_loses_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let Some(server) = RedisServer::start(dir.path()) else {
            return;
        };
        let sock = server.socket.display().to_string();
        let mut t = redis_target(&sock, 0, RedisMode::Rpush, "eve", 0);
        t.start(Instant::now()).unwrap();
        t.accept(b"{\"n\":1}\n", &meta(), Instant::now());
        let deadline = Instant::now() + Duration::from_secs(5);
        while t.held() > 0 {
            assert!(Instant::now() < deadline);
            t.poll(Instant::now(), SystemTime::now());
        }
        drop(server);
        // Redis is gone: records are held (the write or the reply read fails).
        let deadline = Instant::now() + Duration::from_secs(5);
        let mut n = 2;
        while !t.is_failing() {
            assert!(
                Instant::now() < deadline,
                "redis going away was not noticed"
            );
            t.accept(
                format!("{{\"n\":{n}}}\n").as_bytes(),
                &meta(),
                Instant::now(),
            );
            t.poll(Instant::now(), SystemTime::now());
            n += 1;
        }
        t.accept(
            format!("{{\"n\":{n}}}\n").as_bytes(),
            &meta(),
            Instant::now(),
        );
        assert!(t.held() > 0);
        let server = RedisServer::start(dir.path()).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while t.held() > 0 {
            assert!(Instant::now() < deadline, "held records were not delivered");
            t.poll(Instant::now(), SystemTime::now());
            std::thread::sleep(Duration::from_millis(5));
        }
        // The new server (no persistence) has every record from n=2 on, in order;
        // records sent again after the loss may appear twice but none is missing.
        let got = server.list("eve");
        let mut nums: Vec<u64> = got
            .iter()
            .map(|l| {
                l.trim_start_matches("{\"n\":")
                    .trim_end_matches('}')
                    .parse()
                    .unwrap()
            })
            .collect();
        assert!(nums.windows(2).all(|w| w[0] <= w[1]), "{nums:?}");
        nums.dedup();
        assert_eq!(nums, (2..=n).collect::<Vec<u64>>());
        assert_eq!(t.counters().reconnects, 1);
    }

    fn redis_cfg_target(cfg: meerkat_config::Redis) -> Target {
        Target::Net(Box::new(NetTarget::new(
            Box::new(redis::RedisLink::new(&cfg)),
            0,
            None,
            usize::MAX,
            "",
            "",
        )))
    }

    fn xlen(server: &RedisServer, key: &str) -> u64 {
        let r = String::from_utf8(server.command(&["XLEN", key])).unwrap();
        r.trim().trim_start_matches(':').parse().unwrap()
    }

    fn settle(t: &mut Target) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while t.held() > 0 {
            assert!(Instant::now() < deadline, "no replies from redis");
            t.poll(Instant::now(), SystemTime::now());
        }
    }

    /// Polls `t` until `ok` or a deadline (trim rounds run at most once a second).
    fn poll_until(t: &mut Target, what: &str, mut ok: impl FnMut(&Target) -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !ok(t) {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            t.poll(Instant::now(), SystemTime::now());
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Stream mode: without consumer groups the writer trims to stream-maxlen (as
    /// Suricata); with a group, never an entry the group has not acknowledged, and the
    /// group's lag is counted.
    #[test]
    fn redis_stream_trims_but_keeps_what_a_consumer_group_has_not_acknowledged() {
        let dir = tempfile::tempdir().unwrap();
        let Some(server) = RedisServer::start(dir.path()) else {
            return;
        };
        let sock = server.socket.display().to_string();
        let cfg = |key: &str| meerkat_config::Redis {
            server: sock.clone(),
            mode: RedisMode::Xadd,
            key: key.to_string(),
            stream_maxlen: 100,
            stream_trim_exact: true,
            ..Default::default()
        };
        // No group: trimmed to 100.
        let mut t = redis_cfg_target(cfg("plain"));
        t.start(Instant::now()).unwrap();
        for i in 0..500 {
            t.accept(
                format!("{{\"n\":{i}}}\n").as_bytes(),
                &meta(),
                Instant::now(),
            );
        }
        settle(&mut t);
        t.accept(b"{\"n\":500}\n", &meta(), Instant::now());
        poll_until(&mut t, "the trim", |_| xlen(&server, "plain") == 100);

        // A group that reads nothing: every entry is kept, the lag counted.
        server.command(&["XGROUP", "CREATE", "grouped", "g", "$", "MKSTREAM"]);
        let mut t = redis_cfg_target(cfg("grouped"));
        t.start(Instant::now()).unwrap();
        for i in 0..500 {
            t.accept(
                format!("{{\"n\":{i}}}\n").as_bytes(),
                &meta(),
                Instant::now(),
            );
        }
        settle(&mut t);
        t.accept(b"{\"n\":500}\n", &meta(), Instant::now());
        poll_until(&mut t, "the lag", |t| {
            t.net_counters().is_some_and(|n| n.lag >= 500)
        });
        assert_eq!(xlen(&server, "grouped"), 501, "an unread entry was trimmed");
        // The group reads 300 (pending, not acknowledged): still nothing goes.
        server.command(&[
            "XREADGROUP",
            "GROUP",
            "g",
            "c",
            "COUNT",
            "300",
            "STREAMS",
            "grouped",
            ">",
        ]);
        t.accept(b"{\"n\":501}\n", &meta(), Instant::now());
        poll_until(&mut t, "the lag to count pending entries", |t| {
            t.net_counters().is_some_and(|n| n.lag == 502)
        });
        assert_eq!(xlen(&server, "grouped"), 502);
        // Everything read and acknowledged (no pending): trimmed up to what it read.
        server.command(&["XGROUP", "SETID", "grouped", "g", "$"]);
        server.command(&["XGROUP", "DELCONSUMER", "grouped", "g", "c"]);
        for i in 502..512 {
            t.accept(
                format!("{{\"n\":{i}}}\n").as_bytes(),
                &meta(),
                Instant::now(),
            );
        }
        poll_until(&mut t, "the trim of acknowledged entries", |_| {
            xlen(&server, "grouped") == 10
        });
        let n = t.net_counters().unwrap();
        assert_eq!(n.dropped, 0);
        assert_eq!(n.acked, 512);
    }

    /// TLS (rustls, ring) and AUTH against redis-server's own TLS port.
    #[test]
    fn redis_over_tls_with_auth() {
        let dir = tempfile::tempdir().unwrap();
        let Ok(bin) = which("redis-server") else {
            eprintln!("skipped: redis-server is not installed");
            return;
        };
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = rcgen::CertificateParams::new(vec!["localhost".to_string()])
            .unwrap()
            .self_signed(&key)
            .unwrap();
        let (cert_pem, key_pem) = (dir.path().join("c.pem"), dir.path().join("k.pem"));
        std::fs::write(&cert_pem, cert.pem()).unwrap();
        std::fs::write(&key_pem, key.serialize_pem()).unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = std::process::Command::new(bin)
            .args([
                "--port",
                "0",
                "--bind",
                "127.0.0.1",
                "--tls-port",
                &port.to_string(),
            ])
            .arg("--tls-cert-file")
            .arg(&cert_pem)
            .arg("--tls-key-file")
            .arg(&key_pem)
            .arg("--tls-ca-cert-file")
            .arg(&cert_pem)
            .args(["--tls-auth-clients", "no", "--requirepass", "s3cret"])
            .args(["--save", "", "--appendonly", "no", "--dir"])
            .arg(dir.path())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "redis-server with TLS did not start"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let tls = meerkat_config::client_tls::ClientTls {
            enabled: true,
            ca_file: Some(cert_pem.clone()),
            cert_file: None,
            key_file: None,
            server_name: Some("localhost".to_string()),
        };
        let cfg = |password: &str| meerkat_config::Redis {
            server: "127.0.0.1".to_string(),
            port,
            mode: RedisMode::Xadd,
            key: "tls".to_string(),
            password: Some(password.to_string()),
            tls: Some(tls.clone()),
            ..Default::default()
        };
        let mut t = redis_cfg_target(cfg("s3cret"));
        t.start(Instant::now()).unwrap();
        assert!(!t.is_failing());
        for i in 0..200 {
            t.accept(
                format!("{{\"n\":{i}}}\n").as_bytes(),
                &meta(),
                Instant::now(),
            );
        }
        settle(&mut t);
        assert_eq!(t.net_counters().unwrap().acked, 200);
        // A wrong password: refused at connect, counted, retried (never sent).
        let mut w = redis_cfg_target(cfg("wrong"));
        w.start(Instant::now()).unwrap();
        assert!(w.is_failing());
        // A CA file that is not PEM: an error at start naming the file.
        let bad = dir.path().join("bad.pem");
        std::fs::write(&bad, "nope").unwrap();
        let mut c = cfg("s3cret");
        c.tls.as_mut().unwrap().ca_file = Some(bad);
        let e = redis_cfg_target(c).start(Instant::now()).unwrap_err();
        assert!(e.to_string().contains("bad.pem"), "{e}");
        let _ = child.kill();
        let _ = child.wait();
    }

    #[test]
    fn syslog_output_one_datagram_per_record() {
        use std::os::unix::net::UnixDatagram;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.sock");
        let rx = UnixDatagram::bind(&path).unwrap();
        let eve = meerkat_config::EveLog {
            filetype: FileType::Syslog,
            facility: Some(meerkat_config::syslog::Facility::Local3),
            level: Some(meerkat_config::syslog::Level::Warning),
            syslog_socket: Some(path.clone()),
            ..Default::default()
        };
        let mut t = TargetSpec::from_config(&eve, dir.path()).make(None);
        t.start(Instant::now()).unwrap();
        t.accept(b"{\"a\":1}\n", &meta(), Instant::now());
        let mut b = [0u8; 512];
        let n = rx.recv(&mut b).unwrap();
        let msg = std::str::from_utf8(&b[..n]).unwrap();
        // local3 (19) * 8 + warning (4) = 156; identity meerkat.
        assert!(msg.starts_with("<156>"), "{msg}");
        assert!(
            msg.ends_with(&format!("meerkat[{}]: {{\"a\":1}}", std::process::id())),
            "{msg}"
        );
        assert_eq!(t.held(), 0);
    }
}
