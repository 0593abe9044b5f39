//! One SMTP connection: command and reply lines (pipelined commands are matched with
//! their replies in order), `DATA` and `BDAT` bodies, and the transactions, as
//! Suricata makes them: a transaction opens with the first command after the previous
//! one ended (except `RSET`) and ends with its message (the `.` of `DATA`, the `LAST`
//! chunk of `BDAT`), with `RSET`, or with the connection. After an accepted
//! `STARTTLS` the rest of the connection is TLS, which Meerkat does not hand over to
//! its TLS parser: it is not parsed further.

use std::collections::VecDeque;
use std::sync::Arc;

use super::config::SmtpConfig;
use super::mime::Mime;
use crate::files::{FileConfig, Files};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Longest line kept (a command, a reply or a message line); the rest of a longer
/// line is dropped.
pub const MAX_LINE_LEN: usize = 4096;
/// Longest command line (RFC 5321: 512 with its CRLF) before
/// `max_command_line_len_exceeded`.
pub const MAX_COMMAND_LINE: usize = 510;
/// Longest reply line before `max_reply_line_len_exceeded`.
pub const MAX_REPLY_LINE: usize = 510;
/// Most commands awaiting their replies; older ones are forgotten.
pub const MAX_PENDING: usize = 64;
/// Most recipients kept per transaction.
pub const MAX_RCPT: usize = 256;
/// Most live transactions; past it the oldest are dropped.
pub const MAX_TX: usize = 256;
/// Longest `BDAT` chunk accepted (Suricata's default `max-bdat-chunk`... not
/// modelled: a larger one is `bdat_chunk_len_exceeded`).
pub const MAX_BDAT_CHUNK: u64 = 1 << 30;

pub const EV_INVALID_REPLY: &str = "smtp.invalid_reply";
pub const EV_LONG_COMMAND: &str = "smtp.max_command_line_len_exceeded";
pub const EV_LONG_REPLY: &str = "smtp.max_reply_line_len_exceeded";
pub const EV_BDAT_LEN: &str = "smtp.bdat_chunk_len_exceeded";
pub const EV_NO_WELCOME: &str = "smtp.no_server_welcome_message";
pub const EV_TLS_REJECTED: &str = "smtp.tls_rejected";
pub const EV_DATA_REJECTED: &str = "smtp.data_command_rejected";
pub const EV_DUPLICATE_FIELDS: &str = "smtp.duplicate_fields";

/// A command awaiting its reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pending {
    Data,
    DataEnd,
    StartTls,
    Other,
}

/// What the client's bytes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Command,
    Data,
    /// A `BDAT` chunk: bytes still to come, and whether it is the last one.
    Bdat {
        left: u64,
        last: bool,
    },
    /// After STARTTLS: not parsed.
    Tls,
}

/// One mail.
#[derive(Debug, Default)]
pub struct SmtpTx {
    pub id: u64,
    pub helo: Option<Vec<u8>>,
    pub mail_from: Option<Vec<u8>>,
    pub rcpt_to: Vec<Vec<u8>>,
    /// The message of its `DATA`.
    pub mime: Option<Box<Mime>>,
    pub done: bool,
    /// Bumped whenever a buffer becomes available (the engine inspects again).
    pub seq: u8,
}

impl SmtpTx {
    fn bump(&mut self) {
        self.seq = (self.seq + 1) % 127;
    }
}

/// Per-direction line assembly.
#[derive(Debug, Default)]
struct Lines {
    buf: Vec<u8>,
    /// Dropping the rest of a line that was too long.
    skipping: bool,
}

/// One connection.
#[derive(Debug)]
pub struct SmtpState {
    lines: [Lines; 2],
    /// Directions whose raw stream Suricata's parser would have asked to inspect during
    /// the current call (`ParseOutput::trigger_raw`), as bits of `Dir::index`.
    raw_trigger: u8,
    helo: Option<Vec<u8>>,
    txs: VecDeque<SmtpTx>,
    next_id: u64,
    pending: VecDeque<Pending>,
    mode: Mode,
    first_reply_seen: bool,
    files: FileConfig,
    events: Vec<&'static str>,
    /// The settings (`app-layer.protocols.smtp`).
    cfg: Arc<SmtpConfig>,
}

impl Default for SmtpState {
    fn default() -> Self {
        SmtpState::new()
    }
}

