//! ONC-RPC (RFC 5531) as Suricata's NFS parser reads it: the TCP record marking
//! header, calls (credentials AUTH_UNIX and RPCSEC_GSS parsed, others kept as bytes)
//! and replies, over TCP (one record fragment each) and UDP (one datagram each).
//!
//! Suricata's reading is kept where it departs from the RFC, since the records must
//! match its own: AUTH_UNIX's machine name is read without its XDR padding (so the
//! uid and gid of a name whose length is not a multiple of four are read shifted),
//! a UDP reply's verifier is read before its reply status, and a record fragment is
//! a record (fragments are not joined).

/// Why a read stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    /// More bytes are needed.
    Incomplete,
    /// The bytes are not what was expected.
    Malformed,
}

pub type Res<T> = Result<T, Error>;

/// Longest AUTH_UNIX machine name taken (Suricata's bound; Linux uses 64).
pub const MAX_MACHINE_NAME: u32 = 256;
/// Longest credentials and verifier taken (Suricata's bound).
pub const MAX_CREDS: u32 = 4096;
/// The NFS program number.
pub const PROGRAM_NFS: u32 = 100003;

/// A bounded big-endian reader: every read checks its length first.
#[derive(Debug, Clone, Copy)]
pub struct Rd<'a> {
    pub b: &'a [u8],
}

impl<'a> Rd<'a> {
    pub fn new(b: &'a [u8]) -> Rd<'a> {
        Rd { b }
    }

    pub fn u32(&mut self) -> Res<u32> {
        let (h, t) = self.b.split_first_chunk::<4>().ok_or(Error::Incomplete)?;
        self.b = t;
        Ok(u32::from_be_bytes(*h))
    }

    pub fn u64(&mut self) -> Res<u64> {
        let (h, t) = self.b.split_first_chunk::<8>().ok_or(Error::Incomplete)?;
        self.b = t;
        Ok(u64::from_be_bytes(*h))
    }

    /// A u32 that must pass `ok`.
    pub fn u32_if(&mut self, ok: impl Fn(u32) -> bool) -> Res<u32> {
        let v = self.u32()?;
        if ok(v) { Ok(v) } else { Err(Error::Malformed) }
    }

    pub fn take(&mut self, n: usize) -> Res<&'a [u8]> {
        if self.b.len() < n {
            return Err(Error::Incomplete);
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }

    /// A u32 length and that many bytes, no padding.
    pub fn data(&mut self) -> Res<&'a [u8]> {
        let n = self.u32()?;
        self.take(usize::try_from(n).map_err(|_| Error::Malformed)?)
    }

    /// XDR variable-length opaque data: a length, the bytes and their padding.
    pub fn opaque(&mut self) -> Res<&'a [u8]> {
        let d = self.data()?;
        self.take(pad(d.len()))?;
        Ok(d)
    }

    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }

    pub fn len(&self) -> usize {
        self.b.len()
    }

    pub fn is_empty(&self) -> bool {
        self.b.is_empty()
    }
}

/// XDR padding after `n` bytes.
pub fn pad(n: usize) -> usize {
    (4 - n % 4) % 4
}

/// The credentials of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Creds<'a> {
    Unix {
        machine_name: &'a [u8],
        uid: u32,
        gid: u32,
    },
    Gss {
        procedure: u32,
        service: u32,
    },
    Other,
}

/// An RPC call.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub xid: u32,
    pub msg_type: u32,
    pub rpc_version: u32,
    pub program: u32,
    pub version: u32,
    pub procedure: u32,
    pub creds_flavor: u32,
    pub creds: Creds<'a>,
    /// The procedure's arguments (what the record holds of them).
    pub args: &'a [u8],
}

/// An RPC reply.
#[derive(Debug, Clone, Copy)]
pub struct Reply<'a> {
    pub xid: u32,
    pub msg_type: u32,
    pub reply_state: u32,
    pub accept_state: u32,
    /// The procedure's results (what the record holds of them).
    pub results: &'a [u8],
}

/// A TCP record marking header and the RPC header's start: the fragment's length
/// (at least 24), xid and message type (0 call, 1 reply).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    pub last: bool,
    pub len: u32,
    pub xid: u32,
    pub msg_type: u32,
}

impl RecordHeader {
    /// The record's length with its 4-byte marker.
    pub fn size(&self) -> usize {
        self.len as usize + 4
    }
}

/// The record header of a TCP record (12 bytes).
pub fn record_header(rd: &mut Rd<'_>) -> Res<RecordHeader> {
    let mark = rd.u32()?;
    let len = mark & 0x7fff_ffff;
    if len < 24 {
        return Err(Error::Malformed);
    }
    let xid = rd.u32()?;
    let msg_type = rd.u32_if(|t| t <= 1)?;
    Ok(RecordHeader {
        last: mark & 0x8000_0000 != 0,
        len,
        xid,
        msg_type,
    })
}

