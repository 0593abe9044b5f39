#!/usr/bin/env python3
"""bittorrent-dht-crafted.pcap: BitTorrent DHT (BEP 5) over UDP, one flow per exchange:
ping (with a client version `v`), find_node answered with compact nodes (and a partial
node after them), get_peers answered with peers (an IPv4 and an IPv6 one) and a token,
get_peers answered with nodes, announce_peer (implied_port, port, token), an error
(`e`), a response over IPv6 with `nodes6`, a response led by BEP 42's `ip` key, a
query type Suricata has no field for (BEP 44 `get`, its `target`), a response seen
before any query, a datagram that is not DHT inside a DHT flow, and malformed ones: a
truncated dictionary, nesting deeper than a DHT message has, unsorted keys, a missing
`t`, a port out of range, a peer too short, an error without a message.
Usage: dht_crafted_pcap.py OUT.pcap (tests/data/bittorrent-dht-crafted-ref.json holds
the rows the reference, Suricata 8.0.6, writes for it with bittorrent-dht-crafted.rules).
"""
import sys
from scapy.all import Ether, IP, IPv6, UDP, wrpcap


def b(x):
    """Bencodes x (dict keys sorted unless given as a list of pairs)."""
    if isinstance(x, int):
        return b'i%de' % x
    if isinstance(x, str):
        x = x.encode()
    if isinstance(x, bytes):
        return b'%d:' % len(x) + x
    if isinstance(x, list):
        return b'l' + b''.join(b(v) for v in x) + b'e'
    if isinstance(x, dict):
        return b'd' + b''.join(b(k) + b(x[k]) for k in sorted(x, key=lambda k: k.encode() if isinstance(k, str) else k)) + b'e'
    if isinstance(x, tuple):  # pairs in the order given
        return b'd' + b''.join(b(k) + b(v) for k, v in x) + b'e'
    raise TypeError(x)


ID_A = b'abcdefghij0123456789'
ID_B = b'mnopqrstuvwxyz123456'
HASH = bytes(range(0x20, 0x34))
TOKEN = b'aoeusnth'


def node(i, ip, port):
    return bytes([i] * 20) + bytes(ip) + port.to_bytes(2, 'big')


NODES = node(1, [10, 1, 2, 3], 6881) + node(2, [192, 168, 0, 9], 51413) + b'\x07' * 5
NODES6 = (bytes([3] * 20) + bytes.fromhex('20010db8000000000000000000000001') + (6881).to_bytes(2, 'big')
          + bytes([4] * 20) + bytes.fromhex('fe800000000000000202b3fffe1e8329') + (443).to_bytes(2, 'big'))
PEER4 = bytes([10, 9, 8, 7]) + (6882).to_bytes(2, 'big')
PEER6 = bytes.fromhex('20010db8000000000000000000000002') + (6883).to_bytes(2, 'big')

q = lambda t, name, args, **kw: b(dict(t=t, y='q', q=name, a=args, **kw))
r = lambda t, body, **kw: b(dict(t=t, y='r', r=body, **kw))

