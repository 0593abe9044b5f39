#!/usr/bin/env python3
"""Deterministic HTTP/1.1 and HTTP/2 benchmark pcaps carrying the same exchanges.

    bench/gen-http2.py [--seed N] [--size MB] [--h1 OUT.pcap] [--h2 OUT.pcap]
    bench/gen-http2.py [--seed N] --size MB --merge BASE.pcap --h2 OUT.pcap

Standard library only (no network, no PyPI). The exchanges come from `--seed` alone:
GET and POST (form and JSON bodies), 200/301/304/404 answers, HTML, JSON, CSS,
JavaScript and binary (image, zip) bodies from a few bytes to a few hundred KB, realistic
request and response headers (user agents, cookies, caches, dates, ETags), 1 to 12
exchanges per connection. `--h1` writes them as HTTP/1.1 keep-alive connections
(`Content-Length` bodies); `--h2` writes the very same exchanges as HTTP/2 in clear text
with prior knowledge (client preface, SETTINGS both ways and their ACKs, connection and
stream WINDOW_UPDATEs as the client reads, up to 6 streams in flight whose DATA frames
the server interleaves, HPACK with the dynamic table (incremental indexing, eviction at
4,096 bytes) and Huffman coding where shorter, GOAWAY at the end). Both go over full TCP
sessions on port 80 (handshake, 1,460-byte MSS segments, delayed ACKs every second
segment, FIN both ways), Ethernet/IPv4, valid checksums, classic pcap, microsecond
timestamps. Generation stops when the HTTP/1.1 output (counted even when not written)
reaches `--size` MB, so both files hold the same number of exchanges.

`--merge BASE.pcap --h2 OUT` writes BASE with the HTTP/2 connections (`--size` MB of
HTTP/1.1-equivalent exchanges) spread over BASE's time span and merged in timestamp
order (the mixed workload below).

Prints one line per output: connections, exchanges, packets, pcap bytes, TCP payload
bytes (the per-byte figures divide by the last).

HTTP/2 against HTTP/1.1, per byte (issue 20's target: HTTP/2 inspection within 1.5x
HTTP/1's), instruction counts so that the figure holds on a busy machine:

    cargo build --release --locked -p meerkat-detect --example inproc
    bench/gen-http2.py --seed 1 --size 10 --h1 /tmp/h1.pcap --h2 /tmp/h2.pcap
    cat ../shared/corpus/rules/et-open-2023-05/*.rules > /tmp/et.rules
    for p in /tmp/h1.pcap /tmp/h2.pcap; do
        bench/callgrind.sh $p; bench/callgrind.sh $p /tmp/et.rules; done

Ir / TCP payload bytes of each, and the ratio h2/h1. Measured 2026-12-07 (seed 1, 10
MB: 57 connections, 275 exchanges; 9,465,794 and 9,377,155 payload bytes): no rules
7.11 and 8.36 Ir/B (1.18x; it was 10.27 Ir/B, 1.45x, before app/src/http2 decoded
Huffman a code at a time and reserved a body's room from its content-length), ET Open
306.4 and 324.6 Ir/B (1.06x; 326.5 before).

Throughput on the mixed workload with ET Open, side by side with the reference:

    python3 ../shared/tools/trafficgen.py --seed 1 --size 100 --attack-rate 0.02 mix.pcap
    bench/gen-http2.py --seed 1 --size 25 --merge mix.pcap --h2 mix-h2.pcap
    ../shared/tools/sidebyside --pcap mix-h2.pcap --rules /tmp/et.rules --runs 3

Measured 2026-12-07 (one worker, medians of 3; 125 MB, 20% of it HTTP/2): Meerkat 282
Mbit/s per packet-path CPU-second, the reference 309 (0.91x), 1,291 alerts each; the
same mix without the HTTP/2 share: 245 and 328 (0.75x), 1,128 alerts each.
"""
import argparse
import heapq
import random
import struct
import sys

MSS = 1460

# --- HPACK (RFC 7541) ---------------------------------------------------------------

