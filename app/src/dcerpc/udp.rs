//! Connectionless DCE/RPC (C706 §12.5, protocol version 4) over UDP, as Suricata 8
//! parses it: each datagram one PDU of an 80-byte header and a body; REQUEST and
//! RESPONSE fragments joined into calls, a call being the transaction of an activity
//! UUID and a sequence number (a request or response fragment goes to the call of its
//! activity and number still missing that side's last fragment, else starts one).
//!
//! As Suricata's: any other PDU type (PING, WORKING, FAULT, NOCALL, ACK, ...), a PDU
//! shorter than its header or than the body length it gives, is a parse error, after
//! which every call of the flow counts as finished (and is logged, with `UNREPLIED`
//! or `REQUEST_LOST` for a missing side); a call missing a side is not logged when the
//! flow just ends, and the missing side's fragments still go to it once it was
//! logged (they start no new call). The calls carry no interface binding: `dcerpc.iface` and
//! `dcerpc.opnum` do not match them (Suricata 8's do not), `dcerpc.stub_data` does.

use std::collections::VecDeque;

use super::parser::{REQUEST, RESPONSE};
use super::state::{DcerpcConfig, DcerpcTx, UdpCall};
use crate::{AppState, Dir, ParseOutput, ReleaseEmpty, Transaction};

/// Bytes of the connectionless header.
pub const HDR_LEN: usize = 80;
/// `flags1`: more fragments follow (the call is fragmented).
pub const FLAG_FRAG: u8 = 0x04;
/// `flags1`: the last fragment.
pub const FLAG_LASTFRAG: u8 = 0x02;
/// The highest connectionless PDU type (CANCEL_ACK).
pub const MAX_PTYPE: u8 = 10;

/// The fields of a connectionless header the parser uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClHeader {
    pub version: u8,
    pub ptype: u8,
    pub flags1: u8,
    pub flags2: u8,
    pub drep: [u8; 3],
    /// In canonical (big-endian) order.
    pub activity: [u8; 16],
    pub seqnum: u32,
    pub opnum: u16,
    /// The body's length.
    pub len: u16,
}

impl ClHeader {
    pub fn little_endian(&self) -> bool {
        self.drep[0] & 0x10 != 0
    }
}

/// The header at the start of `b` (`None`: fewer than [`HDR_LEN`] bytes).
pub fn header(b: &[u8]) -> Option<ClHeader> {
    let h = b.get(..HDR_LEN)?;
    let le = h[4] & 0x10 != 0;
    let u16_at = |i: usize| {
        let x = [h[i], h[i + 1]];
        if le {
            u16::from_le_bytes(x)
        } else {
            u16::from_be_bytes(x)
        }
    };
    let u32_at = |i: usize| {
        let x = [h[i], h[i + 1], h[i + 2], h[i + 3]];
        if le {
            u32::from_le_bytes(x)
        } else {
            u32::from_be_bytes(x)
        }
    };
    let mut activity = [0u8; 16];
    activity.copy_from_slice(&h[40..56]);
    if le {
        activity[0..4].reverse();
        activity[4..6].reverse();
        activity[6..8].reverse();
    }
    Some(ClHeader {
        version: h[0],
        ptype: h[1],
        flags1: h[2],
        flags2: h[3],
        drep: [h[4], h[5], h[6]],
        activity,
        seqnum: u32_at(64),
        opnum: u16_at(68),
        len: u16_at(74),
    })
}

/// Suricata's probe of a datagram: a version 4 header of a known type, with flags2 and
/// a data representation DCE/RPC defines, whose body is all there.
pub fn probe(data: &[u8]) -> bool {
    header(data).is_some_and(|h| {
        h.version == 4
            && h.ptype <= MAX_PTYPE
            && h.flags2 & 0xfc == 0
            && h.drep[0] & 0xee == 0
            && h.drep[1] <= 3
            && data.len() - HDR_LEN >= usize::from(h.len)
    })
}

/// Calls ended by a parse error before one of their sides came that are remembered
/// once freed, at most.
pub const MAX_ENDED: usize = 64;

