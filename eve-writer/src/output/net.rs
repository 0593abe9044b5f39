//! Network outputs (redis, NATS JetStream): records confirmed one by one by the
//! server, with a disk spool for when the server is down or slower than the input.
//!
//! # Where the acknowledgement to the producer happens
//!
//! The writer acknowledges a batch to its producer (which then forgets it) once every
//! byte the batch added to each output is *delivered* ([`NetTarget::delivered`]). For a
//! network output a record is delivered when it is
//!
//! - **confirmed by the server**: redis replied to its command (`XADD`'s entry id,
//!   `LPUSH`'s length, ...), JetStream sent its `PubAck` (the message is stored in the
//!   stream, replicated as the stream says); or
//! - **in the spool**: its bytes were handed to the OS by write(2) on a segment file (a
//!   killed writer loses nothing: the next one replays the spool before anything else),
//!   and with `fsync: always` fdatasync'ed (a power cut loses nothing either).
//!
//! Everything else, sent or not, is held in memory, unacknowledged: if the writer dies
//! the producers send those batches again. So nothing a producer was told is written
//! can be lost by the bus being slow, down or restarted, and nothing is acknowledged
//! before it is safe. A record can reach the server twice (sent, then the connection
//! went before the reply; or sent from memory and also spooled at a stop): JetStream
//! drops such copies by their `Nats-Msg-Id` (producer, epoch, seq and place in the
//! batch, the same in every resend); redis keeps them (`eve.output.N.resent`).
//!
//! # Order
//!
//! Records reach the server in the order they were accepted. The queue is, oldest first:
//!
//! ```text
//!   memory: [ direct records (acknowledged when confirmed) | replayed records ]
//!   spool:  [ records on disk, replayed in order ]
//!   overflow: [ records waiting for room in the spool (unacknowledged) ]
//! ```
//!
//! Without a backlog, records go to memory and straight on to the server. Once more than
//! `spool.memory` bytes wait unsent, or the server is down, the unsent records move to
//! the spool and so does every new record while the spool is not empty; the spool is
//! read back (replayed) while the server takes records; when it is empty and every
//! replayed record is confirmed, new records go straight to the server again. A spool
//! over `max-size` takes no more with `when-full: block` (records wait in the overflow,
//! unacknowledged, and the producers stop: backpressure), or drops its oldest segment
//! with `drop-oldest` (counted). A spool that cannot be written (full disk) is the same
//! as a full one, retried every second.
//!
//! Without a spool (`spool.enabled: no`) records wait in memory as for the other
//! outputs, and the producers stop once their windows are full.

use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

use super::spool::{Appended, Pos, RecordRef, Spool, SpoolConfig};
use super::{Failing, REPLY_POLL, RETRY_MAX, TargetCounters};

/// Where a record comes from (for message ids and subjects).
#[derive(Debug, Clone, Copy)]
pub struct Meta<'a> {
    /// `alert`, `flow`, ... (the EVE `event_type`).
    pub event_type: &'a str,
    pub producer: &'a str,
    pub epoch: u64,
    pub seq: u64,
    /// The record's place among the batch's records for this output.
    pub index: u32,
}

/// What a server confirmed since the last poll, in the order the records were pushed.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Confirmed {
    pub n: usize,
    /// Of those, refused by the server (a command error): given up on, counted.
    pub refused: usize,
    pub first_error: Option<String>,
}

