//! Meerkat's configuration.
//!
//! The file format is suricata.yaml's: the same key names, units and defaults where the
//! concept is the same (`vars.address-groups`, `stream.reassembly.depth`,
//! `outputs.eve-log.buffer-size`, `heartbeat.output-flush-interval`, ...), plus a few
//! sections of Meerkat's own (`capture`, `detect.workers`, `runtime-dir`).
//!
//! Loading goes: the defaults ([`Config::default`]) -> the file merged over them ->
//! command-line overrides (`--set key=value`, `-l`, `-S`, ...) -> key check (Suricata keys
//! Meerkat does not model are dropped with a warning; unknown keys are errors) -> typed
//! [`Config`] -> [`Config::validate`]. The supervisor writes the resolved config to the
//! runtime directory, and every role process starts from that file.

pub mod control;
pub mod de;
pub mod keys;
pub mod live;
pub mod set;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

pub use control::{Control, Supervisor};
pub use de::{ByteSize, FileMode, RotateInterval, Seconds};
pub use live::{AfPacketIface, ClusterType, Dpdk, DpdkIface, EalParams, RunAs};

/// Errors of loading and checking configuration.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("config file {path}: {message}")]
    Syntax { path: PathBuf, message: String },
    #[error("bad --set `{0}`: expected key=value with a dotted key")]
    BadSet(String),
    #[error("unknown config key{}: {}", if .0.len() > 1 { "s" } else { "" }, .0.join(", "))]
    UnknownKeys(Vec<String>),
    #[error("config: {0}")]
    Invalid(String),
}

/// How a config was resolved: the typed config and what was said along the way.
#[derive(Debug)]
pub struct Resolved {
    pub config: Config,
    /// Suricata keys that Meerkat accepted but does not model (each worth a warning).
    pub ignored_suricata_keys: Vec<String>,
}

fn yes() -> bool {
    true
}

/// Default `vars.address-groups`, as in Suricata's default suricata.yaml.
fn default_address_groups() -> BTreeMap<String, VarValue> {
    [
        ("HOME_NET", "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"),
        ("EXTERNAL_NET", "!$HOME_NET"),
        ("HTTP_SERVERS", "$HOME_NET"),
        ("SMTP_SERVERS", "$HOME_NET"),
        ("SQL_SERVERS", "$HOME_NET"),
        ("DNS_SERVERS", "$HOME_NET"),
        ("TELNET_SERVERS", "$HOME_NET"),
        ("AIM_SERVERS", "$EXTERNAL_NET"),
        ("DC_SERVERS", "$HOME_NET"),
        ("DNP3_SERVER", "$HOME_NET"),
        ("DNP3_CLIENT", "$HOME_NET"),
        ("MODBUS_CLIENT", "$HOME_NET"),
        ("MODBUS_SERVER", "$HOME_NET"),
        ("ENIP_CLIENT", "$HOME_NET"),
        ("ENIP_SERVER", "$HOME_NET"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), VarValue(v.to_string())))
    .collect()
}

/// Default `vars.port-groups`, as in Suricata's default suricata.yaml.
fn default_port_groups() -> BTreeMap<String, VarValue> {
    [
        ("HTTP_PORTS", "80"),
        ("SHELLCODE_PORTS", "!80"),
        ("ORACLE_PORTS", "1521"),
        ("SSH_PORTS", "22"),
        ("DNP3_PORTS", "20000"),
        ("MODBUS_PORTS", "502"),
        ("FILE_DATA_PORTS", "[$HTTP_PORTS,110,143]"),
        ("FTP_PORTS", "21"),
        ("GENEVE_PORTS", "6081"),
        ("VXLAN_PORTS", "4789"),
        ("TEREDO_PORTS", "3544"),
        ("SIP_PORTS", "[5060, 5061]"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), VarValue(v.to_string())))
    .collect()
}

/// A variable's value as rule text (`[10.0.0.0/8,!10.1.0.0/16]`, `$HOME_NET`, `80`).
/// Also read from a YAML number or list, which some config files use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct VarValue(pub String);

impl<'de> Deserialize<'de> for VarValue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        fn text(v: &Value) -> Option<String> {
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Sequence(items) => {
                    let parts: Option<Vec<String>> = items.iter().map(text).collect();
                    Some(format!("[{}]", parts?.join(",")))
                }
                _ => None,
            }
        }
        text(&v)
            .map(VarValue)
            .ok_or_else(|| serde::de::Error::custom("a variable must be a string, number or list"))
    }
}

/// `vars`: address and port groups used by rules as `$NAME`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Vars {
    #[serde(default = "default_address_groups")]
    pub address_groups: BTreeMap<String, VarValue>,
    #[serde(default = "default_port_groups")]
    pub port_groups: BTreeMap<String, VarValue>,
}

impl Default for Vars {
    fn default() -> Self {
        Vars {
            address_groups: default_address_groups(),
            port_groups: default_port_groups(),
        }
    }
}

fn default_event_batch_size() -> usize {
    256
}
fn default_event_batch_delay_ms() -> u64 {
    100
}
fn default_max_unacked_batches() -> usize {
    64
}

/// `detect`: the detect worker processes (Meerkat's own keys in Suricata's section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Detect {
    /// Number of detect worker processes; `auto`/absent = number of CPUs.
    #[serde(default, deserialize_with = "de::flex_opt_usize")]
    pub workers: Option<usize>,
    /// Events per batch sent to the eve-writer (a batch also goes when it is older than
    /// `event-batch-delay-ms`).
    #[serde(
        default = "default_event_batch_size",
        deserialize_with = "de::flex_usize"
    )]
    pub event_batch_size: usize,
    /// Longest time, in milliseconds, an event waits in a partly filled batch.
    #[serde(
        default = "default_event_batch_delay_ms",
        deserialize_with = "de::flex_u64"
    )]
    pub event_batch_delay_ms: u64,
    /// Batches a worker keeps unacknowledged before it stops producing (backpressure).
    #[serde(
        default = "default_max_unacked_batches",
        deserialize_with = "de::flex_usize"
    )]
    pub max_unacked_batches: usize,
}

impl Default for Detect {
    fn default() -> Self {
        Detect {
            workers: None,
            event_batch_size: default_event_batch_size(),
            event_batch_delay_ms: default_event_batch_delay_ms(),
            max_unacked_batches: default_max_unacked_batches(),
        }
    }
}

