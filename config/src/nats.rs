//! `outputs.eve-log.nats` (with `filetype: nats`): EVE records published to NATS
//! JetStream, each acknowledged by the stream (at-least-once). Meerkat's own section
//! (Suricata has no NATS output).
//!
//! Every message carries a `Nats-Msg-Id` made of `msg-id-prefix`, the producer, its
//! epoch and batch seq and the record's place in the batch, so a record sent again
//! (after a lost connection, a writer restart, a replayed spool) is dropped by the
//! stream's duplicate window instead of stored twice.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::client_tls::ClientTls;
use crate::de::{self, Seconds};

fn default_servers() -> Vec<String> {
    vec!["nats://127.0.0.1:4222".to_string()]
}
fn default_subject() -> String {
    "eve.{event_type}".to_string()
}
fn default_stream() -> String {
    "EVE".to_string()
}
fn default_duplicate_window() -> Seconds {
    Seconds(120.0)
}
fn default_ack_timeout() -> Seconds {
    Seconds(5.0)
}
fn default_max_in_flight() -> usize {
    4096
}
fn yes() -> bool {
    true
}

/// `outputs.eve-log.nats`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Nats {
    /// Server URLs (`nats://host:port`, `tls://host:port`), a list or one
    /// comma-separated string. Default `nats://127.0.0.1:4222`.
    #[serde(default = "default_servers", deserialize_with = "de::flex_list")]
    pub servers: Vec<String>,
    /// Subject of each record; `{event_type}` is replaced by the record's type
    /// (`alert`, `flow`, ...). Default `eve.{event_type}`.
    #[serde(default = "default_subject")]
    pub subject: String,
    /// JetStream stream that takes the subjects. Default `EVE`.
    #[serde(default = "default_stream")]
    pub stream: String,
    /// Create the stream (subjects: `subject` with `{event_type}` as `*`) when it does
    /// not exist. Default yes; `no` = the stream must be there (made by an operator).
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub create_stream: bool,
    /// Duplicate window of a stream the writer creates, seconds (JetStream's default,
    /// 120). Resends within it are dropped by the stream.
    #[serde(default = "default_duplicate_window")]
    pub duplicate_window: Seconds,
    /// First part of every message id; absent: the host name. Sensors that publish to
    /// one stream need different prefixes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub msg_id_prefix: Option<String>,
    /// Seconds to wait for the stream's acknowledgement of a message before sending it
    /// again. Default 5.
    #[serde(default = "default_ack_timeout")]
    pub ack_timeout: Seconds,
    /// Messages published and not yet acknowledged, at most. Default 4096.
    #[serde(default = "default_max_in_flight", deserialize_with = "de::flex_usize")]
    pub max_in_flight: usize,
    /// `.creds` file (JWT + NKey seed), as `nats context` makes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credentials: Option<PathBuf>,
    /// Authentication token.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
    /// User name (with `password`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
    /// TLS to the servers; absent: as the URLs say (`tls://` needs TLS).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<ClientTls>,
}

impl Default for Nats {
    fn default() -> Self {
        Nats {
            servers: default_servers(),
            subject: default_subject(),
            stream: default_stream(),
            create_stream: true,
            duplicate_window: default_duplicate_window(),
            msg_id_prefix: None,
            ack_timeout: default_ack_timeout(),
            max_in_flight: default_max_in_flight(),
            credentials: None,
            token: None,
            user: None,
            password: None,
            tls: None,
        }
    }
}

/// Largest `max-in-flight`.
pub const MAX_IN_FLIGHT: usize = 1 << 20;

impl Nats {
    /// The subjects a stream the writer creates listens on (`{event_type}` as `*`).
    pub fn stream_subject(&self) -> String {
        self.subject.replace("{event_type}", "*")
    }

    pub fn validate(&self) -> Result<(), crate::ConfigError> {
        let bad = |m: String| Err(crate::ConfigError::Invalid(m));
        if self.servers.is_empty() {
            return bad("outputs.eve-log.nats.servers must name at least one server".into());
        }
        let subject_ok = !self.subject.is_empty()
            && !self.subject.contains(char::is_whitespace)
            && self.subject.split('.').all(|t| !t.is_empty());
        if !subject_ok {
            return bad(format!(
                "outputs.eve-log.nats.subject `{}` is not a NATS subject (dot-separated \
                 tokens, no blanks)",
                self.subject
            ));
        }
        let stream_ok = !self.stream.is_empty()
            && !self
                .stream
                .contains(|c: char| c.is_whitespace() || ".*>/\\".contains(c));
        if !stream_ok {
            return bad(format!(
                "outputs.eve-log.nats.stream `{}` is not a stream name (no blanks, `.`, `*`, `>`)",
                self.stream
            ));
        }
        if !(1..=MAX_IN_FLIGHT).contains(&self.max_in_flight) {
            return bad(format!(
                "outputs.eve-log.nats.max-in-flight {} must be from 1 to {MAX_IN_FLIGHT}",
                self.max_in_flight
            ));
        }
        if self.ack_timeout.0 <= 0.0 {
            return bad("outputs.eve-log.nats.ack-timeout must be more than 0 seconds".into());
        }
        if self.token.is_some() && self.user.is_some() {
            return bad("outputs.eve-log.nats: token and user/password exclude each other".into());
        }
        if self.user.is_some() != self.password.is_some() {
            return bad("outputs.eve-log.nats.user and password go together".into());
        }
        if let Some(t) = &self.tls {
            t.validate("outputs.eve-log.nats.tls")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_round_trip_and_checks() {
        let d = Nats::default();
        let back: Nats = serde_yaml::from_str(&serde_yaml::to_string(&d).unwrap()).unwrap();
        assert_eq!(back, d);
        d.validate().unwrap();
        assert_eq!(d.stream_subject(), "eve.*");
        let n: Nats = serde_yaml::from_str("servers: nats://a:1, nats://b:2").unwrap();
        assert_eq!(n.servers, vec!["nats://a:1", "nats://b:2"]);
        for bad in [
            "subject: 'a..b'",
            "stream: 'a.b'",
            "max-in-flight: 0",
            "user: x",
        ] {
            let n: Nats = serde_yaml::from_str(bad).unwrap();
            let e = n.validate().unwrap_err().to_string();
            assert!(e.contains("outputs.eve-log.nats"), "{bad}: {e}");
        }
        assert!(serde_yaml::from_str::<Nats>("subjects: x").is_err());
    }
}
