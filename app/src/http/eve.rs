//! The EVE `http` object, in Suricata's field order and optionality; every line is
//! checked against Suricata's EVE schema in the eve-writer's tests.

use meerkat_eve::{Obj, array};
use meerkat_proto::events::{Http, HttpHeader};

use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Http(h) = r {
        http(o, h);
    }
}

fn headers(o: &mut Obj<'_>, key: &str, hs: &[HttpHeader]) {
    if hs.is_empty() {
        return;
    }
    o.raw(key, |b| {
        array(b, hs, |h, x| {
            h.str("name", &x.name).bytes("value", &x.value);
        })
    });
}

/// The `http` object.
pub fn http(o: &mut Obj<'_>, h: &Http) {
    o.obj("http", |x| {
        if !h.hostname.is_empty() {
            x.bytes("hostname", &h.hostname);
        }
        if let Some(p) = h.http_port {
            x.u64("http_port", u64::from(p));
        }
        if !h.url.is_empty() {
            x.bytes("url", &h.url);
        }
        if !h.http_user_agent.is_empty() {
            x.bytes("http_user_agent", &h.http_user_agent);
        }
        if !h.xff.is_empty() {
            x.bytes("xff", &h.xff);
        }
        if !h.http_content_type.is_empty() {
            x.bytes("http_content_type", &h.http_content_type);
        }
        if let Some(cr) = &h.content_range {
            x.obj("content_range", |c| {
                c.bytes("raw", &cr.raw);
                for (k, v) in [("start", cr.start), ("end", cr.end), ("size", cr.size)] {
                    if let Some(v) = v {
                        c.u64(k, v);
                    }
                }
            });
        }
        if !h.http_refer.is_empty() {
            x.bytes("http_refer", &h.http_refer);
        }
        if !h.http_method.is_empty() {
            x.bytes("http_method", &h.http_method);
        }
        if !h.protocol.is_empty() {
            x.bytes("protocol", &h.protocol);
        }
        if let Some(s) = h.status {
            x.u64("status", u64::from(s));
        } else if !h.status_string.is_empty() {
            x.bytes("status_string", &h.status_string);
        }
        if !h.redirect.is_empty() {
            x.bytes("redirect", &h.redirect);
        }
        x.u64("length", h.length);
        headers(x, "request_headers", &h.request_headers);
        headers(x, "response_headers", &h.response_headers);
    });
}
