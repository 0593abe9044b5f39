//! Parser-level tests: feed request/response bytes, check transactions and buffers.

use super::*;
use crate::{AppState, Buf, Dir, ParseOutput, Probe};

fn state() -> HttpState {
    HttpState::new(HttpConfig::default())
}

/// Feeds `data` to `dir` in pieces of `step` bytes.
fn feed(s: &mut HttpState, dir: Dir, data: &[u8], step: usize) -> Vec<&'static str> {
    let mut out = ParseOutput::default();
    for c in data.chunks(step.max(1)) {
        s.parse(dir, c, &mut out);
    }
    out.anomalies
}

fn ready<'a>(b: Buf<'a>) -> &'a [u8] {
    match b {
        Buf::Ready(v) => v,
        other => panic!("not ready: {other:?}"),
    }
}

fn tx(s: &HttpState, i: usize) -> &dyn Transaction {
    s.tx(i).expect("transaction")
}

#[test]
fn probes() {
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1"), Probe::Match);
    assert_eq!(probe(Dir::ToServer, b"PO"), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, b"\x16\x03\x01"), Probe::NoMatch);
    assert_eq!(probe(Dir::ToClient, b"HTTP/1.1 200"), Probe::Match);
    assert_eq!(probe(Dir::ToClient, b"HT"), Probe::NeedMore);
    assert_eq!(probe(Dir::ToClient, b"SSH-2.0"), Probe::NoMatch);
}

#[test]
fn request_buffers() {
    let req = b"GET /a/../b%20c?x=%41 HTTP/1.1\r\nHost: Example.COM:8080\r\nUser-Agent: ua\r\nCookie: k=v\r\nX-A: 1\r\nX-A: 2\r\n\r\n";
    for step in [1, 7, 1000] {
        let mut s = state();
        feed(&mut s, Dir::ToServer, req, step);
        let t = tx(&s, 0);
        assert_eq!(ready(t.buffer(detect::URI, 0)), b"/b c?x=A");
        assert_eq!(ready(t.buffer(detect::URI_RAW, 0)), b"/a/../b%20c?x=%41");
        assert_eq!(ready(t.buffer(detect::METHOD, 0)), b"GET");
        assert_eq!(ready(t.buffer(detect::HOST, 0)), b"example.com");
        assert_eq!(ready(t.buffer(detect::HOST_RAW, 0)), b"Example.COM:8080");
        assert_eq!(ready(t.buffer(detect::USER_AGENT, 0)), b"ua");
        assert_eq!(ready(t.buffer(detect::COOKIE_REQ, 0)), b"k=v");
        assert_eq!(
            ready(t.buffer(detect::HEADER_REQ, 0)),
            b"Host: Example.COM:8080\r\nUser-Agent: ua\r\nCookie: k=v\r\nX-A: 1, 2\r\n"
        );
        assert_eq!(
            ready(t.buffer(detect::HEADER_NAMES_REQ, 0)),
            b"\r\nHost\r\nUser-Agent\r\nCookie\r\nX-A\r\n\r\n"
        );
        assert_eq!(ready(t.buffer(detect::REQUEST_HEADER, 3)), b"X-A: 1, 2");
        assert_eq!(t.buffer(detect::REQUEST_HEADER, 4), Buf::Absent);
        assert_eq!(t.buffer(detect::REFERER, 0), Buf::Absent);
        assert_eq!(t.buffer(detect::REQUEST_BODY, 0), Buf::Absent);
        assert!(t.complete(Dir::ToServer));
        assert!(!t.complete(Dir::ToClient));
        assert_eq!(t.buffer(detect::STAT_CODE, 0), Buf::NotYet);
    }
}

#[test]
fn not_yet_before_headers_end() {
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"POST /x HTTP/1.1\r\nHost: a\r\n",
        100,
    );
    let t = tx(&s, 0);
    assert_eq!(ready(t.buffer(detect::URI, 0)), b"/x");
    assert_eq!(t.buffer(detect::HOST, 0), Buf::NotYet);
    assert_eq!(t.buffer(detect::REQUEST_BODY, 0), Buf::NotYet);
}

