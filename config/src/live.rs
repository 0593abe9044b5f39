//! Live capture configuration: `af-packet:` (a list of interfaces, as in suricata.yaml),
//! `dpdk:` (EAL parameters and ports) and `run-as:` (the user capture drops to once its
//! sockets are open).
//!
//! Key names, units and defaults follow suricata.yaml where the concept is the same. An
//! entry named `default` (or one without `interface`, which is what
//! `--set af-packet.ring-size=N` creates) holds the settings of every interface that has
//! no entry of its own, as in Suricata.

use serde::{Deserialize, Serialize};
use serde_yaml::Value;

use crate::ConfigError;
use crate::de::{self, ByteSize};

/// The interface name of the entry that holds defaults.
pub const DEFAULT_IFACE: &str = "default";

fn default_iface_name() -> String {
    DEFAULT_IFACE.to_string()
}
fn default_cluster_id() -> u16 {
    99
}
fn default_ring_frames() -> u32 {
    2048
}
fn default_block_size() -> ByteSize {
    ByteSize::kib(32)
}
fn default_block_timeout() -> u32 {
    10
}
fn yes() -> bool {
    true
}

/// `af-packet.cluster-type`: how the kernel spreads packets over the capture threads of a
/// fanout group (`PACKET_FANOUT_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum ClusterType {
    /// By flow hash (both directions of a flow to one thread). Suricata's default.
    #[default]
    ClusterFlow,
    /// By the CPU the packet arrived on.
    ClusterCpu,
    /// By the NIC's RX queue.
    ClusterQm,
    /// Round robin.
    ClusterRoundRobin,
    /// Random.
    ClusterRandom,
    /// Fill one socket, then the next (Suricata replaces it with cluster_flow; so do we).
    ClusterRollover,
}

/// One entry of `af-packet:`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct AfPacketIface {
    /// Interface name; `default` holds the settings of unlisted interfaces.
    #[serde(default = "default_iface_name")]
    pub interface: String,
    /// Capture threads (sockets in one fanout group); `auto`/absent = 1. More than one
    /// needs the backlog (`capture.backlog-size` > 0).
    #[serde(default, deserialize_with = "de::flex_opt_usize")]
    pub threads: Option<usize>,
    /// Fanout group id (`PACKET_FANOUT` id). Suricata's default: 99.
    #[serde(default = "default_cluster_id", deserialize_with = "flex_u16")]
    pub cluster_id: u16,
    /// Fanout mode across the threads. Suricata's default: cluster_flow.
    #[serde(default)]
    pub cluster_type: ClusterType,
    /// Let the kernel reassemble IP fragments before the fanout hash
    /// (`PACKET_FANOUT_FLAG_DEFRAG`). Suricata's default: yes.
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub defrag: bool,
    /// Frames of the kernel RX ring per thread (TPACKET_V3: block count = frames x frame
    /// size / block size). Suricata's default when set by hand: 2048.
    #[serde(default = "default_ring_frames", deserialize_with = "de::flex_u32")]
    pub ring_size: u32,
    /// Bytes of one TPACKET_V3 block: a power of two, a multiple of the page size.
    /// Suricata's default: 32768.
    #[serde(default = "default_block_size")]
    pub block_size: ByteSize,
    /// Milliseconds after which the kernel hands over a block that is not full.
    /// Suricata's default: 10.
    #[serde(default = "default_block_timeout", deserialize_with = "de::flex_u32")]
    pub block_timeout: u32,
    /// BPF filter in pcap filter syntax (`not host 10.0.0.5`), compiled with libpcap and
    /// attached to the socket, as Suricata does; or a program compiled by `tcpdump -dd`
    /// / `-ddd`. The command line's filter takes its place. Absent = no filter.
    #[serde(default)]
    pub bpf_filter: Option<String>,
    /// Leave the interface's promiscuous mode alone. Suricata's default: no.
    #[serde(default, deserialize_with = "de::flex_bool")]
    pub disable_promisc: bool,
}

impl Default for AfPacketIface {
    fn default() -> Self {
        AfPacketIface {
            interface: default_iface_name(),
            threads: None,
            cluster_id: default_cluster_id(),
            cluster_type: ClusterType::default(),
            defrag: true,
            ring_size: default_ring_frames(),
            block_size: default_block_size(),
            block_timeout: default_block_timeout(),
            bpf_filter: None,
            disable_promisc: false,
        }
    }
}

