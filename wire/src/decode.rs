//! Decoding a whole packet: [`decode`] walks the layers of a frame (link, IP with its
//! extension headers, transport) with the views of this crate and fills a [`Packet`].
//!
//! The names the detect crate used from its `decode` module (the events, the link types,
//! the VLAN limit) are re-exported here too.

use std::net::{IpAddr, Ipv4Addr};

pub use crate::DecodeEvent;
pub use crate::ethernet::MAX_VLAN_LAYERS;
pub use crate::link::{
    LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL, LINKTYPE_NULL,
    LINKTYPE_RAW, LINKTYPE_RAW_BSD, LINKTYPE_RAW_OPENBSD,
};
use crate::{checksum, ethernet, icmp, ipv4, ipv6, link, tcp, udp};

pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_ICMPV6: u8 = 58;

/// IP fragment information.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Fragment {
    /// Offset of this fragment's data in the datagram, bytes.
    pub offset: usize,
    pub more: bool,
    pub ident: u32,
}

/// The network layer of a decoded packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IpInfo {
    /// 4 or 6.
    pub version: u8,
    pub src: IpAddr,
    pub dst: IpAddr,
    /// Upper-layer protocol (after IPv6 extension headers).
    pub proto: u8,
    /// TTL or hop limit.
    pub ttl: u8,
    /// TOS or traffic class.
    pub tos: u8,
    /// IPv4 identification (0 for IPv6 unless fragmented).
    pub ident: u32,
    /// Offset of the IP header in the frame.
    pub offset: usize,
    /// Length of the IP header (IPv6: fixed header plus extension headers).
    pub header_len: usize,
    /// End of the datagram in the frame (link-layer padding excluded).
    pub end: usize,
    pub fragment: Option<Fragment>,
}

/// The transport layer of a decoded packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum L4 {
    #[default]
    None,
    Tcp {
        src_port: u16,
        dst_port: u16,
        seq: u32,
        ack: u32,
        flags: u8,
        window: u16,
        /// Offset of the TCP header in the frame.
        offset: usize,
        header_len: usize,
    },
    Udp {
        src_port: u16,
        dst_port: u16,
        offset: usize,
    },
    Icmp {
        icmp_type: u8,
        code: u8,
        ident: u16,
        seq: u16,
        offset: usize,
        v6: bool,
    },
    /// Another protocol over IP (or a non-first fragment).
    Other,
}

/// A decoded packet: a summary of its layers borrowing the frame.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    pub link_type: u16,
    pub frame: &'a [u8],
    pub vlan: [u16; MAX_VLAN_LAYERS],
    pub vlan_len: u8,
    pub ip: Option<IpInfo>,
    pub l4: L4,
    /// Transport payload (or the IP payload for other protocols); empty when none.
    pub payload: &'a [u8],
    /// Offset of `payload` in the frame.
    pub payload_offset: usize,
    /// Decoder (and defrag) events raised on this packet: bits of [`DecodeEvent::bit`],
    /// the fatal one included (for `decode-event` rules).
    pub events: u64,
    /// Decoding stopped at an error: only `decode-event` rules inspect the packet.
    pub invalid: bool,
}

impl<'a> Packet<'a> {
    #[inline]
    pub fn empty(link_type: u16, frame: &'a [u8]) -> Packet<'a> {
        Packet {
            link_type,
            frame,
            vlan: [0; MAX_VLAN_LAYERS],
            vlan_len: 0,
            ip: None,
            l4: L4::None,
            payload: &[],
            payload_offset: 0,
            events: 0,
            invalid: false,
        }
    }

    /// Records a (non-fatal) event on the packet.
    #[inline]
    pub fn set_event(&mut self, ev: DecodeEvent) {
        self.events |= ev.bit();
    }

    #[inline]
    pub fn has_event(&self, ev: DecodeEvent) -> bool {
        self.events & ev.bit() != 0
    }

    #[inline]
    pub fn vlans(&self) -> &[u16] {
        &self.vlan[..usize::from(self.vlan_len)]
    }

    /// Source and destination ports (0 when the protocol has none).
    #[inline]
    pub fn ports(&self) -> (u16, u16) {
        match self.l4 {
            L4::Tcp {
                src_port, dst_port, ..
            }
            | L4::Udp {
                src_port, dst_port, ..
            } => (src_port, dst_port),
            _ => (0, 0),
        }
    }

    #[inline]
    pub fn proto(&self) -> u8 {
        self.ip.map(|i| i.proto).unwrap_or(0)
    }

    #[inline]
    pub fn tcp_flags(&self) -> Option<u8> {
        match self.l4 {
            L4::Tcp { flags, .. } => Some(flags),
            _ => None,
        }
    }

    /// The IP datagram bytes (header included), if any.
    #[inline]
    pub fn ip_bytes(&self) -> &'a [u8] {
        match self.ip {
            Some(ip) => &self.frame[ip.offset..ip.end],
            None => &[],
        }
    }

