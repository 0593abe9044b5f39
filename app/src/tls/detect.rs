//! The inspection buffers of a TLS connection: `tls.sni`, `ja3.*`, `ja3s.*`, `ja4.hash`
//! (client/server hellos), `tls.cert_*`, `tls.certs`, `tls.subjectaltname` (the
//! server's first certificate, TLS 1.2 and older), `tls.random*` (each side's hello),
//! and the values of `tls.version`, `ssl_version` (per direction), `ssl_state` and
//! `tls_cert_notbefore`/`tls_cert_notafter`.

use super::state::TlsTx;
use crate::AppProto;
use crate::Transaction;
use crate::buffers::{BufferDef, def};
use crate::descriptor::{KeywordDef, KeywordKind};
use crate::value::{DateCmp, KwValue, negation, no_value, parse_u64, required};
use crate::{Buf, BufferId, Dir};

pub const SNI: BufferId = BufferId::of(AppProto::Tls, 1);
pub const CERT_SUBJECT: BufferId = BufferId::of(AppProto::Tls, 2);
pub const CERT_ISSUER: BufferId = BufferId::of(AppProto::Tls, 3);
pub const CERT_SERIAL: BufferId = BufferId::of(AppProto::Tls, 4);
pub const CERT_FINGERPRINT: BufferId = BufferId::of(AppProto::Tls, 5);
pub const JA3_HASH: BufferId = BufferId::of(AppProto::Tls, 6);
pub const JA3_STRING: BufferId = BufferId::of(AppProto::Tls, 7);
pub const JA3S_HASH: BufferId = BufferId::of(AppProto::Tls, 8);
pub const JA3S_STRING: BufferId = BufferId::of(AppProto::Tls, 9);
/// `tls.certs`: one item per certificate (DER).
pub const CERTS: BufferId = BufferId::of(AppProto::Tls, 10);
/// `tls.subjectaltname`: one item per SAN.
pub const SUBJECTALTNAME: BufferId = BufferId::of(AppProto::Tls, 11);
pub const JA4_HASH: BufferId = BufferId::of(AppProto::Tls, 12);
/// Not a sticky buffer: 2 bytes, big endian, of the TLS version the server chose
/// (or the client offered, before the ServerHello), for `tls.version`/`ssl_version`.
pub const VERSION_NUM: BufferId = BufferId::of(AppProto::Tls, 21);
/// Not a sticky buffer: 1 byte, the bit set of `ssl_state` states seen
/// (1 client_hello, 2 server_hello, 4 client_keyx, 8 server_keyx, 16 unknown).
pub const STATE: BufferId = BufferId::of(AppProto::Tls, 22);
/// `tls.random` of the ClientHello (32 bytes).
pub const RANDOM_CLIENT: BufferId = BufferId::of(AppProto::Tls, 23);
/// `tls.random` of the ServerHello.
pub const RANDOM_SERVER: BufferId = BufferId::of(AppProto::Tls, 24);
/// `tls.random_time`: the first 4 bytes of the ClientHello random.
pub const RANDOM_TIME_CLIENT: BufferId = BufferId::of(AppProto::Tls, 25);
pub const RANDOM_TIME_SERVER: BufferId = BufferId::of(AppProto::Tls, 26);
/// `tls.random_bytes`: the last 28 bytes of the ClientHello random.
pub const RANDOM_BYTES_CLIENT: BufferId = BufferId::of(AppProto::Tls, 27);
pub const RANDOM_BYTES_SERVER: BufferId = BufferId::of(AppProto::Tls, 28);
/// Not a sticky buffer: 2 bytes, big endian, the version the client's hello shows
/// (`ssl_version` on `to_server`).
pub const VERSION_CLIENT: BufferId = BufferId::of(AppProto::Tls, 29);
/// Not a sticky buffer: the version the server's hello chose (`ssl_version` on
/// `to_client`).
pub const VERSION_SERVER: BufferId = BufferId::of(AppProto::Tls, 30);
/// Not a sticky buffer: 8 bytes, big-endian i64 seconds since the epoch, the server
/// certificate's notBefore (`tls_cert_notbefore`).
pub const NOTBEFORE: BufferId = BufferId::of(AppProto::Tls, 31);
/// Not a sticky buffer: the server certificate's notAfter (`tls_cert_notafter`).
pub const NOTAFTER: BufferId = BufferId::of(AppProto::Tls, 32);

