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
    LINKTYPE_PPP, LINKTYPE_RAW, LINKTYPE_RAW_BSD, LINKTYPE_RAW_OPENBSD,
};
pub use crate::tunnel::{Encap, MAX_TUNNEL_DEPTH, Tunnel, TunnelPorts};
use crate::{EventSet, checksum, ethernet, icmp, ipv4, ipv6, link, tcp, tunnel, udp};

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
    pub events: EventSet,
    /// Decoding stopped at an error: only `decode-event` rules inspect the packet.
    pub invalid: bool,
    /// The frame this packet carries in a tunnel, to decode with [`decode_inner`].
    pub encap: Option<Encap>,
    /// Tunnels around this packet: 0 for a captured packet.
    pub depth: u8,
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
            encap: None,
            depth: 0,
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

/// Decodes `frame` of link type `link_type`, with the default tunnel ports. On error,
/// `Packet` holds the layers decoded before the bad one (for the anomaly record) and
/// the event says what was wrong.
pub fn decode(link_type: u16, frame: &[u8]) -> (Packet<'_>, Option<DecodeEvent>) {
    decode_with(&TunnelPorts::DEFAULT, link_type, frame)
}

/// [`decode`] with the UDP tunnels looked for on `ports`.
pub fn decode_with<'a>(
    ports: &TunnelPorts,
    link_type: u16,
    frame: &'a [u8],
) -> (Packet<'a>, Option<DecodeEvent>) {
    decode_at(ports, link_type, frame, 0)
}

fn decode_at<'a>(
    ports: &TunnelPorts,
    link_type: u16,
    frame: &'a [u8],
    depth: u8,
) -> (Packet<'a>, Option<DecodeEvent>) {
    let mut p = Packet::empty(link_type, frame);
    p.depth = depth;
    let ev = decode_into(&mut p, ports).err();
    if let Some(e) = ev {
        p.set_event(e);
        p.invalid = true;
        p.encap = None;
    }
    (p, ev)
}

/// Decodes the frame `outer` carries in a tunnel ([`Packet::encap`]) as a packet one
/// tunnel deeper: its own layers, the outer packet's VLAN ids before its own. `None`
/// when `outer` carries none.
pub fn decode_inner<'a>(
    ports: &TunnelPorts,
    outer: &Packet<'a>,
) -> Option<(Packet<'a>, Option<DecodeEvent>)> {
    let e = outer.encap?;
    let inner = outer.frame.get(e.start..e.end)?;
    let (mut p, ev) = decode_at(ports, e.link_type, inner, outer.depth + 1);
    if outer.vlan_len > 0 {
        let own = p.vlan;
        let own_len = usize::from(p.vlan_len);
        let mut n = usize::from(outer.vlan_len);
        p.vlan = outer.vlan;
        for &v in &own[..own_len] {
            if n == MAX_VLAN_LAYERS {
                break;
            }
            p.vlan[n] = v;
            n += 1;
        }
        p.vlan_len = n as u8;
    }
    Some((p, ev))
}

fn decode_into(p: &mut Packet<'_>, ports: &TunnelPorts) -> Result<(), DecodeEvent> {
    let frame = p.frame;
    let l = link::parse(p.link_type, frame, &mut p.events)?;
    p.vlan = l.vlan;
    p.vlan_len = l.vlan_len;
    let (ethertype, off) = (l.ethertype, l.offset);
    let rest = &frame[off.min(frame.len())..];
    match ethertype {
        ethernet::ETHERTYPE_IPV4 => decode_ipv4(p, off, rest)?,
        ethernet::ETHERTYPE_IPV6 => decode_ipv6(p, off, rest)?,
        // ARP and other link-layer protocols: nothing more to decode.
        _ => return Ok(()),
    }
    find_tunnel(p, ports)
}

