#!/usr/bin/env python3
"""Real SMTP sessions with varied MIME, captured on loopback: smtp-mime.pcap.

A real server (Postfix 3.7 on 127.0.0.1:25, mail discarded) and real clients (Python's
smtplib, and a raw socket client for pipelining, BDAT/CHUNKING and RSET), captured
with tcpdump. The messages are fixed (dates, boundaries, message ids, bodies); the
capture's timestamps, ports and sequence numbers are not, so a new run gives an
equivalent capture, not the same bytes. The reference's EVE for the committed pcap is
`smtp-mime.suricata-8.0.6-eve.json`, its stats record left out:

    ../shared/tools/suricata-ref -r smtp-mime.pcap -S smtp-mime.rules -l OUT -k none
    grep -v '"event_type":"stats"' OUT/eve.json > smtp-mime.suricata-8.0.6-eve.json

Postfix as it was configured (Debian's package, then):

    postconf -e 'inet_interfaces = loopback-only' 'inet_protocols = ipv4' \
      'myhostname = mx.example.test' 'mydestination =' 'default_transport = discard' \
      'relay_transport = discard' 'local_transport = discard' 'local_recipient_maps =' \
      'smtpd_relay_restrictions = permit_mynetworks, reject' \
      'smtpd_recipient_restrictions = permit_mynetworks, reject' \
      'mynetworks = 127.0.0.0/8' 'smtpd_tls_security_level = none' \
      'smtpd_banner = $myhostname ESMTP' 'smtpd_error_sleep_time = 0'
    postfix start

Run as root (tcpdump): `python3 smtp_mime_pcap.py [OUT.pcap]`.
"""

import smtplib
import socket
import subprocess
import sys
import time

HOST = "127.0.0.1"
PORT = 25
HELO = "client.example.test"


def msg(*lines):
    """A message from its lines (CRLF line endings, no final dot)."""
    return ("\r\n".join(lines) + "\r\n").encode("latin-1")


def b64(data, width=76):
    import base64

    s = base64.b64encode(data).decode()
    return [s[i : i + width] for i in range(0, len(s), width)]


DATE = "Date: Mon, 07 Dec 2026 10:00:00 +0000"
PDF = bytes(range(256)) * 8 + b"%PDF-1.4 attachment payload MARKER-PDF\n"
ZIP = b"PK\x03\x04" + b"inner zip content MARKER-ZIP " * 40

PLAIN = msg(
    "Received: from relay2.example.net (relay2.example.net [192.0.2.2])",
    "\tby mx.example.test (Postfix) with ESMTP id 1111",
    "\tfor <bob@example.test>; Mon, 07 Dec 2026 10:00:02 +0000",
    "Received: from relay1.example.net by relay2.example.net; Mon, 07 Dec 2026 10:00:01 +0000",
    "Received: from [10.0.0.5] by relay1.example.net",
    "From: Alice Example <alice@example.org>",
    "To: Bob <bob@example.test>",
    "Subject: plain text with urls",
    DATE,
    "Message-Id: <plain-0001@example.org>",
    "X-Mailer: MeerkatGen 1.0",
    "",
    "Hello Bob,",
    "see http://www.example.com/path/page.html?q=1&r=2 and",
    "HTTP://UPPER.Example.COM/Case/Path for the upper one,",
    "https://secure.example.org/login (https), www.noscheme.example/p (no scheme),",
    "the same again http://www.example.com/path/page.html?q=1&r=2",
    "and <http://angle.example.com/x> and (http://paren.example.com/y) and",
    "[http://bracket.example.com/z] and 'http://quote.example.com/q' end",
    "last line without newline before dot http://last.example.com/end",
)

