//! Reading capture files: classic pcap (microsecond and nanosecond timestamps, either
//! byte order) and pcapng (any number of sections and interfaces, either byte order,
//! per-interface timestamp resolution and offset).
//!
//! [`Reader`] reads through a large buffer and hands out each packet as a borrowed slice
//! of it: no allocation per packet. Truncated and corrupt files end with an error that
//! gives the byte offset of the bad record; everything before it was delivered.

mod classic;
mod ng;

use std::io::{self, Read, Seek, SeekFrom};

/// Largest captured length accepted for one packet (pcapng allows more, nobody uses it).
pub const MAX_CAPLEN: usize = 16 * 1024 * 1024;
/// Read granularity.
const CHUNK: usize = 1 << 20;

/// Errors reading a capture file. Offsets are bytes from the start of the file.
#[derive(Debug, thiserror::Error)]
pub enum PcapError {
    #[error("read error at offset {offset}: {source}")]
    Io {
        offset: u64,
        #[source]
        source: io::Error,
    },
    #[error("not a pcap or pcapng file (magic {magic:#010x})")]
    BadMagic { magic: u32 },
    #[error("file truncated in the middle of a record at offset {offset}")]
    Truncated { offset: u64 },
    #[error("corrupt record at offset {offset}: {reason}")]
    Corrupt { offset: u64, reason: String },
}

/// One packet, borrowed from the reader's buffer.
#[derive(Debug, Clone, Copy)]
pub struct Packet<'a> {
    /// ns since the Unix epoch.
    pub ts_ns: u64,
    /// Length on the wire (>= data.len()).
    pub origlen: u32,
    /// pcap LINKTYPE_* of the packet's interface.
    pub link_type: u16,
    /// Interface index within the file (always 0 for classic pcap).
    pub iface: u16,
    pub data: &'a [u8],
    /// File offset of the record that held the packet.
    pub offset: u64,
}

/// A buffered byte source with file offsets.
pub(crate) struct Input<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    /// File offset of buf[start].
    offset: u64,
    eof: bool,
}

impl<R: Read> Input<R> {
    fn new(inner: R) -> Self {
        Input {
            inner,
            buf: vec![0; CHUNK],
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
        }
    }

    /// Makes at least `n` bytes available from the current position. Returns the number
    /// available (< n only at end of file).
    fn fill(&mut self, n: usize) -> Result<usize, PcapError> {
        while self.end - self.start < n && !self.eof {
            if self.start > 0 && (self.buf.len() - self.start < n || self.end == self.buf.len()) {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            if self.buf.len() < n {
                self.buf.resize(n.next_power_of_two().max(CHUNK), 0);
            }
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(k) => self.end += k,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(PcapError::Io {
                        offset: self.offset,
                        source,
                    });
                }
            }
        }
        Ok(self.end - self.start)
    }

    fn peek(&self, n: usize) -> &[u8] {
        &self.buf[self.start..self.start + n]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        self.offset += n as u64;
    }
}

impl<R: Read + Seek> Input<R> {
    /// Moves to file offset `offset`, dropping what is buffered.
    fn seek(&mut self, offset: u64) -> Result<(), PcapError> {
        self.inner
            .seek(SeekFrom::Start(offset))
            .map_err(|source| PcapError::Io { offset, source })?;
        self.start = 0;
        self.end = 0;
        self.offset = offset;
        self.eof = false;
        Ok(())
    }
}

enum Format {
    Classic(classic::State),
    Ng(ng::State),
}

/// Reads packets from a pcap or pcapng stream.
pub struct Reader<R> {
    input: Input<R>,
    format: Format,
}

impl<R> std::fmt::Debug for Reader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reader")
            .field("offset", &self.input.offset)
            .field(
                "format",
                &match self.format {
                    Format::Classic(_) => "pcap",
                    Format::Ng(_) => "pcapng",
                },
            )
            .finish()
    }
}

pub(crate) fn u16_at(b: &[u8], at: usize, be: bool) -> u16 {
    let v = [b[at], b[at + 1]];
    if be {
        u16::from_be_bytes(v)
    } else {
        u16::from_le_bytes(v)
    }
}

pub(crate) fn u32_at(b: &[u8], at: usize, be: bool) -> u32 {
    let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
    if be {
        u32::from_be_bytes(v)
    } else {
        u32::from_le_bytes(v)
    }
}

impl<R: Read> Reader<R> {
    /// Reads the file header and detects the format.
    pub fn new(inner: R) -> Result<Reader<R>, PcapError> {
        let mut input = Input::new(inner);
        if input.fill(4)? < 4 {
            return Err(PcapError::Truncated { offset: 0 });
        }
        let magic = u32::from_le_bytes(input.peek(4).try_into().unwrap_or([0; 4]));
        let format = if magic == ng::BLOCK_SHB {
            Format::Ng(ng::State::default())
        } else {
            Format::Classic(classic::State::read_header(&mut input)?)
        };
        Ok(Reader { input, format })
    }

    /// The next packet, `None` at a clean end of file.
    pub fn next_packet(&mut self) -> Result<Option<Packet<'_>>, PcapError> {
        match &mut self.format {
            Format::Classic(st) => classic::next(st, &mut self.input),
            Format::Ng(st) => ng::next(st, &mut self.input),
        }
    }

    /// Bytes consumed so far.
    pub fn offset(&self) -> u64 {
        self.input.offset
    }

    /// Whether the file is pcapng.
    pub fn is_pcapng(&self) -> bool {
        matches!(self.format, Format::Ng(_))
    }
}

