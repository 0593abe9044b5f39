//! App-layer records rendered into whole EVE lines through their protocols' renderers:
//! field shapes, and every line checked against Suricata's EVE schema.

#[cfg(test)]
mod tests {
    use crate::render::{RenderOptions, render};
    use meerkat_app::AppRecord;
    use meerkat_proto::events::{
        Dns, DnsAnswer, DnsQuery, DnsSoa, DnsSrv, Event, EventType, Http, HttpHeader, Ja3, Mqtt,
        MqttMessage, MqttProperty, MqttTopic, Tls, mqtt_property,
    };
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
                table_size_update: None,
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

    const SIP_INVITE: &[u8] = b"INVITE sip:bob@example.com SIP/2.0\r\n\
Via: SIP/2.0/UDP 192.0.2.1\r\nContent-Type: application/sdp\r\n\r\n\
v=0\r\no=alice 1 1 IN IP4 192.0.2.1\r\ns=Call\r\ne=a@example.com\r\nc=IN IP4 192.0.2.1\r\n\
b=AS:64\r\nt=0 0\r\nr=7d 1h 0 25h\r\nz=0 -1h\r\nk=prompt\r\na=sendrecv\r\n\
m=audio 4000 RTP/AVP 0\r\ni=voice\r\nc=IN IP4 192.0.2.1\r\nb=AS:32\r\nk=prompt\r\n\
a=rtpmap:0 PCMU/8000\r\n";
    fn sample_mqtt() -> Mqtt {
        Mqtt {
            messages: vec![
                MqttMessage {
                    kind: "subscribe".into(),
                    qos: 1,
                    message_id: Some(1),
                    topics: vec![MqttTopic {
                        topic: b"a/b".to_vec(),
                        qos: 1,
                    }],
                    ..MqttMessage::default()
                },
                MqttMessage {
                    kind: "suback".into(),
                    has_properties: true,
                    properties: vec![MqttProperty {
                        name: "reason_string".into(),
                        value: Some(mqtt_property::Value::Text(b"ok".to_vec())),
                    }],
                    message_id: Some(1),
                    codes: vec![1],
                    ..MqttMessage::default()
                },
            ],
        }
    }

    fn lines() -> Vec<String> {
        let mut evs = Vec::new();
        let mut e = base(EventType::App);
        e.app = Some(AppRecord::Http(sample_http()));
        evs.push(e);
        for r in [false, true] {
            let mut e = base(EventType::App);
            e.app_proto = "dns".into();
            e.ip_proto = 17;
            e.app = Some(AppRecord::Dns(sample_dns(r)));
            evs.push(e);
        }
        let mut e = base(EventType::App);
        e.app_proto = "tls".into();
        e.app = Some(AppRecord::Tls(sample_tls()));
        evs.push(e);
        let mut e = base(EventType::App);
        e.app_proto = "mqtt".into();
        e.tx_id = None;
        e.app = Some(AppRecord::Mqtt(sample_mqtt()));
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
        e.app = Some(AppRecord::Http(sample_http()));
        evs.push(e.clone());
        let mut d = e.clone();
        d.app = Some(AppRecord::Dns(sample_dns(false)));
        evs.push(d);
        let mut t = e.clone();
        t.app = Some(AppRecord::Tls(sample_tls()));
        evs.push(t);
        // SIP: a request with an SDP body and a response, as events and in an alert.
        for m in [
            SIP_INVITE,
            b"SIP/2.0 486 Busy Here\r\nContent-Length: 0\r\n\r\n",
        ] {
            let (msg, _) = meerkat_app::sip::parser::parse(m, false).expect("sip");
            let r = meerkat_app::sip::logger::record(&msg);
            let mut s = base(EventType::App);
            s.app_proto = "sip".into();
            s.ip_proto = 17;
            s.tx_id = None;
            s.app = Some(AppRecord::Sip(r.clone()));
            evs.push(s);
            let mut a = e.clone();
            a.app_proto = "sip".into();
            a.app = Some(AppRecord::Sip(r));
            evs.push(a);
        }
        let mut m = e;
        m.app = Some(AppRecord::Mqtt(sample_mqtt()));
        evs.push(m);
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
        assert!(l[1].contains(r#""dns":{"version":3,"type":"request","tx_id":0,"id":4660,"flags":"100","rd":true,"opcode":0,"rcode":"NXDOMAIN","queries":[{"rrname":"www.example.com","rrtype":"A"}]}"#), "{}", l[1]);
        assert!(
            l[2].contains(r#""rcode":"NXDOMAIN""#)
                && l[2].contains(r#""rrname":"","rrtype":"SOA""#),
            "{}",
            l[2]
        );
        assert!(
            l[3].contains(r#""tls":{"subject":"C=US, CN=example.com""#),
            "{}",
            l[3]
        );
        assert!(
            l[4].contains(r#""event_type":"mqtt""#)
                && l[4].contains(r#""mqtt":{"subscribe":{"qos":1,"retain":false,"dup":false,"message_id":1,"topics":[{"topic":"a/b","qos":1}]},"suback":{"qos":0,"retain":false,"dup":false,"message_id":1,"qos_granted":[1]}}"#),
            "{}",
            l[4]
        );
        assert!(
            l[8].contains(r#""sip":{"method":"INVITE","uri":"sip:bob@example.com","version":"SIP/2.0","sdp":{"origin":"alice 1 1 IN IP4 192.0.2.1""#)
                && l[8].contains(r#""request_line":"INVITE sip:bob@example.com SIP/2.0"}"#)
                && !l[8].contains("tx_id"),
            "{}",
            l[8]
        );
        assert!(
            l[10].contains(r#""sip":{"version":"SIP/2.0","code":"486","reason":"Busy Here","response_line":"SIP/2.0 486 Busy Here"}"#),
            "{}",
            l[10]
        );
        assert!(
            l[5].contains(r#""alert":{"#) && l[5].contains(r#""http":{"hostname""#),
            "{}",
            l[5]
        );
        assert!(l[12].contains(r#""mqtt":{"subscribe""#), "{}", l[12]);
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
