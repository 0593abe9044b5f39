//! The inspection buffers and keywords of an MQTT transaction, as Suricata's.
//!
//! A transaction is inspected in the direction of its first packet, from that packet
//! on and again as replies join it (Suricata's MQTT keywords inspect at progress 0).
//! Buffers read the transaction's first packet of their type (which is its first
//! packet: they do not change); the keywords that are not buffers match when one of
//! the transaction's packets does, and do not match once it is complete (its reply
//! came, none is awaited, or its direction ended) and none did.

use super::parser::{self, Op};
use super::state::{INFO_LEN, META_LEN, Meta, MqttTx};
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const CONNECT_CLIENTID: BufferId = BufferId::of(AppProto::Mqtt, 1);
pub const CONNECT_USERNAME: BufferId = BufferId::of(AppProto::Mqtt, 2);
pub const CONNECT_PASSWORD: BufferId = BufferId::of(AppProto::Mqtt, 3);
pub const CONNECT_PROTOCOL_STRING: BufferId = BufferId::of(AppProto::Mqtt, 4);
pub const CONNECT_WILLTOPIC: BufferId = BufferId::of(AppProto::Mqtt, 5);
pub const CONNECT_WILLMESSAGE: BufferId = BufferId::of(AppProto::Mqtt, 6);
pub const PUBLISH_TOPIC_TS: BufferId = BufferId::of(AppProto::Mqtt, 7);
pub const PUBLISH_TOPIC_TC: BufferId = BufferId::of(AppProto::Mqtt, 8);
pub const PUBLISH_MESSAGE_TS: BufferId = BufferId::of(AppProto::Mqtt, 9);
pub const PUBLISH_MESSAGE_TC: BufferId = BufferId::of(AppProto::Mqtt, 10);
pub const SUBSCRIBE_TOPIC: BufferId = BufferId::of(AppProto::Mqtt, 11);
pub const UNSUBSCRIBE_TOPIC: BufferId = BufferId::of(AppProto::Mqtt, 12);

const fn ts(name: &'static str, id: BufferId, multi: bool) -> BufferDef {
    def(name, &[], None, AppProto::Mqtt, Some(id), None, multi)
}

/// The sticky buffers of MQTT.
pub static BUFFERS: &[BufferDef] = &[
    ts("mqtt.connect.clientid", CONNECT_CLIENTID, false),
    ts("mqtt.connect.username", CONNECT_USERNAME, false),
    ts("mqtt.connect.password", CONNECT_PASSWORD, false),
    ts(
        "mqtt.connect.protocol_string",
        CONNECT_PROTOCOL_STRING,
        false,
    ),
    ts("mqtt.connect.willtopic", CONNECT_WILLTOPIC, false),
    ts("mqtt.connect.willmessage", CONNECT_WILLMESSAGE, false),
    def(
        "mqtt.publish.topic",
        &[],
        None,
        AppProto::Mqtt,
        Some(PUBLISH_TOPIC_TS),
        Some(PUBLISH_TOPIC_TC),
        false,
    ),
    def(
        "mqtt.publish.message",
        &[],
        None,
        AppProto::Mqtt,
        Some(PUBLISH_MESSAGE_TS),
        Some(PUBLISH_MESSAGE_TC),
        false,
    ),
    ts("mqtt.subscribe.topic", SUBSCRIBE_TOPIC, true),
    ts("mqtt.unsubscribe.topic", UNSUBSCRIBE_TOPIC, true),
];

fn one(b: Option<&[u8]>, index: usize) -> Buf<'_> {
    match b {
        Some(b) if index == 0 => Buf::Ready(b),
        _ => Buf::Absent,
    }
}

pub const FRAME_PDU_TS: BufferId = BufferId::of(AppProto::Mqtt, 100);
pub const FRAME_PDU_TC: BufferId = BufferId::of(AppProto::Mqtt, 101);
pub const FRAME_HEADER_TS: BufferId = BufferId::of(AppProto::Mqtt, 102);
pub const FRAME_HEADER_TC: BufferId = BufferId::of(AppProto::Mqtt, 103);
pub const FRAME_DATA_TS: BufferId = BufferId::of(AppProto::Mqtt, 104);
pub const FRAME_DATA_TC: BufferId = BufferId::of(AppProto::Mqtt, 105);

