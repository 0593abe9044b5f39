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
//! The packet is read with `meerkat-wire`'s views, as the detect workers read it, so the
//! hash sees the endpoints and protocol a worker's flow table keys on: the same VLAN tags
//! (up to 3), the same IPv6 extension-header chain (up to 16 headers, an atomic fragment
//! header - offset 0, no more fragments - is not a fragment), ports only for TCP and UDP.
//! A fragment is hashed on its addresses and the protocol the decoder finds: for IPv6
//! the header after the chain of a first fragment, the fragment header's next header in
//! a later one. (A datagram whose first fragment has more extension headers after its
//! fragment header, which RFC 8200 allows but senders do not use, has its fragments
//! hashed apart, as before.) Portless protocols (ICMP) so keep their fragments and their
//! whole packets in one worker.
//!
//! An ICMPv4 destination-unreachable message is hashed on the TCP or UDP packet it
//! reports on (as [`meerkat_wire::icmp::unreachable_flow`] reads it), so that it meets
//! that packet's flow, which it belongs to, in one worker.
//!
//! Packets that are not IP (ARP, ...), and packets whose link or IP layer the decoder
//! rejects (which a worker counts as a decoder event and puts in no flow), hash to 0.
//!
//! A tunnelled packet (GRE, ERSPAN, VXLAN, Geneve, Teredo, IP-in-IP: what the decoder
//! opens, found by the same `meerkat_wire::tunnel` functions, at most
//! `MAX_TUNNEL_DEPTH` deep) is hashed on its innermost flow, so that both directions
//! of a tunnelled flow meet in the worker that tracks it. (The tunnel's own outer flow,
//! a UDP flow for VXLAN, then has its packets spread over the workers of the flows it
//! carries: each worker sees the outer packets of its inner flows.)

use meerkat_wire::tunnel::{self, MAX_TUNNEL_DEPTH, TunnelPorts};
use meerkat_wire::{PROTO_ICMP, PROTO_TCP, PROTO_UDP, ethernet, icmp, ipv4, ipv6, link, tcp, udp};

/// The FNV-1a offset basis the hash starts from.
const SEED: u64 = 0xcbf2_9ce4_8422_2325;

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

/// Source and destination ports of a TCP segment or UDP datagram (0, 0 for other
/// protocols, and for a header the decoder rejects).
#[inline]
fn ports(proto: u8, l4: &[u8]) -> (u16, u16) {
    match proto {
        PROTO_TCP => tcp::Segment::new_checked(l4).map_or((0, 0), |s| (s.src_port(), s.dst_port())),
        PROTO_UDP => {
            udp::Datagram::new_checked(l4).map_or((0, 0), |d| (d.src_port(), d.dst_port()))
        }
        _ => (0, 0),
    }
}

/// Symmetric hash of the packet's flow (its innermost one, for a tunnelled packet;
/// with the default tunnel ports); 0 for packets that are not IP.
pub fn flow_hash(link_type: u16, frame: &[u8]) -> u64 {
    flow_hash_with(&TunnelPorts::DEFAULT, link_type, frame)
}

/// What one layer of a packet hashes to: its flow's hash, or a tunnelled frame.
enum Layer<'a> {
    Hash(u64),
    Inner(u16, &'a [u8]),
}

/// [`flow_hash`] with the UDP tunnels looked for on `ports` (the workers' setting).
pub fn flow_hash_with(ports: &TunnelPorts, link_type: u16, frame: &[u8]) -> u64 {
    let (mut lt, mut f) = (link_type, frame);
    for depth in 0..=MAX_TUNNEL_DEPTH {
        // The decoder opens no tunnel below the deepest layer.
        let ports = (depth < MAX_TUNNEL_DEPTH).then_some(ports);
        let Ok((ethertype, offset)) = link::network(lt, f) else {
            return 0;
        };
        let Some(net) = f.get(offset..) else {
            return 0;
        };
        let layer = match ethertype {
            ethernet::ETHERTYPE_IPV4 => ipv4_hash(net, ports),
            ethernet::ETHERTYPE_IPV6 => ipv6_hash(net, ports),
            _ => return 0,
        };
        match layer {
            Layer::Hash(h) => return h,
            Layer::Inner(l, inner) => (lt, f) = (l, inner),
        }
    }
    0
}

