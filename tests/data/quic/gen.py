#!/usr/bin/env python3
"""Writes the QUIC test captures of tests/quic_eve.rs (run from this directory).

- handshake-v1.pcap: a real aioquic client/server exchange (v1, SNI, ALPN h3) on UDP 443.
- crafted.pcap: flows with Initials built here: each version's salt (v1, v2, draft-29,
  draft-27), a ClientHello split over two Initials (CRYPTO reassembly), GREASE values,
  a truncated Initial, an Initial with garbage (failed decryption), a Retry, a
  version negotiation, a Handshake, short-header packets, a gQUIC Q043 CHLO.
"""
import os, struct, sys, datetime
from cryptography.hazmat.primitives import hashes, hmac
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from scapy.all import IP, UDP, Ether, wrpcap

SALTS = {
    1: "38762cf7f55934b34d179ae6a4c80cadccbb7f0a",
    0x6B3343CF: "0dede3def700a6db819381be6e269dcbf9bd2ed9",
    0xFF00001D: "afbfec289993d24c9e9786f19c6111e04390a899",
    0xFF00001B: "c3eef712c72ebb5a11a7d2432bb46365bef9f502",
    0x51303530: "504574efd066fe2f9d945cfcdbd3a7f0d3b56b45",
}

def hkdf_extract(salt, ikm):
    h = hmac.HMAC(salt, hashes.SHA256()); h.update(ikm); return h.finalize()

def hkdf_expand(prk, info, n):
    out, t, i = b"", b"", 1
    while len(out) < n:
        h = hmac.HMAC(prk, hashes.SHA256()); h.update(t + info + bytes([i])); t = h.finalize(); out += t; i += 1
    return out[:n]

def expand_label(secret, label, n):
    full = b"tls13 " + label
    return hkdf_expand(secret, struct.pack(">H", n) + bytes([len(full)]) + full + b"\x00", n)

def keys(version, dcid, client=True):
    init = hkdf_extract(bytes.fromhex(SALTS[version]), dcid)
    sec = expand_label(init, b"client in" if client else b"server in", 32)
    p = b"quicv2 " if version == 0x6B3343CF else b"quic "
    return expand_label(sec, p + b"key", 16), expand_label(sec, p + b"iv", 12), expand_label(sec, p + b"hp", 16)

def varint(v):
    if v < 64: return bytes([v])
    if v < 16384: return struct.pack(">H", 0x4000 | v)
    return struct.pack(">I", 0x80000000 | v)

def initial_type_bits(version):
    return 0x10 if version == 0x6B3343CF else 0x00

def protect(version, dcid, first, header_wo_len, payload, pn=0, client=True, key_dcid=None):
    """A long-header packet: header (through the token), Length, 4-byte pn, sealed payload."""
    key, iv, hp = keys(version, key_dcid or dcid, client)
    pn_bytes = struct.pack(">I", pn)
    length = len(pn_bytes) + len(payload) + 16
    hdr = bytearray(bytes([first | 0x03]) + header_wo_len + varint(length) + pn_bytes)
    nonce = bytes(a ^ b for a, b in zip(iv, b"\0" * 4 + struct.pack(">Q", pn)))
    ct = AESGCM(key).encrypt(nonce, payload, bytes(hdr))
    pn_off = len(hdr) - 4
    sample = ct[0:16]  # pn is 4 bytes: sample starts 4 bytes after it
    enc = Cipher(algorithms.AES(hp), modes.ECB()).encryptor()
    mask = enc.update(sample) + enc.finalize()
    hdr[0] ^= mask[0] & 0x0F
    for i in range(4):
        hdr[pn_off + i] ^= mask[1 + i]
    return bytes(hdr) + ct

def long_header(version, dcid, scid, token=b"", ty_bits=None):
    bits = initial_type_bits(version) if ty_bits is None else ty_bits
    first = 0xC0 | bits
    return first, struct.pack(">I", version) + bytes([len(dcid)]) + dcid + bytes([len(scid)]) + scid + varint(len(token)) + token

