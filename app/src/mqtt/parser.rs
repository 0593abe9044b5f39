//! MQTT control packets (3.1, 3.1.1 and 5.0) over borrowed bytes: the fixed header and
//! each packet type's variable header and payload, v5 properties included.
//!
//! [`parse_message`] reads one packet from the front of a stream: `Ok` with the packet
//! and the bytes it took, [`Error::Incomplete`] when more bytes are needed (not a
//! malformation), [`Error::Malformed`] when the bytes cannot be an MQTT packet. A
//! packet whose remaining length is above the configured limit is not parsed: it comes
//! back as [`Op::Truncated`] with the number of bytes to skip.

/// Longest remaining-length varint (MQTT 3.1.1 §2.2.3: four bytes).
pub const MAX_VARINT_LEN: usize = 4;
/// Properties kept per property list; more are parsed over and counted as a
/// malformation ([`Message::over_bounds`]).
pub const MAX_PROPERTIES: usize = 64;
/// Topics kept per SUBSCRIBE or UNSUBSCRIBE; more are parsed over and flagged.
pub const MAX_TOPICS: usize = 256;
/// Codes kept per SUBACK or UNSUBACK.
pub const MAX_CODES: usize = 256;

/// The packet types (MQTT 5 §2.1.2); 0 is reserved.
pub const CONNECT: u8 = 1;
pub const CONNACK: u8 = 2;
pub const PUBLISH: u8 = 3;
pub const PUBACK: u8 = 4;
pub const PUBREC: u8 = 5;
pub const PUBREL: u8 = 6;
pub const PUBCOMP: u8 = 7;
pub const SUBSCRIBE: u8 = 8;
pub const SUBACK: u8 = 9;
pub const UNSUBSCRIBE: u8 = 10;
pub const UNSUBACK: u8 = 11;
pub const PINGREQ: u8 = 12;
pub const PINGRESP: u8 = 13;
pub const DISCONNECT: u8 = 14;
pub const AUTH: u8 = 15;

/// The packet type names, as Suricata's `mqtt.type` takes them and its EVE logs them
/// (lowercase), by type code.
pub const TYPE_NAMES: [&str; 16] = [
    "UNASSIGNED",
    "CONNECT",
    "CONNACK",
    "PUBLISH",
    "PUBACK",
    "PUBREC",
    "PUBREL",
    "PUBCOMP",
    "SUBSCRIBE",
    "SUBACK",
    "UNSUBSCRIBE",
    "UNSUBACK",
    "PINGREQ",
    "PINGRESP",
    "DISCONNECT",
    "AUTH",
];

/// Why a packet could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// More bytes are needed.
    Incomplete,
    /// Not a valid packet.
    Malformed,
}

/// The fixed header (MQTT 5 §2.1.1).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FixedHeader {
    pub message_type: u8,
    pub dup: bool,
    /// The two QoS bits: 3 is invalid but is what was sent.
    pub qos: u8,
    pub retain: bool,
    pub remaining_length: usize,
}

/// A v5 property value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PropValue {
    Num(u64),
    Text(Vec<u8>),
    Data(Vec<u8>),
    /// A user property: its name and value.
    Pair(Vec<u8>, Vec<u8>),
}

/// A v5 property: identifier and value; an unknown identifier has no value
/// (`PropValue::Num(0)` is not used for it: see [`Property::known`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub id: u32,
    pub value: PropValue,
    pub known: bool,
}

/// A property list: `None` when absent or empty (no `properties` object is logged).
pub type Properties = Option<Vec<Property>>;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Connect {
    pub protocol_string: Vec<u8>,
    pub protocol_version: u8,
    /// The flags byte: username 0x80, password 0x40, will retain 0x20, will QoS 0x18,
    /// will 0x04, clean session 0x02.
    pub flags: u8,
    pub keepalive: u16,
    pub properties: Properties,
    pub client_id: Vec<u8>,
    pub will_properties: Properties,
    pub will_topic: Option<Vec<u8>>,
    pub will_message: Option<Vec<u8>>,
    pub username: Option<Vec<u8>>,
    pub password: Option<Vec<u8>>,
}

