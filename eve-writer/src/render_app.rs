//! EVE rendering of application-layer records: the `http`, `dns` (Suricata's version-3
//! shape) and `tls` objects, both as their own event types and inside alerts.
//!
//! Field names, order and optionality follow Suricata's output; every line is checked
//! against Suricata's EVE schema in the tests below.

use meerkat_proto::events::{Dns, DnsAnswer, Http, HttpHeader, Tls};

use crate::json::Obj;

fn array<T>(buf: &mut Vec<u8>, items: &[T], mut f: impl FnMut(&mut Obj<'_>, &T)) {
    buf.push(b'[');
    for (i, it) in items.iter().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        let mut o = Obj::new(buf);
        f(&mut o, it);
        o.end();
    }
    buf.push(b']');
}

fn headers(o: &mut Obj<'_>, key: &str, hs: &[HttpHeader]) {
    if hs.is_empty() {
        return;
    }
    o.raw(key, |b| {
        array(b, hs, |h, x| {
            h.str("name", &x.name).bytes("value", &x.value);
        })
    });
}

/// The `http` object.
pub fn http(o: &mut Obj<'_>, h: &Http) {
    o.obj("http", |x| {
        if !h.hostname.is_empty() {
            x.bytes("hostname", &h.hostname);
        }
        if let Some(p) = h.http_port {
            x.u64("http_port", u64::from(p));
        }
        if !h.url.is_empty() {
            x.bytes("url", &h.url);
        }
        if !h.http_user_agent.is_empty() {
            x.bytes("http_user_agent", &h.http_user_agent);
        }
        if !h.xff.is_empty() {
            x.bytes("xff", &h.xff);
        }
        if !h.http_content_type.is_empty() {
            x.bytes("http_content_type", &h.http_content_type);
        }
        if !h.http_refer.is_empty() {
            x.bytes("http_refer", &h.http_refer);
        }
        if !h.http_method.is_empty() {
            x.bytes("http_method", &h.http_method);
        }
        if !h.protocol.is_empty() {
            x.bytes("protocol", &h.protocol);
        }
        if let Some(s) = h.status {
            x.u64("status", u64::from(s));
        } else if !h.status_string.is_empty() {
            x.bytes("status_string", &h.status_string);
        }
        if !h.redirect.is_empty() {
            x.bytes("redirect", &h.redirect);
        }
        x.u64("length", h.length);
        headers(x, "request_headers", &h.request_headers);
        headers(x, "response_headers", &h.response_headers);
    });
}

/// DNS record type names as Suricata prints them (the number when unnamed).
pub fn rrtype(t: u32) -> String {
    match meerkat_proto::dns::rrtype_name(t) {
        Some(n) => n.to_string(),
        None => t.to_string(),
    }
}