impl AfPacketIface {
    /// Capture threads to run (at least 1).
    pub fn threads(&self) -> usize {
        self.threads.unwrap_or(1).max(1)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        let name = &self.interface;
        let bs = self.block_size.bytes();
        if !bs.is_power_of_two() || !(4096..=(1 << 30)).contains(&bs) {
            return Err(ConfigError::Invalid(format!(
                "af-packet.block-size {bs} of interface {name} must be a power of two from 4096 bytes to 1gb"
            )));
        }
        if self.ring_size == 0 {
            return Err(ConfigError::Invalid(format!(
                "af-packet.ring-size of interface {name} must be at least 1 frame"
            )));
        }
        if self.threads == Some(0) {
            return Err(ConfigError::Invalid(format!(
                "af-packet.threads of interface {name} must be at least 1"
            )));
        }
        if name.is_empty() || name.len() >= 16 {
            return Err(ConfigError::Invalid(format!(
                "af-packet.interface `{name}` must be 1 to 15 bytes (a Linux interface name)"
            )));
        }
        Ok(())
    }
}

fn flex_u16<'de, D: serde::Deserializer<'de>>(d: D) -> Result<u16, D::Error> {
    let v = de::flex_u32(d)?;
    u16::try_from(v).map_err(|_| serde::de::Error::custom(format!("{v} is out of range 0-65535")))
}

/// The `af-packet` settings of interface `name`: its own entry, else the `default` entry
/// (or an entry without a name), else the built-in defaults.
pub fn af_packet_for(list: &[AfPacketIface], name: &str) -> AfPacketIface {
    let own = list.iter().find(|e| e.interface == name);
    let fallback = || list.iter().find(|e| e.interface == DEFAULT_IFACE);
    let mut entry: AfPacketIface = own.or_else(fallback).cloned().unwrap_or_default();
    entry.interface = name.to_string();
    entry
}

/// `dpdk.eal-params`: EAL arguments. Suricata writes them as a map (`proc-type: primary`
/// becomes `--proc-type=primary`, a list value repeats the option); Meerkat also takes a
/// string (split on white space, as on a command line) or a list of arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
#[serde(transparent)]
pub struct EalParams(pub Vec<String>);

impl<'de> Deserialize<'de> for EalParams {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        fn scalar(v: &Value) -> Option<String> {
            match v {
                Value::String(s) => Some(s.clone()),
                Value::Number(n) => Some(n.to_string()),
                Value::Bool(b) => Some(b.to_string()),
                _ => None,
            }
        }
        let bad = |what: &str| serde::de::Error::custom(format!("dpdk.eal-params: {what}"));
        match Value::deserialize(d)? {
            Value::Null => Ok(EalParams(Vec::new())),
            Value::String(s) => Ok(EalParams(
                s.split_whitespace().map(str::to_string).collect(),
            )),
            Value::Sequence(items) => items
                .iter()
                .map(|i| scalar(i).ok_or_else(|| bad("list items must be strings")))
                .collect::<Result<Vec<_>, _>>()
                .map(EalParams),
            Value::Mapping(m) => {
                let mut args = Vec::new();
                for (k, v) in &m {
                    let k = scalar(k).ok_or_else(|| bad("keys must be strings"))?;
                    let opt = if k.starts_with('-') {
                        k
                    } else if k.len() == 1 {
                        format!("-{k}")
                    } else {
                        format!("--{k}")
                    };
                    match v {
                        Value::Null => args.push(opt),
                        Value::Bool(true) => args.push(opt),
                        Value::Bool(false) => {}
                        Value::Sequence(vs) => {
                            for v in vs {
                                let v = scalar(v).ok_or_else(|| bad("values must be strings"))?;
                                args.push(format!("{opt}={v}"));
                            }
                        }
                        v => {
                            let v = scalar(v).ok_or_else(|| bad("values must be strings"))?;
                            args.push(format!("{opt}={v}"));
                        }
                    }
                }
                Ok(EalParams(args))
            }
            Value::Tagged(_) | Value::Bool(_) | Value::Number(_) => {
                Err(bad("expected a map, a list or a string"))
            }
        }
    }
}

fn default_rx_descriptors() -> u16 {
    1024
}
fn default_mempool_size() -> u32 {
    8191
}
fn default_mempool_cache_size() -> u32 {
    256
}
fn default_burst_size() -> u16 {
    32
}
fn default_dpdk_mtu() -> u32 {
    1500
}