/// The first word of a command line, compared without case.
fn verb_is(line: &[u8], verb: &[u8]) -> bool {
    line.len() >= verb.len()
        && line[..verb.len()].eq_ignore_ascii_case(verb)
        && line
            .get(verb.len())
            .is_none_or(|&c| c == b' ' || c == b'\t')
}

/// What follows `prefix` (compared without case), leading spaces dropped.
fn after<'a>(line: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    if line.len() >= prefix.len() && line[..prefix.len()].eq_ignore_ascii_case(prefix) {
        Some(line[prefix.len()..].trim_ascii())
    } else {
        None
    }
}

/// A command's parameter as Suricata keeps it: its first word (`MAIL FROM:<a> SIZE=9`
/// is `<a>`).
fn first_word(rest: &[u8]) -> &[u8] {
    rest.split(|&c| c == b' ').next().unwrap_or_default()
}

/// `BDAT <size> [LAST]`.
pub fn bdat(line: &[u8]) -> Option<(u64, bool)> {
    let rest = after(line, b"BDAT ")?;
    let mut words = rest.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let n = std::str::from_utf8(words.next()?).ok()?.parse().ok()?;
    let last = words
        .next()
        .is_some_and(|w| w.eq_ignore_ascii_case(b"LAST"));
    Some((n, last))
}

impl SmtpState {
    pub fn new() -> SmtpState {
        SmtpState::with_config(Arc::default())
    }

    /// A connection parsed with settings `cfg`.
    pub fn with_config(cfg: Arc<SmtpConfig>) -> SmtpState {
        SmtpState {
            lines: [Lines::default(), Lines::default()],
            raw_trigger: 0,
            helo: None,
            txs: VecDeque::new(),
            next_id: 0,
            pending: VecDeque::new(),
            mode: Mode::Command,
            first_reply_seen: false,
            files: FileConfig::default(),
            events: Vec::new(),
            cfg,
        }
    }

    /// Live transaction with id `id`.
    pub fn tx_by_id(&self, id: u64) -> Option<&SmtpTx> {
        self.txs.iter().find(|t| t.id == id)
    }

    fn current(&mut self) -> Option<&mut SmtpTx> {
        self.txs.back_mut().filter(|t| !t.done)
    }

