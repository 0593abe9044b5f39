//! Rendering typed events as EVE JSON lines, in Suricata's field order:
//! `timestamp, flow_id, pcap_cnt, in_iface, event_type, vlan, src_ip, src_port, dest_ip,
//! dest_port, proto, ip_v, pkt_src, icmp_type, icmp_code, tx_id, <type body>, app_proto,
//! direction, flow, ...`.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use meerkat_proto::events::{
    Alert, AlertAction, Anomaly, Direction, Event, EventType, FlowCounters, FlowRecord,
    PacketSource, Stats,
};

use crate::json::{self, Obj};

/// Name of an event type, as in `event_type` and the `types` filter.
pub fn type_name(t: EventType) -> &'static str {
    match t {
        EventType::Alert => "alert",
        EventType::Flow => "flow",
        EventType::Anomaly => "anomaly",
        EventType::Stats => "stats",
        EventType::Http => "http",
        EventType::Dns => "dns",
        EventType::Tls => "tls",
        EventType::Fileinfo => "fileinfo",
        EventType::Unspecified => "unknown",
    }
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

fn write_ip(buf: &mut Vec<u8>, b: &[u8]) {
    let text = match b.len() {
        4 => IpAddr::V4(Ipv4Addr::new(b[0], b[1], b[2], b[3])).to_string(),
        16 => {
            let mut a = [0u8; 16];
            a.copy_from_slice(b);
            IpAddr::V6(Ipv6Addr::from(a)).to_string()
        }
        _ => String::new(),
    };
    json::string(buf, &text);
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian (Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
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

/// Writes an EVE timestamp (`2023-09-18T06:13:41.532140+0000`, UTC) for µs since the epoch.
pub fn timestamp(buf: &mut Vec<u8>, us: i64) {
    let secs = us.div_euclid(1_000_000);
    let frac = us.rem_euclid(1_000_000);
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400);
    let s = format!(
        "\"{y:04}-{mo:02}-{d:02}T{:02}:{:02}:{:02}.{frac:06}+0000\"",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    );
    buf.extend_from_slice(s.as_bytes());
}

fn pkt_src(s: i32) -> Option<&'static str> {
    match PacketSource::try_from(s).ok()? {
        PacketSource::Wire => Some("wire/pcap"),
        PacketSource::Defrag => Some("defrag"),
        PacketSource::FlowTimeout => Some("stream (flow timeout)"),
        PacketSource::Tunnel => Some("tunnel"),
        PacketSource::Unspecified => None,
    }
}

fn flow_counters(o: &mut Obj<'_>, c: &FlowCounters) {
    o.u64("pkts_toserver", c.pkts_toserver)
        .u64("pkts_toclient", c.pkts_toclient)
        .u64("bytes_toserver", c.bytes_toserver)
        .u64("bytes_toclient", c.bytes_toclient)
        .raw("start", |b| timestamp(b, c.start_us));
}

fn alert_body(o: &mut Obj<'_>, a: &Alert, with_metadata: bool) {
    o.obj("alert", |al| {
        al.str(
            "action",
            match AlertAction::try_from(a.action) {
                Ok(AlertAction::Blocked) => "blocked",
                _ => "allowed",
            },
        )
        .u64("gid", u64::from(a.gid))
        .u64("signature_id", a.signature_id)
        .u64("rev", u64::from(a.rev))
        .str("signature", &a.signature)
        .str("category", &a.category)
        .u64("severity", u64::from(a.severity));
        if with_metadata && !a.metadata.is_empty() {
            al.obj("metadata", |m| {
                for e in &a.metadata {
                    m.raw(&e.key, |b| {
                        json::str_array(b, e.values.iter().map(String::as_str))
                    });
                }
            });
        }
        if !a.references.is_empty() {
            al.raw("references", |b| {
                json::str_array(b, a.references.iter().map(String::as_str))
            });
        }
        if !a.rule.is_empty() {
            al.str("rule", &a.rule);
        }
    });
}

fn tcp_flags_hex(f: u32) -> String {
    format!("{:02x}", f & 0xff)
}