impl<R: Read + Seek> Reader<R> {
    /// Continues at file offset `offset`, which must be where a record starts (an
    /// [`Reader::offset`] of an earlier read of the same file): resuming a file. Classic
    /// pcap seeks there; pcapng reads the blocks before it for the section and interface
    /// state, without returning their packets.
    pub fn skip_to(&mut self, offset: u64) -> Result<(), PcapError> {
        if offset < self.input.offset {
            return Err(PcapError::Corrupt {
                offset,
                reason: format!(
                    "resume offset is inside the file header (which ends at {})",
                    self.input.offset
                ),
            });
        }
        match &mut self.format {
            Format::Classic(_) => self.input.seek(offset),
            Format::Ng(st) => ng::skip_to(st, &mut self.input, offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_synth::Frame;
    use meerkat_synth::pcap::{Format as F, LINKTYPE_ETHERNET, to_bytes};

    fn frames() -> Vec<Frame> {
        (0..500u64)
            .map(|i| Frame {
                ts_ns: 1_700_000_000_123_456_789 + i * 1_000_001_001,
                data: (0..(i % 1600) as u8)
                    .collect::<Vec<u8>>()
                    .repeat(1 + (i as usize % 3)),
            })
            .collect()
    }

    fn read_all(bytes: &[u8]) -> Result<Vec<(u64, Vec<u8>, u16)>, PcapError> {
        let mut r = Reader::new(bytes)?;
        let mut out = Vec::new();
        while let Some(p) = r.next_packet()? {
            out.push((p.ts_ns, p.data.to_vec(), p.link_type));
        }
        Ok(out)
    }

    #[test]
    fn every_format_reads_back() {
        let frames = frames();
        for format in F::ALL {
            let bytes = to_bytes(&frames, format, LINKTYPE_ETHERNET);
            let got = read_all(&bytes).unwrap_or_else(|e| panic!("{format:?}: {e}"));
            assert_eq!(got.len(), frames.len(), "{format:?}");
            for (g, f) in got.iter().zip(&frames) {
                let want_ts = match format {
                    F::Nano { .. } => f.ts_ns,
                    _ => f.ts_ns / 1000 * 1000,
                };
                assert_eq!(g.0, want_ts, "{format:?}");
                assert_eq!(g.1, f.data, "{format:?}");
                assert_eq!(g.2, 1, "{format:?}");
            }
        }
    }

    #[test]
    fn truncation_reports_offset_after_delivering_the_rest() {
        let frames = frames();
        for format in F::ALL {
            let bytes = to_bytes(&frames[..10], format, LINKTYPE_ETHERNET);
            let cut = &bytes[..bytes.len() - 3];
            let mut r = Reader::new(cut).unwrap();
            let mut n = 0;
            let err = loop {
                match r.next_packet() {
                    Ok(Some(_)) => n += 1,
                    Ok(None) => panic!("{format:?}: truncation not detected"),
                    Err(e) => break e,
                }
            };
            assert_eq!(n, 9, "{format:?}");
            assert!(
                matches!(err, PcapError::Truncated { offset } if offset > 0),
                "{format:?}: {err}"
            );
        }
    }

    #[test]
    fn resume_at_a_record_offset() {
        let frames = frames();
        for format in F::ALL {
            let bytes = to_bytes(&frames[..50], format, LINKTYPE_ETHERNET);
            let mut r = Reader::new(std::io::Cursor::new(&bytes[..])).unwrap();
            let mut offsets = Vec::new();
            let mut all = Vec::new();
            while let Some(p) = r.next_packet().unwrap() {
                all.push(p.data.to_vec());
                offsets.push(r.offset());
            }
            // Resume after packet 20: the rest, exactly.
            let mut r = Reader::new(std::io::Cursor::new(&bytes[..])).unwrap();
            r.skip_to(offsets[19]).unwrap();
            let mut rest = Vec::new();
            while let Some(p) = r.next_packet().unwrap() {
                rest.push(p.data.to_vec());
            }
            assert_eq!(rest, all[20..], "{format:?}");
            // At the end: nothing more.
            let mut r = Reader::new(std::io::Cursor::new(&bytes[..])).unwrap();
            r.skip_to(bytes.len() as u64).unwrap();
            assert!(r.next_packet().unwrap().is_none(), "{format:?}");
            // Inside the header: refused.
            let mut r = Reader::new(std::io::Cursor::new(&bytes[..])).unwrap();
            if matches!(format, F::PcapNg { .. }) {
                // pcapng: not a block boundary.
                assert!(r.skip_to(offsets[0] + 3).is_err(), "{format:?}");
            } else {
                assert!(r.skip_to(3).is_err(), "{format:?}");
            }
        }
    }

    #[test]
    fn garbage_is_rejected() {
        assert!(matches!(
            Reader::new(&b"GIF89a.........................."[..]),
            Err(PcapError::BadMagic { .. })
        ));
        assert!(matches!(
            Reader::new(&b"\xd4\xc3"[..]),
            Err(PcapError::Truncated { .. })
        ));
    }

    #[test]
    fn absurd_record_length_is_corrupt() {
        let mut bytes = to_bytes(&frames()[..2], F::Micro { big_endian: false }, 1);
        // incl_len of the first record (offset 24 + 8).
        bytes[32..36].copy_from_slice(&(u32::MAX).to_le_bytes());
        let mut r = Reader::new(&bytes[..]).unwrap();
        assert!(matches!(
            r.next_packet(),
            Err(PcapError::Corrupt { offset: 24, .. })
        ));
    }
}
