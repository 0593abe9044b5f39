#!/usr/bin/env python3
"""nfs-crafted.pcap: NFS over ONC-RPC that the corpus lacks.
TCP 10.0.0.1:800 -> 10.0.0.2:2049, NFSv3 (AUTH_UNIX): LOOKUP, CREATE, WRITE of a
small file, READ of it, GETATTR, ACCESS, RENAME, REMOVE, MKDIR, RMDIR, COMMIT,
READDIRPLUS, a LOOKUP answered NFS3ERR_NOENT, a call split in two record fragments
and records split over segments. UDP 10.0.0.1:801 -> :2049: the same kind of
NFSv3 calls (AUTH_NULL). TCP :802: NFSv4 COMPOUND (PUTFH/OPEN/GETFH, PUTFH/READ,
PUTFH/WRITE, PUTFH/REMOVE failing, an unknown operation). UDP :803: NFSv2 LOOKUP and READ. TCP :804: a good call, then a record
whose call is cut short (malformed); TCP :805: a call in two record fragments. Usage: nfs_crafted_pcap.py OUT.pcap
(tests/data/nfs-crafted.ref.json holds what the reference, Suricata 8.0.6, writes
for it with nfs-crafted.rules)."""
import struct, sys
from scapy.all import Ether, IP, TCP, UDP, Raw, wrpcap

import nfs_rpc
from nfs_rpc import *
nfs_rpc.CRED_NAME = b'client1'

FH2 = bytes.fromhex('01000601a1b2c3d4000000000000000000000011')
NO_ATTR = u32(0)
SATTR = u32(0) * 6
DATA = b'hello world\n'

def v3_exchanges(base):
    x = base
    ex = []
    ex.append((call(x + 1, 3, 3, dirop(DIR, b'file.txt')), reply(x + 1, u32(0) + opaque(FH) + post_op_attr() + post_op_attr(0, 2))))
    ex.append((call(x + 2, 3, 8, dirop(DIR, b'new.txt') + u32(0) + SATTR), reply(x + 2, u32(0) + u32(1) + opaque(FH2) + post_op_attr(0) + wcc())))
    ex.append((call(x + 3, 3, 7, opaque(FH2) + u64(0) + u32(len(DATA)) + u32(2) + opaque(DATA)), reply(x + 3, u32(0) + wcc() + u32(len(DATA)) + u32(2) + u64(0x1122334455667788))))
    ex.append((call(x + 4, 3, 6, opaque(FH2) + u64(0) + u32(4096)), reply(x + 4, u32(0) + post_op_attr() + u32(len(DATA)) + u32(1) + opaque(DATA))))
    ex.append((call(x + 5, 3, 1, opaque(FH2)), reply(x + 5, u32(0) + fattr3())))
    ex.append((call(x + 6, 3, 4, opaque(FH2) + u32(0x1f)), reply(x + 6, u32(0) + post_op_attr() + u32(0x1f))))
    ex.append((call(x + 7, 3, 14, dirop(DIR, b'new.txt') + dirop(DIR, b'renamed.txt')), reply(x + 7, u32(0) + wcc() + wcc())))
    ex.append((call(x + 8, 3, 12, dirop(DIR, b'renamed.txt')), reply(x + 8, u32(0) + wcc())))
    ex.append((call(x + 9, 3, 3, dirop(DIR, b'missing')), reply(x + 9, u32(2) + post_op_attr(0, 2))))
    return ex

def v3_extra(base):
    x = base
    ex = []
    ex.append((call(x + 1, 3, 9, dirop(DIR, b'sub') + SATTR), reply(x + 1, u32(0) + u32(1) + opaque(FH) + post_op_attr(0, 2) + wcc())))
    ex.append((call(x + 2, 3, 13, dirop(DIR, b'sub')), reply(x + 2, u32(66) + wcc())))
    ex.append((call(x + 3, 3, 21, opaque(FH2) + u64(0) + u32(0)), reply(x + 3, u32(0) + wcc() + u64(0x1122334455667788))))
    entries = u32(1) + u64(16) + opaque(b'file.txt') + u64(1) + post_op_attr() + u32(1) + opaque(FH) + u32(0) + u32(1)
    ex.append((call(x + 4, 3, 17, opaque(DIR) + u64(0) + u64(0) + u32(4096) + u32(8192)), reply(x + 4, u32(0) + post_op_attr(0, 2) + u64(0) + entries)))
    return ex

# NFSv3 over TCP.
f = Tcp(800)
for q, r in v3_exchanges(0x100) + v3_extra(0x200):
    f.c(rm(q)); f.s(rm(r))
