//! The `flow` record body: `app_proto`, `flow{}` and, for TCP, `tcp{}`.

use meerkat_proto::events::{Event, FlowCounters};

use super::timestamp;
use crate::json::Obj;

/// The packet and byte counters and start time shared by `flow` records and alerts.
pub fn counters(o: &mut Obj<'_>, c: &FlowCounters) {
    o.u64("pkts_toserver", c.pkts_toserver)
        .u64("pkts_toclient", c.pkts_toclient)
        .u64("bytes_toserver", c.bytes_toserver)
        .u64("bytes_toclient", c.bytes_toclient)
        .raw("start", |b| timestamp(b, c.start_us));
}

/// TCP flags as Suricata prints them: two lowercase hex digits.
fn flags_hex(b: &mut Vec<u8>, f: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let f = (f & 0xff) as usize;
    b.extend_from_slice(&[b'"', HEX[f >> 4], HEX[f & 15], b'"']);
}

pub fn body(o: &mut Obj<'_>, ev: &Event) {
    if !ev.app_proto.is_empty() {
        o.str("app_proto", &ev.app_proto);
    }
    let Some(f) = &ev.flow else { return };
    o.obj("flow", |fo| {
        if let Some(c) = &f.counters {
            counters(fo, c);
        }
        fo.raw("end", |b| timestamp(b, f.end_us))
            .u64("age", f.age_s)
            .str("state", &f.state)
            .str("reason", &f.reason)
            .bool("alerted", f.alerted);
    });
    if let Some(t) = &f.tcp {
        o.obj("tcp", |to| {
            to.raw("tcp_flags", |b| flags_hex(b, t.tcp_flags))
                .raw("tcp_flags_ts", |b| flags_hex(b, t.tcp_flags_ts))
                .raw("tcp_flags_tc", |b| flags_hex(b, t.tcp_flags_tc));
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