pub const FLAG_USERNAME: u8 = 0x80;
pub const FLAG_PASSWORD: u8 = 0x40;
pub const FLAG_WILL_RETAIN: u8 = 0x20;
pub const FLAG_WILL: u8 = 0x04;
pub const FLAG_CLEAN_SESSION: u8 = 0x02;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topic {
    pub topic: Vec<u8>,
    /// The subscription options byte (QoS in its low two bits).
    pub qos: u8,
}

/// What a packet carries after its fixed header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    Connect(Box<Connect>),
    Connack {
        session_present: bool,
        return_code: u8,
        properties: Properties,
    },
    Publish {
        topic: Vec<u8>,
        message_id: Option<u16>,
        message: Vec<u8>,
        properties: Properties,
    },
    /// PUBACK, PUBREC, PUBREL, PUBCOMP.
    MsgIdOnly {
        message_id: u16,
        reason_code: Option<u8>,
        properties: Properties,
    },
    Subscribe {
        message_id: u16,
        topics: Vec<Topic>,
        properties: Properties,
    },
    Suback {
        message_id: u16,
        codes: Vec<u8>,
        properties: Properties,
    },
    Unsubscribe {
        message_id: u16,
        topics: Vec<Vec<u8>>,
        properties: Properties,
    },
    Unsuback {
        message_id: u16,
        codes: Vec<u8>,
        properties: Properties,
    },
    PingReq,
    PingResp,
    Disconnect {
        reason_code: Option<u8>,
        properties: Properties,
    },
    Auth {
        reason_code: u8,
        properties: Properties,
    },
    /// Type 0: nothing is parsed of it.
    Unassigned,
    /// Longer than the limit: skipped (`skipped` bytes, fixed header included).
    Truncated {
        skipped: usize,
    },
}

/// One packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub header: FixedHeader,
    pub op: Op,
    /// A bound (`MAX_PROPERTIES`, `MAX_TOPICS`, `MAX_CODES`) was hit: items past it
    /// were dropped.
    pub over_bounds: bool,
    /// Where the packet lies in its direction's stream, with its bytes (the state
    /// fills it in; none for a truncated packet).
    pub frame: Option<Box<PduFrame>>,
}

/// A packet as frames see it: Suricata's MQTT parser makes three frames of each
/// packet, `pdu` (all of it), `header` (its first 2 bytes, whatever the length of
/// the remaining-length field) and `data` (the remaining length's worth of bytes from
/// offset 2), numbered in that order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PduFrame {
    pub dir: crate::Dir,
    /// Stream offset of its first byte.
    pub offset: u64,
    /// The id of its `pdu` frame (`header` is the next, `data` the one after).
    pub id: u64,
    pub bytes: Box<[u8]>,
    /// Its remaining length (the `data` frame's length).
    pub remaining: usize,
}

/// A cursor over one packet's bytes.
struct Reader<'a> {
    b: &'a [u8],
    over: bool,
}

impl<'a> Reader<'a> {
    fn u8(&mut self) -> Result<u8, Error> {
        let (&x, rest) = self.b.split_first().ok_or(Error::Malformed)?;
        self.b = rest;
        Ok(x)
    }
    fn u16(&mut self) -> Result<u16, Error> {
        let v = self.take(2)?;
        Ok(u16::from_be_bytes([v[0], v[1]]))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        let v = self.take(4)?;
        Ok(u32::from_be_bytes([v[0], v[1], v[2], v[3]]))
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.b.len() < n {
            return Err(Error::Malformed);
        }
        let (v, rest) = self.b.split_at(n);
        self.b = rest;
        Ok(v)
    }
    /// A length-prefixed string or binary data (§1.5.4, §1.5.6).
    fn data(&mut self) -> Result<&'a [u8], Error> {
        let n = usize::from(self.u16()?);
        self.take(n)
    }
    fn varint(&mut self) -> Result<u32, Error> {
        match varint(self.b) {
            Ok((v, n)) => {
                self.b = &self.b[n..];
                Ok(v)
            }
            Err(_) => Err(Error::Malformed),
        }
    }
    fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
    fn len(&self) -> usize {
        self.b.len()
    }

    /// A property list, when `present` (v5): its length, then properties up to it.
    fn properties(&mut self, present: bool) -> Result<Properties, Error> {
        if !present {
            return Ok(None);
        }
        let len = self.varint()? as usize;
        if len == 0 {
            return Ok(None);
        }
        let mut r = Reader {
            b: self.take(len)?,
            over: false,
        };
        let mut props = Vec::new();
        while !r.is_empty() {
            let p = r.property()?;
            if props.len() < MAX_PROPERTIES {
                props.push(p);
            } else {
                self.over = true;
            }
        }
        Ok(Some(props))
    }

    fn property(&mut self) -> Result<Property, Error> {
        let id = self.varint()?;
        let value = match id {
            // Byte.
            1 | 23 | 25 | 36 | 37 | 40 | 41 | 42 => PropValue::Num(u64::from(self.u8()?)),
            // Two-byte integer.
            19 | 33 | 34 | 35 => PropValue::Num(u64::from(self.u16()?)),
            // Four-byte integer.
            2 | 17 | 24 | 39 => PropValue::Num(u64::from(self.u32()?)),
            // Variable byte integer.
            11 => PropValue::Num(u64::from(self.varint()?)),
            // UTF-8 string.
            3 | 8 | 18 | 21 | 26 | 28 | 31 => PropValue::Text(self.data()?.to_vec()),
            // Binary data.
            9 | 22 => PropValue::Data(self.data()?.to_vec()),
            // String pair.
            38 => {
                let k = self.data()?.to_vec();
                PropValue::Pair(k, self.data()?.to_vec())
            }
            // Its length is unknown: the rest of the list cannot be read. Suricata
            // reads on after the identifier; so does this.
            _ => {
                return Ok(Property {
                    id,
                    value: PropValue::Num(0),
                    known: false,
                });
            }
        };
        Ok(Property {
            id,
            value,
            known: true,
        })
    }
}

