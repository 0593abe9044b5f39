//! LDAP messages (RFC 4511) in BER: `LDAPMessage ::= SEQUENCE { messageID, protocolOp,
//! controls [0] OPTIONAL }`, every operation read into the fields Suricata logs and
//! inspects. Elements are read with SNMP's bounded BER reader (one-byte tags,
//! definite lengths); every list is bounded by [`MAX_ITEMS`] and filters by
//! [`MAX_FILTER_DEPTH`].

use crate::snmp::ber::{self, Error, Tlv};

/// Most items of any list kept (attributes, values, changes, controls, references).
pub const MAX_ITEMS: usize = 256;
/// Deepest nesting of a search filter followed.
pub const MAX_FILTER_DEPTH: usize = 16;
/// Largest message accepted (a stream with a longer one is given up).
pub const MAX_MESSAGE_LEN: usize = 1 << 20;

/// The protocol operations, by their APPLICATION tag number.
pub const BIND_REQUEST: u8 = 0;
pub const BIND_RESPONSE: u8 = 1;
pub const UNBIND_REQUEST: u8 = 2;
pub const SEARCH_REQUEST: u8 = 3;
pub const SEARCH_RESULT_ENTRY: u8 = 4;
pub const SEARCH_RESULT_DONE: u8 = 5;
pub const MODIFY_REQUEST: u8 = 6;
pub const MODIFY_RESPONSE: u8 = 7;
pub const ADD_REQUEST: u8 = 8;
pub const ADD_RESPONSE: u8 = 9;
pub const DEL_REQUEST: u8 = 10;
pub const DEL_RESPONSE: u8 = 11;
pub const MOD_DN_REQUEST: u8 = 12;
pub const MOD_DN_RESPONSE: u8 = 13;
pub const COMPARE_REQUEST: u8 = 14;
pub const COMPARE_RESPONSE: u8 = 15;
pub const ABANDON_REQUEST: u8 = 16;
pub const SEARCH_RESULT_REFERENCE: u8 = 19;
pub const EXTENDED_REQUEST: u8 = 23;
pub const EXTENDED_RESPONSE: u8 = 24;
pub const INTERMEDIATE_RESPONSE: u8 = 25;

/// Suricata's names of the operations.
pub fn op_name(op: u8) -> Option<&'static str> {
    Some(match op {
        BIND_REQUEST => "bind_request",
        BIND_RESPONSE => "bind_response",
        UNBIND_REQUEST => "unbind_request",
        SEARCH_REQUEST => "search_request",
        SEARCH_RESULT_ENTRY => "search_result_entry",
        SEARCH_RESULT_DONE => "search_result_done",
        SEARCH_RESULT_REFERENCE => "search_result_reference",
        MODIFY_REQUEST => "modify_request",
        MODIFY_RESPONSE => "modify_response",
        ADD_REQUEST => "add_request",
        ADD_RESPONSE => "add_response",
        DEL_REQUEST => "del_request",
        DEL_RESPONSE => "del_response",
        MOD_DN_REQUEST => "mod_dn_request",
        MOD_DN_RESPONSE => "mod_dn_response",
        COMPARE_REQUEST => "compare_request",
        COMPARE_RESPONSE => "compare_response",
        ABANDON_REQUEST => "abandon_request",
        EXTENDED_REQUEST => "extended_request",
        EXTENDED_RESPONSE => "extended_response",
        INTERMEDIATE_RESPONSE => "intermediate_response",
        _ => return None,
    })
}

/// Whether `op` is a client's request.
pub fn is_request(op: u8) -> bool {
    matches!(
        op,
        BIND_REQUEST
            | UNBIND_REQUEST
            | SEARCH_REQUEST
            | MODIFY_REQUEST
            | ADD_REQUEST
            | DEL_REQUEST
            | MOD_DN_REQUEST
            | COMPARE_REQUEST
            | ABANDON_REQUEST
            | EXTENDED_REQUEST
    )
}

