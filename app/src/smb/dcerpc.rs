//! DCE/RPC over SMB named pipes: the PDUs a client writes to a pipe (SMB WRITE, IOCTL
//! `FSCTL_PIPE_TRANSCEIVE`, SMB1 TRANS) and the server's answers (READ, IOCTL, TRANS
//! responses), parsed with the DCE/RPC module's PDU parser into that module's
//! transaction type, so that its keywords (`dcerpc.iface`, `dcerpc.opnum`,
//! `dcerpc.stub_data`) read an SMB transaction's call as they read a TCP one's.

use std::collections::VecDeque;

use super::state::SmbTx;
use crate::dcerpc::parser::{self as p, CtxItem, HDR_LEN};
use crate::dcerpc::state::{DcerpcTx, Interface, MAX_INTERFACES, MAX_TX_INTERFACES};

/// Stub data kept per call and direction (Suricata's default `max-stub-size`).
pub const MAX_STUB: usize = 1024 * 1024;
/// PDUs one SMB message's data is parsed for at most.
pub const MAX_PDUS: usize = 64;

/// The interfaces bound on a flow's pipes.
#[derive(Debug, Default)]
pub struct Pipes {
    interfaces: Vec<Interface>,
    last_bind: Vec<u16>,
    items: Vec<CtxItem>,
    results: Vec<(u16, u16)>,
}

/// What a client's PDU did.
#[derive(Debug)]
pub enum Sent {
    /// A new call.
    New(DcerpcTx),
    /// Another fragment of call `call_id`'s request.
    More {
        call_id: u32,
        stub: Vec<u8>,
        last: bool,
    },
}

impl Pipes {
    /// The PDUs of data written to a pipe.
    pub fn client(&mut self, data: &[u8], out: &mut Vec<Sent>) -> bool {
        let mut rest = data;
        for n in 0..MAX_PDUS {
            let Some(h) = p::header(rest) else { break };
            if !h.valid() {
                if n == 0 && h.ptype > p::RTS {
                    // Suricata reads any 16 bytes written to a pipe as a header and
                    // logs a call of that type (by number), malformed.
                    out.push(Sent::New(DcerpcTx {
                        call_id: h.call_id,
                        req_type: Some(h.ptype),
                        frags: [0, 0],
                        done: [true, false],
                        minor: h.minor,
                        little_endian: h.little_endian(),
                        ..Default::default()
                    }));
                }
                return false;
            }
            let len = usize::from(h.frag_len).min(rest.len());
            let pdu = &rest[..len];
            rest = &rest[len..];
            let body = &pdu[HDR_LEN.min(pdu.len())..];
            let le = h.little_endian();
            let last = h.flags & p::PFC_LAST_FRAG != 0;
            match h.ptype {
                p::BIND | p::ALTER_CONTEXT => {
                    self.items.clear();
                    if p::bind(body, le, &mut self.items).is_none() {
                        return false;
                    }
                    self.last_bind.clear();
                    let mut ifaces = Vec::new();
                    for it in &self.items {
                        self.last_bind.push(it.ctx_id);
                        self.interfaces.retain(|i| i.ctx_id != it.ctx_id);
                        if self.interfaces.len() >= MAX_INTERFACES {
                            self.interfaces.remove(0);
                        }
                        let i = Interface {
                            uuid: it.uuid,
                            version: it.version,
                            version_minor: it.version_minor,
                            ctx_id: it.ctx_id,
                            call_id: h.call_id,
                            acked: false,
                            result: 0,
                            reason: 0,
                            first_frag: h.flags & p::PFC_FIRST_FRAG != 0,
                        };
                        self.interfaces.push(i);
                        if ifaces.len() < MAX_TX_INTERFACES {
                            ifaces.push(i);
                        }
                    }
                    out.push(Sent::New(DcerpcTx {
                        call_id: h.call_id,
                        req_type: Some(h.ptype),
                        frags: [1, 0],
                        done: [true, false],
                        minor: h.minor,
                        little_endian: le,
                        interfaces: ifaces,
                        ..Default::default()
                    }));
                }
                p::REQUEST => {
                    let Some(r) = p::request(body, le, h.flags) else {
                        return false;
                    };
                    let stub = body.get(p::REQUEST_HDR..).unwrap_or(&[]);
                    let stub = stub[..stub.len().min(MAX_STUB)].to_vec();
                    if h.flags & p::PFC_FIRST_FRAG == 0 {
                        out.push(Sent::More {
                            call_id: h.call_id,
                            stub,
                            last,
                        });
                        continue;
                    }
                    let ifaces: Vec<Interface> = self
                        .interfaces
                        .iter()
                        .filter(|i| i.ctx_id == r.ctx_id)
                        .take(MAX_TX_INTERFACES)
                        .copied()
                        .collect();
                    out.push(Sent::New(DcerpcTx {
                        call_id: h.call_id,
                        req_type: Some(p::REQUEST),
                        ctx_id: r.ctx_id,
                        opnum: r.opnum,
                        frags: [1, 0],
                        stub: [stub, Vec::new()],
                        done: [
                            last || h.flags & (p::PFC_FIRST_FRAG | p::PFC_LAST_FRAG) == 0,
                            false,
                        ],
                        minor: h.minor,
                        little_endian: le,
                        interfaces: ifaces,
                        ..Default::default()
                    }));
                }
                _ => {}
            }
        }
        true
    }