/// One DCE/RPC flow over UDP.
#[derive(Debug)]
pub struct DcerpcUdpState {
    cfg: DcerpcConfig,
    txs: VecDeque<DcerpcTx>,
    next_id: u64,
    /// A parse error was seen: every call counts as finished.
    ended: bool,
    /// Calls a parse error ended (logged and freed) with a side missing, and which of
    /// their sides came since: Suricata keeps such a call, and the missing side's
    /// fragments still go to it (making no new call).
    ended_calls: VecDeque<(UdpCall, [bool; 2])>,
}

impl DcerpcUdpState {
    pub fn new(cfg: DcerpcConfig) -> DcerpcUdpState {
        DcerpcUdpState {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            ended: false,
            ended_calls: VecDeque::new(),
        }
    }

    fn error(&mut self, out: &mut ParseOutput) {
        out.error = true;
        self.ended = true;
        for tx in &mut self.txs {
            tx.eof = [true; 2];
        }
    }

    /// Whether a fragment of `h` on `side` goes to a call already ended and freed
    /// (noting whether it is that side's last).
    fn goes_to_ended_call(&mut self, h: &ClHeader, side: usize, last: bool) -> bool {
        let Some((_, done)) = self
            .ended_calls
            .iter_mut()
            .find(|(c, done)| c.activity == h.activity && c.seqnum == h.seqnum && !done[side])
        else {
            return false;
        };
        done[side] |= last;
        true
    }

    /// The call a fragment of `h` belongs to (`side`: 0 for a REQUEST, 1 for a
    /// RESPONSE).
    fn call(&mut self, h: &ClHeader, side: usize) -> &mut DcerpcTx {
        let found = self.txs.iter().position(|t| {
            t.udp
                .as_ref()
                .is_some_and(|u| u.activity == h.activity && u.seqnum == h.seqnum)
                && !t.done[side]
        });
        let i = match found {
            Some(i) => i,
            None => {
                if self.txs.len() >= self.cfg.max_tx {
                    self.txs.pop_front();
                }
                self.txs.push_back(DcerpcTx {
                    id: self.next_id,
                    udp: Some(Box::new(UdpCall {
                        activity: h.activity,
                        seqnum: h.seqnum,
                    })),
                    little_endian: h.little_endian(),
                    eof: [self.ended; 2],
                    ..DcerpcTx::default()
                });
                self.next_id += 1;
                self.txs.len() - 1
            }
        };
        &mut self.txs[i]
    }
}

