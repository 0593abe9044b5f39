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
    family: None,
    enabled_by_default: true,
    transports: Transports::BOTH,
    default_ports: &[53],
    port_bound: false,
    probe,
    probe_on_port: Some(probe_on_port),
    is_reply,
    build: Build::Plain(|t| Box::new(DnsState::new(t))),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "dns",
        render: eve::render,
        tx_id: false,
        packet_dir: true,
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
    "dns.infinite_loop",
    "dns.invalid_additionals",
    "dns.invalid_authorities",
    "dns.invalid_opcode",
    "dns.malformed_data",
    "dns.name_too_long",
    "dns.too_many_labels",
    "dns.z_flag_set",
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
pub fn probe_message(msg: &[u8], complete: bool, lax: bool) -> Probe {
    let odd = |flags: u16| (flags >> 11) & 0xf > 6 || flags & parser::Z_FLAG != 0;
    let Some(h) = parser::Header::parse(msg) else {
        if complete {
            return Probe::NoMatch;
        }
        // Judge what is there of the header already.
        if let (Some(&f0), Some(&f1)) = (msg.get(2), msg.get(3))
            && !lax
            && odd(u16::from_be_bytes([f0, f1]))
        {
            return Probe::NoMatch;
        }
        if let (Some(&a), Some(&b)) = (msg.get(4), msg.get(5)) {
            let qd = u16::from_be_bytes([a, b]);
            if qd == 0 || qd > MAX_PROBE_QUESTIONS {
                return Probe::NoMatch;
            }
        }
        return Probe::NeedMore;
    };
    if !lax && odd(h.flags) {
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

/// Recognises a DNS message (over TCP: with its length prefix) on any port: not one
/// with an unassigned opcode or the Z bit set, nor a NetBIOS Name Service message
/// (DNS-shaped, but another protocol, which Suricata does not take for DNS).
pub fn probe(transport: Transport, _dir: Dir, data: &[u8]) -> Probe {
    let msg = match transport {
        Transport::Udp => data,
        Transport::Tcp => data.get(2..).unwrap_or_default(),
    };
    if is_nbns(msg) {
        return Probe::NoMatch;
    }
    probe_with(transport, data, false)
}

/// Length of a NetBIOS name in its first-level encoding (RFC 1001 §14.1).
const NBNS_NAME_LEN: usize = 32;

/// Whether the message's first question is a NetBIOS name: one label of 32
/// characters `A`-`P` (each half-byte of the 16-byte name as a letter) first.
pub fn is_nbns(msg: &[u8]) -> bool {
    let at = parser::HEADER_LEN;
    msg.get(at) == Some(&(NBNS_NAME_LEN as u8))
        && msg
            .get(at + 1..at + 1 + NBNS_NAME_LEN)
            .is_some_and(|l| l.iter().all(|c| (b'A'..=b'P').contains(c)))
}

/// Recognises a DNS message on DNS's ports, whatever its opcode and Z bit (Suricata
/// parses them there, raising `dns.invalid_opcode` and `dns.z_flag_set`).
pub fn probe_on_port(transport: Transport, _dir: Dir, data: &[u8]) -> Probe {
    probe_with(transport, data, true)
}

fn probe_with(transport: Transport, data: &[u8], lax: bool) -> Probe {
    match transport {
        Transport::Udp => probe_message(data, true, lax),
        Transport::Tcp => {
            let Some(l) = data.get(..2) else {
                return Probe::NeedMore;
            };
            let len = usize::from(u16::from_be_bytes([l[0], l[1]]));
            if len < parser::HEADER_LEN {
                return Probe::NoMatch;
            }
            let body = &data[2..];
            probe_message(&body[..body.len().min(len)], body.len() >= len, lax)
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

    /// A transaction is its one message: complete both ways once made (Suricata's DNS
    /// transactions are, progress 1 in each direction).
    fn complete(&self, _dir: Dir) -> bool {
        self.request.is_some() || self.response.is_some()
    }

    /// 1 once the message is in.
    fn progress(&self, dir: Dir) -> u8 {
        u8::from(self.complete(dir))
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        if self.mdns.is_some() {
            return crate::mdns::detect::buffer(self, id, index);
        }
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        if self.mdns.is_some() {
            return self.response.as_ref().or(self.request.as_ref()).map(|m| {
                let mut r = logger::record(m);
                r.tx_id = self.id;
                AppRecord::Mdns(r)
            });
        }
        self.response
            .as_ref()
            .or(self.request.as_ref())
            .map(|m| self.message_record(m))
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        if self.mdns.is_some() {
            return crate::mdns::detect::frame_meta(self, id, index);
        }
        detect::frame_meta(self, id, index)
    }

    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        if self.mdns.is_some() {
            // One event per message, as the client -> server half.
            return match dir {
                Dir::ToServer => self.record(),
                Dir::ToClient => None,
            };
        }
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
        // A NetBIOS Name Service query (UDP 137) is DNS-shaped but not DNS off DNS's
        // ports; on them it is still parsed as DNS.
        let mut nbns = b"\x80\x94\x01\x10\x00\x01\x00\x00\x00\x00\x00\x00\x20".to_vec();
        nbns.extend_from_slice(b"FHEPFCELEHFCEPFFFACACACACACACABN\x00\x00\x20\x00\x01");
        assert!(is_nbns(&nbns));
        assert_eq!(probe(Transport::Udp, Dir::ToServer, &nbns), Probe::NoMatch);
        assert_eq!(
            probe_on_port(Transport::Udp, Dir::ToServer, &nbns),
            Probe::Match
        );
        assert!(!is_nbns(QUERY));
    }

    #[test]
    fn every_message_is_a_transaction() {
        let mut s = DnsState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        let mut other = QUERY.to_vec();
        other[0] = 0x77;
        s.parse(Dir::ToServer, QUERY, &mut out);
        s.parse(Dir::ToServer, &other, &mut out);
        s.parse(Dir::ToClient, RESPONSE, &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        assert_eq!(s.tx_count(), 3, "a response is not joined to its query");
        let (q, r) = (s.tx(0).unwrap(), s.tx(2).unwrap());
        assert_eq!((q.id(), r.id()), (0, 2));
        for t in [q, r] {
            assert!(t.complete(Dir::ToServer) && t.complete(Dir::ToClient));
        }
        assert_eq!(q.buffer(detect::QUERY, 0), Buf::Ready(b"www.example.com"));
        assert_eq!(q.buffer(detect::QUERY, 1), Buf::Absent);
        // The query's transaction has no response buffers, and never will.
        assert_eq!(q.buffer(detect::RESP_ANSWERS, 0), Buf::Absent);
        assert_eq!(r.buffer(detect::QUERY, 0), Buf::Absent);
        assert!(q.event_record(Dir::ToClient).is_none());
        assert!(r.event_record(Dir::ToServer).is_none());
        let Some(AppRecord::Dns(rr)) = r.event_record(Dir::ToClient) else {
            panic!()
        };
        assert_eq!((rr.r#type.as_str(), rr.tx_id), ("response", 2));
        assert_eq!(rr.answers.len(), 2);
        let Some(AppRecord::Dns(qq)) = q.event_record(Dir::ToServer) else {
            panic!()
        };
        assert_eq!(qq.r#type, "request");
        assert!(qq.rd);
        s.free_below(1);
        assert_eq!(s.tx_count(), 2);
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
        s.parse(Dir::ToClient, &resp[..7], &mut out);
        assert_eq!(s.tx_count(), 2, "half a response is no message yet");
        s.parse(Dir::ToClient, &resp[7..], &mut out);
        assert_eq!(s.tx_count(), 3);
        assert!(s.tx(2).unwrap().buffer(detect::RESP_ANSWERS, 0) != Buf::Absent);
    }

    #[test]
    fn garbage_is_an_anomaly() {
        let mut s = DnsState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\x00\x01", &mut out);
        assert_eq!(out.anomalies, vec!["dns.malformed_data"]);
        assert_eq!(s.tx_count(), 0);
    }

    /// The anomalies of one datagram.
    fn anomalies(msg: &[u8]) -> Vec<&'static str> {
        let mut s = DnsState::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, msg, &mut out);
        out.anomalies
    }

    /// Suricata's DNS events, each on the message that shows it (what the reference
    /// raises on the same messages, `suricata-ref` on a crafted pcap).
    #[test]
    fn suricata_events() {
        assert!(anomalies(QUERY).is_empty());
        assert!(anomalies(RESPONSE).is_empty());
        // Opcodes 7-15 are unassigned; 3 (unassigned too) and 6 (DSO) are not flagged.
        for (op, want) in [(3u8, false), (6, false), (7, true), (15, true)] {
            let mut m = QUERY.to_vec();
            m[2] = (m[2] & 0x87) | op << 3;
            assert_eq!(
                anomalies(&m).contains(&"dns.invalid_opcode"),
                want,
                "opcode {op}"
            );
            // Taken for DNS on its ports only.
            assert_eq!(
                probe_on_port(Transport::Udp, Dir::ToServer, &m),
                Probe::Match
            );
            let elsewhere = if want { Probe::NoMatch } else { Probe::Match };
            assert_eq!(probe(Transport::Udp, Dir::ToServer, &m), elsewhere);
        }
        let mut z = QUERY.to_vec();
        z[3] |= 0x40;
        assert_eq!(anomalies(&z), vec!["dns.z_flag_set"]);
        // A response counting two authorities and two additionals it does not have.
        let mut r = RESPONSE.to_vec();
        r[9] = 2;
        assert_eq!(anomalies(&r), vec!["dns.invalid_authorities"]);
        let mut r = RESPONSE.to_vec();
        r[11] = 2;
        assert_eq!(anomalies(&r), vec!["dns.invalid_additionals"]);
        // An answer counted and missing is malformed.
        let mut r = RESPONSE.to_vec();
        r[7] = 3;
        assert_eq!(anomalies(&r), vec!["dns.malformed_data"]);
        // A name of 20 labels of 63 bytes (1279 bytes of text).
        let mut long = QUERY[..12].to_vec();
        for _ in 0..20 {
            long.push(63);
            long.extend_from_slice(&[b'a'; 63]);
        }
        long.extend_from_slice(b"\x00\x00\x01\x00\x01");
        assert_eq!(anomalies(&long), vec!["dns.name_too_long"]);
        // 300 one-byte labels; and a pointer to itself.
        let mut many = QUERY[..12].to_vec();
        for _ in 0..300 {
            many.extend_from_slice(b"\x01a");
        }
        many.extend_from_slice(b"\x00\x00\x01\x00\x01");
        assert_eq!(anomalies(&many), vec!["dns.too_many_labels"]);
        let mut lp = QUERY[..12].to_vec();
        lp.extend_from_slice(b"\xc0\x0c\x00\x01\x00\x01");
        assert_eq!(anomalies(&lp), vec!["dns.infinite_loop"]);
    }
}
