//! Suricata rules: parsing rule files into [`Rule`]s.
//!
//! A rule that does not parse, or that uses a keyword this engine does not implement, is
//! reported as a [`RuleProblem`] (file, line, sid, keyword, reason) and skipped; the rest
//! load. A keyword is never silently ignored: a rule whose meaning cannot be honoured is
//! not loaded.

pub mod addr;
pub mod ast;
pub mod classification;
pub mod datasets;
pub mod keywords;
pub mod parse;
pub mod reference;
pub mod requires;
pub mod suricata;
pub mod thresholds;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use meerkat_config::VarValue;

pub use addr::{AddrExpr, IpSet, PortExpr, PortSet};
pub use ast::*;
pub use classification::{Classification, ConfigFileError, ConfigFileProblem};
pub use keywords::Names;
pub use reference::References;

use crate::app::AppProto;

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

/// What goes into parsing: variables, the classtype table and the reference systems.
#[derive(Debug, Clone)]
pub struct RuleContext {
    pub address_vars: BTreeMap<String, VarValue>,
    pub port_vars: BTreeMap<String, VarValue>,
    pub classification: Classification,
    pub references: References,
    /// threshold.config, read again each time rules load (start and reload); None in
    /// tests that load rules alone.
    pub threshold_file: Option<thresholds::ThresholdFile>,
    /// The datasets rules name (`dataset`, `datarep`), shared by every ruleset this
    /// context loads.
    pub datasets: std::sync::Arc<datasets::Registry>,
}

impl RuleContext {
    /// The context of a config: its variables, and its `classification-file` and
    /// `reference-config-file` (or the built-in tables). A file that cannot be read is an
    /// error; its lines that are not Suricata's syntax are skipped, as Suricata does (the
    /// supervisor and `-T` report them, see [`RuleContext::load`]).
    pub fn from_config(config: &meerkat_config::Config) -> Result<RuleContext, String> {
        Self::load(config)
            .map(|(ctx, _)| ctx)
            .map_err(|e| e.to_string())
    }

    /// [`RuleContext::from_config`], with the lines of the classification and reference
    /// files that were skipped.
    pub fn load(
        config: &meerkat_config::Config,
    ) -> Result<(RuleContext, Vec<ConfigFileProblem>), ConfigFileError> {
        let mut problems = Vec::new();
        let classification = match &config.classification_file {
            Some(p) => {
                let (c, mut bad) = Classification::load(p)?;
                problems.append(&mut bad);
                c
            }
            None => Classification::default(),
        };
        let references = match &config.reference_config_file {
            Some(p) => {
                let (r, mut bad) = References::load(p)?;
                problems.append(&mut bad);
                r
            }
            None => References::default(),
        };
        let ctx = RuleContext {
            address_vars: config.vars.address_groups.clone(),
            port_vars: config.vars.port_groups.clone(),
            classification,
            references,
            threshold_file: Some(thresholds::ThresholdFile::of(
                config.threshold_file.as_deref(),
            )),
            datasets: std::sync::Arc::new(datasets::Registry::from_config(config)),
        };
        Ok((ctx, problems))
    }

    /// The references of loaded rules whose system the reference table does not know
    /// (Suricata warns about them and loads the rules): (file, line, sid, system).
    pub fn unknown_references<'r>(
        &self,
        rules: &'r [Rule],
    ) -> Vec<(&'r Path, usize, u64, &'r str)> {
        rules
            .iter()
            .flat_map(|r| {
                r.references.iter().filter_map(move |x| {
                    let system = x.split_once('|').map_or(x.as_str(), |(s, _)| s);
                    self.references.prefix(system).is_none().then_some((
                        r.file.as_path(),
                        r.line,
                        r.sid,
                        system,
                    ))
                })
            })
            .collect()
    }
}

