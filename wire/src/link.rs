//! The link layer: where the network layer of a frame starts, for each pcap link type
//! Meerkat reads (Ethernet with VLAN tags, Linux cooked capture v1, BSD loopback, raw
//! IP), and which network protocol it carries.
//!
//! Both the detect workers' decoder ([`crate::decode`]) and capture's flow hash start
//! here, so a frame is read the same way (the same VLAN limit, the same loopback
//! families) wherever it is looked at.

use crate::ethernet::{self, MAX_VLAN_LAYERS};
use crate::{DecodeEvent, EventSet};

/// pcap link types (`LINKTYPE_*` of the tcpdump.org registry).
pub const LINKTYPE_NULL: u16 = 0;
pub const LINKTYPE_ETHERNET: u16 = 1;
/// PPP (address and control bytes optional), as in GRE version 1 (PPTP).
pub const LINKTYPE_PPP: u16 = 9;
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

/// Link-level encapsulations (MPLS label stacks, PPPoE, VN-Tag, E-Tag, NSH, Ethernet
/// inside them) walked at most per frame; more is `decoder.too_many_layers`.
pub const MAX_LINK_LAYERS: usize = 8;
/// MPLS labels in one stack at most.
pub const MAX_MPLS_LABELS: usize = 16;

pub const ETHERTYPE_MPLS: u16 = 0x8847;
pub const ETHERTYPE_MPLS_MULTICAST: u16 = 0x8848;
pub const ETHERTYPE_PPPOE_DISCOVERY: u16 = 0x8863;
pub const ETHERTYPE_PPPOE_SESSION: u16 = 0x8864;
pub const ETHERTYPE_VNTAG: u16 = 0x8926;
pub const ETHERTYPE_ETAG: u16 = 0x893f;
pub const ETHERTYPE_NSH: u16 = 0x894f;

const PPP_IPV4: u16 = 0x0021;
const PPP_IPV6: u16 = 0x0057;
const PPPOE_HEADER_LEN: usize = 6;
const VNTAG_LEN: usize = 6;
const ETAG_LEN: usize = 8;
const NSH_BASE_LEN: usize = 8;

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
/// [`MAX_VLAN_LAYERS`] tags is `decoder.vlan.too_many_layers`); anomalies that do not
/// stop decoding (a reserved MPLS label) are added to `events`.
#[inline]
pub fn parse(link_type: u16, frame: &[u8], events: &mut EventSet) -> Result<Link, DecodeEvent> {
    let mut vlan = [0; MAX_VLAN_LAYERS];
    let mut vlan_len = 0u8;
    let (ethertype, offset) = network_with(
        link_type,
        frame,
        |id| {
            // Tags past the array are dropped (the first ones are kept).
            if let Some(slot) = vlan.get_mut(usize::from(vlan_len)) {
                *slot = id;
                vlan_len += 1;
            }
        },
        events,
    )?;
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
    network_with(link_type, frame, |_| {}, &mut 0)
}