const fn frame(name: &'static str, ts: BufferId, tc: BufferId) -> BufferDef {
    def(name, &[], None, AppProto::Mqtt, Some(ts), Some(tc), true)
}

/// The frames of MQTT (`frame:pdu`, `frame:mqtt.header`, `frame:mqtt.data`): one of
/// each per packet of the transaction in the inspected direction.
pub static FRAMES: &[BufferDef] = &[
    frame("pdu", FRAME_PDU_TS, FRAME_PDU_TC),
    frame("header", FRAME_HEADER_TS, FRAME_HEADER_TC),
    frame("data", FRAME_DATA_TS, FRAME_DATA_TC),
];

/// A frame buffer's direction and which of a packet's three frames it is (0 `pdu`,
/// 1 `header`, 2 `data`).
fn frame_kind(id: BufferId) -> Option<(Dir, u64)> {
    Some(match id {
        FRAME_PDU_TS => (Dir::ToServer, 0),
        FRAME_PDU_TC => (Dir::ToClient, 0),
        FRAME_HEADER_TS => (Dir::ToServer, 1),
        FRAME_HEADER_TC => (Dir::ToClient, 1),
        FRAME_DATA_TS => (Dir::ToServer, 2),
        FRAME_DATA_TC => (Dir::ToClient, 2),
        _ => return None,
    })
}

/// The packet of frame buffer item `index`: the transaction's `index`th packet in the
/// buffer's direction (truncated packets have no frame bytes and are passed over).
fn frame_pdu(tx: &MqttTx, dir: Dir, index: usize) -> Option<&super::parser::PduFrame> {
    tx.msgs
        .iter()
        .filter_map(|m| m.frame.as_deref())
        .filter(|f| f.dir == dir)
        .nth(index)
}

/// The byte range of frame `kind` in a packet, as Suricata's MQTT frames cut it:
/// `header` is always 2 bytes and `data` the remaining length from there, whatever
/// the length of the remaining-length field (so a longer field shifts `data` into it).
fn frame_range(p: &super::parser::PduFrame, kind: u64) -> std::ops::Range<usize> {
    let n = p.bytes.len();
    match kind {
        0 => 0..n,
        1 => 0..n.min(2),
        _ => n.min(2)..n.min(2 + p.remaining),
    }
}

fn frame_buffer(tx: &MqttTx, id: BufferId, index: usize) -> Option<Buf<'_>> {
    let (dir, kind) = frame_kind(id)?;
    Some(match frame_pdu(tx, dir, index) {
        Some(p) if tx.ready() => Buf::Ready(&p.bytes[frame_range(p, kind)]),
        // Partial while packets may join: a rule that does not match the packets so
        // far is tried again when one does.
        Some(p) => Buf::Partial(&p.bytes[frame_range(p, kind)]),
        None if tx.ready() => Buf::Absent,
        // More packets may join (a reply): an item not there yet.
        None if index == 0 => Buf::NotYet,
        None => Buf::Absent,
    })
}

/// [`crate::Transaction::frame`] for MQTT: Suricata attaches MQTT frames to no
/// transaction.
pub fn frame_meta(tx: &MqttTx, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
    let (dir, kind) = frame_kind(id)?;
    let p = frame_pdu(tx, dir, index)?;
    Some(crate::FrameMeta {
        id: p.id + kind,
        stream_offset: Some(p.offset + frame_range(p, kind).start as u64),
        complete: true,
        tx_id: None,
        length: None,
    })
}

