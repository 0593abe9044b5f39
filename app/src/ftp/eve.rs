//! The EVE `ftp` and `ftp_data` objects, in Suricata's field order: `command`, then
//! `command_data` and `command_truncated` when the command has data, the reply
//! lines' `completion_code` and `reply`, `dynamic_port` when a data connection was
//! announced, `mode` for the commands that announce one, `reply_received`
//! (`yes`/`no`) and `reply_truncated`.

use meerkat_eve::Obj;
use meerkat_proto::events::{Ftp, FtpData};

use crate::AppRecord;

/// [`crate::RecordDef::render`] of `ftp`.
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Ftp(f) = r {
        ftp(o, f);
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

/// The `ftp` object.
pub fn ftp(o: &mut Obj<'_>, f: &Ftp) {
    o.obj("ftp", |x| {
        if !f.command.is_empty() {
            x.str("command", &f.command);
            if !f.command_data.is_empty() {
                x.bytes("command_data", &f.command_data);
                x.bool("command_truncated", f.command_truncated);
            }
        }
        strings(x, "completion_code", &f.completion_code);
        strings(x, "reply", &f.reply);
        if f.dynamic_port != 0 {
            x.u64("dynamic_port", u64::from(f.dynamic_port));
        }
        if !f.mode.is_empty() {
            x.str("mode", &f.mode);
        }
        x.str(
            "reply_received",
            if f.reply_received { "yes" } else { "no" },
        );
        x.bool("reply_truncated", f.reply_truncated);
    });
}

/// The `ftp_data` object.
pub fn ftp_data(o: &mut Obj<'_>, f: &FtpData) {
    o.obj("ftp_data", |x| {
        if !f.filename.is_empty() {
            x.bytes("filename", &f.filename);
        }
        if !f.command.is_empty() {
            x.str("command", &f.command);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(f: impl FnOnce(&mut Obj<'_>)) -> String {
        let mut b = Vec::new();
        let mut o = Obj::new(&mut b);
        f(&mut o);
        o.end();
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn renders_in_suricatas_order() {
        let f = Ftp {
            command: "PORT".into(),
            command_data: b"192,168,0,13,234,22".to_vec(),
            completion_code: vec![b"200".to_vec()],
            reply: vec![b"PORT command successful.".to_vec()],
            dynamic_port: 59926,
            mode: "active".into(),
            reply_received: true,
            ..Ftp::default()
        };
        assert_eq!(
            text(|o| ftp(o, &f)),
            concat!(
                r#"{"ftp":{"command":"PORT","command_data":"192,168,0,13,234,22","command_truncated":false,"#,
                r#""completion_code":["200"],"reply":["PORT command successful."],"dynamic_port":59926,"#,
                r#""mode":"active","reply_received":"yes","reply_truncated":false}}"#
            )
        );
        let greeting = Ftp {
            reply: vec![b"(vsFTPd 3.0.2)".to_vec()],
            completion_code: vec![b"220".to_vec()],
            reply_received: true,
            ..Ftp::default()
        };
        assert_eq!(
            text(|o| ftp(o, &greeting)),
            r#"{"ftp":{"completion_code":["220"],"reply":["(vsFTPd 3.0.2)"],"reply_received":"yes","reply_truncated":false}}"#
        );
        let d = FtpData {
            filename: b"temp.txt".to_vec(),
            command: "RETR".into(),
        };
        assert_eq!(
            text(|o| ftp_data(o, &d)),
            r#"{"ftp_data":{"filename":"temp.txt","command":"RETR"}}"#
        );
    }
}