/// A connection to a server that confirms records in order.
pub trait Link: std::fmt::Debug + Send {
    fn label(&self) -> String;
    /// Whether records need a message id and a subject.
    fn wants_ids(&self) -> bool {
        false
    }
    /// Checks the settings and the files they name, once at start (an error stops the
    /// writer with a message naming the key or file).
    fn prepare(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// (Re)connects; a connection already up is replaced.
    fn connect(&mut self) -> io::Result<()>;
    fn is_connected(&self) -> bool;
    /// Drops the connection; records pushed and not confirmed are forgotten (the
    /// target sends them again).
    fn disconnect(&mut self);
    /// Whether another record may be pushed now.
    fn has_room(&self) -> bool;
    fn push(&mut self, rec: RecordRef<'_>);
    /// Sends what was pushed, as far as the connection takes it now (never blocks).
    fn write(&mut self, counters: &mut TargetCounters) -> io::Result<()>;
    /// Confirmations that arrived (never blocks). An error: the connection is unusable.
    fn poll(&mut self, now: Instant) -> io::Result<Confirmed>;
    /// Records pushed and not confirmed.
    fn in_flight(&self) -> usize;
    /// When [`poll`](Link::poll) may have news without anything new pushed.
    fn next_deadline(&self, now: Instant) -> Option<Instant>;
    /// Entries the slowest consumer has not acknowledged, when the server says.
    fn lag(&self) -> Option<u64> {
        None
    }
}

/// Counters of a network output (besides [`TargetCounters`]).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct NetCounters {
    /// Records handed to the server (resends included).
    pub sent: u64,
    /// Records the server confirmed.
    pub acked: u64,
    /// Records written to the spool.
    pub spooled: u64,
    /// Records read back from the spool and confirmed by the server.
    pub replayed: u64,
    /// Records given up on: refused by the server, or dropped from a full spool.
    pub dropped: u64,
    /// Records sent again after a lost connection.
    pub resent: u64,
    /// Bytes in the spool not yet confirmed (a gauge).
    pub spooled_bytes: u64,
    /// Entries the slowest consumer group has not acknowledged (redis streams; gauge).
    pub lag: u64,
}

#[derive(Debug, Clone, Copy)]
struct Rec {
    /// Offset of the body in the buffer (absolute).
    start: u64,
    id_len: u16,
    subj_len: u16,
    payload_len: u32,
    /// Accepted-space range (0..0 for a record replayed from the spool).
    acc_start: u64,
    acc_end: u64,
    /// A replayed record: its end in the spool (committed once it is confirmed).
    spool_end: Pos,
}

impl Rec {
    fn body_len(&self) -> usize {
        self.id_len as usize + self.subj_len as usize + self.payload_len as usize
    }
    fn is_direct(&self) -> bool {
        self.acc_end > 0
    }
}

/// Records and their bytes, in order.
#[derive(Debug, Default)]
struct Queue {
    buf: Vec<u8>,
    base: u64,
    recs: VecDeque<Rec>,
}

/// Consumed bytes at the front of a queue's buffer that are dropped even while more is held.
const COMPACT_AT: u64 = 1 << 20;

impl Queue {
    fn push(&mut self, r: RecordRef<'_>, acc: (u64, u64), spool_end: Pos) {
        let start = self.base + self.buf.len() as u64;
        self.buf.extend_from_slice(r.id);
        self.buf.extend_from_slice(r.subject);
        self.buf.extend_from_slice(r.payload);
        self.recs.push_back(Rec {
            start,
            id_len: r.id.len() as u16,
            subj_len: r.subject.len() as u16,
            payload_len: r.payload.len() as u32,
            acc_start: acc.0,
            acc_end: acc.1,
            spool_end,
        });
    }

    fn view(&self, r: &Rec) -> RecordRef<'_> {
        let s = (r.start - self.base) as usize;
        let (i, j) = (
            s + r.id_len as usize,
            s + r.id_len as usize + r.subj_len as usize,
        );
        RecordRef {
            id: &self.buf[s..i],
            subject: &self.buf[i..j],
            payload: &self.buf[j..j + r.payload_len as usize],
        }
    }

    fn pop_front(&mut self) -> Option<Rec> {
        let r = self.recs.pop_front()?;
        match self.recs.front() {
            None => {
                self.base += self.buf.len() as u64;
                self.buf.clear();
            }
            Some(next) if next.start - self.base >= COMPACT_AT => {
                let n = (next.start - self.base) as usize;
                self.buf.drain(..n);
                self.base = next.start;
            }
            Some(_) => {}
        }
        Some(r)
    }

    /// Removes the records from index `from` on (and their bytes).
    fn truncate(&mut self, from: usize) {
        if let Some(r) = self.recs.get(from) {
            self.buf.truncate((r.start - self.base) as usize);
        }
        self.recs.truncate(from);
    }

    fn bytes(&self) -> usize {
        self.buf.len()
    }
}

/// How long a spool that failed or was full waits before it is tried again.
const SPOOL_RETRY: Duration = Duration::from_secs(1);
/// Spooled bytes collected before they are written out even without a flush.
const SPOOL_WRITE_AT: usize = 256 * 1024;
/// Bytes of replayed records held in memory at once.
const REPLAY_BYTES: usize = 4 << 20;

/// A network output: a [`Link`] with its queue and spool.
#[derive(Debug)]
pub struct NetTarget {
    label: String,
    link: Box<dyn Link>,
    wants_ids: bool,
    /// `subject` with `{event_type}` to replace (NATS), else empty.
    subject: String,
    id_prefix: String,
    mem: Queue,
    /// Records of `mem` handed to the link.
    sent: usize,
    /// Bytes of `mem` not handed to the link.
    unsent_bytes: usize,
    overflow: Queue,
    cap: usize,
    spool_cfg: Option<SpoolConfig>,
    memory_limit: usize,
    spool: Option<Spool>,
    /// Records go to the spool (it holds records not confirmed, or the overflow does).
    spooling: bool,
    /// Accepted-space start of the first spooled record not yet durable.
    undurable_from: Option<u64>,
    spool_retry_at: Option<Instant>,
    /// After a failed write-out (a full disk): when to write again.
    write_retry_at: Option<Instant>,
    spool_full_logged: bool,
    accepted: u64,
    failing: Option<Failing>,
    scratch_id: Vec<u8>,
    scratch_subject: String,
    pub counters: TargetCounters,
    pub net: NetCounters,
}