#[test]
fn pipelined_keepalive_content_length_and_chunked() {
    let reqs = b"POST /1 HTTP/1.1\r\nContent-Length: 5\r\n\r\nhelloGET /2 HTTP/1.1\r\n\r\nPOST /3 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;ext\r\nde\r\n0\r\nTrailer: x\r\n\r\n";
    let resps = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nnope\r\n0\r\n\r\nHTTP/1.0 200 OK\r\n\r\nuntil close";
    for step in [1, 3, 64, 4096] {
        let mut s = state();
        feed(&mut s, Dir::ToServer, reqs, step);
        feed(&mut s, Dir::ToClient, resps, step);
        let mut out = ParseOutput::default();
        s.eof(Dir::ToClient, &mut out);
        assert_eq!(s.tx_count(), 3);
        assert_eq!(ready(tx(&s, 0).buffer(detect::REQUEST_BODY, 0)), b"hello");
        assert_eq!(ready(tx(&s, 1).buffer(detect::URI, 0)), b"/2");
        assert_eq!(ready(tx(&s, 2).buffer(detect::REQUEST_BODY, 0)), b"abcde");
        assert_eq!(ready(tx(&s, 0).buffer(detect::RESPONSE_BODY, 0)), b"ok");
        assert_eq!(ready(tx(&s, 1).buffer(detect::STAT_CODE, 0)), b"404");
        assert_eq!(ready(tx(&s, 1).buffer(detect::STAT_MSG, 0)), b"Not Found");
        assert_eq!(ready(tx(&s, 1).buffer(detect::RESPONSE_BODY, 0)), b"nope");
        assert_eq!(
            ready(tx(&s, 2).buffer(detect::RESPONSE_BODY, 0)),
            b"until close"
        );
        for i in 0..3 {
            assert!(tx(&s, i).complete(Dir::ToServer) && tx(&s, i).complete(Dir::ToClient));
        }
        s.free_below(2);
        assert_eq!(s.tx_count(), 1);
        assert_eq!(tx(&s, 0).id(), 2);
    }
}

#[test]
fn partial_body_then_ready() {
    let mut s = state();
    feed(&mut s, Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n", 100);
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n12345",
        100,
    );
    assert_eq!(
        tx(&s, 0).buffer(detect::RESPONSE_BODY, 0),
        Buf::Partial(b"12345")
    );
    feed(&mut s, Dir::ToClient, b"67890", 100);
    assert_eq!(
        ready(tx(&s, 0).buffer(detect::RESPONSE_BODY, 0)),
        b"1234567890"
    );
}

#[test]
fn gzip_body_and_limit() {
    use flate2::{Compression, write::GzEncoder};
    use std::io::Write;
    let body = vec![b'A'; 300 * 1024];
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(&body).unwrap();
    let gz = e.finish().unwrap();
    let mut resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        gz.len()
    )
    .into_bytes();
    resp.extend_from_slice(&gz);
    let mut s = state();
    feed(&mut s, Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n", 100);
    feed(&mut s, Dir::ToClient, &resp, 1460);
    let b = ready(tx(&s, 0).buffer(detect::RESPONSE_BODY, 0));
    // Capped at the default response-body-limit.
    assert_eq!(b.len(), 100 * 1024);
    assert!(b.iter().all(|&c| c == b'A'));
}

#[test]
fn folding_and_weird_lines() {
    let mut s = state();
    feed(&mut s, Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n", 100);
    let an = feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\rX-Folded: a\r\n b\r\nTransfer-Encoding:\r\n chunked\r\nbadline\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        2,
    );
    let t = tx(&s, 0);
    assert_eq!(ready(t.buffer(detect::RESPONSE_BODY, 0)), b"hello");
    // Folding onto a header is no anomaly (libhtp); a line without a colon is.
    assert!(!an.contains(&"http.invalid_response_field_folding"));
    assert!(an.contains(&"http.response_field_missing_colon"));
}

#[test]
fn http09_and_body_without_status_line() {
    let mut s = state();
    feed(&mut s, Dir::ToServer, b"GET /old\r\n", 100);
    feed(&mut s, Dir::ToClient, b"<html>old</html>", 100);
    let mut out = ParseOutput::default();
    s.eof(Dir::ToClient, &mut out);
    assert_eq!(
        ready(tx(&s, 0).buffer(detect::RESPONSE_BODY, 0)),
        b"<html>old</html>"
    );
    assert_eq!(ready(tx(&s, 0).buffer(detect::PROTOCOL_REQ, 0)), b"");
}

