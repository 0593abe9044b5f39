//! Classtypes: a rule's `classtype` gives the alert's `category` (description) and
//! `severity` (priority). The built-in table is the classification table that
//! Suricata and Snort ship; a `classification-file` replaces it (Suricata's syntax; a
//! line that is not is reported with its file and line number and skipped, as Suricata
//! does).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// (name, description, priority)
const BUILTIN: &[(&str, &str, u32)] = &[
    ("not-suspicious", "Not Suspicious Traffic", 3),
    ("unknown", "Unknown Traffic", 3),
    ("bad-unknown", "Potentially Bad Traffic", 2),
    ("attempted-recon", "Attempted Information Leak", 2),
    ("successful-recon-limited", "Information Leak", 2),
    (
        "successful-recon-largescale",
        "Large Scale Information Leak",
        2,
    ),
    ("attempted-dos", "Attempted Denial of Service", 2),
    ("successful-dos", "Denial of Service", 2),
    ("attempted-user", "Attempted User Privilege Gain", 1),
    ("unsuccessful-user", "Unsuccessful User Privilege Gain", 1),
    ("successful-user", "Successful User Privilege Gain", 1),
    (
        "attempted-admin",
        "Attempted Administrator Privilege Gain",
        1,
    ),
    (
        "successful-admin",
        "Successful Administrator Privilege Gain",
        1,
    ),
    ("rpc-portmap-decode", "Decode of an RPC Query", 2),
    ("shellcode-detect", "Executable code was detected", 1),
    ("string-detect", "A suspicious string was detected", 3),
    (
        "suspicious-filename-detect",
        "A suspicious filename was detected",
        2,
    ),
    (
        "suspicious-login",
        "An attempted login using a suspicious username was detected",
        2,
    ),
    ("system-call-detect", "A system call was detected", 2),
    ("tcp-connection", "A TCP connection was detected", 4),
    ("trojan-activity", "A Network Trojan was detected", 1),
    (
        "unusual-client-port-connection",
        "A client was using an unusual port",
        2,
    ),
    ("network-scan", "Detection of a Network Scan", 3),
    (
        "denial-of-service",
        "Detection of a Denial of Service Attack",
        2,
    ),
    (
        "non-standard-protocol",
        "Detection of a non-standard protocol or event",
        2,
    ),
    (
        "protocol-command-decode",
        "Generic Protocol Command Decode",
        3,
    ),
    (
        "web-application-activity",
        "access to a potentially vulnerable web application",
        2,
    ),
    ("web-application-attack", "Web Application Attack", 1),
    ("misc-activity", "Misc activity", 3),
    ("misc-attack", "Misc Attack", 2),
    ("icmp-event", "Generic ICMP event", 3),
    (
        "inappropriate-content",
        "Inappropriate Content was Detected",
        1,
    ),
    (
        "policy-violation",
        "Potential Corporate Privacy Violation",
        1,
    ),
    (
        "default-login-attempt",
        "Attempt to login by a default username and password",
        2,
    ),
    (
        "targeted-activity",
        "Targeted Malicious Activity was Detected",
        1,
    ),
    ("exploit-kit", "Exploit Kit Activity Detected", 1),
    (
        "external-ip-check",
        "Device Retrieving External IP Address Detected",
        2,
    ),
    ("domain-c2", "Domain Observed Used for C2 Detected", 1),
    ("pup-activity", "Possibly Unwanted Program Detected", 2),
    (
        "credential-theft",
        "Successful Credential Theft Detected",
        1,
    ),
    (
        "social-engineering",
        "Possible Social Engineering Attempted",
        2,
    ),
    ("coin-mining", "Crypto Currency Mining Activity Detected", 2),
    (
        "command-and-control",
        "Malware Command and Control Activity Detected",
        1,
    ),
];

/// Severity of a rule with neither classtype nor priority (Suricata's default).
pub const DEFAULT_PRIORITY: u32 = 3;
/// Lines of a classification or reference file read at most.
pub const MAX_LINES: usize = 100_000;
/// Longest line of a classification or reference file, bytes.
pub const MAX_LINE: usize = 4096;

/// A line of a classification or reference file that is not Suricata's syntax; Suricata
/// reports it and keeps the other lines (`meerkat -T` fails on it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigFileProblem {
    pub file: PathBuf,
    pub line: usize,
    pub reason: String,
}

impl std::fmt::Display for ConfigFileProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Line 0: about the whole file (its reason names it).
        if self.line == 0 {
            return write!(f, "{}", self.reason);
        }
        write!(f, "{}:{}: {}", self.file.display(), self.line, self.reason)
    }
}

/// A classification or reference file that cannot be read at all.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {what} {}: {source}", path.display())]
pub struct ConfigFileError {
    pub what: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// The lines of a `config <what>:` file that carry an entry: (line number, the text after
/// `config <what>:`), and a problem for each other line that is neither blank nor a
/// comment (as Suricata, which reads every line with one pattern).
pub(crate) fn config_lines<'t>(
    text: &'t str,
    file: &Path,
    what: &str,
    problems: &mut Vec<ConfigFileProblem>,
) -> Vec<(usize, &'t str)> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate().take(MAX_LINES) {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let problem = |reason: String| ConfigFileProblem {
            file: file.to_path_buf(),
            line: i + 1,
            reason,
        };
        if line.len() > MAX_LINE {
            problems.push(problem(format!("line longer than {MAX_LINE} bytes")));
            continue;
        }
        // `config classification: ...`, blanks allowed around the words and the colon.
        let rest = line
            .strip_prefix("config")
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix(what))
            .map(str::trim_start)
            .and_then(|r| r.strip_prefix(':'));
        match rest {
            Some(r) => out.push((i + 1, r.trim())),
            None => problems.push(problem(format!("`{line}` is not a `config {what}:` line"))),
        }
    }
    out
}

