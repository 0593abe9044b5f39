//! Suricata rules: parsing rule files into [`Rule`]s.
//!
//! A rule that does not parse, or that uses a keyword this engine does not implement, is
//! reported as a [`RuleProblem`] (file, line, sid, keyword, reason) and skipped; the rest
//! load. A keyword is never silently ignored: a rule whose meaning cannot be honoured is
//! not loaded.

pub mod addr;
pub mod classification;
pub mod parse;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use meerkat_config::VarValue;

pub use addr::{AddrExpr, PortExpr};
pub use classification::Classification;

/// Rule actions. In IDS mode `drop` and `reject` alert like `alert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Alert,
    Pass,
    Drop,
    Reject,
}

/// `->` or `<>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToDst,
    Both,
}

/// The protocol field of the header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    Ip,
    Tcp,
    Udp,
    /// ICMP and ICMPv6.
    Icmp,
    Icmpv4,
    Icmpv6,
}

impl Proto {
    pub fn matches(self, ip_proto: u8) -> bool {
        match self {
            Proto::Ip => true,
            Proto::Tcp => ip_proto == 6,
            Proto::Udp => ip_proto == 17,
            Proto::Icmp => ip_proto == 1 || ip_proto == 58,
            Proto::Icmpv4 => ip_proto == 1,
            Proto::Icmpv6 => ip_proto == 58,
        }
    }
}

/// A `content` match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content {
    /// The bytes to find (lowercased when `nocase`).
    pub pattern: Vec<u8>,
    pub nocase: bool,
    /// `content:!"..."`: the rule matches only if the bytes are absent.
    pub negated: bool,
}

/// A loaded rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub action: Action,
    pub proto: Proto,
    pub src: AddrExpr,
    pub sport: PortExpr,
    pub direction: Direction,
    pub dst: AddrExpr,
    pub dport: PortExpr,
    pub gid: u32,
    pub sid: u64,
    pub rev: u32,
    pub msg: String,
    pub classtype: Option<String>,
    /// Classtype description (EVE `category`), empty when none.
    pub category: String,
    /// Priority (EVE `severity`).
    pub severity: u32,
    pub metadata: Vec<(String, String)>,
    pub references: Vec<String>,
    pub contents: Vec<Content>,
    /// The rule's text, for EVE `rule` when asked.
    pub text: String,
    pub file: PathBuf,
    pub line: usize,
}

/// Why a rule was not loaded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleProblem {
    pub file: PathBuf,
    pub line: usize,
    pub sid: Option<u64>,
    /// The keyword at fault, when one is.
    pub keyword: Option<String>,
    pub reason: String,
}

impl std::fmt::Display for RuleProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)?;
        if let Some(sid) = self.sid {
            write!(f, " sid {sid}")?;
        }
        if let Some(k) = &self.keyword {
            write!(f, " keyword `{k}`")?;
        }
        write!(f, ": {}", self.reason)
    }
}

/// What goes into parsing: variables and the classtype table.
#[derive(Debug, Clone)]
pub struct RuleContext {
    pub address_vars: BTreeMap<String, VarValue>,
    pub port_vars: BTreeMap<String, VarValue>,
    pub classification: Classification,
}

impl RuleContext {
    pub fn from_config(config: &meerkat_config::Config) -> Result<RuleContext, String> {
        let classification = match &config.classification_file {
            Some(p) => Classification::from_file(p)?,
            None => Classification::default(),
        };
        Ok(RuleContext {
            address_vars: config.vars.address_groups.clone(),
            port_vars: config.vars.port_groups.clone(),
            classification,
        })
    }
}

/// The result of loading rule files.
#[derive(Debug, Default)]
pub struct Loaded {
    pub rules: Vec<Rule>,
    pub problems: Vec<RuleProblem>,
}

/// A problem while parsing one rule: (keyword at fault, reason).
type Fail = (Option<String>, String);

fn fail(kw: &str, reason: impl Into<String>) -> Fail {
    (Some(kw.to_string()), reason.into())
}

