//! Datasets (Suricata's `dataset` and `datarep` keywords): a set of values (strings,
//! MD5/SHA-256 digests, IPv4 or IP addresses), with an optional 16-bit reputation per
//! value, shared by every detect worker. Capture spreads flows over workers, so a value
//! one worker `set`s must be seen by another worker's `isset`: each set lives in its own
//! file of the runtime directory (`dataset-<name>`), made by the first worker that loads
//! a rule naming it and mapped by the others and by the supervisor (which saves the sets
//! at shutdown and serves the `dataset-*` socket commands).
//!
//! # Layout (version 1, native byte order)
//!
//! ```text
//! 0     magic "MKDSET01", version u32, kind u32, slots u32 (a power of two),
//!       lock u32 (0 = free, else the holder's pid), used u32 (slots ever filled),
//!       live u32 (values in the set)
//! 32    arena_len u64, arena_used u64, refused u64 (values refused: set full), seed u64
//! 64    name_len u32, save_len u32, name [u8; 64], save path [u8; ..4096]
//! 4096  slot[0..slots], 64 bytes each:
//!         0  state u32 (0 empty, 1 live, 2 removed), len u32
//!         8  hash u64
//!         16 rep u32 (bit 16: the value has a reputation), pad u32
//!         24 the value's bytes when len <= 40, else its offset in the arena (u64)
//! ..    arena: the bytes of values longer than 40 (strings)
//! ```
//!
//! Open addressing with linear probing on a keyed SipHash (the key is made when the set
//! is, so that traffic cannot aim its values at one probe chain). **Lookups take no lock
//! and allocate nothing**: a slot's fields and bytes are written before its state is
//! published (release) and never change while it is live, so a reader that sees `live`
//! (acquire) reads a whole value. Adding and removing take the set's spin lock (a set's
//! first `set` of a value, not its later lookups). A removed value leaves a tombstone
//! that probing walks over; tombstones and the arena bytes of removed strings are given
//! back only by `clear`, which also means a lookup racing with a `clear` may see a value
//! being replaced (a wrong answer for that one lookup, never a fault: every read stays
//! inside the mapping).
//!
//! Limits: a set holds at most 3/4 of its slots (live values plus tombstones) and its
//! arena's bytes of long strings; past them `add` is refused and counted
//! ([`SharedSet::refused`]). The size comes from the set's memcap (for strings half
//! slots, half arena; see [`Sizing`]).

use std::collections::hash_map::RandomState;
use std::fs::OpenOptions;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use base64::Engine as _;
use memmap2::{MmapMut, MmapOptions};

use crate::{Staged, stage};

pub const MAGIC: u64 = u64::from_le_bytes(*b"MKDSET01");
pub const VERSION: u32 = 1;
const HEADER: usize = 4096;
const SLOT: usize = 64;
/// Value bytes kept in the slot itself.
const INLINE: usize = 40;
/// Longest set name (Suricata's `DATASET_NAME_MAX_LEN`).
pub const MAX_NAME: usize = 63;
/// Longest save path kept in the header.
pub const MAX_SAVE_PATH: usize = HEADER - 136;
/// Longest value accepted (a string).
pub const MAX_VALUE: usize = 65535;
const HAS_REP: u32 = 1 << 16;

const EMPTY: u32 = 0;
const LIVE: u32 = 1;
const REMOVED: u32 = 2;

/// What a set holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    String,
    Md5,
    Sha256,
    Ipv4,
    /// IPv6 and IPv4 addresses (Suricata's `ip`/`ipv6`): 16 bytes, an IPv4 address in
    /// the first 4 (the rest zero), as Suricata stores them.
    Ip,
}

impl Kind {
    /// The type as rules and config name it.
    pub fn parse(s: &str) -> Option<Kind> {
        Some(match s {
            "string" => Kind::String,
            "md5" => Kind::Md5,
            "sha256" => Kind::Sha256,
            "ipv4" => Kind::Ipv4,
            "ip" | "ipv6" => Kind::Ip,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Md5 => "md5",
            Kind::Sha256 => "sha256",
            Kind::Ipv4 => "ipv4",
            Kind::Ip => "ip",
        }
    }

    fn code(self) -> u32 {
        match self {
            Kind::String => 0,
            Kind::Md5 => 1,
            Kind::Sha256 => 2,
            Kind::Ipv4 => 3,
            Kind::Ip => 4,
        }
    }

    fn from_code(c: u32) -> Option<Kind> {
        [Kind::String, Kind::Md5, Kind::Sha256, Kind::Ipv4, Kind::Ip]
            .into_iter()
            .find(|k| k.code() == c)
    }
}

/// Problems with a set.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    #[error("dataset {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("dataset {path}: not a Meerkat dataset (bad magic, version or size)")]
    NotASet { path: PathBuf },
    #[error("dataset {name}: exists with type {found}, not {wanted}")]
    Type {
        name: String,
        found: &'static str,
        wanted: &'static str,
    },
    #[error("dataset name `{0}`: 1 to 63 characters, no spaces")]
    Name(String),
    #[error("{0}")]
    Load(String),
}

