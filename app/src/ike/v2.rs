//! IKEv2 messages (RFC 7296): the payload chain after the header, read as Suricata 8
//! reads it (its `ipsec-parser`): every payload's body is checked by its type, one bad
//! payload makes the whole chain unreadable, the chain runs to the end of the datagram
//! (not of the header's length), and the payload types listed are the header's next
//! payload then each payload's own next-payload field. From the security associations
//! come the weak-crypto events, and from a responder's the algorithms it chose.

use super::parser::Malformed;

/// Proposals kept per message at most: later ones are read (they must be well formed)
/// but neither checked nor chosen.
pub const MAX_PROPOSALS: usize = 64;
/// Transforms kept per proposal at most (later ones are read, not kept).
pub const MAX_TRANSFORMS: usize = 64;
/// Notify types kept per message at most (all of them are counted in `errors`).
pub const MAX_NOTIFY: usize = 1024;
/// Payload types kept per message at most (the chain is read to its end whatever its
/// length: every payload takes four bytes at least, so a datagram bounds it).
pub const MAX_PAYLOAD_TYPES: usize = 1024;

/// Payload types (RFC 7296 §3.2).
pub const PT_SA: u8 = 33;
pub const PT_KE: u8 = 34;
pub const PT_IDI: u8 = 35;
pub const PT_IDR: u8 = 36;
pub const PT_CERT: u8 = 37;
pub const PT_CERTREQ: u8 = 38;
pub const PT_AUTH: u8 = 39;
pub const PT_NONCE: u8 = 40;
pub const PT_NOTIFY: u8 = 41;
pub const PT_DELETE: u8 = 42;
pub const PT_VENDOR_ID: u8 = 43;
pub const PT_TSI: u8 = 44;
pub const PT_TSR: u8 = 45;

/// Transform types (RFC 7296 §3.3.2).
pub const TT_ENCR: u8 = 1;
pub const TT_PRF: u8 = 2;
pub const TT_INTEG: u8 = 3;
pub const TT_DH: u8 = 4;
pub const TT_ESN: u8 = 5;

/// The protocol id of AH in a proposal.
pub const PROTO_AH: u8 = 2;

/// The header flag of the original initiator.
pub const FLAG_INITIATOR: u8 = 0x08;

/// The exchange types a first message must have to be taken for IKEv2.
pub const EXCHANGES: std::ops::RangeInclusive<u8> = 34..=37;

/// One transform: its type and id (attributes are not kept).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transform {
    pub kind: u8,
    pub id: u16,
}

/// One proposal of a security association.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Proposal {
    pub protocol: u8,
    pub transforms: Vec<Transform>,
}

/// What a message's payload chain holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Payloads {
    /// The header's next payload, then each payload's next-payload field.
    pub types: Vec<u8>,
    /// The proposals of its security associations, in order.
    pub proposals: Vec<Proposal>,
    /// The types of its notifications, in order.
    pub notify: Vec<u16>,
    /// Its notifications of error types (below 16384), all of them.
    pub errors: u32,
}

/// A bounded reader over a payload's body.
struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if n > self.0.len() {
            return Err(Malformed);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, Malformed> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
}

/// One proposal at the start of `r`.
fn proposal(r: &mut Rd<'_>) -> Result<Proposal, Malformed> {
    if r.0.len() < 8 {
        return Err(Malformed);
    }
    let _last = r.u8()?;
    let _reserved = r.u8()?;
    let len = usize::from(r.u16()?);
    let _num = r.u8()?;
    let protocol = r.u8()?;
    let spi_size = usize::from(r.u8()?);
    let count = r.u8()?;
    r.take(spi_size)?;
    let body = len.checked_sub(8 + spi_size).ok_or(Malformed)?;
    let mut t = Rd(r.take(body)?);
    let mut p = Proposal {
        protocol,
        transforms: Vec::new(),
    };
    // Exactly `count` transforms; bytes after them are ignored.
    for _ in 0..count {
        let _last = t.u8()?;
        let _reserved = t.u8()?;
        let tlen = usize::from(t.u16()?);
        let kind = t.u8()?;
        let _reserved = t.u8()?;
        let id = t.u16()?;
        if tlen > 8 {
            t.take(tlen - 8)?;
        }
        if p.transforms.len() < MAX_TRANSFORMS {
            p.transforms.push(Transform { kind, id });
        }
    }
    Ok(p)
}