    /// Whether the transport (and IPv4 header) checksums verify; true for packets
    /// without one, and for fragments (checked after reassembly).
    pub fn checksums_ok(&self) -> bool {
        let Some(ip) = self.ip else {
            return true;
        };
        if ip.version == 4 {
            let hdr = &self.frame[ip.offset..ip.offset + ip.header_len];
            if checksum::fold(checksum::sum(hdr, 0)) != 0xffff {
                return false;
            }
        }
        if ip.fragment.is_some() {
            return true;
        }
        let l4 = &self.frame[ip.offset + ip.header_len..ip.end];
        match self.l4 {
            L4::Tcp { .. } => checksum::transport_ok(ip.src, ip.dst, PROTO_TCP, l4),
            L4::Udp { .. } => {
                // IPv4 UDP may omit the checksum (0).
                (ip.version == 4 && l4.get(6..8) == Some(&[0, 0]))
                    || checksum::transport_ok(ip.src, ip.dst, PROTO_UDP, l4)
            }
            L4::Icmp { v6: false, .. } => checksum::icmpv4_ok(l4),
            L4::Icmp { v6: true, .. } => checksum::transport_ok(ip.src, ip.dst, PROTO_ICMPV6, l4),
            _ => true,
        }
    }
}

/// Decodes `frame` of link type `link_type`. On error, `Packet` holds the layers decoded
/// before the bad one (for the anomaly record) and the event says what was wrong.
pub fn decode(link_type: u16, frame: &[u8]) -> (Packet<'_>, Option<DecodeEvent>) {
    let mut p = Packet::empty(link_type, frame);
    let ev = decode_into(&mut p).err();
    if let Some(e) = ev {
        p.set_event(e);
        p.invalid = true;
    }
    (p, ev)
}

fn decode_into(p: &mut Packet<'_>) -> Result<(), DecodeEvent> {
    let frame = p.frame;
    let l = link::parse(p.link_type, frame)?;
    p.vlan = l.vlan;
    p.vlan_len = l.vlan_len;
    let (ethertype, off) = (l.ethertype, l.offset);
    let rest = &frame[off.min(frame.len())..];
    match ethertype {
        ethernet::ETHERTYPE_IPV4 => decode_ipv4(p, off, rest),
        ethernet::ETHERTYPE_IPV6 => decode_ipv6(p, off, rest),
        // ARP and other link-layer protocols: nothing more to decode.
        _ => Ok(()),
    }
}

fn decode_ipv4(p: &mut Packet<'_>, off: usize, b: &[u8]) -> Result<(), DecodeEvent> {
    let v = ipv4::Packet::new_checked(b)?;
    let hlen = v.header_len();
    let frag_off = v.frag_offset();
    let fragment = (v.more_frags() || frag_off != 0).then_some(Fragment {
        offset: frag_off,
        more: v.more_frags(),
        ident: u32::from(v.ident()),
    });
    let ip = IpInfo {
        version: 4,
        src: IpAddr::V4(v.src()),
        dst: IpAddr::V4(v.dst()),
        proto: v.protocol(),
        ttl: v.ttl(),
        tos: v.tos(),
        ident: u32::from(v.ident()),
        offset: off,
        header_len: hlen,
        end: off + v.total_len(),
        fragment,
    };
    p.ip = Some(ip);
    decode_l4(
        p,
        off + hlen,
        v.payload(),
        v.protocol(),
        frag_off != 0,
        false,
    )
}

