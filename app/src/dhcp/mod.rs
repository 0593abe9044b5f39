//! DHCP (RFC 2131, options of RFC 2132) over UDP ports 67 and 68, as Suricata 8 has it:
//! detection by a BOOTP header with the DHCP magic cookie, one transaction per message,
//! inspected in the direction it came, the `dhcp.leasetime`, `dhcp.renewal_time` and
//! `dhcp.rebinding_time` keywords, the `truncated_options` event, and the `dhcp` EVE
//! record: by default only for ACK messages, with `extended` for every message and the
//! addresses, times, masks, servers and parameters the options carry. Alerts carry no
//! `dhcp` object (Suricata's have none).

use crate::descriptor::{
    Build, Descriptor, FuzzTarget, KeywordDef, RecordDef, Transports, never_reply,
};
use crate::value::{KwValue, parse_num_cmp, required};
use crate::{AppProto, AppRecord, AppState, Buf, BufferId, Dir, ParseOutput, Probe, Transaction};

use meerkat_proto::events::{Dhcp, DhcpOption};
use std::collections::VecDeque;

/// The BOOTP header with the magic cookie.
pub const HEADER_LEN: usize = 240;
/// Most live transactions per flow; the oldest is dropped beyond it.
pub const MAX_TX: usize = 256;
/// Most options of a message that are kept (a datagram holds at most ~32 K of them;
/// a real message has a few dozen).
pub const MAX_OPTIONS: usize = 128;

const COOKIE: [u8; 4] = [0x63, 0x82, 0x53, 0x63];

/// The option codes the parser reads.
pub mod opt {
    pub const SUBNET_MASK: u8 = 1;
    pub const ROUTERS: u8 = 3;
    pub const DNS_SERVERS: u8 = 6;
    pub const HOSTNAME: u8 = 12;
    pub const REQUESTED_IP: u8 = 50;
    pub const LEASE_TIME: u8 = 51;
    pub const TYPE: u8 = 53;
    pub const PARAMETERS: u8 = 55;
    pub const RENEWAL_TIME: u8 = 58;
    pub const REBINDING_TIME: u8 = 59;
    pub const VENDOR_CLASS: u8 = 60;
    pub const CLIENT_ID: u8 = 61;
    pub const END: u8 = 255;
}

/// DHCPACK, the only message type logged without `extended`.
pub const TYPE_ACK: u32 = 5;

/// DHCP.
pub static PROTOCOL: Descriptor = Descriptor {
    proto: AppProto::Dhcp,
    name: "dhcp",
    aliases: &[],
    enabled_by_default: true,
    transports: Transports::UDP,
    default_ports: &[67, 68],
    // Suricata's DHCP has a probing parser on its ports and no pattern.
    port_bound: true,
    probe: |_, _, data| probe(data),
    probe_on_port: None,
    is_reply: never_reply,
    build: Build::Plain(|_| Box::new(DhcpState::default())),
    inner: &[],
    family: None,
    buffers: &[],
    frames: &[],
    keywords: KEYWORDS,
    events: EVENTS,
    events_upper_case: false,
    raw_trigger: crate::descriptor::RawTrigger::Parser,
    record: Some(RecordDef {
        event_type: "dhcp",
        render,
        tx_id: false,
        packet_dir: true,
    }),
    fuzz: &[FuzzTarget {
        name: "dhcp",
        run: fuzz,
    }],
};

/// The anomalies the parser raises (Suricata's names; Suricata also lists
/// `malformed_options`, which its parser never raises).
pub const EVENTS: &[&str] = &["dhcp.malformed_options", "dhcp.truncated_options"];

/// Suricata's probe: a whole header with the magic cookie.
pub fn probe(data: &[u8]) -> Probe {
    if data.len() >= HEADER_LEN && data[236..240] == COOKIE {
        Probe::Match
    } else {
        Probe::NoMatch
    }
}

fn ip4(b: &[u8]) -> Vec<u8> {
    b[..4].to_vec()
}

/// Parses a message: `None` when the header is cut short; `Some((record, truncated))`
/// otherwise, `truncated` when the options end before an END option or one runs past
/// the data. As Suricata's parser: every code but END (PAD included) has a length
/// byte; the time options read four bytes whatever their length says; a client id is
/// at least two bytes, its type byte left out.
pub fn parse(data: &[u8]) -> Option<(Dhcp, bool)> {
    if data.len() < HEADER_LEN {
        return None;
    }
    let hlen = usize::from(data[2]).min(16);
    let mut r = Dhcp {
        opcode: u32::from(data[0]),
        id: u32::from_be_bytes([data[4], data[5], data[6], data[7]]),
        client_ip: ip4(&data[12..]),
        assigned_ip: ip4(&data[16..]),
        next_server_ip: ip4(&data[20..]),
        relay_ip: ip4(&data[24..]),
        client_mac: data[28..28 + hlen].to_vec(),
        ..Default::default()
    };
    let mut rest = &data[HEADER_LEN..];
    let truncated = loop {
        let Some((&code, after)) = rest.split_first() else {
            break true;
        };
        if code == opt::END {
            break false;
        }
        let Some((&len, after)) = after.split_first() else {
            break true;
        };
        let len = usize::from(len);
        let (value, next) = match code {
            opt::LEASE_TIME | opt::RENEWAL_TIME | opt::REBINDING_TIME => {
                if after.len() < 4 {
                    break true;
                }
                after.split_at(4)
            }
            opt::CLIENT_ID => {
                if len < 2 || after.len() < len {
                    break true;
                }
                let (v, n) = after.split_at(len);
                (&v[1..], n)
            }
            _ => {
                if after.len() < len {
                    break true;
                }
                after.split_at(len)
            }
        };
        rest = next;
        if code == opt::TYPE && r.dhcp_type == 0 && !value.is_empty() {
            r.dhcp_type = u32::from(value[0]);
        }
        if logged(code) && r.options.len() < MAX_OPTIONS {
            r.options.push(DhcpOption {
                code: u32::from(code),
                data: value.to_vec(),
            });
        }
    };
    Some((r, truncated))
}

