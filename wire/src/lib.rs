//! Meerkat's packet views, shared by the detect workers (which decode every packet) and
//! capture's flow hash (which picks each packet's worker): one reading of a frame, with
//! one set of limits, wherever a frame is looked at.
//!
//! One file per layer, in the style of smoltcp's `wire`: [`link`] (where the network
//! layer starts, per pcap link type, through the encapsulations decoded in place: MPLS,
//! PPPoE, PPP, VN-Tag, E-Tag, NSH, up to [`link::MAX_LINK_LAYERS`]), [`ethernet`] (with
//! up to [`ethernet::MAX_VLAN_LAYERS`] VLAN tags), [`ipv4`], [`ipv6`] (and its
//! extension-header chain, up to [`ipv6::MAX_EXT_HEADERS`]), [`tcp`], [`udp`], [`icmp`],
//! [`checksum`]; [`gre`] and [`tunnel`] (GRE with ERSPAN and PPTP, VXLAN, Geneve,
//! Teredo, IP-in-IP: the frame a packet carries, decoded as a packet of its own, up to
//! [`tunnel::MAX_TUNNEL_DEPTH`] tunnels deep).
//! Each is a view type over borrowed bytes whose `new_checked` validates lengths once, so
//! that no getter can fail later. [`decode`] walks the layers and fills a
//! [`decode::Packet`]: a small `Copy` summary that borrows the frame. Nothing is
//! allocated or copied.
//!
//! Malformed input is a [`DecodeEvent`] (named as Suricata names its decoder events),
//! never a panic: the worker counts it and can log an EVE `anomaly`.
//!
//! [`pcap`] reads the capture files (pcap and pcapng) that both capture and the
//! in-process detect harnesses read. [`bpf`] compiles BPF filter expressions (with the
//! system's libpcap, loaded at run time: [`libpcap`]) and runs them in user space.

pub mod bpf;
pub mod checksum;
pub mod decode;
pub mod ethernet;
pub mod fuzz;
pub mod gre;
pub mod icmp;
pub mod ipv4;
pub mod ipv6;
pub mod libpcap;
pub mod link;
pub mod pcap;
pub mod tcp;
pub mod tunnel;
pub mod udp;

pub use decode::{
    Fragment, IpInfo, L4, NO_ADDR, PROTO_ICMP, PROTO_ICMPV6, PROTO_TCP, PROTO_UDP, Packet, decode,
};
pub use ethernet::MAX_VLAN_LAYERS;
pub use link::{
    LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL, LINKTYPE_NULL,
    LINKTYPE_PPP, LINKTYPE_RAW, LINKTYPE_RAW_BSD, LINKTYPE_RAW_OPENBSD,
};
pub use tunnel::{Encap, MAX_TUNNEL_DEPTH, Tunnel, TunnelPorts};

/// A set of [`DecodeEvent`]s: one bit each ([`DecodeEvent::bit`]).
pub type EventSet = u128;

/// Declares [`DecodeEvent`] with Suricata's name for each event, and `DecodeEvent::ALL`,
/// from one list (so a new event cannot miss its name or its counter).
macro_rules! decode_events {
    ($($event:ident => $name:literal,)+) => {
        /// Why a packet could not be decoded (or what is wrong with it). Names follow
        /// Suricata's decoder events.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum DecodeEvent {
            $($event,)+
        }

        impl DecodeEvent {
            /// Suricata's name for the event (`decoder.ipv4.trunc_pkt`).
            pub fn name(self) -> &'static str {
                match self {
                    $(DecodeEvent::$event => $name,)+
                }
            }

            /// Every event, for counter registration.
            pub const ALL: [DecodeEvent; [$(DecodeEvent::$event,)+].len()] =
                [$(DecodeEvent::$event,)+];

            /// The event's bit in [`Packet::events`].
            pub const fn bit(self) -> EventSet {
                1 << (self as u32)
            }

            /// The event a rule names (`decode-event:ipv6.frag_overlap`): Suricata's name
            /// with or without its `decoder.`/`defrag.` prefix.
            pub fn by_rule_name(name: &str) -> Option<DecodeEvent> {
                let want = short_name(name);
                // Suricata's rules name the loopback events `ltnull.*`.
                let want = match want.strip_prefix("ltnull.") {
                    Some(rest) => return DecodeEvent::ALL
                        .into_iter()
                        .find(|e| short_name(e.name()).strip_prefix("null.") == Some(rest)),
                    None => want,
                };
                DecodeEvent::ALL.into_iter().find(|e| short_name(e.name()) == want)
            }
        }

        // Every event has a bit in the packet's event set.
        const _: () = assert!(DecodeEvent::ALL.len() <= EventSet::BITS as usize);
    };
}

