//! The EVE `smb` record of a transaction, in Suricata 8's field order: `id`, `dialect`,
//! `command`, `status`/`status_code` (once answered), `session_id`, `tree_id`, then what
//! the command carries (dialects and GUIDs, NTLMSSP and native OS strings, the share,
//! the file and its times, a named pipe's DCE/RPC call).

use meerkat_eve::Obj;
use meerkat_proto::events::{
    DcerpcRes, Smb, SmbDcerpc, SmbDcerpcInterface, SmbKerberos, SmbNative, SmbNtlmssp, SmbRename,
    SmbService, SmbSetInfo, SmbTimes,
};

use super::parser::{smb1_command_name, smb2_command_name};
use super::state::{Kind, SmbTx};
use crate::AppRecord;
use crate::dcerpc::parser::{self as dp, type_name, uuid_string};

fn disposition(d: u32) -> String {
    match d {
        0 => "FILE_SUPERSEDE".into(),
        1 => "FILE_OPEN".into(),
        2 => "FILE_CREATE".into(),
        3 => "FILE_OPEN_IF".into(),
        4 => "FILE_OVERWRITE".into(),
        5 => "FILE_OVERWRITE_IF".into(),
        d => format!("UNKNOWN_{d}"),
    }
}

fn native((os, lm): &(String, String)) -> SmbNative {
    SmbNative {
        native_os: os.clone(),
        native_lm: lm.clone(),
    }
}

/// The record of a transaction.
pub fn record(tx: &SmbTx) -> Smb {
    let command = if tx.version == 1 {
        smb1_command_name(tx.command as u8).into_owned()
    } else {
        smb2_command_name(tx.command).into_owned()
    };
    let mut r = Smb {
        id: tx.id + 1,
        dialect: if tx.dialect.is_empty() {
            "unknown".into()
        } else {
            tx.dialect.clone()
        },
        command,
        status: tx.status.as_ref().map(|s| s.0.clone()),
        status_code: tx.status.as_ref().map(|s| s.1.clone()),
        session_id: tx.session_id,
        tree_id: tx.tree_id,
        ..Smb::default()
    };
    match &tx.kind {
        Kind::Plain => {}
        Kind::Ioctl(code) => r.function = Some(super::parser::fsctl_name(*code)),
        Kind::Rename(x) => {
            r.set_info = Some(SmbSetInfo {
                class: "FILE_INFO".into(),
                info_level: "SMB2_FILE_RENAME_INFO".into(),
            });
            r.rename = Some(SmbRename {
                from: x.from.clone(),
                to: x.to.clone(),
            });
            r.fuid = Some(x.fuid.clone());
        }
        Kind::SetInfo(x) => {
            r.filename = Some(if x.filename.is_empty() {
                "<share_root>".into()
            } else {
                x.filename.clone()
            });
            r.access = Some(
                if x.delete_on_close {
                    "delete on close"
                } else {
                    "normal"
                }
                .into(),
            );
            r.fuid = Some(x.fuid.clone());
        }
        Kind::Negotiate(n) => {
            r.client_dialects.clone_from(&n.client_dialects);
            r.client_guid.clone_from(&n.client_guid);
            r.server_guid.clone_from(&n.server_guid);
            r.max_read_size = n.max_read;
            r.max_write_size = n.max_write;
        }
        Kind::Setup(s) => {
            r.ntlmssp = s.ntlmssp.as_ref().map(|a| SmbNtlmssp {
                domain: a.domain.clone(),
                user: a.user.clone(),
                host: a.host.clone(),
                version: a.version.clone(),
            });
            r.kerberos = s.kerberos.as_ref().map(|k| SmbKerberos {
                realm: k.realm.clone(),
                snames: k.snames.clone(),
            });
            r.request = s.req_native.as_ref().map(native);
            r.response = s.resp_native.as_ref().map(native);
        }
        Kind::Tree(t) => {
            if t.pipe {
                r.named_pipe = Some(t.share.clone());
            } else {
                r.share = Some(t.share.clone());
            }
            if tx.version == 1 {
                r.service = Some(SmbService {
                    request: t.service_req.clone(),
                    response: t.service_resp.clone(),
                });
            } else {
                r.share_type = t.share_type.map(str::to_string);
            }
        }
        Kind::Create(c) => {
            // A directory's name is `directory` (the share root's is `filename`).
            if c.directory && c.filename != "<share_root>" {
                r.directory = Some(c.filename.clone());
            } else {
                r.filename = Some(c.filename.clone());
            }
            r.disposition = Some(disposition(c.disposition));
            r.access = Some(if c.delete_on_close {
                "delete on close".into()
            } else {
                "normal".into()
            });
            let [created, accessed, modified, changed, size] = c.times;
            r.times = Some(SmbTimes {
                created,
                accessed,
                modified,
                changed,
                size,
            });
            r.fuid = Some(c.fuid.clone());
        }
        Kind::File {
            filename,
            share,
            fuid,
        } => {
            r.filename = Some(filename.clone());
            r.share = Some(share.clone());
            r.fuid = Some(fuid.clone());
        }
        Kind::Dcerpc(d) => {
            let is_req = d.req_type == Some(dp::REQUEST);
            let is_bind = matches!(d.req_type, Some(dp::BIND | dp::ALTER_CONTEXT));
            r.dcerpc = Some(SmbDcerpc {
                request: type_name(d.req_type.unwrap_or(dp::REQUEST)).into_owned(),
                response: match d.resp_type {
                    Some(t) if d.done[1] => type_name(t).into_owned(),
                    _ => "UNREPLIED".into(),
                },
                opnum: is_req.then_some(u32::from(d.opnum)),
                req: is_req.then(|| DcerpcRes {
                    frag_cnt: u32::from(d.frags[0]),
                    stub_data_size: d.stub[0].len() as u64,
                }),
                interfaces: d
                    .interfaces
                    .iter()
                    .map(|i| SmbDcerpcInterface {
                        uuid: uuid_string(&i.uuid),
                        version: format!("{}.{}", i.version, i.version_minor),
                        ack_result: (is_bind && i.acked).then_some(u32::from(i.result)),
                        // Suricata 8 writes 0 whatever the BIND_ACK's reason.
                        ack_reason: (is_bind && i.acked).then_some(0),
                    })
                    .collect(),
                res: (d.resp_type == Some(dp::RESPONSE) && d.done[1]).then(|| DcerpcRes {
                    frag_cnt: u32::from(d.frags[1]),
                    stub_data_size: d.stub[1].len() as u64,
                }),
                call_id: d.call_id,
            });
        }
    }
    r
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Smb(r) = r {
        smb(o, r);
    }
}

