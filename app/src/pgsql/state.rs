//! PostgreSQL per-flow state: Suricata 8's state machine over both directions and the
//! transactions it makes.
//!
//! One state (the last message's kind, whichever side sent it) decides how the
//! client's next message is read (a password, a SASL message, or any) and when a
//! transaction starts: a client message that starts a step (StartupMessage, a
//! password, a SASL message, a Query, SSLRequest, CancelRequest, Terminate, the first
//! CopyData of a COPY FROM STDIN) makes a new one, and the messages that follow, of
//! either side, go to the newest live transaction. A request is complete once
//! parsed; a response once the server is ready again (ReadyForQuery), asks for
//! authentication, answers SSLRequest, or asks for COPY data. DataRows and
//! CopyData are counted and summed, not kept. Suricata's quirks are kept, since they
//! decide its records and transaction ids: a message the state machine does not know
//! (a NoticeResponse, EmptyQueryResponse, the extended query's messages) changes no
//! state but may start an empty transaction; a message that cannot be read still
//! takes a transaction id.
//!
//! An SSLRequest the server accepts hands the flow to TLS ([`crate::ProtoChange`]).
//! A bad length fails the flow: nothing more is parsed and every transaction is
//! complete, as Suricata's parser at its end of stream.

use std::collections::VecDeque;

use super::parser::{self, Error, Expect, Request, Response};
use crate::{AppState, Dir, ParseOutput, ProtoChange, Transaction};

/// Suricata's default `max-tx`.
pub const DEFAULT_MAX_TX: usize = 1024;
/// Most bytes of one direction buffered while a message is incomplete: a message
/// longer than this is not waited for (the direction is not parsed any further).
pub const MAX_PENDING: usize = 1 << 20;
/// Most messages a transaction keeps per direction.
pub const MAX_TX_MESSAGES: usize = 256;

/// A direction's progress within a transaction (Suricata's `PgsqlTxProgress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum Progress {
    #[default]
    Init,
    Received,
    Done,
    /// Closed by `max-tx`.
    FlushedOut,
}

/// A request as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Req {
    Msg(Request),
    /// The CopyData messages of a COPY FROM STDIN: how many, and their bytes.
    CopyDataIn {
        count: u64,
        size: u64,
    },
}

/// A response as logged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resp {
    Msg(Response),
    /// The DataRows before a CommandComplete: how many, and their values' bytes.
    DataRows {
        count: u64,
        size: u64,
    },
    /// The CopyData messages of a COPY TO STDOUT.
    CopyDataOut {
        count: u64,
        size: u64,
    },
}

/// One transaction: a client step and the server's answers.
#[derive(Debug, Clone, Default)]
pub struct PgsqlTx {
    /// 0, 1, ... (EVE `pgsql.tx_id` is this plus one, as Suricata counts).
    pub id: u64,
    pub req: Progress,
    pub res: Progress,
    pub requests: Vec<Req>,
    pub responses: Vec<Resp>,
    /// DataRows or CopyData messages counted, and their bytes, not logged yet.
    pub rows: u64,
    pub size: u64,
    /// Per direction, the flow ended (or the parser failed) with the transaction
    /// still open.
    pub eof: [bool; 2],
}

impl PgsqlTx {
    fn new(id: u64) -> PgsqlTx {
        PgsqlTx {
            id,
            ..Default::default()
        }
    }

    fn push_req(&mut self, r: Req) {
        if self.requests.len() < MAX_TX_MESSAGES {
            self.requests.push(r);
        }
    }

    fn push_resp(&mut self, r: Resp) {
        if self.responses.len() < MAX_TX_MESSAGES {
            self.responses.push(r);
        }
    }

    /// The first simple query of the transaction (`pgsql.query`).
    pub fn query(&self) -> Option<&[u8]> {
        self.requests.iter().find_map(|r| match r {
            Req::Msg(Request::Query(q)) => Some(q.as_slice()),
            _ => None,
        })
    }
}