/// A variable byte integer (§1.5.5) at the start of `b`: its value and length.
pub fn varint(b: &[u8]) -> Result<(u32, usize), Error> {
    let mut v: u32 = 0;
    for (i, &x) in b.iter().enumerate().take(MAX_VARINT_LEN) {
        v |= u32::from(x & 0x7f) << (7 * i);
        if x & 0x80 == 0 {
            return Ok((v, i + 1));
        }
    }
    if b.len() >= MAX_VARINT_LEN {
        Err(Error::Malformed)
    } else {
        Err(Error::Incomplete)
    }
}

/// The fixed header at the start of `b` and its length.
pub fn fixed_header(b: &[u8]) -> Result<(FixedHeader, usize), Error> {
    let &first = b.first().ok_or(Error::Incomplete)?;
    let (len, n) = varint(&b[1..])?;
    Ok((
        FixedHeader {
            message_type: first >> 4,
            dup: first & 0x08 != 0,
            qos: (first >> 1) & 3,
            retain: first & 1 != 0,
            remaining_length: len as usize,
        },
        1 + n,
    ))
}

/// One packet at the start of `b`, for a connection whose CONNECT said
/// `protocol_version` (0 when none was seen: v3 layouts), skipping packets whose
/// remaining length is above `max_len`. Returns the packet and the bytes it took (for
/// a truncated packet: the bytes available of it, its `skipped` says how many to skip
/// in all).
pub fn parse_message(
    b: &[u8],
    protocol_version: u8,
    max_len: usize,
) -> Result<(Message, usize), Error> {
    let (header, hlen) = fixed_header(b)?;
    let len = header.remaining_length;
    if len > max_len {
        let msg = Message {
            header,
            op: Op::Truncated {
                skipped: hlen + len,
            },
            over_bounds: false,
            frame: None,
        };
        return Ok((msg, b.len().min(hlen + len)));
    }
    let Some(body) = b.get(hlen..hlen + len) else {
        return Err(Error::Incomplete);
    };
    let mut r = Reader {
        b: body,
        over: false,
    };
    let v5 = protocol_version == 5;
    let op = match header.message_type {
        CONNECT => Op::Connect(Box::new(connect(&mut r)?)),
        CONNACK => {
            let ack = r.u8()?;
            let return_code = r.u8()?;
            Op::Connack {
                session_present: ack & 1 != 0,
                return_code,
                properties: r.properties(v5)?,
            }
        }
        PUBLISH => {
            let topic = r.data()?.to_vec();
            let message_id = if header.qos > 0 { Some(r.u16()?) } else { None };
            let properties = r.properties(v5)?;
            Op::Publish {
                topic,
                message_id,
                message: r.b.to_vec(),
                properties,
            }
        }
        PUBACK | PUBREC | PUBREL | PUBCOMP => {
            let message_id = r.u16()?;
            let (reason_code, properties) = if !v5 {
                (None, None)
            } else if r.is_empty() {
                // §3.4.2.1: no reason code means success.
                (Some(0), None)
            } else {
                let rc = r.u8()?;
                let p = if r.is_empty() {
                    None
                } else {
                    r.properties(true)?
                };
                (Some(rc), p)
            };
            Op::MsgIdOnly {
                message_id,
                reason_code,
                properties,
            }
        }
        SUBSCRIBE => {
            let message_id = r.u16()?;
            let properties = r.properties(v5)?;
            let mut topics = Vec::new();
            while !r.is_empty() {
                let topic = r.data()?;
                let qos = r.u8()?;
                if topics.len() < MAX_TOPICS {
                    topics.push(Topic {
                        topic: topic.to_vec(),
                        qos,
                    });
                } else {
                    r.over = true;
                }
            }
            if topics.is_empty() {
                return Err(Error::Malformed);
            }
            Op::Subscribe {
                message_id,
                topics,
                properties,
            }
        }
        SUBACK | UNSUBACK => {
            let message_id = r.u16()?;
            let properties = r.properties(v5)?;
            let n = r.len().min(MAX_CODES);
            r.over |= r.len() > MAX_CODES;
            let codes = r.take(n)?.to_vec();
            if header.message_type == SUBACK {
                Op::Suback {
                    message_id,
                    codes,
                    properties,
                }
            } else {
                Op::Unsuback {
                    message_id,
                    codes,
                    properties,
                }
            }
        }
        UNSUBSCRIBE => {
            let message_id = r.u16()?;
            let properties = r.properties(v5)?;
            let mut topics = Vec::new();
            // A trailing byte that is no whole string ends the list (as Suricata's).
            while r.len() >= 2 {
                let Ok(topic) = r.data() else { break };
                if topics.len() < MAX_TOPICS {
                    topics.push(topic.to_vec());
                } else {
                    r.over = true;
                }
            }
            Op::Unsubscribe {
                message_id,
                topics,
                properties,
            }
        }
        PINGREQ => Op::PingReq,
        PINGRESP => Op::PingResp,
        DISCONNECT => {
            if !v5 {
                Op::Disconnect {
                    reason_code: None,
                    properties: None,
                }
            } else if r.len() < 2 {
                // §3.14.2.1: no reason code means a normal disconnection. Suricata
                // reads a reason code only with a property length after it, and logs
                // a lone reason code as 0: so does this.
                Op::Disconnect {
                    reason_code: Some(0),
                    properties: None,
                }
            } else {
                let rc = r.u8()?;
                let properties = r.properties(true)?;
                Op::Disconnect {
                    reason_code: Some(rc),
                    properties,
                }
            }
        }
        AUTH => {
            let reason_code = r.u8()?;
            Op::Auth {
                reason_code,
                properties: r.properties(true)?,
            }
        }
        _ => Op::Unassigned,
    };
    Ok((
        Message {
            header,
            op,
            over_bounds: r.over,
            frame: None,
        },
        hlen + len,
    ))
}

