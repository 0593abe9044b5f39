//! One MQTT connection: the packets of each direction as they stream in, and the
//! transactions they make, as Suricata's MQTT parser makes them: a CONNECT and its
//! CONNACK, a PUBLISH of QoS 1 or 2 and its PUBACK / PUBREC, PUBREL, PUBCOMP (matched
//! by packet id), a SUBSCRIBE and its SUBACK, an UNSUBSCRIBE and its UNSUBACK; every
//! other packet is a transaction of its own.

use std::collections::VecDeque;

use super::parser::{self, Error, Message, Op};
use crate::{AppState, Dir, ParseOutput, ReleaseEmpty, Transaction};

/// Suricata's default `app-layer.protocols.mqtt.max-msg-length`: packets longer than
/// this are skipped, logged as truncated.
pub const DEFAULT_MAX_MSG_LEN: usize = 1 << 20;
/// Suricata 8's default `app-layer.protocols.mqtt.max-tx`: past it, the oldest
/// unfinished transaction is finished (`mqtt.too_many_transactions`).
pub const DEFAULT_MAX_TX: usize = 4096;
/// Suricata 8's default `app-layer.protocols.mqtt.max-messages`: the packets a
/// transaction holds at most before a PUBREC or PUBREL that would join it is dropped
/// (`mqtt.too_many_messages`); the reply that completes it still joins.
pub const DEFAULT_MAX_MESSAGES: usize = 1024;
/// The packet id a CONNECT waits for its CONNACK under (no real packet id is this).
const CONNECT_PKT_ID: u32 = u32::MAX;

/// The parser's settings (`app-layer.protocols.mqtt`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MqttConfig {
    pub max_msg_len: usize,
    pub max_tx: usize,
    pub max_messages: usize,
}

impl Default for MqttConfig {
    fn default() -> Self {
        MqttConfig {
            max_msg_len: DEFAULT_MAX_MSG_LEN,
            max_tx: DEFAULT_MAX_TX,
            max_messages: DEFAULT_MAX_MESSAGES,
        }
    }
}

/// Bytes of a packet's info buffer: type, QoS, dup | retain << 1.
pub const INFO_LEN: usize = 3;
/// Bytes of a transaction's summary ([`Meta`]).
pub const META_LEN: usize = 8;

/// A transaction's summary, which the keywords read (they see transactions through
/// their buffers only).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Meta(pub [u8; META_LEN]);

impl Meta {
    pub const VERSION: usize = 0;
    pub const COUNT: usize = 1;
    pub const HAS_REASON: usize = 2;
    pub const REASON: usize = 3;
    pub const HAS_CONNECT: usize = 4;
    pub const CONNECT_FLAGS: usize = 5;
    pub const HAS_CONNACK: usize = 6;
    pub const SESSION_PRESENT: usize = 7;
}

/// The reason code of a packet, if it has one: the CONNACK return code, the reason
/// code of PUBACK/PUBREC/PUBREL/PUBCOMP, AUTH and DISCONNECT, the first of a SUBACK's
/// or UNSUBACK's codes.
pub fn reason_code(m: &Message) -> Option<u8> {
    match &m.op {
        Op::Connack { return_code, .. } => Some(*return_code),
        Op::MsgIdOnly { reason_code, .. } | Op::Disconnect { reason_code, .. } => *reason_code,
        Op::Auth { reason_code, .. } => Some(*reason_code),
        Op::Suback { codes, .. } | Op::Unsuback { codes, .. } => codes.first().copied(),
        _ => None,
    }
}

/// One transaction: the packets that belong together, in order.
#[derive(Debug, Clone)]
pub struct MqttTx {
    pub id: u64,
    /// The direction of its first packet: it is inspected in that direction only.
    pub dir: Dir,
    pub msgs: Vec<Message>,
    /// Nothing more will join it.
    pub complete: bool,
    /// Its direction ended while it waited for a reply: inspected as it is.
    pub ended: bool,
    /// The packet id (or the CONNECT's) the transaction waits for a reply under.
    pkt_id: Option<u32>,
    /// The connection's protocol version when the transaction was made.
    pub protocol_version: u8,
    /// Per packet: type, QoS, flags (the `INFO` buffers).
    pub info: Vec<[u8; INFO_LEN]>,
    pub meta: Meta,
}

