//! The EVE `rfb` record of the handshake's transaction: what each side said so far.

use meerkat_proto::events::{Rfb, RfbFramebuffer, RfbVersion};

use super::parser::Version;
use super::state::RfbTx;

fn version(v: &Version) -> RfbVersion {
    RfbVersion {
        major: v.major.clone(),
        minor: v.minor.clone(),
    }
}

/// The record of a transaction.
pub fn record(tx: &RfbTx) -> Rfb {
    Rfb {
        server_protocol_version: tx.server_version.as_ref().map(version),
        client_protocol_version: tx.client_version.as_ref().map(version),
        security_type: tx.security_type,
        vnc_challenge: tx.vnc_challenge.map(|c| c.to_vec()),
        vnc_response: tx.vnc_response.map(|r| r.to_vec()),
        security_result: tx.security_result,
        failure_reason: tx.failure_reason.as_ref().map(|r| r.as_bytes().to_vec()),
        screen_shared: tx.shared.map(|s| s != 0),
        framebuffer: tx.server_init.as_ref().map(|s| {
            let p = &s.pixel_format;
            RfbFramebuffer {
                width: u32::from(s.width),
                height: u32::from(s.height),
                name: s.name.clone(),
                bits_per_pixel: u32::from(p.bits_per_pixel),
                depth: u32::from(p.depth),
                big_endian: p.big_endian != 0,
                true_color: p.true_colour != 0,
                red_max: u32::from(p.red_max),
                green_max: u32::from(p.green_max),
                blue_max: u32::from(p.blue_max),
                red_shift: u32::from(p.red_shift),
                green_shift: u32::from(p.green_shift),
                blue_shift: u32::from(p.blue_shift),
            }
        }),
    }
}
