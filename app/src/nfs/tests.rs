//! NFS end to end through the state: records as the reference writes them.

use super::*;
use crate::{AppState, ParseOutput, Probe};

fn u32b(v: u32) -> Vec<u8> {
    v.to_be_bytes().to_vec()
}

fn opaque(b: &[u8]) -> Vec<u8> {
    let mut v = u32b(b.len() as u32);
    v.extend_from_slice(b);
    v.resize(v.len() + rpc::pad(b.len()), 0);
    v
}

/// An NFS call: AUTH_UNIX "client1" uid 1000 gid 100, AUTH_NULL verifier.
fn call(xid: u32, vers: u32, proc_: u32, args: &[u8]) -> Vec<u8> {
    let mut creds = u32b(0x5f00_0001);
    creds.extend(opaque(b"client1"));
    for x in [1000, 100, 1, 100] {
        creds.extend(u32b(x));
    }
    let mut v = Vec::new();
    for x in [xid, 0, 2, 100003, vers, proc_, 1] {
        v.extend(u32b(x));
    }
    v.extend(opaque(&creds));
    v.extend([0; 8]);
    v.extend_from_slice(args);
    v
}

fn reply(xid: u32, res: &[u8]) -> Vec<u8> {
    let mut v = Vec::new();
    for x in [xid, 1, 0, 0, 0, 0] {
        v.extend(u32b(x));
    }
    v.extend_from_slice(res);
    v
}

fn rm(b: &[u8]) -> Vec<u8> {
    let mut v = u32b(0x8000_0000 | b.len() as u32);
    v.extend_from_slice(b);
    v
}

const DIR: &[u8] = &[1, 0, 6, 1, 0xa1, 0xb2, 0xc3, 0xd4];
const FH: &[u8] = &[1, 0, 6, 1, 0xa1, 0xb2, 0xc3, 0x10];

fn dirop(h: &[u8], n: &[u8]) -> Vec<u8> {
    let mut v = opaque(h);
    v.extend(opaque(n));
    v
}

fn render(tx: &dyn crate::Transaction) -> String {
    let mut buf = Vec::new();
    let mut o = meerkat_eve::Obj::new(&mut buf);
    eve::render(&tx.record().unwrap(), &mut o);
    o.end();
    String::from_utf8(buf).unwrap()
}

fn files_on() -> crate::files::FileConfig {
    crate::files::FileConfig {
        track: true,
        ..Default::default()
    }
}

#[test]
fn every_raised_event_is_listed() {
    let n = crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "nfs");
    assert!(n > 0);
}

#[test]
fn probes() {
    let q = rm(&call(1, 3, 3, &dirop(DIR, b"a")));
    assert_eq!(
        state::probe(Transport::Tcp, Dir::ToServer, &q),
        Probe::Match
    );
    assert_eq!(
        state::probe(Transport::Tcp, Dir::ToServer, &q[..20]),
        Probe::NeedMore
    );
    assert_eq!(
        state::probe(Transport::Tcp, Dir::ToServer, b"GET / HTTP/1.1\r\n\r\n"),
        Probe::NoMatch
    );
    // NFSv2 is not probed over TCP; it is over UDP.
    let q2 = call(1, 2, 4, &[0; 40]);
    assert_eq!(
        state::probe(Transport::Tcp, Dir::ToServer, &rm(&q2)),
        Probe::NoMatch
    );
    assert_eq!(
        state::probe(Transport::Udp, Dir::ToServer, &q2),
        Probe::Match
    );
    let r = rm(&reply(1, &[0; 8]));
    assert_eq!(
        state::probe(Transport::Tcp, Dir::ToClient, &r),
        Probe::Match
    );
    assert_eq!(
        state::probe(Transport::Udp, Dir::ToClient, &r[4..]),
        Probe::Match
    );
    assert!(is_reply(Transport::Tcp, &r));
    assert!(!is_reply(Transport::Tcp, &q));
}

