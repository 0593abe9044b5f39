//! NFS per-flow state, as Suricata models NFS: each call and its reply is a
//! transaction (paired by xid), except file transfers: the READs (to the client) or
//! WRITEs (to the server) of one file handle are one transaction, which carries the
//! file into the file layer. Names are learnt from the replies that map a name to a
//! handle (LOOKUP, CREATE, READDIRPLUS, NFSv4 OPEN+GETFH) and given to the later
//! calls on that handle.
//!
//! Over TCP each RPC record fragment is a record (Suricata joins none); a record is
//! parsed once it is all in, but for the data of a large WRITE call or READ reply,
//! which goes to its file as it comes. A record that cannot be delimited (a bad
//! record header) is a parse error of the flow: nothing more of it is parsed.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::detect::{FRAME_KINDS, FrameKind};
use super::parser::{self, Op4, ReadReply, Res4, Write, op4, proc3};
use super::rpc::{self, Call, Creds, Error, Reply};
use crate::files::{FileConfig, Files};
use crate::{AppState, Dir, ParseOutput, Probe, Transaction, Transport};

/// Suricata's default `max-tx`: live transactions per flow.
pub const DEFAULT_MAX_TX: usize = 1024;
/// Calls awaiting their reply kept per flow; past it the oldest are forgotten.
pub const MAX_PENDING_CALLS: usize = 4096;
/// Handle-to-name mappings kept per flow; past it the map starts again.
pub const MAX_NAMES: usize = 4096;
/// Longest file name kept (bytes).
pub const MAX_NAME_LEN: usize = 1024;
/// Largest record buffered whole (a record larger than this that is not file data is
/// skipped, and flagged).
pub const MAX_RECORD: usize = 4 << 20;
/// Largest READ or WRITE chunk taken (Suricata's: Linux allows 1 MiB, "several
/// multiples" of it are allowed).
pub const MAX_CHUNK: u32 = 16 << 20;
/// A record at least this long whose start holds a WRITE call or a READ reply has
/// its file data taken as it comes (Suricata's threshold).
pub const STREAM_MIN_RECORD: usize = 512;

/// Bytes of one parse call kept for its frames (when a rule inspects them); a frame
/// that runs past them keeps its length, not its bytes.
pub const MAX_FRAME_BYTES: usize = 256 << 10;
/// Records of one parse call that keep their frames; those past it are numbered (as
/// Suricata numbers them) but not kept.
pub const MAX_FRAME_RECORDS: usize = 1024;
/// Bytes of a file kept for `file.data` inspection.
pub const MAX_FILE_DATA: usize = 1 << 20;
/// Frame holders' transaction ids start here, past any real transaction's.
pub const FRAME_TX_BASE: u64 = 1 << 62;

/// One frame of a record: its id, and where it lies from the record's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub id: u64,
    pub start: u64,
    pub len: u64,
}

/// The frames one RPC record (or datagram) made. Suricata attaches NFS frames to no
/// transaction; they are offered to the engine in a holder of their own (a
/// transaction that has only these buffers, no record and no EVE id), kept until
/// the next parse call of its direction (the engine inspects it before).
#[derive(Debug)]
pub struct FrameTx {
    pub seq: u64,
    pub dir: Dir,
    /// The bytes of the parse call (up to [`MAX_FRAME_BYTES`]), shared by its
    /// holders, and where this record starts in them.
    data: Arc<[u8]>,
    at: usize,
    /// The stream offset of the record's start (`None` over UDP).
    pub base: Option<u64>,
    frames: [Option<Frame>; FRAME_KINDS],
}

impl FrameTx {
    /// Its frame of kind `k`.
    pub fn frame(&self, k: usize) -> Option<&Frame> {
        self.frames.get(k)?.as_ref()
    }

    /// The kept bytes of its frame of kind `k`.
    pub fn bytes_of(&self, k: usize) -> Option<&[u8]> {
        let f = self.frame(k)?;
        let start = usize::try_from(f.start).ok()?.saturating_add(self.at);
        let end = start
            .saturating_add(usize::try_from(f.len).unwrap_or(usize::MAX))
            .min(self.data.len());
        Some(self.data.get(start.min(end)..end).unwrap_or(&[]))
    }
}

/// A direction's frame numbering and the holder being filled.
#[derive(Debug, Default)]
struct FrameSide {
    /// The id of the next frame (Suricata numbers a direction's frames from 1, only
    /// of the kinds some rule uses).
    next: u64,
    /// The current parse call's bytes, once a holder needs them.
    data: Option<Arc<[u8]>>,
    /// Holders made in the current parse call.
    records: usize,
}

/// The config of the NFS parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NfsConfig {
    pub max_tx: usize,
}

impl Default for NfsConfig {
    fn default() -> Self {
        NfsConfig {
            max_tx: DEFAULT_MAX_TX,
        }
    }
}

/// A file transfer's own part of its transaction.
#[derive(Debug, Default)]
pub struct FileXfer {
    /// To the server (WRITE) or the client (READ).
    pub dir: Option<Dir>,
    /// Procedures besides the first (COMMIT after WRITEs).
    pub procs: Vec<u32>,
    pub chunks: u32,
    pub last_xid: u32,
    /// Suricata's `is_file_closed`: no more chunks are taken.
    pub closed: bool,
    /// The next offset of the file.
    next: u64,
    pub files: Files,
    /// The file's bytes, for `file.data` (kept when a rule inspects it; at most
    /// [`MAX_FILE_DATA`]).
    pub data: Vec<u8>,
    keep_data: bool,
}