fn default_ring_size() -> ByteSize {
    ByteSize::mib(32)
}
fn default_backlog_size() -> usize {
    131_072
}

/// `capture`: the capture process (Meerkat's own section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Capture {
    /// Bytes of each capture -> worker shared-memory ring (a power of two).
    #[serde(default = "default_ring_size")]
    pub ring_size: ByteSize,
    /// Live capture only: packets the capture process holds between the packet source
    /// (NIC or kernel ring) and the workers' rings, so that a burst the workers cannot
    /// take at once is absorbed instead of dropped; 0 = off (the source thread writes
    /// straight into the workers' rings and drops when one is full).
    #[serde(default = "default_backlog_size", deserialize_with = "de::flex_usize")]
    pub backlog_size: usize,
    /// Live capture only: scheduling of the threads that take packets out of the source
    /// ring. `realtime` (SCHED_FIFO, priority 1; needs root or CAP_SYS_NICE, else a warning
    /// and `normal`) lets them preempt the busy detect workers as soon as the kernel hands
    /// over a block, so a small kernel or NIC ring does not overflow during a burst; they
    /// sleep whenever the ring is empty.
    #[serde(default)]
    pub rx_priority: RxPriority,
}

/// `capture.rx-priority`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum RxPriority {
    #[default]
    Realtime,
    Normal,
}

impl Default for Capture {
    fn default() -> Self {
        Capture {
            ring_size: default_ring_size(),
            backlog_size: default_backlog_size(),
            rx_priority: RxPriority::default(),
        }
    }
}

fn default_depth() -> ByteSize {
    ByteSize::mib(1)
}

/// `stream.reassembly`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Reassembly {
    /// Bytes of each direction of a TCP stream that are reassembled and inspected;
    /// 0 = unlimited. Suricata's default: 1mb.
    #[serde(default = "default_depth")]
    pub depth: ByteSize,
}

impl Default for Reassembly {
    fn default() -> Self {
        Reassembly {
            depth: default_depth(),
        }
    }
}

/// `stream`: TCP tracking.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Stream {
    /// Pick up sessions whose handshake was not seen. Suricata's default: no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub midstream: bool,
    /// Inline (IPS) stream mode: inspect data as it arrives rather than once acked.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub inline: bool,
    /// Validate TCP checksums (`-k none` turns it off). Suricata's default: yes.
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub checksum_validation: bool,
    /// Track sessions where only one direction is seen.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub async_oneside: bool,
    #[serde(default)]
    pub reassembly: Reassembly,
}

impl Default for Stream {
    fn default() -> Self {
        Stream {
            midstream: false,
            inline: false,
            checksum_validation: true,
            async_oneside: false,
            reassembly: Reassembly::default(),
        }
    }
}

/// `app-layer.protocols.<name>.enabled`: `yes`, `no` or `detection-only`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AppEnabled {
    Yes,
    No,
    DetectionOnly,
}

impl<'de> Deserialize<'de> for AppEnabled {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(true) => Ok(AppEnabled::Yes),
            Value::Bool(false) => Ok(AppEnabled::No),
            Value::String(s) if s.eq_ignore_ascii_case("detection-only") => {
                Ok(AppEnabled::DetectionOnly)
            }
            Value::String(s) => match de::parse_bool(&s) {
                Some(true) => Ok(AppEnabled::Yes),
                Some(false) => Ok(AppEnabled::No),
                None => Err(serde::de::Error::custom(format!(
                    "`{s}` is not yes, no or detection-only"
                ))),
            },
            other => Err(serde::de::Error::custom(format!(
                "{other:?} is not yes, no or detection-only"
            ))),
        }
    }
}

/// `app-layer.protocols.<name>.detection-ports`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DetectionPorts {
    #[serde(default)]
    pub dp: Option<VarValue>,
    #[serde(default)]
    pub sp: Option<VarValue>,
}

/// `app-layer.protocols.<name>`: the keys every protocol has, and the protocol's own
/// settings, which the protocol checks and types (each protocol owns its config
/// section: `meerkat_app::config`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub struct AppProtocol {
    #[serde(default = "app_yes")]
    pub enabled: AppEnabled,
    /// The ports the protocol's detection prefers (for a protocol recognised on its
    /// ports only: the ports it is recognised on), replacing its default ports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detection_ports: Option<DetectionPorts>,
    /// Every other key of the section, as written.
    #[serde(flatten)]
    pub settings: BTreeMap<String, Value>,
}

impl Default for AppProtocol {
    fn default() -> Self {
        AppProtocol {
            enabled: AppEnabled::Yes,
            detection_ports: None,
            settings: BTreeMap::new(),
        }
    }
}

fn app_yes() -> AppEnabled {
    AppEnabled::Yes
}

/// `app-layer`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AppLayer {
    #[serde(default)]
    pub protocols: BTreeMap<String, AppProtocol>,
}

impl AppLayer {
    /// Whether parsing of `proto` is on (default: on for the protocols Meerkat parses).
    pub fn enabled(&self, proto: &str) -> AppEnabled {
        self.protocols
            .get(proto)
            .map(|p| p.enabled)
            .unwrap_or(AppEnabled::Yes)
    }
}

/// `outputs.eve-log.filetype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FileType {
    #[default]
    Regular,
    UnixStream,
    UnixDgram,
    Redis,
}

impl FileType {
    /// The name as written in the config.
    pub fn name(self) -> &'static str {
        match self {
            FileType::Regular => "regular",
            FileType::UnixStream => "unix_stream",
            FileType::UnixDgram => "unix_dgram",
            FileType::Redis => "redis",
        }
    }
}

/// Options of one entry of `outputs.eve-log.types` (`- alert: {payload: yes}`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EveTypeOptions {
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub enabled: Option<bool>,
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub metadata: Option<bool>,
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub payload: Option<bool>,
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub payload_printable: Option<bool>,
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub packet: Option<bool>,
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub extended: Option<bool>,
    /// `stats`: log the totals over all processes (Suricata's default: yes).
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub totals: Option<bool>,
    /// `stats`: also log each process's own counters under `threads` (Suricata's
    /// per-thread stats; default: no). Those names are Meerkat's, outside Suricata's
    /// schema, as Suricata's per-thread names are.
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub threads: Option<bool>,
    /// Sub-types (e.g. `anomaly: {types: {decode: yes, stream: yes}}`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub types: BTreeMap<String, Value>,
}

