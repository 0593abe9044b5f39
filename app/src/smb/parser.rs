//! SMB over borrowed bytes: the NetBIOS session service framing (RFC 1002 §4.3, and
//! the 24-bit length of "direct TCP" SMB2, MS-SMB2 §2.1), the SMB1 header (MS-CIFS
//! §2.2.3.1) and the SMB2/3 header (MS-SMB2 §2.2.1), and the names Suricata logs for
//! commands, dialects and statuses. The command bodies are read where they are used
//! (`state.rs`) with the bounded reader [`Rd`].

/// NBSS record types (RFC 1002 §4.3.1).
pub const NBSS_MESSAGE: u8 = 0x00;
pub const NBSS_REQUEST: u8 = 0x81;
pub const NBSS_POSITIVE: u8 = 0x82;
pub const NBSS_NEGATIVE: u8 = 0x83;
pub const NBSS_RETARGET: u8 = 0x84;
pub const NBSS_KEEPALIVE: u8 = 0x85;
/// Bytes of the NBSS header.
pub const NBSS_HDR: usize = 4;
/// Bytes of the SMB1 header.
pub const SMB1_HDR: usize = 32;
/// Bytes of the SMB2 header.
pub const SMB2_HDR: usize = 64;
/// Bytes of the SMB3 transform header (an encrypted message).
pub const SMB3_TRANSFORM_HDR: usize = 52;

/// The NBSS header of a record: its type and length (24 bits: SMB2 over TCP uses the
/// flags byte as the length's high byte; NBSS proper has 17 bits).
pub fn nbss(b: &[u8]) -> Option<(u8, usize)> {
    let h = b.get(..NBSS_HDR)?;
    let len = usize::from(h[1]) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]);
    Some((h[0], len))
}

/// Whether `b` (after an NBSS header) starts like an SMB message: `\xffSMB` (SMB1),
/// `\xfeSMB` (SMB2/3) or `\xfdSMB` (SMB3 transform header).
pub fn smb_magic(b: &[u8]) -> Option<u8> {
    match b.get(..4)? {
        [v @ 0xfd..=0xff, b'S', b'M', b'B'] => Some(*v),
        _ => None,
    }
}

/// Whether an NBSS header of this type may start a record.
pub fn nbss_type_valid(t: u8) -> bool {
    matches!(
        t,
        NBSS_MESSAGE
            | NBSS_REQUEST
            | NBSS_POSITIVE
            | NBSS_NEGATIVE
            | NBSS_RETARGET
            | NBSS_KEEPALIVE
    )
}

/// A bounded little-endian reader: no getter can panic.
#[derive(Debug, Clone, Copy)]
pub struct Rd<'a> {
    pub b: &'a [u8],
    pub pos: usize,
}

impl<'a> Rd<'a> {
    pub fn new(b: &'a [u8]) -> Rd<'a> {
        Rd { b, pos: 0 }
    }
    pub fn at(b: &'a [u8], pos: usize) -> Rd<'a> {
        Rd { b, pos }
    }
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let end = self.pos.checked_add(n)?;
        let s = self.b.get(self.pos..end)?;
        self.pos = end;
        Some(s)
    }
    pub fn skip(&mut self, n: usize) -> Option<()> {
        self.take(n).map(|_| ())
    }
    pub fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    pub fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    pub fn rest(&self) -> &'a [u8] {
        self.b.get(self.pos..).unwrap_or(&[])
    }
}

/// `len` bytes at `off` of `b`, if they are all there.
pub fn slice(b: &[u8], off: usize, len: usize) -> Option<&[u8]> {
    b.get(off..off.checked_add(len)?)
}

/// The SMB1 header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Smb1Header {
    pub command: u8,
    /// The NT status, or (without `FLAGS2_NT_STATUS`) the DOS error class in the low
    /// byte and its code in the high half.
    pub status: u32,
    pub flags: u8,
    pub flags2: u16,
    pub tid: u16,
    pub pid: u32,
    pub uid: u16,
    pub mid: u16,
}

pub const SMB1_FLAGS_REPLY: u8 = 0x80;
pub const SMB1_FLAGS2_UNICODE: u16 = 0x8000;
pub const SMB1_FLAGS2_NT_STATUS: u16 = 0x4000;

