//! HTTP/2 frames (RFC 9113 section 4 and 6): the frame header, the frame types and the
//! small fixed payloads, as pure functions.

/// The client connection preface.
pub const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";
/// Length of a frame header.
pub const HEADER_LEN: usize = 9;
/// SETTINGS_MAX_FRAME_SIZE's initial value: a DATA frame longer than this (or than what
/// the receiver's SETTINGS allow) is `long_frame_data`.
pub const DEFAULT_MAX_FRAME_SIZE: u32 = 16_384;

pub const DATA: u8 = 0;
pub const HEADERS: u8 = 1;
pub const PRIORITY: u8 = 2;
pub const RST_STREAM: u8 = 3;
pub const SETTINGS: u8 = 4;
pub const PUSH_PROMISE: u8 = 5;
pub const PING: u8 = 6;
pub const GOAWAY: u8 = 7;
pub const WINDOW_UPDATE: u8 = 8;
pub const CONTINUATION: u8 = 9;

pub const FLAG_END_STREAM: u8 = 0x1;
pub const FLAG_ACK: u8 = 0x1;
pub const FLAG_END_HEADERS: u8 = 0x4;
pub const FLAG_PADDED: u8 = 0x8;
pub const FLAG_PRIORITY: u8 = 0x20;

/// Frame type names as rules write them (`http2.frametype:GOAWAY`), by type.
pub const TYPE_NAMES: [&str; 10] = [
    "DATA",
    "HEADERS",
    "PRIORITY",
    "RST_STREAM",
    "SETTINGS",
    "PUSH_PROMISE",
    "PING",
    "GOAWAY",
    "WINDOW_UPDATE",
    "CONTINUATION",
];

/// Error code names as rules write them (`http2.errorcode:NO_ERROR`), by code.
pub const ERROR_NAMES: [&str; 14] = [
    "NO_ERROR",
    "PROTOCOL_ERROR",
    "INTERNAL_ERROR",
    "FLOW_CONTROL_ERROR",
    "SETTINGS_TIMEOUT",
    "STREAM_CLOSED",
    "FRAME_SIZE_ERROR",
    "REFUSED_STREAM",
    "CANCEL",
    "COMPRESSION_ERROR",
    "CONNECT_ERROR",
    "ENHANCE_YOUR_CALM",
    "INADEQUATE_SECURITY",
    "HTTP_1_1_REQUIRED",
];

/// Settings names as rules write them (`http2.settings:SETTINGS_ENABLE_PUSH=0`), by id.
pub const SETTINGS_NAMES: [&str; 9] = [
    "",
    "SETTINGS_HEADER_TABLE_SIZE",
    "SETTINGS_ENABLE_PUSH",
    "SETTINGS_MAX_CONCURRENT_STREAMS",
    "SETTINGS_INITIAL_WINDOW_SIZE",
    "SETTINGS_MAX_FRAME_SIZE",
    "SETTINGS_MAX_HEADER_LIST_SIZE",
    "",
    "SETTINGS_ENABLE_CONNECT_PROTOCOL",
];

pub const SETTINGS_HEADER_TABLE_SIZE: u16 = 1;
pub const SETTINGS_MAX_FRAME_SIZE: u16 = 5;

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub length: u32,
    pub ftype: u8,
    pub flags: u8,
    pub stream_id: u32,
}

/// Parses a frame header from the first [`HEADER_LEN`] bytes of `b`.
pub fn header(b: &[u8]) -> Option<Header> {
    let b: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
    Some(Header {
        length: u32::from_be_bytes([0, b[0], b[1], b[2]]),
        ftype: b[3],
        flags: b[4],
        stream_id: u32::from_be_bytes([b[5], b[6], b[7], b[8]]) & 0x7fff_ffff,
    })
}

/// A 31-bit big-endian value at `b[at..at + 4]`.
pub fn u31(b: &[u8], at: usize) -> Option<u32> {
    let x: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(x) & 0x7fff_ffff)
}

