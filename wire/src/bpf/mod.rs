//! BPF filters: Suricata's `bpf-filter` (and the command line's filter expression) for
//! every capture method.
//!
//! A filter is an expression in pcap filter syntax (`not host 10.0.0.5`, `tcp port 80`),
//! compiled into classic BPF by libpcap's own compiler (`pcap_compile` on a dead handle
//! of the packets' link type, libpcap loaded at run time: see [`crate::libpcap`]), or,
//! as Meerkat took before, a program already compiled by `tcpdump -dd`/`-ddd`
//! ([`program`]). The program then runs where the packets are:
//!
//! | source | where the filter runs |
//! |---|---|
//! | AF_PACKET (`-i`) | in the kernel (`SO_ATTACH_FILTER`), before the ring |
//! | libpcap live (`--pcap`) | `pcap_setfilter` (in the kernel on Linux) |
//! | pcap files (`-r`), DPDK, AF_XDP | in user space, [`vm::Program`] (bounded interpreter) |
//!
//! As with Suricata (whose AF_PACKET filter is compiled the same way), an AF_PACKET
//! filter sees frames after the kernel took their VLAN tag off, so `host X` matches
//! tagged traffic there, while on a pcap file it takes `vlan and host X`.
//!
//! A bad expression is one error naming the expression, libpcap's reason and the
//! character where it goes wrong ([`BpfError::Expression`]); Meerkat finds that place
//! itself, since libpcap says only "syntax error" (see [`locate`]).

pub mod program;
pub mod vm;

use std::time::{Duration, Instant};

use crate::libpcap::{self, LibpcapError};
pub use vm::Program;

/// Most instructions a classic BPF program may have (the kernel's `BPF_MAXINSNS`).
pub const MAX_INSNS: usize = 4096;
/// Bytes a compiled filter keeps of an accepted packet (its `ret` value; Meerkat keeps
/// what the source captured either way).
pub const SNAPLEN: u32 = 262_144;
/// Most bytes of filter text taken (a filter file included).
pub const MAX_EXPR_LEN: usize = 64 * 1024;
/// Tokens of an expression the error search looks at.
const MAX_LOCATE_TOKENS: usize = 64;
/// Time the error search may take (a prefix naming a host makes libpcap resolve it).
const LOCATE_BUDGET: Duration = Duration::from_secs(2);

/// One classic BPF instruction (`struct sock_filter`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Insn {
    pub code: u16,
    pub jt: u8,
    pub jf: u8,
    pub k: u32,
}

/// Where an expression goes wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Position {
    /// At this character (1-based) with this token.
    Token { column: usize, token: String },
    /// The expression ends too early.
    End,
}

impl std::fmt::Display for Position {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Position::Token { column, token } => write!(f, " at character {column} (`{token}`)"),
            Position::End => write!(f, " at the end of the expression"),
        }
    }
}

/// Errors of reading, compiling or checking a filter.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum BpfError {
    #[error("bpf-filter is empty")]
    Empty,
    #[error("bpf-filter line {line}: `{text}` is not a `code jt jf k` instruction")]
    BadLine { line: usize, text: String },
    #[error("bpf-filter has {0} instructions, more than the {MAX_INSNS} the kernel takes")]
    TooLong(usize),
    #[error("bpf-filter announces {announced} instructions but holds {found}")]
    CountMismatch { announced: usize, found: usize },
    #[error("bpf-filter instruction {at}: {why}")]
    Invalid { at: usize, why: &'static str },
    #[error("BPF filter `{expr}` needs libpcap to compile it: {source}")]
    NoLibpcap {
        expr: String,
        #[source]
        source: LibpcapError,
    },
    #[error("BPF filter `{expr}`: {message}{}", .at.as_ref().map(|p| p.to_string()).unwrap_or_default())]
    Expression {
        expr: String,
        message: String,
        at: Option<Position>,
    },
    #[error("BPF filter of {0} bytes is longer than the {MAX_EXPR_LEN} taken")]
    TooLarge(usize),
}

