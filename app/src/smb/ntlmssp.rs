//! NTLMSSP (MS-NLMP §2.2.1.3) inside an SMB session setup's security blob: the
//! AUTHENTICATE message's user, domain, workstation and version, as Suricata logs them.
//! The blob is SPNEGO (GSS-API) wrapped or raw; the message is found by its signature.

use super::parser::{Rd, ascii, slice, utf16};

const SIGNATURE: &[u8] = b"NTLMSSP\0";
const AUTHENTICATE: u32 = 3;
const NEGOTIATE_UNICODE: u32 = 0x0000_0001;
const NEGOTIATE_VERSION: u32 = 0x0200_0000;
/// Bytes of a field (user, domain, host) kept at most.
pub const MAX_FIELD: usize = 1024;

/// What an AUTHENTICATE message says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Auth {
    pub domain: String,
    pub user: String,
    pub host: String,
    /// `"6.1 build 7601 rev 15"`, when the client sent its version.
    pub version: Option<String>,
}

/// The NTLMSSP message of `blob`, if it has one: `Some(Ok(auth))` for an
/// AUTHENTICATE, `Some(Err(()))` for a malformed one, `None` otherwise.
pub fn parse_blob(blob: &[u8]) -> Option<Result<Auth, ()>> {
    let at = blob.windows(SIGNATURE.len()).position(|w| w == SIGNATURE)?;
    let msg = &blob[at..];
    let mut r = Rd::at(msg, SIGNATURE.len());
    if r.u32()? != AUTHENTICATE {
        return None;
    }
    Some(authenticate(msg).ok_or(()))
}

fn field(r: &mut Rd<'_>) -> Option<(usize, usize)> {
    let len = usize::from(r.u16()?);
    r.skip(2)?;
    let off = r.u32()? as usize;
    Some((off, len))
}

fn authenticate(msg: &[u8]) -> Option<Auth> {
    let mut r = Rd::at(msg, 12);
    let _lm = field(&mut r)?;
    let _nt = field(&mut r)?;
    let domain = field(&mut r)?;
    let user = field(&mut r)?;
    let host = field(&mut r)?;
    let _key = field(&mut r)?;
    let flags = r.u32()?;
    let version = if flags & NEGOTIATE_VERSION != 0 {
        let mut v = Rd::new(r.take(8)?);
        let (major, minor, build) = (v.u8()?, v.u8()?, v.u16()?);
        v.skip(3)?;
        let rev = v.u8()?;
        Some(format!("{major}.{minor} build {build} rev {rev}"))
    } else {
        None
    };
    let text = |(off, len): (usize, usize)| -> Option<String> {
        let b = slice(msg, off, len.min(MAX_FIELD))?;
        Some(if flags & NEGOTIATE_UNICODE != 0 {
            utf16(b)
        } else {
            ascii(b)
        })
    };
    Some(Auth {
        domain: text(domain)?,
        user: text(user)?,
        host: text(host)?,
        version,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An AUTHENTICATE message: domain "D", user "U", host "H" (UTF-16), version 6.1
    /// build 7601 rev 15.
    pub fn auth_msg() -> Vec<u8> {
        let mut m = SIGNATURE.to_vec();
        m.extend_from_slice(&3u32.to_le_bytes());
        let payload_at = 72u32;
        let fields = [(0u16, 0u32), (0, 0), (2, 0), (2, 2), (2, 4), (0, 0)];
        for (len, off) in fields {
            m.extend_from_slice(&len.to_le_bytes());
            m.extend_from_slice(&len.to_le_bytes());
            m.extend_from_slice(&(payload_at + off).to_le_bytes());
        }
        m.extend_from_slice(&(NEGOTIATE_UNICODE | NEGOTIATE_VERSION).to_le_bytes());
        m.extend_from_slice(&[6, 1, 0xb1, 0x1d, 0, 0, 0, 15]);
        m.extend_from_slice(b"D\0U\0H\0");
        m
    }

    #[test]
    fn an_authenticate_message() {
        let mut blob = b"\xa1\x10junk".to_vec();
        blob.extend_from_slice(&auth_msg());
        let a = parse_blob(&blob).unwrap().unwrap();
        assert_eq!(
            (a.domain.as_str(), a.user.as_str(), a.host.as_str()),
            ("D", "U", "H")
        );
        assert_eq!(a.version.as_deref(), Some("6.1 build 7601 rev 15"));
        assert!(parse_blob(b"no ntlm here").is_none());
        let m = auth_msg();
        assert_eq!(parse_blob(&m[..40]), Some(Err(())));
    }
}
