//! The prefiltered engine against the naive one (every rule of a group evaluated on every
//! packet and buffer): the prefilter may only skip rules that cannot match, so both must
//! raise exactly the same alerts, on the same packets.
//!
//! Traffic and rules come from a seeded generator (tokens shared by payloads and rule
//! contents, so that many rules match and many nearly match), and, when `../shared` is
//! there, from the suricata-verify corpus and a slice of ET Open over `mix-small.pcap`.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::path::{Path, PathBuf};

use meerkat_config::Config;
use meerkat_detect::engine::Engine;
use meerkat_detect::engine::mpm::Algo;
use meerkat_detect::rules::{self, RuleContext};
use meerkat_detect::{InProcess, InProcessResult};
use meerkat_proto::events::{Event, EventType};
use meerkat_synth::Frame;
use meerkat_synth::session::{self, TcpSession};

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const TOKENS: &[&[u8]] = &[
    b"GET ",
    b"POST ",
    b"/admin",
    b"cmd.exe",
    b"User-Agent: ",
    b"SELECT",
    b"select",
    b"UNION",
    b"\r\n",
    b"passwd",
    b"AAAA",
    b"\x90\x90\x90\x90",
    b"Host: ",
    b"evil",
    b"login",
    b"abc",
    b"/etc/",
    b"../",
    b"%2e",
    b"\x00\x01",
    b"MZ",
    b"This program",
    b"password=",
    b"x",
    b"zz",
];

const PORTS: &[u16] = &[80, 8080, 443, 53, 25, 21, 1234, 445, 4444];

/// A payload of tokens and random bytes.
fn payload(rng: &mut Rng, max: usize) -> Vec<u8> {
    let len = 1 + rng.below(max);
    let mut p = Vec::with_capacity(len + 16);
    while p.len() < len {
        if rng.chance(60) {
            p.extend_from_slice(TOKENS[rng.below(TOKENS.len())]);
        } else {
            for _ in 0..1 + rng.below(12) {
                p.push(rng.next() as u8);
            }
        }
    }
    p
}

/// When conversation `i` of a generated capture starts (ns): 3 ms after the one before.
fn conversation_start(i: usize) -> u64 {
    1_700_000_000u64 * 1_000_000_000 + i as u64 * 3_000_000
}

fn addr(text: String) -> IpAddr {
    text.parse().expect("valid address")
}

/// A capture of TCP sessions (some cut short, some on VLANs), UDP exchanges and pings.
fn traffic(rng: &mut Rng, conversations: usize) -> Vec<Frame> {
    let mut convs = Vec::new();
    for i in 0..conversations {
        let start = conversation_start(i);
        let client = addr(format!("10.0.{}.{}", rng.below(4), 1 + rng.below(200)));
        let server: IpAddr = if rng.chance(15) {
            addr(format!("2001:db8::{:x}", 1 + rng.below(50)))
        } else {
            addr(format!("192.0.2.{}", 1 + rng.below(50)))
        };
        let client = if server.is_ipv6() {
            addr(format!("2001:db8:1::{:x}", 1 + rng.below(200)))
        } else {
            client
        };
        let cport = 1024 + rng.below(60000) as u16;
        let sport = *rng.pick(PORTS);
        let (c, s) = (
            SocketAddr::new(client, cport),
            SocketAddr::new(server, sport),
        );
        match rng.below(10) {
            0..=6 => {
                let mut t = TcpSession::new(c, s, start);
                if rng.chance(10) {
                    t = t.vlan(1 + rng.below(100) as u16);
                }
                t = t.mss(200 + rng.below(1300));
                t.handshake();
                for _ in 0..1 + rng.below(4) {
                    if rng.chance(60) {
                        t.client_sends(&payload(rng, 3000));
                    } else {
                        t.server_sends(&payload(rng, 3000));
                    }
                }
                if rng.chance(80) {
                    t.close();
                }
                convs.push(t.into_frames());
            }
            7 | 8 => {
                let req = payload(rng, 600);
                let resp = payload(rng, 600);
                let resp = rng.chance(70).then_some(resp.as_slice());
                convs.push(session::udp_exchange(
                    c, s, start, 200_000, &req, resp, None,
                ));
            }
            _ => {
                let data = payload(rng, 100);
                convs.push(session::ping(client, server, start, i as u16, &data));
            }
        }
    }
    session::interleave(convs)
}

