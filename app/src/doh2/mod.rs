//! DNS over HTTP/2 in clear text (RFC 8484), as Suricata 8's `doh2`: an HTTP/2 flow
//! becomes `doh2` (`app_proto_orig` `http2`) once one of its streams carries a DNS
//! message (a body of type `application/dns-message`, or a GET's `?dns=` parameter,
//! base64url), asked by the HTTP/2 parser as a [`crate::ProtoChange`] that keeps its
//! state: the transactions stay the HTTP/2 streams, with their ids. The DNS messages
//! are parsed by the DNS module; `dns.*` buffers and `alert dns` rules apply to the
//! flow (DNS is [`Descriptor::inner`]), and so do `alert http2` rules and the
//! `http2.*` keywords (HTTP/2 is its family), as in Suricata. A stream with a DNS
//! message is logged as a `dns` event holding the stream's `http` object and the
//! message's `dns` object; the flow's other streams stay `http` events.

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::http2::{Http2Config, Http2State};
use crate::{AppProto, AppRecord, Dir, ParseOutput, Probe};

/// DNS over HTTP/2.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Doh2,
    name: "doh2",
    aliases: &[],
    family: Some(AppProto::Http2),
    inner: &[AppProto::Dns],
    enabled_by_default: true,
    transports: Transports::TCP,
    default_ports: &[],
    port_bound: false,
    // Reached only from HTTP/2, never by probing.
    probe: |_, _, _| Probe::NoMatch,
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(Http2State::new(Http2Config::default()))),
    buffers: &[],
    frames: &[],
    keywords: &[],
    events: &[],
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "dns",
        render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "doh2",
        run: fuzz,
    }],
};

/// [`crate::RecordDef::render`]: the stream's `http` object, then the `dns` one.
pub fn render(r: &AppRecord, o: &mut meerkat_eve::Obj<'_>) {
    if let AppRecord::Doh2(d) = r {
        if let Some(h) = &d.http {
            crate::http2::eve::render(&AppRecord::Http2(h.clone()), o);
        }
        if let Some(m) = &d.dns {
            crate::dns::eve::render(&AppRecord::Dns(m.clone()), o);
        }
    }
}

/// Fuzz target: the HTTP/2 parser over DoH streams (the client preface first), every
/// record rendered.
pub fn fuzz(data: &[u8]) {
    let mut s = Http2State::new(Http2Config::default());
    let mut out = ParseOutput::default();
    crate::AppState::parse(
        &mut s,
        Dir::ToServer,
        crate::http2::frame::PREFACE,
        &mut out,
    );
    crate::fuzz::drive(&mut s, data);
    for t in s.txs() {
        for r in [
            crate::Transaction::record(t),
            crate::Transaction::event_record(t, Dir::ToClient),
        ]
        .into_iter()
        .flatten()
        {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            if let AppRecord::Doh2(_) = r {
                render(&r, &mut o);
            } else {
                crate::http2::eve::render(&r, &mut o);
            }
            o.end();
        }
    }
}