impl NetTarget {
    /// `spool`: the spool's settings, or None for none. `memory_limit`: unsent bytes in
    /// memory before records go to the spool.
    pub fn new(
        link: Box<dyn Link>,
        buffer_size: usize,
        spool: Option<SpoolConfig>,
        memory_limit: usize,
        subject: &str,
        id_prefix: &str,
    ) -> NetTarget {
        NetTarget {
            label: link.label(),
            wants_ids: link.wants_ids(),
            link,
            subject: subject.to_string(),
            id_prefix: id_prefix.to_string(),
            mem: Queue::default(),
            sent: 0,
            unsent_bytes: 0,
            overflow: Queue::default(),
            cap: buffer_size,
            spool_cfg: spool,
            memory_limit,
            spool: None,
            spooling: false,
            undurable_from: None,
            spool_retry_at: None,
            write_retry_at: None,
            spool_full_logged: false,
            accepted: 0,
            failing: None,
            scratch_id: Vec::with_capacity(128),
            scratch_subject: String::with_capacity(64),
            counters: TargetCounters::default(),
            net: NetCounters::default(),
        }
    }

    pub fn label(&self) -> &str {
        &self.label
    }

    /// Opens a spool left by an earlier writer (replayed before anything new), and
    /// connects. A server that is not there yet is not an error.
    pub fn start(&mut self, now: Instant) -> io::Result<()> {
        self.link.prepare()?;
        if let Some(cfg) = &self.spool_cfg
            && cfg.dir.is_dir()
        {
            let spool = Spool::open(cfg.clone())?;
            if !spool.is_empty() {
                tracing::info!(
                    "{}: {} bytes of events in the spool {} from an earlier run; sending \
                     them first",
                    self.label,
                    spool.bytes(),
                    spool.dir().display()
                );
                self.spooling = true;
            }
            self.spool = Some(spool);
        }
        match self.link.connect() {
            Ok(()) => tracing::info!("{}: connected", self.label),
            Err(e) => {
                tracing::warn!("{}: {e} (will keep trying)", self.label);
                self.set_failing(now);
            }
        }
        self.pump(now);
        Ok(())
    }

    pub fn accepted(&self) -> u64 {
        self.accepted
    }

    /// See the module documentation.
    pub fn delivered(&self) -> u64 {
        let mut d = self.accepted;
        if let Some(r) = self.mem.recs.front()
            && r.is_direct()
        {
            d = d.min(r.acc_start);
        }
        if let Some(r) = self.overflow.recs.front() {
            d = d.min(r.acc_start);
        }
        if let Some(a) = self.undurable_from {
            d = d.min(a);
        }
        d
    }

    pub fn held(&self) -> u64 {
        self.accepted - self.delivered()
    }

    pub fn is_failing(&self) -> bool {
        self.failing.is_some()
    }

    /// Nothing held, in flight or in the spool.
    pub fn is_drained(&self) -> bool {
        !self.spooling
            && self.held() == 0
            && self.mem.recs.is_empty()
            && self.spool.as_ref().is_none_or(Spool::is_empty)
    }

    fn ready(&self, now: Instant) -> bool {
        self.failing.as_ref().is_none_or(|f| now >= f.retry_at)
    }

    /// Takes one EVE line (with its newline).
    pub fn accept(&mut self, line: &[u8], meta: &Meta<'_>, now: Instant) {
        let payload = line.strip_suffix(b"\n").unwrap_or(line);
        let acc = (self.accepted, self.accepted + line.len() as u64);
        self.accepted = acc.1;
        let mut id = std::mem::take(&mut self.scratch_id);
        let mut subject = std::mem::take(&mut self.scratch_subject);
        id.clear();
        subject.clear();
        if self.wants_ids {
            message_id(&mut id, &self.id_prefix, meta);
            subject_for(&mut subject, &self.subject, meta.event_type);
        }
        let rec = RecordRef {
            id: &id,
            subject: subject.as_bytes(),
            payload,
        };
        if self.spooling {
            if self.overflow.recs.is_empty() && self.spool_usable(now) {
                if self.append_to_spool(&rec, acc.0) {
                    if self.spool.as_ref().is_some_and(|s| s.has_pending())
                        && self.pending_spool_bytes() >= SPOOL_WRITE_AT
                    {
                        self.spool_write_out(now);
                    }
                } else {
                    self.overflow.push(rec, acc, Pos::default());
                }
            } else {
                self.overflow.push(rec, acc, Pos::default());
            }
        } else {
            self.mem.push(rec, acc, Pos::default());
            self.unsent_bytes += rec.body_len();
        }
        self.scratch_id = id;
        self.scratch_subject = subject;
        if self.spooling {
            return;
        }
        if self.cap == 0 || self.unsent_bytes >= self.cap {
            self.pump(now);
        }
        if self.spool_cfg.is_some()
            && self.unsent_bytes > 0
            && (self.failing.is_some() || self.unsent_bytes > self.memory_limit)
        {
            self.spill(now);
        }
    }

