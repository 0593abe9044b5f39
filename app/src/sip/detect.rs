//! The inspection buffers of a SIP transaction (one message): the request line and
//! its parts (`sip.method`, `sip.uri`, `sip.request_line`), the status line and its
//! parts (`sip.stat_code`, `sip.stat_msg`, `sip.response_line`), `sip.protocol` of
//! either, the header buffers (`sip.from`, `sip.to`, `sip.via`, `sip.user_agent`,
//! `sip.content_type`, `sip.content_length`: one item per occurrence of the header,
//! compact forms included), and the SDP body's (`sdp.*`).
//!
//! Every buffer has an id per direction: a request's buffers are absent from a
//! response's transaction and the reverse.

use std::ops::Range;

use super::parser::{HeaderKind, Message, Sdp, StartLine};
use super::state::SipTx;
use crate::buffers::{BufferDef, def};
use crate::{AppProto, Buf, BufferId, Dir};

const fn id(n: u8) -> BufferId {
    BufferId::of(AppProto::Sip, n)
}

pub const METHOD: BufferId = id(1);
pub const URI: BufferId = id(2);
pub const REQUEST_LINE: BufferId = id(3);
pub const STAT_CODE: BufferId = id(4);
pub const STAT_MSG: BufferId = id(5);
pub const RESPONSE_LINE: BufferId = id(6);
pub const PROTOCOL_REQ: BufferId = id(7);
pub const PROTOCOL_RESP: BufferId = id(8);

/// Frames (Suricata's SIP frame types): the whole message, its start line (with its
/// CRLF), its header fields (with the last one's CRLF, without the empty line) and
/// its body.
pub const FRAME_PDU_REQ: BufferId = id(100);
pub const FRAME_PDU_RESP: BufferId = id(101);
pub const FRAME_REQUEST_LINE: BufferId = id(102);
pub const FRAME_REQUEST_HEADERS: BufferId = id(103);
pub const FRAME_REQUEST_BODY: BufferId = id(104);
pub const FRAME_RESPONSE_LINE: BufferId = id(105);
pub const FRAME_RESPONSE_HEADERS: BufferId = id(106);
pub const FRAME_RESPONSE_BODY: BufferId = id(107);

/// What a buffer reads from a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Method,
    Uri,
    RequestLine,
    StatCode,
    StatMsg,
    ResponseLine,
    Protocol,
    Header(HeaderKind),
    Sdp(SdpField),
    Frame(FrameField),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FrameField {
    Pdu,
    Line,
    Headers,
    Body,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SdpField {
    Origin,
    SessionName,
    SessionInfo,
    Uri,
    Email,
    Phone,
    Connection,
    Bandwidth,
    Time,
    RepeatTime,
    Timezone,
    Key,
    Attribute,
    MediaMedia,
    MediaInfo,
    MediaConnection,
    MediaKey,
}

/// The buffers that exist in both directions, numbered from 16 in pairs (request,
/// response): the headers, then the SDP fields.
const BOTH: &[Field] = &[
    Field::Header(HeaderKind::From),
    Field::Header(HeaderKind::To),
    Field::Header(HeaderKind::Via),
    Field::Header(HeaderKind::UserAgent),
    Field::Header(HeaderKind::ContentType),
    Field::Header(HeaderKind::ContentLength),
    Field::Sdp(SdpField::Origin),
    Field::Sdp(SdpField::SessionName),
    Field::Sdp(SdpField::SessionInfo),
    Field::Sdp(SdpField::Uri),
    Field::Sdp(SdpField::Email),
    Field::Sdp(SdpField::Phone),
    Field::Sdp(SdpField::Connection),
    Field::Sdp(SdpField::Bandwidth),
    Field::Sdp(SdpField::Time),
    Field::Sdp(SdpField::RepeatTime),
    Field::Sdp(SdpField::Timezone),
    Field::Sdp(SdpField::Key),
    Field::Sdp(SdpField::Attribute),
    Field::Sdp(SdpField::MediaMedia),
    Field::Sdp(SdpField::MediaInfo),
    Field::Sdp(SdpField::MediaConnection),
    Field::Sdp(SdpField::MediaKey),
];

const FIRST_BOTH: u8 = 16;

/// The request's (`Dir::ToServer`) or the response's id of `BOTH[i]`.
const fn both(i: u8, dir: Dir) -> BufferId {
    id(FIRST_BOTH + 2 * i + dir as u8)
}

/// A buffer of both directions: `name` is `BOTH[i]`.
const fn pair(
    name: &'static str,
    aliases: &'static [&'static str],
    i: u8,
    multi: bool,
) -> BufferDef {
    def(
        name,
        aliases,
        None,
        AppProto::Sip,
        Some(both(i, Dir::ToServer)),
        Some(both(i, Dir::ToClient)),
        multi,
    )
}

