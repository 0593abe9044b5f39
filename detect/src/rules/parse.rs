//! Rule text to tokens: the seven header fields and the option list.
//!
//! `action proto src sport -> dst dport (kw; kw:value; ...)`. Option values may be
//! quoted; inside quotes `\"`, `\\` and `\;` escape, and outside quotes `\;` does.
//! Multi-line rules (lines ending in `\`) are joined by [`logical_lines`].

/// One option: keyword and optional raw value (quotes still on).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawOption<'a> {
    pub keyword: &'a str,
    pub value: Option<&'a str>,
}

/// The tokens of one rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RawRule<'a> {
    pub action: &'a str,
    pub proto: &'a str,
    pub src: &'a str,
    pub sport: &'a str,
    pub direction: &'a str,
    pub dst: &'a str,
    pub dport: &'a str,
    pub options: Vec<RawOption<'a>>,
}

/// Options in one rule, at most.
pub const MAX_OPTIONS: usize = 1024;

/// Joins continuation lines and drops comments and blanks. Yields (first line number,
/// rule text).
pub fn logical_lines(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim();
        if cur.is_empty() {
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            start = i + 1;
        }
        if let Some(body) = trimmed.strip_suffix('\\') {
            cur.push_str(body);
            cur.push(' ');
            continue;
        }
        cur.push_str(trimmed);
        out.push((start, std::mem::take(&mut cur)));
    }
    if !cur.trim().is_empty() {
        out.push((start, cur));
    }
    out
}

/// Splits the header at whitespace, keeping `[...]` lists (which may hold spaces) whole.
fn header_tokens(h: &str) -> Result<Vec<&str>, String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start: Option<usize> = None;
    for (i, c) in h.char_indices() {
        match c {
            '[' => depth += 1,
            ']' => depth -= 1,
            _ => {}
        }
        if c.is_whitespace() && depth == 0 {
            if let Some(s) = start.take() {
                out.push(&h[s..i]);
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(s) = start {
        out.push(&h[s..]);
    }
    if depth != 0 {
        return Err("unbalanced brackets in the rule header".to_string());
    }
    Ok(out)
}

/// Splits the option body at every `;` that is not escaped with a backslash. Quotes do
/// not protect a `;` (Suricata requires `\;` inside values too), and a value may hold a
/// bare `"` (some regexes do).
fn split_options(body: &str) -> Result<Vec<RawOption<'_>>, String> {
    let mut out = Vec::new();
    let bytes = body.as_bytes();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => {
                i += 2;
                continue;
            }
            b';' => {
                push_option(&body[start..i], &mut out)?;
                start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    let tail = body[start.min(body.len())..].trim();
    if !tail.is_empty() {
        return Err(format!("option `{tail}` is not terminated by `;`"));
    }
    if out.len() > MAX_OPTIONS {
        return Err(format!("more than {MAX_OPTIONS} options"));
    }
    Ok(out)
}

fn push_option<'a>(s: &'a str, out: &mut Vec<RawOption<'a>>) -> Result<(), String> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(());
    }
    let (kw, val) = match s.find(':') {
        Some(i) => (s[..i].trim(), Some(s[i + 1..].trim())),
        None => (s, None),
    };
    if kw.is_empty()
        || !kw
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    {
        return Err(format!("`{kw}` is not a keyword"));
    }
    out.push(RawOption {
        keyword: kw,
        value: val,
    });
    Ok(())
}

/// Tokenizes one rule.
pub fn parse(text: &str) -> Result<RawRule<'_>, String> {
    let open = text
        .find('(')
        .ok_or_else(|| "no `(` opening the options".to_string())?;
    let close = text
        .rfind(')')
        .filter(|&c| c > open)
        .ok_or_else(|| "no `)` closing the options".to_string())?;
    if !text[close + 1..].trim().is_empty() {
        return Err("text after the closing `)`".to_string());
    }
    let header = header_tokens(text[..open].trim())?;
    let [action, proto, src, sport, direction, dst, dport] = header[..] else {
        return Err(format!(
            "the header has {} fields, expected 7 (action proto src sport direction dst dport)",
            header.len()
        ));
    };
    Ok(RawRule {
        action,
        proto,
        src,
        sport,
        direction,
        dst,
        dport,
        options: split_options(&text[open + 1..close])?,
    })
}

/// Removes surrounding quotes and resolves `\"`, `\\`, `\;`, `\:` escapes.
pub fn unquote(v: &str) -> String {
    let v = v.trim();
    let inner = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or(v);
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(n @ ('"' | '\\' | ';' | ':')) => out.push(n),
                Some(n) => {
                    out.push('\\');
                    out.push(n);
                }
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokenizes() {
        let r = parse(
            r#"alert tcp [1.1.1.1, 2.2.2.2] any -> $HOME_NET 80 (msg:"a \"quoted\"\; thing"; content:"x|3b|y"; nocase; sid:1;)"#,
        )
        .unwrap();
        assert_eq!(r.action, "alert");
        assert_eq!(r.src, "[1.1.1.1, 2.2.2.2]");
        assert_eq!(r.direction, "->");
        assert_eq!(r.options.len(), 4);
        assert_eq!(r.options[0].keyword, "msg");
        assert_eq!(unquote(r.options[0].value.unwrap()), "a \"quoted\"; thing");
        assert_eq!(
            r.options[2],
            RawOption {
                keyword: "nocase",
                value: None
            }
        );
    }

    #[test]
    fn errors() {
        assert!(parse("alert tcp any any -> any any").is_err());
        assert!(parse("alert tcp any any any any (sid:1;)").is_err());
        assert!(parse(r#"alert tcp any any -> any any (msg:"x"; sid:1"#).is_err());
        assert!(parse("alert tcp any any -> any any (sid:1)").is_err());
        assert!(parse("alert tcp any any -> any any (sid:1;) junk").is_err());
    }

    #[test]
    fn multi_line_and_comments() {
        let text = "# comment\n\nalert tcp any any -> any any (msg:\"a\"; \\\n  sid:1;)\n#alert ...\nalert ip any any -> any any (sid:2;)\n";
        let lines = logical_lines(text);
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].0, 3);
        assert!(parse(&lines[0].1).is_ok());
        assert_eq!(lines[1].0, 6);
    }
}
