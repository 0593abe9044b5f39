# Writes tests/data/dnp3-objects.pcap (python3 dnp3_objects_pcap.py dnp3-objects.pcap):
# four DNP3 sessions over TCP with the object types Suricata decodes (flags, counters,
# analogs as integers and floats, times, packed states with and without a prefix, size
# prefixes; file transfer, data sets and secure authentication with their strings and
# octet strings), segmented messages, a confirm, an unsolicited response, unknown and
# short objects, lengths refused, a reserved range and too many points; and every
# fixed-size type once in a request and once in a response.
# dnp3-objects.dnp3.json holds, by client port, the `dnp3` records Suricata 8.0.6 writes
# for it: python3 dnp3_objects_ref.py dnp3-objects.pcap dnp3-objects.dnp3.json (runs
# ../shared/tools/suricata-ref -k none, with app-layer.protocols.dnp3.enabled=yes,
# max-points=100 and `dnp3` in the eve-log types).
import struct, sys

def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return (~s) & 0xffff

def tcp_pkt(src, dst, sp, dp, seq, ack, flags, payload=b''):
    tcp = struct.pack('!HHIIBBHHH', sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    ph = bytes(src) + bytes(dst) + struct.pack('!BBH', 0, 6, len(tcp))
    c = csum(ph + tcp); tcp = tcp[:16] + struct.pack('!H', c) + tcp[18:]
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 1, 0, 64, 6, 0, bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return b'\x00' * 12 + b'\x08\x00' + ip + tcp

FLAGS = {'S': 0x02, 'SA': 0x12, 'A': 0x10, 'PA': 0x18, 'FA': 0x11}

class Tcp:
    def __init__(self, sport=40000, dport=20000):
        self.sport, self.dport = sport, dport
        self.cseq, self.sseq = 1000, 5000
        self.pkts = []
        self.t = 1700000000.0 + sport
        self.add(True, b'', 'S'); self.cseq += 1
        self.add(False, b'', 'SA'); self.sseq += 1
        self.add(True, b'', 'A')
    def add(self, to_server, data, flags='PA'):
        self.t += 0.001
        C, S = [10, 0, 0, 1], [10, 0, 0, 2]
        if to_server:
            p = tcp_pkt(C, S, self.sport, self.dport, self.cseq, self.sseq, FLAGS[flags], data)
            self.cseq += len(data)
        else:
            p = tcp_pkt(S, C, self.dport, self.sport, self.sseq, self.cseq, FLAGS[flags], data)
            self.sseq += len(data)
        self.pkts.append((self.t, p))
    def send(self, to_server, data):
        self.add(to_server, data)
        self.add(not to_server, b'', 'A')
    def close(self):
        self.add(True, b'', 'FA'); self.cseq += 1
        self.add(False, b'', 'FA'); self.sseq += 1
        self.add(True, b'', 'A')
        return self.pkts

def wrpcap(path, pkts):
    with open(path, 'wb') as f:
        f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
        for t, p in pkts:
            f.write(struct.pack('<IIII', int(t), int(round((t % 1) * 1e6)), len(p), len(p)) + p)

def crc(data):
    c = 0
    for b in data:
        c ^= b
        for _ in range(8):
            c = (c >> 1) ^ 0xa6bc if c & 1 else c >> 1
    return (~c) & 0xffff

def frame(control, dst, src, user, badlink=False, badblock=False):
    h = bytes([0x05, 0x64, len(user) + 5, control]) + struct.pack('<HH', dst, src)
    c = crc(h) ^ (0xffff if badlink else 0)
    f = h + struct.pack('<H', c)
    for i in range(0, len(user), 16):
        b = user[i:i+16]
        c = crc(b) ^ (0xffff if badblock else 0)
        f += b + struct.pack('<H', c)
    return f

def segments(control, dst, src, app, tseq=0, size=249):
    """An application message cut into transport segments."""
    out = []
    chunks = [app[i:i+size] for i in range(0, len(app), size)] or [b'']
    for i, ch in enumerate(chunks):
        th = ((tseq + i) % 64) | (0x40 if i == 0 else 0) | (0x80 if i == len(chunks) - 1 else 0)
        out.append(frame(control, dst, src, bytes([th]) + ch))
    return out

def req(fc, objs, seq=0, tseq=0, uns=False):
    ac = 0xc0 | (seq & 0xf) | (0x10 if uns else 0)
    return segments(0xc4, 10, 1, bytes([ac, fc]) + objs, tseq)

def resp(fc, iin, objs, seq=0, tseq=0, uns=False):
    ac = 0xc0 | (seq & 0xf) | (0x30 if uns else 0)
    return segments(0x44, 1, 10, bytes([ac, fc]) + struct.pack('>H', iin) + objs, tseq)

def obj(g, v, q, rng, body=b''):
    return bytes([g, v, q]) + rng + body

def r8(a, b): return bytes([a, b])
def r16(a, b): return struct.pack('<HH', a, b)
def c8(n): return bytes([n])
def c16(n): return struct.pack('<H', n)

flag = 0x01
pts = {}
# 1. Many object types in responses.
objs = [
  obj(1, 1, 0x00, r8(0, 9), bytes([0b10110101, 0b01])),
  obj(1, 2, 0x00, r8(0, 1), bytes([0x81, 0x02])),
  obj(2, 2, 0x17, c8(1), bytes([3, 0x81]) + (123456789).to_bytes(6, 'little')),
  # 5 two-bit states in `5 / 8 + 1` bytes: Suricata reads one, so 4 points.
  obj(3, 1, 0x00, r8(0, 4), bytes([0b11100100])),
  obj(4, 3, 0x28, c16(1), struct.pack('<H', 7) + bytes([0x41]) + struct.pack('<H', 500)),
  obj(10, 2, 0x00, r8(2, 3), bytes([0x81, 0x01])),
  obj(12, 1, 0x28, c16(1), struct.pack('<H', 3) + bytes([0x41, 1]) + struct.pack('<II', 1000, 2000) + bytes([0x84])),
  obj(13, 2, 0x17, c8(1), bytes([0]) + bytes([0x85]) + (99).to_bytes(6, 'little')),
  obj(20, 1, 0x01, r16(0, 1), bytes([0x41]) + struct.pack('<I', 4000000000) + bytes([0x01]) + struct.pack('<I', 1)),
  obj(21, 9, 0x00, r8(0, 0), struct.pack('<I', 77)),
  obj(22, 5, 0x28, c16(1), struct.pack('<H', 9) + bytes([0x21]) + struct.pack('<I', 5) + (1234).to_bytes(6, 'little')),
  obj(23, 6, 0x17, c8(1), bytes([2, 0x41]) + struct.pack('<H', 6) + (42).to_bytes(6, 'little')),
  obj(30, 1, 0x00, r8(0, 1), bytes([0x01]) + struct.pack('<i', -5) + bytes([0x41]) + struct.pack('<i', 2147483647)),
  obj(30, 2, 0x00, r8(0, 0), bytes([0x01]) + struct.pack('<h', -300)),
  obj(30, 3, 0x00, r8(0, 0), struct.pack('<i', -7)),
  obj(30, 5, 0x00, r8(0, 2), bytes([1]) + struct.pack('<f', 1.1) + bytes([1]) + struct.pack('<f', -2.5) + bytes([1]) + struct.pack('<f', 1e20)),
  obj(30, 6, 0x00, r8(0, 1), bytes([1]) + struct.pack('<d', 3.141592653589793) + bytes([1]) + struct.pack('<d', 1e-7)),
  obj(32, 7, 0x28, c16(1), struct.pack('<H', 1) + bytes([1]) + struct.pack('<f', 0.1) + (5).to_bytes(6, 'little')),
  obj(34, 3, 0x00, r8(0, 0), struct.pack('<f', 0.5)),
  obj(40, 4, 0x00, r8(0, 0), bytes([1]) + struct.pack('<d', -0.0)),
  obj(41, 2, 0x17, c8(1), bytes([4]) + struct.pack('<h', -2) + bytes([0])),
  obj(42, 8, 0x17, c8(1), bytes([4, 1]) + struct.pack('<d', 12.25) + (1).to_bytes(6, 'little')),
  obj(43, 1, 0x17, c8(1), bytes([4, 0x83]) + struct.pack('<i', 3)),
  obj(50, 1, 0x07, c8(1), (1700000000123).to_bytes(6, 'little')),
  obj(50, 4, 0x07, c8(1), (1700000000123).to_bytes(6, 'little') + struct.pack('<I', 60) + bytes([5])),
  obj(51, 1, 0x07, c8(1), (1700000000000).to_bytes(6, 'little')),
  obj(52, 2, 0x07, c8(1), struct.pack('<H', 250)),
  obj(80, 1, 0x00, r8(7, 7), bytes([0])),
  obj(81, 1, 0x07, c8(1), bytes([0x85, 32, 1])),
  obj(86, 2, 0x00, r8(0, 0), bytes([0x1f])),
  obj(102, 1, 0x00, r8(0, 1), bytes([9, 200])),
  obj(120, 4, 0x07, c8(1), struct.pack('<H', 1)),
  obj(121, 1, 0x00, r8(0, 0), bytes([1]) + struct.pack('<HI', 2, 3)),
  obj(122, 2, 0x00, r8(0, 0), bytes([1]) + struct.pack('<HI', 2, 3) + (9).to_bytes(6, 'little')),
  obj(11, 2, 0x28, c16(1), struct.pack('<H', 4) + bytes([0x81]) + (8).to_bytes(6, 'little')),
  obj(3, 2, 0x00, r8(0, 0), bytes([0xc1])),
  obj(31, 8, 0x00, r8(0, 0), bytes([1]) + struct.pack('<d', 2.0)),
  obj(33, 5, 0x00, r8(0, 0), bytes([1]) + struct.pack('<f', 3.0)),
]
t = Tcp(40000)
t.send(True, b''.join(req(1, obj(60, 1, 0x06, b''), seq=1)))
t.send(False, b''.join(resp(129, 0x9012, b''.join(objs), seq=1)))
# Multi-segment request and a confirm, unsolicited, write.
t.send(True, b''.join(req(2, obj(50, 1, 0x07, c8(1), (1700000000999).to_bytes(6, 'little')), seq=2)))
t.send(False, b''.join(resp(129, 0, b'', seq=2)))
t.send(True, b''.join(req(0, b'', seq=2)))
t.send(False, b''.join(resp(130, 0x0100, obj(2, 1, 0x28, c16(1), struct.pack('<H', 0) + bytes([0x81])), seq=3, uns=True)))
big = b''.join(obj(60, 1, 0x06, b'') for _ in range(300))
for s in req(1, big, seq=3, tseq=5):
    t.send(True, s)
t.send(False, b''.join(resp(129, 0x0002, b'', seq=3)))
# Object with a size prefix (prefix code 5 on 30.1).
t.send(True, b''.join(req(2, obj(30, 1, 0x5b, c8(1), struct.pack('<H', 5) + bytes([1]) + struct.pack('<i', 11)), seq=4)))
# Unknown object then a known one.
t.send(True, b''.join(req(2, obj(110, 4, 0x00, r8(0, 0), b'abcd') + obj(1, 1, 0, r8(0, 0), b'\x01'), seq=5)))
# Malformed: points cut short.
t.send(True, b''.join(req(2, obj(30, 1, 0x00, r8(0, 3), b'\x01\x02'), seq=6)))
# Reserved range code.
t.send(True, b''.join(req(1, obj(30, 1, 0x0a, b'', b''), seq=7)))
# Read with count-qualified 60.2.
t.send(True, b''.join(req(1, obj(60, 2, 0x07, c8(5)), seq=8)))
# Direct operate CROB.
t.send(True, b''.join(req(5, obj(12, 1, 0x17, c8(1), bytes([0, 0x03, 1]) + struct.pack('<II', 100, 0) + bytes([0])), seq=9)))
t.send(False, b''.join(resp(129, 0, obj(12, 1, 0x17, c8(1), bytes([0, 0x03, 1]) + struct.pack('<II', 100, 0) + bytes([0])), seq=9)))
pkts = t.close()

# Points per message: two objects of 60 points (1.1, Suricata's byte count), over a
# max-points of 100.
t = Tcp(40060)
body = b'\x00' * (60 // 8 + 1)
t.send(True, b''.join(req(2, obj(1, 1, 0x01, r16(0, 59), body) + obj(1, 1, 0x01, r16(0, 59), body), seq=0)))
# Packed with a prefix code, and count a multiple of 8.
t.send(True, b''.join(req(2, obj(1, 1, 0x17, c8(8), bytes([5, 0xff, 0x00])) + obj(60, 1, 6, b''), seq=1)))
# Size prefix on a fixed object.
t.send(True, b''.join(req(2, obj(30, 1, 0x5b, c8(1), struct.pack('<H', 5) + bytes([1]) + struct.pack('<i', 11)), seq=2)))
t.send(True, b''.join(req(2, obj(12, 1, 0x5b, c8(2), (struct.pack('<H', 11) + bytes([0x41, 1]) + struct.pack('<II', 1000, 2000) + bytes([0x84]))*2), seq=3)))
pkts += t.close()

# File transfer (70), data sets (83), secure authentication (120): the variable-length
# objects, with size prefixes (qualifier 0x5b: 2-byte size, 1-byte count), their lengths
# in fields or given by the prefix, and the lengths Suricata refuses.
t = Tcp(40100)
ts6 = lambda v: v.to_bytes(6, 'little')
def sized(body, n=2):
    return struct.pack('<H' if n == 2 else '<I', len(body)) + body
def pair(seq, robjs, sobjs=None):
    t.send(True, b''.join(req(2 if sobjs is None else 25, robjs, seq=seq)))
    t.send(False, b''.join(resp(129, 0, sobjs or b'', seq=seq)))
g70v1 = (struct.pack('<HBBHHI', 5, 1, 2, 3, 4, 1000) + ts6(1700000000001) + struct.pack('<HIIIBB', 0o755, 7, 8, 9, 1, 0)
         + b'a.txt' + struct.pack('<H', 3) + b'xyz')
g70v2 = struct.pack('<HHHHI', 16, 4, 20, 6, 0xdeadbeef) + b'user' + b'secret'
g70v3 = (struct.pack('<HH', 30, 7) + ts6(1700000000002) + struct.pack('<HIIHHH', 0o644, 0x1234, 4096, 1, 1024, 77)
         + 'f\u00e9.bin'.encode())
g70v4 = struct.pack('<IIHHB', 0x11, 2048, 512, 78, 0) + b'ok'
g70v5 = struct.pack('<II', 0x11, 0x80000001) + b'hello\x00wor\xffld"\\\n'
g70v6 = struct.pack('<IIB', 0x11, 2, 0) + b'done'
g70v7 = struct.pack('<HHHI', 20, 3, 1, 99) + ts6(1700000000003) + struct.pack('<HH', 0o600, 79) + b'dir'
g70v8 = b'/var/log/x.log'
pair(0, obj(70, 1, 0x5b, c8(1), sized(g70v1)) + obj(70, 2, 0x5b, c8(1), sized(g70v2)))
pair(1, obj(70, 3, 0x5b, c8(1), sized(g70v3)), obj(70, 4, 0x5b, c8(2), sized(g70v4) + sized(g70v4[:13])))
pair(2, obj(70, 5, 0x5b, c8(1), sized(g70v5)) + obj(70, 6, 0x5b, c8(1), sized(g70v6)))
pair(3, obj(70, 7, 0x5b, c8(1), sized(g70v7)) + obj(70, 8, 0x5b, c8(1), sized(g70v8)))
# 70.4 with a 4-byte size prefix, 70.5 with a 1-byte one and a range.
pair(4, obj(70, 4, 0x6b, c8(1), sized(g70v4, 4)) + obj(70, 5, 0x40, r8(3, 3), bytes([8 + 1]) + struct.pack('<II', 1, 2) + b'z'))
g83 = b'ABCD' + struct.pack('<HH', 5, 3) + b'\x01\x02\xff'
g83z = b'A\x00CD' + struct.pack('<HH', 6, 0)
pair(5, obj(83, 1, 0x5b, c8(2), sized(g83) + sized(g83z)))
a1 = struct.pack('<IHBB', 1, 2, 3, 4) + b'\x10\x20\x30\x40'
a2 = struct.pack('<IH', 5, 6) + b'\xaa\xbb\xcc'
a5 = struct.pack('<IHBBBH', 7, 8, 2, 1, 4, 3) + b'abc' + b'\x01\x02\x03\x04\x05'
a6 = struct.pack('<I', 9)[:3] + struct.pack('<H', 10) + b'\x00' * 5
a7 = struct.pack('<IHHB', 11, 12, 13, 1) + ts6(1700000000004) + b'bad mac'
a8 = struct.pack('<BB', 1, 2) + b'CERT'
a9 = b'\xde\xad'
a10 = (struct.pack('<BBIHHHHH', 1, 2, 14, 15, 16, 5, 2, 1) + b'alice' + b'\x0a\x0b' + b'\x0c')
a11 = struct.pack('<BHH', 1, 3, 2) + b'bob' + b'\x99\x98'
a12 = struct.pack('<IHH', 17, 18, 2) + b'\x01\x02'
a13 = struct.pack('<IHH', 19, 20, 3) + b'key'
a14 = b'SIG!'
a15 = b'\x00\x01\x02'
pair(6, obj(120, 1, 0x5b, c8(1), sized(a1)), obj(120, 2, 0x5b, c8(1), sized(a2)))
pair(7, obj(120, 5, 0x5b, c8(1), sized(a5)) + obj(120, 6, 0x5b, c8(1), sized(a6)) + obj(120, 7, 0x5b, c8(1), sized(a7)))
pair(8, obj(120, 8, 0x5b, c8(1), sized(a8)) + obj(120, 9, 0x5b, c8(1), sized(a9)) + obj(120, 10, 0x5b, c8(1), sized(a10)))
pair(9, obj(120, 11, 0x5b, c8(1), sized(a11)) + obj(120, 12, 0x5b, c8(1), sized(a12)) + obj(120, 13, 0x5b, c8(1), sized(a13)))
pair(10, obj(120, 14, 0x5b, c8(1), sized(a14)) + obj(120, 15, 0x5b, c8(1), sized(a15)) + obj(120, 3, 0x07, c8(1), struct.pack('<IH', 21, 22)))
# 120.9 without a prefix (no length: empty MACs), and with a 4-byte index prefix taken
# as its length (cut to 16 bits).
pair(11, obj(120, 9, 0x07, c8(2)) + obj(120, 9, 0x39, struct.pack('<I', 1), struct.pack('<I', 0x10002) + b'\x07\x08'))
# Refused: 70.4 without a size prefix; a size smaller than the fixed fields; text of 255
# bytes; 120.1 with a 1-byte size; a filename longer than the message; 83.1 cut short.
t.send(True, b''.join(req(2, obj(70, 4, 0x07, c8(1), g70v4), seq=12)))
t.send(True, b''.join(req(2, obj(70, 4, 0x5b, c8(1), struct.pack('<H', 5) + g70v4), seq=13)))
t.send(True, b''.join(req(2, obj(70, 5, 0x5b, c8(1), sized(struct.pack('<II', 1, 1) + b'x' * 255)), seq=14)))
t.send(True, b''.join(req(2, obj(70, 5, 0x5b, c8(1), sized(struct.pack('<II', 1, 1) + b'x' * 254)), seq=15)))
t.send(True, b''.join(req(2, obj(120, 1, 0x4b, c8(1), bytes([len(a1)]) + a1), seq=0)))
t.send(False, b''.join(resp(129, 0, b'', seq=0)))
t.send(True, b''.join(req(2, obj(70, 3, 0x5b, c8(1), sized(g70v3)[:-2]), seq=1)))
t.send(True, b''.join(req(2, obj(83, 1, 0x5b, c8(1), sized(g83)[:-1]), seq=2)))
t.send(False, b''.join(resp(129, 0, b'', seq=2)))
# Not decoded by Suricata either: device attributes (0), octet strings (110), virtual
# terminal (112), data sets (86.1, 87, 88).
t.send(True, b''.join(req(2, obj(0, 240, 0x5b, c8(1), sized(b'\x01\x02')), seq=3)))
t.send(True, b''.join(req(2, obj(112, 3, 0x5b, c8(1), sized(b'abc')), seq=4)))
t.send(True, b''.join(req(2, obj(87, 1, 0x5b, c8(1), sized(b'abc')), seq=5)))
t.send(False, b''.join(resp(129, 0, obj(111, 3, 0x17, c8(1), b'\x00abc') + obj(88, 1, 0x5b, c8(1), sized(b'ab')), seq=5)))
# Fixed types: prefix code 7 reads no prefix; fewer bytes than count / 8 decode no point.
t.send(True, b''.join(req(2, obj(30, 1, 0x70, r8(0, 0), bytes([1]) + struct.pack('<i', 5)), seq=6)))
t.send(True, b''.join(req(2, obj(30, 1, 0x08, c16(96), (bytes([1]) + struct.pack('<i', 5)) * 2), seq=7)))
t.send(False, b''.join(resp(129, 0, b'', seq=7)))
pkts += t.close()

# Every fixed-size type of Suricata's table, one point each (1-byte count, 1-byte index
# prefix) of a byte pattern: 0x3c in the request, 0xbc (negative values, high bits) in
# its response. The bytes left after the point read as an object of a reserved range
# code, which ends the decoding quietly.
t = Tcp(40200)
variations = {1: 2, 2: 3, 3: 2, 4: 3, 10: 2, 11: 2, 12: 3, 13: 2, 20: 8, 21: 12, 22: 8,
              23: 8, 30: 6, 31: 8, 32: 8, 33: 8, 34: 3, 40: 4, 41: 4, 42: 8, 43: 8, 50: 4,
              51: 2, 52: 2, 80: 1, 81: 1, 86: 2, 102: 1, 121: 1, 122: 2}
n = 0
for g, vs in variations.items():
    for v in range(1, vs + 1):
        if (g, v) == (86, 1):
            continue
        t.send(True, b''.join(req(2, obj(g, v, 0x17, c8(1), bytes([5]) + bytes([0x3c]) * 20), seq=n)))
        t.send(False, b''.join(resp(129, 0, obj(g, v, 0x17, c8(1), bytes([6]) + bytes([0xbc]) * 20), seq=n)))
        n += 1
pkts += t.close()
wrpcap(sys.argv[1], pkts)
