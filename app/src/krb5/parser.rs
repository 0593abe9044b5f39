//! Kerberos 5 messages (RFC 4120 §5): the envelope of a message (its DER header, an
//! `[APPLICATION n]` tag naming the message type), the decoding of the messages
//! Suricata makes transactions of (AS-REQ, AS-REP, TGS-REQ, TGS-REP, KRB-ERROR) into
//! what the transactions keep, and the record marks of Kerberos over TCP (RFC 4120
//! §7.2.2: a 4-byte big-endian length before each message).
//!
//! The DER decoding is the `kerberos-parser` crate's (rusticata, MIT/Apache-2.0,
//! maintained: 0.9 of 2025 on `der-parser` 10), the decoder Suricata itself uses: which
//! messages decode and which do not (a missing mandatory field, a string that is not
//! UTF-8, a microseconds value out of range) is then the reference's to the byte,
//! which a decoder of our own could only approximate. It decodes one message of a
//! bounded record (a datagram, or a TCP record of at most [`MAX_RECORD`] bytes) without
//! recursion beyond the fixed nesting of the message types, so its work and memory
//! are bounded by the record's size; the names it yields are bounded again here
//! ([`MAX_NAME_PARTS`], [`MAX_STRING`]).

use der_parser::asn1_rs::FromDer;
use der_parser::ber::Class;
use kerberos_parser::krb5::{KdcRep, KdcReq, KrbError, PrincipalName};
use kerberos_parser::krb5_parser;

/// Largest TCP record parsed; a larger one is skipped (Suricata buffers it whole, but
/// no KDC message comes near: an AS-REP with a large PAC is tens of kilobytes).
pub const MAX_RECORD: usize = 256 * 1024;
/// Most components of a principal name kept (real names have one to three).
pub const MAX_NAME_PARTS: usize = 64;
/// Longest realm or name component kept, in bytes.
pub const MAX_STRING: usize = 4096;
/// The TCP probe's largest first record mark, as Suricata's.
pub const MAX_PROBE_RECORD: u32 = 16384;

/// Message types (RFC 4120 §5.10's `[APPLICATION n]` tags).
pub const AS_REQ: u32 = 10;
pub const AS_REP: u32 = 11;
pub const TGS_REQ: u32 = 12;
pub const TGS_REP: u32 = 13;
pub const AP_REQ: u32 = 14;
pub const AP_REP: u32 = 15;
pub const KRB_ERROR: u32 = 30;

/// What a transaction keeps of a message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    pub msg_type: u32,
    /// The client's name components (requests: the body's `cname`; replies and
    /// errors: `cname`).
    pub cname: Option<Vec<String>>,
    /// Requests: the body's realm; replies: `crealm`; errors: `crealm`.
    pub realm: Option<String>,
    /// Requests: the body's `sname`; replies: the ticket's; errors: `sname`.
    pub sname: Option<Vec<String>>,
    /// Replies: the encryption type of the reply's encrypted part.
    pub etype: Option<i32>,
    /// Replies: the encryption type of the ticket.
    pub ticket_etype: Option<i32>,
    /// Errors: the error code.
    pub error_code: Option<i32>,
    /// A name or string was cut at [`MAX_NAME_PARTS`] or [`MAX_STRING`].
    pub truncated: bool,
}

/// What one message is.
#[derive(Debug, PartialEq, Eq)]
pub enum Decoded {
    /// A message of a transaction.
    Tx(Message),
    /// A message of type `tag` that makes no transaction: of a type Suricata does not
    /// log (AP-REQ, AP-REP, KRB-CRED, ...), or one that does not decode.
    Other { tag: u32 },
    /// Not an `[APPLICATION n]` element: ignored.
    NotApplication,
    /// Not even a DER header: Suricata's `malformed_data`, a parse error.
    Malformed,
}

