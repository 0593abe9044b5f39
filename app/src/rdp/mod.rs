//! RDP (MS-RDPBCGR) over TCP port 3389, as Suricata 8 has it: detection on that port
//! by a first byte that is a TPKT's (Suricata has no pattern for it), the connection
//! sequence read into one transaction per message (Connection Request with its cookie
//! and RDP_NEG_REQ, Connection Confirm with its RDP_NEG_RSP or RDP_NEG_FAILURE, MCS
//! Connect Initial with the client core and network data, MCS Connect Response), and
//! after a negotiated TLS the server's certificate chain (`tls_handshake`); then
//! nothing more. No keywords of its own (`alert rdp` and `app-layer-protocol:rdp`
//! only), no app-layer events, the EVE `rdp` record.

pub mod eve;
pub mod names;
pub mod parser;
pub mod state;

pub use state::{RdpState, RdpTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// RDP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Rdp,
    name: "rdp",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[3389],
    // Suricata's RDP has probing parsers on its port only.
    port_bound: true,
    probe,
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(RdpState::new())),
    inner: &[],
    buffers: &[],
    frames: &[],
    keywords: &[],
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "rdp",
        render: eve::render,
        tx_id: false,
        // Suricata's RDP logger writes the packet's direction.
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "rdp",
        run: fuzz,
    }],
};

/// Suricata's probe, either direction: the TPKT version byte first.
pub fn probe(_: Transport, _: Dir, data: &[u8]) -> Probe {
    match data.first() {
        None => Probe::NeedMore,
        Some(&parser::TPKT_VERSION) => Probe::Match,
        Some(_) => Probe::NoMatch,
    }
}

/// Fuzz target: the state over the shared driver's pieces, every record rendered,
/// each parser alone, and the probes.
pub fn fuzz(data: &[u8]) {
    let mut s = RdpState::new();
    crate::fuzz::drive(&mut s, data);
    for i in 0..s.tx_count() {
        if let Some(r) = s.tx(i).and_then(|t| t.record()) {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            eve::render(&r, &mut o);
            o.end();
        }
    }
    let _ = parser::tpkt(data);
    let _ = parser::tls_record(data);
    let _ = parser::x509_serial(data);
    let _ = probe(Transport::Tcp, Dir::ToServer, data);
    crate::fuzz::probes(data);
}

impl Transaction for RdpTx {
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

    /// A message's transaction is its direction's only (Suricata's unidirectional
    /// transactions).
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn buffer(&self, _id: BufferId, _index: usize) -> Buf<'_> {
        Buf::Absent
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Rdp(eve::record(self)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::parser::tests::{CC_SSL, CR_COOKIE};
    use super::*;
    use crate::ParseOutput;

    #[test]
    fn probes_on_its_port() {
        let r = crate::Registry::default();
        assert_eq!(
            r.probe(Transport::Tcp, Dir::ToServer, [49000, 3389], CR_COOKIE),
            crate::Detected::Proto(AppProto::Rdp)
        );
        assert_ne!(
            r.probe(Transport::Tcp, Dir::ToServer, [49000, 3390], CR_COOKIE),
            crate::Detected::Proto(AppProto::Rdp)
        );
        assert_eq!(probe(Transport::Tcp, Dir::ToServer, b""), Probe::NeedMore);
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, b"\x16"),
            Probe::NoMatch
        );
    }

    fn json(tx: &dyn Transaction) -> String {
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&tx.record().unwrap(), &mut o);
        o.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn records() {
        let mut s = RdpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, CR_COOKIE, &mut out);
        s.parse(Dir::ToClient, CC_SSL, &mut out);
        assert_eq!(
            json(s.tx(0).unwrap()),
            r#"{"rdp":{"tx_id":1,"event_type":"initial_request","cookie":"user123"}}"#
        );
        assert_eq!(
            json(s.tx(1).unwrap()),
            concat!(
                r#"{"rdp":{"tx_id":2,"event_type":"initial_response","server_supports":"#,
                r#"["extended_client_data","dynvc_gfx","restricted_admin","#,
                r#""redirected_authentication"],"protocol":"ssl"}}"#
            )
        );
        assert!(s.tx(0).unwrap().inspects(Dir::ToServer));
        assert!(!s.tx(1).unwrap().inspects(Dir::ToServer));
    }
}
