//! PostgreSQL frontend/backend protocol 3.0 messages, read as Suricata 8's parser
//! reads them (PostgreSQL docs, "Frontend/Backend Protocol", 55.7 Message Formats).
//!
//! Every message but the startup ones is a type byte, a 4-byte big-endian length
//! that counts itself, and a body; the startup ones (StartupMessage, SSLRequest,
//! GSSENCRequest, CancelRequest) have no type byte and a request code after the
//! length. The outcome of a read is Suricata's:
//!
//! - [`Error::Incomplete`]: the message has not all come; wait for more.
//! - [`Error::Stuck`]: the message is all there, but a field in it runs past its end
//!   (a string without its terminator): Suricata's streaming parser asks for more
//!   data and never gets past it; the direction is not parsed any further.
//! - [`Error::InvalidLength`]: a length below the message's least (`invalid_length`).
//! - [`Error::Malformed`]: an unknown request code or authentication type
//!   (`malformed_request`, `malformed_response`).
//! - [`Error::Invalid`]: anything else wrong; the rest of the parse call's data is
//!   skipped, with no event.

/// Protocol version major of the special startup requests (1234).
pub const SPECIAL_MAJOR: u16 = 1234;
/// CancelRequest's code (1234.5678).
pub const CANCEL_MINOR: u16 = 5678;
/// SSLRequest's code (1234.5679).
pub const SSL_MINOR: u16 = 5679;
/// Bytes of the length field.
const LEN: u32 = 4;

/// Why a message could not be read (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    Incomplete,
    Stuck,
    InvalidLength,
    Malformed,
    Invalid,
}

type R<T> = Result<(T, usize), Error>;

/// A bounded reader over a complete message body: running out of bytes is
/// [`Error::Stuck`] (the message is all there, its fields are not).
#[derive(Debug, Clone, Copy)]
struct Rd<'a> {
    b: &'a [u8],
}

impl<'a> Rd<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if self.b.len() < n {
            return Err(Error::Stuck);
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, Error> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }
    fn u32(&mut self) -> Result<u32, Error> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }
    /// A NUL-terminated string (the NUL consumed); `nonempty`: an empty one is
    /// [`Error::Invalid`] (nom's `take_until1`).
    fn cstr(&mut self, nonempty: bool) -> Result<&'a [u8], Error> {
        let n = self.b.iter().position(|&c| c == 0).ok_or(Error::Stuck)?;
        if nonempty && n == 0 {
            return Err(Error::Invalid);
        }
        let s = self.take(n)?;
        self.b = &self.b[1..];
        Ok(s)
    }
    /// The bytes up to a NUL, which is not consumed.
    fn until_nul(&mut self, nonempty: bool) -> Result<&'a [u8], Error> {
        let n = self.b.iter().position(|&c| c == 0).ok_or(Error::Stuck)?;
        if nonempty && n == 0 {
            return Err(Error::Invalid);
        }
        self.take(n)
    }
}

fn be32(b: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(..4)?.try_into().ok()?))
}

/// The length field at `data[at..]`: `Incomplete` when it has not come, `InvalidLength`
/// unless `ok(length)`.
fn length(data: &[u8], at: usize, ok: impl Fn(u32) -> bool) -> Result<u32, Error> {
    let l = be32(data.get(at..).unwrap_or(&[])).ok_or(Error::Incomplete)?;
    if ok(l) {
        Ok(l)
    } else {
        Err(Error::InvalidLength)
    }
}

/// A typed message's body (after its type byte and a length accepted by `ok`), and the
/// whole message's size.
fn typed(data: &[u8], ok: impl Fn(u32) -> bool) -> Result<(&[u8], usize), Error> {
    let l = length(data, 1, ok)?;
    let end = 1 + l as usize;
    let body = data.get(5..end).ok_or(Error::Incomplete)?;
    Ok((body, end))
}

/// A startup or runtime parameter (name, value).
pub type Param = (Vec<u8>, Vec<u8>);