/// Rule text for a content: printable bytes as they are, the rest as |hex|.
fn content_text(bytes: &[u8]) -> String {
    let mut s = String::new();
    let mut in_hex = false;
    for &b in bytes {
        let plain = b.is_ascii_alphanumeric() || b" ./_-=%:".contains(&b);
        if plain {
            if in_hex {
                s.push('|');
                in_hex = false;
            }
            s.push(b as char);
        } else {
            s.push(if in_hex { ' ' } else { '|' });
            in_hex = true;
            let _ = write!(s, "{b:02x}");
        }
    }
    if in_hex {
        s.push('|');
    }
    s
}

fn port_text(rng: &mut Rng) -> String {
    match rng.below(8) {
        0..=3 => "any".to_string(),
        4 | 5 => rng.pick(PORTS).to_string(),
        6 => format!("[{},{}]", rng.pick(PORTS), rng.pick(PORTS)),
        _ => format!("!{}", rng.pick(PORTS)),
    }
}

/// A random rule with `sid`.
fn rule(rng: &mut Rng, sid: u32) -> String {
    let proto = *rng.pick(&[
        "tcp",
        "tcp",
        "tcp",
        "udp",
        "ip",
        "icmp",
        "tcp-pkt",
        "tcp-stream",
    ]);
    let dir = if rng.chance(15) { "<>" } else { "->" };
    let (sp, dp) = (port_text(rng), port_text(rng));
    let (sp, dp) = if matches!(proto, "ip" | "icmp") {
        ("any".to_string(), "any".to_string())
    } else {
        (sp, dp)
    };
    let mut opts = String::new();
    if proto.starts_with("tcp") && rng.chance(40) {
        let f = *rng.pick(&[
            "established,to_server",
            "established,to_client",
            "to_server",
            "from_server",
            "established",
        ]);
        let _ = write!(opts, " flow:{f};");
    }
    if rng.chance(10) {
        let _ = write!(
            opts,
            " dsize:{}{};",
            rng.pick(&[">", "<", ""]),
            rng.below(400)
        );
    }
    let contents = rng.below(4);
    let fast = (contents > 0 && rng.chance(20)).then(|| rng.below(contents));
    for i in 0..contents {
        let mut bytes = TOKENS[rng.below(TOKENS.len())].to_vec();
        if rng.chance(25) {
            bytes.extend_from_slice(TOKENS[rng.below(TOKENS.len())]);
        }
        let neg = i > 0 && rng.chance(15);
        let _ = write!(
            opts,
            " content:{}\"{}\";",
            if neg { "!" } else { "" },
            content_text(&bytes)
        );
        if rng.chance(20) {
            opts.push_str(" nocase;");
        }
        if i == 0 {
            if rng.chance(15) {
                let _ = write!(opts, " offset:{};", rng.below(20));
            }
            if rng.chance(15) {
                let _ = write!(opts, " depth:{};", bytes.len() + rng.below(200));
            }
        } else {
            if rng.chance(30) {
                let _ = write!(opts, " distance:{};", rng.below(10) as i64 - 2);
            }
            if rng.chance(30) {
                let _ = write!(opts, " within:{};", bytes.len() + rng.below(100));
            }
        }
        if fast == Some(i) && !neg {
            opts.push_str(" fast_pattern;");
        }
    }
    if rng.chance(10) {
        let a = String::from_utf8_lossy(TOKENS[rng.below(8)])
            .trim()
            .to_string();
        let _ = write!(opts, " pcre:\"/{a}.{{0,40}}[a-z]/i\";");
    }
    if rng.chance(5) {
        let _ = write!(opts, " isdataat:{};", rng.below(1000));
    }
    format!(
        "alert {proto} any {sp} {dir} any {dp} (msg:\"generated {sid}\";{opts} sid:{sid}; rev:1;)"
    )
}

/// An alert as compared: (sid, packet number, flow, transaction, packet source).
type Key = (u64, u64, u64, Option<u64>, i32);

