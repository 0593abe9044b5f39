//! The static descriptor each protocol registers itself with.
//!
//! Everything about a protocol that the rest of Meerkat needs (the rule parser, the
//! engine, the worker, the config check, the eve-writer, the fuzz targets) is here, so
//! that none of them names a protocol.

use meerkat_eve::Obj;

use crate::config::Section;
use crate::value::KwValue;
use crate::{AppProto, AppRecord, AppState, BufferDef, Dir, Parser, Probe, Transaction, Transport};

/// The transports a protocol runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transports {
    pub tcp: bool,
    pub udp: bool,
}

impl Transports {
    pub const TCP: Transports = Transports {
        tcp: true,
        udp: false,
    };
    pub const UDP: Transports = Transports {
        tcp: false,
        udp: true,
    };
    pub const BOTH: Transports = Transports {
        tcp: true,
        udp: true,
    };

    pub fn has(self, t: Transport) -> bool {
        match t {
            Transport::Tcp => self.tcp,
            Transport::Udp => self.udp,
        }
    }
}

/// Evaluates a parsed keyword value on a transaction inspected in `dir` at packet time
/// `now_s` (seconds since the epoch): `Some(result)`, or `None` when the value is not
/// known yet (inspect again later).
pub type EvalFn = fn(&KwValue, Dir, i64, &dyn Transaction) -> Option<bool>;

/// Parses a keyword's value (`None` when the keyword has no value) at rule load.
pub type ParseFn = fn(Option<&str>) -> Result<KwValue, String>;

/// What a protocol keyword that is not a sticky buffer does.
#[derive(Debug, Clone, Copy)]
pub enum KeywordKind {
    /// A property check of the transaction (`tls.version:1.2`, `dns.opcode:!0`).
    Check { parse: ParseFn, eval: EvalFn },
    /// `kw:[!]"text"`: a content on sticky buffer `buffer`, in a list of its own that no
    /// content modifier can follow (`tls.subject`, `filename`). `nocase` matches without
    /// case; `extension` makes it `"." + text` at the end of the buffer (`fileext`).
    BufferContent {
        buffer: &'static str,
        nocase: bool,
        extension: bool,
    },
    /// `kw:"text"`: `content:"text"` on sticky buffer `buffer`, after which the rule's
    /// payload keywords go back to the packet payload; content modifiers that follow
    /// apply to it (`uricontent`).
    ContentIn { buffer: &'static str },
    /// `kw:<size>[,norm|raw]`: a size check (`bsize`) on sticky buffer `buffer`, or
    /// `raw_buffer` with `raw` (`urilen`).
    Size {
        buffer: &'static str,
        raw_buffer: &'static str,
    },
    /// Accepted, makes the rule a rule of the protocol, changes nothing in what it
    /// matches (`tls.store`: Meerkat stores no certificates).
    Marker,
}

/// A protocol keyword that is not a sticky buffer.
#[derive(Debug, Clone, Copy)]
pub struct KeywordDef {
    pub name: &'static str,
    /// Other spellings (`tls_cert_notbefore` for `tls.cert_notbefore`).
    pub aliases: &'static [&'static str],
    pub kind: KeywordKind,
}

impl KeywordDef {
    /// A keyword evaluated by a protocol's own parse and evaluate functions.
    pub const fn check(
        name: &'static str,
        aliases: &'static [&'static str],
        parse: ParseFn,
        eval: EvalFn,
    ) -> KeywordDef {
        KeywordDef {
            name,
            aliases,
            kind: KeywordKind::Check { parse, eval },
        }
    }
}

