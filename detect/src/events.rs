//! Building the typed events (protobuf) that go to the eve-writer.

use std::net::IpAddr;

use meerkat_proto::events::{
    Alert, AlertAction, Anomaly, Direction, Event, EventType, ExceptionPolicy, FileInfo,
    FlowCounters, FlowRecord, PacketSource, TcpSummary, Tunnel as TunnelRecord,
};
use meerkat_shm::PacketMeta;

use crate::app::AppProto;
use crate::app::AppRecord;
use crate::flow::{EndReason, Exception, Flow};
use crate::rules::{Action, Rule};
use meerkat_wire::checksum;
use meerkat_wire::decode::{L4, Packet, Tunnel};

/// Most bytes of a packet (or of its payload) an alert carries for `packet` and
/// `payload`: libpcap's largest snapshot length, more than any frame capture keeps.
pub const MAX_EVENT_PACKET: usize = 262_144;

/// Where the packet of an event came from (EVE `pkt_src`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketSrc {
    Wire,
    Defrag,
    /// A pseudo packet made at flow end.
    FlowTimeout,
    /// A pseudo packet made when a flow changes protocol, to inspect and log the old
    /// protocol's transactions (Suricata's detect/log flush).
    DetectLog,
    /// A packet out of tunnel `via`, `depth` tunnels deep inside the captured packet
    /// `root`.
    Tunnel {
        via: Tunnel,
        depth: u8,
        root: TunnelRoot,
    },
}

/// The outermost packet around a tunnelled one (EVE `tunnel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TunnelRoot {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
    pub proto: u8,
    pub pcap_cnt: u64,
    pub src_kind: PacketSource,
}

impl TunnelRoot {
    /// The root of the tunnels in `p` (whose event source is `src`).
    pub fn of(p: &Packet<'_>, meta: &PacketMeta, src: PacketSrc) -> Option<TunnelRoot> {
        if let PacketSrc::Tunnel { root, .. } = src {
            return Some(root);
        }
        let ip = p.ip?;
        let (sp, dp) = p.ports();
        Some(TunnelRoot {
            src: ip.src,
            dst: ip.dst,
            src_port: sp,
            dst_port: dp,
            proto: ip.proto,
            pcap_cnt: meta.seq,
            src_kind: src.proto(),
        })
    }
}

impl PacketSrc {
    /// Whether the packet was made by the worker, not read from the capture.
    pub fn is_pseudo(self) -> bool {
        matches!(self, PacketSrc::FlowTimeout | PacketSrc::DetectLog)
    }

    fn proto(self) -> PacketSource {
        match self {
            PacketSrc::Wire => PacketSource::Wire,
            PacketSrc::Defrag => PacketSource::Defrag,
            PacketSrc::FlowTimeout => PacketSource::FlowTimeout,
            PacketSrc::DetectLog => PacketSource::DetectLog,
            PacketSrc::Tunnel { via, .. } => match via {
                Tunnel::Gre => PacketSource::Gre,
                Tunnel::Vxlan => PacketSource::Vxlan,
                Tunnel::Geneve => PacketSource::Geneve,
                Tunnel::Teredo => PacketSource::Teredo,
                Tunnel::Ipv4 => PacketSource::Ipv4Tunnel,
                Tunnel::Ipv6 => PacketSource::Ipv6Tunnel,
            },
        }
    }
}

fn ip_bytes(ip: IpAddr) -> Vec<u8> {
    match ip {
        IpAddr::V4(a) => a.octets().to_vec(),
        IpAddr::V6(a) => a.octets().to_vec(),
    }
}

fn ts_us(ns: u64) -> i64 {
    (ns / 1000).min(i64::MAX as u64) as i64
}

/// The counters of an alert's `flow{}`, with the flow's addresses (an alert's own
/// addresses are its packet's, which may go server -> client).
fn counters(flow: &Flow) -> FlowCounters {
    FlowCounters {
        src_ip: ip_bytes(flow.client.0),
        src_port: u32::from(flow.client.1),
        dest_ip: ip_bytes(flow.server.0),
        dest_port: u32::from(flow.server.1),
        ..bare_counters(flow)
    }
}