STATIC = [
    (b':authority', b''), (b':method', b'GET'), (b':method', b'POST'), (b':path', b'/'),
    (b':path', b'/index.html'), (b':scheme', b'http'), (b':scheme', b'https'),
    (b':status', b'200'), (b':status', b'204'), (b':status', b'206'), (b':status', b'304'),
    (b':status', b'400'), (b':status', b'404'), (b':status', b'500'),
    (b'accept-charset', b''), (b'accept-encoding', b'gzip, deflate'),
    (b'accept-language', b''), (b'accept-ranges', b''), (b'accept', b''),
    (b'access-control-allow-origin', b''), (b'age', b''), (b'allow', b''),
    (b'authorization', b''), (b'cache-control', b''), (b'content-disposition', b''),
    (b'content-encoding', b''), (b'content-language', b''), (b'content-length', b''),
    (b'content-location', b''), (b'content-range', b''), (b'content-type', b''),
    (b'cookie', b''), (b'date', b''), (b'etag', b''), (b'expect', b''), (b'expires', b''),
    (b'from', b''), (b'host', b''), (b'if-match', b''), (b'if-modified-since', b''),
    (b'if-none-match', b''), (b'if-range', b''), (b'if-unmodified-since', b''),
    (b'last-modified', b''), (b'link', b''), (b'location', b''), (b'max-forwards', b''),
    (b'proxy-authenticate', b''), (b'proxy-authorization', b''), (b'range', b''),
    (b'referer', b''), (b'refresh', b''), (b'retry-after', b''), (b'server', b''),
    (b'set-cookie', b''), (b'strict-transport-security', b''), (b'transfer-encoding', b''),
    (b'user-agent', b''), (b'vary', b''), (b'via', b''), (b'www-authenticate', b''),
]

# Huffman code lengths of symbols 0..256 (RFC 7541 Appendix B). The code is canonical:
# codes follow from the lengths, assigned in (length, symbol) order.
HUFF_LENGTHS = [
    13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28,
    30, 28, 28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10, 12, 13, 6, 8, 11, 10, 10, 8, 11, 8,
    6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7,
    7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5,
    6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7, 7, 15, 11, 14, 13,
    28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24,
    23, 23, 23, 23, 21, 22, 23, 22, 23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22,
    24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22, 23, 26,
    26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27,
    24, 21, 21, 26, 26, 28, 27, 27, 27, 20, 24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24,
    24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
]


def huff_codes():
    codes = [0] * 257
    code, prev = 0, None
    for k, sym in enumerate(sorted(range(257), key=lambda s: (HUFF_LENGTHS[s], s))):
        if k:
            code = (code + 1) << (HUFF_LENGTHS[sym] - prev)
        prev = HUFF_LENGTHS[sym]
        codes[sym] = code
    return codes


HUFF_CODES = huff_codes()


def huffman(data):
    acc, n, out = 0, 0, bytearray()
    for b in data:
        acc = (acc << HUFF_LENGTHS[b]) | HUFF_CODES[b]
        n += HUFF_LENGTHS[b]
        while n >= 8:
            n -= 8
            out.append((acc >> n) & 0xff)
        acc &= (1 << n) - 1
    if n:
        # Padded with the most significant bits of EOS (all ones).
        out.append(((acc << (8 - n)) | ((1 << (8 - n)) - 1)) & 0xff)
    return bytes(out)