pub fn buffer(tx: &MqttTx, id: BufferId, index: usize) -> Buf<'_> {
    if let Some(b) = frame_buffer(tx, id, index) {
        return b;
    }
    let dir = match id {
        PUBLISH_TOPIC_TC | PUBLISH_MESSAGE_TC | INFO_TC | META_TC | READY_TC => Dir::ToClient,
        _ => Dir::ToServer,
    };
    if dir != tx.dir {
        return Buf::Absent;
    }
    match id {
        READY_TS | READY_TC => {
            static READY: [u8; 2] = [0, 1];
            let r = usize::from(tx.ready());
            return one(Some(&READY[r..r + 1]), index);
        }
        INFO_TS | INFO_TC => {
            return tx.info.get(index).map_or(Buf::Absent, |b| Buf::Ready(b));
        }
        META_TS | META_TC => return one(Some(&tx.meta.0[..]), index),
        _ => {}
    }
    let connect = tx.msgs.iter().find_map(|m| match &m.op {
        Op::Connect(c) => Some(c),
        _ => None,
    });
    let publish = || {
        tx.msgs.iter().find_map(|m| match &m.op {
            Op::Publish { topic, message, .. } => Some((topic, message)),
            _ => None,
        })
    };
    match id {
        CONNECT_CLIENTID => one(connect.map(|c| &c.client_id[..]), index),
        CONNECT_USERNAME => one(connect.and_then(|c| c.username.as_deref()), index),
        CONNECT_PASSWORD => one(connect.and_then(|c| c.password.as_deref()), index),
        CONNECT_PROTOCOL_STRING => one(connect.map(|c| &c.protocol_string[..]), index),
        CONNECT_WILLTOPIC => one(connect.and_then(|c| c.will_topic.as_deref()), index),
        CONNECT_WILLMESSAGE => one(connect.and_then(|c| c.will_message.as_deref()), index),
        PUBLISH_TOPIC_TS | PUBLISH_TOPIC_TC => one(publish().map(|p| &p.0[..]), index),
        PUBLISH_MESSAGE_TS | PUBLISH_MESSAGE_TC => one(publish().map(|p| &p.1[..]), index),
        SUBSCRIBE_TOPIC => {
            let t = tx.msgs.iter().find_map(|m| match &m.op {
                Op::Subscribe { topics, .. } => Some(topics),
                _ => None,
            });
            t.and_then(|t| t.get(index))
                .map_or(Buf::Absent, |t| Buf::Ready(&t.topic))
        }
        UNSUBSCRIBE_TOPIC => {
            let t = tx.msgs.iter().find_map(|m| match &m.op {
                Op::Unsubscribe { topics, .. } => Some(topics),
                _ => None,
            });
            t.and_then(|t| t.get(index))
                .map_or(Buf::Absent, |t| Buf::Ready(t))
        }
        _ => Buf::Absent,
    }
}

/// MQTT's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("mqtt.protocol_version", &[], parse_u8_cmp, eval_version),
    KeywordDef::check("mqtt.type", &[], parse_type, eval_type),
    KeywordDef::check("mqtt.flags", &[], parse_flags, eval_flags),
    KeywordDef::check("mqtt.qos", &[], parse_qos, eval_qos),
    KeywordDef::check(
        "mqtt.reason_code",
        &["mqtt.connack.return_code"],
        parse_u8_cmp,
        eval_reason_code,
    ),
    KeywordDef::check(
        "mqtt.connack.session_present",
        &[],
        parse_bool,
        eval_session_present,
    ),
    KeywordDef::check(
        "mqtt.connect.flags",
        &[],
        parse_connect_flags,
        eval_connect_flags,
    ),
];

/// Not sticky buffers: per packet of the transaction (item = packet index), its
/// [`super::state::INFO_LEN`] bytes (type, QoS, dup | retain << 1), in each direction.
pub const INFO_TS: BufferId = BufferId::of(AppProto::Mqtt, 200);
pub const INFO_TC: BufferId = BufferId::of(AppProto::Mqtt, 201);
/// Not sticky buffers: the transaction's summary (see [`super::state::Meta`]).
pub const META_TS: BufferId = BufferId::of(AppProto::Mqtt, 202);
pub const META_TC: BufferId = BufferId::of(AppProto::Mqtt, 203);