/// DNS response codes as Suricata prints them.
pub fn rcode(r: u32) -> String {
    meerkat_proto::dns::rcode_name(r).map_or_else(|| r.to_string(), str::to_string)
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

/// The `tls` object.
pub fn tls(o: &mut Obj<'_>, t: &Tls) {
    o.obj("tls", |x| {
        if !t.subject.is_empty() {
            x.str("subject", &t.subject);
        }
        if !t.issuerdn.is_empty() {
            x.str("issuerdn", &t.issuerdn);
        }
        if !t.serial.is_empty() {
            x.str("serial", &t.serial);
        }
        if !t.fingerprint.is_empty() {
            x.str("fingerprint", &t.fingerprint);
        }
        if t.session_resumed {
            x.bool("session_resumed", true);
        }
        if !t.sni.is_empty() {
            x.str("sni", &t.sni);
        }
        if !t.version.is_empty() {
            x.str("version", &t.version);
        }
        if !t.notbefore.is_empty() {
            x.str("notbefore", &t.notbefore);
        }
        if !t.notafter.is_empty() {
            x.str("notafter", &t.notafter);
        }
        for (k, j) in [("ja3", &t.ja3), ("ja3s", &t.ja3s)] {
            if let Some(j) = j {
                x.obj(k, |y| {
                    y.str("hash", &j.hash).str("string", &j.string);
                });
            }
        }
        if !t.ja4.is_empty() {
            x.str("ja4", &t.ja4);
        }
    });
}

/// Writes whichever app-layer objects the event carries (an app event's own body, or
/// the app metadata of an alert).
pub fn app_objects(
    o: &mut Obj<'_>,
    http_rec: Option<&Http>,
    dns_rec: Option<&Dns>,
    tls_rec: Option<&Tls>,
) {
    if let Some(h) = http_rec {
        http(o, h);
    }
    if let Some(d) = dns_rec {
        dns(o, d);
    }
    if let Some(t) = tls_rec {
        tls(o, t);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{RenderOptions, render};
    use meerkat_proto::events::{DnsQuery, DnsSoa, DnsSrv, Event, EventType, Ja3};
    use std::path::Path;

    fn validator() -> Option<jsonschema::Validator> {
        let p = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../shared/corpus/suricata/eve-schema.json");
        let s: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()?;
        Some(jsonschema::validator_for(&s).expect("schema compiles"))
    }

    fn base(kind: EventType) -> Event {
        Event {
            event_type: kind as i32,
            timestamp_us: 1_700_000_000_123_456,
            flow_id: 42,
            src_ip: vec![10, 0, 0, 1],
            src_port: 1234,
            dest_ip: vec![10, 0, 0, 2],
            dest_port: 80,
            ip_proto: 6,
            app_proto: "http".into(),
            tx_id: Some(0),
            ..Event::default()
        }
    }

    fn sample_http() -> Http {
        Http {
            hostname: b"example.com".to_vec(),
            http_port: Some(8080),
            url: b"/a?b=\xff".to_vec(),
            http_user_agent: b"curl/8".to_vec(),
            http_content_type: b"text/html".to_vec(),
            http_method: b"GET".to_vec(),
            protocol: b"HTTP/1.1".to_vec(),
            status: Some(200),
            length: 12,
            request_headers: vec![HttpHeader {
                name: "Host".into(),
                value: b"example.com".to_vec(),
            }],
            ..Http::default()
        }
    }

    fn sample_dns(response: bool) -> Dns {
        Dns {
            r#type: if response { "response" } else { "request" }.into(),
            id: 4660,
            flags: if response { 0x8180 } else { 0x0100 },
            qr: response,
            rd: true,
            ra: response,
            rcode: 3,
            queries: vec![DnsQuery {
                rrname: b"www.example.com".to_vec(),
                rrtype: 1,
            }],
            answers: if response {
                vec![
                    DnsAnswer {
                        rrname: b"www.example.com".to_vec(),
                        rrtype: 1,
                        ttl: 60,
                        rdata: b"93.184.216.34".to_vec(),
                        ..DnsAnswer::default()
                    },
                    DnsAnswer {
                        rrname: b"_x._tcp.example.com".to_vec(),
                        rrtype: 33,
                        srv: Some(DnsSrv {
                            priority: 1,
                            weight: 2,
                            port: 443,
                            name: b"h.example.com".to_vec(),
                        }),
                        ..DnsAnswer::default()
                    },
                ]
            } else {
                Vec::new()
            },
            authorities: if response {
                vec![DnsAnswer {
                    rrname: Vec::new(),
                    rrtype: 6,
                    soa: Some(DnsSoa {
                        mname: b"ns".to_vec(),
                        rname: b"hm".to_vec(),
                        serial: 1,
                        ..DnsSoa::default()
                    }),
                    ..DnsAnswer::default()
                }]
            } else {
                Vec::new()
            },
            ..Dns::default()
        }
    }

    fn sample_tls() -> Tls {
        Tls {
            subject: "C=US, CN=example.com".into(),
            issuerdn: "C=US, O=CA".into(),
            serial: "00:C4".into(),
            fingerprint: "aa:bb".into(),
            sni: "example.com".into(),
            version: "TLS 1.2".into(),
            notbefore: "2023-01-01T00:00:00".into(),
            notafter: "2034-01-01T12:00:00".into(),
            ja3: Some(Ja3 {
                hash: "0123456789abcdef0123456789abcdef".into(),
                string: "771,4865,0,29,0".into(),
            }),
            ja3s: Some(Ja3 {
                hash: "0123456789abcdef0123456789abcdef".into(),
                string: "771,49199,".into(),
            }),
            ja4: "t13d0306h2_000000000000_000000000000".into(),
            ..Tls::default()
        }
    }

    fn lines() -> Vec<String> {
        let mut evs = Vec::new();
        let mut e = base(EventType::Http);
        e.http = Some(sample_http());
        evs.push(e);
        for r in [false, true] {
            let mut e = base(EventType::Dns);
            e.app_proto = "dns".into();
            e.ip_proto = 17;
            e.dns = Some(sample_dns(r));
            evs.push(e);
        }
        let mut e = base(EventType::Tls);
        e.app_proto = "tls".into();
        e.tls = Some(sample_tls());
        evs.push(e);
        // Alerts carrying each app object.
        let mut e = base(EventType::Alert);
        e.alert = Some(meerkat_proto::events::Alert {
            signature_id: 1,
            gid: 1,
            rev: 1,
            signature: "x".into(),
            ..Default::default()
        });
        e.http = Some(sample_http());
        evs.push(e.clone());
        let mut d = e.clone();
        d.http = None;
        d.dns = Some(sample_dns(false));
        evs.push(d);
        let mut t = e;
        t.http = None;
        t.tls = Some(sample_tls());
        evs.push(t);
        evs.iter()
            .map(|ev| {
                let mut b = Vec::new();
                render(&mut b, ev, &RenderOptions::default());
                String::from_utf8(b).expect("utf-8")
            })
            .collect()
    }

    #[test]
    fn shapes() {
        let l = lines();
        assert!(l[0].contains(r#""event_type":"http""#), "{}", l[0]);
        assert!(l[0].contains(r#""http":{"hostname":"example.com","http_port":8080,"url":"/a?b=\u00ff","http_user_agent":"curl/8","http_content_type":"text/html","http_method":"GET","protocol":"HTTP/1.1","status":200,"length":12,"request_headers":[{"name":"Host","value":"example.com"}]}"#), "{}", l[0]);
        assert!(l[1].contains(r#""dns":{"version":3,"type":"request","id":4660,"flags":"100","rd":true,"opcode":0,"queries":[{"rrname":"www.example.com","rrtype":"A"}]}"#), "{}", l[1]);
        assert!(
            l[2].contains(r#""rcode":"NXDOMAIN""#)
                && l[2].contains(r#""rrname":"<root>","rrtype":"SOA""#),
            "{}",
            l[2]
        );
        assert!(
            l[3].contains(r#""tls":{"subject":"C=US, CN=example.com""#),
            "{}",
            l[3]
        );
        assert!(
            l[4].contains(r#""alert":{"#) && l[4].contains(r#""http":{"hostname""#),
            "{}",
            l[4]
        );
        for line in &l {
            let v: serde_json::Value = serde_json::from_str(line.trim_end()).expect("valid JSON");
            assert!(v.is_object());
        }
    }

    #[test]
    fn lines_validate_against_suricata_schema() {
        let Some(v) = validator() else {
            eprintln!("skipping: ../shared/corpus/suricata/eve-schema.json is absent");
            return;
        };
        for line in lines() {
            let inst: serde_json::Value = serde_json::from_str(line.trim_end()).expect("json");
            let errs: Vec<String> = v.iter_errors(&inst).map(|e| e.to_string()).collect();
            assert!(errs.is_empty(), "{line}: {errs:?}");
        }
    }
}
