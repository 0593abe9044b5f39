//! HTTP byte-range reassembly: the `206 Partial Content` responses that carry parts of
//! one file (`Content-Range`, same host and file name) are merged into that file, which
//! is logged once complete, as Suricata 8 does (`app-layer.protocols.http.byterange`).
//!
//! Every part stays a file of its own (with its range, EVE `start`/`end`). Besides, the
//! worker keeps one [`Container`] per host + file name: the part that continues the
//! file where it stands writes its bytes straight into the container's file (which it
//! borrows while it lasts, so that appending needs no lock); a part that starts further
//! on is kept aside (bounded by `byterange.memcap`, counted against it for its whole
//! announced length) and merged when the file reaches it; a part the file already has
//! is skipped. The part that completes the file hands the merged file to its own
//! transaction, where it is logged as one more file of the response (no range).
//!
//! The table belongs to one worker (Suricata's is global to the engine): parts of one
//! file that arrive on flows hashed to different workers are not merged. Containers
//! expire `byterange.timeout` seconds (packet time) after their last part opened, and
//! at most [`MAX_CONTAINERS`] exist (the oldest unused one makes room).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use super::{File, FileConfig};

/// Most containers (files being reassembled) a worker keeps.
pub const MAX_CONTAINERS: usize = 4096;
/// Longest key (host + file name) used; a longer one is cut.
pub const MAX_KEY: usize = 2048;

/// `app-layer.protocols.http.byterange`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RangeConfig {
    /// Bytes of out-of-order parts kept at most (0 = unlimited, as Suricata's).
    pub memcap: u64,
    /// Seconds (packet time) a container lives after its last part opened.
    pub timeout: u64,
}

impl Default for RangeConfig {
    /// Suricata's defaults: 100 MiB, 60 s.
    fn default() -> Self {
        RangeConfig {
            memcap: 100 << 20,
            timeout: 60,
        }
    }
}

/// Counters of the reassembly.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RangeStats {
    /// Parts not kept because the memcap was reached (Suricata's memcap counter of
    /// `http.byterange`).
    pub memcap: u64,
    /// Files reassembled from their parts.
    pub merged: u64,
    /// Parts that found no room for their container ([`MAX_CONTAINERS`]).
    pub no_container: u64,
}

/// Parts not kept for the memcap, all tables of the process together (the worker's
/// `http_byterange_memcap` counter).
pub static MEMCAP_HITS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// The worker's table of files being reassembled, shared by its HTTP flows.
pub type Shared = Arc<Mutex<ByteRanges>>;

/// Where a container's file is.
#[derive(Debug, Default)]
enum Slot {
    /// None yet, or handed over complete.
    #[default]
    Absent,
    Here(Box<File>),
    /// A part that continues it is writing into it.
    Lent,
}

/// A part kept aside until the file reaches it.
#[derive(Debug)]
struct Fragment {
    start: u64,
    /// Its announced length (counted against the memcap).
    buflen: u64,
    data: Vec<u8>,
    /// Bytes of it missing (a gap in its stream), merged as a gap before its data.
    gap: u64,
}

/// One file being reassembled.
#[derive(Debug)]
struct Container {
    file: Slot,
    /// Parts kept aside, by (start, length, bytes received, arrival).
    fragments: BTreeMap<(u64, u64, u64, u64), Fragment>,
    /// The merged file's length so far.
    lastsize: u64,
    /// The file's length, the largest any part announced.
    totalsize: u64,
    /// Parts that hold a reference to the container.
    refs: u32,
    /// Packet time (s) past which it expires.
    expire: u64,
    /// Order of last use, for eviction at [`MAX_CONTAINERS`].
    used: u64,
}

/// The table (see the module documentation).
#[derive(Debug, Default)]
pub struct ByteRanges {
    cfg: RangeConfig,
    containers: HashMap<Vec<u8>, Container>,
    /// Bytes of kept parts (their announced lengths).
    memuse: u64,
    /// Packet time (s), set by the worker.
    now: u64,
    clock: u64,
    seq: u64,
    pub stats: RangeStats,
}

