//! One IKE flow and its transactions: as in Suricata, every message is a transaction
//! of its own, in the direction it came; what each side said so far of the key
//! exchange (its key, its nonce, the transform the responder chose) is the flow's,
//! and each message's record shows it as it was when the message came.

use std::collections::VecDeque;
use std::sync::Arc;

use super::parser::{self, Attribute, Header, Payloads};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Most live transactions per flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 256;

/// What one side said so far.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Side {
    pub key_exchange: Vec<u8>,
    pub nonce: Vec<u8>,
    /// The first transform this side sent (for the responder: the chosen one).
    pub transform: Vec<Attribute>,
    pub transforms: u64,
}

impl Side {
    fn update(&mut self, p: &Payloads) {
        self.key_exchange.clone_from(&p.key_exchange);
        self.nonce.clone_from(&p.nonce);
        if self.transforms == 0
            && let Some(t) = p.transforms.first()
        {
            self.transform.extend(t.iter().cloned());
        }
        self.transforms += p.transforms.len() as u64;
    }
}

/// What the flow knows of the exchange (Suricata's IKEv1 container).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Exchange {
    pub doi: Option<u32>,
    pub client: Side,
    pub server: Side,
}

/// One message.
#[derive(Debug)]
pub struct IkeTx {
    pub id: u64,
    pub dir: Dir,
    pub header: Header,
    /// The payloads (`None` for an encrypted message).
    pub payloads: Option<Payloads>,
    /// The SPIs in hex, as the `ike.init_spi` and `ike.resp_spi` buffers are.
    pub init_hex: [u8; 16],
    pub resp_hex: [u8; 16],
    /// The vendor ids in hex, as `ike.vendor` is.
    pub vendor_hex: Vec<Vec<u8>>,
    /// The flow's exchange once this message was in.
    pub exchange: Arc<Exchange>,
}

impl IkeTx {
    pub fn encrypted(&self) -> bool {
        self.header.flags & parser::FLAG_ENCRYPTED != 0
    }
}

/// Lower-case hex of `b`.
pub fn hex(b: &[u8]) -> Vec<u8> {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = Vec::with_capacity(b.len() * 2);
    for &x in b {
        out.push(DIGITS[usize::from(x >> 4)]);
        out.push(DIGITS[usize::from(x & 15)]);
    }
    out
}

fn hex8(b: &[u8; 8]) -> [u8; 16] {
    let mut out = [0; 16];
    out.copy_from_slice(&hex(b));
    out
}

/// One flow.
#[derive(Debug, Default)]
pub struct IkeState {
    next_id: u64,
    exchange: Arc<Exchange>,
    pub txs: VecDeque<IkeTx>,
}

impl IkeState {
    pub fn new() -> IkeState {
        IkeState::default()
    }
}

impl AppState for IkeState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let data = parser::skip_non_esp_marker(data);
        let Some((h, rest)) = parser::header(data) else {
            out.anomaly("ike.malformed_data");
            return;
        };
        // IKEv2 is not parsed (the probe does not take it).
        if h.maj_ver != 1 {
            out.anomaly("ike.malformed_data");
            return;
        }
        let payloads = if h.flags & parser::FLAG_ENCRYPTED != 0 {
            None
        } else {
            // A message whose payloads cannot be read makes no transaction
            // (Suricata's parser drops it, with no event).
            let Ok(p) = parser::payloads(rest, h.next_payload) else {
                return;
            };
            let ex = Arc::make_mut(&mut self.exchange);
            if let Some(doi) = p.doi {
                ex.doi = Some(doi);
            }
            let side = match dir {
                Dir::ToServer => &mut ex.client,
                Dir::ToClient => &mut ex.server,
            };
            if p.types.contains(&parser::PT_SA) {
                // A new SA: a new exchange on the same flow.
                *side = Side::default();
            }
            if dir == Dir::ToClient
                && side.transforms <= 1
                && side.transforms + p.transforms.len() as u64 > 1
            {
                out.anomaly("ike.multiple_server_proposal");
            }
            side.update(&p);
            if p.extra {
                out.anomaly("ike.payload_extra_data");
            }
            Some(p)
        };
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        let vendor_hex = payloads
            .as_ref()
            .map_or_else(Vec::new, |p| p.vendor_ids.iter().map(|v| hex(v)).collect());
        self.txs.push_back(IkeTx {
            id: self.next_id,
            dir,
            header: h,
            payloads,
            init_hex: hex8(&h.init_spi),
            resp_hex: hex8(&h.resp_spi),
            vendor_hex,
            exchange: Arc::clone(&self.exchange),
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
