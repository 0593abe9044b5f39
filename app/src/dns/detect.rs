//! The inspection buffers of a DNS transaction: `dns.query` / `dns.queries.rrname` (one
//! item per question name), `dns.answers.rrname` (one item per answer record name),
//! `dns.response.rrname` (every name of a response), and the `dns.opcode` value.
//!
//! A transaction is one message (Suricata 8): the buffers of the other kind of message
//! are absent.

use super::parser::{Message, Rdata, Record};
use super::state::DnsTx;
use crate::AppProto;
use crate::buffers::{BufferDef, def};
use crate::descriptor::{KeywordDef, KeywordKind};
use crate::value::{KwValue, NumCmp, parse_num_cmp, required};
use crate::{Buf, BufferId};
use crate::{Dir, Transaction};

/// `dns.query`: one item per question name.
pub const QUERY: BufferId = BufferId::of(AppProto::Dns, 1);
/// `dns.queries.rrname` in a response: one item per question name.
pub const RESP_QUERIES: BufferId = BufferId::of(AppProto::Dns, 2);
/// `dns.answers.rrname` in a request (rare, but Suricata inspects it).
pub const REQ_ANSWERS: BufferId = BufferId::of(AppProto::Dns, 3);
/// `dns.answers.rrname` in a response: one item per answer record name.
pub const RESP_ANSWERS: BufferId = BufferId::of(AppProto::Dns, 4);
/// `dns.response.rrname`: every name of a response: question names, the owner names
/// of answer, authority and additional records, and the names in their rdata (CNAME,
/// PTR, NS, DNAME targets, MX exchange, SRV target, SOA mname and rname).
pub const RESPONSE_RRNAME: BufferId = BufferId::of(AppProto::Dns, 5);
/// `dns.authorities.rrname`: one item per authority record name.
pub const REQ_AUTHORITIES: BufferId = BufferId::of(AppProto::Dns, 6);
pub const RESP_AUTHORITIES: BufferId = BufferId::of(AppProto::Dns, 7);
/// `dns.additionals.rrname`: one item per additional record name.
pub const REQ_ADDITIONALS: BufferId = BufferId::of(AppProto::Dns, 8);
pub const RESP_ADDITIONALS: BufferId = BufferId::of(AppProto::Dns, 9);
/// Not a sticky buffer: 1 byte, the opcode of the request (`dns.opcode`).
pub const OPCODE_REQ: BufferId = BufferId::of(AppProto::Dns, 11);
/// Not a sticky buffer: 1 byte, the opcode of the response.
pub const OPCODE_RESP: BufferId = BufferId::of(AppProto::Dns, 12);

/// DNS's keywords that are not buffers.
pub static KEYWORDS: &[KeywordDef] = &[KeywordDef {
    name: "dns.opcode",
    aliases: &[],
    kind: KeywordKind::Check {
        parse: parse_opcode,
        eval: eval_opcode,
    },
}];

/// `dns.opcode:[!]N` (or a comparison): the opcode of the message of the direction
/// being inspected.
fn parse_opcode(v: Option<&str>) -> Result<KwValue, String> {
    let val = required(v)?;
    parse_num_cmp(val)
        .filter(|c| !matches!(c, NumCmp::MaskEq(..) | NumCmp::MaskNe(..)))
        .map(KwValue::Num)
        .ok_or_else(|| format!("bad opcode `{val}`"))
}

fn eval_opcode(v: &KwValue, dir: Dir, _now_s: i64, tx: &dyn Transaction) -> Option<bool> {
    let KwValue::Num(cmp) = v else {
        return Some(false);
    };
    let id = match dir {
        Dir::ToServer => OPCODE_REQ,
        Dir::ToClient => OPCODE_RESP,
    };
    match tx.buffer(id, 0) {
        Buf::Ready(b) | Buf::Partial(b) if !b.is_empty() => Some(cmp.test(u64::from(b[0]))),
        Buf::NotYet => None,
        _ => Some(false),
    }
}

/// The sticky buffers of DNS.
pub static BUFFERS: &[BufferDef] = &[
    def(
        "dns.query",
        &["dns_query"],
        None,
        AppProto::Dns,
        Some(QUERY),
        None,
        true,
    ),
    def(
        "dns.queries.rrname",
        &[],
        None,
        AppProto::Dns,
        Some(QUERY),
        Some(RESP_QUERIES),
        true,
    ),
    def(
        "dns.answers.rrname",
        &[],
        None,
        AppProto::Dns,
        Some(REQ_ANSWERS),
        Some(RESP_ANSWERS),
        true,
    ),
    def(
        "dns.response.rrname",
        &[],
        None,
        AppProto::Dns,
        None,
        Some(RESPONSE_RRNAME),
        true,
    ),
    def(
        "dns.authorities.rrname",
        &[],
        None,
        AppProto::Dns,
        Some(REQ_AUTHORITIES),
        Some(RESP_AUTHORITIES),
        true,
    ),
    def(
        "dns.additionals.rrname",
        &[],
        None,
        AppProto::Dns,
        Some(REQ_ADDITIONALS),
        Some(RESP_ADDITIONALS),
        true,
    ),
];