/// Suricata's names of the result codes (RFC 4511 4.1.9 and the registered others).
pub fn result_name(code: u32) -> Option<&'static str> {
    Some(match code {
        0 => "success",
        1 => "operations_error",
        2 => "protocol_error",
        3 => "time_limit_exceeded",
        4 => "size_limit_exceeded",
        5 => "compare_false",
        6 => "compare_true",
        7 => "auth_method_not_supported",
        8 => "stronger_auth_required",
        10 => "referral",
        11 => "admin_limit_exceeded",
        12 => "unavailable_critical_extension",
        13 => "confidentiality_required",
        14 => "sasl_bind_in_progress",
        16 => "no_such_attribute",
        17 => "undefined_attribute_type",
        18 => "inappropriate_matching",
        19 => "constraint_violation",
        20 => "attribute_or_value_exists",
        21 => "invalid_attribute_syntax",
        32 => "no_such_object",
        33 => "alias_problem",
        34 => "invalid_dns_syntax",
        35 => "is_leaf",
        36 => "alias_dereferencing_problem",
        48 => "inappropriate_authentication",
        49 => "invalid_credentials",
        50 => "insufficient_access_rights",
        51 => "busy",
        52 => "unavailable",
        53 => "unwilling_to_perform",
        54 => "loop_detect",
        60 => "sort_control_missing",
        61 => "offset_range_error",
        64 => "naming_violation",
        65 => "object_class_violation",
        66 => "not_allowed_on_non_leaf",
        67 => "not_allowed_on_rdn",
        68 => "entry_already_exists",
        69 => "object_class_mods_prohibited",
        70 => "results_too_large",
        71 => "affects_multiple_dsas",
        76 => "control_error",
        80 => "other",
        81 => "server_down",
        82 => "local_error",
        83 => "encoding_error",
        84 => "decoding_error",
        85 => "timeout",
        86 => "auth_unknown",
        87 => "filter_error",
        88 => "user_canceled",
        89 => "param_error",
        90 => "no_memory",
        91 => "connect_error",
        92 => "not_supported",
        93 => "control_not_found",
        94 => "no_results_returned",
        95 => "more_results_to_return",
        96 => "client_loop",
        97 => "referral_limit_exceeded",
        100 => "invalid_response",
        101 => "ambiguous_response",
        112 => "tls_not_supported",
        113 => "intermediate_response",
        114 => "unknown_type",
        118 => "canceled",
        119 => "no_such_operation",
        120 => "too_late",
        121 => "cannot_cancel",
        122 => "assertion_failed",
        123 => "authorization_denied",
        4096 => "e_sync_refresh_required",
        16654 => "no_operation",
        _ => return None,
    })
}

/// An `LDAPResult`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LdapResult {
    pub code: u32,
    pub matched_dn: Vec<u8>,
    pub message: Vec<u8>,
}

/// An attribute with its values (`PartialAttribute`, `Attribute`, a modification).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attribute {
    pub kind: Vec<u8>,
    pub values: Vec<Vec<u8>>,
}

/// A request control.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Control {
    pub oid: Vec<u8>,
    pub critical: bool,
    pub value: Option<Vec<u8>>,
}

/// What an operation carries, as far as Suricata logs or inspects it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Op {
    pub tag: u8,
    /// The operation's DN: bind name, search base, modify object, add/del/moddn/compare
    /// entry, a search result entry's object name.
    pub dn: Vec<u8>,
    pub result: Option<LdapResult>,
    /// Bind: version; search: scope, deref aliases, size and time limits.
    pub version: u32,
    pub scope: u32,
    pub deref: u32,
    pub size_limit: u32,
    pub time_limit: u32,
    pub types_only: bool,
    /// A search's filter when it is `present` (the only kind Suricata logs).
    pub filter_present: Option<Vec<u8>>,
    /// A search's requested attributes.
    pub attribute_names: Vec<Vec<u8>>,
    /// A search result entry's or an add request's attributes; a modify request's
    /// modifications (with `change_ops`); a compare's assertion (one).
    pub attributes: Vec<Attribute>,
    pub change_ops: Vec<u32>,
    /// SASL bind: mechanism and credentials.
    pub sasl: Option<(Vec<u8>, Option<Vec<u8>>)>,
    pub server_sasl_creds: Option<Vec<u8>>,
    /// Mod DN: new RDN, delete old RDN, new superior.
    pub new_rdn: Vec<u8>,
    pub delete_old_rdn: bool,
    pub new_superior: Option<Vec<u8>>,
    /// Extended/intermediate: name and value.
    pub name: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// One LDAP message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Message {
    pub id: u32,
    pub op: Op,
    pub controls: Option<Vec<Control>>,
}

