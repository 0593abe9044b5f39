//! IMAP (RFC 9051) over TCP, as Suricata 8 has it: recognised (EVE `app_proto: imap`,
//! `alert imap` rules, `app-layer-protocol:imap`) and not parsed. Suricata 8 has no
//! IMAP parser, record, keywords or events: it tells IMAP by the server's untagged
//! `* OK ` greeting or a client's `1 capability` (without case), on any port.
//!
//! Meerkat does the same, and takes any tagged IMAP command (`a001 LOGIN ...`) from
//! the client too: Suricata does not call the client's side of an IMAP flow `failed`
//! when its first command is not `1 capability` (nor raise an event for it), and
//! Meerkat's check of the second direction's first data is a probe. The one
//! difference: a flow whose greeting was not seen and whose client starts with a
//! tagged command is IMAP here and unknown to Suricata.

use crate::descriptor::{Build, Descriptor, FuzzTarget, Transports};
use crate::{AppProto, AppState, Dir, ParseOutput, Probe, Transaction, Transport};

/// IMAP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Imap,
    name: "imap",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[143],
    port_bound: false,
    probe,
    probe_on_port: None,
    is_reply,
    build: Build::Plain(|_| Box::new(ImapState)),
    inner: &[],
    buffers: &[],
    keywords: &[],
    frames: &[],
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: None,
    fuzz: &[FuzzTarget {
        name: "imap",
        run: fuzz,
    }],
};

/// The patterns Suricata looks for, by direction (compared without case).
const TO_CLIENT: &[u8] = b"* OK ";
const TO_SERVER: &[u8] = b"1 capability";

fn starts_ci(data: &[u8], p: &[u8]) -> Probe {
    let n = data.len().min(p.len());
    if !data[..n].eq_ignore_ascii_case(&p[..n]) {
        Probe::NoMatch
    } else if n < p.len() {
        Probe::NeedMore
    } else {
        Probe::Match
    }
}

/// IMAP4rev1/rev2 commands and the common extensions' (compared without case).
const COMMANDS: &[&str] = &[
    "CAPABILITY",
    "NOOP",
    "LOGOUT",
    "STARTTLS",
    "AUTHENTICATE",
    "LOGIN",
    "SELECT",
    "EXAMINE",
    "CREATE",
    "DELETE",
    "RENAME",
    "SUBSCRIBE",
    "UNSUBSCRIBE",
    "LIST",
    "LSUB",
    "NAMESPACE",
    "STATUS",
    "APPEND",
    "IDLE",
    "CHECK",
    "CLOSE",
    "UNSELECT",
    "EXPUNGE",
    "SEARCH",
    "FETCH",
    "STORE",
    "COPY",
    "MOVE",
    "UID",
    "ENABLE",
    "ID",
    "GETQUOTA",
    "GETQUOTAROOT",
    "SETQUOTA",
    "GETACL",
    "SETACL",
    "COMPRESS",
];

/// Longest tag taken.
const MAX_TAG: usize = 32;

/// A client's whole line `<tag> <command>[ ...]`: `Match` when the command is
/// IMAP's.
fn tagged_command(data: &[u8]) -> Probe {
    // A whole line only: a client's first data that is no IMAP line must not keep
    // the detection of every other protocol waiting.
    let Some(end) = data.iter().position(|&b| b == b'\n') else {
        return Probe::NoMatch;
    };
    let line = data[..end].strip_suffix(b"\r").unwrap_or(&data[..end]);
    let mut words = line.split(|&b| b == b' ');
    let (Some(tag), Some(cmd)) = (words.next(), words.next()) else {
        return Probe::NoMatch;
    };
    let tag_ok = !tag.is_empty()
        && tag.len() <= MAX_TAG
        && tag
            .iter()
            .all(|&b| b.is_ascii_graphic() && !b"(){%*\"\\+".contains(&b));
    if tag_ok
        && COMMANDS
            .iter()
            .any(|c| c.as_bytes().eq_ignore_ascii_case(cmd))
    {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

/// The server's `* OK ` at the start of the data; the client's `1 capability`, or
/// any tagged IMAP command.
pub fn probe(_t: Transport, dir: Dir, data: &[u8]) -> Probe {
    match dir {
        Dir::ToClient => starts_ci(data, TO_CLIENT),
        Dir::ToServer => match (starts_ci(data, TO_SERVER), tagged_command(data)) {
            (Probe::Match, _) | (_, Probe::Match) => Probe::Match,
            (Probe::NeedMore, _) => Probe::NeedMore,
            _ => Probe::NoMatch,
        },
    }
}

/// The server's greeting is a reply.
pub fn is_reply(_t: Transport, data: &[u8]) -> bool {
    starts_ci(data, TO_CLIENT) == Probe::Match
}

/// Fuzz target: every probe (the state takes nothing).
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut ImapState, data);
    crate::fuzz::probes(data);
}

/// An IMAP flow: nothing is parsed.
#[derive(Debug, Default)]
pub struct ImapState;

impl AppState for ImapState {
    fn parse(&mut self, _dir: Dir, _data: &[u8], _out: &mut ParseOutput) {}
    fn gap(&mut self, _dir: Dir, _len: u64, _out: &mut ParseOutput) {}
    fn eof(&mut self, _dir: Dir, _out: &mut ParseOutput) {}
    fn tx_count(&self) -> usize {
        0
    }
    fn tx(&self, _index: usize) -> Option<&dyn Transaction> {
        None
    }
    fn free_below(&mut self, _id: u64) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probes() {
        let t = Transport::Tcp;
        assert_eq!(
            probe(t, Dir::ToClient, b"* OK Dovecot ready.\r\n"),
            Probe::Match
        );
        assert_eq!(probe(t, Dir::ToClient, b"* ok hi\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToClient, b"* O"), Probe::NeedMore);
        assert_eq!(probe(t, Dir::ToClient, b"* PREAUTH hi\r\n"), Probe::NoMatch);
        assert_eq!(probe(t, Dir::ToServer, b"1 CAPABILITY\r\n"), Probe::Match);
        assert_eq!(probe(t, Dir::ToServer, b"a001 LOGIN x y\r\n"), Probe::Match);
        assert_eq!(
            probe(t, Dir::ToServer, b"a001 uid fetch 1\r\n"),
            Probe::Match
        );
        assert_eq!(probe(t, Dir::ToServer, b"a001 L"), Probe::NoMatch);
        assert_eq!(probe(t, Dir::ToServer, b"1 capa"), Probe::NeedMore);
        assert_eq!(probe(t, Dir::ToServer, &[b'a'; 40]), Probe::NoMatch);
        assert_eq!(
            probe(t, Dir::ToServer, b"GET / HTTP/1.1\r\n"),
            Probe::NoMatch
        );
        assert_eq!(probe(t, Dir::ToServer, b"USER bob\r\n"), Probe::NoMatch);
        assert!(is_reply(t, b"* OK x"));
    }
}
