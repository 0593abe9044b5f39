//! Keyword parsing tests.
use super::*;

#[test]
fn integer_comparisons() {
    assert_eq!(parse_num_cmp("10"), Some(NumCmp::Eq(10)));
    assert_eq!(parse_num_cmp("0x10"), Some(NumCmp::Eq(16)));
    assert_eq!(parse_num_cmp("<10"), Some(NumCmp::Lt(10)));
    assert_eq!(parse_num_cmp(">=10"), Some(NumCmp::Ge(10)));
    assert_eq!(parse_num_cmp("!9"), Some(NumCmp::Ne(9)));
    assert_eq!(parse_num_cmp("!=9"), Some(NumCmp::Ne(9)));
    assert_eq!(parse_num_cmp("8<>20"), Some(NumCmp::Between(8, 20)));
    assert_eq!(parse_num_cmp("8-20"), Some(NumCmp::Between(8, 20)));
    assert_eq!(parse_num_cmp("!8-20"), Some(NumCmp::NotBetween(8, 20)));
    assert_eq!(
        parse_num_cmp("&0xc0=0x80"),
        Some(NumCmp::MaskEq(0xc0, 0x80))
    );
    assert_eq!(parse_num_cmp("1kb"), Some(NumCmp::Eq(1024)));
    assert_eq!(parse_num_cmp("20<>8"), None);
    assert_eq!(parse_num_cmp("x"), None);
    assert!(NumCmp::Between(7, 20).test(8));
    assert!(!NumCmp::Between(7, 20).test(7));
}

/// The problem reason of a one-rule set, None when it loads.
fn problem(opts: &str) -> Option<String> {
    let text = format!("alert tcp any any -> any any ({opts} sid:1;)");
    let l = crate::rules::load_str(&text, &crate::rules::tests_ctx());
    l.problems.first().map(|p| p.reason.clone())
}

#[test]
fn negated_values() {
    for ok in [
        "tos:!8;",
        "window:! 1024;",
        "ip_proto:!tcp;",
        "ip_proto:! udp;",
        "isdataat:! 5;",
        "content:\"a\"; pcre:! \"/x/\";",
        "ssl_version:!sslv3,tls1.0;",
        "ssl_state:!client_hello;",
    ] {
        assert_eq!(problem(ok), None, "{ok}");
    }
    for (bad, why) in [
        ("tos:!256;", "expected 0-255"),
        ("window:!x;", "expected 0-65535"),
        ("ssl_state:! client_hello;", "unknown state ` client_hello`"),
    ] {
        assert_eq!(problem(bad).as_deref(), Some(why), "{bad}");
    }
}

#[test]
fn byte_jump_counts() {
    assert_eq!(problem("byte_jump:0,0,relative,post_offset -8;"), None);
    assert_eq!(problem("byte_extract:1,0,n; byte_jump:n,0;"), None);
    assert!(problem("byte_jump:9,0;").unwrap().contains("0 to 8 bytes"));
    assert!(
        problem("byte_jump:m,0;")
            .unwrap()
            .contains("bad byte count")
    );
    assert!(
        problem("byte_test:0,=,1,0;")
            .unwrap()
            .contains("1 to 8 bytes")
    );
    assert!(
        problem("byte_jump:1,0,from_beginning,from_end;")
            .unwrap()
            .contains("exclude")
    );
    let l = crate::rules::load_str(
        "alert tcp any any -> any any (byte_extract:1,0,n; byte_jump:n,0,relative,post_offset -8; sid:1;)",
        &crate::rules::tests_ctx(),
    );
    let Match::ByteJump(j) = &l.rules[0].payload.items[1] else {
        panic!("not a byte_jump: {:?}", l.rules[0].payload.items);
    };
    assert_eq!((j.nbytes_var, j.post_offset), (Some(0), -8));
}

#[test]
fn vlan_id_parse() {
    let l = crate::rules::load_str(
        "alert ip any any -> any any (vlan.id:0x12C,1; sid:1;)\n\
         alert ip any any -> any any (vlan.id:>=200; sid:2;)\n\
         alert ip any any -> any any (vlan.id:!500,all; sid:3;)\n\
         alert ip any any -> any any (vlan.id:100-600,-1; sid:4;)\n",
        &crate::rules::tests_ctx(),
    );
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    let got: Vec<_> = l.rules.iter().map(|r| r.header[0].clone()).collect();
    assert_eq!(
        got,
        vec![
            HeaderMatch::VlanId {
                cmp: NumCmp::Eq(300),
                layer: VlanLayer::Index(1)
            },
            HeaderMatch::VlanId {
                cmp: NumCmp::Ge(200),
                layer: VlanLayer::Any
            },
            HeaderMatch::VlanId {
                cmp: NumCmp::Ne(500),
                layer: VlanLayer::All
            },
            HeaderMatch::VlanId {
                cmp: NumCmp::Between(100, 600),
                layer: VlanLayer::Index(-1)
            },
        ]
    );
    assert!(
        problem("vlan.id:5000;")
            .unwrap()
            .contains("outside 0 to 4095")
    );
    assert!(problem("vlan.id:5,3;").unwrap().contains("bad layer"));
    assert!(problem("vlan.id:x;").unwrap().contains("bad id"));
}