/// Reads the message at the start of `data`: the message and the bytes it took.
/// `Err(Incomplete)` when more bytes are needed, `Err(Invalid)` when it is no LDAP
/// message.
pub fn message(data: &[u8]) -> Result<(Message, usize), Error> {
    let (outer, rest) = match ber::read(data) {
        Ok(x) => x,
        Err(Error::Incomplete) => {
            // A declared length past the bound is not worth waiting for.
            if declared_len(data).is_some_and(|n| n > MAX_MESSAGE_LEN) {
                return Err(Error::Invalid);
            }
            if data.first().is_some_and(|&t| t != ber::SEQUENCE) {
                return Err(Error::Invalid);
            }
            return Err(Error::Incomplete);
        }
        Err(e) => return Err(e),
    };
    if outer.tag != ber::SEQUENCE {
        return Err(Error::Invalid);
    }
    let used = data.len() - rest.len();
    let (id, body) = expect(outer.body, ber::INTEGER)?;
    let id = u32::try_from(ber::int(id)?).map_err(|_| Error::Invalid)?;
    let (op_tlv, body) = read(body)?;
    let op = op(op_tlv)?;
    let mut controls = None;
    if let Some(&0xa0) = body.first() {
        let (c, _) = read(body)?;
        controls = Some(list(c.body, control)?);
    }
    Ok((Message { id, op, controls }, used))
}

/// The length a BER header at the start of `data` declares, if it can be read.
fn declared_len(data: &[u8]) -> Option<usize> {
    let first = *data.get(1)?;
    if first & 0x80 == 0 {
        return Some(usize::from(first));
    }
    let n = usize::from(first & 0x7f);
    let bytes = data.get(2..2 + n)?;
    Some(
        bytes
            .iter()
            .fold(0usize, |a, &b| a.saturating_mul(256) | usize::from(b)),
    )
}

/// An element inside a message already whole: running short is malformed.
/// An element inside a message. One whose header or contents run past its container
/// is `Incomplete`, as in Suricata's parser, which then waits for more data even
/// though the message's own length was whole (and so never parses that direction
/// on). Its header is read as a general BER reader reads it: a high tag number and a
/// long length form of any size need their bytes before they are found unsupported.
fn read(data: &[u8]) -> Result<(Tlv<'_>, &[u8]), Error> {
    match ber::read(data) {
        Err(Error::Invalid) if header_cut(data) => Err(Error::Incomplete),
        r => r,
    }
}

/// Whether the identifier and length octets at the start of `data` run past it.
fn header_cut(data: &[u8]) -> bool {
    let mut i = 1;
    if data.first().is_some_and(|&t| t & 0x1f == 0x1f) {
        // High tag number: more identifier bytes while their top bit is set.
        while data.get(i).is_some_and(|&b| b & 0x80 != 0) {
            i += 1;
        }
        i += 1;
    }
    match data.get(i) {
        None => true,
        Some(&l) if l & 0x80 != 0 => data.len() < i + 1 + usize::from(l & 0x7f),
        Some(_) => false,
    }
}

fn expect(data: &[u8], tag: u8) -> Result<(&[u8], &[u8]), Error> {
    let (t, rest) = read(data)?;
    if t.tag != tag {
        return Err(Error::Invalid);
    }
    Ok((t.body, rest))
}

fn uint(data: &[u8], tag: u8) -> Result<(u32, &[u8]), Error> {
    let (b, rest) = expect(data, tag)?;
    let v = ber::int(b)?;
    Ok((u32::try_from(v).map_err(|_| Error::Invalid)?, rest))
}