/// TLS's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("tls.version", &[], parse_version, eval_version),
    KeywordDef::check("ssl_version", &[], parse_ssl_version, eval_ssl_version),
    KeywordDef::check("ssl_state", &[], parse_ssl_state, eval_ssl_state),
    KeywordDef::check(
        "tls.cert_notbefore",
        &["tls_cert_notbefore"],
        parse_date_value,
        eval_notbefore,
    ),
    KeywordDef::check(
        "tls.cert_notafter",
        &["tls_cert_notafter"],
        parse_date_value,
        eval_notafter,
    ),
    KeywordDef::check("tls_cert_expired", &[], no_value, eval_expired),
    KeywordDef::check("tls_cert_valid", &[], no_value, eval_valid),
    // Legacy keywords: a case-sensitive inclusion match on the certificate field
    // (`tls.fingerprint` ignores case, fingerprints being hex), `!` negates.
    legacy("tls.subject", "tls.cert_subject", false),
    legacy("tls.issuerdn", "tls.cert_issuer", false),
    legacy("tls.fingerprint", "tls.cert_fingerprint", true),
    // `tls.store` asks Suricata to store certificates on disk; the detection is
    // unaffected. Accepted (a TLS rule); no certificate is stored.
    KeywordDef {
        name: "tls.store",
        aliases: &["tls_store"],
        kind: KeywordKind::Marker,
    },
];

const fn legacy(name: &'static str, buffer: &'static str, nocase: bool) -> KeywordDef {
    KeywordDef {
        name,
        aliases: &[],
        kind: KeywordKind::BufferContent {
            buffer,
            nocase,
            extension: false,
        },
    }
}

/// The `ssl_version` bit of a wire version: sslv2, sslv3, tls1.0, tls1.1, tls1.2, tls1.3
/// (TLS 1.3 drafts `0x7fxx` count as tls1.3). `None` for an unknown version.
pub fn ssl_version_bit(v: u16) -> Option<u8> {
    Some(match v {
        0x0200 | 0x0002 => 1,
        0x0300 => 2,
        0x0301 => 4,
        0x0302 => 8,
        0x0303 => 16,
        0x0304 => 32,
        v if v >> 8 == 0x7f => 32,
        _ => return None,
    })
}

/// `tls.version:1.2` (or a number): the exact version number.
fn parse_version(v: Option<&str>) -> Result<KwValue, String> {
    let n: u16 = match required(v)? {
        "1.0" => 0x0301,
        "1.1" => 0x0302,
        "1.2" => 0x0303,
        "1.3" => 0x0304,
        h => parse_u64(h)
            .and_then(|x| u16::try_from(x).ok())
            .ok_or_else(|| format!("unknown version `{h}`"))?,
    };
    Ok(KwValue::Exact(u64::from(n)))
}

/// `ssl_version:tls1.2,tls1.3`: the version of the direction being inspected (the
/// client's hello for `to_server`, the server's for `to_client`, as Suricata keeps one
/// per direction) is one of the list, or with a `!` (which negates the whole list, as
/// in Suricata) a known version that is none of them.
fn parse_ssl_version(v: Option<&str>) -> Result<KwValue, String> {
    let (mut mask, mut negated) = (0u64, false);
    for a in required(v)?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        let (neg, name) = negation(a);
        negated |= neg;
        mask |= match name {
            "sslv2" => 1,
            "sslv3" => 2,
            "tls1.0" => 4,
            "tls1.1" => 8,
            "tls1.2" => 16,
            "tls1.3" => 32,
            other => return Err(format!("unknown version `{other}`")),
        };
    }
    Ok(KwValue::Flags { mask, negated })
}

/// `ssl_state:client_hello|server_hello` (or `,`), `!name` negating: the states seen
/// (bits of the `STATE` pseudo-buffer).
fn parse_ssl_state(v: Option<&str>) -> Result<KwValue, String> {
    let (mut mask, mut negated) = (0u64, false);
    for a in required(v)?.split(['|', ',']).map(str::trim) {
        // `!name`, no blank after the `!` (as Suricata).
        let name = a.strip_prefix('!');
        negated |= name.is_some();
        mask |= match name.unwrap_or(a) {
            "client_hello" => 1,
            "server_hello" => 2,
            "client_keyx" => 4,
            "server_keyx" => 8,
            "unknown" => 16,
            other => return Err(format!("unknown state `{other}`")),
        };
    }
    Ok(KwValue::Flags { mask, negated })
}

fn parse_date_value(v: Option<&str>) -> Result<KwValue, String> {
    parse_date_cmp(required(v)?).map(KwValue::Date)
}