/// Not sticky buffers: one byte, 1 once the transaction is complete (or its direction
/// ended), else 0.
pub const READY_TS: BufferId = BufferId::of(AppProto::Mqtt, 204);
pub const READY_TC: BufferId = BufferId::of(AppProto::Mqtt, 205);

fn by_dir(dir: Dir, ts: BufferId, tc: BufferId) -> BufferId {
    if dir == Dir::ToServer { ts } else { tc }
}

/// The transaction's summary for a keyword evaluated in `dir`: `Err` is the answer
/// without looking further (another direction's transaction: no match).
fn meta(dir: Dir, tx: &dyn Transaction) -> Result<&[u8], Option<bool>> {
    match tx.buffer(by_dir(dir, META_TS, META_TC), 0) {
        Buf::Ready(b) if b.len() == META_LEN => Ok(b),
        _ => Err(Some(false)),
    }
}

/// A keyword's answer, as Suricata's MQTT keywords (inspected from a transaction's
/// first packet on): a match now is final; no match is final once the transaction is
/// complete, until then it is looked at again as packets join it.
fn settle(dir: Dir, tx: &dyn Transaction, matched: bool) -> Option<bool> {
    if matched {
        return Some(true);
    }
    match tx.buffer(by_dir(dir, READY_TS, READY_TC), 0) {
        Buf::Ready([1]) => Some(false),
        _ => None,
    }
}

/// Whether one packet's info matches `f`, for a keyword evaluated in `dir`.
fn any_msg(dir: Dir, tx: &dyn Transaction, f: impl Fn(&[u8]) -> bool) -> Option<bool> {
    if let Err(r) = meta(dir, tx) {
        return r;
    }
    let id = by_dir(dir, INFO_TS, INFO_TC);
    let mut matched = false;
    for i in 0.. {
        match tx.buffer(id, i) {
            Buf::Ready(b) if b.len() == INFO_LEN => {
                if f(b) {
                    matched = true;
                    break;
                }
            }
            _ => break,
        }
    }
    settle(dir, tx, matched)
}

/// A `u8` comparison (`mqtt.protocol_version`, `mqtt.reason_code`).
fn parse_u8_cmp(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    match parse_num_cmp(val) {
        Some(c) if cmp_fits_u8(c) => Ok(KwValue::Num(c)),
        _ => Err(format!("bad value `{val}`")),
    }
}

fn cmp_fits_u8(c: NumCmp) -> bool {
    let max = u64::from(u8::MAX);
    match c {
        NumCmp::Eq(a)
        | NumCmp::Ne(a)
        | NumCmp::Lt(a)
        | NumCmp::Le(a)
        | NumCmp::Gt(a)
        | NumCmp::Ge(a) => a <= max,
        NumCmp::Between(a, b) | NumCmp::NotBetween(a, b) => a <= max && b <= max,
        NumCmp::MaskEq(m, x) | NumCmp::MaskNe(m, x) => m <= max && x <= max,
    }
}

/// `mqtt.protocol_version`: the connection's version (as the CONNECT said).
fn eval_version(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(c) = v else {
        return Some(false);
    };
    match meta(dir, tx) {
        Ok(m) => settle(dir, tx, c.test(u64::from(m[Meta::VERSION]))),
        Err(r) => r,
    }
}

/// Where a `mqtt.type` value looks: any packet of the transaction, or (Suricata 9's
/// `type,index`) the packet at an index, negative from the end.
const ANY_INDEX: i64 = i64::MIN;

