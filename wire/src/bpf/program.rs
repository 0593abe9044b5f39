//! Compiled programs as text: `tcpdump -dd 'port 80'` output (C array lines such as
//! `{ 0x28, 0, 0, 0x0000000c },`) or `tcpdump -ddd 'port 80'` output (a count line, then
//! one `code jt jf k` line per instruction, in decimal). Meerkat took only these before it
//! compiled expressions itself; they still work wherever a filter is taken.

use super::{BpfError, Insn, MAX_INSNS};

/// Whether `text` looks like a compiled program rather than an expression: `-dd` output
/// has braces, `-ddd` output is lines of numbers only (no filter expression is made of
/// numbers alone).
pub fn looks_compiled(text: &str) -> bool {
    let t = text.trim_start();
    if t.starts_with('{') {
        return true;
    }
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let Some(first) = lines.next() else {
        return false;
    };
    let numeric = |l: &str| {
        l.split_whitespace()
            .all(|w| w.bytes().all(|b| b.is_ascii_digit()))
    };
    first.split_whitespace().count() == 1
        && numeric(first)
        && lines.all(|l| l.split_whitespace().count() == 4 && numeric(l))
}

fn number(s: &str) -> Option<u64> {
    let s = s.trim();
    if let Some(hex) = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        u64::from_str_radix(hex, 16).ok()
    } else {
        s.parse().ok()
    }
}

fn insn(fields: &[&str]) -> Option<Insn> {
    let [code, jt, jf, k] = fields else {
        return None;
    };
    Some(Insn {
        code: u16::try_from(number(code)?).ok()?,
        jt: u8::try_from(number(jt)?).ok()?,
        jf: u8::try_from(number(jf)?).ok()?,
        k: u32::try_from(number(k)?).ok()?,
    })
}

/// Parses `tcpdump -dd` or `tcpdump -ddd` output.
pub fn parse(text: &str) -> Result<Vec<Insn>, BpfError> {
    let mut prog = Vec::new();
    let mut announced = None;
    // `-dd` output may come on one line (`{ .. }, { .. },`) when written into YAML.
    let braces = text.contains('{');
    let items: Vec<(usize, String)> = if braces {
        text.split('}')
            .enumerate()
            .map(|(i, s)| (i + 1, s.replace(['{', ','], " ")))
            .filter(|(_, s)| !s.trim().is_empty())
            .map(|(i, s)| (i, s.trim().to_string()))
            .collect()
    } else {
        text.lines()
            .enumerate()
            .map(|(i, s)| (i + 1, s.trim().to_string()))
            .filter(|(_, s)| !s.is_empty())
            .collect()
    };
    for (n, (line, item)) in items.iter().enumerate() {
        let fields: Vec<&str> = item.split_whitespace().collect();
        if !braces && n == 0 && fields.len() == 1 {
            announced = number(fields[0]).map(|v| v as usize);
            if announced.is_some() {
                continue;
            }
        }
        let ins = insn(&fields).ok_or_else(|| BpfError::BadLine {
            line: *line,
            text: item.clone(),
        })?;
        prog.push(ins);
        if prog.len() > MAX_INSNS {
            return Err(BpfError::TooLong(prog.len()));
        }
    }
    if prog.is_empty() {
        return Err(BpfError::Empty);
    }
    if let Some(a) = announced
        && a != prog.len()
    {
        return Err(BpfError::CountMismatch {
            announced: a,
            found: prog.len(),
        });
    }
    Ok(prog)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `tcpdump -dd udp` on Ethernet: ethertype IPv6 -> next header 17, IPv4 -> proto 17.
    const UDP_DD: &str = "{ 0x28, 0, 0, 0x0000000c },
{ 0x15, 0, 5, 0x000086dd },
{ 0x30, 0, 0, 0x00000014 },
{ 0x15, 6, 0, 0x00000011 },
{ 0x15, 0, 6, 0x0000002c },
{ 0x30, 0, 0, 0x00000036 },
{ 0x15, 3, 4, 0x00000011 },
{ 0x15, 0, 3, 0x00000800 },
{ 0x30, 0, 0, 0x00000017 },
{ 0x15, 0, 1, 0x00000011 },
{ 0x6, 0, 0, 0x00040000 },
{ 0x6, 0, 0, 0x00000000 },
";

    #[test]
    fn reads_dd_and_ddd() {
        let p = parse(UDP_DD).unwrap();
        assert_eq!(p.len(), 12);
        assert_eq!(
            p[1],
            Insn {
                code: 0x15,
                jt: 0,
                jf: 5,
                k: 0x86dd
            }
        );
        let ddd = "3\n40 0 0 12\n21 0 1 2048\n6 0 0 262144\n";
        let q = parse(ddd).unwrap();
        assert_eq!(q.len(), 3);
        assert_eq!(q[2].k, 262_144);
        // One line, as it often ends up in YAML.
        let one = UDP_DD.replace('\n', " ");
        assert_eq!(parse(&one).unwrap(), p);
    }

    #[test]
    fn rejects_bad_programs() {
        assert_eq!(parse("  \n"), Err(BpfError::Empty));
        assert!(matches!(
            parse("{ 0x28, 0, 0 },"),
            Err(BpfError::BadLine { line: 1, .. })
        ));
        assert!(matches!(
            parse("2\n6 0 0 1\n"),
            Err(BpfError::CountMismatch {
                announced: 2,
                found: 1
            })
        ));
        assert!(matches!(
            parse("{ 0x28, 300, 0, 1 },"),
            Err(BpfError::BadLine { .. })
        ));
        assert!(matches!(parse("port 80"), Err(BpfError::BadLine { .. })));
        let long = "6 0 0 1\n".repeat(MAX_INSNS + 1);
        assert_eq!(parse(&long), Err(BpfError::TooLong(MAX_INSNS + 1)));
    }
}