MIXED = msg(
    "From: \"Carol, the sender\" <carol@example.org>",
    "To: bob@example.test, \"Doe, John\" <john@example.test>,dave@example.test",
    "Cc: eve@example.test",
    "Subject: mixed attachments",
    DATE,
    "Message-ID: <mixed-0002@example.org>",
    "X-Mailer: MeerkatGen 1.0",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="==MIX-0002=="',
    "",
    "This is a multi-part message in MIME format.",
    "",
    "--==MIX-0002==",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    "caf=C3=A9 text with a soft break in a url http://soft.example.com/very/lo=",
    "ng/path and =3D sign and http://qp.example.com/a=3Db",
    "",
    "--==MIX-0002==",
    "Content-Type: text/html; charset=utf-8",
    "Content-Transfer-Encoding: base64",
    "",
    *b64(
        b'<html><body><a href="http://html.example.com/a?b=c">link</a>'
        b" <a href='https://html-s.example.com/s'>s</a>"
        b" <img src=http://img.example.com/i.png></body></html>\r\n"
    ),
    "",
    "--==MIX-0002==",
    'Content-Type: application/pdf; name="report.pdf"',
    "Content-Transfer-Encoding: base64",
    'Content-Disposition: attachment; filename="report.pdf"',
    "",
    *b64(PDF),
    "",
    "--==MIX-0002==",
    "Content-Type: text/plain; name=notes.txt",
    "Content-Transfer-Encoding: quoted-printable",
    "Content-Disposition: attachment; filename=notes.txt",
    "",
    "notes line one =E2=82=AC MARKER-QP",
    "soft=",
    "break and http://in-attachment.example.com/qp",
    "",
    "--==MIX-0002==",
    "Content-Type: text/plain",
    "Content-Transfer-Encoding: 7bit",
    'Content-Disposition: attachment; filename="readme.txt"',
    "",
    "readme 7bit line 1 MARKER-7BIT",
    ".readme line with a leading dot (stuffed on the wire)",
    "readme 7bit line 2",
    "",
    "--==MIX-0002==",
    "Content-Type: application/octet-stream",
    "Content-Transfer-Encoding: 8bit",
    'Content-Disposition: attachment; filename="latin1.bin"',
    "",
    "8bit bytes \xe9\xe8\xff MARKER-8BIT",
    "--==MIX-0002==--",
    "",
    "epilogue http://epilogue.example.com/e",
)

NESTED = msg(
    "From: dave@example.org",
    "To: bob@example.test",
    "Subject: nested",
    DATE,
    "Message-Id: <nested-0003@example.org>",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="outer-0003"',
    "",
    "--outer-0003",
    'Content-Type: multipart/alternative; boundary="alt-0003"',
    "",
    "--alt-0003",
    "Content-Type: text/plain",
    "",
    "alternative text http://alt-text.example.com/t",
    "--alt-0003",
    "Content-Type: text/html",
    "",
    '<a href="http://alt-html.example.com/h">h</a>',
    "--alt-0003--",
    "",
    "--outer-0003",
    "Content-Type: message/rfc822",
    'Content-Disposition: attachment; filename="forwarded.eml"',
    "",
    "From: inner@example.net",
    "To: someone@example.net",
    "Subject: the inner message",
    "Message-Id: <inner-0003@example.net>",
    'Content-Type: multipart/mixed; boundary="inner-0003"',
    "",
    "--inner-0003",
    "Content-Type: text/plain",
    "",
    "inner text http://inner.example.net/i",
    "--inner-0003",
    'Content-Type: application/zip; name="inner.zip"',
    "Content-Transfer-Encoding: base64",
    "",
    *b64(ZIP),
    "--inner-0003--",
    "",
    "--outer-0003",
    'Content-Type: application/octet-stream; name="after.bin"',
    "Content-Transfer-Encoding: base64",
    "",
    *b64(b"after the forwarded message MARKER-AFTER"),
    "--outer-0003--",
)

