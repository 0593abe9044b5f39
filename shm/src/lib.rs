//! Shared-memory building blocks between Meerkat's processes.
//!
//! - [`spsc`]: the packet ring from capture to one detect worker. One producer, one
//!   consumer, in a file under a directory that both processes (or containers) can map,
//!   normally `/dev/shm/meerkat-<id>/ring-<n>`. Variable-length records aligned to 8 bytes;
//!   both sides publish their position once per batch, so there is no syscall, allocation or
//!   lock per packet. The consumer publishes its position only after it has processed a
//!   batch, so a new consumer that replaces a dead one resumes where it stopped (at worst a
//!   batch is seen twice).
//! - [`counters`]: a page of named `u64` counters that one process updates and any other
//!   process (the supervisor, the control API) reads without talking to it.
//! - [`table`]: a small hash table shared by every detect worker (state tracked by host:
//!   thresholds, xbits).
//! - [`order`]: how far capture has handed packets out and each worker has processed
//!   them, so that a worker can read what others write as of its own packet.
//! - [`expect`]: connections a control channel announced (FTP data connections),
//!   added by one worker and claimed by another.
//! - [`dataset`]: the sets of the `dataset`/`datarep` keywords, one file each, that
//!   every detect worker adds to and looks up (lock-free lookups).
//! - [`files`]: the run's table of capture files, whose index a ring record carries
//!   (an append-only file, not shared memory, read once per new file).
//! - [`state`]: the eve-writer's delivery-state page (what it has written, per producer),
//!   which outlives the writer process.
//!
//! Every `mmap` and every `unsafe` access to shared memory in Meerkat is in this crate.
//! The layouts are versioned contracts: see the constants in each module. Where the files
//! live, and the names of the counters, are `meerkat-runtime`'s.

mod futex;

pub mod counters;
pub mod dataset;
pub mod expect;
pub mod files;
pub mod order;
mod spin;
pub mod spsc;
pub mod state;
pub mod table;

pub use counters::{CounterPage, CounterReader, CounterRef};
pub use dataset::SharedSet;
pub use expect::{ExpectTable, Expected};
pub use files::{FileNames, FileTable, FilesError};
pub use order::{OrderPage, Waited};
pub use spsc::{
    Consumer, PacketMeta, Producer, Record, RingError, RingStatus, WaitOutcome, create, status,
};
pub use state::{StateError, StatePage};
pub use table::SharedTable;

use std::fs::OpenOptions;
use std::path::{Path, PathBuf};

use memmap2::{MmapMut, MmapOptions};

/// Wraps an I/O error with the path it concerns.
pub(crate) fn io_err(path: &Path) -> impl Fn(std::io::Error) -> RingError + Copy + '_ {
    move |source| RingError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A new shared file being made beside its final path (`<path>.tmp.<pid>`), zeroed and
/// mapped. Its maker writes the header, stores the magic last, then moves it into place
/// (rename to replace, hard link never to replace), so no reader maps a half-made file.
pub(crate) struct Staged {
    pub(crate) tmp: PathBuf,
    pub(crate) map: MmapMut,
}

/// Creates and maps the staging file of `len` bytes for `path`.
/// Allocates the blocks of `file`'s first `len` bytes now. A shared file is otherwise
/// sparse: on a full tmpfs (/dev/shm) the first write to one of its pages would kill
/// the writer with SIGBUS; reserved, the file is refused at once with ENOSPC.
pub(crate) fn reserve(file: &std::fs::File, len: usize) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    // SAFETY: posix_fallocate on a descriptor the caller owns; no memory is involved.
    let r = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
    match r {
        0 => Ok(()),
        // A file system that cannot reserve (none Meerkat's runtime-dir is on, as a
        // rule) keeps the sparse file.
        libc::EOPNOTSUPP | libc::EINVAL => Ok(()),
        e => Err(std::io::Error::from_raw_os_error(e)),
    }
}

pub(crate) fn stage(path: &Path, len: usize) -> Result<Staged, RingError> {
    let io = io_err(path);
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(name);
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&tmp)
        .map_err(&io)?;
    let mapped = file
        .set_len(len as u64)
        .and_then(|()| reserve(&file, len))
        .and_then(|()| {
            // SAFETY: a fresh file of `len` bytes that only this process knows about yet.
            unsafe { MmapOptions::new().len(len).map_mut(&file) }
        });
    match mapped {
        Ok(map) => Ok(Staged { tmp, map }),
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            Err(io(e))
        }
    }
}
