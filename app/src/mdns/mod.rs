//! mDNS (RFC 6762): DNS messages on UDP port 5353, parsed by the DNS parser and named
//! as their own protocol, as Suricata 8 does: `alert mdns`, `mdns.*` keywords and the
//! EVE `mdns` record.
//!
//! Unlike DNS, every message is a transaction of its own (a response does not join a
//! query: multicast answers come from anyone), and every message is `to_server`
//! whatever its QR bit, so a response can open a flow without turning it around.

pub mod detect;
pub mod eve;

use crate::AppProto;
use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::dns::{self, DnsState};
use crate::{Dir, Probe, Transport};

pub const PORT: u16 = 5353;

/// mDNS: DNS's parser under mDNS's name, on its port, UDP only (as Suricata).
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Mdns,
    name: "mdns",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::UDP,
    default_ports: &[PORT],
    port_bound: true,
    probe,
    probe_on_port: Some(probe),
    is_reply: |_, _| false,
    build: Build::Plain(|t| Box::new(DnsState::multicast(t))),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: &[],
    // The DNS parser's anomalies are DNS's (`dns.<event>`).
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "mdns",
        render: eve::render,
        tx_id: false,
        // A unicast reply is written server -> client, as it came (Suricata).
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "mdns",
        run: fuzz,
    }],
};

/// A whole DNS message, whatever its opcode and Z bit, as Suricata's UDP DNS probe
/// judges one: a query has a question; a response may have none (mDNS announcements
/// are answers alone); every counted entry fits.
fn probe(transport: Transport, _dir: Dir, data: &[u8]) -> Probe {
    if transport != Transport::Udp {
        return Probe::NoMatch;
    }
    let Some(h) = dns::parser::Header::parse(data) else {
        return Probe::NoMatch;
    };
    let entries = [h.qdcount, h.ancount, h.nscount, h.arcount]
        .iter()
        .map(|&c| usize::from(c))
        .sum::<usize>();
    let fits = dns::parser::HEADER_LEN + 2 * entries <= data.len();
    let empty_ok = entries > 0 || data.len() == dns::parser::HEADER_LEN;
    if !fits || !empty_ok || (!h.qr() && h.qdcount == 0) {
        return Probe::NoMatch;
    }
    match dns::parser::parse(data) {
        Some(m) if !m.truncated => Probe::Match,
        _ => Probe::NoMatch,
    }
}

/// Fuzz target: every protocol's probe on mDNS's port, then the parser.
pub fn fuzz(data: &[u8]) {
    let r = crate::Registry::default();
    for d in [Dir::ToServer, Dir::ToClient] {
        let _ = r.probe(Transport::Udp, d, [PORT, PORT], data);
    }
    let mut s = DnsState::multicast(Transport::Udp);
    crate::fuzz::drive(&mut s, data);
    // Every transaction renders.
    for i in 0..crate::AppState::tx_count(&s) {
        if let Some(tx) = crate::AppState::tx(&s, i)
            && let Some(r) = tx.record()
        {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            eve::render(&r, &mut o);
            o.end();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::parser::tests::{QUERY, RESPONSE};
    use crate::{AppRecord, AppState, Buf, ParseOutput};

    #[test]
    fn every_message_is_a_transaction_of_its_own() {
        let mut s = DnsState::multicast(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, QUERY, &mut out);
        s.parse(Dir::ToClient, RESPONSE, &mut out);
        assert_eq!(s.tx_count(), 2, "the response does not join the query");
        let (q, r) = (s.tx(0).unwrap(), s.tx(1).unwrap());
        for t in [q, r] {
            assert!(t.complete(Dir::ToServer) && t.complete(Dir::ToClient));
            assert!(t.event_record(Dir::ToClient).is_none());
            assert!(matches!(
                t.event_record(Dir::ToServer),
                Some(AppRecord::Mdns(_))
            ));
        }
        assert_eq!(q.buffer(detect::QUERIES, 0), Buf::Ready(b"www.example.com"));
        assert_eq!(q.buffer(detect::RESPONSE_RRNAME, 0), Buf::Absent);
        // A reply that came server -> client has no buffers (Suricata never inspects
        // it); the same response multicast to_server has them.
        assert_eq!(r.buffer(detect::QUERIES, 0), Buf::Absent);
        s.parse(Dir::ToServer, RESPONSE, &mut out);
        let r = s.tx(2).unwrap();
        assert_eq!(r.buffer(detect::QUERIES, 0), Buf::Ready(b"www.example.com"));
        assert_eq!(r.buffer(detect::ANSWERS, 0), Buf::Ready(b"www.example.com"));
        assert!(matches!(
            r.buffer(detect::RESPONSE_RRNAME, 0),
            Buf::Ready(_)
        ));
    }

    /// `mdns.pdu`: each message, `toserver` and numbered per flow whichever way it
    /// came, attached to its transaction (its id plus one, as Suricata's).
    #[test]
    fn frames_are_numbered_per_flow() {
        let mut s = DnsState::multicast(Transport::Udp);
        s.set_frames(&[detect::FRAME_PDU]);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, QUERY, &mut out);
        s.parse(Dir::ToClient, RESPONSE, &mut out);
        let r = s.tx(1).unwrap();
        assert_eq!(r.buffer(detect::FRAME_PDU, 0), Buf::Ready(RESPONSE));
        let m = r.frame(detect::FRAME_PDU, 0).unwrap();
        assert_eq!((m.id, m.stream_offset, m.tx_id), (2, None, Some(2)));
        // DNS's frame ids are not mDNS's.
        assert_eq!(r.frame(crate::dns::detect::FRAME_PDU_TC, 0), None);
        let mut s = DnsState::multicast(Transport::Udp);
        s.set_frames(&[crate::dns::detect::FRAME_PDU_TS]);
        s.parse(Dir::ToServer, QUERY, &mut out);
        assert_eq!(s.tx(0).unwrap().buffer(detect::FRAME_PDU, 0), Buf::Absent);
    }

    #[test]
    fn replies_do_not_turn_the_flow_around() {
        assert!(!(PROTOCOL.is_reply)(Transport::Udp, RESPONSE));
        assert_eq!(probe(Transport::Udp, Dir::ToServer, RESPONSE), Probe::Match);
    }
}