/// A 2-byte big-endian version pseudo-buffer: `Err(Some(false))` when absent,
/// `Err(None)` when not known yet.
fn version_of(tx: &dyn Transaction, id: BufferId) -> Result<u16, Option<bool>> {
    match tx.buffer(id, 0) {
        Buf::Ready(b) | Buf::Partial(b) if b.len() >= 2 => Ok(u16::from_be_bytes([b[0], b[1]])),
        Buf::Absent => Err(Some(false)),
        _ => Err(None),
    }
}

fn eval_version(v: &KwValue, _dir: Dir, _now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Exact(want) = v else {
        return Some(false);
    };
    version_of(tx, VERSION_NUM).map_or_else(|e| e, |got| Some(u64::from(got) == *want))
}

fn eval_ssl_version(v: &KwValue, dir: Dir, _now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Flags { mask, negated } = *v else {
        return Some(false);
    };
    let id = match dir {
        Dir::ToServer => VERSION_CLIENT,
        Dir::ToClient => VERSION_SERVER,
    };
    version_of(tx, id).map_or_else(
        |e| e,
        |got| Some(ssl_version_bit(got).is_some_and(|bit| (u64::from(bit) & mask != 0) != negated)),
    )
}

fn eval_ssl_state(v: &KwValue, _dir: Dir, _now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Flags { mask, negated } = *v else {
        return Some(false);
    };
    let got = match tx.buffer(STATE, 0) {
        Buf::Ready(b) | Buf::Partial(b) if !b.is_empty() => b[0],
        Buf::Absent => return Some(false),
        _ => return None,
    };
    Some((u64::from(got) & mask != 0) != negated)
}

/// A certificate date pseudo-buffer (8 bytes, big-endian seconds): certificate fields
/// exist in the server's direction only; absent, the check fails; not there yet,
/// undecided.
fn cert_time(dir: Dir, tx: &dyn Transaction, id: BufferId) -> Result<i64, Option<bool>> {
    if dir == Dir::ToServer {
        return Err(Some(false));
    }
    match tx.buffer(id, 0) {
        Buf::Ready(b) | Buf::Partial(b) if b.len() >= 8 => {
            Ok(i64::from_be_bytes(b[..8].try_into().unwrap_or_default()))
        }
        Buf::NotYet => Err(None),
        _ => Err(Some(false)),
    }
}

fn eval_date(v: &KwValue, dir: Dir, tx: &dyn Transaction, id: BufferId) -> Option<bool> {
    let KwValue::Date(cmp) = v else {
        return Some(false);
    };
    cert_time(dir, tx, id).map_or_else(|e| e, |t| Some(cmp.test(t)))
}

fn eval_notbefore(v: &KwValue, dir: Dir, _now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    eval_date(v, dir, tx, NOTBEFORE)
}

fn eval_notafter(v: &KwValue, dir: Dir, _now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    eval_date(v, dir, tx, NOTAFTER)
}

/// `tls_cert_expired`: the certificate's notAfter is before the packet's time.
fn eval_expired(_v: &KwValue, dir: Dir, now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    cert_time(dir, tx, NOTAFTER).map_or_else(|e| e, |t| Some(t < now_s))
}

/// `tls_cert_valid`: the packet's time is within the certificate's validity.
fn eval_valid(_v: &KwValue, dir: Dir, now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    let nb = match cert_time(dir, tx, NOTBEFORE) {
        Ok(t) => t,
        Err(e) => return e,
    };
    cert_time(dir, tx, NOTAFTER).map_or_else(|e| e, |na| Some(nb <= now_s && now_s <= na))
}