/// The result of loading rule files.
#[derive(Debug, Default)]
pub struct Loaded {
    pub rules: Vec<Rule>,
    pub problems: Vec<RuleProblem>,
    /// Rules skipped because their `requires:` is not met (not errors: Suricata logs
    /// one line counting them).
    pub skipped: Vec<RuleProblem>,
    /// Flowbit, flowint and xbit names used by the rules.
    pub names: Names,
    /// threshold.config lines that are not Suricata's syntax (skipped; the other
    /// entries are applied). `-T` fails on them, as Suricata's.
    pub threshold_problems: Vec<ConfigFileProblem>,
    /// threshold.config entries that did nothing (for a rule not loaded, or a
    /// `rate_filter` the rule's own threshold takes precedence over), and a file that
    /// could not be read (line 0): warnings, as Suricata's.
    pub threshold_warnings: Vec<ConfigFileProblem>,
    /// threshold.config entries applied.
    pub threshold_entries: usize,
}

impl Loaded {
    /// Logs the threshold.config lines that were skipped and the entries that did
    /// nothing (as Suricata, one warning each; the other entries apply).
    pub fn log_threshold_problems(&self) {
        for p in &self.threshold_problems {
            tracing::warn!("threshold-file: {p} (line skipped)");
        }
        for p in &self.threshold_warnings {
            tracing::warn!("threshold-file: {p}");
        }
        if self.threshold_entries > 0 {
            tracing::info!(
                entries = self.threshold_entries,
                skipped = self.threshold_problems.len(),
                "threshold-file loaded"
            );
        }
    }
}

use keywords::Fail;

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

/// Parses one rule's text.
pub fn parse_rule(
    text: &str,
    ctx: &RuleContext,
    names: &mut Names,
) -> Result<Rule, (Option<u64>, Fail)> {
    parse_rule_in(text, Path::new(""), ctx, names)
}

/// Parses one rule's text from rule file `file` (files a keyword names, such as hash
/// lists, are found beside it).
pub fn parse_rule_in(
    text: &str,
    file: &Path,
    ctx: &RuleContext,
    names: &mut Names,
) -> Result<Rule, (Option<u64>, Fail)> {
    let raw = parse::parse(text).map_err(|e| (None, (None, e)))?;
    // Find the sid first so that every problem can name it.
    let sid: Option<u64> = raw
        .options
        .iter()
        .find(|o| o.keyword == "sid")
        .and_then(|o| o.value)
        .and_then(|v| parse::unquote(v).trim().parse().ok());
    // `requires` before anything else: a rule for a later version may have a header or
    // keywords this one does not know.
    for o in raw.options.iter().filter(|o| o.keyword == "requires") {
        let v = parse::unquote(o.value.unwrap_or_default());
        let known = |k: &str| suricata::meerkat_supports(k, ctx);
        match requires::check(v.trim(), requires::SURICATA_VERSION, known) {
            Ok(Ok(())) => {}
            Ok(Err(unmet)) => {
                return Err((
                    sid,
                    (
                        Some("requires".to_string()),
                        format!("{REQUIRES_UNMET}{unmet}"),
                    ),
                ));
            }
            Err(e) => return Err((sid, (Some("requires".to_string()), e))),
        }
    }
    build(&raw, text, file, ctx, names).map_err(|f| (sid, f))
}

/// The start of the reason of a rule skipped for its `requires:`.
pub const REQUIRES_UNMET: &str = "requirements not met: ";

impl RuleProblem {
    /// Whether the rule was skipped for its `requires:` (not an error).
    pub fn is_skipped(&self) -> bool {
        self.keyword.as_deref() == Some("requires") && self.reason.starts_with(REQUIRES_UNMET)
    }
}

