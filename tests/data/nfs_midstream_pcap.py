#!/usr/bin/env python3
"""nfs-midstream.pcap: NFSv3 TCP flows whose capture starts mid-stream (no handshake;
Suricata's stream.midstream): :820 inside a call record, then whole records; :821
with a reply, then calls and replies; :822 inside a record, the segment holding its
rest and a whole call. Usage: nfs_midstream_pcap.py OUT.pcap"""
import struct, sys
from scapy.all import Ether, IP, TCP, UDP, Raw, wrpcap

from nfs_rpc import *
# Flow 820: midstream, starts inside a call record, then whole records.
cs, ss = 5000, 9000
def c(sport, data):
    global cs
    emit(Ether() / IP(src=C, dst=S) / TCP(sport=sport, dport=2049, flags='PA', seq=cs, ack=ss) / Raw(data)); cs += len(data)
    emit(Ether() / IP(src=S, dst=C) / TCP(sport=2049, dport=sport, flags='A', seq=ss, ack=cs))
def s_(sport, data):
    global ss
    emit(Ether() / IP(src=S, dst=C) / TCP(sport=2049, dport=sport, flags='PA', seq=ss, ack=cs) / Raw(data)); ss += len(data)
    emit(Ether() / IP(src=C, dst=S) / TCP(sport=sport, dport=2049, flags='A', seq=cs, ack=ss))
q0 = rm(call(0x4000, 3, 3, dirop(DIR, b'zero.txt')))
c(820, q0[50:])
s_(820, rm(LOOKUP_REPLY(0x4000)))
for i in range(3):
    c(820, rm(call(0x4001 + i, 3, 3, dirop(DIR, b'f%d.txt' % i))))
    s_(820, rm(LOOKUP_REPLY(0x4001 + i)))
# Flow 821: midstream, starts with a reply (server first), then calls.
cs, ss = 7000, 11000
s_(821, rm(LOOKUP_REPLY(0x5000)))
for i in range(2):
    c(821, rm(call(0x5001 + i, 3, 3, dirop(DIR, b'g%d.txt' % i))))
    s_(821, rm(LOOKUP_REPLY(0x5001 + i)))
# Flow 822: midstream inside a record, the segment holding the rest and a whole call.
cs, ss = 3000, 4000
q1 = rm(call(0x6001, 3, 3, dirop(DIR, b'h1.txt')))
c(822, q0[60:] + q1)
s_(822, rm(LOOKUP_REPLY(0x6001)))
c(822, rm(call(0x6002, 3, 3, dirop(DIR, b'h2.txt'))))
s_(822, rm(LOOKUP_REPLY(0x6002)))
wrpcap(sys.argv[1], pkts)
