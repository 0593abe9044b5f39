#!/usr/bin/env python3
"""Captures tests/data/websocket-deflate.pcap: Python's `websockets` library (client
and server, permessage-deflate as it negotiates it) talking on loopback, recorded with
tcpdump. Needs root (a private network namespace, so nothing else on the machine is
seen or disturbed), tcpdump, and `pip install websockets` (made with websockets 17.4
and tcpdump 4.99.3):

    sudo python3 tests/data/websocket_deflate_capture.py OUT.pcap

The script re-runs itself under `unshare -n`, brings up that namespace's loopback with
an MTU of 1500 and segmentation offloads off (so messages longer than an MSS span
several segments, as on a wire), then runs, each client on a fixed port:

 1. port 41301: the library's defaults (client offers `permessage-deflate;
    client_max_window_bits`, server answers with `server_max_window_bits=12;
    client_max_window_bits=12`, context takeover both ways): text messages, the same
    text sent twice (the second compresses to references into the first: an inflater
    that starts afresh per message cannot read it), a binary message, a fragmented
    text message (three frames, RSV1 on the first only), a 13 KB message (about 7 KB
    compressed: several segments), ping and pong, close. The server answers every
    data message with `echo: ` and the message.
 2. port 41302: `client_no_context_takeover`, `server_no_context_takeover`,
    `client_max_window_bits=9`, `server_max_window_bits=10` (the server accepts
    them): the same messages.
 3. port 41303: the server does not take the extension: the same messages, not
    compressed.

Checksums are left as the kernel wrote them (loopback offload: not filled in): read the
pcap with `-k none`. Timestamps are the capture's own, so a new capture differs byte
for byte; websocket-deflate.websocket.json is what Suricata 8.0.6 makes of the
committed one (`websocket_ref.py`, rules in websocket-deflate.rules).
"""
import asyncio
import os
import random
import subprocess
import sys
import time

PORTS = {41301: 8701, 41302: 8702, 41303: 8703}


def messages():
    """What each client sends, in order: (kind, payload)."""
    text = 'The quick brown fox CONTEXT-TAKEOVER-TEXT jumps over the lazy dog ' * 3
    # Hex of a seeded generator: compresses to about half, several segments long.
    r = random.Random(7)
    big = ''.join('line %05d %032x\n' % (i, r.getrandbits(128)) for i in range(300))
    big += 'the end of a long LONG-MESSAGE-TEXT message'
    return [
        ('text', 'hello FIRST-MESSAGE-TEXT from the client'),
        ('text', text),
        ('text', text),
        ('binary', b'\x00\x01BINARY-MESSAGE-DATA\x02\x03' + bytes(range(256)) * 2),
        ('frag', ['fragment one FRAG-', 'MENTED-TEXT fragment two', ' and fragment three']),
        ('text', big),
        ('ping', b'PING-DATA'),
        ('text', 'LAST-MESSAGE-TEXT before close'),
    ]


async def handler(ws):
    async for msg in ws:
        if isinstance(msg, bytes):
            await ws.send(b'echo: ' + msg)
        else:
            await ws.send('echo: ' + msg)


async def run():
    from websockets.asyncio.client import connect
    from websockets.asyncio.server import serve
    from websockets.extensions.permessage_deflate import (
        ClientPerMessageDeflateFactory, ServerPerMessageDeflateFactory)

    servers = [
        await serve(handler, '127.0.0.1', PORTS[41301]),
        await serve(handler, '127.0.0.1', PORTS[41302], compression=None,
                    extensions=[ServerPerMessageDeflateFactory()]),
        await serve(handler, '127.0.0.1', PORTS[41303], compression=None),
    ]
    clients = {
        41301: {},
        41302: {'compression': None, 'extensions': [ClientPerMessageDeflateFactory(
            client_no_context_takeover=True, server_no_context_takeover=True,
            client_max_window_bits=9, server_max_window_bits=10)]},
        41303: {},
    }
    for cport, kw in clients.items():
        url = 'ws://127.0.0.1:%d/chat' % PORTS[cport]
        async with connect(url, local_addr=('127.0.0.1', cport), **kw) as ws:
            for kind, data in messages():
                if kind == 'ping':
                    await (await ws.ping(data))
                    continue
                await ws.send(data)
                await ws.recv()
            # The context manager closes (1000) and waits for the server's close.
    for s in servers:
        s.close()
        await s.wait_closed()


def main():
    out = os.path.abspath(sys.argv[1])
    if os.environ.get('WS_CAPTURE_INNER') != '1':
        env = dict(os.environ, WS_CAPTURE_INNER='1')
        sys.exit(subprocess.call(['unshare', '-n', sys.executable, __file__, out], env=env))
    subprocess.check_call(['ip', 'link', 'set', 'lo', 'mtu', '1500', 'up'])
    subprocess.call(['ethtool', '-K', 'lo', 'tso', 'off', 'gso', 'off', 'gro', 'off'],
                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    filt = ' or '.join('port %d' % p for p in PORTS.values())
    dump = subprocess.Popen(['tcpdump', '-i', 'lo', '--immediate-mode', '-U', '-s', '0',
                             '-w', out, filt],
                            stderr=subprocess.PIPE)
    # tcpdump says it listens once its filter is in place.
    line = dump.stderr.readline()
    if b'listening' not in line:
        sys.exit('tcpdump: %s' % line.decode(errors='replace'))
    asyncio.run(run())
    time.sleep(1)  # the last FIN/ACKs: tcpdump writes them as they come
    dump.terminate()
    dump.wait()
    dump.stderr.close()


if __name__ == '__main__':
    main()
