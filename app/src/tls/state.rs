//! One TLS connection: record-layer and handshake reassembly per direction (a
//! handshake message may span records, and records span TCP segments), and the single
//! transaction that holds what the handshake showed.

use sha1::{Digest as _, Sha1};

use super::parser::{self, Hello};
use super::x509::{self, CertInfo};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Largest record accepted (2^14 plus the allowed expansion).
pub const MAX_RECORD_LEN: usize = 16_384 + 2_048;
/// Largest handshake message reassembled (a certificate chain fits).
pub const MAX_HANDSHAKE_LEN: usize = 256 * 1024;

/// `ssl_state` bits.
pub const STATE_CLIENT_HELLO: u8 = 1;
pub const STATE_SERVER_HELLO: u8 = 2;
pub const STATE_CLIENT_KEYX: u8 = 4;
pub const STATE_SERVER_KEYX: u8 = 8;
pub const STATE_UNKNOWN: u8 = 16;

/// What one connection's handshake showed.
#[derive(Debug, Default)]
pub struct TlsTx {
    pub client_hello: Option<Hello>,
    pub server_hello: Option<Hello>,
    pub ja3_string: Vec<u8>,
    pub ja3_hash: Vec<u8>,
    pub ja3s_string: Vec<u8>,
    pub ja3s_hash: Vec<u8>,
    pub ja4: Vec<u8>,
    /// DER of each certificate the server sent (first = the server's own).
    pub certs: Vec<Vec<u8>>,
    pub cert: Option<CertInfo>,
    /// SHA-1 of the first certificate, lowercase hex pairs joined by `:`.
    pub fingerprint: Vec<u8>,
    /// Big-endian version for `tls.version`.
    pub version: [u8; 2],
    /// Big-endian version each side's hello shows (client, server), for `ssl_version`;
    /// `[0, 0]` until known. Suricata keeps a version per direction: an SSLv2-framed
    /// ClientHello offering TLS 1.0 is TLS 1.0 on the client side.
    pub dir_version: [[u8; 2]; 2],
    /// The server certificate's notBefore/notAfter, big-endian seconds since the epoch.
    pub not_before: Option<[u8; 8]>,
    pub not_after: Option<[u8; 8]>,
    pub state: u8,
    /// Handshake done (or abandoned) in each direction.
    pub done: [bool; 2],
    pub session_resumed: bool,
    /// Cached subject/issuer/serial bytes for the buffers.
    pub subject: Vec<u8>,
    pub issuer: Vec<u8>,
    pub serial: Vec<u8>,
}

#[derive(Debug, Default)]
struct Side {
    /// Bytes of an incomplete record.
    rec: Vec<u8>,
    /// Bytes of an incomplete handshake message (spanning records).
    hs: Vec<u8>,
    /// After ChangeCipherSpec: handshake records are encrypted.
    encrypted: bool,
    /// Parsing stopped in this direction (not TLS, or broken).
    stopped: bool,
}

#[derive(Debug, Default)]
pub struct TlsState {
    tx: TlsTx,
    sides: [Side; 2],
    /// The transaction was freed by the engine.
    freed: bool,
}

impl TlsState {
    pub fn new() -> TlsState {
        TlsState::default()
    }

    pub fn transaction(&self) -> &TlsTx {
        &self.tx
    }

