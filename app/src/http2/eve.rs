//! The EVE record of an HTTP/2 transaction: Suricata 8 writes it as an `http` object
//! with `version` "2", the usual fields taken from the headers, and an `http2` object
//! (stream id, and per side its settings, error code and priority).

use meerkat_eve::{Obj, array};
use meerkat_proto::events::{Http2, Http2Side, HttpHeader};

use super::frame;
use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Http2(h) = r {
        http(o, h);
    }
}

fn headers(o: &mut Obj<'_>, key: &str, hs: &[HttpHeader]) {
    if hs.is_empty() {
        return;
    }
    o.raw(key, |b| {
        array(b, hs, |h, x| match x.table_size_update {
            Some(n) => {
                h.u64("table_size_update", n);
            }
            None => {
                h.str("name", &x.name).bytes("value", &x.value);
            }
        })
    });
}

fn side(o: &mut Obj<'_>, key: &str, s: &Http2Side) {
    if s.settings.is_empty() && s.error_code.is_none() && s.priority.is_none() {
        return;
    }
    o.obj(key, |x| {
        if let Some(c) = s.error_code {
            x.str("error_code", &frame::error_eve_name(c, s.goaway));
        }
        if let Some(p) = s.priority {
            x.u64("priority", u64::from(p));
        }
        if !s.settings.is_empty() {
            x.raw("settings", |b| {
                array(b, &s.settings, |so, st| {
                    so.str(
                        "settings_id",
                        &frame::settings_eve_name(st.id.min(0xffff) as u16),
                    )
                    .u64("settings_value", u64::from(st.value));
                })
            });
        }
        if s.multiple_error_code {
            x.str("has_multiple", "error_code");
        } else if s.multiple_priority {
            x.str("has_multiple", "priority");
        }
    });
}

/// The `http` object of an HTTP/2 transaction.
pub fn http(o: &mut Obj<'_>, h: &Http2) {
    o.obj("http", |x| {
        x.str("version", "2");
        headers(x, "request_headers", &h.request_headers);
        headers(x, "response_headers", &h.response_headers);
        if !h.url.is_empty() {
            x.bytes("url", &h.url);
        }
        if !h.http_user_agent.is_empty() {
            x.bytes("http_user_agent", &h.http_user_agent);
        }
        if let Some(s) = h.status {
            x.u64("status", u64::from(s));
        }
        if !h.http_method.is_empty() {
            x.bytes("http_method", &h.http_method);
        }
        if let Some(l) = h.length {
            x.u64("length", l);
        }
        x.obj("http2", |y| {
            y.u64("stream_id", u64::from(h.stream_id));
            if let Some(r) = &h.request {
                side(y, "request", r);
            }
            if let Some(r) = &h.response {
                side(y, "response", r);
            }
        });
    });
}