    fn pending_spool_bytes(&self) -> usize {
        self.spool.as_ref().map_or(0, Spool::pending_bytes)
    }

    fn spool_usable(&self, now: Instant) -> bool {
        self.spool_cfg.is_some() && self.spool_retry_at.is_none_or(|t| now >= t)
    }

    /// Appends a record to the spool (opening it if needed); false when it did not take
    /// it (full with `block`, or failing).
    fn append_to_spool(&mut self, rec: &RecordRef<'_>, acc_start: u64) -> bool {
        if self.spool.is_none() {
            let Some(cfg) = self.spool_cfg.clone() else {
                return false;
            };
            match Spool::open(cfg) {
                Ok(s) => self.spool = Some(s),
                Err(e) => {
                    self.spool_trouble(&format!("cannot open the spool: {e}"));
                    return false;
                }
            }
        }
        let Some(spool) = self.spool.as_mut() else {
            return false;
        };
        match spool.append(rec) {
            Ok(Appended::Yes) => {
                self.net.spooled += 1;
                self.undurable_from.get_or_insert(acc_start);
                true
            }
            Ok(Appended::Full) => {
                if !self.spool_full_logged {
                    self.spool_full_logged = true;
                    tracing::warn!(
                        "{}: the spool {} is full (max-size; when-full: block): events wait \
                         in memory unacknowledged and the producers will stop until the \
                         server takes the backlog",
                        self.label,
                        spool.dir().display()
                    );
                }
                self.spool_retry_at = Some(Instant::now() + SPOOL_RETRY);
                false
            }
            Err(e) => {
                self.spool_trouble(&e.to_string());
                false
            }
        }
    }

    fn spool_trouble(&mut self, what: &str) {
        self.counters.errors += 1;
        if !self.spool_full_logged {
            self.spool_full_logged = true;
            tracing::error!(
                "{}: spool: {what}; events wait in memory unacknowledged (the producers stop \
                 when their windows are full), retrying every {} s",
                self.label,
                SPOOL_RETRY.as_secs()
            );
        }
        self.spool_retry_at = Some(Instant::now() + SPOOL_RETRY);
        self.write_retry_at = self.spool_retry_at;
    }

    /// Writes out what was appended to the spool; spooled records become delivered.
    fn spool_write_out(&mut self, now: Instant) {
        let Some(spool) = self.spool.as_mut() else {
            return;
        };
        if !spool.has_pending() {
            return;
        }
        // Only a failed write waits; a full spool (max-size) still writes what it took.
        if self.write_retry_at.is_some_and(|t| now < t) {
            return;
        }
        match spool.write_out() {
            Ok(()) => {
                self.write_retry_at = None;
                self.undurable_from = None;
                if self.spool_full_logged && self.overflow.recs.is_empty() {
                    self.spool_full_logged = false;
                    self.spool_retry_at = None;
                    tracing::info!("{}: the spool takes events again", self.label);
                }
            }
            Err(e) => {
                let msg = format!("cannot write to {}: {e}", spool.dir().display());
                self.spool_trouble(&msg);
            }
        }
    }

    /// Moves every unsent record of memory to the spool (memory then holds only what is
    /// in flight), and spools from now on.
    fn spill(&mut self, now: Instant) {
        if self.spooling || !self.spool_usable(now) {
            return;
        }
        let from = self.sent;
        let mut moved = 0usize;
        let mut i = from;
        while i < self.mem.recs.len() {
            let r = self.mem.recs[i];
            let view = self.mem.view(&r);
            let ok = {
                // `view` borrows mem; copy it out for the spool.
                let (id, subj, payload) = (
                    view.id.to_vec(),
                    view.subject.to_vec(),
                    view.payload.to_vec(),
                );
                let rec = RecordRef {
                    id: &id,
                    subject: &subj,
                    payload: &payload,
                };
                if moved == i - from && self.append_to_spool(&rec, r.acc_start) {
                    true
                } else {
                    self.overflow
                        .push(rec, (r.acc_start, r.acc_end), Pos::default());
                    false
                }
            };
            if ok {
                moved += 1;
            }
            i += 1;
        }
        let n = self.mem.recs.len() - from;
        self.mem.truncate(from);
        self.unsent_bytes = 0;
        self.spooling = true;
        tracing::warn!(
            "{}: {} ({n} records waiting); spooling events to {} until it catches up",
            self.label,
            if self.failing.is_some() {
                "the server is unreachable"
            } else {
                "the server is slower than the input"
            },
            self.spool_cfg
                .as_ref()
                .map_or_else(String::new, |c| c.dir.display().to_string())
        );
        self.spool_write_out(now);
    }