/// A name as Suricata's files allow it: a letter, then letters, digits, `-` and `_`.
pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// The classtype table.
#[derive(Debug, Clone)]
pub struct Classification {
    map: HashMap<String, (String, u32)>,
}

impl Default for Classification {
    fn default() -> Self {
        Classification {
            map: BUILTIN
                .iter()
                .map(|(n, d, p)| (n.to_string(), (d.to_string(), *p)))
                .collect(),
        }
    }
}

impl Classification {
    /// Reads a classification file (`config classification: name,description,priority`
    /// lines). Lines that are not that syntax are problems (file:line); the others load.
    pub fn load(path: &Path) -> Result<(Classification, Vec<ConfigFileProblem>), ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError {
            what: "classification file",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::parse_lines(&text, path))
    }

    /// [`Classification::load`], failing on the first problem.
    pub fn from_file(path: &Path) -> Result<Classification, String> {
        let (c, problems) = Self::load(path).map_err(|e| e.to_string())?;
        match problems.first() {
            Some(p) => Err(p.to_string()),
            None => Ok(c),
        }
    }

    /// Parses classification text, failing on the first problem.
    pub fn parse(text: &str) -> Result<Classification, String> {
        let (c, problems) = Self::parse_lines(text, Path::new("<text>"));
        match problems.first() {
            Some(p) => Err(p.to_string()),
            None => Ok(c),
        }
    }

    /// Parses classification text: the table of the good lines, and a problem for each
    /// other one. A name given twice keeps its last line, as in Suricata.
    pub fn parse_lines(text: &str, file: &Path) -> (Classification, Vec<ConfigFileProblem>) {
        let mut problems = Vec::new();
        let mut map = HashMap::new();
        for (line, rest) in config_lines(text, file, "classification", &mut problems) {
            let problem = |reason: String| ConfigFileProblem {
                file: file.to_path_buf(),
                line,
                reason,
            };
            // The description may hold commas: the name is before the first, the
            // priority after the last.
            let parsed = rest.split_once(',').and_then(|(name, more)| {
                let (desc, prio) = more.rsplit_once(',')?;
                Some((name.trim(), desc.trim(), prio.trim()))
            });
            let Some((name, desc, prio)) = parsed else {
                problems.push(problem(format!(
                    "`{rest}`: expected name,description,priority"
                )));
                continue;
            };
            if !valid_name(name) {
                problems.push(problem(format!("bad classtype name `{name}`")));
                continue;
            }
            let Ok(prio) = prio.parse::<u32>() else {
                problems.push(problem(format!("bad priority `{prio}` (a number)")));
                continue;
            };
            if desc.is_empty() {
                problems.push(problem(format!("classtype `{name}` has no description")));
                continue;
            }
            map.insert(name.to_string(), (desc.to_string(), prio));
        }
        problems.sort_by_key(|p| p.line);
        (Classification { map }, problems)
    }

    /// (description, priority) of a classtype.
    pub fn get(&self, name: &str) -> Option<(&str, u32)> {
        self.map.get(name).map(|(d, p)| (d.as_str(), *p))
    }

    /// Number of classtypes.
    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_and_file() {
        let c = Classification::default();
        assert_eq!(
            c.get("trojan-activity"),
            Some(("A Network Trojan was detected", 1))
        );
        let f =
            Classification::parse("# x\nconfig classification: custom,Custom Thing, 4\n").unwrap();
        assert_eq!(f.get("custom"), Some(("Custom Thing", 4)));
        assert!(f.get("trojan-activity").is_none());
        assert!(Classification::parse("config classification: a,b").is_err());
    }

    #[test]
    fn bad_lines_are_reported_by_file_and_line_and_skipped() {
        let text = "# comment\n\
                    config classification: good,Good Thing,2\n\
                    config classification: bad line\n\
                    config classification: prio,Prio,x\n\
                    config   classification :  spaced , Spaced, with comma ,  1  \n\
                    not a config line\n\
                    config classification: 9bad,Name,1\n\
                    \n";
        let (c, problems) = Classification::parse_lines(text, Path::new("/etc/c.config"));
        assert_eq!(c.get("good"), Some(("Good Thing", 2)));
        assert_eq!(c.get("spaced"), Some(("Spaced, with comma", 1)));
        assert_eq!(c.len(), 2);
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            lines,
            [
                "/etc/c.config:3: `bad line`: expected name,description,priority",
                "/etc/c.config:4: bad priority `x` (a number)",
                "/etc/c.config:6: `not a config line` is not a `config classification:` line",
                "/etc/c.config:7: bad classtype name `9bad`",
            ]
        );
        // Suricata's own file loads whole when present.
        let stock = std::path::Path::new("../../shared/corpus/suricata/classification.config");
        if stock.exists() {
            let (c, problems) = Classification::load(stock).unwrap();
            assert!(problems.is_empty(), "{problems:?}");
            assert_eq!(
                c.get("trojan-activity"),
                Some(("A Network Trojan was detected", 1))
            );
        } else {
            eprintln!("skipped: {} is absent", stock.display());
        }
    }
}
