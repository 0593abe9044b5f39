//! One DCE/RPC flow over TCP: each direction's PDUs reassembled from the stream, the
//! interfaces the client bound (and the server accepted), and the transactions, as
//! Suricata makes them: one per call (a BIND and its BIND_ACK, an ALTER_CONTEXT and
//! its response, a REQUEST and its RESPONSE, paired by call id), the stub data of each
//! side's fragments joined.

use std::collections::VecDeque;

use super::parser::{self as p, CtxItem, HDR_LEN, Header};
use crate::{AppState, Dir, ParseOutput, ReleaseEmpty, Transaction};

/// Suricata's default `app-layer.protocols.dcerpc.max-tx`: live transactions of a flow
/// at most; past it the oldest is finished (logged and freed).
pub const DEFAULT_MAX_TX: usize = 1024;
/// Suricata's default `max-stub-size`: stub data kept per transaction and direction.
pub const DEFAULT_MAX_STUB: usize = 1024 * 1024;
/// Interfaces (bound presentation contexts) a flow remembers at most; past it the
/// oldest are forgotten.
pub const MAX_INTERFACES: usize = 256;
/// Interfaces one transaction lists (in its record, and for `dcerpc.iface`) at most.
pub const MAX_TX_INTERFACES: usize = 16;

/// The parser's settings (`app-layer.protocols.dcerpc`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DcerpcConfig {
    pub max_tx: usize,
    pub max_stub: usize,
}

impl Default for DcerpcConfig {
    fn default() -> Self {
        DcerpcConfig {
            max_tx: DEFAULT_MAX_TX,
            max_stub: DEFAULT_MAX_STUB,
        }
    }
}

/// A presentation context a BIND (or ALTER_CONTEXT) asked for, and what the server
/// answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interface {
    pub uuid: [u8; 16],
    pub version: u16,
    pub version_minor: u16,
    pub ctx_id: u16,
    /// The call id of the BIND that asked for it.
    pub call_id: u32,
    /// The server answered (BIND_ACK), with `result` (0: acceptance).
    pub acked: bool,
    pub result: u16,
    /// The BIND_ACK's reason for `result` (EVE `ack_reason` over SMB).
    pub reason: u16,
    /// The BIND had the first-fragment flag (`dcerpc.iface` without `any_frag` needs it).
    pub first_frag: bool,
}

/// One call.
#[derive(Debug, Clone, Default)]
pub struct DcerpcTx {
    pub id: u64,
    pub call_id: u32,
    /// The client's PDU type (`None`: not seen) and the server's.
    pub req_type: Option<u8>,
    pub resp_type: Option<u8>,
    /// A REQUEST's context id and operation number.
    pub ctx_id: u16,
    pub opnum: u16,
    /// Fragments seen and stub data joined, per direction.
    pub frags: [u16; 2],
    pub stub: [Vec<u8>; 2],
    /// The direction's part is over (its last fragment came), or was lost in a gap.
    pub done: [bool; 2],
    pub lost: [bool; 2],
    /// The direction ended (the engine is told no more comes).
    pub eof: [bool; 2],
    /// The minor version of the PDU that made it (EVE `rpc_version` 5.x).
    pub minor: u8,
    pub little_endian: bool,
    /// A REQUEST: the flow's interfaces of its context id; a BIND: those it asked for.
    pub interfaces: Vec<Interface>,
    /// A connectionless call (DCE/RPC over UDP): its activity and sequence number.
    pub udp: Option<Box<UdpCall>>,
}

/// What names a connectionless call (C706 §12.5.3): the client's activity UUID (in
/// canonical order) and the call's sequence number in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UdpCall {
    pub activity: [u8; 16],
    pub seqnum: u32,
}

impl DcerpcTx {
    pub fn is_request(&self) -> bool {
        self.req_type == Some(p::REQUEST)
    }
}

