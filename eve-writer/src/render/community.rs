//! Community ID flow hashing, version 1 (`outputs.eve-log.community-id`): the
//! `community_id` field SIEMs use to join one flow's records across tools (Zeek,
//! Suricata, Arkime, ...).
//!
//! The value is `1:` and the base64 of the SHA-1 of: the seed (16 bits, big endian), the
//! two addresses, the IP protocol, a zero byte and the two ports (16 bits each, big
//! endian), with the endpoints ordered so that both directions of a flow hash alike (the
//! lower address first; on equal addresses the lower port first).
//!
//! For ICMP and ICMPv6 the "ports" are the flow's ICMP types as Suricata keeps them: the
//! type of the flow's first packet, and the counterpart of that type (echo request and
//! reply, ...) or 0 when it has none. A record of any packet of the flow gives the same
//! value: a packet toward the server carries the first type, one toward the client its
//! counterpart.

use base64::Engine as _;
use meerkat_proto::events::{Direction, Event, EventType};
use meerkat_wire::icmp::counterpart;
use sha1::{Digest, Sha1};

/// `1:` and 28 base64 characters.
pub const LEN: usize = 30;

/// The community ID of `ev`'s flow, or `None` when the record has no flow (or no
/// addresses).
pub fn of(ev: &Event, seed: u16) -> Option<[u8; LEN]> {
    if ev.flow_id == 0 || ev.src_ip.len() != ev.dest_ip.len() || ev.src_ip.is_empty() {
        return None;
    }
    let (sp, dp) = match ev.ip_proto {
        1 | 58 => icmp_types(ev)?,
        _ => (ev.src_port as u16, ev.dest_port as u16),
    };
    let (a, b) = ((&ev.src_ip[..], sp), (&ev.dest_ip[..], dp));
    let ((src, sp), (dst, dp)) = if a.0 < b.0 || (a.0 == b.0 && a.1 < b.1) {
        (a, b)
    } else {
        (b, a)
    };
    let mut h = Sha1::new();
    h.update(seed.to_be_bytes());
    h.update(src);
    h.update(dst);
    h.update([ev.ip_proto as u8, 0]);
    h.update(sp.to_be_bytes());
    h.update(dp.to_be_bytes());
    let digest = h.finalize();
    let mut out = [0u8; LEN];
    out[..2].copy_from_slice(b"1:");
    let n = base64::engine::general_purpose::STANDARD
        .encode_slice(digest, &mut out[2..])
        .ok()?;
    debug_assert_eq!(n, LEN - 2);
    Some(out)
}

/// The (source, destination) "ports" of an ICMP record, in the record's direction.
fn icmp_types(ev: &Event) -> Option<(u16, u16)> {
    let v6 = ev.ip_proto == 58;
    let t = ev.icmp_type? as u8;
    let flow_record = ev.event_type == EventType::Flow as i32;
    let to_client = !flow_record && ev.direction == Direction::ToClient as i32;
    // The flow's first type: a packet toward the client carries its counterpart.
    let first = if to_client {
        counterpart(t, v6).unwrap_or(t)
    } else {
        t
    };
    let other = u16::from(counterpart(first, v6).unwrap_or(0));
    let first = u16::from(first);
    Some(if to_client {
        (other, first)
    } else {
        (first, other)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(src: [u8; 4], sp: u32, dst: [u8; 4], dp: u32, proto: u32) -> Event {
        Event {
            event_type: EventType::Alert as i32,
            flow_id: 1,
            src_ip: src.to_vec(),
            src_port: sp,
            dest_ip: dst.to_vec(),
            dest_port: dp,
            ip_proto: proto,
            ..Default::default()
        }
    }

    fn id(ev: &Event, seed: u16) -> String {
        String::from_utf8(of(ev, seed).unwrap().to_vec()).unwrap()
    }

    /// Values from the Community ID specification's reference implementation
    /// (corelight/community-id-spec, `baseline/baseline_deflt.json`).
    #[test]
    fn matches_the_specifications_baseline() {
        let tcp = ev([128, 232, 110, 120], 34855, [66, 35, 250, 204], 80, 6);
        assert_eq!(id(&tcp, 0), "1:LQU9qZlK+B5F3KDmev6m5PMibrg=");
        assert_eq!(id(&tcp, 1), "1:3V71V58M3Ksw/yuFALMcW0LAHvc=");
        let udp = ev([192, 168, 1, 52], 54585, [8, 8, 8, 8], 53, 17);
        assert_eq!(id(&udp, 0), "1:d/FP5EW3wiY1vCndhwleRRKHowQ=");
    }

    #[test]
    fn both_directions_hash_alike() {
        let a = ev([10, 0, 0, 2], 80, [10, 0, 0, 1], 40000, 6);
        let b = ev([10, 0, 0, 1], 40000, [10, 0, 0, 2], 80, 6);
        assert_eq!(id(&a, 0), id(&b, 0));
        let mut reply = ev([10, 0, 0, 2], 0, [10, 0, 0, 1], 0, 1);
        reply.icmp_type = Some(0);
        reply.direction = Direction::ToClient as i32;
        let mut request = ev([10, 0, 0, 1], 0, [10, 0, 0, 2], 0, 1);
        request.icmp_type = Some(8);
        request.direction = Direction::ToServer as i32;
        assert_eq!(id(&reply, 0), id(&request, 0));
    }

    #[test]
    fn no_flow_no_id() {
        let mut e = ev([10, 0, 0, 1], 1, [10, 0, 0, 2], 2, 6);
        e.flow_id = 0;
        assert!(of(&e, 0).is_none());
    }
}
