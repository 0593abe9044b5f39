//! One EtherNet/IP flow (TCP: a stream of PDUs; UDP: one PDU per datagram) and its
//! transactions, as Suricata makes them: a request starts a transaction; a reply joins
//! the oldest unanswered request it answers (same command and session, same CIP
//! sequence number), and every unanswered request it passes on the way is done; a
//! reply that answers none is a transaction of its own. At `max-tx` live
//! transactions, every one is done and the PDU is dropped
//! (`enip.too_many_transactions`).

use std::collections::VecDeque;

use super::parser::{self, Error, HEADER_LEN, Pdu};
use crate::{AppState, Dir, ParseOutput, Transaction, Transport};

/// Suricata's default `max-tx`.
pub const DEFAULT_MAX_TX: usize = 1024;
/// Most bytes of an incomplete PDU buffered per direction (the longest PDU).
pub const MAX_PENDING: usize = HEADER_LEN + u16::MAX as usize;

/// One PDU: its bytes (for the frames and buffers) and its parse.
#[derive(Debug)]
pub struct Msg {
    pub bytes: Vec<u8>,
    pub pdu: Pdu,
    /// TCP: the stream offset of its first byte (`None` over UDP).
    pub offset: Option<u64>,
    /// The id of its first frame (`hdr`; then `data`, `pdu`, each item's `enip.item`,
    /// each `cip`).
    pub frame_id: u64,
}

#[derive(Debug)]
pub struct EnipTx {
    pub id: u64,
    pub request: Option<Msg>,
    pub response: Option<Msg>,
    /// Passed over by a later reply, or flooded: complete without its other half.
    pub done: bool,
}

