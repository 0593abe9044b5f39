//! `outputs`: the list of Suricata outputs, of which Meerkat models `eve-log` (a regular
//! file, `unix_stream`/`unix_dgram` sockets, or redis: `eve-log.redis`), with its
//! buffering, rotation and event `types`. Suricata's other outputs (fast, stats,
//! pcap-log, ...) are Suricata keys Meerkat does not model (a warning each).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::de::{self, ByteSize, FileMode, RotateInterval, yes};
use crate::{ConfigError, Nats, Redis, Spool};

/// `outputs.eve-log.filetype`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FileType {
    #[default]
    Regular,
    UnixStream,
    UnixDgram,
    Redis,
    Syslog,
    Nats,
}

impl FileType {
    /// The name as written in the config.
    pub fn name(self) -> &'static str {
        match self {
            FileType::Regular => "regular",
            FileType::UnixStream => "unix_stream",
            FileType::UnixDgram => "unix_dgram",
            FileType::Redis => "redis",
            FileType::Syslog => "syslog",
            FileType::Nats => "nats",
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
    /// `alert`: log the payload base64-encoded (`payload`; default no). For a match on
    /// the reassembled stream or a transaction of a TCP flow, the stream data of the
    /// alert's direction with `[N bytes missing]` where bytes were lost; otherwise the
    /// packet's payload.
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub payload: Option<bool>,
    /// `alert`: bytes kept for a stream payload (`payload-buffer-size`; Suricata logs
    /// one byte less than this, as it does). Default 4 KiB, at most
    /// [`MAX_PAYLOAD_BUFFER_SIZE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload_buffer_size: Option<ByteSize>,
    /// `alert`: log the payload as printable text (`payload_printable`: bytes other
    /// than printable ASCII, CR and LF become `.`; default no).
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub payload_printable: Option<bool>,
    /// `alert`: log the whole packet base64-encoded (`packet`, with `packet_info`;
    /// default no).
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
    /// `files`: detect every logged file's type from its content (`magic`).
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub force_magic: Option<bool>,
    /// `files`: digests to compute for every file (`md5`, `sha1`, `sha256`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub force_hash: Vec<String>,
    /// `mqtt`: log CONNECT passwords (Suricata's default: yes); `pgsql`: log password
    /// messages (Suricata's default: no, `password_redacted` instead).
    #[serde(
        default,
        deserialize_with = "opt_bool",
        skip_serializing_if = "Option::is_none"
    )]
    pub passwords: Option<bool>,
    /// `mqtt`: bytes of a password, will message or publish message logged, the rest
    /// replaced by `[truncated N additional bytes]` (Suricata's default: 1 KiB; 0: no
    /// limit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string_log_limit: Option<ByteSize>,
    /// `smtp`: the email headers logged beyond the default fields (Suricata's email
    /// logger's names: `reply_to` or `reply-to`, `bcc`, `message_id`, `subject`,
    /// `x_mailer`, `user_agent`, `received`, `x_originating_ip`, `in_reply_to`,
    /// `references`, `importance`, `priority`, `sensitivity`, `organization`,
    /// `content_md5`, `date`; other names are left out, as Suricata leaves them).
    #[serde(
        default,
        deserialize_with = "de::flex_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub custom: Vec<String>,
    /// `smtp`: the MD5s logged: `body` (with `app-layer.protocols.smtp.mime.body-md5`),
    /// `subject`.
    #[serde(
        default,
        deserialize_with = "de::flex_list",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub md5: Vec<String>,
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

/// Suricata's default `payload-buffer-size`.
pub const DEFAULT_PAYLOAD_BUFFER_SIZE: u64 = 4096;
/// Largest `payload-buffer-size` accepted (each alert may carry this much).
pub const MAX_PAYLOAD_BUFFER_SIZE: u64 = 16 << 20;

/// What an output's alerts carry (its `alert` entry's options).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlertExtras {
    /// `payload: yes`.
    pub payload: bool,
    /// `payload-printable: yes`.
    pub payload_printable: bool,
    /// `packet: yes`.
    pub packet: bool,
    /// Most bytes of stream logged as a payload: `payload-buffer-size` less one, as
    /// Suricata logs.
    pub max_stream_payload: usize,
}

fn default_eve_filename() -> String {
    "eve.json".to_string()
}

