# Writes tests/data/smtp-starttls.pcap (python3 smtp_starttls_pcap.py OUT.pcap): an SMTP
# session that goes to TLS with STARTTLS (client hello and server hello after the
# server's 220), and one whose STARTTLS is refused (454) and goes on in clear text.
import struct, sys
sys.path.insert(0, __file__.rsplit('/', 1)[0])
from websocket_crafted_pcap import Tcp, wrpcap

def ext(t, data):
    return struct.pack('!HH', t, len(data)) + data

def record(hs_type, body):
    hs = bytes([hs_type]) + struct.pack('!I', len(body))[1:] + body
    return b'\x16\x03\x01' + struct.pack('!H', len(hs)) + hs

sni = b'mail.example.com'
exts = ext(0, struct.pack('!HBH', len(sni) + 3, 0, len(sni)) + sni) + ext(10, bytes.fromhex('0004001d0017'))
suites = bytes.fromhex('c02bc02f009c002f')
client_hello = record(1, b'\x03\x03' + b'\x11' * 32 + b'\x00' + struct.pack('!H', len(suites)) + suites
                      + b'\x01\x00' + struct.pack('!H', len(exts)) + exts)
server_hello = record(2, b'\x03\x03' + b'\x22' * 32 + b'\x00' + bytes.fromhex('c02f') + b'\x00' + b'\x00\x00')

pkts = []
s = Tcp(42001, 25)
s.send(False, b'220 mail.example.com ESMTP\r\n')
s.send(True, b'EHLO client.example.com\r\n')
s.send(False, b'250-mail.example.com\r\n250-PIPELINING\r\n250 STARTTLS\r\n')
s.send(True, b'STARTTLS\r\n')
s.send(False, b'220 2.0.0 Ready to start TLS\r\n')
s.send(True, client_hello)
s.send(False, server_hello)
pkts += s.close()

s = Tcp(42002, 25)
s.send(False, b'220 mail.example.com ESMTP\r\n')
s.send(True, b'EHLO client.example.com\r\n')
s.send(False, b'250 mail.example.com\r\n')
s.send(True, b'STARTTLS\r\n')
s.send(False, b'454 4.7.0 TLS not available\r\n')
s.send(True, b'MAIL FROM:<a@example.com>\r\n')
s.send(False, b'250 OK\r\n')
s.send(True, b'QUIT\r\n')
s.send(False, b'221 Bye\r\n')
pkts += s.close()

wrpcap(sys.argv[1], pkts)