#[test]
fn response_without_request_and_100_continue() {
    let mut s = state();
    let an = feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx",
        100,
    );
    assert!(an.contains(&"http.unable_to_match_response_to_request"));
    assert_eq!(tx(&s, 0).buffer(detect::URI, 0), Buf::Absent);
    assert!(tx(&s, 0).complete(Dir::ToServer) && tx(&s, 0).complete(Dir::ToClient));
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"POST / HTTP/1.1\r\nContent-Length: 1\r\n\r\nx",
        100,
    );
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok",
        5,
    );
    assert_eq!(s.tx_count(), 1);
    assert_eq!(ready(tx(&s, 0).buffer(detect::STAT_CODE, 0)), b"201");
}

#[test]
fn head_response_has_no_body_and_connect_stops() {
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"HEAD / HTTP/1.1\r\n\r\nGET /2 HTTP/1.1\r\n\r\n",
        100,
    );
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nz",
        100,
    );
    assert_eq!(tx(&s, 0).buffer(detect::RESPONSE_BODY, 0), Buf::Absent);
    assert_eq!(ready(tx(&s, 1).buffer(detect::RESPONSE_BODY, 0)), b"z");
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"CONNECT h:443 HTTP/1.1\r\n\r\n\x16\x03\x01",
        100,
    );
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\n\r\n\x16\x03\x03",
        100,
    );
    feed(
        &mut s,
        Dir::ToServer,
        b"GET /not-http HTTP/1.1\r\n\r\n",
        100,
    );
    assert_eq!(s.tx_count(), 1);
}

/// A `101 Switching Protocols` ends HTTP with the response at its headers' progress
/// (libhtp's): Suricata 8 gives rules its line and single headers but not the
/// buffers that need the headers done (checked against the reference on
/// tests/data/websocket-deflate.pcap); the request keeps all of its own.
#[test]
fn switching_protocols_response_has_no_header_block_buffers() {
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"GET /chat HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n",
        100,
    );
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nServer: x\r\n\r\n",
        100,
    );
    let t = tx(&s, 0);
    for id in [
        detect::HEADER_RESP,
        detect::HEADER_RAW_RESP,
        detect::HEADER_NAMES_RESP,
        detect::START_RESP,
    ] {
        assert_eq!(t.buffer(id, 0), Buf::Absent, "{id:?}");
    }
    assert_eq!(ready(t.buffer(detect::STAT_CODE, 0)), b"101");
    assert_eq!(ready(t.buffer(detect::SERVER, 0)), b"x");
    assert!(ready(t.buffer(detect::HEADER_REQ, 0)).starts_with(b"Host: h"));
    // Any other response keeps them.
    let mut s = state();
    feed(&mut s, Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n", 100);
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
        100,
    );
    assert_eq!(
        ready(tx(&s, 0).buffer(detect::HEADER_RESP, 0)),
        b"Content-Length: 0\r\n"
    );
}

#[test]
fn oversized_header_is_an_anomaly_not_a_crash() {
    let mut s = state();
    let mut req = b"GET / HTTP/1.1\r\nX: ".to_vec();
    req.extend(std::iter::repeat_n(b'a', 200_000));
    let an = feed(&mut s, Dir::ToServer, &req, 1460);
    assert!(an.contains(&"http.request_field_too_long"));
}

#[test]
fn gaps() {
    let mut s = state();
    feed(&mut s, Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n", 100);
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab",
        100,
    );
    let mut out = ParseOutput::default();
    s.gap(Dir::ToClient, 3, &mut out);
    feed(&mut s, Dir::ToClient, b"fghijHTTP/1.1 204 No\r\n\r\n", 100);
    assert_eq!(
        ready(tx(&s, 0).buffer(detect::RESPONSE_BODY, 0)),
        b"abfghij"
    );
    // The 204 has no request to pair with.
    assert_eq!(s.tx_count(), 2);
    assert_eq!(tx(&s, 1).buffer(detect::URI, 0), Buf::Absent);
}