/// The SASL mechanisms Suricata knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SaslMechanism {
    ScramSha256,
    ScramSha256Plus,
}

impl SaslMechanism {
    /// Suricata's EVE name.
    pub fn name(self) -> &'static str {
        match self {
            SaslMechanism::ScramSha256 => "scram_SHA256",
            SaslMechanism::ScramSha256Plus => "scram_SHA256_plus",
        }
    }
}

/// A frontend (client) message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    SslRequest,
    Startup {
        major: u16,
        minor: u16,
        /// The `user` values (Suricata joins them when there are several).
        user: Vec<u8>,
        /// The other parameters, in order.
        params: Vec<Param>,
    },
    Password(Vec<u8>),
    SaslInitial {
        mechanism: SaslMechanism,
        param: Vec<u8>,
    },
    SaslResponse(Vec<u8>),
    Query(Vec<u8>),
    /// A CopyData: its data's size.
    CopyData(u64),
    CopyDone,
    CopyFail(Vec<u8>),
    Cancel {
        pid: u32,
        key: u32,
    },
    Terminate,
    /// Any other message (the extended query's Parse, Bind, Execute, Sync, ...).
    Unknown(u8),
}

/// What the client's next message is read as, in the authentication exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Any,
    Password,
    SaslInitial,
    SaslResponse,
}

/// Reads the client's next message.
pub fn request(data: &[u8], expect: Expect) -> R<Request> {
    match expect {
        Expect::Any => {}
        Expect::Password => {
            let (body, n) = tagged(data, b'p', |l| l >= LEN)?;
            let pw = Rd { b: body }.until_nul(true)?;
            return Ok((Request::Password(pw.to_vec()), n));
        }
        Expect::SaslInitial => {
            let (body, n) = tagged(data, b'p', |l| l >= LEN)?;
            return Ok((sasl_initial(body)?, n));
        }
        Expect::SaslResponse => {
            let (body, n) = tagged(data, b'p', |l| l >= LEN)?;
            return Ok((Request::SaslResponse(body.to_vec()), n));
        }
    }
    let t = *data.first().ok_or(Error::Incomplete)?;
    match t {
        0 => startup(data),
        b'Q' => {
            let (body, n) = typed(data, |l| l >= LEN)?;
            let q = Rd { b: body }.until_nul(true)?;
            Ok((Request::Query(q.to_vec()), n))
        }
        b'X' => {
            let (_, n) = typed(data, |l| l == LEN)?;
            Ok((Request::Terminate, n))
        }
        b'd' => {
            let (body, n) = typed(data, |l| l > LEN)?;
            Ok((Request::CopyData(body.len() as u64), n))
        }
        b'c' => {
            let (_, n) = typed(data, |l| l == LEN)?;
            Ok((Request::CopyDone, n))
        }
        b'f' => {
            let (body, n) = typed(data, |l| l > LEN)?;
            Ok((Request::CopyFail(body.to_vec()), n))
        }
        _ => {
            let (_, n) = typed(data, |l| l >= LEN)?;
            Ok((Request::Unknown(t), n))
        }
    }
}

/// A message that must be of type `t` (any other is [`Error::Invalid`]).
fn tagged(data: &[u8], t: u8, ok: impl Fn(u32) -> bool) -> Result<(&[u8], usize), Error> {
    match data.first() {
        None => Err(Error::Incomplete),
        Some(&c) if c != t => Err(Error::Invalid),
        Some(_) => typed(data, ok),
    }
}

/// A message without a type byte: StartupMessage (protocol 1 to 3), SSLRequest,
/// CancelRequest; any other code (GSSENCRequest among them) is malformed.
fn startup(data: &[u8]) -> R<Request> {
    let l = length(data, 0, |l| l >= 8)?;
    let end = l as usize;
    let body = data.get(4..end).ok_or(Error::Incomplete)?;
    let mut r = Rd { b: body };
    let (major, minor) = (r.u16()?, r.u16()?);
    let req = match major {
        1..=3 => {
            let (user, params) = startup_params(&mut r)?;
            Request::Startup {
                major,
                minor,
                user,
                params,
            }
        }
        SPECIAL_MAJOR => match minor {
            CANCEL_MINOR => Request::Cancel {
                pid: r.u32()?,
                key: r.u32()?,
            },
            SSL_MINOR => Request::SslRequest,
            _ => return Err(Error::Malformed),
        },
        _ => return Err(Error::Malformed),
    };
    Ok((req, end))
}

