//! PostgreSQL (frontend/backend protocol 3.0) over TCP, as Suricata 8 has it: off by
//! default (`app-layer.protocols.pgsql.enabled`), recognised on port 5432 by probing
//! either side's first message (a StartupMessage, SSLRequest or CancelRequest from the
//! client; any backend message or an SSL answer from the server), the messages of
//! both directions parsed into Suricata's transactions (startup and authentication
//! steps, simple queries with their rows, COPY, cancel, terminate), an accepted
//! SSLRequest handing the flow to TLS, the `pgsql.query` keyword, app-layer events
//! and the EVE `pgsql` record (passwords per `outputs.eve-log.types.pgsql.passwords`).

pub mod config;
pub mod detect;
pub mod eve;
pub mod logger;
pub mod parser;
pub mod state;

pub use state::{PgsqlState, PgsqlTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// PostgreSQL.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Pgsql,
    name: "pgsql",
    aliases: &[],
    family: None,
    // Suricata 8's default (`enabled: no`).
    enabled_by_default: false,
    transports: Transports::TCP,
    // Suricata's probing parsers are registered on 5432 only; it has no pattern.
    default_ports: &[5432],
    port_bound: true,
    probe: |_, dir, data| probe(dir, data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::TxComplete,
    record: Some(RecordDef {
        event_type: "pgsql",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "pgsql",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "pgsql.invalid_length",
    "pgsql.malformed_request",
    "pgsql.malformed_response",
    "pgsql.too_many_transactions",
];

/// Bytes Suricata's probing parsers look at before giving up on an incomplete message.
pub const MAX_PROBE_DEPTH: usize = 16;

/// Suricata's probes: toward the server, a message that reads (a StartupMessage,
/// SSLRequest, CancelRequest, or any typed message); toward the client, an `S` or `N`
/// (an answer to SSLRequest) or a backend message that reads.
pub fn probe(dir: Dir, data: &[u8]) -> Probe {
    if data.is_empty() {
        return Probe::NeedMore;
    }
    let r = match dir {
        Dir::ToServer => parser::request(data, parser::Expect::Any).map(|_| ()),
        Dir::ToClient => parser::ssl_response(data)
            .or_else(|_| parser::response(data))
            .map(|_| ()),
    };
    match r {
        Ok(()) => Probe::Match,
        Err(parser::Error::Incomplete | parser::Error::Stuck) if data.len() <= MAX_PROBE_DEPTH => {
            Probe::NeedMore
        }
        Err(_) => Probe::NoMatch,
    }
}

/// Fuzz target: the state machine over the shared driver's layout and over
/// lock-step records, each message reader alone, the records rendered, the probes.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut PgsqlState::default(), data);
    lockstep(data);
    for e in [
        parser::Expect::Any,
        parser::Expect::Password,
        parser::Expect::SaslInitial,
        parser::Expect::SaslResponse,
    ] {
        let _ = parser::request(data, e);
    }
    let _ = parser::response(data);
    let _ = parser::ssl_response(data);
    let _ = probe(Dir::ToServer, data);
    let _ = probe(Dir::ToClient, data);
    crate::fuzz::probes(data);
    let r = crate::Registry::default();
    let _ = r.probe(Transport::Tcp, Dir::ToServer, [40000, 5432], data);
}

/// The exchange is lock-step, which pieces of a fixed size rarely are: here the input
/// is records of one byte (the top bit: to the client; the rest: a length up to 127)
/// and that many bytes for that direction (the seeds are written so).
fn lockstep(mut data: &[u8]) {
    let mut s = PgsqlState::new(4);
    let mut out = crate::ParseOutput::default();
    while let [head, rest @ ..] = data {
        let n = usize::from(head & 0x7f).min(rest.len());
        let dir = if head & 0x80 != 0 {
            Dir::ToClient
        } else {
            Dir::ToServer
        };
        s.parse(dir, &rest[..n], &mut out);
        data = &rest[n..];
    }
    s.eof(Dir::ToServer, &mut out);
    s.eof(Dir::ToClient, &mut out);
    for i in 0..s.tx_count() {
        if let Some(tx) = s.tx(i) {
            let _ = tx.buffer(detect::QUERY, 0);
            if let Some(r) = tx.record() {
                let mut buf = Vec::new();
                let mut o = meerkat_eve::Obj::new(&mut buf);
                eve::render(&r, &mut o);
                o.end();
            }
        }
    }
}

impl Transaction for PgsqlTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        let p = match dir {
            Dir::ToServer => self.req,
            Dir::ToClient => self.res,
        };
        p >= state::Progress::Done || self.eof[dir.index()]
    }

    /// The direction's progress and its message count.
    fn progress(&self, dir: Dir) -> u8 {
        let (p, n) = match dir {
            Dir::ToServer => (self.req, self.requests.len()),
            Dir::ToClient => (self.res, self.responses.len()),
        };
        let done = u8::from(self.complete(dir));
        (p as u8) << 5 | done << 4 | (n.min(15) as u8)
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Pgsql(logger::record(self)))
    }

    /// Suricata's events are the transaction's, seen from both directions.
    fn events_both_ways(&self) -> bool {
        true
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests;
