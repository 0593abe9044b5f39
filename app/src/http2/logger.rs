//! The EVE record of an HTTP/2 transaction (rendered by [`super::eve`]).

use meerkat_proto::events::{Http2, Http2Setting, Http2Side, HttpHeader};

use super::hpack::Header;
use super::state::{Http2Tx, Side};
use crate::Dir;

/// The headers, with the table size updates where they came.
fn headers(hs: &[Header], updates: &[(usize, u64)]) -> Vec<HttpHeader> {
    let mut v = Vec::with_capacity(hs.len() + updates.len());
    let mut u = updates.iter().peekable();
    for (i, h) in hs.iter().enumerate() {
        while let Some(&&(_, n)) = u.peek().filter(|x| x.0 <= i) {
            v.push(HttpHeader {
                table_size_update: Some(n),
                ..HttpHeader::default()
            });
            u.next();
        }
        v.push(HttpHeader {
            name: String::from_utf8_lossy(&h.name).into_owned(),
            value: h.value.clone(),
            table_size_update: None,
        });
    }
    for &(_, n) in u {
        v.push(HttpHeader {
            table_size_update: Some(n),
            ..HttpHeader::default()
        });
    }
    v
}

fn side(s: &Side) -> Option<Http2Side> {
    if s.settings.is_empty() && s.error_code.is_none() && s.priority.is_none() {
        return None;
    }
    Some(Http2Side {
        settings: s
            .settings
            .iter()
            .map(|&(id, value)| Http2Setting {
                id: u32::from(id),
                value,
            })
            .collect(),
        error_code: s.error_code,
        goaway: s.error_goaway,
        priority: s.priority.map(u32::from),
        multiple_error_code: s.multiple_error,
        multiple_priority: s.multiple_priority,
    })
}

fn num<T: std::str::FromStr>(v: Option<&[u8]>) -> Option<T> {
    std::str::from_utf8(v?).ok()?.trim().parse().ok()
}

/// The transaction's record; `None` for a frame of stream 0 with nothing to log
/// (a WINDOW_UPDATE, a PING), as Suricata logs none.
pub fn record(tx: &Http2Tx) -> Option<Http2> {
    let (rq, rs) = (tx.side(Dir::ToServer), tx.side(Dir::ToClient));
    let request = side(rq);
    let response = side(rs);
    if tx.global() && request.is_none() && response.is_none() {
        return None;
    }
    Some(Http2 {
        stream_id: tx.stream_id,
        url: rq.header(b":path").unwrap_or_default().to_vec(),
        http_user_agent: rq.header(b"user-agent").unwrap_or_default().to_vec(),
        http_method: rq.header(b":method").unwrap_or_default().to_vec(),
        status: num(rs.header(b":status")),
        length: num(rs.header(b"content-length")),
        request_headers: headers(&rq.headers, &rq.size_update_at),
        response_headers: headers(&rs.headers, &rs.size_update_at),
        request,
        response,
    })
}
