//! SSH per-flow state: each direction is an identification line, then binary packets
//! (RFC 4253 §6) up to NEWKEYS. The packets are kept (for their frames, and the
//! KEXINIT's algorithm lists) up to [`MAX_KEPT`] bytes per direction; past that they
//! are skipped as they stream by.

use md5::{Digest, Md5};

use crate::{AppState, Dir, ParseOutput, Transaction};

/// Longest identification line (RFC 4253 §4.2: 255 bytes with CR LF).
pub const MAX_BANNER_LEN: usize = 255;
/// Lines a server may send before its identification line, at most.
pub const MAX_PRE_BANNER_LINES: usize = 16;
/// Largest binary packet accepted (`packet_length`); RFC 4253 asks for 35000 and
/// implementations send somewhat more during key exchange.
pub const MAX_RECORD_LEN: usize = 256 * 1024;
/// Largest KEXINIT packet buffered to compute HASSH.
pub const MAX_KEXINIT_LEN: usize = 64 * 1024;
/// Name-lists kept from a KEXINIT for HASSH, bytes each.
pub const MAX_NAME_LIST: usize = 16 * 1024;
/// Bytes of packets kept per direction for their frames (a key exchange takes a few
/// KiB); the packets past it have no frame bytes.
pub const MAX_KEPT: usize = 256 * 1024;

const MSG_KEXINIT: u8 = 20;
const MSG_NEWKEYS: u8 = 21;

/// The HASSH of one side: its string (`kex;enc;mac;comp`) and the MD5 of it in hex.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Hassh {
    pub string: Vec<u8>,
    pub hash: Vec<u8>,
}

/// What one side said.
#[derive(Debug, Clone, Default)]
pub struct Side {
    /// Protocol version of the identification line (`2.0`).
    pub proto: Vec<u8>,
    /// Software version (`OpenSSH_8.9p1`), comments excluded.
    pub software: Vec<u8>,
    pub banner_done: bool,
    pub hassh: Option<Hassh>,
    /// NEWKEYS seen, the direction ended, or parsing gave up.
    pub done: bool,
}

/// A binary packet as Suricata's SSH frames see it: `record.hdr` (its first 6 bytes:
/// length, padding length, message type), `record.data` (the rest) and `record.pdu`
/// (all of it), numbered in that order.
#[derive(Debug, Clone, Default)]
pub struct Record {
    /// Stream offset of its first byte.
    pub offset: u64,
    /// The id of its `record.hdr` frame (`record.data` is the next, `record.pdu` the
    /// one after).
    pub id: u64,
    pub bytes: Box<[u8]>,
}

/// The one transaction of an SSH flow.
#[derive(Debug, Clone, Default)]
pub struct SshTx {
    pub sides: [Side; 2],
    /// Per direction, the packets kept (see [`MAX_KEPT`]).
    pub records: [Vec<Record>; 2],
    /// HASSH is logged (the section's `hassh`, or a rule uses a hassh keyword): the
    /// record waits for both key exchanges and carries it.
    pub log_hassh: bool,
}

impl SshTx {
    pub fn side(&self, dir: Dir) -> &Side {
        &self.sides[dir.index()]
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Reading the identification line (`buf` holds the line so far).
    Banner,
    /// Reading a packet header (`buf` holds up to 6 bytes).
    Header,
    /// Buffering a packet of this many bytes (length field included).
    Keep(usize),
    /// Skipping this many bytes of a packet.
    Skip(usize),
    Done,
}

#[derive(Debug)]
struct DirParser {
    st: St,
    buf: Vec<u8>,
    pre_lines: usize,
    /// Stream offset of the next byte, of the packet being read, and the id of its
    /// first frame.
    pos: u64,
    record_at: u64,
    record_id: u64,
    next_frame: u64,
    /// Bytes of packets kept so far.
    kept: usize,
    /// The packet being read is a NEWKEYS: the last one read.
    last: bool,
}

/// One flow's SSH state.
#[derive(Debug)]
pub struct SshState {
    /// A rule inspects SSH frames: the packets' bytes are kept
    /// ([`AppState::set_frames`]).
    keep_frames: bool,
    tx: SshTx,
    dirs: [DirParser; 2],
    freed: bool,
    /// Each side sent its NEWKEYS.
    newkeys: [bool; 2],
    /// Both did, and the end of payload inspection was asked for.
    encrypted: bool,
}

impl Default for SshState {
    fn default() -> Self {
        SshState::new()
    }
}

impl SshState {
    pub fn new() -> SshState {
        let d = || DirParser {
            st: St::Banner,
            buf: Vec::new(),
            pre_lines: 0,
            pos: 0,
            record_at: 0,
            record_id: 0,
            next_frame: 1,
            kept: 0,
            last: false,
        };
        SshState {
            keep_frames: false,
            tx: SshTx::default(),
            dirs: [d(), d()],
            freed: false,
            newkeys: [false; 2],
            encrypted: false,
        }
    }

