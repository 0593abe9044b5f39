//! IKE over UDP port 500, as Suricata 8 has it: detection by the ISAKMP header on that
//! port (IKEv1, and IKEv2 with the header's minor version 0, an exchange type of
//! IKEv2 and a length that is the datagram's), one transaction per message, the `ike.*`
//! keywords, app-layer events (IKEv2's weak-crypto and proposal checks) and the EVE
//! `ike` record (`ikev1` or IKEv2's role, chosen algorithms, payloads and notifies).
//! Port 4500 and its non-ESP marker are not taken: Suricata 8 does not take them either
//! (measured: such flows are `failed` in the reference), and on port 500 four zero
//! bytes are an SPI's, not a marker. IKEv2 messages raise no `malformed_data`,
//! `payload_extra_data` nor `multiple_server_proposal` (measured: a payload chain that
//! cannot be read, bytes after it and a responder's several proposals raise nothing in
//! the reference). As the reference, a flow whose first datagram toward the client
//! has a zero responder SPI is reversed from that datagram on.

pub mod detect;
pub mod eve;
pub mod parser;
pub mod state;
pub mod v2;

pub use state::{IkeState, IkeTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// IKE.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Ike,
    name: "ike",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::UDP,
    default_ports: &[500],
    // Suricata's IKE has a probing parser on its port and no pattern.
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(IkeState::new())),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "ike",
        render: eve::render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "ike",
        run: fuzz,
    }],
};

/// The anomalies of Suricata's IKE parser (the weak-crypto, proposal and encryption
/// ones are raised by IKEv2 messages).
pub const EVENTS: &[&str] = &[
    "ike.malformed_data",
    "ike.no_encryption",
    "ike.weak_crypto_enc",
    "ike.weak_crypto_prf",
    "ike.weak_crypto_dh",
    "ike.weak_crypto_auth",
    "ike.weak_crypto_no_dh",
    "ike.weak_crypto_no_auth",
    "ike.invalid_proposal",
    "ike.unknown_proposal",
    "ike.payload_extra_data",
    "ike.multiple_server_proposal",
];

/// An ISAKMP header of version 1, or of version 2.0 with an IKEv2 exchange type and
/// the datagram's length, as Suricata's probe takes them.
pub fn probe(data: &[u8]) -> Probe {
    match parser::header(data) {
        Some((h, _)) if h.maj_ver == 1 => Probe::Match,
        Some((h, _))
            if h.maj_ver == 2
                && h.min_ver == 0
                && v2::EXCHANGES.contains(&h.exch_type)
                && usize::try_from(h.length).is_ok_and(|n| n == data.len()) =>
        {
            Probe::Match
        }
        _ => Probe::NoMatch,
    }
}

/// Fuzz target: the parser over the datagrams the shared driver cuts, each direction
/// as one whole datagram, every record rendered, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut IkeState::new(), data);
    let mut s = IkeState::new();
    let mut out = crate::ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    if let Some(rest) = data.get(1..) {
        s.parse(Dir::ToClient, rest, &mut out);
    }
    for i in 0..s.tx_count() {
        if let Some(tx) = s.tx(i) {
            for r in [tx.record(), tx.event_record(Dir::ToClient)]
                .into_iter()
                .flatten()
            {
                let mut buf = Vec::new();
                let mut o = meerkat_eve::Obj::new(&mut buf);
                eve::render(&r, &mut o);
                o.end();
            }
        }
    }
    for first in [v2::PT_SA, v2::PT_NOTIFY, v2::PT_TSI, v2::PT_VENDOR_ID] {
        if let Ok(p) = v2::payloads(data, first) {
            let mut out = crate::ParseOutput::default();
            for prop in &p.proposals {
                v2::check(prop, &mut out);
            }
        }
    }
    crate::fuzz::probes(data);
    let r = crate::Registry::default();
    let _ = r.probe(Transport::Udp, Dir::ToServer, [500, 500], data);
}

