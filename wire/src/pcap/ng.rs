//! pcapng: a sequence of blocks `type, total length, body, total length`. A Section Header
//! Block (whose byte-order magic sets the byte order of the section) starts each section;
//! Interface Description Blocks declare interfaces (link type, timestamp resolution and
//! offset); packets come in Enhanced Packet, Simple Packet and (obsolete) Packet Blocks.
//! Other blocks are skipped.

use std::io::Read;

use super::{Input, MAX_CAPLEN, Packet, PcapError, u16_at, u32_at};

pub(crate) const BLOCK_SHB: u32 = 0x0a0d_0d0a;
const BLOCK_IDB: u32 = 0x0000_0001;
const BLOCK_PB: u32 = 0x0000_0002;
const BLOCK_SPB: u32 = 0x0000_0003;
const BLOCK_EPB: u32 = 0x0000_0006;
const OPT_TSRESOL: u16 = 9;
const OPT_TSOFFSET: u16 = 14;
/// Interfaces declared in one section, at most.
const MAX_INTERFACES: usize = 4096;
/// Options parsed in one block, at most.
const MAX_OPTIONS: usize = 256;

#[derive(Debug, Clone, Copy)]
enum Resolution {
    /// Units of 10^-n s.
    Pow10(u8),
    /// Units of 2^-n s.
    Pow2(u8),
}

#[derive(Debug, Clone, Copy)]
struct Iface {
    link_type: u16,
    resolution: Resolution,
    offset_s: i64,
}

#[derive(Default)]
pub(crate) struct State {
    be: bool,
    in_section: bool,
    ifaces: Vec<Iface>,
}

fn to_ns(ts: u64, iface: &Iface) -> u64 {
    let ts = u128::from(ts);
    let ns: u128 = match iface.resolution {
        Resolution::Pow10(n) if n <= 9 => ts * 10u128.pow(u32::from(9 - n)),
        Resolution::Pow10(n) => ts / 10u128.pow(u32::from((n - 9).min(38))),
        Resolution::Pow2(n) => (ts * 1_000_000_000) >> u32::from(n.min(127)),
    };
    let ns = ns as i128 + i128::from(iface.offset_s) * 1_000_000_000;
    ns.clamp(0, i128::from(u64::MAX)) as u64
}

fn parse_idb(body: &[u8], be: bool) -> Iface {
    let mut iface = Iface {
        link_type: u16_at(body, 0, be),
        resolution: Resolution::Pow10(6),
        offset_s: 0,
    };
    // Options start after link type (2), reserved (2) and snaplen (4).
    let mut pos = 8;
    for _ in 0..MAX_OPTIONS {
        if pos + 4 > body.len() {
            break;
        }
        let code = u16_at(body, pos, be);
        let len = u16_at(body, pos + 2, be) as usize;
        let val_start = pos + 4;
        if code == 0 || val_start + len > body.len() {
            break;
        }
        let val = &body[val_start..val_start + len];
        match (code, len) {
            (OPT_TSRESOL, 1) => {
                let v = val[0];
                iface.resolution = if v & 0x80 != 0 {
                    Resolution::Pow2(v & 0x7f)
                } else {
                    Resolution::Pow10(v)
                };
            }
            (OPT_TSOFFSET, 8) => {
                let mut b = [0u8; 8];
                b.copy_from_slice(val);
                iface.offset_s = if be {
                    i64::from_be_bytes(b)
                } else {
                    i64::from_le_bytes(b)
                };
            }
            _ => {}
        }
        pos = val_start + len.div_ceil(4) * 4;
    }
    iface
}

