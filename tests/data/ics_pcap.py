# Writes tests/data/ics.pcap (python3 ics_pcap.py ics.pcap): Modbus/TCP sessions on
# port 502 (every read and write function, masks, diagnostics, MEI, exceptions, an
# unknown function, a bad protocol id and length, an unsolicited response, pipelined
# requests) and EtherNet/IP sessions on TCP 44818 (RegisterSession, ListServices,
# ListIdentity, SendRRData with a Multiple Service Packet, a CIP error with extended
# status, a bad path) and one ENIP exchange on UDP 44818. ics.modbus.json and
# ics.enip.json hold the records Suricata 8.0.6 (../shared/tools/suricata-ref -k none,
# modbus and enip enabled and logged) writes for it.
import struct, sys

def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return (~s) & 0xffff

def ip4(src, dst, proto, l4):
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(l4), 1, 0, 64, proto, 0, bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return b'\x00' * 12 + b'\x08\x00' + ip + l4

def tcp(src, dst, sp, dp, seq, ack, flags, payload=b''):
    t = struct.pack('!HHIIBBHHH', sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    ph = bytes(src) + bytes(dst) + struct.pack('!BBH', 0, 6, len(t))
    c = csum(ph + t); t = t[:16] + struct.pack('!H', c) + t[18:]
    return ip4(src, dst, 6, t)

def udp(src, dst, sp, dp, payload):
    u = struct.pack('!HHHH', sp, dp, 8 + len(payload), 0) + payload
    return ip4(src, dst, 17, u)

out = []

def session(C, S, cp, sp, msgs):
    cs, ss = 1000, 5000
    out.append(tcp(C, S, cp, sp, cs, 0, 0x02)); out.append(tcp(S, C, sp, cp, ss, cs + 1, 0x12)); cs += 1; ss += 1
    out.append(tcp(C, S, cp, sp, cs, ss, 0x10))
    for d, m in msgs:
        if d == 'c':
            out.append(tcp(C, S, cp, sp, cs, ss, 0x18, m)); cs += len(m); out.append(tcp(S, C, sp, cp, ss, cs, 0x10))
        else:
            out.append(tcp(S, C, sp, cp, ss, cs, 0x18, m)); ss += len(m); out.append(tcp(C, S, cp, sp, cs, ss, 0x10))
    out.append(tcp(C, S, cp, sp, cs, ss, 0x11)); cs += 1
    out.append(tcp(S, C, sp, cp, ss, cs, 0x11)); ss += 1
    out.append(tcp(C, S, cp, sp, cs, ss, 0x10))

def mb(tid, unit, pdu, proto=0, length=None):
    return struct.pack('!HHH', tid, proto, len(pdu) + 1 if length is None else length) + bytes([unit]) + pdu

H = lambda s: bytes.fromhex(s.replace(' ', ''))
C = [10, 0, 0, 1]; S = [10, 0, 0, 2]
session(C, S, 40001, 502, [
    ('c', mb(1, 1, H('01 0000 0010'))), ('s', mb(1, 1, H('01 02 cd 01'))),
    ('c', mb(2, 1, H('02 0010 0008'))), ('s', mb(2, 1, H('02 01 ff'))),
    ('c', mb(3, 1, H('03 0005 0002'))), ('s', mb(3, 1, H('03 04 0009 0018'))),
    ('c', mb(4, 1, H('04 0001 0001'))), ('s', mb(4, 1, H('04 02 1234'))),
    ('c', mb(5, 1, H('05 0002 ff00'))), ('s', mb(5, 1, H('05 0002 ff00'))),
    ('c', mb(6, 1, H('06 0005 000b'))), ('s', mb(6, 1, H('06 0005 000c'))),
    ('c', mb(7, 1, H('0f 0013 000a 02 cd01'))), ('s', mb(7, 1, H('0f 0013 000a'))),
    ('c', mb(8, 1, H('10 0001 0002 04 000a 0102'))), ('s', mb(8, 1, H('10 0001 0002'))),
    ('c', mb(9, 1, H('16 0004 00f2 0025'))), ('s', mb(9, 1, H('16 0004 00f2 0025'))),
    ('c', mb(10, 1, H('17 0003 0006 000e 0003 06 00ff 00ff 00ff'))), ('s', mb(10, 1, H('17 0c 0000 0001 0002 0003 0004 0005'))),
    ('c', mb(11, 1, H('08 0000 a537'))), ('s', mb(11, 1, H('08 0000 a537'))),
    ('c', mb(12, 1, H('08 0001 1200'))), ('s', mb(12, 1, H('88 03'))),
    ('c', mb(13, 1, H('2b 0e 01 00'))), ('s', mb(13, 1, H('2b 0e 01 01 00 00 01 00 03 41 42 43'))),
    ('c', mb(14, 1, H('07'))), ('s', mb(14, 1, H('07 6d'))),
    ('c', mb(15, 1, H('64 0102'))), ('s', mb(15, 1, H('e4 01'))),
    ('c', mb(16, 1, H('01 0000 0000'))), ('s', mb(16, 1, H('81 02'))),
    ('c', mb(17, 1, H('03 0000 0001'), proto=1)),
    ('c', mb(18, 1, H('03 0000'))),
    ('s', mb(99, 1, H('03 02 0000'))),
    ('c', mb(20, 2, H('03 0000 0001')) + mb(21, 2, H('03 0001 0001'))),
    ('s', mb(21, 2, H('03 02 0001')) + mb(20, 2, H('03 02 0000'))),
    ('c', mb(22, 3, H('06 0001 0002'), length=300)),
])

def encap(cmd, data, session=0, status=0, context=0, options=0):
    return struct.pack('<HHIIQI', cmd, len(data), session, status, context, options) + data

def cpf(items):
    return struct.pack('<H', len(items)) + b''.join(struct.pack('<HH', t, len(d)) + d for t, d in items)

def rr(cip, session=0x11223344, timeout=5):
    return encap(0x6f, struct.pack('<IH', 0, timeout) + cpf([(0, b''), (0xb2, cip)]), session)

def unit(seq, cip, session=0x11223344, conn=0x1000):
    return encap(0x70, struct.pack('<IH', 0, 0) + cpf([(0xa1, struct.pack('<I', conn)), (0xb1, struct.pack('<H', seq) + cip)]), session)

get_attrs = H('03 02 20 01 24 01 03 00 01 00 07 00 08 00')
get_single = H('0e 03 20 f5 24 01 30 05')
multi = H('0a 02 20 02 24 01') + struct.pack('<HHH', 2, 6, 6 + len(get_attrs)) + get_attrs + get_single
multi_resp = H('8a 00 00 00') + struct.pack('<HHH', 2, 6, 10) + H('83 00 00 00 0100') + H('8e 00 00 00 01 02 03')
identity = (struct.pack('<H', 1) + H('0002af12c0a80164 0000000000000000') + struct.pack('<HHHBBHI', 40, 12, 99, 2, 7, 0x0031, 0xdeadbeef)
            + bytes([9]) + b'Test ENIP' + bytes([3]))
C2 = [10, 0, 1, 1]; S2 = [10, 0, 1, 2]
session(C2, S2, 40002, 44818, [
    ('c', encap(0x65, struct.pack('<HH', 1, 0))), ('s', encap(0x65, struct.pack('<HH', 1, 0), session=0x11223344)),
    ('c', encap(0x04, b'', 0x11223344)), ('s', encap(0x04, cpf([(0x100, struct.pack('<HH', 1, 0x120) + b'Communications\0\0')]), 0x11223344)),
    ('c', encap(0x63, b'', 0x11223344)), ('s', encap(0x63, cpf([(0x0c, identity)]), 0x11223344)),
    ('c', rr(get_attrs)), ('s', rr(H('83 00 00 00 0300 0100 0000'), timeout=0)),
    ('c', rr(multi)), ('s', rr(multi_resp, timeout=0)),
    ('c', rr(H('54 02 20 06 24 01 0a 0e'))), ('s', rr(H('d4 00 01 01 0001'), timeout=0)),
    ('c', rr(H('4c 02 91 03 41 42 43 00'))), ('s', rr(H('cc 00 05 00'), timeout=0)),
    ('c', unit(7, get_single)), ('s', unit(7, H('8e 00 00 00 12 34'), conn=0x2000)),
    ('c', encap(0x01, b'', 0x11223344)),
    ('c', encap(0x66, b'', 0x11223344, options=1)),
])
out.append(udp([10, 0, 2, 1], [10, 0, 2, 2], 50000, 44818, encap(0x63, b'')))
out.append(udp([10, 0, 2, 2], [10, 0, 2, 1], 44818, 50000, encap(0x63, cpf([(0x0c, identity)]))))
f = open(sys.argv[1], 'wb'); f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
for i, p in enumerate(out):
    f.write(struct.pack('<IIII', 1700000000 + i, 0, len(p), len(p)) + p)
