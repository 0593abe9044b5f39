#!/usr/bin/env python3
"""dcerpc-udp.pcap: connectionless DCE/RPC (version 4) over UDP, which the corpus lacks
(python3 dcerpc_udp_pcap.py OUT). Calls on port 135 and on another port; fragmented
requests and responses (one set of fragments out of order); a big-endian request;
unanswered requests; PING, WORKING, FAULT, NOCALL, REJECT and ACK PDUs (parse errors
that end the flow's calls); two calls of one activity answered in reverse order; a
response without its request; repeated requests; PDUs that are no DCE/RPC (version 5,
bad flags, too short, a body shorter than its length).

dcerpc-udp.eve.json holds the dcerpc, alert and flow events Suricata 8.0.6 writes for
it with dcerpc-udp.rules (`../shared/tools/suricata-ref -k none`).
"""
import struct, sys, uuid
def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return (~s) & 0xffff
def ip4(src, dst, proto, l4):
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(l4), 1, 0, 64, proto, 0, bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return b'\x02\x00\x00\x00\x00\x02' + b'\x02\x00\x00\x00\x00\x01' + b'\x08\x00' + ip + l4
def udp(src, dst, sp, dp, payload):
    u = struct.pack('!HHHH', sp, dp, 8 + len(payload), 0) + payload
    ph = bytes(src) + bytes(dst) + struct.pack('!BBH', 0, 17, len(u))
    c = csum(ph + u) or 0xffff
    return ip4(src, dst, 17, u[:6] + struct.pack('!H', c) + u[8:])
IFACE = uuid.UUID('e1af8308-5d1f-11c9-91a4-08002b14a0fa')  # epmapper
IFACE2 = uuid.UUID('12345778-1234-abcd-ef00-0123456789ac') # samr
ACT = uuid.UUID('11111111-2222-3333-4444-555555555555')
ACT2 = uuid.UUID('aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee')
def cl(ptype, body, iface=IFACE, act=ACT, seq=1, opnum=3, flags1=0x00, fragnum=0, le=True, vers=(3,0), flags2=0, rpc_vers=4):
    e = '<' if le else '>'
    u = (lambda x: x.bytes_le) if le else (lambda x: x.bytes)
    drep = bytes([0x10 if le else 0x00, 0, 0])
    h = bytes([rpc_vers, ptype, flags1, flags2]) + drep + b'\x00' + u(uuid.UUID(int=0)) + u(iface) + u(act)
    h += struct.pack(e+'IIIHHHHHBB', 0, vers[0] | (vers[1] << 16), seq, opnum, 0, 0xffff, len(body), fragnum, 0, 0)
    return h + body
