//! FTP control-channel lines (RFC 959, RFC 2428): the command table, reply lines, and
//! the port arguments of PORT / EPRT and of the PASV / EPSV replies.
//!
//! Everything here works on one line (its line feed and carriage return removed) of
//! borrowed bytes; the streaming and the line bound live in [`super::state`].

/// What the parser does with a command beyond logging it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `PORT h1,h2,h3,h4,p1,p2`: active mode, the port in the command.
    Port,
    /// `EPRT |af|addr|port|`: active mode, the port in the command.
    Eprt,
    /// `PASV`: passive mode, the port in the `227` reply.
    Pasv,
    /// `EPSV`: passive mode, the port in the `229` reply.
    Epsv,
    /// `RETR name`: a file from the server over the data connection.
    Retr,
    /// `STOR name`: a file to the server over the data connection.
    Stor,
    /// `AUTH TLS`.
    AuthTls,
    /// Any other command of the table.
    Other,
}

/// A known command: its name as Suricata logs it (EVE `ftp.command`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    pub name: &'static str,
    pub kind: Kind,
}

const fn c(name: &'static str) -> Command {
    Command {
        name,
        kind: Kind::Other,
    }
}

const fn k(name: &'static str, kind: Kind) -> Command {
    Command { name, kind }
}

/// The commands Meerkat recognises (RFC 959, 2228, 2389, 2428, 2640, 3659, 7151 and
/// the common extensions). A line that starts with none of them makes no transaction,
/// as in Suricata.
pub static COMMANDS: &[Command] = &[
    k("PORT", Kind::Port),
    k("EPRT", Kind::Eprt),
    k("AUTH TLS", Kind::AuthTls),
    k("PASV", Kind::Pasv),
    k("RETR", Kind::Retr),
    k("EPSV", Kind::Epsv),
    k("STOR", Kind::Stor),
    c("ABOR"),
    c("ACCT"),
    c("ALLO"),
    c("APPE"),
    c("AUTH"),
    c("ADAT"),
    c("AVBL"),
    c("CCC"),
    c("CDUP"),
    c("CHMOD"),
    c("CONF"),
    c("CSID"),
    c("CWD"),
    c("DELE"),
    c("DSIZ"),
    c("ENC"),
    c("FEAT"),
    c("HELP"),
    c("HOST"),
    c("IDLE"),
    c("LANG"),
    c("LIST"),
    c("LPRT"),
    c("LPSV"),
    c("MAIL"),
    c("MDTM"),
    c("MFCT"),
    c("MFF"),
    c("MFMT"),
    c("MIC"),
    c("MKD"),
    c("MLFL"),
    c("MLSD"),
    c("MLST"),
    c("MODE"),
    c("MRCP"),
    c("MRSQ"),
    c("MSAM"),
    c("MSND"),
    c("MSOM"),
    c("NLST"),
    c("NOOP"),
    c("OPTS"),
    c("PASS"),
    c("PBSZ"),
    c("PROT"),
    c("PWD"),
    c("QUIT"),
    c("REIN"),
    c("REST"),
    c("RMD"),
    c("RMDA"),
    c("RNFR"),
    c("RNTO"),
    c("SITE"),
    c("SIZE"),
    c("SMNT"),
    c("SPSV"),
    c("STAT"),
    c("STOU"),
    c("STRU"),
    c("SYST"),
    c("THMB"),
    c("TYPE"),
    c("UMASK"),
    c("USER"),
    c("XCUP"),
    c("XCWD"),
    c("XMKD"),
    c("XPWD"),
    c("XRCP"),
    c("XRMD"),
    c("XRSQ"),
    c("XSEM"),
    c("XSEN"),
];

/// Longest command name of [`COMMANDS`].
const MAX_COMMAND_LEN: usize = 8;

/// The command a request line starts with (case-insensitive; the name ends at a space
/// or the end of the line), and the bytes after the name and its space (the command
/// data, possibly empty).
pub fn command(line: &[u8]) -> Option<(&'static Command, &[u8])> {
    let word_end = line.iter().position(|&b| b == b' ').unwrap_or(line.len());
    let word = line.get(..word_end)?;
    if word.is_empty() || word.len() > MAX_COMMAND_LEN {
        return None;
    }
    // `AUTH TLS` is a command of its own (the reply `234` upgrades the connection).
    if word.eq_ignore_ascii_case(b"AUTH")
        && line
            .get(word_end + 1..)
            .is_some_and(|r| r.len() >= 3 && r[..3].eq_ignore_ascii_case(b"TLS"))
    {
        let cmd = COMMANDS.iter().find(|c| c.kind == Kind::AuthTls)?;
        return Some((cmd, line.get(cmd.name.len() + 1..).unwrap_or(&[])));
    }
    let cmd = COMMANDS
        .iter()
        .find(|c| c.kind != Kind::AuthTls && c.name.as_bytes().eq_ignore_ascii_case(word))?;
    Some((cmd, line.get(word_end + 1..).unwrap_or(&[])))
}

