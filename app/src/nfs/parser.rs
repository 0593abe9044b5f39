//! The NFS procedures' arguments and results as Suricata's parser reads them: NFSv3
//! (RFC 1813), NFSv2 (RFC 1094, its LOOKUP and READ) and the NFSv4 COMPOUND
//! operations (RFC 7530, 8881) it knows. Each reader takes what Suricata's takes, so
//! a record it cannot read (an unknown NFSv4 operation, a READ reply whose data is
//! short) fails here too.

use super::rpc::{Error, Rd, Res, pad};

/// Longest NFSv3 file handle taken (RFC 1813's NFS3_FHSIZE).
pub const MAX_HANDLE3: u32 = 64;
/// Most operations of a COMPOUND (Suricata's bound).
pub const MAX_COMPOUND_OPS: u32 = 64;
/// Most entries of a READDIRPLUS reply read.
pub const MAX_DIR_ENTRIES: usize = 4096;
/// Bytes of NFSv3 attributes (fattr3) and NFSv2 ones (fattr).
pub const FATTR3_LEN: usize = 84;
pub const FATTR2_LEN: usize = 68;

/// NFSv2's WRITE (RFC 1094), which Suricata 8.0.6 does not take for a file transfer.
pub const PROC2_WRITE: u32 = 8;

/// NFSv3 procedures (RFC 1813, section 3).
pub mod proc3 {
    pub const NULL: u32 = 0;
    pub const GETATTR: u32 = 1;
    pub const LOOKUP: u32 = 3;
    pub const ACCESS: u32 = 4;
    pub const READ: u32 = 6;
    pub const WRITE: u32 = 7;
    pub const CREATE: u32 = 8;
    pub const MKDIR: u32 = 9;
    pub const REMOVE: u32 = 12;
    pub const RMDIR: u32 = 13;
    pub const RENAME: u32 = 14;
    pub const READDIRPLUS: u32 = 17;
    pub const COMMIT: u32 = 21;
}

/// NFSv4 procedures and operations (RFC 7530, 8881).
pub mod op4 {
    pub const NULL: u32 = 0;
    pub const COMPOUND: u32 = 1;
    pub const ACCESS: u32 = 3;
    pub const CLOSE: u32 = 4;
    pub const COMMIT: u32 = 5;
    pub const CREATE: u32 = 6;
    pub const DELEGRETURN: u32 = 8;
    pub const GETATTR: u32 = 9;
    pub const GETFH: u32 = 10;
    pub const LOOKUP: u32 = 15;
    pub const OPEN: u32 = 18;
    pub const OPEN_CONFIRM: u32 = 20;
    pub const PUTFH: u32 = 22;
    pub const PUTROOTFH: u32 = 24;
    pub const READ: u32 = 25;
    pub const READDIR: u32 = 26;
    pub const REMOVE: u32 = 28;
    pub const RENAME: u32 = 29;
    pub const RENEW: u32 = 30;
    pub const SAVEFH: u32 = 32;
    pub const SETATTR: u32 = 34;
    pub const SETCLIENTID: u32 = 35;
    pub const SETCLIENTID_CONFIRM: u32 = 36;
    pub const WRITE: u32 = 38;
    pub const EXCHANGE_ID: u32 = 42;
    pub const CREATE_SESSION: u32 = 43;
    pub const DESTROY_SESSION: u32 = 44;
    pub const GETDEVINFO: u32 = 47;
    pub const LAYOUTGET: u32 = 50;
    pub const LAYOUTRETURN: u32 = 51;
    pub const SECINFO_NO_NAME: u32 = 52;
    pub const SEQUENCE: u32 = 53;
    pub const DESTROY_CLIENTID: u32 = 57;
    pub const RECLAIM_COMPLETE: u32 = 58;
}

