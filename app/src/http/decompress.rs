//! Streaming `Content-Encoding` decoding of HTTP bodies (gzip, deflate, zlib), layered,
//! bounded and tolerant the way browsers are.
//!
//! Like libhtp: the gzip header is parsed by hand so that reserved flag bits, a bad
//! header CRC or a missing/corrupt trailer do not stop decoding; a `deflate` body may be
//! raw deflate or zlib-wrapped; when a layer cannot decode its input at all, its input is
//! passed through unchanged (a server that lies about the encoding is read as the browser
//! reads it). Output is capped: the caller's limit (the body limit) stops decoding, and a
//! layer that inflates past [`DecodeLimits::bomb_limit`] at a ratio above
//! [`BOMB_RATIO`] is a compression bomb: decoding stops and it is flagged.

use flate2::{Decompress, FlushDecompress, Status};

/// Most bytes of a layer's input kept for replay until it produces output.
pub const MAX_REPLAY: usize = 64 * 1024;
/// Longest gzip header accepted (file name and comment included).
pub const MAX_GZIP_HEADER: usize = 8 * 1024;
/// Most encoding layers ever decoded, whatever the config says.
pub const MAX_LAYERS: usize = 8;
/// Output/input ratio above which a large output is a compression bomb (libhtp's 2048).
pub const BOMB_RATIO: u64 = 2048;
/// Output produced per inflate call.
const CHUNK: usize = 16 * 1024;

/// Decoding limits from the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeLimits {
    /// `response-body-decompress-layer-limit` (0 disables decoding).
    pub layer_limit: usize,
    /// `compression-bomb-limit`, bytes of output of one layer.
    pub bomb_limit: u64,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            layer_limit: 2,
            bomb_limit: 1024 * 1024,
        }
    }
}

/// The encoding a `Content-Encoding` token declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Declared {
    Gzip,
    Deflate,
    /// An unknown token: decoded only if the data itself is recognisably compressed.
    Other,
}

/// Parses a `Content-Encoding` value into the layers to undo, outermost first (the
/// reverse of the listed order). `identity` is skipped.
pub fn parse_content_encoding(v: &[u8]) -> Vec<Declared> {
    let mut layers: Vec<Declared> = v
        .split(|&c| c == b',' || super::parser::is_space(c))
        .filter(|t| !t.is_empty())
        .filter(|t| !t.eq_ignore_ascii_case(b"identity"))
        .map(|t| {
            if super::parser::contains_nocase(t, b"gzip") {
                Declared::Gzip
            } else if super::parser::contains_nocase(t, b"deflate") {
                Declared::Deflate
            } else {
                Declared::Other
            }
        })
        .take(MAX_LAYERS)
        .collect();
    layers.reverse();
    layers
}

#[derive(Debug)]
enum Mode {
    Sniff,
    GzipHeader,
    Inflate(Box<Decompress>),
    Pass,
    /// The compressed stream ended (or failed after producing output): the rest is ignored.
    Done,
}

#[derive(Debug)]
struct Layer {
    declared: Declared,
    mode: Mode,
    /// Input kept until the layer produced output (for the sniff, the gzip header, and
    /// passing it through if decoding fails).
    replay: Vec<u8>,
    replay_overflow: bool,
    consumed: u64,
    produced: u64,
    /// (bomb limit, raw bytes fed to the whole chain so far).
    bomb: (u64, u64),
    /// Inflate output space, zeroed once per layer: inflating straight into `out`
    /// (`decompress_vec`) zero-fills all of its spare capacity on every call.
    scratch: Vec<u8>,
}

/// What went wrong while decoding (for anomalies).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecodeFlags {
    /// A layer failed after producing output; the rest of the body was dropped.
    pub failed: bool,
    /// A layer could not decode its input and passed it through.
    pub passthrough: bool,
    /// A compression bomb was stopped.
    pub bomb: bool,
    /// More layers were declared than the layer limit.
    pub too_many_layers: bool,
}

/// A chain of decoding layers for one body.
#[derive(Debug)]
pub struct Decoder {
    layers: Vec<Layer>,
    limits: DecodeLimits,
    pub flags: DecodeFlags,
    stopped: bool,
    /// Raw (encoded) bytes fed, for the bomb ratio.
    raw_in: u64,
    scratch: [Vec<u8>; 2],
}

fn zlib_header(b: &[u8]) -> bool {
    b.len() >= 2
        && b[0] & 0x0f == 8
        && b[0] >> 4 <= 7
        && (u16::from(b[0]) << 8 | u16::from(b[1])) % 31 == 0
}

