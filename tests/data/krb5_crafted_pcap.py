#!/usr/bin/env python3
"""krb5-crafted.pcap: Kerberos 5 that the corpus lacks (python3 krb5_crafted_pcap.py OUT).

- UDP 88: AS-REQ, KRB-ERROR (PREAUTH_REQUIRED), AS-REQ with padata, AS-REP (reply
  encrypted with rc4-hmac, a weak type; ticket aes256), TGS-REQ (cifs/fs1), TGS-REP
  (reply aes256, ticket des-cbc-md5).
- TCP 88: an AS-REQ cut over two segments (record mark in the first), an AS-REP with
  unusual encryption types, a KRB-ERROR of an unknown code with e-text, an AP-REQ (no
  transaction), an application tag Suricata does not parse, a malformed AS-REQ.
- UDP 88: a TGS-REQ without cname, two KRB-ERRORs (the second answers no request).
- UDP and TCP on port 8888: an AS-REQ (detection off the port).
- TCP 88: an AS-REQ and a record without a whole DER header in one segment (a parse
  error: nothing more of the flow is parsed).
- UDP 88: datagrams that are no Kerberos after a good one.

krb5-crafted.eve.json holds the krb5, alert, anomaly and flow events Suricata 8.0.6 writes for it with
krb5-crafted.rules (`../shared/tools/suricata-ref -k none`).
"""
import struct, sys


def tlv(t, b):
    n = len(b)
    if n < 128:
        l = bytes([n])
    elif n < 256:
        l = bytes([0x81, n])
    else:
        l = bytes([0x82, n >> 8, n & 0xff])
    return bytes([t]) + l + b


def seq(*x): return tlv(0x30, b''.join(x))
def ctx(n, b): return tlv(0xa0 | n, b)
def app(n, b): return tlv(0x60 | n, b)


def integer(v):
    b = v.to_bytes(4, 'big', signed=True)
    while len(b) > 1 and ((b[0] == 0 and b[1] < 0x80) or (b[0] == 0xff and b[1] >= 0x80)):
        b = b[1:]
    return tlv(0x02, b)


def gstr(s): return tlv(0x1b, s.encode())
def gtime(s): return tlv(0x18, s.encode())
def octets(b): return tlv(0x04, b)
def bits(b): return tlv(0x03, b'\x00' + b)
def principal(kind, *names): return seq(ctx(0, integer(kind)), ctx(1, seq(*[gstr(n) for n in names])))
def encrypted(etype, cipher, kvno=None):
    return seq(ctx(0, integer(etype)), *([ctx(1, integer(kvno))] if kvno is not None else []), ctx(2, octets(cipher)))


def ticket(realm, sname, etype):
    return app(1, seq(ctx(0, integer(5)), ctx(1, gstr(realm)), ctx(2, sname), ctx(3, encrypted(etype, b'\x11' * 40, 2))))


def kdc_req(msg, realm, sname, cname=None, etypes=(18, 23), padata=None):
    body = [ctx(0, bits(b'\x40\x81\x00\x10'))]
    if cname is not None:
        body.append(ctx(1, cname))
    body.append(ctx(2, gstr(realm)))
    if sname is not None:
        body.append(ctx(3, sname))
    body += [ctx(5, gtime('20370913024805Z')), ctx(7, integer(12345)), ctx(8, seq(*[integer(e) for e in etypes]))]
    parts = [ctx(1, integer(5)), ctx(2, integer(msg))]
    if padata is not None:
        parts.append(ctx(3, seq(*[seq(ctx(1, integer(t)), ctx(2, octets(v))) for t, v in padata])))
    parts.append(ctx(4, seq(*body)))
    return app(msg, seq(*parts))


def kdc_rep(msg, crealm, cname, tkt, etype):
    return app(msg, seq(ctx(0, integer(5)), ctx(1, integer(msg)), ctx(3, gstr(crealm)), ctx(4, cname),
                        ctx(5, tkt), ctx(6, encrypted(etype, b'\x22' * 48, 3))))


def krb_error(code, realm, sname, crealm=None, cname=None, etext=None):
    parts = [ctx(0, integer(5)), ctx(1, integer(30)), ctx(4, gtime('20231114221320Z')), ctx(5, integer(1234)),
             ctx(6, integer(code))]
    if crealm is not None:
        parts.append(ctx(7, gstr(crealm)))
    if cname is not None:
        parts.append(ctx(8, cname))
    parts += [ctx(9, gstr(realm)), ctx(10, sname)]
    if etext is not None:
        parts.append(ctx(11, gstr(etext)))
    return app(30, seq(*parts))


def ap_req(tkt):
    return app(14, seq(ctx(0, integer(5)), ctx(1, integer(14)), ctx(2, bits(b'\x00\x00\x00\x00')), ctx(3, tkt),
                       ctx(4, encrypted(23, b'\x33' * 30))))


R = 'EXAMPLE.COM'
KRBTGT = principal(2, 'krbtgt', R)
ALICE = principal(1, 'alice')
as_req = kdc_req(10, R, KRBTGT, ALICE)
as_req_pa = kdc_req(10, R, KRBTGT, ALICE, padata=[(2, b'\x30\x00'), (128, b'\x30\x05\xa0\x03\x01\x01\xff')])
err_preauth = krb_error(25, R, KRBTGT, etext='NEEDED_PREAUTH')
as_rep = kdc_rep(11, R, ALICE, ticket(R, KRBTGT, 18), 23)
tgs_req = kdc_req(12, R, principal(2, 'cifs', 'fs1.example.com'), padata=[(1, ap_req(ticket(R, KRBTGT, 18)))])
tgs_rep = kdc_rep(13, R, ALICE, ticket(R, principal(2, 'cifs', 'fs1.example.com'), 3), 18)