/// An NFSv3 file handle: a length (at most [`MAX_HANDLE3`]) and the bytes (handles
/// are multiples of four long; Suricata reads no padding).
pub fn handle3<'a>(rd: &mut Rd<'a>) -> Res<&'a [u8]> {
    let n = rd.u32_if(|n| n <= MAX_HANDLE3)?;
    rd.take(n as usize)
}

/// A name: a length and the bytes, its padding skipped when there.
fn name<'a>(rd: &mut Rd<'a>) -> Res<&'a [u8]> {
    let n = rd.data()?;
    let p = pad(n.len()).min(rd.len());
    rd.take(p)?;
    Ok(n)
}

/// A directory handle and a name (diropargs3), what LOOKUP, CREATE, REMOVE, MKDIR and
/// RMDIR start with.
pub fn dirop3(args: &[u8]) -> Res<(&[u8], &[u8])> {
    let mut rd = Rd::new(args);
    let h = handle3(&mut rd)?;
    let n = name(&mut rd)?;
    Ok((h, n))
}

/// The handle an ACCESS, GETATTR, READDIRPLUS, READ or COMMIT call starts with, and
/// what each has after it (all of which must be there).
pub fn handle_args3(procedure: u32, args: &[u8]) -> Res<(&[u8], u64)> {
    let mut rd = Rd::new(args);
    let h = handle3(&mut rd)?;
    let mut offset = 0;
    match procedure {
        proc3::ACCESS => {
            rd.u32()?;
        }
        proc3::READDIRPLUS => {
            rd.u64()?;
            rd.take(8)?;
            rd.u32()?;
            rd.u32()?;
        }
        proc3::READ | proc3::COMMIT => {
            offset = rd.u64()?;
            rd.u32()?;
        }
        _ => {}
    }
    Ok((h, offset))
}

/// RENAME's arguments: (from handle, from name, to name).
pub fn rename3(args: &[u8]) -> Res<(&[u8], &[u8], &[u8])> {
    let mut rd = Rd::new(args);
    let fh = handle3(&mut rd)?;
    let from = name(&mut rd)?;
    let _to_dir = handle3(&mut rd)?;
    let to = name(&mut rd)?;
    Ok((fh, from, to))
}

/// A WRITE call's arguments: the handle, where, how much and how stably, and the
/// data (what the record holds of it when not `complete`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Write<'a> {
    pub handle: &'a [u8],
    pub offset: u64,
    pub count: u32,
    pub stable: u32,
    pub data_len: u32,
    pub data: &'a [u8],
}

pub fn write3(args: &[u8], complete: bool) -> Res<Write<'_>> {
    let mut rd = Rd::new(args);
    let handle = handle3(&mut rd)?;
    let offset = rd.u64()?;
    let count = rd.u32()?;
    let stable = rd.u32_if(|s| s <= 2)?;
    let data_len = rd.u32_if(|n| n <= count)?;
    let data = if complete {
        rd.take(data_len as usize)?
    } else {
        let n = rd.len().min(data_len as usize);
        rd.take(n)?
    };
    Ok(Write {
        handle,
        offset,
        count,
        stable,
        data_len,
        data,
    })
}

/// A READ reply's results (any version's), as Suricata's generic read reply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadReply<'a> {
    pub status: u32,
    /// NFSv2's attributes (for the file's size).
    pub attr: &'a [u8],
    pub count: u32,
    pub eof: bool,
    pub data: &'a [u8],
}

pub fn read3_reply(res: &[u8], complete: bool) -> Res<ReadReply<'_>> {
    let mut rd = Rd::new(res);
    let status = rd.u32()?;
    let follows = rd.u32_if(|v| v <= 1)?;
    if follows == 1 {
        rd.take(FATTR3_LEN)?;
    }
    let count = rd.u32()?;
    let eof = rd.u32_if(|v| v <= 1)? == 1;
    let data_len = rd.u32_if(|n| n <= count)?;
    let data = if complete {
        rd.take(data_len as usize)?
    } else {
        let n = rd.len().min(data_len as usize);
        rd.take(n)?
    };
    Ok(ReadReply {
        status,
        attr: &[],
        count,
        eof,
        data,
    })
}