/// How big a set is: slots and arena bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Sizing {
    pub slots: usize,
    pub arena: usize,
}

impl Sizing {
    /// Fewest slots a set has.
    pub const MIN_SLOTS: usize = 16;
    /// Most slots a set has (64 M values at 3/4 load).
    pub const MAX_SLOTS: usize = 1 << 26;

    /// Half of `memcap` bytes for slots (rounded down to a power of two), half for the
    /// arena of long strings.
    pub fn from_memcap(memcap: u64) -> Sizing {
        let half = usize::try_from(memcap / 2).unwrap_or(usize::MAX);
        let want = (half / SLOT).clamp(Self::MIN_SLOTS, Self::MAX_SLOTS);
        let slots = if want.is_power_of_two() {
            want
        } else {
            want.next_power_of_two() / 2
        };
        Sizing {
            slots,
            arena: half.min(1 << 32),
        }
    }

    /// [`Sizing::from_memcap`] for a set of `kind`: only strings have values longer
    /// than a slot holds, so the other types have all of `memcap` in slots.
    pub fn for_kind(kind: Kind, memcap: u64) -> Sizing {
        if kind == Kind::String {
            Sizing::from_memcap(memcap)
        } else {
            Sizing {
                arena: 0,
                ..Sizing::from_memcap(memcap.saturating_mul(2))
            }
        }
    }

    /// Values a set of this size holds at most.
    pub fn capacity(self) -> usize {
        self.slots / 4 * 3
    }

    fn file_len(self) -> usize {
        HEADER + self.slots * SLOT + self.arena
    }
}

/// What [`SharedSet::add`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Added {
    New,
    /// The value was there already (its reputation is left as it was).
    Present,
    /// The set is full: the value was refused (and counted).
    Full,
    /// The value does not fit the set's type (a 3-byte MD5).
    Invalid,
}

/// A set, mapped.
pub struct SharedSet {
    map: MmapMut,
    slots: usize,
    arena_len: usize,
    kind: Kind,
    name: String,
    save: Option<PathBuf>,
    path: Option<PathBuf>,
}

// SAFETY: slots are written only under the set's lock and published with a release
// store of their state; readers read a slot only after an acquire load saw it live.
// Header words are atomics or immutable after creation.
unsafe impl Send for SharedSet {}
// SAFETY: as above.
unsafe impl Sync for SharedSet {}

impl std::fmt::Debug for SharedSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedSet")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("slots", &self.slots)
            .field("path", &self.path)
            .finish()
    }
}

/// What a new set is made with.
#[derive(Debug, Clone)]
pub struct Spec<'a> {
    pub name: &'a str,
    pub kind: Kind,
    pub sizing: Sizing,
    /// Where the set is written at shutdown (and by `dataset-dump`).
    pub save: Option<&'a Path>,
}

/// Checks a set name as Suricata does (no blanks, at most 63 characters).
pub fn check_name(name: &str) -> Result<(), DatasetError> {
    if name.is_empty()
        || name.len() > MAX_NAME
        || name.bytes().any(|b| b.is_ascii_whitespace() || b == 0)
    {
        return Err(DatasetError::Name(name.to_string()));
    }
    Ok(())
}

/// The file name of set `name` in the runtime directory: `dataset-<name>` when the name
/// is a safe file name, else `dataset-x<hex of the name>`.
pub fn file_name(name: &str) -> String {
    let safe = !name.starts_with('.')
        && !name.starts_with('x')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.');
    if safe {
        format!("dataset-{name}")
    } else {
        let hex: String = name.bytes().map(|b| format!("{b:02x}")).collect();
        format!("dataset-x{hex}")
    }
}

fn header_u32(map: &[u8], off: usize) -> u32 {
    u32::from_ne_bytes([map[off], map[off + 1], map[off + 2], map[off + 3]])
}

fn header_u64(map: &[u8], off: usize) -> u64 {
    let mut b = [0u8; 8];
    b.copy_from_slice(&map[off..off + 8]);
    u64::from_ne_bytes(b)
}

