//! One Modbus/TCP flow and its transactions, as Suricata makes them: each request
//! starts a transaction; a response joins the oldest unanswered request it answers
//! (same transaction id, unit, function and access) or, answering none, makes a
//! transaction of its own (`unsolicited_response`). The messages are kept as their
//! bytes (at most [`MAX_MESSAGE`](super::parser::MAX_MESSAGE) each) and parsed again
//! where they are read.

use std::collections::VecDeque;

use super::parser::{self, Error, MAX_MESSAGE, Message, Side, access, error};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Suricata's default `request-flood`: live transactions at which the flow is
/// flooded (0: no limit).
pub const DEFAULT_REQUEST_FLOOD: usize = 500;
/// Most live transactions per flow whatever `request-flood` says; beyond it the oldest
/// is dropped.
pub const MAX_TX: usize = 4096;

/// One message: its bytes and its error flags (a response's include what its request
/// disagrees with).
#[derive(Debug, Clone)]
pub struct Msg {
    /// The side (0 request, 1 response), then the message's bytes: the keyword's
    /// buffer.
    pub tagged: Vec<u8>,
    pub flags: u8,
}

impl Msg {
    /// The message's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.tagged[1..]
    }

    /// The message parsed again (its bytes are one whole message).
    pub fn parsed(&self, dir: Dir) -> Option<Message<'_>> {
        parser::parse(self.bytes(), Side::from(dir))
            .ok()
            .map(|(mut m, _)| {
                m.flags = self.flags;
                m
            })
    }
}

