//! A BitTorrent DHT message (BEP 5): a bencoded dictionary with a transaction id `t`,
//! a type `y` (`q` query, `r` response, `e` error), the query's name `q` and arguments
//! `a`, the response `r`, the error `e`, and the client version `v` (BEP 20).
//!
//! Read as Suricata 8 reads it: every known key is decoded whatever the type says
//! (one that does not decode makes the message malformed), unknown keys are skipped
//! (but must be well-formed bencode within the depth limit), and the record is filled
//! in Suricata's order, so that a message that fails after the loop keeps what was set
//! before the failure (a query without `t`: its type and arguments, no transaction id).

use meerkat_proto::events::{
    BittorrentDht, BittorrentDhtError, BittorrentDhtNode, BittorrentDhtPeer, BittorrentDhtRequest,
    BittorrentDhtResponse,
};

use super::bencode::{self, Reader, Value};

/// A compact IPv4 node info: id, address, port.
pub const NODE_LEN: usize = 20 + 4 + 2;
/// A compact IPv6 node info.
pub const NODE6_LEN: usize = 20 + 16 + 2;
/// Most nodes kept of one `nodes` or `nodes6` string (a datagram holds fewer than
/// 2,521; more are not logged).
pub const MAX_NODES: usize = 2_600;
/// Most peers kept of one `values` list (a datagram holds fewer than 8,192).
pub const MAX_PEERS: usize = 8_192;