/// Writes a new set's header (everything but the magic) into `map`.
fn write_header(map: &mut [u8], spec: &Spec<'_>) -> Result<(), DatasetError> {
    check_name(spec.name)?;
    let save = spec
        .save
        .map(|p| p.as_os_str().as_encoded_bytes())
        .unwrap_or(&[]);
    if save.len() > MAX_SAVE_PATH {
        return Err(DatasetError::Load(format!(
            "dataset {}: save path longer than {MAX_SAVE_PATH} bytes",
            spec.name
        )));
    }
    let seed = RandomState::new().hash_one(std::process::id());
    map[8..12].copy_from_slice(&VERSION.to_ne_bytes());
    map[12..16].copy_from_slice(&spec.kind.code().to_ne_bytes());
    map[16..20].copy_from_slice(&(spec.sizing.slots as u32).to_ne_bytes());
    map[32..40].copy_from_slice(&(spec.sizing.arena as u64).to_ne_bytes());
    map[56..64].copy_from_slice(&seed.to_ne_bytes());
    map[64..68].copy_from_slice(&(spec.name.len() as u32).to_ne_bytes());
    map[68..72].copy_from_slice(&(save.len() as u32).to_ne_bytes());
    map[72..72 + spec.name.len()].copy_from_slice(spec.name.as_bytes());
    map[136..136 + save.len()].copy_from_slice(save);
    Ok(())
}

fn magic(map: &MmapMut) -> &AtomicU64 {
    // SAFETY: offset 0 of a page-aligned mapping is 8-aligned and within it.
    unsafe { &*(map.as_ptr() as *const AtomicU64) }
}

impl SharedSet {
    /// A set private to this process (no runtime directory: `rules check`, tests, a
    /// worker alone), made with `init` run on it.
    pub fn private(
        spec: &Spec<'_>,
        init: impl FnOnce(&SharedSet) -> Result<(), DatasetError>,
    ) -> Result<SharedSet, DatasetError> {
        let len = spec.sizing.file_len();
        let io = |source| DatasetError::Io {
            path: PathBuf::from(spec.name),
            source,
        };
        let mut map = MmapOptions::new().len(len).map_anon().map_err(io)?;
        write_header(&mut map, spec)?;
        magic(&map).store(MAGIC, Ordering::Release);
        let set = SharedSet::from_map(map, None)?;
        init(&set)?;
        Ok(set)
    }

