//! The sections for the running stack: `control` (Meerkat's gRPC control API that
//! `meerkat ctl` talks to, the Prometheus endpoint), `unix-command` (Suricata's
//! unix-socket protocol, for `suricatasc` and the tools that speak it) and `supervisor`
//! (restarts, crash loops, drain deadline, keep-running).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::ConfigError;
use crate::de::{self, ByteSize};

fn default_max_message() -> ByteSize {
    ByteSize::mib(4)
}

/// `control`: where the control API listens and who may use it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Control {
    /// Unix socket of the control API (mode 0600: the owner only). Absent:
    /// `control.sock` in the runtime directory.
    #[serde(default)]
    pub socket: Option<PathBuf>,
    /// Also serve the control API on this TCP address (`host:port`). Absent: no TCP.
    /// Requires a way to authenticate callers: `token-file`, or `tls-client-ca` (mutual
    /// TLS), or both.
    #[serde(default)]
    pub listen: Option<String>,
    /// PEM certificate chain (server certificate first) for TLS on `listen`. Absent:
    /// TCP is plain text (then `token-file` is required, and the token travels in clear).
    #[serde(default)]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key (PKCS#8, PKCS#1 or SEC1) of `tls-cert`.
    #[serde(default)]
    pub tls_key: Option<PathBuf>,
    /// PEM certificates of the CAs that sign client certificates. Set: mutual TLS, every
    /// TCP client must present a certificate one of them signed. Needs `tls-cert`.
    #[serde(default)]
    pub tls_client_ca: Option<PathBuf>,
    /// File holding the bearer token that TCP clients must send
    /// (`authorization: Bearer <token>`); surrounding whitespace is ignored.
    #[serde(default)]
    pub token_file: Option<PathBuf>,
    /// Serve Prometheus text metrics on this TCP address (`host:port`, path `/metrics`).
    /// Absent: off.
    #[serde(default)]
    pub metrics_listen: Option<String>,
    /// Largest control request or reply, bytes.
    #[serde(default = "default_max_message")]
    pub max_message_size: ByteSize,
}

impl Default for Control {
    fn default() -> Self {
        Control {
            socket: None,
            listen: None,
            tls_cert: None,
            tls_key: None,
            tls_client_ca: None,
            token_file: None,
            metrics_listen: None,
            max_message_size: default_max_message(),
        }
    }
}

/// `unix-command.enabled`: Suricata's `yes`, `no` or `auto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnixCommandEnabled {
    Yes,
    No,
    /// On for live capture (`-i`, `--dpdk`) and the unix-socket run mode
    /// (`--unix-socket`), off for offline (`-r`) runs, as in Suricata.
    #[default]
    Auto,
}

impl Serialize for UnixCommandEnabled {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(match self {
            UnixCommandEnabled::Yes => "yes",
            UnixCommandEnabled::No => "no",
            UnixCommandEnabled::Auto => "auto",
        })
    }
}

impl<'de> Deserialize<'de> for UnixCommandEnabled {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = serde_yaml::Value::deserialize(d)?;
        let text = match &v {
            serde_yaml::Value::Bool(b) => return Ok(if *b { Self::Yes } else { Self::No }),
            serde_yaml::Value::String(s) => s.clone(),
            other => {
                return Err(serde::de::Error::custom(format!(
                    "unix-command.enabled `{other:?}` must be yes, no or auto"
                )));
            }
        };
        if text.trim().eq_ignore_ascii_case("auto") {
            return Ok(Self::Auto);
        }
        match de::parse_bool(&text) {
            Some(true) => Ok(Self::Yes),
            Some(false) => Ok(Self::No),
            None => Err(serde::de::Error::custom(format!(
                "unix-command.enabled `{text}` must be yes, no or auto"
            ))),
        }
    }
}

/// Directory of a relative `unix-command.filename` (Suricata's run directory).
pub const UNIX_COMMAND_DIR: &str = "/var/run/suricata";
/// `unix-command.filename` when not set (Suricata's default).
pub const UNIX_COMMAND_DEFAULT: &str = "suricata-command.socket";

/// `unix-command`: Suricata's unix-socket protocol (`suricatasc`, EveBox, Scirius,
/// Prometheus exporters), served by the supervisor on a socket only its owner may use.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct UnixCommand {
    /// `yes`, `no` or `auto` (the default: live capture and `--unix-socket` runs).
    #[serde(default)]
    pub enabled: UnixCommandEnabled,
    /// The socket; a relative name is in `/var/run/suricata/`. Absent:
    /// `/var/run/suricata/suricata-command.socket`.
    #[serde(default)]
    pub filename: Option<PathBuf>,
}

