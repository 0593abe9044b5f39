//! What a parsed rule means: the types the engine evaluates.

use std::sync::Arc;

use crate::app::descriptor::EvalFn;
use crate::app::value::KwValue;
use crate::app::{AppProto, BufferDef, Dir, Transaction};
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

pub use meerkat_app::value::{DateCmp, NumCmp};

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
    /// `dce`: in the byte order of the DCE/RPC PDU whose stub data is inspected (its
    /// data representation); big-endian on any other buffer, as Suricata's.
    pub dce: bool,
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
    /// `domain`: the registrable domain of a host name (by the Public Suffix List:
    /// `www.example.co.uk` -> `example.co.uk`); empty when it has none.
    Domain,
    /// `tld`: the public suffix of a host name's registrable domain (`co.uk`); empty
    /// when it has none.
    Tld,
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
    /// `dataset`/`datarep` on the buffer, checked (in order) once its other matches
    /// hold.
    pub datasets: Vec<DatasetMatch>,
}

/// What `dataset`/`datarep` does with the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatasetOp {
    /// `set`: adds the buffer; matches when it was not there.
    Set,
    /// `unset`: removes it; matches when it was there.
    Unset,
    IsSet,
    IsNotSet,
    /// `datarep`: the buffer is in the set with a reputation that compares so (a value
    /// added without one has reputation 0).
    Rep(RepOp, u16),
}

/// `datarep`'s comparisons.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepOp {
    Gt,
    Lt,
    Eq,
}

/// A `dataset`/`datarep` keyword: the set (shared by every worker) and what to do.
#[derive(Clone)]
pub struct DatasetMatch {
    pub set: Arc<meerkat_shm::SharedSet>,
    pub op: DatasetOp,
}

impl std::fmt::Debug for DatasetMatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DatasetMatch({} {:?})", self.set.name(), self.op)
    }
}

impl DatasetMatch {
    /// Applies the keyword to `data` (the buffer after its transforms). An empty buffer
    /// never matches. No allocation; only `set`/`unset` of a new value take the set's
    /// lock.
    pub fn eval(&self, data: &[u8]) -> bool {
        if data.is_empty() {
            return false;
        }
        match self.op {
            DatasetOp::Set => self.set.add(data, None) == meerkat_shm::dataset::Added::New,
            DatasetOp::Unset => self.set.remove(data),
            DatasetOp::IsSet => self.set.contains(data),
            DatasetOp::IsNotSet => !self.set.contains(data),
            DatasetOp::Rep(op, v) => match self.set.lookup(data) {
                None => false,
                Some(rep) => {
                    let rep = rep.unwrap_or(0);
                    match op {
                        RepOp::Gt => rep > v,
                        RepOp::Lt => rep < v,
                        RepOp::Eq => rep == v,
                    }
                }
            },
        }
    }
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
        self.items.is_empty()
            && self.bsize.is_none()
            && self.absent.is_none()
            && self.datasets.is_empty()
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
    /// `only_stream` or `no_stream` was given (the payload source says which): a flow
    /// option like any other, so the rule is not IP-only.
    pub stream: bool,
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
    DecodeEvent(meerkat_wire::EventSet),
    /// `stream-event`: the TCP tracker raised this event on the packet (a bit of
    /// [`crate::flow::tcp::STREAM_EVENTS`]; 0 for an event Meerkat does not raise).
    StreamEvent(u8),
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
    /// Alerts on the `count`-th match, then each time the count reaches `multiplier`
    /// times the previous alerting count (`track by_flow` only, no window).
    Backoff {
        multiplier: u32,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Threshold {
    pub kind: ThresholdKind,
    pub track: Track,
    pub count: u32,
    /// The window; 0 for `backoff`.
    pub seconds: u32,
}

/// A `rate_filter` of threshold.config: once a rule matched more than `count` times in
/// `seconds`, its alerts take `new_action` for `timeout` seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RateFilter {
    pub track: Track,
    pub count: u32,
    pub seconds: u32,
    /// None: `log`/`sdrop`, accepted and without effect (as in Suricata).
    pub new_action: Option<Action>,
    pub timeout: u32,
}

/// Which address a threshold.config `suppress` entry compares with its list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuppressTrack {
    BySrc,
    ByDst,
    ByEither,
}