def ext(t, d):
    return struct.pack(">HH", t, len(d)) + d

def client_hello(sni=b"example.com", alpn=(b"h3",), grease=False, pad=0):
    body = b"\x03\x03" + bytes(range(32)) + b"\x00"
    ciphers = [0x1301, 0x1302, 0x1303]
    if grease: ciphers = [0x1A1A] + ciphers
    body += struct.pack(">H", 2 * len(ciphers)) + b"".join(struct.pack(">H", c) for c in ciphers)
    body += b"\x01\x00"
    exts = b""
    if grease: exts += ext(0x0A0A, b"")
    if sni is not None:
        e = b"\x00" + struct.pack(">H", len(sni)) + sni
        exts += ext(0, struct.pack(">H", len(e)) + e)
    groups = [0x001D, 0x0017] if not grease else [0x2A2A, 0x001D, 0x0017]
    exts += ext(10, struct.pack(">H", 2 * len(groups)) + b"".join(struct.pack(">H", g) for g in groups))
    exts += ext(13, struct.pack(">H", 6) + bytes.fromhex("040308040401"))
    if alpn:
        a = b"".join(bytes([len(x)]) + x for x in alpn)
        exts += ext(16, struct.pack(">H", len(a)) + a)
    vers = [0x0304] if not grease else [0x3A3A, 0x0304]
    exts += ext(43, bytes([2 * len(vers)]) + b"".join(struct.pack(">H", v) for v in vers))
    exts += ext(45, b"\x01\x01")
    ks = struct.pack(">HH", 0x001D, 32) + bytes(32)
    exts += ext(51, struct.pack(">H", len(ks)) + ks)
    exts += ext(57, bytes.fromhex("0104800075300304800005dc") + (b"\x00" * pad and b""))
    if pad:
        exts += ext(21, b"\x00" * pad)
    body += struct.pack(">H", len(exts)) + exts
    return b"\x01" + struct.pack(">I", len(body))[1:] + body

def server_hello():
    body = b"\x03\x03" + bytes(32) + b"\x00" + b"\x13\x01" + b"\x00"
    exts = ext(43, b"\x03\x04") + ext(51, struct.pack(">HH", 0x001D, 32) + bytes(32))
    body += struct.pack(">H", len(exts)) + exts
    return b"\x02" + struct.pack(">I", len(body))[1:] + body

def crypto_frame(off, data):
    return b"\x06" + varint(off) + varint(len(data)) + data

def padded(frames, size=1150):
    return frames + b"\x00" * max(0, size - len(frames))

class Pcap:
    def __init__(self):
        self.pkts = []
        self.t = 1700000000.0
    def add(self, src, dst, sport, dport, payload):
        p = Ether() / IP(src=src, dst=dst) / UDP(sport=sport, dport=dport) / payload
        self.t += 0.001
        p.time = self.t
        self.pkts.append(p)

