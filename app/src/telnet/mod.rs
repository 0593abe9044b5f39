//! Telnet (RFC 854) over TCP, as Suricata 8 has it: detection on port 23 only (any two
//! bytes there: Suricata's probe looks at nothing more), and a parser that splits each
//! direction into messages, commands (`IAC` and what follows) and lines of data, and
//! follows the login dialogue (`login: `, `Password: `, `Login incorrect`) to know how
//! the server's text is cut. Suricata 8 makes no transactions, writes no `telnet`
//! record and raises no event of its own: a Telnet flow shows as `app_proto` `telnet`
//! and `alert telnet` rules match its packets and stream.
//!
//! Suricata's parser gives up on the flow (an `app_layer_error`) when an option
//! command (`IAC WILL|WONT|DO|DONT`) is cut short by the end of the data it was given;
//! so does this one.
//!
//! Its frames (`telnet.pdu`, `telnet.ctl`, `telnet.data`; `telnet.stream` is every TCP
//! protocol's, [`crate::stream_frame`]) are in
//! [`frames`].

pub mod frames;

use crate::descriptor::{Build, Descriptor, FuzzTarget, Transports, never_reply};
use crate::{AppProto, AppState, BufferId, Dir, ParseOutput, Probe, Transaction};

/// Bytes of an unfinished message a direction holds (a line without its end, a
/// subnegotiation without `IAC SE`); past it they are dropped as one message.
pub const MAX_PENDING: usize = 64 * 1024;

/// Interpret As Command.
pub const IAC: u8 = 0xff;
/// Subnegotiation begin.
pub const SB: u8 = 250;

/// Telnet.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Telnet,
    name: "telnet",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[23],
    // Suricata's probe takes anything on its port, and only there.
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(TelnetState::default())),
    inner: &[],
    buffers: &[],
    frames: frames::FRAMES,
    keywords: &[],
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: None,
    fuzz: &[FuzzTarget {
        name: "telnet",
        run: fuzz,
    }],
};

/// Suricata's probe: at least two bytes (on port 23).
pub fn probe(data: &[u8]) -> Probe {
    if data.len() > 1 {
        Probe::Match
    } else {
        Probe::NeedMore
    }
}

/// One message of a direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Message<'a> {
    /// A command: `IAC` and its command byte, the option of WILL/WONT/DO/DONT, or a
    /// subnegotiation up to (not including) its `IAC SE`.
    Control(&'a [u8]),
    /// Data up to its terminator (`\n`, or the login dialogue's `: `), excluded; the
    /// message's length includes it.
    Data(&'a [u8]),
}

/// What the start of `b` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parsed<'a> {
    /// A message of `len` bytes.
    Message(Message<'a>, usize),
    /// More bytes are needed.
    Incomplete,
    /// A malformed command (Suricata's parser fails the flow on it).
    Error,
}

/// A command at the start of `b` (which starts with `IAC`).
pub fn control(b: &[u8]) -> Parsed<'_> {
    let Some(&cmd) = b.get(1) else {
        return Parsed::Incomplete;
    };
    let len = match cmd {
        // WILL, WONT, DO, DONT and their option: Suricata's parser wants the three
        // bytes in the data it has now, and fails without them.
        251..=254 => {
            if b.len() < 3 {
                return Parsed::Error;
            }
            3
        }
        SB => {
            if b.len() < 3 {
                return Parsed::Incomplete;
            }
            // Up to the `IAC SE` after the option; it is a message of its own.
            match find(&b[3..], &[IAC, 240]) {
                Some(i) => 3 + i,
                None => return Parsed::Incomplete,
            }
        }
        _ => 2,
    };
    Parsed::Message(Message::Control(&b[..len]), len)
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// A message at the start of `b` (not empty), data ending at `end`.
pub fn message<'a>(b: &'a [u8], end: &[u8]) -> Parsed<'a> {
    if b.first() == Some(&IAC) {
        return control(b);
    }
    match find(b, end) {
        Some(i) => Parsed::Message(Message::Data(&b[..i]), i + end.len()),
        None => Parsed::Incomplete,
    }
}

