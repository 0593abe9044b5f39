use super::*;
use meerkat_proto::events::EventType;
use meerkat_synth::{sample, session};

fn run(config: &Config, rules: &str, frames: &[meerkat_synth::Frame]) -> InProcessResult {
    let ctx = RuleContext::from_config(config).unwrap();
    let loaded = rules::load_str(rules, &ctx);
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let engine = Engine::new(loaded.rules, loaded.names);
    InProcess::run_frames(
        config,
        engine,
        frames.iter().map(|f| (f.ts_ns, &f.data[..])),
    )
}

/// An alert as the tests compare it: (sid, tx_id, app_proto).
type Alert = (u64, Option<u64>, String);

/// The alerts of `rules` over `frames`, sorted.
fn alerts(config: &Config, rules: &str, frames: &[meerkat_synth::Frame]) -> Vec<Alert> {
    let mut got: Vec<Alert> = run(config, rules, frames)
        .events
        .iter()
        .filter_map(|e| {
            let a = e.alert.as_ref()?;
            Some((a.signature_id, e.tx_id, e.app_proto.clone()))
        })
        .collect();
    got.sort();
    got
}

/// Expected alerts, written with `&str` app protocols.
fn want(alerts: &[(u64, Option<u64>, &str)]) -> Vec<Alert> {
    alerts
        .iter()
        .map(|&(sid, tx, app)| (sid, tx, app.to_string()))
        .collect()
}

/// A client at 10.0.0.1:40000 and a server at 10.0.0.2:`port`.
fn endpoints(port: u16) -> (std::net::SocketAddr, std::net::SocketAddr) {
    (
        "10.0.0.1:40000".parse().unwrap(),
        std::net::SocketAddr::from(([10, 0, 0, 2], port)),
    )
}

/// A TCP session of `endpoints(port)` at time 1 µs, its handshake done.
fn handshaken(port: u16) -> session::TcpSession {
    let (c, s) = endpoints(port);
    let mut t = session::TcpSession::new(c, s, 1_000);
    t.handshake();
    t
}

#[test]
fn flow_records_carry_addresses_once_and_alerts_carry_the_flows() {
    let config = Config::default();
    let (c, s) = endpoints(53);
    let q = sample::dns_query(7, "x.example", 1);
    let a = sample::dns_response_a(7, "x.example", [192, 0, 2, 1]);
    let frames = session::udp_exchange(c, s, 1_000, 1_000, &q, Some(&a), None);
    // Matches the response, whose packet goes server -> client.
    let rules = "alert udp any 53 -> any any (content:\"example\"; sid:1;)";
    let r = run(&config, rules, &frames);
    let alert = r.events.iter().find(|e| e.alert.is_some()).unwrap();
    assert_eq!(alert.src_ip, [10, 0, 0, 2]);
    let fc = alert.alert.as_ref().unwrap().flow.as_ref().unwrap();
    assert_eq!(
        (fc.src_ip.as_slice(), fc.src_port),
        (&[10, 0, 0, 1][..], 40000)
    );
    assert_eq!(
        (fc.dest_ip.as_slice(), fc.dest_port),
        (&[10, 0, 0, 2][..], 53)
    );
    let flow = r.events.iter().find(|e| e.flow.is_some()).unwrap();
    assert_eq!(
        (flow.src_ip.as_slice(), flow.src_port),
        (&[10, 0, 0, 1][..], 40000)
    );
    assert_eq!(
        (flow.dest_ip.as_slice(), flow.dest_port),
        (&[10, 0, 0, 2][..], 53)
    );
    let counters = flow.flow.as_ref().unwrap().counters.as_ref().unwrap();
    assert_eq!((counters.pkts_toserver, counters.pkts_toclient), (1, 1));
    assert!(counters.src_ip.is_empty() && counters.dest_ip.is_empty());
}

#[test]
fn a_datagram_with_a_bad_checksum_still_reaches_its_parser() {
    let mut config = Config::default();
    config.pcap_file.checksum_checks = ChecksumChecks::Yes;
    let (c, s) = endpoints(53);
    let q = sample::dns_query(7, "bad.example", 1);
    let mut frames = session::udp_exchange(c, s, 1_000, 1_000, &q, None, None);
    // Ethernet (14) + IPv4 (20) + UDP checksum at 6.
    frames[0].data[40] ^= 0xff;
    let rules = r#"alert dns any any -> any any (dns.query; content:"bad.example"; sid:1;)"#;
    assert_eq!(
        alerts(&config, rules, &frames),
        want(&[(1, Some(0), "dns")])
    );
}

