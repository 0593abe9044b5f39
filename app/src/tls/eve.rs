//! The EVE `tls` object, in Suricata's field order and optionality; every line is
//! checked against Suricata's EVE schema in the eve-writer's tests.

use meerkat_eve::Obj;
use meerkat_proto::events::Tls;

use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Tls(t) = r {
        tls(o, t);
    }
}

/// The `tls` object.
pub fn tls(o: &mut Obj<'_>, t: &Tls) {
    o.obj("tls", |x| {
        if !t.subject.is_empty() {
            x.str("subject", &t.subject);
        }
        if !t.issuerdn.is_empty() {
            x.str("issuerdn", &t.issuerdn);
        }
        if !t.subjectaltname.is_empty() {
            x.raw("subjectaltname", |b| {
                meerkat_eve::str_array(b, t.subjectaltname.iter().map(String::as_str))
            });
        }
        if !t.serial.is_empty() {
            x.str("serial", &t.serial);
        }
        if !t.fingerprint.is_empty() {
            x.str("fingerprint", &t.fingerprint);
        }
        if t.session_resumed {
            x.bool("session_resumed", true);
        }
        if !t.sni.is_empty() {
            x.str("sni", &t.sni);
        }
        if !t.version.is_empty() {
            x.str("version", &t.version);
        }
        if !t.notbefore.is_empty() {
            x.str("notbefore", &t.notbefore);
        }
        if !t.notafter.is_empty() {
            x.str("notafter", &t.notafter);
        }
        for (k, j) in [("ja3", &t.ja3), ("ja3s", &t.ja3s)] {
            if let Some(j) = j {
                x.obj(k, |y| {
                    y.str("hash", &j.hash).str("string", &j.string);
                });
            }
        }
        if !t.ja4.is_empty() {
            x.str("ja4", &t.ja4);
        }
        for (k, list) in [
            ("client_alpns", &t.client_alpns),
            ("server_alpns", &t.server_alpns),
        ] {
            if !list.is_empty() {
                x.raw(k, |b| {
                    meerkat_eve::str_array(b, list.iter().map(String::as_str))
                });
            }
        }
    });
}
