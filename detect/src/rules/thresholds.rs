//! threshold.config: the sensor's own `suppress`, `threshold`/`event_filter` and
//! `rate_filter` entries, applied to the loaded rules as Suricata applies them.
//!
//! # Syntax (Suricata's, options in this order)
//!
//! ```text
//! suppress gen_id G, sig_id S
//! suppress gen_id G, sig_id S, track by_src|by_dst|by_either, ip <addr|cidr|[list]|$VAR>
//! threshold gen_id G, sig_id S, type limit|threshold|both, track by_src|by_dst|by_rule|by_both|by_flow, count N, seconds T
//! threshold gen_id G, sig_id S, type backoff, track by_flow, count N, multiplier M
//! event_filter ...                       (same as threshold)
//! rate_filter gen_id G, sig_id S, track by_src|by_dst|by_rule|by_both, count N, seconds T, new_action alert|drop|pass|reject|log|sdrop, timeout T
//! ```
//!
//! A line ending in `\` continues on the next. `sig_id 0` applies an entry to every rule
//! (of `gen_id`, or of all generators with `gen_id 0`); `gen_id 0` with another sid is an
//! error. `type backoff` is Meerkat's addition (Suricata 8 has it in rules only).
//!
//! # Precedence (Suricata's)
//!
//! Entries are applied in file order. A rule keeps at most one threshold-like entry (its
//! own `threshold` or `detection_filter`, or one from this file):
//! - a `threshold`/`event_filter` for one sid replaces whatever the rule has;
//! - a `rate_filter` for one sid, and any global (sid 0) `threshold`/`rate_filter`, is
//!   not applied to a rule that already has one (the rule's own wins);
//! - `suppress` combines with everything: without `track` the rule never alerts,
//!   with addresses it does not alert for them; its other actions (flowbits, ...) still
//!   happen.

use std::path::{Path, PathBuf};

use super::addr;
use super::classification::ConfigFileProblem;
use super::keywords::backoff_checked;
use super::{
    Action, RateFilter, Rule, RuleContext, Suppress, SuppressTrack, Threshold, ThresholdKind, Track,
};

/// Where threshold.config is found without `threshold-file` (Suricata's is
/// `/etc/suricata/threshold.config`).
pub const DEFAULT_THRESHOLD_FILE: &str = "/etc/meerkat/threshold.config";
/// Lines read at most.
pub const MAX_LINES: usize = 1_000_000;
/// Largest file read, in bytes.
pub const MAX_FILE_BYTES: u64 = 64 << 20;
/// Entries kept at most; the lines after are reported and skipped.
pub const MAX_ENTRIES: usize = 100_000;
/// Longest logical line (continuations joined), in bytes (Suricata's line buffer).
pub const MAX_LINE: usize = 8192;

/// The threshold file a rule context reads each time rules load (start and reload).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThresholdFile {
    pub path: PathBuf,
    /// Named by `threshold-file` (a missing file is then worth a warning), rather than
    /// the default path (missing: no entries).
    pub explicit: bool,
}

impl ThresholdFile {
    /// The file a config names, or the default path.
    pub fn of(path: Option<&Path>) -> ThresholdFile {
        match path {
            Some(p) => ThresholdFile {
                path: p.to_path_buf(),
                explicit: true,
            },
            None => ThresholdFile {
                path: PathBuf::from(DEFAULT_THRESHOLD_FILE),
                explicit: false,
            },
        }
    }

    /// Reads and parses the file: `Ok(None)` when it is absent at the default path; a
    /// file that cannot be read at an explicit path is an error (the caller warns and
    /// goes on without entries, as Suricata does).
    pub fn read(&self, ctx: &RuleContext) -> Result<Option<Parsed>, String> {
        let read = std::fs::metadata(&self.path).and_then(|m| {
            if m.len() > MAX_FILE_BYTES {
                return Err(std::io::Error::other(format!(
                    "{} bytes, more than the {MAX_FILE_BYTES} read",
                    m.len()
                )));
            }
            std::fs::read_to_string(&self.path)
        });
        match read {
            Ok(text) => Ok(Some(parse(&text, &self.path, ctx))),
            Err(e) if !self.explicit && e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!(
                "cannot read threshold file {}: {e}",
                self.path.display()
            )),
        }
    }
}

