//! What a parsed rule means: the types the engine evaluates.

use std::sync::Arc;

use crate::app::{AppProto, BufferDef};
use crate::rules::addr::{IpSet, PortSet};

/// Rule actions. In IDS mode `drop` and `reject` alert like `alert`; `pass` stops the
/// inspection of the flow's later packets by other rules (as Suricata does).
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

/// The transport the header names.
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

/// `tcp-pkt` / `tcp-stream` restrict TCP payload inspection to packets or to the stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PayloadSource {
    /// Stream when the session is tracked, else the packet.
    #[default]
    Any,
    /// Packets only (`tcp-pkt`, `flow:no_stream`, `dsize`).
    Packet,
    /// Reassembled stream only (`tcp-stream`, `flow:only_stream`).
    Stream,
}

/// An integer comparison, as Suricata's integer keywords take them (`dsize`, `ttl`,
/// `urilen`, `bsize`, `itype`, ...): `N`, `=N`, `!N`, `!=N`, `<N`, `<=N`, `>N`, `>=N`,
/// `a-b` or `a<>b` (exclusive range), `!a-b`, `&mask=v`, `&mask!=v`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumCmp {
    Eq(u64),
    Ne(u64),
    Lt(u64),
    Le(u64),
    Gt(u64),
    Ge(u64),
    /// Exclusive range.
    Between(u64, u64),
    /// Outside the exclusive range: `v <= a || v >= b`.
    NotBetween(u64, u64),
    MaskEq(u64, u64),
    MaskNe(u64, u64),
}

impl NumCmp {
    pub fn test(self, v: u64) -> bool {
        match self {
            NumCmp::Eq(a) => v == a,
            NumCmp::Ne(a) => v != a,
            NumCmp::Lt(a) => v < a,
            NumCmp::Le(a) => v <= a,
            NumCmp::Gt(a) => v > a,
            NumCmp::Ge(a) => v >= a,
            NumCmp::Between(a, b) => v > a && v < b,
            NumCmp::NotBetween(a, b) => v <= a || v >= b,
            NumCmp::MaskEq(m, x) => v & m == x,
            NumCmp::MaskNe(m, x) => v & m != x,
        }
    }
}

/// A number in a payload keyword: a constant or a `byte_extract`/`byte_math` variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value {
    Const(i64),
    Var(u8),
}

/// `content`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Content {
    /// The bytes (lowercased when `nocase`).
    pub pattern: Vec<u8>,
    pub nocase: bool,
    pub negated: bool,
    pub offset: Option<Value>,
    pub depth: Option<Value>,
    pub distance: Option<Value>,
    pub within: Option<Value>,
    pub startswith: bool,
    pub endswith: bool,
    pub fast_pattern: bool,
    /// `fast_pattern:only` (still verified; Suricata 7 treats it as a hint).
    pub fast_only: bool,
    /// `fast_pattern:<offset>,<length>`: the part used for the prefilter.
    pub fast_chop: Option<(u16, u16)>,
}

impl Content {
    /// A content with no position modifiers (`offset`, `depth`, ... all unset).
    pub fn plain(pattern: Vec<u8>, nocase: bool, negated: bool) -> Self {
        Content {
            pattern,
            nocase,
            negated,
            offset: None,
            depth: None,
            distance: None,
            within: None,
            startswith: false,
            endswith: false,
            fast_pattern: false,
            fast_only: false,
            fast_chop: None,
        }
    }
}

impl Content {
    /// Whether the content is positioned relative to the previous match.
    pub fn relative(&self) -> bool {
        self.distance.is_some() || self.within.is_some()
    }
}

/// A compiled `pcre`.
#[derive(Debug, Clone)]
pub struct Pcre {
    pub source: String,
    pub regex: Arc<pcre2::bytes::Regex>,
    pub negated: bool,
    pub relative: bool,
    /// Whether the regex is anchored at the start position (`A` flag), compiled in.
    pub anchored: bool,
}

/// Number encoding of the byte keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumBase {
    Binary,
    Hex,
    Dec,
    Oct,
}