/// Suricata 8's decoder events that Meerkat's decoder does not raise (yet): a
/// `decode-event` rule naming one loads, as in Suricata, and matches nothing. Names
/// without the `decoder.` prefix, as rules write them.
pub const SURICATA_EVENTS_NOT_RAISED: &[&str] = &[
    "ipv4.opt_invalid",
    "ipv4.opt_invalid_len",
    "ipv4.opt_malformed",
    "ipv4.opt_pad_required",
    "ipv4.opt_eol_required",
    "ipv4.opt_duplicate",
    "ipv4.opt_unknown",
    "ipv4.frag_ignored",
    "ipv6.exthdr_dupl_rh",
    "ipv6.exthdr_dupl_hh",
    "ipv6.exthdr_dupl_dh",
    "ipv6.exthdr_dupl_ah",
    "ipv6.exthdr_dupl_eh",
    "ipv6.exthdr_invalid_optlen",
    "ipv6.exthdr_ah_res_not_null",
    "ipv6.hopopts_unknown_opt",
    "ipv6.hopopts_only_padding",
    "ipv6.dstopts_unknown_opt",
    "ipv6.dstopts_only_padding",
    "ipv6.rh_type_0",
    "ipv6.zero_len_padn",
    "ipv6.fh_non_zero_reserved_field",
    "ipv6.data_after_none_header",
    "ipv6.unknown_next_header",
    "ipv6.frag_ignored",
    "icmpv4.unknown_type",
    "icmpv4.unknown_code",
    "icmpv4.ipv4_trunc_pkt",
    "icmpv4.ipv4_unknown_ver",
    "icmpv6.unknown_type",
    "icmpv6.unknown_code",
    "icmpv6.ipv6_trunc_pkt",
    "icmpv6.ipv6_unknown_version",
    "icmpv6.mld_message_with_invalid_hl",
    "icmpv6.unassigned_type",
    "icmpv6.experimentation_type",
    "tcp.opt_invalid_len",
    "tcp.opt_duplicate",
    "gre.version1_malformed_sre_hdr",
    "ppp.vju_pkt_too_small",
    "ppp.wrong_type",
    "vlan.unknown_type",
    "vntag.unknown_type",
    "erspan.too_many_vlan_layers",
    "dce.pkt_too_small",
    "chdlc.pkt_too_small",
    "afpacket.trunc_pkt",
    "sll2.pkt_too_small",
    "sctp.pkt_too_small",
    "esp.pkt_too_small",
    "arp.pkt_too_small",
    "arp.invalid_pkt",
    "arp.invalid_hardware_size",
    "arp.invalid_protocol_size",
    "arp.unsupported_hardware",
    "arp.unsupported_opcode",
    "arp.unsupported_protocol",
];

/// Whether `name` (with or without its `decoder.` prefix) is one of Suricata's decoder
/// events that Meerkat does not raise ([`SURICATA_EVENTS_NOT_RAISED`]).
pub fn is_unraised_suricata_event(name: &str) -> bool {
    SURICATA_EVENTS_NOT_RAISED.contains(&short_name(name))
}

/// An event name without its `decoder.`/`defrag.` prefix.
fn short_name(n: &str) -> &str {
    n.strip_prefix("decoder.")
        .or_else(|| n.strip_prefix("defrag."))
        .unwrap_or(n)
}