#[test]
fn record_fields() {
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"GET /p?q HTTP/1.1\r\nHost: h.example:81\r\nUser-Agent: u\r\nReferer: r\r\n\r\n",
        100,
    );
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 301 Moved\r\nLocation: /n\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 3\r\n\r\nabc",
        100,
    );
    let Some(AppRecord::Http(r)) = tx(&s, 0).record() else {
        panic!("no record")
    };
    assert_eq!(r.hostname, b"h.example");
    assert_eq!(r.http_port, Some(81));
    assert_eq!(r.url, b"/p?q");
    assert_eq!(r.http_method, b"GET");
    assert_eq!(r.protocol, b"HTTP/1.1");
    assert_eq!(r.status, Some(301));
    assert_eq!(r.redirect, b"/n");
    assert_eq!(r.http_content_type, b"text/html");
    assert_eq!(r.http_refer, b"r");
    assert_eq!(r.length, 3);
}

#[test]
fn request_without_end_of_headers() {
    // suricata-verify UriTestSig34: the capture stops inside the headers.
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"POST /normalized%20uri HTTP/1.0\r\nUser-Agent: Mozilla/1.0\r\n",
        100,
    );
    let t = tx(&s, 0);
    assert_eq!(t.progress(Dir::ToServer), 2);
    assert_eq!(ready(t.buffer(detect::URI, 0)), b"/normalized uri");
    assert_eq!(ready(t.buffer(detect::URI_RAW, 0)), b"/normalized%20uri");
    let mut out = ParseOutput::default();
    s.eof(Dir::ToServer, &mut out);
    let t = tx(&s, 0);
    assert_eq!(t.progress(Dir::ToServer), 5);
    assert_eq!(ready(t.buffer(detect::USER_AGENT, 0)), b"Mozilla/1.0");
}

#[test]
fn file_names() {
    let reqs = b"POST /up/a%20b.txt?x=1 HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET /dl/r.pdf?v=2 HTTP/1.1\r\n\r\nGET /x HTTP/1.1\r\n\r\nGET /empty HTTP/1.1\r\n\r\n";
    let resps = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n%PDFHTTP/1.1 200 OK\r\nContent-Disposition: attachment; filename=\"Report 1.DOC\"\r\nContent-Length: 1\r\n\r\nzHTTP/1.1 204 No Content\r\n\r\n";
    for step in [1, 9, 4096] {
        let mut s = state();
        feed(&mut s, Dir::ToServer, reqs, step);
        feed(&mut s, Dir::ToClient, resps, step);
        assert_eq!(s.tx_count(), 4);
        // A request body is a file named after the URI path (decoded, no query).
        assert_eq!(
            ready(tx(&s, 0).buffer(detect::FILE_NAME_REQ, 0)),
            b"/up/a b.txt"
        );
        assert_eq!(
            ready(tx(&s, 0).buffer(detect::FILE_NAME_RESP, 0)),
            b"/up/a b.txt"
        );
        // No request body, no request file.
        assert_eq!(tx(&s, 1).buffer(detect::FILE_NAME_REQ, 0), Buf::Absent);
        assert_eq!(
            ready(tx(&s, 1).buffer(detect::FILE_NAME_RESP, 0)),
            b"/dl/r.pdf"
        );
        // Content-Disposition names the response's file.
        assert_eq!(
            ready(tx(&s, 2).buffer(detect::FILE_NAME_RESP, 0)),
            b"Report 1.DOC"
        );
        // A response without a body carries no file.
        assert_eq!(tx(&s, 3).buffer(detect::FILE_NAME_RESP, 0), Buf::Absent);
    }
}

#[test]
fn file_name_waits_for_body_bytes() {
    let mut s = state();
    feed(&mut s, Dir::ToServer, b"GET /f.bin HTTP/1.1\r\n\r\n", 100);
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n",
        100,
    );
    assert_eq!(tx(&s, 0).buffer(detect::FILE_NAME_RESP, 0), Buf::NotYet);
    feed(&mut s, Dir::ToClient, b"ab", 100);
    assert_eq!(
        ready(tx(&s, 0).buffer(detect::FILE_NAME_RESP, 0)),
        b"/f.bin"
    );
}

#[test]
fn content_disposition_filename() {
    use super::detect::disposition_filename as f;
    assert_eq!(
        f(b"attachment; filename=\"a b.pdf\""),
        Some(&b"a b.pdf"[..])
    );
    assert_eq!(
        f(b"attachment; FILENAME=x.exe; size=3"),
        Some(&b"x.exe"[..])
    );
    assert_eq!(f(b"inline"), None);
    assert_eq!(f(b"attachment; filename=\"\""), None);
    assert_eq!(
        f(b"attachment; filename=\"unterminated"),
        Some(&b"unterminated"[..])
    );
}

