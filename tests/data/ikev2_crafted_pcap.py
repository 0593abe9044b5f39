#!/usr/bin/env python3
"""ikev2-crafted.pcap: IKEv2 (RFC 7296) for tests/ike_eve.rs, each case its own flow or
message so that the reference's records, events and alerts say how it reads IKEv2.
Port 500: an IKE_SA_INIT exchange (its request spoilt by a vendor id shorter than 8
bytes), encrypted IKE_AUTH, INFORMATIONAL and CREATE_CHILD_SA; proposals of AH,
without DH, with a NULL PRF and DH group 0, an unknown transform type, AEAD without
integrity, answered NO_PROPOSAL_CHOSEN; headers that are not right within a flow (a
length that is not the datagram's, a payload past the end, minor version 1, major
version 3, bytes after the last payload, a short datagram, a header alone); first
messages the probe refuses (length, version, exchange type); one message per payload
body rule (lengths of each payload type, notify SPIs, traffic selectors, proposals and
transforms); one message per transform value (the weak-crypto and proposal events);
responses choosing one transform each (the algorithm names); every notify type named;
what the responder's messages choose (several proposals, several SAs, several
transforms of a kind: the EVE algorithms and `ike.chosen_sa_attribute`); roles against
directions; IKEv1 and IKEv2 in one flow. Port 4500 behind the non-ESP marker and ports
that are not IKE's are not taken. SPIs starting with four zero bytes are common here:
on port 500 they are no marker. Usage: ikev2_crafted_pcap.py OUT.pcap
(tests/data/ikev2-crafted-ref.json holds what the reference, Suricata 8.0.6, writes
for it with ikev2-crafted.rules, as tests/data/ikev2_ref_rows.py keeps it)."""
import struct, sys
from svcpcap import Capture


def payload(nxt, body, crit=0):
    return struct.pack('>BBH', nxt, crit, 4 + len(body)) + body


def transform(last, ttype, tid, keylen=None, tlen=None):
    attrs = struct.pack('>HH', 0x800e, keylen) if keylen else b''
    n = 8 + len(attrs) if tlen is None else tlen
    return struct.pack('>BBHBBH', 0 if last else 3, 0, n, ttype, 0, tid) + attrs


def proposal(last, num, proto, transforms, spi=b'', count=None, plen=None):
    ts = b''.join(transform(i + 1 == len(transforms), *t) for i, t in enumerate(transforms))
    n = 8 + len(spi) + len(ts) if plen is None else plen
    k = len(transforms) if count is None else count
    return struct.pack('>BBHBBBB', 0 if last else 2, 0, n, num, proto, len(spi), k) + spi + ts


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
Z = bytes(8)
strong = [(ENCR, 12, 256), (PRF, 5), (INTEG, 12), (DH, 14)]
weak = [(ENCR, 3), (PRF, 1), (INTEG, 1), (DH, 2)]
nonce = bytes(range(32))
A, B = '10.0.0.1', '10.0.0.2'
c = Capture()

# The exchange of flow 1 and the odd proposals of flow 2.
I1 = bytes.fromhex('a1b2c3d4e5f60718'); R1 = bytes.fromhex('0123456789abcdef')
weak8 = [(ENCR, 3), (ENCR, 2), (PRF, 1), (PRF, 2), (INTEG, 1), (INTEG, 2), (DH, 2), (DH, 1)]
kei = bytes(range(64)) * 4
init_req = header(I1, Z, SA, 34, 0x08, 0,
                  sa(KE, [(1, strong), (1, weak8)]) + ke(NONCE, 14, kei) + payload(N, nonce)
                  + notify(N, 16388, bytes(20)) + notify(V, 16389, bytes(20))
                  + payload(0, b'\xde\xad\xbe\xef\x01\x02'))
init_resp = header(I1, R1, SA, 34, 0x20, 0,
                   sa(KE, [(1, strong)]) + ke(NONCE, 14, kei[::-1]) + payload(CERTREQ, nonce[::-1])
                   + payload(N, b'\x04' + bytes(20)) + notify(0, 16404))
for src, dst, m in [(A, B, init_req), (B, A, init_resp),
                    (A, B, header(I1, R1, SK, 35, 0x08, 1, payload(IDI, bytes(80)))),
                    (B, A, header(I1, R1, SK, 35, 0x20, 1, payload(IDR, bytes(64)))),
                    (A, B, header(I1, R1, SK, 37, 0x08, 2, payload(0, bytes(48)))),
                    (B, A, header(I1, R1, SK, 36, 0x00, 3, payload(SA, bytes(48))))]:
    c.udp(src, dst, 500, 500, m)