/// LOOKUP's results: the status and a handle, read whatever the status (Suricata's).
pub fn lookup3_reply(res: &[u8]) -> Res<(u32, &[u8])> {
    let mut rd = Rd::new(res);
    let status = rd.u32()?;
    let h = handle3(&mut rd)?;
    Ok((status, h))
}

/// CREATE's (and MKDIR's) results: the status and the new object's handle, if any.
pub fn create3_reply(res: &[u8]) -> Res<(u32, Option<&[u8]>)> {
    let mut rd = Rd::new(res);
    let status = rd.u32()?;
    let follows = rd.u32()?;
    let h = if follows == 1 {
        Some(handle3(&mut rd)?)
    } else {
        None
    };
    Ok((status, h))
}

/// READDIRPLUS's results: the status and each entry's (name, handle).
pub fn readdirplus3_reply(res: &[u8], out: &mut Vec<(Vec<u8>, Vec<u8>)>) -> Res<u32> {
    let mut rd = Rd::new(res);
    let status = rd.u32()?;
    if rd.u32_if(|v| v <= 1)? == 1 {
        rd.take(FATTR3_LEN)?;
    }
    rd.take(8)?;
    // The entries, without the final eof field.
    let body = rd.rest();
    let mut rd = Rd::new(&body[..body.len().saturating_sub(4)]);
    while !rd.is_empty() && out.len() < MAX_DIR_ENTRIES {
        if rd.u32_if(|v| v <= 1)? == 0 {
            continue;
        }
        rd.u64()?;
        let n = name(&mut rd)?;
        rd.u64()?;
        if rd.u32_if(|v| v <= 1)? == 1 {
            rd.take(FATTR3_LEN)?;
        }
        if rd.u32_if(|v| v <= 1)? == 1 {
            let h = handle3(&mut rd)?;
            out.push((n.to_vec(), h.to_vec()));
        }
    }
    Ok(status)
}

/// An NFSv2 file handle: 32 bytes.
pub fn handle2<'a>(rd: &mut Rd<'a>) -> Res<&'a [u8]> {
    rd.take(32)
}

/// NFSv2 READ's arguments: the handle and the offset.
pub fn read2(args: &[u8]) -> Res<(&[u8], u32)> {
    let mut rd = Rd::new(args);
    let h = handle2(&mut rd)?;
    let offset = rd.u32()?;
    rd.u32()?;
    Ok((h, offset))
}

/// NFSv2 LOOKUP's arguments: the directory handle.
pub fn lookup2(args: &[u8]) -> Res<&[u8]> {
    let mut rd = Rd::new(args);
    let h = handle2(&mut rd)?;
    rd.data()?;
    Ok(h)
}

/// NFSv2 READ's results. Suricata's reader takes four bytes of padding after data
/// whose length is a multiple of four: so does this one.
pub fn read2_reply(res: &[u8]) -> Res<ReadReply<'_>> {
    let mut rd = Rd::new(res);
    let status = rd.u32()?;
    let attr = rd.take(FATTR2_LEN)?;
    let n = rd.u32()?;
    let data = rd.take(n as usize)?;
    rd.take(4 - (n % 4) as usize)?;
    Ok(ReadReply {
        status,
        attr,
        count: n,
        eof: false,
        data,
    })
}

/// The size in NFSv2 attributes.
pub fn fattr2_size(attr: &[u8]) -> Option<u32> {
    let b = attr.get(20..24)?;
    Some(u32::from_be_bytes(b.try_into().ok()?))
}

