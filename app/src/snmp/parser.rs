//! SNMP messages (RFC 1157, RFC 3416, RFC 3412/3414): version 1 and 2c with their
//! community, version 3 with its header, the USM security parameters and a plaintext
//! or encrypted scoped PDU. What is kept are positions in the datagram, not copies.

use std::ops::Range;

use super::ber::{self, Error, IP_ADDRESS, OCTET_STRING, OID, SEQUENCE};

/// Variable bindings kept per PDU at most (the rest are not listed).
pub const MAX_VARS: usize = 256;

/// PDU types (the context tag numbers of RFC 3416), as `snmp.pdu_type` takes them.
pub const GET_REQUEST: u32 = 0;
pub const TRAP_V1: u32 = 4;
pub const GET_BULK_REQUEST: u32 = 5;

/// A range of the datagram.
pub type Span = Range<u32>;

/// A version 1 trap's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trap {
    pub generic: u32,
    /// The enterprise OID's contents.
    pub enterprise: Span,
    pub agent: [u8; 4],
}

/// What a plaintext PDU says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pdu {
    pub pdu_type: u32,
    /// The error-status of a generic PDU (0 for the others).
    pub error: u32,
    pub trap: Option<Trap>,
    /// The OID contents of each variable binding.
    pub vars: Vec<Span>,
}

/// What a message says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    /// 1, 2 (2c) or 3.
    pub version: u32,
    pub community: Option<Span>,
    pub usm: Option<Span>,
    /// Version 3 with another security model than USM.
    pub unknown_security_model: bool,
    /// The scoped PDU is encrypted (version 3 with the privacy flag).
    pub encrypted: bool,
    pub pdu: Option<Pdu>,
}

/// The version of the message at the start of `data`, as Suricata's probe reads
/// it: a sequence of three elements whose first is 0 (1) or 1 (2c), or of four whose
/// first is 3.
pub fn envelope_version(data: &[u8]) -> Result<u32, Error> {
    let (body, _) = ber::expect(data, SEQUENCE)?;
    ber::well_formed(body)?;
    let mut n = 0;
    let mut rest = body;
    let mut first = None;
    while !rest.is_empty() {
        let (t, r) = ber::read(rest)?;
        if n == 0 {
            first = (t.tag == ber::INTEGER)
                .then(|| ber::int(t.body).ok())
                .flatten();
        }
        n += 1;
        rest = r;
    }
    match (n, first) {
        (3, Some(0)) => Ok(1),
        (3, Some(1)) => Ok(2),
        (4, Some(3)) => Ok(3),
        _ => Err(Error::Invalid),
    }
}

fn span(whole: &[u8], part: &[u8]) -> Span {
    let start = part.as_ptr() as usize - whole.as_ptr() as usize;
    start as u32..(start + part.len()) as u32
}

fn utf8(b: &[u8]) -> Result<(), Error> {
    std::str::from_utf8(b)
        .map(|_| ())
        .map_err(|_| Error::Invalid)
}

/// Parses a whole message (bytes after it are ignored).
pub fn parse(data: &[u8]) -> Result<Message, Error> {
    let (body, _) = ber::expect(data, SEQUENCE)?;
    let (version, rest) = ber::uint(body)?;
    match version {
        Some(v @ (0 | 1)) => {
            let (community, rest) = ber::expect(rest, OCTET_STRING)?;
            utf8(community)?;
            let pdu = pdu(data, rest, v + 1)?;
            Ok(Message {
                version: v + 1,
                community: Some(span(data, community)),
                usm: None,
                unknown_security_model: false,
                encrypted: false,
                pdu: Some(pdu),
            })
        }
        Some(3) => v3(data, rest),
        _ => Err(Error::Invalid),
    }
}

fn v3(whole: &[u8], rest: &[u8]) -> Result<Message, Error> {
    // HeaderData: msgID, msgMaxSize, msgFlags, msgSecurityModel.
    let (header, rest) = ber::expect(rest, SEQUENCE)?;
    let (_id, h) = ber::uint(header)?;
    let (_max, h) = ber::uint(h)?;
    let (flags, h) = ber::expect(h, OCTET_STRING)?;
    let (model, _) = ber::uint(h)?;
    let &[flags] = flags else {
        return Err(Error::Invalid);
    };
    let (params, rest) = ber::expect(rest, OCTET_STRING)?;
    let mut m = Message {
        version: 3,
        community: None,
        usm: None,
        unknown_security_model: false,
        encrypted: flags & 0x02 != 0,
        pdu: None,
    };
    if model == Some(3) {
        // UsmSecurityParameters: engine id, boots, time, user name, auth, priv.
        let (usm, _) = ber::expect(params, SEQUENCE)?;
        let (_engine, u) = ber::expect(usm, OCTET_STRING)?;
        let (_boots, u) = ber::uint(u)?;
        let (_time, u) = ber::uint(u)?;
        let (user, u) = ber::expect(u, OCTET_STRING)?;
        let (_auth, u) = ber::expect(u, OCTET_STRING)?;
        let (_priv, _) = ber::expect(u, OCTET_STRING)?;
        utf8(user)?;
        m.usm = Some(span(whole, user));
    } else {
        m.unknown_security_model = true;
    }
    if m.encrypted {
        ber::expect(rest, OCTET_STRING)?;
    } else {
        // ScopedPDU: contextEngineID, contextName, PDU.
        let (scoped, _) = ber::expect(rest, SEQUENCE)?;
        let (_engine, s) = ber::expect(scoped, OCTET_STRING)?;
        let (_name, s) = ber::expect(s, OCTET_STRING)?;
        m.pdu = Some(pdu(whole, s, 3)?);
    }
    Ok(m)
}

