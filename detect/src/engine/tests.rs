//! Engine tests on synthetic packets.

use super::*;
use crate::rules::{load_str, tests_ctx};
use meerkat_synth::packet;
use meerkat_wire::decode::{LINKTYPE_RAW, decode};

fn engine(rules: &str) -> Engine {
    let l = load_str(rules, &tests_ctx());
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    Engine::new(l.rules, l.names)
}

fn udp(payload: &[u8]) -> Vec<u8> {
    let s: IpAddr = "10.0.0.1".parse().unwrap();
    let d: IpAddr = "10.0.0.2".parse().unwrap();
    packet::ip(s, d, 17, 64, 1, &packet::udp(s, d, 1000, 53, payload))
}

fn icmp(t: u8) -> Vec<u8> {
    let s = [10, 0, 0, 1];
    let d = [10, 0, 0, 2];
    packet::ipv4(s, d, 1, 64, 1, &packet::icmpv4(t, 0, 1, 1, b"ping"))
}

/// A view of a packet `p` on an established flow (id 1, time 1) with its payload as
/// the packet payload; tests override the fields they are about.
fn view<'a>(p: &'a Packet<'a>, to_server: Option<bool>) -> PacketView<'a> {
    PacketView {
        pkt: p,
        ts_ns: 1,
        to_server,
        established: true,
        app_proto: AppProto::Unknown,
        app_proto_pending: false,
        payload: Some(p.payload),
        stream: None,
        segment: None,
        stream_bytes: (0, 0),
        flow_id: 1,
        first_in_direction: false,
        pseudo: false,
        pseudo_app_rules: false,
        app_proto_dir: [AppProto::Unknown; 2],
        proto_detect_done: false,
        app_events: 0,
        stream_events: 0,
    }
}

/// A view of `p` on an HTTP flow, its payload left to the app layer (for the
/// transaction tests).
fn http_view<'a>(p: &'a Packet<'a>, to_server: Option<bool>) -> PacketView<'a> {
    PacketView {
        app_proto: AppProto::Http,
        payload: None,
        ..view(p, to_server)
    }
}

/// Sids that alert on one packet, flow state carried in `vars`.
fn run(
    e: &Engine,
    st: &mut DetectState,
    vars: &mut FlowVars,
    frame: &[u8],
    ts_ns: u64,
) -> Vec<u64> {
    let (p, ev) = decode(LINKTYPE_RAW, frame);
    assert!(ev.is_none());
    let v = PacketView {
        ts_ns,
        established: false,
        first_in_direction: true,
        ..view(&p, Some(true))
    };
    let mut hits = Vec::new();
    e.inspect_packet(st, &v, Some(vars), &mut hits);
    hits.iter().map(|h| e.sig(h.sig).rule.sid).collect()
}

#[test]
fn prefilter_and_full_evaluation_agree() {
    let rules = "alert udp any any -> any 53 (content:\"evil\"; nocase; sid:1;)\n\
                 alert udp any any -> any 53 (content:\"EVIL\"; sid:2;)\n\
                 alert udp any any -> any 54 (content:\"evil\"; sid:3;)\n\
                 alert udp any any -> any any (content:\"ev\"; content:\"il\"; distance:0; within:2; sid:4;)\n\
                 alert ip any any -> any any (sid:5;)\n\
                 alert udp any any -> any any (pcre:\"/e.il/\"; sid:6;)\n";
    let e = engine(rules);
    let mut st = DetectState::default();
    let mut fv = FlowVars::default();
    assert_eq!(
        run(&e, &mut st, &mut fv, &udp(b"xx evil xx"), 1),
        vec![1, 4, 5, 6]
    );
    assert_eq!(
        run(&e, &mut st, &mut fv, &udp(b"xx EVIL xx"), 1),
        vec![1, 2, 5]
    );
    assert_eq!(run(&e, &mut st, &mut fv, &udp(b"nothing"), 1), vec![5]);
}