C=[10,0,0,1]; S=[10,0,0,2]
out=[]
def c2s(p, d, port=135): out.append(udp(C,S,p,port,d))
def s2c(p, d, port=135): out.append(udp(S,C,port,p,d))
# 1: simple request/response LE
c2s(50001, cl(0, b'\x01\x02\x03\x04' * 8, seq=1, opnum=3)); s2c(50001, cl(2, b'\xaa' * 20, seq=1, opnum=3, flags1=0x00))
# 2: fragmented request (2 frags) then fragmented response (2 frags), same flow, seq 2
c2s(50002, cl(0, b'\x11' * 30, seq=2, opnum=7, flags1=0x04, fragnum=0)); c2s(50002, cl(0, b'\x22' * 10, seq=2, opnum=7, flags1=0x06, fragnum=1))
s2c(50002, cl(2, b'\x33' * 16, seq=2, opnum=7, flags1=0x04, fragnum=0)); s2c(50002, cl(2, b'\x44' * 4, seq=2, opnum=7, flags1=0x06, fragnum=1))
# 3: big endian, samr iface, request unanswered; then a second request other activity
c2s(50003, cl(0, b'\x00\x00\x00\x05abcdefgh', iface=IFACE2, seq=9, opnum=57, le=False, vers=(1,0))); c2s(50003, cl(0, b'\x55'*8, act=ACT2, seq=1, opnum=1))
# 4: ping / working / nocall / fault / reject / ack / fack
c2s(50004, cl(0, b'\x66'*8, seq=5)); c2s(50004, cl(1, b'', seq=5)); s2c(50004, cl(4, b'', seq=5)); s2c(50004, cl(3, b'\x05\x00\x00\x00', seq=5)); c2s(50004, cl(7, b'', seq=5))
c2s(50005, cl(0, b'\x66'*8, seq=6)); s2c(50005, cl(5, b'', seq=6)); s2c(50005, cl(6, b'\x01\x00\x00\x1c', seq=6))
# 7: other port
c2s(50007, cl(0, b'\x99'*8, seq=1), port=1030); s2c(50007, cl(2, b'\x99'*8, seq=1), port=1030)
# 8: not dcerpc: version 5 / bad drep
c2s(50008, cl(0, b'\x99'*8, rpc_vers=5))
c2s(50009, cl(0, b'\x99'*8, flags2=0x04))
# 10: request with 3 fragments out of order, response with frag num
c2s(50010, cl(0, b'A'*8, seq=3, flags1=0x04, fragnum=0)); c2s(50010, cl(0, b'C'*8, seq=3, flags1=0x06, fragnum=2)); c2s(50010, cl(0, b'B'*8, seq=3, flags1=0x04, fragnum=1)); s2c(50010, cl(2, b'R'*8, seq=3))
# 11: two requests same activity different seq, responses reversed order
c2s(50011, cl(0, b'x'*8, seq=10, opnum=1)); c2s(50011, cl(0, b'y'*8, seq=11, opnum=2)); s2c(50011, cl(2, b'Y'*8, seq=11, opnum=2)); s2c(50011, cl(2, b'X'*8, seq=10, opnum=1))
# 12: short packet
c2s(50012, cl(0, b'z'*8)[:60])
p=51000
def case(n, pkts):
    global p
    for d,m in pkts:
        (c2s if d=='c' else s2c)(p, m)
    p+=1
case('A req,ping,resp', [('c',cl(0,b'a'*8,seq=1)),('c',cl(1,b'',seq=1)),('s',cl(2,b'b'*8,seq=1))])
case('B req,ping,req2,resp2', [('c',cl(0,b'a'*8,seq=1)),('c',cl(1,b'',seq=1)),('c',cl(0,b'c'*8,seq=2)),('s',cl(2,b'd'*8,seq=2))])
case('D req1,resp2,req3,resp3', [('c',cl(0,b'a'*8,seq=1)),('s',cl(2,b'b'*8,seq=2)),('c',cl(0,b'c'*8,seq=3)),('s',cl(2,b'd'*8,seq=3))])
case('E req1,resp2,fault', [('c',cl(0,b'a'*8,seq=1)),('s',cl(2,b'b'*8,seq=2)),('s',cl(3,b'\0'*4,seq=2))])
case('F opnum0', [('c',cl(0,b'e'*8,seq=1,opnum=0)),('s',cl(2,b'f'*8,seq=1))])
case('G req frag only, resp', [('c',cl(0,b'g'*8,seq=1,flags1=0x04)),('s',cl(2,b'h'*8,seq=1))])
case('H resp frag only then req', [('c',cl(0,b'i'*8,seq=1)),('s',cl(2,b'j'*8,seq=1,flags1=0x04)),('s',cl(2,b'k'*8,seq=1,flags1=0x06,fragnum=1))])
case('I req short body', [('c',cl(0,b'i'*8,seq=1)),('c',cl(0,b'x'*8,seq=2)[:-3]),('s',cl(2,b'j'*8,seq=1))])
case('J trailing bytes', [('c',cl(0,b'i'*8,seq=1)+b'TRAIL'),('s',cl(2,b'j'*8,seq=1)+b'TT')])
case('K req dup after done', [('c',cl(0,b'i'*8,seq=1)),('c',cl(0,b'i'*8,seq=1)),('s',cl(2,b'j'*8,seq=1)),('s',cl(2,b'j'*8,seq=1))])
case('L v4 ptype 2 first frag', [('c',cl(0,b'm'*8,seq=1,opnum=9)),('s',cl(4,b'',seq=1)),('s',cl(2,b'n'*8,seq=1))])
with open(sys.argv[1],'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for n, fr in enumerate(out):
        f.write(struct.pack('<IIII', 1700000000 + n // 100, (n % 100) * 1000, len(fr), len(fr)) + fr)
