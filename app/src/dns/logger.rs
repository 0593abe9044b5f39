//! The EVE `dns` record (Suricata's version-3 shape): one per message, `type` request
//! or response, with queries, answers, authorities and additionals.

use meerkat_proto::events::{Dns, DnsAnswer, DnsMx, DnsOpt, DnsQuery, DnsSoa, DnsSrv};

use super::parser::{Message, Rdata, Record, opt_options, txt_strings};

fn answer(m: &Message, r: &Record) -> DnsAnswer {
    let t = |s| m.text(s).to_vec();
    let mut a = DnsAnswer {
        rrname: t(r.name),
        rrtype: u32::from(r.rrtype),
        ttl: r.ttl,
        ..DnsAnswer::default()
    };
    match &r.rdata {
        Rdata::Text(s) => a.rdata = t(*s),
        Rdata::Txt(s) => {
            // DNS logs the strings joined, mDNS one by one.
            for part in txt_strings(m.text(*s)) {
                a.rdata.extend_from_slice(part);
                a.txt.push(part.to_vec());
            }
        }
        Rdata::Opt(s) => {
            a.opt = opt_options(m.text(*s))
                .map(|(code, data)| DnsOpt {
                    code: u32::from(code),
                    data: data.to_vec(),
                })
                .collect();
        }
        Rdata::Raw(s) => a.raw = t(*s),
        Rdata::Soa {
            mname,
            rname,
            serial,
            refresh,
            retry,
            expire,
            minimum,
        } => {
            a.soa = Some(DnsSoa {
                mname: t(*mname),
                rname: t(*rname),
                serial: *serial,
                refresh: *refresh,
                retry: *retry,
                expire: *expire,
                minimum: *minimum,
            })
        }
        Rdata::Mx {
            preference,
            exchange,
        } => {
            a.rdata = t(*exchange);
            a.mx = Some(DnsMx {
                preference: u32::from(*preference),
                exchange: t(*exchange),
            });
        }
        Rdata::Srv {
            priority,
            weight,
            port,
            name,
        } => {
            a.srv = Some(DnsSrv {
                priority: u32::from(*priority),
                weight: u32::from(*weight),
                port: u32::from(*port),
                name: t(*name),
            })
        }
        Rdata::None => {}
    }
    a
}

/// The record of one message.
pub fn record(m: &Message) -> Dns {
    let h = m.header;
    let f = h.flags;
    Dns {
        r#type: if h.qr() { "response" } else { "request" }.to_string(),
        id: u32::from(h.id),
        flags: u32::from(f),
        qr: h.qr(),
        aa: f & 0x0400 != 0,
        tc: f & 0x0200 != 0,
        rd: f & 0x0100 != 0,
        ra: f & 0x0080 != 0,
        z: f & 0x0040 != 0,
        opcode: u32::from(h.opcode()),
        rcode: u32::from(h.rcode()),
        queries: m
            .questions
            .iter()
            .map(|q| DnsQuery {
                rrname: m.text(q.name).to_vec(),
                rrtype: u32::from(q.rrtype),
            })
            .collect(),
        answers: m.answers().iter().map(|r| answer(m, r)).collect(),
        authorities: m.authorities().iter().map(|r| answer(m, r)).collect(),
        additionals: m
            .additionals()
            .iter()
            // An OPT record is logged when it has options (Suricata).
            .filter(|r| !matches!(r.rdata, Rdata::Opt(s) if m.text(s).is_empty()))
            .map(|r| answer(m, r))
            .collect(),
        // Set by the transaction, which knows its id.
        tx_id: 0,
        grouped: false,
    }
}