impl Transaction for IkeTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A message is the whole transaction.
    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    /// A message's transaction is its direction's only (Suricata 8's IKE transactions
    /// are unidirectional): inspected, and freed, without waiting for the other side.
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    /// An alert's record: Suricata's extended one.
    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Ike(eve::record(self, true)))
    }

    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        (dir == Dir::ToClient).then(|| AppRecord::Ike(eve::record(self, false)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::KwValue;
    use crate::{KeywordKind, ParseOutput};

    fn message(init: [u8; 8], resp: [u8; 8], body: &[u8], next: u8) -> Vec<u8> {
        let mut m = Vec::new();
        m.extend_from_slice(&init);
        m.extend_from_slice(&resp);
        m.extend_from_slice(&[next, 0x10, 2, 0, 0, 0, 0, 0]);
        m.extend_from_slice(&((28 + body.len()) as u32).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    fn payload(next: u8, body: &[u8]) -> Vec<u8> {
        let mut p = vec![next, 0];
        p.extend_from_slice(&((4 + body.len()) as u16).to_be_bytes());
        p.extend_from_slice(body);
        p
    }

    /// An SA of one proposal with one transform of `attrs` (4-byte TV attributes).
    fn sa(next: u8, attrs: &[[u8; 4]]) -> Vec<u8> {
        let mut t = vec![1, 1, 0, 0];
        for a in attrs {
            t.extend_from_slice(a);
        }
        let mut prop = vec![1, 1, 0, 1];
        prop.extend(payload(0, &t));
        let mut body = vec![0, 0, 0, 1, 0, 0, 0, 1];
        body.extend(payload(0, &prop));
        payload(next, &body)
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let k = detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        let v: KwValue = parse(Some(v)).unwrap();
        eval(&v, dir, 0, tx)
    }

    fn json(r: AppRecord) -> String {
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&r, &mut o);
        o.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn every_raised_event_is_listed() {
        let src = concat!(include_str!("state.rs"), include_str!("v2.rs"));
        let n = crate::events::raised_names_are_listed(EVENTS, src, "ike");
        assert!(n >= 10);
    }

    #[test]
    fn probes() {
        let m = message([1; 8], [0; 8], &payload(0, b"x"), 13);
        assert_eq!(probe(&m), Probe::Match);
        assert_eq!(probe(&m[..27]), Probe::NoMatch);
        let mut v2 = m.clone();
        v2[17] = 0x20;
        assert_eq!(probe(&v2), Probe::NoMatch);
        let r = crate::Registry::default();
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [500, 500], &m),
            crate::Detected::Proto(AppProto::Ike)
        );
        assert_ne!(
            r.probe(Transport::Udp, Dir::ToServer, [4500, 4500], &m),
            crate::Detected::Proto(AppProto::Ike)
        );
    }

    #[test]
    fn exchange_keywords_and_records() {
        let (i, r) = ([0x11; 8], [0x22; 8]);
        let attrs = [[0x80, 1, 0, 7], [0x80, 2, 0, 2], [0x80, 14, 0, 128]];
        let mut out = ParseOutput::default();
        let mut s = IkeState::new();
        let mut req = sa(13, &attrs);
        req.extend(payload(0, b"\xde\xad\xbe\xef"));
        s.parse(Dir::ToServer, &message(i, [0; 8], &req, 1), &mut out);
        s.parse(Dir::ToClient, &message(i, r, &sa(0, &attrs), 1), &mut out);
        let mut ke = payload(10, &[7; 64]);
        ke.extend(payload(0, &[9; 20]));
        s.parse(Dir::ToServer, &message(i, r, &ke, 4), &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        assert_eq!(s.tx_count(), 3);
        let (q, a, k) = (s.tx(0).unwrap(), s.tx(1).unwrap(), s.tx(2).unwrap());
        assert_eq!(
            q.buffer(detect::INIT_SPI, 0),
            Buf::Ready(b"1111111111111111")
        );
        assert_eq!(q.buffer(detect::RESP_SPI, 0), Buf::Absent);
        assert_eq!(
            a.buffer(detect::RESP_SPI, 0),
            Buf::Ready(b"2222222222222222")
        );
        assert_eq!(q.buffer(detect::VENDOR, 0), Buf::Ready(b"deadbeef"));
        assert_eq!(q.buffer(detect::VENDOR, 1), Buf::Absent);
        assert_eq!(k.buffer(detect::KEY_EXCHANGE_TS, 0), Buf::Ready(&[7; 64]));
        assert_eq!(k.buffer(detect::KEY_EXCHANGE_TC, 0), Buf::Absent);
        assert_eq!(k.buffer(detect::NONCE_TS, 0), Buf::Ready(&[9; 20]));
        assert_eq!(
            eval("ike.chosen_sa_attribute", "alg_enc=7", Dir::ToClient, a),
            Some(true)
        );
        assert_eq!(
            eval("ike.chosen_sa_attribute", "alg_enc=7", Dir::ToServer, q),
            Some(false)
        );
        assert_eq!(
            eval(
                "ike.chosen_sa_attribute",
                "sa_key_length=128",
                Dir::ToClient,
                a
            ),
            Some(true)
        );
        assert_eq!(eval("ike.exchtype", "2", Dir::ToClient, a), Some(true));
        assert_eq!(
            eval("ike.key_exchange_payload_length", ">63", Dir::ToServer, k),
            Some(true)
        );
        assert_eq!(
            eval("ike.nonce_payload_length", "20", Dir::ToServer, q),
            Some(false)
        );
        assert_eq!(
            eval("ike.nonce_payload_length", "20", Dir::ToServer, k),
            Some(true)
        );
        let chosen = concat!(
            r#""alg_enc":"EncAesCbc","alg_enc_raw":7,"alg_hash":"HashSha","alg_hash_raw":2,"#,
            r#""sa_key_length":"Unknown","sa_key_length_raw":128,"#
        );
        assert_eq!(
            json(q.event_record(Dir::ToClient).unwrap()),
            format!(
                concat!(
                    r#"{{"ike":{{"version_major":1,"version_minor":0,"init_spi":"1111111111111111","#,
                    r#""resp_spi":"0000000000000000","message_id":0,"exchange_type":2,"#,
                    r#""payload":["SecurityAssociation","Proposal","Transform","VendorID"],"#,
                    r#""ikev1":{{"doi":1,"encrypted_payloads":false,"client":{{"proposals":[{{{}}}]}},"#,
                    r#""server":{{}},"vendor_ids":["deadbeef"]}}}}}}"#
                ),
                chosen.trim_end_matches(',')
            )
        );
        let alert = json(k.record().unwrap());
        assert!(
            alert.contains(&format!(
                r#""exchange_type":2,"exchange_type_verbose":"Identity Protection",{chosen}"payload":["KeyExchange","Nonce"]"#
            )),
            "{alert}"
        );
        assert!(alert.contains(r#""nonce_payload":"09090909"#), "{alert}");
        assert!(parse_ok("ike.chosen_sa_attribute", "nope=1").is_err());
        assert!(parse_ok("ike.exchtype", "256").is_err());
    }

    /// An IKEv2 header: version 2.0, `exch`, `flags`, message id 0.
    fn message_v2(
        init: [u8; 8],
        resp: [u8; 8],
        body: &[u8],
        next: u8,
        exch: u8,
        flags: u8,
    ) -> Vec<u8> {
        let mut m = message(init, resp, body, next);
        m[17] = 0x20;
        m[18] = exch;
        m[19] = flags;
        m
    }

    /// An IKEv2 SA payload of one IKE proposal of `transforms` (type, id).
    fn sa_v2(next: u8, transforms: &[(u8, u16)]) -> Vec<u8> {
        let mut ts = Vec::new();
        for (k, &(t, id)) in transforms.iter().enumerate() {
            let last = if k + 1 == transforms.len() { 0 } else { 3 };
            ts.extend_from_slice(&[last, 0, 0, 8, t, 0]);
            ts.extend_from_slice(&id.to_be_bytes());
        }
        let mut prop = vec![0, 0];
        prop.extend_from_slice(&((8 + ts.len()) as u16).to_be_bytes());
        prop.extend_from_slice(&[1, 1, 0, transforms.len() as u8]);
        prop.extend(ts);
        payload(next, &prop)
    }

    /// An IKE_SA_INIT exchange: the request with a weak proposal, the response
    /// choosing a strong one with a notification; their probes, events, keywords and
    /// records.
    #[test]
    fn ikev2_exchange() {
        let (i, r) = ([0xa1; 8], [0x01; 8]);
        let mut body = sa_v2(40, &[(1, 3), (2, 5), (3, 12), (4, 14)]);
        body.extend(payload(0, &[5; 16]));
        let req = message_v2(i, [0; 8], &body, 33, 34, 0x08);
        assert_eq!(probe(&req), Probe::Match);
        let mut longer = req.clone();
        longer.push(0);
        assert_eq!(
            probe(&longer),
            Probe::NoMatch,
            "the length is the datagram's"
        );
        let mut minor = req.clone();
        minor[17] = 0x21;
        assert_eq!(probe(&minor), Probe::NoMatch);
        let mut body = sa_v2(41, &[(1, 12), (2, 5), (3, 12), (4, 14)]);
        // NO_PROPOSAL_CHOSEN then INITIAL_CONTACT (an error and a status).
        body.extend(payload(41, &[0, 0, 0, 14]));
        body.extend(payload(0, &[0, 0, 0x40, 0]));
        let resp = message_v2(i, r, &body, 33, 34, 0x20);
        let mut s = IkeState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &req, &mut out);
        assert_eq!(out.anomalies, ["ike.weak_crypto_enc"]);
        s.parse(Dir::ToClient, &resp, &mut out);
        assert_eq!(out.anomalies.len(), 1);
        let (q, a) = (s.tx(0).unwrap(), s.tx(1).unwrap());
        assert_eq!(eval("ike.exchtype", "34", Dir::ToServer, q), Some(true));
        assert_eq!(
            eval("ike.chosen_sa_attribute", "alg_enc=12", Dir::ToClient, a),
            Some(true)
        );
        assert_eq!(
            eval("ike.chosen_sa_attribute", "alg_dh=14", Dir::ToClient, a),
            Some(true)
        );
        assert_eq!(
            eval("ike.chosen_sa_attribute", "alg_enc=3", Dir::ToServer, q),
            Some(false)
        );
        assert_eq!(q.buffer(detect::NONCE_TS, 0), Buf::Absent);
        assert_eq!(
            json(q.event_record(Dir::ToClient).unwrap()),
            concat!(
                r#"{"ike":{"version_major":2,"version_minor":0,"init_spi":"a1a1a1a1a1a1a1a1","#,
                r#""resp_spi":"0000000000000000","message_id":0,"exchange_type":34,"role":"initiator","#,
                r#""payload":["SecurityAssociation","Nonce","NoNextPayload"],"ikev2":{"errors":0}}}"#
            )
        );
        assert_eq!(
            json(a.record().unwrap()),
            concat!(
                r#"{"ike":{"version_major":2,"version_minor":0,"init_spi":"a1a1a1a1a1a1a1a1","#,
                r#""resp_spi":"0101010101010101","message_id":0,"exchange_type":34,"role":"responder","#,
                r#""alg_enc":"ENCR_AES_CBC","alg_auth":"AUTH_HMAC_SHA2_256_128","alg_prf":"PRF_HMAC_SHA2_256","#,
                r#""alg_dh":"Modp2048","alg_esn":"NoESN","#,
                r#""payload":["SecurityAssociation","Notify","Notify","NoNextPayload"],"#,
                r#""ikev2":{"errors":1,"notify":["NO_PROPOSAL_CHOSEN","INITIAL_CONTACT"]}}}"#
            )
        );
        // Bytes after the last payload: the message is a transaction, its payloads
        // are not read.
        let mut bad = message_v2(i, r, &payload(0, b"x"), 40, 37, 0x08);
        bad.push(1);
        s.parse(Dir::ToServer, &bad, &mut out);
        assert!(json(s.tx(2).unwrap().record().unwrap()).contains(r#""payload":[],"#));
    }

    /// What a flow's responder chose: only messages toward the client choose (whatever
    /// their initiator flag), the last transform of a kind wins for the record, the
    /// first one over the message's proposals for `ike.chosen_sa_attribute`; an SPI
    /// starting with four zero bytes is no non-ESP marker on port 500.
    #[test]
    fn ikev2_choices() {
        let (i, r) = ([0, 0, 0, 0, 1, 2, 3, 4], [9; 8]);
        let mut s = IkeState::new();
        let mut out = ParseOutput::default();
        // Toward the server, flagged a responder: checked, not chosen.
        let weak = sa_v2(0, &[(1, 3), (2, 1), (3, 1), (4, 2)]);
        s.parse(
            Dir::ToServer,
            &message_v2(i, r, &weak, 33, 34, 0x20),
            &mut out,
        );
        assert_eq!(
            out.anomalies,
            [
                "ike.weak_crypto_enc",
                "ike.weak_crypto_prf",
                "ike.weak_crypto_auth",
                "ike.weak_crypto_dh"
            ]
        );
        let q = s.tx(0).unwrap();
        assert!(
            json(q.record().unwrap()).contains(r#""init_spi":"0000000001020304","#),
            "{}",
            json(q.record().unwrap())
        );
        assert!(json(q.record().unwrap()).contains(r#""role":"responder","alg_enc":"ENCR_NULL","#));
        // Toward the client, flagged an initiator: chosen. Two proposals, two
        // encryption transforms in the first.
        let mut body = vec![2, 0, 0, 24, 1, 1, 0, 2];
        body.extend_from_slice(&[3, 0, 0, 8, 1, 0, 0, 20, 0, 0, 0, 8, 1, 0, 0, 12]);
        body.extend_from_slice(&[0, 0, 0, 16, 2, 2, 0, 1, 0, 0, 0, 8, 4, 0, 0, 19]);
        let resp = message_v2(i, r, &payload(0, &body), 33, 34, 0x08);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, &resp, &mut out);
        // The first proposal has no DH group (its AEAD needs no integrity), the second
        // is AH's without integrity.
        assert_eq!(
            out.anomalies,
            [
                "ike.weak_crypto_no_dh",
                "ike.no_encryption",
                "ike.weak_crypto_no_auth"
            ]
        );
        let a = s.tx(1).unwrap();
        for (v, want) in [
            ("alg_enc=20", true),
            ("alg_enc=12", false),
            ("alg_dh=19", true),
            ("alg_hash=2", false),
        ] {
            assert_eq!(
                eval("ike.chosen_sa_attribute", v, Dir::ToClient, a),
                Some(want),
                "{v}"
            );
        }
        let later = message_v2(i, r, &payload(0, b"n"), 40, 37, 0x20);
        s.parse(Dir::ToClient, &later, &mut out);
        let rec = json(s.tx(2).unwrap().record().unwrap());
        assert!(
            rec.contains(r#""alg_enc":"ENCR_AES_CBC","alg_auth":"NONE","alg_prf":"PRF_NULL","alg_dh":"Ecp256""#),
            "{rec}"
        );
        assert_eq!(
            eval(
                "ike.chosen_sa_attribute",
                "alg_dh=19",
                Dir::ToClient,
                s.tx(2).unwrap()
            ),
            Some(false)
        );
    }

    fn parse_ok(name: &str, v: &str) -> Result<KwValue, String> {
        let k = detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let KeywordKind::Check { parse, .. } = k.kind else {
            panic!()
        };
        parse(Some(v))
    }

    #[test]
    fn malformed_and_encrypted() {
        let mut out = ParseOutput::default();
        let mut s = IkeState::new();
        // Too short for a header, or of another version: dropped without an event,
        // as Suricata does.
        s.parse(Dir::ToServer, b"short", &mut out);
        let mut v3 = message([1; 8], [0; 8], &payload(0, b"abcd"), 13);
        v3[17] = 0x30;
        s.parse(Dir::ToServer, &v3, &mut out);
        assert!(out.anomalies.is_empty());
        assert_eq!(s.tx_count(), 0);
        // A payload longer than the message: no transaction, as Suricata.
        let mut bad = message([1; 8], [0; 8], &payload(0, b"abcd"), 13);
        bad.truncate(bad.len() - 2);
        s.parse(Dir::ToServer, &bad, &mut out);
        assert_eq!(s.tx_count(), 0);
        let mut enc = message([1; 8], [2; 8], b"\x99\x98\x97\x96", 5);
        enc[19] = 1;
        s.parse(Dir::ToServer, &enc, &mut out);
        let t = s.tx(0).unwrap();
        assert!(
            json(t.event_record(Dir::ToClient).unwrap())
                .ends_with(r#""payload":["Identification"],"ikev1":{"encrypted_payloads":true}}}"#)
        );
    }
}