/// The frame a packet of IP protocol `proto` with payload `l4` carries, as the decoder
/// finds it (`None` for an untunnelled packet, or when tunnels are not looked for).
#[inline]
fn tunnelled<'a>(
    ports: Option<&TunnelPorts>,
    version: u8,
    proto: u8,
    l4: &'a [u8],
) -> Option<(u16, &'a [u8])> {
    let ports = ports?;
    let mut events = 0;
    let e = match proto {
        PROTO_UDP => {
            let d = udp::Datagram::new_checked(l4).ok()?;
            let e = tunnel::over_udp(
                ports,
                d.src_port(),
                d.dst_port(),
                d.payload(),
                udp::HEADER_LEN,
                &mut events,
            )?;
            return Some((e.link_type, l4.get(e.start..e.end)?));
        }
        4 | 41 | 47 => tunnel::over_ip(version, proto, l4, 0, &mut events).ok()??,
        _ => return None,
    };
    Some((e.link_type, l4.get(e.start..e.end)?))
}

#[inline]
fn ipv4_hash<'a>(b: &'a [u8], tunnels: Option<&TunnelPorts>) -> Layer<'a> {
    let Ok(v) = ipv4::Packet::new_checked(b) else {
        return Layer::Hash(0);
    };
    let proto = v.protocol();
    let fragmented = v.more_frags() || v.frag_offset() != 0;
    let (sp, dp) = if fragmented {
        (0, 0)
    } else {
        // The payload, borrowed from `b` (not from the view) to outlive it.
        let l4 = b.get(v.header_len()..v.total_len()).unwrap_or(&[]);
        if let Some((lt, inner)) = tunnelled(tunnels, 4, proto, l4) {
            return Layer::Inner(lt, inner);
        }
        // A destination-unreachable message goes to the worker of the flow it reports
        // on, which it belongs to.
        if proto == PROTO_ICMP
            && let Some(&[icmp::DEST_UNREACH, code, ..]) = l4.get(..icmp::HEADER_LEN)
            && let Some(r) = icmp::unreachable_flow(code, &l4[icmp::HEADER_LEN..])
        {
            let a = (u64::from(u32::from_be_bytes(r.src)) << 16) | u64::from(r.src_port);
            let b = (u64::from(u32::from_be_bytes(r.dst)) << 16) | u64::from(r.dst_port);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            return Layer::Hash(finish(mix(mix(mix(SEED, lo), hi), u64::from(r.proto))));
        }
        ports(proto, v.payload())
    };
    let a = (u64::from(u32::from(v.src())) << 16) | u64::from(sp);
    let b = (u64::from(u32::from(v.dst())) << 16) | u64::from(dp);
    let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
    Layer::Hash(finish(mix(mix(mix(SEED, lo), hi), u64::from(proto))))
}