impl MqttTx {
    fn new(id: u64, dir: Dir, protocol_version: u8) -> MqttTx {
        let mut meta = Meta::default();
        meta.0[Meta::VERSION] = protocol_version;
        MqttTx {
            id,
            dir,
            msgs: Vec::new(),
            complete: false,
            ended: false,
            pkt_id: None,
            protocol_version,
            info: Vec::new(),
            meta,
        }
    }

    /// Adds a packet (callers keep to `max-messages`).
    fn push(&mut self, m: Message) {
        let n = self.msgs.len();
        let h = m.header;
        self.info.push([
            h.message_type,
            h.qos,
            u8::from(h.dup) | u8::from(h.retain) << 1,
        ]);
        let meta = &mut self.meta.0;
        meta[Meta::COUNT] = (n + 1).min(usize::from(u8::MAX)) as u8;
        if meta[Meta::HAS_REASON] == 0
            && let Some(r) = reason_code(&m)
        {
            meta[Meta::HAS_REASON] = 1;
            meta[Meta::REASON] = r;
        }
        match &m.op {
            Op::Connect(c) if meta[Meta::HAS_CONNECT] == 0 => {
                meta[Meta::HAS_CONNECT] = 1;
                meta[Meta::CONNECT_FLAGS] = c.flags;
            }
            Op::Connack {
                session_present, ..
            } if meta[Meta::HAS_CONNACK] == 0 => {
                meta[Meta::HAS_CONNACK] = 1;
                meta[Meta::SESSION_PRESENT] = u8::from(*session_present);
            }
            _ => {}
        }
        self.msgs.push(m);
    }

    /// Whether the transaction can be inspected: complete, or its direction ended.
    pub fn ready(&self) -> bool {
        self.complete || self.ended
    }
}

/// One connection's MQTT state.
#[derive(Debug)]
pub struct MqttState {
    cfg: MqttConfig,
    txs: VecDeque<MqttTx>,
    next_id: u64,
    /// The version the CONNECT asked for (0 before one was seen: v3 layouts).
    pub protocol_version: u8,
    /// A CONNACK answered a CONNECT.
    connected: bool,
    /// Bytes of a skipped (too long) packet still to skip, per direction.
    skip: [usize; 2],
    /// Bytes of an incomplete packet, per direction.
    pending: [Vec<u8>; 2],
    /// A malformed packet or a gap: nothing more is parsed of the direction.
    lost: [bool; 2],
    /// Transactions below this index are all complete (where the `max-tx` search for
    /// the oldest unfinished one starts).
    completed_below: usize,
    /// Per direction: the stream offset of the next byte not parsed yet, and the id
    /// of the next frame (Suricata numbers each direction's frames from 1).
    offset: [u64; 2],
    next_frame: [u64; 2],
    /// A rule inspects MQTT frames: the packets' bytes are kept
    /// ([`AppState::set_frames`]).
    keep_frames: bool,
}

