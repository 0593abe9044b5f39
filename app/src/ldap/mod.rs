//! LDAP over TCP and UDP (CLDAP) on ports 389 and 3268, as Suricata 8 has it
//! (LDAPS on 636 is TLS): detection by a message that reads on those ports, BER
//! decoding with bounded lengths, lists and filter nesting, requests paired with
//! their responses by message id, the `ldap.*` keywords, app-layer events, the EVE
//! `ldap` record, and the frames `ldap.pdu` and `ldap.stream` ([`frames`]).

pub mod config;
pub mod detect;
pub mod eve;
pub mod frames;
pub mod parser;
pub mod state;

pub use state::{LdapState, LdapTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::snmp::ber::Error;
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// LDAP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Ldap,
    name: "ldap",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::BOTH,
    // Suricata's LDAP has a probing parser on its ports (389, and 3268 in the stock
    // suricata.yaml) and no pattern.
    default_ports: &[389, 3268],
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: |_, data| is_reply(data),
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    frames: frames::FRAMES,
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "ldap",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "ldap",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "ldap.too_many_transactions",
    "ldap.invalid_data",
    "ldap.request_not_found",
    "ldap.too_many_responses",
];

/// Suricata's probe: a whole message of a known operation (more than one byte).
pub fn probe(data: &[u8]) -> Probe {
    if data.len() < 2 {
        return Probe::NeedMore;
    }
    match parser::message(data) {
        Ok(_) => Probe::Match,
        Err(Error::Incomplete) => Probe::NeedMore,
        Err(Error::Invalid) => Probe::NoMatch,
    }
}

/// Whether the first message is a response (the flow is then reversed).
pub fn is_reply(data: &[u8]) -> bool {
    parser::message(data).is_ok_and(|(m, _)| !parser::is_request(m.op.tag))
}

fn default_state(udp: bool) -> LdapState {
    LdapState::new(udp, state::DEFAULT_MAX_TX, state::DEFAULT_MAX_RESPONSES)
}

/// Fuzz target: the stream parser and the datagram parser over the shared driver's
/// layout, the records rendered, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut default_state(false), data);
    crate::fuzz::drive(&mut LdapState::new(true, 4, 4), data);
    let mut s = default_state(true);
    let mut out = crate::ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    s.parse(Dir::ToClient, data, &mut out);
    for i in 0..s.tx_count() {
        if let Some(r) = s.tx(i).and_then(|t| t.record()) {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            eve::render(&r, &mut o);
            o.end();
        }
    }
    let _ = probe(data);
    crate::fuzz::probes(data);
    let r = crate::Registry::default();
    let _ = r.probe(Transport::Tcp, Dir::ToServer, [40000, 389], data);
}

impl Transaction for LdapTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        match dir {
            Dir::ToServer => self.request.is_some() || !self.open(),
            Dir::ToClient => !self.open(),
        }
    }

    /// To server: 1 once the request is in. To client: the number of responses,
    /// then 255 once complete.
    fn progress(&self, dir: Dir) -> u8 {
        match dir {
            Dir::ToServer => u8::from(self.request.is_some() || !self.open()),
            Dir::ToClient if !self.open() => 255,
            Dir::ToClient => u8::try_from(self.responses.len()).unwrap_or(254).min(254),
        }
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        frames::buffer(self, id, index).unwrap_or_else(|| detect::buffer(self, id, index))
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        frames::frame_meta(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Ldap(eve::record(self)))
    }

    /// A request's transaction holds both directions: its events are seen from both.
    fn events_both_ways(&self) -> bool {
        true
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
