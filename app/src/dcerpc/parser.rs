//! The connection-oriented DCE/RPC PDUs (C706 §12.6, MS-RPCE) over borrowed bytes: the
//! common header and the bodies of BIND/ALTER_CONTEXT, BIND_ACK/ALTER_CONTEXT_RESP,
//! REQUEST and RESPONSE. Numbers are in the byte order the header's data
//! representation says (`drep[0] & 0x10`: little-endian).

/// Bytes of the common header.
pub const HDR_LEN: usize = 16;
/// Presentation-context items one BIND may carry that are kept (the count is a byte;
/// the rest of a longer list is not parsed).
pub const MAX_CTX_ITEMS: usize = 64;
/// Transfer syntaxes one presentation-context item may list (a byte, each 20 bytes).
pub const MAX_TRANSFER_SYNTAXES: usize = 255;

pub const REQUEST: u8 = 0;
pub const RESPONSE: u8 = 2;
pub const FAULT: u8 = 3;
pub const BIND: u8 = 11;
pub const BINDACK: u8 = 12;
pub const BINDNAK: u8 = 13;
pub const ALTER_CONTEXT: u8 = 14;
pub const ALTER_CONTEXT_RESP: u8 = 15;
pub const AUTH3: u8 = 16;
pub const SHUTDOWN: u8 = 17;
pub const CO_CANCEL: u8 = 18;
pub const ORPHANED: u8 = 19;
pub const RTS: u8 = 20;

/// `pfc_flags`: first fragment of a call.
pub const PFC_FIRST_FRAG: u8 = 0x01;
/// `pfc_flags`: last fragment of a call.
pub const PFC_LAST_FRAG: u8 = 0x02;
/// `pfc_flags`: a request carries an object UUID after its opnum.
pub const PFC_OBJECT_UUID: u8 = 0x80;

/// The EVE name of PDU type `t` (Suricata's).
pub fn type_name(t: u8) -> std::borrow::Cow<'static, str> {
    const NAMES: [&str; 21] = [
        "REQUEST",
        "PING",
        "RESPONSE",
        "FAULT",
        "WORKING",
        "NOCALL",
        "REJECT",
        "ACK",
        "CL_CANCEL",
        "FACK",
        "CANCEL_ACK",
        "BIND",
        "BINDACK",
        "BINDNAK",
        "ALTER_CONTEXT",
        "ALTER_CONTEXT_RESP",
        "AUTH3",
        "SHUTDOWN",
        "CO_CANCEL",
        "ORPHANED",
        "RTS",
    ];
    match NAMES.get(usize::from(t)) {
        Some(n) => std::borrow::Cow::Borrowed(n),
        None => std::borrow::Cow::Owned(t.to_string()),
    }
}

/// Whether PDU type `t` is sent by the client (toward the server).
pub fn from_client(t: u8) -> bool {
    matches!(
        t,
        REQUEST | BIND | ALTER_CONTEXT | AUTH3 | SHUTDOWN | CO_CANCEL | ORPHANED
    )
}

/// The common header of a connection-oriented PDU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub minor: u8,
    pub ptype: u8,
    pub flags: u8,
    pub drep: [u8; 4],
    pub frag_len: u16,
    pub auth_len: u16,
    pub call_id: u32,
}

impl Header {
    pub fn little_endian(&self) -> bool {
        self.drep[0] & 0x10 != 0
    }

    /// A header a parser follows: version 5.0 or 5.1, a type Suricata knows and a
    /// fragment no shorter than the header.
    pub fn valid(&self) -> bool {
        self.version == 5
            && self.minor <= 1
            && self.ptype <= RTS
            && usize::from(self.frag_len) >= HDR_LEN
    }
}

/// A bounded reader in one byte order.
struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
    le: bool,
}

