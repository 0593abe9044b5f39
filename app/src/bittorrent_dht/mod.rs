//! BitTorrent DHT (BEP 5) over UDP, as Suricata 8 has it: detection by content on any
//! port (a datagram that starts a query, `d1:ad2:id20:`, in either direction), one
//! transaction per message (queries, responses and errors are not paired: Suricata
//! logs each on its own, inspected in the direction it came), the `bittorrent_dht`
//! record, and the `malformed_packet` event. Suricata 8 has no `bittorrent-dht.*`
//! keyword: rules on the protocol match the datagrams' content and `app-layer-event`.

pub mod bencode;
pub mod parser;

use meerkat_proto::events::{BittorrentDht, BittorrentDhtNode};

use crate::descriptor::{Build, Descriptor, FuzzTarget, RecordDef, Transports, never_reply};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, ParseOutput, Probe, Transaction};

use std::collections::VecDeque;

/// Most live transactions per flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 256;

/// Suricata's detection pattern: a query's first bytes, at the start of a datagram.
pub const PATTERN: &[u8] = b"d1:ad2:id20:";

/// BitTorrent DHT.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::BittorrentDht,
    name: "bittorrent-dht",
    aliases: &[],
    enabled_by_default: true,
    transports: Transports::UDP,
    // Suricata registers no port: detection is by its pattern only.
    default_ports: &[],
    port_bound: false,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(DhtState::default())),
    inner: &[],
    family: None,
    buffers: &[],
    frames: &[],
    keywords: &[],
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "bittorrent_dht",
        render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "bittorrent_dht",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names).
pub const EVENTS: &[&str] = &["bittorrent-dht.malformed_packet"];

/// Suricata's detection: [`PATTERN`] at the start of the datagram.
pub fn probe(data: &[u8]) -> Probe {
    if data.starts_with(PATTERN) {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

/// One message.
#[derive(Debug)]
pub struct DhtTx {
    pub id: u64,
    pub dir: Dir,
    /// What the parser read (all of it, or what it had when the message turned out
    /// malformed).
    pub msg: BittorrentDht,
}

/// One flow.
#[derive(Debug, Default)]
pub struct DhtState {
    next_id: u64,
    txs: VecDeque<DhtTx>,
}

impl AppState for DhtState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        // Anything else on the flow is ignored, as Suricata's parser does.
        if !parser::is_dht(data) {
            return;
        }
        let mut msg = BittorrentDht::default();
        let failed = parser::parse(data, &mut msg).is_err();
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(DhtTx {
            id: self.next_id,
            dir,
            msg,
        });
        self.next_id += 1;
        if failed {
            // On the message's transaction; Suricata's parser returns an error (the
            // flow's `app_layer_error`) and takes the next datagram.
            out.anomaly("bittorrent-dht.malformed_packet");
            out.error = true;
        }
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

impl Transaction for DhtTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A datagram is the whole transaction.
    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    /// Suricata's DHT transactions are one-directional.
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn buffer(&self, _id: BufferId, _index: usize) -> Buf<'_> {
        Buf::Absent
    }

    fn record(&self) -> Option<AppRecord> {
        Some(AppRecord::BittorrentDht(self.msg.clone()))
    }

    /// Each message is logged once (complete as soon as it came), in the direction of
    /// its datagram ([`RecordDef::packet_dir`]).
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        (dir == Dir::ToClient).then(|| self.record()).flatten()
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// An address as Suricata writes a DHT one: dotted IPv4, or eight groups of four hex
/// digits (not shortened) for IPv6; anything else empty.
fn ip_text(ip: &[u8]) -> String {
    use std::fmt::Write;
    match ip.len() {
        4 => format!("{}.{}.{}.{}", ip[0], ip[1], ip[2], ip[3]),
        16 => {
            let mut s = String::with_capacity(39);
            for (i, pair) in ip.chunks_exact(2).enumerate() {
                if i > 0 {
                    s.push(':');
                }
                let _ = write!(s, "{:02x}{:02x}", pair[0], pair[1]);
            }
            s
        }
        _ => String::new(),
    }
}

fn hex(b: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        let _ = write!(s, "{x:02x}");
    }
    s
}

fn node_list(buf: &mut Vec<u8>, nodes: &[BittorrentDhtNode]) {
    meerkat_eve::array(buf, nodes, |o, n| {
        o.str("id", &hex(&n.id))
            .str("ip", &ip_text(&n.ip))
            .u64("port", u64::from(n.port));
    });
}