/// `mqtt.type:[!]<name>|<number comparison>[,<index>]`: a packet type of the
/// transaction: of any of its packets, or (Suricata 9's multi-integer form) of the
/// packet at `index` (negative: from the end). The comparison and index are packed
/// into `KwValue::Flags::mask` (see [`pack_cmp`]).
fn parse_type(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    let (what, index) = match val.split_once(',') {
        Some((w, i)) => {
            let i = i.trim();
            let index = match i {
                "any" => ANY_INDEX,
                _ => i
                    .parse::<i64>()
                    .ok()
                    .filter(|n| n.unsigned_abs() <= 255)
                    .ok_or_else(|| format!("bad index `{i}`"))?,
            };
            (w.trim(), index)
        }
        None => (val, ANY_INDEX),
    };
    let (negated, name) = match what.strip_prefix('!') {
        Some(n) => (true, n.trim()),
        None => (false, what),
    };
    let code = match parser::TYPE_NAMES
        .iter()
        .position(|n| n.eq_ignore_ascii_case(name))
    {
        Some(p) => p as u64,
        None => match parse_num_cmp(what) {
            Some(c) if cmp_fits_u8(c) => {
                return Ok(KwValue::Flags {
                    mask: pack_cmp(c, index)?,
                    negated: true,
                });
            }
            _ => return Err(format!("bad message type `{name}`")),
        },
    };
    let c = if negated {
        NumCmp::Ne(code)
    } else {
        NumCmp::Eq(code)
    };
    Ok(KwValue::Flags {
        mask: pack_cmp(c, index)?,
        negated: true,
    })
}

/// A `u8` comparison and an index packed in a `u64` (the keyword value shapes have no
/// pair): kind (4 bits), first operand (8), second (8), index + 256 (10, 0 = any).
fn pack_cmp(c: NumCmp, index: i64) -> Result<u64, String> {
    let (k, a, b) = match c {
        NumCmp::Eq(a) => (0, a, 0),
        NumCmp::Ne(a) => (1, a, 0),
        NumCmp::Lt(a) => (2, a, 0),
        NumCmp::Le(a) => (3, a, 0),
        NumCmp::Gt(a) => (4, a, 0),
        NumCmp::Ge(a) => (5, a, 0),
        NumCmp::Between(a, b) => (6, a, b),
        NumCmp::NotBetween(a, b) => (7, a, b),
        NumCmp::MaskEq(a, b) => (8, a, b),
        NumCmp::MaskNe(a, b) => (9, a, b),
    };
    let idx = if index == ANY_INDEX {
        0
    } else {
        (index + 512) as u64
    };
    Ok(k | (a << 4) | (b << 12) | (idx << 20))
}

fn unpack_cmp(p: u64) -> (NumCmp, Option<i64>) {
    let (a, b) = ((p >> 4) & 0xff, (p >> 12) & 0xff);
    let c = match p & 0xf {
        0 => NumCmp::Eq(a),
        1 => NumCmp::Ne(a),
        2 => NumCmp::Lt(a),
        3 => NumCmp::Le(a),
        4 => NumCmp::Gt(a),
        5 => NumCmp::Ge(a),
        6 => NumCmp::Between(a, b),
        7 => NumCmp::NotBetween(a, b),
        8 => NumCmp::MaskEq(a, b),
        _ => NumCmp::MaskNe(a, b),
    };
    let idx = p >> 20;
    (c, (idx != 0).then(|| idx as i64 - 512))
}

fn eval_type(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Flags { mask, .. } = v else {
        return Some(false);
    };
    let (c, index) = unpack_cmp(*mask);
    let m = match meta(dir, tx) {
        Ok(m) => m,
        Err(r) => return r,
    };
    let Some(i) = index else {
        return any_msg(dir, tx, |b| c.test(u64::from(b[0])));
    };
    let n = i64::from(m[Meta::COUNT]);
    let i = if i < 0 { n + i } else { i };
    let id = by_dir(dir, INFO_TS, INFO_TC);
    let matched = match usize::try_from(i).map(|i| tx.buffer(id, i)) {
        Ok(Buf::Ready(b)) if b.len() == INFO_LEN => c.test(u64::from(b[0])),
        _ => false,
    };
    settle(dir, tx, matched)
}