impl<'a> Rd<'a> {
    fn new(b: &'a [u8], le: bool) -> Rd<'a> {
        Rd { b, pos: 0, le }
    }
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        let s: [u8; 2] = self.take(2)?.try_into().ok()?;
        Some(if self.le {
            u16::from_le_bytes(s)
        } else {
            u16::from_be_bytes(s)
        })
    }
    fn u32(&mut self) -> Option<u32> {
        let s: [u8; 4] = self.take(4)?.try_into().ok()?;
        Some(if self.le {
            u32::from_le_bytes(s)
        } else {
            u32::from_be_bytes(s)
        })
    }
    /// A UUID in the PDU's byte order, returned in its canonical (big-endian) form.
    fn uuid(&mut self) -> Option<[u8; 16]> {
        let mut u: [u8; 16] = self.take(16)?.try_into().ok()?;
        if self.le {
            u[0..4].reverse();
            u[4..6].reverse();
            u[6..8].reverse();
        }
        Some(u)
    }
}

/// The header at the start of `b` (`None`: fewer than [`HDR_LEN`] bytes).
pub fn header(b: &[u8]) -> Option<Header> {
    let h = b.get(..HDR_LEN)?;
    let drep = [h[4], h[5], h[6], h[7]];
    let mut r = Rd::new(&h[8..], drep[0] & 0x10 != 0);
    Some(Header {
        version: h[0],
        minor: h[1],
        ptype: h[2],
        flags: h[3],
        drep,
        frag_len: r.u16()?,
        auth_len: r.u16()?,
        call_id: r.u32()?,
    })
}

/// One presentation-context item of a BIND: the abstract syntax (interface) it asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtxItem {
    pub ctx_id: u16,
    pub uuid: [u8; 16],
    pub version: u16,
    pub version_minor: u16,
}

/// The context items of a BIND or ALTER_CONTEXT body (after the header), at most
/// [`MAX_CTX_ITEMS`] of them; `None` when the body is cut short.
pub fn bind(body: &[u8], le: bool, items: &mut Vec<CtxItem>) -> Option<()> {
    let mut r = Rd::new(body, le);
    r.take(8)?; // max_xmit_frag, max_recv_frag, assoc_group_id
    let n = r.u8()?;
    r.take(3)?;
    for _ in 0..n {
        let ctx_id = r.u16()?;
        let n_syntaxes = r.u8()?;
        r.u8()?;
        let uuid = r.uuid()?;
        let version = r.u16()?;
        let version_minor = r.u16()?;
        r.take(20 * usize::from(n_syntaxes).min(MAX_TRANSFER_SYNTAXES))?;
        if items.len() < MAX_CTX_ITEMS {
            items.push(CtxItem {
                ctx_id,
                uuid,
                version,
                version_minor,
            });
        }
    }
    Some(())
}

/// The results of a BIND_ACK or ALTER_CONTEXT_RESP body, in the order of the context
/// items of its BIND: (result, reason).
pub fn bind_ack(body: &[u8], le: bool, results: &mut Vec<(u16, u16)>) -> Option<()> {
    let mut r = Rd::new(body, le);
    r.take(8)?; // max_xmit_frag, max_recv_frag, assoc_group_id
    let sec_addr_len = usize::from(r.u16()?);
    r.take(sec_addr_len)?;
    // Aligned to 4 bytes from the start of the PDU (the header and the 10 bytes so far
    // leave it 2 past an alignment).
    let pad = (4 - (sec_addr_len + 2) % 4) % 4;
    r.take(pad)?;
    let n = r.u8()?;
    r.take(3)?;
    for _ in 0..n {
        let result = r.u16()?;
        let reason = r.u16()?;
        r.take(20)?;
        if results.len() < MAX_CTX_ITEMS {
            results.push((result, reason));
        }
    }
    Some(())
}

/// A REQUEST's header fields after the common header, and where its stub data starts
/// in the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub ctx_id: u16,
    pub opnum: u16,
    pub stub_at: usize,
}

pub fn request(body: &[u8], le: bool, flags: u8) -> Option<Request> {
    let mut r = Rd::new(body, le);
    r.u32()?; // alloc_hint
    let ctx_id = r.u16()?;
    let opnum = r.u16()?;
    if flags & PFC_OBJECT_UUID != 0 {
        r.take(16)?;
    }
    Some(Request {
        ctx_id,
        opnum,
        stub_at: r.pos,
    })
}

/// Bytes of a REQUEST's header fields after the common header (alloc_hint, context
/// id, opnum), before its optional object UUID.
pub const REQUEST_HDR: usize = 8;

