//! TFTP (RFC 1350) over UDP, port 69, as Suricata 8 has it: a flow to the port is TFTP
//! (a datagram starting with a zero byte), each read or write request (RRQ, WRQ) is a
//! transaction logged as EVE `tftp` (`packet`, `file`, `mode`). Suricata 8 follows no
//! transfer (the data comes from another port: another flow, which stays unknown) and
//! makes no files, keywords or events of it: neither does Meerkat.

use meerkat_eve::Obj;
use meerkat_proto::events::Tftp;

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{
    AppProto, AppRecord, AppState, Buf, BufferId, Dir, ParseOutput, Probe, Transaction, Transport,
};

/// TFTP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Tftp,
    name: "tftp",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::UDP,
    default_ports: &[69],
    port_bound: true,
    probe,
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(TftpState::default())),
    inner: &[],
    buffers: &[],
    keywords: &[],
    frames: &[],
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "tftp",
        render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "tftp",
        run: fuzz,
    }],
};

/// Requests per flow kept at most (a flow is one request, normally).
pub const MAX_TX: usize = 64;
/// Longest file name or mode kept (bytes); longer ones are cut.
pub const MAX_FIELD: usize = 512;

/// On its port, a datagram whose opcode's high byte is zero.
pub fn probe(_t: Transport, _dir: Dir, data: &[u8]) -> Probe {
    match data {
        [0, _, _, _, ..] => Probe::Match,
        _ => Probe::NoMatch,
    }
}

/// A read or write request: (`read`/`write`, file name, mode); `None` for any other
/// datagram or a malformed one.
pub fn request(data: &[u8]) -> Option<(&'static str, &[u8], &[u8])> {
    let (op, rest) = data.split_first_chunk::<2>()?;
    let packet = match u16::from_be_bytes(*op) {
        1 => "read",
        2 => "write",
        _ => return None,
    };
    let mut fields = rest.splitn(3, |&b| b == 0);
    let file = fields.next()?;
    let mode = fields.next()?;
    // Both fields end with their zero byte.
    fields.next()?;
    Some((packet, file, mode))
}

fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut TftpState::default(), data);
    let _ = request(data);
    crate::fuzz::probes(data);
}

fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Tftp(t) = r {
        o.obj("tftp", |x| {
            x.str("packet", &t.packet);
            x.bytes("file", &t.file);
            x.bytes("mode", &t.mode);
        });
    }
}

/// One request.
#[derive(Debug, Clone, Default)]
pub struct TftpTx {
    pub id: u64,
    pub packet: &'static str,
    pub file: Vec<u8>,
    pub mode: Vec<u8>,
}

impl Transaction for TftpTx {
    fn id(&self) -> u64 {
        self.id
    }
    fn complete(&self, _dir: Dir) -> bool {
        true
    }
    fn inspects(&self, dir: Dir) -> bool {
        dir == Dir::ToServer
    }
    fn progress(&self, _dir: Dir) -> u8 {
        1
    }
    fn buffer(&self, _id: BufferId, _index: usize) -> Buf<'_> {
        Buf::Absent
    }
    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Tftp(Tftp {
            packet: self.packet.to_string(),
            file: self.file.clone(),
            mode: self.mode.clone(),
        }))
    }
}

/// A TFTP flow: its requests.
#[derive(Debug, Default)]
pub struct TftpState {
    txs: std::collections::VecDeque<TftpTx>,
    next_id: u64,
}

impl AppState for TftpState {
    fn parse(&mut self, dir: Dir, data: &[u8], _out: &mut ParseOutput) {
        if dir != Dir::ToServer || self.txs.len() >= MAX_TX {
            return;
        }
        let Some((packet, file, mode)) = request(data) else {
            return;
        };
        let cut = |b: &[u8]| b[..b.len().min(MAX_FIELD)].to_vec();
        self.txs.push_back(TftpTx {
            id: self.next_id,
            packet,
            file: cut(file),
            mode: cut(mode),
        });
        self.next_id += 1;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests() {
        // RRQ "boot.img" octet.
        let rrq = b"\x00\x01boot.img\x00octet\x00";
        assert_eq!(
            request(rrq),
            Some(("read", &b"boot.img"[..], &b"octet"[..]))
        );
        // WRQ with an option after the mode.
        let wrq = b"\x00\x02up.txt\x00netascii\x00blksize\x001428\x00";
        assert_eq!(
            request(wrq),
            Some(("write", &b"up.txt"[..], &b"netascii"[..]))
        );
        // DATA, a request without its terminators, junk.
        assert_eq!(request(b"\x00\x03\x00\x01AAAA"), None);
        assert_eq!(request(b"\x00\x01x\x00octet"), None);
        assert_eq!(
            probe(Transport::Udp, Dir::ToServer, b"\x00\x09junk"),
            Probe::Match
        );
        assert_eq!(
            probe(Transport::Udp, Dir::ToServer, b"GET "),
            Probe::NoMatch
        );
        let mut s = TftpState::default();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, rrq, &mut out);
        s.parse(Dir::ToServer, b"\x00\x09junk", &mut out);
        assert_eq!(s.tx_count(), 1);
        let mut b = Vec::new();
        let mut o = Obj::new(&mut b);
        render(&s.tx(0).unwrap().record().unwrap(), &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(b).unwrap(),
            r#"{"tftp":{"packet":"read","file":"boot.img","mode":"octet"}}"#
        );
    }
}