/// LOOKUP, then a WRITE of the file (FILE_SYNC) and a READ of it, over TCP in small
/// pieces: the name goes from the LOOKUP reply to the file transactions.
#[test]
fn a_v3_lookup_write_and_read() {
    let mut s = NfsState::new(NfsConfig::default(), Transport::Tcp);
    s.set_files(files_on());
    let mut out = ParseOutput::default();
    let feed = |s: &mut NfsState, d: Dir, b: &[u8], out: &mut ParseOutput| {
        for c in b.chunks(7) {
            s.parse(d, c, out);
        }
    };
    feed(
        &mut s,
        Dir::ToServer,
        &rm(&call(0x101, 3, 3, &dirop(DIR, b"file.txt"))),
        &mut out,
    );
    let mut res = u32b(0);
    res.extend(opaque(FH));
    res.extend(u32b(0));
    res.extend(u32b(0));
    feed(&mut s, Dir::ToClient, &rm(&reply(0x101, &res)), &mut out);
    let tx = s.tx(0).unwrap();
    assert!(tx.complete(Dir::ToServer) && tx.complete(Dir::ToClient));
    let hh = format!("{:x}", eve::crc32(FH));
    assert_eq!(
        render(tx),
        format!(
            concat!(
                r#"{{"rpc":{{"xid":257,"status":"ACCEPTED","auth_type":"UNIX","creds":{{"machine_name":"client1","uid":3,"gid":3892314112}}}},"#,
                r#""nfs":{{"version":3,"procedure":"LOOKUP","filename":"file.txt","hhash":"{}","id":1,"file_tx":false,"type":"response","status":"OK"}}}}"#
            ),
            hh
        )
    );
    let mut w = opaque(FH);
    w.extend(0u64.to_be_bytes());
    w.extend(u32b(5));
    w.extend(u32b(2));
    w.extend(opaque(b"hello"));
    feed(&mut s, Dir::ToServer, &rm(&call(0x102, 3, 7, &w)), &mut out);
    let mut r = opaque(FH);
    r.extend(0u64.to_be_bytes());
    r.extend(u32b(4096));
    feed(&mut s, Dir::ToServer, &rm(&call(0x103, 3, 6, &r)), &mut out);
    let mut rr = u32b(0);
    rr.extend(u32b(0));
    rr.extend(u32b(5));
    rr.extend(u32b(1));
    rr.extend(opaque(b"hello"));
    feed(&mut s, Dir::ToClient, &rm(&reply(0x103, &rr)), &mut out);
    assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    assert_eq!(s.tx_count(), 3);
    let w = s.tx(1).unwrap();
    assert_eq!(w.files(Dir::ToServer).len(), 1);
    let f = &w.files(Dir::ToServer)[0];
    assert_eq!(
        (f.name(), f.size(), f.state()),
        (&b"file.txt"[..], 5, crate::files::FileState::Closed)
    );
    assert!(render(w).contains(r#""auth_type":"NULL"}"#));
    assert!(render(w).contains(r#""write":{"first":true,"last":true,"last_xid":258,"chunks":0}"#));
    let rd = s.tx(2).unwrap();
    assert!(rd.complete(Dir::ToClient));
    assert_eq!(rd.files(Dir::ToClient)[0].size(), 5);
    assert!(render(rd).contains(r#""read":{"first":true,"last":true,"last_xid":259,"chunks":1}"#));
    // GETATTR is not logged.
    feed(
        &mut s,
        Dir::ToServer,
        &rm(&call(0x104, 3, 1, &opaque(FH))),
        &mut out,
    );
    assert!(s.tx(3).unwrap().event_record(Dir::ToClient).is_none());
}

/// A large WRITE whose data comes in pieces: taken as it comes, one chunk per piece.
#[test]
fn a_large_write_streams() {
    let mut s = NfsState::new(NfsConfig::default(), Transport::Tcp);
    s.set_files(files_on());
    let mut out = ParseOutput::default();
    let data = vec![0x41; 3000];
    let mut w = opaque(FH);
    w.extend(0u64.to_be_bytes());
    w.extend(u32b(3000));
    w.extend(u32b(0));
    w.extend(opaque(&data));
    let rec = rm(&call(7, 3, 7, &w));
    for c in rec.chunks(1000) {
        s.parse(Dir::ToServer, c, &mut out);
    }
    assert!(out.anomalies.is_empty());
    // UNSTABLE: its COMMIT ends the file.
    let mut commit = opaque(FH);
    commit.extend([0; 12]);
    s.parse(Dir::ToServer, &rm(&call(9, 3, 21, &commit)), &mut out);
    let t = s.tx(0).unwrap();
    let f = &t.files(Dir::ToServer)[0];
    assert_eq!(
        (f.size(), f.state()),
        (3000, crate::files::FileState::Closed)
    );
    // The next record is parsed.
    s.parse(
        Dir::ToServer,
        &rm(&call(8, 3, 3, &dirop(DIR, b"x"))),
        &mut out,
    );
    assert_eq!(s.tx_count(), 2);
}

/// A FILE_SYNC WRITE over several segments, as Suricata takes it: its transaction
/// takes no chunk past the first, so the rest of the record is read as records (and
/// the flow is given up); its file is cut short.
#[test]
fn a_file_sync_write_over_segments_is_cut_short() {
    let mut s = NfsState::new(NfsConfig::default(), Transport::Tcp);
    s.set_files(files_on());
    let mut out = ParseOutput::default();
    let mut w = opaque(FH);
    w.extend(0u64.to_be_bytes());
    w.extend(u32b(3000));
    w.extend(u32b(2));
    w.extend(opaque(&[0x41; 3000]));
    let rec = rm(&call(7, 3, 7, &w));
    for c in rec.chunks(1000) {
        s.parse(Dir::ToServer, c, &mut out);
    }
    assert_eq!(out.anomalies, ["nfs.malformed_data"]);
    let f = &s.tx(0).unwrap().files(Dir::ToServer)[0];
    assert_eq!(f.state(), crate::files::FileState::Truncated);
    assert!(f.size() < 1000);
}

/// A record header with a length below an RPC header's: the flow is given up.
#[test]
fn a_bad_record_fails_the_flow() {
    let mut s = NfsState::new(NfsConfig::default(), Transport::Tcp);
    let mut out = ParseOutput::default();
    s.parse(
        Dir::ToServer,
        &rm(&call(1, 3, 3, &dirop(DIR, b"a"))),
        &mut out,
    );
    s.parse(
        Dir::ToServer,
        &[0, 0, 0, 8, 1, 2, 3, 4, 0, 0, 0, 0],
        &mut out,
    );
    assert!(out.error);
    assert_eq!(out.anomalies, ["nfs.malformed_data"]);
    assert!(s.tx(0).unwrap().complete(Dir::ToClient));
}

#[test]
fn max_tx_finishes_the_oldest() {
    let mut s = NfsState::new(NfsConfig { max_tx: 2 }, Transport::Udp);
    let mut out = ParseOutput::default();
    for x in 0..4 {
        s.parse(Dir::ToServer, &call(x, 3, 3, &dirop(DIR, b"a")), &mut out);
    }
    assert_eq!(out.anomalies, ["nfs.too_many_transactions"]);
    assert!(s.tx(0).unwrap().complete(Dir::ToClient));
}

/// The frame holders' frames of kind `k` (id, stream offset, length, bytes).
fn frames_of(s: &NfsState, k: detect::FrameKind, dir: crate::Dir) -> Vec<(u64, Option<u64>, u64)> {
    let id = if dir == crate::Dir::ToServer {
        detect::FRAMES[k as usize].to_server
    } else {
        detect::FRAMES[k as usize].to_client
    }
    .unwrap();
    s.frame_holders()
        .filter_map(|h| crate::Transaction::frame(h, id, 0))
        .map(|m| (m.id, m.stream_offset, m.length.unwrap_or(0)))
        .collect()
}

#[test]
fn frames_of_two_calls_in_one_segment_and_a_cut_one() {
    use crate::Dir::{ToClient, ToServer};
    use detect::FrameKind::{NfsPdu, NfsStatus, RpcCreds, RpcData, RpcPdu};
    let mut s = NfsState::new(NfsConfig::default(), crate::Transport::Tcp);
    let all: Vec<crate::BufferId> = detect::FRAMES
        .iter()
        .flat_map(|f| [f.to_server, f.to_client])
        .flatten()
        .collect();
    s.set_frames(&all);
    let mut out = ParseOutput::default();
    let a = rm(&call(1, 3, 3, &dirop(DIR, b"a")));
    let mut seg = a.clone();
    seg.extend(rm(&call(2, 3, 3, &dirop(DIR, b"b"))));
    s.parse(ToServer, &seg, &mut out);
    // rpc.pdu runs to the end of the data at hand; creds 28 bytes in.
    let n = seg.len() as u64;
    let a_len = a.len() as u64;
    let pdus: Vec<u64> = s.frame_holders().map(|h| h.base.unwrap()).collect();
    assert_eq!(pdus, [0, a_len]);
    let ids: Vec<u64> = s
        .frame_holders()
        .filter_map(|h| h.frame(RpcPdu as usize).map(|f| f.id))
        .collect();
    assert_eq!(ids, [1, 4]);
    let b0 = s.frame_holders().next().unwrap();
    assert_eq!(b0.bytes_of(RpcPdu as usize).unwrap().len() as u64, n);
    assert_eq!(
        b0.frame(RpcCreds as usize).map(|f| (f.start, f.len)),
        Some((28, 40))
    );
    assert_eq!(
        b0.frame(NfsPdu as usize).map(|f| f.start + f.len),
        Some(a_len)
    );
    // A reply: header, data, NFS status; the call's holders go.
    let r = rm(&reply(1, &[0, 0, 0, 2]));
    s.parse(ToClient, &r[..10], &mut out);
    assert!(frames_of(&s, RpcPdu, ToClient).is_empty());
    s.parse(ToClient, &r[10..], &mut out);
    // The first try at the cut record burnt id 1.
    assert_eq!(frames_of(&s, RpcPdu, ToClient), [(2, Some(0), 0)]);
    assert_eq!(frames_of(&s, RpcData, ToClient), [(4, Some(12), 0)]);
    assert_eq!(frames_of(&s, NfsStatus, ToClient), [(6, Some(28), 0)]);
    s.parse(ToServer, &rm(&call(3, 3, 1, &opaque(FH))), &mut out);
    assert_eq!(frames_of(&s, RpcPdu, ToServer), [(7, Some(n), 0)]);
    // Holders are frames-only transactions with ids past any real one.
    let h = s.frame_holders().next().unwrap();
    assert!(crate::Transaction::frames_only(h));
    assert!(crate::Transaction::id(h) >= state::FRAME_TX_BASE);
}

#[test]
fn no_frames_without_rules_on_them() {
    let mut s = NfsState::new(NfsConfig::default(), crate::Transport::Udp);
    let mut out = ParseOutput::default();
    s.parse(
        crate::Dir::ToServer,
        &call(1, 3, 3, &dirop(DIR, b"a")),
        &mut out,
    );
    assert_eq!(s.frame_holders().count(), 0);
    // Over UDP, frames have no stream offset.
    s.set_frames(&[detect::FRAMES[0].to_server.unwrap()]);
    s.parse(
        crate::Dir::ToServer,
        &call(2, 3, 3, &dirop(DIR, b"a")),
        &mut out,
    );
    let h = s.frame_holders().next().unwrap();
    assert_eq!(h.base, None);
    assert!(h.frame(detect::FrameKind::RpcCreds as usize).is_none());
}
