//! EtherNet/IP encapsulation (CIP Vol. 2) and the CIP messages it carries (CIP
//! Vol. 1), over borrowed bytes, as Suricata reads them: the 24-byte encapsulation
//! header; for SendRRData and SendUnitData the interface handle, timeout and the
//! common packet format's items, an unconnected or connected data item holding a CIP
//! request (service, logical path, attribute lists, a Multiple Service Packet's
//! embedded requests) or response (status, extended status, embedded responses); for
//! ListIdentity, ListServices and ListInterfaces replies their items; RegisterSession's
//! protocol version and options.
//!
//! Every count is bounded: by the PDU's own length, and the embedded services of a
//! Multiple Service Packet and the attributes of a list by [`MAX_MULTIPLE`] and
//! [`MAX_ATTRIBUTES`] (a PDU past them is invalid).

use std::ops::Range;

/// The encapsulation header's length.
pub const HEADER_LEN: usize = 24;
/// Most embedded services of one Multiple Service Packet.
pub const MAX_MULTIPLE: usize = 256;
/// Most attributes of one Get/Set Attribute List request kept.
pub const MAX_ATTRIBUTES: usize = 256;
/// Most CPF items of one PDU.
pub const MAX_ITEMS: usize = 64;

pub const CMD_NOP: u16 = 0;
pub const CMD_LIST_SERVICES: u16 = 4;
pub const CMD_LIST_IDENTITY: u16 = 0x63;
pub const CMD_LIST_INTERFACES: u16 = 0x64;
pub const CMD_REGISTER_SESSION: u16 = 0x65;
pub const CMD_UNREGISTER_SESSION: u16 = 0x66;
pub const CMD_SEND_RR_DATA: u16 = 0x6f;
pub const CMD_SEND_UNIT_DATA: u16 = 0x70;
pub const CMD_INDICATE_STATUS: u16 = 0x72;
pub const CMD_CANCEL: u16 = 0x73;

/// The commands Suricata names (its rule and EVE names).
pub const COMMANDS: &[(u16, &str)] = &[
    (CMD_NOP, "nop"),
    (CMD_LIST_SERVICES, "list_services"),
    (CMD_LIST_IDENTITY, "list_identity"),
    (CMD_LIST_INTERFACES, "list_interfaces"),
    (CMD_REGISTER_SESSION, "register_session"),
    (CMD_UNREGISTER_SESSION, "unregister_session"),
    (CMD_SEND_RR_DATA, "send_r_r_data"),
    (CMD_SEND_UNIT_DATA, "send_unit_data"),
    (CMD_INDICATE_STATUS, "indicate_status"),
    (CMD_CANCEL, "cancel"),
];

/// The encapsulation statuses Suricata names.
pub const STATUSES: &[(u32, &str)] = &[
    (0, "success"),
    (1, "invalid_cmd"),
    (2, "no_resources"),
    (3, "incorrect_data"),
    (0x64, "invalid_session"),
    (0x65, "invalid_length"),
    (0x69, "unsupported_prot_rev"),
    (0x6a, "encap_header_error"),
];

pub fn command_name(cmd: u16) -> Option<&'static str> {
    COMMANDS.iter().find(|(c, _)| *c == cmd).map(|(_, n)| *n)
}

pub fn status_name(status: u32) -> Option<&'static str> {
    STATUSES.iter().find(|(s, _)| *s == status).map(|(_, n)| *n)
}

pub const ITEM_CONNECTED_DATA: u16 = 0xb1;
pub const ITEM_UNCONNECTED_DATA: u16 = 0xb2;
pub const ITEM_IDENTITY: u16 = 0x0c;
pub const ITEM_SERVICES: u16 = 0x100;

pub const CIP_GET_ATTR_LIST: u8 = 3;
pub const CIP_SET_ATTR_LIST: u8 = 4;
pub const CIP_MULTIPLE_SERVICE: u8 = 0x0a;

/// Logical segment types (`segment_type >> 2`).
pub const SEGMENT_CLASS: u8 = 8;
pub const SEGMENT_INSTANCE: u8 = 9;
pub const SEGMENT_ATTRIBUTE: u8 = 12;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Header {
    pub cmd: u16,
    pub length: u16,
    pub session: u32,
    pub status: u32,
    pub context: u64,
    pub options: u32,
}

