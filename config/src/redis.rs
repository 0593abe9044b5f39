//! `outputs.eve-log.redis` (with `filetype: redis`): Suricata's names and defaults
//! (`server`, `port`, `mode`, `key`, `stream-maxlen`, `stream-trim-exact`) and Meerkat's
//! additions: AUTH (`username`, `password`), TLS (`tls`), and `stream-keep-unacked`.
//!
//! Suricata's stream mode appends `MAXLEN ~ 100000` to every `XADD`: once a stream
//! holds that many entries, the oldest go, whether or not a consumer has read them. With
//! `stream-keep-unacked: yes` (Meerkat's default) the writer instead trims the stream
//! itself, and never past the oldest entry that a consumer group of the stream has not
//! acknowledged; a stream without consumer groups is trimmed as Suricata does.

use serde::{Deserialize, Serialize};

use crate::client_tls::ClientTls;
use crate::de;

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
    /// `XADD` onto a stream, the record in the field `eve` (`stream` is Suricata's alias).
    Xadd,
}

impl<'de> Deserialize<'de> for RedisMode {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.to_ascii_lowercase().as_str() {
            "list" | "lpush" => Ok(RedisMode::Lpush),
            "rpush" => Ok(RedisMode::Rpush),
            "channel" | "publish" => Ok(RedisMode::Publish),
            "xadd" | "stream" => Ok(RedisMode::Xadd),
            _ => Err(serde::de::Error::custom(format!(
                "`{s}` is not a redis mode (list, lpush, rpush, channel, publish, stream, xadd)"
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
            RedisMode::Xadd => "XADD",
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
/// Suricata's `REDIS_MAX_STREAM_LENGTH_DEFAULT`.
fn default_stream_maxlen() -> u64 {
    100_000
}
fn yes() -> bool {
    true
}

/// `outputs.eve-log.redis`.
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
    /// List key, channel or stream name. Default `suricata`.
    #[serde(default = "default_redis_key")]
    pub key: String,
    /// Stream mode: trim the stream to about this many entries; 0 = never trim.
    /// Default 100000 (Suricata's).
    #[serde(default = "default_stream_maxlen", deserialize_with = "de::flex_u64")]
    pub stream_maxlen: u64,
    /// Stream mode: trim exactly (`=`) rather than to whole radix-tree nodes (`~`, a few
    /// tens of entries more; cheaper for redis). Default no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub stream_trim_exact: bool,
    /// Stream mode: never trim an entry that a consumer group of the stream has not
    /// acknowledged (Meerkat's; default yes). See the module documentation.
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub stream_keep_unacked: bool,
    /// AUTH user name (redis 6 ACLs); absent: `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub username: Option<String>,
    /// AUTH password; absent: no AUTH.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// TLS to the server (TCP only); absent: plain text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<ClientTls>,
}

impl Default for Redis {
    fn default() -> Self {
        Redis {
            server: default_redis_server(),
            port: default_redis_port(),
            mode: RedisMode::default(),
            key: default_redis_key(),
            stream_maxlen: default_stream_maxlen(),
            stream_trim_exact: false,
            stream_keep_unacked: true,
            username: None,
            password: None,
            tls: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_defaults_round_trip() {
        for (s, m) in [
            ("list", RedisMode::Lpush),
            ("RPUSH", RedisMode::Rpush),
            ("channel", RedisMode::Publish),
            ("stream", RedisMode::Xadd),
            ("xadd", RedisMode::Xadd),
        ] {
            assert_eq!(serde_yaml::from_str::<RedisMode>(s).unwrap(), m);
        }
        let e = serde_yaml::from_str::<RedisMode>("queue").unwrap_err();
        assert!(e.to_string().contains("queue"), "{e}");
        let d = Redis::default();
        let back: Redis = serde_yaml::from_str(&serde_yaml::to_string(&d).unwrap()).unwrap();
        assert_eq!(back, d);
        assert_eq!((d.stream_maxlen, d.stream_keep_unacked), (100_000, true));
    }
}
