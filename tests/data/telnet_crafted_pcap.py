#!/usr/bin/env python3
"""telnet-crafted.pcap: Telnet (RFC 854) over TCP. Port 23: a login session full of
option negotiation (DO/WILL/WONT/DONT, subnegotiations of terminal speed, new
environment and terminal type, IAC SE), a banner, `login: `, `Password: `, a shell
command and `exit`; a failed login (`Login incorrect`) then a second try; a command
whose IAC is split from its command by a segment's end; a WILL split from its option
(Suricata's parser gives up on the flow); a subnegotiation never ended. Port 2323: the same login, which Suricata does not take
for Telnet (its probe is on port 23 only).
Usage: telnet_crafted_pcap.py OUT.pcap (tests/data/telnet-crafted-ref.json holds what
the reference, Suricata 8.0.6, writes for it with telnet-crafted.rules).
"""
import sys
from scapy.all import Ether, IP, TCP, wrpcap

IAC, DONT, DO, WONT, WILL, SB, SE = 255, 254, 253, 252, 251, 250, 240


def iac(*b):
    return bytes([IAC, *b])


def sb(opt, body):
    return iac(SB, opt) + body + iac(SE)


NEGOTIATE_S = iac(DO, 24) + iac(DO, 32) + iac(DO, 35) + iac(DO, 39)
NEGOTIATE_C = iac(WILL, 24) + iac(WILL, 32) + iac(WONT, 35) + iac(WILL, 39)
SB_S = sb(32, b'\x01') + sb(39, b'\x01') + sb(24, b'\x01')
SB_C = sb(32, b'\x0038400,38400') + sb(39, b'\x00') + sb(24, b'\x00XTERM-256COLOR')
OPTS_S = iac(WILL, 3) + iac(DO, 1) + iac(DONT, 31) + iac(WILL, 1)
OPTS_C = iac(DO, 3) + iac(WONT, 1) + iac(WONT, 31) + iac(DO, 1)

LOGIN = [
    (0, NEGOTIATE_S), (1, NEGOTIATE_C), (0, SB_S), (1, SB_C), (0, OPTS_S), (1, OPTS_C),
    (0, b'Ubuntu 22.04.3 LTS\r\nhost login: '), (1, b'root\r\n'),
    (0, b'Password: '), (1, b'secret\r\n'),
    (0, b'\r\nLast login: Mon Dec  7 05:00:00 2026\r\n'), (0, b'root@host:~# '),
    (1, b'id\r\n'), (0, b'uid=0(root) gid=0(root) groups=0(root)\r\n'),
    (0, iac(241) + b'root@host:~# '), (1, iac(244) + b'exit\r\n'), (0, b'logout\r\n'),
]
FAILED = [
    (0, NEGOTIATE_S), (1, NEGOTIATE_C), (0, b'host login: '), (1, b'admin\r\n'),
    (0, b'Password: '), (1, b'admin\r\n'), (0, b'\r\nLogin incorrect\r\n'),
    (0, b'host login: '), (1, b'root\r\n'), (0, b'Password: '), (1, b'toor\r\n'),
    (0, b'\r\nWelcome\r\n$ '), (1, b'ls\r\n'),
]
SPLIT = [
    (0, NEGOTIATE_S), (1, iac(WILL, 24)[:1]), (1, iac(WILL, 24)[1:] + b'\r\n'),
    (0, b'login: '), (1, b'guest\r\n'),
]
CUT = [
    (0, NEGOTIATE_S), (1, iac(WILL, 24)[:2]), (1, iac(WILL, 24)[2:] + b'\r\n'), (0, b'login: '),
    (1, b'root\r\n'),
]
UNENDED = [
    (0, NEGOTIATE_S), (1, iac(SB, 24, 0) + b'VT100'), (1, b' and more'), (0, b'login: '),
]

pkts = []
t = [1700000000.0]


def add(p):
    p.time = t[0]
    t[0] += 0.01
    pkts.append(p)


def session(client, server, cport, sport, msgs):
    mk = lambda src, dst, sp, dp: Ether(src='02:00:00:00:00:01', dst='02:00:00:00:00:02') / IP(src=src, dst=dst) / TCP(sport=sp, dport=dp)
    cs, ss = 1000, 5000
    c = lambda **kw: mk(client, server, cport, sport) / TCP(**kw) if False else None
    def tc(flags, seq, ack, data=b''):
        p = mk(client, server, cport, sport)
        p[TCP].flags, p[TCP].seq, p[TCP].ack, p[TCP].window = flags, seq, ack, 65535
        return p / data if data else p
    def ts(flags, seq, ack, data=b''):
        p = mk(server, client, sport, cport)
        p[TCP].flags, p[TCP].seq, p[TCP].ack, p[TCP].window = flags, seq, ack, 65535
        return p / data if data else p
    add(tc('S', cs, 0)); add(ts('SA', ss, cs + 1)); cs += 1; ss += 1; add(tc('A', cs, ss))
    for to_server, data in msgs:
        if to_server:
            add(tc('PA', cs, ss, data)); cs += len(data); add(ts('A', ss, cs))
        else:
            add(ts('PA', ss, cs, data)); ss += len(data); add(tc('A', cs, ss))
    add(tc('FA', cs, ss)); cs += 1; add(ts('FA', ss, cs)); ss += 1; add(tc('A', cs, ss))


session('10.0.0.1', '10.0.0.2', 50001, 23, LOGIN)
session('10.0.0.1', '10.0.0.2', 50002, 23, FAILED)
session('10.0.0.1', '10.0.0.2', 50003, 23, SPLIT)
session('10.0.0.1', '10.0.0.2', 50004, 23, UNENDED)
session('10.0.0.1', '10.0.0.2', 50005, 2323, LOGIN)
session('10.0.0.1', '10.0.0.2', 50006, 23, CUT)
wrpcap(sys.argv[1], pkts)
