# Writes tests/data/websocket-crafted.pcap (python3 websocket_crafted_pcap.py OUT.pcap):
# HTTP/1.1 connections that upgrade to WebSocket (101 Switching Protocols) and one that
# asks and is refused, with frames of every kind:
#  1. port 41001: masked client text, unmasked server text, binary, a fragmented text
#     message (text fin=0, a ping between, continuation fin=1), pong, close, an unknown
#     opcode (3) and a frame with RSV2 set;
#  2. port 41002: permessage-deflate negotiated, compressed messages (RSV1) one way and
#     the other, one of them fragmented;
#  3. port 41003: a frame longer than max-payload-size (65535) and a fragmented message
#     longer than it, then a frame after them;
#  4. port 41004: a frame announcing 2^63-1 bytes (127 + 64-bit length);
#  5. port 41005: an upgrade request answered 200 (no switch): the next request is HTTP;
#  6. port 41006: the client sends its first frame right behind its request, before the
#     server's 101 (the same segment);
#  7. port 41007: HTTP CONNECT answered 200 then a TLS client hello inside.
# websocket-crafted.websocket.json holds the `websocket` records and the alerts Suricata
# 8.0.6 writes for it (tests/data/eve_ref_records.py EVE websocket OUT --alert-objects).
import struct, sys, zlib

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
MSS = 1400

class Tcp:
    def __init__(self, sport, dport=80):
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
        for i in range(0, len(data), MSS):
            self.add(to_server, data[i:i + MSS])
            # Acknowledged every 16 segments: within the 64 KiB window.
            if (i // MSS) % 16 == 15:
                self.add(not to_server, b'', 'A')
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

def ws(opcode, payload, fin=True, mask=None, rsv=0, length=None):
    """A WebSocket frame (RFC 6455 section 5.2); `length` overrides the announced one."""
    b0 = (0x80 if fin else 0) | (rsv << 4) | opcode
    n = len(payload) if length is None else length
    m = 0x80 if mask is not None else 0
    if n < 126:
        h = bytes([b0, m | n])
    elif n < 65536:
        h = bytes([b0, m | 126]) + struct.pack('!H', n)
    else:
        h = bytes([b0, m | 127]) + struct.pack('!Q', n)
    if mask is not None:
        k = struct.pack('!I', mask)
        h += k
        payload = bytes(c ^ k[i % 4] for i, c in enumerate(payload))
    return h + payload

def deflate(data):
    """permessage-deflate (RFC 7692 7.2.1): raw deflate, the final 00 00 ff ff cut."""
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    out = c.compress(data) + c.flush(zlib.Z_SYNC_FLUSH)
    assert out.endswith(b'\x00\x00\xff\xff')
    return out[:-4]

def upgrade(ext=b''):
    return (b'GET /chat HTTP/1.1\r\nHost: example.com\r\nUpgrade: websocket\r\n'
            b'Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n'
            + ext + b'Sec-WebSocket-Version: 13\r\n\r\n')

def switching(ext=b''):
    return (b'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n'
            b'Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n' + ext + b'\r\n')

def main():
    pkts = []

    # 1. Every kind of frame.
    s = Tcp(41001)
    s.send(True, upgrade())
    s.send(False, switching())
    s.send(True, ws(1, b'hello server MARKER-TEXT', mask=0x01020304))
    s.send(False, ws(1, b'hello client'))
    s.send(True, ws(2, b'\x00\x01binary\xff', mask=0x0a0b0c0d))
    s.send(True, ws(1, b'first half ', fin=False, mask=0x11223344))
    s.send(True, ws(9, b'ping!', mask=0x55667788))
    s.send(False, ws(10, b'ping!'))
    s.send(True, ws(0, b'second half FRAGMENTED', mask=0x99aabbcc))
    s.send(True, ws(3, b'reserved opcode', mask=0x01010101))
    s.send(True, ws(1, b'rsv2 set', mask=0x02020202, rsv=2))
    s.send(False, ws(8, b'\x03\xe8bye'))
    s.send(True, ws(8, b'\x03\xe8', mask=0x03030303))
    pkts += s.close()

    # 2. permessage-deflate.
    ext = b'Sec-WebSocket-Extensions: permessage-deflate\r\n'
    s = Tcp(41002)
    s.send(True, upgrade(ext))
    s.send(False, switching(ext))
    s.send(True, ws(1, deflate(b'compressed COMPRESSED-REQUEST compressed'), mask=0x0f0f0f0f, rsv=4))
    s.send(False, ws(1, deflate(b'compressed COMPRESSED-RESPONSE compressed'), rsv=4))
    z = deflate(b'a fragmented compressed message FRAG-COMPRESSED end')
    s.send(False, ws(1, z[:10], fin=False, rsv=4))
    s.send(False, ws(0, z[10:]))
    s.send(True, ws(1, b'not compressed', mask=0x0f0f0f0f))
    pkts += s.close()

    # 3. Beyond max-payload-size.
    s = Tcp(41003)
    s.send(True, upgrade())
    s.send(False, switching())
    s.send(False, ws(2, b'A' * 70000 + b'TAIL-OF-LONG'))
    s.send(False, ws(1, b'B' * 40000, fin=False))
    s.send(False, ws(0, b'C' * 40000 + b'TAIL-OF-FRAGMENTS'))
    s.send(False, ws(1, b'after the long ones AFTER-LONG'))
    pkts += s.close()

    # 4. 2^63 - 1 bytes announced.
    s = Tcp(41004)
    s.send(True, upgrade())
    s.send(False, switching())
    s.send(True, ws(1, b'short', mask=0x01020304))
    s.send(True, ws(2, b'endless' * 100, mask=0x01020304, length=(1 << 63) - 1))
    pkts += s.close()

    # 5. Refused upgrade: the connection stays HTTP.
    s = Tcp(41005)
    s.send(True, upgrade())
    s.send(False, b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
    s.send(True, b'GET /second HTTP/1.1\r\nHost: example.com\r\n\r\n')
    s.send(False, b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
    pkts += s.close()

    # 6. The first frame right behind the request.
    s = Tcp(41006)
    s.send(True, upgrade() + ws(1, b'early frame EARLY', mask=0x0badf00d))
    s.send(False, switching() + ws(1, b'server right behind its 101 BEHIND-101'))
    s.send(True, ws(1, b'later frame', mask=0x0badf00d))
    pkts += s.close()

    # 7. CONNECT, then TLS inside.
    s = Tcp(41007, 3128)
    s.send(True, b'CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n')
    s.send(False, b'HTTP/1.1 200 Connection established\r\n\r\n')
    def ext(t, data):
        return struct.pack('!HH', t, len(data)) + data
    sni = b'example.com'
    exts = ext(0, struct.pack('!HBH', len(sni) + 3, 0, len(sni)) + sni) + ext(10, bytes.fromhex('0004001d0017')) + ext(13, bytes.fromhex('000404030804'))
    suites = bytes.fromhex('c02bc02f009c002f')
    body = (b'\x03\x03' + b'\x11' * 32 + b'\x00' + struct.pack('!H', len(suites)) + suites
            + b'\x01\x00' + struct.pack('!H', len(exts)) + exts)
    hs = b'\x01' + struct.pack('!I', len(body))[1:] + body
    hello = b'\x16\x03\x01' + struct.pack('!H', len(hs)) + hs
    s.send(True, hello)
    pkts += s.close()
    wrpcap(sys.argv[1], pkts)


if __name__ == '__main__':
    main()
