//! RFB per-flow state: one handshake state machine for both directions, as Suricata's
//! (the protocol is lock-step: each side waits for the other's message), and the one
//! transaction it fills, made when the server's ProtocolVersion comes.
//!
//! Bytes of a message that has not all come wait in the direction's pending buffer
//! (each message is bounded, see [`super::parser`]); once the handshake is over, or the
//! parser lost track of it, the rest of the flow is skipped.

use super::parser::{self, Error, ServerInit, Version};
use crate::{AppState, BufferId, Dir, ParseOutput, Transaction};

/// Bytes of each direction kept for the frames when a rule inspects them: the
/// handshake's, and what follows them up to the end of its last frame.
pub const MAX_KEPT: usize = 2 * parser::MAX_NAME_LEN;
/// Handshake messages a direction may make frames for (a handshake has at most six).
pub const MAX_FRAMES: usize = 16;

/// A PDU frame: where it starts in its direction's stream and how long it is. As
/// Suricata's, a frame runs from its message's start for as many bytes as the parse
/// call had used up to the message's end (so a message that shared a call with the
/// ones before it gets a longer frame).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub id: u64,
    pub offset: u64,
    pub len: u64,
}

/// The one transaction of an RFB flow: its handshake.
#[derive(Debug, Clone, Default)]
pub struct RfbTx {
    pub server_version: Option<Version>,
    pub client_version: Option<Version>,
    /// The security type in use: the server's choice (3.3: 0, 1 or 2 only) or the
    /// client's (3.7, 3.8: any).
    pub security_type: Option<u32>,
    pub vnc_challenge: Option<[u8; 16]>,
    pub vnc_response: Option<[u8; 16]>,
    /// The SecurityResult, kept when it is 0 (OK) only, as Suricata does.
    pub security_result: Option<u32>,
    pub failure_reason: Option<String>,
    /// ClientInit's shared-flag.
    pub shared: Option<u8>,
    pub server_init: Option<ServerInit>,
    /// The handshake is over (ServerInit parsed) or the parser stopped following it.
    pub complete: bool,
    /// Each direction ended.
    pub eof: [bool; 2],
    /// Messages parsed, both directions.
    pub msgs: usize,
    /// Per direction, its PDU frames.
    pub frames: [Vec<Frame>; 2],
    /// Per direction, the stream's bytes from its start (when frames are inspected;
    /// at most [`MAX_KEPT`]).
    pub kept: [Vec<u8>; 2],
    /// Per direction, no more frames will come.
    pub frames_done: [bool; 2],
}

impl RfbTx {
    /// The bytes of frame `f` of direction `d` seen so far, and whether they are all.
    pub fn frame_bytes(&self, d: usize, f: &Frame) -> (&[u8], bool) {
        let kept = &self.kept[d];
        let start = usize::try_from(f.offset)
            .unwrap_or(usize::MAX)
            .min(kept.len());
        let end = usize::try_from(f.offset + f.len)
            .unwrap_or(usize::MAX)
            .min(kept.len());
        (&kept[start..end], (kept.len() as u64) >= f.offset + f.len)
    }
}

/// Where the handshake is: the message expected next, and from which side.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    TcServerVersion,
    TsClientVersion,
    TcSecurityTypes,
    TcServerSecurityType,
    TsSecurityTypeSelection,
    TcVncChallenge,
    TsVncResponse,
    TcSecurityResult,
    TcFailureReason,
    TsClientInit,
    TcServerInit,
    /// The handshake is over, or not followed any further.
    Skip,
}

impl St {
    fn dir(self) -> Option<Dir> {
        use St::*;
        match self {
            TsClientVersion | TsSecurityTypeSelection | TsVncResponse | TsClientInit => {
                Some(Dir::ToServer)
            }
            Skip => None,
            _ => Some(Dir::ToClient),
        }
    }
}

/// What one message did to the state machine.
enum Step {
    /// Parsed, `n` bytes: go on with the next.
    Next(usize),
    /// Parsed, and the rest of the call's bytes are ignored.
    Stop,
}

