//! Tunnels: the frames carried inside GRE (with ERSPAN type I, II and III, and PPTP's
//! PPP), VXLAN, Geneve, Teredo and IP-in-IP (IPv4 or IPv6 inside IPv4 or IPv6).
//!
//! As in Suricata, each of these makes a packet of its own: [`crate::decode`] finds the
//! encapsulated frame of a packet ([`Encap`], in [`crate::Packet::encap`]) and
//! [`crate::decode::decode_inner`] decodes it as a packet one tunnel deeper, at most
//! [`MAX_TUNNEL_DEPTH`] deep (a deeper tunnel is `decoder.too_many_layers` and is not
//! opened). Link-level encapsulations that Suricata decodes in place (VLAN, MPLS,
//! PPPoE, VN-Tag, E-Tag, NSH) are in [`crate::link`] and make no packet of their own.
//!
//! The UDP tunnels are recognised by port, as configured (`decoder.vxlan.ports`,
//! `decoder.geneve.ports`, `decoder.teredo.ports`: [`TunnelPorts`]); a datagram on such
//! a port that does not look like the tunnel is decoded as plain UDP.

use crate::link::{LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_PPP};
use crate::{DecodeEvent, EventSet, ethernet, gre, ipv6};

/// Tunnels opened inside each other at most (the outermost packet has depth 0).
pub const MAX_TUNNEL_DEPTH: u8 = 8;
/// Ports per UDP tunnel protocol (Suricata's limit).
pub const MAX_TUNNEL_PORTS: usize = 4;

pub const VXLAN_HEADER_LEN: usize = 8;
pub const GENEVE_HEADER_LEN: usize = 8;
/// A Teredo origin indication before the IPv6 packet.
pub const TEREDO_ORIGIN_LEN: usize = 8;

const PROTO_IPIP: u8 = 4;
const PROTO_IPV6: u8 = 41;
const PROTO_GRE: u8 = 47;

/// Which tunnel a packet came out of (EVE `pkt_src`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tunnel {
    /// GRE, including ERSPAN and PPTP.
    Gre,
    Vxlan,
    Geneve,
    Teredo,
    /// IPv4 or IPv6 inside IPv4.
    Ipv4,
    /// IPv4 or IPv6 inside IPv6.
    Ipv6,
}

impl Tunnel {
    /// Suricata's `pkt_src` for a packet out of this tunnel.
    pub fn pkt_src(self) -> &'static str {
        match self {
            Tunnel::Gre => "gre tunnel",
            Tunnel::Vxlan => "vxlan encapsulation",
            Tunnel::Geneve => "geneve encapsulation",
            Tunnel::Teredo => "teredo tunnel",
            Tunnel::Ipv4 => "ipv4 tunnel",
            Tunnel::Ipv6 => "ipv6 tunnel",
        }
    }
}

/// The frame a packet carries: bytes `start..end` of the packet's frame, of link type
/// `link_type` (Ethernet, PPP, or bare IPv4/IPv6).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Encap {
    pub tunnel: Tunnel,
    pub link_type: u16,
    pub start: usize,
    pub end: usize,
}

/// A set of at most [`MAX_TUNNEL_PORTS`] UDP ports, or every port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ports {
    ports: [u16; MAX_TUNNEL_PORTS],
    len: u8,
    any: bool,
}

impl Ports {
    /// No port (the decoder is off).
    pub const NONE: Ports = Ports {
        ports: [0; MAX_TUNNEL_PORTS],
        len: 0,
        any: false,
    };
    /// Every port (Teredo's `ports: any`).
    pub const ANY: Ports = Ports {
        ports: [0; MAX_TUNNEL_PORTS],
        len: 0,
        any: true,
    };

    /// One port.
    pub const fn one(p: u16) -> Ports {
        Ports {
            ports: [p, 0, 0, 0],
            len: 1,
            any: false,
        }
    }

    /// Up to [`MAX_TUNNEL_PORTS`] ports; `None` when there are more.
    pub fn list(ports: &[u16]) -> Option<Ports> {
        if ports.len() > MAX_TUNNEL_PORTS {
            return None;
        }
        let mut p = Ports::NONE;
        p.ports[..ports.len()].copy_from_slice(ports);
        p.len = ports.len() as u8;
        Some(p)
    }

    #[inline]
    pub fn contains(&self, port: u16) -> bool {
        self.any || self.ports[..usize::from(self.len)].contains(&port)
    }

    #[inline]
    fn is_empty(&self) -> bool {
        !self.any && self.len == 0
    }
}

/// The UDP ports each UDP tunnel is looked for on (`decoder.*.ports`; an empty set
/// turns the decoder off).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunnelPorts {
    /// VXLAN: destination port (Suricata's default 4789).
    pub vxlan: Ports,
    /// Geneve: either port (6081).
    pub geneve: Ports,
    /// Teredo: either port (3544).
    pub teredo: Ports,
}