    fn new_tx(&mut self) -> &mut SmtpTx {
        if self.txs.len() >= MAX_TX {
            self.txs.pop_front();
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(SmtpTx {
            id,
            helo: self.helo.clone(),
            ..SmtpTx::default()
        });
        let t = self.txs.back_mut();
        t.expect("just pushed")
    }

    fn push_pending(&mut self, p: Pending) {
        if self.pending.len() >= MAX_PENDING {
            self.pending.pop_front();
        }
        self.pending.push_back(p);
    }

    /// The message of the current transaction ended. A `DATA` message ends its
    /// transaction; the last `BDAT` chunk does not (Suricata 8.0.6 ends that one with
    /// the next `RSET`, or with the connection).
    fn end_message(&mut self, complete: bool, ends_tx: bool) {
        let cfg = self.files;
        if let Some(t) = self.current() {
            if let Some(m) = t.mime.as_mut() {
                m.end(complete, &cfg);
            }
            t.done |= ends_tx;
            t.bump();
        }
    }

    fn command(&mut self, line: &[u8], eol: &[u8]) {
        // Every line the client sends (a message's too) while no greeting was seen.
        if !self.first_reply_seen {
            self.events.push(EV_NO_WELCOME);
        }
        if self.mode == Mode::Data {
            if line == b"." {
                self.mode = Mode::Command;
                self.end_message(true, true);
                self.push_pending(Pending::DataEnd);
                return;
            }
            // The MIME parser gets the line as sent, its leading dot kept, as
            // Suricata's does.
            let cfg = self.files;
            let mut ev = std::mem::take(&mut self.events);
            if let Some(t) = self.current()
                && let Some(m) = t.mime.as_mut()
            {
                let before = m.progress();
                m.line(line, eol, &cfg, &mut ev);
                let after = m.progress();
                if before != after {
                    t.bump();
                }
            }
            self.events = ev;
            return;
        }
        if line.is_empty() {
            // An empty line (the line ending after a BDAT chunk) is no command.
            return;
        }
        if line.len() > MAX_COMMAND_LINE {
            self.events.push(EV_LONG_COMMAND);
        }
        let rset = verb_is(line, b"RSET");
        // As Suricata 8.0.6's parser: `RSET` and `QUIT` join the last transaction even
        // when it has ended, and open one only when there is none (none yet, or the last
        // one was logged and freed).
        let no_new = rset || verb_is(line, b"QUIT");
        let open_new = match self.txs.back() {
            None => true,
            Some(t) => t.done && !no_new,
        };
        if open_new {
            self.new_tx();
        }
        if verb_is(line, b"HELO") || verb_is(line, b"EHLO") {
            // The connection's first HELO/EHLO stands, as in Suricata.
            if self.helo.is_some() {
                self.events.push(EV_DUPLICATE_FIELDS);
            } else {
                let h = first_word(line[4..].trim_ascii()).to_vec();
                self.helo = Some(h.clone());
                if let Some(t) = self.current() {
                    t.helo = Some(h);
                    t.bump();
                }
            }
            self.push_pending(Pending::Other);
        } else if let Some(from) = after(line, b"MAIL FROM:") {
            // So does a transaction's first MAIL FROM.
            let from = first_word(from).to_vec();
            let mut duplicate = false;
            if let Some(t) = self.current() {
                duplicate = t.mail_from.is_some();
                if !duplicate {
                    t.mail_from = Some(from);
                    t.bump();
                }
            }
            if duplicate {
                self.events.push(EV_DUPLICATE_FIELDS);
            }
            self.push_pending(Pending::Other);
        } else if let Some(to) = after(line, b"RCPT TO:") {
            let to = first_word(to).to_vec();
            if let Some(t) = self.current()
                && t.rcpt_to.len() < MAX_RCPT
            {
                t.rcpt_to.push(to);
                t.bump();
            }
            self.push_pending(Pending::Other);
        } else if verb_is(line, b"DATA") {
            self.mode = Mode::Data;
            // As Suricata: the whole message as a file (`raw-extraction`), or MIME
            // (`decode-mime`), or neither.
            let mime = if self.cfg.raw_extraction {
                Some(Box::new(Mime::raw(self.cfg.clone(), &self.files)))
            } else if self.cfg.decode_mime {
                Some(Box::new(Mime::with_config(self.cfg.clone())))
            } else {
                None
            };
            if let Some(t) = self.current() {
                // The raw message's file is open: `file.name` can match.
                if mime.as_ref().is_some_and(|m| m.raw) {
                    t.bump();
                }
                t.mime = mime;
            }
            self.push_pending(Pending::Data);
        } else if let Some((n, last)) = bdat(line) {
            if n > MAX_BDAT_CHUNK {
                self.events.push(EV_BDAT_LEN);
            }
            self.mode = Mode::Bdat { left: n, last };
            if n == 0 && last {
                self.mode = Mode::Command;
                self.end_message(true, false);
            }
            self.push_pending(Pending::Other);
        } else if rset {
            if let Some(t) = self.current() {
                t.done = true;
                t.bump();
            }
            self.push_pending(Pending::Other);
        } else if verb_is(line, b"STARTTLS") {
            self.push_pending(Pending::StartTls);
        } else {
            self.push_pending(Pending::Other);
        }
    }

    fn reply(&mut self, line: &[u8]) {
        if line.len() > MAX_REPLY_LINE {
            self.events.push(EV_LONG_REPLY);
        }
        if line.len() < 3 || !line[..3].iter().all(u8::is_ascii_digit) {
            self.events.push(EV_INVALID_REPLY);
            return;
        }
        if line.get(3) == Some(&b'-') {
            // A line of a multi-line reply; its last line answers.
            return;
        }
        let code = &line[..3];
        // As Suricata's parser: a reply with no command waiting is the greeting when
        // none was seen yet (a first reply that is not `220` is an invalid one). A
        // reply that answers a command is never the greeting, even the first: then
        // every command after it is one without a greeting.
        let Some(p) = self.pending.pop_front() else {
            if !self.first_reply_seen {
                self.first_reply_seen = true;
                if code != b"220" {
                    self.events.push(EV_INVALID_REPLY);
                }
            }
            // Suricata names `unable_to_match_reply_with_request` but does not raise
            // it: a reply with nothing to answer passes silently.
            return;
        };
        match p {
            Pending::Data if code != b"354" => {
                self.events.push(EV_DATA_REJECTED);
                // Only a refusal ends the message mode: a reply matched out of turn
                // must not turn the message's lines into commands.
                if self.mode == Mode::Data && matches!(code[0], b'4' | b'5') {
                    self.mode = Mode::Command;
                    if let Some(t) = self.current() {
                        t.mime = None;
                    }
                }
            }
            Pending::StartTls => {
                if code == b"220" {
                    self.mode = Mode::Tls;
                } else {
                    self.events.push(EV_TLS_REJECTED);
                }
            }
            _ => {}
        }
    }

    /// A line of `dir`, without its `\n`, if it had one (`ended`).
    fn line(&mut self, dir: Dir, line: &[u8], ended: bool) {
        let (line, eol): (&[u8], &[u8]) = match line.strip_suffix(b"\r") {
            Some(l) if ended => (l, b"\r\n"),
            _ if ended => (line, b"\n"),
            _ => (line, b""),
        };
        // Suricata's parser asks for raw inspection at each command line (not a line of
        // a message's data) and each reply line of three bytes or more.
        let trigger = match dir {
            Dir::ToServer => self.mode != Mode::Data,
            Dir::ToClient => line.len() >= 3,
        };
        if trigger {
            self.raw_trigger |= 1 << dir.index();
        }
        match dir {
            Dir::ToServer => self.command(line, eol),
            Dir::ToClient => self.reply(line),
        }
    }

    /// Bytes of `dir` cut into lines (a line split over calls is kept, up to
    /// [`MAX_LINE_LEN`]).
    fn lines(&mut self, dir: Dir, mut data: &[u8]) -> usize {
        let d = dir.index();
        let mut used = 0;
        while !data.is_empty() {
            if dir == Dir::ToServer && matches!(self.mode, Mode::Bdat { .. } | Mode::Tls) {
                return used;
            }
            if self.mode == Mode::Tls {
                return used;
            }
            let nl = data.iter().position(|&b| b == b'\n');
            let take = nl.map_or(data.len(), |i| i + 1);
            let (chunk, rest) = data.split_at(take);
            data = rest;
            used += take;
            let body = nl.map_or(chunk, |i| &chunk[..i]);
            let l = &mut self.lines[d];
            if l.skipping {
                if nl.is_some() {
                    l.skipping = false;
                }
                continue;
            }
            if nl.is_some() && l.buf.is_empty() {
                self.line(dir, body, true);
                continue;
            }
            let room = MAX_LINE_LEN - l.buf.len();
            l.buf.extend_from_slice(&body[..body.len().min(room)]);
            let full = l.buf.len() >= MAX_LINE_LEN;
            if nl.is_some() || full {
                if full && nl.is_none() {
                    l.skipping = true;
                    self.events.push(match dir {
                        Dir::ToServer => EV_LONG_COMMAND,
                        Dir::ToClient => EV_LONG_REPLY,
                    });
                }
                let buf = std::mem::take(&mut self.lines[d].buf);
                self.line(dir, &buf, nl.is_some());
                let l = &mut self.lines[d];
                l.buf = buf;
                l.buf.clear();
            }
        }
        used
    }

    fn flush_events(&mut self, out: &mut ParseOutput) {
        out.raw_trigger |= std::mem::take(&mut self.raw_trigger);
        for e in self.events.drain(..) {
            out.anomaly(e);
        }
    }
}

impl AppState for SmtpState {
    fn parse(&mut self, dir: Dir, mut data: &[u8], out: &mut ParseOutput) {
        let (len, was_tls) = (data.len(), self.mode == Mode::Tls);
        while !data.is_empty() {
            if self.mode == Mode::Tls {
                break;
            }
            if dir == Dir::ToServer
                && let Mode::Bdat { left, last } = self.mode
            {
                let n = usize::try_from(left).unwrap_or(usize::MAX).min(data.len());
                data = &data[n..];
                let left = left - n as u64;
                self.mode = Mode::Bdat { left, last };
                if left == 0 {
                    self.mode = Mode::Command;
                    if last {
                        self.end_message(true, false);
                    }
                }
                continue;
            }
            let used = self.lines(dir, data);
            data = &data[used..];
        }
        // The server accepted STARTTLS: TLS from the byte after its `220` line on.
        if !was_tls && self.mode == Mode::Tls {
            out.change_protocol(crate::ProtoChange {
                to: Some(crate::AppProto::Tls),
                at: len - data.len(),
                ..Default::default()
            });
        }
        self.flush_events(out);
    }