def hint(value, prefix_bits, first):
    """An HPACK integer with `first` holding the pattern bits above the prefix."""
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = bytearray([first | limit])
    value -= limit
    while value >= 128:
        out.append((value & 0x7f) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def hstr(s):
    h = huffman(s)
    if len(h) < len(s):
        return hint(len(h), 7, 0x80) + h
    return hint(len(s), 7, 0) + s


# Headers whose values change with nearly every message: literal without indexing (what
# nghttp2 does for :path, content-length and the like), so they do not churn the table.
NOT_INDEXED = {b':path', b'content-length', b'etag', b'date', b'last-modified', b'location',
               b'if-none-match', b'if-modified-since', b'set-cookie'}


class Encoder:
    """One direction's HPACK encoder: static table, dynamic table of 4,096 bytes."""

    def __init__(self, max_size=4096):
        self.dyn = []  # newest first
        self.size = 0
        self.max = max_size

    def find(self, name, value):
        name_idx = None
        for i, (n, v) in enumerate(STATIC):
            if n == name:
                if v == value:
                    return i + 1, True
                if name_idx is None:
                    name_idx = i + 1
        for i, (n, v) in enumerate(self.dyn):
            if n == name:
                if v == value:
                    return len(STATIC) + i + 1, True
                if name_idx is None:
                    name_idx = len(STATIC) + i + 1
        return name_idx, False

    def add(self, name, value):
        need = len(name) + len(value) + 32
        while self.dyn and self.size + need > self.max:
            n, v = self.dyn.pop()
            self.size -= len(n) + len(v) + 32
        if need <= self.max:
            self.dyn.insert(0, (name, value))
            self.size += need

    def encode(self, headers):
        out = bytearray()
        for name, value in headers:
            idx, full = self.find(name, value)
            if full:
                out += hint(idx, 7, 0x80)
                continue
            if name in NOT_INDEXED:
                out += hint(idx or 0, 4, 0x00)
            else:
                out += hint(idx or 0, 6, 0x40)
                self.add(name, value)
            if not idx:
                out += hstr(name)
            out += hstr(value)
        return bytes(out)


# --- the exchanges --------------------------------------------------------------------

WORDS = ('the of and to in is that for it as with was on be by this are at from or have an '
         'not which but all were when we there can more one has been their if would what '
         'so its about other into than them these some could time only new may people two '
         'first any like after most also made did many before must through back years where '
         'much your way well down should because each just those how too little state good '
         'very make world still own see men work long get here between both life being under '
         'never day same another know while last might us great old year off come since '
         'against go came right used take three').split()
HOSTS = ['www.example.com', 'cdn.example.net', 'api.shop.example.org', 'news.example.co.uk',
         'static.example.io', 'img.example.com', 'blog.example.dev', 'portal.example.edu']
UAS = [
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) '
    'Chrome/119.0.0.0 Safari/537.36',
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) '
    'Version/17.1 Safari/605.1.15',
    'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
    'Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like '
    'Gecko) Version/17.1 Mobile/15E148 Safari/604.1',
    'curl/8.4.0', 'okhttp/4.12.0', 'python-requests/2.31.0',
]
LANGS = ['en-US,en;q=0.9', 'de-DE,de;q=0.9,en;q=0.8', 'fr-FR,fr;q=0.8', 'en-GB,en;q=0.7']
SERVERS = ['nginx/1.24.0', 'Apache/2.4.58 (Ubuntu)', 'cloudflare', 'Microsoft-IIS/10.0',
           'envoy', 'gws']
KINDS = [  # (content type, path suffix, weight, median size)
    ('text/html; charset=utf-8', '.html', 20, 18000),
    ('application/json', '', 20, 1500),
    ('text/css', '.css', 8, 12000),
    ('application/javascript', '.js', 12, 40000),
    ('image/png', '.png', 14, 25000),
    ('image/jpeg', '.jpg', 14, 60000),
    ('application/zip', '.zip', 2, 250000),
    ('font/woff2', '.woff2', 4, 30000),
]
DAYS = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun']
MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']


def words(r, n):
    return ' '.join(r.choice(WORDS) for _ in range(n))


def http_date(r):
    return ('%s, %02d %s 2023 %02d:%02d:%02d GMT' % (
        r.choice(DAYS), r.randint(1, 28), r.choice(MONTHS), r.randint(0, 23),
        r.randint(0, 59), r.randint(0, 59))).encode()