/// The sticky buffers of SIP and SDP (Suricata 8's names; the multi ones have one item
/// per header occurrence, SDP line or media description).
pub static BUFFERS: &[BufferDef] = &[
    def(
        "sip.method",
        &["sip_method"],
        None,
        AppProto::Sip,
        Some(METHOD),
        None,
        false,
    ),
    def(
        "sip.uri",
        &["sip_uri"],
        None,
        AppProto::Sip,
        Some(URI),
        None,
        false,
    ),
    def(
        "sip.request_line",
        &["sip_request_line"],
        None,
        AppProto::Sip,
        Some(REQUEST_LINE),
        None,
        false,
    ),
    def(
        "sip.stat_code",
        &["sip_stat_code"],
        None,
        AppProto::Sip,
        None,
        Some(STAT_CODE),
        false,
    ),
    def(
        "sip.stat_msg",
        &["sip_stat_msg"],
        None,
        AppProto::Sip,
        None,
        Some(STAT_MSG),
        false,
    ),
    def(
        "sip.response_line",
        &["sip_response_line"],
        None,
        AppProto::Sip,
        None,
        Some(RESPONSE_LINE),
        false,
    ),
    def(
        "sip.protocol",
        &["sip_protocol"],
        None,
        AppProto::Sip,
        Some(PROTOCOL_REQ),
        Some(PROTOCOL_RESP),
        false,
    ),
    pair("sip.from", &[], 0, true),
    pair("sip.to", &[], 1, true),
    pair("sip.via", &[], 2, true),
    pair("sip.user_agent", &[], 3, true),
    pair("sip.content_type", &[], 4, true),
    pair("sip.content_length", &[], 5, true),
    pair("sdp.origin", &[], 6, false),
    pair("sdp.session_name", &[], 7, false),
    pair("sdp.session_info", &[], 8, false),
    pair("sdp.uri", &[], 9, false),
    pair("sdp.email", &[], 10, false),
    pair("sdp.phone_number", &[], 11, false),
    pair("sdp.connection_data", &[], 12, false),
    pair("sdp.bandwidth", &[], 13, true),
    pair("sdp.time", &[], 14, true),
    pair("sdp.repeat_time", &[], 15, true),
    pair("sdp.timezone", &[], 16, false),
    pair("sdp.encryption_key", &[], 17, false),
    pair("sdp.attribute", &[], 18, true),
    pair("sdp.media.media", &[], 19, true),
    pair("sdp.media.media_info", &[], 20, true),
    pair("sdp.media.connection_data", &[], 21, true),
    pair("sdp.media.encryption_key", &[], 22, true),
];

const fn frame(name: &'static str, ts: Option<BufferId>, tc: Option<BufferId>) -> BufferDef {
    def(name, &[], None, AppProto::Sip, ts, tc, false)
}

/// The frames of SIP (`frame:pdu`, `frame:sip.request.line`, ...).
pub static FRAMES: &[BufferDef] = &[
    frame("pdu", Some(FRAME_PDU_REQ), Some(FRAME_PDU_RESP)),
    frame("request.line", Some(FRAME_REQUEST_LINE), None),
    frame("request.headers", Some(FRAME_REQUEST_HEADERS), None),
    frame("request.body", Some(FRAME_REQUEST_BODY), None),
    frame("response.line", None, Some(FRAME_RESPONSE_LINE)),
    frame("response.headers", None, Some(FRAME_RESPONSE_HEADERS)),
    frame("response.body", None, Some(FRAME_RESPONSE_BODY)),
];

