//! IPv4 and IPv6 fragment reassembly.
//!
//! Fragments are collected per (version, source, destination, protocol, identification,
//! VLANs). When the last fragment has arrived and there is no hole, the datagram is
//! rebuilt (the first fragment's header, lengths fixed, fragment fields cleared) and
//! handed back as a raw IP packet for normal processing.
//!
//! Overlap policy: **first wins** (bytes already received are kept). Bounds: at most
//! [`MAX_FRAGMENTS`] fragments and [`MAX_DATAGRAM`] bytes per datagram, at most
//! [`MAX_TRACKERS`] datagrams in progress, and [`TIMEOUT_NS`] to complete one.

use std::collections::HashMap;
use std::net::IpAddr;

use meerkat_wire::decode::{DecodeEvent, MAX_VLAN_LAYERS, Packet};

pub const MAX_FRAGMENTS: usize = 256;
pub const MAX_DATAGRAM: usize = 65535;
pub const MAX_TRACKERS: usize = 16384;
pub const TIMEOUT_NS: u64 = 60 * 1_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Key {
    src: IpAddr,
    dst: IpAddr,
    proto: u8,
    ident: u32,
    vlan: [u16; MAX_VLAN_LAYERS],
}

#[derive(Debug)]
struct Tracker {
    first_ns: u64,
    /// (offset, bytes), sorted by offset.
    frags: Vec<(usize, Vec<u8>)>,
    /// Datagram length, known once the last fragment (no more-fragments flag) arrived.
    total: Option<usize>,
    /// IP header of the offset-0 fragment (IPv4 with options; IPv6 fixed header).
    header: Option<Vec<u8>>,
}

/// Why fragments were dropped (counted by the worker).
#[derive(Debug, Default, Clone, Copy)]
pub struct DefragStats {
    pub reassembled: u64,
    pub too_many: u64,
    pub too_large: u64,
    pub timeouts: u64,
    pub overlaps: u64,
}

/// Reassembly state of one worker.
#[derive(Debug, Default)]
pub struct Defrag {
    trackers: HashMap<Key, Tracker>,
    pub stats: DefragStats,
}

impl Defrag {
    /// Takes a fragment; returns the rebuilt datagram (raw IP) when it is complete.
    /// Adds Suricata's defrag events for this fragment to `events` (bits of
    /// [`DecodeEvent::bit`]): `frag_pkt_too_large` when it ends past 65535 bytes (it is
    /// dropped), `frag_overlap` when it overlaps a fragment already held.
    pub fn add(
        &mut self,
        p: &Packet<'_>,
        ts_ns: u64,
        events: &mut meerkat_wire::EventSet,
    ) -> Option<Vec<u8>> {
        let ip = p.ip?;
        let frag = ip.fragment?;
        let v6 = ip.version == 6;
        let key = Key {
            src: ip.src,
            dst: ip.dst,
            proto: ip.proto,
            ident: frag.ident,
            vlan: p.vlan,
        };
        if self.trackers.len() >= MAX_TRACKERS && !self.trackers.contains_key(&key) {
            self.expire(ts_ns);
            if self.trackers.len() >= MAX_TRACKERS {
                self.stats.too_many += 1;
                return None;
            }
        }
        let data = &p.frame[ip.offset + ip.header_len..ip.end];
        let t = self.trackers.entry(key).or_insert_with(|| Tracker {
            first_ns: ts_ns,
            frags: Vec::new(),
            total: None,
            header: None,
        });
        if frag.offset + data.len() > MAX_DATAGRAM {
            *events |= if v6 {
                DecodeEvent::Ipv6FragPktTooLarge
            } else {
                DecodeEvent::Ipv4FragPktTooLarge
            }
            .bit();
            self.stats.too_large += 1;
            self.trackers.remove(&key);
            return None;
        }
        if t.frags.len() >= MAX_FRAGMENTS {
            self.stats.too_many += 1;
            self.trackers.remove(&key);
            return None;
        }
        let end = frag.offset + data.len();
        if t.frags
            .iter()
            .any(|(o, d)| frag.offset < o + d.len() && *o < end)
        {
            *events |= if v6 {
                DecodeEvent::Ipv6FragOverlap
            } else {
                DecodeEvent::Ipv4FragOverlap
            }
            .bit();
        }
        if frag.offset == 0 && t.header.is_none() {
            let h = if ip.version == 4 {
                p.frame[ip.offset..ip.offset + ip.header_len].to_vec()
            } else {
                p.frame[ip.offset..ip.offset + 40].to_vec()
            };
            t.header = Some(h);
        }
        if !frag.more {
            t.total = Some(frag.offset + data.len());
        }
        let pos = t.frags.partition_point(|(o, _)| *o < frag.offset);
        t.frags.insert(pos, (frag.offset, data.to_vec()));
        let total = t.total?;
        let header = t.header.as_ref()?;
        // Complete when the fragments cover [0, total) without a hole.
        let mut covered = 0;
        for (o, d) in &t.frags {
            if *o > covered {
                return None;
            }
            covered = covered.max(o + d.len());
        }
        if covered < total {
            return None;
        }
        let mut payload = vec![0u8; total];
        let mut filled = vec![false; total];
        let mut overlaps = 0;
        for (o, d) in &t.frags {
            for (i, b) in d.iter().enumerate() {
                let at = o + i;
                if at >= total {
                    break;
                }
                if filled[at] {
                    overlaps += 1;
                    continue;
                }
                filled[at] = true;
                payload[at] = *b;
            }
        }
        let out = rebuild(ip.version, header, ip.proto, &payload);
        self.trackers.remove(&key);
        self.stats.reassembled += 1;
        if overlaps > 0 {
            self.stats.overlaps += 1;
        }
        Some(out)
    }

