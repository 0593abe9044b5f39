//! The EVE `rdp` record of a transaction, and its rendering in Suricata's field order
//! and names.

use meerkat_eve::Obj;
use meerkat_proto::events::{
    Rdp, RdpChannels, RdpClient, RdpConnectBlock, RdpConnectRequest, RdpConnectResponse,
    RdpInitialRequest, RdpInitialResponse, RdpTlsHandshake, rdp, rdp_connect_block,
};

use super::names;
use super::parser::{Block, ClientCore, Negotiation};
use super::state::{Item, RdpTx};
use crate::AppRecord;

/// The record of a transaction.
pub fn record(tx: &RdpTx) -> Rdp {
    let item = match &tx.item {
        Item::InitialRequest(cr) => rdp::Item::InitialRequest(RdpInitialRequest {
            cookie: cr.cookie.clone(),
            flags: cr.negotiation.map_or(0, |(f, _)| u32::from(f)),
            requested_protocols: cr.negotiation.map(|(_, p)| p),
        }),
        Item::InitialResponse(cc) => {
            let mut r = RdpInitialResponse::default();
            match cc.negotiation {
                Some(Negotiation::Response { flags, protocol }) => {
                    r.flags = u32::from(flags);
                    r.protocol = Some(protocol);
                }
                Some(Negotiation::Failure { code }) => r.failure_code = Some(code),
                None => {}
            }
            rdp::Item::InitialResponse(r)
        }
        Item::ConnectRequest(ci) => rdp::Item::ConnectRequest(RdpConnectRequest {
            blocks: ci
                .blocks
                .iter()
                .filter_map(|b| match b {
                    Block::Core(c) => Some(rdp_connect_block::Block::Client(client(c))),
                    Block::Net(n) => Some(rdp_connect_block::Block::Channels(RdpChannels {
                        names: n.clone(),
                    })),
                    Block::Unknown => None,
                })
                .map(|b| RdpConnectBlock { block: Some(b) })
                .collect(),
        }),
        Item::ConnectResponse => rdp::Item::ConnectResponse(RdpConnectResponse {}),
        Item::TlsHandshake(s) => rdp::Item::TlsHandshake(RdpTlsHandshake {
            x509_serials: s.clone(),
        }),
    };
    Rdp {
        tx_id: tx.id + 1,
        item: Some(item),
    }
}

fn client(c: &ClientCore) -> RdpClient {
    RdpClient {
        version: c.version,
        desktop_width: u32::from(c.desktop_width),
        desktop_height: u32::from(c.desktop_height),
        color_depth: u32::from(c.color_depth),
        keyboard_layout: c.keyboard_layout,
        build: c.client_build,
        client_name: c.client_name.clone(),
        keyboard_type: c.keyboard_type,
        keyboard_subtype: c.keyboard_subtype,
        function_keys: c.function_keys,
        ime: c.ime.clone(),
        post_beta2_color_depth: c.post_beta2_color_depth.map(u32::from),
        product_id: c.product_id.map(u32::from),
        serial_number: c.serial_number,
        high_color_depth: c.high_color_depth.map(u32::from),
        capabilities: c.early_capability_flags.map(u32::from),
        id: c.dig_product_id.clone(),
        connection_hint: c.connection_type.map(u32::from),
        physical_width: c.physical_width,
        physical_height: c.physical_height,
        desktop_orientation: c.orientation.map(u32::from),
        scale_factor: c.desktop_scale,
        device_scale_factor: c.device_scale,
    }
}

/// [`crate::RecordDef::render`].
pub fn render(r: &AppRecord, o: &mut Obj<'_>) {
    if let AppRecord::Rdp(r) = r {
        o.obj("rdp", |o| rdp_object(o, r));
    }
}

/// The names of the bits of `flags` that Suricata logs, in bit order.
fn flag_names(flags: u32, names: &[(u32, &'static str)]) -> Vec<&'static str> {
    names
        .iter()
        .filter(|(bit, _)| flags & bit != 0)
        .map(|&(_, n)| n)
        .collect()
}

fn names_array(o: &mut Obj<'_>, k: &str, v: &[&str]) {
    o.raw(k, |b| meerkat_eve::str_array(b, v.iter().copied()));
}

const REQUEST_FLAGS: &[(u32, &str)] = &[
    (0x01, "restricted_admin_mode_required"),
    (0x02, "redirected_authentication_mode_required"),
    (0x08, "correlation_info_present"),
];

/// RDP_NEG_RSP flags (NEGRSP_FLAG_RESERVED, 0x04, is not logged).
const RESPONSE_FLAGS: &[(u32, &str)] = &[
    (0x01, "extended_client_data"),
    (0x02, "dynvc_gfx"),
    (0x08, "restricted_admin"),
    (0x10, "redirected_authentication"),
];

/// Early capability flags (RNS_UD_CS_UNUSED, 0x10, is not logged).
const CAPABILITIES: &[(u32, &str)] = &[
    (0x001, "support_errinfo_pdf"),
    (0x002, "want_32bpp_session"),
    (0x004, "support_statusinfo_pdu"),
    (0x008, "strong_asymmetric_keys"),
    (0x020, "valid_connection_type"),
    (0x040, "support_monitor_layout_pdu"),
    (0x080, "support_netchar_autodetect"),
    (0x100, "support_dynvc_gfx_protocol"),
    (0x200, "support_dynamic_time_zone"),
    (0x400, "support_heartbeat_pdu"),
];

fn protocol(p: u32) -> &'static str {
    match p {
        0 => "rdp",
        1 => "ssl",
        2 => "hybrid",
        4 => "rds_tls",
        _ => "hybrid_ex",
    }
}

fn failure(code: u32) -> &'static str {
    match code {
        1 => "ssl required by server",
        2 => "ssl not allowed by server",
        3 => "ssl cert not on server",
        4 => "inconsistent flags",
        5 => "hybrid required by server",
        _ => "ssl with user auth required by server",
    }
}

fn connection_hint(h: u32) -> Option<&'static str> {
    Some(match h {
        1 => "modem",
        2 => "low_broadband",
        3 => "satellite",
        4 => "high_broadband",
        5 => "wan",
        6 => "lan",
        7 => "autodetect",
        _ => return None,
    })
}

