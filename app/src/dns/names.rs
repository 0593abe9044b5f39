//! DNS names shared by the parser and the EVE renderer, so that the record types a rule
//! sees and the ones EVE prints are spelled the same.

/// The name Suricata prints for a DNS record type; `None` for types logged by number.
pub fn rrtype_name(t: u32) -> Option<&'static str> {
    Some(match t {
        1 => "A",
        2 => "NS",
        5 => "CNAME",
        6 => "SOA",
        10 => "NULL",
        12 => "PTR",
        13 => "HINFO",
        15 => "MX",
        16 => "TXT",
        28 => "AAAA",
        33 => "SRV",
        35 => "NAPTR",
        39 => "DNAME",
        41 => "OPT",
        43 => "DS",
        44 => "SSHFP",
        46 => "RRSIG",
        47 => "NSEC",
        48 => "DNSKEY",
        50 => "NSEC3",
        52 => "TLSA",
        64 => "SVCB",
        65 => "HTTPS",
        99 => "SPF",
        249 => "TKEY",
        250 => "TSIG",
        251 => "IXFR",
        252 => "AXFR",
        255 => "ANY",
        257 => "CAA",
        _ => return None,
    })
}

/// The name Suricata prints for a DNS response code; `None` for codes logged by number.
pub fn rcode_name(r: u32) -> Option<&'static str> {
    Some(match r {
        0 => "NOERROR",
        1 => "FORMERR",
        2 => "SERVFAIL",
        3 => "NXDOMAIN",
        4 => "NOTIMP",
        5 => "REFUSED",
        6 => "YXDOMAIN",
        7 => "YXRRSET",
        8 => "NXRRSET",
        9 => "NOTAUTH",
        10 => "NOTZONE",
        _ => return None,
    })
}
