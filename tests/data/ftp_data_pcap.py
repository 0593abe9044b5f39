"""Crafts an FTP session for tests/ftp_data_eve.rs: one control connection (10.0.0.1 -> 10.0.0.2:21)
with a data connection per scenario (`pasv:RETR`, `port:STOR`, ...; `bounce:NONE` is a PORT to another
host): `python3 ftp_data_pcap.py OUT.pcap SCENARIOS`. The reference's EVE for it is `ftp-data.json`
(suricata-ref --runmode=single)."""
import sys
from scapy.all import Ether, IP, TCP, wrpcap

class Conn:
    def __init__(self, w, cli, cport, srv, sport):
        self.w, self.cli, self.cport, self.srv, self.sport = w, cli, cport, srv, sport
        self.seq = {0: 1000, 1: 5000}
    def pkt(self, d, flags, payload=b""):
        src, sp, dst, dp = (self.cli, self.cport, self.srv, self.sport) if d == 0 else (self.srv, self.sport, self.cli, self.cport)
        p = Ether()/IP(src=src, dst=dst)/TCP(sport=sp, dport=dp, flags=flags, seq=self.seq[d], ack=self.seq[1-d] if 'A' in flags else 0)/payload
        self.w.add(p)
        self.seq[d] += len(payload) + (1 if ('S' in flags or 'F' in flags) else 0)
    def open(self):
        self.pkt(0, 'S'); self.pkt(1, 'SA'); self.pkt(0, 'A')
    def send(self, d, data, ack=True):
        self.pkt(d, 'PA', data)
        if ack: self.pkt(1-d, 'A')
    def close(self, first=0):
        self.pkt(first, 'FA'); self.pkt(1-first, 'FA'); self.pkt(first, 'A')

class W:
    def __init__(self): self.pkts = []; self.t = 1700000000.0
    def add(self, p):
        self.t += 0.001; p.time = self.t; self.pkts.append(p)

def session(w, ctl, cmds):
    """cmds: list of (command line, [reply lines], data action) ."""
    for c, replies, action in cmds:
        if c is not None:
            ctl.send(0, c.encode() + b"\r\n")
        for i, r in enumerate(replies):
            if action and i == 1:
                action()
            ctl.send(1, r.encode() + b"\r\n")
        if action and len(replies) < 2:
            action()

def main(out, scenario):
    w = W()
    C, S = "10.0.0.1", "10.0.0.2"
    ctl = Conn(w, C, 40000, S, 21)
    ctl.open()
    ctl.send(1, b"220 (vsFTPd 3.0.2)\r\n")
    base = [("USER anonymous", ["331 Please specify the password."], None),
            ("PASS x", ["230 Login successful."], None),
            ("TYPE I", ["200 Switching to Binary mode."], None)]
    session(w, ctl, base)
    import os
    content = os.environ.get("CONTENT", "hello file content\n" * 20).encode()
    steps = []
    port = 50000
    for sc in scenario.split(","):
        port += 1
        mode, cmd = sc.split(":")
        fname = {"RETR": "down.txt", "STOR": "up.bin", "LIST": "", "NLST": "", "APPE": "app.txt", "MLSD": "", "STOU": "", "NONE": ""}[cmd]
        line = cmd + (" " + fname if fname else "")
        to_client = cmd in ("RETR", "LIST", "NLST", "MLSD")
        if mode == "bounce":
            p1, p2 = divmod(port, 256)
            steps.append(("PORT 10,0,0,9,%d,%d" % (p1, p2), ["200 PORT command successful."], None))
            continue
        if mode == "pasv":
            p1, p2 = divmod(port, 256)
            steps.append(("PASV", ["227 Entering Passive Mode (10,0,0,2,%d,%d)." % (p1, p2)], None))
            data = Conn(w, C, 41000 + port % 1000, S, port)
        elif mode == "epsv":
            steps.append(("EPSV", ["229 Entering Extended Passive Mode (|||%d|)" % port], None))
            data = Conn(w, C, 41000 + port % 1000, S, port)
        elif mode == "eprt":
            steps.append(("EPRT |1|10.0.0.1|%d|" % port, ["200 EPRT command successful."], None))
            data = Conn(w, S, 20, C, port)
        else:
            p1, p2 = divmod(port, 256)
            steps.append(("PORT 10,0,0,1,%d,%d" % (p1, p2), ["200 PORT command successful."], None))
            data = Conn(w, S, 20, C, port)
        active = mode in ("port", "eprt")
        payload = content if cmd in ("RETR", "STOR", "APPE") else b"-rw-r--r-- 1 0 0 42 a.txt\r\n"
        def xfer(data=data, active=active, to_client=to_client, payload=payload):
            data.open()
            # data direction: by the data connection's initiator
            if active:
                d = 0 if to_client else 1
            else:
                d = 1 if to_client else 0
            data.send(d, payload)
            data.close(d)
        steps.append((line, ["150 Opening data connection.", "226 Transfer complete."], xfer))
    session(w, ctl, steps)
    session(w, ctl, [("QUIT", ["221 Goodbye."], None)])
    ctl.close(0)
    wrpcap(out, w.pkts)

if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