/// Why a message is malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Error {
    Bencode(bencode::Error),
    /// A value of the wrong type, or out of its range (`port` above 65535).
    Type(&'static str),
    /// A required key is missing.
    Missing(&'static str),
    /// `y` is none of `q`, `r`, `e`.
    UnknownType,
}

impl From<bencode::Error> for Error {
    fn from(e: bencode::Error) -> Error {
        Error::Bencode(e)
    }
}

/// Whether a datagram is one Suricata's parser takes for DHT (anything else on a DHT
/// flow is ignored): a query, a response (BEP 42's `ip` key may come first) or an
/// error, by the dictionary's first key.
pub fn is_dht(data: &[u8]) -> bool {
    data.len() > 5 && matches!(&data[..5], b"d1:ad" | b"d1:rd" | b"d2:ip" | b"d1:el")
}

fn bytes<'a>(v: Value<'a>, what: &'static str) -> Result<&'a [u8], Error> {
    match v {
        Value::Bytes(b) => Ok(b),
        _ => Err(Error::Type(what)),
    }
}

fn text(v: Value<'_>, what: &'static str) -> Result<String, Error> {
    std::str::from_utf8(bytes(v, what)?)
        .map(str::to_string)
        .map_err(|_| Error::Type(what))
}

fn int<T: TryFrom<i64>>(v: Value<'_>, what: &'static str) -> Result<T, Error> {
    match v {
        Value::Int(n) => T::try_from(n).map_err(|_| Error::Type(what)),
        _ => Err(Error::Type(what)),
    }
}

fn dict(v: Value<'_>, what: &'static str) -> Result<bencode::Container, Error> {
    match v {
        Value::Dict(c) => Ok(c),
        _ => Err(Error::Type(what)),
    }
}

/// A query's arguments.
fn request(r: &Reader<'_>, v: Value<'_>) -> Result<BittorrentDhtRequest, Error> {
    let mut c = dict(v, "a")?;
    let mut id = None;
    let mut q = BittorrentDhtRequest::default();
    while let Some((k, v)) = r.dict_next(&mut c)? {
        match k {
            b"id" => id = Some(bytes(v, "id")?.to_vec()),
            b"target" => q.target = Some(bytes(v, "target")?.to_vec()),
            b"info_hash" => q.info_hash = Some(bytes(v, "info_hash")?.to_vec()),
            b"token" => q.token = Some(bytes(v, "token")?.to_vec()),
            b"implied_port" => q.implied_port = Some(u32::from(int::<u8>(v, "implied_port")?)),
            b"port" => q.port = Some(u32::from(int::<u16>(v, "port")?)),
            _ => {}
        }
    }
    q.id = id.ok_or(Error::Missing("id"))?;
    Ok(q)
}

/// The compact node infos of a `nodes` (`len` 26) or `nodes6` (38) string; a partial
/// one at the end is left out.
fn nodes(b: &[u8], len: usize) -> Vec<BittorrentDhtNode> {
    b.chunks_exact(len)
        .take(MAX_NODES)
        .map(|n| {
            let (id, rest) = n.split_at(20);
            let (ip, port) = rest.split_at(len - 22);
            BittorrentDhtNode {
                id: id.to_vec(),
                ip: ip.to_vec(),
                port: u32::from(u16::from_be_bytes([port[0], port[1]])),
            }
        })
        .collect()
}

/// A compact peer info: an IPv4 address when shorter than 18 bytes, else IPv6, then
/// the port (bytes after it are ignored).
fn peer(b: &[u8]) -> Option<BittorrentDhtPeer> {
    let n = if b.len() < 18 { 4 } else { 16 };
    let port = b.get(n..n + 2)?;
    Some(BittorrentDhtPeer {
        ip: b[..n].to_vec(),
        port: u32::from(u16::from_be_bytes([port[0], port[1]])),
    })
}

/// A response.
fn response(r: &Reader<'_>, v: Value<'_>) -> Result<BittorrentDhtResponse, Error> {
    let mut c = dict(v, "r")?;
    let mut id = None;
    let mut resp = BittorrentDhtResponse::default();
    while let Some((k, v)) = r.dict_next(&mut c)? {
        match k {
            b"id" => id = Some(bytes(v, "id")?.to_vec()),
            b"nodes" => resp.nodes = nodes(bytes(v, "nodes")?, NODE_LEN),
            b"nodes6" => resp.nodes6 = nodes(bytes(v, "nodes6")?, NODE6_LEN),
            b"values" => {
                // Anything but a list is ignored.
                if let Value::List(mut l) = v {
                    while let Some(e) = r.list_next(&mut l)? {
                        let p = peer(bytes(e, "values")?).ok_or(Error::Type("values"))?;
                        if resp.values.len() < MAX_PEERS {
                            resp.values.push(p);
                        }
                    }
                }
            }
            b"token" => resp.token = Some(bytes(v, "token")?.to_vec()),
            _ => {}
        }
    }
    resp.id = id.ok_or(Error::Missing("id"))?;
    Ok(resp)
}

/// An error: the list's last integer is its code, its last string its message; other
/// entries are ignored.
fn error(r: &Reader<'_>, v: Value<'_>) -> Result<BittorrentDhtError, Error> {
    let Value::List(mut l) = v else {
        return Err(Error::Type("e"));
    };
    let (mut num, mut msg) = (None, None);
    while let Some(e) = r.list_next(&mut l)? {
        match e {
            Value::Int(_) => num = Some(u32::from(int::<u16>(e, "num")?)),
            Value::Bytes(_) => msg = Some(text(e, "msg")?),
            _ => {}
        }
    }
    Ok(BittorrentDhtError {
        num: num.ok_or(Error::Missing("num"))?,
        msg: msg.ok_or(Error::Missing("msg"))?,
    })
}

/// Parses `data` into `m` (see the module's doc for what a failed parse leaves).
pub fn parse(data: &[u8], m: &mut BittorrentDht) -> Result<(), Error> {
    let r = Reader::new(data);
    let mut c = dict(r.top()?, "message")?;
    let (mut kind, mut query, mut args, mut resp, mut err, mut tid, mut version) =
        (None, None, None, None, None, None, None);
    while let Some((k, v)) = r.dict_next(&mut c)? {
        match k {
            b"y" => kind = Some(text(v, "y")?),
            b"q" => query = Some(text(v, "q")?),
            b"a" => args = Some(request(&r, v)?),
            b"r" => resp = Some(response(&r, v)?),
            b"e" => err = Some(error(&r, v)?),
            b"t" => tid = Some(bytes(v, "t")?),
            b"v" => version = Some(bytes(v, "v")?),
            _ => {}
        }
    }
    match kind.as_deref() {
        Some("q") => {
            m.request_type = Some(query.ok_or(Error::Missing("q"))?);
            m.request = Some(args.ok_or(Error::Missing("a"))?);
        }
        Some("r") => m.response = Some(resp.ok_or(Error::Missing("r"))?),
        Some("e") => m.error = Some(err.ok_or(Error::Missing("e"))?),
        Some(_) => return Err(Error::UnknownType),
        None => return Err(Error::Missing("y")),
    }
    m.transaction_id = tid.ok_or(Error::Missing("t"))?.to_vec();
    m.client_version = version.map(<[u8]>::to_vec);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(data: &[u8]) -> (Result<(), Error>, BittorrentDht) {
        let mut m = BittorrentDht::default();
        (parse(data, &mut m), m)
    }

    /// BEP 5's example messages.
    #[test]
    fn bep5_examples() {
        let (r, m) = parsed(b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:t2:aa1:y1:qe");
        assert_eq!(r, Ok(()));
        assert_eq!(m.transaction_id, b"aa");
        assert_eq!(m.request_type.as_deref(), Some("ping"));
        assert_eq!(m.request.unwrap().id, b"abcdefghij0123456789");
        let (r, m) = parsed(
            b"d1:rd2:id20:abcdefghij01234567895:token8:aoeusnth6:valuesl6:axje.u6:idhtnmee1:t2:aa1:y1:re",
        );
        assert_eq!(r, Ok(()));
        let resp = m.response.unwrap();
        assert_eq!(resp.token.as_deref(), Some(&b"aoeusnth"[..]));
        assert_eq!(resp.values.len(), 2);
        assert_eq!(resp.values[0].ip, b"axje");
        assert_eq!(resp.values[0].port, u32::from(u16::from_be_bytes(*b".u")));
        let (r, m) = parsed(b"d1:eli201e23:A Generic Error Ocurrede1:t2:aa1:y1:ee");
        assert_eq!(r, Ok(()));
        let e = m.error.unwrap();
        assert_eq!((e.num, e.msg.as_str()), (201, "A Generic Error Ocurred"));
        let (r, m) = parsed(
            b"d1:ad2:id20:abcdefghij012345678912:implied_porti1e9:info_hash20:mnopqrstuvwxyz1234564:porti6881e5:token8:aoeusnthe1:q13:announce_peer1:t2:aa1:y1:qe",
        );
        assert_eq!(r, Ok(()));
        let q = m.request.unwrap();
        assert_eq!((q.implied_port, q.port), (Some(1), Some(6881)));
    }

    #[test]
    fn nodes_and_partial_ones() {
        let mut n = vec![1u8; 20];
        n.extend_from_slice(&[10, 0, 0, 1, 0x1a, 0xe1]);
        n.extend_from_slice(&[9; 7]);
        assert_eq!(nodes(&n, NODE_LEN).len(), 1);
        assert_eq!(nodes(&n, NODE_LEN)[0].port, 6881);
        assert!(nodes(&n[..25], NODE_LEN).is_empty());
        assert_eq!(peer(&[1, 2, 3, 4, 0, 80]).unwrap().ip, [1, 2, 3, 4]);
        assert!(peer(&[1, 2, 3, 4, 0]).is_none());
        assert_eq!(peer(&[7; 18]).unwrap().ip.len(), 16);
    }

    /// What a failed message keeps, as Suricata's parser leaves it.
    #[test]
    fn failures_keep_what_was_set() {
        // No `t`: the query stays.
        let (r, m) = parsed(b"d1:ad2:id20:abcdefghij0123456789e1:q4:ping1:y1:qe");
        assert_eq!(r, Err(Error::Missing("t")));
        assert_eq!(m.request_type.as_deref(), Some("ping"));
        assert!(m.transaction_id.is_empty());
        // No `a`: the query's type stays.
        let (r, m) = parsed(b"d1:q4:ping1:t2:aa1:y1:qe");
        assert_eq!(r, Err(Error::Missing("a")));
        assert_eq!(m.request_type.as_deref(), Some("ping"));
        // A bad key: nothing.
        let (r, m) =
            parsed(b"d1:ad2:id20:abcdefghij01234567894:porti70000ee1:q4:ping1:t2:aa1:y1:qe");
        assert_eq!(r, Err(Error::Type("port")));
        assert_eq!(m, BittorrentDht::default());
        assert_eq!(parsed(b"d1:t2:aa1:y1:xe").0, Err(Error::UnknownType));
        assert_eq!(parsed(b"d1:t2:aa1:y1:ee").0, Err(Error::Missing("e")));
        assert_eq!(
            parsed(b"d1:eli201ee1:t2:aa1:y1:ee").0,
            Err(Error::Missing("msg"))
        );
        assert_eq!(
            parsed(b"d1:eli-1e1:xe1:t2:aa1:y1:ee").0,
            Err(Error::Type("num"))
        );
    }

    #[test]
    fn strict_bencode() {
        use bencode::Error as B;
        let e = |d: &[u8]| parsed(d).0;
        assert_eq!(e(b"d1:t2:aa1:y1:q"), Err(Error::Bencode(B::Eof)));
        assert_eq!(e(b"d1:y1:q1:t2:aae"), Err(Error::Bencode(B::UnsortedKeys)));
        assert_eq!(e(b"d1:t2:aa1:t2:aae"), Err(Error::Bencode(B::UnsortedKeys)));
        assert_eq!(e(b"d1:xi03ee"), Err(Error::Bencode(B::Syntax)));
        assert_eq!(e(b"d1:xi-0ee"), Err(Error::Bencode(B::Syntax)));
        assert_eq!(e(b"d1:x02:aae"), Err(Error::Bencode(B::Syntax)));
        assert_eq!(e(b"d1:xie"), Err(Error::Bencode(B::Syntax)));
        assert_eq!(
            e(b"d1:xi99999999999999999999ee"),
            Err(Error::Bencode(B::Syntax))
        );
        assert_eq!(e(b"di1e1:xe"), Err(Error::Bencode(B::KeyNotString)));
        assert_eq!(e(b"d1:x99999999:e"), Err(Error::Bencode(B::TooLong)));
        // Three levels are read, four are not.
        let (r, _) = parsed(b"d1:ad2:id1:z1:xl1:aee1:q4:ping1:t2:aa1:y1:qe");
        assert_eq!(r, Ok(()));
        let (r, _) = parsed(b"d1:ad2:id1:z1:xll1:aeee1:q4:ping1:t2:aa1:y1:qe");
        assert_eq!(r, Err(Error::Bencode(B::TooDeep)));
        // Bytes after the message are not read.
        assert_eq!(e(b"d1:eli1e1:me1:t0:1:y1:eeXYZ"), Ok(()));
        assert!(is_dht(b"d1:ad2:id20:"));
        assert!(is_dht(b"d2:ip6:"));
        assert!(!is_dht(b"d1:ad"));
        assert!(!is_dht(b"d1:t2:aa"));
    }

    /// Deep nesting is refused without recursion past the limit, however long.
    #[test]
    fn deep_nesting_is_bounded() {
        let mut d = b"d1:x".to_vec();
        d.extend(std::iter::repeat_n(b'l', 100_000));
        assert_eq!(parsed(&d).0, Err(Error::Bencode(bencode::Error::TooDeep)));
    }
}