    /// Moves overflow records into the spool while it takes them.
    fn drain_overflow(&mut self, now: Instant) {
        while let Some(r) = self.overflow.recs.front().copied() {
            if !self.spool_usable(now) {
                return;
            }
            let view = self.overflow.view(&r);
            let (id, subj, payload) = (
                view.id.to_vec(),
                view.subject.to_vec(),
                view.payload.to_vec(),
            );
            let rec = RecordRef {
                id: &id,
                subject: &subj,
                payload: &payload,
            };
            if !self.append_to_spool(&rec, r.acc_start) {
                return;
            }
            self.overflow.pop_front();
        }
    }

    /// Hands records to the server, reads its confirmations, replays the spool.
    fn pump(&mut self, now: Instant) {
        if self.spooling {
            self.spool_write_out(now);
            if !self.overflow.recs.is_empty() {
                self.drain_overflow(now);
            }
            self.spool_write_out(now);
        }
        if !self.ready(now) {
            return;
        }
        if !self.link.is_connected() {
            match self.link.connect() {
                Ok(()) => {
                    self.counters.reconnects += 1;
                    tracing::info!("{}: connected", self.label);
                }
                Err(e) => {
                    self.fail(&e, now);
                    return;
                }
            }
        }
        loop {
            if self.spooling {
                self.replay();
            }
            let before = self.sent;
            while self.sent < self.mem.recs.len() && self.link.has_room() {
                let r = self.mem.recs[self.sent];
                self.link.push(self.mem.view(&r));
                self.sent += 1;
                if r.is_direct() {
                    self.unsent_bytes -= r.body_len();
                }
                self.net.sent += 1;
            }
            if let Err(e) = self.link.write(&mut self.counters) {
                self.fail(&e, now);
                return;
            }
            if !self.confirm(now) {
                return;
            }
            // Go on while confirmations made room for more.
            if self.sent == before || !self.link.has_room() || self.sent == self.mem.recs.len() {
                break;
            }
        }
        if self.failing.is_some() && self.link.in_flight() == 0 && self.sent == self.mem.recs.len()
        {
            self.recovered(now);
        }
    }

    fn recovered(&mut self, now: Instant) {
        if let Some(f) = self.failing.take() {
            tracing::info!(
                "{}: sending again after {} failed attempts over {:.1} s",
                self.label,
                f.attempts,
                now.duration_since(f.since).as_secs_f64()
            );
        }
    }

    /// Reads spooled records into memory (after what is there) while room is left.
    fn replay(&mut self) {
        let Some(spool) = self.spool.as_mut() else {
            return;
        };
        let mem = &mut self.mem;
        while mem.bytes() < REPLAY_BYTES && spool.has_unread() {
            let got = spool.read_next(|rec, end| mem.push(rec, (0, 0), end));
            if got.is_none() {
                break;
            }
        }
    }

    /// Applies the link's confirmations; false if the link failed.
    fn confirm(&mut self, now: Instant) -> bool {
        let c = match self.link.poll(now) {
            Ok(c) => c,
            Err(e) => {
                self.fail(&e, now);
                return false;
            }
        };
        if c.refused > 0 {
            self.net.dropped += c.refused as u64;
            self.counters.dropped += c.refused as u64;
            self.counters.errors += c.refused as u64;
            tracing::error!(
                "{}: the server refused {} record(s): {}",
                self.label,
                c.refused,
                c.first_error.as_deref().unwrap_or("")
            );
        }
        let mut commit = None;
        for _ in 0..c.n.min(self.sent) {
            let Some(r) = self.mem.pop_front() else { break };
            self.sent -= 1;
            if !r.is_direct() {
                self.net.replayed += 1;
                commit = Some(r.spool_end);
            }
        }
        self.net.acked += c.n as u64;
        if let (Some(pos), Some(spool)) = (commit, self.spool.as_mut()) {
            spool.commit(pos, now);
            if self.spool_full_logged {
                // Confirmed segments are deleted: room again, try the spool now.
                self.spool_retry_at = None;
                self.write_retry_at = None;
            }
        }
        if self.spooling {
            self.maybe_stop_spooling(now);
        }
        true
    }

