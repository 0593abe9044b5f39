//! UDP headers (RFC 768).

use super::DecodeEvent;

pub const HEADER_LEN: usize = 8;

/// A read-only view of a UDP datagram whose length field is checked.
#[derive(Debug, Clone, Copy)]
pub struct Datagram<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Datagram<T> {
    /// Errors as Suricata names them: fewer bytes than a header (`hlen_too_small`), a
    /// length field past the data (`pkt_too_small`), a length field below the header's
    /// size (`len_invalid`).
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, DecodeEvent> {
        let b = buf.as_ref();
        if b.len() < HEADER_LEN {
            return Err(DecodeEvent::UdpHlenTooSmall);
        }
        let len = usize::from(u16::from_be_bytes([b[4], b[5]]));
        if len > b.len() {
            return Err(DecodeEvent::UdpPktTooSmall);
        }
        if len < HEADER_LEN {
            return Err(DecodeEvent::UdpLenInvalid);
        }
        Ok(Datagram { buf })
    }
    #[inline]
    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }
    #[inline]
    pub fn src_port(&self) -> u16 {
        u16::from_be_bytes([self.b()[0], self.b()[1]])
    }
    #[inline]
    pub fn dst_port(&self) -> u16 {
        u16::from_be_bytes([self.b()[2], self.b()[3]])
    }
    #[inline]
    pub fn len(&self) -> usize {
        usize::from(u16::from_be_bytes([self.b()[4], self.b()[5]]))
    }
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == HEADER_LEN
    }
    #[inline]
    pub fn checksum(&self) -> u16 {
        u16::from_be_bytes([self.b()[6], self.b()[7]])
    }
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[HEADER_LEN..self.len()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_errors() {
        let s = "10.0.0.1".parse().unwrap();
        let d = "10.0.0.2".parse().unwrap();
        let b = meerkat_synth::packet::udp(s, d, 53000, 53, b"abc");
        let v = Datagram::new_checked(&b[..]).unwrap();
        assert_eq!((v.src_port(), v.dst_port(), v.len()), (53000, 53, 11));
        assert_eq!(v.payload(), b"abc");
        assert_eq!(
            Datagram::new_checked(&b[..7]).err(),
            Some(DecodeEvent::UdpHlenTooSmall)
        );
        assert_eq!(
            Datagram::new_checked(&b[..10]).err(),
            Some(DecodeEvent::UdpPktTooSmall)
        );
        let mut short = b.clone();
        short[4..6].copy_from_slice(&5u16.to_be_bytes());
        assert_eq!(
            Datagram::new_checked(&short[..]).err(),
            Some(DecodeEvent::UdpLenInvalid)
        );
    }
}