/// The counters of a `flow` record: its addresses are the event's own (client ->
/// server), so they are not repeated (two allocations per flow fewer, here and in the
/// eve-writer's decoder).
fn bare_counters(flow: &Flow) -> FlowCounters {
    FlowCounters {
        pkts_toserver: flow.pkts_toserver,
        pkts_toclient: flow.pkts_toclient,
        bytes_toserver: flow.bytes_toserver,
        bytes_toclient: flow.bytes_toclient,
        start_us: ts_us(flow.start_ns),
        ..Default::default()
    }
}

/// The common header of a packet's event.
fn packet_event(
    kind: EventType,
    p: &Packet<'_>,
    meta: &PacketMeta,
    flow: Option<(&Flow, bool)>,
    src: PacketSrc,
) -> Event {
    let mut ev = Event {
        event_type: kind as i32,
        timestamp_us: ts_us(meta.ts_ns),
        // A pseudo packet made at flow end was not read from the capture: Suricata
        // gives it no `pcap_cnt`.
        pcap_cnt: if src.is_pseudo() { 0 } else { meta.seq },
        pkt_src: src.proto() as i32,
        vlan: p.vlans().iter().map(|&v| u32::from(v)).collect(),
        ..Default::default()
    };
    if let Some(ip) = p.ip {
        let (sp, dp) = p.ports();
        ev.src_ip = ip_bytes(ip.src);
        ev.dest_ip = ip_bytes(ip.dst);
        ev.src_port = u32::from(sp);
        ev.dest_port = u32::from(dp);
        ev.ip_proto = u32::from(ip.proto);
    }
    if let L4::Icmp {
        icmp_type, code, ..
    } = p.l4
    {
        ev.icmp_type = Some(u32::from(icmp_type));
        ev.icmp_code = Some(u32::from(code));
    }
    if let Some((f, to_server)) = flow {
        ev.flow_id = f.id;
        ev.parent_id = f.app.parent_id;
        ev.direction = if to_server {
            Direction::ToServer
        } else {
            Direction::ToClient
        } as i32;
    }
    ev
}

/// An `alert` event for `rule` matching packet `p`.
pub fn alert(
    rule: &Rule,
    p: &Packet<'_>,
    meta: &PacketMeta,
    flow: Option<(&Flow, bool)>,
    src: PacketSrc,
) -> Event {
    let mut ev = packet_event(EventType::Alert, p, meta, flow, src);
    if let PacketSrc::Tunnel { depth, root, .. } = src {
        ev.tunnel = Some(TunnelRecord {
            src_ip: ip_bytes(root.src),
            src_port: u32::from(root.src_port),
            dest_ip: ip_bytes(root.dst),
            dest_port: u32::from(root.dst_port),
            ip_proto: u32::from(root.proto),
            depth: u32::from(depth),
            pcap_cnt: root.pcap_cnt,
            pkt_src: root.src_kind as i32,
        });
    }
    let mut metadata: Vec<meerkat_proto::events::MetadataEntry> = Vec::new();
    for (k, v) in &rule.metadata {
        match metadata.iter_mut().find(|m| &m.key == k) {
            Some(m) => m.values.push(v.clone()),
            None => metadata.push(meerkat_proto::events::MetadataEntry {
                key: k.clone(),
                values: vec![v.clone()],
            }),
        }
    }
    ev.alert = Some(Alert {
        action: match rule.action {
            // IDS mode: drop rules alert as allowed; reject rules (which Suricata answers
            // with a reset or unreachable in IDS mode too) as blocked, as Suricata 8.
            Action::Alert | Action::Drop | Action::Pass => AlertAction::Allowed,
            Action::Reject => AlertAction::Blocked,
        } as i32,
        gid: rule.gid,
        signature_id: rule.sid,
        rev: rule.rev,
        signature: rule.msg.clone(),
        category: rule.category.clone(),
        severity: rule.severity,
        metadata,
        references: rule.references.clone(),
        flow: flow.map(|(f, _)| counters(f)),
    });
    ev
}