fn opt(o: &mut Obj<'_>, k: &str, v: &Option<String>) {
    if let Some(v) = v {
        o.str(k, v);
    }
}

/// The `smb` object.
pub fn smb(o: &mut Obj<'_>, r: &Smb) {
    o.obj("smb", |x| {
        x.u64("id", r.id)
            .str("dialect", &r.dialect)
            .str("command", &r.command);
        opt(x, "status", &r.status);
        opt(x, "status_code", &r.status_code);
        x.u64("session_id", r.session_id).u64("tree_id", r.tree_id);
        if !r.client_dialects.is_empty() {
            x.raw("client_dialects", |b| {
                meerkat_eve::str_array(b, r.client_dialects.iter().map(String::as_str));
            });
        }
        opt(x, "client_guid", &r.client_guid);
        opt(x, "server_guid", &r.server_guid);
        if let Some(v) = r.max_read_size {
            x.u64("max_read_size", u64::from(v));
        }
        if let Some(v) = r.max_write_size {
            x.u64("max_write_size", u64::from(v));
        }
        if let Some(n) = &r.ntlmssp {
            x.obj("ntlmssp", |y| {
                y.str("domain", &n.domain)
                    .str("user", &n.user)
                    .str("host", &n.host);
                opt(y, "version", &n.version);
            });
        }
        if let Some(k) = &r.kerberos {
            x.obj("kerberos", |y| {
                y.str("realm", &k.realm).raw("snames", |b| {
                    meerkat_eve::str_array(b, k.snames.iter().map(String::as_str));
                });
            });
        }
        for (k, v) in [("request", &r.request), ("response", &r.response)] {
            if let Some(n) = v {
                x.obj(k, |y| {
                    y.str("native_os", &n.native_os)
                        .str("native_lm", &n.native_lm);
                });
            }
        }
        opt(x, "filename", &r.filename);
        opt(x, "directory", &r.directory);
        opt(x, "disposition", &r.disposition);
        opt(x, "access", &r.access);
        if let Some(t) = &r.times {
            x.u64("created", t.created)
                .u64("accessed", t.accessed)
                .u64("modified", t.modified)
                .u64("changed", t.changed)
                .u64("size", t.size);
        }
        opt(x, "share", &r.share);
        opt(x, "named_pipe", &r.named_pipe);
        opt(x, "share_type", &r.share_type);
        opt(x, "fuid", &r.fuid);
        if let Some(s) = &r.service {
            x.obj("service", |y| {
                opt(y, "request", &s.request);
                opt(y, "response", &s.response);
            });
        }
        opt(x, "function", &r.function);
        if let Some(si) = &r.set_info {
            x.obj("set_info", |y| {
                y.str("class", &si.class).str("info_level", &si.info_level);
            });
        }
        if let Some(rn) = &r.rename {
            x.obj("rename", |y| {
                y.str("from", &rn.from).str("to", &rn.to);
            });
        }
        if let Some(d) = &r.dcerpc {
            x.obj("dcerpc", |y| {
                y.str("request", &d.request).str("response", &d.response);
                if let Some(n) = d.opnum {
                    y.u64("opnum", u64::from(n));
                }
                if let Some(q) = &d.req {
                    y.obj("req", |z| {
                        z.u64("frag_cnt", u64::from(q.frag_cnt))
                            .u64("stub_data_size", q.stub_data_size);
                    });
                }
                if !d.interfaces.is_empty() {
                    y.raw("interfaces", |b| {
                        meerkat_eve::array(b, &d.interfaces, |o, i| {
                            o.str("uuid", &i.uuid).str("version", &i.version);
                            if let Some(a) = i.ack_result {
                                o.u64("ack_result", u64::from(a));
                            }
                            if let Some(a) = i.ack_reason {
                                o.u64("ack_reason", u64::from(a));
                            }
                        });
                    });
                }
                if let Some(s) = &d.res {
                    y.obj("res", |z| {
                        z.u64("frag_cnt", u64::from(s.frag_cnt))
                            .u64("stub_data_size", s.stub_data_size);
                    });
                }
                y.u64("call_id", u64::from(d.call_id));
            });
        }
    });
}