#[test]
fn flowbits_in_rule_order_on_one_packet() {
    // The detect-flowbits case from suricata-verify.
    let rules = r#"alert ip any any -> any any (msg:"Flowbit set"; flowbits:set,fb1; sid:1;)
alert ip any any -> any any (msg:"Flowbit set"; flowbits:set,fb2; sid:2;)
alert ip any any -> any any (flowbits:isset,fb3|fb4; sid:3;)
alert ip any any -> any any (flowbits:isset,fb1|fb5; sid:5;)
alert ip any any -> any any (flowbits:isnotset, fb1|fb2 ; sid:6;)
alert ip any any -> any any (flowbits:unset,fb1; sid:7;)
alert ip any any -> any any (flowbits:noalert; flowbits:isnotset,fb1; flowbits:set,fb1; content:"GET "; sid:8;)
alert ip any any -> any any (flowbits:isset,fb1; sid:9;)
alert ip any any -> any any (flowbits:noalert; content:"GET "; sid:10;)
alert ip any any -> any any (flowbits:isset,fbt; content:"GET "; sid:11;)
alert ip any any -> any any (flowbits:isset,fb1; flowbits:isset,fb2; sid:12;)
"#;
    let e = engine(rules);
    let mut st = DetectState::default();
    let mut fv = FlowVars::default();
    assert_eq!(
        run(&e, &mut st, &mut fv, &udp(b"GET / HTTP/1.0\r\n"), 1),
        vec![1, 2, 5, 7, 9, 12]
    );
}

#[test]
fn thresholds_and_detection_filters() {
    let rules = "alert icmp any any -> any any (itype:8; sid:1;)\n\
                 alert icmp any any -> any any (itype:8; detection_filter:track by_flow, count 1, seconds 3600; sid:2;)\n\
                 alert icmp any any -> any any (itype:8; detection_filter:track by_src, count 7, seconds 3600; sid:5;)\n\
                 alert icmp any any -> any any (itype:8; threshold:type limit, track by_flow, count 2, seconds 3600; sid:13;)\n\
                 alert icmp any any -> any any (itype:8; threshold:type both, track by_flow, count 3, seconds 3600; sid:14;)\n\
                 alert icmp any any -> any any (itype:8; threshold:type threshold, track by_src, count 3, seconds 3600; sid:15;)\n";
    let e = engine(rules);
    let mut st = DetectState::default();
    let mut fv = FlowVars::default();
    let mut counts = std::collections::BTreeMap::new();
    for i in 0..8 {
        for sid in run(&e, &mut st, &mut fv, &icmp(8), 1_000_000 * i) {
            *counts.entry(sid).or_insert(0) += 1;
        }
    }
    let got: Vec<(u64, i32)> = counts.into_iter().collect();
    assert_eq!(got, vec![(1, 8), (2, 7), (5, 1), (13, 2), (14, 1), (15, 2)]);
}