impl MqttState {
    pub fn new(cfg: MqttConfig) -> MqttState {
        MqttState {
            cfg,
            txs: VecDeque::new(),
            next_id: 0,
            protocol_version: 0,
            connected: false,
            skip: [0; 2],
            pending: [Vec::new(), Vec::new()],
            lost: [false; 2],
            completed_below: 0,
            offset: [0; 2],
            next_frame: [1; 2],
            keep_frames: false,
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &MqttTx> {
        self.txs.iter()
    }

    fn new_tx(&mut self, dir: Dir, msg: Option<Message>, out: &mut ParseOutput) -> MqttTx {
        if self.txs.len() > self.cfg.max_tx {
            let start = self.completed_below.min(self.txs.len());
            let mut index = start;
            for tx in self.txs.range_mut(start..) {
                index += 1;
                if !tx.complete {
                    tx.complete = true;
                    out.anomaly("mqtt.too_many_transactions");
                    break;
                }
            }
            self.completed_below = index;
        }
        // A message that makes a transaction lets stream rules see it, as Suricata's
        // parser asks (a reply joining its request's transaction does not).
        out.trigger_raw(dir);
        let mut tx = MqttTx::new(self.next_id, dir, self.protocol_version);
        if let Some(m) = msg {
            tx.push(m);
        }
        self.next_id += 1;
        tx
    }

    /// The oldest unfinished transaction waiting under packet id `id`.
    fn waiting(&mut self, id: u32) -> Option<&mut MqttTx> {
        let start = self.completed_below.min(self.txs.len());
        self.txs
            .range_mut(start..)
            .find(|t| !t.complete && t.pkt_id == Some(id))
    }

    /// A transaction of its own for a packet, complete.
    fn alone(&mut self, dir: Dir, msg: Message, out: &mut ParseOutput) {
        let mut tx = self.new_tx(dir, Some(msg), out);
        tx.complete = true;
        self.txs.push_back(tx);
    }

    /// A reply that completes (or, `finish` false, joins) the transaction waiting
    /// under `id`; without one, a transaction of its own with `missing`.
    fn reply(
        &mut self,
        dir: Dir,
        id: u32,
        msg: Message,
        finish: bool,
        missing: &'static str,
        out: &mut ParseOutput,
    ) {
        let max = self.cfg.max_messages;
        if let Some(tx) = self.waiting(id) {
            if finish {
                tx.push(msg);
                tx.complete = true;
                tx.pkt_id = None;
            } else if tx.msgs.len() < max {
                tx.push(msg);
            } else {
                // Suricata's bound on a PUBREC/PUBREL loop: the packet is dropped.
                out.anomaly("mqtt.too_many_messages");
            }
            return;
        }
        out.anomaly(missing);
        if !self.connected {
            out.anomaly("mqtt.unintroduced_message");
        }
        self.alone(dir, msg, out);
    }

    /// A request that waits for a reply under its packet id at QoS 1 and 2.
    fn request(&mut self, dir: Dir, msg: Message, id: Option<u16>, out: &mut ParseOutput) {
        let qos = msg.header.qos;
        let mut tx = self.new_tx(dir, Some(msg), out);
        match qos {
            0 => tx.complete = true,
            1 | 2 => match id {
                Some(id) => tx.pkt_id = Some(u32::from(id)),
                None => out.anomaly("mqtt.missing_msg_id"),
            },
            _ => out.anomaly("mqtt.invalid_qos_level"),
        }
        if !self.connected {
            out.anomaly("mqtt.unintroduced_message");
        }
        self.txs.push_back(tx);
    }

    fn handle(&mut self, dir: Dir, msg: Message, out: &mut ParseOutput) {
        if msg.over_bounds {
            out.anomaly("mqtt.malformed_traffic");
        }
        match &msg.op {
            Op::Connect(c) => {
                self.protocol_version = c.protocol_version;
                let mut tx = self.new_tx(dir, Some(msg), out);
                tx.pkt_id = Some(CONNECT_PKT_ID);
                if self.connected {
                    out.anomaly("mqtt.double_connect");
                }
                self.txs.push_back(tx);
            }
            Op::Publish { message_id, .. } => {
                let id = *message_id;
                self.request(dir, msg, id, out);
            }
            Op::Subscribe { message_id, .. } | Op::Unsubscribe { message_id, .. } => {
                let id = *message_id;
                self.request(dir, msg, Some(id), out);
            }
            Op::Connack { .. } => {
                if let Some(tx) = self.waiting(CONNECT_PKT_ID) {
                    tx.push(msg);
                    tx.complete = true;
                    tx.pkt_id = None;
                    self.connected = true;
                } else {
                    out.anomaly("mqtt.missing_connect");
                    self.alone(dir, msg, out);
                }
            }
            Op::MsgIdOnly { message_id, .. } => {
                let id = u32::from(*message_id);
                // PUBREC and PUBREL are halfway through a QoS 2 exchange.
                let finish = matches!(msg.header.message_type, parser::PUBACK | parser::PUBCOMP);
                self.reply(dir, id, msg, finish, "mqtt.missing_publish", out);
            }
            Op::Suback { message_id, .. } => {
                let id = u32::from(*message_id);
                self.reply(dir, id, msg, true, "mqtt.missing_subscribe", out);
            }
            Op::Unsuback { message_id, .. } => {
                let id = u32::from(*message_id);
                self.reply(dir, id, msg, true, "mqtt.missing_unsubscribe", out);
            }
            Op::Unassigned => {
                out.anomaly("mqtt.unassigned_msg_type");
                self.alone(dir, msg, out);
            }
            Op::Truncated { .. } => self.alone(dir, msg, out),
            Op::Auth { .. } | Op::Disconnect { .. } | Op::PingReq | Op::PingResp => {
                if !self.connected {
                    out.anomaly("mqtt.unintroduced_message");
                }
                self.alone(dir, msg, out);
            }
        }
    }

    /// A malformed packet: a transaction of its own with no packet, and nothing more
    /// parsed in the direction (Suricata's parser errors out).
    fn malformed(&mut self, dir: Dir, out: &mut ParseOutput) {
        out.anomaly("mqtt.malformed_traffic");
        let mut tx = self.new_tx(dir, None, out);
        tx.complete = true;
        self.txs.push_back(tx);
        self.lost[dir.index()] = true;
        self.pending[dir.index()] = Vec::new();
    }

    /// Parses the packets at the front of `data`; returns the bytes used (the rest is
    /// an incomplete packet).
    fn packets(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) -> usize {
        let d = dir.index();
        let mut at = 0;
        while at < data.len() && !self.lost[d] {
            match parser::parse_message(&data[at..], self.protocol_version, self.cfg.max_msg_len) {
                Ok((mut msg, used)) => {
                    let id = self.next_frame[d];
                    if let Op::Truncated { skipped } = msg.op {
                        self.skip[d] = skipped - used;
                        // Only its `pdu` frame is made (and its bytes are not kept).
                        self.next_frame[d] += 1;
                    } else if !self.keep_frames {
                        self.next_frame[d] += 3;
                    } else {
                        // Its bytes are copied only for a ruleset that inspects MQTT
                        // frames.
                        self.next_frame[d] += 3;
                        msg.frame = Some(Box::new(parser::PduFrame {
                            dir,
                            offset: self.offset[d] + at as u64,
                            id,
                            bytes: data[at..at + used].into(),
                            remaining: msg.header.remaining_length,
                        }));
                    }
                    self.handle(dir, msg, out);
                    at += used;
                    if self.skip[d] > 0 {
                        break;
                    }
                }
                Err(Error::Incomplete) => break,
                Err(Error::Malformed) => {
                    self.malformed(dir, out);
                    return data.len();
                }
            }
        }
        self.offset[d] += at as u64;
        at
    }
}

impl AppState for MqttState {
    /// After a gap, as Suricata's parser takes none.
    fn stream_done(&self, dir: Dir) -> bool {
        self.lost[dir.index()]
    }

    fn set_frames(&mut self, used: &[crate::BufferId]) {
        use super::detect::{
            FRAME_DATA_TC, FRAME_DATA_TS, FRAME_HEADER_TC, FRAME_HEADER_TS, FRAME_PDU_TC,
            FRAME_PDU_TS,
        };
        let mine = [
            FRAME_PDU_TS,
            FRAME_PDU_TC,
            FRAME_HEADER_TS,
            FRAME_HEADER_TC,
            FRAME_DATA_TS,
            FRAME_DATA_TC,
        ];
        self.keep_frames = used.iter().any(|b| mine.contains(b));
        // Id 1 is the stream frame's when a rule uses it.
        self.next_frame = [crate::stream_frame::first_frame_id(crate::AppProto::Mqtt, used); 2];
    }

    fn parse(&mut self, dir: Dir, mut data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        while !data.is_empty() && !self.lost[d] {
            if self.skip[d] > 0 {
                let n = self.skip[d].min(data.len());
                self.skip[d] -= n;
                self.offset[d] += n as u64;
                data = &data[n..];
                continue;
            }
            if self.pending[d].is_empty() {
                // The common case: whole packets parsed in place, only an incomplete
                // tail is copied.
                let used = self.packets(dir, data, out);
                data = &data[used.min(data.len())..];
                if self.skip[d] == 0 && !self.lost[d] {
                    self.pending[d].extend_from_slice(data);
                    data = &[];
                }
                continue;
            }
            // Complete the pending packet with as few bytes as it needs: its fixed
            // header first, then its body.
            let mut buf = std::mem::take(&mut self.pending[d]);
            let need = match parser::fixed_header(&buf) {
                Ok((h, hlen)) if h.remaining_length > self.cfg.max_msg_len => hlen,
                Ok((h, hlen)) => hlen + h.remaining_length,
                Err(Error::Incomplete) => buf.len() + 1,
                Err(Error::Malformed) => {
                    self.malformed(dir, out);
                    return;
                }
            };
            let take = need.saturating_sub(buf.len()).min(data.len());
            buf.extend_from_slice(&data[..take]);
            data = &data[take..];
            if buf.len() < need {
                self.pending[d] = buf;
                continue;
            }
            let used = self.packets(dir, &buf, out);
            debug_assert!(used == buf.len() || self.lost[d] || used == 0);
            if used < buf.len() && !self.lost[d] {
                // Only a fixed header still growing is left.
                buf.drain(..used);
                self.pending[d] = buf;
            } else {
                buf.clear();
                // Keep the (small) buffer for the next packet that spans calls.
                self.pending[d] = buf;
                if self.pending[d].capacity() > 4096 {
                    self.pending[d] = Vec::new();
                }
            }
        }
    }

    fn gap(&mut self, _dir: Dir, _len: u64, _out: &mut ParseOutput) {
        // Packet boundaries are lost: as Suricata's parser (which takes no gaps), the
        // connection is not parsed any further, in either direction (the replies to
        // lost requests would all be missing their requests).
        self.lost = [true; 2];
        self.pending = [Vec::new(), Vec::new()];
        self.skip = [0; 2];
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        self.pending[dir.index()] = Vec::new();
        for tx in self.txs.iter_mut().filter(|t| t.dir == dir) {
            tx.ended = true;
        }
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        while self.txs.front().is_some_and(|t| t.id < id) {
            self.txs.pop_front();
            self.completed_below = self.completed_below.saturating_sub(1);
        }
        self.txs.release_if_empty();
    }
}

#[cfg(test)]
mod tests {
    use super::super::parser::tests::{CONNACK_V5, CONNECT_V4, CONNECT_V5};
    use super::*;

    fn types(s: &MqttState) -> Vec<Vec<u8>> {
        s.transactions()
            .map(|t| t.msgs.iter().map(|m| m.header.message_type).collect())
            .collect()
    }

    #[test]
    fn connect_connack_publish_byte_by_byte_and_all_at_once() {
        let mut client = CONNECT_V5.to_vec();
        // QoS 1 PUBLISH, topic `a`, id 1, no properties, message `hi`.
        client.extend_from_slice(b"\x32\x08\x00\x01a\x00\x01\x00hi");
        client.extend_from_slice(b"\xe0\x00");
        for whole in [false, true] {
            let mut s = MqttState::new(MqttConfig::default());
            let mut out = ParseOutput::default();
            if whole {
                s.parse(Dir::ToServer, &client[..CONNECT_V5.len()], &mut out);
            } else {
                for b in &client[..CONNECT_V5.len()] {
                    s.parse(Dir::ToServer, std::slice::from_ref(b), &mut out);
                }
            }
            s.parse(Dir::ToClient, CONNACK_V5, &mut out);
            if whole {
                s.parse(Dir::ToServer, &client[CONNECT_V5.len()..], &mut out);
            } else {
                for b in &client[CONNECT_V5.len()..] {
                    s.parse(Dir::ToServer, std::slice::from_ref(b), &mut out);
                }
            }
            s.parse(Dir::ToClient, b"\x40\x02\x00\x01", &mut out);
            assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
            assert_eq!(types(&s), vec![vec![1, 2], vec![3, 4], vec![14]]);
            assert!(
                s.transactions()
                    .all(|t| t.complete && t.dir == Dir::ToServer)
            );
            assert_eq!(s.protocol_version, 5);
        }
    }

    #[test]
    fn replies_without_requests_and_bad_packets() {
        let mut s = MqttState::new(MqttConfig::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"\x20\x02\x00\x00", &mut out);
        assert_eq!(out.anomalies, ["mqtt.missing_connect"]);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, CONNECT_V4, &mut out);
        s.parse(Dir::ToServer, b"\x36\x05\x00\x01a\x00\x01", &mut out);
        assert_eq!(
            out.anomalies,
            ["mqtt.invalid_qos_level", "mqtt.unintroduced_message"]
        );
        let mut out = ParseOutput::default();
        s.parse(
            Dir::ToClient,
            b"\x20\x02\x00\x00\x90\x03\x00\x09\x00",
            &mut out,
        );
        assert_eq!(out.anomalies, ["mqtt.missing_subscribe"]);
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, b"\x00\x00\x10\x02\x00\x00", &mut out);
        assert_eq!(
            out.anomalies,
            ["mqtt.unassigned_msg_type", "mqtt.malformed_traffic"]
        );
        // Nothing more is read of that direction.
        let n = s.tx_count();
        s.parse(Dir::ToServer, b"\xc0\x00", &mut out);
        assert_eq!(s.tx_count(), n);
    }