/// Length of a complete gzip header at the start of `b`: `Some(Ok(n))`, `Some(Err(()))`
/// if it is not a gzip header, `None` if more bytes are needed.
fn gzip_header_len(b: &[u8]) -> Option<Result<usize, ()>> {
    if b.len() < 10 {
        return if b.iter().zip([0x1f, 0x8b, 0x08]).all(|(a, e)| *a == e) {
            None
        } else {
            Some(Err(()))
        };
    }
    if b[..3] != [0x1f, 0x8b, 0x08] {
        return Some(Err(()));
    }
    let flags = b[3];
    let mut at = 10usize;
    if flags & 0x04 != 0 {
        let xlen = usize::from(u16::from_le_bytes([*b.get(at)?, *b.get(at + 1)?]));
        at += 2 + xlen;
        if b.len() < at {
            return None;
        }
    }
    for bit in [0x08u8, 0x10] {
        if flags & bit != 0 {
            let nul = memchr::memchr(0, b.get(at..)?)?;
            at += nul + 1;
        }
    }
    if flags & 0x02 != 0 {
        at += 2;
        if b.len() < at {
            return None;
        }
    }
    Some(Ok(at))
}

enum Step {
    /// Keep going.
    Ok,
    /// The sink is full: stop decoding this body.
    Full,
}

impl Decoder {
    /// A decoder for the layers `declared` (outermost first), or `None` when there is
    /// nothing to undo.
    pub fn new(declared: &[Declared], limits: DecodeLimits) -> Option<Decoder> {
        if declared.is_empty() || limits.layer_limit == 0 {
            return None;
        }
        let n = declared.len().min(limits.layer_limit).min(MAX_LAYERS);
        let flags = DecodeFlags {
            too_many_layers: declared.len() > n,
            ..DecodeFlags::default()
        };
        Some(Decoder {
            layers: declared[..n]
                .iter()
                .map(|&d| Layer {
                    declared: d,
                    mode: Mode::Sniff,
                    replay: Vec::new(),
                    replay_overflow: false,
                    consumed: 0,
                    produced: 0,
                    bomb: (u64::MAX, 0),
                    scratch: Vec::new(),
                })
                .collect(),
            limits,
            flags,
            stopped: false,
            raw_in: 0,
            scratch: [Vec::new(), Vec::new()],
        })
    }

    /// Decodes `input`, appending at most `room` bytes to `out`. Returns false once the
    /// decoder has stopped (sink full, bomb): further input is ignored.
    pub fn feed(&mut self, input: &[u8], out: &mut Vec<u8>, room: usize) -> bool {
        self.run(input, false, out, room)
    }

    /// The body ended: flushes what the layers hold.
    pub fn finish(&mut self, out: &mut Vec<u8>, room: usize) {
        self.run(&[], true, out, room);
    }

    fn run(&mut self, input: &[u8], fin: bool, out: &mut Vec<u8>, room: usize) -> bool {
        if self.stopped {
            return false;
        }
        self.raw_in += input.len() as u64;
        // The first layer reads `input` in place and the last one writes into `out`
        // (capped at `room`); only the bytes between layers go through the scratch pair.
        let mut cur = std::mem::take(&mut self.scratch[0]);
        let mut next = std::mem::take(&mut self.scratch[1]);
        let n = self.layers.len();
        let bomb_limit = self.limits.bomb_limit;
        let mut stop = false;
        for (i, layer) in self.layers.iter_mut().enumerate() {
            let last = i + 1 == n;
            // The bomb check runs inside the inflate loop, so one packet cannot inflate
            // into gigabytes before it stops.
            layer.bomb = (bomb_limit, self.raw_in);
            let src: &[u8] = if i == 0 { input } else { &cur };
            let step = if last {
                layer.process(src, fin, out, room, &mut self.flags)
            } else {
                next.clear();
                layer.process(src, fin, &mut next, usize::MAX, &mut self.flags)
            };
            if self.flags.bomb || matches!(step, Step::Full) {
                stop = true;
            }
            if last {
                break;
            }
            std::mem::swap(&mut cur, &mut next);
            if stop {
                break;
            }
        }
        cur.clear();
        next.clear();
        self.scratch = [cur, next];
        if stop {
            self.stopped = true;
            self.layers.clear();
        }
        !stop
    }
}