/// Backoff (in a rule), and threshold.config's rate_filter and suppress, the same with
/// per-worker maps and with the host table all workers share.
#[test]
fn backoff_rate_filter_and_suppress_local_and_shared() {
    let rules = "alert icmp any any -> any any (itype:8; threshold:type backoff, track by_flow, count 1, multiplier 2; sid:1;)\n\
                 alert icmp any any -> any any (itype:8; threshold:type backoff, track by_flow, count 3, multiplier 3; sid:2;)\n\
                 alert icmp any any -> any any (itype:8; sid:3;)\n\
                 alert icmp any any -> any any (itype:8; sid:4;)\n\
                 alert icmp any any -> any any (itype:8; sid:5;)\n";
    let ctx = tests_ctx();
    let mut l = load_str(rules, &ctx);
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    let conf = "rate_filter gen_id 1, sig_id 3, track by_src, count 2, seconds 10, new_action reject, timeout 3\n\
                suppress gen_id 1, sig_id 4, track by_dst, ip 10.0.0.2\n\
                suppress gen_id 1, sig_id 5, track by_src, ip 10.0.0.0/24\n\
                suppress gen_id 1, sig_id 5, track by_src, ip 10.0.1.0/24\n";
    let p = std::path::Path::new("t");
    let (entries, bad) = crate::rules::thresholds::parse(conf, p, &ctx);
    assert!(bad.is_empty(), "{bad:?}");
    assert!(crate::rules::thresholds::apply(&entries, &mut l.rules, p).is_empty());
    let e = Engine::new(l.rules, l.names);
    let dir = tempfile::tempdir().unwrap();
    let table = meerkat_shm::SharedTable::open_or_create(&dir.path().join("hosts"), 4096).unwrap();
    for mut st in [DetectState::default(), DetectState::with_shared(table)] {
        let mut fv = FlowVars::default();
        let frame = icmp(8);
        let (p, _) = decode(LINKTYPE_RAW, &frame);
        let mut alerts: Vec<(u64, usize, Option<Action>)> = Vec::new();
        for i in 0..20u64 {
            let v = PacketView {
                // Packet times of today: second counts past 16 bits.
                ts_ns: 1_700_000_000_000_000_000 + 1_000_000_000 * (i + 1),
                ..view(&p, Some(true))
            };
            let mut hits = Vec::new();
            e.inspect_packet(&mut st, &v, Some(&mut fv), &mut hits);
            for h in hits {
                alerts.push((e.sig(h.sig).rule.sid, i as usize + 1, h.action));
            }
        }
        let at = |sid: u64| -> Vec<usize> {
            alerts.iter().filter(|a| a.0 == sid).map(|a| a.1).collect()
        };
        assert_eq!(at(1), vec![1, 2, 4, 8, 16], "backoff 1 x2");
        assert_eq!(at(2), vec![3, 9], "backoff 3 x3");
        // Every match alerts. Match 3 is past count 2: the action is in effect for it
        // and 3 s more (4-6); 7 finds the timeout over (the rule's action); 8 is still
        // over count in the 10 s window (from 1) and puts it in effect again (8-11);
        // 12 finds it over; 13 starts a new window (counts 1, 2 at 13, 14), 15 is past
        // count (15-18), 19 finds it over, 20 is over count in the window from 13.
        assert_eq!(at(3).len(), 20);
        let rejected: Vec<usize> = alerts
            .iter()
            .filter(|a| a.0 == 3 && a.2 == Some(Action::Reject))
            .map(|a| a.1)
            .collect();
        assert_eq!(rejected, vec![3, 4, 5, 6, 8, 9, 10, 11, 15, 16, 17, 18, 20]);
        assert!(at(4).is_empty() && at(5).is_empty(), "suppressed");
    }
}

/// `track by_both` counts an address pair in both directions as one (Suricata's ippair).
#[test]
fn by_both_is_the_pair_in_either_direction() {
    let e = engine(
        "alert icmp any any -> any any (dsize:>0; threshold:type limit, track by_both, count 2, seconds 60; sid:1;)\n",
    );
    let mut st = DetectState::default();
    let mut fv = FlowVars::default();
    let a = [10, 0, 0, 1];
    let b = [10, 0, 0, 2];
    let ping = |s, d, t| packet::ipv4(s, d, 1, 64, 1, &packet::icmpv4(t, 0, 1, 1, b"ping"));
    let mut n = 0;
    for i in 0..4 {
        n += run(&e, &mut st, &mut fv, &ping(a, b, 8), i * 2).len();
        n += run(&e, &mut st, &mut fv, &ping(b, a, 0), i * 2 + 1).len();
    }
    assert_eq!(n, 2);
}

#[test]
fn header_keywords() {
    let rules = "alert icmp any any -> any any (itype:8; sid:1;)\n\
                 alert icmp any any -> any any (itype:<15; sid:2;)\n\
                 alert icmp any any -> any any (itype:7<>20; sid:4;)\n\
                 alert ip any any -> any any (ttl:64; sid:5;)\n\
                 alert ip any any -> any any (ttl:<10; sid:6;)\n\
                 alert icmp any any -> any any (icmp_id:1; icmp_seq:1; sid:7;)\n\
                 alert icmp any any -> any any (dsize:4; sid:8;)\n";
    let e = engine(rules);
    let mut st = DetectState::default();
    let mut fv = FlowVars::default();
    assert_eq!(
        run(&e, &mut st, &mut fv, &icmp(8), 1),
        vec![1, 2, 4, 5, 7, 8]
    );
    assert_eq!(run(&e, &mut st, &mut fv, &icmp(0), 1), vec![2, 5, 7, 8]);
}

