//! Request-URI normalisation for `http.uri`, as Suricata configures libhtp (IDS
//! personality, lowercasing off):
//!
//! - an absolute URI (`http://host:port/p`) is split; the path starts at its first `/`;
//! - the path is percent-decoded (`%2f` becomes a separator, invalid escapes are kept as
//!   they are), `%uXXXX` is decoded (best fit to one byte), `\` becomes `/`;
//! - UTF-8 in the path is reduced to one byte per character (best fit; `?` when there is
//!   none);
//! - runs of `/` are compressed and dot segments removed (RFC 3986 5.2.4);
//! - the query and the fragment are percent-decoded (`%XX`, `%uXXXX`) and nothing
//!   else: `+`, `\\`, dots and UTF-8 stay as they are (Suricata 8's libhtp-rs; 7 kept
//!   the query raw).
//!
//! `http.uri.raw` is the request-line URI untouched.

/// Longest URI normalised (longer ones are normalised up to here and flagged).
pub const MAX_URI_LEN: usize = 64 * 1024;

/// A request-target split into its parts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UriParts<'a> {
    pub host: Option<&'a [u8]>,
    pub port: Option<&'a [u8]>,
    pub path: &'a [u8],
    pub query: Option<&'a [u8]>,
    pub fragment: Option<&'a [u8]>,
}

/// Splits a request-target (origin form or absolute form).
pub fn split(uri: &[u8]) -> UriParts<'_> {
    let mut p = UriParts::default();
    let mut rest = uri;
    // Absolute form: scheme "://" authority.
    if let Some(i) = find(rest, b"://")
        && i > 0
        && rest[..i]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || b"+-.".contains(c))
    {
        let after = &rest[i + 3..];
        let end = after
            .iter()
            .position(|&c| c == b'/' || c == b'?' || c == b'#')
            .unwrap_or(after.len());
        let mut auth = &after[..end];
        if let Some(at) = auth.iter().rposition(|&c| c == b'@') {
            auth = &auth[at + 1..];
        }
        let (h, port) = split_host_port(auth);
        p.host = Some(h);
        p.port = port;
        rest = &after[end..];
    }
    let (before_frag, frag) = match memchr::memchr(b'#', rest) {
        Some(i) => (&rest[..i], Some(&rest[i + 1..])),
        None => (rest, None),
    };
    let (path, query) = match memchr::memchr(b'?', before_frag) {
        Some(i) => (&before_frag[..i], Some(&before_frag[i + 1..])),
        None => (before_frag, None),
    };
    p.path = path;
    p.query = query;
    p.fragment = frag;
    p
}

/// Splits `host[:port]` (with `[v6]` literals).
pub fn split_host_port(a: &[u8]) -> (&[u8], Option<&[u8]>) {
    if a.first() == Some(&b'[') {
        if let Some(close) = memchr::memchr(b']', a) {
            let rest = &a[close + 1..];
            return (&a[..=close], rest.strip_prefix(b":"));
        }
        return (a, None);
    }
    match memchr::memrchr(b':', a) {
        Some(i) => (&a[..i], Some(&a[i + 1..])),
        None => (a, None),
    }
}

fn find(h: &[u8], n: &[u8]) -> Option<usize> {
    memchr::memmem::find(h, n)
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

/// Best-fit mapping of a code point above 0xFF to one byte (the part of libhtp's map
/// that matters in practice: full-width ASCII); `?` otherwise.
fn bestfit(cp: u32) -> u8 {
    match cp {
        0..=0xff => cp as u8,
        0xff01..=0xff5e => (cp - 0xfee0) as u8,
        _ => b'?',
    }
}

/// Percent-decodes a path: `%XX`, `%uXXXX`; invalid escapes are kept; `\` becomes `/`.
fn decode_path(p: &[u8], out: &mut Vec<u8>) {
    percent_decode(p, true, out);
}

/// Percent-decodes a query or a fragment: as a path, with `\` kept.
fn decode_query(p: &[u8], out: &mut Vec<u8>) {
    percent_decode(p, false, out);
}

fn percent_decode(p: &[u8], backslash_is_slash: bool, out: &mut Vec<u8>) {
    let slash = |b: u8| {
        if backslash_is_slash && b == b'\\' {
            b'/'
        } else {
            b
        }
    };
    let mut i = 0;
    while i < p.len() {
        let c = p[i];
        if c == b'%' {
            if let (Some(&u), Some(h)) = (p.get(i + 1), p.get(i + 2..i + 6))
                && (u == b'u' || u == b'U')
                && h.iter().all(u8::is_ascii_hexdigit)
            {
                let cp = h
                    .iter()
                    .fold(0u32, |a, &d| a << 4 | u32::from(hex(d).unwrap_or(0)));
                out.push(slash(bestfit(cp)));
                i += 6;
                continue;
            }
            if let (Some(a), Some(b)) = (
                p.get(i + 1).copied().and_then(hex),
                p.get(i + 2).copied().and_then(hex),
            ) {
                out.push(slash(a << 4 | b));
                i += 3;
                continue;
            }
            out.push(b'%');
            i += 1;
            continue;
        }
        out.push(slash(c));
        i += 1;
    }
}

/// Reduces UTF-8 sequences to one byte each (best fit); invalid UTF-8 is kept as is.
fn utf8_bestfit(p: &mut Vec<u8>) {
    if p.is_ascii() {
        return;
    }
    let mut out = Vec::with_capacity(p.len());
    let mut rest = &p[..];
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(s) => {
                out.extend(s.chars().map(|ch| bestfit(ch as u32)));
                break;
            }
            Err(e) => {
                let (good, bad) = rest.split_at(e.valid_up_to());
                // SAFETY-free: `good` is valid UTF-8 by construction of `valid_up_to`.
                if let Ok(s) = std::str::from_utf8(good) {
                    out.extend(s.chars().map(|ch| bestfit(ch as u32)));
                }
                let n = e.error_len().unwrap_or(bad.len()).max(1);
                out.extend_from_slice(&bad[..n.min(bad.len())]);
                rest = &bad[n.min(bad.len())..];
            }
        }
    }
    *p = out;
}

