//! TLS handshake message parsing (ClientHello, ServerHello, Certificate) and the
//! JA3/JA3S/JA4 fingerprints.

use md5::{Digest as _, Md5};
use sha2::Sha256;

/// Most cipher suites, extensions, groups, ... kept from one hello.
pub const MAX_LIST: usize = 512;
/// Most certificates kept from one Certificate message.
pub const MAX_CERTS: usize = 16;

pub const EXT_SNI: u16 = 0;
pub const EXT_GROUPS: u16 = 10;
pub const EXT_POINT_FORMATS: u16 = 11;
pub const EXT_SIG_ALGS: u16 = 13;
pub const EXT_ALPN: u16 = 16;
pub const EXT_VERSIONS: u16 = 43;

/// GREASE values (RFC 8701) are left out of fingerprints.
pub fn is_grease(v: u16) -> bool {
    v & 0x0f0f == 0x0a0a && v >> 8 == v & 0xff
}

/// A bounded big-endian reader.
#[derive(Debug, Clone, Copy)]
pub struct Rd<'a>(pub &'a [u8]);

impl<'a> Rd<'a> {
    pub fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(b)
    }
    pub fn u16(&mut self) -> Option<u16> {
        let b = self.take(2)?;
        Some(u16::from_be_bytes([b[0], b[1]]))
    }
    pub fn u24(&mut self) -> Option<usize> {
        let b = self.take(3)?;
        Some(usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }
    /// A vector with a one-byte length prefix (TLS `opaque x<0..2^8-1>`).
    pub fn vec8(&mut self) -> Option<&'a [u8]> {
        let n = self.u8()?;
        self.take(usize::from(n))
    }
    /// A vector with a two-byte length prefix (TLS `opaque x<0..2^16-1>`).
    pub fn vec16(&mut self) -> Option<&'a [u8]> {
        let n = self.u16()?;
        self.take(usize::from(n))
    }
    fn u16_list(b: &[u8]) -> Vec<u16> {
        b.chunks_exact(2)
            .take(MAX_LIST)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect()
    }
}

/// What a ClientHello or ServerHello says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hello {
    /// The legacy version field.
    pub version: u16,
    /// The 32-byte random (`tls.random`).
    pub random: [u8; 32],
    pub session_id: Vec<u8>,
    pub ciphers: Vec<u16>,
    /// Extension types in order.
    pub extensions: Vec<u16>,
    pub groups: Vec<u16>,
    pub point_formats: Vec<u8>,
    pub sig_algs: Vec<u16>,
    pub sni: Option<Vec<u8>>,
    /// SNI extensions seen (more than one: `tls.multiple_sni_extensions`).
    pub sni_extensions: u8,
    /// A server name entry of a type other than host_name (`tls.invalid_sni_type`).
    pub bad_sni_type: bool,
    pub alpns: Vec<Vec<u8>>,
    /// `supported_versions`: the client's list, or the server's choice.
    pub versions: Vec<u16>,
}

impl Hello {
    /// The version actually negotiated/offered: the highest non-GREASE
    /// `supported_versions` entry when present, else the legacy field.
    pub fn effective_version(&self) -> u16 {
        self.versions
            .iter()
            .copied()
            .filter(|v| !is_grease(*v))
            .max()
            .unwrap_or(self.version)
    }
}

fn extensions(r: &mut Rd<'_>, h: &mut Hello, server: bool) {
    let Some(exts) = r.vec16() else { return };
    let mut e = Rd(exts);
    while let (Some(t), Some(data)) = (e.u16(), e.vec16()) {
        if h.extensions.len() < MAX_LIST {
            h.extensions.push(t);
        }
        let mut d = Rd(data);
        match t {
            EXT_SNI if !server => {
                h.sni_extensions = h.sni_extensions.saturating_add(1);
                let _list = d.u16();
                while let (Some(kind), Some(name)) = (d.u8(), d.vec16()) {
                    if kind != 0 {
                        h.bad_sni_type = true;
                    } else if h.sni.is_none() {
                        h.sni = Some(name.to_vec());
                    }
                }
            }
            EXT_GROUPS => {
                if let Some(b) = d.vec16() {
                    h.groups = Rd::u16_list(b);
                }
            }
            EXT_POINT_FORMATS => {
                if let Some(b) = d.vec8() {
                    h.point_formats = b.iter().take(MAX_LIST).copied().collect();
                }
            }
            EXT_SIG_ALGS => {
                if let Some(b) = d.vec16() {
                    h.sig_algs = Rd::u16_list(b);
                }
            }
            EXT_ALPN => {
                if let Some(b) = d.vec16() {
                    let mut a = Rd(b);
                    while let Some(p) = a.vec8() {
                        if h.alpns.len() < MAX_LIST {
                            h.alpns.push(p.to_vec());
                        }
                    }
                }
            }
            EXT_VERSIONS => {
                if server {
                    if let Some(v) = d.u16() {
                        h.versions = vec![v];
                    }
                } else if let Some(b) = d.vec8() {
                    h.versions = Rd::u16_list(b);
                }
            }
            _ => {}
        }
    }
}

