//! The EVE `quic` object, in Suricata 8's field order: `version`, `sni`, `ua`, `cyu`,
//! `ja3` or `ja3s`, `ja4`, `extensions`.

use meerkat_eve::Obj;
use meerkat_proto::events::{Ja3, Quic, QuicCyu, QuicExtension};

use super::state::QuicTx;
use crate::AppRecord;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The record of a transaction.
pub fn record(tx: &QuicTx) -> Quic {
    let ja3 = tx.ja3_string.as_ref().map(|s| Ja3 {
        hash: text(&tx.ja3_hash),
        string: text(s),
    });
    let client = tx.dir == crate::Dir::ToServer;
    Quic {
        version: super::parser::version_name(tx.version),
        sni: tx.sni.as_deref().map(text),
        ua: tx.ua.as_deref().map(text),
        cyu: tx
            .cyu
            .iter()
            .map(|c| QuicCyu {
                hash: text(&c.hash),
                string: text(&c.string),
            })
            .collect(),
        ja3: ja3.clone().filter(|_| client),
        ja3s: ja3.filter(|_| !client),
        ja4: tx.ja4.as_deref().map(text),
        extensions: tx
            .extensions
            .iter()
            .map(|e| QuicExtension {
                r#type: u32::from(e.ty),
                name: extension_name(e.ty).unwrap_or_default().to_string(),
                values: e.values.iter().map(|v| text(v)).collect(),
            })
            .collect(),
    }
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Quic(q) = r {
        quic(o, q);
    }
}

/// The `quic` object.
pub fn quic(o: &mut Obj<'_>, q: &Quic) {
    o.obj("quic", |x| {
        x.str("version", &q.version);
        if let Some(s) = &q.sni {
            x.str("sni", s);
        }
        if let Some(s) = &q.ua {
            x.str("ua", s);
        }
        if !q.cyu.is_empty() {
            x.raw("cyu", |b| {
                meerkat_eve::array(b, &q.cyu, |y, c| {
                    y.str("hash", &c.hash).str("string", &c.string);
                })
            });
        }
        for (k, j) in [("ja3", &q.ja3), ("ja3s", &q.ja3s)] {
            if let Some(j) = j {
                x.obj(k, |y| {
                    y.str("hash", &j.hash).str("string", &j.string);
                });
            }
        }
        if let Some(j) = &q.ja4 {
            x.str("ja4", j);
        }
        if !q.extensions.is_empty() {
            x.raw("extensions", |b| {
                meerkat_eve::array(b, &q.extensions, |y, e| {
                    if !e.name.is_empty() {
                        y.str("name", &e.name);
                    }
                    y.u64("type", u64::from(e.r#type));
                    if !e.values.is_empty() {
                        y.raw("values", |b| {
                            meerkat_eve::str_array(b, e.values.iter().map(String::as_str))
                        });
                    }
                })
            });
        }
    });
}

/// The IANA names of TLS extensions, as Suricata writes them.
pub fn extension_name(t: u16) -> Option<&'static str> {
    const NAMES: &[&str] = &[
        "server_name",
        "max_fragment_length",
        "client_certificate_url",
        "trusted_ca_keys",
        "truncated_hmac",
        "status_request",
        "user_mapping",
        "client_authz",
        "server_authz",
        "cert_type",
        "supported_groups",
        "ec_point_formats",
        "srp",
        "signature_algorithms",
        "use_srtp",
        "heartbeat",
        "alpn",
        "status_request_v2",
        "signed_certificate_timestamp",
        "client_certificate_type",
        "server_certificate_type",
        "padding",
        "encrypt_then_mac",
        "extended_master_secret",
        "token_binding",
        "cached_info",
        "tls_lts",
        "compress_certificate",
        "record_size_limit",
        "pwd_protect",
        "pwd_clear",
        "password_salt",
        "ticket_pinning",
        "tls_cert_with_extern_psk",
        "delegated_credentials",
        "session_ticket",
        "tlmsp",
        "tlmsp_proxying",
        "tlmsp_delegate",
        "supported_ekt_ciphers",
        "",
        "pre_shared_key",
        "early_data",
        "supported_versions",
        "cookie",
        "psk_key_exchange_modes",
        "",
        "certificate_authorities",
        "oid_filters",
        "post_handshake_auth",
        "signature_algorithms_cert",
        "key_share",
        "transparency_info",
        "connection_id_deprecated",
        "connection_id",
        "external_id_hash",
        "external_session_id",
        "quic_transport_parameters",
        "ticket_request",
        "dnssec_chain",
    ];
    match t {
        13172 => Some("next_protocol_negotiation"),
        65281 => Some("renegotiation_info"),
        t => NAMES.get(usize::from(t)).copied().filter(|n| !n.is_empty()),
    }
}
