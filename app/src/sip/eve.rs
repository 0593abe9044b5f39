//! The EVE `sip` object, in Suricata's field order: a request's `method`, `uri`,
//! `version`, or a response's `version`, `code`, `reason`; then the `sdp` object of
//! its body, then `request_line` or `response_line`.

use meerkat_eve::{Obj, array};
use meerkat_proto::events::{Sdp, Sip};

use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Sip(s) = r {
        sip(o, s);
    }
}

fn some(o: &mut Obj<'_>, k: &str, v: &[u8]) {
    if !v.is_empty() {
        o.bytes(k, v);
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

fn sdp(o: &mut Obj<'_>, s: &Sdp) {
    o.obj("sdp", |x| {
        some(x, "origin", &s.origin);
        some(x, "session_name", &s.session_name);
        some(x, "session_info", &s.session_info);
        some(x, "uri", &s.uri);
        some(x, "email", &s.email);
        some(x, "phone_number", &s.phone_number);
        some(x, "connection_data", &s.connection_data);
        strings(x, "bandwidths", &s.bandwidths);
        if !s.time_descriptions.is_empty() {
            x.raw("time_descriptions", |b| {
                array(b, &s.time_descriptions, |t, it| {
                    some(t, "time", &it.time);
                    some(t, "repeat_time", &it.repeat_time);
                })
            });
        }
        some(x, "timezone", &s.timezone);
        some(x, "encryption_key", &s.encryption_key);
        strings(x, "attributes", &s.attributes);
        if !s.media_descriptions.is_empty() {
            x.raw("media_descriptions", |b| {
                array(b, &s.media_descriptions, |m, it| {
                    some(m, "media", &it.media);
                    some(m, "media_info", &it.media_info);
                    strings(m, "bandwidths", &it.bandwidths);
                    some(m, "connection_data", &it.connection_data);
                    some(m, "encryption_key", &it.encryption_key);
                    strings(m, "attributes", &it.attributes);
                })
            });
        }
    });
}

/// The `sip` object.
pub fn sip(o: &mut Obj<'_>, s: &Sip) {
    o.obj("sip", |x| {
        if s.request {
            x.bytes("method", &s.method)
                .bytes("uri", &s.uri)
                .bytes("version", &s.version);
        } else {
            x.bytes("version", &s.version)
                .bytes("code", &s.code)
                .bytes("reason", &s.reason);
        }
        if let Some(d) = &s.sdp {
            sdp(x, d);
        }
        if s.request {
            x.bytes("request_line", &s.request_line);
        } else {
            x.bytes("response_line", &s.response_line);
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sip::logger::record;
    use crate::sip::parser::{parse, tests::INVITE};

    #[test]
    fn renders_in_suricatas_order() {
        let (m, _) = parse(INVITE, true).unwrap();
        let mut b = Vec::new();
        let mut o = Obj::new(&mut b);
        sip(&mut o, &record(&m));
        o.end();
        let s = String::from_utf8(b).unwrap();
        assert_eq!(
            s,
            concat!(
                r#"{"sip":{"method":"INVITE","uri":"sip:bob@example.com","version":"SIP/2.0","#,
                r#""sdp":{"origin":"alice 1 1 IN IP4 192.0.2.1","session_name":"Call","#,
                r#""connection_data":"IN IP4 192.0.2.1","time_descriptions":[{"time":"0 0"}],"#,
                r#""attributes":["sendrecv"],"media_descriptions":[{"media":"audio 4000 RTP/AVP 0","#,
                r#""media_info":"voice","attributes":["rtpmap:0 PCMU/8000"]}]},"#,
                r#""request_line":"INVITE sip:bob@example.com SIP/2.0"}}"#
            )
        );
    }
}
