//! NTP (RFC 5905) over UDP port 123, as Suricata 8 has it: detection by a packet of
//! version 3 or 4 on that port, one transaction per packet, inspected in the
//! direction it came, the `ntp.version`, `ntp.mode`, `ntp.stratum` and
//! `ntp.reference_id` keywords, and the `ntp` object of alerts (Suricata 8 writes no
//! `ntp` events of its own).

use crate::buffers::{BufferDef, def};
use crate::descriptor::{
    Build, Descriptor, FuzzTarget, KeywordDef, RecordDef, Transports, never_reply,
};
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, ParseOutput, Probe, Transaction};

use std::collections::VecDeque;

/// An NTP packet's fixed part (extension fields and a MAC may follow).
pub const PACKET_LEN: usize = 48;
/// Most live transactions per flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 256;

/// NTP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Ntp,
    name: "ntp",
    aliases: &[],
    enabled_by_default: true,
    transports: Transports::UDP,
    default_ports: &[123],
    // Suricata's NTP has a probing parser on its port and no pattern.
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(NtpState::default())),
    inner: &[],
    family: None,
    buffers: BUFFERS,
    frames: &[],
    keywords: KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "ntp",
        render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "ntp",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &["ntp.malformed_data"];

/// The fields of a packet's header that the keywords and the record read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    pub version: u8,
    pub mode: u8,
    pub stratum: u8,
    pub reference_id: [u8; 4],
}

/// The header of a packet of version 3 or 4.
pub fn header(data: &[u8]) -> Option<Header> {
    if data.len() < PACKET_LEN {
        return None;
    }
    let version = (data[0] >> 3) & 7;
    if version != 3 && version != 4 {
        return None;
    }
    Some(Header {
        version,
        mode: data[0] & 7,
        stratum: data[1],
        reference_id: [data[12], data[13], data[14], data[15]],
    })
}

/// Suricata's probe: a packet of version 3 or 4.
pub fn probe(data: &[u8]) -> Probe {
    if header(data).is_some() {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

/// One packet.
#[derive(Debug)]
pub struct NtpTx {
    pub id: u64,
    pub dir: Dir,
    pub header: Header,
}

/// One flow.
#[derive(Debug, Default)]
pub struct NtpState {
    next_id: u64,
    txs: VecDeque<NtpTx>,
}

impl AppState for NtpState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        let Some(header) = header(data) else {
            // Suricata's parser fails on it: the event goes to the newest transaction
            // (the previous datagram's), and the datagram gets no transaction.
            out.anomaly("ntp.malformed_data");
            return;
        };
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(NtpTx {
            id: self.next_id,
            dir,
            header,
        });
        self.next_id += 1;
    }

    fn gap(&mut self, _dir: Dir, _len: u64, _out: &mut ParseOutput) {}

    fn eof(&mut self, _dir: Dir, _out: &mut ParseOutput) {}

    fn tx_count(&self) -> usize {
        self.txs.len()
    }

    fn tx(&self, index: usize) -> Option<&dyn Transaction> {
        self.txs.get(index).map(|t| t as &dyn Transaction)
    }

    fn free_below(&mut self, id: u64) {
        crate::free_txs_below(&mut self.txs, id);
    }
}

pub const REFERENCE_ID_TS: BufferId = BufferId::of(AppProto::Ntp, 1);
pub const REFERENCE_ID_TC: BufferId = BufferId::of(AppProto::Ntp, 2);

/// The sticky buffers of NTP.
pub static BUFFERS: &[BufferDef] = &[def(
    "ntp.reference_id",
    &[],
    None,
    AppProto::Ntp,
    Some(REFERENCE_ID_TS),
    Some(REFERENCE_ID_TC),
    false,
)];

/// NTP's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("ntp.version", &[], parse_u8, eval_version),
    KeywordDef::check("ntp.mode", &[], parse_mode, eval_mode),
    KeywordDef::check("ntp.stratum", &[], parse_u8, eval_stratum),
];

/// The association modes `ntp.mode` names (RFC 5905 §3), by number.
const MODES: &[&str] = &[
    "reserved",
    "symmetric_active",
    "symmetric_passive",
    "client",
    "server",
    "broadcast",
    "control",
    "private",
];

fn parse_u8(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let cmp = parse_num_cmp(s).ok_or_else(|| format!("bad value `{s}`"))?;
    let bound = match cmp {
        NumCmp::Eq(a)
        | NumCmp::Ne(a)
        | NumCmp::Lt(a)
        | NumCmp::Le(a)
        | NumCmp::Gt(a)
        | NumCmp::Ge(a) => a,
        NumCmp::Between(_, b) | NumCmp::NotBetween(_, b) => b,
        NumCmp::MaskEq(m, x) | NumCmp::MaskNe(m, x) => m | x,
    };
    if bound > u64::from(u8::MAX) {
        return Err(format!("`{s}` is out of range (at most 255)"));
    }
    Ok(KwValue::Num(cmp))
}

/// A mode name of [`MODES`] (`!` before it negates it) or a number comparison.
fn parse_mode(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let (neg, word) = crate::value::negation(s);
    match MODES.iter().position(|m| m.eq_ignore_ascii_case(word)) {
        Some(i) if neg => Ok(KwValue::Num(NumCmp::Ne(i as u64))),
        Some(i) => Ok(KwValue::Num(NumCmp::Eq(i as u64))),
        None => parse_u8(Some(s)),
    }
}

fn eval(v: &KwValue, dir: Dir, t: &dyn Transaction, get: fn(&Header) -> u8) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let tx = t.as_any()?.downcast_ref::<NtpTx>()?;
    Some(tx.dir == dir && cmp.test(u64::from(get(&tx.header))))
}

