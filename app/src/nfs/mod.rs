//! NFS over ONC-RPC (RFC 5531; NFSv2 RFC 1094, NFSv3 RFC 1813, NFSv4 RFC 7530) on
//! TCP and UDP port 2049, as Suricata 8 parses, detects and logs it: calls paired with
//! their replies by xid, a transaction per call but for file transfers (the READs or
//! WRITEs of one file are one transaction, which feeds the file layer), the file names
//! learnt from LOOKUP/CREATE/READDIRPLUS/OPEN replies, `nfs_procedure` and
//! `nfs.version`, the EVE `nfs` record with its `rpc` object, app-layer events, and
//! Suricata's NFS frames (`nfs.rpc.pdu`, `nfs.nfs.pdu`, `nfs.nfs4.ops`, ...).

pub mod config;
pub mod detect;
pub mod eve;
pub mod parser;
pub mod rpc;
pub mod state;

pub use state::{FrameTx, NfsConfig, NfsState, NfsTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Transaction, Transport};

/// NFS.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Nfs,
    name: "nfs",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::BOTH,
    // Suricata probes NFS on port 2049 only.
    default_ports: &[2049],
    port_bound: true,
    probe: state::probe,
    probe_on_port: None,
    is_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "nfs",
        render: eve::render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[
        FuzzTarget {
            name: "nfs",
            run: fuzz_tcp,
        },
        FuzzTarget {
            name: "nfs_udp",
            run: fuzz_udp,
        },
    ],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "nfs.malformed_data",
    "nfs.non_existing_version",
    "nfs.unsupported_version",
    "nfs.too_many_transactions",
];

/// A reply: its message type says so.
fn is_reply(t: Transport, data: &[u8]) -> bool {
    let at = if t == Transport::Tcp { 8 } else { 4 };
    data.get(at..at + 4) == Some(&[0, 0, 0, 1])
}

fn fuzz_with(t: Transport, data: &[u8]) {
    let mut s = NfsState::new(NfsConfig { max_tx: 8 }, t);
    crate::AppState::set_files(
        &mut s,
        crate::files::FileConfig {
            track: true,
            md5: true,
            ..Default::default()
        },
    );
    let all: Vec<BufferId> = detect::FRAMES
        .iter()
        .flat_map(|f| [f.to_server, f.to_client])
        .flatten()
        .collect();
    crate::fuzz::drive(&mut s, data);
    for tx in s.transactions() {
        let _ = tx.record();
    }
    for h in s.frame_holders() {
        for &id in &all {
            let _ = (h.buffer(id, 0), Transaction::frame(h, id, 0));
        }
    }
    crate::fuzz::probes(data);
}

/// Fuzz target: the TCP parser (records, streaming file data, gaps) over arbitrary
/// bytes, and every probe.
pub fn fuzz_tcp(data: &[u8]) {
    fuzz_with(Transport::Tcp, data);
    let mut ops = Vec::new();
    let _ = parser::compound4(data, &mut ops);
    let mut res = Vec::new();
    let _ = parser::compound4_reply(data, &mut res);
}

/// Fuzz target: the UDP parser, each piece a datagram.
pub fn fuzz_udp(data: &[u8]) {
    fuzz_with(Transport::Udp, data);
    let _ = rpc::udp_call(data);
    let _ = rpc::udp_reply(data);
}

impl Transaction for NfsTx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        self.done(dir)
    }

    fn progress(&self, dir: Dir) -> u8 {
        (self.updates % 64) as u8 | u8::from(self.done(dir)) << 7
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Nfs(eve::record(self)))
    }

    /// Suricata logs a transaction once both sides are done, or its TCP flow ended;
    /// GETATTR is never logged (its logger filters it), nor a UDP transaction left
    /// unfinished.
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        if dir == Dir::ToServer || self.procedure == parser::proc3::GETATTR {
            return None;
        }
        if self.udp && !(self.request_done && self.response_done) {
            return None;
        }
        self.record()
    }

    fn files(&self, dir: Dir) -> &[crate::files::File] {
        match &self.file {
            Some(f) if f.dir == Some(dir) => f.files.as_slice(),
            _ => &[],
        }
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// The frames of one RPC record, attached to no transaction.
impl Transaction for FrameTx {
    fn id(&self) -> u64 {
        state::FRAME_TX_BASE + self.seq
    }

    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::frame_buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        None
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        detect::frame_meta(self, id, index)
    }

    fn frames_only(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
