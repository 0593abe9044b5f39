//! The EVE `dns` object, in Suricata's field order and optionality; every line is
//! checked against Suricata's EVE schema in the eve-writer's tests.

use meerkat_eve::{Obj, array};
use meerkat_proto::events::{Dns, DnsAnswer, DnsOpt, DnsSoa, DnsSrv};

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

/// A name as Suricata 8 writes it: the root is the empty string (measured with the
/// reference on a root NS query and an OPT record).
fn name(n: &[u8]) -> &[u8] {
    n
}

fn answer(a: &mut Obj<'_>, r: &DnsAnswer) {
    a.bytes("rrname", name(&r.rrname))
        .str("rrtype", &rrtype(r.rrtype))
        .u64("ttl", u64::from(r.ttl));
    if let Some(s) = &r.soa {
        a.obj("soa", |x| soa(x, s));
    } else if let Some(s) = &r.srv {
        a.obj("srv", |x| srv(x, s));
    } else if !r.rdata.is_empty() {
        a.bytes("rdata", &r.rdata);
    } else if !r.opt.is_empty() {
        a.raw("opt", |b| array(b, &r.opt, opt));
    }
}

/// An EDNS option: its code and its data in hex.
pub fn opt(o: &mut Obj<'_>, x: &DnsOpt) {
    o.u64("code", u64::from(x.code)).str("data", &hex(&x.data));
}

fn hex(b: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(2 * b.len());
    for &c in b {
        s.push(char::from(HEX[usize::from(c >> 4)]));
        s.push(char::from(HEX[usize::from(c & 0xf)]));
    }
    s
}

/// Whether an answer has data a `grouped` list shows.
fn has_data(r: &DnsAnswer) -> bool {
    r.soa.is_some() || r.srv.is_some() || !r.rdata.is_empty()
}

/// The answers' data grouped by record type (`"grouped":{"A":["1.2.3.4"],...}`, the
/// `grouped` format Suricata 8 writes beside `detailed` by default), types in the
/// order they first appear; SOA and SRV data as objects.
fn grouped(x: &mut Obj<'_>, answers: &[DnsAnswer]) {
    if !answers.iter().any(has_data) {
        return;
    }
    x.obj("grouped", |g| {
        for (i, r) in answers.iter().enumerate() {
            if !has_data(r)
                || answers[..i]
                    .iter()
                    .any(|p| p.rrtype == r.rrtype && has_data(p))
            {
                continue;
            }
            let same = answers[i..]
                .iter()
                .filter(|a| a.rrtype == r.rrtype && has_data(a));
            g.raw(&rrtype(r.rrtype), |b| {
                b.push(b'[');
                for (n, a) in same.enumerate() {
                    if n > 0 {
                        b.push(b',');
                    }
                    if let Some(s) = &a.soa {
                        let mut o = Obj::new(b);
                        soa(&mut o, s);
                        o.end();
                    } else if let Some(s) = &a.srv {
                        let mut o = Obj::new(b);
                        srv(&mut o, s);
                        o.end();
                    } else {
                        meerkat_eve::bytes_as_string(b, &a.rdata);
                    }
                }
                b.push(b']');
            });
        }
    });
}

fn soa(x: &mut Obj<'_>, s: &DnsSoa) {
    x.bytes("mname", name(&s.mname))
        .bytes("rname", name(&s.rname))
        .u64("serial", u64::from(s.serial))
        .u64("refresh", u64::from(s.refresh))
        .u64("retry", u64::from(s.retry))
        .u64("expire", u64::from(s.expire))
        .u64("minimum", u64::from(s.minimum));
}

fn srv(x: &mut Obj<'_>, s: &DnsSrv) {
    x.u64("priority", u64::from(s.priority))
        .u64("weight", u64::from(s.weight))
        .u64("port", u64::from(s.port))
        .bytes("name", name(&s.name));
}

/// The `dns` object, version 3.
pub fn dns(o: &mut Obj<'_>, d: &Dns) {
    o.obj("dns", |x| {
        x.u64("version", 3)
            .str("type", &d.r#type)
            .u64("tx_id", d.tx_id)
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
        x.u64("opcode", u64::from(d.opcode))
            .str("rcode", &rcode(d.rcode));
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
            if k == "answers" && d.grouped {
                grouped(x, list);
            }
        }
    });
}