/// Compiles filter `text` for packets of pcap link type `link_type`: an expression with
/// libpcap, or a `tcpdump -dd`/`-ddd` program as it is.
pub fn compile(text: &str, link_type: u16) -> Result<Vec<Insn>, BpfError> {
    if text.len() > MAX_EXPR_LEN {
        return Err(BpfError::TooLarge(text.len()));
    }
    let expr = text.trim();
    if expr.is_empty() {
        return Err(BpfError::Empty);
    }
    if program::looks_compiled(expr) {
        return program::parse(expr);
    }
    let lib = libpcap::get().map_err(|source| BpfError::NoLibpcap {
        expr: expr.to_string(),
        source,
    })?;
    match libpcap::compile_on_dead(lib, expr, link_type, SNAPLEN) {
        Ok(insns) => {
            if insns.len() > MAX_INSNS {
                return Err(BpfError::TooLong(insns.len()));
            }
            Ok(insns
                .into_iter()
                .map(|i| Insn {
                    code: i.code,
                    jt: i.jt,
                    jf: i.jf,
                    k: i.k,
                })
                .collect())
        }
        Err(message) => Err(BpfError::Expression {
            at: locate(expr, &message, |e| {
                libpcap::compile_on_dead(lib, e, link_type, SNAPLEN).is_ok()
            }),
            expr: expr.to_string(),
            message,
        }),
    }
}

/// Compiles `text` for the user-space interpreter.
pub fn user_space(text: &str, link_type: u16) -> Result<Program, BpfError> {
    Program::new(&compile(text, link_type)?)
}

/// Checks a filter before anything starts (compiled for Ethernet, the link type of
/// every live source and of nearly all capture files).
pub fn check(text: &str) -> Result<(), BpfError> {
    compile(text, crate::LINKTYPE_ETHERNET).map(|_| ())
}

/// A filter run in user space over packets of whatever link types come (a pcapng file
/// may mix them): compiled once per link type, on its first packet.
#[derive(Debug)]
pub struct UserFilter {
    text: String,
    /// The program of each link type seen, the last used first.
    compiled: Vec<(u16, Program)>,
    /// Packets the filter refused.
    pub rejected: u64,
}

/// Link types one [`UserFilter`] compiles for at most (pcapng interfaces).
const MAX_LINK_TYPES: usize = 16;

impl UserFilter {
    /// A filter of `text`, checked for Ethernet now (so that a bad one fails at once).
    pub fn new(text: &str) -> Result<UserFilter, BpfError> {
        let eth = crate::LINKTYPE_ETHERNET;
        Ok(UserFilter {
            compiled: vec![(eth, user_space(text, eth)?)],
            text: text.to_string(),
            rejected: 0,
        })
    }

    /// The filter text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Whether the filter takes a packet of `link_type`; `Err` when the filter cannot
    /// be compiled for that link type (`ether host` on raw IP).
    #[inline]
    pub fn accepts(&mut self, link_type: u16, data: &[u8], wirelen: u32) -> Result<bool, BpfError> {
        let prog = match self.compiled.first() {
            Some((lt, p)) if *lt == link_type => p,
            _ => self.program(link_type)?,
        };
        let ok = prog.matches(data, wirelen);
        self.rejected += u64::from(!ok);
        Ok(ok)
    }

    #[cold]
    fn program(&mut self, link_type: u16) -> Result<&Program, BpfError> {
        if let Some(i) = self.compiled.iter().position(|(lt, _)| *lt == link_type) {
            self.compiled.swap(0, i);
        } else {
            let p = user_space(&self.text, link_type)?;
            if self.compiled.len() >= MAX_LINK_TYPES {
                self.compiled.pop();
            }
            self.compiled.insert(0, (link_type, p));
        }
        Ok(&self.compiled[0].1)
    }
}

/// A filter file as Suricata reads one (`-F FILE`): `#` starts a comment to the end of
/// its line, lines are joined with spaces.
pub fn from_file_text(text: &str) -> String {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The byte ranges of an expression's tokens as the pcap lexer splits them, near enough
/// for error positions: words (names, numbers, addresses), brackets, operator runs.
fn tokens(expr: &str) -> Vec<(usize, usize)> {
    const OPS: &[u8] = b"!=<>&|+*/%^";
    let b = expr.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        if b"()[]".contains(&c) {
            i += 1;
        } else if OPS.contains(&c) {
            while i < b.len() && OPS.contains(&b[i]) {
                i += 1;
            }
        } else {
            while i < b.len()
                && !b[i].is_ascii_whitespace()
                && !b"()[]".contains(&b[i])
                && !OPS.contains(&b[i])
            {
                i += 1;
            }
        }
        out.push((start, i));
    }
    out
}

