//! FTP's control channel (RFC 959, RFC 2428) over TCP (port 21): detection by the
//! first command or the server's greeting, one transaction per command with its reply
//! lines (multi-line replies included), the data-connection ports of PORT / EPRT /
//! PASV / EPSV, the `ftp.*` keywords and `ftpbounce`, app-layer events and the EVE
//! `ftp` record. A command that uses the announced port (`RETR`, `STOR`, `APPE`,
//! `STOU`, `LIST`, `NLST`, `MLSD`) makes an expectation ([`crate::Expectation`]) that
//! the engine shares with every worker: the data connection becomes `ftp-data` (see
//! [`crate::ftp_data`] for how it is found across worker processes).

pub mod config;
pub mod detect;
pub mod eve;
pub mod logger;
pub mod parser;
pub mod state;

pub use state::{FtpConfig, FtpState, FtpTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// FTP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Ftp,
    name: "ftp",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[21],
    port_bound: false,
    probe,
    probe_on_port: Some(probe_on_port),
    is_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    keywords: detect::KEYWORDS,
    frames: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "ftp",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "ftp",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata 8's names).
pub const EVENTS: &[&str] = &[
    "ftp.request_command_too_long",
    "ftp.response_command_too_long",
    "ftp.too_many_transactions",
    "ftp.file_before_port",
    "ftp.file_without_name",
];

/// Fuzz target: the connection parser over arbitrary bytes in both directions (with
/// small limits, so that cutting and dropping are exercised too), the line parsers
/// alone, and every probe.
pub fn fuzz(data: &[u8]) {
    let mut s = FtpState::new(FtpConfig {
        max_line_len: 64,
        max_tx: 16,
        memcap: 4096,
    });
    crate::fuzz::drive(&mut s, data);
    let _ = parser::command(data);
    if let Some(r) = parser::reply_line(data) {
        let _ = parser::pasv_port(r.text);
        let _ = parser::epsv_port(r.text);
    }
    let _ = parser::is_preliminary(data);
    let _ = parser::active_port(data);
    let _ = parser::eprt_port(data);
    crate::fuzz::probes(data);
}

/// The start of the data, compared without case.
fn starts(data: &[u8], p: &[u8]) -> Probe {
    if data.len() >= p.len() {
        if data[..p.len()].eq_ignore_ascii_case(p) {
            Probe::Match
        } else {
            Probe::NoMatch
        }
    } else if p[..data.len()].eq_ignore_ascii_case(data) {
        Probe::NeedMore
    } else {
        Probe::NoMatch
    }
}

fn any_of(data: &[u8], patterns: &[&[u8]]) -> Probe {
    let mut r = Probe::NoMatch;
    for p in patterns {
        match starts(data, p) {
            Probe::Match => return Probe::Match,
            Probe::NeedMore => r = Probe::NeedMore,
            Probe::NoMatch => {}
        }
    }
    r
}

/// Suricata's patterns: `USER `, `PASS `, `PORT `, `FEAT` to the server, a greeting
/// `220 (` to the client.
pub fn probe(_t: Transport, dir: Dir, data: &[u8]) -> Probe {
    match dir {
        Dir::ToServer => any_of(data, &[b"USER ", b"PASS ", b"PORT ", b"FEAT", b"AUTH TLS"]),
        Dir::ToClient => any_of(data, &[b"220 (", b"220-"]),
    }
}

/// On FTP's ports: also any greeting (`220 ` and text) and any known command line.
pub fn probe_on_port(t: Transport, dir: Dir, data: &[u8]) -> Probe {
    match probe(t, dir, data) {
        Probe::NoMatch => {}
        r => return r,
    }
    match dir {
        Dir::ToClient => starts(data, b"220 "),
        Dir::ToServer => {
            let Some(end) = data.iter().position(|&b| b == b'\n') else {
                return if data.len() < 16 {
                    Probe::NeedMore
                } else {
                    Probe::NoMatch
                };
            };
            let line = &data[..end];
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if parser::command(line).is_some() {
                Probe::Match
            } else {
                Probe::NoMatch
            }
        }
    }
}

/// A reply starts with its three-digit code.
pub fn is_reply(_t: Transport, data: &[u8]) -> bool {
    data.len() >= 3 && data[..3].iter().all(u8::is_ascii_digit)
}

impl Transaction for FtpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        match dir {
            Dir::ToServer => true,
            Dir::ToClient => self.done || self.closed,
        }
    }

    /// To the server: the command is there from the start. To the client: grows as
    /// reply lines join, and once more when the reply is final.
    fn progress(&self, dir: Dir) -> u8 {
        match dir {
            Dir::ToServer => 1,
            Dir::ToClient => {
                (self.replies.len() % 128) as u8 | u8::from(self.done || self.closed) << 7
            }
        }
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Ftp(logger::record(self)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::AppState;
    use crate::value::KwValue;

    #[test]
    fn every_raised_event_is_listed() {
        let n =
            crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "ftp");
        assert!(n > 0);
    }

    #[test]
    fn probes() {
        let t = Transport::Tcp;
        assert_eq!(probe(t, Dir::ToServer, b"USER anonymous\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToServer, b"us"), Probe::NeedMore);
        assert_eq!(
            probe(t, Dir::ToServer, b"GET / HTTP/1.1\r\n"),
            Probe::NoMatch
        );
        assert_eq!(
            probe(t, Dir::ToClient, b"220 (vsFTPd 3.0.2)\r\n"),
            Probe::Match
        );
        assert_eq!(
            probe(t, Dir::ToClient, b"220 mail ESMTP\r\n"),
            Probe::NoMatch
        );
        assert_eq!(
            probe_on_port(t, Dir::ToClient, b"220 Ftp Server\r\n"),
            Probe::Match
        );
        assert_eq!(probe_on_port(t, Dir::ToServer, b"SYST\r\n"), Probe::Match);
        assert_eq!(
            probe_on_port(t, Dir::ToServer, b"HELLO\r\n"),
            Probe::NoMatch
        );
        assert!(is_reply(t, b"220 x"));
        assert!(!is_reply(t, b"USER x"));
    }

    #[test]
    fn keywords_and_buffers() {
        let (mut s, mut out) = state::tests::run(FtpConfig::default());
        let kw = |name: &str| detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let eval = |name: &str, v: &str, tx: &dyn Transaction| match kw(name).kind {
            crate::KeywordKind::Check { parse, eval } => {
                let v: KwValue = parse(Some(v)).unwrap();
                eval(&v, Dir::ToServer, 0, tx)
            }
            _ => unreachable!(),
        };
        let pasv = s.tx(3).unwrap();
        assert_eq!(pasv.buffer(detect::COMMAND, 0), Buf::Ready(b"PASV"));
        assert_eq!(eval("ftp.dynamic_port", "47373", pasv), Some(true));
        assert_eq!(eval("ftp.dynamic_port", ">50000", pasv), Some(false));
        assert_eq!(eval("ftp.mode", "passive", pasv), Some(true));
        assert_eq!(eval("ftp.mode", "active", pasv), Some(false));
        assert_eq!(eval("ftp.reply_received", "yes", pasv), Some(true));
        assert_eq!(eval("ftp.reply_received", "off", pasv), Some(false));
        let retr = s.tx(4).unwrap();
        assert_eq!(
            retr.buffer(detect::COMMAND_DATA, 0),
            Buf::Ready(b"temp.txt")
        );
        assert_eq!(retr.buffer(detect::COMPLETION_CODE, 1), Buf::Ready(b"226"));
        assert_eq!(retr.buffer(detect::REPLY, 2), Buf::Absent);
        let help = s.tx(5).unwrap();
        assert_eq!(help.buffer(detect::REPLY, 1), Buf::Ready(b" ABOR ACCT"));
        // `214-` is no code (Suricata reads no multi-line structure).
        assert_eq!(help.buffer(detect::COMPLETION_CODE, 0), Buf::Ready(b"214"));
        assert_eq!(help.buffer(detect::COMPLETION_CODE, 1), Buf::Absent);
        // A command without its reply yet: reply keywords wait.
        s.parse(Dir::ToServer, b"NOOP\r\n", &mut out);
        let noop = s.tx(7).unwrap();
        assert_eq!(eval("ftp.reply_received", "no", noop), None);
        assert_eq!(noop.buffer(detect::REPLY, 0), Buf::NotYet);
        s.eof(Dir::ToClient, &mut out);
        let noop = s.tx(7).unwrap();
        assert_eq!(eval("ftp.reply_received", "no", noop), Some(true));
        assert_eq!(noop.buffer(detect::REPLY, 0), Buf::Absent);
    }
}
