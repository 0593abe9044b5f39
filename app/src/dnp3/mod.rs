//! DNP3 (IEEE 1815) over TCP (port 20000), off unless the config turns it on, as in
//! Suricata 8 (which has no DNP3 parser for UDP: a UDP flow to port 20000 is `failed`
//! there, and unparsed here; the parser itself takes datagrams as well): link frames with their CRCs checked, transport segments reassembled,
//! one transaction per application message (requests, responses and unsolicited
//! responses), the objects and points Suricata decodes, the `dnp3.*` keywords,
//! app-layer events and the EVE `dnp3` record.

pub mod config;
pub mod detect;
pub mod eve;
pub mod logger;
pub mod objects;
pub mod parser;
pub mod state;

pub use state::{Dnp3Config, Dnp3State, Dnp3Tx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction, Transport};

/// DNP3.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Dnp3,
    name: "dnp3",
    aliases: &[],
    family: None,
    transports: Transports::TCP,
    default_ports: &[20000],
    // Suricata's probing parser runs on the detection ports only.
    port_bound: true,
    enabled_by_default: false,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply,
    build: Build::Configured {
        keys: config::KEYS,
        build: config::build,
    },
    inner: &[],
    buffers: detect::BUFFERS,
    keywords: detect::KEYWORDS,
    frames: &[],
    events: EVENTS,
    events_upper_case: true,
    raw_trigger: crate::descriptor::RawTrigger::TxComplete,
    record: Some(RecordDef {
        event_type: "dnp3",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "dnp3",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "dnp3.bad_link_crc",
    "dnp3.bad_transport_crc",
    "dnp3.flooded",
    "dnp3.len_too_small",
    "dnp3.malformed",
    "dnp3.too_long_reassembly",
    "dnp3.too_many_objects",
    "dnp3.too_many_points",
    "dnp3.unknown_object",
];

/// Suricata's probe: a banner, or a link header with the start bytes and a length
/// that holds the header.
pub fn probe(data: &[u8]) -> Probe {
    if parser::probe_banner(data) {
        return Probe::Match;
    }
    if data.len() < parser::LINK_HEADER_LEN {
        return match data {
            [] | [0x05] | [0x05, 0x64, ..] => Probe::NeedMore,
            _ => Probe::NoMatch,
        };
    }
    if !parser::start_ok(data) || usize::from(data[2]) < parser::LINK_COUNTED {
        return Probe::NoMatch;
    }
    Probe::Match
}

/// A frame from the outstation (the link control's DIR bit clear), or a banner: the
/// server's side, as Suricata's probe turns the flow for it.
pub fn is_reply(_: Transport, data: &[u8]) -> bool {
    parser::probe_banner(data)
        || (data.len() >= parser::LINK_HEADER_LEN && data[3] & parser::LINK_DIR == 0)
}

/// Fuzz target: the flow parser over arbitrary bytes in both directions (small
/// limits, so that they are hit too), then again with the CRCs of every frame found
/// made good (so that mutations reach the transport and application layers), the
/// object decoder alone, and every probe.
pub fn fuzz(data: &[u8]) {
    let cfg = Dnp3Config {
        max_tx: 4,
        max_points: 64,
        max_objects: 8,
    };
    crate::fuzz::drive(&mut Dnp3State::new(cfg), data);
    crate::fuzz::drive(&mut Dnp3State::new(cfg), &good_crcs(data));
    let mut out = Vec::new();
    let _ = objects::decode(
        data,
        objects::Limits {
            max_points: 256,
            max_objects: 64,
        },
        &mut out,
    );
    for o in &out {
        let rec = logger::record(
            &Dnp3Tx {
                id: 0,
                kind: state::Kind::Request,
                link: parser::LinkHeader::default(),
                transport: 0,
                app_control: 0,
                function_code: 0,
                iin: None,
                data: Vec::new(),
                objects: vec![o.clone()],
                done: true,
                complete: true,
                info: [0; detect::INFO_LEN],
                obj_ids: Vec::new(),
            },
            true,
        );
        let mut buf = Vec::new();
        eve::render(&AppRecord::Dnp3(rec), &mut meerkat_eve::Obj::new(&mut buf));
    }
    crate::fuzz::probes(data);
}

/// `data` with the CRCs of the frames that start at `05 64` recomputed.
fn good_crcs(data: &[u8]) -> Vec<u8> {
    let mut b = data.to_vec();
    let mut i = 0;
    while i + parser::LINK_HEADER_LEN <= b.len() {
        let Some(len) = parser::frame_len(b[i + 2]).filter(|_| parser::start_ok(&b[i..])) else {
            i += 1;
            continue;
        };
        let end = (i + len).min(b.len());
        let h = parser::crc(&b[i..i + 8]).to_le_bytes();
        b[i + 8..i + 10].copy_from_slice(&h);
        let mut at = i + parser::LINK_HEADER_LEN;
        while at + parser::CRC_LEN < end {
            let n = (end - at - parser::CRC_LEN).min(parser::BLOCK);
            let c = parser::crc(&b[at..at + n]).to_le_bytes();
            b[at + n..at + n + parser::CRC_LEN].copy_from_slice(&c);
            at += n + parser::CRC_LEN;
        }
        i = end.max(i + 1);
    }
    b
}

impl Transaction for Dnp3Tx {
    fn id(&self) -> u64 {
        self.id
    }

    fn complete(&self, _dir: Dir) -> bool {
        self.done
    }

    fn progress(&self, _dir: Dir) -> u8 {
        u8::from(self.done)
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Dnp3(logger::record(self, true)))
    }

    /// One event per message, once its last segment is in (a message that never
    /// got it is not logged, as in Suricata): the object itself.
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        match dir {
            Dir::ToClient if self.done => Some(AppRecord::Dnp3(logger::record(self, false))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::state::tests::{read_request, read_response};
    use super::*;
    use crate::value::KwValue;
    use crate::{AppState, KeywordKind, ParseOutput};

    #[test]
    fn every_raised_event_is_listed() {
        let n = crate::events::raised_names_are_listed(
            super::EVENTS,
            concat!(include_str!("state.rs"), include_str!("objects.rs")),
            "dnp3",
        );
        assert!(n >= EVENTS.len());
    }

    #[test]
    fn fuzz_inputs_get_good_crcs() {
        let good = read_request(1);
        let mut bad = good.clone();
        bad[8] ^= 1;
        let n = bad.len();
        bad[n - 1] ^= 1;
        let mut input = b"xx".to_vec();
        input.extend_from_slice(&bad);
        input.extend_from_slice(&bad[..12]);
        let fixed = good_crcs(&input);
        assert_eq!(&fixed[2..2 + n], &good[..]);
        assert_eq!(fixed.len(), input.len());
    }

    #[test]
    fn probes() {
        assert_eq!(probe(&read_request(0)), Probe::Match);
        assert_eq!(probe(b"\x05\x64\x05"), Probe::NeedMore);
        assert_eq!(probe(b""), Probe::NeedMore);
        assert_eq!(probe(b"\x05\x65"), Probe::NoMatch);
        assert_eq!(probe(b"GET / HTTP/1.1\r\n"), Probe::NoMatch);
        assert_eq!(
            probe(b"\x05\x64\x04\xc4\x01\x00\x0a\x00\x00\x00"),
            Probe::NoMatch
        );
        assert_eq!(probe(b"DNP3 ready"), Probe::Match);
        assert!(!is_reply(Transport::Tcp, &read_request(0)));
        assert!(is_reply(Transport::Tcp, &read_response(0)));
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let k = detect::KEYWORDS
            .iter()
            .find(|k| k.name == name || k.aliases.contains(&name))
            .unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        let v: KwValue = parse(Some(v)).unwrap();
        eval(&v, dir, 0, tx)
    }

    #[test]
    fn keywords() {
        let mut s = Dnp3State::new(Dnp3Config::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &read_request(0), &mut out);
        s.parse(Dir::ToClient, &read_response(0), &mut out);
        let (req, resp) = (s.tx(0).unwrap(), s.tx(1).unwrap());
        let (ts, tc) = (Dir::ToServer, Dir::ToClient);
        assert_eq!(eval("dnp3_func", "read", ts, req), Some(true));
        assert_eq!(eval("dnp3.func", "1", ts, req), Some(true));
        assert_eq!(eval("dnp3.func", "write", ts, req), Some(false));
        assert_eq!(eval("dnp3.func", "read", tc, req), Some(false));
        assert_eq!(eval("dnp3.func", "response", tc, resp), Some(true));
        assert_eq!(eval("dnp3_obj", "60,2", ts, req), Some(true));
        assert_eq!(eval("dnp3.obj", "60,1", ts, req), Some(false));
        assert_eq!(eval("dnp3.obj", "30,1", tc, resp), Some(true));
        assert_eq!(eval("dnp3_ind", "device_restart", tc, resp), Some(true));
        assert_eq!(eval("dnp3.ind", "need_time", tc, resp), Some(false));
        assert_eq!(
            eval("dnp3.ind", "need_time,device_restart", tc, resp),
            Some(true)
        );
        assert_eq!(
            eval("dnp3.ind", "device_restart,!need_time", tc, resp),
            Some(true)
        );
        assert_eq!(eval("dnp3.ind", "!device_restart", tc, resp), Some(false));
        assert_eq!(eval("dnp3.ind", "0x8000", tc, resp), Some(true));
        assert_eq!(eval("dnp3.ind", "!0", tc, resp), Some(true));
        // Requests have no indications.
        assert_eq!(eval("dnp3.ind", "!0", ts, req), Some(false));
        assert_eq!(
            resp.buffer(detect::DATA_TC, 0),
            Buf::Ready(&[0xc0, 0x81, 0x80, 0x00, 30, 1, 0, 4, 4, 1, 2, 1, 0, 0][..])
        );
        assert_eq!(resp.buffer(detect::DATA_TS, 0), Buf::Absent);
        for (k, v) in [
            ("dnp3.func", "nope"),
            ("dnp3.func", "256"),
            ("dnp3.ind", "bogus"),
            ("dnp3.obj", "1"),
            ("dnp3.obj", "300,1"),
        ] {
            let d = detect::KEYWORDS.iter().find(|d| d.name == k).unwrap();
            let KeywordKind::Check { parse, .. } = d.kind else {
                panic!()
            };
            assert!(parse(Some(v)).is_err(), "{k}:{v}");
        }
    }

    fn render(r: &AppRecord) -> String {
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(r, &mut o);
        o.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn records_as_suricata_writes_them() {
        let mut s = Dnp3State::new(Dnp3Config::default());
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &read_request(3), &mut out);
        s.parse(Dir::ToClient, &read_response(3), &mut out);
        let req = s.tx(0).unwrap();
        assert_eq!(
            render(&req.event_record(Dir::ToClient).unwrap()),
            r#"{"dnp3":{"type":"request","control":{"dir":true,"pri":true,"fcb":false,"fcv":false,"function_code":4},"src":1,"dst":10,"application":{"control":{"fir":true,"fin":true,"con":false,"uns":false,"sequence":3},"function_code":1,"objects":[{"group":60,"variation":2,"qualifier":6,"prefix_code":0,"range_code":6,"start":0,"stop":0,"count":0},{"group":60,"variation":3,"qualifier":6,"prefix_code":0,"range_code":6,"start":0,"stop":0,"count":0},{"group":60,"variation":4,"qualifier":6,"prefix_code":0,"range_code":6,"start":0,"stop":0,"count":0}],"complete":true}}}"#
        );
        let resp = s.tx(1).unwrap();
        assert_eq!(
            render(&resp.record().unwrap()),
            r#"{"dnp3":{"response":{"type":"response","control":{"dir":false,"pri":true,"fcb":false,"fcv":false,"function_code":4},"src":10,"dst":1,"application":{"control":{"fir":true,"fin":true,"con":false,"uns":false,"sequence":3},"function_code":129,"objects":[{"group":30,"variation":1,"qualifier":0,"prefix_code":0,"range_code":0,"start":4,"stop":4,"count":1,"points":[{"prefix":0,"index":4,"online":1,"restart":0,"comm_lost":0,"remote_forced":0,"local_forced":0,"over_range":0,"reference_err":0,"reserved0":0,"value":258}]}],"complete":true},"iin":{"indicators":["device_restart"]}}}}"#
        );
        assert!(req.event_record(Dir::ToServer).is_none());
        // A message waiting for its last segment: nothing in an alert, no event.
        let mut s = Dnp3State::new(Dnp3Config::default());
        let first = parser::tests::frame(0xc4, 10, 1, &[0x40, 0xc0, 0x01, 60, 1, 6]);
        s.parse(Dir::ToServer, &first, &mut out);
        let tx = s.tx(0).unwrap();
        assert_eq!(render(&tx.record().unwrap()), r#"{"dnp3":{}}"#);
        assert!(tx.event_record(Dir::ToClient).is_none());
    }
}