fn decode_ipv6(p: &mut Packet<'_>, off: usize, b: &[u8]) -> Result<(), DecodeEvent> {
    let v = ipv6::Packet::new_checked(b)?;
    let mut ip = IpInfo {
        version: 6,
        src: IpAddr::V6(v.src()),
        dst: IpAddr::V6(v.dst()),
        proto: v.next_header(),
        ttl: v.hop_limit(),
        tos: v.traffic_class(),
        ident: 0,
        offset: off,
        header_len: ipv6::HEADER_LEN,
        end: off + ipv6::HEADER_LEN + v.payload_len(),
        fragment: None,
    };
    let upper = ipv6::skip_extensions(v.next_header(), v.payload(), &mut p.events);
    let upper = match upper {
        Ok(u) => u,
        Err(e) => {
            p.ip = Some(ip);
            return Err(e);
        }
    };
    ip.proto = upper.protocol;
    ip.header_len = ipv6::HEADER_LEN + upper.offset;
    if let Some(f) = upper.fragment {
        ip.fragment = Some(Fragment {
            offset: f.offset,
            more: f.more,
            ident: f.ident,
        });
        ip.ident = f.ident;
    }
    p.ip = Some(ip);
    let payload = &v.payload()[upper.offset..];
    let later_fragment = upper.fragment.is_some_and(|f| f.offset != 0);
    decode_l4(
        p,
        off + ip.header_len,
        payload,
        upper.protocol,
        later_fragment,
        true,
    )
}

fn set_payload(p: &mut Packet<'_>, at: usize, len: usize) {
    p.payload_offset = at;
    p.payload = &p.frame[at..at + len];
}

