//! IPv6 headers (RFC 8200) and the extension-header chain.

use std::net::Ipv6Addr;

use super::DecodeEvent;

pub const HEADER_LEN: usize = 40;
/// Extension headers followed before giving up.
pub const MAX_EXT_HEADERS: usize = 16;

pub const NH_HOPOPTS: u8 = 0;
pub const NH_ROUTING: u8 = 43;
pub const NH_FRAGMENT: u8 = 44;
pub const NH_ESP: u8 = 50;
pub const NH_AH: u8 = 51;
pub const NH_NONE: u8 = 59;
pub const NH_DSTOPTS: u8 = 60;

/// A read-only view of an IPv6 packet whose header and payload length are checked.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    pub fn new_checked(buf: T) -> Result<Self, DecodeEvent> {
        let b = buf.as_ref();
        if b.len() < HEADER_LEN {
            return Err(DecodeEvent::Ipv6PktTooSmall);
        }
        if b[0] >> 4 != 6 {
            return Err(DecodeEvent::Ipv6WrongIpVersion);
        }
        let plen = usize::from(u16::from_be_bytes([b[4], b[5]]));
        if b.len() < HEADER_LEN + plen {
            return Err(DecodeEvent::Ipv6TruncPkt);
        }
        Ok(Packet { buf })
    }
    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }
    pub fn traffic_class(&self) -> u8 {
        let b = self.b();
        (b[0] << 4) | (b[1] >> 4)
    }
    pub fn flow_label(&self) -> u32 {
        let b = self.b();
        (u32::from(b[1] & 0x0f) << 16) | (u32::from(b[2]) << 8) | u32::from(b[3])
    }
    pub fn payload_len(&self) -> usize {
        let b = self.b();
        usize::from(u16::from_be_bytes([b[4], b[5]]))
    }
    pub fn next_header(&self) -> u8 {
        self.b()[6]
    }
    pub fn hop_limit(&self) -> u8 {
        self.b()[7]
    }
    pub fn src(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.b()[8..24]);
        Ipv6Addr::from(a)
    }
    pub fn dst(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.b()[24..40]);
        Ipv6Addr::from(a)
    }
    /// Everything after the fixed header, up to the payload length.
    pub fn payload(&self) -> &[u8] {
        &self.b()[HEADER_LEN..HEADER_LEN + self.payload_len()]
    }
}

/// A fragment header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fragment {
    /// Offset in bytes.
    pub offset: usize,
    pub more: bool,
    pub ident: u32,
}

/// Where the upper layer starts after the extension headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpperLayer {
    /// Protocol of the upper layer (or of the fragment's contents).
    pub protocol: u8,
    /// Offset in the IPv6 payload.
    pub offset: usize,
    pub fragment: Option<Fragment>,
}

/// Follows the extension-header chain of `payload` (the bytes after the fixed header).
pub fn skip_extensions(mut next: u8, payload: &[u8]) -> Result<UpperLayer, DecodeEvent> {
    let mut pos = 0;
    let mut fragment = None;
    for _ in 0..MAX_EXT_HEADERS {
        match next {
            NH_HOPOPTS | NH_ROUTING | NH_DSTOPTS => {
                let h = payload
                    .get(pos..pos + 2)
                    .ok_or(DecodeEvent::Ipv6ExthdrTrunc)?;
                let len = (usize::from(h[1]) + 1) * 8;
                if payload.len() < pos + len {
                    return Err(DecodeEvent::Ipv6ExthdrTrunc);
                }
                next = h[0];
                pos += len;
            }
            NH_AH => {
                let h = payload
                    .get(pos..pos + 2)
                    .ok_or(DecodeEvent::Ipv6ExthdrTrunc)?;
                let len = (usize::from(h[1]) + 2) * 4;
                if payload.len() < pos + len {
                    return Err(DecodeEvent::Ipv6ExthdrTrunc);
                }
                next = h[0];
                pos += len;
            }
            NH_FRAGMENT => {
                let h = payload
                    .get(pos..pos + 8)
                    .ok_or(DecodeEvent::Ipv6ExthdrTrunc)?;
                let off_flags = u16::from_be_bytes([h[2], h[3]]);
                fragment = Some(Fragment {
                    offset: usize::from(off_flags >> 3) * 8,
                    more: off_flags & 1 != 0,
                    ident: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
                });
                next = h[0];
                pos += 8;
                // What follows a non-first fragment is not a header.
                if fragment.is_some_and(|f| f.offset != 0) {
                    break;
                }
            }
            _ => {
                return Ok(UpperLayer {
                    protocol: next,
                    offset: pos,
                    fragment,
                });
            }
        }
    }
    if fragment.is_some() {
        return Ok(UpperLayer {
            protocol: next,
            offset: pos,
            fragment,
        });
    }
    Err(DecodeEvent::Ipv6ExthdrTooMany)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_header() {
        let p = meerkat_synth::packet::ipv6([0x20; 16], [0x30; 16], 17, 9, &[1, 2, 3]);
        let v = Packet::new_checked(&p[..]).unwrap();
        assert_eq!(v.next_header(), 17);
        assert_eq!(v.hop_limit(), 9);
        assert_eq!(v.payload(), &[1, 2, 3]);
        assert_eq!(v.src().octets(), [0x20; 16]);
        assert_eq!(
            Packet::new_checked(&p[..42]).err(),
            Some(DecodeEvent::Ipv6TruncPkt)
        );
    }

    #[test]
    fn extension_chain() {
        // Hop-by-hop (8 bytes, next = fragment), fragment (offset 0, M=1, next = UDP).
        let payload = [
            NH_FRAGMENT,
            0,
            0,
            0,
            0,
            0,
            0,
            0, //
            17,
            0,
            0x00,
            0x01,
            0,
            0,
            0,
            7, //
            0xde,
            0xad,
        ];
        let u = skip_extensions(NH_HOPOPTS, &payload).unwrap();
        assert_eq!(u.protocol, 17);
        assert_eq!(u.offset, 16);
        assert_eq!(
            u.fragment,
            Some(Fragment {
                offset: 0,
                more: true,
                ident: 7
            })
        );
        assert_eq!(
            skip_extensions(NH_HOPOPTS, &payload[..5]).err(),
            Some(DecodeEvent::Ipv6ExthdrTrunc)
        );
    }
}
