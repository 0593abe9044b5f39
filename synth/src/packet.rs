//! Frame builders with correct checksums.

use std::net::IpAddr;

pub const ETHERTYPE_IPV4: u16 = 0x0800;
pub const ETHERTYPE_IPV6: u16 = 0x86dd;
pub const ETHERTYPE_VLAN: u16 = 0x8100;

pub const PROTO_ICMP: u8 = 1;
pub const PROTO_TCP: u8 = 6;
pub const PROTO_UDP: u8 = 17;
pub const PROTO_ICMPV6: u8 = 58;

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;

/// Internet checksum (RFC 1071) over `parts` taken as one byte string.
pub fn checksum(parts: &[&[u8]]) -> u16 {
    let mut sum: u32 = 0;
    let mut odd: Option<u8> = None;
    for part in parts {
        for &b in *part {
            match odd.take() {
                Some(hi) => sum += u32::from(u16::from_be_bytes([hi, b])),
                None => odd = Some(b),
            }
        }
    }
    if let Some(hi) = odd {
        sum += u32::from(u16::from_be_bytes([hi, 0]));
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

fn pseudo_header(src: IpAddr, dst: IpAddr, proto: u8, len: usize) -> Vec<u8> {
    let mut p = Vec::with_capacity(40);
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
            p.push(0);
            p.push(proto);
            p.extend_from_slice(&(len as u16).to_be_bytes());
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            p.extend_from_slice(&s.octets());
            p.extend_from_slice(&d.octets());
            p.extend_from_slice(&(len as u32).to_be_bytes());
            p.extend_from_slice(&[0, 0, 0, proto]);
        }
        _ => panic!("mixed address families"),
    }
    p
}

/// Ethernet II frame.
pub fn ethernet(src: [u8; 6], dst: [u8; 6], ethertype: u16, payload: &[u8]) -> Vec<u8> {
    let mut f = Vec::with_capacity(14 + payload.len());
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&ethertype.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// Ethernet frame with one 802.1Q tag.
pub fn ethernet_vlan(
    src: [u8; 6],
    dst: [u8; 6],
    vlan: u16,
    ethertype: u16,
    payload: &[u8],
) -> Vec<u8> {
    let mut inner = Vec::with_capacity(4 + payload.len());
    inner.extend_from_slice(&(vlan & 0x0fff).to_be_bytes());
    inner.extend_from_slice(&ethertype.to_be_bytes());
    inner.extend_from_slice(payload);
    ethernet(src, dst, ETHERTYPE_VLAN, &inner)
}

/// IPv4 packet (no options, don't-fragment set) around `payload`.
pub fn ipv4(src: [u8; 4], dst: [u8; 4], proto: u8, ttl: u8, id: u16, payload: &[u8]) -> Vec<u8> {
    let total = 20 + payload.len();
    let mut h = vec![
        0x45,
        0,
        (total >> 8) as u8,
        total as u8,
        (id >> 8) as u8,
        id as u8,
        0x40,
        0,
        ttl,
        proto,
        0,
        0,
    ];
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    let c = checksum(&[&h]);
    h[10..12].copy_from_slice(&c.to_be_bytes());
    h.extend_from_slice(payload);
    h
}

/// IPv6 packet around `payload`.
pub fn ipv6(src: [u8; 16], dst: [u8; 16], next: u8, hop_limit: u8, payload: &[u8]) -> Vec<u8> {
    let mut h = Vec::with_capacity(40 + payload.len());
    h.extend_from_slice(&[0x60, 0, 0, 0]);
    h.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    h.push(next);
    h.push(hop_limit);
    h.extend_from_slice(&src);
    h.extend_from_slice(&dst);
    h.extend_from_slice(payload);
    h
}

/// IP packet of either family.
pub fn ip(src: IpAddr, dst: IpAddr, proto: u8, ttl: u8, id: u16, payload: &[u8]) -> Vec<u8> {
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => ipv4(s.octets(), d.octets(), proto, ttl, id, payload),
        (IpAddr::V6(s), IpAddr::V6(d)) => ipv6(s.octets(), d.octets(), proto, ttl, payload),
        _ => panic!("mixed address families"),
    }
}

/// TCP segment fields.
#[derive(Debug, Clone, Copy)]
pub struct TcpHeader {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    pub window: u16,
}