ENCODED = msg(
    "From: =?UTF-8?B?w4lsb8Ohc2U=?= <eloise@example.org>",
    "To: =?ISO-8859-1?Q?Andr=E9?= <andre@example.test>",
    "Subject: =?UTF-8?B?UsOpc3Vtw6kgZHUgcmFwcG9ydA==?= and =?ISO-8859-1?Q?caf=E9?=",
    DATE,
    "Message-Id: <encoded-0004@example.org>",
    "MIME-Version: 1.0",
    "Content-Type: multipart/mixed; boundary=enc0004",
    "",
    "--enc0004",
    "Content-Type: text/plain; charset=utf-8",
    "Content-Transfer-Encoding: 8bit",
    "",
    "r\xc3\xa9sum\xc3\xa9 attached".encode("latin-1").decode("latin-1"),
    "--enc0004",
    'Content-Type: application/pdf; name="=?UTF-8?Q?r=C3=A9sum=C3=A9.pdf?="',
    "Content-Transfer-Encoding: base64",
    'Content-Disposition: attachment; filename="=?UTF-8?Q?r=C3=A9sum=C3=A9.pdf?="',
    "",
    *b64(b"resume MARKER-2047"),
    "--enc0004",
    "Content-Type: text/plain",
    "Content-Transfer-Encoding: base64",
    "Content-Disposition: attachment; filename*=UTF-8''na%C3%AFve%20file.txt",
    "",
    *b64(b"naive MARKER-2231"),
    "--enc0004",
    "Content-Type: application/octet-stream",
    "Content-Transfer-Encoding: base64",
    "Content-Disposition: attachment;",
    " filename*0=\"long-name-part-one-\";",
    " filename*1=\"part-two.dat\"",
    "",
    *b64(b"continued MARKER-CONT"),
    "--enc0004--",
)

FOLDED = msg(
    "Received: from a.example.net",
    " by b.example.net",
    " with SMTP; Mon, 07 Dec 2026 09:59:00 +0000",
    "From: folded@example.org",
    "To: r01@example.test, r02@example.test, r03@example.test,",
    "  r04@example.test, r05@example.test, r06@example.test, r07@example.test,",
    "\tr08@example.test, r09@example.test, r10@example.test, r11@example.test,",
    "  \"Last, Recipient\" <r12@example.test>",
    "Cc: c01@example.test,c02@example.test, c03@example.test ,",
    " c04@example.test, , c05@example.test",
    "Subject: a subject that is folded",
    "  over two lines",
    DATE,
    "Message-Id:",
    " <folded-0005@example.org>",
    "X-Mailer: Folded",
    "\tMailer 2.0",
    "MIME-Version: 1.0",
    "Content-Type: multipart/mixed;",
    '\tboundary="fold-0005"',
    "",
    "--fold-0005",
    "Content-Type: text/plain",
    "",
    "folded body http://folded.example.com/f",
    "--fold-0005",
    "Content-Type: application/octet-stream;",
    ' name="folded-name.bin"',
    "Content-Transfer-Encoding: base64",
    "Content-Disposition: attachment;",
    '    filename="folded.bin"',
    "",
    *b64(b"folded MARKER-FOLD"),
    "--fold-0005--",
)

UUE = msg(
    "From: uu@example.org",
    "To: bob@example.test",
    "Subject: uuencoded body",
    DATE,
    "Message-Id: <uue-0006@example.org>",
    "",
    "Here is a uuencoded file:",
    "",
    "begin 644 uu.txt",
    "M=75E;F-O9&5D(&-O;G1E;G0@34%22T52+55512!H='1P.B\\O=75E+F5X86UP",
    "$;&4N8V]M",
    "`",
    "end",
    "",
    "after uue http://after-uue.example.com/u",
)

LONG = msg(
    "From: long@example.org",
    "To: bob@example.test",
    "Subject: long lines and broken base64",
    DATE,
    "Message-Id: <long-0007@example.org>",
    "X-Long-Header: " + "h" * 2100,
    "X-" + "N" * 80 + ": long header name",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="long-0007"',
    "",
    "--long-0007",
    "Content-Type: text/plain",
    "",
    "x" * 1200 + " http://after-long.example.com/l",
    "--long-0007",
    "Content-Type: application/octet-stream",
    "Content-Transfer-Encoding: base64",
    'Content-Disposition: attachment; filename="longline.bin"',
    "",
    "".join(b64(b"L" * 900 + b" MARKER-LONGB64", width=100000)),
    "--long-0007",
    "Content-Type: application/octet-stream",
    "Content-Transfer-Encoding: base64",
    'Content-Disposition: attachment; filename="broken.bin"',
    "",
    "QUJDREVG!!!!R0hJSktM",
    "TU5P*UFFS",
    "U1RV==VldY",
    "--long-0007",
    "Content-Type: application/octet-stream",
    "Content-Transfer-Encoding: base64",
    "Content-Disposition: attachment",
    "",
    *b64(b"no file name MARKER-NONAME"),
    "--long-0007",
    "Content-Type: application/octet-stream",
    "Content-Transfer-Encoding: base64",
    "",
    *b64(b"no disposition no name MARKER-BARE"),
    "--long-0007",
    "Content-Type: text/plain; charset=us-ascii",
    "Content-Transfer-Encoding: quoted-printable",
    "",
    "broken qp =ZZ and =4 and a url http://bad-qp.example.com/b",
    "--long-0007--",
)

