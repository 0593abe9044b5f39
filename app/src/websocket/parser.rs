//! WebSocket frame headers (RFC 6455 section 5.2), over borrowed bytes.
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-------+-+-------------+-------------------------------+
//! |F|R|R|R| opcode|M| Payload len |    Extended payload length    |
//! |I|S|S|S|  (4)  |A|     (7)     |             (16/64)           |
//! |N|V|V|V|       |S|             |   (if payload len==126/127)   |
//! | |1|2|3|       |K|             |                               |
//! +-+-+-+-+-------+-+-------------+ - - - - - - - - - - - - - - - +
//! |     Extended payload length continued, if payload len == 127  |
//! + - - - - - - - - - - - - - - - +-------------------------------+
//! |                               |Masking-key, if MASK set to 1  |
//! +-------------------------------+-------------------------------+
//! ```

/// FIN: the last frame of a message.
pub const FIN: u8 = 0x80;
/// RSV1: the message is compressed (permessage-deflate, RFC 7692).
pub const RSV1: u8 = 0x40;

/// The longest frame header: 2 bytes, 8 of length, 4 of mask.
pub const MAX_HEADER: usize = 14;

/// A frame header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameHeader {
    /// The first byte's upper four bits (FIN, RSV1, RSV2, RSV3), as `websocket.flags`
    /// sees them.
    pub flags: u8,
    pub opcode: u8,
    pub mask: Option<u32>,
    /// The payload length the header announces (up to 2^64 - 1).
    pub len: u64,
    /// The header's own length.
    pub header_len: usize,
}

impl FrameHeader {
    pub fn fin(&self) -> bool {
        self.flags & FIN != 0
    }

    pub fn compressed(&self) -> bool {
        self.flags & RSV1 != 0
    }
}

/// The frame header at the start of `data`; `None` when more bytes are needed (every
/// header is well formed once complete).
pub fn header(data: &[u8]) -> Option<FrameHeader> {
    let (&b0, rest) = data.split_first()?;
    let (&b1, rest) = rest.split_first()?;
    let (len, rest, ext) = match b1 & 0x7f {
        126 => {
            let b: [u8; 2] = rest.get(..2)?.try_into().ok()?;
            (u64::from(u16::from_be_bytes(b)), &rest[2..], 2)
        }
        127 => {
            let b: [u8; 8] = rest.get(..8)?.try_into().ok()?;
            (u64::from_be_bytes(b), &rest[8..], 8)
        }
        n => (u64::from(n), rest, 0),
    };
    let mask = if b1 & 0x80 != 0 {
        let b: [u8; 4] = rest.get(..4)?.try_into().ok()?;
        Some(u32::from_be_bytes(b))
    } else {
        None
    };
    Some(FrameHeader {
        flags: b0 & 0xf0,
        opcode: b0 & 0x0f,
        mask,
        len,
        header_len: 2 + ext + if mask.is_some() { 4 } else { 0 },
    })
}

/// Unmasks `payload` in place, whose first byte is byte `offset` of its frame's
/// payload (RFC 6455 section 5.3: octet i XOR key octet i mod 4).
pub fn unmask(payload: &mut [u8], mask: u32, offset: u64) {
    let key = mask.to_be_bytes();
    for (i, b) in payload.iter_mut().enumerate() {
        *b ^= key[((offset + i as u64) % 4) as usize];
    }
}

/// The name EVE gives opcode `op` (`unknown-N` for the reserved ones).
pub fn opcode_name(op: u8) -> Option<&'static str> {
    OPCODES.iter().find(|(_, v)| *v == op).map(|(n, _)| *n)
}

/// The opcodes with a name (RFC 6455 section 11.8), as EVE and `websocket.opcode`
/// name them.
pub const OPCODES: &[(&str, u8)] = &[
    ("continuation", 0),
    ("text", 1),
    ("binary", 2),
    ("close", 8),
    ("ping", 9),
    ("pong", 10),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers() {
        // FIN + text, masked, 5 bytes, key 37 fa 21 3d (RFC 6455 5.7 "Hello" masked).
        let h = header(&[0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f]).unwrap();
        assert_eq!(
            h,
            FrameHeader {
                flags: 0x80,
                opcode: 1,
                mask: Some(0x37fa213d),
                len: 5,
                header_len: 6
            }
        );
        let mut p = [0x7f, 0x9f, 0x4d, 0x51, 0x58];
        unmask(&mut p, 0x37fa213d, 0);
        assert_eq!(&p, b"Hello");
        // Unfragmented binary of 256 bytes: 126 + 16-bit length (RFC 6455 5.7).
        let h = header(&[0x82, 0x7e, 0x01, 0x00]).unwrap();
        assert_eq!((h.len, h.header_len, h.opcode), (256, 4, 2));
        // 127 + 64-bit length 2^63 - 1, no mask.
        let h = header(&[0x82, 0x7f, 0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).unwrap();
        assert_eq!((h.len, h.header_len), ((1u64 << 63) - 1, 10));
        // Incomplete: the extended length or the mask cut short.
        assert_eq!(header(&[0x82]), None);
        assert_eq!(header(&[0x82, 0x7e, 0x01]), None);
        assert_eq!(header(&[0x81, 0x85, 0x37, 0xfa]), None);
        // RSV1 (compressed), continuation, not FIN.
        let h = header(&[0x40, 0x00]).unwrap();
        assert!(h.compressed() && !h.fin() && h.opcode == 0);
    }

    #[test]
    fn unmask_from_an_offset() {
        let mut whole = *b"abcdefgh";
        unmask(&mut whole, 0x01020304, 0);
        let mut tail = *b"fgh";
        unmask(&mut tail, 0x01020304, 5);
        assert_eq!(&whole[5..], &tail);
        assert_eq!(opcode_name(9), Some("ping"));
        assert_eq!(opcode_name(3), None);
    }
}