/// The one reading of the link layer: [`parse`] and [`network`] differ only in what
/// they do with each VLAN tag.
#[inline]
fn network_with(
    link_type: u16,
    frame: &[u8],
    mut tag: impl FnMut(u16),
    events: &mut EventSet,
) -> Result<(u16, usize), DecodeEvent> {
    match link_type {
        LINKTYPE_ETHERNET => {
            let (et, off) = ethernet::untag(frame, &mut tag)?;
            inline_layers(frame, et, off, tag, events)
        }
        LINKTYPE_LINUX_SLL => {
            let h = frame
                .get(..SLL_HEADER_LEN)
                .ok_or(DecodeEvent::SllTooSmall)?;
            let et = u16::from_be_bytes([h[14], h[15]]);
            inline_layers(frame, et, SLL_HEADER_LEN, tag, events)
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
        LINKTYPE_PPP => ppp(frame, 0),
        _ => Err(DecodeEvent::UnsupportedLinkType),
    }
}

/// Walks the encapsulations Suricata decodes in place after an ethertype (MPLS,
/// PPPoE, VN-Tag, E-Tag, NSH, and the Ethernet frames MPLS pseudowires and NSH carry),
/// at most [`MAX_LINK_LAYERS`] of them: the ethertype of what follows and its offset.
/// Plain IP costs one comparison.
#[inline]
fn inline_layers(
    frame: &[u8],
    mut et: u16,
    mut off: usize,
    mut tag: impl FnMut(u16),
    events: &mut EventSet,
) -> Result<(u16, usize), DecodeEvent> {
    for _ in 0..MAX_LINK_LAYERS {
        let rest = frame.get(off..).unwrap_or(&[]);
        let (next, len) = match et {
            ethernet::ETHERTYPE_IPV4 | ethernet::ETHERTYPE_IPV6 => return Ok((et, off)),
            ETHERTYPE_MPLS | ETHERTYPE_MPLS_MULTICAST => match mpls(rest, events)? {
                Next::Ethertype(e, l) => (e, l),
                Next::Ethernet(l) => {
                    let (e, inner) = ethernet::untag(&rest[l..], &mut tag)?;
                    (e, l + inner)
                }
            },
            ETHERTYPE_PPPOE_SESSION => pppoe_session(rest)?,
            ETHERTYPE_PPPOE_DISCOVERY => {
                pppoe_discovery(rest)?;
                return Ok((et, off));
            }
            ETHERTYPE_VNTAG => {
                let h = rest
                    .get(..VNTAG_LEN)
                    .ok_or(DecodeEvent::VntagHeaderTooSmall)?;
                (u16::from_be_bytes([h[4], h[5]]), VNTAG_LEN)
            }
            ETHERTYPE_ETAG => {
                let h = rest
                    .get(..ETAG_LEN)
                    .ok_or(DecodeEvent::VlanHeaderTooSmall)?;
                (u16::from_be_bytes([h[6], h[7]]), ETAG_LEN)
            }
            ETHERTYPE_NSH => match nsh(rest)? {
                Next::Ethertype(e, l) => (e, l),
                Next::Ethernet(l) => {
                    let (e, inner) = ethernet::untag(&rest[l..], &mut tag)?;
                    (e, l + inner)
                }
            },
            _ => return Ok((et, off)),
        };
        et = next;
        off += len;
    }
    Err(DecodeEvent::TooManyLayers)
}

/// What an encapsulation carries.
enum Next {
    /// A network protocol (as an ethertype) after `len` bytes.
    Ethertype(u16, usize),
    /// An Ethernet frame after `len` bytes.
    Ethernet(usize),
}

/// An MPLS label stack (RFC 3032) and Suricata's guess at what it carries: IPv4 or
/// IPv6 by explicit-null label or version nibble, else an Ethernet pseudowire after a
/// control word (first nibble 0).
fn mpls(b: &[u8], events: &mut EventSet) -> Result<Next, DecodeEvent> {
    let mut off = 0;
    let mut label;
    let mut labels = 0;
    loop {
        let h = b.get(off..off + 4).ok_or(DecodeEvent::MplsHeaderTooSmall)?;
        label = (u32::from(h[0]) << 12) | (u32::from(h[1]) << 4) | u32::from(h[2] >> 4);
        off += 4;
        labels += 1;
        if h[2] & 0x01 != 0 {
            break;
        }
        if labels == MAX_MPLS_LABELS {
            return Err(DecodeEvent::TooManyLayers);
        }
    }
    match label {
        0 => return Ok(Next::Ethertype(ethernet::ETHERTYPE_IPV4, off)),
        2 => return Ok(Next::Ethertype(ethernet::ETHERTYPE_IPV6, off)),
        1 => *events |= DecodeEvent::MplsBadLabelRouterAlert.bit(),
        3 => *events |= DecodeEvent::MplsBadLabelImplicitNull.bit(),
        4..=15 => *events |= DecodeEvent::MplsBadLabelReserved.bit(),
        _ => {}
    }
    let first = *b.get(off).ok_or(DecodeEvent::MplsPktTooSmall)?;
    match first >> 4 {
        4 => Ok(Next::Ethertype(ethernet::ETHERTYPE_IPV4, off)),
        6 => Ok(Next::Ethertype(ethernet::ETHERTYPE_IPV6, off)),
        0 => {
            // Pseudowire control word, then Ethernet.
            if b.len() < off + 4 + ethernet::HEADER_LEN {
                return Err(DecodeEvent::MplsPktTooSmall);
            }
            Ok(Next::Ethernet(off + 4))
        }
        _ => Err(DecodeEvent::MplsUnknownPayloadType),
    }
}

/// A PPPoE session header and the PPP protocol after it: IPv4 and IPv6 are decoded,
/// other PPP protocols (LCP, IPCP, ...) end decoding.
fn pppoe_session(b: &[u8]) -> Result<(u16, usize), DecodeEvent> {
    let h = b
        .get(..PPPOE_HEADER_LEN + 2)
        .ok_or(DecodeEvent::PppoePktTooSmall)?;
    if h[1] != 0 {
        return Err(DecodeEvent::PppoeWrongCode);
    }
    let (et, len) = ppp(&b[PPPOE_HEADER_LEN..], 0)?;
    Ok((et, PPPOE_HEADER_LEN + len))
}

/// A PPPoE discovery packet: a known code and tags within the payload.
fn pppoe_discovery(b: &[u8]) -> Result<(), DecodeEvent> {
    let h = b
        .get(..PPPOE_HEADER_LEN)
        .ok_or(DecodeEvent::PppoePktTooSmall)?;
    // PADI, PADO, PADR, PADS, PADT.
    if !matches!(h[1], 0x09 | 0x07 | 0x19 | 0x65 | 0xa7) {
        return Err(DecodeEvent::PppoeWrongCode);
    }
    let len = usize::from(u16::from_be_bytes([h[4], h[5]]));
    let tags = b.get(PPPOE_HEADER_LEN..PPPOE_HEADER_LEN + len);
    let tags = tags.ok_or(DecodeEvent::PppoePktTooSmall)?;
    let mut o = 0;
    while o < tags.len() {
        let t = tags.get(o..o + 4).ok_or(DecodeEvent::PppoeMalformedTags)?;
        o += 4 + usize::from(u16::from_be_bytes([t[2], t[3]]));
    }
    if o != tags.len() {
        return Err(DecodeEvent::PppoeMalformedTags);
    }
    Ok(())
}

/// A PPP header (address and control bytes optional, protocol field of one or two
/// bytes) at `off`: the network protocol as an ethertype (0 for PPP's own protocols,
/// which end decoding) and the offset after the header.
fn ppp(frame: &[u8], off: usize) -> Result<(u16, usize), DecodeEvent> {
    let b = frame.get(off..).unwrap_or(&[]);
    let mut o = 0;
    if b.starts_with(&[0xff, 0x03]) {
        o = 2;
    }
    let first = *b.get(o).ok_or(DecodeEvent::PppPktTooSmall)?;
    let proto = if first & 0x01 != 0 {
        // A compressed (one-byte) protocol field.
        o += 1;
        u16::from(first)
    } else {
        let p = b.get(o..o + 2).ok_or(DecodeEvent::PppPktTooSmall)?;
        o += 2;
        u16::from_be_bytes([p[0], p[1]])
    };
    let rest = b.len() - o;
    match proto {
        PPP_IPV4 if rest < crate::ipv4::MIN_HEADER_LEN => Err(DecodeEvent::PppIp4PktTooSmall),
        PPP_IPV4 => Ok((ethernet::ETHERTYPE_IPV4, off + o)),
        PPP_IPV6 if rest < crate::ipv6::HEADER_LEN => Err(DecodeEvent::PppIp6PktTooSmall),
        PPP_IPV6 => Ok((ethernet::ETHERTYPE_IPV6, off + o)),
        // Link and network control protocols (LCP, IPCP, ...): no network layer.
        p if p >= 0x8000 => Ok((0, off + o)),
        _ => Err(DecodeEvent::PppUnsupProto),
    }
}

/// A Network Service Header (RFC 8300): version 0, a length that fits (MD type 1
/// is always 6 words), and its next protocol.
fn nsh(b: &[u8]) -> Result<Next, DecodeEvent> {
    let h = b
        .get(..NSH_BASE_LEN)
        .ok_or(DecodeEvent::NshHeaderTooSmall)?;
    if h[0] >> 6 != 0 {
        return Err(DecodeEvent::NshUnsupportedVersion);
    }
    let len = usize::from(h[1] & 0x3f) * 4;
    let md_type = h[2] & 0x0f;
    match md_type {
        0 | 0x0f => return Err(DecodeEvent::NshReservedType),
        1 if len != 24 => return Err(DecodeEvent::NshBadHeaderLength),
        1 | 2 => {}
        _ => return Err(DecodeEvent::NshUnsupportedType),
    }
    if len < NSH_BASE_LEN {
        return Err(DecodeEvent::NshBadHeaderLength);
    }
    if b.len() < len {
        return Err(DecodeEvent::NshHeaderTooSmall);
    }
    match h[3] {
        1 => Ok(Next::Ethertype(ethernet::ETHERTYPE_IPV4, len)),
        2 => Ok(Next::Ethertype(ethernet::ETHERTYPE_IPV6, len)),
        3 => Ok(Next::Ethernet(len)),
        4 => Ok(Next::Ethertype(ETHERTYPE_NSH, len)),
        5 => Ok(Next::Ethertype(ETHERTYPE_MPLS, len)),
        _ => Err(DecodeEvent::NshUnknownPayload),
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
        let l = parse(LINKTYPE_ETHERNET, &eth, &mut 0).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV4, 18));
        assert_eq!(&l.vlan[..usize::from(l.vlan_len)], &[42]);

        let mut sll = vec![0u8; 14];
        sll.extend_from_slice(&[0x86, 0xdd]);
        let l = parse(LINKTYPE_LINUX_SLL, &sll, &mut 0).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV6, 16));

        // AF_INET6 as Darwin numbers it (30), written in the other byte order.
        let l = parse(LINKTYPE_NULL, &30u32.swap_bytes().to_ne_bytes(), &mut 0).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV6, 4));

        let l = parse(LINKTYPE_RAW_OPENBSD, &[0x60], &mut 0).unwrap();
        assert_eq!((l.ethertype, l.offset), (ethernet::ETHERTYPE_IPV6, 0));
        assert_eq!(
            network(LINKTYPE_ETHERNET, &eth),
            Ok((ethernet::ETHERTYPE_IPV4, 18))
        );
    }

    #[test]
    fn link_errors_are_suricata_events() {
        assert_eq!(
            parse(LINKTYPE_LINUX_SLL, &[0; 15], &mut 0),
            Err(DecodeEvent::SllTooSmall)
        );
        assert_eq!(
            parse(LINKTYPE_NULL, &[2, 0], &mut 0),
            Err(DecodeEvent::NullTooSmall)
        );
        assert_eq!(
            parse(LINKTYPE_NULL, &7u32.to_ne_bytes(), &mut 0),
            Err(DecodeEvent::NullUnsupportedType)
        );
        assert_eq!(
            parse(LINKTYPE_RAW, &[0x50], &mut 0),
            Err(DecodeEvent::IpRawInvalidVersion)
        );
        assert_eq!(
            parse(LINKTYPE_RAW, &[], &mut 0),
            Err(DecodeEvent::IpRawInvalidVersion)
        );
        assert_eq!(
            parse(999, &[0; 64], &mut 0),
            Err(DecodeEvent::UnsupportedLinkType)
        );
    }
}
