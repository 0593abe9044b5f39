//! The EVE `ike` object of an IKE message, in Suricata's field order and with its
//! names of the attribute values (IKEv1) and of the algorithms, payload and notify
//! types (IKEv2).

use meerkat_eve::Obj;
use meerkat_proto::events::{Ike, IkeAttribute, IkeSide, IkeTransform, Ikev2};

use super::detect::attribute_name;
use super::parser::Attribute;
use super::state::{IkeTx, hex};
use super::v2;
use crate::{AppRecord, Dir};

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Ike(r) = r {
        ike(o, r);
    }
}

fn attribute(a: &Attribute) -> IkeAttribute {
    IkeAttribute {
        kind: u32::from(a.kind),
        numeric: a.numeric,
        value: a.bytes.clone(),
    }
}

fn transform(t: &[Attribute]) -> IkeTransform {
    IkeTransform {
        attributes: t.iter().map(attribute).collect(),
    }
}

/// The record of a transaction; `extended` for an alert's.
pub fn record(tx: &IkeTx, extended: bool) -> Ike {
    let h = &tx.header;
    let ex = &tx.exchange;
    let p = tx.payloads.as_ref();
    let transforms = p.map_or(&[][..], |p| &p.transforms[..]);
    let side = |s: &super::state::Side| IkeSide {
        key_exchange: s.key_exchange.clone(),
        nonce: s.nonce.clone(),
    };
    Ike {
        version_major: u32::from(h.maj_ver),
        version_minor: u32::from(h.min_ver),
        init_spi: String::from_utf8_lossy(&tx.init_hex).into_owned(),
        resp_spi: String::from_utf8_lossy(&tx.resp_hex).into_owned(),
        message_id: h.msg_id,
        exchange_type: u32::from(h.exch_type),
        extended,
        chosen: if ex.server.transforms > 0 {
            ex.server.transform.iter().map(attribute).collect()
        } else {
            Vec::new()
        },
        server_proposals: if tx.dir == Dir::ToClient && transforms.len() > 1 {
            transforms.iter().map(|t| transform(t)).collect()
        } else {
            Vec::new()
        },
        payload: match p {
            Some(p) => p.types.iter().map(|&t| u32::from(t)).collect(),
            None => vec![u32::from(h.next_payload)],
        },
        doi: ex.doi,
        encrypted_payloads: tx.encrypted(),
        client: Some(side(&ex.client)),
        server: Some(side(&ex.server)),
        proposals: if tx.dir == Dir::ToServer {
            transforms.iter().map(|t| transform(t)).collect()
        } else {
            Vec::new()
        },
        vendor_ids: p.map_or_else(Vec::new, |p| p.vendor_ids.clone()),
        ikev2: tx.v2.as_deref().map(|m| {
            let a = &m.algorithms;
            Ikev2 {
                initiator: h.flags & v2::FLAG_INITIATOR != 0,
                alg_enc: u32::from(a.enc),
                alg_auth: u32::from(a.auth),
                alg_prf: u32::from(a.prf),
                alg_dh: u32::from(a.dh),
                alg_esn: u32::from(a.esn),
                payload: m.payloads.as_ref().map_or_else(Vec::new, |p| {
                    p.types.iter().map(|&t| u32::from(t)).collect()
                }),
                errors: m.errors,
                notify: m.notify().iter().map(|&t| u32::from(t)).collect(),
            }
        }),
    }
}

/// Suricata's names of the payload types.
fn payload_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0 => "None",
        1 => "SecurityAssociation",
        2 => "Proposal",
        3 => "Transform",
        4 => "KeyExchange",
        5 => "Identification",
        6 => "Certificate",
        7 => "CertificateRequest",
        8 => "Hash",
        9 => "Signature",
        10 => "Nonce",
        11 => "Notification",
        12 => "Delete",
        13 => "VendorID",
        15 => "SaKekPayload",
        16 => "SaTekPayload",
        17 => "KeyDownload",
        18 => "SequenceNumber",
        19 => "ProofOfPossession",
        20 => "NatDiscovery",
        21 => "NatOriginalAddress",
        22 => "GroupAssociatedPolicy",
        _ => return None,
    })
}