/// Fields shared by the byte keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRead {
    pub nbytes: u8,
    pub offset: Value,
    pub relative: bool,
    pub big_endian: bool,
    pub base: NumBase,
    pub bitmask: Option<u64>,
}

/// `byte_test` operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ByteOp {
    Lt,
    Gt,
    Eq,
    Le,
    Ge,
    And,
    Xor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteTest {
    pub read: ByteRead,
    pub op: ByteOp,
    pub negated: bool,
    pub value: Value,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteJump {
    pub read: ByteRead,
    pub multiplier: u32,
    pub align: bool,
    pub from_beginning: bool,
    pub from_end: bool,
    pub post_offset: i64,
    /// The byte count comes from this byte_extract variable (`read.nbytes` is unused).
    pub nbytes_var: Option<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteExtract {
    pub read: ByteRead,
    pub multiplier: u32,
    pub align: u8,
    pub var: u8,
}

/// `byte_math` operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MathOp {
    Add,
    Sub,
    Mul,
    Div,
    Shl,
    Shr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteMath {
    pub read: ByteRead,
    pub op: MathOp,
    pub rvalue: Value,
    pub var: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IsDataAt {
    pub offset: Value,
    pub relative: bool,
    pub negated: bool,
}

/// `base64_decode`: decodes base64 from the buffer into the rule's base64 buffer, which
/// `base64_data` then inspects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Base64Decode {
    pub bytes: Option<u32>,
    pub offset: u32,
    pub relative: bool,
}

/// One step of a match list, evaluated in order with a cursor.
#[derive(Debug, Clone)]
pub enum Match {
    Content(Content),
    Pcre(Pcre),
    ByteTest(ByteTest),
    ByteJump(ByteJump),
    ByteExtract(ByteExtract),
    ByteMath(ByteMath),
    IsDataAt(IsDataAt),
    Base64Decode(Base64Decode),
}

/// Transforms applied to a sticky buffer before inspection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transform {
    DotPrefix,
    ToLowercase,
    ToUppercase,
    StripWhitespace,
    CompressWhitespace,
    UrlDecode,
    ToSha256,
    ToMd5,
    ToSha1,
    HeaderLowercase,
    StripPseudoHeaders,
    Xor(Vec<u8>),
    /// `from_base64`: decodes `bytes` bytes (0: all) from `offset`.
    FromBase64 {
        offset: u32,
        bytes: u32,
        mode: Base64Mode,
    },
    /// `zlib_deflate`: inflates a zlib stream, at most `max_size` bytes of output.
    ZlibDeflate {
        max_size: u32,
    },
    /// `pcrexform`: the buffer becomes the regex's first capture group.
    PcreXform(PcreXform),
}

/// How `from_base64` treats bytes outside the alphabet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Base64Mode {
    /// Decoding stops at the first one (Suricata's default).
    Rfc4648,
    /// They are skipped (MIME).
    Rfc2045,
    /// The whole decoding fails.
    Strict,
}

/// A compiled `pcrexform` regex; two are the same transform when their sources are.
#[derive(Debug, Clone)]
pub struct PcreXform {
    pub source: String,
    pub regex: Arc<pcre2::bytes::Regex>,
}

impl PartialEq for PcreXform {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl Eq for PcreXform {}

/// The matches on one buffer.
#[derive(Debug, Clone, Default)]
pub struct MatchList {
    pub items: Vec<Match>,
    /// `bsize`: the buffer's size.
    pub bsize: Option<NumCmp>,
    /// `absent` (Suricata 8): what a missing buffer means for the list.
    pub absent: Option<Absent>,
}

/// `absent` on a sticky buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Absent {
    /// `absent`: the list matches only when the buffer does not exist.
    Only,
    /// `absent: or_else`: the list matches when the buffer does not exist, or when it
    /// exists and its matches hold.
    OrElse,
}

impl MatchList {
    pub fn is_empty(&self) -> bool {
        self.items.is_empty() && self.bsize.is_none() && self.absent.is_none()
    }
}