/// Where the login dialogue is, as Suricata follows it: it decides how the server's
/// data is cut (at `: ` while a prompt is expected, else at line ends).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Dialogue {
    #[default]
    Idle,
    LoginSent,
    LoginRecv,
    PasswdSent,
    PasswdRecv,
    AuthOk,
    AuthFail,
}

/// One flow.
#[derive(Debug, Default)]
pub struct TelnetState {
    login: Dialogue,
    /// Per direction, the bytes of a message still coming.
    pending: [Vec<u8>; 2],
    /// Per direction, a gap was seen: Suricata's parser takes up again at the next
    /// data (its resynchronisation check accepts anything).
    gap: [bool; 2],
    failed: bool,
    /// Messages parsed, per direction.
    pub messages: [u64; 2],
    /// The frames, when a rule uses Telnet's ([`AppState::set_frames`]).
    frames: Option<Box<frames::Frames>>,
}

impl TelnetState {
    /// The terminator of the direction's data now.
    fn data_end(&self, dir: Dir) -> &'static [u8] {
        match (dir, self.login) {
            (Dir::ToClient, Dialogue::Idle | Dialogue::AuthFail | Dialogue::LoginRecv) => b": ",
            _ => b"\n",
        }
    }

    /// Follows the login dialogue on a data message.
    fn on_data(&mut self, dir: Dir, d: &[u8]) {
        self.login = match (dir, self.login) {
            (Dir::ToServer, Dialogue::LoginSent) => Dialogue::LoginRecv,
            (Dir::ToServer, Dialogue::PasswdSent) => Dialogue::PasswdRecv,
            (Dir::ToClient, Dialogue::Idle | Dialogue::AuthFail) => Dialogue::LoginSent,
            (Dir::ToClient, Dialogue::LoginRecv) => Dialogue::PasswdSent,
            (Dir::ToClient, Dialogue::PasswdRecv) => match std::str::from_utf8(d) {
                Ok("Login incorrect") => Dialogue::AuthFail,
                Ok("") | Err(_) => Dialogue::PasswdRecv,
                Ok(_) => Dialogue::AuthOk,
            },
            (_, l) => l,
        };
    }

    /// Parses the messages at the start of `b`, whose first byte is at stream offset
    /// `at`: the bytes used, or `None` when the parser failed.
    fn messages(&mut self, dir: Dir, b: &[u8], at: u64) -> Option<usize> {
        let mut used = 0;
        while used < b.len() {
            let rest = &b[used..];
            if let Some(f) = self.frames.as_deref_mut() {
                f.start(dir, at + used as u64, rest[0]);
            }
            match message(rest, self.data_end(dir)) {
                Parsed::Message(m, n) => {
                    if let Some(f) = self.frames.as_deref_mut() {
                        f.end(dir, &rest[..n], true);
                    }
                    if let Message::Data(d) = m {
                        self.on_data(dir, d);
                    }
                    self.messages[dir.index()] += 1;
                    used += n;
                }
                Parsed::Incomplete => break,
                Parsed::Error => return None,
            }
        }
        Some(used)
    }
}