/// One transaction.
#[derive(Debug, Default)]
pub struct NfsTx {
    pub id: u64,
    pub xid: u32,
    pub procedure: u32,
    /// The object's name (RENAME's `from`).
    pub file_name: Vec<u8>,
    pub file_handle: Vec<u8>,
    pub auth_type: u32,
    pub machine_name: Vec<u8>,
    pub uid: u32,
    pub gid: u32,
    pub rpc_status: u32,
    pub nfs_status: u32,
    pub is_first: bool,
    pub is_last: bool,
    pub request_done: bool,
    pub response_done: bool,
    /// The call's NFS version (0 for a file transaction made by a reply).
    pub nfs_version: u16,
    /// The flow's NFS version, which the record carries.
    pub flow_version: u16,
    /// RENAME's new name.
    pub rename_to: Option<Vec<u8>>,
    pub file: Option<FileXfer>,
    /// Each direction ended.
    pub eof: [bool; 2],
    pub udp: bool,
    /// Changes seen by the detection (chunks).
    pub updates: u32,
}

impl NfsTx {
    pub fn done(&self, dir: Dir) -> bool {
        self.eof[dir.index()]
            || match dir {
                Dir::ToServer => self.request_done,
                Dir::ToClient => self.response_done,
            }
    }

    fn creds(&mut self, c: &Call<'_>) {
        self.auth_type = c.creds_flavor;
        if let Creds::Unix {
            machine_name,
            uid,
            gid,
        } = c.creds
        {
            self.machine_name = machine_name.to_vec();
            self.uid = uid;
            self.gid = gid;
        }
    }
}

/// What a call left for its reply.
#[derive(Debug, Default, Clone)]
struct Pending {
    version: u32,
    procedure: u32,
    offset: u64,
    name: Vec<u8>,
    handle: Vec<u8>,
    gss_integrity: bool,
}

/// A direction's record reassembly.
#[derive(Debug, Default)]
struct Side {
    /// Bytes of a record not all in yet.
    buf: Vec<u8>,
    /// Bytes of the current record still to come after its file data was taken.
    rec_left: usize,
    /// Of those, file data.
    file_left: usize,
    /// The file data's transaction (its id).
    file_tx: u64,
    /// The chunk is the file's last.
    file_last: bool,
    /// Bytes of an oversized record to skip.
    skip: usize,
    /// After a gap: the next record is looked for.
    resync: bool,
}

/// One flow's NFS state.
#[derive(Debug)]
pub struct NfsState {
    cfg: NfsConfig,
    udp: bool,
    files_cfg: FileConfig,
    txs: VecDeque<NfsTx>,
    next_id: u64,
    calls: HashMap<u32, Pending>,
    names: HashMap<Vec<u8>, Vec<u8>>,
    version: u16,
    sides: [Side; 2],
    /// A record could not be delimited: nothing more is parsed.
    dead: bool,
    /// The frame kinds the rules use (bit per [`FrameKind`]); 0: no frames are made.
    frame_kinds: u16,
    frame_sides: [FrameSide; 2],
    /// The record being parsed, when it makes frames.
    open: Option<FrameTx>,
    /// Frame holders of the last parse call of each direction.
    holders: VecDeque<FrameTx>,
    next_holder: u64,
    /// Per direction, stream bytes seen (data and gaps).
    seen: [u64; 2],
    /// A rule inspects `file.data`: file transfers keep their bytes.
    keep_file_data: bool,
}

impl NfsState {
    pub fn new(cfg: NfsConfig, transport: Transport) -> NfsState {
        NfsState {
            cfg,
            udp: transport == Transport::Udp,
            files_cfg: FileConfig::default(),
            txs: VecDeque::new(),
            next_id: 0,
            calls: HashMap::new(),
            names: HashMap::new(),
            version: 0,
            sides: Default::default(),
            dead: false,
            frame_kinds: 0,
            frame_sides: Default::default(),
            open: None,
            holders: VecDeque::new(),
            next_holder: 0,
            seen: [0; 2],
            keep_file_data: false,
        }
    }

    /// The frame holders offered now.
    pub fn frame_holders(&self) -> impl Iterator<Item = &FrameTx> {
        self.holders.iter()
    }

    /// A new parse call in `dir`: the holders of its last one go (the engine has
    /// inspected them).
    fn frames_begin(&mut self, dir: Dir) {
        if self.frame_kinds == 0 {
            return;
        }
        self.holders.retain(|h| h.dir != dir);
        let f = &mut self.frame_sides[dir.index()];
        f.data = None;
        f.records = 0;
    }

    /// A record starts at `cur` (stream offset `base`; `None` for a datagram): its
    /// `rpc.pdu` frame, over all of `cur`. `keep`: the record is parsed (or its file
    /// data taken) now; else its frame is numbered and dropped (Suricata's frame of a
    /// record it waits for is never inspected).
    fn record_frames(&mut self, dir: Dir, cur: &[u8], whole: &[u8], base: Option<u64>, keep: bool) {
        if self.frame_kinds == 0 {
            return;
        }
        let used = self.frame_kinds & 1 << FrameKind::RpcPdu as u16 != 0;
        let d = dir.index();
        let f = &mut self.frame_sides[d];
        if !keep || f.records >= MAX_FRAME_RECORDS {
            f.next += u64::from(used);
            // Its later frames, if any, are numbered but not kept.
            self.open = None;
            return;
        }
        f.records += 1;
        let data = f
            .data
            .get_or_insert_with(|| Arc::from(&whole[..whole.len().min(MAX_FRAME_BYTES)]))
            .clone();
        let at = whole.len() - cur.len();
        self.open = Some(FrameTx {
            seq: 0,
            dir,
            data,
            at,
            base,
            frames: [None; FRAME_KINDS],
        });
        self.add_frame(dir, FrameKind::RpcPdu, 0, cur.len());
    }

    /// A frame of the record being parsed, `start` bytes from its start.
    fn add_frame(&mut self, dir: Dir, kind: FrameKind, start: usize, len: usize) {
        if self.frame_kinds & 1 << kind as u16 == 0 {
            return;
        }
        let f = &mut self.frame_sides[dir.index()];
        f.next += 1;
        let id = f.next;
        if let Some(h) = &mut self.open
            && let Some(slot) = h.frames.get_mut(kind as usize)
        {
            *slot = Some(Frame {
                id,
                start: start as u64,
                len: len as u64,
            });
        }
    }