/// A protocol's EVE record.
#[derive(Debug, Clone, Copy)]
pub struct RecordDef {
    /// EVE `event_type` of the protocol's own events, and the name in
    /// `outputs.eve-log.types`.
    pub event_type: &'static str,
    /// Writes the record's object (`"http":{...}`) into an event: the protocol's own
    /// event, or an alert on one of its transactions. Given only records of this
    /// protocol's arm of [`AppRecord`].
    pub render: fn(&AppRecord, &mut Obj<'_>),
    /// Whether the protocol's own events carry the transaction's id as a top-level
    /// `tx_id` (Suricata's `http` events do; its `dns` events have it inside the `dns`
    /// object and its `tls` events have none). Alerts on a transaction always do.
    pub tx_id: bool,
    /// Whether the protocol's own events are written in the direction of the packet
    /// that logged them (Suricata's packet-direction loggers: `sip`; `dns`, whose
    /// responses are written server -> client); otherwise they are written
    /// client -> server, whichever packet finished the transaction.
    pub packet_dir: bool,
}

/// How a protocol is made from its config section.
#[derive(Debug, Clone, Copy)]
pub enum Build {
    /// No settings beyond `enabled` and `detection-ports`: states are made by the
    /// function.
    Plain(fn(Transport) -> Box<dyn AppState>),
    /// Settings of its own, `keys` (paths below `app-layer.protocols.<name>`, e.g.
    /// `libhtp.default-config.request-body-limit`); `build` checks the section and
    /// makes the configured parser.
    Configured {
        keys: &'static [&'static str],
        build: fn(&Section) -> Result<Box<dyn Parser>, String>,
    },
}

/// A fuzz target of a protocol: `fuzz/fuzz_targets/<name>.rs` calls `run`, and the seeds
/// of `src/<protocol>/seeds/<name>/` are replayed as ordinary tests.
#[derive(Debug, Clone, Copy)]
pub struct FuzzTarget {
    pub name: &'static str,
    pub run: fn(&[u8]),
}

/// The static description of one application protocol.
#[derive(Debug)]
pub struct Descriptor {
    pub proto: AppProto,
    /// The name in rule headers (`alert http`), `app-layer-protocol`, `app-layer-event`
    /// (`http.<event>`), `app-layer.protocols.<name>`, EVE `app_proto`, and the flow
    /// counter `app_<name>`.
    pub name: &'static str,
    /// Other spellings in rule headers and `app-layer-protocol` (`http1`).
    pub aliases: &'static [&'static str],
    /// The protocol whose rules also apply to this one: `alert http` rules, the
    /// `http.*` keywords and `app-layer-protocol:http` match HTTP/2 flows too, as
    /// Suricata's `http` names either version.
    pub family: Option<AppProto>,
    pub transports: Transports,
    /// Parsed when its config section does not say `enabled` (Suricata leaves the
    /// industrial protocols off: Modbus, ENIP).
    pub enabled_by_default: bool,
    /// Ports the protocol is usually found on: a hint for the order of probing only
    /// (detection is by content), unless `port_bound`. `detection-ports` in the config
    /// replaces them.
    pub default_ports: &'static [u16],
    /// Recognised on its ports only (its messages are another protocol's elsewhere, as
    /// LLMNR's are DNS).
    pub port_bound: bool,
    /// Recognises the protocol from the first bytes seen in `dir` (everything seen so
    /// far in that direction, up to a bound the engine chooses). Only called for the
    /// protocol's transports.
    pub probe: ProbeFn,
    /// A laxer probe for flows on the protocol's ports, if it has one (DNS on port 53
    /// takes messages with an unassigned opcode, as Suricata does; elsewhere they are
    /// taken for some other protocol, NetBIOS name service among them).
    pub probe_on_port: Option<ProbeFn>,
    /// Whether `data`, recognised as this protocol, is a reply (the server's side). A
    /// flow whose first data is a reply is reversed, as Suricata's probing parsers
    /// make it do (a DNS response seen first).
    pub is_reply: fn(Transport, &[u8]) -> bool,
    pub build: Build,
    /// Protocols whose transactions this one carries inside its own (SMB carries
    /// DCE/RPC calls over its named pipes): their rules and keywords apply to this
    /// protocol's flows too, as Suricata applies `dcerpc` rules to SMB flows.
    pub inner: &'static [AppProto],
    /// Its sticky buffers.
    pub buffers: &'static [BufferDef],
    /// Its frames (`frame:<name>` or `frame:<proto>.<name>`: `pdu`, `request.line`, ...),
    /// inspected as buffers of the transaction the frame's bytes belong to.
    pub frames: &'static [BufferDef],
    /// Its other keywords.
    pub keywords: &'static [KeywordDef],
    /// The anomalies its parser raises (`<name>.<event>`), for `app-layer-event` and
    /// EVE `anomaly`.
    pub events: &'static [&'static str],
    /// Suricata's EVE `anomaly` writes this protocol's event names in upper case
    /// (`RESPONSE_HEADER_REPETITION`: the protocols whose event table is C's, http and
    /// tls), else as rules name them (`invalid_qos_level`).
    pub events_upper_case: bool,
    /// When stream rules see this protocol's TCP bytes short of a chunk (see
    /// [`RawTrigger`]).
    pub raw_trigger: RawTrigger,
    /// Its EVE record, if it logs one.
    pub record: Option<RecordDef>,
    pub fuzz: &'static [FuzzTarget],
}

