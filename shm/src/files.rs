//! The file table of a run: which capture file a packet came from.
//!
//! A ring record carries a file index (`PacketMeta::file`, 1-based, 0 = none); the
//! names are in one small append-only file of the runtime directory (`pcap-files`, named
//! by `meerkat-runtime`), written by capture and read by the detect workers:
//!
//! ```text
//! name 1 \0 name 2 \0 ... name N \0        (the bytes of each path as the OS spells it)
//! ```
//!
//! Capture appends a file's name (one `write`) before it pushes the file's first packet,
//! so a worker that meets a new index finds the name already there. Entries are never
//! rewritten: an index keeps its name for the whole run, across capture restarts (a new
//! capture process appends after what its predecessors wrote), so a worker may keep the
//! name of the index it saw last. A capture that died in the middle of an entry leaves a
//! name without its terminator: the next one terminates it first (no packet refers to
//! it). Workers read the table forward from where they stopped, once per new file, so a
//! run over many files reads it once in all.
//!
//! Not shared memory, but a contract between capture and detect like the ring it
//! completes, so it lives beside it.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// Longest name kept (bytes): Linux's `PATH_MAX`. A longer entry reads back empty.
pub const MAX_NAME: usize = 4096;
/// Bytes read from the table at a time.
const READ_CHUNK: usize = 16 * 1024;

/// Errors of the file table.
#[derive(Debug, thiserror::Error)]
pub enum FilesError {
    #[error("file table {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("file table {0} is full (u32::MAX entries)")]
    Full(PathBuf),
}

/// Capture's end: appends names and hands out their indices.
#[derive(Debug)]
pub struct FileTable {
    path: PathBuf,
    file: File,
    /// Entries in the table (the index of the last one).
    count: u32,
}

impl FileTable {
    /// Opens (or creates) the table at `path`, after the entries already there.
    pub fn open(path: &Path) -> Result<FileTable, FilesError> {
        let io = |source| FilesError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(path)
            .map_err(io)?;
        let mut count = 0u64;
        let mut last = 0u8;
        let mut buf = vec![0u8; READ_CHUNK];
        loop {
            let n = file.read(&mut buf).map_err(io)?;
            if n == 0 {
                break;
            }
            count += buf[..n].iter().filter(|&&b| b == 0).count() as u64;
            last = buf[n - 1];
        }
        let len = file.seek(SeekFrom::End(0)).map_err(io)?;
        if len > 0 && last != 0 {
            // A name a dead capture did not finish: terminate it (nothing refers to it).
            file.write_all(&[0]).map_err(io)?;
            count += 1;
        }
        Ok(FileTable {
            path: path.to_path_buf(),
            file,
            count: u32::try_from(count).map_err(|_| FilesError::Full(path.to_path_buf()))?,
        })
    }

    /// Appends `name`; returns its index (1-based).
    pub fn add(&mut self, name: &Path) -> Result<u32, FilesError> {
        if self.count == u32::MAX {
            return Err(FilesError::Full(self.path.clone()));
        }
        let mut entry = Vec::with_capacity(name.as_os_str().len() + 1);
        // A NUL cannot be part of a path: the terminator is unambiguous.
        entry.extend_from_slice(name.as_os_str().as_bytes());
        entry.push(0);
        // One write: O_APPEND puts it after every entry already written.
        self.file
            .write_all(&entry)
            .map_err(|source| FilesError::Io {
                path: self.path.clone(),
                source,
            })?;
        self.count += 1;
        Ok(self.count)
    }
}

/// A worker's end: the name of a file index, read forward from the table.
#[derive(Debug)]
pub struct FileNames {
    path: PathBuf,
    file: Option<File>,
    /// Index of the entry that starts at `offset`.
    next_index: u32,
    offset: u64,
    /// The last name looked up: (index, name).
    current: Option<(u32, String)>,
    buf: Vec<u8>,
}

impl FileNames {
    /// A reader of the table at `path` (opened on first use: capture may not have made
    /// it yet).
    pub fn new(path: &Path) -> FileNames {
        FileNames {
            path: path.to_path_buf(),
            file: None,
            next_index: 1,
            offset: 0,
            current: None,
            buf: Vec::new(),
        }
    }

    /// The name of file `index` (1-based), lossily UTF-8; `None` for 0, an index the
    /// table does not hold (yet), or a table that cannot be read.
    pub fn name(&mut self, index: u32) -> Option<&str> {
        if index == 0 {
            return None;
        }
        if self.current.as_ref().is_none_or(|(i, _)| *i != index) {
            let name = self.find(index)?;
            self.current = Some((index, name));
        }
        self.current.as_ref().map(|(_, n)| n.as_str())
    }