def body_of(r, ctype, size):
    if ctype.startswith('text/html'):
        parts = [b'<!DOCTYPE html>\n<html><head><title>', words(r, 5).encode(),
                 b'</title></head>\n<body>\n']
        n = sum(map(len, parts))
        while n < size:
            p = b'<p class="c%d">%s <a href="/%s">%s</a></p>\n' % (
                r.randint(1, 40), words(r, r.randint(8, 40)).encode(),
                r.choice(WORDS).encode(), r.choice(WORDS).encode())
            parts.append(p)
            n += len(p)
        return (b''.join(parts) + b'</body></html>\n')[:max(size, 0)]
    if ctype == 'application/json':
        items = []
        n = 2
        while n < size:
            it = b'{"id":%d,"name":"%s","score":%d.%02d,"tags":["%s","%s"],"active":%s}' % (
                r.randint(1, 10 ** 6), words(r, 2).encode(), r.randint(0, 99),
                r.randint(0, 99), r.choice(WORDS).encode(), r.choice(WORDS).encode(),
                r.choice([b'true', b'false']))
            items.append(it)
            n += len(it) + 1
        return b'{"items":[' + b','.join(items) + b']}'
    if ctype in ('text/css', 'application/javascript'):
        parts, n = [], 0
        while n < size:
            if ctype == 'text/css':
                p = b'.%s-%d{margin:%dpx;color:#%06x;font-size:%dpx}\n' % (
                    r.choice(WORDS).encode(), r.randint(0, 99), r.randint(0, 20),
                    r.getrandbits(24), r.randint(8, 30))
            else:
                p = b'function %s%d(a,b){var %s=a+b*%d;return %s.toString()}\n' % (
                    r.choice(WORDS).encode(), r.randint(0, 999), r.choice(WORDS).encode(),
                    r.randint(1, 99), r.choice(WORDS).encode())
            parts.append(p)
            n += len(p)
        return b''.join(parts)[:size]
    # Binary: a format magic then incompressible bytes.
    magic = {'image/png': b'\x89PNG\r\n\x1a\n', 'image/jpeg': b'\xff\xd8\xff\xe0\x00\x10JFIF',
             'application/zip': b'PK\x03\x04', 'font/woff2': b'wOF2'}[ctype]
    return (magic + r.randbytes(max(size - len(magic), 0)))[:size]


def exchange(r, host, ua, lang, cookie):
    """One request and its answer: (method, path, request headers, request body,
    status, response headers, response body). Header names lower case, values bytes."""
    ctype, suffix, _, median = r.choices(KINDS, weights=[k[2] for k in KINDS])[0]
    depth = r.randint(1, 4)
    path = '/' + '/'.join(r.choice(WORDS) for _ in range(depth)) + suffix
    if r.random() < 0.3:
        path += '?%s=%d&%s=%s' % (r.choice(WORDS), r.randint(0, 9999), r.choice(WORDS),
                                 r.choice(WORDS))
    post = r.random() < 0.15
    method = b'POST' if post else b'GET'
    req = [(b'user-agent', ua),
           (b'accept', b'application/json' if ctype == 'application/json' else
            b'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8'),
           (b'accept-language', lang), (b'accept-encoding', b'gzip, deflate, br')]
    if cookie:
        req.append((b'cookie', cookie))
    if r.random() < 0.5:
        req.append((b'referer', b'http://%s/%s' % (host, r.choice(WORDS).encode())))
    conditional = not post and r.random() < 0.1
    if conditional:
        req.append((b'if-none-match', b'"%08x"' % r.getrandbits(32)))
    req_body = b''
    if post:
        if r.random() < 0.5:
            req_body = b'&'.join(b'%s=%s' % (r.choice(WORDS).encode(),
                                             words(r, 3).replace(' ', '+').encode())
                                 for _ in range(r.randint(1, 8)))
            req.append((b'content-type', b'application/x-www-form-urlencoded'))
        else:
            req_body = body_of(r, 'application/json', int(r.lognormvariate(6, 1)))
            req.append((b'content-type', b'application/json'))
        req.append((b'content-length', str(len(req_body)).encode()))
    u = r.random()
    if conditional:
        status = 304
    elif u < 0.08:
        status = 404
    elif u < 0.11:
        status = 301
    else:
        status = 200
    resp = [(b'server', r.choice(SERVERS).encode()), (b'date', http_date(r))]
    if status == 200:
        size = min(int(r.lognormvariate(0, 1.0) * median), 2_000_000)
        body = body_of(r, ctype, size)
        resp += [(b'content-type', ctype.encode()), (b'content-length', str(len(body)).encode()),
                 (b'cache-control', r.choice([b'max-age=3600', b'no-cache', b'private, max-age=0',
                                              b'public, max-age=31536000'])),
                 (b'etag', b'"%08x"' % r.getrandbits(32)), (b'last-modified', http_date(r))]
        if r.random() < 0.1:
            resp.append((b'set-cookie', b'sid=%016x; Path=/; HttpOnly' % r.getrandbits(64)))
        if r.random() < 0.3:
            resp.append((b'vary', b'Accept-Encoding'))
    elif status == 404:
        body = b'<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1>' \
               b'<p>The requested URL was not found on this server.</p></body></html>\n'
        resp += [(b'content-type', b'text/html'), (b'content-length', str(len(body)).encode())]
    elif status == 301:
        body = b''
        resp += [(b'location', b'http://%s%s/' % (host, path.split('?')[0].encode())),
                 (b'content-length', b'0')]
    else:
        body = b''
        resp += [(b'etag', b'"%08x"' % r.getrandbits(32))]
    return method, path.encode(), req, req_body, status, resp, body


