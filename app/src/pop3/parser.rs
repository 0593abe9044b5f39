//! POP3 lines (RFC 1939, RFC 2449, RFC 2595, RFC 5034, RFC 6856): commands with their
//! arguments, and the status line of a response.
//!
//! Everything here works on one line (its line feed and carriage return removed) of
//! borrowed bytes; the streaming and the bounds live in [`super::state`].

/// Longest command line, its CRLF included (RFC 2449 §4): past it,
/// `request_too_long`.
pub const MAX_COMMAND_LINE: usize = 255;
/// Longest status line of a response, its CRLF included (RFC 2449 §4): past it,
/// `response_too_long`.
pub const MAX_RESPONSE_LINE: usize = 512;
/// Arguments of a command kept at most (further words are dropped).
pub const MAX_ARGS: usize = 8;

/// A command Suricata's POP3 parser knows: its name (upper case: names are matched
/// with case), the argument counts it takes, and whether a positive answer to it
/// carries lines ending with `.` (with no arguments, or always).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Command {
    pub name: &'static str,
    pub min_args: u8,
    pub max_args: u8,
    pub multiline: Multi,
}

/// When a `+OK` answer to a command is multi-line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Multi {
    Never,
    Always,
    /// Only without an argument (`LIST`: all messages; `LIST 1`: one line).
    WithoutArgs,
}

const fn c(name: &'static str, min_args: u8, max_args: u8, multiline: Multi) -> Command {
    Command {
        name,
        min_args,
        max_args,
        multiline,
    }
}

/// The commands of RFC 1939 and its extensions.
pub static COMMANDS: &[Command] = &[
    c("USER", 1, 1, Multi::Never),
    c("PASS", 1, 1, Multi::Never),
    c("APOP", 2, 2, Multi::Never),
    c("STAT", 0, 0, Multi::Never),
    c("LIST", 0, 1, Multi::WithoutArgs),
    c("RETR", 1, 1, Multi::Always),
    c("DELE", 1, 1, Multi::Never),
    c("NOOP", 0, 0, Multi::Never),
    c("RSET", 0, 0, Multi::Never),
    c("QUIT", 0, 0, Multi::Never),
    c("TOP", 2, 2, Multi::Always),
    c("UIDL", 0, 1, Multi::WithoutArgs),
    c("CAPA", 0, 0, Multi::Always),
    c("STLS", 0, 0, Multi::Never),
    c("AUTH", 0, 2, Multi::WithoutArgs),
    c("UTF8", 0, 0, Multi::Never),
    c("LANG", 0, 1, Multi::WithoutArgs),
];

/// A command line split: the name as written and the arguments (split at spaces).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request<'a> {
    pub name: &'a [u8],
    pub args: Vec<&'a [u8]>,
    /// The known command the name is, if any.
    pub known: Option<&'static Command>,
}

/// Splits a command line. `None` for an empty line.
pub fn request(line: &[u8]) -> Option<Request<'_>> {
    let mut words = line.split(|&b| b == b' ').filter(|w| !w.is_empty());
    let name = words.next()?;
    // Past MAX_ARGS, further words are dropped.
    let args: Vec<&[u8]> = words.take(MAX_ARGS).collect();
    let known = COMMANDS.iter().find(|c| c.name.as_bytes() == name);
    Some(Request { name, args, known })
}

/// The status line of a response: `+OK` or `-ERR`, and the text after it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status<'a> {
    pub ok: bool,
    pub header: &'a [u8],
}

/// Reads a response's status line; `None` when it is neither `+OK` nor `-ERR`.
pub fn status(line: &[u8]) -> Option<Status<'_>> {
    let (ok, rest) = if let Some(r) = line.strip_prefix(b"+OK") {
        (true, r)
    } else if let Some(r) = line.strip_prefix(b"-ERR") {
        (false, r)
    } else {
        return None;
    };
    let header = match rest.split_first() {
        None => rest,
        Some((b' ', h)) => h,
        // `+OKAY` is no status.
        Some(_) => return None,
    };
    Some(Status { ok, header })
}

/// Whether a positive answer to `req` carries lines ending with `.`.
pub fn multiline(req: &Request<'_>) -> bool {
    match req.known.map(|c| c.multiline) {
        Some(Multi::Always) => true,
        Some(Multi::WithoutArgs) => req.args.is_empty(),
        _ => false,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn requests() {
        let r = request(b"APOP bob c4c9334bac560ecc979e58001b3e22fb").unwrap();
        assert_eq!(r.name, b"APOP");
        assert_eq!(r.args, [&b"bob"[..], b"c4c9334bac560ecc979e58001b3e22fb"]);
        assert_eq!(r.known.map(|c| c.name), Some("APOP"));
        // Names are matched with case.
        assert!(request(b"user x").unwrap().known.is_none());
        assert!(request(b"").is_none());
        assert!(multiline(&request(b"LIST").unwrap()));
        assert!(!multiline(&request(b"LIST 1").unwrap()));
        assert!(multiline(&request(b"RETR 1").unwrap()));
        assert!(!multiline(&request(b"STAT").unwrap()));
        let many = request(b"X 1 2 3 4 5 6 7 8 9 10").unwrap();
        assert_eq!(many.args.len(), MAX_ARGS);
        assert_eq!(many.args[MAX_ARGS - 1], b"8");
    }

    #[test]
    fn statuses() {
        assert_eq!(
            status(b"+OK 2 320"),
            Some(Status {
                ok: true,
                header: b"2 320"
            })
        );
        assert_eq!(
            status(b"-ERR"),
            Some(Status {
                ok: false,
                header: b""
            })
        );
        assert_eq!(status(b"+OKAY"), None);
        assert_eq!(status(b"garbage"), None);
    }
}
