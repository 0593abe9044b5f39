//! Rendering typed events as EVE JSON lines, in Suricata's field order:
//! `timestamp, flow_id, pcap_cnt, in_iface, event_type, vlan, src_ip, src_port, dest_ip,
//! dest_port, proto, ip_v, pkt_src, icmp_type, icmp_code, metadata, tx_id, <type body>,
//! app_proto, direction, flow, ..., payload, payload_printable, stream, packet,
//! packet_info, pcap_filename` (Suricata adds `pcap_filename` last, to every record).
//!
//! The common header is written here; each event type's body lives in its own module
//! ([`alert`], [`flow`], [`anomaly`], [`stats`]) and [`render`] picks it by
//! `event_type`. An application protocol's record (`http`, `dns`, ...) is rendered by
//! its protocol (its descriptor's `render`, in meerkat-app), as its own event and, in
//! alerts, where Suricata puts the app-layer object ([`app_object`]).
//!
//! The hot path allocates nothing: numbers, addresses and timestamps are formatted into
//! the output buffer directly.

pub mod alert;
pub mod anomaly;
mod app_tests;
pub mod community;
pub mod flow;
pub mod stats;

use meerkat_app::list::{record_descriptor, record_proto};
use meerkat_app::{APP_PROTOS, AppRecord, PROTOCOLS};
use meerkat_proto::events::{Event, EventType, PacketSource};

use crate::json::{self, Obj};

/// The event types that are not a protocol's, with their names.
const CORE: [(EventType, &str); 5] = [
    (EventType::Alert, "alert"),
    (EventType::Flow, "flow"),
    (EventType::Anomaly, "anomaly"),
    (EventType::Stats, "stats"),
    (EventType::Fileinfo, "fileinfo"),
];

/// Number of event kinds: the core types, then one per application protocol (a kind
/// of a protocol without an EVE record has no name and no events).
pub const KINDS: usize = CORE.len() + APP_PROTOS - 1;
// An output's type mask has a bit per kind.
const _: () = assert!(KINDS <= 64);

/// The kind of an event type that is not an app record.
pub fn core_kind(t: EventType) -> Option<usize> {
    CORE.iter().position(|(c, _)| *c == t)
}

/// The kind of `ev` (`None`: a type this writer does not know).
pub fn kind(ev: &Event) -> Option<usize> {
    let t = EventType::try_from(ev.event_type).ok()?;
    if t == EventType::App {
        let p = ev.app.as_ref().map(record_proto)?;
        return (p.index() >= 1).then(|| CORE.len() + p.index() - 1);
    }
    core_kind(t)
}

/// The `outputs.eve-log.types` name of kind `k`: its `event_type`, but `files` for
/// `fileinfo` records (as Suricata names them).
pub fn kind_type_name(k: usize) -> Option<&'static str> {
    match CORE.get(k) {
        Some((_, "fileinfo")) => Some("files"),
        Some((_, n)) => Some(n),
        // A protocol's records: `bittorrent-dht` for `bittorrent_dht` ones.
        None => PROTOCOLS
            .get(k - CORE.len())
            .and_then(|d| d.eve_types_name()),
    }
}

/// The EVE `event_type` of kind `k` (the `outputs.eve-log.types` name but for
/// `fileinfo`, see [`kind_type_name`]).
pub fn kind_name(k: usize) -> Option<&'static str> {
    match CORE.get(k) {
        Some((_, n)) => Some(n),
        None => PROTOCOLS
            .get(k - CORE.len())
            .and_then(|d| d.record)
            .map(|r| r.event_type),
    }
}

/// Writes the protocol object of `r` (`"http":{...}`): its protocol renders it.
pub fn app_object(o: &mut Obj<'_>, r: &AppRecord) {
    if let Some(rec) = record_descriptor(r).and_then(|d| d.record) {
        (rec.render)(r, o);
    }
}

/// Writes an alert's app-layer objects: the transaction's (`"http":{...}`) and its
/// files (`"files":[...]`), where Suricata puts them.
pub fn app_objects(o: &mut Obj<'_>, ev: &Event) {
    if let Some(r) = &ev.app {
        app_object(o, r);
    }
    meerkat_app::files::eve::files(o, &ev.files);
}

