//! The EVE `modbus` object, in Suricata's field order: the transaction's id and its
//! request and response, each read again from the message's bytes.

use meerkat_eve::Obj;
use meerkat_proto::events::{Modbus, ModbusMessage};

use super::parser::{self, Data, Side, access, category, error};
use crate::AppRecord;
use crate::mqtt::eve::from_bytes;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Modbus(m) = r {
        modbus(o, m);
    }
}

fn modbus(o: &mut Obj<'_>, m: &Modbus) {
    o.obj("modbus", |o| {
        o.u64("id", m.id);
        if let Some(q) = &m.request {
            o.obj("request", |x| message(x, q, Side::Request));
        }
        if let Some(r) = &m.response {
            o.obj("response", |x| message(x, r, Side::Response));
        }
    });
}

/// Flags as Suricata writes them: the names of the flags (composite ones too) whose
/// bits are all set, joined by ` | `, or `NONE`.
fn flags(o: &mut Obj<'_>, k: &str, v: u8, names: &[(&str, u8)]) {
    let mut s = String::new();
    for (n, bits) in names {
        if v & bits == *bits {
            if !s.is_empty() {
                s.push_str(" | ");
            }
            s.push_str(n);
        }
    }
    o.str(k, if s.is_empty() { "NONE" } else { &s });
}

fn message(x: &mut Obj<'_>, msg: &ModbusMessage, side: Side) {
    let Ok((m, _)) = parser::parse(&msg.bytes, side) else {
        return;
    };
    x.u64("transaction_id", u64::from(m.transaction_id))
        .u64("protocol_id", u64::from(m.protocol_id))
        .u64("unit_id", u64::from(m.unit_id))
        .u64("function_raw", u64::from(m.function_raw))
        .str("function_code", parser::function_name(m.code));
    flags(x, "access_type", m.access, access::NAMES);
    flags(x, "category", m.category, category::NAMES);
    flags(x, "error_flags", msg.error_flags as u8, error::NAMES);
    match m.data {
        Data::Exception(e) => {
            x.obj("exception", |o| {
                o.u64("raw", u64::from(e))
                    .str("code", parser::exception_name(e));
            });
        }
        Data::Diagnostic { sub, data } => {
            x.obj("diagnostic", |o| {
                o.u64("raw", u64::from(sub))
                    .str("code", parser::diagnostic_name(sub));
                from_bytes(o, "data", data);
            });
        }
        Data::Mei { mei, data } => {
            x.obj("mei", |o| {
                o.u64("raw", u64::from(mei))
                    .str("code", parser::mei_name(mei));
                from_bytes(o, "data", data);
            });
        }
        Data::ReadRequest { address, quantity } => {
            x.obj("read", |o| {
                o.u64("address", u64::from(address))
                    .u64("quantity", u64::from(quantity));
            });
        }
        Data::ReadResponse(data) => {
            x.obj("read", |o| from_bytes(o, "data", data));
        }
        Data::WriteMultiple {
            address,
            quantity,
            data,
        } => {
            x.obj("write", |o| {
                o.u64("address", u64::from(address))
                    .u64("quantity", u64::from(quantity));
                from_bytes(o, "data", data);
            });
        }
        Data::WriteMask {
            address,
            and_mask,
            or_mask,
        } => {
            x.obj("write", |o| {
                o.u64("address", u64::from(address))
                    .u64("and_mask", u64::from(and_mask))
                    .u64("or_mask", u64::from(or_mask));
            });
        }
        Data::WriteOther { address, data } => {
            x.obj("write", |o| {
                o.u64("address", u64::from(address))
                    .u64("data", u64::from(data));
            });
        }
        Data::ReadWrite {
            read_address,
            read_quantity,
            address,
            quantity,
            data,
        } => {
            x.obj("read", |o| {
                o.u64("address", u64::from(read_address))
                    .u64("quantity", u64::from(read_quantity));
            });
            x.obj("write", |o| {
                o.u64("address", u64::from(address))
                    .u64("quantity", u64::from(quantity));
                from_bytes(o, "data", data);
            });
        }
        Data::Bytes(data) => {
            from_bytes(x, "data", data);
        }
        Data::Empty => {}
    }
}
