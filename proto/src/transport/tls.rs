//! TLS of the control API on TCP (`control.listen`): the PEM files of the server
//! (`control.tls-cert`, `control.tls-key`, `control.tls-client-ca` for mutual TLS) and of
//! the client (`meerkat ctl --tls-ca/--tls-cert/--tls-key`), read and checked up front so
//! that a missing, unreadable or wrong file is one clear error naming it, at start, rather
//! than a handshake that fails later for every caller.
//!
//! The TLS itself is tonic's rustls transport with the ring provider (`tls-ring`): this
//! module only builds tonic's `ServerTlsConfig` / `ClientTlsConfig` from files it checked
//! with rustls itself (certificate chain parses, key parses and matches the certificate,
//! every client CA is a usable trust anchor).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rustls::RootCertStore;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tonic::transport::{Certificate, ClientTlsConfig, Identity, ServerTlsConfig};

/// How long a TCP peer may take to finish the TLS handshake: a client that connects and
/// says nothing (or speaks plain text) is dropped after this, never held.
pub const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// A PEM file or setting that cannot be used, named with the setting it came from
/// (`control.tls-cert`, `--tls-ca`, ...).
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("cannot read {what} {}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{what} {} is not valid PEM: {reason}", path.display())]
    Pem {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error(
        "{what} {} holds no certificate (expected `-----BEGIN CERTIFICATE-----` blocks)",
        path.display()
    )]
    NoCertificate { what: &'static str, path: PathBuf },
    #[error(
        "{what} {} holds no private key (PKCS#8, PKCS#1 or SEC1 PEM): {reason}",
        path.display()
    )]
    NoKey {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("{what} {}: certificate {index} is not usable as a CA: {reason}", path.display())]
    NotACa {
        what: &'static str,
        path: PathBuf,
        index: usize,
        reason: String,
    },
    #[error("{what} {}: {reason}", path.display())]
    ClientCa {
        what: &'static str,
        path: PathBuf,
        reason: String,
    },
    #[error("rustls protocol versions")]
    Versions(#[source] rustls::Error),
    #[error(
        "{key_what} {} does not go with {cert_what} {}: {reason}",
        key.display(),
        cert.display()
    )]
    KeyMismatch {
        key_what: &'static str,
        key: PathBuf,
        cert_what: &'static str,
        cert: PathBuf,
        reason: String,
    },
    #[error("--tls-server-name `{0}` is neither a DNS name nor an IP address")]
    ServerName(String),
}

/// The ring provider, also made the process default: tonic's server side asks rustls for
/// the default, which must not depend on which providers the build happens to enable.
fn provider() -> Arc<CryptoProvider> {
    let p = Arc::new(rustls::crypto::ring::default_provider());
    // Err only when a default is already installed (by an earlier call): nothing to do.
    let _ = CryptoProvider::install_default(rustls::crypto::ring::default_provider());
    p
}

