//! The EVE `smtp` and `email` objects, in Suricata 8's field order: `smtp` {`helo`,
//! `mail_from`, `rcpt_to`}, then, for a transaction with a message, `email` {`from`,
//! `to`, `cc`, `status`, `attachment`, `url`} (the fields Suricata logs without
//! `extended`).

use meerkat_eve::Obj;
use meerkat_proto::events::{Email, Smtp};

use super::state::SmtpTx;
use crate::AppRecord;

/// [`crate::RecordDef::render`] of `smtp`.
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Smtp(s) = r {
        smtp(o, s);
    }
}

fn strings(o: &mut Obj<'_>, k: &str, v: &[Vec<u8>]) {
    if !v.is_empty() {
        o.raw(k, |b| {
            b.push(b'[');
            for (i, s) in v.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                meerkat_eve::bytes_as_string(b, s);
            }
            b.push(b']');
        });
    }
}

/// The `smtp` object and, with a message, the `email` one.
pub fn smtp(o: &mut Obj<'_>, s: &Smtp) {
    o.obj("smtp", |x| {
        if let Some(h) = &s.helo {
            x.bytes("helo", h);
        }
        if let Some(m) = &s.mail_from {
            x.bytes("mail_from", m);
        }
        strings(x, "rcpt_to", &s.rcpt_to);
    });
    if let Some(e) = &s.email {
        o.obj("email", |x| {
            if let Some(f) = &e.from {
                x.bytes("from", f);
            }
            strings(x, "to", &e.to);
            strings(x, "cc", &e.cc);
            x.str("status", &e.status);
            strings(x, "attachment", &e.attachment);
            strings(x, "url", &e.url);
        });
    }
}

/// The record of transaction `tx`.
pub fn record(tx: &SmtpTx) -> Smtp {
    Smtp {
        helo: tx.helo.clone(),
        mail_from: tx.mail_from.clone(),
        rcpt_to: tx.rcpt_to.clone(),
        email: tx.mime.as_ref().map(|m| {
            let e = &m.email;
            Email {
                from: e.from.clone(),
                to: e.to.clone(),
                cc: e.cc.clone(),
                // Suricata 8 has no other status, even for a message cut short.
                status: "PARSE_DONE".to_string(),
                // Suricata logs the URLs last found first.
                url: e.urls.iter().rev().cloned().collect(),
                attachment: e.attachment_names.clone(),
            }
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_in_suricatas_order() {
        let s = Smtp {
            helo: Some(b"attacker.com".to_vec()),
            mail_from: Some(b"<a@evil.com>".to_vec()),
            rcpt_to: vec![b"<v@t.com>".to_vec()],
            email: Some(Email {
                from: Some(b"a@evil.com".to_vec()),
                to: vec![b"v@t.com".to_vec()],
                cc: vec![],
                status: "PARSE_DONE".into(),
                url: vec![],
                attachment: vec![b"x.exe".to_vec()],
            }),
        };
        let mut b = Vec::new();
        let mut o = Obj::new(&mut b);
        smtp(&mut o, &s);
        o.end();
        assert_eq!(
            String::from_utf8(b).unwrap(),
            concat!(
                r#"{"smtp":{"helo":"attacker.com","mail_from":"<a@evil.com>","rcpt_to":["<v@t.com>"]},"#,
                r#""email":{"from":"a@evil.com","to":["v@t.com"],"status":"PARSE_DONE","attachment":["x.exe"]}}"#
            )
        );
    }
}