/// Matches on a sticky buffer.
#[derive(Debug, Clone)]
pub struct BufferList {
    pub def: &'static BufferDef,
    pub transforms: Vec<Transform>,
    pub list: MatchList,
}

/// A packet-header sticky buffer (`ipv4.hdr`, `ipv6.hdr`, `tcp.hdr`, `udp.hdr`): the
/// raw bytes of that header of the packet, options included (IPv6: the fixed header
/// and its extension headers), as Suricata's buffers of those names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HdrBuffer {
    Ipv4,
    Ipv6,
    Tcp,
    Udp,
}

impl HdrBuffer {
    /// The buffer a sticky-buffer keyword selects.
    pub fn from_keyword(kw: &str) -> Option<HdrBuffer> {
        Some(match kw {
            "ipv4.hdr" => HdrBuffer::Ipv4,
            "ipv6.hdr" => HdrBuffer::Ipv6,
            "tcp.hdr" => HdrBuffer::Tcp,
            "udp.hdr" => HdrBuffer::Udp,
            _ => return None,
        })
    }
}

/// Matches on a packet-header buffer.
#[derive(Debug, Clone)]
pub struct HdrBufferList {
    pub buf: HdrBuffer,
    pub list: MatchList,
}

/// `flow` options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FlowOpts {
    /// Some(true): established; Some(false): not_established.
    pub established: Option<bool>,
    /// Some(true): to_server; Some(false): to_client.
    pub to_server: Option<bool>,
    pub stateless: bool,
    /// Some(true): only_frag; Some(false): no_frag.
    pub frag: Option<bool>,
}

/// Header keywords: evaluated on the packet before any payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeaderMatch {
    Ttl(NumCmp),
    Tos {
        value: u8,
        negated: bool,
    },
    IpId(u32),
    IpOpt(IpOpt),
    SameIp,
    IpProto {
        cmp: NumCmp,
    },
    Flags(TcpFlags),
    Seq(u32),
    Ack(u32),
    Window {
        value: u16,
        negated: bool,
    },
    IType(NumCmp),
    ICode(NumCmp),
    IcmpId(u16),
    IcmpSeq(u16),
    Dsize(NumCmp),
    FragBits(FragBits),
    FragOffset {
        cmp: NumCmp,
    },
    /// `stream_size`: (side: 0 server, 1 client, 2 both, 3 either, comparison).
    StreamSize {
        side: u8,
        cmp: NumCmp,
    },
    /// `app-layer-protocol:<proto>[,<mode>]`.
    AppLayerProtocol {
        proto: AppProto,
        negated: bool,
        mode: ProtoMode,
    },
    /// `decode-event`: the packet carries this decoder event (a bit of
    /// [`meerkat_wire::decode::DecodeEvent::bit`]).
    DecodeEvent(u64),
    /// `app-layer-event:applayer_*`: protocol detection raised this event on the packet
    /// (a bit of [`crate::app::events::PACKET_EVENTS`]).
    AppLayerEvent(u8),
    /// `vlan.id:[op]id[,layer]` (Suricata 8): the VLAN id at a layer, any layer or all
    /// layers; a packet without VLAN tags never matches.
    VlanId {
        cmp: NumCmp,
        layer: VlanLayer,
    },
}

/// Which VLAN layer `vlan.id` compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VlanLayer {
    /// One of the layers (the default, or `any`).
    Any,
    /// Every layer (`all`).
    All,
    /// The layer at this index, outermost first; negative counts from the innermost
    /// (`-1` is the last tag).
    Index(i8),
}

/// Which protocol `app-layer-protocol` compares (its optional second argument).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtoMode {
    /// The flow's protocol (no mode, `final`, `original`: Meerkat never changes a
    /// flow's protocol, so the last two are the same).
    Flow,
    /// The protocol recognised in the client's data.
    ToServer,
    /// The protocol recognised in the server's data.
    ToClient,
    /// Either direction's.
    Either,
    /// The packet's direction's.
    Direction,
}