    #[test]
    fn long_packets_are_skipped_across_calls() {
        let mut s = MqttState::new(MqttConfig {
            max_msg_len: 8,
            max_tx: DEFAULT_MAX_TX,
            max_messages: DEFAULT_MAX_MESSAGES,
        });
        let mut out = ParseOutput::default();
        let mut p = b"\x30\x0e\x00\x01a".to_vec();
        p.extend_from_slice(&[b'x'; 11]);
        p.extend_from_slice(b"\xc0\x00");
        s.parse(Dir::ToServer, &p[..4], &mut out);
        s.parse(Dir::ToServer, &p[4..], &mut out);
        assert_eq!(types(&s), vec![vec![3], vec![12]]);
        assert!(matches!(s.txs[0].msgs[0].op, Op::Truncated { skipped: 16 }));
    }

    #[test]
    fn too_many_transactions_finishes_the_oldest() {
        let mut s = MqttState::new(MqttConfig {
            max_msg_len: DEFAULT_MAX_MSG_LEN,
            max_tx: 4,
            max_messages: DEFAULT_MAX_MESSAGES,
        });
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, CONNECT_V4, &mut out);
        for _ in 0..6 {
            s.parse(Dir::ToServer, b"\xc0\x00", &mut out);
        }
        assert!(out.anomalies.contains(&"mqtt.too_many_transactions"));
        assert!(s.txs[0].complete);
        s.free_below(7);
        assert_eq!(s.tx_count(), 0);
        assert_eq!(s.txs.capacity(), 0);
    }

    #[test]
    fn a_pubrec_pubrel_loop_stops_at_max_messages() {
        let mut s = MqttState::new(MqttConfig {
            max_messages: 4,
            ..MqttConfig::default()
        });
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, CONNECT_V4, &mut out);
        s.parse(Dir::ToClient, b"\x20\x02\x00\x00", &mut out);
        s.parse(Dir::ToServer, b"\x34\x05\x00\x01t\x00\x0a", &mut out);
        for _ in 0..3 {
            s.parse(Dir::ToClient, b"\x50\x02\x00\x0a", &mut out);
            s.parse(Dir::ToServer, b"\x62\x02\x00\x0a", &mut out);
        }
        let dropped = out
            .anomalies
            .iter()
            .filter(|a| **a == "mqtt.too_many_messages")
            .count();
        // PUBLISH, PUBREC, PUBREL, PUBREC joined; the next three were dropped.
        assert_eq!(dropped, 3);
        assert_eq!(types(&s)[1], vec![3, 5, 6, 5]);
        // The PUBCOMP still completes it.
        s.parse(Dir::ToClient, b"\x70\x02\x00\x0a", &mut out);
        assert_eq!(types(&s)[1], vec![3, 5, 6, 5, 7]);
        assert!(s.txs[1].complete);
    }

    #[test]
    fn frames_are_placed_in_their_stream() {
        use crate::Transaction;
        let mut s = MqttState::new(MqttConfig::default());
        s.set_frames(&[super::super::detect::FRAME_PDU_TS]);
        let mut out = ParseOutput::default();
        // A CONNECT, then a PINGREQ and a QoS 0 PUBLISH in one segment, the PUBLISH's
        // last byte in the next.
        let mut ts = CONNECT_V4.to_vec();
        ts.extend_from_slice(b"\xc0\x00\x30\x04\x00\x01ab");
        let n = ts.len();
        s.parse(Dir::ToServer, &ts[..n - 1], &mut out);
        s.parse(Dir::ToServer, &ts[n - 1..], &mut out);
        use super::super::detect::{FRAME_DATA_TS, FRAME_HEADER_TS, FRAME_PDU_TS};
        let c = CONNECT_V4.len() as u64;
        let ping = &s.txs[1];
        let meta = ping.frame(FRAME_PDU_TS, 0).unwrap();
        assert_eq!((meta.id, meta.stream_offset), (4, Some(c)));
        let publish = &s.txs[2];
        assert_eq!(
            publish.buffer(FRAME_PDU_TS, 0),
            crate::Buf::Ready(&b"\x30\x04\x00\x01ab"[..])
        );
        assert_eq!(
            publish.buffer(FRAME_HEADER_TS, 0),
            crate::Buf::Ready(&b"\x30\x04"[..])
        );
        assert_eq!(
            publish.buffer(FRAME_DATA_TS, 0),
            crate::Buf::Ready(&b"\x00\x01ab"[..])
        );
        let data = publish.frame(FRAME_DATA_TS, 0).unwrap();
        assert_eq!(
            (data.id, data.stream_offset, data.tx_id),
            (9, Some(c + 4), None)
        );
        // The other direction has none.
        assert_eq!(
            publish.buffer(super::super::detect::FRAME_PDU_TC, 0),
            crate::Buf::Absent
        );
    }
}
