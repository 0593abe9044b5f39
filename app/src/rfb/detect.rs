//! The inspection buffers and keywords of an RFB handshake, as Suricata's: `rfb.name`
//! (the server's desktop name, a sticky buffer), `rfb.sectype` (the security type in
//! use, inspected toward the server) and `rfb.secresult` (the SecurityResult,
//! inspected toward the client), and the `pdu` frames of the handshake's messages.

use super::state::RfbTx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, FrameMeta, Transaction};

pub const NAME: BufferId = BufferId::of(AppProto::Rfb, 1);

/// The sticky buffers of RFB.
pub static BUFFERS: &[BufferDef] = &[def(
    "rfb.name",
    &[],
    None,
    AppProto::Rfb,
    None,
    Some(NAME),
    false,
)];

pub const FRAME_PDU_TS: BufferId = BufferId::of(AppProto::Rfb, 100);
pub const FRAME_PDU_TC: BufferId = BufferId::of(AppProto::Rfb, 101);

/// The frames of RFB (`frame:pdu`, `frame:rfb.pdu`): one per handshake message.
pub static FRAMES: &[BufferDef] = &[def(
    "pdu",
    &[],
    None,
    AppProto::Rfb,
    Some(FRAME_PDU_TS),
    Some(FRAME_PDU_TC),
    true,
)];

/// A frame buffer's direction.
pub fn frame_dir(id: BufferId) -> Option<Dir> {
    match id {
        FRAME_PDU_TS => Some(Dir::ToServer),
        FRAME_PDU_TC => Some(Dir::ToClient),
        _ => None,
    }
}

pub fn buffer(tx: &RfbTx, id: BufferId, index: usize) -> Buf<'_> {
    if let Some(dir) = frame_dir(id) {
        let d = dir.index();
        let done = tx.frames_done[d] || tx.complete(dir);
        return match tx.frames[d].get(index) {
            Some(f) => match tx.frame_bytes(d, f) {
                (b, true) if done => Buf::Ready(b),
                // Partial while more may come: a rule that does not match the frames
                // so far is tried again on the next.
                (b, _) => Buf::Partial(b),
            },
            None if done => Buf::Absent,
            None if index == 0 => Buf::NotYet,
            None => Buf::Absent,
        };
    }
    if id != NAME || index > 0 {
        return Buf::Absent;
    }
    match &tx.server_init {
        // Suricata has no buffer for an empty name.
        Some(s) if !s.name.is_empty() => Buf::Ready(&s.name),
        Some(_) => Buf::Absent,
        None if tx.complete(Dir::ToClient) => Buf::Absent,
        None => Buf::NotYet,
    }
}

/// [`crate::Transaction::frame`]: Suricata attaches RFB frames to no transaction.
pub fn frame_meta(tx: &RfbTx, id: BufferId, index: usize) -> Option<FrameMeta> {
    let d = frame_dir(id)?.index();
    let f = tx.frames[d].get(index)?;
    let (b, complete) = tx.frame_bytes(d, f);
    Some(FrameMeta {
        id: f.id,
        stream_offset: Some(f.offset),
        complete,
        tx_id: None,
        length: (f.len > b.len() as u64).then_some(f.len),
    })
}

/// RFB's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("rfb.sectype", &[], parse_sectype, eval_sectype),
    KeywordDef::check("rfb.secresult", &[], parse_secresult, eval_secresult),
];

/// SecurityResult names `rfb.secresult` takes (any case), as Suricata's.
const SECRESULT_NAMES: &[(u64, &str)] = &[(0, "ok"), (1, "fail"), (2, "too_many"), (3, "unknown")];

/// An unsigned 32-bit comparison (Suricata's integer keyword syntax), or one of `names`
/// (`!` before a name negates it).
fn parse_u32(v: Option<&str>, names: &[(u64, &str)]) -> Result<KwValue, String> {
    let s = required(v)?;
    let (neg, word) = match s.strip_prefix('!') {
        Some(w) => (true, w.trim()),
        None => (false, s),
    };
    if let Some(&(n, _)) = names
        .iter()
        .find(|(_, name)| name.eq_ignore_ascii_case(word))
    {
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
    if bound > u64::from(u32::MAX) {
        return Err(format!("`{s}` is out of range (at most {})", u32::MAX));
    }
    Ok(KwValue::Num(cmp))
}

fn parse_sectype(v: Option<&str>) -> Result<KwValue, String> {
    parse_u32(v, &[])
}

fn parse_secresult(v: Option<&str>) -> Result<KwValue, String> {
    parse_u32(v, SECRESULT_NAMES)
}

/// Compares the value `get` reads from the transaction, inspected in `only`: not
/// there yet, undecided until the transaction is complete.
fn eval(
    v: &KwValue,
    dir: Dir,
    only: Dir,
    t: &dyn Transaction,
    get: impl FnOnce(&RfbTx) -> Option<u32>,
) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    if dir != only {
        return Some(false);
    }
    let tx = t.as_any()?.downcast_ref::<RfbTx>()?;
    match get(tx) {
        Some(x) => Some(cmp.test(u64::from(x))),
        None if tx.complete(dir) => Some(false),
        None => None,
    }
}

fn eval_sectype(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, Dir::ToServer, t, |tx| tx.security_type)
}

fn eval_secresult(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, Dir::ToClient, t, |tx| tx.security_result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values() {
        assert_eq!(
            parse_secresult(Some("TOO_MANY")),
            Ok(KwValue::Num(NumCmp::Eq(2)))
        );
        assert_eq!(
            parse_secresult(Some("!ok")),
            Ok(KwValue::Num(NumCmp::Ne(0)))
        );
        assert_eq!(parse_secresult(Some("!0")), Ok(KwValue::Num(NumCmp::Ne(0))));
        assert!(parse_secresult(Some("toomany")).is_err());
        assert!(parse_secresult(Some("4294967296")).is_err());
        assert_eq!(parse_sectype(Some(">=3")), Ok(KwValue::Num(NumCmp::Ge(3))));
        assert!(parse_sectype(Some("x")).is_err());
        assert!(parse_sectype(None).is_err());
    }
}