def crafted(path):
    pc = Pcap()
    C, S = "10.0.0.1", "10.0.0.2"
    port = [40000]
    def flow():
        port[0] += 1
        return port[0]
    # 1-4: each version's Initial with a ClientHello, and the server's Initial.
    for version in (1, 0x6B3343CF, 0xFF00001D, 0xFF00001B):
        sp = flow()
        dcid, scid = os.urandom(8), os.urandom(8)
        first, h = long_header(version, dcid, scid)
        pc.add(C, S, sp, 443, protect(version, dcid, first, h, padded(crypto_frame(0, client_hello(b"v%x.example.com" % version)))))
        first, h = long_header(version, scid, os.urandom(8))
        pc.add(S, C, 443, sp, protect(version, scid, first, h, padded(b"\x02\x00\x00\x00\x00" + crypto_frame(0, server_hello()), 100), client=False, key_dcid=dcid))
    # 5: a ClientHello over two Initials (the second part first: out of order), GREASE.
    sp = flow()
    dcid, scid = os.urandom(8), os.urandom(8)
    ch = client_hello(b"split.example.com", alpn=(b"h3", b"h3-29"), grease=True, pad=1500)
    first, h = long_header(1, dcid, scid)
    pc.add(C, S, sp, 443, protect(1, dcid, first, h, padded(crypto_frame(0, ch[:1000])), pn=0))
    pc.add(C, S, sp, 443, protect(1, dcid, first, h, padded(crypto_frame(1000, ch[1000:])), pn=1))
    # 6: a truncated Initial (cut inside the payload), then garbage sealed with wrong keys.
    sp = flow()
    dcid, scid = os.urandom(8), os.urandom(8)
    first, h = long_header(1, dcid, scid)
    pkt = protect(1, dcid, first, h, padded(crypto_frame(0, client_hello())))
    pc.add(C, S, sp, 443, pkt[:200])
    sp = flow()
    pkt = bytearray(pkt)
    pkt[100] ^= 0xFF
    pc.add(C, S, sp, 443, bytes(pkt))
    # 7: Retry, version negotiation, Handshake, short header.
    sp = flow()
    dcid, scid = os.urandom(8), os.urandom(8)
    first, h = long_header(1, dcid, scid)
    pc.add(C, S, sp, 443, protect(1, dcid, first, h, padded(crypto_frame(0, client_hello(b"retry.example.com")))))
    pc.add(S, C, 443, sp, bytes([0xF0]) + struct.pack(">I", 1) + bytes([8]) + scid + bytes([8]) + os.urandom(8) + b"token" * 4 + os.urandom(16))
    sp = flow()
    pc.add(S, C, 443, sp, bytes([0x80]) + struct.pack(">I", 0) + bytes([8]) + os.urandom(8) + bytes([8]) + os.urandom(8) + struct.pack(">II", 1, 0xFF00001D))
    sp = flow()
    hs = bytes([0xE3]) + struct.pack(">I", 1) + bytes([8]) + os.urandom(8) + bytes([8]) + os.urandom(8) + varint(60) + os.urandom(60)
    pc.add(C, S, sp, 443, hs)
    pc.add(C, S, sp, 443, bytes([0x43]) + os.urandom(40))
    # 8: an unknown version's Initial (no keys: the payload read as frames).
    sp = flow()
    dcid, scid = os.urandom(8), os.urandom(8)
    first, h = long_header(0x1A2A3A4A, dcid, scid)
    payload = padded(b"\x01", 60)
    pc.add(C, S, sp, 443, bytes([first | 3]) + h + varint(4 + len(payload)) + b"\0\0\0\0" + payload)
    # 9: gQUIC Q043 CHLO (long header type 0x7f: pn, 12-byte hash, STREAM frame).
    sp = flow()
    tags = [(b"PAD\0", b"\0" * 20), (b"SNI\0", b"gquic.example.com"), (b"VER\0", b"Q043"),
            (b"UAID", b"Meerkat/1.0 test"), (b"PDMD", b"X509"), (b"CFCW", b"\0\0\0\1")]
    hdrs, vals, end = b"", b"", 0
    for t, v in tags:
        end += len(v); hdrs += t + struct.pack("<I", end); vals += v
    chlo = b"CHLO" + struct.pack("<H", len(tags)) + b"\0\0" + hdrs + vals
    stream = bytes([0xA0]) + b"\x01" + struct.pack(">H", len(chlo)) + chlo
    pkt = bytes([0xFF]) + b"Q043" + bytes([0x50]) + os.urandom(8) + struct.pack(">I", 1) + os.urandom(12) + stream
    pc.add(C, S, sp, 443, pkt)
    # 10: QUIC on another port (not on Suricata's QUIC ports).
    sp = flow()
    dcid, scid = os.urandom(8), os.urandom(8)
    first, h = long_header(1, dcid, scid)
    pc.add(C, S, sp, 4433, protect(1, dcid, first, h, padded(crypto_frame(0, client_hello(b"port4433.example.com")))))
    wrpcap(path, pc.pkts)

if __name__ == "__main__":
    import random
    random.seed(1)
    _rng = random.Random(1)
    os.urandom = lambda n: bytes(_rng.getrandbits(8) for _ in range(n))
    crafted("crafted.pcap")