fn build(
    raw: &parse::RawRule<'_>,
    text: &str,
    file: &Path,
    ctx: &RuleContext,
    names: &mut Names,
) -> Result<Rule, Fail> {
    let action = match raw.action {
        "alert" => Action::Alert,
        "pass" => Action::Pass,
        "drop" => Action::Drop,
        "reject" | "rejectsrc" | "rejectdst" | "rejectboth" => Action::Reject,
        other => return Err((None, format!("unknown action `{other}`"))),
    };
    let proto_name = raw.proto.to_ascii_lowercase();
    let mut payload_source = PayloadSource::Any;
    let mut app_proto = None;
    let mut proto_exact = false;
    let proto = match proto_name.as_str() {
        "ip" | "pkthdr" => Proto::Ip,
        "tcp" => Proto::Tcp,
        "tcp-pkt" => {
            payload_source = PayloadSource::Packet;
            Proto::Tcp
        }
        "tcp-stream" => {
            payload_source = PayloadSource::Stream;
            Proto::Tcp
        }
        "udp" => Proto::Udp,
        "icmp" => Proto::Icmp,
        "icmpv4" => Proto::Icmpv4,
        "icmpv6" => Proto::Icmpv6,
        other => match AppProto::from_rule_proto(other).and_then(AppProto::descriptor) {
            Some(d) => {
                app_proto = Some(d.proto);
                proto_exact = d.name != other;
                // The protocol's transports.
                match (d.transports.tcp, d.transports.udp) {
                    (true, false) => Proto::Tcp,
                    (false, true) => Proto::Udp,
                    _ => Proto::Ip,
                }
            }
            None => return Err((None, format!("protocol `{other}` is not supported"))),
        },
    };
    let direction = match raw.direction {
        "->" => Direction::ToDst,
        "<>" => Direction::Both,
        other => return Err((None, format!("`{other}` is not a direction (-> or <>)"))),
    };
    let src = addr::parse_addr(raw.src, &ctx.address_vars)
        .map(|e| addr::IpSet::from_expr(&e))
        .map_err(|e| (None, format!("source address: {e}")))?;
    let dst = addr::parse_addr(raw.dst, &ctx.address_vars)
        .map(|e| addr::IpSet::from_expr(&e))
        .map_err(|e| (None, format!("destination address: {e}")))?;
    let sport = addr::parse_ports(raw.sport, &ctx.port_vars)
        .map(|e| addr::PortSet::from_expr(&e))
        .map_err(|e| (None, format!("source port: {e}")))?;
    let dport = addr::parse_ports(raw.dport, &ctx.port_vars)
        .map(|e| addr::PortSet::from_expr(&e))
        .map_err(|e| (None, format!("destination port: {e}")))?;

    let rule = Rule {
        action,
        proto,
        app_proto,
        proto_exact,
        payload_source,
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
        flow: FlowOpts::default(),
        header: Vec::new(),
        payload: MatchList::default(),
        buffers: Vec::new(),
        hdr_buffers: Vec::new(),
        base64_data: None,
        flowbits: Vec::new(),
        flowints: Vec::new(),
        xbits: Vec::new(),
        tx_checks: Vec::new(),
        threshold: None,
        detection_filter: None,
        filestore: None,
        rate_filter: None,
        suppress: Vec::new(),
        noalert: false,
        target: None,
        fast: None,
        vars: 0,
        text: text.to_string(),
        file: file.to_path_buf(),
        line: 0,
    };
    let mut b = keywords::Builder::new(rule, ctx, names, app_proto);
    let mut have_sid = false;
    for opt in &raw.options {
        if opt.keyword == "sid" {
            have_sid = true;
        }
        b.option(opt.keyword, opt.value)?;
    }
    let mut rule = b.finish()?;
    if !have_sid {
        return Err((None, "no sid".to_string()));
    }
    check_lists(&rule)?;
    rule.fast = choose_fast_pattern(&rule);
    Ok(rule)
}

/// Checks that hold across keywords.
fn check_lists(rule: &Rule) -> Result<(), Fail> {
    for b in &rule.buffers {
        if b.list.is_empty() {
            return Err((
                Some(b.def.name.to_string()),
                "selects a buffer but matches nothing in it".to_string(),
            ));
        }
        // Suricata: `absent` alone on its buffer; `absent: or_else` before matches.
        let matches =
            !b.list.items.is_empty() || b.list.bsize.is_some() || !b.list.datasets.is_empty();
        match b.list.absent {
            Some(Absent::Only) if matches => {
                return Err((
                    Some("absent".to_string()),
                    "cannot be combined with matches on the same buffer".to_string(),
                ));
            }
            Some(Absent::OrElse) if !matches => {
                return Err((
                    Some("absent".to_string()),
                    "or_else needs matches on the buffer after it".to_string(),
                ));
            }
            _ => {}
        }
    }
    for h in &rule.hdr_buffers {
        if h.list.is_empty() {
            return Err((
                None,
                "selects a header buffer but matches nothing in it".to_string(),
            ));
        }
    }
    let lists = std::iter::once(&rule.payload)
        .chain(rule.buffers.iter().map(|b| &b.list))
        .chain(rule.hdr_buffers.iter().map(|h| &h.list))
        .chain(rule.base64_data.iter());
    for l in lists {
        for m in &l.items {
            if let Match::Content(c) = m
                && c.startswith
                && (c.offset.is_some() || c.depth.is_some() || c.relative())
            {
                {
                    return Err((
                        Some("startswith".to_string()),
                        "cannot be combined with offset, depth, distance or within".to_string(),
                    ));
                }
            }
        }
    }
    let fast = l_count_fast(rule);
    if fast > 1 {
        return Err((
            Some("fast_pattern".to_string()),
            "given more than once".to_string(),
        ));
    }
    Ok(())
}

