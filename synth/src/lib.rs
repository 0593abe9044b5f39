//! Synthetic traffic for Meerkat's tests, benchmarks and the embedded sample.
//!
//! - [`packet`]: frame builders (Ethernet, 802.1Q, IPv4, IPv6, TCP, UDP, ICMP) with
//!   correct checksums;
//! - [`session`]: whole conversations (a TCP session with handshake, MSS-sized segments,
//!   ACKs and FIN; a UDP exchange) as timestamped frames;
//! - [`pcap`]: writers for classic pcap (micro/nanosecond, either byte order) and pcapng;
//! - [`sample`]: the sample capture shipped with Meerkat (`sample/sample.pcap`), made by
//!   [`sample::sample_pcap`] so that it can be regenerated and checked.
//!
//! Everything here is deterministic: the same calls give the same bytes.

pub mod packet;
pub mod pcap;
pub mod sample;
pub mod session;

/// One frame with its capture time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Nanoseconds since the Unix epoch.
    pub ts_ns: u64,
    pub data: Vec<u8>,
}