/// Decodes a content string: `abc|41 42|def` with hex between pipes.
pub fn decode_content(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len());
    let mut in_hex = false;
    let mut hex_digit: Option<u8> = None;
    for c in s.chars() {
        if c == '|' {
            if hex_digit.is_some() {
                return Err("odd number of hex digits".to_string());
            }
            in_hex = !in_hex;
            continue;
        }
        if in_hex {
            if c.is_ascii_whitespace() {
                if hex_digit.is_some() {
                    return Err("hex byte split by a space".to_string());
                }
                continue;
            }
            let d = c
                .to_digit(16)
                .ok_or_else(|| format!("`{c}` is not a hex digit"))? as u8;
            match hex_digit.take() {
                Some(hi) => out.push(hi << 4 | d),
                None => hex_digit = Some(d),
            }
        } else {
            let mut buf = [0u8; 4];
            out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
        }
    }
    if in_hex {
        return Err("unterminated hex section (missing `|`)".to_string());
    }
    if out.is_empty() {
        return Err("empty content".to_string());
    }
    Ok(out)
}

fn parse_number<T: std::str::FromStr>(kw: &str, v: Option<&str>) -> Result<T, Fail> {
    let v = v.ok_or_else(|| fail(kw, "needs a value"))?;
    parse::unquote(v)
        .trim()
        .parse()
        .map_err(|_| fail(kw, format!("`{v}` is not a number")))
}

/// Parses one rule's text.
pub fn parse_rule(text: &str, ctx: &RuleContext) -> Result<Rule, (Option<u64>, Fail)> {
    let raw = parse::parse(text).map_err(|e| (None, (None, e)))?;
    // Find the sid first so that every problem can name it.
    let sid: Option<u64> = raw
        .options
        .iter()
        .find(|o| o.keyword == "sid")
        .and_then(|o| o.value)
        .and_then(|v| parse::unquote(v).trim().parse().ok());
    build(&raw, text, ctx).map_err(|f| (sid, f))
}