fn alert_keys(events: &[Event]) -> Vec<Key> {
    let mut keys: Vec<Key> = events
        .iter()
        .filter(|e| e.event_type == EventType::Alert as i32)
        .map(|e| {
            let sid = e.alert.as_ref().map_or(0, |a| a.signature_id);
            (sid, e.pcap_cnt, e.flow_id, e.tx_id, e.pkt_src)
        })
        .collect();
    keys.sort_unstable();
    keys
}

fn engine(text: &str, config: &Config, algo: Algo, naive: bool) -> (Engine, usize) {
    let ctx = RuleContext::from_config(config).expect("rule context");
    let loaded = rules::load_str(text, &ctx);
    let n = loaded.rules.len();
    let mut e = Engine::with_algo(loaded.rules, loaded.names, algo);
    e.set_naive(naive);
    (e, n)
}

/// The alerts of the naive engine `naive` on one capture (`run` runs an engine over it),
/// after asserting that the prefiltered engine of every algorithm raises the same ones;
/// `what` names the capture in the failure message.
fn naive_alerts_same_as_prefiltered(
    what: &str,
    config: &Config,
    rules: &str,
    naive: Engine,
    run: impl Fn(Engine) -> InProcessResult,
) -> Vec<Key> {
    let naive = alert_keys(&run(naive).events);
    for algo in algos() {
        let (e, _) = engine(rules, config, algo, false);
        let fast = alert_keys(&run(e).events);
        assert!(
            naive == fast,
            "{what}, {algo:?}: {} alerts without prefilter, {} with\n{}",
            naive.len(),
            fast.len(),
            describe(&naive, &fast, rules)
        );
    }
    naive
}

/// [`naive_alerts_same_as_prefiltered`] on the generated `frames` of seed `seed`.
fn generated_alerts(
    seed: u64,
    config: &Config,
    rules: &str,
    naive: Engine,
    frames: &[Frame],
) -> Vec<Key> {
    let frames = || frames.iter().map(|f| (f.ts_ns, &f.data[..]));
    naive_alerts_same_as_prefiltered(&format!("seed {seed}"), config, rules, naive, |e| {
        InProcess::run_frames(config, e, frames())
    })
}

/// What differs between two sorted alert lists, with the rules of the sids involved.
fn describe(naive: &[Key], fast: &[Key], rules: &str) -> String {
    let mut count: BTreeMap<Key, i64> = BTreeMap::new();
    for k in naive {
        *count.entry(*k).or_default() += 1;
    }
    for k in fast {
        *count.entry(*k).or_default() -= 1;
    }
    let mut out = String::new();
    for (k, c) in count.iter().filter(|(_, c)| **c != 0).take(20) {
        let what = if *c > 0 {
            "missed by the prefilter"
        } else {
            "extra with the prefilter"
        };
        let text = rules
            .lines()
            .find(|l| l.contains(&format!(" sid:{};", k.0)))
            .unwrap_or("?");
        let _ = writeln!(out, "{what}: {k:?}\n    {text}");
    }
    out
}

fn algos() -> Vec<Algo> {
    let mut a = vec![Algo::Fingerprint];
    if Algo::HYPERSCAN_AVAILABLE {
        a.push(Algo::Hyperscan);
    }
    a
}

#[test]
fn generated_rules_and_traffic_alert_the_same_with_and_without_prefilter() {
    let config = Config::default();
    let mut total_alerts = 0usize;
    let mut sids_hit = std::collections::BTreeSet::new();
    for seed in 1..=6u64 {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed.wrapping_mul(0x1234_5678_9abc_def1));
        let frames = traffic(&mut rng, 150);
        let rules: String = (1..=400u32).map(|sid| rule(&mut rng, sid) + "\n").collect();
        let (naive_engine, loaded) = engine(&rules, &config, Algo::Fingerprint, true);
        assert!(
            loaded >= 390,
            "seed {seed}: only {loaded}/400 generated rules loaded"
        );
        let naive = generated_alerts(seed, &config, &rules, naive_engine, &frames);
        total_alerts += naive.len();
        sids_hit.extend(naive.iter().map(|k| k.0));
    }
    // The comparison means something only if rules matched, and many different ones.
    assert!(total_alerts > 1000, "only {total_alerts} alerts");
    assert!(
        sids_hit.len() > 300,
        "only {} rules ever matched",
        sids_hit.len()
    );
}

