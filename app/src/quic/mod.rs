//! QUIC over UDP, as Suricata 8 has it: recognised on UDP ports 443 and 80 by its
//! packet header; every long-header packet until a direction's hello is a
//! transaction of its direction; Initial packets unprotected with the version's
//! initial keys (v1, v2, drafts 23-34, Q050), their CRYPTO frames reassembled across
//! packets into the TLS ClientHello/ServerHello (SNI, extensions, JA3/JA3S, JA4 with
//! the TLS module's code); Google QUIC's CHLO tags (SNI, UAID, CYU); the
//! `quic.version`, `quic.sni`, `quic.ua`, `quic.cyu.hash`, `quic.cyu.string` buffers
//! and `ja3.*`/`ja3s.*`/`ja4.hash` on `alert quic` rules; app-layer events and the EVE
//! `quic` record.

pub mod crypto;
pub mod detect;
pub mod eve;
pub mod parser;
pub mod state;

pub use state::{QuicState, QuicTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// QUIC.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Quic,
    name: "quic",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::UDP,
    // Suricata's QUIC has a probing parser on these ports and no pattern: almost any
    // datagram reads as some QUIC header.
    default_ports: &[443, 80],
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(QuicState::new())),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "quic",
        render: eve::render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "quic",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names; `error_on_header` is one of
/// Suricata's too, which its parser never raises: a datagram that is no QUIC header
/// is left alone).
pub const EVENTS: &[&str] = &[
    "quic.failed_decrypt",
    "quic.error_on_data",
    "quic.error_on_header",
    "quic.crypto_frag_too_long",
];

/// Suricata's probe: a packet header it reads.
pub fn probe(data: &[u8]) -> Probe {
    if parser::header(data).is_some() {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

/// Fuzz target: the parser over the datagrams the shared driver cuts, each direction
/// as one whole datagram, the records rendered, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut QuicState::new(), data);
    let mut s = QuicState::new();
    let mut out = crate::ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    if let Some(rest) = data.get(1..) {
        s.parse(Dir::ToClient, rest, &mut out);
    }
    for i in 0..s.tx_count() {
        if let Some(r) = s.tx(i).and_then(|t| t.record()) {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            eve::render(&r, &mut o);
            o.end();
        }
    }
    let _ = parser::frames(data);
    let _ = probe(data);
    crate::fuzz::probes(data);
    let r = crate::Registry::default();
    let _ = r.probe(Transport::Udp, Dir::ToServer, [40000, 443], data);
}

impl Transaction for QuicTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A packet is the whole transaction.
    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    /// Inspected in its packet's direction only (Suricata's one-direction
    /// transactions).
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Quic(eve::record(self)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