/// The flow's state: the kind of the last message that moved it (Suricata's
/// `PgsqlStateProgress`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    Idle,
    SslRequestSent,
    StartupSent,
    SaslInitialSent,
    SaslResponseSent,
    PasswordSent,
    QuerySent,
    CancelSent,
    Terminated,
    CopyDone,
    CopyFail,
    CopyOutResponse,
    CopyDataOut,
    CopyInResponse,
    FirstCopyDataIn,
    ConsolidatingCopyDataIn,
    SslRejected,
    SaslAuth,
    SaslContinue,
    SaslFinal,
    SimpleAuth,
    AuthOk,
    ParameterSetup,
    BackendKey,
    ReadyForQuery,
    RowDescription,
    DataRow,
    CommandCompleted,
    ErrorMessage,
    /// SSL accepted: the flow is TLS's.
    Finished,
}

impl St {
    /// A client message that leaves the state here starts a transaction (and so
    /// does any message while it is here).
    fn starts_tx(self) -> bool {
        use St::*;
        matches!(
            self,
            Idle | StartupSent
                | PasswordSent
                | SaslInitialSent
                | SaslResponseSent
                | QuerySent
                | SslRequestSent
                | Terminated
                | CancelSent
                | FirstCopyDataIn
        )
    }

    fn request_complete(self) -> bool {
        use St::*;
        matches!(
            self,
            SslRequestSent
                | StartupSent
                | QuerySent
                | PasswordSent
                | SaslInitialSent
                | SaslResponseSent
                | CancelSent
                | CopyDone
                | CopyFail
                | Terminated
        )
    }

    fn response_complete(self) -> bool {
        use St::*;
        matches!(
            self,
            ReadyForQuery
                | SslRejected
                | SimpleAuth
                | SaslAuth
                | SaslContinue
                | SaslFinal
                | CopyInResponse
                | Finished
        )
    }

    /// How the client's next message is read.
    fn expect(self) -> Expect {
        match self {
            St::SaslAuth => Expect::SaslInitial,
            St::SaslInitialSent | St::SaslContinue => Expect::SaslResponse,
            St::SimpleAuth => Expect::Password,
            _ => Expect::Any,
        }
    }
}

/// What one message did to the parse call.
enum Step {
    /// Parsed, `n` bytes: go on.
    Next(usize),
    /// The rest of the call's data is skipped.
    Drop,
    /// The message has not all come: keep the rest for the next call.
    Wait,
    /// Parsed, `n` bytes, and the flow is TLS's from the next byte on.
    Tls(usize),
}

/// One flow's PostgreSQL state.
#[derive(Debug)]
pub struct PgsqlState {
    max_tx: usize,
    st: St,
    next_id: u64,
    txs: VecDeque<PgsqlTx>,
    /// Suricata's `tx_index_completed`: where `max-tx` looks for open transactions.
    index_completed: usize,
    /// Per direction, a gap was seen and the parser has not found its feet again.
    gap: [bool; 2],
    /// Per direction, nothing more is parsed (a message that never ends, one too long
    /// to wait for, the flow failed or changed protocol).
    dead: [bool; 2],
    /// Per direction, the bytes of a message still coming.
    pending: [Vec<u8>; 2],
    /// The server's BackendKeyData (process id, secret key).
    pub backend: Option<(u32, u32)>,
}

impl Default for PgsqlState {
    fn default() -> Self {
        PgsqlState::new(DEFAULT_MAX_TX)
    }
}