/// A traffic selector at the start of `r` (an IPv4 or IPv6 address range).
fn traffic_selector(r: &mut Rd<'_>) -> Result<(), Malformed> {
    let kind = r.u8()?;
    r.take(7)?;
    let addr = match kind {
        7 => 4,
        8 => 16,
        _ => return Err(Malformed),
    };
    r.take(2 * addr)?;
    Ok(())
}

/// Reads the body of a payload of type `kind` into `out`.
fn body(kind: u8, b: &[u8], out: &mut Payloads) -> Result<(), Malformed> {
    let len = b.len();
    let mut r = Rd(b);
    match kind {
        PT_SA => {
            // One proposal at least; what follows the last whole one is ignored.
            let mut n = 0usize;
            loop {
                let mut probe = Rd(r.0);
                match proposal(&mut probe) {
                    Ok(p) => {
                        n += 1;
                        r = probe;
                        if out.proposals.len() < MAX_PROPOSALS {
                            out.proposals.push(p);
                        }
                    }
                    Err(_) if n > 0 => break,
                    Err(e) => return Err(e),
                }
                if r.0.is_empty() {
                    break;
                }
            }
        }
        PT_KE | PT_IDI | PT_IDR | PT_AUTH if len < 4 => return Err(Malformed),
        PT_CERT | PT_CERTREQ if len < 1 => return Err(Malformed),
        PT_DELETE | PT_VENDOR_ID if len < 8 => return Err(Malformed),
        PT_NOTIFY => {
            let _proto = r.u8()?;
            let spi_size = usize::from(r.u8()?);
            let t = r.u16()?;
            r.take(spi_size)?;
            if notify_is_error(t) {
                out.errors = out.errors.saturating_add(1);
            }
            if out.notify.len() < MAX_NOTIFY {
                out.notify.push(t);
            }
        }
        PT_TSI | PT_TSR => {
            if len < 4 {
                return Err(Malformed);
            }
            r.take(4)?;
            traffic_selector(&mut r)?;
        }
        _ => {}
    }
    Ok(())
}

/// The payload chain after the header of a message whose first payload is of type
/// `first` (the header's next payload).
pub fn payloads(mut data: &[u8], first: u8) -> Result<Payloads, Malformed> {
    let mut out = Payloads {
        types: vec![first],
        ..Payloads::default()
    };
    let mut kind = first;
    while !data.is_empty() {
        let [next, _flags, hi, lo, ..] = *data else {
            return Err(Malformed);
        };
        let len = usize::from(u16::from_be_bytes([hi, lo]));
        if len < 4 || len > data.len() {
            return Err(Malformed);
        }
        body(kind, &data[4..len], &mut out)?;
        if out.types.len() < MAX_PAYLOAD_TYPES {
            out.types.push(next);
        }
        kind = next;
        data = &data[len..];
    }
    Ok(out)
}

/// What the responder chose so far in a flow: the last transform of each type of its
/// security associations (Suricata's IKEv2 container), as transform ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Algorithms {
    pub enc: u16,
    pub auth: u16,
    pub prf: u16,
    pub dh: u16,
    pub esn: u16,
}

impl Default for Algorithms {
    /// Suricata's defaults: `ENCR_NULL` and zero for the others.
    fn default() -> Self {
        Algorithms {
            enc: 11,
            auth: 0,
            prf: 0,
            dh: 0,
            esn: 0,
        }
    }
}

impl Algorithms {
    /// Takes a responder's transform.
    pub fn take(&mut self, t: Transform) {
        match t.kind {
            TT_ENCR => self.enc = t.id,
            TT_INTEG => self.auth = t.id,
            TT_PRF => self.prf = t.id,
            TT_DH => self.dh = t.id,
            TT_ESN => self.esn = t.id,
            _ => {}
        }
    }
}