    /// The record's frames are all made: its holder is offered.
    fn record_done(&mut self) {
        if let Some(mut h) = self.open.take() {
            h.seq = self.next_holder;
            self.next_holder += 1;
            self.holders.push_back(h);
        }
    }

    /// A call's frames past its `rpc.pdu`: its credentials (they start `creds_at`
    /// bytes into the record) and its program data, by NFS version.
    fn call_frames(&mut self, dir: Dir, rec: &[u8], creds_at: usize, c: &Call<'_>) {
        if self.frame_kinds == 0 {
            return;
        }
        let creds_len = rec
            .get(creds_at + 4..creds_at + 8)
            .and_then(|b| b.first_chunk::<4>())
            .map_or(0, |b| u32::from_be_bytes(*b) as usize);
        self.add_frame(dir, FrameKind::RpcCreds, creds_at, creds_len + 8);
        let at = offset_in(rec, c.args);
        let n = c.args.len();
        match c.version {
            4 if !self.udp => self.nfs4_frames(dir, at, n, false),
            2 | 3 => self.add_frame(dir, FrameKind::NfsPdu, at, n),
            _ => {}
        }
    }

    /// A reply's frames past its `rpc.pdu`: its header and data (`avail`: the bytes
    /// at hand from the record's start), and for the reply to a known call its
    /// program data, by NFS version.
    fn reply_frames(&mut self, dir: Dir, rec: &[u8], avail: usize, r: &Reply<'_>) {
        if self.frame_kinds == 0 {
            return;
        }
        let hdr = if self.udp { 8 } else { 12 };
        if avail > hdr {
            self.add_frame(dir, FrameKind::RpcHdr, 0, hdr);
            self.add_frame(dir, FrameKind::RpcData, hdr, avail - hdr);
        }
        let Some(version) = self.calls.get(&r.xid).map(|p| p.version) else {
            return;
        };
        let at = offset_in(rec, r.results);
        let n = r.results.len();
        match version {
            2 | 3 if n > 0 => {
                self.add_frame(dir, FrameKind::NfsPdu, at, n);
                self.add_frame(dir, FrameKind::NfsStatus, at, 4);
            }
            4 => self.nfs4_frames(dir, at, n, true),
            _ => {}
        }
    }

    /// The NFSv4 frames of a COMPOUND's arguments or results (`n` bytes, `at` into
    /// the record): Suricata's header is their first 8 bytes whatever the tag.
    fn nfs4_frames(&mut self, dir: Dir, at: usize, n: usize, reply: bool) {
        if reply {
            if n > 0 {
                self.add_frame(dir, FrameKind::Nfs4Pdu, at, n);
                self.add_frame(dir, FrameKind::Nfs4Status, at, 4);
            }
        } else {
            self.add_frame(dir, FrameKind::Nfs4Pdu, at, n);
        }
        if n > 8 {
            self.add_frame(dir, FrameKind::Nfs4Hdr, at, 8);
            self.add_frame(dir, FrameKind::Nfs4Ops, at + 8, n - 8);
        }
    }

    pub fn transactions(&self) -> impl Iterator<Item = &NfsTx> {
        self.txs.iter()
    }

    fn set_version(&mut self, v: u32) {
        if self.version == 0 {
            self.version = v as u16;
            for t in &mut self.txs {
                t.flow_version = self.version;
            }
        }
    }

    /// A new transaction; past `max-tx` live ones, the oldest unfinished one is
    /// finished (Suricata's).
    fn new_tx(&mut self, out: &mut ParseOutput) -> &mut NfsTx {
        if self.txs.len() > self.cfg.max_tx
            && let Some(old) = self
                .txs
                .iter_mut()
                .find(|t| !t.request_done || !t.response_done)
        {
            old.request_done = true;
            old.response_done = true;
            if let Some(f) = &mut old.file {
                f.closed = true;
            }
            out.anomaly("nfs.too_many_transactions");
        }
        let t = NfsTx {
            id: self.next_id,
            flow_version: self.version,
            udp: self.udp,
            ..NfsTx::default()
        };
        self.next_id += 1;
        self.txs.push_back(t);
        self.txs.back_mut().expect("just pushed")
    }

    fn remember_call(&mut self, xid: u32, p: Pending) {
        if self.calls.len() >= MAX_PENDING_CALLS {
            self.calls.clear();
        }
        self.calls.insert(xid, p);
    }

    fn learn_name(&mut self, handle: &[u8], name: &[u8]) {
        if self.names.len() >= MAX_NAMES {
            self.names.clear();
        }
        self.names.insert(
            handle.to_vec(),
            name[..name.len().min(MAX_NAME_LEN)].to_vec(),
        );
    }

    fn name_of(&self, handle: &[u8]) -> Vec<u8> {
        self.names.get(handle).cloned().unwrap_or_default()
    }

    fn file_tx(&mut self, handle: &[u8], dir: Dir) -> Option<usize> {
        self.txs.iter().position(|t| {
            t.file
                .as_ref()
                .is_some_and(|f| !f.closed && f.dir == Some(dir))
                && t.file_handle == handle
        })
    }

    fn new_file_tx(
        &mut self,
        handle: &[u8],
        name: &[u8],
        dir: Dir,
        out: &mut ParseOutput,
    ) -> usize {
        let cfg = self.files_cfg;
        let keep_data = self.keep_file_data;
        let t = self.new_tx(out);
        t.file_name = name.to_vec();
        t.file_handle = handle.to_vec();
        let mut f = FileXfer {
            dir: Some(dir),
            keep_data,
            ..FileXfer::default()
        };
        if cfg.track {
            f.files.open(name, &cfg);
        }
        t.file = Some(f);
        self.txs.len() - 1
    }