/// When a protocol lets the raw stream of a direction be inspected before a chunk's
/// worth (`stream.reassembly.toserver-chunk-size`) of it is acknowledged, as
/// Suricata's parser of it triggers raw reassembly.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RawTrigger {
    /// Where its parser asks ([`crate::ParseOutput::trigger_raw`]): at each TLS record,
    /// DNS message, ...; never for a parser that does not ask (FTP, SMB, Telnet).
    Parser,
    /// Also each time a transaction completes a direction (its request, its
    /// response), as Suricata's HTTP, SIP, POP3, PostgreSQL and the industrial
    /// protocols trigger it.
    TxComplete,
}

/// A protocol's probe: what the first bytes seen in a direction say.
pub type ProbeFn = fn(Transport, Dir, &[u8]) -> Probe;

/// A probe's `is_reply` for protocols whose first message says nothing of its side.
pub fn never_reply(_: Transport, _: &[u8]) -> bool {
    false
}

impl Descriptor {
    /// The name EVE `anomaly` gives event `name` (`<proto>.<event>`, one of
    /// [`Descriptor::events`]), as Suricata writes it.
    pub fn eve_event_name(&self, name: &str) -> String {
        let event = name.split_once('.').map_or(name, |(_, e)| e);
        if self.events_upper_case {
            event.to_ascii_uppercase()
        } else {
            event.to_string()
        }
    }

    /// Whether a rule of protocol `rule` applies to this protocol's flows: its own, or
    /// one of those it carries ([`Descriptor::inner`]).
    pub fn covers(&self, rule: AppProto) -> bool {
        self.proto == rule || self.inner.contains(&rule)
    }

    /// Whether rules of protocol `rule` apply to this protocol's flows: its own, and
    /// its family's.
    pub fn matches_rule_proto(&self, rule: AppProto) -> bool {
        self.proto == rule || self.family == Some(rule)
    }

    /// The name of the protocol's records in `outputs.eve-log.types`: their
    /// `event_type`, but the protocol's own name when the `event_type` is that name with
    /// `_` for `-` (Suricata's `bittorrent-dht` type writes `bittorrent_dht` records).
    pub fn eve_types_name(&self) -> Option<&'static str> {
        let t = self.record?.event_type;
        let dashed = t.len() == self.name.len()
            && t != self.name
            && t.bytes()
                .zip(self.name.bytes())
                .all(|(a, b)| a == b || (a == b'_' && b == b'-'));
        Some(if dashed { self.name } else { t })
    }

    /// Whether `s` names this protocol in a rule.
    pub fn is_named(&self, s: &str) -> bool {
        self.name == s || self.aliases.contains(&s)
    }
}