def connection(r):
    host = r.choice(HOSTS).encode()
    ua = r.choice(UAS).encode()
    lang = r.choice(LANGS).encode()
    cookie = b''
    if r.random() < 0.4:
        cookie = b'; '.join(b'%s=%x' % (r.choice(WORDS).encode(), r.getrandbits(48))
                            for _ in range(r.randint(1, 4)))
    n = min(int(r.expovariate(1 / 4)) + 1, 12)
    return host, [exchange(r, host, ua, lang, cookie) for _ in range(n)]


# --- TCP/IP and pcap ----------------------------------------------------------------

def csum(b):
    if len(b) % 2:
        b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    s = (s >> 16) + (s & 0xffff)
    s += s >> 16
    return (~s) & 0xffff


class Tcp:
    """One TCP session's packets: handshake, MSS segments with delayed ACKs, FIN."""

    def __init__(self, cip, sip, sport, t0, out):
        self.c, self.s, self.sport = cip, sip, sport
        self.seq = {True: 0x1000_0000 + sport * 7919, False: 0x4000_0000 + sport * 104729}
        self.unacked = {True: 0, False: 0}
        self.t, self.out = t0, out
        self.payload = 0
        self.pkt(True, b'', 0x02, syn=True)
        self.pkt(False, b'', 0x12, syn=True)
        self.pkt(True, b'', 0x10)

    def pkt(self, to_server, data, flags, syn=False):
        self.t += 0.00002
        src, dst = (self.c, self.s) if to_server else (self.s, self.c)
        sp, dp = (self.sport, 80) if to_server else (80, self.sport)
        seq = self.seq[to_server]
        ack = self.seq[not to_server] if flags & 0x10 else 0
        opts = struct.pack('!BBH', 2, 4, MSS) if syn else b''
        tcp = struct.pack('!HHIIBBHHH', sp, dp, seq, ack, (5 + len(opts) // 4) << 4, flags,
                          64240, 0, 0) + opts + data
        ph = src + dst + struct.pack('!BBH', 0, 6, len(tcp))
        tcp = tcp[:16] + struct.pack('!H', csum(ph + tcp)) + tcp[18:]
        ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(tcp), 0, 0x4000, 64, 6, 0, src, dst)
        ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
        frame = (b'\x00\x16\x3e\x00\x00\x02\x00\x16\x3e\x00\x00\x01' if to_server else
                 b'\x00\x16\x3e\x00\x00\x01\x00\x16\x3e\x00\x00\x02') + b'\x08\x00' + ip + tcp
        self.out.append((self.t, frame))
        self.seq[to_server] = (seq + len(data) + (1 if syn or flags & 0x01 else 0)) & 0xffffffff
        self.payload += len(data)

    def send(self, to_server, data):
        for i in range(0, len(data), MSS):
            self.pkt(to_server, data[i:i + MSS], 0x18 if i + MSS >= len(data) else 0x10)
            self.unacked[to_server] += 1
            if self.unacked[to_server] >= 2:
                self.ack(not to_server)

    def ack(self, to_server):
        """`to_server` acknowledges what the other side sent."""
        if self.unacked[not to_server]:
            self.pkt(to_server, b'', 0x10)
            self.unacked[not to_server] = 0

    def close(self):
        self.ack(True)
        self.ack(False)
        self.pkt(True, b'', 0x11)
        self.pkt(False, b'', 0x11)
        self.pkt(True, b'', 0x10)


