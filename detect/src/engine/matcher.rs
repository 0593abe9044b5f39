//! Evaluating a rule's match list on one buffer, with Suricata's semantics.
//!
//! The list is evaluated in order with a cursor (the end of the previous match). A
//! relative keyword (`distance`/`within`, `pcre` with `R`, `relative` byte keywords and
//! `isdataat`) is placed after the cursor. When a later keyword fails, an earlier content
//! or pcre that a relative keyword depends on is retried at its next occurrence, up to a
//! recursion budget ([`MAX_RECURSION`]). A positive content that is not relative and is
//! absent, or a negated content that is present, ends the evaluation at once.
//!
//! An empty buffer never matches.

use memchr::memmem;

use crate::rules::{
    Base64Decode, ByteExtract, ByteJump, ByteMath, ByteOp, ByteRead, ByteTest, Content, IsDataAt,
    Match, MathOp, NumBase, Pcre, Value,
};

/// Bound on the evaluation steps of one list on one buffer (Suricata's
/// `inspection_recursion_limit` is 3000).
pub const MAX_RECURSION: u32 = 3000;
/// Largest base64-decoded buffer.
pub const MAX_BASE64: usize = 64 * 1024;

/// A match item with what was precompiled for it.
#[derive(Debug)]
pub struct Item {
    pub m: Match,
    /// For case-sensitive contents: the searcher.
    finder: Option<memmem::Finder<'static>>,
    /// Whether the next item is relative to this one (so that a failure further on
    /// retries this item at its next occurrence).
    relative_next: bool,
}

/// A compiled match list.
#[derive(Debug, Default)]
pub struct List {
    pub items: Vec<Item>,
}

fn is_relative(m: &Match) -> bool {
    match m {
        Match::Content(c) => c.relative(),
        Match::Pcre(p) => p.relative,
        Match::ByteTest(b) => b.read.relative,
        Match::ByteJump(b) => b.read.relative,
        Match::ByteExtract(b) => b.read.relative,
        Match::ByteMath(b) => b.read.relative,
        Match::IsDataAt(i) => i.relative,
        Match::Base64Decode(b) => b.relative,
    }
}