    /// Whether the flow's record carries HASSH (and so waits for it).
    pub fn log_hassh(&mut self, on: bool) {
        self.tx.log_hassh = on;
    }

    fn finish(&mut self, d: usize) {
        self.dirs[d].st = St::Done;
        self.dirs[d].buf = Vec::new();
        self.tx.sides[d].done = true;
    }

    /// Consumes bytes of the identification line; returns the bytes used.
    fn banner(&mut self, d: usize, data: &[u8], out: &mut ParseOutput) -> usize {
        let (line_part, used, complete) = match memchr::memchr(b'\n', data) {
            Some(i) => (&data[..i], i + 1, true),
            None => (data, data.len(), false),
        };
        let p = &mut self.dirs[d];
        if p.buf.len() + line_part.len() > MAX_BANNER_LEN {
            out.anomaly("ssh.long_banner");
            self.finish(d);
            return data.len();
        }
        p.buf.extend_from_slice(line_part);
        if !complete {
            return used;
        }
        let line = std::mem::take(&mut p.buf);
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        let Some(rest) = line.strip_prefix(b"SSH-") else {
            // A server may say other things first (RFC 4253 §4.2).
            p.pre_lines += 1;
            if p.pre_lines > MAX_PRE_BANNER_LINES {
                out.anomaly("ssh.invalid_banner");
                self.finish(d);
            }
            return used;
        };
        let Some(dash) = memchr::memchr(b'-', rest) else {
            out.anomaly("ssh.invalid_banner");
            self.finish(d);
            return used;
        };
        let software = &rest[dash + 1..];
        let software = match memchr::memchr(b' ', software) {
            Some(sp) => &software[..sp],
            None => software,
        };
        let side = &mut self.tx.sides[d];
        side.proto = rest[..dash].to_vec();
        side.software = software.to_vec();
        side.banner_done = true;
        self.dirs[d].st = St::Header;
        used
    }

    fn header(&mut self, d: usize, data: &[u8], out: &mut ParseOutput) -> usize {
        let p = &mut self.dirs[d];
        if p.buf.is_empty() {
            p.record_at = p.pos;
        }
        let take = (6 - p.buf.len()).min(data.len());
        p.buf.extend_from_slice(&data[..take]);
        if p.buf.len() < 6 {
            return take;
        }
        let len = u32::from_be_bytes([p.buf[0], p.buf[1], p.buf[2], p.buf[3]]) as usize;
        let msg = p.buf[5];
        if !(2..=MAX_RECORD_LEN).contains(&len) {
            out.anomaly("ssh.invalid_record");
            self.finish(d);
            return data.len();
        }
        // Its frames are numbered whether or not its bytes are kept.
        p.record_id = p.next_frame;
        p.next_frame += 3;
        // Encrypted after a NEWKEYS.
        p.last = msg == MSG_NEWKEYS;
        if msg == MSG_KEXINIT && len + 4 > MAX_KEXINIT_LEN {
            out.anomaly("ssh.long_kex_record");
        }
        // Kept for its frames (when a rule inspects SSH frames) or its algorithms.
        let wanted = self.keep_frames || (msg == MSG_KEXINIT && self.tx.sides[d].hassh.is_none());
        if wanted && len + 4 <= MAX_KEXINIT_LEN && p.kept + len + 4 <= MAX_KEPT {
            p.kept += len + 4;
            p.st = St::Keep(len + 4);
        } else {
            p.buf.clear();
            p.st = St::Skip(len - 2);
        }
        take
    }

    /// A packet read whole: its frames, and its algorithm lists if it is the side's
    /// first KEXINIT.
    fn record(&mut self, d: usize, packet: Vec<u8>, out: &mut ParseOutput) {
        let p = &mut self.dirs[d];
        if packet.get(5) == Some(&MSG_KEXINIT) && self.tx.sides[d].hassh.is_none() {
            match hassh(&packet, d == 0) {
                Some(h) => self.tx.sides[d].hassh = Some(h),
                None => out.anomaly("ssh.invalid_record"),
            }
        }
        if self.keep_frames {
            self.tx.records[d].push(Record {
                offset: p.record_at,
                id: p.record_id,
                bytes: packet.into(),
            });
        }
    }

    /// The end of a packet: the next one's header, or the end after a NEWKEYS.
    fn packet_done(&mut self, d: usize) {
        if self.dirs[d].last {
            self.newkeys[d] = true;
            self.finish(d);
        } else {
            self.dirs[d].st = St::Header;
        }
    }

