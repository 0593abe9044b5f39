//! The records of whole exchanges, the probes, the keyword buffer.

use super::*;
use crate::ParseOutput;
use crate::pgsql::state::Progress;

fn msg(t: u8, body: &[u8]) -> Vec<u8> {
    let mut v = vec![t];
    v.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
    v.extend_from_slice(body);
    v
}

fn render(tx: &dyn Transaction, passwords: bool) -> String {
    let Some(AppRecord::Pgsql(mut r)) = tx.record() else {
        panic!("no record")
    };
    logger::shape(&mut r, passwords);
    let mut buf = Vec::new();
    let mut o = meerkat_eve::Obj::new(&mut buf);
    eve::render(&AppRecord::Pgsql(r), &mut o);
    o.end();
    String::from_utf8(buf).unwrap()
}

#[test]
fn every_raised_event_is_listed() {
    let n = crate::events::raised_names_are_listed(EVENTS, include_str!("state.rs"), "pgsql");
    assert!(n > 0);
}

#[test]
fn probes() {
    let ssl = [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f];
    assert_eq!(probe(Dir::ToServer, &ssl), Probe::Match);
    assert_eq!(probe(Dir::ToServer, &ssl[..5]), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, b"GET / HTTP/1.1\r\n"), Probe::NeedMore);
    assert_eq!(
        probe(Dir::ToServer, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
        Probe::NoMatch
    );
    // A startup message cut past Suricata's probing depth.
    let start = b"\0\0\0\x26\0\x03\0\0user\0oryx\0database\0mailstore\0\0";
    assert_eq!(probe(Dir::ToServer, &start[..12]), Probe::NeedMore);
    assert_eq!(probe(Dir::ToServer, &start[..20]), Probe::NoMatch);
    assert_eq!(probe(Dir::ToServer, start), Probe::Match);
    assert_eq!(probe(Dir::ToClient, b"N"), Probe::Match);
    assert_eq!(
        probe(Dir::ToClient, &msg(b'R', &[0, 0, 0, 3])),
        Probe::Match
    );
    assert_eq!(
        probe(Dir::ToClient, &msg(b'R', &[0, 0, 0, 7])),
        Probe::NoMatch
    );
    assert_eq!(probe(Dir::ToClient, b""), Probe::NeedMore);
}

#[test]
fn records_as_suricata_writes_them() {
    let mut s = PgsqlState::default();
    let mut out = ParseOutput::default();
    let (ts, tc) = (Dir::ToServer, Dir::ToClient);
    s.parse(
        ts,
        b"\0\0\0\x38\0\x03\0\0user\0alice\0database\0shop\0application_name\0psql\0\0",
        &mut out,
    );
    s.parse(
        tc,
        &msg(b'R', &[0, 0, 0, 5, 0xf2, 0x11, 0xa3, 0xed]),
        &mut out,
    );
    s.parse(ts, &msg(b'p', b"md5abc\0"), &mut out);
    let mut login = msg(b'R', &[0, 0, 0, 0]);
    login.extend(msg(b'S', b"TimeZone\0UTC\0"));
    login.extend(msg(b'S', b"x\"y\0v\0"));
    login.extend(msg(b'K', &[0, 0, 0x10, 0x92, 0x11, 0x22, 0x33, 0x44]));
    login.extend(msg(b'Z', b"I"));
    s.parse(tc, &login, &mut out);
    s.parse(ts, &msg(b'Q', b"SELECT 1;\0"), &mut out);
    let mut e = msg(b'E', b"SERROR\0VERROR\0C42P01\0Mno\0\0");
    e.extend(msg(b'Z', b"I"));
    s.parse(tc, &e, &mut out);
    assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
    let txs: Vec<&dyn Transaction> = (0..s.tx_count()).filter_map(|i| s.tx(i)).collect();
    assert_eq!(txs.len(), 3);
    assert_eq!(
        render(txs[0], false),
        concat!(
            r#"{"pgsql":{"tx_id":1,"request":{"protocol_version":"3.0","startup_parameters":"#,
            r#"{"user":"alice","optional_parameters":[{"database":"shop"},{"application_name":"psql"}]}},"#,
            r#""response":{"authentication_md5_password":"\\xf2\u0011\\xa3\\xed"}}}"#
        )
    );
    assert_eq!(
        render(txs[1], false),
        concat!(
            r#"{"pgsql":{"tx_id":2,"request":{"password_redacted":true},"#,
            r#""response":{"message":"authentication_ok","parameter_status":[{"time_zone":"UTC"},{"x\"y":"v"}],"#,
            r#""process_id":4242,"secret_key":287454020}}}"#
        )
    );
    assert!(render(txs[1], true).contains(r#""request":{"password":"md5abc"}"#));
    assert_eq!(
        render(txs[2], false),
        concat!(
            r#"{"pgsql":{"tx_id":3,"request":{"simple_query":"SELECT 1;"},"#,
            r#""response":{"severity_localizable":"ERROR","severity_non_localizable":"ERROR","#,
            r#""code":"42P01","message":"no"}}}"#
        )
    );
    assert_eq!(txs[2].buffer(detect::QUERY, 0), Buf::Ready(b"SELECT 1;"));
    assert_eq!(txs[0].buffer(detect::QUERY, 0), Buf::Absent);
}

#[test]
fn copy_in_and_out() {
    let mut s = PgsqlState::default();
    let mut out = ParseOutput::default();
    let (ts, tc) = (Dir::ToServer, Dir::ToClient);
    s.parse(ts, &msg(b'Q', b"COPY t FROM STDIN\0"), &mut out);
    s.parse(tc, &msg(b'G', b"\0\0\x01\0\0"), &mut out);
    let mut d = msg(b'd', b"abc\n");
    d.extend(msg(b'd', b"de\n"));
    d.extend(msg(b'c', b""));
    s.parse(ts, &d, &mut out);
    let mut c = msg(b'C', b"COPY 2\0");
    c.extend(msg(b'Z', b"I"));
    s.parse(tc, &c, &mut out);
    let txs: Vec<&dyn Transaction> = (0..s.tx_count()).filter_map(|i| s.tx(i)).collect();
    assert_eq!(
        render(txs[0], false),
        r#"{"pgsql":{"tx_id":1,"request":{"simple_query":"COPY t FROM STDIN"},"response":{"copy_in_response":{"columns":1}}}}"#
    );
    assert_eq!(
        render(txs[1], false),
        concat!(
            r#"{"pgsql":{"tx_id":2,"request":{"copy_data_in":{"msg_count":2,"data_size":7},"message":"copy_done"},"#,
            r#""response":{"data_rows":2,"data_size":7,"command_completed":"COPY 2"}}}"#
        )
    );
    let PgsqlTx { req, res, .. } = s.transactions().nth(1).unwrap();
    assert_eq!((*req, *res), (Progress::Done, Progress::Done));
}