/// Decodes one message (a datagram, or a TCP record without its mark).
pub fn decode(data: &[u8]) -> Decoded {
    let Ok((_, header)) = der_parser::der::der_read_element_header(data) else {
        return Decoded::Malformed;
    };
    if header.class() != Class::Application {
        return Decoded::NotApplication;
    }
    let tag = header.tag().0;
    let message = match tag {
        AS_REQ => krb5_parser::parse_as_req(data)
            .ok()
            .map(|(_, r)| request(AS_REQ, &r)),
        TGS_REQ => krb5_parser::parse_tgs_req(data)
            .ok()
            .map(|(_, r)| request(TGS_REQ, &r)),
        AS_REP => krb5_parser::parse_as_rep(data)
            .ok()
            .map(|(_, r)| reply(AS_REP, &r)),
        TGS_REP => krb5_parser::parse_tgs_rep(data)
            .ok()
            .map(|(_, r)| reply(TGS_REP, &r)),
        KRB_ERROR => KrbError::from_der(data).ok().map(|(_, e)| {
            let mut m = Message {
                msg_type: KRB_ERROR,
                error_code: Some(e.error_code.0),
                ..Message::default()
            };
            m.cname = e.cname.as_ref().map(|n| name(n, &mut m.truncated));
            m.realm = e.crealm.as_ref().map(|r| string(&r.0, &mut m.truncated));
            m.sname = Some(name(&e.sname, &mut m.truncated));
            m
        }),
        _ => None,
    };
    match message {
        Some(m) => Decoded::Tx(m),
        None => Decoded::Other { tag },
    }
}

fn request(msg_type: u32, r: &KdcReq<'_>) -> Message {
    let b = &r.req_body;
    let mut m = Message {
        msg_type,
        ..Message::default()
    };
    m.cname = b.cname.as_ref().map(|n| name(n, &mut m.truncated));
    m.realm = Some(string(&b.realm.0, &mut m.truncated));
    m.sname = b.sname.as_ref().map(|n| name(n, &mut m.truncated));
    m
}

fn reply(msg_type: u32, r: &KdcRep<'_>) -> Message {
    let mut m = Message {
        msg_type,
        etype: Some(r.enc_part.etype.0),
        ticket_etype: Some(r.ticket.enc_part.etype.0),
        ..Message::default()
    };
    m.cname = Some(name(&r.cname, &mut m.truncated));
    m.realm = Some(string(&r.crealm.0, &mut m.truncated));
    m.sname = Some(name(&r.ticket.sname, &mut m.truncated));
    m
}

/// A principal's name components, at most [`MAX_NAME_PARTS`] of [`MAX_STRING`] bytes.
fn name(n: &PrincipalName, truncated: &mut bool) -> Vec<String> {
    if n.name_string.len() > MAX_NAME_PARTS {
        *truncated = true;
    }
    n.name_string
        .iter()
        .take(MAX_NAME_PARTS)
        .map(|s| string(s, truncated))
        .collect()
}

fn string(s: &str, truncated: &mut bool) -> String {
    if s.len() <= MAX_STRING {
        return s.to_string();
    }
    *truncated = true;
    let mut end = MAX_STRING;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s[..end].to_string()
}

/// Whether an encryption type is weak, as Suricata judges it: all but the AES and
/// Camellia types of RFC 3962, RFC 8009 and RFC 6803.
pub fn weak(etype: i32) -> bool {
    !matches!(etype, 17 | 18 | 19 | 20 | 25 | 26)
}

