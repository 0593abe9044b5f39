//! Kerberos 5's keywords, as Suricata 8's: the `krb5.cname` and `krb5.sname` sticky
//! buffers (`krb5_cname`, `krb5_sname`; one item per name component, and only to the
//! client: Suricata registers them for replies and errors alone), `krb5_msg_type`
//! and `krb5_err_code` (a number of at most three digits), and
//! `krb5.ticket_encryption` (`weak`, `!weak`, or a list of encryption types by number
//! or name). Each message is inspected in the direction it came only.

use super::state::Krb5Tx;
use crate::buffers::{BufferDef, def};
use crate::descriptor::KeywordDef;
use crate::value::{KwValue, required};
use crate::{AppProto, Buf, BufferId, Dir, Transaction};

pub const CNAME_TC: BufferId = BufferId::of(AppProto::Krb5, 1);
pub const SNAME_TC: BufferId = BufferId::of(AppProto::Krb5, 2);

/// The sticky buffers of Kerberos 5.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "krb5.cname",
        &["krb5_cname"],
        None,
        AppProto::Krb5,
        None,
        Some(CNAME_TC),
        true,
    ),
    def(
        "krb5.sname",
        &["krb5_sname"],
        None,
        AppProto::Krb5,
        None,
        Some(SNAME_TC),
        true,
    ),
];

/// [`crate::Transaction::buffer`] of a Kerberos transaction: the name's components.
pub fn buffer(tx: &Krb5Tx, id: BufferId, index: usize) -> Buf<'_> {
    let name = match id {
        CNAME_TC => &tx.msg.cname,
        SNAME_TC => &tx.msg.sname,
        _ => return Buf::Absent,
    };
    if tx.dir != Dir::ToClient {
        return Buf::Absent;
    }
    match name.as_ref().and_then(|n| n.get(index)) {
        Some(part) => Buf::Ready(part.as_bytes()),
        None => Buf::Absent,
    }
}

/// Kerberos 5's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("krb5_msg_type", &[], parse_msg_type, eval_msg_type),
    KeywordDef::check("krb5_err_code", &[], parse_err_code, eval_err_code),
    KeywordDef::check(
        "krb5.ticket_encryption",
        &[],
        parse_ticket_encryption,
        eval_ticket_encryption,
    ),
];

/// A number of one to three digits, as Suricata's `krb5_msg_type` and
/// `krb5_err_code` take them (no operator, no sign).
fn three_digits(v: Option<&str>) -> Result<u64, String> {
    let s = required(v)?;
    if s.is_empty() || s.len() > 3 || !s.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!("`{s}` is not a number of at most three digits"));
    }
    s.parse().map_err(|_| format!("bad number `{s}`"))
}

fn parse_msg_type(v: Option<&str>) -> Result<KwValue, String> {
    let n = three_digits(v)?;
    if n > u64::from(u8::MAX) {
        return Err(format!("message type {n} is out of range (at most 255)"));
    }
    Ok(KwValue::Exact(n))
}

fn parse_err_code(v: Option<&str>) -> Result<KwValue, String> {
    three_digits(v).map(KwValue::Exact)
}

fn tx_of(t: &dyn Transaction, dir: Dir) -> Option<&Krb5Tx> {
    t.as_any()?
        .downcast_ref::<Krb5Tx>()
        .filter(|tx| tx.dir == dir)
}

fn eval_msg_type(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Exact(want) = *v else {
        return Some(false);
    };
    Some(tx_of(t, dir).is_some_and(|tx| u64::from(tx.msg.msg_type) == want))
}

fn eval_err_code(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Exact(want) = *v else {
        return Some(false);
    };
    Some(
        tx_of(t, dir)
            .and_then(|tx| tx.msg.error_code)
            .is_some_and(|c| i64::from(c) == want as i64),
    )
}

/// Most encryption types in one `krb5.ticket_encryption` list (they are packed in a
/// [`KwValue::Words`]).
pub const MAX_ETYPES: usize = 6;

/// `krb5.ticket_encryption` modes (the low byte of the first word; the count of
/// types is in the second byte).
const WEAK: u64 = 1;
const NOT_WEAK: u64 = 2;
const LIST: u64 = 3;

