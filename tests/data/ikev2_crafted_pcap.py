#!/usr/bin/env python3
"""ikev2-crafted.pcap: IKEv2 (RFC 7296) exchanges. Flow 1 (port 500): IKE_SA_INIT
request with two proposals (a strong one and one of weak transforms), KE, Nonce,
NAT-D notifies and a vendor id; the response choosing the strong one with KE, Nonce,
CERTREQ and a notify; encrypted IKE_AUTH both ways; an encrypted INFORMATIONAL.
Flow 2: proposals of AH, without DH, with a NULL PRF and DH None, an unknown
transform type, AEAD without integrity; the answer NO_PROPOSAL_CHOSEN. Flow 3: the
same exchange on port 4500 behind the non-ESP marker. Flow 4: on ports that are not
IKE's. Flow 5: messages that are not right (bad length, a payload past the end,
minor version 1, a v3 header). Usage: ikev2_crafted_pcap.py OUT.pcap"""
import struct, sys
from svcpcap import Capture

def payload(nxt, body, crit=0):
    return struct.pack('>BBH', nxt, crit, 4 + len(body)) + body

def transform(last, ttype, tid, keylen=None):
    attrs = struct.pack('>HH', 0x800e, keylen) if keylen else b''
    return struct.pack('>BBHBBH', 0 if last else 3, 0, 8 + len(attrs), ttype, 0, tid) + attrs

def proposal(last, num, proto, transforms, spi=b''):
    ts = b''.join(transform(i + 1 == len(transforms), *t) for i, t in enumerate(transforms))
    return struct.pack('>BBHBBBB', 0 if last else 2, 0, 8 + len(spi) + len(ts), num, proto,
                       len(spi), len(transforms)) + spi + ts

def sa(nxt, props):
    return payload(nxt, b''.join(proposal(i + 1 == len(props), i + 1, *p) for i, p in enumerate(props)))

def ke(nxt, group, data):
    return payload(nxt, struct.pack('>HH', group, 0) + data)

def notify(nxt, ntype, data=b'', proto=0, spi=b''):
    return payload(nxt, struct.pack('>BBH', proto, len(spi), ntype) + spi + data)

def header(ispi, rspi, nxt, exch, flags, mid, body, ver=0x20, length=None):
    n = 28 + len(body) if length is None else length
    return ispi + rspi + struct.pack('>BBBBII', nxt, ver, exch, flags, mid, n) + body

SA, KE, IDI, IDR, CERT, CERTREQ, AUTH, NONCE, N, D, V, TSI, TSR, SK = range(33, 47)
ENCR, PRF, INTEG, DH, ESN = 1, 2, 3, 4, 5
I1 = bytes.fromhex('a1b2c3d4e5f60718'); R1 = bytes.fromhex('0123456789abcdef'); Z = bytes(8)
strong = [(ENCR, 12, 256), (PRF, 5), (INTEG, 12), (DH, 14)]
weak = [(ENCR, 3), (ENCR, 2), (PRF, 1), (PRF, 2), (INTEG, 1), (INTEG, 2), (DH, 2), (DH, 1)]
nonce = bytes(range(32))
kei = bytes(range(64)) * 4
init_req = header(I1, Z, SA, 34, 0x08, 0,
                  sa(KE, [(1, strong), (1, weak)]) + ke(NONCE, 14, kei) + payload(N, nonce)
                  + notify(N, 16388, bytes(20)) + notify(V, 16389, bytes(20))
                  + payload(0, b'\xde\xad\xbe\xef\x01\x02'))
init_resp = header(I1, R1, SA, 34, 0x20, 0,
                   sa(KE, [(1, strong)]) + ke(NONCE, 14, kei[::-1]) + payload(CERTREQ, nonce[::-1])
                   + payload(N, b'\x04' + bytes(20)) + notify(0, 16404))
