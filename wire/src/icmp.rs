//! ICMP (RFC 792) and ICMPv6 (RFC 4443) headers: type, code, checksum and the 4 bytes
//! that echo messages use for identifier and sequence.

use super::DecodeEvent;

pub const HEADER_LEN: usize = 8;

#[derive(Debug, Clone, Copy)]
pub struct Message<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Message<T> {
    #[inline]
    pub fn new_checked(buf: T, v6: bool) -> Result<Self, DecodeEvent> {
        if buf.as_ref().len() < HEADER_LEN {
            return Err(if v6 {
                DecodeEvent::Icmpv6PktTooSmall
            } else {
                DecodeEvent::Icmpv4PktTooSmall
            });
        }
        Ok(Message { buf })
    }
    #[inline]
    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }
    #[inline]
    pub fn icmp_type(&self) -> u8 {
        self.b()[0]
    }
    #[inline]
    pub fn code(&self) -> u8 {
        self.b()[1]
    }
    #[inline]
    pub fn checksum(&self) -> u16 {
        u16::from_be_bytes([self.b()[2], self.b()[3]])
    }
    /// Identifier of echo messages (bytes 4..6).
    #[inline]
    pub fn ident(&self) -> u16 {
        u16::from_be_bytes([self.b()[4], self.b()[5]])
    }
    /// Sequence number of echo messages (bytes 6..8).
    #[inline]
    pub fn seq(&self) -> u16 {
        u16::from_be_bytes([self.b()[6], self.b()[7]])
    }
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[HEADER_LEN..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn echo_fields() {
        let m = meerkat_synth::packet::icmpv4(8, 0, 0x1234, 7, b"ping");
        let v = Message::new_checked(&m[..], false).unwrap();
        assert_eq!(
            (v.icmp_type(), v.code(), v.ident(), v.seq()),
            (8, 0, 0x1234, 7)
        );
        assert_eq!(v.payload(), b"ping");
        assert_eq!(
            Message::new_checked(&m[..7], true).err(),
            Some(DecodeEvent::Icmpv6PktTooSmall)
        );
    }
}
