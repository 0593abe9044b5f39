//! The EVE `smtp` and `email` objects, in Suricata 8's field order: `smtp` {`helo`,
//! `mail_from`, `rcpt_to`}, then, for a transaction with a message, `email` {`from`,
//! `to`, `cc`, `status`, `attachment`, `url`} (the fields Suricata logs without
//! `extended`), then the headers of the eve-log's `custom` list and the `md5` ones
//! (`subject_md5`, `body_md5`), as Suricata's email logger writes them
//! (`output-json-email-common.c`). Suricata 8 reads `extended: yes` and then clears
//! it: it logs nothing more, and neither does Meerkat.

use md5::{Digest, Md5};
use meerkat_eve::Obj;
use meerkat_proto::events::{Email, EmailHeader, Smtp};

use super::state::SmtpTx;
use crate::AppRecord;

/// How a field of the email logger's list is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The first header's value.
    String,
    /// The first header's value split at commas, as `to` and `cc`.
    Comma,
    /// Every header's value.
    Array,
}

/// A field of the email logger's list: its EVE (and config) name, the header, how it
/// is written.
#[derive(Debug, Clone, Copy)]
pub struct EmailField {
    pub name: &'static str,
    pub header: &'static str,
    pub shape: Shape,
}

const fn field(name: &'static str, header: &'static str, shape: Shape) -> EmailField {
    EmailField {
        name,
        header,
        shape,
    }
}

/// Suricata 8's `email_fields`, in its order (the order they are written in).
pub const EMAIL_FIELDS: [EmailField; 16] = [
    field("reply_to", "reply-to", Shape::String),
    field("bcc", "bcc", Shape::Comma),
    field("message_id", "message-id", Shape::String),
    field("subject", "subject", Shape::String),
    field("x_mailer", "x-mailer", Shape::String),
    field("user_agent", "user-agent", Shape::String),
    field("received", "received", Shape::Array),
    field("x_originating_ip", "x-originating-ip", Shape::String),
    field("in_reply_to", "in-reply-to", Shape::String),
    field("references", "references", Shape::String),
    field("importance", "importance", Shape::String),
    field("priority", "priority", Shape::String),
    field("sensitivity", "sensitivity", Shape::String),
    field("organization", "organization", Shape::String),
    field("content_md5", "content-md5", Shape::String),
    field("date", "date", Shape::String),
];

/// The field of a `custom` entry, as Suricata matches it: the EVE name exactly, or the
/// header name without case (`reply_to`, `reply-to`, `Reply-To`).
pub fn custom_field(entry: &str) -> Option<usize> {
    EMAIL_FIELDS
        .iter()
        .position(|f| f.name == entry || f.header.eq_ignore_ascii_case(entry))
}

/// What an eve-log's `smtp` records carry beyond the default fields.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EmailLog {
    /// Bit `i`: field `i` of [`EMAIL_FIELDS`] (`custom`).
    pub fields: u16,
    /// `md5: [body]`.
    pub body_md5: bool,
    /// `md5: [subject]`.
    pub subject_md5: bool,
}

impl EmailLog {
    /// The union of two outputs' options.
    pub fn union(self, o: EmailLog) -> EmailLog {
        EmailLog {
            fields: self.fields | o.fields,
            body_md5: self.body_md5 | o.body_md5,
            subject_md5: self.subject_md5 | o.subject_md5,
        }
    }

    /// From an eve-log's `smtp` entry's `custom` and `md5` lists. Unknown names are
    /// left out, as Suricata leaves them (its example lists `relays`).
    pub fn from_lists(custom: &[String], md5: &[String]) -> EmailLog {
        let mut l = EmailLog::default();
        for c in custom {
            if let Some(i) = custom_field(c) {
                l.fields |= 1 << i;
            }
        }
        l.body_md5 = md5.iter().any(|m| m == "body");
        l.subject_md5 = md5.iter().any(|m| m == "subject");
        l
    }
}

/// Leaves in a record what `log` asks for (`EmailLog::default()` for the records
/// other than `smtp`, which carry the default fields only): the `custom` headers, the
/// body's MD5, the subject's MD5 (computed here).
pub fn shape(s: &mut Smtp, log: EmailLog) {
    let Some(e) = s.email.as_mut() else {
        return;
    };
    if log.subject_md5
        && let Some(h) = e.headers.iter().find(|h| h.field == 3)
    {
        e.subject_md5 = Some(Md5::digest(&h.value).to_vec());
    }
    e.headers.retain(|h| log.fields & (1 << h.field) != 0);
    if !log.body_md5 {
        e.body_md5 = None;
    }
}

fn hex(o: &mut Obj<'_>, k: &str, v: &[u8]) {
    o.str(k, &crate::files::hex(v));
}

/// The `custom` fields, in [`EMAIL_FIELDS`] order.
fn custom(x: &mut Obj<'_>, headers: &[EmailHeader]) {
    for (i, f) in EMAIL_FIELDS.iter().enumerate() {
        let mut values = headers.iter().filter(|h| h.field as usize == i);
        match f.shape {
            Shape::String => {
                if let Some(h) = values.next() {
                    x.bytes(f.name, &h.value);
                }
            }
            Shape::Comma => {
                if let Some(h) = values.next() {
                    let mut items = Vec::new();
                    super::mime::addresses(&h.value, &mut items);
                    strings(x, f.name, &items);
                }
            }
            Shape::Array => {
                let all: Vec<Vec<u8>> = values.map(|h| h.value.clone()).collect();
                strings(x, f.name, &all);
            }
        }
    }
}

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
            custom(x, &e.headers);
            if let Some(m) = &e.subject_md5 {
                hex(x, "subject_md5", m);
            }
            if let Some(m) = &e.body_md5 {
                hex(x, "body_md5", m);
            }
        });
    }
}

/// The record of transaction `tx`.
pub fn record(tx: &SmtpTx) -> Smtp {
    Smtp {
        helo: tx.helo.clone(),
        mail_from: tx.mail_from.clone(),
        rcpt_to: tx.rcpt_to.clone(),
        // `raw-extraction`: no MIME state, no `email` (as Suricata).
        email: tx.mime.as_ref().filter(|m| !m.raw).map(|m| {
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
                headers: m
                    .main_headers()
                    .filter_map(|(name, value)| {
                        let f = EMAIL_FIELDS
                            .iter()
                            .position(|f| f.header.as_bytes().eq_ignore_ascii_case(name))?;
                        Some(EmailHeader {
                            field: f as u32,
                            value: value.to_vec(),
                        })
                    })
                    .collect(),
                body_md5: e.body_md5.map(|m| m.to_vec()),
                subject_md5: None,
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
                ..Email::default()
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
