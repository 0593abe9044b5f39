#!/usr/bin/env python3
"""rdp-crafted.pcap: RDP connection sequences on TCP 3389, for tests/rdp_eve.rs.

Flows (client 10.0.0.1, server 10.0.0.2, client ports 49201..):
 1. standard RDP security: Connection Request with a cookie and an RDP_NEG_REQ, a
    Connection Confirm with an RDP_NEG_RSP (every flag), an MCS Connect Initial with
    full client core data (every optional field), security, cluster and network data
    (four channels), the MCS Connect Response, then data that is not parsed;
 2. TLS: a Connection Request asking for SSL and CredSSP, a Confirm choosing SSL, then
    a TLS ClientHello and a ServerHello + Certificate (three certificates: two real,
    Ed25519-signed with fixed keys and serials, one that is not X.509) + ServerHelloDone;
 3. negotiation failure (ssl not allowed by server), then a failure with an unknown code;
 4. not RDP on 3389 (its first byte is not a TPKT's);
 5. a legacy client: no cookie, no RDP_NEG_REQ, client core data up to the IME name
    only, values Suricata has no name for; the request split over segments;
 6. malformed: a TPKT whose length is below its header's, after a good request;
 7. truncated: an MCS Connect Initial whose client core block is longer than its
    data, then the connection closes;
 8. a Connection Request that is not class 0, then a good one; a TPKT the parser does
    not know (raw), then the Confirm.
Usage: rdp_crafted_pcap.py OUT.pcap (tests/data/rdp-crafted.rdp.json holds the `rdp`
records the reference, Suricata 8.0.6, writes for it with rdp-crafted.rules)."""
import datetime
import struct
import sys

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from svcpcap import Capture, Tcp  # noqa: E402


def tpkt(body):
    return struct.pack('>BBH', 3, 0, 4 + len(body)) + body


def x224_cr(data, cls=0):
    # LI, CR|CDT, DST-REF, SRC-REF, class/options
    return tpkt(struct.pack('>BBHHB', 6 + len(data), 0xe0, 0, 0x1234, cls) + data)


def x224_cc(data):
    return tpkt(struct.pack('>BBHHB', 6 + len(data), 0xd0, 0, 0x1234, 0) + data)


def neg(typ, flags, value):
    return struct.pack('<BBHI', typ, flags, 8, value)


def x224_data(body):
    return tpkt(b'\x02\xf0\x80' + body)


def utf16(s, n):
    b = s.encode('utf-16-le')
    return (b + bytes(n))[:n]


def block(typ, body):
    return struct.pack('<HH', typ, 4 + len(body)) + body


def per_len(n):
    return bytes([n]) if n < 0x80 else struct.pack('>H', 0x8000 | n)


def ber_len(n):
    return bytes([n]) if n < 0x80 else b'\x82' + struct.pack('>H', n)


def mcs_connect_initial(blocks, core_len_extra=0):
    user = b''.join(blocks)
    # GCC Conference Create Request (T.124), PER: the H.221 client key "Duca" and the
    # user data's length.
    gcc = (b'\x00\x05\x00\x14\x7c\x00\x01' + per_len(14 + len(user)) +
           b'\x00\x08\x00\x10\x00\x01\xc0\x00' + b'Duca' + per_len(len(user)) + user)
    dom = bytes.fromhex('3019020122020102020100020101020100020101020300ffff020102')
    body = (b'\x04\x01\x01' + b'\x04\x01\x01' + b'\x01\x01\xff' + dom + dom + dom +
            b'\x04' + ber_len(len(gcc)) + gcc)
    return x224_data(b'\x7f\x65' + ber_len(len(body)) + body)


def core(version, w, h, depth, layout, build, name, kbtype, kbsub, fkeys, ime, opt=b''):
    return block(0xc001, struct.pack('<IHHHHII', version, w, h, depth, 0xaa03, layout, build) +
                 utf16(name, 32) + struct.pack('<III', kbtype, kbsub, fkeys) + utf16(ime, 64) + opt)


FULL_OPT = (struct.pack('<HHIHHH', 0xca01, 1, 7, 24, 0x0f, 0x07af) +
            utf16('a1b2c3d4-0000-1111-2222-deadbeef', 64) +
            struct.pack('<BBIIIHII', 6, 0, 0, 600, 340, 90, 150, 140))

def channels(names):
    return block(0xc003, struct.pack('<I', len(names)) +
                 b''.join((n.encode() + bytes(8))[:8] + struct.pack('<I', 0x80800000) for n in names))


def mcs_connect_response():
    gcc = b'\x00\x05\x00\x14\x7c\x00\x01\x2a\x14\x76\x0a\x01\x01\x00\x01\xc0\x00' + b'McDn' + b'\x00'
    body = (b'\x0a\x01\x00' + b'\x02\x01\x00' +
            bytes.fromhex('301a020122020103020100020101020100020101020300fff8020102') +
            b'\x04' + ber_len(len(gcc)) + gcc)
    return x224_data(b'\x7f\x66' + ber_len(len(body)) + body)


def cert(serial, cn, key, issuer_cn, issuer_key):
    t = datetime.datetime(2024, 1, 1)
    c = (x509.CertificateBuilder()
         .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)]))
         .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_cn)]))
         .public_key(key.public_key()).serial_number(serial)
         .not_valid_before(t).not_valid_after(t + datetime.timedelta(days=3650))
         .sign(issuer_key, None))
    return c.public_bytes(Encoding.DER)