/// Looks at a block's first 12 bytes before reading it: a section header block starts a
/// new section (its byte order; interfaces are per section), any other block needs one.
fn enter_block(st: &mut State, head: &[u8], offset: u64) -> Result<(), PcapError> {
    if u32_at(head, 0, false) == BLOCK_SHB {
        st.be = match u32_at(head, 8, false) {
            0x1a2b_3c4d => false,
            0x4d3c_2b1a => true,
            other => {
                return Err(PcapError::Corrupt {
                    offset,
                    reason: format!("bad byte-order magic {other:#010x}"),
                });
            }
        };
        st.in_section = true;
        st.ifaces.clear();
    } else if !st.in_section {
        return Err(PcapError::Corrupt {
            offset,
            reason: "first block is not a section header".to_string(),
        });
    }
    Ok(())
}

pub(crate) fn next<'a, R: Read>(
    st: &mut State,
    input: &'a mut Input<R>,
) -> Result<Option<Packet<'a>>, PcapError> {
    loop {
        let offset = input.offset;
        let avail = input.fill(12)?;
        if avail == 0 {
            return Ok(None);
        }
        if avail < 12 {
            return Err(PcapError::Truncated { offset });
        }
        let head = input.peek(12);
        enter_block(st, head, offset)?;
        let be = st.be;
        let btype = u32_at(head, 0, be);
        let blen = u32_at(head, 4, be) as usize;
        if blen < 12 || !blen.is_multiple_of(4) || blen > MAX_CAPLEN + 64 {
            return Err(PcapError::Corrupt {
                offset,
                reason: format!("bad block length {blen}"),
            });
        }
        if input.fill(blen)? < blen {
            return Err(PcapError::Truncated { offset });
        }
        let block = input.peek(blen);
        if u32_at(block, blen - 4, be) as usize != blen {
            return Err(PcapError::Corrupt {
                offset,
                reason: "block lengths disagree".to_string(),
            });
        }
        let body = &block[8..blen - 4];
        let corrupt = |reason: &str| PcapError::Corrupt {
            offset,
            reason: reason.to_string(),
        };
        // (iface, ts, caplen, origlen, data start within block)
        let pkt: Option<(usize, Option<u64>, usize, u32, usize)> = match btype {
            BLOCK_IDB => {
                if body.len() < 8 {
                    return Err(corrupt("short interface description block"));
                }
                if st.ifaces.len() >= MAX_INTERFACES {
                    return Err(corrupt("too many interfaces"));
                }
                st.ifaces.push(parse_idb(body, be));
                None
            }
            BLOCK_EPB | BLOCK_PB => {
                if body.len() < 20 {
                    return Err(corrupt("short packet block"));
                }
                let iface = if btype == BLOCK_EPB {
                    u32_at(body, 0, be) as usize
                } else {
                    usize::from(u16_at(body, 0, be))
                };
                let ts = (u64::from(u32_at(body, 4, be)) << 32) | u64::from(u32_at(body, 8, be));
                let caplen = u32_at(body, 12, be) as usize;
                let origlen = u32_at(body, 16, be);
                if caplen > body.len() - 20 {
                    return Err(corrupt("captured length beyond the block"));
                }
                Some((iface, Some(ts), caplen, origlen, 8 + 20))
            }
            BLOCK_SPB => {
                if body.len() < 4 {
                    return Err(corrupt("short simple packet block"));
                }
                let origlen = u32_at(body, 0, be);
                let caplen = (origlen as usize).min(body.len() - 4);
                Some((0, None, caplen, origlen, 8 + 4))
            }
            _ => None,
        };
        let Some((iface_idx, ts, caplen, origlen, data_at)) = pkt else {
            input.consume(blen);
            continue;
        };
        let Some(iface) = st.ifaces.get(iface_idx).copied() else {
            return Err(corrupt("packet for an undeclared interface"));
        };
        let start = input.start + data_at;
        input.consume(blen);
        let input: &'a Input<R> = input;
        return Ok(Some(Packet {
            ts_ns: ts.map(|t| to_ns(t, &iface)).unwrap_or(0),
            origlen: origlen.max(caplen as u32),
            link_type: iface.link_type,
            iface: iface_idx.min(usize::from(u16::MAX)) as u16,
            data: &input.buf[start..start + caplen],
            offset,
        }));
    }
}

