//! One POP3 connection, as Suricata 8 makes its transactions: the server's greeting is
//! a transaction with a response only; each command line makes one, answered in order
//! (pipelined commands wait for their responses). A `+OK` answer to `RETR`, `TOP`,
//! `CAPA`, and to `LIST`, `UIDL`, `AUTH` or `LANG` without an argument, carries lines
//! up to a line holding `.` alone (dot-stuffing undone); a message (`RETR`) is
//! consumed and not kept, as Suricata logs none. A response line that is no status
//! where one is due is a parse error: nothing more of the flow is parsed, and the
//! transactions made so far are still inspected and logged, as Suricata does (its flow
//! record also names the `app_layer_error` exception policy; Meerkat's, which gives a
//! failed parser's state up, does not here).

use std::collections::VecDeque;

use super::parser::{self, MAX_COMMAND_LINE, MAX_RESPONSE_LINE};
use crate::{AppState, Dir, ParseOutput, ReleaseEmpty, Transaction};

/// Live transactions per flow; past it commands make none (`too_many_transactions`).
pub const MAX_TX: usize = 256;
/// Longest line kept (bytes); the rest of a longer one is dropped (status lines past
/// [`MAX_RESPONSE_LINE`] and command lines past [`MAX_COMMAND_LINE`] raise their event
/// whatever their length).
pub const MAX_LINE: usize = 8192;
/// Lines of a multi-line response kept at most (the others are read and dropped).
pub const MAX_DATA_LINES: usize = 1024;
/// Bytes of a multi-line response's lines kept at most.
pub const MAX_DATA_BYTES: usize = 64 * 1024;

/// A command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Request {
    /// As written (`user` is no command, and is logged so).
    pub command: Vec<u8>,
    pub args: Vec<Vec<u8>>,
}

/// A response.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Response {
    pub ok: bool,
    pub header: Vec<u8>,
    pub data: Vec<Vec<u8>>,
}

/// One transaction.
#[derive(Debug, Clone, Default)]
pub struct Pop3Tx {
    pub id: u64,
    pub request: Option<Request>,
    pub response: Option<Response>,
    /// The response (all of it) came.
    pub done: bool,
    /// The connection ended before it did.
    pub closed: bool,
    /// The response is not logged (a message: `RETR`).
    pub hide_response: bool,
    /// A positive response carries lines ending with `.`.
    pub multi: bool,
}

/// Line assembly of one direction.
#[derive(Debug, Default)]
struct Lines {
    buf: Vec<u8>,
    /// Bytes of the current line, the dropped ones included.
    len: usize,
}

/// Where the response side is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Resp {
    /// A status line is due.
    Status,
    /// Inside a multi-line response (of the transaction at this index of `txs`).
    Data,
}

/// One POP3 connection.
#[derive(Debug)]
pub struct Pop3State {
    pub txs: VecDeque<Pop3Tx>,
    next_id: u64,
    lines: [Lines; 2],
    resp: Resp,
    /// Whether the greeting came (or a command did: the greeting was missed).
    started: bool,
    /// The parser gave up (a response it could not read).
    failed: bool,
}

impl Default for Pop3State {
    fn default() -> Self {
        Pop3State::new()
    }
}

impl Pop3State {
    pub fn new() -> Pop3State {
        Pop3State {
            txs: VecDeque::new(),
            next_id: 0,
            lines: Default::default(),
            resp: Resp::Status,
            started: false,
            failed: false,
        }
    }

