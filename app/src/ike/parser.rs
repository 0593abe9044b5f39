//! ISAKMP / IKEv1 messages (RFC 2408, RFC 2409): the fixed header and the payload
//! chain, with the security association's proposals and transforms, the key exchange,
//! the nonce and the vendor ids, as Suricata's IKEv1 parser reads them.

/// The ISAKMP header's length.
pub const HEADER_LEN: usize = 28;
/// Payloads read per message (nested ones included) at most.
pub const MAX_PAYLOADS: usize = 256;
/// Transforms kept per message at most.
pub const MAX_TRANSFORMS: usize = 64;
/// Attributes kept per transform at most.
pub const MAX_ATTRIBUTES: usize = 64;
/// Vendor ids kept per message at most.
pub const MAX_VENDOR_IDS: usize = 64;

/// Payload types (RFC 2408 §3.1, RFC 3947).
pub const PT_SA: u8 = 1;
pub const PT_PROPOSAL: u8 = 2;
pub const PT_TRANSFORM: u8 = 3;
pub const PT_KEY_EXCHANGE: u8 = 4;
pub const PT_NONCE: u8 = 10;
pub const PT_VENDOR_ID: u8 = 13;

/// The header flag of an encrypted message body.
pub const FLAG_ENCRYPTED: u8 = 0x01;

/// The ISAKMP header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub init_spi: [u8; 8],
    pub resp_spi: [u8; 8],
    pub next_payload: u8,
    pub maj_ver: u8,
    pub min_ver: u8,
    pub exch_type: u8,
    pub flags: u8,
    pub msg_id: u32,
    pub length: u32,
}

/// The header at the start of `data`, and the bytes after it.
pub fn header(data: &[u8]) -> Option<(Header, &[u8])> {
    if data.len() < HEADER_LEN {
        return None;
    }
    let (h, rest) = data.split_at(HEADER_LEN);
    let be32 = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let mut init_spi = [0; 8];
    init_spi.copy_from_slice(&h[..8]);
    let mut resp_spi = [0; 8];
    resp_spi.copy_from_slice(&h[8..16]);
    Some((
        Header {
            init_spi,
            resp_spi,
            next_payload: h[16],
            maj_ver: h[17] >> 4,
            min_ver: h[17] & 0x0f,
            exch_type: h[18],
            flags: h[19],
            msg_id: be32(20),
            length: be32(24),
        },
        rest,
    ))
}

/// A data attribute of a transform (RFC 2409 Appendix A): its class and either its
/// value (fitting 32 bits) or the bytes of a longer one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute {
    pub kind: u16,
    pub numeric: Option<u32>,
    pub bytes: Vec<u8>,
}

/// What a message's payloads hold.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Payloads {
    pub doi: Option<u32>,
    /// The payload types met, in the order first met (nested ones included).
    pub types: Vec<u8>,
    pub key_exchange: Vec<u8>,
    pub nonce: Vec<u8>,
    /// Each transform's attributes.
    pub transforms: Vec<Vec<Attribute>>,
    pub vendor_ids: Vec<Vec<u8>>,
    /// Bytes after the last whole payload.
    pub extra: bool,
}

/// Why the payloads could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// A generic payload read: (its next payload type, its body), and the bytes after it.
type PayloadAndRest<'a> = ((u8, &'a [u8]), &'a [u8]);

/// One generic payload: (its next payload type, its body), and the rest.
fn payload(data: &[u8]) -> Option<PayloadAndRest<'_>> {
    let [next, _reserved, hi, lo, ..] = *data else {
        return None;
    };
    let len = usize::from(u16::from_be_bytes([hi, lo]));
    if len < 4 || len > data.len() {
        return None;
    }
    Some(((next, &data[4..len]), &data[len..]))
}

struct Reader<'p> {
    out: &'p mut Payloads,
    budget: usize,
}