I2 = bytes.fromhex('1111111111111111')
odd = header(I2, Z, SA, 34, 0x08, 0,
             sa(NONCE, [(2, [(INTEG, 12), (ESN, 0)], b'\x01\x02\x03\x04'),
                        (3, [(ENCR, 12, 128), (INTEG, 2)], b'\x05\x06\x07\x08'),
                        (1, [(ENCR, 20, 256), (PRF, 0), (DH, 0), (9, 3)]),
                        (1, [(ENCR, 12, 128), (PRF, 7), (INTEG, 14), (DH, 19)])])
             + payload(0, nonce))
c.udp(A, B, 501, 500, odd)
c.udp(B, A, 500, 501, header(I2, Z, N, 34, 0x20, 0, notify(0, 14)))

# Port 4500 behind the non-ESP marker, and ports that are not IKE's: not taken.
I3 = bytes.fromhex('3333333333333333'); R3 = bytes.fromhex('4444444444444444')
c.udp(A, B, 4500, 4500, b'\0\0\0\0' + header(I3, Z, SA, 34, 0x08, 0, sa(NONCE, [(1, strong)]) + payload(0, nonce)))
c.udp(B, A, 4500, 4500, b'\0\0\0\0' + header(I3, R3, SA, 34, 0x20, 0, sa(NONCE, [(1, strong)]) + payload(0, nonce)))
c.udp(A, B, 4500, 4500, b'\xff')
I4 = bytes.fromhex('5555555555555555'); R4 = bytes.fromhex('6666666666666666')
c.udp(A, B, 40000, 5000, header(I4, Z, SA, 34, 0x08, 0, sa(NONCE, [(1, strong)]) + payload(0, nonce)))
c.udp(B, A, 5000, 40000, header(I4, R4, SA, 34, 0x20, 0, sa(NONCE, [(1, weak)]) + payload(0, nonce)))

# Headers that are not right, after a good first message.
I5 = bytes.fromhex('7777777777777777')
good = header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce))
for m in [good,
          header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce), length=200),
          header(I5, Z, NONCE, 34, 0x08, 0, struct.pack('>BBH', 0, 0, 90) + nonce),
          header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce), ver=0x21),
          header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce), ver=0x30),
          header(I5, Z, NONCE, 34, 0x08, 0, payload(0, nonce), ver=0x00),
          good + b'\x00\x01\x02',
          header(I5, Z, NONCE, 40, 0x08, 0, payload(0, nonce)),
          b'\x01\x02\x03', good[:28]]:
    c.udp(A, B, 502, 500, m)

# First messages: refused (length, version, exchange type) or taken (any flags, a
# responder SPI).
I6 = bytes.fromhex('8888888888888888')
for port, m in [(503, header(I6, Z, NONCE, 34, 0x08, 0, payload(0, nonce), length=200)),
                (504, header(I6, Z, NONCE, 34, 0x08, 0, payload(0, nonce), ver=0x30)),
                (505, header(I6, Z, NONCE, 40, 0x08, 0, payload(0, nonce))),
                (506, header(I6, Z, NONCE, 34, 0x08, 0, payload(0, nonce), ver=0x21)),
                (507, header(I6, Z, NONCE, 33, 0x08, 0, payload(0, nonce))),
                (508, header(I6, Z, NONCE, 38, 0x08, 0, payload(0, nonce))),
                (509, header(I6, Z, NONCE, 37, 0x00, 0, payload(0, nonce))),
                (510, header(I6, I6, NONCE, 35, 0x20, 7, payload(0, nonce))),
                (511, header(I6, Z, NONCE, 34, 0xff, 0, payload(0, nonce)))]:
    c.udp(A, B, port, 500, m)
c.udp(A, B, 503, 500, header(I6, Z, NONCE, 34, 0x08, 0, payload(0, nonce)))

# One message per payload body rule, all in one flow (port 1000).
ts4 = struct.pack('>BBHHH', 7, 0, 16, 0, 65535) + bytes(8)
ts6 = struct.pack('>BBHHH', 8, 0, 40, 0, 65535) + bytes(32)
bodies = []
for n in [0, 7, 8]:
    bodies.append((V, payload(0, bytes(n))))