impl UnixCommand {
    /// Where the socket is.
    pub fn path(&self) -> PathBuf {
        let name = self
            .filename
            .clone()
            .unwrap_or_else(|| PathBuf::from(UNIX_COMMAND_DEFAULT));
        if name.is_absolute() {
            name
        } else {
            PathBuf::from(UNIX_COMMAND_DIR).join(name)
        }
    }
}

fn default_backoff_ms() -> u64 {
    100
}
fn default_backoff_max_ms() -> u64 {
    5000
}
fn default_max_restarts() -> u32 {
    5
}
fn default_restart_window() -> u64 {
    60
}
fn default_shutdown_timeout() -> u64 {
    30
}

/// `supervisor`: how `meerkat run` keeps the stack up.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Supervisor {
    /// First wait before a dead role is started again, milliseconds; doubles with each
    /// restart in the window.
    #[serde(default = "default_backoff_ms", deserialize_with = "de::flex_u64")]
    pub restart_backoff_ms: u64,
    /// Longest wait before a restart, milliseconds.
    #[serde(default = "default_backoff_max_ms", deserialize_with = "de::flex_u64")]
    pub restart_backoff_max_ms: u64,
    /// A role that dies more than this many times within `restart-window` seconds is a
    /// crash loop: the stack stops with an error naming it. 0 = never restart.
    #[serde(default = "default_max_restarts", deserialize_with = "de::flex_u32")]
    pub max_restarts: u32,
    /// Seconds over which restarts are counted.
    #[serde(default = "default_restart_window", deserialize_with = "de::flex_u64")]
    pub restart_window: u64,
    /// Seconds a stop (SIGTERM, SIGINT, `ctl shutdown`) may take to drain everything
    /// (capture stops, rings drain, workers flush flows, the writer flushes) before the
    /// roles still running are killed.
    #[serde(
        default = "default_shutdown_timeout",
        deserialize_with = "de::flex_u64"
    )]
    pub shutdown_timeout: u64,
    /// Keep the stack up after the input ends (and start without input), until
    /// `meerkat ctl shutdown` or a signal; `meerkat ctl add-pcap` queues more input (as
    /// Suricata's unix-socket mode).
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub keep_running: bool,
}

impl Default for Supervisor {
    fn default() -> Self {
        Supervisor {
            restart_backoff_ms: default_backoff_ms(),
            restart_backoff_max_ms: default_backoff_max_ms(),
            max_restarts: default_max_restarts(),
            restart_window: default_restart_window(),
            shutdown_timeout: default_shutdown_timeout(),
            keep_running: false,
        }
    }
}