impl TunnelPorts {
    /// Suricata's defaults.
    pub const DEFAULT: TunnelPorts = TunnelPorts {
        vxlan: Ports::one(4789),
        geneve: Ports::one(6081),
        teredo: Ports::one(3544),
    };
}

impl Default for TunnelPorts {
    fn default() -> Self {
        TunnelPorts::DEFAULT
    }
}

/// The frame inside IP protocol `proto` (GRE, IP-in-IP), whose bytes `b` start at
/// `at` in the frame. `Ok(None)` when the protocol is no tunnel; errors are the
/// decoder events of a malformed tunnel header.
#[inline]
pub fn over_ip(
    ip_version: u8,
    proto: u8,
    b: &[u8],
    at: usize,
    events: &mut EventSet,
) -> Result<Option<Encap>, DecodeEvent> {
    let ip_tunnel = if ip_version == 4 {
        Tunnel::Ipv4
    } else {
        Tunnel::Ipv6
    };
    let end = at + b.len();
    let encap = |tunnel, link_type, off: usize| {
        Some(Encap {
            tunnel,
            link_type,
            start: at + off,
            end,
        })
    };
    match proto {
        PROTO_GRE => {
            let h = gre::parse(b)?;
            let rest = &b[h.len..];
            Ok(match h.protocol {
                gre::PROTO_IPV4 => encap(Tunnel::Gre, LINKTYPE_IPV4, h.len),
                gre::PROTO_IPV6 => encap(Tunnel::Gre, LINKTYPE_IPV6, h.len),
                gre::PROTO_TEB => encap(Tunnel::Gre, LINKTYPE_ETHERNET, h.len),
                gre::PROTO_PPP => encap(Tunnel::Gre, LINKTYPE_PPP, h.len),
                // ERSPAN type I has no sequence number and no header of its own.
                gre::PROTO_ERSPAN if !h.has_seq => encap(Tunnel::Gre, LINKTYPE_ETHERNET, h.len),
                gre::PROTO_ERSPAN => {
                    let e = gre::erspan2_len(rest)?;
                    encap(Tunnel::Gre, LINKTYPE_ETHERNET, h.len + e)
                }
                gre::PROTO_ERSPAN3 => {
                    let e = gre::erspan3_len(rest)?;
                    encap(Tunnel::Gre, LINKTYPE_ETHERNET, h.len + e)
                }
                _ => None,
            })
        }
        PROTO_IPIP => {
            if ip_version == 6 {
                if b.len() < crate::ipv4::MIN_HEADER_LEN {
                    return Err(DecodeEvent::Ipv4InIpv6TooSmall);
                }
                if b[0] >> 4 != 4 {
                    *events |= DecodeEvent::Ipv4InIpv6WrongVersion.bit();
                    return Ok(None);
                }
            }
            Ok(encap(ip_tunnel, LINKTYPE_IPV4, 0))
        }
        PROTO_IPV6 => {
            if ip_version == 6 {
                if b.len() < ipv6::HEADER_LEN {
                    return Err(DecodeEvent::Ipv6InIpv6TooSmall);
                }
                if b[0] >> 4 != 6 {
                    *events |= DecodeEvent::Ipv6InIpv6WrongVersion.bit();
                    return Ok(None);
                }
            }
            Ok(encap(ip_tunnel, LINKTYPE_IPV6, 0))
        }
        _ => Ok(None),
    }
}

/// The frame inside a UDP datagram from `sp` to `dp` whose payload `b` starts at `at`
/// in the frame: VXLAN, Geneve or Teredo on their ports, when the payload looks like
/// one (else it is plain UDP). Malformed tunnel payloads add their event to `events`.
#[inline]
pub fn over_udp(
    ports: &TunnelPorts,
    sp: u16,
    dp: u16,
    b: &[u8],
    at: usize,
    events: &mut EventSet,
) -> Option<Encap> {
    let end = at + b.len();
    let encap = |tunnel, link_type, off: usize| {
        Some(Encap {
            tunnel,
            link_type,
            start: at + off,
            end,
        })
    };
    if ports.vxlan.contains(dp)
        && !ports.vxlan.is_empty()
        && let Some(e) = vxlan(b, events)
    {
        return encap(Tunnel::Vxlan, e.0, e.1);
    }
    if !ports.geneve.is_empty()
        && (ports.geneve.contains(sp) || ports.geneve.contains(dp))
        && let Some(e) = geneve(b, events)
    {
        return encap(Tunnel::Geneve, e.0, e.1);
    }
    if !ports.teredo.is_empty()
        && (ports.teredo.contains(sp) || ports.teredo.contains(dp))
        && let Some(off) = teredo(b)
    {
        return encap(Tunnel::Teredo, LINKTYPE_IPV6, off);
    }
    None
}