for t in [KE, IDI, IDR, AUTH]:
    for n in [0, 3, 4]:
        bodies.append((t, payload(0, bytes(n))))
for t in [CERT, CERTREQ]:
    for n in [0, 1]:
        bodies.append((t, payload(0, bytes(n))))
for n in [0, 7, 8]:
    bodies.append((D, payload(0, bytes(n))))
bodies += [(D, payload(0, bytes([3, 4, 0, 2]) + bytes(4))),
           (N, payload(0, bytes(3))), (N, payload(0, bytes(4))),
           (N, payload(0, bytes([3, 8, 0, 14]) + bytes(4))), (N, notify(0, 14, b'', 3, bytes(4))),
           (N, notify(N, 14) + notify(N, 24) + notify(0, 16384)),
           (N, notify(N, 8191) + notify(N, 40000) + notify(0, 16383)),
           (NONCE, payload(0, b'')),
           (TSI, payload(0, bytes(3))), (TSI, payload(0, bytes(4))),
           (TSI, payload(0, bytes([1, 0, 0, 0]) + ts4)), (TSI, payload(0, bytes([1, 0, 0, 0]) + ts6)),
           (TSI, payload(0, bytes([2, 0, 0, 0]) + ts4)), (TSI, payload(0, bytes([1, 0, 0, 0]) + ts4 + ts4)),
           (TSI, payload(0, bytes([1, 0, 0, 0]) + ts4 + b'\x07\x00')),
           (TSI, payload(0, bytes([1, 0, 0, 0]) + struct.pack('>BBHHH', 9, 0, 16, 0, 65535) + bytes(8))),
           (TSI, payload(0, bytes([1, 0, 0, 0]) + struct.pack('>BBHHH', 7, 0, 8, 0, 65535) + bytes(8))),
           (TSR, payload(0, bytes([1, 0, 0, 0]) + ts4)), (TSR, payload(0, bytes([1, 0, 0, 0]))),
           (SK, payload(IDI, bytes(8)) + payload(0, bytes(8))), (SK, payload(0, b''))]
for t in [47, 48, 49, 128, 255, 0, 1, 13]:
    bodies.append((t, payload(0, bytes(4))))
for t in [47, 48, 50]:
    bodies.append((t, payload(0, b'')))
bodies += [(0, b''), (SA, b''), (NONCE, payload(0, bytes(8), crit=0x80)),
           (NONCE, struct.pack('>BBH', 0, 0, 3) + bytes(8)), (NONCE, payload(0, bytes(8)) + b'\x00'),
           (NONCE, payload(0, bytes(8)) + bytes(4)), (NONCE, payload(NONCE, bytes(8)) + payload(NONCE, b'') + payload(0, b'x')),
           (SA, payload(0, b'')), (SA, sa(0, [(1, [])])),
           (SA, payload(0, proposal(True, 1, 1, strong, count=5))),
           (SA, payload(0, proposal(True, 1, 1, strong, count=2))),
           (SA, payload(0, proposal(True, 1, 1, strong, count=0))),
           (SA, payload(0, proposal(True, 1, 1, strong, plen=20))),
           (SA, payload(0, proposal(True, 1, 1, strong, plen=200))),
           (SA, payload(0, proposal(True, 1, 1, strong, plen=7))),
           (SA, payload(0, proposal(True, 1, 1, strong) + bytes(3))),
           (SA, payload(0, proposal(True, 1, 1, strong) + bytes(8))),
           (SA, payload(0, proposal(True, 1, 1, strong) + proposal(True, 2, 1, weak))),
           (SA, payload(0, proposal(True, 1, 1, strong) + bytes(8) + proposal(True, 3, 1, weak))),
           (SA, payload(0, proposal(False, 1, 1, strong))),
           (SA, payload(0, proposal(True, 1, 1, [(ENCR, 12, None, 4), (DH, 14)]))),
           (SA, payload(0, proposal(True, 1, 1, [(ENCR, 12, None, 12), (DH, 14)]))),
           (SA, payload(0, proposal(True, 1, 1, [(ENCR, 12, None, 12), (DH, 14)]) + bytes(4))),
           (SA, sa(0, [(3, strong, bytes(4))])), (SA, sa(0, [(0, weak)])), (SA, sa(0, [(5, weak)])),
           (SA, sa(SA, [(1, [(ENCR, 3), (DH, 14), (INTEG, 12)])]) + sa(0, [(1, [(ENCR, 2), (DH, 14), (INTEG, 12)])])),
           (SA, sa(NONCE, [(1, weak)]) + payload(0, bytes(8)) + b'\x00')]