fn build(raw: &parse::RawRule<'_>, text: &str, ctx: &RuleContext) -> Result<Rule, Fail> {
    let action = match raw.action {
        "alert" => Action::Alert,
        "pass" => Action::Pass,
        "drop" => Action::Drop,
        "reject" | "rejectsrc" | "rejectdst" | "rejectboth" => Action::Reject,
        other => return Err((None, format!("unknown action `{other}`"))),
    };
    let proto = match raw.proto.to_ascii_lowercase().as_str() {
        "ip" | "pkthdr" => Proto::Ip,
        "tcp" => Proto::Tcp,
        "udp" => Proto::Udp,
        "icmp" => Proto::Icmp,
        "icmpv4" => Proto::Icmpv4,
        "icmpv6" => Proto::Icmpv6,
        other => {
            return Err((None, format!("protocol `{other}` is not supported")));
        }
    };
    let direction = match raw.direction {
        "->" => Direction::ToDst,
        "<>" => Direction::Both,
        other => return Err((None, format!("`{other}` is not a direction (-> or <>)"))),
    };
    let src = addr::parse_addr(raw.src, &ctx.address_vars)
        .map_err(|e| (None, format!("source address: {e}")))?;
    let dst = addr::parse_addr(raw.dst, &ctx.address_vars)
        .map_err(|e| (None, format!("destination address: {e}")))?;
    let sport = addr::parse_ports(raw.sport, &ctx.port_vars)
        .map_err(|e| (None, format!("source port: {e}")))?;
    let dport = addr::parse_ports(raw.dport, &ctx.port_vars)
        .map_err(|e| (None, format!("destination port: {e}")))?;

    let mut rule = Rule {
        action,
        proto,
        src,
        sport,
        direction,
        dst,
        dport,
        gid: 1,
        sid: 0,
        rev: 0,
        msg: String::new(),
        classtype: None,
        category: String::new(),
        severity: classification::DEFAULT_PRIORITY,
        metadata: Vec::new(),
        references: Vec::new(),
        contents: Vec::new(),
        text: text.to_string(),
        file: PathBuf::new(),
        line: 0,
    };
    let mut have_sid = false;
    let mut priority: Option<u32> = None;
    for opt in &raw.options {
        let kw = opt.keyword;
        let v = opt.value;
        match kw {
            "msg" => rule.msg = parse::unquote(v.ok_or_else(|| fail(kw, "needs a value"))?),
            "sid" => {
                rule.sid = parse_number(kw, v)?;
                have_sid = true;
            }
            "rev" => rule.rev = parse_number(kw, v)?,
            "gid" => rule.gid = parse_number(kw, v)?,
            "priority" => priority = Some(parse_number(kw, v)?),
            "classtype" => {
                let name = parse::unquote(v.ok_or_else(|| fail(kw, "needs a value"))?);
                let (desc, prio) = ctx
                    .classification
                    .get(name.trim())
                    .ok_or_else(|| fail(kw, format!("unknown classtype `{name}`")))?;
                rule.category = desc.to_string();
                rule.severity = prio;
                rule.classtype = Some(name.trim().to_string());
            }
            "reference" => {
                let r = parse::unquote(v.ok_or_else(|| fail(kw, "needs a value"))?);
                let (kind, val) = r
                    .split_once(',')
                    .ok_or_else(|| fail(kw, "expected type,value"))?;
                rule.references
                    .push(format!("{}|{}", kind.trim(), val.trim()));
            }
            "metadata" => {
                let m = parse::unquote(v.ok_or_else(|| fail(kw, "needs a value"))?);
                for item in m.split(',') {
                    let item = item.trim();
                    if item.is_empty() {
                        continue;
                    }
                    let (k, val) = item.split_once(' ').unwrap_or((item, ""));
                    rule.metadata
                        .push((k.trim().to_string(), val.trim().to_string()));
                }
            }
            "content" => {
                let v = v.ok_or_else(|| fail(kw, "needs a value"))?.trim();
                let (negated, v) = match v.strip_prefix('!') {
                    Some(rest) => (true, rest.trim()),
                    None => (false, v),
                };
                if !(v.starts_with('"') && v.ends_with('"') && v.len() >= 2) {
                    return Err(fail(kw, "the value must be quoted"));
                }
                let pattern = decode_content(&parse::unquote(v)).map_err(|e| fail(kw, e))?;
                rule.contents.push(Content {
                    pattern,
                    nocase: false,
                    negated,
                });
            }
            "nocase" => {
                let c = rule
                    .contents
                    .last_mut()
                    .ok_or_else(|| fail(kw, "must follow a content"))?;
                c.nocase = true;
                c.pattern.make_ascii_lowercase();
            }
            other => {
                return Err(fail(other, "keyword not supported"));
            }
        }
    }
    if !have_sid {
        return Err((None, "no sid".to_string()));
    }
    if let Some(p) = priority {
        rule.severity = p;
    }
    Ok(rule)
}

/// Loads rule files. A file that cannot be read is an error; problems with single rules
/// are collected and the other rules load. Of two rules with the same (gid, sid) the one
/// with the higher rev is kept (the first on a tie), as Suricata does.
pub fn load_files(paths: &[PathBuf], ctx: &RuleContext) -> Result<Loaded, String> {
    let mut loaded = Loaded::default();
    let mut by_id: HashMap<(u32, u64), usize> = HashMap::new();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read rule file {}: {e}", path.display()))?;
        load_text(&text, path, ctx, &mut loaded, &mut by_id);
    }
    Ok(loaded)
}

fn load_text(
    text: &str,
    path: &Path,
    ctx: &RuleContext,
    loaded: &mut Loaded,
    by_id: &mut HashMap<(u32, u64), usize>,
) {
    for (line, rule_text) in parse::logical_lines(text) {
        match parse_rule(&rule_text, ctx) {
            Ok(mut rule) => {
                rule.file = path.to_path_buf();
                rule.line = line;
                let id = (rule.gid, rule.sid);
                match by_id.get(&id) {
                    Some(&i) if loaded.rules[i].rev < rule.rev => loaded.rules[i] = rule,
                    Some(_) => loaded.problems.push(RuleProblem {
                        file: path.to_path_buf(),
                        line,
                        sid: Some(rule.sid),
                        keyword: Some("sid".to_string()),
                        reason: "duplicate signature id".to_string(),
                    }),
                    None => {
                        by_id.insert(id, loaded.rules.len());
                        loaded.rules.push(rule);
                    }
                }
            }
            Err((sid, (keyword, reason))) => loaded.problems.push(RuleProblem {
                file: path.to_path_buf(),
                line,
                sid,
                keyword,
                reason,
            }),
        }
    }
}