/// Words of app-layer fields (URIs, header values, bodies, DNS labels, SNIs): shared by
/// traffic and rules so that sticky-buffer contents match often, and nearly match often.
const APP_WORDS: &[&str] = &[
    "admin", "login", "cmd.exe", "passwd", "etc", "evil", "abc", "select", "SELECT", "union", "x",
    "zz", "php", "wp-", "js", "id=", "AAAA", "update", "Mozilla", "curl",
];

fn words(rng: &mut Rng, max: usize, sep: &str) -> String {
    (0..1 + rng.below(max))
        .map(|_| *rng.pick(APP_WORDS))
        .collect::<Vec<_>>()
        .join(sep)
}

/// One HTTP/1.1 request with tokens in its URI, headers and body.
fn http_request(rng: &mut Rng) -> Vec<u8> {
    let method = *rng.pick(&["GET", "POST", "PUT", "HEAD"]);
    let mut uri = format!("/{}", words(rng, 4, "/"));
    if rng.chance(40) {
        uri.push_str(&format!("?{}", words(rng, 3, "&")));
    }
    if rng.chance(15) {
        uri.push_str("/%2e%2e/%61dmin");
    }
    let mut h = format!(
        "{method} {uri} HTTP/1.1\r\nHost: {}.example\r\n",
        words(rng, 2, ".")
    );
    if rng.chance(70) {
        h.push_str(&format!(
            "User-Agent: {}/{}\r\n",
            words(rng, 2, " "),
            rng.below(10)
        ));
    }
    if rng.chance(30) {
        h.push_str(&format!("Cookie: s={}\r\n", words(rng, 2, "")));
    }
    if rng.chance(20) {
        h.push_str(&format!("Referer: http://{}/\r\n", words(rng, 2, ".")));
    }
    let body = if method == "POST" || method == "PUT" {
        words(rng, 6, "&")
    } else {
        String::new()
    };
    if !body.is_empty() {
        h.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    h.push_str("\r\n");
    h.push_str(&body);
    h.into_bytes()
}

/// One HTTP/1.1 response, its body by length or chunked.
fn http_response(rng: &mut Rng) -> Vec<u8> {
    let status = *rng.pick(&["200 OK", "404 Not Found", "302 Found", "500 Oops"]);
    let body = words(rng, 12, " ");
    let mut h = format!("HTTP/1.1 {status}\r\nServer: {}\r\n", words(rng, 2, "/"));
    if rng.chance(30) {
        h.push_str(&format!("Location: /{}\r\n", words(rng, 2, "/")));
    }
    if rng.chance(30) {
        h.push_str("Transfer-Encoding: chunked\r\n\r\n");
        let (a, b) = body.split_at(body.len() / 2);
        for part in [a, b] {
            if !part.is_empty() {
                h.push_str(&format!("{:x}\r\n{part}\r\n", part.len()));
            }
        }
        h.push_str("0\r\n\r\n");
    } else {
        h.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    }
    h.into_bytes()
}

/// A TCP session of the app-layer traffic from `c` to `s`, with a random MSS, its
/// handshake done.
fn app_session(rng: &mut Rng, c: (IpAddr, u16), s: (IpAddr, u16), start: u64) -> TcpSession {
    let mut t = TcpSession::new(c.into(), s.into(), start).mss(100 + rng.below(1400));
    t.handshake();
    t
}

/// HTTP (pipelined, keep-alive, on usual and unusual ports), DNS over UDP and TLS hellos.
fn app_traffic(rng: &mut Rng, conversations: usize) -> Vec<Frame> {
    let mut convs = Vec::new();
    for i in 0..conversations {
        let start = conversation_start(i);
        let client = addr(format!("10.1.{}.{}", rng.below(4), 1 + rng.below(200)));
        let server = addr(format!("198.51.100.{}", 1 + rng.below(50)));
        let cport = 1024 + rng.below(60000) as u16;
        match rng.below(10) {
            0..=5 => {
                let sport = *rng.pick(&[80, 80, 8080, 8000, 1234]);
                let mut t = app_session(rng, (client, cport), (server, sport), start);
                let n = 1 + rng.below(3);
                if rng.chance(30) {
                    // Pipelined: every request first, then every response.
                    let reqs: Vec<u8> = (0..n).flat_map(|_| http_request(rng)).collect();
                    t.client_sends(&reqs);
                    let resps: Vec<u8> = (0..n).flat_map(|_| http_response(rng)).collect();
                    t.server_sends(&resps);
                } else {
                    for _ in 0..n {
                        t.client_sends(&http_request(rng));
                        t.server_sends(&http_response(rng));
                    }
                }
                if rng.chance(80) {
                    t.close();
                }
                convs.push(t.into_frames());
            }
            6..=7 => {
                let sport = *rng.pick(&[53, 53, 5353]);
                let name = format!("{}.example", words(rng, 3, "."));
                let id = rng.below(65536) as u16;
                let q = meerkat_synth::sample::dns_query(id, &name, 1);
                let a = meerkat_synth::sample::dns_response_a(id, &name, [192, 0, 2, 1]);
                let resp = rng.chance(70).then_some(a.as_slice());
                convs.push(session::udp_exchange(
                    SocketAddr::new(client, cport),
                    SocketAddr::new(server, sport),
                    start,
                    200_000,
                    &q,
                    resp,
                    None,
                ));
            }
            _ => {
                let sport = *rng.pick(&[443, 8443]);
                let mut t = app_session(rng, (client, cport), (server, sport), start);
                let sni = format!("{}.example", words(rng, 3, "."));
                t.client_sends(&meerkat_synth::sample::tls_client_hello(
                    &sni,
                    rng.below(256) as u8,
                ));
                t.close();
                convs.push(t.into_frames());
            }
        }
    }
    session::interleave(convs)
}

/// A random app-layer rule: one or two sticky buffers (or legacy modifiers), contents from
/// [`APP_WORDS`] with positions, transforms, pcre.
fn app_rule(rng: &mut Rng, sid: u32) -> String {
    const HTTP_REQ: &[&str] = &[
        "http.uri",
        "http.uri.raw",
        "http.method",
        "http.host",
        "http.user_agent",
        "http.header",
        "http.cookie",
        "http.request_body",
        "http.request_line",
        "http.referer",
        "http.header_names",
    ];
    const HTTP_RESP: &[&str] = &[
        "http.stat_code",
        "http.stat_msg",
        "http.server",
        "http.location",
        "http.response_body",
        "file.data",
        "http.response_line",
    ];
    let (proto, bufs, flow): (&str, Vec<&str>, &str) = match rng.below(10) {
        0..=4 => {
            let mut b = vec![*rng.pick(HTTP_REQ)];
            if rng.chance(30) {
                b.push(*rng.pick(HTTP_REQ));
            }
            ("http", b, "to_server")
        }
        5..=6 => {
            let mut b = vec![*rng.pick(HTTP_RESP)];
            if rng.chance(30) {
                b.insert(0, *rng.pick(HTTP_REQ));
            }
            ("http", b, "to_client")
        }
        7..=8 => ("dns", vec!["dns.query"], "to_server"),
        _ => ("tls", vec!["tls.sni"], "to_server"),
    };
    let mut opts = String::new();
    if rng.chance(50) {
        let _ = write!(opts, " flow:established,{flow};");
    }
    // Legacy modifiers only before any sticky buffer (as Suricata requires).
    let mut sticky = false;
    for b in bufs {
        let word = |rng: &mut Rng| -> String {
            match b {
                "http.method" => rng.pick(&["GET", "POST", "PUT", "HEAD"]).to_string(),
                "http.stat_code" => rng.pick(&["200", "404", "302", "500"]).to_string(),
                _ => rng.pick(APP_WORDS).to_string(),
            }
        };
        let legacy = match b {
            "http.uri" => Some("http_uri"),
            "http.method" => Some("http_method"),
            "http.header" => Some("http_header"),
            "http.cookie" => Some("http_cookie"),
            "http.request_body" => Some("http_client_body"),
            "http.stat_code" => Some("http_stat_code"),
            _ => None,
        }
        .filter(|_| !sticky && rng.chance(30));
        if legacy.is_none() {
            sticky = true;
            let _ = write!(opts, " {b};");
            if rng.chance(10) {
                const TRANSFORMS: [&str; 3] = [" to_lowercase;", " to_uppercase;", " url_decode;"];
                opts.push_str(TRANSFORMS[rng.below(TRANSFORMS.len())]);
            }
        }
        for i in 0..1 + rng.below(2) {
            let w = word(rng);
            let neg = i > 0 && rng.chance(15);
            let _ = write!(opts, " content:{}\"{}\";", if neg { "!" } else { "" }, w);
            if let Some(m) = legacy {
                let _ = write!(opts, " {m};");
            }
            if rng.chance(20) {
                opts.push_str(" nocase;");
            }
            if i == 0 && rng.chance(15) {
                let _ = write!(opts, " depth:{};", w.len() + rng.below(30));
            }
            if i > 0 && !neg && rng.chance(30) {
                let _ = write!(opts, " distance:0; within:{};", w.len() + rng.below(40));
            }
        }
        if legacy.is_none() && rng.chance(10) {
            let _ = write!(opts, " pcre:\"/{}.{{0,20}}[a-z]/R\";", rng.pick(APP_WORDS));
        }
    }
    format!("alert {proto} any any -> any any (msg:\"app {sid}\";{opts} sid:{sid}; rev:1;)")
}

#[test]
fn generated_app_layer_rules_and_traffic_alert_the_same_with_and_without_prefilter() {
    let config = Config::default();
    let mut total_alerts = 0usize;
    let mut sids_hit = std::collections::BTreeSet::new();
    let mut with_tx = 0usize;
    for seed in 1..=4u64 {
        let mut rng = Rng(0x5851_f42d_4c95_7f2d ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let frames = app_traffic(&mut rng, 150);
        let rules: String = (1..=300u32)
            .map(|sid| app_rule(&mut rng, sid) + "\n")
            .collect();
        let (naive_engine, loaded) = engine(&rules, &config, Algo::Fingerprint, true);
        if loaded != 300 {
            let ctx = RuleContext::from_config(&config).expect("rule context");
            let problems = rules::load_str(&rules, &ctx).problems;
            panic!("seed {seed}: generated app-layer rules refused: {problems:#?}");
        }
        let naive = generated_alerts(seed, &config, &rules, naive_engine, &frames);
        total_alerts += naive.len();
        with_tx += naive.iter().filter(|k| k.3.is_some()).count();
        sids_hit.extend(naive.iter().map(|k| (seed, k.0)));
    }
    // App-layer alerts carry their transaction: the rules matched transactions, not packets.
    assert!(total_alerts > 500, "only {total_alerts} alerts");
    assert_eq!(with_tx, total_alerts, "app-layer alerts without a tx_id");
    eprintln!(
        "{total_alerts} app-layer alerts; {} of 1200 generated rules matched",
        sids_hit.len()
    );
    assert!(
        sids_hit.len() > 400,
        "only {} of 1200 app-layer rules ever matched",
        sids_hit.len()
    );
}

fn shared_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("MEERKAT_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"));
    if dir.join("corpus").is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: {} is absent (set MEERKAT_SHARED to the shared corpus)",
            dir.display()
        );
        None
    }
}