for k, (nxt, body) in enumerate(bodies):
    c.udp(A, B, 1000, 500, header(struct.pack('>Q', 0x1000 + k), Z, nxt, 34, 0x08, 0, body))

# One message per transform value (and orders of events), in one flow (port 1001).
props = []
for e in list(range(0, 30)) + [35, 1024, 65535]:
    props.append((1, [(ENCR, e), (PRF, 5), (INTEG, 12), (DH, 14)]))
for e in [0, 1, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 1024]:
    props.append((1, [(ENCR, e), (PRF, 5), (DH, 14)]))
for e in list(range(0, 10)) + [1024]:
    props.append((1, [(ENCR, 12), (PRF, e), (INTEG, 12), (DH, 14)]))
for e in list(range(0, 16)) + [1024]:
    props.append((1, [(ENCR, 12), (PRF, 5), (INTEG, e), (DH, 14)]))
for e in list(range(0, 34)) + [1024, 65535]:
    props.append((1, [(ENCR, 12), (PRF, 5), (INTEG, 12), (DH, e)]))
for e in [0, 1, 2, 1024]:
    props.append((1, [(ENCR, 12), (PRF, 5), (INTEG, 12), (DH, 14), (ESN, e)]))
for t in [0, 6, 7, 8, 240, 255]:
    props.append((1, [(ENCR, 12), (PRF, 5), (INTEG, 12), (DH, 14), (t, 1)]))
props += [(2, [(ENCR, 3)]), (2, [(ENCR, 3), (PRF, 0), (9, 9), (INTEG, 1)]),
          (3, [(9, 9), (INTEG, 1), (ENCR, 3), (PRF, 1), (DH, 0), (DH, 1)]),
          (1, [(ENCR, 20), (INTEG, 0), (DH, 14)]), (1, [(ENCR, 12), (INTEG, 0), (INTEG, 12), (DH, 14)]),
          (1, [(ENCR, 12), (INTEG, 12), (INTEG, 0), (DH, 14)]), (1, [(ENCR, 12), (INTEG, 12), (DH, 0)]),
          (1, [(ENCR, 12), (ENCR, 20), (DH, 14)]), (1, [(ENCR, 20), (ENCR, 12), (DH, 14)]),
          (1, [(ENCR, 12), (DH, 2), (DH, 14), (INTEG, 12)]), (3, [(ENCR, 12), (INTEG, 12)]),
          (1, [(PRF, 5), (INTEG, 12), (DH, 14)]), (1, [(INTEG, 12), (ENCR, 11), (DH, 14)])]
for k, p in enumerate(props):
    c.udp(A, B, 1001, 500, header(struct.pack('>Q', 0x2000 + k), Z, SA, 34, 0x08, 0, sa(0, [p])))
# Many proposals in one message.
c.udp(A, B, 1001, 500, header(struct.pack('>Q', 0x2fff), Z, SA, 34, 0x08, 0, sa(0, props[:40])))

# Responses choosing one transform each: the names of the algorithms (port 1002).
I7 = struct.pack('>Q', 0x3000); R7 = struct.pack('>Q', 0x3001)
c.udp(A, B, 1002, 500, header(I7, Z, NONCE, 34, 0x08, 0, payload(0, bytes(8))))
for k, rng in [(ENCR, list(range(0, 31)) + [1024]), (PRF, range(0, 11)), (INTEG, range(0, 17)),
               (DH, list(range(0, 35)) + [4000]), (ESN, range(0, 3))]:
    for e in rng:
        c.udp(B, A, 500, 1002, header(I7, R7, SA, 34, 0x20, 0, sa(0, [(1, [(k, e)])])))
# Every notify type named, and some that are not.
types = list(range(0, 50)) + [8191, 8192, 16383] + list(range(16384, 16440)) + [40960, 65535]
chain = b''.join(notify(N if k + 1 < len(types) else 0, t) for k, t in enumerate(types))
c.udp(B, A, 500, 1002, header(I7, R7, N, 34, 0x20, 1, chain))