/// A date of `tls_cert_notbefore`/`tls_cert_notafter`: ISO 8601 from a year down to
/// seconds (`2015`, `2015-10`, `2015-10-22`, `2015-10-22T23`, `2015-10-22T23:59`,
/// `2015-10-22T23:59:59`, missing parts being their start), UTC, or seconds since the
/// epoch (more than 4 digits).
pub fn parse_date(s: &str) -> Result<i64, String> {
    let s = s.trim();
    let bad = || format!("bad date `{s}`");
    if s.len() > 4 && s.bytes().all(|b| b.is_ascii_digit()) {
        return s.parse().map_err(|_| bad());
    }
    let (date, time) = match s.split_once('T') {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let num = |p: &str, len: usize| -> Result<u32, String> {
        if p.len() != len || !p.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        p.parse().map_err(|_| bad())
    };
    let mut d = date.split('-');
    let y = num(d.next().unwrap_or(""), 4)?;
    let m = d.next().map(|p| num(p, 2)).transpose()?.unwrap_or(1);
    let day = d.next().map(|p| num(p, 2)).transpose()?.unwrap_or(1);
    if d.next().is_some() || (time.is_some() && date.len() != 10) {
        return Err(bad());
    }
    let (mut hh, mut mm, mut ss) = (0, 0, 0);
    if let Some(t) = time {
        let mut t = t.split(':');
        hh = num(t.next().unwrap_or(""), 2)?;
        mm = t.next().map(|p| num(p, 2)).transpose()?.unwrap_or(0);
        ss = t.next().map(|p| num(p, 2)).transpose()?.unwrap_or(0);
        if t.next().is_some() {
            return Err(bad());
        }
    }
    super::x509::civil_to_epoch(i64::from(y), m, day, hh, mm, ss).ok_or_else(bad)
}

/// `[<|>]DATE` or `DATE<>DATE` (inclusive), as Suricata's certificate validity keywords.
pub fn parse_date_cmp(s: &str) -> Result<DateCmp, String> {
    let s = s.trim();
    if let Some((a, b)) = s.split_once("<>") {
        let (a, b) = (parse_date(a)?, parse_date(b)?);
        if a > b {
            return Err(format!("range `{s}` ends before it starts"));
        }
        return Ok(DateCmp::Range(a, b));
    }
    if let Some(r) = s.strip_prefix('<') {
        return Ok(DateCmp::Lt(parse_date(r)?));
    }
    if let Some(r) = s.strip_prefix('>') {
        return Ok(DateCmp::Gt(parse_date(r)?));
    }
    Ok(DateCmp::Eq(parse_date(s.strip_prefix('=').unwrap_or(s))?))
}

/// The sticky buffers of TLS.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "tls.random",
        &[],
        None,
        AppProto::Tls,
        Some(RANDOM_CLIENT),
        Some(RANDOM_SERVER),
        false,
    ),
    def(
        "tls.random_time",
        &[],
        None,
        AppProto::Tls,
        Some(RANDOM_TIME_CLIENT),
        Some(RANDOM_TIME_SERVER),
        false,
    ),
    def(
        "tls.random_bytes",
        &[],
        None,
        AppProto::Tls,
        Some(RANDOM_BYTES_CLIENT),
        Some(RANDOM_BYTES_SERVER),
        false,
    ),
    def(
        "tls.sni",
        &["tls_sni"],
        None,
        AppProto::Tls,
        Some(SNI),
        None,
        false,
    ),
    def(
        "tls.cert_subject",
        &["tls_cert_subject"],
        None,
        AppProto::Tls,
        None,
        Some(CERT_SUBJECT),
        false,
    ),
    def(
        "tls.cert_issuer",
        &["tls_cert_issuer"],
        None,
        AppProto::Tls,
        None,
        Some(CERT_ISSUER),
        false,
    ),
    def(
        "tls.cert_serial",
        &["tls_cert_serial"],
        None,
        AppProto::Tls,
        None,
        Some(CERT_SERIAL),
        false,
    ),
    def(
        "tls.cert_fingerprint",
        &["tls_cert_fingerprint"],
        None,
        AppProto::Tls,
        None,
        Some(CERT_FINGERPRINT),
        false,
    ),
    def(
        "tls.certs",
        &[],
        None,
        AppProto::Tls,
        None,
        Some(CERTS),
        true,
    ),
    def(
        "tls.subjectaltname",
        &[],
        None,
        AppProto::Tls,
        None,
        Some(SUBJECTALTNAME),
        true,
    ),
    def(
        "ja3.hash",
        &["ja3_hash"],
        None,
        AppProto::Tls,
        Some(JA3_HASH),
        None,
        false,
    ),
    def(
        "ja3.string",
        &["ja3_string"],
        None,
        AppProto::Tls,
        Some(JA3_STRING),
        None,
        false,
    ),
    def(
        "ja3s.hash",
        &["ja3s_hash"],
        None,
        AppProto::Tls,
        None,
        Some(JA3S_HASH),
        false,
    ),
    def(
        "ja3s.string",
        &["ja3s_string"],
        None,
        AppProto::Tls,
        None,
        Some(JA3S_STRING),
        false,
    ),
    def(
        "ja4.hash",
        &["ja4_hash"],
        None,
        AppProto::Tls,
        Some(JA4_HASH),
        None,
        false,
    ),
];