#[test]
fn packet_only_rules_inspect_a_segment_that_went_into_the_stream() {
    // Suricata inspects the payload of a segment added to the stream only for rules
    // that require the packet (`tcp-pkt`, `dsize`, `flow:no_stream`).
    let rules = "alert tcp-pkt any any -> any 80 (content:\"34\"; depth:10; sid:1;)\n\
                 alert tcp any any -> any any (dsize:20; byte_extract:2,0,n,string,dec; content:\"34\"; depth:n; sid:2;)\n\
                 alert tcp any any -> any any (content:\"34\"; sid:3;)\n\
                 alert tcp-pkt any any -> any 81 (content:\"34\"; sid:4;)\n";
    let s: IpAddr = "10.0.0.1".parse().unwrap();
    let d: IpAddr = "10.0.0.2".parse().unwrap();
    let h = packet::TcpHeader {
        src_port: 5362,
        dst_port: 80,
        seq: 1,
        ack: 1,
        flags: packet::PSH | packet::ACK,
        window: 1000,
    };
    let frame = packet::ip(
        s,
        d,
        6,
        64,
        1,
        &packet::tcp(s, d, &h, b"1026\x108 !34.\x11\"3DUf.21"),
    );
    let (p, _) = decode(LINKTYPE_RAW, &frame);
    for naive in [false, true] {
        let mut e = engine(rules);
        e.set_naive(naive);
        let mut st = DetectState::default();
        let mut fv = FlowVars::default();
        let v = PacketView {
            payload: None,
            segment: Some(p.payload),
            stream_bytes: (20, 0),
            ..view(&p, Some(true))
        };
        let mut hits = Vec::new();
        e.inspect_packet(&mut st, &v, Some(&mut fv), &mut hits);
        let sids: Vec<u64> = hits.iter().map(|h| e.sig(h.sig).rule.sid).collect();
        // sid 3 waits for the stream chunk; sid 4 is for another port.
        assert_eq!(sids, vec![1, 2], "naive {naive}");
    }
}

/// Inspects one HTTP transaction in `dir` and returns the sids that matched, in hit
/// order (`sorted` sorts them).
#[allow(clippy::too_many_arguments)]
fn tx_sids(
    e: &Engine,
    st: &mut DetectState,
    td: &mut TxDetect,
    v: &PacketView<'_>,
    dir: Dir,
    tx: &dyn Transaction,
    sorted: bool,
) -> Vec<u64> {
    let mut hits = Vec::new();
    let mut fv = FlowVars::default();
    e.inspect_tx(st, v, AppProto::Http, dir, tx, td, Some(&mut fv), &mut hits);
    let mut sids: Vec<u64> = hits.iter().map(|h| e.sig(h.sig).rule.sid).collect();
    if sorted {
        sids.sort_unstable();
    }
    sids
}

/// A TCP frame from 10.0.0.1:`sp` to 10.0.0.2:`dp`.
fn tcp(sp: u16, dp: u16, payload: &[u8]) -> Vec<u8> {
    let s: IpAddr = "10.0.0.1".parse().unwrap();
    let d: IpAddr = "10.0.0.2".parse().unwrap();
    let h = packet::TcpHeader {
        src_port: sp,
        dst_port: dp,
        seq: 1,
        ack: 1,
        flags: packet::PSH | packet::ACK,
        window: 1000,
    };
    packet::ip(s, d, 6, 64, 1, &packet::tcp(s, d, &h, payload))
}

/// Sorted sids alerting on a TCP packet inspected on its own, going `to_server`.
fn run_tcp(e: &Engine, frame: &[u8], to_server: Option<bool>) -> Vec<u64> {
    let (p, _) = decode(LINKTYPE_RAW, frame);
    let v = view(&p, to_server);
    let mut hits = Vec::new();
    let mut fv = FlowVars::default();
    e.inspect_packet(&mut DetectState::default(), &v, Some(&mut fv), &mut hits);
    let mut sids: Vec<u64> = hits.iter().map(|h| e.sig(h.sig).rule.sid).collect();
    sids.sort_unstable();
    sids
}