/// The EVE types of the application protocols that log records, in their list's order
/// (set once by meerkat-app, which owns that list, before any config is resolved:
/// `meerkat_app::config::resolve`). Empty until then.
static APP_EVENT_TYPES: std::sync::OnceLock<Vec<&'static str>> = std::sync::OnceLock::new();

/// Registers the application protocols' EVE types (the first call wins).
pub fn register_app_event_types(types: Vec<&'static str>) {
    let _ = APP_EVENT_TYPES.set(types);
}

/// An eve-log's default `types`: `alert`, `anomaly`, every application protocol's
/// record type, `files` (`fileinfo` records), `flow`, `stats` (the index of each entry
/// is what `--set outputs.0.eve-log.types.N...` addresses).
fn default_eve_types() -> Vec<EveType> {
    let app = APP_EVENT_TYPES.get().map_or(&[][..], Vec::as_slice);
    ["alert", "anomaly"]
        .iter()
        .chain(app)
        .chain(&["files", "flow", "stats"])
        .map(|s| EveType::Name(s.to_string()))
        .collect()
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
    /// Add the flow's Community ID (`community_id`, version 1) to every record that has
    /// a flow.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub community_id: bool,
    /// The Community ID seed (0 to 65535; Suricata's default 0).
    #[serde(default)]
    pub community_id_seed: u16,
    /// The redis server, for `filetype: redis`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis: Option<Redis>,
    /// The NATS JetStream servers, for `filetype: nats`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nats: Option<Nats>,
    /// The disk spool of a network output (redis, nats); absent: the defaults (on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spool: Option<Spool>,
    /// `filetype: syslog`: facility, level, identity, socket (see [`crate::syslog`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facility: Option<crate::syslog::Facility>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<crate::syslog::Level>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syslog_socket: Option<std::path::PathBuf>,
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
            community_id: false,
            community_id_seed: 0,
            redis: None,
            nats: None,
            spool: None,
            facility: None,
            level: None,
            identity: None,
            syslog_socket: None,
            types: default_eve_types(),
        }
    }
}

impl EveLog {
    /// The entry for an event type, if that type is on.
    pub fn type_entry(&self, name: &str) -> Option<&EveType> {
        self.types.iter().find(|t| t.name() == name && t.enabled())
    }

    /// What this output's alerts carry (nothing when it does not log alerts).
    pub fn alert_extras(&self) -> AlertExtras {
        let Some(entry) = self.type_entry("alert") else {
            return AlertExtras::default();
        };
        let o = entry.options().cloned().unwrap_or_default();
        let size = o
            .payload_buffer_size
            .map_or(DEFAULT_PAYLOAD_BUFFER_SIZE, |b| b.bytes());
        AlertExtras {
            payload: o.payload.unwrap_or(false),
            payload_printable: o.payload_printable.unwrap_or(false),
            packet: o.packet.unwrap_or(false),
            max_stream_payload: usize::try_from(size.saturating_sub(1)).unwrap_or(usize::MAX),
        }
    }
}

/// Which anomalies an output's `anomaly` records report: its entry's `types`, with
/// Suricata's defaults (`decode: no`, `stream: no`, `applayer: yes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AnomalyTypes {
    /// Decoder events of packets.
    pub decode: bool,
    /// TCP stream events.
    pub stream: bool,
    /// Application-layer events: parser anomalies and protocol-detection events.
    pub applayer: bool,
}

impl Default for AnomalyTypes {
    fn default() -> Self {
        AnomalyTypes {
            decode: false,
            stream: false,
            applayer: true,
        }
    }
}

impl EveLog {
    /// The anomalies this output's `anomaly` records report (`None` when it logs none).
    pub fn anomaly_types(&self) -> Option<AnomalyTypes> {
        let entry = self.type_entry("anomaly")?;
        let mut t = AnomalyTypes::default();
        if let Some(o) = entry.options() {
            let flag = |name: &str, default: bool| {
                o.types
                    .get(name)
                    .map_or(default, |v| de::flex_bool(v.clone()).unwrap_or(default))
            };
            t = AnomalyTypes {
                decode: flag("decode", t.decode),
                stream: flag("stream", t.stream),
                applayer: flag("applayer", t.applayer),
            };
        }
        Some(t)
    }
}

/// Suricata's default `string-log-limit` of `mqtt` records.
pub const DEFAULT_MQTT_STRING_LOG_LIMIT: u64 = 1024;

