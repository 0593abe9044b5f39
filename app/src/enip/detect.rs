//! The buffers, frames and keywords of an ENIP transaction, as Suricata 8's.
//!
//! - `enip_command`, `enip.status`, `enip.protocol_version`,
//!   `cip_service`: either direction's PDU;
//! - `enip.cip_class`, `enip.cip_instance`, `enip.cip_attribute`: the request's CIP
//!   (its embedded services included);
//! - `enip.cip_status`, `enip.cip_extendedstatus`, and the ListIdentity reply's
//!   `enip.revision`, `enip.identity_status`, `enip.state`, `enip.serial`,
//!   `enip.product_code`, `enip.device_type`, `enip.vendor_id`, the ListServices
//!   reply's `enip.capabilities`: the reply;
//! - sticky buffers `enip.product_name` and `enip.service_name` (the reply's);
//! - frames `pdu`, `hdr`, `data`, `cip` (each data item's CIP message and each
//!   embedded service) and `enip.item` (each CPF item), in either direction.

use super::parser::{
    self, Cip, CipDir, HEADER_LEN, RequestPayload, SEGMENT_ATTRIBUTE, SEGMENT_CLASS,
    SEGMENT_INSTANCE,
};
use super::state::EnipTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

const fn id(n: u8) -> BufferId {
    BufferId::of(AppProto::Enip, n)
}

pub const PRODUCT_NAME: BufferId = id(1);
pub const SERVICE_NAME: BufferId = id(2);
pub const FRAME_PDU_TS: BufferId = id(100);
pub const FRAME_PDU_TC: BufferId = id(101);
pub const FRAME_HDR_TS: BufferId = id(102);
pub const FRAME_HDR_TC: BufferId = id(103);
pub const FRAME_DATA_TS: BufferId = id(104);
pub const FRAME_DATA_TC: BufferId = id(105);
pub const FRAME_CIP_TS: BufferId = id(106);
pub const FRAME_CIP_TC: BufferId = id(107);
pub const FRAME_ITEM_TS: BufferId = id(108);
pub const FRAME_ITEM_TC: BufferId = id(109);

/// The sticky buffers of ENIP.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "enip.product_name",
        &[],
        None,
        AppProto::Enip,
        None,
        Some(PRODUCT_NAME),
        false,
    ),
    def(
        "enip.service_name",
        &[],
        None,
        AppProto::Enip,
        None,
        Some(SERVICE_NAME),
        false,
    ),
];

const fn frame(name: &'static str, ts: BufferId, tc: BufferId, multi: bool) -> BufferDef {
    def(name, &[], None, AppProto::Enip, Some(ts), Some(tc), multi)
}

/// The frames of ENIP (Suricata's frame types).
pub static FRAMES: &[BufferDef] = &[
    frame("pdu", FRAME_PDU_TS, FRAME_PDU_TC, false),
    frame("hdr", FRAME_HDR_TS, FRAME_HDR_TC, false),
    frame("data", FRAME_DATA_TS, FRAME_DATA_TC, false),
    frame("cip", FRAME_CIP_TS, FRAME_CIP_TC, true),
    frame("enip.item", FRAME_ITEM_TS, FRAME_ITEM_TC, true),
];

fn one(b: Option<&[u8]>, index: usize) -> Buf<'_> {
    match b {
        Some(b) if index == 0 => Buf::Ready(b),
        _ => Buf::Absent,
    }
}

/// The `cip` frames of a PDU: each data item's, then its embedded services', in order.
fn cip_frame(msg: &super::state::Msg, index: usize) -> Option<std::ops::Range<usize>> {
    let mut n = 0;
    for item in msg.pdu.items() {
        let parser::ItemPayload::Data { cip, .. } = &item.payload else {
            continue;
        };
        if n == index {
            return Some(item.cip_span.clone());
        }
        n += 1;
        let multiple = match &cip.dir {
            CipDir::Request {
                payload: RequestPayload::Multiple(m),
                ..
            } => Some(m),
            CipDir::Response {
                multiple: Some(m), ..
            } => Some(m),
            _ => None,
        };
        if let Some(m) = multiple {
            if let Some(s) = m.spans.get(index - n) {
                return Some(s.clone());
            }
            n += m.spans.len();
        }
    }
    None
}