/// Most startup parameters kept (a message has a handful).
pub const MAX_PARAMS: usize = 64;

/// The parameter list of a StartupMessage, ended by an empty name: the `user`
/// (required, not empty) and the others.
fn startup_params(r: &mut Rd<'_>) -> Result<(Vec<u8>, Vec<Param>), Error> {
    let mut params: Vec<Param> = Vec::new();
    loop {
        let save = *r;
        match param(r) {
            Ok(p) => {
                if params.len() < MAX_PARAMS {
                    params.push(p);
                }
            }
            Err(Error::Invalid) => {
                *r = save;
                break;
            }
            Err(e) => return Err(e),
        }
    }
    // At least one parameter, then the terminating NUL.
    if params.is_empty() || r.u8().map_err(|_| Error::Stuck)? != 0 {
        return Err(Error::Invalid);
    }
    let mut user = Vec::new();
    let mut last = None;
    for (i, (k, v)) in params.iter().enumerate() {
        if k == b"user" {
            user.extend_from_slice(v);
            last = Some(i);
        }
    }
    // As Suricata: the last `user` goes (or the first parameter when there is none).
    params.remove(last.unwrap_or(0));
    if user.is_empty() {
        return Err(Error::Invalid);
    }
    Ok((user, params))
}

/// One `name\0value\0` pair (the name not empty).
fn param(r: &mut Rd<'_>) -> Result<Param, Error> {
    let k = r.cstr(true)?;
    let v = r.cstr(false)?;
    Ok((k.to_vec(), v.to_vec()))
}

fn mechanism(b: &[u8]) -> Option<(SaslMechanism, usize)> {
    if b.starts_with(b"SCRAM-SHA-256-PLUS\0") {
        Some((SaslMechanism::ScramSha256Plus, 19))
    } else if b.starts_with(b"SCRAM-SHA-256\0") {
        Some((SaslMechanism::ScramSha256, 14))
    } else {
        None
    }
}

fn sasl_initial(body: &[u8]) -> Result<Request, Error> {
    let (mechanism, n) = mechanism(body).ok_or(Error::Invalid)?;
    let mut r = Rd { b: &body[n..] };
    let len = r.u32()? as usize;
    let param = r.take(len)?;
    if !r.b.is_empty() {
        return Err(Error::Invalid);
    }
    Ok(Request::SaslInitial {
        mechanism,
        param: param.to_vec(),
    })
}

/// A field of an ErrorResponse or NoticeResponse: its type byte and value.
pub type NoticeField = (u8, Vec<u8>);

/// Most fields of an ErrorResponse or NoticeResponse kept (PostgreSQL sends at most
/// 18 kinds).
pub const MAX_NOTICE_FIELDS: usize = 32;

/// A backend (server) message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// The answer to an SSLRequest: `S` (accepted) or `N`.
    SslResponse(bool),
    Error(Vec<NoticeField>),
    Notice(Vec<NoticeField>),
    AuthOk,
    AuthCleartext,
    AuthMd5(Vec<u8>),
    AuthSspi(Vec<u8>),
    AuthSasl(Vec<SaslMechanism>),
    AuthSaslContinue(Vec<u8>),
    AuthSaslFinal(Vec<u8>),
    ParameterStatus(Param),
    BackendKey {
        pid: u32,
        key: u32,
    },
    CommandComplete(Vec<u8>),
    CopyOut(u16),
    CopyIn(u16),
    /// A CopyData: its data's size.
    CopyData(u64),
    CopyDone,
    ReadyForQuery(u8),
    RowDescription(u16),
    /// A DataRow: the size of its values.
    DataRow(u64),
    Notification {
        pid: u32,
        channel: Vec<u8>,
        payload: Vec<u8>,
    },
    /// Any other message (ParseComplete, BindComplete, EmptyQueryResponse, ...).
    Unknown(u8),
}