EDGE = msg(
    "FROM: Upper <upper@example.org>",
    "to: lower@example.test",
    "To: second-to@example.test",
    "SUBJECT: first subject",
    "Subject: second subject",
    DATE,
    "MIME-Version: 1.0",
    "Content-Type: MULTIPART/MIXED; BOUNDARY=ab",
    "",
    "--ab",
    "Content-Type: multipart/related; boundary=abc",
    "",
    "--abc",
    "Content-Type: TEXT/PLAIN",
    "",
    "upper-case type http://upper-type.example.com/t",
    "--abc",
    'Content-Type: image/png; name="cid.png"',
    "Content-Transfer-Encoding: BASE64",
    "Content-ID: <cid0008>",
    "",
    *b64(b"\x89PNG\r\n\x1a\nMARKER-PNG"),
    "--abc--",
    "--ab",
    'Content-Type: application/octet-stream; name="ct-name.exe"',
    'Content-Disposition: attachment; filename="C:\\Temp\\path name.exe"',
    "Content-Transfer-Encoding: base64",
    "",
    *b64(b"MZ MARKER-EXE"),
    "--ab",
    "Content-Type: message/rfc822",
    "",
    "From: encap@example.net",
    "Subject: encapsulated without a name",
    "",
    "encapsulated body http://encap.example.net/e",
    "--ab--",
)

BDAT_MSG = msg(
    "From: bdat@example.org",
    "To: bob@example.test",
    "Subject: sent with BDAT",
    DATE,
    "Message-Id: <bdat-0009@example.org>",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="bdat-0009"',
    "",
    "--bdat-0009",
    "Content-Type: text/plain",
    "",
    "bdat body http://bdat.example.com/b",
    ".a line starting with a dot (not stuffed in BDAT)",
    "--bdat-0009",
    'Content-Type: application/octet-stream; name="bdat.bin"',
    "Content-Transfer-Encoding: base64",
    "",
    *b64(b"bdat attachment MARKER-BDAT" * 10),
    "--bdat-0009--",
)

BDAT_SMALL = msg(
    "From: bdat2@example.org",
    "To: bob@example.test",
    "Subject: second BDAT mail",
    DATE,
    "Message-Id: <bdat-0010@example.org>",
    "",
    "single chunk http://bdat2.example.com/",
)

PIPE1 = msg(
    "From: pipe@example.org",
    "To: bob@example.test, carol@example.test",
    "Subject: pipelined",
    DATE,
    "Message-Id: <pipe-0011@example.org>",
    "",
    "pipelined body http://pipe.example.com/p",
    ".leading dot line",
)

PIPE2 = msg(
    "From: pipe@example.org",
    "To: dave@example.test",
    "Subject: after rset",
    DATE,
    "Message-Id: <pipe-0012@example.org>",
    "Content-Type: text/plain",
    "Content-Transfer-Encoding: base64",
    "",
    *b64(b"base64 top-level body http://b64-top.example.com/t\r\n"),
)


def smtplib_session(messages):
    with smtplib.SMTP(HOST, PORT, local_hostname=HELO) as s:
        for frm, to, data in messages:
            s.sendmail(frm, to, data)


