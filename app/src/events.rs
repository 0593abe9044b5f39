//! App-layer event names for `app-layer-event`: the anomalies each parser raises
//! ([`crate::Descriptor::events`], Suricata's `<proto>.<event>` names), and the
//! protocol-detection events raised on packets (`applayer_*`).
//!
//! A rule naming an event that no Meerkat parser raises does not load (a rule that can
//! never match is reported, not silently kept). Each protocol's tests check, with
//! [`raised_names_are_listed`], that every name its parser's source raises is listed.

use crate::{AppProto, PROTOCOLS};

/// Protocol-detection events raised on the packet where they happen (bit, name).
pub const PACKET_EVENTS: &[(u8, &str)] = &[
    // The two directions were recognised as different protocols.
    (
        MISMATCH_PROTOCOL_BOTH_DIRECTIONS,
        "applayer_mismatch_protocol_both_directions",
    ),
    // The flow's protocol is known, and the other TCP direction's first data was
    // recognised as none.
    (
        DETECT_PROTOCOL_ONLY_ONE_DIRECTION,
        "applayer_detect_protocol_only_one_direction",
    ),
];
pub const MISMATCH_PROTOCOL_BOTH_DIRECTIONS: u8 = 1;
pub const DETECT_PROTOCOL_ONLY_ONE_DIRECTION: u8 = 2;

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
    let (proto, event) = name
        .split_once('.')
        .ok_or_else(|| format!("expected <protocol>.<event>, got `{name}`"))?;
    let d = PROTOCOLS
        .iter()
        .find(|d| d.is_named(proto))
        .ok_or_else(|| format!("protocol `{proto}` is not parsed by Meerkat"))?;
    d.events
        .iter()
        .find(|n| n.split_once('.').is_some_and(|(_, e)| e == event))
        .map(|n| EventRef::Tx(d.proto, n))
        .ok_or_else(|| format!("event `{name}` is not raised by Meerkat's {proto} parser"))
}

/// Every `"<proto>.<event>"` string of a parser's source `src` is one of `listed`;
/// returns how many it found. For each protocol's tests.
#[doc(hidden)]
pub fn raised_names_are_listed(listed: &[&str], src: &str, proto: &str) -> usize {
    let prefix = format!("\"{proto}.");
    let mut seen = 0;
    for (i, _) in src.match_indices(&prefix) {
        let rest = &src[i + 1..];
        let name = &rest[..rest.find('"').unwrap_or(0)];
        // Names are snake_case identifiers after the protocol (whose name may have a
        // dash: `bittorrent-dht`).
        if name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"._-".contains(&b))
        {
            assert!(listed.contains(&name), "{name} is raised but not listed");
            seen += 1;
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every listed name carries its protocol's prefix (each protocol's tests check
    /// that what its parser raises is listed).
    #[test]
    fn listed_names_carry_their_protocol() {
        for d in PROTOCOLS {
            for e in d.events {
                assert!(e.starts_with(&format!("{}.", d.name)), "{e}");
            }
        }
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
            lookup("http1.request_line_missing_protocol"),
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
        assert!(lookup("nfs.no_such_event").is_err());
        assert!(lookup("nodot").is_err());
    }
}