/// A `suppress` entry of threshold.config with an address list: no alert when the
/// packet's source (destination, either) is in `ips`; the rule's actions still happen.
#[derive(Debug, Clone)]
pub struct Suppress {
    pub track: SuppressTrack,
    /// Shared by the rules a global (`sig_id 0`) entry applies to.
    pub ips: Arc<IpSet>,
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

/// A check on a transaction that is not a buffer match: a protocol's keyword, evaluated
/// through its descriptor (`tls.version`, `ssl_state`, `dns.opcode`, ...),
/// `app-layer-event`, or a file keyword.
#[derive(Debug, Clone)]
pub enum TxCheck {
    Keyword {
        /// The keyword as the protocol names it.
        name: &'static str,
        value: KwValue,
        eval: EvalFn,
    },
    /// `app-layer-event:<proto>.<event>`: the parser raised this anomaly in the
    /// transaction (one of its protocol's [`meerkat_app::Descriptor::events`]).
    AppEvent(&'static str),
    /// A file keyword (`filemd5`, `filesize`, ...): some file of the transaction in
    /// the inspected direction passes it.
    File(FileCheck),
}

/// A digest algorithm of the file keywords.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HashAlgo {
    Md5,
    Sha1,
    Sha256,
}

impl HashAlgo {
    /// Digest length in bytes.
    pub fn digest_len(self) -> usize {
        match self {
            HashAlgo::Md5 => 16,
            HashAlgo::Sha1 => 20,
            HashAlgo::Sha256 => 32,
        }
    }

    /// The digest of `f`, when it was computed.
    pub fn of(self, f: &meerkat_app::files::File) -> Option<&[u8]> {
        match self {
            HashAlgo::Md5 => f.md5().map(|d| &d[..]),
            HashAlgo::Sha1 => f.sha1().map(|d| &d[..]),
            HashAlgo::Sha256 => f.sha256().map(|d| &d[..]),
        }
    }
}

/// A hash-list file of `filemd5`/`filesha1`/`filesha256`, loaded at rule load.
#[derive(Debug, PartialEq, Eq)]
pub struct HashList {
    pub path: std::path::PathBuf,
    /// The digests, sorted and deduplicated.
    pub digests: Vec<Box<[u8]>>,
}

impl HashList {
    pub fn contains(&self, d: &[u8]) -> bool {
        self.digests.binary_search_by(|x| (**x).cmp(d)).is_ok()
    }
}

/// Which files a `filestore` match asks for, by direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreDir {
    /// The direction the rule matched in (the default).
    Match,
    ToServer,
    ToClient,
    Both,
}

/// How far a `filestore` match reaches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreScope {
    /// The files of the matching transaction seen so far (the default: Suricata's
    /// `file`, the file that matched; a transaction's files in one direction are
    /// inspected together here).
    File,
    /// Every file of the transaction, those still to come included.
    Tx,
    /// Every file of the flow from then on (`ssn`, `flow`).
    Flow,
}

/// `filestore`'s options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStoreOpt {
    pub dir: StoreDir,
    pub scope: StoreScope,
}

impl FileStoreOpt {
    /// The directions (to server, to client) of the files a match in `matched` asks for.
    pub fn dirs(self, matched_to_server: bool) -> [bool; 2] {
        match self.dir {
            StoreDir::Match => [matched_to_server, !matched_to_server],
            StoreDir::ToServer => [true, false],
            StoreDir::ToClient => [false, true],
            StoreDir::Both => [true, true],
        }
    }
}

/// What a file keyword checks.
#[derive(Debug, Clone, PartialEq)]
pub enum FileCheck {
    /// `filemd5:[!]list` and its siblings: the file's digest is (not) in the list.
    Hash {
        algo: HashAlgo,
        list: Arc<HashList>,
        negated: bool,
    },
    /// `filesize:<cmp>`: the file's size.
    Size(NumCmp),
    /// `filestore`: the direction has a file (open or ended).
    Exists,
}