class Raw:
    """A raw client: writes bytes as given, reads replies."""

    def __init__(self):
        self.s = socket.create_connection((HOST, PORT), timeout=10)
        self.buf = b""
        self.replies(1)

    def replies(self, n):
        """Reads `n` complete replies (multi-line ones count once)."""
        got = 0
        while got < n:
            while b"\r\n" not in self.buf:
                chunk = self.s.recv(65536)
                if not chunk:
                    raise RuntimeError("server closed")
                self.buf += chunk
            line, self.buf = self.buf.split(b"\r\n", 1)
            if len(line) >= 4 and line[3:4] == b"-":
                continue
            got += 1

    def send(self, data, replies):
        self.s.sendall(data)
        self.replies(replies)

    def close(self):
        self.s.close()


def stuffed(data):
    lines = data.split(b"\r\n")
    return b"\r\n".join(b"." + l if l.startswith(b".") else l for l in lines)


def pipelining_session():
    c = Raw()
    c.send(b"EHLO pipe.example.test\r\n", 1)
    # MAIL, two RCPTs and DATA in one write (RFC 2920).
    c.send(
        b"MAIL FROM:<pipe@example.org>\r\nRCPT TO:<bob@example.test>\r\n"
        b"RCPT TO:<carol@example.test>\r\nDATA\r\n",
        4,
    )
    c.send(stuffed(PIPE1) + b".\r\n", 1)
    # An abandoned transaction, then RSET, then a mail.
    c.send(b"MAIL FROM:<abandoned@example.org>\r\nRCPT TO:<x@example.test>\r\n", 2)
    c.send(b"RSET\r\n", 1)
    c.send(
        b"MAIL FROM:<pipe@example.org>\r\nRCPT TO:<dave@example.test>\r\nDATA\r\n", 3
    )
    c.send(stuffed(PIPE2) + b".\r\n", 1)
    c.send(b"QUIT\r\n", 1)
    c.close()


def bdat_session():
    c = Raw()
    c.send(b"EHLO bdat.example.test\r\n", 1)
    c.send(b"MAIL FROM:<bdat@example.org> BODY=BINARYMIME\r\n", 1)
    c.send(b"RCPT TO:<bob@example.test>\r\n", 1)
    # Two chunks cut in the middle of a line, then an empty LAST.
    cut = len(BDAT_MSG) // 2 + 7
    first, second = BDAT_MSG[:cut], BDAT_MSG[cut:]
    c.send(b"BDAT %d\r\n" % len(first) + first, 1)
    c.send(b"BDAT %d\r\n" % len(second) + second, 1)
    c.send(b"BDAT 0 LAST\r\n", 1)
    c.send(b"MAIL FROM:<bdat2@example.org>\r\n", 1)
    c.send(b"RCPT TO:<bob@example.test>\r\n", 1)
    c.send(b"BDAT %d LAST\r\n" % len(BDAT_SMALL) + BDAT_SMALL, 1)
    c.send(b"QUIT\r\n", 1)
    c.close()


CUT = msg(
    "From: cut@example.org",
    "To: bob@example.test",
    "Subject: cut short",
    DATE,
    "Message-Id: <cut-0013@example.org>",
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="cut-0013"',
    "",
    "--cut-0013",
    "Content-Type: text/plain",
    "",
    "cut body http://cut.example.com/c",
    "--cut-0013",
    'Content-Type: application/octet-stream; name="cut.bin"',
    "Content-Transfer-Encoding: base64",
    "",
    *b64(b"the connection closes before this attachment ends MARKER-CUT"),
)


def cut_session():
    """A message the client never finishes: it closes the connection in DATA."""
    c = Raw()
    c.send(b"EHLO cut.example.test\r\n", 1)
    c.send(b"MAIL FROM:<cut@example.org>\r\n", 1)
    c.send(b"RCPT TO:<bob@example.test>\r\n", 1)
    c.send(b"DATA\r\n", 1)
    c.s.sendall(stuffed(CUT))
    time.sleep(0.5)
    c.close()