/// Suricata's names of the exchange types (`exchange_type_verbose`).
fn exchange_name(t: u32) -> Option<&'static str> {
    Some(match t {
        0 => "None",
        1 => "Base",
        2 => "Identity Protection",
        3 => "Authentication Only",
        4 => "Aggressive",
        5 => "Informational",
        6 => "Transaction (Config Mode)",
        32 => "Quick Mode",
        33 => "New Group Mode",
        _ => return None,
    })
}

const ENC: &[&str] = &[
    "EncDesCbc",
    "EncIdeaCbc",
    "EncBlowfishCbc",
    "EncRc5R16B64Cbc",
    "EncTripleDesCbc",
    "EncCastCbc",
    "EncAesCbc",
    "EncCamelliaCbc",
];
const HASH: &[&str] = &[
    "HashMd5",
    "HashSha",
    "HashTiger",
    "HashSha2_256",
    "HashSha2_384",
    "HashSha2_512",
];
/// As the reference writes them: 6 to 8 are all `AuthReserved`.
const AUTH: &[&str] = &[
    "AuthPreSharedKey",
    "AuthDssSignatures",
    "AuthRsaSignatures",
    "AuthEncryptionWithRsa",
    "AuthRevisedEncryptionWithRsa",
    "AuthReserved",
    "AuthReserved",
    "AuthReserved",
    "AuthEcdsaSha256",
    "AuthEcdsaSha384",
    "AuthEcdsaSha512",
];
/// As the reference writes them (7, 9, 11 and 13 repeat the name before).
const GROUP: &[&str] = &[
    "GroupDefault768BitModp",
    "GroupAlternate1024BitModpGroup",
    "GroupEc2nOnGp2p155",
    "GroupEc2nOnGp2p185",
    "GroupModp1536Bit",
    "GroupEc2nOverGf2p163",
    "GroupEc2nOverGf2p163",
    "GroupEc2nOverGf2p283",
    "GroupEc2nOverGf2p283",
    "GroupEc2nOverGf2p409",
    "GroupEc2nOverGf2p409",
    "GroupEc2nOverGf2p571",
    "GroupEc2nOverGf2p571",
    "GroupModp2048Bit",
    "GroupModp3072Bit",
    "GroupModp4096Bit",
    "GroupModp6144Bit",
    "GroupModp8192Bit",
    "GroupRandomEcp256",
    "GroupRandomEcp384",
    "GroupRandomEcp521",
    "GroupModp1024With160BitPrime",
    "GroupModp2048With224BitPrime",
    "GroupModp2048With256BitPrime",
    "GroupRandomEcp192",
    "GroupRandomEcp224",
    "GroupBrainpoolEcp224",
    "GroupBrainpoolEcp256",
    "GroupBrainpoolEcp384",
    "GroupBrainpoolEcp512",
];
const LIFE: &[&str] = &["LifeTypeSeconds", "LifeTypeKilobytes"];

/// The name of an attribute's value (`Unknown` for numbers with no name).
fn value_name(kind: u32, v: Option<u32>) -> &'static str {
    let table: &[&str] = match kind {
        1 => ENC,
        2 => HASH,
        3 => AUTH,
        4 => GROUP,
        11 => LIFE,
        _ => &[],
    };
    v.and_then(|v| table.get((v as usize).wrapping_sub(1)))
        .copied()
        .unwrap_or("Unknown")
}

fn attributes(o: &mut Obj<'_>, attrs: &[IkeAttribute]) {
    for a in attrs {
        let name = u16::try_from(a.kind).map_or("unknown", attribute_name);
        o.str(name, value_name(a.kind, a.numeric));
        let raw = format!("{name}_raw");
        match a.numeric {
            Some(n) => {
                o.u64(&raw, u64::from(n));
            }
            None => {
                o.str(&raw, &String::from_utf8_lossy(&hex(&a.value)));
            }
        }
    }
}

fn side(o: &mut Obj<'_>, s: &IkeSide) {
    if !s.key_exchange.is_empty() {
        o.str(
            "key_exchange_payload",
            &String::from_utf8_lossy(&hex(&s.key_exchange)),
        )
        .u64("key_exchange_payload_length", s.key_exchange.len() as u64);
    }
    if !s.nonce.is_empty() {
        o.str("nonce_payload", &String::from_utf8_lossy(&hex(&s.nonce)))
            .u64("nonce_payload_length", s.nonce.len() as u64);
    }
}

