"""Helpers of the crafted-pcap generators of the network-service protocols (IKEv2,
RDP, PostgreSQL, NFS, BitTorrent DHT, Telnet): UDP datagrams and whole TCP
connections (handshake, data in either direction, FIN) as scapy packets, with
timestamps one millisecond apart, written with wrpcap."""
from scapy.all import Ether, IP, TCP, UDP, Raw, wrpcap

T0 = 1700000000.0


class Capture:
    def __init__(self):
        self.pkts = []

    def add(self, p):
        p.time = T0 + len(self.pkts) / 1000.0
        self.pkts.append(p)

    def udp(self, src, dst, sport, dport, payload):
        self.add(Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') /
                 IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / Raw(payload))

    def write(self, path):
        wrpcap(path, self.pkts)


class Tcp:
    """One TCP connection of capture `cap`: `send(True, b)` sends b client -> server,
    `send(False, b)` server -> client, each acknowledged."""

    def __init__(self, cap, cli, srv, cport, sport, handshake=True):
        self.cap, self.cli, self.srv, self.cport, self.sport = cap, cli, srv, cport, sport
        self.seq = [1000, 50000]
        if handshake:
            self._pkt(True, 'S', b'')
            self.seq[0] += 1
            self._pkt(False, 'SA', b'')
            self.seq[1] += 1
            self._pkt(True, 'A', b'')

    def _pkt(self, to_server, flags, data):
        c, s = (self.cli, self.srv) if to_server else (self.srv, self.cli)
        cp, sp = (self.cport, self.sport) if to_server else (self.sport, self.cport)
        me, peer = (0, 1) if to_server else (1, 0)
        ack = self.seq[peer] if 'S' not in flags or 'A' in flags else 0
        p = (Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / IP(src=c, dst=s) /
             TCP(sport=cp, dport=sp, flags=flags, seq=self.seq[me], ack=ack, window=65535))
        if data:
            p = p / Raw(data)
        self.cap.add(p)

    def send(self, to_server, data, mss=1400, ack_each=False):
        for i in range(0, len(data), mss):
            chunk = data[i:i + mss]
            self._pkt(to_server, 'PA', chunk)
            self.seq[0 if to_server else 1] += len(chunk)
            if ack_each:
                self._pkt(not to_server, 'A', b'')
        if not ack_each:
            self._pkt(not to_server, 'A', b'')

    def close(self):
        self._pkt(True, 'FA', b'')
        self.seq[0] += 1
        self._pkt(False, 'FA', b'')
        self.seq[1] += 1
        self._pkt(True, 'A', b'')
