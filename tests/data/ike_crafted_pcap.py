#!/usr/bin/env python3
"""ike-crafted.pcap: IKEv1 that the corpus lacks. On port 500: a main-mode request
whose SA has one proposal of many transforms (every encryption, hash, authentication
and group value up to the registry's ends, both life types, a long attribute, an
unknown class), and a response choosing two transforms (multiple_server_proposal);
an aggressive-mode request with a key exchange, a nonce and two vendor ids; the same
on port 4500 behind the non-ESP marker (which Suricata 8 does not take for IKE); a
message with extra bytes after its payloads.
Usage: ike_crafted_pcap.py OUT.pcap (tests/data/ike-crafted.ike.json holds the `ike`
records the reference, Suricata 8.0.6, writes for it with ike-crafted.rules)."""
import struct, sys
def tv(t, v): return struct.pack('>HH', 0x8000 | t, v)
def tlv(t, b): return struct.pack('>HH', t, len(b)) + b
def payload(nxt, body): return struct.pack('>BBH', nxt, 0, 4 + len(body)) + body
def transform(nxt, num, attrs): return payload(nxt, struct.pack('>BBH', num, 1, 0) + b''.join(attrs))
def sa(nxt, transforms):
    ts = b''
    for k, t in enumerate(transforms):
        ts += transform(3 if k + 1 < len(transforms) else 0, k + 1, t)
    prop = payload(0, struct.pack('>BBBB', 1, 1, 0, len(transforms)) + ts)
    return payload(nxt, struct.pack('>II', 1, 1) + prop)
def header(ispi, rspi, nxt, exch, flags, mid, body):
    return ispi + rspi + struct.pack('>BBBBII', nxt, 0x10, exch, flags, mid, 28 + len(body)) + body
I = bytes.fromhex('1122334455667788'); R = bytes.fromhex('99aabbccddeeff00'); Z = bytes(8)
trs = []
for e in range(1, 10):
    trs.append([tv(1, e), tv(2, (e % 7) + 1), tv(3, e), tv(4, e), tv(11, 1), tlv(12, struct.pack('>I', 3600))])
for g in range(10, 33):
    trs.append([tv(1, 7), tv(14, 256), tv(2, 4), tv(4, g), tv(3, 65001), tv(11, 2), tv(12, 1000)])
trs.append([tv(1, 5), tv(2, 1), tv(3, 1), tv(4, 1), tv(13, 1), tv(5, 1), tlv(6, bytes(range(1, 11))), tv(40, 3)])
req = header(I, Z, 1, 2, 0, 0, sa(0, trs))
resp = header(I, R, 1, 2, 0, 0, sa(13, trs[6:8]) + payload(0, bytes.fromhex('4a131c81070358455c5728f20e95452f')))
ke = bytes(range(64)); nonce = bytes(range(100, 124))
aggr = header(bytes.fromhex('0102030405060708'), Z, 1, 4, 0, 0,
              sa(4, trs[:1]) + payload(10, ke) + payload(13, nonce) + payload(13, b'\xde\xad\xbe\xef') + payload(0, b'\x01\x02\x03\x04\x05\x06\x07\x08'))
extra = header(I, R, 11, 5, 0, 7, payload(0, b'\x00\x00\x00\x01\x01\x10\x00\x0e') + b'\x00\x01')
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
A = [10, 0, 0, 1]; B = [10, 0, 0, 2]
pkts = [(A, B, 500, 500, req), (B, A, 500, 500, resp), (A, B, 40500, 500, aggr),
        (A, B, 4500, 4500, b'\0\0\0\0' + aggr), (A, B, 500, 500, extra)]
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for n, (s, d, sp, dp, p) in enumerate(pkts):
        fr = ip4(s, d, sp, dp, p)
        f.write(struct.pack('<IIII', 1700000000 + n, 0, len(fr), len(fr)) + fr)