fn l_count_fast(rule: &Rule) -> usize {
    std::iter::once(&rule.payload)
        .chain(rule.buffers.iter().map(|b| &b.list))
        .chain(rule.hdr_buffers.iter().map(|h| &h.list))
        .flat_map(|l| l.items.iter())
        .filter(|m| matches!(m, Match::Content(c) if c.fast_pattern))
        .count()
}

/// Picks the content the prefilter searches for: the one marked `fast_pattern`, else the
/// longest positive content, preferring a sticky buffer's (rarer) over the payload's.
/// A content of a transformed buffer is searched in the transformed buffer.
fn choose_fast_pattern(rule: &Rule) -> Option<FastPattern> {
    let mut best: Option<(usize, FastPattern)> = None;
    let mut consider = |list: ListRef, items: &[Match], _transformed: bool| {
        for (i, m) in items.iter().enumerate() {
            let Match::Content(c) = m else { continue };
            if c.negated {
                continue;
            }
            let bytes = match c.fast_chop {
                Some((o, l)) => c.pattern[usize::from(o)..usize::from(o) + usize::from(l)].to_vec(),
                None => c.pattern.clone(),
            };
            let score = if c.fast_pattern {
                usize::MAX
            } else {
                bytes.len() * 4 + usize::from(list != ListRef::Payload)
            };
            if best.as_ref().is_none_or(|(s, _)| score > *s) {
                best = Some((
                    score,
                    FastPattern {
                        list,
                        item: i,
                        bytes,
                        nocase: c.nocase,
                    },
                ));
            }
        }
    };
    consider(ListRef::Payload, &rule.payload.items, false);
    for (i, b) in rule.buffers.iter().enumerate() {
        // With `absent: or_else` the rule can match without the buffer, so none of its
        // contents is required.
        if b.list.absent.is_some() {
            continue;
        }
        consider(ListRef::Buffer(i), &b.list.items, !b.transforms.is_empty());
    }
    best.map(|(_, f)| f)
}

/// Loads rule files. A file that cannot be read is an error; problems with single rules
/// are collected and the other rules load. Of two rules with the same (gid, sid) the one
/// with the higher rev is kept (the first on a tie), as Suricata does.
pub fn load_files(paths: &[PathBuf], ctx: &RuleContext) -> Result<Loaded, String> {
    load_files_with_names(paths, ctx, Names::default())
}

/// Like [`load_files`], numbering flowbit, flowint and xbit names after `names` (a
/// reload passes the running ruleset's names, so that a name keeps its number and the
/// variables of live flows keep their meaning across the swap).
pub fn load_files_with_names(
    paths: &[PathBuf],
    ctx: &RuleContext,
    names: Names,
) -> Result<Loaded, String> {
    let mut loaded = Loaded {
        names,
        ..Loaded::default()
    };
    let mut by_id: HashMap<(u32, u64), usize> = HashMap::new();
    for path in paths {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read rule file {}: {e}", path.display()))?;
        load_text(&text, path, ctx, &mut loaded, &mut by_id);
    }
    if let Some(tf) = &ctx.threshold_file {
        apply_threshold_file(tf, ctx, &mut loaded);
    }
    Ok(loaded)
}