/// The field and the message direction of buffer `id`.
fn field(id: BufferId) -> Option<(Field, Dir)> {
    Some(match id {
        METHOD => (Field::Method, Dir::ToServer),
        URI => (Field::Uri, Dir::ToServer),
        REQUEST_LINE => (Field::RequestLine, Dir::ToServer),
        STAT_CODE => (Field::StatCode, Dir::ToClient),
        STAT_MSG => (Field::StatMsg, Dir::ToClient),
        RESPONSE_LINE => (Field::ResponseLine, Dir::ToClient),
        PROTOCOL_REQ => (Field::Protocol, Dir::ToServer),
        PROTOCOL_RESP => (Field::Protocol, Dir::ToClient),
        FRAME_PDU_REQ => (Field::Frame(FrameField::Pdu), Dir::ToServer),
        FRAME_PDU_RESP => (Field::Frame(FrameField::Pdu), Dir::ToClient),
        FRAME_REQUEST_LINE => (Field::Frame(FrameField::Line), Dir::ToServer),
        FRAME_REQUEST_HEADERS => (Field::Frame(FrameField::Headers), Dir::ToServer),
        FRAME_REQUEST_BODY => (Field::Frame(FrameField::Body), Dir::ToServer),
        FRAME_RESPONSE_LINE => (Field::Frame(FrameField::Line), Dir::ToClient),
        FRAME_RESPONSE_HEADERS => (Field::Frame(FrameField::Headers), Dir::ToClient),
        FRAME_RESPONSE_BODY => (Field::Frame(FrameField::Body), Dir::ToClient),
        BufferId(n) => {
            if id.proto_index() != AppProto::Sip as usize {
                return None;
            }
            let k = (n & 0xff).checked_sub(u16::from(FIRST_BOTH))?;
            let f = *BOTH.get(usize::from(k / 2))?;
            let dir = if k % 2 == 0 {
                Dir::ToServer
            } else {
                Dir::ToClient
            };
            (f, dir)
        }
    })
}

fn one<'a>(m: &'a Message, r: Option<&Range<u32>>, index: usize) -> Buf<'a> {
    match r {
        Some(r) if index == 0 => Buf::Ready(m.text(r)),
        _ => Buf::Absent,
    }
}

fn nth<'a>(m: &'a Message, mut it: impl Iterator<Item = &'a Range<u32>>, index: usize) -> Buf<'a> {
    it.nth(index).map_or(Buf::Absent, |r| Buf::Ready(m.text(r)))
}

fn sdp_field<'a>(m: &'a Message, s: &'a Sdp, f: SdpField, i: usize) -> Buf<'a> {
    match f {
        SdpField::Origin => one(m, s.origin.as_ref(), i),
        SdpField::SessionName => one(m, s.session_name.as_ref(), i),
        SdpField::SessionInfo => one(m, s.session_info.as_ref(), i),
        SdpField::Uri => one(m, s.uri.as_ref(), i),
        SdpField::Email => one(m, s.email.as_ref(), i),
        SdpField::Phone => one(m, s.phone.as_ref(), i),
        SdpField::Connection => one(m, s.connection.as_ref(), i),
        SdpField::Bandwidth => nth(m, s.bandwidths.iter(), i),
        SdpField::Time => nth(m, s.times.iter().map(|t| &t.time), i),
        SdpField::RepeatTime => nth(m, s.times.iter().flat_map(|t| &t.repeat_times), i),
        SdpField::Timezone => one(m, s.timezone.as_ref(), i),
        SdpField::Key => one(m, s.key.as_ref(), i),
        SdpField::Attribute => nth(m, s.attributes.iter(), i),
        SdpField::MediaMedia => nth(m, s.media.iter().map(|d| &d.media), i),
        SdpField::MediaInfo => nth(m, s.media.iter().filter_map(|d| d.info.as_ref()), i),
        SdpField::MediaConnection => {
            nth(m, s.media.iter().filter_map(|d| d.connection.as_ref()), i)
        }
        SdpField::MediaKey => nth(m, s.media.iter().filter_map(|d| d.key.as_ref()), i),
    }
}

/// The bytes of a message's frame `f` (a message without a body has no body frame).
fn frame_range(m: &Message, f: FrameField) -> Option<Range<u32>> {
    Some(match f {
        FrameField::Pdu => 0..m.raw.len() as u32,
        FrameField::Line => m.line.start..m.line.end + 2,
        FrameField::Headers => m.header_section.clone(),
        FrameField::Body if m.body.is_empty() => return None,
        FrameField::Body => m.body.clone(),
    })
}