/// IPv4 options (`ipopts`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IpOpt {
    Rr,
    Eol,
    Nop,
    Ts,
    Sec,
    Esec,
    Lsrr,
    Ssrr,
    Satid,
    Any,
}

impl IpOpt {
    /// The option type byte (0 for `any`).
    pub fn code(self) -> u8 {
        match self {
            IpOpt::Eol => 0,
            IpOpt::Nop => 1,
            IpOpt::Rr => 7,
            IpOpt::Ts => 68,
            IpOpt::Sec => 130,
            IpOpt::Esec => 133,
            IpOpt::Lsrr => 131,
            IpOpt::Ssrr => 137,
            IpOpt::Satid => 136,
            IpOpt::Any => 0,
        }
    }
}

/// `flags`: the bits that must be set, how to compare, and the ignore mask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpFlags {
    pub bits: u8,
    /// `+` (at least these), `*` (any of these), `!` (none of these), or exact.
    pub modifier: FlagMod,
    pub ignore: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlagMod {
    Exact,
    Plus,
    Any,
    Not,
}

/// `fragbits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FragBits {
    /// 4 = reserved, 2 = don't fragment, 1 = more fragments.
    pub bits: u8,
    pub modifier: FlagMod,
}

/// A flowbit operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowbitCmd {
    Set(Vec<u16>),
    Unset(Vec<u16>),
    Toggle(Vec<u16>),
    /// Any of these is set.
    IsSet(Vec<u16>),
    /// Any of these is not set.
    IsNotSet(Vec<u16>),
}

/// `flowint` operations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FlowintCmd {
    Assign(u16, IntOperand),
    Add(u16, IntOperand),
    Sub(u16, IntOperand),
    Compare(u16, NumCmpOp, IntOperand),
    IsSet(u16),
    NotSet(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntOperand {
    Const(u64),
    Var(u16),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumCmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

/// `xbits` (host and ip-pair bits).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XbitCmd {
    pub op: XbitOp,
    pub name: u16,
    pub track: XbitTrack,
    pub expire_s: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XbitOp {
    Set,
    Unset,
    Toggle,
    IsSet,
    IsNotSet,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XbitTrack {
    IpSrc,
    IpDst,
    IpPair,
}

/// How thresholds are tracked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Track {
    BySrc,
    ByDst,
    ByRule,
    ByBoth,
    ByFlow,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThresholdKind {
    Limit,
    Threshold,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threshold {
    pub kind: ThresholdKind,
    pub track: Track,
    pub count: u32,
    pub seconds: u32,
}

/// `detection_filter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetectionFilter {
    pub track: Track,
    pub count: u32,
    pub seconds: u32,
    /// Count distinct source (Some(true)) or destination (Some(false)) ports.
    pub unique_on_src_port: Option<bool>,
}

/// An app-layer property check that is not a sticky buffer: `tls.version`,
/// `ssl_version`, `ssl_state`, `tls_cert_notbefore`/`tls_cert_notafter` (TLS) and
/// `dns.opcode` (DNS). Each reads a pseudo-buffer of the transaction (see
/// [`crate::app::buffers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TlsCheck {
    /// `tls.version`: the exact version number.
    VersionIs(u16),
    /// `ssl_version`: the version of the direction being inspected (the client's hello
    /// for `to_server`, the server's for `to_client`, as Suricata keeps one per
    /// direction) is one of `mask` (bits of [`ssl_version_bit`]), or with `negated` a
    /// known version that is none of them (a `!` negates the whole list, as in Suricata).
    SslVersions {
        mask: u8,
        negated: bool,
    },
    State {
        mask: u8,
        negated: bool,
    },
    /// `tls_cert_notbefore`: the server certificate's notBefore, in seconds since the
    /// epoch (UTC).
    NotBefore(DateCmp),
    /// `tls_cert_notafter`: the server certificate's notAfter.
    NotAfter(DateCmp),
    /// `tls_cert_expired`: the certificate's notAfter is before the packet's time.
    CertExpired,
    /// `tls_cert_valid`: the packet's time is within the certificate's validity.
    CertValid,
    /// `dns.opcode`: the opcode of the message of the direction being inspected.
    DnsOpcode(NumCmp),
    /// `app-layer-event:<proto>.<event>`: the parser raised this anomaly in the
    /// transaction (one of [`crate::app::events`]).
    AppEvent(&'static str),
}

/// A date comparison of `tls_cert_notbefore`/`tls_cert_notafter`, in seconds since the
/// epoch (UTC): `=`, `<`, `>`, or an inclusive range `a<>b`, as Suricata's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DateCmp {
    Eq(i64),
    Lt(i64),
    Gt(i64),
    Range(i64, i64),
}

impl DateCmp {
    pub fn test(self, t: i64) -> bool {
        match self {
            DateCmp::Eq(a) => t == a,
            DateCmp::Lt(a) => t < a,
            DateCmp::Gt(a) => t > a,
            DateCmp::Range(a, b) => t >= a && t <= b,
        }
    }
}

/// The `ssl_version` bit of a wire version: sslv2, sslv3, tls1.0, tls1.1, tls1.2, tls1.3
/// (TLS 1.3 drafts `0x7fxx` count as tls1.3). `None` for an unknown version.
pub fn ssl_version_bit(v: u16) -> Option<u8> {
    Some(match v {
        0x0200 | 0x0002 => 1,
        0x0300 => 2,
        0x0301 => 4,
        0x0302 => 8,
        0x0303 => 16,
        0x0304 => 32,
        v if v >> 8 == 0x7f => 32,
        _ => return None,
    })
}

/// `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    SrcIp,
    DestIp,
}

/// Which list holds the fast pattern: the payload list or a buffer list (index).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListRef {
    Payload,
    Buffer(usize),
}

