//! DNP3 (IEEE 1815) framing over borrowed bytes: the link layer (start bytes, length,
//! control, addresses, the header's CRC, then user data in blocks of 16 bytes each
//! followed by its CRC), the transport header (FIR, FIN, sequence) and the application
//! header (control, function code, and for responses the internal indications). The
//! objects that follow the application header are decoded by [`super::objects`].

/// The link header: start bytes, length, control, destination, source, CRC.
pub const LINK_HEADER_LEN: usize = 10;
/// Bytes of the link header the length field counts (control, addresses and the
/// length byte's own successors up to the CRC).
pub const LINK_COUNTED: usize = 5;
/// User data bytes per block; each block is followed by its CRC.
pub const BLOCK: usize = 16;
pub const CRC_LEN: usize = 2;
/// The largest link frame (length 255): what one frame buffers at most.
pub const MAX_FRAME_LEN: usize = 292;
/// The request's application header: control and function code.
pub const REQUEST_HEADER_LEN: usize = 2;
/// The response's: control, function code and the two internal-indication bytes.
pub const RESPONSE_HEADER_LEN: usize = 4;

/// Link control bits.
pub const LINK_DIR: u8 = 0x80;
pub const LINK_PRI: u8 = 0x40;
pub const LINK_FCB: u8 = 0x20;
pub const LINK_FCV: u8 = 0x10;
/// Link function codes that carry user data (primary frames).
pub const LINK_FC_CONFIRMED_USER_DATA: u8 = 3;
pub const LINK_FC_UNCONFIRMED_USER_DATA: u8 = 4;

/// Transport header bits.
pub const TH_FIN: u8 = 0x80;
pub const TH_FIR: u8 = 0x40;
pub const TH_SEQ: u8 = 0x3f;

/// Application control bits.
pub const AC_FIR: u8 = 0x80;
pub const AC_FIN: u8 = 0x40;
pub const AC_CON: u8 = 0x20;
pub const AC_UNS: u8 = 0x10;
pub const AC_SEQ: u8 = 0x0f;

/// Application function codes the parser treats specially.
pub const FC_CONFIRM: u8 = 0;
pub const FC_UNSOLICITED_RESPONSE: u8 = 130;

/// The CRC-16 of DNP3 (polynomial 0x3d65, reflected, inverted), a table per byte.
const CRC_TABLE: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u16;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xa6bc
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
};

/// DNP3's CRC of `data`.
pub fn crc(data: &[u8]) -> u16 {
    let mut c = 0u16;
    for &b in data {
        c = CRC_TABLE[usize::from((c ^ u16::from(b)) as u8)] ^ (c >> 8);
    }
    !c
}

/// Whether `block` ends in the (little-endian) CRC of the bytes before it; a block
/// needs a byte of data at least.
pub fn crc_ok(block: &[u8]) -> bool {
    match block.len().checked_sub(CRC_LEN) {
        Some(n) if n > 0 => crc(&block[..n]).to_le_bytes() == block[n..],
        _ => false,
    }
}

/// A link header.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkHeader {
    pub len: u8,
    pub control: u8,
    pub dst: u16,
    pub src: u16,
}

impl LinkHeader {
    /// The header at the start of `b` (at least [`LINK_HEADER_LEN`] bytes), unchecked.
    pub fn read(b: &[u8]) -> LinkHeader {
        LinkHeader {
            len: b[2],
            control: b[3],
            dst: u16::from_le_bytes([b[4], b[5]]),
            src: u16::from_le_bytes([b[6], b[7]]),
        }
    }

    /// The link function code.
    pub fn function(&self) -> u8 {
        self.control & 0x0f
    }

    /// Whether the frame carries user data.
    pub fn is_user_data(&self) -> bool {
        matches!(
            self.function(),
            LINK_FC_CONFIRMED_USER_DATA | LINK_FC_UNCONFIRMED_USER_DATA
        )
    }
}

/// Whether `b` starts with DNP3's start bytes.
pub fn start_ok(b: &[u8]) -> bool {
    b.starts_with(&[0x05, 0x64])
}

/// The length on the wire of a frame whose length field is `len`: the header and the
/// user data with a CRC per block; `None` when `len` is below the header's own part.
pub fn frame_len(len: u8) -> Option<usize> {
    let data = usize::from(len).checked_sub(LINK_COUNTED)?;
    let blocks = data / BLOCK;
    let rem = data % BLOCK;
    let tail = if rem > 0 { rem + CRC_LEN } else { 0 };
    Some(LINK_HEADER_LEN + blocks * (BLOCK + CRC_LEN) + tail)
}

/// Whether every block of `data` (the frame after its header) has a good CRC.
pub fn blocks_ok(data: &[u8]) -> bool {
    data.chunks(BLOCK + CRC_LEN).all(crc_ok)
}

/// Appends the user data of `data` (the frame after its header, CRCs checked) to
/// `out`, without the CRCs and without the transport header (the first byte).
/// `false` when the frame holds no application byte, or a block has no data.
pub fn append_user_data(data: &[u8], out: &mut Vec<u8>) -> bool {
    let start = out.len();
    for (i, block) in data.chunks(BLOCK + CRC_LEN).enumerate() {
        let skip = usize::from(i == 0);
        let Some(n) = block.len().checked_sub(CRC_LEN) else {
            out.truncate(start);
            return false;
        };
        if n <= skip {
            out.truncate(start);
            return false;
        }
        out.extend_from_slice(&block[skip..n]);
    }
    out.len() > start
}