/// Suricata's probe of a datagram (or of a TCP record's contents): more than 10
/// bytes, an `[APPLICATION n]` header with n at most 30, a SEQUENCE in it, and the
/// protocol version 5 as its first field's value. `None`: too few bytes to tell.
pub fn probe_message(data: &[u8]) -> Option<bool> {
    if data.len() <= 10 {
        return Some(false);
    }
    let (rest, header) = match der_parser::der::der_read_element_header(data) {
        Ok(x) => x,
        Err(der_parser::nom::Err::Incomplete(_)) => return None,
        Err(_) => return Some(false),
    };
    if header.class() != Class::Application || header.tag().0 > 30 {
        return Some(false);
    }
    if rest.first() != Some(&0x30) {
        return Some(false);
    }
    let Ok((rest, _)) = der_parser::der::der_read_element_header(rest) else {
        return Some(false);
    };
    // The first field, `pvno [n] INTEGER (5)`: `a? 03 02 01 05`.
    Some(rest.len() > 5 && rest.get(2..5) == Some(&[2, 1, 5][..]))
}

/// Suricata's probe of a TCP direction's first bytes: more than 14 bytes, a first
/// record mark of at most [`MAX_PROBE_RECORD`], and a message after it.
pub fn probe_stream(data: &[u8]) -> Option<bool> {
    if data.len() <= 14 {
        return Some(false);
    }
    let (mark, rest) = data.split_at(4);
    let len = u32::from_be_bytes([mark[0], mark[1], mark[2], mark[3]]);
    if len > MAX_PROBE_RECORD {
        return Some(false);
    }
    probe_message(rest)
}

/// The records of one direction of a TCP flow.
#[derive(Debug, Default)]
pub struct Records {
    /// A record (with its mark) being gathered.
    buf: Vec<u8>,
    /// Bytes of a record larger than [`MAX_RECORD`] still to skip.
    skip: u64,
}

impl Records {
    /// Cuts `data` (the next bytes of the direction) into records, calling `each`
    /// with every complete record's contents; stops early when `each` says so.
    pub fn feed(&mut self, mut data: &[u8], mut each: impl FnMut(&[u8]) -> bool) {
        loop {
            if self.skip > 0 {
                let n = usize::try_from(self.skip)
                    .unwrap_or(usize::MAX)
                    .min(data.len());
                self.skip -= n as u64;
                data = &data[n..];
            }
            if data.is_empty() {
                return;
            }
            if self.buf.is_empty() {
                // The common case: whole records in `data`, parsed in place.
                let Some(len) = mark(data) else {
                    self.buf.extend_from_slice(data);
                    return;
                };
                if len > MAX_RECORD {
                    self.skip = len as u64;
                    data = &data[4..];
                    continue;
                }
                let Some(record) = data.get(4..4 + len) else {
                    self.buf.extend_from_slice(data);
                    return;
                };
                data = &data[4 + len..];
                if !each(record) {
                    return;
                }
                continue;
            }
            // Completing a record begun earlier.
            if self.buf.len() < 4 {
                let n = (4 - self.buf.len()).min(data.len());
                self.buf.extend_from_slice(&data[..n]);
                data = &data[n..];
            }
            let Some(len) = mark(&self.buf) else {
                return;
            };
            if len > MAX_RECORD {
                self.skip = (len + 4 - self.buf.len()) as u64;
                self.buf = Vec::new();
                continue;
            }
            let n = (4 + len - self.buf.len()).min(data.len());
            self.buf.extend_from_slice(&data[..n]);
            data = &data[n..];
            if self.buf.len() < 4 + len {
                return;
            }
            let record = std::mem::take(&mut self.buf);
            if !each(&record[4..]) {
                return;
            }
        }
    }
}

