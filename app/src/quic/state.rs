//! One QUIC flow and its transactions, as Suricata 8 makes them: every long-header
//! packet until a direction's TLS hello (or Google QUIC CHLO) has been read is a
//! transaction of its own direction; Initial packets are unprotected with the
//! version's initial keys and their CRYPTO frames reassembled (across packets, up to
//! [`MAX_CRYPTO`] bytes) until the hello is whole; short-header packets and
//! everything after a direction's hello are encrypted and left alone.

use std::collections::VecDeque;

use super::crypto::Keys;
use super::parser::{self, Frame, Header, PacketType, Q043, Q044, Q045, Q046};
use crate::tls::parser::{self as tls, Hello};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Most bytes of a direction's crypto stream reassembled (Suricata's limit).
pub const MAX_CRYPTO: usize = 65_535;
/// Most separate pieces of a direction's crypto stream held while waiting for a gap.
pub const MAX_CRYPTO_PIECES: usize = 64;
/// Most live transactions of a flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 1024;
/// Most packets read from one datagram (coalesced packets).
pub const MAX_PACKETS: usize = 16;

/// A TLS extension of a hello, with the values Suricata logs for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Extension {
    pub ty: u16,
    pub values: Vec<Vec<u8>>,
}

/// A Google QUIC handshake's CYU fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cyu {
    pub string: Vec<u8>,
    pub hash: Vec<u8>,
}

/// One packet's transaction.
#[derive(Debug)]
pub struct QuicTx {
    pub id: u64,
    pub dir: Dir,
    pub version: u32,
    /// The version's bytes (`quic.version`).
    pub version_bytes: [u8; 4],
    pub sni: Option<Vec<u8>>,
    pub ua: Option<Vec<u8>>,
    pub cyu: Vec<Cyu>,
    /// The JA3 (client) or JA3S (server) string of the hello, GREASE kept, and its
    /// MD5.
    pub ja3_string: Option<Vec<u8>>,
    pub ja3_hash: Vec<u8>,
    /// The client hello's JA4 (`q...`).
    pub ja4: Option<Vec<u8>>,
    pub extensions: Vec<Extension>,
}

impl QuicTx {
    fn new(id: u64, dir: Dir, h: &Header<'_>) -> QuicTx {
        QuicTx {
            id,
            dir,
            version: h.version,
            version_bytes: h.version_bytes,
            sni: None,
            ua: None,
            cyu: Vec::new(),
            ja3_string: None,
            ja3_hash: Vec::new(),
            ja4: None,
            extensions: Vec::new(),
        }
    }
}

/// A direction's crypto stream from offset 0, as far as it arrived.
#[derive(Debug, Default)]
struct Crypto {
    buf: Vec<u8>,
    /// The byte ranges of `buf` that arrived, sorted, merged.
    have: Vec<(usize, usize)>,
}

