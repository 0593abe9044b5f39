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
    #[inline]
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
    #[inline]
    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }
    #[inline]
    pub fn traffic_class(&self) -> u8 {
        let b = self.b();
        (b[0] << 4) | (b[1] >> 4)
    }
    #[inline]
    pub fn flow_label(&self) -> u32 {
        let b = self.b();
        (u32::from(b[1] & 0x0f) << 16) | (u32::from(b[2]) << 8) | u32::from(b[3])
    }
    #[inline]
    pub fn payload_len(&self) -> usize {
        let b = self.b();
        usize::from(u16::from_be_bytes([b[4], b[5]]))
    }
    #[inline]
    pub fn next_header(&self) -> u8 {
        self.b()[6]
    }
    #[inline]
    pub fn hop_limit(&self) -> u8 {
        self.b()[7]
    }
    #[inline]
    pub fn src(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.b()[8..24]);
        Ipv6Addr::from(a)
    }
    #[inline]
    pub fn dst(&self) -> Ipv6Addr {
        let mut a = [0u8; 16];
        a.copy_from_slice(&self.b()[24..40]);
        Ipv6Addr::from(a)
    }
    /// Everything after the fixed header, up to the payload length.
    #[inline]
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
/// Non-fatal anomalies are added to `events` (bits of [`DecodeEvent::bit`]) as
/// Suricata's decoder raises them: a second fragment header is skipped
/// (`exthdr_dupl_fh`), a fragment header saying "offset 0, no more fragments" is skipped
/// and the packet decoded as a whole one (`exthdr_useless_fh`), a non-last fragment
/// whose data is not a multiple of 8 bytes is flagged (`frag_invalid_length`), and fewer
/// than 2 bytes after an extension header are a truncation (`trunc_exthdr`).
pub fn skip_extensions(
    mut next: u8,
    payload: &[u8],
    events: &mut crate::EventSet,
) -> Result<UpperLayer, DecodeEvent> {
    let mut pos = 0;
    let mut fragment = None;
    let mut fh_seen = false;
    for walked in 0..MAX_EXT_HEADERS {
        if walked > 0 && next != NH_NONE && payload.len().saturating_sub(pos) < 2 {
            return Err(DecodeEvent::Ipv6ExthdrTrunc);
        }
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
                next = h[0];
                pos += 8;
                if fh_seen {
                    *events |= DecodeEvent::Ipv6ExthdrDuplFh.bit();
                    continue;
                }
                fh_seen = true;
                let off_flags = u16::from_be_bytes([h[2], h[3]]);
                let f = Fragment {
                    offset: usize::from(off_flags >> 3) * 8,
                    more: off_flags & 1 != 0,
                    ident: u32::from_be_bytes([h[4], h[5], h[6], h[7]]),
                };
                if f.offset == 0 && !f.more {
                    // A whole datagram in one "fragment": decoded as it is.
                    *events |= DecodeEvent::Ipv6ExthdrUselessFh.bit();
                    continue;
                }
                if f.more && !(payload.len() - pos).is_multiple_of(8) {
                    *events |= DecodeEvent::Ipv6FragInvalidLength.bit();
                }
                fragment = Some(f);
                // What follows a non-first fragment is not a header.
                if f.offset != 0 {
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
        let mut ev = 0;
        let u = skip_extensions(NH_HOPOPTS, &payload, &mut ev).unwrap();
        // More fragments follow a 2-byte fragment: not a multiple of 8.
        assert_eq!(ev, DecodeEvent::Ipv6FragInvalidLength.bit());
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
            skip_extensions(NH_HOPOPTS, &payload[..5], &mut ev).err(),
            Some(DecodeEvent::Ipv6ExthdrTrunc)
        );
    }

    fn frag_header(next: u8, offset: usize, more: bool) -> [u8; 8] {
        let of = ((offset / 8) as u16) << 3 | u16::from(more);
        let [a, b] = of.to_be_bytes();
        [next, 0, a, b, 0, 0, 0, 9]
    }

    #[test]
    fn fragment_header_anomalies() {
        // Offset 0 without more fragments: useless, the packet is whole.
        let mut p = frag_header(17, 0, false).to_vec();
        p.extend_from_slice(&[0; 8]);
        let mut ev = 0;
        let u = skip_extensions(NH_FRAGMENT, &p, &mut ev).unwrap();
        assert_eq!((u.protocol, u.offset, u.fragment), (17, 8, None));
        assert_eq!(ev, DecodeEvent::Ipv6ExthdrUselessFh.bit());

        // A second fragment header after a useless one: duplicated.
        let mut p = frag_header(NH_FRAGMENT, 0, false).to_vec();
        p.extend_from_slice(&frag_header(58, 0, false));
        p.extend_from_slice(&[0; 8]);
        let mut ev = 0;
        let u = skip_extensions(NH_FRAGMENT, &p, &mut ev).unwrap();
        assert_eq!((u.protocol, u.offset), (58, 16));
        assert_eq!(
            ev,
            DecodeEvent::Ipv6ExthdrUselessFh.bit() | DecodeEvent::Ipv6ExthdrDuplFh.bit()
        );

        // More fragments follow but this one's data is not a multiple of 8.
        let mut p = frag_header(17, 8, true).to_vec();
        p.extend_from_slice(&[0; 13]);
        let mut ev = 0;
        let u = skip_extensions(NH_FRAGMENT, &p, &mut ev).unwrap();
        assert!(u.fragment.is_some_and(|f| f.more && f.offset == 8));
        assert_eq!(ev, DecodeEvent::Ipv6FragInvalidLength.bit());

        // Nothing after a useless fragment header: a truncated chain.
        let p = frag_header(58, 0, false);
        let mut ev = 0;
        assert_eq!(
            skip_extensions(NH_FRAGMENT, &p, &mut ev).err(),
            Some(DecodeEvent::Ipv6ExthdrTrunc)
        );
        assert_eq!(ev, DecodeEvent::Ipv6ExthdrUselessFh.bit());
    }
}