/// IANA protocol names as Suricata prints them.
pub fn proto_name(p: u32) -> Option<&'static str> {
    Some(match p {
        1 => "ICMP",
        2 => "IGMP",
        6 => "TCP",
        17 => "UDP",
        41 => "IPv6",
        47 => "GRE",
        50 => "ESP",
        51 => "AH",
        58 => "IPv6-ICMP",
        89 => "OSPF",
        103 => "PIM",
        112 => "VRRP",
        132 => "SCTP",
        _ => return None,
    })
}

/// Appends the decimal digits of `v`.
pub(crate) fn push_u64(buf: &mut Vec<u8>, v: u64) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Writes an address (4 or 16 bytes) as a JSON string; other lengths give `""`.
pub(crate) fn write_ip(buf: &mut Vec<u8>, b: &[u8]) {
    buf.push(b'"');
    match b.len() {
        4 => {
            for (i, octet) in b.iter().enumerate() {
                if i > 0 {
                    buf.push(b'.');
                }
                push_u64(buf, u64::from(*octet));
            }
        }
        16 => {
            // Suricata prints IPv6 addresses in full: eight groups of four lower-case hex
            // digits (`2001:0db8:0000:...`), not RFC 5952's compressed form; SIEM rules and
            // lookups keyed on Suricata's text depend on it.
            const HEX: &[u8; 16] = b"0123456789abcdef";
            for (i, pair) in b.chunks_exact(2).enumerate() {
                if i > 0 {
                    buf.push(b':');
                }
                for byte in pair {
                    buf.push(HEX[usize::from(byte >> 4)]);
                    buf.push(HEX[usize::from(byte & 0x0f)]);
                }
            }
        }
        _ => {}
    }
    buf.push(b'"');
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Hinnant's algorithm).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// (year, month, day) to days since 1970-01-01 (inverse of [`civil_from_days`]).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DDTHH:MM:SS` of a second since the epoch (years clamped into 0..=9999).
fn second_text(secs: i64) -> [u8; 19] {
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400) as u32;
    let y = y.clamp(0, 9999) as u32;
    let two = |v: u32| [b'0' + (v / 10) as u8, b'0' + (v % 10) as u8];
    let mut t = *b"0000-00-00T00:00:00";
    t[0..2].copy_from_slice(&two(y / 100));
    t[2..4].copy_from_slice(&two(y % 100));
    t[5..7].copy_from_slice(&two(mo));
    t[8..10].copy_from_slice(&two(d));
    t[11..13].copy_from_slice(&two(sod / 3600));
    t[14..16].copy_from_slice(&two(sod / 60 % 60));
    t[17..19].copy_from_slice(&two(sod % 60));
    t
}

thread_local! {
    /// The two seconds formatted last on this thread (an event's timestamps mostly
    /// share a second with the previous event's, or with each other): only the
    /// microseconds change.
    static SECONDS: std::cell::RefCell<[(i64, [u8; 19]); 2]> =
        const { std::cell::RefCell::new([(i64::MIN, [0; 19]); 2]) };
}

/// Writes an EVE timestamp (`"2023-09-18T06:13:41.532140+0000"`, UTC) for µs since the
/// epoch. Years outside 0..=9999 are clamped into that range (JSON must stay valid).
pub fn timestamp(buf: &mut Vec<u8>, us: i64) {
    let secs = us.div_euclid(1_000_000);
    let mut t = *b"\"0000-00-00T00:00:00.000000+0000\"";
    let date = SECONDS.with_borrow_mut(|c| {
        if c[0].0 == secs {
            c[0].1
        } else if c[1].0 == secs {
            c.swap(0, 1);
            c[0].1
        } else {
            c[1] = c[0];
            c[0] = (secs, second_text(secs));
            c[0].1
        }
    });
    t[1..20].copy_from_slice(&date);
    let mut frac = us.rem_euclid(1_000_000) as u32;
    for d in t[21..27].iter_mut().rev() {
        *d = b'0' + (frac % 10) as u8;
        frac /= 10;
    }
    buf.extend_from_slice(&t);
}

pub(crate) fn pkt_src(s: i32) -> Option<&'static str> {
    match PacketSource::try_from(s).ok()? {
        PacketSource::Wire => Some("wire/pcap"),
        PacketSource::Defrag => Some("defrag"),
        PacketSource::FlowTimeout => Some("stream (flow timeout)"),
        PacketSource::DetectLog => Some("stream (detect/log)"),
        PacketSource::Tunnel => Some("tunnel"),
        PacketSource::Gre => Some("gre tunnel"),
        PacketSource::Vxlan => Some("vxlan encapsulation"),
        PacketSource::Geneve => Some("geneve encapsulation"),
        PacketSource::Teredo => Some("teredo tunnel"),
        PacketSource::Ipv4Tunnel => Some("ipv4 tunnel"),
        PacketSource::Ipv6Tunnel => Some("ipv6 tunnel"),
        PacketSource::Unspecified => None,
    }
}

