#!/usr/bin/env python3
"""pgsql-crafted.pcap: PostgreSQL (port 5432) flows for tests/pgsql_eve.rs.
  1. 41001: cleartext password login (startup with parameters), queries returning
     rows, no rows, a NOTICE, an empty query, LISTEN and a notification, Terminate;
  2. 41002: MD5 login (salt), a query, the extended-query messages (Parse, Bind,
     Describe, Execute, Sync) and their answers, Terminate;
  3. 41003: SCRAM-SHA-256 login (SASL initial response, continue, final), a query;
  4. 41004: an ErrorResponse to a query, COPY FROM STDIN (CopyIn, CopyData, CopyDone)
     and COPY TO STDOUT (CopyOut, CopyData, CopyDone);
  5. 41005: SSLRequest refused ('N'), then a plaintext login and a query;
  6. 41006: a CancelRequest on its own connection;
  7. 41007: malformed: an unknown authentication type (GSS) from the server, then a
     an unknown request code (1234.9999), a query with an invalid length;
  8. 41008: oversized: a query announcing 2 GiB that never comes whole;
  9. 41009: SSLRequest accepted ('S'), then a TLS ClientHello (the flow is TLS);
Usage: pgsql_crafted_pcap.py OUT.pcap (tests/data/pgsql-crafted.json holds what the
reference, Suricata 8.0.6 with pgsql enabled, writes for it with pgsql-crafted.rules)."""
import struct, sys
sys.path.insert(0, __file__.rsplit('/', 1)[0])
from websocket_crafted_pcap import Tcp, wrpcap

def msg(t, body):
    return t + struct.pack('>I', 4 + len(body)) + body
def cstr(s):
    return s.encode() + b'\0'
def startup(params, version=(3, 0)):
    body = struct.pack('>HH', *version) + b''.join(cstr(k) + cstr(v) for k, v in params) + b'\0'
    return struct.pack('>I', 4 + len(body)) + body
def auth(kind, extra=b''):
    return msg(b'R', struct.pack('>I', kind) + extra)
def param(k, v):
    return msg(b'S', cstr(k) + cstr(v))
def key_data(pid, key):
    return msg(b'K', struct.pack('>II', pid, key))
def ready(s=b'I'):
    return msg(b'Z', s)
def query(q):
    return msg(b'Q', cstr(q))
def row_desc(names):
    body = struct.pack('>H', len(names))
    for i, n in enumerate(names):
        body += cstr(n) + struct.pack('>IHIhiH', 16384, i + 1, 23, 4, -1, 0)
    return msg(b'T', body)
def data_row(vals):
    body = struct.pack('>H', len(vals))
    for v in vals:
        body += struct.pack('>i', -1) if v is None else struct.pack('>i', len(v)) + v
    return msg(b'D', body)
def complete(tag):
    return msg(b'C', cstr(tag))
def fields(t, fs):
    return msg(t, b''.join(k.encode() + cstr(v) for k, v in fs) + b'\0')
def login_ok(pid, key):
    return (auth(0) + param('application_name', 'psql') + param('client_encoding', 'UTF8')
            + param('server_version', '16.2') + param('TimeZone', 'UTC')
            + key_data(pid, key) + ready())

pkts = []

# 1. Cleartext login and simple queries.
t = Tcp(41001, 5432)
t.send(True, startup([('user', 'alice'), ('database', 'shop'), ('application_name', 'psql'),
                      ('client_encoding', 'UTF8')]))
t.send(False, auth(3))
t.send(True, msg(b'p', cstr('s3cr3t')))
t.send(False, login_ok(4242, 0x11223344))
t.send(True, query('SELECT id, name FROM items;'))
t.send(False, row_desc(['id', 'name']) + data_row([b'1', b'apple']) + data_row([b'2', b'pear'])
       + data_row([b'3', None]) + complete('SELECT 3') + ready())
t.send(True, query('SELECT 1 WHERE false;'))
t.send(False, row_desc(['?column?']) + complete('SELECT 0') + ready())
t.send(True, query('DROP TABLE IF EXISTS gone;'))
t.send(False, fields(b'N', [('S', 'NOTICE'), ('V', 'NOTICE'), ('C', '00000'),
                            ('M', 'table "gone" does not exist, skipping'), ('F', 'tablecmds.c'),
                            ('L', '1294'), ('R', 'DropErrorMsgNonExistent')])
       + complete('DROP TABLE') + ready())
t.send(True, query(';'))
t.send(False, msg(b'I', b'') + ready())
t.send(True, query('LISTEN news;'))
t.send(False, complete('LISTEN') + ready())
t.send(False, msg(b'A', struct.pack('>I', 4343) + cstr('news') + cstr('hello')))
t.send(True, msg(b'X', b''))
pkts += t.close()

# 2. MD5 login, extended query.
t = Tcp(41002, 5432)
t.send(True, startup([('user', 'bob'), ('database', 'inventory')]))
t.send(False, auth(5, b'\xf2\x11\xa3\xed'))
t.send(True, msg(b'p', cstr('md5ceffc01dcde7541829deef6b5e9c9142')))
t.send(False, login_ok(5151, 0xdeadbeef))
t.send(True, query('SELECT now();'))
t.send(False, row_desc(['now']) + data_row([b'2024-01-01 00:00:00+00']) + complete('SELECT 1') + ready())
t.send(True, msg(b'P', cstr('') + cstr('SELECT name FROM items WHERE id = $1') + struct.pack('>H', 0))
       + msg(b'B', cstr('') + cstr('') + struct.pack('>HHi', 0, 1, 1) + b'2' + struct.pack('>H', 0))
       + msg(b'D', b'P' + cstr('')) + msg(b'E', cstr('') + struct.pack('>I', 0)) + msg(b'S', b''))