    /// Back to sending directly once the spool is empty and its records are confirmed.
    fn maybe_stop_spooling(&mut self, now: Instant) {
        let spool_empty = self.spool.as_ref().is_none_or(|s| s.is_empty());
        // Replayed records come after the direct ones: the last says whether any is left.
        let replayed_in_memory = self.mem.recs.back().is_some_and(|r| !r.is_direct());
        if !spool_empty || replayed_in_memory {
            return;
        }
        // The overflow (refused by a full spool) goes next, directly.
        while let Some(r) = self.overflow.recs.front().copied() {
            let view = self.overflow.view(&r);
            let (id, subj, payload) = (
                view.id.to_vec(),
                view.subject.to_vec(),
                view.payload.to_vec(),
            );
            self.mem.push(
                RecordRef {
                    id: &id,
                    subject: &subj,
                    payload: &payload,
                },
                (r.acc_start, r.acc_end),
                Pos::default(),
            );
            self.unsent_bytes += r.body_len();
            self.overflow.pop_front();
        }
        self.spooling = false;
        self.spool_full_logged = false;
        if let Some(s) = self.spool.as_mut() {
            s.tick(now + Duration::from_secs(3600));
        }
        tracing::info!(
            "{}: the spool is empty ({} records replayed so far); sending directly again",
            self.label,
            self.net.replayed
        );
    }

    fn set_failing(&mut self, now: Instant) {
        self.counters.errors += 1;
        self.failing = Some(Failing::first(now));
    }

    fn fail(&mut self, e: &io::Error, now: Instant) {
        self.counters.errors += 1;
        let lost = self.link.in_flight().min(self.sent);
        self.link.disconnect();
        self.net.resent += lost as u64;
        // Everything in memory goes again, in order, on the next connection.
        for r in self.mem.recs.iter().take(self.sent) {
            if r.is_direct() {
                self.unsent_bytes += r.body_len();
                self.counters.resent_bytes += r.body_len() as u64;
            }
        }
        self.sent = 0;
        match &mut self.failing {
            Some(f) => {
                f.attempts += 1;
                f.backoff = (f.backoff * 2).min(RETRY_MAX);
                f.retry_at = now + f.backoff;
            }
            None => {
                tracing::error!(
                    "{}: {e}; {} and retrying",
                    self.label,
                    if self.spool_cfg.is_some() {
                        "spooling events to disk"
                    } else {
                        "holding events in memory (producers wait)"
                    }
                );
                self.failing = Some(Failing::first(now));
            }
        }
        if self.spool_cfg.is_some() && self.unsent_bytes > 0 {
            self.spill(now);
        }
    }

    /// Sends everything (`force`: retry a failing server now).
    pub fn flush(&mut self, now: Instant, force: bool) {
        if force && let Some(f) = &mut self.failing {
            f.retry_at = now;
        }
        self.pump(now);
        self.spool_write_out(now);
    }

    /// Work due at `now`: retries, confirmations, the spool's timers.
    pub fn poll(&mut self, now: Instant) {
        if let Some(s) = self.spool.as_mut() {
            s.tick(now);
        }
        self.pump(now);
        self.update_gauges();
    }

    pub fn update_gauges(&mut self) {
        self.net.spooled_bytes = self.spool.as_ref().map_or(0, Spool::bytes);
        self.net.lag = self.link.lag().unwrap_or(0);
        if let Some(s) = &self.spool {
            self.net.dropped = self.net.dropped.max(s.counters.dropped);
        }
    }

    pub fn next_deadline(&self, now: Instant) -> Option<Instant> {
        let mut next: Option<Instant> = None;
        let mut take = |t: Instant| next = Some(next.map_or(t, |n| n.min(t)));
        if let Some(f) = &self.failing {
            take(f.retry_at);
        } else {
            if self.link.in_flight() > 0 {
                take(now + REPLY_POLL);
            }
            if self.spooling && self.spool.as_ref().is_some_and(Spool::has_unread) {
                take(now);
            }
            if let Some(t) = self.link.next_deadline(now) {
                take(t);
            }
        }
        if let Some(t) = self.spool.as_ref().and_then(Spool::next_deadline) {
            take(t);
        }
        if let Some(t) = self.spool_retry_at
            && (!self.overflow.recs.is_empty()
                || self.spool.as_ref().is_some_and(Spool::has_pending))
        {
            take(t);
        }
        next
    }

    /// Reconnects a link that is down. Returns whether it did.
    pub fn reopen(&mut self, now: Instant) -> bool {
        if self.link.is_connected() {
            return false;
        }
        if let Some(f) = &mut self.failing {
            f.retry_at = now;
        }
        self.pump(now);
        self.link.is_connected()
    }

