//! One SMB flow: each direction's NBSS records reassembled from the stream, the SMB1 and
//! SMB2/3 messages in them (SMB2 compound chains followed), and the transactions as
//! Suricata makes them: a request and its response paired by message id (SMB2) or by
//! multiplex and process id (SMB1); one transaction per file handle for the data read
//! or written (its file goes to the file layer); a named pipe's DCE/RPC call in the
//! transaction of the WRITE (or IOCTL, or TRANS) that carried its request.

use std::collections::{HashMap, VecDeque};

use super::dcerpc::{Pipes, Sent};
use super::ntlmssp::{self, Auth};
use super::parser::{
    self as p, NBSS_HDR, Rd, SMB2_HDR, Smb1Header, Smb2Header, smb1, smb1_params, smb1_string,
    smb2, utf16,
};
use crate::dcerpc::state::DcerpcTx;
use crate::files::{FileConfig, Files};
use crate::{AppState, Dir, ParseOutput, ReleaseEmpty, Transaction};

/// Longest NBSS record buffered (bytes); a longer one is skipped (its messages are not
/// parsed) and raises `smb.malformed_data`... unless it is a WRITE or READ whose data
/// streams into a file, which Suricata also bounds by `max-write-size`.
pub const MAX_RECORD: usize = 16 << 20;
/// Live transactions per flow at most (Suricata's `max-tx`, 1024); past it the oldest
/// open one is finished and `smb.too_many_transactions` raised.
pub const MAX_TX: usize = 1024;
/// SMB2 messages one compound chain is followed for at most.
pub const MAX_CHAIN: usize = 32;
/// Dialects a NEGOTIATE lists that are kept.
pub const MAX_DIALECTS: usize = 64;
/// Bytes of a file kept for `file.data` inspection.
pub const MAX_FILE_DATA: usize = 1 << 20;
/// Characters of a name (share, file) kept.
pub const MAX_NAME: usize = 1024;
/// File handles (SMB2 file ids, SMB1 fids) whose names a flow remembers at most.
pub const MAX_HANDLES: usize = 4096;
/// Recent transactions a new request looks back at for unanswered tree connects.
pub const MAX_OVERTAKE: usize = 8;
/// Bytes skipped at most while looking for a record after a gap.
pub const MAX_RESYNC_SCAN: usize = 1 << 20;

/// FSCTL_PIPE_TRANSCEIVE (MS-FSCC §2.3.49): a DCE/RPC call through IOCTL.
const FSCTL_PIPE_TRANSCEIVE: u32 = 0x0011_c017;
/// CREATE option FILE_DIRECTORY_FILE ([MS-SMB2] 2.2.13).
const FILE_DIRECTORY_FILE: u32 = 0x0000_0001;
const STATUS_PENDING: u32 = 0x0000_0103;
const FILE_DELETE_ON_CLOSE: u32 = 0x0000_1000;

/// What a handle is: a file of a share, or a named pipe.
#[derive(Debug, Clone, Default)]
pub struct Handle {
    pub name: String,
    pub share: String,
    pub pipe: bool,
    /// Its tree connect was seen (else `pipe` is a guess left to the data).
    pub known: bool,
}

/// The session setup details of a transaction.
#[derive(Debug, Clone, Default)]
pub struct Setup {
    pub ntlmssp: Option<Auth>,
    /// The Kerberos ticket a client authenticated with (SPNEGO or bare GSS-API).
    pub kerberos: Option<crate::krb5::gssapi::Ticket>,
    pub req_native: Option<(String, String)>,
    pub resp_native: Option<(String, String)>,
}

/// A CREATE's (NT_CREATE_ANDX's) details.
#[derive(Debug, Clone, Default)]
pub struct Create {
    pub filename: String,
    pub disposition: u32,
    pub delete_on_close: bool,
    /// FILE_DIRECTORY_FILE: the name is logged as `directory`.
    pub directory: bool,
    /// From the response: created, accessed, modified, changed (Unix seconds), size.
    pub times: [u64; 5],
    pub fuid: String,
}

/// A tree connect's details.
#[derive(Debug, Clone, Default)]
pub struct Tree {
    pub share: String,
    /// The response said it is a pipe (IPC$).
    pub pipe: bool,
    /// SMB2's share type from the response (`FILE`, `PIPE`, `PRINT`).
    pub share_type: Option<&'static str>,
    /// SMB1's service strings.
    pub service_req: Option<String>,
    pub service_resp: Option<String>,
    /// The client sent another request before the response came.
    pub overtaken: bool,
}

/// The negotiation details.
#[derive(Debug, Clone, Default)]
pub struct Negotiate {
    pub client_dialects: Vec<String>,
    pub client_guid: Option<String>,
    pub server_guid: Option<String>,
    pub max_read: Option<u32>,
    pub max_write: Option<u32>,
}

/// What a transaction is about.
#[derive(Debug, Clone, Default)]
pub enum Kind {
    #[default]
    Plain,
    Negotiate(Box<Negotiate>),
    Setup(Box<Setup>),
    Tree(Box<Tree>),
    Create(Box<Create>),
    /// A file's data (read or written through one handle).
    File {
        filename: String,
        share: String,
        fuid: String,
    },
    Dcerpc(Box<DcerpcTx>),
    /// An SMB2 IOCTL that is not a DCE/RPC call: its control code.
    Ioctl(u32),
    /// An SMB2 SET_INFO renaming a file.
    Rename(Box<Rename>),
    /// An SMB2 SET_INFO setting (or clearing) a file's delete-on-close.
    SetInfo(Box<SetInfo>),
}

/// A rename: the handle's name (`<unknown>` when its CREATE was not seen), the new one.
#[derive(Debug, Clone, Default)]
pub struct Rename {
    pub from: String,
    pub to: String,
    pub fuid: String,
}

/// A delete-on-close change (FileDispositionInformation).
#[derive(Debug, Clone, Default)]
pub struct SetInfo {
    pub filename: String,
    pub delete_on_close: bool,
    pub fuid: String,
}