    /// Reads forward to entry `index` (from the start again if it is behind).
    fn find(&mut self, index: u32) -> Option<String> {
        if index < self.next_index {
            self.next_index = 1;
            self.offset = 0;
        }
        if self.file.is_none() {
            self.file = File::open(&self.path).ok();
        }
        let file = self.file.as_mut()?;
        file.seek(SeekFrom::Start(self.offset)).ok()?;
        self.buf.resize(READ_CHUNK, 0);
        // The wanted entry's bytes (one more than a path may have: too long), and the
        // length of the entry being read.
        let mut name = Vec::new();
        let mut entry_len = 0usize;
        let keep = |name: &mut Vec<u8>, bytes: &[u8]| {
            let k = bytes.len().min((MAX_NAME + 1).saturating_sub(name.len()));
            name.extend_from_slice(&bytes[..k]);
        };
        loop {
            let n = file.read(&mut self.buf).ok()?;
            if n == 0 {
                // Not there (yet); `offset` is still at the start of a whole entry.
                return None;
            }
            let mut start = 0;
            while let Some(end) = self.buf[start..n].iter().position(|&b| b == 0) {
                let wanted = self.next_index == index;
                if wanted {
                    keep(&mut name, &self.buf[start..start + end]);
                }
                self.offset += (entry_len + end + 1) as u64;
                entry_len = 0;
                self.next_index = self.next_index.saturating_add(1);
                start += end + 1;
                if wanted {
                    if name.len() > MAX_NAME {
                        return Some(String::new());
                    }
                    return Some(String::from_utf8_lossy(&name).into_owned());
                }
            }
            // The rest of the chunk starts an entry that goes on in the next one.
            if self.next_index == index {
                keep(&mut name, &self.buf[start..n]);
            }
            entry_len += n - start;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_by_index_across_writers() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("pcap-files");
        let mut names = FileNames::new(&path);
        assert_eq!(names.name(1), None, "no table yet");
        let mut t = FileTable::open(&path).unwrap();
        assert_eq!(t.add(Path::new("/data/a.pcap")).unwrap(), 1);
        assert_eq!(t.add(Path::new("relative/b é.pcap")).unwrap(), 2);
        assert_eq!(names.name(2), Some("relative/b é.pcap"));
        assert_eq!(names.name(3), None, "not written yet");
        // A second capture process appends after the first's entries.
        drop(t);
        let mut t = FileTable::open(&path).unwrap();
        assert_eq!(t.add(Path::new("/data/c.pcap")).unwrap(), 3);
        assert_eq!(names.name(3), Some("/data/c.pcap"));
        // Backwards (a file read again) and the same again.
        assert_eq!(names.name(1), Some("/data/a.pcap"));
        assert_eq!(names.name(1), Some("/data/a.pcap"));
        assert_eq!(names.name(0), None);
    }

    #[test]
    fn a_half_written_entry_is_terminated_and_skipped() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("pcap-files");
        std::fs::write(&path, b"/a.pcap\0/half-writ").unwrap();
        let mut t = FileTable::open(&path).unwrap();
        assert_eq!(t.add(Path::new("/b.pcap")).unwrap(), 3);
        let mut names = FileNames::new(&path);
        assert_eq!(names.name(3), Some("/b.pcap"));
        assert_eq!(names.name(2), Some("/half-writ"));
    }

    #[test]
    fn long_entries_and_many_of_them() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("pcap-files");
        let mut t = FileTable::open(&path).unwrap();
        let long = "x".repeat(MAX_NAME + 10);
        let mut want = Vec::new();
        for i in 0..3000u32 {
            // Entries straddle the read chunks; one is longer than any path.
            let name = if i == 1500 {
                long.clone()
            } else {
                format!("/captures/{i:05}-{}.pcap", "y".repeat((i % 40) as usize))
            };
            assert_eq!(t.add(Path::new(&name)).unwrap(), i + 1);
            want.push(name);
        }
        let mut names = FileNames::new(&path);
        for i in [1u32, 2, 700, 1500, 1501, 1502, 2999, 3000] {
            let expect = if i == 1501 { "" } else { &want[i as usize - 1] };
            assert_eq!(names.name(i), Some(expect), "entry {i}");
        }
        assert_eq!(names.name(3001), None);
    }
}