def h1_conn(tcp, host, exchanges):
    for method, path, req, req_body, status, resp, body in exchanges:
        head = b'%s %s HTTP/1.1\r\nHost: %s\r\n' % (method, path, host)
        head += b''.join(b'%s: %s\r\n' % (h1_name(n), v) for n, v in req)
        tcp.send(True, head + b'\r\n' + req_body)
        tcp.ack(False)
        reason = {200: b'OK', 301: b'Moved Permanently', 304: b'Not Modified',
                  404: b'Not Found'}[status]
        head = b'HTTP/1.1 %d %s\r\n' % (status, reason)
        head += b''.join(b'%s: %s\r\n' % (h1_name(n), v) for n, v in resp)
        tcp.send(False, head + b'\r\n' + body)
        tcp.ack(True)


def h1_name(n):
    return b'-'.join(p[:1].upper() + p[1:] for p in n.split(b'-'))


def frame(ftype, flags, stream, payload):
    return struct.pack('!I', len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack('!I', stream) + payload


DATA, HEADERS, SETTINGS, PING, GOAWAY, WINDOW_UPDATE = 0, 1, 4, 6, 7, 8
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1
MAX_FRAME = 16384
CLIENT_WINDOW = 6 * 1024 * 1024  # SETTINGS_INITIAL_WINDOW_SIZE the client announces
CONN_WINDOW = 15 * 1024 * 1024  # what its first WINDOW_UPDATE raises the connection to
IN_FLIGHT = 6


def h2_conn(tcp, host, exchanges):
    cenc, senc = Encoder(), Encoder()
    # Client preface and SETTINGS (ENABLE_PUSH 0, MAX_CONCURRENT_STREAMS 100,
    # INITIAL_WINDOW_SIZE, MAX_HEADER_LIST_SIZE) and a connection WINDOW_UPDATE, as
    # browsers send; the server's SETTINGS; each side's ACK.
    settings = b''.join(struct.pack('!HI', k, v) for k, v in
                        [(2, 0), (3, 100), (4, CLIENT_WINDOW), (6, 262144)])
    tcp.send(True, b'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n' + frame(SETTINGS, 0, 0, settings)
             + frame(WINDOW_UPDATE, 0, 0, struct.pack('!I', CONN_WINDOW - 65535)))
    tcp.send(False, frame(SETTINGS, 0, 0, struct.pack('!HIHI', 3, 128, 5, MAX_FRAME))
             + frame(SETTINGS, ACK, 0, b''))
    tcp.send(True, frame(SETTINGS, ACK, 0, b''))
    consumed_conn = 0
    sid = 1
    for i in range(0, len(exchanges), IN_FLIGHT):
        batch = exchanges[i:i + IN_FLIGHT]
        # The client's requests, one after the other.
        out = b''
        streams = []
        for method, path, req, req_body, status, resp, body in batch:
            hdrs = [(b':method', method), (b':authority', host), (b':scheme', b'http'),
                    (b':path', path)] + req
            block = cenc.encode(hdrs)
            out += frame(HEADERS, END_HEADERS | (0 if req_body else END_STREAM), sid, block)
            for j in range(0, len(req_body), MAX_FRAME):
                last = j + MAX_FRAME >= len(req_body)
                out += frame(DATA, END_STREAM if last else 0, sid, req_body[j:j + MAX_FRAME])
            streams.append((sid, status, resp, body))
            sid += 2
        tcp.send(True, out)
        tcp.ack(False)
        # The server's answers: all HEADERS, then the bodies' DATA frames round robin,
        # written in TCP-send-sized runs; the client's WINDOW_UPDATEs as it reads.
        out = b''
        pending = []
        for s, status, resp, body in streams:
            block = senc.encode([(b':status', str(status).encode())] + resp)
            out += frame(HEADERS, END_HEADERS | (0 if body else END_STREAM), s, block)
            if body:
                pending.append([s, body, 0, 0])
        while pending:
            for p in list(pending):
                s, body, off, consumed = p
                chunk = body[off:off + MAX_FRAME]
                off += len(chunk)
                last = off >= len(body)
                out += frame(DATA, END_STREAM if last else 0, s, chunk)
                p[2] = off
                p[3] = consumed + len(chunk)
                consumed_conn += len(chunk)
                if last:
                    pending.remove(p)
                if len(out) >= 4 * MAX_FRAME:
                    tcp.send(False, out)
                    out = b''
                    upd = b''
                    if consumed_conn >= CONN_WINDOW // 2:
                        upd += frame(WINDOW_UPDATE, 0, 0, struct.pack('!I', consumed_conn))
                        consumed_conn = 0
                    for q in pending:
                        if q[3] >= CLIENT_WINDOW // 2:
                            upd += frame(WINDOW_UPDATE, 0, q[0], struct.pack('!I', q[3]))
                            q[3] = 0
                    if upd:
                        tcp.send(True, upd)
        if out:
            tcp.send(False, out)
        tcp.ack(True)
    tcp.send(True, frame(GOAWAY, 0, 0, struct.pack('!II', max(sid - 2, 0), 0)))


# --- driver ---------------------------------------------------------------------------

def pcap_header():
    return struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1)


