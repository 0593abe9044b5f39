//! rustls client configurations (ring provider) for the bus outputs, from a
//! `tls:` section ([`ClientTls`]): read and checked when the output starts, so a
//! missing or wrong PEM file is one clear error naming the file.

use std::io;
use std::path::Path;
use std::sync::Arc;

use meerkat_config::client_tls::ClientTls;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::{ClientConfig, RootCertStore};

/// The system's CA bundle (Debian's), used when `ca-file` is not set.
pub const SYSTEM_CAS: &str = "/etc/ssl/certs/ca-certificates.crt";

fn bad(what: &str, path: &Path, e: impl std::fmt::Display) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{what} {}: {e}", path.display()),
    )
}

fn certs(what: &str, path: &Path) -> io::Result<Vec<CertificateDer<'static>>> {
    let pem = std::fs::read(path).map_err(|e| bad(what, path, e))?;
    let certs = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| bad(what, path, format!("not valid PEM: {e}")))?;
    if certs.is_empty() {
        return Err(bad(what, path, "holds no certificate"));
    }
    Ok(certs)
}

/// The client configuration of `t` (`alpn`: protocols to offer, none for redis/NATS).
pub fn client_config(t: &ClientTls) -> io::Result<Arc<ClientConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let ca = t.ca_file.clone().unwrap_or_else(|| SYSTEM_CAS.into());
    let mut roots = RootCertStore::empty();
    for c in certs("tls ca-file", &ca)? {
        roots
            .add(c)
            .map_err(|e| bad("tls ca-file", &ca, format!("not a usable CA: {e}")))?;
    }
    let builder = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| io::Error::other(format!("tls: {e}")))?
        .with_root_certificates(roots);
    let cfg = match (&t.cert_file, &t.key_file) {
        (Some(cert), Some(key)) => {
            let chain = certs("tls cert-file", cert)?;
            let pem = std::fs::read(key).map_err(|e| bad("tls key-file", key, e))?;
            let key_der = PrivateKeyDer::from_pem_slice(&pem)
                .map_err(|e| bad("tls key-file", key, format!("holds no private key: {e}")))?;
            builder
                .with_client_auth_cert(chain, key_der)
                .map_err(|e| bad("tls cert-file", cert, e))?
        }
        _ => builder.with_no_client_auth(),
    };
    Ok(Arc::new(cfg))
}