impl List {
    pub fn compile(items: &[Match]) -> List {
        let mut out: Vec<Item> = items
            .iter()
            .map(|m| Item {
                finder: match m {
                    Match::Content(c) if !c.nocase => {
                        Some(memmem::Finder::new(&c.pattern).into_owned())
                    }
                    _ => None,
                },
                m: m.clone(),
                relative_next: false,
            })
            .collect();
        for i in 0..out.len().saturating_sub(1) {
            out[i].relative_next = is_relative(&out[i + 1].m);
        }
        List { items: out }
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Per-evaluation state: byte variables, the cursor, the recursion budget, the base64
/// buffer.
#[derive(Debug, Default)]
pub struct Scratch {
    pub vars: [u64; 16],
    cursor: usize,
    budget: u32,
    stop: bool,
    pub base64: Vec<u8>,
    /// Whether `base64_decode` produced data in this evaluation.
    pub base64_ok: bool,
    /// The buffer inspected is DCE/RPC stub data of a little-endian PDU (what `dce`
    /// byte reads follow; set by the transaction inspection, false elsewhere).
    pub dce_le: bool,
}

impl Scratch {
    fn value(&self, v: Value) -> i64 {
        match v {
            Value::Const(n) => n,
            Value::Var(i) => self.vars.get(usize::from(i)).copied().unwrap_or(0) as i64,
        }
    }
}

/// ASCII case-insensitive search of a lowercase `needle` in `hay`.
pub fn find_nocase(hay: &[u8], needle: &[u8]) -> Option<usize> {
    let (&first, rest) = needle.split_first()?;
    if hay.len() < needle.len() {
        return None;
    }
    let upper = first.to_ascii_uppercase();
    let last_start = hay.len() - needle.len();
    let mut from = 0;
    while from <= last_start {
        let at = from + memchr::memchr2(first, upper, &hay[from..=last_start])?;
        if hay[at + 1..at + needle.len()]
            .iter()
            .zip(rest)
            .all(|(h, n)| h.to_ascii_lowercase() == *n)
        {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// Evaluates `list` on `buf`. `vars` carry byte_extract values across lists of one rule.
pub fn matches(list: &List, buf: &[u8], s: &mut Scratch) -> bool {
    if buf.is_empty() || list.items.is_empty() {
        return false;
    }
    s.cursor = 0;
    s.budget = MAX_RECURSION;
    s.stop = false;
    s.base64_ok = false;
    step(list, 0, buf, s)
}

fn step(list: &List, i: usize, buf: &[u8], s: &mut Scratch) -> bool {
    let Some(item) = list.items.get(i) else {
        return true;
    };
    if s.budget == 0 {
        s.stop = true;
        return false;
    }
    s.budget -= 1;
    match &item.m {
        Match::Content(c) => content(list, i, item, c, buf, s),
        Match::Pcre(p) => pcre(list, i, p, buf, s),
        Match::IsDataAt(d) => isdataat(d, buf, s) && step(list, i + 1, buf, s),
        Match::ByteTest(t) => byte_test(t, buf, s) && step(list, i + 1, buf, s),
        Match::ByteJump(j) => byte_jump(j, buf, s) && step(list, i + 1, buf, s),
        Match::ByteExtract(e) => byte_extract(e, buf, s) && step(list, i + 1, buf, s),
        Match::ByteMath(m) => byte_math(m, buf, s) && step(list, i + 1, buf, s),
        Match::Base64Decode(d) => base64_decode(d, buf, s) && step(list, i + 1, buf, s),
    }
}

/// The window [start, end) a content is searched in, or None when it cannot be placed.
fn window(c: &Content, buf_len: usize, s: &Scratch) -> (usize, usize) {
    let prev = s.cursor as i64;
    let len = buf_len as i64;
    let (mut start, mut end);
    if c.relative() {
        start = prev;
        end = len;
        let distance = c.distance.map(|d| s.value(d)).unwrap_or(0);
        if c.distance.is_some() {
            start = (prev + distance).max(0);
        }
        if let Some(w) = c.within {
            end = end.min(prev + s.value(w) + distance);
        }
        if let Some(d) = c.depth {
            end = end.min(prev + s.value(d));
        }
        if let Some(o) = c.offset {
            start = start.max(s.value(o));
        }
    } else {
        start = c.offset.map(|o| s.value(o)).unwrap_or(0).max(0);
        end = match c.depth {
            Some(d) => start + s.value(d),
            None => len,
        };
        if c.startswith {
            start = 0;
            end = c.pattern.len() as i64;
        }
    }
    let end = end.clamp(0, len) as usize;
    let start = start.clamp(0, len) as usize;
    (start, end)
}

fn find(item: &Item, c: &Content, hay: &[u8]) -> Option<usize> {
    match &item.finder {
        Some(f) => f.find(hay),
        None => find_nocase(hay, &c.pattern),
    }
}

fn content(list: &List, i: usize, item: &Item, c: &Content, buf: &[u8], s: &mut Scratch) -> bool {
    let (start, end) = window(c, buf.len(), s);
    let saved_cursor = s.cursor;
    let mut from = start;
    loop {
        if from > end || end == 0 {
            if c.negated {
                s.cursor = saved_cursor;
                return step(list, i + 1, buf, s);
            }
            return false;
        }
        let found = if c.endswith {
            // The one place an `endswith` content can be: the buffer's end, inside the
            // window (also for a negated one: an occurrence elsewhere does not count).
            if end < buf.len() || buf.len() < from + c.pattern.len() {
                None
            } else {
                let at = buf.len() - c.pattern.len();
                find(item, c, &buf[at..]).map(|_| at)
            }
        } else if c.pattern.len() > end - from {
            None
        } else {
            find(item, c, &buf[from..end]).map(|at| from + at)
        };
        match found {
            None => {
                if c.negated {
                    s.cursor = saved_cursor;
                    return step(list, i + 1, buf, s);
                }
                if !c.relative() {
                    // Independent of earlier matches: no later retry can help.
                    s.stop = true;
                }
                return false;
            }
            Some(_) if c.negated => {
                if !c.relative() && !item.relative_next {
                    s.stop = true;
                }
                return false;
            }
            Some(at) => {
                let match_end = at + c.pattern.len();
                if !c.endswith || match_end == buf.len() {
                    s.cursor = match_end;
                    if step(list, i + 1, buf, s) {
                        return true;
                    }
                    if s.stop {
                        return false;
                    }
                    if !item.relative_next {
                        s.stop = true;
                        return false;
                    }
                    s.cursor = saved_cursor;
                }
                from = at + 1;
            }
        }
    }
}

fn pcre(list: &List, i: usize, p: &Pcre, buf: &[u8], s: &mut Scratch) -> bool {
    let saved_cursor = s.cursor;
    // A relative regex sees the buffer from the cursor on (so `^` anchors there), as
    // Suricata passes it the rest of the buffer.
    let base = if p.relative {
        s.cursor.min(buf.len())
    } else {
        0
    };
    let subject = &buf[base..];
    let mut from = 0;
    loop {
        let found = p.regex.find_at(subject, from).ok().flatten();
        match (found, p.negated) {
            (None, false) => return false,
            (None, true) => {
                s.cursor = saved_cursor;
                return step(list, i + 1, buf, s);
            }
            (Some(_), true) => return false,
            (Some(m), false) => {
                s.cursor = base + m.end();
                if step(list, i + 1, buf, s) {
                    return true;
                }
                if s.stop || !list.items[i].relative_next {
                    return false;
                }
                s.cursor = saved_cursor;
                // Retry from just after this match's start.
                from = m.start() + 1;
                if from > subject.len() {
                    return false;
                }
            }
        }
    }
}

/// Suricata: absolute `isdataat:n` holds when byte n exists (n < len); relative holds
/// when cursor + n <= len.
fn isdataat(d: &IsDataAt, buf: &[u8], s: &Scratch) -> bool {
    let n = s.value(d.offset);
    let len = buf.len() as i64;
    let ok = n >= 0
        && if d.relative {
            s.cursor as i64 + n <= len
        } else {
            n < len
        };
    ok != d.negated
}

/// Reads the number described by `r` at `at`; None when out of bounds or not a number.
fn read_number(r: &ByteRead, buf: &[u8], at: i64, dce_le: bool) -> Option<u64> {
    read_field(r, usize::from(r.nbytes), buf, at, dce_le).map(|(v, _)| v)
}

/// Reads an `n`-byte number as `r` describes it at `at`: the value and how many bytes
/// it took (for a string, the characters strtoull consumed: spaces and digits).
/// `dce_le`: the buffer is little-endian DCE/RPC stub data (for `dce` reads).
fn read_field(r: &ByteRead, n: usize, buf: &[u8], at: i64, dce_le: bool) -> Option<(u64, usize)> {
    let mut used = n;
    if at < 0 {
        return None;
    }
    let at = at as usize;
    let bytes = buf.get(at..at.checked_add(n)?)?;
    let mut v: u64 = match r.base {
        NumBase::Binary => {
            let mut v = 0u64;
            let big_endian = if r.dce { !dce_le } else { r.big_endian };
            if big_endian {
                for &b in bytes {
                    v = (v << 8) | u64::from(b);
                }
            } else {
                for &b in bytes.iter().rev() {
                    v = (v << 8) | u64::from(b);
                }
            }
            v
        }
        base => {
            let radix = match base {
                NumBase::Hex => 16,
                NumBase::Oct => 8,
                _ => 10,
            };
            // Like strtoull on the field: leading spaces, then as many digits as parse.
            let text = std::str::from_utf8(bytes).ok()?;
            let t = text.trim_start();
            let digits: String = t.chars().take_while(|c| c.is_digit(radix)).collect();
            if digits.is_empty() {
                return None;
            }
            used = text.len() - t.len() + digits.len();
            u64::from_str_radix(&digits, radix).ok()?
        }
    };
    if let Some(mask) = r.bitmask {
        v &= mask;
        if mask != 0 {
            v >>= mask.trailing_zeros();
        }
    }
    Some((v, used))
}

fn read_at(r: &ByteRead, s: &Scratch) -> i64 {
    let base = if r.relative { s.cursor as i64 } else { 0 };
    base + s.value(r.offset)
}

fn byte_test(t: &ByteTest, buf: &[u8], s: &Scratch) -> bool {
    let Some(v) = read_number(&t.read, buf, read_at(&t.read, s), s.dce_le) else {
        return false;
    };
    let x = s.value(t.value) as u64;
    let r = match t.op {
        ByteOp::Lt => v < x,
        ByteOp::Gt => v > x,
        ByteOp::Eq => v == x,
        ByteOp::Le => v <= x,
        ByteOp::Ge => v >= x,
        ByteOp::And => v & x != 0,
        ByteOp::Xor => v ^ x != 0,
    };
    r != t.negated
}

/// Suricata's byte_jump: reads the count (fixed, or from a variable: at most 8 binary or
/// 23 string bytes, 0 allowed), then moves the cursor to `value * multiplier` (aligned
/// to 4 with `align`) plus `post_offset`, counted from after the field, the buffer start
/// (`from_beginning`) or its end (`from_end`). A target before the buffer start is
/// clamped to it; a target at or past the end does not match.
fn byte_jump(j: &ByteJump, buf: &[u8], s: &mut Scratch) -> bool {
    if buf.is_empty() {
        return false;
    }
    let n = match j.nbytes_var {
        None => usize::from(j.read.nbytes),
        Some(var) => {
            let n = s.value(Value::Var(var));
            let max = if j.read.base == NumBase::Binary {
                8
            } else {
                23
            };
            if !(0..=max).contains(&n) {
                return false;
            }
            n as usize
        }
    };
    let at = read_at(&j.read, s);
    // A relative jump needs bytes after the cursor, unless it reads none (a zero-byte
    // count at the very end still moves the cursor by its `post_offset`, bug-4623).
    if j.read.relative && (at > buf.len() as i64 || (at == buf.len() as i64 && n > 0)) {
        return false;
    }
    let Some((v, used)) = read_field(&j.read, n, buf, at, s.dce_le) else {
        return false;
    };
    let mut v = v
        .saturating_mul(u64::from(j.multiplier))
        .min(i64::MAX as u64) as i64;
    if j.align && v % 4 != 0 {
        v = v.saturating_add(4 - v % 4);
    }
    let v = v.saturating_add(j.post_offset);
    let target = if j.from_end {
        (buf.len() as i64).saturating_add(v)
    } else if j.from_beginning {
        v
    } else {
        (at + used as i64).saturating_add(v)
    };
    if target >= buf.len() as i64 {
        return false;
    }
    s.cursor = target.max(0) as usize;
    true
}

fn byte_extract(e: &ByteExtract, buf: &[u8], s: &mut Scratch) -> bool {
    let at = read_at(&e.read, s);
    let Some(v) = read_number(&e.read, buf, at, s.dce_le) else {
        return false;
    };
    let mut v = v.saturating_mul(u64::from(e.multiplier));
    if e.align > 1 && v % u64::from(e.align) != 0 {
        v += u64::from(e.align) - v % u64::from(e.align);
    }
    if let Some(slot) = s.vars.get_mut(usize::from(e.var)) {
        *slot = v;
    }
    s.cursor = (at + i64::from(e.read.nbytes)) as usize;
    true
}

fn byte_math(m: &ByteMath, buf: &[u8], s: &mut Scratch) -> bool {
    let at = read_at(&m.read, s);
    let Some(v) = read_number(&m.read, buf, at, s.dce_le) else {
        return false;
    };
    let r = s.value(m.rvalue) as u64;
    let out = match m.op {
        MathOp::Add => v.wrapping_add(r),
        MathOp::Sub => v.wrapping_sub(r),
        MathOp::Mul => v.wrapping_mul(r),
        MathOp::Div => {
            if r == 0 {
                return false;
            }
            v / r
        }
        MathOp::Shl => v.checked_shl(r as u32).unwrap_or(0),
        MathOp::Shr => v.checked_shr(r as u32).unwrap_or(0),
    };
    if let Some(slot) = s.vars.get_mut(usize::from(m.var)) {
        *slot = out;
    }
    true
}

fn base64_decode(d: &Base64Decode, buf: &[u8], s: &mut Scratch) -> bool {
    let start = if d.relative { s.cursor } else { 0 } + d.offset as usize;
    let Some(src) = buf.get(start..) else {
        return false;
    };
    let src = match d.bytes {
        Some(n) => &src[..src.len().min(n as usize)],
        None => src,
    };
    s.base64.clear();
    decode_base64_lenient(src, &mut s.base64);
    s.base64_ok = !s.base64.is_empty();
    // Suricata's base64_decode always "matches"; base64_data then inspects the result.
    true
}

/// RFC 4648 base64, decoding up to the first byte outside the alphabet (as Suricata's
/// relaxed mode does), bounded by [`MAX_BASE64`].
pub fn decode_base64_lenient(src: &[u8], out: &mut Vec<u8>) {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        })
    };
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in src {
        if c == b'=' {
            break;
        }
        let Some(v) = val(c) else {
            if c == b'\r' || c == b'\n' || c == b' ' {
                continue;
            }
            break;
        };
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            if out.len() >= MAX_BASE64 {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{Names, load_str, tests_ctx};

    /// The payload list of a one-rule ruleset.
    fn list(opts: &str) -> List {
        let text = format!("alert tcp any any -> any any ({opts} sid:1;)");
        let l = load_str(&text, &tests_ctx());
        assert!(l.problems.is_empty(), "{text}: {:?}", l.problems);
        let _ = Names::default();
        List::compile(&l.rules[0].payload.items)
    }

    fn m(opts: &str, buf: &[u8]) -> bool {
        matches(&list(opts), buf, &mut Scratch::default())
    }

    #[test]
    fn byte_jump_suricata_semantics() {
        let buf = b"ab\x0a\x95\x00\x20NSLOxyz";
        // Zero bytes read: a jump by post_offset alone, from after the content.
        assert!(m(
            r#"content:"|0A 95 00 20|"; byte_jump:0,0,relative,post_offset -4; content:"|0A|"; within:1;"#,
            buf
        ));
        // A target before the buffer start is clamped to it.
        assert!(m(
            r#"content:"|0A 95 00 20|"; byte_jump:0,0,relative,post_offset -10; content:"ab"; within:2;"#,
            buf
        ));
        assert!(!m(
            r#"content:"|0A 95 00 20|"; byte_jump:0,0,relative,post_offset -10; content:"NSLO"; within:4;"#,
            buf
        ));
        // Relative with nothing left after the cursor: no match.
        assert!(!m(r#"content:"xyz"; byte_jump:0,0,relative;"#, buf));
        // ... but a zero-byte jump back from the very end moves the cursor (bug-4623).
        assert!(m(
            r#"content:"xyz"; byte_jump:0,0,relative,post_offset -3; content:"xyz"; within:3;"#,
            buf
        ));
        assert!(!m(
            r#"content:"xyz"; byte_jump:1,0,relative,post_offset -3; content:"xyz"; within:3;"#,
            buf
        ));
        // from_end counts back from the end of the buffer.
        assert!(m(
            r#"byte_jump:0,0,from_end,post_offset -3; content:"xyz"; within:3;"#,
            buf
        ));
        // from_beginning counts from the start.
        assert!(m(
            r#"byte_jump:1,2,from_beginning; content:"|20|"; within:1;"#,
            b"\x00\x00\x05\x00\x00\x20"
        ));
        // A string count: the characters strtoull consumed move the cursor.
        assert!(m(
            r#"byte_jump:3,0,string,dec; content:"X"; within:1;"#,
            b"1 Xzz"
        ));
        // The count from a byte_extract variable.
        let pkt = b"\x00\x00\x00\x02\x00\x03ABCD";
        assert!(m(
            r#"content:"|00 00 00|"; byte_extract:1,0,n,relative; byte_jump:n,0,relative; content:"D"; within:1;"#,
            pkt
        ));
        // A variable count outside 0..=8 (binary) does not match.
        assert!(!m(
            r#"byte_extract:1,0,n; byte_jump:n,0;"#,
            b"\x09\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01"
        ));
    }

    #[test]
    fn absolute_positions() {
        assert!(m(r#"content:"abc";"#, b"xxabcxx"));
        assert!(m(r#"content:"abc"; depth:5;"#, b"xxabcxx"));
        assert!(!m(r#"content:"abc"; depth:4;"#, b"xxabcxx"));
        assert!(m(r#"content:"abc"; offset:2; depth:3;"#, b"xxabcxx"));
        assert!(!m(r#"content:"abc"; offset:3;"#, b"xxabcxx"));
        assert!(m(r#"content:"abc"; startswith;"#, b"abcxx"));
        assert!(!m(r#"content:"abc"; startswith;"#, b"xabc"));
        assert!(m(r#"content:"abc"; endswith;"#, b"xxabc"));
        assert!(!m(r#"content:"abc"; endswith;"#, b"abcx"));
        // A negated endswith fails only on an occurrence at the end.
        assert!(m(
            r#"content:!".google.com"; endswith;"#,
            b"www.google.com.example.com"
        ));
        assert!(!m(
            r#"content:!".google.com"; endswith;"#,
            b"www.google.com"
        ));
        assert!(m(r#"content:"abc"; endswith; nocase;"#, b"xxABC"));
        assert!(m(r#"content:"ABC"; nocase;"#, b"xaBcx"));
        assert!(!m(r#"content:"abc";"#, b""));
    }

    #[test]
    fn relative_positions_retry_earlier_occurrences() {
        // The first "a" is followed by "x", the second by "b": the engine must retry.
        assert!(m(
            r#"content:"a"; content:"b"; distance:0; within:1;"#,
            b"axab"
        ));
        assert!(!m(r#"content:"a"; content:"b"; distance:1;"#, b"ab"));
        assert!(m(
            r#"content:"a"; content:"c"; distance:1; within:2;"#,
            b"abc"
        ));
        assert!(!m(
            r#"content:"a"; content:"c"; distance:1; within:1;"#,
            b"abxc"
        ));
        assert!(m(r#"content:"b"; content:"a"; distance:-2;"#, b"ab"));
        // endswith on a relative content.
        assert!(m(
            r#"content:"yYY"; distance:1; within:10; endswith;"#,
            b"xyYY"
        ));
    }

    #[test]
    fn negation() {
        assert!(m(
            r#"content:"a"; content:!"b"; distance:0; within:1;"#,
            b"ac"
        ));
        assert!(!m(
            r#"content:"a"; content:!"b"; distance:0; within:1;"#,
            b"ab"
        ));
        assert!(m(r#"content:!"zz";"#, b"abc"));
        assert!(!m(r#"content:!"b";"#, b"abc"));
    }

    #[test]
    fn pcre_and_relative_pcre() {
        assert!(m(r#"pcre:"/a.c/";"#, b"xxabc"));
        assert!(m(r#"content:"x"; pcre:"/^b/R";"#, b"axbyxa"));
        assert!(!m(r#"content:"x"; pcre:"/^c/R";"#, b"axbyxa"));
        assert!(m(r#"pcre:!"/zz/";"#, b"abc"));
        assert!(m(r#"pcre:"/ABC/i";"#, b"xabcx"));
    }

    #[test]
    fn byte_keywords() {
        // "GET " then the byte after "HTTP/1." is '1' (0x31).
        let req = b"GET / HTTP/1.1\r\n";
        assert!(m(
            r#"content:"HTTP/1."; byte_test:1,=,1,0,relative,string,dec;"#,
            req
        ));
        assert!(!m(
            r#"content:"HTTP/1."; byte_test:1,=,0,0,relative,string,dec;"#,
            req
        ));
        assert!(m(r#"byte_test:2,=,0x4745,0;"#, req));
        assert!(m(r#"byte_test:2,!=,0x4746,0;"#, req));
        assert!(m(r#"byte_test:1,&,0x40,0;"#, req));
        // byte_jump over a length field: len 3 then "abc" then "Z".
        let buf = b"\x00\x03abcZ";
        assert!(m(r#"byte_jump:2,0; content:"Z"; within:1;"#, buf));
        assert!(m(
            r#"byte_extract:2,0,len; content:"Z"; distance:len; within:1;"#,
            buf
        ));
        assert!(
            !m(r#"byte_test:4,=,1,10;"#, buf),
            "out of bounds is no match"
        );
        // A jump to the very end of the buffer does not match (Suricata).
        assert!(!m(r#"byte_jump:2,0,post_offset 1;"#, buf));
        assert!(m(r#"byte_jump:2,0,post_offset 0;"#, buf));
        assert!(m(
            r#"byte_math:bytes 2, offset 0, oper +, rvalue 1, result x; byte_test:1,=,x,2;"#,
            b"\x00\x03\x04"
        ));
    }

    #[test]
    fn isdataat_semantics() {
        let b = [b'a'; 32];
        assert!(m("isdataat:31;", &b));
        assert!(!m("isdataat:32;", &b));
        assert!(m("isdataat:32,relative;", &b));
        assert!(!m("isdataat:33,relative;", &b));
        assert!(m(r#"content:"a"; depth:1; isdataat:31,relative;"#, &b));
        assert!(!m(r#"content:"a"; depth:1; isdataat:32,relative;"#, &b));
        assert!(m("isdataat:!40;", &b));
    }

    #[test]
    fn base64() {
        let mut out = Vec::new();
        decode_base64_lenient(b"aGVsbG8gd29ybGQ=", &mut out);
        assert_eq!(out, b"hello world");
    }

    #[test]
    fn recursion_is_bounded() {
        let buf = vec![b'a'; 5000];
        // Every "a" is tried as the first content; the budget stops the search.
        assert!(!m(
            r#"content:"a"; content:"a"; distance:0; content:"b"; distance:0;"#,
            &buf
        ));
    }
}
