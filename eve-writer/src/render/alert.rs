//! The `alert` record body: `alert{}`, then (after the app-layer objects Suricata puts
//! there) `app_proto`, `direction` and the flow's counters in `flow{}`.

use meerkat_proto::events::{AlertAction, Direction, Event};

use super::{RenderOptions, flow, has_ports, pkt_src, proto_name, write_ip};
use crate::json::{self, Obj};

pub fn body(o: &mut Obj<'_>, ev: &Event, opts: &RenderOptions) {
    let Some(a) = &ev.alert else { return };
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
        if opts.alert_metadata && !a.metadata.is_empty() {
            al.obj("metadata", |m| {
                for e in &a.metadata {
                    // Metadata keys come from rule text: escaped like any string.
                    m.raw_escaped_key(&e.key, |b| {
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
    });
    // The outermost packet of a tunnelled packet, as Suricata logs it (ports always).
    if let Some(t) = &ev.tunnel {
        o.obj("tunnel", |to| {
            to.raw("src_ip", |b| write_ip(b, &t.src_ip))
                .u64("src_port", u64::from(t.src_port))
                .raw("dest_ip", |b| write_ip(b, &t.dest_ip))
                .u64("dest_port", u64::from(t.dest_port));
            match proto_name(t.ip_proto) {
                Some(n) => to.str("proto", n),
                None => to.raw("proto", |b| {
                    b.push(b'"');
                    super::push_u64(b, u64::from(t.ip_proto));
                    b.push(b'"');
                }),
            };
            to.u64("depth", u64::from(t.depth))
                .u64("pcap_cnt", t.pcap_cnt);
            if let Some(s) = pkt_src(t.pkt_src) {
                to.str("pkt_src", s);
            }
        });
    }
    // The app-layer object of the alert's transaction (`http`, `dns`, ...).
    if let Some(r) = &ev.app {
        super::app_object(o, r);
    }
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
    if let Some(c) = &a.flow {
        o.obj("flow", |fo| {
            flow::counters(fo, c);
            fo.raw("src_ip", |b| write_ip(b, &c.src_ip))
                .raw("dest_ip", |b| write_ip(b, &c.dest_ip));
            if has_ports(ev.ip_proto) {
                fo.u64("src_port", u64::from(c.src_port))
                    .u64("dest_port", u64::from(c.dest_port));
            }
        });
    }
}