/// Compresses runs of `/` and removes dot segments (RFC 3986 5.2.4).
fn remove_dots(p: &[u8], out: &mut Vec<u8>) {
    let mut segs: Vec<&[u8]> = Vec::new();
    let absolute = p.first() == Some(&b'/');
    let trailing = p.last() == Some(&b'/')
        || p.ends_with(b"/.")
        || p.ends_with(b"/..")
        || p == b"."
        || p == b"..";
    for seg in p.split(|&c| c == b'/') {
        match seg {
            b"" | b"." => {}
            b".." => {
                segs.pop();
            }
            s => segs.push(s),
        }
    }
    if absolute {
        out.push(b'/');
    }
    for (i, s) in segs.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(s);
    }
    if trailing && !segs.is_empty() {
        out.push(b'/');
    }
}

/// The normalised URI (`http.uri`) of a request-target.
pub fn normalize(uri: &[u8]) -> Vec<u8> {
    normalize_with_path(uri).0
}

/// [`normalize`], and the length of its path part (libhtp's `parsed_uri->path`: what
/// Suricata names a file after when no header gives a name).
pub fn normalize_with_path(uri: &[u8]) -> (Vec<u8>, usize) {
    let uri = &uri[..uri.len().min(MAX_URI_LEN)];
    let parts = split(uri);
    let mut decoded = Vec::with_capacity(parts.path.len());
    decode_path(parts.path, &mut decoded);
    utf8_bestfit(&mut decoded);
    let mut out = Vec::with_capacity(uri.len());
    remove_dots(&decoded, &mut out);
    let path_len = out.len();
    if let Some(q) = parts.query {
        out.push(b'?');
        decode_query(q, &mut out);
    }
    if let Some(f) = parts.fragment {
        out.push(b'#');
        decode_query(f, &mut out);
    }
    (out, path_len)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> String {
        String::from_utf8_lossy(&normalize(s.as_bytes())).into_owned()
    }

    #[test]
    fn percent_and_dots() {
        assert_eq!(n("/a%20b/../c"), "/c");
        assert_eq!(n("/a//b///c"), "/a/b/c");
        assert_eq!(n("/a/./b/"), "/a/b/");
        assert_eq!(n("/a%2fb"), "/a/b");
        assert_eq!(n("/a\\b%5cc"), "/a/b/c");
        assert_eq!(n("/%zz%4"), "/%zz%4");
        assert_eq!(n("/%u0041%uFF21"), "/AA");
        // The query is percent-decoded and nothing more (as Suricata 8.0.6 has it).
        assert_eq!(n("/x?a=%41&b=../c"), "/x?a=A&b=../c");
        assert_eq!(n("/b?x=%2fy%26z%3d+%2523"), "/b?x=/y&z=+%23");
        assert_eq!(n("/d?x=%41%zz%4"), "/d?x=A%zz%4");
        assert_eq!(n("/e?x=%u0041%uff21"), "/e?x=AA");
        assert_eq!(n("/l?x=%5cy\\z#fr%41"), "/l?x=\\y\\z#frA");
        assert_eq!(n("/x#fr%41g"), "/x#frAg");
        assert_eq!(n("/../../etc/passwd"), "/etc/passwd");
        assert_eq!(n("/caf%C3%A9"), "/caf\u{e9}".replace('\u{e9}', "\u{fffd}"));
    }

    #[test]
    fn absolute_form() {
        let p = split(b"http://user@Example.com:8080/p?q#f");
        assert_eq!(p.host, Some(&b"Example.com"[..]));
        assert_eq!(p.port, Some(&b"8080"[..]));
        assert_eq!(p.path, b"/p");
        assert_eq!(n("http://h/a/../b"), "/b");
        assert_eq!(
            split_host_port(b"[::1]:80"),
            (&b"[::1]"[..], Some(&b"80"[..]))
        );
    }
}
