//! FTP data connections (`ftp-data`): a TCP connection that an FTP control channel
//! announced (PORT / EPRT / PASV / EPSV, then the command that uses it: `RETR`, `STOR`,
//! `APPE`, `STOU`, `LIST`, `NLST`, `MLSD`), recognised as Suricata recognises it: when
//! its first data is no other protocol's and an expectation of the control channel
//! matches it (the same two hosts, the announced port). Nothing in its bytes says what
//! it is, so it has no probe: the worker gives the parser what the control channel said
//! ([`crate::AppState::set_expected`], encoded by [`encode`]).
//!
//! One transaction per connection: the command and, for the commands that move a
//! file, the file (named as the command named it, in the direction the data flows) in
//! the file layer (`file.data`, `file.name`, `filemagic`, EVE `fileinfo`, the file
//! store); `ftpdata_command`; the EVE `ftp_data` record once the connection ends.
//!
//! # Across workers
//!
//! The control connection and its data connection are different flows, and capture
//! spreads flows over the detect workers by a hash of their endpoints: they usually
//! land in different worker processes, which run concurrently (reading a capture file,
//! one may be far ahead of another). The control flow's worker writes each expectation
//! into a table in shared memory (`meerkat_shm::expect`) with the number of the packet
//! that made it; the worker of a TCP flow whose first data no probe recognised first
//! waits until every other worker has processed all packets before its own
//! (`meerkat_shm::order`: capture says how far it has handed packets out, each worker
//! how far it has processed them), then takes the oldest expectation made before that
//! packet for the flow's host pair and responder port. The outcome is the one a single
//! thread reading the capture in order would have (Suricata's `--runmode=single`),
//! whatever the number of workers and however they run. Traffic that some probe
//! recognises (nearly all of it), UDP and runs with one worker never wait; a flow that
//! is no protocol's waits only while another worker is behind it in the capture.

pub mod detect;
pub mod state;

pub use state::{FtpDataState, FtpDataTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// FTP data connections.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::FtpData,
    name: "ftp-data",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[],
    // Never recognised by its bytes or its ports: only by an expectation.
    port_bound: true,
    probe,
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(new_state),
    inner: &[],
    buffers: detect::BUFFERS,
    keywords: detect::KEYWORDS,
    frames: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "ftp_data",
        render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "ftp_data",
        run: fuzz,
    }],
};

/// Suricata's ftp-data parser raises no events.
pub const EVENTS: &[&str] = &[];

fn new_state(_t: Transport) -> Box<dyn AppState> {
    Box::new(FtpDataState::new())
}

/// Never by content.
fn probe(_t: Transport, _d: Dir, _data: &[u8]) -> Probe {
    Probe::NoMatch
}

fn render(r: &AppRecord, o: &mut meerkat_eve::Obj<'_>) {
    if let AppRecord::FtpData(f) = r {
        crate::ftp::eve::ftp_data(o, f);
    }
}

/// The commands that open a data connection, as Suricata names them (EVE `command`);
/// `ftpdata_command` takes them in lower case.
pub const COMMANDS: &[&str] = &["RETR", "STOR", "APPE", "STOU", "LIST", "NLST", "MLSD"];

/// Whether the command moves a file (the others move a listing).
pub fn moves_file(command: &str) -> bool {
    matches!(command, "RETR" | "STOR" | "APPE" | "STOU")
}

/// What the control channel tells the data connection's parser: the command's index
/// in [`COMMANDS`], then the file name.
pub fn encode(command: &str, filename: &[u8]) -> Vec<u8> {
    let i = COMMANDS.iter().position(|c| *c == command).unwrap_or(0);
    let mut v = Vec::with_capacity(1 + filename.len());
    v.push(i as u8);
    v.extend_from_slice(filename);
    v
}

/// The command and file name of [`encode`]'s bytes (`None` for bytes it did not make).
pub fn decode(data: &[u8]) -> Option<(&'static str, &[u8])> {
    let (&i, name) = data.split_first()?;
    Some((COMMANDS.get(usize::from(i))?, name))
}

/// Fuzz target: a data connection told the expectation bytes that follow the first
/// byte (as many as it says, up to 32), then driven with the rest.
pub fn fuzz(data: &[u8]) {
    let mut s = FtpDataState::new();
    s.set_files(crate::files::FileConfig {
        track: true,
        md5: true,
        magic: true,
        ..crate::files::FileConfig::default()
    });
    let Some((&n, rest)) = data.split_first() else {
        return;
    };
    let (expected, rest) = rest.split_at(usize::from(n % 33).min(rest.len()));
    s.set_expected(expected);
    crate::fuzz::drive(&mut s, rest);
}

impl Transaction for FtpDataTx {
    fn id(&self) -> u64 {
        0
    }

    /// Both directions end together: when the connection has closed.
    fn complete(&self, _dir: Dir) -> bool {
        self.done
    }

    fn progress(&self, _dir: Dir) -> u8 {
        u8::from(self.done)
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::FtpData(self.record()))
    }

    fn files(&self, dir: Dir) -> &[crate::files::File] {
        self.files[dir.index()].as_slice()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expectation_bytes_round_trip() {
        assert_eq!(
            decode(&encode("STOR", b"a.bin")),
            Some(("STOR", &b"a.bin"[..]))
        );
        assert_eq!(decode(&encode("NLST", b"")), Some(("NLST", &b""[..])));
        assert_eq!(decode(&[200, b'x']), None);
        assert_eq!(decode(b""), None);
        assert_eq!(
            probe(Transport::Tcp, Dir::ToServer, b"RETR"),
            Probe::NoMatch
        );
    }
}