fn octets(data: &[u8]) -> Result<(Vec<u8>, &[u8]), Error> {
    let (b, rest) = expect(data, ber::OCTET_STRING)?;
    Ok((b.to_vec(), rest))
}

fn boolean(data: &[u8]) -> Result<(bool, &[u8]), Error> {
    let (b, rest) = expect(data, 0x01)?;
    match b {
        [v] => Ok((*v != 0, rest)),
        _ => Err(Error::Invalid),
    }
}

/// The elements of a SEQUENCE OF / SET OF body, each read by `f`, at most
/// [`MAX_ITEMS`] kept.
fn list<T>(mut data: &[u8], f: impl Fn(&[u8]) -> Result<T, Error>) -> Result<Vec<T>, Error> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let (_, rest) = read(data)?;
        let item = f(&data[..data.len() - rest.len()])?;
        if out.len() < MAX_ITEMS {
            out.push(item);
        }
        data = rest;
    }
    Ok(out)
}

fn control(data: &[u8]) -> Result<Control, Error> {
    let (body, _) = expect(data, ber::SEQUENCE)?;
    let (oid, mut rest) = octets(body)?;
    let mut c = Control {
        oid,
        ..Control::default()
    };
    if rest.first() == Some(&0x01) {
        let (b, r) = boolean(rest)?;
        c.critical = b;
        rest = r;
    }
    if !rest.is_empty() {
        c.value = Some(octets(rest)?.0);
    }
    Ok(c)
}

/// `SEQUENCE { type, vals SET OF value }`.
fn attribute(data: &[u8]) -> Result<Attribute, Error> {
    let (body, _) = expect(data, ber::SEQUENCE)?;
    let (kind, rest) = octets(body)?;
    let (vals, _) = expect(rest, 0x31)?;
    Ok(Attribute {
        kind,
        values: list(vals, |v| Ok(octets(v)?.0))?,
    })
}

fn ldap_result(data: &[u8]) -> Result<(LdapResult, &[u8]), Error> {
    let (code, rest) = uint(data, 0x0a)?;
    let (matched_dn, rest) = octets(rest)?;
    let (message, mut rest) = octets(rest)?;
    if rest.first() == Some(&0xa3) {
        rest = read(rest)?.1; // referral
    }
    Ok((
        LdapResult {
            code,
            matched_dn,
            message,
        },
        rest,
    ))
}

/// Walks a filter (bounded depth) and gives its `present` attribute when it is one.
fn filter(data: &[u8], depth: usize) -> Result<Option<Vec<u8>>, Error> {
    if depth > MAX_FILTER_DEPTH {
        return Err(Error::Invalid);
    }
    let (t, _) = read(data)?;
    match t.tag {
        // and, or: SET OF Filter; not: Filter.
        0xa0 | 0xa1 => {
            let mut rest = t.body;
            let mut n = 0;
            while !rest.is_empty() {
                let (_, r) = read(rest)?;
                filter(&rest[..rest.len() - r.len()], depth + 1)?;
                rest = r;
                n += 1;
                if n > MAX_ITEMS {
                    return Err(Error::Invalid);
                }
            }
            Ok(None)
        }
        0xa2 => {
            filter(t.body, depth + 1)?;
            Ok(None)
        }
        0x87 => Ok(Some(t.body.to_vec())),
        // equality, substrings, >=, <=, approx, extensible.
        0xa3 | 0xa4 | 0xa5 | 0xa6 | 0xa8 | 0xa9 => Ok(None),
        _ => Err(Error::Invalid),
    }
}

