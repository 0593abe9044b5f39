#!/usr/bin/env python3
"""Writes the LDAP test capture of tests/ldap_eve.rs (run from this directory): one TCP
connection on port 389 with every operation and its response(s), BER built here,
some messages split over segments and several in one segment; a response to no
request; an unsolicited notice; garbage at the end. Then LDAP over UDP (CLDAP)."""
import struct
from scapy.all import IP, TCP, UDP, Ether, wrpcap

def tlv(tag, body):
    n = len(body)
    if n < 0x80: l = bytes([n])
    elif n < 0x100: l = bytes([0x81, n])
    else: l = bytes([0x82]) + struct.pack(">H", n)
    return bytes([tag]) + l + body

def integer(v, tag=0x02):
    b = v.to_bytes(max(1, (v.bit_length() + 8) // 8), "big", signed=True)
    return tlv(tag, b)
def enum(v): return integer(v, 0x0a)
def octets(s, tag=0x04): return tlv(tag, s if isinstance(s, bytes) else s.encode())
def boolean(b): return tlv(0x01, b"\xff" if b else b"\x00")
def seq(*items, tag=0x30): return tlv(tag, b"".join(items))
def msg(mid, op, controls=None):
    body = integer(mid) + op
    if controls is not None: body += tlv(0xA0, b"".join(controls))
    return seq(body)
def result(code, dn="", text=""): return enum(code) + octets(dn) + octets(text)
def control(oid, crit=None, value=None):
    b = octets(oid)
    if crit is not None: b += boolean(crit)
    if value is not None: b += octets(value)
    return seq(b)

def attrs(pairs):
    return seq(*[seq(octets(t), tlv(0x31, b"".join(octets(v) for v in vs))) for t, vs in pairs])

bind_simple = msg(1, seq(integer(3), octets("cn=admin,dc=example,dc=com"), octets("secret", 0x80), tag=0x60))
bind_resp = msg(1, seq(result(0), tag=0x61))
bind_sasl = msg(2, seq(integer(3), octets(""), seq(octets("GSSAPI"), octets(b"\x01\x02\x03"), tag=0xA3), tag=0x60))
bind_sasl_resp = msg(2, seq(result(14, "", "SASL bind in progress"), octets(b"\xaa\xbb", 0x87), tag=0x61))
flt_present = octets("objectClass", 0x87)
search = msg(3, seq(octets("dc=example,dc=com"), enum(2), enum(0), integer(1000), integer(30), boolean(False),
                    flt_present, seq(octets("cn"), octets("mail")), tag=0x63),
             controls=[control("1.2.840.113556.1.4.319", True, b"\x30\x05\x02\x01\x64\x04\x00")])
entry1 = msg(3, seq(octets("cn=alice,dc=example,dc=com"), attrs([("cn", ["alice"]), ("mail", ["alice@example.com", "a@example.com"])]), tag=0x64))
ref = msg(3, seq(octets("ldap://other.example.com/dc=other"), tag=0x73))
entry2 = msg(3, seq(octets("cn=bob,dc=example,dc=com"), attrs([("cn", ["bob"])]), tag=0x64))
done = msg(3, seq(result(0), tag=0x65))
flt_and = tlv(0xA0, tlv(0xA3, octets("uid") + octets("jdoe")) + tlv(0xA1, tlv(0xA3, octets("cn") + octets("x")) + octets("objectClass", 0x87)))
search2 = msg(4, seq(octets("ou=people,dc=example,dc=com"), enum(1), enum(3), integer(0), integer(0), boolean(True), flt_and, seq(), tag=0x63))
done2 = msg(4, seq(result(32, "dc=example,dc=com", "no such object"), tag=0x65))
modify = msg(5, seq(octets("cn=alice,dc=example,dc=com"), seq(
    seq(enum(2), seq(octets("mail"), tlv(0x31, octets("new@example.com")))),
    seq(enum(1), seq(octets("description"), tlv(0x31, b""))),
    seq(enum(0), seq(octets("telephoneNumber"), tlv(0x31, octets("123") + octets("456"))))), tag=0x66))
modify_resp = msg(5, seq(result(50, "", "insufficient access"), tag=0x67))
add = msg(6, seq(octets("cn=carol,dc=example,dc=com"), attrs([("objectClass", ["person", "top"]), ("sn", ["carol"])]), tag=0x68))
add_resp = msg(6, seq(result(68, "", "entry exists"), tag=0x69))
delete = msg(7, octets("cn=bob,dc=example,dc=com", 0x4A))
delete_resp = msg(7, seq(result(0), tag=0x6B))
moddn = msg(8, seq(octets("cn=alice,dc=example,dc=com"), octets("cn=alicia"), boolean(True), octets("ou=staff,dc=example,dc=com", 0x80), tag=0x6C))
moddn_resp = msg(8, seq(result(0), tag=0x6D))
compare = msg(9, seq(octets("cn=alice,dc=example,dc=com"), seq(octets("sn"), octets("smith")), tag=0x6E))
compare_resp = msg(9, seq(result(6), tag=0x6F))
abandon = msg(10, integer(3, 0x50))
ext = msg(11, seq(octets("1.3.6.1.4.1.1466.20037", 0x80), tag=0x77))
ext_resp = msg(11, seq(result(2, "", "unsupported"), octets("1.3.6.1.4.1.1466.20037", 0x8A), tag=0x78))
ext2 = msg(12, seq(octets("1.3.6.1.4.1.4203.1.11.3", 0x80), octets(b"\x30\x00", 0x81), tag=0x77))
inter = msg(12, seq(octets("1.2.3", 0x80), octets("abc", 0x81), tag=0x79))
ext2_resp = msg(12, seq(result(0), octets("1.3.6.1.4.1.4203.1.11.3", 0x8A), octets("dn:cn=admin", 0x8B), tag=0x78))
orphan = msg(77, seq(result(0), tag=0x6B))
notice = msg(0, seq(result(52, "", "server shutting down"), octets("1.3.6.1.4.1.1466.20036", 0x8A), tag=0x78))
unbind = msg(13, tlv(0x42, b""))

class Tcp:
    def __init__(self, pkts, c, s, sp, dp):
        self.p, self.c, self.s, self.sp, self.dp = pkts, c, s, sp, dp
        self.cs, self.ss = 1000, 5000
        self.t = 1700000000.0
        self.add(self.c, self.s, self.sp, self.dp, "S", self.cs, 0, b""); self.cs += 1
        self.add(self.s, self.c, self.dp, self.sp, "SA", self.ss, self.cs, b""); self.ss += 1
        self.add(self.c, self.s, self.sp, self.dp, "A", self.cs, self.ss, b"")
    def add(self, a, b, sp, dp, fl, seq_, ack, data):
        pk = Ether() / IP(src=a, dst=b) / TCP(sport=sp, dport=dp, flags=fl, seq=seq_, ack=ack) / data
        self.t += 0.001; pk.time = self.t; self.p.append(pk)
    def cli(self, data):
        self.add(self.c, self.s, self.sp, self.dp, "PA", self.cs, self.ss, data); self.cs += len(data)
        self.add(self.s, self.c, self.dp, self.sp, "A", self.ss, self.cs, b"")
    def srv(self, data):
        self.add(self.s, self.c, self.dp, self.sp, "PA", self.ss, self.cs, data); self.ss += len(data)
        self.add(self.c, self.s, self.sp, self.dp, "A", self.cs, self.ss, b"")
    def close(self):
        self.add(self.c, self.s, self.sp, self.dp, "FA", self.cs, self.ss, b""); self.cs += 1
        self.add(self.s, self.c, self.dp, self.sp, "FA", self.ss, self.cs, b""); self.ss += 1
        self.add(self.c, self.s, self.sp, self.dp, "A", self.cs, self.ss, b"")

pk = []
t = Tcp(pk, "10.1.0.1", "10.1.0.2", 40100, 389)
t.cli(bind_simple); t.srv(bind_resp)
t.cli(bind_sasl); t.srv(bind_sasl_resp)
t.cli(search[:10]); t.cli(search[10:])
t.srv(entry1 + ref); t.srv(entry2[:7]); t.srv(entry2[7:] + done)
t.cli(search2); t.srv(done2)
t.cli(modify + add); t.srv(modify_resp); t.srv(add_resp)
t.cli(delete); t.srv(delete_resp)
t.cli(moddn); t.srv(moddn_resp)
t.cli(compare); t.srv(compare_resp)
t.cli(abandon)
t.cli(ext); t.srv(ext_resp)
t.cli(ext2); t.srv(inter); t.srv(ext2_resp)
t.srv(orphan)
t.srv(notice)
t.cli(unbind)
t.close()
# A second connection: garbage from the client after a valid request.
t = Tcp(pk, "10.1.0.1", "10.1.0.2", 40101, 389)
t.cli(bind_simple); t.srv(bind_resp)
t.cli(b"\x30\x05\x02\x01\x02\xff\x00")
t.srv(b"\x30\x03\xde\xad\xbe")
t.close()
# CLDAP over UDP: a search (rootDSE) and its answer.
cl = msg(1, seq(octets(""), enum(0), enum(0), integer(0), integer(0), boolean(False), octets("objectClass", 0x87), seq(octets("netlogon")), tag=0x63))
cla = msg(1, seq(octets(""), attrs([("netlogon", ["\x17\x00"])]), tag=0x64)) + msg(1, seq(result(0), tag=0x65))
for i, (a, b, sp, dp, d) in enumerate([("10.1.0.1", "10.1.0.3", 40200, 389, cl), ("10.1.0.3", "10.1.0.1", 389, 40200, cla)]):
    p = Ether() / IP(src=a, dst=b) / UDP(sport=sp, dport=dp) / d
    p.time = 1700000100.0 + i * 0.001
    pk.append(p)
wrpcap("ldap.pcap", pk)