/// One flow's DCE/RPC state.
#[derive(Debug)]
pub struct DcerpcState {
    cfg: DcerpcConfig,
    /// Per direction: the bytes of a PDU begun but not complete.
    buf: [Vec<u8>; 2],
    /// Per direction: after a gap, bytes are skipped up to something like a header.
    resync: [bool; 2],
    interfaces: Vec<Interface>,
    txs: VecDeque<DcerpcTx>,
    next_id: u64,
    failed: bool,
    /// The context ids of the last BIND (or ALTER_CONTEXT), in order: what its answer's
    /// results are about.
    last_bind: Vec<u16>,
    /// Reused scratch for a BIND's items and a BIND_ACK's results.
    items: Vec<CtxItem>,
    results: Vec<(u16, u16)>,
}

impl DcerpcState {
    pub fn new(cfg: DcerpcConfig) -> DcerpcState {
        DcerpcState {
            cfg,
            buf: [Vec::new(), Vec::new()],
            resync: [false; 2],
            interfaces: Vec::new(),
            txs: VecDeque::new(),
            next_id: 0,
            failed: false,
            last_bind: Vec::new(),
            items: Vec::new(),
            results: Vec::new(),
        }
    }

    fn fail(&mut self, out: &mut ParseOutput) {
        self.failed = true;
        out.failed = true;
    }