/// A reply line split as Suricata 8 splits it: trailing white space cut off (a line
/// left empty is no line: `None`), then a code if the line starts with three digits
/// and a space, and the text after that space; any other line (`230-Welcome`, a
/// multi-line reply's inner lines, `200` alone) is all text, without a code.
/// Suricata reads no multi-line structure into replies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplyLine<'a> {
    pub code: Option<[u8; 3]>,
    pub text: &'a [u8],
}

pub fn reply_line(line: &[u8]) -> Option<ReplyLine<'_>> {
    let line = line.trim_ascii_end();
    if line.is_empty() {
        return None;
    }
    Some(match line {
        [a, b, c, b' ', rest @ ..]
            if a.is_ascii_digit() && b.is_ascii_digit() && c.is_ascii_digit() =>
        {
            ReplyLine {
                code: Some([*a, *b, *c]),
                text: rest,
            }
        }
        _ => ReplyLine {
            code: None,
            text: line,
        },
    })
}

/// A positive preliminary reply (`1yz` and a white space, on the line as received):
/// its transaction stays open for the final reply, as Suricata's `FTPIsPPR`.
pub fn is_preliminary(line: &[u8]) -> bool {
    matches!(line, [b'1', b, c, sp, ..] if b.is_ascii_digit() && c.is_ascii_digit() && sp.is_ascii_whitespace())
}

/// A decimal number of at most `max_digits` digits.
fn decimal(s: &[u8], max_digits: usize) -> Option<u32> {
    if s.is_empty() || s.len() > max_digits || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    s.iter().try_fold(0u32, |n, &d| {
        n.checked_mul(10)?.checked_add(u32::from(d - b'0'))
    })
}

fn trim(s: &[u8]) -> &[u8] {
    let start = s
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(s.len());
    let end = s
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |e| e + 1);
    s.get(start..end).unwrap_or(&[])
}

/// The port of `h1,h2,h3,h4,p1,p2` (PORT's argument, the numbers of a `227` reply):
/// `p1 * 256 + p2`, `None` when malformed or 0.
pub fn port_of_six(s: &[u8]) -> Option<u16> {
    let mut parts = s.split(|&b| b == b',');
    let mut v = [0u32; 6];
    for slot in &mut v {
        let n = decimal(trim(parts.next()?), 3)?;
        if n > 255 {
            return None;
        }
        *slot = n;
    }
    if parts.next().is_some() {
        return None;
    }
    let port = u16::try_from(v[4] * 256 + v[5]).ok()?;
    (port != 0).then_some(port)
}

/// The address of a PORT command's data (its first four numbers), for `ftpbounce`.
pub fn active_addr(data: &[u8]) -> Option<std::net::Ipv4Addr> {
    active_port(data)?;
    let mut parts = trim(data).split(|&b| b == b',');
    let mut v = [0u8; 4];
    for slot in &mut v {
        *slot = u8::try_from(decimal(trim(parts.next()?), 3)?).ok()?;
    }
    Some(std::net::Ipv4Addr::from(v))
}

/// The port of a PORT command's data.
pub fn active_port(data: &[u8]) -> Option<u16> {
    port_of_six(trim(data))
}

/// The port of an EPRT command's data, `<d>af<d>addr<d>port<d>` (RFC 2428).
pub fn eprt_port(data: &[u8]) -> Option<u16> {
    let data = trim(data);
    let (&d, rest) = data.split_first()?;
    let mut f = rest.split(|&b| b == d);
    let _af = f.next()?;
    let _addr = f.next()?;
    let port = decimal(f.next()?, 5)?;
    if f.next() != Some(&[]) {
        return None;
    }
    u16::try_from(port).ok().filter(|&p| p != 0)
}

/// The port of a `227` reply's text: the six numbers between parentheses (or, as some
/// servers write them, after the last space).
pub fn pasv_port(text: &[u8]) -> Option<u16> {
    if let Some(open) = text.iter().position(|&b| b == b'(') {
        let close = open + 1 + text.get(open + 1..)?.iter().position(|&b| b == b')')?;
        return port_of_six(text.get(open + 1..close)?);
    }
    let start = text.iter().rposition(|&b| b == b' ').map_or(0, |i| i + 1);
    let tail = text.get(start..)?;
    let tail = tail.strip_suffix(b".").unwrap_or(tail);
    port_of_six(tail)
}

/// The port of a `229` reply's text: `(<d><d><d>port<d>)` (RFC 2428).
pub fn epsv_port(text: &[u8]) -> Option<u16> {
    let open = text.iter().position(|&b| b == b'(')?;
    let inner = text.get(open + 1..)?;
    let close = inner.iter().position(|&b| b == b')')?;
    let inner = inner.get(..close)?;
    let (&d, rest) = inner.split_first()?;
    let mut f = rest.split(|&b| b == d);
    if f.next() != Some(&[]) || f.next() != Some(&[]) {
        return None;
    }
    let port = decimal(f.next()?, 5)?;
    if f.next() != Some(&[]) {
        return None;
    }
    u16::try_from(port).ok().filter(|&p| p != 0)
}

