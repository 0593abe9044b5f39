"""How tests/data/{pop3-session,pop3-commands,pop3-errors,tftp,imap}.pcap were made (scapy), and
their reference EVE (`<name>.json`: suricata-ref --runmode=single -k none -S mail.rules, stats
left out). The TCP sessions use ftp_data_pcap.py's Conn/W helpers."""
# import sys
# sys.path.insert(0, '/work/scratch-mail')
# from ftpgen import Conn, W
# from scapy.all import wrpcap
# 
# def main(out):
#     w = W()
#     c = Conn(w, "10.0.0.1", 40000, "10.0.0.2", 110)
#     c.open()
#     c.send(1, b"+OK POP3 server ready <1896.697170952@dbc.mtview.ca.us>\r\n")
#     msg = (b"From: alice@example.com\r\nTo: bob@example.com\r\nSubject: test mail\r\n"
#            b"MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"XX\"\r\n\r\n"
#            b"--XX\r\nContent-Type: text/plain\r\n\r\nhello http://example.com/x\r\n"
#            b"--XX\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=\"a.bin\"\r\n"
#            b"Content-Transfer-Encoding: base64\r\n\r\naGVsbG8gYXR0YWNobWVudA==\r\n--XX--\r\n")
#     for cmd, resp in [
#         (b"CAPA\r\n", b"+OK Capability list follows\r\nUSER\r\nUIDL\r\nTOP\r\n.\r\n"),
#         (b"USER bob\r\n", b"+OK\r\n"),
#         (b"PASS secret\r\n", b"+OK maildrop has 2 messages (320 octets)\r\n"),
#         (b"STAT\r\n", b"+OK 2 320\r\n"),
#         (b"LIST\r\n", b"+OK 2 messages (320 octets)\r\n1 120\r\n2 200\r\n.\r\n"),
#         (b"RETR 1\r\n", b"+OK 120 octets\r\n" + msg + b".\r\n"),
#         (b"DELE 1\r\n", b"+OK message 1 deleted\r\n"),
#         (b"BOGUS x\r\n", b"-ERR unknown command\r\n"),
#         (b"TOP 2 0\r\n", b"-ERR no such message\r\n"),
#         (b"QUIT\r\n", b"+OK dewey POP3 server signing off\r\n"),
#     ]:
#         c.send(0, cmd)
#         c.send(1, resp)
#     c.close(0)
#     wrpcap(out, w.pkts)
# 
# main(sys.argv[1])
# import sys
# sys.path.insert(0, '/work/scratch-mail')
# from ftpgen import Conn, W
# from scapy.all import wrpcap
# w = W()
# c = Conn(w, "10.0.0.1", 40000, "10.0.0.2", int(sys.argv[2]))
# c.open()
# c.send(1, b"+OK ready\r\n")
# for cmd, resp in [
#     (b"RETR 1\r\n", b"+OK 20 octets\r\nSubject: x\r\n\r\nbody\r\n.\r\n"),
#     (b"TOP 1 0\r\n", b"+OK\r\nSubject: x\r\n\r\n.\r\n"),
#     (b"UIDL\r\n", b"+OK\r\n1 abc\r\n.\r\n"),
#     (b"RETR 2\r\n", b"+OK 20 octets\r\nSubject: y\r\n\r\n..dotline\r\nbody2\r\n.\r\n"),
#     (b"STLS\r\n", b"-ERR no\r\n"),
#     (b"USER\r\n", b"-ERR missing\r\n"),
#     (b"APOP bob c4c9334bac560ecc979e58001b3e22fb\r\n", b"+OK\r\n"),
#     (b"NOOP\r\nSTAT\r\n", b"+OK\r\n+OK 1 2\r\n"),
# ]:
#     c.send(0, cmd)
#     c.send(1, resp)
# c.close(0)
# wrpcap(sys.argv[1], w.pkts)
# import sys
# sys.path.insert(0, '/work/scratch-mail')
# from ftpgen import Conn, W
# from scapy.all import wrpcap
# w = W()
# c = Conn(w, "10.0.0.1", 40000, "10.0.0.2", 110)
# c.open()
# c.send(1, b"+OK ready\r\n")
# for cmd, resp in [
#     (b"USER " + b"a"*250 + b"\r\n", b"+OK\r\n"),
#     (b"USER " + b"b"*260 + b"\r\n", b"+OK\r\n"),
#     (b"NOOP\r\n", b"+OK " + b"c"*600 + b"\r\n"),
#     (b"LIST\r\n", b"+OK\r\n" + b"d"*600 + b"\r\n.\r\n"),
#     (b"NOOP\r\n", b"+OK " + b"e"*5000 + b"\r\n"),
#     (b"user x\r\n", b"garbage\r\n"),
#     (b"NOOP\r\n", b"+OK\r\n"),
# ]:
#     c.send(0, cmd)
#     c.send(1, resp)
# c.close(0)
# wrpcap(sys.argv[1], w.pkts)
# import sys, struct
# from scapy.all import Ether, IP, UDP, wrpcap
# pk=[]; t=[1700000000.0]
# def add(src, sp, dst, dp, payload):
#     t[0]+=0.001
#     p=Ether()/IP(src=src,dst=dst)/UDP(sport=sp,dport=dp)/payload; p.time=t[0]; pk.append(p)
# C,S="10.0.0.1","10.0.0.2"
# # RRQ octet, then transfer from server port 50000
# add(C,40000,S,69, struct.pack('>H',1)+b"boot.img\0octet\0")
# add(S,50000,C,40000, struct.pack('>HH',3,1)+b"A"*512)
# add(C,40000,S,50000, struct.pack('>HH',4,1))
# add(S,50000,C,40000, struct.pack('>HH',3,2)+b"tail")
# add(C,40000,S,50000, struct.pack('>HH',4,2))
# # WRQ netascii with options
# add(C,40001,S,69, struct.pack('>H',2)+b"up.txt\0netascii\0blksize\0001428\0")
# add(S,50001,C,40001, struct.pack('>H',6)+b"blksize\0001428\0")
# # ERROR
# add(C,40002,S,69, struct.pack('>H',1)+b"missing\0octet\0")
# add(S,50002,C,40002, struct.pack('>HH',5,1)+b"File not found\0")
# # garbage to 69
# add(C,40003,S,69, b"\x00\x09junk")
# add(C,40004,S,69, struct.pack('>H',1)+b"x\0mail\0")
# wrpcap(sys.argv[1], pk)
# import sys
# sys.path.insert(0, '/work/scratch-mail')
# from ftpgen import Conn, W
# from scapy.all import wrpcap
# w = W()
# port = int(sys.argv[2]); variant = sys.argv[3]
# c = Conn(w, "10.0.0.1", 40000, "10.0.0.2", port)
# c.open()
# if variant == "server_first":
#     c.send(1, b"* OK [CAPABILITY IMAP4rev1 STARTTLS] Dovecot ready.\r\n")
#     c.send(0, b"a001 CAPABILITY\r\n")
#     c.send(1, b"* CAPABILITY IMAP4rev1\r\na001 OK done\r\n")
# elif variant == "client_only":
#     c.send(0, b"a001 LOGIN bob secret\r\n")
#     c.send(1, b"a001 OK LOGIN completed\r\n")
# elif variant == "lower":
#     c.send(1, b"* ok hi\r\n")
#     c.send(0, b"1 capability\r\n")
#     c.send(1, b"1 OK done\r\n")
# c.send(0, b"a002 LOGOUT\r\n")
# c.send(1, b"* BYE\r\na002 OK LOGOUT\r\n")
# c.close(0)
# wrpcap(sys.argv[1], w.pkts)
