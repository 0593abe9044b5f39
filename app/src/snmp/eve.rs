//! The EVE `snmp` object, in Suricata's field order and spelling.

use meerkat_eve::Obj;
use meerkat_proto::events::Snmp;

use super::state::SnmpTx;
use super::{ber, parser};
use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Snmp(r) = r {
        snmp(o, r);
    }
}

/// The record of a transaction.
pub fn record(tx: &SnmpTx) -> Snmp {
    let m = &tx.msg;
    let text = |s: &Option<parser::Span>| {
        s.as_ref()
            .map(|s| String::from_utf8_lossy(tx.bytes(s)).into_owned())
    };
    let pdu = m.pdu.as_ref();
    Snmp {
        version: tx.version,
        encrypted: m.encrypted,
        pdu_type: pdu.map(|p| p.pdu_type),
        error: pdu.map_or(0, |p| p.error),
        trap: pdu
            .and_then(|p| p.trap.as_ref())
            .map(|t| meerkat_proto::events::SnmpTrap {
                trap_type: t.generic,
                oid: ber::oid_string(tx.bytes(&t.enterprise)),
                address: t.agent.to_vec(),
            }),
        vars: pdu.map_or_else(Vec::new, |p| {
            p.vars
                .iter()
                .map(|v| ber::oid_string(tx.bytes(v)))
                .collect()
        }),
        community: text(&m.community),
        usm: text(&m.usm),
    }
}

/// Suricata's names of the PDU types.
fn pdu_type(t: u32) -> String {
    let name = match t {
        0 => "get_request",
        1 => "get_next_request",
        2 => "response",
        3 => "set_request",
        4 => "trap_v1",
        5 => "get_bulk_request",
        6 => "inform_request",
        7 => "trap_v2",
        8 => "report",
        x => return format!("Unknown(0x{x:x})"),
    };
    name.to_string()
}

/// The error-status names of RFC 3416, as Suricata writes them.
const ERRORS: &[&str] = &[
    "NoError",
    "TooBig",
    "NoSuchName",
    "BadValue",
    "ReadOnly",
    "GenErr",
    "NoAccess",
    "WrongType",
    "WrongLength",
    "WrongEncoding",
    "WrongValue",
    "NoCreation",
    "InconsistentValue",
    "ResourceUnavailable",
    "CommitFailed",
    "UndoFailed",
    "AuthorizationError",
    "NotWritable",
    "InconsistentName",
];

/// The generic trap names of RFC 1157 (as Suricata writes them: RFC's spelling).
const TRAPS: &[&str] = &[
    "coldStart",
    "warmStart",
    "linkDown",
    "linkUp",
    "authenticationFailure",
    "egpNeighborLoss",
    "enterpriseSpecific",
];

fn named(table: &[&str], kind: &str, n: u32) -> String {
    match table.get(n as usize) {
        Some(s) => (*s).to_string(),
        None => format!("{kind}({n} / 0x{n:x})"),
    }
}

/// The `snmp` object.
pub fn snmp(o: &mut Obj<'_>, r: &Snmp) {
    o.obj("snmp", |x| {
        x.u64("version", u64::from(r.version));
        if r.encrypted {
            x.str("pdu_type", "encrypted");
            return;
        }
        if let Some(t) = r.pdu_type {
            x.str("pdu_type", &pdu_type(t));
            if r.error != 0 {
                x.str("error", &named(ERRORS, "ErrorStatus", r.error));
            }
            if let Some(t) = &r.trap {
                x.str("trap_type", &named(TRAPS, "TrapType", t.trap_type));
                x.str("trap_oid", &t.oid);
                if let Ok(a) = <[u8; 4]>::try_from(t.address.as_slice()) {
                    x.str("trap_address", &std::net::Ipv4Addr::from(a).to_string());
                }
            }
            if !r.vars.is_empty() {
                x.raw("vars", |b| {
                    meerkat_eve::str_array(b, r.vars.iter().map(String::as_str));
                });
            }
        }
        if let Some(c) = &r.community {
            x.str("community", c);
        }
        if let Some(u) = &r.usm {
            x.str("usm", u);
        }
    });
}