impl FileCheck {
    /// Evaluates on the files `files` of a direction whose message is `complete`:
    /// `Some(true)` once a file passes, `Some(false)` when none can any more, `None`
    /// while an open file (or one still to come) may.
    pub fn eval(&self, files: &[meerkat_app::files::File], complete: bool) -> Option<bool> {
        let mut pending = !complete;
        for f in files {
            match self {
                FileCheck::Hash {
                    algo,
                    list,
                    negated,
                } => {
                    if f.is_open() {
                        pending = true;
                    } else if let Some(d) = algo.of(f)
                        && list.contains(d) != *negated
                    {
                        return Some(true);
                    }
                }
                FileCheck::Exists => return Some(true),
                FileCheck::Size(cmp) => {
                    if f.is_open() {
                        // An open file's size only grows: a lower bound can pass early.
                        if matches!(cmp, NumCmp::Gt(_) | NumCmp::Ge(_)) && cmp.test(f.size()) {
                            return Some(true);
                        }
                        pending = true;
                    } else if cmp.test(f.size()) {
                        return Some(true);
                    }
                }
            }
        }
        if pending { None } else { Some(false) }
    }

    /// What the file layer must compute for this check.
    pub fn needs(&self) -> meerkat_app::files::FileConfig {
        let mut c = meerkat_app::files::FileConfig {
            track: true,
            ..Default::default()
        };
        if let FileCheck::Hash { algo, .. } = self {
            match algo {
                HashAlgo::Md5 => c.md5 = true,
                HashAlgo::Sha1 => c.sha1 = true,
                HashAlgo::Sha256 => c.sha256 = true,
            }
        }
        c
    }
}

impl PartialEq for TxCheck {
    /// The same keyword with the same value (its evaluation is the keyword's).
    fn eq(&self, other: &TxCheck) -> bool {
        match (self, other) {
            (
                TxCheck::Keyword { name, value, .. },
                TxCheck::Keyword {
                    name: n2,
                    value: v2,
                    ..
                },
            ) => name == n2 && value == v2,
            (TxCheck::AppEvent(a), TxCheck::AppEvent(b)) => a == b,
            (TxCheck::File(a), TxCheck::File(b)) => a == b,
            _ => false,
        }
    }
}

impl TxCheck {
    /// Evaluates the check on `tx` inspected in `dir` at packet time `now_s`:
    /// `Some(result)`, or `None` when it cannot be decided yet.
    pub fn eval(&self, dir: Dir, now_s: i64, tx: &dyn Transaction) -> Option<bool> {
        match self {
            TxCheck::Keyword { value, eval, .. } => eval(value, dir, now_s, tx),
            // Not raised yet: it may be while the direction is still in progress.
            TxCheck::AppEvent(name) => {
                if tx.has_event(dir, name) {
                    Some(true)
                } else if tx.complete(dir) {
                    Some(false)
                } else {
                    None
                }
            }
            TxCheck::File(f) => f.eval(tx.files(dir), tx.complete(dir)),
        }
    }
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
    /// The header names one protocol by an alias of its own (`alert http1`): the
    /// protocols of its family (HTTP/2 for `http`) are not matched.
    pub proto_exact: bool,
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
    /// Transaction checks other than buffer matches.
    pub tx_checks: Vec<TxCheck>,
    /// At most one of `threshold`, `detection_filter` and `rate_filter` is set (the
    /// rule's own, or one threshold.config put in its place, as Suricata keeps one
    /// entry in a rule's threshold list).
    pub threshold: Option<Threshold>,
    pub detection_filter: Option<DetectionFilter>,
    /// `filestore[:direction[,scope]]`: a match asks for files to be stored.
    pub filestore: Option<FileStoreOpt>,
    pub rate_filter: Option<RateFilter>,
    /// threshold.config `suppress` entries with addresses.
    pub suppress: Vec<Suppress>,
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