# A call split over two segments, its reply over three.
q = rm(call(0x301, 3, 3, dirop(DIR, b'split.txt')))
f.c(q[:30]); f.c(q[30:])
r = rm(reply(0x301, u32(0) + opaque(FH) + post_op_attr() + post_op_attr(0, 2)))
f.s(r[:10]); f.s(r[10:50]); f.s(r[50:])
f.close()

# NFSv3 over UDP.
for q, r in v3_exchanges(0x400):
    q = q.replace(auth_unix(b'client1', 1000, 100), AUTH_NULL)
    udp(801, q); udp(801, r, False)

# NFSv4 COMPOUND over TCP.
def compound(xid, ops, tag=b''):
    return call(xid, 4, 1, opaque(tag) + u32(0) + u32(len(ops)) + b''.join(ops))
def compound_res(xid, status, res, tag=b''):
    return reply(xid, u32(status) + opaque(tag) + u32(len(res)) + b''.join(res))
FH4 = bytes.fromhex('0a0b0c0d0e0f101112131415161718191a1b1c1d')
FH4F = bytes.fromhex('0a0b0c0d0e0f101112131415161718191a1b1c99')
STATEID = u32(1) + bytes(range(12))
putfh = lambda fh: u32(22) + opaque(fh)
f = Tcp(802)
open_args = u32(18) + u32(0) + u32(3) + u32(0) + u64(0x1234) + opaque(b'owner123') + u32(0) + u32(0) + opaque(b'v4file.txt')
f.c(rm(compound(0x501, [putfh(FH4), open_args, u32(10)])))
open_res = u32(18) + u32(0) + STATEID + u32(1) + u64(1) + u64(2) + u32(4) + u32(1) + u32(0) + u32(0)
f.s(rm(compound_res(0x501, 0, [u32(22) + u32(0), open_res, u32(10) + u32(0) + opaque(FH4F)])))
f.c(rm(compound(0x502, [putfh(FH4F), u32(25) + STATEID + u64(0) + u32(4096)])))
f.s(rm(compound_res(0x502, 0, [u32(22) + u32(0), u32(25) + u32(0) + u32(1) + opaque(DATA)])))
f.c(rm(compound(0x503, [putfh(FH4F), u32(38) + STATEID + u64(0) + u32(2) + opaque(b'v4 data\n')])))
f.s(rm(compound_res(0x503, 0, [u32(22) + u32(0), u32(38) + u32(0) + u32(8) + u32(2) + u64(7)])))
f.c(rm(compound(0x504, [putfh(FH4), u32(28) + opaque(b'nothere')])))
f.s(rm(compound_res(0x504, 2, [u32(22) + u32(0), u32(28) + u32(2)])))
f.c(rm(compound(0x505, [putfh(FH4), u32(99)])))
f.s(rm(compound_res(0x505, 10044, [u32(99) + u32(10044)])))
f.close()

# NFSv2 over UDP.
FH2V = bytes(range(32))
FA2 = u32(1) + u32(0o644) + u32(1) + u32(0) + u32(0) + u32(len(DATA)) + u32(4096) + u32(0) + u32(8) + u32(1) + u32(2) + u64(0) * 3
udp(803, call(0x601, 2, 4, FH2V + opaque(b'v2file.txt')))
udp(803, reply(0x601, u32(0) + FH2V + FA2), False)
udp(803, call(0x602, 2, 6, FH2V + u32(0) + u32(4096) + u32(0)))
udp(803, reply(0x602, u32(0) + FA2 + opaque(DATA)), False)

# Malformed: a good LOOKUP, then a LOOKUP call whose name runs past its record.
f = Tcp(804)
q, r = v3_exchanges(0x700)[0]
f.c(rm(q)); f.s(rm(r))
bad = call(0x702, 3, 3, opaque(DIR) + u32(200) + b'short')
f.c(rm(bad))
f.s(rm(reply(0x702, u32(2) + NO_ATTR)))
f.close()

# A call in two record fragments (Suricata takes each fragment for a record: the
# first is too short for a call, the second has no RPC header), after a good call.
f = Tcp(805)
q, r = v3_exchanges(0x800)[0]
f.c(rm(q)); f.s(rm(r))
q = call(0x802, 3, 3, dirop(DIR, b'fragmented.txt'))
f.c(rm(q[:20], last=False) + rm(q[20:]))
f.s(rm(reply(0x802, u32(2) + NO_ATTR)))
f.close()

wrpcap(sys.argv[1], pkts)