/// Whether the protocol has ports in EVE (`src_port`, `dest_port`).
pub(crate) fn has_ports(ip_proto: u32) -> bool {
    matches!(ip_proto, 6 | 17 | 132)
}

/// Options that change how events are rendered (from the output's `types` entries).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RenderOptions {
    /// Log rule metadata in alerts (`metadata: yes`, Suricata's default).
    pub alert_metadata: bool,
    /// Alerts: `payload` (base64), `payload-printable`, `packet` (with `packet_info`),
    /// and the most stream bytes a payload shows (`payload-buffer-size` less one).
    pub alert_payload: bool,
    pub alert_payload_printable: bool,
    pub alert_packet: bool,
    pub max_stream_payload: usize,
    /// Add `pcap_filename`.
    pub pcap_filename: bool,
    /// Add `community_id` with this seed (`community-id`, `community-id-seed`).
    pub community_id: Option<u16>,
    /// `stats`: the totals over all processes (`totals: yes`, the default).
    pub stats_totals: bool,
    /// `stats`: each process's own counters under `threads` (`threads: yes`).
    pub stats_threads: bool,
}

/// Appends one EVE line (with its newline) for `ev` to `buf`.
pub fn render(buf: &mut Vec<u8>, ev: &Event, opts: &RenderOptions) {
    let kind = EventType::try_from(ev.event_type).unwrap_or(EventType::Unspecified);
    let name = self::kind(ev).and_then(kind_name).unwrap_or("unknown");
    let mut o = Obj::new(buf);
    o.raw("timestamp", |b| timestamp(b, ev.timestamp_us));
    if ev.flow_id != 0 {
        o.u64("flow_id", ev.flow_id);
    }
    if ev.parent_id != 0 {
        o.u64("parent_id", ev.parent_id);
    }
    if ev.pcap_cnt != 0 {
        o.u64("pcap_cnt", ev.pcap_cnt);
    }
    if !ev.in_iface.is_empty() {
        o.str("in_iface", &ev.in_iface);
    }
    o.str("event_type", name);
    if !ev.vlan.is_empty() {
        o.raw("vlan", |b| {
            b.push(b'[');
            for (i, v) in ev.vlan.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                push_u64(b, u64::from(*v));
            }
            b.push(b']');
        });
    }
    if !ev.src_ip.is_empty() {
        let ports = has_ports(ev.ip_proto);
        o.raw("src_ip", |b| write_ip(b, &ev.src_ip));
        if ports {
            o.u64("src_port", u64::from(ev.src_port));
        }
        o.raw("dest_ip", |b| write_ip(b, &ev.dest_ip));
        if ports {
            o.u64("dest_port", u64::from(ev.dest_port));
        }
        let ip_v = if ev.src_ip.len() == 16 { 6 } else { 4 };
        // Suricata's flow records put `ip_v` first (their header is the flow's).
        if kind == EventType::Flow {
            o.u64("ip_v", ip_v);
        }
        match proto_name(ev.ip_proto) {
            Some(n) => o.str("proto", n),
            None => o.raw("proto", |b| {
                b.push(b'"');
                push_u64(b, u64::from(ev.ip_proto));
                b.push(b'"');
            }),
        };
        if kind != EventType::Flow {
            o.u64("ip_v", ip_v);
        }
    }
    if let Some(s) = pkt_src(ev.pkt_src) {
        o.str("pkt_src", s);
    }
    if let Some(t) = ev.icmp_type {
        o.u64("icmp_type", u64::from(t));
    }
    if let Some(c) = ev.icmp_code {
        o.u64("icmp_code", u64::from(c));
    }
    if let Some(f) = &ev.flow {
        if let Some(t) = f.response_icmp_type {
            o.u64("response_icmp_type", u64::from(t));
        }
        if let Some(c) = f.response_icmp_code {
            o.u64("response_icmp_code", u64::from(c));
        }
    }
    if !ev.flowbits.is_empty() {
        o.obj("metadata", |m| {
            m.raw("flowbits", |b| {
                json::str_array(b, ev.flowbits.iter().map(String::as_str))
            });
        });
    }
    // Suricata writes it with the record's header, except in flow records (after the
    // `flow` object).
    let community = opts.community_id.and_then(|seed| community::of(ev, seed));
    let community = community
        .as_ref()
        .map(|c| std::str::from_utf8(c).expect("community id is base64"));
    if kind != EventType::Flow
        && let Some(c) = community
    {
        o.str("community_id", c);
    }
    let top_tx_id = kind != EventType::App
        || ev
            .app
            .as_ref()
            .and_then(|r| record_descriptor(r)?.record)
            .is_none_or(|d| d.tx_id);
    if let Some(tx) = ev.tx_id.filter(|_| top_tx_id) {
        o.u64("tx_id", tx);
    }
    match kind {
        EventType::Alert => alert::body(&mut o, ev, opts),
        EventType::Flow => flow::body(&mut o, ev, community),
        EventType::Anomaly => anomaly::body(&mut o, ev),
        EventType::Stats => stats::body(&mut o, ev, opts),
        EventType::App => {
            if let Some(r) = &ev.app {
                app_object(&mut o, r);
            }
        }
        EventType::Fileinfo => {
            // Suricata's order: the transaction's object (`http`), `app_proto`, then
            // `fileinfo`.
            if let Some(r) = &ev.app {
                app_object(&mut o, r);
            }
            if !ev.app_proto.is_empty() {
                o.str("app_proto", &ev.app_proto);
            }
            if let Some(f) = &ev.fileinfo {
                meerkat_app::files::eve::fileinfo(&mut o, f);
            }
        }
        EventType::Unspecified => {}
    }
    if !ev.pcap_filename.is_empty() && opts.pcap_filename {
        o.str("pcap_filename", &ev.pcap_filename);
    }
    o.end();
    buf.push(b'\n');
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use meerkat_proto::events::{
        Alert, AlertAction, Direction, FlowCounters, FlowRecord, MetadataEntry, TcpSummary,
    };

    pub(crate) fn sample_alert() -> Event {
        Event {
            event_type: EventType::Alert as i32,
            timestamp_us: 1_695_017_621_532_140,
            flow_id: 1234,
            pcap_cnt: 7,
            src_ip: vec![10, 0, 0, 1],
            src_port: 40000,
            dest_ip: vec![10, 0, 0, 2],
            dest_port: 80,
            ip_proto: 6,
            pkt_src: PacketSource::Wire as i32,
            direction: Direction::ToServer as i32,
            alert: Some(Alert {
                action: AlertAction::Allowed as i32,
                gid: 1,
                signature_id: 2000001,
                rev: 3,
                signature: "ET TEST \"quoted\"".to_string(),
                category: "A Network Trojan was detected".to_string(),
                severity: 1,
                metadata: vec![MetadataEntry {
                    key: "created_at".to_string(),
                    values: vec!["2020_01_01".to_string()],
                }],
                flow: Some(FlowCounters {
                    pkts_toserver: 3,
                    pkts_toclient: 2,
                    bytes_toserver: 300,
                    bytes_toclient: 200,
                    start_us: 1_695_017_621_000_000,
                    src_ip: vec![10, 0, 0, 1],
                    src_port: 40000,
                    dest_ip: vec![10, 0, 0, 2],
                    dest_port: 80,
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    pub(crate) fn sample_flow() -> Event {
        Event {
            event_type: EventType::Flow as i32,
            timestamp_us: 1_695_017_700_000_000,
            flow_id: 99,
            src_ip: vec![0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
            src_port: 5353,
            dest_ip: vec![0x20, 1, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2],
            dest_port: 443,
            ip_proto: 6,
            app_proto: "tls".to_string(),
            flow: Some(FlowRecord {
                counters: Some(FlowCounters {
                    pkts_toserver: 10,
                    pkts_toclient: 8,
                    bytes_toserver: 1500,
                    bytes_toclient: 9000,
                    start_us: 1_695_017_600_000_000,
                    ..Default::default()
                }),
                end_us: 1_695_017_650_000_000,
                age_s: 50,
                state: "closed".to_string(),
                reason: "timeout".to_string(),
                alerted: false,
                tcp: Some(TcpSummary {
                    tcp_flags: 0x1b,
                    tcp_flags_ts: 0x1b,
                    tcp_flags_tc: 0x1a,
                    state: "closed".to_string(),
                    ts_max_regions: 1,
                    tc_max_regions: 1,
                    ..Default::default()
                }),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn alert_line_in_suricata_order() {
        let mut b = Vec::new();
        render(
            &mut b,
            &sample_alert(),
            &RenderOptions {
                alert_metadata: true,
                ..Default::default()
            },
        );
        let line = String::from_utf8(b).unwrap();
        assert_eq!(
            line,
            "{\"timestamp\":\"2023-09-18T06:13:41.532140+0000\",\"flow_id\":1234,\"pcap_cnt\":7,\
             \"event_type\":\"alert\",\"src_ip\":\"10.0.0.1\",\"src_port\":40000,\"dest_ip\":\"10.0.0.2\",\
             \"dest_port\":80,\"proto\":\"TCP\",\"ip_v\":4,\"pkt_src\":\"wire/pcap\",\"alert\":{\"action\":\"allowed\",\
             \"gid\":1,\"signature_id\":2000001,\"rev\":3,\"signature\":\"ET TEST \\\"quoted\\\"\",\
             \"category\":\"A Network Trojan was detected\",\"severity\":1,\"metadata\":{\"created_at\":[\"2020_01_01\"]}},\
             \"direction\":\"to_server\",\"flow\":{\"pkts_toserver\":3,\"pkts_toclient\":2,\"bytes_toserver\":300,\
             \"bytes_toclient\":200,\"start\":\"2023-09-18T06:13:41.000000+0000\",\"src_ip\":\"10.0.0.1\",\
             \"dest_ip\":\"10.0.0.2\",\"src_port\":40000,\"dest_port\":80}}\n"
        );
    }

    #[test]
    fn flow_line_with_ipv6() {
        let mut b = Vec::new();
        render(&mut b, &sample_flow(), &RenderOptions::default());
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["src_ip"], "2001:0db8:0000:0000:0000:0000:0000:0001");
        assert_eq!(v["ip_v"], 6);
        assert_eq!(v["flow"]["age"], 50);
        assert_eq!(v["tcp"]["tcp_flags"], "1b");
        assert_eq!(v["tcp"]["tcp_flags_tc"], "1a");
        assert_eq!(v["tcp"]["syn"], true);
        assert_eq!(v["app_proto"], "tls");
    }

    #[test]
    fn timestamps() {
        let mut b = Vec::new();
        timestamp(&mut b, 0);
        timestamp(&mut b, 951_782_400_000_001); // 2000-02-29
        timestamp(&mut b, -1);
        timestamp(&mut b, 1_695_017_621_532_140);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "\"1970-01-01T00:00:00.000000+0000\"\"2000-02-29T00:00:00.000001+0000\"\
             \"1969-12-31T23:59:59.999999+0000\"\"2023-09-18T06:13:41.532140+0000\""
        );
        // The per-thread cache of formatted seconds: repeats, alternations, neighbours.
        let reference = |us: i64| {
            let secs = us.div_euclid(1_000_000);
            let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
            let sod = secs.rem_euclid(86_400);
            format!(
                "\"{:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:06}+0000\"",
                y.clamp(0, 9999),
                sod / 3600,
                sod / 60 % 60,
                sod % 60,
                us.rem_euclid(1_000_000)
            )
        };
        let base = 1_695_017_621_532_140i64;
        for us in [
            0,
            -20_000_000,
            1,
            999_999,
            -20_000_000,
            467_860,
            86_400_000_000,
            0,
            -1,
        ]
        .into_iter()
        .map(|d| base + d)
        {
            let mut b = Vec::new();
            timestamp(&mut b, us);
            assert_eq!(String::from_utf8(b).unwrap(), reference(us));
        }
        for days in [-800_000i64, -1, 0, 1, 11_016, 19_618, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn odd_values_stay_valid_json() {
        let mut ev = sample_alert();
        ev.src_ip = vec![1, 2, 3];
        ev.ip_proto = 253;
        ev.timestamp_us = i64::MAX;
        if let Some(a) = ev.alert.as_mut() {
            a.metadata[0].key = "we\"ird\n".to_string();
        }
        let mut b = Vec::new();
        render(
            &mut b,
            &ev,
            &RenderOptions {
                alert_metadata: true,
                ..Default::default()
            },
        );
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(v["proto"], "253");
        assert_eq!(v["src_ip"], "");
        assert!(v["alert"]["metadata"]["we\"ird\n"].is_array());
    }
}