t.send(False, msg(b'1', b'') + msg(b'2', b'') + row_desc(['name']) + data_row([b'pear'])
       + complete('SELECT 1') + ready())
t.send(True, msg(b'X', b''))
pkts += t.close()

# 3. SCRAM-SHA-256.
t = Tcp(41003, 5432)
t.send(True, startup([('user', 'carol'), ('database', 'ledger'), ('options', '-c geqo=off')]))
t.send(False, auth(10, cstr('SCRAM-SHA-256-PLUS') + cstr('SCRAM-SHA-256') + b'\0'))
first = b'n,,n=,r=rOprNGfwEbeRWgbNEkqO'
t.send(True, msg(b'p', cstr('SCRAM-SHA-256') + struct.pack('>I', len(first)) + first))
t.send(False, auth(11, b'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096'))
t.send(True, msg(b'p', b'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='))
t.send(False, auth(12, b'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=') + login_ok(6161, 0x01020304))
t.send(True, query('SELECT balance FROM accounts WHERE owner = \'carol\';'))
t.send(False, row_desc(['balance']) + data_row([b'100.00']) + complete('SELECT 1') + ready())
t.send(True, msg(b'X', b''))
pkts += t.close()

# 4. Error response, COPY in and out.
t = Tcp(41004, 5432)
t.send(True, startup([('user', 'dave'), ('database', 'shop')]))
t.send(False, login_ok(7171, 0x0a0b0c0d))
t.send(True, query('SELECT * FROM nope;'))
t.send(False, fields(b'E', [('S', 'ERROR'), ('V', 'ERROR'), ('C', '42P01'),
                            ('M', 'relation "nope" does not exist'), ('P', '15'),
                            ('F', 'parse_relation.c'), ('L', '1392'), ('R', 'parserOpenTable')])
       + ready())
t.send(True, query('COPY items FROM STDIN;'))
t.send(False, msg(b'G', b'\0' + struct.pack('>HHH', 2, 0, 0)))
t.send(True, msg(b'd', b'4\tplum\n') + msg(b'd', b'5\tfig\n') + msg(b'c', b''))
t.send(False, complete('COPY 2') + ready())
t.send(True, query('COPY items TO STDOUT;'))
t.send(False, msg(b'H', b'\0' + struct.pack('>HHH', 2, 0, 0)) + msg(b'd', b'1\tapple\n')
       + msg(b'd', b'2\tpear\n') + msg(b'c', b'') + complete('COPY 2') + ready())
t.send(True, msg(b'X', b''))
pkts += t.close()

# 5. SSL refused, then plaintext.
t = Tcp(41005, 5432)
t.send(True, struct.pack('>IHH', 8, 1234, 5679))
t.send(False, b'N')
t.send(True, startup([('user', 'erin'), ('database', 'shop')]))
t.send(False, login_ok(8181, 0x55667788))
t.send(True, query('SELECT version();'))
t.send(False, row_desc(['version']) + data_row([b'PostgreSQL 16.2']) + complete('SELECT 1') + ready())
t.send(True, msg(b'X', b''))
pkts += t.close()

# 6. Cancel request.
t = Tcp(41006, 5432)
t.send(True, struct.pack('>IHHII', 16, 1234, 5678, 4242, 0x11223344))
pkts += t.close()

# 7. Malformed: an unknown authentication type, a bad length.
t = Tcp(41007, 5432)
t.send(True, startup([('user', 'frank'), ('database', 'shop')]))
t.send(False, auth(7) + auth(0) + ready())
t.send(True, query('SELECT 1;'))
t.send(False, row_desc(['?column?']) + data_row([b'1']) + complete('SELECT 1') + ready())
t.send(True, struct.pack('>IHH', 8, 1234, 9999))
t.send(True, query('SELECT 2;'))
t.send(False, row_desc(['?column?']) + data_row([b'2']) + complete('SELECT 1') + ready())
t.send(True, b'Q\x00\x00\x00\x02')
pkts += t.close()

# 8. Oversized.
t = Tcp(41008, 5432)
t.send(True, startup([('user', 'gina'), ('database', 'shop')]))
t.send(False, login_ok(9191, 0x99aabbcc))
t.send(True, b'Q\x7f\xff\xff\xff' + b'SELECT ' + b'x' * 2000)
t.send(True, b'y' * 1000)
pkts += t.close()

# 9. SSL accepted: TLS from then on.
def client_hello(sni):
    ext_sni = struct.pack('>HBH', len(sni) + 3, 0, len(sni)) + sni
    exts = struct.pack('>HH', 0, len(ext_sni)) + ext_sni
    body = (b'\x03\x03' + bytes(range(32)) + b'\x00' + struct.pack('>H', 4) + b'\x13\x01\x13\x02'
            + b'\x01\x00' + struct.pack('>H', len(exts)) + exts)
    hs = b'\x01' + struct.pack('>I', len(body))[1:] + body
    return b'\x16\x03\x01' + struct.pack('>H', len(hs)) + hs
t = Tcp(41009, 5432)
t.send(True, struct.pack('>IHH', 8, 1234, 5679))
t.send(False, b'S')
t.send(True, client_hello(b'db.example.com'))
pkts += t.close()

pkts.sort(key=lambda p: p[0])
wrpcap(sys.argv[1], pkts)
