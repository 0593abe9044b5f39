//! Classic pcap: a 24-byte file header, then 16-byte record headers each followed by the
//! captured bytes. The magic number gives the byte order and the timestamp unit
//! (0xa1b2c3d4 microseconds, 0xa1b23c4d nanoseconds).

use std::io::Read;

use super::{Input, MAX_CAPLEN, Packet, PcapError, u32_at};

pub(crate) struct State {
    be: bool,
    nanos: bool,
    link_type: u16,
}

impl State {
    pub(crate) fn read_header<R: Read>(input: &mut Input<R>) -> Result<State, PcapError> {
        if input.fill(24)? < 24 {
            return Err(PcapError::Truncated { offset: 0 });
        }
        let h = input.peek(24);
        let magic = u32_at(h, 0, false);
        let (be, nanos) = match magic {
            0xa1b2_c3d4 => (false, false),
            0xd4c3_b2a1 => (true, false),
            0xa1b2_3c4d => (false, true),
            0x4d3c_b2a1 => (true, true),
            _ => return Err(PcapError::BadMagic { magic }),
        };
        // The upper bits of the link type field carry FCS information (pcap spec).
        let link_type = (u32_at(h, 20, be) & 0x0fff_ffff) as u16;
        input.consume(24);
        Ok(State {
            be,
            nanos,
            link_type,
        })
    }
}

pub(crate) fn next<'a, R: Read>(
    st: &mut State,
    input: &'a mut Input<R>,
) -> Result<Option<Packet<'a>>, PcapError> {
    let offset = input.offset;
    let avail = input.fill(16)?;
    if avail == 0 {
        return Ok(None);
    }
    if avail < 16 {
        return Err(PcapError::Truncated { offset });
    }
    let h = input.peek(16);
    let secs = u64::from(u32_at(h, 0, st.be));
    let frac = u64::from(u32_at(h, 4, st.be));
    let caplen = u32_at(h, 8, st.be) as usize;
    let origlen = u32_at(h, 12, st.be);
    if caplen > MAX_CAPLEN {
        return Err(PcapError::Corrupt {
            offset,
            reason: format!("captured length {caplen} exceeds {MAX_CAPLEN}"),
        });
    }
    let need = 16 + caplen;
    if input.fill(need)? < need {
        return Err(PcapError::Truncated { offset });
    }
    let ts_ns = secs
        .saturating_mul(1_000_000_000)
        .saturating_add(if st.nanos {
            frac
        } else {
            frac.saturating_mul(1000)
        });
    let start = input.start + 16;
    input.consume(need);
    let input: &'a Input<R> = input;
    Ok(Some(Packet {
        ts_ns,
        origlen: origlen.max(caplen as u32),
        link_type: st.link_type,
        iface: 0,
        data: &input.buf[start..start + caplen],
        offset,
    }))
}
