#!/usr/bin/env python3
"""mdns-crafted.pcap: mDNS over IPv4 that the corpus lacks. A multicast query with the
QU bit; a multicast response with PTR, SRV, TXT (three strings, one empty), A, AAAA,
an unknown type (HINFO) and an NSEC additional; a unicast query from an ephemeral
port and its unicast reply; an announcement with CNAME, MX, an empty TXT and a SOA
authority. Usage: mdns_crafted_pcap.py OUT.pcap (tests/data/mdns-crafted.mdns.json
holds what the reference, Suricata 8.0.6, writes for it with mdns-crafted.rules)."""
import struct, sys
def name(n):
    out=b''
    for l in n.split('.'):
        if l: out+=bytes([len(l.encode())])+l.encode()
    return out+b'\0'
def rr(n,t,data,ttl=120,cls=0x8001):
    return name(n)+struct.pack('>HHIH',t,cls,ttl,len(data))+data
def q(n,t,cls=1): return name(n)+struct.pack('>HH',t,cls)
def msg(id,flags,qs,an,ns=[],ar=[]):
    return struct.pack('>HHHHHH',id,flags,len(qs),len(an),len(ns),len(ar))+b''.join(qs)+b''.join(an)+b''.join(ns)+b''.join(ar)
def csum(b):
    if len(b)%2: b+=b'\0'
    s=sum(struct.unpack('>%dH'%(len(b)//2),b)); s=(s>>16)+(s&0xffff); s+=s>>16; return (~s)&0xffff
def ip4(src,dst,sp,dp,payload):
    udp=struct.pack('>HHHH',sp,dp,8+len(payload),0)+payload
    ph=bytes(src)+bytes(dst)+struct.pack('>BBH',0,17,len(udp))
    c=csum(ph+udp) or 0xffff
    udp=udp[:6]+struct.pack('>H',c)+udp[8:]
    h=struct.pack('>BBHHHBBH4s4s',0x45,0,20+len(udp),1,0,255,17,0,bytes(src),bytes(dst))
    h=h[:10]+struct.pack('>H',csum(h))+h[12:]
    return b'\x01\x00\x5e\x00\x00\xfb'+b'\x02\x00\x00\x00\x00\x01'+b'\x08\x00'+h+udp
A=[192,168,1,10]; M=[224,0,0,251]; B=[192,168,1,20]
msgs=[]
# query with QU bit, two questions
msgs.append((A,M,5353,5353,msg(0,0,[q('_http._tcp.local',12,0x8001),q('printer.local',28)],[])))
# response: PTR, SRV, TXT (multi + empty), A, AAAA, NSEC additional, HINFO unknown
srv=struct.pack('>HHH',0,0,631)+name('printer.local')
txt=b'\x09txtvers=1\x00\x08note=lab'
nsec=name('printer.local')+b'\x00\x04\x40\x00\x00\x08'
hinfo=b'\x03x86\x05Linux'
msgs.append((B,M,5353,5353,msg(0,0x8400,[],[rr('_http._tcp.local',12,name('Printer._http._tcp.local')),
  rr('Printer._http._tcp.local',33,srv), rr('Printer._http._tcp.local',16,txt), rr('printer.local',1,bytes(B)),
  rr('printer.local',28,bytes.fromhex('fe800000000000000000000000000001')), rr('printer.local',13,hinfo)],
  [], [rr('printer.local',47,nsec)])))
# unicast query from ephemeral port and unicast reply
msgs.append((A,B,40000,5353,msg(0x1234,0x0100,[q('printer.local',1)],[])))
msgs.append((B,A,5353,40000,msg(0x1234,0x8400,[q('printer.local',1)],[rr('printer.local',1,bytes(B),ttl=10)])))
# announcement with empty TXT and CNAME, MX, SOA authority
soa=name('ns.local')+name('admin.local')+struct.pack('>IIIII',1,2,3,4,5)
msgs.append((B,M,5353,5353,msg(0,0x8400,[],[rr('alias.local',5,name('printer.local')),rr('mail.local',15,struct.pack('>H',10)+name('mx.local')),rr('empty.local',16,b'\x00')],[rr('local',6,soa)])))
with open(sys.argv[1],'wb') as f:
    f.write(struct.pack('<IHHiIII',0xa1b2c3d4,2,4,0,0,65535,1))
    t=1700000000
    for i,(s,d,sp,dp,p) in enumerate(msgs):
        pkt=ip4(s,d,sp,dp,p)
        f.write(struct.pack('<IIII',t+i,0,len(pkt),len(pkt))); f.write(pkt)