impl Reader<'_> {
    fn note(&mut self, t: u8) {
        if !self.out.types.contains(&t) {
            self.out.types.push(t);
        }
    }

    /// A chain of payloads whose first is of type `first`; `false` when it does not
    /// start with a whole payload. `top` says whether bytes left after it count as
    /// extra data.
    fn chain(&mut self, mut data: &[u8], first: u8, top: bool) -> Result<bool, Malformed> {
        let mut t = first;
        let mut any = false;
        while let Some(((next, body), rest)) = payload(data) {
            if self.budget == 0 {
                return Err(Malformed);
            }
            self.budget -= 1;
            self.one(t, body)?;
            any = true;
            t = next;
            data = rest;
        }
        if top && any && !data.is_empty() {
            self.out.extra = true;
        }
        Ok(any)
    }

    fn one(&mut self, t: u8, body: &[u8]) -> Result<(), Malformed> {
        self.note(t);
        match t {
            PT_SA => {
                let doi = body.get(..4).ok_or(Malformed)?;
                let doi = u32::from_be_bytes([doi[0], doi[1], doi[2], doi[3]]);
                self.out.doi = Some(doi);
                // The situation follows for the IPsec DOI.
                let rest = if doi == 1 {
                    body.get(8..).ok_or(Malformed)?
                } else {
                    &body[4..]
                };
                if !rest.is_empty() && !self.chain(rest, PT_PROPOSAL, false)? {
                    return Err(Malformed);
                }
            }
            PT_PROPOSAL => {
                let [_num, _proto, spi_size, _count, ..] = *body else {
                    return Err(Malformed);
                };
                let rest = body.get(4 + usize::from(spi_size)..).ok_or(Malformed)?;
                if !rest.is_empty() && !self.chain(rest, PT_TRANSFORM, false)? {
                    return Err(Malformed);
                }
            }
            PT_TRANSFORM => {
                let attrs = body.get(4..).ok_or(Malformed)?;
                let list = attributes(attrs)?;
                if self.out.transforms.len() < MAX_TRANSFORMS {
                    self.out.transforms.push(list);
                }
            }
            PT_KEY_EXCHANGE => self.out.key_exchange = body.to_vec(),
            PT_NONCE => self.out.nonce = body.to_vec(),
            PT_VENDOR_ID if self.out.vendor_ids.len() < MAX_VENDOR_IDS => {
                self.out.vendor_ids.push(body.to_vec());
            }
            _ => {}
        }
        Ok(())
    }
}

/// A transform's attributes: a type with the AF bit and a 16-bit value, or a type, a
/// length and that many bytes.
fn attributes(mut data: &[u8]) -> Result<Vec<Attribute>, Malformed> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let [a, b, c, d, ..] = *data else {
            return Err(Malformed);
        };
        let kind = u16::from_be_bytes([a & 0x7f, b]);
        let v = u16::from_be_bytes([c, d]);
        let attr = if a & 0x80 != 0 {
            data = &data[4..];
            Attribute {
                kind,
                numeric: Some(u32::from(v)),
                bytes: Vec::new(),
            }
        } else {
            let len = usize::from(v);
            let value = data.get(4..4 + len).ok_or(Malformed)?;
            data = &data[4 + len..];
            let numeric =
                (len <= 4).then(|| value.iter().fold(0u32, |acc, &b| (acc << 8) | u32::from(b)));
            Attribute {
                kind,
                numeric,
                bytes: if numeric.is_some() {
                    Vec::new()
                } else {
                    value.to_vec()
                },
            }
        };
        if out.len() < MAX_ATTRIBUTES {
            out.push(attr);
        }
    }
    Ok(out)
}

/// The payloads after the header of a message whose first payload is of type
/// `first` (the header's next payload).
pub fn payloads(data: &[u8], first: u8) -> Result<Payloads, Malformed> {
    let mut out = Payloads::default();
    out.types.push(first);
    let mut r = Reader {
        out: &mut out,
        budget: MAX_PAYLOADS,
    };
    if !r.chain(data, first, true)? {
        return Err(Malformed);
    }
    Ok(out)
}
