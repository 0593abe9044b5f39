#!/usr/bin/env python3
"""Writes a benchmark pcap of SMB2, DCERPC and Kerberos 5 traffic by replicating a real
capture (bench/smb-seed/seed.pcap, recorded by bench/smb-seed/capture.sh: Samba and MIT
Kerberos on loopback) with rewritten addresses, ports, sequence numbers and times.

    bench/gen-smb-mix.py [--seed-pcap FILE] [--size MB] [--concurrency N] OUT.pcap

Each replica is one client host (10.20.x.y) running the seed's whole session against one
of 16 file servers (10.0.0.1-16, port 445) and 4 KDCs (10.0.1.1-4, port 88, UDP and TCP):
SMB2 negotiate, NTLMSSP session setup, tree connects, reads, writes, listings, a failed
logon, DCERPC over named pipes (srvsvc, wkssvc, samr, lsarpc), Kerberos AS and TGS
exchanges. On top of the seed, each replica has the DCERPC PDUs the seed carried over
named pipes sent over TCP to port 135 (one connection per bind), so DCERPC over TCP is
present as well. `--concurrency` replicas are active at a time (their packets
interleave), so the flow table holds many flows as on a real link. Deterministic: the
same seed pcap and arguments give the same bytes. Checksums are recomputed.
"""
import argparse
import array
import heapq
import struct
import sys

ETH_IP = b"\x08\x00"
GAP_US = 20  # time between a replica's consecutive packets


def read_pcap(path):
    """(ts_us, frame) of every packet of a little- or big-endian microsecond pcap."""
    data = open(path, "rb").read()
    magic = data[:4]
    if magic == b"\xd4\xc3\xb2\xa1":
        e = "<"
    elif magic == b"\xa1\xb2\xc3\xd4":
        e = ">"
    else:
        sys.exit(f"{path}: not a microsecond pcap")
    link = struct.unpack(e + "I", data[20:24])[0]
    if link != 1:
        sys.exit(f"{path}: link type {link}, want Ethernet (1)")
    off, out = 24, []
    while off + 16 <= len(data):
        sec, usec, incl, _ = struct.unpack(e + "IIII", data[off:off + 16])
        out.append((sec * 1_000_000 + usec, data[off + 16:off + 16 + incl]))
        off += 16 + incl
    return out


def ones_sum(b):
    """Ones-complement sum (not folded) of `b` as big-endian 16-bit words."""
    if len(b) % 2:
        b += b"\0"
    a = array.array("H", b)
    if sys.byteorder == "little":
        a.byteswap()
    return sum(a)


def fold(s):
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


class Seg:
    """One packet of the seed, reduced to what a replica rewrites."""

    __slots__ = ("flow", "to_server", "proto", "seq", "ack", "rest", "payload", "psum")

    def __init__(self, flow, to_server, proto, seq, ack, rest, payload):
        self.flow, self.to_server, self.proto = flow, to_server, proto
        self.seq, self.ack = seq, ack
        # TCP: data offset, flags, window, urgent pointer and options (checksum zeroed).
        self.rest = rest
        self.payload = payload
        self.psum = ones_sum(payload) if len(payload) % 2 == 0 else None


SERVER_PORTS = (445, 88, 135)


def parse_seed(path):
    """The seed's packets as Segs, flows numbered by first appearance."""
    flows, segs = {}, []
    for _, f in read_pcap(path):
        if f[12:14] != ETH_IP:
            continue
        ihl = (f[14] & 15) * 4
        proto = f[23]
        ip_end = 14 + struct.unpack(">H", f[16:18])[0]
        l4 = f[14 + ihl:ip_end]
        sp, dp = struct.unpack(">HH", l4[:4])
        if dp in SERVER_PORTS:
            to_server, cport, sport = True, sp, dp
        elif sp in SERVER_PORTS:
            to_server, cport, sport = False, dp, sp
        else:
            continue
        key = (proto, cport, sport)
        flow = flows.setdefault(key, len(flows))
        if proto == 6:
            doff = (l4[12] >> 4) * 4
            seq, ack = struct.unpack(">II", l4[4:12])
            rest = l4[12:16] + b"\0\0" + l4[18:doff]
            segs.append(Seg(flow, to_server, 6, seq, ack, rest, l4[doff:]))
        elif proto == 17:
            segs.append(Seg(flow, to_server, 17, 0, 0, b"", l4[8:]))
    ports = {n: k for k, n in flows.items()}
    return segs, ports


def pipe_pdus(segs, ports):
    """DCERPC PDUs (bind, bind_ack, request, response) carried whole in one SMB packet,
    in order, grouped into conversations that each start with a bind."""
    groups = []
    for s in segs:
        if ports[s.flow][2] != 445 or not s.payload:
            continue
        p = s.payload
        i = p.find(b"\x05\x00")
        while i >= 0:
            h = p[i:i + 16]
            if len(h) == 16 and h[2] in (0, 2, 11, 12) and h[4:8] == b"\x10\x00\x00\x00":
                n = struct.unpack("<H", h[8:10])[0]
                if 16 <= n <= len(p) - i:
                    if h[2] == 11:
                        groups.append([])
                    if groups:
                        groups[-1].append((s.to_server, p[i:i + n]))
                    i = p.find(b"\x05\x00", i + n)
                    continue
            i = p.find(b"\x05\x00", i + 1)
    return [g for g in groups if len(g) >= 2]


