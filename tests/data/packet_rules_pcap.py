#!/usr/bin/env python3
"""packet-rules.pcap: when header-only rules alert, for tests/packet_rules.rs. TCP
sessions of client-first (HTTP) and server-first (SMTP, FTP, POP3, IMAP) protocols:
closed with FIN, left open at the end of the capture, and one whose response stops
short of its Content-Length. packet-rules.rules holds rules without payload: of a
protocol (`alert http any any -> any any`), with `flow:to_server` or
`flow:established`, plain `tcp`, `tcp-pkt`, `tcp-stream`, with `flags`. What the
reference (Suricata 8.0.6) raises on it is kept in packet-rules.alerts.json: per sid,
the packets (pcap_cnt) it alerted on, and "pseudo SRC>DST" (source and destination
ports) for the pseudo packets of a flow's end. Usage: packet_rules_pcap.py OUT.pcap"""
import sys
from svcpcap import Capture, Tcp

A, B = '10.0.0.1', '10.0.0.2'
c = Capture()
get = b'GET / HTTP/1.1\r\nHost: x\r\n\r\n'
ok = b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi'

# HTTP, closed.
t = Tcp(c, A, B, 40000, 80)
t.send(True, get)
t.send(False, ok)
t.close()
# SMTP without a mail transaction, closed.
t = Tcp(c, A, B, 40001, 25)
t.send(False, b'220 mail.example.com ESMTP\r\n')
t.send(True, b'EHLO x\r\n')
t.send(False, b'250 ok\r\n')
t.send(True, b'QUIT\r\n')
t.send(False, b'221 bye\r\n')
t.close()
# FTP and POP3, closed.
t = Tcp(c, A, B, 40002, 21)
t.send(False, b'220 ftp ready\r\n')
t.send(True, b'USER x\r\n')
t.send(False, b'331 pw\r\n')
t.close()
t = Tcp(c, A, B, 40003, 110)
t.send(False, b'+OK pop3 ready\r\n')
t.send(True, b'USER x\r\n')
t.send(False, b'+OK\r\n')
t.close()
# IMAP with a refused STARTTLS, closed.
t = Tcp(c, A, B, 40004, 143)
t.send(False, b'* OK ready\r\n')
t.send(True, b'a002 STARTTLS\r\n')
t.send(False, b'a002 BAD not now\r\n')
t.close()
# A response shorter than its Content-Length, closed.
t = Tcp(c, A, B, 40005, 80)
t.send(True, get)
t.send(False, b'HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nhi')
t.close()
# HTTP and SMTP left open at the end of the capture.
t = Tcp(c, A, B, 40006, 80)
t.send(True, get)
t.send(False, ok)
t = Tcp(c, A, B, 40007, 25)
t.send(False, b'220 mail.example.com ESMTP\r\n')
t.send(True, b'EHLO x\r\n')
t.send(False, b'250 ok\r\n')
c.write(sys.argv[1])
