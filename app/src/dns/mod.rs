//! DNS over UDP and TCP: detection, message parsing with compression guards,
//! query/response transactions matched by id, `dns.query`, and the EVE `dns` record.

pub mod detect;
pub mod eve;
pub mod logger;
pub mod names;
pub mod parser;
pub mod state;

pub use state::{DnsState, DnsTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// DNS over UDP and TCP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Dns,
    name: "dns",
    aliases: &[],
    transports: Transports::BOTH,
    default_ports: &[53, 5353],
    port_bound: false,
    off_by_default: false,
    probe,
    is_reply,
    build: Build::Plain(|t| Box::new(DnsState::new(t))),
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    record: Some(RecordDef {
        event_type: "dns",
        render: eve::render,
        tx_id: false,
        logged_by_default: true,
        packet_dir: false,
    }),
    fuzz: &[
        FuzzTarget {
            name: "dns_udp",
            run: fuzz_udp,
        },
        FuzzTarget {
            name: "dns_tcp",
            run: fuzz_tcp,
        },
    ],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "dns.gap",
    "dns.infinite_loop",
    "dns.malformed_data",
    "dns.too_many_records",
    "dns.too_many_transactions",
    "dns.unsolicited_response",
];

/// Fuzz target: DNS over UDP (one datagram per piece), and the message parser alone.
pub fn fuzz_udp(data: &[u8]) {
    crate::fuzz::drive(&mut DnsState::new(Transport::Udp), data);
    let _ = parser::parse(data);
}

/// Fuzz target: DNS over TCP (length-prefixed messages across pieces).
pub fn fuzz_tcp(data: &[u8]) {
    crate::fuzz::drive(&mut DnsState::new(Transport::Tcp), data);
}

/// Most questions a message may have to be taken for DNS by the probe.
pub const MAX_PROBE_QUESTIONS: u16 = 16;

/// Recognises a DNS message: a sane header (opcode 0-6, a plausible question count,
/// QR matching the direction's role is not required) whose first question parses.
pub fn probe_message(msg: &[u8], complete: bool) -> Probe {
    let Some(h) = parser::Header::parse(msg) else {
        if complete {
            return Probe::NoMatch;
        }
        // Judge what is there of the header already.
        if let (Some(&f0), Some(&f1)) = (msg.get(2), msg.get(3)) {
            let flags = u16::from_be_bytes([f0, f1]);
            if (flags >> 11) & 0xf > 6 || flags & 0x0040 != 0 {
                return Probe::NoMatch;
            }
        }
        if let (Some(&a), Some(&b)) = (msg.get(4), msg.get(5)) {
            let qd = u16::from_be_bytes([a, b]);
            if qd == 0 || qd > MAX_PROBE_QUESTIONS {
                return Probe::NoMatch;
            }
        }
        return Probe::NeedMore;
    };
    if h.opcode() > 6 || h.flags & 0x0040 != 0 {
        return Probe::NoMatch;
    }
    if h.qdcount == 0 || h.qdcount > MAX_PROBE_QUESTIONS {
        return Probe::NoMatch;
    }
    // Every counted entry takes at least 2 bytes (Suricata's sanity check). A request
    // may carry answers (NOTIFY and UPDATE do): that alone does not rule DNS out.
    let entries = [h.qdcount, h.ancount, h.nscount, h.arcount]
        .iter()
        .map(|&c| usize::from(c))
        .sum::<usize>();
    if complete && parser::HEADER_LEN + 2 * entries > msg.len() {
        return Probe::NoMatch;
    }
    match parser::skip_name(msg, parser::HEADER_LEN) {
        Ok(end) if msg.len() >= end + 4 => Probe::Match,
        Ok(_) | Err(parser::NameError::Truncated) if !complete => Probe::NeedMore,
        _ => Probe::NoMatch,
    }
}

/// Recognises a DNS message (over TCP: with its length prefix).
pub fn probe(transport: Transport, _dir: Dir, data: &[u8]) -> Probe {
    match transport {
        Transport::Udp => probe_message(data, true),
        Transport::Tcp => {
            let Some(l) = data.get(..2) else {
                return Probe::NeedMore;
            };
            let len = usize::from(u16::from_be_bytes([l[0], l[1]]));
            if len < parser::HEADER_LEN {
                return Probe::NoMatch;
            }
            let body = &data[2..];
            probe_message(&body[..body.len().min(len)], body.len() >= len)
        }
    }
}

/// A message with the QR bit set is a response.
pub fn is_reply(transport: Transport, data: &[u8]) -> bool {
    let flags_at = match transport {
        Transport::Udp => 2,
        Transport::Tcp => 4,
    };
    data.get(flags_at).is_some_and(|f| f & 0x80 != 0)
}

