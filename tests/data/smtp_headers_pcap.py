#!/usr/bin/env python3
"""Writes tests/data/smtp-headers.pcap (python3 smtp_headers_pcap.py OUT.pcap): crafted
SMTP sessions for the `app-layer.protocols.smtp.*` keys and the EVE `smtp` options
(`custom`, `md5`), compared with the reference in tests/smtp_config.rs:

1. a mail with every header of the email logger's `custom` list (a folded one, two
   `Received`, a `Bcc` with quotes, blanks and an empty item), text with URLs of
   several schemes (and an upper-case one), a base64 HTML part with URLs, a base64
   attachment and a quoted-printable one, each with a marker and a URL;
2. a plain mail with a URL on its last line;
3. a mail whose base64 attachment is 96 KiB (sent in many segments), with a marker
   in its first bytes and one at its end, for `inspected-tracker`.
"""
import base64
import struct
import sys

sys.path.insert(0, __file__.rsplit('/', 1)[0])
from websocket_crafted_pcap import Tcp, wrpcap


def b64_lines(data, width=76):
    s = base64.b64encode(data).decode()
    return [s[i:i + width] for i in range(0, len(s), width)]


def msg(*lines):
    return ("\r\n".join(lines) + "\r\n").encode("latin-1")


def session(port, mail_from, rcpts, message):
    s = Tcp(port, 25)
    s.send(False, b'220 mx.example.test ESMTP\r\n')
    s.send(True, b'EHLO client.example.test\r\n')
    s.send(False, b'250-mx.example.test\r\n250 8BITMIME\r\n')
    s.send(True, b'MAIL FROM:<' + mail_from + b'>\r\n')
    s.send(False, b'250 2.1.0 Ok\r\n')
    for r in rcpts:
        s.send(True, b'RCPT TO:<' + r + b'>\r\n')
        s.send(False, b'250 2.1.5 Ok\r\n')
    s.send(True, b'DATA\r\n')
    s.send(False, b'354 End data with <CR><LF>.<CR><LF>\r\n')
    s.send(True, message + b'.\r\n')
    s.send(False, b'250 2.0.0 Ok: queued\r\n')
    s.send(True, b'QUIT\r\n')
    s.send(False, b'221 2.0.0 Bye\r\n')
    return s.close()


HTML = b'<a href="https://b64.example/x">http://b64.example/y</a> ftp://b64.example/f\r\n'
ATTACH = b'MARKER-B64 ' + bytes(range(256)) + b' https://att.example/z\r\n'

FULL = msg(
    "Received: from a.example (a.example [192.0.2.1])",
    "\tby mx.example.test; Mon, 07 Dec 2026 10:00:01 +0000",
    "Received: from [10.0.0.9] by a.example",
    'From: "Alice" <alice@example.org>',
    'To: bob@example.test, "Doe, Carol" <carol@example.test>',
    "Cc: dave@example.test",
    'Bcc: "Eve, E" <eve@example.test>,  frank@example.test, ,grace@example.test',
    "Reply-To: replies@example.org",
    "Subject: Quarterly report",
    "Date: Mon, 07 Dec 2026 10:00:00 +0000",
    "Message-ID: <msg-1@example.org>",
    "In-Reply-To: <msg-0@example.org>",
    "References: <msg-a@example.org>",
    " <msg-0@example.org>",
    "X-Mailer: ExampleMailer 1.0",
    "User-Agent: ExampleAgent/2.0",
    "X-Originating-IP: [192.0.2.77]",
    "Importance: High",
    "Priority: urgent",
    "Sensitivity: Company-Confidential",
    "Organization: Example Org",
    "Content-MD5: Q2hlY2sgSW50ZWdyaXR5IQ==",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="BB"',
    "",
    "--BB",
    "Content-Type: text/plain",
    "",
    "see http://h.example/a https://s.example/b ftp://f.example/c",
    "mailto:m@example.org HTTPS://UP.example/d <http://angle.example/e>",
    "--BB",
    "Content-Type: text/html",
    "Content-Transfer-Encoding: base64",
    "",
    *b64_lines(HTML),
    "--BB",
    'Content-Type: application/octet-stream; name="data.bin"',
    "Content-Transfer-Encoding: base64",
    "",
    *[l for l in b64_lines(ATTACH)],
    "--BB",
    'Content-Type: text/plain; name="note.txt"',
    "Content-Transfer-Encoding: quoted-printable",
    "",
    "caf=C3=A9 MARKER-QP soft=",
    "break http://qp.example/q",
    "--BB--",
)

PLAIN = (b"From: carol@example.test\r\nSubject: plain\r\n\r\n"
         b"Just text, http://plain.example/p\r\nlast line without end")

BIG = bytes((i * 7 + 3) % 251 for i in range(96 * 1024))
BIG = b'MARKER-BIG-HEAD' + BIG[15:-14] + b'MARKER-BIG-END'
LARGE = msg(
    "From: big@example.test",
    "Subject: large",
    'Content-Type: multipart/mixed; boundary="LL"',
    "",
    "--LL",
    'Content-Type: application/octet-stream; name="big.bin"',
    "Content-Transfer-Encoding: base64",
    "",
    *b64_lines(BIG),
    "--LL--",
)

pkts = []
pkts += session(43001, b'alice@example.org', [b'bob@example.test', b'carol@example.test'], FULL)
pkts += session(43002, b'carol@example.test', [b'bob@example.test'], PLAIN + b'\r\n')
pkts += session(43003, b'big@example.test', [b'bob@example.test'], LARGE)
pkts.sort(key=lambda p: p[0])
wrpcap(sys.argv[1], pkts)