impl AppState for DcerpcUdpState {
    fn parse(&mut self, _dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let Some(h) = header(data) else {
            return self.error(out);
        };
        let body = data.get(HDR_LEN..HDR_LEN + usize::from(h.len));
        let (Some(body), 4, REQUEST | RESPONSE) = (body, h.version, h.ptype) else {
            return self.error(out);
        };
        // A side is the PDU type's (a request is the client's whichever way it flows),
        // as Suricata's.
        let side = usize::from(h.ptype == RESPONSE);
        let last = h.flags1 & FLAG_FRAG == 0 || h.flags1 & FLAG_LASTFRAG != 0;
        let live = self.txs.iter().any(|t| {
            t.udp
                .as_ref()
                .is_some_and(|u| u.activity == h.activity && u.seqnum == h.seqnum)
                && !t.done[side]
        });
        if !live && self.goes_to_ended_call(&h, side, last) {
            return;
        }
        let max_stub = self.cfg.max_stub;
        let tx = self.call(&h, side);
        if h.ptype == REQUEST {
            tx.req_type = Some(REQUEST);
            tx.opnum = h.opnum;
        } else {
            tx.resp_type = Some(RESPONSE);
        }
        // The fragments of a side, counted and joined as they come.
        tx.frags[side] = tx.frags[side].saturating_add(1);
        let room = max_stub.saturating_sub(tx.stub[side].len());
        tx.stub[side].extend_from_slice(&body[..body.len().min(room)]);
        if last {
            tx.done[side] = true;
        }
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
        while let Some(t) = self.txs.pop_front() {
            if t.id >= id {
                self.txs.push_front(t);
                break;
            }
            if let Some(u) = t.udp.filter(|_| !(t.done[0] && t.done[1])) {
                if self.ended_calls.len() == MAX_ENDED {
                    self.ended_calls.pop_front();
                }
                self.ended_calls.push_back((*u, t.done));
            }
        }
        self.txs.release_if_empty();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A connectionless PDU: version 4, `ptype`, `flags1`, little-endian drep, the
    /// epmapper interface, activity 11111111-2222-3333-4444-555555555555, sequence
    /// number `seq`, opnum 3, then `body`.
    pub fn pdu(ptype: u8, flags1: u8, seq: u32, body: &[u8]) -> Vec<u8> {
        let mut h = vec![4, ptype, flags1, 0, 0x10, 0, 0, 0];
        h.extend_from_slice(&[0; 16]);
        h.extend_from_slice(&[
            0x08, 0x83, 0xaf, 0xe1, 0x1f, 0x5d, 0xc9, 0x11, 0x91, 0xa4, 0x08, 0x00, 0x2b, 0x14,
            0xa0, 0xfa,
        ]);
        h.extend_from_slice(&[
            0x11, 0x11, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55, 0x55, 0x55,
            0x55, 0x55,
        ]);
        h.extend_from_slice(&0u32.to_le_bytes());
        h.extend_from_slice(&3u32.to_le_bytes());
        h.extend_from_slice(&seq.to_le_bytes());
        h.extend_from_slice(&3u16.to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(&0xffffu16.to_le_bytes());
        h.extend_from_slice(&(body.len() as u16).to_le_bytes());
        h.extend_from_slice(&0u16.to_le_bytes());
        h.extend_from_slice(&[0, 0]);
        h.extend_from_slice(body);
        h
    }

    #[test]
    fn calls_of_fragments_and_errors() {
        let mut s = DcerpcUdpState::new(DcerpcConfig::default());
        let mut out = ParseOutput::default();
        assert!(probe(&pdu(REQUEST, 0, 1, b"abcd")));
        assert!(!probe(&pdu(REQUEST, 0, 1, b"abcd")[..83]));
        let h = header(&pdu(REQUEST, 0, 7, b"")).unwrap();
        assert_eq!((h.seqnum, h.opnum), (7, 3));
        assert_eq!(h.activity[..4], [0x11; 4]);
        s.parse(Dir::ToServer, &pdu(REQUEST, FLAG_FRAG, 1, b"ab"), &mut out);
        s.parse(
            Dir::ToServer,
            &pdu(REQUEST, FLAG_FRAG | FLAG_LASTFRAG, 1, b"cd"),
            &mut out,
        );
        s.parse(Dir::ToClient, &pdu(RESPONSE, 0, 1, b"xyz"), &mut out);
        // Another number: a call of its own, which a PING ends.
        s.parse(Dir::ToServer, &pdu(REQUEST, 0, 2, b"q"), &mut out);
        assert!(!out.error);
        let t = &s.txs[0];
        assert_eq!((t.frags, t.done), ([2, 1], [true, true]));
        assert_eq!(t.stub, [b"abcd".to_vec(), b"xyz".to_vec()]);
        assert!(!s.txs[1].complete(Dir::ToClient));
        s.parse(Dir::ToServer, &pdu(1, 0, 2, b""), &mut out);
        assert!(out.error);
        assert!(s.txs[1].complete(Dir::ToClient));
        // After it, new calls are finished as soon as they start.
        s.parse(Dir::ToServer, &pdu(REQUEST, 0, 3, b"r"), &mut out);
        assert!(s.txs[2].complete(Dir::ToClient));
        assert_eq!(s.tx_count(), 3);
        // Logged and freed, call 3 still takes its response (once), and makes no call.
        s.free_below(3);
        s.parse(Dir::ToClient, &pdu(RESPONSE, 0, 3, b"s"), &mut out);
        assert_eq!(s.tx_count(), 0);
        s.parse(Dir::ToClient, &pdu(RESPONSE, 0, 3, b"s"), &mut out);
        assert_eq!(s.tx_count(), 1);
    }
}