/// A parsed file: its entries, and the lines that are not entries.
pub type Parsed = (Vec<Entry>, Vec<ConfigFileProblem>);

/// What an entry does.
#[derive(Debug, Clone)]
pub enum What {
    /// `suppress` without `track`: the rule never alerts.
    SuppressAll,
    Suppress(Suppress),
    Threshold(Threshold),
    RateFilter(RateFilter),
}

/// One line of threshold.config.
#[derive(Debug, Clone)]
pub struct Entry {
    pub line: usize,
    pub gid: u32,
    /// 0: every rule (of `gid`, or of every generator when `gid` is 0 too).
    pub sid: u64,
    pub what: What,
}

/// Parses threshold.config text: the entries, and a problem for each line that is not
/// one (those lines are skipped; the others load).
pub fn parse(text: &str, file: &Path, ctx: &RuleContext) -> Parsed {
    let mut entries = Vec::new();
    let mut problems = Vec::new();
    let mut pending = String::new();
    let mut first = 0;
    // Inside the continuation lines of an over-long line (skipped with it).
    let mut skipping = false;
    // A blank line after the last ends a continuation the file ends in.
    let lines = text.lines().take(MAX_LINES).chain(std::iter::once(""));
    for (i, raw) in lines.enumerate() {
        let line = raw.trim_end_matches('\r');
        let (part, more) = match line.trim_end().strip_suffix('\\') {
            Some(p) => (p, true),
            None => (line, false),
        };
        if skipping {
            skipping = more;
            continue;
        }
        if pending.is_empty() {
            first = i + 1;
        }
        if pending.len() + part.len() > MAX_LINE {
            problems.push(ConfigFileProblem {
                file: file.to_path_buf(),
                line: first,
                reason: format!("line longer than {MAX_LINE} bytes"),
            });
            pending.clear();
            skipping = more;
            continue;
        }
        pending.push_str(part);
        if more {
            continue;
        }
        let logical = std::mem::take(&mut pending);
        let t = logical.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        if entries.len() >= MAX_ENTRIES {
            problems.push(ConfigFileProblem {
                file: file.to_path_buf(),
                line: first,
                reason: format!("more than {MAX_ENTRIES} entries: the rest are skipped"),
            });
            break;
        }
        match parse_line(t, ctx) {
            Ok((gid, sid, what)) => entries.push(Entry {
                line: first,
                gid,
                sid,
                what,
            }),
            Err(reason) => problems.push(ConfigFileProblem {
                file: file.to_path_buf(),
                line: first,
                reason,
            }),
        }
    }
    (entries, problems)
}

/// A cursor over one line: words, numbers and commas, blanks between them optional.
struct Cur<'a>(&'a str);

impl<'a> Cur<'a> {
    fn skip_ws(&mut self) {
        self.0 = self.0.trim_start();
    }