/// The length a record mark gives (its top bit, reserved, is taken as part of it, as
/// Suricata does: such a record is then too long to be gathered).
fn mark(data: &[u8]) -> Option<usize> {
    let m = data.get(..4)?;
    Some(u32::from_be_bytes([m[0], m[1], m[2], m[3]]) as usize)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An AS-REQ from `tests/data/krb5_crafted_pcap.py`: pvno 5, msg-type 10, a body
    /// with kdc-options, cname `alice` (NT-PRINCIPAL), realm `EXAMPLE.COM`, sname
    /// `krbtgt/EXAMPLE.COM` (NT-SRV-INST), till 2037, nonce 12345, etypes 18 and 23.
    pub const AS_REQ_ALICE: &[u8] = b"j\x81\x81\x30\x7f\xa1\x03\x02\x01\x05\xa2\x03\x02\x01\x0a\xa4s0q\xa0\x07\x03\x05\x00\x40\x81\x00\x10\xa1\x12\x30\x10\xa0\x03\x02\x01\x01\xa1\x09\x30\x07\x1b\x05\x61lice\xa2\x0d\x1b\x0b\x45XAMPLE.COM\xa3\x20\x30\x1e\xa0\x03\x02\x01\x02\xa1\x17\x30\x15\x1b\x06krbtgt\x1b\x0b\x45XAMPLE.COM\xa5\x11\x18\x0f\x32\x30\x33\x37\x30\x39\x31\x33\x30\x32\x34\x38\x30\x35Z\xa7\x04\x02\x02\x30\x39\xa8\x08\x30\x06\x02\x01\x12\x02\x01\x17";

    /// A KRB-ERROR: KDC_ERR_PREAUTH_REQUIRED (25) for `krbtgt/EXAMPLE.COM`, with
    /// stime, susec and e-text `NEEDED_PREAUTH`, no client name or realm.
    pub const ERR_PREAUTH: &[u8] = b"\x7em0k\xa0\x03\x02\x01\x05\xa1\x03\x02\x01\x1e\xa4\x11\x18\x0f\x32\x30\x32\x33\x31\x31\x31\x34\x32\x32\x31\x33\x32\x30Z\xa5\x04\x02\x02\x04\xd2\xa6\x03\x02\x01\x19\xa9\x0d\x1b\x0b\x45XAMPLE.COM\xaa\x20\x30\x1e\xa0\x03\x02\x01\x02\xa1\x17\x30\x15\x1b\x06krbtgt\x1b\x0b\x45XAMPLE.COM\xab\x10\x1b\x0eNEEDED_PREAUTH";

    /// An AS-REP to alice: crealm `EXAMPLE.COM`, a ticket for `krbtgt/EXAMPLE.COM`
    /// encrypted with aes256-cts-hmac-sha1-96 (18, kvno 2), the reply's part with
    /// rc4-hmac (23, kvno 3).
    pub const AS_REP_RC4: &[u8] = b"k\x81\xe8\x30\x81\xe5\xa0\x03\x02\x01\x05\xa1\x03\x02\x01\x0b\xa3\x0d\x1b\x0b\x45XAMPLE.COM\xa4\x12\x30\x10\xa0\x03\x02\x01\x01\xa1\x09\x30\x07\x1b\x05\x61lice\xa5tar0p\xa0\x03\x02\x01\x05\xa1\x0d\x1b\x0b\x45XAMPLE.COM\xa2\x20\x30\x1e\xa0\x03\x02\x01\x02\xa1\x17\x30\x15\x1b\x06krbtgt\x1b\x0b\x45XAMPLE.COM\xa3\x38\x30\x36\xa0\x03\x02\x01\x12\xa1\x03\x02\x01\x02\xa2\x2a\x04\x28\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\x11\xa6\x40\x30\x3e\xa0\x03\x02\x01\x17\xa1\x03\x02\x01\x03\xa2\x32\x04\x30\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22\x22";

    #[test]
    fn requests_and_errors_decode() {
        let Decoded::Tx(m) = decode(AS_REQ_ALICE) else {
            panic!()
        };
        assert_eq!(m.msg_type, AS_REQ);
        assert_eq!(m.cname, Some(vec!["alice".to_string()]));
        assert_eq!(m.realm.as_deref(), Some("EXAMPLE.COM"));
        assert_eq!(
            m.sname,
            Some(vec!["krbtgt".to_string(), "EXAMPLE.COM".to_string()])
        );
        assert_eq!((m.etype, m.ticket_etype, m.error_code), (None, None, None));
        let Decoded::Tx(e) = decode(ERR_PREAUTH) else {
            panic!()
        };
        assert_eq!((e.msg_type, e.error_code), (KRB_ERROR, Some(25)));
        assert_eq!((e.cname, e.realm), (None, None));
        // An AS-REQ cut short: its type, no transaction.
        assert_eq!(decode(&AS_REQ_ALICE[..60]), Decoded::Other { tag: AS_REQ });
        // A universal SEQUENCE: ignored; a header cut short: malformed.
        assert_eq!(decode(b"\x30\x03\x02\x01\x01"), Decoded::NotApplication);
        assert_eq!(decode(b"\x6a"), Decoded::Malformed);
        assert_eq!(decode(b""), Decoded::Malformed);
        assert_eq!(decode(b"\x6a\x84\x00\x00\x10"), Decoded::Malformed);
        // As Suricata's: an indefinite length is no DER header, a long-form length
        // that could be short still is one.
        assert_eq!(decode(b"\x6a\x80\x30\x00\x00\x00"), Decoded::Malformed);
        assert_eq!(
            decode(b"\x6a\x81\x05\x30\x03\x02\x01\x05"),
            Decoded::Other { tag: AS_REQ }
        );
        // A tag number in the long form.
        assert_eq!(
            decode(b"\x7f\x1e\x05\x30\x03\x02\x01\x05"),
            Decoded::Other { tag: KRB_ERROR }
        );
    }

    #[test]
    fn probes() {
        assert_eq!(probe_message(AS_REQ_ALICE), Some(true));
        assert_eq!(probe_message(ERR_PREAUTH), Some(true));
        assert_eq!(probe_message(&AS_REQ_ALICE[..10]), Some(false));
        assert_eq!(probe_message(b"GET / HTTP/1.1\r\n"), Some(false));
        // Version 4.
        let mut v4 = AS_REQ_ALICE.to_vec();
        v4[9] = 4;
        assert_eq!(probe_message(&v4), Some(false));
        let mut rec = (AS_REQ_ALICE.len() as u32).to_be_bytes().to_vec();
        rec.extend_from_slice(AS_REQ_ALICE);
        assert_eq!(probe_stream(&rec), Some(true));
        assert_eq!(probe_stream(&rec[..30]), Some(true));
        assert_eq!(probe_stream(&rec[..14]), Some(false));
        rec[1] = 1;
        assert_eq!(probe_stream(&rec), Some(false));
    }

    #[test]
    fn records_are_cut_at_their_marks() {
        let mut stream = Vec::new();
        for m in [AS_REQ_ALICE, ERR_PREAUTH] {
            stream.extend_from_slice(&(m.len() as u32).to_be_bytes());
            stream.extend_from_slice(m);
        }
        for step in [1, 3, 4, 5, 100, stream.len()] {
            let mut r = Records::default();
            let mut got = Vec::new();
            for c in stream.chunks(step) {
                r.feed(c, |rec| {
                    got.push(rec.to_vec());
                    true
                });
            }
            assert_eq!(got, [AS_REQ_ALICE.to_vec(), ERR_PREAUTH.to_vec()], "{step}");
        }
        // A record too large is skipped, and the next one found.
        let mut r = Records::default();
        let mut got = 0;
        let big = MAX_RECORD + 1;
        let mut s = (big as u32).to_be_bytes().to_vec();
        s.resize(4 + big, 0);
        s.extend_from_slice(&(ERR_PREAUTH.len() as u32).to_be_bytes());
        s.extend_from_slice(ERR_PREAUTH);
        for c in s.chunks(7000) {
            r.feed(c, |rec| {
                got += 1;
                rec == ERR_PREAUTH
            });
        }
        assert_eq!(got, 1);
    }

    #[test]
    fn weak_types() {
        for t in [1, 3, 16, 23, 24, 65, 0, -128, 99] {
            assert!(weak(t), "{t}");
        }
        for t in [17, 18, 19, 20, 25, 26] {
            assert!(!weak(t), "{t}");
        }
    }
}