def rec(ts, frame_bytes):
    sec = int(ts)
    usec = int(round((ts - sec) * 1e6))
    if usec >= 1_000_000:
        sec, usec = sec + 1, usec - 1_000_000
    return struct.pack('<IIII', sec, usec, len(frame_bytes), len(frame_bytes)) + frame_bytes


def read_pcap(path):
    with open(path, 'rb') as f:
        head = f.read(24)
        magic, _, _, _, _, _, link = struct.unpack('<IHHiIII', head)
        if magic != 0xa1b2c3d4 or link != 1:
            sys.exit('%s: need a classic microsecond Ethernet pcap' % path)
        while True:
            h = f.read(16)
            if len(h) < 16:
                return
            sec, usec, incl, _ = struct.unpack('<IIII', h)
            yield sec + usec / 1e6, h + f.read(incl)


def pcap_span(path):
    first = last = None
    for ts, _ in read_pcap(path):
        first = ts if first is None else first
        last = ts
    return first, last


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--size', type=float, default=20, help='MB of HTTP/1.1 pcap to match')
    ap.add_argument('--h1', help='write the HTTP/1.1 pcap here')
    ap.add_argument('--h2', help='write the HTTP/2 pcap here')
    ap.add_argument('--merge', help='merge the HTTP/2 connections into this pcap')
    ap.add_argument('--gap', type=float, default=0.004, help='seconds between connections')
    a = ap.parse_args()
    if a.merge and not a.h2:
        ap.error('--merge needs --h2 OUT')
    r = random.Random(a.seed)
    conns = []
    h1_bytes = 24
    t0 = 1700000000.0
    gap = a.gap
    while h1_bytes < a.size * 1e6:
        host, exchanges = connection(r)
        i = len(conns)
        cip = bytes([10, 1 + i // 65536 % 200, i // 256 % 256, 1 + i % 250])
        sip = bytes([198, 51, 100, 10 + i % 20])
        sport = 1024 + (i * 7) % 60000
        conns.append((cip, sip, sport, host, exchanges))
        pk = []
        tcp = Tcp(cip, sip, sport, 0, pk)
        h1_conn(tcp, host, exchanges)
        tcp.close()
        h1_bytes += sum(16 + len(p) for _, p in pk)
    if a.merge:
        first, last = pcap_span(a.merge)
        t0, gap = first, (last - first) / max(len(conns), 1)
    outs = [(a.h1, h1_conn), (a.h2, h2_conn)]
    for path, writer in outs:
        if not path:
            continue
        pk = []
        payload = 0
        for i, (cip, sip, sport, host, exchanges) in enumerate(conns):
            tcp = Tcp(cip, sip, sport, t0 + i * gap, pk)
            writer(tcp, host, exchanges)
            tcp.close()
            payload += tcp.payload
        pk.sort(key=lambda p: p[0])
        n = len(pk)
        size = 24 + sum(16 + len(p) for _, p in pk)
        with open(path, 'wb') as f:
            f.write(pcap_header())
            if writer is h2_conn and a.merge:
                ours = ((ts, rec(ts, p)) for ts, p in pk)
                merged = heapq.merge(read_pcap(a.merge), ours, key=lambda x: x[0])
                size = 24
                n = 0
                for _, raw in merged:
                    f.write(raw)
                    size += len(raw)
                    n += 1
            else:
                for ts, p in pk:
                    f.write(rec(ts, p))
        print('%s: %d connections, %d exchanges, %d packets, %d pcap bytes, '
              '%d TCP payload bytes (HTTP part)' % (
                  path, len(conns), sum(len(c[4]) for c in conns), n, size, payload))


if __name__ == '__main__':
    main()