/// Canonical UUID text (`12345678-1234-abcd-ef00-01234567cffb`).
pub fn uuid_string(u: &[u8]) -> String {
    let mut s = String::with_capacity(36);
    for (i, b) in u.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push(char::from(b"0123456789abcdef"[usize::from(b >> 4)]));
        s.push(char::from(b"0123456789abcdef"[usize::from(b & 15)]));
    }
    s
}

/// Parses canonical UUID text (any case) into its 16 bytes.
pub fn parse_uuid(s: &str) -> Option<[u8; 16]> {
    let s = s.trim().as_bytes();
    if s.len() != 36 || [8, 13, 18, 23].iter().any(|&i| s[i] != b'-') {
        return None;
    }
    let hex: Vec<u8> = s.iter().copied().filter(|&c| c != b'-').collect();
    if hex.len() != 32 {
        return None;
    }
    let mut u = [0u8; 16];
    for (i, pair) in hex.chunks(2).enumerate() {
        let v = std::str::from_utf8(pair).ok()?;
        u[i] = u8::from_str_radix(v, 16).ok()?;
    }
    Some(u)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A little-endian BIND (call 2) asking for Netlogon
    /// (12345678-1234-abcd-ef00-01234567cffb v1.0) in context 0.
    pub const BIND_LE: &[u8] = &[
        5, 0, 11, 3, 0x10, 0, 0, 0, 72, 0, 0, 0, 2, 0, 0, 0, // header
        0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 1, 0, 0, 0, // bind
        0, 0, 1, 0, // ctx 0, one syntax
        0x78, 0x56, 0x34, 0x12, 0x34, 0x12, 0xcd, 0xab, 0xef, 0, 1, 0x23, 0x45, 0x67, 0xcf,
        0xfb, // uuid
        1, 0, 0, 0, // version 1.0
        0x04, 0x5d, 0x88, 0x8a, 0xeb, 0x1c, 0xc9, 0x11, 0x9f, 0xe8, 0x08, 0, 0x2b, 0x10, 0x48,
        0x60, 2, 0, 0, 0, // NDR
    ];

    #[test]
    fn header_and_bind() {
        let h = header(BIND_LE).unwrap();
        assert!(h.valid() && h.little_endian());
        assert_eq!((h.ptype, h.frag_len, h.call_id), (BIND, 72, 2));
        let mut items = Vec::new();
        bind(&BIND_LE[HDR_LEN..], true, &mut items).unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(
            uuid_string(&items[0].uuid),
            "12345678-1234-abcd-ef00-01234567cffb"
        );
        assert_eq!((items[0].version, items[0].version_minor), (1, 0));
        assert_eq!(
            parse_uuid("12345678-1234-ABCD-ef00-01234567cffb"),
            Some(items[0].uuid)
        );
        assert_eq!(parse_uuid("12345678-1234-abcd-ef00-01234567cff"), None);
        assert_eq!(parse_uuid("12345678x1234-abcd-ef00-01234567cffb"), None);
        // Cut anywhere: no panic, no item.
        for n in 0..BIND_LE.len() - HDR_LEN {
            let mut v = Vec::new();
            assert!(bind(&BIND_LE[HDR_LEN..HDR_LEN + n], true, &mut v).is_none());
        }
    }

    #[test]
    fn bind_ack_alignment() {
        // sec_addr "\\PIPE\\netlogon\0" is 15 bytes: it ends 41 bytes into the PDU,
        // 3 bytes of padding follow.
        let mut b = vec![0xb8, 0x10, 0xb8, 0x10, 0, 0, 0, 0, 15, 0];
        b.extend_from_slice(b"\\PIPE\\netlogon\0");
        b.extend_from_slice(&[0; 3]);
        b.extend_from_slice(&[2, 0, 0, 0]);
        b.extend_from_slice(&[0, 0, 0, 0]);
        b.extend_from_slice(&[0; 20]);
        b.extend_from_slice(&[2, 0, 2, 0]);
        b.extend_from_slice(&[0; 20]);
        let mut r = Vec::new();
        bind_ack(&b, true, &mut r).unwrap();
        assert_eq!(r, vec![(0, 0), (2, 2)]);
    }

    #[test]
    fn names() {
        assert_eq!(type_name(BINDACK), "BINDACK");
        assert_eq!(type_name(99), "99");
        assert!(from_client(BIND) && !from_client(RESPONSE));
    }
}
