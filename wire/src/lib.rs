//! Meerkat's packet views, shared by the detect workers (which decode every packet) and
//! capture's flow hash (which picks each packet's worker): one reading of a frame, with
//! one set of limits, wherever a frame is looked at.
//!
//! One file per layer, in the style of smoltcp's `wire`: [`link`] (where the network
//! layer starts, per pcap link type), [`ethernet`] (with up to
//! [`ethernet::MAX_VLAN_LAYERS`] VLAN tags), [`ipv4`], [`ipv6`] (and its extension-header
//! chain, up to [`ipv6::MAX_EXT_HEADERS`]), [`tcp`], [`udp`], [`icmp`], [`checksum`].
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
pub mod icmp;
pub mod ipv4;
pub mod ipv6;
pub mod libpcap;
pub mod link;
pub mod pcap;
pub mod tcp;
pub mod udp;

pub use decode::{
    Fragment, IpInfo, L4, NO_ADDR, PROTO_ICMP, PROTO_ICMPV6, PROTO_TCP, PROTO_UDP, Packet, decode,
};
pub use ethernet::MAX_VLAN_LAYERS;
pub use link::{
    LINKTYPE_ETHERNET, LINKTYPE_IPV4, LINKTYPE_IPV6, LINKTYPE_LINUX_SLL, LINKTYPE_NULL,
    LINKTYPE_RAW, LINKTYPE_RAW_BSD, LINKTYPE_RAW_OPENBSD,
};

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
            pub const fn bit(self) -> u64 {
                1 << (self as u32)
            }

            /// The event a rule names (`decode-event:ipv6.frag_overlap`): Suricata's name
            /// with or without its `decoder.`/`defrag.` prefix.
            pub fn by_rule_name(name: &str) -> Option<DecodeEvent> {
                let want = short_name(name);
                DecodeEvent::ALL.into_iter().find(|e| short_name(e.name()) == want)
            }
        }

        // Every event has a bit in the packet's `u64` event set.
        const _: () = assert!(DecodeEvent::ALL.len() <= 64);
    };
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
}
