//! Ethernet II frames with any number (up to [`MAX_VLAN_LAYERS`]) of 802.1Q/802.1ad tags.

use super::DecodeEvent;

pub const HEADER_LEN: usize = 14;
pub const MAX_VLAN_LAYERS: usize = 3;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_ARP: u16 = 0x0806;
pub const ETHERTYPE_VLAN: u16 = 0x8100;
pub const ETHERTYPE_QINQ: u16 = 0x88a8;
pub const ETHERTYPE_QINQ_OLD: u16 = 0x9100;
pub const ETHERTYPE_IPV6: u16 = 0x86dd;

mod field {
    use std::ops::Range;
    pub const DST: Range<usize> = 0..6;
    pub const SRC: Range<usize> = 6..12;
    pub const ETHERTYPE: Range<usize> = 12..14;
}

/// A read-only view of an Ethernet frame.
#[derive(Debug, Clone, Copy)]
pub struct Frame<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Frame<T> {
    /// Checks the length once, so no getter can fail later.
    #[inline]
    pub fn new_checked(buf: T) -> Result<Self, DecodeEvent> {
        if buf.as_ref().len() < HEADER_LEN {
            return Err(DecodeEvent::EthernetTooSmall);
        }
        Ok(Frame { buf })
    }
    #[inline]
    pub fn dst(&self) -> [u8; 6] {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buf.as_ref()[field::DST]);
        m
    }
    #[inline]
    pub fn src(&self) -> [u8; 6] {
        let mut m = [0; 6];
        m.copy_from_slice(&self.buf.as_ref()[field::SRC]);
        m
    }
    #[inline]
    pub fn ethertype(&self) -> u16 {
        let b = &self.buf.as_ref()[field::ETHERTYPE];
        u16::from_be_bytes([b[0], b[1]])
    }
}

/// The ethertype after the VLAN tags, the tags, and the offset of the payload.
#[derive(Debug, Clone, Copy)]
pub struct Untagged {
    pub ethertype: u16,
    pub vlan: [u16; MAX_VLAN_LAYERS],
    pub vlan_len: u8,
    pub payload_offset: usize,
}

/// Walks the frame's VLAN tags (at most [`MAX_VLAN_LAYERS`]): returns the ethertype after
/// them and the offset of the payload, and hands each tag's VLAN id to `tag`, outermost
/// first. The one walker of tags: [`parse`] keeps them, the flow hash needs none.
#[inline]
pub fn untag(frame: &[u8], mut tag: impl FnMut(u16)) -> Result<(u16, usize), DecodeEvent> {
    let f = Frame::new_checked(frame)?;
    let mut ethertype = f.ethertype();
    let mut offset = HEADER_LEN;
    let mut tags = 0;
    while matches!(
        ethertype,
        ETHERTYPE_VLAN | ETHERTYPE_QINQ | ETHERTYPE_QINQ_OLD
    ) {
        if tags == MAX_VLAN_LAYERS {
            return Err(DecodeEvent::VlanTooManyLayers);
        }
        let t = frame
            .get(offset..offset + 4)
            .ok_or(DecodeEvent::VlanHeaderTooSmall)?;
        tag(u16::from_be_bytes([t[0], t[1]]) & 0x0fff);
        tags += 1;
        ethertype = u16::from_be_bytes([t[2], t[3]]);
        offset += 4;
    }
    Ok((ethertype, offset))
}

/// The ethertype after the VLAN tags, the tags, and the payload's offset.
#[inline]
pub fn parse(frame: &[u8]) -> Result<Untagged, DecodeEvent> {
    let mut vlan = [0; MAX_VLAN_LAYERS];
    let mut vlan_len = 0u8;
    let (ethertype, payload_offset) = untag(frame, |id| {
        // `untag` stops before a tag past the array.
        if let Some(slot) = vlan.get_mut(usize::from(vlan_len)) {
            *slot = id;
        }
        vlan_len += 1;
    })?;
    Ok(Untagged {
        ethertype,
        vlan,
        vlan_len,
        payload_offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untags_qinq() {
        // dst, src, 0x88a8 tag 100, 0x8100 tag 200, IPv4
        let f = [
            0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x88, 0xa8, 0x00, 0x64, 0x81, 0x00, 0x00, 0xc8,
            0x08, 0x00, 0x45,
        ];
        let u = parse(&f).unwrap();
        assert_eq!(u.ethertype, ETHERTYPE_IPV4);
        assert_eq!(&u.vlan[..usize::from(u.vlan_len)], &[100, 200]);
        assert_eq!(u.payload_offset, 22);
        let fr = Frame::new_checked(&f[..]).unwrap();
        assert_eq!(fr.src(), [6, 7, 8, 9, 10, 11]);
        assert_eq!(fr.dst(), [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn short_frames() {
        assert_eq!(parse(&[0; 13]).err(), Some(DecodeEvent::EthernetTooSmall));
        let mut f = [0u8; 16];
        f[12] = 0x81;
        assert_eq!(parse(&f).err(), Some(DecodeEvent::VlanHeaderTooSmall));
    }
}