/// The names in a record's rdata (the targets of name-valued types).
fn rdata_names<'a>(m: &'a Message, r: &Record) -> impl Iterator<Item = &'a [u8]> {
    let (a, b) = match (&r.rdata, r.rrtype) {
        // NS, CNAME, PTR, DNAME: the rdata is one name.
        (Rdata::Text(t), 2 | 5 | 12 | 39) => (Some(*t), None),
        (Rdata::Mx { exchange, .. }, _) => (Some(*exchange), None),
        (Rdata::Srv { name, .. }, _) => (Some(*name), None),
        (Rdata::Soa { mname, rname, .. }, _) => (Some(*mname), Some(*rname)),
        _ => (None, None),
    };
    a.into_iter().chain(b).map(|s| m.text(s))
}

/// Every name of a message, in wire order: questions, then each answer, authority and
/// additional record's owner name followed by the names in its rdata.
fn all_names(m: &Message) -> impl Iterator<Item = &[u8]> {
    // Answers, authorities and additionals are contiguous, in wire order.
    let records = m
        .answers()
        .iter()
        .chain(m.authorities())
        .chain(m.additionals())
        .flat_map(|r| std::iter::once(m.text(r.name)).chain(rdata_names(m, r)));
    m.questions.iter().map(|q| m.text(q.name)).chain(records)
}

/// One item of a name buffer. An empty name (the root) ends the buffer, as in Suricata,
/// whose getters give no buffer for one (measured: `bsize:0` never matches).
fn item(b: Option<&[u8]>) -> Buf<'_> {
    b.filter(|b| !b.is_empty()).map_or(Buf::Absent, Buf::Ready)
}

/// What a buffer reads from a message.
#[derive(Clone, Copy)]
pub(crate) enum Field {
    Question,
    Answer,
    Authority,
    Additional,
    AnyName,
    Opcode,
}

pub(crate) fn field(m: &Message, f: Field, index: usize) -> Buf<'_> {
    match f {
        Field::Question => item(m.questions.get(index).map(|q| m.text(q.name))),
        Field::Answer => item(m.answers().get(index).map(|r| m.text(r.name))),
        Field::Authority => item(m.authorities().get(index).map(|r| m.text(r.name))),
        Field::Additional => item(m.additionals().get(index).map(|r| m.text(r.name))),
        Field::AnyName => item(all_names(m).nth(index)),
        Field::Opcode => {
            // A static table: the buffer borrows from here, not from the message.
            const OPCODES: [u8; 16] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];
            let op = usize::from(m.header.opcode() & 0xf);
            if index == 0 {
                Buf::Ready(&OPCODES[op..op + 1])
            } else {
                Buf::Absent
            }
        }
    }
}

pub const FRAME_PDU_TS: BufferId = BufferId::of(AppProto::Dns, 100);
pub const FRAME_PDU_TC: BufferId = BufferId::of(AppProto::Dns, 101);

/// The frames of DNS: `pdu`, each message (over TCP, without its length prefix).
pub static FRAMES: &[BufferDef] = &[def(
    "pdu",
    &[],
    None,
    AppProto::Dns,
    Some(FRAME_PDU_TS),
    Some(FRAME_PDU_TC),
    false,
)];

fn frame_of(tx: &DnsTx, id: BufferId) -> Option<Option<&super::state::PduFrame>> {
    match id {
        FRAME_PDU_TS => Some(tx.frames[0].as_deref()),
        FRAME_PDU_TC => Some(tx.frames[1].as_deref()),
        _ => None,
    }
}

/// [`crate::Transaction::frame`] for DNS: the message's frame, attached to its
/// transaction under Suricata's id for it (one more than the EVE `tx_id`).
pub fn frame_meta(tx: &DnsTx, id: BufferId, index: usize) -> Option<crate::FrameMeta> {
    let f = frame_of(tx, id)??;
    (index == 0).then(|| crate::FrameMeta {
        id: f.id,
        stream_offset: f.offset,
        complete: true,
        tx_id: Some(tx.id + 1),
        length: None,
    })
}