    fn word(&mut self) -> &'a str {
        self.skip_ws();
        let end = self
            .0
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(self.0.len());
        let (w, rest) = self.0.split_at(end);
        self.0 = rest;
        w
    }

    /// `name <value word>`.
    fn option(&mut self, name: &str) -> Result<&'a str, String> {
        let w = self.word();
        if w != name {
            return Err(if w.is_empty() {
                format!("expected `{name}`")
            } else {
                format!("expected `{name}`, found `{w}`")
            });
        }
        self.skip_ws();
        let end = self
            .0
            .find(|c: char| c == ',' || c.is_whitespace())
            .unwrap_or(self.0.len());
        let (v, rest) = self.0.split_at(end);
        self.0 = rest;
        if v.is_empty() {
            return Err(format!("`{name}` needs a value"));
        }
        Ok(v)
    }

    fn number(&mut self, name: &str) -> Result<u32, String> {
        let v = self.option(name)?;
        v.parse::<u32>()
            .map_err(|_| format!("bad {name} `{v}`: expected a number up to {}", u32::MAX))
    }

    fn comma(&mut self) -> Result<(), String> {
        self.skip_ws();
        match self.0.strip_prefix(',') {
            Some(r) => {
                self.0 = r;
                Ok(())
            }
            None => Err(format!("expected `,` before `{}`", self.0.trim())),
        }
    }

    fn at_end(&mut self) -> bool {
        self.skip_ws();
        self.0.is_empty()
    }

    fn end(&mut self) -> Result<(), String> {
        if self.at_end() {
            Ok(())
        } else {
            Err(format!("unexpected `{}` at the end", self.0))
        }
    }
}

fn track(v: &str, allowed: &[&str]) -> Result<Track, String> {
    if !allowed.contains(&v) {
        return Err(format!(
            "unknown track `{v}` (expected {})",
            allowed.join(", ")
        ));
    }
    Ok(match v {
        "by_src" => Track::BySrc,
        "by_dst" => Track::ByDst,
        "by_rule" => Track::ByRule,
        "by_both" => Track::ByBoth,
        _ => Track::ByFlow,
    })
}

/// One logical line: (gid, sid, what).
fn parse_line(line: &str, ctx: &RuleContext) -> Result<(u32, u64, What), String> {
    let mut c = Cur(line);
    let kind = c.word();
    if !matches!(
        kind,
        "suppress" | "threshold" | "event_filter" | "rate_filter"
    ) {
        return Err(format!(
            "unknown entry `{}` (expected suppress, threshold, event_filter or rate_filter)",
            if kind.is_empty() { line } else { kind }
        ));
    }
    let gid = c.number("gen_id")?;
    c.comma()?;
    let sid = c.number("sig_id")?;
    if gid == 0 && sid != 0 {
        return Err(format!(
            "gen_id 0 with sig_id {sid}: use gen_id 1 (or sig_id 0 for every rule)"
        ));
    }
    let sid = u64::from(sid);
    let what = match kind {
        "suppress" => {
            if c.at_end() {
                What::SuppressAll
            } else {
                c.comma()?;
                let t = match c.option("track")? {
                    "by_src" => SuppressTrack::BySrc,
                    "by_dst" => SuppressTrack::ByDst,
                    "by_either" => SuppressTrack::ByEither,
                    other => {
                        return Err(format!(
                            "unknown track `{other}` (expected by_src, by_dst, by_either)"
                        ));
                    }
                };
                c.comma()?;
                if c.word() != "ip" {
                    return Err("suppress with track needs `ip <address list>`".to_string());
                }
                let list = c.0.trim();
                if list.is_empty() {
                    return Err("`ip` needs an address, network, list or variable".to_string());
                }
                let expr = addr::parse_addr(list, &ctx.address_vars)
                    .map_err(|e| format!("bad ip `{list}`: {e}"))?;
                What::Suppress(Suppress {
                    track: t,
                    ips: std::sync::Arc::new(addr::IpSet::from_expr(&expr)),
                })
            }
        }
        "threshold" | "event_filter" => {
            c.comma()?;
            let ty = c.option("type")?;
            let kind = match ty {
                "limit" => ThresholdKind::Limit,
                "threshold" => ThresholdKind::Threshold,
                "both" => ThresholdKind::Both,
                "backoff" => ThresholdKind::Backoff { multiplier: 0 },
                other => {
                    return Err(format!(
                        "unknown type `{other}` (expected limit, threshold, both, backoff)"
                    ));
                }
            };
            c.comma()?;
            let tr = track(
                c.option("track")?,
                &["by_src", "by_dst", "by_rule", "by_both", "by_flow"],
            )?;
            c.comma()?;
            let count = c.number("count")?;
            c.comma()?;
            let (seconds, multiplier) = if matches!(kind, ThresholdKind::Backoff { .. }) {
                (None, Some(c.number("multiplier")?))
            } else {
                (Some(c.number("seconds")?), None)
            };
            if multiplier == Some(0) {
                return Err("multiplier must be at least 1".to_string());
            }
            c.end()?;
            What::Threshold(backoff_checked(kind, tr, count, seconds, multiplier)?)
        }
        _ => {
            c.comma()?;
            let tr = track(
                c.option("track")?,
                &["by_src", "by_dst", "by_rule", "by_both"],
            )?;
            c.comma()?;
            let count = c.number("count")?;
            c.comma()?;
            let seconds = c.number("seconds")?;
            c.comma()?;
            let new_action = match c.option("new_action")? {
                "alert" => Some(Action::Alert),
                "drop" => Some(Action::Drop),
                "pass" => Some(Action::Pass),
                "reject" => Some(Action::Reject),
                // Accepted and without effect, as in Suricata.
                "log" | "sdrop" => None,
                other => {
                    return Err(format!(
                        "unknown new_action `{other}` (expected alert, drop, pass, reject)"
                    ));
                }
            };
            c.comma()?;
            let timeout = c.number("timeout")?;
            c.end()?;
            What::RateFilter(RateFilter {
                track: tr,
                count,
                seconds,
                new_action,
                timeout,
            })
        }
    };
    if !matches!(what, What::Suppress(_)) {
        c.end()?;
    }
    Ok((gid, sid, what))
}

