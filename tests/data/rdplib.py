"""RDP connection-sequence messages (MS-RDPBCGR 2.2.1): TPKT, X.224 connection
request and confirm with the RDP negotiation structures, MCS Connect-Initial with the
GCC conference create request and its client data blocks, MCS Connect-Response."""
import struct


def tpkt(body):
    return struct.pack('>BBH', 3, 0, 4 + len(body)) + body


def x224_cr(cookie=None, neg=None, code=0xE0):
    """Connection request: `cookie` (the mstshash user), `neg` = (flags, protocols)."""
    var = b''
    if cookie is not None:
        var += b'Cookie: mstshash=' + cookie + b'\r\n'
    if neg is not None:
        var += struct.pack('<BBHI', 1, neg[0], 8, neg[1])
    fixed = bytes([code, 0, 0, 0, 0, 0])
    return tpkt(bytes([len(fixed) + len(var)]) + fixed + var)


def x224_cc(rsp=None, failure=None):
    """Connection confirm with a negotiation response (flags, protocol) or failure code."""
    var = b''
    if rsp is not None:
        var = struct.pack('<BBHI', 2, rsp[0], 8, rsp[1])
    if failure is not None:
        var = struct.pack('<BBHI', 3, 0, 8, failure)
    fixed = bytes([0xD0, 0, 0, 0x12, 0x34, 0])
    return tpkt(bytes([len(fixed) + len(var)]) + fixed + var)


def ber_len(n):
    if n < 0x80:
        return bytes([n])
    if n < 0x100:
        return bytes([0x81, n])
    return bytes([0x82]) + struct.pack('>H', n)


def ber(tag, body):
    return tag + ber_len(len(body)) + body


def per_len(n):
    return bytes([n]) if n < 0x80 else struct.pack('>H', 0x8000 | n)


def domain_params(a):
    return ber(b'\x30', b''.join(ber(b'\x02', bytes([x >> 8, x & 255]) if x > 255 else bytes([x])) for x in a))


def utf16(s, size):
    b = s.encode('utf-16-le')[:size - 2]
    return b + bytes(size - len(b))


def cs_core(version=0x00080004, width=1024, height=768, color=0xCA01, layout=0x409,
            build=2600, name='WORKSTATION', kbtype=4, kbsub=0, fkeys=12, ime='',
            optional=None):
    """TS_UD_CS_CORE; `optional` is the bytes of the optional fields (from
    postBeta2ColorDepth on)."""
    body = struct.pack('<IHHHHII', version, width, height, color, 0xAA03, layout, build)
    body += utf16(name, 32) + struct.pack('<III', kbtype, kbsub, fkeys) + utf16(ime, 64)
    if optional:
        body += optional
    return struct.pack('<HH', 0xC001, 4 + len(body)) + body


def core_optional(post_beta=0xCA01, product=1, serial=0, high=24, supported=0x7,
                  early=0x1, dig='', conn_type=None, selected=None, phys=None,
                  orientation=None, scale=None):
    b = struct.pack('<HHIHHH', post_beta, product, serial, high, supported, early)
    if dig is None:
        return b
    b += utf16(dig, 64)
    if conn_type is None:
        return b
    b += struct.pack('<BB', conn_type, 0)
    if selected is None:
        return b
    b += struct.pack('<I', selected)
    if phys is None:
        return b
    b += struct.pack('<II', *phys)
    if orientation is None:
        return b
    b += struct.pack('<H', orientation)
    if scale is None:
        return b
    b += struct.pack('<II', *scale)
    return b


def cs_security():
    return struct.pack('<HHII', 0xC002, 12, 0x1b, 0)


def cs_net(channels):
    body = struct.pack('<I', len(channels))
    for c in channels:
        body += c.encode()[:7].ljust(8, b'\0') + struct.pack('<I', 0x80800000)
    return struct.pack('<HH', 0xC003, 4 + len(body)) + body


def cs_cluster():
    return struct.pack('<HHII', 0xC004, 12, 0x0d, 0)


def mcs_ci(blocks):
    """X.224 data TPDU holding an MCS Connect-Initial with these client data blocks."""
    user = b''.join(blocks)
    gcc = bytes.fromhex('00080010000100') + b'\xc0\x00' + b'Duca' + per_len(len(user)) + user
    gcc = bytes.fromhex('0005' '00147c0001') + per_len(len(gcc) - 0) + gcc
    ci = (ber(b'\x04', b'\x01') + ber(b'\x04', b'\x01') + ber(b'\x01', b'\xff')
          + domain_params([34, 2, 0, 1, 0, 1, 0xffff, 2])
          + domain_params([1, 1, 1, 1, 0, 1, 0x420, 2])
          + domain_params([0xffff, 0xfc17, 0xffff, 1, 0, 1, 0xffff, 2])
          + ber(b'\x04', gcc))
    return tpkt(b'\x02\xf0\x80' + ber(b'\x7f\x65', ci))


def mcs_cr():
    """X.224 data TPDU holding an MCS Connect-Response (its content barely matters)."""
    body = (ber(b'\x0a', b'\x00') + ber(b'\x02', b'\x00') + domain_params([34, 3, 0, 1, 0, 1, 0xfff8, 2])
            + ber(b'\x04', bytes.fromhex('000500147c00012a14760a01010001c0004d63446e')))
    return tpkt(b'\x02\xf0\x80' + ber(b'\x7f\x66', body))
