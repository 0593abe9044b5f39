//! The symmetric flow hash that picks a packet's detect worker.
//!
//! Both directions of a flow must reach the same worker, so the hash is computed over the
//! endpoints in a canonical order: (lower address+port, higher address+port, protocol).
//! IP fragments carry no ports after the first, so every fragment is hashed on the
//! addresses and protocol only; all fragments of a datagram then meet in one worker, which
//! reassembles them. (The reassembled datagram may then belong to a flow whose unfragmented
//! packets go to another worker; with fragments that is rare and the flows stay correct,
//! only split.)
//!
//! Packets that are not IP (ARP, ...) hash to 0.

/// pcap link types understood here.
pub const LINKTYPE_NULL: u16 = 0;
pub const LINKTYPE_ETHERNET: u16 = 1;
pub const LINKTYPE_RAW: u16 = 101;
pub const LINKTYPE_LINUX_SLL: u16 = 113;
pub const LINKTYPE_IPV4: u16 = 228;
pub const LINKTYPE_IPV6: u16 = 229;
/// DLT_RAW as some BSDs number it.
pub const LINKTYPE_RAW_BSD: u16 = 12;
pub const LINKTYPE_RAW_OPENBSD: u16 = 14;

const MAX_VLAN_TAGS: usize = 4;
const MAX_IPV6_EXT: usize = 8;