    /// A chunk of a file at `offset`: its bytes so far, and whether it is the file's
    /// last and all of it is here.
    fn chunk(t: &mut NfsTx, offset: u64, data: &[u8], close: bool) {
        let Some(f) = &mut t.file else { return };
        let mut data = data;
        if offset > f.next {
            if let Some(file) = f.files.current() {
                file.gap(offset - f.next);
            }
            f.next = offset;
        } else if offset < f.next {
            let skip = usize::try_from(f.next - offset).unwrap_or(usize::MAX);
            data = data.get(skip..).unwrap_or(&[]);
        }
        f.next += data.len() as u64;
        if f.keep_data {
            let room = MAX_FILE_DATA.saturating_sub(f.data.len());
            f.data.extend_from_slice(&data[..data.len().min(room)]);
        }
        if let Some(file) = f.files.current() {
            file.append(data);
            if close {
                file.close();
            }
        }
        t.updates = t.updates.wrapping_add(1);
    }

    /// A WRITE's data (NFSv3, or NFSv4 with the handle of its PUTFH): the
    /// handle's open write transaction takes it, or a new one.
    fn write(
        &mut self,
        xid: u32,
        version: u32,
        w: &Write<'_>,
        out: &mut ParseOutput,
    ) -> Option<u64> {
        let size = if version == 4 { w.data_len } else { w.count };
        if size == 0 || size > MAX_CHUNK {
            return None;
        }
        let is_last = w.stable == 2;
        let name = self.name_of(w.handle);
        let partial = (w.data.len() as u32) < w.data_len;
        let i = match self.file_tx(w.handle, Dir::ToServer) {
            Some(i) => {
                let t = &mut self.txs[i];
                if let Some(f) = &mut t.file {
                    f.chunks += 1;
                    if is_last {
                        f.last_xid = xid;
                        t.is_last = true;
                        t.response_done = true;
                        f.closed |= version != 4;
                    }
                }
                i
            }
            None => {
                let i = self.new_file_tx(w.handle, &name, Dir::ToServer, out);
                let t = &mut self.txs[i];
                t.procedure = if version == 4 {
                    op4::WRITE
                } else {
                    proc3::WRITE
                };
                t.xid = xid;
                t.is_first = true;
                t.nfs_version = version as u16;
                if is_last {
                    t.is_last = true;
                    t.request_done = true;
                    if let Some(f) = &mut t.file {
                        f.last_xid = xid;
                        f.closed = true;
                    }
                }
                i
            }
        };
        Self::chunk(&mut self.txs[i], w.offset, w.data, is_last && !partial);
        Some(self.txs[i].id)
    }

    /// A READ reply's data, with what its call said.
    fn read(
        &mut self,
        r: &Reply<'_>,
        rr: &ReadReply<'_>,
        p: &Pending,
        out: &mut ParseOutput,
    ) -> Option<u64> {
        if rr.count == 0 || rr.count > MAX_CHUNK {
            return None;
        }
        let mut is_last = rr.eof;
        if p.version == 2
            && let Some(size) = parser::fattr2_size(rr.attr)
            && u64::from(size) == p.offset + rr.data.len() as u64
        {
            is_last = true;
        }
        let partial = rr.data.len() < rr.count as usize;
        let i = match self.file_tx(&p.handle, Dir::ToClient) {
            Some(i) => {
                if let Some(f) = &mut self.txs[i].file {
                    f.chunks += 1;
                }
                i
            }
            None => {
                let i = self.new_file_tx(&p.handle, &p.name, Dir::ToClient, out);
                let t = &mut self.txs[i];
                t.procedure = if p.version < 4 {
                    proc3::READ
                } else {
                    op4::READ
                };
                t.xid = r.xid;
                t.is_first = true;
                i
            }
        };
        let t = &mut self.txs[i];
        if is_last {
            if let Some(f) = &mut t.file {
                f.last_xid = r.xid;
            }
            t.rpc_status = r.reply_state;
            t.nfs_status = rr.status;
            t.is_last = true;
            t.request_done = true;
            if !partial {
                t.response_done = true;
            }
        }
        Self::chunk(t, p.offset, rr.data, is_last && !partial);
        Some(t.id)
    }

    /// COMMIT (NFSv3) or CLOSE/COMMIT (NFSv4): the handle's open write ends.
    fn commit(&mut self, xid: u32, handle: &[u8], v3: bool) {
        let Some(i) = self.file_tx(handle, Dir::ToServer) else {
            return;
        };
        let t = &mut self.txs[i];
        if let Some(f) = &mut t.file {
            if v3 {
                f.chunks += 1;
                f.procs.push(proc3::COMMIT);
            }
            f.last_xid = xid;
            f.closed = true;
            if let Some(file) = f.files.current() {
                file.close();
            }
        }
        t.is_last = true;
        t.request_done = true;
        t.updates = t.updates.wrapping_add(1);
    }

    /// The reply to `xid` finishes its (non-file) transaction.
    fn reply_done(&mut self, r: &Reply<'_>, status: u32, handle: &[u8]) {
        if let Some(t) = self
            .txs
            .iter_mut()
            .find(|t| t.file.is_none() && t.xid == r.xid)
        {
            t.response_done = true;
            t.rpc_status = r.reply_state;
            t.nfs_status = status;
            if t.file_handle.is_empty() && !handle.is_empty() {
                t.file_handle = handle.to_vec();
            }
        }
    }

    /// A call's transaction (all procedures but the file ones).
    fn call_tx(
        &mut self,
        c: &Call<'_>,
        p: &Pending,
        rename_to: Option<&[u8]>,
        out: &mut ParseOutput,
    ) {
        let t = self.new_tx(out);
        t.xid = c.xid;
        t.procedure = c.procedure;
        t.request_done = true;
        t.file_name = p.name.clone();
        t.file_handle = p.handle.clone();
        t.nfs_version = c.version as u16;
        t.rename_to = rename_to.map(<[u8]>::to_vec);
        t.creds(c);
    }

