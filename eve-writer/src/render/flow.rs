//! The `flow` record body: `app_proto`, `flow{}` and, for TCP, `tcp{}`.

use meerkat_proto::events::{Event, FlowCounters};

use super::timestamp;
use crate::json::{self, Obj};

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

/// `app_proto`, then `app_proto_ts` and `app_proto_tc` where they differ from it, then
/// `app_proto_orig` and `app_proto_expected` of a flow that changed protocol (in flow
/// records and alerts).
pub fn app_protos(o: &mut Obj<'_>, ev: &Event) {
    if !ev.app_proto.is_empty() {
        o.str("app_proto", &ev.app_proto);
    }
    if !ev.app_proto_ts.is_empty() {
        o.str("app_proto_ts", &ev.app_proto_ts);
    }
    if !ev.app_proto_tc.is_empty() {
        o.str("app_proto_tc", &ev.app_proto_tc);
    }
    if !ev.app_proto_orig.is_empty() {
        o.str("app_proto_orig", &ev.app_proto_orig);
    }
    if !ev.app_proto_expected.is_empty() {
        o.str("app_proto_expected", &ev.app_proto_expected);
    }
}

/// The body of a flow record; `community` is its `community_id`, when configured.
pub fn body(o: &mut Obj<'_>, ev: &Event, community: Option<&str>) {
    app_protos(o, ev);
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
        if !f.exception_policy.is_empty() {
            fo.raw("exception_policy", |b| {
                json::array(b, &f.exception_policy, |e, x| {
                    e.str("target", &x.target).str("policy", &x.policy);
                })
            });
        }
        if f.tx_cnt > 0 {
            fo.u64("tx_cnt", f.tx_cnt);
        }
    });
    if let Some(c) = community {
        o.str("community_id", c);
    }
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
            if t.ts_gap {
                to.bool("ts_gap", true);
            }
            if t.tc_gap {
                to.bool("tc_gap", true);
            }
            if t.ts_max_regions > 0 {
                to.u64("ts_max_regions", u64::from(t.ts_max_regions))
                    .u64("tc_max_regions", u64::from(t.tc_max_regions));
            }
        });
    }
}
