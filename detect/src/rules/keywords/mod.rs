//! Rule options to [`Rule`]: one handler per keyword.
//!
//! Payload keywords (`content`, `pcre`, `byte_*`, `isdataat`, ...) go to the current list:
//! the packet/stream payload until a sticky-buffer keyword (`http.uri;`, `file_data;`,
//! `dns.query;`, ...) switches to that buffer's list (`pkt_data;` switches back). Content
//! modifiers (`nocase`, `depth`, `distance`, ...) apply to the last content; the older
//! HTTP modifiers (`http_uri`, ...) move the last content into their buffer's list.

use std::collections::HashMap;
use std::sync::Arc;

mod app_layer;
mod datasets;
mod files;
mod flow;
mod header;
mod meta;
mod payload;
#[cfg(test)]
mod tests;

pub(crate) use flow::backoff_checked;
pub use header::parse_flags;

use super::ast::*;
use super::{RuleContext, parse};
use crate::app::{self, AppProto, BufferDef, KeywordKind};

/// Interned names of flowbits, flowints and xbits (shared by all rules of a ruleset).
#[derive(Debug, Default, Clone)]
pub struct Names {
    pub flowbits: Vec<String>,
    pub flowints: Vec<String>,
    pub xbits: Vec<String>,
    index: HashMap<(u8, String), u16>,
}

impl Names {
    fn intern(&mut self, kind: u8, name: &str) -> Result<u16, String> {
        if let Some(&i) = self.index.get(&(kind, name.to_string())) {
            return Ok(i);
        }
        let list = match kind {
            0 => &mut self.flowbits,
            1 => &mut self.flowints,
            _ => &mut self.xbits,
        };
        let i = u16::try_from(list.len()).map_err(|_| "too many variable names".to_string())?;
        list.push(name.to_string());
        self.index.insert((kind, name.to_string()), i);
        Ok(i)
    }
}

/// A concern's keyword handler: `Ok(false)` when the keyword is not the concern's.
type KeywordFn<'a> = fn(&mut Builder<'a>, &str, Option<&str>) -> Result<bool, Fail>;

/// The reason of a problem with a keyword this parser does not know.
pub const NOT_SUPPORTED: &str = "keyword not supported";

/// A problem with one keyword: (keyword, reason).
pub type Fail = (Option<String>, String);

fn fail(kw: &str, reason: impl Into<String>) -> Fail {
    (Some(kw.to_string()), reason.into())
}

/// Largest byte_extract/byte_math variables per rule.
const MAX_VARS: usize = 16;
/// Longest content pattern accepted.
const MAX_CONTENT: usize = 65535;

/// Where payload keywords currently go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cur {
    Payload,
    Buffer(usize),
    /// A packet-header buffer (index in `Rule::hdr_buffers`).
    Header(usize),
    Base64,
}

/// Builds one rule from its options.
pub(super) struct Builder<'a> {
    pub rule: Rule,
    ctx: &'a RuleContext,
    names: &'a mut Names,
    cur: Cur,
    /// The list and item index of the last content (for modifiers).
    last_content: Option<(Cur, usize)>,
    /// The list of the last payload keyword (for relative keywords).
    last_payload: Option<Cur>,
    vars: Vec<String>,
    /// Header protocol named an app-layer protocol.
    header_app: Option<AppProto>,
    priority: Option<u32>,
    class_priority: Option<u32>,
    /// Buffer lists made by legacy keywords (`tls.subject:"x"`): a sticky buffer keyword
    /// never continues one of them.
    legacy_lists: Vec<usize>,
}

fn value_of<'v>(kw: &str, v: Option<&'v str>) -> Result<&'v str, Fail> {
    v.map(str::trim)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| fail(kw, "needs a value"))
}

pub use meerkat_app::value::parse_num_cmp;
use meerkat_app::value::{negation, parse_int, parse_u64};

/// `kw`'s value as a number that fits `T`; `expected` says what fits when it does not.
fn int_value<T: TryFrom<u64>>(kw: &str, v: Option<&str>, expected: &str) -> Result<T, Fail> {
    parse_int(value_of(kw, v)?).ok_or_else(|| fail(kw, expected))
}

/// `kw`'s value as `[!]number`, the number fitting `T`: (negated, number).
fn negatable_int<T: TryFrom<u64>>(
    kw: &str,
    v: Option<&str>,
    expected: &str,
) -> Result<(bool, T), Fail> {
    let (negated, n) = negation(value_of(kw, v)?);
    Ok((negated, parse_int(n).ok_or_else(|| fail(kw, expected))?))
}

fn split_args(v: &str) -> Vec<&str> {
    v.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .collect()
}

impl<'a> Builder<'a> {
    pub(super) fn new(
        rule: Rule,
        ctx: &'a RuleContext,
        names: &'a mut Names,
        header_app: Option<AppProto>,
    ) -> Self {
        Builder {
            rule,
            ctx,
            names,
            cur: Cur::Payload,
            last_content: None,
            last_payload: None,
            vars: Vec::new(),
            header_app,
            priority: None,
            class_priority: None,
            legacy_lists: Vec::new(),
        }
    }

    /// The finished rule.
    pub(super) fn finish(mut self) -> Result<Rule, Fail> {
        self.rule.severity = self
            .priority
            .or(self.class_priority)
            .unwrap_or(super::classification::DEFAULT_PRIORITY);
        self.rule.vars = self.vars.len() as u8;
        // Header buffers are checked on the packet path only; an app-layer rule is
        // evaluated on transactions, where they would be ignored.
        if !self.rule.hdr_buffers.is_empty()
            && (self.rule.app_proto.is_some() || !self.rule.tx_checks.is_empty())
        {
            return Err((
                None,
                "packet header buffers cannot be combined with app-layer matches".to_string(),
            ));
        }
        if let Some(h) = self.header_app
            && !self.rule.app_proto.is_some_and(|p| p.matches_rule(h))
        {
            return Err((None, "mixes app-layer protocols".to_string()));
        }
        Ok(self.rule)
    }