impl AppState for TelnetState {
    fn set_frames(&mut self, used: &[BufferId]) {
        self.frames = frames::Frames::new(used);
    }

    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if self.failed || data.is_empty() {
            return;
        }
        let d = dir.index();
        self.gap[d] = false;
        let at = self.frames.as_deref_mut().map_or(0, |f| f.data(dir, data));
        let mut pending = std::mem::take(&mut self.pending[d]);
        let ok = if pending.is_empty() {
            // The usual case: whole messages, nothing copied.
            self.messages(dir, data, at).map(|n| {
                pending.extend_from_slice(data.get(n..).unwrap_or_default());
            })
        } else {
            let from = at.saturating_sub(pending.len() as u64);
            pending.extend_from_slice(data);
            self.messages(dir, &pending, from).map(|n| {
                pending.drain(..n.min(pending.len()));
            })
        };
        if ok.is_none() {
            self.failed = true;
            out.failed = true;
            return;
        }
        if pending.len() > MAX_PENDING {
            // Past the bound the unfinished message is let go.
            if let Some(f) = self.frames.as_deref_mut() {
                f.end(dir, &pending, false);
            }
            self.messages[d] += 1;
            pending = Vec::new();
        }
        self.pending[d] = pending;
    }

    fn gap(&mut self, dir: Dir, len: u64, _out: &mut ParseOutput) {
        let d = dir.index();
        self.gap[d] = true;
        if let Some(f) = self.frames.as_deref_mut() {
            f.gap(dir, len, &self.pending[d]);
        }
        self.pending[d] = Vec::new();
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        if let Some(f) = self.frames.as_deref_mut() {
            f.end(dir, &self.pending[dir.index()], false);
        }
    }

    /// Suricata's Telnet makes no transactions: these are only the holders of its
    /// frames ([`frames`]), none when no rule uses them.
    fn tx_count(&self) -> usize {
        self.frames.as_deref().map_or(0, frames::Frames::count)
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.frames.as_deref()?.get(index)
    }

    fn free_below(&mut self, id: u64) {
        if let Some(f) = self.frames.as_deref_mut() {
            f.free_below(id);
        }
    }
}