    fn record(&mut self, dir: Dir, ctype: u8, body: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        match ctype {
            20 => {
                self.sides[d].encrypted = true;
                self.tx.done[d] = true;
            }
            21 | 24 => {}
            22 => {
                if self.sides[d].encrypted {
                    return;
                }
                if self.sides[d].hs.len() + body.len() > MAX_HANDSHAKE_LEN {
                    out.anomaly("tls.handshake_invalid_length");
                    self.sides[d].hs.clear();
                    self.sides[d].stopped = true;
                    return;
                }
                self.sides[d].hs.extend_from_slice(body);
                self.handshakes(dir, out);
            }
            23 => {
                self.sides[d].encrypted = true;
                self.tx.done[d] = true;
                // Application data: the handshake is over, and what follows is
                // encrypted. As Suricata's default `encryption-handling`, the flow's
                // payload is inspected no more (its raw stream is flushed once, then
                // off), and nothing is left to parse in either direction.
                out.no_payload_inspection = true;
                for side in &mut self.sides {
                    side.stopped = true;
                }
            }
            _ => {
                out.anomaly("tls.invalid_record_type");
                self.sides[d].stopped = true;
            }
        }
    }

    /// Parses the complete handshake messages buffered for `dir`.
    fn handshakes(&mut self, dir: Dir, out: &mut ParseOutput) {
        let d = dir.index();
        let buf = std::mem::take(&mut self.sides[d].hs);
        let mut at = 0;
        while let Some(h) = buf.get(at..at + 4) {
            let len = usize::from(h[1]) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]);
            let Some(body) = buf.get(at + 4..at + 4 + len) else {
                break;
            };
            self.handshake(dir, h[0], body, out);
            at += 4 + len;
        }
        let mut buf = buf;
        buf.drain(..at);
        self.sides[d].hs = buf;
    }

    fn handshake(&mut self, dir: Dir, kind: u8, body: &[u8], out: &mut ParseOutput) {
        let tx = &mut self.tx;
        match (dir, kind) {
            (Dir::ToServer, 1) => match parser::client_hello(body) {
                Some(h) => {
                    if h.sni_extensions > 1 {
                        out.anomaly("tls.multiple_sni_extensions");
                    }
                    if h.bad_sni_type {
                        out.anomaly("tls.invalid_sni_type");
                    }
                    tx.state |= STATE_CLIENT_HELLO;
                    let s = parser::ja3_string(&h);
                    tx.ja3_hash = parser::md5_hex(&s).into_bytes();
                    tx.ja3_string = s.into_bytes();
                    tx.ja4 = parser::ja4(&h).into_bytes();
                    if tx.server_hello.is_none() {
                        tx.version = h.version.to_be_bytes();
                    }
                    tx.dir_version[Dir::ToServer.index()] = h.effective_version().to_be_bytes();
                    tx.client_hello = Some(h);
                }
                None => out.anomaly(hello_error(body)),
            },
            (Dir::ToClient, 2) => match parser::server_hello(body) {
                Some(h) => {
                    tx.state |= STATE_SERVER_HELLO;
                    let s = parser::ja3s_string(&h);
                    tx.ja3s_hash = parser::md5_hex(&s).into_bytes();
                    tx.ja3s_string = s.into_bytes();
                    let v = h.effective_version();
                    tx.version = v.to_be_bytes();
                    tx.dir_version[Dir::ToClient.index()] = v.to_be_bytes();
                    if let Some(c) = &tx.client_hello
                        && !c.session_id.is_empty()
                        && c.session_id == h.session_id
                    {
                        tx.session_resumed = true;
                    }
                    if v >= 0x0304 && v != 0xffff {
                        // TLS 1.3: the rest of the server's handshake is encrypted.
                        self.sides[Dir::ToClient.index()].encrypted = true;
                        tx.done[Dir::ToClient.index()] = true;
                    }
                    tx.server_hello = Some(h);
                }
                None => out.anomaly(hello_error(body)),
            },
            (Dir::ToClient, 11) => {
                let certs = parser::certificates(body);
                if let Some(first) = certs.first() {
                    tx.session_resumed = false;
                    tx.fingerprint = Sha1::digest(first)
                        .iter()
                        .map(|b| format!("{b:02x}"))
                        .collect::<Vec<_>>()
                        .join(":")
                        .into_bytes();
                    match x509::parse(first) {
                        Some(c) => {
                            let epoch = |t: &str| x509::iso_to_epoch(t).map(i64::to_be_bytes);
                            tx.not_before = epoch(&c.not_before);
                            tx.not_after = epoch(&c.not_after);
                            tx.subject = c.subject.clone().into_bytes();
                            tx.issuer = c.issuer.clone().into_bytes();
                            tx.serial = c.serial.clone().into_bytes();
                            tx.cert = Some(c);
                        }
                        None => {
                            // As Suricata: a certificate that does not decode also
                            // makes its handshake message invalid.
                            out.anomaly("tls.invalid_certificate");
                            out.anomaly("tls.invalid_handshake_message");
                        }
                    }
                }
                tx.certs = certs;
            }
            (Dir::ToClient, 12) => tx.state |= STATE_SERVER_KEYX,
            (Dir::ToClient, 14) => tx.done[Dir::ToClient.index()] = true,
            (Dir::ToServer, 16) => tx.state |= STATE_CLIENT_KEYX,
            (_, 0 | 4 | 8 | 13 | 15 | 20 | 22 | 24) => {}
            _ => tx.state |= STATE_UNKNOWN,
        }
    }
}