    fn new_tx(&mut self, h: &Header) -> &mut DcerpcTx {
        if self.txs.len() >= self.cfg.max_tx
            && let Some(old) = self.txs.iter_mut().find(|t| !(t.done[0] && t.done[1]))
        {
            old.done = [true; 2];
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(DcerpcTx {
            id,
            call_id: h.call_id,
            minor: h.minor,
            little_endian: h.little_endian(),
            ..Default::default()
        });
        self.txs.back_mut().expect("just pushed")
    }

    /// The open transaction of call `call_id` whose client side is one of `req` (or
    /// not seen) and whose direction `d` is not over.
    fn find(&mut self, call_id: u32, req: &[u8], d: usize) -> Option<usize> {
        self.txs.iter().position(|t| {
            t.call_id == call_id && !t.done[d] && t.req_type.is_none_or(|r| req.contains(&r))
        })
    }

    fn interfaces_of(&self, keep: impl Fn(&Interface) -> bool) -> Vec<Interface> {
        self.interfaces
            .iter()
            .filter(|i| keep(i))
            .take(MAX_TX_INTERFACES)
            .copied()
            .collect()
    }

    /// Handles one whole PDU (`pdu` starts with its header `h`).
    fn pdu(&mut self, h: Header, pdu: &[u8], out: &mut ParseOutput) {
        let body = &pdu[HDR_LEN..];
        let le = h.little_endian();
        match h.ptype {
            p::BIND | p::ALTER_CONTEXT => {
                let mut items = std::mem::take(&mut self.items);
                items.clear();
                let ok = p::bind(body, le, &mut items).is_some();
                if ok {
                    self.last_bind.clear();
                    for it in &items {
                        self.last_bind.push(it.ctx_id);
                        // A context asked for again (ALTER_CONTEXT) is that context
                        // from now on.
                        self.interfaces.retain(|i| i.ctx_id != it.ctx_id);
                        if self.interfaces.len() >= MAX_INTERFACES {
                            self.interfaces.remove(0);
                        }
                        self.interfaces.push(Interface {
                            uuid: it.uuid,
                            version: it.version,
                            version_minor: it.version_minor,
                            ctx_id: it.ctx_id,
                            call_id: h.call_id,
                            acked: false,
                            result: 0,
                            reason: 0,
                            first_frag: h.flags & p::PFC_FIRST_FRAG != 0,
                        });
                    }
                }
                self.items = items;
                if !ok {
                    return self.fail(out);
                }
                let ifaces = if h.ptype == p::BIND {
                    self.interfaces_of(|i| i.call_id == h.call_id)
                } else {
                    Vec::new()
                };
                let tx = self.new_tx(&h);
                tx.req_type = Some(h.ptype);
                tx.done[0] = true;
                tx.frags[0] = 1;
                tx.interfaces = ifaces;
                // Suricata's parser asks for raw inspection at a BIND, a BINDACK, and
                // each fragment of a request or a response that carries stub data.
                out.trigger_raw(Dir::ToServer);
            }
            p::BINDACK | p::ALTER_CONTEXT_RESP => {
                let mut results = std::mem::take(&mut self.results);
                results.clear();
                let ok = p::bind_ack(body, le, &mut results).is_some();
                if ok {
                    // The results answer the last BIND's contexts, in order.
                    for (ctx, &(result, reason)) in self.last_bind.iter().zip(&results) {
                        if let Some(i) = self.interfaces.iter_mut().find(|i| i.ctx_id == *ctx) {
                            i.acked = true;
                            i.result = result;
                            i.reason = reason;
                        }
                    }
                }
                self.results = results;
                if !ok {
                    return self.fail(out);
                }
                let req = if h.ptype == p::BINDACK {
                    p::BIND
                } else {
                    p::ALTER_CONTEXT
                };
                let ifaces = self.interfaces_of(|i| i.call_id == h.call_id);
                let i = match self.find(h.call_id, &[req], 1) {
                    Some(i) => i,
                    None => {
                        self.new_tx(&h);
                        self.txs.len() - 1
                    }
                };
                let tx = &mut self.txs[i];
                if tx.req_type == Some(p::BIND) {
                    tx.interfaces = ifaces;
                }
                tx.resp_type = Some(h.ptype);
                tx.done[1] = true;
                tx.frags[1] = 1;
                out.trigger_raw(Dir::ToClient);
            }
            p::REQUEST => {
                let Some(r) = p::request(body, le, h.flags) else {
                    return self.fail(out);
                };
                let ifaces = self.interfaces_of(|i| i.ctx_id == r.ctx_id);
                let max_stub = self.cfg.max_stub;
                let i = match self.find(h.call_id, &[p::REQUEST], 0) {
                    Some(i) => i,
                    None => {
                        self.new_tx(&h);
                        self.txs.len() - 1
                    }
                };
                let tx = &mut self.txs[i];
                tx.req_type = Some(p::REQUEST);
                tx.ctx_id = r.ctx_id;
                tx.opnum = r.opnum;
                tx.interfaces = ifaces;
                tx.little_endian = le;
                // Suricata's stub data of a request starts after its 8 bytes of header:
                // an object UUID is part of it.
                let stub = body.get(p::REQUEST_HDR..).unwrap_or(&[]);
                debug_assert!(r.stub_at >= p::REQUEST_HDR);
                if !stub.is_empty() {
                    out.trigger_raw(Dir::ToServer);
                }
                stub_fragment(tx, 0, &h, stub, max_stub);
            }
            p::RESPONSE => {
                let max_stub = self.cfg.max_stub;
                let i = match self.find(h.call_id, &[p::REQUEST], 1) {
                    Some(i) => i,
                    None => {
                        self.new_tx(&h);
                        self.txs.len() - 1
                    }
                };
                let tx = &mut self.txs[i];
                tx.resp_type = Some(h.ptype);
                // Suricata's stub data of a response starts right after the common
                // header (its own 8 bytes of header included).
                if !body.is_empty() {
                    out.trigger_raw(Dir::ToClient);
                }
                stub_fragment(tx, 1, &h, body, max_stub);
            }
            // A FAULT answers no call for Suricata (the call stays `UNREPLIED`); AUTH3,
            // SHUTDOWN, CO_CANCEL, ORPHANED, BIND_NAK, RTS and the connectionless
            // types make no transaction.
            _ => {}
        }
    }

    /// After a gap in direction `d` the open transactions lose that side (and a gap
    /// toward the client the request side too, as Suricata's parser has it).
    fn lose(&mut self, d: usize) {
        for t in &mut self.txs {
            let sides: &[usize] = if d == 0 { &[0] } else { &[0, 1] };
            for &s in sides {
                if !t.done[s] {
                    t.lost[s] = true;
                    t.done[s] = true;
                }
            }
        }
    }
}

/// Appends one fragment's stub data to direction `d` of `tx` (at most `max` bytes in
/// all); its last fragment (or one flagged neither first nor last) ends the side.
fn stub_fragment(tx: &mut DcerpcTx, d: usize, h: &Header, stub: &[u8], max: usize) {
    tx.frags[d] = tx.frags[d].saturating_add(1);
    let room = max.saturating_sub(tx.stub[d].len());
    tx.stub[d].extend_from_slice(&stub[..stub.len().min(room)]);
    let frag = h.flags & (p::PFC_FIRST_FRAG | p::PFC_LAST_FRAG);
    if frag == 0 || frag & p::PFC_LAST_FRAG != 0 {
        tx.done[d] = true;
    }
}

/// Where a header may start in `b` after a gap: a version 5 byte followed by a minor
/// version of 0 or 1 (or a last byte 5, which may be one).
fn resync_at(b: &[u8]) -> Option<usize> {
    (0..b.len()).find(|&i| b[i] == 5 && b.get(i + 1).is_none_or(|&m| m <= 1))
}

impl AppState for DcerpcState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if self.failed || data.is_empty() {
            return;
        }
        let d = dir.index();
        let mut input = data;
        if self.resync[d] {
            match resync_at(input) {
                Some(i) => {
                    input = &input[i..];
                    self.resync[d] = false;
                }
                None => return,
            }
        }
        // A PDU begun in an earlier call: complete it first.
        while !self.buf[d].is_empty() && !input.is_empty() {
            let have = self.buf[d].len();
            let want = match p::header(&self.buf[d]) {
                Some(h) => usize::from(h.frag_len),
                None => HDR_LEN,
            };
            let n = (want - have).min(input.len());
            self.buf[d].extend_from_slice(&input[..n]);
            input = &input[n..];
            let Some(h) = p::header(&self.buf[d]) else {
                continue;
            };
            if !h.valid() {
                return self.fail(out);
            }
            if self.buf[d].len() == usize::from(h.frag_len) {
                let pdu = std::mem::take(&mut self.buf[d]);
                self.pdu(h, &pdu, out);
                self.buf[d] = pdu;
                self.buf[d].clear();
                if self.failed {
                    return;
                }
            }
        }
        // Whole PDUs straight from the input; the rest waits.
        while let Some(h) = p::header(input) {
            if !h.valid() {
                return self.fail(out);
            }
            let len = usize::from(h.frag_len);
            if input.len() < len {
                break;
            }
            self.pdu(h, &input[..len], out);
            if self.failed {
                return;
            }
            input = &input[len..];
        }
        self.buf[d].extend_from_slice(input);
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        let d = dir.index();
        self.buf[d].clear();
        self.resync[d] = true;
        self.lose(d);
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        for t in &mut self.txs {
            t.eof[dir.index()] = true;
        }
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
        for b in &mut self.buf {
            b.release_if_empty();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::parser::tests::BIND_LE;
    use super::*;

    fn bind_ack(call_id: u8, results: &[u16]) -> Vec<u8> {
        let mut b = vec![5, 0, 12, 3, 0x10, 0, 0, 0, 0, 0, 0, 0, call_id, 0, 0, 0];
        b.extend_from_slice(&[0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 4, 0]);
        b.extend_from_slice(b"135\0");
        b.extend_from_slice(&[0, 0]); // pad
        b.extend_from_slice(&[results.len() as u8, 0, 0, 0]);
        for &r in results {
            b.extend_from_slice(&r.to_le_bytes());
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&[0; 20]);
        }
        let n = b.len() as u16;
        b[8..10].copy_from_slice(&n.to_le_bytes());
        b
    }