/// The encryption algorithms with integrity of their own (AEAD).
fn aead(id: u16) -> bool {
    matches!(id, 14..=16 | 18..=20 | 25..=28)
}

/// The anomalies of a proposal, in the order Suricata raises them: per transform a
/// weak or invalid algorithm or an unknown transform type; then no Diffie-Hellman
/// group, AH (no confidentiality), no integrity without AEAD.
pub fn check(p: &Proposal, out: &mut crate::ParseOutput) {
    for t in &p.transforms {
        match (t.kind, t.id) {
            (TT_ENCR, 1..=9 | 11) => out.anomaly("ike.weak_crypto_enc"),
            (TT_PRF, 0) | (TT_DH, 0) => out.anomaly("ike.invalid_proposal"),
            (TT_PRF, 1 | 2) => out.anomaly("ike.weak_crypto_prf"),
            (TT_INTEG, 1..=7) => out.anomaly("ike.weak_crypto_auth"),
            (TT_DH, 1 | 2 | 5 | 22) => out.anomaly("ike.weak_crypto_dh"),
            (TT_ENCR | TT_PRF | TT_INTEG | TT_DH | TT_ESN, _) => {}
            _ => out.anomaly("ike.unknown_proposal"),
        }
    }
    if !p.transforms.iter().any(|t| t.kind == TT_DH) {
        out.anomaly("ike.weak_crypto_no_dh");
    }
    if p.protocol == PROTO_AH {
        out.anomaly("ike.no_encryption");
    }
    let integrity = p.transforms.iter().any(|t| t.kind == TT_INTEG && t.id != 0);
    let aead = p.transforms.iter().any(|t| t.kind == TT_ENCR && aead(t.id));
    if !integrity && !aead {
        out.anomaly("ike.weak_crypto_no_auth");
    }
}

/// Suricata's name of a payload type (its `Debug` of the type).
pub fn payload_name(t: u8) -> String {
    let name = match t {
        0 => "NoNextPayload",
        33 => "SecurityAssociation",
        34 => "KeyExchange",
        35 => "IdentInitiator",
        36 => "IdentResponder",
        37 => "Certificate",
        38 => "CertificateRequest",
        39 => "Authentication",
        40 => "Nonce",
        41 => "Notify",
        42 => "Delete",
        43 => "VendorID",
        44 => "TrafficSelectorInitiator",
        45 => "TrafficSelectorResponder",
        46 => "EncryptedAndAuthenticated",
        47 => "Configuration",
        48 => "ExtensibleAuthentication",
        _ => return unnamed("IkePayloadType", u16::from(t)),
    };
    name.to_string()
}

/// A value without a name, as Suricata writes one: `Type(12 / 0xc)`.
fn unnamed(ty: &str, v: u16) -> String {
    format!("{ty}({v} / {v:#x})")
}

fn named(table: &[(u16, &str)], ty: &str, v: u16) -> String {
    table
        .iter()
        .find(|(k, _)| *k == v)
        .map_or_else(|| unnamed(ty, v), |(_, n)| (*n).to_string())
}

