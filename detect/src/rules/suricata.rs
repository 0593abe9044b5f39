//! What Suricata's rule language has, for the tools that compare Meerkat with it:
//! `--list-keywords` (each Suricata keyword, and whether Meerkat implements it), and
//! `-T`, which fails on a rule Suricata would reject too (a keyword or protocol Suricata
//! does not know, a rule that does not parse) but only warns about a rule Meerkat does
//! not load yet (a Suricata keyword or protocol it does not implement, a value it does
//! not take), so that a ruleset Suricata accepts passes.

use super::{Names, RuleContext, RuleProblem, parse_rule};

/// Suricata 8.0.6's keywords, `name<TAB>documentation` per line (regenerate with
/// `tools/gen-suricata-keywords.sh`).
const KEYWORDS: &str = include_str!("suricata_keywords.txt");

/// Protocols a Suricata 8 rule header may name (`alert <proto> ...`).
const PROTOCOLS: &[&str] = &[
    "ip",
    "ipv4",
    "ip4",
    "ipv6",
    "ip6",
    "pkthdr",
    "tcp",
    "tcp-pkt",
    "tcp-stream",
    "udp",
    "icmp",
    "icmpv4",
    "icmpv6",
    "sctp",
    "http",
    "http1",
    "http2",
    "ftp",
    "ftp-data",
    "smtp",
    "tls",
    "ssl",
    "ssh",
    "imap",
    "pop3",
    "smb",
    "dcerpc",
    "dns",
    "doh2",
    "mdns",
    "nfs",
    "ntp",
    "tftp",
    "ike",
    "krb5",
    "quic",
    "dhcp",
    "sip",
    "rfb",
    "mqtt",
    "telnet",
    "websocket",
    "ldap",
    "rdp",
    "bittorrent-dht",
    "snmp",
    "enip",
    "cip",
    "dnp3",
    "modbus",
    "pgsql",
];

/// Suricata's keywords: (name, documentation link), in Suricata's order.
pub fn keywords() -> impl Iterator<Item = (&'static str, &'static str)> {
    KEYWORDS
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| l.split_once('\t').unwrap_or((l, "")))
}

/// Whether Suricata has this rule keyword.
pub fn is_keyword(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    keywords().any(|(k, _)| k == name)
}

/// Whether a Suricata rule header may name this protocol.
pub fn is_protocol(name: &str) -> bool {
    PROTOCOLS.contains(&name.to_ascii_lowercase().as_str())
}

/// Whether Meerkat's rule parser knows the keyword: it is given alone to a rule, and
/// the parser either takes it or objects to how it is used, rather than not knowing it.
pub fn meerkat_supports(keyword: &str, ctx: &RuleContext) -> bool {
    let text = format!("alert tcp any any -> any any ({keyword}; sid:1;)");
    match parse_rule(&text, ctx, &mut Names::default()) {
        Ok(_) => true,
        Err((_, (kw, reason))) => {
            !(reason == super::keywords::NOT_SUPPORTED
                && kw.is_some_and(|k| k.eq_ignore_ascii_case(keyword)))
        }
    }
}

impl RuleProblem {
    /// Whether Suricata would reject the rule as well, as far as can be told: the rule
    /// does not parse, names a keyword or protocol Suricata does not know, has no sid or
    /// an unknown action, or repeats a signature id. A rule that uses a keyword or
    /// protocol Suricata has and Meerkat does not implement, or a value of a Suricata
    /// keyword that Meerkat does not take, is not an error of the ruleset (`-T` warns).
    pub fn is_error(&self) -> bool {
        if let Some(proto) = self
            .reason
            .strip_prefix("protocol `")
            .and_then(|r| r.strip_suffix("` is not supported"))
        {
            return !is_protocol(proto);
        }
        match &self.keyword {
            Some(k) if self.reason == super::keywords::NOT_SUPPORTED => !is_keyword(k),
            Some(k) if k == "sid" => self.reason == "duplicate signature id",
            // Any other problem with a keyword Suricata has: a value or a combination
            // Meerkat does not take.
            Some(k) => !is_keyword(k),
            // The rule's structure or header.
            None => true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{load_str, tests_ctx};

    #[test]
    fn keyword_list_and_support() {
        let ctx = tests_ctx();
        assert!(keywords().count() > 300);
        assert!(is_keyword("content") && is_keyword("HTTP.URI") && !is_keyword("frobnicate"));
        for k in [
            "content",
            "pcre",
            "http.uri",
            "flowbits",
            "sid",
            "nocase",
            "dns.query",
        ] {
            assert!(meerkat_supports(k, &ctx), "{k}");
        }
        assert!(!meerkat_supports("frobnicate", &ctx));
        // Every keyword the list names is either supported or not, never a panic.
        let supported = keywords()
            .filter(|(k, _)| meerkat_supports(k, &ctx))
            .count();
        assert!(supported > 150, "{supported}");
    }

    #[test]
    fn errors_are_what_suricata_rejects_too() {
        let l = load_str(
            "alert tcp any any -> any any (content:\"a\"; frobnicate; sid:1;)\n\
             alert tcp any any -> any any (content:\"a\"; asn1:bitstring_overflow; sid:2;)\n\
             alert smtp any any -> any any (content:\"a\"; sid:3;)\n\
             alert nosuch any any -> any any (content:\"a\"; sid:4;)\n\
             alert tcp any any -> any any (content:\"a\";)\n\
             alert tcp any any -> any any (content:\"b\"; sid:6;)\n\
             alert tcp any any -> any any (content:\"c\"; sid:6;)\n\
             alert tcp any any -> any any (content:\"a\"; sid:8\n",
            &tests_ctx(),
        );
        let verdicts: Vec<(usize, bool)> =
            l.problems.iter().map(|p| (p.line, p.is_error())).collect();
        // asn1 (Suricata has it; Meerkat does not) and smtp rules are not errors.
        let smtp_supported = !l.problems.iter().any(|p| p.line == 3);
        let mut want = vec![
            (1, true),
            (2, false),
            (4, true),
            (5, true),
            (7, true),
            (8, true),
        ];
        if !smtp_supported {
            want.insert(2, (3, false));
        }
        assert_eq!(verdicts, want, "{:?}", l.problems);
    }
}