#[test]
fn http_on_an_unusual_port_is_found_by_content_and_alerts_per_transaction() {
    let config = Config::default();
    let mut t = handshaken(1234);
    t.client_sends(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n");
    t.close();
    let rules = "alert http any any -> any any (http.uri; content:\"/b\"; sid:1;)\n\
                 alert http any any -> any any (http.stat_code; content:\"404\"; sid:2;)\n\
                 alert tcp any any -> any any (app-layer-protocol:http; http.uri; content:\"/a\"; sid:3;)";
    assert_eq!(
        alerts(&config, rules, &t.into_frames()),
        want(&[
            (1, Some(1), "http"),
            (2, Some(1), "http"),
            (3, Some(0), "http")
        ])
    );
}

#[test]
fn a_midstream_flow_whose_first_data_is_a_response_is_reversed() {
    let mut config = Config::default();
    config.stream.midstream = true;
    let (c, s) = endpoints(8080);
    // No handshake: the server's response is the first packet seen.
    let mut t = session::TcpSession::new(c, s, 1_000);
    t.server_sends(b"HTTP/1.1 200 OK\r\nServer: Apache\r\nContent-Length: 0\r\n\r\n");
    let rules =
        "alert http any any -> any any (flow:to_client; http.server; content:\"Apache\"; sid:1;)";
    assert_eq!(
        alerts(&config, rules, &t.into_frames()),
        want(&[(1, Some(0), "http")])
    );
}

#[test]
fn directions_speaking_different_protocols() {
    let config = Config::default();
    let mut t = handshaken(22);
    t.client_sends(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"SSH-2.0-OpenSSH_8.9\r\n");
    t.server_sends(b"more bytes\r\n");
    t.close();
    let rules = "alert ip any any -> any any (app-layer-event:applayer_mismatch_protocol_both_directions; sid:1;)\n\
                 alert tcp any any -> any any (flow:to_client; app-layer-protocol:http1,to_server; app-layer-protocol:ssh,to_client; sid:2;)\n\
                 alert tcp any any -> any any (app-layer-protocol:ssh; sid:3;)";
    // Each once: on the packet where the server's protocol was recognised.
    assert_eq!(
        alerts(&config, rules, &t.into_frames()),
        want(&[(1, None, "http"), (2, None, "http")])
    );
}

#[test]
fn ssh_banners_are_buffers_per_direction() {
    let config = Config::default();
    let mut t = handshaken(2222);
    t.client_sends(b"SSH-2.0-PuTTY_Release_0.78\r\n");
    t.server_sends(b"SSH-2.0-OpenSSH_9.3 Debian\r\n");
    t.close();
    let rules = "alert ssh any any -> any any (ssh.software; content:\"OpenSSH\"; sid:1;)\n\
                 alert ssh any any -> any any (ssh.proto; content:\"2.0\"; sid:2;)\n\
                 alert ssh any any -> any any (flow:to_server; ssh.software; content:\"OpenSSH\"; sid:3;)";
    assert_eq!(
        alerts(&config, rules, &t.into_frames()),
        want(&[
            (1, Some(0), "ssh"),
            (2, Some(0), "ssh"),
            (2, Some(0), "ssh")
        ])
    );
}

#[test]
fn decoder_events_reach_decode_event_rules() {
    let config = Config::default();
    let (c, s): (std::net::IpAddr, std::net::IpAddr) = (
        "2001:db8::1".parse().unwrap(),
        "2001:db8::2".parse().unwrap(),
    );
    // A fragment header saying "offset 0, last fragment" before an ICMPv6 echo.
    let oct = |a: std::net::IpAddr| match a {
        std::net::IpAddr::V6(v) => v.octets(),
        std::net::IpAddr::V4(_) => [0; 16],
    };
    let echo = meerkat_synth::packet::icmpv6(oct(c), oct(s), 128, 0, 1, 1, b"ping");
    let mut payload = vec![58, 0, 0, 0, 0, 0, 0, 9];
    payload.extend_from_slice(&echo);
    let ip = meerkat_synth::packet::ip(c, s, 44, 64, 0, &payload);
    let frame = session::frame_ip(c, s, None, &ip);
    // A UDP length field below the header's size: the packet does not decode.
    let (c4, s4): (std::net::IpAddr, std::net::IpAddr) =
        ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
    let mut udp = meerkat_synth::packet::udp(c4, s4, 1, 2, b"abcd");
    udp[4..6].copy_from_slice(&5u16.to_be_bytes());
    let bad = session::frame_ip(
        c4,
        s4,
        None,
        &meerkat_synth::packet::ip(c4, s4, 17, 64, 1, &udp),
    );
    let frames = [
        meerkat_synth::Frame {
            ts_ns: 1,
            data: frame,
        },
        meerkat_synth::Frame {
            ts_ns: 2,
            data: bad,
        },
    ];
    let rules = "alert pkthdr any any -> any any (decode-event:ipv6.exthdr_useless_fh; sid:1;)\n\
                 alert icmp any any -> any any (itype:128; sid:2;)\n\
                 alert pkthdr any any -> any any (decode-event:udp.len_invalid; sid:3;)\n\
                 alert ip any any -> any any (ttl:64; sid:4;)";
    let got: Vec<u64> = alerts(&config, rules, &frames)
        .into_iter()
        .map(|a| a.0)
        .collect();
    // The echo is decoded whole (sids 1, 2, 4); the bad datagram is inspected by
    // decoder-event rules only (sid 3, not 4).
    assert_eq!(got, [1, 2, 3, 4]);
}

#[test]
fn a_udp_flow_starting_with_a_response_is_reversed() {
    let config = Config::default();
    let (c, s) = endpoints(53);
    // Only the server's answer was captured: it is the first (and only) datagram.
    let r = sample::dns_response_a(9, "lone.example", [10, 0, 0, 9]);
    let frames = session::udp_exchange(s, c, 1_000, 1_000, &r, None, None);
    let rules = "alert dns any any -> any any (flow:to_client; dns.answers.rrname; content:\"lone.example\"; sid:1;)";
    assert_eq!(
        alerts(&config, rules, &frames),
        want(&[(1, Some(0), "dns")])
    );
}

/// HTTP bodies are logged as `fileinfo` records in their direction, with the
/// transaction's `http` record beside them; an alert carries its direction's files;
/// `filemd5` (a hash list beside the rule file) and `filesize` match, and make the
/// digest they need computed and logged.
#[test]
fn bodies_are_logged_as_files_and_file_keywords_match() {
    let dir = tempfile::tempdir().unwrap();
    // MD5 of "hello".
    std::fs::write(
        dir.path().join("list.md5"),
        "# known\n5d41402abc4b2a76b9719d911017c592\n",
    )
    .unwrap();
    let rules_path = dir.path().join("t.rules");
    std::fs::write(
        &rules_path,
        "alert http any any -> any any (filemd5:list.md5; sid:1;)\n\
         alert http any any -> any any (filemd5:!list.md5; sid:2;)\n\
         alert http any any -> any any (filesize:>4; flow:to_client; sid:3;)\n\
         alert http any any -> any any (filesize:<3; sid:4;)\n",
    )
    .unwrap();
    let config = Config::default();
    let ctx = RuleContext::from_config(&config).unwrap();
    let loaded = rules::load_files(&[rules_path], &ctx).unwrap();
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    let engine = Engine::new(loaded.rules, loaded.names);
    let mut t = handshaken(80);
    t.client_sends(b"POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\nab");
    t.server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    t.close();
    let frames = t.into_frames();
    let r = InProcess::run_frames(
        &config,
        engine,
        frames.iter().map(|f| (f.ts_ns, &f.data[..])),
    );
    let files: Vec<_> = r.events.iter().filter(|e| e.fileinfo.is_some()).collect();
    assert_eq!(files.len(), 2, "{files:?}");
    for e in &files {
        assert_eq!(e.event_type, EventType::Fileinfo as i32);
        assert!(matches!(e.app, Some(AppRecord::Http(_))));
        assert_eq!(e.app_proto, "http");
        let f = e.fileinfo.as_ref().unwrap();
        assert_eq!((f.state.as_str(), f.tx_id), ("CLOSED", 0));
        if f.size == 5 {
            // The response's file: server -> client, named by the URI path.
            assert_eq!(e.src_port, 80);
            assert_eq!(f.filename, b"/up");
            assert_eq!(f.md5, "5d41402abc4b2a76b9719d911017c592");
        } else {
            assert_eq!((e.src_port, f.size), (40000, 2));
            assert_eq!(f.md5, "187ef4436122d1cc2f40dc2b92f0eba0");
        }
    }
    let mut sids: Vec<u64> = r
        .events
        .iter()
        .filter_map(|e| e.alert.as_ref().map(|a| a.signature_id))
        .collect();
    sids.sort_unstable();
    // 1: the response file is in the list; 2: the request file is not; 3: the
    // response file is over 4 bytes; 4: the request file is under 3.
    assert_eq!(sids, vec![1, 2, 3, 4]);
    let a1 = r
        .events
        .iter()
        .find(|e| e.alert.as_ref().is_some_and(|a| a.signature_id == 1))
        .unwrap();
    assert_eq!(a1.files.len(), 1);
    assert_eq!(a1.files[0].size, 5);
}

/// A hash list with a bad line refuses the rule, naming the file and the line.
#[test]
fn a_bad_hash_list_refuses_its_rule() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.md5"),
        "5d41402abc4b2a76b9719d911017c592\nnot-a-hash\n",
    )
    .unwrap();
    let rules_path = dir.path().join("t.rules");
    std::fs::write(
        &rules_path,
        "alert http any any -> any any (filemd5:bad.md5; sid:1;)\n\
         alert http any any -> any any (filesize:10; sid:2;)\n",
    )
    .unwrap();
    let ctx = RuleContext::from_config(&Config::default()).unwrap();
    let loaded = rules::load_files(&[rules_path], &ctx).unwrap();
    assert_eq!(loaded.rules.len(), 1);
    assert_eq!(loaded.problems.len(), 1);
    let p = &loaded.problems[0];
    assert_eq!(p.sid, Some(1));
    assert!(
        p.reason.contains("bad.md5 line 2") && p.reason.contains("not-a-hash"),
        "{}",
        p.reason
    );
}

