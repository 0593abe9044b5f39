//! The EVE `ldap` object, in Suricata 8's field order and spelling: the `request`
//! (message id, operation, the operation's object, controls) and the `responses`
//! (operation, message id when there is no request, the operation's object,
//! controls).

use meerkat_eve::Obj;
use meerkat_proto::events::{Ldap, LdapAttribute, LdapControl, LdapMessage, LdapResult};

use super::parser::{self, Message};
use super::state::LdapTx;
use crate::AppRecord;

fn message(m: &Message) -> LdapMessage {
    let op = &m.op;
    LdapMessage {
        message_id: m.id,
        op: u32::from(op.tag),
        dn: op.dn.clone(),
        result: op.result.as_ref().map(|r| LdapResult {
            code: r.code,
            matched_dn: r.matched_dn.clone(),
            message: r.message.clone(),
        }),
        version: op.version,
        scope: op.scope,
        deref: op.deref,
        size_limit: op.size_limit,
        time_limit: op.time_limit,
        types_only: op.types_only,
        filter_present: op.filter_present.clone(),
        attribute_names: op.attribute_names.clone(),
        attributes: op
            .attributes
            .iter()
            .map(|a| LdapAttribute {
                r#type: a.kind.clone(),
                values: a.values.clone(),
            })
            .collect(),
        change_ops: op.change_ops.clone(),
        sasl_mechanism: op.sasl.as_ref().map(|s| s.0.clone()),
        sasl_credentials: op.sasl.as_ref().and_then(|s| s.1.clone()),
        server_sasl_creds: op.server_sasl_creds.clone(),
        new_rdn: op.new_rdn.clone(),
        delete_old_rdn: op.delete_old_rdn,
        new_superior: op.new_superior.clone(),
        name: op.name.clone(),
        value: op.value.clone(),
        has_controls: m.controls.is_some(),
        controls: m
            .controls
            .iter()
            .flatten()
            .map(|c| LdapControl {
                control_type: c.oid.clone(),
                criticality: c.critical,
                control_value: c.value.clone(),
            })
            .collect(),
    }
}