/// A PEM file of certificates: its bytes and the certificates in it (at least one).
fn read_certs(
    what: &'static str,
    path: &Path,
) -> Result<(Vec<u8>, Vec<CertificateDer<'static>>), TlsError> {
    let pem = std::fs::read(path).map_err(|source| TlsError::Read {
        what,
        path: path.to_path_buf(),
        source,
    })?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::Pem {
            what,
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
    if certs.is_empty() {
        return Err(TlsError::NoCertificate {
            what,
            path: path.to_path_buf(),
        });
    }
    Ok((pem, certs))
}

/// A PEM file holding a private key (PKCS#8, PKCS#1 or SEC1): its bytes and the key.
fn read_key(
    what: &'static str,
    path: &Path,
) -> Result<(Vec<u8>, PrivateKeyDer<'static>), TlsError> {
    let pem = std::fs::read(path).map_err(|source| TlsError::Read {
        what,
        path: path.to_path_buf(),
        source,
    })?;
    let key = PrivateKeyDer::from_pem_slice(&pem).map_err(|e| TlsError::NoKey {
        what,
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok((pem, key))
}

/// CA certificates as a trust store: each must be usable as a trust anchor.
fn roots(
    what: &'static str,
    path: &Path,
    certs: Vec<CertificateDer<'static>>,
) -> Result<RootCertStore, TlsError> {
    let mut store = RootCertStore::empty();
    for (i, c) in certs.into_iter().enumerate() {
        store.add(c).map_err(|e| TlsError::NotACa {
            what,
            path: path.to_path_buf(),
            index: i + 1,
            reason: e.to_string(),
        })?;
    }
    Ok(store)
}

/// The server side: `control.tls-cert`, `control.tls-key` and, for mutual TLS,
/// `control.tls-client-ca` (then every client must present a certificate one of those CAs
/// signed).
pub fn server_config(
    cert: &Path,
    key: &Path,
    client_ca: Option<&Path>,
) -> Result<ServerTlsConfig, TlsError> {
    let provider = provider();
    let (cert_pem, chain) = read_certs("control.tls-cert", cert)?;
    let (key_pem, private) = read_key("control.tls-key", key)?;
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(TlsError::Versions)?;
    let mut config = ServerTlsConfig::new()
        .identity(Identity::from_pem(cert_pem, key_pem))
        .timeout(HANDSHAKE_TIMEOUT);
    let builder = match client_ca {
        Some(ca) => {
            let (ca_pem, ca_certs) = read_certs("control.tls-client-ca", ca)?;
            let store = roots("control.tls-client-ca", ca, ca_certs)?;
            let verifier =
                rustls::server::WebPkiClientVerifier::builder_with_provider(store.into(), provider)
                    .build()
                    .map_err(|e| TlsError::ClientCa {
                        what: "control.tls-client-ca",
                        path: ca.to_path_buf(),
                        reason: e.to_string(),
                    })?;
            config = config.client_ca_root(Certificate::from_pem(ca_pem));
            builder.with_client_cert_verifier(verifier)
        }
        None => builder.with_no_client_auth(),
    };
    // rustls checks that the key is the certificate's (and that it can sign with it).
    builder
        .with_single_cert(chain, private)
        .map_err(|e| TlsError::KeyMismatch {
            key_what: "control.tls-key",
            key: key.to_path_buf(),
            cert_what: "control.tls-cert",
            cert: cert.to_path_buf(),
            reason: e.to_string(),
        })?;
    Ok(config)
}

/// The client side (`meerkat ctl --connect`): the CA to trust (`--tls-ca`), a client
/// certificate for mutual TLS (`--tls-cert` + `--tls-key`), and the name the server's
/// certificate must carry (`--tls-server-name`; default: the host of `--connect`).
pub fn client_config(
    ca: &Path,
    identity: Option<(&Path, &Path)>,
    server_name: Option<&str>,
) -> Result<ClientTlsConfig, TlsError> {
    let provider = provider();
    let (ca_pem, ca_certs) = read_certs("--tls-ca", ca)?;
    let store = roots("--tls-ca", ca, ca_certs)?;
    let mut config = ClientTlsConfig::new()
        .ca_certificate(Certificate::from_pem(ca_pem))
        .timeout(HANDSHAKE_TIMEOUT);
    if let Some(name) = server_name {
        ServerName::try_from(name.to_string())
            .map_err(|_| TlsError::ServerName(name.to_string()))?;
        config = config.domain_name(name);
    }
    if let Some((cert, key)) = identity {
        let (cert_pem, chain) = read_certs("--tls-cert", cert)?;
        let (key_pem, private) = read_key("--tls-key", key)?;
        rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(TlsError::Versions)?
            .with_root_certificates(store)
            .with_client_auth_cert(chain, private)
            .map_err(|e| TlsError::KeyMismatch {
                key_what: "--tls-key",
                key: key.to_path_buf(),
                cert_what: "--tls-cert",
                cert: cert.to_path_buf(),
                reason: e.to_string(),
            })?;
        config = config.identity(Identity::from_pem(cert_pem, key_pem));
    }
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Pki {
        dir: tempfile::TempDir,
    }

    impl Pki {
        /// A CA, a server certificate for 127.0.0.1 and a client certificate it signed.
        fn new() -> Pki {
            let dir = tempfile::tempdir().unwrap();
            let ca_key = rcgen::KeyPair::generate().unwrap();
            let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
            ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            let ca_cert = ca.self_signed(&ca_key).unwrap();
            let issuer = rcgen::Issuer::new(ca, ca_key);
            let write =
                |name: &str, text: String| std::fs::write(dir.path().join(name), text).unwrap();
            write("ca.pem", ca_cert.pem());
            for (name, sans) in [
                ("server", vec!["127.0.0.1".to_string()]),
                ("client", vec!["client".to_string()]),
            ] {
                let key = rcgen::KeyPair::generate().unwrap();
                let cert = rcgen::CertificateParams::new(sans)
                    .unwrap()
                    .signed_by(&key, &issuer)
                    .unwrap();
                write(&format!("{name}.pem"), cert.pem());
                write(&format!("{name}.key"), key.serialize_pem());
            }
            Pki { dir }
        }

        fn p(&self, name: &str) -> std::path::PathBuf {
            self.dir.path().join(name)
        }
    }

    fn err<T>(r: Result<T, TlsError>) -> String {
        match r {
            Ok(_) => panic!("expected an error"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn good_files_make_configs() {
        let k = Pki::new();
        server_config(&k.p("server.pem"), &k.p("server.key"), None).unwrap();
        server_config(&k.p("server.pem"), &k.p("server.key"), Some(&k.p("ca.pem"))).unwrap();
        client_config(&k.p("ca.pem"), None, None).unwrap();
        client_config(
            &k.p("ca.pem"),
            Some((&k.p("client.pem"), &k.p("client.key"))),
            Some("localhost"),
        )
        .unwrap();
    }

    #[test]
    fn bad_files_are_named() {
        let k = Pki::new();
        let missing = k.p("nope.pem");
        let e = err(server_config(&missing, &k.p("server.key"), None));
        assert!(
            e.contains("cannot read control.tls-cert") && e.contains("nope.pem"),
            "{e}"
        );
        // A key where the certificate should be.
        let e = err(server_config(&k.p("server.key"), &k.p("server.key"), None));
        assert!(
            e.contains("control.tls-cert") && e.contains("holds no certificate"),
            "{e}"
        );
        // A certificate where the key should be.
        let e = err(server_config(&k.p("server.pem"), &k.p("server.pem"), None));
        assert!(
            e.contains("control.tls-key") && e.contains("holds no private key"),
            "{e}"
        );
        // Someone else's key.
        let e = err(server_config(&k.p("server.pem"), &k.p("client.key"), None));
        assert!(e.contains("does not go with control.tls-cert"), "{e}");
        // Broken PEM.
        std::fs::write(k.p("broken.pem"), "-----BEGIN CERTIFICATE-----\nAAAA\n").unwrap();
        let e = err(server_config(
            &k.p("server.pem"),
            &k.p("server.key"),
            Some(&k.p("broken.pem")),
        ));
        assert!(
            e.contains("control.tls-client-ca") && e.contains("broken.pem"),
            "{e}"
        );
        let e = err(client_config(&k.p("server.key"), None, None));
        assert!(
            e.contains("--tls-ca") && e.contains("holds no certificate"),
            "{e}"
        );
        let e = err(client_config(
            &k.p("ca.pem"),
            Some((&k.p("client.pem"), &k.p("server.key"))),
            None,
        ));
        assert!(
            e.contains("--tls-key") && e.contains("does not go with --tls-cert"),
            "{e}"
        );
        let e = err(client_config(&k.p("ca.pem"), None, Some("not a name")));
        assert!(e.contains("--tls-server-name `not a name`"), "{e}");
    }
}