pub fn buffer(tx: &EnipTx, id: BufferId, index: usize) -> Buf<'_> {
    let dir = match id {
        PRODUCT_NAME | SERVICE_NAME | FRAME_PDU_TC | FRAME_HDR_TC | FRAME_DATA_TC
        | FRAME_CIP_TC | FRAME_ITEM_TC => Dir::ToClient,
        _ => Dir::ToServer,
    };
    let Some(msg) = tx.msg(dir) else {
        return if tx.complete(dir) {
            Buf::Absent
        } else {
            Buf::NotYet
        };
    };
    let b = &msg.bytes[..];
    // A frame's bytes, cut to the PDU (Suricata's cip frame of a connected item
    // runs two bytes past it).
    let span = |r: std::ops::Range<usize>| &b[r.start.min(b.len())..r.end.min(b.len())];
    match id {
        PRODUCT_NAME => one(msg.pdu.identity().map(|i| &i.product_name[..]), index),
        SERVICE_NAME => one(msg.pdu.services().map(|s| &s.service_name[..]), index),
        FRAME_PDU_TS | FRAME_PDU_TC => one(Some(b), index),
        FRAME_HDR_TS | FRAME_HDR_TC => one(Some(&b[..HEADER_LEN.min(b.len())]), index),
        FRAME_DATA_TS | FRAME_DATA_TC => one(Some(&b[HEADER_LEN.min(b.len())..]), index),
        FRAME_ITEM_TS | FRAME_ITEM_TC => msg
            .pdu
            .items()
            .get(index)
            .map_or(Buf::Absent, |i| Buf::Ready(span(i.span.clone()))),
        FRAME_CIP_TS | FRAME_CIP_TC => {
            cip_frame(msg, index).map_or(Buf::Absent, |r| Buf::Ready(span(r)))
        }
        _ => Buf::Absent,
    }
}

/// The frames a PDU makes: `hdr`, `data`, `pdu`, one `enip.item` per item and one
/// `cip` per CIP message, in Suricata's order of creation.
pub fn frame_count(msg: &super::state::Msg) -> u64 {
    let cips = (0..).take_while(|&i| cip_frame(msg, i).is_some()).count();
    (3 + msg.pdu.items().len() + cips) as u64
}

/// [`crate::Transaction::frame`] for ENIP: a PDU's frames are attached to its
/// transaction.
pub fn frame_meta(tx: &EnipTx, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
    let dir = match id {
        FRAME_PDU_TC | FRAME_HDR_TC | FRAME_DATA_TC | FRAME_CIP_TC | FRAME_ITEM_TC => Dir::ToClient,
        _ => Dir::ToServer,
    };
    let msg = tx.msg(dir)?;
    let items = msg.pdu.items();
    // (the frame's place among the PDU's frames, its first byte in the PDU)
    let (nth, start) = match id {
        FRAME_HDR_TS | FRAME_HDR_TC if index == 0 => (0, 0),
        FRAME_DATA_TS | FRAME_DATA_TC if index == 0 => (1, HEADER_LEN),
        FRAME_PDU_TS | FRAME_PDU_TC if index == 0 => (2, 0),
        FRAME_ITEM_TS | FRAME_ITEM_TC => (3 + index, items.get(index)?.span.start),
        FRAME_CIP_TS | FRAME_CIP_TC => (3 + items.len() + index, cip_frame(msg, index)?.start),
        _ => return None,
    };
    Some(crate::FrameMeta {
        id: msg.frame_id + nth as u64,
        stream_offset: msg.offset.map(|o| o + start as u64),
        complete: true,
        tx_id: Some(tx.id),
        length: None,
    })
}

/// ENIP's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("enip_command", &[], parse_command, eval_command),
    KeywordDef::check("enip.status", &[], parse_status, eval_status),
    KeywordDef::check(
        "enip.protocol_version",
        &[],
        parse_u16,
        eval_protocol_version,
    ),
    KeywordDef::check("cip_service", &[], parse_cip_service, eval_cip_service),
    KeywordDef::check("enip.cip_class", &[], parse_u32, eval_class),
    KeywordDef::check("enip.cip_instance", &[], parse_u32, eval_instance),
    KeywordDef::check("enip.cip_attribute", &[], parse_u32, eval_attribute),
    KeywordDef::check("enip.cip_status", &[], parse_u8, eval_cip_status),
    KeywordDef::check(
        "enip.cip_extendedstatus",
        &[],
        parse_u16,
        eval_extended_status,
    ),
    KeywordDef::check("enip.revision", &[], parse_u16, eval_revision),
    KeywordDef::check("enip.identity_status", &[], parse_u16, eval_identity_status),
    KeywordDef::check("enip.state", &[], parse_u8, eval_state),
    KeywordDef::check("enip.serial", &[], parse_u32, eval_serial),
    KeywordDef::check("enip.product_code", &[], parse_u16, eval_product_code),
    KeywordDef::check("enip.device_type", &[], parse_u16, eval_device_type),
    KeywordDef::check("enip.vendor_id", &[], parse_u16, eval_vendor_id),
    KeywordDef::check("enip.capabilities", &[], parse_u16, eval_capabilities),
];