fn creds<'a>(flavor: u32, body: &'a [u8]) -> Res<Creds<'a>> {
    let mut rd = Rd::new(body);
    match flavor {
        1 => {
            let _stamp = rd.u32()?;
            let n = rd.u32_if(|n| n < MAX_MACHINE_NAME)?;
            // Suricata's: no padding after the name.
            let machine_name = rd.take(n as usize)?;
            let uid = rd.u32()?;
            let gid = rd.u32()?;
            Ok(Creds::Unix {
                machine_name,
                uid,
                gid,
            })
        }
        6 => {
            let _version = rd.u32()?;
            let procedure = rd.u32()?;
            let _seq = rd.u32()?;
            let service = rd.u32()?;
            let _ctx = rd.data()?;
            Ok(Creds::Gss { procedure, service })
        }
        _ => Ok(Creds::Other),
    }
}

/// A call's body from its RPC version on (after the xid and message type).
fn call_body<'a>(rd: &mut Rd<'a>, xid: u32, msg_type: u32) -> Res<Call<'a>> {
    let rpc_version = rd.u32()?;
    let program = rd.u32()?;
    let version = rd.u32()?;
    let procedure = rd.u32()?;
    let creds_flavor = rd.u32()?;
    let n = rd.u32_if(|n| n < MAX_CREDS)?;
    let creds = creds(creds_flavor, rd.take(n as usize)?)?;
    let _verifier_flavor = rd.u32()?;
    let n = rd.u32_if(|n| n < MAX_CREDS)?;
    rd.take(n as usize)?;
    Ok(Call {
        xid,
        msg_type,
        rpc_version,
        program,
        version,
        procedure,
        creds_flavor,
        creds,
        args: &[],
    })
}

/// The program data of a record: all of it (`complete`), or what there is.
fn record_data<'a>(rd: &mut Rd<'a>, start: usize, size: usize, complete: bool) -> Res<&'a [u8]> {
    let used = start - rd.len();
    if used > size {
        return Err(Error::Malformed);
    }
    if complete {
        rd.take(size - used)
    } else {
        Ok(rd.rest())
    }
}

/// A call in a TCP record (`data` starts at its marker); `complete`: the record's
/// arguments are all there, else the arguments are what follows.
pub fn tcp_call(data: &[u8], complete: bool) -> Res<(RecordHeader, Call<'_>)> {
    let mut rd = Rd::new(data);
    let h = record_header(&mut rd)?;
    let mut c = call_body(&mut rd, h.xid, h.msg_type)?;
    c.args = record_data(&mut rd, data.len(), h.size(), complete)?;
    Ok((h, c))
}

/// The start of a call in a TCP record, up to its procedure (28 bytes): (header,
/// version, procedure).
pub fn tcp_call_start(data: &[u8]) -> Res<(RecordHeader, u32, u32)> {
    let mut rd = Rd::new(data);
    let h = record_header(&mut rd)?;
    let _rpc_version = rd.u32()?;
    let _program = rd.u32()?;
    let version = rd.u32()?;
    let procedure = rd.u32()?;
    Ok((h, version, procedure))
}

/// A reply in a TCP record.
pub fn tcp_reply(data: &[u8], complete: bool) -> Res<(RecordHeader, Reply<'_>)> {
    let mut rd = Rd::new(data);
    let h = record_header(&mut rd)?;
    let reply_state = rd.u32_if(|v| v <= 1)?;
    let _verifier_flavor = rd.u32()?;
    let n = rd.u32_if(|n| n < MAX_CREDS)?;
    rd.take(n as usize)?;
    let accept_state = rd.u32()?;
    let results = record_data(&mut rd, data.len(), h.size(), complete)?;
    Ok((
        h,
        Reply {
            xid: h.xid,
            msg_type: h.msg_type,
            reply_state,
            accept_state,
            results,
        },
    ))
}

/// A call in a UDP datagram.
pub fn udp_call(data: &[u8]) -> Res<Call<'_>> {
    let mut rd = Rd::new(data);
    let xid = rd.u32()?;
    let msg_type = rd.u32_if(|t| t <= 1)?;
    let mut c = call_body(&mut rd, xid, msg_type)?;
    c.args = rd.rest();
    Ok(c)
}

