use super::*;
use crate::AppState;

/// A frame: FIN/RSV bits and opcode in `b0`, the payload masked with `mask` if any.
fn frame(b0: u8, payload: &[u8], mask: Option<u32>) -> Vec<u8> {
    let m = if mask.is_some() { 0x80 } else { 0 };
    let mut f = vec![b0];
    match payload.len() {
        n if n < 126 => f.push(m | n as u8),
        n if n < 65536 => {
            f.push(m | 126);
            f.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            f.push(m | 127);
            f.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let mut p = payload.to_vec();
    if let Some(k) = mask {
        f.extend_from_slice(&k.to_be_bytes());
        parser::unmask(&mut p, k, 0);
    }
    f.extend_from_slice(&p);
    f
}

fn feed(s: &mut WsState, dir: Dir, data: &[u8]) -> Vec<&'static str> {
    let mut out = ParseOutput::default();
    s.parse(dir, data, &mut out);
    out.anomalies
}

fn payloads(s: &WsState) -> Vec<(u8, Vec<u8>)> {
    s.transactions()
        .map(|t| (t.opcode, t.payload.clone()))
        .collect()
}

#[test]
fn frames_of_every_kind_byte_by_byte() {
    let mut wire = Vec::new();
    wire.extend(frame(0x81, b"Hello", Some(0x37fa213d)));
    wire.extend(frame(0x01, b"first ", Some(1)));
    wire.extend(frame(0x89, b"ping", Some(2)));
    wire.extend(frame(0x80, b"second", Some(3)));
    wire.extend(frame(0x82, &[7u8; 300], Some(4)));
    wire.extend(frame(0x88, b"", Some(5)));
    let mut s = WsState::default();
    for b in &wire {
        assert!(feed(&mut s, Dir::ToServer, std::slice::from_ref(b)).is_empty());
    }
    assert_eq!(
        payloads(&s),
        vec![
            (1, b"Hello".to_vec()),
            (1, b"first ".to_vec()),
            (9, b"ping".to_vec()),
            (0, b"first second".to_vec()),
            (2, vec![7u8; 300]),
            (8, vec![]),
        ]
    );
    let t: Vec<_> = s.transactions().collect();
    assert_eq!(t[0].mask, Some(0x37fa213d));
    assert!(!t[1].fin() && t[3].fin());
    assert!(t.iter().all(|t| t.dir == Dir::ToServer));
    assert_eq!(
        t.iter().map(|t| t.id).collect::<Vec<_>>(),
        [0, 1, 2, 3, 4, 5]
    );
}

#[test]
fn long_frames_are_cut_and_skipped() {
    let mut s = WsState::new(WsConfig { max_payload: 10 });
    let mut wire = frame(0x82, b"0123456789abcdef", None);
    wire.extend(frame(0x81, b"next", None));
    assert_eq!(
        feed(&mut s, Dir::ToClient, &wire),
        ["websocket.skip_end_of_payload"]
    );
    assert_eq!(
        payloads(&s),
        vec![(2, b"0123456789".to_vec()), (1, b"next".to_vec())]
    );
    // A fragmented message longer than the limit is cut at it.
    let mut wire = frame(0x01, b"01234567", None);
    wire.extend(frame(0x80, b"89abcdef", None));
    assert_eq!(
        feed(&mut s, Dir::ToClient, &wire),
        ["websocket.reassembly_limit_reached"]
    );
    assert_eq!(payloads(&s)[3], (0, b"0123456789".to_vec()));
}

#[test]
fn endless_frames_are_bounded() {
    // 2^63 - 1 bytes announced: 65535 are kept once they come, the rest skipped.
    let mut s = WsState::default();
    let mut wire = vec![0x82, 0x7f];
    wire.extend_from_slice(&((1u64 << 63) - 1).to_be_bytes());
    assert!(feed(&mut s, Dir::ToClient, &wire).is_empty());
    assert!(
        feed(&mut s, Dir::ToClient, &vec![0u8; 70_000]).contains(&"websocket.skip_end_of_payload")
    );
    assert_eq!(s.tx_count(), 1);
    assert_eq!(
        s.transactions().next().unwrap().payload.len(),
        state::DEFAULT_MAX_PAYLOAD
    );
    // Everything after is skipped (the frame goes on).
    assert!(feed(&mut s, Dir::ToClient, &frame(0x81, b"x", None)).is_empty());
    assert_eq!(s.tx_count(), 1);
}

#[test]
fn compressed_messages_are_inflated() {
    use flate2::{Compress, Compression, FlushCompress};
    let deflate = |data: &[u8]| {
        let mut c = Compress::new(Compression::default(), false);
        let mut out = Vec::with_capacity(data.len() + 64);
        c.compress_vec(data, &mut out, FlushCompress::Sync).unwrap();
        assert!(out.ends_with(&[0, 0, 0xff, 0xff]));
        out.truncate(out.len() - 4);
        out
    };
    let mut s = WsState::default();
    let z = deflate(b"compressed hello");
    feed(&mut s, Dir::ToClient, &frame(0xc1, &z, None));
    let z = deflate(b"fragmented and compressed");
    feed(&mut s, Dir::ToClient, &frame(0x41, &z[..4], None));
    feed(&mut s, Dir::ToClient, &frame(0x80, &z[4..], None));
    // Not deflate at all: kept as it came.
    feed(&mut s, Dir::ToClient, &frame(0xc1, &[0xff; 8], None));
    let p = payloads(&s);
    assert_eq!(p[0].1, b"compressed hello");
    assert_eq!(p[2].1, b"fragmented and compressed");
    assert_eq!(p[3].1, [0xff; 8]);
    // A bomb: 256 KiB of zeros inflates to the limit only.
    let mut s = WsState::new(WsConfig { max_payload: 1000 });
    let z = deflate(&vec![0u8; 256 << 10]);
    assert!(z.len() < 1000);
    assert_eq!(
        feed(&mut s, Dir::ToServer, &frame(0xc2, &z, None)),
        ["websocket.reassembly_limit_reached"]
    );
    assert_eq!(payloads(&s)[0].1.len(), 1000);
}

#[test]
fn records_render_as_suricatas() {
    let mut s = WsState::default();
    feed(&mut s, Dir::ToServer, &frame(0x81, b"a", Some(305419896)));
    feed(&mut s, Dir::ToClient, &frame(0x83, b"b", None));
    let texts: Vec<String> = s
        .transactions()
        .map(|t| {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            render(&t.record().unwrap(), &mut o);
            o.end();
            String::from_utf8(buf).unwrap()
        })
        .collect();
    assert_eq!(
        texts,
        [
            r#"{"websocket":{"fin":true,"mask":305419896,"opcode":"text"}}"#,
            r#"{"websocket":{"fin":true,"opcode":"unknown-3"}}"#
        ]
    );
}

#[test]
fn gaps_fail_the_parser() {
    let mut s = WsState::default();
    let mut out = ParseOutput::default();
    s.gap(Dir::ToServer, 10, &mut out);
    assert!(out.failed);
}

#[test]
fn raised_names_are_listed() {
    let src = include_str!("state.rs");
    assert_eq!(
        crate::events::raised_names_are_listed(EVENTS, src, "websocket"),
        3
    );
}

#[test]
fn compressed_messages_refer_back_to_earlier_ones() {
    // permessage-deflate with context takeover: the second message's bytes refer to
    // the first's (one raw deflate stream, sync-flushed after each message).
    use flate2::{Compress, Compression, FlushCompress};
    let mut c = Compress::new(Compression::default(), false);
    let mut msg = |data: &[u8]| {
        let mut out = Vec::with_capacity(data.len() + 64);
        c.compress_vec(data, &mut out, FlushCompress::Sync).unwrap();
        out.truncate(out.len() - 4);
        out
    };
    let a = msg(b"TOGGLE=0123456789abcdef");
    let b = msg(b"TOGGLE=0123456789abcdef");
    assert!(b.len() < 12, "the second refers back");
    let mut s = WsState::default();
    feed(&mut s, Dir::ToClient, &frame(0xc1, &a, None));
    feed(&mut s, Dir::ToClient, &frame(0xc1, &b, None));
    let p = payloads(&s);
    assert_eq!(p[1].1, b"TOGGLE=0123456789abcdef");
}