/// An integer comparison whose values fit in `max`, or one of `names` (`!` before a
/// name: not it).
fn parse_uint(v: Option<&str>, max: u64, names: &[(u64, &str)]) -> Result<KwValue, String> {
    let s = required(v)?;
    let (neg, word) = match s.strip_prefix('!') {
        Some(w) => (true, w.trim()),
        None => (false, s),
    };
    if let Some(&(n, _)) = names.iter().find(|(_, name)| *name == word) {
        return Ok(KwValue::Num(if neg {
            NumCmp::Ne(n)
        } else {
            NumCmp::Eq(n)
        }));
    }
    let cmp = parse_num_cmp(s).ok_or_else(|| format!("bad value `{s}`"))?;
    let bound = match cmp {
        NumCmp::Eq(a)
        | NumCmp::Ne(a)
        | NumCmp::Lt(a)
        | NumCmp::Le(a)
        | NumCmp::Gt(a)
        | NumCmp::Ge(a) => a,
        NumCmp::Between(_, b) | NumCmp::NotBetween(_, b) => b,
        NumCmp::MaskEq(m, x) | NumCmp::MaskNe(m, x) => m | x,
    };
    if bound > max {
        return Err(format!("`{s}` is out of range (at most {max})"));
    }
    Ok(KwValue::Num(cmp))
}

fn parse_u8(v: Option<&str>) -> Result<KwValue, String> {
    parse_uint(v, u64::from(u8::MAX), &[])
}
fn parse_u16(v: Option<&str>) -> Result<KwValue, String> {
    parse_uint(v, u64::from(u16::MAX), &[])
}
fn parse_u32(v: Option<&str>) -> Result<KwValue, String> {
    parse_uint(v, u64::from(u32::MAX), &[])
}

const COMMAND_NAMES: [(u64, &str); 10] = {
    let mut out = [(0u64, ""); 10];
    let mut i = 0;
    while i < 10 {
        out[i] = (parser::COMMANDS[i].0 as u64, parser::COMMANDS[i].1);
        i += 1;
    }
    out
};

const STATUS_NAMES: [(u64, &str); 8] = {
    let mut out = [(0u64, ""); 8];
    let mut i = 0;
    while i < 8 {
        out[i] = (parser::STATUSES[i].0 as u64, parser::STATUSES[i].1);
        i += 1;
    }
    out
};

fn parse_command(v: Option<&str>) -> Result<KwValue, String> {
    parse_uint(v, u64::from(u16::MAX), &COMMAND_NAMES)
}

fn parse_status(v: Option<&str>) -> Result<KwValue, String> {
    parse_uint(v, u64::from(u32::MAX), &STATUS_NAMES)
}

fn num(v: &KwValue, x: u64) -> bool {
    matches!(v, KwValue::Num(c) if c.test(x))
}

/// The transaction's PDU of `dir`: `Err(answer)` when there is none (not yet, or
/// never).
fn pdu(dir: Dir, t: &dyn Transaction) -> Result<&parser::Pdu, Option<bool>> {
    let tx = t
        .as_any()
        .and_then(|a| a.downcast_ref::<EnipTx>())
        .ok_or(Some(false))?;
    match tx.msg(dir) {
        Some(m) => Ok(&m.pdu),
        None if t.complete(dir) => Err(Some(false)),
        None => Err(None),
    }
}

/// Evaluates `f` on the PDU of `dir`, only in `only` when given.
fn on(
    only: Option<Dir>,
    dir: Dir,
    t: &dyn Transaction,
    f: impl FnOnce(&parser::Pdu) -> bool,
) -> Option<bool> {
    if only.is_some_and(|d| d != dir) {
        return Some(false);
    }
    match pdu(dir, t) {
        Ok(p) => Some(f(p)),
        Err(answer) => answer,
    }
}

fn eval_command(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(None, dir, t, |p| num(v, u64::from(p.header.cmd)))
}