impl ByteRanges {
    pub fn new(cfg: RangeConfig) -> ByteRanges {
        ByteRanges {
            cfg,
            ..ByteRanges::default()
        }
    }

    pub fn shared(cfg: RangeConfig) -> Shared {
        Arc::new(Mutex::new(ByteRanges::new(cfg)))
    }

    /// Bytes of parts kept aside.
    pub fn memuse(&self) -> u64 {
        self.memuse
    }

    /// Files being reassembled.
    pub fn len(&self) -> usize {
        self.containers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.containers.is_empty()
    }

    /// Packet time moved on to `now_s`: containers no part uses that expired go (with
    /// what they kept).
    pub fn tick(&mut self, now_s: u64) {
        if self.now == 0 {
            // The first tick: containers made before it had no time to count from.
            let expire = now_s.saturating_add(self.cfg.timeout);
            for c in self.containers.values_mut() {
                c.expire = expire;
            }
        }
        self.now = self.now.max(now_s);
        if self.containers.is_empty() {
            return;
        }
        let now = self.now;
        let mut freed = 0;
        self.containers.retain(|_, c| {
            let keep = c.refs > 0 || now < c.expire;
            if !keep {
                freed += c.fragments.values().map(|f| f.buflen).sum::<u64>();
            }
            keep
        });
        self.memuse = self.memuse.saturating_sub(freed);
    }

    /// The container of `key`, made when new; `None` when the table is full of
    /// containers in use.
    fn container(&mut self, key: &[u8]) -> Option<&mut Container> {
        self.clock += 1;
        let (clock, expire) = (self.clock, self.now.saturating_add(self.cfg.timeout));
        if !self.containers.contains_key(key) {
            if self.containers.len() >= MAX_CONTAINERS {
                let victim = self
                    .containers
                    .iter()
                    .filter(|(_, c)| c.refs == 0)
                    .min_by_key(|(_, c)| c.used)
                    .map(|(k, _)| k.clone());
                match victim.and_then(|k| self.containers.remove(&k)) {
                    Some(c) => {
                        let freed: u64 = c.fragments.values().map(|f| f.buflen).sum();
                        self.memuse = self.memuse.saturating_sub(freed);
                    }
                    None => {
                        self.stats.no_container += 1;
                        return None;
                    }
                }
            }
            self.containers.insert(
                key.to_vec(),
                Container {
                    file: Slot::Absent,
                    fragments: BTreeMap::new(),
                    lastsize: 0,
                    totalsize: 0,
                    refs: 0,
                    expire,
                    used: clock,
                },
            );
        }
        let c = self.containers.get_mut(key)?;
        c.expire = expire;
        c.used = clock;
        Some(c)
    }
}

fn lock(t: &Shared) -> MutexGuard<'_, ByteRanges> {
    // A panic while the table was locked leaves it consistent enough to go on with
    // (counters and maps only).
    t.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// One part's share of the reassembly, held by the part's own file (see
/// [`File::range_block`]): what it does with the bytes of the part.
#[derive(Debug)]
pub struct RangeBlock {
    table: Shared,
    key: Vec<u8>,
    /// The part holds a reference to its container (it writes into its file, or keeps
    /// a fragment for it).
    referenced: bool,
    /// Bytes of the part the file already has.
    toskip: u64,
    /// The container's file, borrowed while this part continues it.
    file: Option<Box<File>>,
    /// This part, kept aside.
    current: Option<Fragment>,
}

