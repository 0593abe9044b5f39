//! GRE headers (RFC 2784/2890 version 0, RFC 2637 version 1 as PPTP uses it), with
//! the checks and events of Suricata's GRE decoder, and the ERSPAN headers carried in
//! GRE (type II and III; type I is bare Ethernet after a GRE header without sequence
//! number).

use crate::DecodeEvent;

/// The fixed part of a GRE header: flags and version, protocol.
pub const BASE_LEN: usize = 4;
/// The longest GRE header: base, checksum+offset, key, sequence number (and, version
/// 1, acknowledgment number).
pub const MAX_HEADER_LEN: usize = 20;

const FLAG_CHECKSUM: u16 = 0x8000;
const FLAG_ROUTING: u16 = 0x4000;
const FLAG_KEY: u16 = 0x2000;
const FLAG_SEQ: u16 = 0x1000;
const FLAG_SSR: u16 = 0x0800;
const RECUR_MASK: u16 = 0x0700;
/// Version 1 only: an acknowledgment number follows.
const FLAG_ACK: u16 = 0x0080;
/// The reserved flag bits of version 0 (RFC 2784: must be 0) and of version 1.
const V0_FLAGS: u16 = 0x00f8;
const V1_FLAGS: u16 = 0x0078;

/// GRE protocol types (ethertypes).
pub const PROTO_IPV4: u16 = 0x0800;
pub const PROTO_IPV6: u16 = 0x86dd;
pub const PROTO_TEB: u16 = 0x6558;
pub const PROTO_PPP: u16 = 0x880b;
pub const PROTO_ERSPAN: u16 = 0x88be;
pub const PROTO_ERSPAN3: u16 = 0x22eb;

/// ERSPAN type II header length.
pub const ERSPAN2_LEN: usize = 8;
/// ERSPAN type III header length, and of its optional platform sub-header.
pub const ERSPAN3_LEN: usize = 12;
pub const ERSPAN3_SUBHEADER_LEN: usize = 8;

/// A parsed GRE header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub protocol: u16,
    /// Whether a sequence number is present (ERSPAN type II vs type I).
    pub has_seq: bool,
    /// Length of the GRE header (the payload starts there).
    pub len: usize,
}

/// Parses the GRE header at the start of `b` as Suricata's decoder checks it. Source
/// routing (version 0 with the R bit) is refused as
/// `gre.version0_malformed_sre_hdr` rather than walked (RFC 2784 deprecates it).
pub fn parse(b: &[u8]) -> Result<Header, DecodeEvent> {
    let h = b.get(..BASE_LEN).ok_or(DecodeEvent::GrePktTooSmall)?;
    let flags = u16::from_be_bytes([h[0], h[1]]);
    let protocol = u16::from_be_bytes([h[2], h[3]]);
    let version = (flags & 0x7) as u8;
    let mut len = BASE_LEN;
    match version {
        0 => {
            if flags & RECUR_MASK != 0 {
                return Err(DecodeEvent::GreVersion0Recur);
            }
            if flags & V0_FLAGS != 0 {
                return Err(DecodeEvent::GreVersion0Flags);
            }
            if flags & (FLAG_CHECKSUM | FLAG_ROUTING) != 0 {
                len += 4;
            }
            if flags & FLAG_KEY != 0 {
                len += 4;
            }
            if flags & FLAG_SEQ != 0 {
                len += 4;
            }
            if len > b.len() {
                return Err(DecodeEvent::GreVersion0HdrTooBig);
            }
            if flags & FLAG_ROUTING != 0 {
                return Err(DecodeEvent::GreVersion0MalformedSreHdr);
            }
        }
        1 => {
            if flags & FLAG_CHECKSUM != 0 {
                return Err(DecodeEvent::GreVersion1Chksum);
            }
            if flags & FLAG_ROUTING != 0 {
                return Err(DecodeEvent::GreVersion1Route);
            }
            if flags & FLAG_SSR != 0 {
                return Err(DecodeEvent::GreVersion1Ssr);
            }
            if flags & RECUR_MASK != 0 {
                return Err(DecodeEvent::GreVersion1Recur);
            }
            if flags & V1_FLAGS != 0 {
                return Err(DecodeEvent::GreVersion1Flags);
            }
            if protocol != PROTO_PPP {
                return Err(DecodeEvent::GreVersion1WrongProtocol);
            }
            if flags & FLAG_KEY == 0 {
                return Err(DecodeEvent::GreVersion1NoKey);
            }
            len += 4;
            if flags & FLAG_SEQ != 0 {
                len += 4;
            }
            if flags & FLAG_ACK != 0 {
                len += 4;
            }
            if len > b.len() {
                return Err(DecodeEvent::GreVersion1HdrTooBig);
            }
        }
        _ => return Err(DecodeEvent::GreWrongVersion),
    }
    Ok(Header {
        version,
        protocol,
        has_seq: flags & FLAG_SEQ != 0,
        len,
    })
}

