//! A file's type from its first bytes, in libmagic's words (what Suricata logs as
//! `fileinfo.magic` and `filemagic` matches, e.g. `PDF document, version 1.4`).
//!
//! Why a table of our own rather than libmagic or a crate: libmagic is a C library with
//! a large, version-dependent database (its descriptions are what rules match, so a
//! system copy would make results depend on the host), and the maintained Rust crates
//! (`infer`, `tree_magic_mini`) answer with MIME types, not libmagic's descriptions.
//! The table covers the formats rules ask about most (executables, documents, archives,
//! images, markup, text); anything else is `data`, as libmagic says.

/// The description of content starting with `head`.
pub fn describe(head: &[u8]) -> &'static str {
    let starts = |p: &[u8]| head.starts_with(p);
    if starts(b"%PDF-") {
        return pdf_version(head);
    }
    if starts(b"MZ") {
        return pe(head);
    }
    if starts(b"\x7fELF") {
        return match head.get(4) {
            Some(2) => "ELF 64-bit",
            _ => "ELF 32-bit",
        };
    }
    if starts(b"PK\x03\x04") {
        return "Zip archive data";
    }
    if starts(b"\x1f\x8b") {
        return "gzip compressed data";
    }
    if starts(b"BZh") {
        return "bzip2 compressed data";
    }
    if starts(b"\xfd7zXZ\x00") {
        return "XZ compressed data";
    }
    if starts(b"7z\xbc\xaf\x27\x1c") {
        return "7-zip archive data";
    }
    if starts(b"Rar!\x1a\x07") {
        return "RAR archive data";
    }
    if starts(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1") {
        return "Composite Document File V2 Document";
    }
    if starts(b"{\\rtf") {
        return "Rich Text Format data";
    }
    if starts(b"\x89PNG\r\n\x1a\n") {
        return "PNG image data";
    }
    if starts(b"GIF87a") {
        return "GIF image data, version 87a";
    }
    if starts(b"GIF89a") {
        return "GIF image data, version 89a";
    }
    if starts(b"\xff\xd8\xff") {
        return "JPEG image data";
    }
    if starts(b"CWS") || starts(b"FWS") || starts(b"ZWS") {
        return "Macromedia Flash data";
    }
    if starts(b"\xca\xfe\xba\xbe") {
        return "compiled Java class data";
    }
    if starts(b"#!") {
        return "script text executable";
    }
    text(head)
}

fn pdf_version(head: &[u8]) -> &'static str {
    match head.get(5..8) {
        Some(b"1.0") => "PDF document, version 1.0",
        Some(b"1.1") => "PDF document, version 1.1",
        Some(b"1.2") => "PDF document, version 1.2",
        Some(b"1.3") => "PDF document, version 1.3",
        Some(b"1.4") => "PDF document, version 1.4",
        Some(b"1.5") => "PDF document, version 1.5",
        Some(b"1.6") => "PDF document, version 1.6",
        Some(b"1.7") => "PDF document, version 1.7",
        Some(b"2.0") => "PDF document, version 2.0",
        _ => "PDF document",
    }
}

/// An MZ executable: PE32/PE32+ when its PE header is within the bytes seen.
fn pe(head: &[u8]) -> &'static str {
    let Some(off) = head
        .get(0x3c..0x40)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    else {
        return "MS-DOS executable";
    };
    let sig = off.checked_add(4).and_then(|e| head.get(off..e));
    if sig != Some(b"PE\0\0") {
        return "MS-DOS executable";
    }
    // The optional header's magic follows the 20-byte COFF header.
    let dll = off
        .checked_add(22)
        .and_then(|c| head.get(c..c + 2))
        .is_some_and(|c| u16::from_le_bytes([c[0], c[1]]) & 0x2000 != 0);
    let plus = off
        .checked_add(24)
        .and_then(|m| head.get(m..m + 2))
        .is_some_and(|m| m == [0x0b, 0x02]);
    match (plus, dll) {
        (false, false) => "PE32 executable, for MS Windows",
        (false, true) => "PE32 executable (DLL), for MS Windows",
        (true, false) => "PE32+ executable, for MS Windows",
        (true, true) => "PE32+ executable (DLL), for MS Windows",
    }
}

