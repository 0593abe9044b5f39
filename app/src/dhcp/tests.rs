use super::*;
use crate::KeywordKind;

const MAC: [u8; 6] = [2, 0x11, 0x22, 0x33, 0x44, 0x55];

fn message(op: u8, yiaddr: [u8; 4], options: &[u8]) -> Vec<u8> {
    let mut m = vec![op, 1, 6, 0, 0, 0, 0x10, 0x01];
    m.extend_from_slice(&[0; 4]); // secs, flags
    m.extend_from_slice(&[0; 4]); // ciaddr
    m.extend_from_slice(&yiaddr);
    m.extend_from_slice(&[10, 1, 0, 1]); // siaddr
    m.extend_from_slice(&[0; 4]); // giaddr
    m.extend_from_slice(&MAC);
    m.resize(HEADER_LEN - 4, 0);
    m.extend_from_slice(&COOKIE);
    m.extend_from_slice(options);
    m
}

fn json(r: &Dhcp) -> String {
    let mut buf = Vec::new();
    let mut o = meerkat_eve::Obj::new(&mut buf);
    render(&AppRecord::Dhcp(r.clone()), &mut o);
    o.end();
    String::from_utf8(buf).unwrap()
}

fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
    let k = KEYWORDS.iter().find(|k| k.name == name).unwrap();
    let KeywordKind::Check { parse, eval } = k.kind else {
        panic!()
    };
    eval(&parse(Some(v)).unwrap(), dir, 0, tx)
}

const ACK_OPTS: &[u8] = &[
    53, 1, 5, // ack
    51, 4, 0, 1, 0x51, 0x80, // lease 86400
    58, 4, 0, 0, 0xa8, 0xc0, // renewal 43200
    1, 4, 255, 255, 255, 0, // mask
    6, 8, 10, 1, 0, 1, 8, 8, 8, 8, // dns servers
    12, 3, b'h', b'o', b's', // hostname
    61, 7, 1, 2, 0x11, 0x22, 0x33, 0x44, 0x55, // client id
    55, 3, 1, 119, 6, // parameters (119 is not logged)
    255, 0, 0, // end, padding
];

#[test]
fn an_ack_and_its_records() {
    let (mut r, truncated) = parse(&message(2, [10, 1, 0, 50], ACK_OPTS)).unwrap();
    assert!(!truncated);
    assert_eq!(r.dhcp_type, TYPE_ACK);
    assert!(wanted(&r));
    assert_eq!(
        json(&r),
        r#"{"dhcp":{"type":"reply","id":4097,"client_mac":"02:11:22:33:44:55","assigned_ip":"10.1.0.50","dhcp_type":"ack","renewal_time":43200,"hostname":"hos","client_id":"02:11:22:33:44:55"}}"#
    );
    r.extended = true;
    assert_eq!(
        json(&r),
        r#"{"dhcp":{"type":"reply","id":4097,"client_mac":"02:11:22:33:44:55","assigned_ip":"10.1.0.50","client_ip":"0.0.0.0","relay_ip":"0.0.0.0","next_server_ip":"10.1.0.1","dhcp_type":"ack","lease_time":86400,"renewal_time":43200,"subnet_mask":"255.255.255.0","dns_servers":["10.1.0.1","8.8.8.8"],"hostname":"hos","client_id":"02:11:22:33:44:55","params":["subnet_mask","dns_server"]}}"#
    );
}

#[test]
fn transactions_keywords_and_logging() {
    let mut s = DhcpState::default();
    let mut out = ParseOutput::default();
    s.parse(
        Dir::ToServer,
        &message(1, [0; 4], &[53, 1, 1, 255]),
        &mut out,
    );
    s.parse(
        Dir::ToClient,
        &message(2, [10, 1, 0, 50], ACK_OPTS),
        &mut out,
    );
    s.parse(Dir::ToClient, &[0; 100], &mut out);
    assert!(out.anomalies.is_empty());
    assert_eq!(s.tx_count(), 2);
    let (d, a) = (s.tx(0).unwrap(), s.tx(1).unwrap());
    assert!(d.inspects(Dir::ToServer) && !d.inspects(Dir::ToClient));
    assert!(d.record().is_none(), "alerts carry no dhcp object");
    let Some(AppRecord::Dhcp(rd)) = d.event_record(Dir::ToClient) else {
        panic!()
    };
    assert!(!wanted(&rd), "a DISCOVER is logged only when extended");
    assert_eq!(
        eval("dhcp.leasetime", "86400", Dir::ToClient, a),
        Some(true)
    );
    assert_eq!(
        eval("dhcp.leasetime", "86400", Dir::ToServer, a),
        Some(false)
    );
    assert_eq!(
        eval("dhcp.renewal_time", "<50000", Dir::ToClient, a),
        Some(true)
    );
    assert_eq!(
        eval("dhcp.rebinding_time", ">0", Dir::ToClient, a),
        Some(false)
    );
    assert_eq!(eval("dhcp.leasetime", ">0", Dir::ToServer, d), Some(false));
}

#[test]
fn options_cut_short_are_truncated() {
    // No END option.
    assert!(parse(&message(1, [0; 4], &[53, 1, 1])).unwrap().1);
    // An option longer than the data.
    assert!(
        parse(&message(1, [0; 4], &[53, 1, 1, 12, 32, b'h']))
            .unwrap()
            .1
    );
    // A time option reads four bytes whatever its length says.
    let (r, t) = parse(&message(1, [0; 4], &[51, 2, 0, 0, 0, 7, 255])).unwrap();
    assert!(!t);
    assert_eq!(r.options[0].data, [0, 0, 0, 7]);
    assert!(parse(&message(1, [0; 4], &[51, 2, 0, 1, 255])).unwrap().1);
    // A client id needs its type byte and a value.
    assert!(parse(&message(1, [0; 4], &[61, 1, 1, 255])).unwrap().1);
    let mut s = DhcpState::default();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, &message(1, [0; 4], &[53, 1, 1]), &mut out);
    assert_eq!(out.anomalies, ["dhcp.truncated_options"]);
    assert_eq!(s.tx_count(), 1);
    // Too short for the header: no transaction.
    assert!(parse(&message(1, [0; 4], &[])[..200]).is_none());
}

#[test]
fn probe_needs_the_header_and_cookie() {
    let m = message(1, [0; 4], &[53, 1, 1, 255]);
    assert_eq!(probe(&m), Probe::Match);
    assert_eq!(probe(&m[..239]), Probe::NoMatch);
    let mut bad = m.clone();
    bad[236] = 0;
    assert_eq!(probe(&bad), Probe::NoMatch);
}

#[test]
fn every_raised_event_is_listed() {
    // The keywords' names are in the same file: left out.
    let mut src = include_str!("mod.rs").to_string();
    for kw in ["leasetime", "renewal_time", "rebinding_time"] {
        src = src.replace(&format!("\"dhcp.{kw}\""), "");
    }
    let n = crate::events::raised_names_are_listed(EVENTS, &src, "dhcp");
    assert!(n > 0);
}

#[test]
fn options_are_bounded() {
    let mut opts = Vec::new();
    for _ in 0..1000 {
        opts.extend_from_slice(&[12, 1, b'x']);
    }
    opts.push(255);
    let (r, t) = parse(&message(1, [0; 4], &opts)).unwrap();
    assert!(!t);
    assert_eq!(r.options.len(), MAX_OPTIONS);
}