#[inline]
fn be16(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

/// Offset of the network layer and its ethertype, per link type.
fn network_layer(link_type: u16, f: &[u8]) -> Option<(u16, usize)> {
    match link_type {
        LINKTYPE_ETHERNET => {
            let mut et = be16(f, 12)?;
            let mut off = 14;
            for _ in 0..MAX_VLAN_TAGS {
                if !matches!(et, 0x8100 | 0x88a8 | 0x9100) {
                    break;
                }
                et = be16(f, off + 2)?;
                off += 4;
            }
            Some((et, off))
        }
        LINKTYPE_LINUX_SLL => Some((be16(f, 14)?, 16)),
        LINKTYPE_NULL => {
            // Address family in the capturing host's byte order.
            let fam = u32::from_ne_bytes(f.get(0..4)?.try_into().ok()?);
            let fam = if fam > 0xffff { fam.swap_bytes() } else { fam };
            match fam {
                2 => Some((0x0800, 4)),
                10 | 24 | 28 | 30 => Some((0x86dd, 4)),
                _ => None,
            }
        }
        LINKTYPE_RAW | LINKTYPE_RAW_BSD | LINKTYPE_RAW_OPENBSD => match f.first()? >> 4 {
            4 => Some((0x0800, 0)),
            6 => Some((0x86dd, 0)),
            _ => None,
        },
        LINKTYPE_IPV4 => Some((0x0800, 0)),
        LINKTYPE_IPV6 => Some((0x86dd, 0)),
        _ => None,
    }
}

/// FNV-1a-style mix of 64-bit words, finished with a murmur3 finalizer.
#[inline]
fn mix(h: u64, w: u64) -> u64 {
    (h ^ w).wrapping_mul(0x0000_0100_0000_01b3)
}

#[inline]
fn finish(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

fn ports(l4: &[u8], proto: u8) -> (u16, u16) {
    match proto {
        6 | 17 | 132 | 136 => (be16(l4, 0).unwrap_or(0), be16(l4, 2).unwrap_or(0)),
        _ => (0, 0),
    }
}

/// Symmetric hash of the packet's flow; 0 for packets that are not IP.
pub fn flow_hash(link_type: u16, frame: &[u8]) -> u64 {
    let Some((ethertype, off)) = network_layer(link_type, frame) else {
        return 0;
    };
    let Some(ip) = frame.get(off..) else {
        return 0;
    };
    match ethertype {
        0x0800 => {
            let (Some(&vihl), Some(src), Some(dst)) = (ip.first(), ip.get(12..16), ip.get(16..20))
            else {
                return 0;
            };
            let ihl = usize::from(vihl & 0x0f) * 4;
            let proto = ip.get(9).copied().unwrap_or(0);
            let frag = be16(ip, 6).unwrap_or(0);
            let fragmented = frag & 0x3fff != 0;
            let (sp, dp) = if fragmented {
                (0, 0)
            } else {
                ip.get(ihl..).map(|l4| ports(l4, proto)).unwrap_or((0, 0))
            };
            let a = (u64::from(u32::from_be_bytes([src[0], src[1], src[2], src[3]])) << 16)
                | u64::from(sp);
            let b = (u64::from(u32::from_be_bytes([dst[0], dst[1], dst[2], dst[3]])) << 16)
                | u64::from(dp);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            finish(mix(
                mix(mix(0xcbf2_9ce4_8422_2325, lo), hi),
                u64::from(proto),
            ))
        }
        0x86dd => {
            let (Some(src), Some(dst)) = (ip.get(8..24), ip.get(24..40)) else {
                return 0;
            };
            let mut next = ip.get(6).copied().unwrap_or(0);
            let mut pos = 40;
            let mut fragmented = false;
            for _ in 0..MAX_IPV6_EXT {
                match next {
                    0 | 43 | 60 => {
                        let (Some(&nh), Some(&len)) = (ip.get(pos), ip.get(pos + 1)) else {
                            break;
                        };
                        next = nh;
                        pos += (usize::from(len) + 1) * 8;
                    }
                    51 => {
                        let (Some(&nh), Some(&len)) = (ip.get(pos), ip.get(pos + 1)) else {
                            break;
                        };
                        next = nh;
                        pos += (usize::from(len) + 2) * 4;
                    }
                    44 => {
                        fragmented = true;
                        next = ip.get(pos).copied().unwrap_or(0);
                        pos += 8;
                    }
                    _ => break,
                }
            }
            let (sp, dp) = if fragmented {
                (0, 0)
            } else {
                ip.get(pos..).map(|l4| ports(l4, next)).unwrap_or((0, 0))
            };
            let word = |b: &[u8], i: usize| {
                u64::from_be_bytes([
                    b[i],
                    b[i + 1],
                    b[i + 2],
                    b[i + 3],
                    b[i + 4],
                    b[i + 5],
                    b[i + 6],
                    b[i + 7],
                ])
            };
            let ka = (word(src, 0), word(src, 8), sp);
            let kb = (word(dst, 0), word(dst, 8), dp);
            let (lo, hi) = if ka <= kb { (ka, kb) } else { (kb, ka) };
            let mut h = 0xcbf2_9ce4_8422_2325;
            for w in [
                lo.0,
                lo.1,
                u64::from(lo.2),
                hi.0,
                hi.1,
                u64::from(hi.2),
                u64::from(next),
            ] {
                h = mix(h, w);
            }
            finish(h)
        }
        _ => 0,
    }
}

/// Maps a hash onto `n` workers (multiply-shift: uniform without a division).
#[inline]
pub fn worker_for(hash: u64, n: usize) -> usize {
    ((u128::from(hash) * n as u128) >> 64) as usize
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::packet;
    use meerkat_synth::session::{TcpSession, frame_ip};
    use std::net::IpAddr;

    #[test]
    fn both_directions_hash_alike() {
        for (c, s) in [
            ("10.0.0.1:40000", "10.0.0.2:80"),
            ("[2001:db8::1]:40000", "[2001:db8::2]:443"),
        ] {
            let mut t = TcpSession::new(c.parse().unwrap(), s.parse().unwrap(), 0);
            t.handshake();
            t.client_sends(b"hi").server_sends(b"there");
            let frames = t.into_frames();
            let h0 = flow_hash(LINKTYPE_ETHERNET, &frames[0].data);
            assert_ne!(h0, 0);
            for f in &frames {
                assert_eq!(flow_hash(LINKTYPE_ETHERNET, &f.data), h0);
            }
        }
    }

    #[test]
    fn vlan_and_raw_links_see_the_same_flow() {
        let s: IpAddr = "10.1.1.1".parse().unwrap();
        let d: IpAddr = "10.2.2.2".parse().unwrap();
        let u = packet::udp(s, d, 5000, 53, b"q");
        let ip = packet::ip(s, d, packet::PROTO_UDP, 64, 1, &u);
        let eth = frame_ip(s, d, None, &ip);
        let vlan = frame_ip(s, d, Some(42), &ip);
        let h = flow_hash(LINKTYPE_ETHERNET, &eth);
        assert_eq!(flow_hash(LINKTYPE_ETHERNET, &vlan), h);
        assert_eq!(flow_hash(LINKTYPE_RAW, &ip), h);
        assert_eq!(flow_hash(LINKTYPE_IPV4, &ip), h);
        let mut sll = vec![0u8; 16];
        sll[14..16].copy_from_slice(&0x0800u16.to_be_bytes());
        sll.extend_from_slice(&ip);
        assert_eq!(flow_hash(LINKTYPE_LINUX_SLL, &sll), h);
        let mut null = 2u32.to_ne_bytes().to_vec();
        null.extend_from_slice(&ip);
        assert_eq!(flow_hash(LINKTYPE_NULL, &null), h);
    }

    #[test]
    fn fragments_hash_on_addresses_only() {
        let s: IpAddr = "10.1.1.1".parse().unwrap();
        let d: IpAddr = "10.2.2.2".parse().unwrap();
        let u = packet::udp(s, d, 5000, 53, b"q");
        let mut first = packet::ip(s, d, packet::PROTO_UDP, 64, 1, &u);
        first[6] = 0x20; // MF
        let mut later = first.clone();
        later[6] = 0x00;
        later[7] = 0x10; // offset 128 bytes, no ports in the payload
        later[20..].fill(0xee);
        assert_eq!(
            flow_hash(LINKTYPE_RAW, &first),
            flow_hash(LINKTYPE_RAW, &later)
        );
    }

    #[test]
    fn garbage_never_panics() {
        for lt in [0, 1, 12, 14, 101, 113, 228, 229, 999] {
            for len in 0..80 {
                let f: Vec<u8> = (0..len).map(|i| (i * 7 + lt as usize) as u8).collect();
                let _ = flow_hash(lt, &f);
                let mut v4 = f.clone();
                if let Some(b) = v4.first_mut() {
                    *b = 0x4f;
                }
                let _ = flow_hash(LINKTYPE_RAW, &v4);
                let mut v6 = f.clone();
                if let Some(b) = v6.first_mut() {
                    *b = 0x60;
                }
                let _ = flow_hash(LINKTYPE_RAW, &v6);
            }
        }
    }

    #[test]
    fn spreads_flows_evenly() {
        let mut counts = [0usize; 4];
        for i in 0..4000u32 {
            let s: IpAddr = std::net::Ipv4Addr::from(0x0a00_0000 + i).into();
            let d: IpAddr = "192.0.2.1".parse().unwrap();
            let u = packet::udp(s, d, 1024 + (i % 5000) as u16, 53, b"");
            let ip = packet::ip(s, d, packet::PROTO_UDP, 64, 1, &u);
            counts[worker_for(flow_hash(LINKTYPE_RAW, &ip), 4)] += 1;
        }
        for c in counts {
            assert!((800..1200).contains(&c), "{counts:?}");
        }
    }
}