/// Consumes the blocks before `target` (a block boundary), keeping the section and
/// interface state, without returning packets: resuming a file.
pub(crate) fn skip_to<R: Read>(
    st: &mut State,
    input: &mut Input<R>,
    target: u64,
) -> Result<(), PcapError> {
    while input.offset < target {
        let offset = input.offset;
        if input.fill(12)? < 12 {
            return Err(PcapError::Truncated { offset });
        }
        let head = input.peek(12);
        enter_block(st, head, offset)?;
        let btype = u32_at(head, 0, st.be);
        let blen = u32_at(head, 4, st.be) as usize;
        if blen < 12 || !blen.is_multiple_of(4) || blen > MAX_CAPLEN + 64 {
            return Err(PcapError::Corrupt {
                offset,
                reason: format!("bad block length {blen}"),
            });
        }
        if offset + blen as u64 > target {
            return Err(PcapError::Corrupt {
                offset: target,
                reason: "resume offset is not a block boundary".to_string(),
            });
        }
        if input.fill(blen)? < blen {
            return Err(PcapError::Truncated { offset });
        }
        if btype == BLOCK_IDB {
            let body = &input.peek(blen)[8..blen - 4];
            if body.len() < 8 || st.ifaces.len() >= MAX_INTERFACES {
                return Err(PcapError::Corrupt {
                    offset,
                    reason: "bad interface description block".to_string(),
                });
            }
            let iface = parse_idb(body, st.be);
            st.ifaces.push(iface);
        }
        input.consume(blen);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamp_resolutions() {
        let i = |r, o| Iface {
            link_type: 1,
            resolution: r,
            offset_s: o,
        };
        assert_eq!(to_ns(1_500_000, &i(Resolution::Pow10(6), 0)), 1_500_000_000);
        assert_eq!(to_ns(7, &i(Resolution::Pow10(9), 0)), 7);
        assert_eq!(to_ns(1024, &i(Resolution::Pow2(10), 0)), 1_000_000_000);
        assert_eq!(to_ns(1, &i(Resolution::Pow10(0), 5)), 6_000_000_000);
        assert_eq!(to_ns(1, &i(Resolution::Pow10(0), -5)), 0);
    }

    /// Hand-made little-endian pcapng: SHB, IDB with if_tsresol = 9 (ns), an unknown
    /// block (skipped), and one EPB with 5 bytes of data.
    #[test]
    fn options_and_unknown_blocks() {
        let mut f = Vec::new();
        // SHB
        f.extend_from_slice(&[0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a]);
        f.extend_from_slice(&[
            1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0,
        ]);
        // IDB: linktype 101 (raw), snaplen, option tsresol=9 (len 1, padded), end of options.
        f.extend_from_slice(&[1, 0, 0, 0, 32, 0, 0, 0, 101, 0, 0, 0, 0, 0, 4, 0]);
        f.extend_from_slice(&[9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0, 0]);
        // Unknown block type 0x0bad, 12 bytes.
        f.extend_from_slice(&[0xad, 0x0b, 0, 0, 12, 0, 0, 0, 12, 0, 0, 0]);
        // EPB: iface 0, ts = 1 (ns), caplen 5, origlen 5, data + 3 pad.
        f.extend_from_slice(&[6, 0, 0, 0, 40, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0]);
        f.extend_from_slice(&[
            5, 0, 0, 0, 5, 0, 0, 0, b'h', b'e', b'l', b'l', b'o', 0, 0, 0, 40, 0, 0, 0,
        ]);
        let mut r = super::super::Reader::new(&f[..]).unwrap();
        let p = r.next_packet().unwrap().unwrap();
        assert_eq!(p.data, b"hello");
        assert_eq!(p.ts_ns, 1);
        assert_eq!(p.link_type, 101);
        assert!(r.next_packet().unwrap().is_none());
    }
}