/// An NFSv4 operation of a COMPOUND call, as much as the parser keeps of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op4<'a> {
    PutFh(&'a [u8]),
    Read { offset: u64 },
    Write(Write<'a>),
    Open(&'a [u8]),
    Lookup(&'a [u8]),
    Create(&'a [u8]),
    Remove(&'a [u8]),
    Commit,
    Close,
    Other,
}

/// An NFSv4 string: a length, the bytes and their padding.
fn str4<'a>(rd: &mut Rd<'a>) -> Res<&'a [u8]> {
    rd.opaque()
}

fn stateid(rd: &mut Rd<'_>) -> Res<()> {
    rd.u32()?;
    rd.take(12)?;
    Ok(())
}

/// A bitmap: a count and one to three words (one is read even for a count of 0).
fn attrbits(rd: &mut Rd<'_>) -> Res<()> {
    let n = rd.u32()?;
    rd.u32()?;
    if n >= 2 {
        rd.u32()?;
    }
    if n == 3 {
        rd.u32()?;
    }
    Ok(())
}

/// A bitmap and the attributes' values.
fn attrs(rd: &mut Rd<'_>) -> Res<()> {
    attrbits(rd)?;
    rd.data()?;
    Ok(())
}

fn op4<'a>(rd: &mut Rd<'a>) -> Res<Op4<'a>> {
    use op4::*;
    let op = rd.u32()?;
    Ok(match op {
        PUTFH => Op4::PutFh(rd.data()?),
        READ => {
            stateid(rd)?;
            let offset = rd.u64()?;
            rd.u32()?;
            Op4::Read { offset }
        }
        WRITE => {
            stateid(rd)?;
            let offset = rd.u64()?;
            let stable = rd.u32()?;
            let n = rd.u32()?;
            let data = rd.take(n as usize)?;
            rd.take(pad(data.len()))?;
            Op4::Write(Write {
                handle: &[],
                offset,
                count: n,
                stable,
                data_len: n,
                data,
            })
        }
        GETFH | SAVEFH | PUTROOTFH => Op4::Other,
        OPEN => {
            rd.take(12)?;
            rd.u64()?;
            // The owner, without its padding (Suricata's).
            let n = rd.u32()?;
            rd.take(n as usize)?;
            let open_type = rd.u32()?;
            if open_type == 1 {
                match rd.u32()? {
                    0 | 1 => attrs(rd)?,
                    2 => {
                        rd.take(8)?;
                    }
                    _ => return Err(Error::Malformed),
                }
            }
            rd.u32()?;
            Op4::Open(str4(rd)?)
        }
        CLOSE => {
            rd.u32()?;
            stateid(rd)?;
            Op4::Close
        }
        LOOKUP => Op4::Lookup(str4(rd)?),
        ACCESS | RECLAIM_COMPLETE | SECINFO_NO_NAME => {
            let v = rd.u32()?;
            if op == RECLAIM_COMPLETE && v > 1 {
                return Err(Error::Malformed);
            }
            Op4::Other
        }
        COMMIT => {
            rd.u64()?;
            rd.u32()?;
            Op4::Commit
        }
        GETATTR => {
            attrbits(rd)?;
            Op4::Other
        }
        READDIR => {
            rd.take(16)?;
            rd.take(8)?;
            attrbits(rd)?;
            Op4::Other
        }
        RENEW => {
            rd.u64()?;
            Op4::Other
        }
        OPEN_CONFIRM => {
            rd.u32()?;
            stateid(rd)?;
            Op4::Other
        }
        REMOVE => Op4::Remove(str4(rd)?),
        RENAME => {
            str4(rd)?;
            str4(rd)?;
            Op4::Other
        }
        CREATE => {
            let t = rd.u32()?;
            if t == 5 {
                str4(rd)?;
            }
            let n = str4(rd)?;
            attrs(rd)?;
            Op4::Create(n)
        }
        DELEGRETURN => {
            stateid(rd)?;
            Op4::Other
        }
        SETATTR => {
            stateid(rd)?;
            attrs(rd)?;
            Op4::Other
        }
        SETCLIENTID => {
            rd.take(8)?;
            str4(rd)?;
            rd.u32()?;
            str4(rd)?;
            str4(rd)?;
            rd.u32()?;
            Op4::Other
        }
        SETCLIENTID_CONFIRM => {
            rd.take(16)?;
            Op4::Other
        }
        SEQUENCE => {
            rd.take(32)?;
            Op4::Other
        }
        EXCHANGE_ID => {
            rd.take(8)?;
            str4(rd)?;
            rd.take(12)?;
            str4(rd)?;
            str4(rd)?;
            rd.take(12)?;
            Op4::Other
        }
        CREATE_SESSION => {
            rd.take(8 + 8 + 28 + 28 + 16)?;
            str4(rd)?;
            rd.rest();
            Op4::Other
        }
        LAYOUTGET => {
            rd.u32_if(|v| v <= 1)?;
            rd.take(8 + 8 + 8 + 8)?;
            stateid(rd)?;
            rd.u32()?;
            Op4::Other
        }
        GETDEVINFO => {
            rd.take(16 + 16)?;
            Op4::Other
        }
        LAYOUTRETURN => {
            rd.u32_if(|v| v <= 1)?;
            rd.take(12 + 16)?;
            stateid(rd)?;
            str4(rd)?;
            Op4::Other
        }
        DESTROY_SESSION => {
            rd.take(16)?;
            Op4::Other
        }
        DESTROY_CLIENTID => {
            rd.take(8)?;
            Op4::Other
        }
        _ => return Err(Error::Malformed),
    })
}

/// A COMPOUND call's operations (at most [`MAX_COMPOUND_OPS`]), into `out`.
pub fn compound4<'a>(args: &'a [u8], out: &mut Vec<Op4<'a>>) -> Res<()> {
    let mut rd = Rd::new(args);
    rd.data()?;
    rd.u32()?;
    let n = rd.u32_if(|n| n <= MAX_COMPOUND_OPS)?;
    for _ in 0..n {
        out.push(op4(&mut rd)?);
    }
    Ok(())
}