/// One flow's RFB state.
#[derive(Debug)]
pub struct RfbState {
    st: St,
    tx: RfbTx,
    has_tx: bool,
    freed: bool,
    /// A rule inspects RFB frames: the streams' bytes are kept.
    keep_frames: bool,
    /// Per direction, bytes of a message still coming.
    pending: [Vec<u8>; 2],
    /// Per direction, the stream offset of the next byte, and of the current parse
    /// call's first byte.
    pos: [u64; 2],
    call_start: [u64; 2],
    next_frame: [u64; 2],
}

impl Default for RfbState {
    fn default() -> Self {
        RfbState::new()
    }
}

impl RfbState {
    pub fn new() -> RfbState {
        RfbState {
            st: St::TcServerVersion,
            tx: RfbTx::default(),
            has_tx: false,
            freed: false,
            keep_frames: false,
            pending: [Vec::new(), Vec::new()],
            pos: [0; 2],
            call_start: [0; 2],
            next_frame: [1; 2],
        }
    }

    /// The handshake's transaction, once the server's version came.
    pub fn transaction(&self) -> Option<&RfbTx> {
        (self.has_tx && !self.freed).then_some(&self.tx)
    }

    /// Stops following the handshake, raising `event` on the transaction (when there
    /// is one) and marking it complete when `complete`.
    fn stop(&mut self, out: &mut ParseOutput, event: &'static str, complete: bool) {
        if self.has_tx {
            out.anomaly(event);
            if complete {
                self.tx.complete = true;
            }
        }
        self.st = St::Skip;
    }

    /// One message in direction `dir`, from the start of `b` (bytes not used by the
    /// messages before it in this call: `before`).
    fn message(
        &mut self,
        dir: Dir,
        b: &[u8],
        before: usize,
        out: &mut ParseOutput,
    ) -> Result<Step, Error> {
        use St::*;
        if self.st == Skip {
            return Ok(Step::Stop);
        }
        if self.st.dir() != Some(dir) {
            // Data from the side that should be waiting: Suricata's parser gives up on
            // the handshake, and so does this one.
            self.stop(out, "rfb.confused_state", true);
            return Ok(Step::Stop);
        }
        let n = match self.st {
            TcServerVersion | TsClientVersion => {
                let (v, n) = parser::version(b)?;
                if self.st == TcServerVersion {
                    self.has_tx = true;
                    self.tx.server_version = Some(v);
                    self.st = TsClientVersion;
                } else {
                    // In 3.3 the server decides the security type.
                    self.st = if v.major == "003" && v.minor == "003" {
                        TcServerSecurityType
                    } else {
                        TcSecurityTypes
                    };
                    self.tx.client_version = Some(v);
                }
                n
            }
            TcSecurityTypes => {
                let (types, n) = parser::security_types(b)?;
                self.st = if types.is_empty() {
                    TcFailureReason
                } else {
                    TsSecurityTypeSelection
                };
                n
            }
            TcServerSecurityType => {
                let (t, n) = parser::u32_message(b)?;
                self.frame(dir, n, before);
                self.st = match t {
                    0 => TcFailureReason,
                    1 => TsClientInit,
                    2 => TcVncChallenge,
                    _ => {
                        self.stop(out, "rfb.unimplemented_security_type", true);
                        return Ok(Step::Stop);
                    }
                };
                self.tx.security_type = Some(t);
                return Ok(Step::Next(n));
            }
            TsSecurityTypeSelection => {
                let (t, n) = parser::u8_message(b)?;
                self.frame(dir, n, before);
                self.tx.security_type = Some(u32::from(t));
                self.st = match t {
                    2 => TcVncChallenge,
                    1 => TsClientInit,
                    _ => {
                        // Maybe a proprietary type: the transaction stays open, as
                        // Suricata's does.
                        self.stop(out, "rfb.unimplemented_security_type", false);
                        return Ok(Step::Stop);
                    }
                };
                return Ok(Step::Next(n));
            }
            TcVncChallenge => {
                let (c, n) = parser::vnc_auth(b)?;
                self.tx.vnc_challenge = Some(c);
                self.st = TsVncResponse;
                n
            }
            TsVncResponse => {
                let (r, n) = parser::vnc_auth(b)?;
                self.tx.vnc_response = Some(r);
                self.st = TcSecurityResult;
                n
            }
            TcSecurityResult => {
                let (status, n) = parser::u32_message(b)?;
                self.frame(dir, n, before);
                match status {
                    0 => {
                        self.tx.security_result = Some(0);
                        self.st = TsClientInit;
                    }
                    1 => self.st = TcFailureReason,
                    _ => {
                        self.stop(out, "rfb.unknown_security_result", true);
                        return Ok(Step::Stop);
                    }
                }
                return Ok(Step::Next(n));
            }
            TcFailureReason => {
                // No frame; the state stays (what follows is read as another reason).
                let (reason, _) = parser::failure_reason(b)?;
                self.tx.failure_reason = Some(reason);
                self.tx.msgs += 1;
                out.trigger_raw(dir);
                return Ok(Step::Stop);
            }
            TsClientInit => {
                let (shared, n) = parser::u8_message(b)?;
                self.tx.shared = Some(shared);
                self.st = TcServerInit;
                n
            }
            TcServerInit => {
                let (init, n) = parser::server_init(b)?;
                self.tx.server_init = Some(init);
                self.tx.complete = true;
                self.st = Skip;
                n
            }
            // Returned above.
            Skip => return Ok(Step::Stop),
        };
        self.frame(dir, n, before);
        Ok(Step::Next(n))
    }