    fn call_v3(&mut self, c: &Call<'_>, out: &mut ParseOutput) {
        self.set_version(c.version);
        let mut p = Pending {
            version: c.version,
            procedure: c.procedure,
            ..Pending::default()
        };
        let mut rename_to = None;
        let bad = match c.procedure {
            proc3::LOOKUP => parser::dirop3(c.args).map(|(_, n)| p.name = n.to_vec()),
            proc3::ACCESS | proc3::GETATTR | proc3::READDIRPLUS | proc3::READ => {
                parser::handle_args3(c.procedure, c.args).map(|(h, off)| {
                    p.offset = off;
                    p.handle = h.to_vec();
                    p.name = self.name_of(h);
                })
            }
            proc3::WRITE => parser::write3(c.args, true).map(|w| {
                self.write(c.xid, 3, &w, out);
            }),
            proc3::CREATE | proc3::REMOVE | proc3::MKDIR | proc3::RMDIR => parser::dirop3(c.args)
                .map(|(h, n)| {
                    p.handle = h.to_vec();
                    p.name = n.to_vec();
                }),
            proc3::RENAME => parser::rename3(c.args).map(|(h, from, to)| {
                p.handle = h.to_vec();
                p.name = from.to_vec();
                rename_to = Some(to);
            }),
            proc3::COMMIT => {
                parser::handle_args3(c.procedure, c.args).map(|(h, _)| self.commit(c.xid, h, true))
            }
            _ => Ok(()),
        };
        if bad.is_err() {
            out.anomaly("nfs.malformed_data");
        }
        match c.procedure {
            proc3::COMMIT | proc3::WRITE => {}
            proc3::READ => {
                if self.file_tx(&p.handle, Dir::ToClient).is_none() {
                    let i =
                        self.new_file_tx(&p.handle.clone(), &p.name.clone(), Dir::ToClient, out);
                    let t = &mut self.txs[i];
                    t.procedure = proc3::READ;
                    t.xid = c.xid;
                    t.is_first = true;
                    t.nfs_version = c.version as u16;
                    t.creds(c);
                }
            }
            proc3::RENAME => {
                let to = rename_to.unwrap_or_default();
                self.call_tx(c, &p, Some(to), out);
            }
            _ => self.call_tx(c, &p, None, out),
        }
        self.remember_call(c.xid, p);
    }

    fn call_v2(&mut self, c: &Call<'_>, out: &mut ParseOutput) {
        let mut p = Pending {
            version: c.version,
            procedure: c.procedure,
            ..Pending::default()
        };
        // Suricata compares NFSv2 procedures with NFSv3's numbers.
        let bad = match c.procedure {
            proc3::LOOKUP => parser::lookup2(c.args).map(|h| {
                p.handle = h.to_vec();
                p.name = self.name_of(h);
            }),
            proc3::READ => parser::read2(c.args).map(|(h, off)| {
                p.offset = u64::from(off);
                p.handle = h.to_vec();
                p.name = self.name_of(h);
            }),
            _ => Ok(()),
        };
        if bad.is_err() {
            out.anomaly("nfs.malformed_data");
        }
        if !matches!(c.procedure, proc3::COMMIT | proc3::WRITE | proc3::READ) {
            let rename = (c.procedure == proc3::RENAME).then_some(&[][..]);
            self.call_tx(c, &p, rename, out);
        }
        self.remember_call(c.xid, p);
    }

    fn call_v4(&mut self, c: &Call<'_>, out: &mut ParseOutput) {
        let mut p = Pending {
            version: c.version,
            procedure: c.procedure,
            ..Pending::default()
        };
        if c.procedure == op4::COMPOUND {
            let mut args = c.args;
            if let Creds::Gss {
                procedure: 0,
                service: 2,
            } = c.creds
            {
                match gss_integrity(args) {
                    Ok(d) => {
                        args = d;
                        p.gss_integrity = true;
                    }
                    Err(_) => {
                        out.anomaly("nfs.malformed_data");
                        return;
                    }
                }
            }
            let mut ops = Vec::new();
            if parser::compound4(args, &mut ops).is_err() {
                out.anomaly("nfs.malformed_data");
            } else {
                self.compound(c, &ops, &mut p, out);
            }
        }
        self.remember_call(c.xid, p);
    }