/// The fields of the `ike` object both versions write first.
fn header(x: &mut Obj<'_>, r: &Ike) {
    x.u64("version_major", u64::from(r.version_major))
        .u64("version_minor", u64::from(r.version_minor))
        .str("init_spi", &r.init_spi)
        .str("resp_spi", &r.resp_spi)
        .u64("message_id", u64::from(r.message_id))
        .u64("exchange_type", u64::from(r.exchange_type));
}

/// The `ike` object of an IKEv2 message.
fn ikev2(o: &mut Obj<'_>, r: &Ike, m: &Ikev2) {
    o.obj("ike", |x| {
        header(x, r);
        if m.initiator {
            x.str("role", "initiator");
        } else {
            let narrow = |v: u32| u16::try_from(v).unwrap_or(u16::MAX);
            let names = v2::algorithm_names(&v2::Algorithms {
                enc: narrow(m.alg_enc),
                auth: narrow(m.alg_auth),
                prf: narrow(m.alg_prf),
                dh: narrow(m.alg_dh),
                esn: narrow(m.alg_esn),
            });
            x.str("role", "responder");
            for (k, v) in ["alg_enc", "alg_auth", "alg_prf", "alg_dh", "alg_esn"]
                .iter()
                .zip(&names)
            {
                x.str(k, v);
            }
        }
        x.raw("payload", |b| {
            let names: Vec<String> = m
                .payload
                .iter()
                .map(|&t| v2::payload_name(u8::try_from(t).unwrap_or(u8::MAX)))
                .collect();
            meerkat_eve::str_array(b, names.iter().map(String::as_str));
        });
        x.obj("ikev2", |v| {
            v.u64("errors", u64::from(m.errors));
            if !m.notify.is_empty() {
                v.raw("notify", |b| {
                    let names: Vec<String> = m
                        .notify
                        .iter()
                        .map(|&t| v2::notify_name(u16::try_from(t).unwrap_or(u16::MAX)))
                        .collect();
                    meerkat_eve::str_array(b, names.iter().map(String::as_str));
                });
            }
        });
    });
}

/// The `ike` object.
pub fn ike(o: &mut Obj<'_>, r: &Ike) {
    if let Some(m) = &r.ikev2 {
        return ikev2(o, r, m);
    }
    o.obj("ike", |x| {
        header(x, r);
        if r.extended
            && let Some(n) = exchange_name(r.exchange_type)
        {
            x.str("exchange_type_verbose", n);
        }
        attributes(x, &r.chosen);
        if !r.server_proposals.is_empty() {
            x.raw("server_proposals", |b| {
                meerkat_eve::array(b, &r.server_proposals, |o, t| attributes(o, &t.attributes));
            });
        }
        x.raw("payload", |b| {
            meerkat_eve::str_array(b, r.payload.iter().filter_map(|&t| payload_name(t)));
        });
        x.obj("ikev1", |v| {
            if let Some(doi) = r.doi {
                v.u64("doi", u64::from(doi));
            }
            v.bool("encrypted_payloads", r.encrypted_payloads);
            if r.encrypted_payloads {
                return;
            }
            v.obj("client", |c| {
                if let Some(s) = &r.client {
                    side(c, s);
                }
                if !r.proposals.is_empty() {
                    c.raw("proposals", |b| {
                        meerkat_eve::array(b, &r.proposals, |o, t| attributes(o, &t.attributes));
                    });
                }
            });
            v.obj("server", |c| {
                if let Some(s) = &r.server {
                    side(c, s);
                }
            });
            if !r.vendor_ids.is_empty() {
                v.raw("vendor_ids", |b| {
                    let hexes: Vec<String> = r
                        .vendor_ids
                        .iter()
                        .map(|v| String::from_utf8_lossy(&hex(v)).into_owned())
                        .collect();
                    meerkat_eve::str_array(b, hexes.iter().map(String::as_str));
                });
            }
        });
    });
}