    /// Records the frame of a message of `n` bytes that follows `before` bytes of this
    /// call.
    fn frame(&mut self, dir: Dir, n: usize, before: usize) {
        let d = dir.index();
        self.tx.msgs += 1;
        let call_start = self.call_start[d];
        let frames = &mut self.tx.frames[d];
        if frames.len() < MAX_FRAMES {
            frames.push(Frame {
                id: self.next_frame[d],
                offset: call_start + before as u64,
                len: (before + n) as u64,
            });
        }
        self.next_frame[d] += 1;
    }

    /// Keeps the bytes of direction `d` the frames need.
    fn keep(&mut self, d: usize, data: &[u8]) {
        if !self.keep_frames {
            return;
        }
        let kept = &mut self.tx.kept[d];
        let need = if self.st == St::Skip {
            self.tx.frames[d]
                .iter()
                .map(|f| f.offset + f.len)
                .max()
                .unwrap_or(0)
        } else {
            u64::MAX
        };
        let room = (need.min(MAX_KEPT as u64) as usize).saturating_sub(kept.len());
        kept.extend_from_slice(&data[..room.min(data.len())]);
    }

    fn run(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let d = dir.index();
        // The call starts at the first byte not used yet, as Suricata's next call does.
        self.call_start[d] = self.pos[d] - self.pending[d].len() as u64;
        self.pos[d] += data.len() as u64;
        self.keep(d, data);
        if self.st == St::Skip {
            self.tx.frames_done[d] = true;
            return;
        }
        let mut buf = std::mem::take(&mut self.pending[d]);
        buf.extend_from_slice(data);
        let mut used = 0;
        while used < buf.len() {
            match self.message(dir, &buf[used..], used, out) {
                Ok(Step::Next(n)) => {
                    // Each handshake message lets stream rules see it, as Suricata's
                    // parser asks.
                    out.trigger_raw(dir);
                    used += n;
                }
                Ok(Step::Stop) => used = buf.len(),
                Err(Error::Incomplete) => break,
                Err(Error::Malformed) => {
                    if matches!(self.st, St::TcServerVersion | St::TsClientVersion) {
                        // Not even a version: Suricata's parser fails on the flow.
                        out.failed = true;
                        self.st = St::Skip;
                    } else {
                        self.stop(out, "rfb.malformed_message", true);
                    }
                    used = buf.len();
                }
            }
        }
        if self.st == St::Skip {
            self.tx.frames_done = [true; 2];
            self.pending = [Vec::new(), Vec::new()];
        } else if used < buf.len() {
            buf.drain(..used);
            self.pending[d] = buf;
        }
    }
}