/// One transaction.
#[derive(Debug, Default)]
pub struct SmbTx {
    pub id: u64,
    /// SMB 1 or 2 (3 is 2's header).
    pub version: u8,
    pub command: u16,
    /// Pairing key: SMB2 message id, or SMB1 (mid, pid).
    pub key: u64,
    pub status: Option<(String, String)>,
    pub session_id: u64,
    pub tree_id: u64,
    pub kind: Kind,
    /// The flow's dialect when the transaction ended.
    pub dialect: String,
    /// Request and response sides done (a file transaction's both at its close).
    pub done: [bool; 2],
    pub eof: [bool; 2],
    /// Grows with each message that touched a direction.
    pub msgs: [u8; 2],
    /// The file of a file transaction, in its direction (writes: to the server).
    pub files: [Files; 2],
    /// The file's first bytes, for `file.data`.
    pub file_data: Vec<u8>,
    pub file_dir: Option<Dir>,
    /// The next offset expected in the file (for overlaps).
    pub file_next: u64,
}

impl SmbTx {
    pub fn dce(&self) -> Option<&DcerpcTx> {
        match &self.kind {
            Kind::Dcerpc(d) => Some(d),
            _ => None,
        }
    }
    pub(super) fn dce_mut(&mut self) -> Option<&mut DcerpcTx> {
        match &mut self.kind {
            Kind::Dcerpc(d) => Some(d),
            _ => None,
        }
    }
    pub fn is_file(&self) -> bool {
        matches!(self.kind, Kind::File { .. })
    }
}

/// Per direction reassembly.
#[derive(Debug, Default)]
struct DirBuf {
    buf: Vec<u8>,
    /// After a gap: bytes are skipped up to something like a record.
    resync: bool,
}

/// One flow's SMB state.
#[derive(Debug, Default)]
pub struct SmbState {
    dirs: [DirBuf; 2],
    txs: VecDeque<SmbTx>,
    next_id: u64,
    files_cfg: FileConfig,
    pub dialect: String,
    /// SMB1: the dialects of the last NEGOTIATE request.
    smb1_dialects: Vec<String>,
    /// Handles by file id (SMB2: the 16 bytes; SMB1: the fid), and the shares by tree id.
    handles: HashMap<Vec<u8>, Handle>,
    trees: HashMap<(u64, u32), (String, bool)>,
    /// SMB2 CREATE requests waiting for their response: message id -> (name, tree).
    pipes: Pipes,
    sent: Vec<Sent>,
    /// SMB1 READ_ANDX / SMB2 READ requests: key -> handle id.
    reads: HashMap<u64, Vec<u8>>,
    /// Writes to files waiting for their response: key (the SMB version in the top
    /// bit) -> handle id, so the answer counts in the file transaction's progress.
    writes: HashMap<u64, Vec<u8>>,
}

fn smb1_key(h: &Smb1Header) -> u64 {
    u64::from(h.mid) | u64::from(h.pid) << 16 | u64::from(h.command) << 48
}

fn utf16_name(b: &[u8]) -> String {
    let mut s = utf16(b);
    s.truncate(MAX_NAME);
    s
}

impl SmbState {
    pub fn new() -> SmbState {
        SmbState::default()
    }

    /// A new request came: unanswered tree connects before it are overtaken (and
    /// inspected again toward the server).
    fn overtake(&mut self) {
        for t in self.txs.iter_mut().rev().take(MAX_OVERTAKE) {
            if let Kind::Tree(tr) = &mut t.kind
                && !t.done[1]
                && !tr.overtaken
            {
                tr.overtaken = true;
                t.msgs[0] = t.msgs[0].wrapping_add(1);
            }
        }
    }

    fn overtake_before(&mut self, i: usize) {
        // The new transaction itself is not overtaken.
        let n = self.txs.len();
        if i + 1 == n {
            let last = self.txs.pop_back();
            self.overtake();
            if let Some(t) = last {
                self.txs.push_back(t);
            }
        }
    }

