//! The EVE `pgsql` record of a transaction, as Suricata 8's logger writes it: a
//! `request` object of the client's messages and a `response` object of the server's,
//! one or more fields per message (ParameterStatus messages in a row make one
//! `parameter_status` array), ReadyForQuery and unknown messages left out.

use meerkat_proto::events::{Pgsql, PgsqlField, PgsqlObject, pgsql_field::Value};

use super::parser::{self, Request, Response};
use super::state::{PgsqlTx, Req, Resp};

fn field(key: &str, v: Value) -> PgsqlField {
    PgsqlField {
        key: key.to_string(),
        value: Some(v),
    }
}

fn text(key: &str, b: &[u8]) -> PgsqlField {
    field(key, Value::Text(b.to_vec()))
}

fn num(key: &str, n: u64) -> PgsqlField {
    field(key, Value::Number(n))
}

fn obj(key: &str, fields: Vec<PgsqlField>) -> PgsqlField {
    field(key, Value::Object(PgsqlObject { fields }))
}

fn param((k, v): &parser::Param) -> PgsqlField {
    text(parser::param_name(k), v)
}

/// The key of a password field, which the worker redacts unless the output logs
/// passwords (`password_redacted`).
pub const PASSWORD: &str = "password";

fn request(f: &mut Vec<PgsqlField>, r: &Req) {
    let m = match r {
        Req::CopyDataIn { count, size } => {
            f.push(obj(
                "copy_data_in",
                vec![num("msg_count", *count), num("data_size", *size)],
            ));
            return;
        }
        Req::Msg(m) => m,
    };
    match m {
        Request::Startup {
            major,
            minor,
            user,
            params,
        } => {
            f.push(text(
                "protocol_version",
                format!("{major}.{minor}").as_bytes(),
            ));
            let mut p = vec![text("user", user)];
            if !params.is_empty() {
                p.push(field(
                    "optional_parameters",
                    Value::Params(PgsqlObject {
                        fields: params.iter().map(param).collect(),
                    }),
                ));
            }
            f.push(obj("startup_parameters", p));
        }
        Request::SslRequest => f.push(text("message", b"SSL Request")),
        Request::SaslInitial { mechanism, param } => {
            f.push(text(
                "sasl_authentication_mechanism",
                mechanism.name().as_bytes(),
            ));
            f.push(text("sasl_param", param));
        }
        Request::Password(p) => f.push(text(PASSWORD, p)),
        Request::SaslResponse(p) => f.push(text("sasl_response", p)),
        Request::Query(q) => f.push(text("simple_query", q)),
        Request::CopyFail(p) => f.push(text("copy_fail", p)),
        Request::Cancel { pid, key } => {
            f.push(text("message", b"cancel_request"));
            f.push(num("process_id", u64::from(*pid)));
            f.push(num("secret_key", u64::from(*key)));
        }
        Request::CopyDone => f.push(text("message", b"copy_done")),
        Request::Terminate => f.push(text("message", b"termination_message")),
        Request::CopyData(_) | Request::Unknown(_) => {}
    }
}

fn response(f: &mut Vec<PgsqlField>, r: &Resp) {
    let m = match r {
        Resp::DataRows { count, size } => {
            f.push(num("data_rows", *count));
            f.push(num("data_size", *size));
            return;
        }
        Resp::CopyDataOut { count, size } => {
            f.push(obj(
                "copy_data_out",
                vec![num("row_count", *count), num("data_size", *size)],
            ));
            return;
        }
        Resp::Msg(m) => m,
    };
    let message = |f: &mut Vec<PgsqlField>, s: &str| f.push(text("message", s.as_bytes()));
    match m {
        Response::SslResponse(a) => f.push(field("ssl_accepted", Value::Flag(*a))),
        Response::Error(fields) | Response::Notice(fields) => {
            for (t, v) in fields {
                f.push(text(parser::field_name(*t), v));
            }
        }
        Response::AuthMd5(p) => f.push(text("authentication_md5_password", p)),
        Response::AuthSspi(p) => f.push(text("authentication_sspi", p)),
        Response::AuthSaslFinal(p) => f.push(text("authentication_sasl_final", p)),
        Response::CommandComplete(p) => f.push(text("command_completed", p)),
        Response::AuthOk => message(f, "authentication_ok"),
        Response::AuthCleartext => message(f, "authentication_cleartext_password"),
        Response::AuthSasl(_) => message(f, "authentication_sasl"),
        Response::AuthSaslContinue(_) => message(f, "authentication_sasl_continue"),
        Response::CopyDone => message(f, "copy_done"),
        Response::CopyOut(n) => f.push(obj(
            "copy_out_response",
            vec![num("columns", u64::from(*n))],
        )),
        Response::CopyIn(n) => f.push(obj("copy_in_response", vec![num("columns", u64::from(*n))])),
        Response::BackendKey { pid, key } => {
            f.push(num("process_id", u64::from(*pid)));
            f.push(num("secret_key", u64::from(*key)));
        }
        Response::RowDescription(n) => f.push(num("field_count", u64::from(*n))),
        Response::Notification {
            pid,
            channel,
            payload,
        } => {
            f.push(num("pid", u64::from(*pid)));
            f.push(text("channel_name", channel));
            f.push(text("payload", payload));
        }
        // Grouped by the caller.
        Response::ParameterStatus(_) => {}
        Response::ReadyForQuery(_)
        | Response::CopyData(_)
        | Response::DataRow(_)
        | Response::Unknown(_) => {}
    }
}

/// The record of a transaction.
pub fn record(tx: &PgsqlTx) -> Pgsql {
    let mut r = Pgsql {
        tx_id: tx.id + 1,
        ..Default::default()
    };
    if !tx.requests.is_empty() {
        let mut f = Vec::new();
        for q in &tx.requests {
            request(&mut f, q);
        }
        r.request = Some(PgsqlObject { fields: f });
    } else if tx.responses.is_empty() {
        return r;
    }
    if !tx.responses.is_empty() {
        let mut f: Vec<PgsqlField> = Vec::new();
        let mut params: Option<Vec<PgsqlField>> = None;
        for m in &tx.responses {
            if let Resp::Msg(Response::ParameterStatus(p)) = m {
                params.get_or_insert_with(Vec::new).push(param(p));
                continue;
            }
            if let Some(p) = params.take() {
                f.push(field(
                    "parameter_status",
                    Value::Params(PgsqlObject { fields: p }),
                ));
            }
            response(&mut f, m);
        }
        if let Some(p) = params.take() {
            f.push(field(
                "parameter_status",
                Value::Params(PgsqlObject { fields: p }),
            ));
        }
        r.response = Some(PgsqlObject { fields: f });
    }
    r
}

/// Leaves the passwords out of a record unless they are logged (`passwords`):
/// `"password_redacted": true` instead, as Suricata writes.
pub fn shape(r: &mut Pgsql, passwords: bool) {
    if passwords {
        return;
    }
    if let Some(req) = r.request.as_mut() {
        for f in &mut req.fields {
            if f.key == PASSWORD {
                *f = field("password_redacted", Value::Flag(true));
            }
        }
    }
}