/// Every file of `dir` (not recursive) whose name ends with one of `exts`.
fn files_with(dir: &Path, exts: &[&str]) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| exts.iter().any(|x| n.ends_with(x)))
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Test directories of the suricata-verify corpus (those with a test.yaml).
fn verify_dirs(root: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(root) else {
        return;
    };
    let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            if p.join("test.yaml").is_file() {
                out.push(p.clone());
            }
            verify_dirs(&p, out);
        }
    }
}

#[test]
fn suricata_verify_corpus_alerts_the_same_with_and_without_prefilter() {
    let Some(shared) = shared_dir() else {
        return;
    };
    let mut dirs = Vec::new();
    verify_dirs(&shared.join("corpus/suricata-verify"), &mut dirs);
    assert!(dirs.len() > 100, "only {} corpus tests found", dirs.len());
    let config = Config::default();
    let (mut compared, mut alerts) = (0, 0);
    let mut failures = String::new();
    for dir in &dirs {
        let rule_files = files_with(dir, &[".rules"]);
        let pcaps = files_with(dir, &[".pcap", ".pcapng"]);
        if rule_files.is_empty() || pcaps.is_empty() {
            continue;
        }
        let text: String = rule_files
            .iter()
            .filter_map(|p| std::fs::read_to_string(p).ok())
            .collect::<Vec<_>>()
            .join("\n");
        for pcap in &pcaps {
            let mut results = Vec::new();
            for (algo, naive) in [(Algo::Fingerprint, true), (Algo::Fingerprint, false)]
                .into_iter()
                .chain(Algo::HYPERSCAN_AVAILABLE.then_some((Algo::Hyperscan, false)))
            {
                let (e, _) = engine(&text, &config, algo, naive);
                match InProcess::run_pcap(&config, e, pcap) {
                    Ok(r) => results.push((algo, alert_keys(&r.events))),
                    // Damaged captures are part of the corpus: what was read before the
                    // damage is not compared (run_pcap stops there).
                    Err(_) => break,
                }
            }
            if results.len() < 2 {
                continue;
            }
            compared += 1;
            let naive = &results[0].1;
            alerts += naive.len();
            for (algo, fast) in &results[1..] {
                if naive != fast {
                    let _ = writeln!(
                        failures,
                        "{} ({algo:?}): {} alerts without prefilter, {} with\n{}",
                        pcap.display(),
                        naive.len(),
                        fast.len(),
                        describe(naive, fast, &text)
                    );
                }
            }
        }
    }
    eprintln!("compared {compared} corpus captures, {alerts} alerts without prefilter");
    assert!(failures.is_empty(), "{failures}");
    assert!(
        compared > 100 && alerts > 100,
        "{compared} captures, {alerts} alerts"
    );
}

