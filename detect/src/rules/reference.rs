//! Reference systems: a rule's `reference:<system>,<id>` names a system of the
//! reference table, whose URL prefix makes the reference a link (`reference:cve,2021-1`
//! -> `https://cve.mitre.org/cgi-bin/cvename.cgi?name=2021-1`). The built-in table is the
//! one Suricata ships (`reference.config`); a `reference-config-file` replaces it, in
//! Suricata's syntax (`config reference: <system> <url-prefix>`): a line that is not is
//! reported with its file and line number and skipped, as Suricata does. System names are
//! case-insensitive, as in Suricata.

use std::collections::HashMap;
use std::path::Path;

use super::classification::{ConfigFileError, ConfigFileProblem, config_lines, valid_name};

/// (system, URL prefix): Suricata's default reference.config.
const BUILTIN: &[(&str, &str)] = &[
    ("bugtraq", "https://www.securityfocus.com/bid/"),
    ("bid", "https://www.securityfocus.com/bid/"),
    ("cve", "https://cve.mitre.org/cgi-bin/cvename.cgi?name="),
    ("nessus", "https://www.tenable.com/plugins/nessus/"),
    ("url", "https://"),
    ("mcafee", "https://vil.nai.com/vil/content/v_"),
    ("md5", "https://www.threatexpert.com/report.aspx?md5="),
    ("secunia", "https://www.secunia.com/advisories/"),
    ("arachnids", "https://www.whitehats.com/info/IDS"),
    ("exploitdb", "https://www.exploit-db.com/exploits/"),
    ("msft", "https://technet.microsoft.com/security/bulletin/"),
    ("et", "https://doc.emergingthreats.net/"),
    ("etpro", "https://doc.emergingthreatspro.com/"),
    ("telus", "https://"),
    ("xforce", "http://xforce.iss.net/xforce/xfdb/"),
    ("osvdb", "http://osvdb.org/show/osvdb/"),
    (
        "threatexpert",
        "http://www.threatexpert.com/report.aspx?md5=",
    ),
    ("openpacket", "https://www.openpacket.org/capture/grab/"),
    ("securitytracker", "http://securitytracker.com/id?"),
];

/// The reference-system table.
#[derive(Debug, Clone)]
pub struct References {
    /// Lowercased system name -> URL prefix.
    map: HashMap<String, String>,
}

impl Default for References {
    fn default() -> Self {
        References {
            map: BUILTIN
                .iter()
                .map(|(n, u)| (n.to_string(), u.to_string()))
                .collect(),
        }
    }
}

impl References {
    /// Reads a reference config file; lines that are not Suricata's syntax are problems
    /// (file:line), the others load.
    pub fn load(path: &Path) -> Result<(References, Vec<ConfigFileProblem>), ConfigFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| ConfigFileError {
            what: "reference config file",
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self::parse_lines(&text, path))
    }

    /// Parses reference config text: the table of the good lines and a problem for each
    /// other one. A system given twice keeps its last line.
    pub fn parse_lines(text: &str, file: &Path) -> (References, Vec<ConfigFileProblem>) {
        let mut problems = Vec::new();
        let mut map = HashMap::new();
        for (line, rest) in config_lines(text, file, "reference", &mut problems) {
            let problem = |reason: String| ConfigFileProblem {
                file: file.to_path_buf(),
                line,
                reason,
            };
            let Some((system, url)) = rest.split_once(|c: char| c.is_ascii_whitespace()) else {
                problems.push(problem(format!("`{rest}`: expected <system> <url-prefix>")));
                continue;
            };
            let (system, url) = (system.trim(), url.trim());
            if !valid_name(system) {
                problems.push(problem(format!("bad reference system name `{system}`")));
                continue;
            }
            if url.is_empty() || url.contains(char::is_whitespace) {
                problems.push(problem(format!(
                    "`{url}` is not a URL prefix (one word, no blanks)"
                )));
                continue;
            }
            map.insert(system.to_ascii_lowercase(), url.to_string());
        }
        problems.sort_by_key(|p| p.line);
        (References { map }, problems)
    }

    /// The URL prefix of a system.
    pub fn prefix(&self, system: &str) -> Option<&str> {
        self.map
            .get(&system.trim().to_ascii_lowercase())
            .map(String::as_str)
    }

    /// A rule's reference (`system|id`, as [`crate::rules::Rule::references`] keeps them) as
    /// a URL, if its system is known.
    pub fn url(&self, reference: &str) -> Option<String> {
        let (system, id) = reference.split_once('|')?;
        self.prefix(system).map(|p| format!("{p}{}", id.trim()))
    }

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
    fn builtin_urls() {
        let r = References::default();
        assert_eq!(
            r.url("cve|2021-44228").as_deref(),
            Some("https://cve.mitre.org/cgi-bin/cvename.cgi?name=2021-44228")
        );
        assert_eq!(
            r.url("URL|example.com/x").as_deref(),
            Some("https://example.com/x")
        );
        assert_eq!(r.url("nosuch|1"), None);
        assert_eq!(r.url("no separator"), None);
    }

    #[test]
    fn bad_lines_are_reported_by_file_and_line_and_skipped() {
        let text = "# c\n\
                    config reference: bugtraq   http://www.securityfocus.com/bid/\n\
                    config reference: broken\n\
                    reference junk\n\
                    config reference: Local\thttps://wiki.example/\n\
                    config reference: 1x http://x/\n";
        let (r, problems) = References::parse_lines(text, Path::new("r.config"));
        assert_eq!(r.len(), 2);
        assert_eq!(r.prefix("local"), Some("https://wiki.example/"));
        assert_eq!(
            r.url("bugtraq|1").as_deref(),
            Some("http://www.securityfocus.com/bid/1")
        );
        let lines: Vec<String> = problems.iter().map(|p| p.to_string()).collect();
        assert_eq!(
            lines,
            [
                "r.config:3: `broken`: expected <system> <url-prefix>",
                "r.config:4: `reference junk` is not a `config reference:` line",
                "r.config:6: bad reference system name `1x`",
            ]
        );
        let stock = Path::new("../../shared/tools/reference/reference.config");
        if stock.exists() {
            let (r, problems) = References::load(stock).unwrap();
            assert!(problems.is_empty(), "{problems:?}");
            assert_eq!(r.prefix("et"), Some("https://doc.emergingthreats.net/"));
        } else {
            eprintln!("skipped: {} is absent", stock.display());
        }
    }
}
