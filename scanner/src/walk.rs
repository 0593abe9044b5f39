//! Discovery: which regular files the configured inputs name right now.
//!
//! An input is a file (taken as it is, excludes do not apply to a file named
//! explicitly), a directory (its files; its subdirectories too when `recursive`), or a
//! pattern (see [`crate::glob`]; `**` gives recursion). Excluded names are neither listed
//! nor descended into. Symbolic links to files are followed; links to directories are
//! not descended (they could loop).
//!
//! A file's `stat` is taken only when the caller wants it (see [`Walker::walk`]); the
//! directory entry's inode number comes free with the listing. A caller that will open
//! the other files (to read their fingerprint windows) gets each of them as soon as it is
//! listed, with its directory open (so that each open looks up one path component), and
//! reads them while the walk goes on.
//!
//! Every failure other than "not found" is reported as [`Unreadable`], with whether it
//! hides a whole subtree (a directory that cannot be listed): the scanner must not take
//! the files it cannot see for deleted ones.

use std::fs::{self, DirEntry};
use std::io;
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::glob::{Excludes, Glob};
use crate::identity::{Fingerprint, ReadJob, Stat};

/// A regular file found by a walk.
#[derive(Debug)]
pub struct Found {
    /// Empty while a file handed to the caller's sink (see [`Walker::walk`]) is lent to
    /// it.
    pub path: PathBuf,
    /// (device of the directory, inode number from the directory entry): what the file
    /// is before any `stat`.
    pub hint: (u64, u64),
    /// Its stat, when the caller asked for one (see [`Walker::walk`]).
    pub stat: Option<Stat>,
    /// Filled in by the caller that opens the file and reads its window (with the open
    /// file's stat).
    pub window: Option<io::Result<(Stat, Fingerprint)>>,
}

/// A path the walk could not look at (EACCES, EMFILE, EIO, ...).
#[derive(Debug)]
pub struct Unreadable {
    pub path: PathBuf,
    pub error: io::Error,
    /// The path is a directory that could not be listed: nothing below it was seen.
    pub subtree: bool,
}

impl Unreadable {
    /// Whether this failure hides `path`.
    pub fn hides(&self, path: &Path) -> bool {
        if self.subtree {
            path.starts_with(&self.path)
        } else {
            path == self.path
        }
    }
}

/// Inputs, excludes and recursion.
#[derive(Debug, Clone)]
pub struct Walker {
    inputs: Vec<Glob>,
    excludes: Excludes,
    recursive: bool,
}

/// What one walk saw.
#[derive(Debug, Default)]
pub struct Walk {
    pub found: Vec<Found>,
    pub unreadable: Vec<Unreadable>,
}

impl Walk {
    /// Lists each path once (overlapping inputs name some files twice).
    pub fn dedup(&mut self) {
        self.found.sort_by(|a, b| a.path.cmp(&b.path));
        self.found.dedup_by(|a, b| a.path == b.path);
    }
}

impl Walker {
    pub fn new(inputs: Vec<Glob>, excludes: Excludes, recursive: bool) -> Walker {
        Walker {
            inputs,
            excludes,
            recursive,
        }
    }

    /// The number of inputs.
    pub fn inputs(&self) -> usize {
        self.inputs.len()
    }

    /// Lists every file the inputs name.
    ///
    /// `want_stat(hint)` says, from a file's directory entry (see [`Found::hint`]),
    /// whether to `stat` it; a caller that will open a file anyway (to read its
    /// fingerprint) stats the open file instead, which saves a system call and describes
    /// exactly the bytes it reads.
    ///
    /// Without `sink`, each path appears once. With `sink`, each file that is not to be
    /// stat'ed is handed to it as soon as it is listed, with its directory open (to open
    /// the file relative to it) and its path lent (its [`Found::path`] is empty): the
    /// caller puts the paths back, then calls [`Walk::dedup`].
    pub fn walk(
        &self,
        want_stat: &dyn Fn((u64, u64)) -> bool,
        sink: Option<&mut dyn FnMut(ReadJob)>,
    ) -> Walk {
        let mut w = Walk::default();
        let mut ctx = Ctx {
            pattern: None,
            want_stat,
            sink,
        };
        for input in &self.inputs {
            let path = input.base();
            match fs::metadata(path) {
                Ok(m) if m.is_dir() => {
                    ctx.pattern = (!input.is_literal()).then_some(input);
                    self.list(path, m.dev(), &mut PathBuf::new(), &mut ctx, &mut w);
                }
                Ok(m) if m.is_file() && input.is_literal() => {
                    let stat = Stat::from_metadata(&m);
                    w.found.push(Found {
                        path: path.to_path_buf(),
                        hint: stat.inode(),
                        stat: Some(stat),
                        window: None,
                    })
                }
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(error) => unreadable(&mut w, path.to_path_buf(), error, true),
            }
        }
        if self.inputs.len() > 1 && ctx.sink.is_none() {
            w.dedup();
        }
        w
    }