#[test]
fn every_raised_event_is_listed() {
    let n = crate::events::raised_names_are_listed(
        crate::http::EVENTS,
        include_str!("state.rs"),
        "http",
    );
    assert!(n > 0);
}

fn with_files() -> HttpState {
    let mut s = state();
    s.set_files(crate::files::FileConfig {
        track: true,
        md5: true,
        sha256: true,
        magic: true,
        ..Default::default()
    });
    s
}

/// Request and response bodies are files: named by the URI path (a response by its
/// Content-Disposition filename when it has one), sized and hashed over the bytes as
/// de-chunked, closed when the message completes, whatever the piece size.
#[test]
fn bodies_are_files() {
    let req = b"POST /up/load?x=1 HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\n\r\nabc";
    let resp = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Disposition: attachment; filename=\"r.pdf\"\r\n\r\n2\r\n%P\r\n3\r\nDF-\r\n0\r\n\r\n";
    for step in [1, 5, 1000] {
        let mut s = with_files();
        feed(&mut s, Dir::ToServer, req, step);
        let t = tx(&s, 0);
        let f = &t.files(Dir::ToServer)[0];
        assert_eq!(f.name(), b"/up/load");
        assert_eq!(f.state(), crate::files::FileState::Closed);
        assert_eq!(f.size(), 3);
        assert_eq!(
            crate::files::hex(f.md5().unwrap()),
            "900150983cd24fb0d6963f7d28e17f72"
        );
        assert!(t.files(Dir::ToClient).is_empty());
        feed(&mut s, Dir::ToClient, resp, step);
        let t = tx(&s, 0);
        let f = &t.files(Dir::ToClient)[0];
        assert_eq!(f.name(), b"r.pdf");
        assert_eq!((f.size(), f.state()), (5, crate::files::FileState::Closed));
        assert_eq!(f.magic(), Some("PDF document"));
        assert_eq!(ready(t.buffer(detect::FILE_MAGIC_RESP, 0)), b"PDF document");
        let r = crate::files::record(f, t.id());
        assert_eq!((r.state.as_str(), r.size, r.tx_id), ("CLOSED", 5, 0));
        assert_eq!(r.sha256.len(), 64);
    }
}

/// Without the file layer no file is made; a message without body bytes has none.
#[test]
fn no_files_unless_tracked_or_bodies() {
    let mut s = state();
    feed(
        &mut s,
        Dir::ToServer,
        b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nab",
        100,
    );
    assert!(tx(&s, 0).files(Dir::ToServer).is_empty());
    let mut s = with_files();
    feed(
        &mut s,
        Dir::ToServer,
        b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
        100,
    );
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 304 Not Modified\r\n\r\n",
        100,
    );
    let t = tx(&s, 0);
    assert!(t.files(Dir::ToServer).is_empty() && t.files(Dir::ToClient).is_empty());
    assert_eq!(t.buffer(detect::FILE_MAGIC_RESP, 0), Buf::Absent);
}

/// A body cut by the end of the stream is a truncated file without digests; a gap in
/// a body marks the file; a body until close is complete at the close.
#[test]
fn truncated_and_gapped_files() {
    let mut s = with_files();
    let mut out = ParseOutput::default();
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        100,
    );
    s.gap(Dir::ToClient, 2, &mut out);
    feed(&mut s, Dir::ToClient, b"de", 100);
    s.eof(Dir::ToClient, &mut out);
    let f = &tx(&s, 0).files(Dir::ToClient)[0];
    assert_eq!(f.state(), crate::files::FileState::Truncated);
    assert!(f.has_gaps() && f.md5().is_none());
    assert_eq!(f.size(), 7);

    let mut s = with_files();
    feed(&mut s, Dir::ToServer, b"GET /c HTTP/1.0\r\n\r\n", 100);
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.0 200 OK\r\n\r\nuntil close",
        100,
    );
    assert!(tx(&s, 0).files(Dir::ToClient)[0].is_open());
    s.eof(Dir::ToClient, &mut out);
    let f = &tx(&s, 0).files(Dir::ToClient)[0];
    assert_eq!((f.state(), f.size()), (crate::files::FileState::Closed, 11));
    assert_eq!(f.name(), b"/c");
}