fn opt_bool<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    match Value::deserialize(d)? {
        Value::Null => Ok(None),
        v => de::flex_bool(v).map(Some).map_err(serde::de::Error::custom),
    }
}

/// One entry of `outputs.eve-log.types`: a name, or a name with options.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EveType {
    Name(String),
    WithOptions(BTreeMap<String, EveTypeOptions>),
}

impl EveType {
    pub fn name(&self) -> &str {
        match self {
            EveType::Name(n) => n,
            EveType::WithOptions(m) => m.keys().next().map(String::as_str).unwrap_or(""),
        }
    }
    pub fn options(&self) -> Option<&EveTypeOptions> {
        match self {
            EveType::Name(_) => None,
            EveType::WithOptions(m) => m.values().next(),
        }
    }
    /// Whether the entry is on (an entry with `enabled: no` is off).
    pub fn enabled(&self) -> bool {
        self.options().and_then(|o| o.enabled).unwrap_or(true)
    }
}

fn default_eve_filename() -> String {
    "eve.json".to_string()
}

fn default_eve_types() -> Vec<EveType> {
    ["alert", "anomaly", "http", "dns", "tls", "flow", "stats"]
        .into_iter()
        .map(|s| EveType::Name(s.to_string()))
        .collect()
}

/// `outputs.eve-log.redis.mode`: how records are handed to redis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum RedisMode {
    /// `LPUSH` onto a list (`list` is Suricata's alias and default).
    #[default]
    Lpush,
    /// `RPUSH` onto a list.
    Rpush,
    /// `PUBLISH` on a channel (`channel` is Suricata's alias).
    Publish,
}

impl<'de> Deserialize<'de> for RedisMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.to_ascii_lowercase().as_str() {
            "list" | "lpush" => Ok(RedisMode::Lpush),
            "rpush" => Ok(RedisMode::Rpush),
            "channel" | "publish" => Ok(RedisMode::Publish),
            "xadd" | "stream" => Err(serde::de::Error::custom(format!(
                "redis mode `{s}` (streams) is not available; use list, lpush, rpush, channel or publish"
            ))),
            _ => Err(serde::de::Error::custom(format!(
                "`{s}` is not a redis mode (list, lpush, rpush, channel, publish)"
            ))),
        }
    }
}

impl RedisMode {
    /// The redis command that hands one record over.
    pub fn command(self) -> &'static str {
        match self {
            RedisMode::Lpush => "LPUSH",
            RedisMode::Rpush => "RPUSH",
            RedisMode::Publish => "PUBLISH",
        }
    }
}

fn default_redis_server() -> String {
    "127.0.0.1".to_string()
}
fn default_redis_port() -> u16 {
    6379
}
fn default_redis_key() -> String {
    "suricata".to_string()
}

/// `outputs.eve-log.redis` (used with `filetype: redis`). Suricata's names and defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Redis {
    /// Host name or address of the redis server; a path starting with `/` is a Unix
    /// socket (Meerkat's addition). Default 127.0.0.1.
    #[serde(default = "default_redis_server")]
    pub server: String,
    /// TCP port. Default 6379.
    #[serde(default = "default_redis_port", deserialize_with = "de::flex_u16")]
    pub port: u16,
    #[serde(default)]
    pub mode: RedisMode,
    /// List key or channel name. Default `suricata`.
    #[serde(default = "default_redis_key")]
    pub key: String,
}

impl Default for Redis {
    fn default() -> Self {
        Redis {
            server: default_redis_server(),
            port: default_redis_port(),
            mode: RedisMode::default(),
            key: default_redis_key(),
        }
    }
}

/// `outputs[].eve-log`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct EveLog {
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// `regular` (a file), `unix_stream`, `unix_dgram` (the socket at `filename`), or
    /// `redis` (see `redis`).
    #[serde(default)]
    pub filetype: FileType,
    /// File or socket name, relative to the log directory unless absolute. For regular
    /// files, strftime patterns (`%Y %m %d %H %M %S %s %j %y %%`) are expanded in local
    /// time each time the file is opened (see `rotate-interval`).
    #[serde(default = "default_eve_filename")]
    pub filename: String,
    /// One file per producing worker (`eve.<n>.json`); regular files only.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub threaded: bool,
    /// Bytes of output buffer; 0 = unbuffered (every event is its own write).
    #[serde(default)]
    pub buffer_size: ByteSize,
    /// Append to an existing file (yes, Suricata's default) or truncate it at start.
    /// Reopening (SIGHUP, rotation) always appends, as Suricata does.
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub append: bool,
    /// Permissions of created files, octal (`600`, `0640`); absent = 0640.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub filemode: Option<FileMode>,
    /// Reopen the file every interval, expanding the filename's strftime pattern anew
    /// (`eve-%Y-%m-%d-%H%M.json` + `rotate-interval: hour`); absent = never.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rotate_interval: Option<RotateInterval>,
    /// Add `pcap_filename` to records from pcap files.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub pcap_file: bool,
    /// The redis server, for `filetype: redis`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis: Option<Redis>,
    #[serde(default = "default_eve_types")]
    pub types: Vec<EveType>,
}

impl Default for EveLog {
    fn default() -> Self {
        EveLog {
            enabled: true,
            filetype: FileType::Regular,
            filename: default_eve_filename(),
            threaded: false,
            buffer_size: ByteSize(0),
            append: true,
            filemode: None,
            rotate_interval: None,
            pcap_file: false,
            redis: None,
            types: default_eve_types(),
        }
    }
}

impl EveLog {
    /// The entry for an event type, if that type is on.
    pub fn type_entry(&self, name: &str) -> Option<&EveType> {
        self.types.iter().find(|t| t.name() == name && t.enabled())
    }
}

/// One entry of `outputs`. Suricata's other outputs (fast, stats, pcap-log, ...) are
/// Suricata keys that Meerkat does not model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Output {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eve_log: Option<EveLog>,
}

fn default_outputs() -> Vec<Output> {
    vec![Output {
        eve_log: Some(EveLog::default()),
    }]
}

/// `heartbeat`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Heartbeat {
    /// Seconds between flushes of every output; 0 = never (1..=60).
    #[serde(default, deserialize_with = "de::flex_u32")]
    pub output_flush_interval: u32,
}

