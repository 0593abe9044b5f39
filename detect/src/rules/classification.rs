//! Classtypes: a rule's `classtype` gives the alert's `category` (description) and
//! `severity` (priority). The built-in table is the classification table that
//! Suricata and Snort ship; a `classification-file` replaces it.

use std::collections::HashMap;
use std::path::Path;

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
    /// Reads `config classification: name,description,priority` lines.
    pub fn from_file(path: &Path) -> Result<Classification, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read classification file {}: {e}", path.display()))?;
        Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub fn parse(text: &str) -> Result<Classification, String> {
        let mut map = HashMap::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            let Some(rest) = line.strip_prefix("config classification:") else {
                continue;
            };
            let parts: Vec<&str> = rest.split(',').map(str::trim).collect();
            let [name, desc, prio] = parts[..] else {
                return Err(format!(
                    "line {}: expected name,description,priority",
                    i + 1
                ));
            };
            let prio: u32 = prio
                .parse()
                .map_err(|_| format!("line {}: bad priority `{prio}`", i + 1))?;
            map.insert(name.to_string(), (desc.to_string(), prio));
        }
        Ok(Classification { map })
    }

    /// (description, priority) of a classtype.
    pub fn get(&self, name: &str) -> Option<(&str, u32)> {
        self.map.get(name).map(|(d, p)| (d.as_str(), *p))
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
}
