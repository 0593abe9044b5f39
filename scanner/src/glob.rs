//! Shell-style path patterns: `*` and `?` (within one path segment), `[abc]`, `[a-z]`,
//! `[!a-z]` (or `[^a-z]`), `\` to escape, and `**` as a whole segment for "any number of
//! directories, none included" (`/data/**/*.pcap` finds `/data/x.pcap` and
//! `/data/a/b/x.pcap`).
//!
//! A pattern is split into a literal base directory (the leading segments without
//! wildcards), where the walk starts, and the segments after it, which the walk matches
//! as it descends (and uses to avoid descending into directories that cannot match).
//! Matching is on bytes, so non-UTF-8 names work; a leading `.` is not special here
//! (hidden files are left out by the default excludes instead).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Errors in a pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GlobError {
    #[error("pattern `{0}`: unclosed `[`")]
    UnclosedClass(String),
    #[error("pattern `{0}`: ends with a lone `\\`")]
    TrailingEscape(String),
    #[error("pattern is empty")]
    Empty,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Byte(u8),
    /// `*`: any run of bytes.
    Star,
    /// `?`: one byte.
    One,
    Class {
        negated: bool,
        ranges: Vec<(u8, u8)>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Seg {
    /// A segment without wildcards.
    Literal(Vec<u8>),
    Pattern(Vec<Tok>),
    /// `**`: zero or more whole segments.
    AnyDirs,
}

/// A compiled pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Glob {
    text: String,
    base: PathBuf,
    segs: Vec<Seg>,
}

/// Whether `s` holds a wildcard (`*`, `?`, `[`) that is not escaped.
pub fn is_pattern(s: &str) -> bool {
    let mut escaped = false;
    for b in s.bytes() {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            b'*' | b'?' | b'[' => return true,
            _ => {}
        }
    }
    false
}

/// `s` with its wildcard characters escaped: a pattern that matches the path `s` only.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn compile_segment(text: &str, seg: &[u8]) -> Result<Seg, GlobError> {
    if seg == b"**" {
        return Ok(Seg::AnyDirs);
    }
    let mut toks = Vec::new();
    // The segment's bytes with escapes resolved, while it has no wildcard.
    let mut bytes = Vec::new();
    let mut literal = true;
    let mut i = 0;
    while i < seg.len() {
        let b = seg[i];
        match b {
            b'\\' => {
                let Some(&next) = seg.get(i + 1) else {
                    return Err(GlobError::TrailingEscape(text.to_string()));
                };
                toks.push(Tok::Byte(next));
                bytes.push(next);
                i += 2;
                continue;
            }
            b'*' => {
                literal = false;
                // `**` inside a segment is just `*`.
                if toks.last() != Some(&Tok::Star) {
                    toks.push(Tok::Star);
                }
            }
            b'?' => {
                literal = false;
                toks.push(Tok::One);
            }
            b'[' => {
                literal = false;
                let mut j = i + 1;
                let negated = matches!(seg.get(j), Some(b'!' | b'^'));
                if negated {
                    j += 1;
                }
                let mut ranges = Vec::new();
                let mut first = true;
                loop {
                    let Some(&c) = seg.get(j) else {
                        return Err(GlobError::UnclosedClass(text.to_string()));
                    };
                    // A `]` first in the class is a member, not the end.
                    if c == b']' && !first {
                        break;
                    }
                    first = false;
                    let c = if c == b'\\' {
                        j += 1;
                        *seg.get(j)
                            .ok_or_else(|| GlobError::UnclosedClass(text.to_string()))?
                    } else {
                        c
                    };
                    if seg.get(j + 1) == Some(&b'-')
                        && let Some(&hi) = seg.get(j + 2)
                        && hi != b']'
                    {
                        ranges.push((c.min(hi), c.max(hi)));
                        j += 3;
                    } else {
                        ranges.push((c, c));
                        j += 1;
                    }
                }
                toks.push(Tok::Class { negated, ranges });
                i = j + 1;
                continue;
            }
            _ => {
                toks.push(Tok::Byte(b));
                bytes.push(b);
            }
        }
        i += 1;
    }
    if literal {
        Ok(Seg::Literal(bytes))
    } else {
        Ok(Seg::Pattern(toks))
    }
}

fn tok_matches(t: &Tok, b: u8) -> bool {
    match t {
        Tok::Byte(x) => *x == b,
        Tok::One => true,
        Tok::Star => true,
        Tok::Class { negated, ranges } => {
            ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&b)) != *negated
        }
    }
}