/// Without `files` in any output and no file keyword loaded, no file is tracked.
#[test]
fn no_fileinfo_when_files_are_not_logged() {
    let mut config = Config::default();
    for o in &mut config.outputs {
        if let Some(e) = &mut o.eve_log {
            e.types.retain(|t| t.name() != "files");
        }
    }
    let mut t = handshaken(80);
    t.client_sends(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    t.close();
    let rules = r#"alert http any any -> any any (http.stat_code; content:"200"; sid:9;)"#;
    let r = run(&config, rules, &t.into_frames());
    assert!(r.events.iter().all(|e| e.fileinfo.is_none()));
    // The transaction was parsed, and its alert carries no file.
    let a = r.events.iter().find(|e| e.alert.is_some()).unwrap();
    assert!(a.files.is_empty());
}

/// `frames` (Ethernet) wrapped in VXLAN between 192.0.2.1 and 192.0.2.2, each
/// direction in its own outer flow (source port by inner direction, as VXLAN's
/// entropy ports make it).
fn vxlan_wrapped(frames: Vec<meerkat_synth::Frame>) -> Vec<meerkat_synth::Frame> {
    let (o1, o2): (std::net::IpAddr, std::net::IpAddr) =
        ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
    frames
        .into_iter()
        .map(|f| {
            let to_server = f.data[26..30] == [10, 0, 0, 1];
            let (s, d, sp) = if to_server {
                (o1, o2, 50001)
            } else {
                (o2, o1, 50002)
            };
            let mut vx = vec![0x08, 0, 0, 0, 0, 0, 7, 0];
            vx.extend_from_slice(&f.data);
            let udp = meerkat_synth::packet::udp(s, d, sp, 4789, &vx);
            let ip = meerkat_synth::packet::ip(s, d, 17, 64, 1, &udp);
            meerkat_synth::Frame {
                ts_ns: f.ts_ns,
                data: session::frame_ip(s, d, None, &ip),
            }
        })
        .collect()
}

#[test]
fn tunnelled_packets_are_packets_of_their_own() {
    let config = Config::default();
    let mut t = handshaken(80);
    t.client_sends(b"GET /tunnel HTTP/1.1\r\nHost: x\r\n\r\n")
        .server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    let frames = vxlan_wrapped(t.into_frames());
    let rules = "alert http any any -> any any (http.uri; content:\"/tunnel\"; sid:1;)\n\
                 alert udp any any -> any 4789 (content:\"GET\"; sid:2;)\n\
                 alert udp any any -> any 4789 (ttl:64; sid:3;)\n\
                 alert tcp any any -> any 80 (flow:to_server,established; content:\"GET\"; sid:4;)";
    let r = run(&config, rules, &frames);
    let sids = |sid: u64| {
        r.events
            .iter()
            .filter(|e| e.alert.as_ref().is_some_and(|a| a.signature_id == sid))
            .collect::<Vec<_>>()
    };
    // The inner HTTP request is inspected as its own packet, in its own flow.
    let a = sids(1);
    assert_eq!(a.len(), 1);
    assert_eq!(
        a[0].pkt_src,
        meerkat_proto::events::PacketSource::Vxlan as i32
    );
    assert_eq!(a[0].app_proto, "http");
    let tun = a[0].tunnel.as_ref().expect("tunnel record");
    assert_eq!(
        (
            tun.src_ip.as_slice(),
            tun.src_port,
            tun.dest_port,
            tun.ip_proto,
            tun.depth
        ),
        (&[192, 0, 2, 1][..], 50001, 4789, 17, 1)
    );
    assert_eq!(tun.pcap_cnt, a[0].pcap_cnt);
    assert_eq!(sids(4).len(), 1);
    // The outer datagrams: headers inspected, payload not (it is the inner packet).
    assert!(sids(2).is_empty());
    assert!(!sids(3).is_empty(), "outer headers are inspected");
    assert!(sids(3).iter().all(|e| e.tunnel.is_none() && e.pkt_src == 1));
    // Flows: the inner TCP flow (both directions met), and the two outer UDP flows.
    let flows: Vec<_> = r.events.iter().filter(|e| e.flow.is_some()).collect();
    let tcp: Vec<_> = flows.iter().filter(|e| e.ip_proto == 6).collect();
    assert_eq!(tcp.len(), 1);
    let c = tcp[0].flow.as_ref().unwrap().counters.as_ref().unwrap();
    assert!(c.pkts_toserver > 0 && c.pkts_toclient > 0);
    assert_eq!(flows.iter().filter(|e| e.ip_proto == 17).count(), 2);
}

#[test]
fn gre_packets_have_no_flow_and_their_inner_packets_do() {
    let config = Config::default();
    let mut t = handshaken(80);
    t.client_sends(b"GET /gre HTTP/1.1\r\nHost: x\r\n\r\n");
    let (o1, o2): (std::net::IpAddr, std::net::IpAddr) =
        ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
    let plain = t.into_frames();
    let n = plain.len();
    let frames: Vec<meerkat_synth::Frame> = plain
        .into_iter()
        .map(|f| {
            let mut gre = vec![0, 0, 0x08, 0x00];
            gre.extend_from_slice(&f.data[14..]);
            let ip = meerkat_synth::packet::ip(o1, o2, 47, 64, 1, &gre);
            meerkat_synth::Frame {
                ts_ns: f.ts_ns,
                data: session::frame_ip(o1, o2, None, &ip),
            }
        })
        .collect();
    let rules = "alert ip any any -> any any (ip_proto:47; sid:1;)\n\
                 alert http any any -> any any (http.uri; content:\"/gre\"; sid:2;)";
    let r = run(&config, rules, &frames);
    let gre: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.alert.as_ref().is_some_and(|a| a.signature_id == 1))
        .collect();
    assert_eq!(gre.len(), n, "every GRE packet, none in a flow");
    assert!(gre.iter().all(|e| e.flow_id == 0));
    let http: Vec<_> = r
        .events
        .iter()
        .filter(|e| e.alert.as_ref().is_some_and(|a| a.signature_id == 2))
        .collect();
    assert_eq!(http.len(), 1);
    assert_eq!(
        http[0].pkt_src,
        meerkat_proto::events::PacketSource::Gre as i32
    );
    assert_eq!(http[0].tunnel.as_ref().unwrap().ip_proto, 47);
    let flows: Vec<_> = r.events.iter().filter(|e| e.flow.is_some()).collect();
    assert_eq!(flows.len(), 1);
    assert_eq!(flows[0].ip_proto, 6);
}