/// A compressed body's file is the decoded bytes.
#[test]
fn a_gzip_body_file_is_decoded() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(b"hello hello hello").unwrap();
    let body = gz.finish().unwrap();
    let mut resp = format!(
        "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    resp.extend_from_slice(&body);
    let mut s = with_files();
    feed(&mut s, Dir::ToServer, b"GET /z HTTP/1.1\r\n\r\n", 100);
    feed(&mut s, Dir::ToClient, &resp, 3);
    let f = &tx(&s, 0).files(Dir::ToClient)[0];
    assert_eq!((f.state(), f.size()), (crate::files::FileState::Closed, 17));
}

#[test]
fn content_ranges() {
    assert_eq!(
        detect::content_range(b"bytes 500-1000/146515"),
        Some((500, 1000, 146515))
    );
    // Suricata's parser: the unit runs to the first space, so `bytes=...` is no range.
    assert_eq!(detect::parse_content_range(b" bytes=0-0/*"), None);
    assert_eq!(
        detect::parse_content_range(b"bytes */1000"),
        Some(detect::ContentRange {
            start: None,
            end: None,
            size: Some(1000)
        })
    );
    assert_eq!(
        detect::parse_content_range(b"  bytes  30-68/*"),
        Some(detect::ContentRange {
            start: Some(30),
            end: Some(68),
            size: None
        })
    );
    // Parsed, but no part of a file: no size, the whole file, reversed, past the end,
    // a last byte of 0.
    assert_eq!(detect::content_range(b"bytes */1000"), None);
    assert_eq!(detect::content_range(b"bytes 30-68/*"), None);
    assert_eq!(detect::content_range(b"bytes 0-9/10"), None);
    assert_eq!(detect::content_range(b"bytes 9-1/10"), None);
    assert_eq!(detect::content_range(b"bytes 5-10/10"), None);
    assert_eq!(detect::content_range(b"bytes 0-0/10"), None);
    assert_eq!(detect::content_range(b"items 1-2/3"), Some((1, 2, 3)));
    assert_eq!(
        detect::parse_content_range(b"bytes 1-99999999999999999999/3"),
        None
    );
}

