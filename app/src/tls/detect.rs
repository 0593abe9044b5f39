//! The inspection buffers of a TLS connection: `tls.sni`, `ja3.*`, `ja3s.*`, `ja4.hash`
//! (client/server hellos), `tls.cert_*`, `tls.certs`, `tls.subjectaltname` (the
//! server's first certificate, TLS 1.2 and older), `tls.random*` (each side's hello),
//! and the values of `tls.version`, `ssl_version` (per direction), `ssl_state` and
//! `tls_cert_notbefore`/`tls_cert_notafter`.

use super::state::TlsTx;
use crate::{Buf, BufferId, Dir};

fn single(index: usize, b: Buf<'_>) -> Buf<'_> {
    if index == 0 { b } else { Buf::Absent }
}

pub fn buffer<'a>(tx: &'a TlsTx, id: BufferId, index: usize) -> Buf<'a> {
    let client = tx.client_hello.is_some();
    let server = tx.server_hello.is_some();
    let server_done = tx.done[Dir::ToClient.index()];
    // Certificate fields: known once a Certificate came, absent once the server's
    // handshake is over without one.
    let has_cert = tx.cert.is_some();
    let cert_buf = |v: &'a [u8]| -> Buf<'a> {
        if has_cert {
            Buf::Ready(v)
        } else if server_done {
            Buf::Absent
        } else {
            Buf::NotYet
        }
    };
    let hello = |seen: bool, done: bool, v: &'a [u8]| -> Buf<'a> {
        if seen {
            Buf::Ready(v)
        } else if done {
            Buf::Absent
        } else {
            Buf::NotYet
        }
    };
    let client_done = tx.done[Dir::ToServer.index()];
    match id {
        BufferId::TLS_SNI => match &tx.client_hello {
            Some(h) => single(index, h.sni.as_deref().map_or(Buf::Absent, Buf::Ready)),
            None if client_done => Buf::Absent,
            None => Buf::NotYet,
        },
        BufferId::JA3_HASH => single(index, hello(client, client_done, &tx.ja3_hash)),
        BufferId::JA3_STRING => single(index, hello(client, client_done, &tx.ja3_string)),
        BufferId::JA4_HASH => single(index, hello(client, client_done, &tx.ja4)),
        BufferId::JA3S_HASH => single(index, hello(server, server_done, &tx.ja3s_hash)),
        BufferId::JA3S_STRING => single(index, hello(server, server_done, &tx.ja3s_string)),
        BufferId::TLS_CERT_SUBJECT => single(index, cert_buf(&tx.subject)),
        BufferId::TLS_CERT_ISSUER => single(index, cert_buf(&tx.issuer)),
        BufferId::TLS_CERT_SERIAL => single(index, cert_buf(&tx.serial)),
        BufferId::TLS_CERT_FINGERPRINT => single(index, cert_buf(&tx.fingerprint)),
        BufferId::TLS_CERTS => match tx.certs.get(index) {
            Some(c) => Buf::Ready(c),
            None if tx.cert.is_some() || server_done => Buf::Absent,
            None => Buf::NotYet,
        },
        BufferId::TLS_SUBJECTALTNAME => match &tx.cert {
            Some(c) => c.sans.get(index).map_or(Buf::Absent, |s| Buf::Ready(s)),
            None if server_done => Buf::Absent,
            None => Buf::NotYet,
        },
        BufferId::TLS_VERSION_NUM => {
            if client || server || tx.version != [0, 0] {
                single(index, Buf::Ready(&tx.version))
            } else {
                Buf::NotYet
            }
        }
        BufferId::TLS_STATE => single(index, Buf::Ready(std::slice::from_ref(&tx.state))),
        BufferId::TLS_VERSION_CLIENT | BufferId::TLS_VERSION_SERVER => {
            let (d, done) = if id == BufferId::TLS_VERSION_CLIENT {
                (Dir::ToServer.index(), client_done)
            } else {
                (Dir::ToClient.index(), server_done)
            };
            let v = &tx.dir_version[d];
            single(index, hello(*v != [0, 0], done, v))
        }
        BufferId::TLS_RANDOM_CLIENT
        | BufferId::TLS_RANDOM_TIME_CLIENT
        | BufferId::TLS_RANDOM_BYTES_CLIENT
        | BufferId::TLS_RANDOM_SERVER
        | BufferId::TLS_RANDOM_TIME_SERVER
        | BufferId::TLS_RANDOM_BYTES_SERVER => {
            let client_side = matches!(
                id,
                BufferId::TLS_RANDOM_CLIENT
                    | BufferId::TLS_RANDOM_TIME_CLIENT
                    | BufferId::TLS_RANDOM_BYTES_CLIENT
            );
            let (h, done) = if client_side {
                (&tx.client_hello, client_done)
            } else {
                (&tx.server_hello, server_done)
            };
            let b = match h {
                Some(h) => {
                    // The random: 4 bytes of gmt_unix_time, then 28 random bytes.
                    let part = match id {
                        BufferId::TLS_RANDOM_TIME_CLIENT | BufferId::TLS_RANDOM_TIME_SERVER => {
                            &h.random[..4]
                        }
                        BufferId::TLS_RANDOM_BYTES_CLIENT | BufferId::TLS_RANDOM_BYTES_SERVER => {
                            &h.random[4..]
                        }
                        _ => &h.random[..],
                    };
                    Buf::Ready(part)
                }
                None if done => Buf::Absent,
                None => Buf::NotYet,
            };
            single(index, b)
        }
        BufferId::TLS_NOTBEFORE | BufferId::TLS_NOTAFTER => {
            let v = if id == BufferId::TLS_NOTBEFORE {
                &tx.not_before
            } else {
                &tx.not_after
            };
            match v {
                Some(b) => single(index, Buf::Ready(b)),
                // A certificate without a readable time never matches.
                None if has_cert || server_done => Buf::Absent,
                None => Buf::NotYet,
            }
        }
        _ => Buf::Absent,
    }
}
