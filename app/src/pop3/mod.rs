//! POP3 (RFC 1939 and extensions) over TCP, port 110, as Suricata 8 has it: detected
//! on its port by the server's `+OK` / `-ERR` or a command, one transaction per
//! command with its response (the greeting one of its own), multi-line responses read
//! to their `.` line, app-layer events, and the EVE `pop3` record. Suricata 8 has no
//! `pop3.*` keywords and does not take POP3 messages through its MIME layer (no
//! `email.*` buffers, no files): neither does Meerkat.

pub mod eve;
pub mod parser;
pub mod state;

pub use state::{Pop3State, Pop3Tx};

use meerkat_proto::events::{Pop3, Pop3Request, Pop3Response};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// POP3.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Pop3,
    name: "pop3",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[110],
    // Suricata's POP3 has a probing parser on its port only.
    port_bound: true,
    probe,
    probe_on_port: None,
    is_reply,
    build: Build::Plain(new_state),
    inner: &[],
    buffers: &[],
    keywords: &[],
    frames: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::TxComplete,
    record: Some(RecordDef {
        event_type: "pop3",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "pop3",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata 8's names).
pub const EVENTS: &[&str] = &[
    "pop3.too_many_transactions",
    "pop3.request_too_long",
    "pop3.incorrect_argument_count",
    "pop3.unknown_command",
    "pop3.response_too_long",
];

fn new_state(_t: Transport) -> Box<dyn AppState> {
    Box::new(Pop3State::new())
}

/// The server's first line is a status; the client's a known command (with case).
pub fn probe(_t: Transport, dir: Dir, data: &[u8]) -> Probe {
    let Some(end) = data.iter().position(|&b| b == b'\n') else {
        let prefixes: &[&[u8]] = match dir {
            Dir::ToClient => &[b"+OK", b"-ERR"],
            Dir::ToServer => &[],
        };
        return if data.len() < 64
            && (dir == Dir::ToServer
                || prefixes
                    .iter()
                    .any(|p| p.starts_with(data) || data.starts_with(p)))
        {
            Probe::NeedMore
        } else {
            Probe::NoMatch
        };
    };
    let line = &data[..end];
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let ok = match dir {
        Dir::ToClient => parser::status(line).is_some(),
        Dir::ToServer => parser::request(line).is_some_and(|r| r.known.is_some()),
    };
    if ok { Probe::Match } else { Probe::NoMatch }
}

/// A response starts with its status.
pub fn is_reply(_t: Transport, data: &[u8]) -> bool {
    data.starts_with(b"+OK") || data.starts_with(b"-ERR")
}

/// Fuzz target: the connection parser over arbitrary bytes in both directions, the
/// line parsers alone, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut Pop3State::new(), data);
    let _ = parser::request(data);
    let _ = parser::status(data);
    crate::fuzz::probes(data);
}

impl Pop3Tx {
    /// The EVE `pop3` record.
    pub fn record(&self) -> Pop3 {
        Pop3 {
            request: self.request.as_ref().map(|r| Pop3Request {
                command: r.command.clone(),
                args: r.args.clone(),
            }),
            response: self
                .response
                .as_ref()
                .filter(|_| !self.hide_response)
                .map(|r| Pop3Response {
                    success: r.ok,
                    header: r.header.clone(),
                    data: r.data.clone(),
                }),
        }
    }
}

impl Transaction for Pop3Tx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        match dir {
            Dir::ToServer => true,
            Dir::ToClient => self.done || self.closed,
        }
    }

    fn progress(&self, dir: Dir) -> u8 {
        match dir {
            Dir::ToServer => 1,
            Dir::ToClient => u8::from(self.response.is_some()) | u8::from(self.done) << 1,
        }
    }

    fn buffer(&self, _id: BufferId, _index: usize) -> Buf<'_> {
        Buf::Absent
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Pop3(self.record()))
    }

    /// Suricata's POP3 events match in both directions (an `unknown_command` rule
    /// alerts on the command and on its response).
    fn events_both_ways(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_raised_event_is_listed() {
        let n =
            crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "pop3");
        assert!(n > 0);
    }

    #[test]
    fn probes() {
        let t = Transport::Tcp;
        assert_eq!(probe(t, Dir::ToClient, b"+OK POP3 ready\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToClient, b"-ERR x\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToClient, b"+O"), Probe::NeedMore);
        assert_eq!(probe(t, Dir::ToClient, b"220 smtp\r\n"), Probe::NoMatch);
        assert_eq!(probe(t, Dir::ToServer, b"CAPA\r\n"), Probe::Match);
        assert_eq!(
            probe(t, Dir::ToServer, b"GET / HTTP/1.1\r\n"),
            Probe::NoMatch
        );
        assert!(is_reply(t, b"+OK"));
        assert!(!is_reply(t, b"USER x"));
    }
}