/// One entry of `dpdk.interfaces`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DpdkIface {
    /// Port name: a PCI address (`0000:3b:00.0`) or a virtual device (`net_pcap0`).
    #[serde(default = "default_iface_name")]
    pub interface: String,
    /// RX descriptors of the port's queue (its hardware ring). `auto` = 1024.
    #[serde(
        default = "default_rx_descriptors",
        deserialize_with = "flex_auto_u16_rxd"
    )]
    pub rx_descriptors: u16,
    /// Mbufs in the port's mempool. `auto` = 8191 (capture copies each burst out at once,
    /// so the pool needs little more than the RX descriptors).
    #[serde(
        default = "default_mempool_size",
        deserialize_with = "flex_auto_u32_mempool"
    )]
    pub mempool_size: u32,
    /// Per-lcore mbuf cache of the mempool. `auto` = 256.
    #[serde(
        default = "default_mempool_cache_size",
        deserialize_with = "flex_auto_u32_cache"
    )]
    pub mempool_cache_size: u32,
    /// Packets asked for per `rte_eth_rx_burst` call (Meerkat's key). Default 32.
    #[serde(default = "default_burst_size", deserialize_with = "flex_u16_burst")]
    pub burst_size: u16,
    /// Promiscuous mode. Suricata's default: true.
    #[serde(default = "yes", deserialize_with = "de::flex_bool")]
    pub promisc: bool,
    /// Port MTU in bytes (sizes the mbufs). Suricata's default: 1500.
    #[serde(default = "default_dpdk_mtu", deserialize_with = "de::flex_u32")]
    pub mtu: u32,
    /// BPF filter (pcap filter syntax, or `tcpdump -dd` output), run in user space on
    /// each burst (Meerkat's key; the command line's filter takes its place). Absent =
    /// none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bpf_filter: Option<String>,
}

impl Default for DpdkIface {
    fn default() -> Self {
        DpdkIface {
            interface: default_iface_name(),
            rx_descriptors: default_rx_descriptors(),
            mempool_size: default_mempool_size(),
            mempool_cache_size: default_mempool_cache_size(),
            burst_size: default_burst_size(),
            promisc: true,
            mtu: default_dpdk_mtu(),
            bpf_filter: None,
        }
    }
}

macro_rules! flex_auto {
    ($name:ident, $t:ty, $default:expr) => {
        fn $name<'de, D: serde::Deserializer<'de>>(d: D) -> Result<$t, D::Error> {
            match de::flex_opt_usize(d)? {
                None => Ok($default),
                Some(v) => <$t>::try_from(v)
                    .map_err(|_| serde::de::Error::custom(format!("{v} is out of range"))),
            }
        }
    };
}
flex_auto!(flex_auto_u16_rxd, u16, default_rx_descriptors());
flex_auto!(flex_auto_u32_mempool, u32, default_mempool_size());
flex_auto!(flex_auto_u32_cache, u32, default_mempool_cache_size());
flex_auto!(flex_u16_burst, u16, default_burst_size());

/// `dpdk`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct Dpdk {
    #[serde(default)]
    pub eal_params: EalParams,
    #[serde(default)]
    pub interfaces: Vec<DpdkIface>,
}

impl Dpdk {
    /// The port to capture from: the first entry that is not `default`, with the `default`
    /// entry's settings when there is none.
    pub fn port(&self) -> Option<&DpdkIface> {
        self.interfaces
            .iter()
            .find(|i| i.interface != DEFAULT_IFACE)
    }

    fn validate(&self) -> Result<(), ConfigError> {
        for i in &self.interfaces {
            let name = &i.interface;
            if i.rx_descriptors == 0 || i.burst_size == 0 {
                return Err(ConfigError::Invalid(format!(
                    "dpdk.interfaces rx-descriptors and burst-size of {name} must be at least 1"
                )));
            }
            if i.mempool_size < u32::from(i.rx_descriptors) + u32::from(i.burst_size) {
                return Err(ConfigError::Invalid(format!(
                    "dpdk.interfaces mempool-size {} of {name} must exceed rx-descriptors {} + burst-size {}",
                    i.mempool_size, i.rx_descriptors, i.burst_size
                )));
            }
            if !(64..=9600).contains(&i.mtu) {
                return Err(ConfigError::Invalid(format!(
                    "dpdk.interfaces mtu {} of {name} must be 64 to 9600 bytes",
                    i.mtu
                )));
            }
        }
        Ok(())
    }
}

/// `run-as`: the user (and group) the capture role switches to once its sockets and rings
/// are open, so that only opening the NIC needs privileges. Absent = stay as started.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RunAs {
    /// User name or numeric uid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
    /// Group name or numeric gid; absent = the user's primary group.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
}

