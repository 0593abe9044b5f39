#!/usr/bin/env python3
"""dns-datasets.pcap: DNS queries for the dataset tests (tests/datasets.rs): 12 queries,
each on a flow of its own (clients 10.9.0.1-12, ports 40001-40012, to 10.9.0.53:53),
so that `--workers 2` spreads them over both workers; some names come again on other
flows (alpha.example three times, beta.example and known.example twice).
Usage: dns_datasets_pcap.py OUT.pcap (what the reference, Suricata 8.0.6, alerts and
saves for it with dns-datasets.rules is kept in dns-datasets.expected.json and
dns-datasets.saved.lst)."""
import struct, sys
NAMES = ['alpha.example', 'beta.example', 'alpha.example', 'gamma.example', 'known.example',
         'alpha.example', 'beta.example', 'delta.example', 'known.example', 'epsilon.example',
         'other.known.example', 'zeta.example']
def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('>%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return (~s) & 0xffff
def query(qid, name):
    q = struct.pack('>HHHHHH', qid, 0x0100, 1, 0, 0, 0)
    for label in name.split('.'):
        q += bytes([len(label)]) + label.encode()
    return q + b'\0' + struct.pack('>HH', 1, 1)
def frame(src, dst, sp, dp, payload):
    udp = struct.pack('>HHHH', sp, dp, 8 + len(payload), 0) + payload
    ph = bytes(src) + bytes(dst) + struct.pack('>BBH', 0, 17, len(udp))
    udp = udp[:6] + struct.pack('>H', csum(ph + udp) or 0xffff) + udp[8:]
    h = struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 1, 0, 64, 17, 0, bytes(src), bytes(dst))
    h = h[:10] + struct.pack('>H', csum(h)) + h[12:]
    return bytes([2, 0, 0, 0, 0, 0x53]) + bytes([2, 0, 0, 0, 0, 1]) + b'\x08\x00' + h + udp
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for n, name in enumerate(NAMES):
        fr = frame([10, 9, 0, n + 1], [10, 9, 0, 53], 40001 + n, 53, query(0x1000 + n, name))
        f.write(struct.pack('<IIII', 1700000000 + n, 0, len(fr), len(fr)) + fr)
