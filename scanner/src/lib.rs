//! Meerkat's scanner: finds the capture files of a directory (or of paths and patterns),
//! knows each one by a stable identity whatever its name, reports what changed between
//! two looks, and keeps a persistent registry of what has been done with each file.
//!
//! Capture uses it for `meerkat run -r DIR` (and `--pcap-file-continuous`): every file is
//! processed exactly once, even when it is renamed, moved, rotated or copied, and a
//! restart (even after `kill -9`) resumes where the last run stopped.
//!
//! - [`glob`]: path patterns with `**`, and excludes;
//! - [`walk`]: listing the files the inputs name, with unreadable paths reported as such;
//! - [`identity`]: native (device + inode) and fingerprint (hash of a byte window)
//!   identities, the stat fields kept, the digest of processed content;
//! - [`scanner`]: matching each scan to the known identities, and the change events
//!   (created, grown, renamed/moved, truncated, deleted);
//! - [`registry`]: the persistent state (snapshot + append-only log, atomic, locked).

pub mod glob;
pub mod identity;
pub mod registry;
pub mod scanner;
pub mod walk;

pub use identity::{Fingerprint, Identity, Stat, Window, processed_digest};
pub use registry::{Entry, OutputMark, Registry, RegistryError, RollBack, RunState, RunStatus};
pub use scanner::{Change, FileId, FileInfo, ScanConfig, ScanError, ScanReport, Scanner};
pub use walk::Unreadable;