    fn run(&mut self, d: usize, mut data: &[u8], out: &mut ParseOutput) {
        let in_banner = self.dirs[d].st == St::Banner;
        while !data.is_empty() {
            let used = match self.dirs[d].st {
                St::Done => return,
                St::Banner => self.banner(d, data, out),
                St::Header => self.header(d, data, out),
                St::Skip(n) => {
                    let k = n.min(data.len());
                    if k == n {
                        self.packet_done(d);
                    } else {
                        self.dirs[d].st = St::Skip(n - k);
                    }
                    k
                }
                St::Keep(total) => {
                    let p = &mut self.dirs[d];
                    let k = (total - p.buf.len()).min(data.len());
                    p.buf.extend_from_slice(&data[..k]);
                    if p.buf.len() == total {
                        let packet = std::mem::take(&mut p.buf);
                        self.record(d, packet, out);
                        self.packet_done(d);
                    }
                    k
                }
            };
            let used = used.min(data.len());
            self.dirs[d].pos += used as u64;
            data = &data[used..];
        }
        // Suricata's parser asks for raw inspection once per direction: when the banner
        // is whole and what came with it holds whole records only.
        if in_banner
            && matches!(self.dirs[d].st, St::Header | St::Done)
            && self.dirs[d].buf.is_empty()
        {
            let dir = if d == 0 { Dir::ToServer } else { Dir::ToClient };
            out.trigger_raw(dir);
        }
        // Both sides past their NEWKEYS: the rest is encrypted. Suricata (its default
        // `encryption-handling`) inspects both raw streams once more, then no payload.
        if self.newkeys == [true; 2] && !self.encrypted {
            self.encrypted = true;
            out.no_payload_inspection_flush = true;
        }
    }
}

/// Reads a `name-list` (RFC 4251 §5) at `*pos`.
fn name_list<'a>(b: &'a [u8], pos: &mut usize) -> Option<&'a [u8]> {
    let len = b.get(*pos..*pos + 4)?;
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let start = *pos + 4;
    let list = b.get(start..start.checked_add(len)?)?;
    *pos = start + len;
    Some(list)
}

/// HASSH of a whole KEXINIT packet (length field included): the client's uses the
/// client-to-server algorithms, the server's the server-to-client ones.
fn hassh(packet: &[u8], client: bool) -> Option<Hassh> {
    let pad = usize::from(*packet.get(4)?);
    let len = packet.len().checked_sub(pad)?;
    // Payload: message type (1), cookie (16), then the name-lists.
    let payload = packet.get(5..len)?;
    let mut pos = 17;
    let mut lists: [&[u8]; 8] = [&[]; 8];
    for l in &mut lists {
        *l = name_list(payload, &mut pos)?;
    }
    let [
        kex,
        _hostkey,
        enc_cs,
        enc_sc,
        mac_cs,
        mac_sc,
        comp_cs,
        comp_sc,
    ] = lists;
    let parts = if client {
        [kex, enc_cs, mac_cs, comp_cs]
    } else {
        [kex, enc_sc, mac_sc, comp_sc]
    };
    let mut string = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            string.push(b';');
        }
        string.extend_from_slice(&p[..p.len().min(MAX_NAME_LIST)]);
    }
    let digest = Md5::digest(&string);
    let mut hash = Vec::with_capacity(32);
    for b in digest {
        hash.extend_from_slice(format!("{b:02x}").as_bytes());
    }
    Some(Hassh { string, hash })
}

impl AppState for SshState {
    fn set_frames(&mut self, used: &[crate::BufferId]) {
        self.keep_frames = used.iter().any(|&b| super::detect::frame_kind(b).is_some());
        // Id 1 is the stream frame's when a rule uses it.
        let first = crate::stream_frame::first_frame_id(crate::AppProto::Ssh, used);
        for p in &mut self.dirs {
            p.next_frame = first;
        }
    }

    /// A rule on a hassh buffer turns HASSH logging on, as Suricata's keywords do.
    fn set_rule_buffers(&mut self, used: &[crate::BufferId]) {
        if used.iter().any(|&b| super::detect::is_hassh(b)) {
            self.tx.log_hassh = true;
        }
    }