/// Reads the server's one-byte answer to an SSLRequest.
pub fn ssl_response(data: &[u8]) -> R<Response> {
    match data.first() {
        None => Err(Error::Incomplete),
        Some(b'S') => Ok((Response::SslResponse(true), 1)),
        Some(b'N') => Ok((Response::SslResponse(false), 1)),
        Some(_) => Err(Error::Invalid),
    }
}

/// Reads the server's next message.
pub fn response(data: &[u8]) -> R<Response> {
    let t = *data.first().ok_or(Error::Incomplete)?;
    match t {
        b'E' | b'N' => {
            let (body, n) = typed(data, |l| l >= 11)?;
            let f = notice_fields(body, t == b'E')?;
            Ok((
                if t == b'E' {
                    Response::Error(f)
                } else {
                    Response::Notice(f)
                },
                n,
            ))
        }
        b'K' => {
            let (body, n) = typed(data, |l| l == 12)?;
            let mut r = Rd { b: body };
            Ok((
                Response::BackendKey {
                    pid: r.u32()?,
                    key: r.u32()?,
                },
                n,
            ))
        }
        b'R' => auth(data),
        b'S' => {
            let (body, n) = typed(data, |l| l >= LEN)?;
            Ok((Response::ParameterStatus(param(&mut Rd { b: body })?), n))
        }
        b'C' => {
            let (body, n) = typed(data, |l| l >= LEN)?;
            let tag = Rd { b: body }.until_nul(false)?;
            Ok((Response::CommandComplete(tag.to_vec()), n))
        }
        b'c' => {
            let (_, n) = typed(data, |l| l == LEN)?;
            Ok((Response::CopyDone, n))
        }
        b'Z' => {
            let (body, n) = typed(data, |l| l == 5)?;
            let s = Rd { b: body }.u8()?;
            if !matches!(s, b'I' | b'T' | b'E') {
                return Err(Error::Invalid);
            }
            Ok((Response::ReadyForQuery(s), n))
        }
        b'T' => {
            let (body, n) = typed(data, |l| l >= 7)?;
            let mut r = Rd { b: body };
            let count = r.u16()?;
            // Bounded by the 16-bit count (and the body: each item takes bytes).
            for _ in 0..count {
                match row_field(&mut r) {
                    Ok(()) => {}
                    // An empty name ends the list early, as nom's `many_m_n`.
                    Err(Error::Invalid) => break,
                    Err(e) => return Err(e),
                }
            }
            Ok((Response::RowDescription(count), n))
        }
        b'A' => {
            let (body, n) = typed(data, |l| l >= 10)?;
            let mut r = Rd { b: body };
            let pid = r.u32()?;
            let channel = r.cstr(false)?.to_vec();
            let payload = r.cstr(false)?.to_vec();
            Ok((
                Response::Notification {
                    pid,
                    channel,
                    payload,
                },
                n,
            ))
        }
        b'D' => {
            let (body, n) = typed(data, |l| l >= 7)?;
            let mut r = Rd { b: body };
            let count = r.u16()?;
            let mut size = 0u64;
            // Bounded by the 16-bit count (and the body: each item takes bytes).
            for _ in 0..count {
                let l = r.u32()? as i32;
                if l >= 0 {
                    r.take(l as usize)?;
                    size += l as u64;
                }
            }
            Ok((Response::DataRow(size), n))
        }
        b'd' => {
            let (body, n) = typed(data, |l| l > LEN)?;
            Ok((Response::CopyData(body.len() as u64), n))
        }
        b'H' | b'G' => copy_response(data, t),
        _ => {
            let (_, n) = typed(data, |l| l >= LEN)?;
            Ok((Response::Unknown(t), n))
        }
    }
}

