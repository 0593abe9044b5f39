//! Discovery: which regular files the configured inputs name right now.
//!
//! An input is a file (taken as it is, excludes do not apply to a file named
//! explicitly), a directory (its files; its subdirectories too when `recursive`), or a
//! pattern (see [`crate::glob`]; `**` gives recursion). Excluded names are neither listed
//! nor descended into. Symbolic links to files are followed; links to directories are
//! not descended (they could loop).
//!
//! Every failure other than "not found" is reported as [`Unreadable`], with whether it
//! hides a whole subtree (a directory that cannot be listed): the scanner must not take
//! the files it cannot see for deleted ones.

use std::fs::{self, DirEntry};
use std::io;
use std::path::{Path, PathBuf};

use crate::glob::{Excludes, Glob};
use crate::identity::Stat;

/// A regular file found by a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    pub path: PathBuf,
    pub stat: Stat,
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

impl Walker {
    pub fn new(inputs: Vec<Glob>, excludes: Excludes, recursive: bool) -> Walker {
        Walker {
            inputs,
            excludes,
            recursive,
        }
    }

    /// Lists every file the inputs name. Each path appears once.
    pub fn walk(&self) -> Walk {
        let mut w = Walk::default();
        for input in &self.inputs {
            if input.is_literal() {
                let path = input.base();
                match fs::metadata(path) {
                    Ok(m) if m.is_dir() => {
                        self.list(path, &mut PathBuf::new(), None, &mut w);
                    }
                    Ok(m) if m.is_file() => w.found.push(Found {
                        path: path.to_path_buf(),
                        stat: Stat::from_metadata(&m),
                    }),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(error) => w.unreadable.push(Unreadable {
                        path: path.to_path_buf(),
                        error,
                        subtree: true,
                    }),
                }
            } else {
                self.list(input.base(), &mut PathBuf::new(), Some(input), &mut w);
            }
        }
        if self.inputs.len() > 1 {
            // Overlapping inputs name some files twice.
            w.found.sort_by(|a, b| a.path.cmp(&b.path));
            w.found.dedup_by(|a, b| a.path == b.path);
        }
        w
    }

    /// Lists directory `dir` (`rel` below the input's base). With a pattern, only the
    /// files it matches and the directories it may match inside; without, every file,
    /// and subdirectories when recursive.
    fn list(&self, dir: &Path, rel: &mut PathBuf, pattern: Option<&Glob>, w: &mut Walk) {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return,
            Err(error) => {
                w.unreadable.push(Unreadable {
                    path: dir.to_path_buf(),
                    error,
                    subtree: true,
                });
                return;
            }
        };
        for entry in rd {
            let entry = match entry {
                Ok(e) => e,
                Err(error) => {
                    // The listing broke off: what was not listed was not seen.
                    w.unreadable.push(Unreadable {
                        path: dir.to_path_buf(),
                        error,
                        subtree: true,
                    });
                    return;
                }
            };
            self.entry(&entry, rel, pattern, w);
        }
    }

    fn entry(&self, entry: &DirEntry, rel: &mut PathBuf, pattern: Option<&Glob>, w: &mut Walk) {
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
                self.list(&path, rel, pattern, w);
            }
        } else if ft.is_file() || ft.is_symlink() {
            let wanted = pattern.is_none_or(|g| g.matches_relative(rel));
            if wanted {
                // A link is followed to its target; a plain file is stat'ed relative to the
                // open directory (no path walk).
                let meta = if ft.is_symlink() {
                    fs::metadata(&path)
                } else {
                    entry.metadata()
                };
                match meta {
                    Ok(m) if m.is_file() => w.found.push(Found {
                        path,
                        stat: Stat::from_metadata(&m),
                    }),
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => unreadable(w, path, e, false),
                }
            }
        }
        rel.pop();
    }
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
        let flat = walker(std::slice::from_ref(&root), false).walk();
        assert_eq!(names(&flat, d.path()), ["a.pcap", "b.pcapng"]);
        let deep = walker(&[root], true).walk();
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
        let w = walker(&[format!("{root}/**/*.pcap")], false).walk();
        assert_eq!(
            names(&w, d.path()),
            ["a.pcap", "sub/d.pcap", "sub/deeper/e.pcap"]
        );
        let w = walker(&[format!("{root}/*/*.pcap")], false).walk();
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
        .walk();
        assert_eq!(names(&w, d.path()), [".hidden.pcap", "a.pcap"]);
        let missing = walker(&[format!("{root}/nope/*.pcap")], false).walk();
        assert!(missing.found.is_empty() && missing.unreadable.is_empty());
    }

    #[test]
    fn symlinks_to_files_followed_to_dirs_not() {
        let d = tree();
        std::os::unix::fs::symlink(d.path().join("a.pcap"), d.path().join("link.pcap")).unwrap();
        std::os::unix::fs::symlink(d.path(), d.path().join("sub/loop")).unwrap();
        std::os::unix::fs::symlink("/nonexistent", d.path().join("dangling.pcap")).unwrap();
        let w = walker(&[d.path().display().to_string()], true).walk();
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
        assert_eq!(a.stat.inode(), l.stat.inode());
        assert!(w.unreadable.is_empty());
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
