//! SMB (SMB1, SMB2 and SMB3) over the NetBIOS session service (TCP 139) and direct TCP
//! (445), as Suricata 8 has it: detection by an NBSS header followed by an SMB magic
//! (`\xffSMB`, `\xfeSMB`, `\xfdSMB`) on any port, the messages of each record (SMB2
//! compound chains followed), requests paired with their responses into transactions,
//! the files read and written handed to the file layer, DCE/RPC calls over named pipes
//! parsed with the DCE/RPC module's PDU parser (so `dcerpc.iface`, `dcerpc.opnum` and
//! `dcerpc.stub_data` apply to SMB flows), the `smb.*` keywords and the EVE `smb`
//! record, with the NTLMSSP or Kerberos (`krb5::gssapi`) credentials of session setups.
//! SMB3 encrypted messages are skipped.

pub mod config;
pub mod dcerpc;
pub mod detect;
pub mod eve;
mod fsctl;
pub mod ntlmssp;
mod ntstatus;
pub mod parser;
pub mod state;

pub use state::{SmbState, SmbTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// The anomalies SMB raises (Suricata's `smb-events.rules` names).
pub static EVENTS: &[&str] = &[
    "smb.internal_error",
    "smb.malformed_data",
    "smb.malformed_ntlmssp_request",
    "smb.negotiate_malformed_dialects",
    "smb.file_overlap",
    "smb.response_to_server",
    "smb.request_to_client",
    "smb.read_request_too_large",
    "smb.read_response_too_large",
    "smb.write_request_too_large",
    "smb.negotiate_max_read_size_too_large",
    "smb.negotiate_max_write_size_too_large",
    "smb.write_queue_size_exceeded",
    "smb.write_queue_cnt_exceeded",
    "smb.read_queue_size_exceeded",
    "smb.read_queue_cnt_exceeded",
    "smb.too_many_transactions",
];

/// SMB.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Smb,
    name: "smb",
    aliases: &[],
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[445, 139],
    port_bound: false,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[AppProto::Dcerpc],
    family: None,
    buffers: detect::BUFFERS,
    frames: &[],
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "smb",
        render: eve::render,
        tx_id: true,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "smb",
        run: fuzz,
    }],
};

/// An NBSS message header followed by an SMB magic; keep-alives and session
/// requests/responses (port 139) ask for more.
pub fn probe(data: &[u8]) -> Probe {
    let mut rest = data;
    // Skip leading NBSS session-service records that carry no SMB (keep-alives,
    // session requests and their answers).
    for _ in 0..4 {
        let Some((ty, len)) = parser::nbss(rest) else {
            return Probe::NeedMore;
        };
        match ty {
            parser::NBSS_MESSAGE => {
                let body = &rest[parser::NBSS_HDR..];
                if body.len() < 4 {
                    return Probe::NeedMore;
                }
                return if parser::smb_magic(body).is_some() && len >= 4 {
                    Probe::Match
                } else {
                    Probe::NoMatch
                };
            }
            parser::NBSS_KEEPALIVE
            | parser::NBSS_REQUEST
            | parser::NBSS_POSITIVE
            | parser::NBSS_NEGATIVE
            | parser::NBSS_RETARGET => {
                if len > 0x1ffff || (ty == parser::NBSS_KEEPALIVE && len != 0) {
                    return Probe::NoMatch;
                }
                let n = parser::NBSS_HDR + len;
                if rest.len() < n {
                    return Probe::NeedMore;
                }
                rest = &rest[n..];
            }
            _ => return Probe::NoMatch,
        }
    }
    Probe::NoMatch
}

/// A flow whose first message is a response (SMB1 reply flag, SMB2 response flag)
/// was picked up in the middle: it is turned around.
fn is_reply(_: Transport, data: &[u8]) -> bool {
    let Some(m) = data.get(parser::NBSS_HDR..) else {
        return false;
    };
    match parser::smb_magic(m) {
        Some(0xff) => parser::Smb1Header::parse(m).is_some_and(|h| h.is_reply()),
        Some(0xfe) => parser::Smb2Header::parse(m).is_some_and(|h| h.is_response()),
        _ => false,
    }
}

/// Fuzz target: the state over arbitrary bytes in both directions, the header parsers
/// and NTLMSSP alone, and every probe.
pub fn fuzz(data: &[u8]) {
    let mut s = SmbState::new();
    s.set_files(crate::files::FileConfig {
        track: true,
        md5: true,
        ..crate::files::FileConfig::default()
    });
    crate::fuzz::drive(&mut s, data);
    let _ = parser::Smb1Header::parse(data);
    let _ = parser::Smb2Header::parse(data);
    let _ = ntlmssp::parse_blob(data);
    let _ = probe(data);
    crate::fuzz::probes(data);
}

impl Transaction for SmbTx {
    /// As Suricata's: an SMB transaction's anomalies alert from both directions.
    fn events_both_ways(&self) -> bool {
        true
    }

    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, dir: Dir) -> bool {
        self.done[dir.index()] || self.eof[dir.index()]
    }

    fn progress(&self, dir: Dir) -> u8 {
        let d = dir.index();
        (self.msgs[d] % 64) | u8::from(self.complete(dir)) << 7
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    /// The stub data of the DCE/RPC call carried over a named pipe.
    fn dce_little_endian(&self, id: BufferId) -> bool {
        self.dce().is_some_and(|d| d.dce_little_endian(id))
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Smb(Box::new(eve::record(self))))
    }

    fn files(&self, dir: Dir) -> &[crate::files::File] {
        self.files[dir.index()].as_slice()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}