impl PgsqlState {
    pub fn new(max_tx: usize) -> PgsqlState {
        PgsqlState {
            max_tx,
            st: St::Idle,
            next_id: 0,
            txs: VecDeque::new(),
            index_completed: 0,
            gap: [false; 2],
            dead: [false; 2],
            pending: [Vec::new(), Vec::new()],
            backend: None,
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &PgsqlTx> {
        self.txs.iter()
    }

    /// A new transaction (not queued yet). As Suricata's, past `max-tx` live ones
    /// the oldest open one is closed (`too_many_transactions`).
    fn new_tx(&mut self, out: &mut ParseOutput) -> PgsqlTx {
        let id = self.next_id;
        self.next_id += 1;
        if self.txs.len() > self.max_tx + self.index_completed {
            let mut index = self.index_completed;
            for old in self.txs.range_mut(self.index_completed..) {
                index += 1;
                if old.res < Progress::Done {
                    old.req = Progress::FlushedOut;
                    old.res = Progress::FlushedOut;
                    out.anomaly("pgsql.too_many_transactions");
                    break;
                }
            }
            self.index_completed = index;
        }
        PgsqlTx::new(id)
    }

    /// The transaction a message goes to: a new one when the state starts one, else
    /// the newest live one (`None`: there is none).
    fn current_tx(&mut self, out: &mut ParseOutput) -> Option<&mut PgsqlTx> {
        if self.st.starts_tx() {
            let tx = self.new_tx(out);
            self.txs.push_back(tx);
        }
        self.txs.back_mut()
    }

    /// A transaction made for a message that could not be read, with its event.
    fn error_tx(&mut self, out: &mut ParseOutput, event: &'static str) {
        let tx = self.new_tx(out);
        self.txs.push_back(tx);
        out.anomaly(event);
    }

    fn request_next(&self, r: &Request) -> Option<St> {
        Some(match r {
            Request::SslRequest => St::SslRequestSent,
            Request::Startup { .. } => St::StartupSent,
            Request::Password(_) => St::PasswordSent,
            Request::SaslInitial { .. } => St::SaslInitialSent,
            Request::SaslResponse(_) => St::SaslResponseSent,
            Request::Query(_) => St::QuerySent,
            Request::CopyData(_) => match self.st {
                St::CopyInResponse => St::FirstCopyDataIn,
                St::FirstCopyDataIn | St::ConsolidatingCopyDataIn => St::ConsolidatingCopyDataIn,
                _ => return None,
            },
            Request::CopyDone => St::CopyDone,
            Request::CopyFail(_) => St::CopyFail,
            Request::Cancel { .. } => St::CancelSent,
            Request::Terminate => St::Terminated,
            Request::Unknown(_) => return None,
        })
    }

    fn request(&mut self, b: &[u8], out: &mut ParseOutput) -> Step {
        match parser::request(b, self.st.expect()) {
            Ok((req, n)) => {
                let next = self.request_next(&req);
                if let Some(s) = next {
                    self.st = s;
                }
                let Some(tx) = self.current_tx(out) else {
                    return Step::Drop;
                };
                let Some(s) = next else {
                    return Step::Next(n);
                };
                match (s, &req) {
                    (
                        St::FirstCopyDataIn | St::ConsolidatingCopyDataIn,
                        Request::CopyData(size),
                    ) => {
                        tx.size = tx.size.saturating_add(*size);
                        tx.rows = tx.rows.saturating_add(1);
                    }
                    (St::CopyDone | St::CopyFail, _) if tx.rows > 0 => {
                        let (count, size) = (tx.rows, tx.size);
                        tx.push_req(Req::CopyDataIn { count, size });
                    }
                    _ => {}
                }
                if s.request_complete() {
                    tx.push_req(Req::Msg(req));
                    tx.req = Progress::Done;
                    // No answer comes to these.
                    if matches!(s, St::Terminated | St::CancelSent) {
                        tx.res = Progress::Done;
                    }
                }
                Step::Next(n)
            }
            Err(e) => self.error(Dir::ToServer, e, out),
        }
    }

    /// The state a response moves to, with its side effects (`None`: it moves none).
    fn response_next(&mut self, r: &Response) -> Option<St> {
        Some(match r {
            Response::SslResponse(true) => St::Finished,
            Response::SslResponse(false) => St::SslRejected,
            Response::AuthSasl(_) => St::SaslAuth,
            Response::AuthSaslContinue(_) => St::SaslContinue,
            Response::AuthSaslFinal(_) => St::SaslFinal,
            Response::AuthOk => St::AuthOk,
            Response::ParameterStatus(_) => St::ParameterSetup,
            Response::BackendKey { pid, key } => {
                self.backend = Some((*pid, *key));
                St::BackendKey
            }
            Response::ReadyForQuery(_) => St::ReadyForQuery,
            Response::AuthMd5(_) | Response::AuthCleartext => St::SimpleAuth,
            Response::RowDescription(_) => St::RowDescription,
            Response::CopyOut(_) => St::CopyOutResponse,
            Response::CopyIn(_) => St::CopyInResponse,
            Response::DataRow(size) | Response::CopyData(size) => {
                let tx = self.txs.back_mut()?;
                tx.size = tx.size.saturating_add(*size);
                if matches!(r, Response::DataRow(_)) {
                    St::DataRow
                } else {
                    St::CopyDataOut
                }
            }
            Response::CopyDone => St::CopyDone,
            Response::CommandComplete(_) => St::CommandCompleted,
            Response::Error(_) => St::ErrorMessage,
            // Notices, notifications, SSPI and unknown messages move nothing.
            _ => return None,
        })
    }

    fn response(&mut self, b: &[u8], out: &mut ParseOutput) -> Step {
        let r = if self.st == St::SslRequestSent {
            parser::ssl_response(b)
        } else {
            parser::response(b)
        };
        match r {
            Ok((resp, n)) => {
                let accepted = resp == Response::SslResponse(true);
                let next = self.response_next(&resp);
                if let Some(s) = next {
                    self.st = s;
                }
                let Some(tx) = self.current_tx(out) else {
                    return Step::Drop;
                };
                if tx.res == Progress::Init {
                    tx.res = Progress::Received;
                }
                let Some(s) = next else {
                    return Step::Next(n);
                };
                match s {
                    St::DataRow | St::CopyDataOut => tx.rows = tx.rows.saturating_add(1),
                    St::CommandCompleted | St::CopyDone if tx.rows > 0 => {
                        let (count, size) = (tx.rows, tx.size);
                        tx.push_resp(if s == St::CopyDone {
                            Resp::CopyDataOut { count, size }
                        } else {
                            Resp::DataRows { count, size }
                        });
                        tx.push_resp(Resp::Msg(resp));
                        tx.rows = 0;
                        tx.size = 0;
                    }
                    _ => {
                        tx.push_resp(Resp::Msg(resp));
                        if s.response_complete() {
                            tx.req = Progress::Done;
                            tx.res = Progress::Done;
                        }
                    }
                }
                if accepted {
                    Step::Tls(n)
                } else {
                    Step::Next(n)
                }
            }
            Err(e) => self.error(Dir::ToClient, e, out),
        }
    }

    /// A message that could not be read (see [`parser::Error`]).
    fn error(&mut self, dir: Dir, e: Error, out: &mut ParseOutput) -> Step {
        match e {
            Error::Incomplete => Step::Wait,
            Error::Stuck => {
                self.dead[dir.index()] = true;
                Step::Drop
            }
            Error::InvalidLength => {
                self.error_tx(out, "pgsql.invalid_length");
                // Suricata's parser fails: nothing more is parsed, and every
                // transaction is over.
                out.error = true;
                self.dead = [true; 2];
                for tx in &mut self.txs {
                    tx.eof = [true; 2];
                }
                Step::Drop
            }
            Error::Malformed => {
                self.error_tx(
                    out,
                    match dir {
                        Dir::ToServer => "pgsql.malformed_request",
                        Dir::ToClient => "pgsql.malformed_response",
                    },
                );
                Step::Drop
            }
            Error::Invalid => {
                // The id is taken all the same, as Suricata's.
                let _ = self.new_tx(out);
                Step::Drop
            }
        }
    }

    fn run(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.dead[d] || data.is_empty() {
            return;
        }
        let owned;
        let held = self.pending[d].len();
        let input: &[u8] = if held == 0 {
            data
        } else {
            let mut v = std::mem::take(&mut self.pending[d]);
            v.extend_from_slice(data);
            owned = v;
            &owned
        };
        if self.gap[d] {
            // Suricata's test after a gap (as it is written: data that reads as a
            // request is skipped; a response is looked for).
            let skip = match dir {
                Dir::ToServer => parser::request(input, Expect::Any).is_ok(),
                Dir::ToClient => {
                    parser::response(input).is_err() && parser::ssl_response(input).is_err()
                }
            };
            if skip {
                return;
            }
            self.gap[d] = false;
        }
        let mut used = 0;
        while used < input.len() {
            let rest = &input[used..];
            let step = match dir {
                Dir::ToServer => self.request(rest, out),
                Dir::ToClient => self.response(rest, out),
            };
            match step {
                Step::Next(n) => used += n,
                Step::Drop => return,
                Step::Wait => {
                    if rest.len() > MAX_PENDING {
                        self.dead[d] = true;
                    } else {
                        self.pending[d] = rest.to_vec();
                    }
                    return;
                }
                Step::Tls(n) => {
                    used += n;
                    self.dead = [true; 2];
                    self.pending = [Vec::new(), Vec::new()];
                    out.change_protocol(ProtoChange {
                        to: Some(crate::AppProto::Tls),
                        at: used.saturating_sub(held),
                        ..Default::default()
                    });
                    return;
                }
            }
        }
    }
}

impl AppState for PgsqlState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        self.run(dir, data, out);
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        self.gap[dir.index()] = true;
        self.pending[dir.index()] = Vec::new();
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        for tx in &mut self.txs {
            tx.eof[dir.index()] = true;
        }
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        let before = self.txs.len();
        crate::free_txs_below(&mut self.txs, id);
        if self.txs.len() != before {
            self.index_completed = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Dir::{ToClient as TC, ToServer as TS};

    pub(crate) fn msg(t: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![t];
        v.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    fn feed(s: &mut PgsqlState, steps: &[(Dir, &[u8])]) -> ParseOutput {
        let mut out = ParseOutput::default();
        for (d, b) in steps {
            s.parse(*d, b, &mut out);
        }
        out
    }

    fn startup() -> Vec<u8> {
        b"\0\0\0\x26\0\x03\0\0user\0oryx\0database\0mailstore\0\0".to_vec()
    }

    #[test]
    fn login_and_query_transactions() {
        let mut s = PgsqlState::default();
        let mut login = msg(b'R', &0u32.to_be_bytes());
        login.extend(msg(b'S', b"TimeZone\0UTC\0"));
        login.extend(msg(b'K', &[0, 0, 0, 1, 0, 0, 0, 2]));
        login.extend(msg(b'Z', b"I"));
        let mut rows = msg(
            b'T',
            b"\0\x01a\0\0\0\0\0\0\x01\0\0\0\x17\0\x04\xff\xff\xff\xff\0\0",
        );
        rows.extend(msg(b'D', b"\0\x01\0\0\0\x01x"));
        rows.extend(msg(b'D', b"\0\x01\0\0\0\x02yz"));
        rows.extend(msg(b'C', b"SELECT 2\0"));
        rows.extend(msg(b'Z', b"I"));
        let q = msg(b'Q', b"SELECT a FROM t\0");
        // The response split anywhere: the same.
        for cut in [1, 7, rows.len() - 1] {
            let mut s2 = PgsqlState::default();
            let out = feed(
                &mut s2,
                &[
                    (TS, &startup()),
                    (TC, &login),
                    (TS, &q),
                    (TC, &rows[..cut]),
                    (TC, &rows[cut..]),
                ],
            );
            assert!(out.anomalies.is_empty());
            let txs: Vec<_> = s2.transactions().collect();
            assert_eq!(txs.len(), 2);
            assert_eq!(
                txs[1].responses,
                [
                    Resp::Msg(Response::RowDescription(1)),
                    Resp::DataRows { count: 2, size: 3 },
                    Resp::Msg(Response::CommandComplete(b"SELECT 2".to_vec())),
                    Resp::Msg(Response::ReadyForQuery(b'I')),
                ]
            );
            assert_eq!(txs[1].query(), Some(&b"SELECT a FROM t"[..]));
            assert!(
                txs.iter()
                    .all(|t| t.req == Progress::Done && t.res == Progress::Done)
            );
        }
        feed(&mut s, &[(TS, &startup()), (TC, &login)]);
        assert_eq!(s.backend, Some((1, 2)));
    }

    #[test]
    fn ssl_accepted_hands_over_to_tls() {
        let mut s = PgsqlState::default();
        let out = feed(
            &mut s,
            &[
                (TS, &[0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]),
                (TC, b"S\x16\x03\x01"),
            ],
        );
        let change = out.change.expect("a change");
        assert_eq!(change.to, Some(crate::AppProto::Tls));
        assert_eq!(change.at, 1);
        let tx = s.transactions().next().unwrap();
        assert_eq!(tx.responses, [Resp::Msg(Response::SslResponse(true))]);
        assert_eq!(tx.res, Progress::Done);
    }

    #[test]
    fn errors_take_ids_and_raise_events() {
        let mut s = PgsqlState::default();
        // An unknown request code: malformed, a transaction of its own.
        let out = feed(&mut s, &[(TS, &[0, 0, 0, 8, 0x04, 0xd2, 0x27, 0x0f])]);
        assert_eq!(out.anomalies, ["pgsql.malformed_request"]);
        // A query with no text: no event, but an id.
        let out = feed(&mut s, &[(TS, &msg(b'Q', b"\0"))]);
        assert!(out.anomalies.is_empty());
        feed(&mut s, &[(TS, &msg(b'Q', b"SELECT 1\0"))]);
        let ids: Vec<_> = s.transactions().map(|t| t.id).collect();
        assert_eq!(ids, [0, 2]);
        // A bad length: the flow fails, every transaction is over.
        let out = feed(&mut s, &[(TS, b"Q\0\0\0\x02")]);
        assert_eq!(out.anomalies, ["pgsql.invalid_length"]);
        assert!(out.error);
        assert!(s.transactions().all(|t| t.eof == [true; 2]));
        let out = feed(&mut s, &[(TS, &msg(b'Q', b"SELECT 2\0"))]);
        assert!(out.anomalies.is_empty());
        assert_eq!(s.tx_count(), 3);
    }

    #[test]
    fn max_tx_closes_the_oldest_open_one() {
        let mut s = PgsqlState::new(2);
        let mut out = ParseOutput::default();
        for _ in 0..5 {
            s.parse(TS, &msg(b'Q', b"SELECT 1\0"), &mut out);
        }
        assert_eq!(out.anomalies, ["pgsql.too_many_transactions"; 2]);
        let res: Vec<_> = s.transactions().map(|t| t.res).collect();
        assert_eq!(
            res,
            [
                Progress::FlushedOut,
                Progress::FlushedOut,
                Progress::Init,
                Progress::Init,
                Progress::Init
            ]
        );
    }

    #[test]
    fn a_message_that_never_ends_stops_the_direction() {
        let mut s = PgsqlState::default();
        feed(&mut s, &[(TS, &msg(b'Q', b"SELECT 1"))]);
        feed(&mut s, &[(TS, &msg(b'Q', b"SELECT 2\0"))]);
        assert_eq!(s.tx_count(), 0);
        // An announced length too long to wait for.
        let mut s = PgsqlState::default();
        let mut big = b"Q\x7f\xff\xff\xff".to_vec();
        big.resize(MAX_PENDING + 10, b'x');
        feed(&mut s, &[(TS, &big)]);
        assert!(s.pending[0].is_empty() && s.dead[0]);
    }
}