/// The fields both hellos start with: version, random, session id.
fn hello_start(r: &mut Rd<'_>) -> Option<Hello> {
    let mut h = Hello {
        version: r.u16()?,
        ..Hello::default()
    };
    h.random.copy_from_slice(r.take(32)?);
    h.session_id = r.vec8()?.to_vec();
    Some(h)
}

/// Parses a ClientHello body (after the 4-byte handshake header).
pub fn client_hello(b: &[u8]) -> Option<Hello> {
    let mut r = Rd(b);
    let mut h = hello_start(&mut r)?;
    h.ciphers = Rd::u16_list(r.vec16()?);
    r.vec8()?; // compression methods
    extensions(&mut r, &mut h, false);
    Some(h)
}

/// Parses a ServerHello body.
pub fn server_hello(b: &[u8]) -> Option<Hello> {
    let mut r = Rd(b);
    let mut h = hello_start(&mut r)?;
    h.ciphers = vec![r.u16()?];
    r.u8()?; // compression method
    extensions(&mut r, &mut h, true);
    Some(h)
}

/// Splits a Certificate message body into DER certificates (TLS 1.2 layout; TLS 1.3
/// certificates are encrypted and never seen here).
pub fn certificates(b: &[u8]) -> Vec<Vec<u8>> {
    let mut r = Rd(b);
    let Some(total) = r.u24() else {
        return Vec::new();
    };
    let mut list = Rd(r.take(total).unwrap_or(r.0));
    let mut out = Vec::new();
    while let Some(n) = list.u24() {
        let Some(c) = list.take(n) else { break };
        if out.len() < MAX_CERTS {
            out.push(c.to_vec());
        }
    }
    out
}

fn join<T: std::fmt::Display>(v: impl Iterator<Item = T>) -> String {
    v.map(|x| x.to_string()).collect::<Vec<_>>().join("-")
}

fn hex(d: &[u8]) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

/// JA3 string of a ClientHello: version,ciphers,extensions,groups,point formats,
/// GREASE values left out (TLS's).
pub fn ja3_string(h: &Hello) -> String {
    ja3_string_with(h, false)
}

/// JA3 string of a ClientHello, with its GREASE values when `keep_grease` (Suricata's
/// QUIC fingerprints keep them; its TLS ones leave them out).
pub fn ja3_string_with(h: &Hello, keep_grease: bool) -> String {
    let ng = |v: &&u16| keep_grease || !is_grease(**v);
    format!(
        "{},{},{},{},{}",
        h.version,
        join(h.ciphers.iter().filter(ng)),
        join(h.extensions.iter().filter(ng)),
        join(h.groups.iter().filter(ng)),
        join(h.point_formats.iter())
    )
}

/// JA3S string of a ServerHello with its GREASE values (QUIC's; see
/// [`ja3_string_with`]).
pub fn ja3s_string_with(h: &Hello, keep_grease: bool) -> String {
    format!(
        "{},{},{}",
        h.version,
        join(h.ciphers.iter()),
        join(
            h.extensions
                .iter()
                .filter(|v| keep_grease || !is_grease(**v))
        )
    )
}

/// JA3S string of a ServerHello: version,cipher,extensions.
pub fn ja3s_string(h: &Hello) -> String {
    ja3s_string_with(h, false)
}

pub fn md5_hex(s: &str) -> String {
    hex(&Md5::digest(s.as_bytes()))
}

/// JA4 (TLS over TCP) of a ClientHello: `t<ver><d|i><nciph><next><alpn>_<hash12>_<hash12>`.
pub fn ja4(h: &Hello) -> String {
    ja4_for(h, 't')
}