/// The anomaly of a hello that did not parse: one shorter than a hello's fixed part
/// (version, random, session id length) has an invalid length, as Suricata says.
fn hello_error(body: &[u8]) -> &'static str {
    if body.len() < 2 + 32 + 1 {
        "tls.handshake_invalid_length"
    } else {
        "tls.invalid_handshake_message"
    }
}

impl AppState for TlsState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        if self.sides[d].stopped {
            return;
        }
        let mut buf = std::mem::take(&mut self.sides[d].rec);
        buf.extend_from_slice(data);
        let mut at = 0;
        while let Some(h) = buf.get(at..at + 5) {
            if !(20..=24).contains(&h[0]) || h[1] != 3 {
                if at == 0 && h[0] & 0x80 != 0 && self.tx.state == 0 {
                    // An SSLv2-framed hello (2-byte record header): recognised, not
                    // parsed further than the version a CLIENT-HELLO (type 1) offers,
                    // which is that direction's version for `ssl_version`.
                    self.tx.version = [0, 2];
                    if h[2] == 1 {
                        self.tx.dir_version[d] = [h[3], h[4]];
                    }
                } else {
                    out.anomaly("tls.invalid_record_type");
                }
                self.sides[d].stopped = true;
                self.tx.done[d] = true;
                return;
            }
            let len = usize::from(u16::from_be_bytes([h[3], h[4]]));
            if len > MAX_RECORD_LEN {
                out.anomaly("tls.invalid_record_length");
                self.sides[d].stopped = true;
                self.tx.done[d] = true;
                return;
            }
            if h[0] == 23 {
                // Application data: acted on at its header, as Suricata's parser acts on
                // a record's first bytes; its body is not needed (nor copied).
                self.record(dir, h[0], &[], out);
                return;
            }
            let Some(body) = buf.get(at + 5..at + 5 + len) else {
                break;
            };
            // `buf` was taken out of `self`: the record is parsed in place.
            self.record(dir, h[0], body, out);
            at += 5 + len;
            // Each whole record lets stream rules see it, as Suricata's parser asks.
            out.trigger_raw(dir);
            if self.sides[d].stopped {
                return;
            }
        }
        buf.drain(..at);
        self.sides[d].rec = buf;
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        let d = dir.index();
        // Record boundaries are lost (Suricata has no event for it).
        self.sides[d].stopped = true;
        self.tx.done[d] = true;
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        self.tx.done[dir.index()] = true;
    }

    fn tx_count(&self) -> usize {
        usize::from(!self.freed && (self.tx.state != 0 || self.tx.version != [0, 0]))
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        (index == 0 && self.tx_count() == 1).then_some(&self.tx as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        if id > 0 && self.tx.done[0] && self.tx.done[1] {
            self.freed = true;
        }
    }
}