/// Reads threshold.config and applies it to the loaded rules. A file that cannot be read
/// (at an explicit path) is reported and the rules load without it, as Suricata warns
/// and goes on.
pub fn apply_threshold_file(
    tf: &thresholds::ThresholdFile,
    ctx: &RuleContext,
    loaded: &mut Loaded,
) {
    match tf.read(ctx) {
        Ok(None) => {}
        Ok(Some((entries, problems))) => {
            loaded.threshold_warnings = thresholds::apply(&entries, &mut loaded.rules, &tf.path);
            loaded.threshold_entries = entries.len();
            loaded.threshold_problems = problems;
        }
        Err(reason) => loaded.threshold_warnings.push(ConfigFileProblem {
            file: tf.path.clone(),
            line: 0,
            reason,
        }),
    }
}

/// SHA-256 of a ruleset: each file's length and bytes, in order (hex). Two processes
/// that report the same digest loaded the same rules.
pub fn ruleset_digest(paths: &[PathBuf]) -> Result<String, String> {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for path in paths {
        let bytes = std::fs::read(path)
            .map_err(|e| format!("cannot read rule file {}: {e}", path.display()))?;
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    Ok(h.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

fn load_text(
    text: &str,
    path: &Path,
    ctx: &RuleContext,
    loaded: &mut Loaded,
    by_id: &mut HashMap<(u32, u64), usize>,
) {
    for (line, rule_text) in parse::logical_lines(text) {
        match parse_rule_in(&rule_text, path, ctx, &mut loaded.names) {
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
            Err((sid, (keyword, reason))) => {
                let p = RuleProblem {
                    file: path.to_path_buf(),
                    line,
                    sid,
                    keyword,
                    reason,
                };
                if p.is_skipped() {
                    loaded.skipped.push(p);
                } else {
                    loaded.problems.push(p);
                }
            }
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
    use meerkat_app::value::KwValue;

    fn ctx() -> RuleContext {
        tests_ctx()
    }

    /// A rule's protocol keyword checks as (keyword, value).
    fn checks(r: &Rule) -> Vec<(&'static str, KwValue)> {
        r.tx_checks
            .iter()
            .filter_map(|c| match c {
                TxCheck::Keyword { name, value, .. } => Some((*name, *value)),
                TxCheck::AppEvent(_) | TxCheck::File(_) => None,
            })
            .collect()
    }

    fn first_content(l: &MatchList) -> &Content {
        match &l.items[0] {
            Match::Content(c) => c,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn parses_a_full_rule() {
        let r = parse_rule(
            r#"alert tcp $HOME_NET any -> $EXTERNAL_NET $HTTP_PORTS (msg:"ET TEST \"x\""; content:"GET|20|/"; nocase; content:!"bad"; classtype:trojan-activity; reference:url,example.com/x; metadata:created_at 2020_01_01, tag Foo; sid:2000001; rev:3;)"#,
            &ctx(),
            &mut Names::default(),
        )
        .unwrap();
        assert_eq!(r.sid, 2000001);
        assert_eq!(r.rev, 3);
        assert_eq!(r.msg, "ET TEST \"x\"");
        assert_eq!(r.category, "A Network Trojan was detected");
        assert_eq!(r.severity, 1);
        let c = first_content(&r.payload);
        assert_eq!(c.pattern, b"get /");
        assert!(c.nocase);
        assert!(matches!(&r.payload.items[1], Match::Content(c) if c.negated));
        assert_eq!(r.references, vec!["url|example.com/x"]);
        assert_eq!(
            r.metadata,
            vec![
                ("created_at".to_string(), "2020_01_01".to_string()),
                ("tag".to_string(), "Foo".to_string())
            ]
        );
        // The longest positive content is the fast pattern.
        assert_eq!(r.fast.as_ref().unwrap().bytes, b"get /");
    }

    #[test]
    fn tcp_flags_make_a_rule_inspect_packets() {
        // As in Suricata (`flags` requires the packet): a `flags:S; content` rule sees
        // a Fast Open SYN's payload, which went into the stream.
        let mut names = Names::default();
        let mut parse = |text: &str| parse_rule(text, &ctx(), &mut names).unwrap();
        let r = parse(r#"alert tcp any any -> any any (flags:S; content:"GET"; sid:1;)"#);
        assert_eq!(r.payload_source, PayloadSource::Packet);
        let r = parse(r#"alert tcp any any -> any any (content:"GET"; sid:2;)"#);
        assert_eq!(r.payload_source, PayloadSource::Any);
        let r = parse(r#"alert tcp-stream any any -> any any (flags:A; content:"x"; sid:3;)"#);
        assert_eq!(r.payload_source, PayloadSource::Stream);
    }

    #[test]
    fn sticky_buffers_and_modifiers() {
        let mut names = Names::default();
        let r = parse_rule(
            r#"alert http any any -> any any (flow:established,to_server; http.method; content:"POST"; http.uri; content:"/login"; startswith; content:"x"; distance:0; pkt_data; content:"ua"; http_user_agent; fast_pattern; pcre:"/abc/Ui"; urilen:>5; flowbits:set,a|b; sid:1;)"#,
            &ctx(),
            &mut names,
        )
        .unwrap();
        assert_eq!(r.app_proto, Some(AppProto::Http));
        assert!(r.payload.is_empty());
        let names_of: Vec<&str> = r.buffers.iter().map(|b| b.def.name).collect();
        assert_eq!(names_of, ["http.method", "http.uri", "http.user_agent"]);
        assert_eq!(
            r.buffers[1].list.items.len(),
            3,
            "two contents and the /U pcre"
        );
        assert!(r.buffers[1].list.bsize.is_some());
        assert_eq!(r.fast.as_ref().unwrap().list, ListRef::Buffer(2));
        assert_eq!(r.flowbits, vec![FlowbitCmd::Set(vec![0, 1])]);
        assert_eq!(names.flowbits, ["a", "b"]);
        assert_eq!(r.flow.to_server, Some(true));
    }

    #[test]
    fn suricata_spellings_and_relative_matches_after_legacy_modifiers() {
        let mut names = Names::default();
        let mut parse = |text: &str| parse_rule(text, &ctx(), &mut names).unwrap();
        // `urilen` with a blank after the comma; unquoted pcre.
        let r = parse(r#"alert tcp any any -> any any (urilen:15, norm; sid:1;)"#);
        assert_eq!(r.buffers[0].def.name, "http.uri");
        assert!(r.buffers[0].list.bsize.is_some());
        let r = parse(r#"alert tcp any any -> any any (urilen: 17 ,raw; sid:2;)"#);
        assert_eq!(r.buffers[0].def.name, "http.uri.raw");
        let r = parse(r#"alert tcp any any -> any any (pcre:/normalized/U; sid:3;)"#);
        assert_eq!(r.buffers[0].def.name, "http.uri");
        // Relative keywords after a legacy modifier go to that buffer, not the payload.
        let r = parse(
            r#"alert tcp any any -> any any (uricontent:"this"; byte_extract:1,2,one,string,dec,relative; uricontent:"ring"; distance:one; isdataat:4,relative; pcre:"/x/R"; sid:4;)"#,
        );
        assert!(r.payload.is_empty());
        assert_eq!(r.buffers.len(), 1);
        assert_eq!(r.buffers[0].list.items.len(), 5);
        // Not relative: stays on the payload.
        let r =
            parse(r#"alert tcp any any -> any any (content:"a"; http_uri; isdataat:4; sid:5;)"#);
        assert_eq!(r.payload.items.len(), 1);
        // ssl_version: a list is any of; a `!` negates the whole list.
        let r = parse(r#"alert tcp any any -> any any (ssl_version:!tls1.3,tls1.2; sid:6;)"#);
        assert_eq!(r.app_proto, Some(AppProto::Tls));
        assert_eq!(
            checks(&r),
            [(
                "ssl_version",
                KwValue::Flags {
                    mask: 48,
                    negated: true
                }
            )]
        );
        let r = parse(r#"alert tls any any -> any any (ssl_version:tls1.0,tls1.1; sid:7;)"#);
        assert_eq!(
            checks(&r),
            [(
                "ssl_version",
                KwValue::Flags {
                    mask: 12,
                    negated: false
                }
            )]
        );
    }

    #[test]
    fn keyword_errors() {
        let bad = [
            (
                "alert tcp any any -> any any (content:\"abc\"; within:2; sid:1;)",
                "within",
            ),
            ("alert tcp any any -> any any (nocase; sid:1;)", "nocase"),
            (
                "alert tcp any any -> any any (http.uri; sid:1;)",
                "http.uri",
            ),
            (
                "alert dns any any -> any any (http.uri; content:\"x\"; sid:1;)",
                "http.uri",
            ),
            (
                "alert tcp any any -> any any (byte_test:9,=,1,0; sid:1;)",
                "byte_test",
            ),
            (
                "alert tcp any any -> any any (pcre:\"/(/\"; sid:1;)",
                "pcre",
            ),
            ("alert tcp any any -> any any (dsize:>; sid:1;)", "dsize"),
            (
                "alert tcp any any -> any any (to_lowercase; content:\"x\"; sid:1;)",
                "to_lowercase",
            ),
        ];
        for (text, kw) in bad {
            let e = parse_rule(text, &ctx(), &mut Names::default()).unwrap_err();
            assert_eq!(e.1.0.as_deref(), Some(kw), "{text}: {e:?}");
        }
    }

    #[test]
    fn tls_and_dns_property_keywords() {
        let parse = |t: &str| parse_rule(t, &ctx(), &mut Names::default());
        // Legacy TLS keywords: a content in a list of their own; the sticky buffer after
        // them starts another list.
        let r = parse(
            r#"alert tls any any -> any any (tls.subject:"CN=x"; tls.cert_subject; content:"y"; tls.fingerprint:!"AB:cd"; sid:1;)"#,
        )
        .unwrap();
        assert_eq!(r.buffers.len(), 3);
        assert_eq!(r.buffers[0].def.name, "tls.cert_subject");
        assert_eq!(first_content(&r.buffers[0].list).pattern, b"CN=x");
        assert_eq!(first_content(&r.buffers[1].list).pattern, b"y");
        let fp = first_content(&r.buffers[2].list);
        assert_eq!(r.buffers[2].def.name, "tls.cert_fingerprint");
        assert_eq!(
            (fp.pattern.as_slice(), fp.nocase, fp.negated),
            (&b"ab:cd"[..], true, true)
        );
        // Certificate validity dates.
        let r = parse(
            r#"alert tls any any -> any any (tls_cert_notafter:>2015; tls_cert_notbefore:2000-10-22<>2020-05-15T12:30; tls_cert_expired; sid:2;)"#,
        )
        .unwrap();
        assert_eq!(
            checks(&r),
            [
                (
                    "tls.cert_notafter",
                    KwValue::Date(DateCmp::Gt(1_420_070_400))
                ),
                (
                    "tls.cert_notbefore",
                    KwValue::Date(DateCmp::Range(972_172_800, 1_589_545_800))
                ),
                ("tls_cert_expired", KwValue::Unit),
            ]
        );
        // dns.opcode: an integer comparison on the message of the inspected direction.
        let r = parse(r#"alert dns any any -> any any (dns.opcode:!0; sid:3;)"#).unwrap();
        assert_eq!(checks(&r), [("dns.opcode", KwValue::Num(NumCmp::Ne(0)))]);
        assert_eq!(r.app_proto, Some(AppProto::Dns));
        for (text, kw) in [
            (
                r#"alert tls any any -> any any (tls.subject:CN=x; sid:4;)"#,
                "tls.subject",
            ),
            (
                r#"alert tls any any -> any any (tls_cert_notbefore:<soon; sid:5;)"#,
                "tls_cert_notbefore",
            ),
            (
                r#"alert tls any any -> any any (tls_cert_valid:1; sid:6;)"#,
                "tls_cert_valid",
            ),
            (
                r#"alert dns any any -> any any (dns.opcode:&4=4; sid:7;)"#,
                "dns.opcode",
            ),
            (
                r#"alert http any any -> any any (tls.issuerdn:"x"; sid:8;)"#,
                "tls.issuerdn",
            ),
            (
                r#"alert tls any any -> any any (dns.opcode:1; sid:9;)"#,
                "dns.opcode",
            ),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.1.0.as_deref(), Some(kw), "{text}: {e:?}");
        }
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
