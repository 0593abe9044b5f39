//! RDP's connection sequence as Suricata 8 reads it: T.123 TPKTs (T.123 section 8)
//! carrying X.224 Connection Request / Confirm TPDUs (X.224 13.3, 13.4) with the
//! RDP_NEG_REQ / RDP_NEG_RSP / RDP_NEG_FAILURE structures (MS-RDPBCGR 2.2.1.1,
//! 2.2.1.2), and X.224 Data TPDUs carrying the MCS Connect Initial (its GCC user data:
//! client core data, network data; MS-RDPBCGR 2.2.1.3) and Connect Response; and,
//! after a negotiated TLS, the TLS records up to the server's Certificate.
//!
//! The parsers are streaming and strict the way Suricata's are, since what it logs
//! depends on it: every function answers a value, [`Fail::Error`] (not this
//! structure; an optional one is then absent) or [`Fail::Incomplete`] (more bytes are
//! needed, which within a TPKT that has all come means the direction never goes on).

/// TPKT version (T.123 section 8).
pub const TPKT_VERSION: u8 = 3;
/// TLS record type of a handshake: the first byte of a TLS flight.
pub const TLS_HANDSHAKE: u8 = 0x16;
/// Most bytes of a TLS record's fragment taken (2^14 plus the expansion allowed to a
/// ciphertext).
pub const MAX_TLS_RECORD: usize = (1 << 14) + 2048;
/// Channels kept of a client network data block (its data holds at most ~5400).
pub const MAX_CHANNELS: usize = 256;
/// Certificates kept of a Certificate message.
pub const MAX_CERTS: usize = 64;

/// Why a parser did not answer a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fail {
    /// More bytes are needed.
    Incomplete,
    /// Not this structure.
    Error,
}

type Res<'a, T> = Result<(T, &'a [u8]), Fail>;

/// A bounded reader over a slice; a short read is [`Fail::Incomplete`].
#[derive(Debug, Clone, Copy)]
struct Rd<'a>(&'a [u8]);

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Fail> {
        if self.0.len() < n {
            return Err(Fail::Incomplete);
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Ok(a)
    }
    fn u8(&mut self) -> Result<u8, Fail> {
        Ok(self.take(1)?[0])
    }
    fn be16(&mut self) -> Result<u16, Fail> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn be24(&mut self) -> Result<usize, Fail> {
        let b = self.take(3)?;
        Ok(usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }
    fn le16(&mut self) -> Result<u16, Fail> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn le32(&mut self) -> Result<u32, Fail> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A fixed tag, streaming: a prefix of it is [`Fail::Incomplete`].
    fn tag(&mut self, t: &[u8]) -> Result<(), Fail> {
        let n = self.0.len().min(t.len());
        if self.0[..n] != t[..n] {
            return Err(Fail::Error);
        }
        self.take(t.len()).map(|_| ())
    }
    /// The bytes up to `t`, and `t` consumed.
    fn until(&mut self, t: &[u8]) -> Result<&'a [u8], Fail> {
        let at = memchr::memmem::find(self.0, t).ok_or(Fail::Incomplete)?;
        let v = self.take(at)?;
        self.take(t.len())?;
        Ok(v)
    }
}

/// An optional structure: absent on [`Fail::Error`], [`Fail::Incomplete`] passed on.
fn opt<'a, T>(r: Res<'a, T>, input: &'a [u8]) -> Res<'a, Option<T>> {
    match r {
        Ok((v, rest)) => Ok((Some(v), rest)),
        Err(Fail::Error) => Ok((None, input)),
        Err(Fail::Incomplete) => Err(Fail::Incomplete),
    }
}

/// What a TPKT carries, as far as Suricata looks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Tpdu {
    ConnectionRequest(ConnectionRequest),
    ConnectionConfirm(ConnectionConfirm),
    ConnectInitial(ConnectInitial),
    ConnectResponse,
    /// An X.224 Data TPDU carrying something else, or another TPDU.
    Other,
}