/// A flag list `name[,!name...]`: (mask of the flags named, the value they must have).
fn parse_flag_list(val: &str, names: &[(&str, u64)]) -> Result<KwValue, String> {
    let (mut mask, mut want) = (0u64, 0u64);
    for item in val.split(',') {
        let item = item.trim();
        let (neg, name) = match item.strip_prefix('!') {
            Some(n) => (true, n.trim()),
            None => (false, item),
        };
        let Some(&(_, bit)) = names.iter().find(|(n, _)| *n == name) else {
            return Err(format!("unknown flag `{item}`"));
        };
        if mask & bit != 0 {
            return Err(format!("flag `{name}` named twice"));
        }
        mask |= bit;
        if !neg {
            want |= bit;
        }
    }
    Ok(KwValue::Flags {
        mask: mask | (want << 32),
        negated: false,
    })
}

fn flags_match(v: &KwValue, have: u64) -> bool {
    let KwValue::Flags { mask, .. } = v else {
        return false;
    };
    let (m, want) = (mask & 0xffff_ffff, mask >> 32);
    have & m == want
}

const FLAG_DUP: u64 = 1;
const FLAG_RETAIN: u64 = 2;

/// `mqtt.flags:[!]dup,[!]retain`: the fixed header's flags of a packet.
fn parse_flags(v: Option<&str>) -> Result<KwValue, String> {
    parse_flag_list(required(v)?, &[("dup", FLAG_DUP), ("retain", FLAG_RETAIN)])
}

fn eval_flags(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    any_msg(dir, tx, |b| flags_match(v, u64::from(b[2])))
}

/// `mqtt.qos:0|1|2`.
fn parse_qos(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    match val.parse::<u64>() {
        Ok(q) if q <= 2 => Ok(KwValue::Exact(q)),
        _ => Err(format!("bad QoS level `{val}`")),
    }
}

fn eval_qos(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Exact(q) = *v else {
        return Some(false);
    };
    any_msg(dir, tx, |b| u64::from(b[1]) == q)
}

/// `mqtt.reason_code` (`mqtt.connack.return_code`): the transaction's first reason
/// code (see [`super::state::reason_code`]).
fn eval_reason_code(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(c) = v else {
        return Some(false);
    };
    match meta(dir, tx) {
        Ok(m) => settle(
            dir,
            tx,
            m[Meta::HAS_REASON] != 0 && c.test(u64::from(m[Meta::REASON])),
        ),
        Err(r) => r,
    }
}

/// `mqtt.connack.session_present:true|false` (or yes/no).
fn parse_bool(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    match val.to_ascii_lowercase().as_str() {
        "true" | "yes" => Ok(KwValue::Exact(1)),
        "false" | "no" => Ok(KwValue::Exact(0)),
        _ => Err(format!("bad boolean `{val}`")),
    }
}

fn eval_session_present(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Exact(want) = *v else {
        return Some(false);
    };
    match meta(dir, tx) {
        Ok(m) => settle(
            dir,
            tx,
            m[Meta::HAS_CONNACK] != 0 && u64::from(m[Meta::SESSION_PRESENT]) == want,
        ),
        Err(r) => r,
    }
}

/// `mqtt.connect.flags:[!]username,[!]password,[!]will,[!]will_retain,[!]clean_session`.
fn parse_connect_flags(v: Option<&str>) -> Result<KwValue, String> {
    parse_flag_list(
        required(v)?,
        &[
            ("username", u64::from(parser::FLAG_USERNAME)),
            ("password", u64::from(parser::FLAG_PASSWORD)),
            ("will", u64::from(parser::FLAG_WILL)),
            ("will_retain", u64::from(parser::FLAG_WILL_RETAIN)),
            ("clean_session", u64::from(parser::FLAG_CLEAN_SESSION)),
        ],
    )
}

fn eval_connect_flags(v: &KwValue, dir: Dir, _: i64, tx: &dyn Transaction) -> Option<bool> {
    match meta(dir, tx) {
        Ok(m) => {
            Some(m[Meta::HAS_CONNECT] != 0 && flags_match(v, u64::from(m[Meta::CONNECT_FLAGS])))
        }
        Err(r) => r,
    }
}