/// Length of the ERSPAN type II header at the start of `b` (version 1 in its first
/// nibble), after which an Ethernet frame follows.
pub fn erspan2_len(b: &[u8]) -> Result<usize, DecodeEvent> {
    let h = b
        .get(..ERSPAN2_LEN)
        .ok_or(DecodeEvent::ErspanHeaderTooSmall)?;
    if h[0] >> 4 != 1 {
        return Err(DecodeEvent::ErspanUnsupportedVersion);
    }
    Ok(ERSPAN2_LEN)
}

/// Length of the ERSPAN type III header at the start of `b` (version 2, with its
/// platform sub-header when the O bit is set), after which an Ethernet frame follows.
pub fn erspan3_len(b: &[u8]) -> Result<usize, DecodeEvent> {
    let h = b
        .get(..ERSPAN3_LEN)
        .ok_or(DecodeEvent::ErspanHeaderTooSmall)?;
    if h[0] >> 4 != 2 {
        return Err(DecodeEvent::ErspanUnsupportedVersion);
    }
    let len = if h[11] & 0x01 != 0 {
        ERSPAN3_LEN + ERSPAN3_SUBHEADER_LEN
    } else {
        ERSPAN3_LEN
    };
    if b.len() < len {
        return Err(DecodeEvent::ErspanHeaderTooSmall);
    }
    Ok(len)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version0_with_key_and_seq() {
        let b = [0x30, 0x00, 0x08, 0x00, 0, 0, 0, 1, 0, 0, 0, 2, 0x45];
        let h = parse(&b).unwrap();
        assert_eq!(
            (h.version, h.protocol, h.len, h.has_seq),
            (0, 0x0800, 12, true)
        );
        assert_eq!(parse(&b[..8]), Err(DecodeEvent::GreVersion0HdrTooBig));
        assert_eq!(parse(&b[..3]), Err(DecodeEvent::GrePktTooSmall));
    }

    #[test]
    fn version_checks() {
        assert_eq!(parse(&[0, 0x02, 8, 0]), Err(DecodeEvent::GreWrongVersion));
        assert_eq!(parse(&[0x01, 0, 8, 0]), Err(DecodeEvent::GreVersion0Recur));
        assert_eq!(parse(&[0, 0x08, 8, 0]), Err(DecodeEvent::GreVersion0Flags));
        let sre = [0x40, 0, 8, 0, 0, 0, 0, 0];
        assert_eq!(parse(&sre), Err(DecodeEvent::GreVersion0MalformedSreHdr));
        // PPTP: key present, PPP, with an acknowledgment number.
        let pptp = [0x30, 0x81, 0x88, 0x0b, 0, 4, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1];
        let h = parse(&pptp).unwrap();
        assert_eq!((h.version, h.len), (1, 16));
        assert_eq!(
            parse(&[0x00, 0x01, 0x88, 0x0b, 0, 0, 0, 0]),
            Err(DecodeEvent::GreVersion1NoKey)
        );
        assert_eq!(
            parse(&[0x20, 0x01, 0x08, 0x00, 0, 0, 0, 0]),
            Err(DecodeEvent::GreVersion1WrongProtocol)
        );
        assert_eq!(
            parse(&[0x80, 0x01, 0x88, 0x0b]),
            Err(DecodeEvent::GreVersion1Chksum)
        );
        assert_eq!(
            parse(&[0x20, 0x01, 0x88, 0x0b, 0, 0]),
            Err(DecodeEvent::GreVersion1HdrTooBig)
        );
    }

    #[test]
    fn erspan_headers() {
        assert_eq!(erspan2_len(&[0x10, 0, 0, 0, 0, 0, 0, 0]), Ok(8));
        assert_eq!(
            erspan2_len(&[0x20, 0, 0, 0, 0, 0, 0, 0]),
            Err(DecodeEvent::ErspanUnsupportedVersion)
        );
        assert_eq!(erspan2_len(&[0x10]), Err(DecodeEvent::ErspanHeaderTooSmall));
        let mut e3 = [0u8; 20];
        e3[0] = 0x20;
        assert_eq!(erspan3_len(&e3[..12]), Ok(12));
        e3[11] = 1;
        assert_eq!(erspan3_len(&e3), Ok(20));
        assert_eq!(
            erspan3_len(&e3[..12]),
            Err(DecodeEvent::ErspanHeaderTooSmall)
        );
    }
}