EDGE2 = msg(
    "Received: from x.example.net",
    "From: edge2@example.org",
    "To: bob@example.test",
    "Subject : a name with a blank before its colon",
    "Subject: the real subject ",
    DATE,
    "MIME-Version: 1.0",
    'Content-Type: multipart/mixed; boundary="' + "B" * 260 + '"',
    "",
    "--" + "B" * 260,
    "Content-Type: text/plain ",
    "",
    "trailing blank in the type http://trailing-type.example.com/t",
    "--" + "B" * 260,
    'Content-Type: application/octet-stream; name="' + "n" * 300 + '.bin"',
    "Content-Transfer-Encoding: quoted-printable",
    "",
    "lower =c3=a9 upper =C3=A9 end=",
    "=4",
    "tail =",
    "",
    "--" + "B" * 260,
    "Content-Type: application/octet-stream",
    "Content-Transfer-Encoding: base64",
    'Content-Disposition: attachment; filename="esc\\"aped.bin"; x=1',
    "",
    "QUJDRA=FRkdI",
    "SUpL",
    "--" + "B" * 260,
    "Content-Disposition: attachment; filename*0*=UTF-8''enc; filename*1=\"oded.bin\"",
    "Content-Type: message/rfc822",
    "",
    "Subject: inner",
    "Content-Type: message/rfc822",
    "",
    "Subject: inner inner",
    "Content-Type: text/html",
    "",
    "<a href=http://deep.example.com/d>d</a>",
    "--" + "B" * 260 + "--",
)

HEADERS_ONLY = msg(
    "From: headers-only@example.org",
    "Subject: no blank line, no body",
)

NO_HEADERS = msg(
    "",
    "From: not-a-header@example.org",
    "",
    "body after http://no-headers.example.com/n",
)


def edge2_session():
    """Raw DATA: a bare-LF message, header-only and header-less ones, a repeated
    MAIL FROM and HELO."""
    c = Raw()
    c.send(b"EHLO edge2.example.test\r\n", 1)
    c.send(b"HELO again.example.test\r\n", 1)
    c.send(b"MAIL FROM:<edge2@example.org>\r\n", 1)
    c.send(b"RCPT TO:<bob@example.test>\r\n", 1)
    c.send(b"DATA\r\n", 1)
    c.send(stuffed(EDGE2).replace(b"\r\n", b"\n") + b".\r\n", 1)
    c.send(b"MAIL FROM:<headers-only@example.org>\r\n", 1)
    c.send(b"MAIL FROM:<second-mail-from@example.org>\r\n", 1)
    c.send(b"RCPT TO:<bob@example.test>\r\n", 1)
    c.send(b"DATA\r\n", 1)
    c.send(stuffed(HEADERS_ONLY) + b".\r\n", 1)
    c.send(b"MAIL FROM:<no-headers@example.org>\r\n", 1)
    c.send(b"RCPT TO:<bob@example.test>\r\n", 1)
    c.send(b"DATA\r\n", 1)
    c.send(stuffed(NO_HEADERS) + b".\r\n", 1)
    c.send(b"QUIT\r\n", 1)
    c.close()


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "smtp-mime.pcap"
    dump = subprocess.Popen(
        ["tcpdump", "-i", "lo", "-s", "0", "-U", "-w", out, "tcp port %d" % PORT],
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)
    try:
        to = ["bob@example.test"]
        smtplib_session(
            [
                ("alice@example.org", to, PLAIN),
                (
                    "carol@example.org",
                    ["bob@example.test", "john@example.test", "eve@example.test"],
                    MIXED,
                ),
            ]
        )
        smtplib_session([("dave@example.org", to, NESTED)])
        smtplib_session([("eloise@example.org", ["andre@example.test"], ENCODED)])
        smtplib_session(
            [
                (
                    "folded@example.org",
                    ["r%02d@example.test" % i for i in range(1, 13)]
                    + ["c%02d@example.test" % i for i in range(1, 6)],
                    FOLDED,
                )
            ]
        )
        smtplib_session(
            [
                ("uu@example.org", to, UUE),
                ("long@example.org", to, LONG),
                ("upper@example.org", ["lower@example.test"], EDGE),
            ]
        )
        pipelining_session()
        bdat_session()
        edge2_session()
        cut_session()
    finally:
        time.sleep(1.0)
        dump.terminate()
        dump.wait()


if __name__ == "__main__":
    main()
