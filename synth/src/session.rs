//! Whole conversations as timestamped Ethernet frames.

use std::net::{IpAddr, SocketAddr};

use crate::Frame;
use crate::packet::{self, ACK, FIN, PSH, SYN, TcpHeader};

fn ethertype(addr: IpAddr) -> u16 {
    match addr {
        IpAddr::V4(_) => packet::ETHERTYPE_IPV4,
        IpAddr::V6(_) => packet::ETHERTYPE_IPV6,
    }
}

/// Wraps an IP packet from `src` to `dst` in Ethernet (and a VLAN tag if given).
pub fn frame_ip(src: IpAddr, dst: IpAddr, vlan: Option<u16>, ip_packet: &[u8]) -> Vec<u8> {
    let (s, d) = (packet::mac_for(src), packet::mac_for(dst));
    match vlan {
        Some(id) => packet::ethernet_vlan(s, d, id, ethertype(src), ip_packet),
        None => packet::ethernet(s, d, ethertype(src), ip_packet),
    }
}

/// A TCP conversation between a client and a server: handshake, data both ways in
/// MSS-sized segments each acknowledged, and a FIN teardown.
#[derive(Debug)]
pub struct TcpSession {
    client: SocketAddr,
    server: SocketAddr,
    vlan: Option<u16>,
    now_ns: u64,
    /// Half the round-trip time, ns: the gap between a segment and its answer.
    half_rtt_ns: u64,
    client_seq: u32,
    server_seq: u32,
    mss: usize,
    ip_id: u16,
    frames: Vec<Frame>,
}

impl TcpSession {
    pub fn new(client: SocketAddr, server: SocketAddr, start_ns: u64) -> TcpSession {
        // Initial sequence numbers derived from the ports: deterministic and distinct.
        let isn = |p: u16| 0x1000_0000u32.wrapping_add(u32::from(p).wrapping_mul(7919));
        TcpSession {
            client,
            server,
            vlan: None,
            now_ns: start_ns,
            half_rtt_ns: 500_000,
            client_seq: isn(client.port()),
            server_seq: isn(server.port()).wrapping_add(0x4000_0000),
            mss: 1460,
            ip_id: 1,
            frames: Vec::new(),
        }
    }

    pub fn vlan(mut self, id: u16) -> TcpSession {
        self.vlan = Some(id);
        self
    }

    pub fn mss(mut self, mss: usize) -> TcpSession {
        self.mss = mss.max(1);
        self
    }

    fn emit(&mut self, from_client: bool, flags: u8, payload: &[u8]) {
        let (src, dst) = if from_client {
            (self.client, self.server)
        } else {
            (self.server, self.client)
        };
        let (seq, ack) = if from_client {
            (self.client_seq, self.server_seq)
        } else {
            (self.server_seq, self.client_seq)
        };
        let h = TcpHeader {
            src_port: src.port(),
            dst_port: dst.port(),
            seq,
            ack: if flags & ACK != 0 { ack } else { 0 },
            flags,
            window: 64240,
        };
        let seg = packet::tcp(src.ip(), dst.ip(), &h, payload);
        let ipp = packet::ip(src.ip(), dst.ip(), packet::PROTO_TCP, 64, self.ip_id, &seg);
        self.ip_id = self.ip_id.wrapping_add(1);
        let data = frame_ip(src.ip(), dst.ip(), self.vlan, &ipp);
        self.frames.push(Frame {
            ts_ns: self.now_ns,
            data,
        });
        self.now_ns += self.half_rtt_ns;
        let adv = payload.len() as u32 + u32::from(flags & (SYN | FIN) != 0);
        if from_client {
            self.client_seq = self.client_seq.wrapping_add(adv);
        } else {
            self.server_seq = self.server_seq.wrapping_add(adv);
        }
    }

    /// SYN, SYN/ACK, ACK.
    pub fn handshake(&mut self) -> &mut Self {
        self.emit(true, SYN, &[]);
        self.emit(false, SYN | ACK, &[]);
        self.emit(true, ACK, &[]);
        self
    }

    fn send(&mut self, from_client: bool, data: &[u8]) {
        let chunks: Vec<Vec<u8>> = data.chunks(self.mss).map(<[u8]>::to_vec).collect();
        for chunk in &chunks {
            self.emit(from_client, PSH | ACK, chunk);
            self.emit(!from_client, ACK, &[]);
        }
    }

    /// The client sends `data` (each segment acknowledged by the server).
    pub fn client_sends(&mut self, data: &[u8]) -> &mut Self {
        self.send(true, data);
        self
    }

    /// The server sends `data` (each segment acknowledged by the client).
    pub fn server_sends(&mut self, data: &[u8]) -> &mut Self {
        self.send(false, data);
        self
    }

    /// FIN from the client, FIN/ACK from the server, final ACK.
    pub fn close(&mut self) -> &mut Self {
        self.emit(true, FIN | ACK, &[]);
        self.emit(false, FIN | ACK, &[]);
        self.emit(true, ACK, &[]);
        self
    }

    /// Time after the last frame.
    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    pub fn into_frames(self) -> Vec<Frame> {
        self.frames
    }
}

/// A UDP request and its response, `gap_ns` apart.
pub fn udp_exchange(
    client: SocketAddr,
    server: SocketAddr,
    start_ns: u64,
    gap_ns: u64,
    request: &[u8],
    response: Option<&[u8]>,
    vlan: Option<u16>,
) -> Vec<Frame> {
    let mut out = Vec::new();
    let mut one = |src: SocketAddr, dst: SocketAddr, ts_ns: u64, payload: &[u8], id: u16| {
        let d = packet::udp(src.ip(), dst.ip(), src.port(), dst.port(), payload);
        let ipp = packet::ip(src.ip(), dst.ip(), packet::PROTO_UDP, 64, id, &d);
        out.push(Frame {
            ts_ns,
            data: frame_ip(src.ip(), dst.ip(), vlan, &ipp),
        });
    };
    one(client, server, start_ns, request, 1);
    if let Some(resp) = response {
        one(server, client, start_ns + gap_ns, resp, 2);
    }
    out
}

/// An ICMP (v4) or ICMPv6 echo request and reply.
pub fn ping(client: IpAddr, server: IpAddr, start_ns: u64, id: u16, data: &[u8]) -> Vec<Frame> {
    let mut out = Vec::new();
    for (i, (src, dst)) in [(client, server), (server, client)].into_iter().enumerate() {
        let ipp = match (src, dst) {
            (IpAddr::V4(s), IpAddr::V4(d)) => {
                let t = if i == 0 { 8 } else { 0 };
                let m = packet::icmpv4(t, 0, id, 1, data);
                packet::ipv4(s.octets(), d.octets(), packet::PROTO_ICMP, 64, id, &m)
            }
            (IpAddr::V6(s), IpAddr::V6(d)) => {
                let t = if i == 0 { 128 } else { 129 };
                let m = packet::icmpv6(s.octets(), d.octets(), t, 0, id, 1, data);
                packet::ipv6(s.octets(), d.octets(), packet::PROTO_ICMPV6, 64, &m)
            }
            _ => panic!("mixed address families"),
        };
        out.push(Frame {
            ts_ns: start_ns + i as u64 * 300_000,
            data: frame_ip(src, dst, None, &ipp),
        });
    }
    out
}

/// Merges conversations into one capture ordered by time (stable for equal times).
pub fn interleave(mut convs: Vec<Vec<Frame>>) -> Vec<Frame> {
    let mut all: Vec<Frame> = convs.drain(..).flatten().collect();
    all.sort_by_key(|f| f.ts_ns);
    all
}