/// What an output's `mqtt` records carry (its `mqtt` entry's options).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqttLog {
    pub passwords: bool,
    /// 0: no limit.
    pub string_log_limit: u64,
}

impl EveLog {
    /// Whether this output logs `dhcp` records in Suricata's `extended` form (every
    /// message, with all its details; default no: ACKs only). `None` when it logs none.
    pub fn dhcp_extended(&self) -> Option<bool> {
        let t = self.type_entry("dhcp")?;
        Some(t.options().and_then(|o| o.extended).unwrap_or(false))
    }

    /// The `custom` and `md5` lists of this output's `smtp` entry (`None` when it logs
    /// no `smtp` records).
    pub fn smtp_log(&self) -> Option<(Vec<String>, Vec<String>)> {
        let o = self
            .type_entry("smtp")?
            .options()
            .cloned()
            .unwrap_or_default();
        Some((o.custom, o.md5))
    }

    /// Whether this output's `pgsql` records carry passwords (`None` when it logs
    /// none; Suricata's default: no).
    pub fn pgsql_passwords(&self) -> Option<bool> {
        let t = self.type_entry("pgsql")?;
        Some(t.options().and_then(|o| o.passwords).unwrap_or(false))
    }

    /// The options of this output's `mqtt` records (`None` when it logs none).
    pub fn mqtt_log(&self) -> Option<MqttLog> {
        let o = self
            .type_entry("mqtt")?
            .options()
            .cloned()
            .unwrap_or_default();
        Some(MqttLog {
            passwords: o.passwords.unwrap_or(true),
            string_log_limit: o
                .string_log_limit
                .map_or(DEFAULT_MQTT_STRING_LOG_LIMIT, |b| b.bytes()),
        })
    }
}

/// The `types` options that apply to `alert` records only.
const ALERT_ONLY: [&str; 4] = [
    "payload",
    "payload-buffer-size",
    "payload-printable",
    "packet",
];

/// One entry of `outputs`. Suricata's other outputs (fast, stats, pcap-log, ...) are
/// Suricata keys that Meerkat does not model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Output {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eve_log: Option<EveLog>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_log: Option<crate::pcap_log::PcapLog>,
    pub file_store: Option<FileStore>,
}

/// `outputs[].file-store` (Suricata's version 2): every stored file is written once to
/// `<dir>/<first two hex digits of its sha256>/<sha256>`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct FileStore {
    /// Only version 2 exists in Suricata 8 (and here).
    #[serde(default = "file_store_version")]
    pub version: u32,
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// Directory, relative to the log directory unless absolute.
    #[serde(default = "file_store_dir")]
    pub dir: String,
    /// Also write `<sha256>.<n>.json` with the file's `fileinfo` record beside it.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub write_fileinfo: bool,
    /// Store every file, not only those a rule's `filestore` asks for.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub force_filestore: bool,
    /// Bytes of a file tracked at most in flows with files to store (0 = unlimited).
    #[serde(default)]
    pub stream_depth: ByteSize,
    /// Files kept open between writes (0: closed after each write).
    #[serde(default)]
    pub max_open_files: u32,
    /// Digests computed for every file besides the sha256 the store names files by.
    #[serde(default)]
    pub force_hash: Vec<String>,
    /// Bytes all files of a worker keep in memory for the store at most (0 = the
    /// default, 128 MiB); a file that finds no room fails (`ERROR`, not stored).
    /// Meerkat's key: Suricata bounds these bytes with each protocol's memcap.
    #[serde(default)]
    pub memcap: ByteSize,
    /// Suricata's X-Forwarded-For options of the `.json` files: accepted, not modelled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub xff: Option<Value>,
}

fn file_store_version() -> u32 {
    2
}

fn file_store_dir() -> String {
    "filestore".to_string()
}

impl Default for FileStore {
    fn default() -> Self {
        FileStore {
            version: 2,
            enabled: false,
            dir: file_store_dir(),
            write_fileinfo: false,
            force_filestore: false,
            stream_depth: ByteSize(0),
            max_open_files: 0,
            force_hash: Vec::new(),
            memcap: ByteSize(0),
            xff: None,
        }
    }
}

/// The digest names `force-hash` accepts.
pub const HASH_NAMES: &[&str] = &["md5", "sha1", "sha256"];

