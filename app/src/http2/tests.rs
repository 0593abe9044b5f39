//! Tests of the HTTP/2 state over crafted connections.

use super::*;
use crate::{AppState, ParseOutput};

fn frame_bytes(ftype: u8, flags: u8, sid: u32, payload: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    let l = payload.len() as u32;
    v.extend_from_slice(&l.to_be_bytes()[1..]);
    v.push(ftype);
    v.push(flags);
    v.extend_from_slice(&sid.to_be_bytes());
    v.extend_from_slice(payload);
    v
}

/// A literal header without indexing, new name.
fn lit(name: &str, value: &str) -> Vec<u8> {
    let mut v = vec![0x00, name.len() as u8];
    v.extend_from_slice(name.as_bytes());
    v.push(value.len() as u8);
    v.extend_from_slice(value.as_bytes());
    v
}

fn conn() -> (Vec<u8>, Vec<u8>) {
    let mut c = frame::PREFACE.to_vec();
    c.extend(frame_bytes(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100]));
    let mut block = vec![0x82, 0x86]; // :method GET, :scheme http
    block.extend(lit(":path", "/index.html"));
    block.extend(lit(":authority", "Example.com:8080"));
    block.extend(lit("user-agent", "test/1.0"));
    // HEADERS without END_HEADERS, then a CONTINUATION.
    let (a, b) = block.split_at(5);
    c.extend(frame_bytes(frame::HEADERS, frame::FLAG_END_STREAM, 1, a));
    c.extend(frame_bytes(
        frame::CONTINUATION,
        frame::FLAG_END_HEADERS,
        1,
        b,
    ));
    c.extend(frame_bytes(frame::WINDOW_UPDATE, 0, 0, &[0, 0, 0x87, 0x4a]));
    c.extend(frame_bytes(frame::GOAWAY, 0, 0, &[0, 0, 0, 1, 0, 0, 0, 0]));
    let mut s = frame_bytes(frame::SETTINGS, 0, 0, &[0, 1, 0, 0, 0x10, 0]);
    let mut rb = vec![0x88]; // :status 200
    rb.extend(lit("content-length", "5"));
    s.extend(frame_bytes(frame::HEADERS, frame::FLAG_END_HEADERS, 1, &rb));
    // Padded DATA: pad length 2.
    s.extend(frame_bytes(
        frame::DATA,
        frame::FLAG_END_STREAM | frame::FLAG_PADDED,
        1,
        &[2, b'h', b'e', b'l', b'l', b'o', 0, 0],
    ));
    (c, s)
}

fn run(step: usize) -> Http2State {
    let (c, s) = conn();
    let mut st = Http2State::new(Http2Config::default());
    let mut out = ParseOutput::default();
    for ch in c.chunks(step) {
        st.parse(Dir::ToServer, ch, &mut out);
    }
    for ch in s.chunks(step) {
        st.parse(Dir::ToClient, ch, &mut out);
    }
    assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    st
}

#[test]
fn a_connection_in_any_chunking() {
    for step in [1, 2, 7, 1000] {
        let st = run(step);
        let txs = st.txs();
        // settings (to server), stream 1, window update, goaway, settings (to client).
        assert_eq!(txs.len(), 5, "step {step}");
        let t = &txs[1];
        assert_eq!(t.stream_id, 1);
        assert!(t.complete(Dir::ToServer) && t.complete(Dir::ToClient));
        assert_eq!(
            t.buffer(crate::http::detect::URI, 0),
            Buf::Ready(b"/index.html")
        );
        assert_eq!(
            t.buffer(crate::http::detect::HOST, 0),
            Buf::Ready(b"example.com")
        );
        assert_eq!(
            t.buffer(crate::http::detect::RESPONSE_BODY, 0),
            Buf::Ready(b"hello")
        );
        assert_eq!(
            t.buffer(crate::http::detect::REQUEST_HEADER, 4),
            Buf::Ready(b"user-agent: test/1.0")
        );
        assert_eq!(
            t.buffer(crate::http::detect::HEADER_REQ, 0),
            Buf::Ready(b"user-agent: test/1.0\r\n")
        );
        assert_eq!(txs[2].side(Dir::ToServer).windows, vec![34634]);
        assert_eq!(txs[3].side(Dir::ToServer).error_code, Some(0));
        let r = logger::record(t).unwrap();
        assert_eq!(r.status, Some(200));
        assert_eq!(r.length, Some(5));
        assert_eq!(r.url, b"/index.html");
        assert!(logger::record(&txs[2]).is_none());
    }
}

#[test]
fn probes() {
    assert_eq!(probe(Dir::ToServer, b"PRI * HT"), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, frame::PREFACE), Probe::Match);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
    assert_eq!(
        probe(
            Dir::ToClient,
            &frame_bytes(frame::SETTINGS, 0, 0, &[0, 3, 0, 0, 0, 100])
        ),
        Probe::Match
    );
    assert_eq!(probe(Dir::ToClient, b"HTTP/1.1 200 OK\r\n"), Probe::NoMatch);
}

#[test]
fn bad_input_raises_events() {
    let mut st = Http2State::new(Http2Config::default());
    let mut out = ParseOutput::default();
    st.parse(Dir::ToServer, b"PRI * HTTP/1.1\r\n", &mut out);
    assert_eq!(out.anomalies, vec!["http2.invalid_client_magic"]);
    let mut st = Http2State::new(Http2Config::default());
    let mut out = ParseOutput::default();
    let mut c = frame::PREFACE.to_vec();
    c.extend(frame_bytes(frame::SETTINGS, 0, 0, &[0, 3, 0]));
    c.extend(frame_bytes(
        frame::HEADERS,
        frame::FLAG_END_HEADERS,
        1,
        &[0xff, 0xff],
    ));
    c.extend(frame_bytes(frame::DATA, 0, 1, &vec![0; 20_000]));
    st.parse(Dir::ToServer, &c, &mut out);
    assert_eq!(
        out.anomalies,
        vec![
            "http2.invalid_frame_length",
            "http2.invalid_header",
            "http2.long_frame_data"
        ]
    );
}

#[test]
fn too_many_streams_is_bounded() {
    let mut st = Http2State::new(Http2Config {
        max_streams: 3,
        ..Http2Config::default()
    });
    let mut out = ParseOutput::default();
    let mut c = frame::PREFACE.to_vec();
    for sid in (1..20).step_by(2) {
        c.extend(frame_bytes(
            frame::HEADERS,
            frame::FLAG_END_HEADERS,
            sid,
            &[0x82],
        ));
    }
    st.parse(Dir::ToServer, &c, &mut out);
    assert_eq!(st.txs().len(), 3);
    assert!(out.anomalies.contains(&"http2.too_many_streams"));
}
