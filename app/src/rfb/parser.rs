//! The RFB handshake messages (RFC 6143 §7.1-7.3), over borrowed bytes.
//!
//! Each parser takes the bytes from the start of a message and says how many it used,
//! that it needs more ([`Error::Incomplete`]: "need more" is not "malformed"), or that
//! the bytes are not the message ([`Error::Malformed`]).

/// Longest desktop name a ServerInit may carry; a longer one is malformed (RFC 6143
/// sets no bound; names are a few dozen bytes).
pub const MAX_NAME_LEN: usize = 64 * 1024;
/// Longest failure reason string accepted.
pub const MAX_REASON_LEN: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    Incomplete,
    Malformed,
}

pub type Parsed<T> = Result<(T, usize), Error>;

/// A bounded reader over a message's bytes.
struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Rd<'a> {
    fn new(b: &'a [u8]) -> Rd<'a> {
        Rd { b, pos: 0 }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        let end = self.pos.checked_add(n).ok_or(Error::Malformed)?;
        let s = self.b.get(self.pos..end).ok_or(Error::Incomplete)?;
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, Error> {
        let s = self.take(2)?;
        Ok(u16::from_be_bytes([s[0], s[1]]))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        let s = self.take(4)?;
        Ok(u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    /// Exactly `lit`: a prefix of it so far is incomplete, anything else malformed.
    fn tag(&mut self, lit: &[u8]) -> Result<(), Error> {
        let rest = &self.b[self.pos.min(self.b.len())..];
        let n = rest.len().min(lit.len());
        if rest[..n] != lit[..n] {
            return Err(Error::Malformed);
        }
        self.take(lit.len()).map(|_| ())
    }
    /// `n` bytes that must be UTF-8.
    fn text(&mut self, n: usize) -> Result<String, Error> {
        let s = self.take(n)?;
        std::str::from_utf8(s)
            .map(str::to_string)
            .map_err(|_| Error::Malformed)
    }
}

/// ProtocolVersion: `RFB xxx.yyy\n`, both sides.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub major: String,
    pub minor: String,
}

pub fn version(b: &[u8]) -> Parsed<Version> {
    let mut r = Rd::new(b);
    r.tag(b"RFB ")?;
    let major = r.text(3)?;
    r.tag(b".")?;
    let minor = r.text(3)?;
    r.tag(b"\n")?;
    Ok((Version { major, minor }, r.pos))
}

/// The server's list of security types (3.7 and later): a count and that many types.
pub fn security_types(b: &[u8]) -> Parsed<Vec<u8>> {
    let mut r = Rd::new(b);
    let n = r.u8()?;
    let types = r.take(usize::from(n))?.to_vec();
    Ok((types, r.pos))
}

/// A big-endian u32: the security type the server chose (3.3), or a SecurityResult.
pub fn u32_message(b: &[u8]) -> Parsed<u32> {
    let mut r = Rd::new(b);
    let v = r.u32()?;
    Ok((v, r.pos))
}

/// One byte: the client's security type choice (3.7 and later), or ClientInit's
/// shared-flag.
pub fn u8_message(b: &[u8]) -> Parsed<u8> {
    let mut r = Rd::new(b);
    let v = r.u8()?;
    Ok((v, r.pos))
}

/// VNC authentication's challenge or response: 16 bytes.
pub fn vnc_auth(b: &[u8]) -> Parsed<[u8; 16]> {
    let mut r = Rd::new(b);
    let s = r.take(16)?;
    let mut a = [0u8; 16];
    a.copy_from_slice(s);
    Ok((a, r.pos))
}

/// A failure reason: a u32 length and that much UTF-8.
pub fn failure_reason(b: &[u8]) -> Parsed<String> {
    let mut r = Rd::new(b);
    let n = r.u32()? as usize;
    if n > MAX_REASON_LEN {
        return Err(Error::Malformed);
    }
    let s = r.text(n)?;
    Ok((s, r.pos))
}

/// PIXEL_FORMAT (RFC 6143 §7.4), 16 bytes with 3 of padding.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PixelFormat {
    pub bits_per_pixel: u8,
    pub depth: u8,
    pub big_endian: u8,
    pub true_colour: u8,
    pub red_max: u16,
    pub green_max: u16,
    pub blue_max: u16,
    pub red_shift: u8,
    pub green_shift: u8,
    pub blue_shift: u8,
}

/// ServerInit: framebuffer size, pixel format and the desktop's name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerInit {
    pub width: u16,
    pub height: u16,
    pub pixel_format: PixelFormat,
    pub name: Vec<u8>,
}