/// CopyInResponse and CopyOutResponse, read as Suricata does: the format and the
/// column formats from the stream whatever the length says.
fn copy_response(data: &[u8], t: u8) -> R<Response> {
    length(data, 1, |l| l >= 8)?;
    let cols = data
        .get(6..8)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or(Error::Incomplete)?;
    let n = 8 + 2 * usize::from(cols);
    if data.len() < n {
        return Err(Error::Incomplete);
    }
    Ok((
        if t == b'H' {
            Response::CopyOut(cols)
        } else {
            Response::CopyIn(cols)
        },
        n,
    ))
}

fn row_field(r: &mut Rd<'_>) -> Result<(), Error> {
    r.cstr(true)?;
    // Table OID, column, type OID, type size, type modifier, format.
    r.take(4 + 2 + 4 + 2 + 4 + 2)?;
    Ok(())
}

fn auth(data: &[u8]) -> R<Response> {
    let (body, n) = typed(data, |l| l >= 8)?;
    let mut r = Rd { b: body };
    let kind = r.u32()?;
    let rest = r.b;
    let m = match kind {
        0 => Response::AuthOk,
        3 => Response::AuthCleartext,
        5 => match rest.len() {
            4 => Response::AuthMd5(rest.to_vec()),
            0..4 => return Err(Error::Stuck),
            _ => return Err(Error::Invalid),
        },
        9 => Response::AuthSspi(rest.to_vec()),
        10 => {
            let mut list = Vec::new();
            let mut b = rest;
            while let Some((m, k)) = mechanism(b) {
                if list.len() < 8 {
                    list.push(m);
                }
                b = &b[k..];
            }
            match b.first() {
                _ if list.is_empty() => return Err(Error::Invalid),
                None => return Err(Error::Stuck),
                Some(0) => {}
                Some(_) => return Err(Error::Invalid),
            }
            Response::AuthSasl(list)
        }
        11 => Response::AuthSaslContinue(rest.to_vec()),
        12 => Response::AuthSaslFinal(rest.to_vec()),
        // Kerberos, SCM, GSS, GSS continue and any other: Suricata's parser has
        // none of them.
        _ => return Err(Error::Malformed),
    };
    Ok((m, n))
}

/// The fields of an ErrorResponse (`error`) or NoticeResponse, up to the NUL that ends
/// them. As Suricata: the non-localized severity (`V`) must be one of the kind's
/// levels, and the SQLSTATE code (`C`) is read as 6 bytes of which the leading ones
/// are alphanumeric.
fn notice_fields(body: &[u8], error: bool) -> Result<Vec<NoticeField>, Error> {
    let mut r = Rd { b: body };
    let mut out = Vec::new();
    loop {
        let t = r.u8()?;
        if t == 0 {
            return Ok(out);
        }
        let value = match t {
            b'V' => {
                let levels: &[&[u8]] = if error {
                    &[b"ERROR", b"FATAL", b"PANIC"]
                } else {
                    &[b"WARNING", b"NOTICE", b"DEBUG", b"INFO", b"LOG"]
                };
                let lvl = levels.iter().find(|l| r.b.starts_with(l)).ok_or_else(|| {
                    // A prefix of a level at the end: Suricata waits for more.
                    if levels.iter().any(|l| l.starts_with(r.b)) {
                        Error::Stuck
                    } else {
                        Error::Invalid
                    }
                })?;
                r.take(lvl.len())?;
                if r.u8()? != 0 {
                    return Err(Error::Invalid);
                }
                lvl.to_vec()
            }
            b'C' => {
                let code = r.take(6)?;
                let n = code
                    .iter()
                    .position(|c| !c.is_ascii_alphanumeric())
                    .ok_or(Error::Stuck)?;
                if n == 0 {
                    return Err(Error::Invalid);
                }
                code[..n].to_vec()
            }
            _ => r.cstr(false)?.to_vec(),
        };
        if out.len() < MAX_NOTICE_FIELDS {
            out.push((t, value));
        }
    }
}

