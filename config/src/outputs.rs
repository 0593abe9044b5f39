//! `outputs`: the list of Suricata outputs, of which Meerkat models `eve-log` (a regular
//! file, `unix_stream`/`unix_dgram` sockets, or redis: `eve-log.redis`), with its
//! buffering, rotation and event `types`. Suricata's other outputs (fast, stats,
//! pcap-log, ...) are Suricata keys Meerkat does not model (a warning each).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::ConfigError;
use crate::de::{self, ByteSize, FileMode, RotateInterval, yes};

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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pcap_log: Option<crate::pcap_log::PcapLog>,
}

pub(crate) fn default_outputs() -> Vec<Output> {
    vec![Output {
        eve_log: Some(EveLog::default()),
        pcap_log: None,
    }]
}

/// Checks each eve-log output: a file or socket name (except for redis), a redis key,
/// and the options that apply to regular files only.
pub(crate) fn validate(outputs: &[Output]) -> Result<(), ConfigError> {
    for out in outputs {
        if let Some(p) = &out.pcap_log {
            p.validate()?;
        }
        let Some(eve) = &out.eve_log else { continue };
        if eve.filename.is_empty() && eve.filetype != FileType::Redis {
            return Err(ConfigError::Invalid(
                "outputs.eve-log.filename must not be empty".to_string(),
            ));
        }
        if eve.filetype == FileType::Redis && eve.redis.as_ref().is_some_and(|r| r.key.is_empty()) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{parse_text, resolve, resolve_tree};

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
