//! IPv4 headers (RFC 791).

use std::net::Ipv4Addr;

use super::DecodeEvent;

pub const MIN_HEADER_LEN: usize = 20;

mod field {
    use std::ops::Range;
    pub const VER_IHL: usize = 0;
    pub const TOS: usize = 1;
    pub const LENGTH: Range<usize> = 2..4;
    pub const IDENT: Range<usize> = 4..6;
    pub const FLAGS_FRAG: Range<usize> = 6..8;
    pub const TTL: usize = 8;
    pub const PROTOCOL: usize = 9;
    pub const CHECKSUM: Range<usize> = 10..12;
    pub const SRC: Range<usize> = 12..16;
    pub const DST: Range<usize> = 16..20;
}

/// A read-only view of an IPv4 packet whose header and total length are checked.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buf: T,
}

#[inline]
fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Checks version, header length and total length against the buffer.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, DecodeEvent> {
        let b = buf.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(DecodeEvent::Ipv4PktTooSmall);
        }
        if b[field::VER_IHL] >> 4 != 4 {
            return Err(DecodeEvent::Ipv4WrongIpVersion);
        }
        let hlen = usize::from(b[field::VER_IHL] & 0x0f) * 4;
        if hlen < MIN_HEADER_LEN {
            return Err(DecodeEvent::Ipv4HlenTooSmall);
        }
        let total = usize::from(be16(&b[field::LENGTH]));
        if total < hlen {
            return Err(DecodeEvent::Ipv4IplenSmallerThanHlen);
        }
        if b.len() < total || b.len() < hlen {
            return Err(DecodeEvent::Ipv4TruncPkt);
        }
        Ok(Packet { buf })
    }

    #[inline]
    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[field::VER_IHL] & 0x0f) * 4
    }
    #[inline]
    pub fn tos(&self) -> u8 {
        self.b()[field::TOS]
    }
    #[inline]
    pub fn total_len(&self) -> usize {
        usize::from(be16(&self.b()[field::LENGTH]))
    }
    #[inline]
    pub fn ident(&self) -> u16 {
        be16(&self.b()[field::IDENT])
    }
    #[inline]
    pub fn dont_frag(&self) -> bool {
        self.b()[field::FLAGS_FRAG.start] & 0x40 != 0
    }
    #[inline]
    pub fn more_frags(&self) -> bool {
        self.b()[field::FLAGS_FRAG.start] & 0x20 != 0
    }
    #[inline]
    pub fn reserved_flag(&self) -> bool {
        self.b()[field::FLAGS_FRAG.start] & 0x80 != 0
    }
    /// Fragment offset in bytes.
    #[inline]
    pub fn frag_offset(&self) -> usize {
        usize::from(be16(&self.b()[field::FLAGS_FRAG]) & 0x1fff) * 8
    }
    #[inline]
    pub fn ttl(&self) -> u8 {
        self.b()[field::TTL]
    }
    #[inline]
    pub fn protocol(&self) -> u8 {
        self.b()[field::PROTOCOL]
    }
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(&self.b()[field::CHECKSUM])
    }
    #[inline]
    pub fn src(&self) -> Ipv4Addr {
        let s = &self.b()[field::SRC];
        Ipv4Addr::new(s[0], s[1], s[2], s[3])
    }
    #[inline]
    pub fn dst(&self) -> Ipv4Addr {
        let s = &self.b()[field::DST];
        Ipv4Addr::new(s[0], s[1], s[2], s[3])
    }
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.b()[MIN_HEADER_LEN..self.header_len()]
    }
    /// The bytes after the header, up to the total length (trailing link padding cut).
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..self.total_len()]
    }
    /// Whether the header checksum verifies.
    #[inline]
    pub fn checksum_ok(&self) -> bool {
        super::checksum::fold(super::checksum::sum(&self.b()[..self.header_len()], 0)) == 0xffff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 45 00 0020 1234 4000 40 11 cs 0a000001 0a000002 + 12 payload bytes
    fn sample() -> Vec<u8> {
        meerkat_synth::packet::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, 64, 0x1234, &[0xaa; 12])
    }

    #[test]
    fn fields() {
        let mut b = sample();
        b.extend_from_slice(&[0, 0, 0, 0]); // Ethernet padding after the datagram
        let p = Packet::new_checked(&b[..]).unwrap();
        assert_eq!(p.header_len(), 20);
        assert_eq!(p.total_len(), 32);
        assert_eq!(p.ident(), 0x1234);
        assert!(p.dont_frag());
        assert_eq!(p.ttl(), 64);
        assert_eq!(p.protocol(), 17);
        assert_eq!(p.src(), Ipv4Addr::new(10, 0, 0, 1));
        assert_eq!(p.payload(), &[0xaa; 12]);
        assert!(p.checksum_ok());
    }

    #[test]
    fn malformed() {
        let b = sample();
        assert_eq!(
            Packet::new_checked(&b[..19]).err(),
            Some(DecodeEvent::Ipv4PktTooSmall)
        );
        assert_eq!(
            Packet::new_checked(&b[..30]).err(),
            Some(DecodeEvent::Ipv4TruncPkt)
        );
        let mut v = b.clone();
        v[0] = 0x65;
        assert_eq!(
            Packet::new_checked(&v[..]).err(),
            Some(DecodeEvent::Ipv4WrongIpVersion)
        );
        let mut h = b.clone();
        h[0] = 0x44;
        assert_eq!(
            Packet::new_checked(&h[..]).err(),
            Some(DecodeEvent::Ipv4HlenTooSmall)
        );
        let mut l = b;
        l[2] = 0;
        l[3] = 10;
        assert_eq!(
            Packet::new_checked(&l[..]).err(),
            Some(DecodeEvent::Ipv4IplenSmallerThanHlen)
        );
    }
}
