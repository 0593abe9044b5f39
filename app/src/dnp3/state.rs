//! One DNP3 flow: the link frames of each direction as they stream in (TCP) or come
//! in datagrams (UDP), their transport segments reassembled into application
//! messages, and the transactions, as Suricata makes them: one per message, a request
//! (to the outstation) or a response (solicited or unsolicited, from it).

use std::collections::VecDeque;

use super::detect::INFO_LEN;
use super::objects::{self, Limits, Object};
use super::parser::{self as p, LinkHeader};
use crate::{AppState, Dir, ParseOutput, ReleaseEmpty, Transaction};

/// Suricata's default `app-layer.protocols.dnp3.max-tx`: more requests than this
/// without a response between them is a flood (`dnp3.flooded`).
pub const DEFAULT_MAX_TX: usize = 32;
/// Suricata's default `max-points`: points decoded per message at most.
pub const DEFAULT_MAX_POINTS: usize = 16384;
/// Suricata's default `max-objects`: objects decoded per message at most.
pub const DEFAULT_MAX_OBJECTS: usize = 2048;
/// Bytes of one message reassembled from its transport segments at most; past it the
/// message ends there (`dnp3.too_long_reassembly`).
pub const MAX_REASSEMBLY: usize = 64 * 1024;
/// Transactions a flow keeps at most: past it the oldest unfinished is finished.
pub const MAX_TXS: usize = 1024;

/// The parser's settings (`app-layer.protocols.dnp3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dnp3Config {
    pub max_tx: usize,
    pub max_points: usize,
    pub max_objects: usize,
}

impl Default for Dnp3Config {
    fn default() -> Self {
        Dnp3Config {
            max_tx: DEFAULT_MAX_TX,
            max_points: DEFAULT_MAX_POINTS,
            max_objects: DEFAULT_MAX_OBJECTS,
        }
    }
}

/// What a transaction's message is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Request,
    Response,
    UnsolicitedResponse,
}

impl Kind {
    /// The EVE `type`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Response => "response",
            Kind::UnsolicitedResponse => "unsolicited_response",
        }
    }
}

/// One transaction: an application message.
#[derive(Debug, Clone)]
pub struct Dnp3Tx {
    pub id: u64,
    pub kind: Kind,
    /// The link header of its first frame.
    pub link: LinkHeader,
    /// The transport header of its latest segment.
    pub transport: u8,
    pub app_control: u8,
    pub function_code: u8,
    /// Responses: IIN1 << 8 | IIN2.
    pub iin: Option<u16>,
    /// The message reassembled (application header first), at most
    /// [`MAX_REASSEMBLY`] bytes.
    pub data: Vec<u8>,
    pub objects: Vec<Object>,
    /// Its last segment came (or it was given up on).
    pub done: bool,
    /// Every object was decoded.
    pub complete: bool,
    /// The keywords' summary (see [`super::detect::INFO_TS`]).
    pub info: [u8; INFO_LEN],
    /// Each object's group and variation, once done.
    pub obj_ids: Vec<[u8; 2]>,
}

impl Dnp3Tx {
    /// Nothing more joins it.
    pub fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        self.info[4] = 1;
        self.obj_ids = self
            .objects
            .iter()
            .map(|o| [o.group, o.variation])
            .collect();
    }

    /// The direction it travels in.
    pub fn dir(&self) -> Dir {
        match self.kind {
            Kind::Request => Dir::ToServer,
            _ => Dir::ToClient,
        }
    }
}

/// One flow's DNP3 state.
#[derive(Debug)]
pub struct Dnp3State {
    pub cfg: Dnp3Config,
    pub txs: VecDeque<Dnp3Tx>,
    next_id: u64,
    /// The transaction anomalies belong to (Suricata's current transaction): the
    /// newest, while it lives.
    current: Option<u64>,
    /// Requests since the last response.
    unreplied: usize,
    /// A frame cut by the end of the bytes so far, per direction.
    pending: [Vec<u8>; 2],
    /// Not parsed any further, per direction.
    lost: [bool; 2],
}

