//! Runs the decoder's fuzz entry points over their seeds (`wire/seeds/<target>/`) and
//! every prefix of each seed, and checks that the tunnel seeds reach their inner
//! packet.
#![allow(clippy::unwrap_used)]

use std::path::Path;

use meerkat_wire::decode::{self, TunnelPorts};

fn seeds(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("seeds")
        .join(target);
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let p = e.unwrap().path();
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no seeds in {}", dir.display());
    v
}

#[test]
fn decode_seeds_and_their_prefixes() {
    for (_, s) in seeds("decode") {
        for n in 0..=s.len() {
            meerkat_wire::fuzz::decode_frame(&s[..n]);
        }
    }
}

#[test]
fn pcap_seeds_and_their_prefixes() {
    for (_, s) in seeds("pcap") {
        for n in 0..=s.len() {
            meerkat_wire::fuzz::pcap_file(&s[..n]);
        }
    }
}

#[test]
fn every_tunnel_seed_reaches_a_transport_layer_inside() {
    let links = [decode::LINKTYPE_ETHERNET, decode::LINKTYPE_RAW];
    for (name, s) in seeds("decode") {
        if name == "pppoe_padi" || name == "ppp_link" {
            continue;
        }
        let lt = links[usize::from(s[0])];
        let (mut p, ev) = decode::decode(lt, &s[1..]);
        assert_eq!(ev, None, "{name}");
        while let Some((q, ev)) = decode::decode_inner(&TunnelPorts::DEFAULT, &p) {
            assert_eq!(ev, None, "{name} at depth {}", q.depth);
            p = q;
        }
        assert_ne!(p.ports(), (0, 0), "{name}: no transport layer inside");
    }
}
