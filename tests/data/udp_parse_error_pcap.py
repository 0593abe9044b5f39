#!/usr/bin/env python3
"""udp-parse-error.pcap: for each of SNMP, IKE and mDNS, the first datagram of a crafted
pcap (tests/data/*-crafted.pcap) and, on the same flow, a datagram its parser refuses.
Usage: udp_parse_error_pcap.py OUT.pcap SRC.pcap HEX [SRC.pcap HEX ...] (PORT=n picks the
first datagram to or from port n). tests/data/udp-parse-error.json holds the alerts the
reference, Suricata 8.0.6, writes for it with udp-parse-error.rules."""
import struct,sys
def readpcap(p):
    d=open(p,'rb').read(); hdr=d[:24]; off=24; pk=[]
    while off<len(d):
        ts,us,cl,ol=struct.unpack('<IIII',d[off:off+16]); pk.append((ts,us,d[off+16:off+16+cl])); off+=16+cl
    return hdr,pk
def garbage(frame, payload):
    # ethernet + ipv4 + udp
    ihl=(frame[14]&15)*4; ip=frame[14:14+ihl]; udp=frame[14+ihl:14+ihl+8]
    udp=udp[:4]+struct.pack('>HH',8+len(payload),0)
    ip=ip[:2]+struct.pack('>H',ihl+8+len(payload))+ip[4:10]+b'\0\0'+ip[12:]
    return frame[:14]+ip+udp+payload
out=[]
hdr=None
for src,pay in [(sys.argv[i],bytes.fromhex(sys.argv[i+1])) for i in range(2,len(sys.argv),2)]:
    hdr,pk=readpcap(src)
    import os
    port=int(os.environ.get('PORT','0'))
    def ok(fr):
        if not port: return True
        if fr[12:14]!=b'\x08\x00' or fr[23]!=17: return False
        ihl=(fr[14]&15)*4; sp,dp=struct.unpack('>HH',fr[14+ihl:18+ihl]); return port in (sp,dp)
    f=[p for p in pk if ok(p[2])][0]
    out.append(f); out.append((f[0],f[1]+1,garbage(f[2],pay)))
with open(sys.argv[1],'wb') as o:
    o.write(hdr)
    for ts,us,fr in out: o.write(struct.pack('<IIII',ts,us,len(fr),len(fr))+fr)
