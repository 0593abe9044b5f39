//! The inspection buffers of an SMTP transaction, as Suricata 8's: `smtp.helo`,
//! `smtp.mail_from`, `smtp.rcpt_to` (one item per recipient), the message's
//! `email.*` headers (`email.received` and `email.url` one item each), and the
//! attachments' `file.data` and `file.name` (one item per attachment). All are to
//! the server. A buffer that may still come is `NotYet` until the transaction ends.

use super::mime::Mime;
use super::state::SmtpTx;
use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId};

pub const HELO: BufferId = BufferId::of(AppProto::Smtp, 1);
pub const MAIL_FROM: BufferId = BufferId::of(AppProto::Smtp, 2);
pub const RCPT_TO: BufferId = BufferId::of(AppProto::Smtp, 3);
pub const FROM: BufferId = BufferId::of(AppProto::Smtp, 4);
pub const TO: BufferId = BufferId::of(AppProto::Smtp, 5);
pub const CC: BufferId = BufferId::of(AppProto::Smtp, 6);
pub const SUBJECT: BufferId = BufferId::of(AppProto::Smtp, 7);
pub const DATE: BufferId = BufferId::of(AppProto::Smtp, 8);
pub const MESSAGE_ID: BufferId = BufferId::of(AppProto::Smtp, 9);
pub const X_MAILER: BufferId = BufferId::of(AppProto::Smtp, 10);
pub const URL: BufferId = BufferId::of(AppProto::Smtp, 11);
pub const RECEIVED: BufferId = BufferId::of(AppProto::Smtp, 12);
pub const FILE_DATA: BufferId = BufferId::of(AppProto::Smtp, 13);
pub const FILE_NAME: BufferId = BufferId::of(AppProto::Smtp, 14);

const fn ts(name: &'static str, id: BufferId, multi: bool) -> BufferDef {
    def(name, &[], None, AppProto::Smtp, Some(id), None, multi)
}

/// The sticky buffers of SMTP. `file.data` and `file.name` share their names with
/// HTTP's: a rule of `alert smtp` gets these ([`crate::buffers::sticky_in`]).
pub static BUFFERS: &[BufferDef] = &[
    ts("smtp.helo", HELO, false),
    ts("smtp.mail_from", MAIL_FROM, false),
    ts("smtp.rcpt_to", RCPT_TO, true),
    ts("email.from", FROM, false),
    ts("email.to", TO, false),
    ts("email.cc", CC, false),
    ts("email.subject", SUBJECT, false),
    ts("email.date", DATE, false),
    ts("email.message_id", MESSAGE_ID, false),
    ts("email.x_mailer", X_MAILER, false),
    ts("email.url", URL, true),
    ts("email.received", RECEIVED, true),
    def(
        "file.data",
        &["file_data"],
        None,
        AppProto::Smtp,
        Some(FILE_DATA),
        None,
        true,
    ),
    ts("file.name", FILE_NAME, true),
];

fn opt(v: Option<&[u8]>, settled: bool) -> Buf<'_> {
    match v {
        Some(b) => Buf::Ready(b),
        None if settled => Buf::Absent,
        None => Buf::NotYet,
    }
}

fn item<'a>(v: &'a [Vec<u8>], index: usize, settled: bool) -> Buf<'a> {
    opt(v.get(index).map(|b| &b[..]), settled)
}

/// Item `index` of a single buffer: only 0.
fn first(v: &Option<Vec<u8>>, index: usize) -> Option<&[u8]> {
    if index == 0 { v.as_deref() } else { None }
}

pub fn buffer(tx: &SmtpTx, id: BufferId, index: usize) -> Buf<'_> {
    match id {
        HELO => opt(first(&tx.helo, index), tx.done || index > 0),
        MAIL_FROM => opt(first(&tx.mail_from, index), tx.done || index > 0),
        RCPT_TO => item(&tx.rcpt_to, index, tx.done),
        _ => {
            let Some(m) = tx.mime.as_ref() else {
                return if tx.done { Buf::Absent } else { Buf::NotYet };
            };
            if m.raw && !matches!(id, FILE_DATA | FILE_NAME) {
                // `raw-extraction`: the message is a file, no header is read.
                return Buf::Absent;
            }
            email_buffer(m, id, index, tx.done)
        }
    }
}

/// A buffer of the message. An attachment still arriving is inspected once it holds
/// `content-inspect-min-size` bytes, or `content-limit` ([`Mime::inspectable`]), as
/// Suricata's `file.data` of SMTP.
fn email_buffer(m: &Mime, id: BufferId, index: usize, tx_done: bool) -> Buf<'_> {
    let e = &m.email;
    let headers = e.headers_done || tx_done;
    let done = e.done || tx_done;
    if !headers {
        return Buf::NotYet;
    }
    let single = |v| opt(first(v, index), true);
    match id {
        FROM => single(&e.from),
        TO => single(&e.to_raw),
        CC => single(&e.cc_raw),
        SUBJECT => single(&e.subject),
        DATE => single(&e.date),
        MESSAGE_ID => single(&e.message_id),
        X_MAILER => single(&e.x_mailer),
        RECEIVED => item(&e.received, index, true),
        URL => {
            if done {
                item(&e.urls, index, true)
            } else {
                Buf::NotYet
            }
        }
        FILE_DATA => match e.attachments.get(index) {
            Some(a) if a.closed || done => Buf::Ready(&a.data),
            Some(a) if m.inspectable(a.size) => Buf::Partial(&a.data),
            Some(_) => Buf::NotYet,
            None if done => Buf::Absent,
            None => Buf::NotYet,
        },
        FILE_NAME => match e.attachments.get(index) {
            Some(a) => Buf::Ready(&a.name),
            None if done => Buf::Absent,
            None => Buf::NotYet,
        },
        _ => Buf::Absent,
    }
}