/// TCP segment (with an MSS option on SYNs) and its checksum for `src`/`dst`.
pub fn tcp(src: IpAddr, dst: IpAddr, h: &TcpHeader, payload: &[u8]) -> Vec<u8> {
    let opts: &[u8] = if h.flags & SYN != 0 {
        &[2, 4, 0x05, 0xb4]
    } else {
        &[]
    };
    let hlen = 20 + opts.len();
    let mut s = Vec::with_capacity(hlen + payload.len());
    s.extend_from_slice(&h.src_port.to_be_bytes());
    s.extend_from_slice(&h.dst_port.to_be_bytes());
    s.extend_from_slice(&h.seq.to_be_bytes());
    s.extend_from_slice(&h.ack.to_be_bytes());
    s.push(((hlen / 4) as u8) << 4);
    s.push(h.flags);
    s.extend_from_slice(&h.window.to_be_bytes());
    s.extend_from_slice(&[0, 0, 0, 0]);
    s.extend_from_slice(opts);
    s.extend_from_slice(payload);
    let ph = pseudo_header(src, dst, PROTO_TCP, s.len());
    let c = checksum(&[&ph, &s]);
    s[16..18].copy_from_slice(&c.to_be_bytes());
    s
}

/// UDP datagram and its checksum for `src`/`dst`.
pub fn udp(src: IpAddr, dst: IpAddr, src_port: u16, dst_port: u16, payload: &[u8]) -> Vec<u8> {
    let len = 8 + payload.len();
    let mut d = Vec::with_capacity(len);
    d.extend_from_slice(&src_port.to_be_bytes());
    d.extend_from_slice(&dst_port.to_be_bytes());
    d.extend_from_slice(&(len as u16).to_be_bytes());
    d.extend_from_slice(&[0, 0]);
    d.extend_from_slice(payload);
    let ph = pseudo_header(src, dst, PROTO_UDP, len);
    let mut c = checksum(&[&ph, &d]);
    if c == 0 {
        c = 0xffff;
    }
    d[6..8].copy_from_slice(&c.to_be_bytes());
    d
}

/// ICMPv4 message (type, code, rest-of-header id/seq, data).
pub fn icmpv4(icmp_type: u8, code: u8, id: u16, seq: u16, data: &[u8]) -> Vec<u8> {
    let mut m = vec![icmp_type, code, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(data);
    let c = checksum(&[&m]);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

/// ICMPv6 message with its pseudo-header checksum.
pub fn icmpv6(
    src: [u8; 16],
    dst: [u8; 16],
    icmp_type: u8,
    code: u8,
    id: u16,
    seq: u16,
    data: &[u8],
) -> Vec<u8> {
    let mut m = vec![icmp_type, code, 0, 0];
    m.extend_from_slice(&id.to_be_bytes());
    m.extend_from_slice(&seq.to_be_bytes());
    m.extend_from_slice(data);
    let ph = pseudo_header(src.into(), dst.into(), PROTO_ICMPV6, m.len());
    let c = checksum(&[&ph, &m]);
    m[2..4].copy_from_slice(&c.to_be_bytes());
    m
}

/// A MAC address derived from an IP address (stable, locally administered).
pub fn mac_for(addr: IpAddr) -> [u8; 6] {
    let b = match addr {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets()[12..].to_vec(),
    };
    [0x02, 0x00, b[0], b[1], b[2], b[3]]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ipv4_header_checksum_verifies() {
        let p = ipv4([10, 0, 0, 1], [10, 0, 0, 2], PROTO_UDP, 64, 1, b"");
        assert_eq!(checksum(&[&p[..20]]), 0);
    }

    #[test]
    fn rfc1071_example() {
        // RFC 1071 section 3 example words: 0001 f203 f4f5 f6f7 -> sum ddf2, checksum 220d.
        assert_eq!(
            checksum(&[&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]]),
            0x220d
        );
    }

    #[test]
    fn tcp_checksum_verifies_with_pseudo_header() {
        let s: IpAddr = "192.168.1.2".parse().unwrap();
        let d: IpAddr = "192.168.1.3".parse().unwrap();
        let h = TcpHeader {
            src_port: 1234,
            dst_port: 80,
            seq: 1,
            ack: 0,
            flags: SYN,
            window: 65535,
        };
        let seg = tcp(s, d, &h, b"");
        let ph = pseudo_header(s, d, PROTO_TCP, seg.len());
        assert_eq!(checksum(&[&ph, &seg]), 0);
    }
}