def hs(typ, body):
    return struct.pack('>B', typ) + struct.pack('>I', len(body))[1:] + body


def record(body):
    return struct.pack('>BHH', 0x16, 0x0303, len(body)) + body


def client_hello():
    body = (struct.pack('>H', 0x0303) + bytes(range(32)) + b'\x00' + struct.pack('>H', 4) +
            b'\xc0\x2f\x00\x2f' + b'\x01\x00')
    return record(hs(1, body))


def server_flight(chain):
    sh = struct.pack('>H', 0x0303) + bytes(range(32, 64)) + b'\x00' + b'\xc0\x2f' + b'\x00'
    certs = b''.join(struct.pack('>I', len(c))[1:] + c for c in chain)
    cm = struct.pack('>I', len(certs))[1:] + certs
    return record(hs(2, sh) + hs(11, cm) + hs(14, b''))


def main(out):
    cap = Capture()
    cli, srv = '10.0.0.1', '10.0.0.2'

    # 1. standard RDP security
    t = Tcp(cap, cli, srv, 49201, 3389)
    t.send(True, x224_cr(b'Cookie: mstshash=alice\r\n' + neg(1, 0x0b, 0)))
    t.send(False, x224_cc(neg(2, 0x1f, 0)))
    t.send(True, mcs_connect_initial([
        core(0x8000c, 1920, 1080, 0xca01, 0x409, 17763, 'WORKSTATION-7', 4, 0, 12, '', FULL_OPT),
        block(0xc002, struct.pack('<II', 0x1b, 0)),
        block(0xc004, struct.pack('<II', 0x0d, 0)),
        channels(['rdpdr', 'rdpsnd', 'drdynvc', 'cliprdr']),
    ]))
    t.send(False, mcs_connect_response())
    t.send(True, x224_data(b'\x04\x01\x00\x01\x00'))
    t.close()

    # 2. TLS
    ca_key = Ed25519PrivateKey.from_private_bytes(bytes(range(32)))
    leaf_key = Ed25519PrivateKey.from_private_bytes(bytes(range(32, 64)))
    chain = [cert(0x00f1e2d3c4b5a69788, 'rdp.example', leaf_key, 'Example CA', ca_key),
             cert(0x0a, 'Example CA', ca_key, 'Example CA', ca_key),
             b'\x30\x03\x02\x01\x01']
    t = Tcp(cap, cli, srv, 49202, 3389)
    t.send(True, x224_cr(b'Cookie: mstshash=bob\r\n' + neg(1, 0, 3)))
    t.send(False, x224_cc(neg(2, 0x01, 1)))
    t.send(True, client_hello())
    t.send(False, server_flight(chain))
    t.send(True, record(hs(16, b'\x20' + bytes(32))))
    t.close()

    # 3. negotiation failures
    t = Tcp(cap, cli, srv, 49203, 3389)
    t.send(True, x224_cr(b'Cookie: mstshash=carol\r\n' + neg(1, 0, 1)))
    t.send(False, x224_cc(neg(3, 0, 2)))
    t.send(True, x224_cr(b'Cookie: mstshash=carol\r\n' + neg(1, 0, 0)))
    t.send(False, x224_cc(neg(3, 0, 9)))
    t.close()

    # 4. not RDP on 3389
    t = Tcp(cap, cli, srv, 49204, 3389)
    t.send(True, b'\x05\x01\x00hello, this is not rdp\r\n')
    t.send(False, b'\x05\x00nope\r\n')
    t.close()

    # 5. legacy client, request split over segments
    t = Tcp(cap, cli, srv, 49205, 3389)
    t.send(True, x224_cr(b''), mss=5)
    t.send(False, x224_cc(b''))
    t.send(True, mcs_connect_initial([
        core(0x80099, 800, 600, 0xca00, 0x12345, 4242, 'OLD', 7, 2, 15, 'imekr.ime'),
        channels([]),
    ]), mss=100)
    t.send(False, mcs_connect_response())
    t.close()

    # 6. malformed TPKT after a good request
    t = Tcp(cap, cli, srv, 49206, 3389)
    t.send(True, x224_cr(b'Cookie: mstshash=dave\r\n'))
    t.send(True, b'\x03\x00\x00\x02' + x224_cr(b'Cookie: mstshash=eve\r\n'))
    t.send(False, x224_cc(neg(2, 0, 0)))
    t.close()

    # 7. truncated client core data
    t = Tcp(cap, cli, srv, 49207, 3389)
    t.send(True, x224_cr(b'Cookie: mstshash=frank\r\n' + neg(1, 0, 0)))
    t.send(False, x224_cc(neg(2, 0, 0)))
    c = core(0x80005, 1024, 768, 0xca01, 0x407, 7601, 'TRUNC', 4, 0, 12, '')
    c = c[:2] + struct.pack('<H', len(c) + 40) + c[4:]
    t.send(True, mcs_connect_initial([c]))
    t.close()

    # 8. a request not of class 0, an unknown TPKT
    t = Tcp(cap, cli, srv, 49208, 3389)
    t.send(True, x224_cr(b'Cookie: mstshash=gina\r\n', cls=0x20) +
           x224_cr(b'Cookie: mstshash=gina\r\n'))
    t.send(False, tpkt(b'\x02\x80\x00') + x224_cc(neg(2, 0x02, 8)))
    t.close()

    cap.write(out)


if __name__ == '__main__':
    main(sys.argv[1])