/// An X.224 Connection Request (class 0): MS-RDPBCGR 2.2.1.1.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectionRequest {
    /// The `Cookie: mstshash=` value.
    pub cookie: Option<String>,
    /// RDP_NEG_REQ: its flags and requested protocols.
    pub negotiation: Option<(u8, u32)>,
}

/// The server's answer in an X.224 Connection Confirm: MS-RDPBCGR 2.2.1.2.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Negotiation {
    /// RDP_NEG_RSP: flags and the selected protocol.
    Response { flags: u8, protocol: u32 },
    /// RDP_NEG_FAILURE: the failure code (1..=6).
    Failure { code: u32 },
}

/// An X.224 Connection Confirm (class 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ConnectionConfirm {
    pub negotiation: Option<Negotiation>,
}

/// The MCS Connect Initial's GCC user data blocks Suricata reads, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnectInitial {
    pub blocks: Vec<Block>,
}

/// A client data block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Core(Box<ClientCore>),
    /// CS_NET: the channel names.
    Net(Vec<String>),
    /// Another type (CS_SECURITY, CS_CLUSTER, ...), not logged.
    Unknown,
}

/// TS_UD_CS_CORE (MS-RDPBCGR 2.2.1.3.2): the mandatory fields, and each optional one
/// present when it and all before it are there and valid.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientCore {
    pub version: u32,
    pub desktop_width: u16,
    pub desktop_height: u16,
    pub color_depth: u16,
    pub keyboard_layout: u32,
    pub client_build: u32,
    pub client_name: String,
    pub keyboard_type: u32,
    pub keyboard_subtype: u32,
    pub function_keys: u32,
    pub ime: String,
    pub post_beta2_color_depth: Option<u16>,
    pub product_id: Option<u16>,
    pub serial_number: Option<u32>,
    pub high_color_depth: Option<u16>,
    pub supported_color_depths: Option<u16>,
    pub early_capability_flags: Option<u16>,
    pub dig_product_id: Option<String>,
    pub connection_type: Option<u8>,
    pub server_selected_protocol: Option<u32>,
    pub physical_width: Option<u32>,
    pub physical_height: Option<u32>,
    pub orientation: Option<u16>,
    pub desktop_scale: Option<u32>,
    pub device_scale: Option<u32>,
}

/// RDP_NEG_REQ flags defined (MS-RDPBCGR 2.2.1.1.1).
const NEG_REQ_FLAGS: u8 = 0x01 | 0x02 | 0x08;
/// RDP_NEG_RSP flags defined (2.2.1.2.1).
const NEG_RSP_FLAGS: u8 = 0x1f;
/// Protocol flags defined: SSL, HYBRID, RDSTLS, HYBRID_EX.
const PROTOCOL_FLAGS: u32 = 0x0f;

/// One TPKT and what it carries, and the bytes after it.
pub fn tpkt(input: &[u8]) -> Res<'_, Tpdu> {
    let mut r = Rd(input);
    if r.u8()? != TPKT_VERSION {
        return Err(Fail::Error);
    }
    r.u8()?;
    let len = usize::from(r.be16()?).checked_sub(4).ok_or(Fail::Error)?;
    let body = r.take(len)?;
    let rest = r.0;
    if let (Some(cr), _) = opt(connection_request(body), body)? {
        return Ok((Tpdu::ConnectionRequest(cr), rest));
    }
    if let (Some(cc), _) = opt(connection_confirm(body), body)? {
        return Ok((Tpdu::ConnectionConfirm(cc), rest));
    }
    if let (Some(d), _) = opt(data(body), body)? {
        return Ok((d, rest));
    }
    Ok((Tpdu::Other, rest))
}

/// The TPKT's length if its header has come (for telling "wait" from "never").
pub fn tpkt_len(input: &[u8]) -> Option<usize> {
    match input {
        [_, _, hi, lo, ..] => Some(usize::from(u16::from_be_bytes([*hi, *lo]))),
        _ => None,
    }
}

