//! Internet checksums (RFC 1071) for validation.

use std::net::IpAddr;

/// One's-complement sum of `data` added to `initial` (not folded).
pub fn sum(data: &[u8], initial: u64) -> u64 {
    let mut acc = initial;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        // Sum 16-bit words four at a time; the carry is folded later.
        let w = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        acc += (w >> 48) + ((w >> 32) & 0xffff) + ((w >> 16) & 0xffff) + (w & 0xffff);
    }
    let rest = chunks.remainder();
    let mut pairs = rest.chunks_exact(2);
    for p in &mut pairs {
        acc += u64::from(u16::from_be_bytes([p[0], p[1]]));
    }
    if let [last] = pairs.remainder() {
        acc += u64::from(*last) << 8;
    }
    acc
}

/// Folds a sum to 16 bits.
#[inline]
pub fn fold(mut acc: u64) -> u16 {
    while acc > 0xffff {
        acc = (acc & 0xffff) + (acc >> 16);
    }
    acc as u16
}

fn pseudo(src: IpAddr, dst: IpAddr, proto: u8, len: usize) -> u64 {
    let mut acc = 0;
    match (src, dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            acc = sum(&s.octets(), acc);
            acc = sum(&d.octets(), acc);
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            acc = sum(&s.octets(), acc);
            acc = sum(&d.octets(), acc);
        }
        _ => {}
    }
    acc + u64::from(proto) + len as u64
}

/// Whether a TCP/UDP/ICMPv6 checksum over `segment` verifies with the pseudo-header.
pub fn transport_ok(src: IpAddr, dst: IpAddr, proto: u8, segment: &[u8]) -> bool {
    fold(sum(segment, pseudo(src, dst, proto, segment.len()))) == 0xffff
}

/// Whether an ICMPv4 checksum verifies (no pseudo-header).
pub fn icmpv4_ok(message: &[u8]) -> bool {
    fold(sum(message, 0)) == 0xffff
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifies_generated_segments() {
        let s: IpAddr = "2001:db8::1".parse().unwrap();
        let d: IpAddr = "2001:db8::2".parse().unwrap();
        for n in 0..40 {
            let payload: Vec<u8> = (0..n).map(|i| (i as u8).wrapping_mul(13)).collect();
            let mut u = meerkat_synth::packet::udp(s, d, 1, 2, &payload);
            assert!(transport_ok(s, d, 17, &u), "len {n}");
            let i = 8 % u.len();
            u[i] ^= 1;
            assert!(!transport_ok(s, d, 17, &u));
        }
        let m = meerkat_synth::packet::icmpv4(8, 0, 1, 2, b"odd");
        assert!(icmpv4_ok(&m));
    }
}