/// An NFSv4 operation's result in a COMPOUND reply, as much as the parser keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Res4<'a> {
    Read(u32, Option<(bool, &'a [u8])>),
    Open(u32, bool),
    GetFh(u32, Option<&'a [u8]>),
    PutRootFh(u32),
    Remove(u32),
    Create(u32),
    Other,
}

fn cond_ok(rd: &mut Rd<'_>, f: impl FnOnce(&mut Rd<'_>) -> Res<()>) -> Res<u32> {
    let s = rd.u32()?;
    if s == 0 {
        f(rd)?;
    }
    Ok(s)
}

fn delegation(rd: &mut Rd<'_>) -> Res<()> {
    match rd.u32()? {
        0 => {}
        1 => {
            stateid(rd)?;
            rd.take(16)?;
            rd.data()?;
        }
        2 => {
            stateid(rd)?;
            rd.take(24)?;
            str4(rd)?;
        }
        _ => return Err(Error::Malformed),
    }
    Ok(())
}

fn readdir_entries(rd: &mut Rd<'_>) -> Res<()> {
    rd.take(8)?;
    let mut n = 0;
    loop {
        let follows = rd.u32_if(|v| v <= 1)?;
        if follows == 0 {
            break;
        }
        n += 1;
        if n > MAX_DIR_ENTRIES {
            return Err(Error::Malformed);
        }
        rd.u64()?;
        str4(rd)?;
        attrs(rd)?;
    }
    rd.u32_if(|v| v <= 1)?;
    Ok(())
}

fn res4<'a>(rd: &mut Rd<'a>) -> Res<Res4<'a>> {
    use op4::*;
    let op = rd.u32()?;
    Ok(match op {
        READ => {
            let s = rd.u32()?;
            let d = if s == 0 {
                let eof = rd.u32_if(|v| v <= 1)? == 1;
                Some((eof, rd.data()?))
            } else {
                None
            };
            Res4::Read(s, d)
        }
        WRITE => {
            cond_ok(rd, |rd| rd.take(16).map(|_| ()))?;
            Res4::Other
        }
        ACCESS => {
            cond_ok(rd, |rd| rd.take(8).map(|_| ()))?;
            Res4::Other
        }
        COMMIT => {
            cond_ok(rd, |rd| rd.take(8).map(|_| ()))?;
            Res4::Other
        }
        GETFH => {
            let s = rd.u32()?;
            let h = if s == 0 { Some(rd.data()?) } else { None };
            Res4::GetFh(s, h)
        }
        PUTFH | SAVEFH | RENAME | LOOKUP | RENEW | DELEGRETURN | SETCLIENTID_CONFIRM
        | DESTROY_SESSION | DESTROY_CLIENTID | RECLAIM_COMPLETE => {
            rd.u32()?;
            Res4::Other
        }
        PUTROOTFH => Res4::PutRootFh(rd.u32()?),
        READDIR => {
            cond_ok(rd, readdir_entries)?;
            Res4::Other
        }
        GETATTR => {
            cond_ok(rd, attrs)?;
            Res4::Other
        }
        SETATTR => {
            cond_ok(rd, attrbits)?;
            Res4::Other
        }
        OPEN => {
            let s = cond_ok(rd, |rd| {
                stateid(rd)?;
                rd.take(20)?;
                rd.u32()?;
                attrbits(rd)?;
                delegation(rd)
            })?;
            Res4::Open(s, s == 0)
        }
        OPEN_CONFIRM | CLOSE => {
            cond_ok(rd, stateid)?;
            Res4::Other
        }
        REMOVE => Res4::Remove(cond_ok(rd, |rd| rd.take(20).map(|_| ()))?),
        CREATE => Res4::Create(cond_ok(rd, |rd| {
            rd.take(20)?;
            attrbits(rd)
        })?),
        SETCLIENTID => {
            rd.u32()?;
            rd.take(12)?;
            Res4::Other
        }
        EXCHANGE_ID => {
            cond_ok(rd, |rd| {
                rd.take(8 + 12 + 8)?;
                str4(rd)?;
                str4(rd)?;
                rd.u32()?;
                str4(rd)?;
                str4(rd)?;
                rd.take(12).map(|_| ())
            })?;
            Res4::Other
        }
        SEQUENCE => {
            cond_ok(rd, |rd| rd.take(16 + 4 + 12 + 4).map(|_| ()))?;
            Res4::Other
        }
        CREATE_SESSION => {
            cond_ok(rd, |rd| rd.take(16 + 8 + 56).map(|_| ()))?;
            Res4::Other
        }
        SECINFO_NO_NAME => {
            rd.u32()?;
            let n = rd.u32()?;
            // Read from a copy: Suricata's reader goes back to after the count.
            let mut r2 = *rd;
            for _ in 0..n.min(MAX_COMPOUND_OPS * 64) {
                if r2.u32()? == 6 {
                    str4(&mut r2)?;
                    r2.take(8)?;
                }
            }
            Res4::Other
        }
        LAYOUTGET => {
            cond_ok(rd, |rd| {
                rd.u32_if(|v| v <= 1)?;
                stateid(rd)?;
                rd.take(4 + 8 + 8 + 4 + 4 + 4 + 16 + 4 + 4 + 8)?;
                let n = rd.u32()?;
                if n as usize > 4 * rd.len() {
                    return Err(Error::Malformed);
                }
                for _ in 0..n {
                    rd.data()?;
                }
                Ok(())
            })?;
            Res4::Other
        }
        GETDEVINFO => {
            cond_ok(rd, |rd| {
                rd.take(4 + 8 + 4 + 8)?;
                str4(rd)?;
                str4(rd)?;
                rd.u32().map(|_| ())
            })?;
            Res4::Other
        }
        LAYOUTRETURN => {
            rd.u32()?;
            rd.u32_if(|v| v <= 1)?;
            Res4::Other
        }
        _ => return Err(Error::Malformed),
    })
}