impl Dnp3State {
    pub fn new(cfg: Dnp3Config) -> Dnp3State {
        Dnp3State {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            current: None,
            unreplied: 0,
            pending: [Vec::new(), Vec::new()],
            lost: [false; 2],
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &Dnp3Tx> {
        self.txs.iter()
    }

    /// Raises `name` on the current transaction; as Suricata, an anomaly with no
    /// transaction to hold it is not raised.
    fn event(&self, name: &'static str, out: &mut ParseOutput) {
        if self.current.is_some() {
            out.anomaly(name);
        }
    }

    fn new_tx(&mut self, kind: Kind, link: LinkHeader, th: u8, app: [u8; 2]) -> usize {
        let id = self.next_id;
        self.next_id += 1;
        if kind == Kind::Request {
            self.unreplied += 1;
        } else {
            self.unreplied = 0;
        }
        // A message not finished while `max-tx` others began after it is given up on,
        // and the oldest is when there are too many.
        let max_tx = self.cfg.max_tx as u64;
        for t in self.txs.iter_mut().filter(|t| !t.done) {
            if t.id + max_tx <= id {
                t.finish();
            }
        }
        if self.txs.len() >= MAX_TXS
            && let Some(t) = self.txs.iter_mut().find(|t| !t.done)
        {
            t.finish();
        }
        self.txs.push_back(Dnp3Tx {
            id,
            kind,
            link,
            transport: th,
            app_control: app[0],
            function_code: app[1],
            iin: None,
            data: Vec::new(),
            objects: Vec::new(),
            done: false,
            complete: false,
            info: [app[1], 0, 0, 0, 0],
            obj_ids: Vec::new(),
        });
        self.current = Some(id);
        self.txs.len() - 1
    }

    /// The unfinished message of `kind` from `link`'s addresses that the segment with
    /// transport header `th` continues.
    fn continued(&self, request: bool, link: &LinkHeader, th: u8) -> Option<usize> {
        self.txs.iter().position(|t| {
            (t.kind == Kind::Request) == request
                && !t.done
                && t.link.src == link.src
                && t.link.dst == link.dst
                && ((t.transport & p::TH_SEQ) + 1) % 64 == th & p::TH_SEQ
        })
    }

    /// A user-data frame whose CRCs are good.
    fn user_data(&mut self, dir: Dir, frame: &[u8], out: &mut ParseOutput) {
        let link = LinkHeader::read(frame);
        let body = &frame[p::LINK_HEADER_LEN..];
        let th = body[0];
        let request = dir == Dir::ToServer;
        let i = if th & p::TH_FIR == 0 {
            match self.continued(request, &link, th) {
                Some(i) => {
                    self.txs[i].transport = th;
                    i
                }
                None => return,
            }
        } else {
            // The application header is in the first block (the frame is long enough
            // for it: checked by the caller).
            let app = [body[1], body[2]];
            if request {
                // Confirmations are not transactions.
                if app[1] == p::FC_CONFIRM {
                    return;
                }
                let i = self.new_tx(Kind::Request, link, th, app);
                if self.unreplied > self.cfg.max_tx {
                    self.event("dnp3.flooded", out);
                }
                i
            } else {
                let kind = if app[1] == p::FC_UNSOLICITED_RESPONSE {
                    Kind::UnsolicitedResponse
                } else {
                    Kind::Response
                };
                let i = self.new_tx(kind, link, th, app);
                let tx = &mut self.txs[i];
                tx.iin = Some(u16::from_be_bytes([body[3], body[4]]));
                tx.info[1..4].copy_from_slice(&[body[3], body[4], 1]);
                i
            }
        };
        let limits = Limits {
            max_points: self.cfg.max_points,
            max_objects: self.cfg.max_objects,
        };
        let tx = &mut self.txs[i];
        let before = tx.data.len();
        if !p::append_user_data(body, &mut tx.data) {
            tx.finish();
            self.event("dnp3.malformed", out);
            return;
        }
        if tx.data.len() > MAX_REASSEMBLY {
            tx.data.truncate(before);
            tx.finish();
            self.event("dnp3.too_long_reassembly", out);
            return;
        }
        if th & p::TH_FIN == 0 {
            return;
        }
        let header = if request {
            p::REQUEST_HEADER_LEN
        } else {
            p::RESPONSE_HEADER_LEN
        };
        let data = tx.data.get(header..).unwrap_or_default();
        let r = objects::decode(data, limits, &mut tx.objects);
        tx.complete = r.is_ok();
        tx.finish();
        if let Err(stop) = r
            && let Some(e) = stop.event()
        {
            self.event(e, out);
        }
    }

    /// Parses the frames at the front of `data`: the bytes used (the rest is a frame
    /// cut short), or `None` when the bytes are not DNP3 (any more).
    fn frames(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) -> Option<usize> {
        let mut at = 0;
        while data.len() - at >= p::LINK_HEADER_LEN {
            let f = &data[at..];
            if !p::start_ok(f) {
                return None;
            }
            if !p::crc_ok(&f[..p::LINK_HEADER_LEN]) {
                self.event("dnp3.bad_link_crc", out);
                return None;
            }
            let link = LinkHeader::read(f);
            let Some(len) = p::frame_len(link.len) else {
                self.event("dnp3.len_too_small", out);
                return None;
            };
            if f.len() < len {
                break;
            }
            at += len;
            if !link.is_user_data() {
                continue;
            }
            // Room for the transport and application headers (and the internal
            // indications of a response).
            let need = p::LINK_COUNTED
                + 1
                + if dir == Dir::ToServer {
                    p::REQUEST_HEADER_LEN
                } else {
                    p::RESPONSE_HEADER_LEN
                };
            if usize::from(link.len) < need {
                self.event("dnp3.len_too_small", out);
                if dir == Dir::ToServer {
                    continue;
                }
                return None;
            }
            if !p::blocks_ok(&f[p::LINK_HEADER_LEN..len]) {
                self.event("dnp3.bad_transport_crc", out);
                continue;
            }
            self.user_data(dir, &f[..len], out);
        }
        Some(at)
    }

    /// The direction is not DNP3 (any more): nothing more is parsed of the flow.
    fn fail(&mut self, out: &mut ParseOutput) {
        out.failed = true;
        self.lost = [true; 2];
        self.pending = [Vec::new(), Vec::new()];
    }
}

impl AppState for Dnp3State {
    fn parse(&mut self, dir: Dir, mut data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.lost[d] || data.is_empty() {
            return;
        }
        // A finished transaction has been inspected and logged since the last call
        // (Suricata frees it then): later anomalies have no transaction to go to.
        if self
            .txs
            .back()
            .is_some_and(|t| t.done && Some(t.id) == self.current)
        {
            self.current = None;
        }
        if !self.pending[d].is_empty() {
            // Complete the pending frame with as few bytes as it needs: its header
            // first, then the rest.
            let mut buf = std::mem::take(&mut self.pending[d]);
            loop {
                let need = if buf.len() < p::LINK_HEADER_LEN {
                    p::LINK_HEADER_LEN
                } else {
                    p::frame_len(buf[2]).unwrap_or(p::LINK_HEADER_LEN)
                };
                let take = need.saturating_sub(buf.len()).min(data.len());
                buf.extend_from_slice(&data[..take]);
                data = &data[take..];
                if buf.len() < need {
                    self.pending[d] = buf;
                    return;
                }
                match self.frames(dir, &buf, out) {
                    None => return self.fail(out),
                    Some(used) if used == buf.len() => break,
                    // The header was complete, the frame is longer: take more.
                    Some(_) => continue,
                }
            }
            buf.clear();
            self.pending[d] = buf;
        } else if dir == Dir::ToClient && p::contains_banner(data) {
            // Some outstations greet with a banner: not a frame.
            return;
        }
        match self.frames(dir, data, out) {
            None => self.fail(out),
            Some(used) => {
                // At most one frame's bytes are kept.
                self.pending[d].extend_from_slice(&data[used..]);
                debug_assert!(self.pending[d].len() < p::MAX_FRAME_LEN);
            }
        }
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        // Frame boundaries are lost: the direction is not parsed any further.
        let d = dir.index();
        self.lost[d] = true;
        self.pending[d] = Vec::new();
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        // A message still waiting for segments stays unfinished: as Suricata, it is
        // not logged on its own.
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
        if self.current.is_some_and(|c| c < id) {
            self.current = None;
        }
        self.txs.release_if_empty();
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::parser::tests::frame;
    use super::*;

    /// A read of class 1-3 data (60.2-60.4, all), from master 1 to outstation 10.
    pub fn read_request(seq: u8) -> Vec<u8> {
        frame(
            0xc4,
            10,
            1,
            &[0xc0 | seq, 0xc0 | seq, 0x01, 60, 2, 6, 60, 3, 6, 60, 4, 6],
        )
    }

    /// A response with IIN device_restart and one 30.1 point (value 258, online).
    pub fn read_response(seq: u8) -> Vec<u8> {
        frame(
            0x44,
            1,
            10,
            &[
                0xc0 | seq,
                0xc0 | seq,
                0x81,
                0x80,
                0x00,
                30,
                1,
                0x00,
                4,
                4,
                0x01,
                0x02,
                0x01,
                0,
                0,
            ],
        )
    }

    fn parse_all(s: &mut Dnp3State, dir: Dir, b: &[u8], out: &mut ParseOutput) {
        s.parse(dir, b, out);
    }

    #[test]
    fn request_and_response_byte_by_byte_and_whole() {
        for whole in [true, false] {
            let mut s = Dnp3State::new(Dnp3Config::default());
            let mut out = ParseOutput::default();
            let (req, resp) = (read_request(0), read_response(0));
            if whole {
                parse_all(&mut s, Dir::ToServer, &req, &mut out);
                parse_all(&mut s, Dir::ToClient, &resp, &mut out);
            } else {
                for b in &req {
                    s.parse(Dir::ToServer, std::slice::from_ref(b), &mut out);
                }
                for b in &resp {
                    s.parse(Dir::ToClient, std::slice::from_ref(b), &mut out);
                }
            }
            assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
            assert_eq!(s.txs.len(), 2);
            let (a, b) = (&s.txs[0], &s.txs[1]);
            assert_eq!(
                (a.kind, a.function_code, a.objects.len()),
                (Kind::Request, 1, 3)
            );
            assert!(a.done && a.complete);
            assert_eq!((b.kind, b.iin), (Kind::Response, Some(0x8000)));
            assert_eq!(b.objects[0].points, [(0, 4)]);
            assert_eq!(b.objects[0].values[8], objects::Value::I(258));
        }
    }

    #[test]
    fn segments_are_reassembled_by_transport_sequence() {
        // One response in two segments: FIR (seq 5) then FIN (seq 6), and a stray
        // FIN-only segment of another sequence that is dropped.
        let mut s = Dnp3State::new(Dnp3Config::default());
        let mut out = ParseOutput::default();
        let first = frame(0x44, 1, 10, &[0x40 | 5, 0xc0, 0x81, 0, 0, 30, 1, 0x00]);
        let stray = frame(0x44, 1, 10, &[0x80 | 9, 4, 4, 0, 0]);
        let last = frame(0x44, 1, 10, &[0x80 | 6, 4, 4, 0x01, 7, 0, 0, 0]);
        for f in [&first, &stray, &last] {
            s.parse(Dir::ToClient, f, &mut out);
        }
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        assert_eq!(s.txs.len(), 1);
        assert!(s.txs[0].complete);
        assert_eq!(s.txs[0].objects[0].values[8], objects::Value::I(7));
    }

    #[test]
    fn crc_failures_and_floods() {
        let mut s = Dnp3State::new(Dnp3Config {
            max_tx: 2,
            ..Dnp3Config::default()
        });
        let mut out = ParseOutput::default();
        for seq in 0..3 {
            s.parse(Dir::ToServer, &read_request(seq), &mut out);
        }
        assert_eq!(out.anomalies, ["dnp3.flooded"]);
        // A response ends the flood.
        s.parse(Dir::ToClient, &read_response(0), &mut out);
        s.parse(Dir::ToServer, &read_request(3), &mut out);
        assert_eq!(out.anomalies, ["dnp3.flooded"]);
        // A bad CRC in a data block: the frame is skipped; raised on the transaction
        // made in the same call (the one before is finished and gone, as in Suricata).
        let mut bad = read_request(5);
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &bad, &mut out);
        assert!(out.anomalies.is_empty());
        let mut two = read_request(4);
        two.extend_from_slice(&bad);
        s.parse(Dir::ToServer, &two, &mut out);
        assert_eq!(out.anomalies, ["dnp3.bad_transport_crc"]);
        // A bad header CRC: the flow is given up (after a third request in a row: a
        // flood again).
        let mut two = read_request(6);
        bad[8] ^= 0xff;
        two.extend_from_slice(&bad);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &two, &mut out);
        assert_eq!(out.anomalies, ["dnp3.flooded", "dnp3.bad_link_crc"]);
        assert!(out.failed);
        let n = s.tx_count();
        s.parse(Dir::ToServer, &read_request(7), &mut out);
        assert_eq!(s.tx_count(), n);
    }

    #[test]
    fn no_transaction_no_anomaly_and_non_dnp3_fails() {
        let mut s = Dnp3State::new(Dnp3Config::default());
        let mut out = ParseOutput::default();
        let mut bad = read_request(0);
        bad[8] ^= 0xff;
        s.parse(Dir::ToServer, &bad, &mut out);
        assert!(out.anomalies.is_empty());
        assert!(out.failed);
        let mut s = Dnp3State::new(Dnp3Config::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"GET / HTTP/1.1\r\n", &mut out);
        assert!(out.failed);
        let mut s = Dnp3State::new(Dnp3Config::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"DNP3 outstation", &mut out);
        assert!(!out.failed);
    }

    #[test]
    fn long_messages_are_bounded() {
        let mut s = Dnp3State::new(Dnp3Config::default());
        let mut out = ParseOutput::default();
        let mut user = vec![0x40, 0xc0, 0x02];
        user.extend(std::iter::repeat_n(0u8, 246));
        s.parse(Dir::ToServer, &frame(0xc4, 10, 1, &user), &mut out);
        for i in 1..400u32 {
            let mut u = vec![(i % 64) as u8];
            u.extend(std::iter::repeat_n(0u8, 248));
            s.parse(Dir::ToServer, &frame(0xc4, 10, 1, &u), &mut out);
        }
        assert_eq!(out.anomalies, ["dnp3.too_long_reassembly"]);
        assert!(s.txs[0].data.len() <= MAX_REASSEMBLY);
        assert!(s.txs[0].done);
    }
}