pub(crate) fn default_outputs() -> Vec<Output> {
    vec![Output {
        eve_log: Some(EveLog::default()),
        pcap_log: None,
        file_store: None,
    }]
}

/// Checks each eve-log output: a file or socket name (except for redis), a redis key,
/// and the options that apply to regular files only.
pub(crate) fn validate(outputs: &[Output]) -> Result<(), ConfigError> {
    for out in outputs {
        if let Some(p) = &out.pcap_log {
            p.validate()?;
        }
        if let Some(fs) = &out.file_store {
            if fs.version != 2 {
                return Err(ConfigError::Invalid(format!(
                    "outputs.file-store.version {} is not supported (only 2)",
                    fs.version
                )));
            }
            check_hashes("outputs.file-store.force-hash", &fs.force_hash)?;
        }
        let Some(eve) = &out.eve_log else { continue };
        if let Some(o) = eve.type_entry("files").and_then(EveType::options) {
            check_hashes("outputs.eve-log.types.files.force-hash", &o.force_hash)?;
        }
        if eve.filename.is_empty() && !crate::bus::ignores_filename(eve.filetype) {
            return Err(ConfigError::Invalid(
                "outputs.eve-log.filename must not be empty".to_string(),
            ));
        }
        crate::bus::validate(eve)?;
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
        for t in &eve.types {
            let Some(o) = t.options() else { continue };
            let set = [
                o.payload.is_some(),
                o.payload_buffer_size.is_some(),
                o.payload_printable.is_some(),
                o.packet.is_some(),
            ];
            if t.name() != "alert"
                && let Some(i) = set.iter().position(|&s| s)
            {
                return Err(ConfigError::Invalid(format!(
                    "outputs.eve-log.types.{}.{} applies to alert records only",
                    t.name(),
                    ALERT_ONLY[i]
                )));
            }
            if t.name() != "mqtt" && o.string_log_limit.is_some() {
                return Err(ConfigError::Invalid(format!(
                    "outputs.eve-log.types.{}: string-log-limit applies to mqtt records only",
                    t.name()
                )));
            }
            if !matches!(t.name(), "mqtt" | "pgsql") && o.passwords.is_some() {
                return Err(ConfigError::Invalid(format!(
                    "outputs.eve-log.types.{}: passwords applies to mqtt and pgsql records only",
                    t.name()
                )));
            }
            if let Some(b) = o.payload_buffer_size
                && b.bytes() > MAX_PAYLOAD_BUFFER_SIZE
            {
                return Err(ConfigError::Invalid(format!(
                    "outputs.eve-log.types.alert.payload-buffer-size {b} is over the largest \
                     accepted, {}",
                    ByteSize(MAX_PAYLOAD_BUFFER_SIZE)
                )));
            }
        }
    }
    Ok(())
}

fn check_hashes(key: &str, names: &[String]) -> Result<(), ConfigError> {
    match names.iter().find(|n| !HASH_NAMES.contains(&n.as_str())) {
        Some(n) => Err(ConfigError::Invalid(format!(
            "{key}: unknown hash `{n}` (expected md5, sha1 or sha256)"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RedisMode, parse_text, resolve, resolve_tree};

    /// `anomaly.types` with Suricata's defaults: decode no, stream no, applayer yes.
    #[test]
    fn anomaly_types_default_as_suricata() {
        let eve = |sets: &[&str]| {
            let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
            let r = resolve(None, &sets).unwrap();
            r.config.eve_logs().next().unwrap().anomaly_types()
        };
        assert_eq!(eve(&[]), Some(AnomalyTypes::default()));
        assert_eq!(
            eve(&[
                "outputs.1.eve-log.types.2.anomaly.types.decode=yes",
                "outputs.1.eve-log.types.2.anomaly.types.applayer=no",
            ]),
            Some(AnomalyTypes {
                decode: true,
                stream: false,
                applayer: false
            })
        );
        assert_eq!(eve(&["outputs.1.eve-log.types.2.anomaly.enabled=no"]), None);
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
        let e = resolve(None, &["outputs.eve-log.redis.mode=queue".to_string()]).unwrap_err();
        assert!(e.to_string().contains("queue"), "{e}");
        let e = resolve(None, &["outputs.eve-log.filemode=999".to_string()]).unwrap_err();
        assert!(e.to_string().contains("999"), "{e}");
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
}
