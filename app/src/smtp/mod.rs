//! SMTP (RFC 5321) with its messages' MIME (RFC 2045-2046) over TCP (ports 25 and
//! 587): detection by the server's `220` greeting or the client's `EHLO`/`HELO`, one
//! transaction per mail as Suricata makes them, pipelined commands matched with their
//! replies, `DATA` and `BDAT`, the `smtp.*` and `email.*` buffers, the attachments as
//! files (`file.data`, `file.name`, EVE `fileinfo`), app-layer events and the EVE
//! `smtp` record with its `email` object.

pub mod config;
pub mod detect;
pub mod eve;
pub mod mime;
pub mod state;

pub use state::{SmtpState, SmtpTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// SMTP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Smtp,
    name: "smtp",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[25, 587],
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
    keywords: &[],
    frames: &[],
    events: EVENTS,
    events_upper_case: true,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "smtp",
        render: eve::render,
        tx_id: true,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "smtp",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata 8's names, `smtp-events.rules`).
pub const EVENTS: &[&str] = &[
    "smtp.invalid_reply",
    "smtp.unable_to_match_reply_with_request",
    "smtp.max_command_line_len_exceeded",
    "smtp.max_reply_line_len_exceeded",
    "smtp.invalid_pipelined_sequence",
    "smtp.bdat_chunk_len_exceeded",
    "smtp.no_server_welcome_message",
    "smtp.tls_rejected",
    "smtp.data_command_rejected",
    "smtp.failed_protocol_change",
    "smtp.mime_parse_failed",
    "smtp.mime_malformed_msg",
    "smtp.mime_invalid_base64",
    "smtp.mime_long_header_name",
    "smtp.mime_long_header_value",
    "smtp.mime_invalid_qp",
    "smtp.mime_long_line",
    "smtp.mime_long_enc_line",
    "smtp.mime_long_boundary",
    "smtp.mime_long_filename",
    "smtp.duplicate_fields",
    "smtp.unparsable_content",
];

/// Fuzz target: the connection parser over arbitrary bytes in both directions, the
/// MIME parser alone over the bytes as lines, and every probe.
pub fn fuzz(data: &[u8]) {
    let mut s = SmtpState::new();
    s.set_files(crate::files::FileConfig {
        track: true,
        md5: true,
        ..crate::files::FileConfig::default()
    });
    crate::fuzz::drive(&mut s, data);
    let mut m = mime::Mime::new();
    let cfg = crate::files::FileConfig {
        track: true,
        ..crate::files::FileConfig::default()
    };
    let mut ev = Vec::new();
    for l in data.split(|&b| b == b'\n') {
        let eol: &[u8] = if l.len() % 3 == 0 { b"\r\n" } else { b"" };
        m.line(l, eol, &cfg, &mut ev);
    }
    m.end(data.len().is_multiple_of(2), &cfg);
    let _ = state::bdat(data);
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

/// Anywhere: the client's `EHLO`/`HELO`, or a greeting `220 ` whose first line says
/// `SMTP`.
pub fn probe(_t: Transport, dir: Dir, data: &[u8]) -> Probe {
    match dir {
        Dir::ToServer => any_of(data, &[b"EHLO ", b"HELO "]),
        Dir::ToClient => match any_of(data, &[b"220 ", b"220-"]) {
            Probe::Match => {
                let Some(end) = data.iter().position(|&b| b == b'\n') else {
                    return if data.len() < 512 {
                        Probe::NeedMore
                    } else {
                        Probe::NoMatch
                    };
                };
                if data[..end]
                    .windows(4)
                    .any(|w| w.eq_ignore_ascii_case(b"smtp"))
                {
                    Probe::Match
                } else {
                    Probe::NoMatch
                }
            }
            r => r,
        },
    }
}

/// On SMTP's ports: any greeting `220`, and `EHLO`/`HELO`/`QUIT`/`STARTTLS`/`MAIL`
/// from the client.
pub fn probe_on_port(t: Transport, dir: Dir, data: &[u8]) -> Probe {
    match probe(t, dir, data) {
        Probe::Match => return Probe::Match,
        Probe::NeedMore if dir == Dir::ToServer => return Probe::NeedMore,
        _ => {}
    }
    match dir {
        Dir::ToClient => starts(data, b"220"),
        Dir::ToServer => any_of(
            data,
            &[b"EHLO", b"HELO", b"QUIT", b"STARTTLS", b"MAIL FROM:"],
        ),
    }
}

/// A reply starts with its three-digit code.
pub fn is_reply(_t: Transport, data: &[u8]) -> bool {
    data.len() >= 3 && data[..3].iter().all(u8::is_ascii_digit)
}

impl Transaction for SmtpTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, _dir: Dir) -> bool {
        self.done
    }

    fn progress(&self, _dir: Dir) -> u8 {
        self.seq | u8::from(self.done) << 7
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Smtp(eve::record(self)))
    }

    fn files(&self, dir: Dir) -> &[crate::files::File] {
        match (dir, &self.mime) {
            (Dir::ToServer, Some(m)) => m.files.as_slice(),
            _ => &[],
        }
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ParseOutput;
    use state::tests::{CLIENT, SERVER};

    #[test]
    fn every_raised_event_is_listed() {
        let a = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "smtp");
        let b = crate::events::raised_names_are_listed(EVENTS, include_str!("mime.rs"), "smtp");
        assert!(a + b > 0);
    }

    #[test]
    fn probes() {
        let t = Transport::Tcp;
        assert_eq!(probe(t, Dir::ToServer, b"EHLO x\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToServer, b"EH"), Probe::NeedMore);
        assert_eq!(probe(t, Dir::ToClient, b"220 mx ESMTP\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToClient, b"220 (vsFTPd)\r\n"), Probe::NoMatch);
        assert_eq!(probe_on_port(t, Dir::ToClient, b"220 mx\r\n"), Probe::Match);
        assert_eq!(
            probe_on_port(t, Dir::ToServer, b"GET / HTTP/1.1\r\n"),
            Probe::NoMatch
        );
        assert!(is_reply(t, b"250 ok"));
    }

    #[test]
    fn buffers() {
        let mut s = SmtpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, &SERVER[..14], &mut out);
        s.parse(Dir::ToServer, b"EHLO h\r\nMAIL FROM:<a@b>\r\n", &mut out);
        let t = s.tx(0).unwrap();
        assert_eq!(t.buffer(detect::HELO, 0), Buf::Ready(b"h"));
        assert_eq!(t.buffer(detect::RCPT_TO, 0), Buf::NotYet);
        assert_eq!(t.buffer(detect::SUBJECT, 0), Buf::NotYet);
        s.parse(Dir::ToServer, CLIENT, &mut out);
        let t = s.tx(0).unwrap();
        assert_eq!(t.buffer(detect::RCPT_TO, 1), Buf::Ready(b"<w@y.z>"));
        assert_eq!(t.buffer(detect::SUBJECT, 0), Buf::Ready(b"hi"));
        assert_eq!(t.buffer(detect::CC, 0), Buf::Absent);
        assert_eq!(
            t.buffer(detect::URL, 0),
            Buf::Ready(b"www.example.com/a\r\n")
        );
        assert_eq!(t.buffer(detect::FILE_DATA, 0), Buf::Absent);
        assert!(t.complete(Dir::ToServer));
        assert!(t.record().is_some());
    }
}
