//! One IKE flow and its transactions: as in Suricata, every message is a transaction
//! of its own, in the direction it came; what each side said so far of the key
//! exchange (its key, its nonce, the transform the responder chose) is the flow's,
//! and each message's record shows it as it was when the message came.

use std::collections::VecDeque;
use std::sync::Arc;

use super::parser::{self, Attribute, Header, Payloads};
use super::v2;
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
    /// An IKEv2 message's own.
    pub v2: Option<Box<V2Msg>>,
}

/// What an IKEv2 message holds, as Suricata logs and inspects it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct V2Msg {
    /// Its payloads (`None` when they could not be read).
    pub payloads: Option<v2::Payloads>,
    /// Its notifications of error types.
    pub errors: u32,
    /// What the responder had chosen once this message was in.
    pub algorithms: v2::Algorithms,
    /// A responder's first transform of each kind, over all its proposals in order
    /// (`ike.chosen_sa_attribute`).
    pub chosen: Vec<v2::Transform>,
}

impl V2Msg {
    /// The message's notify types.
    pub fn notify(&self) -> &[u16] {
        self.payloads.as_ref().map_or(&[], |p| &p.notify)
    }
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
    /// IKEv2: the responder's choices so far.
    algorithms: v2::Algorithms,
    pub txs: VecDeque<IkeTx>,
}

impl IkeState {
    pub fn new() -> IkeState {
        IkeState::default()
    }

    fn push(
        &mut self,
        dir: Dir,
        header: Header,
        payloads: Option<Payloads>,
        vendor_hex: Vec<Vec<u8>>,
        v2: Option<Box<V2Msg>>,
    ) {
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(IkeTx {
            id: self.next_id,
            dir,
            header,
            payloads,
            init_hex: hex8(&header.init_spi),
            resp_hex: hex8(&header.resp_spi),
            vendor_hex,
            exchange: Arc::clone(&self.exchange),
            v2,
        });
        self.next_id += 1;
    }

    /// An IKEv2 message: a transaction whatever its payloads; when they can be read,
    /// each proposal is checked for weak or odd algorithms, and a responder's
    /// transforms become the flow's chosen algorithms.
    fn v2(&mut self, dir: Dir, h: Header, rest: &[u8], out: &mut ParseOutput) {
        let mut payloads = v2::payloads(rest, h.next_payload).ok();
        let mut msg = V2Msg::default();
        if let Some(p) = &mut payloads {
            // What the transaction keeps of its proposals is `chosen`.
            for prop in std::mem::take(&mut p.proposals) {
                v2::check(&prop, out);
                if dir == Dir::ToClient {
                    for &t in &prop.transforms {
                        self.algorithms.take(t);
                        // The first of each kind is what the keyword sees.
                        if !msg.chosen.iter().any(|c| c.kind == t.kind) {
                            msg.chosen.push(t);
                        }
                    }
                }
            }
            msg.errors = p.errors;
        }
        msg.payloads = payloads;
        msg.algorithms = self.algorithms;
        self.push(dir, h, None, Vec::new(), Some(Box::new(msg)));
    }
}

impl AppState for IkeState {
    /// Suricata's IKE probe, asked about the first datagram toward the client, turns
    /// the flow round when that message is one the probe takes and its responder SPI
    /// is zero (an initiator's): measured, the reference's later datagrams change
    /// direction and its `flow` record's ends are swapped.
    fn first_reply_is_request(&self, data: &[u8]) -> bool {
        super::probe(data) == crate::Probe::Match
            && parser::header(data).is_some_and(|(h, _)| h.resp_spi == [0; 8])
    }

    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        // A datagram too short for a header, or of another version, is dropped
        // without an event or a transaction, as Suricata's parser does.
        let Some((h, rest)) = parser::header(data) else {
            return;
        };
        match h.maj_ver {
            1 => {}
            2 => return self.v2(dir, h, rest, out),
            _ => return,
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
        let vendor_hex = payloads
            .as_ref()
            .map_or_else(Vec::new, |p| p.vendor_ids.iter().map(|v| hex(v)).collect());
        self.push(dir, h, payloads, vendor_hex, None);
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