/// More port combinations than groups with a prefilter of their own (the rest share
/// one), rules for one flow direction, source-port rules and `<>` rules: each packet is
/// scanned against one group only, and finds what full evaluation finds.
#[test]
fn port_groups_per_direction_agree_with_full_evaluation() {
    let n = 60u16;
    assert!(usize::from(n) > MAX_PORT_GROUPS && usize::from(n) > MAX_TO_CLIENT_GROUPS);
    let mut rules = String::new();
    for i in 0..n {
        rules.push_str(&format!(
            "alert tcp any any -> any {} (content:\"p{i}x\"; sid:{};)\n\
             alert tcp any {} -> any any (flow:to_client; content:\"s{i}x\"; sid:{};)\n",
            2000 + i,
            100 + u32::from(i),
            3000 + i,
            1000 + u32::from(i),
        ));
    }
    rules.push_str(
        "alert tcp any any -> any any (content:\"anyx\"; sid:1;)\n\
         alert tcp any 2005 <> any any (content:\"both\"; sid:2;)\n\
         alert tcp any any -> any [2010,2055] (flow:to_server; content:\"ts\"; sid:3;)\n\
         alert tcp any any -> any any (flow:to_client; content:\"tc\"; sid:4;)\n\
         alert tcp any any -> any any (flow:stateless,to_client; content:\"sl\"; sid:5;)\n\
         alert tcp any any -> any 2055 (dsize:>1; sid:6;)\n",
    );
    let fast = engine(&rules);
    let mut naive = engine(&rules);
    naive.set_naive(true);
    let payload = b"anyx both ts tc sl p5x p10x p39x p55x s5x s55x";
    let cases = [
        (40000, 2005, Some(true), vec![1, 2, 105, 5]),
        (40000, 2010, Some(true), vec![1, 3, 110, 5]),
        (40000, 2055, Some(true), vec![1, 3, 155, 5, 6]),
        (40000, 2055, None, vec![1, 155, 5, 6]),
        (2005, 40000, Some(false), vec![1, 2, 4, 5]),
        (3055, 40000, Some(false), vec![1, 4, 5, 1055]),
        (3055, 2055, Some(false), vec![1, 4, 5, 6, 155, 1055]),
        (3005, 2039, Some(true), vec![1, 5, 139]),
        (1, 1, Some(true), vec![1, 5]),
    ];
    for (sp, dp, to_server, mut want) in cases {
        want.sort_unstable();
        let frame = tcp(sp, dp, payload);
        let got = run_tcp(&fast, &frame, to_server);
        assert_eq!(got, want, "{sp} -> {dp} to_server {to_server:?}");
        assert_eq!(
            run_tcp(&naive, &frame, to_server),
            got,
            "naive, {sp} -> {dp}"
        );
    }
}

/// A response whose body arrives in parts.
#[derive(Debug)]
struct GrowingBody {
    body: Vec<u8>,
    complete: bool,
}

impl Transaction for GrowingBody {
    fn id(&self) -> u64 {
        0
    }
    fn complete(&self, dir: Dir) -> bool {
        dir == Dir::ToServer || self.complete
    }
    fn progress(&self, _dir: Dir) -> u8 {
        u8::from(self.complete)
    }
    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        match (id, index) {
            (meerkat_app::http::detect::RESPONSE_BODY, 0) if self.complete => {
                Buf::Ready(&self.body)
            }
            (meerkat_app::http::detect::RESPONSE_BODY, 0) => Buf::Partial(&self.body),
            _ => Buf::Absent,
        }
    }
    fn record(&self) -> Option<crate::app::AppRecord> {
        None
    }
}

/// A growing body is scanned by the prefilter only where it grew (see `resume_at`): a
/// pattern across the end of the previous scan, and a candidate found in the part
/// scanned before, still alert — as without the prefilter.
#[test]
fn growing_body_scanned_where_it_grew() {
    let rules = "alert http any any -> any any (flow:to_client; file_data; content:\"needle\"; sid:1;)\n\
                 alert http any any -> any any (flow:to_client; file_data; content:\"first\"; fast_pattern; content:\"last\"; sid:2;)\n";
    let frame = tcp(80, 40000, b"");
    let (p, _) = decode(LINKTYPE_RAW, &frame);
    let v = http_view(&p, Some(false));
    for naive in [false, true] {
        let mut e = engine(rules);
        e.set_naive(naive);
        let mut st = DetectState::default();
        let mut td = TxDetect::new(0);
        let mut tx = GrowingBody {
            body: Vec::new(),
            complete: false,
        };
        let mut steps = Vec::new();
        for (part, complete) in [
            (&b"first, then a nee"[..], false),
            (b"dle and", false),
            (b"", false),
            (b" the last", true),
        ] {
            tx.body.extend_from_slice(part);
            tx.complete = complete;
            steps.push(tx_sids(&e, &mut st, &mut td, &v, Dir::ToClient, &tx, false));
        }
        assert_eq!(
            steps,
            vec![vec![], vec![1], vec![], vec![2]],
            "naive {naive}"
        );
    }
}

