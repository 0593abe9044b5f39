//! The EVE `dns` object, in Suricata's field order and optionality; every line is
//! checked against Suricata's EVE schema in the eve-writer's tests.

use meerkat_eve::{Obj, array};
use meerkat_proto::events::{Dns, DnsAnswer};

use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Dns(d) = r {
        dns(o, d);
    }
}

/// DNS record type names as Suricata prints them (the number when unnamed).
pub fn rrtype(t: u32) -> String {
    match super::names::rrtype_name(t) {
        Some(n) => n.to_string(),
        None => t.to_string(),
    }
}

/// DNS response codes as Suricata prints them.
pub fn rcode(r: u32) -> String {
    super::names::rcode_name(r).map_or_else(|| r.to_string(), str::to_string)
}

fn name(n: &[u8]) -> &[u8] {
    if n.is_empty() { b"<root>" } else { n }
}

fn answer(a: &mut Obj<'_>, r: &DnsAnswer) {
    a.bytes("rrname", name(&r.rrname))
        .str("rrtype", &rrtype(r.rrtype))
        .u64("ttl", u64::from(r.ttl));
    if let Some(s) = &r.soa {
        a.obj("soa", |x| {
            x.bytes("mname", name(&s.mname))
                .bytes("rname", name(&s.rname))
                .u64("serial", u64::from(s.serial))
                .u64("refresh", u64::from(s.refresh))
                .u64("retry", u64::from(s.retry))
                .u64("expire", u64::from(s.expire))
                .u64("minimum", u64::from(s.minimum));
        });
    } else if let Some(s) = &r.srv {
        a.obj("srv", |x| {
            x.u64("priority", u64::from(s.priority))
                .u64("weight", u64::from(s.weight))
                .u64("port", u64::from(s.port))
                .bytes("name", name(&s.name));
        });
    } else if !r.rdata.is_empty() {
        a.bytes("rdata", &r.rdata);
    }
}

/// The `dns` object, version 3.
pub fn dns(o: &mut Obj<'_>, d: &Dns) {
    o.obj("dns", |x| {
        x.u64("version", 3)
            .str("type", &d.r#type)
            .u64("id", u64::from(d.id));
        x.str("flags", &format!("{:x}", d.flags));
        for (k, v) in [
            ("qr", d.qr),
            ("aa", d.aa),
            ("tc", d.tc),
            ("rd", d.rd),
            ("ra", d.ra),
            ("z", d.z),
        ] {
            if v {
                x.bool(k, true);
            }
        }
        x.u64("opcode", u64::from(d.opcode));
        if d.qr {
            x.str("rcode", &rcode(d.rcode));
        }
        if !d.queries.is_empty() {
            x.raw("queries", |b| {
                array(b, &d.queries, |q, it| {
                    q.bytes("rrname", name(&it.rrname))
                        .str("rrtype", &rrtype(it.rrtype));
                })
            });
        }
        for (k, list) in [
            ("answers", &d.answers),
            ("authorities", &d.authorities),
            ("additionals", &d.additionals),
        ] {
            if !list.is_empty() {
                x.raw(k, |b| array(b, list, answer));
            }
        }
    });
}
