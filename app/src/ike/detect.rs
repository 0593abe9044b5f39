//! IKE's keywords, as Suricata's: the `ike.init_spi` (toward the server) and
//! `ike.resp_spi` (toward the client) buffers of the SPIs in hex, `ike.vendor` (the
//! vendor ids in hex, toward the server), `ike.key_exchange_payload` and
//! `ike.nonce_payload` (the message's), and the checks `ike.exchtype`,
//! `ike.key_exchange_payload_length`, `ike.nonce_payload_length` and
//! `ike.chosen_sa_attribute` (the responder's chosen transform; for IKEv2 its
//! message's first transform of the kind). A message is inspected in the direction it
//! came only; the key exchange, nonce and vendor keywords see IKEv1 messages only, as
//! Suricata's.

use super::state::IkeTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, parse_u64, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const INIT_SPI: BufferId = BufferId::of(AppProto::Ike, 1);
pub const RESP_SPI: BufferId = BufferId::of(AppProto::Ike, 2);
pub const VENDOR: BufferId = BufferId::of(AppProto::Ike, 3);
pub const KEY_EXCHANGE_TS: BufferId = BufferId::of(AppProto::Ike, 4);
pub const KEY_EXCHANGE_TC: BufferId = BufferId::of(AppProto::Ike, 5);
pub const NONCE_TS: BufferId = BufferId::of(AppProto::Ike, 6);
pub const NONCE_TC: BufferId = BufferId::of(AppProto::Ike, 7);

/// The sticky buffers of IKE.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "ike.init_spi",
        &[],
        None,
        AppProto::Ike,
        Some(INIT_SPI),
        None,
        false,
    ),
    def(
        "ike.resp_spi",
        &[],
        None,
        AppProto::Ike,
        None,
        Some(RESP_SPI),
        false,
    ),
    def(
        "ike.vendor",
        &[],
        None,
        AppProto::Ike,
        Some(VENDOR),
        None,
        true,
    ),
    def(
        "ike.key_exchange_payload",
        &[],
        None,
        AppProto::Ike,
        Some(KEY_EXCHANGE_TS),
        Some(KEY_EXCHANGE_TC),
        false,
    ),
    def(
        "ike.nonce_payload",
        &[],
        None,
        AppProto::Ike,
        Some(NONCE_TS),
        Some(NONCE_TC),
        false,
    ),
];

fn nonempty(b: &[u8]) -> Buf<'_> {
    if b.is_empty() {
        Buf::Absent
    } else {
        Buf::Ready(b)
    }
}

/// [`crate::Transaction::buffer`] of an IKE transaction.
pub fn buffer(tx: &IkeTx, id: BufferId, index: usize) -> Buf<'_> {
    let dir = match id {
        INIT_SPI | VENDOR | KEY_EXCHANGE_TS | NONCE_TS => Dir::ToServer,
        RESP_SPI | KEY_EXCHANGE_TC | NONCE_TC => Dir::ToClient,
        _ => return Buf::Absent,
    };
    if dir != tx.dir {
        return Buf::Absent;
    }
    if id == VENDOR {
        return tx
            .vendor_hex
            .get(index)
            .map_or(Buf::Absent, |v| Buf::Ready(v));
    }
    if index > 0 {
        return Buf::Absent;
    }
    match id {
        INIT_SPI => Buf::Ready(&tx.init_hex),
        RESP_SPI => Buf::Ready(&tx.resp_hex),
        _ => {
            let Some(p) = &tx.payloads else {
                return Buf::Absent;
            };
            match id {
                KEY_EXCHANGE_TS | KEY_EXCHANGE_TC => nonempty(&p.key_exchange),
                _ => nonempty(&p.nonce),
            }
        }
    }
}

/// IKE's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("ike.exchtype", &[], parse_u8, eval_exchtype),
    KeywordDef::check(
        "ike.key_exchange_payload_length",
        &[],
        parse_u32,
        eval_ke_len,
    ),
    KeywordDef::check("ike.nonce_payload_length", &[], parse_u32, eval_nonce_len),
    KeywordDef::check(
        "ike.chosen_sa_attribute",
        &[],
        parse_attribute,
        eval_attribute,
    ),
];