auth_req = header(I1, R1, SK, 35, 0x08, 1, payload(IDI, bytes(80)))
auth_resp = header(I1, R1, SK, 35, 0x20, 1, payload(IDR, bytes(64)))
info_req = header(I1, R1, SK, 37, 0x08, 2, payload(0, bytes(48)))
child = header(I1, R1, SK, 36, 0x00, 3, payload(SA, bytes(48)))

I2 = bytes.fromhex('1111111111111111')
odd = header(I2, Z, SA, 34, 0x08, 0,
             sa(NONCE, [(2, [(INTEG, 12), (ESN, 0)], b'\x01\x02\x03\x04'),
                        (3, [(ENCR, 12, 128), (INTEG, 2)], b'\x05\x06\x07\x08'),
                        (1, [(ENCR, 20, 256), (PRF, 0), (DH, 0), (9, 3)]),
                        (1, [(ENCR, 12, 128), (PRF, 7), (INTEG, 14), (DH, 19)])])
             + payload(0, nonce))
noprop = header(I2, Z, N, 34, 0x20, 0, notify(0, 14))

I3 = bytes.fromhex('3333333333333333'); R3 = bytes.fromhex('4444444444444444')
nat_req = header(I3, Z, SA, 34, 0x08, 0, sa(NONCE, [(1, strong)]) + payload(0, nonce))
nat_resp = header(I3, R3, SA, 34, 0x20, 0, sa(NONCE, [(1, strong)]) + payload(0, nonce))
nat_auth = header(I3, R3, SK, 35, 0x08, 1, payload(IDI, bytes(40)))

I4 = bytes.fromhex('5555555555555555'); R4 = bytes.fromhex('6666666666666666')
far_req = header(I4, Z, SA, 34, 0x08, 0, sa(NONCE, [(1, strong)]) + payload(0, nonce))
far_resp = header(I4, R4, SA, 34, 0x20, 0, sa(NONCE, [(1, weak)]) + payload(0, nonce))

I5 = bytes.fromhex('7777777777777777')
good5 = header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce))
badlen = header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce), length=200)
past = header(I5, Z, NONCE, 34, 0x08, 0, struct.pack('>BBH', 0, 0, 90) + nonce)
minor = header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce), ver=0x21)
v3 = header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce), ver=0x30)
trailing = header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce)) + b'\x00\x01\x02'
exch_out = header(I5, Z, NONCE, 40, 0x08, 0, payload(0, nonce))

I6 = bytes.fromhex('8888888888888888')
first_bad = header(I6, Z, NONCE, 34, 0x08, 0, payload(0, nonce), length=200)
then_good = header(I6, Z, NONCE, 34, 0x08, 0, payload(0, nonce))

c = Capture()
A, B = '10.0.0.1', '10.0.0.2'
for src, dst, m in [(A, B, init_req), (B, A, init_resp), (A, B, auth_req), (B, A, auth_resp),
                    (A, B, info_req), (B, A, child)]:
    c.udp(src, dst, 500, 500, m)
c.udp(A, B, 501, 500, odd)
c.udp(B, A, 500, 501, noprop)
c.udp(A, B, 4500, 4500, b'\0\0\0\0' + nat_req)
c.udp(B, A, 4500, 4500, b'\0\0\0\0' + nat_resp)
c.udp(A, B, 4500, 4500, b'\0\0\0\0' + nat_auth)
c.udp(A, B, 4500, 4500, b'\xff')
c.udp(A, B, 40000, 5000, far_req)
c.udp(B, A, 5000, 40000, far_resp)
c.udp(A, B, 502, 500, good5)
for m in [badlen, past, minor, v3, trailing, exch_out]:
    c.udp(A, B, 502, 500, m)
c.udp(A, B, 503, 500, first_bad)
c.udp(A, B, 503, 500, then_good)
c.udp(A, B, 504, 500, v3)
c.udp(A, B, 505, 500, exch_out)
c.udp(A, B, 506, 500, minor)
c.write(sys.argv[1])