const NOTIFY: &[(u16, &str)] = &[
    (1, "UNSUPPORTED_CRITICAL_PAYLOAD"),
    (4, "INVALID_IKE_SPI"),
    (5, "INVALID_MAJOR_VERSION"),
    (7, "INVALID_SYNTAX"),
    (9, "INVALID_MESSAGE_ID"),
    (11, "INVALID_SPI"),
    (14, "NO_PROPOSAL_CHOSEN"),
    (17, "INVALID_KE_PAYLOAD"),
    (24, "AUTHENTICATION_FAILED"),
    (34, "SINGLE_PAIR_REQUIRED"),
    (35, "NO_ADDITIONAL_SAS"),
    (36, "INTERNAL_ADDRESS_FAILURE"),
    (37, "FAILED_CP_REQUIRED"),
    (38, "TS_UNACCEPTABLE"),
    (39, "INVALID_SELECTORS"),
    (43, "TEMPORARY_FAILURE"),
    (44, "CHILD_SA_NOT_FOUND"),
    (16384, "INITIAL_CONTACT"),
    (16385, "SET_WINDOW_SIZE"),
    (16386, "ADDITIONAL_TS_POSSIBLE"),
    (16387, "IPCOMP_SUPPORTED"),
    (16388, "NAT_DETECTION_SOURCE_IP"),
    (16389, "NAT_DETECTION_DESTINATION_IP"),
    (16390, "COOKIE"),
    (16391, "USE_TRANSPORT_MODE"),
    (16392, "HTTP_CERT_LOOKUP_SUPPORTED"),
    (16393, "REKEY_SA"),
    (16394, "ESP_TFC_PADDING_NOT_SUPPORTED"),
    (16395, "NON_FIRST_FRAGMENTS_ALSO"),
    (16404, "MULTIPLE_AUTH_SUPPORTED"),
    (16405, "ANOTHER_AUTH_FOLLOWS"),
    (16406, "REDIRECT_SUPPORTED"),
    (16430, "IKEV2_FRAGMENTATION_SUPPORTED"),
    (16431, "SIGNATURE_HASH_ALGORITHMS"),
];

/// The name of a notify type.
pub fn notify_name(t: u16) -> String {
    named(NOTIFY, "NotifyType", t)
}

/// Whether a notify type reports an error (below 16384).
pub fn notify_is_error(t: u16) -> bool {
    t < 16384
}

const ENC: &[(u16, &str)] = &[
    (1, "ENCR_DES_IV64"),
    (2, "ENCR_DES"),
    (3, "ENCR_3DES"),
    (4, "ENCR_RC5"),
    (5, "ENCR_IDEA"),
    (6, "ENCR_CAST"),
    (7, "ENCR_BLOWFISH"),
    (8, "ENCR_3IDEA"),
    (9, "ENCR_DES_IV32"),
    (11, "ENCR_NULL"),
    (12, "ENCR_AES_CBC"),
    (13, "ENCR_AES_CTR"),
    (14, "ENCR_AES_CCM_8"),
    (15, "ENCR_AES_CCM_12"),
    (16, "ENCR_AES_CCM_16"),
    (18, "ENCR_AES_GCM_8"),
    (19, "ENCR_AES_GCM_12"),
    (20, "ENCR_AES_GCM_16"),
    (21, "ENCR_NULL_AUTH_AES_GMAC"),
    (23, "ENCR_CAMELLIA_CBC"),
    (24, "ENCR_CAMELLIA_CTR"),
    (25, "ENCR_CAMELLIA_CCM_8"),
    (26, "ENCR_CAMELLIA_CCM_12"),
    (27, "ENCR_CAMELLIA_CCM_16"),
    (28, "ENCR_CHACHA20_POLY1305"),
];

const PRF: &[(u16, &str)] = &[
    (0, "PRF_NULL"),
    (1, "PRF_HMAC_MD5"),
    (2, "PRF_HMAC_SHA1"),
    (3, "PRF_HMAC_TIGER"),
    (4, "PRF_AES128_XCBC"),
    (5, "PRF_HMAC_SHA2_256"),
    (6, "PRF_HMAC_SHA2_384"),
    (7, "PRF_HMAC_SHA2_512"),
    (8, "PRF_AES128_CMAC"),
];

const AUTH: &[(u16, &str)] = &[
    (0, "NONE"),
    (1, "AUTH_HMAC_MD5_96"),
    (2, "AUTH_HMAC_SHA1_96"),
    (3, "AUTH_DES_MAC"),
    (4, "AUTH_KPDK_MD5"),
    (5, "AUTH_AES_XCBC_96"),
    (6, "AUTH_HMAC_MD5_128"),
    (7, "AUTH_HMAC_SHA1_160"),
    (8, "AUTH_AES_CMAC_96"),
    (9, "AUTH_AES_128_GMAC"),
    (10, "AUTH_AES_192_GMAC"),
    (11, "AUTH_AES_256_GMAC"),
    (12, "AUTH_HMAC_SHA2_256_128"),
    (13, "AUTH_HMAC_SHA2_384_192"),
    (14, "AUTH_HMAC_SHA2_512_256"),
];