/// Whether the record or a keyword reads option `code`.
fn logged(code: u8) -> bool {
    matches!(
        code,
        opt::SUBNET_MASK
            | opt::ROUTERS
            | opt::DNS_SERVERS
            | opt::HOSTNAME
            | opt::REQUESTED_IP
            | opt::LEASE_TIME
            | opt::TYPE
            | opt::PARAMETERS
            | opt::RENEWAL_TIME
            | opt::REBINDING_TIME
            | opt::VENDOR_CLASS
            | opt::CLIENT_ID
    )
}

/// One message.
#[derive(Debug)]
pub struct DhcpTx {
    pub id: u64,
    pub dir: Dir,
    pub msg: Dhcp,
}

impl DhcpTx {
    /// The first time option `code`'s seconds.
    pub fn time(&self, code: u8) -> Option<u32> {
        self.msg
            .options
            .iter()
            .find(|o| o.code == u32::from(code))
            .and_then(|o| Some(u32::from_be_bytes(o.data.get(..4)?.try_into().ok()?)))
    }
}

/// One flow.
#[derive(Debug, Default)]
pub struct DhcpState {
    next_id: u64,
    txs: VecDeque<DhcpTx>,
}

impl AppState for DhcpState {
    fn parse(&mut self, dir: Dir, data: &[u8], out: &mut ParseOutput) {
        // A datagram too short for the header is dropped, with no event (Suricata's
        // parser fails on it).
        let Some((msg, truncated)) = parse(data) else {
            return;
        };
        if self.txs.len() == MAX_TX {
            self.txs.pop_front();
        }
        self.txs.push_back(DhcpTx {
            id: self.next_id,
            dir,
            msg,
        });
        self.next_id += 1;
        if truncated {
            out.anomaly("dhcp.truncated_options");
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

/// DHCP's keywords.
pub static KEYWORDS: &[KeywordDef] = &[
    KeywordDef::check("dhcp.leasetime", &[], parse_time, eval_lease),
    KeywordDef::check("dhcp.renewal_time", &[], parse_time, eval_renewal),
    KeywordDef::check("dhcp.rebinding_time", &[], parse_time, eval_rebinding),
];

fn parse_time(v: Option<&str>) -> Result<KwValue, String> {
    let s = required(v)?;
    let cmp = parse_num_cmp(s).ok_or_else(|| format!("bad value `{s}`"))?;
    Ok(KwValue::Num(cmp))
}

fn eval(v: &KwValue, dir: Dir, t: &dyn Transaction, code: u8) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let tx = t.as_any()?.downcast_ref::<DhcpTx>()?;
    Some(tx.dir == dir && tx.time(code).is_some_and(|s| cmp.test(u64::from(s))))
}

fn eval_lease(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, opt::LEASE_TIME)
}

fn eval_renewal(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, opt::RENEWAL_TIME)
}

fn eval_rebinding(v: &KwValue, dir: Dir, _now_s: i64, t: &dyn Transaction) -> Option<bool> {
    eval(v, dir, t, opt::REBINDING_TIME)
}

impl Transaction for DhcpTx {
    fn id(&self) -> u64 {
        self.id
    }

    /// A message is the whole transaction.
    fn complete(&self, _dir: Dir) -> bool {
        true
    }

    fn progress(&self, _dir: Dir) -> u8 {
        1
    }

    /// A message's transaction is its direction's only.
    fn inspects(&self, dir: Dir) -> bool {
        dir == self.dir
    }