/// The part `start..=end` of a file of `total` bytes named `name` (host + name in
/// `key`) began: its block, or `None` when the table has no room.
pub fn open(
    table: &Shared,
    key: &[u8],
    name: &[u8],
    cfg: &FileConfig,
    (start, end, total): (u64, u64, u64),
) -> Option<RangeBlock> {
    let key = &key[..key.len().min(MAX_KEY)];
    let mut t = lock(table);
    let memcap = t.cfg.memcap;
    let memuse = t.memuse;
    let c = t.container(key)?;
    if matches!(c.file, Slot::Absent) {
        c.file = Slot::Here(Box::new(File::open(name, cfg)));
    }
    c.totalsize = c.totalsize.max(total);
    let buflen = end - start + 1;
    let mut b = RangeBlock {
        table: Arc::clone(table),
        key: key.to_vec(),
        referenced: false,
        toskip: 0,
        file: None,
        current: None,
    };
    let here = matches!(c.file, Slot::Here(_));
    if start == c.lastsize && here {
        // It continues the file: it writes into it.
        b.file = take(&mut c.file);
        b.referenced = true;
    } else if start < c.lastsize && c.lastsize - start >= buflen {
        // All of it is in the file already.
        b.toskip = buflen;
        return Some(b);
    } else if start < c.lastsize && here {
        // Its start is in the file already, the rest continues it.
        b.toskip = c.lastsize - start;
        b.file = take(&mut c.file);
        b.referenced = true;
    } else if memcap != 0 && memuse.saturating_add(buflen) > memcap {
        // To be kept aside, but there is no room: skipped.
        b.toskip = buflen;
        t.stats.memcap += 1;
        MEMCAP_HITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return Some(b);
    } else {
        b.current = Some(Fragment {
            start,
            buflen,
            data: Vec::new(),
            gap: 0,
        });
        b.referenced = true;
        t.memuse += buflen;
    }
    if b.referenced
        && let Some(c) = t.containers.get_mut(key)
    {
        c.refs += 1;
    }
    Some(b)
}

fn take(s: &mut Slot) -> Option<Box<File>> {
    match std::mem::replace(s, Slot::Lent) {
        Slot::Here(f) => Some(f),
        other => {
            *s = other;
            None
        }
    }
}

impl RangeBlock {
    /// The part's next bytes (`None`: `len` bytes missing).
    pub fn append(&mut self, data: Option<&[u8]>, len: u64) {
        if len == 0 {
            return;
        }
        if self.toskip >= len {
            self.toskip -= len;
            return;
        }
        let skip = self.toskip;
        self.toskip = 0;
        if let Some(f) = self.file.as_deref_mut() {
            match data {
                Some(d) => f.append(
                    d.get(usize::try_from(skip).unwrap_or(usize::MAX)..)
                        .unwrap_or(&[]),
                ),
                None => f.gap(len - skip),
            }
            return;
        }
        if skip > 0 {
            // Past an overlap without the file: nothing to do (as Suricata).
            return;
        }
        if let Some(cur) = self.current.as_mut() {
            match data {
                None => cur.gap += len,
                Some(d) => {
                    let room = usize::try_from(cur.buflen)
                        .unwrap_or(usize::MAX)
                        .saturating_sub(cur.data.len());
                    cur.data.extend_from_slice(&d[..d.len().min(room)]);
                }
            }
        }
    }