/// [`crate::RecordDef::render`]: the `bittorrent_dht` object, byte strings in hex, in
/// Suricata's order (the error before the query).
pub fn render(r: &AppRecord, o: &mut meerkat_eve::Obj<'_>) {
    let AppRecord::BittorrentDht(m) = r else {
        return;
    };
    o.obj("bittorrent_dht", |x| {
        x.str("transaction_id", &hex(&m.transaction_id));
        if let Some(v) = &m.client_version {
            x.str("client_version", &hex(v));
        }
        if let Some(t) = &m.request_type {
            x.str("request_type", t);
        }
        if let Some(e) = &m.error {
            x.obj("error", |y| {
                y.u64("num", u64::from(e.num)).str("msg", &e.msg);
            });
        }
        if let Some(q) = &m.request {
            x.obj("request", |y| {
                y.str("id", &hex(&q.id));
                if let Some(v) = &q.target {
                    y.str("target", &hex(v));
                }
                if let Some(v) = &q.info_hash {
                    y.str("info_hash", &hex(v));
                }
                if let Some(v) = &q.token {
                    y.str("token", &hex(v));
                }
                if let Some(v) = q.implied_port {
                    y.u64("implied_port", u64::from(v));
                }
                if let Some(v) = q.port {
                    y.u64("port", u64::from(v));
                }
            });
        }
        if let Some(r) = &m.response {
            x.obj("response", |y| {
                y.str("id", &hex(&r.id));
                if !r.nodes.is_empty() {
                    y.raw("nodes", |b| node_list(b, &r.nodes));
                }
                if !r.nodes6.is_empty() {
                    y.raw("nodes6", |b| node_list(b, &r.nodes6));
                }
                if !r.values.is_empty() {
                    y.raw("values", |b| {
                        meerkat_eve::array(b, &r.values, |o, p| {
                            o.str("ip", &ip_text(&p.ip)).u64("port", u64::from(p.port));
                        });
                    });
                }
                if let Some(v) = &r.token {
                    y.str("token", &hex(v));
                }
            });
        }
    });
}

/// Fuzz target: the parser over the datagrams the shared driver cuts and the input as
/// one datagram (and as one behind the query prefix), every record rendered, and
/// every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut DhtState::default(), data);
    let mut s = DhtState::default();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    let mut prefixed = PATTERN.to_vec();
    prefixed.extend_from_slice(data);
    s.parse(Dir::ToClient, &prefixed, &mut out);
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

    fn rendered(tx: &dyn Transaction) -> String {
        let mut buf = Vec::new();
        let mut o = meerkat_eve::Obj::new(&mut buf);
        render(&tx.record().unwrap(), &mut o);
        o.end();
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn every_raised_event_is_listed() {
        let n = crate::events::raised_names_are_listed(
            EVENTS,
            include_str!("mod.rs"),
            "bittorrent-dht",
        );
        assert!(n > 0);
    }

    #[test]
    fn messages_transactions_and_records() {
        let mut s = DhtState::default();
        let mut out = ParseOutput::default();
        s.parse(
            Dir::ToServer,
            b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t2:aa1:v4:UT\x01\x021:y1:qe",
            &mut out,
        );
        // Not DHT: ignored.
        s.parse(Dir::ToServer, b"hello", &mut out);
        let mut nodes6 = vec![3u8; 20];
        nodes6.extend_from_slice(&[0x20, 1, 0xd, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        nodes6.extend_from_slice(&[0x1a, 0xe1]);
        let mut resp = b"d1:rd2:id20:mnopqrstuvwxyz1234566:nodes638:".to_vec();
        resp.extend_from_slice(&nodes6);
        resp.extend_from_slice(b"6:valuesl6:\x0a\x09\x08\x07\x1a\xe2ee1:t2:aa1:y1:re");
        s.parse(Dir::ToClient, &resp, &mut out);
        assert!(out.anomalies.is_empty() && !out.error);
        // Truncated: malformed, a transaction with nothing in it.
        s.parse(Dir::ToServer, b"d1:ad2:id20:abc", &mut out);
        assert_eq!(out.anomalies, ["bittorrent-dht.malformed_packet"]);
        assert!(out.error);
        assert_eq!(s.tx_count(), 3);
        let (q, r, bad) = (s.tx(0).unwrap(), s.tx(1).unwrap(), s.tx(2).unwrap());
        assert!(q.inspects(Dir::ToServer) && !q.inspects(Dir::ToClient));
        assert!(q.event_record(Dir::ToServer).is_none());
        assert!(q.event_record(Dir::ToClient).is_some());
        assert_eq!(
            rendered(q),
            concat!(
                r#"{"bittorrent_dht":{"transaction_id":"6161","client_version":"55540102","#,
                r#""request_type":"ping","request":{"id":"6162636465666768696a30313233343536373839"}}}"#
            )
        );
        assert_eq!(
            rendered(r),
            concat!(
                r#"{"bittorrent_dht":{"transaction_id":"6161","response":{"id":"6d6e6f707172737475767778797a313233343536","#,
                r#""nodes6":[{"id":"0303030303030303030303030303030303030303","#,
                r#""ip":"2001:0db8:0000:0000:0000:0000:0000:0001","port":6881}],"#,
                r#""values":[{"ip":"10.9.8.7","port":6882}]}}}"#
            )
        );
        assert_eq!(rendered(bad), r#"{"bittorrent_dht":{"transaction_id":""}}"#);
    }

    #[test]
    fn probes() {
        assert_eq!(probe(b"d1:ad2:id20:abcdefghij0123456789e"), Probe::Match);
        assert_eq!(probe(b"d1:rd2:id20:abcdefghij0123456789e"), Probe::NoMatch);
        assert_eq!(probe(b"d1:ad2:id"), Probe::NoMatch);
    }
}