    /// Drops datagrams that did not complete in time.
    pub fn expire(&mut self, now_ns: u64) {
        let before = self.trackers.len();
        self.trackers
            .retain(|_, t| now_ns.saturating_sub(t.first_ns) < TIMEOUT_NS);
        self.stats.timeouts += (before - self.trackers.len()) as u64;
    }
}

fn rebuild(version: u8, header: &[u8], proto: u8, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(header.len() + payload.len());
    out.extend_from_slice(header);
    if version == 4 {
        let total = (header.len() + payload.len()).min(65535) as u16;
        out[2..4].copy_from_slice(&total.to_be_bytes());
        out[6] &= 0x40; // keep DF, clear MF and the offset
        out[7] = 0;
        out[10] = 0;
        out[11] = 0;
        let mut sum: u32 = 0;
        for c in out[..header.len()].chunks(2) {
            sum += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
        }
        while sum > 0xffff {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        out[10..12].copy_from_slice(&(!(sum as u16)).to_be_bytes());
    } else {
        out[4..6].copy_from_slice(&(payload.len().min(65535) as u16).to_be_bytes());
        out[6] = proto;
    }
    out.extend_from_slice(payload);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::packet;
    use meerkat_wire::decode::{LINKTYPE_RAW, decode};

    /// IPv4 fragments of a UDP datagram, `size` bytes of payload per fragment.
    fn fragments(payload: &[u8], size: usize) -> Vec<Vec<u8>> {
        let s = "10.0.0.1".parse().unwrap();
        let d = "10.0.0.2".parse().unwrap();
        let udp = packet::udp(s, d, 1000, 53, payload);
        let whole = packet::ipv4([10, 0, 0, 1], [10, 0, 0, 2], 17, 64, 77, &udp);
        let body = &whole[20..];
        let mut out = Vec::new();
        for (i, chunk) in body.chunks(size).enumerate() {
            let mut h = whole[..20].to_vec();
            let off = (i * size / 8) as u16;
            let more = (i + 1) * size < body.len();
            let flags = if more { 0x2000 } else { 0 };
            h[6..8].copy_from_slice(&(flags | off).to_be_bytes());
            h[2..4].copy_from_slice(&((20 + chunk.len()) as u16).to_be_bytes());
            h.extend_from_slice(chunk);
            out.push(h);
        }
        out
    }

    #[test]
    fn reassembles_in_any_order() {
        let payload: Vec<u8> = (0..100u8).collect();
        let mut frags = fragments(&payload, 32);
        frags.reverse();
        let mut d = Defrag::default();
        let mut done = None;
        for f in &frags {
            let (p, _) = decode(LINKTYPE_RAW, f);
            assert!(p.ip.unwrap().fragment.is_some());
            let mut ev = 0;
            if let Some(out) = d.add(&p, 1, &mut ev) {
                done = Some(out);
            }
            assert_eq!(ev, 0);
        }
        let out = done.expect("reassembled");
        let (p, ev) = decode(LINKTYPE_RAW, &out);
        assert_eq!(ev, None);
        assert_eq!(p.ports(), (1000, 53));
        assert_eq!(p.payload, &payload[..]);
        assert!(p.checksums_ok());
        assert_eq!(d.stats.reassembled, 1);
    }

    #[test]
    fn incomplete_datagrams_time_out() {
        let frags = fragments(&[7u8; 64], 32);
        let mut d = Defrag::default();
        let (p, _) = decode(LINKTYPE_RAW, &frags[0]);
        assert!(d.add(&p, 0, &mut 0).is_none());
        d.expire(TIMEOUT_NS + 1);
        assert_eq!(d.stats.timeouts, 1);
    }

    #[test]
    fn overlaps_and_oversized_fragments_are_events() {
        let frags = fragments(&[7u8; 64], 32);
        let mut d = Defrag::default();
        let (p, _) = decode(LINKTYPE_RAW, &frags[0]);
        let mut ev = 0;
        assert!(d.add(&p, 0, &mut ev).is_none());
        assert_eq!(ev, 0);
        // The same fragment again overlaps the one held.
        assert!(d.add(&p, 0, &mut ev).is_none());
        assert_eq!(ev, DecodeEvent::Ipv4FragOverlap.bit());

        // A fragment ending past 65535 bytes.
        let mut big = frags[1].clone();
        big[6..8].copy_from_slice(&(8190u16).to_be_bytes());
        let (p, _) = decode(LINKTYPE_RAW, &big);
        let mut ev = 0;
        assert!(d.add(&p, 0, &mut ev).is_none());
        assert_eq!(ev, DecodeEvent::Ipv4FragPktTooLarge.bit());
    }
}