/// The record of a transaction.
pub fn record(tx: &LdapTx) -> Ldap {
    Ldap {
        request: tx.request.as_ref().map(message),
        responses: tx.responses.iter().map(message).collect(),
    }
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Ldap(l) = r {
        ldap(o, l);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn op_name(op: u32) -> &'static str {
    u8::try_from(op)
        .ok()
        .and_then(parser::op_name)
        .unwrap_or("unknown")
}

/// The `ldap` object.
pub fn ldap(o: &mut Obj<'_>, l: &Ldap) {
    o.obj("ldap", |x| {
        if let Some(r) = &l.request {
            x.obj("request", |y| {
                y.u64("message_id", u64::from(r.message_id));
                y.str("operation", op_name(r.op));
                body(y, r);
                controls(y, r);
            });
        }
        if !l.responses.is_empty() {
            x.raw("responses", |b| {
                meerkat_eve::array(b, &l.responses, |y, r| {
                    y.str("operation", op_name(r.op));
                    if l.request.is_none() {
                        y.u64("message_id", u64::from(r.message_id));
                    }
                    body(y, r);
                    controls(y, r);
                })
            });
        }
    });
}

fn controls(y: &mut Obj<'_>, m: &LdapMessage) {
    if !m.has_controls {
        return;
    }
    y.raw("controls", |b| {
        meerkat_eve::array(b, &m.controls, |z, c| {
            z.bytes("control_type", &c.control_type);
            z.bool("criticality", c.criticality);
            if let Some(v) = &c.control_value {
                z.str("control_value", &hex(v));
            }
        })
    });
}

fn result(z: &mut Obj<'_>, m: &LdapMessage) {
    let r = m.result.clone().unwrap_or_default();
    match parser::result_name(r.code) {
        Some(n) => z.str("result_code", n),
        None => z.str("result_code", &r.code.to_string()),
    };
    z.bytes("matched_dn", &r.matched_dn);
    z.bytes("message", &r.message);
}

fn values(z: &mut Obj<'_>, key: &str, v: &[Vec<u8>]) {
    if v.is_empty() {
        return;
    }
    z.raw(key, |b| {
        b.push(b'[');
        for (i, s) in v.iter().enumerate() {
            if i > 0 {
                b.push(b',');
            }
            meerkat_eve::bytes_as_string(b, s);
        }
        b.push(b']');
    });
}

/// The operation's own object (`search_request`, `bind_response`, ...).
fn body(y: &mut Obj<'_>, m: &LdapMessage) {
    let Ok(tag) = u8::try_from(m.op) else {
        return;
    };
    let Some(name) = parser::op_name(tag) else {
        return;
    };
    match tag {
        parser::UNBIND_REQUEST | parser::ABANDON_REQUEST | parser::SEARCH_RESULT_REFERENCE => {}
        parser::SEARCH_REQUEST => {
            y.obj(name, |z| {
                z.bytes("base_object", &m.dn);
                z.u64("scope", u64::from(m.scope));
                z.u64("deref_alias", u64::from(m.deref));
                z.u64("size_limit", u64::from(m.size_limit));
                z.u64("time_limit", u64::from(m.time_limit));
                z.bool("types_only", m.types_only);
                if let Some(f) = &m.filter_present {
                    z.obj("filter", |f2| {
                        f2.str("type", "present").bytes("value", f);
                    });
                }
                values(z, "attributes", &m.attribute_names);
            });
        }
        parser::BIND_REQUEST => {
            y.obj(name, |z| {
                z.u64("version", u64::from(m.version));
                z.bytes("name", &m.dn);
                if let Some(mech) = &m.sasl_mechanism {
                    z.obj("sasl", |s| {
                        s.bytes("mechanism", mech);
                        if let Some(c) = &m.sasl_credentials {
                            s.str("credentials", &hex(c));
                        }
                    });
                }
            });
        }
        parser::MODIFY_REQUEST => {
            y.obj(name, |z| {
                z.bytes("object", &m.dn);
                if !m.attributes.is_empty() {
                    let items: Vec<(u32, &LdapAttribute)> = m
                        .change_ops
                        .iter()
                        .copied()
                        .zip(m.attributes.iter())
                        .collect();
                    z.raw("changes", |b| {
                        meerkat_eve::array(b, &items, |c, (kind, a)| {
                            let op = match kind {
                                0 => "add".to_string(),
                                1 => "delete".to_string(),
                                2 => "replace".to_string(),
                                n => n.to_string(),
                            };
                            c.str("operation", &op);
                            c.obj("modification", |d| {
                                d.bytes("attribute_type", &a.r#type);
                                values(d, "attribute_values", &a.values);
                            });
                        })
                    });
                }
            });
        }
        parser::ADD_REQUEST => {
            y.obj(name, |z| {
                z.bytes("entry", &m.dn);
                if !m.attributes.is_empty() {
                    z.raw("attributes", |b| {
                        meerkat_eve::array(b, &m.attributes, |c, a| {
                            c.bytes("name", &a.r#type);
                            values(c, "values", &a.values);
                        })
                    });
                }
            });
        }
        parser::DEL_REQUEST => {
            y.obj(name, |z| {
                z.bytes("dn", &m.dn);
            });
        }
        parser::MOD_DN_REQUEST => {
            y.obj(name, |z| {
                z.bytes("entry", &m.dn);
                z.bytes("new_rdn", &m.new_rdn);
                z.bool("delete_old_rdn", m.delete_old_rdn);
                if let Some(s) = &m.new_superior {
                    z.bytes("new_superior", s);
                }
            });
        }
        parser::COMPARE_REQUEST => {
            y.obj(name, |z| {
                z.bytes("entry", &m.dn);
                let a = m.attributes.first().cloned().unwrap_or_default();
                z.obj("attribute_value_assertion", |v| {
                    v.bytes("description", &a.r#type);
                    v.bytes("value", a.values.first().map_or(&[][..], |x| &x[..]));
                });
            });
        }
        parser::EXTENDED_REQUEST => {
            y.obj(name, |z| {
                z.bytes("name", m.name.as_deref().unwrap_or_default());
                if let Some(v) = &m.value {
                    z.bytes("value", v);
                }
            });
        }
        parser::SEARCH_RESULT_ENTRY => {
            y.obj(name, |z| {
                z.bytes("base_object", &m.dn);
                if !m.attributes.is_empty() {
                    z.raw("attributes", |b| {
                        meerkat_eve::array(b, &m.attributes, |c, a| {
                            c.bytes("type", &a.r#type);
                            values(c, "values", &a.values);
                        })
                    });
                }
            });
        }
        parser::BIND_RESPONSE => {
            y.obj(name, |z| {
                result(z, m);
                if let Some(c) = &m.server_sasl_creds {
                    z.str("server_sasl_creds", &hex(c));
                }
            });
        }
        parser::EXTENDED_RESPONSE => {
            y.obj(name, |z| {
                result(z, m);
                if let Some(n) = &m.name {
                    z.bytes("name", n);
                }
                if let Some(v) = &m.value {
                    z.bytes("value", v);
                }
            });
        }
        parser::INTERMEDIATE_RESPONSE => {
            y.obj(name, |z| {
                if let Some(n) = &m.name {
                    z.bytes("name", n);
                }
                if let Some(v) = &m.value {
                    z.bytes("value", v);
                }
            });
        }
        _ => {
            y.obj(name, |z| result(z, m));
        }
    }
}
