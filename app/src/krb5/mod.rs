//! Kerberos 5 (RFC 4120) over UDP and TCP port 88, as Suricata 8 has it: detection by
//! content on that port (an `[APPLICATION n]` message of protocol version 5, after a
//! record mark over TCP), one transaction per AS-REQ, AS-REP, TGS-REQ, TGS-REP and
//! KRB-ERROR inspected in the direction it came, the `krb5_msg_type`, `krb5_err_code`,
//! `krb5.cname`, `krb5.sname` and `krb5.ticket_encryption` keywords, the
//! `krb5.malformed_data` and `krb5.weak_encryption` events and the EVE `krb5` record.
//! The messages are decoded with the `kerberos-parser` crate (see [`parser`] for why).

pub mod detect;
pub mod eve;
pub mod gssapi;
pub mod parser;
pub mod state;

pub use state::{Krb5State, Krb5Tx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// Kerberos 5.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Krb5,
    name: "krb5",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::BOTH,
    default_ports: &[88],
    // Suricata's Kerberos has probing parsers on its port and no pattern.
    port_bound: true,
    probe,
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|t| Box::new(Krb5State::new(t))),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "krb5",
        render: eve::render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "krb5",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &["krb5.malformed_data", "krb5.weak_encryption"];

/// Suricata's probes: a message of version 5 (a datagram; over TCP, after a first
/// record mark of at most 16 KiB).
pub fn probe(transport: Transport, _dir: Dir, data: &[u8]) -> Probe {
    let verdict = match transport {
        Transport::Udp => parser::probe_message(data),
        Transport::Tcp => parser::probe_stream(data),
    };
    match verdict {
        Some(true) => Probe::Match,
        Some(false) => Probe::NoMatch,
        None => Probe::NeedMore,
    }
}

/// Fuzz target: the parser over TCP (the shared driver's pieces) and over UDP (the
/// input as one datagram each way), every record rendered, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut Krb5State::new(Transport::Tcp), data);
    let mut s = Krb5State::new(Transport::Udp);
    let mut out = crate::ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    if let Some(rest) = data.get(4..) {
        s.parse(Dir::ToClient, rest, &mut out);
    }
    let mut t = Krb5State::new(Transport::Tcp);
    t.parse(Dir::ToServer, data, &mut out);
    for state in [&s, &t] {
        for i in 0..state.tx_count() {
            if let Some(r) = state.tx(i).and_then(|t| t.record()) {
                let mut buf = Vec::new();
                let mut o = meerkat_eve::Obj::new(&mut buf);
                eve::render(&r, &mut o);
                o.end();
            }
        }
    }
    for transport in [Transport::Udp, Transport::Tcp] {
        let _ = probe(transport, Dir::ToServer, data);
    }
    crate::fuzz::probes(data);
}

impl Transaction for Krb5Tx {
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

    /// A message's transaction is its direction's only.
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Krb5(eve::record(self)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::parser::tests::{AS_REP_RC4, AS_REQ_ALICE, ERR_PREAUTH};
    use super::*;
    use crate::value::KwValue;
    use crate::{KeywordKind, ParseOutput};

    #[test]
    fn every_raised_event_is_listed() {
        let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "krb5");
        assert!(n >= 2);
    }

    #[test]
    fn probes_on_its_port() {
        let r = crate::Registry::default();
        assert_eq!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 88], AS_REQ_ALICE),
            crate::Detected::Proto(AppProto::Krb5)
        );
        let mut rec = (AS_REQ_ALICE.len() as u32).to_be_bytes().to_vec();
        rec.extend_from_slice(AS_REQ_ALICE);
        assert_eq!(
            r.probe(Transport::Tcp, Dir::ToServer, [40000, 88], &rec),
            crate::Detected::Proto(AppProto::Krb5)
        );
        // Port-bound, as Suricata's.
        assert_ne!(
            r.probe(Transport::Udp, Dir::ToServer, [40000, 8888], AS_REQ_ALICE),
            crate::Detected::Proto(AppProto::Krb5)
        );
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let k = detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        let v: KwValue = parse(Some(v)).unwrap();
        eval(&v, dir, 0, tx)
    }

    fn json(tx: &dyn Transaction) -> String {
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&tx.record().unwrap(), &mut o);
        o.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn messages_keywords_and_records() {
        let mut s = Krb5State::new(Transport::Udp);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, AS_REQ_ALICE, &mut out);
        s.parse(Dir::ToClient, ERR_PREAUTH, &mut out);
        s.parse(Dir::ToServer, AS_REQ_ALICE, &mut out);
        s.parse(Dir::ToClient, AS_REP_RC4, &mut out);
        assert_eq!(out.anomalies, ["krb5.weak_encryption"]);
        let (req, err, rep) = (s.tx(0).unwrap(), s.tx(1).unwrap(), s.tx(3).unwrap());
        assert_eq!(eval("krb5_msg_type", "10", Dir::ToServer, req), Some(true));
        assert_eq!(eval("krb5_msg_type", "10", Dir::ToClient, req), Some(false));
        assert_eq!(eval("krb5_err_code", "25", Dir::ToClient, err), Some(true));
        assert_eq!(eval("krb5_err_code", "25", Dir::ToServer, err), Some(false));
        assert_eq!(eval("krb5_err_code", "0", Dir::ToServer, req), Some(false));
        let te = "krb5.ticket_encryption";
        assert_eq!(eval(te, "!weak", Dir::ToClient, rep), Some(true));
        assert_eq!(eval(te, "weak", Dir::ToClient, rep), Some(false));
        assert_eq!(eval(te, "23, 18", Dir::ToClient, rep), Some(true));
        assert_eq!(eval(te, "rc4-hmac", Dir::ToClient, rep), Some(false));
        assert_eq!(eval(te, "!weak", Dir::ToServer, req), Some(false));
        // The name buffers are the client's only, one item per component.
        assert_eq!(req.buffer(detect::CNAME_TC, 0), Buf::Absent);
        assert_eq!(err.buffer(detect::CNAME_TC, 0), Buf::Absent);
        assert_eq!(err.buffer(detect::SNAME_TC, 1), Buf::Ready(b"EXAMPLE.COM"));
        assert_eq!(rep.buffer(detect::CNAME_TC, 0), Buf::Ready(b"alice"));
        assert_eq!(rep.buffer(detect::CNAME_TC, 1), Buf::Absent);
        assert_eq!(
            json(req),
            concat!(
                r#"{"krb5":{"msg_type":"KRB_AS_REQ","cname":"alice","realm":"EXAMPLE.COM","#,
                r#""sname":"krbtgt/EXAMPLE.COM","encryption":"<none>","weak_encryption":false}}"#
            )
        );
        assert_eq!(
            json(err),
            concat!(
                r#"{"krb5":{"msg_type":"KRB_ERROR","failed_request":"KRB_AS_REQ","#,
                r#""error_code":"KDC_ERR_PREAUTH_REQUIRED","cname":"<empty>","realm":"<empty>","#,
                r#""sname":"krbtgt/EXAMPLE.COM","encryption":"<none>","weak_encryption":false}}"#
            )
        );
        assert_eq!(
            json(rep),
            concat!(
                r#"{"krb5":{"msg_type":"KRB_AS_REP","cname":"alice","realm":"EXAMPLE.COM","#,
                r#""sname":"krbtgt/EXAMPLE.COM","encryption":"rc4-hmac","weak_encryption":true,"#,
                r#""ticket_encryption":"aes256-cts-hmac-sha1-96","ticket_weak_encryption":false}}"#
            )
        );
    }
}