/// Looks for a tunnel in a decoded IP packet (GRE, IP-in-IP, or VXLAN, Geneve, Teredo
/// on their UDP ports), at most [`MAX_TUNNEL_DEPTH`] deep.
#[inline]
fn find_tunnel(p: &mut Packet<'_>, ports: &TunnelPorts) -> Result<(), DecodeEvent> {
    let Some(ip) = p.ip else {
        return Ok(());
    };
    let encap = match p.l4 {
        L4::Udp {
            src_port, dst_port, ..
        } => tunnel::over_udp(
            ports,
            src_port,
            dst_port,
            p.payload,
            p.payload_offset,
            &mut p.events,
        ),
        L4::Other if ip.fragment.is_none() && matches!(ip.proto, 4 | 41 | 47) => tunnel::over_ip(
            ip.version,
            ip.proto,
            p.payload,
            p.payload_offset,
            &mut p.events,
        )?,
        _ => None,
    };
    if encap.is_some() && p.depth >= MAX_TUNNEL_DEPTH {
        p.set_event(DecodeEvent::TooManyLayers);
        return Ok(());
    }
    p.encap = encap;
    Ok(())
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
        // ICMPv6 over IPv4, ICMPv4 over IPv6: Suricata's invalid-packet events.
        PROTO_ICMPV6 if !v6 => return Err(DecodeEvent::Ipv4Icmpv6),
        PROTO_ICMP if v6 => return Err(DecodeEvent::Ipv6Icmpv4),
        PROTO_ICMP | PROTO_ICMPV6 => {
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

    /// An inner IPv4 UDP datagram (10.1.0.1:1000 -> 10.1.0.2:2000, "inner").
    fn inner_ip() -> Vec<u8> {
        let s: IpAddr = "10.1.0.1".parse().unwrap();
        let d: IpAddr = "10.1.0.2".parse().unwrap();
        packet::ip(
            s,
            d,
            PROTO_UDP,
            64,
            1,
            &packet::udp(s, d, 1000, 2000, b"inner"),
        )
    }

    fn outer_ip(proto: u8, payload: &[u8]) -> Vec<u8> {
        let s: IpAddr = "192.0.2.1".parse().unwrap();
        let d: IpAddr = "192.0.2.2".parse().unwrap();
        packet::ip(s, d, proto, 64, 7, payload)
    }

    fn outer_udp(dport: u16, payload: &[u8]) -> Vec<u8> {
        let s: IpAddr = "192.0.2.1".parse().unwrap();
        let d: IpAddr = "192.0.2.2".parse().unwrap();
        outer_ip(PROTO_UDP, &packet::udp(s, d, 40000, dport, payload))
    }

    fn eth(ethertype: u16, payload: &[u8]) -> Vec<u8> {
        packet::ethernet([2; 6], [4; 6], ethertype, payload)
    }

    /// Decodes `frame` and every tunnel in it: (tunnel, depth, ports) per layer.
    /// One decoded layer: the tunnel it came out of, its depth, ports, fatal event.
    type Layer = (Option<Tunnel>, u8, (u16, u16), Option<DecodeEvent>);

    fn layers(lt: u16, frame: &[u8]) -> Vec<Layer> {
        let (mut p, mut ev) = decode(lt, frame);
        let mut out = Vec::new();
        let mut via = None;
        loop {
            out.push((via, p.depth, p.ports(), ev));
            via = p.encap.map(|e| e.tunnel);
            match decode_inner(&TunnelPorts::DEFAULT, &p) {
                Some((q, e)) => {
                    p = q;
                    ev = e;
                }
                None => return out,
            }
        }
    }

    fn reaches_inner(lt: u16, frame: &[u8], tunnel: Tunnel) {
        let l = layers(lt, frame);
        assert_eq!(l.len(), 2, "{l:?}");
        assert_eq!(l[1], (Some(tunnel), 1, (1000, 2000), None), "{l:?}");
    }

    #[test]
    fn gre_and_erspan_tunnels() {
        let ip = inner_ip();
        let mut gre = vec![0x00, 0x00, 0x08, 0x00];
        gre.extend_from_slice(&ip);
        reaches_inner(LINKTYPE_RAW, &outer_ip(47, &gre), Tunnel::Gre);
        // Transparent Ethernet bridging with a key.
        let mut teb = vec![0x20, 0x00, 0x65, 0x58, 0, 0, 0, 9];
        teb.extend_from_slice(&eth(0x0800, &ip));
        reaches_inner(LINKTYPE_RAW, &outer_ip(47, &teb), Tunnel::Gre);
        // ERSPAN type I (no sequence number), II and III.
        let mut e1 = vec![0x00, 0x00, 0x88, 0xbe];
        e1.extend_from_slice(&eth(0x0800, &ip));
        reaches_inner(LINKTYPE_RAW, &outer_ip(47, &e1), Tunnel::Gre);
        let mut e2 = vec![
            0x10, 0x00, 0x88, 0xbe, 0, 0, 0, 1, 0x10, 0, 0, 0, 0, 0, 0, 0,
        ];
        e2.extend_from_slice(&eth(0x0800, &ip));
        reaches_inner(LINKTYPE_RAW, &outer_ip(47, &e2), Tunnel::Gre);
        let mut e3 = vec![0x10, 0x00, 0x22, 0xeb, 0, 0, 0, 1];
        e3.extend_from_slice(&[0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        e3.extend_from_slice(&eth(0x0800, &ip));
        reaches_inner(LINKTYPE_RAW, &outer_ip(47, &e3), Tunnel::Gre);
        // PPTP: GRE version 1 carrying PPP.
        let mut pptp = vec![
            0x30, 0x01, 0x88, 0x0b, 0, 40, 0, 1, 0, 0, 0, 5, 0xff, 0x03, 0, 0x21,
        ];
        pptp.extend_from_slice(&ip);
        reaches_inner(LINKTYPE_RAW, &outer_ip(47, &pptp), Tunnel::Gre);
        // A bad GRE header is the packet's decoder event.
        let frame = outer_ip(47, &[0x00, 0x03, 0x08, 0x00]);
        let (p, ev) = decode(LINKTYPE_RAW, &frame);
        assert_eq!(ev, Some(DecodeEvent::GreWrongVersion));
        assert!(p.encap.is_none() && p.invalid);
    }

    #[test]
    fn udp_tunnels() {
        let ip = inner_ip();
        let mut vx = vec![0x08, 0, 0, 0, 0, 0, 1, 0];
        vx.extend_from_slice(&eth(0x0800, &ip));
        reaches_inner(LINKTYPE_RAW, &outer_udp(4789, &vx), Tunnel::Vxlan);
        // Not on a VXLAN port, or without the I flag: plain UDP.
        assert_eq!(layers(LINKTYPE_RAW, &outer_udp(4790, &vx)).len(), 1);
        let mut no_i = vx.clone();
        no_i[0] = 0;
        assert_eq!(layers(LINKTYPE_RAW, &outer_udp(4789, &no_i)).len(), 1);
        let mut gn = vec![0x00, 0, 0x08, 0x00, 0, 0, 1, 0];
        gn.extend_from_slice(&ip);
        reaches_inner(LINKTYPE_RAW, &outer_udp(6081, &gn), Tunnel::Geneve);
        // Teredo: IPv6 inside, after an origin indication.
        let s6: IpAddr = "2001::1".parse().unwrap();
        let d6: IpAddr = "2001::2".parse().unwrap();
        let ip6 = packet::ip(
            s6,
            d6,
            PROTO_UDP,
            64,
            0,
            &packet::udp(s6, d6, 1000, 2000, b"x"),
        );
        let mut te = vec![0, 0, 1, 2, 3, 4, 5, 6];
        te.extend_from_slice(&ip6);
        reaches_inner(LINKTYPE_RAW, &outer_udp(3544, &te), Tunnel::Teredo);
        // Ports are configurable.
        let ports = TunnelPorts {
            vxlan: tunnel::Ports::one(8472),
            ..TunnelPorts::DEFAULT
        };
        let f = outer_udp(8472, &vx);
        let (p, _) = decode_with(&ports, LINKTYPE_RAW, &f);
        assert_eq!(p.encap.map(|e| e.tunnel), Some(Tunnel::Vxlan));
    }

    #[test]
    fn ip_in_ip() {
        let ip = inner_ip();
        reaches_inner(LINKTYPE_RAW, &outer_ip(4, &ip), Tunnel::Ipv4);
        let s6: IpAddr = "2001::1".parse().unwrap();
        let d6: IpAddr = "2001::2".parse().unwrap();
        let ip6 = packet::ip(
            s6,
            d6,
            PROTO_UDP,
            64,
            0,
            &packet::udp(s6, d6, 1000, 2000, b"x"),
        );
        reaches_inner(LINKTYPE_RAW, &outer_ip(41, &ip6), Tunnel::Ipv4);
        reaches_inner(
            LINKTYPE_RAW,
            &packet::ip(s6, d6, 4, 64, 0, &ip),
            Tunnel::Ipv6,
        );
        reaches_inner(
            LINKTYPE_RAW,
            &packet::ip(s6, d6, 41, 64, 0, &ip6),
            Tunnel::Ipv6,
        );
        let frame = packet::ip(s6, d6, 41, 64, 0, &ip6[..20]);
        let (_, ev) = decode(LINKTYPE_RAW, &frame);
        assert_eq!(ev, Some(DecodeEvent::Ipv6InIpv6TooSmall));
        let frame = packet::ip(s6, d6, 41, 64, 0, &[ip.clone(), vec![0; 20]].concat());
        let (p, _) = decode(LINKTYPE_RAW, &frame);
        assert!(p.has_event(DecodeEvent::Ipv6InIpv6WrongVersion));
        assert!(p.encap.is_none());
    }

    #[test]
    fn tunnel_bombs_stop_at_the_depth_limit() {
        let mut f = inner_ip();
        for _ in 0..40 {
            f = outer_ip(4, &f);
        }
        let l = layers(LINKTYPE_RAW, &f);
        assert_eq!(l.len(), usize::from(MAX_TUNNEL_DEPTH) + 1);
        let (mut p, _) = decode(LINKTYPE_RAW, &f);
        while let Some((q, _)) = decode_inner(&TunnelPorts::DEFAULT, &p) {
            p = q;
        }
        assert!(p.has_event(DecodeEvent::TooManyLayers));
        assert_eq!(p.depth, MAX_TUNNEL_DEPTH);
    }

    #[test]
    fn link_encapsulations_in_place() {
        let ip = inner_ip();
        // Two MPLS labels, then IPv4 by its version nibble.
        let mut mpls = vec![0x00, 0x01, 0x00, 0x40, 0x00, 0x02, 0x01, 0x40];
        mpls.extend_from_slice(&ip);
        let frame = eth(0x8847, &mpls);
        let (p, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!((ev, p.ports()), (None, (1000, 2000)));
        // Pseudowire: control word, Ethernet with a VLAN tag.
        let mut pw = vec![0x00, 0x01, 0x01, 0x40, 0, 0, 0, 0];
        let mut tagged = vec![2; 12];
        tagged.extend_from_slice(&[0x81, 0x00, 0x00, 0x05, 0x08, 0x00]);
        tagged.extend_from_slice(&ip);
        pw.extend_from_slice(&tagged);
        let frame = eth(0x8847, &pw);
        let (p, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!(
            (ev, p.ports(), p.vlans()),
            (None, (1000, 2000), &[5u16][..])
        );
        // Reserved label at the bottom: an event, decoding goes on.
        let mut reserved = vec![0x00, 0x00, 0x51, 0x40];
        reserved.extend_from_slice(&ip);
        let frame = eth(0x8847, &reserved);
        let (p, _) = decode(LINKTYPE_ETHERNET, &frame);
        assert!(p.has_event(DecodeEvent::MplsBadLabelReserved));
        assert_eq!(p.ports(), (1000, 2000));
        let mut unknown = vec![0x00, 0x01, 0x01, 0x40];
        unknown.extend_from_slice(&[0x90; 20]);
        let frame = eth(0x8847, &unknown);
        let (_, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!(ev, Some(DecodeEvent::MplsUnknownPayloadType));
        let endless = vec![0u8; 200];
        let frame = eth(0x8847, &endless);
        let (_, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!(ev, Some(DecodeEvent::TooManyLayers));
        // PPPoE session carrying IPv4.
        let mut pppoe = vec![0x11, 0x00, 0x12, 0x34, 0, 0, 0x00, 0x21];
        pppoe.extend_from_slice(&ip);
        let frame = eth(0x8864, &pppoe);
        let (p, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!((ev, p.ports()), (None, (1000, 2000)));
        pppoe[1] = 9;
        let frame = eth(0x8864, &pppoe);
        let (_, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!(ev, Some(DecodeEvent::PppoeWrongCode));
        // PPPoE discovery (PADI with one tag) decodes to no IP layer.
        let padi = [0x11, 0x09, 0, 0, 0, 4, 0x01, 0x01, 0, 0];
        let frame = eth(0x8863, &padi);
        let (p, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!((ev, p.ip), (None, None));
        let frame = eth(0x8863, &padi[..9]);
        let (_, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!(ev, Some(DecodeEvent::PppoePktTooSmall));
        // VN-Tag, then NSH (MD type 2, no metadata) carrying IPv4.
        let mut nsh = vec![0x00, 0x02, 0x02, 0x01, 0, 0, 1, 0xff];
        nsh.extend_from_slice(&ip);
        let mut vntag = vec![0, 0, 0, 0, 0x89, 0x4f];
        vntag.extend_from_slice(&nsh);
        let frame = eth(0x8926, &vntag);
        let (p, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!((ev, p.ports()), (None, (1000, 2000)));
        let frame = eth(0x8926, &vntag[..3]);
        let (_, ev) = decode(LINKTYPE_ETHERNET, &frame);
        assert_eq!(ev, Some(DecodeEvent::VntagHeaderTooSmall));
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
        let mut gre = vec![0x30, 0x00, 0x65, 0x58, 0, 0, 0, 1, 0, 0, 0, 1];
        gre.extend_from_slice(&eth(0x8847, &[0, 1, 1, 0x40, 0x45, 0, 0, 20]));
        let gre = outer_ip(47, &gre);
        let mut vx = vec![0x08, 0, 0, 0, 0, 0, 1, 0];
        vx.extend_from_slice(&eth(0x0800, &outer_ip(41, &base6)));
        let vx = outer_udp(4789, &vx);
        for _ in 0..20_000 {
            for base in [&base4, &base6, &gre, &vx] {
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
                    let (mut p, _) = decode(lt, &f);
                    let _ = p.checksums_ok();
                    let _ = p.ip_bytes();
                    while let Some((q, _)) = decode_inner(&TunnelPorts::DEFAULT, &p) {
                        let _ = q.checksums_ok();
                        p = q;
                    }
                }
            }
        }
    }
}