    fn compound(&mut self, c: &Call<'_>, ops: &[Op4<'_>], p: &mut Pending, out: &mut ParseOutput) {
        let mut fh: Option<&[u8]> = None;
        let mut main = 0;
        for op in ops {
            match *op {
                Op4::PutFh(h) => fh = Some(h),
                Op4::Read { offset } => {
                    if let Some(h) = fh {
                        p.offset = offset;
                        p.handle = h.to_vec();
                        p.name = self.name_of(h);
                    }
                }
                Op4::Open(n) | Op4::Lookup(n) => p.name = n.to_vec(),
                Op4::Write(mut w) => {
                    if let Some(h) = fh {
                        w.handle = h;
                        let _ = self.write(c.xid, 4, &w, out);
                    }
                }
                Op4::Commit | Op4::Close => {
                    if let Some(h) = fh {
                        self.commit(c.xid, h, false);
                    }
                }
                Op4::Create(n) => {
                    if let Some(h) = fh {
                        p.handle = h.to_vec();
                    }
                    p.name = n.to_vec();
                    main = op4::CREATE;
                }
                Op4::Remove(n) => {
                    p.name = n.to_vec();
                    main = op4::REMOVE;
                }
                Op4::Other => {}
            }
        }
        if main != 0 {
            let t = self.new_tx(out);
            t.xid = c.xid;
            t.procedure = main;
            t.request_done = true;
            t.file_name = p.name.clone();
            t.file_handle = p.handle.clone();
            t.nfs_version = c.version as u16;
            t.creds(c);
        }
    }

    fn call(&mut self, c: &Call<'_>, out: &mut ParseOutput) {
        match c.version {
            4 if !self.udp => self.call_v4(c, out),
            3 => self.call_v3(c, out),
            2 => self.call_v2(c, out),
            _ => {}
        }
    }

    fn reply(&mut self, r: &Reply<'_>, out: &mut ParseOutput) {
        let Some(p) = self.calls.remove(&r.xid) else {
            return;
        };
        self.set_version(p.version);
        match p.version {
            2 => self.reply_v2(r, &p, out),
            3 => self.reply_v3(r, &p, out),
            4 => self.reply_v4(r, &p, out),
            _ => out.anomaly("nfs.non_existing_version"),
        }
    }

    fn reply_v3(&mut self, r: &Reply<'_>, p: &Pending, out: &mut ParseOutput) {
        let mut handle: &[u8] = &[];
        let status = match p.procedure {
            proc3::LOOKUP => parser::lookup3_reply(r.results).map(|(s, h)| {
                self.learn_name(h, &p.name);
                handle = h;
                s
            }),
            proc3::CREATE => parser::create3_reply(r.results).map(|(s, h)| {
                if let Some(h) = h {
                    self.learn_name(h, &p.name);
                    handle = h;
                }
                s
            }),
            proc3::READ => parser::read3_reply(r.results, true).map(|rr| {
                let _ = self.read(r, &rr, p, out);
                rr.status
            }),
            proc3::READDIRPLUS => {
                let mut entries = Vec::new();
                let s = parser::readdirplus3_reply(r.results, &mut entries);
                for (n, h) in &entries {
                    self.learn_name(h, n);
                }
                s
            }
            _ => Ok(first_u32(r.results)),
        };
        let status = status.unwrap_or_else(|_| {
            out.anomaly("nfs.malformed_data");
            0
        });
        if p.procedure != proc3::READ {
            let handle = handle.to_vec();
            self.reply_done(r, status, &handle);
        }
    }

    fn reply_v2(&mut self, r: &Reply<'_>, p: &Pending, out: &mut ParseOutput) {
        let status = if p.procedure == proc3::READ {
            match parser::read2_reply(r.results) {
                Ok(rr) => {
                    let _ = self.read(r, &rr, p, out);
                    rr.status
                }
                Err(_) => {
                    out.anomaly("nfs.malformed_data");
                    0
                }
            }
        } else {
            first_u32(r.results)
        };
        self.reply_done(r, status, &[]);
    }

    fn reply_v4(&mut self, r: &Reply<'_>, p: &Pending, out: &mut ParseOutput) {
        if p.procedure != op4::COMPOUND {
            return;
        }
        let mut results = r.results;
        if p.gss_integrity {
            match gss_integrity(results) {
                Ok(d) => results = d,
                Err(_) => {
                    out.anomaly("nfs.malformed_data");
                    return;
                }
            }
        }
        let mut res = Vec::new();
        if parser::compound4_reply(results, &mut res).is_err() {
            out.anomaly("nfs.malformed_data");
            return;
        }
        let mut p = p.clone();
        let mut getfh_names = false;
        let mut main = None;
        for x in &res {
            match *x {
                Res4::Read(s, Some((eof, data))) => {
                    let rr = ReadReply {
                        status: s,
                        attr: &[],
                        count: data.len() as u32,
                        eof,
                        data,
                    };
                    let _ = self.read(r, &rr, &p, out);
                }
                Res4::Open(_, true) => getfh_names = true,
                Res4::GetFh(_, Some(h)) if getfh_names => self.learn_name(h, &p.name),
                Res4::PutRootFh(0) if p.name.is_empty() => p.name = b"<mount_root>".to_vec(),
                Res4::Remove(s) | Res4::Create(s) => main = Some(s),
                _ => {}
            }
        }
        if let Some(s) = main {
            self.reply_done(r, s, &[]);
        }
    }

    /// A complete call or reply record (TCP) or datagram (UDP); `avail`: the bytes
    /// at hand from its start (for its frames).
    fn message(&mut self, dir: Dir, rec: &[u8], avail: usize, out: &mut ParseOutput) {
        match (dir, self.udp) {
            (Dir::ToServer, false) => match rpc::tcp_call(rec, true) {
                Ok((_, c)) => {
                    self.call_frames(dir, rec, 28, &c);
                    self.call(&c, out);
                }
                Err(_) => out.anomaly("nfs.malformed_data"),
            },
            (Dir::ToClient, false) => match rpc::tcp_reply(rec, true) {
                Ok((_, r)) => {
                    self.reply_frames(dir, rec, avail, &r);
                    self.reply(&r, out);
                }
                Err(_) => out.anomaly("nfs.malformed_data"),
            },
            (Dir::ToServer, true) => {
                if let Ok(c) = rpc::udp_call(rec) {
                    self.call_frames(dir, rec, 24, &c);
                    self.call(&c, out);
                }
            }
            (Dir::ToClient, true) => {
                if let Ok(r) = rpc::udp_reply(rec) {
                    self.reply_frames(dir, rec, avail, &r);
                    self.reply(&r, out);
                }
            }
        }
    }

    /// The start of a large record that is not all in: a WRITE call's or READ
    /// reply's file data is taken as it comes (true); else it waits.
    fn stream_start(&mut self, dir: Dir, cur: &[u8], size: usize, out: &mut ParseOutput) -> bool {
        if size < STREAM_MIN_RECORD {
            return false;
        }
        let d = dir.index();
        match dir {
            Dir::ToServer => {
                if cur.len() < 44 {
                    return false;
                }
                let Ok((_, c)) = rpc::tcp_call(cur, false) else {
                    return false;
                };
                if c.procedure != proc3::WRITE || c.version == 4 {
                    return false;
                }
                let Ok(w) = parser::write3(c.args, false) else {
                    return false;
                };
                self.remember_call(
                    c.xid,
                    Pending {
                        version: c.version,
                        procedure: c.procedure,
                        handle: w.handle.to_vec(),
                        ..Pending::default()
                    },
                );
                let Some(id) = self.write(c.xid, c.version, &w, out) else {
                    return false;
                };
                if w.stable == 2 {
                    // Suricata closes a FILE_SYNC write's transaction to more chunks at
                    // its first, and then finds no file for the rest of the record:
                    // those bytes are read as records (its file is cut short).
                    return true;
                }
                let s = &mut self.sides[d];
                s.file_tx = id;
                s.file_last = w.stable == 2;
                s.file_left = (w.data_len as usize).saturating_sub(w.data.len());
            }
            Dir::ToClient => {
                if cur.len() < 128 {
                    return false;
                }
                let Ok((h, _)) = rpc::tcp_reply(cur, false) else {
                    return false;
                };
                match self.calls.get(&h.xid) {
                    Some(p) if p.procedure == proc3::READ && p.version != 4 => {}
                    _ => return false,
                }
                let Ok((_, r)) = rpc::tcp_reply(cur, false) else {
                    return false;
                };
                let Ok(rr) = parser::read3_reply(r.results, false) else {
                    return false;
                };
                let Some(p) = self.calls.remove(&r.xid) else {
                    return false;
                };
                self.set_version(p.version);
                let Some(id) = self.read(&r, &rr, &p, out) else {
                    return false;
                };
                let s = &mut self.sides[d];
                s.file_tx = id;
                s.file_last = rr.eof;
                s.file_left = (rr.count as usize).saturating_sub(rr.data.len());
            }
        }
        let s = &mut self.sides[d];
        s.rec_left = size - cur.len();
        s.file_left = s.file_left.min(s.rec_left);
        true
    }

    /// Takes the file data of a record being streamed; returns the bytes used.
    fn stream_more(&mut self, dir: Dir, data: &[u8]) -> usize {
        let d = dir.index();
        let s = &mut self.sides[d];
        if s.rec_left == 0 {
            return 0;
        }
        let n = data.len().min(s.file_left);
        if n > 0 {
            s.file_left -= n;
            let done = s.file_left == 0;
            let last = s.file_last;
            let id = s.file_tx;
            if let Some(t) = self.txs.iter_mut().find(|t| t.id == id) {
                if let Some(f) = &mut t.file {
                    f.chunks += 1;
                    let off = f.next;
                    Self::chunk(t, off, &data[..n], done && last);
                }
                if done && last {
                    match dir {
                        Dir::ToServer => t.request_done = true,
                        Dir::ToClient => t.response_done = true,
                    }
                    if let Some(f) = &mut t.file {
                        f.closed = true;
                    }
                }
            }
        }
        let s = &mut self.sides[d];
        let used = s.rec_left.min(data.len());
        s.rec_left -= used;
        used
    }

    fn parse_tcp(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        self.seen[d] += data.len() as u64;
        let mut data = data;
        // An oversized record's rest, then a streamed record's rest.
        let skip = self.sides[d].skip.min(data.len());
        self.sides[d].skip -= skip;
        data = &data[skip..];
        let used = self.stream_more(dir, data);
        data = &data[used..];
        if data.is_empty() {
            return;
        }
        let owned;
        let mut cur: &[u8] = if self.sides[d].buf.is_empty() {
            data
        } else {
            let mut b = std::mem::take(&mut self.sides[d].buf);
            b.extend_from_slice(data);
            owned = b;
            &owned
        };
        if self.sides[d].resync {
            while !cur.is_empty() {
                match probe(Transport::Tcp, dir, cur) {
                    Probe::Match => {
                        self.sides[d].resync = false;
                        break;
                    }
                    Probe::NeedMore => break,
                    Probe::NoMatch => cur = &cur[1..],
                }
            }
            if self.sides[d].resync {
                self.sides[d].buf = cur.to_vec();
                return;
            }
        }
        let whole = cur;
        let end = self.seen[d];
        while !cur.is_empty() {
            let base = Some(end - cur.len() as u64);
            let head = match dir {
                Dir::ToServer => rpc::tcp_call_start(cur).map(|(h, ..)| h),
                Dir::ToClient => rpc::record_header(&mut rpc::Rd::new(cur)),
            };
            match head {
                Ok(h) => {
                    let size = h.size();
                    if size > cur.len() {
                        // Suricata makes a frame of what there is of a record whose
                        // file data it takes now, and of one it waits for (never
                        // inspected: only numbered here).
                        let streams = self.stream_start(dir, cur, size, out);
                        self.record_frames(dir, cur, whole, base, streams);
                        self.record_done();
                        if streams {
                            return;
                        }
                        if size > MAX_RECORD {
                            out.anomaly("nfs.malformed_data");
                            self.sides[d].skip = size - cur.len();
                            return;
                        }
                        break;
                    }
                    self.record_frames(dir, cur, whole, base, true);
                    self.message(dir, &cur[..size], cur.len(), out);
                    self.record_done();
                    cur = &cur[size..];
                }
                Err(Error::Incomplete) => {
                    self.record_frames(dir, cur, whole, base, false);
                    break;
                }
                Err(Error::Malformed) => {
                    // No length to go on: the flow cannot be followed.
                    self.record_frames(dir, cur, whole, base, false);
                    out.anomaly("nfs.malformed_data");
                    out.error = true;
                    self.die();
                    return;
                }
            }
        }
        self.sides[d].buf = cur.to_vec();
    }

    /// Nothing more is parsed; every transaction is done.
    fn die(&mut self) {
        self.dead = true;
        self.sides = Default::default();
        for t in &mut self.txs {
            t.request_done = true;
            t.response_done = true;
            // Their files end here, cut short.
            if let Some(file) = t.file.as_mut().and_then(|f| f.files.current()) {
                file.truncate();
            }
        }
    }
}

