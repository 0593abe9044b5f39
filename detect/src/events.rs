//! Building the typed events (protobuf) that go to the eve-writer.

use std::net::IpAddr;

use meerkat_proto::events::{
    Alert, AlertAction, Anomaly, Direction, Event, EventType, FlowCounters, FlowRecord,
    PacketSource, TcpSummary, Tunnel as TunnelRecord,
};
use meerkat_shm::PacketMeta;

use crate::app::AppRecord;
use crate::flow::{EndReason, Flow};
use crate::rules::{Action, Rule};
use meerkat_wire::decode::{L4, Packet, Tunnel};

/// Where the packet of an event came from (EVE `pkt_src`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PacketSrc {
    Wire,
    Defrag,
    /// A pseudo packet made at flow end.
    FlowTimeout,
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
    fn proto(self) -> PacketSource {
        match self {
            PacketSrc::Wire => PacketSource::Wire,
            PacketSrc::Defrag => PacketSource::Defrag,
            PacketSrc::FlowTimeout => PacketSource::FlowTimeout,
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
        pcap_cnt: meta.seq,
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
            // IDS mode: drop and reject rules alert.
            Action::Alert | Action::Drop | Action::Reject | Action::Pass => AlertAction::Allowed,
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
    tx_id: u64,
    r: AppRecord,
) -> Event {
    let mut ev = packet_event(
        EventType::App,
        p,
        meta,
        Some((flow, to_server)),
        PacketSrc::Wire,
    );
    // App records are written client -> server, whichever packet finished them.
    ev.src_ip = ip_bytes(flow.client.0);
    ev.src_port = u32::from(flow.client.1);
    ev.dest_ip = ip_bytes(flow.server.0);
    ev.dest_port = u32::from(flow.server.1);
    ev.pkt_src = PacketSource::Unspecified as i32;
    ev.direction = Direction::Unspecified as i32;
    ev.tx_id = Some(tx_id);
    ev.app_proto = flow.app.proto.name().to_string();
    attach_record(&mut ev, r);
    ev
}

/// A `flow` event for an ended flow.
pub fn flow_end(flow: &Flow, reason: EndReason) -> Event {
    let flags = flow.tcp_flags_ts | flow.tcp_flags_tc;
    let app = flow.app.proto.name();
    Event {
        app_proto: if app == "failed" {
            String::new()
        } else {
            app.to_string()
        },
        event_type: EventType::Flow as i32,
        timestamp_us: ts_us(flow.last_ns),
        flow_id: flow.id,
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
            tcp: (flow.proto == 6).then(|| TcpSummary {
                tcp_flags: u32::from(flags),
                tcp_flags_ts: u32::from(flow.tcp_flags_ts),
                tcp_flags_tc: u32::from(flow.tcp_flags_tc),
                state: flow
                    .tcp
                    .as_ref()
                    .map(|s| s.state.name().to_string())
                    .unwrap_or_default(),
            }),
            ..Default::default()
        }),
        ..Default::default()
    }
}
