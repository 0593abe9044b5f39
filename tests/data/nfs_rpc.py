"""ONC-RPC and NFSv3 encoding shared by the NFS pcap scripts (nfs_*_pcap.py): XDR
helpers, calls and replies, record marking, and a packet list (`pkts`) that TCP
sessions (`Tcp`) and datagrams (`udp`) between C and S on port 2049 append to, with
timestamps 1 ms apart from a fixed start."""
import struct
from scapy.all import Ether, IP, TCP, UDP, Raw

def u32(v): return struct.pack('>I', v)
def u64(v): return struct.pack('>Q', v)
def opaque(b): return u32(len(b)) + b + b'\0' * ((4 - len(b) % 4) % 4)
def auth_unix(name, uid, gid):
    return u32(1) + opaque(u32(0x5f000001) + opaque(name) + u32(uid) + u32(gid) + u32(1) + u32(gid))
AUTH_NULL = u32(0) + u32(0)
# The machine name of the default credentials (a script may set it before its calls).
CRED_NAME = b'host22'
def call(xid, vers, proc, args, cred=None):
    cred = cred if cred is not None else auth_unix(CRED_NAME, 1000, 100)
    return u32(xid) + u32(0) + u32(2) + u32(100003) + u32(vers) + u32(proc) + cred + AUTH_NULL + args
def reply(xid, res):
    return u32(xid) + u32(1) + u32(0) + AUTH_NULL + u32(0) + res
def rm(b, last=True): return u32((0x80000000 if last else 0) | len(b)) + b

DIR = bytes.fromhex('01000601a1b2c3d4000000000000000000000002')
FH = bytes.fromhex('01000601a1b2c3d4000000000000000000000010')
def fattr3(size=12, ftype=1):
    return u32(ftype) + u32(0o644) + u32(1) + u32(1000) + u32(100) + u64(size) + u64(4096) + u64(0) + u64(1) + u64(16) + u64(1700000000 << 32) * 3
def post_op_attr(size=12, ftype=1): return u32(1) + fattr3(size, ftype)
def wcc(): return u32(1) + u64(0) + u64(1700000000 << 32) + u64(1700000000 << 32) + post_op_attr(0, 2)
def dirop(fh, name): return opaque(fh) + opaque(name)

C, S = '10.0.0.1', '10.0.0.2'
pkts = []
t = [1700000000.0]
def emit(p):
    p.time = t[0]; t[0] += 0.001; pkts.append(p)

class Tcp:
    def __init__(self, sport):
        self.sport = sport; self.cs = 1000; self.ss = 5000
        emit(Ether() / IP(src=C, dst=S) / TCP(sport=sport, dport=2049, flags='S', seq=self.cs - 1))
        emit(Ether() / IP(src=S, dst=C) / TCP(sport=2049, dport=sport, flags='SA', seq=self.ss - 1, ack=self.cs))
        emit(Ether() / IP(src=C, dst=S) / TCP(sport=sport, dport=2049, flags='A', seq=self.cs, ack=self.ss))
    def c(self, data):
        emit(Ether() / IP(src=C, dst=S) / TCP(sport=self.sport, dport=2049, flags='PA', seq=self.cs, ack=self.ss) / Raw(data))
        self.cs += len(data)
        emit(Ether() / IP(src=S, dst=C) / TCP(sport=2049, dport=self.sport, flags='A', seq=self.ss, ack=self.cs))
    def s(self, data):
        emit(Ether() / IP(src=S, dst=C) / TCP(sport=2049, dport=self.sport, flags='PA', seq=self.ss, ack=self.cs) / Raw(data))
        self.ss += len(data)
        emit(Ether() / IP(src=C, dst=S) / TCP(sport=self.sport, dport=2049, flags='A', seq=self.cs, ack=self.ss))
    def close(self):
        emit(Ether() / IP(src=C, dst=S) / TCP(sport=self.sport, dport=2049, flags='FA', seq=self.cs, ack=self.ss))
        emit(Ether() / IP(src=S, dst=C) / TCP(sport=2049, dport=self.sport, flags='FA', seq=self.ss, ack=self.cs + 1))
        emit(Ether() / IP(src=C, dst=S) / TCP(sport=self.sport, dport=2049, flags='A', seq=self.cs + 1, ack=self.ss + 1))

def udp(sport, data, to_server=True):
    if to_server:
        emit(Ether() / IP(src=C, dst=S) / UDP(sport=sport, dport=2049) / Raw(data))
    else:
        emit(Ether() / IP(src=S, dst=C) / UDP(sport=2049, dport=sport) / Raw(data))

LOOKUP_REPLY = lambda x: reply(x, u32(0) + opaque(FH) + post_op_attr() + post_op_attr(0, 2))