#[inline]
fn ipv6_hash<'a>(b: &'a [u8], tunnels: Option<&TunnelPorts>) -> Layer<'a> {
    let Ok(v) = ipv6::Packet::new_checked(b) else {
        return Layer::Hash(0);
    };
    // The anomalies the chain raises are the worker's business.
    let mut events = 0;
    let Ok(upper) = ipv6::skip_extensions(v.next_header(), v.payload(), &mut events) else {
        return Layer::Hash(0);
    };
    let (sp, dp) = if upper.fragment.is_some() {
        (0, 0)
    } else {
        // The payload, borrowed from `b` (not from the view) to outlive it.
        let end = ipv6::HEADER_LEN + v.payload_len();
        let l4 = b.get(ipv6::HEADER_LEN + upper.offset..end).unwrap_or(&[]);
        if let Some((lt, inner)) = tunnelled(tunnels, 6, upper.protocol, l4) {
            return Layer::Inner(lt, inner);
        }
        ports(upper.protocol, l4)
    };
    let proto = upper.protocol;
    let words = |a: std::net::Ipv6Addr| {
        let a = u128::from(a);
        ((a >> 64) as u64, a as u64)
    };
    let (s0, s1) = words(v.src());
    let (d0, d1) = words(v.dst());
    let ka = (s0, s1, sp);
    let kb = (d0, d1, dp);
    let (lo, hi) = if ka <= kb { (ka, kb) } else { (kb, ka) };
    let mut h = SEED;
    for w in [
        lo.0,
        lo.1,
        u64::from(lo.2),
        hi.0,
        hi.1,
        u64::from(hi.2),
        u64::from(proto),
    ] {
        h = mix(h, w);
    }
    Layer::Hash(finish(h))
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
    use meerkat_wire::link::{
        LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_LINUX_SLL, LINKTYPE_NULL, LINKTYPE_RAW,
    };
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
    fn an_unreachable_report_meets_the_flow_it_reports_on() {
        let c: IpAddr = "10.1.1.1".parse().unwrap();
        let s: IpAddr = "10.2.2.2".parse().unwrap();
        let router: IpAddr = "10.9.9.9".parse().unwrap();
        let u = packet::udp(c, s, 5000, 9999, b"knock");
        let ip = packet::ip(c, s, packet::PROTO_UDP, 64, 1, &u);
        let h = flow_hash(LINKTYPE_RAW, &ip);
        // ICMP type 3 code 3 (port unreachable), checksum left 0, then the
        // reported IP header and 8 bytes of its payload.
        let report = |from: IpAddr, icmp_type: u8| {
            let mut icmp = vec![icmp_type, 3, 0, 0, 0, 0, 0, 0];
            icmp.extend_from_slice(&ip[..28]);
            packet::ip(from, c, 1, 64, 2, &icmp)
        };
        assert_eq!(flow_hash(LINKTYPE_RAW, &report(s, 3)), h);
        assert_eq!(flow_hash(LINKTYPE_RAW, &report(router, 3)), h);
        // Another error type hashes on its own addresses.
        assert_ne!(flow_hash(LINKTYPE_RAW, &report(router, 11)), h);
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

    /// An IPv6 packet from 2001:db8::1 to 2001:db8::2 whose payload is `exts` (extension
    /// headers, `first` the first one's type) and then `l4`.
    fn ipv6_with(first: u8, exts: &[u8], l4: &[u8]) -> Vec<u8> {
        let mut payload = exts.to_vec();
        payload.extend_from_slice(l4);
        let mut a = [0u8; 16];
        a[..4].copy_from_slice(&[0x20, 0x01, 0x0d, 0xb8]);
        let mut b = a;
        a[15] = 1;
        b[15] = 2;
        packet::ipv6(a, b, first, 64, &payload)
    }

    fn udp6(sp: u16, dp: u16) -> Vec<u8> {
        let (s, d): (IpAddr, IpAddr) = (
            "2001:db8::1".parse().unwrap(),
            "2001:db8::2".parse().unwrap(),
        );
        packet::udp(s, d, sp, dp, b"data")
    }

    /// A destination-options header (8 bytes) followed by `next`.
    fn dstopts(next: u8) -> [u8; 8] {
        [next, 0, 1, 4, 0, 0, 0, 0]
    }

    /// A fragment header followed by `next`, at byte `offset`, with M set or not.
    fn frag(next: u8, offset: u16, more: bool, id: u32) -> Vec<u8> {
        let mut h = vec![next, 0];
        h.extend_from_slice(&((offset / 8) << 3 | u16::from(more)).to_be_bytes());
        h.extend_from_slice(&id.to_be_bytes());
        h
    }

    #[test]
    fn ipv6_fragments_meet_their_datagram_and_its_flow() {
        // As in suricata-verify's ipv6-malformed-fragments-35: a first fragment whose
        // fragment header is followed by a second one (skipped, `exthdr_dupl_fh`), and a
        // later fragment of it.
        let mut first_ext = frag(44, 0, true, 0xaaaa);
        first_ext.extend_from_slice(&frag(58, 0, true, 0xbbbb));
        let first = ipv6_with(44, &first_ext, &[0x80, 0, 0, 0, 1, 2, 3, 4]);
        let later = ipv6_with(44, &frag(58, 208, false, 0xaaaa), &[0x41; 16]);
        let h = flow_hash(LINKTYPE_RAW, &first);
        assert_ne!(h, 0);
        assert_eq!(flow_hash(LINKTYPE_RAW, &later), h);
        // ICMPv6 has no ports: a whole echo of the same hosts goes where its fragments go.
        let whole = ipv6_with(58, &[], &[0x81, 0, 0, 0, 1, 2, 3, 4]);
        assert_eq!(flow_hash(LINKTYPE_RAW, &whole), h);
    }

    #[test]
    fn ipv6_chains_hash_as_the_decoder_reads_them() {
        let plain = ipv6_with(17, &[], &udp6(5000, 53));
        let h = flow_hash(LINKTYPE_RAW, &plain);
        // An atomic fragment (offset 0, no more fragments) is a whole packet: its flow.
        let atomic = ipv6_with(44, &frag(17, 0, false, 7), &udp6(5000, 53));
        assert_eq!(flow_hash(LINKTYPE_RAW, &atomic), h);
        // Twelve destination-options headers (more than 8, fewer than 16): still the flow.
        let mut exts = Vec::new();
        for _ in 0..11 {
            exts.extend_from_slice(&dstopts(60));
        }
        exts.extend_from_slice(&dstopts(17));
        let long = ipv6_with(60, &exts, &udp6(5000, 53));
        assert_eq!(flow_hash(LINKTYPE_RAW, &long), h);
        // A chain the decoder rejects (truncated) is not hashed.
        let cut = ipv6_with(60, &[17, 1, 0, 0], &[]);
        assert_eq!(flow_hash(LINKTYPE_RAW, &cut), 0);
    }

    #[test]
    fn vlan_limit_is_the_decoders() {
        let s: IpAddr = "10.1.1.1".parse().unwrap();
        let d: IpAddr = "10.2.2.2".parse().unwrap();
        let u = packet::udp(s, d, 5000, 53, b"q");
        let ip = packet::ip(s, d, packet::PROTO_UDP, 64, 1, &u);
        let tagged = |tags: usize| {
            let mut f = vec![0u8; 12];
            for t in 0..tags {
                f.extend_from_slice(&[0x81, 0x00, 0x00, t as u8 + 1]);
            }
            f.extend_from_slice(&[0x08, 0x00]);
            f.extend_from_slice(&ip);
            f
        };
        let h = flow_hash(LINKTYPE_RAW, &ip);
        assert_eq!(flow_hash(LINKTYPE_ETHERNET, &tagged(3)), h);
        // Four tags: `decoder.vlan.too_many_layers` in the worker, no flow.
        assert_eq!(flow_hash(LINKTYPE_ETHERNET, &tagged(4)), 0);
    }

    #[test]
    fn tunnelled_flows_hash_on_the_inner_flow() {
        let (a, b): (IpAddr, IpAddr) = ("10.1.0.1".parse().unwrap(), "10.1.0.2".parse().unwrap());
        let inner = |rev: bool| {
            let (s, d, sp, dp) = if rev {
                (b, a, 80, 4000)
            } else {
                (a, b, 4000, 80)
            };
            packet::ip(
                s,
                d,
                packet::PROTO_UDP,
                64,
                1,
                &packet::udp(s, d, sp, dp, b"x"),
            )
        };
        let (o1, o2): (IpAddr, IpAddr) =
            ("192.0.2.1".parse().unwrap(), "192.0.2.9".parse().unwrap());
        let plain = flow_hash(LINKTYPE_RAW, &inner(false));
        assert_eq!(flow_hash(LINKTYPE_RAW, &inner(true)), plain);
        for rev in [false, true] {
            // Each direction in another outer flow (other tunnel endpoints, ports).
            let (s, d, sp) = if rev { (o2, o1, 5555) } else { (o1, o2, 6666) };
            let mut vx = vec![0x08, 0, 0, 0, 0, 0, 1, 0];
            vx.extend_from_slice(&packet::ethernet([1; 6], [2; 6], 0x0800, &inner(rev)));
            let udp = packet::udp(s, d, sp, 4789, &vx);
            let outer = packet::ip(s, d, packet::PROTO_UDP, 64, 1, &udp);
            assert_eq!(flow_hash(LINKTYPE_RAW, &outer), plain);
            let mut gre = vec![0, 0, 0x08, 0x00];
            gre.extend_from_slice(&inner(rev));
            let outer = packet::ip(s, d, 47, 64, 1, &gre);
            assert_eq!(flow_hash(LINKTYPE_RAW, &outer), plain);
            let ipip = packet::ip(s, d, 4, 64, 1, &inner(rev));
            assert_eq!(
                flow_hash(LINKTYPE_RAW, &packet::ip(d, s, 4, 64, 1, &ipip)),
                plain
            );
        }
        // A tunnel bomb hashes without looping past the decoder's depth.
        let mut f = inner(false);
        for _ in 0..40 {
            f = packet::ip(o1, o2, 4, 64, 1, &f);
        }
        let _ = flow_hash(LINKTYPE_RAW, &f);
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