/// A VXLAN header (I flag set, last reserved byte 0) and an Ethernet frame carrying
/// IP or VLAN: the inner link type and offset.
fn vxlan(b: &[u8], events: &mut EventSet) -> Option<(u16, usize)> {
    if b.len() < VXLAN_HEADER_LEN + ethernet::HEADER_LEN {
        return None;
    }
    if b[0] & 0x08 == 0 || b[7] != 0 {
        return None;
    }
    let et = u16::from_be_bytes([b[VXLAN_HEADER_LEN + 12], b[VXLAN_HEADER_LEN + 13]]);
    match et {
        ethernet::ETHERTYPE_IPV4
        | ethernet::ETHERTYPE_IPV6
        | ethernet::ETHERTYPE_VLAN
        | ethernet::ETHERTYPE_QINQ
        | ethernet::ETHERTYPE_QINQ_OLD
        | ethernet::ETHERTYPE_ARP => Some((LINKTYPE_ETHERNET, VXLAN_HEADER_LEN)),
        _ => {
            *events |= DecodeEvent::VxlanUnknownPayloadType.bit();
            None
        }
    }
}

/// A Geneve header (version 0, options within the datagram): the inner link type and
/// offset.
fn geneve(b: &[u8], events: &mut EventSet) -> Option<(u16, usize)> {
    let h = b.get(..GENEVE_HEADER_LEN)?;
    if h[0] >> 6 != 0 {
        return None;
    }
    let len = GENEVE_HEADER_LEN + usize::from(h[0] & 0x3f) * 4;
    if b.len() < len {
        return None;
    }
    // Each option: class (2), type (1), reserved bits and length in words (1), data.
    let mut o = GENEVE_HEADER_LEN;
    while o < len {
        let opt = b.get(o..o + 4)?;
        o += 4 + usize::from(opt[3] & 0x1f) * 4;
    }
    if o != len {
        return None;
    }
    match u16::from_be_bytes([h[2], h[3]]) {
        gre::PROTO_TEB => Some((LINKTYPE_ETHERNET, len)),
        gre::PROTO_IPV4 => Some((LINKTYPE_IPV4, len)),
        gre::PROTO_IPV6 => Some((LINKTYPE_IPV6, len)),
        _ => {
            *events |= DecodeEvent::GeneveUnknownPayloadType.bit();
            None
        }
    }
}

/// Suricata's Teredo heuristics: an optional origin indication, then an IPv6 header
/// whose length fills the datagram exactly, hop limit not 0, and not a hop-by-hop
/// header with almost no data. The offset of the IPv6 packet.
fn teredo(b: &[u8]) -> Option<usize> {
    if b.len() < ipv6::HEADER_LEN {
        return None;
    }
    let mut off = 0;
    if b[0] == 0 {
        if b[1] != 0 || b.len() < TEREDO_ORIGIN_LEN + ipv6::HEADER_LEN {
            return None;
        }
        off = TEREDO_ORIGIN_LEN;
    }
    let h = &b[off..];
    if h[0] >> 4 != 6 {
        return None;
    }
    let plen = usize::from(u16::from_be_bytes([h[4], h[5]]));
    let (next, hlim) = (h[6], h[7]);
    if hlim == 0 || (next == 0 && plen < 8) {
        return None;
    }
    (b.len() == off + ipv6::HEADER_LEN + plen).then_some(off)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ports() {
        let p = Ports::list(&[1, 2, 3, 4]).unwrap();
        assert!(p.contains(4) && !p.contains(5));
        assert!(Ports::list(&[1, 2, 3, 4, 5]).is_none());
        assert!(Ports::ANY.contains(9));
        assert!(!Ports::NONE.contains(0));
    }

    #[test]
    fn teredo_heuristics() {
        let mut v6 = vec![0x60, 0, 0, 0, 0, 4, 17, 64];
        v6.extend_from_slice(&[0; 32]);
        v6.extend_from_slice(&[1, 2, 3, 4]);
        assert_eq!(teredo(&v6), Some(0));
        let mut origin = vec![0, 0, 1, 2, 3, 4, 5, 6];
        origin.extend_from_slice(&v6);
        assert_eq!(teredo(&origin), Some(8));
        // Length that does not fill the datagram, hop limit 0, authentication.
        assert_eq!(teredo(&v6[..v6.len() - 1]), None);
        let mut h0 = v6.clone();
        h0[7] = 0;
        assert_eq!(teredo(&h0), None);
        origin[1] = 1;
        assert_eq!(teredo(&origin), None);
    }

    #[test]
    fn geneve_options_must_fit() {
        let mut ev = 0;
        // One 4-byte option (length field 0), Ethernet.
        let g = [0x01, 0, 0x65, 0x58, 0, 0, 1, 0, 0x01, 0x08, 0x01, 0x00];
        assert_eq!(geneve(&g, &mut ev), Some((LINKTYPE_ETHERNET, 12)));
        let mut bad = g;
        bad[11] = 1; // an option longer than the option space
        assert_eq!(geneve(&bad, &mut ev), None);
        let mut unknown = g;
        unknown[2] = 0x12;
        assert_eq!(geneve(&unknown, &mut ev), None);
        assert_eq!(ev, DecodeEvent::GeneveUnknownPayloadType.bit());
    }
}
