//! `multipart/form-data` request bodies (uploads): each part with a `filename` in its
//! `Content-Disposition` is a file of its own, named by it, as Suricata (libhtp) splits
//! them; the other parts (form fields) are not files. The body is walked as it arrives
//! (a delimiter may be cut across packets); the parts' places in the body are kept so
//! that `file.data` shows each file apart.

use memchr::memmem;

/// Longest boundary kept (RFC 2046 allows 70 characters; longer ones are refused and
/// the body is one file, as without multipart).
pub const MAX_BOUNDARY: usize = 200;
/// Most header bytes of one part kept; the rest is skipped.
pub const MAX_PART_HEADERS: usize = 8 * 1024;
/// Most parts followed in one body (files are bounded further by the file layer).
pub const MAX_PARTS: usize = 256;

/// The boundary of a `multipart/form-data` Content-Type value.
pub fn boundary(content_type: &[u8]) -> Option<&[u8]> {
    let ct = content_type.trim_ascii();
    let (kind, params) = match ct.iter().position(|&b| b == b';') {
        Some(i) => (&ct[..i], &ct[i + 1..]),
        None => return None,
    };
    if !kind
        .trim_ascii()
        .eq_ignore_ascii_case(b"multipart/form-data")
    {
        return None;
    }
    for p in params.split(|&b| b == b';') {
        let p = p.trim_ascii();
        let Some(eq) = p.iter().position(|&b| b == b'=') else {
            continue;
        };
        if !p[..eq].trim_ascii().eq_ignore_ascii_case(b"boundary") {
            continue;
        }
        let v = p[eq + 1..].trim_ascii();
        let v = v
            .strip_prefix(b"\"")
            .and_then(|q| q.strip_suffix(b"\""))
            .unwrap_or(v);
        return (!v.is_empty() && v.len() <= MAX_BOUNDARY).then_some(v);
    }
    None
}