/// The content the prefilter searches for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FastPattern {
    pub list: ListRef,
    /// Index of the content in its list's items.
    pub item: usize,
    /// The bytes searched (after chop), lowercased when `nocase`.
    pub bytes: Vec<u8>,
    pub nocase: bool,
}

/// A loaded rule.
#[derive(Debug, Clone)]
pub struct Rule {
    pub action: Action,
    pub proto: Proto,
    /// The app-layer protocol the rule is about (header protocol `http`, or a sticky
    /// buffer of that protocol).
    pub app_proto: Option<AppProto>,
    pub payload_source: PayloadSource,
    pub src: IpSet,
    pub sport: PortSet,
    pub direction: Direction,
    pub dst: IpSet,
    pub dport: PortSet,
    pub gid: u32,
    pub sid: u64,
    pub rev: u32,
    pub msg: String,
    pub classtype: Option<String>,
    pub category: String,
    pub severity: u32,
    pub metadata: Vec<(String, String)>,
    pub references: Vec<String>,
    pub flow: FlowOpts,
    pub header: Vec<HeaderMatch>,
    pub payload: MatchList,
    pub buffers: Vec<BufferList>,
    /// Packet-header buffer matches (`ipv6.hdr; content:...`).
    pub hdr_buffers: Vec<HdrBufferList>,
    /// `base64_data` matches (on what `base64_decode` decoded).
    pub base64_data: Option<MatchList>,
    pub flowbits: Vec<FlowbitCmd>,
    pub flowints: Vec<FlowintCmd>,
    pub xbits: Vec<XbitCmd>,
    pub tls: Vec<TlsCheck>,
    pub threshold: Option<Threshold>,
    pub detection_filter: Option<DetectionFilter>,
    pub noalert: bool,
    pub target: Option<Target>,
    pub fast: Option<FastPattern>,
    /// Number of byte_extract/byte_math variables.
    pub vars: u8,
    pub text: String,
    pub file: std::path::PathBuf,
    pub line: usize,
}

impl Rule {
    /// Whether the rule inspects app-layer transactions (sticky buffers).
    pub fn is_app(&self) -> bool {
        !self.buffers.is_empty()
    }
}