fn flow_body(o: &mut Obj<'_>, f: &FlowRecord) {
    o.obj("flow", |fo| {
        if let Some(c) = &f.counters {
            flow_counters(fo, c);
        }
        fo.raw("end", |b| timestamp(b, f.end_us))
            .u64("age", f.age_s)
            .str("state", &f.state)
            .str("reason", &f.reason)
            .bool("alerted", f.alerted);
    });
    if let Some(t) = &f.tcp {
        o.obj("tcp", |to| {
            to.str("tcp_flags", &tcp_flags_hex(t.tcp_flags))
                .str("tcp_flags_ts", &tcp_flags_hex(t.tcp_flags_ts))
                .str("tcp_flags_tc", &tcp_flags_hex(t.tcp_flags_tc));
            for (bit, name) in [
                (0x01, "fin"),
                (0x02, "syn"),
                (0x04, "rst"),
                (0x08, "psh"),
                (0x10, "ack"),
                (0x20, "urg"),
                (0x40, "ecn"),
                (0x80, "cwr"),
            ] {
                if t.tcp_flags & bit != 0 {
                    to.bool(name, true);
                }
            }
            if !t.state.is_empty() {
                to.str("state", &t.state);
            }
        });
    }
}

fn anomaly_body(o: &mut Obj<'_>, a: &Anomaly) {
    o.obj("anomaly", |an| {
        an.str("type", &a.r#type).str("event", &a.event);
        if !a.app_proto.is_empty() {
            an.str("app_proto", &a.app_proto);
        }
        if !a.layer.is_empty() {
            an.str("layer", &a.layer);
        }
    });
}

/// Writes dotted counter names as nested objects (`capture.kernel_drops` becomes
/// `"capture":{"kernel_drops":..}`).
fn stats_body(o: &mut Obj<'_>, s: &Stats) {
    o.raw("stats", |b| {
        let mut sorted: Vec<(&str, u64)> = s
            .counters
            .iter()
            .map(|c| (c.name.as_str(), c.value))
            .collect();
        sorted.sort_unstable_by(|a, b| a.0.cmp(b.0));
        b.extend_from_slice(b"{\"uptime\":");
        b.extend_from_slice(itoa::Buffer::new().format(s.uptime_s).as_bytes());
        let mut need_comma = true;
        let mut open: Vec<&str> = Vec::new();
        for (name, value) in sorted {
            let parts: Vec<&str> = name.split('.').collect();
            let Some((leaf, path)) = parts.split_last() else {
                continue;
            };
            let common = open.iter().zip(path).take_while(|(a, b)| a == b).count();
            for _ in common..open.len() {
                b.push(b'}');
                need_comma = true;
            }
            open.truncate(common);
            for seg in &path[common..] {
                if need_comma {
                    b.push(b',');
                }
                json::string(b, seg);
                b.extend_from_slice(b":{");
                open.push(seg);
                need_comma = false;
            }
            if need_comma {
                b.push(b',');
            }
            json::string(b, leaf);
            b.push(b':');
            b.extend_from_slice(itoa::Buffer::new().format(value).as_bytes());
            need_comma = true;
        }
        for _ in 0..open.len() {
            b.push(b'}');
        }
        b.push(b'}');
    });
}

/// Options that change how events are rendered (from the output's `types` entries).
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// Log rule metadata in alerts (`metadata: yes`, Suricata's default).
    pub alert_metadata: bool,
    /// Add `pcap_filename`.
    pub pcap_filename: bool,
}