    fn list_mut(&mut self, c: Cur) -> &mut MatchList {
        match c {
            Cur::Payload => &mut self.rule.payload,
            Cur::Buffer(i) => &mut self.rule.buffers[i].list,
            Cur::Header(i) => &mut self.rule.hdr_buffers[i].list,
            Cur::Base64 => self.rule.base64_data.get_or_insert_with(MatchList::default),
        }
    }

    fn push(&mut self, m: Match) {
        let c = self.cur;
        let is_content = matches!(m, Match::Content(_));
        let list = self.list_mut(c);
        list.items.push(m);
        let idx = list.items.len() - 1;
        if is_content {
            self.last_content = Some((c, idx));
        }
        self.last_payload = Some(c);
    }

    /// Pushes a relative match (`isdataat:n,relative`, `pcre:/x/R`): outside a sticky
    /// buffer it belongs to the list of the match before it, which a legacy modifier
    /// (`content:"x"; http_uri;`) may have moved into a buffer, as Suricata does.
    fn push_relative(&mut self, m: Match) {
        let saved = self.cur;
        if saved == Cur::Payload
            && let Some(prev @ Cur::Buffer(_)) = self.last_payload
        {
            self.cur = prev;
            self.push(m);
            self.cur = saved;
        } else {
            self.push(m);
        }
    }

    /// [`Self::push_relative`] for the byte keywords when they read `relative`.
    fn push_maybe_relative(&mut self, m: Match) {
        let relative = match &m {
            Match::ByteTest(t) => t.read.relative,
            Match::ByteJump(j) => j.read.relative,
            Match::ByteExtract(e) => e.read.relative,
            Match::ByteMath(b) => b.read.relative,
            _ => false,
        };
        if relative {
            self.push_relative(m);
        } else {
            self.push(m);
        }
    }

    fn last_content_mut(&mut self, kw: &str) -> Result<&mut Content, Fail> {
        let (c, i) = self
            .last_content
            .ok_or_else(|| fail(kw, "must follow a content"))?;
        match self.list_mut(c).items.get_mut(i) {
            Some(Match::Content(content)) => Ok(content),
            _ => Err(fail(kw, "must follow a content")),
        }
    }

    fn var_or_const(&self, kw: &str, s: &str) -> Result<Value, Fail> {
        let s = s.trim();
        if let Ok(n) = s.parse::<i64>() {
            return Ok(Value::Const(n));
        }
        match self.vars.iter().position(|v| v == s) {
            Some(i) => Ok(Value::Var(i as u8)),
            None => Err(fail(
                kw,
                format!("`{s}` is neither a number nor a byte_extract variable"),
            )),
        }
    }

    fn new_var(&mut self, kw: &str, name: &str) -> Result<u8, Fail> {
        if let Some(i) = self.vars.iter().position(|v| v == name) {
            return Ok(i as u8);
        }
        if self.vars.len() >= MAX_VARS {
            return Err(fail(kw, "too many byte variables"));
        }
        self.vars.push(name.to_string());
        Ok((self.vars.len() - 1) as u8)
    }

    /// Applies one option. Keywords are case-insensitive, as in Suricata.
    pub(super) fn option(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        if kw.bytes().any(|b| b.is_ascii_uppercase()) {
            return self.option(&kw.to_ascii_lowercase(), v);
        }
        // The older HTTP keywords (`http_uri`) modify the content before them; the dotted
        // ones (`http.uri`) select a buffer for what follows.
        if let Some(def) = app::buffers::modifier(kw) {
            return self.legacy_modifier(kw, def);
        }
        if let Some(def) = app::buffers::sticky_in(kw, self.rule.app_proto) {
            if v.is_some() {
                return Err(fail(kw, "takes no value (it selects a buffer)"));
            }
            return self.switch_buffer(def);
        }
        if let Some((desc, def)) = app::buffers::keyword(kw) {
            return self.protocol_keyword(kw, v, desc, def);
        }
        // Each concern's keywords, in a module of its own; each says whether `kw` is
        // one of its keywords.
        let concerns: [KeywordFn<'a>; 7] = [
            Self::meta_option,
            Self::payload_option,
            Self::header_option,
            Self::flow_option,
            Self::app_option,
            Self::file_option,
            Self::dataset_option,
        ];
        for f in concerns {
            if f(self, kw, v)? {
                return Ok(());
            }
        }
        Err(fail(kw, NOT_SUPPORTED))
    }
}

fn num<T: std::str::FromStr>(kw: &str, v: Option<&str>) -> Result<T, Fail> {
    let s = value_of(kw, v)?;
    parse::unquote(s)
        .trim()
        .parse()
        .map_err(|_| fail(kw, format!("`{s}` is not a number")))
}

/// A content-like value `"..."` or `!"..."`: (negated, the quoted text with its quotes).
fn negatable_quoted<'a>(kw: &str, raw: &'a str) -> Result<(bool, &'a str), Fail> {
    let (negated, raw) = negation(raw);
    if !(raw.len() >= 2 && raw.starts_with('"') && raw.ends_with('"')) {
        return Err(fail(kw, "the value must be quoted"));
    }
    Ok((negated, raw))
}

/// An option `name value` of a comma-separated keyword value (`track by_src`), trimmed;
/// a bare `name` has an empty value.
fn option_pair(a: &str) -> (&str, &str) {
    a.split_once(' ')
        .map(|(n, v)| (n.trim(), v.trim()))
        .unwrap_or((a, ""))
}