/// The fixed part of a CR or CC TPDU (X.224 13.3.1, 13.4.1): its type `code`, and
/// the variable part's length.
fn x224_header<'a>(r: &mut Rd<'a>, code: u8) -> Result<(usize, u8, u8), Fail> {
    let li = r.u8()?;
    if li == 0xff {
        return Err(Fail::Error);
    }
    let cdt = r.u8()?;
    if cdt >> 4 != code || cdt & 0x0f > 1 {
        return Err(Fail::Error);
    }
    if r.be16()? != 0 {
        return Err(Fail::Error);
    }
    r.be16()?;
    let co = r.u8()?;
    let (class, options) = (co >> 4, co & 0x0f);
    if class > 4 || options > 3 || li < 6 {
        return Err(Fail::Error);
    }
    Ok((usize::from(li - 6), class, options))
}

fn connection_request(input: &[u8]) -> Res<'_, ConnectionRequest> {
    let mut r = Rd(input);
    let (n, class, options) = x224_header(&mut r, 0xe)?;
    let data = r.take(n)?;
    let (cookie, rest) = if data.is_empty() {
        (None, data)
    } else {
        opt(cookie(data), data)?
    };
    let negotiation = if rest.is_empty() {
        None
    } else {
        opt(neg_req(rest), rest)?.0
    };
    if class != 0 || options != 0 {
        return Err(Fail::Error);
    }
    Ok((
        ConnectionRequest {
            cookie,
            negotiation,
        },
        r.0,
    ))
}

/// `Cookie: mstshash=IDENTIFIER\r\n` (2.2.1.1).
fn cookie(input: &[u8]) -> Res<'_, String> {
    let mut r = Rd(input);
    r.tag(b"Cookie: ")?;
    r.tag(b"mstshash=")?;
    let v = r.until(b"\r\n")?;
    let s = std::str::from_utf8(v).map_err(|_| Fail::Error)?;
    Ok((s.to_string(), r.0))
}

/// RDP_NEG_REQ: type 1, flags, length 8, requested protocols.
fn neg_req(input: &[u8]) -> Res<'_, (u8, u32)> {
    let mut r = Rd(input);
    if r.u8()? != 1 {
        return Err(Fail::Error);
    }
    let flags = r.u8()?;
    if flags & !NEG_REQ_FLAGS != 0 {
        return Err(Fail::Error);
    }
    if r.le16()? != 8 {
        return Err(Fail::Error);
    }
    let protocols = r.le32()?;
    if protocols & !PROTOCOL_FLAGS != 0 {
        return Err(Fail::Error);
    }
    Ok(((flags, protocols), r.0))
}

fn connection_confirm(input: &[u8]) -> Res<'_, ConnectionConfirm> {
    let mut r = Rd(input);
    let (n, class, options) = x224_header(&mut r, 0xd)?;
    let negotiation = if n > 0 {
        let data = r.take(n)?;
        match opt(neg_rsp(data), data)?.0 {
            Some(v) => Some(v),
            None => opt(neg_failure(data), data)?.0,
        }
    } else {
        None
    };
    if class != 0 || options != 0 {
        return Err(Fail::Error);
    }
    Ok((ConnectionConfirm { negotiation }, r.0))
}

/// RDP_NEG_RSP: type 2, flags, length 8, one selected protocol.
fn neg_rsp(input: &[u8]) -> Res<'_, Negotiation> {
    let mut r = Rd(input);
    if r.u8()? != 2 {
        return Err(Fail::Error);
    }
    let flags = r.u8()?;
    if flags & !NEG_RSP_FLAGS != 0 {
        return Err(Fail::Error);
    }
    if r.le16()? != 8 {
        return Err(Fail::Error);
    }
    let protocol = r.le32()?;
    if !matches!(protocol, 0 | 1 | 2 | 4 | 8) {
        return Err(Fail::Error);
    }
    Ok((Negotiation::Response { flags, protocol }, r.0))
}