/// Loads rules from text (tests, tools).
pub fn load_str(text: &str, ctx: &RuleContext) -> Loaded {
    let mut loaded = Loaded::default();
    load_text(
        text,
        Path::new("<text>"),
        ctx,
        &mut loaded,
        &mut HashMap::new(),
    );
    loaded
}

/// The context of the default config (tests).
#[cfg(test)]
pub(crate) fn tests_ctx() -> RuleContext {
    RuleContext::from_config(&meerkat_config::Config::default()).expect("default config")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ctx() -> RuleContext {
        tests_ctx()
    }

    #[test]
    fn parses_a_full_rule() {
        let r = parse_rule(
            r#"alert tcp $HOME_NET any -> $EXTERNAL_NET $HTTP_PORTS (msg:"ET TEST \"x\""; content:"GET|20|/"; nocase; content:!"bad"; classtype:trojan-activity; reference:url,example.com/x; metadata:created_at 2020_01_01, tag Foo; sid:2000001; rev:3;)"#,
            &ctx(),
        )
        .unwrap();
        assert_eq!(r.sid, 2000001);
        assert_eq!(r.rev, 3);
        assert_eq!(r.msg, "ET TEST \"x\"");
        assert_eq!(r.category, "A Network Trojan was detected");
        assert_eq!(r.severity, 1);
        assert_eq!(r.contents[0].pattern, b"get /");
        assert!(r.contents[0].nocase);
        assert!(r.contents[1].negated);
        assert_eq!(r.references, vec!["url|example.com/x"]);
        assert_eq!(
            r.metadata,
            vec![
                ("created_at".to_string(), "2020_01_01".to_string()),
                ("tag".to_string(), "Foo".to_string())
            ]
        );
    }

    #[test]
    fn problems_name_sid_keyword_and_line() {
        let l = load_str(
            "alert tcp any any -> any any (content:\"a\"; sid:1;)\n\
             alert tcp any any -> any any (content:\"a\"; frobnicate:3; sid:2;)\n\
             alert tcp any any -> any any (content:\"|4|\"; sid:3;)\n\
             alert tcp any any -> any any (msg:\"no sid\";)\n\
             alert foo any any -> any any (sid:5;)\n\
             alert tcp any any -> any any (content:\"a\"; sid:1;)\n",
            &ctx(),
        );
        assert_eq!(l.rules.len(), 1);
        let p: Vec<_> = l
            .problems
            .iter()
            .map(|p| (p.line, p.sid, p.keyword.clone()))
            .collect();
        assert_eq!(
            p,
            vec![
                (2, Some(2), Some("frobnicate".to_string())),
                (3, Some(3), Some("content".to_string())),
                (4, None, None),
                (5, Some(5), None),
                (6, Some(1), Some("sid".to_string())),
            ]
        );
    }

    #[test]
    fn higher_rev_replaces() {
        let l = load_str(
            "alert tcp any any -> any any (msg:\"old\"; sid:1; rev:1;)\n\
             alert tcp any any -> any any (msg:\"new\"; sid:1; rev:2;)\n",
            &ctx(),
        );
        assert_eq!(l.rules.len(), 1);
        assert_eq!(l.rules[0].msg, "new");
        assert!(l.problems.is_empty());
    }

    #[test]
    fn content_decoding() {
        assert_eq!(decode_content("a|41 42|b").unwrap(), b"aABb");
        assert_eq!(decode_content("|4142|").unwrap(), b"AB");
        assert!(decode_content("|4|").is_err());
        assert!(decode_content("|41").is_err());
        assert!(decode_content("|zz|").is_err());
        assert!(decode_content("").is_err());
    }
}