/// Why nothing came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// More bytes are needed.
    Incomplete,
    /// Not what the field allows (a path segment that is not logical, a bound).
    Invalid,
}

type Res<T> = Result<T, Error>;

/// A little-endian cursor; `pos` counts from the start of the PDU.
#[derive(Clone, Copy)]
struct Cur<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Cur<'a> {
    fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        let (x, rest) = self.b.split_at_checked(n).ok_or(Error::Incomplete)?;
        self.b = rest;
        self.pos += n;
        Ok(x)
    }
    fn u8(&mut self) -> Res<u8> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Res<u16> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Res<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self) -> Res<u64> {
        let lo = u64::from(self.u32()?);
        let hi = u64::from(self.u32()?);
        Ok(lo | hi << 32)
    }
}

pub fn parse_header(b: &[u8]) -> Res<Header> {
    let mut c = Cur { b, pos: 0 };
    Ok(Header {
        cmd: c.u16()?,
        length: c.u16()?,
        session: c.u32()?,
        status: c.u32()?,
        context: c.u64()?,
        options: c.u32()?,
    })
}

/// A logical path segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub segment_type: u8,
    pub value: u32,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Multiple {
    pub packets: Vec<Cip>,
    /// Each embedded packet's bytes in the PDU (a `cip` frame each).
    pub spans: Vec<Range<usize>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum RequestPayload {
    #[default]
    Unhandled,
    GetAttributeList(Vec<u16>),
    SetAttributeList(Option<u16>),
    Multiple(Multiple),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CipDir {
    Request {
        path: Vec<Segment>,
        payload: RequestPayload,
    },
    Response {
        status: u8,
        status_extended: Vec<u8>,
        multiple: Option<Multiple>,
    },
}

/// A CIP request or response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cip {
    /// The service code without the response bit.
    pub service: u8,
    pub dir: CipDir,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Identity {
    pub protocol_version: u16,
    pub vendor_id: u16,
    pub device_type: u16,
    pub product_code: u16,
    pub revision_major: u8,
    pub revision_minor: u8,
    pub status: u16,
    pub serial: u32,
    pub product_name: Vec<u8>,
    pub state: u8,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Services {
    pub protocol_version: u16,
    pub capabilities: u16,
    pub service_name: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ItemPayload {
    Unparsed,
    Data { seq: Option<u16>, cip: Cip },
    Identity(Identity),
    Services(Services),
}

/// A common packet format item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub item_type: u16,
    pub length: u16,
    /// The item's bytes in the PDU, type and length included (an `enip.item` frame).
    pub span: Range<usize>,
    /// A data item's CIP message in the PDU (a `cip` frame: Suricata's length is the
    /// item's, the sequence number of a connected item included).
    pub cip_span: Range<usize>,
    pub payload: ItemPayload,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Payload {
    #[default]
    Unparsed,
    Cip {
        handle: u32,
        timeout: u16,
        items: Vec<Item>,
    },
    ListIdentity(Vec<Item>),
    ListServices(Vec<Item>),
    ListInterfaces(Vec<Item>),
    RegisterSession {
        protocol_version: u16,
        options: u16,
    },
}

/// One encapsulation PDU.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pdu {
    pub header: Header,
    pub payload: Payload,
    /// The command's data did not parse (`enip.invalid_pdu`).
    pub invalid: bool,
}

impl Pdu {
    /// The CPF items of the PDU, whatever its command.
    pub fn items(&self) -> &[Item] {
        match &self.payload {
            Payload::Cip { items, .. }
            | Payload::ListIdentity(items)
            | Payload::ListServices(items)
            | Payload::ListInterfaces(items) => items,
            _ => &[],
        }
    }

    /// The CIP message of the first data item, as Suricata's keywords and EVE read it.
    pub fn cip(&self) -> Option<&Cip> {
        match &self.payload {
            Payload::Cip { items, .. } => items.iter().find_map(|i| match &i.payload {
                ItemPayload::Data { cip, .. } => Some(cip),
                _ => None,
            }),
            _ => None,
        }
    }

    /// The identity of a ListIdentity reply's first item.
    pub fn identity(&self) -> Option<&Identity> {
        match &self.payload {
            Payload::ListIdentity(items) => match &items.first()?.payload {
                ItemPayload::Identity(i) => Some(i),
                _ => None,
            },
            _ => None,
        }
    }

    /// The services of a ListServices reply's first item.
    pub fn services(&self) -> Option<&Services> {
        match &self.payload {
            Payload::ListServices(items) => match &items.first()?.payload {
                ItemPayload::Services(s) => Some(s),
                _ => None,
            },
            _ => None,
        }
    }
}

fn segment(c: &mut Cur<'_>) -> Res<Segment> {
    let segment_type = c.u8()?;
    if segment_type >> 5 != 1 {
        // Only logical segments.
        return Err(Error::Invalid);
    }
    let value = match segment_type & 3 {
        0 => u32::from(c.u8()?),
        1 => {
            c.u8()?;
            u32::from(c.u16()?)
        }
        2 => {
            c.u8()?;
            c.u32()?
        }
        _ => return Err(Error::Invalid),
    };
    Ok(Segment {
        segment_type,
        value,
    })
}

fn path(c: &mut Cur<'_>) -> Res<Vec<Segment>> {
    let words = c.u8()?;
    let mut p = Cur {
        b: c.take(2 * usize::from(words))?,
        pos: 0,
    };
    // At most one segment per two bytes: bounded by the path's 255 words.
    let mut segs = Vec::new();
    while !p.b.is_empty() {
        segs.push(segment(&mut p)?);
    }
    Ok(segs)
}

/// A Multiple Service Packet's offsets and packets; `start` is where its count is.
fn multiple(c: &mut Cur<'_>) -> Res<Multiple> {
    let start = *c;
    let n = usize::from(c.u16()?);
    if n > MAX_MULTIPLE {
        return Err(Error::Invalid);
    }
    let mut offsets = Cur {
        b: c.take(2 * n)?,
        pos: 0,
    };
    let mut m = Multiple::default();
    let mut end = *c;
    for _ in 0..n {
        let off = usize::from(offsets.u16()?);
        if off >= start.b.len() {
            return Err(Error::Invalid);
        }
        let mut sub = Cur {
            b: &start.b[off..],
            pos: start.pos + off,
        };
        let from = sub.pos;
        m.packets.push(cip(&mut sub, false)?);
        m.spans.push(from..sub.pos);
        end = sub;
    }
    // What follows is after the last packet parsed.
    *c = end;
    Ok(m)
}

fn cip(c: &mut Cur<'_>, multi: bool) -> Res<Cip> {
    let service = c.u8()?;
    let dir = if service & 0x80 == 0 {
        let path = path(c)?;
        let payload = match service {
            CIP_GET_ATTR_LIST => {
                let n = usize::from(c.u16()?);
                if n > MAX_ATTRIBUTES {
                    return Err(Error::Invalid);
                }
                let mut list = Vec::with_capacity(n);
                for _ in 0..n {
                    list.push(c.u16()?);
                }
                RequestPayload::GetAttributeList(list)
            }
            CIP_SET_ATTR_LIST => {
                let n = c.u16()?;
                // The values are class specific: the first attribute only.
                RequestPayload::SetAttributeList(if n > 0 { Some(c.u16()?) } else { None })
            }
            CIP_MULTIPLE_SERVICE if multi => RequestPayload::Multiple(multiple(c)?),
            _ => RequestPayload::Unhandled,
        };
        CipDir::Request { path, payload }
    } else {
        c.u8()?;
        let status = c.u8()?;
        let n = c.u8()?;
        let status_extended = c.take(usize::from(n))?.to_vec();
        let multiple = if service & 0x7f == CIP_MULTIPLE_SERVICE && multi {
            Some(multiple(c)?)
        } else {
            None
        };
        CipDir::Response {
            status,
            status_extended,
            multiple,
        }
    };
    Ok(Cip {
        service: service & 0x7f,
        dir,
    })
}

fn identity(c: &mut Cur<'_>) -> Res<Identity> {
    let protocol_version = c.u16()?;
    c.take(16)?;
    let vendor_id = c.u16()?;
    let device_type = c.u16()?;
    let product_code = c.u16()?;
    let revision_major = c.u8()?;
    let revision_minor = c.u8()?;
    let status = c.u16()?;
    let serial = c.u32()?;
    let n = c.u8()?;
    let product_name = c.take(usize::from(n))?.to_vec();
    let state = c.u8()?;
    Ok(Identity {
        protocol_version,
        vendor_id,
        device_type,
        product_code,
        revision_major,
        revision_minor,
        status,
        serial,
        product_name,
        state,
    })
}

fn item(c: &mut Cur<'_>) -> Res<Item> {
    let from = c.pos;
    let item_type = c.u16()?;
    let length = c.u16()?;
    let mut data = Cur {
        b: c.take(usize::from(length))?,
        pos: c.pos - usize::from(length),
    };
    let mut cip_start = data.pos;
    let payload = match item_type {
        ITEM_IDENTITY => ItemPayload::Identity(identity(&mut data)?),
        ITEM_SERVICES => {
            let protocol_version = data.u16()?;
            let capabilities = data.u16()?;
            let service_name = data.take(16)?.to_vec();
            ItemPayload::Services(Services {
                protocol_version,
                capabilities,
                service_name,
            })
        }
        ITEM_CONNECTED_DATA => {
            let seq = data.u16()?;
            cip_start += 2;
            ItemPayload::Data {
                seq: Some(seq),
                cip: cip(&mut data, true)?,
            }
        }
        ITEM_UNCONNECTED_DATA => ItemPayload::Data {
            seq: None,
            cip: cip(&mut data, true)?,
        },
        _ => ItemPayload::Unparsed,
    };
    Ok(Item {
        item_type,
        length,
        span: from..c.pos,
        cip_span: cip_start..cip_start + usize::from(length),
        payload,
    })
}

fn items(c: &mut Cur<'_>) -> Res<Vec<Item>> {
    let n = usize::from(c.u16()?);
    if n > MAX_ITEMS {
        return Err(Error::Invalid);
    }
    let mut v = Vec::with_capacity(n.min(4));
    for _ in 0..n {
        v.push(item(c)?);
    }
    Ok(v)
}

/// The PDU's length once its header is in.
pub fn pdu_len(b: &[u8]) -> Option<usize> {
    let h = b.get(..4)?;
    Some(HEADER_LEN + usize::from(u16::from_le_bytes([h[2], h[3]])))
}

/// Parses the PDU at the start of `b`: the PDU and its length. A command whose data
/// does not parse gives a PDU flagged `invalid`.
pub fn parse(b: &[u8]) -> Res<(Pdu, usize)> {
    let header = parse_header(b)?;
    let len = HEADER_LEN + usize::from(header.length);
    let body = b.get(HEADER_LEN..len).ok_or(Error::Incomplete)?;
    let mut c = Cur {
        b: body,
        pos: HEADER_LEN,
    };
    let parsed = match header.cmd {
        CMD_REGISTER_SESSION => (|| {
            Ok(Payload::RegisterSession {
                protocol_version: c.u16()?,
                options: c.u16()?,
            })
        })(),
        CMD_LIST_SERVICES if header.length > 0 => items(&mut c).map(Payload::ListServices),
        CMD_LIST_INTERFACES if header.length > 0 => items(&mut c).map(Payload::ListInterfaces),
        CMD_LIST_IDENTITY if header.length > 0 => items(&mut c).map(Payload::ListIdentity),
        CMD_SEND_RR_DATA | CMD_SEND_UNIT_DATA => (|| {
            let handle = c.u32()?;
            let timeout = c.u16()?;
            let items = items(&mut c)?;
            Ok(Payload::Cip {
                handle,
                timeout,
                items,
            })
        })(),
        _ => Ok(Payload::Unparsed),
    };
    let (payload, invalid) = match parsed {
        Ok(p) => (p, false),
        Err(_) => (Payload::Unparsed, true),
    };
    Ok((
        Pdu {
            header,
            payload,
            invalid,
        },
        len,
    ))
}

/// Suricata's probe: a header whose status and command it knows, and the checks of
/// a few commands.
pub fn probe(b: &[u8]) -> bool {
    let Ok(h) = parse_header(b) else {
        return false;
    };
    if status_name(h.status).is_none() {
        return false;
    }
    match h.cmd {
        CMD_NOP => h.options == 0,
        CMD_REGISTER_SESSION => h.length == 4,
        CMD_UNREGISTER_SESSION => h.length == 4 || h.length == 0,
        CMD_LIST_INTERFACES => {
            let mut c = Cur {
                b: &b[HEADER_LEN..],
                pos: 0,
            };
            c.u16()
                .and_then(|n| c.take(2 * usize::from(n)).map(|_| ()))
                .is_ok()
        }
        c => command_name(c).is_some(),
    }
}

/// Whether `resp` answers `req`: the same command and session (a RegisterSession
/// reply brings the session), and for CIP the same sequence number when both carry
/// connected data.
pub fn answers(req: &Pdu, resp: &Pdu) -> bool {
    if req.header.cmd != resp.header.cmd {
        return false;
    }
    if req.header.session != resp.header.session && req.header.cmd != CMD_REGISTER_SESSION {
        return false;
    }
    match (&req.payload, &resp.payload) {
        (Payload::Cip { items: a, .. }, Payload::Cip { items: b, .. }) => {
            if a.len() >= 2
                && b.len() >= 2
                && a[1].item_type == ITEM_CONNECTED_DATA
                && b[1].item_type == ITEM_CONNECTED_DATA
            {
                let seq = |i: &Item| match i.payload {
                    ItemPayload::Data { seq, .. } => seq,
                    _ => None,
                };
                return seq(&a[1]).is_some() && seq(&a[1]) == seq(&b[1]);
            }
            true
        }
        (Payload::Cip { .. }, _) => false,
        (_, Payload::Cip { .. }) => false,
        _ => true,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A ListIdentity request and its reply (a 1756-ENBT/A).
    pub const LIST_IDENTITY_REQ: &[u8] = &[
        0x63, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
    ];

    pub fn list_identity_reply() -> Vec<u8> {
        let mut item = Vec::new();
        item.extend_from_slice(&1u16.to_le_bytes()); // protocol version
        item.extend_from_slice(&[0u8; 16]); // socket address
        item.extend_from_slice(&1u16.to_le_bytes()); // vendor
        item.extend_from_slice(&12u16.to_le_bytes()); // device type
        item.extend_from_slice(&58u16.to_le_bytes()); // product code
        item.extend_from_slice(&[4, 3]); // revision
        item.extend_from_slice(&0x30u16.to_le_bytes());
        item.extend_from_slice(&0x524d8eu32.to_le_bytes());
        item.push(11);
        item.extend_from_slice(b"1756-ENBT/A");
        item.push(3);
        let mut data = 1u16.to_le_bytes().to_vec();
        data.extend_from_slice(&ITEM_IDENTITY.to_le_bytes());
        data.extend_from_slice(&(item.len() as u16).to_le_bytes());
        data.extend_from_slice(&item);
        let mut pdu = vec![0x63, 0];
        pdu.extend_from_slice(&(data.len() as u16).to_le_bytes());
        pdu.extend_from_slice(&[0; 20]);
        pdu.extend_from_slice(&data);
        pdu
    }

    /// SendRRData carrying an unconnected Get Attribute List (class 1, instance 1,
    /// attributes 1 and 7), or a Multiple Service Packet of two of them.
    pub fn send_rr_data(cip: &[u8]) -> Vec<u8> {
        let mut data = Vec::new();
        data.extend_from_slice(&0u32.to_le_bytes());
        data.extend_from_slice(&1u16.to_le_bytes());
        data.extend_from_slice(&2u16.to_le_bytes());
        data.extend_from_slice(&[0, 0, 0, 0]); // null address item
        data.extend_from_slice(&ITEM_UNCONNECTED_DATA.to_le_bytes());
        data.extend_from_slice(&(cip.len() as u16).to_le_bytes());
        data.extend_from_slice(cip);
        let mut pdu = vec![0x6f, 0];
        pdu.extend_from_slice(&(data.len() as u16).to_le_bytes());
        pdu.extend_from_slice(&[1, 0, 0, 0]); // session
        pdu.extend_from_slice(&[0; 16]);
        pdu.extend_from_slice(&data);
        pdu
    }

    pub const GET_ATTR_LIST: &[u8] = &[
        0x03, 0x02, 0x20, 0x01, 0x24, 0x01, 0x02, 0x00, 0x01, 0x00, 0x07, 0x00,
    ];

    pub fn multiple_request() -> Vec<u8> {
        let mut m = vec![0x0a, 0x02, 0x20, 0x02, 0x24, 0x01];
        m.extend_from_slice(&2u16.to_le_bytes());
        m.extend_from_slice(&6u16.to_le_bytes());
        m.extend_from_slice(&(6 + GET_ATTR_LIST.len() as u16).to_le_bytes());
        m.extend_from_slice(GET_ATTR_LIST);
        m.extend_from_slice(GET_ATTR_LIST);
        m
    }

    #[test]
    fn list_identity() {
        let (p, n) = parse(LIST_IDENTITY_REQ).unwrap();
        assert_eq!(
            (n, p.payload.clone(), p.invalid),
            (24, Payload::Unparsed, false)
        );
        let r = list_identity_reply();
        let (p, n) = parse(&r).unwrap();
        assert_eq!(n, r.len());
        let id = p.identity().unwrap();
        assert_eq!(id.product_name, b"1756-ENBT/A");
        assert_eq!((id.vendor_id, id.serial, id.state), (1, 0x524d8e, 3));
        assert_eq!(p.items()[0].span, 26..r.len());
        assert!(answers(&parse(LIST_IDENTITY_REQ).unwrap().0, &p));
        assert!(probe(LIST_IDENTITY_REQ));
    }

    #[test]
    fn cip_requests_and_multiple_service_packets() {
        let r = send_rr_data(GET_ATTR_LIST);
        let (p, _) = parse(&r).unwrap();
        let cip = p.cip().unwrap();
        assert_eq!(cip.service, CIP_GET_ATTR_LIST);
        let CipDir::Request { path, payload } = &cip.dir else {
            panic!()
        };
        assert_eq!(path.len(), 2);
        assert_eq!(
            (path[0].segment_type >> 2, path[0].value),
            (SEGMENT_CLASS, 1)
        );
        assert_eq!(payload, &RequestPayload::GetAttributeList(vec![1, 7]));
        let item = &p.items()[1];
        assert_eq!(&r[item.cip_span.clone()], GET_ATTR_LIST);

        let r = send_rr_data(&multiple_request());
        let (p, _) = parse(&r).unwrap();
        let CipDir::Request {
            payload: RequestPayload::Multiple(m),
            ..
        } = &p.cip().unwrap().dir
        else {
            panic!()
        };
        assert_eq!(m.packets.len(), 2);
        assert_eq!(&r[m.spans[1].clone()], GET_ATTR_LIST);
    }

    #[test]
    fn bad_pdus() {
        assert_eq!(parse(&LIST_IDENTITY_REQ[..10]), Err(Error::Incomplete));
        let mut r = send_rr_data(GET_ATTR_LIST);
        // A path segment that is not logical.
        let at = r.len() - GET_ATTR_LIST.len() + 2;
        r[at] = 0x91;
        let (p, _) = parse(&r).unwrap();
        assert!(p.invalid);
        // Too many embedded services.
        let mut m = vec![0x0a, 0x00];
        m.extend_from_slice(&((MAX_MULTIPLE + 1) as u16).to_le_bytes());
        m.resize(m.len() + 2 * (MAX_MULTIPLE + 1), 0);
        let (p, _) = parse(&send_rr_data(&m)).unwrap();
        assert!(p.invalid);
        // Offsets pointing past the packet.
        let mut m = vec![0x0a, 0x00, 0x01, 0x00, 0xff, 0x00];
        m.push(0);
        assert!(parse(&send_rr_data(&m)).unwrap().0.invalid);
        assert!(!probe(b"GET / HTTP/1.1\r\nHost: a\r\n\r\n"));
    }
}