    /// Lists directory `dir` (`rel` below the input's base). With a pattern, only the
    /// files it matches and the directories it may match inside; without, every file,
    /// and subdirectories when recursive.
    fn list(&self, dir: &Path, dev: u64, rel: &mut PathBuf, ctx: &mut Ctx<'_, '_>, w: &mut Walk) {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(error) => return unreadable(w, dir.to_path_buf(), error, true),
        };
        // Opened on the first file handed to the sink, for relative opens (`None` inside
        // when it cannot be: the file is opened by its path).
        let mut dir_file: Option<Option<Arc<fs::File>>> = None;
        for entry in rd {
            let entry = match entry {
                Ok(e) => e,
                Err(error) => {
                    // The listing broke off: what was not listed was not seen.
                    return unreadable(w, dir.to_path_buf(), error, true);
                }
            };
            self.entry(&entry, dir, &mut dir_file, dev, rel, ctx, w);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn entry(
        &self,
        entry: &DirEntry,
        dir: &Path,
        dir_file: &mut Option<Option<Arc<fs::File>>>,
        dev: u64,
        rel: &mut PathBuf,
        ctx: &mut Ctx<'_, '_>,
        w: &mut Walk,
    ) {
        let pattern = ctx.pattern;
        let name = entry.file_name();
        let path = entry.path();
        if self.excludes.excludes(&path, &name) {
            return;
        }
        let ft = match entry.file_type() {
            Ok(ft) => ft,
            Err(e) => return unreadable(w, path, e, false),
        };
        rel.push(&name);
        if ft.is_dir() {
            let descend = match pattern {
                Some(g) => g.may_match_inside(rel),
                None => self.recursive,
            };
            if descend {
                // A subdirectory may be another filesystem (a mount point).
                match entry.metadata() {
                    Ok(m) => self.list(&path, m.dev(), rel, ctx, w),
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => unreadable(w, path, e, true),
                }
            }
        } else if (ft.is_file() || ft.is_symlink())
            && pattern.is_none_or(|g| g.matches_relative(rel))
        {
            let hint = (dev, entry.ino());
            if ft.is_file() && !(ctx.want_stat)(hint) {
                let index = w.found.len();
                let path = match ctx.sink.as_deref_mut() {
                    Some(sink) => {
                        let dir = dir_file
                            // A read-only handle on the directory, for openat.
                            .get_or_insert_with(|| fs::File::open(dir).ok().map(Arc::new))
                            .clone();
                        sink(ReadJob { index, dir, path });
                        PathBuf::new()
                    }
                    None => path,
                };
                w.found.push(Found {
                    path,
                    hint,
                    stat: None,
                    window: None,
                });
            } else {
                // A link is followed to its target; a plain file is stat'ed relative to the
                // open directory (no path walk).
                let meta = if ft.is_symlink() {
                    fs::metadata(&path)
                } else {
                    entry.metadata()
                };
                match meta {
                    Ok(m) if m.is_file() => {
                        let stat = Stat::from_metadata(&m);
                        w.found.push(Found {
                            path,
                            hint: stat.inode(),
                            stat: Some(stat),
                            window: None,
                        })
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => unreadable(w, path, e, false),
                }
            }
        }
        rel.pop();
    }
}

/// What one walk carries down the directories.
struct Ctx<'a, 's> {
    pattern: Option<&'a Glob>,
    want_stat: &'a dyn Fn((u64, u64)) -> bool,
    sink: Option<&'s mut dyn FnMut(ReadJob)>,
}

fn unreadable(w: &mut Walk, path: PathBuf, error: io::Error, subtree: bool) {
    w.unreadable.push(Unreadable {
        path,
        error,
        subtree,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(w: &Walk, root: &Path) -> Vec<String> {
        let mut v: Vec<String> = w
            .found
            .iter()
            .map(|f| f.path.strip_prefix(root).unwrap().display().to_string())
            .collect();
        v.sort();
        v
    }

    fn tree() -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        for p in [
            "a.pcap",
            "b.pcapng",
            ".hidden.pcap",
            "c.pcap.tmp",
            "sub/d.pcap",
            "sub/deeper/e.pcap",
            ".dotdir/f.pcap",
        ] {
            let p = d.path().join(p);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(&p, b"x").unwrap();
        }
        d
    }

    fn walker(inputs: &[String], recursive: bool) -> Walker {
        Walker::new(
            inputs.iter().map(|i| Glob::new(i).unwrap()).collect(),
            Excludes::new(&[".*", "*.tmp"]).unwrap(),
            recursive,
        )
    }

    #[test]
    fn directory_flat_and_recursive() {
        let d = tree();
        let root = d.path().display().to_string();
        let flat = walker(std::slice::from_ref(&root), false).walk(&|_| true, None);
        assert_eq!(names(&flat, d.path()), ["a.pcap", "b.pcapng"]);
        let deep = walker(&[root], true).walk(&|_| true, None);
        assert_eq!(
            names(&deep, d.path()),
            ["a.pcap", "b.pcapng", "sub/d.pcap", "sub/deeper/e.pcap"]
        );
        assert!(deep.unreadable.is_empty());
    }

    #[test]
    fn patterns_and_explicit_files() {
        let d = tree();
        let root = d.path().display().to_string();
        let w = walker(&[format!("{root}/**/*.pcap")], false).walk(&|_| true, None);
        assert_eq!(
            names(&w, d.path()),
            ["a.pcap", "sub/d.pcap", "sub/deeper/e.pcap"]
        );
        let w = walker(&[format!("{root}/*/*.pcap")], false).walk(&|_| true, None);
        assert_eq!(names(&w, d.path()), ["sub/d.pcap"]);
        // A file named explicitly is taken even if an exclude would match it; overlapping
        // inputs list it once.
        let w = walker(
            &[
                format!("{root}/.hidden.pcap"),
                format!("{root}/*.pcap"),
                format!("{root}/a.pcap"),
            ],
            false,
        )
        .walk(&|_| true, None);
        assert_eq!(names(&w, d.path()), [".hidden.pcap", "a.pcap"]);
        let missing = walker(&[format!("{root}/nope/*.pcap")], false).walk(&|_| true, None);
        assert!(missing.found.is_empty() && missing.unreadable.is_empty());
    }

    #[test]
    fn symlinks_to_files_followed_to_dirs_not() {
        let d = tree();
        std::os::unix::fs::symlink(d.path().join("a.pcap"), d.path().join("link.pcap")).unwrap();
        std::os::unix::fs::symlink(d.path(), d.path().join("sub/loop")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", d.path().join("dangling.pcap")).unwrap();
        let w = walker(&[d.path().display().to_string()], true).walk(&|_| true, None);
        assert_eq!(
            names(&w, d.path()),
            [
                "a.pcap",
                "b.pcapng",
                "link.pcap",
                "sub/d.pcap",
                "sub/deeper/e.pcap"
            ]
        );
        let a = w.found.iter().find(|f| f.path.ends_with("a.pcap")).unwrap();
        let l = w
            .found
            .iter()
            .find(|f| f.path.ends_with("link.pcap"))
            .unwrap();
        assert_eq!(a.stat.unwrap().inode(), l.stat.unwrap().inode());
        // Without stat, the directory entry's inode is the file's.
        let w = walker(&[d.path().display().to_string()], false).walk(&|_| false, None);
        let a2 = w.found.iter().find(|f| f.path.ends_with("a.pcap")).unwrap();
        assert_eq!(a2.stat, None);
        assert_eq!(a2.hint, a.stat.unwrap().inode());
        assert!(w.unreadable.is_empty());
    }

    #[test]
    fn files_not_stated_go_to_the_sink_with_their_directory_open() {
        let d = tree();
        let root = d.path().display().to_string();
        let a_ino = fs::metadata(d.path().join("a.pcap")).unwrap().ino();
        let mut jobs = Vec::new();
        // `a.pcap` is known (stat it), the others are new (hand them over).
        let mut sink = |j: ReadJob| jobs.push(j);
        let w = walker(&[format!("{root}/**/*.pcap")], false)
            .walk(&|hint| hint.1 == a_ino, Some(&mut sink));
        let a = w.found.iter().find(|f| f.stat.is_some()).unwrap();
        assert!(a.path.ends_with("a.pcap"));
        let mut lent: Vec<String> = jobs
            .iter()
            .map(|j| {
                let f = &w.found[j.index];
                assert_eq!(f.path, PathBuf::new(), "the path is lent to the sink");
                assert_eq!(f.stat, None);
                // The directory handle is the file's directory: the name opens there.
                let dir = j.dir.as_ref().unwrap();
                let name = j.path.file_name().unwrap();
                let via_dir =
                    nix::sys::stat::fstatat(dir, name, nix::fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
                        .unwrap();
                assert_eq!(via_dir.st_ino, f.hint.1);
                j.path.strip_prefix(d.path()).unwrap().display().to_string()
            })
            .collect();
        lent.sort();
        assert_eq!(lent, ["sub/d.pcap", "sub/deeper/e.pcap"]);
        assert_eq!(w.found.len(), 3);
    }

    #[test]
    fn hides_subtrees_or_single_paths() {
        let u = Unreadable {
            path: PathBuf::from("/a/b"),
            error: io::Error::from_raw_os_error(libc_eacces()),
            subtree: true,
        };
        assert!(u.hides(Path::new("/a/b/c.pcap")));
        assert!(!u.hides(Path::new("/a/bc.pcap")));
        let f = Unreadable {
            subtree: false,
            ..u
        };
        assert!(f.hides(Path::new("/a/b")));
        assert!(!f.hides(Path::new("/a/b/c")));
    }

    fn libc_eacces() -> i32 {
        13
    }
}