/// Checksum validation of packets (`pcap-file.checksum-checks`, `-k`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ChecksumChecks {
    /// Validate unless most packets of the input have bad checksums (offloading).
    #[default]
    Auto,
    /// Always validate.
    Yes,
    /// Never validate.
    No,
}

impl<'de> Deserialize<'de> for ChecksumChecks {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Value::deserialize(d)? {
            Value::Bool(b) => Ok(if b {
                ChecksumChecks::Yes
            } else {
                ChecksumChecks::No
            }),
            Value::String(s) if s.eq_ignore_ascii_case("auto") => Ok(ChecksumChecks::Auto),
            Value::String(s) if s.eq_ignore_ascii_case("all") => Ok(ChecksumChecks::Yes),
            Value::String(s) if s.eq_ignore_ascii_case("none") => Ok(ChecksumChecks::No),
            Value::String(s) => de::parse_bool(&s)
                .map(|b| {
                    if b {
                        ChecksumChecks::Yes
                    } else {
                        ChecksumChecks::No
                    }
                })
                .ok_or_else(|| serde::de::Error::custom(format!("`{s}` is not auto, yes or no"))),
            other => Err(serde::de::Error::custom(format!(
                "{other:?} is not auto, yes or no"
            ))),
        }
    }
}

/// `pcap-file.delete-when-done`: delete an input file once it is processed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeleteWhenDone {
    /// Keep every file (Suricata's default).
    #[default]
    No,
    /// Delete every file once processed.
    Yes,
    /// Delete the files whose packets raised no alert (keep the evidence).
    NonAlerts,
}

impl Serialize for DeleteWhenDone {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DeleteWhenDone::No => s.serialize_bool(false),
            DeleteWhenDone::Yes => s.serialize_bool(true),
            DeleteWhenDone::NonAlerts => s.serialize_str("non-alerts"),
        }
    }
}

impl<'de> Deserialize<'de> for DeleteWhenDone {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let bad = |v: &dyn std::fmt::Debug| {
            serde::de::Error::custom(format!(
                "delete-when-done must be true, false or non-alerts, not {v:?}"
            ))
        };
        match Value::deserialize(d)? {
            Value::Bool(b) => Ok(if b {
                DeleteWhenDone::Yes
            } else {
                DeleteWhenDone::No
            }),
            Value::String(s) if s.eq_ignore_ascii_case("non-alerts") => {
                Ok(DeleteWhenDone::NonAlerts)
            }
            Value::String(s) => match de::parse_bool(&s) {
                Some(true) => Ok(DeleteWhenDone::Yes),
                Some(false) => Ok(DeleteWhenDone::No),
                None => Err(bad(&s)),
            },
            other => Err(bad(&other)),
        }
    }
}

fn default_pcap_delay() -> Seconds {
    Seconds(30.0)
}
fn default_poll_interval() -> Seconds {
    Seconds(5.0)
}

/// `pcap-file`: reading capture files (`-r`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PcapFile {
    #[serde(default)]
    pub checksum_checks: ChecksumChecks,
    /// Keep watching directory inputs for new and growing files until stopped
    /// (`--pcap-file-continuous`). Suricata's default: no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub continuous: bool,
    /// Read the subdirectories of directory inputs too (`--pcap-file-recursive`).
    /// Suricata's default: no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub recursive: bool,
    /// Delete each file once processed: `false`, `true` or `non-alerts`
    /// (`--pcap-file-delete`). Suricata's default: false.
    #[serde(default)]
    pub delete_when_done: DeleteWhenDone,
    /// Seconds a file must go unmodified before it is read, in continuous mode (so that
    /// a file still being written is read once complete; a file renamed into place after
    /// it was written is read at once). Suricata's default: 30.
    #[serde(default = "default_pcap_delay")]
    pub delay: Seconds,
    /// Seconds between two looks at the directories in continuous mode. Suricata's
    /// default: 5.
    #[serde(default = "default_poll_interval")]
    pub poll_interval: Seconds,
}

impl Default for PcapFile {
    fn default() -> Self {
        PcapFile {
            checksum_checks: ChecksumChecks::default(),
            continuous: false,
            recursive: false,
            delete_when_done: DeleteWhenDone::No,
            delay: default_pcap_delay(),
            poll_interval: default_poll_interval(),
        }
    }
}

/// `scanner.identity`: how input files are told apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "kebab-case")]
pub enum ScannerIdentity {
    /// Device and inode numbers (no file is opened to identify it).
    Native,
    /// A hash of the bytes of the fingerprint window (survives copies across
    /// filesystems and inode reuse).
    #[default]
    Fingerprint,
}

fn default_fingerprint_length() -> ByteSize {
    ByteSize::kib(4)
}

/// `scanner.fingerprint`: the byte window `[offset, offset + length)` hashed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FingerprintWindow {
    /// Bytes skipped at the start of each file.
    #[serde(default)]
    pub offset: ByteSize,
    /// Bytes hashed (1 byte to 1mb); the default reaches past pcap's and pcapng's file
    /// headers, which are the same in every file a sensor writes.
    #[serde(default = "default_fingerprint_length")]
    pub length: ByteSize,
}

impl Default for FingerprintWindow {
    fn default() -> Self {
        FingerprintWindow {
            offset: ByteSize(0),
            length: default_fingerprint_length(),
        }
    }
}

fn default_excludes() -> Vec<String> {
    [".*", "*.tmp", "*.part"]
        .into_iter()
        .map(str::to_string)
        .collect()
}
fn default_checkpoint_interval() -> Seconds {
    Seconds(1.0)
}
fn default_forget_after() -> Seconds {
    Seconds(86_400.0)
}

/// `scanner`: how directory inputs are tracked (Meerkat's own section).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ScannerConfig {
    /// The registry of what was done with each file; absent = `pcap-registry.json` in
    /// `default-log-dir`, so that a rerun with the same log directory continues where
    /// the last one stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registry: Option<PathBuf>,
    #[serde(default)]
    pub identity: ScannerIdentity,
    #[serde(default)]
    pub fingerprint: FingerprintWindow,
    /// Names (patterns without `/`) or paths (with `/`) left out of directory inputs;
    /// by default hidden files and writers' temporary names, so that a file written
    /// under such a name and renamed into place is read once complete.
    #[serde(default = "default_excludes", deserialize_with = "de::flex_list")]
    pub exclude: Vec<String>,
    /// Seconds between two checkpoints within a file (one is also made at the end of
    /// each file): at most this much work is redone after a crash.
    #[serde(default = "default_checkpoint_interval")]
    pub checkpoint_interval: Seconds,
    /// Seconds a deleted file's identity is remembered (a file that comes back within
    /// that time is not processed again).
    #[serde(default = "default_forget_after")]
    pub forget_after: Seconds,
}