impl Layer {
    fn process(
        &mut self,
        input: &[u8],
        fin: bool,
        out: &mut Vec<u8>,
        cap: usize,
        flags: &mut DecodeFlags,
    ) -> Step {
        self.consumed += input.len() as u64;
        if self.produced == 0 && !matches!(self.mode, Mode::Pass | Mode::Done) {
            if self.replay.len() + input.len() <= MAX_REPLAY {
                self.replay.extend_from_slice(input);
            } else {
                self.replay_overflow = true;
            }
        }
        loop {
            match &mut self.mode {
                Mode::Sniff => {
                    // Decide from the first two bytes, which the replay buffer holds.
                    if self.replay_overflow {
                        self.mode = Mode::Pass;
                        continue;
                    }
                    let b = &self.replay;
                    if b.len() < 2 && !fin {
                        return Step::Ok;
                    }
                    let gzip = b.len() >= 2 && b[0] == 0x1f && b[1] == 0x8b;
                    self.mode = if gzip {
                        Mode::GzipHeader
                    } else if zlib_header(b) {
                        Mode::Inflate(Box::new(Decompress::new(true)))
                    } else if self.declared != Declared::Other && b.len() >= 2 {
                        Mode::Inflate(Box::new(Decompress::new(false)))
                    } else {
                        Mode::Pass
                    };
                    if !matches!(self.mode, Mode::GzipHeader) {
                        // Start decoding from the beginning of what was held.
                        let held = self.replay.clone();
                        return self.decode_from(&held, fin, out, cap, flags);
                    }
                }
                Mode::GzipHeader => match gzip_header_len(&self.replay) {
                    None if !fin && self.replay.len() <= MAX_GZIP_HEADER => return Step::Ok,
                    Some(Ok(n)) => {
                        self.mode = Mode::Inflate(Box::new(Decompress::new(false)));
                        let held = self.replay.clone();
                        return self.decode_from(&held[n..], fin, out, cap, flags);
                    }
                    _ => {
                        flags.passthrough = true;
                        self.mode = Mode::Pass;
                        let held = std::mem::take(&mut self.replay);
                        return push_capped(out, &held, cap, &mut self.produced);
                    }
                },
                Mode::Inflate(_) => return self.decode_from(input, fin, out, cap, flags),
                Mode::Pass => return push_capped(out, input, cap, &mut self.produced),
                Mode::Done => return Step::Ok,
            }
        }
    }