/// A COMPOUND reply's results (at most [`MAX_COMPOUND_OPS`]), into `out`.
pub fn compound4_reply<'a>(res: &'a [u8], out: &mut Vec<Res4<'a>>) -> Res<()> {
    let mut rd = Rd::new(res);
    rd.u32()?;
    rd.data()?;
    let n = rd.u32_if(|n| n <= MAX_COMPOUND_OPS)?;
    for _ in 0..n {
        out.push(res4(&mut rd)?);
    }
    Ok(())
}

/// The procedure's name (EVE `nfs.procedure`) in NFS version `version` (0 until
/// known: NFSv3's names).
pub fn procedure_name(version: u16, p: u32) -> std::borrow::Cow<'static, str> {
    const V2: &[&str] = &[
        "NULL",
        "GETATTR",
        "SETATTR",
        "ROOT",
        "LOOKUP",
        "READLINK",
        "READ",
        "WRITECACHE",
        "WRITE",
        "CREATE",
        "REMOVE",
        "RENAME",
        "LINK",
        "SYMLINK",
        "MKDIR",
        "RMDIR",
        "READDIR",
        "STATFS",
    ];
    const V3: &[&str] = &[
        "NULL",
        "GETATTR",
        "SETATTR",
        "LOOKUP",
        "ACCESS",
        "READLINK",
        "READ",
        "WRITE",
        "CREATE",
        "MKDIR",
        "SYMLINK",
        "MKNOD",
        "REMOVE",
        "RMDIR",
        "RENAME",
        "LINK",
        "READDIR",
        "READDIRPLUS",
        "FSSTAT",
        "FSINFO",
        "PATHCONF",
        "COMMIT",
    ];
    const V4: &[&str] = &[
        "NULL",
        "COMPOUND",
        "2",
        "ACCESS",
        "CLOSE",
        "COMMIT",
        "CREATE",
        "DELEGPURGE",
        "DELEGRETURN",
        "GETATTR",
        "GETFH",
        "LINK",
        "LOCK",
        "LOCKT",
        "LOCKU",
        "LOOKUP",
        "LOOKUPP",
        "NVERIFY",
        "OPEN",
        "OPENATTR",
        "OPEN_CONFIRM",
        "OPEN_DOWNGRADE",
        "PUTFH",
        "PUTPUBFH",
        "PUTROOTFH",
        "READ",
        "READDIR",
        "READLINK",
        "REMOVE",
        "RENAME",
        "RENEW",
        "RESTOREFH",
        "SAVEFH",
        "SECINFO",
        "SETATTR",
        "SETCLIENTID",
        "SETCLIENTID_CONFIRM",
        "VERIFY",
        "WRITE",
        "RELEASE_LOCKOWNER",
    ];
    let table = match version {
        2 => V2,
        4 => V4,
        _ => V3,
    };
    match table.get(p as usize) {
        Some(n) => (*n).into(),
        None if version == 4 && p == 10044 => "ILLEGAL".into(),
        None => p.to_string().into(),
    }
}

