#!/usr/bin/env python3
"""HTTP files sent in parts (`206 Partial Content`, Content-Range): http-byterange.pcap.

Crafted with scapy (svcpcap.py), fixed bodies and timestamps, so a new run writes the
same bytes. Each scenario downloads one file in parts, over one keep-alive connection
or several, and the reference merges the parts of a host + file name into one more
file (`app-layer.protocols.http.byterange`):

- /inorder.bin (3000 bytes): parts 0-999, 1000-1999, 2000-2999 on one connection;
- /ooo.bin (2000 bytes): part 1000-1999 on one connection (kept aside), then 0-999 on
  a second one that completes the file;
- /overlap.bin (1500 bytes): 0-999, then 500-1499 (its first half already in);
- /dup.bin (2000 bytes): 0-999, 0-999 again (all in already), 1000-1999;
- /other.bin at two hosts: 0-499 of 1000 at a.example.test, 500-999 at b.example.test
  (different hosts: no merge);
- /whole.bin: `bytes 0-999/1000` (the whole file: an ordinary file);
- /unsat.bin: `bytes */1000` (no range: an ordinary file);
- /bad.bin: `bytes 7-3/1000` (invalid: an ordinary file);
- /nohost.bin: HTTP/1.0 without Host, 0-99 and 100-199 of 200 (no host: no merge);
- /multi.bin (6000 bytes) in 3 parts of 2000, each part's body in several segments,
  the last part first, then the first, then the middle.

The reference's EVE (files with md5 and sha256 forced, stats left out; Meerkat runs
with http-byterange.yaml and one worker, see tests/http_byterange_eve.rs):

    sed 's/#force-hash: \\[md5\\]/force-hash: [md5, sha256]/' \\
        ../shared/tools/reference/suricata.yaml > ref.yaml   # (the eve-log files type)
    ../shared/tools/suricata-ref -c ref.yaml -r http-byterange.pcap \\
        -S http-byterange.rules -l OUT -k none  (plus the -c settings suricata-ref adds)
    grep -v '"event_type":"stats"' OUT/eve.json > http-byterange.suricata-8.0.6-eve.json

Run: `python3 http_byterange_pcap.py [OUT.pcap]`.
"""
import sys

from svcpcap import Capture, Tcp

CLI, SRV = '10.0.0.1', '10.0.0.2'


def body(name, total):
    """The file's bytes: its name and offsets repeated, so that parts differ."""
    out = bytearray()
    i = 0
    while len(out) < total:
        out += b'%s:%08d|' % (name.encode(), i)
        i += 1
    return bytes(out[:total])


def request(path, host=b'files.example.test', version=b'HTTP/1.1'):
    r = b'GET ' + path.encode() + b' ' + version + b'\r\n'
    if host is not None:
        r += b'Host: ' + host + b'\r\n'
    r += b'User-Agent: rangegen/1.0\r\nRange: bytes=0-\r\n\r\n'
    return r


def response(data, crange, status=b'206 Partial Content', version=b'HTTP/1.1'):
    h = version + b' ' + status + b'\r\nContent-Type: application/octet-stream\r\n'
    if crange is not None:
        h += b'Content-Range: ' + crange + b'\r\n'
    h += b'Content-Length: %d\r\n\r\n' % len(data)
    return h + data


def part(conn, path, data, first, last, total, host=b'files.example.test',
         version=b'HTTP/1.1', mss=1400):
    conn.send(True, request(path, host, version))
    cr = b'bytes %d-%d/%d' % (first, last, total)
    conn.send(False, response(data[first:last + 1], cr, version=version), mss=mss)


def main(out):
    cap = Capture()
    port = [40000]

    def conn():
        port[0] += 1
        return Tcp(cap, CLI, SRV, port[0], 80)

    d = body('inorder', 3000)
    c = conn()
    for a in (0, 1000, 2000):
        part(c, '/inorder.bin', d, a, a + 999, 3000)
    c.close()

    d = body('ooo', 2000)
    c1 = conn()
    part(c1, '/ooo.bin', d, 1000, 1999, 2000)
    c1.close()
    c2 = conn()
    part(c2, '/ooo.bin', d, 0, 999, 2000)
    c2.close()

    d = body('overlap', 1500)
    c = conn()
    part(c, '/overlap.bin', d, 0, 999, 1500)
    part(c, '/overlap.bin', d, 500, 1499, 1500)
    c.close()

    d = body('dup', 2000)
    c = conn()
    part(c, '/dup.bin', d, 0, 999, 2000)
    part(c, '/dup.bin', d, 0, 999, 2000)
    part(c, '/dup.bin', d, 1000, 1999, 2000)
    c.close()

    d = body('other', 1000)
    c = conn()
    part(c, '/other.bin', d, 0, 499, 1000, host=b'a.example.test')
    part(c, '/other.bin', d, 500, 999, 1000, host=b'b.example.test')
    c.close()

    c = conn()
    for path, cr in (('/whole.bin', b'bytes 0-999/1000'), ('/unsat.bin', b'bytes */1000'),
                     ('/bad.bin', b'bytes 7-3/1000')):
        c.send(True, request(path))
        c.send(False, response(body(path, 1000), cr))
    c.close()

    d = body('nohost', 200)
    c = conn()
    part(c, '/nohost.bin', d, 0, 99, 200, host=None, version=b'HTTP/1.0')
    c.close()
    c = conn()
    part(c, '/nohost.bin', d, 100, 199, 200, host=None, version=b'HTTP/1.0')
    c.close()

    d = body('multi', 6000)
    for a in (4000, 0, 2000):
        c = conn()
        part(c, '/multi.bin', d, a, a + 1999, 6000, mss=700)
        c.close()

    cap.write(out)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'http-byterange.pcap')
