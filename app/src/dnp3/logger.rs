//! The EVE `dnp3` record of a transaction: its message's link and application
//! headers, its objects and their points.

use meerkat_proto::events::{Dnp3, Dnp3Object, Dnp3Point, Dnp3Value, dnp3_value};

use super::objects::{Object, Value};
use super::state::Dnp3Tx;

fn value(v: &Value) -> Dnp3Value {
    Dnp3Value {
        value: Some(match v {
            Value::U(u) => dnp3_value::Value::Uint(*u),
            Value::I(i) => dnp3_value::Value::Int(*i),
            Value::F(f) => dnp3_value::Value::Float(*f),
            Value::Text(b) => dnp3_value::Value::Text(b.to_vec()),
            Value::Octets(b) => dnp3_value::Value::Octets(b.to_vec()),
            Value::CStr(b) => dnp3_value::Value::Cstr(b.to_vec()),
        }),
    }
}

fn object(o: &Object) -> Dnp3Object {
    let per = if o.points.is_empty() {
        0
    } else {
        o.values.len() / o.points.len()
    };
    Dnp3Object {
        group: u32::from(o.group),
        variation: u32::from(o.variation),
        qualifier: u32::from(o.qualifier),
        start: o.start,
        stop: o.stop,
        count: o.count,
        points: o
            .points
            .iter()
            .enumerate()
            .map(|(i, &(prefix, index))| Dnp3Point {
                prefix,
                index,
                values: o
                    .values
                    .get(i * per..(i + 1) * per)
                    .unwrap_or_default()
                    .iter()
                    .map(value)
                    .collect(),
            })
            .collect(),
    }
}

/// The record of `tx`; `in_alert` for the alert form (wrapped in `request` or
/// `response`). A message whose last segment has not come is logged as nothing (an
/// empty `dnp3` object in an alert, as Suricata's).
pub fn record(tx: &Dnp3Tx, in_alert: bool) -> Dnp3 {
    if !tx.done {
        return Dnp3 {
            in_alert,
            ..Dnp3::default()
        };
    }
    Dnp3 {
        kind: tx.kind.name().to_string(),
        in_alert,
        link_control: u32::from(tx.link.control),
        src: u32::from(tx.link.src),
        dst: u32::from(tx.link.dst),
        app_control: u32::from(tx.app_control),
        function_code: u32::from(tx.function_code),
        objects: tx.objects.iter().map(object).collect(),
        complete: tx.complete,
        has_iin: tx.iin.is_some(),
        iin: u32::from(tx.iin.unwrap_or(0)),
    }
}