/// A 32-bit big-endian value at `b[at..at + 4]`.
pub fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let x: [u8; 4] = b.get(at..at + 4)?.try_into().ok()?;
    Some(u32::from_be_bytes(x))
}

/// The settings of a SETTINGS payload (id, value), or `None` when its length is not a
/// multiple of 6.
pub fn settings(b: &[u8]) -> Option<impl Iterator<Item = (u16, u32)> + '_> {
    b.len().is_multiple_of(6).then(|| {
        b.chunks_exact(6).map(|c| {
            (
                u16::from_be_bytes([c[0], c[1]]),
                u32::from_be_bytes([c[2], c[3], c[4], c[5]]),
            )
        })
    })
}

/// Strips a HEADERS frame's padding and priority fields: the header block fragment and
/// the priority weight, if any; `None` when the fields do not fit.
pub fn headers_payload(flags: u8, b: &[u8]) -> Option<(&[u8], Option<u8>)> {
    let (mut b, pad) = if flags & FLAG_PADDED != 0 {
        let (&p, rest) = b.split_first()?;
        (rest, usize::from(p))
    } else {
        (b, 0)
    };
    b = b.get(..b.len().checked_sub(pad)?)?;
    let mut weight = None;
    if flags & FLAG_PRIORITY != 0 {
        weight = Some(*b.get(4)?);
        b = &b[5..];
    }
    Some((b, weight))
}

/// The name EVE gives a settings id (`SETTINGSMAXCONCURRENTSTREAMS`).
pub fn settings_eve_name(id: u16) -> String {
    match SETTINGS_NAMES.get(usize::from(id)) {
        Some(n) if !n.is_empty() => n.replace('_', ""),
        _ => format!("SETTINGSUNKNOWN{id}"),
    }
}

/// The name EVE gives an error code: a GOAWAY's in upper case (`NOERROR`), a
/// RST_STREAM's in camel case (`NoError`), as Suricata 8 writes them.
pub fn error_eve_name(code: u32, goaway: bool) -> String {
    let Some(n) = usize::try_from(code).ok().and_then(|c| ERROR_NAMES.get(c)) else {
        return format!("Unknown{code}");
    };
    if goaway {
        return n.replace('_', "");
    }
    let mut s = String::with_capacity(n.len());
    for part in n.split('_') {
        let mut cs = part.chars();
        if let Some(c) = cs.next() {
            s.push(c);
            s.extend(cs.map(|c| c.to_ascii_lowercase()));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_header() {
        let h = header(&[0x00, 0x00, 0x12, 0x04, 0x01, 0x80, 0x00, 0x00, 0x03]).unwrap();
        assert_eq!(
            h,
            Header {
                length: 18,
                ftype: SETTINGS,
                flags: 1,
                stream_id: 3
            }
        );
        assert_eq!(header(&[0; 8]), None);
    }

    #[test]
    fn payloads() {
        let s: Vec<_> = settings(&[0, 3, 0, 0, 0, 100, 0, 4, 0, 0, 0xff, 0xff])
            .unwrap()
            .collect();
        assert_eq!(s, vec![(3, 100), (4, 65535)]);
        assert!(settings(&[0; 5]).is_none());
        // Padded, with priority: pad length 2, dependency, weight 15, block "ab", pad.
        let b = [2, 0, 0, 0, 1, 15, b'a', b'b', 0, 0];
        assert_eq!(
            headers_payload(FLAG_PADDED | FLAG_PRIORITY, &b),
            Some((&b"ab"[..], Some(15)))
        );
        assert_eq!(headers_payload(FLAG_PADDED, &[9, 1]), None);
        assert_eq!(u31(&[0x80, 0, 0x87, 0x4a], 0), Some(34634));
    }

    #[test]
    fn eve_names() {
        assert_eq!(settings_eve_name(3), "SETTINGSMAXCONCURRENTSTREAMS");
        assert_eq!(error_eve_name(0, true), "NOERROR");
        assert_eq!(error_eve_name(0, false), "NoError");
        assert_eq!(error_eve_name(5, false), "StreamClosed");
        assert_eq!(error_eve_name(13, false), "Http11Required");
    }
}