/// The EVE action of an alert whose action a threshold.config `rate_filter` changed to
/// `new_action`: as Suricata 8 in IDS mode, `blocked` when the new action or the rule's
/// own is `drop` or `reject`, else `allowed`.
pub fn rate_filtered_action(rule: Action, new_action: Action) -> AlertAction {
    let drops = |a| matches!(a, Action::Drop | Action::Reject);
    if drops(rule) || drops(new_action) {
        AlertAction::Blocked
    } else {
        AlertAction::Allowed
    }
}

/// An `anomaly` event for a decoder event.
pub fn decode_anomaly(name: &str, p: &Packet<'_>, meta: &PacketMeta, src: PacketSrc) -> Event {
    let mut ev = packet_event(EventType::Anomaly, p, meta, None, src);
    ev.anomaly = Some(Anomaly {
        r#type: "decode".to_string(),
        event: name.to_string(),
        ..Default::default()
    });
    ev
}

/// A stream `anomaly` (`stream.<name>`) raised by packet `p` of flow `flow_id`.
pub fn stream_anomaly(
    name: &str,
    p: &Packet<'_>,
    meta: &PacketMeta,
    flow_id: u64,
    src: PacketSrc,
) -> Event {
    let mut ev = packet_event(EventType::Anomaly, p, meta, None, src);
    ev.flow_id = flow_id;
    ev.anomaly = Some(Anomaly {
        r#type: "stream".to_string(),
        event: format!("stream.{name}"),
        ..Default::default()
    });
    ev
}

/// An application-layer `anomaly` raised by packet `p` of `flow`: a parser's event
/// (`layer` `proto_parser`, with its transaction's id) or a protocol-detection event
/// (`proto_detect`, `tx_id` none), named as Suricata's EVE names it.
pub fn app_anomaly(
    event: String,
    layer: &str,
    tx_id: Option<u64>,
    p: &Packet<'_>,
    meta: &PacketMeta,
    flow: &Flow,
    src: PacketSrc,
) -> Event {
    let mut ev = packet_event(EventType::Anomaly, p, meta, None, src);
    ev.flow_id = flow.id;
    ev.parent_id = flow.app.parent_id;
    ev.tx_id = tx_id;
    let proto = flow.app.proto;
    ev.anomaly = Some(Anomaly {
        r#type: "applayer".to_string(),
        event,
        // A flow whose protocol is unknown (or not recognised) names none.
        app_proto: if proto.descriptor().is_some() {
            proto.name().to_string()
        } else {
            String::new()
        },
        layer: layer.to_string(),
    });
    ev
}

/// Puts a transaction's record into an event (`http{...}` inside an alert).
pub fn attach_record(ev: &mut Event, r: AppRecord) {
    ev.app = Some(r);
}

/// The protocol's own event (`http`, `dns`, ...) of a finished transaction.
pub fn app_record(
    p: &Packet<'_>,
    meta: &PacketMeta,
    flow: &Flow,
    to_server: bool,
    src: PacketSrc,
    tx_id: u64,
    r: AppRecord,
) -> Event {
    let mut ev = packet_event(EventType::App, p, meta, Some((flow, to_server)), src);
    // App records are written client -> server, whichever packet finished them, but
    // for the protocols whose records take the packet's direction (SIP).
    let packet_dir = flow
        .app
        .proto
        .descriptor()
        .and_then(|d| d.record)
        .is_some_and(|r| r.packet_dir);
    if !packet_dir || p.ip.is_none() {
        ev.src_ip = ip_bytes(flow.client.0);
        ev.src_port = u32::from(flow.client.1);
        ev.dest_ip = ip_bytes(flow.server.0);
        ev.dest_port = u32::from(flow.server.1);
    }
    ev.direction = Direction::Unspecified as i32;
    ev.tx_id = Some(tx_id);
    ev.app_proto = flow.app.proto.name().to_string();
    attach_record(&mut ev, r);
    ev
}