    fn new_tx(&mut self, version: u8, command: u16, key: u64, out: &mut ParseOutput) -> usize {
        if self.txs.len() >= MAX_TX {
            out.anomaly("smb.too_many_transactions");
            if let Some(old) = self.txs.iter_mut().find(|t| !(t.done[0] && t.done[1])) {
                old.done = [true; 2];
                for f in &mut old.files {
                    f.end_current(crate::files::FileState::Truncated);
                }
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        self.txs.push_back(SmbTx {
            id,
            version,
            command,
            key,
            dialect: self.dialect.clone(),
            ..SmbTx::default()
        });
        self.txs.len() - 1
    }

    /// The open transaction a response answers.
    fn find(&self, version: u8, command: u16, key: u64) -> Option<usize> {
        self.txs.iter().position(|t| {
            t.version == version
                && t.key == key
                && t.command == command
                && !t.done[1]
                && !t.is_file()
        })
    }

    fn finish(&mut self, i: usize) {
        let dialect = self.dialect.clone();
        if let Some(t) = self.txs.get_mut(i) {
            t.done = [true; 2];
            t.msgs[1] = t.msgs[1].wrapping_add(1);
            if matches!(t.kind, Kind::Tree(_)) {
                // Its request buffers are known now.
                t.msgs[0] = t.msgs[0].wrapping_add(1);
            }
            t.dialect = dialect;
        }
    }

    /// The file transaction of handle `fid` in direction `dir`, made if needed.
    fn file_tx(
        &mut self,
        version: u8,
        command: u16,
        fid: &[u8],
        dir: Dir,
        out: &mut ParseOutput,
    ) -> usize {
        let fuid = fuid_of(version, fid);
        if let Some(i) = self.txs.iter().position(|t| {
            matches!(&t.kind, Kind::File { fuid: f, .. } if *f == fuid)
                && t.file_dir == Some(dir)
                && !t.done[0]
        }) {
            return i;
        }
        let h = self.handles.get(fid).cloned().unwrap_or_default();
        let i = self.new_tx(version, command, u64::MAX, out);
        let cfg = self.files_cfg;
        let t = &mut self.txs[i];
        t.kind = Kind::File {
            filename: h.name.clone(),
            // Suricata names the share of SMB1 files and of SMB2 files read.
            share: if version == 1 || dir == Dir::ToClient {
                h.share.clone()
            } else {
                String::new()
            },
            fuid,
        };
        t.file_dir = Some(dir);
        if cfg.track {
            t.files[dir.index()].open(h.name.as_bytes(), &cfg);
        }
        i
    }

    /// File data at `offset` of handle `fid`.
    #[allow(clippy::too_many_arguments)]
    fn file_data(
        &mut self,
        version: u8,
        command: u16,
        fid: &[u8],
        dir: Dir,
        offset: u64,
        data: &[u8],
        out: &mut ParseOutput,
    ) {
        let i = self.file_tx(version, command, fid, dir, out);
        let t = &mut self.txs[i];
        let d = dir.index();
        t.msgs[d] = t.msgs[d].wrapping_add(1);
        let mut data = data;
        if offset < t.file_next {
            // Bytes already seen: Suricata raises `file_overlap` and keeps the first.
            out.anomaly("smb.file_overlap");
            let skip = usize::try_from(t.file_next - offset).unwrap_or(usize::MAX);
            data = data.get(skip..).unwrap_or(&[]);
        } else if offset > t.file_next {
            let gap = offset - t.file_next;
            if let Some(f) = t.files[d].current() {
                f.gap(gap);
            }
            t.file_next = offset;
        }
        t.file_next += data.len() as u64;
        let room = MAX_FILE_DATA.saturating_sub(t.file_data.len());
        t.file_data.extend_from_slice(&data[..data.len().min(room)]);
        if let Some(f) = t.files[d].current() {
            f.append(data);
        }
    }

    /// Handle `fid` was closed: its file transactions end.
    fn close_handle(&mut self, version: u8, fid: &[u8]) {
        let fuid = fuid_of(version, fid);
        let dialect = self.dialect.clone();
        for t in &mut self.txs {
            if matches!(&t.kind, Kind::File { fuid: f, .. } if *f == fuid) && !t.done[0] {
                t.done = [true; 2];
                t.msgs = [t.msgs[0].wrapping_add(1), t.msgs[1].wrapping_add(1)];
                t.dialect.clone_from(&dialect);
                for f in &mut t.files {
                    if let Some(f) = f.current() {
                        f.close();
                    }
                }
            }
        }
    }

    fn write_sent(&mut self, key: u64, fid: &[u8]) {
        if self.writes.len() < MAX_HANDLES {
            self.writes.insert(key, fid.to_vec());
        }
    }

    /// A file write's response: the server's side of the file transaction moved.
    fn write_answered(&mut self, version: u8, key: u64, status: u32) {
        let Some(fid) = self.writes.remove(&key) else {
            return;
        };
        let fuid = fuid_of(version, &fid);
        if let Some(t) = self.txs.iter_mut().rev().find(|t| {
            matches!(&t.kind, Kind::File { fuid: f, .. } if *f == fuid)
                && t.file_dir == Some(Dir::ToServer)
        }) {
            t.msgs[1] = t.msgs[1].wrapping_add(1);
            // Suricata gives an SMB2 file transaction the status of its writes.
            if version == 2 {
                t.status = Some(p::nt_status(status));
            }
        }
    }

    /// Data written to a pipe: a DCE/RPC call's request.
    fn pipe_write(&mut self, i: usize, data: &[u8], out: &mut ParseOutput) {
        let mut sent = std::mem::take(&mut self.sent);
        sent.clear();
        if !self.pipes.client(data, &mut sent) {
            out.anomaly("smb.malformed_data");
        }
        for s in sent.drain(..) {
            match s {
                Sent::New(d) => {
                    if let Some(t) = self.txs.get_mut(i) {
                        t.kind = Kind::Dcerpc(Box::new(d));
                    }
                }
                Sent::More {
                    call_id,
                    stub,
                    last,
                } => {
                    if let Some(d) = self
                        .txs
                        .iter_mut()
                        .filter_map(SmbTx::dce_mut)
                        .find(|d| d.call_id == call_id && !d.done[0])
                    {
                        d.frags[0] = d.frags[0].saturating_add(1);
                        let room = super::dcerpc::MAX_STUB.saturating_sub(d.stub[0].len());
                        d.stub[0].extend_from_slice(&stub[..stub.len().min(room)]);
                        d.done[0] |= last;
                    }
                }
            }
        }
        self.sent = sent;
    }

    /// Data read from a pipe: a DCE/RPC call's response.
    fn pipe_read(&mut self, data: &[u8], out: &mut ParseOutput) -> Option<u32> {
        let mut answered = None;
        let ok = self.pipes.server(data, &mut self.txs, &mut answered);
        if !ok {
            out.anomaly("smb.malformed_data");
        }
        if let Some(call_id) = answered {
            let dialect = self.dialect.clone();
            for t in self.txs.iter_mut() {
                if t.dce().is_some_and(|d| d.call_id == call_id && d.done[1]) && !t.done[1] {
                    t.done[1] = true;
                    t.msgs[1] = t.msgs[1].wrapping_add(1);
                    t.dialect.clone_from(&dialect);
                }
            }
        }
        answered
    }

    /// The name a handle was opened with, as Suricata logs it for a SET_INFO.
    fn handle_name(&self, fid: &[u8]) -> String {
        self.handles
            .get(fid)
            .map_or_else(|| "<unknown>".to_string(), |h| h.name.clone())
    }

    /// Whether data through handle `fid` of tree `tree` goes to a named pipe: as the
    /// handle's CREATE or the tree connect said, or (both unseen: picked up midstream)
    /// when the data looks like DCE/RPC, as Suricata guesses.
    fn is_pipe(&self, fid: &[u8], tree: Option<(u64, u32)>, data: &[u8]) -> bool {
        if let Some(h) = self.handles.get(fid).filter(|h| h.known) {
            return h.pipe;
        }
        if let Some(t) = tree.and_then(|t| self.trees.get(&t)) {
            return t.1;
        }
        crate::dcerpc::probe(data) == crate::Probe::Match
    }

    /// One NBSS message record's payload.
    fn record(&mut self, dir: Dir, msg: &[u8], out: &mut ParseOutput) {
        match p::smb_magic(msg) {
            Some(0xfe) => self.smb2_chain(dir, msg, out),
            Some(0xff) => self.smb1(dir, msg, out),
            // SMB3 encrypted: recorded by nobody (Suricata logs nothing either).
            Some(_) => {}
            None => out.anomaly("smb.malformed_data"),
        }
    }

    fn smb2_chain(&mut self, dir: Dir, msg: &[u8], out: &mut ParseOutput) {
        let mut rest = msg;
        for _ in 0..MAX_CHAIN {
            let Some(h) = Smb2Header::parse(rest) else {
                out.anomaly("smb.malformed_data");
                return;
            };
            let next = h.next_command as usize;
            let this = if next >= SMB2_HDR && next <= rest.len() {
                &rest[..next]
            } else {
                rest
            };
            self.smb2(dir, &h, this, out);
            if next < SMB2_HDR || next > rest.len() || p::smb_magic(&rest[next..]) != Some(0xfe) {
                return;
            }
            rest = &rest[next..];
        }
    }

    fn smb2(&mut self, dir: Dir, h: &Smb2Header, m: &[u8], out: &mut ParseOutput) {
        let resp = h.is_response();
        if resp != (dir == Dir::ToClient) {
            out.anomaly(if resp {
                "smb.response_to_server"
            } else {
                "smb.request_to_client"
            });
            return;
        }
        if resp {
            if h.status == STATUS_PENDING {
                return;
            }
            self.smb2_response(h, m, out);
        } else {
            self.smb2_request(h, m, out);
        }
    }

    fn smb2_request(&mut self, h: &Smb2Header, m: &[u8], out: &mut ParseOutput) {
        let mut r = Rd::at(m, SMB2_HDR);
        let tree = (h.session_id, h.tree_id);
        match h.command {
            smb2::NEGOTIATE => {
                let i = self.new_tx(2, h.command, h.message_id, out);
                let mut n = Negotiate::default();
                if let Some((cnt, guid)) = (|| {
                    r.skip(2)?;
                    let cnt = usize::from(r.u16()?);
                    r.skip(8)?;
                    let guid = r.take(16)?;
                    r.skip(8)?;
                    Some((cnt, guid))
                })() {
                    n.client_guid = Some(p::guid_string(guid));
                    for _ in 0..cnt.min(MAX_DIALECTS) {
                        match r.u16() {
                            Some(d) => n.client_dialects.push(p::dialect_name(d)),
                            None => {
                                out.anomaly("smb.negotiate_malformed_dialects");
                                break;
                            }
                        }
                    }
                }
                self.txs[i].kind = Kind::Negotiate(Box::new(n));
                self.touch_req(i, h);
            }
            smb2::SESSION_SETUP => {
                let i = self.new_tx(2, h.command, h.message_id, out);
                let mut s = Setup::default();
                if let Some((off, len)) = (|| {
                    r.skip(12)?;
                    Some((usize::from(r.u16()?), usize::from(r.u16()?)))
                })() && let Some(blob) = p::slice(m, off, len)
                {
                    match ntlmssp::parse_blob(blob) {
                        Some(Ok(a)) => s.ntlmssp = Some(a),
                        Some(Err(())) => out.anomaly("smb.malformed_ntlmssp_request"),
                        None => s.kerberos = crate::krb5::gssapi::ticket(blob),
                    }
                }
                self.txs[i].kind = Kind::Setup(Box::new(s));
                self.touch_req(i, h);
            }
            smb2::TREE_CONNECT => {
                let i = self.new_tx(2, h.command, h.message_id, out);
                let share = (|| {
                    r.skip(4)?;
                    let off = usize::from(r.u16()?);
                    let len = usize::from(r.u16()?);
                    p::slice(m, off, len).map(utf16_name)
                })()
                .unwrap_or_default();
                self.txs[i].kind = Kind::Tree(Box::new(Tree {
                    share,
                    ..Tree::default()
                }));
                self.touch_req(i, h);
            }
            smb2::CREATE => {
                let i = self.new_tx(2, h.command, h.message_id, out);
                let c = (|| {
                    r.skip(2 + 1 + 1 + 4 + 8 + 8 + 4 + 4 + 4)?;
                    let disposition = r.u32()?;
                    let options = r.u32()?;
                    let off = usize::from(r.u16()?);
                    let len = usize::from(r.u16()?);
                    let name = if len == 0 {
                        "<share_root>".to_string()
                    } else {
                        p::slice(m, off, len).map(utf16_name)?
                    };
                    Some(Create {
                        filename: name,
                        disposition,
                        delete_on_close: options & FILE_DELETE_ON_CLOSE != 0,
                        directory: options & FILE_DIRECTORY_FILE != 0,
                        ..Create::default()
                    })
                })();
                match c {
                    Some(c) => self.txs[i].kind = Kind::Create(Box::new(c)),
                    None => out.anomaly("smb.malformed_data"),
                }
                self.touch_req(i, h);
            }
            smb2::WRITE => {
                let Some((off, len, offset, fid)) = (|| {
                    r.skip(2)?;
                    let off = usize::from(r.u16()?);
                    let len = r.u32()? as usize;
                    let offset = r.u64()?;
                    let fid = r.take(16)?;
                    Some((off, len, offset, fid))
                })() else {
                    out.anomaly("smb.malformed_data");
                    return;
                };
                let data = m.get(off..).map(|d| &d[..d.len().min(len)]).unwrap_or(&[]);
                if self.is_pipe(fid, Some(tree), data) {
                    let i = self.new_tx(2, h.command, h.message_id, out);
                    self.touch_req(i, h);
                    self.pipe_write(i, data, out);
                } else {
                    let fid = fid.to_vec();
                    self.write_sent(1 << 63 | h.message_id, &fid);
                    self.file_data(2, h.command, &fid, Dir::ToServer, offset, data, out);
                    let i = self.file_tx(2, h.command, &fid, Dir::ToServer, out);
                    let t = &mut self.txs[i];
                    t.session_id = h.session_id;
                    t.tree_id = u64::from(h.tree_id);
                }
            }
            smb2::READ => {
                let Some((offset, fid)) = (|| {
                    r.skip(8)?;
                    let offset = r.u64()?;
                    Some((offset, r.take(16)?))
                })() else {
                    out.anomaly("smb.malformed_data");
                    return;
                };
                let mut key = fid.to_vec();
                key.extend_from_slice(&offset.to_le_bytes());
                if self.reads.len() < MAX_HANDLES {
                    self.reads.insert(h.message_id, key);
                }
            }
            smb2::IOCTL => {
                let Some((code, fid, ioff, ilen)) = (|| {
                    r.skip(4)?;
                    let code = r.u32()?;
                    let fid = r.take(16)?;
                    let ioff = r.u32()? as usize;
                    let ilen = r.u32()? as usize;
                    Some((code, fid, ioff, ilen))
                })() else {
                    out.anomaly("smb.malformed_data");
                    return;
                };
                let _ = fid;
                let i = self.new_tx(2, h.command, h.message_id, out);
                self.touch_req(i, h);
                if code == FSCTL_PIPE_TRANSCEIVE
                    && let Some(data) = p::slice(m, ioff, ilen)
                {
                    self.pipe_write(i, data, out);
                } else {
                    self.txs[i].kind = Kind::Ioctl(code);
                }
            }
            smb2::CLOSE => {
                let i = self.new_tx(2, h.command, h.message_id, out);
                self.touch_req(i, h);
                if let Some(fid) = (|| {
                    r.skip(8)?;
                    r.take(16)
                })() {
                    self.close_handle(2, fid);
                }
            }
            // Suricata makes a transaction of a file rename or delete-on-close only.
            smb2::SET_INFO => {
                let Some((info_type, class, buf, fid)) = (|| {
                    r.skip(2)?;
                    let info_type = r.u8()?;
                    let class = r.u8()?;
                    let blen = r.u32()? as usize;
                    let boff = usize::from(r.u16()?);
                    r.skip(2 + 4)?;
                    let fid = r.take(16)?;
                    Some((info_type, class, p::slice(m, boff, blen)?, fid))
                })() else {
                    out.anomaly("smb.malformed_data");
                    return;
                };
                // SMB2_0_INFO_FILE: FileRenameInformation (10), FileDispositionInformation (13).
                let kind = match (info_type, class) {
                    (1, 10) => {
                        let Some(name) = (|| {
                            let nlen = u32::from_le_bytes(buf.get(16..20)?.try_into().ok()?);
                            buf.get(20..20usize.checked_add(nlen as usize)?)
                        })() else {
                            out.anomaly("smb.malformed_data");
                            return;
                        };
                        // As Suricata: the UTF-16 name's zero bytes are dropped.
                        let to: Vec<u8> = name
                            .iter()
                            .copied()
                            .filter(|&b| b != 0)
                            .take(MAX_NAME)
                            .collect();
                        Kind::Rename(Box::new(Rename {
                            from: self.handle_name(fid),
                            to: String::from_utf8_lossy(&to).into_owned(),
                            fuid: p::guid_string(fid),
                        }))
                    }
                    (1, 13) => Kind::SetInfo(Box::new(SetInfo {
                        filename: self.handle_name(fid),
                        delete_on_close: buf.first().is_some_and(|&b| b != 0),
                        fuid: p::guid_string(fid),
                    })),
                    _ => return,
                };
                let i = self.new_tx(2, h.command, h.message_id, out);
                self.touch_req(i, h);
                self.txs[i].kind = kind;
            }
            // Suricata makes no transaction of an information query.
            smb2::GET_INFO => {}
            _ => {
                let i = self.new_tx(2, h.command, h.message_id, out);
                self.touch_req(i, h);
            }
        }
    }

    fn touch_req(&mut self, i: usize, h: &Smb2Header) {
        self.overtake_before(i);
        if let Some(t) = self.txs.get_mut(i) {
            t.session_id = h.session_id;
            t.tree_id = u64::from(h.tree_id);
            t.done[0] = true;
            t.msgs[0] = t.msgs[0].wrapping_add(1);
        }
    }

    fn smb2_response(&mut self, h: &Smb2Header, m: &[u8], out: &mut ParseOutput) {
        let mut r = Rd::at(m, SMB2_HDR);
        let ok = h.status == 0;
        if h.command == smb2::READ {
            let Some(key) = self.reads.remove(&h.message_id) else {
                return;
            };
            let fid = &key[..16];
            let offset = u64::from_le_bytes(key[16..24].try_into().unwrap_or([0; 8]));
            if !ok {
                return;
            }
            let Some((off, len)) = (|| {
                r.skip(2)?;
                let off = usize::from(r.u8()?);
                r.skip(1)?;
                Some((off, r.u32()? as usize))
            })() else {
                out.anomaly("smb.malformed_data");
                return;
            };
            let data = m.get(off..).map(|d| &d[..d.len().min(len)]).unwrap_or(&[]);
            let tree = (h.session_id, h.tree_id);
            if self.is_pipe(fid, Some(tree), data) {
                self.pipe_read(data, out);
            } else {
                let fid = fid.to_vec();
                self.file_data(2, h.command, &fid, Dir::ToClient, offset, data, out);
                let i = self.file_tx(2, h.command, &fid, Dir::ToClient, out);
                let t = &mut self.txs[i];
                t.session_id = h.session_id;
                t.tree_id = u64::from(h.tree_id);
                // Suricata's READ file transaction carries the READ response's status.
                t.status = Some(p::nt_status(h.status));
            }
            return;
        }
        // An SMB2 NEGOTIATE response to an SMB1 NEGOTIATE (a client offering both).
        let smb1_negotiate = || {
            self.txs.iter().position(|t| {
                t.version == 1 && t.command == u16::from(smb1::NEGOTIATE) && !t.done[1]
            })
        };
        let found = self.find(2, h.command, h.message_id).or_else(|| {
            (h.command == smb2::NEGOTIATE)
                .then(smb1_negotiate)
                .flatten()
        });
        let i = match found {
            Some(i) => i,
            None => {
                // The request was not seen (picked up midstream, or a WRITE to a file).
                if h.command == smb2::WRITE {
                    self.write_answered(2, 1 << 63 | h.message_id, h.status);
                }
                if matches!(h.command, smb2::WRITE | smb2::GET_INFO | smb2::SET_INFO) {
                    return;
                }
                self.new_tx(2, h.command, h.message_id, out)
            }
        };
        let status = p::nt_status(h.status);
        match h.command {
            smb2::NEGOTIATE => {
                if let Some((d, guid, rd, wr)) = (|| {
                    r.skip(4)?;
                    let d = r.u16()?;
                    r.skip(2)?;
                    let guid = r.take(16)?;
                    r.skip(8)?;
                    let rd = r.u32()?;
                    let wr = r.u32()?;
                    Some((d, guid, rd, wr))
                })() {
                    self.dialect = p::dialect_name(d);
                    if let Kind::Negotiate(n) = &mut self.txs[i].kind {
                        n.server_guid = Some(p::guid_string(guid));
                        n.max_read = Some(rd);
                        n.max_write = Some(wr);
                    }
                }
            }
            smb2::TREE_CONNECT => {
                let ty = r.skip(2).and_then(|_| r.u8());
                let (name, pipe) = match ty {
                    Some(1) => (Some("FILE"), false),
                    Some(2) => (Some("PIPE"), true),
                    Some(3) => (Some("PRINT"), false),
                    _ => (None, false),
                };
                if let Kind::Tree(t) = &mut self.txs[i].kind {
                    if ok {
                        t.pipe = pipe;
                        t.share_type = name;
                    } else {
                        // An error response has no share type.
                        t.share_type = Some("UNKNOWN");
                    }
                    if ok && self.trees.len() < MAX_HANDLES {
                        self.trees
                            .insert((h.session_id, h.tree_id), (t.share.clone(), pipe));
                    }
                }
                self.txs[i].tree_id = u64::from(h.tree_id);
            }
            smb2::CREATE => {
                if ok
                    && let Some((times, fid)) = (|| {
                        r.skip(8)?;
                        let mut t = [0u64; 5];
                        for v in t.iter_mut().take(4) {
                            *v = p::filetime(r.u64()?);
                        }
                        r.skip(8)?;
                        t[4] = r.u64()?;
                        r.skip(8)?;
                        Some((t, r.take(16)?))
                    })()
                {
                    let tree = (h.session_id, h.tree_id);
                    let known = self.trees.contains_key(&tree);
                    let (share, pipe) = self.trees.get(&tree).cloned().unwrap_or_default();
                    if let Kind::Create(c) = &mut self.txs[i].kind {
                        c.times = times;
                        c.fuid = p::guid_string(fid);
                        if self.handles.len() < MAX_HANDLES {
                            self.handles.insert(
                                fid.to_vec(),
                                Handle {
                                    name: c.filename.clone(),
                                    share,
                                    pipe,
                                    known,
                                },
                            );
                        }
                    }
                }
            }
            smb2::IOCTL => {
                if let Some((ooff, olen)) = (|| {
                    r.skip(2 + 2 + 4 + 16 + 8)?;
                    Some((r.u32()? as usize, r.u32()? as usize))
                })() && let Some(data) = p::slice(m, ooff, olen)
                    && self.txs[i].dce().is_some()
                {
                    self.pipe_read(data, out);
                }
            }
            _ => {}
        }
        let t = &mut self.txs[i];
        t.status = Some(status);
        if t.session_id == 0 {
            t.session_id = h.session_id;
        }
        if t.command == smb2::SESSION_SETUP {
            t.session_id = h.session_id;
        }
        t.msgs[1] = t.msgs[1].wrapping_add(1);
        // A pipe WRITE's call ends with its DCE/RPC response (a READ), unless it failed.
        let waits = t.dce().is_some_and(|d| !d.done[1]) && ok && t.command == smb2::WRITE;
        if !waits {
            self.finish(i);
        }
    }

    fn smb1(&mut self, dir: Dir, m: &[u8], out: &mut ParseOutput) {
        let Some(h) = Smb1Header::parse(m) else {
            out.anomaly("smb.malformed_data");
            return;
        };
        let resp = h.is_reply();
        if resp != (dir == Dir::ToClient) {
            out.anomaly(if resp {
                "smb.response_to_server"
            } else {
                "smb.request_to_client"
            });
            return;
        }
        let Some((words, bytes, bytes_at)) = smb1_params(m) else {
            out.anomaly("smb.malformed_data");
            return;
        };
        let mut w = Rd::new(words);
        let key = smb1_key(&h);
        let cmd = u16::from(h.command);
        if !resp {
            match h.command {
                smb1::WRITE_ANDX => {
                    let Some((fid, off_lo, len, doff, off_hi)) = (|| {
                        w.skip(4)?;
                        let fid = w.take(2)?;
                        let off_lo = w.u32()?;
                        w.skip(4 + 2 + 2)?;
                        let hi = w.u16()?;
                        let lo = w.u16()?;
                        let doff = usize::from(w.u16()?);
                        let off_hi = w.u32().unwrap_or(0);
                        Some((
                            fid,
                            off_lo,
                            usize::from(hi) << 16 | usize::from(lo),
                            doff,
                            off_hi,
                        ))
                    })() else {
                        out.anomaly("smb.malformed_data");
                        return;
                    };
                    let offset = u64::from(off_hi) << 32 | u64::from(off_lo);
                    let data = m.get(doff..).map(|d| &d[..d.len().min(len)]).unwrap_or(&[]);
                    let fid = fid.to_vec();
                    if self.is_pipe(&fid, Some((u64::from(h.uid), u32::from(h.tid))), data) {
                        let i = self.new_tx(1, cmd, key, out);
                        self.touch_req1(i, &h);
                        self.pipe_write(i, data, out);
                    } else {
                        self.write_sent(key, &fid);
                        self.file_data(1, cmd, &fid, Dir::ToServer, offset, data, out);
                    }
                    return;
                }
                smb1::READ_ANDX => {
                    if let Some((fid, off_lo)) = (|| {
                        w.skip(4)?;
                        let fid = w.take(2)?;
                        Some((fid, w.u32()?))
                    })() {
                        let mut k = fid.to_vec();
                        k.extend_from_slice(&u64::from(off_lo).to_le_bytes());
                        if self.reads.len() < MAX_HANDLES {
                            self.reads.insert(key, k);
                        }
                    }
                    return;
                }
                smb1::TRANS => {
                    // TransactNmPipe: setup word 0x26 and the pipe's fid; Suricata makes
                    // a transaction of the DCE/RPC call only.
                    if let Some((dcnt, doff, setup)) = (|| {
                        w.skip(22)?;
                        let dcnt = usize::from(w.u16()?);
                        let doff = usize::from(w.u16()?);
                        let sc = usize::from(w.u8()?);
                        w.skip(1)?;
                        Some((dcnt, doff, w.take(sc * 2)?))
                    })() && setup.len() >= 4
                        && u16::from_le_bytes([setup[0], setup[1]]) == 0x26
                        && let Some(data) = p::slice(m, doff, dcnt)
                    {
                        let i = self.new_tx(1, cmd, key, out);
                        self.touch_req1(i, &h);
                        self.pipe_write(i, data, out);
                    }
                    return;
                }
                smb1::TRANS2 => return,
                _ => {}
            }
            let i = self.new_tx(1, cmd, key, out);
            self.touch_req1(i, &h);
            // Suricata takes a NEGOTIATE's ids from nowhere and a tree connect's tree
            // from its response.
            match h.command {
                smb1::NEGOTIATE => (self.txs[i].session_id, self.txs[i].tree_id) = (0, 0),
                smb1::TREE_CONNECT_ANDX => self.txs[i].tree_id = 0,
                _ => {}
            }
            let uni = h.unicode();
            match h.command {
                smb1::NEGOTIATE => {
                    let mut n = Negotiate::default();
                    let mut rest = bytes;
                    while let [0x02, tail @ ..] = rest {
                        let end = tail.iter().position(|&c| c == 0).unwrap_or(tail.len());
                        if n.client_dialects.len() < MAX_DIALECTS {
                            n.client_dialects.push(p::ascii(&tail[..end]));
                        }
                        rest = tail.get(end + 1..).unwrap_or(&[]);
                    }
                    self.smb1_dialects.clone_from(&n.client_dialects);
                    self.txs[i].kind = Kind::Negotiate(Box::new(n));
                }
                smb1::SESSION_SETUP_ANDX => {
                    let mut s = Setup::default();
                    if words.len() == 24 {
                        // Extended security: the blob, then the native OS and LAN manager.
                        let bl = usize::from(u16::from_le_bytes([words[14], words[15]]));
                        if let Some(blob) = bytes.get(..bl) {
                            match ntlmssp::parse_blob(blob) {
                                Some(Ok(a)) => s.ntlmssp = Some(a),
                                Some(Err(())) => out.anomaly("smb.malformed_ntlmssp_request"),
                                None => s.kerberos = crate::krb5::gssapi::ticket(blob),
                            }
                        }
                        s.req_native = native(m, bytes_at + bl, uni);
                    }
                    self.txs[i].kind = Kind::Setup(Box::new(s));
                }
                smb1::TREE_CONNECT_ANDX => {
                    let pl = words
                        .get(6..8)
                        .map_or(0, |b| usize::from(u16::from_le_bytes([b[0], b[1]])));
                    let mut t = Tree::default();
                    if let Some((share, next)) = smb1_string(m, bytes_at + pl, uni) {
                        // Suricata's SMB1 share names lose one of their two leading
                        // backslashes.
                        let share = share.strip_prefix('\\').unwrap_or(&share);
                        t.share = share.chars().take(MAX_NAME).collect();
                        if let Some((svc, _)) = smb1_string(m, next, false) {
                            t.service_req = Some(svc);
                        }
                    }
                    self.txs[i].kind = Kind::Tree(Box::new(t));
                }
                smb1::NT_CREATE_ANDX => {
                    let c = (|| {
                        w.skip(4 + 1)?;
                        let nl = usize::from(w.u16()?);
                        w.skip(4 + 4 + 4 + 8 + 4 + 4)?;
                        let disposition = w.u32()?;
                        let options = w.u32()?;
                        let (name, _) = smb1_string(m, bytes_at, uni)?;
                        let _ = nl;
                        Some(Create {
                            filename: name.chars().take(MAX_NAME).collect(),
                            disposition,
                            delete_on_close: options & FILE_DELETE_ON_CLOSE != 0,
                            directory: options & FILE_DIRECTORY_FILE != 0,
                            ..Create::default()
                        })
                    })();
                    match c {
                        Some(c) => self.txs[i].kind = Kind::Create(Box::new(c)),
                        None => out.anomaly("smb.malformed_data"),
                    }
                }
                smb1::CLOSE => {
                    if let Some(fid) = words.get(..2) {
                        let fid = fid.to_vec();
                        self.close_handle(1, &fid);
                    }
                }
                _ => {}
            }
            return;
        }
        // A response.
        if h.command == smb1::READ_ANDX {
            let Some(k) = self.reads.remove(&key) else {
                return;
            };
            let Some((len_lo, doff, len_hi)) = (|| {
                w.skip(4 + 2 + 2 + 2)?;
                let lo = w.u16()?;
                let doff = usize::from(w.u16()?);
                let hi = w.u16()?;
                Some((lo, doff, hi))
            })() else {
                out.anomaly("smb.malformed_data");
                return;
            };
            let len = usize::from(len_hi) << 16 | usize::from(len_lo);
            let data = m.get(doff..).map(|d| &d[..d.len().min(len)]).unwrap_or(&[]);
            let fid = k[..2].to_vec();
            let offset = u64::from_le_bytes(k[2..10].try_into().unwrap_or([0; 8]));
            if self.is_pipe(&fid, Some((u64::from(h.uid), u32::from(h.tid))), data) {
                self.pipe_read(data, out);
            } else if h.status == 0 {
                self.file_data(1, cmd, &fid, Dir::ToClient, offset, data, out);
            }
            return;
        }
        let i = match self.find(1, cmd, key) {
            Some(i) => i,
            None => {
                if h.command == smb1::WRITE_ANDX {
                    self.write_answered(1, key, h.status);
                }
                // As Suricata's: an SMB1 response opens no transaction. One whose
                // request was not seen, or a further part of a response already
                // matched (a long NT_TRANS answer), is not logged on its own.
                return;
            }
        };
        let uni = h.unicode();
        let ok = h.status == 0;
        match h.command {
            smb1::NEGOTIATE => {
                let idx = w.u16().map(usize::from);
                if let Some(d) = idx.and_then(|x| self.smb1_dialects.get(x)) {
                    self.dialect.clone_from(d);
                }
                if words.len() >= 34
                    && let Some(guid) = bytes.get(..16)
                    && let Kind::Negotiate(n) = &mut self.txs[i].kind
                {
                    n.server_guid = Some(p::guid_string(guid));
                }
            }
            smb1::SESSION_SETUP_ANDX => {
                self.txs[i].session_id = u64::from(h.uid);
                // Extended security (a blob before the strings), or not (the strings
                // first).
                let at = match words.len() {
                    8 => Some(bytes_at + usize::from(u16::from_le_bytes([words[6], words[7]]))),
                    6 => Some(bytes_at),
                    _ => None,
                };
                if let Some(at) = at {
                    let n = native(m, at, uni);
                    if let Kind::Setup(s) = &mut self.txs[i].kind {
                        s.resp_native = n;
                    }
                }
            }
            smb1::TREE_CONNECT_ANDX => {
                self.txs[i].tree_id = u64::from(h.tid);
                let svc = smb1_string(m, bytes_at, false).map(|s| s.0);
                if let Kind::Tree(t) = &mut self.txs[i].kind {
                    if ok {
                        t.pipe = svc.as_deref() == Some("IPC");
                        if self.trees.len() < MAX_HANDLES {
                            self.trees.insert(
                                (u64::from(h.uid), u32::from(h.tid)),
                                (t.share.clone(), t.pipe),
                            );
                        }
                    }
                    t.service_resp = svc;
                }
            }
            smb1::NT_CREATE_ANDX => {
                if ok
                    && let Some((fid, times)) = (|| {
                        w.skip(4 + 1)?;
                        let fid = w.take(2)?;
                        w.skip(4)?;
                        let mut t = [0u64; 5];
                        for v in t.iter_mut().take(4) {
                            *v = p::filetime(w.u64()?);
                        }
                        // Attributes, then the allocation size: Suricata logs that as
                        // an SMB1 file's `size` (4096 for a pipe whose end of file is 0).
                        w.skip(4)?;
                        t[4] = w.u64()?;
                        Some((fid, t))
                    })()
                {
                    let tree = (u64::from(h.uid), u32::from(h.tid));
                    let known = self.trees.contains_key(&tree);
                    let (share, pipe) = self.trees.get(&tree).cloned().unwrap_or_default();
                    if let Kind::Create(c) = &mut self.txs[i].kind {
                        c.times = times;
                        c.fuid = format!("{:04x}", u16::from_le_bytes([fid[0], fid[1]]));
                        if self.handles.len() < MAX_HANDLES {
                            self.handles.insert(
                                fid.to_vec(),
                                Handle {
                                    name: c.filename.clone(),
                                    share,
                                    pipe,
                                    known,
                                },
                            );
                        }
                    }
                }
            }
            smb1::TRANS => {
                if let Some((dcnt, doff)) = (|| {
                    w.skip(12)?;
                    Some((usize::from(w.u16()?), usize::from(w.u16()?)))
                })() && let Some(data) = p::slice(m, doff, dcnt)
                    && self.txs[i].dce().is_some()
                {
                    self.pipe_read(data, out);
                }
            }
            _ => {}
        }
        let t = &mut self.txs[i];
        t.status = Some(h.status_strings());
        t.msgs[1] = t.msgs[1].wrapping_add(1);
        let waits = t.dce().is_some_and(|d| !d.done[1]) && ok && h.command == smb1::WRITE_ANDX;
        if !waits {
            self.finish(i);
        }
    }

    fn touch_req1(&mut self, i: usize, h: &Smb1Header) {
        self.overtake_before(i);
        if let Some(t) = self.txs.get_mut(i) {
            t.session_id = u64::from(h.uid);
            t.tree_id = u64::from(h.tid);
            t.done[0] = true;
            t.msgs[0] = t.msgs[0].wrapping_add(1);
        }
    }

    /// Whole records in `input` (after what was buffered); returns what is left over.
    fn records<'a>(&mut self, dir: Dir, mut input: &'a [u8], out: &mut ParseOutput) -> &'a [u8] {
        loop {
            let Some((ty, len)) = p::nbss(input) else {
                return input;
            };
            if !p::nbss_type_valid(ty) || (ty == p::NBSS_MESSAGE && len > MAX_RECORD) {
                out.anomaly("smb.malformed_data");
                self.dirs[dir.index()].resync = true;
                return &input[1..];
            }
            // A message record's 24-bit length: NBSS allows 17 bits, SMB2 direct TCP 24.
            let len = if ty == p::NBSS_MESSAGE {
                len
            } else {
                len & 0x1ffff
            };
            if input.len() < NBSS_HDR + len {
                return input;
            }
            let rec = &input[NBSS_HDR..NBSS_HDR + len];
            if ty == p::NBSS_MESSAGE && !rec.is_empty() {
                self.record(dir, rec, out);
            }
            input = &input[NBSS_HDR + len..];
        }
    }
}

