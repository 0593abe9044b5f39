//! The EVE `mdns` object, in Suricata 8's shape: `type`, the message `id`, `flags` as
//! a list of names, `opcode`, `rcode` as a number, queries with lower-case types, and
//! records keyed by their lower-case type (`"ptr":"..."`, `"txt":[...]`).

use meerkat_eve::{Obj, array};
use meerkat_proto::events::{Dns, DnsAnswer};

use crate::AppRecord;
use crate::dns::eve::{opt, rrtype};

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Mdns(d) = r {
        mdns(o, d);
    }
}

/// The header flags Suricata names, in its order.
const FLAGS: [(u32, &str); 7] = [
    (0x0400, "aa"),
    (0x0200, "tc"),
    (0x0100, "rd"),
    (0x0080, "ra"),
    (0x0040, "z"),
    (0x0020, "ad"),
    (0x0010, "cd"),
];

fn record(a: &mut Obj<'_>, r: &DnsAnswer) {
    a.bytes("rrname", &r.rrname);
    let key = rrtype(r.rrtype).to_ascii_lowercase();
    if let Some(s) = &r.soa {
        a.obj(&key, |x| {
            x.bytes("mname", &s.mname)
                .bytes("rname", &s.rname)
                .u64("serial", u64::from(s.serial))
                .u64("refresh", u64::from(s.refresh))
                .u64("retry", u64::from(s.retry))
                .u64("expire", u64::from(s.expire))
                .u64("minimum", u64::from(s.minimum));
        });
    } else if let Some(s) = &r.srv {
        a.obj(&key, |x| {
            x.u64("priority", u64::from(s.priority))
                .u64("weight", u64::from(s.weight))
                .u64("port", u64::from(s.port))
                .bytes("name", &s.name);
        });
    } else if let Some(m) = &r.mx {
        a.bytes(&key, &m.exchange);
    } else if !r.txt.is_empty() {
        a.raw(&key, |b| {
            b.push(b'[');
            for (i, s) in r.txt.iter().enumerate() {
                if i > 0 {
                    b.push(b',');
                }
                meerkat_eve::bytes_as_string(b, s);
            }
            b.push(b']');
        });
    } else if !r.opt.is_empty() {
        a.raw(&key, |b| array(b, &r.opt, opt));
    } else if !r.rdata.is_empty() {
        a.bytes(&key, &r.rdata);
    } else {
        // Any other type: its bytes as a string.
        a.bytes(&key, &r.raw);
    }
}

/// The `mdns` object.
pub fn mdns(o: &mut Obj<'_>, d: &Dns) {
    o.obj("mdns", |x| {
        x.str("type", &d.r#type).u64("id", u64::from(d.id));
        if FLAGS.iter().any(|(bit, _)| d.flags & bit != 0) {
            x.raw("flags", |b| {
                meerkat_eve::str_array(
                    b,
                    FLAGS
                        .iter()
                        .filter(|(bit, _)| d.flags & bit != 0)
                        .map(|(_, n)| *n),
                )
            });
        }
        x.u64("opcode", u64::from(d.opcode))
            .u64("rcode", u64::from(d.rcode));
        if !d.queries.is_empty() {
            x.raw("queries", |b| {
                array(b, &d.queries, |q, it| {
                    q.bytes("rrname", &it.rrname)
                        .str("rrtype", &rrtype(it.rrtype).to_ascii_lowercase());
                })
            });
        }
        for (k, list) in [
            ("answers", &d.answers),
            ("authorities", &d.authorities),
            ("additionals", &d.additionals),
        ] {
            if !list.is_empty() {
                x.raw(k, |b| array(b, list, record));
            }
        }
    });
}