/// [`crate::Transaction::frame`] for SIP. Each message makes, in order, its `pdu`,
/// start line, headers and (with one) body frames, numbered on from the direction's
/// earlier messages'; all but a datagram's `pdu` are attached to the message's
/// transaction, under Suricata's SIP transaction id (one more than the EVE `tx_id`).
pub fn frame_meta(tx: &SipTx, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
    let (Field::Frame(f), dir) = field(id)? else {
        return None;
    };
    if dir != tx.dir || index != 0 {
        return None;
    }
    let r = frame_range(&tx.msg, f)?;
    let nth = match f {
        FrameField::Pdu => 0,
        FrameField::Line => 1,
        FrameField::Headers => 2,
        FrameField::Body => 3,
    };
    let datagram_pdu = tx.offset.is_none() && nth == 0;
    Some(crate::FrameMeta {
        id: tx.frame_id + nth,
        stream_offset: tx.offset.map(|o| o + u64::from(r.start)),
        complete: true,
        tx_id: (!datagram_pdu).then_some(tx.id + 1),
        length: None,
    })
}

pub fn buffer(tx: &SipTx, id: BufferId, index: usize) -> Buf<'_> {
    let Some((f, dir)) = field(id) else {
        return Buf::Absent;
    };
    if dir != tx.dir {
        return Buf::Absent;
    }
    let m = &tx.msg;
    match (f, &m.start) {
        (Field::Method, StartLine::Request { method, .. }) => one(m, Some(method), index),
        (Field::Uri, StartLine::Request { uri, .. }) => one(m, Some(uri), index),
        (Field::StatCode, StartLine::Response { code, .. }) => one(m, Some(code), index),
        (Field::StatMsg, StartLine::Response { reason, .. }) => one(m, Some(reason), index),
        (
            Field::Protocol,
            StartLine::Request { version, .. } | StartLine::Response { version, .. },
        ) => one(m, Some(version), index),
        (Field::RequestLine, StartLine::Request { .. })
        | (Field::ResponseLine, StartLine::Response { .. }) => one(m, Some(&m.line), index),
        (Field::Header(k), _) => m
            .headers
            .iter()
            .filter(|h| h.kind == k)
            .nth(index)
            .map_or(Buf::Absent, |h| Buf::Ready(m.text(&h.value))),
        (Field::Frame(f), _) => match frame_range(m, f) {
            Some(r) => one(m, Some(&r), index),
            None => Buf::Absent,
        },
        (Field::Sdp(f), _) => match &m.sdp {
            Some(s) => sdp_field(m, s, f, index),
            None => Buf::Absent,
        },
        _ => Buf::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::buffers::sticky;
    use crate::sip::parser::{
        parse,
        tests::{INVITE, OK},
    };

    fn tx(bytes: &[u8], dir: Dir) -> SipTx {
        SipTx {
            id: 0,
            dir,
            msg: parse(bytes, true).unwrap().0,
            offset: Some(0),
            frame_id: 1,
        }
    }

    fn items(tx: &SipTx, kw: &str, dir: Dir) -> Vec<Vec<u8>> {
        let b = sticky(kw).unwrap_or_else(|| panic!("{kw}"));
        let Some(id) = (match dir {
            Dir::ToServer => b.to_server,
            Dir::ToClient => b.to_client,
        }) else {
            return Vec::new();
        };
        (0..)
            .map_while(|i| match buffer(tx, id, i) {
                Buf::Ready(b) => Some(b.to_vec()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn request_buffers() {
        let t = tx(INVITE, Dir::ToServer);
        let s = Dir::ToServer;
        assert_eq!(items(&t, "sip.method", s), vec![b"INVITE".to_vec()]);
        assert_eq!(
            items(&t, "sip.uri", s),
            vec![b"sip:bob@example.com".to_vec()]
        );
        assert_eq!(items(&t, "sip.protocol", s), vec![b"SIP/2.0".to_vec()]);
        assert_eq!(
            items(&t, "sip.request_line", s),
            vec![b"INVITE sip:bob@example.com SIP/2.0".to_vec()]
        );
        // Compact and full forms of To, one item each.
        assert_eq!(
            items(&t, "sip.to", s),
            vec![
                b"<sip:bob@example.com>".to_vec(),
                b"<sip:carol@example.com>".to_vec()
            ]
        );
        assert_eq!(items(&t, "sip.content_length", s), vec![b"137".to_vec()]);
        assert_eq!(
            items(&t, "sip.content_type", s),
            vec![b"application/sdp".to_vec()]
        );
        assert_eq!(
            items(&t, "sip.user_agent", s),
            vec![b"Test Phone 1.0".to_vec()]
        );
        assert_eq!(items(&t, "sdp.session_name", s), vec![b"Call".to_vec()]);
        assert_eq!(items(&t, "sdp.attribute", s), vec![b"sendrecv".to_vec()]);
        assert_eq!(
            items(&t, "sdp.media.media", s),
            vec![b"audio 4000 RTP/AVP 0".to_vec()]
        );
        assert_eq!(
            items(&t, "sdp.media.media_info", s),
            vec![b"voice".to_vec()]
        );
        assert!(items(&t, "sdp.media.connection_data", s).is_empty());
        // A request has no status line, and no buffers of the other direction.
        assert!(items(&t, "sip.stat_code", Dir::ToClient).is_empty());
        assert!(items(&t, "sip.from", Dir::ToClient).is_empty());
    }

    #[test]
    fn response_buffers() {
        let t = tx(OK, Dir::ToClient);
        let c = Dir::ToClient;
        assert_eq!(items(&t, "sip.stat_code", c), vec![b"200".to_vec()]);
        assert_eq!(items(&t, "sip.stat_msg", c), vec![b"OK".to_vec()]);
        assert_eq!(
            items(&t, "sip.response_line", c),
            vec![b"SIP/2.0 200 OK".to_vec()]
        );
        assert_eq!(items(&t, "sip.protocol", c), vec![b"SIP/2.0".to_vec()]);
        assert_eq!(items(&t, "sip.content_length", c), vec![b"0".to_vec()]);
        assert!(items(&t, "sip.method", Dir::ToServer).is_empty());
        assert!(items(&t, "sdp.origin", c).is_empty());
        assert_eq!(buffer(&t, BufferId::of(AppProto::Dns, 1), 0), Buf::Absent);
    }

    #[test]
    fn frames() {
        let t = tx(INVITE, Dir::ToServer);
        assert_eq!(buffer(&t, FRAME_PDU_REQ, 0), Buf::Ready(INVITE));
        assert_eq!(buffer(&t, FRAME_PDU_RESP, 0), Buf::Absent);
        assert_eq!(
            buffer(&t, FRAME_REQUEST_LINE, 0),
            Buf::Ready(&b"INVITE sip:bob@example.com SIP/2.0\r\n"[..])
        );
        let Buf::Ready(h) = buffer(&t, FRAME_REQUEST_HEADERS, 0) else {
            panic!()
        };
        assert!(h.starts_with(b"v: SIP/2.0/UDP") && h.ends_with(b"l: 137\r\n"));
        let Buf::Ready(b) = buffer(&t, FRAME_REQUEST_BODY, 0) else {
            panic!()
        };
        assert!(b.starts_with(b"v=0\r\n") && b.len() == 137);
        let r = tx(OK, Dir::ToClient);
        assert_eq!(
            buffer(&r, FRAME_RESPONSE_LINE, 0),
            Buf::Ready(&b"SIP/2.0 200 OK\r\n"[..])
        );
        assert_eq!(buffer(&r, FRAME_RESPONSE_BODY, 0), Buf::Absent);
        assert_eq!(buffer(&r, FRAME_REQUEST_LINE, 0), Buf::Absent);
        // Placed in the stream, numbered pdu, line, headers, body.
        let line = frame_meta(&t, FRAME_REQUEST_LINE, 0).unwrap();
        assert_eq!(
            (line.id, line.stream_offset, line.tx_id),
            (2, Some(0), Some(1))
        );
        let body = frame_meta(&t, FRAME_REQUEST_BODY, 0).unwrap();
        assert_eq!(body.id, 4);
        assert_eq!(body.stream_offset, Some(INVITE.len() as u64 - 137));
        // A datagram's pdu is attached to no transaction and has no offset.
        let udp = SipTx { offset: None, ..t };
        let pdu = frame_meta(&udp, FRAME_PDU_REQ, 0).unwrap();
        assert_eq!((pdu.id, pdu.stream_offset, pdu.tx_id), (1, None, None));
        assert!(frame_meta(&r, FRAME_RESPONSE_BODY, 0).is_none());
    }
}
