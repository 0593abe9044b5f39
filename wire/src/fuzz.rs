//! Entry points of the decoder's fuzz targets (`fuzz/fuzz_targets/decode.rs`,
//! `pcap.rs`), also run over the seeds in `wire/seeds/` by `wire/tests/fuzz_seeds.rs`.

use crate::decode::{self, TunnelPorts};
use crate::link;

/// The link types the first input byte picks from.
const LINK_TYPES: [u16; 9] = [
    link::LINKTYPE_ETHERNET,
    link::LINKTYPE_RAW,
    link::LINKTYPE_NULL,
    link::LINKTYPE_LINUX_SLL,
    link::LINKTYPE_IPV4,
    link::LINKTYPE_IPV6,
    link::LINKTYPE_PPP,
    link::LINKTYPE_RAW_BSD,
    link::LINKTYPE_RAW_OPENBSD,
];

/// Decodes `data[1..]` as a frame of the link type `data[0]` picks, then every tunnel
/// in it (with every UDP port a tunnel port when bit 7 of `data[0]` is set), touching
/// every view a worker uses.
pub fn decode_frame(data: &[u8]) {
    let Some((&sel, frame)) = data.split_first() else {
        return;
    };
    let lt = LINK_TYPES[usize::from(sel & 0x7f) % LINK_TYPES.len()];
    let any = crate::tunnel::Ports::ANY;
    let ports = if sel & 0x80 != 0 {
        TunnelPorts {
            vxlan: any,
            geneve: any,
            teredo: any,
        }
    } else {
        TunnelPorts::DEFAULT
    };
    let (mut p, _) = decode::decode_with(&ports, lt, frame);
    let mut layers = 0;
    loop {
        let _ = p.checksums_ok();
        let _ = p.ip_bytes();
        let _ = (p.ports(), p.vlans(), p.tcp_flags(), p.payload.len());
        match decode::decode_inner(&ports, &p) {
            Some((q, _)) => {
                assert!(q.depth == p.depth + 1, "tunnel depth grows by one");
                p = q;
                layers += 1;
            }
            None => break,
        }
    }
    assert!(layers <= usize::from(decode::MAX_TUNNEL_DEPTH));
}

/// Reads `data` as a pcap or pcapng file and decodes every packet in it.
pub fn pcap_file(data: &[u8]) {
    let Ok(mut r) = crate::pcap::Reader::new(data) else {
        return;
    };
    while let Ok(Some(p)) = r.next_packet() {
        let (mut d, _) = decode::decode(p.link_type, p.data);
        let _ = d.checksums_ok();
        while let Some((q, _)) = decode::decode_inner(&TunnelPorts::DEFAULT, &d) {
            d = q;
        }
    }
}
