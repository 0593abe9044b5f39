//! The link layer: where the network layer of a frame starts, for each pcap link type
//! Meerkat reads (Ethernet with VLAN tags, Linux cooked capture v1, BSD loopback, raw
//! IP), and which network protocol it carries.
//!
//! Both the detect workers' decoder ([`crate::decode`]) and capture's flow hash start
//! here, so a frame is read the same way (the same VLAN limit, the same loopback
//! families) wherever it is looked at.

use crate::DecodeEvent;
use crate::ethernet::{self, MAX_VLAN_LAYERS};

/// pcap link types (`LINKTYPE_*` of the tcpdump.org registry).
pub const LINKTYPE_NULL: u16 = 0;
pub const LINKTYPE_ETHERNET: u16 = 1;
/// DLT_RAW as some BSDs number it.
pub const LINKTYPE_RAW_BSD: u16 = 12;
/// DLT_RAW as OpenBSD numbers it.
pub const LINKTYPE_RAW_OPENBSD: u16 = 14;
pub const LINKTYPE_RAW: u16 = 101;
pub const LINKTYPE_LINUX_SLL: u16 = 113;
pub const LINKTYPE_IPV4: u16 = 228;
pub const LINKTYPE_IPV6: u16 = 229;

/// Length of a Linux cooked-capture (v1) header; the protocol is its last two bytes.
pub const SLL_HEADER_LEN: usize = 16;
/// Length of a BSD loopback header (the address family, in the capturing host's order).
pub const NULL_HEADER_LEN: usize = 4;

/// What the link layer of a frame says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Link {
    /// The network protocol (an ethertype; raw IP and loopback frames are given the
    /// IPv4 or IPv6 ethertype).
    pub ethertype: u16,
    /// Offset of the network layer in the frame (never past its end).
    pub offset: usize,
    /// The VLAN ids of an Ethernet frame's tags, outermost first.
    pub vlan: [u16; MAX_VLAN_LAYERS],
    /// Tags in `vlan`.
    pub vlan_len: u8,
}

/// Reads the link layer of `frame`, of pcap link type `link_type`. Errors are the
/// decoder events Suricata raises for them (an Ethernet frame with more than
/// [`MAX_VLAN_LAYERS`] tags is `decoder.vlan.too_many_layers`).
#[inline]
pub fn parse(link_type: u16, frame: &[u8]) -> Result<Link, DecodeEvent> {
    let mut vlan = [0; MAX_VLAN_LAYERS];
    let mut vlan_len = 0u8;
    let (ethertype, offset) = network_with(link_type, frame, |id| {
        // Tags past the array are an error before they get here.
        if let Some(slot) = vlan.get_mut(usize::from(vlan_len)) {
            *slot = id;
        }
        vlan_len += 1;
    })?;
    Ok(Link {
        ethertype,
        offset,
        vlan,
        vlan_len,
    })
}

/// [`parse`] without the VLAN tags: the network protocol (an ethertype) and its offset.
#[inline]
pub fn network(link_type: u16, frame: &[u8]) -> Result<(u16, usize), DecodeEvent> {
    network_with(link_type, frame, |_| {})
}

/// The one reading of the link layer: [`parse`] and [`network`] differ only in what
/// they do with each VLAN tag.
#[inline]
fn network_with(
    link_type: u16,
    frame: &[u8],
    tag: impl FnMut(u16),
) -> Result<(u16, usize), DecodeEvent> {
    match link_type {
        LINKTYPE_ETHERNET => ethernet::untag(frame, tag),
        LINKTYPE_LINUX_SLL => {
            let h = frame
                .get(..SLL_HEADER_LEN)
                .ok_or(DecodeEvent::SllTooSmall)?;
            Ok((u16::from_be_bytes([h[14], h[15]]), SLL_HEADER_LEN))
        }
        LINKTYPE_NULL => {
            let h = frame
                .get(..NULL_HEADER_LEN)
                .ok_or(DecodeEvent::NullTooSmall)?;
            let fam = u32::from_ne_bytes([h[0], h[1], h[2], h[3]]);
            let fam = if fam > 0xffff { fam.swap_bytes() } else { fam };
            match fam {
                2 => Ok((ethernet::ETHERTYPE_IPV4, NULL_HEADER_LEN)),
                // AF_INET6 as Linux, FreeBSD/NetBSD/OpenBSD and Darwin number it.
                10 | 24 | 28 | 30 => Ok((ethernet::ETHERTYPE_IPV6, NULL_HEADER_LEN)),
                _ => Err(DecodeEvent::NullUnsupportedType),
            }
        }
        LINKTYPE_RAW | LINKTYPE_RAW_BSD | LINKTYPE_RAW_OPENBSD => {
            match frame.first().map(|b| b >> 4) {
                Some(4) => Ok((ethernet::ETHERTYPE_IPV4, 0)),
                Some(6) => Ok((ethernet::ETHERTYPE_IPV6, 0)),
                _ => Err(DecodeEvent::IpRawInvalidVersion),
            }
        }
        LINKTYPE_IPV4 => Ok((ethernet::ETHERTYPE_IPV4, 0)),
        LINKTYPE_IPV6 => Ok((ethernet::ETHERTYPE_IPV6, 0)),
        _ => Err(DecodeEvent::UnsupportedLinkType),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_link_type_finds_the_network_layer() {
        // An IPv4 header's first byte after each link header.
        let mut eth = vec![0u8; 12];
        eth.extend_from_slice(&[0x81, 0x00, 0x00, 0x2a, 0x08, 0x00, 0x45]); // tag 42, IPv4
        let l = parse(LINKTYPE_ETHERNET, &eth).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV4, 18));
        assert_eq!(&l.vlan[..usize::from(l.vlan_len)], &[42]);

        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x86, 0xdd]);
        let l = parse(LINKTYPE_LINUX_SLL, &sll).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV6, 16));

        // AF_INET6 as Darwin numbers it (30), written in the other byte order.
        let l = parse(LINKTYPE_NULL, &30u32.swap_bytes().to_ne_bytes()).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV6, 4));

        let l = parse(LINKTYPE_RAW_OPENBSD, &[0x60]).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV6, 0));
        assert_eq!(
            network(LINKTYPE_ETHERNET, &eth),
            Ok((ethernet::ETHERTYPE_IPV4, 18))
        );
    }

    #[test]
    fn link_errors_are_suricata_events() {
        assert_eq!(
            parse(LINKTYPE_LINUX_SLL, &[0; 15]),
            Err(DecodeEvent::SllTooSmall)
        );
        assert_eq!(
            parse(LINKTYPE_NULL, &[2, 0]),
            Err(DecodeEvent::NullTooSmall)
        );
        assert_eq!(
            parse(LINKTYPE_NULL, &7u32.to_ne_bytes()),
            Err(DecodeEvent::NullUnsupportedType)
        );
        assert_eq!(
            parse(LINKTYPE_RAW, &[0x50]),
            Err(DecodeEvent::IpRawInvalidVersion)
        );
        assert_eq!(
            parse(LINKTYPE_RAW, &[]),
            Err(DecodeEvent::IpRawInvalidVersion)
        );
        assert_eq!(parse(999, &[0; 64]), Err(DecodeEvent::UnsupportedLinkType));
    }
}
