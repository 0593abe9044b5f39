//! TCP headers (RFC 9293).

use super::DecodeEvent;

pub const MIN_HEADER_LEN: usize = 20;

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const URG: u8 = 0x20;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// A read-only view of a TCP segment whose header length is checked.
#[derive(Debug, Clone, Copy)]
pub struct Segment<T: AsRef<[u8]>> {
    buf: T,
}

#[inline]
fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}
#[inline]
fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

impl<T: AsRef<[u8]>> Segment<T> {
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, DecodeEvent> {
        let b = buf.as_ref();
        if b.len() < MIN_HEADER_LEN {
            return Err(DecodeEvent::TcpPktTooSmall);
        }
        let hlen = usize::from(b[12] >> 4) * 4;
        if hlen < MIN_HEADER_LEN {
            return Err(DecodeEvent::TcpHlenTooSmall);
        }
        if b.len() < hlen {
            return Err(DecodeEvent::TcpInvalidOptlen);
        }
        Ok(Segment { buf })
    }
    #[inline]
    fn b(&self) -> &[u8] {
        self.buf.as_ref()
    }
    #[inline]
    pub fn src_port(&self) -> u16 {
        be16(self.b(), 0)
    }
    #[inline]
    pub fn dst_port(&self) -> u16 {
        be16(self.b(), 2)
    }
    #[inline]
    pub fn seq(&self) -> u32 {
        be32(self.b(), 4)
    }
    #[inline]
    pub fn ack(&self) -> u32 {
        be32(self.b(), 8)
    }
    #[inline]
    pub fn header_len(&self) -> usize {
        usize::from(self.b()[12] >> 4) * 4
    }
    /// The 8 flag bits (CWR..FIN).
    #[inline]
    pub fn flags(&self) -> u8 {
        self.b()[13]
    }
    #[inline]
    pub fn window(&self) -> u16 {
        be16(self.b(), 14)
    }
    #[inline]
    pub fn checksum(&self) -> u16 {
        be16(self.b(), 16)
    }
    #[inline]
    pub fn urgent(&self) -> u16 {
        be16(self.b(), 18)
    }
    #[inline]
    pub fn options(&self) -> &[u8] {
        &self.b()[MIN_HEADER_LEN..self.header_len()]
    }
    #[inline]
    pub fn payload(&self) -> &[u8] {
        &self.b()[self.header_len()..]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::packet::{TcpHeader, tcp};

    #[test]
    fn fields() {
        let s = "10.0.0.1".parse().unwrap();
        let d = "10.0.0.2".parse().unwrap();
        let h = TcpHeader {
            src_port: 1000,
            dst_port: 80,
            seq: 7,
            ack: 9,
            flags: SYN,
            window: 512,
        };
        let b = tcp(s, d, &h, b"xy");
        let v = Segment::new_checked(&b[..]).unwrap();
        assert_eq!(
            (v.src_port(), v.dst_port(), v.seq(), v.ack()),
            (1000, 80, 7, 9)
        );
        assert_eq!(v.flags(), SYN);
        assert_eq!(v.header_len(), 24); // MSS option on SYN
        assert_eq!(v.options(), &[2, 4, 5, 0xb4]);
        assert_eq!(v.payload(), b"xy");
        assert_eq!(
            Segment::new_checked(&b[..22]).err(),
            Some(DecodeEvent::TcpInvalidOptlen)
        );
        let mut short = b.clone();
        short[12] = 0x40;
        assert_eq!(
            Segment::new_checked(&short[..]).err(),
            Some(DecodeEvent::TcpHlenTooSmall)
        );
    }
}
