//! RFB, the Remote Framebuffer protocol of VNC (RFC 6143), over TCP (ports 5900-5909):
//! detection by the `RFB ` of either side's ProtocolVersion, the handshake parsed as
//! Suricata's parser does (versions, security types 3.3 and 3.7+, VNC authentication,
//! SecurityResult, ClientInit, ServerInit) into one transaction, the `rfb.*` keywords,
//! `pdu` frames, app-layer events and the EVE `rfb` record. What follows the handshake
//! is not parsed.

pub mod detect;
pub mod eve;
pub mod logger;
pub mod parser;
pub mod state;

pub use state::{RfbState, RfbTx};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, Buf, BufferId, Dir, Probe, Transaction};

/// RFB.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Rfb,
    name: "rfb",
    aliases: &[],
    family: None,
    enabled_by_default: true,
    transports: Transports::TCP,
    // Suricata's `detection-ports` for RFB; its detection is by pattern, on any port.
    default_ports: &[5900, 5901, 5902, 5903, 5904, 5905, 5906, 5907, 5908, 5909],
    port_bound: false,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(RfbState::new())),
    inner: &[],
    buffers: detect::BUFFERS,
    frames: detect::FRAMES,
    keywords: detect::KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "rfb",
        render: eve::render,
        tx_id: false,
        packet_dir: false,
    }),
    fuzz: &[FuzzTarget {
        name: "rfb",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &[
    "rfb.confused_state",
    "rfb.malformed_message",
    "rfb.unimplemented_security_type",
    "rfb.unknown_security_result",
];

/// Fuzz target: the handshake parser over arbitrary bytes in both directions (as the
/// shared driver lays them out, and as [`lockstep`] does), each message parser alone,
/// and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut RfbState::new(), data);
    lockstep(data);
    let _ = parser::version(data);
    let _ = parser::security_types(data);
    let _ = parser::failure_reason(data);
    let _ = parser::server_init(data);
    crate::fuzz::probes(data);
}

/// The handshake is lock-step (each side waits for the other's message), which pieces
/// of a fixed size rarely are: here the input is records of one byte (the top bit:
/// to the client; the rest: a length up to 127) and that many bytes for that direction
/// (the seeds are written so).
fn lockstep(mut data: &[u8]) {
    use crate::AppState;
    let mut s = RfbState::new();
    s.set_frames(&[detect::FRAME_PDU_TS, detect::FRAME_PDU_TC]);
    let mut out = crate::ParseOutput::default();
    while let [head, rest @ ..] = data {
        let n = usize::from(head & 0x7f).min(rest.len());
        let dir = if head & 0x80 != 0 {
            Dir::ToClient
        } else {
            Dir::ToServer
        };
        s.parse(dir, &rest[..n], &mut out);
        data = &rest[n..];
    }
    s.eof(Dir::ToServer, &mut out);
    s.eof(Dir::ToClient, &mut out);
    if let Some(tx) = s.tx(0) {
        let _ = tx.record();
        for id in [detect::NAME, detect::FRAME_PDU_TS, detect::FRAME_PDU_TC] {
            for i in 0..MAX_TOUCHED_FRAMES {
                let _ = tx.buffer(id, i);
                let _ = tx.frame(id, i);
            }
        }
    }
}

/// Frame items the fuzz driver reads back (more than a handshake makes).
const MAX_TOUCHED_FRAMES: usize = state::MAX_FRAMES + 2;

/// Suricata's detection pattern: `RFB ` (any case) at the start of either direction.
pub fn probe(data: &[u8]) -> Probe {
    const MAGIC: &[u8] = b"RFB ";
    let n = data.len().min(MAGIC.len());
    if !data[..n].eq_ignore_ascii_case(&MAGIC[..n]) {
        Probe::NoMatch
    } else if n < MAGIC.len() {
        Probe::NeedMore
    } else {
        Probe::Match
    }
}

impl Transaction for RfbTx {
    fn id(&self) -> u64 {
        0
    }

    /// Suricata's: the handshake is over (or given up), whichever direction; or the
    /// direction ended.
    fn complete(&self, dir: Dir) -> bool {
        self.complete || self.eof[dir.index()]
    }

    /// Grows with each message parsed (either side's: a keyword of one direction may
    /// read what the other said) and once more when complete.
    fn progress(&self, dir: Dir) -> u8 {
        (self.msgs % 64) as u8 | u8::from(self.complete(dir)) << 7
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        detect::buffer(self, id, index)
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::Rfb(logger::record(self)))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }

    fn frame(&self, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
        detect::frame_meta(self, id, index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::KwValue;
    use crate::{AppState, KeywordKind, ParseOutput};

    #[test]
    fn every_raised_event_is_listed() {
        let n =
            crate::events::raised_names_are_listed(super::EVENTS, include_str!("state.rs"), "rfb");
        assert!(n > 0);
    }

    #[test]
    fn probes() {
        assert_eq!(probe(b"RFB 003.008\n"), Probe::Match);
        assert_eq!(probe(b"rfb 003.008\n"), Probe::Match);
        assert_eq!(probe(b"RF"), Probe::NeedMore);
        assert_eq!(probe(b""), Probe::NeedMore);
        assert_eq!(probe(b"RFX"), Probe::NoMatch);
        assert_eq!(probe(b"SSH-2.0-x\r\n"), Probe::NoMatch);
    }

    fn kw(name: &str, v: &str) -> (KwValue, crate::descriptor::EvalFn) {
        let k = detect::KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        (parse(Some(v)).unwrap(), eval)
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let (v, e) = kw(name, v);
        e(&v, dir, 0, tx)
    }

    /// The 3.7 handshake of the corpus's `rfb-rules` pcap, its keywords and record.
    #[test]
    fn handshake_keywords_and_record() {
        let mut s = RfbState::new();
        let mut out = ParseOutput::default();
        let (ts, tc) = (Dir::ToServer, Dir::ToClient);
        s.parse(tc, b"RFB 003.007\n", &mut out);
        s.parse(ts, b"RFB 003.007\n", &mut out);
        s.parse(tc, b"\x01\x02", &mut out);
        let tx = s.tx(0).unwrap();
        assert_eq!(eval("rfb.sectype", "2", ts, tx), None);
        assert_eq!(tx.buffer(detect::NAME, 0), Buf::NotYet);
        s.parse(ts, b"\x02", &mut out);
        let tx = s.tx(0).unwrap();
        assert_eq!(eval("rfb.sectype", "2", ts, tx), Some(true));
        assert_eq!(eval("rfb.sectype", "2", tc, tx), Some(false));
        assert_eq!(eval("rfb.sectype", ">3", ts, tx), Some(false));
        assert_eq!(eval("rfb.secresult", "ok", tc, tx), None);
        let challenge = b"\xea\x51\x50\xa9\x9e\x0f\xeb\x63\x43\xc0\x45\xc6\xf9\x5c\xe4\x4c";
        s.parse(tc, challenge, &mut out);
        s.parse(ts, &[0xc3; 16], &mut out);
        s.parse(tc, b"\x00\x00\x00\x00", &mut out);
        let tx = s.tx(0).unwrap();
        assert_eq!(eval("rfb.secresult", "ok", tc, tx), Some(true));
        assert_eq!(eval("rfb.secresult", "0", tc, tx), Some(true));
        assert_eq!(eval("rfb.secresult", "!0", tc, tx), Some(false));
        assert_eq!(eval("rfb.secresult", "unknown", tc, tx), Some(false));
        s.parse(ts, b"\x00", &mut out);
        s.parse(tc, parser::tests::SERVER_INIT, &mut out);
        assert!(out.anomalies.is_empty(), "{:?}", out.anomalies);
        let tx = s.tx(0).unwrap();
        assert!(tx.complete(ts) && tx.complete(tc));
        assert_eq!(
            tx.buffer(detect::NAME, 0),
            Buf::Ready(b"aneagles@localhost.localdomain")
        );
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&tx.record().unwrap(), &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            concat!(
                r#"{"rfb":{"server_protocol_version":{"major":"003","minor":"007"},"#,
                r#""client_protocol_version":{"major":"003","minor":"007"},"#,
                r#""authentication":{"security_type":2,"vnc":{"challenge":"ea5150a99e0feb6343c045c6f95ce44c","#,
                r#""response":"c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3c3"},"security_result":"OK"},"#,
                r#""screen_shared":false,"framebuffer":{"width":1280,"height":800,"#,
                r#""name":"aneagles@localhost.localdomain","pixel_format":{"bits_per_pixel":32,"#,
                r#""depth":24,"big_endian":false,"true_color":true,"red_max":255,"green_max":255,"#,
                r#""blue_max":255,"red_shift":16,"green_shift":8,"blue_shift":0}}}}"#
            )
        );
    }

    #[test]
    fn a_name_not_utf8_is_written_as_suricata_does() {
        let r = meerkat_proto::events::Rfb {
            framebuffer: Some(meerkat_proto::events::RfbFramebuffer {
                name: vec![0xa0],
                ..Default::default()
            }),
            ..Default::default()
        };
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        eve::render(&AppRecord::Rfb(r), &mut o);
        o.end();
        let js = String::from_utf8(buf).unwrap();
        assert!(js.contains(r#""name":"\\xa0""#), "{js}");
        assert!(js.starts_with(r#"{"rfb":{"authentication":{},"#), "{js}");
    }
}
