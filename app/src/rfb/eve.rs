//! The EVE `rfb` object, in Suricata's field order.

use meerkat_eve::Obj;
use meerkat_proto::events::{Rfb, RfbVersion};

use crate::AppRecord;

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Rfb(r) = r {
        rfb(o, r);
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn version(o: &mut Obj<'_>, k: &str, v: &RfbVersion) {
    o.obj(k, |o| {
        o.str("major", &v.major).str("minor", &v.minor);
    });
}

/// The `rfb` object.
pub fn rfb(o: &mut Obj<'_>, r: &Rfb) {
    o.obj("rfb", |x| {
        if let Some(v) = &r.server_protocol_version {
            version(x, "server_protocol_version", v);
        }
        if let Some(v) = &r.client_protocol_version {
            version(x, "client_protocol_version", v);
        }
        x.obj("authentication", |a| {
            if let Some(t) = r.security_type {
                a.u64("security_type", u64::from(t));
            }
            if r.security_type == Some(2) {
                a.obj("vnc", |v| {
                    if let Some(c) = &r.vnc_challenge {
                        v.str("challenge", &hex(c));
                    }
                    if let Some(c) = &r.vnc_response {
                        v.str("response", &hex(c));
                    }
                });
            }
            match r.security_result {
                Some(0) => {
                    a.str("security_result", "OK");
                }
                // Suricata's spelling for a failure (never kept by its parser, nor
                // by Meerkat's).
                Some(1) => {
                    a.str("security-result", "FAIL");
                }
                Some(2) => {
                    a.str("security_result", "TOOMANY");
                }
                Some(n) => {
                    a.str("security_result", &format!("UNKNOWN ({n})"));
                }
                None => {}
            }
        });
        if let Some(reason) = &r.failure_reason {
            crate::mqtt::eve::from_bytes(x, "server_security_failure_reason", reason);
        }
        if let Some(s) = r.screen_shared {
            x.bool("screen_shared", s);
        }
        if let Some(f) = &r.framebuffer {
            x.obj("framebuffer", |fb| {
                fb.u64("width", u64::from(f.width))
                    .u64("height", u64::from(f.height));
                crate::mqtt::eve::from_bytes(fb, "name", &f.name);
                fb.obj("pixel_format", |p| {
                    p.u64("bits_per_pixel", u64::from(f.bits_per_pixel))
                        .u64("depth", u64::from(f.depth))
                        .bool("big_endian", f.big_endian)
                        .bool("true_color", f.true_color)
                        .u64("red_max", u64::from(f.red_max))
                        .u64("green_max", u64::from(f.green_max))
                        .u64("blue_max", u64::from(f.blue_max))
                        .u64("red_shift", u64::from(f.red_shift))
                        .u64("green_shift", u64::from(f.green_shift))
                        .u64("blue_shift", u64::from(f.blue_shift));
                });
            });
        }
    });
}
