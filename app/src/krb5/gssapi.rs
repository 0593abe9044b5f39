//! The Kerberos ticket of a GSS-API initial context token (RFC 2743 §3.1, RFC 4121
//! §4.1: `[APPLICATION 0] { mech OID, TOK_ID 01 00, AP-REQ }`), bare or as the
//! `mechToken` of an SPNEGO `NegTokenInit` (RFC 4178 §4.2.1): what SMB session setups
//! carry when the client authenticates with Kerberos, and what Suricata logs of them
//! (the ticket's realm and service name, EVE `smb.kerberos`).
//!
//! The path through the token is fixed (no recursion); each element is read with
//! `der-parser`'s header reader and its length checked against what is left.

use der_parser::asn1_rs::{Class, FromDer, Header};
use kerberos_parser::krb5::ApReq;

/// SPNEGO's mechanism OID, 1.3.6.1.5.5.2.
const SPNEGO: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x02];
const OID: u32 = 6;
const SEQUENCE: u32 = 16;
const OCTET_STRING: u32 = 4;
/// Most fields of a `NegTokenInit` looked at.
const MAX_FIELDS: usize = 8;

/// What is logged of a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ticket {
    pub realm: String,
    /// The service principal's name components.
    pub snames: Vec<String>,
}

/// One element: its header, its contents and what follows it.
fn element(data: &[u8]) -> Option<(Header<'_>, &[u8], &[u8])> {
    let (rest, h) = der_parser::der::der_read_element_header(data).ok()?;
    let len = h.length().definite().ok()?;
    let body = rest.get(..len)?;
    Some((h, body, &rest[len..]))
}

fn is(h: &Header<'_>, class: Class, tag: u32) -> bool {
    h.class() == class && h.tag().0 == tag
}

/// The ticket of the Kerberos AP-REQ in a security blob, if it has one.
pub fn ticket(blob: &[u8]) -> Option<Ticket> {
    let (h, body, _) = element(blob)?;
    if !is(&h, Class::Application, 0) {
        return None;
    }
    let (oh, oid, rest) = element(body)?;
    if !is(&oh, Class::Universal, OID) {
        return None;
    }
    if oid != SPNEGO {
        return from_token(blob);
    }
    // NegotiationToken: [0] NegTokenInit ::= SEQUENCE { ..., mechToken [2] OCTET STRING }
    let (ih, init, _) = element(rest)?;
    if !is(&ih, Class::ContextSpecific, 0) {
        return None;
    }
    let (sh, mut fields, _) = element(init)?;
    if !is(&sh, Class::Universal, SEQUENCE) {
        return None;
    }
    for _ in 0..MAX_FIELDS {
        let (fh, field, next) = element(fields)?;
        if is(&fh, Class::ContextSpecific, 2) {
            let (th, token, _) = element(field)?;
            if !is(&th, Class::Universal, OCTET_STRING) {
                return None;
            }
            return from_token(token);
        }
        fields = next;
    }
    None
}

/// The ticket of a Kerberos GSS-API token: after the mechanism OID, the two-byte
/// token id, then the AP-REQ.
fn from_token(token: &[u8]) -> Option<Ticket> {
    let (h, body, _) = element(token)?;
    if !is(&h, Class::Application, 0) {
        return None;
    }
    let (oh, _, rest) = element(body)?;
    if !is(&oh, Class::Universal, OID) {
        return None;
    }
    let ap_req = rest.get(2..)?;
    let (_, req) = ApReq::from_der(ap_req).ok()?;
    let t = req.ticket;
    Some(Ticket {
        realm: truncated(t.realm.0),
        snames: t
            .sname
            .name_string
            .into_iter()
            .take(super::parser::MAX_NAME_PARTS)
            .map(truncated)
            .collect(),
    })
}

fn truncated(mut s: String) -> String {
    let mut end = super::parser::MAX_STRING.min(s.len());
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    s.truncate(end);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A DER element with a tag byte and a short or two-byte length.
    fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        if body.len() < 128 {
            v.push(body.len() as u8);
        } else {
            v.extend_from_slice(&[0x82, (body.len() >> 8) as u8, body.len() as u8]);
        }
        v.extend_from_slice(body);
        v
    }

    /// An AP-REQ for `cifs/fs1` in realm `EXAMPLE.COM` (ticket etype 18), wrapped as a
    /// Kerberos GSS-API token (OID 1.2.840.113554.1.2.2, TOK_ID 01 00).
    fn krb_token() -> Vec<u8> {
        let int = |v: u8| tlv(0x02, &[v]);
        let gs = |s: &str| tlv(0x1b, s.as_bytes());
        let sname = tlv(
            0x30,
            &[
                tlv(0xa0, &int(2)),
                tlv(0xa1, &tlv(0x30, &[gs("cifs"), gs("fs1")].concat())),
            ]
            .concat(),
        );
        let enc = |e: u8| {
            tlv(
                0x30,
                &[tlv(0xa0, &int(e)), tlv(0xa2, &tlv(0x04, &[0x11; 16]))].concat(),
            )
        };
        let ticket = tlv(
            0x61,
            &tlv(
                0x30,
                &[
                    tlv(0xa0, &int(5)),
                    tlv(0xa1, &gs("EXAMPLE.COM")),
                    tlv(0xa2, &sname),
                    tlv(0xa3, &enc(18)),
                ]
                .concat(),
            ),
        );
        let ap_req = tlv(
            0x6e,
            &tlv(
                0x30,
                &[
                    tlv(0xa0, &int(5)),
                    tlv(0xa1, &int(14)),
                    tlv(0xa2, &tlv(0x03, &[0, 0, 0, 0, 0])),
                    tlv(0xa3, &ticket),
                    tlv(0xa4, &enc(23)),
                ]
                .concat(),
            ),
        );
        let oid = tlv(
            0x06,
            &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x12, 0x01, 0x02, 0x02],
        );
        tlv(0x60, &[oid, vec![0x01, 0x00], ap_req].concat())
    }

    #[test]
    fn tickets_of_bare_and_spnego_tokens() {
        let want = Ticket {
            realm: "EXAMPLE.COM".to_string(),
            snames: vec!["cifs".to_string(), "fs1".to_string()],
        };
        assert_eq!(ticket(&krb_token()), Some(want.clone()));
        // SPNEGO: mechTypes [0], then mechToken [2].
        let mech_types = tlv(0xa0, &tlv(0x30, &tlv(0x06, &[0x2a, 0x86, 0x48])));
        let init = tlv(
            0x30,
            &[mech_types, tlv(0xa2, &tlv(0x04, &krb_token()))].concat(),
        );
        let blob = tlv(0x60, &[tlv(0x06, SPNEGO), tlv(0xa0, &init)].concat());
        assert_eq!(ticket(&blob), Some(want));
        // NTLMSSP in SPNEGO, cut tokens, garbage: no ticket.
        let ntlm = tlv(0x30, &tlv(0xa2, &tlv(0x04, b"NTLMSSP\0\x01\0\0\0")));
        let blob2 = tlv(0x60, &[tlv(0x06, SPNEGO), tlv(0xa0, &ntlm)].concat());
        assert_eq!(ticket(&blob2), None);
        for n in 0..blob.len() {
            assert_eq!(ticket(&blob[..n]), None);
        }
        assert_eq!(ticket(b"NTLMSSP\0"), None);
    }
}