fn op(t: Tlv<'_>) -> Result<Op, Error> {
    let class_ok = t.tag & 0xc0 == 0x40;
    let tag = t.tag & 0x1f;
    if !class_ok || op_name(tag).is_none() {
        return Err(Error::Invalid);
    }
    let constructed = t.constructed();
    // The primitive ones: unbind (NULL), del (LDAPDN), abandon (MessageID).
    let primitive = matches!(tag, UNBIND_REQUEST | DEL_REQUEST | ABANDON_REQUEST);
    if constructed == primitive {
        return Err(Error::Invalid);
    }
    let mut op = Op {
        tag,
        ..Op::default()
    };
    let b = t.body;
    match tag {
        BIND_REQUEST => {
            let (version, rest) = uint(b, ber::INTEGER)?;
            let (name, rest) = octets(rest)?;
            op.version = version;
            op.dn = name;
            let (auth, _) = read(rest)?;
            match auth.tag {
                0x80 => {}
                0xa3 => {
                    let (mech, rest) = octets(auth.body)?;
                    let creds = if rest.is_empty() {
                        None
                    } else {
                        Some(octets(rest)?.0)
                    };
                    op.sasl = Some((mech, creds));
                }
                _ => return Err(Error::Invalid),
            }
        }
        BIND_RESPONSE => {
            let (r, rest) = ldap_result(b)?;
            op.result = Some(r);
            if rest.first() == Some(&0x87) {
                op.server_sasl_creds = Some(read(rest)?.0.body.to_vec());
            }
        }
        UNBIND_REQUEST => {}
        SEARCH_REQUEST => {
            let (base, rest) = octets(b)?;
            let (scope, rest) = uint(rest, 0x0a)?;
            let (deref, rest) = uint(rest, 0x0a)?;
            let (size, rest) = uint(rest, ber::INTEGER)?;
            let (time, rest) = uint(rest, ber::INTEGER)?;
            let (types_only, rest) = boolean(rest)?;
            let (_, after) = read(rest)?;
            op.filter_present = filter(&rest[..rest.len() - after.len()], 0)?;
            let (attrs, _) = expect(after, ber::SEQUENCE)?;
            op.dn = base;
            op.scope = scope;
            op.deref = deref;
            op.size_limit = size;
            op.time_limit = time;
            op.types_only = types_only;
            op.attribute_names = list(attrs, |v| Ok(octets(v)?.0))?;
        }
        SEARCH_RESULT_ENTRY => {
            let (name, rest) = octets(b)?;
            let (attrs, _) = expect(rest, ber::SEQUENCE)?;
            op.dn = name;
            op.attributes = list(attrs, attribute)?;
        }
        SEARCH_RESULT_REFERENCE => {
            list(b, |v| Ok(octets(v)?.0))?;
        }
        MODIFY_REQUEST => {
            let (object, rest) = octets(b)?;
            let (changes, _) = expect(rest, ber::SEQUENCE)?;
            op.dn = object;
            let changes = list(changes, |c| {
                let (body, _) = expect(c, ber::SEQUENCE)?;
                let (kind, rest) = uint(body, 0x0a)?;
                Ok((kind, attribute(rest)?))
            })?;
            for (kind, a) in changes {
                op.change_ops.push(kind);
                op.attributes.push(a);
            }
        }
        ADD_REQUEST => {
            let (entry, rest) = octets(b)?;
            let (attrs, _) = expect(rest, ber::SEQUENCE)?;
            op.dn = entry;
            op.attributes = list(attrs, attribute)?;
        }
        DEL_REQUEST => op.dn = b.to_vec(),
        MOD_DN_REQUEST => {
            let (entry, rest) = octets(b)?;
            let (rdn, rest) = octets(rest)?;
            let (delete, rest) = boolean(rest)?;
            op.dn = entry;
            op.new_rdn = rdn;
            op.delete_old_rdn = delete;
            if rest.first() == Some(&0x80) {
                op.new_superior = Some(read(rest)?.0.body.to_vec());
            }
        }
        COMPARE_REQUEST => {
            let (entry, rest) = octets(b)?;
            let (ava, _) = expect(rest, ber::SEQUENCE)?;
            let (desc, rest) = octets(ava)?;
            let (value, _) = octets(rest)?;
            op.dn = entry;
            op.attributes = vec![Attribute {
                kind: desc,
                values: vec![value],
            }];
        }
        ABANDON_REQUEST => {
            ber::int(b)?;
        }
        EXTENDED_REQUEST => {
            let (name, rest) = expect(b, 0x80)?;
            op.name = Some(name.to_vec());
            if rest.first() == Some(&0x81) {
                op.value = Some(read(rest)?.0.body.to_vec());
            }
        }
        EXTENDED_RESPONSE => {
            let (r, mut rest) = ldap_result(b)?;
            op.result = Some(r);
            if rest.first() == Some(&0x8a) {
                let (n, r) = read(rest)?;
                op.name = Some(n.body.to_vec());
                rest = r;
            }
            if rest.first() == Some(&0x8b) {
                op.value = Some(read(rest)?.0.body.to_vec());
            }
        }
        INTERMEDIATE_RESPONSE => {
            let mut rest = b;
            if rest.first() == Some(&0x80) {
                let (n, r) = read(rest)?;
                op.name = Some(n.body.to_vec());
                rest = r;
            }
            if rest.first() == Some(&0x81) {
                op.value = Some(read(rest)?.0.body.to_vec());
            }
        }
        // The responses that are an LDAPResult.
        _ => op.result = Some(ldap_result(b)?.0),
    }
    Ok(op)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// The search request of Suricata-verify's ldap-search capture: base
    /// dc=example,dc=com, subtree, an AND filter, attributes `*` and `+`.
    pub(crate) const SEARCH: &str = "30560201026351041164633d6578616d706c652c64633d636f6d0a01020a0100020203e802011e010100a024a315040b6f626a656374436c6173730406706572736f6ea30b040375696404046a646f65300604012a04012b";
    /// Its search result done (success).
    pub(crate) const DONE: &str = "300c02010265070a010004000400";

    pub(crate) fn unhex(s: &str) -> Vec<u8> {
        (0..s.len() / 2)
            .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
            .collect()
    }

    #[test]
    fn search_and_done() {
        let b = unhex(SEARCH);
        let (m, n) = message(&b).unwrap();
        assert_eq!(n, b.len());
        assert_eq!(m.id, 2);
        assert_eq!(m.op.tag, SEARCH_REQUEST);
        assert_eq!(m.op.dn, b"dc=example,dc=com");
        assert_eq!(
            (m.op.scope, m.op.size_limit, m.op.time_limit),
            (2, 1000, 30)
        );
        assert_eq!(m.op.attribute_names, vec![b"*".to_vec(), b"+".to_vec()]);
        assert_eq!(m.op.filter_present, None);
        for cut in 0..b.len() {
            assert_eq!(message(&b[..cut]), Err(Error::Incomplete), "{cut}");
        }
        let (d, _) = message(&unhex(DONE)).unwrap();
        assert_eq!(d.op.result.unwrap().code, 0);
        assert_eq!(message(b"GET / HTTP/1.1\r\n"), Err(Error::Invalid));
        // An unknown operation tag.
        assert_eq!(
            message(b"\x30\x05\x02\x01\x01\x5e\x00"),
            Err(Error::Invalid)
        );
        // An element whose header runs past the whole message (a high tag number
        // with no length; a length of 45 bytes): Suricata's parser waits for more.
        assert_eq!(
            message(b"\x30\x05\x02\x01\x01\x5f\x00"),
            Err(Error::Incomplete)
        );
        assert_eq!(message(b"\x30\x03\xde\xad\xbe"), Err(Error::Incomplete));
        // A message declaring more than the bound.
        assert_eq!(message(b"\x30\x84\x7f\xff\xff\xff"), Err(Error::Invalid));
        assert_eq!(result_name(49), Some("invalid_credentials"));
        assert_eq!(op_name(19), Some("search_result_reference"));
    }

    #[test]
    fn deep_filters_are_refused() {
        // not(not(not(...present...))) deeper than the bound.
        let mut f = b"\x87\x01a".to_vec();
        for _ in 0..40 {
            let mut o = vec![0xa2, f.len() as u8];
            o.extend(&f);
            f = o;
            if f.len() > 120 {
                break;
            }
        }
        assert!(filter(&f, 0).is_err());
        assert_eq!(filter(b"\x87\x01a", 0), Ok(Some(b"a".to_vec())));
    }
}
