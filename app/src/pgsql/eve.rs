//! The EVE `pgsql` object: the record's fields in order.

use meerkat_eve::Obj;
use meerkat_proto::events::{Pgsql, PgsqlObject, pgsql_field::Value};

use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Pgsql(r) = r {
        pgsql(o, r);
    }
}

fn fields(o: &mut Obj<'_>, obj: &PgsqlObject) {
    for f in &obj.fields {
        match &f.value {
            Some(Value::Text(b)) => crate::mqtt::eve::from_bytes(o, &f.key, b),
            Some(Value::Number(n)) => {
                o.u64(&f.key, *n);
            }
            Some(Value::Flag(b)) => {
                o.bool(&f.key, *b);
            }
            Some(Value::Object(x)) => {
                o.obj(&f.key, |o| fields(o, x));
            }
            Some(Value::Params(x)) => {
                o.raw(&f.key, |buf| {
                    meerkat_eve::array(buf, &x.fields, |o, p| {
                        // Parameter names come from the wire: escaped.
                        if let Some(Value::Text(b)) = &p.value {
                            o.raw_escaped_key(&p.key, |buf| {
                                meerkat_eve::string(buf, &suricata_string(b));
                            });
                        }
                    });
                });
            }
            None => {}
        }
    }
}

/// Bytes as Suricata writes them: UTF-8 as is, else each byte above 0x7f as `\xNN`.
fn suricata_string(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => s.into(),
        Err(_) => b
            .iter()
            .map(|&c| {
                if c < 0x80 {
                    char::from(c).to_string()
                } else {
                    format!("\\x{c:02x}")
                }
            })
            .collect::<String>()
            .into(),
    }
}

/// The `pgsql` object.
pub fn pgsql(o: &mut Obj<'_>, r: &Pgsql) {
    o.obj("pgsql", |x| {
        x.u64("tx_id", r.tx_id);
        if let Some(q) = &r.request {
            x.obj("request", |o| fields(o, q));
        }
        if let Some(q) = &r.response {
            x.obj("response", |o| fields(o, q));
        }
    });
}