impl EnipTx {
    pub fn msg(&self, dir: Dir) -> Option<&Msg> {
        match dir {
            Dir::ToServer => self.request.as_ref(),
            Dir::ToClient => self.response.as_ref(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnipConfig {
    pub max_tx: usize,
}

impl Default for EnipConfig {
    fn default() -> Self {
        EnipConfig {
            max_tx: DEFAULT_MAX_TX,
        }
    }
}

#[derive(Debug)]
pub struct EnipState {
    cfg: EnipConfig,
    transport: Transport,
    txs: VecDeque<EnipTx>,
    next_id: u64,
    /// TCP: the bytes of an incomplete PDU per direction.
    pending: [Vec<u8>; 2],
    /// TCP: a gap; data is skipped until a segment starts with a valid header.
    gap: [bool; 2],
    /// TCP: per direction, the stream offset of the next byte not parsed yet (the
    /// first of `pending` when it holds some).
    offset: [u64; 2],
    /// Per direction, the id of the next frame (Suricata numbers from 1).
    next_frame: [u64; 2],
}

impl EnipState {
    pub fn new(cfg: EnipConfig, transport: Transport) -> EnipState {
        EnipState {
            cfg,
            transport,
            txs: VecDeque::new(),
            next_id: 0,
            pending: [Vec::new(), Vec::new()],
            gap: [false; 2],
            offset: [0; 2],
            next_frame: [1; 2],
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &EnipTx> {
        self.txs.iter()
    }

    /// One whole PDU of `dir`.
    fn pdu(
        &mut self,
        dir: Dir,
        bytes: &[u8],
        pdu: Pdu,
        offset: Option<u64>,
        out: &mut ParseOutput,
    ) {
        if pdu.invalid {
            out.anomaly("enip.invalid_pdu");
        }
        let msg = Msg {
            bytes: bytes.to_vec(),
            pdu,
            offset,
            frame_id: self.next_frame[dir.index()],
        };
        self.next_frame[dir.index()] += super::detect::frame_count(&msg);
        if dir == Dir::ToClient {
            for t in self.txs.iter_mut() {
                if t.response.is_some() {
                    continue;
                }
                let Some(req) = &t.request else { continue };
                t.done = true;
                if parser::answers(&req.pdu, &msg.pdu) {
                    t.response = Some(msg);
                    return;
                }
            }
        }
        if self.txs.len() >= self.cfg.max_tx {
            for t in self.txs.iter_mut() {
                t.done = true;
            }
            out.anomaly("enip.too_many_transactions");
            return;
        }
        let (request, response) = match dir {
            Dir::ToServer => (Some(msg), None),
            Dir::ToClient => (None, Some(msg)),
        };
        self.txs.push_back(EnipTx {
            id: self.next_id,
            request,
            response,
            done: false,
        });
        self.next_id += 1;
    }

    /// The PDUs at the start of `data`: the bytes used (the rest is an incomplete PDU).
    fn pdus(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) -> usize {
        let mut at = 0;
        while at < data.len() {
            match parser::parse(&data[at..]) {
                Ok((pdu, used)) => {
                    let offset = self.offset[dir.index()] + at as u64;
                    self.pdu(dir, &data[at..at + used], pdu, Some(offset), out);
                    at += used;
                }
                Err(_) => break,
            }
        }
        self.offset[dir.index()] += at as u64;
        at
    }

    fn stream(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.gap[d] {
            // Resynchronise on a segment that starts with a header.
            if !parser::probe(data) {
                self.offset[d] += data.len() as u64;
                return;
            }
            self.gap[d] = false;
        }
        if self.pending[d].is_empty() {
            let n = self.pdus(dir, data, out);
            self.pending[d].extend_from_slice(&data[n..]);
        } else {
            let mut buf = std::mem::take(&mut self.pending[d]);
            let mut rest = data;
            // Complete the buffered PDU: its header, then the length it gives.
            loop {
                let want = parser::pdu_len(&buf).map_or(HEADER_LEN, |l| l.max(HEADER_LEN));
                if buf.len() >= want {
                    break;
                }
                if rest.is_empty() {
                    self.pending[d] = buf;
                    return;
                }
                let fill = (want - buf.len()).min(rest.len());
                buf.extend_from_slice(&rest[..fill]);
                rest = &rest[fill..];
            }
            let used = self.pdus(dir, &buf, out);
            // What of it did not parse is dropped.
            self.offset[d] += (buf.len() - used) as u64;
            buf.clear();
            self.pending[d] = buf;
            // Then the rest of the segment, without a copy when it holds whole PDUs.
            let n = self.pdus(dir, rest, out);
            self.pending[d].extend_from_slice(&rest[n..]);
        }
        debug_assert!(self.pending[d].len() <= MAX_PENDING);
    }
}

impl AppState for EnipState {
    /// Id 1 is a TCP flow's stream frame's when a rule uses it.
    fn set_frames(&mut self, used: &[crate::BufferId]) {
        if self.transport == Transport::Tcp {
            self.next_frame = [crate::stream_frame::first_frame_id(crate::AppProto::Enip, used); 2];
        }
    }

    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        match self.transport {
            Transport::Udp => match parser::parse(data) {
                Ok((pdu, used)) => self.pdu(dir, &data[..used], pdu, None, out),
                // Suricata's parser errors on a short datagram.
                Err(Error::Incomplete | Error::Invalid) => out.failed = true,
            },
            Transport::Tcp => self.stream(dir, data, out),
        }
    }

    fn gap(&mut self, dir: Dir, len: u64, _out: &mut ParseOutput) {
        let d = dir.index();
        self.gap[d] = true;
        self.offset[d] += self.pending[d].len() as u64 + len;
        self.pending[d] = Vec::new();
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::enip::parser::tests::{
        GET_ATTR_LIST, LIST_IDENTITY_REQ, list_identity_reply, send_rr_data,
    };

    fn tcp() -> EnipState {
        EnipState::new(EnipConfig::default(), Transport::Tcp)
    }

    #[test]
    fn requests_and_replies_pair() {
        let mut s = tcp();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, LIST_IDENTITY_REQ, &mut out);
        s.parse(Dir::ToServer, &send_rr_data(GET_ATTR_LIST), &mut out);
        s.parse(Dir::ToClient, &list_identity_reply(), &mut out);
        assert!(out.anomalies.is_empty());
        assert_eq!(s.tx_count(), 2);
        assert!(s.txs[0].response.is_some() && s.txs[0].done);
        assert!(s.txs[1].response.is_none() && !s.txs[1].done);
    }

    #[test]
    fn split_and_joined_pdus() {
        let mut stream = send_rr_data(GET_ATTR_LIST);
        stream.extend_from_slice(LIST_IDENTITY_REQ);
        stream.extend_from_slice(&send_rr_data(GET_ATTR_LIST));
        for step in [1, 5, 24, 30, stream.len()] {
            let mut s = tcp();
            let mut out = ParseOutput::default();
            for c in stream.chunks(step) {
                s.parse(Dir::ToServer, c, &mut out);
            }
            assert!(out.anomalies.is_empty());
            assert_eq!(s.tx_count(), 3, "{step}");
            assert!(s.pending[0].is_empty());
            assert_eq!(
                s.txs[2].request.as_ref().unwrap().bytes,
                send_rr_data(GET_ATTR_LIST)
            );
        }
    }

    #[test]
    fn gaps_resynchronise_on_a_header() {
        let mut s = tcp();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &LIST_IDENTITY_REQ[..10], &mut out);
        s.gap(Dir::ToServer, 100, &mut out);
        s.parse(Dir::ToServer, b"garbage garbage garbage garbage", &mut out);
        s.parse(Dir::ToServer, LIST_IDENTITY_REQ, &mut out);
        assert_eq!(s.tx_count(), 1);
    }

    #[test]
    fn floods_and_bad_pdus() {
        let mut s = EnipState::new(EnipConfig { max_tx: 2 }, Transport::Udp);
        let mut out = ParseOutput::default();
        for _ in 0..3 {
            s.parse(Dir::ToServer, LIST_IDENTITY_REQ, &mut out);
        }
        assert_eq!(out.anomalies, ["enip.too_many_transactions"]);
        assert_eq!(s.tx_count(), 2);
        assert!(s.txs.iter().all(|t| t.done));
        let mut out = ParseOutput::default();
        let mut bad = send_rr_data(GET_ATTR_LIST);
        bad.truncate(bad.len() - 3);
        bad[2] -= 3;
        s.free_below(2);
        s.parse(Dir::ToServer, &bad, &mut out);
        assert_eq!(out.anomalies, ["enip.invalid_pdu"]);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &LIST_IDENTITY_REQ[..20], &mut out);
        assert!(out.failed);
    }
}