impl Crypto {
    /// Adds `data` at `offset`; `false` when it lies past [`MAX_CRYPTO`] or would make
    /// too many pieces.
    fn add(&mut self, offset: u64, data: &[u8]) -> bool {
        let Ok(start) = usize::try_from(offset) else {
            return false;
        };
        let Some(end) = start.checked_add(data.len()) else {
            return false;
        };
        if end > MAX_CRYPTO {
            return false;
        }
        if data.is_empty() {
            return true;
        }
        if self.buf.len() < end {
            self.buf.resize(end, 0);
        }
        self.buf[start..end].copy_from_slice(data);
        self.have.push((start, end));
        self.have.sort_unstable();
        let mut merged: Vec<(usize, usize)> = Vec::with_capacity(self.have.len());
        for &(a, b) in &self.have {
            match merged.last_mut() {
                Some(last) if a <= last.1 => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        self.have = merged;
        self.have.len() <= MAX_CRYPTO_PIECES
    }

    /// The bytes that arrived without a gap from offset 0.
    fn contiguous(&self) -> &[u8] {
        match self.have.first() {
            Some(&(0, end)) => self.buf.get(..end).unwrap_or_default(),
            _ => &[],
        }
    }
}

/// What the first handshake message of a crypto stream says so far.
enum Message {
    /// Not whole yet.
    Partial,
    /// Longer than can be reassembled.
    TooLong,
    /// Whole: its type and body.
    Whole(u8, Vec<u8>),
}

fn first_message(c: &Crypto) -> Message {
    let d = c.contiguous();
    let Some(h) = d.get(..4) else {
        return Message::Partial;
    };
    let len = usize::from(h[1]) << 16 | usize::from(h[2]) << 8 | usize::from(h[3]);
    if 4 + len > MAX_CRYPTO {
        return Message::TooLong;
    }
    match d.get(4..4 + len) {
        Some(body) => Message::Whole(h[0], body.to_vec()),
        None => Message::Partial,
    }
}

/// One flow.
#[derive(Debug, Default)]
pub struct QuicState {
    keys: Option<Keys>,
    /// The direction's hello was read: what follows is encrypted.
    hello: [bool; 2],
    crypto: [Crypto; 2],
    /// A direction's crypto stream outgrew the bound: not reassembled any more.
    crypto_stopped: [bool; 2],
    retried: bool,
    next_id: u64,
    pub txs: VecDeque<QuicTx>,
}

impl QuicState {
    pub fn new() -> QuicState {
        QuicState::default()
    }

    fn push(&mut self, tx: QuicTx) {
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(tx);
        self.next_id += 1;
    }

    /// A transaction holding only the packet's header, for an anomaly.
    fn fail(&mut self, dir: Dir, h: &Header<'_>, event: &'static str, out: &mut ParseOutput) {
        let tx = QuicTx::new(self.next_id, dir, h);
        self.push(tx);
        out.anomaly(event);
    }

    /// Parses one packet at the start of `data`; the bytes it took, or `None` when
    /// the rest of the datagram is not read.
    fn packet(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) -> Option<usize> {
        let d = dir.index();
        let h = parser::header(data)?;
        if self.hello[d] || h.ty == PacketType::Short {
            return None;
        }
        if self.keys.is_none() && h.ty == PacketType::Initial {
            self.keys = Keys::initial(h.version, h.dcid);
        } else if dir == Dir::ToClient
            && self.keys.is_some()
            && h.ty == PacketType::Retry
            && !self.retried
        {
            // The client sends its Initial again, protected with keys of the new
            // connection id (RFC 9000 17.2.5.2: one Retry only).
            self.hello[Dir::ToServer.index()] = false;
            self.keys = None;
            self.retried = true;
        }
        let end = h.payload_at + h.payload_len;
        if h.ty != PacketType::Initial {
            let tx = QuicTx::new(self.next_id, dir, &h);
            self.push(tx);
            return Some(end);
        }
        let payload = data.get(h.payload_at..end)?;
        let plain = match &self.keys {
            Some(k) if !payload.is_empty() => {
                let keys = match dir {
                    Dir::ToServer => &k.client,
                    Dir::ToClient => &k.server,
                };
                match super::crypto::open(keys, data, h.payload_at, end) {
                    Some(p) => std::borrow::Cow::Owned(p),
                    None => {
                        self.fail(dir, &h, "quic.failed_decrypt", out);
                        return None;
                    }
                }
            }
            _ => std::borrow::Cow::Borrowed(payload),
        };
        let Ok(frames) = parser::frames(&plain) else {
            self.fail(dir, &h, "quic.error_on_data", out);
            return None;
        };
        let mut tx = QuicTx::new(self.next_id, dir, &h);
        let mut too_long = false;
        for f in &frames {
            match f {
                Frame::Stream { tags: Some(tags) } => {
                    for &(tag, value) in tags {
                        if tag == parser::TAG_SNI {
                            tx.sni = Some(value.to_vec());
                        } else if tag == parser::TAG_UAID {
                            tx.ua = Some(value.to_vec());
                        }
                        if tx.sni.is_some() && tx.ua.is_some() {
                            break;
                        }
                    }
                    if let Some(c) = cyu(h.version, tags) {
                        tx.cyu.push(c);
                    }
                }
                Frame::Crypto { offset, data }
                    if !self.crypto_stopped[d] && !self.crypto[d].add(*offset, data) =>
                {
                    too_long = true;
                }
                _ => {}
            }
        }
        if !self.crypto_stopped[d] {
            match first_message(&self.crypto[d]) {
                Message::Partial if !too_long => {}
                Message::Partial | Message::TooLong => {
                    too_long = true;
                    self.crypto_stopped[d] = true;
                    self.crypto[d] = Crypto::default();
                }
                Message::Whole(kind, body) => {
                    let hello = match kind {
                        1 => tls::client_hello(&body),
                        2 => tls::server_hello(&body),
                        _ => None,
                    };
                    let Some(hello) = hello else {
                        self.fail(dir, &h, "quic.error_on_data", out);
                        return None;
                    };
                    self.crypto[d] = Crypto::default();
                    self.hello[d] = true;
                    fill_hello(&mut tx, kind == 1, &hello);
                }
            }
        }
        self.push(tx);
        if too_long {
            out.anomaly("quic.crypto_frag_too_long");
        }
        Some(end)
    }
}

/// The CYU of a Google QUIC handshake's tags, for the versions Suricata names
/// (Q045 counting as 44, as Suricata has it).
fn cyu(version: u32, tags: &parser::Tags<'_>) -> Option<Cyu> {
    let v = match version {
        Q043 => "43",
        Q044 | Q045 => "44",
        Q046 => "46",
        _ => return None,
    };
    let list: Vec<String> = tags.iter().map(|(t, _)| parser::tag_name(*t)).collect();
    let string = format!("{v},{}", list.join("-"));
    Some(Cyu {
        hash: tls::md5_hex(&string).into_bytes(),
        string: string.into_bytes(),
    })
}

/// The names of `supported_versions` entries as Suricata writes them.
fn tls_version_name(v: u16) -> String {
    let known = match v {
        0x0300 => "Ssl30",
        0x0301 => "Tls10",
        0x0302 => "Tls11",
        0x0303 => "Tls12",
        0x0304 => "Tls13",
        0x7f12 => "Tls13Draft18",
        0x7f13 => "Tls13Draft19",
        0x7f14 => "Tls13Draft20",
        0x7f15 => "Tls13Draft21",
        0x7f16 => "Tls13Draft22",
        0x7f17 => "Tls13Draft23",
        0xfeff => "DTls10",
        0xfefe => "DTls11",
        0xfefd => "DTls12",
        v => return format!("TlsVersion({v} / 0x{v:x})"),
    };
    known.to_string()
}

/// The type Suricata gives a GREASE extension (RFC 8701) in QUIC's fingerprints and
/// extension lists, whichever GREASE value it had.
const GREASE_EXTENSION: u16 = 0xfafa;

/// The hello's fingerprints, SNI and extensions into its packet's transaction.
fn fill_hello(tx: &mut QuicTx, client: bool, h: &Hello) {
    let mut h = h.clone();
    for e in &mut h.extensions {
        if tls::is_grease(*e) {
            *e = GREASE_EXTENSION;
        }
    }
    let h = &h;
    let ja3 = if client {
        tls::ja3_string_with(h, true)
    } else {
        tls::ja3s_string_with(h, true)
    };
    tx.ja3_hash = tls::md5_hex(&ja3).into_bytes();
    tx.ja3_string = Some(ja3.into_bytes());
    if client {
        tx.ja4 = Some(tls::ja4_for(h, 'q').into_bytes());
        if let Some(sni) = &h.sni {
            tx.sni = Some(sni.clone());
        }
    }
    tx.extensions = h
        .extensions
        .iter()
        .map(|&ty| Extension {
            ty,
            values: match ty {
                tls::EXT_SNI => h.sni.iter().cloned().collect(),
                tls::EXT_ALPN => h.alpns.clone(),
                tls::EXT_SIG_ALGS => h
                    .sig_algs
                    .iter()
                    .map(|s| s.to_string().into_bytes())
                    .collect(),
                tls::EXT_VERSIONS => h
                    .versions
                    .iter()
                    .map(|v| tls_version_name(*v).into_bytes())
                    .collect(),
                _ => Vec::new(),
            },
        })
        .collect();
}

impl AppState for QuicState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let mut at = 0;
        for _ in 0..MAX_PACKETS {
            let Some(rest) = data.get(at..).filter(|r| !r.is_empty()) else {
                return;
            };
            match self.packet(dir, rest, out) {
                Some(n) => at += n.max(1),
                None => return,
            }
        }
    }

    fn gap(&mut self, _dir: Dir, _len: u64, _out: &mut ParseOutput) {}

    fn eof(&mut self, _dir: Dir, _out: &mut ParseOutput) {}

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
    }
}