/// A segment of `BIG_SEGMENT` bytes or more is scanned without the packet-only rules
/// whose `dsize` excludes it; shorter segments with all of them; as full evaluation.
#[test]
fn big_segments_skip_rules_for_short_payloads() {
    let rules = "alert tcp-pkt any any -> any any (dsize:<20; content:\"abc\"; sid:1;)\n\
                 alert tcp any any -> any any (dsize:>200; content:\"abc\"; sid:2;)\n\
                 alert tcp-pkt any any -> any any (content:\"abc\"; sid:3;)\n\
                 alert tcp any any -> any any (dsize:300<>400; content:\"abc\"; sid:4;)\n\
                 alert tcp any any -> any any (dsize:!5; content:\"abc\"; sid:5;)\n";
    let e = engine(rules);
    assert_eq!(max_dsize(&e.sig(0).rule), Some(19));
    assert_eq!(max_dsize(&e.sig(1).rule), None);
    assert_eq!(max_dsize(&e.sig(3).rule), Some(399));
    let mut big = vec![b'x'; BIG_SEGMENT + 100];
    big[7..10].copy_from_slice(b"abc");
    for (payload, want) in [
        (&b"..abc.."[..], vec![1, 3, 5]),
        (&big[..], vec![2, 3, 4, 5]),
    ] {
        let frame = tcp(40000, 80, payload);
        let (p, _) = decode(LINKTYPE_RAW, &frame);
        for naive in [false, true] {
            let mut e = engine(rules);
            e.set_naive(naive);
            let v = PacketView {
                payload: None,
                segment: Some(p.payload),
                ..view(&p, Some(true))
            };
            let mut hits = Vec::new();
            let mut fv = FlowVars::default();
            e.inspect_packet(&mut DetectState::default(), &v, Some(&mut fv), &mut hits);
            let sids: Vec<u64> = hits.iter().map(|h| e.sig(h.sig).rule.sid).collect();
            assert_eq!(sids, want, "{} bytes, naive {naive}", payload.len());
        }
    }
}

/// A segment that went into the stream is inspected, as Suricata does, with the rules
/// whose content is anchored (`offset`, `depth`, `startswith`) when the stream chunk
/// does not match (here: there is none yet), and not with unanchored stream rules;
/// with a matching stream chunk the anchored rule alerts once, on the stream.
#[test]
fn anchored_contents_inspect_the_segment_too() {
    let rules = "alert tcp any any -> any any (content:\"GET \"; depth:4; sid:1;)\n\
                 alert tcp any any -> any any (content:\"ET \"; offset:1; sid:2;)\n\
                 alert tcp any any -> any any (content:\"GET \"; startswith; sid:3;)\n\
                 alert tcp any any -> any any (content:\"GET \"; sid:4;)\n\
                 alert tcp any any -> any any (pcre:\"/^GET /\"; sid:5;)\n\
                 alert tcp any any -> any any (content:\"x\"; content:\"GET \"; distance:0; sid:6;)\n\
                 alert tcp-stream any any -> any any (content:\"GET \"; depth:4; sid:7;)\n\
                 alert tcp any any -> any any (content:\"HTTP\"; depth:300; sid:8;)\n\
                 alert tcp any any -> any any (content:\"GET\"; offset:0; depth:3; content:\"1.0\"; sid:9;)\n";
    let frame = tcp(40000, 80, b"GET / HTTP/1.0\r\n");
    let (p, _) = decode(LINKTYPE_RAW, &frame);
    for naive in [false, true] {
        let mut e = engine(rules);
        e.set_naive(naive);
        for (stream, want) in [
            (None, vec![1, 2, 3, 8, 9]),
            (Some(p.payload), vec![1, 2, 3, 4, 5, 7, 8, 9]),
        ] {
            let v = PacketView {
                payload: None,
                segment: Some(p.payload),
                stream,
                ..view(&p, Some(true))
            };
            let mut hits = Vec::new();
            let mut fv = FlowVars::default();
            e.inspect_packet(&mut DetectState::default(), &v, Some(&mut fv), &mut hits);
            let sids: Vec<u64> = hits.iter().map(|h| e.sig(h.sig).rule.sid).collect();
            assert_eq!(sids, want, "stream {}, naive {naive}", stream.is_some());
            let on_stream = hits.iter().filter(|h| h.stream).count();
            assert_eq!(on_stream, if stream.is_some() { want.len() } else { 0 });
        }
    }
}