    /// At a stop: what is not delivered goes to the spool (if there is one), and the
    /// spool is closed. Returns the bytes still held (not delivered).
    pub fn close(&mut self, now: Instant) -> u64 {
        if self.spool_cfg.is_some() && self.held() > 0 {
            // In-flight records too: they may reach the server twice (JetStream drops
            // the copy), but none is lost.
            let direct = self.mem.recs.iter().filter(|r| r.is_direct()).count();
            if direct > 0 {
                if self.spooling {
                    // Direct records older than the spool cannot go behind it; they stay
                    // unacknowledged (the producers still have them).
                } else {
                    self.link.disconnect();
                    self.sent = 0;
                    self.unsent_bytes = self.mem.recs.iter().map(|r| r.body_len()).sum::<usize>();
                    self.spool_retry_at = None;
                    self.spill(now);
                }
            }
            if !self.overflow.recs.is_empty() {
                self.drain_overflow(now);
            }
        }
        if let Some(s) = self.spool.as_mut() {
            match s.close() {
                Ok(()) => self.undurable_from = None,
                Err(e) => tracing::error!("{}: closing the spool: {e}", self.label),
            }
        }
        self.update_gauges();
        if self.net.spooled_bytes > 0 {
            tracing::warn!(
                "{}: stopping with {} bytes of events in the spool {}; they are sent at the \
                 next start",
                self.label,
                self.net.spooled_bytes,
                self.spool_cfg
                    .as_ref()
                    .map_or_else(String::new, |c| c.dir.display().to_string())
            );
        }
        self.held()
    }
}

/// `<prefix>.<producer>.<epoch>.<seq>.<index>`: the same for a record in every resend.
fn message_id(out: &mut Vec<u8>, prefix: &str, m: &Meta<'_>) {
    let mut b = itoa::Buffer::new();
    out.extend_from_slice(prefix.as_bytes());
    out.push(b'.');
    out.extend_from_slice(m.producer.as_bytes());
    for n in [m.epoch, m.seq, u64::from(m.index)] {
        out.push(b'.');
        out.extend_from_slice(b.format(n).as_bytes());
    }
}

fn subject_for(out: &mut String, template: &str, event_type: &str) {
    let mut rest = template;
    while let Some(i) = rest.find("{event_type}") {
        out.push_str(&rest[..i]);
        out.push_str(event_type);
        rest = &rest[i + "{event_type}".len()..];
    }
    out.push_str(rest);
}