fn eval_status(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(None, dir, t, |p| num(v, u64::from(p.header.status)))
}

fn eval_protocol_version(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(None, dir, t, |p| {
        let version = match (&p.payload, dir) {
            (
                parser::Payload::RegisterSession {
                    protocol_version, ..
                },
                _,
            ) => Some(*protocol_version),
            (_, Dir::ToClient) => p
                .services()
                .map(|s| s.protocol_version)
                .or(p.identity().map(|i| i.protocol_version)),
            _ => None,
        };
        version.is_some_and(|x| num(v, u64::from(x)))
    })
}

/// The embedded services of a Multiple Service Packet.
fn embedded(c: &Cip) -> &[Cip] {
    match &c.dir {
        CipDir::Request {
            payload: RequestPayload::Multiple(m),
            ..
        } => &m.packets,
        CipDir::Response {
            multiple: Some(m), ..
        } => &m.packets,
        _ => &[],
    }
}

fn has_segment(c: &Cip, kind: u8, f: &dyn Fn(u32) -> bool) -> bool {
    match &c.dir {
        CipDir::Request { path, .. } => path
            .iter()
            .any(|s| s.segment_type >> 2 == kind && f(s.value)),
        _ => false,
    }
}

/// `cip_service:<service>[,<class>[,[!]<attribute>]]` packed in words.
fn parse_cip_service(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let mut parts = s.split(',').map(str::trim);
    let service = parts
        .next()
        .and_then(|x| x.parse::<u8>().ok())
        .filter(|&x| x < 0x80)
        .ok_or_else(|| format!("bad service in `{s}`"))?;
    let class = parts
        .next()
        .map(|x| x.parse::<u32>().map_err(|_| format!("bad class `{x}`")))
        .transpose()?;
    let attribute = match parts.next() {
        None => None,
        Some(x) => {
            let (neg, n) = match x.strip_prefix('!') {
                Some(n) => (true, n.trim()),
                None => (false, x),
            };
            let n = n
                .parse::<u32>()
                .map_err(|_| format!("bad attribute `{x}`"))?;
            // Suricata ignores a negated attribute.
            (!neg).then_some(n)
        }
    };
    if let Some(x) = parts.next() {
        return Err(format!("unexpected `{x}`"));
    }
    let opt = |x: Option<u32>| x.map_or(0, |x| 1 << 32 | u64::from(x));
    Ok(KwValue::Words([
        u64::from(service),
        opt(class),
        opt(attribute),
        0,
    ]))
}

fn has_attribute(c: &Cip, attr: u32) -> bool {
    let CipDir::Request { payload, .. } = &c.dir else {
        return false;
    };
    has_segment(c, SEGMENT_ATTRIBUTE, &|x| x == attr)
        || match payload {
            RequestPayload::GetAttributeList(l) => l.iter().any(|&a| u32::from(a) == attr),
            RequestPayload::SetAttributeList(Some(a)) => u32::from(*a) == attr,
            _ => false,
        }
}

fn service_matches(c: &Cip, service: u8, class: Option<u32>, attr: Option<u32>) -> bool {
    if c.service == service {
        return match class {
            None => true,
            Some(k) => {
                has_segment(c, SEGMENT_CLASS, &|x| x == k)
                    && attr.is_none_or(|a| has_attribute(c, a))
            }
        };
    }
    c.service == parser::CIP_MULTIPLE_SERVICE
        && embedded(c)
            .iter()
            .any(|p| service_matches(p, service, class, attr))
}

fn eval_cip_service(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Words([service, class, attr, _]) = *v else {
        return Some(false);
    };
    let opt = |w: u64| (w >> 32 != 0).then_some(w as u32);
    on(None, dir, t, |p| {
        p.cip()
            .is_some_and(|c| service_matches(c, service as u8, opt(class), opt(attr)))
    })
}

fn segment_matches(c: &Cip, kind: u8, v: &KwValue) -> bool {
    if !matches!(c.dir, CipDir::Request { .. }) {
        return false;
    }
    has_segment(c, kind, &|x| num(v, u64::from(x)))
        || embedded(c).iter().any(|p| segment_matches(p, kind, v))
}

fn eval_class(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(Some(Dir::ToServer), dir, t, |p| {
        p.cip()
            .is_some_and(|c| segment_matches(c, SEGMENT_CLASS, v))
    })
}

