//! The inspection buffers and keywords of an FTP transaction, as Suricata's: the
//! command's `ftp.command` and `ftp.command_data` (to the server), the reply lines'
//! `ftp.reply` and `ftp.completion_code` (to the client, one item per line), and
//! `ftp.dynamic_port`, `ftp.mode`, `ftp.reply_received`, and `ftpbounce`.
//!
//! Reply buffers and keywords about the reply are final once the transaction's final
//! reply came (or the server's side ended); until then they wait for it.

use super::state::{FtpTx, Mode};
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const COMMAND: BufferId = BufferId::of(AppProto::Ftp, 1);
pub const COMMAND_DATA: BufferId = BufferId::of(AppProto::Ftp, 2);
pub const REPLY: BufferId = BufferId::of(AppProto::Ftp, 3);
pub const COMPLETION_CODE: BufferId = BufferId::of(AppProto::Ftp, 4);

/// The sticky buffers of FTP.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "ftp.command",
        &[],
        None,
        AppProto::Ftp,
        Some(COMMAND),
        None,
        false,
    ),
    def(
        "ftp.command_data",
        &[],
        None,
        AppProto::Ftp,
        Some(COMMAND_DATA),
        None,
        false,
    ),
    def(
        "ftp.reply",
        &[],
        None,
        AppProto::Ftp,
        None,
        Some(REPLY),
        true,
    ),
    def(
        "ftp.completion_code",
        &[],
        None,
        AppProto::Ftp,
        None,
        Some(COMPLETION_CODE),
        true,
    ),
];

/// Whether the transaction's replies are final.
fn settled(tx: &FtpTx) -> bool {
    tx.done || tx.closed
}

/// Item `index` of a reply multi-buffer whose items `items` gives.
fn reply_item<'a>(
    tx: &'a FtpTx,
    index: usize,
    mut items: impl Iterator<Item = &'a [u8]>,
) -> Buf<'a> {
    match items.nth(index) {
        Some(b) if settled(tx) => Buf::Ready(b),
        Some(b) => Buf::Partial(b),
        None if settled(tx) => Buf::Absent,
        None => Buf::NotYet,
    }
}

pub fn buffer(tx: &FtpTx, id: BufferId, index: usize) -> Buf<'_> {
    match id {
        COMMAND => match tx.command {
            Some(c) if index == 0 => Buf::Ready(c.name.as_bytes()),
            _ => Buf::Absent,
        },
        COMMAND_DATA => match tx.command {
            Some(_) if index == 0 && !tx.data.is_empty() => Buf::Ready(&tx.data),
            _ => Buf::Absent,
        },
        REPLY => reply_item(tx, index, tx.replies.iter().map(|r| &r.text[..])),
        COMPLETION_CODE => reply_item(
            tx,
            index,
            tx.replies
                .iter()
                .filter_map(|r| r.code.as_ref().map(|c| &c[..])),
        ),
        _ => Buf::Absent,
    }
}

/// FTP's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("ftp.dynamic_port", &[], parse_port, eval_port),
    KeywordDef::check("ftp.mode", &[], parse_mode, eval_mode),
    KeywordDef::check("ftp.reply_received", &[], parse_yes_no, eval_reply_received),
    KeywordDef::check("ftpbounce", &[], crate::value::no_value, eval_bounce),
];

/// `ftpbounce`: a PORT command naming another host than the client (RFC 2577's bounce
/// attack: the server is made to connect to a third host). A property of the command:
/// inspected to the server only, as Suricata's.
fn eval_bounce(_v: &KwValue, dir: Dir, _now: i64, tx: &dyn Transaction) -> Option<bool> {
    Some(dir == Dir::ToServer && ftp_tx(tx).is_some_and(|t| t.bounce == Some(true)))
}

fn ftp_tx(tx: &dyn Transaction) -> Option<&FtpTx> {
    tx.as_any()?.downcast_ref::<FtpTx>()
}

/// `ftp.dynamic_port`: a `u16` comparison.
fn parse_port(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    let max = u64::from(u16::MAX);
    match parse_num_cmp(val) {
        Some(c) if cmp_fits(c, max) => Ok(KwValue::Num(c)),
        _ => Err(format!("bad value `{val}`")),
    }
}

fn cmp_fits(c: NumCmp, max: u64) -> bool {
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

/// The answer about a property the replies give (`None` while they may still).
fn when_settled(tx: &FtpTx, known: Option<bool>) -> Option<bool> {
    match known {
        Some(r) => Some(r),
        None if settled(tx) => Some(false),
        None => None,
    }
}

fn eval_port(v: &KwValue, _dir: Dir, _now: i64, tx: &dyn Transaction) -> Option<bool> {
    let (KwValue::Num(c), Some(tx)) = (v, ftp_tx(tx)) else {
        return Some(false);
    };
    when_settled(tx, tx.dyn_port.map(|p| c.test(u64::from(p))))
}

/// `ftp.mode:active|passive`.
fn parse_mode(v: Option<&str>) -> Result<KwValue, String> {
    match required(v)? {
        "active" => Ok(KwValue::Exact(0)),
        "passive" => Ok(KwValue::Exact(1)),
        other => Err(format!("bad mode `{other}` (active or passive)")),
    }
}

fn eval_mode(v: &KwValue, _dir: Dir, _now: i64, tx: &dyn Transaction) -> Option<bool> {
    let (KwValue::Exact(want), Some(tx)) = (v, ftp_tx(tx)) else {
        return Some(false);
    };
    let is = |m: Mode| u64::from(m == Mode::Passive) == *want;
    when_settled(tx, tx.mode.map(is))
}

/// `ftp.reply_received:yes|no` (or `on`/`off`, `true`/`false`, `1`/`0`).
fn parse_yes_no(v: Option<&str>) -> Result<KwValue, String> {
    match required(v)?.to_ascii_lowercase().as_str() {
        "yes" | "on" | "true" | "1" => Ok(KwValue::Exact(1)),
        "no" | "off" | "false" | "0" => Ok(KwValue::Exact(0)),
        other => Err(format!("bad value `{other}` (yes or no)")),
    }
}

/// Known once the final reply came (yes) or the server's side ended without it (no).
fn eval_reply_received(v: &KwValue, _dir: Dir, _now: i64, tx: &dyn Transaction) -> Option<bool> {
    let (KwValue::Exact(want), Some(tx)) = (v, ftp_tx(tx)) else {
        return Some(false);
    };
    if !settled(tx) {
        return None;
    }
    Some(u64::from(tx.done) == *want)
}