/// The encryption type names Suricata accepts (and writes in EVE `encryption`), with
/// their numbers (RFC 3961 §8 and the IANA registry, `kerberos-parser`'s spelling).
pub const ETYPES: &[(&str, i32)] = &[
    ("des-cbc-crc", 1),
    ("des-cbc-md4", 2),
    ("des-cbc-md5", 3),
    ("des3-cbc-md5", 5),
    ("des3-cbc-sha1", 7),
    ("dsaWithSHA1-CmsOID", 9),
    ("md5WithRSAEncryption-CmsOID", 10),
    ("sha1WithRSAEncryption-CmsOID", 11),
    ("rc2CBC-EnvOID", 12),
    ("rsaEncryption-EnvOID", 13),
    ("rsaES-OAEP-ENV-OID", 14),
    ("des-ede3-cbc-Env-OID", 15),
    ("des3-cbc-sha1-kd", 16),
    ("aes128-cts-hmac-sha1-96", 17),
    ("aes256-cts-hmac-sha1-96", 18),
    ("aes128-cts-hmac-sha256-128", 19),
    ("aes256-cts-hmac-sha384-192", 20),
    ("rc4-hmac", 23),
    ("rc4-hmac-exp", 24),
    ("camellia128-cts-cmac", 25),
    ("camellia256-cts-cmac", 26),
    ("subkey-keymaterial", 65),
    ("rc4-md4", -128),
    ("rc4-plain2", -129),
    ("rc4-lm", -130),
    ("rc4-sha", -131),
    ("des-plain", -132),
    ("rc4-hmac-OLD", -133),
    ("rc4-plain-OLD", -134),
    ("rc4-hmac-OLD-exp", -135),
    ("rc4-plain-OLD-exp", -136),
    ("rc4-plain", -140),
    ("rc4-plain-exp", -141),
];

/// `weak`, `!weak`, or types by number or name separated by commas or spaces (a
/// trailing comma allowed, an empty item not), as Suricata's.
fn parse_ticket_encryption(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    match s {
        "weak" => return Ok(KwValue::Words([WEAK, 0, 0, 0])),
        "!weak" => return Ok(KwValue::Words([NOT_WEAK, 0, 0, 0])),
        _ => {}
    }
    let mut types = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let end = rest.find([',', ' ']).unwrap_or(rest.len());
        let item = &rest[..end];
        if item.is_empty() {
            return Err(format!("`{s}`: an empty encryption type"));
        }
        let t = ETYPES
            .iter()
            .find(|(n, _)| *n == item)
            .map(|&(_, t)| t)
            .or_else(|| item.parse::<i32>().ok())
            .ok_or_else(|| format!("`{item}` is no encryption type"))?;
        if types.len() == MAX_ETYPES {
            return Err(format!("more than {MAX_ETYPES} encryption types"));
        }
        types.push(t);
        rest = rest[end..].trim_start_matches(' ');
        if let Some(r) = rest.strip_prefix(',') {
            rest = r.trim_start_matches(' ');
        }
    }
    let mut w = [LIST | ((types.len() as u64) << 8), 0, 0, 0];
    for (i, &t) in types.iter().enumerate() {
        w[1 + i / 2] |= u64::from(t as u32) << (32 * (i % 2));
    }
    Ok(KwValue::Words(w))
}

fn eval_ticket_encryption(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    let KwValue::Words(w) = *v else {
        return Some(false);
    };
    let Some(etype) = tx_of(t, dir).and_then(|tx| tx.msg.ticket_etype) else {
        return Some(false);
    };
    Some(match w[0] & 0xff {
        WEAK => super::parser::weak(etype),
        NOT_WEAK => !super::parser::weak(etype),
        _ => {
            let n = ((w[0] >> 8) & 0xff) as usize;
            (0..n.min(MAX_ETYPES)).any(|i| (w[1 + i / 2] >> (32 * (i % 2))) as u32 as i32 == etype)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_parse_as_suricata_s() {
        for ok in ["10", " 10 ", "010", "255"] {
            assert!(parse_msg_type(Some(ok)).is_ok(), "{ok}");
        }
        for bad in [
            ">10", "10-12", "!10", "0x0a", "256", "0255", "+10", "-1", "1 0",
        ] {
            assert!(parse_msg_type(Some(bad)).is_err(), "{bad}");
        }
        assert!(parse_err_code(Some("999")).is_ok());
        assert!(parse_err_code(Some("1000")).is_err());
        assert!(parse_err_code(Some("!0")).is_err());
        for ok in [
            "weak",
            "!weak",
            "23",
            "-128",
            "rc4-hmac,aes256-cts-hmac-sha1-96",
            "rc4-hmac  aes256-cts-hmac-sha1-96",
            "23, 18",
            "23 ,18",
            "23,",
            "dsaWithSHA1-CmsOID",
        ] {
            assert!(parse_ticket_encryption(Some(ok)).is_ok(), "{ok}");
        }
        for bad in [
            "!23",
            "!rc4-hmac",
            "RC4-HMAC",
            "foo",
            "weak,23",
            ",23",
            "23, ,18",
            "2147483648",
            "1,2,3,4,5,6,7",
        ] {
            assert!(parse_ticket_encryption(Some(bad)).is_err(), "{bad}");
        }
    }
}
