//! The EVE `sip` record of a transaction (one message) and its SDP body.

use meerkat_proto::events::{Sdp as SdpRecord, SdpMedia, SdpTime, Sip};

use super::parser::{Message, StartLine};

fn opt(m: &Message, r: Option<&std::ops::Range<u32>>) -> Vec<u8> {
    r.map(|r| m.text(r).to_vec()).unwrap_or_default()
}

fn list<'a>(m: &Message, rs: impl IntoIterator<Item = &'a std::ops::Range<u32>>) -> Vec<Vec<u8>> {
    rs.into_iter().map(|r| m.text(r).to_vec()).collect()
}

/// The record of message `m`.
pub fn record(m: &Message) -> Sip {
    let mut r = Sip::default();
    match &m.start {
        StartLine::Request {
            method,
            uri,
            version,
        } => {
            r.request = true;
            r.method = m.text(method).to_vec();
            r.uri = m.text(uri).to_vec();
            r.version = m.text(version).to_vec();
            r.request_line = m.text(&m.line).to_vec();
        }
        StartLine::Response {
            version,
            code,
            reason,
        } => {
            r.version = m.text(version).to_vec();
            r.code = m.text(code).to_vec();
            r.reason = m.text(reason).to_vec();
            r.response_line = m.text(&m.line).to_vec();
        }
    }
    r.sdp = m.sdp.as_ref().map(|s| SdpRecord {
        origin: opt(m, s.origin.as_ref()),
        session_name: opt(m, s.session_name.as_ref()),
        session_info: opt(m, s.session_info.as_ref()),
        uri: opt(m, s.uri.as_ref()),
        email: opt(m, s.email.as_ref()),
        phone_number: opt(m, s.phone.as_ref()),
        connection_data: opt(m, s.connection.as_ref()),
        bandwidths: list(m, &s.bandwidths),
        time_descriptions: s
            .times
            .iter()
            .map(|t| SdpTime {
                time: m.text(&t.time).to_vec(),
                repeat_time: opt(m, t.repeat_times.first()),
            })
            .collect(),
        timezone: opt(m, s.timezone.as_ref()),
        encryption_key: opt(m, s.key.as_ref()),
        attributes: list(m, &s.attributes),
        media_descriptions: s
            .media
            .iter()
            .map(|d| SdpMedia {
                media: m.text(&d.media).to_vec(),
                media_info: opt(m, d.info.as_ref()),
                bandwidths: list(m, &d.bandwidths),
                connection_data: opt(m, d.connection.as_ref()),
                encryption_key: opt(m, d.key.as_ref()),
                attributes: list(m, &d.attributes),
            })
            .collect(),
    });
    r
}