fn eval_instance(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(Some(Dir::ToServer), dir, t, |p| {
        p.cip()
            .is_some_and(|c| segment_matches(c, SEGMENT_INSTANCE, v))
    })
}

fn attribute_matches(c: &Cip, v: &KwValue) -> bool {
    let CipDir::Request { payload, .. } = &c.dir else {
        return false;
    };
    has_segment(c, SEGMENT_ATTRIBUTE, &|x| num(v, u64::from(x)))
        || match payload {
            RequestPayload::GetAttributeList(l) => l.iter().any(|&a| num(v, u64::from(a))),
            RequestPayload::SetAttributeList(Some(a)) => num(v, u64::from(*a)),
            RequestPayload::Multiple(m) => m.packets.iter().any(|p| attribute_matches(p, v)),
            _ => false,
        }
}

fn eval_attribute(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(Some(Dir::ToServer), dir, t, |p| {
        p.cip().is_some_and(|c| attribute_matches(c, v))
    })
}

fn status_matches(c: &Cip, f: &dyn Fn(&u8, &[u8]) -> bool) -> bool {
    match &c.dir {
        CipDir::Response {
            status,
            status_extended,
            multiple,
        } => {
            f(status, status_extended)
                || multiple
                    .as_ref()
                    .is_some_and(|m| m.packets.iter().any(|p| status_matches(p, f)))
        }
        _ => false,
    }
}

fn eval_cip_status(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(Some(Dir::ToClient), dir, t, |p| {
        p.cip()
            .is_some_and(|c| status_matches(c, &|s, _| num(v, u64::from(*s))))
    })
}

fn eval_extended_status(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(Some(Dir::ToClient), dir, t, |p| {
        p.cip().is_some_and(|c| {
            status_matches(c, &|_, ext| {
                matches!(ext, [lo, hi] if num(v, u64::from(u16::from_le_bytes([*lo, *hi]))))
            })
        })
    })
}

/// A reply's identity field.
fn identity(
    v: &KwValue,
    dir: Dir,
    t: &dyn Transaction,
    f: impl Fn(&parser::Identity) -> u64,
) -> Option<bool> {
    on(Some(Dir::ToClient), dir, t, |p| {
        p.identity().is_some_and(|i| num(v, f(i)))
    })
}

fn eval_revision(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    identity(v, dir, t, |i| {
        u64::from(u16::from(i.revision_major) << 8 | u16::from(i.revision_minor))
    })
}
fn eval_identity_status(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    identity(v, dir, t, |i| u64::from(i.status))
}
fn eval_state(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    identity(v, dir, t, |i| u64::from(i.state))
}
fn eval_serial(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    identity(v, dir, t, |i| u64::from(i.serial))
}
fn eval_product_code(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    identity(v, dir, t, |i| u64::from(i.product_code))
}
fn eval_device_type(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    identity(v, dir, t, |i| u64::from(i.device_type))
}
fn eval_vendor_id(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    identity(v, dir, t, |i| u64::from(i.vendor_id))
}

fn eval_capabilities(v: &KwValue, dir: Dir, _: i64, t: &dyn Transaction) -> Option<bool> {
    on(Some(Dir::ToClient), dir, t, |p| {
        p.services()
            .is_some_and(|s| num(v, u64::from(s.capabilities)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_suricata_takes_them() {
        assert_eq!(
            parse_command(Some("list_identity")),
            Ok(KwValue::Num(NumCmp::Eq(0x63)))
        );
        assert_eq!(parse_command(Some("99")), Ok(KwValue::Num(NumCmp::Eq(99))));
        assert_eq!(
            parse_status(Some("!invalid_cmd")),
            Ok(KwValue::Num(NumCmp::Ne(1)))
        );
        assert_eq!(parse_u8(Some(">3")), Ok(KwValue::Num(NumCmp::Gt(3))));
        assert!(parse_u8(Some("300")).is_err());
        assert!(parse_command(Some("bogus")).is_err());
        assert_eq!(
            parse_cip_service(Some("16, 246, 6")),
            Ok(KwValue::Words([16, 1 << 32 | 246, 1 << 32 | 6, 0]))
        );
        assert_eq!(
            parse_cip_service(Some("1,2,!3")),
            Ok(KwValue::Words([1, 1 << 32 | 2, 0, 0]))
        );
        for bad in ["202", "123,toto", "1,2,3,4", ""] {
            assert!(parse_cip_service(Some(bad)).is_err(), "{bad}");
        }
    }
}