/// Sids alerting on one decoded frame of link type `link`, prefiltered and naive.
fn sids_on(rules: &str, link: u16, frame: &[u8]) -> Vec<u64> {
    let (p, ev) = decode(link, frame);
    assert!(ev.is_none());
    let mut out = Vec::new();
    for naive in [false, true] {
        let mut e = engine(rules);
        e.set_naive(naive);
        let mut hits = Vec::new();
        let mut fv = FlowVars::default();
        let v = view(&p, Some(true));
        e.inspect_packet(&mut DetectState::default(), &v, Some(&mut fv), &mut hits);
        let sids: Vec<u64> = hits.iter().map(|h| e.sig(h.sig).rule.sid).collect();
        if naive {
            assert_eq!(sids, out, "prefiltered and naive disagree");
        }
        out = sids;
    }
    out
}

#[test]
fn vlan_id_layers() {
    let rules = "alert ip any any -> any any (vlan.id:200; sid:1;)\n\
                 alert ip any any -> any any (vlan.id:300,1; sid:2;)\n\
                 alert ip any any -> any any (vlan.id:300,-1; sid:3;)\n\
                 alert ip any any -> any any (vlan.id:200,-2; sid:4;)\n\
                 alert ip any any -> any any (vlan.id:>100,all; sid:5;)\n\
                 alert ip any any -> any any (vlan.id:>250,all; sid:6;)\n\
                 alert ip any any -> any any (vlan.id:!500,all; sid:7;)\n\
                 alert ip any any -> any any (vlan.id:200,2; sid:8;)\n\
                 alert ip any any -> any any (vlan.id:200,-3; sid:9;)\n\
                 alert ip any any -> any any (vlan.id:!200; sid:10;)\n";
    // Two tags, 200 outside, 300 inside.
    let inner = udp(b"x");
    let mut tagged = Vec::new();
    tagged.extend_from_slice(&300u16.to_be_bytes());
    tagged.extend_from_slice(&0x0800u16.to_be_bytes());
    tagged.extend_from_slice(&inner);
    let frame = packet::ethernet_vlan([2; 6], [4; 6], 200, 0x8100, &tagged);
    assert_eq!(
        sids_on(rules, meerkat_wire::decode::LINKTYPE_ETHERNET, &frame),
        vec![1, 2, 3, 4, 5, 7, 10]
    );
    // No tags: no vlan.id rule matches, not even the negated ones.
    let plain = packet::ethernet([2; 6], [4; 6], 0x0800, &inner);
    assert!(sids_on(rules, meerkat_wire::decode::LINKTYPE_ETHERNET, &plain).is_empty());
}

#[test]
fn packet_header_buffers() {
    let rules = "alert ip any any -> any any (ipv4.hdr; content:\"|45|\"; startswith; sid:1;)\n\
                 alert ip any any -> any any (ipv6.hdr; content:\"|60|\"; startswith; sid:2;)\n\
                 alert udp any any -> any any (udp.hdr; content:\"|03 e8 00 35|\"; startswith; sid:3;)\n\
                 alert ip any any -> any any (tcp.hdr; content:\"|00|\"; sid:4;)\n\
                 alert ip any any -> any any (ipv4.hdr; content:\"|40|\"; offset:8; depth:1; pkt_data; content:\"x\"; sid:5;)\n\
                 alert ip any any -> any any (ipv4.hdr; bsize:20; sid:6;)\n";
    let l = load_str(rules, &tests_ctx());
    // bsize is a sticky-buffer keyword of app-layer buffers only.
    assert_eq!(l.problems.len(), 1, "{:?}", l.problems);
    let rules: String = rules.lines().take(5).map(|r| format!("{r}\n")).collect();
    // IPv4 + UDP to port 53, TTL 64, payload "x".
    assert_eq!(sids_on(&rules, LINKTYPE_RAW, &udp(b"x")), vec![1, 3, 5]);
    let s = [0u8; 16];
    let mut d = [0u8; 16];
    d[15] = 1;
    let sa: IpAddr = std::net::Ipv6Addr::from(s).into();
    let da: IpAddr = std::net::Ipv6Addr::from(d).into();
    let v6 = packet::ipv6(s, d, 17, 64, &packet::udp(sa, da, 1000, 53, b"y"));
    assert_eq!(sids_on(&rules, LINKTYPE_RAW, &v6), vec![2, 3]);
}