#[cfg(test)]
pub mod tests {
    use super::*;

    /// A session: banner, login, passive RETR, a multi-line reply, QUIT.
    pub const CLIENT: &[u8] =
        b"USER anonymous\r\nPASS secret\r\nPASV\r\nRETR temp.txt\r\nHELP\r\nQUIT\r\n";
    pub const SERVER: &[u8] = b"220 (vsFTPd 3.0.2)\r\n331 Please specify the password.\r\n230 Login successful.\r\n227 Entering Passive Mode (192,168,0,10,185,13).\r\n150 Opening BINARY mode data connection for temp.txt (12 bytes).\r\n226 Transfer complete.\r\n214-The following commands are recognized.\r\n ABOR ACCT\r\n214 Help OK.\r\n221 Goodbye.\r\n";

    /// [`SERVER`] in the pieces a server sends: a reply each, a multi-line reply
    /// in one piece.
    pub fn server_pieces() -> Vec<&'static [u8]> {
        let coded =
            |l: &[u8], sep: u8| l.len() > 3 && l[..3].iter().all(u8::is_ascii_digit) && l[3] == sep;
        let mut pieces = Vec::new();
        let (mut start, mut in_multi) = (0, false);
        let mut at = 0;
        for line in SERVER.split_inclusive(|&b| b == b'\n') {
            at += line.len();
            in_multi = if in_multi {
                !coded(line, b' ')
            } else {
                coded(line, b'-')
            };
            if !in_multi {
                pieces.push(&SERVER[start..at]);
                start = at;
            }
        }
        pieces
    }

    #[test]
    fn commands() {
        let (cmd, data) = command(b"retr temp.txt").unwrap();
        assert_eq!(
            (cmd.name, cmd.kind, data),
            ("RETR", Kind::Retr, &b"temp.txt"[..])
        );
        let (cmd, data) = command(b"SYST").unwrap();
        assert_eq!((cmd.name, data), ("SYST", &b""[..]));
        let (cmd, data) = command(b"AUTH TLS").unwrap();
        assert_eq!((cmd.kind, data), (Kind::AuthTls, &b""[..]));
        let (cmd, data) = command(b"AUTH SSL").unwrap();
        assert_eq!((cmd.name, data), ("AUTH", &b"SSL"[..]));
        assert!(command(b"GET / HTTP/1.1").is_none());
        assert!(command(b"").is_none());
        assert!(command(b" USER x").is_none());
    }

    #[test]
    fn replies() {
        let r = reply_line(b"220 (vsFTPd 3.0.2)  ").unwrap();
        assert_eq!((r.code, r.text), (Some(*b"220"), &b"(vsFTPd 3.0.2)"[..]));
        // Suricata reads no multi-line structure: `214-` is text.
        let r = reply_line(b"214-The following").unwrap();
        assert_eq!((r.code, r.text), (None, &b"214-The following"[..]));
        let r = reply_line(b" ABOR ACCT").unwrap();
        assert_eq!((r.code, r.text), (None, &b" ABOR ACCT"[..]));
        let r = reply_line(b"331  Password required").unwrap();
        assert_eq!(r.text, b" Password required");
        assert_eq!(reply_line(b"99 x").unwrap().code, None);
        assert_eq!(reply_line(b"200").unwrap().code, None);
        assert_eq!(reply_line(b" \t "), None);
        assert!(is_preliminary(b"150 Opening"));
        assert!(!is_preliminary(b"150-Opening"));
        assert!(!is_preliminary(b"150"));
        assert!(!is_preliminary(b"226 Done"));
    }

    #[test]
    fn ports() {
        assert_eq!(active_port(b"192,168,0,13,234,22"), Some(59926));
        assert_eq!(active_port(b"192,168,0,13,234"), None);
        assert_eq!(active_port(b"192,168,0,13,256,1"), None);
        assert_eq!(active_port(b"1,2,3,4,0,0"), None);
        assert_eq!(
            pasv_port(b"Entering Passive Mode (2,2,2,2,185,13)."),
            Some(47373)
        );
        assert_eq!(
            pasv_port(b"Entering Passive Mode 2,2,2,2,185,13"),
            Some(47373)
        );
        assert_eq!(pasv_port(b"AAAA"), None);
        assert_eq!(eprt_port(b"|1|132.235.1.2|6275|"), Some(6275));
        assert_eq!(eprt_port(b"|2|1080::8:800:200C:417A|5282|"), Some(5282));
        assert_eq!(eprt_port(b"|1|1.2.3.4|99999|"), None);
        assert_eq!(
            epsv_port(b"Entering Extended Passive Mode (|||6446|)"),
            Some(6446)
        );
        assert_eq!(
            epsv_port(b"Entering Extended Passive Mode (|1||6446|)"),
            None
        );
    }
}
