//! pcap and pcapng writers.

use std::io::{self, Write};

use crate::Frame;

/// Link types (LINKTYPE_*).
pub const LINKTYPE_NULL: u32 = 0;
pub const LINKTYPE_ETHERNET: u32 = 1;
pub const LINKTYPE_RAW: u32 = 101;
pub const LINKTYPE_LINUX_SLL: u32 = 113;
pub const LINKTYPE_IPV4: u32 = 228;
pub const LINKTYPE_IPV6: u32 = 229;

/// File format and byte order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Classic pcap, microsecond timestamps.
    Micro { big_endian: bool },
    /// Classic pcap, nanosecond timestamps.
    Nano { big_endian: bool },
    /// pcapng with one section and one interface (default microsecond resolution).
    PcapNg { big_endian: bool },
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::Micro { big_endian: false },
        Format::Micro { big_endian: true },
        Format::Nano { big_endian: false },
        Format::Nano { big_endian: true },
        Format::PcapNg { big_endian: false },
        Format::PcapNg { big_endian: true },
    ];
}

/// Writes frames in one format.
#[derive(Debug)]
pub struct Writer<W: Write> {
    out: W,
    format: Format,
    snaplen: u32,
}

fn u16b(v: u16, be: bool) -> [u8; 2] {
    if be { v.to_be_bytes() } else { v.to_le_bytes() }
}
fn u32b(v: u32, be: bool) -> [u8; 4] {
    if be { v.to_be_bytes() } else { v.to_le_bytes() }
}

impl<W: Write> Writer<W> {
    /// Writes the file header (and for pcapng the interface description).
    pub fn new(mut out: W, format: Format, link_type: u32) -> io::Result<Writer<W>> {
        let snaplen = 262_144;
        match format {
            Format::Micro { big_endian: be } | Format::Nano { big_endian: be } => {
                let magic = if matches!(format, Format::Micro { .. }) {
                    0xa1b2_c3d4u32
                } else {
                    0xa1b2_3c4d
                };
                out.write_all(&u32b(magic, be))?;
                out.write_all(&u16b(2, be))?;
                out.write_all(&u16b(4, be))?;
                out.write_all(&u32b(0, be))?; // thiszone
                out.write_all(&u32b(0, be))?; // sigfigs
                out.write_all(&u32b(snaplen, be))?;
                out.write_all(&u32b(link_type, be))?;
            }
            Format::PcapNg { big_endian: be } => {
                // Section Header Block: type, length, byte-order magic, version 1.0,
                // section length -1 (unknown), length again.
                let shb_len = 28u32;
                out.write_all(&u32b(0x0a0d_0d0a, be))?;
                out.write_all(&u32b(shb_len, be))?;
                out.write_all(&u32b(0x1a2b_3c4d, be))?;
                out.write_all(&u16b(1, be))?;
                out.write_all(&u16b(0, be))?;
                out.write_all(&u32b(0xffff_ffff, be))?;
                out.write_all(&u32b(0xffff_ffff, be))?;
                out.write_all(&u32b(shb_len, be))?;
                // Interface Description Block: link type, reserved, snaplen, no options.
                let idb_len = 20u32;
                out.write_all(&u32b(1, be))?;
                out.write_all(&u32b(idb_len, be))?;
                out.write_all(&u16b(link_type as u16, be))?;
                out.write_all(&u16b(0, be))?;
                out.write_all(&u32b(snaplen, be))?;
                out.write_all(&u32b(idb_len, be))?;
            }
        }
        Ok(Writer {
            out,
            format,
            snaplen,
        })
    }

    /// Writes one packet captured at `ts_ns` (ns since the epoch).
    pub fn write(&mut self, ts_ns: u64, data: &[u8]) -> io::Result<()> {
        self.write_truncated(ts_ns, data, data.len())
    }

    /// Writes a packet whose wire length was `orig_len` (data may be shorter: a snaplen).
    pub fn write_truncated(&mut self, ts_ns: u64, data: &[u8], orig_len: usize) -> io::Result<()> {
        let caplen = data.len().min(self.snaplen as usize) as u32;
        let data = &data[..caplen as usize];
        match self.format {
            Format::Micro { big_endian: be } | Format::Nano { big_endian: be } => {
                let secs = (ts_ns / 1_000_000_000) as u32;
                let frac = if matches!(self.format, Format::Micro { .. }) {
                    ((ts_ns % 1_000_000_000) / 1000) as u32
                } else {
                    (ts_ns % 1_000_000_000) as u32
                };
                self.out.write_all(&u32b(secs, be))?;
                self.out.write_all(&u32b(frac, be))?;
                self.out.write_all(&u32b(caplen, be))?;
                self.out.write_all(&u32b(orig_len as u32, be))?;
                self.out.write_all(data)?;
            }
            Format::PcapNg { big_endian: be } => {
                // Enhanced Packet Block; timestamps in microseconds (if_tsresol default).
                let pad = (4 - (caplen as usize % 4)) % 4;
                let len = 32 + caplen + pad as u32;
                let ts = ts_ns / 1000;
                self.out.write_all(&u32b(6, be))?;
                self.out.write_all(&u32b(len, be))?;
                self.out.write_all(&u32b(0, be))?; // interface id
                self.out.write_all(&u32b((ts >> 32) as u32, be))?;
                self.out.write_all(&u32b(ts as u32, be))?;
                self.out.write_all(&u32b(caplen, be))?;
                self.out.write_all(&u32b(orig_len as u32, be))?;
                self.out.write_all(data)?;
                self.out.write_all(&[0u8; 3][..pad])?;
                self.out.write_all(&u32b(len, be))?;
            }
        }
        Ok(())
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}

/// A whole capture in memory.
pub fn to_bytes(frames: &[Frame], format: Format, link_type: u32) -> Vec<u8> {
    let mut w = Writer::new(Vec::new(), format, link_type).expect("writing to a Vec cannot fail");
    for f in frames {
        w.write(f.ts_ns, &f.data)
            .expect("writing to a Vec cannot fail");
    }
    w.into_inner()
}
