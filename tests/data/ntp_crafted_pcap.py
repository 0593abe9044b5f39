#!/usr/bin/env python3
"""ntp-crafted.pcap: NTP that the corpus lacks. On port 123: a version 4 client request
and the server's reply (stratum 2, reference id "GPS\\0"); a datagram too short for NTP
after them on the same flow; a version 3 symmetric-active packet between two servers;
a version 4 packet with a MAC after the header (68 bytes); a version 2 packet and a
mode 6 control message, each on a flow of its own; a version 4 request between two
other ports.
Usage: ntp_crafted_pcap.py OUT.pcap (tests/data/ntp-crafted.ntp.json holds the alerts,
with their `ntp` objects, that the reference, Suricata 8.0.6, writes for it with
ntp-crafted.rules)."""
import struct, sys
def ntp(version, mode, stratum, refid, tail=b''):
    return struct.pack('>BBbb', (version << 3) | mode, stratum, 6, -20) + bytes(8) + refid + bytes(32) + tail
def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('>%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return (~s) & 0xffff
def ip4(src, dst, sp, dp, payload):
    udp = struct.pack('>HHHH', sp, dp, 8 + len(payload), 0) + payload
    ph = bytes(src) + bytes(dst) + struct.pack('>BBH', 0, 17, len(udp))
    c = csum(ph + udp) or 0xffff
    udp = udp[:6] + struct.pack('>H', c) + udp[8:]
    h = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, bytes(src), bytes(dst))
    h = h[:10] + struct.pack('>H', csum(h)) + h[12:]
    return b'\x02\x00\x00\x00\x00\x02' + b'\x02\x00\x00\x00\x00\x01' + b'\x08\x00' + h + udp
A = [10, 0, 0, 1]; B = [10, 0, 0, 2]; C = [10, 0, 0, 3]
control = struct.pack('>BBHHHHH', (2 << 3) | 6, 2, 1, 0, 0, 0, 0)
pkts = [(A, B, 40000, 123, ntp(4, 3, 0, bytes(4))),
        (B, A, 123, 40000, ntp(4, 4, 2, b'GPS\0')),
        (A, B, 40000, 123, b'\x23\x00\x06\xec' + bytes(16)),
        (B, C, 123, 123, ntp(3, 1, 3, bytes([10, 0, 0, 9]))),
        (A, B, 40001, 123, ntp(4, 3, 0, b'INIT', struct.pack('>I', 7) + bytes(16))),
        (A, B, 40002, 123, ntp(2, 3, 0, bytes(4))),
        (A, B, 40003, 123, control),
        (A, B, 40004, 5000, ntp(4, 3, 0, bytes(4)))]
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for n, (s, d, sp, dp, p) in enumerate(pkts):
        fr = ip4(s, d, sp, dp, p)
        f.write(struct.pack('<IIII', 1700000000 + n, 0, len(fr), len(fr)) + fr)