/// Checks of the two sections.
pub(crate) fn validate(c: &Control, s: &Supervisor) -> Result<(), ConfigError> {
    let max = c.max_message_size.bytes();
    if !(1024..=(256 << 20)).contains(&max) {
        return Err(ConfigError::Invalid(format!(
            "control.max-message-size {max} must be from 1kb to 256mb"
        )));
    }
    if c.tls_cert.is_some() != c.tls_key.is_some() {
        return Err(ConfigError::Invalid(
            "control.tls-cert and control.tls-key go together".to_string(),
        ));
    }
    if c.tls_client_ca.is_some() && c.tls_cert.is_none() {
        return Err(ConfigError::Invalid(
            "control.tls-client-ca needs control.tls-cert and control.tls-key \
             (client certificates are checked only in TLS)"
                .to_string(),
        ));
    }
    // Server TLS alone encrypts but lets anyone in: a caller is authenticated by the
    // bearer token or by a client certificate.
    if c.listen.is_some() && c.token_file.is_none() && c.tls_client_ca.is_none() {
        return Err(ConfigError::Invalid(
            "control.listen needs control.token-file and/or control.tls-client-ca \
             (with control.tls-cert/tls-key): the control API is not served on TCP \
             without authentication"
                .to_string(),
        ));
    }
    for (key, addr) in [
        ("control.listen", &c.listen),
        ("control.metrics-listen", &c.metrics_listen),
    ] {
        if let Some(a) = addr
            && a.parse::<std::net::SocketAddr>().is_err()
        {
            return Err(ConfigError::Invalid(format!(
                "{key} `{a}` is not an address:port (e.g. 127.0.0.1:9911)"
            )));
        }
    }
    if s.restart_backoff_ms == 0 || s.restart_backoff_max_ms < s.restart_backoff_ms {
        return Err(ConfigError::Invalid(format!(
            "supervisor.restart-backoff-ms {} must be at least 1 and at most \
             supervisor.restart-backoff-max-ms {}",
            s.restart_backoff_ms, s.restart_backoff_max_ms
        )));
    }
    if s.shutdown_timeout == 0 || s.restart_window == 0 {
        return Err(ConfigError::Invalid(
            "supervisor.shutdown-timeout and supervisor.restart-window must be at least 1 second"
                .to_string(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_command_spellings_and_path() {
        let u: UnixCommand = serde_yaml::from_str("enabled: auto").unwrap();
        assert_eq!(u.enabled, UnixCommandEnabled::Auto);
        assert_eq!(
            u.path(),
            PathBuf::from("/var/run/suricata/suricata-command.socket")
        );
        let u: UnixCommand = serde_yaml::from_str("enabled: yes\nfilename: x.sock").unwrap();
        assert_eq!(u.enabled, UnixCommandEnabled::Yes);
        assert_eq!(u.path(), PathBuf::from("/var/run/suricata/x.sock"));
        let u: UnixCommand = serde_yaml::from_str("enabled: no\nfilename: /t/s").unwrap();
        assert_eq!(u.enabled, UnixCommandEnabled::No);
        assert_eq!(u.path(), PathBuf::from("/t/s"));
        let e = serde_yaml::from_str::<UnixCommand>("enabled: maybe").unwrap_err();
        assert!(
            e.to_string().contains("`maybe` must be yes, no or auto"),
            "{e}"
        );
        let back = serde_yaml::to_string(&UnixCommand::default()).unwrap();
        assert_eq!(
            serde_yaml::from_str::<UnixCommand>(&back).unwrap(),
            UnixCommand::default()
        );
    }

    #[test]
    fn defaults_are_valid_and_off() {
        let (c, s) = (Control::default(), Supervisor::default());
        assert!(validate(&c, &s).is_ok());
        assert!(c.socket.is_none() && c.listen.is_none() && c.metrics_listen.is_none());
        assert!(!s.keep_running);
        assert_eq!(s.max_restarts, 5);
    }

    #[test]
    fn bad_values_name_the_key() {
        let s = Supervisor::default();
        let no_auth = Control {
            listen: Some("127.0.0.1:9912".to_string()),
            ..Control::default()
        };
        let e = validate(&no_auth, &s).unwrap_err().to_string();
        assert!(e.contains("control.listen"), "{e}");
        let half_tls = Control {
            tls_cert: Some("c.pem".into()),
            ..Control::default()
        };
        assert!(validate(&half_tls, &s).is_err());
        // Server TLS encrypts but does not say who calls: not enough on its own.
        let tls_only = Control {
            listen: Some("127.0.0.1:9912".to_string()),
            tls_cert: Some("c.pem".into()),
            tls_key: Some("k.pem".into()),
            ..Control::default()
        };
        let e = validate(&tls_only, &s).unwrap_err().to_string();
        assert!(e.contains("control.token-file"), "{e}");
        let mutual = Control {
            tls_client_ca: Some("ca.pem".into()),
            ..tls_only.clone()
        };
        assert!(validate(&mutual, &s).is_ok());
        let ca_without_tls = Control {
            listen: Some("127.0.0.1:9912".to_string()),
            tls_client_ca: Some("ca.pem".into()),
            ..Control::default()
        };
        let e = validate(&ca_without_tls, &s).unwrap_err().to_string();
        assert!(
            e.contains("control.tls-client-ca needs control.tls-cert"),
            "{e}"
        );
        let token_only = Control {
            listen: Some("127.0.0.1:9912".to_string()),
            token_file: Some("token".into()),
            ..Control::default()
        };
        assert!(validate(&token_only, &s).is_ok());
        let bad_addr = Control {
            metrics_listen: Some("localhost".to_string()),
            ..Control::default()
        };
        let e = validate(&bad_addr, &s).unwrap_err().to_string();
        assert!(e.contains("control.metrics-listen `localhost`"), "{e}");
        let backoff = Supervisor {
            restart_backoff_ms: 10_000,
            ..Supervisor::default()
        };
        assert!(validate(&Control::default(), &backoff).is_err());
    }
}