impl AppState for RfbState {
    fn set_frames(&mut self, used: &[BufferId]) {
        self.keep_frames = used.iter().any(|&b| super::detect::frame_dir(b).is_some());
        // Id 1 is the stream frame's when a rule uses it.
        self.next_frame = [crate::stream_frame::first_frame_id(crate::AppProto::Rfb, used); 2];
    }

    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        if !data.is_empty() {
            self.run(dir, data, out);
        }
    }

    fn gap(&mut self, _dir: Dir, _len: u64, out: &mut ParseOutput) {
        // Suricata's RFB parser takes no gaps: a gap is a parse error of the flow.
        out.failed = true;
        self.st = St::Skip;
        self.tx.frames_done = [true; 2];
    }

    fn eof(&mut self, dir: Dir, _out: &mut ParseOutput) {
        self.tx.eof[dir.index()] = true;
        self.tx.frames_done[dir.index()] = true;
    }

    fn tx_count(&self) -> usize {
        usize::from(self.transaction().is_some())
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        if index == 0 {
            self.transaction().map(|t| t as &dyn Transaction)
        } else {
            None
        }
    }

    fn free_below(&mut self, id: u64) {
        if id > 0 && self.has_tx {
            self.freed = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rfb::parser::tests::SERVER_INIT;

    const CHALLENGE: [u8; 16] = [0x11; 16];
    const RESPONSE: [u8; 16] = [0x22; 16];

    fn feed(s: &mut RfbState, steps: &[(Dir, &[u8])]) -> Vec<&'static str> {
        let mut out = ParseOutput::default();
        for (d, b) in steps {
            s.parse(*d, b, &mut out);
        }
        assert!(!out.failed);
        out.anomalies
    }

    use Dir::{ToClient as TC, ToServer as TS};

    #[test]
    fn a_3_8_handshake_with_vnc_auth_and_its_frames() {
        let mut s = RfbState::new();
        s.set_frames(&[super::super::detect::FRAME_PDU_TS]);
        let ev = feed(
            &mut s,
            &[
                (TC, b"RFB 003.008\n"),
                (TS, b"RFB 003.008\n"),
                (TC, b"\x02\x01\x02"),
                (TS, b"\x02"),
                (TC, &CHALLENGE),
                (TS, &RESPONSE),
                (TC, b"\x00\x00\x00\x00"),
                (TS, b"\x01"),
            ],
        );
        assert!(ev.is_empty(), "{ev:?}");
        // ServerInit byte by byte, the last byte with what follows it (a
        // FramebufferUpdate's start): not the handshake's, skipped.
        let (last, init) = SERVER_INIT.split_last().unwrap();
        for b in init {
            feed(&mut s, &[(TC, std::slice::from_ref(b))]);
        }
        assert!(feed(&mut s, &[(TC, &[*last, 0, 0, 0, 1])]).is_empty());
        let tx = s.transaction().unwrap();
        assert!(tx.complete);
        assert_eq!(tx.security_type, Some(2));
        assert_eq!(tx.vnc_challenge, Some(CHALLENGE));
        assert_eq!(tx.vnc_response, Some(RESPONSE));
        assert_eq!(tx.security_result, Some(0));
        assert_eq!(tx.shared, Some(1));
        assert_eq!(tx.server_init.as_ref().unwrap().width, 1280);
        let tc: Vec<_> = tx.frames[1]
            .iter()
            .map(|f| (f.id, f.offset, f.len))
            .collect();
        assert_eq!(
            tc,
            [(1, 0, 12), (2, 12, 3), (3, 15, 16), (4, 31, 4), (5, 35, 54)]
        );
        let ts: Vec<_> = tx.frames[0]
            .iter()
            .map(|f| (f.id, f.offset, f.len))
            .collect();
        assert_eq!(ts, [(1, 0, 12), (2, 12, 1), (3, 13, 16), (4, 29, 1)]);
        assert_eq!(tx.frame_bytes(0, &tx.frames[0][1]), (&b"\x02"[..], true));
        // Everything after is skipped.
        assert!(feed(&mut s, &[(TS, b"\x03\x00\x00\x00"), (TC, b"xx")]).is_empty());
    }

    #[test]
    fn messages_in_one_call_make_frames_from_the_calls_start() {
        let mut s = RfbState::new();
        let mut tc = b"\x00\x00\x00\x02".to_vec();
        tc.extend_from_slice(&CHALLENGE);
        feed(
            &mut s,
            &[(TC, b"RFB 003.003\n"), (TS, b"RFB 003.003\n"), (TC, &tc)],
        );
        let tx = s.transaction().unwrap();
        let tc: Vec<_> = tx.frames[1].iter().map(|f| (f.offset, f.len)).collect();
        assert_eq!(tc, [(0, 12), (12, 4), (16, 20)]);
    }

    #[test]
    fn a_3_3_server_chooses() {
        let mut s = RfbState::new();
        let ev = feed(
            &mut s,
            &[
                (TC, b"RFB 003.003\n"),
                (TS, b"RFB 003.003\n"),
                (TC, b"\x00\x00\x00\x01"),
                (TS, b"\x00"),
                (TC, SERVER_INIT),
            ],
        );
        assert!(ev.is_empty());
        let tx = s.transaction().unwrap();
        assert_eq!(tx.security_type, Some(1));
        assert_eq!(tx.shared, Some(0));
        assert!(tx.complete);

        let mut s = RfbState::new();
        let ev = feed(
            &mut s,
            &[
                (TC, b"RFB 003.003\n"),
                (TS, b"RFB 003.003\n"),
                (TC, b"\x00\x00\x00\x09"),
            ],
        );
        assert_eq!(ev, ["rfb.unimplemented_security_type"]);
        let tx = s.transaction().unwrap();
        assert_eq!(tx.security_type, None);
        assert!(tx.complete);
    }

    #[test]
    fn anomalies() {
        let start: &[(Dir, &[u8])] = &[(TC, b"RFB 003.008\n"), (TS, b"RFB 003.008\n")];
        // An unknown type chosen by the client: flagged, the transaction left open.
        let mut s = RfbState::new();
        feed(&mut s, start);
        let ev = feed(&mut s, &[(TC, b"\x01\x10"), (TS, b"\x10")]);
        assert_eq!(ev, ["rfb.unimplemented_security_type"]);
        assert_eq!(s.transaction().unwrap().security_type, Some(16));
        assert!(!s.transaction().unwrap().complete);

        let mut s = RfbState::new();
        feed(&mut s, start);
        let ev = feed(
            &mut s,
            &[
                (TC, b"\x01\x02"),
                (TS, b"\x02"),
                (TC, &CHALLENGE),
                (TS, &RESPONSE),
                (TC, b"\x00\x00\x00\x07"),
            ],
        );
        assert_eq!(ev, ["rfb.unknown_security_result"]);
        assert!(s.transaction().unwrap().complete);

        // The client speaks out of turn.
        let mut s = RfbState::new();
        feed(&mut s, start);
        let ev = feed(&mut s, &[(TS, b"\x01")]);
        assert_eq!(ev, ["rfb.confused_state"]);

        // A failure reason that is not UTF-8.
        let mut s = RfbState::new();
        feed(&mut s, start);
        let ev = feed(&mut s, &[(TC, b"\x00\x00\x00\x00\x02\xff\xfe")]);
        assert_eq!(ev, ["rfb.malformed_message"]);

        // A failed authentication and its reason; the result is not kept.
        let mut s = RfbState::new();
        feed(&mut s, start);
        feed(
            &mut s,
            &[
                (TC, b"\x01\x02"),
                (TS, b"\x02"),
                (TC, &CHALLENGE),
                (TS, &RESPONSE),
                (TC, b"\x00\x00\x00\x01"),
                (TC, b"\x00\x00\x00\x03bad"),
            ],
        );
        let tx = s.transaction().unwrap();
        assert_eq!(tx.security_result, None);
        assert_eq!(tx.failure_reason.as_deref(), Some("bad"));

        // Client data first: no transaction, nothing raised.
        let mut s = RfbState::new();
        assert!(feed(&mut s, &[(TS, b"RFB 003.008\n")]).is_empty());
        assert!(s.transaction().is_none());

        // Not a version: the parser fails.
        let mut s = RfbState::new();
        let mut out = ParseOutput::default();
        s.parse(TC, b"RFB 3.8\n....", &mut out);
        assert!(out.failed);
    }
}
