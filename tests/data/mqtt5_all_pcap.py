# Writes tests/data/mqtt5-all.pcap: one MQTT 5 session with every packet type and
# properties (python3 mqtt5_all_pcap.py mqtt5-all.pcap). mqtt5-all.mqtt.json holds the
# `mqtt` records Suricata 8.0.6 (../shared/tools/suricata-ref -k none) writes for it.
import struct,sys
def csum(b):
    if len(b)%2: b+=b'\0'
    s=sum(struct.unpack('!%dH'%(len(b)//2),b)); s=(s>>16)+(s&0xffff); s+=s>>16; return (~s)&0xffff
def pkt(src,dst,sp,dp,seq,ack,flags,payload=b''):
    tcp=struct.pack('!HHIIBBHHH',sp,dp,seq,ack,5<<4,flags,65535,0,0)+payload
    ph=bytes(src)+bytes(dst)+struct.pack('!BBH',0,6,len(tcp))
    c=csum(ph+tcp); tcp=tcp[:16]+struct.pack('!H',c)+tcp[18:]
    ip=struct.pack('!BBHHHBBH4s4s',0x45,0,20+len(tcp),1,0,64,6,0,bytes(src),bytes(dst))
    ip=ip[:10]+struct.pack('!H',csum(ip))+ip[12:]
    return b'\x00'*12+b'\x08\x00'+ip+tcp
C=[10,0,0,1]; S=[10,0,0,2]; cp=40000; sp=1883
def vi(n):
    o=b''
    while True:
        b=n&0x7f; n>>=7
        o+=bytes([b|(0x80 if n else 0)])
        if not n: return o
def mq(t,body): return bytes([t])+vi(len(body))+body
def s(x): return struct.pack('!H',len(x))+x
def props(p): return vi(len(p))+p
msgs=[
 ('c', mq(0x10, s(b'MQTT')+b'\x05\xc6\x00\x3c'+props(b'\x11\x00\x00\x00\x3c\x21\x00\x14\x26'+s(b'k')+s(b'v'))+s(b'cid')+props(b'\x18\x00\x00\x00\x05')+s(b'will/t')+s(b'bye\xff')+s(b'user')+s(b'pa\xffss'))),
 ('s', mq(0x20, b'\x01\x00'+props(b'\x22\x00\x0a\x12'+s(b'assigned')+b'\x24\x01'))),
 ('c', mq(0x82, b'\x00\x05'+props(b'\x0b\x07')+s(b'a/b')+b'\x01'+s(b'c/#')+b'\x02')),
 ('s', mq(0x90, b'\x00\x05'+props(b'\x1f'+s(b'ok'))+b'\x01\x80')),
 ('c', mq(0x32, s(b'a/b')+b'\x00\x09'+props(b'\x01\x01\x03'+s(b'text/plain')+b'\x09'+s(b'\x01\x02'))+b'hello')),
 ('s', mq(0x40, b'\x00\x09\x10'+props(b'\x1f'+s(b'nomatch')))),
 ('c', mq(0x34, s(b'q2')+b'\x00\x0a'+props(b'')+b'x')),
 ('s', mq(0x50, b'\x00\x0a')),
 ('c', mq(0x62, b'\x00\x0a\x00'+props(b''))),
 ('s', mq(0x70, b'\x00\x0a')),
 ('c', mq(0xa2, b'\x00\x06'+props(b'\x26'+s(b'u')+s(b'p'))+s(b'a/b'))),
 ('s', mq(0xb0, b'\x00\x06'+props(b'')+b'\x00')),
 ('c', mq(0xf0, b'\x18'+props(b'\x15'+s(b'SCRAM')+b'\x16'+s(b'\x00\xff')))),
 ('c', mq(0xc0, b'')),
 ('s', mq(0xd0, b'')),
 ('c', mq(0xe0, b'\x04'+props(b'\x1f'+s(b'done')))),
]
out=[]
cs,ss=1000,5000
out.append(pkt(C,S,cp,sp,cs,0,0x02)); out.append(pkt(S,C,sp,cp,ss,cs+1,0x12)); cs+=1; ss+=1
out.append(pkt(C,S,cp,sp,cs,ss,0x10))
for d,m in msgs:
    if d=='c':
        out.append(pkt(C,S,cp,sp,cs,ss,0x18,m)); cs+=len(m); out.append(pkt(S,C,sp,cp,ss,cs,0x10))
    else:
        out.append(pkt(S,C,sp,cp,ss,cs,0x18,m)); ss+=len(m); out.append(pkt(C,S,cp,sp,cs,ss,0x10))
out.append(pkt(C,S,cp,sp,cs,ss,0x11)); cs+=1
out.append(pkt(S,C,sp,cp,ss,cs,0x11)); ss+=1
out.append(pkt(C,S,cp,sp,cs,ss,0x10))
f=open(sys.argv[1],'wb'); f.write(struct.pack('<IHHiIII',0xa1b2c3d4,2,4,0,0,65535,1))
for i,p in enumerate(out):
    f.write(struct.pack('<IIII',1700000000+i,0,len(p),len(p))+p)