    fn new_tx(&mut self, out: &mut ParseOutput) -> Option<&mut Pop3Tx> {
        if self.txs.len() >= MAX_TX {
            out.anomaly("pop3.too_many_transactions");
            return None;
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(Pop3Tx {
            id,
            ..Pop3Tx::default()
        });
        self.txs.back_mut()
    }

    fn request(&mut self, line: &[u8], len: usize, out: &mut ParseOutput) {
        self.started = true;
        let Some(req) = parser::request(line) else {
            return;
        };
        // The command's events belong to its transaction: it is made first.
        let hide = req.known.is_some_and(|c| c.name == "RETR");
        let request = Request {
            command: req.name.to_vec(),
            args: req.args.iter().map(|a| a.to_vec()).collect(),
        };
        let multi = parser::multiline(&req);
        let Some(tx) = self.new_tx(out) else {
            return;
        };
        tx.request = Some(request);
        tx.hide_response = hide;
        tx.multi = multi;
        if len + 2 > MAX_COMMAND_LINE {
            out.anomaly("pop3.request_too_long");
        }
        match req.known {
            None => out.anomaly("pop3.unknown_command"),
            Some(c) => {
                let n = req.args.len();
                if n < usize::from(c.min_args) || n > usize::from(c.max_args) {
                    out.anomaly("pop3.incorrect_argument_count");
                }
            }
        }
    }

    /// The transaction a status line answers: the oldest without a response, else a
    /// new one (the greeting).
    fn answered(&mut self, out: &mut ParseOutput) -> Option<usize> {
        if let Some(i) = self
            .txs
            .iter()
            .position(|t| !t.done && t.response.is_none())
        {
            return Some(i);
        }
        if self.started {
            // A response to no command.
            return None;
        }
        self.started = true;
        self.new_tx(out)?;
        Some(self.txs.len() - 1)
    }

    fn response(&mut self, line: &[u8], len: usize, out: &mut ParseOutput) {
        match self.resp {
            Resp::Status => {
                let Some(st) = parser::status(line) else {
                    // Suricata's parser errs on the flow and parses no more, but keeps
                    // (inspects and logs) the transactions it made: the state stays.
                    self.failed = true;
                    return;
                };
                let Some(i) = self.answered(out) else {
                    return;
                };
                let Some(tx) = self.txs.get_mut(i) else {
                    return;
                };
                let multi = st.ok && tx.multi;
                tx.response = Some(Response {
                    ok: st.ok,
                    header: st.header.to_vec(),
                    data: Vec::new(),
                });
                if len + 2 > MAX_RESPONSE_LINE {
                    out.anomaly("pop3.response_too_long");
                }
                if multi {
                    self.resp = Resp::Data;
                } else {
                    tx.done = true;
                }
            }
            Resp::Data => {
                let Some(tx) = self
                    .txs
                    .iter_mut()
                    .find(|t| !t.done && t.response.is_some())
                else {
                    self.resp = Resp::Status;
                    return;
                };
                if line == b"." {
                    tx.done = true;
                    self.resp = Resp::Status;
                    return;
                }
                if tx.hide_response {
                    return;
                }
                let line = line.strip_prefix(b".").unwrap_or(line);
                let Some(r) = tx.response.as_mut() else {
                    return;
                };
                let kept: usize = r.data.iter().map(Vec::len).sum();
                if r.data.len() < MAX_DATA_LINES && kept + line.len() <= MAX_DATA_BYTES {
                    r.data.push(line.to_vec());
                }
            }
        }
    }

    fn lines(&mut self, dir: Dir, mut data: &[u8], out: &mut ParseOutput) {
        while !data.is_empty() && !self.failed {
            let l = &mut self.lines[dir.index()];
            let lf = data.iter().position(|&b| b == b'\n');
            let (chunk, rest) = match lf {
                Some(i) => (&data[..i], &data[i + 1..]),
                None => (data, &[][..]),
            };
            data = rest;
            let room = MAX_LINE.saturating_sub(l.buf.len());
            l.buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
            l.len = l.len.saturating_add(chunk.len());
            if lf.is_none() {
                break;
            }
            let mut line = std::mem::take(&mut l.buf);
            let mut len = std::mem::take(&mut l.len);
            if line.last() == Some(&b'\r') {
                line.pop();
                len = len.saturating_sub(1);
            }
            match dir {
                Dir::ToServer => self.request(&line, len, out),
                Dir::ToClient => self.response(&line, len, out),
            }
        }
    }
}

impl AppState for Pop3State {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if self.failed {
            return;
        }
        self.lines(dir, data, out);
    }

    fn gap(&mut self, dir: Dir, _len: u64, out: &mut ParseOutput) {
        // Lines cannot be found again reliably: Suricata's parser gives up too.
        let _ = dir;
        self.failed = true;
        out.failed = true;
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
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

    fn free_below(&mut self, id: u64) {
        while self.txs.front().is_some_and(|t| t.id < id) {
            self.txs.pop_front();
        }
        self.txs.release_if_empty();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(steps: &[(Dir, &[u8])]) -> (Pop3State, ParseOutput) {
        let mut s = Pop3State::new();
        let mut out = ParseOutput::default();
        for (d, b) in steps {
            s.parse(*d, b, &mut out);
        }
        (s, out)
    }

    #[test]
    fn a_session() {
        let (s, out) = run(&[
            (Dir::ToClient, b"+OK ready\r\n"),
            (Dir::ToServer, b"USER bob\r\n"),
            (Dir::ToClient, b"+OK\r\n"),
            (Dir::ToServer, b"LIST\r\nRETR 1\r\nTOP 1 0\r\nNOOP\r\n"),
            (
                Dir::ToClient,
                b"+OK 1 messages\r\n1 120\r\n.\r\n+OK 120 octets\r\n",
            ),
            (Dir::ToClient, b"Subject: x\r\n\r\n..dot\r\n.\r\n"),
            (Dir::ToClient, b"+OK\r\nSubject: x\r\n\r\n.\r\n-ERR no\r\n"),
        ]);
        assert!(out.anomalies.is_empty() && !out.failed);
        let cmds: Vec<_> = s
            .txs
            .iter()
            .map(|t| t.request.as_ref().map(|r| r.command.clone()))
            .collect();
        assert_eq!(
            cmds,
            [
                None,
                Some(b"USER".to_vec()),
                Some(b"LIST".to_vec()),
                Some(b"RETR".to_vec()),
                Some(b"TOP".to_vec()),
                Some(b"NOOP".to_vec())
            ]
        );
        assert!(s.txs.iter().all(|t| t.done));
        assert_eq!(s.txs[0].response.as_ref().unwrap().header, b"ready");
        assert_eq!(
            s.txs[2].response.as_ref().unwrap().data,
            [b"1 120".to_vec()]
        );
        assert!(s.txs[3].hide_response);
        assert_eq!(
            s.txs[4].response.as_ref().unwrap().data,
            [b"Subject: x".to_vec(), Vec::new()]
        );
        assert!(!s.txs[5].response.as_ref().unwrap().ok);
    }

    #[test]
    fn events_and_errors() {
        let long = [b"USER ".as_slice(), &[b'a'; 250], b"\r\n"].concat();
        let (s, out) = run(&[
            (Dir::ToClient, b"+OK\r\n"),
            (Dir::ToServer, &long),
            (Dir::ToServer, b"user x\r\nUSER\r\n"),
            (Dir::ToClient, b"+OK\r\ngarbage\r\n+OK\r\n"),
        ]);
        assert_eq!(
            out.anomalies,
            [
                "pop3.request_too_long",
                "pop3.unknown_command",
                "pop3.incorrect_argument_count"
            ]
        );
        assert!(!out.failed && s.failed);
        assert!(s.txs[1].done && !s.txs[2].done && s.txs[3].response.is_none());
    }
}
