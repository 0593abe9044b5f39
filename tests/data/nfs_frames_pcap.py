#!/usr/bin/env python3
"""nfs-frames.pcap: NFS records laid out to pin down Suricata 8's NFS frames (and NFSv2
WRITE). TCP 10.0.0.1:810 -> 10.0.0.2:2049, NFSv3: two LOOKUP calls in one segment and
their replies in one; a WRITE of 2000 bytes (UNSTABLE) over three segments, the last
with a GETATTR call behind it, and the two replies in one segment, then a COMMIT; a READ whose 1500-byte
reply comes over two segments; a reply to an unknown xid; a call split at byte 20 (its
header cut). UDP :811: NFSv2 LOOKUP, WRITE (procedure 8) and its reply, a READ; an NFSv4
call over UDP; a reply to an unknown xid. TCP :812: NFSv4 COMPOUND calls (a tag) and
replies, two in one segment. TCP :813: a FILE_SYNC WRITE of 2000 bytes over three
segments. Usage: nfs_frames_pcap.py OUT.pcap"""
import struct, sys
from scapy.all import Ether, IP, TCP, UDP, Raw, wrpcap

from nfs_rpc import *
f = Tcp(810)
f.c(rm(call(0x1001, 3, 3, dirop(DIR, b'one.txt'))) + rm(call(0x1002, 3, 3, dirop(DIR, b'two.txt'))))
f.s(rm(LOOKUP_REPLY(0x1001)) + rm(LOOKUP_REPLY(0x1002)))
DATA = bytes((i * 7) & 0xff for i in range(2000))
w = rm(call(0x1003, 3, 7, opaque(FH) + u64(0) + u32(len(DATA)) + u32(0) + opaque(DATA)))
g = rm(call(0x1004, 3, 1, opaque(FH)))
f.c(w[:600]); f.c(w[600:1400]); f.c(w[1400:] + g)
f.s(rm(reply(0x1003, u32(0) + wcc() + u32(len(DATA)) + u32(0) + u64(0x1122334455667788))) + rm(reply(0x1004, u32(0) + fattr3(2000))))
f.c(rm(call(0x1007, 3, 21, opaque(FH) + u64(0) + u32(0))))
f.s(rm(reply(0x1007, u32(0) + wcc() + u64(0x1122334455667788))))
RDATA = bytes((i * 13) & 0xff for i in range(1500))
f.c(rm(call(0x1005, 3, 6, opaque(FH) + u64(0) + u32(4096))))
r = rm(reply(0x1005, u32(0) + post_op_attr(1500) + u32(len(RDATA)) + u32(1) + opaque(RDATA)))
f.s(r[:700]); f.s(r[700:])
f.s(rm(reply(0x1999, u32(0) + fattr3())))
q = rm(call(0x1006, 3, 1, opaque(FH)))
f.c(q[:20]); f.c(q[20:])
f.s(rm(reply(0x1006, u32(0) + fattr3())))
f.close()

FH2V = bytes(range(32))
FA2 = u32(1) + u32(0o644) + u32(1) + u32(0) + u32(0) + u32(9) + u32(4096) + u32(0) + u32(8) + u32(1) + u32(2) + u64(0) * 3
udp(811, call(0x2001, 2, 4, FH2V + opaque(b'v2write.txt')))
udp(811, reply(0x2001, u32(0) + FH2V + FA2), False)
udp(811, call(0x2002, 2, 8, FH2V + u32(0) + u32(0) + u32(9) + opaque(b'v2 data!\n')))
udp(811, reply(0x2002, u32(0) + FA2), False)
udp(811, call(0x2003, 2, 6, FH2V + u32(0) + u32(4096) + u32(0)))
udp(811, reply(0x2003, u32(0) + FA2 + opaque(b'v2 data!\n')), False)
udp(811, call(0x2004, 4, 1, opaque(b'') + u32(0) + u32(1) + u32(10)))
udp(811, reply(0x2999, u32(0) + FA2), False)

def compound(xid, ops, tag=b''):
    return call(xid, 4, 1, opaque(tag) + u32(0) + u32(len(ops)) + b''.join(ops))
def compound_res(xid, status, res, tag=b''):
    return reply(xid, u32(status) + opaque(tag) + u32(len(res)) + b''.join(res))
FH4 = bytes.fromhex('0a0b0c0d0e0f101112131415161718191a1b1c1d')
putfh = lambda fh: u32(22) + opaque(fh)
f = Tcp(812)
f.c(rm(compound(0x3001, [putfh(FH4), u32(10)], b'tag1')) + rm(compound(0x3002, [u32(24)])))
f.s(rm(compound_res(0x3001, 0, [u32(22) + u32(0), u32(10) + u32(0) + opaque(FH4)], b'tag1')) + rm(compound_res(0x3002, 0, [u32(24) + u32(0)])))
f.close()

# A FILE_SYNC WRITE over three segments (Suricata closes its transaction to more
# chunks at the first, reads the rest of the record as records and gives up).
f = Tcp(813)
f.c(rm(call(0x7001, 3, 3, dirop(DIR, b'sync.txt'))))
f.s(rm(LOOKUP_REPLY(0x7001)))
w = rm(call(0x7002, 3, 7, opaque(FH) + u64(0) + u32(len(DATA)) + u32(2) + opaque(DATA)))
f.c(w[:600]); f.c(w[600:1400]); f.c(w[1400:])
f.s(rm(reply(0x7002, u32(0) + wcc() + u32(len(DATA)) + u32(2) + u64(0x1122334455667788))))
f.close()

wrpcap(sys.argv[1], pkts)