const DH: &[(u16, &str)] = &[
    (0, "None"),
    (1, "Modp768"),
    (2, "Modp1024"),
    (5, "Modp1536"),
    (14, "Modp2048"),
    (15, "Modp3072"),
    (16, "Modp4096"),
    (17, "Modp6144"),
    (18, "Modp8192"),
    (19, "Ecp256"),
    (20, "Ecp384"),
    (21, "Ecp521"),
    (22, "Modp1024s160"),
    (23, "Modp2048s224"),
    (24, "Modp2048s256"),
    (25, "Ecp192"),
    (26, "Ecp224"),
    (27, "BrainpoolP224r1"),
    (28, "BrainpoolP256r1"),
    (29, "BrainpoolP384r1"),
    (30, "BrainpoolP512r1"),
    (31, "Curve25519"),
    (32, "Curve448"),
];

const ESN: &[(u16, &str)] = &[(0, "NoESN"), (1, "ESN")];

/// The names of a responder's algorithms: encryption, integrity, PRF, DH, ESN.
pub fn algorithm_names(a: &Algorithms) -> [String; 5] {
    [
        named(ENC, "IkeTransformEncType", a.enc),
        named(AUTH, "IkeTransformAuthType", a.auth),
        named(PRF, "IkeTransformPRFType", a.prf),
        named(DH, "IkeTransformDHType", a.dh),
        named(ESN, "IkeTransformESNType", a.esn),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn payload(next: u8, body: &[u8]) -> Vec<u8> {
        let mut p = vec![next, 0];
        p.extend_from_slice(&((4 + body.len()) as u16).to_be_bytes());
        p.extend_from_slice(body);
        p
    }

    /// An SA of one IKE proposal: ENCR_AES_CBC with a 256-bit key length attribute,
    /// PRF_HMAC_SHA2_256, AUTH_HMAC_SHA2_256_128, DH group 14.
    const SA: &[u8] = &[
        0x00, 0x00, 0x00, 0x2c, 0x01, 0x01, 0x00, 0x04, // proposal 1, IKE, no SPI, 4
        0x03, 0x00, 0x00, 0x0c, 0x01, 0x00, 0x00, 0x0c, 0x80, 0x0e, 0x01, 0x00, // ENCR 12
        0x03, 0x00, 0x00, 0x08, 0x02, 0x00, 0x00, 0x05, // PRF 5
        0x03, 0x00, 0x00, 0x08, 0x03, 0x00, 0x00, 0x0c, // INTEG 12
        0x00, 0x00, 0x00, 0x08, 0x04, 0x00, 0x00, 0x0e, // DH 14
    ];

    #[test]
    fn a_chain_and_its_types() {
        let mut m = payload(PT_NONCE, SA);
        m.extend(payload(PT_NOTIFY, &[7; 16]));
        // NAT_DETECTION_SOURCE_IP with 4 bytes of data.
        m.extend(payload(0, &[0, 0, 0x40, 0x04, 1, 2, 3, 4]));
        let p = payloads(&m, PT_SA).unwrap();
        assert_eq!(p.types, [PT_SA, PT_NONCE, PT_NOTIFY, 0]);
        assert_eq!(p.notify, [16388]);
        assert_eq!(p.proposals.len(), 1);
        assert_eq!(
            p.proposals[0].transforms,
            [
                Transform { kind: 1, id: 12 },
                Transform { kind: 2, id: 5 },
                Transform { kind: 3, id: 12 },
                Transform { kind: 4, id: 14 }
            ]
        );
        let mut out = crate::ParseOutput::default();
        check(&p.proposals[0], &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    }

    /// A chain longer than what is kept: read to its end, its notifications of errors
    /// all counted, its types and notify types kept up to their bounds.
    #[test]
    fn long_chains_are_read_and_bounded() {
        let n = MAX_NOTIFY + 10;
        let mut m = Vec::new();
        for k in 0..n {
            let next = if k + 1 == n { 0 } else { PT_NOTIFY };
            m.extend(payload(next, &[0, 0, 0, 14]));
        }
        let p = payloads(&m, PT_NOTIFY).unwrap();
        assert_eq!(p.errors, n as u32);
        assert_eq!(p.notify.len(), MAX_NOTIFY);
        assert_eq!(p.types.len(), MAX_PAYLOAD_TYPES);
        // Traffic selectors: at least one of a known type; the count is not checked.
        let ts = [7, 0, 0, 16, 0, 0, 0xff, 0xff, 10, 0, 0, 1, 10, 0, 0, 2];
        for (body, ok) in [
            ([&[2u8, 0, 0, 0][..], &ts].concat(), true),
            ([&[1u8, 0, 0, 0][..], &ts, &[7, 0]].concat(), true),
            (vec![1, 0, 0, 0], false),
        ] {
            assert_eq!(payloads(&payload(0, &body), PT_TSR).is_ok(), ok, "{body:?}");
        }
    }

    #[test]
    fn one_bad_payload_spoils_the_chain() {
        // A vendor id shorter than 8 bytes, a traffic selector of an unknown type,
        // a payload past the end, bytes after the last payload, an empty SA.
        for (first, m) in [
            (PT_VENDOR_ID, payload(0, b"abcd")),
            (PT_TSI, payload(0, &[1, 0, 0, 0, 9, 0, 0, 16, 0, 0, 0, 0])),
            (PT_NONCE, vec![0, 0, 0, 90, 1, 2]),
            (PT_NONCE, [payload(0, b"n"), vec![0, 1, 2]].concat()),
            (PT_SA, payload(0, b"")),
        ] {
            assert_eq!(payloads(&m, first), Err(Malformed), "{m:?}");
        }
        // An unknown type is taken as it is; so are bytes that make a payload after
        // the last one.
        let m = [payload(0, b"abcd"), payload(0, b"")].concat();
        assert_eq!(payloads(&m, 50).unwrap().types, [50, 0, 0]);
        assert_eq!(payloads(b"", PT_SA).unwrap().types, [PT_SA]);
    }

    #[test]
    fn weak_and_odd_proposals() {
        let p = |protocol, t: &[(u8, u16)]| Proposal {
            protocol,
            transforms: t.iter().map(|&(kind, id)| Transform { kind, id }).collect(),
        };
        let run = |p: &Proposal| {
            let mut out = crate::ParseOutput::default();
            check(p, &mut out);
            out.anomalies
        };
        assert_eq!(
            run(&p(1, &[(1, 3), (2, 1), (3, 2), (4, 2)])),
            [
                "ike.weak_crypto_enc",
                "ike.weak_crypto_prf",
                "ike.weak_crypto_auth",
                "ike.weak_crypto_dh"
            ]
        );
        assert_eq!(
            run(&p(2, &[(3, 12), (5, 0)])),
            ["ike.weak_crypto_no_dh", "ike.no_encryption"]
        );
        assert_eq!(
            run(&p(1, &[(1, 20), (2, 0), (4, 0), (9, 3)])),
            [
                "ike.invalid_proposal",
                "ike.invalid_proposal",
                "ike.unknown_proposal"
            ]
        );
        assert_eq!(run(&p(3, &[(1, 12), (4, 19)])), ["ike.weak_crypto_no_auth"]);
    }

    #[test]
    fn names() {
        assert_eq!(payload_name(46), "EncryptedAndAuthenticated");
        assert_eq!(payload_name(50), "IkePayloadType(50 / 0x32)");
        assert_eq!(notify_name(8191), "NotifyType(8191 / 0x1fff)");
        let a = Algorithms {
            enc: 99,
            ..Algorithms::default()
        };
        assert_eq!(
            algorithm_names(&a),
            [
                "IkeTransformEncType(99 / 0x63)",
                "NONE",
                "PRF_NULL",
                "None",
                "NoESN"
            ]
        );
        assert_eq!(algorithm_names(&Algorithms::default())[0], "ENCR_NULL");
    }
}