/// Whether a rule has its one threshold-like entry already.
fn has_filter(r: &Rule) -> bool {
    r.threshold.is_some() || r.detection_filter.is_some() || r.rate_filter.is_some()
}

/// Applies entries to rules in file order (see the module docs for precedence). An entry
/// for one sid that no loaded rule has, or a `rate_filter` that a rule's own threshold
/// takes precedence over, does nothing and is returned as a warning (as Suricata warns).
pub fn apply(entries: &[Entry], rules: &mut [Rule], file: &Path) -> Vec<ConfigFileProblem> {
    let mut problems = Vec::new();
    let index: std::collections::HashMap<(u32, u64), usize> = rules
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.gid, r.sid), i))
        .collect();
    for e in entries {
        let problem = |reason: String| ConfigFileProblem {
            file: file.to_path_buf(),
            line: e.line,
            reason,
        };
        if e.sid == 0 {
            for r in rules.iter_mut().filter(|r| e.gid == 0 || r.gid == e.gid) {
                match &e.what {
                    What::SuppressAll => r.noalert = true,
                    What::Suppress(s) => r.suppress.push(s.clone()),
                    // The rule's own (or an earlier) threshold takes precedence.
                    What::Threshold(_) | What::RateFilter(_) if has_filter(r) => {}
                    What::Threshold(t) => r.threshold = Some(*t),
                    What::RateFilter(f) => r.rate_filter = Some(*f),
                }
            }
            continue;
        }
        let Some(&i) = index.get(&(e.gid, e.sid)) else {
            problems.push(problem(format!(
                "no rule with gen_id {} sig_id {} is loaded",
                e.gid, e.sid
            )));
            continue;
        };
        let r = &mut rules[i];
        match &e.what {
            What::SuppressAll => r.noalert = true,
            What::Suppress(s) => r.suppress.push(s.clone()),
            What::Threshold(t) => {
                r.detection_filter = None;
                r.rate_filter = None;
                r.threshold = Some(*t);
            }
            What::RateFilter(_) if has_filter(r) => problems.push(problem(format!(
                "rate_filter not applied: rule {}:{} has a threshold or detection_filter, \
                 which takes precedence",
                e.gid, e.sid
            ))),
            What::RateFilter(f) => r.rate_filter = Some(*f),
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::IpAddr;

    /// `$HOME_NET` is the default `[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]`.
    fn ctx() -> RuleContext {
        crate::rules::tests_ctx()
    }

    fn one(line: &str) -> Result<(u32, u64, What), String> {
        let (e, p) = parse(line, Path::new("t.config"), &ctx());
        match (e.as_slice(), p.as_slice()) {
            ([e], []) => Ok((e.gid, e.sid, e.what.clone())),
            ([], [p]) => Err(p.reason.clone()),
            other => panic!("{other:?}"),
        }
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn good_lines() {
        assert!(matches!(
            one("suppress gen_id 1, sig_id 2002087").unwrap(),
            (1, 2002087, What::SuppressAll)
        ));
        let (_, _, w) =
            one("suppress gen_id 1, sig_id 9, track by_src, ip [10.0.0.1, 192.168.1.0/24]")
                .unwrap();
        let What::Suppress(s) = w else { panic!() };
        assert_eq!(s.track, SuppressTrack::BySrc);
        assert!(s.ips.matches(&ip("10.0.0.1")) && s.ips.matches(&ip("192.168.1.77")));
        assert!(!s.ips.matches(&ip("10.0.0.2")));
        let (_, _, w) = one("suppress gen_id 0, sig_id 0, track by_either, ip $HOME_NET").unwrap();
        let What::Suppress(s) = w else { panic!() };
        assert_eq!(s.track, SuppressTrack::ByEither);
        assert!(s.ips.matches(&ip("10.9.9.9")) && !s.ips.matches(&ip("8.8.8.8")));
        let (_, _, w) = one("suppress gen_id 1, sig_id 3, track by_dst, ip fe80::/10").unwrap();
        let What::Suppress(s) = w else { panic!() };
        assert!(s.ips.matches(&ip("fe80::1")));
        assert!(matches!(
            one("threshold gen_id 1, sig_id 5, type limit, track by_src, count 2, seconds 60")
                .unwrap(),
            (
                1,
                5,
                What::Threshold(Threshold {
                    kind: ThresholdKind::Limit,
                    track: Track::BySrc,
                    count: 2,
                    seconds: 60
                })
            )
        ));
        assert!(matches!(
            one("event_filter gen_id 1,sig_id 5,type both,track by_flow,count 3,seconds 5")
                .unwrap(),
            (
                1,
                5,
                What::Threshold(Threshold {
                    kind: ThresholdKind::Both,
                    track: Track::ByFlow,
                    count: 3,
                    seconds: 5
                })
            )
        ));
        assert!(matches!(
            one(
                "threshold gen_id 1, sig_id 5, type backoff, track by_flow, count 1, multiplier 10"
            )
            .unwrap(),
            (
                1,
                5,
                What::Threshold(Threshold {
                    kind: ThresholdKind::Backoff { multiplier: 10 },
                    count: 1,
                    ..
                })
            )
        ));
        assert!(matches!(
            one("rate_filter gen_id 1, sig_id 1000, track by_rule, count 100, seconds 60, \\\n  new_action drop, timeout 30").unwrap(),
            (1, 1000, What::RateFilter(RateFilter { track: Track::ByRule, count: 100, seconds: 60, new_action: Some(Action::Drop), timeout: 30 }))
        ));
        assert!(matches!(
            one("rate_filter gen_id 1, sig_id 1, track by_src, count 1, seconds 1, new_action sdrop, timeout 1").unwrap(),
            (_, _, What::RateFilter(RateFilter { new_action: None, .. }))
        ));
        assert!(matches!(
            one("threshold gen_id 0, sig_id 0, type threshold, track by_dst, count 10, seconds 10")
                .unwrap(),
            (0, 0, What::Threshold(_))
        ));
    }

    #[test]
    fn bad_lines_are_reported_with_their_line_and_the_rest_load() {
        let text = "# tuning\n\
            \n\
            suppress gen_id 1, sig_id 1\n\
            bogus line here\n\
            threshold gen_id 1, sig_id 2, track by_src, type limit, seconds 60, count 3\n\
            threshold gen_id 1, sig_id 2, type sometimes, track by_src, count 3, seconds 6\n\
            threshold gen_id 1, sig_id 2, type limit, track by_either, count 3, seconds 6\n\
            threshold gen_id 1, sig_id 2, type limit, track by_src, count 3\n\
            threshold gen_id 1, sig_id 2, type limit, track by_src, count -3, seconds 6\n\
            threshold gen_id 1, sig_id 2, type backoff, track by_src, count 1, multiplier 2\n\
            threshold gen_id 1, sig_id 2, type limit, track by_src, count 1, seconds 6, extra 1\n\
            suppress gen_id 0, sig_id 7\n\
            suppress gen_id 1, sig_id 7, track by_src\n\
            suppress gen_id 1, sig_id 7, track by_src, ip 10.0.0.1/33\n\
            suppress gen_id 1, sig_id 7, track by_rule, ip 10.0.0.1\n\
            rate_filter gen_id 1, sig_id 8, track by_src, count 1, seconds 1, new_action block, timeout 1\n\
            rate_filter gen_id 1, sig_id 8, track by_src, count 1, seconds 1, new_action drop\n\
            threshold gen_id 1, sig_id 99999999999, type limit, track by_src, count 1, seconds 6\n\
            threshold gen_id 1, sig_id 3, type limit, track by_src, \\\n  count 1, seconds 6\n";
        let (entries, problems) = parse(text, Path::new("/etc/t.config"), &ctx());
        let lines: Vec<usize> = entries.iter().map(|e| e.line).collect();
        assert_eq!(lines, vec![3, 19]);
        let got: Vec<(usize, &str)> = problems
            .iter()
            .map(|p| (p.line, p.reason.as_str()))
            .collect();
        let want_lines: Vec<usize> = (4..=18).collect();
        assert_eq!(
            got.iter().map(|g| g.0).collect::<Vec<_>>(),
            want_lines,
            "{got:#?}"
        );
        for (line, needle) in [
            (4, "unknown entry `bogus`"),
            (5, "expected `type`, found `track`"),
            (6, "unknown type `sometimes`"),
            (7, "unknown track `by_either`"),
            (8, "expected `,`"),
            (9, "bad count"),
            (10, "only supported for track by_flow"),
            (11, "unexpected `, extra 1`"),
            (12, "gen_id 0 with sig_id 7"),
            (13, "expected `,`"),
            (14, "bad ip `10.0.0.1/33`"),
            (15, "unknown track `by_rule`"),
            (16, "unknown new_action `block`"),
            (17, "expected `,`"),
            (18, "bad sig_id `99999999999`"),
        ] {
            let p = problems.iter().find(|p| p.line == line).unwrap();
            assert!(p.reason.contains(needle), "line {line}: {}", p.reason);
            assert!(
                p.to_string()
                    .starts_with(&format!("/etc/t.config:{line}: "))
            );
        }
    }

    #[test]
    fn over_long_lines_are_refused() {
        let long = format!(
            "suppress gen_id 1, sig_id 1, track by_src, ip [{}]\n",
            "10.0.0.1,".repeat(1000)
        );
        let (e, p) = parse(&long, Path::new("t"), &ctx());
        assert!(e.is_empty());
        assert!(p[0].reason.contains("longer than"), "{p:?}");
        // An over-long continued line is skipped whole; the next line loads.
        let cont = format!(
            "{}\\\n more, more\nsuppress gen_id 1, sig_id 2\n",
            "x".repeat(MAX_LINE + 1)
        );
        let (e, p) = parse(&cont, Path::new("t"), &ctx());
        assert_eq!((e.len(), e[0].line, p.len()), (1, 3, 1), "{p:?}");
        // A file that ends in a continued line: the line still counts.
        let (e, p) = parse(
            "suppress gen_id 1, \\\n sig_id 2 \\",
            Path::new("t"),
            &ctx(),
        );
        assert_eq!((e.len(), e[0].sid, p.len()), (1, 2, 0), "{p:?}");
    }

    #[test]
    fn entries_are_bounded() {
        let many = "suppress gen_id 1, sig_id 1\n".repeat(MAX_ENTRIES + 5);
        let (e, p) = parse(&many, Path::new("t"), &ctx());
        assert_eq!(e.len(), MAX_ENTRIES);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].line, MAX_ENTRIES + 1);
    }

    fn rules(text: &str) -> Vec<Rule> {
        let l = crate::rules::load_str(text, &ctx());
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        l.rules
    }

    #[test]
    fn precedence_follows_suricata() {
        let mut rs = rules(
            "alert ip any any -> any any (sid:1;)\n\
             alert ip any any -> any any (threshold:type limit, track by_src, count 5, seconds 60; sid:2;)\n\
             alert ip any any -> any any (detection_filter:track by_src, count 5, seconds 60; sid:3;)\n\
             alert ip any any -> any any (threshold:type limit, track by_src, count 5, seconds 60; sid:4;)\n\
             alert ip any any -> any any (sid:5;)\n\
             alert ip any any -> any any (gid:2; sid:6;)\n",
        );
        let (entries, p) = parse(
            "threshold gen_id 1, sig_id 2, type limit, track by_dst, count 1, seconds 9\n\
             threshold gen_id 1, sig_id 3, type both, track by_src, count 1, seconds 9\n\
             rate_filter gen_id 1, sig_id 4, track by_src, count 1, seconds 60, new_action drop, timeout 9\n\
             threshold gen_id 1, sig_id 0, type limit, track by_src, count 7, seconds 60\n\
             rate_filter gen_id 1, sig_id 5, track by_src, count 3, seconds 60, new_action alert, timeout 9\n\
             threshold gen_id 1, sig_id 5, type threshold, track by_rule, count 2, seconds 60\n\
             suppress gen_id 0, sig_id 0, track by_src, ip 1.2.3.4\n\
             suppress gen_id 2, sig_id 0\n\
             suppress gen_id 1, sig_id 77\n",
            Path::new("t"),
            &ctx(),
        );
        assert!(p.is_empty(), "{p:?}");
        let p = apply(&entries, &mut rs, Path::new("t"));
        // The rate_filter of sid 4 loses to its own threshold; sid 77 is not loaded.
        assert_eq!(
            p.iter().map(|p| p.line).collect::<Vec<_>>(),
            vec![3, 5, 9],
            "{p:?}"
        );
        let t = |i: usize| rs[i].threshold.map(|t| (t.kind, t.track, t.count));
        assert_eq!(
            t(0),
            Some((ThresholdKind::Limit, Track::BySrc, 7)),
            "global"
        );
        assert_eq!(
            t(1),
            Some((ThresholdKind::Limit, Track::ByDst, 1)),
            "replaced"
        );
        assert_eq!(t(2), Some((ThresholdKind::Both, Track::BySrc, 1)));
        assert!(
            rs[2].detection_filter.is_none(),
            "detection_filter replaced"
        );
        assert_eq!(
            t(3),
            Some((ThresholdKind::Limit, Track::BySrc, 5)),
            "own kept"
        );
        assert!(rs[3].rate_filter.is_none());
        // sid 5: the global threshold came first, so the rate_filter is not applied; the
        // sid's own threshold line then replaces the global one.
        assert_eq!(t(4), Some((ThresholdKind::Threshold, Track::ByRule, 2)));
        assert!(rs[4].rate_filter.is_none());
        assert_eq!(t(5), None, "gid 2 is not gid 1");
        assert!(rs.iter().all(|r| r.suppress.len() == 1));
        assert!(rs[5].noalert && rs[..5].iter().all(|r| !r.noalert));
    }
}