impl Smb1Header {
    pub fn parse(b: &[u8]) -> Option<Smb1Header> {
        let mut r = Rd::new(b);
        r.skip(4)?;
        let command = r.u8()?;
        let status = r.u32()?;
        let flags = r.u8()?;
        let flags2 = r.u16()?;
        let pid_high = r.u16()?;
        r.skip(8 + 2)?;
        let tid = r.u16()?;
        let pid_low = r.u16()?;
        let uid = r.u16()?;
        let mid = r.u16()?;
        Some(Smb1Header {
            command,
            status,
            flags,
            flags2,
            tid,
            pid: u32::from(pid_high) << 16 | u32::from(pid_low),
            uid,
            mid,
        })
    }
    pub fn is_reply(&self) -> bool {
        self.flags & SMB1_FLAGS_REPLY != 0
    }
    pub fn unicode(&self) -> bool {
        self.flags2 & SMB1_FLAGS2_UNICODE != 0
    }
    /// EVE `status` and `status_code`.
    pub fn status_strings(&self) -> (String, String) {
        if self.flags2 & SMB1_FLAGS2_NT_STATUS != 0 {
            return nt_status(self.status);
        }
        let class = (self.status & 0xff) as u8;
        let code = (self.status >> 16) as u16;
        // The DOS (ERRDOS) and server (ERRSRV) error classes name the codes of
        // [MS-CIFS] 2.2.2.4 that Suricata names, and write the others as numbers.
        let name = match (class, code) {
            (1, 0) => "DOS_SUCCESS".to_string(),
            (1, 1) => "DOS_BAD_FUNC".to_string(),
            (1, 2) => "DOS_BAD_FILE".to_string(),
            (1, 3) => "DOS_BAD_PATH".to_string(),
            (1, 4) => "DOS_TOO_MANY_OPEN_FILES".to_string(),
            (1, 5) => "DOS_ACCESS_DENIED".to_string(),
            (2, 1) => "SRV_ERROR".to_string(),
            (2, 2) => "SRV_BADPW".to_string(),
            (2, 3) => "SRV_BADTYPE".to_string(),
            (2, 4) => "SRV_ACCESS".to_string(),
            (2, 91) => "SRV_BADUID".to_string(),
            (1 | 2, _) => code.to_string(),
            _ => format!("UNKNOWN_{class:02x}_{code:04x}"),
        };
        (name, format!("0x{code:04x}"))
    }
}

/// The SMB1 parameter words and bytes after the header: `(words, bytes, offset of the
/// bytes in the message)`.
pub fn smb1_params(msg: &[u8]) -> Option<(&[u8], &[u8], usize)> {
    let mut r = Rd::at(msg, SMB1_HDR);
    let wc = usize::from(r.u8()?);
    let words = r.take(wc * 2)?;
    let bc = usize::from(r.u16()?);
    let at = r.pos;
    // A byte count past the message's end is cut (Suricata is lax here too).
    let bytes = msg.get(at..at + bc.min(msg.len() - at))?;
    Some((words, bytes, at))
}

/// The SMB2 header (sync or async).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Smb2Header {
    pub status: u32,
    pub command: u16,
    pub flags: u32,
    pub next_command: u32,
    pub message_id: u64,
    pub tree_id: u32,
    pub async_id: u64,
    pub session_id: u64,
}

pub const SMB2_FLAGS_RESPONSE: u32 = 0x1;
pub const SMB2_FLAGS_ASYNC: u32 = 0x2;

impl Smb2Header {
    pub fn parse(b: &[u8]) -> Option<Smb2Header> {
        let mut r = Rd::new(b);
        r.skip(4)?;
        if r.u16()? != 64 {
            return None;
        }
        r.skip(2)?;
        let status = r.u32()?;
        let command = r.u16()?;
        r.skip(2)?;
        let flags = r.u32()?;
        let next_command = r.u32()?;
        let message_id = r.u64()?;
        let (tree_id, async_id) = if flags & SMB2_FLAGS_ASYNC != 0 {
            (0, r.u64()?)
        } else {
            r.skip(4)?;
            (r.u32()?, 0)
        };
        let session_id = r.u64()?;
        r.skip(16)?;
        Some(Smb2Header {
            status,
            command,
            flags,
            next_command,
            message_id,
            tree_id,
            async_id,
            session_id,
        })
    }
    pub fn is_response(&self) -> bool {
        self.flags & SMB2_FLAGS_RESPONSE != 0
    }
}