/// Suricata's EVE name of an ErrorResponse or NoticeResponse field.
pub fn field_name(t: u8) -> &'static str {
    match t {
        b'S' => "severity_localizable",
        b'V' => "severity_non_localizable",
        b'C' => "code",
        b'M' => "message",
        b'D' => "detail",
        b'H' => "hint",
        b'P' => "position",
        b'p' => "internal_position",
        b'q' => "internal_query",
        b'W' => "where",
        b's' => "schema_name",
        b't' => "table_name",
        b'c' => "column_name",
        b'd' => "data_type",
        b'n' => "constraint_name",
        b'F' => "file",
        b'L' => "line",
        b'R' => "routine",
        _ => "unknown_field_type",
    }
}

/// Suricata's EVE name of a startup or runtime parameter.
pub fn param_name(name: &[u8]) -> &str {
    match name {
        b"DateStyle" => "date_style",
        b"IntervalStyle" => "interval_style",
        b"TimeZone" => "time_zone",
        _ => std::str::from_utf8(name).unwrap_or("unknown_parameter"),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn msg(t: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![t];
        v.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn startup_messages() {
        // SSLRequest: length 8, code 1234.5679.
        let ssl = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
        assert_eq!(request(&ssl, Expect::Any), Ok((Request::SslRequest, 8)));
        assert_eq!(request(&ssl[..7], Expect::Any), Err(Error::Incomplete));
        // GSSENCRequest (1234.5680): not Suricata's.
        let gss = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x30];
        assert_eq!(request(&gss, Expect::Any), Err(Error::Malformed));
        // Length below 8.
        assert_eq!(
            request(&[0, 0, 0, 7, 0x04, 0xd2, 0x16, 0x2f], Expect::Any),
            Err(Error::InvalidLength)
        );
        // "user oryx database mailstore".
        let mut s = b"\0\0\0\x26\0\x03\0\0user\0oryx\0database\0mailstore\0\0".to_vec();
        let (m, n) = request(&s, Expect::Any).unwrap();
        assert_eq!(n, 38);
        assert_eq!(
            m,
            Request::Startup {
                major: 3,
                minor: 0,
                user: b"oryx".to_vec(),
                params: vec![(b"database".to_vec(), b"mailstore".to_vec())]
            }
        );
        // Without its final NUL: the message is there, its list never ends.
        s[3] = 0x25;
        s.pop();
        assert_eq!(request(&s, Expect::Any), Err(Error::Stuck));
        // No user.
        let s = b"\0\0\0\x17\0\x03\0\0database\0mail\0\0";
        assert_eq!(request(s, Expect::Any), Err(Error::Invalid));
        // CancelRequest: pid 30257, key 595916589.
        let c = [
            0, 0, 0, 16, 0x04, 0xd2, 0x16, 0x2e, 0, 0, 0x76, 0x31, 0x23, 0x84, 0xf7, 0x2d,
        ];
        assert_eq!(
            request(&c, Expect::Any),
            Ok((
                Request::Cancel {
                    pid: 30257,
                    key: 595916589
                },
                16
            ))
        );
    }

    #[test]
    fn frontend_messages() {
        let q = msg(b'Q', b"SELECT 1;\0");
        assert_eq!(
            request(&q, Expect::Any),
            Ok((Request::Query(b"SELECT 1;".to_vec()), q.len()))
        );
        assert_eq!(request(&q[..6], Expect::Any), Err(Error::Incomplete));
        assert_eq!(request(&msg(b'Q', b"\0"), Expect::Any), Err(Error::Invalid));
        assert_eq!(
            request(b"Q\0\0\0\x02", Expect::Any),
            Err(Error::InvalidLength)
        );
        assert_eq!(
            request(&msg(b'X', b""), Expect::Any),
            Ok((Request::Terminate, 5))
        );
        assert_eq!(
            request(&msg(b'X', b"x"), Expect::Any),
            Err(Error::InvalidLength)
        );
        assert_eq!(
            request(&msg(b'P', b"\0SELECT 1\0\0\0"), Expect::Any),
            Ok((Request::Unknown(b'P'), 17))
        );
        // MD5 password.
        let p = msg(b'p', b"md5ceffc01dcde7541829deef6b5e9c9142\0");
        assert_eq!(
            request(&p, Expect::Password),
            Ok((
                Request::Password(b"md5ceffc01dcde7541829deef6b5e9c9142".to_vec()),
                41
            ))
        );
        assert_eq!(request(&p, Expect::SaslInitial), Err(Error::Invalid));
        let mut body = b"SCRAM-SHA-256\0".to_vec();
        body.extend_from_slice(&4u32.to_be_bytes());
        body.extend_from_slice(b"n,,x");
        assert_eq!(
            request(&msg(b'p', &body), Expect::SaslInitial).map(|r| r.0),
            Ok(Request::SaslInitial {
                mechanism: SaslMechanism::ScramSha256,
                param: b"n,,x".to_vec()
            })
        );
        body.push(b'!');
        assert_eq!(
            request(&msg(b'p', &body), Expect::SaslInitial),
            Err(Error::Invalid)
        );
    }

    #[test]
    fn backend_messages() {
        // AuthenticationMD5Password, salt f211a3ed.
        let m = [0x52, 0, 0, 0, 0x0c, 0, 0, 0, 5, 0xf2, 0x11, 0xa3, 0xed];
        assert_eq!(
            response(&m),
            Ok((Response::AuthMd5(vec![0xf2, 0x11, 0xa3, 0xed]), 13))
        );
        // GSS (7): malformed for Suricata.
        assert_eq!(
            response(&msg(b'R', &7u32.to_be_bytes())),
            Err(Error::Malformed)
        );
        let sasl = msg(b'R', b"\0\0\0\x0aSCRAM-SHA-256-PLUS\0SCRAM-SHA-256\0\0");
        assert_eq!(
            response(&sasl).map(|r| r.0),
            Ok(Response::AuthSasl(vec![
                SaslMechanism::ScramSha256Plus,
                SaslMechanism::ScramSha256
            ]))
        );
        assert_eq!(
            response(&msg(b'S', b"application_name\0psql\0")).map(|r| r.0),
            Ok(Response::ParameterStatus((
                b"application_name".to_vec(),
                b"psql".to_vec()
            )))
        );
        assert_eq!(
            response(&[0x4b, 0, 0, 0, 0x0c, 0, 0, 0, 0x3d, 0xbb, 0xe1, 0xe1, 0xae]).map(|r| r.0),
            Ok(Response::BackendKey {
                pid: 61,
                key: 3152142766
            })
        );
        assert_eq!(
            response(&msg(b'Z', b"X")),
            Err(Error::Invalid),
            "not I, T or E"
        );
        let row = msg(b'D', b"\0\x02\0\0\0\x01a\xff\xff\xff\xff");
        assert_eq!(response(&row).map(|r| r.0), Ok(Response::DataRow(1)));
        // A value running past the row: stuck.
        assert_eq!(
            response(&msg(b'D', b"\0\x01\0\0\0\x09a")),
            Err(Error::Stuck)
        );
        let e = msg(b'E', b"SERROR\0VERROR\0C42P01\0Mno such table\0\0");
        assert_eq!(
            response(&e).map(|r| r.0),
            Ok(Response::Error(vec![
                (b'S', b"ERROR".to_vec()),
                (b'V', b"ERROR".to_vec()),
                (b'C', b"42P01".to_vec()),
                (b'M', b"no such table".to_vec())
            ]))
        );
        // A notice's level in an error.
        assert_eq!(
            response(&msg(b'E', b"VNOTICE\0Mx\0\0")),
            Err(Error::Invalid)
        );
        assert_eq!(
            response(&msg(b'G', b"\0\0\x02\0\0\0\0")),
            Ok((Response::CopyIn(2), 12))
        );
        assert_eq!(ssl_response(b"N"), Ok((Response::SslResponse(false), 1)));
        assert_eq!(ssl_response(b"E"), Err(Error::Invalid));
    }
}
