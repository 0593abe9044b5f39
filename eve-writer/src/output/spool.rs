//! The disk spool of a network output: a bounded, crash-safe queue of records in a
//! directory of append-only segment files, read back in order.
//!
//! ```text
//!  <directory>/
//!    LOCK                   flock(2)'ed while a writer owns the spool
//!    cursor                 24 bytes: segment id, offset, xxh3 of both (the commit point)
//!    00000000000000000007.seg
//!    00000000000000000008.seg   segment: 16-byte header `MKSPOOL1` + version + reserved,
//!                               then records: len u32 | xxh3(body) as u32 | body
//!                               body: id_len u16 | subject_len u16 | id | subject | payload
//! ```
//!
//! - **Append** goes to the newest segment (a new one once it reaches `segment-size`).
//!   Records are collected in memory and written with one write(2) per
//!   [`write_out`](Spool::write_out); a record counts as spooled once that write
//!   returned (handed to the OS: a killed writer loses nothing) and, with `fsync: always`,
//!   fdatasync'ed. A write that fails (a full disk) is cut back off the segment, so the
//!   file never ends in a partial record the writer knows of.
//! - **Read** goes from the commit point forward; [`commit`](Spool::commit) moves the
//!   commit point once the server confirmed records, deletes the segments before it, and
//!   writes the cursor file (at most every [`CURSOR_EVERY`], and at close): a writer that
//!   dies resends at most that much again, never less.
//! - **Open** after a crash: segments older than the cursor are deleted; the newest
//!   segment is checked record by record and a torn tail (a record cut by a power loss, a
//!   checksum that does not match) is cut off, logged once. A bad record found while
//!   reading an older segment (bit rot) ends that segment: its rest is counted as
//!   dropped and logged, the next segment is read.
//! - **Bound**: the segments never hold more than `max-size` bytes: a record that does
//!   not fit is refused ([`Appended::Full`]) with `when-full: block`, or the oldest
//!   segment is deleted and its unconfirmed records counted as dropped with
//!   `drop-oldest`.

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use meerkat_config::spool::{Fsync, WhenFull};
use xxhash_rust::xxh3::xxh3_64;

const MAGIC: &[u8; 8] = b"MKSPOOL1";
const VERSION: u32 = 1;
const SEG_HEADER: u64 = 16;
const REC_HEADER: usize = 8;
/// Largest record body (id, subject and payload together).
pub const MAX_RECORD: usize = 64 << 20;
/// How often the cursor file is written while records are being confirmed.
pub const CURSOR_EVERY: Duration = Duration::from_millis(100);
/// Bytes read from a segment at a time.
const READ_CHUNK: usize = 256 * 1024;

/// Spool settings (from `outputs.eve-log.spool`).
#[derive(Debug, Clone)]
pub struct SpoolConfig {
    pub dir: PathBuf,
    pub max_size: u64,
    pub segment_size: u64,
    pub fsync: Fsync,
    pub fsync_interval: Duration,
    pub when_full: WhenFull,
}

/// A position in the spool: segment id and byte offset in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct Pos {
    pub seg: u64,
    pub off: u64,
}

/// One record as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordRef<'a> {
    pub id: &'a [u8],
    pub subject: &'a [u8],
    pub payload: &'a [u8],
}

impl RecordRef<'_> {
    pub fn body_len(&self) -> usize {
        4 + self.id.len() + self.subject.len() + self.payload.len()
    }
}

/// Outcome of an append.
#[derive(Debug, PartialEq, Eq)]
pub enum Appended {
    /// Taken (in memory until the next `write_out`).
    Yes,
    /// Over `max-size` with `when-full: block`: not taken.
    Full,
}

#[derive(Debug)]
struct Segment {
    id: u64,
    /// Bytes in the file (written), header included.
    size: u64,
}

/// Counters of one spool.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct SpoolCounters {
    /// Records deleted unsent (drop-oldest, or a bad record and the rest of its segment).
    pub dropped: u64,
    /// Failed writes (full disk, I/O errors).
    pub write_errors: u64,
    pub fsyncs: u64,
    /// Bytes appended (written out).
    pub bytes_in: u64,
}