/// Whether `b` holds the banner some outstations send first (`DNP3`).
pub fn contains_banner(b: &[u8]) -> bool {
    b.windows(4).any(|w| w == b"DNP3")
}

/// Whether the first bytes of a direction are a banner, as Suricata's probe sees them:
/// at most a link header's worth, all printable, holding `DNP3`.
pub fn probe_banner(b: &[u8]) -> bool {
    let head = &b[..b.len().min(LINK_HEADER_LEN)];
    contains_banner(head) && head.iter().all(|c| (0x20..0x7f).contains(c))
}

/// The name of an application function code, as Suricata's `dnp3_func` knows them.
pub fn function_name(code: u8) -> Option<&'static str> {
    FUNCTION_NAMES
        .iter()
        .find(|(_, c)| *c == code)
        .map(|(n, _)| *n)
}

/// The function codes by name (Suricata's names).
pub const FUNCTION_NAMES: &[(&str, u8)] = &[
    ("confirm", 0),
    ("read", 1),
    ("write", 2),
    ("select", 3),
    ("operate", 4),
    ("direct_operate", 5),
    ("direct_operate_nr", 6),
    ("immed_freeze", 7),
    ("immed_freeze_nr", 8),
    ("freeze_clear", 9),
    ("freeze_clear_nr", 10),
    ("freeze_at_time", 11),
    ("freeze_at_time_nr", 12),
    ("cold_restart", 13),
    ("warm_restart", 14),
    ("initialize_data", 15),
    ("initialize_appl", 16),
    ("start_appl", 17),
    ("stop_appl", 18),
    ("save_config", 19),
    ("enable_unsolicited", 20),
    ("disable_unsolicited", 21),
    ("assign_class", 22),
    ("delay_measure", 23),
    ("record_current_time", 24),
    ("open_file", 25),
    ("close_file", 26),
    ("delete_file", 27),
    ("get_file_info", 28),
    ("authenticate_file", 29),
    ("abort_file", 30),
    ("activate_config", 31),
    ("authenticate_req", 32),
    ("authenticate_err", 33),
    ("response", 129),
    ("unsolicited_response", 130),
    ("authenticate_resp", 131),
];

/// The internal-indication bits by name, in the order Suricata logs them (IIN1 in the
/// high byte).
pub const INDICATORS: &[(&str, u16)] = &[
    ("device_restart", 0x8000),
    ("device_trouble", 0x4000),
    ("local_control", 0x2000),
    ("need_time", 0x1000),
    ("class_3_events", 0x0800),
    ("class_2_events", 0x0400),
    ("class_1_events", 0x0200),
    ("all_stations", 0x0100),
    ("reserved_1", 0x0080),
    ("reserved_2", 0x0040),
    ("config_corrupt", 0x0020),
    ("already_executing", 0x0010),
    ("event_buffer_overflow", 0x0008),
    ("parameter_error", 0x0004),
    ("object_unknown", 0x0002),
    ("no_func_code_support", 0x0001),
];

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a frame: the link header with its CRC, then `user` (transport header
    /// first) in blocks with their CRCs.
    pub fn frame(control: u8, dst: u16, src: u16, user: &[u8]) -> Vec<u8> {
        let mut f = vec![0x05, 0x64, (user.len() + LINK_COUNTED) as u8, control];
        f.extend_from_slice(&dst.to_le_bytes());
        f.extend_from_slice(&src.to_le_bytes());
        let c = crc(&f);
        f.extend_from_slice(&c.to_le_bytes());
        for b in user.chunks(BLOCK) {
            f.extend_from_slice(b);
            f.extend_from_slice(&crc(b).to_le_bytes());
        }
        f
    }

    #[test]
    fn crc_of_a_known_header() {
        // A read request's link header from a capture: 05 64 0b c4 0a 00 01 00, CRC
        // 0x29 0x1d... checked by building it and by the table's known entries.
        assert_eq!(CRC_TABLE[1], 0x365e);
        assert_eq!(CRC_TABLE[255], 0x1235);
        let f = frame(0xc4, 10, 1, &[0xc0, 0xc0, 0x01, 0x3c, 0x02, 0x06]);
        assert!(crc_ok(&f[..LINK_HEADER_LEN]));
        assert!(blocks_ok(&f[LINK_HEADER_LEN..]));
        assert_eq!(frame_len(f[2]), Some(f.len()));
        let mut out = Vec::new();
        assert!(append_user_data(&f[LINK_HEADER_LEN..], &mut out));
        assert_eq!(out, [0xc0, 0x01, 0x3c, 0x02, 0x06]);
    }

    #[test]
    fn lengths() {
        assert_eq!(frame_len(4), None);
        assert_eq!(frame_len(5), Some(10));
        assert_eq!(frame_len(6), Some(13));
        assert_eq!(frame_len(21), Some(28));
        assert_eq!(frame_len(22), Some(31));
        assert_eq!(frame_len(255), Some(MAX_FRAME_LEN));
        let mut out = Vec::new();
        // A transport header alone has no application byte.
        assert!(!append_user_data(&[0xc0, 0, 0], &mut out));
        assert!(out.is_empty());
    }

    #[test]
    fn banners() {
        assert!(probe_banner(b"DNP3 outstation ready\r\n"));
        assert!(!probe_banner(b"DNP3\x05\x64"));
        assert!(!probe_banner(b"hello"));
        assert!(contains_banner(b"\r\nDNP3\r\n"));
    }
}