/// The spool directory of an output when `spool.directory` is not set.
pub fn default_spool_dir(log_dir: &std::path::Path, kind: &str, name: &str) -> std::path::PathBuf {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    log_dir.join("spool").join(format!("{kind}-{clean}"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use meerkat_config::spool::WhenFull;
    use std::sync::{Arc, Mutex};

    /// A link whose server is a test's `Vec`: up or down, confirming on demand.
    #[derive(Debug, Default)]
    pub struct FakeServer {
        pub up: bool,
        pub stored: Vec<String>,
        pub ids: Vec<String>,
        /// Confirm at most this many per poll (None: all).
        pub confirm_per_poll: Option<usize>,
    }

    #[derive(Debug)]
    pub struct FakeLink {
        pub server: Arc<Mutex<FakeServer>>,
        connected: bool,
        queued: Vec<(String, String)>,
        in_flight: usize,
        ids: bool,
    }

    impl FakeLink {
        pub fn new(server: Arc<Mutex<FakeServer>>, ids: bool) -> FakeLink {
            FakeLink {
                server,
                connected: false,
                queued: Vec::new(),
                in_flight: 0,
                ids,
            }
        }
    }

    impl Link for FakeLink {
        fn label(&self) -> String {
            "fake".to_string()
        }
        fn wants_ids(&self) -> bool {
            self.ids
        }
        fn connect(&mut self) -> io::Result<()> {
            if self.server.lock().unwrap().up {
                self.connected = true;
                self.in_flight = 0;
                Ok(())
            } else {
                Err(io::ErrorKind::ConnectionRefused.into())
            }
        }
        fn is_connected(&self) -> bool {
            self.connected
        }
        fn disconnect(&mut self) {
            self.connected = false;
            self.queued.clear();
            self.in_flight = 0;
        }
        fn has_room(&self) -> bool {
            self.in_flight < 100
        }
        fn push(&mut self, rec: RecordRef<'_>) {
            self.queued.push((
                String::from_utf8_lossy(rec.id).into_owned(),
                String::from_utf8_lossy(rec.payload).into_owned(),
            ));
            self.in_flight += 1;
        }
        fn write(&mut self, _: &mut TargetCounters) -> io::Result<()> {
            if !self.server.lock().unwrap().up {
                return Err(io::ErrorKind::BrokenPipe.into());
            }
            Ok(())
        }
        fn poll(&mut self, _: Instant) -> io::Result<Confirmed> {
            let mut s = self.server.lock().unwrap();
            if !s.up {
                return Err(io::ErrorKind::ConnectionReset.into());
            }
            let n = s
                .confirm_per_poll
                .unwrap_or(usize::MAX)
                .min(self.queued.len());
            for (id, p) in self.queued.drain(..n) {
                s.ids.push(id);
                s.stored.push(p);
            }
            self.in_flight -= n;
            Ok(Confirmed {
                n,
                ..Default::default()
            })
        }
        fn in_flight(&self) -> usize {
            self.in_flight
        }
        fn next_deadline(&self, _: Instant) -> Option<Instant> {
            None
        }
    }

    fn meta(seq: u64, index: u32) -> Meta<'static> {
        Meta {
            event_type: "alert",
            producer: "detect-0",
            epoch: 7,
            seq,
            index,
        }
    }

    fn target(server: &Arc<Mutex<FakeServer>>, dir: Option<&std::path::Path>) -> NetTarget {
        let spool = dir.map(|d| SpoolConfig {
            dir: d.join("spool"),
            max_size: 1 << 20,
            segment_size: 8192,
            fsync: meerkat_config::spool::Fsync::Never,
            fsync_interval: Duration::from_secs(1),
            when_full: WhenFull::Block,
        });
        NetTarget::new(
            Box::new(FakeLink::new(Arc::clone(server), true)),
            0,
            spool,
            1 << 12,
            "eve.{event_type}",
            "s1",
        )
    }

    fn settle(t: &mut NetTarget) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while t.held() > 0 || t.spooling || t.link.in_flight() > 0 {
            assert!(Instant::now() < deadline, "did not settle");
            t.flush(Instant::now(), true);
            t.poll(Instant::now());
        }
    }

    #[test]
    fn ids_subjects_and_direct_delivery() {
        let mut id = Vec::new();
        message_id(&mut id, "host", &meta(3, 9));
        assert_eq!(id, b"host.detect-0.7.3.9");
        let mut s = String::new();
        subject_for(&mut s, "ids.{event_type}.x", "flow");
        assert_eq!(s, "ids.flow.x");
        let server = Arc::new(Mutex::new(FakeServer {
            up: true,
            ..Default::default()
        }));
        let mut t = target(&server, None);
        t.start(Instant::now()).unwrap();
        t.accept(b"{\"n\":1}\n", &meta(1, 0), Instant::now());
        assert_eq!(t.accepted(), 8);
        assert_eq!(t.delivered(), 8, "confirmed at once by the fake");
        assert_eq!(server.lock().unwrap().ids, vec!["s1.detect-0.7.1.0"]);
    }

    #[test]
    fn a_down_server_spools_then_everything_arrives_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let server = Arc::new(Mutex::new(FakeServer::default()));
        let mut t = target(&server, Some(dir.path()));
        t.start(Instant::now()).unwrap();
        assert!(t.is_failing());
        for i in 0..500u32 {
            t.accept(
                format!("{{\"n\":{i}}}\n").as_bytes(),
                &meta(1, i),
                Instant::now(),
            );
        }
        t.flush(Instant::now(), false);
        // All spooled: all delivered (acknowledgeable), nothing at the server.
        assert_eq!(t.delivered(), t.accepted());
        assert!(t.net.spooled >= 499, "{:?}", t.net);
        assert!(t.net.spooled_bytes > 0 || t.spool.as_ref().unwrap().bytes() > 0);
        server.lock().unwrap().up = true;
        server.lock().unwrap().confirm_per_poll = Some(7);
        for i in 500..600u32 {
            t.accept(
                format!("{{\"n\":{i}}}\n").as_bytes(),
                &meta(1, i),
                Instant::now(),
            );
        }
        settle(&mut t);
        let got = server.lock().unwrap().stored.clone();
        let want: Vec<String> = (0..600).map(|i| format!("{{\"n\":{i}}}")).collect();
        assert_eq!(got, want);
        assert!(!t.spooling);
        // Sending directly again.
        t.accept(b"{\"n\":600}\n", &meta(2, 0), Instant::now());
        settle(&mut t);
        assert_eq!(server.lock().unwrap().stored.len(), 601);
        assert_eq!(t.net.replayed + 1 + (600 - t.net.spooled), 601);
    }

    #[test]
    fn a_stop_with_a_backlog_spools_it_and_the_next_start_sends_it() {
        let dir = tempfile::tempdir().unwrap();
        let server = Arc::new(Mutex::new(FakeServer {
            up: true,
            confirm_per_poll: Some(0),
            ..Default::default()
        }));
        let mut t = target(&server, Some(dir.path()));
        t.start(Instant::now()).unwrap();
        for i in 0..50u32 {
            t.accept(
                format!("{{\"n\":{i}}}\n").as_bytes(),
                &meta(1, i),
                Instant::now(),
            );
        }
        assert!(t.held() > 0, "nothing confirmed yet");
        assert_eq!(t.close(Instant::now()), 0, "all spooled at the stop");
        drop(t);
        server.lock().unwrap().confirm_per_poll = None;
        let mut t = target(&server, Some(dir.path()));
        t.start(Instant::now()).unwrap();
        settle(&mut t);
        let got = server.lock().unwrap().stored.clone();
        assert_eq!(got.len(), 50);
        assert_eq!(got[49], "{\"n\":49}");
    }
}