fn connect(r: &mut Reader<'_>) -> Result<Connect, Error> {
    let protocol_string = r.data()?.to_vec();
    let protocol_version = r.u8()?;
    let flags = r.u8()?;
    let keepalive = r.u16()?;
    let v5 = protocol_version == 5;
    let properties = r.properties(v5)?;
    let client_id = r.data()?.to_vec();
    let will = flags & FLAG_WILL != 0;
    let will_properties = r.properties(v5 && will)?;
    let (will_topic, will_message) = if will {
        let t = r.data()?.to_vec();
        (Some(t), Some(r.data()?.to_vec()))
    } else {
        (None, None)
    };
    let username = if flags & FLAG_USERNAME != 0 {
        Some(r.data()?.to_vec())
    } else {
        None
    };
    let password = if flags & FLAG_PASSWORD != 0 {
        Some(r.data()?.to_vec())
    } else {
        None
    };
    Ok(Connect {
        protocol_string,
        protocol_version,
        flags,
        keepalive,
        properties,
        client_id,
        will_properties,
        will_topic,
        will_message,
        username,
        password,
    })
}

/// The EVE name of a v5 property (Suricata's), `None` for an unknown identifier or a
/// user property (logged under its own name).
pub fn property_name(id: u32) -> Option<&'static str> {
    Some(match id {
        1 => "payload_format_indicator",
        2 => "message_expiry_interval",
        3 => "content_type",
        8 => "response_topic",
        9 => "correlation_data",
        11 => "subscription_identifier",
        17 => "session_expiry_interval",
        18 => "assigned_client_identifier",
        19 => "server_keep_alive",
        21 => "authentication_method",
        22 => "authentication_data",
        23 => "request_problem_information",
        24 => "will_delay_interval",
        25 => "request_response_information",
        26 => "response_information",
        28 => "server_reference",
        31 => "reason_string",
        33 => "receive_maximum",
        34 => "topic_alias_maximum",
        35 => "topic_alias",
        36 => "maximum_qos",
        37 => "retain_available",
        39 => "maximum_packet_size",
        40 => "wildcard_subscription_available",
        41 => "subscription_identifier_available",
        42 => "shared_subscription_available",
        _ => return None,
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A v3.1.1 CONNECT with username and password, client id `c1`.
    pub const CONNECT_V4: &[u8] =
        b"\x10\x1a\x00\x04MQTT\x04\xc2\x00\x3c\x00\x02c1\x00\x04user\x00\x04pass";
    /// A v5 CONNECT: receive maximum 20, empty client id, username and password.
    pub const CONNECT_V5: &[u8] =
        b"\x10\x1c\x00\x04MQTT\x05\xc2\x00\x3c\x03\x21\x00\x14\x00\x00\x00\x04user\x00\x04pass";
    /// A v5 CONNACK: topic alias maximum 10.
    pub const CONNACK_V5: &[u8] = b"\x20\x06\x00\x00\x03\x22\x00\x0a";

    #[test]
    fn varints() {
        assert_eq!(varint(b"\x00"), Ok((0, 1)));
        assert_eq!(varint(b"\x7f"), Ok((127, 1)));
        assert_eq!(varint(b"\x80\x01"), Ok((128, 2)));
        assert_eq!(varint(b"\xff\xff\xff\x7f"), Ok((268_435_455, 4)));
        assert_eq!(varint(b"\xff\xff"), Err(Error::Incomplete));
        assert_eq!(varint(b"\xff\xff\xff\xff\x01"), Err(Error::Malformed));
    }

    #[test]
    fn connect_v311() {
        let (m, n) = parse_message(CONNECT_V4, 0, 1 << 20).unwrap();
        assert_eq!(n, CONNECT_V4.len());
        let Op::Connect(c) = m.op else { panic!() };
        assert_eq!(c.protocol_string, b"MQTT");
        assert_eq!(c.protocol_version, 4);
        assert_eq!(c.client_id, b"c1");
        assert_eq!(c.username.as_deref(), Some(&b"user"[..]));
        assert_eq!(c.password.as_deref(), Some(&b"pass"[..]));
        assert_eq!(c.properties, None);
        assert_eq!(c.flags, 0xc2);
    }

    #[test]
    fn connect_and_connack_v5_properties() {
        let (m, _) = parse_message(CONNECT_V5, 0, 1 << 20).unwrap();
        let Op::Connect(c) = m.op else { panic!() };
        assert_eq!(c.protocol_version, 5);
        assert_eq!(
            c.properties,
            Some(vec![Property {
                id: 33,
                value: PropValue::Num(20),
                known: true
            }])
        );
        assert_eq!(c.client_id, b"");
        let (m, _) = parse_message(CONNACK_V5, 5, 1 << 20).unwrap();
        assert_eq!(
            m.op,
            Op::Connack {
                session_present: false,
                return_code: 0,
                properties: Some(vec![Property {
                    id: 34,
                    value: PropValue::Num(10),
                    known: true
                }])
            }
        );
        // The same CONNACK on a v3 connection: the property bytes are not read.
        let (m, n) = parse_message(CONNACK_V5, 4, 1 << 20).unwrap();
        assert!(matches!(
            m.op,
            Op::Connack {
                properties: None,
                ..
            }
        ));
        assert_eq!(n, CONNACK_V5.len());
    }

    #[test]
    fn publish_subscribe_and_acks() {
        // QoS 1 PUBLISH, v5, user property and message.
        let p = b"\x32\x14\x00\x01t\x00\x07\x07\x26\x00\x01k\x00\x01vpayload";
        let (m, _) = parse_message(p, 5, 1 << 20).unwrap();
        assert_eq!(m.header.qos, 1);
        let Op::Publish {
            topic,
            message_id,
            message,
            properties,
        } = m.op
        else {
            panic!()
        };
        assert_eq!(topic, b"t");
        assert_eq!(message_id, Some(7));
        assert_eq!(message, b"payload");
        assert_eq!(
            properties.unwrap()[0].value,
            PropValue::Pair(b"k".to_vec(), b"v".to_vec())
        );
        // PUBACK v5 of length 2: success.
        let (m, _) = parse_message(b"\x40\x02\x00\x07", 5, 1 << 20).unwrap();
        assert!(matches!(
            m.op,
            Op::MsgIdOnly {
                message_id: 7,
                reason_code: Some(0),
                ..
            }
        ));
        let (m, _) = parse_message(b"\x40\x02\x00\x07", 4, 1 << 20).unwrap();
        assert!(matches!(
            m.op,
            Op::MsgIdOnly {
                reason_code: None,
                ..
            }
        ));
        let s = b"\x82\x0c\x00\x01\x00\x00\x02ab\x01\x00\x01c\x02";
        let (m, _) = parse_message(s, 5, 1 << 20).unwrap();
        let Op::Subscribe { topics, .. } = m.op else {
            panic!()
        };
        assert_eq!(topics.len(), 2);
        assert_eq!((topics[1].topic.as_slice(), topics[1].qos), (&b"c"[..], 2));
        let (m, _) = parse_message(b"\x90\x05\x00\x01\x00\x00\x01", 5, 1 << 20).unwrap();
        assert!(matches!(m.op, Op::Suback { ref codes, .. } if codes == &[0, 1]));
        let (m, _) = parse_message(b"\xa2\x06\x00\x02\x00\x02ab", 4, 1 << 20).unwrap();
        assert!(matches!(m.op, Op::Unsubscribe { ref topics, .. } if topics == &[b"ab".to_vec()]));
        // A SUBSCRIBE with no topic is malformed.
        assert_eq!(
            parse_message(b"\x82\x02\x00\x01", 4, 1 << 20),
            Err(Error::Malformed)
        );
    }

    #[test]
    fn disconnect_reason_codes_as_suricata() {
        let rc = |b: &[u8], v| match parse_message(b, v, 1 << 20).unwrap().0.op {
            Op::Disconnect { reason_code, .. } => reason_code,
            _ => panic!(),
        };
        assert_eq!(rc(b"\xe0\x00", 5), Some(0));
        assert_eq!(rc(b"\xe0\x01\x04", 5), Some(0));
        assert_eq!(rc(b"\xe0\x02\x04\x00", 5), Some(4));
        assert_eq!(rc(b"\xe0\x00", 4), None);
    }

    #[test]
    fn streaming_and_limits() {
        for n in 0..CONNECT_V4.len() {
            assert_eq!(
                parse_message(&CONNECT_V4[..n], 0, 1 << 20),
                Err(Error::Incomplete),
                "{n}"
            );
        }
        // Above the limit: skipped as a whole, fixed header included.
        let (m, n) = parse_message(&CONNECT_V4[..10], 0, 16).unwrap();
        assert_eq!(
            m.op,
            Op::Truncated {
                skipped: CONNECT_V4.len()
            }
        );
        assert_eq!(n, 10);
        // A body shorter than its fields say.
        assert_eq!(
            parse_message(b"\x10\x03\x00\x04M", 0, 1 << 20),
            Err(Error::Malformed)
        );
        // Too many properties: the first ones are kept, the packet flagged.
        let mut props = Vec::new();
        for _ in 0..MAX_PROPERTIES + 1 {
            props.extend_from_slice(b"\x23\x00\x01");
        }
        let mut p = vec![
            0x20,
            0,
            0,
            0,
            (props.len() & 0x7f) as u8 | 0x80,
            (props.len() >> 7) as u8,
        ];
        p.extend_from_slice(&props);
        let rl = p.len() - 2;
        p[1] = (rl & 0x7f) as u8 | 0x80;
        p.insert(2, (rl >> 7) as u8);
        let (m, _) = parse_message(&p, 5, 1 << 20).unwrap();
        assert!(m.over_bounds);
        let Op::Connack { properties, .. } = m.op else {
            panic!()
        };
        assert_eq!(properties.unwrap().len(), MAX_PROPERTIES);
    }
}
