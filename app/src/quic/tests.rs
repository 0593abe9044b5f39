use super::*;
use crate::ParseOutput;

#[test]
fn every_raised_event_is_listed() {
    let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "quic");
    assert_eq!(n, 4);
}

/// The datagrams of `tests/data/quic/gen.py` kept as fuzz seeds.
fn seed(name: &str) -> Vec<u8> {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("src/quic/seeds/quic")
        .join(name);
    std::fs::read(p).unwrap()
}

fn json(tx: &dyn Transaction) -> String {
    let mut buf = Vec::new();
    let mut o = meerkat_eve::Obj::new(&mut buf);
    eve::render(&tx.record().unwrap(), &mut o);
    o.end();
    String::from_utf8(buf).unwrap()
}

#[test]
fn probes_on_quic_ports_only() {
    let ch = seed("v1_client_initial");
    assert_eq!(probe(&ch), Probe::Match);
    assert_eq!(probe(&ch[..100]), Probe::NoMatch);
    assert_eq!(probe(b""), Probe::NoMatch);
    let r = crate::Registry::default();
    assert_eq!(
        r.probe(Transport::Udp, Dir::ToServer, [40000, 443], &ch),
        crate::Detected::Proto(AppProto::Quic)
    );
    assert_ne!(
        r.probe(Transport::Udp, Dir::ToServer, [40000, 4433], &ch),
        crate::Detected::Proto(AppProto::Quic)
    );
}

/// A v1 client Initial and the server's: the hellos read, fingerprints, buffers, and
/// nothing more parsed in a direction once its hello is in.
#[test]
fn v1_initials() {
    let mut s = QuicState::new();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, &seed("v1_client_initial"), &mut out);
    s.parse(Dir::ToClient, &seed("v1_server_initial"), &mut out);
    assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    assert_eq!(s.tx_count(), 2);
    let (c, sv) = (s.tx(0).unwrap(), s.tx(1).unwrap());
    assert_eq!(c.buffer(detect::SNI, 0), Buf::Ready(b"v1.example.com"));
    assert_eq!(c.buffer(detect::VERSION, 0), Buf::Ready(&[0, 0, 0, 1]));
    assert!(
        matches!(c.buffer(detect::JA3_HASH, 0), Buf::Ready(h) if h == b"c47f12ba3d9a132503f7b8a27ab5c0a0")
    );
    assert_eq!(c.buffer(detect::JA3S_HASH, 0), Buf::Absent);
    assert_eq!(
        c.buffer(detect::JA4_HASH, 0),
        Buf::Ready(b"q13d0308h3_55b375c5d22e_20dfc2e784d3")
    );
    assert_eq!(
        sv.buffer(detect::JA3S_STRING, 0),
        Buf::Ready(b"771,4865,43-51")
    );
    assert!(c.inspects(Dir::ToServer) && !c.inspects(Dir::ToClient));
    let j = json(c);
    assert!(j.starts_with(r#"{"quic":{"version":"1","sni":"v1.example.com","ja3":{"hash":"c47f12ba3d9a132503f7b8a27ab5c0a0""#), "{j}");
    assert!(
        j.contains(r#"{"name":"alpn","type":16,"values":["h3"]}"#),
        "{j}"
    );
    assert_eq!(
        json(sv),
        concat!(
            r#"{"quic":{"version":"1","ja3s":{"hash":"f4febc55ea12b31ae17cfb7e614afda8","#,
            r#""string":"771,4865,43-51"},"extensions":[{"name":"supported_versions","#,
            r#""type":43,"values":["Tls13"]},{"name":"key_share","type":51}]}}"#
        )
    );
    // The hello is in: the client's next Initial is not read.
    s.parse(Dir::ToServer, &seed("v1_client_initial"), &mut out);
    assert_eq!(s.tx_count(), 2);
}

/// A ClientHello over two Initials: the first packet's transaction has the version
/// only, the second's the hello (GREASE kept in JA3, extension types as 64250).
#[test]
fn hello_over_two_initials() {
    let mut s = QuicState::new();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, &seed("split_first"), &mut out);
    assert_eq!(s.tx(0).unwrap().buffer(detect::SNI, 0), Buf::Absent);
    s.parse(Dir::ToServer, &seed("split_second"), &mut out);
    let tx = s.tx(1).unwrap();
    assert_eq!(tx.buffer(detect::SNI, 0), Buf::Ready(b"split.example.com"));
    let Buf::Ready(ja3) = tx.buffer(detect::JA3_STRING, 0) else {
        panic!()
    };
    assert!(ja3.starts_with(b"771,6682-4865-4866-4867,64250-0-10-"));
    assert!(out.anomalies.is_empty());
}

/// Bad input: a truncated Initial is no QUIC packet (nothing, as Suricata), one that
/// does not authenticate is `failed_decrypt`, CRYPTO past the bound is
/// `crypto_frag_too_long`; every prefix of a packet parses without a panic.
#[test]
fn truncated_and_undecryptable_initials() {
    let ch = seed("v1_client_initial");
    let mut s = QuicState::new();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, &ch[..200], &mut out);
    assert_eq!((s.tx_count(), out.anomalies.len()), (0, 0));
    s.parse(Dir::ToServer, &seed("wrong_key"), &mut out);
    assert_eq!(out.anomalies, ["quic.failed_decrypt"]);
    assert_eq!(json(s.tx(0).unwrap()), r#"{"quic":{"version":"1"}}"#);
    for cut in 0..ch.len() {
        let mut s = QuicState::new();
        s.parse(Dir::ToServer, &ch[..cut], &mut ParseOutput::default());
    }
    // A plaintext (unknown version) Initial with a CRYPTO frame at offset 70000.
    let mut p = b"\xc0\x1a\x2a\x3a\x4a\x01a\x01b\x00".to_vec();
    let frame = b"\x06\x80\x01\x11\x70\x01X";
    p.push(0x40 | ((frame.len() + 1) >> 8) as u8);
    p.push((frame.len() + 1) as u8);
    p.push(0); // packet number
    p.extend(frame);
    let mut s = QuicState::new();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, &p, &mut out);
    assert_eq!(out.anomalies, ["quic.crypto_frag_too_long"]);
    // Garbage frames in a plaintext Initial: `error_on_data`.
    let mut g = p.clone();
    let n = g.len();
    g[n - 7] = 0x02; // an ACK frame cut short
    let mut out = ParseOutput::default();
    QuicState::new().parse(Dir::ToServer, &g, &mut out);
    assert_eq!(out.anomalies, ["quic.error_on_data"]);
}

#[test]
fn gquic_chlo_tags_and_cyu() {
    let mut s = QuicState::new();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, &seed("q043_chlo"), &mut out);
    let tx = s.tx(0).unwrap();
    assert_eq!(tx.buffer(detect::UA, 0), Buf::Ready(b"Meerkat/1.0 test"));
    assert_eq!(
        tx.buffer(detect::CYU_STRING, 0),
        Buf::Ready(b"43,PAD-SNI-VER-UAID-PDMD-CFCW")
    );
    assert_eq!(
        tx.buffer(detect::CYU_HASH, 0),
        Buf::Ready(b"d38aedd52f686a375d21f936e7bc383c")
    );
    assert_eq!(tx.buffer(detect::CYU_HASH, 1), Buf::Absent);
    assert_eq!(tx.buffer(detect::VERSION, 0), Buf::Ready(b"Q043"));
}
