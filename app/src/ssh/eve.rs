//! The EVE `ssh` object: each side's identification line and, when HASSH is logged,
//! its HASSH, as Suricata 8 writes them (a side appears once its line is in).

use meerkat_eve::Obj;
use meerkat_proto::events::{Ssh, SshHassh, SshSide};

use super::state::{Side, SshTx};
use crate::AppRecord;
use crate::mqtt::eve::from_bytes;

fn side(s: &Side, hassh: bool) -> Option<SshSide> {
    s.banner_done.then(|| SshSide {
        proto_version: s.proto.clone(),
        software_version: s.software.clone(),
        hassh: s.hassh.as_ref().filter(|_| hassh).map(|h| SshHassh {
            hash: h.hash.clone(),
            string: h.string.clone(),
        }),
    })
}

/// The record of the flow's transaction.
pub fn record(tx: &SshTx) -> Ssh {
    Ssh {
        client: side(&tx.sides[0], tx.log_hassh),
        server: side(&tx.sides[1], tx.log_hassh),
    }
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Ssh(r) = r {
        ssh(o, r);
    }
}

fn write_side(o: &mut Obj<'_>, k: &str, s: &SshSide) {
    o.obj(k, |x| {
        from_bytes(x, "proto_version", &s.proto_version);
        if !s.software_version.is_empty() {
            from_bytes(x, "software_version", &s.software_version);
        }
        if let Some(h) = &s.hassh {
            x.obj("hassh", |y| {
                from_bytes(y, "hash", &h.hash);
                from_bytes(y, "string", &h.string);
            });
        }
    });
}

/// The `ssh` object.
pub fn ssh(o: &mut Obj<'_>, r: &Ssh) {
    o.obj("ssh", |x| {
        if let Some(c) = &r.client {
            write_side(x, "client", c);
        }
        if let Some(s) = &r.server {
            write_side(x, "server", s);
        }
    });
}
