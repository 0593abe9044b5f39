//! What kind of rule a rule is, for grouping: IP-only, protocol-detection-only,
//! flowbit setters, the largest payload a `dsize` rule can match.

use super::*;

/// No flow state checks besides `flowbits:set` (no flowint, xbits or TLS property
/// checks): shared by Suricata's IP-only and protocol-detection-only rule tests.
pub(super) fn only_sets_flowbits(rule: &Rule) -> bool {
    rule.flowbits
        .iter()
        .all(|c| matches!(c, FlowbitCmd::Set(_)))
        && rule.flowints.is_empty()
        && rule.xbits.is_empty()
        && rule.tx_checks.is_empty()
}

/// Suricata's IP-only rule test, and its "like IP-only" one (the same with ports): such
/// a rule is checked on the first packet of each flow direction only (measured against
/// the reference: `alert tcp any any -> any 8080 (sid:1;)` alerts once per session, and
/// so do `tcp-pkt` and `tcp-stream` rules without options: the protocol's payload
/// source matters only to a rule with a payload).
pub(super) fn is_ip_only(rule: &Rule) -> bool {
    rule.app_proto.is_none()
        && rule.payload.is_empty()
        && rule.buffers.is_empty()
        && rule.hdr_buffers.is_empty()
        && rule.base64_data.is_none()
        && rule.header.is_empty()
        && rule.flow == crate::rules::FlowOpts::default()
        && only_sets_flowbits(rule)
}

/// Suricata's protocol-detection-only rule test: `app-layer-protocol` and nothing but
/// a flow direction and `flowbits:set` besides.
pub(super) fn is_pd_only(rule: &Rule) -> bool {
    !rule.header.is_empty()
        && rule
            .header
            .iter()
            .all(|h| matches!(h, HeaderMatch::AppLayerProtocol { .. }))
        && rule.payload.is_empty()
        && rule.buffers.is_empty()
        && rule.hdr_buffers.is_empty()
        && rule.base64_data.is_none()
        && rule.flow.established.is_none()
        && !rule.flow.stateless
        && rule.flow.frag.is_none()
        && only_sets_flowbits(rule)
}

/// Segment length from which the packet-only rules whose `dsize` admits only shorter
/// payloads are left out of the prefilter (see `Engine::pkt_only_tcp_big`).
pub(super) const BIG_SEGMENT: usize = 256;

/// A stream-or-packet TCP rule with a content anchored by `offset`, `depth` or
/// `startswith`: as in Suricata, such a rule is inspected against the segment's payload
/// too when the stream does not match (the position a content is anchored at differs
/// between a packet and the stream), so it can alert once on the packet and again on
/// the stream chunk that later holds the same bytes.
pub(super) fn anchored_payload(rule: &Rule) -> bool {
    rule.payload_source == PayloadSource::Any
        && rule.payload.items.iter().any(|m| {
            matches!(m, crate::rules::Match::Content(c) if c.offset.is_some() || c.depth.is_some() || c.startswith)
        })
}

/// The largest payload size (`dsize`) a rule admits; None when unbounded.
pub(super) fn max_dsize(rule: &Rule) -> Option<u64> {
    rule.header
        .iter()
        .filter_map(|h| match *h {
            HeaderMatch::Dsize(c) => Some(match c {
                NumCmp::Eq(a) | NumCmp::Le(a) => Some(a),
                NumCmp::Lt(a) => Some(a.saturating_sub(1)),
                NumCmp::Between(_, b) => Some(b.saturating_sub(1)),
                _ => None,
            }),
            _ => None,
        })
        .flatten()
        .min()
}