/// An NFSv3 status's name (EVE `nfs.status`).
pub fn status_name(s: u32) -> std::borrow::Cow<'static, str> {
    let n = match s {
        0 => "OK",
        1 => "ERR_PERM",
        2 => "ERR_NOENT",
        5 => "ERR_IO",
        6 => "ERR_NXIO",
        13 => "ERR_ACCES",
        17 => "ERR_EXIST",
        18 => "ERR_XDEV",
        19 => "ERR_NODEV",
        20 => "ERR_NOTDIR",
        21 => "ERR_ISDIR",
        22 => "ERR_INVAL",
        27 => "ERR_FBIG",
        28 => "ERR_NOSPC",
        30 => "ERR_ROFS",
        31 => "ERR_MLINK",
        63 => "ERR_NAMETOOLONG",
        66 => "ERR_NOTEMPTY",
        69 => "ERR_DQUOT",
        70 => "ERR_STALE",
        71 => "ERR_REMOTE",
        10001 => "ERR_BADHANDLE",
        10002 => "ERR_NOT_SYNC",
        10003 => "ERR_BAD_COOKIE",
        10004 => "ERR_NOTSUPP",
        10005 => "ERR_TOOSMALL",
        10006 => "ERR_SERVERFAULT",
        10007 => "ERR_BADTYPE",
        10008 => "ERR_JUKEBOX",
        n => return n.to_string().into(),
    };
    n.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(b: &[u8]) -> Vec<u8> {
        let mut v = (b.len() as u32).to_be_bytes().to_vec();
        v.extend_from_slice(b);
        v.resize(v.len() + pad(b.len()), 0);
        v
    }

    #[test]
    fn v3_arguments_and_results() {
        let mut a = s(&[1, 2, 3, 4]);
        a.extend(s(b"new.txt"));
        a.extend(s(&[1, 2, 3, 4]));
        a.extend(s(b"renamed.txt"));
        assert_eq!(
            rename3(&a),
            Ok((&[1, 2, 3, 4][..], &b"new.txt"[..], &b"renamed.txt"[..]))
        );
        assert_eq!(dirop3(&a).unwrap().1, b"new.txt");
        // A handle longer than NFS3_FHSIZE.
        assert_eq!(dirop3(&s(&[0; 68])).err(), Some(Error::Malformed));
        // LOOKUP's reply reads a handle whatever the status.
        assert_eq!(
            lookup3_reply(&[0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0]),
            Ok((2, &[0][..]))
        );
        let mut w = s(&[9; 8]);
        w.extend(0u64.to_be_bytes());
        w.extend(5u32.to_be_bytes());
        w.extend(2u32.to_be_bytes());
        w.extend(s(b"hello"));
        let wr = write3(&w, true).unwrap();
        assert_eq!((wr.count, wr.stable, wr.data), (5, 2, &b"hello"[..]));
        assert_eq!(write3(&w[..w.len() - 6], false).unwrap().data, b"he");
        assert_eq!(
            write3(&w[..w.len() - 6], true).err(),
            Some(Error::Incomplete)
        );
        assert_eq!(procedure_name(3, 17), "READDIRPLUS");
        assert_eq!(procedure_name(2, 4), "LOOKUP");
        assert_eq!(procedure_name(4, 38), "WRITE");
        assert_eq!(procedure_name(3, 99), "99");
        assert_eq!(status_name(66), "ERR_NOTEMPTY");
    }

    #[test]
    fn v4_compounds() {
        // PUTFH, OPEN (owner of 8 bytes, CLAIM_NULL "f"), GETFH.
        let mut a = s(b"");
        a.extend(0u32.to_be_bytes());
        a.extend(3u32.to_be_bytes());
        a.extend(22u32.to_be_bytes());
        a.extend(s(&[7; 8]));
        a.extend(18u32.to_be_bytes());
        a.extend([0; 12]);
        a.extend([0; 8]);
        a.extend(s(b"owner123"));
        a.extend([0; 8]);
        a.extend(s(b"f"));
        a.extend(10u32.to_be_bytes());
        let mut ops = Vec::new();
        compound4(&a, &mut ops).unwrap();
        assert_eq!(ops, [Op4::PutFh(&[7; 8]), Op4::Open(b"f"), Op4::Other]);
        // An unknown operation fails the compound.
        let mut b = a.clone();
        b[11] = 4;
        b.extend(99u32.to_be_bytes());
        let mut ops2 = Vec::new();
        assert_eq!(compound4(&b, &mut ops2).err(), Some(Error::Malformed));
    }
}
