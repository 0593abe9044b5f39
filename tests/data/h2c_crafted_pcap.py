# Writes tests/data/h2c-crafted.pcap (python3 h2c_crafted_pcap.py OUT.pcap; needs the
# `h2` package from PyPI): HTTP/2 in clear text reached three ways:
#  1. port 41101 -> 80: HTTP/1.1 `Upgrade: h2c` with `HTTP2-Settings`, `101 Switching
#     Protocols`, then the client preface and the response to the upgrade request on
#     stream 1, and a second request on stream 3;
#  2. port 41102 -> 8000: prior knowledge (the client preface first), on a port that
#     is not HTTP's;
#  3. port 41103 -> 80: DNS over HTTP/2 (prior knowledge): a POST with an
#     `application/dns-message` body, a GET with `?dns=` (base64url), and their
#     answers.
# h2c-crafted.http.json holds the records and alerts Suricata 8.0.6 writes for it.
import base64, struct, sys
import h2.config, h2.connection, h2.events
sys.path.insert(0, __file__.rsplit('/', 1)[0])
from websocket_crafted_pcap import Tcp, wrpcap

def pair():
    c = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True, header_encoding=None))
    s = h2.connection.H2Connection(h2.config.H2Configuration(client_side=False, header_encoding=None))
    return c, s

def pump(t, c, s):
    """Moves what each side has to send to the other, client first."""
    while True:
        a = c.data_to_send()
        if a:
            t.send(True, a); s.receive_data(a)
        b = s.data_to_send()
        if b:
            t.send(False, b); c.receive_data(b)
        if not a and not b:
            return

pkts = []

# 1. Upgrade.
t = Tcp(41101, 80)
c, s = pair()
settings = c.initiate_upgrade_connection()
t.send(True, b'GET /upgraded HTTP/1.1\r\nHost: example.com\r\nUser-Agent: h2c-test\r\n'
       b'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: '
       + settings + b'\r\n\r\n')
s.initiate_upgrade_connection(settings)
resp = b'HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n'
s.send_headers(1, [(b':status', b'200'), (b'content-type', b'text/plain'), (b'server', b'h2c-server')])
s.send_data(1, b'upgraded body H2C-BODY', end_stream=True)
t.send(False, resp + s.data_to_send())
c.receive_data(b'')
pump(t, c, s)
c.send_headers(3, [(b':method', b'GET'), (b':scheme', b'http'), (b':authority', b'example.com'),
                   (b':path', b'/second-on-h2c'), (b'user-agent', b'h2c-test')], end_stream=True)
pump(t, c, s)
s.send_headers(3, [(b':status', b'404')], end_stream=True)
pump(t, c, s)
pkts += t.close()

# 2. Prior knowledge on port 8000.
t = Tcp(41102, 8000)
c, s = pair()
c.initiate_connection(); s.initiate_connection()
pump(t, c, s)
c.send_headers(1, [(b':method', b'GET'), (b':scheme', b'http'), (b':authority', b'example.com:8000'),
                   (b':path', b'/prior-knowledge'), (b'user-agent', b'h2-test')], end_stream=True)
pump(t, c, s)
s.send_headers(1, [(b':status', b'200')]); s.send_data(1, b'PRIOR-BODY', end_stream=True)
pump(t, c, s)
pkts += t.close()

# 3. DNS over HTTP/2.
def dns_query(qid, name):
    q = struct.pack('!HHHHHH', qid, 0x0100, 1, 0, 0, 0)
    for part in name.split('.'):
        q += bytes([len(part)]) + part.encode()
    return q + b'\x00' + struct.pack('!HH', 1, 1)

def dns_answer(q, ip):
    a = struct.pack('!H', struct.unpack('!H', q[:2])[0]) + struct.pack('!HHHHH', 0x8180, 1, 1, 0, 0) + q[12:]
    return a + b'\xc0\x0c' + struct.pack('!HHIH', 1, 1, 300, 4) + bytes(ip)

t = Tcp(41103, 80)
c, s = pair()
c.initiate_connection(); s.initiate_connection()
pump(t, c, s)
q1 = dns_query(0x1111, 'post.example.org')
c.send_headers(1, [(b':method', b'POST'), (b':scheme', b'http'), (b':authority', b'doh.example'),
                   (b':path', b'/dns-query'), (b'content-type', b'application/dns-message'),
                   (b'accept', b'application/dns-message'), (b'content-length', str(len(q1)).encode())])
c.send_data(1, q1, end_stream=True)
pump(t, c, s)
a1 = dns_answer(q1, [192, 0, 2, 1])
s.send_headers(1, [(b':status', b'200'), (b'content-type', b'application/dns-message'),
                   (b'content-length', str(len(a1)).encode())])
s.send_data(1, a1, end_stream=True)
pump(t, c, s)
q2 = dns_query(0, 'get.example.org')
c.send_headers(3, [(b':method', b'GET'), (b':scheme', b'http'), (b':authority', b'doh.example'),
                   (b':path', b'/dns-query?dns=' + base64.urlsafe_b64encode(q2).rstrip(b'=')),
                   (b'accept', b'application/dns-message')], end_stream=True)
pump(t, c, s)
a2 = dns_answer(q2, [192, 0, 2, 2])
s.send_headers(3, [(b':status', b'200'), (b'content-type', b'application/dns-message')])
s.send_data(3, a2, end_stream=True)
pump(t, c, s)
pkts += t.close()

wrpcap(sys.argv[1], pkts)