/// Wildcard match of one segment (linear-time with single-star backtracking).
fn match_tokens(toks: &[Tok], name: &[u8]) -> bool {
    let (mut t, mut n) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        match toks.get(t) {
            Some(Tok::Star) => {
                star = Some((t, n));
                t += 1;
            }
            Some(tok) if tok_matches(tok, name[n]) => {
                t += 1;
                n += 1;
            }
            _ => match star {
                Some((st, sn)) => {
                    t = st + 1;
                    n = sn + 1;
                    star = Some((st, sn + 1));
                }
                None => return false,
            },
        }
    }
    toks[t.min(toks.len())..].iter().all(|t| *t == Tok::Star)
}

fn seg_matches(seg: &Seg, name: &[u8]) -> bool {
    match seg {
        Seg::Literal(l) => l == name,
        Seg::Pattern(p) => match_tokens(p, name),
        Seg::AnyDirs => true,
    }
}

fn match_segs(segs: &[Seg], names: &[&[u8]]) -> bool {
    match segs.split_first() {
        None => names.is_empty(),
        Some((Seg::AnyDirs, rest)) => (0..=names.len()).any(|k| match_segs(rest, &names[k..])),
        Some((seg, rest)) => match names.split_first() {
            Some((name, more)) => seg_matches(seg, name) && match_segs(rest, more),
            None => false,
        },
    }
}

/// Whether some path that starts with `names` (a directory) can match `segs`.
fn could_extend(segs: &[Seg], names: &[&[u8]]) -> bool {
    match (segs.split_first(), names.split_first()) {
        (_, None) => !segs.is_empty(),
        (None, Some(_)) => false,
        (Some((Seg::AnyDirs, _)), Some(_)) => true,
        (Some((seg, rest)), Some((name, more))) => {
            seg_matches(seg, name) && could_extend(rest, more)
        }
    }
}

fn components(path: &Path) -> Vec<&[u8]> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.as_bytes()),
            _ => None,
        })
        .collect()
}

