//! TLS (SSLv3 to TLS 1.3 handshakes in the clear): detection, ClientHello/ServerHello
//! and certificate parsing across records and segments, JA3/JA3S/JA4, the `tls.*`
//! buffers and the EVE `tls` record.

pub mod detect;
pub mod eve;
pub mod logger;
pub mod parser;
pub mod state;
pub mod x509;

pub use state::{TlsState, TlsTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction};

/// TLS (and SSL) handshakes.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Tls,
    name: "tls",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[443, 8443, 993, 995, 465, 636, 853],
    port_bound: false,
    probe: |_, dir, data| probe(dir, data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(TlsState::new())),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: true,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "tls",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "tls",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "tls.handshake_invalid_length",
    "tls.invalid_certificate",
    "tls.invalid_handshake_message",
    "tls.invalid_record_length",
    "tls.invalid_record_type",
    "tls.invalid_sni_type",
    "tls.multiple_sni_extensions",
];

/// Fuzz target: the parser over arbitrary bytes in both directions, the certificate
/// parser alone, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut TlsState::new(), data);
    let _ = x509::parse(data);
    crate::fuzz::probes(data);
}

/// Recognises a TLS record carrying a handshake (type 22, version 3.x, a sane length,
/// a ClientHello or ServerHello first), or an SSLv2-framed ClientHello.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    // The client opens with a handshake record; the server may answer with any record
    // type (an alert refusing the hello, as Suricata takes it).
    let record_type_ok = |t: u8| match dir {
        Dir::ToServer => t == 22,
        Dir::ToClient => (20..=24).contains(&t),
    };
    if data.len() < 6 {
        return match data {
            [] => Probe::NeedMore,
            [t] | [t, 3] if record_type_ok(*t) => Probe::NeedMore,
            [t, 3, v, ..] if record_type_ok(*t) && *v <= 4 => Probe::NeedMore,
            [b, ..] if b & 0x80 != 0 && dir == Dir::ToServer => Probe::NeedMore,
            _ => Probe::NoMatch,
        };
    }
    if record_type_ok(data[0]) && data[1] == 3 && data[2] <= 4 {
        let len = usize::from(u16::from_be_bytes([data[3], data[4]]));
        let ok = match (dir, data[0]) {
            (Dir::ToServer, _) => data[5] == 1 && len >= 4,
            (Dir::ToClient, 22) => len >= 4,
            (Dir::ToClient, _) => len >= 1,
        };
        return if ok && len <= state::MAX_RECORD_LEN {
            Probe::Match
        } else {
            Probe::NoMatch
        };
    }
    // SSLv2 record header: 2-byte length with the high bit, message type 1 (ClientHello),
    // version 2 or 3.x.
    if dir == Dir::ToServer && data[0] & 0x80 != 0 && data[2] == 1 && (data[3] == 0 || data[3] == 3)
    {
        return Probe::Match;
    }
    Probe::NoMatch
}

impl Transaction for TlsTx {
    fn id(&self) -> u64 {
        0
    }

    fn complete(&self, dir: Dir) -> bool {
        self.done[dir.index()]
    }

    /// To server: 1 ClientHello, 2 done. To client: 1 ServerHello, 2 certificate,
    /// 3 done.
    fn progress(&self, dir: Dir) -> u8 {
        match dir {
            Dir::ToServer => {
                if self.done[0] {
                    2
                } else {
                    u8::from(self.client_hello.is_some())
                }
            }
            Dir::ToClient => {
                if self.done[1] {
                    3
                } else if self.cert.is_some() {
                    2
                } else {
                    u8::from(self.server_hello.is_some())
                }
            }
        }
    }

    /// Suricata's TLS parser's state names.
    fn progress_name(&self, dir: Dir) -> Option<&'static str> {
        Some(match (dir, self.progress(dir)) {
            (Dir::ToServer, 0) => "client_in_progress",
            (Dir::ToServer, 1) => "client_hello_done",
            (Dir::ToServer, _) => "client_handshake_done",
            (Dir::ToClient, 0) => "server_in_progress",
            (Dir::ToClient, 1) => "server_hello",
            (Dir::ToClient, 2) => "server_cert_done",
            (Dir::ToClient, _) => "server_handshake_done",
        })
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        logger::record(self).map(AppRecord::Tls)
    }
}

#[cfg(test)]
mod tests {
    use crate::AppState;