pub fn server_init(b: &[u8]) -> Parsed<ServerInit> {
    let mut r = Rd::new(b);
    let width = r.u16()?;
    let height = r.u16()?;
    let pixel_format = PixelFormat {
        bits_per_pixel: r.u8()?,
        depth: r.u8()?,
        big_endian: r.u8()?,
        true_colour: r.u8()?,
        red_max: r.u16()?,
        green_max: r.u16()?,
        blue_max: r.u16()?,
        red_shift: r.u8()?,
        green_shift: r.u8()?,
        blue_shift: r.u8()?,
    };
    r.take(3)?;
    let n = r.u32()? as usize;
    if n > MAX_NAME_LEN {
        return Err(Error::Malformed);
    }
    let name = r.take(n)?.to_vec();
    Ok((
        ServerInit {
            width,
            height,
            pixel_format,
            name,
        },
        r.pos,
    ))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// ServerInit of a 1280x800 framebuffer, 32 bpp depth 24 true colour (shifts 16, 8,
    /// 0), named `aneagles@localhost.localdomain` (30 bytes).
    pub const SERVER_INIT: &[u8] = b"\x05\x00\x03\x20\x20\x18\x00\x01\x00\xff\x00\xff\x00\xff\
\x10\x08\x00\x00\x00\x00\x00\x00\x00\x1eaneagles@localhost.localdomain";

    #[test]
    fn versions() {
        let (v, n) = version(b"RFB 003.008\nrest").unwrap();
        assert_eq!((v.major.as_str(), v.minor.as_str(), n), ("003", "008", 12));
        assert_eq!(version(b"RFB 003.0"), Err(Error::Incomplete));
        assert_eq!(version(b"RF"), Err(Error::Incomplete));
        assert_eq!(version(b"RFX 003.008\n"), Err(Error::Malformed));
        assert_eq!(version(b"RFB 003-008\n"), Err(Error::Malformed));
        assert_eq!(version(b"RFB 003.008\r"), Err(Error::Malformed));
        assert_eq!(version(b"RFB \xff03.008\n"), Err(Error::Malformed));
    }

    #[test]
    fn server_init_and_bounds() {
        let (s, n) = server_init(SERVER_INIT).unwrap();
        assert_eq!(n, SERVER_INIT.len());
        assert_eq!((s.width, s.height), (1280, 800));
        assert_eq!(s.pixel_format.bits_per_pixel, 32);
        assert_eq!(s.pixel_format.red_shift, 16);
        assert_eq!(s.name, b"aneagles@localhost.localdomain");
        assert_eq!(
            server_init(&SERVER_INIT[..SERVER_INIT.len() - 1]),
            Err(Error::Incomplete)
        );
        let mut long = SERVER_INIT[..20].to_vec();
        long.extend_from_slice(&(MAX_NAME_LEN as u32 + 1).to_be_bytes());
        assert_eq!(server_init(&long), Err(Error::Malformed));
        assert_eq!(security_types(b"\x02\x01\x02x").unwrap(), (vec![1, 2], 3));
        assert_eq!(security_types(b"\x02\x01"), Err(Error::Incomplete));
        assert_eq!(failure_reason(b"\x00\x00\x00\x02no").unwrap().0, "no");
        assert_eq!(
            failure_reason(b"\x00\x00\x00\x01\xff"),
            Err(Error::Malformed)
        );
        assert_eq!(vnc_auth(&[7; 15]), Err(Error::Incomplete));
    }
}