/// A transaction whose response carries a file named `name` (no request file).
#[derive(Debug)]
struct NamedFile(&'static [u8]);

impl Transaction for NamedFile {
    fn id(&self) -> u64 {
        0
    }
    fn complete(&self, _dir: Dir) -> bool {
        true
    }
    fn progress(&self, _dir: Dir) -> u8 {
        1
    }
    fn buffer(&self, id: BufferId, _index: usize) -> Buf<'_> {
        match id {
            meerkat_app::http::detect::FILE_NAME_RESP => Buf::Ready(self.0),
            _ => Buf::Absent,
        }
    }
    fn record(&self) -> Option<crate::app::AppRecord> {
        None
    }
}

/// `filename` is a case-insensitive content on `file.name`, `fileext` one on its end
/// after a dot; negated forms need a file; a direction without a file never matches.
#[test]
fn filename_and_fileext() {
    let rules = "alert tcp any any -> any any (filename:\"R.PDF\"; sid:1;)\n\
                 alert tcp any any -> any any (filename:!\"s.pdf\"; sid:2;)\n\
                 alert tcp any any -> any any (filename:!\"r.pdf\"; sid:3;)\n\
                 alert tcp any any -> any any (fileext:\"pDf\"; sid:4;)\n\
                 alert tcp any any -> any any (fileext:\"df\"; sid:5;)\n\
                 alert tcp any any -> any any (fileext:!\"doc\"; sid:6;)\n\
                 alert tcp any any -> any any (filename:\"regit\"; fileext:\"pdf\"; sid:7;)\n\
                 alert http any any -> any any (file.name; content:\"/~regit/\"; startswith; sid:8;)\n\
                 alert tcp any any -> any any (fileext:\"pdf\"; filename:\"x\"; sid:9;)\n";
    let frame = tcp(80, 40000, b"");
    let (p, _) = decode(LINKTYPE_RAW, &frame);
    let tx = NamedFile(b"/~regit/r.pdf");
    for (dir, want) in [
        (Dir::ToClient, vec![1, 2, 4, 6, 7, 8]),
        (Dir::ToServer, vec![]),
    ] {
        for naive in [false, true] {
            let mut e = engine(rules);
            e.set_naive(naive);
            let v = http_view(&p, Some(dir == Dir::ToServer));
            let sids = tx_sids(
                &e,
                &mut DetectState::default(),
                &mut TxDetect::new(0),
                &v,
                dir,
                &tx,
                true,
            );
            assert_eq!(sids, want, "{dir:?} naive {naive}");
        }
    }
}

/// `absent` matches a buffer missing from the transaction; `absent: or_else` also
/// matches when the buffer exists and its matches hold, and gives no fast pattern.
#[test]
fn absent_buffers() {
    let rules = "alert http any any -> any any (flow:to_client; file.data; absent; sid:1;)\n\
                 alert http any any -> any any (flow:to_client; http.stat_code; absent; sid:2;)\n\
                 alert http any any -> any any (flow:to_client; file.data; absent: or_else; content:\"first\"; sid:3;)\n\
                 alert http any any -> any any (flow:to_client; file.data; absent: or_else; content:\"zzz\"; sid:4;)\n\
                 alert http any any -> any any (flow:to_client; http.stat_code; absent: or_else; content:\"500\"; sid:5;)\n\
                 alert http any any -> any any (flow:to_client; http.stat_code; absent; file.data; content:\"last\"; sid:6;)\n";
    let e = engine(rules);
    assert!(
        e.sig(4).rule.fast.is_none(),
        "or_else contents are not required"
    );
    let frame = tcp(80, 40000, b"");
    let (p, _) = decode(LINKTYPE_RAW, &frame);
    let v = http_view(&p, Some(false));
    let tx = GrowingBody {
        body: b"first and last".to_vec(),
        complete: true,
    };
    for naive in [false, true] {
        let mut e = engine(rules);
        e.set_naive(naive);
        let sids = tx_sids(
            &e,
            &mut DetectState::default(),
            &mut TxDetect::new(0),
            &v,
            Dir::ToClient,
            &tx,
            true,
        );
        assert_eq!(sids, vec![2, 3, 5, 6], "naive {naive}");
    }
}