    /// The part ended (`truncated`: before its end): returns the merged file when this
    /// part completed it.
    pub fn close(mut self, truncated: bool) -> Option<File> {
        if !self.referenced {
            return None;
        }
        let table = Arc::clone(&self.table);
        let mut guard = lock(&table);
        let t = &mut *guard;
        t.seq += 1;
        let seq = t.seq;
        let Some(c) = t.containers.get_mut(&self.key) else {
            // Evicted meanwhile (cannot happen while referenced): drop what we hold.
            if let Some(cur) = self.current.take() {
                t.memuse = t.memuse.saturating_sub(cur.buflen);
            }
            self.referenced = false;
            return None;
        };
        c.refs = c.refs.saturating_sub(1);
        self.referenced = false;
        if let Some(cur) = self.current.take() {
            if c.lastsize >= cur.start + cur.data.len() as u64 {
                // The file has it all by now.
                t.memuse = t.memuse.saturating_sub(cur.buflen);
                return None;
            }
            let k = (cur.start, cur.buflen, cur.data.len() as u64);
            if c.fragments.keys().any(|&(s, l, o, _)| (s, l, o) == k) {
                // The same part twice.
                t.memuse = t.memuse.saturating_sub(cur.buflen);
                return None;
            }
            c.fragments.insert((k.0, k.1, k.2, seq), cur);
            if !matches!(c.file, Slot::Here(_)) {
                // Another part is writing the file, or there is none.
                return None;
            }
        } else if self.toskip > 0 {
            // It ended within the overlap: the file goes back untouched.
            if let Some(f) = self.file.take() {
                c.file = Slot::Here(f);
            }
            return None;
        } else if let Some(f) = self.file.take() {
            c.file = Slot::Here(f);
        }
        let Slot::Here(f) = &mut c.file else {
            return None;
        };
        // Merge the kept parts the file now reaches.
        let mut freed = 0;
        while let Some(entry) = c.fragments.first_entry() {
            let r = entry.get();
            if f.size() < r.start {
                break;
            }
            let r = entry.remove();
            freed += r.buflen;
            let overlap = f.size() - r.start;
            if (overlap as usize) < r.data.len() {
                if r.gap > 0 {
                    f.gap(r.gap);
                }
                f.append(&r.data[overlap as usize..]);
            }
        }
        t.memuse = t.memuse.saturating_sub(freed);
        c.lastsize = f.size();
        if f.size() < c.totalsize {
            return None;
        }
        let Slot::Here(mut f) = std::mem::take(&mut c.file) else {
            return None;
        };
        if truncated {
            f.truncate();
        } else {
            f.close();
        }
        t.stats.merged += 1;
        Some(*f)
    }
}