/// RDP_NEG_FAILURE: type 3, flags, length 8, a failure code of 2.2.1.2.2.
fn neg_failure(input: &[u8]) -> Res<'_, Negotiation> {
    let mut r = Rd(input);
    if r.u8()? != 3 {
        return Err(Fail::Error);
    }
    r.u8()?;
    if r.le16()? != 8 {
        return Err(Fail::Error);
    }
    let code = r.le32()?;
    if !(1..=6).contains(&code) {
        return Err(Fail::Error);
    }
    Ok((Negotiation::Failure { code }, r.0))
}

/// An X.224 Data TPDU of class 0 (LI 2, DT, EOT) and the MCS PDU it starts with.
fn data(input: &[u8]) -> Res<'_, Tpdu> {
    let mut r = Rd(input);
    if r.u8()? != 2 || r.u8()? != 0xf0 || r.u8()? != 0x80 {
        return Err(Fail::Error);
    }
    let body = r.0;
    if let (Some(ci), _) = opt(connect_initial(body), body)? {
        return Ok((Tpdu::ConnectInitial(ci), &[]));
    }
    if let (Some(()), _) = opt(connect_response(body), body)? {
        return Ok((Tpdu::ConnectResponse, &[]));
    }
    Ok((Tpdu::Other, &[]))
}

/// MCS Connect-Initial (T.125 `[APPLICATION 101]`): the GCC user data after the
/// H.221 client key `Duca`, a PER length and the client data blocks.
fn connect_initial(input: &[u8]) -> Res<'_, ConnectInitial> {
    let mut r = Rd(input);
    if r.u8()? != 0x7f || r.u8()? != 0x65 {
        return Err(Fail::Error);
    }
    r.until(b"Duca")?;
    let n = per_length(&mut r)?;
    let mut rest = r.take(n)?;
    let mut blocks = Vec::new();
    loop {
        let block = match opt(client_core(rest), rest)? {
            (Some(c), next) => Some((Block::Core(Box::new(c)), next)),
            (None, _) => match opt(client_net(rest), rest)? {
                (Some(n), next) => Some((Block::Net(n), next)),
                (None, _) => opt(client_unknown(rest), rest)?
                    .0
                    .map(|next| (Block::Unknown, next)),
            },
        };
        let Some((b, next)) = block else { break };
        blocks.push(b);
        rest = next;
        if rest.is_empty() {
            break;
        }
    }
    Ok((ConnectInitial { blocks }, r.0))
}

/// An X.691 length determinant: one byte (< 128) or two (< 16384).
fn per_length(r: &mut Rd<'_>) -> Result<usize, Fail> {
    let b = r.u8()?;
    match b >> 6 {
        0 | 1 => Ok(usize::from(b)),
        2 => Ok(usize::from(b & 0x3f) << 8 | usize::from(r.u8()?)),
        _ => Err(Fail::Error),
    }
}

/// A client data block header of type `typ`: its body (the length counts the header).
fn block_body<'a>(r: &mut Rd<'a>, typ: u16, header: usize) -> Result<usize, Fail> {
    if r.le16()? != typ {
        return Err(Fail::Error);
    }
    usize::from(r.le16()?)
        .checked_sub(header)
        .ok_or(Fail::Error)
}

/// Little-endian UTF-16 up to its first NUL (or the end).
fn utf16(b: &[u8]) -> Result<String, Fail> {
    let units: Vec<u16> = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0)
        .collect();
    String::from_utf16(&units).map_err(|_| Fail::Error)
}

/// TS_UD_CS_CORE.
fn client_core(input: &[u8]) -> Res<'_, ClientCore> {
    let mut r = Rd(input);
    let n = block_body(&mut r, 0xc001, 4)?;
    let data = r.take(n)?;
    let mut d = Rd(data);
    let mut c = ClientCore {
        version: d.le32()?,
        desktop_width: d.le16()?,
        desktop_height: d.le16()?,
        color_depth: d.le16()?,
        ..ClientCore::default()
    };
    d.le16()?; // SASSequence
    c.keyboard_layout = d.le32()?;
    c.client_build = d.le32()?;
    c.client_name = utf16(d.take(32)?)?;
    c.keyboard_type = d.le32()?;
    c.keyboard_subtype = d.le32()?;
    c.function_keys = d.le32()?;
    c.ime = utf16(d.take(64)?)?;
    optional_core(&mut d, &mut c);
    Ok((c, r.0))
}