    /// Inflates `data` in `Inflate` mode; on failure before any output, passes the held
    /// input through instead.
    fn decode_from(
        &mut self,
        data: &[u8],
        fin: bool,
        out: &mut Vec<u8>,
        cap: usize,
        flags: &mut DecodeFlags,
    ) -> Step {
        let Mode::Inflate(z) = &mut self.mode else {
            return push_capped(out, data, cap, &mut self.produced);
        };
        let mut rest = data;
        let start_len = out.len();
        let mut failed = false;
        let mut ended = false;
        let (bomb_limit, raw_in) = self.bomb;
        loop {
            if out.len() - start_len >= cap {
                break;
            }
            let total = self.produced + (out.len() - start_len) as u64;
            if total > bomb_limit && total / raw_in.max(1) > BOMB_RATIO {
                flags.bomb = true;
                self.produced = total;
                self.mode = Mode::Done;
                return Step::Full;
            }
            if self.scratch.is_empty() {
                self.scratch = vec![0; CHUNK];
            }
            let room = CHUNK.min(cap - (out.len() - start_len)).max(1);
            let before_in = z.total_in();
            let before_out = z.total_out();
            match z.decompress(rest, &mut self.scratch[..room], FlushDecompress::None) {
                Ok(st) => {
                    let used = (z.total_in() - before_in) as usize;
                    let made = z.total_out() - before_out;
                    out.extend_from_slice(&self.scratch[..(made as usize).min(room)]);
                    rest = &rest[used.min(rest.len())..];
                    if st == Status::StreamEnd {
                        ended = true;
                        break;
                    }
                    if used == 0 && made == 0 {
                        break;
                    }
                }
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
        let made = (out.len() - start_len) as u64;
        self.produced += made;
        if out.len() - start_len > cap {
            out.truncate(start_len + cap);
        }
        if failed {
            if self.produced == 0 && !self.replay_overflow {
                // Not compressed after all: pass the held input through.
                flags.passthrough = true;
                self.mode = Mode::Pass;
                let held = std::mem::take(&mut self.replay);
                return push_capped(out, &held, cap, &mut self.produced);
            }
            flags.failed = true;
            self.mode = Mode::Done;
        } else if ended {
            self.mode = Mode::Done;
        } else if fin && self.produced == 0 && !self.replay_overflow && !self.replay.is_empty() {
            flags.passthrough = true;
            self.mode = Mode::Pass;
            let held = std::mem::take(&mut self.replay);
            return push_capped(out, &held, cap, &mut self.produced);
        }
        if self.produced > 0 {
            self.replay = Vec::new();
        }
        if out.len() - start_len >= cap {
            Step::Full
        } else {
            Step::Ok
        }
    }
}

fn push_capped(out: &mut Vec<u8>, data: &[u8], cap: usize, produced: &mut u64) -> Step {
    let take = data.len().min(cap);
    out.extend_from_slice(&data[..take]);
    *produced += take as u64;
    if take < data.len() {
        Step::Full
    } else {
        Step::Ok
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::Compression;
    use flate2::write::{DeflateEncoder, GzEncoder, ZlibEncoder};
    use std::io::Write;

    fn gz(d: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(d).unwrap();
        e.finish().unwrap()
    }
    fn raw(d: &[u8]) -> Vec<u8> {
        let mut e = DeflateEncoder::new(Vec::new(), Compression::default());
        e.write_all(d).unwrap();
        e.finish().unwrap()
    }
    fn zlib(d: &[u8]) -> Vec<u8> {
        let mut e = ZlibEncoder::new(Vec::new(), Compression::default());
        e.write_all(d).unwrap();
        e.finish().unwrap()
    }

    fn decode(ce: &[u8], body: &[u8], step: usize) -> (Vec<u8>, DecodeFlags) {
        let limits = DecodeLimits {
            layer_limit: 3,
            ..DecodeLimits::default()
        };
        let mut d = Decoder::new(&parse_content_encoding(ce), limits).unwrap();
        let mut out = Vec::new();
        for c in body.chunks(step) {
            d.feed(c, &mut out, 1 << 20);
        }
        d.finish(&mut out, 1 << 20);
        (out, d.flags)
    }

    const TEXT: &[u8] = b"X5O!P%@AP[4\\PZX54(P^)7CC)7}$EICAR-STANDARD-ANTIVIRUS-TEST-FILE!$H+H*";

    #[test]
    fn gzip_deflate_zlib_any_split() {
        for step in [1, 3, 1000] {
            assert_eq!(decode(b"gzip", &gz(TEXT), step).0, TEXT);
            assert_eq!(decode(b"deflate", &raw(TEXT), step).0, TEXT);
            assert_eq!(decode(b"deflate", &zlib(TEXT), step).0, TEXT);
            assert_eq!(decode(b"gzip, deflate", &raw(&gz(TEXT)), step).0, TEXT);
        }
    }

    #[test]
    fn tolerant_of_broken_gzip() {
        // Reserved flag bit set, trailer cut off: still decoded.
        let mut g = gz(TEXT);
        g[3] |= 0x80;
        g.truncate(g.len() - 8);
        assert_eq!(decode(b"gzip", &g, 5).0, TEXT);
        // FNAME header field.
        let mut g = gz(TEXT);
        g[3] |= 0x08;
        g.splice(10..10, b"name\0".iter().copied());
        assert_eq!(decode(b"gzip", &g, 2).0, TEXT);
    }

    #[test]
    fn lying_header_passes_through() {
        let (out, f) = decode(b"gzip", TEXT, 4);
        assert_eq!(out, TEXT);
        assert!(f.passthrough);
        assert_eq!(decode(b"x-foo", TEXT, 4).0, TEXT);
        // Declared two layers, only one applied.
        assert_eq!(decode(b"gzip, deflate", &gz(TEXT), 7).0, TEXT);
    }

    #[test]
    fn bomb_is_capped_and_flagged() {
        let zeros = vec![0u8; 64 << 20];
        let g = gz(&zeros);
        // Two layers: a single deflate layer cannot pass the ratio (about 1000:1 at most).
        let g2 = gz(&g);
        let mut d =
            Decoder::new(&[Declared::Gzip, Declared::Gzip], DecodeLimits::default()).unwrap();
        let mut out = Vec::new();
        for c in g2.chunks(100) {
            if !d.feed(c, &mut out, usize::MAX) {
                break;
            }
        }
        assert!(d.flags.bomb);
        assert!(out.len() <= 2 << 20, "{}", out.len());
        let mut d = Decoder::new(&[Declared::Gzip], DecodeLimits::default()).unwrap();
        let mut out = Vec::new();
        for c in g.chunks(1000) {
            if !d.feed(c, &mut out, 8 << 20) {
                break;
            }
        }
        assert!(out.len() >= 8 << 20, "a plain large body is not a bomb");
        assert!(!d.flags.bomb);
        // The caller's room stops decoding too.
        let mut d = Decoder::new(&[Declared::Gzip], DecodeLimits::default()).unwrap();
        let mut out = Vec::new();
        assert!(!d.feed(&g, &mut out, 1000));
        assert_eq!(out.len(), 1000);
    }

    #[test]
    fn layer_limit() {
        let l = DecodeLimits {
            layer_limit: 1,
            ..DecodeLimits::default()
        };
        let d = Decoder::new(&parse_content_encoding(b"gzip, gzip"), l).unwrap();
        assert!(d.flags.too_many_layers);
        assert!(Decoder::new(&parse_content_encoding(b"identity"), l).is_none());
    }
}