/// What a piece of body gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Event<'a> {
    /// A file part starts, with this name.
    Open(&'a [u8]),
    /// Bytes of the current file part.
    Data(&'a [u8]),
    /// The current file part ended (its delimiter was seen).
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Before the first delimiter (the preamble), or in a part that is not a file.
    Skip,
    /// Just after a delimiter: `--` (the end) or a line end must follow.
    AfterDelim,
    /// In a part's headers.
    Headers,
    /// In a file part's data.
    Data,
    /// After the closing delimiter (the epilogue).
    Done,
}

/// A multipart body being walked.
#[derive(Debug)]
pub struct Multipart {
    /// `\r\n--<boundary>`.
    delim: Vec<u8>,
    st: St,
    /// The unprocessed end of the bytes so far (a delimiter may start in it), then the
    /// new bytes: reused between calls.
    buf: Vec<u8>,
    /// The current part's headers.
    hdr: Vec<u8>,
    parts: usize,
    /// Body offset of `buf[0]` (the body starts 2 bytes in: the `\r\n` the first
    /// delimiter lacks is made up).
    at: u64,
    /// Body ranges of the file parts (start, end; end = `u64::MAX` while open).
    pub ranges: Vec<(u64, u64)>,
    /// The file parts' names (each cut at [`crate::files::MAX_FILE_NAME`]).
    pub names: Vec<Vec<u8>>,
}

impl Multipart {
    pub fn new(boundary: &[u8]) -> Multipart {
        let mut delim = Vec::with_capacity(boundary.len() + 4);
        delim.extend_from_slice(b"\r\n--");
        delim.extend_from_slice(boundary);
        Multipart {
            delim,
            st: St::Skip,
            // A body starts with the delimiter without its line end.
            buf: b"\r\n".to_vec(),
            hdr: Vec::new(),
            parts: 0,
            at: 0,
            ranges: Vec::new(),
            names: Vec::new(),
        }
    }

    /// Stops walking (a gap in the body: what follows cannot be placed).
    pub fn abandon(&mut self) {
        self.st = St::Done;
        self.buf = Vec::new();
    }

    /// Whether the closing delimiter was seen.
    pub fn done(&self) -> bool {
        self.st == St::Done
    }

    /// Whether a file part is open.
    pub fn in_file(&self) -> bool {
        self.st == St::Data
    }

    /// Walks the next body bytes, calling `on` for each event.
    pub fn feed(&mut self, data: &[u8], mut on: impl FnMut(Event<'_>)) {
        if self.st == St::Done {
            return;
        }
        self.buf.extend_from_slice(data);
        let mut pos = 0;
        loop {
            let rest = &self.buf[pos..];
            match self.st {
                St::Done => {
                    pos = self.buf.len();
                    break;
                }
                St::Skip | St::Data => match memmem::find(rest, &self.delim) {
                    Some(i) => {
                        if self.st == St::Data {
                            if i > 0 {
                                on(Event::Data(&rest[..i]));
                            }
                            on(Event::Close);
                            let end = self.body_offset(pos + i);
                            if let Some(r) = self.ranges.last_mut() {
                                r.1 = end;
                            }
                        }
                        pos += i + self.delim.len();
                        self.st = St::AfterDelim;
                    }
                    None => {
                        // Keep what may be the start of a delimiter.
                        let keep = (self.delim.len() - 1).min(rest.len());
                        let safe = rest.len() - keep;
                        if self.st == St::Data && safe > 0 {
                            on(Event::Data(&rest[..safe]));
                        }
                        pos += safe;
                        break;
                    }
                },
                St::AfterDelim => {
                    if rest.len() < 2 {
                        break;
                    }
                    if rest.starts_with(b"--") {
                        self.st = St::Done;
                        continue;
                    }
                    // Transport padding, then the line end.
                    match memchr::memchr(b'\n', rest) {
                        Some(nl) => {
                            pos += nl + 1;
                            self.hdr.clear();
                            self.st = St::Headers;
                            self.parts += 1;
                        }
                        None if rest.len() > MAX_PART_HEADERS => {
                            self.st = St::Skip;
                        }
                        None => break,
                    }
                }
                St::Headers => {
                    let end = memmem::find(rest, b"\r\n\r\n")
                        .map(|i| (i, 4))
                        .or_else(|| memmem::find(rest, b"\n\n").map(|i| (i, 2)));
                    let (take, found) = match end {
                        Some((i, n)) => (i + n, true),
                        None => (rest.len().saturating_sub(3), false),
                    };
                    let room = MAX_PART_HEADERS - self.hdr.len();
                    self.hdr.extend_from_slice(&rest[..take.min(room)]);
                    pos += take;
                    if !found {
                        break;
                    }
                    let name = part_filename(&self.hdr);
                    match name {
                        Some(n) if self.parts <= MAX_PARTS => {
                            on(Event::Open(n));
                            self.names
                                .push(n[..n.len().min(crate::files::MAX_FILE_NAME)].to_vec());
                            let start = self.body_offset(pos);
                            self.ranges.push((start, u64::MAX));
                            self.st = St::Data;
                        }
                        _ => self.st = St::Skip,
                    }
                }
            }
        }
        self.at += pos as u64;
        self.buf.drain(..pos);
    }

    /// The body offset of `buf[i]`.
    fn body_offset(&self, i: usize) -> u64 {
        (self.at + i as u64).saturating_sub(2)
    }
}

/// The `filename` of a part's headers (`Content-Disposition: form-data; name="x";
/// filename="y"`), `None` for a part that is not a file.
fn part_filename(headers: &[u8]) -> Option<&[u8]> {
    for line in headers.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let Some(colon) = line.iter().position(|&b| b == b':') else {
            continue;
        };
        if !line[..colon]
            .trim_ascii()
            .eq_ignore_ascii_case(b"content-disposition")
        {
            continue;
        }
        return filename_param(&line[colon + 1..]);
    }
    None
}

/// The `filename=` parameter (not `filename*=`), unquoted; an empty name is a name.
fn filename_param(v: &[u8]) -> Option<&[u8]> {
    for p in v.split(|&b| b == b';') {
        let p = p.trim_ascii();
        let Some(eq) = p.iter().position(|&b| b == b'=') else {
            continue;
        };
        if !p[..eq].trim_ascii().eq_ignore_ascii_case(b"filename") {
            continue;
        }
        let v = p[eq + 1..].trim_ascii();
        return Some(
            v.strip_prefix(b"\"")
                .map(|q| &q[..q.iter().position(|&b| b == b'"').unwrap_or(q.len())])
                .unwrap_or(v),
        );
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &[u8] = b"--XyZ\r\n\
Content-Disposition: form-data; name=\"field\"\r\n\r\n\
value\r\n\
--XyZ\r\n\
Content-Disposition: form-data; name=\"up1\"; filename=\"toto.txt\"\r\n\
Content-Type: text/plain\r\n\r\n\
toto est dans un bateau\n\r\n\
--XyZ\r\n\
Content-Disposition: form-data; name=\"up2\"; filename=\"titi.txt\"\r\n\r\n\
Titi a vu un gros minet.\n\r\n\
--XyZ--\r\n";

    /// Files seen: (name, content).
    type Seen = Vec<(Vec<u8>, Vec<u8>)>;

    fn walk(chunks: &[&[u8]]) -> (Seen, Multipart) {
        let mut m = Multipart::new(b"XyZ");
        let mut files: Seen = Vec::new();
        let mut open = false;
        for c in chunks {
            m.feed(c, |e| match e {
                Event::Open(n) => {
                    files.push((n.to_vec(), Vec::new()));
                    open = true;
                }
                Event::Data(d) => {
                    assert!(open);
                    files.last_mut().unwrap().1.extend_from_slice(d);
                }
                Event::Close => open = false,
            });
        }
        assert!(!open);
        (files, m)
    }

    #[test]
    fn file_parts_are_files_whatever_the_cuts() {
        let want = vec![
            (b"toto.txt".to_vec(), b"toto est dans un bateau\n".to_vec()),
            (b"titi.txt".to_vec(), b"Titi a vu un gros minet.\n".to_vec()),
        ];
        let (files, m) = walk(&[BODY]);
        assert_eq!(files, want);
        assert!(m.done());
        // The ranges point at the files' bytes in the body.
        for ((_, data), &(s, e)) in want.iter().zip(&m.ranges) {
            assert_eq!(&BODY[s as usize..e as usize], &data[..]);
        }
        // Every cut: one byte at a time, and at every split point.
        let bytes: Vec<&[u8]> = BODY.chunks(1).collect();
        assert_eq!(walk(&bytes).0, want);
        for cut in 1..BODY.len() {
            let (a, b) = BODY.split_at(cut);
            let (files, m) = walk(&[a, b]);
            assert_eq!(files, want, "cut at {cut}");
            assert_eq!(m.ranges, walk(&[BODY]).1.ranges, "cut at {cut}");
        }
    }

    #[test]
    fn boundaries_and_names() {
        assert_eq!(
            boundary(b"multipart/form-data; boundary=----abc"),
            Some(&b"----abc"[..])
        );
        assert_eq!(
            boundary(b"Multipart/Form-Data; charset=x; boundary=\"q r\""),
            Some(&b"q r"[..])
        );
        assert_eq!(boundary(b"text/plain; boundary=x"), None);
        assert_eq!(boundary(b"multipart/form-data"), None);
        assert_eq!(
            boundary(&[b"multipart/form-data; boundary=".as_slice(), &[b'a'; 300]].concat()),
            None
        );
        assert_eq!(
            part_filename(b"Content-Disposition: form-data; name=\"a\"; filename=\"x y.bin\"\r\n"),
            Some(&b"x y.bin"[..])
        );
        assert_eq!(
            part_filename(b"Content-Disposition: form-data; name=\"a\"\r\n"),
            None
        );
    }

    #[test]
    fn an_unterminated_body_and_bounds() {
        let cut = &BODY[..BODY.len() - 30];
        let mut m = Multipart::new(b"XyZ");
        let mut n = 0;
        m.feed(cut, |e| n += usize::from(matches!(e, Event::Open(_))));
        assert_eq!(n, 2);
        assert!(m.in_file() && !m.done());
        // Headers past the bound do not grow without end.
        let mut m = Multipart::new(b"B");
        m.feed(b"--B\r\nX: ", |_| {});
        for _ in 0..100 {
            m.feed(&[b'a'; 1024], |_| {});
        }
        assert!(m.hdr.len() <= MAX_PART_HEADERS && m.buf.len() < 4);
    }
}