pub fn buffer(tx: &DnsTx, id: BufferId, index: usize) -> Buf<'_> {
    if let Some(f) = frame_of(tx, id) {
        return match f {
            Some(f) if index == 0 => Buf::Ready(&f.bytes),
            Some(_) => Buf::Absent,
            None => Buf::Absent,
        };
    }
    let (request, f) = match id {
        QUERY => (true, Field::Question),
        RESP_QUERIES => (false, Field::Question),
        REQ_ANSWERS => (true, Field::Answer),
        RESP_ANSWERS => (false, Field::Answer),
        REQ_AUTHORITIES => (true, Field::Authority),
        RESP_AUTHORITIES => (false, Field::Authority),
        REQ_ADDITIONALS => (true, Field::Additional),
        RESP_ADDITIONALS => (false, Field::Additional),
        RESPONSE_RRNAME => (false, Field::AnyName),
        OPCODE_REQ => (true, Field::Opcode),
        OPCODE_RESP => (false, Field::Opcode),
        _ => return Buf::Absent,
    };
    // A transaction is one message: the other kind's buffers are absent.
    match (request, &tx.request, &tx.response) {
        (true, Some(m), _) | (false, _, Some(m)) => field(m, f, index),
        _ => Buf::Absent,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dns::parser::{Header, Question, Section};

    /// Rdata whose texts are not yet in a message's arena.
    enum R {
        Text(&'static str),
        Mx(u16, &'static str),
    }

    fn msg(flags: u16, q: &str, answers: &[(&str, u16, R)]) -> Message {
        let mut m = Message::new(Header {
            flags,
            ..Header::default()
        });
        let name = m.add_text(q.as_bytes());
        m.push_question(Question {
            name,
            rrtype: 1,
            class: 1,
        });
        for (name, rrtype, rdata) in answers {
            let name = m.add_text(name.as_bytes());
            let rdata = match rdata {
                R::Text(t) => Rdata::Text(m.add_text(t.as_bytes())),
                R::Mx(preference, x) => Rdata::Mx {
                    preference: *preference,
                    exchange: m.add_text(x.as_bytes()),
                },
            };
            m.push_record(
                Section::Answer,
                Record {
                    name,
                    rrtype: *rrtype,
                    class: 1,
                    ttl: 60,
                    rdata,
                },
            );
        }
        m
    }

    fn items(tx: &DnsTx, id: BufferId) -> Vec<Vec<u8>> {
        (0..)
            .map_while(|i| match buffer(tx, id, i) {
                Buf::Ready(b) => Some(b.to_vec()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn names_per_section_and_direction() {
        let mut tx = DnsTx {
            request: Some(msg(
                0x2000,
                "www.example.com",
                &[("x.oisf.net", 1, R::Text("1.2.3.4"))],
            )),
            ..DnsTx::default()
        };
        assert_eq!(items(&tx, QUERY), vec![b"www.example.com".to_vec()]);
        assert_eq!(items(&tx, REQ_ANSWERS), vec![b"x.oisf.net".to_vec()]);
        // A query's transaction has no response buffers.
        assert_eq!(buffer(&tx, RESP_ANSWERS, 0), Buf::Absent);
        assert_eq!(buffer(&tx, OPCODE_REQ, 0), Buf::Ready(&[4]));
        tx.response = Some(msg(
            0x8000,
            "www.example.com",
            &[
                ("www.example.com", 5, R::Text("example.com")),
                ("example.com", 1, R::Text("93.184.216.34")),
                ("example.com", 15, R::Mx(10, "mail.example.com")),
            ],
        ));
        assert_eq!(
            items(&tx, RESP_ANSWERS),
            vec![
                b"www.example.com".to_vec(),
                b"example.com".to_vec(),
                b"example.com".to_vec()
            ]
        );
        // Names only: the A record's address is not one.
        assert_eq!(
            items(&tx, RESPONSE_RRNAME),
            vec![
                b"www.example.com".to_vec(),
                b"www.example.com".to_vec(),
                b"example.com".to_vec(),
                b"example.com".to_vec(),
                b"example.com".to_vec(),
                b"mail.example.com".to_vec(),
            ]
        );
        assert_eq!(buffer(&tx, OPCODE_RESP, 0), Buf::Ready(&[0]));
        assert_eq!(buffer(&tx, OPCODE_RESP, 1), Buf::Absent);
        // A response alone has no request buffers.
        let alone = DnsTx {
            response: tx.response.take(),
            ..DnsTx::default()
        };
        assert_eq!(buffer(&alone, QUERY, 0), Buf::Absent);
        assert_eq!(
            items(&alone, RESP_QUERIES),
            vec![b"www.example.com".to_vec()]
        );
    }
}
