//! The EVE `krb5` object, in Suricata 8's field order and spelling: `msg_type`, for an
//! error `failed_request` and `error_code`, `cname`, `realm`, `sname` (`<empty>` when
//! the message has none), `encryption` (`<none>`), `weak_encryption`, and for a reply
//! `ticket_encryption` and `ticket_weak_encryption`. Type, code and encryption names
//! are `kerberos-parser`'s, as Suricata's (an unknown one as `EncryptionType(99)`).

use kerberos_parser::krb5::{EncryptionType, ErrorCode, MessageType};
use meerkat_eve::Obj;
use meerkat_proto::events::Krb5;

use super::parser::{KRB_ERROR, weak};
use super::state::Krb5Tx;
use crate::AppRecord;

/// The record of a transaction.
pub fn record(tx: &Krb5Tx) -> Krb5 {
    let m = &tx.msg;
    let error = m.msg_type == KRB_ERROR;
    Krb5 {
        msg_type: m.msg_type,
        failed_request: error.then_some(tx.failed_request),
        error_code: if error { m.error_code } else { None },
        cname: m.cname.as_ref().map(|n| n.join("/")),
        realm: m.realm.clone(),
        sname: m.sname.as_ref().map(|n| n.join("/")),
        encryption: m.etype,
        ticket_encryption: m.ticket_etype,
    }
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Krb5(r) = r {
        o.obj("krb5", |x| krb5(x, r));
    }
}

fn krb5(o: &mut Obj<'_>, r: &Krb5) {
    o.str("msg_type", &format!("{:?}", MessageType(r.msg_type)));
    if let Some(req) = r.failed_request {
        let name = match req {
            0 => "UNKNOWN".to_string(),
            t => format!("{:?}", MessageType(t)),
        };
        o.str("failed_request", &name);
    }
    if let Some(code) = r.error_code {
        o.str("error_code", &format!("{:?}", ErrorCode(code)));
    }
    o.str("cname", r.cname.as_deref().unwrap_or("<empty>"));
    o.str("realm", r.realm.as_deref().unwrap_or("<empty>"));
    o.str("sname", r.sname.as_deref().unwrap_or("<empty>"));
    match r.encryption {
        Some(e) => o
            .str("encryption", &etype_name(e))
            .bool("weak_encryption", weak(e)),
        None => o.str("encryption", "<none>").bool("weak_encryption", false),
    };
    if let Some(e) = r.ticket_encryption {
        o.str("ticket_encryption", &etype_name(e))
            .bool("ticket_weak_encryption", weak(e));
    }
}

/// An encryption type's name as Suricata writes it.
pub fn etype_name(e: i32) -> String {
    format!("{:?}", EncryptionType(e))
}

#[cfg(test)]
mod tests {
    use super::super::detect::ETYPES;
    use super::*;

    #[test]
    fn names_are_the_crate_s() {
        for &(name, t) in ETYPES {
            assert_eq!(etype_name(t), name);
        }
        assert_eq!(etype_name(99), "EncryptionType(99)");
        assert_eq!(format!("{:?}", ErrorCode(99)), "ErrorCode(99)");
        assert_eq!(format!("{:?}", ErrorCode(25)), "KDC_ERR_PREAUTH_REQUIRED");
    }
}
