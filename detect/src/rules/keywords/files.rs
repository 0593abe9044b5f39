//! File keywords that are not sticky buffers: `filemd5`, `filesha1`, `filesha256` (hash
//! lists), `filesize`. They inspect the files of a transaction (any protocol whose
//! transactions carry files), in the rule's direction.

use std::path::{Path, PathBuf};

use super::*;

/// Most digests a hash-list file may hold.
pub const MAX_HASH_LIST: usize = 10_000_000;
/// Largest hash-list file read (bytes).
pub const MAX_HASH_LIST_BYTES: u64 = 1 << 30;

impl Builder<'_> {
    /// Applies `kw` if it is a file keyword: `Ok(false)` when it is not.
    pub(super) fn file_option(&mut self, kw: &str, v: Option<&str>) -> Result<bool, Fail> {
        let algo = match kw {
            "filemd5" => HashAlgo::Md5,
            "filesha1" => HashAlgo::Sha1,
            "filesha256" => HashAlgo::Sha256,
            "filestore" => {
                let opt = parse_filestore(v).map_err(|e| fail(kw, e))?;
                self.rule.filestore = Some(opt);
                self.rule.tx_checks.push(TxCheck::File(FileCheck::Exists));
                return Ok(true);
            }
            "filesize" => {
                let val = value_of(kw, v)?;
                let cmp = parse_num_cmp(val).ok_or_else(|| fail(kw, "bad size"))?;
                self.rule
                    .tx_checks
                    .push(TxCheck::File(FileCheck::Size(cmp)));
                return Ok(true);
            }
            _ => return Ok(false),
        };
        let val = value_of(kw, v)?;
        let (negated, name) = negation(val);
        let name = parse::unquote(name.trim());
        let path = resolve(&self.rule.file, name.trim());
        let list = load_hash_list(&path, algo).map_err(|e| fail(kw, e))?;
        self.rule.tx_checks.push(TxCheck::File(FileCheck::Hash {
            algo,
            list: Arc::new(list),
            negated,
        }));
        Ok(true)
    }
}

/// `filestore[:<direction>[,<scope>]]`: direction `request`/`to_server`,
/// `response`/`to_client` or `both` (default: the direction of the match); scope
/// `file`, `tx`, `ssn` or `flow` (default `file`).
fn parse_filestore(v: Option<&str>) -> Result<FileStoreOpt, String> {
    let mut opt = FileStoreOpt {
        dir: StoreDir::Match,
        scope: StoreScope::File,
    };
    let Some(v) = v.map(str::trim).filter(|v| !v.is_empty()) else {
        return Ok(opt);
    };
    let mut parts = v.split(',').map(str::trim);
    if let Some(d) = parts.next() {
        opt.dir = match d {
            "request" | "to_server" => StoreDir::ToServer,
            "response" | "to_client" => StoreDir::ToClient,
            "both" => StoreDir::Both,
            _ => return Err(format!("unknown direction {d:?} (request, response, both)")),
        };
    }
    if let Some(s) = parts.next() {
        opt.scope = match s {
            "file" => StoreScope::File,
            "tx" => StoreScope::Tx,
            "ssn" | "flow" => StoreScope::Flow,
            _ => return Err(format!("unknown scope {s:?} (file, tx, ssn, flow)")),
        };
    }
    if parts.next().is_some() {
        return Err(format!("too many options in {v:?}"));
    }
    Ok(opt)
}

/// A hash-list path: absolute as given; relative to the rule file's directory when the
/// file is there (as Suricata resolves them), else as given.
fn resolve(rule_file: &Path, name: &str) -> PathBuf {
    let p = Path::new(name);
    if p.is_absolute() {
        return p.to_path_buf();
    }
    if let Some(dir) = rule_file.parent() {
        let in_dir = dir.join(p);
        if in_dir.exists() {
            return in_dir;
        }
    }
    p.to_path_buf()
}