def tcp_flow_segs(flow, pdus):
    """A whole TCP connection (handshake, one segment per PDU, FIN exchange) carrying
    `pdus` [(to_server, bytes)], as Segs with sequence numbers from 0."""
    out = []
    seq = {True: 1000, False: 5000}

    def seg(to_server, flags, payload=b""):
        rest = struct.pack(">BBHH", 5 << 4, flags, 64240, 0)[:4] + b"\0\0" + b"\0\0"
        ack = seq[not to_server] if flags & 0x10 else 0
        out.append(Seg(flow, to_server, 6, seq[to_server], ack, rest, payload))
        seq[to_server] += len(payload) + (1 if flags & 0x03 else 0)

    seg(True, 0x02)
    seg(False, 0x12)
    seg(True, 0x10)
    for to_server, pdu in pdus:
        seg(to_server, 0x18, pdu)
    seg(True, 0x11)
    seg(False, 0x11)
    seg(True, 0x10)
    return out


def mac(ip):
    return b"\x02\x00" + ip


def frames(segs, ports, replica, rng_isn):
    """The frames of one replica, in seed order."""
    client = bytes([10, 20, (replica // 250) % 250, replica % 250 + 1])
    smb_srv = bytes([10, 0, 0, 1 + replica % 16])
    kdc = bytes([10, 0, 1, 1 + replica % 4])
    shift = (replica * 7) % 2000
    ip_id = (replica * 1009) & 0xFFFF
    isn = {}
    for s in segs:
        proto, cport, sport = ports[s.flow]
        srv = kdc if sport == 88 else smb_srv
        cp = 32768 + (cport - 32768 + shift) % 28000 if cport >= 1024 else cport
        if s.flow not in isn:
            isn[s.flow] = (rng_isn(), rng_isn())
        ci, si = isn[s.flow]
        if s.to_server:
            src, dst, sp, dp, ttl = client, srv, cp, sport, 128
            seq = (s.seq + ci) & 0xFFFFFFFF
            ack = (s.ack + si) & 0xFFFFFFFF if s.ack else 0
        else:
            src, dst, sp, dp, ttl = srv, client, sport, cp, 64
            seq = (s.seq + si) & 0xFFFFFFFF
            ack = (s.ack + ci) & 0xFFFFFFFF if s.ack else 0
        if proto == 6:
            hdr = struct.pack(">HHII", sp, dp, seq, ack) + s.rest
        else:
            hdr = struct.pack(">HHHH", sp, dp, 8 + len(s.payload), 0)
        l4len = len(hdr) + len(s.payload)
        pseudo = ones_sum(src + dst + struct.pack(">BBH", 0, proto, l4len))
        psum = s.psum if s.psum is not None else ones_sum(s.payload)
        ck = fold(pseudo + ones_sum(hdr) + psum)
        if proto == 17 and ck == 0:
            ck = 0xFFFF
        off = 16 if proto == 6 else 6
        hdr = hdr[:off] + struct.pack(">H", ck) + hdr[off + 2:]
        ip_id = (ip_id + 1) & 0xFFFF
        ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + l4len, ip_id, 0x4000, ttl, proto, 0, src, dst)
        ip = ip[:10] + struct.pack(">H", fold(ones_sum(ip))) + ip[12:]
        yield mac(dst) + mac(src) + ETH_IP + ip + hdr + s.payload


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--seed-pcap", default=__file__.rsplit("/", 1)[0] + "/smb-seed/seed.pcap")
    ap.add_argument("--size", type=float, default=200, help="MB of frames to write")
    ap.add_argument("--concurrency", type=int, default=8, help="replicas active at a time")
    a = ap.parse_args()

    segs, ports = parse_seed(a.seed_pcap)
    # DCERPC over TCP: each named-pipe conversation of the seed on its own connection.
    for g in pipe_pdus(segs, ports):
        flow = len(ports)
        ports[flow] = (6, 49152 + flow, 135)
        segs += tcp_flow_segs(flow, g)
    # Frame bytes per replica are the same for every replica: count them once.
    per = sum(len(f) for f in frames(segs, ports, 0, lambda: 0))
    n = max(1, -(-int(a.size * 1e6) // per))
    span = len(segs) * GAP_US
    state = [0x9E3779B9]

    def rng_isn():  # xorshift32: deterministic initial sequence numbers
        x = state[0]
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        state[0] = x
        return x

    def replica(r):
        t0 = 1_700_000_000_000_000 + r * span // a.concurrency
        for k, f in enumerate(frames(segs, ports, r, rng_isn)):
            yield (t0 + k * GAP_US, r, f)

    out = open(a.out, "wb")
    out.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
    # heapq.merge pulls replicas lazily; ISNs are drawn in merged order, deterministically.
    packets = total = 0
    for ts, _, f in heapq.merge(*(replica(r) for r in range(n))):
        out.write(struct.pack("<IIII", ts // 1_000_000, ts % 1_000_000, len(f), len(f)) + f)
        packets += 1
        total += len(f)
    out.close()
    print(f"wrote {a.out}: {total / 1e6:.1f} MB, {packets} packets, {n} replicas of "
          f"{len(ports)} flows ({per} bytes each)", file=sys.stderr)


if __name__ == "__main__":
    main()