/// The names of the SA attribute classes (RFC 2409 Appendix A), as Suricata's EVE
/// and `ike.chosen_sa_attribute` spell them; index = class.
pub const ATTRIBUTE_NAMES: &[&str] = &[
    "unknown",
    "alg_enc",
    "alg_hash",
    "alg_auth",
    "alg_dh",
    "sa_group_type",
    "sa_group_prime",
    "sa_group_generator_one",
    "sa_group_generator_two",
    "sa_group_curve_a",
    "sa_group_curve_b",
    "sa_life_type",
    "sa_life_duration",
    "alg_prf",
    "sa_key_length",
    "sa_field_size",
    "sa_group_order",
];

/// The name of attribute class `kind`.
pub fn attribute_name(kind: u16) -> &'static str {
    ATTRIBUTE_NAMES
        .get(usize::from(kind))
        .copied()
        .unwrap_or("unknown")
}

fn parse_bounded(v: Option<&str>, max: u64) -> Result<KwValue, String> {
    let s = required(v)?;
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
    parse_bounded(v, u64::from(u8::MAX))
}

fn parse_u32(v: Option<&str>) -> Result<KwValue, String> {
    parse_bounded(v, u64::from(u32::MAX))
}

/// `name=value`: an attribute class of [`ATTRIBUTE_NAMES`] and its value.
fn parse_attribute(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let (name, value) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}` is not name=value"))?;
    let kind = ATTRIBUTE_NAMES
        .iter()
        .skip(1)
        .position(|n| *n == name.trim())
        .ok_or_else(|| format!("unknown SA attribute `{}`", name.trim()))?
        + 1;
    let value = parse_u64(value)
        .filter(|&v| v <= u64::from(u32::MAX))
        .ok_or_else(|| format!("bad value `{}`", value.trim()))?;
    Ok(KwValue::Words([kind as u64, value, 0, 0]))
}

fn tx_of(t: &dyn Transaction) -> Option<&IkeTx> {
    t.as_any()?.downcast_ref::<IkeTx>()
}

fn eval_num(
    v: &KwValue,
    dir: Dir,
    t: &dyn Transaction,
    get: impl FnOnce(&IkeTx) -> Option<u64>,
) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let tx = tx_of(t)?;
    if tx.dir != dir {
        return Some(false);
    }
    Some(get(tx).is_some_and(|x| cmp.test(x)))
}

fn eval_exchtype(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval_num(v, dir, t, |tx| Some(u64::from(tx.header.exch_type)))
}

fn eval_ke_len(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval_num(v, dir, t, |tx| {
        let p = tx.payloads.as_ref()?;
        (!p.key_exchange.is_empty()).then_some(p.key_exchange.len() as u64)
    })
}

fn eval_nonce_len(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval_num(v, dir, t, |tx| {
        let p = tx.payloads.as_ref()?;
        (!p.nonce.is_empty()).then_some(p.nonce.len() as u64)
    })
}

/// The message's first transform (a responder's chosen one), toward the client.
fn eval_attribute(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Words([kind, value, ..]) = *v else {
        return Some(false);
    };
    let tx = tx_of(t)?;
    if dir != Dir::ToClient || tx.dir != dir {
        return Some(false);
    }
    if let Some(m) = &tx.v2 {
        // IKEv2: the message's first transform of the attribute's kind.
        let kind = match kind {
            1 => super::v2::TT_ENCR,
            3 => super::v2::TT_INTEG,
            4 => super::v2::TT_DH,
            13 => super::v2::TT_PRF,
            _ => return Some(false),
        };
        return Some(
            m.chosen
                .iter()
                .find(|t| t.kind == kind)
                .is_some_and(|t| u64::from(t.id) == value),
        );
    }
    let Some(first) = tx.payloads.as_ref().and_then(|p| p.transforms.first()) else {
        return Some(false);
    };
    Some(
        first
            .iter()
            .any(|a| u64::from(a.kind) == kind && a.numeric.map(u64::from) == Some(value)),
    )
}