/// JA4 of a ClientHello carried by `transport`: `t` (TCP), `q` (QUIC), `d` (DTLS).
pub fn ja4_for(h: &Hello, transport: char) -> String {
    let ver = match h.effective_version() {
        0x0304 => "13",
        0x0303 => "12",
        0x0302 => "11",
        0x0301 => "10",
        0x0300 => "s3",
        0x0002 => "s2",
        _ => "00",
    };
    let sni = if h.sni.is_some() { 'd' } else { 'i' };
    let without_grease =
        |v: &[u16]| -> Vec<u16> { v.iter().copied().filter(|x| !is_grease(*x)).collect() };
    let ciphers = without_grease(&h.ciphers);
    let exts = without_grease(&h.extensions);
    let alpn = match h.alpns.first() {
        Some(a) if !a.is_empty() => {
            let f = a[0];
            let l = a[a.len() - 1];
            if f.is_ascii_alphanumeric() && l.is_ascii_alphanumeric() {
                format!("{}{}", f as char, l as char)
            } else {
                let x = hex(&[f, l]);
                format!("{}{}", &x[..1], &x[3..])
            }
        }
        _ => "00".to_string(),
    };
    let a = format!(
        "{transport}{ver}{sni}{:02}{:02}{alpn}",
        ciphers.len().min(99),
        exts.len().min(99)
    );
    let hash12 = |s: &str| {
        if s.is_empty() {
            "000000000000".to_string()
        } else {
            hex(&Sha256::digest(s.as_bytes()))[..12].to_string()
        }
    };
    let mut sc = ciphers.clone();
    sc.sort_unstable();
    let b = hash12(
        &sc.iter()
            .map(|c| format!("{c:04x}"))
            .collect::<Vec<_>>()
            .join(","),
    );
    let mut se: Vec<u16> = exts
        .iter()
        .copied()
        .filter(|e| *e != EXT_SNI && *e != EXT_ALPN)
        .collect();
    se.sort_unstable();
    let mut c_in = se
        .iter()
        .map(|e| format!("{e:04x}"))
        .collect::<Vec<_>>()
        .join(",");
    if !h.sig_algs.is_empty() {
        c_in.push('_');
        c_in.push_str(
            &h.sig_algs
                .iter()
                .map(|s| format!("{s:04x}"))
                .collect::<Vec<_>>()
                .join(","),
        );
    }
    let c = hash12(&c_in);
    format!("{a}_{b}_{c}")
}

/// Suricata's version names.
pub fn version_name(v: u16) -> String {
    match v {
        0x0002 => "SSLv2".into(),
        0x0300 => "SSLv3".into(),
        0x0301 => "TLS 1.0".into(),
        0x0302 => "TLS 1.1".into(),
        0x0303 => "TLS 1.2".into(),
        0x0304 => "TLS 1.3".into(),
        v if v >> 8 == 0x7f => format!("TLS 1.3 draft-{}", v & 0xff),
        v => format!("0x{v:04x}"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a ClientHello handshake message (with its 4-byte header).
    pub(crate) fn client_hello_msg(sni: &str) -> Vec<u8> {
        let mut b = vec![0x03, 0x03];
        b.extend([7u8; 32]);
        b.push(0);
        let ciphers: [u16; 4] = [0x0a0a, 0x1301, 0xc02f, 0x009c];
        b.extend(((ciphers.len() * 2) as u16).to_be_bytes());
        for c in ciphers {
            b.extend(c.to_be_bytes());
        }
        b.extend([1, 0]);
        let mut ext = Vec::new();
        let mut add = |t: u16, d: &[u8]| {
            ext.extend(t.to_be_bytes());
            ext.extend((d.len() as u16).to_be_bytes());
            ext.extend_from_slice(d);
        };
        let mut s = vec![0u8];
        s.extend((sni.len() as u16).to_be_bytes());
        s.extend(sni.as_bytes());
        let mut sl = ((s.len()) as u16).to_be_bytes().to_vec();
        sl.extend(s);
        add(0x2a2a, &[]);
        add(EXT_SNI, &sl);
        add(EXT_GROUPS, &[0, 4, 0, 0x1d, 0, 0x17]);
        add(EXT_POINT_FORMATS, &[1, 0]);
        add(EXT_SIG_ALGS, &[0, 4, 0x04, 0x03, 0x08, 0x04]);
        add(EXT_ALPN, &[0, 3, 2, b'h', b'2']);
        add(EXT_VERSIONS, &[4, 0x03, 0x04, 0x03, 0x03]);
        b.extend((ext.len() as u16).to_be_bytes());
        b.extend(ext);
        let mut m = vec![1u8];
        m.extend(&(b.len() as u32).to_be_bytes()[1..]);
        m.extend(b);
        m
    }

    #[test]
    fn client_hello_fields_and_fingerprints() {
        let m = client_hello_msg("example.com");
        let h = client_hello(&m[4..]).unwrap();
        assert_eq!(h.sni.as_deref(), Some(&b"example.com"[..]));
        assert_eq!(h.effective_version(), 0x0304);
        assert_eq!(h.alpns, vec![b"h2".to_vec()]);
        let s = ja3_string(&h);
        assert_eq!(s, "771,4865-49199-156,0-10-11-13-16-43,29-23,0");
        assert_eq!(md5_hex(&s).len(), 32);
        let j = ja4(&h);
        assert!(j.starts_with("t13d0306h2_"), "{j}");
        assert_eq!(j.len(), "t13d0306h2_".len() + 12 + 1 + 12);
        assert!(is_grease(0x2a2a) && !is_grease(0x2a2b));
    }

    #[test]
    fn truncated_hello_is_none() {
        let m = client_hello_msg("x");
        for cut in 0..38 {
            assert!(client_hello(&m[4..4 + cut]).is_none());
        }
        for cut in 38..m.len() - 4 {
            let _ = client_hello(&m[4..4 + cut]);
        }
    }
}