    /// The PDUs of data read from a pipe: each is applied to its call in `txs` (the
    /// newest unanswered one of its call id); the call ids answered go to `answered`.
    pub fn server(
        &mut self,
        data: &[u8],
        txs: &mut VecDeque<SmbTx>,
        answered: &mut Option<u32>,
    ) -> bool {
        let mut rest = data;
        for _ in 0..MAX_PDUS {
            let Some(h) = p::header(rest) else { break };
            if !h.valid() {
                return false;
            }
            let len = usize::from(h.frag_len).min(rest.len());
            let pdu = &rest[..len];
            rest = &rest[len..];
            let body = &pdu[HDR_LEN.min(pdu.len())..];
            let le = h.little_endian();
            match h.ptype {
                p::BINDACK | p::ALTER_CONTEXT_RESP => {
                    self.results.clear();
                    if p::bind_ack(body, le, &mut self.results).is_none() {
                        return false;
                    }
                    for (ctx, &(result, reason)) in self.last_bind.iter().zip(&self.results) {
                        if let Some(i) = self.interfaces.iter_mut().find(|i| i.ctx_id == *ctx) {
                            i.acked = true;
                            i.result = result;
                            i.reason = reason;
                        }
                    }
                    *answered = Some(h.call_id);
                    if let Some(tx) = unanswered(txs, h.call_id) {
                        for i in &mut tx.interfaces {
                            if let Some(f) = self
                                .interfaces
                                .iter()
                                .find(|f| f.ctx_id == i.ctx_id && f.call_id == i.call_id)
                            {
                                *i = *f;
                            }
                        }
                        tx.resp_type = Some(h.ptype);
                        tx.frags[1] = 1;
                        tx.done[1] = true;
                    }
                }
                p::RESPONSE | p::FAULT | p::BINDNAK => {
                    *answered = Some(h.call_id);
                    if let Some(tx) = unanswered(txs, h.call_id) {
                        tx.resp_type = Some(h.ptype);
                        tx.frags[1] = tx.frags[1].saturating_add(1);
                        if h.ptype == p::RESPONSE {
                            let room = MAX_STUB.saturating_sub(tx.stub[1].len());
                            let stub = body.get(p::REQUEST_HDR..).unwrap_or(&[]);
                            tx.stub[1].extend_from_slice(&stub[..stub.len().min(room)]);
                        }
                        let frag = h.flags & (p::PFC_FIRST_FRAG | p::PFC_LAST_FRAG);
                        if h.ptype != p::RESPONSE || frag == 0 || frag & p::PFC_LAST_FRAG != 0 {
                            tx.done[1] = true;
                        }
                    }
                }
                _ => {}
            }
        }
        true
    }
}

/// The newest call `call_id` of `txs` not answered yet.
fn unanswered(txs: &mut VecDeque<SmbTx>, call_id: u32) -> Option<&mut DcerpcTx> {
    txs.iter_mut()
        .rev()
        .filter_map(SmbTx::dce_mut)
        .find(|d| d.call_id == call_id && !d.done[1])
}
