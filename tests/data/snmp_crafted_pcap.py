#!/usr/bin/env python3
"""snmp-crafted.pcap: SNMP that the corpus lacks. A v2c GetRequest and its Response
with an error-status (noSuchName) and two bindings; a v2c GetBulkRequest; a v1 trap
(linkDown) to port 162; a malformed message. Usage: snmp_crafted_pcap.py OUT.pcap
(tests/data/snmp-crafted.snmp.json holds the `snmp` records the reference, Suricata
8.0.6, writes for it with snmp-crafted.rules)."""
import struct, sys
def tlv(t, b):
    n = len(b)
    l = bytes([n]) if n < 128 else bytes([0x81, n])
    return bytes([t]) + l + b
def seq(*x): return tlv(0x30, b''.join(x))
def i(v): return tlv(2, bytes([v]))
def oid(h): return tlv(6, bytes.fromhex(h))
SYSDESCR = '2b06010201010100'
IFINDEX = '2b06010201020201' + '01'
get = seq(i(1), tlv(4, b'public'), tlv(0xa0, i(7) + i(0) + i(0) + seq(seq(oid(SYSDESCR), b'\x05\x00'))))
resp = seq(i(1), tlv(4, b'public'), tlv(0xa2, i(7) + i(2) + i(1) + seq(
    seq(oid(SYSDESCR), tlv(4, b'Linux box')), seq(oid(IFINDEX), i(3)))))
bulk = seq(i(1), tlv(4, b'private'), tlv(0xa5, i(8) + i(0) + i(10) + seq(seq(oid(IFINDEX), b'\x05\x00'))))
trap = seq(i(0), tlv(4, b'public'), tlv(0xa4, oid('2b060104018237') + tlv(0x40, bytes([10, 0, 0, 1]))
    + i(2) + i(0) + tlv(0x43, b'\x10') + seq(seq(oid(IFINDEX), i(1)))))
bad = seq(i(1), tlv(4, b'public'), b'\xa0\x05\x02\x01\x01')
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
pkts = [(A, B, 40001, 161, get), (B, A, 161, 40001, resp), (A, B, 40002, 161, bulk),
        (A, B, 40003, 162, trap), (A, B, 40004, 161, get), (A, B, 40004, 161, bad)]
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for n, (s, d, sp, dp, p) in enumerate(pkts):
        fr = ip4(s, d, sp, dp, p)
        f.write(struct.pack('<IIII', 1700000000 + n, 0, len(fr), len(fr)) + fr)