/// SMB2 commands (MS-SMB2 §2.2.1.2).
pub mod smb2 {
    pub const NEGOTIATE: u16 = 0;
    pub const SESSION_SETUP: u16 = 1;
    pub const LOGOFF: u16 = 2;
    pub const TREE_CONNECT: u16 = 3;
    pub const TREE_DISCONNECT: u16 = 4;
    pub const CREATE: u16 = 5;
    pub const CLOSE: u16 = 6;
    pub const READ: u16 = 8;
    pub const WRITE: u16 = 9;
    pub const IOCTL: u16 = 0xb;
    pub const GET_INFO: u16 = 0x10;
    pub const SET_INFO: u16 = 0x11;
}

/// SMB1 commands (MS-CIFS §2.2.2.1).
pub mod smb1 {
    pub const CLOSE: u8 = 0x04;
    pub const TRANS: u8 = 0x25;
    pub const ECHO: u8 = 0x2b;
    pub const READ_ANDX: u8 = 0x2e;
    pub const WRITE_ANDX: u8 = 0x2f;
    pub const TRANS2: u8 = 0x32;
    pub const TREE_DISCONNECT: u8 = 0x71;
    pub const NEGOTIATE: u8 = 0x72;
    pub const SESSION_SETUP_ANDX: u8 = 0x73;
    pub const LOGOFF_ANDX: u8 = 0x74;
    pub const TREE_CONNECT_ANDX: u8 = 0x75;
    pub const NT_TRANS: u8 = 0xa0;
    pub const NT_CREATE_ANDX: u8 = 0xa2;
    pub const NONE: u8 = 0xff;
}

/// Suricata's name of SMB2 command `c`.
pub fn smb2_command_name(c: u16) -> std::borrow::Cow<'static, str> {
    const N: [&str; 19] = [
        "SMB2_COMMAND_NEGOTIATE_PROTOCOL",
        "SMB2_COMMAND_SESSION_SETUP",
        "SMB2_COMMAND_SESSION_LOGOFF",
        "SMB2_COMMAND_TREE_CONNECT",
        "SMB2_COMMAND_TREE_DISCONNECT",
        "SMB2_COMMAND_CREATE",
        "SMB2_COMMAND_CLOSE",
        "SMB2_COMMAND_FLUSH",
        "SMB2_COMMAND_READ",
        "SMB2_COMMAND_WRITE",
        "SMB2_COMMAND_LOCK",
        "SMB2_COMMAND_IOCTL",
        "SMB2_COMMAND_CANCEL",
        "SMB2_COMMAND_KEEPALIVE",
        "SMB2_COMMAND_FIND",
        "SMB2_COMMAND_CHANGE_NOTIFY",
        "SMB2_COMMAND_GET_INFO",
        "SMB2_COMMAND_SET_INFO",
        "SMB2_COMMAND_OPLOCK_BREAK",
    ];
    match N.get(usize::from(c)) {
        Some(n) => (*n).into(),
        None => format!("SMB2_COMMAND_UNKNOWN_{c:04x}").into(),
    }
}