    #[test]
    fn every_raised_event_is_listed() {
        let n =
            crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "tls");
        assert!(n > 0);
    }
    use super::parser::tests::client_hello_msg;
    use super::x509::tests::sample_cert;
    use super::*;
    use crate::ParseOutput;

    fn records(ctype: u8, payload: &[u8], max: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for c in payload.chunks(max) {
            out.extend([ctype, 3, 3]);
            out.extend((c.len() as u16).to_be_bytes());
            out.extend(c);
        }
        out
    }

    fn server_flight() -> Vec<u8> {
        let mut sh = vec![0x03, 0x03];
        sh.extend([9u8; 32]);
        sh.push(0);
        sh.extend(0xc02fu16.to_be_bytes());
        sh.push(0);
        sh.extend([0, 4, 0xff, 0x01, 0, 0]);
        let mut hs = vec![2u8];
        hs.extend(&(sh.len() as u32).to_be_bytes()[1..]);
        hs.extend(sh);
        let cert = sample_cert();
        let mut list: Vec<u8> = Vec::new();
        list.extend(&(cert.len() as u32).to_be_bytes()[1..]);
        list.extend(&cert);
        let mut body = (list.len() as u32).to_be_bytes()[1..].to_vec();
        body.extend(list);
        hs.push(11);
        hs.extend(&(body.len() as u32).to_be_bytes()[1..]);
        hs.extend(body);
        hs.extend([14, 0, 0, 0]);
        // Spread over small records to test reassembly across records.
        records(22, &hs, 50)
    }

    #[test]
    fn probes() {
        let ch = records(22, &client_hello_msg("a.b"), 1 << 14);
        assert_eq!(probe(Dir::ToServer, &ch), Probe::Match);
        assert_eq!(probe(Dir::ToServer, &ch[..3]), Probe::NeedMore);
        assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1"), Probe::NoMatch);
        assert_eq!(probe(Dir::ToClient, &server_flight()), Probe::Match);
    }

    #[test]
    fn handshake_across_records_and_segments() {
        for step in [1, 7, 1460] {
            let mut s = TlsState::new();
            let mut out = ParseOutput::default();
            let ch = records(22, &client_hello_msg("secure.example.com"), 100);
            for c in ch.chunks(step) {
                s.parse(Dir::ToServer, c, &mut out);
            }
            let tx = s.tx(0).unwrap();
            assert_eq!(tx.buffer(detect::SNI, 0), Buf::Ready(b"secure.example.com"));
            assert_eq!(tx.buffer(detect::CERT_SUBJECT, 0), Buf::NotYet);
            assert!(matches!(tx.buffer(detect::JA3_HASH, 0), Buf::Ready(h) if h.len() == 32));
            for c in server_flight().chunks(step) {
                s.parse(Dir::ToClient, c, &mut out);
            }
            assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
            let tx = s.tx(0).unwrap();
            assert!(tx.complete(Dir::ToClient));
            assert_eq!(
                tx.buffer(detect::CERT_SUBJECT, 0),
                Buf::Ready(b"C=US, CN=example.com")
            );
            assert_eq!(
                tx.buffer(detect::CERT_ISSUER, 0),
                Buf::Ready(b"C=US, O=Test CA")
            );
            assert_eq!(tx.buffer(detect::CERT_SERIAL, 0), Buf::Ready(b"00:C4:1F"));
            assert!(
                matches!(tx.buffer(detect::CERT_FINGERPRINT, 0), Buf::Ready(f) if f.len() == 59)
            );
            assert_eq!(
                tx.buffer(detect::SUBJECTALTNAME, 1),
                Buf::Ready(b"www.example.com")
            );
            assert_eq!(tx.buffer(detect::VERSION_NUM, 0), Buf::Ready(&[3, 3]));
            assert_eq!(tx.buffer(detect::STATE, 0), Buf::Ready(&[3]));
            assert_eq!(tx.buffer(detect::VERSION_SERVER, 0), Buf::Ready(&[3, 3]));
            // The test ClientHello's random is 32 bytes of 7.
            assert_eq!(tx.buffer(detect::RANDOM_CLIENT, 0), Buf::Ready(&[7; 32]));
            assert_eq!(
                tx.buffer(detect::RANDOM_TIME_CLIENT, 0),
                Buf::Ready(&[7; 4])
            );
            assert_eq!(
                tx.buffer(detect::RANDOM_BYTES_CLIENT, 0),
                Buf::Ready(&[7; 28])
            );
            assert_eq!(
                tx.buffer(detect::NOTAFTER, 0),
                Buf::Ready(&2_019_729_600i64.to_be_bytes())
            );
            let Some(AppRecord::Tls(r)) = tx.record() else {
                panic!()
            };
            assert_eq!(r.sni, "secure.example.com");
            assert_eq!(r.version, "TLS 1.2");
            assert_eq!(r.subject, "C=US, CN=example.com");
            assert_eq!(r.notafter, "2034-01-01T12:00:00");
            assert!(r.ja3s.is_some() && r.ja3.is_some());
        }
    }

    #[test]
    fn sslv2_client_hello_version_is_the_client_side_version() {
        let mut s = TlsState::new();
        let mut out = ParseOutput::default();
        // 2-byte SSLv2 header, CLIENT-HELLO offering TLS 1.0.
        s.parse(
            Dir::ToServer,
            b"\x80\x0b\x01\x03\x01\x00\x00\x00\x00\x00\x00",
            &mut out,
        );
        let tx = s.tx(0).unwrap();
        assert_eq!(tx.buffer(detect::VERSION_CLIENT, 0), Buf::Ready(&[3, 1]));
        assert_eq!(tx.buffer(detect::VERSION_SERVER, 0), Buf::NotYet);
        assert_eq!(tx.buffer(detect::RANDOM_CLIENT, 0), Buf::Absent);
    }

    #[test]
    fn garbage_stops_parsing() {
        let mut s = TlsState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\x16\x03\x01\xff\xff", &mut out);
        assert_eq!(out.anomalies, vec!["tls.invalid_record_length"]);
        let mut s = TlsState::new();
        let mut out = ParseOutput::default();
        s.parse(
            Dir::ToServer,
            b"\x16\x03\x01\x00\x05\x01\x00\x00\x01\x00",
            &mut out,
        );
        // A hello shorter than its fixed part has an invalid length (Suricata's name).
        assert_eq!(out.anomalies, vec!["tls.handshake_invalid_length"]);
    }

    /// The ClientHello's SNI anomalies, and a server that answers with an alert is still
    /// TLS (what the reference says on the same records).
    #[test]
    fn sni_anomalies_and_a_server_alert() {
        let hello = |exts: &[u8]| {
            let mut body = b"\x03\x03".to_vec();
            body.extend_from_slice(&[0x11; 32]);
            body.extend_from_slice(b"\x00\x00\x02\x00\x2f\x01\x00");
            body.extend_from_slice(&(exts.len() as u16).to_be_bytes());
            body.extend_from_slice(exts);
            let mut hs = vec![1, 0];
            hs.extend_from_slice(&(body.len() as u16).to_be_bytes());
            hs.extend_from_slice(&body);
            let mut rec = b"\x16\x03\x01".to_vec();
            rec.extend_from_slice(&(hs.len() as u16).to_be_bytes());
            rec.extend_from_slice(&hs);
            let mut s = TlsState::new();
            let mut out = ParseOutput::default();
            s.parse(Dir::ToServer, &rec, &mut out);
            out.anomalies
        };
        let sni = |kind: u8, name: &[u8]| {
            let mut entry = vec![kind];
            entry.extend_from_slice(&(name.len() as u16).to_be_bytes());
            entry.extend_from_slice(name);
            let mut e = vec![0, 0];
            e.extend_from_slice(&((entry.len() + 2) as u16).to_be_bytes());
            e.extend_from_slice(&(entry.len() as u16).to_be_bytes());
            e.extend_from_slice(&entry);
            e
        };
        assert!(hello(&sni(0, b"a.com")).is_empty());
        assert_eq!(hello(&sni(1, b"a.com")), vec!["tls.invalid_sni_type"]);
        let mut two = sni(0, b"a.com");
        two.extend_from_slice(&sni(0, b"b.com"));
        assert_eq!(hello(&two), vec!["tls.multiple_sni_extensions"]);
        assert_eq!(
            probe(Dir::ToClient, b"\x15\x03\x03\x00\x02\x02\x28"),
            Probe::Match
        );
        assert_eq!(
            probe(Dir::ToServer, b"\x15\x03\x03\x00\x02\x02\x28"),
            Probe::NoMatch
        );
    }
}
