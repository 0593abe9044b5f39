use super::parser::tests::{DONE, SEARCH, unhex};
use super::*;
use crate::ParseOutput;

#[test]
fn every_raised_event_is_listed() {
    let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "ldap");
    assert_eq!(n, 4);
}

#[test]
fn probes() {
    assert_eq!(probe(&unhex(SEARCH)), Probe::Match);
    assert_eq!(probe(&unhex(SEARCH)[..20]), Probe::NeedMore);
    assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
    assert!(is_reply(&unhex(DONE)));
    assert!(!is_reply(&unhex(SEARCH)));
    let r = crate::Registry::default();
    assert_eq!(
        r.probe(Transport::Tcp, Dir::ToServer, [40000, 389], &unhex(SEARCH)),
        crate::Detected::Proto(AppProto::Ldap)
    );
    assert_ne!(
        r.probe(Transport::Tcp, Dir::ToServer, [40000, 1389], &unhex(SEARCH)),
        crate::Detected::Proto(AppProto::Ldap)
    );
}

#[test]
fn a_search_across_segments() {
    let mut s = default_state(false);
    let mut out = ParseOutput::default();
    let q = unhex(SEARCH);
    for c in q.chunks(7) {
        s.parse(Dir::ToServer, c, &mut out);
    }
    assert_eq!(s.tx_count(), 1);
    let tx = s.tx(0).unwrap();
    assert_eq!(
        tx.buffer(detect::REQUEST_DN, 0),
        Buf::Ready(b"dc=example,dc=com")
    );
    assert_eq!(
        tx.buffer(detect::REQUEST_ATTRIBUTE_TYPE, 1),
        Buf::Ready(b"+")
    );
    assert_eq!(tx.buffer(detect::RESPONSES_DN, 0), Buf::NotYet);
    assert!(!tx.complete(Dir::ToClient));
    s.parse(Dir::ToClient, &unhex(DONE), &mut out);
    let tx = s.tx(0).unwrap();
    assert!(tx.complete(Dir::ToClient));
    assert_eq!(tx.buffer(detect::RESPONSES_DN, 0), Buf::Ready(b""));
    assert!(out.anomalies.is_empty());
    // A response to no request.
    let mut orphan = unhex(DONE);
    orphan[4] = 9;
    s.parse(Dir::ToClient, &orphan, &mut out);
    assert_eq!(out.anomalies, ["ldap.request_not_found"]);
    assert_eq!(s.tx_count(), 2);
    // A whole message whose operation runs past it: the direction waits for ever,
    // as Suricata's parser does, and the flow is not failed.
    let mut stuck = default_state(false);
    let mut o = ParseOutput::default();
    stuck.parse(Dir::ToClient, b"\x30\x03\xde\xad\xbe", &mut o);
    stuck.parse(Dir::ToClient, &unhex(DONE), &mut o);
    assert!(!o.failed && stuck.tx_count() == 0, "{o:?}");
    // Garbage from the server (a message id that is no INTEGER).
    s.parse(Dir::ToClient, b"\x30\x03\x04\x01\x41", &mut out);
    assert!(out.failed);
    assert_eq!(out.anomalies.last(), Some(&"ldap.invalid_data"));
}

#[test]
fn frames_of_messages() {
    use frames::{FRAME_PDU_TC, FRAME_PDU_TS};
    let stream = crate::stream_frame::ids(crate::AppProto::Ldap)[0];
    let mut s = default_state(false);
    s.set_frames(&[FRAME_PDU_TS, FRAME_PDU_TC, stream]);
    let mut out = ParseOutput::default();
    let (q, done) = (unhex(SEARCH), unhex(DONE));
    // The request across segments: its frame is made with its first byte (after the
    // stream frame, id 1).
    for c in q.chunks(7) {
        s.parse(Dir::ToServer, c, &mut out);
    }
    s.parse(Dir::ToClient, &done, &mut out);
    // A message the direction ends inside.
    s.parse(Dir::ToServer, &q[..5], &mut out);
    s.eof(Dir::ToServer, &mut out);
    assert!(!out.failed);
    let tx = s.tx(0).unwrap();
    assert_eq!(tx.buffer(FRAME_PDU_TS, 0), Buf::Ready(&q[..]));
    let m = tx.frame(FRAME_PDU_TS, 0).unwrap();
    assert_eq!((m.id, m.stream_offset, m.tx_id), (2, Some(0), Some(1)));
    // The stream type is on for both directions: id 1 is the response stream's.
    let m = tx.frame(FRAME_PDU_TC, 0).unwrap();
    assert_eq!((m.id, m.stream_offset, m.tx_id), (2, Some(0), Some(1)));
    assert_eq!(tx.buffer(FRAME_PDU_TC, 1), Buf::Absent);
    // Then the frame of no transaction: the message cut short.
    assert_eq!(s.tx_count(), 2);
    let cut = s.tx(1).unwrap();
    assert!(cut.frames_only());
    assert_eq!(cut.buffer(FRAME_PDU_TS, 0), Buf::Ready(&q[..5]));
    let m = cut.frame(FRAME_PDU_TS, 0).unwrap();
    assert_eq!(
        (m.id, m.stream_offset, m.complete, m.tx_id),
        (3, Some(q.len() as u64), false, None)
    );

    // CLDAP: a request's frame is its datagram, attached to none.
    let mut s = default_state(true);
    s.set_frames(&[FRAME_PDU_TS]);
    s.parse(Dir::ToServer, &q, &mut out);
    let m = s.tx(0).unwrap().frame(FRAME_PDU_TS, 0).unwrap();
    assert_eq!((m.id, m.stream_offset, m.tx_id), (1, None, None));

    // No rule on the frames: nothing kept.
    let mut s = default_state(false);
    s.parse(Dir::ToServer, &q, &mut out);
    assert!(s.txs[0].frames[0].is_empty());
    assert_eq!(s.tx(0).unwrap().frame(FRAME_PDU_TS, 0), None);
}