/// The color depth Suricata logs: the high color depth, else the post-beta-2 one,
/// else the first one.
fn color_depth(c: &RdpClient) -> Option<u64> {
    if let Some(d @ (4 | 8 | 15 | 16 | 24)) = c.high_color_depth {
        return Some(u64::from(d));
    }
    let legacy = |d| match d {
        0xca00 => Some(4),
        0xca01 => Some(8),
        0xca02 => Some(15),
        0xca03 => Some(16),
        0xca04 => Some(24),
        _ => None,
    };
    if let Some(d) = c.post_beta2_color_depth.and_then(legacy) {
        return Some(d);
    }
    match c.color_depth {
        0xca00 => Some(4),
        0xca01 => Some(8),
        _ => None,
    }
}

fn rdp_object(o: &mut Obj<'_>, r: &Rdp) {
    o.u64("tx_id", r.tx_id);
    match &r.item {
        Some(rdp::Item::InitialRequest(q)) => {
            o.str("event_type", "initial_request");
            if let Some(c) = &q.cookie {
                o.str("cookie", c);
            }
            if q.flags != 0 {
                names_array(o, "flags", &flag_names(q.flags, REQUEST_FLAGS));
            }
        }
        Some(rdp::Item::InitialResponse(s)) => {
            o.str("event_type", "initial_response");
            if let Some(p) = s.protocol {
                if s.flags != 0 {
                    names_array(o, "server_supports", &flag_names(s.flags, RESPONSE_FLAGS));
                }
                o.str("protocol", protocol(p));
            } else if let Some(code) = s.failure_code {
                o.u64("error_code", u64::from(code))
                    .str("reason", failure(code));
            }
        }
        Some(rdp::Item::ConnectRequest(c)) => {
            o.str("event_type", "connect_request");
            for b in &c.blocks {
                match &b.block {
                    Some(rdp_connect_block::Block::Client(c)) => {
                        o.obj("client", |o| client_object(o, c));
                    }
                    Some(rdp_connect_block::Block::Channels(n)) if !n.names.is_empty() => {
                        o.raw("channels", |b| {
                            meerkat_eve::str_array(b, n.names.iter().map(String::as_str))
                        });
                    }
                    _ => {}
                }
            }
        }
        Some(rdp::Item::ConnectResponse(_)) => {
            o.str("event_type", "connect_response");
        }
        Some(rdp::Item::TlsHandshake(t)) => {
            o.str("event_type", "tls_handshake");
            o.raw("x509_serials", |b| {
                meerkat_eve::str_array(b, t.x509_serials.iter().map(String::as_str))
            });
        }
        None => {}
    }
}

fn client_object(o: &mut Obj<'_>, c: &RdpClient) {
    const UNKNOWN: &str = "unknown";
    o.str("version", names::version(c.version).unwrap_or(UNKNOWN))
        .u64("desktop_width", u64::from(c.desktop_width))
        .u64("desktop_height", u64::from(c.desktop_height));
    if let Some(d) = color_depth(c) {
        o.u64("color_depth", d);
    }
    o.str(
        "keyboard_layout",
        names::lcid(c.keyboard_layout).unwrap_or(UNKNOWN),
    )
    .str("build", names::build(c.build).unwrap_or(UNKNOWN));
    if !c.client_name.is_empty() {
        o.str("client_name", &c.client_name);
    }
    if let Some(k) = names::keyboard(c.keyboard_type) {
        o.str("keyboard_type", k);
    }
    if c.keyboard_subtype != 0 {
        o.u64("keyboard_subtype", u64::from(c.keyboard_subtype));
    }
    if c.function_keys != 0 {
        o.u64("function_keys", u64::from(c.function_keys));
    }
    if !c.ime.is_empty() {
        o.str("ime", &c.ime);
    }
    if let Some(v) = c.product_id {
        o.u64("product_id", u64::from(v));
    }
    if let Some(v) = c.serial_number.filter(|&v| v != 0) {
        o.u64("serial_number", u64::from(v));
    }
    if let Some(f) = c.capabilities.filter(|&f| f != 0) {
        names_array(o, "capabilities", &flag_names(f, CAPABILITIES));
    }
    if let Some(id) = c.id.as_deref().filter(|s| !s.is_empty()) {
        o.str("id", id);
    }
    if let Some(h) = c.connection_hint.and_then(connection_hint) {
        o.str("connection_hint", h);
    }
    let opt = [
        ("physical_width", c.physical_width),
        ("physical_height", c.physical_height),
        ("desktop_orientation", c.desktop_orientation),
        ("scale_factor", c.scale_factor),
        ("device_scale_factor", c.device_scale_factor),
    ];
    for (k, v) in opt {
        if let Some(v) = v {
            o.u64(k, u64::from(v));
        }
    }
}