/// The optional fields: each one absent when it is short or not a valid value, and
/// then all those after it.
fn optional_core(d: &mut Rd<'_>, c: &mut ClientCore) {
    let Some(v) = d.le16().ok().filter(|v| matches!(v, 0 | 0xca00..=0xca04)) else {
        return;
    };
    c.post_beta2_color_depth = Some(v);
    let Ok(v) = d.le16() else { return };
    c.product_id = Some(v);
    let Ok(v) = d.le32() else { return };
    c.serial_number = Some(v);
    let Some(v) = d
        .le16()
        .ok()
        .filter(|v| matches!(v, 0 | 4 | 8 | 15 | 16 | 24))
    else {
        return;
    };
    c.high_color_depth = Some(v);
    let Some(v) = d.le16().ok().filter(|v| v & !0x0f == 0) else {
        return;
    };
    c.supported_color_depths = Some(v);
    let Some(v) = d.le16().ok().filter(|v| v & !0x07ff == 0) else {
        return;
    };
    c.early_capability_flags = Some(v);
    let Some(v) = d.take(64).ok().and_then(|b| utf16(b).ok()) else {
        return;
    };
    c.dig_product_id = Some(v);
    let Some(v) = d.u8().ok().filter(|&v| v <= 7) else {
        return;
    };
    c.connection_type = Some(v);
    if d.u8().is_err() {
        return;
    }
    let Some(v) = d.le32().ok().filter(|v| v & !PROTOCOL_FLAGS == 0) else {
        return;
    };
    c.server_selected_protocol = Some(v);
    let mm = |v: &u32| (10..=10_000).contains(v);
    let Some(v) = d.le32().ok().filter(mm) else {
        return;
    };
    c.physical_width = Some(v);
    let Some(v) = d.le32().ok().filter(mm) else {
        return;
    };
    c.physical_height = Some(v);
    let Some(v) = d.le16().ok().filter(|v| matches!(v, 0 | 90 | 180 | 270)) else {
        return;
    };
    c.orientation = Some(v);
    let Some(v) = d.le32().ok().filter(|v| (100..=500).contains(v)) else {
        return;
    };
    c.desktop_scale = Some(v);
    c.device_scale = d.le32().ok().filter(|v| matches!(v, 100 | 140 | 180));
}

/// TS_UD_CS_NET: channel names (8 bytes, NUL-padded) with their options.
fn client_net(input: &[u8]) -> Res<'_, Vec<String>> {
    let mut r = Rd(input);
    let n = block_body(&mut r, 0xc003, 8)?;
    let count = r.le32()?;
    let mut d = Rd(r.take(n)?);
    let mut names = Vec::new();
    for _ in 0..count {
        let raw = d.take(8)?;
        let end = memchr::memchr(0, raw).unwrap_or(raw.len());
        let name = std::str::from_utf8(&raw[..end]).map_err(|_| Fail::Error)?;
        if names.len() < MAX_CHANNELS {
            names.push(name.to_string());
        }
        d.le32()?;
    }
    Ok((names, r.0))
}

/// A client data block of another type.
fn client_unknown(input: &[u8]) -> Res<'_, &[u8]> {
    let mut r = Rd(input);
    let typ = r.le16()?;
    if typ == 0xc001 || typ == 0xc003 {
        return Err(Fail::Error);
    }
    let n = usize::from(r.le16()?).checked_sub(4).ok_or(Fail::Error)?;
    r.take(n)?;
    Ok((r.0, r.0))
}