    fn request(call_id: u8, flags: u8, opnum: u16, stub: &[u8]) -> Vec<u8> {
        let mut b = vec![5, 0, 0, flags, 0x10, 0, 0, 0, 0, 0, 0, 0, call_id, 0, 0, 0];
        b.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&opnum.to_le_bytes());
        b.extend_from_slice(stub);
        let n = b.len() as u16;
        b[8..10].copy_from_slice(&n.to_le_bytes());
        b
    }

    fn response(call_id: u8, flags: u8, stub: &[u8]) -> Vec<u8> {
        let mut b = vec![5, 0, 2, flags, 0x10, 0, 0, 0, 0, 0, 0, 0, call_id, 0, 0, 0];
        b.extend_from_slice(&[0; 8]);
        b.extend_from_slice(stub);
        let n = b.len() as u16;
        b[8..10].copy_from_slice(&n.to_le_bytes());
        b
    }

    #[test]
    fn bind_request_response_in_pieces() {
        let mut s = DcerpcState::new(DcerpcConfig::default());
        let mut out = ParseOutput::default();
        for c in BIND_LE.chunks(5) {
            s.parse(Dir::ToServer, c, &mut out);
        }
        s.parse(Dir::ToClient, &bind_ack(2, &[0]), &mut out);
        let mut req = request(2, 1, 4, b"AAAA");
        req.extend(request(2, 2, 4, b"BBBB"));
        for c in req.chunks(3) {
            s.parse(Dir::ToServer, c, &mut out);
        }
        s.parse(Dir::ToClient, &response(2, 3, b"resp"), &mut out);
        assert!(!out.failed && out.anomalies.is_empty());
        assert_eq!(s.txs.len(), 2);
        let b = &s.txs[0];
        assert_eq!((b.req_type, b.resp_type), (Some(p::BIND), Some(p::BINDACK)));
        assert!(b.interfaces[0].acked && b.interfaces[0].first_frag);
        let r = &s.txs[1];
        assert_eq!(r.opnum, 4);
        assert_eq!(r.frags, [2, 1]);
        assert_eq!(r.stub[0], b"AAAABBBB");
        assert_eq!(r.stub[1], b"\0\0\0\0\0\0\0\0resp");
        assert!(r.done[0] && r.done[1]);
        assert_eq!(r.interfaces.len(), 1);
    }

    #[test]
    fn a_response_without_its_request_and_a_bad_header() {
        let mut s = DcerpcState::new(DcerpcConfig::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, &response(7, 3, b"x"), &mut out);
        assert_eq!(s.txs[0].req_type, None);
        assert!(s.txs[0].done[1]);
        s.parse(
            Dir::ToServer,
            &[4, 0, 0, 3, 0x10, 0, 0, 0, 16, 0, 0, 0, 1, 0, 0, 0],
            &mut out,
        );
        assert!(out.failed);
    }

    #[test]
    fn a_gap_loses_the_open_side_and_resyncs() {
        let mut s = DcerpcState::new(DcerpcConfig::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &request(1, 1, 9, b"part"), &mut out);
        s.gap(Dir::ToServer, 100, &mut out);
        assert!(s.txs[0].lost[0] && s.txs[0].done[0]);
        let mut junk = vec![1, 2, 3];
        junk.extend(request(2, 3, 9, b"next"));
        s.parse(Dir::ToServer, &junk, &mut out);
        assert!(!out.failed);
        assert_eq!(s.txs.len(), 2);
        assert_eq!(s.txs[1].stub[0], b"next");
        assert_eq!(s.txs[1].opnum, 9);
    }

    #[test]
    fn transactions_and_stubs_are_bounded() {
        let cfg = DcerpcConfig {
            max_tx: 4,
            max_stub: 6,
        };
        let mut s = DcerpcState::new(cfg);
        let mut out = ParseOutput::default();
        for i in 0..10 {
            s.parse(Dir::ToServer, &request(i, 1, 1, b"abcd"), &mut out);
        }
        assert!(s.txs.iter().filter(|t| !t.done[0]).count() <= 4);
        s.parse(Dir::ToServer, &request(3, 2, 1, b"efgh"), &mut out);
        assert!(s.txs.iter().all(|t| t.stub[0].len() <= 6));
    }
}
