"""Writes community-id.pcap: flows whose EVE `community_id` (outputs.eve-log.community-id)
is checked against the reference's in tests/community_id.rs: a TCP connection with an
HTTP exchange (the Community ID specification's example tuple), a UDP DNS query and
answer, an ICMP echo request and reply, an ICMP timestamp request without reply, an
ICMPv6 echo request, IPv6 UDP, a flow whose two addresses are equal (ordered by port),
and ICMP error reports (which are not flows of their own)."""
import sys
from scapy.all import Ether, IP, IPv6, TCP, UDP, ICMP, ICMPv6EchoRequest, Raw, DNS, DNSQR, DNSRR
from svcpcap import Capture, Tcp

cap = Capture()
t = Tcp(cap, '128.232.110.120', '66.35.250.204', 34855, 80)
t.send(True, b'GET /cid HTTP/1.1\r\nHost: example.com\r\n\r\n')
t.send(False, b'HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok')
t.close()
cap.add(Ether() / IP(src='192.168.1.52', dst='8.8.8.8') / UDP(sport=54585, dport=53) /
        DNS(id=7, rd=1, qd=DNSQR(qname='example.com')))
cap.add(Ether() / IP(src='8.8.8.8', dst='192.168.1.52') / UDP(sport=53, dport=54585) /
        DNS(id=7, qr=1, ra=1, qd=DNSQR(qname='example.com'),
            an=DNSRR(rrname='example.com', rdata='93.184.216.34')))
cap.add(Ether() / IP(src='10.0.0.9', dst='10.0.0.1') / ICMP(type=8, id=1, seq=1) / Raw(b'ping'))
cap.add(Ether() / IP(src='10.0.0.1', dst='10.0.0.9') / ICMP(type=0, id=1, seq=1) / Raw(b'ping'))
cap.add(Ether() / IP(src='10.0.0.9', dst='10.0.0.1') / ICMP(type=13, id=2, seq=1))
cap.add(Ether() / IPv6(src='2001:db8::9', dst='2001:db8::1') / ICMPv6EchoRequest(id=3, seq=1))
t6 = Tcp(cap, '10.0.0.3', '10.0.0.4', 40000, 8080)
t6.send(True, b'hello')
t6.close()
cap.add(Ether() / IPv6(src='2001:db8::2', dst='2001:db8::1') / UDP(sport=5000, dport=6000) / Raw(b'x'))
cap.add(Ether() / IP(src='10.0.0.5', dst='10.0.0.5') / UDP(sport=7000, dport=6000) / Raw(b'y'))
# A query to a closed port and the port-unreachable report, which belongs to the UDP
# flow; a time-exceeded report from a router, which belongs to no flow.
q = IP(src='10.0.0.7', dst='10.0.0.8') / UDP(sport=33000, dport=9999) / Raw(b'knock')
cap.add(Ether() / q)
cap.add(Ether() / IP(src='10.0.0.8', dst='10.0.0.7') / ICMP(type=3, code=3) / bytes(q)[:28])
cap.add(Ether() / IP(src='10.0.0.254', dst='10.0.0.7') / ICMP(type=11, code=0) / bytes(q)[:28])
cap.write(sys.argv[1] if len(sys.argv) > 1 else 'community-id.pcap')