    fn gap(&mut self, dir: Dir, _len: u64, out: &mut ParseOutput) {
        // A gap loses the line being assembled; a message loses its bytes and goes on.
        self.lines[dir.index()].buf.clear();
        if dir == Dir::ToServer
            && let Mode::Bdat { last, .. } = self.mode
        {
            self.mode = Mode::Command;
            if last {
                self.end_message(true, false);
            }
        }
        self.flush_events(out);
    }

    fn eof(&mut self, dir: Dir, out: &mut ParseOutput) {
        if dir == Dir::ToServer {
            self.end_message(false, true);
            let cfg = self.files;
            for t in self.txs.iter_mut().filter(|t| !t.done) {
                if let Some(m) = t.mime.as_mut() {
                    m.end(false, &cfg);
                }
                t.done = true;
                t.bump();
            }
        }
        self.flush_events(out);
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
    }

    fn set_files(&mut self, cfg: FileConfig) {
        self.files = cfg;
    }

    fn tx_files_mut(&mut self, index: usize, dir: Dir) -> Option<&mut Files> {
        let t = self.txs.get_mut(index)?;
        match dir {
            Dir::ToServer => t.mime.as_mut().map(|m| &mut m.files),
            Dir::ToClient => None,
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const CLIENT: &[u8] = b"EHLO ehlo.fr\r\nMAIL FROM:<a@b.c>\r\nRCPT TO:<x@y.z>\r\nRCPT TO:<w@y.z>\r\nDATA\r\nFrom: a@b.c\r\nTo: x@y.z\r\nSubject: hi\r\n\r\nsee http://www.example.com/a\r\n..dot\r\n.\r\nRSET\r\nMAIL FROM:<q@b.c> SIZE=9\r\nBDAT 9 LAST\r\nMessage 1QUIT\r\n";
    pub const SERVER: &[u8] = b"220 mx ESMTP\r\n250-mx\r\n250 PIPELINING\r\n250 ok\r\n250 ok\r\n250 ok\r\n354 go\r\n250 queued\r\n250 ok\r\n250 ok\r\n250 ok\r\n221 bye\r\n";

    #[test]
    fn transactions_as_suricata() {
        let mut s = SmtpState::new();
        let mut out = ParseOutput::default();
        for c in SERVER.chunks(7).take(2) {
            s.parse(Dir::ToClient, c, &mut out);
        }
        for c in CLIENT.chunks(5) {
            s.parse(Dir::ToServer, c, &mut out);
        }
        s.parse(Dir::ToClient, &SERVER[14..], &mut out);
        s.eof(Dir::ToServer, &mut out);
        assert_eq!(s.txs.len(), 2);
        let t0 = &s.txs[0];
        assert_eq!(t0.helo.as_deref(), Some(&b"ehlo.fr"[..]));
        assert_eq!(t0.mail_from.as_deref(), Some(&b"<a@b.c>"[..]));
        assert_eq!(t0.rcpt_to.len(), 2);
        let m = t0.mime.as_ref().unwrap();
        assert_eq!(m.email.subject.as_deref(), Some(&b"hi"[..]));
        // A URL that ends its line keeps the line end, as Suricata's does.
        assert_eq!(m.email.urls, vec![b"www.example.com/a\r\n".to_vec()]);
        assert!(m.email.complete);
        let t1 = &s.txs[1];
        // The first word of the parameter, as Suricata keeps it.
        assert_eq!(t1.mail_from.as_deref(), Some(&b"<q@b.c>"[..]));
        assert!(t1.mime.is_none() && t1.done);
        // QUIT after the BDAT's mail opens no transaction of its own.
        assert_eq!(s.txs.len(), 2);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    }

    #[test]
    fn transactions_end_and_open_as_the_reference_shows() {
        // smtp-rset (reference: two transactions): the last BDAT chunk does not end
        // its transaction, RSET does; QUIT joins the live one.
        let mut s = SmtpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"220 mx\r\n", &mut out);
        s.parse(
            Dir::ToServer,
            b"EHLO a\r\nMAIL FROM:<a>\r\nBDAT 3 LAST\r\n",
            &mut out,
        );
        s.parse(Dir::ToServer, b"m\r\n", &mut out);
        assert!(!s.txs[0].done);
        s.parse(Dir::ToServer, b"RSET\r\n", &mut out);
        assert!(s.txs[0].done);
        s.free_below(1);
        s.parse(Dir::ToServer, b"MAIL FROM:<b>\r\nBDAT 3 LAST\r\n", &mut out);
        s.parse(Dir::ToServer, b"n\r\nQUIT\r\n", &mut out);
        assert_eq!((s.txs.len(), s.next_id), (1, 2));
        // smtp-mime-encap-8649-combined (reference: two): the `.` ends the message's
        // transaction; once it is logged and freed, QUIT opens one of its own.
        let mut s = SmtpState::new();
        s.parse(
            Dir::ToServer,
            b"EHLO a\r\nMAIL FROM:<a>\r\nDATA\r\n",
            &mut out,
        );
        s.parse(
            Dir::ToClient,
            b"220 mx\r\n250 hi\r\n250 ok\r\n354 go\r\n",
            &mut out,
        );
        s.parse(Dir::ToServer, b"Subject: x\r\n\r\nbody\r\n.\r\n", &mut out);
        assert!(s.txs[0].done);
        s.free_below(1);
        s.parse(Dir::ToServer, b"QUIT\r\n", &mut out);
        assert_eq!((s.txs.len(), s.next_id), (1, 2));
    }

    #[test]
    fn lines_before_a_greeting_raise_no_server_welcome_message() {
        // detect-email-received: the greeting has no line end, so its line ends with
        // the EHLO's answer; it answers the EHLO and no greeting is ever seen.
        let mut s = SmtpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"220 mx ESMTP", &mut out);
        s.parse(Dir::ToServer, b"EHLO a\r\n", &mut out);
        s.parse(Dir::ToClient, b"250-mx\r\n", &mut out);
        s.parse(Dir::ToServer, b"MAIL FROM:<a>\r\nDATA\r\n", &mut out);
        s.parse(Dir::ToClient, b"250 ok\r\n354 go\r\n", &mut out);
        s.parse(Dir::ToServer, b"Subject: x\r\n\r\n.\r\n", &mut out);
        let n = out
            .anomalies
            .iter()
            .filter(|a| **a == EV_NO_WELCOME)
            .count();
        assert_eq!(n, 6, "{:?}", out.anomalies);
        assert!(s.txs[0].mime.is_some(), "the 354 still opened the message");
        // With the greeting first, none.
        let mut s = SmtpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"220 mx\r\n", &mut out);
        s.parse(Dir::ToServer, b"EHLO a\r\n", &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    }

