//! One FTP data connection: its command and file name (from the control channel), and
//! the file of its data, in the direction the data flows (the first direction that
//! carries any; bytes the other way are not a file).

use meerkat_proto::events::FtpData;

use crate::files::{FileConfig, FileState, Files};
use crate::{AppState, Dir, ParseOutput, Transaction};

/// Bytes of a transferred file kept for `file.data` (the rest is hashed, sized and
/// stored, not inspected).
pub const MAX_INSPECT_BYTES: usize = 256 * 1024;

/// The connection's one transaction.
#[derive(Debug, Default)]
pub struct FtpDataTx {
    /// The command that opened the connection (`RETR`), empty when unknown.
    pub command: &'static str,
    pub filename: Vec<u8>,
    /// The files, by direction (at most one).
    pub files: [Files; 2],
    /// The file's first bytes, for `file.data` (at most [`MAX_INSPECT_BYTES`]).
    pub data: Vec<u8>,
    /// The data's direction ended.
    pub done: bool,
}

impl FtpDataTx {
    /// The EVE `ftp_data` record: the file name only for a command that moves a file.
    pub fn record(&self) -> FtpData {
        FtpData {
            filename: if super::moves_file(self.command) {
                self.filename.clone()
            } else {
                Vec::new()
            },
            command: self.command.to_string(),
        }
    }
}

/// An FTP data connection.
#[derive(Debug, Default)]
pub struct FtpDataState {
    cfg: FileConfig,
    tx: FtpDataTx,
    /// The transaction was freed.
    freed: bool,
    /// The direction the data flows, once some came.
    data_dir: Option<Dir>,
    /// Each direction ended.
    ended: [bool; 2],
}

impl FtpDataState {
    pub fn new() -> FtpDataState {
        FtpDataState::default()
    }

    fn file_dir(&mut self, dir: Dir) -> bool {
        match self.data_dir {
            Some(d) => d == dir,
            None => {
                self.data_dir = Some(dir);
                let name = self.tx.filename.clone();
                if self.cfg.track && super::moves_file(self.tx.command) {
                    self.tx.files[dir.index()].open(&name, &self.cfg);
                }
                true
            }
        }
    }

    fn end(&mut self) {
        if self.tx.done {
            return;
        }
        self.tx.done = true;
        if let Some(d) = self.data_dir {
            self.tx.files[d.index()].end_current(FileState::Closed);
        }
    }
}

impl AppState for FtpDataState {
    fn parse(&mut self, dir: Dir, data: &[u8], _out: &mut ParseOutput) {
        if data.is_empty() || self.tx.done || !self.file_dir(dir) {
            return;
        }
        if let Some(f) = self.tx.files[dir.index()].current() {
            f.append(data);
            let room = MAX_INSPECT_BYTES.saturating_sub(self.tx.data.len());
            self.tx
                .data
                .extend_from_slice(&data[..data.len().min(room)]);
        }
    }

    fn gap(&mut self, dir: Dir, len: u64, _out: &mut ParseOutput) {
        if self.tx.done || !self.file_dir(dir) {
            return;
        }
        if let Some(f) = self.tx.files[dir.index()].current() {
            f.gap(len);
        }
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        // The transfer (and its file) ends with the connection, both sides closed, as
        // Suricata's does.
        self.ended[dir.index()] = true;
        if self.ended == [true; 2] {
            self.end();
        }
    }

    fn tx_count(&self) -> usize {
        usize::from(!self.freed)
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        (index == 0 && !self.freed).then_some(&self.tx as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        if id > 0 && !self.freed {
            self.freed = true;
            self.tx = FtpDataTx::default();
        }
    }

    fn set_files(&mut self, cfg: FileConfig) {
        self.cfg = cfg;
    }

    fn set_expected(&mut self, data: &[u8]) {
        if let Some((command, name)) = super::decode(data) {
            self.tx.command = command;
            let n = name.len().min(crate::files::MAX_FILE_NAME);
            // STOU without a name: the server picks it; Suricata calls the file this.
            self.tx.filename = if command == "STOU" && n == 0 {
                b"<stou>".to_vec()
            } else {
                name[..n].to_vec()
            };
        }
    }

    fn tx_files_mut(&mut self, index: usize, dir: Dir) -> Option<&mut Files> {
        (index == 0 && !self.freed).then(|| &mut self.tx.files[dir.index()])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tracked() -> FileConfig {
        FileConfig {
            track: true,
            ..FileConfig::default()
        }
    }

    #[test]
    fn a_retr_is_a_file_to_the_client() {
        let mut s = FtpDataState::new();
        s.set_files(tracked());
        s.set_expected(&super::super::encode("RETR", b"down.txt"));
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"hello ", &mut out);
        s.parse(Dir::ToServer, b"ignored", &mut out);
        s.parse(Dir::ToClient, b"world", &mut out);
        assert!(!s.tx.complete(Dir::ToServer));
        s.eof(Dir::ToClient, &mut out);
        assert!(!s.tx.done);
        s.eof(Dir::ToServer, &mut out);
        let tx = s.tx(0).unwrap();
        assert!(tx.complete(Dir::ToServer) && tx.complete(Dir::ToClient));
        let f = &tx.files(Dir::ToClient)[0];
        assert_eq!(
            (f.name(), f.size(), f.state()),
            (&b"down.txt"[..], 11, FileState::Closed)
        );
        assert!(tx.files(Dir::ToServer).is_empty());
        let r = s.tx.record();
        assert_eq!(
            (r.command.as_str(), &r.filename[..]),
            ("RETR", &b"down.txt"[..])
        );
        s.free_below(1);
        assert_eq!(s.tx_count(), 0);
    }

    #[test]
    fn a_listing_is_no_file() {
        let mut s = FtpDataState::new();
        s.set_files(tracked());
        s.set_expected(&super::super::encode("LIST", b"-la"));
        let mut out = ParseOutput::default();
        s.parse(Dir::ToClient, b"-rw-r--r-- 1 0 0 42 a.txt\r\n", &mut out);
        s.eof(Dir::ToClient, &mut out);
        s.eof(Dir::ToServer, &mut out);
        assert!(s.tx.files[1].as_slice().is_empty());
        let r = s.tx.record();
        assert_eq!((r.command.as_str(), r.filename.is_empty()), ("LIST", true));
    }
}