/// A multipart upload's file parts are its files (named by their `filename`, sized
/// without the line end before the next delimiter), the form fields are not, and
/// `file.data`/`file.name` give each file apart; the whole body is still
/// `http.request_body`. Whatever the piece size.
#[test]
fn multipart_file_parts_are_files() {
    let body: &[u8] = b"--XyZ\r\n\
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
    let req = [
        format!(
            "POST / HTTP/1.1\r\nHost: a\r\nContent-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
        .as_bytes(),
        body,
    ]
    .concat();
    for step in [1, 7, 10_000] {
        for tracked in [true, false] {
            let mut s = if tracked { with_files() } else { state() };
            feed(&mut s, Dir::ToServer, &req, step);
            let t = tx(&s, 0);
            assert_eq!(
                ready(t.buffer(detect::FILE_DATA_REQ, 0)),
                b"toto est dans un bateau\n"
            );
            assert_eq!(
                ready(t.buffer(detect::FILE_DATA_REQ, 1)),
                b"Titi a vu un gros minet.\n"
            );
            assert_eq!(t.buffer(detect::FILE_DATA_REQ, 2), Buf::Absent);
            assert_eq!(ready(t.buffer(detect::FILE_NAME_REQ, 1)), b"titi.txt");
            assert_eq!(ready(t.buffer(detect::REQUEST_BODY, 0)), body);
            let files = t.files(Dir::ToServer);
            if !tracked {
                assert!(files.is_empty());
                continue;
            }
            let got: Vec<(&[u8], u64)> = files.iter().map(|f| (f.name(), f.size())).collect();
            assert_eq!(
                got,
                [(&b"toto.txt"[..], 24), (&b"titi.txt"[..], 25)],
                "step {step}"
            );
            assert!(
                files
                    .iter()
                    .all(|f| f.state() == crate::files::FileState::Closed)
            );
            assert_eq!(
                crate::files::hex(files[0].md5().unwrap()),
                "4faf1919fd89344be44cf0c6236e5af7"
            );
        }
    }
}

/// libhtp's anomalies, each on the message that shows it: what the reference raises
/// on the same bytes (`suricata-ref` on crafted sessions, one anomaly each).
#[test]
fn anomalies_as_libhtp_names_them() {
    let run = |req: &[u8], resp: &[u8]| {
        let mut s = state();
        let mut an = feed(&mut s, Dir::ToServer, req, 1460);
        an.extend(feed(&mut s, Dir::ToClient, resp, 1460));
        an
    };
    let req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n";
    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
    let resp = |h: &[u8]| {
        let mut r = b"HTTP/1.1 200 OK\r\n".to_vec();
        r.extend_from_slice(h);
        r
    };
    let cases: &[(&[u8], &[u8], &[&str])] = &[
        (req, &resp(b"Server : a\r\nContent-Length: 0\r\n\r\n"), &["http.response_invalid_lws_after_name"]),
        (req, &resp(b"Ser@ver: a\r\nContent-Length: 0\r\n\r\n"), &["http.response_header_name_not_token"]),
        (req, &resp(b": v\r\nContent-Length: 0\r\n\r\n"), &["http.response_field_missing_colon"]),
        (req, &resp(b"Transfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), &["http.response_abnormal_transfer_encoding"]),
        (req, b"HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", &["http.response_chunked_old_proto"]),
        (req, &resp(b"Transfer-Encoding: chunked\r\n\r\n3;a\r\nabc\r\n0;b\r\n\r\n"), &["http.response_chunk_extension", "http.response_chunk_extension"]),
        (req, &resp(b"Content-Length: +3\r\n\r\nabc"), &["http.content_length_extra_data_start"]),
        (req, &resp(b"Content-Length: 3, 4\r\n\r\nabc"), &["http.content_length_extra_data_end"]),
        (req, &resp(b"Content-Encoding: compress\r\nContent-Length: 3\r\n\r\nabc"), &["http.abnormal_ce_header"]),
        (req, b"HTTP/1.2 200 OK\r\nContent-Length: 0\r\n\r\n", &["http.response_line_invalid_protocol"]),
        (req, b"HTTP/1.1 099 OK\r\nContent-Length: 0\r\n\r\n", &["http.response_line_invalid_response_status"]),
        (req, &resp(b"Server: a\r\nServer: a\r\nServer: a\r\nX: 1\r\nX: 2\r\nContent-Length: 0\r\n\r\n"), &["http.response_header_repetition", "http.response_header_repetition"]),
        (b"GET / HTTP/1.1\r\nHost\t: x\r\n\r\n", ok, &["http.request_invalid_lws_after_name"]),
        (b"GET / HTTP/1.1\r\nHost: x\r\nNoColon\r\n\r\n", ok, &["http.request_field_missing_colon"]),
        (b"GET / HTTP/1.1\r\n folded: x\r\nHost: x\r\n\r\n", ok, &["http.invalid_request_field_folding"]),
        (b"GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", ok, &[]),
        (b"GET / HTTP/1.1\r\n\r\n", ok, &["http.missing_host_header"]),
        (b"GET / HTTP/1.0\r\n\r\n", ok, &[]),
        (b"GET / HTTP/1.1\r\nHost: x:abc\r\n\r\n", ok, &["http.request_header_host_invalid"]),
        (b"GET http://a/ HTTP/1.1\r\nHost: b\r\n\r\n", ok, &["http.host_header_ambiguous"]),
        (b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: NTLM abc\r\n\r\n", ok, &["http.request_auth_unrecognized"]),
        (b"GET / HTTP/1.1\r\nHost: x\r\nAuthorization: Basic YTpi\r\n\r\n", ok, &[]),
        (b"GET\t/ HTTP/1.1\r\nHost: x\r\n\r\n", ok, &["http.method_delim_non_compliant"]),
        (b"GET /\tHTTP/1.1\r\nHost: x\r\n\r\n", ok, &["http.uri_delim_non_compliant"]),
        (b"GET / HTTP/x\r\nHost: x\r\n\r\n", ok, &[]),
        (b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3;x\r\nabc\r\n0\r\n\r\n", ok, &["http.request_chunk_extension"]),
        (b"GET /\r\nHost: x\r\n\r\n", b"hi", &["http.request_line_missing_protocol"]),
    ];
    for (req, resp, want) in cases {
        assert_eq!(
            run(req, resp),
            *want,
            "{}",
            String::from_utf8_lossy(req) + String::from_utf8_lossy(resp)
        );
    }
}

/// HTTP/1 frames: two pipelined requests (the first followed by an empty line, which
/// is part of its frame, as in Suricata's), a chunked response and a response without a body, fed in
/// small pieces; a gap inside a body is left out of the frame's bytes.
#[test]
fn frames() {
    let req1 = b"GET /1 HTTP/1.1\r\nHost: a\r\n\r\n\r\n";
    let req2 = b"HEAD /2 HTTP/1.1\r\nHost: a\r\n\r\n";
    let resp1 = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
    let resp2 = b"HTTP/1.1 204 No Content\r\n\r\n";
    for step in [1, 5, 1000] {
        let mut s = state();
        s.set_frames(&[detect::FRAME_REQUEST, detect::FRAME_RESPONSE]);
        let mut both = req1.to_vec();
        both.extend_from_slice(req2);
        feed(&mut s, Dir::ToServer, &both, step);
        // A request without a body is complete at the end of its headers.
        let t0 = tx(&s, 0);
        assert_eq!(ready(t0.buffer(detect::FRAME_REQUEST, 0)), req1);
        assert_eq!(t0.buffer(detect::FRAME_RESPONSE, 0), Buf::NotYet);
        let m = t0.frame(detect::FRAME_REQUEST, 0).expect("frame");
        assert_eq!(
            (m.id, m.stream_offset, m.complete, m.tx_id),
            (2, Some(0), true, Some(0))
        );
        let t1 = tx(&s, 1);
        assert_eq!(ready(t1.buffer(detect::FRAME_REQUEST, 0)), req2);
        let m = t1.frame(detect::FRAME_REQUEST, 0).expect("frame");
        assert_eq!(m.id, 3);
        assert_eq!(m.stream_offset, Some(req1.len() as u64));
        assert_eq!(m.tx_id, Some(1));

        feed(&mut s, Dir::ToClient, &resp1[..20], step);
        // Inspected once complete.
        assert_eq!(tx(&s, 0).buffer(detect::FRAME_RESPONSE, 0), Buf::NotYet);
        feed(&mut s, Dir::ToClient, &resp1[20..], step);
        feed(&mut s, Dir::ToClient, resp2, step);
        let mut out = ParseOutput::default();
        s.eof(Dir::ToClient, &mut out);
        let t0 = tx(&s, 0);
        assert_eq!(ready(t0.buffer(detect::FRAME_RESPONSE, 0)), resp1);
        let m = t0.frame(detect::FRAME_RESPONSE, 0).expect("frame");
        assert_eq!((m.id, m.stream_offset, m.tx_id), (2, Some(0), Some(0)));
        let t1 = tx(&s, 1);
        assert_eq!(ready(t1.buffer(detect::FRAME_RESPONSE, 0)), resp2);
        let m = t1.frame(detect::FRAME_RESPONSE, 0).expect("frame");
        assert_eq!((m.id, m.stream_offset), (3, Some(resp1.len() as u64)));
    }

    // A gap in a body: the offsets count it, the bytes leave it out.
    let mut s = state();
    s.set_frames(&[detect::FRAME_REQUEST, detect::FRAME_RESPONSE]);
    let mut out = ParseOutput::default();
    feed(
        &mut s,
        Dir::ToServer,
        b"GET /1 HTTP/1.0\r\n\r\nGET /2 HTTP/1.0\r\n\r\n",
        1000,
    );
    feed(
        &mut s,
        Dir::ToClient,
        b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nab",
        1000,
    );
    s.gap(Dir::ToClient, 2, &mut out);
    feed(&mut s, Dir::ToClient, b"cdHTTP/1.0 200 OK\r\n\r\n", 1000);
    let m = tx(&s, 1).frame(detect::FRAME_RESPONSE, 0).expect("frame");
    assert_eq!(m.stream_offset, Some(44));
    let m = tx(&s, 0).frame(detect::FRAME_RESPONSE, 0).expect("frame");
    assert_eq!(m.length, Some(44));
    assert_eq!(
        tx(&s, 0).buffer(detect::FRAME_RESPONSE, 0),
        Buf::Ready(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nabcd")
    );

    // Without frame rules, nothing is kept.
    let mut s = state();
    feed(&mut s, Dir::ToServer, req1, 1000);
    assert_eq!(tx(&s, 0).buffer(detect::FRAME_REQUEST, 0), Buf::Ready(b""));
}