/// A reply in a UDP datagram (its verifier read before its reply status, as
/// Suricata's).
pub fn udp_reply(data: &[u8]) -> Res<Reply<'_>> {
    let mut rd = Rd::new(data);
    let xid = rd.u32()?;
    let msg_type = rd.u32_if(|t| t <= 1)?;
    let _verifier_flavor = rd.u32()?;
    let n = rd.u32_if(|n| n < MAX_CREDS)?;
    rd.take(n as usize)?;
    let reply_state = rd.u32_if(|v| v <= 1)?;
    let accept_state = rd.u32()?;
    Ok(Reply {
        xid,
        msg_type,
        reply_state,
        accept_state,
        results: rd.rest(),
    })
}

/// The name of a reply status (EVE `rpc.status`).
pub fn status_name(s: u32) -> std::borrow::Cow<'static, str> {
    match s {
        0 => "ACCEPTED".into(),
        1 => "DENIED".into(),
        n => n.to_string().into(),
    }
}

/// The name of a credentials flavor (EVE `rpc.auth_type`).
pub fn auth_name(a: u32) -> std::borrow::Cow<'static, str> {
    let s = match a {
        0 => "NULL",
        1 => "UNIX",
        2 => "SHORT",
        3 => "DH",
        4 => "KERB",
        5 => "RSA",
        6 => "GSS",
        n => return n.to_string().into(),
    };
    s.into()
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A LOOKUP call over TCP: marker (last, 92 bytes), xid 0x101, call, RPC 2, NFS
    /// v3 procedure 3, AUTH_UNIX (stamp, "client1" unpadded-read, uid 1000, gid 100,
    /// one aux gid), AUTH_NULL verifier, then the arguments.
    pub const LOOKUP_CALL: &[u8] = &[
        0x80, 0, 0, 0x5c, 0, 0, 1, 1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 0x86, 0xa3, 0, 0, 0, 3, 0, 0,
        0, 3, 0, 0, 0, 1, 0, 0, 0, 0x20, 0x5f, 0, 0, 1, 0, 0, 0, 7, b'c', b'l', b'i', b'e', b'n',
        b't', b'1', 0, 0, 0, 3, 0xe8, 0, 0, 0, 0x64, 0, 0, 0, 1, 0, 0, 0, 0x64, 0, 0, 0, 0, 0, 0,
        0, 0, // verifier
        0, 0, 0, 4, 1, 2, 3, 4, // dir handle
        0, 0, 0, 5, b'a', b'.', b't', b'x', b't', 0, 0, 0, // name
    ];

    #[test]
    fn a_tcp_call_and_its_quirks() {
        let (h, c) = tcp_call(LOOKUP_CALL, true).unwrap();
        assert!(h.last);
        assert_eq!(h.size(), LOOKUP_CALL.len());
        assert_eq!(
            (c.xid, c.program, c.version, c.procedure),
            (0x101, 100003, 3, 3)
        );
        // The name's padding is read as the uid's first byte.
        assert_eq!(
            c.creds,
            Creds::Unix {
                machine_name: b"client1",
                uid: 3,
                gid: 0xe800_0000
            }
        );
        assert_eq!(c.args.len(), 20);
        assert_eq!(
            tcp_call_start(&LOOKUP_CALL[..27]).err(),
            Some(Error::Incomplete)
        );
        assert_eq!(tcp_call_start(LOOKUP_CALL).unwrap().2, 3);
        // Cut short: incomplete when all of it is wanted, the rest otherwise.
        let cut = &LOOKUP_CALL[..LOOKUP_CALL.len() - 4];
        assert_eq!(tcp_call(cut, true).err(), Some(Error::Incomplete));
        assert_eq!(tcp_call(cut, false).unwrap().1.args.len(), 16);
        // A fragment shorter than an RPC header, a bad message type.
        assert_eq!(
            record_header(&mut Rd::new(&[0x80, 0, 0, 8, 0, 0, 0, 1, 0, 0, 0, 0])).err(),
            Some(Error::Malformed)
        );
        assert_eq!(
            record_header(&mut Rd::new(&[0x80, 0, 0, 80, 0, 0, 0, 1, 0, 0, 0, 2])).err(),
            Some(Error::Malformed)
        );
    }

    #[test]
    fn replies() {
        // TCP: marker, xid, reply, accepted, AUTH_NULL verifier, success, status 0.
        let r = [
            0x80, 0, 0, 28, 0, 0, 0, 9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
            0, 0, 0, 0,
        ];
        let (_, rep) = tcp_reply(&r, true).unwrap();
        assert_eq!((rep.xid, rep.reply_state, rep.accept_state), (9, 0, 0));
        assert_eq!(rep.results, &[0, 0, 0, 0]);
        let u = udp_reply(&r[4..]).unwrap();
        assert_eq!(u.results, &[0, 0, 0, 0]);
        assert_eq!(status_name(1), "DENIED");
        assert_eq!(auth_name(6), "GSS");
        assert_eq!(auth_name(9), "9");
    }
}