# What the responder's messages choose, and roles against directions: one flow each.
flows = [
    [(True, SA, sa(0, [(1, strong), (1, weak)]), 8), (False, SA, sa(0, [(1, strong), (1, weak)]), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(KE, [(1, strong)]) + ke(0, 19, bytes(32)), 0x20)],
    [(True, KE, ke(0, 19, bytes(32)), 8), (False, NONCE, payload(0, bytes(8)), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(0, [(1, [(ENCR, 20), (DH, 19)])]), 0x20),
     (False, SA, sa(0, [(1, [(PRF, 7)])]), 0x20), (True, NONCE, payload(0, bytes(8)), 8)],
    [(True, NONCE, payload(0, bytes(8)), 8), (False, SA, sa(0, [(1, weak)]), 0x08), (False, NONCE, payload(0, bytes(8)), 0x20)],
    [(True, SA, sa(0, [(1, weak)]), 0x20), (True, SA, sa(0, [(1, strong)]), 0x00), (False, NONCE, payload(0, bytes(8)), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(0, [(2, [(INTEG, 12), (ESN, 0)])]), 0x20)],
    [(True, SA, sa(KE, [(1, strong)]) + ke(NONCE, 14, bytes(range(64))) + payload(V, b'nonce-init') + payload(0, b'vendor-i-id'), 8),
     (False, SA, sa(KE, [(1, strong)]) + ke(NONCE, 14, bytes(range(32))) + payload(V, b'nonce-resp!') + payload(V, b'vendor-r-id') + payload(0, b'vendor-r-2nd'), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(0, [(1, strong), (1, strong), (1, strong)]), 0x20), (False, SA, sa(0, [(1, strong)]), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(SA, [(1, strong)]) + sa(0, [(1, [(ENCR, 20), (DH, 19), (PRF, 7)])]), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(0, [(1, strong)]) + b'\x01', 0x20), (False, NONCE, payload(0, bytes(8)), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8),
     (False, SA, sa(0, [(1, [(ENCR, 20), (ENCR, 12), (DH, 19), (DH, 14), (PRF, 7), (PRF, 5), (INTEG, 14), (INTEG, 12)])]), 0x20),
     (False, NONCE, payload(0, bytes(8)), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(0, [(1, [(ENCR, 20)]), (1, [(DH, 19), (PRF, 7), (INTEG, 14), (ENCR, 12)])]), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(SA, [(1, [])]) + sa(0, [(1, strong)]), 0x20)],
    [(True, NONCE, payload(0, bytes(8)), 8), (False, SA, sa(0, [(1, [(9, 1), (ENCR, 13), (DH, 14), (INTEG, 12)])]), 0x20)],
    [(True, NONCE, payload(0, bytes(8)), 8), (False, SK, payload(SA, sa(0, [(1, strong)])), 0x20)],
    [(True, NONCE, payload(0, bytes(8)), 8), (False, SA, sa(0, [(1, strong)]), 0x20),
     (True, SA, sa(0, [(1, weak)]), 0x08), (False, NONCE, payload(0, bytes(8)), 0x20)],
    [(True, 13, payload(0, bytes(8)), 0, 2, 0x10), (True, NONCE, payload(0, bytes(8)), 8)],
    [(True, NONCE, payload(0, bytes(8)), 8), (True, 13, payload(0, bytes(8)), 0, 2, 0x10), (False, NONCE, payload(0, bytes(8)), 0x20)],
    [(True, SA, sa(0, [(1, strong)]), 8), (False, SA, sa(0, [(1, [(ENCR, 12), (INTEG, 12)])]), 0x20),
     (False, SA, sa(0, [(1, [(ENCR, 12), (INTEG, 12)])]), 0x20, 36)],
]
for k, msgs in enumerate(flows):
    p = 1100 + k
    ispi = struct.pack('>Q', p); rspi = struct.pack('>Q', p + 0x1000000)
    for to_server, nxt, body, flags, *rest in msgs:
        exch = rest[0] if rest else 34
        ver = rest[1] if len(rest) > 1 else 0x20
        if to_server:
            c.udp(A, B, p, 500, header(ispi, Z if ver == 0x20 else rspi, nxt, exch, flags, 0, body, ver=ver))
        else:
            c.udp(B, A, 500, p, header(ispi, rspi, nxt, exch, flags, 0, body, ver=ver))
c.write(sys.argv[1])