fn single(index: usize, b: Buf<'_>) -> Buf<'_> {
    if index == 0 { b } else { Buf::Absent }
}

pub fn buffer<'a>(tx: &'a TlsTx, id: BufferId, index: usize) -> Buf<'a> {
    let client = tx.client_hello.is_some();
    let server = tx.server_hello.is_some();
    let server_done = tx.done[Dir::ToClient.index()];
    // Certificate fields: known once a Certificate came, absent once the server's
    // handshake is over without one.
    let has_cert = tx.cert.is_some();
    let cert_buf = |v: &'a [u8]| -> Buf<'a> {
        if has_cert {
            Buf::Ready(v)
        } else if server_done {
            Buf::Absent
        } else {
            Buf::NotYet
        }
    };
    let hello = |seen: bool, done: bool, v: &'a [u8]| -> Buf<'a> {
        if seen {
            Buf::Ready(v)
        } else if done {
            Buf::Absent
        } else {
            Buf::NotYet
        }
    };
    let client_done = tx.done[Dir::ToServer.index()];
    match id {
        SNI => match &tx.client_hello {
            Some(h) => single(index, h.sni.as_deref().map_or(Buf::Absent, Buf::Ready)),
            None if client_done => Buf::Absent,
            None => Buf::NotYet,
        },
        JA3_HASH => single(index, hello(client, client_done, &tx.ja3_hash)),
        JA3_STRING => single(index, hello(client, client_done, &tx.ja3_string)),
        JA4_HASH => single(index, hello(client, client_done, &tx.ja4)),
        JA3S_HASH => single(index, hello(server, server_done, &tx.ja3s_hash)),
        JA3S_STRING => single(index, hello(server, server_done, &tx.ja3s_string)),
        CERT_SUBJECT => single(index, cert_buf(&tx.subject)),
        CERT_ISSUER => single(index, cert_buf(&tx.issuer)),
        CERT_SERIAL => single(index, cert_buf(&tx.serial)),
        CERT_FINGERPRINT => single(index, cert_buf(&tx.fingerprint)),
        CERTS => match tx.certs.get(index) {
            Some(c) => Buf::Ready(c),
            None if tx.cert.is_some() || server_done => Buf::Absent,
            None => Buf::NotYet,
        },
        SUBJECTALTNAME => match &tx.cert {
            Some(c) => c.sans.get(index).map_or(Buf::Absent, |s| Buf::Ready(s)),
            None if server_done => Buf::Absent,
            None => Buf::NotYet,
        },
        VERSION_NUM => {
            if client || server || tx.version != [0, 0] {
                single(index, Buf::Ready(&tx.version))
            } else {
                Buf::NotYet
            }
        }
        STATE => single(index, Buf::Ready(std::slice::from_ref(&tx.state))),
        VERSION_CLIENT | VERSION_SERVER => {
            let (d, done) = if id == VERSION_CLIENT {
                (Dir::ToServer.index(), client_done)
            } else {
                (Dir::ToClient.index(), server_done)
            };
            let v = &tx.dir_version[d];
            single(index, hello(*v != [0, 0], done, v))
        }
        RANDOM_CLIENT | RANDOM_TIME_CLIENT | RANDOM_BYTES_CLIENT | RANDOM_SERVER
        | RANDOM_TIME_SERVER | RANDOM_BYTES_SERVER => {
            let client_side =
                matches!(id, RANDOM_CLIENT | RANDOM_TIME_CLIENT | RANDOM_BYTES_CLIENT);
            let (h, done) = if client_side {
                (&tx.client_hello, client_done)
            } else {
                (&tx.server_hello, server_done)
            };
            let b = match h {
                Some(h) => {
                    // The random: 4 bytes of gmt_unix_time, then 28 random bytes.
                    let part = match id {
                        RANDOM_TIME_CLIENT | RANDOM_TIME_SERVER => &h.random[..4],
                        RANDOM_BYTES_CLIENT | RANDOM_BYTES_SERVER => &h.random[4..],
                        _ => &h.random[..],
                    };
                    Buf::Ready(part)
                }
                None if done => Buf::Absent,
                None => Buf::NotYet,
            };
            single(index, b)
        }
        NOTBEFORE | NOTAFTER => {
            let v = if id == NOTBEFORE {
                &tx.not_before
            } else {
                &tx.not_after
            };
            match v {
                Some(b) => single(index, Buf::Ready(b)),
                // A certificate without a readable time never matches.
                None if has_cert || server_done => Buf::Absent,
                None => Buf::NotYet,
            }
        }
        _ => Buf::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_versions() {
        assert_eq!(parse_date("1445852105"), Ok(1_445_852_105));
        assert_eq!(parse_date("2015-10-22T23:59:59"), Ok(1_445_558_399));
        assert!(parse_date("2015-1-22").is_err());
        assert!(parse_date("2015-10-22T").is_err());
        assert!(parse_date("tomorrow").is_err());
        assert!(parse_date_cmp("2020<>2010").is_err());
        assert_eq!(ssl_version_bit(0x7f1c), Some(32));
        assert_eq!(ssl_version_bit(0x0101), None);
    }
}