/// A `fileinfo` event: file `fi` of a transaction whose record is `r`, written in the
/// file's direction (`file_to_server`: client -> server), as Suricata writes them.
pub fn fileinfo(
    p: &Packet<'_>,
    meta: &PacketMeta,
    flow: &Flow,
    file_to_server: bool,
    src: PacketSrc,
    r: Option<AppRecord>,
    fi: FileInfo,
) -> Event {
    let mut ev = packet_event(
        EventType::Fileinfo,
        p,
        meta,
        Some((flow, file_to_server)),
        src,
    );
    let (src, dst) = if file_to_server {
        (flow.client, flow.server)
    } else {
        (flow.server, flow.client)
    };
    ev.src_ip = ip_bytes(src.0);
    ev.src_port = u32::from(src.1);
    ev.dest_ip = ip_bytes(dst.0);
    ev.dest_port = u32::from(dst.1);
    ev.direction = Direction::Unspecified as i32;
    ev.app_proto = flow.app.proto.name().to_string();
    ev.app = r;
    ev.fileinfo = Some(fi);
    ev
}

/// The protocols of the flow's directions where they are not the flow's (EVE
/// `app_proto_ts`, `app_proto_tc`): the protocol a direction's first data was
/// recognised as, or `failed` when it was probed and recognised as none; empty when
/// the same as the flow's, or when the direction had no data.
pub fn dir_protos(flow: &Flow) -> (String, String) {
    let app = &flow.app;
    let one = |d: usize| {
        let p = app.dir_proto[d];
        if app.proto == AppProto::Unknown || p == app.proto {
            String::new()
        } else if p != AppProto::Unknown {
            p.name().to_string()
        } else if app.dir_probed[d] && app.proto != AppProto::Failed {
            AppProto::Failed.name().to_string()
        } else {
            String::new()
        }
    };
    (one(0), one(1))
}

/// The protocols of a flow that changed protocol, where they are not the flow's (EVE
/// `app_proto_orig`: the one before the change; `app_proto_expected`: the one it is
/// changing to, while the old one's transactions are flushed).
pub fn changed_protos(flow: &Flow) -> (String, String) {
    let app = &flow.app;
    let name = |p: AppProto| {
        if p == AppProto::Unknown || p == app.proto {
            String::new()
        } else {
            p.name().to_string()
        }
    };
    (name(app.orig), name(app.expected))
}

/// A `flow` event for an ended flow.
pub fn flow_end(flow: &Flow, reason: EndReason) -> Event {
    let flags = flow.tcp_flags_ts | flow.tcp_flags_tc;
    let (app_proto_ts, app_proto_tc) = dir_protos(flow);
    let (app_proto_orig, app_proto_expected) = changed_protos(flow);
    let mut exception_policy = Vec::new();
    for e in Exception::ALL {
        let applied = if e == Exception::AppLayerError {
            flow.app.parse_error
        } else {
            flow.exceptions & e as u8 != 0
        };
        if applied {
            exception_policy.push(ExceptionPolicy {
                target: e.target().to_string(),
                policy: "ignore".to_string(),
            });
        }
    }
    Event {
        app_proto: flow.app.proto.name().to_string(),
        app_proto_ts,
        app_proto_tc,
        app_proto_orig,
        app_proto_expected,
        icmp_type: flow.icmp_ts.map(|(t, _)| u32::from(t)),
        icmp_code: flow.icmp_ts.map(|(_, c)| u32::from(c)),
        event_type: EventType::Flow as i32,
        timestamp_us: ts_us(flow.last_ns),
        flow_id: flow.id,
        parent_id: flow.app.parent_id,
        src_ip: ip_bytes(flow.client.0),
        src_port: u32::from(flow.client.1),
        dest_ip: ip_bytes(flow.server.0),
        dest_port: u32::from(flow.server.1),
        ip_proto: u32::from(flow.proto),
        vlan: flow.vlan[..usize::from(flow.vlan_len)]
            .iter()
            .map(|&v| u32::from(v))
            .collect(),
        flow: Some(FlowRecord {
            counters: Some(bare_counters(flow)),
            end_us: ts_us(flow.last_ns),
            age_s: (flow.last_ns.saturating_sub(flow.start_ns)) / 1_000_000_000,
            state: flow.state().to_string(),
            reason: reason.as_str().to_string(),
            alerted: flow.alerted,
            tcp: (flow.proto == 6).then(|| {
                let side = |d: usize| flow.tcp.as_deref().map(|s| &s.sides[d]);
                let regions = |d: usize| side(d).map_or(0, |s| u32::from(s.max_regions.max(1)));
                let gap = |d: usize| side(d).is_some_and(|s| s.gap_bytes > 0);
                TcpSummary {
                    tcp_flags: u32::from(flags),
                    tcp_flags_ts: u32::from(flow.tcp_flags_ts),
                    tcp_flags_tc: u32::from(flow.tcp_flags_tc),
                    state: flow
                        .tcp
                        .as_ref()
                        .map(|s| s.state.name().to_string())
                        .unwrap_or_default(),
                    ts_gap: gap(0),
                    tc_gap: gap(1),
                    ts_max_regions: regions(0),
                    tc_max_regions: regions(1),
                }
            }),
            tx_cnt: flow.app.tx_cnt,
            exception_policy,
            response_icmp_type: flow.icmp_tc.map(|(t, _)| u32::from(t)),
            response_icmp_code: flow.icmp_tc.map(|(_, c)| u32::from(c)),
        }),
        ..Default::default()
    }
}

