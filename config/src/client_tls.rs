//! TLS of a connection the eve-writer makes to a bus (`outputs.eve-log.redis.tls`,
//! `outputs.eve-log.nats.tls`): rustls with the ring provider. The server is checked
//! against `ca-file` (PEM), or the system's CAs (`/etc/ssl/certs/ca-certificates.crt`)
//! when it is absent; `cert-file` + `key-file` present a client certificate (mutual
//! TLS).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::de;

fn yes() -> bool {
    true
}

/// A `tls:` section of a bus output. Present (and `enabled`, the default) = TLS on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ClientTls {
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub enabled: bool,
    /// PEM file of the CA certificates that may sign the server's certificate; absent:
    /// the system's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// PEM client certificate chain, for servers that want one (with `key-file`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_file: Option<PathBuf>,
    /// PEM private key of `cert-file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
    /// Name to check the server's certificate against; absent: the host name connected to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
}

impl ClientTls {
    /// Checks that a client certificate comes with its key; `key` names the section.
    pub fn validate(&self, key: &str) -> Result<(), crate::ConfigError> {
        if self.cert_file.is_some() != self.key_file.is_some() {
            return Err(crate::ConfigError::Invalid(format!(
                "{key}.cert-file and {key}.key-file go together"
            )));
        }
        Ok(())
    }
}
