//! One FTP control connection: the lines of each direction as they stream in, and the
//! transactions they make, as Suricata 8's FTP parser makes them: one per known command
//! with the reply lines that answer it (the server's greeting is a transaction without
//! a command). A transaction is complete with its first reply line that is not a
//! preliminary reply (`150 ` before a transfer keeps it open). Suricata reads no
//! multi-line structure: a line of a multi-line reply goes to the oldest open
//! transaction, else, within the same piece of data, to the newest; the lines of a
//! later piece with none open make a transaction of their own (Suricata has logged and
//! freed the complete one by then).

use std::collections::VecDeque;

use super::parser::{self, Kind};
use crate::{AppState, Dir, ParseOutput, ReleaseEmpty, Transaction};

/// Suricata's default `app-layer.protocols.ftp.max-line-length`: longer lines are cut
/// to it (`request_command_too_long` / `response_command_too_long`).
pub const DEFAULT_MAX_LINE_LEN: usize = 4096;
/// Suricata's default `app-layer.protocols.ftp.max-tx`: live transactions per flow;
/// past it, commands make no transaction (`too_many_transactions`).
pub const DEFAULT_MAX_TX: usize = 1024;
/// Suricata's default `app-layer.protocols.ftp.memcap` (64 MiB). Meerkat applies it to
/// the bytes each flow keeps (Suricata to all flows together).
pub const DEFAULT_MEMCAP: usize = 64 << 20;
/// Reply lines a transaction keeps at most; later ones are dropped and the reply is
/// logged as truncated (Suricata keeps them all).
pub const MAX_REPLY_LINES: usize = 256;
/// Data connections announced and not yet claimed that a flow remembers at most (the
/// oldest is forgotten).
pub const MAX_EXPECTATIONS: usize = 8;

/// The parser's settings (`app-layer.protocols.ftp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FtpConfig {
    pub max_line_len: usize,
    pub max_tx: usize,
    pub memcap: usize,
}

impl Default for FtpConfig {
    fn default() -> Self {
        FtpConfig {
            max_line_len: DEFAULT_MAX_LINE_LEN,
            max_tx: DEFAULT_MAX_TX,
            memcap: DEFAULT_MEMCAP,
        }
    }
}

/// Data-connection mode (EVE `ftp.mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// PORT / EPRT: the server connects to the client's port.
    Active,
    /// PASV / EPSV: the client connects to the server's port.
    Passive,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Active => "active",
            Mode::Passive => "passive",
        }
    }
}

/// A data connection the control channel announced for a transfer: the port the
/// connection goes to, who listens, the command and the file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expectation {
    pub port: u16,
    pub mode: Mode,
    /// One of [`crate::ftp_data::COMMANDS`]: `RETR` (a file to the client), `STOR`,
    /// `LIST`, ...
    pub command: &'static str,
    pub filename: Vec<u8>,
}

/// One reply line: its code (none for a line without `NNN `) and text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub code: Option<[u8; 3]>,
    pub text: Vec<u8>,
}

/// One transaction: a command (none for the greeting) and its reply lines.
#[derive(Debug, Clone, Default)]
pub struct FtpTx {
    pub id: u64,
    pub command: Option<&'static parser::Command>,
    /// The command data (after the name and a space), as kept (cut with the line).
    pub data: Vec<u8>,
    pub command_truncated: bool,
    pub replies: Vec<Reply>,
    pub reply_truncated: bool,
    /// A final reply came.
    pub done: bool,
    /// The server's side ended before a final reply.
    pub closed: bool,
    pub dyn_port: Option<u16>,
    pub mode: Option<Mode>,
    /// A PORT command naming another host than the client (`ftpbounce`); `None` when
    /// not a PORT command or the client's address is unknown.
    pub bounce: Option<bool>,
    /// Bytes this transaction keeps (for the memcap).
    pub size: usize,
}

impl FtpTx {
    pub fn kind(&self) -> Option<Kind> {
        self.command.map(|c| c.kind)
    }
}

/// Line assembly of one direction.
#[derive(Debug, Default)]
struct Lines {
    buf: Vec<u8>,
    /// The current line went past the limit: what follows up to the line feed is
    /// dropped.
    truncated: bool,
    /// After a gap: drop up to the next line feed.
    resync: bool,
}

