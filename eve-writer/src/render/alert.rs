//! The `alert` record body: `alert{}`, then (after the app-layer objects Suricata puts
//! there) `app_proto`, `direction` and the flow's counters in `flow{}`; then, when the
//! output asks, `payload`, `payload_printable`, `stream`, `packet` and `packet_info`.

use base64::Engine as _;
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
    if !ev.ts_progress.is_empty() {
        o.str("ts_progress", &ev.ts_progress)
            .str("tc_progress", &ev.tc_progress);
    }
    // The app-layer objects of the alert's transaction (`http`, ..., `files`).
    super::app_objects(o, ev);
    flow::app_protos(o, ev);
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
    payload(o, ev, opts);
}

/// `payload`, `payload_printable` and `stream` (with either payload option), then
/// `packet` and `packet_info` (with `packet`), as Suricata writes them: an empty
/// payload is left out, `stream` is not.
fn payload(o: &mut Obj<'_>, ev: &Event, opts: &RenderOptions) {
    if opts.alert_payload || opts.alert_payload_printable {
        let p = if ev.payload_is_stream {
            &ev.payload[..ev.payload.len().min(opts.max_stream_payload)]
        } else {
            &ev.payload[..]
        };
        if !p.is_empty() {
            if opts.alert_payload {
                o.raw("payload", |b| base64_string(b, p));
            }
            if opts.alert_payload_printable {
                o.raw("payload_printable", |b| printable_string(b, p));
            }
        }
        o.u64("stream", u64::from(ev.stream));
    }
    if let Some(f) = &ev.frame {
        frame(o, f, opts);
    }
    if opts.alert_packet && !ev.packet.is_empty() {
        o.raw("packet", |b| base64_string(b, &ev.packet));
        let (linktype, name) = dlt(ev.packet_linktype);
        o.obj("packet_info", |pi| {
            pi.u64("linktype", u64::from(linktype));
            if let Some(n) = name {
                pi.str("linktype_name", n);
            }
        });
    }
}

/// The frame an alert matched, as Suricata's `frame` object: its bytes cut to the
/// payload buffer as the stream payload is.
fn frame(o: &mut Obj<'_>, f: &meerkat_proto::events::Frame, opts: &RenderOptions) {
    let p = &f.payload[..f.payload.len().min(opts.max_stream_payload)];
    o.obj("frame", |fo| {
        fo.str("type", &f.r#type).u64("id", f.id).str(
            "direction",
            if f.to_server { "toserver" } else { "toclient" },
        );
        if let Some(at) = f.stream_offset {
            fo.u64("stream_offset", at);
        }
        fo.u64("length", f.length)
            .raw("payload", |b| base64_string(b, p))
            .raw("payload_printable", |b| printable_string(b, p))
            .bool("complete", f.complete);
        if let Some(t) = f.tx_id {
            fo.u64("tx_id", t);
        }
    });
}

/// Writes `data` base64-encoded (standard alphabet, padded) as a JSON string.
fn base64_string(buf: &mut Vec<u8>, data: &[u8]) {
    let engine = &base64::engine::general_purpose::STANDARD;
    buf.push(b'"');
    let at = buf.len();
    let n = base64::encoded_len(data.len(), true).unwrap_or(0);
    buf.resize(at + n, 0);
    let written = engine.encode_slice(data, &mut buf[at..]).unwrap_or(0);
    buf.truncate(at + written);
    buf.push(b'"');
}

/// Writes `data` as Suricata's printable rendering (printable ASCII, CR and LF kept,
/// every other byte a `.`) in a JSON string.
fn printable_string(buf: &mut Vec<u8>, data: &[u8]) {
    buf.push(b'"');
    for &c in data {
        match c {
            b'"' => buf.extend_from_slice(b"\\\""),
            b'\\' => buf.extend_from_slice(b"\\\\"),
            b'\n' => buf.extend_from_slice(b"\\n"),
            b'\r' => buf.extend_from_slice(b"\\r"),
            0x20..=0x7e => buf.push(c),
            _ => buf.push(b'.'),
        }
    }
    buf.push(b'"');
}

/// The link type and its name as Suricata logs them in `packet_info`: libpcap's DLT
/// value (`LINKTYPE_RAW` is `DLT_RAW`, 12) and its name.
fn dlt(linktype: u32) -> (u32, Option<&'static str>) {
    match linktype {
        0 => (0, Some("NULL")),
        1 => (1, Some("EN10MB")),
        12 | 14 | 101 => (12, Some("RAW")),
        113 => (113, Some("LINUX_SLL")),
        228 => (228, Some("IPv4")),
        229 => (229, Some("IPv6")),
        276 => (276, Some("LINUX_SLL2")),
        other => (other, None),
    }
}