/// `filestore` stores the files of the direction it matched in, by sha256, whether it
/// matched before the body came or on the body itself; a file no rule asked for is
/// not written; the `fileinfo` records say `stored` with the file's id and the rules,
/// and the alerts show the files as being stored.
#[test]
fn filestore_writes_matching_files_by_sha256() {
    use sha2::{Digest, Sha256};
    let dir = tempfile::tempdir().unwrap();
    let store = dir.path().join("store");
    let mut config = Config::default();
    // One worker: file ids 1, 2, ... (with N, worker i's are i+1, i+1+N, ...).
    config.detect.workers = Some(1);
    config.outputs.push(meerkat_config::Output {
        eve_log: None,
        pcap_log: None,
        file_store: Some(meerkat_config::outputs::FileStore {
            enabled: true,
            dir: store.to_string_lossy().into_owned(),
            ..Default::default()
        }),
    });
    let mut t = handshaken(80);
    // Stored by a match on the response line (before the body).
    t.client_sends(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\nhello");
    t.server_sends(b" world");
    // Stored by a match on the body's last bytes (kept until then).
    t.client_sends(b"GET /b HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"HTTP/1.1 404 Not Found\r\nContent-Length: 12\r\n\r\nsecret ");
    t.server_sends(b"stuff");
    // Not asked for.
    t.client_sends(b"GET /c HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"HTTP/1.1 404 Not Found\r\nContent-Length: 4\r\n\r\nnope");
    t.close();
    let rules = "alert http any any -> any any (http.stat_code; content:\"200\"; filestore; sid:1;)\n\
         alert http any any -> any any (file.data; content:\"stuff\"; filestore; sid:2;)\n\
         alert http any any -> any any (http.uri; content:\"/c\"; filestore:request; sid:3;)\n";
    let r = run(&config, rules, &t.into_frames());
    let stored_path = |data: &[u8]| {
        let name = app::files::hex(&Sha256::digest(data));
        store.join(&name[..2]).join(&name)
    };
    assert_eq!(
        std::fs::read(stored_path(b"hello world")).unwrap(),
        b"hello world"
    );
    assert_eq!(
        std::fs::read(stored_path(b"secret stuff")).unwrap(),
        b"secret stuff"
    );
    assert!(!stored_path(b"nope").exists());
    assert_eq!(std::fs::read_dir(store.join("tmp")).unwrap().count(), 0);
    let files: Vec<_> = r
        .events
        .iter()
        .filter_map(|e| e.fileinfo.as_ref())
        .collect();
    assert_eq!(files.len(), 3, "{files:?}");
    let by_name = |n: &[u8]| files.iter().find(|f| f.filename == n).unwrap();
    let (a, b, c) = (by_name(b"/a"), by_name(b"/b"), by_name(b"/c"));
    assert!(a.stored && b.stored && !c.stored);
    assert_eq!((a.sid.as_slice(), b.sid.as_slice()), (&[1][..], &[2][..]));
    let mut ids = [a.file_id.unwrap(), b.file_id.unwrap()];
    ids.sort_unstable();
    assert_eq!(ids, [1, 2]);
    assert!(c.file_id.is_none() && !c.storing);
    // sid 3 matched on the request, which has no file: no alert (as Suricata).
    let sids: Vec<u64> = r
        .events
        .iter()
        .filter_map(|e| e.alert.as_ref().map(|a| a.signature_id))
        .collect();
    assert!(
        sids.contains(&1) && sids.contains(&2) && !sids.contains(&3),
        "{sids:?}"
    );
    let alert = r
        .events
        .iter()
        .find(|e| e.alert.as_ref().is_some_and(|a| a.signature_id == 1))
        .unwrap();
    assert!(alert.files.iter().all(|f| f.storing && f.sid == [1]));
}

/// Without the file store, a `filestore` rule still alerts and nothing is kept.
#[test]
fn filestore_without_the_store_only_alerts() {
    let config = Config::default();
    let mut t = handshaken(80);
    t.client_sends(b"GET /a HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello");
    t.close();
    let r = run(
        &config,
        "alert http any any -> any any (filestore; sid:1;)",
        &t.into_frames(),
    );
    assert!(r.events.iter().any(|e| e.alert.is_some()));
    let f = r.events.iter().find_map(|e| e.fileinfo.as_ref()).unwrap();
    assert!(!f.stored && f.file_id.is_none());
}

/// threshold.config over generated traffic: three hosts ping 10.0.0.100 ten times each,
/// a second apart. The counts and actions are the reference's (Suricata 8.0.6, single
/// runmode) on the same packets.
#[test]
fn threshold_config_changes_alerts_as_suricata() {
    use meerkat_proto::events::AlertAction;
    let dir = tempfile::tempdir().unwrap();
    let rules_path = dir.path().join("t.rules");
    let mut text = String::new();
    for sid in 1..=6 {
        text.push_str(&format!(
            "alert icmp any any -> any any (msg:\"s{sid}\"; itype:8; sid:{sid};)\n"
        ));
    }
    std::fs::write(&rules_path, text).unwrap();
    let th = dir.path().join("threshold.config");
    std::fs::write(
        &th,
        "# tuning\n\
         suppress gen_id 1, sig_id 1, track by_src, ip [10.0.0.1, 192.168.1.0/24]\n\
         threshold gen_id 1, sig_id 2, type limit, track by_src, count 2, seconds 60\n\
         rate_filter gen_id 1, sig_id 3, track by_rule, count 4, seconds 60, \\\n\
         \x20 new_action drop, timeout 5\n\
         this line is bad\n\
         rate_filter gen_id 1, sig_id 4, track by_src, count 2, seconds 60, new_action pass, timeout 100\n",
    )
    .unwrap();
    let config = Config {
        threshold_file: Some(th.clone()),
        ..Default::default()
    };
    let ctx = RuleContext::from_config(&config).unwrap();
    let loaded = rules::load_files(&[rules_path], &ctx).unwrap();
    assert!(loaded.problems.is_empty(), "{:?}", loaded.problems);
    assert_eq!(loaded.threshold_entries, 4);
    let bad: Vec<String> = loaded
        .threshold_problems
        .iter()
        .map(|p| p.to_string())
        .collect();
    assert_eq!(bad.len(), 1);
    assert!(
        bad[0].starts_with(&format!("{}:6: unknown entry `this`", th.display())),
        "{bad:?}"
    );
    let engine = Engine::new(loaded.rules, loaded.names);
    let server: std::net::IpAddr = "10.0.0.100".parse().unwrap();
    let mut frames = Vec::new();
    for i in 0..10u64 {
        for (n, src) in ["10.0.0.1", "10.0.0.2", "192.168.1.5"].iter().enumerate() {
            let t = 1_700_000_000_000_000_000 + i * 1_000_000_000 + n as u64 * 1_000_000;
            let mut p = session::ping(src.parse().unwrap(), server, t, n as u16 + 1, b"abcd");
            p.truncate(1); // the echo request only
            frames.extend(p);
        }
    }
    let r = InProcess::run_frames(
        &config,
        engine,
        frames.iter().map(|f| (f.ts_ns, &f.data[..])),
    );
    let of = |sid: u64| -> Vec<(String, i32)> {
        r.events
            .iter()
            .filter_map(|e| {
                let a = e.alert.as_ref()?;
                let ip = <[u8; 4]>::try_from(&e.src_ip[..]).ok()?;
                (a.signature_id == sid)
                    .then(|| (std::net::Ipv4Addr::from(ip).to_string(), a.action))
            })
            .collect()
    };
    let allowed = AlertAction::Allowed as i32;
    let blocked = AlertAction::Blocked as i32;
    // suppress by_src with a list: only 10.0.0.2 alerts.
    let s1 = of(1);
    assert_eq!(s1.len(), 10, "{s1:?}");
    assert!(s1.iter().all(|(ip, _)| ip == "10.0.0.2"), "{s1:?}");
    // limit 2 by_src: two per host.
    let s2 = of(2);
    assert_eq!(s2.len(), 6, "{s2:?}");
    for h in ["10.0.0.1", "10.0.0.2", "192.168.1.5"] {
        assert_eq!(s2.iter().filter(|(ip, _)| ip == h).count(), 2);
    }
    // rate_filter by_rule: the fifth match (t=1 s) puts `drop` in effect; at t=7 s its
    // 5 s timeout is over (one match alerts as the rule), then the count (still over 4)
    // puts it in effect again.
    let s3 = of(3);
    assert_eq!(s3.len(), 30);
    let allowed_at: Vec<usize> = s3
        .iter()
        .enumerate()
        .filter(|(_, (_, a))| *a == allowed)
        .map(|(i, _)| i + 1)
        .collect();
    assert_eq!(allowed_at, vec![1, 2, 3, 4, 22]);
    assert!(s3.iter().all(|(_, a)| *a == allowed || *a == blocked));
    // rate_filter with new_action pass: from each host's third ping, no alert of sid 4
    // and none of the rules after it on that packet (sid 5, 6); sids 1-3 go on.
    for sid in 4..=6 {
        let s = of(sid);
        assert_eq!(s.len(), 6, "sid {sid}: {s:?}");
    }
}

/// Stream rules see a side's acknowledged data in chunks of `toserver-chunk-size`
/// bytes (Suricata's default: 2560), or all of it when the side closes: ten small
/// segments make one inspection at the default size and one each at a chunk size of
/// their length.
#[test]
fn stream_rules_inspect_chunks_not_segments() {
    let rules = "alert tcp any any -> any any (flow:to_server; content:\"ping\"; sid:1;)";
    let mut t = handshaken(9999);
    for _ in 0..10 {
        t.client_sends(b"ping!");
    }
    t.close();
    let frames = t.into_frames();
    let default = Config::default();
    assert_eq!(default.stream.reassembly.toserver_chunk_size.bytes(), 2560);
    assert_eq!(alerts(&default, rules, &frames), want(&[(1, None, "")]));
    let mut small = Config::default();
    small.stream.reassembly.toserver_chunk_size = meerkat_config::de::ByteSize(5);
    assert_eq!(alerts(&small, rules, &frames), want(&[(1, None, ""); 10]));
}

/// A transaction that completes lets stream rules see its side's data at once, short
/// of a chunk (Suricata triggers raw reassembly): two HTTP requests, two alerts.
#[test]
fn a_completed_transaction_triggers_stream_inspection() {
    let rules = "alert tcp any any -> any any (flow:to_server; content:\"GET /\"; sid:1;)";
    let mut t = handshaken(80);
    for _ in 0..2 {
        t.client_sends(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
        t.server_sends(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    }
    t.close();
    let got = alerts(&Config::default(), rules, &t.into_frames());
    assert_eq!(got, want(&[(1, None, "http"), (1, None, "http")]));
}

/// Only a parser that asks, as Suricata's does, lets stream rules see less than a
/// chunk: FTP's never asks, so two commands are one inspection (at the end); a
/// protocol change asks for both directions (no change here).
#[test]
fn a_parser_that_never_asks_has_its_stream_inspected_in_chunks() {
    let rules = "alert tcp any any -> any any (flow:to_server; content:\"USER \"; sid:1;)";
    let mut t = handshaken(21);
    t.server_sends(b"220 hello\r\n");
    for _ in 0..2 {
        t.client_sends(b"USER anonymous\r\n");
        t.server_sends(b"331 go on\r\n");
    }
    t.close();
    let got = alerts(&Config::default(), rules, &t.into_frames());
    assert_eq!(got, want(&[(1, None, "ftp")]));
}

/// The TLS parser asks at each record; its first application-data record ends the
/// flow's payload inspection, as Suricata's default `encryption-handling`: bytes after
/// it match no payload rule, where the same bytes in a handshake record do.
#[test]
fn tls_application_data_ends_payload_inspection() {
    let rules = "alert tcp any any -> any any (flow:to_server; content:\"secret\"; sid:1;)";
    let record = |ctype: u8| {
        let body = b"....secret....";
        let mut r = vec![ctype, 3, 3, 0, body.len() as u8];
        r.extend_from_slice(body);
        r
    };
    let session = |ctype: u8| {
        let mut t = handshaken(443);
        t.client_sends(&sample::tls_client_hello("a.example", 1));
        t.client_sends(&record(ctype));
        t.server_sends(&record(ctype));
        t.client_sends(&record(ctype));
        t.close();
        t.into_frames()
    };
    let config = Config::default();
    assert_eq!(alerts(&config, rules, &session(23)), want(&[]));
    let handshake = alerts(&config, rules, &session(22));
    assert!(!handshake.is_empty(), "{handshake:?}");
    // A packet-only rule (no rule reads the raw stream): the packet of the first
    // application data is inspected (Suricata parses it once the server acknowledges
    // it), the client's next one is not. On tls-subject, tls-cert-issuer and
    // tls-fingerprint-alert, such rules now alert as often as the reference's.
    let rules =
        "alert tcp any any -> any any (flow:to_server; dsize:>5; content:\"secret\"; sid:2;)";
    assert_eq!(
        alerts(&config, rules, &session(23)),
        want(&[(2, None, "tls")])
    );
    let handshake = alerts(&config, rules, &session(22));
    assert!(!handshake.is_empty(), "{handshake:?}");
}

/// `stream.reassembly.depth` reached: `stream.reassembly_depth_reached` once per
/// side, on the packet that crossed it, for `stream-event` rules and as an EVE anomaly
/// of type `stream` when `anomaly.types.stream` is on (its default is off).
#[test]
fn reaching_the_depth_raises_a_stream_event_per_side() {
    let rules = "alert tcp any any -> any any (stream-event:reassembly_depth_reached; sid:1;)\n\
                 alert tcp any any -> any any (stream-event:pkt_retransmission; sid:2;)";
    let mut t = handshaken(9999);
    t.client_sends(&[b'a'; 40]);
    t.client_sends(&[b'b'; 40]);
    t.client_sends(&[b'c'; 40]);
    t.server_sends(&[b'd'; 80]);
    t.close();
    let frames = t.into_frames();
    let sets = |extra: &[&str]| {
        let mut v = vec!["stream.reassembly.depth=50".to_string()];
        v.extend(extra.iter().map(|s| s.to_string()));
        meerkat_config::load::resolve(None, &v).unwrap().config
    };
    let anomalies = |config: &Config| -> Vec<String> {
        run(config, rules, &frames)
            .events
            .iter()
            .filter_map(|e| e.anomaly.as_ref())
            .filter(|a| a.r#type == "stream")
            .map(|a| a.event.clone())
            .collect()
    };
    let quiet = sets(&[]);
    assert_eq!(
        alerts(&quiet, rules, &frames),
        want(&[(1, None, "failed"); 2])
    );
    assert!(anomalies(&quiet).is_empty());
    let logged = sets(&["outputs.1.eve-log.types.2.anomaly.types.stream=yes"]);
    assert_eq!(
        anomalies(&logged),
        vec!["stream.reassembly_depth_reached"; 2]
    );
}

/// The `anomaly` records of a run: (type, app_proto, event, layer, tx_id).
fn anomaly_records(
    config: &Config,
    frames: &[meerkat_synth::Frame],
) -> Vec<(String, String, String, String, Option<u64>)> {
    run(config, "", frames)
        .events
        .iter()
        .filter_map(|e| {
            let a = e.anomaly.as_ref()?;
            Some((
                a.r#type.clone(),
                a.app_proto.clone(),
                a.event.clone(),
                a.layer.clone(),
                e.tx_id,
            ))
        })
        .collect()
}

/// App-layer anomalies are logged by default (`anomaly.types.applayer`), with their
/// transaction, named as Suricata's EVE names them (upper case for HTTP); protocol
/// detection events carry no transaction. `applayer: no` turns them off.
#[test]
fn app_layer_anomalies_are_logged_as_suricata_logs_them() {
    let mut t = handshaken(8080);
    t.client_sends(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"HTTP/1.1 200 OK\r\nServer: a\r\nServer: b\r\nContent-Length: 0\r\n\r\n");
    t.close();
    let frames = t.into_frames();
    let rec = |ty: &str, proto: &str, ev: &str, layer: &str, tx: Option<u64>| {
        (ty.into(), proto.into(), ev.into(), layer.into(), tx)
    };
    assert_eq!(
        anomaly_records(&Config::default(), &frames),
        vec![rec(
            "applayer",
            "http",
            "RESPONSE_HEADER_REPETITION",
            "proto_parser",
            Some(0)
        )]
    );
    let off = meerkat_config::load::resolve(
        None,
        &["outputs.1.eve-log.types.2.anomaly.types.applayer=no".to_string()],
    )
    .unwrap()
    .config;
    assert!(anomaly_records(&off, &frames).is_empty());

    // The server answers SSH to an HTTP request: a detection event, without tx_id. The
    // capture ends on that packet: the flow's end does not log the event again.
    let mut t = handshaken(22);
    t.client_sends(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    t.server_sends(b"SSH-2.0-OpenSSH_8.9\r\n");
    let mut frames = t.into_frames();
    // Without the client's ACK of it: the server's data is the last packet.
    frames.pop();
    assert_eq!(
        anomaly_records(&Config::default(), &frames),
        vec![rec(
            "applayer",
            "http",
            "APPLAYER_MISMATCH_PROTOCOL_BOTH_DIRECTIONS",
            "proto_detect",
            None
        )]
    );
}

/// Decoder events are logged as anomalies only with `anomaly.types.decode: yes`
/// (Suricata's default is no).
#[test]
fn decode_anomalies_only_when_asked() {
    let (c4, s4): (std::net::IpAddr, std::net::IpAddr) =
        ("10.0.0.1".parse().unwrap(), "10.0.0.2".parse().unwrap());
    let mut udp = meerkat_synth::packet::udp(c4, s4, 1, 2, b"abcd");
    udp[4..6].copy_from_slice(&5u16.to_be_bytes());
    let bad = session::frame_ip(
        c4,
        s4,
        None,
        &meerkat_synth::packet::ip(c4, s4, 17, 64, 1, &udp),
    );
    let frames = [meerkat_synth::Frame {
        ts_ns: 1,
        data: bad,
    }];
    assert!(anomaly_records(&Config::default(), &frames).is_empty());
    let on = meerkat_config::load::resolve(
        None,
        &["outputs.1.eve-log.types.2.anomaly.types.decode=yes".to_string()],
    )
    .unwrap()
    .config;
    let got = anomaly_records(&on, &frames);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0].0, "decode");
}

/// A DNS query is written client -> server and its response server -> client, as
/// Suricata writes each DNS message in its packet's direction.
#[test]
fn dns_records_take_their_message_direction() {
    let (c, s) = endpoints(53);
    let q = sample::dns_query(7, "www.example", 1);
    let r = sample::dns_response_a(7, "www.example", [10, 0, 0, 7]);
    let frames = session::udp_exchange(c, s, 1_000, 1_000, &q, Some(&r), None);
    // Loaded as the binary loads it, so that the protocols' record types are on.
    let config = app::config::resolve(None, &[]).unwrap().config;
    let got: Vec<(u32, u32)> = run(&config, "", &frames)
        .events
        .iter()
        .filter(|e| e.event_type == EventType::App as i32)
        .map(|e| (e.src_port, e.dest_port))
        .collect();
    assert_eq!(got, vec![(40000, 53), (53, 40000)]);
}

/// A protocol's own `stream-depth` (pgsql's) replaces `stream.reassembly.depth` once
/// the flow is recognised: a query past the global depth is inspected.
#[test]
fn a_protocols_stream_depth_replaces_the_flows() {
    let rules = "alert pgsql any any -> any any (pgsql.query; content:\"deep\"; sid:1;)";
    let msg = |t: u8, body: &[u8]| {
        let mut v = vec![t];
        v.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        v.extend_from_slice(body);
        v
    };
    let mut t = handshaken(5432);
    t.client_sends(b"\0\0\0\x13\0\x03\0\0user\0oryx\0\0");
    let mut ok = msg(b'R', &[0, 0, 0, 0]);
    ok.extend(msg(b'Z', b"I"));
    t.server_sends(&ok);
    t.client_sends(&msg(
        b'Q',
        b"SELECT 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa deep';\0",
    ));
    t.close();
    let frames = t.into_frames();
    let sets = |extra: &[&str]| {
        let mut v = vec![
            "stream.reassembly.depth=50".to_string(),
            "app-layer.protocols.pgsql.enabled=yes".to_string(),
        ];
        v.extend(extra.iter().map(|s| s.to_string()));
        meerkat_config::load::resolve(None, &v).unwrap().config
    };
    assert!(alerts(&sets(&[]), rules, &frames).is_empty());
    assert_eq!(
        alerts(
            &sets(&["app-layer.protocols.pgsql.stream-depth=0"]),
            rules,
            &frames
        ),
        want(&[(1, Some(1), "pgsql")])
    );
}

/// `dataset`: `set` alerts on a value the first time, `isset`/`isnotset` look up a set
/// loaded from a file beside the rules (strings base64, one a line), and a bad line
/// in that file refuses the rule naming the file and line.
#[test]
fn datasets_set_isset_isnotset_and_bad_files() {
    let dir = tempfile::tempdir().unwrap();
    // "pre.example", base64.
    std::fs::write(dir.path().join("known.lst"), "cHJlLmV4YW1wbGU=\n").unwrap();
    std::fs::write(dir.path().join("bad.lst"), "cHJlLmV4YW1wbGU=\n%%%\n").unwrap();
    let rules_path = dir.path().join("t.rules");
    std::fs::write(
        &rules_path,
        "alert dns any any -> any any (dns.query; dataset:isset,known, type string, load known.lst; sid:1;)\n\
         alert dns any any -> any any (dns.query; dataset:set,new-names, type string; sid:2;)\n\
         alert dns any any -> any any (dns.query; content:\"example\"; dataset:isnotset,known; sid:3;)\n\
         alert dns any any -> any any (dns.query; dataset:isset,bad, type string, load bad.lst; sid:4;)\n\
         alert dns any any -> any any (dns.query; dataset:isset,never-defined; sid:5;)\n\
         alert dns any any -> any any (dns.query; dataset:isset,known, type md5; sid:6;)\n",
    )
    .unwrap();
    let config = Config::default();
    let ctx = RuleContext::from_config(&config).unwrap();
    let loaded = rules::load_files(&[rules_path], &ctx).unwrap();
    assert_eq!(loaded.rules.len(), 3, "{:?}", loaded.problems);
    let reasons: Vec<(Option<u64>, &str)> = loaded
        .problems
        .iter()
        .map(|p| (p.sid, p.reason.as_str()))
        .collect();
    assert!(
        reasons[0].0 == Some(4) && reasons[0].1.contains("bad.lst:2:"),
        "{reasons:?}"
    );
    assert!(reasons[1].0 == Some(5) && reasons[1].1.contains("not defined"));
    assert!(reasons[2].0 == Some(6) && reasons[2].1.contains("type string"));
    let engine = Engine::new(loaded.rules, loaded.names);
    let mut frames = Vec::new();
    for (i, name) in ["pre.example", "a.example", "a.example", "b.example"]
        .iter()
        .enumerate()
    {
        let c: std::net::SocketAddr = format!("10.0.0.1:{}", 40000 + i).parse().unwrap();
        let s: std::net::SocketAddr = "10.0.0.2:53".parse().unwrap();
        let q = sample::dns_query(i as u16, name, 1);
        frames.extend(session::udp_exchange(
            c,
            s,
            1_000 + i as u64 * 1_000_000,
            1_000,
            &q,
            None,
            None,
        ));
    }
    let r = InProcess::run_frames(
        &config,
        engine,
        frames.iter().map(|f| (f.ts_ns, &f.data[..])),
    );
    let mut got: Vec<u64> = r
        .events
        .iter()
        .filter_map(|e| Some(e.alert.as_ref()?.signature_id))
        .collect();
    got.sort();
    // sid 1: pre.example; sid 2: pre, a, b (a once); sid 3: a, a, b.
    assert_eq!(got, [1, 2, 2, 2, 3, 3, 3]);
}