    /// Past a NEWKEYS (or once parsing gave up on the direction).
    fn stream_done(&self, dir: Dir) -> bool {
        self.tx.sides[dir.index()].done
    }

    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        self.run(dir.index(), data, out);
    }

    fn gap(&mut self, dir: Dir, _len: u64, _out: &mut ParseOutput) {
        // Packet boundaries are lost: nothing more can be read in this direction.
        self.finish(dir.index());
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        self.finish(dir.index());
    }

    fn tx_count(&self) -> usize {
        usize::from(!self.freed)
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        (index == 0 && !self.freed).then_some(&self.tx as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        if id > 0 {
            self.freed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Buf, BufferId};

    fn packet(payload: &[u8]) -> Vec<u8> {
        let pad = 4usize;
        let len = 1 + payload.len() + pad;
        let mut p = (len as u32).to_be_bytes().to_vec();
        p.push(pad as u8);
        p.extend_from_slice(payload);
        p.extend_from_slice(&[0; 4]);
        p
    }

    fn kexinit(lists: [&str; 10]) -> Vec<u8> {
        let mut k = vec![MSG_KEXINIT];
        k.extend_from_slice(&[0x11; 16]);
        for l in lists {
            k.extend_from_slice(&(l.len() as u32).to_be_bytes());
            k.extend_from_slice(l.as_bytes());
        }
        k.push(0);
        k.extend_from_slice(&[0; 4]);
        packet(&k)
    }

    fn ready(tx: &SshTx, id: BufferId) -> Vec<u8> {
        match tx.buffer(id, 0) {
            Buf::Ready(b) => b.to_vec(),
            other => panic!("{id:?}: {other:?}"),
        }
    }

    #[test]
    fn banners_kexinit_and_newkeys_byte_by_byte() {
        let mut client = b"SSH-2.0-OpenSSH_8.9p1 Ubuntu-3\r\n".to_vec();
        client.extend_from_slice(&kexinit([
            "curve25519-sha256,diffie-hellman-group1-sha1",
            "ssh-ed25519",
            "aes128-ctr",
            "aes256-ctr",
            "hmac-sha2-256",
            "hmac-sha1",
            "none",
            "zlib",
            "",
            "",
        ]));
        client.extend_from_slice(&packet(&[MSG_NEWKEYS]));
        client.extend_from_slice(b"\xde\xad\xbe\xef encrypted");
        let mut s = SshState::new();
        let mut out = ParseOutput::default();
        for b in &client {
            s.parse(Dir::ToServer, std::slice::from_ref(b), &mut out);
        }
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        s.parse(Dir::ToClient, b"Welcome\r\nSSH-1.99-Cisco-1.25\n", &mut out);
        let tx = &s.tx;
        assert_eq!(ready(tx, crate::ssh::detect::PROTO_CLIENT), b"2.0");
        assert_eq!(
            ready(tx, crate::ssh::detect::SOFTWARE_CLIENT),
            b"OpenSSH_8.9p1"
        );
        assert_eq!(ready(tx, crate::ssh::detect::PROTO_SERVER), b"1.99");
        assert_eq!(
            ready(tx, crate::ssh::detect::SOFTWARE_SERVER),
            b"Cisco-1.25"
        );
        let string = ready(tx, crate::ssh::detect::HASSH_STRING);
        assert_eq!(
            string,
            b"curve25519-sha256,diffie-hellman-group1-sha1;aes128-ctr;hmac-sha2-256;none"
        );
        let hash = ready(tx, crate::ssh::detect::HASSH);
        let want: String = Md5::digest(&string)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(hash, want.as_bytes());
        assert!(tx.complete(Dir::ToServer));
        assert_eq!(tx.stage(Dir::ToServer), 3);
        // The server's KEXINIT has not come: not yet, then absent once it ended.
        assert_eq!(tx.buffer(crate::ssh::detect::HASSH_SERVER, 0), Buf::NotYet);
        s.eof(Dir::ToClient, &mut out);
        assert_eq!(
            s.tx.buffer(crate::ssh::detect::HASSH_SERVER, 0),
            Buf::Absent
        );
    }

    #[test]
    fn bad_input_is_flagged_not_followed() {
        let mut out = ParseOutput::default();
        let mut s = SshState::new();
        s.parse(Dir::ToServer, &[b'A'; MAX_BANNER_LEN + 1], &mut out);
        assert_eq!(out.anomalies, ["ssh.long_banner"]);
        assert!(s.tx.complete(Dir::ToServer));

        let mut out = ParseOutput::default();
        let mut s = SshState::new();
        s.parse(
            Dir::ToServer,
            b"SSH-2.0-x\r\n\xff\xff\xff\xff\x04\x14",
            &mut out,
        );
        assert_eq!(out.anomalies, ["ssh.invalid_record"]);

        // A KEXINIT whose name-lists run past its end.
        let mut out = ParseOutput::default();
        let mut s = SshState::new();
        let mut k = vec![MSG_KEXINIT];
        k.extend_from_slice(&[0; 16]);
        k.extend_from_slice(&1000u32.to_be_bytes());
        s.parse(Dir::ToServer, b"SSH-2.0-x\n", &mut out);
        s.parse(Dir::ToServer, &packet(&k), &mut out);
        assert_eq!(out.anomalies, ["ssh.invalid_record"]);
        assert_eq!(s.tx.buffer(crate::ssh::detect::HASSH, 0), Buf::NotYet);
    }
}