/// Where `part` (a slice of `whole`) starts in it.
fn offset_in(whole: &[u8], part: &[u8]) -> usize {
    (part.as_ptr() as usize)
        .saturating_sub(whole.as_ptr() as usize)
        .min(whole.len())
}

/// RPCSEC_GSS integrity: the data inside its wrapper.
fn gss_integrity(b: &[u8]) -> Result<&[u8], Error> {
    let mut rd = rpc::Rd::new(b);
    let n = rd.u32_if(|n| n < rpc::MAX_CREDS)?;
    rd.u32()?;
    rd.take(n as usize)
}

fn first_u32(b: &[u8]) -> u32 {
    b.first_chunk::<4>().map_or(0, |x| u32::from_be_bytes(*x))
}

/// Suricata's probes: a call of NFS v3 or v4 (TCP; v2 or v3 over UDP) with a known
/// credentials flavor, or an accepted and successful reply.
pub fn probe(transport: Transport, dir: Dir, data: &[u8]) -> Probe {
    let yes = |b: bool| if b { Probe::Match } else { Probe::NoMatch };
    match (transport, dir) {
        (Transport::Tcp, Dir::ToServer) => match rpc::tcp_call(data, false) {
            Ok((h, c)) => yes(h.len >= 40
                && c.msg_type == 0
                && c.rpc_version == 2
                && matches!(c.version, 3 | 4)
                && c.program == rpc::PROGRAM_NFS
                && c.procedure <= proc3::COMMIT
                && c.creds_flavor <= 6),
            Err(Error::Incomplete) => Probe::NeedMore,
            Err(Error::Malformed) => Probe::NoMatch,
        },
        (Transport::Tcp, Dir::ToClient) => match rpc::tcp_reply(data, false) {
            Ok((h, r)) => yes((24..=35000).contains(&h.len)
                && r.msg_type == 1
                && r.reply_state == 0
                && r.accept_state == 0),
            Err(Error::Incomplete) => match rpc::record_header(&mut rpc::Rd::new(data)) {
                Ok(h) => yes((24..=35000).contains(&h.len) && h.xid != 0 && h.msg_type == 1),
                Err(Error::Incomplete) => Probe::NeedMore,
                Err(Error::Malformed) => Probe::NoMatch,
            },
            Err(Error::Malformed) => Probe::NoMatch,
        },
        (Transport::Udp, Dir::ToServer) => match rpc::udp_call(data) {
            Ok(c) => yes(data.len() >= 48
                && c.msg_type == 0
                && c.program == rpc::PROGRAM_NFS
                && matches!(c.version, 2 | 3)),
            Err(_) => Probe::NoMatch,
        },
        (Transport::Udp, Dir::ToClient) => match rpc::udp_reply(data) {
            Ok(r) => yes(data.len() >= 32
                && r.msg_type == 1
                && r.reply_state == 0
                && r.accept_state == 0),
            Err(_) => Probe::NoMatch,
        },
    }
}