decode_events! {
    UnsupportedLinkType => "decoder.unsupported_link_type",
    EthernetTooSmall => "decoder.ethernet.pkt_too_small",
    VlanHeaderTooSmall => "decoder.vlan.header_too_small",
    VlanTooManyLayers => "decoder.vlan.too_many_layers",
    SllTooSmall => "decoder.sll.pkt_too_small",
    NullTooSmall => "decoder.null.pkt_too_small",
    NullUnsupportedType => "decoder.null.unsupported_type",
    IpRawInvalidVersion => "decoder.ipraw.invalid_ip_version",
    Ipv4PktTooSmall => "decoder.ipv4.pkt_too_small",
    Ipv4HlenTooSmall => "decoder.ipv4.hlen_too_small",
    Ipv4IplenSmallerThanHlen => "decoder.ipv4.iplen_smaller_than_hlen",
    Ipv4TruncPkt => "decoder.ipv4.trunc_pkt",
    Ipv4WrongIpVersion => "decoder.ipv4.wrong_ip_version",
    Ipv6PktTooSmall => "decoder.ipv6.pkt_too_small",
    Ipv6TruncPkt => "decoder.ipv6.trunc_pkt",
    Ipv6WrongIpVersion => "decoder.ipv6.wrong_ip_version",
    Ipv6ExthdrTrunc => "decoder.ipv6.trunc_exthdr",
    Ipv6ExthdrTooMany => "decoder.ipv6.exthdr_too_many",
    Ipv6ExthdrDuplFh => "decoder.ipv6.exthdr_dupl_fh",
    Ipv6ExthdrUselessFh => "decoder.ipv6.exthdr_useless_fh",
    Ipv6FragInvalidLength => "decoder.ipv6.frag_invalid_length",
    Ipv4FragPktTooLarge => "defrag.ipv4.frag_pkt_too_large",
    Ipv6FragPktTooLarge => "defrag.ipv6.frag_pkt_too_large",
    Ipv4FragOverlap => "defrag.ipv4.frag_overlap",
    Ipv6FragOverlap => "defrag.ipv6.frag_overlap",
    TcpPktTooSmall => "decoder.tcp.pkt_too_small",
    TcpHlenTooSmall => "decoder.tcp.hlen_too_small",
    TcpInvalidOptlen => "decoder.tcp.invalid_optlen",
    UdpPktTooSmall => "decoder.udp.pkt_too_small",
    UdpHlenTooSmall => "decoder.udp.hlen_too_small",
    UdpHlenInvalid => "decoder.udp.hlen_invalid",
    UdpLenInvalid => "decoder.udp.len_invalid",
    Icmpv4PktTooSmall => "decoder.icmpv4.pkt_too_small",
    Icmpv6PktTooSmall => "decoder.icmpv6.pkt_too_small",
    EthernetUnknownEthertype => "decoder.ethernet.unknown_ethertype",
    TooManyLayers => "decoder.too_many_layers",
    VntagHeaderTooSmall => "decoder.vntag.header_too_small",
    Ieee8021ahHeaderTooSmall => "decoder.ieee8021ah.header_too_small",
    MplsHeaderTooSmall => "decoder.mpls.header_too_small",
    MplsPktTooSmall => "decoder.mpls.pkt_too_small",
    MplsBadLabelRouterAlert => "decoder.mpls.bad_label_router_alert",
    MplsBadLabelImplicitNull => "decoder.mpls.bad_label_implicit_null",
    MplsBadLabelReserved => "decoder.mpls.bad_label_reserved",
    MplsUnknownPayloadType => "decoder.mpls.unknown_payload_type",
    PppPktTooSmall => "decoder.ppp.pkt_too_small",
    PppIp4PktTooSmall => "decoder.ppp.ip4_pkt_too_small",
    PppIp6PktTooSmall => "decoder.ppp.ip6_pkt_too_small",
    PppUnsupProto => "decoder.ppp.unsup_proto",
    PppoePktTooSmall => "decoder.pppoe.pkt_too_small",
    PppoeWrongCode => "decoder.pppoe.wrong_code",
    PppoeMalformedTags => "decoder.pppoe.malformed_tags",
    NshHeaderTooSmall => "decoder.nsh.header_too_small",
    NshUnsupportedVersion => "decoder.nsh.unsupported_version",
    NshBadHeaderLength => "decoder.nsh.bad_header_length",
    NshReservedType => "decoder.nsh.reserved_type",
    NshUnsupportedType => "decoder.nsh.unsupported_type",
    NshUnknownPayload => "decoder.nsh.unknown_payload",
    GrePktTooSmall => "decoder.gre.pkt_too_small",
    GreWrongVersion => "decoder.gre.wrong_version",
    GreVersion0Recur => "decoder.gre.version0_recur",
    GreVersion0Flags => "decoder.gre.version0_flags",
    GreVersion0HdrTooBig => "decoder.gre.version0_hdr_too_big",
    GreVersion0MalformedSreHdr => "decoder.gre.version0_malformed_sre_hdr",
    GreVersion1Chksum => "decoder.gre.version1_chksum",
    GreVersion1Route => "decoder.gre.version1_route",
    GreVersion1Ssr => "decoder.gre.version1_ssr",
    GreVersion1Recur => "decoder.gre.version1_recur",
    GreVersion1Flags => "decoder.gre.version1_flags",
    GreVersion1NoKey => "decoder.gre.version1_no_key",
    GreVersion1WrongProtocol => "decoder.gre.version1_wrong_protocol",
    GreVersion1HdrTooBig => "decoder.gre.version1_hdr_too_big",
    ErspanHeaderTooSmall => "decoder.erspan.header_too_small",
    ErspanUnsupportedVersion => "decoder.erspan.unsupported_version",
    VxlanUnknownPayloadType => "decoder.vxlan.unknown_payload_type",
    GeneveUnknownPayloadType => "decoder.geneve.unknown_payload_type",
    Ipv4Icmpv6 => "decoder.ipv4.icmpv6",
    Ipv6Icmpv4 => "decoder.ipv6.icmpv4",
    Ipv4InIpv6TooSmall => "decoder.ipv6.ipv4_in_ipv6_too_small",
    Ipv4InIpv6WrongVersion => "decoder.ipv6.ipv4_in_ipv6_wrong_version",
    Ipv6InIpv6TooSmall => "decoder.ipv6.ipv6_in_ipv6_too_small",
    Ipv6InIpv6WrongVersion => "decoder.ipv6.ipv6_in_ipv6_wrong_version",
}