/// The PDU at the start of `data`.
fn pdu(whole: &[u8], data: &[u8], version: u32) -> Result<Pdu, Error> {
    let (t, _) = ber::read(data)?;
    if t.tag & 0xe0 != 0xa0 {
        return Err(Error::Invalid);
    }
    let pdu_type = u32::from(t.tag & 0x1f);
    let allowed = match version {
        1 => pdu_type <= TRAP_V1,
        _ => pdu_type <= 8,
    };
    if !allowed {
        return Err(Error::Invalid);
    }
    let mut p = Pdu {
        pdu_type,
        error: 0,
        trap: None,
        vars: Vec::new(),
    };
    let binds = if pdu_type == TRAP_V1 {
        let (enterprise, b) = ber::expect(t.body, OID)?;
        if !ber::oid_valid(enterprise) {
            return Err(Error::Invalid);
        }
        let (addr, b) = ber::expect(b, IP_ADDRESS)?;
        let agent: [u8; 4] = addr.try_into().map_err(|_| Error::Invalid)?;
        let (generic, b) = ber::uint(b)?;
        let (_specific, b) = ber::uint(b)?;
        // time-stamp: TimeTicks.
        let (_ticks, b) = ber::expect(b, 0x43)?;
        p.trap = Some(Trap {
            generic: generic.ok_or(Error::Invalid)?,
            enterprise: span(whole, enterprise),
            agent,
        });
        b
    } else {
        // request-id, then error-status and error-index (non-repeaters and
        // max-repetitions in a GetBulkRequest).
        let (_req, b) = ber::uint(t.body)?;
        let (status, b) = ber::uint(b)?;
        let (_index, b) = ber::uint(b)?;
        if pdu_type != GET_BULK_REQUEST {
            p.error = status.unwrap_or(0);
        }
        b
    };
    let (mut list, _) = ber::expect(binds, SEQUENCE)?;
    while !list.is_empty() {
        let (bind, rest) = ber::expect(list, SEQUENCE)?;
        let (oid, value) = ber::expect(bind, OID)?;
        if !ber::oid_valid(oid) {
            return Err(Error::Invalid);
        }
        ber::read(value)?;
        if p.vars.len() < MAX_VARS {
            p.vars.push(span(whole, oid));
        }
        list = rest;
    }
    Ok(p)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A version 2c GetRequest (community `public`) for sysDescr.0.
    pub const GET_V2C: &[u8] = b"\x30\x26\x02\x01\x01\x04\x06public\xa0\x19\x02\x01\x01\x02\x01\x00\x02\x01\x00\x30\x0e\x30\x0c\x06\x08\x2b\x06\x01\x02\x01\x01\x01\x00\x05\x00";

    /// A version 1 trap: linkDown from 10.0.0.1, enterprise 1.3.6.1.4.1.311, one
    /// binding.
    pub const TRAP: &[u8] = b"\x30\x37\x02\x01\x00\x04\x06public\xa4\x2a\x06\x07\x2b\x06\x01\x04\x01\x82\x37\x40\x04\x0a\x00\x00\x01\x02\x01\x02\x02\x01\x00\x43\x01\x10\x30\x10\x30\x0e\x06\x09\x2b\x06\x01\x02\x01\x02\x02\x01\x01\x02\x01\x01";

    #[test]
    fn version_2c_get() {
        assert_eq!(envelope_version(GET_V2C), Ok(2));
        let m = parse(GET_V2C).unwrap();
        assert_eq!(m.version, 2);
        let c = m.community.clone().unwrap();
        assert_eq!(&GET_V2C[c.start as usize..c.end as usize], b"public");
        let p = m.pdu.unwrap();
        assert_eq!((p.pdu_type, p.error, p.vars.len()), (0, 0, 1));
        let v = p.vars[0].clone();
        assert_eq!(
            ber::oid_string(&GET_V2C[v.start as usize..v.end as usize]),
            "1.3.6.1.2.1.1.1.0"
        );
    }

    #[test]
    fn version_1_trap() {
        assert_eq!(envelope_version(TRAP), Ok(1));
        let m = parse(TRAP).unwrap();
        let p = m.pdu.unwrap();
        let t = p.trap.unwrap();
        assert_eq!((p.pdu_type, t.generic, t.agent), (4, 2, [10, 0, 0, 1]));
        assert_eq!(p.vars.len(), 1);
    }

    #[test]
    fn malformed() {
        assert!(parse(&GET_V2C[..20]).is_err());
        assert!(envelope_version(&GET_V2C[..20]).is_err());
        let mut v5 = GET_V2C.to_vec();
        v5[4] = 5;
        assert!(parse(&v5).is_err());
        assert!(envelope_version(&v5).is_err());
        assert!(envelope_version(b"\x30\x00").is_err());
    }
}