flows = [
    # (client port, server port, [(to_server, payload)], ipv6)
    (40001, 6881, [(1, q('aa', 'ping', {'id': ID_A}, v=b'UT\x01\x02')),
                   (0, r('aa', {'id': ID_B}, v=b'LT\x00\x11'))], False),
    (40002, 6881, [(1, q('ab', 'find_node', {'id': ID_A, 'target': ID_B})),
                   (0, r('ab', {'id': ID_B, 'nodes': NODES}))], False),
    (40003, 6881, [(1, q('ac', 'get_peers', {'id': ID_A, 'info_hash': HASH})),
                   (0, r('ac', {'id': ID_B, 'token': TOKEN, 'values': [PEER4, PEER6]}))], False),
    (40004, 6881, [(1, q('ad', 'get_peers', {'id': ID_A, 'info_hash': HASH})),
                   (0, r('ad', {'id': ID_B, 'token': TOKEN, 'nodes': NODES[:52]}))], False),
    (40005, 6881, [(1, q('ae', 'announce_peer', {'id': ID_A, 'implied_port': 1, 'info_hash': HASH,
                                                 'port': 6881, 'token': TOKEN})),
                   (0, r('ae', {'id': ID_B}))], False),
    (40006, 6881, [(1, q('af', 'find_node', {'id': ID_A, 'target': ID_A})),
                   (0, b(dict(t='af', y='e', e=[201, 'A Generic Error Ocurred'])))], False),
    (40007, 6881, [(1, q('ag', 'find_node', {'id': ID_A, 'target': ID_B, 'want': ['n6']})),
                   (0, r('ag', {'id': ID_B, 'nodes6': NODES6}))], True),
    (40008, 6881, [(1, q('ah', 'ping', {'id': ID_A})),
                   (0, r('ah', {'id': ID_B}, ip=bytes([10, 0, 0, 1]) + (40008).to_bytes(2, 'big')))], False),
    (40009, 6881, [(1, q('ai', 'get', {'id': ID_A, 'target': HASH, 'seq': 3})),
                   (0, r('ai', {'id': ID_B, 'token': TOKEN, 'v': 'hello', 'seq': 3}))], False),
    # A response first: Suricata's pattern is the query's prefix; then a query.
    (40010, 6881, [(0, r('aj', {'id': ID_B})),
                   (1, q('ak', 'ping', {'id': ID_A})),
                   (0, r('ak', {'id': ID_B}))], False),
    # Not DHT inside a DHT flow, then DHT again.
    (40011, 6881, [(1, q('al', 'ping', {'id': ID_A})),
                   (1, b'hello, this is not bencode'),
                   (0, r('al', {'id': ID_B}))], False),
    # Malformed: a truncated dictionary.
    (40012, 6881, [(1, q('am', 'ping', {'id': ID_A})),
                   (1, q('an', 'ping', {'id': ID_A})[:-7])], False),
    # Malformed: nesting deeper than a DHT message has, in an unknown key.
    (40013, 6881, [(1, q('ao', 'ping', {'id': ID_A})),
                   (1, b(dict(t='ap', y='q', q='ping', a={'id': ID_A, 'x': [[[[[['deep']]]]]]})))], False),
    # Malformed: keys out of order.
    (40014, 6881, [(1, q('aq', 'ping', {'id': ID_A})),
                   (1, b((('a', {'id': ID_A}), ('y', 'q'), ('q', 'ping'), ('t', 'ar'))))], False),
    # Malformed: no `t`; a port out of range.
    (40015, 6881, [(1, q('as', 'ping', {'id': ID_A})),
                   (1, b(dict(y='q', q='ping', a={'id': ID_A}))),
                   (1, q('at', 'announce_peer', {'id': ID_A, 'info_hash': HASH, 'port': 70000, 'token': TOKEN}))], False),
    # Malformed: a peer shorter than 6 bytes; an error without a message.
    (40016, 6881, [(1, q('au', 'get_peers', {'id': ID_A, 'info_hash': HASH})),
                   (0, r('au', {'id': ID_B, 'token': TOKEN, 'values': [PEER4, b'\x01\x02\x03']})),
                   (0, b(dict(t='au', y='e', e=[203])))], False),
    # An empty nodes string, an empty values list, an unknown message type.
    (40017, 6881, [(1, q('av', 'find_node', {'id': ID_A, 'target': ID_B})),
                   (0, r('av', {'id': ID_B, 'nodes': b'', 'values': []})),
                   (1, b(dict(t='aw', y='x', a={'id': ID_A})))], False),
    # Nesting: three levels (the most a DHT message has), then four.
    (40018, 6881, [(1, b(dict(t='ax', y='q', q='ping', a={'id': ID_A, 'x': ['three']}))),
                   (1, b(dict(t='ay', y='q', q='ping', a={'id': ID_A, 'x': [['four']]}))),
                   (0, b(dict(t='ax', y='e', e=[202, ['x'], 'Server Error'])))], False),
    # Integers and strings bencode forbids: a leading zero, minus zero, a length with a
    # leading zero; bytes after the message.
    (40019, 6881, [(1, q('az', 'announce_peer', {'id': ID_A, 'info_hash': HASH, 'port': 6881, 'token': TOKEN}).replace(b'i6881e', b'i06881e')),
                   (1, q('ba', 'announce_peer', {'id': ID_A, 'implied_port': 0, 'info_hash': HASH, 'port': 1, 'token': TOKEN}).replace(b'i0e', b'i-0e')),
                   (1, q('bb', 'ping', {'id': ID_A}).replace(b'2:bb', b'02:bb')),
                   (1, q('bc', 'ping', {'id': ID_A}) + b'trailing'),
                   (1, q('bd', 'ping', {'id': ID_A}, v=b'\xff\xfe')),
                   (0, b(dict(t='bd', y='e', e=[-1, 'neg']))),
                   (0, b(dict(t='bd', y='e', e=[202, b'\xff'])))], False),
]

pkts = []
t = 1700000000.0
for n, (cp, sp, msgs, v6) in enumerate(flows):
    if v6:
        c, s, L3 = '2001:db8::10', '2001:db8::20', IPv6
    else:
        c, s, L3 = '10.0.0.%d' % (n + 10), '10.0.1.1', IP
    for to_server, payload in msgs:
        src, dst, sport, dport = (c, s, cp, sp) if to_server else (s, c, sp, cp)
        p = Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / L3(src=src, dst=dst) / UDP(sport=sport, dport=dport) / payload
        p.time = t
        t += 0.01
        pkts.append(p)
wrpcap(sys.argv[1], pkts)