/// One FTP connection.
#[derive(Debug)]
pub struct FtpState {
    cfg: FtpConfig,
    pub txs: VecDeque<FtpTx>,
    next_id: u64,
    lines: [Lines; 2],
    /// The port the last PORT/EPRT/PASV/EPSV announced, until a RETR or STOR uses it.
    pending: Option<(u16, Mode)>,
    /// Data connections announced for transfers, not yet taken by the engine.
    pub expectations: VecDeque<Expectation>,
    /// Bytes kept by live transactions.
    used: usize,
    /// The client's address (given by the engine), for `ftpbounce`.
    client: Option<std::net::IpAddr>,
    /// The server's current piece of data has put a reply line in a transaction.
    reply_in_piece: bool,
}

impl FtpState {
    pub fn new(cfg: FtpConfig) -> FtpState {
        FtpState {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            lines: Default::default(),
            pending: None,
            expectations: VecDeque::new(),
            used: 0,
            client: None,
            reply_in_piece: false,
        }
    }

    fn new_tx(&mut self, out: &mut ParseOutput) -> Option<&mut FtpTx> {
        if self.txs.len() >= self.cfg.max_tx {
            out.anomaly("ftp.too_many_transactions");
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(FtpTx {
            id,
            ..FtpTx::default()
        });
        self.txs.back_mut()
    }

    fn keep(&mut self, n: usize) -> bool {
        if self.used.saturating_add(n) > self.cfg.memcap {
            return false;
        }
        self.used += n;
        true
    }

    fn request(&mut self, line: &[u8], truncated: bool, out: &mut ParseOutput) {
        if truncated {
            out.anomaly("ftp.request_command_too_long");
        }
        let Some((cmd, data)) = parser::command(line) else {
            return;
        };
        if !self.keep(data.len()) {
            return;
        }
        let mut expect = None;
        match cmd.kind {
            Kind::Retr | Kind::Stor => {
                if data.is_empty() {
                    out.anomaly("ftp.file_without_name");
                }
                match self.pending.take() {
                    Some((port, mode)) => expect = Some((port, mode)),
                    None => out.anomaly("ftp.file_before_port"),
                }
            }
            // The other commands that use the data connection.
            Kind::Other if crate::ftp_data::COMMANDS.contains(&cmd.name) => {
                expect = self.pending.take();
            }
            _ => {}
        }
        if let Some((port, mode)) = expect {
            if self.expectations.len() >= MAX_EXPECTATIONS {
                self.expectations.pop_front();
            }
            self.expectations.push_back(Expectation {
                port,
                mode,
                command: cmd.name,
                filename: data.to_vec(),
            });
            out.expect = true;
        }
        let bounce = match (cmd.kind, self.client) {
            (Kind::Port, Some(client)) => {
                parser::active_addr(data).map(|a| std::net::IpAddr::V4(a) != client)
            }
            _ => None,
        };
        let size = data.len();
        if let Some(tx) = self.new_tx(out) {
            tx.command = Some(cmd);
            tx.data = data.to_vec();
            tx.command_truncated = truncated;
            tx.bounce = bounce;
            tx.size = size;
        } else {
            self.used -= size;
        }
    }

    /// The transaction a reply line belongs to: the oldest open one; else, when this
    /// piece of the server's data already put lines in one, the newest (Suricata
    /// appends to its last transaction while parsing one piece); else a new one.
    fn reply_tx(&mut self, out: &mut ParseOutput) -> Option<usize> {
        let i = match self.txs.iter().position(|t| !t.done) {
            Some(i) => i,
            None if self.reply_in_piece && !self.txs.is_empty() => self.txs.len() - 1,
            None => {
                self.new_tx(out)?;
                self.txs.len() - 1
            }
        };
        self.reply_in_piece = true;
        Some(i)
    }

    fn response(&mut self, line: &[u8], truncated: bool, out: &mut ParseOutput) {
        if truncated {
            out.anomaly("ftp.response_command_too_long");
        }
        // A line of white space only is no reply line (Suricata keeps none for it).
        let Some(r) = parser::reply_line(line) else {
            return;
        };
        let Some(i) = self.reply_tx(out) else {
            return;
        };
        let keep = self.keep(r.text.len());
        let Some(tx) = self.txs.get_mut(i) else {
            return;
        };
        // The port of a PORT / EPRT is taken when the server answers it, as Suricata
        // does; that of PASV / EPSV from the `227 ` / `229 ` reply.
        if tx.dyn_port.is_none() {
            let port = match (tx.kind(), r.code.as_ref()) {
                (Some(Kind::Port), _) => parser::active_port(&tx.data).map(|p| (p, Mode::Active)),
                (Some(Kind::Eprt), _) => parser::eprt_port(&tx.data).map(|p| (p, Mode::Active)),
                (Some(Kind::Pasv), Some(b"227")) => {
                    parser::pasv_port(r.text).map(|p| (p, Mode::Passive))
                }
                (Some(Kind::Epsv), Some(b"229")) => {
                    parser::epsv_port(r.text).map(|p| (p, Mode::Passive))
                }
                _ => None,
            };
            if let Some((port, mode)) = port {
                tx.dyn_port = Some(port);
                tx.mode = Some(mode);
                self.pending = Some((port, mode));
            }
        }
        if keep && tx.replies.len() < MAX_REPLY_LINES {
            tx.replies.push(Reply {
                code: r.code,
                text: r.text.to_vec(),
            });
            tx.size += r.text.len();
        } else {
            if keep {
                self.used -= r.text.len();
            }
            tx.reply_truncated = true;
        }
        if truncated {
            tx.reply_truncated = true;
        }
        tx.done |= !parser::is_preliminary(line);
    }

    fn lines(&mut self, dir: Dir, mut data: &[u8], out: &mut ParseOutput) {
        let max = self.cfg.max_line_len;
        while !data.is_empty() {
            let l = &mut self.lines[dir.index()];
            let lf = data.iter().position(|&b| b == b'\n');
            let (chunk, rest) = match lf {
                Some(i) => (&data[..i], &data[i + 1..]),
                None => (data, &[][..]),
            };
            data = rest;
            if l.resync {
                if lf.is_some() {
                    l.resync = false;
                }
                continue;
            }
            if !l.truncated {
                let room = max.saturating_sub(l.buf.len());
                if chunk.len() > room {
                    l.buf.extend_from_slice(&chunk[..room]);
                    l.truncated = true;
                } else {
                    l.buf.extend_from_slice(chunk);
                }
            }
            if lf.is_none() {
                break;
            }
            let mut line = std::mem::take(&mut l.buf);
            let truncated = std::mem::take(&mut l.truncated);
            if !truncated && line.last() == Some(&b'\r') {
                line.pop();
            }
            match dir {
                Dir::ToServer => self.request(&line, truncated, out),
                Dir::ToClient => self.response(&line, truncated, out),
            }
        }
    }
}

impl AppState for FtpState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if dir == Dir::ToClient {
            self.reply_in_piece = false;
        }
        self.lines(dir, data, out);
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        let l = &mut self.lines[dir.index()];
        l.buf.clear();
        l.truncated = false;
        l.resync = true;
    }

    fn eof(&mut self, dir: Dir, out: &mut ParseOutput) {
        // A last line without its line feed is still a line.
        let l = &mut self.lines[dir.index()];
        if !l.buf.is_empty() && !l.resync {
            let mut line = std::mem::take(&mut l.buf);
            let truncated = std::mem::take(&mut l.truncated);
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            match dir {
                Dir::ToServer => self.request(&line, truncated, out),
                Dir::ToClient => self.response(&line, truncated, out),
            }
        }
        if dir == Dir::ToClient {
            for t in &mut self.txs {
                t.closed = true;
            }
        }
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn set_endpoints(&mut self, client: std::net::IpAddr, _server: std::net::IpAddr) {
        self.client = Some(client);
    }

    fn take_expectations(&mut self, out: &mut Vec<crate::Expectation>) {
        for e in self.expectations.drain(..) {
            out.push(crate::Expectation {
                proto: crate::AppProto::FtpData,
                port: e.port,
                data: crate::ftp_data::encode(e.command, &e.filename),
            });
        }
    }

    fn free_below(&mut self, id: u64) {
        while self.txs.front().is_some_and(|t| t.id < id) {
            if let Some(t) = self.txs.pop_front() {
                self.used = self.used.saturating_sub(t.size);
            }
        }
        self.txs.release_if_empty();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::ftp::parser::tests::{CLIENT, server_pieces};

    /// The greeting, then each command and the server's pieces up to the one that
    /// completes its transaction.
    pub(crate) fn run(cfg: FtpConfig) -> (FtpState, ParseOutput) {
        let mut s = FtpState::new(cfg);
        let mut out = ParseOutput::default();
        let pieces = server_pieces();
        let mut pieces = pieces.iter();
        s.parse(Dir::ToClient, pieces.next().unwrap(), &mut out);
        for c in CLIENT.split_inclusive(|&b| b == b'\n') {
            s.parse(Dir::ToServer, c, &mut out);
            for p in pieces.by_ref() {
                s.parse(Dir::ToClient, p, &mut out);
                if s.txs.back().is_some_and(|t| t.done) {
                    break;
                }
            }
        }
        (s, out)
    }

    #[test]
    fn a_session() {
        let (s, out) = run(FtpConfig::default());
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        let names: Vec<_> = s.txs.iter().map(|t| t.command.map(|c| c.name)).collect();
        assert_eq!(
            names,
            [
                None,
                Some("USER"),
                Some("PASS"),
                Some("PASV"),
                Some("RETR"),
                Some("HELP"),
                Some("QUIT")
            ]
        );
        assert!(s.txs.iter().all(|t| t.done));
        let pasv = &s.txs[3];
        assert_eq!(
            (pasv.dyn_port, pasv.mode),
            (Some(47373), Some(Mode::Passive))
        );
        let retr = &s.txs[4];
        assert_eq!(retr.replies.len(), 2);
        assert_eq!(retr.data, b"temp.txt");
        assert_eq!(s.txs[5].replies.len(), 3);
        assert_eq!(s.txs[5].replies[1].code, None);
        assert_eq!(
            s.expectations.front(),
            Some(&Expectation {
                port: 47373,
                mode: Mode::Passive,
                command: "RETR",
                filename: b"temp.txt".to_vec()
            })
        );
    }

    #[test]
    fn long_lines_are_cut() {
        let cfg = FtpConfig {
            max_line_len: 16,
            ..FtpConfig::default()
        };
        let mut s = FtpState::new(cfg);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"RETR AAAAAAAAAAAAAAAAAAAAAAAA", &mut out);
        s.parse(Dir::ToServer, b"AAAA\r\nRETR x\r\n", &mut out);
        assert_eq!(
            out.anomalies,
            [
                "ftp.request_command_too_long",
                "ftp.file_before_port",
                "ftp.file_before_port"
            ]
        );
        assert_eq!(s.txs[0].data.len(), 11);
        assert!(s.txs[0].command_truncated);
        assert_eq!(s.txs[1].data, b"x");
        s.parse(
            Dir::ToClient,
            b"550 xxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n",
            &mut out,
        );
        assert!(s.txs[0].reply_truncated && s.txs[0].done);
        assert_eq!(out.anomalies.last(), Some(&"ftp.response_command_too_long"));
    }

    #[test]
    fn port_and_limits() {
        let mut s = FtpState::new(FtpConfig {
            max_tx: 2,
            ..FtpConfig::default()
        });
        let mut out = ParseOutput::default();
        s.parse(
            Dir::ToServer,
            b"PORT 192,168,0,13,234,22\r\nSTOR\r\nNOOP\r\n",
            &mut out,
        );
        s.parse(Dir::ToClient, b"200 PORT command successful.\r\n", &mut out);
        assert_eq!(
            out.anomalies,
            [
                "ftp.file_without_name",
                "ftp.file_before_port",
                "ftp.too_many_transactions"
            ]
        );
        // PORT's port is taken with its reply, after STOR came.
        assert_eq!(
            (s.txs[0].dyn_port, s.txs[0].mode),
            (Some(59926), Some(Mode::Active))
        );
        s.free_below(2);
        assert_eq!((s.tx_count(), s.used), (0, 0));
    }
}