impl AppState for NfsState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if self.dead || data.is_empty() {
            return;
        }
        self.frames_begin(dir);
        if self.udp {
            self.record_frames(dir, data, data, None, true);
            self.message(dir, data, data.len(), out);
            self.record_done();
        } else {
            self.parse_tcp(dir, data, out);
        }
    }

    fn gap(&mut self, dir: Dir, len: u64, _out: &mut ParseOutput) {
        if self.dead {
            return;
        }
        let d = dir.index();
        self.seen[d] = self.seen[d].saturating_add(len);
        self.frames_begin(dir);
        let mut len = usize::try_from(len).unwrap_or(usize::MAX);
        // File data lost: a hole in its file.
        let s = &mut self.sides[d];
        if s.rec_left > 0 {
            let n = len.min(s.rec_left);
            let file_n = n.min(s.file_left);
            s.file_left -= file_n;
            s.rec_left -= n;
            len -= n;
            let id = s.file_tx;
            if file_n > 0
                && let Some(t) = self.txs.iter_mut().find(|t| t.id == id)
                && let Some(f) = &mut t.file
            {
                if let Some(file) = f.files.current() {
                    file.gap(file_n as u64);
                }
                f.next += file_n as u64;
            }
            if len == 0 {
                return;
            }
        }
        let s = &mut self.sides[d];
        s.buf.clear();
        s.skip = 0;
        s.resync = true;
        // Suricata: after a gap the other transactions of the direction are done.
        for t in self.txs.iter_mut().filter(|t| t.file.is_none()) {
            t.request_done = true;
            if dir == Dir::ToClient {
                t.response_done = true;
            }
        }
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        for t in &mut self.txs {
            t.eof[dir.index()] = true;
            if let Some(f) = &mut t.file
                && f.dir == Some(dir)
                && let Some(file) = f.files.current()
            {
                file.truncate();
            }
        }
    }

    fn tx_count(&self) -> usize {
        self.txs.len() + self.holders.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        match index.checked_sub(self.txs.len()) {
            None => self.txs.get(index).map(|t| t as &dyn Transaction),
            Some(i) => self.holders.get(i).map(|h| h as &dyn Transaction),
        }
    }

    fn set_rule_buffers(&mut self, used: &[crate::BufferId]) {
        use super::detect::{FILE_DATA_TC, FILE_DATA_TS};
        self.keep_file_data = used
            .iter()
            .any(|b| [FILE_DATA_TS, FILE_DATA_TC].contains(b));
    }

    fn set_frames(&mut self, used: &[crate::BufferId]) {
        // Suricata enables a frame type for both directions.
        self.frame_kinds = used
            .iter()
            .filter_map(|&b| super::detect::frame_kind(b))
            .fold(0, |m, (k, _)| m | 1 << k);
        // Id 1 is a TCP flow's stream frame's when a rule uses it (`next` is the id
        // last given).
        if !self.udp {
            let first = crate::stream_frame::first_frame_id(crate::AppProto::Nfs, used);
            for f in &mut self.frame_sides {
                f.next = first - 1;
            }
        }
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
    }

    fn set_files(&mut self, cfg: FileConfig) {
        self.files_cfg = cfg;
    }

    fn tx_files_mut(&mut self, index: usize, dir: Dir) -> Option<&mut Files> {
        let t = self.txs.get_mut(index)?;
        let f = t.file.as_mut()?;
        (f.dir == Some(dir)).then_some(&mut f.files)
    }
}