    /// Maps set `spec.name` at `path`; when there is none yet, makes it, runs `init` on
    /// it (loading its file) and only then puts it in place, so that no other process
    /// maps a set half loaded. Returns the set and whether this call made it.
    pub fn open_or_create(
        path: &Path,
        spec: &Spec<'_>,
        init: impl FnOnce(&SharedSet) -> Result<(), DatasetError>,
    ) -> Result<(SharedSet, bool), DatasetError> {
        if !path.exists() {
            let Staged { tmp, mut map } =
                stage(path, spec.sizing.file_len()).map_err(|e| DatasetError::Io {
                    path: path.to_path_buf(),
                    source: std::io::Error::other(e.to_string()),
                })?;
            let made = write_header(&mut map, spec).and_then(|()| {
                magic(&map).store(MAGIC, Ordering::Release);
                let set = SharedSet::from_map(map, Some(path.to_path_buf()))?;
                init(&set)?;
                Ok(set)
            });
            let set = match made {
                Ok(set) => set,
                Err(e) => {
                    let _ = std::fs::remove_file(&tmp);
                    return Err(e);
                }
            };
            let linked = std::fs::hard_link(&tmp, path);
            let _ = std::fs::remove_file(&tmp);
            match linked {
                Ok(()) => return Ok((set, true)),
                // Another process made it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(source) => {
                    return Err(DatasetError::Io {
                        path: path.to_path_buf(),
                        source,
                    });
                }
            }
        }
        let set = SharedSet::open(path)?;
        if set.kind != spec.kind {
            return Err(DatasetError::Type {
                name: spec.name.to_string(),
                found: set.kind.name(),
                wanted: spec.kind.name(),
            });
        }
        Ok((set, false))
    }

    /// Maps the existing set at `path`.
    pub fn open(path: &Path) -> Result<SharedSet, DatasetError> {
        let io = |source| DatasetError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(io)?;
        let len = file.metadata().map_err(io)?.len() as usize;
        if len < HEADER + Sizing::MIN_SLOTS * SLOT {
            return Err(DatasetError::NotASet {
                path: path.to_path_buf(),
            });
        }
        // SAFETY: mapping a set other processes share; slots are read and written by the
        // protocol in the module's documentation, header words atomically or once made.
        let map = unsafe { MmapOptions::new().len(len).map_mut(&file) }.map_err(io)?;
        SharedSet::from_map(map, Some(path.to_path_buf()))
    }

    fn from_map(map: MmapMut, path: Option<PathBuf>) -> Result<SharedSet, DatasetError> {
        let bad = || DatasetError::NotASet {
            path: path.clone().unwrap_or_default(),
        };
        if magic(&map).load(Ordering::Acquire) != MAGIC || header_u32(&map, 8) != VERSION {
            return Err(bad());
        }
        let kind = Kind::from_code(header_u32(&map, 12)).ok_or_else(bad)?;
        let slots = header_u32(&map, 16) as usize;
        let arena_len = usize::try_from(header_u64(&map, 32)).map_err(|_| bad())?;
        let name_len = header_u32(&map, 64) as usize;
        let save_len = header_u32(&map, 68) as usize;
        if !slots.is_power_of_two()
            || slots < Sizing::MIN_SLOTS
            || HEADER + slots * SLOT + arena_len > map.len()
            || name_len > MAX_NAME + 1
            || save_len > MAX_SAVE_PATH
        {
            return Err(bad());
        }
        let name = String::from_utf8_lossy(&map[72..72 + name_len]).into_owned();
        let save = (save_len > 0).then(|| {
            use std::os::unix::ffi::OsStrExt;
            PathBuf::from(std::ffi::OsStr::from_bytes(&map[136..136 + save_len]))
        });
        Ok(SharedSet {
            map,
            slots,
            arena_len,
            kind,
            name,
            save,
            path,
        })
    }

    pub fn kind(&self) -> Kind {
        self.kind
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the set is saved at shutdown, if anywhere.
    pub fn save_path(&self) -> Option<&Path> {
        self.save.as_deref()
    }

    /// Values the set holds at most.
    pub fn capacity(&self) -> usize {
        self.slots / 4 * 3
    }

    fn word32(&self, off: usize) -> &AtomicU32 {
        // SAFETY: `off` is one of the header's 4-aligned u32 words (20, 24, 28).
        unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU32) }
    }

    fn word64(&self, off: usize) -> &AtomicU64 {
        // SAFETY: `off` is one of the header's 8-aligned u64 words (40, 48).
        unsafe { &*(self.map.as_ptr().add(off) as *const AtomicU64) }
    }

    /// Values in the set.
    pub fn len(&self) -> usize {
        self.word32(28).load(Ordering::Acquire) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Values refused because the set was full, since it was made.
    pub fn refused(&self) -> u64 {
        self.word64(48).load(Ordering::Relaxed)
    }

    fn seed(&self) -> u64 {
        header_u64(&self.map, 56)
    }

    fn hash(&self, key: &[u8]) -> u64 {
        let mut h = std::hash::DefaultHasher::new();
        h.write_u64(self.seed());
        h.write(key);
        h.finish()
    }

    fn slot_ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: i & (slots - 1) < slots, and the slots lie within the mapping (checked
        // when it was mapped).
        unsafe { (self.map.as_ptr() as *mut u8).add(HEADER + (i & (self.slots - 1)) * SLOT) }
    }

    fn state(&self, i: usize) -> &AtomicU32 {
        // SAFETY: a slot's first word, 4-aligned (slots are 64-aligned).
        unsafe { &*(self.slot_ptr(i) as *const AtomicU32) }
    }

    /// The value bytes of live slot `i` (read after its state was seen live).
    fn slot_bytes(&self, i: usize, len: usize) -> &[u8] {
        let p = self.slot_ptr(i);
        if len <= INLINE {
            // SAFETY: `len` bytes at offset 24 of a 64-byte slot.
            return unsafe { std::slice::from_raw_parts(p.add(24), len) };
        }
        // SAFETY: the offset word of a slot, 8-aligned.
        let off = unsafe { (p.add(24) as *const u64).read() } as usize;
        let arena = HEADER + self.slots * SLOT;
        if off.checked_add(len).is_none_or(|end| end > self.arena_len) {
            return &[];
        }
        &self.map[arena + off..arena + off + len]
    }

    /// (hash, len, rep) of slot `i`.
    fn slot_meta(&self, i: usize) -> (u64, usize, u32) {
        let p = self.slot_ptr(i);
        // SAFETY: fields within the slot, aligned for their types.
        unsafe {
            (
                (p.add(8) as *const u64).read(),
                (p.add(4) as *const u32).read() as usize,
                (p.add(16) as *const u32).read(),
            )
        }
    }

    /// The value as the set stores it: `None` when it does not fit the type. An IPv4
    /// address in an `ip` set is padded to 16 bytes.
    fn normalize<'k>(&self, data: &'k [u8], buf: &'k mut [u8; 16]) -> Option<&'k [u8]> {
        match (self.kind, data.len()) {
            (Kind::String, 1..=MAX_VALUE)
            | (Kind::Md5, 16)
            | (Kind::Sha256, 32)
            | (Kind::Ipv4, 4)
            | (Kind::Ip, 16) => Some(data),
            (Kind::Ip, 4) => {
                buf[..4].copy_from_slice(data);
                Some(&buf[..])
            }
            _ => None,
        }
    }

    /// Finds `key` (normalised): its slot.
    fn find(&self, key: &[u8], h: u64) -> Option<usize> {
        let mut i = h as usize;
        for _ in 0..self.slots {
            match self.state(i).load(Ordering::Acquire) {
                EMPTY => return None,
                LIVE => {
                    let (sh, len, _) = self.slot_meta(i);
                    if sh == h && len == key.len() && self.slot_bytes(i, len) == key {
                        return Some(i & (self.slots - 1));
                    }
                }
                _ => {}
            }
            i = i.wrapping_add(1);
        }
        None
    }

    /// Whether `data` is in the set. No lock, no allocation.
    pub fn contains(&self, data: &[u8]) -> bool {
        self.lookup(data).is_some()
    }

    /// `Some(reputation)` when `data` is in the set (the reputation is `None` for a
    /// value added without one). No lock, no allocation.
    pub fn lookup(&self, data: &[u8]) -> Option<Option<u16>> {
        if self.is_empty() {
            return None;
        }
        let mut buf = [0u8; 16];
        let key = self.normalize(data, &mut buf)?;
        let i = self.find(key, self.hash(key))?;
        let (_, _, rep) = self.slot_meta(i);
        Some((rep & HAS_REP != 0).then_some(rep as u16))
    }

    fn acquire(&self) {
        crate::spin::acquire(self.word32(20));
    }

    fn release(&self) {
        crate::spin::release(self.word32(20));
    }

    /// Adds `data` (with reputation `rep`). A value already there is left as it is.
    pub fn add(&self, data: &[u8], rep: Option<u16>) -> Added {
        let mut buf = [0u8; 16];
        let Some(key) = self.normalize(data, &mut buf) else {
            return Added::Invalid;
        };
        let h = self.hash(key);
        if self.find(key, h).is_some() {
            return Added::Present;
        }
        self.acquire();
        let r = self.add_locked(key, h, rep);
        self.release();
        r
    }

    fn add_locked(&self, key: &[u8], h: u64, rep: Option<u16>) -> Added {
        let mut i = h as usize;
        let mut free = None;
        for _ in 0..self.slots {
            match self.state(i).load(Ordering::Acquire) {
                EMPTY => {
                    free = Some(i & (self.slots - 1));
                    break;
                }
                LIVE => {
                    let (sh, len, _) = self.slot_meta(i);
                    if sh == h && len == key.len() && self.slot_bytes(i, len) == key {
                        return Added::Present;
                    }
                }
                _ => {}
            }
            i = i.wrapping_add(1);
        }
        let used = self.word32(24);
        let Some(i) = free.filter(|_| (used.load(Ordering::Relaxed) as usize) < self.capacity())
        else {
            self.word64(48).fetch_add(1, Ordering::Relaxed);
            return Added::Full;
        };
        let p = self.slot_ptr(i);
        let rep = rep.map_or(0, |r| HAS_REP | u32::from(r));
        if key.len() > INLINE {
            let arena_used = self.word64(40);
            let off = arena_used.load(Ordering::Relaxed) as usize;
            if off + key.len() > self.arena_len {
                self.word64(48).fetch_add(1, Ordering::Relaxed);
                return Added::Full;
            }
            let at = HEADER + self.slots * SLOT + off;
            // SAFETY: under the lock; `at..at + len` is within the arena (checked above),
            // and no live slot points into the unused part of the arena.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    key.as_ptr(),
                    (self.map.as_ptr() as *mut u8).add(at),
                    key.len(),
                );
                (p.add(24) as *mut u64).write(off as u64);
            }
            arena_used.store((off + key.len()) as u64, Ordering::Relaxed);
        } else {
            // SAFETY: under the lock; at most 40 bytes at offset 24 of the 64-byte slot.
            unsafe { std::ptr::copy_nonoverlapping(key.as_ptr(), p.add(24), key.len()) };
        }
        // SAFETY: under the lock; the slot's fields, aligned, within it. The slot is
        // empty, so no reader reads these fields until the state is published below.
        unsafe {
            (p.add(4) as *mut u32).write(key.len() as u32);
            (p.add(8) as *mut u64).write(h);
            (p.add(16) as *mut u32).write(rep);
        }
        self.state(i).store(LIVE, Ordering::Release);
        used.fetch_add(1, Ordering::Relaxed);
        self.word32(28).fetch_add(1, Ordering::Release);
        Added::New
    }

    /// Removes `data`: whether it was there.
    pub fn remove(&self, data: &[u8]) -> bool {
        let mut buf = [0u8; 16];
        let Some(key) = self.normalize(data, &mut buf) else {
            return false;
        };
        let h = self.hash(key);
        if self.find(key, h).is_none() {
            return false;
        }
        self.acquire();
        let found = self.find(key, h);
        if let Some(i) = found {
            self.state(i).store(REMOVED, Ordering::Release);
            self.word32(28).fetch_sub(1, Ordering::Release);
        }
        self.release();
        found.is_some()
    }

    /// Empties the set (tombstones and arena included).
    pub fn clear(&self) {
        self.acquire();
        for i in 0..self.slots {
            self.state(i).store(EMPTY, Ordering::Release);
        }
        self.word32(24).store(0, Ordering::Relaxed);
        self.word32(28).store(0, Ordering::Release);
        self.word64(40).store(0, Ordering::Relaxed);
        self.release();
    }

    /// Calls `f` with each value (normalised) and its reputation, in slot order.
    pub fn for_each(&self, mut f: impl FnMut(&[u8], Option<u16>)) {
        for i in 0..self.slots {
            if self.state(i).load(Ordering::Acquire) == LIVE {
                let (_, len, rep) = self.slot_meta(i);
                f(
                    self.slot_bytes(i, len),
                    (rep & HAS_REP != 0).then_some(rep as u16),
                );
            }
        }
    }

    /// Loads a dataset file (see [`parse_line`]) into the set. Lines that do not parse
    /// are an error naming the file and line; values the full set refuses are counted.
    pub fn load_file(&self, file: &Path) -> Result<usize, DatasetError> {
        let text = std::fs::read(file).map_err(|source| DatasetError::Io {
            path: file.to_path_buf(),
            source,
        })?;
        let mut with_rep = None;
        let mut added = 0;
        for (n, line) in text.split(|&b| b == b'\n').enumerate() {
            let line = String::from_utf8_lossy(line);
            let at = |reason: String| {
                DatasetError::Load(format!(
                    "dataset {}: {}:{}: {reason}",
                    self.name,
                    file.display(),
                    n + 1
                ))
            };
            let Some((value, rep)) = parse_line(self.kind, &line).map_err(at)? else {
                continue;
            };
            if *with_rep.get_or_insert(rep.is_some()) != rep.is_some() {
                return Err(at(
                    "cannot mix dataset and datarep values (with and without `,<rep>`)".into(),
                ));
            }
            if self.add(&value, rep) == Added::New {
                added += 1;
            }
        }
        Ok(added)
    }

    /// Writes the set to `file` as Suricata does (one value a line; see [`render`]),
    /// through a temporary file renamed into place.
    pub fn save_to(&self, file: &Path) -> std::io::Result<usize> {
        let mut out = Vec::new();
        let mut n = 0;
        self.for_each(|v, _| {
            out.extend_from_slice(render(self.kind, v).as_bytes());
            out.push(b'\n');
            n += 1;
        });
        let mut tmp = file.as_os_str().to_owned();
        tmp.push(".tmp");
        let tmp = PathBuf::from(tmp);
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(&out)?;
        f.sync_all()?;
        std::fs::rename(&tmp, file)?;
        Ok(n)
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str, want: usize) -> Option<Vec<u8>> {
    if s.len() != want * 2 || !s.is_ascii() {
        return None;
    }
    (0..want)
        .map(|i| u8::from_str_radix(&s[i * 2..i * 2 + 2], 16).ok())
        .collect()
}

