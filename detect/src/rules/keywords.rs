//! Rule options to [`Rule`]: one handler per keyword.
//!
//! Payload keywords (`content`, `pcre`, `byte_*`, `isdataat`, ...) go to the current list:
//! the packet/stream payload until a sticky-buffer keyword (`http.uri;`, `file_data;`,
//! `dns.query;`, ...) switches to that buffer's list (`pkt_data;` switches back). Content
//! modifiers (`nocase`, `depth`, `distance`, ...) apply to the last content; the older
//! HTTP modifiers (`http_uri`, ...) move the last content into their buffer's list.

use std::collections::HashMap;
use std::sync::Arc;

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

/// A read of `nbytes` at `offset` as the byte keywords start it: absolute, big-endian,
/// binary, no bitmask (their options change that).
fn byte_read(nbytes: u8, offset: Value) -> ByteRead {
    ByteRead {
        nbytes,
        offset,
        relative: false,
        big_endian: true,
        base: NumBase::Binary,
        bitmask: None,
    }
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
            && self.rule.app_proto != Some(h)
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

    fn switch_buffer(&mut self, def: &'static BufferDef) -> Result<(), Fail> {
        self.require_app(def.name, def.proto)?;
        let i = match self
            .rule
            .buffers
            .iter()
            .enumerate()
            .position(|(i, b)| std::ptr::eq(b.def, def) && !self.legacy_lists.contains(&i))
        {
            Some(i) => i,
            None => {
                self.rule.buffers.push(BufferList {
                    def,
                    transforms: Vec::new(),
                    list: MatchList::default(),
                });
                self.rule.buffers.len() - 1
            }
        };
        self.cur = Cur::Buffer(i);
        Ok(())
    }

    fn require_app(&mut self, kw: &str, proto: AppProto) -> Result<(), Fail> {
        match self.rule.app_proto {
            None => {
                self.rule.app_proto = Some(proto);
                Ok(())
            }
            Some(p) if p == proto => Ok(()),
            Some(p) => Err(fail(
                kw,
                format!("is a {} keyword in a {} rule", proto.name(), p.name()),
            )),
        }
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
        if let Some(def) = app::buffers::sticky(kw) {
            if v.is_some() {
                return Err(fail(kw, "takes no value (it selects a buffer)"));
            }
            return self.switch_buffer(def);
        }
        if let Some((desc, def)) = app::buffers::keyword(kw) {
            return self.protocol_keyword(kw, v, desc, def);
        }
        match kw {
            "msg" => self.rule.msg = parse::unquote(value_of(kw, v)?),
            "sid" => self.rule.sid = num(kw, v)?,
            "rev" => self.rule.rev = num(kw, v)?,
            "gid" => self.rule.gid = num(kw, v)?,
            "priority" => self.priority = Some(num(kw, v)?),
            "classtype" => {
                let name = parse::unquote(value_of(kw, v)?);
                let (desc, prio) = self
                    .ctx
                    .classification
                    .get(name.trim())
                    .ok_or_else(|| fail(kw, format!("unknown classtype `{name}`")))?;
                self.rule.category = desc.to_string();
                self.class_priority = Some(prio);
                self.rule.classtype = Some(name.trim().to_string());
            }
            "reference" => {
                let r = parse::unquote(value_of(kw, v)?);
                let (kind, val) = r
                    .split_once(',')
                    .ok_or_else(|| fail(kw, "expected type,value"))?;
                self.rule
                    .references
                    .push(format!("{}|{}", kind.trim(), val.trim()));
            }
            "metadata" => {
                let m = parse::unquote(value_of(kw, v)?);
                for item in m.split(',') {
                    let item = item.trim();
                    if item.is_empty() {
                        continue;
                    }
                    let (k, val) = item.split_once(' ').unwrap_or((item, ""));
                    self.rule
                        .metadata
                        .push((k.trim().to_string(), val.trim().to_string()));
                }
            }
            "target" => {
                self.rule.target = Some(match value_of(kw, v)? {
                    "src_ip" => Target::SrcIp,
                    "dest_ip" => Target::DestIp,
                    other => return Err(fail(kw, format!("`{other}` is not src_ip or dest_ip"))),
                })
            }
            "noalert" => self.rule.noalert = true,
            // Tagging of the flow's or host's next packets: parsed; the alert itself is
            // unaffected (Meerkat does not log tagged packets).
            "tag" => {
                let args = split_args(value_of(kw, v)?);
                if !matches!(args.first().copied(), Some("session" | "host")) {
                    return Err(fail(kw, "expected session or host"));
                }
            }
            "content" => self.content(kw, v)?,
            "nocase" => {
                let c = self.last_content_mut(kw)?;
                c.nocase = true;
                c.pattern.make_ascii_lowercase();
            }
            "depth" | "offset" | "distance" | "within" => {
                let raw = value_of(kw, v)?.to_string();
                let val = self.var_or_const(kw, &raw)?;
                let c = self.last_content_mut(kw)?;
                let slot = match kw {
                    "depth" => &mut c.depth,
                    "offset" => &mut c.offset,
                    "distance" => &mut c.distance,
                    _ => &mut c.within,
                };
                if slot.is_some() {
                    return Err(fail(kw, "given twice for one content"));
                }
                *slot = Some(val);
                if let Value::Const(n) = val {
                    if (kw == "depth" || kw == "within")
                        && (n < 1 || (n as usize) < c.pattern.len())
                    {
                        return Err(fail(
                            kw,
                            format!(
                                "{n} is smaller than the content ({} bytes)",
                                c.pattern.len()
                            ),
                        ));
                    }
                    if kw == "offset" && n < 0 {
                        return Err(fail(kw, "must not be negative"));
                    }
                }
            }
            "startswith" => {
                let c = self.last_content_mut(kw)?;
                c.startswith = true;
            }
            "endswith" => {
                let c = self.last_content_mut(kw)?;
                c.endswith = true;
            }
            "rawbytes" => {
                // Raw bytes are what Meerkat inspects for the payload; only meaningful
                // with a content on the payload.
                self.last_content_mut(kw)?;
                if !matches!(self.last_content, Some((Cur::Payload, _))) {
                    return Err(fail(kw, "only applies to payload content"));
                }
            }
            "fast_pattern" => {
                let arg = v.map(str::trim);
                let c = self.last_content_mut(kw)?;
                c.fast_pattern = true;
                match arg {
                    None | Some("") => {}
                    Some("only") => c.fast_only = true,
                    Some(chop) => {
                        let (o, l) = chop
                            .split_once(',')
                            .ok_or_else(|| fail(kw, "expected only or <offset>,<length>"))?;
                        let (o, l): (u16, u16) = (
                            o.trim().parse().map_err(|_| fail(kw, "bad offset"))?,
                            l.trim().parse().map_err(|_| fail(kw, "bad length"))?,
                        );
                        if l == 0 || usize::from(o) + usize::from(l) > c.pattern.len() {
                            return Err(fail(kw, "chop is outside the content"));
                        }
                        c.fast_chop = Some((o, l));
                    }
                }
            }
            "pkt_data" => self.cur = Cur::Payload,
            "ipv4.hdr" | "ipv6.hdr" | "tcp.hdr" | "udp.hdr" => {
                let buf = HdrBuffer::from_keyword(kw).ok_or_else(|| fail(kw, "unknown buffer"))?;
                let i = match self.rule.hdr_buffers.iter().position(|h| h.buf == buf) {
                    Some(i) => i,
                    None => {
                        self.rule.hdr_buffers.push(HdrBufferList {
                            buf,
                            list: MatchList::default(),
                        });
                        self.rule.hdr_buffers.len() - 1
                    }
                };
                self.cur = Cur::Header(i);
            }
            "base64_data" => {
                if !self.has_base64_decode() {
                    return Err(fail(kw, "needs a base64_decode before it"));
                }
                self.cur = Cur::Base64;
            }
            "base64_decode" => self.base64_decode(kw, v)?,
            "pcre" => self.pcre(kw, v)?,
            "isdataat" => self.isdataat(kw, v)?,
            "byte_test" => self.byte_test(kw, v)?,
            "byte_jump" => self.byte_jump(kw, v)?,
            "byte_extract" => self.byte_extract(kw, v)?,
            "byte_math" => self.byte_math(kw, v)?,
            "absent" => {
                let mode = match v.map(str::trim) {
                    None | Some("") => Absent::Only,
                    Some("or_else") => Absent::OrElse,
                    Some(o) => return Err(fail(kw, format!("unknown option `{o}`"))),
                };
                let Cur::Buffer(_) = self.cur else {
                    return Err(fail(kw, "needs a sticky buffer"));
                };
                let c = self.cur;
                let list = self.list_mut(c);
                if list.absent.is_some() || !list.items.is_empty() || list.bsize.is_some() {
                    return Err(fail(kw, "must come first in its buffer, once"));
                }
                list.absent = Some(mode);
            }
            "bsize" => {
                let cmp = parse_num_cmp(value_of(kw, v)?).ok_or_else(|| fail(kw, "bad size"))?;
                let Cur::Buffer(_) = self.cur else {
                    return Err(fail(kw, "needs a sticky buffer"));
                };
                let c = self.cur;
                self.list_mut(c).bsize = Some(cmp);
            }
            "dotprefix"
            | "to_lowercase"
            | "to_uppercase"
            | "strip_whitespace"
            | "compress_whitespace"
            | "url_decode"
            | "to_sha256"
            | "to_md5"
            | "to_sha1"
            | "header_lowercase"
            | "strip_pseudo_headers"
            | "from_base64"
            | "zlib_deflate"
            | "pcrexform"
            | "xor" => self.transform(kw, v)?,
            "flow" => self.flow(kw, v)?,
            "flowbits" => self.flowbits(kw, v)?,
            "flowint" => self.flowint(kw, v)?,
            "xbits" => self.xbits(kw, v)?,
            "hostbits" => self.hostbits(kw, v)?,
            "threshold" | "detection_filter" => {
                if self.rule.threshold.is_some() || self.rule.detection_filter.is_some() {
                    return Err(fail(kw, "a rule takes one threshold or detection_filter"));
                }
                let val = value_of(kw, v)?;
                if kw == "threshold" {
                    self.rule.threshold = Some(parse_threshold(kw, val)?);
                } else {
                    self.rule.detection_filter = Some(parse_detection_filter(kw, val)?);
                }
            }
            "ttl" => self.header_num(kw, v, HeaderMatch::Ttl)?,
            "itype" => self.header_num(kw, v, HeaderMatch::IType)?,
            "icode" => self.header_num(kw, v, HeaderMatch::ICode)?,
            "vlan.id" => self.vlan_id(kw, v)?,
            "dsize" => {
                self.header_num(kw, v, HeaderMatch::Dsize)?;
                // dsize is about packets: such rules inspect packets, not the stream.
                self.rule.payload_source = PayloadSource::Packet;
            }
            "ip_proto" => {
                let val = value_of(kw, v)?;
                let cmp = match parse_num_cmp(val) {
                    Some(c) => c,
                    None => {
                        let (neg, name) = negation(val);
                        let n = proto_number(name)
                            .ok_or_else(|| fail(kw, format!("unknown protocol `{name}`")))?;
                        if neg { NumCmp::Ne(n) } else { NumCmp::Eq(n) }
                    }
                };
                self.rule.header.push(HeaderMatch::IpProto { cmp });
            }
            "tos" => {
                let (negated, value) = negatable_int(kw, v, "expected 0-255")?;
                self.rule.header.push(HeaderMatch::Tos { value, negated });
            }
            "id" => {
                let n = int_value(kw, v, "expected a number")?;
                self.rule.header.push(HeaderMatch::IpId(n));
            }
            "ipopts" => {
                let o = match value_of(kw, v)? {
                    "rr" => IpOpt::Rr,
                    "eol" => IpOpt::Eol,
                    "nop" => IpOpt::Nop,
                    "ts" => IpOpt::Ts,
                    "sec" => IpOpt::Sec,
                    "esec" => IpOpt::Esec,
                    "lsrr" | "lsrre" => IpOpt::Lsrr,
                    "ssrr" => IpOpt::Ssrr,
                    "satid" => IpOpt::Satid,
                    "any" => IpOpt::Any,
                    other => return Err(fail(kw, format!("unknown option `{other}`"))),
                };
                self.rule.header.push(HeaderMatch::IpOpt(o));
            }
            "sameip" => self.rule.header.push(HeaderMatch::SameIp),
            "flags" => {
                let f = parse_flags(value_of(kw, v)?).map_err(|e| fail(kw, e))?;
                self.rule.header.push(HeaderMatch::Flags(f));
                // Like `dsize`, TCP flags are about packets: Suricata makes such rules
                // require the packet, so their content is matched on the packet's
                // payload (e.g. the data of a TCP Fast Open SYN), not the stream.
                if self.rule.payload_source == PayloadSource::Any {
                    self.rule.payload_source = PayloadSource::Packet;
                }
            }
            "fragbits" => {
                let f = parse_fragbits(value_of(kw, v)?).map_err(|e| fail(kw, e))?;
                self.rule.header.push(HeaderMatch::FragBits(f));
            }
            "fragoffset" => {
                let cmp = parse_num_cmp(value_of(kw, v)?).ok_or_else(|| fail(kw, "bad offset"))?;
                self.rule.header.push(HeaderMatch::FragOffset { cmp });
            }
            "seq" | "ack" => {
                let n = int_value(kw, v, "expected a 32-bit number")?;
                self.rule.header.push(if kw == "seq" {
                    HeaderMatch::Seq(n)
                } else {
                    HeaderMatch::Ack(n)
                });
            }
            "window" => {
                let (negated, value) = negatable_int(kw, v, "expected 0-65535")?;
                self.rule
                    .header
                    .push(HeaderMatch::Window { value, negated });
            }
            "icmp_id" | "icmp_seq" => {
                let n = int_value(kw, v, "expected 0-65535")?;
                self.rule.header.push(if kw == "icmp_id" {
                    HeaderMatch::IcmpId(n)
                } else {
                    HeaderMatch::IcmpSeq(n)
                });
            }
            "stream_size" => {
                let args = split_args(value_of(kw, v)?);
                let [side, op, n] = args[..] else {
                    return Err(fail(kw, "expected side,operator,number"));
                };
                let side = match side {
                    "server" => 0,
                    "client" => 1,
                    "both" => 2,
                    "either" => 3,
                    other => return Err(fail(kw, format!("unknown side `{other}`"))),
                };
                let cmp =
                    parse_num_cmp(&format!("{op}{n}")).ok_or_else(|| fail(kw, "bad comparison"))?;
                self.rule.header.push(HeaderMatch::StreamSize { side, cmp });
            }
            "app-layer-protocol" => {
                let val = value_of(kw, v)?;
                let (val, mode) = match val.split_once(',') {
                    None => (val, ProtoMode::Flow),
                    Some((p, m)) => (
                        p.trim(),
                        match m.trim() {
                            "final" | "original" => ProtoMode::Flow,
                            "to_server" => ProtoMode::ToServer,
                            "to_client" => ProtoMode::ToClient,
                            "either" => ProtoMode::Either,
                            "direction" => ProtoMode::Direction,
                            other => return Err(fail(kw, format!("unknown mode `{other}`"))),
                        },
                    ),
                };
                let (negated, name) = negation(val);
                let proto = match name {
                    "failed" => AppProto::Failed,
                    "unknown" => AppProto::Unknown,
                    n => AppProto::from_rule_proto(n).ok_or_else(|| {
                        fail(kw, format!("protocol `{n}` is not parsed by Meerkat"))
                    })?,
                };
                self.rule.header.push(HeaderMatch::AppLayerProtocol {
                    proto,
                    negated,
                    mode,
                });
            }
            "app-layer-event" => {
                let name = value_of(kw, v)?;
                match app::events::lookup(name).map_err(|e| fail(kw, e))? {
                    app::events::EventRef::Packet(bit) => {
                        self.rule.header.push(HeaderMatch::AppLayerEvent(bit));
                    }
                    app::events::EventRef::Tx(proto, name) => {
                        self.require_app(kw, proto)?;
                        self.rule.tx_checks.push(TxCheck::AppEvent(name));
                    }
                }
            }
            "decode-event" => {
                let name = value_of(kw, v)?;
                let ev =
                    meerkat_wire::decode::DecodeEvent::by_rule_name(name).ok_or_else(|| {
                        fail(
                            kw,
                            format!("event `{name}` is not raised by Meerkat's decoder"),
                        )
                    })?;
                self.rule.header.push(HeaderMatch::DecodeEvent(ev.bit()));
            }
            // `prefilter` picks the keyword Suricata's prefilter engine uses for the rule;
            // it does not change what the rule matches.
            "prefilter" => {
                if v.is_some() {
                    return Err(fail(kw, "takes no value"));
                }
            }
            other => return Err(fail(other, "keyword not supported")),
        }
        Ok(())
    }

    /// A protocol's keyword that is not a sticky buffer, as its descriptor says.
    fn protocol_keyword(
        &mut self,
        kw: &str,
        v: Option<&str>,
        desc: &'static app::Descriptor,
        def: &'static app::KeywordDef,
    ) -> Result<(), Fail> {
        match def.kind {
            KeywordKind::Check { parse, eval } => {
                self.require_app(kw, desc.proto)?;
                let value = parse(v).map_err(|e| fail(kw, e))?;
                self.rule.tx_checks.push(TxCheck::Keyword {
                    name: def.name,
                    value,
                    eval,
                });
            }
            KeywordKind::BufferContent {
                buffer,
                nocase,
                extension,
            } => {
                self.legacy_buffer_content(kw, v, buffer, nocase)?;
                if extension {
                    // `fileext:"pdf"`: the buffer ends with `.pdf`.
                    let list = self.rule.buffers.last_mut().map(|b| &mut b.list.items);
                    let Some([Match::Content(c)]) = list.map(|l| &mut l[..]) else {
                        return Err(fail(kw, "no content"));
                    };
                    c.pattern.insert(0, b'.');
                    c.endswith = true;
                }
            }
            KeywordKind::ContentIn { buffer } => {
                let def = app::buffers::sticky(buffer).ok_or_else(|| fail(kw, "no such buffer"))?;
                self.switch_buffer(def)?;
                self.content(kw, v)?;
                self.cur = Cur::Payload;
            }
            KeywordKind::Size { buffer, raw_buffer } => {
                let val = value_of(kw, v)?;
                // Suricata allows blanks around the comma (`urilen:15, norm;`).
                let (cmp, raw) = match val.split_once(',').map(|(c, m)| (c.trim(), m.trim())) {
                    Some((c, "raw")) => (c, true),
                    Some((c, "norm")) => (c, false),
                    Some(_) => return Err(fail(kw, "expected raw or norm after the comma")),
                    None => (val, false),
                };
                let cmp = parse_num_cmp(cmp).ok_or_else(|| fail(kw, "bad length"))?;
                let def = app::buffers::sticky(if raw { raw_buffer } else { buffer })
                    .ok_or_else(|| fail(kw, "no such buffer"))?;
                let saved = self.cur;
                self.switch_buffer(def)?;
                let c = self.cur;
                let list = self.list_mut(c);
                if list.bsize.is_some() {
                    return Err(fail(
                        kw,
                        format!("the {} buffer already has a size check", def.name),
                    ));
                }
                list.bsize = Some(cmp);
                self.cur = saved;
            }
            KeywordKind::Marker => self.require_app(kw, desc.proto)?,
        }
        Ok(())
    }

    fn has_base64_decode(&self) -> bool {
        let has = |l: &MatchList| l.items.iter().any(|m| matches!(m, Match::Base64Decode(_)));
        has(&self.rule.payload) || self.rule.buffers.iter().any(|b| has(&b.list))
    }

    fn content(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let raw = value_of(kw, v)?;
        let (negated, raw) = negatable_quoted(kw, raw)?;
        let pattern = super::decode_content(&parse::unquote(raw)).map_err(|e| fail(kw, e))?;
        if pattern.len() > MAX_CONTENT {
            return Err(fail(kw, "longer than 65535 bytes"));
        }
        self.push(Match::Content(Content::plain(pattern, false, negated)));
        Ok(())
    }

    /// A legacy keyword with a quoted value (`tls.subject:"CN=x"`, `tls.issuerdn:!"y"`):
    /// a content on buffer `buffer`, in a list of its own (other keywords of the rule
    /// and their sticky-buffer state are unaffected).
    fn legacy_buffer_content(
        &mut self,
        kw: &str,
        v: Option<&str>,
        buffer: &str,
        nocase: bool,
    ) -> Result<(), Fail> {
        let def = app::buffers::sticky(buffer).ok_or_else(|| fail(kw, "no such buffer"))?;
        self.require_app(kw, def.proto)?;
        let raw = value_of(kw, v)?;
        let (negated, raw) = negatable_quoted(kw, raw)?;
        let mut pattern = parse::unquote(raw).into_bytes();
        if pattern.is_empty() || pattern.len() > MAX_CONTENT {
            return Err(fail(kw, "needs 1 to 65535 bytes"));
        }
        if nocase {
            pattern.make_ascii_lowercase();
        }
        self.rule.buffers.push(BufferList {
            def,
            transforms: Vec::new(),
            list: MatchList {
                items: vec![Match::Content(Content::plain(pattern, nocase, negated))],
                bsize: None,
                absent: None,
            },
        });
        self.legacy_lists.push(self.rule.buffers.len() - 1);
        // Content modifiers cannot apply to it (Suricata: "can't use nocase").
        self.last_content = None;
        Ok(())
    }

    /// `content:"x"; http_uri;` moves the content to the http.uri list.
    fn legacy_modifier(&mut self, kw: &str, def: &'static BufferDef) -> Result<(), Fail> {
        let (c, i) = self
            .last_content
            .ok_or_else(|| fail(kw, "must follow a content"))?;
        if c != Cur::Payload {
            return Err(fail(kw, "the content is already in a sticky buffer"));
        }
        let m = self.rule.payload.items.remove(i);
        let saved = self.cur;
        self.switch_buffer(def)?;
        let b = self.cur;
        self.list_mut(b).items.push(m);
        let idx = self.list_mut(b).items.len() - 1;
        self.last_content = Some((b, idx));
        self.last_payload = Some(b);
        self.cur = saved;
        Ok(())
    }

    fn transform(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let Cur::Buffer(mut i) = self.cur else {
            return Err(fail(kw, "transforms need a sticky buffer before them"));
        };
        if !self.rule.buffers[i].list.items.is_empty() {
            // A transform after matches starts a second, transformed instance of the
            // buffer; the matches after it inspect that one (both must match).
            let def = self.rule.buffers[i].def;
            let transforms = self.rule.buffers[i].transforms.clone();
            self.rule.buffers.push(BufferList {
                def,
                transforms,
                list: MatchList::default(),
            });
            i = self.rule.buffers.len() - 1;
            self.cur = Cur::Buffer(i);
        }
        let t = match kw {
            "dotprefix" => Transform::DotPrefix,
            "to_lowercase" => Transform::ToLowercase,
            "to_uppercase" => Transform::ToUppercase,
            "strip_whitespace" => Transform::StripWhitespace,
            "compress_whitespace" => Transform::CompressWhitespace,
            "url_decode" => Transform::UrlDecode,
            "to_sha256" => Transform::ToSha256,
            "to_md5" => Transform::ToMd5,
            "to_sha1" => Transform::ToSha1,
            "header_lowercase" => Transform::HeaderLowercase,
            "strip_pseudo_headers" => Transform::StripPseudoHeaders,
            "from_base64" => {
                let (mut offset, mut bytes, mut mode) = (0u32, 0u32, Base64Mode::Rfc4648);
                for opt in split_args(v.unwrap_or("")) {
                    let (name, val) = opt
                        .split_once(' ')
                        .map_or((opt, ""), |(n, x)| (n, x.trim()));
                    let num = || {
                        parse_u64(val)
                            .and_then(|n| u32::try_from(n).ok())
                            .ok_or_else(|| fail(kw, format!("bad {name} `{val}`")))
                    };
                    match name {
                        "offset" => offset = num()?,
                        "bytes" => bytes = num()?,
                        "mode" => {
                            mode = match val.to_ascii_lowercase().as_str() {
                                "rfc4648" => Base64Mode::Rfc4648,
                                "rfc2045" => Base64Mode::Rfc2045,
                                "strict" => Base64Mode::Strict,
                                other => return Err(fail(kw, format!("unknown mode `{other}`"))),
                            }
                        }
                        other => return Err(fail(kw, format!("unknown option `{other}`"))),
                    }
                }
                Transform::FromBase64 {
                    offset,
                    bytes,
                    mode,
                }
            }
            "zlib_deflate" => {
                let mut max_size = crate::transforms::DEFAULT_ZLIB_MAX;
                for opt in split_args(v.unwrap_or("")) {
                    let (name, val) = opt
                        .split_once(' ')
                        .map_or((opt, ""), |(n, x)| (n, x.trim()));
                    match name {
                        "max-size" => {
                            max_size = parse_u64(val)
                                .and_then(|n| u32::try_from(n).ok())
                                .filter(|&n| n > 0)
                                .ok_or_else(|| fail(kw, format!("bad max-size `{val}`")))?
                        }
                        other => return Err(fail(kw, format!("unknown option `{other}`"))),
                    }
                }
                Transform::ZlibDeflate { max_size }
            }
            "pcrexform" => {
                let source = parse::unquote(value_of(kw, v)?);
                let mut b = pcre2::bytes::RegexBuilder::new();
                b.jit_if_available(true);
                let regex = b
                    .build(&source)
                    .map_err(|e| fail(kw, format!("bad regex: {e}")))?;
                Transform::PcreXform(PcreXform {
                    source,
                    regex: Arc::new(regex),
                })
            }
            _ => {
                let key = value_of(kw, v)?.trim_matches('"');
                let bytes = (0..key.len())
                    .step_by(2)
                    .map(|i| {
                        key.get(i..i + 2)
                            .and_then(|h| u8::from_str_radix(h, 16).ok())
                    })
                    .collect::<Option<Vec<u8>>>()
                    .filter(|b| !b.is_empty() && key.len() % 2 == 0)
                    .ok_or_else(|| fail(kw, "expected a hex key"))?;
                Transform::Xor(bytes)
            }
        };
        self.rule.buffers[i].transforms.push(t);
        Ok(())
    }

    fn pcre(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let (negated, raw) = negation(value_of(kw, v)?);
        // Suricata takes the regex quoted or not (`pcre:/x/U;`).
        let inner = match raw.strip_prefix('"') {
            Some(s) => s
                .strip_suffix('"')
                .ok_or_else(|| fail(kw, "the closing quote is missing"))?,
            None => raw,
        };
        let body = inner
            .strip_prefix('/')
            .ok_or_else(|| fail(kw, "expected /regex/flags"))?;
        let end = body
            .rfind('/')
            .ok_or_else(|| fail(kw, "expected /regex/flags"))?;
        let (pattern, flags) = (&body[..end], &body[end + 1..]);
        let mut b = pcre2::bytes::RegexBuilder::new();
        b.jit_if_available(true);
        let mut relative = false;
        let mut anchored = false;
        let mut ungreedy = false;
        let mut buffer: Option<&'static str> = None;
        for f in flags.chars() {
            match f {
                'i' => {
                    b.caseless(true);
                }
                's' => {
                    b.dotall(true);
                }
                'm' => {
                    b.multi_line(true);
                }
                'x' => {
                    b.extended(true);
                }
                'A' => anchored = true,
                'E' => {} // dollar-endonly: handled below by rewriting
                'G' => ungreedy = true,
                'R' => relative = true,
                'O' | 'B' => {} // match-limit override; rawbytes: no effect on meaning here
                'U' => buffer = Some("http.uri"),
                'I' => buffer = Some("http.uri.raw"),
                'P' => buffer = Some("http.request_body"),
                'Q' => buffer = Some("http.response_body"),
                'H' => buffer = Some("http.header"),
                'D' => buffer = Some("http.header.raw"),
                'M' => buffer = Some("http.method"),
                'C' => buffer = Some("http.cookie"),
                'S' => buffer = Some("http.stat_code"),
                'Y' => buffer = Some("http.stat_msg"),
                'V' => buffer = Some("http.user_agent"),
                'W' => buffer = Some("http.host"),
                'Z' => buffer = Some("http.host.raw"),
                other => return Err(fail(kw, format!("unknown flag `{other}`"))),
            }
        }
        let mut source = pattern.to_string();
        if flags.contains('E') {
            // PCRE2_DOLLAR_ENDONLY: `$` matches only at the very end.
            source = format!("(?:{source})(?-m)");
        }
        if ungreedy {
            source = format!("(?U){source}");
        }
        if anchored {
            source = format!("\\G(?:{source})");
        }
        let regex = b
            .build(&source)
            .map_err(|e| fail(kw, format!("bad regex: {e}")))?;
        let m = Match::Pcre(Pcre {
            source: raw.to_string(),
            regex: Arc::new(regex),
            negated,
            relative,
            anchored,
        });
        match buffer {
            Some(name) => {
                let def = app::buffers::sticky(name).ok_or_else(|| fail(kw, "no such buffer"))?;
                let saved = self.cur;
                self.switch_buffer(def)?;
                self.push(m);
                self.cur = saved;
            }
            None if relative => self.push_relative(m),
            None => self.push(m),
        }
        Ok(())
    }

    fn isdataat(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let first = args.first().ok_or_else(|| fail(kw, "needs a value"))?;
        let (negated, n) = negation(first);
        let offset = self.var_or_const(kw, n)?;
        let mut relative = false;
        for a in &args[1..] {
            match *a {
                "relative" => relative = true,
                "rawbytes" => {}
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        let m = Match::IsDataAt(IsDataAt {
            offset,
            relative,
            negated,
        });
        if relative {
            self.push_relative(m);
        } else {
            self.push(m);
        }
        Ok(())
    }

    /// Reads the common trailing options of the byte keywords.
    fn byte_opts(
        &mut self,
        kw: &str,
        read: &mut ByteRead,
        opts: &[&str],
    ) -> Result<Vec<(String, String)>, Fail> {
        let mut rest = Vec::new();
        let mut i = 0;
        while i < opts.len() {
            let o = opts[i];
            let (name, arg) = match o.split_once(' ') {
                Some((n, a)) => (n.trim(), Some(a.trim())),
                None => (o, None),
            };
            match (name, arg) {
                ("relative", None) => read.relative = true,
                ("big", None) => read.big_endian = true,
                ("little", None) => read.big_endian = false,
                ("string", None) => {
                    if read.base == NumBase::Binary {
                        read.base = NumBase::Dec;
                    }
                }
                ("string", Some(b)) | ("endian", Some(b))
                    if name == "string" || matches!(b, "big" | "little") =>
                {
                    match b {
                        "hex" => read.base = NumBase::Hex,
                        "dec" => read.base = NumBase::Dec,
                        "oct" => read.base = NumBase::Oct,
                        "big" => read.big_endian = true,
                        "little" => read.big_endian = false,
                        other => return Err(fail(kw, format!("unknown encoding `{other}`"))),
                    }
                }
                ("hex", None) => read.base = NumBase::Hex,
                ("dec", None) => read.base = NumBase::Dec,
                ("oct", None) => read.base = NumBase::Oct,
                ("dce", None) => return Err(fail(kw, "dce is not supported (no DCERPC parser)")),
                ("bitmask", Some(m)) => {
                    read.bitmask = Some(parse_u64(m).ok_or_else(|| fail(kw, "bad bitmask"))?);
                }
                (n, a) => rest.push((n.to_string(), a.unwrap_or("").to_string())),
            }
            i += 1;
        }
        // byte_jump reads zero bytes when told to (a jump by post_offset alone), or a
        // count taken from a variable (checked when the rule runs); Suricata accepts both.
        let min = if kw == "byte_jump" { 0 } else { 1 };
        if read.base != NumBase::Binary && read.nbytes > 20 {
            return Err(fail(kw, "string numbers are at most 20 bytes"));
        }
        if read.base == NumBase::Binary && !(min..=8).contains(&read.nbytes) {
            return Err(fail(
                kw,
                format!("binary numbers are {min} to 8 bytes, not {}", read.nbytes),
            ));
        }
        Ok(rest)
    }

    fn byte_test(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.len() < 4 {
            return Err(fail(kw, "expected bytes,operator,value,offset[,options]"));
        }
        let nbytes: u8 = args[0].parse().map_err(|_| fail(kw, "bad byte count"))?;
        let (negated, op) = match args[1].strip_prefix('!') {
            Some(r) if !r.is_empty() && r != "=" => (true, r),
            Some(_) => (true, "="),
            None => (false, args[1]),
        };
        let op = match op {
            "<" => ByteOp::Lt,
            ">" => ByteOp::Gt,
            "=" => ByteOp::Eq,
            "<=" => ByteOp::Le,
            ">=" => ByteOp::Ge,
            "&" => ByteOp::And,
            "^" => ByteOp::Xor,
            other => return Err(fail(kw, format!("unknown operator `{other}`"))),
        };
        let value = match parse_u64(args[2]) {
            Some(n) => Value::Const(n as i64),
            None => self.var_or_const(kw, args[2])?,
        };
        let offset = self.var_or_const(kw, args[3])?;
        let mut read = byte_read(nbytes, offset);
        let rest = self.byte_opts(kw, &mut read, &args[4..])?;
        if let Some((n, _)) = rest.first() {
            return Err(fail(kw, format!("unknown option `{n}`")));
        }
        self.push_maybe_relative(Match::ByteTest(ByteTest {
            read,
            op,
            negated,
            value,
        }));
        Ok(())
    }

    fn byte_jump(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.len() < 2 {
            return Err(fail(kw, "expected bytes,offset[,options]"));
        }
        // The count may be a byte_extract variable (Suricata 7).
        let (nbytes, nbytes_var) = match args[0].parse::<u8>() {
            Ok(n) => (n, None),
            Err(_) => match self.var_or_const(kw, args[0]) {
                Ok(Value::Var(i)) => (0, Some(i)),
                _ => return Err(fail(kw, format!("bad byte count `{}`", args[0]))),
            },
        };
        let offset = self.var_or_const(kw, args[1])?;
        let mut read = byte_read(nbytes, offset);
        let rest = self.byte_opts(kw, &mut read, &args[2..])?;
        let mut j = ByteJump {
            read,
            multiplier: 1,
            align: false,
            from_beginning: false,
            from_end: false,
            post_offset: 0,
            nbytes_var,
        };
        for (n, a) in rest {
            match (n.as_str(), a.as_str()) {
                ("multiplier", m) => {
                    j.multiplier = m.parse().map_err(|_| fail(kw, "bad multiplier"))?
                }
                ("align", "") => j.align = true,
                ("from_beginning", "") => j.from_beginning = true,
                ("from_end", "") => j.from_end = true,
                ("post_offset", p) => {
                    j.post_offset = p.parse().map_err(|_| fail(kw, "bad post_offset"))?
                }
                (n, _) => return Err(fail(kw, format!("unknown option `{n}`"))),
            }
        }
        if j.from_beginning && j.from_end {
            return Err(fail(kw, "from_beginning and from_end exclude each other"));
        }
        self.push_maybe_relative(Match::ByteJump(j));
        Ok(())
    }

    fn byte_extract(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.len() < 3 {
            return Err(fail(kw, "expected bytes,offset,name[,options]"));
        }
        let nbytes: u8 = args[0].parse().map_err(|_| fail(kw, "bad byte count"))?;
        let offset = Value::Const(args[1].parse().map_err(|_| fail(kw, "bad offset"))?);
        let mut read = byte_read(nbytes, offset);
        let rest = self.byte_opts(kw, &mut read, &args[3..])?;
        let var = self.new_var(kw, args[2])?;
        let mut e = ByteExtract {
            read,
            multiplier: 1,
            align: 0,
            var,
        };
        for (n, a) in rest {
            match (n.as_str(), a.as_str()) {
                ("multiplier", m) => {
                    e.multiplier = m.parse().map_err(|_| fail(kw, "bad multiplier"))?
                }
                ("align", a) => {
                    e.align = match a {
                        "2" => 2,
                        "4" => 4,
                        _ => return Err(fail(kw, "align is 2 or 4")),
                    }
                }
                (n, _) => return Err(fail(kw, format!("unknown option `{n}`"))),
            }
        }
        self.push_maybe_relative(Match::ByteExtract(e));
        Ok(())
    }

    fn byte_math(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let mut nbytes = None;
        let mut offset = None;
        let mut op = None;
        let mut rvalue = None;
        let mut result = None;
        let mut read = byte_read(0, Value::Const(0));
        let mut others: Vec<&str> = Vec::new();
        for a in &args {
            let (n, val) = option_pair(a);
            match n {
                "bytes" => nbytes = Some(val.parse::<u8>().map_err(|_| fail(kw, "bad bytes"))?),
                "offset" => offset = Some(self.var_or_const(kw, val)?),
                "oper" => {
                    op = Some(match val {
                        "+" => MathOp::Add,
                        "-" => MathOp::Sub,
                        "*" => MathOp::Mul,
                        "/" => MathOp::Div,
                        "<<" => MathOp::Shl,
                        ">>" => MathOp::Shr,
                        other => return Err(fail(kw, format!("unknown operator `{other}`"))),
                    })
                }
                "rvalue" => {
                    rvalue = Some(match parse_u64(val) {
                        Some(n) => Value::Const(n as i64),
                        None => self.var_or_const(kw, val)?,
                    })
                }
                "result" => result = Some(val.to_string()),
                _ => others.push(a),
            }
        }
        read.nbytes = nbytes.ok_or_else(|| fail(kw, "needs bytes"))?;
        read.offset = offset.ok_or_else(|| fail(kw, "needs offset"))?;
        let rest = self.byte_opts(kw, &mut read, &others)?;
        if let Some((n, _)) = rest.first() {
            return Err(fail(kw, format!("unknown option `{n}`")));
        }
        let var = self.new_var(kw, &result.ok_or_else(|| fail(kw, "needs result"))?)?;
        self.push_maybe_relative(Match::ByteMath(ByteMath {
            read,
            op: op.ok_or_else(|| fail(kw, "needs oper"))?,
            rvalue: rvalue.ok_or_else(|| fail(kw, "needs rvalue"))?,
            var,
        }));
        Ok(())
    }

    fn base64_decode(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let mut d = Base64Decode {
            bytes: None,
            offset: 0,
            relative: false,
        };
        for a in v.map(split_args).unwrap_or_default() {
            let (n, val) = option_pair(a);
            match n {
                "bytes" => d.bytes = Some(val.parse().map_err(|_| fail(kw, "bad bytes"))?),
                "offset" => d.offset = val.parse().map_err(|_| fail(kw, "bad offset"))?,
                "relative" => d.relative = true,
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        self.push(Match::Base64Decode(d));
        Ok(())
    }

    /// `vlan.id:[op]id[,layer]`: layer is 0 to 2, -3 to -1, `any` or `all`
    /// (Suricata's three VLAN layers); ids are 0 to 4095.
    fn vlan_id(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let val = value_of(kw, v)?;
        let (id, layer) = match val.split_once(',') {
            Some((a, b)) => (a, Some(b.trim())),
            None => (val, None),
        };
        let cmp = parse_num_cmp(id).ok_or_else(|| fail(kw, format!("bad id `{}`", id.trim())))?;
        let max = match cmp {
            NumCmp::Eq(n)
            | NumCmp::Ne(n)
            | NumCmp::Lt(n)
            | NumCmp::Le(n)
            | NumCmp::Gt(n)
            | NumCmp::Ge(n) => n,
            NumCmp::Between(_, b) | NumCmp::NotBetween(_, b) => b,
            NumCmp::MaskEq(..) | NumCmp::MaskNe(..) => {
                return Err(fail(kw, "bitmask comparisons are not supported"));
            }
        };
        if max > 4095 {
            return Err(fail(kw, format!("id {max} is outside 0 to 4095")));
        }
        let layer = match layer {
            None | Some("any") => VlanLayer::Any,
            Some("all") => VlanLayer::All,
            Some(l) => match l.parse::<i8>() {
                Ok(i) if (-3..=2).contains(&i) => VlanLayer::Index(i),
                _ => {
                    return Err(fail(
                        kw,
                        format!("bad layer `{l}` (0 to 2, -3 to -1, any, all)"),
                    ));
                }
            },
        };
        self.rule.header.push(HeaderMatch::VlanId { cmp, layer });
        Ok(())
    }

    fn header_num(
        &mut self,
        kw: &str,
        v: Option<&str>,
        f: fn(NumCmp) -> HeaderMatch,
    ) -> Result<(), Fail> {
        let cmp = parse_num_cmp(value_of(kw, v)?).ok_or_else(|| fail(kw, "bad number"))?;
        self.rule.header.push(f(cmp));
        Ok(())
    }

    fn flow(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        for a in split_args(value_of(kw, v)?) {
            let f = &mut self.rule.flow;
            match a {
                "established" => f.established = Some(true),
                "not_established" => f.established = Some(false),
                "stateless" => f.stateless = true,
                "to_server" | "from_client" => f.to_server = Some(true),
                "to_client" | "from_server" => f.to_server = Some(false),
                "only_stream" => self.rule.payload_source = PayloadSource::Stream,
                "no_stream" => self.rule.payload_source = PayloadSource::Packet,
                "only_frag" => f.frag = Some(true),
                "no_frag" => f.frag = Some(false),
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        Ok(())
    }

    fn flowbits(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let val = value_of(kw, v)?;
        let (cmd, names) = match val.split_once(',') {
            Some((c, n)) => (c.trim(), Some(n.trim())),
            None => (val.trim(), None),
        };
        if cmd == "noalert" {
            self.rule.noalert = true;
            return Ok(());
        }
        let names = names.ok_or_else(|| fail(kw, format!("{cmd} needs a name")))?;
        let ids = names
            .split(['|', '&'])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(|n| self.names.intern(0, n).map_err(|e| fail(kw, e)))
            .collect::<Result<Vec<u16>, Fail>>()?;
        if ids.is_empty() {
            return Err(fail(kw, "needs a name"));
        }
        let and = names.contains('&');
        let c = match cmd {
            "set" => FlowbitCmd::Set(ids),
            "unset" => FlowbitCmd::Unset(ids),
            "toggle" => FlowbitCmd::Toggle(ids),
            // `a&b` (all set) is written as one check per name; `a|b` as one check.
            "isset" | "isnotset" if and => {
                let check: fn(Vec<u16>) -> FlowbitCmd = if cmd == "isset" {
                    FlowbitCmd::IsSet
                } else {
                    FlowbitCmd::IsNotSet
                };
                self.rule
                    .flowbits
                    .extend(ids.into_iter().map(|i| check(vec![i])));
                return Ok(());
            }
            "isset" => FlowbitCmd::IsSet(ids),
            "isnotset" => FlowbitCmd::IsNotSet(ids),
            other => return Err(fail(kw, format!("unknown command `{other}`"))),
        };
        self.rule.flowbits.push(c);
        Ok(())
    }

    fn flowint(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let name = *args.first().ok_or_else(|| fail(kw, "needs a name"))?;
        let id = self.names.intern(1, name).map_err(|e| fail(kw, e))?;
        let op = *args.get(1).ok_or_else(|| fail(kw, "needs an operation"))?;
        let operand = |b: &mut Self| -> Result<IntOperand, Fail> {
            let a = *args
                .get(2)
                .ok_or_else(|| fail(kw, format!("{op} needs a value")))?;
            Ok(match parse_u64(a) {
                Some(n) => IntOperand::Const(n),
                None => IntOperand::Var(b.names.intern(1, a).map_err(|e| fail(kw, e))?),
            })
        };
        let c = match op {
            "=" => FlowintCmd::Assign(id, operand(self)?),
            "+" | "+=" => FlowintCmd::Add(id, operand(self)?),
            "-" | "-=" => FlowintCmd::Sub(id, operand(self)?),
            "==" => FlowintCmd::Compare(id, NumCmpOp::Eq, operand(self)?),
            "!=" => FlowintCmd::Compare(id, NumCmpOp::Ne, operand(self)?),
            "<" => FlowintCmd::Compare(id, NumCmpOp::Lt, operand(self)?),
            "<=" => FlowintCmd::Compare(id, NumCmpOp::Le, operand(self)?),
            ">" => FlowintCmd::Compare(id, NumCmpOp::Gt, operand(self)?),
            ">=" => FlowintCmd::Compare(id, NumCmpOp::Ge, operand(self)?),
            "isset" => FlowintCmd::IsSet(id),
            "notset" | "isnotset" => FlowintCmd::NotSet(id),
            other => return Err(fail(kw, format!("unknown operation `{other}`"))),
        };
        self.rule.flowints.push(c);
        Ok(())
    }

    fn xbits(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        let [cmd, name, rest @ ..] = &args[..] else {
            return Err(fail(kw, "expected command,name,track <type>[,expire <s>]"));
        };
        if *cmd == "noalert" {
            self.rule.noalert = true;
            return Ok(());
        }
        let op = xbit_op(kw, cmd)?;
        let mut track = None;
        let mut expire_s = 0;
        for r in rest {
            let (n, val) = option_pair(r);
            match n {
                "track" => {
                    track = Some(match val {
                        "ip_src" => XbitTrack::IpSrc,
                        "ip_dst" => XbitTrack::IpDst,
                        "ip_pair" => XbitTrack::IpPair,
                        other => return Err(fail(kw, format!("unknown track `{other}`"))),
                    })
                }
                "expire" => expire_s = val.parse().map_err(|_| fail(kw, "bad expire"))?,
                other => return Err(fail(kw, format!("unknown option `{other}`"))),
            }
        }
        let name = self.names.intern(2, name).map_err(|e| fail(kw, e))?;
        self.rule.xbits.push(XbitCmd {
            op,
            name,
            track: track.ok_or_else(|| fail(kw, "needs track"))?,
            expire_s,
        });
        Ok(())
    }

    /// `hostbits:<cmd>,<name>[,src|dst][,expire <s>]`: bits on a host, which are xbits
    /// tracked by the source (the default) or destination address, as in Suricata.
    fn hostbits(&mut self, kw: &str, v: Option<&str>) -> Result<(), Fail> {
        let args = split_args(value_of(kw, v)?);
        if args.as_slice() == ["noalert"] {
            self.rule.noalert = true;
            return Ok(());
        }
        let [cmd, name, rest @ ..] = &args[..] else {
            return Err(fail(kw, "expected command,name[,src|dst][,expire <s>]"));
        };
        let op = xbit_op(kw, cmd)?;
        let mut track = XbitTrack::IpSrc;
        let mut expire_s = 0;
        for r in rest {
            match r.split_once(' ').map(|(n, v)| (n.trim(), v.trim())) {
                Some(("expire", val)) => {
                    expire_s = val.parse().map_err(|_| fail(kw, "bad expire"))?;
                }
                None if *r == "src" => track = XbitTrack::IpSrc,
                None if *r == "dst" => track = XbitTrack::IpDst,
                _ => return Err(fail(kw, format!("unsupported option `{r}`"))),
            }
        }
        let name = self.names.intern(2, name).map_err(|e| fail(kw, e))?;
        self.rule.xbits.push(XbitCmd {
            op,
            name,
            track,
            expire_s,
        });
        Ok(())
    }
}

fn num<T: std::str::FromStr>(kw: &str, v: Option<&str>) -> Result<T, Fail> {
    let s = value_of(kw, v)?;
    parse::unquote(s)
        .trim()
        .parse()
        .map_err(|_| fail(kw, format!("`{s}` is not a number")))
}

fn proto_number(name: &str) -> Option<u64> {
    Some(match name.to_ascii_lowercase().as_str() {
        "ip" | "hopopt" => 0,
        "icmp" => 1,
        "igmp" => 2,
        "tcp" => 6,
        "udp" => 17,
        "ipv6" => 41,
        "gre" => 47,
        "esp" => 50,
        "ah" => 51,
        "ipv6-icmp" | "icmpv6" => 58,
        "sctp" => 132,
        _ => return None,
    })
}

/// The command of `xbits`/`hostbits`.
fn xbit_op(kw: &str, cmd: &str) -> Result<XbitOp, Fail> {
    Ok(match cmd {
        "set" => XbitOp::Set,
        "unset" => XbitOp::Unset,
        "toggle" => XbitOp::Toggle,
        "isset" => XbitOp::IsSet,
        "isnotset" => XbitOp::IsNotSet,
        other => return Err(fail(kw, format!("unknown command `{other}`"))),
    })
}

fn parse_track(s: &str) -> Option<Track> {
    Some(match s {
        "by_src" => Track::BySrc,
        "by_dst" => Track::ByDst,
        "by_rule" => Track::ByRule,
        "by_both" => Track::ByBoth,
        "by_flow" => Track::ByFlow,
        _ => return None,
    })
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

/// The `track`, `count` and `seconds` options that `threshold` and `detection_filter`
/// share, all required; `own` takes the keyword's other options (name, value) and says
/// whether it knew the name.
fn parse_rate_args(
    kw: &str,
    v: &str,
    mut own: impl FnMut(&str, &str) -> Result<bool, Fail>,
) -> Result<(Track, u32, u32), Fail> {
    let mut track = None;
    let mut count = None;
    let mut seconds = None;
    for a in split_args(v) {
        let (n, val) = option_pair(a);
        match n {
            "track" => {
                track = Some(
                    parse_track(val).ok_or_else(|| fail(kw, format!("unknown track `{val}`")))?,
                )
            }
            "count" => count = Some(val.parse().map_err(|_| fail(kw, "bad count"))?),
            "seconds" => seconds = Some(val.parse().map_err(|_| fail(kw, "bad seconds"))?),
            other => {
                if !own(other, val)? {
                    return Err(fail(kw, format!("unknown option `{other}`")));
                }
            }
        }
    }
    Ok((
        track.ok_or_else(|| fail(kw, "needs track"))?,
        count.ok_or_else(|| fail(kw, "needs count"))?,
        seconds.ok_or_else(|| fail(kw, "needs seconds"))?,
    ))
}

fn parse_threshold(kw: &str, v: &str) -> Result<Threshold, Fail> {
    let mut kind = None;
    let (track, count, seconds) = parse_rate_args(kw, v, |n, val| {
        if n != "type" {
            return Ok(false);
        }
        kind = Some(match val {
            "limit" => ThresholdKind::Limit,
            "threshold" => ThresholdKind::Threshold,
            "both" => ThresholdKind::Both,
            other => return Err(fail(kw, format!("unknown type `{other}`"))),
        });
        Ok(true)
    })?;
    Ok(Threshold {
        kind: kind.ok_or_else(|| fail(kw, "needs type"))?,
        track,
        count,
        seconds,
    })
}

fn parse_detection_filter(kw: &str, v: &str) -> Result<DetectionFilter, Fail> {
    let mut unique = None;
    let (track, count, seconds) = parse_rate_args(kw, v, |n, val| {
        if n != "unique_on" {
            return Ok(false);
        }
        unique = Some(match val {
            "src_port" => true,
            "dst_port" => false,
            other => return Err(fail(kw, format!("unknown unique_on `{other}`"))),
        });
        Ok(true)
    })?;
    Ok(DetectionFilter {
        track,
        count,
        seconds,
        unique_on_src_port: unique,
    })
}

/// `flags:[modifier]<flags>[,<ignore>]` with flags from `FSRPAUCE0` (also `12` for
/// the two reserved bits, as CWR/ECE).
pub fn parse_flags(v: &str) -> Result<TcpFlags, String> {
    let (main, ignore) = match v.split_once(',') {
        Some((m, i)) => (m.trim(), Some(i.trim())),
        None => (v.trim(), None),
    };
    let bit = |c: char| -> Result<u8, String> {
        Ok(match c.to_ascii_uppercase() {
            'F' => 0x01,
            'S' => 0x02,
            'R' => 0x04,
            'P' => 0x08,
            'A' => 0x10,
            'U' => 0x20,
            'E' | '2' => 0x40,
            'C' | '1' => 0x80,
            '0' => 0,
            other => return Err(format!("unknown flag `{other}`")),
        })
    };
    let mut modifier = FlagMod::Exact;
    let mut bits = 0u8;
    for c in main.chars() {
        match c {
            '+' => modifier = FlagMod::Plus,
            '*' => modifier = FlagMod::Any,
            '!' => modifier = FlagMod::Not,
            c => bits |= bit(c)?,
        }
    }
    let mut ign = 0u8;
    if let Some(i) = ignore {
        for c in i.chars() {
            ign |= bit(c)?;
        }
    }
    Ok(TcpFlags {
        bits,
        modifier,
        ignore: ign,
    })
}

fn parse_fragbits(v: &str) -> Result<FragBits, String> {
    let mut modifier = FlagMod::Exact;
    let mut bits = 0;
    for c in v.trim().chars() {
        match c {
            '+' => modifier = FlagMod::Plus,
            '*' => modifier = FlagMod::Any,
            '!' => modifier = FlagMod::Not,
            'M' | 'm' => bits |= 1,
            'D' | 'd' => bits |= 2,
            'R' | 'r' => bits |= 4,
            other => return Err(format!("unknown bit `{other}`")),
        }
    }
    Ok(FragBits { bits, modifier })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_comparisons() {
        assert_eq!(parse_num_cmp("10"), Some(NumCmp::Eq(10)));
        assert_eq!(parse_num_cmp("0x10"), Some(NumCmp::Eq(16)));
        assert_eq!(parse_num_cmp("<10"), Some(NumCmp::Lt(10)));
        assert_eq!(parse_num_cmp(">=10"), Some(NumCmp::Ge(10)));
        assert_eq!(parse_num_cmp("!9"), Some(NumCmp::Ne(9)));
        assert_eq!(parse_num_cmp("!=9"), Some(NumCmp::Ne(9)));
        assert_eq!(parse_num_cmp("8<>20"), Some(NumCmp::Between(8, 20)));
        assert_eq!(parse_num_cmp("8-20"), Some(NumCmp::Between(8, 20)));
        assert_eq!(parse_num_cmp("!8-20"), Some(NumCmp::NotBetween(8, 20)));
        assert_eq!(
            parse_num_cmp("&0xc0=0x80"),
            Some(NumCmp::MaskEq(0xc0, 0x80))
        );
        assert_eq!(parse_num_cmp("1kb"), Some(NumCmp::Eq(1024)));
        assert_eq!(parse_num_cmp("20<>8"), None);
        assert_eq!(parse_num_cmp("x"), None);
        assert!(NumCmp::Between(7, 20).test(8));
        assert!(!NumCmp::Between(7, 20).test(7));
    }

    /// The problem reason of a one-rule set, None when it loads.
    fn problem(opts: &str) -> Option<String> {
        let text = format!("alert tcp any any -> any any ({opts} sid:1;)");
        let l = crate::rules::load_str(&text, &crate::rules::tests_ctx());
        l.problems.first().map(|p| p.reason.clone())
    }

    #[test]
    fn negated_values() {
        for ok in [
            "tos:!8;",
            "window:! 1024;",
            "ip_proto:!tcp;",
            "ip_proto:! udp;",
            "isdataat:! 5;",
            "content:\"a\"; pcre:! \"/x/\";",
            "ssl_version:!sslv3,tls1.0;",
            "ssl_state:!client_hello;",
        ] {
            assert_eq!(problem(ok), None, "{ok}");
        }
        for (bad, why) in [
            ("tos:!256;", "expected 0-255"),
            ("window:!x;", "expected 0-65535"),
            ("ssl_state:! client_hello;", "unknown state ` client_hello`"),
        ] {
            assert_eq!(problem(bad).as_deref(), Some(why), "{bad}");
        }
    }

    #[test]
    fn byte_jump_counts() {
        assert_eq!(problem("byte_jump:0,0,relative,post_offset -8;"), None);
        assert_eq!(problem("byte_extract:1,0,n; byte_jump:n,0;"), None);
        assert!(problem("byte_jump:9,0;").unwrap().contains("0 to 8 bytes"));
        assert!(
            problem("byte_jump:m,0;")
                .unwrap()
                .contains("bad byte count")
        );
        assert!(
            problem("byte_test:0,=,1,0;")
                .unwrap()
                .contains("1 to 8 bytes")
        );
        assert!(
            problem("byte_jump:1,0,from_beginning,from_end;")
                .unwrap()
                .contains("exclude")
        );
        let l = crate::rules::load_str(
            "alert tcp any any -> any any (byte_extract:1,0,n; byte_jump:n,0,relative,post_offset -8; sid:1;)",
            &crate::rules::tests_ctx(),
        );
        let Match::ByteJump(j) = &l.rules[0].payload.items[1] else {
            panic!("not a byte_jump: {:?}", l.rules[0].payload.items);
        };
        assert_eq!((j.nbytes_var, j.post_offset), (Some(0), -8));
    }

    #[test]
    fn vlan_id_parse() {
        let l = crate::rules::load_str(
            "alert ip any any -> any any (vlan.id:0x12C,1; sid:1;)\n\
             alert ip any any -> any any (vlan.id:>=200; sid:2;)\n\
             alert ip any any -> any any (vlan.id:!500,all; sid:3;)\n\
             alert ip any any -> any any (vlan.id:100-600,-1; sid:4;)\n",
            &crate::rules::tests_ctx(),
        );
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        let got: Vec<_> = l.rules.iter().map(|r| r.header[0].clone()).collect();
        assert_eq!(
            got,
            vec![
                HeaderMatch::VlanId {
                    cmp: NumCmp::Eq(300),
                    layer: VlanLayer::Index(1)
                },
                HeaderMatch::VlanId {
                    cmp: NumCmp::Ge(200),
                    layer: VlanLayer::Any
                },
                HeaderMatch::VlanId {
                    cmp: NumCmp::Ne(500),
                    layer: VlanLayer::All
                },
                HeaderMatch::VlanId {
                    cmp: NumCmp::Between(100, 600),
                    layer: VlanLayer::Index(-1)
                },
            ]
        );
        assert!(
            problem("vlan.id:5000;")
                .unwrap()
                .contains("outside 0 to 4095")
        );
        assert!(problem("vlan.id:5,3;").unwrap().contains("bad layer"));
        assert!(problem("vlan.id:x;").unwrap().contains("bad id"));
    }

    #[test]
    fn header_buffers_parse() {
        let l = crate::rules::load_str(
            r#"alert ip any any -> any any (ipv6.hdr; content:"|11 00|"; offset:40; endswith; pkt_data; content:"x"; sid:1;)"#,
            &crate::rules::tests_ctx(),
        );
        assert!(l.problems.is_empty(), "{:?}", l.problems);
        let r = &l.rules[0];
        assert_eq!(r.hdr_buffers.len(), 1);
        assert_eq!(r.hdr_buffers[0].buf, HdrBuffer::Ipv6);
        assert_eq!(r.hdr_buffers[0].list.items.len(), 1);
        assert_eq!(r.payload.items.len(), 1);
        // The prefilter never searches a header buffer's content.
        assert_eq!(r.fast.as_ref().map(|f| f.list), Some(ListRef::Payload));
        assert!(
            problem(r#"tcp.hdr; to_lowercase; content:"a";"#)
                .unwrap()
                .contains("transforms need a sticky buffer")
        );
        assert!(
            problem(r#"tcp.hdr; content:"a"; http.uri; content:"b";"#)
                .unwrap()
                .contains("packet header buffers")
        );
        assert!(problem(r#"icmpv4.hdr; content:"a";"#).is_some());
    }

    #[test]
    fn absent_parse() {
        let http = |opts: &str| {
            let text = format!("alert http any any -> any any ({opts} sid:1;)");
            let l = crate::rules::load_str(&text, &crate::rules::tests_ctx());
            l.problems.first().map(|p| p.reason.clone())
        };
        assert_eq!(http("file.data; absent;"), None);
        assert_eq!(http(r#"file.data; absent: or_else; content:!"a";"#), None);
        assert!(
            http(r#"file.data; absent; content:"a";"#)
                .unwrap()
                .contains("cannot be combined")
        );
        assert!(
            http("file.data; absent: or_else;")
                .unwrap()
                .contains("needs matches")
        );
        assert!(
            http(r#"file.data; content:"a"; absent;"#)
                .unwrap()
                .contains("must come first")
        );
        assert!(http("absent;").unwrap().contains("needs a sticky buffer"));
        assert!(
            http("file.data; absent: maybe;")
                .unwrap()
                .contains("unknown option")
        );
    }

    #[test]
    fn flags() {
        let f = parse_flags("SA").unwrap();
        assert_eq!((f.bits, f.modifier), (0x12, FlagMod::Exact));
        let f = parse_flags("S,12").unwrap();
        assert_eq!((f.bits, f.ignore), (0x02, 0xc0));
        assert_eq!(parse_flags("!R").unwrap().modifier, FlagMod::Not);
        assert!(parse_flags("X").is_err());
    }
}