fn decode_l4(
    p: &mut Packet<'_>,
    off: usize,
    b: &[u8],
    proto: u8,
    later_fragment: bool,
    v6: bool,
) -> Result<(), DecodeEvent> {
    if later_fragment {
        p.l4 = L4::Other;
        set_payload(p, off, b.len());
        return Ok(());
    }
    // A first fragment may hold only part of the transport header: decode what is there
    // after reassembly, not now.
    let first_fragment = p.ip.and_then(|i| i.fragment).is_some();
    match proto {
        PROTO_TCP => {
            let s = match tcp::Segment::new_checked(b) {
                Ok(s) => s,
                Err(_) if first_fragment => {
                    p.l4 = L4::Other;
                    set_payload(p, off, b.len());
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            p.l4 = L4::Tcp {
                src_port: s.src_port(),
                dst_port: s.dst_port(),
                seq: s.seq(),
                ack: s.ack(),
                flags: s.flags(),
                window: s.window(),
                offset: off,
                header_len: s.header_len(),
            };
            set_payload(p, off + s.header_len(), s.payload().len());
        }
        PROTO_UDP => {
            let d = match udp::Datagram::new_checked(b) {
                Ok(d) => d,
                Err(_) if first_fragment => {
                    p.l4 = L4::Other;
                    set_payload(p, off, b.len());
                    return Ok(());
                }
                Err(e) => return Err(e),
            };
            p.l4 = L4::Udp {
                src_port: d.src_port(),
                dst_port: d.dst_port(),
                offset: off,
            };
            set_payload(p, off + udp::HEADER_LEN, d.payload().len());
        }
        PROTO_ICMP | PROTO_ICMPV6 if (proto == PROTO_ICMPV6) == v6 => {
            let m = icmp::Message::new_checked(b, v6)?;
            p.l4 = L4::Icmp {
                icmp_type: m.icmp_type(),
                code: m.code(),
                ident: m.ident(),
                seq: m.seq(),
                offset: off,
                v6,
            };
            set_payload(p, off + icmp::HEADER_LEN, m.payload().len());
        }
        _ => {
            p.l4 = L4::Other;
            set_payload(p, off, b.len());
        }
    }
    Ok(())
}

/// The unspecified IPv4 address, for packets without IP.
pub const NO_ADDR: IpAddr = IpAddr::V4(Ipv4Addr::UNSPECIFIED);

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::packet;
    use meerkat_synth::session::{TcpSession, frame_ip};

    #[test]
    fn decodes_tcp_over_vlan_ipv6() {
        let mut s = TcpSession::new(
            "[2001:db8::1]:40000".parse().unwrap(),
            "[2001:db8::2]:80".parse().unwrap(),
            0,
        )
        .vlan(7);
        s.handshake().client_sends(b"GET / HTTP/1.0\r\n\r\n");
        let frames = s.into_frames();
        let (p, ev) = decode(LINKTYPE_ETHERNET, &frames[3].data);
        assert_eq!(ev, None);
        assert_eq!(p.vlans(), &[7]);
        let ip = p.ip.unwrap();
        assert_eq!(ip.version, 6);
        assert_eq!(ip.proto, PROTO_TCP);
        assert_eq!(p.ports(), (40000, 80));
        assert_eq!(p.payload, b"GET / HTTP/1.0\r\n\r\n");
        assert!(p.checksums_ok());
    }

    #[test]
    fn every_link_type_reaches_udp() {
        let s: IpAddr = "10.0.0.1".parse().unwrap();
        let d: IpAddr = "10.0.0.2".parse().unwrap();
        let u = packet::udp(s, d, 1234, 53, b"query");
        let ip = packet::ip(s, d, PROTO_UDP, 64, 1, &u);
        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&0x0800u16.to_be_bytes());
        sll.extend_from_slice(&ip);
        let mut null = 2u32.to_ne_bytes().to_vec();
        null.extend_from_slice(&ip);
        let eth = frame_ip(s, d, None, &ip);
        for (lt, f) in [
            (LINKTYPE_ETHERNET, &eth),
            (LINKTYPE_RAW, &ip),
            (LINKTYPE_IPV4, &ip),
            (LINKTYPE_LINUX_SLL, &sll),
            (LINKTYPE_NULL, &null),
        ] {
            let (p, ev) = decode(lt, f);
            assert_eq!(ev, None, "link type {lt}");
            assert_eq!(p.ports(), (1234, 53), "link type {lt}");
            assert_eq!(p.payload, b"query", "link type {lt}");
            assert!(p.checksums_ok());
        }
    }

    #[test]
    fn bad_checksum_is_seen() {
        let s: IpAddr = "10.0.0.1".parse().unwrap();
        let d: IpAddr = "10.0.0.2".parse().unwrap();
        let mut u = packet::udp(s, d, 1234, 53, b"query");
        u[9] ^= 0xff;
        let ip = packet::ip(s, d, PROTO_UDP, 64, 1, &u);
        let (p, _) = decode(LINKTYPE_RAW, &ip);
        assert!(!p.checksums_ok());
    }

    #[test]
    fn truncation_is_an_event_with_partial_layers() {
        let s: IpAddr = "10.0.0.1".parse().unwrap();
        let d: IpAddr = "10.0.0.2".parse().unwrap();
        let t = packet::tcp(
            s,
            d,
            &packet::TcpHeader {
                src_port: 1,
                dst_port: 2,
                seq: 0,
                ack: 0,
                flags: 2,
                window: 1,
            },
            b"",
        );
        let mut ip = packet::ip(s, d, PROTO_TCP, 64, 1, &t[..10]);
        let (p, ev) = decode(LINKTYPE_RAW, &ip);
        assert_eq!(ev, Some(DecodeEvent::TcpPktTooSmall));
        assert!(p.ip.is_some());
        ip.truncate(25);
        assert_eq!(decode(LINKTYPE_RAW, &ip).1, Some(DecodeEvent::Ipv4TruncPkt));
    }

    #[test]
    fn never_panics_on_garbage() {
        let mut seed = 0x1234_5678u32;
        let mut rnd = || {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            seed
        };
        let s: IpAddr = "10.0.0.1".parse().unwrap();
        let d: IpAddr = "2001:db8::1".parse().unwrap();
        let base4 = packet::ip(s, s, PROTO_TCP, 1, 1, &[0u8; 40]);
        let base6 = packet::ip(d, d, PROTO_UDP, 1, 1, &[0u8; 40]);
        for _ in 0..20_000 {
            for base in [&base4, &base6] {
                let mut f = base.clone();
                for _ in 0..(rnd() % 6) {
                    let i = rnd() as usize % f.len();
                    f[i] = rnd() as u8;
                }
                f.truncate(rnd() as usize % (f.len() + 1));
                for lt in [
                    LINKTYPE_RAW,
                    LINKTYPE_ETHERNET,
                    LINKTYPE_NULL,
                    LINKTYPE_LINUX_SLL,
                ] {
                    let (p, _) = decode(lt, &f);
                    let _ = p.checksums_ok();
                    let _ = p.ip_bytes();
                }
            }
        }
    }
}
