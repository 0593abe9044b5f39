//! The EVE `http` record of a transaction (Suricata's `http` object, extended form).

use meerkat_proto::events::{Http, HttpContentRange};

use super::state::HttpTx;

/// Builds the record; `None` before the request line (or status line) is known.
pub fn record(tx: &HttpTx) -> Option<Http> {
    if tx.request.line.is_empty() && tx.response.line.is_empty() {
        return None;
    }
    let req = &tx.request;
    let resp = &tx.response;
    let h = |name: &[u8]| req.header(name).map(<[u8]>::to_vec).unwrap_or_default();
    let mut r = Http {
        hostname: tx.host.clone().unwrap_or_default(),
        http_port: tx.port.map(u32::from),
        url: if tx.request_missing {
            Vec::new()
        } else {
            tx.uri_raw.clone()
        },
        http_user_agent: h(b"user-agent"),
        // Suricata writes the media type only: the value up to its first `;`
        // (`text/html; charset=utf-8` is `text/html`).
        http_content_type: resp
            .header(b"content-type")
            .map(|v| v.split(|&b| b == b';').next().unwrap_or(v).to_vec())
            .unwrap_or_default(),
        http_refer: h(b"referer"),
        http_method: tx.method.clone(),
        protocol: req.protocol.clone(),
        status: tx.status.map(u32::from),
        redirect: resp
            .header(b"location")
            .map(<[u8]>::to_vec)
            .unwrap_or_default(),
        length: resp.body_len,
        xff: h(b"x-forwarded-for"),
        ..Http::default()
    };
    if let Some(v) = resp.header(b"content-range") {
        let p = super::detect::parse_content_range(v);
        r.content_range = Some(Box::new(HttpContentRange {
            raw: v.to_vec(),
            start: p.and_then(|p| p.start),
            end: p.and_then(|p| p.end),
            size: p.and_then(|p| p.size),
        }));
    }
    if tx.status.is_none() && !tx.status_raw.is_empty() {
        r.status_string = tx.status_raw.clone();
    }
    if r.protocol.is_empty() {
        r.protocol = resp.protocol.clone();
    }
    Some(r)
}