/// Fuzz target: the parser over both directions as the shared driver lays them out,
/// the message splitter alone, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut TelnetState::default(), data);
    let mut b = data;
    while let Parsed::Message(_, n) = message(b, b"\n") {
        b = &b[n..];
    }
    crate::fuzz::probes(data);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_as_suricata_cuts_them() {
        assert_eq!(
            message(b"\xff\xfd\x18rest", b"\n"),
            Parsed::Message(Message::Control(b"\xff\xfd\x18"), 3)
        );
        assert_eq!(message(b"\xff\xfd", b"\n"), Parsed::Error);
        assert_eq!(message(b"\xff", b"\n"), Parsed::Incomplete);
        assert_eq!(
            message(b"\xff\xf1x", b"\n"),
            Parsed::Message(Message::Control(b"\xff\xf1"), 2)
        );
        assert_eq!(
            message(b"\xff\xfa\x18\x00XTERM\xff\xf0", b"\n"),
            Parsed::Message(Message::Control(b"\xff\xfa\x18\x00XTERM"), 9)
        );
        assert_eq!(message(b"\xff\xfa\x18\x00XT", b"\n"), Parsed::Incomplete);
        assert_eq!(message(b"\xff\xfa", b"\n"), Parsed::Incomplete);
        assert_eq!(
            message(b"root\r\nid", b"\n"),
            Parsed::Message(Message::Data(b"root\r"), 6)
        );
        assert_eq!(
            message(b"host login: ", b": "),
            Parsed::Message(Message::Data(b"host login"), 12)
        );
        assert_eq!(message(b"root", b"\n"), Parsed::Incomplete);
    }

    #[test]
    fn a_login_dialogue() {
        let mut s = TelnetState::default();
        let mut out = ParseOutput::default();
        let (ts, tc) = (Dir::ToServer, Dir::ToClient);
        s.parse(tc, b"\xff\xfd\x18\xff\xfd\x20", &mut out);
        s.parse(ts, b"\xff\xfb\x18", &mut out);
        s.parse(tc, b"Ubuntu\r\nhost lo", &mut out);
        s.parse(tc, b"gin: ", &mut out);
        assert_eq!(s.login, Dialogue::LoginSent);
        s.parse(ts, b"root\r\n", &mut out);
        s.parse(tc, b"Password: ", &mut out);
        s.parse(ts, b"toor\r\n", &mut out);
        assert_eq!(s.login, Dialogue::PasswdRecv);
        // Lines are compared as they are, `\r` included (as Suricata's): only a line
        // ended by a bare `\n` can be `Login incorrect`.
        s.parse(tc, b"Login incorrect\n", &mut out);
        assert_eq!(s.login, Dialogue::AuthFail);
        s.parse(tc, b"host login: ", &mut out);
        s.parse(ts, b"root\r\n", &mut out);
        s.parse(tc, b"Password: ", &mut out);
        s.parse(ts, b"secret\r\n", &mut out);
        s.parse(tc, b"Welcome\n", &mut out);
        assert_eq!(s.login, Dialogue::AuthOk);
        assert!(!out.failed);
        assert_eq!(s.messages, [5, 8]);
        // An option command cut short: the parser gives up, as Suricata's.
        s.parse(ts, b"\xff\xfb", &mut out);
        assert!(out.failed);
    }

    #[test]
    fn an_endless_line_is_bounded() {
        let mut s = TelnetState::default();
        let mut out = ParseOutput::default();
        for _ in 0..100 {
            s.parse(Dir::ToServer, &[b'a'; 1000], &mut out);
        }
        assert!(s.pending[0].len() <= MAX_PENDING);
        assert!(!out.failed);
    }

    /// The frames of a split option command and a login line, as the reference makes
    /// them (`telnet-crafted.pcap`'s port 50003 flow): ids per direction, `stream`
    /// first, each message's `pdu` then its `ctl` or `data` frame.
    #[test]
    fn frames_as_suricata_numbers_them() {
        use super::frames::*;
        use crate::Buf;
        let mut s = TelnetState::default();
        let stream = crate::stream_frame::ids(crate::AppProto::Telnet)[1];
        s.set_frames(&[FRAME_PDU_TS, FRAME_CTL_TC, FRAME_DATA_TS, stream]);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\xff", &mut out);
        /// A frame's id, offset and length.
        type Meta = (u64, Option<u64>, Option<u64>);
        fn meta(s: &TelnetState, id: crate::BufferId, i: usize) -> (Buf<'_>, Option<Meta>) {
            let t = s.tx(i).unwrap();
            (
                t.buffer(id, 0),
                t.frame(id, 0).map(|m| (m.id, m.stream_offset, m.length)),
            )
        }
        // Its length is not known yet: not inspected.
        assert_eq!(
            meta(&s, FRAME_PDU_TS, 0),
            (Buf::NotYet, Some((2, Some(0), None)))
        );
        s.parse(Dir::ToServer, b"\xfb\x18\r\n", &mut out);
        s.parse(Dir::ToServer, b"guest\r\n", &mut out);
        assert!(!out.failed);
        assert_eq!(
            meta(&s, FRAME_PDU_TS, 0),
            (Buf::Ready(b"\xff\xfb\x18"), Some((2, Some(0), Some(3))))
        );
        assert_eq!(
            meta(&s, FRAME_CTL_TS, 0),
            (Buf::Ready(b"\xff\xfb\x18"), Some((3, Some(0), Some(3))))
        );
        assert_eq!(
            meta(&s, FRAME_DATA_TS, 1),
            (Buf::Ready(b"\r\n"), Some((5, Some(3), Some(2))))
        );
        assert_eq!(
            meta(&s, FRAME_DATA_TS, 2),
            (Buf::Ready(b"guest\r\n"), Some((7, Some(5), Some(7))))
        );
        assert_eq!(s.tx_count(), 3);
        s.eof(Dir::ToServer, &mut out);
        assert_eq!(s.tx_count(), 3);
        s.free_below(2);
        assert_eq!(s.tx_count(), 1);
        // No rule uses the frames: nothing is kept.
        let mut s = TelnetState::default();
        s.parse(Dir::ToServer, b"\xff\xfb\x18root\r\n", &mut out);
        assert_eq!(s.tx_count(), 0);
    }

    #[test]
    fn probes() {
        assert_eq!(probe(b"\xff\xfd"), Probe::Match);
        assert_eq!(probe(b"l"), Probe::NeedMore);
    }
}