    #[test]
    fn first_helo_and_mail_from_stand() {
        let mut s = SmtpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"220 mx ESMTP\r\n", &mut out);
        s.parse(
            Dir::ToServer,
            b"EHLO a\r\nHELO b\r\nMAIL FROM:<x@y>\r\nMAIL FROM:<z@y>\r\n",
            &mut out,
        );
        assert_eq!(s.txs[0].helo.as_deref(), Some(&b"a"[..]));
        assert_eq!(s.txs[0].mail_from.as_deref(), Some(&b"<x@y>"[..]));
        assert_eq!(out.anomalies, [EV_DUPLICATE_FIELDS, EV_DUPLICATE_FIELDS]);
    }

    #[test]
    fn starttls_stops_parsing_and_long_lines_are_cut() {
        let mut s = SmtpState::new();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"STARTTLS\r\n", &mut out);
        s.parse(Dir::ToClient, b"220 mx\r\n", &mut out);
        s.parse(Dir::ToClient, b"220 go ahead\r\n\x16\x03\x01", &mut out);
        s.parse(
            Dir::ToServer,
            b"\x16\x03\x01\x00\x05MAIL FROM:<x>\r\n",
            &mut out,
        );
        assert!(s.txs[0].mail_from.is_none());
        let mut s = SmtpState::new();
        let long = vec![b'A'; MAX_LINE_LEN * 3];
        s.parse(Dir::ToServer, &long, &mut out);
        s.parse(Dir::ToServer, b"\r\nHELO x\r\n", &mut out);
        assert!(out.anomalies.contains(&EV_LONG_COMMAND));
        assert_eq!(s.helo.as_deref(), Some(&b"x"[..]));
        assert_eq!(bdat(b"BDAT 11 LAST"), Some((11, true)));
        assert_eq!(bdat(b"bdat 5"), Some((5, false)));
        assert_eq!(bdat(b"BDAT x"), None);
    }
}