/// MCS Connect-Response (T.125 `[APPLICATION 102]`).
fn connect_response(input: &[u8]) -> Res<'_, ()> {
    let mut r = Rd(input);
    if r.u8()? != 0x7f || r.u8()? != 0x66 {
        return Err(Fail::Error);
    }
    Ok(((), r.0))
}

/// One TLS record (RFC 5246 6.2.1) checked as far as a TLS parser would, and the
/// certificate chains of the Certificate messages it holds.
pub fn tls_record(input: &[u8]) -> Res<'_, Vec<Vec<&[u8]>>> {
    let mut r = Rd(input);
    let typ = r.u8()?;
    r.be16()?;
    let len = usize::from(r.be16()?);
    if len > MAX_TLS_RECORD {
        return Err(Fail::Error);
    }
    let body = r.take(len)?;
    let mut chains = Vec::new();
    match typ {
        // ChangeCipherSpec: its one message.
        0x14 => {
            if body.first() != Some(&1) {
                return Err(Fail::Error);
            }
        }
        // Alert: level and description pairs, at least one.
        0x15 => {
            if body.len() < 2 {
                return Err(Fail::Error);
            }
        }
        TLS_HANDSHAKE => {
            let mut h = Rd(body);
            let mut first = true;
            while !h.0.is_empty() {
                match handshake(&mut h) {
                    Ok(Some(chain)) => chains.push(chain),
                    Ok(None) => {}
                    Err(_) if first => return Err(Fail::Error),
                    Err(_) => break,
                }
                first = false;
            }
            if first {
                return Err(Fail::Error);
            }
        }
        // Application data, heartbeat.
        0x17 | 0x18 => {}
        _ => return Err(Fail::Error),
    }
    Ok((chains, r.0))
}

/// TLS handshake message types a parser knows.
fn known_handshake(t: u8) -> bool {
    matches!(t, 0..=4 | 8 | 11..=16 | 20..=25 | 67 | 254)
}

/// One handshake message, whole within its record: a Certificate's chain.
fn handshake<'a>(h: &mut Rd<'a>) -> Result<Option<Vec<&'a [u8]>>, Fail> {
    let t = h.u8()?;
    let n = h.be24()?;
    let body = h.take(n)?;
    if !known_handshake(t) {
        return Err(Fail::Error);
    }
    if t != 11 {
        return Ok(None);
    }
    let mut m = Rd(body);
    let n = m.be24()?;
    let mut list = Rd(m.take(n)?);
    let mut chain = Vec::new();
    while let Ok(len) = list.be24() {
        let Ok(cert) = list.take(len) else { break };
        if chain.len() < MAX_CERTS {
            chain.push(cert);
        }
    }
    Ok(Some(chain))
}

/// The TLS record's total length if its header has come.
pub fn tls_record_len(input: &[u8]) -> Option<usize> {
    match input {
        [_, _, _, hi, lo, ..] => Some(5 + usize::from(u16::from_be_bytes([*hi, *lo]))),
        _ => None,
    }
}