#[test]
fn et_open_slice_on_mix_small_alerts_the_same_with_and_without_prefilter() {
    let Some(shared) = shared_dir() else {
        return;
    };
    let pcap = shared.join("corpus/traffic/mix-small.pcap");
    let rule_files: Vec<PathBuf> =
        files_with(&shared.join("corpus/rules/et-open-2023-05"), &[".rules"])
            .into_iter()
            .filter(|p| !p.to_string_lossy().contains("deleted"))
            .collect();
    let all: String = rule_files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect::<Vec<_>>()
        .join("\n");
    // A slice of the rules keeps the naive run short; the sids Suricata alerted on
    // (listed by the reference output) are always in it.
    let reference =
        std::fs::read_to_string(shared.join("corpus/traffic/mix-small.suricata-8.0.6.alerts.json"))
            .unwrap_or_default();
    let mut text = String::new();
    let mut kept = 0;
    for (i, line) in all.lines().enumerate() {
        let t = line.trim_start();
        if !t.starts_with("alert") {
            continue;
        }
        let sid = t
            .split("sid:")
            .nth(1)
            .and_then(|s| s.split(';').next())
            .unwrap_or("");
        if i % 8 == 0 || (!sid.is_empty() && reference.contains(&format!("\"{sid}\":"))) {
            text.push_str(line);
            text.push('\n');
            kept += 1;
        }
    }
    let mut config = Config::default();
    config
        .vars
        .address_groups
        .insert("HOME_NET".into(), meerkat_config::VarValue("any".into()));
    config.vars.address_groups.insert(
        "EXTERNAL_NET".into(),
        meerkat_config::VarValue("any".into()),
    );
    let (e, loaded) = engine(&text, &config, Algo::Fingerprint, true);
    eprintln!("{loaded} of {kept} ET rules loaded");
    let naive = naive_alerts_same_as_prefiltered("mix-small", &config, &text, e, |e| {
        InProcess::run_pcap(&config, e, &pcap).expect("mix-small reads")
    });
    eprintln!(
        "{} alerts, the same with and without prefilter",
        naive.len()
    );
    assert!(
        !naive.is_empty(),
        "the ET slice raised no alert on mix-small"
    );
}