/// EVE `fuid` of handle `fid`: an SMB2 file id as a GUID, an SMB1 fid in hex.
fn fuid_of(version: u8, fid: &[u8]) -> String {
    if version == 2 {
        p::guid_string(fid)
    } else {
        let lo = fid.first().copied().unwrap_or(0);
        let hi = fid.get(1).copied().unwrap_or(0);
        format!("{:04x}", u16::from_le_bytes([lo, hi]))
    }
}

/// The native OS and LAN manager strings at `pos` of an SMB1 message.
fn native(m: &[u8], pos: usize, unicode: bool) -> Option<(String, String)> {
    let (os, next) = smb1_string(m, pos, unicode)?;
    let (lm, _) = smb1_string(m, next, unicode).unwrap_or_default();
    Some((os, lm))
}

/// Where a record may start in `b` after a gap: an NBSS message header followed by an
/// SMB magic.
fn resync_at(b: &[u8]) -> Option<usize> {
    let n = b.len().min(MAX_RESYNC_SCAN);
    (0..n).find(|&i| {
        b[i] == p::NBSS_MESSAGE && b.get(i + NBSS_HDR..).and_then(p::smb_magic).is_some()
    })
}

impl AppState for SmbState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        let mut input = data;
        if self.dirs[d].resync {
            let mut joined = std::mem::take(&mut self.dirs[d].buf);
            joined.extend_from_slice(input);
            match resync_at(&joined) {
                Some(i) => {
                    self.dirs[d].resync = false;
                    let rest = joined.split_off(i);
                    self.dirs[d].buf = rest;
                    input = &[];
                }
                None => {
                    // Keep a few bytes: a header may straddle the next call.
                    let keep = joined.len().min(NBSS_HDR + 4);
                    let tail = joined.split_off(joined.len() - keep);
                    self.dirs[d].buf = tail;
                    return;
                }
            }
        }
        if self.dirs[d].buf.is_empty() {
            let rest = self.records(dir, input, out);
            if self.dirs[d].resync {
                self.dirs[d].buf = rest.to_vec();
                let again = std::mem::take(&mut self.dirs[d].buf);
                self.parse(dir, &again, out);
                return;
            }
            self.dirs[d].buf.extend_from_slice(rest);
            return;
        }
        let mut buf = std::mem::take(&mut self.dirs[d].buf);
        buf.extend_from_slice(input);
        let rest_len = self.records(dir, &buf, out).len();
        let start = buf.len() - rest_len;
        buf.drain(..start);
        if self.dirs[d].resync && !buf.is_empty() {
            self.parse(dir, &buf, out);
            return;
        }
        self.dirs[d].buf = buf;
    }

    fn gap(&mut self, dir: Dir, len: u64, _out: &mut ParseOutput) {
        let d = dir.index();
        self.dirs[d].buf.clear();
        self.dirs[d].resync = true;
        for t in &mut self.txs {
            if t.file_dir == Some(dir) && !t.done[0] {
                for f in &mut t.files {
                    if let Some(f) = f.current() {
                        f.gap(len);
                    }
                }
                t.file_next = t.file_next.saturating_add(len);
            }
        }
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        for t in &mut self.txs {
            t.eof[dir.index()] = true;
            if t.is_file() && !t.done[0] {
                for f in &mut t.files {
                    f.end_current(crate::files::FileState::Truncated);
                }
            }
        }
    }

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
        for b in &mut self.dirs {
            b.buf.release_if_empty();
        }
    }

    fn set_files(&mut self, cfg: FileConfig) {
        self.files_cfg = cfg;
    }

    fn tx_files_mut(&mut self, index: usize, dir: Dir) -> Option<&mut Files> {
        self.txs.get_mut(index).map(|t| &mut t.files[dir.index()])
    }
}
