//! The EVE `tls` record (Suricata's `tls` object).

use meerkat_proto::events::{Ja3, Tls};

use super::parser;
use super::state::TlsTx;

fn s(v: &[u8]) -> String {
    String::from_utf8_lossy(v).into_owned()
}

fn alpns(h: Option<&parser::Hello>) -> Vec<String> {
    h.map(|h| h.alpns.iter().map(|a| s(a)).collect())
        .unwrap_or_default()
}

pub fn record(tx: &TlsTx) -> Option<Tls> {
    if tx.client_hello.is_none() && tx.server_hello.is_none() {
        return None;
    }
    let mut r = Tls {
        sni: tx
            .client_hello
            .as_ref()
            .and_then(|h| h.sni.as_deref())
            .map(s)
            .unwrap_or_default(),
        version: parser::version_name(u16::from_be_bytes(tx.version)),
        session_resumed: tx.session_resumed,
        ja4: s(&tx.ja4),
        client_alpns: alpns(tx.client_hello.as_ref()),
        server_alpns: alpns(tx.server_hello.as_ref()),
        ..Tls::default()
    };
    if let Some(c) = &tx.cert {
        r.subject = c.subject.clone();
        r.issuerdn = c.issuer.clone();
        r.subjectaltname = c.sans.iter().map(|n| s(n)).collect();
        r.serial = c.serial.clone();
        r.fingerprint = s(&tx.fingerprint);
        r.notbefore = c.not_before.clone();
        r.notafter = c.not_after.clone();
    }
    if !tx.ja3_hash.is_empty() {
        r.ja3 = Some(Ja3 {
            hash: s(&tx.ja3_hash),
            string: s(&tx.ja3_string),
        });
    }
    if !tx.ja3s_hash.is_empty() {
        r.ja3s = Some(Ja3 {
            hash: s(&tx.ja3s_hash),
            string: s(&tx.ja3s_string),
        });
    }
    Some(r)
}