#[test]
fn header_buffers_parse() {
    let l = crate::rules::load_str(
        r#"alert ip any any -> any any (ipv6.hdr; content:"|11 00|"; offset:40; endswith; pkt_data; content:"x"; sid:1;)"#,
        &crate::rules::tests_ctx(),
    );
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    let r = &l.rules[0];
    assert_eq!(r.hdr_buffers.len(), 1);
    assert_eq!(r.hdr_buffers[0].buf, HdrBuffer::Ipv6);
    assert_eq!(r.hdr_buffers[0].list.items.len(), 1);
    assert_eq!(r.payload.items.len(), 1);
    // The prefilter never searches a header buffer's content.
    assert_eq!(r.fast.as_ref().map(|f| f.list), Some(ListRef::Payload));
    assert!(
        problem(r#"tcp.hdr; to_lowercase; content:"a";"#)
            .unwrap()
            .contains("transforms need a sticky buffer")
    );
    assert!(
        problem(r#"tcp.hdr; content:"a"; http.uri; content:"b";"#)
            .unwrap()
            .contains("packet header buffers")
    );
    assert!(problem(r#"icmpv4.hdr; content:"a";"#).is_some());
}

#[test]
fn absent_parse() {
    let http = |opts: &str| {
        let text = format!("alert http any any -> any any ({opts} sid:1;)");
        let l = crate::rules::load_str(&text, &crate::rules::tests_ctx());
        l.problems.first().map(|p| p.reason.clone())
    };
    assert_eq!(http("file.data; absent;"), None);
    assert_eq!(http(r#"file.data; absent: or_else; content:!"a";"#), None);
    assert!(
        http(r#"file.data; absent; content:"a";"#)
            .unwrap()
            .contains("cannot be combined")
    );
    assert!(
        http("file.data; absent: or_else;")
            .unwrap()
            .contains("needs matches")
    );
    assert!(
        http(r#"file.data; content:"a"; absent;"#)
            .unwrap()
            .contains("must come first")
    );
    assert!(http("absent;").unwrap().contains("needs a sticky buffer"));
    assert!(
        http("file.data; absent: maybe;")
            .unwrap()
            .contains("unknown option")
    );
}

#[test]
fn flags() {
    let f = parse_flags("SA").unwrap();
    assert_eq!((f.bits, f.modifier), (0x12, FlagMod::Exact));
    let f = parse_flags("S,12").unwrap();
    assert_eq!((f.bits, f.ignore), (0x02, 0xc0));
    assert_eq!(parse_flags("!R").unwrap().modifier, FlagMod::Not);
    assert!(parse_flags("X").is_err());
}

#[test]
fn frames_parse() {
    let ctx = crate::rules::tests_ctx();
    let l = crate::rules::load_str(
        concat!(
            "alert sip any any -> any any (frame:pdu; content:\"REGISTER\"; startswith; sid:1;)\n",
            "alert tcp any any -> any any (frame:sip.request.line; content:\"x\"; sid:2;)\n",
        ),
        &ctx,
    );
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    for r in &l.rules {
        assert_eq!(r.app_proto, Some(app::AppProto::Sip));
        assert_eq!(r.buffers.len(), 1);
    }
    assert_eq!(l.rules[0].buffers[0].def.name, "pdu");
    assert_eq!(l.rules[1].buffers[0].def.name, "request.line");
    let sip = |opts: &str| {
        let text = format!("alert sip any any -> any any ({opts} sid:1;)");
        let l = crate::rules::load_str(&text, &ctx);
        l.problems.first().map(|p| p.reason.clone())
    };
    assert!(
        sip("frame:nope; content:\"a\";")
            .unwrap()
            .contains("no frame")
    );
    assert!(sip("frame; content:\"a\";").is_some());
    // A frame of a protocol without frames.
    assert!(problem("frame:http.pdu; content:\"a\";").is_some());
}

/// `app-layer-protocol` as Suricata 8 takes it (checked with suricata-ref).
#[test]
fn app_layer_protocol_conflicts() {
    let load = |rule: &str| {
        let l = crate::rules::load_str(rule, &crate::rules::tests_ctx());
        l.problems.first().map(|p| p.reason.clone())
    };
    for ok in [
        "alert tcp any any -> any any (app-layer-protocol:!http; app-layer-protocol:!smtp; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:failed; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:http; http.uri; content:\"a\"; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:!http; http.uri; content:\"a\"; sid:1;)",
        // Different modes do not conflict (detect-app-layer-protocol-05).
        "alert tcp any any -> any any (app-layer-protocol:http1,to_server; app-layer-protocol:ssh,to_client; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:http; app-layer-protocol:ssh,to_client; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:http; app-layer-protocol:http,either; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:!http,to_server; app-layer-protocol:!ssh,to_server; sid:1;)",
    ] {
        assert_eq!(load(ok), None, "{ok}");
    }
    for bad in [
        "alert http any any -> any any (app-layer-protocol:!smtp; sid:1;)",
        "alert http any any -> any any (app-layer-protocol:http; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:!smtp; app-layer-protocol:http; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:http; app-layer-protocol:!smtp; sid:1;)",
        "alert tcp any any -> any any (http.uri; content:\"a\"; app-layer-protocol:http; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:http,to_server; app-layer-protocol:ssh,to_server; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:http,to_server; app-layer-protocol:http,to_server; sid:1;)",
        "alert tcp any any -> any any (app-layer-protocol:!http,to_server; app-layer-protocol:!http,to_server; sid:1;)",
        "alert http any any -> any any (app-layer-protocol:ssh,to_client; sid:1;)",
    ] {
        assert!(load(bad).is_some(), "{bad}");
    }
}