/// Where expression `expr`, which libpcap refused with `message`, goes wrong.
///
/// A token the message quotes or repeats (`invalid IPv4 address '10.0.0.500'`, `illegal
/// port number 99999 > 65535`) is the place. Otherwise (libpcap says only "syntax error"), the place
/// is the first token after which no completion makes the expression compile: each prefix
/// of the token list is tried with a few endings (nothing, a primitive, a number, an
/// address, a comparison, with the brackets it opened closed), as a parser would fail at
/// the first token that cannot continue any valid expression. `compiles` is libpcap's
/// compiler. Bounded by [`MAX_LOCATE_TOKENS`] and [`LOCATE_BUDGET`]; `None` when it
/// cannot tell.
pub fn locate(
    expr: &str,
    message: &str,
    mut compiles: impl FnMut(&str) -> bool,
) -> Option<Position> {
    let toks = tokens(expr);
    let at = |&(s, e): &(usize, usize)| Position::Token {
        column: expr[..s].chars().count() + 1,
        token: expr[s..e].to_string(),
    };
    if !message.contains("syntax error") {
        // A quoted token first, then a number or address the message repeats (its words
        // also name keywords, `illegal port number ...`, which are not the place).
        let quoted = toks
            .iter()
            .find(|&&(s, e)| message.contains(&format!("'{}'", &expr[s..e])))
            .or_else(|| {
                toks.iter().find(|&&(s, e)| {
                    let t = &expr[s..e];
                    t.bytes().any(|c| c.is_ascii_digit())
                        && message
                            .split(|c: char| c.is_whitespace() || c == ',')
                            .any(|w| w == t)
                })
            });
        if let Some(t) = quoted {
            return Some(at(t));
        }
    }
    const ENDINGS: [&str; 7] = [
        "",
        " ip",
        " 1",
        " 127.0.0.1",
        " 00:00:00:00:00:00",
        " = 0",
        " 1 = 0",
    ];
    let started = Instant::now();
    for (n, tok) in toks.iter().enumerate().take(MAX_LOCATE_TOKENS) {
        if started.elapsed() > LOCATE_BUDGET {
            return None;
        }
        let prefix = &expr[..tok.1];
        let depth = |open: char, close: char| {
            let o = prefix.matches(open).count();
            let c = prefix.matches(close).count();
            o.saturating_sub(c)
        };
        let (parens, brackets) = (depth('(', ')'), depth('[', ']'));
        let viable = ENDINGS.iter().any(|end| {
            ["", " = 0"].iter().any(|tail| {
                let candidate = format!(
                    "{prefix}{end}{}{tail}{}",
                    "]".repeat(brackets),
                    ")".repeat(parens)
                );
                compiles(&candidate)
            })
        });
        if !viable {
            return Some(at(tok));
        }
        if n + 1 == toks.len() {
            // Every prefix can go on, the whole cannot: it stops too early.
            return Some(Position::End);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_like_the_pcap_lexer() {
        let e = "tcp[13]&2!=0 and not host fe80::1 or net 10.0.0.0/8";
        let t: Vec<&str> = tokens(e).iter().map(|&(s, x)| &e[s..x]).collect();
        assert_eq!(
            t,
            [
                "tcp", "[", "13", "]", "&", "2", "!=", "0", "and", "not", "host", "fe80::1", "or",
                "net", "10.0.0.0", "/", "8"
            ]
        );
    }

    #[test]
    fn file_text_drops_comments_and_joins_lines() {
        let f = "# keep the sensor quiet\nnot host 10.0.0.5 # the scanner\n\n  and not port 22\n";
        assert_eq!(from_file_text(f), "not host 10.0.0.5 and not port 22");
    }

    #[test]
    fn compiled_programs_need_no_libpcap() {
        let p = compile("{ 0x6, 0, 0, 0x00040000 },", 1).unwrap();
        assert_eq!(p.len(), 1);
        assert_eq!(compile("  ", 1), Err(BpfError::Empty));
        assert!(matches!(
            compile(&"x".repeat(MAX_EXPR_LEN + 1), 1),
            Err(BpfError::TooLarge(_))
        ));
    }

    /// Each bad expression, and the token (or the end) libpcap's parser stops at.
    #[test]
    fn bad_expressions_name_their_place() {
        if !libpcap::available() {
            eprintln!("skipping bad_expressions_name_their_place: libpcap is not installed");
            return;
        }
        let cases: [(&str, Option<&str>); 9] = [
            ("not hostt 10.0.0.5", Some("hostt")),
            ("host 10.0.0.500", Some("10.0.0.500")),
            ("port 99999", Some("99999")),
            ("not port", None),
            ("tcp and (port 80", None),
            ("port 80 or or udp", Some("or")),
            ("udp port 53 )", Some(")")),
            ("vlan 5000 and ip", Some("5000")),
            ("ip proto nosuch", Some("nosuch")),
        ];
        for (expr, want) in cases {
            let e = compile(expr, 1).unwrap_err();
            let BpfError::Expression { at, message, .. } = &e else {
                panic!("{expr}: {e}");
            };
            match (want, at) {
                (Some(tok), Some(Position::Token { token, column })) => {
                    assert_eq!(token, tok, "{expr}: {e}");
                    assert_eq!(&expr[column - 1..column - 1 + tok.len()], tok, "{expr}");
                    if expr == "port 80 or or udp" {
                        assert_eq!(*column, 12, "the second `or`");
                    }
                }
                (None, Some(Position::End)) => {}
                _ => panic!("{expr}: {e} ({message})"),
            }
            let text = e.to_string();
            assert!(
                text.starts_with(&format!("BPF filter `{expr}`: ")),
                "{text}"
            );
        }
        let e = compile("not hostt 10.0.0.5", 1).unwrap_err().to_string();
        assert_eq!(
            e,
            "BPF filter `not hostt 10.0.0.5`: can't parse filter expression: syntax error at character 5 (`hostt`)"
        );
    }

    #[test]
    fn expressions_compile_for_the_link_type() {
        if !libpcap::available() {
            eprintln!("skipping expressions_compile_for_the_link_type: libpcap is not installed");
            return;
        }
        let eth = user_space("udp", crate::LINKTYPE_ETHERNET).unwrap();
        let raw = user_space("udp", crate::LINKTYPE_RAW).unwrap();
        assert_ne!(eth.insns(), raw.insns());
        // An IPv4/UDP header as raw IP (version 4, IHL 5, protocol 17).
        let mut ip = vec![0u8; 28];
        ip[0] = 0x45;
        ip[9] = 17;
        assert!(raw.matches(&ip, 28));
        assert!(!eth.matches(&ip, 28));
        // `ether` makes no sense on raw IP.
        assert!(compile("ether host 00:11:22:33:44:55", crate::LINKTYPE_RAW).is_err());
    }

    /// The interpreter against libpcap's own (`pcap_offline_filter`) on every packet of
    /// the sample capture, for expressions that exercise every kind of load and jump.
    #[test]
    fn interpreter_agrees_with_libpcap() {
        let Ok(lib) = libpcap::get() else {
            eprintln!("skipping interpreter_agrees_with_libpcap: libpcap is not installed");
            return;
        };
        // The sample, and the first packets of the shared corpus' mix when present
        // (IPv6, VLAN, more protocols).
        let mut packets = Vec::new();
        for (path, most) in [
            (
                concat!(env!("CARGO_MANIFEST_DIR"), "/../sample/sample.pcap"),
                usize::MAX,
            ),
            (
                concat!(
                    env!("CARGO_MANIFEST_DIR"),
                    "/../../shared/corpus/traffic/mix-small.pcap"
                ),
                3000,
            ),
        ] {
            let Ok(f) = std::fs::File::open(path) else {
                continue;
            };
            let mut r = crate::pcap::Reader::new(f).unwrap();
            while let Some(p) = r.next_packet().unwrap() {
                packets.push((p.link_type, p.data.to_vec(), p.origlen));
                if packets.len() >= most {
                    break;
                }
            }
        }
        assert!(packets.len() > 20);
        let exprs = [
            "tcp",
            "udp port 53",
            "not host 10.0.0.5",
            "tcp[tcpflags] & (tcp-syn|tcp-fin) != 0",
            "ip[2:2] > 100 and ip[8] < 128",
            "tcp dst portrange 1-1024",
            "ip6 or arp",
            "len > 200 and len <= 1500",
            "tcp[((tcp[12] & 0xf0) >> 2):4] = 0x47455420",
            "(ip[0] & 0xf) * 4 + 20 < 64 or ip[6:2] & 0x1fff != 0",
            "net 192.168.0.0/16 and not broadcast and not multicast",
            "vlan or tcp port 443",
        ];
        let mut matched = 0;
        for expr in exprs {
            let insns = libpcap::compile_on_dead(lib, expr, 1, SNAPLEN).unwrap();
            let ours = Program::new(&compile(expr, 1).unwrap()).unwrap();
            for (lt, data, origlen) in &packets {
                assert_eq!(*lt, 1);
                let mut prog = libpcap::BpfProgram {
                    bf_len: insns.len() as u32,
                    bf_insns: insns.as_ptr() as *mut libpcap::BpfInsn,
                };
                let hdr = libpcap::PktHdr {
                    ts: libc::timeval {
                        tv_sec: 0,
                        tv_usec: 0,
                    },
                    caplen: data.len() as u32,
                    len: *origlen,
                };
                // SAFETY (test): a program and packet that outlive the call; libpcap
                // only reads them.
                let theirs = unsafe { (lib.offline_filter)(&mut prog, &hdr, data.as_ptr()) };
                assert_eq!(
                    ours.matches(data, *origlen),
                    theirs != 0,
                    "{expr} on a {}-byte packet",
                    data.len()
                );
                matched += usize::from(theirs != 0);
            }
        }
        assert!(matched > 0);
    }
}