fn eval_version(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |h| h.version)
}

fn eval_mode(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |h| h.mode)
}

fn eval_stratum(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, |h| h.stratum)
}

impl Transaction for NtpTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A packet is the whole transaction.
    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    /// A packet's transaction is its direction's only.
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn buffer(&self, id: BufferId, index: usize) -> Buf<'_> {
        let dir = match id {
            REFERENCE_ID_TS => Dir::ToServer,
            REFERENCE_ID_TC => Dir::ToClient,
            _ => return Buf::Absent,
        };
        if dir == self.dir && index == 0 {
            Buf::Ready(&self.header.reference_id)
        } else {
            Buf::Absent
        }
    }

    /// The `ntp` object of an alert.
    fn record(&self) -> Option<AppRecord> {
        let h = &self.header;
        Some(AppRecord::Ntp(meerkat_proto::events::Ntp {
            version: u32::from(h.version),
            mode: u32::from(h.mode),
            stratum: u32::from(h.stratum),
            reference_id: h.reference_id.to_vec(),
        }))
    }

    /// Suricata 8 has no `ntp` event of its own.
    fn event_record(&self, _dir: Dir) -> Option<AppRecord> {
        None
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// [`crate::RecordDef::render`]: the `ntp` object, the reference id as
/// colon-separated hex bytes.
pub fn render(r: &AppRecord, o: &mut meerkat_eve::Obj<'_>) {
    if let AppRecord::Ntp(r) = r {
        let id = r
            .reference_id
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":");
        o.obj("ntp", |x| {
            x.u64("version", u64::from(r.version))
                .u64("mode", u64::from(r.mode))
                .u64("stratum", u64::from(r.stratum))
                .str("reference_id", &id);
        });
    }
}

/// Fuzz target: the parser over the datagrams the shared driver cuts and the input
/// as one datagram, every record rendered, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut NtpState::default(), data);
    let mut s = NtpState::default();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    for i in 0..s.tx_count() {
        if let Some(r) = s.tx(i).and_then(|t| t.record()) {
            let mut buf = Vec::new();
            let mut o = meerkat_eve::Obj::new(&mut buf);
            render(&r, &mut o);
            o.end();
        }
    }
    crate::fuzz::probes(data);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeywordKind;

    fn packet(version: u8, mode: u8, stratum: u8, id: &[u8; 4]) -> Vec<u8> {
        let mut p = vec![0; PACKET_LEN];
        p[0] = (version << 3) | mode;
        p[1] = stratum;
        p[12..16].copy_from_slice(id);
        p
    }

    fn eval(name: &str, v: &str, dir: Dir, tx: &dyn Transaction) -> Option<bool> {
        let k = KEYWORDS.iter().find(|k| k.name == name).unwrap();
        let KeywordKind::Check { parse, eval } = k.kind else {
            panic!()
        };
        eval(&parse(Some(v)).unwrap(), dir, 0, tx)
    }

    #[test]
    fn every_raised_event_is_listed() {
        // The keywords' names are in the same file: left out.
        let mut src = include_str!("mod.rs").to_string();
        for kw in ["version", "mode", "stratum", "reference_id"] {
            src = src.replace(&format!("\"ntp.{kw}\""), "");
        }
        let n = crate::events::raised_names_are_listed(EVENTS, &src, "ntp");
        assert!(n > 0);
    }

    #[test]
    fn packets_keywords_and_records() {
        let mut s = NtpState::default();
        let mut out = ParseOutput::default();
        s.parse(Dir::ToServer, &packet(4, 3, 0, &[0; 4]), &mut out);
        s.parse(Dir::ToClient, &packet(4, 4, 2, b"LOCL"), &mut out);
        s.parse(Dir::ToClient, &packet(2, 4, 2, b"LOCL"), &mut out);
        assert_eq!(out.anomalies, ["ntp.malformed_data"]);
        assert_eq!(s.tx_count(), 2);
        let (q, r) = (s.tx(0).unwrap(), s.tx(1).unwrap());
        assert_eq!(eval("ntp.version", "4", Dir::ToServer, q), Some(true));
        assert_eq!(eval("ntp.version", "4", Dir::ToClient, q), Some(false));
        assert_eq!(eval("ntp.mode", "client", Dir::ToServer, q), Some(true));
        assert_eq!(eval("ntp.mode", "!server", Dir::ToServer, q), Some(true));
        assert_eq!(eval("ntp.mode", "!server", Dir::ToClient, r), Some(false));
        assert_eq!(eval("ntp.mode", "4", Dir::ToClient, r), Some(true));
        assert_eq!(eval("ntp.stratum", "<1", Dir::ToServer, q), Some(true));
        assert_eq!(eval("ntp.stratum", ">=2", Dir::ToClient, r), Some(true));
        assert_eq!(r.buffer(REFERENCE_ID_TC, 0), Buf::Ready(b"LOCL"));
        assert_eq!(r.buffer(REFERENCE_ID_TS, 0), Buf::Absent);
        assert!(r.event_record(Dir::ToClient).is_none());
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        render(&r.record().unwrap(), &mut o);
        o.end();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            r#"{"ntp":{"version":4,"mode":4,"stratum":2,"reference_id":"4c:4f:43:4c"}}"#
        );
        assert_eq!(probe(&packet(3, 3, 0, &[0; 4])), Probe::Match);
        assert_eq!(probe(&packet(1, 3, 0, &[0; 4])), Probe::NoMatch);
        assert_eq!(probe(&[0x23; 20]), Probe::NoMatch);
    }
}