/// The bytes of the pseudo packet an alert at flow end is logged with (`packet`), made
/// as Suricata makes them: an IPv4 (or IPv6) header and a bare TCP header (no flags,
/// window 2560, acknowledgement 0) whose sequence number is `seq` (the sender's next),
/// with correct checksums; raw IP (`LINKTYPE_RAW`). Empty for a packet without TCP.
pub fn pseudo_frame(p: &Packet<'_>, seq: u32) -> Vec<u8> {
    let (Some(ip), L4::Tcp { .. }) = (p.ip, p.l4) else {
        return Vec::new();
    };
    let (sp, dp) = p.ports();
    let mut tcp = [0u8; 20];
    tcp[0..2].copy_from_slice(&sp.to_be_bytes());
    tcp[2..4].copy_from_slice(&dp.to_be_bytes());
    tcp[4..8].copy_from_slice(&seq.to_be_bytes());
    tcp[12] = 5 << 4;
    tcp[14..16].copy_from_slice(&2560u16.to_be_bytes());
    let mut out = Vec::with_capacity(60);
    let pseudo_sum = match (ip.src, ip.dst) {
        (IpAddr::V4(s), IpAddr::V4(d)) => {
            let mut h = [0u8; 20];
            h[0] = 0x45;
            h[2..4].copy_from_slice(&40u16.to_be_bytes());
            h[8] = 64;
            h[9] = 6;
            h[12..16].copy_from_slice(&s.octets());
            h[16..20].copy_from_slice(&d.octets());
            let c = !checksum::fold(checksum::sum(&h, 0));
            h[10..12].copy_from_slice(&c.to_be_bytes());
            out.extend_from_slice(&h);
            checksum::sum(&s.octets(), checksum::sum(&d.octets(), 6 + 20))
        }
        (IpAddr::V6(s), IpAddr::V6(d)) => {
            let mut h = [0u8; 40];
            h[0] = 0x60;
            h[4..6].copy_from_slice(&20u16.to_be_bytes());
            h[6] = 6;
            h[7] = 64;
            h[8..24].copy_from_slice(&s.octets());
            h[24..40].copy_from_slice(&d.octets());
            out.extend_from_slice(&h);
            checksum::sum(&s.octets(), checksum::sum(&d.octets(), 6 + 20))
        }
        _ => return Vec::new(),
    };
    let c = !checksum::fold(checksum::sum(&tcp, pseudo_sum));
    tcp[16..18].copy_from_slice(&c.to_be_bytes());
    out.extend_from_slice(&tcp);
    out
}