/// Checks the live capture sections.
pub fn validate(af_packet: &[AfPacketIface], dpdk: &Dpdk) -> Result<(), ConfigError> {
    for e in af_packet {
        e.validate()?;
    }
    dpdk.validate()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve;

    #[test]
    fn eal_params_from_map_list_and_string() {
        let m: EalParams =
            serde_yaml::from_str("{proc-type: primary, no-huge: true, vdev: [a, b], m: 256}")
                .unwrap();
        assert_eq!(
            m.0,
            [
                "--proc-type=primary",
                "--no-huge",
                "--vdev=a",
                "--vdev=b",
                "-m=256"
            ]
        );
        let s: EalParams = serde_yaml::from_str("'--no-huge -m 256  --no-pci'").unwrap();
        assert_eq!(s.0, ["--no-huge", "-m", "256", "--no-pci"]);
        let l: EalParams =
            serde_yaml::from_str("[--no-pci, --vdev, 'net_pcap0,rx_pcap=x']").unwrap();
        assert_eq!(l.0, ["--no-pci", "--vdev", "net_pcap0,rx_pcap=x"]);
        assert!(serde_yaml::from_str::<EalParams>("7").is_err());
    }

    #[test]
    fn af_packet_lookup_falls_back_to_default_entry() {
        let list: Vec<AfPacketIface> = serde_yaml::from_str(
            "[{interface: eth0, ring-size: 4096}, {interface: default, ring-size: 256, threads: auto}]",
        )
        .unwrap();
        assert_eq!(af_packet_for(&list, "eth0").ring_size, 4096);
        let other = af_packet_for(&list, "veth1");
        assert_eq!(other.ring_size, 256);
        assert_eq!(other.interface, "veth1");
        assert_eq!(other.threads(), 1);
        assert_eq!(af_packet_for(&[], "x").block_size, ByteSize(32768));
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = AfPacketIface {
            block_size: ByteSize(5000),
            ..Default::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("af-packet.block-size 5000"), "{e}");
        let d = Dpdk {
            interfaces: vec![DpdkIface {
                mempool_size: 10,
                ..Default::default()
            }],
            ..Default::default()
        };
        assert!(
            d.validate()
                .unwrap_err()
                .to_string()
                .contains("mempool-size 10")
        );
    }

    #[test]
    fn live_capture_keys_and_sets() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("suricata.yaml");
        std::fs::write(
            &path,
            r#"
af-packet:
  - interface: eth0
    threads: 2
    cluster-id: 98
    cluster-type: cluster_flow
    defrag: yes
    tpacket-v3: yes
    ring-size: 4096
    block-size: 65536
    bpf-filter: "{ 0x6, 0, 0, 0x00040000 },"
  - interface: default
dpdk:
  eal-params:
    proc-type: primary
  interfaces:
    - interface: net_pcap0
      rx-descriptors: auto
      mempool-size: 4095
      threads: auto
run-as:
  user: nobody
"#,
        )
        .unwrap();
        let r = resolve(
            Some(&path),
            &[
                "capture.backlog-size=0".to_string(),
                "af-packet.ring-size=256".to_string(),
                "dpdk.eal-params=--no-huge -m 256".to_string(),
            ],
        )
        .unwrap();
        let c = r.config;
        assert_eq!(c.capture.backlog_size, 0);
        let eth0 = af_packet_for(&c.af_packet, "eth0");
        // `--set af-packet.ring-size` changes the first entry that has the key.
        assert_eq!(eth0.ring_size, 256);
        assert_eq!(eth0.threads(), 2);
        assert_eq!(eth0.cluster_id, 98);
        assert_eq!(eth0.block_size, ByteSize(65536));
        assert!(eth0.bpf_filter.is_some());
        assert_eq!(c.dpdk.eal_params.0, ["--no-huge", "-m", "256"]);
        let port = c.dpdk.port().unwrap();
        assert_eq!(port.interface, "net_pcap0");
        assert_eq!(port.rx_descriptors, 1024);
        assert_eq!(port.mempool_size, 4095);
        assert_eq!(c.run_as.user.as_deref(), Some("nobody"));
        assert!(
            r.ignored_suricata_keys
                .contains(&"af-packet.tpacket-v3".to_string())
        );
        assert!(
            r.ignored_suricata_keys
                .contains(&"dpdk.interfaces.threads".to_string())
        );
        // Without any af-packet entry, --set makes the `default` entry.
        let c = resolve(None, &["af-packet.ring-size=1024".to_string()])
            .unwrap()
            .config;
        assert_eq!(af_packet_for(&c.af_packet, "veth1").ring_size, 1024);
        assert_eq!(c.capture.backlog_size, 131_072);
        let e = resolve(None, &["af-packet.block-size=1000".to_string()]).unwrap_err();
        assert!(e.to_string().contains("block-size"), "{e}");
        let e = resolve(None, &["af-packet.ring-sise=1".to_string()]).unwrap_err();
        assert!(e.to_string().contains("af-packet.ring-sise"), "{e}");
    }
}
