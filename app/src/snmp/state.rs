//! One SNMP flow and its transactions: as in Suricata, every message is a transaction
//! of its own, in the direction it came, complete as soon as it is in.

use std::collections::VecDeque;

use super::parser::{self, Message, Span};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Most live transactions per flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 256;

/// One message.
#[derive(Debug)]
pub struct SnmpTx {
    pub id: u64,
    pub dir: Dir,
    /// The flow's version (its first message's), as Suricata writes it.
    pub version: u32,
    pub msg: Message,
    /// The datagram (the message's fields are ranges of it).
    pub data: Box<[u8]>,
}

impl SnmpTx {
    /// The bytes of a range of the datagram.
    pub fn bytes(&self, s: &Span) -> &[u8] {
        self.data
            .get(s.start as usize..s.end as usize)
            .unwrap_or_default()
    }
}

/// One flow.
#[derive(Debug, Default)]
pub struct SnmpState {
    /// 0 until a message's envelope said which.
    version: u32,
    next_id: u64,
    pub txs: VecDeque<SnmpTx>,
}

impl SnmpState {
    pub fn new() -> SnmpState {
        SnmpState::default()
    }
}

impl AppState for SnmpState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if self.version == 0
            && let Ok(v) = parser::envelope_version(data)
        {
            self.version = v;
        }
        let msg = match parser::parse(data) {
            Ok(m) => m,
            Err(_) => {
                out.anomaly("snmp.malformed_data");
                return;
            }
        };
        if msg.version != self.version {
            out.anomaly("snmp.version_mismatch");
        }
        if msg.unknown_security_model {
            out.anomaly("snmp.unknown_security_model");
        }
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(SnmpTx {
            id: self.next_id,
            dir,
            version: self.version,
            msg,
            data: data.into(),
        });
        self.next_id += 1;
    }

    fn gap(&mut self, _dir: Dir, _len: u64, _out: &mut ParseOutput) {}

    fn eof(&mut self, _dir: Dir, _out: &mut ParseOutput) {}

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
    }
}