impl Drop for RangeBlock {
    /// A part dropped without [`RangeBlock::close`] (its transaction went first) gives
    /// back the file and what it kept.
    fn drop(&mut self) {
        if !self.referenced && self.current.is_none() && self.file.is_none() {
            return;
        }
        let mut t = lock(&self.table);
        if let Some(cur) = self.current.take() {
            t.memuse = t.memuse.saturating_sub(cur.buflen);
        }
        if let Some(c) = t.containers.get_mut(&self.key) {
            if self.referenced {
                c.refs = c.refs.saturating_sub(1);
            }
            if let Some(f) = self.file.take() {
                c.file = Slot::Here(f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg() -> FileConfig {
        FileConfig {
            track: true,
            sha256: true,
            ..FileConfig::default()
        }
    }

    /// The file's bytes: `i % 251` at offset `i`.
    fn data(total: usize) -> Vec<u8> {
        (0..total).map(|i| (i % 251) as u8).collect()
    }

    fn sha256(d: &[u8]) -> [u8; 32] {
        use sha2::Digest;
        sha2::Sha256::digest(d).into()
    }

    /// Sends part `first..=last` of `d` in pieces of `piece` bytes; the merged file if
    /// this part completed it.
    fn part(
        t: &Shared,
        key: &[u8],
        d: &[u8],
        first: usize,
        last: usize,
        piece: usize,
    ) -> Option<File> {
        let mut b = open(
            t,
            key,
            b"/f",
            &cfg(),
            (first as u64, last as u64, d.len() as u64),
        )
        .expect("room");
        for c in d[first..=last].chunks(piece) {
            b.append(Some(c), c.len() as u64);
        }
        b.close(false)
    }

    #[test]
    fn parts_in_order_make_the_file() {
        let t = ByteRanges::shared(RangeConfig::default());
        let d = data(3000);
        assert!(part(&t, b"h/f", &d, 0, 999, 100).is_none());
        assert!(part(&t, b"h/f", &d, 1000, 1999, 333).is_none());
        let f = part(&t, b"h/f", &d, 2000, 2999, 1000).expect("complete");
        assert_eq!(
            (f.size(), f.state()),
            (3000, super::super::FileState::Closed)
        );
        assert_eq!(f.sha256(), Some(&sha256(&d)));
        assert_eq!(lock(&t).stats.merged, 1);
    }

    #[test]
    fn later_parts_wait_overlaps_and_duplicates_are_skipped() {
        let t = ByteRanges::shared(RangeConfig::default());
        let d = data(6000);
        // The last part first (kept aside), the middle twice, then the start.
        assert!(part(&t, b"k", &d, 4000, 5999, 700).is_none());
        assert_eq!(lock(&t).memuse(), 2000);
        assert!(part(&t, b"k", &d, 2000, 3999, 700).is_none());
        assert!(part(&t, b"k", &d, 2000, 3999, 500).is_none(), "a duplicate");
        assert_eq!(lock(&t).memuse(), 4000, "the duplicate is not kept");
        // The start overlaps the middle part by 500 bytes.
        let f = part(&t, b"k", &d, 0, 2499, 1000).expect("complete");
        assert_eq!(f.size(), 6000);
        assert_eq!(f.sha256(), Some(&sha256(&d)));
        assert_eq!(lock(&t).memuse(), 0, "the kept parts are freed");
        // Another key is another file.
        assert!(part(&t, b"other", &d, 0, 2999, 1000).is_none());
    }

    #[test]
    fn the_memcap_skips_parts_to_keep_aside() {
        let t = ByteRanges::shared(RangeConfig {
            memcap: 1500,
            timeout: 60,
        });
        let d = data(3000);
        assert!(part(&t, b"k", &d, 1000, 1999, 100).is_none());
        assert!(
            part(&t, b"k", &d, 2000, 2999, 100).is_none(),
            "no room: skipped"
        );
        assert_eq!(lock(&t).stats.memcap, 1);
        // The file reaches 2000 bytes and waits for the skipped part, which comes again.
        assert!(part(&t, b"k", &d, 0, 999, 100).is_none());
        let f = part(&t, b"k", &d, 2000, 2999, 100).expect("complete");
        assert_eq!(f.sha256(), Some(&sha256(&d)));
    }

    #[test]
    fn a_dropped_part_gives_the_file_back_and_containers_expire() {
        let t = ByteRanges::shared(RangeConfig {
            memcap: 0,
            timeout: 10,
        });
        let d = data(2000);
        t.lock().unwrap().tick(100);
        {
            let mut b = open(&t, b"k", b"/f", &cfg(), (0, 999, 2000)).unwrap();
            b.append(Some(&d[..10]), 10);
            let mut later = open(&t, b"k", b"/f", &cfg(), (1500, 1999, 2000)).unwrap();
            later.append(Some(&d[1500..1600]), 100);
            // Both dropped without close: their transactions went first.
        }
        assert_eq!(lock(&t).memuse(), 0);
        // The file is back in its container: a part from its start continues it.
        assert!(part(&t, b"k", &d, 10, 1999, 300).is_some());
        t.lock().unwrap().tick(105);
        assert_eq!(lock(&t).len(), 1);
        t.lock().unwrap().tick(111);
        assert!(lock(&t).is_empty(), "expired");
    }

    #[test]
    fn a_gap_in_a_part_leaves_the_file_with_gaps() {
        let t = ByteRanges::shared(RangeConfig::default());
        let d = data(2000);
        let mut b = open(&t, b"k", b"/f", &cfg(), (0, 999, 2000)).unwrap();
        b.append(Some(&d[..500]), 500);
        b.append(None, 500);
        assert!(b.close(false).is_none());
        let f = part(&t, b"k", &d, 1000, 1999, 100).expect("complete");
        assert!(f.has_gaps());
        assert_eq!(f.state(), super::super::FileState::Truncated);
        assert!(f.sha256().is_none());
    }
}
