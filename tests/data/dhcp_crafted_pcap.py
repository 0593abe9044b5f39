#!/usr/bin/env python3
"""dhcp-crafted.pcap: DHCP that the corpus lacks. A client's DORA (DISCOVER, OFFER,
REQUEST, ACK) with the options Suricata logs (message type, lease, renewal and
rebinding times, subnet mask, routers, DNS servers, hostname, requested address,
parameter list, client id, vendor class); an INFORM and its ACK between a client and
a relay; a NAK; a RELEASE; a message whose options run past the datagram
(`truncated_options`), one with a malformed option (`malformed_options`), and a
datagram too short for DHCP, each on a flow of its own.
Usage: dhcp_crafted_pcap.py OUT.pcap (the reference, Suricata 8.0.6, writes for it the
records and alerts kept in tests/data/dhcp-crafted.json)."""
import struct, sys
MAC = bytes([0x02, 0x11, 0x22, 0x33, 0x44, 0x55])
def opt(code, data): return bytes([code, len(data)]) + data
def dhcp(op, xid, ciaddr, yiaddr, siaddr, giaddr, options, end=True, mac=MAC):
    h = struct.pack('>BBBBIHH4s4s4s4s', op, 1, 6, 0, xid, 0, 0x8000, bytes(ciaddr), bytes(yiaddr), bytes(siaddr), bytes(giaddr))
    h += mac + bytes(10) + bytes(64) + bytes(128) + b'\x63\x82\x53\x63'
    return h + b''.join(options) + (b'\xff' if end else b'')
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
    return b'\xff\xff\xff\xff\xff\xff' + MAC + b'\x08\x00' + h + udp
Z = [0, 0, 0, 0]; BC = [255, 255, 255, 255]; S = [10, 1, 0, 1]; C = [10, 1, 0, 50]; R = [10, 2, 0, 1]
t = lambda v: struct.pack('>I', v)
params = opt(55, bytes([1, 3, 6, 15, 42, 66, 150, 119]))
server_opts = [opt(54, bytes(S)), opt(51, t(86400)), opt(58, t(43200)), opt(59, t(75600)),
               opt(1, bytes([255, 255, 255, 0])), opt(3, bytes(S)), opt(6, bytes(S) + bytes([8, 8, 8, 8])),
               opt(15, b'example.org')]
client_opts = [opt(61, b'\x01' + MAC), opt(12, b'laptop-7'), opt(60, b'MSFT 5.0'), params]
pkts = [(Z, BC, 68, 67, dhcp(1, 0x1001, Z, Z, Z, Z, [opt(53, b'\x01')] + client_opts)),
        (S, BC, 67, 68, dhcp(2, 0x1001, Z, C, S, Z, [opt(53, b'\x02')] + server_opts)),
        (Z, BC, 68, 67, dhcp(1, 0x1001, Z, Z, Z, Z, [opt(53, b'\x03'), opt(50, bytes(C)), opt(54, bytes(S))] + client_opts)),
        (S, BC, 67, 68, dhcp(2, 0x1001, Z, C, S, Z, [opt(53, b'\x05')] + server_opts + [opt(12, b'laptop-7')])),
        (C, S, 68, 67, dhcp(1, 0x2002, C, Z, Z, Z, [opt(53, b'\x08'), params])),
        (S, C, 67, 68, dhcp(2, 0x2002, C, Z, Z, R, [opt(53, b'\x05'), opt(1, bytes([255, 255, 0, 0])), opt(58, t(30))])),
        (S, C, 67, 68, dhcp(2, 0x3003, Z, Z, Z, Z, [opt(53, b'\x06'), opt(56, b'no lease')])),
        (C, S, 68, 67, dhcp(1, 0x4004, C, Z, Z, Z, [opt(53, b'\x07')])),
        ([10, 1, 0, 60], S, 68, 67, dhcp(1, 0x5005, Z, Z, Z, Z, [opt(53, b'\x01'), b'\x0c\x20host'], end=False)),
        ([10, 1, 0, 61], S, 68, 67, dhcp(1, 0x6006, Z, Z, Z, Z, [opt(53, b'\x01'), opt(51, b'\x00\x01')])),
        ([10, 1, 0, 62], S, 68, 67, dhcp(1, 0x7007, Z, Z, Z, Z, [])[:200]),
        ([10, 1, 0, 63], S, 68, 67, dhcp(1, 0x8008, Z, Z, Z, Z, [opt(53, b'\x05'), opt(51, t(7)), opt(61, b'\x01' + MAC), opt(60, b'udhcp 1.3'), opt(1, bytes([255, 0, 0, 0])), opt(12, b'h12'), opt(3, bytes(S)), opt(50, bytes(C)), params]))]
with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for n, (s, d, sp, dp, p) in enumerate(pkts):
        fr = ip4(s, d, sp, dp, p)
        f.write(struct.pack('<IIII', 1700000000 + n, 0, len(fr), len(fr)) + fr)