#[derive(Debug)]
pub struct Spool {
    cfg: SpoolConfig,
    _lock: File,
    segments: VecDeque<Segment>,
    /// The newest segment, open for appending.
    tail: Option<File>,
    /// Records appended and not yet written out.
    pending: Vec<u8>,
    /// Where the next record would be read, and the reader's state.
    read: Pos,
    reader: Option<(u64, File)>,
    rbuf: Vec<u8>,
    /// Offset in the segment of `rbuf[0]`.
    rbuf_at: u64,
    commit: Pos,
    cursor: File,
    cursor_written: Pos,
    cursor_due: Option<Instant>,
    unsynced: bool,
    last_sync: Instant,
    pub counters: SpoolCounters,
}

fn seg_name(dir: &Path, id: u64) -> PathBuf {
    dir.join(format!("{id:020}.seg"))
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

fn header() -> [u8; SEG_HEADER as usize] {
    let mut h = [0u8; SEG_HEADER as usize];
    h[..8].copy_from_slice(MAGIC);
    h[8..12].copy_from_slice(&VERSION.to_le_bytes());
    h
}

/// Appends one record's bytes (header and body) to `out`.
pub fn encode(rec: &RecordRef<'_>, out: &mut Vec<u8>) {
    let body_len = rec.body_len();
    let start = out.len();
    out.extend_from_slice(&(body_len as u32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&(rec.id.len() as u16).to_le_bytes());
    out.extend_from_slice(&(rec.subject.len() as u16).to_le_bytes());
    out.extend_from_slice(rec.id);
    out.extend_from_slice(rec.subject);
    out.extend_from_slice(rec.payload);
    let sum = xxh3_64(&out[start + REC_HEADER..]) as u32;
    out[start + 4..start + 8].copy_from_slice(&sum.to_le_bytes());
}

/// What is at the start of `b`: a whole good record (its length with header, its
/// parts), too few bytes for one, or a bad one.
enum Decoded<'a> {
    Record(usize, RecordRef<'a>),
    Short,
    Bad(String),
}

fn decode(b: &[u8]) -> Decoded<'_> {
    let Some(h) = b.get(..REC_HEADER) else {
        return Decoded::Short;
    };
    let len = u32::from_le_bytes([h[0], h[1], h[2], h[3]]) as usize;
    let sum = u32::from_le_bytes([h[4], h[5], h[6], h[7]]);
    if !(4..=MAX_RECORD).contains(&len) {
        return Decoded::Bad(format!("record length {len}"));
    }
    let Some(body) = b.get(REC_HEADER..REC_HEADER + len) else {
        return Decoded::Short;
    };
    if xxh3_64(body) as u32 != sum {
        return Decoded::Bad("checksum mismatch".to_string());
    }
    let id_len = u16::from_le_bytes([body[0], body[1]]) as usize;
    let subj_len = u16::from_le_bytes([body[2], body[3]]) as usize;
    if 4 + id_len + subj_len > len {
        return Decoded::Bad(format!("id and subject of {id_len}+{subj_len} bytes"));
    }
    let id = &body[4..4 + id_len];
    let subject = &body[4 + id_len..4 + id_len + subj_len];
    let payload = &body[4 + id_len + subj_len..];
    Decoded::Record(
        REC_HEADER + len,
        RecordRef {
            id,
            subject,
            payload,
        },
    )
}

impl Spool {
    /// Opens (making it if needed) the spool in `cfg.dir`, repairing what a crash left.
    pub fn open(cfg: SpoolConfig) -> io::Result<Spool> {
        std::fs::create_dir_all(&cfg.dir)?;
        let lock = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(cfg.dir.join("LOCK"))?;
        // SAFETY: flock on a file descriptor we own; no memory is involved.
        if unsafe {
            libc::flock(
                std::os::fd::AsRawFd::as_raw_fd(&lock),
                libc::LOCK_EX | libc::LOCK_NB,
            )
        } != 0
        {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!(
                    "spool {} is in use by another output or process",
                    cfg.dir.display()
                ),
            ));
        }
        let mut ids: Vec<u64> = std::fs::read_dir(&cfg.dir)?
            .filter_map(Result::ok)
            .filter_map(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.strip_suffix(".seg")?.parse::<u64>().ok()
            })
            .collect();
        ids.sort_unstable();
        let cursor = OpenOptions::new()
            .create(true)
            .truncate(false)
            .read(true)
            .write(true)
            .open(cfg.dir.join("cursor"))?;
        let mut commit = read_cursor(&cursor).unwrap_or_default();
        // Segments wholly before the commit point were confirmed (the cursor is written
        // before they are deleted).
        for &id in ids.iter().filter(|&&id| id < commit.seg) {
            let _ = std::fs::remove_file(seg_name(&cfg.dir, id));
        }
        ids.retain(|&id| id >= commit.seg);
        let mut segments = VecDeque::new();
        for (i, &id) in ids.iter().enumerate() {
            let path = seg_name(&cfg.dir, id);
            let size = std::fs::metadata(&path)?.len();
            let last = i + 1 == ids.len();
            let size = if last {
                repair_tail(&path, size)?
            } else {
                size
            };
            segments.push_back(Segment { id, size });
        }
        match segments.front() {
            Some(first) if commit.seg < first.id || commit.off < SEG_HEADER => {
                commit = Pos {
                    seg: first.id,
                    off: SEG_HEADER,
                }
            }
            Some(_) => {}
            None => commit = Pos::default(),
        }
        if let Some(first) = segments.front()
            && commit.seg == first.id
            && commit.off > first.size
        {
            // The cursor says more was confirmed than the segment holds (its tail was
            // cut): nothing of it is left to send.
            commit.off = first.size;
        }
        let mut s = Spool {
            tail: None,
            pending: Vec::new(),
            read: commit,
            reader: None,
            rbuf: Vec::new(),
            rbuf_at: 0,
            commit,
            cursor,
            cursor_written: commit,
            cursor_due: None,
            unsynced: false,
            last_sync: Instant::now(),
            counters: SpoolCounters::default(),
            _lock: lock,
            segments,
            cfg,
        };
        if s.cursor.metadata()?.len() < 24 {
            // Its 24 bytes now, so that later updates (in place) never need a new block:
            // a full disk cannot stop them.
            s.cursor_written = Pos {
                seg: u64::MAX,
                off: 0,
            };
            s.write_cursor()?;
        }
        if let Some(last) = s.segments.back() {
            let f = OpenOptions::new()
                .append(true)
                .open(seg_name(&s.cfg.dir, last.id))?;
            s.tail = Some(f);
        }
        Ok(s)
    }

    pub fn dir(&self) -> &Path {
        &self.cfg.dir
    }

    /// Bytes of records not yet confirmed (written and pending).
    pub fn bytes(&self) -> u64 {
        let total: u64 = self.segments.iter().map(|s| s.size - SEG_HEADER).sum();
        let done = match self.segments.front() {
            Some(f) if f.id == self.commit.seg => self.commit.off.saturating_sub(SEG_HEADER),
            _ => 0,
        };
        total.saturating_sub(done) + self.pending.len() as u64
    }

    /// Whether every record appended was confirmed.
    pub fn is_empty(&self) -> bool {
        self.bytes() == 0
    }

    /// Whether records wait to be read (written out ones; see [`write_out`]).
    ///
    /// [`write_out`]: Spool::write_out
    pub fn has_unread(&self) -> bool {
        match self.segments.back() {
            Some(last) => {
                self.read
                    < Pos {
                        seg: last.id,
                        off: last.size,
                    }
            }
            None => false,
        }
    }

    fn disk_bytes(&self) -> u64 {
        self.segments.iter().map(|s| s.size).sum::<u64>() + self.pending.len() as u64
    }

    /// Takes a record (see [`Appended`]). Not on disk before [`write_out`].
    ///
    /// [`write_out`]: Spool::write_out
    pub fn append(&mut self, rec: &RecordRef<'_>) -> io::Result<Appended> {
        let need = (REC_HEADER + rec.body_len()) as u64;
        if rec.body_len() > MAX_RECORD {
            return Err(invalid(format!(
                "a {}-byte record is larger than a spool record may be",
                rec.body_len()
            )));
        }
        while self.disk_bytes() + need > self.cfg.max_size {
            match self.cfg.when_full {
                WhenFull::Block => return Ok(Appended::Full),
                WhenFull::DropOldest => {
                    if !self.drop_oldest()? {
                        return Ok(Appended::Full);
                    }
                }
            }
        }
        encode(rec, &mut self.pending);
        Ok(Appended::Yes)
    }

    /// Deletes the oldest segment that is not being written, counting its unconfirmed
    /// records as dropped. False when there is none.
    fn drop_oldest(&mut self) -> io::Result<bool> {
        if self.segments.len() < 2 {
            // Only the segment being written: start a new one so the old can go.
            if self.segments.len() == 1 && self.pending.is_empty() {
                self.new_segment()?;
            } else {
                return Ok(false);
            }
        }
        let Some(old) = self.segments.pop_front() else {
            return Ok(false);
        };
        let from = if self.commit.seg == old.id {
            self.commit.off
        } else {
            SEG_HEADER
        };
        let lost = count_records(&seg_name(&self.cfg.dir, old.id), from).unwrap_or(0);
        self.counters.dropped += lost;
        let next = self.segments.front().map_or(old.id + 1, |s| s.id);
        self.commit = Pos {
            seg: next,
            off: SEG_HEADER,
        };
        if self.read < self.commit {
            self.read = self.commit;
            self.reader = None;
        }
        self.write_cursor()?;
        std::fs::remove_file(seg_name(&self.cfg.dir, old.id))?;
        if lost > 0 {
            tracing::warn!(
                "spool {} is full: dropped its oldest segment ({lost} records not yet sent)",
                self.cfg.dir.display()
            );
        }
        Ok(true)
    }

    fn new_segment(&mut self) -> io::Result<()> {
        let id = self
            .segments
            .back()
            .map_or(self.commit.seg.max(1), |s| s.id + 1);
        let path = seg_name(&self.cfg.dir, id);
        let mut f = OpenOptions::new()
            .create(true)
            .truncate(true)
            .write(true)
            .open(&path)?;
        f.write_all(&header())?;
        if self.cfg.fsync != Fsync::Never {
            f.sync_data()?;
            File::open(&self.cfg.dir)?.sync_all()?;
        }
        let f = OpenOptions::new().append(true).open(&path)?;
        self.tail = Some(f);
        self.segments.push_back(Segment {
            id,
            size: SEG_HEADER,
        });
        if self.segments.len() == 1 {
            self.commit = Pos {
                seg: id,
                off: SEG_HEADER,
            };
            self.read = self.commit;
        }
        Ok(())
    }

    /// Bytes appended and not yet written out.
    pub fn pending_bytes(&self) -> usize {
        self.pending.len()
    }

    /// Whether records wait to be written out.
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }

    /// Writes what was appended (one write per segment touched) and, with `fsync:
    /// always`, syncs it. On error nothing of it is in the spool (the segment is cut back)
    /// and the records stay pending for the next try.
    pub fn write_out(&mut self) -> io::Result<()> {
        let mut at = 0;
        while at < self.pending.len() {
            let full = self
                .segments
                .back()
                .is_none_or(|s| s.size >= self.cfg.segment_size);
            if (full || self.tail.is_none())
                && let Err(e) = self.new_segment()
            {
                self.counters.write_errors += 1;
                // What went out before stays out; the rest waits.
                self.pending.drain(..at);
                return Err(e);
            }
            // Whole records up to the segment's size (at least one).
            let room = self
                .segments
                .back()
                .map_or(0, |s| self.cfg.segment_size.saturating_sub(s.size))
                as usize;
            let mut end = at;
            while end < self.pending.len() {
                let len = u32::from_le_bytes(
                    self.pending[end..end + 4]
                        .try_into()
                        .expect("4 bytes of a record header we wrote"),
                ) as usize
                    + REC_HEADER;
                if end > at && end - at + len > room {
                    break;
                }
                end += len;
            }
            let (Some(tail), Some(seg)) = (self.tail.as_mut(), self.segments.back_mut()) else {
                break;
            };
            if let Err(e) = tail.write_all(&self.pending[at..end]) {
                self.counters.write_errors += 1;
                // Cut back whatever part of it reached the file.
                let _ = tail.set_len(seg.size);
                self.pending.drain(..at);
                return Err(e);
            }
            seg.size += (end - at) as u64;
            self.counters.bytes_in += (end - at) as u64;
            self.unsynced = true;
            at = end;
        }
        self.pending.clear();
        if self.cfg.fsync == Fsync::Always {
            self.sync()?;
        }
        Ok(())
    }

    /// fdatasync of the newest segment if something was written since the last.
    pub fn sync(&mut self) -> io::Result<()> {
        if self.unsynced
            && let Some(t) = &self.tail
        {
            t.sync_data()?;
            self.counters.fsyncs += 1;
        }
        self.unsynced = false;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// Periodic work: the interval fsync and the cursor file.
    pub fn tick(&mut self, now: Instant) {
        if self.cfg.fsync == Fsync::Interval
            && self.unsynced
            && now.duration_since(self.last_sync) >= self.cfg.fsync_interval
            && let Err(e) = self.sync()
        {
            tracing::error!("spool {}: fsync: {e}", self.cfg.dir.display());
        }
        if self.cursor_due.is_some_and(|t| now >= t)
            && let Err(e) = self.write_cursor()
        {
            tracing::error!("spool {}: cursor: {e}", self.cfg.dir.display());
        }
    }

    /// When [`tick`](Spool::tick) next has work.
    pub fn next_deadline(&self) -> Option<Instant> {
        let sync = (self.cfg.fsync == Fsync::Interval && self.unsynced)
            .then(|| self.last_sync + self.cfg.fsync_interval);
        match (sync, self.cursor_due) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Reads the next record, if one was written out; `f` gets it and its end
    /// position (to [`commit`](Spool::commit) once the server confirmed it).
    pub fn read_next<T>(&mut self, f: impl FnOnce(RecordRef<'_>, Pos) -> T) -> Option<T> {
        loop {
            let seg = self.segments.iter().find(|s| s.id >= self.read.seg)?;
            let (seg_id, seg_size) = (seg.id, seg.size);
            if seg_id != self.read.seg {
                self.read = Pos {
                    seg: seg_id,
                    off: SEG_HEADER,
                };
            }
            if self.read.off >= seg_size {
                // The end of this segment; the next, if there is one.
                if self.segments.back().is_some_and(|s| s.id == seg_id) {
                    return None;
                }
                self.read = Pos {
                    seg: seg_id + 1,
                    off: SEG_HEADER,
                };
                continue;
            }
            let fresh = self.reader.as_ref().is_none_or(|(id, _)| *id != seg_id)
                || self.read.off < self.rbuf_at
                || (self.read.off - self.rbuf_at) as usize > self.rbuf.len();
            if fresh {
                match File::open(seg_name(&self.cfg.dir, seg_id)) {
                    Ok(file) => self.reader = Some((seg_id, file)),
                    Err(e) => {
                        tracing::error!("spool: cannot read segment {seg_id}: {e}; skipped");
                        self.skip_segment(seg_id);
                        continue;
                    }
                }
                self.rbuf.clear();
                self.rbuf_at = self.read.off;
            }
            let rel = (self.read.off - self.rbuf_at) as usize;
            match decode(&self.rbuf[rel..]) {
                Decoded::Record(len, rec) => {
                    let end = Pos {
                        seg: seg_id,
                        off: self.read.off + len as u64,
                    };
                    self.read = end;
                    return Some(f(rec, end));
                }
                Decoded::Bad(why) => {
                    self.bad_record(seg_id, &why);
                    continue;
                }
                Decoded::Short => {
                    let avail = seg_size - self.rbuf_at;
                    if (self.rbuf.len() as u64) >= avail {
                        // The segment ends inside a record: it was cut (it is never
                        // written that way), the rest of it cannot be read.
                        self.bad_record(seg_id, "record cut short");
                        continue;
                    }
                    // Drop what was read, keep the partial record, read more.
                    self.rbuf.drain(..rel);
                    self.rbuf_at = self.read.off;
                    let want = (avail - self.rbuf.len() as u64).min(READ_CHUNK as u64) as usize;
                    let (_, file) = self.reader.as_mut()?;
                    let have = self.rbuf.len();
                    self.rbuf.resize(have + want, 0);
                    let at = self.rbuf_at + have as u64;
                    match file.read_at(&mut self.rbuf[have..], at) {
                        Ok(0) | Err(_) => {
                            self.rbuf.truncate(have);
                            self.bad_record(seg_id, "unreadable");
                            continue;
                        }
                        Ok(n) => self.rbuf.truncate(have + n),
                    }
                }
            }
        }
    }

    fn bad_record(&mut self, seg_id: u64, why: &str) {
        let left = self
            .segments
            .iter()
            .find(|s| s.id == seg_id)
            .map_or(0, |s| s.size);
        tracing::error!(
            "spool {}: segment {seg_id} has a bad record at byte {} ({why}); the {} bytes \
             after it are dropped",
            self.cfg.dir.display(),
            self.read.off,
            left.saturating_sub(self.read.off)
        );
        self.counters.dropped += 1;
        self.skip_segment(seg_id);
    }

    fn skip_segment(&mut self, seg_id: u64) {
        self.reader = None;
        self.rbuf.clear();
        if self.segments.back().is_some_and(|s| s.id == seg_id) {
            // The newest: cut it there, so appends continue after good records.
            if let Some(t) = &self.tail {
                let _ = t.set_len(self.read.off);
            }
            if let Some(s) = self.segments.back_mut() {
                s.size = self.read.off;
            }
        } else {
            self.read = Pos {
                seg: seg_id + 1,
                off: SEG_HEADER,
            };
        }
    }

    /// Records up to `pos` are confirmed: segments before it are deleted.
    pub fn commit(&mut self, pos: Pos, now: Instant) {
        if pos <= self.commit {
            return;
        }
        self.commit = pos;
        let mut gone = Vec::new();
        while self.segments.len() > 1
            && self
                .segments
                .front()
                .is_some_and(|s| s.id < pos.seg || (s.id == pos.seg && pos.off >= s.size))
        {
            // Fully confirmed and not the one being written.
            if let Some(s) = self.segments.pop_front() {
                gone.push(s.id);
            }
        }
        if let Some(first) = self.segments.front()
            && first.id > self.commit.seg
        {
            self.commit = Pos {
                seg: first.id,
                off: SEG_HEADER,
            };
        }
        if !gone.is_empty() {
            // The cursor first, so a crash in between never resends a deleted segment's
            // records as if they were new.
            if let Err(e) = self.write_cursor() {
                tracing::error!("spool {}: cursor: {e}", self.cfg.dir.display());
            }
            for id in gone {
                let _ = std::fs::remove_file(seg_name(&self.cfg.dir, id));
            }
        } else if self.cursor_due.is_none() {
            self.cursor_due = Some(now + CURSOR_EVERY);
        }
    }

    fn write_cursor(&mut self) -> io::Result<()> {
        self.cursor_due = None;
        if self.cursor_written == self.commit {
            return Ok(());
        }
        let mut b = [0u8; 24];
        b[..8].copy_from_slice(&self.commit.seg.to_le_bytes());
        b[8..16].copy_from_slice(&self.commit.off.to_le_bytes());
        let sum = xxh3_64(&b[..16]);
        b[16..].copy_from_slice(&sum.to_le_bytes());
        self.cursor.write_all_at(&b, 0)?;
        self.cursor_written = self.commit;
        Ok(())
    }

    /// Writes out what is pending and the cursor (at shutdown).
    pub fn close(&mut self) -> io::Result<()> {
        self.write_out()?;
        if self.cfg.fsync != Fsync::Never {
            self.sync()?;
        }
        self.write_cursor()
    }
}

fn read_cursor(f: &File) -> Option<Pos> {
    let mut b = [0u8; 24];
    f.read_exact_at(&mut b, 0).ok()?;
    let sum = u64::from_le_bytes(b[16..].try_into().ok()?);
    if xxh3_64(&b[..16]) != sum {
        return None;
    }
    Some(Pos {
        seg: u64::from_le_bytes(b[..8].try_into().ok()?),
        off: u64::from_le_bytes(b[8..16].try_into().ok()?),
    })
}

/// Checks the newest segment record by record; cuts a torn or bad tail. Returns the size.
fn repair_tail(path: &Path, size: u64) -> io::Result<u64> {
    let mut f = OpenOptions::new().read(true).write(true).open(path)?;
    let mut h = [0u8; SEG_HEADER as usize];
    if size < SEG_HEADER || f.read_exact(&mut h).is_err() || &h[..8] != MAGIC {
        tracing::warn!(
            "spool segment {} has no valid header (cut by a crash); rewritten empty",
            path.display()
        );
        f.set_len(0)?;
        f.seek(SeekFrom::Start(0))?;
        f.write_all(&header())?;
        return Ok(SEG_HEADER);
    }
    let good = scan(&mut f, SEG_HEADER, size, |_| ())?;
    if good < size {
        tracing::warn!(
            "spool segment {}: removed {} bytes of a record cut by a crash",
            path.display(),
            size - good
        );
        f.set_len(good)?;
    }
    Ok(good)
}

/// Reads records from `from` to `size`, calling `each` for each good one; returns the
/// end of the last good record.
fn scan(
    f: &mut File,
    from: u64,
    size: u64,
    mut each: impl FnMut(&RecordRef<'_>),
) -> io::Result<u64> {
    let mut at = from;
    let mut buf: Vec<u8> = Vec::new();
    let mut buf_at = from;
    loop {
        let rel = (at - buf_at) as usize;
        match decode(&buf[rel..]) {
            Decoded::Record(len, rec) => {
                each(&rec);
                at += len as u64;
            }
            Decoded::Bad(_) => return Ok(at),
            Decoded::Short => {
                if buf_at + buf.len() as u64 >= size {
                    return Ok(at);
                }
                buf.drain(..rel);
                buf_at = at;
                let have = buf.len();
                let want = ((size - buf_at) as usize - have).min(READ_CHUNK);
                buf.resize(have + want, 0);
                let n = f.read_at(&mut buf[have..], buf_at + have as u64)?;
                buf.truncate(have + n);
                if n == 0 {
                    return Ok(at);
                }
            }
        }
    }
}

fn count_records(path: &Path, from: u64) -> io::Result<u64> {
    let mut f = File::open(path)?;
    let size = f.metadata()?.len();
    let mut n = 0;
    scan(&mut f, from, size, |_| n += 1)?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(dir: &Path, max: u64, seg: u64, when_full: WhenFull) -> SpoolConfig {
        SpoolConfig {
            dir: dir.to_path_buf(),
            max_size: max,
            segment_size: seg,
            fsync: Fsync::Interval,
            fsync_interval: Duration::from_secs(1),
            when_full,
        }
    }

    fn rec(i: usize) -> Vec<u8> {
        format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(i % 50)).into_bytes()
    }

    fn put(s: &mut Spool, i: usize) -> Appended {
        let p = rec(i);
        let id = format!("id-{i}");
        s.append(&RecordRef {
            id: id.as_bytes(),
            subject: b"eve.alert",
            payload: &p,
        })
        .unwrap()
    }

    /// Reads everything readable; returns the payloads' numbers and the last position.
    fn drain(s: &mut Spool) -> (Vec<usize>, Option<Pos>) {
        let mut out = Vec::new();
        let mut last = None;
        while let Some((n, pos)) = s.read_next(|r, pos| {
            let t = std::str::from_utf8(r.payload).unwrap();
            let n: usize = t[5..t.find(',').unwrap()].parse().unwrap();
            assert_eq!(r.id, format!("id-{n}").as_bytes());
            assert_eq!(r.subject, b"eve.alert");
            (n, pos)
        }) {
            out.push(n);
            last = Some(pos);
        }
        (out, last)
    }

    #[test]
    fn records_come_back_in_order_across_segments_and_reopens() {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(dir.path(), 1 << 20, 4096, WhenFull::Block);
        let mut s = Spool::open(c.clone()).unwrap();
        assert!(s.is_empty() && !s.has_unread());
        for i in 0..300 {
            assert_eq!(put(&mut s, i), Appended::Yes);
        }
        assert!(!s.has_unread(), "nothing is readable before write_out");
        s.write_out().unwrap();
        assert!(s.segments.len() > 3, "{} segments", s.segments.len());
        // Read half, confirm a third, and "crash" (drop without close).
        let mut got = Vec::new();
        let mut third = None;
        for k in 0..150 {
            let (n, pos) = s.read_next(|r, p| (r.payload.len(), p)).unwrap();
            got.push(n);
            if k == 99 {
                third = Some(pos);
            }
        }
        s.commit(third.unwrap(), Instant::now());
        s.tick(Instant::now() + CURSOR_EVERY);
        drop(s);
        // A new writer resends from the commit point: records 100.. again, none lost.
        let mut s = Spool::open(c.clone()).unwrap();
        let (nums, last) = drain(&mut s);
        assert_eq!(nums, (100..300).collect::<Vec<_>>());
        s.commit(last.unwrap(), Instant::now());
        assert!(s.is_empty());
        assert_eq!(s.segments.len(), 1, "confirmed segments are deleted");
        s.close().unwrap();
        drop(s);
        let s = Spool::open(c).unwrap();
        assert!(s.is_empty() && !s.has_unread());
    }

    #[test]
    fn a_torn_tail_is_cut_and_appends_continue_after_it() {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(dir.path(), 1 << 20, 1 << 16, WhenFull::Block);
        let mut s = Spool::open(c.clone()).unwrap();
        for i in 0..10 {
            put(&mut s, i);
        }
        s.close().unwrap();
        drop(s);
        let seg = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "seg"))
            .unwrap();
        // A power cut in the middle of the 11th record: half a record at the end.
        let mut partial = Vec::new();
        encode(
            &RecordRef {
                id: b"id-10",
                subject: b"eve.alert",
                payload: &rec(10),
            },
            &mut partial,
        );
        let mut f = OpenOptions::new().append(true).open(&seg).unwrap();
        f.write_all(&partial[..partial.len() / 2]).unwrap();
        drop(f);
        let mut s = Spool::open(c.clone()).unwrap();
        for i in 10..12 {
            put(&mut s, i);
        }
        s.write_out().unwrap();
        let (nums, _) = drain(&mut s);
        assert_eq!(nums, (0..12).collect::<Vec<_>>());
        // A flipped byte in the middle of a record of an older segment: the rest of that
        // segment is dropped and counted, the reader goes on with the next.
        drop(s);
        let mut bytes = std::fs::read(&seg).unwrap();
        let at = SEG_HEADER as usize + 40;
        bytes[at] ^= 0xff;
        std::fs::write(&seg, &bytes).unwrap();
        let mut s = Spool::open(cfg(dir.path(), 1 << 20, 1 << 16, WhenFull::Block)).unwrap();
        let (nums, _) = drain(&mut s);
        assert!(nums.len() < 12, "{nums:?}");
        assert_eq!(nums, (0..nums.len()).collect::<Vec<_>>());
    }

    #[test]
    fn bounded_block_refuses_and_drop_oldest_counts() {
        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::open(cfg(dir.path(), 8192, 4096, WhenFull::Block)).unwrap();
        let mut taken = 0;
        while put(&mut s, taken) == Appended::Yes {
            taken += 1;
            if taken % 10 == 0 {
                s.write_out().unwrap();
            }
            assert!(taken < 10_000);
        }
        s.write_out().unwrap();
        assert!(s.disk_bytes() <= 8192);
        let (nums, _) = drain(&mut s);
        assert_eq!(nums, (0..taken).collect::<Vec<_>>());
        assert_eq!(s.counters.dropped, 0);

        let dir = tempfile::tempdir().unwrap();
        let mut s = Spool::open(cfg(dir.path(), 8192, 4096, WhenFull::DropOldest)).unwrap();
        for i in 0..1000 {
            assert_eq!(put(&mut s, i), Appended::Yes);
            s.write_out().unwrap();
        }
        assert!(s.disk_bytes() <= 8192, "{}", s.disk_bytes());
        let (nums, _) = drain(&mut s);
        // The newest records are there, in order; the ones missing are counted.
        assert_eq!(*nums.last().unwrap(), 999);
        assert!(nums.windows(2).all(|w| w[1] == w[0] + 1));
        assert_eq!(s.counters.dropped as usize, 1000 - nums.len());
    }

    #[test]
    fn one_owner_per_directory() {
        let dir = tempfile::tempdir().unwrap();
        let c = cfg(dir.path(), 1 << 20, 4096, WhenFull::Block);
        let _a = Spool::open(c.clone()).unwrap();
        let e = Spool::open(c).unwrap_err();
        assert!(e.to_string().contains("in use"), "{e}");
    }
}
