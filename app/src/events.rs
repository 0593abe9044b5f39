//! App-layer event names for `app-layer-event`: the anomalies each parser raises
//! (Suricata's `<proto>.<event>` names), and the protocol-detection events raised on
//! packets (`applayer_*`).
//!
//! A rule naming an event that no Meerkat parser raises does not load (a rule that can
//! never match is reported, not silently kept). The test below reads the parsers'
//! sources and checks that every name they raise is listed here.

use super::AppProto;

/// Anomalies of each protocol's parser.
const HTTP: &[&str] = &[
    "http.100_continue_already_seen",
    "http.compression_bomb",
    "http.duplicate_content_length_field_in_request",
    "http.duplicate_content_length_field_in_response",
    "http.gap_in_message",
    "http.gzip_decompression_failed",
    "http.invalid_content_length_field_in_request",
    "http.invalid_content_length_field_in_response",
    "http.invalid_request_chunk_len",
    "http.invalid_request_field_folding",
    "http.invalid_response_chunk_len",
    "http.invalid_response_field_folding",
    "http.invalid_response_status",
    "http.request_field_too_long",
    "http.request_header_invalid",
    "http.request_header_repetition",
    "http.request_line_invalid",
    "http.request_line_leading_whitespace",
    "http.request_line_missing_protocol",
    "http.request_smuggling",
    "http.request_too_many_headers",
    "http.response_body_unexpected",
    "http.response_field_too_long",
    "http.response_header_invalid",
    "http.response_header_repetition",
    "http.response_line_invalid",
    "http.response_too_many_headers",
    "http.too_many_encoding_layers",
    "http.too_many_transactions",
    "http.unable_to_match_response_to_request",
];
const DNS: &[&str] = &[
    "dns.gap",
    "dns.infinite_loop",
    "dns.malformed_data",
    "dns.too_many_records",
    "dns.too_many_transactions",
    "dns.unsolicited_response",
];
const TLS: &[&str] = &[
    "tls.gap",
    "tls.handshake_too_long",
    "tls.invalid_certificate",
    "tls.invalid_handshake_message",
    "tls.invalid_record_length",
    "tls.invalid_record_type",
];
const SSH: &[&str] = &[
    "ssh.invalid_banner",
    "ssh.invalid_record",
    "ssh.long_banner",
    "ssh.long_kex_record",
];

/// Protocol-detection events raised on the packet where they happen (bit, name).
pub const PACKET_EVENTS: &[(u8, &str)] = &[
    // The two directions were recognised as different protocols.
    (
        MISMATCH_PROTOCOL_BOTH_DIRECTIONS,
        "applayer_mismatch_protocol_both_directions",
    ),
];
pub const MISMATCH_PROTOCOL_BOTH_DIRECTIONS: u8 = 1;

/// What an `app-layer-event` value names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventRef {
    /// A parser anomaly of `proto` (its static name).
    Tx(AppProto, &'static str),
    /// A protocol-detection event of the packet (a bit of [`PACKET_EVENTS`]).
    Packet(u8),
}

/// Looks up the event a rule names; `Err` says why it cannot be matched.
pub fn lookup(name: &str) -> Result<EventRef, String> {
    if let Some(&(bit, _)) = PACKET_EVENTS.iter().find(|(_, n)| *n == name) {
        return Ok(EventRef::Packet(bit));
    }
    if name.starts_with("applayer_") {
        return Err(format!("event `{name}` is not raised by Meerkat"));
    }
    let (proto, _) = name
        .split_once('.')
        .ok_or_else(|| format!("expected <protocol>.<event>, got `{name}`"))?;
    let (p, table) = match proto {
        "http" | "http1" => (AppProto::Http, HTTP),
        "dns" => (AppProto::Dns, DNS),
        "tls" => (AppProto::Tls, TLS),
        "ssh" => (AppProto::Ssh, SSH),
        other => return Err(format!("protocol `{other}` is not parsed by Meerkat")),
    };
    let event = name.split_once('.').map_or(name, |(_, e)| e);
    table
        .iter()
        .find(|n| n.split_once('.').is_some_and(|(_, e)| e == event))
        .map(|n| EventRef::Tx(p, n))
        .ok_or_else(|| format!("event `{name}` is not raised by Meerkat's {proto} parser"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every event name written in a parser's source is in the table.
    #[test]
    fn every_raised_name_is_listed() {
        let sources = [
            (HTTP, include_str!("http/state.rs"), "\"http."),
            (DNS, include_str!("dns/state.rs"), "\"dns."),
            (TLS, include_str!("tls/state.rs"), "\"tls."),
            (SSH, include_str!("ssh/state.rs"), "\"ssh."),
        ];
        let mut seen = 0;
        for (table, src, prefix) in sources {
            for (i, _) in src.match_indices(prefix) {
                let rest = &src[i + 1..];
                let name = &rest[..rest.find('"').unwrap_or(0)];
                // Names are snake_case identifiers after the protocol.
                if name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._".contains(&b))
                {
                    assert!(table.contains(&name), "{name} is raised but not listed");
                    seen += 1;
                }
            }
        }
        assert!(seen >= 30, "found {seen} names");
    }

    #[test]
    fn lookups() {
        assert_eq!(
            lookup("http.request_line_missing_protocol"),
            Ok(EventRef::Tx(
                AppProto::Http,
                "http.request_line_missing_protocol"
            ))
        );
        assert_eq!(
            lookup("applayer_mismatch_protocol_both_directions"),
            Ok(EventRef::Packet(MISMATCH_PROTOCOL_BOTH_DIRECTIONS))
        );
        assert!(lookup("tls.invalid_sslv2_header").is_err());
        assert!(lookup("applayer_proto_detection_skipped").is_err());
        assert!(lookup("smb.internal_error").is_err());
        assert!(lookup("nodot").is_err());
    }
}