/// Markup and text, by the bytes seen: libmagic's main text descriptions.
fn text(head: &[u8]) -> &'static str {
    if head.is_empty() {
        return "empty";
    }
    let ascii = head
        .iter()
        .all(|&c| matches!(c, b'\t' | b'\n' | b'\r' | 0x0c | 0x20..=0x7e));
    let utf8 = !ascii && std::str::from_utf8(head).is_ok();
    if !ascii && !utf8 {
        return "data";
    }
    let lead = head.trim_ascii_start();
    let lower = |p: &[u8]| lead.len() >= p.len() && lead[..p.len()].eq_ignore_ascii_case(p);
    if lower(b"<!doctype html") || lower(b"<html") || lower(b"<head") {
        return if ascii {
            "HTML document, ASCII text"
        } else {
            "HTML document, Unicode text, UTF-8 text"
        };
    }
    if lower(b"<?xml") {
        return if ascii {
            "XML 1.0 document, ASCII text"
        } else {
            "XML 1.0 document, Unicode text, UTF-8 text"
        };
    }
    // libmagic names the line terminators unless they are all LF.
    let (mut crlf, mut lf, mut cr) = (false, false, false);
    let mut i = 0;
    while let Some(&c) = head.get(i) {
        match (c, head.get(i + 1)) {
            (b'\r', Some(b'\n')) => {
                crlf = true;
                i += 1;
            }
            (b'\r', _) => cr = true,
            (b'\n', _) => lf = true,
            _ => {}
        }
        i += 1;
    }
    match (ascii, crlf, lf, cr) {
        (true, false, true, false) => "ASCII text",
        (true, false, false, false) => "ASCII text, with no line terminators",
        (true, true, false, false) => "ASCII text, with CRLF line terminators",
        (true, true, true, false) => "ASCII text, with CRLF, LF line terminators",
        (true, false, false, true) => "ASCII text, with CR line terminators",
        (true, _, _, _) => "ASCII text, with CRLF, CR, LF line terminators",
        (false, false, true, false) => "Unicode text, UTF-8 text",
        (false, false, false, false) => "Unicode text, UTF-8 text, with no line terminators",
        (false, true, false, false) => "Unicode text, UTF-8 text, with CRLF line terminators",
        (false, true, true, false) => "Unicode text, UTF-8 text, with CRLF, LF line terminators",
        (false, false, false, true) => "Unicode text, UTF-8 text, with CR line terminators",
        (false, _, _, _) => "Unicode text, UTF-8 text, with CRLF, CR, LF line terminators",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_types() {
        assert_eq!(describe(b"%PDF-1.4\n%..."), "PDF document, version 1.4");
        assert_eq!(describe(b"PK\x03\x04\x14\x00"), "Zip archive data");
        assert_eq!(describe(b"\x1f\x8b\x08\x00"), "gzip compressed data");
        assert_eq!(describe(b"GIF89a\x01\x00"), "GIF image data, version 89a");
        assert_eq!(describe(b"<html><body>"), "HTML document, ASCII text");
        assert_eq!(describe(b"hello\nworld\n"), "ASCII text");
        assert_eq!(
            describe(b"a.txt\r\nb.txt\r\n"),
            "ASCII text, with CRLF line terminators"
        );
        assert_eq!(
            describe(b"a\r\nb\n"),
            "ASCII text, with CRLF, LF line terminators"
        );
        assert_eq!(describe(b"\x00\x01\x02\xff"), "data");
        assert_eq!(describe(b""), "empty");
        // An MZ stub whose PE header lies past the bytes given.
        assert_eq!(describe(b"MZ\x90\x00"), "MS-DOS executable");
    }

    #[test]
    fn a_pe32_header() {
        // MZ, e_lfanew = 0x40, then "PE\0\0", machine 0x14c, and the optional header's
        // magic 0x10b (PE32) after the 20-byte COFF header; characteristics 0x0102.
        let mut b = vec![0u8; 0x40];
        b[0] = b'M';
        b[1] = b'Z';
        b[0x3c] = 0x40;
        b.extend_from_slice(b"PE\0\0");
        b.extend_from_slice(&[0x4c, 0x01, 0, 0]);
        b.extend_from_slice(&[0; 14]);
        b.extend_from_slice(&[0x02, 0x01]);
        b.extend_from_slice(&[0x0b, 0x01]);
        assert_eq!(describe(&b), "PE32 executable, for MS Windows");
    }
}