/// A certificate's serial number as Suricata logs it (lowercase hex of the unsigned
/// number, no leading zeros), if it is an X.509 certificate.
pub fn x509_serial(der: &[u8]) -> Option<String> {
    let info = crate::tls::x509::parse(der)?;
    let hex = info.serial.replace(':', "").to_ascii_lowercase();
    let s = hex.trim_start_matches('0');
    Some(if s.is_empty() { "0".into() } else { s.into() })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A Connection Request: TPKT (37 bytes), CR TPDU of class 0, `Cookie:
    /// mstshash=user123\r\n`.
    pub const CR_COOKIE: &[u8] =
        b"\x03\x00\x00\x25\x20\xe0\x00\x00\x00\x00\x00Cookie: mstshash=user123\r\n";
    /// A Connection Request with an RDP_NEG_REQ asking for standard RDP security, then
    /// one byte of the next TPKT.
    pub const CR_NEG: &[u8] =
        b"\x03\x00\x00\x13\x0e\xe0\x00\x00\x00\x00\x00\x01\x00\x08\x00\x00\x00\x00\x00\x03";
    /// A Connection Confirm with an RDP_NEG_RSP selecting SSL, flags 0x1f.
    pub const CC_SSL: &[u8] =
        b"\x03\x00\x00\x13\x0e\xd0\x00\x00\x12\x34\x00\x02\x1f\x08\x00\x01\x00\x00\x00";

    #[test]
    fn connection_request_with_a_cookie() {
        let (t, rest) = tpkt(CR_COOKIE).unwrap();
        assert!(rest.is_empty());
        assert_eq!(
            t,
            Tpdu::ConnectionRequest(ConnectionRequest {
                cookie: Some("user123".into()),
                negotiation: None
            })
        );
        for n in 0..CR_COOKIE.len() {
            assert_eq!(tpkt(&CR_COOKIE[..n]), Err(Fail::Incomplete), "{n}");
        }
    }

    #[test]
    fn connection_request_with_a_negotiation() {
        let (t, rest) = tpkt(CR_NEG).unwrap();
        assert_eq!(rest, b"\x03");
        assert_eq!(
            t,
            Tpdu::ConnectionRequest(ConnectionRequest {
                cookie: None,
                negotiation: Some((0, 0))
            })
        );
        // An unknown RDP_NEG type: the request without a negotiation.
        let mut b = CR_NEG.to_vec();
        b[11] = 2;
        let (t, _) = tpkt(&b).unwrap();
        assert_eq!(t, Tpdu::ConnectionRequest(ConnectionRequest::default()));
        // Not class 0: another TPDU.
        b[10] = 0x20;
        assert_eq!(tpkt(&b).unwrap().0, Tpdu::Other);
    }

    #[test]
    fn confirm_response_and_failure() {
        let (t, _) = tpkt(CC_SSL).unwrap();
        assert_eq!(
            t,
            Tpdu::ConnectionConfirm(ConnectionConfirm {
                negotiation: Some(Negotiation::Response {
                    flags: 0x1f,
                    protocol: 1
                })
            })
        );
        let mut b = CC_SSL.to_vec();
        b[11] = 3;
        b[15] = 5;
        assert_eq!(
            tpkt(&b).unwrap().0,
            Tpdu::ConnectionConfirm(ConnectionConfirm {
                negotiation: Some(Negotiation::Failure { code: 5 })
            })
        );
        b[15] = 7;
        assert_eq!(
            tpkt(&b).unwrap().0,
            Tpdu::ConnectionConfirm(ConnectionConfirm::default())
        );
    }

    #[test]
    fn bad_tpkts() {
        assert_eq!(tpkt(b"\x03\x00\x00\x02"), Err(Fail::Error));
        assert_eq!(tpkt(b"\x16\x03\x01"), Err(Fail::Error));
        // X.224 Data, an MCS PDU that is neither.
        assert_eq!(
            tpkt(b"\x03\x00\x00\x09\x02\xf0\x80\x7f\xff").unwrap().0,
            Tpdu::Other
        );
        assert_eq!(
            tpkt(b"\x03\x00\x00\x09\x02\xf0\x80\x7f\x66").unwrap().0,
            Tpdu::ConnectResponse
        );
        // A Connect Initial without its client key never completes.
        assert_eq!(
            tpkt(b"\x03\x00\x00\x0b\x02\xf0\x80\x7f\x65\x00\x00"),
            Err(Fail::Incomplete)
        );
    }

    #[test]
    fn per_lengths() {
        assert_eq!(per_length(&mut Rd(b"\x28")), Ok(0x28));
        assert_eq!(per_length(&mut Rd(b"\x81\x28")), Ok(0x128));
        assert_eq!(per_length(&mut Rd(b"\x81")), Err(Fail::Incomplete));
        assert_eq!(per_length(&mut Rd(b"\xc0")), Err(Fail::Error));
    }

    #[test]
    fn serials() {
        assert_eq!(x509_serial(b"\x30\x03\x02\x01\x01"), None);
    }
}