impl Default for ScannerConfig {
    fn default() -> Self {
        ScannerConfig {
            registry: None,
            identity: ScannerIdentity::default(),
            fingerprint: FingerprintWindow::default(),
            exclude: default_excludes(),
            checkpoint_interval: default_checkpoint_interval(),
            forget_after: default_forget_after(),
        }
    }
}

fn default_stats_interval() -> u64 {
    8
}

/// `stats`: periodic counters (EVE `stats` records).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Stats {
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// Seconds between stats records.
    #[serde(default = "default_stats_interval", deserialize_with = "de::flex_u64")]
    pub interval: u64,
}

impl Default for Stats {
    fn default() -> Self {
        Stats {
            enabled: true,
            interval: default_stats_interval(),
        }
    }
}

fn default_log_dir() -> PathBuf {
    PathBuf::from("/var/log/meerkat")
}
fn default_rule_path() -> PathBuf {
    PathBuf::from("/etc/meerkat/rules")
}
fn default_rule_files() -> Vec<String> {
    vec!["meerkat.rules".to_string()]
}

/// The whole configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Config {
    #[serde(default)]
    pub vars: Vars,
    /// Where EVE and other logs go (`-l`).
    #[serde(default = "default_log_dir")]
    pub default_log_dir: PathBuf,
    /// Directory that relative `rule-files` are in.
    #[serde(default = "default_rule_path")]
    pub default_rule_path: PathBuf,
    #[serde(default = "default_rule_files")]
    pub rule_files: Vec<String>,
    /// Classtype table; absent = the built-in one (Suricata's default table).
    #[serde(default)]
    pub classification_file: Option<PathBuf>,
    /// Directory for the shared-memory rings, counter pages and sockets between the
    /// processes. Absent: `meerkat run` makes a private one under /dev/shm; a role started
    /// alone needs it set (all roles of one sensor share it).
    #[serde(default)]
    pub runtime_dir: Option<PathBuf>,
    #[serde(default)]
    pub detect: Detect,
    #[serde(default)]
    pub capture: Capture,
    #[serde(default)]
    pub stream: Stream,
    #[serde(default)]
    pub app_layer: AppLayer,
    #[serde(default = "default_outputs")]
    pub outputs: Vec<Output>,
    #[serde(default)]
    pub heartbeat: Heartbeat,
    #[serde(default)]
    pub pcap_file: PcapFile,
    #[serde(default)]
    pub scanner: ScannerConfig,
    #[serde(default)]
    pub stats: Stats,
    /// Live capture from AF_PACKET sockets (`-i`), one entry per interface.
    #[serde(default)]
    pub af_packet: Vec<AfPacketIface>,
    /// Live capture from a DPDK port (`--dpdk`).
    #[serde(default)]
    pub dpdk: Dpdk,
    /// The user the capture role switches to once its sockets are open.
    #[serde(default)]
    pub run_as: RunAs,
    /// Prefilter matcher (Suricata's `mpm-algo`): `auto` (Hyperscan when the build has it,
    /// else Meerkat's pure-Rust fingerprint filter), `hs`, or `ac`/`ac-ks`/`ac-bs` (the
    /// pure-Rust filter).
    #[serde(default = "default_mpm_algo")]
    pub mpm_algo: String,
    #[serde(default)]
    pub control: Control,
    #[serde(default)]
    pub supervisor: Supervisor,
}

fn default_mpm_algo() -> String {
    "auto".to_string()
}

impl Default for Config {
    fn default() -> Self {
        Config {
            vars: Vars::default(),
            default_log_dir: default_log_dir(),
            default_rule_path: default_rule_path(),
            rule_files: default_rule_files(),
            classification_file: None,
            runtime_dir: None,
            detect: Detect::default(),
            capture: Capture::default(),
            stream: Stream::default(),
            app_layer: AppLayer::default(),
            outputs: default_outputs(),
            heartbeat: Heartbeat::default(),
            pcap_file: PcapFile::default(),
            scanner: ScannerConfig::default(),
            stats: Stats::default(),
            af_packet: Vec::new(),
            dpdk: Dpdk::default(),
            run_as: RunAs::default(),
            mpm_algo: default_mpm_algo(),
            control: Control::default(),
            supervisor: Supervisor::default(),
        }
    }
}