/// Suricata's name of SMB1 command `c`.
pub fn smb1_command_name(c: u8) -> std::borrow::Cow<'static, str> {
    let n = match c {
        0x00 => "SMB1_COMMAND_CREATE_DIRECTORY",
        0x01 => "SMB1_COMMAND_DELETE_DIRECTORY",
        0x02 => "SMB1_COMMAND_OPEN",
        0x03 => "SMB1_COMMAND_CREATE",
        0x04 => "SMB1_COMMAND_CLOSE",
        0x05 => "SMB1_COMMAND_FLUSH",
        0x06 => "SMB1_COMMAND_DELETE",
        0x07 => "SMB1_COMMAND_RENAME",
        0x08 => "SMB1_COMMAND_QUERY_INFORMATION",
        0x09 => "SMB1_COMMAND_SET_INFORMATION",
        0x0a => "SMB1_COMMAND_READ",
        0x0b => "SMB1_COMMAND_WRITE",
        0x0c => "SMB1_COMMAND_LOCK_BYTE_RANGE",
        0x0d => "SMB1_COMMAND_UNLOCK_BYTE_RANGE",
        0x0e => "SMB1_COMMAND_CREATE_TEMPORARY",
        0x0f => "SMB1_COMMAND_CREATE_NEW",
        0x10 => "SMB1_COMMAND_CHECK_DIRECTORY",
        0x11 => "SMB1_COMMAND_PROCESS_EXIT",
        0x12 => "SMB1_COMMAND_SEEK",
        0x13 => "SMB1_COMMAND_LOCK_AND_READ",
        0x14 => "SMB1_COMMAND_WRITE_AND_UNLOCK",
        0x1a => "SMB1_COMMAND_READ_RAW",
        0x1d => "SMB1_COMMAND_WRITE_RAW",
        0x22 => "SMB1_COMMAND_SET_INFORMATION2",
        0x23 => "SMB1_COMMAND_QUERY_INFORMATION2",
        0x24 => "SMB1_COMMAND_LOCKING_ANDX",
        0x25 => "SMB1_COMMAND_TRANS",
        0x26 => "SMB1_COMMAND_TRANS_SECONDARY",
        0x27 => "SMB1_COMMAND_IOCTL",
        0x2b => "SMB1_COMMAND_ECHO",
        0x2d => "SMB1_COMMAND_OPEN_ANDX",
        0x2e => "SMB1_COMMAND_READ_ANDX",
        0x2f => "SMB1_COMMAND_WRITE_ANDX",
        0x32 => "SMB1_COMMAND_TRANS2",
        0x33 => "SMB1_COMMAND_TRANS2_SECONDARY",
        0x34 => "SMB1_COMMAND_FIND_CLOSE2",
        0x71 => "SMB1_COMMAND_TREE_DISCONNECT",
        0x72 => "SMB1_COMMAND_NEGOTIATE_PROTOCOL",
        0x73 => "SMB1_COMMAND_SESSION_SETUP_ANDX",
        0x74 => "SMB1_COMMAND_LOGOFF_ANDX",
        0x75 => "SMB1_COMMAND_TREE_CONNECT_ANDX",
        0x80 => "SMB1_COMMAND_QUERY_INFO_DISK",
        0x81 => "SMB1_COMMAND_SEARCH",
        0x82 => "SMB1_COMMAND_FIND",
        0x83 => "SMB1_COMMAND_FIND_UNIQUE",
        0x84 => "SMB1_COMMAND_FIND_CLOSE",
        0xa0 => "SMB1_COMMAND_NT_TRANS",
        0xa1 => "SMB1_COMMAND_NT_TRANS_SECONDARY",
        0xa2 => "SMB1_COMMAND_NT_CREATE_ANDX",
        0xa4 => "SMB1_COMMAND_NT_CANCEL",
        0xa5 => "SMB1_COMMAND_NT_RENAME",
        _ => return format!("SMB1_COMMAND_UNKNOWN_{c:02x}").into(),
    };
    n.into()
}

/// The EVE name of SMB2 dialect revision `d`.
pub fn dialect_name(d: u16) -> String {
    match d {
        0x0202 => "2.02".into(),
        0x0210 => "2.10".into(),
        0x0222 => "2.22".into(),
        0x0224 => "2.24".into(),
        0x02ff => "2.??".into(),
        0x0300 => "3.00".into(),
        0x0302 => "3.02".into(),
        0x0310 => "3.10".into(),
        0x0311 => "3.11".into(),
        d => format!("{d:04x}"),
    }
}

/// EVE `status` and `status_code` of NT status `s`: its [MS-ERREF] name, or its
/// number in decimal when it has none (as Suricata writes it).
pub fn nt_status(s: u32) -> (String, String) {
    let name = match super::ntstatus::NT_STATUS.binary_search_by_key(&s, |&(v, _)| v) {
        Ok(i) => super::ntstatus::NT_STATUS[i].1.to_owned(),
        Err(_) => format!("{s}"),
    };
    (name, format!("0x{s:x}"))
}

/// EVE `function` of an IOCTL: its FSCTL name, or its number in decimal.
pub fn fsctl_name(code: u32) -> String {
    match super::fsctl::FSCTL.binary_search_by_key(&code, |&(v, _)| v) {
        Ok(i) => super::fsctl::FSCTL[i].1.to_owned(),
        Err(_) => format!("{code}"),
    }
}

/// A GUID (or an SMB2 file id) as Suricata writes it: the first three fields
/// little-endian, then the last eight bytes as 16-bit, 16-bit and 32-bit
/// little-endian numbers.
pub fn guid_string(g: &[u8]) -> String {
    let Some(g) = g.get(..16) else {
        return String::new();
    };
    format!(
        "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
        g[3],
        g[2],
        g[1],
        g[0],
        g[5],
        g[4],
        g[7],
        g[6],
        g[9],
        g[8],
        g[11],
        g[10],
        g[15],
        g[14],
        g[13],
        g[12]
    )
}