impl DnsTx {
    fn message_record(&self, m: &parser::Message) -> AppRecord {
        let mut r = logger::record(m);
        r.tx_id = self.id;
        AppRecord::Dns(r)
    }
}

impl Transaction for DnsTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        match dir {
            Dir::ToServer => self.request.is_some() || self.response.is_some(),
            Dir::ToClient => self.response.is_some(),
        }
    }

    /// 1 once the direction's message is in.
    fn progress(&self, dir: Dir) -> u8 {
        u8::from(self.complete(dir))
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        self.response
            .as_ref()
            .or(self.request.as_ref())
            .map(|m| self.message_record(m))
    }

    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        let m = match dir {
            Dir::ToServer => self.request.as_ref(),
            Dir::ToClient => self.response.as_ref(),
        };
        m.map(|m| {
            let mut r = self.message_record(m);
            if let AppRecord::Dns(d) = &mut r {
                d.grouped = true;
            }
            r
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::AppState;

    #[test]
    fn every_raised_event_is_listed() {
        let n =
            crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "dns");
        assert!(n > 0);
    }
    use super::parser::tests::{QUERY, RESPONSE};
    use super::*;
    use crate::ParseOutput;

    #[test]
    fn probes() {
        assert_eq!(probe(Transport::Udp, Dir::ToServer, QUERY), Probe::Match);
        assert_eq!(probe(Transport::Udp, Dir::ToClient, RESPONSE), Probe::Match);
        assert_eq!(
            probe(Transport::Udp, Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n"),
            Probe::NoMatch
        );
        // A NOTIFY (opcode 4) carrying the new SOA as an answer is a DNS request.
        let mut notify = QUERY.to_vec();
        notify[2] = 0x24;
        notify[7] = 1;
        notify
            .extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01\x00\x00\x00\x3c\x00\x04\x01\x02\x03\x04");
        assert_eq!(probe(Transport::Udp, Dir::ToServer, &notify), Probe::Match);
        // Counts the datagram cannot hold.
        let mut bogus = QUERY.to_vec();
        bogus[9] = 200;
        assert_eq!(probe(Transport::Udp, Dir::ToServer, &bogus), Probe::NoMatch);
        let mut tcp = (QUERY.len() as u16).to_be_bytes().to_vec();
        tcp.extend_from_slice(QUERY);
        assert_eq!(probe(Transport::Tcp, Dir::ToServer, &tcp), Probe::Match);
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, &tcp[..10]),
            Probe::NeedMore
        );
    }

    #[test]
    fn udp_transactions_match_by_id() {
        let mut s = DnsState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        let mut other = QUERY.to_vec();
        other[0] = 0x77;
        s.parse(Dir::ToServer, QUERY, &mut out);
        s.parse(Dir::ToServer, &other, &mut out);
        s.parse(Dir::ToClient, RESPONSE, &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        assert_eq!(s.tx_count(), 2);
        let t0 = s.tx(0).unwrap();
        assert!(t0.complete(Dir::ToClient));
        assert!(!s.tx(1).unwrap().complete(Dir::ToClient));
        assert_eq!(t0.buffer(detect::QUERY, 0), Buf::Ready(b"www.example.com"));
        assert_eq!(t0.buffer(detect::QUERY, 1), Buf::Absent);
        let Some(AppRecord::Dns(r)) = t0.event_record(Dir::ToClient) else {
            panic!()
        };
        assert_eq!(r.r#type, "response");
        assert_eq!(r.answers.len(), 2);
        let Some(AppRecord::Dns(q)) = t0.event_record(Dir::ToServer) else {
            panic!()
        };
        assert_eq!(q.r#type, "request");
        assert!(q.rd);
        s.free_below(1);
        assert_eq!(s.tx_count(), 1);
    }

    #[test]
    fn tcp_framing_across_segments() {
        let mut s = DnsState::new(Transport::Tcp);
        let mut out = ParseOutput::default();
        let mut stream = Vec::new();
        for m in [QUERY, QUERY] {
            stream.extend_from_slice(&(m.len() as u16).to_be_bytes());
            stream.extend_from_slice(m);
        }
        for c in stream.chunks(3) {
            s.parse(Dir::ToServer, c, &mut out);
        }
        assert_eq!(s.tx_count(), 2);
        let mut resp = (RESPONSE.len() as u16).to_be_bytes().to_vec();
        resp.extend_from_slice(RESPONSE);
        s.parse(Dir::ToClient, &resp, &mut out);
        assert!(s.tx(0).unwrap().complete(Dir::ToClient));
        assert!(!s.tx(1).unwrap().complete(Dir::ToClient));
    }

    #[test]
    fn garbage_is_an_anomaly() {
        let mut s = DnsState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\x00\x01", &mut out);
        assert_eq!(out.anomalies, vec!["dns.malformed_data"]);
        assert_eq!(s.tx_count(), 0);
    }
}
