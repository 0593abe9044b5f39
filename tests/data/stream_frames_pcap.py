#!/usr/bin/env python3
"""stream-frames.pcap: RFB (VNC 3.8) sessions laid out to pin down Suricata 8's generic
`stream` frame, inspected as the stream grows. TCP 10.0.0.1:40001 -> 10.0.0.2:5900: the
handshake (versions, security type None, ClientInit, ServerInit), a client
FramebufferUpdateRequest, then 12 000 bytes of raw FramebufferUpdate from the server in
1000-byte segments, the client acknowledging every third (so that acknowledged data
passes 2500 bytes at different points), a second request and update, both FINs.
TCP :40002: the same handshake, then the server's update with a segment never captured
(the client acknowledges past it: a gap). TCP :40003: the handshake only, the flow left
open (it ends at the capture's end).
Usage: stream_frames_pcap.py OUT.pcap (tests/data/frames-ref.json holds what the
reference, Suricata 8.0.6, writes for it with frames-stream.rules)."""
import struct, sys
from scapy.all import Ether, IP, TCP, Raw, wrpcap

C, S = '10.0.0.1', '10.0.0.2'
pkts = []
t = [1700000000.0]


def emit(p):
    p.time = t[0]
    t[0] += 0.001
    pkts.append(p)


class Flow:
    def __init__(self, sport):
        self.sport = sport
        self.cs = 1000
        self.ss = 5000
        self.c_pkt(flags='S', seq=self.cs - 1, ack=0)
        self.s_pkt(flags='SA', seq=self.ss - 1, ack=self.cs)
        self.c_pkt(flags='A')

    def c_pkt(self, data=b'', flags='A', seq=None, ack=None):
        p = Ether() / IP(src=C, dst=S) / TCP(sport=self.sport, dport=5900, flags=flags,
                                             seq=self.cs if seq is None else seq,
                                             ack=self.ss if ack is None else ack)
        emit(p / Raw(data) if data else p)

    def s_pkt(self, data=b'', flags='A', seq=None, ack=None):
        p = Ether() / IP(src=S, dst=C) / TCP(sport=5900, dport=self.sport, flags=flags,
                                             seq=self.ss if seq is None else seq,
                                             ack=self.cs if ack is None else ack)
        emit(p / Raw(data) if data else p)

    def c(self, data):
        """A client message, acknowledged."""
        self.c_pkt(data, flags='PA')
        self.cs += len(data)
        self.s_pkt()

    def s(self, data, ack=True):
        """A server message (acknowledged at once when `ack`)."""
        self.s_pkt(data, flags='PA')
        self.ss += len(data)
        if ack:
            self.c_pkt()

    def handshake(self):
        self.s(b'RFB 003.008\n')
        self.c(b'RFB 003.008\n')
        self.s(b'\x01\x01')  # one security type: None
        self.c(b'\x01')
        self.s(struct.pack('>I', 0))  # SecurityResult OK
        self.c(b'\x01')  # ClientInit, shared
        name = b'stream frames'
        pixel = bytes([32, 24, 0, 1]) + struct.pack('>HHH', 255, 255, 255) + bytes([16, 8, 0, 0, 0, 0])
        self.s(struct.pack('>HH', 800, 600) + pixel + struct.pack('>I', len(name)) + name)

    def update(self, n, request=True):
        """A FramebufferUpdateRequest, then one raw rectangle of `n` pixels (4 bytes
        each) from the server: the update's bytes."""
        if request:
            self.c(bytes([3, 1]) + struct.pack('>HHHH', 0, 0, 800, 600))
        head = bytes([0, 0]) + struct.pack('>H', 1) + struct.pack('>HHHHi', 0, 0, n, 1, 0)
        body = bytes((i * 7) & 0xff for i in range(4 * n))
        return head + body

    def fin(self):
        self.c_pkt(flags='FA')
        self.cs += 1
        self.s_pkt(flags='FA')
        self.ss += 1
        self.c_pkt()


# :40001 — updates acknowledged every third segment, then closed.
f = Flow(40001)
f.handshake()
data = f.update(3000)
segs = [data[i:i + 1000] for i in range(0, len(data), 1000)]
for i, seg in enumerate(segs):
    f.s(seg, ack=False)
    if i % 3 == 2 or i == len(segs) - 1:
        f.c_pkt()
data = f.update(700)
for i in range(0, len(data), 1000):
    f.s(data[i:i + 1000])
f.fin()

# :40002 — a server segment never captured (the client acknowledges past it).
f = Flow(40002)
f.handshake()
data = f.update(1500)
segs = [data[i:i + 1000] for i in range(0, len(data), 1000)]
for i, seg in enumerate(segs):
    if i == 2:
        f.ss += len(seg)  # lost
        continue
    f.s(seg)
f.fin()

# :40003 — the handshake, left open.
f = Flow(40003)
f.handshake()

wrpcap(sys.argv[1], pkts)