/// Appends one EVE line (with its newline) for `ev` to `buf`.
pub fn render(buf: &mut Vec<u8>, ev: &Event, opts: &RenderOptions) {
    let kind = EventType::try_from(ev.event_type).unwrap_or(EventType::Unspecified);
    let mut o = Obj::new(buf);
    o.raw("timestamp", |b| timestamp(b, ev.timestamp_us));
    if ev.flow_id != 0 {
        o.u64("flow_id", ev.flow_id);
    }
    if ev.pcap_cnt != 0 {
        o.u64("pcap_cnt", ev.pcap_cnt);
    }
    if !ev.in_iface.is_empty() {
        o.str("in_iface", &ev.in_iface);
    }
    o.str("event_type", type_name(kind));
    if !ev.vlan.is_empty() {
        o.raw("vlan", |b| {
            b.push(b'[');
            for (i, v) in ev.vlan.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                b.extend_from_slice(itoa::Buffer::new().format(*v).as_bytes());
            }
            b.push(b']');
        });
    }
    if !ev.src_ip.is_empty() {
        let has_ports = matches!(ev.ip_proto, 6 | 17 | 132);
        o.raw("src_ip", |b| write_ip(b, &ev.src_ip));
        if has_ports {
            o.u64("src_port", u64::from(ev.src_port));
        }
        o.raw("dest_ip", |b| write_ip(b, &ev.dest_ip));
        if has_ports {
            o.u64("dest_port", u64::from(ev.dest_port));
        }
        match proto_name(ev.ip_proto) {
            Some(n) => o.str("proto", n),
            None => o.str("proto", &ev.ip_proto.to_string()),
        };
        o.u64("ip_v", if ev.src_ip.len() == 16 { 6 } else { 4 });
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
    if !ev.pcap_filename.is_empty() && opts.pcap_filename {
        o.str("pcap_filename", &ev.pcap_filename);
    }
    if !ev.flowbits.is_empty() {
        o.obj("metadata", |m| {
            m.raw("flowbits", |b| {
                json::str_array(b, ev.flowbits.iter().map(String::as_str))
            });
        });
    }
    if let Some(tx) = ev.tx_id {
        o.u64("tx_id", tx);
    }
    match kind {
        EventType::Alert => {
            if let Some(a) = &ev.alert {
                alert_body(&mut o, a, opts.alert_metadata);
            }
        }
        EventType::Flow => {
            if !ev.app_proto.is_empty() {
                o.str("app_proto", &ev.app_proto);
            }
            if let Some(f) = &ev.flow {
                flow_body(&mut o, f);
            }
        }
        EventType::Anomaly => {
            if let Some(a) = &ev.anomaly {
                anomaly_body(&mut o, a);
            }
        }
        EventType::Stats => {
            if let Some(s) = &ev.stats {
                stats_body(&mut o, s);
            }
        }
        EventType::Http | EventType::Dns | EventType::Tls => {
            crate::render_app::app_objects(
                &mut o,
                ev.http.as_ref(),
                ev.dns.as_ref(),
                ev.tls.as_ref(),
            );
        }
        _ => {}
    }
    if kind == EventType::Alert {
        // The transaction's app-layer object (`http{...}` in an HTTP alert).
        crate::render_app::app_objects(&mut o, ev.http.as_ref(), ev.dns.as_ref(), ev.tls.as_ref());
    }
    if kind == EventType::Alert {
        if !ev.app_proto.is_empty() {
            o.str("app_proto", &ev.app_proto);
        }
        match Direction::try_from(ev.direction) {
            Ok(Direction::ToServer) => {
                o.str("direction", "to_server");
            }
            Ok(Direction::ToClient) => {
                o.str("direction", "to_client");
            }
            _ => {}
        }
        if let Some(c) = ev.alert.as_ref().and_then(|a| a.flow.as_ref()) {
            o.obj("flow", |fo| {
                flow_counters(fo, c);
                fo.raw("src_ip", |b| write_ip(b, &c.src_ip))
                    .raw("dest_ip", |b| write_ip(b, &c.dest_ip));
                if matches!(ev.ip_proto, 6 | 17 | 132) {
                    fo.u64("src_port", u64::from(c.src_port))
                        .u64("dest_port", u64::from(c.dest_port));
                }
            });
        }
    }
    o.end();
    buf.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;
    use meerkat_proto::events::{Counter, MetadataEntry};

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
    fn timestamps() {
        let mut b = Vec::new();
        timestamp(&mut b, 0);
        timestamp(&mut b, 951_782_400_000_001); // 2000-02-29
        timestamp(&mut b, -1);
        assert_eq!(
            String::from_utf8(b).unwrap(),
            "\"1970-01-01T00:00:00.000000+0000\"\"2000-02-29T00:00:00.000001+0000\"\"1969-12-31T23:59:59.999999+0000\""
        );
    }

    #[test]
    fn stats_nest() {
        let ev = Event {
            event_type: EventType::Stats as i32,
            timestamp_us: 0,
            stats: Some(Stats {
                uptime_s: 5,
                counters: [
                    ("decoder.pkts", 10),
                    ("capture.kernel_drops", 1),
                    ("decoder.bytes", 99),
                    ("flow.memuse", 3),
                ]
                .iter()
                .map(|(n, v)| Counter {
                    name: n.to_string(),
                    value: *v,
                })
                .collect(),
            }),
            ..Default::default()
        };
        let mut b = Vec::new();
        render(&mut b, &ev, &RenderOptions::default());
        let v: serde_json::Value = serde_json::from_slice(&b).unwrap();
        assert_eq!(
            v["stats"],
            serde_json::json!({"uptime": 5, "capture": {"kernel_drops": 1}, "decoder": {"bytes": 99, "pkts": 10}, "flow": {"memuse": 3}})
        );
    }
}