/// A value as Suricata writes it in a dataset file and takes it over its socket:
/// strings base64-encoded, digests in lowercase hex, addresses as text (an IPv4 address
/// of an `ip` set as IPv4).
pub fn render(kind: Kind, value: &[u8]) -> String {
    match kind {
        Kind::String => base64::engine::general_purpose::STANDARD.encode(value),
        Kind::Md5 | Kind::Sha256 => hex(value),
        Kind::Ipv4 => match <[u8; 4]>::try_from(value) {
            Ok(a) => Ipv4Addr::from(a).to_string(),
            Err(_) => hex(value),
        },
        Kind::Ip => match <[u8; 16]>::try_from(value) {
            Ok(a) if a[4..].iter().all(|&b| b == 0) => {
                Ipv4Addr::new(a[0], a[1], a[2], a[3]).to_string()
            }
            Ok(a) => Ipv6Addr::from(a).to_string(),
            Err(_) => hex(value),
        },
    }
}

/// A value in its text form ([`render`]'s) as the set stores it.
pub fn parse_value(kind: Kind, s: &str) -> Result<Vec<u8>, String> {
    let s = s.trim();
    match kind {
        Kind::String => base64::engine::general_purpose::STANDARD
            .decode(s)
            .ok()
            .filter(|v| !v.is_empty() && v.len() <= MAX_VALUE)
            .ok_or_else(|| format!("`{s}` is not base64 of 1 to {MAX_VALUE} bytes")),
        Kind::Md5 => unhex(s, 16).ok_or_else(|| format!("`{s}` is not an MD5 in hex")),
        Kind::Sha256 => unhex(s, 32).ok_or_else(|| format!("`{s}` is not a SHA-256 in hex")),
        Kind::Ipv4 => s
            .parse::<Ipv4Addr>()
            .map(|a| a.octets().to_vec())
            .map_err(|_| format!("`{s}` is not an IPv4 address")),
        Kind::Ip => match s.parse::<IpAddr>() {
            Ok(IpAddr::V4(a)) => {
                let mut k = vec![0u8; 16];
                k[..4].copy_from_slice(&a.octets());
                Ok(k)
            }
            Ok(IpAddr::V6(a)) => Ok(match a.to_ipv4_mapped() {
                // An IPv4-mapped address is stored as the IPv4 address, as Suricata does.
                Some(v4) if a.segments()[..5] == [0; 5] => {
                    let mut k = vec![0u8; 16];
                    k[..4].copy_from_slice(&v4.octets());
                    k
                }
                _ => a.octets().to_vec(),
            }),
            Err(_) => Err(format!("`{s}` is not an IP address")),
        },
    }
}