impl Config {
    /// Checks what types cannot: ranges and relations between keys.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let ring = self.capture.ring_size.bytes();
        if !ring.is_power_of_two() || !(64 * 1024..=1 << 36).contains(&ring) {
            return Err(ConfigError::Invalid(format!(
                "capture.ring-size {ring} must be a power of two from 64kb to 64gb"
            )));
        }
        live::validate(&self.af_packet, &self.dpdk)?;
        if self.heartbeat.output_flush_interval > 60 {
            return Err(ConfigError::Invalid(format!(
                "heartbeat.output-flush-interval {} must be 0 (never) to 60 seconds",
                self.heartbeat.output_flush_interval
            )));
        }
        if self.detect.workers == Some(0) {
            return Err(ConfigError::Invalid(
                "detect.workers must be at least 1".to_string(),
            ));
        }
        if self.detect.event_batch_size == 0 || self.detect.max_unacked_batches == 0 {
            return Err(ConfigError::Invalid(
                "detect.event-batch-size and detect.max-unacked-batches must be at least 1"
                    .to_string(),
            ));
        }
        if !matches!(
            self.mpm_algo.as_str(),
            "auto" | "hs" | "hyperscan" | "ac" | "ac-ks" | "ac-bs" | "fingerprint" | "fp"
        ) {
            return Err(ConfigError::Invalid(format!(
                "mpm-algo `{}` must be auto, hs or ac",
                self.mpm_algo
            )));
        }
        control::validate(&self.control, &self.supervisor)?;
        // `app-layer.protocols.<name>`: the names are checked where the protocols are
        // (meerkat_app::config).
        let fp = self.scanner.fingerprint.length.bytes();
        if !(1..=1 << 20).contains(&fp) {
            return Err(ConfigError::Invalid(format!(
                "scanner.fingerprint.length {fp} must be from 1 byte to 1mb"
            )));
        }
        if self.pcap_file.poll_interval.0 <= 0.0 {
            return Err(ConfigError::Invalid(
                "pcap-file.poll-interval must be more than 0 seconds".to_string(),
            ));
        }
        if self.scanner.checkpoint_interval.0 <= 0.0 {
            return Err(ConfigError::Invalid(
                "scanner.checkpoint-interval must be more than 0 seconds".to_string(),
            ));
        }
        for out in &self.outputs {
            let Some(eve) = &out.eve_log else { continue };
            if eve.filename.is_empty() && eve.filetype != FileType::Redis {
                return Err(ConfigError::Invalid(
                    "outputs.eve-log.filename must not be empty".to_string(),
                ));
            }
            if eve.filetype == FileType::Redis
                && eve.redis.as_ref().is_some_and(|r| r.key.is_empty())
            {
                return Err(ConfigError::Invalid(
                    "outputs.eve-log.redis.key must not be empty".to_string(),
                ));
            }
            if eve.threaded && eve.filetype != FileType::Regular {
                return Err(ConfigError::Invalid(format!(
                    "outputs.eve-log.threaded applies to filetype regular, not {}",
                    eve.filetype.name()
                )));
            }
            if eve.rotate_interval.is_some() && eve.filetype != FileType::Regular {
                return Err(ConfigError::Invalid(format!(
                    "outputs.eve-log.rotate-interval applies to filetype regular, not {}",
                    eve.filetype.name()
                )));
            }
        }
        Ok(())
    }

    /// Number of detect workers to run.
    pub fn workers(&self) -> usize {
        self.detect.workers.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1)
        })
    }

    /// Whether any enabled eve-log output logs records of type `name`.
    pub fn eve_wants(&self, name: &str) -> bool {
        self.eve_logs().any(|e| e.type_entry(name).is_some())
    }

    /// The enabled eve-log outputs.
    pub fn eve_logs(&self) -> impl Iterator<Item = &EveLog> {
        self.outputs
            .iter()
            .filter_map(|o| o.eve_log.as_ref())
            .filter(|e| e.enabled)
    }

    /// Rule files with `default-rule-path` applied to relative names.
    pub fn rule_paths(&self) -> Vec<PathBuf> {
        self.rule_files
            .iter()
            .map(|f| {
                let p = Path::new(f);
                if p.is_absolute() {
                    p.to_path_buf()
                } else {
                    self.default_rule_path.join(p)
                }
            })
            .collect()
    }

    /// Where the scanner's registry is: `scanner.registry`, or `pcap-registry.json` in
    /// the log directory.
    pub fn registry_path(&self) -> PathBuf {
        self.scanner
            .registry
            .clone()
            .unwrap_or_else(|| self.default_log_dir.join("pcap-registry.json"))
    }

    /// The files of the enabled eve-log outputs.
    pub fn eve_paths(&self) -> Vec<PathBuf> {
        self.eve_logs()
            .map(|e| self.default_log_dir.join(&e.filename))
            .collect()
    }

    /// The config as YAML (what the supervisor hands to the roles).
    pub fn to_yaml(&self) -> String {
        serde_yaml::to_string(self).unwrap_or_default()
    }
}

/// The defaults as a YAML tree.
pub fn default_tree() -> Value {
    serde_yaml::to_value(Config::default()).unwrap_or(Value::Null)
}

/// Reads a YAML config file (Suricata's `%YAML 1.1` header is accepted).
pub fn read_file(path: &Path) -> Result<Value, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    parse_text(&text).map_err(|message| ConfigError::Syntax {
        path: path.to_path_buf(),
        message,
    })
}

