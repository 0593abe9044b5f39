//! The EVE `pop3` object, in Suricata's field order: `request` (`command`, `args`)
//! and `response` (`success`, `status`, `header`, `data`), each when there is one.

use meerkat_eve::Obj;
use meerkat_proto::events::Pop3;

use crate::AppRecord;

/// [`crate::RecordDef::render`] of `pop3`.
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Pop3(p) = r {
        pop3(o, p);
    }
}

fn strings(o: &mut Obj<'_>, k: &str, v: &[Vec<u8>]) {
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

/// The `pop3` object.
pub fn pop3(o: &mut Obj<'_>, p: &Pop3) {
    o.obj("pop3", |x| {
        if let Some(r) = &p.request {
            x.obj("request", |q| {
                q.bytes("command", &r.command);
                strings(q, "args", &r.args);
            });
        }
        if let Some(r) = &p.response {
            x.obj("response", |q| {
                q.bool("success", r.success);
                q.str("status", if r.success { "OK" } else { "ERR" });
                q.bytes("header", &r.header);
                strings(q, "data", &r.data);
            });
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_proto::events::{Pop3Request, Pop3Response};

    #[test]
    fn renders_in_suricatas_order() {
        let p = Pop3 {
            request: Some(Pop3Request {
                command: b"LIST".to_vec(),
                args: vec![],
            }),
            response: Some(Pop3Response {
                success: true,
                header: b"2 messages (320 octets)".to_vec(),
                data: vec![b"1 120".to_vec(), b"2 200".to_vec()],
            }),
        };
        let mut b = Vec::new();
        let mut o = Obj::new(&mut b);
        pop3(&mut o, &p);
        o.end();
        assert_eq!(
            String::from_utf8(b).unwrap(),
            concat!(
                r#"{"pop3":{"request":{"command":"LIST","args":[]},"response":{"success":true,"#,
                r#""status":"OK","header":"2 messages (320 octets)","data":["1 120","2 200"]}}}"#
            )
        );
    }
}
