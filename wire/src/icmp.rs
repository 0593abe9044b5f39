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

/// ICMPv4 destination unreachable.
pub const DEST_UNREACH: u8 = 3;
/// The highest destination-unreachable code (RFC 1812: 15, precedence cutoff).
const MAX_UNREACH_CODE: u8 = 15;

/// Whether an ICMPv4 type is an error message (destination unreachable, source quench,
/// redirect, time exceeded, parameter problem): a report about another packet, which
/// starts no flow of its own.
pub fn is_v4_error(icmp_type: u8) -> bool {
    matches!(icmp_type, 3 | 4 | 5 | 11 | 12)
}

/// The type that answers `icmp_type` (echo request and reply, ...), or the type it
/// answers; `None` for types without a pair. An ICMP flow is the messages of one such
/// pair between two hosts.
pub fn counterpart(icmp_type: u8, v6: bool) -> Option<u8> {
    const V4: [(u8, u8); 5] = [(8, 0), (13, 14), (15, 16), (10, 9), (17, 18)];
    const V6: [(u8, u8); 10] = [
        (128, 129),
        (135, 136),
        (133, 134),
        (130, 131),
        (139, 140),
        (144, 145),
        (146, 147),
        (148, 149),
        (151, 152),
        (157, 158),
    ];
    let pairs: &[(u8, u8)] = if v6 { &V6 } else { &V4 };
    pairs.iter().find_map(|&(a, b)| {
        if a == icmp_type {
            Some(b)
        } else if b == icmp_type {
            Some(a)
        } else {
            None
        }
    })
}

/// The TCP or UDP packet an ICMPv4 error message reports on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reported {
    pub proto: u8,
    pub src: [u8; 4],
    pub src_port: u16,
    pub dst: [u8; 4],
    pub dst_port: u16,
}

/// The TCP or UDP packet an ICMPv4 destination-unreachable message (`payload`: what
/// follows its 8-byte header) reports on. As Suricata reads it: an IPv4 header taken as 20 bytes, then at
/// least the ports of a TCP header, or a whole UDP header; `None` otherwise (and for
/// codes above 15).
pub fn unreachable_flow(code: u8, payload: &[u8]) -> Option<Reported> {
    if code > MAX_UNREACH_CODE || payload.len() < 20 || payload[0] >> 4 != 4 {
        return None;
    }
    let proto = payload[9];
    let need = match proto {
        crate::PROTO_TCP => 24,
        crate::PROTO_UDP => 28,
        _ => return None,
    };
    if payload.len() < need {
        return None;
    }
    let addr = |o: usize| [payload[o], payload[o + 1], payload[o + 2], payload[o + 3]];
    let port = |o: usize| u16::from_be_bytes([payload[o], payload[o + 1]]);
    Some(Reported {
        proto,
        src: addr(12),
        src_port: port(20),
        dst: addr(16),
        dst_port: port(22),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unreachable_reports_name_the_udp_or_tcp_packet() {
        let mut ip = vec![0x45, 0, 0, 28, 0, 0, 0, 0, 64, 17, 0, 0];
        ip.extend_from_slice(&[10, 0, 0, 1, 10, 0, 0, 2]);
        ip.extend_from_slice(&[0x12, 0x34, 0, 53, 0, 8, 0, 0]);
        let r = |proto| Reported {
            proto,
            src: [10, 0, 0, 1],
            src_port: 0x1234,
            dst: [10, 0, 0, 2],
            dst_port: 53,
        };
        assert_eq!(unreachable_flow(3, &ip), Some(r(17)));
        assert_eq!(unreachable_flow(16, &ip), None);
        // A UDP header cut short, an IPv6 header.
        assert_eq!(unreachable_flow(3, &ip[..27]), None);
        ip[0] = 0x60;
        assert_eq!(unreachable_flow(3, &ip), None);
        // TCP needs only its ports.
        ip[0] = 0x45;
        ip[9] = 6;
        assert_eq!(unreachable_flow(3, &ip[..24]), Some(r(6)));
    }

    #[test]
    fn request_and_reply_types_pair() {
        assert_eq!(counterpart(8, false), Some(0));
        assert_eq!(counterpart(0, false), Some(8));
        assert_eq!(counterpart(3, false), None);
        assert_eq!(counterpart(129, true), Some(128));
        assert_eq!(counterpart(8, true), None);
    }

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