/// A value of a dataset file, as stored, and its reputation if the line gives one.
pub type Line = (Vec<u8>, Option<u16>);

/// One line of a dataset file: `value` or `value,reputation` (a reputation is a 16-bit
/// number). `Ok(None)` for a line Suricata skips: empty, or with more than two fields.
pub fn parse_line(kind: Kind, line: &str) -> Result<Option<Line>, String> {
    let line = line.trim_end_matches('\r');
    if line.trim().is_empty() {
        return Ok(None);
    }
    let fields: Vec<&str> = line.split(',').collect();
    let (value, rep) = match fields[..] {
        [v] => (v, None),
        [v, r] => {
            let r = r
                .trim()
                .parse::<u16>()
                .map_err(|_| format!("invalid datarep value `{}` (0 to 65535)", r.trim()))?;
            (v, Some(r))
        }
        _ => return Ok(None),
    };
    Ok(Some((parse_value(kind, value)?, rep)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(kind: Kind, memcap: u64) -> Spec<'static> {
        Spec {
            name: "t",
            kind,
            sizing: Sizing::from_memcap(memcap),
            save: None,
        }
    }

    #[test]
    fn a_value_set_in_one_mapping_is_seen_in_another() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(file_name("dns-seen"));
        let sp = Spec {
            name: "dns-seen",
            kind: Kind::String,
            sizing: Sizing::from_memcap(1 << 20),
            save: Some(Path::new("/tmp/x.lst")),
        };
        let (a, made) = SharedSet::open_or_create(&path, &sp, |_| Ok(())).unwrap();
        assert!(made);
        let (b, made) = SharedSet::open_or_create(&path, &sp, |_| panic!("loaded twice")).unwrap();
        assert!(!made);
        assert_eq!(b.save_path(), Some(Path::new("/tmp/x.lst")));
        assert_eq!(a.add(b"example.com", None), Added::New);
        assert_eq!(a.add(b"example.com", None), Added::Present);
        let long = vec![b'a'; 300];
        assert_eq!(b.add(&long, Some(7)), Added::New);
        assert!(b.contains(b"example.com"));
        assert_eq!(a.lookup(&long), Some(Some(7)));
        assert!(!a.contains(b"example.org"));
        assert!(!a.contains(b""));
        assert!(b.remove(b"example.com"));
        assert!(!b.remove(b"example.com"));
        assert!(!a.contains(b"example.com"));
        assert_eq!(a.len(), 1);
        // The same name with another type is refused.
        let other = Spec {
            kind: Kind::Md5,
            ..sp.clone()
        };
        assert!(matches!(
            SharedSet::open_or_create(&path, &other, |_| Ok(())),
            Err(DatasetError::Type { .. })
        ));
        a.clear();
        assert!(b.is_empty() && !b.contains(&long));
        assert_eq!(b.add(b"example.com", None), Added::New);
    }

    #[test]
    fn a_full_set_refuses_and_counts() {
        let s = SharedSet::private(&spec(Kind::Ipv4, 0), |_| Ok(())).unwrap();
        let cap = s.capacity();
        assert_eq!(cap, 12);
        for i in 0..cap as u8 {
            assert_eq!(s.add(&[10, 0, 0, i], None), Added::New);
        }
        assert_eq!(s.add(&[10, 0, 1, 0], None), Added::Full);
        assert_eq!(s.add(&[10, 0, 1, 1], None), Added::Full);
        assert_eq!(s.refused(), 2);
        for i in 0..cap as u8 {
            assert!(s.contains(&[10, 0, 0, i]));
        }
        assert!(!s.contains(&[10, 0, 1, 0]));
        assert_eq!(s.add(&[1, 2, 3], None), Added::Invalid);
    }

    #[test]
    fn the_arena_of_long_strings_is_bounded() {
        // 4 KiB memcap: 32 slots, 2 KiB of arena.
        let s = SharedSet::private(&spec(Kind::String, 4096), |_| Ok(())).unwrap();
        let big = vec![b'x'; 1500];
        assert_eq!(s.add(&big, None), Added::New);
        let mut other = big.clone();
        other[0] = b'y';
        assert_eq!(s.add(&other, None), Added::Full);
        assert_eq!(s.refused(), 1);
        assert!(s.contains(&big));
    }

    #[test]
    fn file_formats_are_suricatas() {
        // Strings are base64 ("example.com"), digests hex, addresses text; an IPv4
        // address in an `ip` set is stored in the first four bytes.
        assert_eq!(render(Kind::String, b"example.com"), "ZXhhbXBsZS5jb20=");
        assert_eq!(
            parse_line(Kind::String, "ZXhhbXBsZS5jb20=").unwrap(),
            Some((b"example.com".to_vec(), None))
        );
        assert_eq!(
            parse_line(Kind::String, "ZXhhbXBsZS5jb20=,200").unwrap(),
            Some((b"example.com".to_vec(), Some(200)))
        );
        let md5 = "d41d8cd98f00b204e9800998ecf8427e";
        let raw = parse_value(Kind::Md5, md5).unwrap();
        assert_eq!(raw.len(), 16);
        assert_eq!(render(Kind::Md5, &raw), md5);
        assert!(parse_value(Kind::Md5, "d41d").is_err());
        assert!(parse_value(Kind::Sha256, md5).is_err());
        let ip = parse_value(Kind::Ip, "192.168.1.1").unwrap();
        assert_eq!(ip, [192, 168, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(parse_value(Kind::Ip, "::ffff:192.168.1.1").unwrap(), ip);
        assert_eq!(render(Kind::Ip, &ip), "192.168.1.1");
        let v6 = parse_value(Kind::Ip, "2001:db8::1").unwrap();
        assert_eq!(render(Kind::Ip, &v6), "2001:db8::1");
        assert_eq!(render(Kind::Ipv4, &[10, 1, 2, 3]), "10.1.2.3");
        assert!(parse_line(Kind::String, "!!notbase64").is_err());
        assert!(parse_line(Kind::String, "YQ==,x").is_err());
        assert!(parse_line(Kind::String, "YQ==,70000").is_err());
        assert_eq!(parse_line(Kind::String, "").unwrap(), None);
        assert_eq!(parse_line(Kind::String, "YQ==,1,2").unwrap(), None);
    }

    #[test]
    fn load_and_save_round_trip_and_bad_lines_name_file_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("in.lst");
        std::fs::write(&file, "ZXhhbXBsZS5jb20=\nYQ==\n\nZXhhbXBsZS5jb20=\n").unwrap();
        let s = SharedSet::private(&spec(Kind::String, 1 << 16), |s| {
            s.load_file(&file).map(|_| ())
        })
        .unwrap();
        assert_eq!(s.len(), 2);
        assert!(s.contains(b"a") && s.contains(b"example.com"));
        let out = dir.path().join("out.lst");
        assert_eq!(s.save_to(&out).unwrap(), 2);
        let mut lines: Vec<String> = std::fs::read_to_string(&out)
            .unwrap()
            .lines()
            .map(String::from)
            .collect();
        lines.sort();
        assert_eq!(lines, ["YQ==", "ZXhhbXBsZS5jb20="]);

        std::fs::write(&file, "YQ==\nnot base64!\n").unwrap();
        let e = SharedSet::private(&spec(Kind::String, 1 << 16), |s| {
            s.load_file(&file).map(|_| ())
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("in.lst:2:"), "{e}");
        std::fs::write(&file, "YQ==\nYg==,3\n").unwrap();
        let e = SharedSet::private(&spec(Kind::String, 1 << 16), |s| {
            s.load_file(&file).map(|_| ())
        })
        .unwrap_err()
        .to_string();
        assert!(e.contains("in.lst:2:") && e.contains("mix"), "{e}");
    }

    #[test]
    fn names_and_file_names() {
        assert!(check_name("dns-seen").is_ok());
        assert!(check_name("a b").is_err());
        assert!(check_name(&"a".repeat(64)).is_err());
        assert_eq!(file_name("dns-seen"), "dataset-dns-seen");
        assert_eq!(file_name("../x"), "dataset-x2e2e2f78");
        assert_ne!(file_name("x41"), file_name("A"));
    }
}