/// UTF-16LE bytes as a string (unpaired surrogates replaced), up to a NUL.
pub fn utf16(b: &[u8]) -> String {
    let units = b
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .take_while(|&u| u != 0);
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// Bytes up to a NUL, as (lossy) UTF-8.
pub fn ascii(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// A NUL-terminated string at `pos` of an SMB1 message (UTF-16 aligned to 2 bytes from
/// the header's start when `unicode`), and the position after it.
pub fn smb1_string(msg: &[u8], mut pos: usize, unicode: bool) -> Option<(String, usize)> {
    if unicode {
        if pos % 2 == 1 {
            pos += 1;
        }
        let rest = msg.get(pos..)?;
        let n = rest
            .chunks_exact(2)
            .position(|c| c == [0, 0])
            .unwrap_or(rest.len() / 2);
        let s = utf16(&rest[..n * 2]);
        Some((s, pos + n * 2 + 2))
    } else {
        let rest = msg.get(pos..)?;
        let n = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
        Some((ascii(&rest[..n]), pos + n + 1))
    }
}

/// A Windows FILETIME (100 ns since 1601) as seconds since the Unix epoch (0 before it).
pub fn filetime(ft: u64) -> u64 {
    (ft / 10_000_000).saturating_sub(11_644_473_600)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn nbss_and_magic() {
        // A message record of 0x45 bytes; a keep-alive; a 24-bit SMB2 length.
        assert_eq!(nbss(&[0, 0, 0, 0x45]), Some((NBSS_MESSAGE, 0x45)));
        assert_eq!(nbss(&[0x85, 0, 0, 0]), Some((NBSS_KEEPALIVE, 0)));
        assert_eq!(nbss(&[0, 1, 0, 0]), Some((0, 0x10000)));
        assert_eq!(nbss(&[0, 0]), None);
        assert_eq!(smb_magic(b"\xfeSMB@"), Some(0xfe));
        assert_eq!(smb_magic(b"\xffSMBr"), Some(0xff));
        assert_eq!(smb_magic(b"\xfdSMB"), Some(0xfd));
        assert_eq!(smb_magic(b"GET "), None);
    }

    #[test]
    fn names_and_guid() {
        assert_eq!(smb2_command_name(14), "SMB2_COMMAND_FIND");
        assert_eq!(smb1_command_name(0xa2), "SMB1_COMMAND_NT_CREATE_ANDX");
        assert_eq!(nt_status(0xc000_0016).1, "0xc0000016");
        assert_eq!(nt_status(0).1, "0x0");
        // dcerpc-bind-no-frag-flag: the reference names 0xc0000072.
        assert_eq!(nt_status(0xc000_0072).0, "STATUS_ACCOUNT_DISABLED");
        assert_eq!(
            nt_status(0xc022_0018).0,
            "STATUS_FWP_TOO_MANY_BOOTTIME_FILTERS"
        );
        // A value with no name is written as its number.
        assert_eq!(nt_status(0xc000_010f).0, "3221225743");
        assert_eq!(fsctl_name(0x0006_0194), "FSCTL_DFS_GET_REFERRALS");
        assert_eq!(fsctl_name(0x0009_004f), "FSCTL_MARK_AS_SYSTEM_HIVE");
        assert_eq!(fsctl_name(0x0009_00a4), "589988");
        let f = super::super::fsctl::FSCTL;
        assert!(f.windows(2).all(|w| w[0].0 < w[1].0), "sorted, no repeat");
        let t = super::super::ntstatus::NT_STATUS;
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "sorted, no repeat");
        // An SMB2 file id: persistent 0x4d, volatile 0xffffffff00000009.
        let mut fid = [0u8; 16];
        fid[0] = 0x4d;
        fid[8] = 9;
        fid[12..].copy_from_slice(&[0xff; 4]);
        assert_eq!(guid_string(&fid), "0000004d-0000-0000-0009-0000ffffffff");
        assert_eq!(filetime(116_444_736_000_000_000 + 10_000_000), 1);
        assert_eq!(utf16(b"a\0b\0\0\0c\0"), "ab");
    }

    #[test]
    fn smb2_header() {
        // An SMB2 WRITE request header: message id 7, tree 1, session 0x1122.
        let mut h = vec![0xfe, b'S', b'M', b'B', 64, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0];
        h.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
        h.extend_from_slice(&7u64.to_le_bytes());
        h.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0]);
        h.extend_from_slice(&0x1122u64.to_le_bytes());
        h.extend_from_slice(&[0; 16]);
        let p = Smb2Header::parse(&h).unwrap();
        assert_eq!((p.command, p.message_id, p.tree_id), (9, 7, 1));
        assert_eq!(p.session_id, 0x1122);
        assert!(!p.is_response());
        assert!(Smb2Header::parse(&h[..63]).is_none());
    }
}