/// Reads a hash list: one hex digest per line (anything after it, past a blank, is
/// ignored), blank lines and `#` comments skipped. A line that is not a digest of the
/// algorithm's length is an error naming the file and line.
pub fn load_hash_list(path: &Path, algo: HashAlgo) -> Result<HashList, String> {
    use std::io::Read;
    let f = std::fs::File::open(path)
        .map_err(|e| format!("cannot open hash list {}: {e}", path.display()))?;
    let mut text = String::new();
    f.take(MAX_HASH_LIST_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read hash list {}: {e}", path.display()))?;
    if text.len() as u64 > MAX_HASH_LIST_BYTES {
        return Err(format!(
            "hash list {} is larger than {MAX_HASH_LIST_BYTES} bytes",
            path.display()
        ));
    }
    parse_hash_list(&text, algo, path)
}

/// [`load_hash_list`] over the text of `path`.
pub fn parse_hash_list(text: &str, algo: HashAlgo, path: &Path) -> Result<HashList, String> {
    let n = algo.digest_len();
    let mut digests: Vec<Box<[u8]>> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let word = line.split_ascii_whitespace().next().unwrap_or_default();
        let bad = || {
            format!(
                "hash list {} line {}: `{}` is not a {}-digit hex digest",
                path.display(),
                i + 1,
                word.chars().take(80).collect::<String>(),
                n * 2
            )
        };
        if word.len() != n * 2 {
            return Err(bad());
        }
        let mut d = vec![0u8; n];
        for (k, pair) in word.as_bytes().chunks(2).enumerate() {
            let hi = (pair[0] as char).to_digit(16).ok_or_else(bad)?;
            let lo = (pair[1] as char).to_digit(16).ok_or_else(bad)?;
            d[k] = (hi * 16 + lo) as u8;
        }
        if digests.len() >= MAX_HASH_LIST {
            return Err(format!(
                "hash list {} has more than {MAX_HASH_LIST} digests",
                path.display()
            ));
        }
        digests.push(d.into_boxed_slice());
    }
    if digests.is_empty() {
        return Err(format!("hash list {} has no digest", path.display()));
    }
    digests.sort_unstable();
    digests.dedup();
    Ok(HashList {
        path: path.to_path_buf(),
        digests,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_lists_parse_and_bad_lines_are_named() {
        let p = Path::new("/rules/md5.list");
        let l = parse_hash_list(
            "# comment\n\n090FE607A5BE1228362614CCAA088577  some file\n900150983cd24fb0d6963f7d28e17f72\n",
            HashAlgo::Md5,
            p,
        )
        .unwrap();
        assert_eq!(l.digests.len(), 2);
        let abc = [
            0x90, 0x01, 0x50, 0x98, 0x3c, 0xd2, 0x4f, 0xb0, 0xd6, 0x96, 0x3f, 0x7d, 0x28, 0xe1,
            0x7f, 0x72,
        ];
        assert!(l.contains(&abc));
        assert!(!l.contains(&[0u8; 16]));
        let e = parse_hash_list("900150983cd24fb0d6963f7d28e17f72\nxyz\n", HashAlgo::Md5, p)
            .unwrap_err();
        assert_eq!(
            e,
            "hash list /rules/md5.list line 2: `xyz` is not a 32-digit hex digest"
        );
        let e =
            parse_hash_list("900150983cd24fb0d6963f7d28e17f72\n", HashAlgo::Sha256, p).unwrap_err();
        assert!(e.contains("line 1") && e.contains("64-digit"), "{e}");
        let e =
            parse_hash_list("zz0150983cd24fb0d6963f7d28e17f72\n", HashAlgo::Md5, p).unwrap_err();
        assert!(e.contains("line 1"), "{e}");
        assert!(parse_hash_list("# only\n", HashAlgo::Md5, p).is_err());
    }

    #[test]
    fn a_missing_list_refuses_the_rule() {
        let e = load_hash_list(Path::new("/nonexistent/x.md5"), HashAlgo::Md5).unwrap_err();
        assert!(e.contains("/nonexistent/x.md5"), "{e}");
    }
}