impl Glob {
    /// Compiles `pattern`.
    pub fn new(pattern: &str) -> Result<Glob, GlobError> {
        if pattern.is_empty() {
            return Err(GlobError::Empty);
        }
        let absolute = pattern.starts_with('/');
        let mut base = if absolute {
            PathBuf::from("/")
        } else {
            PathBuf::new()
        };
        let mut segs = Vec::new();
        let mut in_base = true;
        for part in pattern.split('/').filter(|p| !p.is_empty() && *p != ".") {
            let seg = compile_segment(pattern, part.as_bytes())?;
            match (&seg, in_base) {
                // Escapes are resolved in the literal's bytes.
                (Seg::Literal(l), true) => base.push(OsStr::from_bytes(l)),
                _ => {
                    in_base = false;
                    segs.push(seg);
                }
            }
        }
        if base.as_os_str().is_empty() {
            base = PathBuf::from(".");
        }
        Ok(Glob {
            text: pattern.to_string(),
            base,
            segs,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The directory the walk starts in (the pattern's literal leading part).
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// True for a pattern without wildcards: the base is the whole path.
    pub fn is_literal(&self) -> bool {
        self.segs.is_empty()
    }

    /// Whether `rel` (a path relative to [`Glob::base`]) matches.
    pub fn matches_relative(&self, rel: &Path) -> bool {
        match_segs(&self.segs, &components(rel))
    }

    /// Whether some path inside directory `rel` (relative to the base) can match: the walk
    /// descends only into those.
    pub fn may_match_inside(&self, rel: &Path) -> bool {
        could_extend(&self.segs, &components(rel))
    }

    /// Whether a whole path matches (base included), e.g. for excludes with a `/`.
    pub fn matches_path(&self, path: &Path) -> bool {
        match path.strip_prefix(&self.base) {
            Ok(rel) => self.matches_relative(rel),
            Err(_) => false,
        }
    }

    /// Whether one name (a single segment) matches a one-segment pattern.
    pub fn matches_name(&self, name: &OsStr) -> bool {
        if self.segs.is_empty() {
            return self.base.as_os_str() == name;
        }
        self.base == Path::new(".")
            && self.segs.len() == 1
            && seg_matches(&self.segs[0], name.as_bytes())
    }
}

/// A list of exclude patterns. A pattern without `/` is matched against each file and
/// directory *name* (`.*`, `*.tmp`); one with `/` against the whole path
/// (`/data/spool/**`).
#[derive(Debug, Clone, Default)]
pub struct Excludes {
    names: Vec<Glob>,
    paths: Vec<Glob>,
}

impl Excludes {
    pub fn new<S: AsRef<str>>(patterns: &[S]) -> Result<Excludes, GlobError> {
        let mut ex = Excludes::default();
        for p in patterns {
            let p = p.as_ref();
            let g = Glob::new(p)?;
            if p.contains('/') {
                ex.paths.push(g);
            } else {
                ex.names.push(g);
            }
        }
        Ok(ex)
    }

    /// Whether the file or directory at `path` (named `name`) is excluded.
    pub fn excludes(&self, path: &Path, name: &OsStr) -> bool {
        self.names.iter().any(|g| g.matches_name(name))
            || self.paths.iter().any(|g| g.matches_path(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, rel: &str) -> bool {
        Glob::new(p).unwrap().matches_relative(Path::new(rel))
    }

    #[test]
    fn base_and_segments() {
        let g = Glob::new("/data/caps/**/*.pcap").unwrap();
        assert_eq!(g.base(), Path::new("/data/caps"));
        assert!(!g.is_literal());
        assert!(g.matches_relative(Path::new("x.pcap")));
        assert!(g.matches_relative(Path::new("a/b/x.pcap")));
        assert!(!g.matches_relative(Path::new("a/b/x.pcapng")));
        assert!(g.matches_path(Path::new("/data/caps/a/x.pcap")));
        assert!(!g.matches_path(Path::new("/data/other/x.pcap")));
        let lit = Glob::new("/data/one.pcap").unwrap();
        assert!(lit.is_literal());
        assert_eq!(lit.base(), Path::new("/data/one.pcap"));
        assert_eq!(Glob::new("*.pcap").unwrap().base(), Path::new("."));
    }

    #[test]
    fn wildcards() {
        assert!(m("/d/*.pcap", "a.pcap"));
        assert!(m("/d/*.pcap", ".pcap"));
        assert!(!m("/d/*.pcap", "a/b.pcap"), "* stays inside a segment");
        assert!(m("/d/cap-??.pcap", "cap-01.pcap"));
        assert!(!m("/d/cap-??.pcap", "cap-1.pcap"));
        assert!(m("/d/cap-[0-9]*", "cap-7x"));
        assert!(!m("/d/cap-[!0-9]*", "cap-7x"));
        assert!(m("/d/cap-[^0-9]*", "cap-x"));
        assert!(m("/d/[]]", "]"));
        assert!(m("/d/a*b*c", "aXXbYYc"));
        assert!(!m("/d/a*b*c", "aXXbYY"));
        assert!(m("/d/\\**", "*x"));
        assert!(!m("/d/\\**", "x"));
        // A pattern whose wildcards are all escaped is a literal path.
        assert_eq!(Glob::new("/d/\\*").unwrap().base(), Path::new("/d/*"));
        assert!(m("/d/**", "a/b/c"));
        assert!(m("/d/a/**/b", "a/b"));
        assert!(m("/d/a/**/b", "a/x/y/b"));
        assert!(!m("/d/a/**/b", "a/x/y/c"));
    }

    #[test]
    fn descent_is_pruned() {
        let g = Glob::new("/d/2024-*/cap*.pcap").unwrap();
        assert!(g.may_match_inside(Path::new("")));
        assert!(g.may_match_inside(Path::new("2024-01")));
        assert!(!g.may_match_inside(Path::new("2023-01")));
        assert!(!g.may_match_inside(Path::new("2024-01/deeper")));
        let any = Glob::new("/d/**/x").unwrap();
        assert!(any.may_match_inside(Path::new("a/b/c")));
    }

    #[test]
    fn bad_patterns_are_errors_naming_them() {
        assert_eq!(
            Glob::new("/d/[abc").unwrap_err().to_string(),
            "pattern `/d/[abc`: unclosed `[`"
        );
        assert!(matches!(
            Glob::new("/d/x\\"),
            Err(GlobError::TrailingEscape(_))
        ));
        assert!(matches!(Glob::new(""), Err(GlobError::Empty)));
    }

    #[test]
    fn is_pattern_sees_unescaped_wildcards() {
        assert!(is_pattern("/a/*.pcap"));
        assert!(is_pattern("/a/[ab]"));
        assert!(!is_pattern("/a/b.pcap"));
        assert!(!is_pattern("/a/\\*"));
        let odd = "/caps/[x]*?.pcap";
        let g = Glob::new(&escape(odd)).unwrap();
        assert!(g.is_literal());
        assert_eq!(g.base(), Path::new(odd));
    }

    #[test]
    fn excludes_by_name_or_path() {
        let ex = Excludes::new(&[".*", "*.tmp", "/data/spool/**"]).unwrap();
        let t = |p: &str| {
            let p = Path::new(p);
            ex.excludes(p, p.file_name().unwrap())
        };
        assert!(t("/data/x/.hidden.pcap"));
        assert!(t("/data/x/cap.pcap.tmp"));
        assert!(t("/data/spool/a/b.pcap"));
        assert!(!t("/data/x/cap.pcap"));
    }
}