    fn buffer(&self, _id: BufferId, _index: usize) -> Buf<'_> {
        Buf::Absent
    }

    /// Suricata's alerts carry no `dhcp` object.
    fn record(&self) -> Option<AppRecord> {
        None
    }

    /// The message's record, once (the worker leaves out those the config does not
    /// log: without `extended`, all but ACKs).
    fn event_record(&self, dir: Dir) -> Option<AppRecord> {
        match dir {
            Dir::ToServer => None,
            Dir::ToClient => Some(AppRecord::Dhcp(self.msg.clone())),
        }
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// Whether the outputs log record `r` (`extended` set as they ask): every message
/// with `extended`, otherwise ACKs only.
pub fn wanted(r: &Dhcp) -> bool {
    r.extended || r.dhcp_type == TYPE_ACK
}

/// An address as Suricata prints one: IPv4 for four bytes, IPv6 for sixteen.
fn addr(b: &[u8]) -> String {
    match b.len() {
        4 => std::net::Ipv4Addr::new(b[0], b[1], b[2], b[3]).to_string(),
        16 => {
            let a: [u8; 16] = b.try_into().unwrap_or_default();
            // Suricata writes every group, zero-padded.
            a.chunks(2)
                .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
                .collect::<Vec<_>>()
                .join(":")
        }
        _ => String::new(),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

fn strings(buf: &mut Vec<u8>, items: impl Iterator<Item = String>) {
    buf.push(b'[');
    for (i, s) in items.enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        meerkat_eve::string(buf, &s);
    }
    buf.push(b']');
}

/// The parameter names Suricata logs from a parameter request list (others are left
/// out).
fn param(code: u8) -> Option<&'static str> {
    Some(match code {
        1 => "subnet_mask",
        3 => "router",
        6 => "dns_server",
        15 => "domain",
        42 => "ntp_server",
        66 => "tftp_server_name",
        150 => "tftp_server_ip",
        _ => return None,
    })
}

fn type_name(t: u8) -> &'static str {
    match t {
        1 => "discover",
        2 => "offer",
        3 => "request",
        4 => "decline",
        5 => "ack",
        6 => "nak",
        7 => "release",
        8 => "inform",
        _ => "unknown",
    }
}

/// [`crate::RecordDef::render`]: the `dhcp` object, its options in their order.
pub fn render(r: &AppRecord, o: &mut meerkat_eve::Obj<'_>) {
    let AppRecord::Dhcp(r) = r else {
        return;
    };
    let ext = r.extended;
    o.obj("dhcp", |x| {
        x.str(
            "type",
            match r.opcode {
                1 => "request",
                2 => "reply",
                _ => "<unknown>",
            },
        )
        .u64("id", u64::from(r.id))
        .str("client_mac", &hex(&r.client_mac))
        .str("assigned_ip", &addr(&r.assigned_ip));
        if ext {
            x.str("client_ip", &addr(&r.client_ip));
            if r.opcode == 2 {
                x.str("relay_ip", &addr(&r.relay_ip))
                    .str("next_server_ip", &addr(&r.next_server_ip));
            }
        }
        for op in &r.options {
            let d = &op.data[..];
            let time = || {
                d.get(..4)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
            };
            let addrs = || d.chunks_exact(4).map(addr);
            match u8::try_from(op.code).unwrap_or(0) {
                opt::CLIENT_ID => {
                    x.str("client_id", &hex(d));
                }
                opt::LEASE_TIME if ext => {
                    x.u64("lease_time", u64::from(time()));
                }
                opt::REBINDING_TIME if ext => {
                    x.u64("rebinding_time", u64::from(time()));
                }
                opt::RENEWAL_TIME => {
                    x.u64("renewal_time", u64::from(time()));
                }
                opt::SUBNET_MASK if ext => {
                    x.str("subnet_mask", &addr(d));
                }
                opt::HOSTNAME if !d.is_empty() => {
                    x.bytes("hostname", d);
                }
                opt::TYPE if !d.is_empty() => {
                    x.str("dhcp_type", type_name(d[0]));
                }
                opt::REQUESTED_IP if ext => {
                    x.str("requested_ip", &addr(d));
                }
                opt::PARAMETERS if ext => {
                    x.raw("params", |b| {
                        strings(b, d.iter().filter_map(|&c| param(c)).map(String::from))
                    });
                }
                opt::DNS_SERVERS if ext => {
                    x.raw("dns_servers", |b| strings(b, addrs()));
                }
                opt::ROUTERS if ext => {
                    x.raw("routers", |b| strings(b, addrs()));
                }
                opt::VENDOR_CLASS if ext && !d.is_empty() => {
                    x.bytes("vendor_class_identifier", d);
                }
                _ => {}
            }
        }
    });
}

/// Fuzz target: the parser over the datagrams the shared driver cuts and the input
/// as one datagram, every record rendered both ways, and every probe.
pub fn fuzz(data: &[u8]) {
    crate::fuzz::drive(&mut DhcpState::default(), data);
    let mut s = DhcpState::default();
    let mut out = ParseOutput::default();
    s.parse(Dir::ToServer, data, &mut out);
    for i in 0..s.tx_count() {
        if let Some(AppRecord::Dhcp(mut r)) = s.tx(i).and_then(|t| t.event_record(Dir::ToClient)) {
            for ext in [false, true] {
                r.extended = ext;
                let mut buf = Vec::new();
                let mut o = meerkat_eve::Obj::new(&mut buf);
                render(&AppRecord::Dhcp(r.clone()), &mut o);
                o.end();
            }
        }
    }
    crate::fuzz::probes(data);
}

#[cfg(test)]
mod tests;