as_req_bob = kdc_req(10, 'CORP.TEST', principal(2, 'krbtgt', 'CORP.TEST'), principal(1, 'bob', 'admin'), etypes=(1, 3, 23))
as_rep_odd = kdc_rep(11, 'CORP.TEST', principal(1, 'bob', 'admin'), ticket('CORP.TEST', principal(2, 'krbtgt', 'CORP.TEST'), -133), 99)
err_unknown = krb_error(99, 'CORP.TEST', principal(2, 'krbtgt', 'CORP.TEST'), crealm='CORP.TEST', cname=principal(1, 'bob'), etext='odd')
apreq = ap_req(ticket('CORP.TEST', principal(2, 'host', 'srv'), 18))
cred = app(22, seq(ctx(0, integer(5)), ctx(1, integer(22))))
bad_as_req = app(10, seq(ctx(1, integer(5)), ctx(2, integer(10)), ctx(4, seq(ctx(0, integer(1))))))
tgs_rep_des = kdc_rep(13, 'CORP.TEST', principal(1, 'bob'), ticket('CORP.TEST', principal(2, 'host', 'srv'), 24), 1)

lone_err = krb_error(6, 'LONE.TEST', principal(2, 'krbtgt', 'LONE.TEST'))
tgs_no_cname = kdc_req(12, 'LONE.TEST', principal(2, 'ldap', 'dc1'), padata=[(1, b'\x00')])


def rm(m): return struct.pack('>I', len(m)) + m


def csum(b):
    if len(b) % 2: b += b'\0'
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b)); s = (s >> 16) + (s & 0xffff); s += s >> 16
    return (~s) & 0xffff


def ip4(src, dst, proto, l4):
    ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(l4), 1, 0, 64, proto, 0, bytes(src), bytes(dst))
    ip = ip[:10] + struct.pack('!H', csum(ip)) + ip[12:]
    return b'\x02\x00\x00\x00\x00\x02' + b'\x02\x00\x00\x00\x00\x01' + b'\x08\x00' + ip + l4


def tcp(src, dst, sp, dp, seqn, ack, flags, payload=b''):
    t = struct.pack('!HHIIBBHHH', sp, dp, seqn, ack, 5 << 4, flags, 65535, 0, 0) + payload
    ph = bytes(src) + bytes(dst) + struct.pack('!BBH', 0, 6, len(t))
    c = csum(ph + t); t = t[:16] + struct.pack('!H', c) + t[18:]
    return ip4(src, dst, 6, t)


def udp(src, dst, sp, dp, payload):
    u = struct.pack('!HHHH', sp, dp, 8 + len(payload), 0) + payload
    ph = bytes(src) + bytes(dst) + struct.pack('!BBH', 0, 17, len(u))
    c = csum(ph + u) or 0xffff
    u = u[:6] + struct.pack('!H', c) + u[8:]
    return ip4(src, dst, 17, u)


out = []


def session(C, S, cp, sp, msgs):
    cs, ss = 1000, 5000
    out.append(tcp(C, S, cp, sp, cs, 0, 0x02)); out.append(tcp(S, C, sp, cp, ss, cs + 1, 0x12)); cs += 1; ss += 1
    out.append(tcp(C, S, cp, sp, cs, ss, 0x10))
    for d, m in msgs:
        if d == 'c':
            out.append(tcp(C, S, cp, sp, cs, ss, 0x18, m)); cs += len(m); out.append(tcp(S, C, sp, cp, ss, cs, 0x10))
        else:
            out.append(tcp(S, C, sp, cp, ss, cs, 0x18, m)); ss += len(m); out.append(tcp(C, S, cp, sp, cs, ss, 0x10))
    out.append(tcp(C, S, cp, sp, cs, ss, 0x11)); cs += 1
    out.append(tcp(S, C, sp, cp, ss, cs, 0x11)); ss += 1
    out.append(tcp(C, S, cp, sp, cs, ss, 0x10))


C = [10, 0, 0, 1]; S = [10, 0, 0, 2]
for m, d in [(as_req, 'c'), (err_preauth, 's'), (as_req_pa, 'c'), (as_rep, 's'), (tgs_req, 'c'), (tgs_rep, 's')]:
    out.append(udp(C, S, 40001, 88, m) if d == 'c' else udp(S, C, 88, 40001, m))
first = rm(as_req_bob)
session(C, S, 40002, 88, [('c', first[:30]), ('c', first[30:]), ('s', rm(as_rep_odd)), ('c', rm(apreq)),
                          ('s', rm(err_unknown)), ('c', rm(cred)), ('s', rm(tgs_rep_des)), ('c', rm(bad_as_req))])
out.append(udp(C, S, 40003, 88, tgs_no_cname))
out.append(udp(S, C, 88, 40003, lone_err))
out.append(udp(S, C, 88, 40003, lone_err))
out.append(udp(C, S, 40004, 8888, as_req))
session(C, S, 40005, 8888, [('c', rm(as_req)), ('s', rm(err_preauth))])
session(C, S, 40006, 88, [('c', rm(as_req) + rm(b'\x6a\x84\x00\x00\x10')), ('c', rm(as_req)), ('s', rm(err_preauth))])
out.append(udp(C, S, 40007, 88, as_req))
out.append(udp(C, S, 40007, 88, b'\x6a\x05\x30\x03\x02\x01'))
out.append(udp(C, S, 40007, 88, b'hello there, no kerberos'))
out.append(udp(S, C, 88, 40007, err_preauth))

with open(sys.argv[1], 'wb') as f:
    f.write(struct.pack('<IHHiIII', 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for n, fr in enumerate(out):
        f.write(struct.pack('<IIII', 1700000000 + n // 100, (n % 100) * 1000, len(fr), len(fr)) + fr)