/// Parses YAML text. Suricata files start with `%YAML 1.1` and `---`, which this YAML
/// reader (1.2) refuses, so that directive is dropped first.
pub fn parse_text(text: &str) -> Result<Value, String> {
    let body: String = if text.trim_start().starts_with("%YAML") {
        text.lines()
            .skip_while(|l| l.trim_start().starts_with('%'))
            .collect::<Vec<_>>()
            .join("\n")
    } else {
        text.to_string()
    };
    match serde_yaml::from_str::<Value>(&body) {
        Ok(Value::Null) => Ok(Value::Mapping(Default::default())),
        Ok(v @ Value::Mapping(_)) => Ok(v),
        Ok(_) => Err("the top level must be a map of keys".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// Builds the typed config: defaults, then `file` merged over them, then the overrides
/// (`key=value`, applied in order), then the key check and validation.
pub fn resolve(file: Option<&Path>, overrides: &[String]) -> Result<Resolved, ConfigError> {
    let mut tree = default_tree();
    if let Some(path) = file {
        set::merge(&mut tree, read_file(path)?);
    }
    for o in overrides {
        set::apply(&mut tree, o)?;
    }
    resolve_tree(tree)
}

/// Checks and types a complete tree.
pub fn resolve_tree(mut tree: Value) -> Result<Resolved, ConfigError> {
    let report = keys::check_and_prune(&mut tree);
    if !report.unknown_keys.is_empty() {
        return Err(ConfigError::UnknownKeys(report.unknown_keys));
    }
    // Through text so that serde_yaml's errors carry the key path and position.
    let text = serde_yaml::to_string(&tree).map_err(|e| ConfigError::Invalid(e.to_string()))?;
    let config: Config =
        serde_yaml::from_str(&text).map_err(|e| ConfigError::Invalid(e.to_string()))?;
    config.validate()?;
    Ok(Resolved {
        config,
        ignored_suricata_keys: report.ignored_suricata_keys,
    })
}

/// Reads a resolved config written by the supervisor (or any config file, strictly:
/// Suricata-only keys are still only warnings, returned to the caller).
pub fn load_for_role(path: &Path, overrides: &[String]) -> Result<Resolved, ConfigError> {
    resolve(Some(path), overrides)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_round_trips() {
        let c = Config::default();
        let text = c.to_yaml();
        let back = resolve_tree(parse_text(&text).unwrap()).unwrap();
        assert_eq!(back.config, c);
        assert!(back.ignored_suricata_keys.is_empty());
    }

    #[test]
    fn every_default_key_is_a_meerkat_key() {
        fn walk(v: &Value, path: &mut Vec<String>, out: &mut Vec<String>) {
            match v {
                Value::Mapping(m) => {
                    for (k, v) in m {
                        path.push(k.as_str().unwrap_or("?").to_string());
                        let segs: Vec<&str> = path.iter().map(String::as_str).collect();
                        if !keys::is_meerkat_key(&segs) && !keys::is_meerkat_section(&segs) {
                            out.push(path.join("."));
                        }
                        walk(v, path, out);
                        path.pop();
                    }
                }
                Value::Sequence(s) => s.iter().for_each(|i| walk(i, path, out)),
                _ => {}
            }
        }
        let mut missing = Vec::new();
        walk(&default_tree(), &mut Vec::new(), &mut missing);
        assert!(missing.is_empty(), "not in MEERKAT_KEYS: {missing:?}");
    }

    #[test]
    fn suricata_style_file_and_sets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("suricata.yaml");
        std::fs::write(
            &path,
            r#"%YAML 1.1
---
vars:
  address-groups:
    HOME_NET: "[10.0.0.0/8]"
default-log-dir: /tmp/x
stream:
  memcap: 64mb
  midstream: yes
  reassembly:
    depth: 8kb
outputs:
  - fast:
      enabled: yes
  - eve-log:
      enabled: yes
      filename: alerts.json
      types:
        - alert
app-layer:
  protocols:
    http:
      enabled: yes
      libhtp:
        default-config:
          personality: IDS
"#,
        )
        .unwrap();
        let r = resolve(
            Some(&path),
            &[
                "outputs.1.eve-log.buffer-size=64kb".to_string(),
                "heartbeat.output-flush-interval=2".to_string(),
                "vars.address-groups.EXTERNAL_NET=!$HOME_NET".to_string(),
                "app-layer.protocols.mqtt.enabled=yes".to_string(),
                "stream.reassembly.depth=0".to_string(),
            ],
        )
        .unwrap();
        let c = r.config;
        assert!(c.stream.midstream);
        assert_eq!(c.stream.reassembly.depth, ByteSize(0));
        assert_eq!(c.vars.address_groups["HOME_NET"].0, "[10.0.0.0/8]");
        // Defaults that the file did not mention stay.
        assert_eq!(c.vars.address_groups["HTTP_SERVERS"].0, "$HOME_NET");
        let eve: Vec<&EveLog> = c.eve_logs().collect();
        assert_eq!(eve.len(), 1);
        assert_eq!(eve[0].filename, "alerts.json");
        assert_eq!(eve[0].buffer_size, ByteSize(65536));
        assert_eq!(c.heartbeat.output_flush_interval, 2);
        assert_eq!(c.app_layer.enabled("mqtt"), AppEnabled::Yes);
        assert!(
            r.ignored_suricata_keys
                .contains(&"stream.memcap".to_string())
        );
        assert!(
            r.ignored_suricata_keys
                .contains(&"outputs.fast".to_string())
        );
        // A protocol's own keys are its to check (meerkat_app::config).
        assert!(
            c.app_layer.protocols["http"]
                .settings
                .contains_key("libhtp")
        );
    }

    #[test]
    fn eve_output_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.yaml");
        std::fs::write(
            &path,
            r#"
outputs:
  - eve-log:
      filename: eve-%Y%m%d.json
      filemode: 600
      append: no
      rotate-interval: hour
      types:
        - alert
        - stats:
            totals: yes
            threads: yes
  - eve-log:
      filetype: redis
      redis:
        server: 127.0.0.1
        port: 6380
        mode: channel
        key: meerkat
        async: true
        pipelining:
          enabled: yes
      types: [flow]
  - eve-log:
      filetype: unix_dgram
      filename: /run/eve.sock
      types: [anomaly]
"#,
        )
        .unwrap();
        let r = resolve(Some(&path), &["outputs.eve-log.threaded=yes".to_string()]).unwrap();
        let eves: Vec<&EveLog> = r.config.eve_logs().collect();
        assert_eq!(eves.len(), 3);
        assert_eq!(eves[0].filemode, Some(FileMode(0o600)));
        assert!(!eves[0].append);
        assert!(eves[0].threaded);
        assert_eq!(
            eves[0].rotate_interval,
            Some(RotateInterval {
                seconds: 3600,
                aligned: true
            })
        );
        let stats = eves[0]
            .type_entry("stats")
            .and_then(|t| t.options())
            .unwrap();
        assert_eq!((stats.totals, stats.threads), (Some(true), Some(true)));
        let redis = eves[1].redis.as_ref().unwrap();
        assert_eq!(eves[1].filetype, FileType::Redis);
        assert_eq!((redis.port, redis.mode), (6380, RedisMode::Publish));
        assert_eq!(redis.key, "meerkat");
        assert_eq!(eves[2].filetype, FileType::UnixDgram);
        assert!(
            r.ignored_suricata_keys
                .contains(&"outputs.eve-log.redis.async".to_string())
        );
        // What the supervisor hands to the roles reads back the same.
        let back = resolve_tree(parse_text(&r.config.to_yaml()).unwrap()).unwrap();
        assert_eq!(back.config, r.config);
        assert!(r.config.eve_wants("flow") && !r.config.eve_wants("dns"));

        let e = resolve(Some(&path), &["outputs.1.eve-log.threaded=yes".to_string()]).unwrap_err();
        assert!(e.to_string().contains("threaded"), "{e}");
        let e = resolve(None, &["outputs.eve-log.redis.mode=xadd".to_string()]).unwrap_err();
        assert!(e.to_string().contains("xadd"), "{e}");
        let e = resolve(None, &["outputs.eve-log.filemode=999".to_string()]).unwrap_err();
        assert!(e.to_string().contains("999"), "{e}");
    }

    #[test]
    fn unknown_key_is_an_error_naming_it() {
        let e = resolve(None, &["stream.midstreem=yes".to_string()]).unwrap_err();
        assert_eq!(e.to_string(), "unknown config key: stream.midstreem");
    }

    #[test]
    fn bad_values_are_errors_naming_the_key() {
        let e = resolve(None, &["stream.midstream=perhaps".to_string()]).unwrap_err();
        assert!(e.to_string().contains("midstream"), "{e}");
        let e = resolve(None, &["heartbeat.output-flush-interval=61".to_string()]).unwrap_err();
        assert!(e.to_string().contains("output-flush-interval"), "{e}");
        let e = resolve(None, &["capture.ring-size=1000".to_string()]).unwrap_err();
        assert!(e.to_string().contains("ring-size"), "{e}");
    }

    #[test]
    fn live_capture_keys_and_sets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("suricata.yaml");
        std::fs::write(
            &path,
            r#"
af-packet:
  - interface: eth0
    threads: 2
    cluster-id: 98
    cluster-type: cluster_flow
    defrag: yes
    tpacket-v3: yes
    ring-size: 4096
    block-size: 65536
    bpf-filter: "{ 0x6, 0, 0, 0x00040000 },"
  - interface: default
dpdk:
  eal-params:
    proc-type: primary
  interfaces:
    - interface: net_pcap0
      rx-descriptors: auto
      mempool-size: 4095
      threads: auto
run-as:
  user: nobody
"#,
        )
        .unwrap();
        let r = resolve(
            Some(&path),
            &[
                "capture.backlog-size=0".to_string(),
                "af-packet.ring-size=256".to_string(),
                "dpdk.eal-params=--no-huge -m 256".to_string(),
            ],
        )
        .unwrap();
        let c = r.config;
        assert_eq!(c.capture.backlog_size, 0);
        let eth0 = live::af_packet_for(&c.af_packet, "eth0");
        // `--set af-packet.ring-size` changes the first entry that has the key.
        assert_eq!(eth0.ring_size, 256);
        assert_eq!(eth0.threads(), 2);
        assert_eq!(eth0.cluster_id, 98);
        assert_eq!(eth0.block_size, ByteSize(65536));
        assert!(eth0.bpf_filter.is_some());
        assert_eq!(c.dpdk.eal_params.0, ["--no-huge", "-m", "256"]);
        let port = c.dpdk.port().unwrap();
        assert_eq!(port.interface, "net_pcap0");
        assert_eq!(port.rx_descriptors, 1024);
        assert_eq!(port.mempool_size, 4095);
        assert_eq!(c.run_as.user.as_deref(), Some("nobody"));
        assert!(
            r.ignored_suricata_keys
                .contains(&"af-packet.tpacket-v3".to_string())
        );
        assert!(
            r.ignored_suricata_keys
                .contains(&"dpdk.interfaces.threads".to_string())
        );
        // Without any af-packet entry, --set makes the `default` entry.
        let c = resolve(None, &["af-packet.ring-size=1024".to_string()])
            .unwrap()
            .config;
        assert_eq!(live::af_packet_for(&c.af_packet, "veth1").ring_size, 1024);
        assert_eq!(c.capture.backlog_size, 131_072);
        let e = resolve(None, &["af-packet.block-size=1000".to_string()]).unwrap_err();
        assert!(e.to_string().contains("block-size"), "{e}");
        let e = resolve(None, &["af-packet.ring-sise=1".to_string()]).unwrap_err();
        assert!(e.to_string().contains("af-packet.ring-sise"), "{e}");
    }

    #[test]
    fn pcap_file_and_scanner_keys() {
        let r = resolve(
            None,
            &[
                "pcap-file.continuous=yes".to_string(),
                "pcap-file.recursive=true".to_string(),
                "pcap-file.delete-when-done=non-alerts".to_string(),
                "pcap-file.delay=0.5".to_string(),
                "pcap-file.poll-interval=2".to_string(),
                "scanner.registry=/var/lib/meerkat/reg.json".to_string(),
                "scanner.identity=native".to_string(),
                "scanner.fingerprint.offset=24".to_string(),
                "scanner.fingerprint.length=8kb".to_string(),
                "scanner.exclude=*.tmp, .*".to_string(),
                "scanner.checkpoint-interval=0.2".to_string(),
            ],
        )
        .unwrap();
        let c = r.config;
        assert!(c.pcap_file.continuous && c.pcap_file.recursive);
        assert_eq!(c.pcap_file.delete_when_done, DeleteWhenDone::NonAlerts);
        assert_eq!(c.pcap_file.delay.duration().as_millis(), 500);
        assert_eq!(c.scanner.identity, ScannerIdentity::Native);
        assert_eq!(c.scanner.fingerprint.length, ByteSize(8192));
        assert_eq!(c.scanner.exclude, ["*.tmp", ".*"]);
        assert_eq!(c.registry_path(), Path::new("/var/lib/meerkat/reg.json"));
        // Round trip through the YAML handed to the roles.
        let back = resolve_tree(parse_text(&c.to_yaml()).unwrap()).unwrap();
        assert_eq!(back.config, c);
        let d = resolve(None, &["pcap-file.delete-when-done=yes".to_string()]).unwrap();
        assert_eq!(d.config.pcap_file.delete_when_done, DeleteWhenDone::Yes);
        assert_eq!(
            d.config.registry_path(),
            d.config.default_log_dir.join("pcap-registry.json")
        );
        let e = resolve(None, &["pcap-file.delete-when-done=sometimes".to_string()]).unwrap_err();
        assert!(e.to_string().contains("delete-when-done"), "{e}");
        let e = resolve(None, &["scanner.fingerprint.length=0".to_string()]).unwrap_err();
        assert!(e.to_string().contains("scanner.fingerprint.length"), "{e}");
        let e = resolve(None, &["scanner.identity=inode".to_string()]).unwrap_err();
        assert!(e.to_string().contains("identity"), "{e}");
    }

    #[test]
    fn resolved_config_round_trips() {
        let r = resolve(
            None,
            &[
                "outputs.1.eve-log.types.2.anomaly.types.stream=yes".to_string(),
                "outputs.eve-log.types.0.alert.metadata=no".to_string(),
            ],
        )
        .unwrap();
        let eve = r.config.eve_logs().next().unwrap();
        // The plain `anomaly` entry became `anomaly: {types: {stream: yes}}`, not a second one.
        assert_eq!(
            eve.types.iter().filter(|t| t.name() == "anomaly").count(),
            1
        );
        let anomaly = eve.type_entry("anomaly").unwrap().options().unwrap();
        assert!(anomaly.types.contains_key("stream"));
        assert_eq!(
            eve.type_entry("alert").unwrap().options().unwrap().metadata,
            Some(false)
        );
        let back = resolve_tree(parse_text(&r.config.to_yaml()).unwrap()).unwrap();
        assert_eq!(back.config, r.config);
    }

    #[test]
    fn missing_file_is_a_clear_error() {
        let e = resolve(Some(Path::new("/nonexistent/meerkat.yaml")), &[]).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/meerkat.yaml"), "{e}");
    }
}