#[derive(Debug)]
pub struct ModbusTx {
    /// 0, 1, 2, ... (EVE `modbus.id` is this plus one).
    pub id: u64,
    pub request: Option<Msg>,
    pub response: Option<Msg>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModbusConfig {
    pub request_flood: usize,
}

impl Default for ModbusConfig {
    fn default() -> Self {
        ModbusConfig {
            request_flood: DEFAULT_REQUEST_FLOOD,
        }
    }
}

#[derive(Debug)]
pub struct ModbusState {
    cfg: ModbusConfig,
    txs: VecDeque<ModbusTx>,
    next_id: u64,
    /// Flooded: messages are dropped until transactions are freed below the limit.
    given_up: bool,
    /// The bytes of an incomplete message per direction.
    pending: [Vec<u8>; 2],
    /// A gap: message boundaries are lost in that direction.
    lost: [bool; 2],
}

/// The events of a message's error flags (a response that reads or writes and whose
/// length or values are wrong is a `value_mismatch`).
fn flag_events(dir: Dir, m: &Message<'_>, out: &mut ParseOutput) {
    if dir == Dir::ToClient
        && m.access & (access::READ | access::WRITE) != 0
        && m.flags & (error::DATA_LENGTH | error::DATA_VALUE) != 0
    {
        out.anomaly("modbus.value_mismatch");
        return;
    }
    for (bit, name) in [
        (error::FUNC_CODE, "modbus.invalid_function_code"),
        (error::DATA_VALUE, "modbus.invalid_value"),
        (error::DATA_LENGTH, "modbus.invalid_length"),
        (error::EXC_CODE, "modbus.invalid_exception_code"),
        (error::PROTO_ID, "modbus.invalid_protocol_id"),
    ] {
        if m.flags & bit != 0 {
            out.anomaly(name);
        }
    }
}

impl ModbusState {
    pub fn new(cfg: ModbusConfig) -> ModbusState {
        ModbusState {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            given_up: false,
            pending: [Vec::new(), Vec::new()],
            lost: [false; 2],
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &ModbusTx> {
        self.txs.iter()
    }

    /// A new transaction's id, or `None` when flooded. The transaction that reaches
    /// the limit is still made, and flagged.
    fn new_tx(&mut self, out: &mut ParseOutput) -> Option<u64> {
        if self.given_up {
            return None;
        }
        if self.cfg.request_flood != 0 && self.txs.len() >= self.cfg.request_flood {
            out.anomaly("modbus.flooded");
            self.given_up = true;
        }
        if self.txs.len() >= MAX_TX {
            self.txs.pop_front();
        }
        let id = self.next_id;
        self.next_id += 1;
        Some(id)
    }

    /// One whole message of `dir`; `false` when flooded (the rest of the data is
    /// dropped, as Suricata's parser drops it).
    fn message(&mut self, dir: Dir, bytes: &[u8], out: &mut ParseOutput) -> bool {
        let Ok((mut m, _)) = parser::parse(bytes, Side::from(dir)) else {
            return true;
        };
        let mine = match dir {
            // A request joins a response that came first and that it is answered by.
            Dir::ToServer => self.txs.iter_mut().position(|t| {
                t.request.is_none()
                    && t.response
                        .as_ref()
                        .and_then(|r| r.parsed(Dir::ToClient))
                        .is_some_and(|r| m.answers(&r))
            }),
            Dir::ToClient => self.txs.iter_mut().position(|t| {
                t.response.is_none()
                    && t.request
                        .as_ref()
                        .and_then(|r| r.parsed(Dir::ToServer))
                        .is_some_and(|r| m.answers(&r))
            }),
        };
        flag_events(dir, &m, out);
        let mut tagged = Vec::with_capacity(bytes.len() + 1);
        tagged.push(u8::from(dir == Dir::ToClient));
        tagged.extend_from_slice(bytes);
        let msg = Msg {
            tagged,
            flags: m.flags,
        };
        if let Some(i) = mine {
            let t = &mut self.txs[i];
            match dir {
                Dir::ToServer => t.request = Some(msg),
                Dir::ToClient => t.response = Some(msg),
            }
            return true;
        }
        let Some(id) = self.new_tx(out) else {
            return false;
        };
        if dir == Dir::ToClient {
            out.anomaly("modbus.unsolicited_response");
        }
        let (request, response) = match dir {
            Dir::ToServer => (Some(msg), None),
            Dir::ToClient => (None, Some(msg)),
        };
        self.txs.push_back(ModbusTx {
            id,
            request,
            response,
        });
        true
    }

    /// Parses the messages at the start of `data`: the bytes used (the rest is an
    /// incomplete message), or `None` when flooded.
    fn messages(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) -> Option<usize> {
        let mut at = 0;
        while at < data.len() {
            match parser::parse(&data[at..], Side::from(dir)) {
                Ok((_, used)) => {
                    if !self.message(dir, &data[at..at + used], out) {
                        return None;
                    }
                    at += used;
                }
                Err(Error::Incomplete) => break,
            }
        }
        Some(at)
    }
}

impl AppState for ModbusState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.lost[d] {
            return;
        }
        if self.pending[d].is_empty() {
            if let Some(n) = self.messages(dir, data, out) {
                self.pending[d].extend_from_slice(&data[n..]);
            }
        } else {
            let mut buf = std::mem::take(&mut self.pending[d]);
            buf.extend_from_slice(data);
            if let Some(n) = self.messages(dir, &buf, out) {
                buf.drain(..n);
                self.pending[d] = buf;
            }
        }
        // An incomplete message is shorter than the longest one.
        debug_assert!(self.pending[d].len() < MAX_MESSAGE);
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        // Message boundaries cannot be found again.
        self.lost[dir.index()] = true;
        self.pending[dir.index()] = Vec::new();
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        self.pending[dir.index()] = Vec::new();
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
        if self.given_up && self.cfg.request_flood != 0 && self.txs.len() < self.cfg.request_flood {
            self.given_up = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modbus::parser::tests::{RD_COILS_REQ, RD_COILS_RESP, WR_REG_REQ};

    fn state() -> ModbusState {
        ModbusState::new(ModbusConfig::default())
    }

    #[test]
    fn requests_and_responses_pair_by_transaction_id() {
        let mut s = state();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, RD_COILS_REQ, &mut out);
        s.parse(Dir::ToServer, WR_REG_REQ, &mut out);
        // The second request's response first.
        s.parse(
            Dir::ToClient,
            b"\x00\x02\x00\x00\x00\x06\x0a\x06\x00\x05\x00\x0b",
            &mut out,
        );
        s.parse(Dir::ToClient, RD_COILS_RESP, &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        assert_eq!(s.tx_count(), 2);
        assert!(
            s.txs
                .iter()
                .all(|t| t.request.is_some() && t.response.is_some())
        );
        assert_eq!(s.txs[1].response.as_ref().unwrap().bytes()[1], 2);
    }

    #[test]
    fn split_and_joined_messages() {
        let mut stream = RD_COILS_REQ.to_vec();
        stream.extend_from_slice(WR_REG_REQ);
        for step in [1, 5, 7, stream.len()] {
            let mut s = state();
            let mut out = ParseOutput::default();
            for c in stream.chunks(step) {
                s.parse(Dir::ToServer, c, &mut out);
            }
            assert!(out.anomalies.is_empty());
            assert_eq!(s.tx_count(), 2, "{step}");
            assert!(s.pending[0].is_empty());
        }
    }

    #[test]
    fn unsolicited_mismatched_and_bad_messages() {
        let mut s = state();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, RD_COILS_RESP, &mut out);
        assert_eq!(out.anomalies, ["modbus.unsolicited_response"]);
        let mut out = ParseOutput::default();
        // Register read answered with a count Suricata checks in bits.
        s.parse(
            Dir::ToServer,
            b"\x00\x07\x00\x00\x00\x06\x0a\x03\x00\x05\x00\x02",
            &mut out,
        );
        s.parse(
            Dir::ToClient,
            b"\x00\x07\x00\x00\x00\x07\x0a\x03\x04\x00\x09\x00\x18",
            &mut out,
        );
        assert_eq!(out.anomalies, ["modbus.value_mismatch"]);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\x00\x08\x00\x01\x00\x02\x0a\x00", &mut out);
        assert_eq!(
            out.anomalies,
            ["modbus.invalid_function_code", "modbus.invalid_protocol_id"]
        );
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\x00\x09\x00\x00\x01\x00", &mut out);
        assert_eq!(out.anomalies, ["modbus.invalid_length"]);
        assert_eq!(s.tx_count(), 4);
    }

    #[test]
    fn a_flood_gives_up_until_transactions_are_freed() {
        let mut s = ModbusState::new(ModbusConfig { request_flood: 3 });
        let mut out = ParseOutput::default();
        for _ in 0..6 {
            s.parse(Dir::ToServer, RD_COILS_REQ, &mut out);
        }
        assert_eq!(out.anomalies, ["modbus.flooded"]);
        assert_eq!(s.tx_count(), 4);
        s.free_below(2);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, RD_COILS_REQ, &mut out);
        assert_eq!(s.tx_count(), 3);
        assert!(out.anomalies.is_empty());
        s.parse(Dir::ToServer, RD_COILS_REQ, &mut out);
        assert_eq!(out.anomalies, ["modbus.flooded"]);
    }

    #[test]
    fn a_gap_loses_the_direction() {
        let mut s = state();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &RD_COILS_REQ[..4], &mut out);
        s.gap(Dir::ToServer, 10, &mut out);
        s.parse(Dir::ToServer, RD_COILS_REQ, &mut out);
        assert_eq!(s.tx_count(), 0);
        s.free_below(1);
        assert_eq!(s.txs.capacity(), 0);
    }
}
